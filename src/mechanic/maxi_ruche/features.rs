//! Maxi Ruche d'or tickets explained: the winning rows (with their multipliers), bees and
//! bonus stage, and what a player sees besides (docs/SPEC.md §3.2). The decoder reads the
//! prize; this reads the rest.

use super::params::{multiplier_index, MaxiParams, MULTIPLIERS};
use super::MaxiDecoder;
use crate::mechanic::explain::{
    cents_code, check_total, euros, hive_rows, p_count, parsed_amount, Board, BonusStage, Explain,
    Explanation, Feature, Hive,
};
use crate::mechanic::hive::ROW_WIN as WINNING_P;
use crate::mechanic::Params;
use crate::mechanic::{add_wins, multiply_win, Decoder, LayoutError};
use rust_decimal::Decimal;

/// Explains Maxi Ruche d'or layouts of one stake.
#[derive(Debug, Clone)]
pub struct MaxiExplainer {
    decoder: MaxiDecoder,
    params: MaxiParams,
}

impl MaxiExplainer {
    /// The explainer for a stake, from its layout parameters.
    pub fn new(params: &MaxiParams) -> Self {
        MaxiExplainer {
            decoder: params.decoder(),
            params: params.clone(),
        }
    }
}

impl Explain for MaxiExplainer {
    fn explain(&self, layout: &str) -> Result<Explanation, LayoutError> {
        // The referee first: what follows reads only layouts it accepts.
        let prize = self.decoder.decode(layout.as_bytes())?;
        let form = self.decoder.form(layout.as_bytes())?;
        let (hives_text, bonus_text) = match layout.split_once('+') {
            Some((h, b)) => (h, Some(b)),
            None => (layout, None),
        };
        let mut hives = Vec::new();
        let mut wins = Vec::new();
        let mut parts = Vec::new();
        let mut features = Vec::with_capacity(64);
        let (mut near_rows, mut near_mult, mut near_extra) = (0, 0, 0);
        for (h, text) in hives_text.split('|').enumerate() {
            let name = if h == 0 { "main hive" } else { "EXTRA hive" };
            let place = |what: String| {
                if h == 0 {
                    what
                } else {
                    format!("{name}, {what}")
                }
            };
            let (bee_text, rows_text) = text
                .split_once('#')
                .ok_or_else(|| LayoutError::new(format!("{name}: no bee amount")))?;
            let bee_amount = parsed_amount(bee_text, &self.params.bees)?;
            let mut rows = hive_rows(rows_text, &self.params.rows)?;
            let mut hive_win = Decimal::ZERO;
            let mut bee = false;
            let mut extras = 0;
            for (r, row) in rows.iter_mut().enumerate() {
                let mut factor = None;
                for &c in &row.cells {
                    match c {
                        'Q' => bee = true,
                        'E' => extras += 1,
                        _ => {}
                    }
                    if let Some(i) = u8::try_from(c).ok().and_then(multiplier_index) {
                        factor = Some(MULTIPLIERS[i].1);
                    }
                }
                row.multiplier = factor;
                let p = p_count(row);
                if p as usize == WINNING_P {
                    row.win = match factor {
                        Some(f) => multiply_win(row.amount, f)?,
                        None => row.amount,
                    };
                    wins.push(place(match factor {
                        Some(f) => format!(
                            "row {}: {WINNING_P} × P → {} × {f} = {}",
                            r + 1,
                            euros(row.amount),
                            euros(row.win)
                        ),
                        None => format!("row {}: {WINNING_P} × P → {}", r + 1, euros(row.win)),
                    }));
                    parts.push(row.win);
                    hive_win = add_wins(hive_win, row.win)?;
                } else {
                    features.push(Feature::seen("losing_row_p", p));
                    features.push(Feature::seen("losing_row_amount", cents_code(row.amount)));
                    features.push(Feature::seen("losing_row_multiplier", factor.unwrap_or(0)));
                    let near = p as usize + 1 == WINNING_P;
                    near_rows += u32::from(near);
                    near_mult += u32::from(near && factor.is_some());
                }
            }
            if bee {
                wins.push(place(format!("bee → {}", euros(bee_amount))));
                parts.push(bee_amount);
                hive_win = add_wins(hive_win, bee_amount)?;
            } else {
                // The amount at the top of a hive without a bee is shown, not won.
                features.push(Feature::seen("bee_amount", cents_code(bee_amount)));
            }
            if h == 0 {
                features.push(Feature::seen("extra_symbols", extras));
            } else if hive_win.is_zero() {
                near_extra += 1;
            }
            hives.push(Hive {
                name: name.to_string(),
                bee_amount: Some(bee_amount),
                rows,
                pots: 0,
                honey_win: Decimal::ZERO,
                bee_wins: bee,
            });
        }
        let mut near_bonus = 0;
        let bonus = match bonus_text {
            None => None,
            Some(text) => {
                let cells: Vec<char> = text.chars().collect();
                let bees = cells.iter().filter(|&&c| c == 'Q').count();
                let win = self
                    .params
                    .bonus
                    .get(bees)
                    .copied()
                    .ok_or_else(|| LayoutError::new(format!("bonus stage: {bees} bees")))?;
                if win.is_zero() {
                    near_bonus += u32::from(bees + 1 == self.params.bonus_min);
                } else {
                    wins.push(format!("bonus stage: {bees} bees → {}", euros(win)));
                    parts.push(win);
                }
                Some(BonusStage {
                    cells,
                    bees: bees as u32,
                    win,
                })
            }
        };
        check_total(&parts, prize)?;
        features.push(Feature::near_miss("near_miss_rows", near_rows));
        features.push(Feature::near_miss("near_miss_multiplier", near_mult));
        features.push(Feature::near_miss("near_miss_extra", near_extra));
        features.push(Feature::near_miss("near_miss_bonus", near_bonus));
        Ok(Explanation {
            prize,
            form,
            wins,
            features,
            board: Board::Hives { hives, bonus },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use std::str::FromStr;

    fn explainer() -> Box<dyn Explain> {
        let game = Game::builtin("maxi-ruche-or").unwrap();
        game.stakes[0].mechanic.explainer()
    }

    fn value(e: &Explanation, name: &str) -> Vec<u32> {
        e.values(name)
    }

    /// A main hive whose rows win nothing: row 2 has two P and a ×5, row 4 two P.
    const LOSING: &str = "10#1:PAFB/2:ABP5P/5:BFAFPA/1:PPABFBA/20:ABABPF/3:FAPBF/2:ABFP";

    #[test]
    fn a_multiplied_row_and_a_bee_are_explained() {
        let layout = LOSING
            .replace("2:ABP5P", "2:PBP5P")
            .replace("3:FAPBF", "3:FAQBF");
        let e = explainer().explain(&layout).unwrap();
        assert_eq!(e.prize, Decimal::from(20));
        assert_eq!(e.wins, ["row 2: 3 × P → 2 € × 5 = 10 €", "bee → 10 €"]);
        assert_eq!(e.form, "row x5 + bee");
        assert_eq!(value(&e, "bee_amount"), Vec::<u32>::new());
        assert_eq!(value(&e, "near_miss_rows"), [1]);
        assert_eq!(value(&e, "near_miss_multiplier"), [0]);
        assert_eq!(value(&e, "losing_row_multiplier"), [0; 6]);
    }

    #[test]
    fn a_losing_hive_shows_its_near_misses_and_the_bonus_stage() {
        let layout = format!("{LOSING}+QQQ.........");
        let e = explainer().explain(&layout).unwrap();
        assert_eq!(e.prize, Decimal::ZERO);
        assert_eq!(e.form, "loss");
        assert!(e.wins.is_empty());
        assert_eq!(value(&e, "near_miss_rows"), [2]);
        assert_eq!(value(&e, "near_miss_multiplier"), [1]);
        assert_eq!(value(&e, "near_miss_bonus"), [1]);
        assert_eq!(value(&e, "bee_amount"), [1000]);
        assert_eq!(value(&e, "losing_row_multiplier"), [0, 5, 0, 0, 0, 0, 0]);
        let won = explainer()
            .explain(&format!("{LOSING}+QQQ.Q.QQ...."))
            .unwrap();
        assert_eq!(won.wins, ["bonus stage: 6 bees → 10 €"]);
        assert_eq!(won.prize, Decimal::from_str("10").unwrap());
    }
}
