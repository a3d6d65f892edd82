//! The calendar mechanic ("2013 Année de la chance" and any game with twelve months and a
//! bonus clover): layouts `month ( "/" month ){11} "|" clover`, e.g.
//! `AB:6/CC:10/...|4-12-13:20`.
//!
//! A month shows two symbols and an amount and wins the amount when the symbols are identical;
//! the clover shows three distinct numbers from 1 to 13 and an amount, won if one number is 13.
//! The prize is the sum of the winning months and the clover.
//!
//! Nothing here is specific to one game: the symbol letters and the amounts come from the
//! game definition's `layout` tables ([`params`]), so another game of this kind needs only a
//! new TOML file. The decoder ([`decode`]) and the synthesizer ([`synth`]) share nothing else.

mod decode;
pub mod features;
mod params;
mod synth;
#[cfg(test)]
mod tests;

pub use decode::{AmountPlace, CalendarDecoder, CalendarRule};
pub use params::{
    CalendarParams, CalendarSettings, NearMiss, NearMissSettings, SymbolEntry, CLOVER_MAX,
    MAX_CALENDAR_AMOUNTS, MAX_SYMBOLS, MAX_WINNING_MONTHS,
};
pub use synth::CalendarSynthesizer;

use super::{BuildError, Decoder, LayoutError, LayoutRng, Params, SynthesisError, Synthesizer};
use rust_decimal::Decimal;

impl Params for CalendarParams {
    const NAME: &'static str = "calendar";
    type Settings = CalendarSettings;
    type Decoder = CalendarDecoder;
    type Synthesizer = CalendarSynthesizer;
    type Explainer = features::CalendarExplainer;

    fn overlay(game: &CalendarSettings, stake: CalendarSettings) -> CalendarSettings {
        game.overlay(stake)
    }

    fn check(settings: CalendarSettings) -> Result<Self, crate::mechanic::SettingError> {
        CalendarParams::check(settings)
    }

    fn explainer(&self) -> features::CalendarExplainer {
        features::CalendarExplainer::new(self)
    }

    fn near_miss_rates(&self) -> Vec<(&'static str, f64)> {
        self.near_miss.rates()
    }

    fn decoder(&self) -> CalendarDecoder {
        CalendarDecoder::from_params(self)
    }

    fn synthesizer(&self, prizes: &[Decimal]) -> Result<CalendarSynthesizer, BuildError> {
        CalendarSynthesizer::new(self, prizes)
    }
}

impl Decoder for CalendarDecoder {
    fn decode(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        self.prize(layout)
    }

    fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        CalendarDecoder::prize_cents(self, layout)
    }

    fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        CalendarDecoder::form(self, layout)
    }

    fn max_layout_len(&self) -> usize {
        CalendarDecoder::max_layout_len(self)
    }
}

impl Synthesizer for CalendarSynthesizer {
    fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        CalendarSynthesizer::synthesize(self, prize, rng, out)
    }
}
