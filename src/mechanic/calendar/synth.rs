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
//! Generator 2 draws from tables built here once (SPEC §4): the two pictures of a losing month
//! from an exact alias table of the pairs, the clover's three numbers, in the order shown,
//! with one draw from the list of all of them; random bits come from [`Bits`].

use super::params::{CalendarParams, CLOVER_MAX, CLOVER_WIN, MAX_WINNING_MONTHS, MONTHS};
use crate::mechanic::draw::{weighted, Alias, Bits, Rate};
use crate::mechanic::{LayoutRng, SynthesisError};
use crate::money::{canonical, AmountTable};
use rust_decimal::Decimal;

/// Relative weight of showing a prize with `n` components (index `n`): each extra component
/// halves or so the chance, so one month or the clover alone dominate, yet every form appears.
const COMPONENT_WEIGHTS: [u32; MAX_WINNING_MONTHS + 2] = [0, 24, 12, 6, 3, 2, 1, 1];

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
    letters: Vec<u8>,
    month_amounts: AmountTable,
    clover_amounts: AmountTable,
    /// One plan per prize of the stake's table (losers need none).
    plans: Vec<Plan>,
    /// The two pictures of a month that does not win, as indexes into `letters`.
    losing_pairs: Alias<[u8; 2]>,
    /// Chance that a clover that does not win shows a 12.
    twelve: Rate,
    /// The numbers a clover shows, written (`1-13-7`), in the order shown: with a 13; with a
    /// 12 and no 13; with neither.
    clover_wins: Vec<CloverText>,
    clover_twelves: Vec<CloverText>,
    clover_plain: Vec<CloverText>,
}

/// The numbers of a clover as written, and their length.
type CloverText = ([u8; 8], u8);

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
            losing_pairs: losing_pairs(
                params.letters.len(),
                Rate::new(params.near_miss.neighbour_rate),
            )
            .ok_or("symbols: a losing month needs two different symbols")?,
            twelve: Rate::new(params.near_miss.twelve_rate),
            clover_wins: clovers(CLOVER_WIN, CLOVER_MAX - 1),
            clover_twelves: clovers(CLOVER_MAX - 1, CLOVER_MAX - 2),
            clover_plain: clovers(0, CLOVER_MAX - 2),
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
    fn choose(&self, prize: Decimal, bits: &mut Bits) -> Result<Decomposition, SynthesisError> {
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
        // The plan is never empty and its weights are positive.
        let count = &plan.counts[weighted(bits, &plan.weights)];
        let form = &count.forms[bits.index(count.forms.len())];
        Ok(form.ways[bits.index(form.ways.len())])
    }
}

/// The pairs of different pictures a losing month may show, as indexes, with exact weights:
/// with chance `neighbours` two neighbours in the picture list (either order), else any two
/// different pictures. In units of 2⁻³² × 1 / (2n(n − 1)): a pair of neighbours weighs
/// r·n + 2(2³² − r), any other pair 2(2³² − r). `None` for fewer than two pictures.
fn losing_pairs(n: usize, neighbours: Rate) -> Option<Alias<[u8; 2]>> {
    let r = neighbours.units();
    let rest = 2 * ((1u64 << 32) - r);
    let mut entries = Vec::with_capacity(n * n);
    for a in 0..n {
        for b in 0..n {
            if a != b {
                let w = if a.abs_diff(b) == 1 {
                    r * n as u64 + rest
                } else {
                    rest
                };
                entries.push(([a as u8, b as u8], w));
            }
        }
    }
    Alias::new(&entries)
}

/// Every ordered triple of distinct clover numbers holding `first` (0: none) and two others
/// from 1 to `max`, written `a-b-c`.
fn clovers(first: u8, max: u8) -> Vec<CloverText> {
    let mut out = Vec::new();
    let mut write = |t: [u8; 3]| {
        let mut text = [0u8; 8];
        let mut len = 0;
        for (i, n) in t.into_iter().enumerate() {
            if i > 0 {
                text[len] = b'-';
                len += 1;
            }
            if n >= 10 {
                text[len] = b'0' + n / 10;
                len += 1;
            }
            text[len] = b'0' + n % 10;
            len += 1;
        }
        out.push((text, len as u8));
    };
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
                    write(t);
                }
            }
        }
    }
    out
}

impl CalendarSynthesizer {
    /// Appends a layout for `prize` to `out`.
    pub(super) fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        let bits = &mut Bits::new(rng);
        let way = self.choose(prize, bits)?;
        // Winning months at random positions: slot m holds the month-amount index + 1, 0 if the
        // month does not win.
        let mut winning = [0u8; MONTHS];
        for &amount in &way.months[..usize::from(way.month_count)] {
            loop {
                let m = bits.index(MONTHS);
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
                let s = self.letters[bits.index(self.letters.len())];
                out.extend_from_slice(&[s, s]);
                usize::from(slot - 1)
            } else {
                let [a, b] = self.losing_pairs.draw(bits);
                out.extend_from_slice(&[
                    self.letters[usize::from(a)],
                    self.letters[usize::from(b)],
                ]);
                bits.index(self.month_amounts.len())
            };
            out.push(b':');
            out.extend_from_slice(self.month_amounts.get(amount).1.as_bytes());
        }
        out.push(b'|');
        let (numbers, amount) = match way.clover {
            Some(amount) => (&self.clover_wins, usize::from(amount)),
            None => {
                let numbers = if bits.chance(self.twelve) {
                    &self.clover_twelves
                } else {
                    &self.clover_plain
                };
                (numbers, bits.index(self.clover_amounts.len()))
            }
        };
        // In random order, so the first number revealed says nothing.
        let (text, len) = &numbers[bits.index(numbers.len())];
        out.extend_from_slice(&text[..usize::from(*len)]);
        out.push(b':');
        out.extend_from_slice(self.clover_amounts.get(amount).1.as_bytes());
        Ok(())
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
    let weights = counts.iter().map(|c| c.weight).collect();
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
