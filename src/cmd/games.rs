//! `games`: the built-in games and what they pay, as a table or as one JSON object; with
//! `--game`, the designer's preview of one definition ([`emission_factory::game::preview`]).

use super::{grouped, Exit};
use anyhow::{Context, Result};
use emission_factory::game::preview::{preview, PreviewError, StakePreview, PREVIEW_SAMPLES};
use emission_factory::game::{Game, BUILTIN};
use emission_factory::mechanic::BuildError;
use emission_factory::money::canonical;
use emission_factory::untrusted::{shown_text, SHOWN_CHARS};
use rust_decimal::Decimal;
use serde::Serialize;

/// `games` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory games
  emission-factory games | grep ruche-or
  emission-factory games --json | jq '.games[] | {id, stakes: [.stakes[].payout_percent]}'
  emission-factory games --game my-game.toml
  emission-factory games --game my-game.toml --json | jq '.games[0].preview[].prizes[].forms'")]
pub struct GamesArgs {
    /// Preview one definition (a built-in id or a .toml file) as emit would load it: its
    /// stakes, prize table, payout, odds, hit frequency, near-miss rates, and the forms its
    /// layouts show each prize with. An invalid definition gets emit's error.
    #[arg(long, value_name = "GAME")]
    pub game: Option<String>,
    /// Print one JSON object instead of the table (docs/FORMAT.md, "games --json").
    #[arg(long)]
    pub json: bool,
    /// No heading line above the table (for scripts reading its columns).
    #[arg(long, short, conflicts_with = "json")]
    pub quiet: bool,
}

/// `games --json`: the format's version, raised on any change of a key's name or meaning.
pub const GAMES_FORMAT: u32 = 1;

#[derive(Serialize)]
struct Listing {
    games_format: u32,
    games: Vec<GameRow>,
}

#[derive(Serialize)]
struct GameRow {
    id: String,
    name: String,
    mechanic: String,
    block_size: u64,
    definition_sha256: String,
    stakes: Vec<StakeRow>,
    /// With `--game`: the jurisdiction profile the definition names.
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<String>,
    /// With `--game`: the preview of every stake, in the order of `stakes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<Vec<StakePreview>>,
    /// With `--game`: layouts synthesized per prize for the forms.
    #[serde(skip_serializing_if = "Option::is_none")]
    preview_samples: Option<u32>,
}

#[derive(Serialize)]
struct StakeRow {
    price: String,
    winners: u64,
    total_prizes: String,
    payout_percent: String,
    odds_one_in: String,
    prizes: Vec<PrizeRow>,
}

#[derive(Serialize)]
struct PrizeRow {
    amount: String,
    count: u64,
}

/// A game's rows: every stake with its payout (total of prizes over the block's stakes, in %)
/// and its odds (one winner in block / winners).
fn rows(game: &Game) -> GameRow {
    GameRow {
        id: game.id.clone(),
        name: game.name.clone(),
        mechanic: game.mechanic.clone(),
        block_size: game.block_size,
        definition_sha256: hex::encode(game.sha256),
        stakes: game
            .stakes
            .iter()
            .map(|stake| StakeRow {
                price: canonical(stake.price),
                winners: stake.winners,
                total_prizes: canonical(stake.total),
                payout_percent: canonical(
                    (stake.payout_ratio(game.block_size) * Decimal::ONE_HUNDRED).round_dp(2),
                ),
                odds_one_in: canonical(
                    (Decimal::from(game.block_size) / Decimal::from(stake.winners.max(1)))
                        .round_dp(2),
                ),
                prizes: stake
                    .prizes
                    .iter()
                    .map(|p| PrizeRow {
                        amount: canonical(p.amount),
                        count: p.count,
                    })
                    .collect(),
            })
            .collect(),
        profile: None,
        preview: None,
        preview_samples: None,
    }
}

pub(super) fn run(args: GamesArgs) -> Result<Exit> {
    if let Some(which) = &args.game {
        return run_preview(which, &args);
    }
    let games = BUILTIN
        .iter()
        .map(|(id, _)| Game::builtin(id))
        .collect::<Result<Vec<_>, _>>()?;
    if args.json {
        let listing = Listing {
            games_format: GAMES_FORMAT,
            games: games.iter().map(rows).collect(),
        };
        let text = serde_json::to_string_pretty(&listing).context("cannot write the JSON")?;
        outln!("{text}")?;
        return Ok(Exit::Ok);
    }
    if !args.quiet {
        outln!(
            "{:<14} {:<26} {:>6} {:>10} {:>10} {:>7} {:>11}",
            "id",
            "name",
            "stake",
            "block",
            "winners",
            "payout",
            "odds"
        )?;
    }
    for game in &games {
        for stake in &game.stakes {
            let payout = stake.payout_ratio(game.block_size) * Decimal::ONE_HUNDRED;
            let odds = Decimal::from(game.block_size) / Decimal::from(stake.winners.max(1));
            outln!(
                "{:<14} {:<26} {:>6} {:>10} {:>10} {:>6}% {:>11}",
                game.id,
                shown_text(&game.name, SHOWN_CHARS),
                format!("{} €", canonical(stake.price)),
                grouped(game.block_size),
                grouped(stake.winners),
                format!("{}", payout.round_dp(1)),
                format!("1 in {}", odds.round_dp(2)),
            )?;
        }
    }
    Ok(Exit::Ok)
}

/// `games --game GAME`: one definition's preview, loaded and checked as `emit` loads it.
fn run_preview(which: &str, args: &GamesArgs) -> Result<Exit> {
    let game = Game::resolve(which)?;
    let stakes = preview(&game).map_err(|e| match e {
        // A signal: the binary exits as a shell expects (143...), as emit does.
        PreviewError::Build {
            cause: BuildError::Interrupted(signal),
            ..
        } => anyhow::Error::new(signal),
        e => e.into(),
    })?;
    if args.json {
        let mut row = rows(&game);
        row.profile = game.profile.as_ref().map(|p| p.id.clone());
        row.preview = Some(stakes);
        row.preview_samples = Some(PREVIEW_SAMPLES);
        let listing = Listing {
            games_format: GAMES_FORMAT,
            games: vec![row],
        };
        let text = serde_json::to_string_pretty(&listing).context("cannot write the JSON")?;
        outln!("{text}")?;
        return Ok(Exit::Ok);
    }
    outln!("{}", preview_text(&game, &stakes, args.quiet))?;
    Ok(Exit::Ok)
}

/// The preview as text: a heading for the game, then per stake its figures and its table,
/// each prize followed by its forms.
fn preview_text(game: &Game, stakes: &[StakePreview], quiet: bool) -> String {
    let mut out = String::new();
    let line = |out: &mut String, text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    if !quiet {
        line(
            &mut out,
            format!(
                "{} ({}), mechanic {}, blocks of {} tickets",
                shown_text(&game.name, SHOWN_CHARS),
                game.id,
                game.mechanic,
                grouped(game.block_size)
            ),
        );
        line(
            &mut out,
            format!(
                "definition {} (SHA-256 {})",
                shown_text(&game.source, SHOWN_CHARS),
                hex::encode(game.sha256)
            ),
        );
        match &game.profile {
            Some(p) => line(
                &mut out,
                format!(
                    "profile {}: payout {} % to {} % ({})",
                    p.id,
                    emission_factory::game::profile::percent(p.payout_min),
                    emission_factory::game::profile::percent(p.payout_max),
                    shown_text(&p.source, SHOWN_CHARS)
                ),
            ),
            None => line(
                &mut out,
                "no profile: only the 100 % bound on payout is checked".into(),
            ),
        }
        line(
            &mut out,
            format!("forms: of {PREVIEW_SAMPLES} layouts synthesized per prize (fixed seeds)"),
        );
    }
    for s in stakes {
        line(&mut out, String::new());
        line(
            &mut out,
            format!(
                "stake {} €: payout {} % ({} € of prizes per block), {} winners (hit frequency {} %, odds 1 in {}), {} losers",
                s.price,
                s.payout_percent,
                s.total_prizes,
                grouped(s.winners),
                s.hit_frequency_percent,
                s.odds_one_in,
                grouped(s.losers)
            ),
        );
        if !s.near_miss_rates.is_empty() {
            let rates: Vec<String> = s
                .near_miss_rates
                .iter()
                .map(|(name, rate)| format!("{name} {:.1} %", rate * 100.0))
                .collect();
            line(
                &mut out,
                format!(
                    "  near misses asked (shares of parts, winners and losers alike): {}",
                    rates.join(", ")
                ),
            );
        }
        line(
            &mut out,
            format!(
                "  {:>10} {:>10} {:>15} {:>8}  forms",
                "prize", "count", "odds", "share"
            ),
        );
        for p in &s.prizes {
            line(
                &mut out,
                format!(
                    "  {:>10} {:>10} {:>15} {:>7}%",
                    format!("{} €", p.amount),
                    grouped(p.count),
                    format!("1 in {}", p.odds_one_in),
                    p.payout_share_percent
                ),
            );
            for f in &p.forms {
                let splits: Vec<String> = f
                    .splits
                    .iter()
                    .map(|sp| {
                        let sum: Vec<String> =
                            sp.amounts.iter().map(|a| format!("{a} €")).collect();
                        format!("{} ({})", sum.join(" + "), sp.samples)
                    })
                    .collect();
                let mut text = format!(
                    "      {:>5}%  {}: {}",
                    f.percent,
                    shown_text(&f.form, SHOWN_CHARS),
                    splits.join(", ")
                );
                if f.other_splits > 0 {
                    text.push_str(&format!(", other splits ({})", f.other_splits));
                }
                line(&mut out, text);
                let example: Vec<String> = f
                    .example
                    .iter()
                    .map(|w| shown_text(w, SHOWN_CHARS))
                    .collect();
                line(
                    &mut out,
                    format!("              e.g. {}", example.join("; ")),
                );
            }
        }
    }
    out.pop();
    out
}
