//! The settings of La ruche d'or as a game definition writes them, and their checked form:
//! the only thing the decoder and the synthesizer share.

use crate::mechanic::hive::CELLS;
use crate::mechanic::util::{amount_list, count_table};
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;
use serde::Deserialize;

/// Most `E` in the main hive (SPEC 2.1), hence most EXTRA hives.
pub const MAX_EXTRA: usize = 3;

/// One `layout` table of a `ruche` game, as written; a stake's overrides the game's key by key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RucheSettings {
    /// Amounts a row may show (4.4), as canonical strings.
    pub row_amounts: Option<Vec<String>>,
    /// The honey table (4.5).
    pub honey: Option<Vec<HoneyEntry>>,
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
}

impl RucheSettings {
    /// These settings with `stake`'s on top.
    pub fn overlay(&self, stake: RucheSettings) -> RucheSettings {
        RucheSettings {
            row_amounts: stake.row_amounts.or_else(|| self.row_amounts.clone()),
            honey: stake.honey.or_else(|| self.honey.clone()),
        }
    }
}

impl RucheParams {
    /// Checks `row_amounts` and `honey`; the message names the key at fault.
    pub fn check(settings: RucheSettings) -> Result<Self, String> {
        let rows = amount_list("row_amounts", settings.row_amounts.as_deref())?;
        let table = count_table(
            "honey",
            "pots",
            settings
                .honey
                .map(|h| h.into_iter().map(|e| (e.pots, e.amount))),
        )?;
        let mut max_honey = 0;
        for &(pots, amount) in &table {
            if pots == 0 || pots as usize > CELLS {
                return Err(format!(
                    "honey: pots = {pots} is impossible in a hive of {CELLS} cells"
                ));
            }
            if amount.is_zero() {
                return Err(format!("honey: {pots} pots win {}", canonical(amount)));
            }
            max_honey = max_honey.max(pots as usize);
        }
        if table.is_empty() {
            return Err("honey: the table is empty".into());
        }
        let mut honey = vec![None; max_honey + 1];
        for (pots, amount) in table {
            honey[pots as usize] = Some(amount);
        }
        Ok(RucheParams {
            rows,
            honey,
            max_honey,
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
