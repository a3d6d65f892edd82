//! La ruche d'or tickets explained: the winning rows and honey of every hive, and what a
//! player sees besides (docs/SPEC.md §3.2). The decoder reads the prize; this reads the rest.

use super::decode::{self, HiveOutcome, CELL_KIND, E, H, P};
use super::params::{RucheParams, MAX_EXTRA};
use super::RucheDecoder;
use crate::mechanic::explain::{
    add_cents, amount_code, cents_code, check_total, euros, hive_rows, p_count, Board, CentsTable,
    Explain, ExplainFault, Explanation, Feature, FeatureNames, Features, FormKey, Hive,
};
use crate::mechanic::hive::{packed_count, read_row, HiveName, ROW_LENGTHS, ROW_WIN};
use crate::mechanic::LayoutError;
use crate::mechanic::Params;
use rust_decimal::Decimal;

/// Explains La ruche d'or layouts of one stake.
#[derive(Debug, Clone)]
pub struct RucheExplainer {
    decoder: RucheDecoder,
    params: RucheParams,
    /// The fast path's tables: row amounts by code, the honey win of `n` pots in cents.
    rows: CentsTable,
    honey: Vec<Option<u64>>,
}

/// The fast path's observations, by index ([`FeatureNames::seen`]).
const LOSING_ROW_P: u8 = 0;
const LOSING_ROW_AMOUNT: u8 = 1;
const LOOSE_HONEY: u8 = 2;
const EXTRA_SYMBOLS: u8 = 3;
const NAMES: FeatureNames = FeatureNames {
    seen: &[
        "losing_row_p",
        "losing_row_amount",
        "loose_honey",
        "extra_symbols",
    ],
    near: &["near_miss_rows", "near_miss_honey", "near_miss_extra"],
};

impl RucheExplainer {
    /// The explainer for a stake, from its layout parameters.
    pub fn new(params: &RucheParams) -> Self {
        RucheExplainer {
            decoder: params.decoder(),
            params: params.clone(),
            rows: CentsTable::new(&params.rows),
            honey: (0..=params.max_honey)
                .map(|pots| crate::money::cents(params.honey_win(pots)))
                .collect(),
        }
    }
}

impl Explain for RucheExplainer {
    fn explain(&self, layout: &str) -> Result<Explanation, LayoutError> {
        let outcome = self.decoder.outcome(layout.as_bytes())?;
        let decoded: Vec<&HiveOutcome> = std::iter::once(&outcome.main)
            .chain(&outcome.extra[..outcome.extra_count])
            .collect();
        let min_pots = self.params.min_winning_pots() as u32;
        let mut hives = Vec::with_capacity(decoded.len());
        let mut wins = Vec::new();
        let mut parts = Vec::new();
        let mut features = Vec::with_capacity(64);
        let (mut near_rows, mut near_honey, mut near_extra) = (0, 0, 0);
        for (h, (text, seen)) in layout.split('|').zip(&decoded).enumerate() {
            let name = if h == 0 {
                "main hive".to_string()
            } else {
                format!("EXTRA hive {h}")
            };
            let place = |what: String| {
                if h == 0 {
                    what
                } else {
                    format!("{name}, {what}")
                }
            };
            let mut rows = hive_rows(text.as_bytes(), &self.params.rows, &CELL_KIND)?;
            let mut pots = 0;
            let mut hive_win = Decimal::ZERO;
            for (r, row) in rows.iter_mut().enumerate() {
                pots += row.cells.iter().filter(|&&c| c == 'H').count() as u32;
                let p = p_count(row);
                if p as usize == ROW_WIN {
                    row.win = row.amount;
                    wins.push(place(format!(
                        "row {}: {ROW_WIN} × P → {}",
                        r + 1,
                        euros(row.amount)
                    )));
                    parts.push(row.amount);
                    hive_win = crate::mechanic::add_wins(hive_win, row.amount)?;
                } else {
                    features.push(Feature::seen("losing_row_p", p));
                    features.push(Feature::seen("losing_row_amount", cents_code(row.amount)));
                    near_rows += u32::from(p as usize + 1 == ROW_WIN);
                }
            }
            let honey_win = self.params.honey_win(pots as usize);
            if honey_win.is_zero() {
                features.push(Feature::seen("loose_honey", pots));
                near_honey += u32::from(pots + 1 == min_pots);
            } else {
                wins.push(place(format!("{pots} honey pots → {}", euros(honey_win))));
                parts.push(honey_win);
                hive_win = crate::mechanic::add_wins(hive_win, honey_win)?;
            }
            if h > 0 && hive_win.is_zero() {
                near_extra += 1;
            }
            if h == 0 {
                let extras = rows
                    .iter()
                    .flat_map(|r| &r.cells)
                    .filter(|&&c| c == 'E')
                    .count() as u32;
                features.push(Feature::seen("extra_symbols", extras));
            }
            if u32::from(seen.pots) != pots || seen.honey_win != honey_win {
                return Err(ExplainFault::HoneyDiffers {
                    hive: if h == 0 {
                        HiveName::Main
                    } else {
                        HiveName::NthExtra(u8::try_from(h).unwrap_or(u8::MAX))
                    },
                }
                .into());
            }
            hives.push(Hive {
                name,
                bee_amount: None,
                rows,
                pots,
                honey_win,
                bee_wins: false,
            });
        }
        check_total(&parts, outcome.prize)?;
        features.push(Feature::near_miss("near_miss_rows", near_rows));
        features.push(Feature::near_miss("near_miss_honey", near_honey));
        features.push(Feature::near_miss("near_miss_extra", near_extra));
        Ok(Explanation {
            prize: outcome.prize,
            form: decode::form(&outcome),
            wins,
            features,
            board: Board::Hives { hives, bonus: None },
        })
    }

    fn feature_names(&self) -> FeatureNames {
        NAMES
    }

    fn seen_value(&self, feature: usize, code: u16) -> u32 {
        match feature as u8 {
            LOSING_ROW_AMOUNT => self.rows.value(code),
            _ => u32::from(code),
        }
    }

    /// `explain`, reduced to what `report` counts: the same reading, in the same order.
    fn features(&self, layout: &[u8], out: &mut Features) -> Result<(), LayoutError> {
        out.clear();
        let malformed = || {
            LayoutError::from(ExplainFault::Malformed {
                grammar: "hive|hive...",
            })
        };
        let min_pots = self.params.min_winning_pots() as u32;
        let mut won = 0u64;
        let [mut near_rows, mut near_honey, mut near_extra] = [0u32; 3];
        // The form: the main hive's rows and honey, the EXTRA hives' summed, their number.
        let (mut main_rows, mut main_honey, mut extra_rows, mut extra_honey) = (0, 0, 0, 0);
        let mut hive_count = 0;
        // One cursor over the bytes: `hive ("|" hive)*`, a hive its seven rows joined by `/`,
        // each read by `hive::read_row`.
        let mut pos = 0;
        loop {
            let h = hive_count;
            if h > MAX_EXTRA {
                return Err(malformed());
            }
            hive_count += 1;
            let mut hive_won = 0u64;
            let (mut pots, mut extras, mut winning_rows) = (0u16, 0u16, 0u32);
            for (r, &len) in ROW_LENGTHS.iter().enumerate() {
                if r > 0 {
                    if layout.get(pos) != Some(&b'/') {
                        return Err(malformed());
                    }
                    pos += 1;
                }
                let row = read_row(layout, pos, self.rows.table(), len, &CELL_KIND)
                    .ok_or_else(malformed)?;
                pos = row.end;
                let p = u16::from(packed_count(row.counts, P));
                pots = pots.saturating_add(packed_count(row.counts, H).into());
                extras = extras.saturating_add(packed_count(row.counts, E).into());
                if usize::from(p) == ROW_WIN {
                    hive_won = add_cents(hive_won, row.cents)?;
                    winning_rows += 1;
                } else {
                    out.see(LOSING_ROW_P, p)?;
                    out.see(LOSING_ROW_AMOUNT, amount_code(row.amount)?)?;
                    near_rows += u32::from(usize::from(p) + 1 == ROW_WIN);
                }
            }
            let honey_win = match self.honey.get(usize::from(pots)) {
                Some(&Some(cents)) => cents,
                Some(None) => return Err(malformed()),
                None => 0,
            };
            if honey_win == 0 {
                out.see(LOOSE_HONEY, pots)?;
                near_honey += u32::from(u32::from(pots) + 1 == min_pots);
            } else {
                hive_won = add_cents(hive_won, honey_win)?;
            }
            if h > 0 && hive_won == 0 {
                near_extra += 1;
            }
            if h == 0 {
                out.see(EXTRA_SYMBOLS, extras)?;
                main_rows = winning_rows;
                main_honey = u32::from(honey_win != 0);
            } else {
                extra_rows += winning_rows;
                extra_honey += u32::from(honey_win != 0);
            }
            won = add_cents(won, hive_won)?;
            if layout.get(pos) == Some(&b'|') {
                pos += 1;
            } else {
                break;
            }
        }
        if pos != layout.len() {
            return Err(malformed());
        }
        let mut key = FormKey::default();
        key.push(main_rows, 3)?;
        key.push(main_honey, 1)?;
        key.push(extra_rows, 5)?;
        key.push(extra_honey, 2)?;
        key.push(hive_count as u32, 3)?;
        key.push(u32::from(won == 0), 1)?;
        out.won = won;
        out.form = key.key();
        out.near = [near_rows, near_honey, near_extra, 0];
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use std::str::FromStr;

    fn explainer(price: &str) -> Box<dyn Explain> {
        let game = Game::builtin("ruche-or").unwrap();
        game.stake(Decimal::from_str(price).unwrap())
            .unwrap()
            .mechanic
            .explainer()
    }

    fn value(e: &Explanation, name: &str) -> Vec<u32> {
        e.values(name)
    }

    #[test]
    fn a_winning_row_and_honey_are_explained_part_by_part() {
        // Row 4 wins 1 €, 4 honey pots win 0.5 €; row 2 has two P (a near miss).
        let layout = "5:PAHB/10:ABPAP/2.5:BPAHFA/1:PPPHBBA/25:ABABPH/0.5:FAPBF/7.5:ABFE|5:PAHB/10:ABPAB/2.5:BPAHPA/1:PPABFBA/25:ABABPF/0.5:PAPBF/7.5:ABFP";
        let e = explainer("0.5").explain(layout).unwrap();
        assert_eq!(e.prize, Decimal::from_str("1.5").unwrap());
        assert_eq!(e.form, "row + honey");
        assert_eq!(e.wins, ["row 4: 3 × P → 1 €", "4 honey pots → 0.5 €"]);
        assert_eq!(value(&e, "extra_symbols"), [1]);
        // Six losing rows in the main hive, seven in the EXTRA hive.
        assert_eq!(
            value(&e, "losing_row_p"),
            [1, 2, 1, 1, 1, 0, 1, 1, 2, 2, 1, 2, 1]
        );
        // The EXTRA hive's two pots are loose honey; the main hive's win.
        assert_eq!(value(&e, "loose_honey"), [2]);
        // Main row 2, EXTRA rows 3, 4 and 6: two P without a win.
        assert_eq!(value(&e, "near_miss_rows"), [4]);
        assert_eq!(value(&e, "near_miss_honey"), [0]);
        assert_eq!(value(&e, "near_miss_extra"), [1]);
        let Board::Hives { hives, .. } = &e.board else {
            panic!()
        };
        assert_eq!(hives.len(), 2);
        assert!(hives[0].rows[3].wins());
        assert_eq!(hives[0].pots, 4);
    }

    #[test]
    fn three_loose_pots_are_a_near_miss() {
        let layout = "5:PAHB/10:ABPAB/2.5:BPAHPA/1:PPABHBA/25:ABABPF/0.5:PAPBF/7.5:ABFP";
        let e = explainer("0.5").explain(layout).unwrap();
        assert_eq!(e.prize, Decimal::ZERO);
        assert!(e.wins.is_empty());
        assert_eq!(value(&e, "loose_honey"), [3]);
        assert_eq!(value(&e, "near_miss_honey"), [1]);
        assert_eq!(value(&e, "near_miss_extra"), [0]);
        assert_eq!(value(&e, "losing_row_amount")[0], 500);
    }
}
