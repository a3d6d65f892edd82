//! The La ruche d'or synthesizer: draws a natural-looking hive (and EXTRA hives) for a prize.
//!
//! A prize is first split into *components*: winning rows and honey-pot wins. All the ways of
//! making each prize with one to three components are listed once, at start-up (every
//! combination of up to three components weighed once for all the prizes); a ticket picks
//! a number of components (one most often), then one decomposition uniformly, then spreads the
//! components over the main hive and its EXTRA hives. Everything that does not win is drawn
//! from the same distributions on winners and losers (row amounts, near-miss rows with two `P`,
//! up to three honey pots, EXTRA symbols: the game's `near_miss` weights), so no part outside
//! the winning cells hints at the result.
//!
//! Generator 3 (SPEC §4) draws from tables built here once: the number of EXTRA hives and
//! the loose honey pots from exact alias tables ([`Table`]); each row, cells and all, from
//! the [`RowTable`] of its length and number of honey-pot and EXTRA cells (the `P` of a
//! non-winning row by the game's weights, the filler and the order of the cells, in two
//! draws); the prize's plan from its cents ([`PrizeIndex`]), with the weights of its forms for
//! each number of EXTRA hives worked out once.

use super::params::{RucheParams, MAX_EXTRA};
use crate::mechanic::draw::{Bits, PrizeIndex, Table};
use crate::mechanic::hive::{MAX_ROW_LEN, ROWS, ROW_LENGTHS, ROW_WIN};
use crate::mechanic::rows::{fill_slots, row_table, HiveText, RowTable, Text, SLOT};
use crate::mechanic::{BuildError, LayoutRng, SynthesisError, Ticker, Unshowable};
use crate::money::cents;
use rust_decimal::Decimal;
use rustc_hash::FxHashMap;

/// One part of a prize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Component {
    /// A winning row showing the amount of this index in the row table.
    Row(u8),
    /// A hive holding this many honey pots.
    Honey(u8),
}

/// Most components a prize is split into.
const MAX_PARTS: usize = 3;

/// One way to show a prize: one to [`MAX_PARTS`] components, in the order of the component
/// list (rows, then honey wins).
#[derive(Debug, Clone, Copy)]
struct Decomposition {
    parts: [Component; MAX_PARTS],
    len: u8,
}

impl Decomposition {
    fn parts(&self) -> &[Component] {
        &self.parts[..usize::from(self.len)]
    }

    fn honey_count(&self) -> usize {
        self.parts()
            .iter()
            .filter(|c| matches!(c, Component::Honey(_)))
            .count()
    }
}

/// Every way to show one prize.
#[derive(Debug, Clone)]
struct Plan {
    /// The decompositions, by number of components - 1, fewest honey wins first.
    by_size: [Vec<Decomposition>; MAX_PARTS],
    /// What to draw from, by the number of EXTRA hives drawn (0 to [`MAX_EXTRA`]).
    choices: [Choice; MAX_EXTRA + 1],
}

/// The forms of a prize that fit a number of hives.
#[derive(Debug, Clone, Copy, Default)]
struct Choice {
    /// EXTRA hives on the ticket: those drawn, or more when no form fits fewer (only a table
    /// without single-hive forms needs it).
    extras: usize,
    /// Weights of 1, 2, 3 components (`near_miss.part_weights`, zero where none fits).
    weights: [u32; MAX_PARTS],
    /// Decompositions of each size that fit (the first ones of `by_size`).
    usable: [usize; MAX_PARTS],
}

/// Draws La ruche d'or layouts for the prizes of one stake.
#[derive(Debug, Clone)]
pub struct RucheSynthesizer {
    /// The plan of each prize, found by its cents.
    prizes: PrizeIndex,
    plans: Vec<Plan>,
    /// EXTRA hives on a ticket.
    extras: Table<u8>,
    /// Honey pots in a hive that wins no honey (fewer than the smallest winning count).
    loose_pots: Table<u8>,
    /// Rows that do not win, by length and then by cells left for honey pots and `E`.
    losing: Vec<Vec<RowTable>>,
    /// Winning rows (three `P`), by length and then by cells left for honey pots and `E`.
    winning: Vec<Vec<RowTable>>,
    /// Each row amount's text and `:`.
    amounts: Vec<Text>,
}

impl RucheSynthesizer {
    /// Lists every decomposition of every prize of the table; an error names a prize that
    /// cannot be shown with the row amounts, honey table and `near_miss.part_weights` given.
    pub(super) fn new(params: &RucheParams, prizes: &[Decimal]) -> Result<Self, BuildError> {
        // Indexes fit a byte: `RucheParams` allows 64 row amounts and 10 honey pots.
        let mut components: Vec<(Component, Decimal)> = (0..params.rows.len())
            .map(|i| (Component::Row(i as u8), params.rows.get(i).0))
            .collect();
        for pots in 0..=params.max_honey {
            let win = params.honey_win(pots);
            if !win.is_zero() {
                components.push((Component::Honey(pots as u8), win));
            }
        }
        let mut all = decompositions(&components, prizes, &mut Ticker::default())?.into_iter();
        let part_weights = params.near_miss.part_weights;
        let mut plans = Vec::with_capacity(prizes.len());
        for &prize in prizes {
            let mut by_size = all.next().unwrap_or_default();
            for options in &mut by_size {
                options.sort_by_key(Decomposition::honey_count);
            }
            let showable = |k: usize| {
                by_size[k]
                    .first()
                    .is_some_and(|d| d.honey_count() <= MAX_EXTRA + 1)
            };
            if !(0..MAX_PARTS).any(showable) {
                return Err(Unshowable::NoRucheSum {
                    prize,
                    parts: MAX_PARTS,
                }
                .into());
            }
            if !(0..MAX_PARTS).any(|k| showable(k) && part_weights[k] > 0) {
                return Err(Unshowable::PartsWeighedZero {
                    prize,
                    parts: (0..MAX_PARTS)
                        .filter(|&k| showable(k))
                        .map(|k| k + 1)
                        .collect(),
                }
                .into());
            }
            let choices = std::array::from_fn(|drawn| choice(&by_size, drawn, &part_weights));
            plans.push(Plan { by_size, choices });
        }
        let nm = &params.near_miss;
        let extras = counts_table(&nm.extra_weights).ok_or(Unshowable::AllWeightsZero {
            key: "near_miss.extra_weights",
        })?;
        // Loose pots stay below the smallest winning count: more would win honey.
        let loose_limit = params.min_winning_pots().saturating_sub(1);
        let mut loose = [0u32; 4];
        for (pots, &w) in nm.loose_pots_weights.iter().enumerate() {
            loose[pots.min(loose_limit)] += w;
        }
        let loose_pots = counts_table(&loose).ok_or(Unshowable::AllWeightsZero {
            key: "near_miss.loose_pots_weights",
        })?;
        let mut losing = vec![Vec::new(); MAX_ROW_LEN + 1];
        let mut winning = vec![Vec::new(); MAX_ROW_LEN + 1];
        for &len in &ROW_LENGTHS {
            if !losing[len].is_empty() {
                continue;
            }
            for slots in 0..=len {
                // P on a row that does not win, capped by the cells left free.
                let free = len - slots;
                let mut w = [0u64; ROW_WIN];
                for (p, &weight) in nm.row_p_weights.iter().enumerate() {
                    w[p.min(free)] += u64::from(weight);
                }
                losing[len].push(row_table(len, &[(SLOT, slots)], &w).ok_or(
                    Unshowable::AllWeightsZero {
                        key: "near_miss.row_p_weights",
                    },
                )?);
                if slots + ROW_WIN <= len {
                    winning[len].push(
                        row_table(len, &[(b'P', ROW_WIN), (SLOT, slots)], &[1])
                            .ok_or(Unshowable::RowUndrawable { winning: true })?,
                    );
                }
            }
        }
        let amounts = (0..params.rows.len())
            .map(|i| Text::new(params.rows.get(i).1, b':'))
            .collect::<Result<_, _>>()?;
        Ok(RucheSynthesizer {
            prizes: PrizeIndex::new(prizes),
            plans,
            extras,
            loose_pots,
            losing,
            winning,
            amounts,
        })
    }

    /// Appends a layout for `prize` to `out`.
    pub(super) fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        let bits = &mut Bits::new(rng);
        // The number of EXTRA hives is drawn as for a loser, so that EXTRA symbols say
        // nothing.
        let mut extras = usize::from(self.extras.draw(bits));
        // Components assigned to hives: rows (amount index) and honey pots per hive.
        let mut rows: [[Option<usize>; ROWS]; MAX_EXTRA + 1] = [[None; ROWS]; MAX_EXTRA + 1];
        let mut pots: [Option<usize>; MAX_EXTRA + 1] = [None; MAX_EXTRA + 1];
        if !prize.is_zero() {
            let plan = self
                .prizes
                .find(prize)
                .map(|i| &self.plans[i])
                .ok_or(SynthesisError::NotAPrize { prize })?;
            // A hive wins honey once, so only the decompositions that fit are drawn.
            let choice = &plan.choices[extras];
            extras = choice.extras;
            // `new` made sure some weighted form fits MAX_EXTRA + 1 hives.
            let k = bits.pick(&choice.weights);
            let parts = &plan.by_size[k][bits.uniform_index(choice.usable[k])];
            let hives = extras + 1;
            let mut honey_hives = 0;
            for part in parts.parts() {
                match *part {
                    Component::Honey(n) => {
                        let n = usize::from(n);
                        // A hive without honey yet, uniformly.
                        let mut x = bits.uniform_index(hives - honey_hives);
                        for slot in pots.iter_mut().take(hives) {
                            if slot.is_none() {
                                if x == 0 {
                                    *slot = Some(n);
                                    break;
                                }
                                x -= 1;
                            }
                        }
                        honey_hives += 1;
                    }
                    Component::Row(i) => {
                        let i = usize::from(i);
                        let h = bits.uniform_index(hives);
                        // Find a free row in that hive at random (at most 3 rows are taken).
                        loop {
                            let r = bits.uniform_index(ROWS);
                            if rows[h][r].is_none() {
                                rows[h][r] = Some(i);
                                break;
                            }
                        }
                    }
                }
            }
        }
        for h in 0..=extras {
            if h > 0 {
                out.push(b'|');
            }
            let e = if h == 0 { extras } else { 0 };
            self.hive(bits, &rows[h], pots[h], e, out);
        }
        Ok(())
    }

    /// Writes one hive: the given winning rows, `pots` honey pots if it wins honey (else loose
    /// ones), and `e` EXTRA symbols.
    fn hive(
        &self,
        bits: &mut Bits,
        winning: &[Option<usize>; ROWS],
        pots: Option<usize>,
        e: usize,
        out: &mut Vec<u8>,
    ) {
        let h = pots.unwrap_or_else(|| usize::from(self.loose_pots.draw(bits)));
        // Spread the H and E cells over the cells the winning rows leave free, uniformly.
        let mut special = [[0usize; 2]; ROWS];
        let mut free: [usize; ROWS] = [0; ROWS];
        for r in 0..ROWS {
            free[r] = ROW_LENGTHS[r] - if winning[r].is_some() { ROW_WIN } else { 0 };
        }
        let mut total: usize = free.iter().sum();
        for (kind, count) in [(0, h), (1, e)] {
            for _ in 0..count {
                let mut x = bits.uniform_index(total);
                for r in 0..ROWS {
                    if x < free[r] {
                        special[r][kind] += 1;
                        free[r] -= 1;
                        break;
                    }
                    x -= free[r];
                }
                total -= 1;
            }
        }
        let mut text = HiveText::new();
        for (r, &len) in ROW_LENGTHS.iter().enumerate() {
            if r > 0 {
                text.byte(b'/');
            }
            let [hs, es] = special[r];
            let (amount, mut cells) = match winning[r] {
                Some(i) => (i, self.winning[len][hs + es].draw(bits)),
                None => (
                    bits.uniform_index(self.amounts.len()),
                    self.losing[len][hs + es].draw(bits),
                ),
            };
            if hs + es > 0 {
                fill_slots(&mut cells[..len], (b'H', hs), (b'E', es), bits);
            }
            text.text(&self.amounts[amount]);
            text.cells(&cells, len);
        }
        text.flush(out);
    }
}

/// The forms of a plan that fit `drawn` EXTRA hives (or the fewest more that some form fits).
fn choice(
    by_size: &[Vec<Decomposition>; MAX_PARTS],
    drawn: usize,
    part_weights: &[u32; MAX_PARTS],
) -> Choice {
    let mut c = Choice {
        extras: drawn,
        ..Choice::default()
    };
    loop {
        for (k, options) in by_size.iter().enumerate() {
            c.usable[k] = options.partition_point(|d| d.honey_count() <= c.extras + 1);
            c.weights[k] = if c.usable[k] > 0 { part_weights[k] } else { 0 };
        }
        if c.weights.iter().any(|&w| w > 0) || c.extras == MAX_EXTRA {
            return c;
        }
        c.extras += 1;
    }
}

/// An alias table over the counts `0..weights.len()` (`None` if every weight is zero).
fn counts_table(weights: &[u32]) -> Option<Table<u8>> {
    let entries: Vec<(u8, u64)> = (0u8..)
        .zip(weights)
        .map(|(i, &w)| (i, u64::from(w)))
        .collect();
    Table::new(&entries)
}

/// The decompositions of every prize (by its index in `prizes`), by number of components - 1:
/// every multiset of one to [`MAX_PARTS`] components (non-decreasing indexes into
/// `components`) whose values add up to the prize, in lexicographic order of their indexes.
///
/// Each multiset of components is weighed once, whatever the number of prizes: its sum is
/// looked up among the prizes' whole cents (a multiset makes at most one prize). So the work is
/// C(c + 2, 3) steps for `c` components (at most 64 row amounts and 10 honey wins: 70 300),
/// and a signal stops it. (It was a search per prize in decimals, 254 times as many steps.)
fn decompositions(
    components: &[(Component, Decimal)],
    prizes: &[Decimal],
    ticker: &mut Ticker,
) -> Result<Vec<[Vec<Decomposition>; MAX_PARTS]>, BuildError> {
    let values: Vec<u64> = components
        .iter()
        .map(|&(_, v)| cents(v).ok_or_else(|| not_cents(v)))
        .collect::<Result<_, _>>()?;
    let mut by_cents: FxHashMap<u64, usize> = FxHashMap::default();
    for (i, &p) in prizes.iter().enumerate() {
        by_cents.insert(cents(p).ok_or_else(|| not_cents(p))?, i);
    }
    let top = by_cents.keys().copied().max().unwrap_or(0);
    let mut out: Vec<[Vec<Decomposition>; MAX_PARTS]> = vec![Default::default(); prizes.len()];
    let mut found = |picked: &[usize], sum: u64| {
        if let Some(&p) = by_cents.get(&sum) {
            let mut d = Decomposition {
                parts: [components[picked[0]].0; MAX_PARTS],
                len: picked.len() as u8,
            };
            for (slot, &i) in d.parts.iter_mut().zip(picked) {
                *slot = components[i].0;
            }
            out[p][picked.len() - 1].push(d);
        }
    };
    let n = values.len();
    // Values are positive: a partial sum above the largest prize makes no prize.
    for i in 0..n {
        let a = values[i];
        if a > top {
            continue;
        }
        found(&[i], a);
        for j in i..n {
            let b = a + values[j];
            if b > top {
                continue;
            }
            found(&[i, j], b);
            for (l, &v) in values.iter().enumerate().skip(j) {
                ticker.tick()?;
                if b + v <= top {
                    found(&[i, j, l], b + v);
                }
            }
        }
    }
    Ok(out)
}

#[cold]
fn not_cents(amount: Decimal) -> BuildError {
    Unshowable::NotWholeCents { amount }.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The search per prize, in decimals, that [`decompositions`] replaced (generator 3 as
    /// first written): the reference its lists must equal, one for one and in order.
    fn reference(
        components: &[(Component, Decimal)],
        prize: Decimal,
    ) -> [Vec<Vec<Component>>; MAX_PARTS] {
        fn collect(
            components: &[(Component, Decimal)],
            from: usize,
            left: Decimal,
            stack: &mut Vec<Component>,
            out: &mut [Vec<Vec<Component>>; MAX_PARTS],
        ) {
            if left.is_zero() {
                if !stack.is_empty() {
                    out[stack.len() - 1].push(stack.clone());
                }
                return;
            }
            if stack.len() == MAX_PARTS {
                return;
            }
            for (i, &(c, v)) in components.iter().enumerate().skip(from) {
                if v <= left {
                    stack.push(c);
                    collect(components, i, left - v, stack, out);
                    stack.pop();
                }
            }
        }
        let mut out: [Vec<Vec<Component>>; MAX_PARTS] = Default::default();
        collect(components, 0, prize, &mut Vec::new(), &mut out);
        out
    }

    fn in_euros(cents: u64) -> Decimal {
        Decimal::new(cents as i64, 2)
    }

    /// The lists of the largest definition SPEC §6.1 allows (64 row amounts, 10 honey wins,
    /// 254 prizes a cent apart) are made, and a signal stops their making.
    #[test]
    fn a_signal_stops_the_decompositions_of_the_largest_lists() {
        let mut components: Vec<(Component, Decimal)> = (0..64)
            .map(|i| (Component::Row(i as u8), in_euros(2 + 2 * i)))
            .collect();
        components.extend((1..=10).map(|p| (Component::Honey(p as u8), in_euros(2 * p - 1))));
        let prizes: Vec<Decimal> = (1..=254).map(in_euros).collect();
        let all = decompositions(&components, &prizes, &mut Ticker::default()).unwrap();
        assert!(all.iter().all(|p| p.iter().any(|s| !s.is_empty())));
        assert!(matches!(
            decompositions(&components, &prizes, &mut Ticker::signalled()),
            Err(BuildError::Interrupted(_))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever the amounts (equal ones too) and the prizes, the decompositions weighed
        /// once for all the prizes are those the search per prize found, in the same order:
        /// the draws, and so the layouts, are the same.
        #[test]
        fn decompositions_are_those_of_the_search_per_prize(
            rows in prop::collection::vec(1u64..60, 1..14),
            honey in prop::collection::vec(1u64..60, 0..5),
            prizes in prop::collection::btree_set(1u64..150, 1..12),
        ) {
            let mut components: Vec<(Component, Decimal)> = rows
                .iter()
                .enumerate()
                .map(|(i, &c)| (Component::Row(i as u8), in_euros(c)))
                .collect();
            components.extend(
                honey.iter().enumerate().map(|(i, &c)| (Component::Honey(4 + i as u8), in_euros(c))),
            );
            let prizes: Vec<Decimal> = prizes.into_iter().rev().map(in_euros).collect();
            let got = decompositions(&components, &prizes, &mut Ticker::default()).unwrap();
            for (p, &prize) in prizes.iter().enumerate() {
                let expected = reference(&components, prize);
                for k in 0..MAX_PARTS {
                    let found: Vec<Vec<Component>> =
                        got[p][k].iter().map(|d| d.parts().to_vec()).collect();
                    prop_assert_eq!(&found, &expected[k], "prize {} size {}", prize, k + 1);
                }
            }
        }
    }
}
