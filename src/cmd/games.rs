//! `games`: the built-in games and what they pay, as a table or as one JSON object.

use super::{grouped, Exit};
use anyhow::{Context, Result};
use emission_factory::game::{Game, BUILTIN};
use emission_factory::money::canonical;
use emission_factory::untrusted::{shown_text, SHOWN_CHARS};
use rust_decimal::Decimal;
use serde::Serialize;

/// `games` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory games
  emission-factory games | grep ruche-or
  emission-factory games --json | jq '.games[] | {id, stakes: [.stakes[].payout_percent]}'")]
pub struct GamesArgs {
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
    }
}

pub(super) fn run(args: GamesArgs) -> Result<Exit> {
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
