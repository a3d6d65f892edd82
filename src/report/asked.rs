//! The near-miss rates a definition asks for, beside those a block shows.
//!
//! A definition's `near_miss` settings ask for rates per *part* (a row that does not win, a
//! hive that wins no honey, a ticket's main hive, a clover that does not win...), on winners
//! and losers alike (SPEC §3.1); [`crate::mechanic::Mechanic::near_miss_rates`] gives them by
//! the report's feature name. Each is measured here on the block in the same unit, from the
//! observations the report already tallies (SPEC §3.2), on losers and on winners apart.

use super::scan::Tally;
use serde::Serialize;

/// How the rate asked under a near-miss name is observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// The share of the observations of `feature` whose value is `value` (`None`: above 0).
    Share {
        /// The observation (one per part of the kind the rate is of).
        feature: &'static str,
        /// The value that is the near miss.
        value: Option<u32>,
    },
    /// The share of tickets with the near miss among those with at least one observation of
    /// `per` (one per ticket showing the part).
    Tickets {
        /// The observation naming the part.
        per: &'static str,
    },
}

/// How each rate a mechanic asks for is observed, with the part it is a rate of: (mechanic,
/// near-miss name, measure, part in words).
pub const MEASURES: &[(&str, &str, Measure, &str)] = &[
    (
        "ruche",
        "near_miss_rows",
        Measure::Share {
            feature: "losing_row_p",
            value: Some(2),
        },
        "rows that do not win with two P",
    ),
    (
        "ruche",
        "near_miss_honey",
        Measure::Share {
            feature: "loose_honey",
            value: Some(3),
        },
        "hives winning no honey with three pots",
    ),
    (
        "ruche",
        "near_miss_extra",
        Measure::Share {
            feature: "extra_symbols",
            value: None,
        },
        "tickets with an EXTRA hive",
    ),
    (
        "maxi-ruche",
        "near_miss_rows",
        Measure::Share {
            feature: "losing_row_p",
            value: Some(2),
        },
        "rows that do not win with two P",
    ),
    (
        "maxi-ruche",
        "near_miss_multiplier",
        Measure::Share {
            feature: "losing_row_multiplier",
            value: None,
        },
        "rows that do not win with a multiplier",
    ),
    (
        "maxi-ruche",
        "near_miss_extra",
        Measure::Share {
            feature: "extra_symbols",
            value: None,
        },
        "tickets with an EXTRA hive",
    ),
    (
        "calendar",
        "near_miss_months",
        Measure::Share {
            feature: "losing_month_distance",
            value: Some(1),
        },
        "months that do not win with neighbouring pictures (asked, plus those drawn so by chance)",
    ),
    (
        "calendar",
        "near_miss_clover",
        Measure::Tickets {
            per: "clover_amount",
        },
        "clovers that do not win with a 12",
    ),
];

/// One near-miss rate asked and observed.
#[derive(Debug, Clone, Serialize)]
pub struct AskedRate {
    /// The near-miss name (SPEC §3.2).
    pub feature: String,
    /// What it is a rate of, in words.
    pub of: String,
    /// The rate the definition asks for (0 to 1).
    pub asked: f64,
    /// The rate observed on the block's losers (0 to 1; 0 without a part to measure).
    pub losers: f64,
    /// The rate observed on its winners.
    pub winners: f64,
    /// The parts measured on losers and on winners.
    pub losers_parts: u64,
    /// The parts measured on winners.
    pub winners_parts: u64,
}

/// The rates `asked` (by near-miss name) of a stake of the mechanic `mechanic`, observed in
/// `tally`. A name without a measure is left out (a test requires one for every rate the
/// built-in mechanics ask).
pub fn asked_rates(mechanic: &str, asked: &[(&'static str, f64)], tally: &Tally) -> Vec<AskedRate> {
    asked
        .iter()
        .filter_map(|&(name, rate)| {
            let &(_, _, measure, of) = MEASURES
                .iter()
                .find(|(m, n, _, _)| *m == mechanic && *n == name)?;
            let (hits, parts) = observe(measure, name, tally);
            Some(AskedRate {
                feature: name.to_string(),
                of: of.to_string(),
                asked: rate,
                losers: share(hits[0], parts[0]),
                winners: share(hits[1], parts[1]),
                losers_parts: parts[0],
                winners_parts: parts[1],
            })
        })
        .collect()
}

fn share(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// [near misses, parts measured], on [losers, winners].
fn observe(measure: Measure, name: &str, tally: &Tally) -> ([u64; 2], [u64; 2]) {
    let (mut hits, mut parts) = ([0u64; 2], [0u64; 2]);
    match measure {
        Measure::Share { feature, value } => {
            for (&(_, v), counts) in tally.observations.range((feature, 0)..=(feature, u32::MAX)) {
                let hit = match value {
                    Some(want) => v == want,
                    None => v > 0,
                };
                for g in 0..2 {
                    parts[g] += counts[g];
                    if hit {
                        hits[g] += counts[g];
                    }
                }
            }
        }
        Measure::Tickets { per } => {
            parts = tally.observed.get(per).copied().unwrap_or_default();
            hits = tally.near_misses.get(name).copied().unwrap_or_default();
        }
    }
    (hits, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, BUILTIN};
    use crate::mechanic::NAMES;

    #[test]
    fn every_rate_a_built_in_game_asks_for_has_a_measure() {
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                for (name, _) in stake.mechanic.near_miss_rates() {
                    assert!(
                        MEASURES
                            .iter()
                            .any(|(m, n, _, _)| *m == game.mechanic && *n == name),
                        "{id}: no measure for {name}"
                    );
                }
            }
        }
        for (m, ..) in MEASURES {
            assert!(NAMES.contains(m), "{m}");
        }
    }

    #[test]
    fn rates_are_measured_per_part_on_losers_and_winners() {
        let mut tally = Tally::default();
        // Rows that do not win: 0, 1, 2 P on losers 5, 3, 2 times; on winners 1, 1, 2.
        for (p, counts) in [(0, [5, 1]), (1, [3, 1]), (2, [2, 2])] {
            tally.observations.insert(("losing_row_p", p), counts);
        }
        tally.observed.insert("clover_amount", [10, 4]);
        tally.near_misses.insert("near_miss_clover", [3, 1]);
        let rows = asked_rates("ruche", &[("near_miss_rows", 0.35)], &tally);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].losers, rows[0].winners), (0.2, 0.5));
        assert_eq!((rows[0].losers_parts, rows[0].winners_parts), (10, 4));
        assert_eq!(rows[0].asked, 0.35);
        let clover = asked_rates("calendar", &[("near_miss_clover", 0.375)], &tally);
        assert_eq!((clover[0].losers, clover[0].winners), (0.3, 0.25));
        assert!(asked_rates("calendar", &[("near_miss_nothing", 0.1)], &tally).is_empty());
    }
}
