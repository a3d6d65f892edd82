//! What the decoder fuzz targets share: the decoders and explainers of a built-in game, built
//! once, and the properties every one of them must keep on any bytes.
//!
//! A decoder reads layouts from files nobody vouches for, so whatever the bytes it must answer
//! (a prize or the rule broken), never panic, and answer the same way every time; its fast
//! readings must say what its referee says: `decode_cents` what `decode` says, and the
//! report's `features` what `explain` says (`emission_factory::mechanic::agree`, the same
//! properties the unit tests assert). It may legally find a prize that is not in the stake's
//! table (a forged layout can show one; that is `verify`'s business, not the decoder's), so
//! the prize itself is not checked here.

use emission_factory::game::Game;
use emission_factory::mechanic::agree::{decode_cents_agrees, features_agree};
use emission_factory::mechanic::explain::{Explain, Features};
use emission_factory::mechanic::Decoder;

/// A stake's two readers.
pub struct Readers {
    decoder: Box<dyn Decoder>,
    explainer: Box<dyn Explain>,
}

/// The decoders and explainers of every stake of the built-in game `id`.
///
/// Panics if the built-in definition does not load: that is a bug of the program, not of the
/// input, and the fuzz target must not start with it.
pub fn decoders(id: &str) -> Vec<Readers> {
    let game = Game::builtin(id).unwrap_or_else(|e| panic!("built-in game {id}: {e}"));
    game.stakes
        .iter()
        .map(|stake| Readers {
            decoder: stake.decoder(),
            explainer: stake.mechanic.explainer(),
        })
        .collect()
}

/// Feeds `data` to every stake's readers, as the bytes of a layout field.
pub fn exercise(readers: &[Readers], data: &[u8]) {
    let mut features = Features::default();
    for r in readers {
        check(r.decoder.as_ref(), data);
        if let Err(e) = decode_cents_agrees(r.decoder.as_ref(), data) {
            panic!("{e}");
        }
        if let Err(e) = features_agree(
            r.decoder.as_ref(),
            r.explainer.as_ref(),
            data,
            &mut features,
        ) {
            panic!("{e}");
        }
    }
}

/// Decodes `layout` twice and reads its form twice: same answers each time, a form exactly
/// when the layout decodes, and never a layout longer than the bound `verify` reads lines with.
fn check(decoder: &dyn Decoder, layout: &[u8]) {
    let prize = decoder.decode(layout);
    assert_eq!(prize, decoder.decode(layout), "decode is not deterministic");
    let form = decoder.form(layout);
    assert_eq!(form, decoder.form(layout), "form is not deterministic");
    match (&prize, &form) {
        (Ok(_), Ok(_)) => assert!(
            layout.len() <= decoder.max_layout_len(),
            "a layout of {} bytes decodes, longer than max_layout_len {}",
            layout.len(),
            decoder.max_layout_len()
        ),
        (Err(a), Err(b)) => assert_eq!(a, b, "decode and form give different errors"),
        _ => panic!("decode gives {prize:?} but form gives {form:?}"),
    }
}
