//! Game mechanics: how a layout shows a prize, and how a prize is read back from a layout.
//!
//! Every mechanic has two independent halves behind two small traits:
//! - a [`Decoder`], written from the published rules, which is the referee: `verify` and the
//!   tests trust it, and every synthesized ticket is decoded before it is written;
//! - a [`Synthesizer`], which draws a natural-looking layout for a given prize.
//!
//! They share only the game's data (the amounts a layout may show, the honey or bonus tables),
//! read from the `layout` tables of the game definition by each mechanic's `params` module.
//! The pipeline (plan → synthesize → decode → hash → write → sign) knows nothing else.

pub mod calendar;
pub(crate) mod draw;
pub mod explain;
pub mod maxi_ruche;
pub mod ruche;
pub(crate) mod util;

use crate::game::{Game, Stake};
use rust_decimal::Decimal;
use thiserror::Error;

/// The fast generator that fills in the cosmetic parts of a layout. It never decides who wins:
/// the prize is given to the synthesizer, drawn beforehand by the ChaCha20 shuffle.
pub type LayoutRng = rand_pcg::Pcg64Mcg;

/// A layout that breaks a rule of SPEC §3 or the layout grammar; the message names the rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct LayoutError(pub String);

impl LayoutError {
    /// Builds an error from anything printable.
    pub fn new(message: impl Into<String>) -> Self {
        LayoutError(message.into())
    }
}

/// `a + b` for the wins of a layout. Amounts a game may state are bounded (SPEC §6) so that
/// no layout's wins can overflow, but a decoder reads untrusted files: it answers, it never
/// panics, even on a stake built without those bounds.
pub(crate) fn add_wins(a: Decimal, b: Decimal) -> Result<Decimal, LayoutError> {
    a.checked_add(b).ok_or_else(too_large)
}

/// `amount × factor` for a multiplied win, checked like [`add_wins`].
pub(crate) fn multiply_win(amount: Decimal, factor: u32) -> Result<Decimal, LayoutError> {
    amount
        .checked_mul(Decimal::from(factor))
        .ok_or_else(too_large)
}

#[cold]
fn too_large() -> LayoutError {
    LayoutError::new("the wins of this layout add up to more than an amount can hold")
}

/// A prize the synthesizer cannot show (a game definition that slipped past `check`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct SynthesisError(pub String);

impl SynthesisError {
    /// The prize asked for is not in the stake's table.
    pub fn not_a_prize(prize: Decimal) -> Self {
        SynthesisError(format!(
            "prize {} € is not in this stake's prize table",
            crate::money::canonical(prize)
        ))
    }
}

/// Reads a layout under the game's rules.
pub trait Decoder: Send + Sync {
    /// The prize this layout wins, or the rule it breaks.
    fn decode(&self, layout: &str) -> Result<Decimal, LayoutError>;

    /// A short description of the way the layout shows its prize, for reports: e.g.
    /// `row`, `2 rows`, `honey + EXTRA`, `bonus 8 bees`, `loss`. Layouts of the same form
    /// share the same text.
    fn form(&self, layout: &str) -> Result<String, LayoutError>;

    /// The length in bytes of the longest layout this decoder can accept, from the grammar and
    /// the longest amounts the stake allows: `verify` refuses a longer ticket line without
    /// decoding it, and a reader can bound what it holds in memory.
    fn max_layout_len(&self) -> usize;
}

/// Draws layouts for prizes.
pub trait Synthesizer: Send + Sync {
    /// Appends to `out` a layout that decodes to exactly `prize` (which may be zero).
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut String,
    ) -> Result<(), SynthesisError>;
}

/// Checks a stake's layout parameters and that every prize of its table can be synthesized.
/// Returns a message naming the parameter at fault.
pub fn check(game: &Game, stake: &Stake) -> Result<(), String> {
    synthesizer(game, stake)
        .map(|_| ())
        .and(decoder(game, stake).map(|_| ()))
}

/// The decoder of the game's mechanic for this stake.
pub fn decoder(game: &Game, stake: &Stake) -> Result<Box<dyn Decoder>, String> {
    match game.mechanic.as_str() {
        "ruche" => Ok(Box::new(ruche::RucheDecoder::new(stake)?)),
        "maxi-ruche" => Ok(Box::new(maxi_ruche::MaxiDecoder::new(stake)?)),
        "calendar" => Ok(Box::new(calendar::CalendarDecoder::new(stake)?)),
        other => Err(unknown(other)),
    }
}

/// The synthesizer of the game's mechanic for this stake.
pub fn synthesizer(game: &Game, stake: &Stake) -> Result<Box<dyn Synthesizer>, String> {
    match game.mechanic.as_str() {
        "ruche" => Ok(Box::new(ruche::RucheSynthesizer::new(stake)?)),
        "maxi-ruche" => Ok(Box::new(maxi_ruche::MaxiSynthesizer::new(stake)?)),
        "calendar" => Ok(Box::new(calendar::CalendarSynthesizer::new(stake)?)),
        other => Err(unknown(other)),
    }
}

fn unknown(name: &str) -> String {
    format!("unknown mechanic '{name}': the mechanics are ruche, maxi-ruche, calendar")
}

#[cfg(test)]
mod tests {
    //! Every decoder reads untrusted files: whatever the bytes, it answers, never panics.

    use super::*;
    use crate::game::{Game, BUILTIN};
    use proptest::prelude::*;
    use rand::SeedableRng;

    /// A synthesized layout of each built-in game and stake, to mutate (built once).
    fn samples() -> &'static [(Box<dyn Decoder>, String)] {
        static SAMPLES: std::sync::OnceLock<Vec<(Box<dyn Decoder>, String)>> =
            std::sync::OnceLock::new();
        SAMPLES.get_or_init(build_samples)
    }

    fn build_samples() -> Vec<(Box<dyn Decoder>, String)> {
        let mut out = Vec::new();
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                let synth = synthesizer(&game, stake).unwrap();
                let mut layout = String::new();
                let mut rng = LayoutRng::seed_from_u64(1);
                synth
                    .synthesize(stake.prizes[0].amount, &mut rng, &mut layout)
                    .unwrap();
                out.push((decoder(&game, stake).unwrap(), layout));
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn decoders_never_panic_on_mutated_layouts(
            which in 0usize..6,
            at in any::<prop::sample::Index>(),
            cut in any::<prop::sample::Index>(),
            byte in prop::sample::select(b"PABHEFQ23456X.:/|#+-0123456789\xc3\xa9 ".to_vec()),
            mode in 0u8..4,
        ) {
            let samples = samples();
            let (decoder, layout) = &samples[which % samples.len()];
            let mut bytes = layout.clone().into_bytes();
            let i = at.index(bytes.len());
            match mode {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => { bytes.remove(i); }
                _ => bytes.truncate(cut.index(bytes.len())),
            }
            let text = String::from_utf8_lossy(&bytes);
            let decoded = decoder.decode(&text);
            let form = decoder.form(&text);
            prop_assert_eq!(decoded.is_ok(), form.is_ok());
            // What decodes is never longer than the bound verify reads lines with.
            prop_assert!(layout.len() <= decoder.max_layout_len());
            if decoded.is_ok() {
                prop_assert!(text.len() <= decoder.max_layout_len());
            }
        }

        #[test]
        fn decoders_never_panic_on_arbitrary_text(which in 0usize..6, text in ".{0,300}") {
            let samples = samples();
            let (decoder, _) = &samples[which % samples.len()];
            let _ = decoder.decode(&text);
            let _ = decoder.form(&text);
        }
    }
}
