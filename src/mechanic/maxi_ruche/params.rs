//! The settings of Maxi Ruche d'or as a game definition writes them, and their checked form
//! with the cells of the game: the only thing the decoder and the synthesizer share. The hive
//! itself is [`crate::mechanic::hive`]. Nothing here decides a prize.

use crate::mechanic::hive::MAX_HIVE_AMOUNTS;
use crate::mechanic::util::{amount_list, count_table, near_miss_rate, near_miss_weights};
use crate::mechanic::SettingError;
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;
use serde::Deserialize;

// Synthesizer plans store amount indices in a byte.
const _: () = assert!(MAX_HIVE_AMOUNTS <= u8::MAX as usize);

/// Cells in the bonus stage.
pub const BONUS_CELLS: usize = 12;

/// Most bees the bonus stage may show (SPEC §3).
pub const MAX_BONUS_BEES: usize = 8;

/// Multiplier cells and their factors, in increasing order (`X` is ×10, rules 4.6).
pub const MULTIPLIERS: [(u8, u32); 6] = [
    (b'2', 2),
    (b'3', 3),
    (b'4', 4),
    (b'5', 5),
    (b'6', 6),
    (b'X', 10),
];

/// The index in [`MULTIPLIERS`] of a multiplier cell, or `None` for any other byte.
#[inline]
pub fn multiplier_index(cell: u8) -> Option<usize> {
    match cell {
        b'2'..=b'6' => Some(usize::from(cell - b'2')),
        b'X' => Some(5),
        _ => None,
    }
}

/// One `layout` table of a `maxi-ruche` game, as written; a stake's overrides the game's key
/// by key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaxiSettings {
    /// Amounts a row of a hive may show (4.2, 4.5), as canonical strings.
    pub row_amounts: Option<Vec<String>>,
    /// Amounts a hive may show at its top, paid by a bee in that hive (4.7).
    pub bee_amounts: Option<Vec<String>>,
    /// The bonus-stage table (4.9).
    pub bonus: Option<Vec<BonusEntry>>,
    /// How often losing parts look like near misses (`[stakes.layout.near_miss]`).
    pub near_miss: Option<NearMissSettings>,
}

/// `near_miss` of a `maxi-ruche` game, as written: the chances of the cosmetic choices that
/// shape what does not win, on winners and losers alike. Each key is optional; a stake's
/// overrides the game's key by key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NearMissSettings {
    /// Chance that the main hive holds an `E` (and an EXTRA hive follows), 0 to 1.
    pub extra_rate: Option<f64>,
    /// Chance that a row that does not win shows a multiplier, 0 to 1.
    pub row_multiplier_rate: Option<f64>,
    /// Weights of 0, 1, 2 `P` on a row that does not win (two is the near miss).
    pub row_p_weights: Option<Vec<i64>>,
    /// Weight of the bonus stage among the ways to show a prize it pays.
    pub bonus_weight: Option<i64>,
}

impl NearMissSettings {
    fn overlay(&self, stake: NearMissSettings) -> NearMissSettings {
        NearMissSettings {
            extra_rate: stake.extra_rate.or(self.extra_rate),
            row_multiplier_rate: stake.row_multiplier_rate.or(self.row_multiplier_rate),
            row_p_weights: stake.row_p_weights.or_else(|| self.row_p_weights.clone()),
            bonus_weight: stake.bonus_weight.or(self.bonus_weight),
        }
    }
}

/// The checked `near_miss` settings of one stake.
#[derive(Debug, Clone, PartialEq)]
pub struct NearMiss {
    /// Chance of an EXTRA hive.
    pub extra_rate: f64,
    /// Chance of a multiplier on a row that does not win.
    pub row_multiplier_rate: f64,
    /// Weights of 0, 1, 2 `P` on a row that does not win.
    pub row_p_weights: [u32; 3],
    /// Weight of the bonus stage among the forms of a prize it pays (0: never the bonus).
    pub bonus_weight: u32,
}

impl Default for NearMiss {
    /// The values of generator 1, written out in `games/maxi-ruche-or.toml`.
    fn default() -> Self {
        NearMiss {
            extra_rate: 0.2,
            row_multiplier_rate: 0.12,
            row_p_weights: [20, 35, 45],
            bonus_weight: 3,
        }
    }
}

impl NearMiss {
    /// Checks the settings; unset keys keep the defaults.
    pub fn check(settings: Option<NearMissSettings>) -> Result<Self, SettingError> {
        let s = settings.unwrap_or_default();
        let d = NearMiss::default();
        let bonus_weight = match s.bonus_weight {
            None => d.bonus_weight,
            Some(w) => u32::try_from(w)
                .ok()
                .filter(|&w| i64::from(w) <= crate::mechanic::util::MAX_WEIGHT)
                .ok_or_else(|| {
                    SettingError::rule(
                        "near_miss.bonus_weight",
                        format!(
                            "near_miss.bonus_weight = {w} is out of range: a weight is a whole number from 0 to {}",
                            crate::mechanic::util::MAX_WEIGHT
                        ),
                    )
                })?,
        };
        Ok(NearMiss {
            extra_rate: near_miss_rate("extra_rate", s.extra_rate, d.extra_rate)?,
            row_multiplier_rate: near_miss_rate(
                "row_multiplier_rate",
                s.row_multiplier_rate,
                d.row_multiplier_rate,
            )?,
            row_p_weights: near_miss_weights(
                "row_p_weights",
                s.row_p_weights.as_deref(),
                d.row_p_weights,
                "0, 1, 2 P",
            )?,
            bonus_weight,
        })
    }

    /// The rates asked, by feature name (as the report names them): the share of non-winning
    /// rows with two `P`, of non-winning rows with a multiplier, of tickets with an EXTRA hive.
    pub fn rates(&self) -> Vec<(&'static str, f64)> {
        let w = &self.row_p_weights;
        let two_p = f64::from(w[2]) / w.iter().map(|&w| f64::from(w)).sum::<f64>();
        vec![
            ("near_miss_rows", two_p),
            ("near_miss_multiplier", self.row_multiplier_rate),
            ("near_miss_extra", self.extra_rate),
        ]
    }
}

/// `{ bees = N, amount = "X" }`: `N` bees in the bonus stage win `X`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BonusEntry {
    /// Bees found in the bonus stage.
    pub bees: u32,
    /// What they win, as a canonical string.
    pub amount: String,
}

impl MaxiSettings {
    /// These settings with `stake`'s on top.
    pub fn overlay(&self, stake: MaxiSettings) -> MaxiSettings {
        MaxiSettings {
            row_amounts: stake.row_amounts.or_else(|| self.row_amounts.clone()),
            bee_amounts: stake.bee_amounts.or_else(|| self.bee_amounts.clone()),
            bonus: stake.bonus.or_else(|| self.bonus.clone()),
            near_miss: match (&self.near_miss, stake.near_miss) {
                (Some(game), Some(stake)) => Some(game.overlay(stake)),
                (game, stake) => stake.or_else(|| game.clone()),
            },
        }
    }
}

/// The amounts a Maxi layout may show and the bonus table, for one stake.
#[derive(Debug, Clone)]
pub struct MaxiParams {
    /// Amounts a row may show (`row_amounts`).
    pub rows: AmountTable,
    /// Amounts a hive may show at its top, won by a bee (`bee_amounts`).
    pub bees: AmountTable,
    /// Bonus win by number of bees (index 0..=8); zero where the table lists nothing.
    pub bonus: [Decimal; MAX_BONUS_BEES + 1],
    /// The fewest bees that win something in the bonus stage (`MAX_BONUS_BEES + 1` if none do).
    pub bonus_min: usize,
    /// The chances that shape what does not win (the decoder does not read them).
    pub near_miss: NearMiss,
}

impl MaxiParams {
    /// Checks `row_amounts`, `bee_amounts`, `bonus` and `near_miss`; the message names the key at fault.
    pub fn check(settings: MaxiSettings) -> Result<Self, SettingError> {
        let rows = amount_list(
            "row_amounts",
            settings.row_amounts.as_deref(),
            MAX_HIVE_AMOUNTS,
        )?;
        let bees = amount_list(
            "bee_amounts",
            settings.bee_amounts.as_deref(),
            MAX_HIVE_AMOUNTS,
        )?;
        let mut bonus = [Decimal::ZERO; MAX_BONUS_BEES + 1];
        let mut bonus_min = MAX_BONUS_BEES + 1;
        let mut bonus_max = 0;
        let entries: Option<Vec<(u32, String)>> = settings
            .bonus
            .map(|b| b.into_iter().map(|e| (e.bees, e.amount)).collect());
        let table = count_table("bonus", "bees", entries.as_deref(), MAX_BONUS_BEES)?;
        for (i, (n, amount)) in table.into_iter().enumerate() {
            let n = n as usize;
            if n == 0 || n > MAX_BONUS_BEES {
                return Err(SettingError::rule(
                    format!("bonus[{i}].bees"),
                    format!(
                        "bonus[{i}].bees = {n} is out of range: the bonus stage shows 1 to {MAX_BONUS_BEES} bees"
                    ),
                ));
            }
            bonus[n] = amount.normalize();
            bonus_min = bonus_min.min(n);
            bonus_max = bonus_max.max(n);
        }
        if let Some(n) = (bonus_min..=bonus_max).find(|&n| bonus[n].is_zero()) {
            // A gap would make "more bees" win less than "fewer bees": surely a typo.
            return Err(SettingError::invalid(
                "bonus",
                format!(
                    "{n} bees is not listed although {bonus_min} bees win {} €; list every count from {bonus_min} up",
                    canonical(bonus[bonus_min])
                ),
            ));
        }
        let near_miss = NearMiss::check(settings.near_miss)?;
        Ok(MaxiParams {
            rows,
            bees,
            bonus,
            bonus_min,
            near_miss,
        })
    }
}
