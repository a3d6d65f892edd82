//! Option groups several subcommands share (`#[command(flatten)]`), so each is spelt, checked
//! and documented once.

use clap::Args;
use std::path::PathBuf;

/// Where an emission's seed comes from, for the commands that take one in clear (`emit`,
/// `verify`, `lab`). A seed in clear makes, or audits, a test emission.
#[derive(Args, Debug, Clone, Default)]
pub struct SeedOptions {
    /// The emission's 256-bit secret seed, as 64 hex digits (for CI, audits and labs). A seed
    /// given here is visible to the other users of the machine in the process list (ps,
    /// /proc/PID/cmdline): from a script, pass it with --seed-file - (standard input) or
    /// --seed-fd N instead.
    #[arg(long, value_name = "HEX", conflicts_with = "seed_file")]
    pub seed: Option<String>,
    /// A file holding the emission's seed (64 hex digits); it must exist, be a regular file,
    /// and be unreadable by group and others (see --allow-insecure-key). `--seed-file -` reads
    /// the seed from standard input instead. For `emit`, without any seed option the first run
    /// of an emission draws a seed from the system's CSPRNG and keeps it in
    /// DIR/private/<game>-<stake>-e<emission>.seed (mode 0600, outside the emission folder),
    /// and later runs reuse it.
    #[arg(long, value_name = "FILE")]
    pub seed_file: Option<PathBuf>,
    /// Read the seed (64 hex digits) from the inherited file descriptor N, as in
    /// `--seed-fd 3 3<FILE` (Unix); like --seed, it is not stored, but it stays out of the
    /// process list.
    #[arg(long, value_name = "N", conflicts_with_all = ["seed", "seed_file"], value_parser = clap::value_parser!(i32).range(0..))]
    pub seed_fd: Option<i32>,
}

/// The custody shares of a production emission's seed (`emit`, `verify`).
#[derive(Args, Debug, Clone, Default)]
pub struct ShareOptions {
    /// A custody share file of the emission's seed (repeat for k shares; made by `seed`).
    /// The seed is rebuilt in memory only: `emit` makes a production emission with it,
    /// `verify` audits with it as with --seed.
    #[arg(long, value_name = "FILE", requires = "identity", conflicts_with_all = ["seed", "seed_file", "seed_fd"])]
    pub share: Vec<PathBuf>,
    /// An age identity file (AGE-SECRET-KEY-1..., from age-keygen) that opens one of the
    /// --share files, or (`verify`) the emission pack given (repeat as needed).
    #[arg(long, value_name = "FILE")]
    pub identity: Vec<PathBuf>,
}
