//! `report`: the auditor's report on blocks (text on standard output, `--json`, `--html`).

use super::output::Target;
use super::{pool, progress_bar, Exit, ReportArgs};
use anyhow::{bail, Context, Result};
use emission_factory::game::Game;
use emission_factory::report::{html, report, text, ReportOptions};
use emission_factory::untrusted::shown_path;
use emission_factory::verify::find_blocks;

pub(super) fn run(args: ReportArgs) -> Result<Exit> {
    // Refused before the long work, not after it.
    if let Some(json) = &args.json {
        json.check(args.force, "--json")?;
    }
    if let Some(html) = &args.html {
        html.check(args.force, "--html")?;
    }
    let to_stdout = [&args.json, &args.html]
        .iter()
        .filter(|t| **t == &Some(Target::Stdout))
        .count();
    if to_stdout > 1 {
        bail!("--json - and --html - both ask for standard output: give a file to one of them");
    }
    if let (Some(Target::File(a)), Some(Target::File(b))) = (&args.json, &args.html) {
        if same_place(a, b) {
            bail!(
                "--json and --html name the same file {}: give two files",
                a.display()
            );
        }
    }
    let options = super::trusted(args.public_key.as_deref(), args.game.as_deref())?;
    let settings = ReportOptions {
        public: args.public,
        samples: args.samples,
    };
    let made = match super::verify::pack_of(&args.paths)? {
        Some(pack) => {
            // A pack, read as it streams (its CSVs never on disk).
            if args.identity.is_empty() {
                bail!("{} is an emission pack: give --identity KEY (an age identity of one of its recipients) to report on it", shown_path(&pack));
            }
            let read = emission_factory::custody::read_identity_files(
                &args.identity,
                super::emit::exposure(args.allow_insecure_key),
            )?;
            super::emit::warn_exposed(&read.exposed);
            let bar = progress_bar(args.quiet, "report", None);
            let pool = pool(args.threads)?;
            let made = emission_factory::pack::report::report_pack(
                &pack,
                &read.identities,
                &options,
                &settings,
                &bar,
                &pool,
            )?;
            bar.finish_and_clear();
            made
        }
        None => {
            if !args.identity.is_empty() {
                bail!("--identity opens an emission pack: give the pack (or leave --identity out for blocks and folders)");
            }
            let blocks = find_blocks(&args.paths)?;
            if blocks.is_empty() {
                bail!("no block file (block-NNNNN.csv) found in the paths given");
            }
            let bar = progress_bar(args.quiet, "report", None);
            let pool = pool(args.threads)?;
            let made = pool.install(|| report(&blocks, &options, &settings, &bar))?;
            bar.finish_and_clear();
            made
        }
    };
    if let Some(path) = &args.json {
        let mut json = serde_json::to_vec_pretty(&made).context("the JSON report")?;
        json.push(b'\n');
        path.write(&json, args.force, "--json")?;
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
                let emission = b.id()?.emission();
                // The definition given, or the one kept in the block's folder (checked
                // against the manifest's SHA-256, as verify reads it), or the built-in game.
                let kept = || {
                    let sha256 = &b.identity.as_ref()?.game_definition_sha256;
                    emission_factory::verify::folder_definition(
                        emission_factory::verify::folder_of(&b.path),
                        sha256,
                    )
                    .ok()
                    .flatten()
                };
                let game = match &options.game {
                    Some(g) => g.clone(),
                    None => match kept() {
                        Some(g) => g,
                        None => Game::builtin(emission.game()).ok()?,
                    },
                };
                let stake = game
                    .stake(emission_factory::money::from_cents(emission.stake_cents()))
                    .ok()?
                    .clone();
                Some(((b.game().to_string(), b.stake().to_string()), (game, stake)))
            })
            .collect();
        let page = html::render(&made, &|block, layout| {
            let (game, stake) =
                games.get(&(block.game().to_string(), block.stake().to_string()))?;
            emission_factory::picture::ticket_svg(game, stake, layout).ok()
        });
        path.write(page.as_bytes(), args.force, "--html")?;
    }
    // Standard output holds one document: the text report, unless JSON or HTML went there.
    if to_stdout == 0 {
        outln!("{}", text::render(&made).trim_end())?;
    }
    Ok(if made.failed { Exit::Failed } else { Exit::Ok })
}

/// True if `a` and `b` name the same place: the same name in the same folder, however the
/// folders are spelt (`out.json`, `./out.json`, `dir/../out.json`, through a link to a folder).
/// Compared as written, `--json X --html ./X --force` wrote the JSON and then replaced it with
/// the page.
fn same_place(a: &std::path::Path, b: &std::path::Path) -> bool {
    let place = |p: &std::path::Path| {
        let folder = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        (
            folder.canonicalize().ok(),
            p.file_name().map(|n| n.to_owned()),
        )
    };
    match (place(a), place(b)) {
        ((Some(fa), na), (Some(fb), nb)) => fa == fb && na == nb,
        _ => a == b,
    }
}
