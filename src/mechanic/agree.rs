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

/// How a fast reading of a layout disagrees with its referee: the layout (escaped, as
/// `layout`) and the two verdicts, as `{:?}` writes them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Disagreement {
    /// `decode_cents` against `decode`.
    #[error("{layout}: decode says {decode}, decode_cents {decode_cents}")]
    DecodeCents {
        /// The layout, escaped.
        layout: String,
        /// `decode`'s verdict.
        decode: String,
        /// `decode_cents`'s verdict.
        decode_cents: String,
    },
    /// Bytes that are not UTF-8, which `decode` reads as a prize.
    #[error("{layout}: not UTF-8, but decode reads a prize of {prize}")]
    NotUtf8 {
        /// The layout, escaped.
        layout: String,
        /// The prize `decode` reads.
        prize: String,
    },
    /// One reading of a layout both accept, against another.
    #[error("{layout}: {what}: {found} against {referee}")]
    Differs {
        /// The layout, escaped.
        layout: String,
        /// What is compared.
        what: &'static str,
        /// The first reading.
        found: String,
        /// The one it is compared with.
        referee: String,
    },
    /// `explain`'s verdict (its prize, or its error) against `decode`'s.
    #[error("{layout}: explain says {explain}, decode {decode}")]
    Verdicts {
        /// The layout, escaped.
        layout: String,
        /// `explain`'s verdict.
        explain: String,
        /// `decode`'s verdict.
        decode: String,
    },
}

/// Whether `decode_cents` gives `decode`'s verdict on `layout`: `Err` says how they differ.
pub fn decode_cents_agrees(decoder: &dyn Decoder, layout: &[u8]) -> Result<(), Disagreement> {
    let decoded = decoder.decode(layout);
    let in_cents = decoder.decode_cents(layout);
    match (&decoded, &in_cents) {
        (Ok(prize), Ok(cents)) if crate::money::cents(*prize) == Some(*cents) => Ok(()),
        (Err(a), Err(b)) if a == b => Ok(()),
        _ => Err(Disagreement::DecodeCents {
            layout: shown(layout),
            decode: format!("{decoded:?}"),
            decode_cents: format!("{in_cents:?}"),
        }),
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
) -> Result<(), Disagreement> {
    let decoded = decoder.decode(layout);
    // `features` reads any bytes: whatever it answers, it must not panic.
    let fast = explainer.features(layout, out);
    let Ok(text) = std::str::from_utf8(layout) else {
        return match decoded {
            Err(_) => Ok(()),
            Ok(prize) => Err(Disagreement::NotUtf8 {
                layout: shown(layout),
                prize: prize.to_string(),
            }),
        };
    };
    match (explainer.explain(text), &decoded) {
        (Ok(e), Ok(prize)) => {
            let form = decoder.form(layout);
            let differs = |what: &'static str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
                Err(Disagreement::Differs {
                    layout: shown(layout),
                    what,
                    found: format!("{a:?}"),
                    referee: format!("{b:?}"),
                })
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
        (e, d) => Err(Disagreement::Verdicts {
            layout: shown(layout),
            explain: format!("{:?}", e.map(|e| e.prize)),
            decode: format!("{d:?}"),
        }),
    }
}
