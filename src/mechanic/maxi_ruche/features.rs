//! Maxi Ruche d'or tickets explained: the winning rows (with their multipliers), bees and
//! bonus stage, and what a player sees besides (docs/SPEC.md §3.2). The decoder reads the
//! prize; this reads the rest.

use super::decode::{CELL_CLASS, E, MULT, P, Q};
use super::params::{multiplier_index, MaxiParams, MAX_BONUS_BEES, MULTIPLIERS};
use super::MaxiDecoder;
use crate::mechanic::explain::{
    add_cents, amount_before, amount_code, cents_code, check_total, euros, hive_rows, p_count,
    parsed_amount, Board, BonusStage, CentsTable, Explain, ExplainFault, Explanation, Feature,
    FeatureNames, Features, FormKey, Hive,
};
use crate::mechanic::hive::ROW_WIN as WINNING_P;
use crate::mechanic::hive::{packed_count, read_row, HiveName, ROW_LENGTHS};
use crate::mechanic::Params;
use crate::mechanic::{add_wins, multiply_win, Decoder, LayoutError};
use rust_decimal::Decimal;

/// Explains Maxi Ruche d'or layouts of one stake.
#[derive(Debug, Clone)]
pub struct MaxiExplainer {
    decoder: MaxiDecoder,
    params: MaxiParams,
    /// The fast path's tables: row and bee amounts by code, bonus wins in cents.
    rows: CentsTable,
    bees: CentsTable,
    bonus: [Option<u64>; MAX_BONUS_BEES + 1],
}

/// The fast path's observations, by index ([`FeatureNames::seen`]).
const LOSING_ROW_P: u8 = 0;
const LOSING_ROW_AMOUNT: u8 = 1;
const LOSING_ROW_MULTIPLIER: u8 = 2;
const BEE_AMOUNT: u8 = 3;
const EXTRA_SYMBOLS: u8 = 4;
const NAMES: FeatureNames = FeatureNames {
    seen: &[
        "losing_row_p",
        "losing_row_amount",
        "losing_row_multiplier",
        "bee_amount",
        "extra_symbols",
    ],
    near: &[
        "near_miss_rows",
        "near_miss_multiplier",
        "near_miss_extra",
        "near_miss_bonus",
    ],
};

/// A hive's winning parts as the form key counts them: what `Decoder::form` names.
#[derive(Default)]
struct HiveForm {
    plain_rows: u32,
    mult_rows: [u32; MULTIPLIERS.len()],
    bee: bool,
}

impl HiveForm {
    fn push(&self, key: &mut FormKey) -> Result<(), LayoutError> {
        key.push(self.plain_rows, 3)?;
        for &n in &self.mult_rows {
            key.push(n, 3)?;
        }
        key.push(u32::from(self.bee), 1)
    }
}

impl MaxiExplainer {
    /// The explainer for a stake, from its layout parameters.
    pub fn new(params: &MaxiParams) -> Self {
        MaxiExplainer {
            decoder: params.decoder(),
            params: params.clone(),
            rows: CentsTable::new(&params.rows),
            bees: CentsTable::new(&params.bees),
            bonus: params.bonus.map(crate::money::cents),
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
            let (bee_text, rows_text) = text.split_once('#').ok_or(ExplainFault::NoBeeAmount {
                hive: if h == 0 {
                    HiveName::Main
                } else {
                    HiveName::Extra
                },
            })?;
            let bee_amount = parsed_amount(bee_text, &self.params.bees)?;
            let mut rows = hive_rows(rows_text.as_bytes(), &self.params.rows, &CELL_CLASS)?;
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
                    .ok_or(ExplainFault::BonusBees { bees })?;
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

    fn feature_names(&self) -> FeatureNames {
        NAMES
    }

    fn seen_value(&self, feature: usize, code: u16) -> u32 {
        match feature as u8 {
            LOSING_ROW_AMOUNT => self.rows.value(code),
            BEE_AMOUNT => self.bees.value(code),
            _ => u32::from(code),
        }
    }

    /// `explain`, reduced to what `report` counts: the same reading, in the same order.
    fn features(&self, layout: &[u8], out: &mut Features) -> Result<(), LayoutError> {
        out.clear();
        let malformed = || {
            LayoutError::from(ExplainFault::Malformed {
                grammar: "hive|hive+bonus",
            })
        };
        // One cursor over the bytes: `hive ("|" hive)? ("+" bonus)?`, a hive `bee "#"` and its
        // seven rows joined by `/`, each read by `hive::read_row`.
        let mut pos = 0;
        let mut won = 0u64;
        let mut forms = [HiveForm::default(), HiveForm::default()];
        let [mut near_rows, mut near_mult, mut near_extra, mut near_bonus] = [0u32; 4];
        let mut hive_count = 0;
        loop {
            let h = hive_count;
            let form = forms.get_mut(h).ok_or_else(malformed)?;
            hive_count += 1;
            let (bee_code, bee_cents) = amount_before(layout, &mut pos, b'#', &self.bees)?;
            let mut hive_won = 0u64;
            let mut extras = 0u16;
            for (r, &len) in ROW_LENGTHS.iter().enumerate() {
                if r > 0 {
                    if layout.get(pos) != Some(&b'/') {
                        return Err(malformed());
                    }
                    pos += 1;
                }
                let row = read_row(layout, pos, self.rows.table(), len, &CELL_CLASS)
                    .ok_or_else(malformed)?;
                pos = row.end;
                let p = u16::from(packed_count(row.counts, usize::from(P)));
                // A row the decoder accepts holds at most one multiplier.
                let factor = match packed_count(row.counts, usize::from(MULT)) {
                    0 => None,
                    1 => row.cells.iter().find_map(|&cell| multiplier_index(cell)),
                    _ => return Err(malformed()),
                };
                form.bee |= packed_count(row.counts, usize::from(Q)) != 0;
                extras = extras.saturating_add(packed_count(row.counts, usize::from(E)).into());
                if usize::from(p) == WINNING_P {
                    let win = match factor {
                        Some(i) => row
                            .cents
                            .checked_mul(u64::from(MULTIPLIERS[i].1))
                            .ok_or_else(malformed)?,
                        None => row.cents,
                    };
                    hive_won = add_cents(hive_won, win)?;
                    match factor {
                        Some(i) => form.mult_rows[i] += 1,
                        None => form.plain_rows += 1,
                    }
                } else {
                    let factor_value = factor.map_or(0, |i| MULTIPLIERS[i].1 as u16);
                    out.see(LOSING_ROW_P, p)?;
                    out.see(LOSING_ROW_AMOUNT, amount_code(row.amount)?)?;
                    out.see(LOSING_ROW_MULTIPLIER, factor_value)?;
                    let near = usize::from(p) + 1 == WINNING_P;
                    near_rows += u32::from(near);
                    near_mult += u32::from(near && factor.is_some());
                }
            }
            if form.bee {
                hive_won = add_cents(hive_won, bee_cents)?;
            } else {
                out.see(BEE_AMOUNT, bee_code)?;
            }
            if h == 0 {
                out.see(EXTRA_SYMBOLS, extras)?;
            } else if hive_won == 0 {
                near_extra += 1;
            }
            won = add_cents(won, hive_won)?;
            if layout.get(pos) == Some(&b'|') {
                pos += 1;
            } else {
                break;
            }
        }
        let bonus_text = match layout.get(pos) {
            None => None,
            Some(b'+') => Some(&layout[pos + 1..]),
            Some(_) => return Err(malformed()),
        };
        // The bonus stage: its bees, 1 + their number in the key (0: no bonus stage).
        let mut bonus_key = 0;
        if let Some(cells) = bonus_text {
            let bees = cells.iter().filter(|&&c| c == b'Q').count();
            let win = self
                .bonus
                .get(bees)
                .copied()
                .flatten()
                .ok_or(ExplainFault::BonusBees { bees })?;
            if win == 0 {
                near_bonus += u32::from(bees + 1 == self.params.bonus_min);
            } else {
                won = add_cents(won, win)?;
            }
            bonus_key = bees as u32 + 1;
        }
        let mut key = FormKey::default();
        forms[0].push(&mut key)?;
        forms[1].push(&mut key)?;
        key.push(hive_count as u32, 2)?;
        key.push(bonus_key, 4)?;
        key.push(u32::from(won == 0), 1)?;
        out.won = won;
        out.form = key.key();
        out.near = [near_rows, near_mult, near_extra, near_bonus];
        Ok(())
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
