//! La ruche d'or (mechanic `ruche`): a hive of 7 rows with an amount each, honey pots, and up
//! to three EXTRA hives opened by `E` symbols (SPEC §2.1, §3; layout grammar `ruche-or` in
//! FORMAT.md).
//!
//! [`RucheDecoder`] is the referee, written from the rules; [`RucheSynthesizer`] draws layouts.
//! They are independent and share only the stake's data checked by [`params`].

mod decode;
pub mod features;
mod params;
mod synth;
#[cfg(test)]
mod tests;

pub use decode::{HiveOutcome, Outcome, RucheDecoder, RucheRule};
pub use params::{
    HoneyEntry, NearMiss, NearMissSettings, RucheParams, RucheSettings, MAX_EXTRA, MAX_HONEY_POTS,
};
pub use synth::RucheSynthesizer;

use super::{BuildError, Decoder, LayoutError, LayoutRng, Params, SynthesisError, Synthesizer};
use rust_decimal::Decimal;

impl Params for RucheParams {
    const NAME: &'static str = "ruche";
    type Settings = RucheSettings;
    type Decoder = RucheDecoder;
    type Synthesizer = RucheSynthesizer;
    type Explainer = features::RucheExplainer;

    fn overlay(game: &RucheSettings, stake: RucheSettings) -> RucheSettings {
        game.overlay(stake)
    }

    fn check(settings: RucheSettings) -> Result<Self, crate::mechanic::SettingError> {
        RucheParams::check(settings)
    }

    fn explainer(&self) -> features::RucheExplainer {
        features::RucheExplainer::new(self)
    }

    fn near_miss_rates(&self) -> Vec<(&'static str, f64)> {
        self.near_miss.rates()
    }

    fn decoder(&self) -> RucheDecoder {
        RucheDecoder::from_params(self)
    }

    fn synthesizer(&self, prizes: &[Decimal]) -> Result<RucheSynthesizer, BuildError> {
        RucheSynthesizer::new(self, prizes)
    }
}

impl Decoder for RucheDecoder {
    fn decode(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        RucheDecoder::prize(self, layout)
    }

    fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        RucheDecoder::prize_cents(self, layout)
    }

    fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        RucheDecoder::form(self, layout)
    }

    fn max_layout_len(&self) -> usize {
        RucheDecoder::max_layout_len(self)
    }
}

impl Synthesizer for RucheSynthesizer {
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        RucheSynthesizer::synthesize(self, prize, rng, out)
    }
}
