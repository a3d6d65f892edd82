//! The settings of La ruche d'or as a game definition writes them, and their checked form:
//! the only thing the decoder and the synthesizer share.

use crate::mechanic::hive::MAX_HIVE_AMOUNTS;
use crate::mechanic::util::{amount_list, count_table, near_miss_weights};
use crate::mechanic::SettingError;
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;
use serde::Deserialize;

/// Most `E` in the main hive (SPEC 2.1), hence most EXTRA hives.
pub const MAX_EXTRA: usize = 3;

/// Most honey pots a hive holds (SPEC §3): the honey table lists counts from 1 to this, so it
/// has at most this many entries.
pub const MAX_HONEY_POTS: usize = 10;

/// One `layout` table of a `ruche` game, as written; a stake's overrides the game's key by key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RucheSettings {
    /// Amounts a row may show (4.4), as canonical strings.
    pub row_amounts: Option<Vec<String>>,
    /// The honey table (4.5).
    pub honey: Option<Vec<HoneyEntry>>,
    /// How often losing parts look like near misses (`[layout.near_miss]`).
    pub near_miss: Option<NearMissSettings>,
}

/// `[layout.near_miss]` of a `ruche` game, as written: weights of the cosmetic choices that
/// shape what does not win, on winners and losers alike. Each key is optional; a stake's
/// overrides the game's key by key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NearMissSettings {
    /// Weights of 0, 1, 2 `P` on a row that does not win (two is the near miss).
    pub row_p_weights: Option<Vec<i64>>,
    /// Weights of 0, 1, 2, 3 honey pots in a hive that wins no honey (three is the near miss
    /// when four win).
    pub loose_pots_weights: Option<Vec<i64>>,
    /// Weights of 0, 1, 2, 3 EXTRA hives on a ticket.
    pub extra_weights: Option<Vec<i64>>,
    /// Weights of showing a prize with 1, 2, 3 winning parts (rows, honey).
    pub part_weights: Option<Vec<i64>>,
}

impl NearMissSettings {
    fn overlay(&self, stake: NearMissSettings) -> NearMissSettings {
        NearMissSettings {
            row_p_weights: stake.row_p_weights.or_else(|| self.row_p_weights.clone()),
            loose_pots_weights: stake
                .loose_pots_weights
                .or_else(|| self.loose_pots_weights.clone()),
            extra_weights: stake.extra_weights.or_else(|| self.extra_weights.clone()),
            part_weights: stake.part_weights.or_else(|| self.part_weights.clone()),
        }
    }
}

/// The checked `near_miss` weights of one stake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// Weights of 0, 1, 2 `P` on a row that does not win.
    pub row_p_weights: [u32; 3],
    /// Weights of 0 to 3 honey pots in a hive that wins no honey.
    pub loose_pots_weights: [u32; 4],
    /// Weights of 0 to 3 EXTRA hives.
    pub extra_weights: [u32; MAX_EXTRA + 1],
    /// Weights of 1, 2, 3 winning parts.
    pub part_weights: [u32; 3],
}

impl Default for NearMiss {
    /// The values of generator 1, written out in `games/ruche-or.toml`.
    fn default() -> Self {
        NearMiss {
            row_p_weights: [25, 40, 35],
            loose_pots_weights: [30, 30, 24, 16],
            extra_weights: [84, 11, 4, 1],
            part_weights: [55, 32, 13],
        }
    }
}

impl NearMiss {
    /// Checks the settings; unset keys keep the defaults.
    pub fn check(settings: Option<NearMissSettings>) -> Result<Self, SettingError> {
        let s = settings.unwrap_or_default();
        let d = NearMiss::default();
        Ok(NearMiss {
            row_p_weights: near_miss_weights(
                "row_p_weights",
                s.row_p_weights.as_deref(),
                d.row_p_weights,
                "0, 1, 2 P",
            )?,
            loose_pots_weights: near_miss_weights(
                "loose_pots_weights",
                s.loose_pots_weights.as_deref(),
                d.loose_pots_weights,
                "0, 1, 2, 3 pots",
            )?,
            extra_weights: near_miss_weights(
                "extra_weights",
                s.extra_weights.as_deref(),
                d.extra_weights,
                "0, 1, 2, 3 EXTRA hives",
            )?,
            part_weights: near_miss_weights(
                "part_weights",
                s.part_weights.as_deref(),
                d.part_weights,
                "1, 2, 3 parts",
            )?,
        })
    }

    /// The rates asked, by feature name (as the report names them): the share of non-winning
    /// rows with two `P`, of hives without honey win with three pots, of tickets with an EXTRA
    /// hive.
    pub fn rates(&self) -> Vec<(&'static str, f64)> {
        let share =
            |w: &[u32], i: usize| f64::from(w[i]) / w.iter().map(|&w| f64::from(w)).sum::<f64>();
        vec![
            ("near_miss_rows", share(&self.row_p_weights, 2)),
            ("near_miss_honey", share(&self.loose_pots_weights, 3)),
            (
                "near_miss_extra",
                f64::from(self.extra_weights[1..].iter().sum::<u32>())
                    / f64::from(self.extra_weights.iter().sum::<u32>()),
            ),
        ]
    }
}

/// `{ pots = N, amount = "X" }`: `N` honey pots in one hive win `X`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoneyEntry {
    /// Honey pots in one hive.
    pub pots: u32,
    /// What they win, as a canonical string.
    pub amount: String,
}

/// The checked layout parameters of one stake.
#[derive(Debug, Clone)]
pub struct RucheParams {
    /// Amounts a row may show.
    pub rows: AmountTable,
    /// Honey table (4.5): `honey[n]` is the win for exactly `n` pots in one hive, if any.
    pub honey: Vec<Option<Decimal>>,
    /// Most honey pots a hive may hold: the highest count of the table.
    pub max_honey: usize,
    /// The weights that shape what does not win (the decoder does not read them).
    pub near_miss: NearMiss,
}

impl RucheSettings {
    /// These settings with `stake`'s on top.
    pub fn overlay(&self, stake: RucheSettings) -> RucheSettings {
        RucheSettings {
            row_amounts: stake.row_amounts.or_else(|| self.row_amounts.clone()),
            honey: stake.honey.or_else(|| self.honey.clone()),
            near_miss: match (&self.near_miss, stake.near_miss) {
                (Some(game), Some(stake)) => Some(game.overlay(stake)),
                (game, stake) => stake.or_else(|| game.clone()),
            },
        }
    }
}

impl RucheParams {
    /// Checks `row_amounts`, `honey` and `near_miss`; the message names the key at fault.
    pub fn check(settings: RucheSettings) -> Result<Self, SettingError> {
        let rows = amount_list(
            "row_amounts",
            settings.row_amounts.as_deref(),
            MAX_HIVE_AMOUNTS,
        )?;
        let honey: Option<Vec<(u32, String)>> = settings
            .honey
            .map(|h| h.into_iter().map(|e| (e.pots, e.amount)).collect());
        let table = count_table("honey", "pots", honey.as_deref(), MAX_HONEY_POTS)?;
        let mut max_honey = 0;
        for &(pots, amount) in &table {
            if pots == 0 || pots as usize > MAX_HONEY_POTS {
                return Err(SettingError::invalid(
                    "honey",
                    format!(
                        "pots = {pots} is impossible: a hive holds at most {MAX_HONEY_POTS} honey pots (SPEC §3); list counts from 1 to {MAX_HONEY_POTS}"
                    ),
                ));
            }
            if amount.is_zero() {
                return Err(SettingError::invalid(
                    "honey",
                    format!("{pots} pots win {}", canonical(amount)),
                ));
            }
            max_honey = max_honey.max(pots as usize);
        }
        if table.is_empty() {
            return Err(SettingError::invalid("honey", "the table is empty"));
        }
        let mut honey = vec![None; max_honey + 1];
        for (pots, amount) in table {
            honey[pots as usize] = Some(amount);
        }
        let near_miss = NearMiss::check(settings.near_miss)?;
        Ok(RucheParams {
            rows,
            honey,
            max_honey,
            near_miss,
        })
    }

    /// The win for `pots` honey pots in one hive (zero below the table).
    pub fn honey_win(&self, pots: usize) -> Decimal {
        self.honey
            .get(pots)
            .copied()
            .flatten()
            .unwrap_or(Decimal::ZERO)
    }

    /// The smallest number of pots that wins.
    pub fn min_winning_pots(&self) -> usize {
        self.honey.iter().position(Option::is_some).unwrap_or(0)
    }
}
