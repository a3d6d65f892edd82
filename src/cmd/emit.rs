//! `emit`: resolves the game, stake, seed and key, then runs the pipeline and reports.

use super::output::StdoutError;
use super::{grouped, pool, progress_bar, EmitArgs, Exit};
use crate::block::files::{create_dir, write_atomic};
use crate::block::keys;
use crate::emit::{block_range, emit, BlockOutcome, EmitConfig};
use crate::game::Game;
use crate::money::canonical;
use crate::plan::{fresh_seed, Seed};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Parses a 64-hex-digit seed.
pub fn parse_seed(text: &str) -> Result<Seed> {
    let text = text.trim();
    let mut seed = [0u8; 32];
    if text.len() != 64 || hex::decode_to_slice(text, &mut seed).is_err() {
        bail!(
            "the seed must be 256 bits written as 64 hexadecimal digits (0-9, a-f), got {} characters",
            text.len()
        );
    }
    Ok(seed)
}

pub(super) fn run(args: EmitArgs) -> Result<Exit> {
    let game = Game::resolve(&args.game)?;
    let price = match &args.price {
        // Any decimal spelling of a stake is accepted (2, 2.0, 2.00).
        Some(p) => p
            .trim()
            .parse::<rust_decimal::Decimal>()
            .map(|d| d.normalize())
            .map_err(|_| anyhow!("--price {p}: not an amount in euros such as 0.5 or 2"))?,
        None if game.stakes.len() == 1 => game.stakes[0].price,
        None => bail!(
            "--price is needed: {} has stakes of {} €",
            game.id,
            game.stake_list()
        ),
    };
    let stake = game.stake(price)?.clone();
    // Checked before any seed or key file is made.
    block_range(args.first_block, args.blocks)?;
    let base = format!(
        "{}-{}-e{:04}",
        game.id,
        canonical(stake.price),
        args.emission
    );
    let private = args.out.join("private");
    let (seed, seed_note) = match &args.seed {
        Some(text) => {
            errln!("note: seed given with --seed; it is not stored anywhere");
            (
                parse_seed(text).context("--seed")?,
                "given with --seed, not stored".to_string(),
            )
        }
        None => {
            let path = args
                .seed_file
                .clone()
                .unwrap_or_else(|| private.join(format!("{base}.seed")));
            (
                load_or_make_seed(&path)?,
                format!("kept in {} (not in the emission folder)", path.display()),
            )
        }
    };
    let (signing_key, key_note) = match &args.signing_key {
        Some(path) => (keys::read_signing_key(path)?, path.display().to_string()),
        None => {
            let path = private.join(format!("{base}.signing-key.pem"));
            (
                load_or_make_key(&path)?,
                format!("one-time key {}", path.display()),
            )
        }
    };
    let config = EmitConfig {
        game,
        price,
        emission: args.emission,
        first_block: args.first_block,
        blocks: args.blocks,
        out: args.out.clone(),
        seed,
        signing_key,
        force: args.force,
    };
    let bar = progress_bar(
        args.quiet,
        &format!("{} {} €", config.game.id, canonical(price)),
        Some(u64::from(args.blocks) * config.game.block_size),
    );
    let started = Instant::now();
    let summary = pool(args.threads)?.install(|| {
        emit(&config, &bar, |number, outcome, path| {
            let what = match outcome {
                BlockOutcome::Written => "written",
                BlockOutcome::Kept => "already there, verified and kept",
            };
            bar.suspend(|| errln!("block {number:05}: {what} ({})", path.display()));
        })
    })?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let rate = summary.tickets as f64 / seconds.max(1e-9);
    let summary_lines = || -> Result<(), StdoutError> {
        outln!(
            "{} of {} at {} €: {} block(s) written, {} kept; {} tickets in {:.1} s ({} tickets/s)",
            summary.folder.display(),
            config.game.name,
            canonical(price),
            summary.written,
            summary.kept,
            grouped(summary.tickets),
            seconds,
            grouped(rate as u64),
        )?;
        outln!("seed: {seed_note}")?;
        outln!("signed with: {key_note}")?;
        outln!(
            "verify with: emission-factory verify {}",
            summary.folder.display()
        )
    };
    // The blocks are on disk already: an output that fails says so.
    summary_lines().map_err(|e| {
        e.done(format!(
            "the blocks were written to {} (only this summary is missing)",
            summary.folder.display()
        ))
    })?;
    Ok(Exit::Ok)
}

/// Reads the emission's seed file, or makes a new seed and writes it (mode 0600).
fn load_or_make_seed(path: &Path) -> Result<Seed> {
    if path.exists() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read seed file {}", path.display()))?;
        let seed = parse_seed(&text).with_context(|| format!("seed file {}", path.display()))?;
        errln!("note: reusing this emission's seed from {}", path.display());
        return Ok(seed);
    }
    let seed = fresh_seed().map_err(|e| anyhow!("the system's random generator failed: {e}"))?;
    make_private_dir(path)?;
    write_atomic(path, format!("{}\n", hex::encode(seed)).as_bytes(), 0o600)?;
    errln!(
        "note: new random seed for this emission written to {} (mode 0600). It is not in the emission folder: keep it secret and safe, it is needed to add blocks to this emission and to reproduce it in an audit",
        path.display()
    );
    Ok(seed)
}

/// Reads the emission's one-time signing key, or makes one and writes it (mode 0600).
fn load_or_make_key(path: &Path) -> Result<ed25519_dalek::SigningKey> {
    if path.exists() {
        let key = keys::read_signing_key(path)?;
        errln!(
            "note: no --signing-key: signing with this emission's one-time key {}",
            path.display()
        );
        return Ok(key);
    }
    let key = keys::generate()?;
    make_private_dir(path)?;
    write_atomic(path, keys::private_pem(&key)?.as_bytes(), 0o600)?;
    errln!(
        "note: no --signing-key: made a one-time signing key for this emission, kept at {} (mode 0600); its public key is emission.pub.pem in the emission folder. For production, sign with your own key (keygen, --signing-key)",
        path.display()
    );
    Ok(key)
}

fn make_private_dir(path: &Path) -> Result<()> {
    let dir: PathBuf = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    create_dir(&dir, 0o700)
}
