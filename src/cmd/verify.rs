//! `verify`: checks blocks and reports, per block, OK or every problem found.

use super::emit::parse_seed;
use super::output::StdoutError;
use super::{grouped, pool, progress_bar, Exit, VerifyArgs};
use crate::block::keys;
use crate::game::Game;
use crate::money::canonical;
use crate::untrusted::{read_at_most, shown_path};
use crate::verify::{find_blocks, verify_block, VerifyOptions};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeSet;

/// The most a seed file may hold: 64 hex digits and a line end.
const MAX_SEED_FILE_BYTES: u64 = 4 << 10;

pub(super) fn run(args: VerifyArgs) -> Result<Exit> {
    let options = VerifyOptions {
        public_key: match &args.public_key {
            Some(path) => Some(keys::read_public_key(path)?),
            None => None,
        },
        game: match &args.game {
            Some(g) => Some(Game::resolve(g)?),
            None => None,
        },
        forms: args.forms,
        seed: match (&args.seed, &args.seed_file) {
            (Some(text), _) => Some(parse_seed(text).context("--seed")?),
            (None, Some(path)) => {
                let bytes = read_at_most(path, MAX_SEED_FILE_BYTES, "a seed file")
                    .map_err(|e| anyhow!("cannot read seed file {}: {e}", path.display()))?;
                Some(
                    parse_seed(&String::from_utf8_lossy(&bytes))
                        .with_context(|| format!("seed file {}", path.display()))?,
                )
            }
            (None, None) => None,
        },
    };
    let blocks = find_blocks(&args.paths)?;
    if blocks.is_empty() {
        bail!("no block file (block-NNNNN.csv) found in the paths given");
    }
    let bar = progress_bar(args.quiet, "verify", None);
    let pool = pool(args.threads)?;
    let mut failed = 0;
    let mut warned = BTreeSet::new();
    for csv in &blocks {
        bar.set_message(format!("verify {}", shown_path(csv)));
        bar.set_position(0);
        let report = pool.install(|| verify_block(csv, &options, &bar));
        bar.suspend(|| -> Result<(), StdoutError> {
            for w in &report.warnings {
                // The same warning for every block of a folder: say it once.
                if warned.insert(w.clone()) {
                    errln!("warning: {w}");
                }
            }
            if report.ok() {
                outln!(
                    "OK      {} ({} tickets)",
                    shown_path(csv),
                    grouped(report.tickets)
                )?;
            } else {
                failed += 1;
                outln!("FAILED  {}", shown_path(csv))?;
                for p in &report.problems {
                    outln!("  - {p}")?;
                }
                if report.unlisted > 0 {
                    outln!("  - ... and {} more problems", report.unlisted)?;
                }
            }
            if args.forms && !report.forms.is_empty() {
                outln!("  forms (prize € / form / tickets):")?;
                let mut rows: Vec<_> = report.forms.iter().collect();
                rows.sort_by(|a, b| b.0 .0.cmp(&a.0 .0).then(b.1.cmp(a.1)));
                for ((prize, form), count) in rows {
                    outln!(
                        "    {:>8}  {:<40} {:>10}",
                        canonical(*prize),
                        form,
                        grouped(*count)
                    )?;
                }
            }
            Ok(())
        })?;
    }
    bar.finish_and_clear();
    outln!(
        "{} block(s) checked: {} OK, {} failed",
        blocks.len(),
        blocks.len() - failed,
        failed
    )?;
    Ok(if failed == 0 { Exit::Ok } else { Exit::Failed })
}
