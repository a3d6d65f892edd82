//! The data La ruche d'or layouts are made of, read from the game definition.

use crate::game::Stake;
use crate::mechanic::util::{amount_list, count_table, known_keys};
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;

/// Cells per row of a hive, top to bottom (Article 4.1: 7 rows, 37 cells).
pub const ROW_LENGTHS: [usize; 7] = [4, 5, 6, 7, 6, 5, 4];
/// Number of `P` that make a winning row (4.4).
pub const ROW_WIN: usize = 3;
/// Most `A` (or `B`) a row may hold: three would show that the player's choice mattered.
pub const MAX_OTHER: usize = 2;
/// Most `E` in the main hive (SPEC 2.1), hence most EXTRA hives.
pub const MAX_EXTRA: usize = 3;

/// The keys of the `layout` table this mechanic reads; anything else is a typo.
const KEYS: [&str; 2] = ["row_amounts", "honey"];

/// The layout parameters of one stake.
#[derive(Debug, Clone)]
pub struct RucheParams {
    /// Amounts a row may show.
    pub rows: AmountTable,
    /// Honey table (4.5): `honey[n]` is the win for exactly `n` pots in one hive, if any.
    pub honey: Vec<Option<Decimal>>,
    /// Most honey pots a hive may hold: the highest count of the table.
    pub max_honey: usize,
}

impl RucheParams {
    /// Reads `row_amounts` and `honey` from the stake's layout table, and nothing else.
    pub fn from_stake(stake: &Stake) -> Result<Self, String> {
        known_keys(&stake.layout, &KEYS, "ruche")?;
        let rows = amount_list(&stake.layout, "row_amounts")?;
        let table = count_table(&stake.layout, "honey", "pots")?;
        let cells: usize = ROW_LENGTHS.iter().sum();
        let mut max_honey = 0;
        for &(pots, amount) in &table {
            if pots == 0 || pots as usize > cells {
                return Err(format!(
                    "honey: pots = {pots} is impossible in a hive of {cells} cells"
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
