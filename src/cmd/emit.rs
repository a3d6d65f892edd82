//! `emit`: turns the options into a [`Request`] for the engine's emission run
//! ([`emission_factory::emit::run`], which holds the whole policy), shows its events and prints
//! the summary.

use super::options::SeedOptions;
use super::output::StdoutError;
use super::{grouped, pool, progress_bar, EmitArgs, Exit};
use anyhow::{bail, Context, Result};
use emission_factory::emit::run::{read_seed_from, KeySource, Request, SeedSource};
use emission_factory::emit::{BlockOutcome, Event};
use emission_factory::fs::files::{self, Exposure};
use emission_factory::game::Game;
use emission_factory::money::canonical;
use emission_factory::untrusted::{shown_path, shown_text, SHOWN_CHARS};
use std::path::{Path, PathBuf};
use std::time::Instant;

use emission_factory::emit::run::parse_seed;

pub(super) fn run(args: EmitArgs) -> Result<Exit> {
    let game = Game::resolve(&args.game)?;
    let stake = super::stake(&game, args.price.as_deref())?.clone();
    if args.print_folder {
        return print_folder(
            &emission_factory::block::id::EmissionId::new(&game.id, &stake, args.emission)
                .folder(&args.out),
        );
    }
    let label = format!("{} {} €", game.id, canonical(stake.price));
    let bar = progress_bar(
        args.quiet || args.json,
        &label,
        Some(u64::from(args.blocks) * game.block_size),
    );
    let request = Request {
        seed: seed_source(&args)?,
        key: args
            .signing_key
            .clone()
            .map_or(KeySource::Private, KeySource::File),
        group: args.group.as_deref().map(files::group_id).transpose()?,
        game,
        price: stake.price,
        emission: args.emission,
        first_block: args.first_block,
        blocks: args.blocks,
        out: args.out.clone(),
        force: args.force,
        planned_blocks: args.emission_blocks,
        direct_io: !args.page_cache,
        exposure: exposure(args.allow_insecure_key),
        beacon: args.beacon.clone(),
    };
    let (name, price) = (request.game.name.clone(), request.price);
    let started = Instant::now();
    let done = pool(args.threads)?.install(|| {
        emission_factory::emit::run::run(request, &bar, &mut |event| {
            bar.suspend(|| errln!("{}", event_line(&event)))
        })
    })?;
    bar.finish_and_clear();
    let (summary, seconds) = (&done.summary, started.elapsed().as_secs_f64());
    if args.json {
        return print_json(&done, seconds);
    }
    let lines = || -> Result<(), StdoutError> {
        outln!(
            "{} of {} at {} €: {} block(s) written, {} kept; {} tickets in {seconds:.1} s ({} tickets/s)",
            shown_path(&summary.folder),
            shown_text(&name, SHOWN_CHARS),
            canonical(price),
            summary.written,
            summary.kept,
            grouped(summary.tickets),
            grouped((summary.tickets as f64 / seconds.max(1e-9)) as u64),
        )?;
        outln!("seed: {}", done.seed_note)?;
        outln!("signed with: {}", done.key_note)?;
        outln!(
            "verify with: emission-factory verify {}",
            shown_path(&summary.folder)
        )
    };
    // The blocks are on disk already: an output that fails says so.
    lines().map_err(|e| {
        e.done(format!(
            "the blocks were written to {} (only this summary is missing)",
            shown_path(&summary.folder)
        ))
    })?;
    Ok(Exit::Ok)
}

/// `emit --json`: the run's result as one JSON object (docs/FORMAT.md, "emit --json").
fn print_json(done: &emission_factory::emit::run::Outcome, seconds: f64) -> Result<Exit> {
    let s = &done.summary;
    let json = serde_json::json!({
        "emit_format": 1,
        "folder": s.folder.to_string_lossy(),
        "blocks_written": s.made,
        "blocks_kept": s.kept_blocks,
        "tickets_written": s.tickets,
        "seconds": (seconds * 1000.0).round() / 1000.0,
        "planned_blocks": s.planned,
        "sealed": done.sealed,
        "seed": done.seed_note,
        "signed_with": done.key_note,
    });
    let text = serde_json::to_string_pretty(&json).context("cannot write the JSON")?;
    // The blocks are on disk already: an output that fails says so.
    outln!("{text}").map_err(|e| {
        e.done(format!(
            "the blocks were written to {} (only this JSON is missing)",
            shown_path(&s.folder)
        ))
    })?;
    Ok(Exit::Ok)
}

/// The line printed on standard error for an event of the run.
fn event_line(event: &Event) -> String {
    match event {
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
        Event::Waiting(m) | Event::Note(m) => format!("note: {m}"),
        Event::Warning(m) => format!("warning: {m}"),
        Event::Sealed(path) => format!(
            "sealed: all the emission's blocks are made; {}",
            path.display()
        ),
        Event::StaleRemoved { path, count } => format!(
            "note: removed {count} temporary file(s) of {} left by a run that was killed",
            path.display()
        ),
    }
}

/// Where the seed comes from: custody shares, a seed handed over for this run (`--seed`,
/// `--seed-file -`, `--seed-fd N`), a seed file, or the emission's own file.
fn seed_source(args: &EmitArgs) -> Result<SeedSource> {
    if args.shares.share.is_empty() && !args.shares.identity.is_empty() {
        anyhow::bail!("--identity opens the custody shares: give the --share files with it");
    }
    if !args.shares.share.is_empty() {
        return Ok(SeedSource::Custody {
            shares: args.shares.share.clone(),
            identities: args.shares.identity.clone(),
        });
    }
    Ok(match given_seed(&args.seed)? {
        Some((seed, how)) => SeedSource::Given { seed, how },
        None => match &args.seed.seed_file {
            Some(path) => SeedSource::File(path.clone()),
            None => SeedSource::Private,
        },
    })
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
fn given_seed(options: &SeedOptions) -> Result<Option<(emission_factory::plan::Seed, String)>> {
    if let Some(text) = &options.seed {
        return Ok(Some((
            parse_seed(text).context("--seed")?,
            "given with --seed".to_string(),
        )));
    }
    if options.seed_file.as_deref() == Some(Path::new("-")) {
        let what = "standard input";
        let seed = read_seed_from(std::io::stdin().lock(), what)?;
        return Ok(Some((seed, format!("read from {what}"))));
    }
    if let Some(fd) = options.seed_fd {
        let what = format!("file descriptor {fd}");
        let seed = read_seed_from(open_fd(fd)?, &what)?;
        return Ok(Some((seed, format!("read from {what}"))));
    }
    Ok(None)
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
/// bytes, printing the engine's warning when group or others may read it.
pub(super) fn read_secret_file(
    path: &Path,
    what: &str,
    limit: u64,
    allow_insecure: bool,
) -> Result<Vec<u8>> {
    Ok(emission_factory::emit::run::read_secret_file(
        path,
        what,
        limit,
        exposure(allow_insecure),
        &mut |event| errln!("{}", event_line(&event)),
    )?)
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
pub(super) fn warn_exposed(files: &[(PathBuf, u32)]) {
    for (path, mode) in files {
        errln!(
            "warning: {}",
            emission_factory::emit::run::exposed_warning(path, *mode)
        );
    }
}

/// The seed the options of an audit or a lab name (never custody shares): handed over
/// ([`given_seed`]) or read from `--seed-file FILE`; `None` when no seed option is given.
pub(super) fn seed_of_options(
    options: &SeedOptions,
    allow_insecure: bool,
) -> Result<Option<emission_factory::plan::Seed>> {
    if let Some((seed, _)) = given_seed(options)? {
        return Ok(Some(seed));
    }
    options
        .seed_file
        .as_deref()
        .map(|path| read_seed_file(path, allow_insecure))
        .transpose()
}

/// Reads a seed file, printing the engine's warning when group or others may read it.
fn read_seed_file(path: &Path, allow_insecure: bool) -> Result<emission_factory::plan::Seed> {
    Ok(emission_factory::emit::run::read_seed_file(
        path,
        exposure(allow_insecure),
        &mut |event| errln!("{}", event_line(&event)),
    )?)
}
