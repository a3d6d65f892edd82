//! Draws natural-looking Maxi layouts for a given prize.
//!
//! At construction every prize of the stake's table is broken down, once, into the ways it can
//! be shown: up to three winning components (a row, a row with a multiplier, a bee) spread over
//! the main and the EXTRA hive, or the bonus stage. Per ticket the synthesizer picks the number
//! of components, then a shape (`row + bee`...), then uniformly one decomposition of that shape,
//! so simple forms dominate while every form appears.
//!
//! Everything that is not a winning part is drawn from one distribution whatever the prize:
//! whether there is an EXTRA hive, the amounts on non-winning rows and on hive tops without a
//! bee, the `P` count and multipliers of non-winning rows, the filler. So the cells a player
//! reveals first never give the result away. The chances of those parts are the game's
//! `near_miss` settings.
//!
//! Generator 3 (SPEC §4) draws from tables built here once: the `P` count and multiplier of
//! a non-winning row in one draw from an exact alias table ([`Table`]); each row's cells, in
//! order, from the [`RowTable`] of its kind (its `P`, its multiplier, the cells left for a bee
//! and an `E`; the filler and the order in two draws); a bonus stage from the list of all its
//! strings; the prize's plan from its cents ([`PrizeIndex`]).

use super::params::{MaxiParams, BONUS_CELLS, MULTIPLIERS};
use crate::mechanic::draw::{Bits, PrizeIndex, Rate, Table};
use crate::mechanic::hive::{MAX_ROW_LEN, ROWS, ROW_LENGTHS, ROW_WIN};
use crate::mechanic::rows::{fill_slots, row_table, HiveText, RowTable, Text, MULT, SLOT};
use crate::mechanic::{BuildError, LayoutRng, SynthesisError, Ticker, Unshowable};
use crate::money::cents;
use rust_decimal::Decimal;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
/// Weights of showing a prize with 1, 2, 3 winning components: simple tickets dominate.
const COMPONENT_WEIGHTS: [u32; MAX_COMPONENTS] = [8, 4, 1];
/// Weight of a plain winning row in a shape's weight (the product over its components):
/// plain rows are the simplest to read.
const PLAIN_ROW_WEIGHT: u32 = 3;
/// Weight of a row with a multiplier in a shape's weight.
const MULT_ROW_WEIGHT: u32 = 2;
/// Weight of a bee in a shape's weight.
const BEE_WEIGHT: u32 = 2;
/// Weights of keeping several parts in the main hive, moving one to the EXTRA hive, moving all.
const PLACEMENT_WEIGHTS: [u32; 3] = [2, 2, 1];
/// Most winning components on one ticket: enough for variety, few enough to keep forms modest.
const MAX_COMPONENTS: usize = 3;

/// Builds Maxi Ruche d'or layouts for one stake.
#[derive(Debug, Clone)]
pub struct MaxiSynthesizer {
    /// The plan of each prize, found by its cents.
    prizes: PrizeIndex,
    plans: Vec<Plan>,
    /// Chance of an EXTRA hive, for every prize.
    extra: Rate,
    /// Weight of the bonus stage among the forms of a prize it pays.
    bonus_weight: u32,
    /// `P` count and multiplier (index in `MULTIPLIERS` + 1, or 0) of a row that does not win.
    row_kind: Table<(u8, u8)>,
    /// Rows by [`row_kind_index`] of (length, `P`, multiplier or not), then by cells left for
    /// a bee and an `E` (0 to 2).
    rows: Vec<Vec<RowTable>>,
    /// Bees of a losing bonus stage: up to one fewer than win, more often near it (three bees
    /// when four win: so close).
    loser_bees: Table<u8>,
    /// Every bonus stage (`+` and its cells) with `n` bees, by `n`, in the order of their
    /// bit masks (cell `i` is bit `i`).
    bonus_stages: Vec<Vec<[u8; BONUS_CELLS + 1]>>,
    /// Each row amount's text and `:`.
    row_amounts: Vec<Text>,
    /// Each bee amount's text and `#`.
    bee_amounts: Vec<Text>,
}

/// Where the rows of a kind are in [`MaxiSynthesizer::rows`].
fn row_kind_index(len: usize, p: usize, multiplied: bool) -> usize {
    (len * (ROW_WIN + 1) + p) * 2 + usize::from(multiplied)
}

/// One winning part of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Comp {
    /// A row of 3 `P` showing `row_amounts[amount]`, with `MULTIPLIERS[mult - 1]` if `mult > 0`.
    Row { amount: u8, mult: u8 },
    /// A bee in a hive showing `bee_amounts[amount]` at its top.
    Bee { amount: u8 },
}

/// A multiset of components adding up to a prize.
#[derive(Debug, Clone, Copy)]
struct Decomp {
    comps: [Comp; MAX_COMPONENTS],
    len: u8,
}

/// Decompositions of one shape, e.g. all the `row + bee` ways to show 50 €.
#[derive(Debug, Clone)]
struct Shape {
    weight: u32,
    /// Two bees need two hives, so this shape is only drawn when an EXTRA hive is open.
    needs_extra: bool,
    decomps: Vec<Decomp>,
}

/// Every way to show one prize.
#[derive(Debug, Clone)]
struct Plan {
    /// Bees of the bonus stage that win exactly this prize, if any.
    bonus_bees: Option<usize>,
    /// Shapes by number of components minus one.
    shapes: [Vec<Shape>; MAX_COMPONENTS],
}

/// The winning parts placed in one hive.
#[derive(Debug, Clone, Copy, Default)]
struct HiveSpec {
    /// Winning row at each position: (amount index, multiplier index + 1 or 0).
    rows: [Option<(u8, u8)>; ROWS],
    bee: Option<u8>,
    has_e: bool,
}

impl MaxiSynthesizer {
    /// Builds the synthesizer and plans every prize of the stake's table; the message names the
    /// parameter that makes a prize impossible to show.
    pub(super) fn new(params: &MaxiParams, prizes: &[Decimal]) -> Result<Self, BuildError> {
        let comps = components(params);
        let mut all = decompositions(&comps, prizes, &mut Ticker::default())?.into_iter();
        let mut plans = Vec::with_capacity(prizes.len());
        for &prize in prizes {
            let bonus_bees = (1..params.bonus.len()).find(|&n| params.bonus[n] == prize);
            let shapes = all.next().unwrap_or_default();
            let plan = Plan { bonus_bees, shapes };
            let bonus_weight = params.near_miss.bonus_weight;
            if plan.bonus_bees.is_some()
                && bonus_weight == 0
                && plan.class_weights(false, 1).iter().any(|&w| w > 0)
                && plan.class_weights(false, 0).iter().all(|&w| w == 0)
            {
                return Err(Unshowable::BonusWeighedZero { prize }.into());
            }
            // The E is drawn alike for every prize, so each prize must be showable without it.
            if plan
                .class_weights(false, bonus_weight)
                .iter()
                .all(|&w| w == 0)
            {
                return Err(Unshowable::NoMaxiSum {
                    prize,
                    components: MAX_COMPONENTS,
                }
                .into());
            }
            plans.push(plan);
        }
        let nm = &params.near_miss;
        // (P, multiplier) of a non-winning row: P by the weights, a multiplier with the rate
        // (in units of 2^-32), then one of the six alike.
        let rate = Rate::new(nm.row_multiplier_rate).units();
        let mut kinds = Vec::new();
        for (p, &wp) in (0u8..).zip(&nm.row_p_weights) {
            kinds.push((
                (p, 0),
                u64::from(wp) * ((1u64 << 32) - rate) * MULTIPLIERS.len() as u64,
            ));
            for m in 1..=MULTIPLIERS.len() as u8 {
                kinds.push(((p, m), u64::from(wp) * rate));
            }
        }
        let row_kind = Table::new(&kinds).ok_or(Unshowable::AllWeightsZero {
            key: "near_miss.row_p_weights",
        })?;
        let mut rows = vec![Vec::new(); row_kind_index(MAX_ROW_LEN + 1, 0, false)];
        for &len in &ROW_LENGTHS {
            for p in 0..=ROW_WIN {
                for multiplied in [false, true] {
                    let at = row_kind_index(len, p, multiplied);
                    let fixed = usize::from(multiplied) + p;
                    if !rows[at].is_empty() || fixed > len {
                        continue;
                    }
                    for slots in 0..=2.min(len - fixed) {
                        rows[at].push(
                            row_table(
                                len,
                                &[(b'P', p), (MULT, usize::from(multiplied)), (SLOT, slots)],
                                &[1],
                            )
                            .ok_or(Unshowable::RowUndrawable { winning: false })?,
                        );
                    }
                }
            }
        }
        let loser_max_bees = params.bonus_min - 1;
        let loser_weights: Vec<(u8, u64)> = (0..=loser_max_bees as u8)
            .map(|n| (n, u64::from(n) + 1))
            .collect();
        let bonus_stages = (0..=BONUS_CELLS)
            .map(|n| {
                (0u16..1 << BONUS_CELLS)
                    .filter(|m| m.count_ones() as usize == n)
                    .map(|m| {
                        let mut stage = [b'.'; BONUS_CELLS + 1];
                        stage[0] = b'+';
                        for (i, cell) in stage[1..].iter_mut().enumerate() {
                            if m >> i & 1 == 1 {
                                *cell = b'Q';
                            }
                        }
                        stage
                    })
                    .collect()
            })
            .collect();
        Ok(MaxiSynthesizer {
            prizes: PrizeIndex::new(prizes),
            extra: Rate::new(nm.extra_rate),
            bonus_weight: nm.bonus_weight,
            row_kind,
            rows,
            loser_bees: Table::new(&loser_weights).ok_or(Unshowable::NoLosingBonus)?,
            bonus_stages,
            row_amounts: (0..params.rows.len())
                .map(|i| Text::new(params.rows.get(i).1, b':'))
                .collect::<Result<_, _>>()?,
            bee_amounts: (0..params.bees.len())
                .map(|i| Text::new(params.bees.get(i).1, b'#'))
                .collect::<Result<_, _>>()?,
            plans,
        })
    }
}

/// Every single component with its value.
fn components(params: &MaxiParams) -> Vec<(Comp, Decimal)> {
    let mut comps = Vec::new();
    for (i, amount) in params.rows.values().enumerate() {
        // Indices fit in a byte: MaxiParams refuses longer tables.
        let i = i as u8;
        comps.push((Comp::Row { amount: i, mult: 0 }, amount));
        for (m, (_, factor)) in MULTIPLIERS.iter().enumerate() {
            comps.push((
                Comp::Row {
                    amount: i,
                    mult: m as u8 + 1,
                },
                amount * Decimal::from(*factor),
            ));
        }
    }
    for (i, amount) in params.bees.values().enumerate() {
        comps.push((Comp::Bee { amount: i as u8 }, amount));
    }
    comps
}

/// The plain rows, multiplied rows and bees of a multiset of components.
fn shape_of(comps: &[(Comp, Decimal)], picked: &[usize]) -> (usize, usize, usize) {
    let (mut plain, mut mult, mut bees) = (0, 0, 0);
    for &i in picked {
        match comps[i].0 {
            Comp::Row { mult: 0, .. } => plain += 1,
            Comp::Row { .. } => mult += 1,
            Comp::Bee { .. } => bees += 1,
        }
    }
    (plain, mult, bees)
}

/// Whether a multiset of this shape is a form: one bee per hive; a multiplier shows alone or
/// beside one plain row (each factor makes its own form, so this keeps the number of forms
/// per prize modest).
fn is_form((plain, mult, bees): (usize, usize, usize)) -> bool {
    let multiplier_ok = match (mult, plain + mult + bees) {
        (0, _) | (1, 1) => true,
        (1, 2) => plain == 1,
        _ => false,
    };
    bees <= 2 && multiplier_ok
}

/// The forms of every prize (by its index in `prizes`): all multisets of 1 to 3 components
/// (non-decreasing indexes into `comps`) worth the prize and allowed by [`is_form`], grouped
/// by shape (shapes in the order of (plain rows, multiplied rows, bees)), each shape's in
/// lexicographic order of their indexes.
///
/// Each multiset is weighed once for all the prizes, its sum looked up among their whole
/// cents (a multiset makes at most one prize): the pairs of all `c` components, and the
/// triples of those without a multiplier (a multiplier shows alone or beside one row). With
/// 64 row and 64 bee amounts, c = 512: 131 328 pairs and 357 760 triples, whatever the number
/// of prizes; a signal stops the work. (It was a search per prize in decimals.)
fn decompositions(
    comps: &[(Comp, Decimal)],
    prizes: &[Decimal],
    ticker: &mut Ticker,
) -> Result<Vec<[Vec<Shape>; MAX_COMPONENTS]>, BuildError> {
    let values: Vec<u64> = comps
        .iter()
        .map(|&(_, v)| cents(v).ok_or_else(|| not_cents(v)))
        .collect::<Result<_, _>>()?;
    let mut by_cents: FxHashMap<u64, usize> = FxHashMap::default();
    for (i, &p) in prizes.iter().enumerate() {
        by_cents.insert(cents(p).ok_or_else(|| not_cents(p))?, i);
    }
    let top = by_cents.keys().copied().max().unwrap_or(0);
    // Group by (plain rows, multiplied rows, bees); BTreeMap keeps the order reproducible.
    let mut groups: Vec<BTreeMap<(usize, usize, usize), Vec<Decomp>>> =
        vec![BTreeMap::new(); prizes.len()];
    let mut found = |picked: &[usize], sum: u64| {
        let Some(&p) = by_cents.get(&sum) else {
            return;
        };
        let shape = shape_of(comps, picked);
        if !is_form(shape) {
            return;
        }
        let mut d = Decomp {
            comps: [Comp::Bee { amount: 0 }; MAX_COMPONENTS],
            len: picked.len() as u8,
        };
        for (slot, &i) in d.comps.iter_mut().zip(picked) {
            *slot = comps[i].0;
        }
        groups[p].entry(shape).or_default().push(d);
    };
    // Values are positive: a partial sum above the largest prize makes no prize.
    for (i, &a) in values.iter().enumerate() {
        if a > top {
            continue;
        }
        found(&[i], a);
        for (j, &b) in values.iter().enumerate().skip(i) {
            ticker.tick()?;
            if a + b <= top {
                found(&[i, j], a + b);
            }
        }
    }
    let unmultiplied: Vec<usize> = (0..comps.len())
        .filter(|&i| !matches!(comps[i].0, Comp::Row { mult: 1.., .. }))
        .collect();
    for (x, &i) in unmultiplied.iter().enumerate() {
        let a = values[i];
        for (y, &j) in unmultiplied.iter().enumerate().skip(x) {
            let b = a + values[j];
            if b > top {
                continue;
            }
            for &l in &unmultiplied[y..] {
                ticker.tick()?;
                if b + values[l] <= top {
                    found(&[i, j, l], b + values[l]);
                }
            }
        }
    }
    Ok(groups
        .into_iter()
        .map(|groups| {
            let mut shapes: [Vec<Shape>; MAX_COMPONENTS] = Default::default();
            for ((plain, mult, bees), decomps) in groups {
                shapes[plain + mult + bees - 1].push(Shape {
                    weight: PLAIN_ROW_WEIGHT.pow(plain as u32)
                        * MULT_ROW_WEIGHT.pow(mult as u32)
                        * BEE_WEIGHT.pow(bees as u32),
                    needs_extra: bees == 2,
                    decomps,
                });
            }
            shapes
        })
        .collect())
}

#[cold]
fn not_cents(amount: Decimal) -> BuildError {
    Unshowable::NotWholeCents { amount }.into()
}

impl MaxiSynthesizer {
    /// Appends a layout for `prize` to `out`.
    pub(super) fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        let bits = &mut Bits::new(rng);
        // Drawn first and alike for every prize: the E must not hint at the result.
        let has_extra = bits.chance(self.extra);
        let mut main = HiveSpec {
            has_e: has_extra,
            ..HiveSpec::default()
        };
        let mut extra = HiveSpec::default();
        let mut bonus = None;
        if prize.is_zero() {
            bonus = Some(usize::from(self.loser_bees.draw(bits)));
        } else {
            let plan = self
                .prizes
                .find(prize)
                .map(|i| &self.plans[i])
                .ok_or(SynthesisError::NotAPrize { prize })?;
            match pick(plan, has_extra, self.bonus_weight, bits) {
                None => bonus = plan.bonus_bees,
                Some(d) => place(&d, has_extra, &mut main, &mut extra, bits),
            }
        }
        self.write_hive(&main, bits, out);
        if has_extra {
            out.push(b'|');
            self.write_hive(&extra, bits, out);
        }
        if let Some(bees) = bonus {
            self.write_bonus(bees, bits, out);
        }
        Ok(())
    }
}

/// Picks a decomposition of the plan's prize, or `None` for the bonus stage.
/// `new()` made sure some class is usable without an EXTRA hive.
fn pick(plan: &Plan, has_extra: bool, bonus_weight: u32, bits: &mut Bits) -> Option<Decomp> {
    let class_weights = plan.class_weights(has_extra, bonus_weight);
    let class = bits.pick(&class_weights);
    if class == 0 {
        return None;
    }
    let shapes = &plan.shapes[class - 1];
    // At most 10 shapes of three components (multisets of 3 kinds), so 16 slots suffice.
    let mut shape_weights = [0u32; 16];
    let n = shapes.len().min(shape_weights.len());
    for (w, s) in shape_weights.iter_mut().zip(shapes.iter()) {
        *w = if s.usable(has_extra) { s.weight } else { 0 };
    }
    let shape = &shapes[bits.pick(&shape_weights[..n])];
    Some(shape.decomps[bits.uniform_index(shape.decomps.len())])
}

impl Shape {
    /// True if this shape can be drawn with (or without) an EXTRA hive.
    fn usable(&self, has_extra: bool) -> bool {
        has_extra || !self.needs_extra
    }
}

impl Plan {
    /// Weights of: the bonus stage, then 1, 2, 3 components; zero where impossible.
    fn class_weights(&self, has_extra: bool, bonus_weight: u32) -> [u32; MAX_COMPONENTS + 1] {
        let mut weights = [0u32; MAX_COMPONENTS + 1];
        if self.bonus_bees.is_some() {
            weights[0] = bonus_weight;
        }
        for (k, shapes) in self.shapes.iter().enumerate() {
            if shapes.iter().any(|s| s.usable(has_extra)) {
                weights[k + 1] = COMPONENT_WEIGHTS[k];
            }
        }
        weights
    }
}

/// Spreads a decomposition over the main and EXTRA hives. With an EXTRA hive, a single part
/// goes to either hive; several parts stay together in one hive or the most striking one
/// (a bee) moves to the EXTRA hive. Two bees always take one hive each; a multiplied row beside
/// a plain row stays in the main hive.
fn place(d: &Decomp, has_extra: bool, main: &mut HiveSpec, extra: &mut HiveSpec, bits: &mut Bits) {
    let comps = &d.comps[..usize::from(d.len)];
    let rank = |c: &Comp| match c {
        Comp::Row { mult: 0, .. } => 0,
        Comp::Row { .. } => 1,
        Comp::Bee { .. } => 2,
    };
    let bees = comps.iter().filter(|c| rank(c) == 2).count();
    let mults = comps.iter().filter(|c| rank(c) == 1).count();
    // 0: all in the main hive, 1: one part in the EXTRA hive, 2: all in the EXTRA hive.
    let mode = if !has_extra || (mults > 0 && comps.len() > 1) {
        // A multiplier beside another row stays in the main hive (fewer, clearer forms).
        0
    } else if bees == 2 {
        1
    } else if comps.len() == 1 {
        2 * bits.uniform_index(2)
    } else {
        bits.pick(&PLACEMENT_WEIGHTS)
    };
    let mut moved = 0;
    for (i, c) in comps.iter().enumerate() {
        if rank(c) >= rank(&comps[moved]) {
            moved = i;
        }
    }
    for (i, comp) in comps.iter().enumerate() {
        let to_extra = match mode {
            0 => false,
            1 => i == moved,
            _ => true,
        };
        let hive = if to_extra { &mut *extra } else { &mut *main };
        match *comp {
            Comp::Bee { amount } => hive.bee = Some(amount),
            Comp::Row { amount, mult } => {
                // At most 3 parts, so a free row is always found quickly.
                loop {
                    let r = bits.uniform_index(ROWS);
                    if hive.rows[r].is_none() {
                        hive.rows[r] = Some((amount, mult));
                        break;
                    }
                }
            }
        }
    }
}

impl MaxiSynthesizer {
    /// Writes one hive: winning rows as specified, everything else from the common distribution.
    fn write_hive(&self, spec: &HiveSpec, bits: &mut Bits, out: &mut Vec<u8>) {
        // Per row: amount index, P, multiplier (index + 1, or 0), cells taken.
        let mut amounts = [0usize; ROWS];
        let mut kinds = [(0u8, 0u8); ROWS];
        let mut filled = [0usize; ROWS];
        for r in 0..ROWS {
            match spec.rows[r] {
                Some((amount, mult)) => {
                    amounts[r] = usize::from(amount);
                    kinds[r] = (ROW_WIN as u8, mult);
                }
                None => {
                    amounts[r] = bits.uniform_index(self.row_amounts.len());
                    kinds[r] = self.row_kind.draw(bits);
                }
            }
            filled[r] = usize::from(kinds[r].0) + usize::from(kinds[r].1 > 0);
        }
        // Bee and E go to a free cell drawn uniformly over the hive.
        let mut slots = [[0usize; 2]; ROWS];
        for (kind, present) in [spec.bee.is_some(), spec.has_e].into_iter().enumerate() {
            if !present {
                continue;
            }
            let free: usize = (0..ROWS).map(|r| ROW_LENGTHS[r] - filled[r]).sum();
            let mut x = bits.uniform_index(free);
            for r in 0..ROWS {
                let f = ROW_LENGTHS[r] - filled[r];
                if x < f {
                    slots[r][kind] += 1;
                    filled[r] += 1;
                    break;
                }
                x -= f;
            }
        }
        let top = match spec.bee {
            Some(amount) => usize::from(amount),
            None => bits.uniform_index(self.bee_amounts.len()),
        };
        let mut text = HiveText::new();
        text.text(&self.bee_amounts[top]);
        for r in 0..ROWS {
            let len = ROW_LENGTHS[r];
            let (p, mult) = kinds[r];
            let [q, e] = slots[r];
            let mut cells =
                self.rows[row_kind_index(len, usize::from(p), mult > 0)][q + e].draw(bits);
            let row = &mut cells[..len];
            if mult > 0 {
                for cell in row.iter_mut().filter(|c| **c == MULT) {
                    *cell = MULTIPLIERS[usize::from(mult) - 1].0;
                }
            }
            if q + e > 0 {
                fill_slots(row, (b'Q', q), (b'E', e), bits);
            }
            if r > 0 {
                text.byte(b'/');
            }
            text.text(&self.row_amounts[amounts[r]]);
            text.cells(&cells, len);
        }
        text.flush(out);
    }

    /// Writes `+` and the 12 bonus cells with `bees` bees at places drawn uniformly.
    fn write_bonus(&self, bees: usize, bits: &mut Bits, out: &mut Vec<u8>) {
        let stages = &self.bonus_stages[bees.min(BONUS_CELLS)];
        out.extend_from_slice(&stages[bits.uniform_index(stages.len())]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::MAX_BONUS_BEES;
    use super::*;
    use crate::money::AmountTable;
    use proptest::prelude::*;

    /// A shape written out: its weight, whether it needs the EXTRA hive, its decompositions.
    type Written = (u32, bool, Vec<Vec<Comp>>);

    /// The search per prize, in decimals, that [`decompositions`] replaced (generator 3 as
    /// first written): the shapes of `prize`, written out, by size.
    fn reference(comps: &[(Comp, Decimal)], prize: Decimal) -> [Vec<Written>; MAX_COMPONENTS] {
        let mut by_value: BTreeMap<Decimal, Vec<usize>> = BTreeMap::new();
        for (i, (_, v)) in comps.iter().enumerate() {
            by_value.entry(*v).or_default().push(i);
        }
        let mut found: Vec<Vec<usize>> = Vec::new();
        for (i, (_, vi)) in comps.iter().enumerate() {
            if *vi == prize {
                found.push(vec![i]);
            }
            for (j, (_, vj)) in comps.iter().enumerate().skip(i) {
                if *vi + *vj == prize {
                    found.push(vec![i, j]);
                }
                let rest = prize - *vi - *vj;
                if rest > Decimal::ZERO {
                    for &l in by_value.get(&rest).into_iter().flatten() {
                        if l >= j {
                            found.push(vec![i, j, l]);
                        }
                    }
                }
            }
        }
        let mut groups: BTreeMap<(usize, usize, usize), Vec<Vec<Comp>>> = BTreeMap::new();
        for set in found {
            let (mut plain, mut mult, mut bees) = (0, 0, 0);
            for &i in &set {
                match comps[i].0 {
                    Comp::Row { mult: 0, .. } => plain += 1,
                    Comp::Row { .. } => mult += 1,
                    Comp::Bee { .. } => bees += 1,
                }
            }
            let multiplier_ok = match (mult, set.len()) {
                (0, _) | (1, 1) => true,
                (1, 2) => plain == 1,
                _ => false,
            };
            if bees <= 2 && multiplier_ok {
                groups
                    .entry((plain, mult, bees))
                    .or_default()
                    .push(set.iter().map(|&i| comps[i].0).collect());
            }
        }
        let mut shapes: [Vec<Written>; MAX_COMPONENTS] = Default::default();
        for ((plain, mult, bees), decomps) in groups {
            shapes[plain + mult + bees - 1].push((
                PLAIN_ROW_WEIGHT.pow(plain as u32)
                    * MULT_ROW_WEIGHT.pow(mult as u32)
                    * BEE_WEIGHT.pow(bees as u32),
                bees == 2,
                decomps,
            ));
        }
        shapes
    }

    fn in_euros(cents: u64) -> Decimal {
        Decimal::new(cents as i64, 2)
    }

    /// The forms of the largest definition SPEC §6.1 allows (64 row and 64 bee amounts, 254
    /// prizes a cent apart) are made, and a signal stops their making.
    #[test]
    fn a_signal_stops_the_decompositions_of_the_largest_lists() {
        let params = MaxiParams {
            rows: AmountTable::new((1..=64).map(in_euros)),
            bees: AmountTable::new((1..=64).map(in_euros)),
            bonus: [Decimal::ZERO; MAX_BONUS_BEES + 1],
            bonus_min: MAX_BONUS_BEES + 1,
            near_miss: Default::default(),
        };
        let comps = components(&params);
        let prizes: Vec<Decimal> = (1..=254).map(in_euros).collect();
        let all = decompositions(&comps, &prizes, &mut Ticker::default()).unwrap();
        assert!(all.iter().all(|p| p.iter().any(|s| !s.is_empty())));
        assert!(matches!(
            decompositions(&comps, &prizes, &mut Ticker::signalled()),
            Err(BuildError::Interrupted(_))
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever the amounts (a row amount equal to a bee amount too) and the prizes, the
        /// forms weighed once for all the prizes are those the search per prize found, in the
        /// same order: the draws, and so the layouts, are the same.
        #[test]
        fn decompositions_are_those_of_the_search_per_prize(
            rows in prop::collection::btree_set(1u64..40, 1..8),
            bees in prop::collection::btree_set(1u64..40, 1..6),
            prizes in prop::collection::btree_set(1u64..200, 1..12),
        ) {
            let params = MaxiParams {
                rows: AmountTable::new(rows.iter().map(|&c| in_euros(c))),
                bees: AmountTable::new(bees.iter().map(|&c| in_euros(c))),
                bonus: [Decimal::ZERO; MAX_BONUS_BEES + 1],
                bonus_min: MAX_BONUS_BEES + 1,
                near_miss: Default::default(),
            };
            let comps = components(&params);
            let prizes: Vec<Decimal> = prizes.into_iter().rev().map(in_euros).collect();
            let got = decompositions(&comps, &prizes, &mut Ticker::default()).unwrap();
            for (p, &prize) in prizes.iter().enumerate() {
                let expected = reference(&comps, prize);
                for k in 0..MAX_COMPONENTS {
                    let found: Vec<Written> = got[p][k]
                        .iter()
                        .map(|s| {
                            let decomps = s
                                .decomps
                                .iter()
                                .map(|d| d.comps[..usize::from(d.len)].to_vec())
                                .collect();
                            (s.weight, s.needs_extra, decomps)
                        })
                        .collect();
                    prop_assert_eq!(&found, &expected[k], "prize {} size {}", prize, k + 1);
                }
            }
        }
    }
}
