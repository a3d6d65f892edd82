//! Placeholder: replaced by the real mechanic.

use super::{Decoder, LayoutError, LayoutRng, SynthesisError, Synthesizer};
use crate::game::Stake;
use rust_decimal::Decimal;

/// Decoder (not written yet).
pub struct MaxiDecoder;
impl MaxiDecoder {
    /// Builds the decoder for a stake.
    pub fn new(_stake: &Stake) -> Result<Self, String> {
        Ok(MaxiDecoder)
    }
}
impl Decoder for MaxiDecoder {
    fn decode(&self, _layout: &str) -> Result<Decimal, LayoutError> {
        Err(LayoutError::new("not implemented"))
    }
    fn form(&self, _layout: &str) -> Result<String, LayoutError> {
        Err(LayoutError::new("not implemented"))
    }
}
/// Synthesizer (not written yet).
pub struct MaxiSynthesizer;
impl MaxiSynthesizer {
    /// Builds the synthesizer for a stake.
    pub fn new(_stake: &Stake) -> Result<Self, String> {
        Ok(MaxiSynthesizer)
    }
}
impl Synthesizer for MaxiSynthesizer {
    fn synthesize(
        &self,
        _prize: Decimal,
        _rng: &mut LayoutRng,
        _out: &mut String,
    ) -> Result<(), SynthesisError> {
        Err(SynthesisError("not implemented".into()))
    }
}
