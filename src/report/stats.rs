//! Order statistics for a block: is the order of the prizes what a random permutation gives?
//!
//! A block is a *permutation of a fixed multiset* (Article 3 fixes how many tickets win each
//! prize), not a run of independent draws. Every null law below is the law under a uniformly
//! random permutation of the block's own counts, computed exactly or bounded, never the i.i.d.
//! law:
//! - positions per tier over equal segments: Pearson's chi-square with the finite-population
//!   (hypergeometric) correction, `X² (N − 1) / (N − K)`, χ² with `segments − 1` degrees of freedom;
//! - Wald–Wolfowitz runs of win/lose: exact conditional mean and variance for the counts, normal
//!   tail (the permutation central limit theorem holds for a binary sequence with both counts large);
//! - serial correlation at a lag: exact permutation mean and variance of `Σ yᵢ yᵢ₊ₕ` (from the
//!   power sums of the multiset). For the win indicator the tail is normal; for the prize amount,
//!   where one top prize may carry most of the variance and the statistic is far from normal,
//!   the p-value is Chebyshev's bound `1/z²`: valid whatever the shape, conservative;
//! - gaps between consecutive winners: the exact marginal law of a spacing of a random
//!   arrangement, `P(G = g) = C(n₂ − g + n₁ − 1, n₁ − 1) / C(n, n₁)`, chi-square over classes whose
//!   expected counts are at least 5;
//! - longest losing streak: Bonferroni bounds from the exact law of one and of two spacings (the
//!   p-value given is the upper bound, so a failure is never overstated);
//! - win indicators of two blocks: the overlap of their winners is hypergeometric (exact mean
//!   and variance, normal tail with continuity correction).
//!
//! Holm's step-down correction makes a family of tests fail at level α only with probability α.

use statrs::distribution::{ChiSquared, ContinuousCDF};
use statrs::function::erf::erfc;
use statrs::function::gamma::ln_gamma;

/// One test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// The statistic as reported (chi-square, z, longest streak...).
    pub statistic: f64,
    /// Degrees of freedom of a chi-square, else 0.
    pub df: f64,
    /// The p-value (an upper bound where the test says so).
    pub p: f64,
}

/// Two-sided normal tail: P(|Z| ≥ |z|).
pub fn normal_two_sided(z: f64) -> f64 {
    if z.is_nan() {
        return 1.0;
    }
    erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

/// Upper tail of a chi-square with `df` degrees of freedom.
pub fn chi_square_sf(x: f64, df: f64) -> f64 {
    match ChiSquared::new(df) {
        Ok(law) if x.is_finite() => law.sf(x.max(0.0)).clamp(0.0, 1.0),
        _ => 1.0,
    }
}

/// The equal segments of a block of `n` tickets: segment `j` of `s` holds the positions
/// `⌊j n / s⌋ .. ⌊(j + 1) n / s⌋`. Returns the segment of `position`.
pub fn segment_of(position: u64, n: u64, segments: u64) -> usize {
    // (position · s) / n, in u128 so that it never overflows.
    ((u128::from(position) * u128::from(segments) + u128::from(segments) - 1) / u128::from(n))
        .min(u128::from(segments)) as usize
}

/// The positions [`segment_of`] puts in each of its `segments` segments of a block of `n`
/// tickets, as ranges (segment j: the j-th range): for sweeps that would otherwise divide per
/// ticket. Each bound is found by bisection on `segment_of` itself, so they agree exactly.
pub fn segment_ranges(n: u64, segments: u64) -> Vec<std::ops::Range<usize>> {
    // The first position whose segment is at least j (`n` if none).
    let first = |j: u64| {
        let (mut lo, mut hi) = (0u64, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if (segment_of(mid, n, segments) as u64) < j {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo as usize
    };
    let bounds: Vec<usize> = (0..=segments).map(first).collect();
    bounds.windows(2).map(|w| w[0]..w[1].max(w[0])).collect()
}

/// Segments to cut a block into for a tier of `k` tickets: 100, fewer when the tier is too
/// small for 5 expected tickets per segment; `None` below 2 segments (untestable).
pub fn segments_for(k: u64, wanted: u64) -> Option<u64> {
    let s = wanted.min(k / 5);
    (s >= 2).then_some(s)
}

/// The first position of each segment, and the end: `segments + 1` bounds.
pub fn segment_bounds(n: u64, segments: u64) -> Vec<u64> {
    (0..=segments)
        .map(|j| (u128::from(j) * u128::from(n) / u128::from(segments)) as u64)
        .collect()
}

/// Positions of a tier of `k` tickets among `n`, counted per segment (`counts`, segments from
/// [`segment_bounds`]): chi-square with the hypergeometric correction.
pub fn positions_chi_square(counts: &[u64], n: u64, k: u64) -> Outcome {
    let bounds = segment_bounds(n, counts.len() as u64);
    let mut x2 = 0.0;
    for (j, &observed) in counts.iter().enumerate() {
        let size = (bounds[j + 1] - bounds[j]) as f64;
        let expected = k as f64 * size / n as f64;
        if expected > 0.0 {
            x2 += (observed as f64 - expected).powi(2) / expected;
        }
    }
    // Under a random permutation the counts are multivariate hypergeometric: E[X²] is
    // (s − 1)(N − K)/(N − 1), not s − 1.
    let corrected = if k < n {
        x2 * (n as f64 - 1.0) / (n as f64 - k as f64)
    } else {
        0.0
    };
    let df = counts.len() as f64 - 1.0;
    Outcome {
        statistic: corrected,
        df,
        p: chi_square_sf(corrected, df),
    }
}

/// Mean and variance of the number of runs of `n1` ones and `n2` zeros in random order.
pub fn runs_moments(n1: u64, n2: u64) -> (f64, f64) {
    let (a, b) = (n1 as f64, n2 as f64);
    let n = a + b;
    if n1 == 0 || n2 == 0 {
        return (1.0, 0.0);
    }
    let mean = 1.0 + 2.0 * a * b / n;
    let var = 2.0 * a * b * (2.0 * a * b - n) / (n * n * (n - 1.0));
    (mean, var)
}

/// Wald–Wolfowitz runs test: `runs` runs observed among `n1` winners and `n2` losers. The
/// statistic is z.
pub fn runs_test(runs: u64, n1: u64, n2: u64) -> Outcome {
    let (mean, var) = runs_moments(n1, n2);
    z_outcome(runs as f64, mean, var, normal_two_sided)
}

/// The power sums Σx, Σx², Σx³, Σx⁴ of a multiset, the inputs of [`serial_moments`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PowerSums {
    /// Number of values.
    pub n: u64,
    /// Σx, Σx², Σx³, Σx⁴.
    pub s: [f64; 4],
}

impl PowerSums {
    /// The power sums of `values`.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut out = PowerSums::default();
        for x in values {
            out.add(x, 1);
        }
        out
    }

    /// Adds `count` copies of `x`.
    pub fn add(&mut self, x: f64, count: u64) {
        let c = count as f64;
        self.n += count;
        self.s[0] += c * x;
        self.s[1] += c * x * x;
        self.s[2] += c * x * x * x;
        self.s[3] += c * x * x * x * x;
    }
}

/// Exact mean and variance of `T = Σᵢ xᵢ xᵢ₊ₕ` (i from 1 to n − h) when the values are a
/// uniformly random permutation of the multiset with power sums `p`.
///
/// Center the values first (xᵢ − mean): the formulas are exact either way, but centred values
/// avoid the cancellation of large powers.
pub fn serial_moments(p: &PowerSums, lag: u64) -> (f64, f64) {
    let n = p.n as f64;
    let h = lag as f64;
    let [s1, s2, s3, s4] = p.s;
    if p.n < 4 || lag == 0 || lag >= p.n {
        return (0.0, 0.0);
    }
    // Sums over distinct indices (Möbius inversion over set partitions), divided by the
    // falling factorials: E of a product of values at distinct positions.
    let f2 = n * (n - 1.0);
    let f3 = f2 * (n - 2.0);
    let f4 = f3 * (n - 3.0);
    let e_ab = (s1 * s1 - s2) / f2;
    let e_a2b2 = (s2 * s2 - s4) / f2;
    let e_a2bc = (s2 * s1 * s1 - 2.0 * s3 * s1 - s2 * s2 + 2.0 * s4) / f3;
    let e_abcd = (s1.powi(4) - 6.0 * s2 * s1 * s1 + 3.0 * s2 * s2 + 8.0 * s3 * s1 - 6.0 * s4) / f4;
    let m = n - h; // products in T
    let shared = 2.0 * (n - 2.0 * h).max(0.0); // ordered pairs of products sharing one position
    let disjoint = m * m - m - shared;
    let mean = m * e_ab;
    let second = m * e_a2b2 + shared * e_a2bc + disjoint * e_abcd;
    (mean, (second - mean * mean).max(0.0))
}

/// `Σᵢ yᵢ yᵢ₊ₕ` for h = 1..=lags, and Σ yᵢ², of `values` centred on their mean.
pub fn lag_products(values: &[f64], lags: usize) -> (Vec<f64>, f64) {
    lag_products_with(values.len(), |i| values[i], lags)
}

/// [`lag_products`] of the values `table[tiers[i]]`, the same sums in the same order, without
/// a vector of values (a block's order is a byte per ticket; its values would be eight).
///
/// The same operations as [`lag_products`], in the same order for each sum, so the same bits;
/// faster (it is the report's serial tail: 10 lags over 7.5 million tickets): the centred
/// value of each tier is computed once, and the tickets whose lags all lie inside the block
/// are summed without a test per lag.
pub fn lag_products_by_tier(tiers: &[u8], table: &[f64], lags: usize) -> (Vec<f64>, f64) {
    let n = tiers.len();
    let mean = mean_by_tier(tiers, table);
    // `value(i) - mean` of `lag_products_with`, per tier code.
    let mut centred = [0.0f64; 256];
    for (t, c) in centred.iter_mut().enumerate() {
        *c = table.get(t).copied().unwrap_or(0.0) - mean;
    }
    let mut sums = vec![0.0; lags];
    let mut sq = 0.0;
    // Below `bulk`, every lag of ticket i is a ticket of the block.
    let bulk = n.saturating_sub(lags);
    for (i, &t) in tiers[..bulk].iter().enumerate() {
        let y = centred[usize::from(t)];
        sq += y * y;
        for (sum, &ahead) in sums.iter_mut().zip(&tiers[i + 1..=i + lags]) {
            *sum += y * centred[usize::from(ahead)];
        }
    }
    for i in bulk..n {
        let y = centred[usize::from(tiers[i])];
        sq += y * y;
        for (h, sum) in sums.iter_mut().enumerate() {
            if i + h + 1 < n {
                *sum += y * centred[usize::from(tiers[i + h + 1])];
            }
        }
    }
    (sums, sq)
}

/// The mean of the values `table[tiers[i]]`, summed in order as [`lag_products`] sums them.
pub fn mean_by_tier(tiers: &[u8], table: &[f64]) -> f64 {
    if tiers.is_empty() {
        return 0.0;
    }
    let sum: f64 = tiers
        .iter()
        .map(|&t| table.get(usize::from(t)).copied().unwrap_or(0.0))
        .sum();
    sum / tiers.len() as f64
}

fn lag_products_with(n: usize, value: impl Fn(usize) -> f64, lags: usize) -> (Vec<f64>, f64) {
    let mean = if n == 0 {
        0.0
    } else {
        (0..n).map(&value).sum::<f64>() / n as f64
    };
    let mut sums = vec![0.0; lags];
    let mut sq = 0.0;
    for i in 0..n {
        let y = value(i) - mean;
        sq += y * y;
        for (h, sum) in sums.iter_mut().enumerate() {
            if i + h + 1 < n {
                *sum += y * (value(i + h + 1) - mean);
            }
        }
    }
    (sums, sq)
}

/// How a serial-correlation z is turned into a p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SerialNull {
    /// Normal tail: for the win indicator (a binary sequence, both counts large).
    Normal,
    /// Chebyshev's bound `min(1, 1/z²)`: for the prize amount, whose statistic the few top
    /// prizes make far from normal.
    Chebyshev,
}

/// Serial correlation test at `lag`: `product` is `Σ yᵢ yᵢ₊ₕ` of the centred values, `sums` the
/// power sums of the same centred values. The statistic is z.
pub fn serial_test(product: f64, sums: &PowerSums, lag: u64, null: SerialNull) -> Outcome {
    let (mean, var) = serial_moments(sums, lag);
    let tail = match null {
        SerialNull::Normal => normal_two_sided,
        SerialNull::Chebyshev => |z: f64| {
            if z == 0.0 {
                1.0
            } else {
                (1.0 / (z * z)).min(1.0)
            }
        },
    };
    z_outcome(product, mean, var, tail)
}

fn z_outcome(observed: f64, mean: f64, var: f64, tail: fn(f64) -> f64) -> Outcome {
    let z = if var > 0.0 {
        (observed - mean) / var.sqrt()
    } else if observed == mean {
        0.0
    } else {
        f64::INFINITY
    };
    Outcome {
        statistic: z,
        df: 0.0,
        p: tail(z),
    }
}

/// The exact law of one spacing (the losers between two consecutive winners, or before the
/// first, or after the last) of `n1` winners and `n2` losers in random order: `P(G = g)` for
/// g = 0, 1, ... until the rest of the mass is below `1e-15` or g = n2.
pub fn gap_law(n1: u64, n2: u64) -> Vec<f64> {
    let mut out = Vec::new();
    if n1 == 0 {
        return out;
    }
    let n = (n1 + n2) as f64;
    let mut p = n1 as f64 / n; // P(G = 0)
    let mut rest = 1.0;
    for g in 0..=n2 {
        out.push(p);
        rest -= p;
        if rest < 1e-15 || g == n2 {
            break;
        }
        // P(g + 1) / P(g) = (n2 − g) / (n − 1 − g).
        p *= (n2 - g) as f64 / (n - 1.0 - g as f64);
    }
    out
}

/// Gap test: `gaps[g]` gaps of exactly g losers between consecutive winners (the last entry
/// may gather everything beyond). Classes are single values while both a class and the rest
/// expect at least 5 gaps; the last class is "at least". Returns the outcome and the classes
/// (first value of each, observed, expected) for plotting.
pub fn gap_test(gaps: &[u64], n1: u64, n2: u64) -> (Option<Outcome>, Vec<(u64, u64, f64)>) {
    let total: u64 = gaps.iter().sum();
    let law = gap_law(n1, n2);
    let t = total as f64;
    let mut classes: Vec<(u64, u64, f64)> = Vec::new();
    let mut rest_p = 1.0;
    let mut rest_obs = total;
    for (g, &p) in law.iter().enumerate() {
        let observed = gaps.get(g).copied().unwrap_or(0);
        if t * p < 5.0 || t * (rest_p - p) < 5.0 {
            break;
        }
        classes.push((g as u64, observed, t * p));
        rest_p -= p;
        rest_obs -= observed;
    }
    classes.push((classes.len() as u64, rest_obs, t * rest_p.max(0.0)));
    if classes.len() < 2 {
        return (None, classes);
    }
    let x2: f64 = classes
        .iter()
        .filter(|c| c.2 > 0.0)
        .map(|&(_, o, e)| (o as f64 - e).powi(2) / e)
        .sum();
    let df = classes.len() as f64 - 1.0;
    (
        Some(Outcome {
            statistic: x2,
            df,
            p: chi_square_sf(x2, df),
        }),
        classes,
    )
}

/// ln P(k given spacings are all at least `l`) = ln [C(n − k l, n1) / C(n, n1)].
fn ln_spacings_at_least(k: u64, l: u64, n1: u64, n2: u64) -> f64 {
    let Some(kl) = k.checked_mul(l) else {
        return f64::NEG_INFINITY;
    };
    if kl > n2 {
        return f64::NEG_INFINITY;
    }
    let n = (n1 + n2) as f64;
    let (n2f, klf) = (n2 as f64, kl as f64);
    ln_gamma(n2f + 1.0) - ln_gamma(n2f - klf + 1.0) - ln_gamma(n + 1.0) + ln_gamma(n - klf + 1.0)
}

/// Bounds on P(the longest losing streak ≥ `l`) among `n1` winners and `n2` losers in random
/// order: (lower, upper), by Bonferroni's inequalities over the n1 + 1 spacings.
pub fn longest_streak_at_least(l: u64, n1: u64, n2: u64) -> (f64, f64) {
    if l == 0 {
        return (1.0, 1.0);
    }
    if l > n2 {
        return (0.0, 0.0);
    }
    let k = (n1 + 1) as f64;
    let s1 = k * ln_spacings_at_least(1, l, n1, n2).exp();
    let s2 = k * (k - 1.0) / 2.0 * ln_spacings_at_least(2, l, n1, n2).exp();
    ((s1 - s2).clamp(0.0, 1.0), s1.min(1.0))
}

/// Test of the longest losing streak `l`: two-sided, p = 2 min(upper bound on P(≥ l), upper
/// bound on P(≤ l)). The statistic is `l`.
pub fn longest_streak_test(l: u64, n1: u64, n2: u64) -> Outcome {
    let (_, high) = longest_streak_at_least(l, n1, n2);
    let (low_next, _) = longest_streak_at_least(l + 1, n1, n2);
    let at_most = 1.0 - low_next;
    Outcome {
        statistic: l as f64,
        df: 0.0,
        p: (2.0 * high.min(at_most)).min(1.0),
    }
}

/// Two blocks of `n` tickets with `a` and `b` winners share `overlap` winning positions: the
/// overlap is hypergeometric under independent random orders. The statistic is z.
pub fn overlap_test(overlap: u64, n: u64, a: u64, b: u64) -> Outcome {
    let (nf, af, bf) = (n as f64, a as f64, b as f64);
    let mean = af * bf / nf;
    let var = if n > 1 {
        af * bf * (nf - af) * (nf - bf) / (nf * nf * (nf - 1.0))
    } else {
        0.0
    };
    // Continuity correction: half a ticket towards the mean.
    let x = overlap as f64;
    let corrected = if x > mean {
        (x - 0.5).max(mean)
    } else {
        (x + 0.5).min(mean)
    };
    z_outcome(corrected, mean, var, normal_two_sided)
}

/// Pearson correlation of two 0/1 sequences of length `n` with `a` and `b` ones and `overlap`
/// positions where both are 1.
pub fn indicator_correlation(overlap: u64, n: u64, a: u64, b: u64) -> f64 {
    let (nf, af, bf, x) = (n as f64, a as f64, b as f64, overlap as f64);
    let den = (af * (nf - af) * bf * (nf - bf)).sqrt();
    if den == 0.0 {
        0.0
    } else {
        (nf * x - af * bf) / den
    }
}

/// Holm's step-down adjusted p-values, in the order given: a test fails at level α when its
/// adjusted p-value is below α.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let value = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(value);
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;

    /// All distinct permutations of a small multiset, by brute force over index permutations.
    fn permutations(values: &[f64]) -> Vec<Vec<f64>> {
        fn rec(rest: &mut Vec<f64>, cur: &mut Vec<f64>, out: &mut Vec<Vec<f64>>) {
            if rest.is_empty() {
                out.push(cur.clone());
                return;
            }
            for i in 0..rest.len() {
                let v = rest.remove(i);
                cur.push(v);
                rec(rest, cur, out);
                cur.pop();
                rest.insert(i, v);
            }
        }
        let mut out = Vec::new();
        rec(&mut values.to_vec(), &mut Vec::new(), &mut out);
        out
    }

    fn mean_var(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        (m, xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn serial_moments_match_exhaustive_enumeration() {
        for values in [
            vec![0.0, 0.0, 0.0, 1.0, 1.0, 5.0, 2.0],
            vec![1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
            vec![3.0, -1.0, 2.0, 2.0, 0.5],
            vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 100.0],
        ] {
            let all = permutations(&values);
            let sums = PowerSums::of(values.iter().copied());
            for lag in 1..values.len() as u64 {
                let stats: Vec<f64> = all
                    .iter()
                    .map(|p| {
                        (0..p.len() - lag as usize)
                            .map(|i| p[i] * p[i + lag as usize])
                            .sum()
                    })
                    .collect();
                let (m, v) = mean_var(&stats);
                let (em, ev) = serial_moments(&sums, lag);
                assert!(close(m, em, 1e-9), "{values:?} lag {lag}: mean {m} vs {em}");
                assert!(close(v, ev, 1e-9), "{values:?} lag {lag}: var {v} vs {ev}");
            }
        }
    }

    #[test]
    fn runs_moments_match_exhaustive_enumeration() {
        for (n1, n2) in [(1, 1), (2, 3), (3, 4), (4, 4), (2, 6)] {
            let mut values = vec![1.0; n1];
            values.extend(vec![0.0; n2]);
            let runs: Vec<f64> = permutations(&values)
                .iter()
                .map(|p| 1.0 + p.windows(2).filter(|w| w[0] != w[1]).count() as f64)
                .collect();
            let (m, v) = mean_var(&runs);
            let (em, ev) = runs_moments(n1 as u64, n2 as u64);
            assert!(close(m, em, 1e-12) && close(v, ev, 1e-12), "{n1} {n2}");
        }
    }

    /// Every arrangement of n1 ones among n positions (as position bitmasks).
    fn arrangements(n1: u32, n: u32) -> Vec<Vec<bool>> {
        (0u32..1 << n)
            .filter(|m| m.count_ones() == n1)
            .map(|m| (0..n).map(|i| m >> i & 1 == 1).collect())
            .collect()
    }

    fn spacings(seq: &[bool]) -> Vec<u64> {
        let mut out = vec![0];
        for &w in seq {
            if w {
                out.push(0);
            } else {
                *out.last_mut().unwrap() += 1;
            }
        }
        out
    }

    #[test]
    fn gap_law_matches_exhaustive_enumeration() {
        for (n1, n) in [(1u32, 5u32), (3, 9), (4, 12), (6, 14)] {
            let all = arrangements(n1, n);
            let law = gap_law(n1 as u64, (n - n1) as u64);
            assert!(close(law.iter().sum::<f64>(), 1.0, 1e-12));
            // The spacing between the first and second winner (or before the first).
            let which = if n1 >= 2 { 1 } else { 0 };
            for (g, &p) in law.iter().enumerate() {
                let hits = all
                    .iter()
                    .filter(|a| spacings(a)[which] == g as u64)
                    .count();
                let exact = hits as f64 / all.len() as f64;
                assert!(
                    close(p, exact, 1e-12),
                    "n1 {n1} n {n} g {g}: {p} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn longest_streak_bounds_hold_the_exact_law() {
        for (n1, n) in [(2u32, 10u32), (4, 14), (6, 16), (3, 16)] {
            let all = arrangements(n1, n);
            let longest: Vec<u64> = all
                .iter()
                .map(|a| spacings(a).into_iter().max().unwrap())
                .collect();
            for l in 0..=(n - n1) as u64 + 1 {
                let exact =
                    longest.iter().filter(|&&x| x >= l).count() as f64 / longest.len() as f64;
                let (low, high) = longest_streak_at_least(l, n1 as u64, (n - n1) as u64);
                assert!(
                    low <= exact + 1e-12 && exact <= high + 1e-12,
                    "n1 {n1} n {n} l {l}: {low} ≤ {exact} ≤ {high}"
                );
            }
        }
        // In the tail, where decisions are made, the bounds are tight.
        let (low, high) = longest_streak_at_least(150, 556, 1444);
        assert!(high > 0.0 && high < 1e-15 && (high - low) / high < 1e-6);
    }

    #[test]
    fn chi_square_and_normal_tails_known_values() {
        assert!(close(chi_square_sf(3.841458820694124, 1.0), 0.05, 1e-9));
        assert!(close(chi_square_sf(134.6420, 99.0), 0.01, 1e-4));
        assert!(close(normal_two_sided(1.959963984540054), 0.05, 1e-9));
        assert!(close(normal_two_sided(-2.5758293035489), 0.01, 1e-9));
        assert!(normal_two_sided(30.0) > 0.0 && normal_two_sided(30.0) < 1e-150);
    }

    #[test]
    fn holm_known_values() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!(close(*a, w, 1e-12), "{adj:?}");
        }
        assert_eq!(holm(&[]), Vec::<f64>::new());
        assert_eq!(holm(&[0.9, 0.5]), vec![1.0, 1.0]);
    }

    #[test]
    fn segments_cover_the_block() {
        for (n, s) in [(2000, 100), (7, 3), (900_000, 100), (101, 100)] {
            let b = segment_bounds(n, s);
            assert_eq!((b[0], b[s as usize]), (0, n));
            for p in 0..n.min(5000) {
                let j = segment_of(p, n, s);
                assert!(b[j] <= p && p < b[j + 1], "n {n} s {s} p {p} in {j}");
            }
        }
        assert_eq!(segments_for(1, 100), None);
        assert_eq!(segments_for(50, 100), Some(10));
        assert_eq!(segments_for(1000, 100), Some(100));
    }

    #[test]
    fn overlap_and_correlation() {
        // Identical sequences: correlation 1 and a tiny p-value.
        assert!(close(
            indicator_correlation(556, 2000, 556, 556),
            1.0,
            1e-12
        ));
        assert!(overlap_test(556, 2000, 556, 556).p < 1e-100);
        // The expected overlap is no evidence at all.
        assert!(overlap_test(155, 2000, 556, 556).p > 0.9);
    }

    /// The p-values of every test over random permutations of the mini game's multiset (2 000
    /// tickets, 556 winners in 5 tiers), with a fixed seed: about uniform (the amount's
    /// Chebyshev p-values may only be larger).
    #[test]
    fn p_values_are_uniform_under_random_permutations() {
        let tiers: [(f64, usize); 6] = [
            (2000.0, 1),
            (100.0, 5),
            (20.0, 50),
            (4.0, 200),
            (2.0, 300),
            (0.0, 1444),
        ];
        let mut block: Vec<f64> = tiers
            .iter()
            .flat_map(|&(a, c)| std::iter::repeat_n(a, c))
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let reps = 400;
        let mut p: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
        for _ in 0..reps {
            block.shuffle(&mut rng);
            let win: Vec<f64> = block.iter().map(|&a| f64::from(a > 0.0)).collect();
            let n = block.len() as u64;
            let n1 = win.iter().filter(|&&w| w > 0.0).count() as u64;
            let n2 = n - n1;
            // positions of the 4 € tier over 40 segments
            let s = segments_for(200, 100).unwrap();
            let mut counts = vec![0; s as usize];
            for (i, &a) in block.iter().enumerate() {
                if a == 4.0 {
                    counts[segment_of(i as u64, n, s)] += 1;
                }
            }
            p.entry("positions")
                .or_default()
                .push(positions_chi_square(&counts, n, 200).p);
            let runs = 1 + win.windows(2).filter(|w| w[0] != w[1]).count() as u64;
            p.entry("runs").or_default().push(runs_test(runs, n1, n2).p);
            let (prod, _) = lag_products(&win, 2);
            let mean = n1 as f64 / n as f64;
            let sums = PowerSums::of(win.iter().map(|w| w - mean));
            p.entry("serial win")
                .or_default()
                .push(serial_test(prod[1], &sums, 2, SerialNull::Normal).p);
            let (prod, _) = lag_products(&block, 1);
            let mean = block.iter().sum::<f64>() / n as f64;
            let sums = PowerSums::of(block.iter().map(|a| a - mean));
            p.entry("serial amount")
                .or_default()
                .push(serial_test(prod[0], &sums, 1, SerialNull::Chebyshev).p);
            let sp = spacings(&win.iter().map(|&w| w > 0.0).collect::<Vec<_>>());
            let mut gaps = vec![0u64; 64];
            for &g in &sp[1..sp.len() - 1] {
                gaps[(g as usize).min(63)] += 1;
            }
            p.entry("gaps")
                .or_default()
                .push(gap_test(&gaps, n1, n2).0.unwrap().p);
            let longest = sp.iter().copied().max().unwrap();
            p.entry("longest")
                .or_default()
                .push(longest_streak_test(longest, n1, n2).p);
        }
        for (name, ps) in &p {
            let below = |x: f64| ps.iter().filter(|&&v| v < x).count() as f64 / reps as f64;
            // Never too many small p-values (the level holds)...
            assert!(below(0.01) <= 0.03, "{name}: {} below 0.01", below(0.01));
            assert!(below(0.1) <= 0.16, "{name}: {} below 0.1", below(0.1));
            // ...and, for the tests whose null is not a bound, about uniform.
            if !matches!(*name, "serial amount" | "longest") {
                assert!(
                    (0.35..=0.65).contains(&below(0.5)),
                    "{name}: {} below 0.5",
                    below(0.5)
                );
                assert!(below(0.1) >= 0.05, "{name}: {} below 0.1", below(0.1));
            }
        }
    }

    #[test]
    fn segment_ranges_hold_the_positions_segment_of_gives() {
        for n in [1u64, 2, 5, 99, 100, 101, 1000, 7_500_001] {
            for s in [1u64, 2, 3, 7, 100] {
                let ranges = segment_ranges(n, s);
                assert_eq!(ranges.len(), s as usize);
                let mut next = 0usize;
                for (j, r) in ranges.iter().enumerate() {
                    assert_eq!(r.start, next, "n {n} s {s} segment {j}");
                    next = r.end;
                    // Both ends of each range (all of it for small blocks).
                    let check: Vec<usize> = if n < 5000 {
                        r.clone().collect()
                    } else {
                        [r.start, r.end.saturating_sub(1)]
                            .into_iter()
                            .filter(|&i| r.contains(&i))
                            .collect()
                    };
                    for i in check {
                        assert_eq!(segment_of(i as u64, n, s), j, "n {n} s {s} position {i}");
                    }
                }
                assert_eq!(next as u64, n, "n {n} s {s}");
            }
        }
    }

    #[test]
    fn lag_products_by_tier_are_the_lag_products_of_the_values() {
        // Tiers of a small block (3 prizes, losers last), values per tier.
        let table = [100.0, 5.0, 0.5, 0.0];
        let tiers: Vec<u8> = (0..5000u32)
            .map(|i| [3, 3, 2, 3, 1, 3, 3, 0, 3, 2][(i * 7 % 10) as usize])
            .collect();
        let values: Vec<f64> = tiers.iter().map(|&t| table[usize::from(t)]).collect();
        // Bit for bit: the same sums in the same order.
        assert_eq!(
            lag_products_by_tier(&tiers, &table, 10),
            lag_products(&values, 10)
        );
        // Short blocks (fewer tickets than lags), and codes past the table (value 0).
        for n in [0, 1, 3, 10, 11, 12] {
            let mut short = tiers[..n].to_vec();
            if n > 2 {
                short[1] = 9;
            }
            let values: Vec<f64> = short
                .iter()
                .map(|&t| table.get(usize::from(t)).copied().unwrap_or(0.0))
                .collect();
            assert_eq!(
                lag_products_by_tier(&short, &table, 10),
                lag_products(&values, 10),
                "{n} tickets"
            );
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert_eq!(mean_by_tier(&tiers, &table).to_bits(), mean.to_bits());
        assert_eq!(mean_by_tier(&[], &table), 0.0);
    }
}
