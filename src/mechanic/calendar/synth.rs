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
use crate::mechanic::{BuildError, LayoutRng, SynthesisError, Ticker, Unshowable};
use crate::money::{cents, AmountTable};
use rust_decimal::Decimal;
use rustc_hash::FxHashMap;

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

/// Every list of `k` month amounts (indexes into `month_amounts`, non-decreasing) whose sum
/// some way of showing a prize needs, for `k` from 1 to `max_winning_months`: sorted by sum,
/// then in lexicographic order. The ways of a form are runs of these lists ([`Run`]), so a
/// way is stored once however many prizes and clover amounts share it.
#[derive(Debug, Clone, Default)]
struct MonthLists {
    /// `lists[k - 1]`: the lists of `k` amounts.
    lists: Vec<Vec<[u8; MAX_WINNING_MONTHS]>>,
    /// `starts[k - 1][t]..starts[k - 1][t + 1]`: where the lists of `k` amounts adding up to
    /// target `t` (an index into `targets`) are.
    starts: Vec<Vec<u32>>,
    /// Every sum a prize needs of its months (the prize, or the prize less a clover amount),
    /// ascending.
    targets: Vec<u64>,
}

impl MonthLists {
    /// The run of lists of `k` amounts adding up to `sum` cents (empty if none).
    fn run(&self, k: usize, sum: u64) -> std::ops::Range<u32> {
        match self.targets.binary_search(&sum) {
            Ok(t) => self.starts[k - 1][t]..self.starts[k - 1][t + 1],
            Err(_) => 0..0,
        }
    }
}

/// Some ways of a form: the month lists `lists[month_count - 1][range]` (none when the form
/// has no month), each with the clover amount `clover`.
#[derive(Debug, Clone)]
struct Run {
    clover: Option<u8>,
    range: std::ops::Range<u32>,
}

impl Run {
    fn len(&self, month_count: usize) -> usize {
        match month_count {
            0 => 1,
            _ => (self.range.end - self.range.start) as usize,
        }
    }
}

/// All decompositions with the same number of winning months and clover: the runs in order
/// (no clover, or by clover amount ascending), each in lexicographic order of the months.
#[derive(Debug, Clone)]
struct Form {
    month_count: usize,
    clover: bool,
    runs: Vec<Run>,
    /// How many ways the runs hold in all.
    ways: usize,
}

impl Form {
    /// The `way`-th decomposition of the form (`way` < `self.ways`).
    fn way(&self, lists: &MonthLists, mut way: usize) -> Decomposition {
        let k = self.month_count;
        for run in &self.runs {
            let len = run.len(k);
            if way < len {
                let months = match k {
                    0 => [0; MAX_WINNING_MONTHS],
                    _ => lists.lists[k - 1][run.range.start as usize + way],
                };
                return Decomposition {
                    months,
                    month_count: k as u8,
                    clover: run.clover,
                };
            }
            way -= len;
        }
        // Not reached: `way` is drawn below `self.ways`, the sum of the runs' lengths.
        Decomposition {
            months: [0; MAX_WINNING_MONTHS],
            month_count: 0,
            clover: self.runs.last().and_then(|r| r.clover),
        }
    }
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
    /// The month amounts of the plans' ways.
    lists: MonthLists,
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
    pub(super) fn new(params: &CalendarParams, prizes: &[Decimal]) -> Result<Self, BuildError> {
        let prize_cents: Vec<u64> = prizes
            .iter()
            .map(|&p| cents(p).ok_or_else(|| not_cents(p)))
            .collect::<Result<_, _>>()?;
        let months = amounts_in_cents(&params.month_amounts)?;
        let clover_cents = amounts_in_cents(&params.clover_amounts)?;
        let lists = month_lists(
            &months,
            &clover_cents,
            &prize_cents,
            params.max_winning_months,
            &mut Ticker::default(),
        )?;
        let mut plans = Vec::with_capacity(prizes.len());
        for (&prize, &target) in prizes.iter().zip(&prize_cents) {
            let plan = plan(
                prize,
                target,
                &clover_cents,
                &lists,
                params.max_winning_months,
            )
            .ok_or(Unshowable::NoCalendarSum {
                prize,
                max_winning_months: params.max_winning_months,
            })?;
            plans.push(plan);
        }
        let too_long = |key: &'static str| Unshowable::AmountTooLong { key };
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
            lists,
            index: PrizeIndex::new(prizes),
            letters: letters.len(),
            month_amounts: month_texts.len(),
            winning_months,
            losing_months: Table::new(&losing).ok_or(Unshowable::NoLosingMonth)?,
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
            .ok_or(SynthesisError::NotAPrize { prize })?;
        // The plan is never empty and its weights are positive.
        let count = &plan.counts[bits.pick(&plan.weights)];
        let form = &count.forms[bits.uniform_index(count.forms.len())];
        Ok(form.way(&self.lists, bits.uniform_index(form.ways)))
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

/// The amounts of a table in whole cents, in its order (ascending).
fn amounts_in_cents(table: &AmountTable) -> Result<Vec<u64>, BuildError> {
    table
        .values()
        .map(|a| cents(a).ok_or_else(|| not_cents(a)))
        .collect()
}

#[cold]
fn not_cents(amount: Decimal) -> BuildError {
    Unshowable::NotWholeCents { amount }.into()
}

/// The month lists that the ways of the prizes `prizes` (cents) need: every non-decreasing
/// list of 1 to `max_months` indexes into `months` (cents, ascending) adding up to a prize, or
/// to a prize less one of `clovers`.
///
/// Each list of amounts is weighed once for all the prizes and clover amounts, its sum looked
/// up among the sums they need; a branch stops as soon as its smallest completion is above the
/// largest of those. So the work is at most the number of lists, C(n + m, m) - 1 for `n`
/// amounts and `m` months (2 760 680 at the limits of SPEC §6.1, 32 amounts and 6 months),
/// whatever the number of prizes and clover amounts, and what is kept is at most that many
/// lists of 6 bytes. (It was a search per prize and clover amount, in decimals, and every way
/// was stored for each: up to 254 × 33 times as much.)
fn month_lists(
    months: &[u64],
    clovers: &[u64],
    prizes: &[u64],
    max_months: usize,
    ticker: &mut Ticker,
) -> Result<MonthLists, BuildError> {
    let mut targets: Vec<u64> = Vec::with_capacity(prizes.len() * (clovers.len() + 1));
    for &p in prizes {
        targets.push(p);
        targets.extend(clovers.iter().filter(|&&c| c < p).map(|&c| p - c));
    }
    targets.sort_unstable();
    targets.dedup();
    let index: FxHashMap<u64, u32> = targets
        .iter()
        .enumerate()
        .map(|(t, &sum)| (sum, t as u32))
        .collect();
    let top = targets.last().copied().unwrap_or(0);
    let mut out = MonthLists {
        targets,
        ..MonthLists::default()
    };
    for k in 1..=max_months {
        // (target, list), in lexicographic order of the lists.
        let mut found: Vec<(u32, [u8; MAX_WINNING_MONTHS])> = Vec::new();
        let mut list = [0u8; MAX_WINNING_MONTHS];
        lists_of(
            months,
            k,
            0,
            0,
            0,
            top,
            &mut list,
            &mut |sum, list| {
                if let Some(&t) = index.get(&sum) {
                    found.push((t, *list));
                }
            },
            ticker,
        )?;
        // By target, keeping the lexicographic order within one (a counting sort).
        let mut starts = vec![0u32; out.targets.len() + 1];
        for &(t, _) in &found {
            starts[t as usize + 1] += 1;
        }
        for t in 0..out.targets.len() {
            starts[t + 1] += starts[t];
        }
        let mut next = starts.clone();
        let mut lists = vec![[0u8; MAX_WINNING_MONTHS]; found.len()];
        for (t, list) in found {
            lists[next[t as usize] as usize] = list;
            next[t as usize] += 1;
        }
        out.lists.push(lists);
        out.starts.push(starts);
    }
    Ok(out)
}

/// Calls `found` with every non-decreasing list of `k` indexes into `amounts` (ascending)
/// whose first `depth` are in `list` (adding up to `sum`) and the rest from `from` on, with its
/// sum, in lexicographic order; none whose sum is above `top`.
#[allow(clippy::too_many_arguments)]
fn lists_of(
    amounts: &[u64],
    k: usize,
    depth: usize,
    from: usize,
    sum: u64,
    top: u64,
    list: &mut [u8; MAX_WINNING_MONTHS],
    found: &mut dyn FnMut(u64, &[u8; MAX_WINNING_MONTHS]),
    ticker: &mut Ticker,
) -> Result<(), BuildError> {
    let left = (k - depth) as u64;
    for (i, &a) in amounts.iter().enumerate().skip(from) {
        // Ascending amounts: the rest of the list is at least `left` times this one.
        if sum + left * a > top {
            break;
        }
        ticker.tick()?;
        // At most 32 amounts: the index fits.
        list[depth] = i as u8;
        if depth + 1 == k {
            found(sum + a, list);
        } else {
            lists_of(amounts, k, depth + 1, i, sum + a, top, list, found, ticker)?;
        }
    }
    Ok(())
}

/// Every way to show `prize` (`target` cents), grouped by number of components; `None` if
/// there is none. The ways of a form are: with months alone, the lists of `lists` adding up to
/// the prize; with the clover, for each clover amount in turn (ascending), the lists adding up
/// to the rest (or the clover alone when it is the prize).
fn plan(
    prize: Decimal,
    target: u64,
    clovers: &[u64],
    lists: &MonthLists,
    max_months: usize,
) -> Option<Plan> {
    let mut counts: Vec<ComponentCount> = Vec::new();
    for (n, &weight) in COMPONENT_WEIGHTS
        .iter()
        .enumerate()
        .take(max_months + 2)
        .skip(1)
    {
        let mut forms = Vec::new();
        for clover in [false, true] {
            let month_count = n - usize::from(clover);
            if month_count > max_months {
                continue;
            }
            let runs: Vec<Run> = if clover {
                // At most 32 clover amounts: the index fits.
                (0..clovers.len())
                    .filter_map(|c| {
                        let rest = target.checked_sub(clovers[c])?;
                        let range = match (month_count, rest) {
                            (0, 0) => 0..1,
                            (0, _) | (_, 0) => return None,
                            (k, rest) => lists.run(k, rest),
                        };
                        Some(Run {
                            clover: Some(c as u8),
                            range,
                        })
                    })
                    .collect()
            } else {
                vec![Run {
                    clover: None,
                    range: lists.run(month_count, target),
                }]
            };
            let runs: Vec<Run> = runs.into_iter().filter(|r| !r.range.is_empty()).collect();
            let ways = runs.iter().map(|r| r.len(month_count)).sum();
            if ways > 0 {
                forms.push(Form {
                    month_count,
                    clover,
                    runs,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanic::calendar::NearMiss;
    use proptest::prelude::*;

    /// A plan written out: (weight, [(winning months, clover, every way)]) by number of
    /// components.
    type Written = Vec<(u32, Vec<(usize, bool, Vec<Decomposition>)>)>;

    /// The search per prize, in decimals, that [`month_lists`] and [`plan`] replaced
    /// (generator 3 as first written): the plan of `prize`, written out.
    fn reference(prize: Decimal, params: &CalendarParams) -> Written {
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
                if a > target {
                    break;
                }
                current.push(i as u8);
                sums(amounts, i, target - a, left - 1, current, found);
                current.pop();
            }
        }
        let months: Vec<Decimal> = params.month_amounts.values().collect();
        let max_months = params.max_winning_months;
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
            sums(
                &months,
                0,
                rest,
                max_months,
                &mut Vec::new(),
                &mut |chosen| {
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
                },
            );
        }
        let mut counts = Vec::new();
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
                    forms.push((month_count, clover, ways));
                }
            }
            if !forms.is_empty() {
                counts.push((weight, forms));
            }
        }
        counts
    }

    fn in_euros(cents: u64) -> Decimal {
        Decimal::new(cents as i64, 2)
    }

    /// The month lists of the largest definition SPEC §6.1 allows (32 month and 32 clover
    /// amounts, 6 winning months, 254 prizes a cent apart) are made, and a signal stops their
    /// making.
    #[test]
    fn a_signal_stops_the_month_lists_of_the_largest_lists() {
        let months: Vec<u64> = (1..=32).collect();
        let clovers: Vec<u64> = (33..=64).collect();
        let prizes: Vec<u64> = (1..=254).collect();
        let lists = month_lists(&months, &clovers, &prizes, 6, &mut Ticker::default()).unwrap();
        // Every list of 6 amounts (C(37, 6) of them) adds up to a prize: 6 to 192 cents.
        assert_eq!(lists.lists[5].len(), 2_324_784);
        assert!(matches!(
            month_lists(&months, &clovers, &prizes, 6, &mut Ticker::signalled()),
            Err(BuildError::Interrupted(_))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever the amounts and the prizes, the ways of every form, read from the month
        /// lists weighed once for all the prizes, are those the search per prize found, in the
        /// same order: the draws, and so the layouts, are the same.
        #[test]
        fn ways_are_those_of_the_search_per_prize(
            months in prop::collection::btree_set(1u64..30, 1..9),
            clovers in prop::collection::btree_set(1u64..30, 1..5),
            prizes in prop::collection::btree_set(1u64..90, 1..8),
            max_months in 1usize..=MAX_WINNING_MONTHS,
        ) {
            let params = CalendarParams {
                letters: b"AB".to_vec(),
                pictures: vec!["a".into(), "b".into()],
                month_amounts: AmountTable::new(months.iter().map(|&c| in_euros(c))),
                clover_amounts: AmountTable::new(clovers.iter().map(|&c| in_euros(c))),
                max_winning_months: max_months,
                near_miss: NearMiss::default(),
            };
            let prize_cents: Vec<u64> = prizes.iter().rev().copied().collect();
            let month_cents = amounts_in_cents(&params.month_amounts).unwrap();
            let clover_cents = amounts_in_cents(&params.clover_amounts).unwrap();
            let lists = month_lists(&month_cents, &clover_cents, &prize_cents, max_months, &mut Ticker::default()).unwrap();
            for &c in &prize_cents {
                let prize = in_euros(c);
                let expected = reference(prize, &params);
                let got: Written =
                    plan(prize, c, &clover_cents, &lists, max_months)
                        .map(|p| p.counts)
                        .unwrap_or_default()
                        .iter()
                        .map(|count| {
                            let forms = count
                                .forms
                                .iter()
                                .map(|f| {
                                    let ways = (0..f.ways).map(|w| f.way(&lists, w)).collect();
                                    (f.month_count, f.clover, ways)
                                })
                                .collect();
                            (count.weight, forms)
                        })
                        .collect();
                prop_assert_eq!(&got, &expected, "prize {}", prize);
            }
        }
    }

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
