//! `lab`: data for test laboratories from a test emission's seed: the raw output of the
//! prize-order generator (`lab raw`) and the shuffled positions of a block's prizes
//! (`lab positions`). The engine is [`emission_factory::lab`].

use super::output::{StdoutError, Target};
use super::Exit;
use anyhow::{anyhow, bail, Result};
use emission_factory::game::Game;
use emission_factory::lab::{self, Coordinates, LabError};
use emission_factory::plan::Seed;
use std::io::{IsTerminal, Write};

/// The largest --out FILE of `lab raw` (made in memory, then written whole).
const MAX_FILE_BYTES: u64 = 1 << 30;

/// `lab` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory lab raw --game ruche-or --price 2 --block 1 --seed-file - --bytes 1000000 \\
      --out raw.bin < test.seed
  emission-factory lab raw --game ruche-or --price 2 --seed-file - --bytes 1073741824 < test.seed \\
      | dieharder -a -g 200
  emission-factory lab positions --game ruche-or --price 2 --block 1 --seed-file - < test.seed")]
pub struct LabArgs {
    /// What to write.
    #[command(subcommand)]
    pub what: LabCommand,
}

/// The lab's data.
#[derive(Debug, clap::Subcommand)]
pub enum LabCommand {
    /// The raw output of a block's prize-order generator (ChaCha20, docs/SPEC.md): N bytes,
    /// binary, as `dieharder -g 201` (a file), `-g 200` (standard input) and NIST SP 800-22 read.
    #[command(after_help = "Examples:
  emission-factory lab raw --game ruche-or --price 2 --seed-file - --bytes 1000000 --out raw.bin < test.seed
  emission-factory lab raw --game ruche-or --price 2 --seed-file - --bytes 100000000 < test.seed \\
      | dieharder -g 200 -d 0")]
    Raw(RawArgs),
    /// The shuffled positions of a block's prizes: CSV `tier,prize,index`, one row per
    /// ticket, tier by tier (0 the top prize, the last the losers), indexes ascending.
    #[command(after_help = "Examples:
  emission-factory lab positions --game ruche-or --price 2 --block 1 --seed-file - < test.seed > positions.csv")]
    Positions(PositionsArgs),
}

/// A block's coordinates and its test emission's seed.
#[derive(Debug, clap::Args)]
pub struct BlockArgs {
    /// Game: a built-in id or the path of a game definition (.toml).
    #[arg(long, value_name = "ID|FILE")]
    pub game: String,
    /// Ticket price in euros, one of the game's stakes (may be left out for a single stake).
    #[arg(long, value_name = "EUROS")]
    pub price: Option<String>,
    /// Emission number.
    #[arg(long, default_value_t = 1, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=9_999))]
    pub emission: u32,
    /// Block number (from 1).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub block: u32,
    #[command(flatten)]
    pub seed: super::options::SeedOptions,
    /// Use a seed file that group or others may read, with a warning.
    #[arg(long)]
    pub allow_insecure_key: bool,
    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(long, value_name = "FILE", value_parser = super::output::target_parser())]
    pub out: Option<Target>,
    /// Replace FILE of --out if it exists (only a regular file is ever replaced).
    #[arg(long)]
    pub force: bool,
    /// No confirmation on standard error of the file written.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `lab raw` arguments.
#[derive(Debug, clap::Args)]
pub struct RawArgs {
    /// The block and its seed.
    #[command(flatten)]
    pub block: BlockArgs,
    /// How many bytes to write (at most 2^50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1 << 50))]
    pub bytes: u64,
}

/// `lab positions` arguments.
#[derive(Debug, clap::Args)]
pub struct PositionsArgs {
    /// The block and its seed.
    #[command(flatten)]
    pub block: BlockArgs,
}

pub(super) fn run(args: LabArgs) -> Result<Exit> {
    match args.what {
        LabCommand::Raw(raw) => {
            let bytes = raw.bytes;
            if bytes > MAX_FILE_BYTES && raw.block.out.as_ref().is_some_and(|t| t.path().is_some())
            {
                bail!("--bytes {bytes} --out FILE: a file of --out is made in memory, at most {MAX_FILE_BYTES} bytes; for more, write to standard output (> FILE, or | dieharder -g 200)");
            }
            with_block(&raw.block, true, |at, out| lab::write_raw(at, bytes, out))
        }
        LabCommand::Positions(p) => with_block(&p.block, false, lab::write_positions),
    }
}

/// Resolves the block's coordinates and seed, and runs `write` into --out or standard output.
fn with_block(
    args: &BlockArgs,
    binary: bool,
    write: impl FnOnce(&Coordinates<'_>, &mut dyn Write) -> Result<(), LabError>,
) -> Result<Exit> {
    let target = args.out.clone().unwrap_or(Target::Stdout);
    target.check(args.force, "--out")?;
    if binary && target == Target::Stdout && std::io::stdout().is_terminal() {
        bail!("lab raw writes binary data: redirect standard output to a file or a program (| dieharder -g 200), or give --out FILE");
    }
    let game = Game::resolve(&args.game)?;
    let stake = super::stake(&game, args.price.as_deref())?;
    let seed = seed(args)?;
    let at = Coordinates {
        seed: &seed,
        game: &game,
        stake,
        emission: args.emission,
        block: args.block,
    };
    let failed = |e: LabError| -> anyhow::Error {
        match e {
            LabError::Write(e) => StdoutError::from(e).into(),
            LabError::Interrupted(i) => i.into(),
        }
    };
    match &target {
        Target::Stdout => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            write(&at, &mut out).map_err(failed)?;
        }
        Target::File(path) => {
            // Made in memory and written whole by the one file writer (never half a file);
            // larger samples go to standard output (MAX_FILE_BYTES).
            let mut bytes = Vec::new();
            write(&at, &mut bytes).map_err(|e| match e {
                LabError::Interrupted(i) => i.into(),
                LabError::Write(e) => anyhow::anyhow!("{e}"),
            })?;
            target.write(&bytes, args.force, "--out")?;
            if !args.quiet {
                errln!(
                    "{} bytes written to {}",
                    bytes.len(),
                    emission_factory::untrusted::shown_path(path)
                );
            }
        }
    }
    Ok(Exit::Ok)
}

/// The seed, from --seed, --seed-file (or `-`) or --seed-fd: one is needed.
fn seed(args: &BlockArgs) -> Result<Seed> {
    super::emit::seed_of_options(&args.seed, args.allow_insecure_key)?
    .ok_or_else(|| anyhow!("the lab's data comes from a test emission's seed: give --seed-file FILE (or - for standard input), --seed-fd N or --seed HEX"))
}
