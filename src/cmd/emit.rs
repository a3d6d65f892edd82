//! `emit`: resolves the game, stake, seed and key, then runs the pipeline and reports.

use super::output::StdoutError;
use super::{grouped, pool, progress_bar, EmitArgs, Exit};
use anyhow::{anyhow, bail, Context, Result};
use emission_factory::block;
use emission_factory::block::files::{self, Exposure};
use emission_factory::block::keys;
use emission_factory::emission::lock::LockFile;
use emission_factory::emission::log::{self as audit, Entry};
use emission_factory::emission::record::{Custody, EmissionKind};
use emission_factory::emit::{
    block_range, emit, seal_if_complete, BlockOutcome, EmitConfig, Event,
};
use emission_factory::game::Game;
use emission_factory::mechanic::BuildError;
use emission_factory::money::canonical;
use emission_factory::plan::{fresh_seed, Seed};
use emission_factory::untrusted::{shown_path, shown_text, SHOWN_CHARS};
use std::io::Read;
use std::path::Path;
use std::time::Instant;

/// The most bytes read for a seed: 64 hex digits and a line end, with room for blanks.
const SEED_LIMIT: u64 = 256;

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
    let stake = super::stake(&game, args.price.as_deref())?.clone();
    // The one place the command names its folder; the engine builds it with the same function
    // from the same values (`EmitConfig::out`, `emission`).
    let folder = block::emission_dir(&args.out, &game, &stake, args.emission);
    if args.print_folder {
        return print_folder(&folder);
    }
    let price = stake.price;
    // Checked before any folder, seed or key file is made: the block range, that every prize
    // of the stake can be shown (the synthesizer built here is the engine's), and that the
    // emission's kind is the run's (the engine checks the signed record again, under the lock).
    block_range(args.first_block, args.blocks)?;
    refuse_wrong_kind(&folder, !args.share.is_empty())?;
    let synthesizer = stake.synthesizer().map_err(|e| match e {
        // A signal: the binary exits as a shell expects (143...).
        BuildError::Interrupted(signal) => anyhow::Error::new(signal),
        e => anyhow::anyhow!("game {}: {e}", game.id),
    })?;
    let base = format!(
        "{}-{}-e{:04}",
        game.id,
        canonical(stake.price),
        args.emission
    );
    let private = args.out.join("private");
    // The seed and key files are read or made under the emission lock, so that two first runs
    // of an emission started at once agree on them.
    let group = args.group.as_deref().map(files::group_id).transpose()?;
    files::emission_folder(&folder, group)?;
    let lock = LockFile::emission(&folder)?;
    let held = lock.acquire(&mut |m| errln!("note: {m}"))?;
    // A killed run's temporary copies of this emission's seed and key are secrets: removed.
    for name in [format!("{base}.seed"), format!("{base}.signing-key.pem")] {
        let count = files::remove_stale_temps(&private.join(&name))?;
        if count > 0 {
            errln!(
                "note: removed {count} temporary file(s) of {name} left by a run that was killed"
            );
        }
    }
    let given = given_seed(
        args.seed.as_deref(),
        args.seed_file.as_deref(),
        args.seed_fd,
    )?;
    // The emission's own secrets live in DIR/private: that folder must be ours alone.
    if (given.is_none() && args.seed_file.is_none()) || args.signing_key.is_none() {
        files::private_dir(&private)?;
    }
    let custody = match args.share.is_empty() {
        true => None,
        false => {
            let emission_id =
                emission_factory::custody::emission_id(&game.id, &stake, args.emission);
            let (secret, info) = emission_factory::custody::rebuild_seed_with(
                &args.share,
                &args.identity,
                &emission_id,
                exposure(args.allow_insecure_key),
            )?;
            warn_exposed(&info.exposed);
            Some((*secret.expose(), Custody::from_info(&info)))
        }
    };
    if custody.is_some() && args.signing_key.is_none() {
        bail!("a production emission (--share) is signed with the lottery's own key: give --signing-key (make one with keygen)");
    }
    let (seed, seed_note) = match (&custody, given) {
        (Some((seed, c)), _) => (
            *seed,
            format!(
                "rebuilt in memory from {} of {} custody shares (production emission)",
                c.used.len(),
                c.shares
            ),
        ),
        (None, given) => match given {
            Some((seed, how)) => {
                errln!("note: seed {how}; it is not stored anywhere");
                (seed, format!("{how}, not stored"))
            }
            None => match &args.seed_file {
                Some(path) => {
                    // An explicit seed file is read, never made: a typo must not start a new seed.
                    if !files::entry_exists(path)? {
                        bail!(
                        "--seed-file {}: no such file. A seed file is never created by --seed-file; leave out every seed option on an emission's first run to draw a new seed",
                        path.display()
                    );
                    }
                    (
                        load_or_make_seed(path, args.allow_insecure_key)?,
                        format!("read from {}", shown_path(path)),
                    )
                }
                None => {
                    let path = private.join(format!("{base}.seed"));
                    (
                        load_or_make_seed(&path, args.allow_insecure_key)?,
                        format!("kept in {} (not in the emission folder)", shown_path(&path)),
                    )
                }
            },
        },
    };
    let (signing_key, key_note) = match &args.signing_key {
        Some(path) => {
            let pem = read_secret_file(
                path,
                "signing key",
                files::SECRET_LIMIT,
                args.allow_insecure_key,
            )?;
            (keys::parse_signing_key(&pem, path)?, shown_path(path))
        }
        None => {
            let path = private.join(format!("{base}.signing-key.pem"));
            (
                load_or_make_key(&path, args.allow_insecure_key)?,
                format!("one-time key {}", shown_path(&path)),
            )
        }
    };
    held.release()?;
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
        kind: match custody {
            Some(_) => EmissionKind::Production,
            None => EmissionKind::Test,
        },
        custody: custody.map(|(_, c)| c),
        planned_blocks: args.emission_blocks,
        synthesizer,
        direct_io: !args.page_cache,
        group,
    };
    let bar = progress_bar(
        args.quiet,
        &format!("{} {} €", config.game.id, canonical(price)),
        Some(u64::from(args.blocks) * config.game.block_size),
    );
    let started = Instant::now();
    // Blocks published so far, for the audit log of a run that fails after publishing some.
    let mut published: Vec<u32> = Vec::new();
    let mut kept: Vec<u32> = Vec::new();
    let outcome = pool(args.threads)?.install(|| {
        emit(&config, &bar, |event| {
            let line = match event {
                Event::Block {
                    number,
                    outcome,
                    csv,
                } => {
                    match outcome {
                        BlockOutcome::Written => published.push(number),
                        BlockOutcome::Kept => kept.push(number),
                    }
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
            bar.suspend(|| errln!("{line}"));
        })
    });
    // Every run on the emission leaves a line in its audit log, whatever the outcome.
    let mut entry = Entry::for_this_run("emit");
    match &outcome {
        Ok(summary) => {
            entry.blocks_made = summary.made.clone();
            entry.blocks_kept = summary.kept_blocks.clone();
        }
        Err(e) => {
            // What was published before the failure stays, and the log says so.
            entry.blocks_made = published;
            entry.blocks_kept = kept;
            entry.result = format!("error: {e:#}").chars().take(1000).collect();
        }
    }
    if let Err(e) = audit::append(&folder, entry, &config.signing_key) {
        errln!("warning: cannot append to the emission's audit log: {e:#}");
        if outcome.is_ok() {
            return Err(e.context("the blocks were made, but the audit log failed"));
        }
    }
    let summary = outcome?;
    // The run that completes a planned emission seals it; the seal covers the log's line
    // that says so, appended first under the same lock.
    let mut sealing = Entry::for_this_run("emit");
    sealing.result = "sealing: all the emission's planned blocks are made".into();
    let sealed = seal_if_complete(
        &config,
        &summary,
        &mut |event| {
            if let Event::Sealed(path) = event {
                errln!(
                    "sealed: all the emission's blocks are made; {}",
                    path.display()
                );
            }
        },
        &mut || {
            audit::append_locked(&folder, &mut sealing.clone(), Some(&config.signing_key))
                .map(|_| ())
        },
    );
    if let Err(e) = &sealed {
        let mut failed = Entry::for_this_run("emit");
        failed.result = format!("error: sealing failed: {e:#}")
            .chars()
            .take(1000)
            .collect();
        let _ = audit::append(&folder, failed, &config.signing_key);
    }
    sealed?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let rate = summary.tickets as f64 / seconds.max(1e-9);
    let summary_lines = || -> Result<(), StdoutError> {
        outln!(
            "{} of {} at {} €: {} block(s) written, {} kept; {} tickets in {:.1} s ({} tickets/s)",
            shown_path(&summary.folder),
            shown_text(&config.game.name, SHOWN_CHARS),
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
            shown_path(&summary.folder)
        )
    };
    // The blocks are on disk already: an output that fails says so.
    summary_lines().map_err(|e| {
        e.done(format!(
            "the blocks were written to {} (only this summary is missing)",
            shown_path(&summary.folder)
        ))
    })?;
    Ok(Exit::Ok)
}

/// Refuses, before anything is made: custody shares for an emission the ceremony has not
/// started (no record), and a run without shares on a production emission (which would draw
/// or read another seed). The record is only peeked at here (its kind): the engine reads it
/// whole and checks its signature under the emission lock.
fn refuse_wrong_kind(folder: &Path, shares: bool) -> Result<()> {
    let path = folder.join(emission_factory::emission::record::RECORD_FILE);
    if !files::entry_exists(&path)? {
        if shares {
            bail!(
                "{} has no emission record: a production emission starts at the seed ceremony (`emission-factory seed --signing-key ...`), which writes the record naming its share set; shares without that record are refused. Nothing was written",
                folder.display()
            );
        }
        return Ok(());
    }
    if shares {
        return Ok(());
    }
    let bytes = emission_factory::emission::read_bounded(&path, 1 << 20)?;
    let kind = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string));
    if kind.as_deref() == Some("production") {
        bail!(
            "{} is a production emission: its seed comes only from its custody shares; give them with --share and --identity (k of them). Nothing was written",
            folder.display()
        );
    }
    Ok(())
}

/// `emit --print-folder`: the emission folder as one line of text, for a script to read with
/// `$(...)`. A folder that is not UTF-8 or holds a control character (a line end) is refused
/// rather than printed changed.
fn print_folder(folder: &Path) -> Result<Exit> {
    match folder.to_str() {
        Some(text) if !text.chars().any(char::is_control) => outln!("{text}")?,
        _ => bail!(
            "--print-folder: the emission folder {} is not UTF-8 text or holds a control character (a line end), and cannot be printed as one line; give an --out without them",
            shown_path(folder)
        ),
    }
    Ok(Exit::Ok)
}

/// The seed handed over for this run only, never stored: `--seed HEX`, `--seed-file -`
/// (standard input) or `--seed-fd N`; with how it came, for messages. `None` when the seed is
/// to come from a seed file.
pub(super) fn given_seed(
    seed: Option<&str>,
    seed_file: Option<&Path>,
    seed_fd: Option<i32>,
) -> Result<Option<(Seed, String)>> {
    if let Some(text) = seed {
        return Ok(Some((
            parse_seed(text).context("--seed")?,
            "given with --seed".to_string(),
        )));
    }
    if seed_file == Some(Path::new("-")) {
        let what = "standard input";
        let seed = read_seed_from(std::io::stdin().lock(), what)?;
        return Ok(Some((seed, format!("read from {what}"))));
    }
    if let Some(fd) = seed_fd {
        let what = format!("file descriptor {fd}");
        let seed = read_seed_from(open_fd(fd)?, &what)?;
        return Ok(Some((seed, format!("read from {what}"))));
    }
    Ok(None)
}

/// Reads a seed of 64 hex digits from a stream, reading at most [`SEED_LIMIT`] bytes.
fn read_seed_from(reader: impl Read, what: &str) -> Result<Seed> {
    let mut bytes = Vec::new();
    reader
        .take(SEED_LIMIT + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read the seed from {what}"))?;
    if bytes.len() as u64 > SEED_LIMIT {
        bail!(
            "the seed from {what} is longer than {SEED_LIMIT} bytes: give only its 64 hexadecimal digits"
        );
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        anyhow!("the seed from {what} must be 64 hexadecimal digits (0-9, a-f), and is not text")
    })?;
    parse_seed(text).with_context(|| format!("the seed from {what}"))
}

/// The inherited file descriptor `fd`, opened again through /dev/fd (no unsafe code).
#[cfg(unix)]
fn open_fd(fd: i32) -> Result<std::fs::File> {
    std::fs::File::open(format!("/dev/fd/{fd}")).with_context(|| {
        format!("cannot read the seed from file descriptor {fd} (is it open? for example `--seed-fd 3 3<FILE`)")
    })
}

#[cfg(not(unix))]
fn open_fd(fd: i32) -> Result<std::fs::File> {
    bail!("--seed-fd {fd}: reading from a file descriptor works on Unix only; use --seed-file - (standard input)")
}

/// Reads a secret file (seed, private key; `what` names it in errors) of at most `limit`
/// bytes. One that group or others may read is refused, or with --allow-insecure-key read with
/// a warning.
pub(super) fn read_secret_file(
    path: &Path,
    what: &str,
    limit: u64,
    allow_insecure: bool,
) -> Result<Vec<u8>> {
    let secret = files::read_secret(path, what, limit, exposure(allow_insecure))?;
    if let Some(mode) = secret.exposed_mode() {
        warn_exposed(&[(path.to_path_buf(), mode)]);
    }
    Ok(secret.bytes)
}

/// Whether --allow-insecure-key lets a secret file others may read through.
pub(super) fn exposure(allow_insecure: bool) -> Exposure {
    if allow_insecure {
        Exposure::Allow
    } else {
        Exposure::Refuse
    }
}

/// Warns of secret files read although group or others may read them (--allow-insecure-key).
pub(super) fn warn_exposed(files: &[(std::path::PathBuf, u32)]) {
    for (path, mode) in files {
        errln!(
            "warning: {} has mode {mode:04o}: group or others may read or change it, and it holds a secret; used anyway because of --allow-insecure-key. Run `chmod 600 {}`",
            path.display(),
            files::shell_quoted(path)
        );
    }
}

/// Reads a seed file (see [`read_secret_file`]).
pub(super) fn read_seed_file(path: &Path, allow_insecure: bool) -> Result<Seed> {
    let bytes = read_secret_file(path, "seed file", SEED_LIMIT, allow_insecure)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| anyhow!("seed file {}: not text", path.display()))?;
    parse_seed(text).with_context(|| format!("seed file {}", path.display()))
}

/// Reads the emission's seed file, or makes a new seed and writes it (mode 0600, in a
/// folder that only we can write to).
fn load_or_make_seed(path: &Path, allow_insecure: bool) -> Result<Seed> {
    if files::entry_exists(path)? {
        let seed = read_seed_file(path, allow_insecure)?;
        errln!("note: reusing this emission's seed from {}", path.display());
        return Ok(seed);
    }
    let seed = fresh_seed().map_err(|e| anyhow!("the system's random generator failed: {e}"))?;
    files::private_dir(folder_of(path))?;
    files::write_secret(path, format!("{}\n", hex::encode(seed)).as_bytes())?;
    errln!(
        "note: new random seed for this emission written to {} (mode 0600). It is not in the emission folder: keep it secret and safe, it is needed to add blocks to this emission and to reproduce it in an audit",
        path.display()
    );
    Ok(seed)
}

/// Reads the emission's one-time signing key, or makes one and writes it (mode 0600, in a
/// folder that only we can write to).
fn load_or_make_key(path: &Path, allow_insecure: bool) -> Result<ed25519_dalek::SigningKey> {
    if files::entry_exists(path)? {
        let pem = read_secret_file(path, "signing key", files::SECRET_LIMIT, allow_insecure)?;
        let key = keys::parse_signing_key(&pem, path)?;
        errln!(
            "note: no --signing-key: signing with this emission's one-time key {}",
            path.display()
        );
        return Ok(key);
    }
    let key = keys::generate()?;
    files::private_dir(folder_of(path))?;
    files::write_secret(path, keys::private_pem(&key)?.as_bytes())?;
    errln!(
        "note: no --signing-key: made a one-time signing key for this emission, kept at {} (mode 0600); its public key is emission.pub.pem in the emission folder. For production, sign with your own key (keygen, --signing-key)",
        path.display()
    );
    Ok(key)
}

/// The folder a file is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn a_seed_is_read_from_a_stream_with_a_bound() {
        let seed = read_seed_from(format!("{HEX}\r\n").as_bytes(), "test").unwrap();
        assert_eq!(hex::encode(seed), HEX);
        // An endless stream is not read to its end.
        let err = read_seed_from(std::io::repeat(b'a'), "test").unwrap_err();
        assert!(err.to_string().contains("longer than 256 bytes"), "{err}");
        let err = read_seed_from(&b"\xff\xfe"[..], "test").unwrap_err();
        assert!(err.to_string().contains("not text"), "{err}");
        let err = format!("{:#}", read_seed_from(&b""[..], "test").unwrap_err());
        assert!(err.contains("the seed from test"), "{err}");
        assert!(err.contains("64 hexadecimal digits"), "{err}");
    }
}
