//! `prove` and `verify-proof`: a ticket's inclusion proof, made from a block that verifies,
//! and checked without the block (see [`emission_factory::proof`]).

use super::Exit;
use anyhow::{anyhow, Result};
use emission_factory::block::keys;
use emission_factory::fs::open::{read_at_most, ReadError};
use emission_factory::game::Game;
use emission_factory::proof::{self, Ticket, MAX_PROOF_BYTES};
use emission_factory::untrusted::{defanged, shown_path, shown_text, SHOWN_CHARS};
use std::path::PathBuf;

/// In a verifying command the exit status is the verdict: a closed standard output drops the
/// lines, never the checks ([`output::write_stdout_unless_gone`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cmd::output::write_stdout_unless_gone(format_args!($($arg)*))
    };
}

/// `prove` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory prove emissions/ruche-or/2/e0001/block-00007.csv --ticket 41 \\
      --public-key keys/public-key.pem --out proof.json
  emission-factory prove emissions/ruche-or/2/e0001/block-00007.csv \\
      --ticket ruche-or-200-0001-00007-0000041 > proof.json

With --out, the file is created only once the proof is made: a block that does not verify
leaves nothing (with `> proof.json` the shell makes an empty file first).")]
pub struct ProveArgs {
    /// The block's CSV file (its manifest and signature beside it).
    #[arg(value_name = "BLOCK")]
    pub block: PathBuf,
    /// The ticket: its index in the block (from 0) or its serial.
    #[arg(long, value_name = "N|SERIAL", value_parser = proof::parse_ticket)]
    pub ticket: Ticket,
    /// The public key (SPKI PEM) the block must be signed with. Without it the emission's own
    /// emission.pub.pem is used, which proves integrity but not origin.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// The game definition (id or .toml path), if it is not the built-in one the manifest
    /// names.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Threads verifying the block, in all (default: one per core): reading and hashing the
    /// file share them with the checks.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Write the proof to FILE, created only when the proof is made (default, or `-`:
    /// standard output).
    #[arg(long, value_name = "FILE", value_parser = super::output::target_parser())]
    pub out: Option<super::output::Target>,
    /// Replace FILE of --out if it exists (only a regular file is ever replaced).
    #[arg(long)]
    pub force: bool,
    /// No confirmation on standard error of the proof written (warnings and errors stay).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `verify-proof` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory verify-proof proof.json --public-key keys/public-key.pem
  emission-factory verify-proof proof.json --public-key lottery.pem --game my-game.toml")]
pub struct VerifyProofArgs {
    /// The proof file, as `prove` writes it.
    #[arg(value_name = "PROOF")]
    pub proof: PathBuf,
    /// The public key (SPKI PEM) you trust to have signed the block: the lottery's, not one
    /// that came with the proof.
    #[arg(long, value_name = "PEM")]
    pub public_key: PathBuf,
    /// The game definition (id or .toml path), if it is not the built-in one the manifest
    /// names; its SHA-256 must be the manifest's.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Print only a failure (the OK line is left out: the exit status says it).
    #[arg(long, short)]
    pub quiet: bool,
}

pub(super) fn run(args: ProveArgs) -> Result<Exit> {
    let out = args.out.clone().unwrap_or(super::output::Target::Stdout);
    out.check(args.force, "--out")?;
    let options = super::trusted(args.public_key.as_deref(), args.game.as_deref())?;
    if args.public_key.is_none() {
        errln!("warning: the block's signature is checked against the emission's own emission.pub.pem: this proves the files are intact, not who made them; give --public-key with the key you trust");
    }
    let made = super::pool(args.threads)?
        .install(|| proof::make(&args.block, &args.ticket, &options))
        .map_err(|e| match e {
            // The signal itself in the chain, for the exit status (main).
            proof::ProofError::Interrupted(signal) => anyhow::Error::new(signal),
            e => e.into(),
        })?;
    let bytes = made.to_bytes();
    out.write(&bytes, args.force, "--out")?;
    match out.path() {
        _ if args.quiet => {}
        Some(path) => errln!(
            "proof of ticket {} of {} written to {}",
            made.index,
            shown_path(&args.block),
            shown_path(path)
        ),
        None => errln!(
            "proof of ticket {} of {} written",
            made.index,
            shown_path(&args.block)
        ),
    }
    Ok(Exit::Ok)
}

pub(super) fn run_verify(args: VerifyProofArgs) -> Result<Exit> {
    let key = keys::read_public_key(&args.public_key)?;
    let game = args.game.as_deref().map(Game::resolve).transpose()?;
    let name = shown_path(&args.proof);
    let bytes = match read_at_most(&args.proof, MAX_PROOF_BYTES, "a ticket proof") {
        Ok(bytes) => bytes,
        Err(e @ ReadError::TooLarge { .. }) => {
            outln!("{}  {name}\n  - {e}", super::output::failed())?;
            return Ok(Exit::Failed);
        }
        Err(e) => return Err(anyhow!("cannot read {name}: {e}")),
    };
    match proof::check(&bytes, &key, game.as_ref()) {
        Ok(_) if args.quiet => Ok(Exit::Ok),
        Ok(p) => {
            outln!(
                "OK      {name}: ticket {} (index {}) wins {} €, in block {} of emission {} of {} ({}) at {} €, signed by the key given",
                shown_text(&p.serial, SHOWN_CHARS),
                p.index,
                shown_text(&p.prize, SHOWN_CHARS),
                p.id.number(),
                p.id.emission().number(),
                shown_text(&p.game_name, SHOWN_CHARS),
                p.id.emission().game(),
                p.id.emission().stake()
            )?;
            if p.kind == emission_factory::block::id::EmissionKind::Test {
                outln!("        TEST emission: its seed was given or kept in clear; not for sale")?;
            }
            Ok(Exit::Ok)
        }
        Err(problems) => {
            outln!("{}  {name}", super::output::failed())?;
            for p in problems {
                outln!("  - {}", defanged(&p))?;
            }
            Ok(Exit::Failed)
        }
    }
}
