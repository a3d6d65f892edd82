//! Draws natural-looking calendar layouts for given prizes.
//!
//! A prize is shown by *components*: winning months (two identical symbols) and at most one
//! winning clover (a 13). At construction every prize of the stake's table is decomposed, in
//! every possible way, into components whose amounts the stake allows; a prize without any
//! decomposition is refused there, never at emission time.
//!
//! For a ticket, the number of components is drawn first (simple prizes dominate), then the
//! form (all months, or months and the clover) uniformly among those with that many
//! components, then the decomposition uniformly. Everything else is drawn from distributions
//! that do not depend on the prize, so what is not winning on a ticket reveals nothing:
//! non-winning months show two different symbols (often neighbours in the picture list: near
//! misses) and an amount uniform over `month_amounts`; a non-winning clover shows three numbers
//! without 13 (often a 12) and an amount uniform over `clover_amounts`. How often is the
//! game's `near_miss` settings.
//!
//! Generator 3 (SPEC §4) draws from tables built here once, so that a layout is a few table
//! reads and copies of whole pieces of text: a month that does not win is one draw from an
//! exact alias table ([`Table`]) of every (two pictures, amount) it may show, already written
//! `AB:10/`; a winning month one uniform letter for its text `CC:6/`; the clover's numbers, in
//! the order shown, one uniform draw from the list of all of them, written `4-12-13:`. The
//! drawing primitives are the hive games' ([`crate::mechanic::draw`]): one set for every game.

use super::params::{CalendarParams, CLOVER_MAX, CLOVER_WIN, MAX_WINNING_MONTHS, MONTHS};
use crate::mechanic::draw::{Bits, PrizeIndex, Rate, Table};
use crate::mechanic::{LayoutRng, SynthesisError};
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;

/// Relative weight of showing a prize with `n` components (index `n`): each extra component
/// halves or so the chance, so one month or the clover alone dominate, yet every form appears.
const COMPONENT_WEIGHTS: [u32; MAX_WINNING_MONTHS + 2] = [0, 24, 12, 6, 3, 2, 1, 1];

/// Bytes of a [`Piece`]: a month `AB:` + the longest amount (12 bytes: `999999999.99`, SPEC
/// §6.1) + `/`.
const PIECE: usize = 16;

/// A piece of layout text written whole: `bytes[..len]` counts, the rest is copied along (one
/// fixed-size copy is cheaper than one of a varying length) and overwritten by what follows.
#[derive(Debug, Clone, Copy)]
struct Piece {
    bytes: [u8; PIECE],
    len: u8,
}

impl Piece {
    /// The piece of these parts, or `None` if they are longer than [`PIECE`] bytes.
    fn of(parts: &[&[u8]]) -> Option<Piece> {
        let mut bytes = [0u8; PIECE];
        let mut len = 0;
        for part in parts {
            bytes.get_mut(len..len + part.len())?.copy_from_slice(part);
            len += part.len();
        }
        Some(Piece {
            bytes,
            len: len as u8,
        })
    }
}

/// A layout being written: twelve months, the clover's numbers and its amount, each a
/// [`Piece`] copied whole, with room for the last one's spare bytes.
struct Text {
    bytes: [u8; (MONTHS + 3) * PIECE],
    len: usize,
}

impl Text {
    #[inline]
    fn push(&mut self, piece: &Piece) {
        // At most MONTHS + 2 pieces are pushed: the copy stays within `bytes`.
        self.bytes[self.len..self.len + PIECE].copy_from_slice(&piece.bytes);
        self.len += usize::from(piece.len);
    }
}

/// One way to show a prize: month amounts (indices into `month_amounts`, ascending) and maybe
/// a clover amount (index into `clover_amounts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decomposition {
    months: [u8; MAX_WINNING_MONTHS],
    month_count: u8,
    clover: Option<u8>,
}

/// All decompositions with the same number of winning months and clover.
#[derive(Debug, Clone)]
struct Form {
    month_count: usize,
    clover: bool,
    ways: Vec<Decomposition>,
}

/// The forms with the same number of components, and the weight of that number.
#[derive(Debug, Clone)]
struct ComponentCount {
    weight: u32,
    forms: Vec<Form>,
}

/// How one prize can be shown.
#[derive(Debug, Clone)]
struct Plan {
    prize: Decimal,
    counts: Vec<ComponentCount>,
    /// The weight of each entry of `counts`.
    weights: Vec<u32>,
}

/// Synthesizes calendar layouts for one stake.
#[derive(Debug, Clone)]
pub struct CalendarSynthesizer {
    /// One plan per prize of the stake's table (losers need none), in the table's order.
    plans: Vec<Plan>,
    /// Finds a ticket's prize among `plans` by its cents.
    index: PrizeIndex,
    /// Number of symbols and of month amounts.
    letters: usize,
    month_amounts: usize,
    /// `SS:amount/` for symbol `s` and month amount `a`, at `s × month_amounts + a`.
    winning_months: Vec<Piece>,
    /// A month that does not win, as an index into `losing_month_text`: its two different
    /// pictures and its amount drawn together.
    losing_months: Table<u32>,
    /// `AB:amount/` for the ordered pair of different symbols number `p` (`A` ≠ `B`, in the
    /// order of the picture list, the second running fastest) and month amount `a`, at
    /// `p × month_amounts + a`.
    losing_month_text: Vec<Piece>,
    /// Chance that a clover that does not win shows a 12.
    twelve: Rate,
    /// The numbers a clover shows, written `1-13-7:`, in the order shown: with a 13; with a
    /// 12 and no 13; with neither.
    clover_wins: Vec<Piece>,
    clover_twelves: Vec<Piece>,
    clover_plain: Vec<Piece>,
    /// The clover amounts' texts.
    clover_amounts: Vec<Piece>,
}

impl CalendarSynthesizer {
    /// Builds the synthesizer for a stake. Fails, naming the parameters, if a prize of the
    /// stake's table cannot be shown with the allowed amounts.
    pub(super) fn new(params: &CalendarParams, prizes: &[Decimal]) -> Result<Self, String> {
        let mut plans = Vec::with_capacity(prizes.len());
        for &prize in prizes {
            let plan = plan(prize, params).ok_or_else(|| {
                format!(
                    "prize {} € cannot be shown: no sum of at most {} amounts of month_amounts plus at most one of clover_amounts makes it (add amounts, or raise max_winning_months)",
                    canonical(prize),
                    params.max_winning_months
                )
            })?;
            plans.push(plan);
        }
        let too_long = |key: &str| {
            format!("{key}: an amount longer than 12 characters (at most 999999999.99, SPEC §6.1)")
        };
        let month_texts = texts(&params.month_amounts);
        let letters = &params.letters;
        let mut winning_months = Vec::with_capacity(letters.len() * month_texts.len());
        for &s in letters {
            for text in &month_texts {
                winning_months.push(
                    Piece::of(&[&[s, s, b':'], text, b"/"])
                        .ok_or_else(|| too_long("month_amounts"))?,
                );
            }
        }
        let pairs = losing_pairs(letters.len(), Rate::new(params.near_miss.neighbour_rate));
        let mut losing_month_text = Vec::with_capacity(pairs.len() * month_texts.len());
        let mut losing = Vec::with_capacity(pairs.len() * month_texts.len());
        for ([a, b], weight) in pairs {
            for text in &month_texts {
                let piece = Piece::of(&[&[letters[a], letters[b], b':'], text, b"/"])
                    .ok_or_else(|| too_long("month_amounts"))?;
                // At most 26 × 25 × 255 entries: the index fits.
                losing.push((losing_month_text.len() as u32, weight));
                losing_month_text.push(piece);
            }
        }
        let clover_amounts = texts(&params.clover_amounts)
            .iter()
            .map(|t| Piece::of(&[t]).ok_or_else(|| too_long("clover_amounts")))
            .collect::<Result<_, _>>()?;
        Ok(CalendarSynthesizer {
            plans,
            index: PrizeIndex::new(prizes),
            letters: letters.len(),
            month_amounts: month_texts.len(),
            winning_months,
            losing_months: Table::new(&losing)
                .ok_or("symbols: a losing month needs two different symbols")?,
            losing_month_text,
            twelve: Rate::new(params.near_miss.twelve_rate),
            clover_wins: clovers(CLOVER_WIN, CLOVER_MAX - 1),
            clover_twelves: clovers(CLOVER_MAX - 1, CLOVER_MAX - 2),
            clover_plain: clovers(0, CLOVER_MAX - 2),
            clover_amounts,
        })
    }

    /// The forms `prize` can take, as (winning months, winning clover), simplest first; empty
    /// for a loser or a prize outside the table. For reports and tests.
    pub fn forms(&self, prize: Decimal) -> Vec<(usize, bool)> {
        self.plans
            .iter()
            .filter(|p| p.prize == prize)
            .flat_map(|p| p.counts.iter())
            .flat_map(|c| c.forms.iter())
            .map(|f| (f.month_count, f.clover))
            .collect()
    }

    /// Draws the decomposition that shows `prize` (not zero) on this ticket: the number of
    /// components by weight, the form uniformly among those, the decomposition uniformly.
    fn choose(&self, prize: Decimal, bits: &mut Bits) -> Result<Decomposition, SynthesisError> {
        let plan = self
            .index
            .find(prize)
            .map(|i| &self.plans[i])
            .ok_or_else(|| SynthesisError::not_a_prize(prize))?;
        // The plan is never empty and its weights are positive.
        let count = &plan.counts[bits.pick(&plan.weights)];
        let form = &count.forms[bits.uniform_index(count.forms.len())];
        Ok(form.ways[bits.uniform_index(form.ways.len())])
    }

    /// Appends a layout for `prize` to `out`.
    pub(super) fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        let bits = &mut Bits::new(rng);
        // Slot m holds the amount index + 1 of month m if it wins, else 0.
        let mut winning = [0u8; MONTHS];
        let mut clover = None;
        if !prize.is_zero() {
            let way = self.choose(prize, bits)?;
            // The winning months' places: the first steps of a Fisher–Yates shuffle of the
            // twelve months, the i-th amount going to the i-th place drawn.
            let mut places: [u8; MONTHS] = std::array::from_fn(|m| m as u8);
            for (i, &amount) in way.months[..usize::from(way.month_count)]
                .iter()
                .enumerate()
            {
                let j = i + bits.uniform_index(MONTHS - i);
                places.swap(i, j);
                winning[usize::from(places[i])] = amount + 1;
            }
            clover = way.clover;
        }
        let mut text = Text {
            bytes: [0; (MONTHS + 3) * PIECE],
            len: 0,
        };
        for &slot in &winning {
            let piece = if slot == 0 {
                &self.losing_month_text[self.losing_months.draw(bits) as usize]
            } else {
                let s = bits.uniform_index(self.letters);
                &self.winning_months[s * self.month_amounts + usize::from(slot - 1)]
            };
            text.push(piece);
        }
        // The last month ends with the clover's `|`, not a `/`.
        text.bytes[text.len - 1] = b'|';
        let (numbers, amount) = match clover {
            Some(amount) => (&self.clover_wins, Some(usize::from(amount))),
            None if bits.chance(self.twelve) => (&self.clover_twelves, None),
            None => (&self.clover_plain, None),
        };
        // In random order, so the first number revealed says nothing; then the amount.
        text.push(&numbers[bits.uniform_index(numbers.len())]);
        let amount = amount.unwrap_or_else(|| bits.uniform_index(self.clover_amounts.len()));
        text.push(&self.clover_amounts[amount]);
        out.extend_from_slice(&text.bytes[..text.len]);
        Ok(())
    }
}

/// The canonical texts of a table's amounts, in its order.
fn texts(amounts: &AmountTable) -> Vec<&[u8]> {
    (0..amounts.len())
        .map(|i| amounts.get(i).1.as_bytes())
        .collect()
}

/// The ordered pairs of different pictures a losing month may show, as indexes (the second
/// running fastest), with exact weights: with chance `neighbours` two neighbours in the
/// picture list (either order), else any two different pictures. In units of 2⁻³² × 1 /
/// (2n(n − 1)): a pair of neighbours weighs r·n + 2(2³² − r), any other pair 2(2³² − r);
/// then every weight is divided by their greatest common divisor (the same law, and for the
/// usual rates a total below 2³², whose table draws then read 32 bits, not a whole output).
fn losing_pairs(n: usize, neighbours: Rate) -> Vec<([usize; 2], u64)> {
    let r = neighbours.units();
    let rest = 2 * ((1u64 << 32) - r);
    let mut out = Vec::with_capacity(n * n);
    for a in 0..n {
        for b in 0..n {
            if a != b {
                let w = if a.abs_diff(b) == 1 {
                    r * n as u64 + rest
                } else {
                    rest
                };
                out.push(([a, b], w));
            }
        }
    }
    let divisor = out.iter().fold(0, |g, e| gcd(g, e.1)).max(1);
    for e in &mut out {
        e.1 /= divisor;
    }
    out
}

/// The greatest common divisor of `a` and `b` (`gcd(0, b)` = `b`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Every ordered triple of distinct clover numbers holding `first` (0: none) and two others
/// from 1 to `max`, written `a-b-c:`, in increasing order of (a, b, c).
fn clovers(first: u8, max: u8) -> Vec<Piece> {
    let mut out = Vec::new();
    for a in 1..=CLOVER_MAX {
        for b in 1..=CLOVER_MAX {
            for c in 1..=CLOVER_MAX {
                let t = [a, b, c];
                let distinct = a != b && b != c && a != c;
                let others = t.iter().filter(|&&x| x != first);
                let fits = if first == 0 {
                    t.iter().all(|&x| x <= max)
                } else {
                    t.contains(&first) && others.clone().all(|&x| x <= max)
                };
                if distinct && fits {
                    let text = format!("{a}-{b}-{c}:");
                    // At most `13-12-11:`, 9 bytes.
                    if let Some(piece) = Piece::of(&[text.as_bytes()]) {
                        out.push(piece);
                    }
                }
            }
        }
    }
    out
}

/// Every way to show `prize`, grouped by number of components; `None` if there is none.
fn plan(prize: Decimal, params: &CalendarParams) -> Option<Plan> {
    let months: Vec<Decimal> = params.month_amounts.values().collect();
    let max_months = params.max_winning_months;
    let mut counts: Vec<ComponentCount> = Vec::new();
    let clovers = std::iter::once(None).chain((0..params.clover_amounts.len()).map(Some));
    let mut all: Vec<Decomposition> = Vec::new();
    for clover in clovers {
        let rest = match clover {
            Some(c) => prize - params.clover_amounts.get(c).0,
            None => prize,
        };
        if rest.is_sign_negative() {
            continue;
        }
        let clover = clover.and_then(|c| u8::try_from(c).ok());
        let mut current = Vec::with_capacity(max_months);
        sums(&months, 0, rest, max_months, &mut current, &mut |chosen| {
            if chosen.is_empty() && clover.is_none() {
                return;
            }
            let mut d = Decomposition {
                months: [0; MAX_WINNING_MONTHS],
                month_count: chosen.len() as u8,
                clover,
            };
            d.months[..chosen.len()].copy_from_slice(chosen);
            all.push(d);
        });
    }
    for (n, &weight) in COMPONENT_WEIGHTS
        .iter()
        .enumerate()
        .take(max_months + 2)
        .skip(1)
    {
        let mut forms = Vec::new();
        for clover in [false, true] {
            let month_count = n - usize::from(clover);
            let ways: Vec<Decomposition> = all
                .iter()
                .filter(|d| {
                    usize::from(d.month_count) == month_count && d.clover.is_some() == clover
                })
                .copied()
                .collect();
            if !ways.is_empty() {
                forms.push(Form {
                    month_count,
                    clover,
                    ways,
                });
            }
        }
        if !forms.is_empty() {
            counts.push(ComponentCount { weight, forms });
        }
    }
    let weights: Vec<u32> = counts.iter().map(|c| c.weight).collect();
    (!counts.is_empty()).then_some(Plan {
        prize,
        counts,
        weights,
    })
}

/// Calls `found` with every non-decreasing list of at most `left` indices into `amounts`
/// (ascending) whose amounts add up to `target`.
fn sums(
    amounts: &[Decimal],
    from: usize,
    target: Decimal,
    left: usize,
    current: &mut Vec<u8>,
    found: &mut dyn FnMut(&[u8]),
) {
    if target.is_zero() {
        found(current);
        return;
    }
    if left == 0 {
        return;
    }
    for (i, &a) in amounts.iter().enumerate().skip(from) {
        // Ascending amounts: once one is too big, all the next ones are.
        if a > target {
            break;
        }
        current.push(i as u8);
        sums(amounts, i, target - a, left - 1, current, found);
        current.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through the losing months' table, two neighbouring pictures come exactly with the chance
    /// `neighbour_rate` asks, r/2³² + (1 − r/2³²)·2/n, for several rates and numbers of
    /// pictures; the built-in rate's weights reduce to 17 and 5 (a total below 2³²).
    #[test]
    fn losing_months_show_neighbours_with_exactly_the_rate() {
        for (n, rate) in [(8usize, 0.375), (8, 0.3), (2, 0.5), (26, 0.0), (5, 1.0)] {
            let r = Rate::new(rate);
            let pairs = losing_pairs(n, r);
            let entries: Vec<(usize, u64)> =
                pairs.iter().enumerate().map(|(i, p)| (i, p.1)).collect();
            let table = Table::new(&entries).unwrap();
            let (columns, total) = table.law();
            let mut units = vec![0u128; pairs.len()];
            for (cut, keep, other) in &columns {
                units[*keep] += u128::from(*cut);
                units[*other] += u128::from(total - cut);
            }
            let neighbours: u128 = pairs
                .iter()
                .zip(&units)
                .filter(|(p, _)| p.0[0].abs_diff(p.0[1]) == 1)
                .map(|(_, u)| u)
                .sum();
            let all = columns.len() as u128 * u128::from(total);
            let (r, n) = (u128::from(r.units()), n as u128);
            // neighbours / all == (r·n + 2(2³² − r)) / (2³²·n), cross-multiplied.
            assert_eq!(
                neighbours * (n << 32),
                all * (r * n + 2 * ((1 << 32) - r)),
                "{n} pictures, rate {rate}"
            );
        }
        let weights: Vec<u64> = losing_pairs(8, Rate::new(0.375))
            .iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(weights[..2], [17, 5]);
    }
}
