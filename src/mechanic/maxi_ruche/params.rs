//! The data the Maxi decoder and synthesizer share: the shape of a hive, the cells, and the
//! amounts and bonus table read from the stake's `layout` table. Nothing here decides a prize.

use crate::game::Stake;
use crate::mechanic::util::{amount_list, count_table, known_keys};
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;

/// Number of rows in a hive.
pub const ROWS: usize = 7;

/// Cells per row, top to bottom (SPEC §2.2).
pub const ROW_LEN: [usize; ROWS] = [4, 5, 6, 7, 6, 5, 4];

/// The longest row.
pub const MAX_ROW_LEN: usize = 7;

/// Cells in the bonus stage.
pub const BONUS_CELLS: usize = 12;

/// Most bees the bonus stage may show (SPEC §3).
pub const MAX_BONUS_BEES: usize = 8;

/// A row wins when it holds exactly this many `P`; it may never hold more.
pub const WINNING_P: usize = 3;

/// Most `A` (and most `B`) in a row: three would show the player that the choice mattered.
pub const MAX_OTHER: usize = 2;

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

/// The keys of the `layout` table this mechanic reads; anything else is a typo.
const KEYS: [&str; 3] = ["row_amounts", "bee_amounts", "bonus"];

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
}

impl MaxiParams {
    /// Reads `row_amounts`, `bee_amounts` and `bonus` from the stake's layout table, and
    /// nothing else; the message names the parameter at fault.
    pub fn from_stake(stake: &Stake) -> Result<Self, String> {
        known_keys(&stake.layout, &KEYS, "maxi-ruche")?;
        let rows = amount_list(&stake.layout, "row_amounts")?;
        let bees = amount_list(&stake.layout, "bee_amounts")?;
        // Synthesizer plans store amount indices in a byte.
        for (name, table) in [("row_amounts", &rows), ("bee_amounts", &bees)] {
            if table.len() > usize::from(u8::MAX) {
                return Err(format!(
                    "'{name}' lists {} amounts; at most 255 are supported",
                    table.len()
                ));
            }
        }
        let mut bonus = [Decimal::ZERO; MAX_BONUS_BEES + 1];
        let mut bonus_min = MAX_BONUS_BEES + 1;
        let mut bonus_max = 0;
        for (i, (n, amount)) in count_table(&stake.layout, "bonus", "bees")?
            .into_iter()
            .enumerate()
        {
            let n = n as usize;
            if n == 0 || n > MAX_BONUS_BEES {
                return Err(format!(
                    "bonus[{i}].bees = {n} is out of range: the bonus stage shows 1 to {MAX_BONUS_BEES} bees"
                ));
            }
            bonus[n] = amount.normalize();
            bonus_min = bonus_min.min(n);
            bonus_max = bonus_max.max(n);
        }
        if let Some(n) = (bonus_min..=bonus_max).find(|&n| bonus[n].is_zero()) {
            // A gap would make "more bees" win less than "fewer bees": surely a typo.
            return Err(format!(
                "bonus: {n} bees is not listed although {bonus_min} bees win {} €; list every count from {bonus_min} up",
                canonical(bonus[bonus_min])
            ));
        }
        Ok(MaxiParams {
            rows,
            bees,
            bonus,
            bonus_min,
        })
    }
}
