//! Ticket emission factory: the engine behind the `emission-factory` command.
//!
//! An emission is made of blocks. For each block the engine draws the order of the prizes of
//! Article 3 with ChaCha20 ([`plan`]), synthesizes in parallel a layout for every ticket with the
//! game's [`mechanic`], decodes every layout again before writing it, and writes the block files
//! of FORMAT.md: a CSV of tickets, a manifest and its Ed25519 signature ([`block`]). [`verify`]
//! checks any block afterwards, trusting only the decoders and the game definitions. Whatever
//! comes from a file is read with a bound and echoed escaped and short ([`untrusted`]). A
//! [`proof`] shows that one ticket belongs to a signed block, without the block.
//!
//! The command line is the binary's (`src/main.rs` and `src/cmd/`): the engine knows no
//! terminal, and tells its caller how far it got through [`progress::Progress`].

pub mod block;
pub mod custody;
pub mod emission;
pub mod emit;
pub mod fs;
pub mod game;
pub mod interrupt;
pub mod lab;
#[cfg(feature = "load")]
pub mod load;
pub mod mechanic;
pub mod money;
pub mod pack;
pub mod picture;
pub mod plan;
pub mod progress;
pub mod proof;
pub mod report;
pub mod secrets;
pub mod untrusted;
pub mod verify;
