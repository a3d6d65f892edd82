//! `load`: loads blocks into PostgreSQL, one transaction per block, and reports each.

use super::output::Lines;
use super::{grouped, Exit, LoadArgs};
use anyhow::{bail, Result};
use emission_factory::block::keys;
use emission_factory::game::Game;
use emission_factory::load::{connect, load_block, LoadOptions, Outcome};
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
    let blocks = find_blocks(&args.paths)?;
    if blocks.is_empty() {
        bail!("no block file (block-NNNNN.csv) found in the paths given");
    }
    let mut client = connect(&url, args.allow_plaintext)?;
    // Each line is said after its block is committed: a closed or full standard output does
    // not stop the loading, and is said once every block is in.
    let mut out = Lines::default();
    let (mut loaded, mut skipped, mut withdrawn) = (0usize, 0usize, 0usize);
    for (done, csv) in blocks.iter().enumerate() {
        let name = shown_path(csv);
        super::verify::warn_if_readable_by_others(csv);
        if !args.quiet {
            errln!("loading {name} ...");
        }
        let outcome = load_block(&mut client, csv, &options).map_err(|e| match done {
            0 => anyhow::Error::new(e),
            _ => anyhow::anyhow!(
                "{e}\n({done} of {} block(s) done before this one: {loaded} loaded, {skipped} already there; they stay loaded, and running the same command again skips them)",
                blocks.len()
            ),
        })?;
        let applied = match &outcome {
            Outcome::Loaded(l) => &l.withdrawals,
            Outcome::Skipped { withdrawals, .. } => withdrawals,
        };
        for a in applied {
            withdrawn += 1;
            out.line(format_args!(
                "WITHDRAWN {} by {} (SHA-256 {}): applied, never sold from again; past sales stay as they were",
                a.what,
                shown_path(&a.path),
                a.sha256
            ));
        }
        match outcome {
            Outcome::Loaded(l) => {
                loaded += 1;
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
            }
            Outcome::Skipped {
                manifest_sha256, ..
            } => {
                skipped += 1;
                out.line(format_args!(
                    "SKIPPED {name} (already loaded with the same manifest, SHA-256 {})",
                    shown_text(&manifest_sha256, SHOWN_CHARS)
                ));
            }
        }
    }
    out.line(format_args!(
        "{} block(s): {loaded} loaded, {skipped} already loaded{}",
        blocks.len(),
        match withdrawn {
            0 => String::new(),
            n => format!("; {n} withdrawal record(s) applied"),
        }
    ));
    out.finish(|| {
        format!(
            "{loaded} block(s) of {} loaded and committed, {skipped} already loaded: the loading is done, only these lines are missing",
            blocks.len()
        )
    })?;
    Ok(Exit::Ok)
}
