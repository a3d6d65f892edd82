//! SHA-256 as the block files use it: the engines that hash many short ticket lines at once
//! ([`sha256`]; the SIMD lanes' `unsafe` code is fenced in there: the crate denies `unsafe`
//! elsewhere but for three system calls of [`crate::fs`], each allowed by name), the
//! Merkle root of a block's ticket hashes ([`merkle`]), and a ticket's audit path to that root
//! ([`proof`]). Nothing here knows what a block or an emission is.

pub mod merkle;
pub mod proof;
pub mod sha256;
