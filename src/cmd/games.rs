//! `games`: the built-in games and what they pay.

use super::{grouped, Exit};
use anyhow::Result;
use emission_factory::game::{Game, BUILTIN};
use emission_factory::money::canonical;
use emission_factory::untrusted::{shown_text, SHOWN_CHARS};
use rust_decimal::Decimal;

pub(super) fn run() -> Result<Exit> {
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
    for (id, _) in BUILTIN {
        let game = Game::builtin(id)?;
        for stake in &game.stakes {
            let payout = stake.payout_ratio(game.block_size) * Decimal::ONE_HUNDRED;
            let odds = Decimal::from(game.block_size) / Decimal::from(stake.winners);
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
