//! The order statistics of one block, from the prize tier of every ticket in block order
//! (the laws are in [`super::stats`]), and of pairs of blocks of one emission.

use super::stats::{self, Outcome, PowerSums, SerialNull};
use serde::Serialize;
use std::collections::BTreeMap;

/// Segments a block is cut into for the position test.
pub const SEGMENTS: u64 = 100;
/// Lags of the serial correlation.
pub const LAGS: usize = 10;
/// Tiers with at most this many tickets have their positions listed (for the picture).
pub const LISTED_POSITIONS: u64 = 200;

/// One test of the order of a block.
#[derive(Debug, Clone, Serialize)]
pub struct OrderTest {
    /// `positions`, `runs`, `serial_win`, `serial_amount`, `gaps`, `longest_losing_streak`,
    /// `cross_block`.
    pub test: &'static str,
    /// The prize tier (canonical amount) for `positions`; `winners` for all winners.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prize: Option<String>,
    /// The lag, for `serial_*`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<u32>,
    /// The other block, for `cross_block`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<[u32; 2]>,
    /// The statistic: chi-square (`positions`, `gaps`), z (`runs`, `serial_*`, `cross_block`),
    /// the streak (`longest_losing_streak`).
    pub statistic: f64,
    /// Degrees of freedom of a chi-square.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// The p-value under a random permutation of the block's prizes.
    pub p: f64,
    /// Holm-adjusted over every order test of the report.
    pub p_holm: f64,
    /// `p_holm` below 1 − the confidence (0.01).
    pub failed: bool,
    /// How the p-value was obtained.
    pub null: &'static str,
    /// What is tested, in words (filled by the report: [`super::in_words`]).
    pub what: String,
}

impl OrderTest {
    fn new(test: &'static str, outcome: Outcome, null: &'static str) -> Self {
        OrderTest {
            test,
            prize: None,
            lag: None,
            blocks: None,
            statistic: outcome.statistic,
            df: (outcome.df > 0.0).then_some(outcome.df),
            p: outcome.p,
            p_holm: outcome.p,
            failed: false,
            null,
            what: String::new(),
        }
    }
}

/// Where a tier's tickets sit along the block, for the picture.
#[derive(Debug, Clone, Serialize)]
pub struct TierPositions {
    /// The prize (canonical amount).
    pub prize: String,
    /// Tickets of the tier.
    pub tickets: u64,
    /// Positions (index in the block) when the tier has at most 200 tickets, else empty.
    pub positions: Vec<u64>,
    /// Tickets per segment of the block (100 segments).
    pub segments: Vec<u64>,
}

/// One class of the gap test.
#[derive(Debug, Clone, Serialize)]
pub struct GapClass {
    /// Losers between two consecutive winners (the last class: at least this many).
    pub gap: u64,
    /// Gaps observed.
    pub observed: u64,
    /// Gaps expected under a random order.
    pub expected: f64,
}

/// The order of one block.
#[derive(Debug, Clone, Serialize)]
pub struct Order {
    /// Every test, in a fixed order.
    pub tests: Vec<OrderTest>,
    /// Per tier, where its tickets sit (empty, and not in the JSON, in a public report).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub along: Vec<TierPositions>,
    /// The gap classes against their law.
    pub gaps: Vec<GapClass>,
    /// The longest run of losers, and where it starts.
    pub longest_losing_streak: u64,
    /// Where it starts (index in the block); `None` in a public report (positional).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longest_losing_streak_at: Option<u64>,
}

/// The order statistics of a block: `order` holds every ticket's tier, `amounts` the amount
/// of each tier (the last tier is the losers').
pub fn analyse(order: &[u8], amounts: &[f64], tiers: &[String]) -> Order {
    let loser = amounts.len().saturating_sub(1) as u8;
    let mut counts = vec![0u64; amounts.len()];
    for &t in order {
        counts[usize::from(t)] += 1;
    }
    // The serial correlations beside the rest (the report's serial tail, on two threads).
    let (serial, (mut out, at)) = rayon::join(
        || serial_tests(order, amounts, &counts, loser),
        || other_tests(order, amounts, tiers, &counts, loser),
    );
    out.tests.splice(at..at, serial);
    out
}

/// Everything [`analyse`] does but the serial correlations, and where in the list of tests
/// they go.
fn other_tests(
    order: &[u8],
    amounts: &[f64],
    tiers: &[String],
    counts: &[u64],
    loser: u8,
) -> (Order, usize) {
    let n = order.len() as u64;
    let mut tests = Vec::new();
    // Positions per tier, and of all winners together: counted per segment a sweep per
    // number of segments (no division per ticket: `stats::segment_ranges`).
    let mut by_segments: BTreeMap<u64, Vec<Vec<u64>>> = BTreeMap::new();
    let mut per_tier = |s: u64| -> Vec<Vec<u64>> {
        by_segments
            .entry(s)
            .or_insert_with(|| {
                let mut c = vec![vec![0u64; s as usize]; amounts.len()];
                for (j, range) in stats::segment_ranges(n, s).into_iter().enumerate() {
                    for &t in &order[range] {
                        c[usize::from(t)][j] += 1;
                    }
                }
                c
            })
            .clone()
    };
    let mut listed: Vec<Vec<u64>> = vec![Vec::new(); amounts.len()];
    if counts.iter().any(|&k| k <= LISTED_POSITIONS) {
        for (i, &t) in order.iter().enumerate() {
            let t = usize::from(t);
            if counts[t] <= LISTED_POSITIONS {
                listed[t].push(i as u64);
            }
        }
    }
    let tier_segments = if n > 0 {
        per_tier(SEGMENTS)
    } else {
        vec![vec![0; SEGMENTS as usize]; amounts.len()]
    };
    let winners: u64 = counts[..usize::from(loser)].iter().sum();
    let losers = n - winners;
    let mut along = Vec::new();
    for t in 0..amounts.len() {
        along.push(TierPositions {
            prize: tiers[t].clone(),
            tickets: counts[t],
            positions: std::mem::take(&mut listed[t]),
            segments: tier_segments[t].clone(),
        });
    }
    // (prize, which tiers, tickets): each winning tier, then all winners.
    let mut groups: Vec<(String, std::ops::Range<usize>, u64)> = (0..usize::from(loser))
        .map(|t| (tiers[t].clone(), t..t + 1, counts[t]))
        .collect();
    groups.push(("winners".into(), 0..usize::from(loser), winners));
    for (prize, which, k) in groups {
        let Some(s) = stats::segments_for(k, SEGMENTS) else {
            continue;
        };
        let by_tier = per_tier(s);
        let mut c = vec![0u64; s as usize];
        for t in which {
            for (into, &from) in c.iter_mut().zip(&by_tier[t]) {
                *into += from;
            }
        }
        let mut test = OrderTest::new(
            "positions",
            stats::positions_chi_square(&c, n, k),
            "chi-square, hypergeometric correction",
        );
        test.prize = Some(prize);
        tests.push(test);
    }
    // Runs of winners and losers.
    let runs = if n == 0 {
        0
    } else {
        1 + order
            .windows(2)
            .filter(|w| (w[0] == loser) != (w[1] == loser))
            .count() as u64
    };
    tests.push(OrderTest::new(
        "runs",
        stats::runs_test(runs, winners, losers),
        "exact conditional mean and variance, normal tail",
    ));
    // Serial correlation of the win indicator and of the amount ([`serial_tests`]) go here.
    let serial_at = tests.len();
    // Gaps between consecutive winners, and the longest losing streak (ends included).
    let mut gap_counts: Vec<u64> = Vec::new();
    let (mut current, mut longest, mut longest_at, mut seen_winner) = (0u64, 0u64, 0u64, false);
    for (i, &t) in order.iter().enumerate() {
        if t == loser {
            current += 1;
            if current > longest {
                longest = current;
                longest_at = i as u64 + 1 - current;
            }
        } else {
            if seen_winner {
                let g = current as usize;
                if gap_counts.len() <= g {
                    gap_counts.resize(g + 1, 0);
                }
                gap_counts[g] += 1;
            }
            seen_winner = true;
            current = 0;
        }
    }
    let (gap, classes) = stats::gap_test(&gap_counts, winners, losers);
    if let Some(gap) = gap {
        tests.push(OrderTest::new(
            "gaps",
            gap,
            "chi-square against the exact law of a spacing",
        ));
    }
    tests.push(OrderTest::new(
        "longest_losing_streak",
        stats::longest_streak_test(longest, winners, losers),
        "Bonferroni upper bound from the exact law of one and two spacings",
    ));
    let order = Order {
        tests,
        along,
        gaps: classes
            .into_iter()
            .map(|(gap, observed, expected)| GapClass {
                gap,
                observed,
                expected,
            })
            .collect(),
        longest_losing_streak: longest,
        longest_losing_streak_at: Some(longest_at),
    };
    (order, serial_at)
}

/// The serial-correlation tests of the win indicator and of the amount, lags 1 to [`LAGS`]
/// (the two series computed at once).
fn serial_tests(order: &[u8], amounts: &[f64], counts: &[u64], loser: u8) -> Vec<OrderTest> {
    let win: Vec<f64> = (0..amounts.len())
        .map(|t| f64::from(t != usize::from(loser)))
        .collect();
    let series = |name: &'static str, values: &[f64], null, how: &'static str| {
        let (products, _) = stats::lag_products_by_tier(order, values, LAGS);
        let mean = stats::mean_by_tier(order, values);
        let mut sums = PowerSums::default();
        for (t, &a) in amounts.iter().enumerate() {
            let x = if name == "serial_win" {
                f64::from(t as u8 != loser)
            } else {
                a
            };
            sums.add(x - mean, counts[t]);
        }
        let mut tests = Vec::new();
        for (h, &product) in products.iter().enumerate() {
            let mut test = OrderTest::new(
                name,
                stats::serial_test(product, &sums, h as u64 + 1, null),
                how,
            );
            test.lag = Some(h as u32 + 1);
            tests.push(test);
        }
        tests
    };
    let (mut tests, amount) = rayon::join(
        || {
            series(
                "serial_win",
                &win,
                SerialNull::Normal,
                "exact permutation mean and variance, normal tail",
            )
        },
        || {
            series(
                "serial_amount",
                amounts,
                SerialNull::Chebyshev,
                "exact permutation mean and variance, Chebyshev bound",
            )
        },
    );
    tests.extend(amount);
    tests
}

/// The winners of a block as a bit set, for comparing blocks.
pub fn winner_bits(order: &[u8], loser: u8) -> Vec<u64> {
    let mut bits = vec![0u64; order.len().div_ceil(64)];
    for (i, &t) in order.iter().enumerate() {
        if t != loser {
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
}

/// The test of two blocks' win indicators (same length `n`).
pub fn cross_block(a: (u32, &[u64]), b: (u32, &[u64]), n: u64) -> (OrderTest, f64) {
    let ones = |bits: &[u64]| bits.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
    let overlap: u64 =
        a.1.iter()
            .zip(b.1)
            .map(|(x, y)| u64::from((x & y).count_ones()))
            .sum();
    let (na, nb) = (ones(a.1), ones(b.1));
    let mut test = OrderTest::new(
        "cross_block",
        stats::overlap_test(overlap, n, na, nb),
        "hypergeometric overlap, exact mean and variance, normal tail",
    );
    test.blocks = Some([a.0, b.0]);
    (test, stats::indicator_correlation(overlap, n, na, nb))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;

    fn mini(sorted: bool) -> Vec<u8> {
        let counts = [1usize, 5, 50, 200, 300, 1444];
        let mut order: Vec<u8> = counts
            .iter()
            .enumerate()
            .flat_map(|(t, &c)| std::iter::repeat_n(t as u8, c))
            .collect();
        if !sorted {
            order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(3));
        }
        order
    }

    const AMOUNTS: [f64; 6] = [2000.0, 100.0, 20.0, 4.0, 2.0, 0.0];

    fn tiers() -> Vec<String> {
        ["2000", "100", "20", "4", "2", "0"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn a_shuffled_block_passes_and_a_sorted_one_fails_the_position_and_runs_tests() {
        let good = analyse(&mini(false), &AMOUNTS, &tiers());
        assert!(good.tests.iter().all(|t| t.p > 1e-4), "{:#?}", good.tests);
        let bad = analyse(&mini(true), &AMOUNTS, &tiers());
        let p = |test: &str| {
            bad.tests
                .iter()
                .filter(|t| t.test == test)
                .map(|t| t.p)
                .fold(1.0, f64::min)
        };
        assert!(p("positions") < 1e-50 && p("runs") < 1e-50 && p("serial_win") < 1e-50);
        assert_eq!(bad.longest_losing_streak, 1444);
        assert_eq!(bad.longest_losing_streak_at, Some(556));
    }

    #[test]
    fn a_planted_losing_streak_fails_the_streak_test() {
        let mut order = mini(false);
        // Move 150 losers to the front.
        let mut front: Vec<u8> = vec![5; 150];
        let mut removed = 0;
        order.retain(|&t| {
            if t == 5 && removed < 150 {
                removed += 1;
                false
            } else {
                true
            }
        });
        front.extend(order);
        let out = analyse(&front, &AMOUNTS, &tiers());
        let streak = out
            .tests
            .iter()
            .find(|t| t.test == "longest_losing_streak")
            .unwrap();
        assert!(streak.p < 1e-10, "{streak:?}");
        assert!(out.longest_losing_streak >= 150 && out.longest_losing_streak_at == Some(0));
    }

    #[test]
    fn copies_are_caught_across_blocks() {
        let a = winner_bits(&mini(false), 5);
        let mut other = mini(false);
        other.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(9));
        let b = winner_bits(&other, 5);
        let (same, r) = cross_block((1, &a), (2, &a), 2000);
        assert!(same.p < 1e-100 && (r - 1.0).abs() < 1e-12);
        let (different, _) = cross_block((1, &a), (2, &b), 2000);
        assert!(different.p > 1e-3, "{different:?}");
    }
}
