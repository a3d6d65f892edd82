//! The integration tests: one binary, so that a change links one test program instead of one
//! per file (issue 21). Each module is one subject (`cargo test --profile ci --test it load::`
//! runs the database's tests); `common` is what they share: the binary in a scratch folder, the
//! one skip rule (`require_tool`), the servers' helpers.

// The tests say what they measured and why they skip (SKIPPED: …) on the test harness's
// output; the crate's print lints guard the binary's own output (Cargo.toml).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod common;

mod annee_chance;
mod beacon;
mod cli;
mod cli_docs;
mod concurrency;
mod custody;
mod emission;
mod games;
mod hostile;
mod layouts;
mod load;
mod maxi_ruche_or;
mod pack;
mod picture;
mod proof;
mod report;
mod ruche_or;
mod secrets;
mod show;
mod slurm;
mod timestamp;
mod verify;
