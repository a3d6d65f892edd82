//! The drawing tools the synthesizers share (cosmetic randomness only: the prize is decided
//! before, by the ChaCha20 shuffle).
//!
//! A layout is made of many small choices (a row amount out of ten, two `P` or not, where a
//! honey pot goes). Taking one 64-bit generator step per choice, as generator 1 did, spent
//! most of the synthesis time in the generator; [`Bits`] hands out a 64-bit draw a few bits
//! at a time instead, with rejection so that every choice stays exactly uniform. Weighted
//! choices come from exact alias tables ([`Alias`]), built once per synthesizer, and a row's
//! cells are put in a random order with one draw from a table of all the orders of the row
//! ([`Permutations`]) instead of a Fisher–Yates shuffle. Written by hand rather than with
//! `rand::distr::weighted::WeightedAliasIndex`: that one works in floating point (not
//! exact) and draws one generator step per choice.

use super::LayoutRng;
use rand::RngCore;

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

    /// `k` (1 to 32) uniform bits. Bits left over in a word too short for `k` are dropped:
    /// each bit is used at most once, so draws stay independent.
    #[inline]
    fn take(&mut self, k: u32) -> u64 {
        debug_assert!((1..=32).contains(&k));
        if self.left < k {
            self.word = self.rng.next_u64();
            self.left = 64;
        }
        let v = self.word & ((1u64 << k) - 1);
        self.word >>= k;
        self.left -= k;
        v
    }

    /// A number uniform in `0..n` (`0` when `n` ≤ 1): the fewest bits that can hold `n - 1`,
    /// drawn again while they are `n` or more (so exactly uniform; at most half the draws are
    /// refused).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let k = 64 - (n - 1).leading_zeros();
        loop {
            let v = if k <= 32 {
                self.take(k)
            } else {
                self.take(32) | (self.take(k - 32) << 32)
            };
            if v < n {
                return v;
            }
        }
    }

    /// [`Bits::below`] for indexes.
    #[inline]
    pub fn index(&mut self, n: usize) -> usize {
        // Indexes here are at most a few thousand: the cast is exact both ways.
        self.below(n as u64) as usize
    }

    /// True with the probability of `rate`.
    #[inline]
    pub fn chance(&mut self, rate: Rate) -> bool {
        self.take(32) < rate.0
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

/// An exact alias table (Walker, Vose): draws one of `values` with probability proportional
/// to its integer weight, with two uniform draws and no floating point.
#[derive(Debug, Clone)]
pub struct Alias<T> {
    values: Vec<T>,
    /// Column `i` keeps `values[i]` when the second draw, below `total`, is below `cut[i]`.
    cut: Vec<u64>,
    alias: Vec<u32>,
    total: u64,
}

impl<T: Copy> Alias<T> {
    /// The table of `(value, weight)`; `None` if every weight is zero, there are more than
    /// 2³² values or the weights add up to more than 2⁶³.
    pub fn new(entries: &[(T, u64)]) -> Option<Self> {
        let entries: Vec<(T, u64)> = entries.iter().copied().filter(|e| e.1 > 0).collect();
        let n = entries.len();
        u32::try_from(n).ok()?;
        let total = entries
            .iter()
            .try_fold(0u64, |s, e| s.checked_add(e.1))
            .filter(|&t| t > 0 && t < 1 << 63)?;
        // Column i holds weight n·w_i out of n·total; columns are filled to `total` each.
        let mut scaled: Vec<u128> = entries
            .iter()
            .map(|e| u128::from(e.1) * n as u128)
            .collect();
        let full = u128::from(total);
        let mut cut = vec![total; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < full);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            // scaled[s] < full, so it fits in u64.
            cut[s] = scaled[s] as u64;
            alias[s] = l as u32;
            scaled[l] -= full - scaled[s];
            if scaled[l] < full {
                large.pop();
                small.push(l);
            }
        }
        // What is left is exactly full (integer arithmetic): those columns keep their value.
        Some(Alias {
            values: entries.iter().map(|e| e.0).collect(),
            cut,
            alias,
            total,
        })
    }

    /// One value.
    #[inline]
    pub fn draw(&self, bits: &mut Bits) -> T {
        let i = bits.index(self.values.len());
        let j = if bits.below(self.total) < self.cut[i] {
            i
        } else {
            self.alias[i] as usize
        };
        self.values[j]
    }

    /// Every value with its probability.
    #[cfg(test)]
    pub fn probabilities(&self) -> Vec<(T, f64)> {
        let n = self.values.len() as f64;
        let mut p = vec![0.0; self.values.len()];
        for i in 0..self.values.len() {
            let keep = self.cut[i] as f64 / self.total as f64;
            p[i] += keep / n;
            p[self.alias[i] as usize] += (1.0 - keep) / n;
        }
        self.values.iter().copied().zip(p).collect()
    }
}

/// An alias table over the indexes of `weights` (`None` if they are all zero).
pub fn index_table(weights: &[u32]) -> Option<Alias<usize>> {
    let entries: Vec<(usize, u64)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| (i, u64::from(w)))
        .collect();
    Alias::new(&entries)
}

/// An index drawn with the given weights (not all zero), from one uniform draw: for the
/// small lists whose weights change per ticket.
#[inline]
pub fn weighted(bits: &mut Bits, weights: &[u32]) -> usize {
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    let mut x = bits.below(total);
    for (i, &w) in weights.iter().enumerate() {
        if x < u64::from(w) {
            return i;
        }
        x -= u64::from(w);
    }
    weights.len() - 1
}

/// Every order of `n` cells (`n` ≤ 8 and `n`! entries), to shuffle a row with one draw.
#[derive(Debug, Clone)]
pub struct Permutations {
    orders: Vec<[u8; 8]>,
    len: usize,
}

impl Permutations {
    /// All the orders of `0..n`.
    pub fn new(n: usize) -> Self {
        assert!(n <= 8, "rows hold at most 8 cells");
        let mut orders = Vec::new();
        let mut current: Vec<u8> = Vec::with_capacity(n);
        fn walk(n: usize, current: &mut Vec<u8>, orders: &mut Vec<[u8; 8]>) {
            if current.len() == n {
                let mut o = [0u8; 8];
                o[..n].copy_from_slice(current);
                orders.push(o);
                return;
            }
            for i in 0..n as u8 {
                if !current.contains(&i) {
                    current.push(i);
                    walk(n, current, orders);
                    current.pop();
                }
            }
        }
        walk(n, &mut current, &mut orders);
        Permutations { orders, len: n }
    }

    /// `cells` (at least `n` of them) in a uniformly drawn order; the first `n` bytes count.
    #[inline]
    pub fn shuffle(&self, cells: &[u8; 8], bits: &mut Bits) -> [u8; 8] {
        let order = &self.orders[bits.index(self.orders.len())];
        let mut out = [0u8; 8];
        for i in 0..self.len {
            out[i] = cells[usize::from(order[i])];
        }
        out
    }
}

/// The orders of every row length of a hive (0 to 7 cells), built once.
pub fn row_orders() -> &'static [Permutations] {
    static ORDERS: std::sync::OnceLock<Vec<Permutations>> = std::sync::OnceLock::new();
    ORDERS.get_or_init(|| (0..=7).map(Permutations::new).collect())
}

/// The `A` and `B` counts of `k` filler cells (the two symbols the player did not pick), as
/// generator 1 drew them: each cell `A` or `B` with chance 3/8 each while fewer than
/// `max_each` of that symbol are there (three of a kind would show that the choice mattered),
/// else a flower `F`. Exact weights out of 8^k, by enumeration of the 3^k cell draws.
pub fn filler_table(k: usize, max_each: usize) -> Alias<[u8; 2]> {
    let mut weights = std::collections::BTreeMap::<[u8; 2], u64>::new();
    fn walk(
        left: usize,
        a: u8,
        b: u8,
        w: u64,
        max: u8,
        out: &mut std::collections::BTreeMap<[u8; 2], u64>,
    ) {
        if left == 0 {
            *out.entry([a, b]).or_default() += w;
            return;
        }
        // Draws 0..=2 say A, 3..=5 say B, 6..=7 say F; a capped symbol becomes F.
        let (na, nb) = if a < max { (a + 1, b) } else { (a, b) };
        walk(left - 1, na, nb, w * 3, max, out);
        let (na, nb) = if b < max { (a, b + 1) } else { (a, b) };
        walk(left - 1, na, nb, w * 3, max, out);
        walk(left - 1, a, b, w * 2, max, out);
    }
    walk(k, 0, 0, 1, max_each as u8, &mut weights);
    let entries: Vec<([u8; 2], u64)> = weights.into_iter().collect();
    Alias::new(&entries).expect("8^k > 0 for every k")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn alias_tables_give_exactly_the_weights() {
        for weights in [
            vec![25u64, 40, 35],
            vec![84, 11, 4, 1],
            vec![1],
            vec![0, 7, 0, 1],
            vec![1 << 40, 3, 5],
        ] {
            let entries: Vec<(usize, u64)> = weights.iter().copied().enumerate().collect();
            let table = Alias::new(&entries).unwrap();
            let total: u64 = weights.iter().sum();
            let mut got = vec![0.0; weights.len()];
            for (i, p) in table.probabilities() {
                got[i] += p;
            }
            for (i, &w) in weights.iter().enumerate() {
                let want = w as f64 / total as f64;
                assert!((got[i] - want).abs() < 1e-12, "{weights:?}: {got:?}");
            }
        }
        assert!(Alias::<usize>::new(&[(0, 0), (1, 0)]).is_none());
        assert!(Alias::<usize>::new(&[]).is_none());
    }

    #[test]
    fn draws_follow_the_table() {
        let table = index_table(&[25, 40, 35]).unwrap();
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
    fn below_is_uniform_and_in_range() {
        let mut rng = LayoutRng::seed_from_u64(9);
        let mut bits = Bits::new(&mut rng);
        let mut seen = [0u32; 7];
        for _ in 0..70_000 {
            seen[bits.index(7)] += 1;
        }
        assert!(
            seen.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{seen:?}"
        );
        for n in [1u64, 2, 3, 1 << 32, (1 << 40) + 7] {
            for _ in 0..100 {
                assert!(bits.below(n) < n);
            }
        }
        assert!(!bits.chance(Rate::new(0.0)));
        assert!(bits.chance(Rate::new(1.0)));
    }

    #[test]
    fn permutation_tables_hold_every_order_once() {
        for n in 0..=7 {
            let p = Permutations::new(n);
            let want: usize = (1..=n).product();
            assert_eq!(p.orders.len(), want);
            let distinct: std::collections::BTreeSet<_> = p.orders.iter().collect();
            assert_eq!(distinct.len(), want);
        }
    }

    #[test]
    fn filler_counts_respect_the_cap_and_add_up() {
        for k in 0..=7 {
            let t = filler_table(k, 2);
            let total: f64 = t.probabilities().iter().map(|e| e.1).sum();
            assert!((total - 1.0).abs() < 1e-12);
            for ([a, b], _) in t.probabilities() {
                assert!(a <= 2 && b <= 2 && usize::from(a + b) <= k);
            }
        }
        // One cell: A 3/8, B 3/8, F 2/8.
        let one = filler_table(1, 2).probabilities();
        assert!(one.contains(&([1, 0], 0.375)) && one.contains(&([0, 0], 0.25)));
    }
}
