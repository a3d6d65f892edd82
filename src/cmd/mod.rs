//! The command line: arguments (clap), and one file per subcommand that turns them into a
//! validated configuration for the engine and reports the result.
//!
//! Exit status: 0 everything held (or standard output was closed by its reader), 1 `verify`
//! found a problem, 2 an error (bad input, I/O, standard output full).

/// `println!` that returns a [`output::StdoutError`] instead of panicking: `outln!(...)?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cmd::output::write_stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` that drops a message standard error cannot take instead of panicking.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cmd::output::write_stderr(format_args!($($arg)*))
    };
}

mod emit;
mod games;
mod keygen;
pub mod output;
mod verify;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// How the program ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything held.
    Ok = 0,
    /// A block did not verify.
    Failed = 1,
    /// Bad input or an I/O error: nothing was concluded.
    Error = 2,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// Ticket emission factory: makes, signs and verifies blocks of electronic instant-game tickets.
///
/// Exit status: 0 success (or standard output closed by its reader), 1 a block failed
/// verification, 2 error (bad input, unreadable file, disk full, standard output full...).
#[derive(Debug, Parser)]
#[command(name = "emission-factory", version, about, long_about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Emit blocks of tickets: plan the prizes, synthesize and check every layout, write,
    /// hash and sign the block files.
    Emit(EmitArgs),
    /// Verify blocks independently: every layout, hash, count, the Merkle root and the
    /// signature.
    Verify(VerifyArgs),
    /// Make an Ed25519 signing key pair (PKCS#8 and SPKI PEM, readable by OpenSSL).
    Keygen(KeygenArgs),
    /// List the built-in games: stakes, block size, winners, payout ratio, odds.
    Games,
}

/// `emit` arguments.
#[derive(Debug, clap::Args)]
pub struct EmitArgs {
    /// Game: a built-in id (ruche-or, maxi-ruche-or, annee-chance) or the path of a game
    /// definition (.toml).
    #[arg(long, value_name = "ID|FILE")]
    pub game: String,
    /// Ticket price in euros, one of the game's stakes (e.g. 0.5, 2). May be left out when
    /// the game has a single stake.
    #[arg(long, value_name = "EUROS")]
    pub price: Option<String>,
    /// Number of blocks to make.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub blocks: u32,
    /// Number of the first block (blocks are numbered from 1): hand each job of a batch
    /// engine its own range.
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub first_block: u32,
    /// Emission number.
    #[arg(long, default_value_t = 1, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=9_999))]
    pub emission: u32,
    /// Root folder of the block files; blocks go to DIR/<game>/<stake>/e<emission>/.
    #[arg(long, default_value = "emissions", value_name = "DIR")]
    pub out: PathBuf,
    /// The emission's 256-bit secret seed, as 64 hex digits (for CI and audits). Without it,
    /// the seed comes from the seed file (see --seed-file), made from the system's CSPRNG the
    /// first time.
    #[arg(long, value_name = "HEX", conflicts_with = "seed_file")]
    pub seed: Option<String>,
    /// Where the emission's seed is kept when --seed is not given (default:
    /// DIR/private/<game>-<stake>-e<emission>.seed, outside the emission folder, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub seed_file: Option<PathBuf>,
    /// Ed25519 private key (PKCS#8 PEM) that signs the manifests. Without it, a one-time key
    /// is made for the emission and kept beside its seed file.
    #[arg(long, value_name = "PEM")]
    pub signing_key: Option<PathBuf>,
    /// Worker threads (default: one per core). The files are the same whatever the number.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Make blocks again even if they exist (they are replaced).
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `verify` arguments.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Block CSV files, or folders to search for block-NNNNN.csv files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The public key (SPKI PEM) the blocks must be signed with. Without it the emission's own
    /// emission.pub.pem is used, which proves integrity but not origin.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// Check against this game definition (id or .toml path) instead of the built-in one the
    /// manifest names.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Also count, per prize, the forms the tickets show it in (e.g. "row", "2 rows + honey").
    #[arg(long)]
    pub forms: bool,
    /// Audit with the emission's seed (64 hex digits): check the manifest's seed commitment,
    /// and that every ticket's prize and layout are exactly those the seed makes.
    #[arg(long, value_name = "HEX", conflicts_with = "seed_file")]
    pub seed: Option<String>,
    /// Like --seed, reading the seed from the emission's seed file.
    #[arg(long, value_name = "FILE")]
    pub seed_file: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `keygen` arguments.
#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Folder to write signing-key.pem (private, mode 0600) and public-key.pem into.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace existing key files.
    #[arg(long)]
    pub force: bool,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Emit(args) => emit::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Keygen(args) => keygen::run(args),
        Command::Games => games::run(),
    }
}

/// A rayon pool of `threads` workers (default: one per core).
fn pool(threads: Option<u16>) -> anyhow::Result<rayon::ThreadPool> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        builder = builder.num_threads(usize::from(t));
    }
    builder
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start worker threads: {e}"))
}

/// The progress bar on stderr, hidden when stderr is not a terminal or `quiet` is set. With a
/// length it shows a bar and the time left; without one, a count of tickets and the rate.
fn progress_bar(quiet: bool, message: &str, length: Option<u64>) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let template = match length {
        Some(_) => {
            "{msg} [{elapsed_precise}] {wide_bar} {done}/{total} tickets ({rate}, {eta} left)"
        }
        None => "{spinner} {msg} [{elapsed_precise}] {done} tickets checked ({rate})",
    };
    let bar = match length {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .with_key(
                "done",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}", grouped(state.pos()));
                },
            )
            .with_key(
                "total",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}", grouped(state.len().unwrap_or(0)));
                },
            )
            .with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{} tickets/s", grouped(state.per_sec() as u64));
                },
            ),
    );
    bar.set_message(message.to_string());
    bar
}

/// Groups digits by three with thin spaces: 7 500 000.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}
