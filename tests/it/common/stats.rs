//! The chi-square test of independence, for the statistical tests of layouts.

use std::collections::BTreeMap;

/// Counts of one feature's values in two groups (winners, losers).
#[derive(Debug, Default)]
pub struct Table {
    pub counts: BTreeMap<String, [u64; 2]>,
}

impl Table {
    /// Counts `value` in group `group` (0 or 1).
    pub fn add(&mut self, group: usize, value: impl ToString) {
        self.add_str(group, &value.to_string());
    }

    /// [`Table::add`] of a borrowed value, allocated only the first time it is seen (a full
    /// block counts tens of millions of values).
    pub fn add_str(&mut self, group: usize, value: &str) {
        match self.counts.get_mut(value) {
            Some(c) => c[group] += 1,
            None => self.counts.entry(value.to_string()).or_default()[group] += 1,
        }
    }

    /// Observations in group `group`.
    pub fn total(&self, group: usize) -> u64 {
        self.counts.values().map(|c| c[group]).sum()
    }

    /// The chi-square statistic of independence of value and group, its degrees of freedom and
    /// its p-value. Values seen fewer than 20 times in all are pooled into one cell, so that
    /// every expected count is large enough for the chi-square law.
    pub fn chi_square(&self) -> (f64, usize, f64) {
        let mut cells: Vec<[u64; 2]> = Vec::new();
        let mut rare = [0u64; 2];
        for c in self.counts.values() {
            if c[0] + c[1] < 20 {
                rare[0] += c[0];
                rare[1] += c[1];
            } else {
                cells.push(*c);
            }
        }
        if rare[0] + rare[1] > 0 {
            cells.push(rare);
        }
        let n: [f64; 2] = [self.total(0) as f64, self.total(1) as f64];
        let all = n[0] + n[1];
        let mut x2 = 0.0;
        for c in &cells {
            let col = (c[0] + c[1]) as f64;
            for g in 0..2 {
                let expected = n[g] * col / all;
                let d = c[g] as f64 - expected;
                x2 += d * d / expected;
            }
        }
        let df = cells.len().saturating_sub(1);
        let p = if df == 0 {
            1.0
        } else {
            upper_gamma(df as f64 / 2.0, x2 / 2.0)
        };
        (x2, df, p)
    }
}

/// The regularized upper incomplete gamma function Q(a, x): the chi-square survival function
/// is Q(df / 2, x² / 2). Series below a + 1, continued fraction above (Numerical Recipes 6.2).
pub fn upper_gamma(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let ln_front = -x + a * x.ln() - ln_gamma(a);
    if x < a + 1.0 {
        let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        1.0 - sum * ln_front.exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-15 {
                break;
            }
        }
        ln_front.exp() * h
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}
