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

pub use decode::CalendarDecoder;
pub use synth::CalendarSynthesizer;

#[cfg(test)]
mod tests;
