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
//! without 13 (often a 12) and an amount uniform over `clover_amounts`.

use super::params::{
    CalendarParams, CLOVER_MAX, CLOVER_NUMBERS, CLOVER_WIN, MAX_WINNING_MONTHS, MONTHS,
};
use crate::mechanic::{LayoutRng, SynthesisError};
use crate::money::{canonical, AmountTable};
use rand::Rng;
use rust_decimal::Decimal;

/// Relative weight of showing a prize with `n` components (index `n`): each extra component
/// halves or so the chance, so one month or the clover alone dominate, yet every form appears.
const COMPONENT_WEIGHTS: [u32; MAX_WINNING_MONTHS + 2] = [0, 24, 12, 6, 3, 2, 1, 1];

/// Chance, in 1/16, that a non-winning month shows two neighbouring pictures (a near miss)
/// rather than any two different pictures.
const NEIGHBOURS_IN_16: u32 = 6;

/// Chance, in 1/16, that a non-winning clover shows a 12 (a near miss).
const TWELVE_IN_16: u32 = 6;

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
    total_weight: u32,
}

/// Synthesizes calendar layouts for one stake.
#[derive(Debug, Clone)]
pub struct CalendarSynthesizer {
    letters: Vec<u8>,
    month_amounts: AmountTable,
    clover_amounts: AmountTable,
    /// One plan per prize of the stake's table (losers need none).
    plans: Vec<Plan>,
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
        Ok(CalendarSynthesizer {
            letters: params.letters.clone(),
            month_amounts: params.month_amounts.clone(),
            clover_amounts: params.clover_amounts.clone(),
            plans,
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

    /// Draws the decomposition that shows `prize` on this ticket.
    fn choose(&self, prize: Decimal, rng: &mut LayoutRng) -> Result<Decomposition, SynthesisError> {
        if prize.is_zero() {
            return Ok(Decomposition {
                months: [0; MAX_WINNING_MONTHS],
                month_count: 0,
                clover: None,
            });
        }
        let plan = self
            .plans
            .iter()
            .find(|p| p.prize == prize)
            .ok_or_else(|| SynthesisError::not_a_prize(prize))?;
        let mut pick = rng.random_range(0..plan.total_weight);
        // The plan is never empty and the weights add up to total_weight, so the loop ends
        // with a choice; the fallback keeps this free of panics anyway.
        let mut count = &plan.counts[0];
        for c in &plan.counts {
            if pick < c.weight {
                count = c;
                break;
            }
            pick -= c.weight;
        }
        let form = &count.forms[rng.random_range(0..count.forms.len())];
        Ok(form.ways[rng.random_range(0..form.ways.len())])
    }

    /// Appends two different symbols: neighbours in the picture list with a fixed chance.
    fn push_losing_pair(&self, rng: &mut LayoutRng, out: &mut Vec<u8>) {
        let n = self.letters.len();
        let (a, b) = if rng.random_range(0..16) < NEIGHBOURS_IN_16 {
            let i = rng.random_range(0..n - 1);
            if rng.random_bool(0.5) {
                (i, i + 1)
            } else {
                (i + 1, i)
            }
        } else {
            let a = rng.random_range(0..n);
            // Any other symbol, uniformly.
            let b = (a + 1 + rng.random_range(0..n - 1)) % n;
            (a, b)
        };
        out.push(self.letters[a]);
        out.push(self.letters[b]);
    }
}

impl CalendarSynthesizer {
    /// Appends a layout for `prize` to `out`.
    pub(super) fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        let way = self.choose(prize, rng)?;
        // Winning months at random positions: slot m holds the month-amount index + 1, 0 if the
        // month does not win.
        let mut winning = [0u8; MONTHS];
        for &amount in &way.months[..usize::from(way.month_count)] {
            loop {
                let m = rng.random_range(0..MONTHS);
                if winning[m] == 0 {
                    winning[m] = amount + 1;
                    break;
                }
            }
        }
        for (m, &slot) in winning.iter().enumerate() {
            if m > 0 {
                out.push(b'/');
            }
            let amount = if slot > 0 {
                let s = self.letters[rng.random_range(0..self.letters.len())];
                out.push(s);
                out.push(s);
                usize::from(slot - 1)
            } else {
                self.push_losing_pair(rng, out);
                rng.random_range(0..self.month_amounts.len())
            };
            out.push(b':');
            out.extend_from_slice(self.month_amounts.get(amount).1.as_bytes());
        }
        out.push(b'|');
        let mut numbers = [0u8; CLOVER_NUMBERS];
        let amount = match way.clover {
            Some(amount) => {
                // The 13, and others drawn from 1..=12.
                numbers[0] = CLOVER_WIN;
                fill_distinct(&mut numbers[1..], CLOVER_MAX - 1, rng);
                usize::from(amount)
            }
            None => {
                if rng.random_range(0..16) < TWELVE_IN_16 {
                    numbers[0] = CLOVER_MAX - 1;
                    fill_distinct(&mut numbers[1..], CLOVER_MAX - 2, rng);
                } else {
                    fill_distinct(&mut numbers, CLOVER_MAX - 2, rng);
                }
                rng.random_range(0..self.clover_amounts.len())
            }
        };
        // Shown in random order, so the first number revealed says nothing.
        for i in (1..CLOVER_NUMBERS).rev() {
            numbers.swap(i, rng.random_range(0..=i));
        }
        for (i, &n) in numbers.iter().enumerate() {
            if i > 0 {
                out.push(b'-');
            }
            if n >= 10 {
                out.push(b'0' + n / 10);
            }
            out.push(b'0' + n % 10);
        }
        out.push(b':');
        out.extend_from_slice(self.clover_amounts.get(amount).1.as_bytes());
        Ok(())
    }
}

/// Fills `slots` with distinct numbers drawn uniformly from 1..=`max` (rejection: at most three
/// numbers out of eleven or more, so retries are rare).
fn fill_distinct(slots: &mut [u8], max: u8, rng: &mut LayoutRng) {
    for i in 0..slots.len() {
        loop {
            let n = rng.random_range(1..=max);
            if !slots[..i].contains(&n) {
                slots[i] = n;
                break;
            }
        }
    }
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
    let total_weight = counts.iter().map(|c| c.weight).sum();
    (!counts.is_empty()).then_some(Plan {
        prize,
        counts,
        total_weight,
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
