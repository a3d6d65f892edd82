//! `load`: loads blocks into PostgreSQL, one transaction per block, and reports each.

use super::output::Lines;
use super::{grouped, Exit, LoadArgs};
use anyhow::{bail, Result};
use emission_factory::block::keys;
use emission_factory::game::Game;
use emission_factory::load::{connect, load_block, LoadOptions, Outcome};
use emission_factory::progress::Progress;
use emission_factory::untrusted::{shown_path, shown_text, SHOWN_CHARS};
use emission_factory::verify::find_blocks;

pub(super) fn run(args: LoadArgs) -> Result<Exit> {
    let url = match args.database_url.clone() {
        Some(url) => url,
        None => match std::env::var("DATABASE_URL") {
            Ok(url) if !url.is_empty() => url,
            _ => bail!(
                "no database given: pass --database-url URL or set DATABASE_URL (e.g. postgresql://loader@/game?host=/run/postgresql)"
            ),
        },
    };
    let options = LoadOptions {
        public_key: keys::read_public_key(&args.public_key)?,
        game: match &args.game {
            Some(g) => Some(Game::resolve(g)?),
            None => None,
        },
        allow_test: args.allow_test,
    };
    // One emission pack, read as it streams and loaded whole in one transaction before a line
    // is said; or blocks and folders, each block committed in its own transaction.
    let pack = super::verify::pack_of(&args.paths)?;
    if pack.is_none() && !args.identity.is_empty() {
        bail!("--identity opens an emission pack: give the pack (or leave --identity out for blocks and folders)");
    }
    let mut jobs: Vec<Job> = match &pack {
        Some(_) => Vec::new(),
        None => find_blocks(&args.paths)?
            .into_iter()
            .map(Job::File)
            .collect(),
    };
    if pack.is_none() && jobs.is_empty() {
        bail!("no block file (block-NNNNN.csv) found in the paths given");
    }
    let identities = match &pack {
        Some(pack) => {
            if args.identity.is_empty() {
                bail!("{} is an emission pack: give --identity KEY (an age identity of one of its recipients) to load it", shown_path(pack));
            }
            let read = emission_factory::custody::read_identity_files(
                &args.identity,
                super::emit::exposure(args.allow_insecure_key),
            )?;
            super::emit::warn_exposed(&read.exposed);
            read.identities
        }
        None => Vec::new(),
    };
    let mut client = connect(&url, args.allow_plaintext)?;
    let start = std::time::Instant::now();
    // Tickets sent and the rate, on a terminal, never with -q or --json.
    let bar = super::progress_bar(args.quiet || args.json, "load", Some(0));
    if let Some(pack) = &pack {
        if !args.quiet && !args.json {
            bar.suspend(|| errln!("loading {} ...", shown_path(pack)));
        }
        let loaded =
            emission_factory::pack::load::load_pack(&mut client, pack, &identities, &options, &bar)
                .inspect_err(|_| bar.finish_and_clear())?;
        jobs = loaded
            .blocks
            .into_iter()
            .map(|(name, outcome)| Job::Done(name, outcome))
            .collect();
    }
    let blocks = &jobs;
    // Each line is said after its block is committed: a closed or full standard output does
    // not stop the loading, and is said once every block is in.
    let mut out = Lines::default();
    let (mut loaded, mut skipped, mut withdrawn) = (0usize, 0usize, 0usize);
    let mut migrated: Option<i32> = None;
    let mut json_blocks = Vec::new();
    for (done, job) in blocks.iter().enumerate() {
        let (name, path, outcome) = match job {
            Job::Done(name, outcome) => (name.clone(), name.clone(), outcome.clone()),
            Job::File(csv) => {
                let name = shown_path(csv);
                bar.suspend(|| super::verify::warn_if_readable_by_others(csv));
                if !args.quiet && !args.json {
                    bar.suspend(|| errln!("loading {name} ..."));
                }
                bar.stage(&format!("load {name}"));
                let outcome = load_block(&mut client, csv, &options, &bar).map_err(|e| {
                    bar.finish_and_clear();
                    match done {
                        0 => anyhow::Error::new(e),
                        _ => anyhow::anyhow!(
                            "{e}\n({done} of {} block(s) done before this one: {loaded} loaded, {skipped} already there; they stay loaded, and running the same command again skips them)",
                            blocks.len()
                        ),
                    }
                })?;
                (name, csv.to_string_lossy().into_owned(), outcome)
            }
        };
        let applied = match &outcome {
            Outcome::Loaded(l) => &l.withdrawals,
            Outcome::Skipped { withdrawals, .. } => withdrawals,
        };
        withdrawn += applied.len();
        let applied_json: Vec<serde_json::Value> = applied
            .iter()
            .map(|a| {
                serde_json::json!({
                    "path": a.path.to_string_lossy(),
                    "what": a.what,
                    "sha256": a.sha256,
                })
            })
            .collect();
        bar.suspend(|| {
            if args.json {
                return;
            }
            for a in applied {
                out.line(format_args!(
                    "WITHDRAWN {} by {} (SHA-256 {}): applied, never sold from again; past sales stay as they were",
                    a.what,
                    shown_path(&a.path),
                    a.sha256
                ));
            }
        });
        match outcome {
            Outcome::Loaded(l) => {
                loaded += 1;
                if let Some(&v) = l.migrated.last() {
                    migrated = Some(v);
                }
                json_blocks.push(serde_json::json!({
                    "path": path,
                    "outcome": "loaded",
                    "tickets": l.tickets,
                    "seconds": (l.total.as_secs_f64() * 1000.0).round() / 1000.0,
                    "withdrawals_applied": applied_json,
                }));
                if args.json {
                    continue;
                }
                bar.suspend(|| {
                    if !l.migrated.is_empty() {
                        out.line(format_args!(
                            "schema  created or migrated to version {}",
                            l.migrated.last().copied().unwrap_or_default()
                        ));
                    }
                    let rate = l.tickets as f64 / l.total.as_secs_f64().max(1e-9);
                    out.line(format_args!(
                        "LOADED  {name} ({} tickets in {:.2} s, {} tickets/s: COPY {:.2} s, index and attach {:.2} s, read-back {:.2} s, waiting for the verification {:.2} s, commit {:.2} s; verification {:.2} s beside them)",
                        grouped(l.tickets),
                        l.total.as_secs_f64(),
                        grouped(rate as u64),
                        l.copy.as_secs_f64(),
                        l.attach.as_secs_f64(),
                        l.read_back.as_secs_f64(),
                        l.wait.as_secs_f64(),
                        l.commit.as_secs_f64(),
                        l.verify.as_secs_f64()
                    ));
                });
            }
            Outcome::Skipped {
                manifest_sha256, ..
            } => {
                skipped += 1;
                json_blocks.push(serde_json::json!({
                    "path": path,
                    "outcome": "skipped",
                    "tickets": null,
                    "seconds": null,
                    "manifest_sha256": manifest_sha256,
                    "withdrawals_applied": applied_json,
                }));
                if args.json {
                    continue;
                }
                bar.suspend(|| {
                    out.line(format_args!(
                        "SKIPPED {name} (already loaded with the same manifest, SHA-256 {})",
                        shown_text(&manifest_sha256, SHOWN_CHARS)
                    ))
                });
            }
        }
    }
    bar.finish_and_clear();
    if args.json {
        let json = serde_json::json!({
            "load_format": 1,
            "blocks_loaded": loaded,
            "blocks_skipped": skipped,
            "withdrawals_applied": withdrawn,
            "schema_migrated_to": migrated,
            "seconds": (start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            "blocks": json_blocks,
        });
        let text = serde_json::to_string_pretty(&json)?;
        out.line(format_args!("{text}"));
    } else {
        out.line(format_args!(
            "{} block(s): {loaded} loaded, {skipped} already loaded{}",
            blocks.len(),
            match withdrawn {
                0 => String::new(),
                n => format!("; {n} withdrawal record(s) applied"),
            }
        ));
    }
    out.finish(|| {
        format!(
            "{loaded} block(s) of {} loaded and committed, {skipped} already loaded: the loading is done, only these lines are missing",
            blocks.len()
        )
    })?;
    Ok(Exit::Ok)
}

/// A block to load (a file), or one a pack's transaction loaded (its place in the pack).
enum Job {
    File(std::path::PathBuf),
    Done(String, Outcome),
}
