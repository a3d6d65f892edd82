//! The drawing tools the synthesizers share (cosmetic randomness only: the prize is decided
//! before, by the ChaCha20 shuffle).
//!
//! A layout is made of many small choices (a row amount out of ten, two `P` or not, where a
//! honey pot goes). Taking one 64-bit generator step per choice, as generator 1 did, spent
//! most of the synthesis time in the generator; [`Bits`] hands out a 64-bit draw a few bits
//! at a time instead.
//!
//! Generator 3 (SPEC §4) draws with [`Bits::uniform`] (Lemire's
//! multiply-shift: exact, and a draw is refused with a chance below n/2³², so almost never) and
//! with [`Table`], an exact alias table whose number of columns is a power of two (so the
//! column is plain bits) and whose columns that keep their value whole draw nothing more: one
//! weighted choice is `k` bits and, for a split column, one exact uniform compare. A hive row
//! is one such choice among every whole row ([`arrangements`] lists them); a calendar month
//! that does not win, one among every (two pictures, amount).
//!
//! Every synthesizer (the hive games and the calendar) draws with these primitives and no
//! others: one shape for every game.
//!
//! Written by hand rather than with `rand::distr::weighted::WeightedAliasIndex`: that one
//! works in floating point (not exact) and draws one generator step per choice.

use super::LayoutRng;
use rand::RngCore;
use rust_decimal::Decimal;

/// Random bits taken from one 64-bit draw at a time.
pub struct Bits<'a> {
    rng: &'a mut LayoutRng,
    word: u64,
    left: u32,
}

impl<'a> Bits<'a> {
    /// Bits from `rng`, nothing buffered yet.
    pub fn new(rng: &'a mut LayoutRng) -> Self {
        Bits {
            rng,
            word: 0,
            left: 0,
        }
    }

    /// True with the probability of `rate`.
    #[inline]
    pub fn chance(&mut self, rate: Rate) -> bool {
        self.bits(32) < rate.0
    }
}

/// A probability in units of 2⁻³², from 0 to 2³² (certain): [`Bits::chance`] is then exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate(u64);

impl Rate {
    /// The rate nearest `p` (0 ≤ `p` ≤ 1, checked by the caller; out-of-range values clamp).
    pub fn new(p: f64) -> Self {
        Rate((p.clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64)
    }

    /// Units of 2⁻³².
    pub fn units(self) -> u64 {
        self.0
    }
}

/// One step of Lemire's multiply-shift method on a `W`-bit draw `x` (1 ≤ `W` ≤ 64, `x` <
/// 2^`W`, 1 ≤ `n` ≤ 2^`W`): `x·n / 2^W`, or `None` (draw again) when the low `W` bits of
/// `x·n` are below 2^`W` mod `n`. Of the 2^`W` draws, exactly ⌊2^`W`/`n`⌋ give each result
/// and 2^`W` mod `n` are refused, so the result is exactly uniform in `0..n`
/// (<https://arxiv.org/abs/1805.10941>). The remainder is only computed when the low bits are
/// below `n`, which is rare. `W` is a constant so that the synthesizers' 32- and 64-bit draws
/// compile to one multiplication and a compare, and the tests check this very code on 10 bits.
#[inline(always)]
pub fn lemire<const W: u32>(x: u64, n: u64) -> Option<u64> {
    debug_assert!((1..=64).contains(&W) && n >= 1);
    let m = u128::from(x) * u128::from(n);
    let low = m & ((1u128 << W) - 1);
    if low < u128::from(n) {
        // (2^W - n) mod n in 64 bits ((2^W - 1) - (n - 1): no overflow for 1 ≤ n ≤ 2^W):
        // a 128-bit remainder is a library call of dozens of instructions.
        let refused = ((u64::MAX >> (64 - W)) - (n - 1)) % n;
        if low < u128::from(refused) {
            return None;
        }
    }
    // m < 2^W · n ≤ 2^(2W), so the high part fits in W ≤ 64 bits.
    Some((m >> W) as u64)
}

impl Bits<'_> {
    /// `k` (0 to 63) uniform bits, the low bits of the buffered word first. When fewer than
    /// `k` are left, the rest are dropped and a new 64-bit output of the generator is taken:
    /// each bit is used at most once, so draws stay independent.
    #[inline(always)]
    pub fn bits(&mut self, k: u32) -> u64 {
        debug_assert!(k < 64);
        if self.left < k {
            self.word = self.rng.next_u64();
            self.left = 64;
        }
        let v = self.word & ((1u64 << k) - 1);
        self.word >>= k;
        self.left -= k;
        v
    }

    /// 64 uniform bits: [`Bits::bits`]'s rule for `k` = 64 (the buffered word if it is whole,
    /// else the next output, the rest dropped).
    #[inline(always)]
    pub fn bits64(&mut self) -> u64 {
        let v = if self.left == 64 {
            self.word
        } else {
            self.rng.next_u64()
        };
        self.word = 0;
        self.left = 0;
        v
    }

    /// A number exactly uniform in `0..n` (`n` ≥ 1): [`lemire`] on 32 bits when `n` ≤ 2³²,
    /// else on 64 bits, drawn again while refused.
    #[inline(always)]
    pub fn uniform(&mut self, n: u64) -> u64 {
        debug_assert!(n >= 1);
        if n <= 1 << 32 {
            loop {
                if let Some(v) = lemire::<32>(self.bits(32), n) {
                    return v;
                }
            }
        }
        loop {
            if let Some(v) = lemire::<64>(self.bits64(), n) {
                return v;
            }
        }
    }

    /// [`Bits::uniform`] for indexes (`n` ≥ 1).
    #[inline]
    pub fn uniform_index(&mut self, n: usize) -> usize {
        // Indexes here are at most a few thousand: the casts are exact both ways.
        self.uniform(n as u64) as usize
    }

    /// An index drawn with the given weights (not all zero, adding up to at most 2⁶³): one
    /// [`Bits::uniform`] draw below their sum, then the first index whose running sum exceeds
    /// it. For the few small lists whose weights are only known per ticket.
    #[inline]
    pub fn pick(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut x = self.uniform(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < u64::from(w) {
                return i;
            }
            x -= u64::from(w);
        }
        weights.len() - 1
    }
}

/// An exact alias table (Walker, Vose) with a power-of-two number of columns: one weighted
/// choice is `k` bits for the column, then, only if the column is split, one exact uniform
/// draw below the total weight `W` compared with the column's cut.
///
/// Built from `n` values of positive integer weight adding up to `W`: the table has
/// `2^k` ≥ `n` columns (the extra ones weigh 0); column `i` stands for weight `W` out of
/// `2^k·W`, kept for its own value up to `cut[i]` and given to its alias above. Vose's
/// construction in integers (`2^k·w` against `W`) makes every value's probability exactly
/// `w / W`. A column whose cut is 0 or `W` holds one value: it is stored as certain and
/// draws no cut.
#[derive(Debug, Clone)]
pub struct Table<T> {
    columns: Vec<Column<T>>,
    /// log₂ of the number of columns.
    k: u32,
    /// `W`, the sum of the weights.
    total: u64,
    /// 2^32 mod `W` if `W` ≤ 2³², else 2^64 mod `W`: [`lemire`]'s refusal bound for the cut
    /// draw, computed once so that a draw never divides.
    refused: u64,
}

/// One column of a [`Table`].
#[derive(Debug, Clone, Copy)]
struct Column<T> {
    /// The value is `keep` when a uniform draw below `W` is below `cut`, else `other`;
    /// `cut == W`: always `keep` (no draw).
    cut: u64,
    keep: T,
    other: T,
}

impl<T: Copy> Table<T> {
    /// The table of `(value, weight)` (zero weights are left out); `None` if every weight is
    /// zero, there are more than 2³¹ values, or the weights add up to 2⁶³ or more.
    pub fn new(entries: &[(T, u64)]) -> Option<Self> {
        let entries: Vec<(T, u64)> = entries.iter().copied().filter(|e| e.1 > 0).collect();
        let first = entries.first()?.0;
        if entries.len() > 1 << 31 {
            return None;
        }
        let total = entries
            .iter()
            .try_fold(0u64, |s, e| s.checked_add(e.1))
            .filter(|&t| t < 1 << 63)?;
        let n = entries.len().next_power_of_two();
        let k = n.trailing_zeros();
        // Column i holds 2^k·w_i out of 2^k·W; each column is filled to W.
        let full = u128::from(total);
        let mut scaled: Vec<u128> = (0..n)
            .map(|i| entries.get(i).map_or(0, |e| u128::from(e.1) * n as u128))
            .collect();
        let value = |i: usize| entries.get(i).map_or(first, |e| e.0);
        let mut cut = vec![total; n];
        let mut alias: Vec<usize> = (0..n).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < full);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            // scaled[s] < full < 2^63.
            cut[s] = scaled[s] as u64;
            alias[s] = l;
            scaled[l] -= full - scaled[s];
            if scaled[l] < full {
                large.pop();
                small.push(l);
            }
        }
        // What is left is exactly full (integer arithmetic): those columns keep their value.
        let columns = (0..n)
            .map(|i| {
                let (keep, other) = (value(i), value(alias[i]));
                match cut[i] {
                    0 => Column {
                        cut: total,
                        keep: other,
                        other,
                    },
                    c if c == total => Column {
                        cut: total,
                        keep,
                        other: keep,
                    },
                    c => Column {
                        cut: c,
                        keep,
                        other,
                    },
                }
            })
            .collect();
        let refused = if total <= 1 << 32 {
            ((1u64 << 32) - total) % total
        } else {
            total.wrapping_neg() % total
        };
        Some(Table {
            columns,
            k,
            total,
            refused,
        })
    }

    /// One value.
    #[inline(always)]
    pub fn draw(&self, bits: &mut Bits) -> T {
        // The column is below 2^k = columns.len() (k ≤ 31).
        let c = &self.columns[bits.bits(self.k) as usize];
        if c.cut == self.total || self.cut_draw(bits) < c.cut {
            c.keep
        } else {
            c.other
        }
    }

    /// A uniform draw below `W`: exactly [`Bits::uniform`] (the same bits, the same result),
    /// with the refusal bound computed once.
    #[inline(always)]
    fn cut_draw(&self, bits: &mut Bits) -> u64 {
        let n = self.total;
        if n <= 1 << 32 {
            loop {
                let m = bits.bits(32) * n;
                if m & 0xffff_ffff >= self.refused {
                    return m >> 32;
                }
            }
        }
        loop {
            let m = u128::from(bits.bits64()) * u128::from(n);
            if m as u64 >= self.refused {
                return (m >> 64) as u64;
            }
        }
    }

    /// Number of columns (a power of two).
    #[cfg(test)]
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// Every column as (cut, kept value, other value), and the total `W`: the exact law of
    /// the table, for tests.
    #[cfg(test)]
    pub fn law(&self) -> (Vec<(u64, T, T)>, u64) {
        (
            self.columns
                .iter()
                .map(|c| (c.cut, c.keep, c.other))
                .collect(),
            self.total,
        )
    }
}

/// Every distinct order of a multiset of bytes given as `(byte, count)` pairs (at most 8 bytes
/// in all), in increasing order of the byte strings: each as the first bytes of an `[u8; 8]`.
pub fn arrangements(counts: &[(u8, usize)]) -> Vec<[u8; 8]> {
    let mut counts: Vec<(u8, usize)> = counts.iter().copied().filter(|c| c.1 > 0).collect();
    counts.sort_unstable();
    let len: usize = counts.iter().map(|c| c.1).sum();
    assert!(len <= 8, "rows hold at most 8 cells");
    fn walk(
        at: usize,
        len: usize,
        counts: &mut [(u8, usize)],
        current: &mut [u8; 8],
        out: &mut Vec<[u8; 8]>,
    ) {
        if at == len {
            out.push(*current);
            return;
        }
        for i in 0..counts.len() {
            if counts[i].1 > 0 {
                counts[i].1 -= 1;
                current[at] = counts[i].0;
                walk(at + 1, len, counts, current, out);
                counts[i].1 += 1;
            }
        }
    }
    let mut out = Vec::new();
    walk(0, len, &mut counts, &mut [0u8; 8], &mut out);
    out
}

/// The prizes of a stake's table, found by their whole cents: a synthesizer's plan for a
/// prize is found with a binary search over a few integers instead of comparing decimals.
#[derive(Debug, Clone)]
pub struct PrizeIndex {
    /// (cents, index in the table the index was built from), sorted by cents.
    cents: Vec<(u64, usize)>,
}

impl PrizeIndex {
    /// The index of `prizes` (amounts of whole cents; others are never found).
    pub fn new(prizes: &[Decimal]) -> Self {
        let mut cents: Vec<(u64, usize)> = prizes
            .iter()
            .enumerate()
            .filter_map(|(i, &p)| Some((whole_cents(p)?, i)))
            .collect();
        cents.sort_unstable();
        PrizeIndex { cents }
    }

    /// The index in the table of `prize`, if it is there.
    #[inline]
    pub fn find(&self, prize: Decimal) -> Option<usize> {
        let c = whole_cents(prize)?;
        let at = self.cents.binary_search_by_key(&c, |e| e.0).ok()?;
        Some(self.cents[at].1)
    }
}

/// `amount` in whole cents, read from its mantissa and scale (no decimal arithmetic on the
/// usual scales 0 to 2); `None` if it is negative, not whole cents, or too large.
#[inline]
fn whole_cents(amount: Decimal) -> Option<u64> {
    let m = u64::try_from(amount.mantissa()).ok()?;
    match amount.scale() {
        0 => m.checked_mul(100),
        1 => m.checked_mul(10),
        2 => Some(m),
        _ => crate::money::cents(amount),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A chance reads 32 bits: rate 0 never, rate 1 always, and otherwise exactly when those
    /// bits are below the rate's units.
    #[test]
    fn chances_compare_32_bits_with_the_rate() {
        let mut a = LayoutRng::seed_from_u64(9);
        let mut b = LayoutRng::seed_from_u64(9);
        let (mut bits, mut raw) = (Bits::new(&mut a), Bits::new(&mut b));
        let rate = Rate::new(0.375);
        assert_eq!(rate.units(), 3 << 29);
        for _ in 0..1000 {
            assert_eq!(bits.chance(rate), raw.bits(32) < 3 << 29);
            assert!(!bits.chance(Rate::new(0.0)));
            assert!(bits.chance(Rate::new(1.0)));
            raw.bits(32);
            raw.bits(32);
        }
    }

    /// Lemire's step, exhaustively on 10-bit draws: every result in `0..n` comes from
    /// exactly ⌊2¹⁰/n⌋ draws and 2¹⁰ mod n draws are refused, for every n from 1 to 2¹⁰.
    #[test]
    fn lemire_is_exact_on_every_small_draw() {
        const W: u32 = 10;
        for n in 1..=1u64 << W {
            let mut seen = vec![0u32; n as usize];
            let mut refused = 0;
            for x in 0..1u64 << W {
                match lemire::<W>(x, n) {
                    Some(v) => seen[v as usize] += 1,
                    None => refused += 1,
                }
            }
            let each = ((1u64 << W) / n) as u32;
            assert!(seen.iter().all(|&c| c == each), "n = {n}: {seen:?}");
            assert_eq!(refused, (1u64 << W) % n, "n = {n}");
        }
        // The widths the synthesizers use: extremes stay in range.
        for n in [1u64, 7, 5040, 1 << 32] {
            for x in [0, 1, u64::from(u32::MAX) / 2, u64::from(u32::MAX)] {
                assert!(lemire::<32>(x, n).is_none_or(|v| v < n), "n {n} x {x}");
            }
        }
        for n in [(1u64 << 32) + 1, 7 << 60, u64::MAX] {
            for x in [0, 1, u64::MAX / 2, u64::MAX] {
                assert!(lemire::<64>(x, n).is_none_or(|v| v < n), "n {n} x {x}");
            }
        }
    }

    /// Uniform draws in use (32 and 64 bits): a chi-square over 10⁶ draws stays below the
    /// 99.9 % point of its law, and every draw is in range.
    #[test]
    fn uniform_draws_pass_a_chi_square() {
        let mut rng = LayoutRng::seed_from_u64(11);
        let mut bits = Bits::new(&mut rng);
        // 37 cells; 5040 orders; a 64-bit bound that is 7 · 2^60.
        for (n, scale, critical) in [
            (37u64, 1u64, 69.35), // chi-square, 36 degrees of freedom, 99.9 %
            (5040, 1, 5450.0),    // 5039 degrees of freedom: mean + 4 sd
            (7, 1 << 60, 24.32),  // 6 degrees of freedom, 99.9 %
        ] {
            let draws = 1_000_000u64;
            let mut seen = vec![0u64; n as usize];
            for _ in 0..draws {
                let v = bits.uniform(n * scale);
                assert!(v < n * scale);
                seen[(v / scale) as usize] += 1;
            }
            let expected = draws as f64 / n as f64;
            let chi: f64 = seen
                .iter()
                .map(|&c| (c as f64 - expected).powi(2) / expected)
                .sum();
            assert!(chi < critical, "n {n} × {scale}: chi-square {chi}");
        }
    }

    /// Bits come from the low end of each 64-bit output and a short remainder is dropped.
    #[test]
    fn bits_are_taken_in_order_from_each_word() {
        let mut a = LayoutRng::seed_from_u64(5);
        let words: Vec<u64> = (0..3).map(|_| a.next_u64()).collect();
        let mut rng = LayoutRng::seed_from_u64(5);
        let mut bits = Bits::new(&mut rng);
        assert_eq!(bits.bits(0), 0);
        assert_eq!(bits.bits(13), words[0] & 0x1fff);
        assert_eq!(bits.bits(32), (words[0] >> 13) & 0xffff_ffff);
        // 19 bits are left: a 32-bit draw takes the next word.
        assert_eq!(bits.bits(32), words[1] & 0xffff_ffff);
        // 32 left: 64 bits take the next word whole.
        assert_eq!(bits.bits64(), words[2]);
    }

    /// The padded tables give every value exactly its weight: summed over the columns, the
    /// kept and alias shares of each value are 2^k·w out of 2^k·W (integers, no rounding);
    /// certain columns draw nothing; the number of columns is the next power of two.
    #[test]
    fn padded_tables_give_exactly_the_weights() {
        for weights in [
            vec![25u64, 40, 35],
            vec![84, 11, 4, 1],
            vec![1],
            vec![0, 7, 0, 1],
            vec![5, 5, 5, 5],
            vec![1 << 40, 3, 5, 9, 1 << 50],
            (1..=37).collect(),
        ] {
            let entries: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
            let table = Table::new(&entries).unwrap();
            let positive = weights.iter().filter(|&&w| w > 0).count();
            assert_eq!(table.columns(), positive.next_power_of_two());
            let (columns, total) = table.law();
            assert_eq!(total, weights.iter().sum::<u64>());
            let mut got = vec![0u128; weights.len()];
            for (cut, keep, other) in columns {
                assert!(cut <= total);
                if cut == total {
                    assert_eq!(keep, other, "a certain column holds one value");
                }
                got[keep] += u128::from(cut);
                got[other] += u128::from(total - cut);
            }
            let n = table.columns() as u128;
            for (i, &w) in weights.iter().enumerate() {
                assert_eq!(got[i], u128::from(w) * n, "{weights:?}");
            }
        }
        assert!(Table::<usize>::new(&[(0, 0), (1, 0)]).is_none());
        assert!(Table::<usize>::new(&[]).is_none());
        assert!(Table::new(&[(0, 1u64 << 62), (1, 1 << 62)]).is_none());
    }

    /// The draw follows the law exhaustively: for a small table, every column and every cut
    /// value below W (W = 12) taken once gives each value exactly 2^k·w times.
    #[test]
    fn padded_table_draws_are_exact_over_every_column_and_cut() {
        let weights = [5u64, 4, 0, 2, 1];
        let entries: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
        let table = Table::new(&entries).unwrap();
        let (columns, total) = table.law();
        assert_eq!(total, 12);
        let mut got = [0u64; 5];
        for (cut, keep, other) in &columns {
            for u in 0..total {
                // What `draw` does once the column is read and the cut draw is `u`.
                let v = if *cut == total || u < *cut {
                    *keep
                } else {
                    *other
                };
                got[v] += 1;
            }
        }
        let n = columns.len() as u64;
        assert_eq!(got, weights.map(|w| w * n));
    }

    /// Equal weights on a power of two are one certain column each: a draw is `k` bits, the
    /// column's own value, and nothing more is read.
    #[test]
    fn equal_weights_on_a_power_of_two_draw_only_the_column() {
        let table = Table::new(&[(0u8, 5), (1, 5), (2, 5), (3, 5)]).unwrap();
        let (columns, total) = table.law();
        assert!(columns.iter().all(|c| c.0 == total && c.1 == c.2));
        let mut a = LayoutRng::seed_from_u64(21);
        let mut b = LayoutRng::seed_from_u64(21);
        let (mut bits, mut raw) = (Bits::new(&mut a), Bits::new(&mut b));
        for _ in 0..1000 {
            let column = raw.bits(2) as usize;
            assert_eq!(table.draw(&mut bits), columns[column].1);
        }
    }

    /// A table's cut draw is `Bits::uniform` below its total, bit for bit.
    #[test]
    fn cut_draws_are_uniform_draws() {
        for total in [1u64, 3, 100, 1 << 32, (1 << 32) + 1, 3_000_000_000, 7 << 58] {
            let table = Table::new(&[(0u8, total)]).unwrap();
            let mut a = LayoutRng::seed_from_u64(total);
            let mut b = LayoutRng::seed_from_u64(total);
            let (mut x, mut y) = (Bits::new(&mut a), Bits::new(&mut b));
            for _ in 0..10_000 {
                assert_eq!(table.cut_draw(&mut x), y.uniform(total), "{total}");
            }
        }
    }

    /// Drawn 10⁶ times, a padded table's counts pass a chi-square against its weights.
    #[test]
    fn padded_table_draws_pass_a_chi_square() {
        let weights = [84u64, 11, 4, 1, 30, 70];
        let entries: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
        let table = Table::new(&entries).unwrap();
        let mut rng = LayoutRng::seed_from_u64(17);
        let mut bits = Bits::new(&mut rng);
        let draws = 1_000_000u32;
        let mut seen = [0u32; 6];
        for _ in 0..draws {
            seen[table.draw(&mut bits)] += 1;
        }
        let total: u64 = weights.iter().sum();
        let chi: f64 = seen
            .iter()
            .zip(weights)
            .map(|(&c, w)| {
                let e = f64::from(draws) * w as f64 / total as f64;
                (f64::from(c) - e).powi(2) / e
            })
            .sum();
        // 5 degrees of freedom, 99.9 %: 20.52.
        assert!(chi < 20.52, "{seen:?}: chi-square {chi}");
    }

    #[test]
    fn arrangements_are_every_distinct_order_once() {
        let all = arrangements(&[(b'P', 2), (b'A', 1), (b'F', 0), (b'B', 2)]);
        // 5! / (2! 1! 2!) = 30, sorted and distinct.
        assert_eq!(all.len(), 30);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert!(all.iter().all(|a| {
            let row = &a[..5];
            row.iter().filter(|&&c| c == b'P').count() == 2
                && row.iter().filter(|&&c| c == b'B').count() == 2
                && a[5..] == [0, 0, 0]
        }));
        assert_eq!(arrangements(&[]), vec![[0u8; 8]]);
        assert_eq!(arrangements(&[(b'F', 7)]).len(), 1);
    }

    #[test]
    fn pick_follows_the_weights() {
        let mut rng = LayoutRng::seed_from_u64(23);
        let mut bits = Bits::new(&mut rng);
        let mut seen = [0u32; 4];
        for _ in 0..100_000 {
            seen[bits.pick(&[55, 0, 32, 13])] += 1;
        }
        assert_eq!(seen[1], 0);
        // Within 5 standard deviations of 55 000, 32 000, 13 000.
        for (got, want) in [(seen[0], 55_000), (seen[2], 32_000), (seen[3], 13_000)] {
            assert!((i64::from(got) - want).abs() < 800, "{seen:?}");
        }
    }

    #[test]
    fn prizes_are_found_by_their_cents() {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        let index = PrizeIndex::new(&[d("2"), d("0.5"), d("1000000"), d("12.34")]);
        assert_eq!(index.find(d("2")), Some(0));
        assert_eq!(index.find(d("2.00")), Some(0));
        assert_eq!(index.find(d("2.0000")), Some(0));
        assert_eq!(index.find(d("0.50")), Some(1));
        assert_eq!(index.find(d("1000000")), Some(2));
        assert_eq!(index.find(d("12.34")), Some(3));
        assert_eq!(index.find(d("12.345")), None);
        assert_eq!(index.find(d("-2")), None);
        assert_eq!(index.find(d("3")), None);
        assert_eq!(index.find(Decimal::ZERO), None);
    }
}
