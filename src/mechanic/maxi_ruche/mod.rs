//! Maxi Ruche d'or (mechanic `maxi-ruche`): a main hive of 7 rows with a bee amount at its top,
//! an EXTRA hive opened by an `E`, and a bonus stage for tickets whose hives win nothing
//! (SPEC §2.2, §3; layout grammar `maxi-ruche-or` in FORMAT.md).
//!
//! [`MaxiDecoder`] is the referee, written from the rules; [`MaxiSynthesizer`] draws layouts.
//! They are independent and share only the stake's data checked by [`params`].

mod decode;
pub mod features;
mod params;
mod synth;
#[cfg(test)]
mod tests;

pub use decode::{AmountPlace, MaxiDecoder, MaxiRule};
pub use params::{
    BonusEntry, MaxiParams, MaxiSettings, NearMiss, NearMissSettings, MAX_BONUS_BEES,
};
pub use synth::MaxiSynthesizer;

use super::{BuildError, Decoder, LayoutError, LayoutRng, Params, SynthesisError, Synthesizer};
use rust_decimal::Decimal;

impl Params for MaxiParams {
    const NAME: &'static str = "maxi-ruche";
    type Settings = MaxiSettings;
    type Decoder = MaxiDecoder;
    type Synthesizer = MaxiSynthesizer;
    type Explainer = features::MaxiExplainer;

    fn overlay(game: &MaxiSettings, stake: MaxiSettings) -> MaxiSettings {
        game.overlay(stake)
    }

    fn check(settings: MaxiSettings) -> Result<Self, crate::mechanic::SettingError> {
        MaxiParams::check(settings)
    }

    fn explainer(&self) -> features::MaxiExplainer {
        features::MaxiExplainer::new(self)
    }

    fn near_miss_rates(&self) -> Vec<(&'static str, f64)> {
        self.near_miss.rates()
    }

    fn decoder(&self) -> MaxiDecoder {
        MaxiDecoder::from_params(self)
    }

    fn synthesizer(&self, prizes: &[Decimal]) -> Result<MaxiSynthesizer, BuildError> {
        MaxiSynthesizer::new(self, prizes)
    }
}

impl Decoder for MaxiDecoder {
    fn decode(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        self.prize(layout)
    }

    fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        MaxiDecoder::prize_cents(self, layout)
    }

    fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        MaxiDecoder::form(self, layout)
    }

    fn max_layout_len(&self) -> usize {
        MaxiDecoder::max_layout_len(self)
    }
}

impl Synthesizer for MaxiSynthesizer {
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        MaxiSynthesizer::synthesize(self, prize, rng, out)
    }
}
