//! Maxi Ruche d'or (mechanic `maxi-ruche`): a main hive of 7 rows with a bee amount at its top,
//! an EXTRA hive opened by an `E`, and a bonus stage for tickets whose hives win nothing
//! (SPEC §2.2, §3; layout grammar `maxi-ruche-or` in FORMAT.md).
//!
//! [`MaxiDecoder`] is the referee, written from the rules; [`MaxiSynthesizer`] draws layouts.
//! They are independent and share only the stake's data read by [`params`].

pub mod params;

mod decode;
pub mod features;
mod synth;

pub use decode::MaxiDecoder;
pub use synth::MaxiSynthesizer;

#[cfg(test)]
mod tests;
