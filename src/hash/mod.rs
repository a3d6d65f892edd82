//! SHA-256 as the block files use it: the engines that hash many short ticket lines at once
//! ([`sha256`]; the only `unsafe` code of the crate, the SIMD lanes, is fenced in there), the
//! Merkle root of a block's ticket hashes ([`merkle`]), and a ticket's audit path to that root
//! ([`proof`]). Nothing here knows what a block or an emission is.

pub mod merkle;
pub mod proof;
pub mod sha256;
