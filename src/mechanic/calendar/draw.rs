//! The drawing tools of calendar generator 3 (SPEC §4): cosmetic randomness only, the prize is
//! decided before by the ChaCha20 shuffle.
//!
//! Generator 2's tools ([`crate::mechanic::draw`]) refused up to half of their draws: a uniform
//! choice among `n` read ⌈log₂ n⌉ bits and drew again while they read `n` or more, and an alias
//! draw took two such choices. Here:
//! - the generator's 64-bit outputs form one stream of bits, none dropped ([`Bits`]);
//! - a uniform choice among `n` is Lemire's multiply-shift on 32 bits ([`Bits::below`]): exact,
//!   and drawn again only when the low half of the product falls below `2³² mod n` (for the
//!   small `n` here, about once in a hundred million draws);
//! - a weighted choice is one read of `k + 32` bits from an alias table of `2ᵏ` columns
//!   ([`Alias`]): `k` bits pick the column, 32 bits are compared with its cut. The weights are
//!   rounded to units of `2^-(k+32)` when the table is built (largest remainders, so every
//!   probability is within one unit of the weight asked), and the table gives exactly those.
//!
//! Written by hand rather than with `rand`'s `WeightedAliasIndex` (floating point, one
//! generator step per choice) or `Rng::random_range` (one generator step per choice): the
//! layout is a few hundred bits, drawn a few at a time.
//!
//! Kept apart from [`crate::mechanic::draw`] so that the hive synthesizers' generator can change
//! alone; the two may be folded together once both are settled.

use crate::mechanic::draw::Rate;
use crate::mechanic::LayoutRng;
use rand::RngCore;

/// The generator's outputs as one stream of bits: output after output, each from its least
/// significant bit. A read of `k` bits takes the next `k` of the stream, the first as the least
/// significant bit of the value. No bit is read twice and none is skipped.
pub struct Bits<'a> {
    rng: &'a mut LayoutRng,
    /// The bits not read yet, the next one lowest; `left` of them.
    buffer: u128,
    left: u32,
}

impl<'a> Bits<'a> {
    /// Bits from `rng`, nothing buffered yet.
    pub fn new(rng: &'a mut LayoutRng) -> Self {
        Bits {
            rng,
            buffer: 0,
            left: 0,
        }
    }

    /// The next `k` bits (1 to 64) of the stream.
    #[inline]
    pub fn read(&mut self, k: u32) -> u64 {
        debug_assert!((1..=64).contains(&k));
        if self.left < k {
            // left < k ≤ 64: the new output fits above the bits still buffered.
            self.buffer |= u128::from(self.rng.next_u64()) << self.left;
            self.left += 64;
        }
        let v = (self.buffer as u64) & (u64::MAX >> (64 - k));
        self.buffer >>= k;
        self.left -= k;
        v
    }

    /// A number uniform in `0..n` (1 ≤ `n` ≤ 2³²), exactly (Lemire's method): `x` = the next 32
    /// bits, `m = x·n`; while the low 32 bits of `m` are below `2³² mod n`, `x` is read again;
    /// the number is `m >> 32`.
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n >= 1);
        let n = u64::from(n);
        let mut m = self.read(32) * n;
        if (m as u32 as u64) < n {
            // Only now is the threshold worth a division: 2³² mod n.
            let threshold = (1u64 << 32) % n;
            while (m as u32 as u64) < threshold {
                m = self.read(32) * n;
            }
        }
        (m >> 32) as u32
    }

    /// [`Bits::below`] for an index into a list of `n` (1 to 2³²) entries.
    #[inline]
    pub fn index(&mut self, n: usize) -> usize {
        // Lists here hold at most a few thousand entries: both casts are exact.
        debug_assert!(n >= 1 && n as u64 <= 1 << 32);
        self.below(n as u32) as usize
    }

    /// True with the probability of `rate`: the next 32 bits read below its units.
    #[inline]
    pub fn chance(&mut self, rate: Rate) -> bool {
        self.read(32) < rate.units()
    }
}

/// An index drawn with the given weights (not all zero, adding up to at most 2³²): `x` uniform
/// below their sum ([`Bits::below`]), then the first index whose running sum exceeds `x`.
#[inline]
pub fn weighted(bits: &mut Bits, weights: &[u32], total: u32) -> usize {
    let mut x = bits.below(total);
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

/// One column of an [`Alias`] table.
#[derive(Debug, Clone, Copy)]
struct Column<T> {
    /// The column gives `keep` when the 32 bits read are below `cut`, else `alias`.
    cut: u32,
    keep: T,
    alias: T,
}

/// An alias table (Walker, Vose) of `2ᵏ` columns, each of capacity 2³²: one draw reads `k + 32`
/// bits, the low `k` for the column and the high 32 for the cut. See [`Alias::new`] for how the
/// weights are rounded and the columns filled (SPEC §4 describes the same steps).
#[derive(Debug, Clone)]
pub struct Alias<T> {
    columns: Vec<Column<T>>,
    k: u32,
}

impl<T: Copy> Alias<T> {
    /// The table of `(value, weight)`; `None` if every weight is zero, or there are more than
    /// 2²⁰ entries of positive weight.
    ///
    /// 1. The entries of weight 0 are dropped; `n` are left, of total weight `W`; `k` is the
    ///    least number with `2ᵏ ≥ n`, and `Q = 2^(k+32)`.
    /// 2. Entry `i` gets `qᵢ = ⌊wᵢ·Q / W⌋` units; the `Q − Σqᵢ` (fewer than `n`) units left go
    ///    one each to the entries with the largest remainders `wᵢ·Q mod W`, the first in the
    ///    list among equal ones.
    /// 3. Column `i < n` starts with `qᵢ`, the `2ᵏ − n` others with 0. `small` lists the columns
    ///    below 2³² and `large` the others, each in increasing order. While both hold some:
    ///    `s` = the last of `small`, taken off; `l` = the last of `large`; column `s` keeps its
    ///    own entry below `cut = q_s` and gives `l`'s entry above; `q_l −= 2³² − q_s`, and if
    ///    `q_l` is now below 2³², `l` moves from the end of `large` to the end of `small`.
    ///    Columns left (exactly 2³²) always give their own entry.
    pub fn new(entries: &[(T, u64)]) -> Option<Self> {
        const CAPACITY: u64 = 1 << 32;
        let entries: Vec<(T, u64)> = entries.iter().copied().filter(|e| e.1 > 0).collect();
        let n = entries.len();
        if n == 0 || n > 1 << 20 {
            return None;
        }
        let k = n.next_power_of_two().trailing_zeros();
        let columns = 1usize << k;
        let q_total: u128 = 1 << (k + 32);
        let w_total: u128 = entries.iter().map(|e| u128::from(e.1)).sum();
        // Weights below 2⁶⁴ each, at most 2²⁰ of them, times Q ≤ 2⁵²: no overflow in u128.
        let mut units: Vec<u128> = Vec::with_capacity(columns);
        let mut remainders: Vec<(u128, usize)> = Vec::with_capacity(n);
        for (i, e) in entries.iter().enumerate() {
            let scaled = u128::from(e.1) * q_total;
            units.push(scaled / w_total);
            remainders.push((scaled % w_total, i));
        }
        let given: u128 = units.iter().sum();
        // Largest remainder first, the first in the list among equals.
        remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(_, i) in remainders.iter().take((q_total - given) as usize) {
            units[i] += 1;
        }
        units.resize(columns, 0);
        let mut units: Vec<u64> = units.into_iter().map(|u| u as u64).collect();
        // Padding columns hold nothing and always give their alias; their `keep` is never
        // returned, any value does.
        let value = |i: usize| entries[i.min(n - 1)].0;
        let mut table: Vec<Column<T>> = (0..columns)
            .map(|i| Column {
                cut: 0,
                keep: value(i),
                alias: value(i),
            })
            .collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..columns).partition(|&i| units[i] < CAPACITY);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            table[s].cut = units[s] as u32;
            table[s].alias = value(l);
            units[l] -= CAPACITY - units[s];
            if units[l] < CAPACITY {
                large.pop();
                small.push(l);
            }
        }
        // The columns left hold exactly 2³² (integer arithmetic): `keep` and `alias` are the
        // same entry, whatever the 32 bits.
        Some(Alias { columns: table, k })
    }

    /// One value: `k + 32` bits.
    #[inline]
    pub fn draw(&self, bits: &mut Bits) -> T {
        let v = bits.read(self.k + 32);
        // `columns.len()` is 2ᵏ: the mask keeps the index in range.
        let column = &self.columns[(v as usize) & (self.columns.len() - 1)];
        if ((v >> self.k) as u32) < column.cut {
            column.keep
        } else {
            column.alias
        }
    }
}

impl<T: Copy + Ord> Alias<T> {
    /// Every value with its probability in units of `2^-(k+32)` (they add up to `2^(k+32)`),
    /// read back from the columns.
    #[cfg(test)]
    pub fn units(&self) -> (std::collections::BTreeMap<T, u64>, u32) {
        let mut out = std::collections::BTreeMap::new();
        for c in &self.columns {
            let cut = if c.keep == c.alias {
                1 << 32
            } else {
                u64::from(c.cut)
            };
            *out.entry(c.keep).or_default() += cut;
            *out.entry(c.alias).or_default() += (1 << 32) - cut;
        }
        out.retain(|_, u| *u > 0);
        (out, self.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A generator whose outputs are known: the bits of the stream are checked against them.
    #[test]
    fn bits_are_the_outputs_in_order_none_dropped() {
        let mut rng = LayoutRng::seed_from_u64(5);
        let words: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
        let mut rng = LayoutRng::seed_from_u64(5);
        let mut bits = Bits::new(&mut rng);
        // 3 + 42 + 32 + 64 + 1 + 50 + 64 + 64 + 64 + 64 = 448 bits = 7 words.
        let widths = [3u32, 42, 32, 64, 1, 50, 64, 64, 64, 64];
        let mut read: Vec<(u64, u32)> = Vec::new();
        for &k in &widths {
            let v = bits.read(k);
            assert!(k == 64 || v < 1 << k, "{k} bits read {v}");
            read.push((v, k));
        }
        // Rebuild the stream from the reads and compare with the outputs.
        let mut stream: Vec<bool> = Vec::new();
        for (v, k) in read {
            stream.extend((0..k).map(|b| v >> b & 1 == 1));
        }
        let want: Vec<bool> = words[..7]
            .iter()
            .flat_map(|w| (0..64).map(move |b| w >> b & 1 == 1))
            .collect();
        assert_eq!(stream, want);
    }

    #[test]
    fn below_stays_in_range_and_follows_its_law() {
        let mut rng = LayoutRng::seed_from_u64(9);
        let mut bits = Bits::new(&mut rng);
        let mut seen = [0u32; 7];
        for _ in 0..70_000 {
            seen[bits.index(7)] += 1;
        }
        // About 9 standard deviations (≈ 92) either side of 10 000.
        assert!(
            seen.iter().all(|&c| (9_200..10_800).contains(&c)),
            "{seen:?}"
        );
        for n in [1u32, 2, 3, 12, 1 << 31, u32::MAX] {
            for _ in 0..1000 {
                assert!(bits.below(n) < n);
            }
        }
        assert!(!bits.chance(Rate::new(0.0)));
        assert!(bits.chance(Rate::new(1.0)));
    }

    #[test]
    fn below_rejects_exactly_the_low_products() {
        // n = 3·2³⁰: 2³² mod n = 2³⁰, so a quarter of the inputs are read again. The same
        // stream read 32 bits at a time says which reads are refused and what comes out.
        let n: u64 = 3 << 30;
        for seed in 0..50 {
            let mut raw_rng = LayoutRng::seed_from_u64(seed);
            let mut raw = Bits::new(&mut raw_rng);
            let expected = loop {
                let m = raw.read(32) * n;
                if m & 0xffff_ffff >= 1 << 30 {
                    break (m >> 32) as u32;
                }
            };
            let mut rng = LayoutRng::seed_from_u64(seed);
            let mut bits = Bits::new(&mut rng);
            assert_eq!(bits.below(n as u32), expected);
            // Both are at the same place of the stream.
            assert_eq!(bits.read(64), raw.read(64));
        }
    }

    /// Every entry's probability is within one unit of `2^-(k+32)` of its weight, the units
    /// add up, and the columns give exactly the rounded units.
    #[test]
    fn alias_tables_give_the_rounded_weights_exactly() {
        for weights in [
            vec![25u64, 40, 35],
            vec![84, 11, 4, 1],
            vec![1],
            vec![0, 7, 0, 1],
            vec![1 << 40, 3, 5],
            vec![1; 15],
            (1..=840).collect(),
            vec![u64::MAX, u64::MAX, 1],
        ] {
            let entries: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
            let table = Alias::new(&entries).unwrap();
            let (units, k) = table.units();
            let positive = weights.iter().filter(|&&w| w > 0).count();
            assert_eq!(1usize << k, positive.next_power_of_two());
            let q: u128 = 1 << (k + 32);
            assert_eq!(units.values().map(|&u| u128::from(u)).sum::<u128>(), q);
            let w_total: u128 = weights.iter().map(|&w| u128::from(w)).sum();
            for (i, &w) in weights.iter().enumerate() {
                let got = u128::from(units.get(&i).copied().unwrap_or(0));
                let exact = u128::from(w) * q;
                // |got·W − w·Q| < W: within one unit.
                assert!(
                    got * w_total + w_total > exact && exact + w_total > got * w_total,
                    "{weights:?}: entry {i} has {got} units"
                );
            }
        }
        assert!(Alias::<usize>::new(&[(0, 0), (1, 0)]).is_none());
        assert!(Alias::<usize>::new(&[]).is_none());
    }

    #[test]
    fn equal_weights_on_a_power_of_two_are_one_column_each() {
        let table = Alias::new(&[(0u8, 5), (1, 5), (2, 5), (3, 5)]).unwrap();
        let (units, k) = table.units();
        assert_eq!(k, 2);
        assert!(units.values().all(|&u| u == 1 << 32));
    }

    #[test]
    fn draws_follow_the_table() {
        let table = Alias::new(&[(0usize, 25), (1, 40), (2, 35)]).unwrap();
        let mut rng = LayoutRng::seed_from_u64(3);
        let mut bits = Bits::new(&mut rng);
        let mut seen = [0u32; 3];
        for _ in 0..100_000 {
            seen[table.draw(&mut bits)] += 1;
        }
        // Within 5 standard deviations (about 150) of 25 000, 40 000, 35 000.
        for (got, want) in seen.iter().zip([25_000, 40_000, 35_000]) {
            assert!((i64::from(*got) - want).abs() < 800, "{seen:?}");
        }
    }

    #[test]
    fn an_alias_draw_reads_the_column_low_and_the_cut_high() {
        // Two entries of weights 1 and 3: k = 1, Q = 2³³, units 2³¹ and 3·2³¹. Column 0 keeps
        // entry 0 below 2³¹ and gives entry 1 above; column 1 is full (entry 1).
        let table = Alias::new(&[('a', 1), ('b', 3)]).unwrap();
        let mut rng = LayoutRng::seed_from_u64(21);
        let mut copy = rng.clone();
        let mut raw = Bits::new(&mut copy);
        let mut bits = Bits::new(&mut rng);
        for _ in 0..1000 {
            let v = raw.read(33);
            let want = if v & 1 == 0 && (v >> 1) < 1 << 31 {
                'a'
            } else {
                'b'
            };
            assert_eq!(table.draw(&mut bits), want);
        }
    }

    #[test]
    fn weighted_follows_the_running_sums() {
        let mut rng = LayoutRng::seed_from_u64(4);
        let mut bits = Bits::new(&mut rng);
        let mut seen = [0u32; 4];
        for _ in 0..60_000 {
            seen[weighted(&mut bits, &[24, 0, 12, 24], 60)] += 1;
        }
        assert_eq!(seen[1], 0);
        for (got, want) in [(seen[0], 24_000), (seen[2], 12_000), (seen[3], 24_000)] {
            assert!((i64::from(got) - want).abs() < 700, "{seen:?}");
        }
    }
}
