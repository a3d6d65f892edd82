//! `emit`: resolves the game, stake, seed and key, then runs the pipeline and reports.

use super::{grouped, pool, progress_bar, EmitArgs, Exit};
use crate::block;
use crate::block::files::{create_dir, write_atomic};
use crate::block::keys;
use crate::emission::lock::LockFile;
use crate::emission::log::{self as audit, Entry};
use crate::emission::record::EmissionKind;
use crate::emit::{block_range, emit, BlockOutcome, EmitConfig, Event};
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
    // The seed and key files are read or made under the emission lock, so that two first runs
    // of an emission started at once agree on them.
    let folder = block::emission_dir(&args.out, &game, &stake, args.emission);
    create_dir(&folder, 0o755)?;
    let lock = LockFile::emission(&folder)?;
    let held = lock.acquire(&mut |m| eprintln!("note: {m}"))?;
    let (seed, seed_note) = match &args.seed {
        Some(text) => {
            eprintln!("note: seed given with --seed; it is not stored anywhere");
            (
                parse_seed(text).context("--seed")?,
                "given with --seed, not stored".to_string(),
            )
        }
        None => match &args.seed_file {
            Some(path) => {
                // An explicit seed file is read, never made: a typo must not start a new seed.
                if !path.exists() {
                    bail!(
                        "--seed-file {}: no such file. A seed file is never created by --seed-file; leave out every seed option on an emission's first run to draw a new seed",
                        path.display()
                    );
                }
                (
                    load_or_make_seed(path)?,
                    format!("read from {}", path.display()),
                )
            }
            None => {
                let path = private.join(format!("{base}.seed"));
                (
                    load_or_make_seed(&path)?,
                    format!("kept in {} (not in the emission folder)", path.display()),
                )
            }
        },
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
    drop(held);
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
        // Only a seed rebuilt from custody shares makes a production emission.
        kind: EmissionKind::Test,
        custody: None,
        planned_blocks: args.emission_blocks,
    };
    let bar = progress_bar(
        args.quiet,
        &format!("{} {} €", config.game.id, canonical(price)),
        Some(u64::from(args.blocks) * config.game.block_size),
    );
    let started = Instant::now();
    let outcome = pool(args.threads)?.install(|| {
        emit(&config, &bar, |event| {
            let line = match event {
                Event::Block {
                    number,
                    outcome,
                    csv,
                } => {
                    let what = match outcome {
                        BlockOutcome::Written => "written",
                        BlockOutcome::Kept => "already there, verified and kept",
                    };
                    format!("block {number:05}: {what} ({})", csv.display())
                }
                Event::Waiting(m) => format!("note: {m}"),
                Event::Sealed(path) => format!(
                    "sealed: all the emission's blocks are made; {}",
                    path.display()
                ),
                Event::StaleRemoved { path, count } => format!(
                    "note: removed {count} temporary file(s) for {} left by a run that was killed",
                    path.display()
                ),
            };
            bar.suspend(|| eprintln!("{line}"));
        })
    });
    // Every run on the emission leaves a line in its audit log, whatever the outcome.
    let mut entry = Entry::for_this_run("emit");
    match &outcome {
        Ok(summary) => {
            entry.blocks_made = summary.made.clone();
            entry.blocks_kept = summary.kept_blocks.clone();
            if summary.sealed {
                entry.result = "ok, sealed".into();
            }
        }
        Err(e) => entry.result = format!("error: {e:#}").chars().take(1000).collect(),
    }
    if let Err(e) = audit::append(&folder, entry) {
        eprintln!("warning: cannot append to the emission's audit log: {e:#}");
        if outcome.is_ok() {
            return Err(e.context("the blocks were made, but the audit log could not be written"));
        }
    }
    let summary = outcome?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let rate = summary.tickets as f64 / seconds.max(1e-9);
    println!(
        "{} of {} at {} €: {} block(s) written, {} kept; {} tickets in {:.1} s ({} tickets/s)",
        summary.folder.display(),
        config.game.name,
        canonical(price),
        summary.written,
        summary.kept,
        grouped(summary.tickets),
        seconds,
        grouped(rate as u64),
    );
    println!("seed: {seed_note}");
    println!("signed with: {key_note}");
    println!(
        "verify with: emission-factory verify {}",
        summary.folder.display()
    );
    Ok(Exit::Ok)
}

/// Reads the emission's seed file, or makes a new seed and writes it (mode 0600).
fn load_or_make_seed(path: &Path) -> Result<Seed> {
    if path.exists() {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read seed file {}", path.display()))?;
        let seed = parse_seed(&text).with_context(|| format!("seed file {}", path.display()))?;
        eprintln!("note: reusing this emission's seed from {}", path.display());
        return Ok(seed);
    }
    let seed = fresh_seed().map_err(|e| anyhow!("the system's random generator failed: {e}"))?;
    make_private_dir(path)?;
    write_atomic(path, format!("{}\n", hex::encode(seed)).as_bytes(), 0o600)?;
    eprintln!(
        "note: new random seed for this emission written to {} (mode 0600). It is not in the emission folder: keep it secret and safe, it is needed to add blocks to this emission and to reproduce it in an audit",
        path.display()
    );
    Ok(seed)
}

/// Reads the emission's one-time signing key, or makes one and writes it (mode 0600).
fn load_or_make_key(path: &Path) -> Result<ed25519_dalek::SigningKey> {
    if path.exists() {
        let key = keys::read_signing_key(path)?;
        eprintln!(
            "note: no --signing-key: signing with this emission's one-time key {}",
            path.display()
        );
        return Ok(key);
    }
    let key = keys::generate()?;
    make_private_dir(path)?;
    write_atomic(path, keys::private_pem(&key)?.as_bytes(), 0o600)?;
    eprintln!(
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
