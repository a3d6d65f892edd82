//! `report`: the auditor's report on blocks (text on standard output, `--json`, `--html`).

use super::{pool, progress_bar, Exit, ReportArgs};
use anyhow::{bail, Context, Result};
use emission_factory::game::Game;
use emission_factory::report::{html, report, text};
use emission_factory::verify::find_blocks;
use std::io::Write;
use std::path::Path;

pub(super) fn run(args: ReportArgs) -> Result<Exit> {
    let options = super::trusted(args.public_key.as_deref(), args.game.as_deref())?;
    let blocks = find_blocks(&args.paths)?;
    if blocks.is_empty() {
        bail!("no block file (block-NNNNN.csv) found in the paths given");
    }
    let bar = progress_bar(args.quiet, "report", None);
    let pool = pool(args.threads)?;
    let made = pool.install(|| report(&blocks, &options, &bar))?;
    bar.finish_and_clear();
    if let Some(path) = &args.json {
        let mut json = serde_json::to_vec_pretty(&made).context("the JSON report")?;
        json.push(b'\n');
        write_file(path, &json, "--json")?;
    }
    if let Some(path) = &args.html {
        // The game of each block, resolved once per game and stake.
        let games: std::collections::BTreeMap<
            (String, String),
            (Game, emission_factory::game::Stake),
        > = made
            .blocks
            .iter()
            .filter(|b| b.verified)
            .filter_map(|b| {
                let game = match &options.game {
                    Some(g) => g.clone(),
                    None => Game::builtin(&b.game).ok()?,
                };
                let stake = game
                    .stake(emission_factory::money::parse_canonical(&b.stake)?)
                    .ok()?
                    .clone();
                Some(((b.game.clone(), b.stake.clone()), (game, stake)))
            })
            .collect();
        let page = html::render(&made, &|block, layout| {
            let (game, stake) = games.get(&(block.game.clone(), block.stake.clone()))?;
            emission_factory::picture::ticket_svg(game, stake, layout).ok()
        });
        write_file(path, page.as_bytes(), "--html")?;
    }
    outln!("{}", text::render(&made).trim_end())?;
    Ok(if made.failed { Exit::Failed } else { Exit::Ok })
}

/// Writes `bytes` to `path` whole or not at all (a temporary file beside it, renamed).
fn write_file(path: &Path, bytes: &[u8], option: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fail = |e: &dyn std::fmt::Display| {
        anyhow::anyhow!(
            "{option} {}: cannot write: {e} (is the folder there and writable?)",
            path.display()
        )
    };
    let mut file = tempfile::Builder::new()
        .prefix(".report.")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| fail(&e))?;
    file.write_all(bytes).map_err(|e| fail(&e))?;
    file.as_file().sync_all().map_err(|e| fail(&e))?;
    file.persist(path).map_err(|e| fail(&e.error))?;
    Ok(())
}
