//! Calendar tickets (Année de la chance) explained: the winning months and clover, and what a
//! player sees besides (docs/SPEC.md §3.2). The decoder reads the prize; this reads the rest.

use super::params::{CalendarParams, CLOVER_NUMBERS, CLOVER_WIN, MONTHS};
use super::CalendarDecoder;
use crate::mechanic::explain::{
    add_cents, amount_before, cents_code, check_total, euros, parsed_amount, split_once, Board,
    CentsTable, Clover, Explain, ExplainFault, Explanation, Feature, FeatureNames, Features,
    FormKey, Month, MONTH_NAMES,
};
use crate::mechanic::Params;
use crate::mechanic::{Decoder, LayoutError};
use crate::money::AmountTable;

/// Explains calendar layouts of one stake.
#[derive(Debug, Clone)]
pub struct CalendarExplainer {
    decoder: CalendarDecoder,
    /// The symbol letters in the order of the picture list, and what each depicts.
    pictures: std::sync::Arc<[(char, String)]>,
    month_amounts: AmountTable,
    clover_amounts: AmountTable,
    /// The fast path's tables: each byte's position in the picture list (`NOT_A_SYMBOL` for
    /// bytes that are not symbols), month and clover amounts by code.
    ranks: [u8; 256],
    months: CentsTable,
    clovers: CentsTable,
}

/// A byte that is no symbol, in [`CalendarExplainer::ranks`].
const NOT_A_SYMBOL: u8 = u8::MAX;

/// The fast path's observations, by index ([`FeatureNames::seen`]).
const LOSING_MONTH_DISTANCE: u8 = 0;
const LOSING_MONTH_AMOUNT: u8 = 1;
const LOSING_CLOVER_NUMBER: u8 = 2;
const CLOVER_AMOUNT: u8 = 3;
const NAMES: FeatureNames = FeatureNames {
    seen: &[
        "losing_month_distance",
        "losing_month_amount",
        "losing_clover_number",
        "clover_amount",
    ],
    near: &["near_miss_months", "near_miss_clover"],
};

impl CalendarExplainer {
    /// The explainer for a stake, from its layout parameters.
    pub fn new(params: &CalendarParams) -> Self {
        CalendarExplainer {
            decoder: params.decoder(),
            pictures: params
                .letters
                .iter()
                .zip(&params.pictures)
                .map(|(&l, picture)| (char::from(l), picture.clone()))
                .collect(),
            month_amounts: params.month_amounts.clone(),
            clover_amounts: params.clover_amounts.clone(),
            ranks: {
                let mut ranks = [NOT_A_SYMBOL; 256];
                // At most 26 letters: every rank fits, below NOT_A_SYMBOL.
                for (i, &l) in params.letters.iter().enumerate() {
                    ranks[usize::from(l)] = u8::try_from(i).unwrap_or(NOT_A_SYMBOL);
                }
                ranks
            },
            months: CentsTable::new(&params.month_amounts),
            clovers: CentsTable::new(&params.clover_amounts),
        }
    }

    /// The position of a symbol in the picture list.
    fn rank(&self, symbol: char) -> Result<u32, LayoutError> {
        self.pictures
            .iter()
            .position(|&(l, _)| l == symbol)
            .map(|i| i as u32)
            .ok_or_else(|| ExplainFault::NotASymbol { symbol }.into())
    }
}

impl Explain for CalendarExplainer {
    fn explain(&self, layout: &str) -> Result<Explanation, LayoutError> {
        // The referee first: what follows reads only layouts it accepts.
        let prize = self.decoder.decode(layout.as_bytes())?;
        let form = self.decoder.form(layout.as_bytes())?;
        let malformed = || {
            LayoutError::from(ExplainFault::Malformed {
                grammar: "months|clover",
            })
        };
        let (months_text, clover_text) = layout.split_once('|').ok_or_else(malformed)?;
        let mut months = Vec::with_capacity(MONTHS);
        let mut wins = Vec::new();
        let mut parts = Vec::new();
        let mut features = Vec::with_capacity(32);
        let mut near_months = 0;
        for (m, text) in months_text.split('/').enumerate() {
            let (symbols, amount) = text.split_once(':').ok_or_else(malformed)?;
            let mut letters = symbols.chars();
            let (Some(a), Some(b), None) = (letters.next(), letters.next(), letters.next()) else {
                return Err(malformed());
            };
            let month = Month {
                symbols: [a, b],
                amount: parsed_amount(amount, &self.month_amounts)?,
            };
            let name = MONTH_NAMES.get(m).ok_or_else(malformed)?;
            if month.wins() {
                wins.push(format!("{name}: 2 × {a} → {}", euros(month.amount)));
                parts.push(month.amount);
            } else {
                let distance = self.rank(a)?.abs_diff(self.rank(b)?);
                features.push(Feature::seen("losing_month_distance", distance));
                features.push(Feature::seen(
                    "losing_month_amount",
                    cents_code(month.amount),
                ));
                near_months += u32::from(distance == 1);
            }
            months.push(month);
        }
        let (numbers_text, amount) = clover_text.split_once(':').ok_or_else(malformed)?;
        let mut numbers = [0u8; CLOVER_NUMBERS];
        let mut given = numbers_text.split('-');
        for n in &mut numbers {
            *n = given
                .next()
                .and_then(|t| t.parse().ok())
                .ok_or_else(malformed)?;
        }
        let clover = Clover {
            numbers,
            amount: parsed_amount(amount, &self.clover_amounts)?,
            wins: numbers.contains(&CLOVER_WIN),
        };
        let mut near_clover = 0;
        if clover.wins {
            wins.push(format!("clover: {CLOVER_WIN} → {}", euros(clover.amount)));
            parts.push(clover.amount);
        } else {
            for &n in &numbers {
                features.push(Feature::seen("losing_clover_number", u32::from(n)));
            }
            features.push(Feature::seen("clover_amount", cents_code(clover.amount)));
            near_clover = u32::from(numbers.contains(&(CLOVER_WIN - 1)));
        }
        check_total(&parts, prize)?;
        features.push(Feature::near_miss("near_miss_months", near_months));
        features.push(Feature::near_miss("near_miss_clover", near_clover));
        Ok(Explanation {
            prize,
            form,
            wins,
            features,
            board: Board::Calendar {
                months,
                clover,
                pictures: std::sync::Arc::clone(&self.pictures),
            },
        })
    }

    fn feature_names(&self) -> FeatureNames {
        NAMES
    }

    fn seen_value(&self, feature: usize, code: u16) -> u32 {
        match feature as u8 {
            LOSING_MONTH_AMOUNT => self.months.value(code),
            CLOVER_AMOUNT => self.clovers.value(code),
            _ => u32::from(code),
        }
    }

    /// `explain`, reduced to what `report` counts: the same reading, in the same order.
    fn features(&self, layout: &[u8], out: &mut Features) -> Result<(), LayoutError> {
        out.clear();
        let malformed = || {
            LayoutError::from(ExplainFault::Malformed {
                grammar: "months|clover",
            })
        };
        let mut won = 0u64;
        let (mut near_months, mut winning_months) = (0u32, 0u32);
        // One cursor over the twelve months `XY:amount`, each ended by `/` (the last by `|`):
        // the two symbols and `:` where they must be, the amount found with its end in the
        // table's packed look-up (splitting the text at every separator first was a third of
        // this path's CPU, in `memchr` calls on a few bytes each).
        let mut pos = 0;
        for m in 0..MONTHS {
            let (a, b) = match layout.get(pos..pos + 3) {
                Some(&[a, b, b':']) => (a, b),
                _ => return Err(malformed()),
            };
            pos += 3;
            let end = if m + 1 == MONTHS { b'|' } else { b'/' };
            let (code, cents) = amount_before(layout, &mut pos, end, &self.months)?;
            if a == b {
                won = add_cents(won, cents)?;
                winning_months += 1;
            } else {
                let (ra, rb) = (self.ranks[usize::from(a)], self.ranks[usize::from(b)]);
                if ra == NOT_A_SYMBOL || rb == NOT_A_SYMBOL {
                    return Err(ExplainFault::MonthNotSymbols.into());
                }
                let distance = ra.abs_diff(rb);
                out.see(LOSING_MONTH_DISTANCE, u16::from(distance))?;
                out.see(LOSING_MONTH_AMOUNT, code)?;
                near_months += u32::from(distance == 1);
            }
        }
        let clover_text = layout.get(pos..).ok_or_else(malformed)?;
        let (numbers_text, amount) = split_once(clover_text, b':');
        let mut numbers = [0u8; CLOVER_NUMBERS];
        let mut given = numbers_text.split(|&b| b == b'-');
        for n in &mut numbers {
            *n = given.next().and_then(small_number).ok_or_else(malformed)?;
        }
        let (code, cents) = self.clovers.read(amount.ok_or_else(malformed)?)?;
        let clover_wins = numbers.contains(&CLOVER_WIN);
        let mut near_clover = 0;
        if clover_wins {
            won = add_cents(won, cents)?;
        } else {
            for &n in &numbers {
                out.see(LOSING_CLOVER_NUMBER, u16::from(n))?;
            }
            out.see(CLOVER_AMOUNT, code)?;
            near_clover = u32::from(numbers.contains(&(CLOVER_WIN - 1)));
        }
        let mut key = FormKey::default();
        key.push(winning_months, 4)?;
        key.push(u32::from(clover_wins), 1)?;
        key.push(u32::from(won == 0), 1)?;
        out.won = won;
        out.form = key.key();
        out.near = [near_months, near_clover, 0, 0];
        Ok(())
    }
}

/// A number of 1 to 3 decimal digits that fits a byte.
fn small_number(text: &[u8]) -> Option<u8> {
    if text.is_empty() || text.len() > 3 {
        return None;
    }
    let mut n = 0u16;
    for &d in text {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u16::from(d - b'0');
    }
    u8::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rust_decimal::Decimal;

    fn explainer() -> Box<dyn Explain> {
        let game = Game::builtin("annee-chance").unwrap();
        game.stakes[0].mechanic.explainer()
    }

    fn value(e: &Explanation, name: &str) -> Vec<u32> {
        e.values(name)
    }

    #[test]
    fn winning_months_and_the_clover_are_explained() {
        let layout = "AB:6/CC:10/AH:2/DE:3/FF:4/GA:5/HB:6/AC:2/BD:3/CE:4/DF:5/EG:6|4-12-13:20";
        let e = explainer().explain(layout).unwrap();
        assert_eq!(e.prize, Decimal::from(34));
        assert_eq!(e.form, "2 months + clover");
        assert_eq!(
            e.wins,
            [
                "February: 2 × C → 10 €",
                "May: 2 × F → 4 €",
                "clover: 13 → 20 €"
            ]
        );
        // Ten losing months; A-B, D-E are neighbours in the picture list.
        assert_eq!(
            value(&e, "losing_month_distance"),
            [1, 7, 1, 6, 6, 2, 2, 2, 2, 2]
        );
        assert_eq!(value(&e, "near_miss_months"), [2]);
        // A winning clover shows no losing numbers, and its 12 is no near miss.
        assert_eq!(value(&e, "losing_clover_number"), Vec::<u32>::new());
        assert_eq!(value(&e, "near_miss_clover"), [0]);
        let Board::Calendar { pictures, .. } = &e.board else {
            panic!()
        };
        assert_eq!(pictures[2], ('C', "coccinelle".to_string()));
    }

    #[test]
    fn a_twelve_on_a_losing_clover_is_a_near_miss() {
        let layout = "AB:6/CD:10/AH:2/DE:3/FG:4/GA:5/HB:6/AC:2/BD:3/CE:4/DF:5/EG:6|4-12-11:20";
        let e = explainer().explain(layout).unwrap();
        assert_eq!(e.prize, Decimal::ZERO);
        assert_eq!(e.form, "loss");
        assert_eq!(value(&e, "losing_clover_number"), [4, 12, 11]);
        assert_eq!(value(&e, "clover_amount"), [2000]);
        assert_eq!(value(&e, "near_miss_clover"), [1]);
        assert_eq!(value(&e, "near_miss_months"), [4]);
    }
}
