//! La ruche d'or: a hive of 7 rows, honey pots, and up to three EXTRA hives (SPEC 2.1).
//!
//! `decode` is written from the rules and never calls `synth`; both read only `params`.

mod decode;
pub mod features;
mod params;
mod synth;
#[cfg(test)]
mod tests;

pub use decode::{HiveOutcome, Outcome};
pub use params::{
    HoneyEntry, NearMiss, NearMissSettings, RucheParams, RucheSettings, MAX_EXTRA, MAX_HONEY_POTS,
};

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
        RucheDecoder {
            params: self.clone(),
            honey_cents: decode::honey_cents(self),
        }
    }

    fn synthesizer(&self, prizes: &[Decimal]) -> Result<RucheSynthesizer, BuildError> {
        Ok(RucheSynthesizer {
            synth: synth::Synth::new(self.clone(), prizes)?,
        })
    }
}

/// Reads La ruche d'or layouts of one stake.
#[derive(Debug, Clone)]
pub struct RucheDecoder {
    params: RucheParams,
    /// The honey table in cents (`None`: not whole cents, every layout takes `decode`).
    honey_cents: Option<Vec<u64>>,
}

impl RucheDecoder {
    /// The full outcome of a layout: what every hive wins.
    pub fn outcome(&self, layout: &[u8]) -> Result<Outcome, LayoutError> {
        decode::decode(&self.params, layout)
    }
}

impl Decoder for RucheDecoder {
    fn decode(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        Ok(self.outcome(layout)?.prize)
    }

    fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        self.honey_cents
            .as_deref()
            .and_then(|honey| decode::prize_cents(&self.params, honey, layout))
    }

    fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        Ok(decode::form(&self.outcome(layout)?))
    }

    fn max_layout_len(&self) -> usize {
        decode::max_layout_len(&self.params)
    }
}

/// Draws La ruche d'or layouts for the prizes of one stake.
#[derive(Debug, Clone)]
pub struct RucheSynthesizer {
    synth: synth::Synth,
}

impl Synthesizer for RucheSynthesizer {
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        self.synth.synthesize(prize, rng, out)
    }
}
