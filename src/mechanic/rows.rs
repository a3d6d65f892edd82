//! Whole hive rows for the two hive synthesizers (generator 3, SPEC §4): every row of a kind,
//! as its string of cells, in one exact [`Table`], so that writing a row is one weighted draw
//! and a copy of its bytes, with no work per cell and no shuffle.
//!
//! The law of a row is generator 2's: its fixed cells (the three `P` of a winning row, a
//! multiplier, the cells that will hold a honey pot, a bee or an `E`), then, in the cells
//! left free, `p` more `P` drawn with the game's weights, then the `A`/`B` filler of the rest
//! (generator 1's law, [`filler_weights`]), all put in a uniformly random order. A string
//! whose cells are counted `c` (per symbol) has probability
//! `w_p / Σw · f(a, b) / 8^k · Π c! / len!` (`k` filler cells), so its integer weight in the
//! table is `w_p · f(a, b) · 8^p · Π c!`, the common factor `Σw · 8^free · len!` taken out.

use super::draw::{arrangements, Bits, Table};
use super::hive::MAX_OTHER;
use std::collections::BTreeMap;

/// A cell whose symbol is put in after the row is drawn: a honey pot or an `E` (ruche), a
/// bee or an `E` (maxi). Not a cell of any game, so a row left with one would be refused by
/// the decoder.
pub const SLOT: u8 = b'*';

/// The multiplier cell of a Maxi row, replaced by the row's multiplier after the draw.
pub const MULT: u8 = b'^';

/// The `A` and `B` counts of `k` filler cells with their weights out of 8^`k`, as generator
/// 1 drew them: each cell `A` or `B` with chance 3/8 each while fewer than [`MAX_OTHER`] of
/// that symbol are there (three of a kind would show that the choice mattered), else a
/// flower `F`. Exact, by enumeration of the cell draws.
pub fn filler_weights(k: usize) -> BTreeMap<(usize, usize), u64> {
    fn walk(left: usize, a: usize, b: usize, w: u64, out: &mut BTreeMap<(usize, usize), u64>) {
        if left == 0 {
            *out.entry((a, b)).or_default() += w;
            return;
        }
        // Draws 0..=2 say A, 3..=5 say B, 6..=7 say F; a capped symbol becomes F.
        let (na, nb) = if a < MAX_OTHER { (a + 1, b) } else { (a, b) };
        walk(left - 1, na, nb, w * 3, out);
        let (na, nb) = if b < MAX_OTHER { (a, b + 1) } else { (a, b) };
        walk(left - 1, na, nb, w * 3, out);
        walk(left - 1, a, b, w * 2, out);
    }
    let mut out = BTreeMap::new();
    walk(k, 0, 0, 1, &mut out);
    out
}

/// The table of every row of `len` cells (at most 8) holding exactly the `fixed` cells
/// (`(byte, count)`), `p` more `P` with weight `p_weights[p]` (a `p` larger than the free
/// cells is never drawn: fold its weight into a smaller one first), and the filler in the
/// rest; `None` if no row is possible or a weight overflows.
pub fn row_table(len: usize, fixed: &[(u8, usize)], p_weights: &[u64]) -> Option<Table<[u8; 8]>> {
    let fixed_cells: usize = fixed.iter().map(|f| f.1).sum();
    let free = len.checked_sub(fixed_cells)?;
    let mut entries = Vec::new();
    for (p, &wp) in p_weights.iter().enumerate() {
        if wp == 0 || p > free {
            continue;
        }
        let k = free - p;
        for ((a, b), f) in filler_weights(k) {
            let mut counts: BTreeMap<u8, usize> = BTreeMap::new();
            for &(byte, n) in
                fixed
                    .iter()
                    .chain(&[(b'P', p), (b'A', a), (b'B', b), (b'F', k - a - b)])
            {
                *counts.entry(byte).or_default() += n;
            }
            let orders = counts
                .values()
                .try_fold(1u64, |acc, &n| acc.checked_mul(factorial(n)))?;
            let weight = wp
                .checked_mul(f)?
                .checked_mul(8u64.checked_pow(p as u32)?)?
                .checked_mul(orders)?;
            let list: Vec<(u8, usize)> = counts.into_iter().collect();
            for row in arrangements(&list) {
                entries.push((row, weight));
            }
        }
    }
    Table::new(&entries)
}

fn factorial(n: usize) -> u64 {
    (1..=n as u64).product()
}

/// Puts `a.1` bytes `a.0` and `b.1` bytes `b.0` into the [`SLOT`] cells of `cells` (there are
/// exactly `a.1 + b.1`): with both present, in a uniformly random order (each slot in turn
/// takes `b.0` with chance (`b` left) / (slots left)); with one kind only, no draw.
#[inline]
pub fn fill_slots(cells: &mut [u8], a: (u8, usize), b: (u8, usize), bits: &mut Bits) {
    let (mut a_left, mut b_left) = (a.1, b.1);
    for cell in cells.iter_mut().filter(|c| **c == SLOT) {
        let take_b = if a_left == 0 {
            true
        } else if b_left == 0 {
            false
        } else {
            bits.uniform((a_left + b_left) as u64) < b_left as u64
        };
        if take_b {
            *cell = b.0;
            b_left -= 1;
        } else {
            *cell = a.0;
            a_left -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanic::LayoutRng;
    use rand::SeedableRng;

    /// The filler law of generator 1: out of 8^k, capped at two of each symbol.
    #[test]
    fn filler_counts_respect_the_cap_and_add_up() {
        for k in 0..=7 {
            let t = filler_weights(k);
            assert_eq!(t.values().sum::<u64>(), 8u64.pow(k as u32));
            for (a, b) in t.keys() {
                assert!(*a <= MAX_OTHER && *b <= MAX_OTHER && a + b <= k);
            }
        }
        // One cell: A 3/8, B 3/8, F 2/8.
        let one = filler_weights(1);
        assert_eq!((one[&(1, 0)], one[&(0, 1)], one[&(0, 0)]), (3, 3, 2));
    }

    /// The table of a row is the two-stage law of generator 2 exactly: summed over the
    /// strings, each count of `P` has its weight's share, each filler its share given the
    /// `P`, and all the orders of one multiset of cells weigh the same.
    #[test]
    fn row_tables_hold_the_law_of_the_row() {
        let len = 6;
        let p_weights = [25u64, 40, 35];
        let table = row_table(len, &[(SLOT, 1)], &p_weights).unwrap();
        let (columns, total) = table.law();
        // Probability of each string, times 2^k·W (integers).
        let mut mass: BTreeMap<[u8; 8], u128> = BTreeMap::new();
        for (cut, keep, other) in columns {
            *mass.entry(keep).or_default() += u128::from(cut);
            *mass.entry(other).or_default() += u128::from(total - cut);
        }
        let all = u128::from(total) * table.columns() as u128;
        assert_eq!(mass.values().sum::<u128>(), all);
        let count = |row: &[u8; 8], c: u8| row[..len].iter().filter(|&&x| x == c).count();
        // P(p) = w_p / Σw.
        for (p, &wp) in p_weights.iter().enumerate() {
            let got: u128 = mass
                .iter()
                .filter(|(row, _)| count(row, b'P') == p)
                .map(|e| *e.1)
                .sum();
            assert_eq!(got * 100, all * u128::from(wp), "p = {p}");
        }
        // P(a, b | p = 1) = f(a, b) / 8^4, and within one multiset every order alike.
        let f = filler_weights(4);
        let with_one_p: u128 = mass
            .iter()
            .filter(|(row, _)| count(row, b'P') == 1)
            .map(|e| *e.1)
            .sum();
        for (&(a, b), &w) in &f {
            let rows: Vec<u128> = mass
                .iter()
                .filter(|(row, _)| {
                    count(row, b'P') == 1 && count(row, b'A') == a && count(row, b'B') == b
                })
                .map(|e| *e.1)
                .collect();
            assert!(rows.windows(2).all(|x| x[0] == x[1]), "({a}, {b})");
            assert_eq!(rows.iter().sum::<u128>() * 4096, with_one_p * u128::from(w));
            assert!(mass.keys().all(|row| count(row, SLOT) == 1));
        }
        // A winning row: exactly three P, nothing drawn for P.
        let win = row_table(4, &[(b'P', 3)], &[1]).unwrap();
        let (columns, _) = win.law();
        assert!(columns
            .iter()
            .all(|c| count(&c.1, b'P') == 3 && count(&c.2, b'P') == 3));
        assert!(row_table(3, &[(b'P', 3), (SLOT, 1)], &[1]).is_none());
    }

    #[test]
    fn slots_take_both_kinds_in_every_order() {
        let mut rng = LayoutRng::seed_from_u64(2);
        let mut bits = Bits::new(&mut rng);
        let mut seen = BTreeMap::new();
        for _ in 0..30_000 {
            let mut cells = *b"*P*A*";
            fill_slots(&mut cells, (b'H', 2), (b'E', 1), &mut bits);
            *seen.entry(cells).or_insert(0) += 1;
        }
        // Three orders of H, H, E, each about 10 000 times.
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(
            seen.values().all(|&n| (9_400..10_600).contains(&n)),
            "{seen:?}"
        );
        let mut cells = *b"**F";
        fill_slots(&mut cells, (b'Q', 0), (b'E', 2), &mut bits);
        assert_eq!(&cells, b"EEF");
    }
}
