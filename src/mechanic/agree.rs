//! The properties that tie each fast reading of a layout to its referee, as functions that
//! say what disagrees: the property tests (`mechanic::explain::tests`, `mechanic::tests`) and
//! the fuzz targets of `fuzz/` assert the same ones, on any bytes.
//!
//! - [`decode_cents_agrees`]: the one-pass reading in cents that `emit` and `verify` trust
//!   ([`Decoder::decode_cents`], over the mechanic's `prize_cents`) gives `decode`'s verdict:
//!   the same prize in cents, or the same error.
//! - [`features_agree`]: the report's fast path ([`Explain::features`]) says what
//!   [`Explain::explain`] says of every layout the decoder accepts, and `explain` gives the
//!   decoder's prize, form and errors.

use super::explain::{Explain, Features};
use super::Decoder;
use crate::untrusted::shown;

/// Whether `decode_cents` gives `decode`'s verdict on `layout`: `Err` says how they differ.
pub fn decode_cents_agrees(decoder: &dyn Decoder, layout: &[u8]) -> Result<(), String> {
    let decoded = decoder.decode(layout);
    let in_cents = decoder.decode_cents(layout);
    match (&decoded, &in_cents) {
        (Ok(prize), Ok(cents)) if crate::money::cents(*prize) == Some(*cents) => Ok(()),
        (Err(a), Err(b)) if a == b => Ok(()),
        _ => Err(format!(
            "{}: decode says {decoded:?}, decode_cents {in_cents:?}",
            shown(layout)
        )),
    }
}

/// Whether the explainer agrees with the decoder and with itself on `layout`: `explain`
/// accepts exactly what `decode` accepts (bytes that are not UTF-8 must be refused), with the
/// decoder's prize, form and error; and on every layout it explains, `features` reads the same
/// observations and near misses, and wins the prize in cents. `out` is the record `features`
/// fills (kept by the caller, as the report keeps one per thread).
pub fn features_agree(
    decoder: &dyn Decoder,
    explainer: &dyn Explain,
    layout: &[u8],
    out: &mut Features,
) -> Result<(), String> {
    let decoded = decoder.decode(layout);
    // `features` reads any bytes: whatever it answers, it must not panic.
    let fast = explainer.features(layout, out);
    let Ok(text) = std::str::from_utf8(layout) else {
        return match decoded {
            Err(_) => Ok(()),
            Ok(prize) => Err(format!(
                "{}: not UTF-8, but decode reads a prize of {prize}",
                shown(layout)
            )),
        };
    };
    match (explainer.explain(text), &decoded) {
        (Ok(e), Ok(prize)) => {
            let form = decoder.form(layout);
            let differs = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
                Err(format!("{}: {what}: {a:?} against {b:?}", shown(layout)))
            };
            if e.prize != *prize {
                return differs("explain's prize against decode's", &e.prize, prize);
            }
            if form.as_ref() != Ok(&e.form) {
                return differs("explain's form against the decoder's", &e.form, &form);
            }
            if let Err(error) = fast {
                return differs("features refuses what explain explains", &error, &e.prize);
            }
            let seen = out.as_explained(explainer);
            if seen != e.features {
                return differs("features against explain", &seen, &e.features);
            }
            if Some(out.won) != crate::money::cents(*prize) {
                return differs("features' wins in cents against the prize", &out.won, prize);
            }
            Ok(())
        }
        (Err(a), Err(b)) if &a == b => Ok(()),
        (e, d) => Err(format!(
            "{}: explain says {:?}, decode {d:?}",
            shown(layout),
            e.map(|e| e.prize)
        )),
    }
}
