//! Whole hive rows for the two hive synthesizers (generator 3, SPEC §4): every row of a kind,
//! as its string of cells, in a [`RowTable`], so that writing a row is two draws and a copy of
//! its bytes, with no work per cell and no shuffle.
//!
//! The law of a row is generator 2's: its fixed cells (the three `P` of a winning row, a
//! multiplier, the cells that will hold a honey pot, a bee or an `E`), then, in the cells
//! left free, `p` more `P` drawn with the game's weights, then the `A`/`B` filler of the rest
//! (generator 1's law, [`filler_weights`]), all put in a uniformly random order. A string
//! whose cells are counted `c` (per symbol) has probability
//! `w_p / Σw · f(a, b) / 8^k · Π c! / len!` (`k` filler cells): its multiset of cells is drawn
//! with the integer weight `w_p · f(a, b) · 8^p` (the common factor `Σw · 8^free` taken
//! out), then one of the multiset's `len! / Π c!` distinct orders uniformly. Two small draws
//! from tables that stay in the processor's nearest cache: one alias table over every string
//! (tried first) was 1.8 MB and spent most of its time waiting for memory.

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

/// Every row of one kind: the multiset of its cells is drawn from an exact [`Table`], then
/// one of its distinct orders, uniformly, from the list of them all.
#[derive(Debug, Clone)]
pub struct RowTable {
    /// The first of a multiset's strings in `strings` and how many there are, drawn with the
    /// multiset's weight.
    multisets: Table<(u32, u32)>,
    /// The distinct orders of every multiset, each multiset's in increasing byte order.
    strings: Vec<[u8; 8]>,
}

impl RowTable {
    /// One row: its cells in the first bytes. Always inlined, with the table's draw, into
    /// the hive's loop (the bit buffer stays in registers).
    #[inline(always)]
    pub fn draw(&self, bits: &mut Bits) -> [u8; 8] {
        let (first, count) = self.multisets.draw(bits);
        // Every (first, count) of the table lies within `strings`.
        self.strings[first as usize + bits.uniform_index(count as usize)]
    }

    /// Every multiset as its strings and weight, for tests.
    #[cfg(test)]
    pub fn law(&self) -> Vec<(Vec<[u8; 8]>, u128)> {
        let (columns, total) = self.multisets.law();
        let mut mass: BTreeMap<(u32, u32), u128> = BTreeMap::new();
        for (cut, keep, other) in columns {
            *mass.entry(keep).or_default() += u128::from(cut);
            *mass.entry(other).or_default() += u128::from(total - cut);
        }
        mass.into_iter()
            .map(|((first, count), m)| {
                let range = first as usize..(first + count) as usize;
                (self.strings[range].to_vec(), m)
            })
            .collect()
    }
}

/// The table of every row of `len` cells (at most 8) holding exactly the `fixed` cells
/// (`(byte, count)`), `p` more `P` with weight `p_weights[p]` (a `p` larger than the free
/// cells is never drawn: fold its weight into a smaller one first), and the filler in the
/// rest; `None` if no row is possible or a weight overflows. A multiset of cells with `p`
/// drawn `P` and filler `(a, b)` weighs `p_weights[p] · f(a, b) · 8^p` (its probability
/// times `Σw · 8^free`); its strings are equally likely.
pub fn row_table(len: usize, fixed: &[(u8, usize)], p_weights: &[u64]) -> Option<RowTable> {
    let fixed_cells: usize = fixed.iter().map(|f| f.1).sum();
    let free = len.checked_sub(fixed_cells)?;
    let mut entries = Vec::new();
    let mut strings = Vec::new();
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
            let weight = wp
                .checked_mul(f)?
                .checked_mul(8u64.checked_pow(p as u32)?)?;
            let list: Vec<(u8, usize)> = counts.into_iter().collect();
            let orders = arrangements(&list);
            let first = u32::try_from(strings.len()).ok()?;
            let count = u32::try_from(orders.len()).ok()?;
            strings.extend(orders);
            entries.push(((first, count), weight));
        }
    }
    Some(RowTable {
        multisets: Table::new(&entries)?,
        strings,
    })
}

/// Longest amount text a hive synthesizer writes, with the byte after it (`:` or `#`).
pub const MAX_TEXT: usize = 16;

/// An amount's text and the byte after it (`12.5:`), padded so that it is copied whole.
#[derive(Debug, Clone, Copy)]
pub struct Text {
    bytes: [u8; MAX_TEXT],
    len: usize,
}

impl Text {
    /// `text` followed by `end`; an error if they do not fit [`MAX_TEXT`] bytes (an amount of
    /// SPEC §6.1 has at most 13: `1000000000.00`).
    pub fn new(text: &str, end: u8) -> Result<Text, super::BuildError> {
        let len = text.len() + 1;
        if len > MAX_TEXT {
            return Err(super::Unshowable::HiveAmountTooLong {
                amount: super::Quoted::new(text),
            }
            .into());
        }
        let mut bytes = [0u8; MAX_TEXT];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        bytes[text.len()] = end;
        Ok(Text { bytes, len })
    }
}

/// One hive being written, on the stack: amounts and rows are copied as whole 16- and
/// 8-byte blocks (no call per piece), and the hive goes to the output in one copy.
pub struct HiveText {
    buf: [u8; 256],
    at: usize,
}

impl Default for HiveText {
    fn default() -> Self {
        Self::new()
    }
}

impl HiveText {
    /// Nothing written yet.
    #[inline]
    pub fn new() -> Self {
        HiveText {
            buf: [0; 256],
            at: 0,
        }
    }

    /// Writes one byte.
    #[inline]
    pub fn byte(&mut self, b: u8) {
        self.buf[self.at] = b;
        self.at += 1;
    }

    /// Writes an amount and its end byte.
    #[inline]
    pub fn text(&mut self, t: &Text) {
        // A hive is at most a top amount and 7 rows of 1 + 16 + 7 bytes: well within 256.
        self.buf[self.at..self.at + MAX_TEXT].copy_from_slice(&t.bytes);
        self.at += t.len;
    }

    /// Writes the first `len` cells of a row.
    #[inline]
    pub fn cells(&mut self, cells: &[u8; 8], len: usize) {
        self.buf[self.at..self.at + 8].copy_from_slice(cells);
        self.at += len;
    }

    /// Appends what was written to `out`.
    #[inline]
    pub fn flush(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.buf[..self.at]);
    }
}

#[cfg(test)]
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
    /// multisets, each count of `P` has its weight's share, each filler its share given the
    /// `P`; a multiset's strings are all its distinct orders, once each.
    #[test]
    fn row_tables_hold_the_law_of_the_row() {
        let len = 6;
        let p_weights = [25u64, 40, 35];
        let law = row_table(len, &[(SLOT, 1)], &p_weights).unwrap().law();
        let all: u128 = law.iter().map(|e| e.1).sum();
        let count = |row: &[u8; 8], c: u8| row[..len].iter().filter(|&&x| x == c).count();
        for (strings, _) in &law {
            let row = &strings[0];
            let mut cells: Vec<(u8, usize)> = [SLOT, b'P', b'A', b'B', b'F']
                .iter()
                .map(|&c| (c, count(row, c)))
                .collect();
            cells.retain(|c| c.1 > 0);
            assert_eq!(strings, &arrangements(&cells));
            let orders = factorial(len) / cells.iter().map(|c| factorial(c.1)).product::<u64>();
            assert_eq!(strings.len() as u64, orders);
            assert_eq!(count(row, SLOT), 1);
        }
        // P(p) = w_p / Σw.
        let p_of = |e: &(Vec<[u8; 8]>, u128)| count(&e.0[0], b'P');
        for (p, &wp) in p_weights.iter().enumerate() {
            let got: u128 = law.iter().filter(|e| p_of(e) == p).map(|e| e.1).sum();
            assert_eq!(got * 100, all * u128::from(wp), "p = {p}");
        }
        // P(a, b | p = 1) = f(a, b) / 8^4.
        let with_one_p: u128 = law.iter().filter(|e| p_of(e) == 1).map(|e| e.1).sum();
        for (&(a, b), &w) in &filler_weights(4) {
            let got: u128 = law
                .iter()
                .filter(|e| p_of(e) == 1 && count(&e.0[0], b'A') == a && count(&e.0[0], b'B') == b)
                .map(|e| e.1)
                .sum();
            assert_eq!(got * 4096, with_one_p * u128::from(w), "({a}, {b})");
        }
        // A winning row: exactly three P, nothing drawn for P.
        let win = row_table(4, &[(b'P', 3)], &[1]).unwrap().law();
        assert!(win
            .iter()
            .all(|e| e.0.iter().all(|row| count(row, b'P') == 3)));
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
