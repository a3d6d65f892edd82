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
pub use params::RucheParams;

use super::{Decoder, LayoutError, LayoutRng, SynthesisError, Synthesizer};
use crate::game::Stake;
use rust_decimal::Decimal;

/// Reads La ruche d'or layouts of one stake.
#[derive(Debug, Clone)]
pub struct RucheDecoder {
    params: RucheParams,
}

impl RucheDecoder {
    /// The decoder for a stake, from its layout parameters.
    pub fn new(stake: &Stake) -> Result<Self, String> {
        Ok(RucheDecoder {
            params: RucheParams::from_stake(stake)?,
        })
    }

    /// The full outcome of a layout: what every hive wins.
    pub fn outcome(&self, layout: &str) -> Result<Outcome, LayoutError> {
        decode::decode(&self.params, layout)
    }
}

impl Decoder for RucheDecoder {
    fn decode(&self, layout: &str) -> Result<Decimal, LayoutError> {
        Ok(self.outcome(layout)?.prize)
    }

    fn form(&self, layout: &str) -> Result<String, LayoutError> {
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

impl RucheSynthesizer {
    /// The synthesizer for a stake; fails if a prize of its table cannot be shown.
    pub fn new(stake: &Stake) -> Result<Self, String> {
        let params = RucheParams::from_stake(stake)?;
        let prizes: Vec<Decimal> = stake.prizes.iter().map(|p| p.amount).collect();
        Ok(RucheSynthesizer {
            synth: synth::Synth::new(params, &prizes)?,
        })
    }
}

impl Synthesizer for RucheSynthesizer {
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut String,
    ) -> Result<(), SynthesisError> {
        self.synth.synthesize(prize, rng, out)
    }
}
