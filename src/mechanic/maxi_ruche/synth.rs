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
//! Generator 2 draws from tables built here once (SPEC §4): the `P` and multiplier of a
//! non-winning row, the `A`/`B` filler by its length, the bees of a losing bonus stage come
//! from exact alias tables; a row's cells are put in order with one draw from the table of
//! all its orders, the bonus bees' places with one draw from the table of all their places;
//! random bits come from [`Bits`].

use super::params::{MaxiParams, BONUS_CELLS, MULTIPLIERS};
use crate::mechanic::draw::{filler_table, index_table, row_orders, weighted, Alias, Bits, Rate};
use crate::mechanic::hive::{MAX_OTHER, MAX_ROW_LEN, ROWS, ROW_LENGTHS, ROW_WIN};
use crate::mechanic::{LayoutRng, SynthesisError};
use crate::money::canonical;
use rust_decimal::Decimal;
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
    params: MaxiParams,
    plans: Vec<Plan>,
    /// Chance of an EXTRA hive, for every prize.
    extra: Rate,
    /// Chance of a multiplier on a row that does not win.
    row_multiplier: Rate,
    /// Weight of the bonus stage among the forms of a prize it pays.
    bonus_weight: u32,
    /// `P` on a row that does not win.
    losing_p: Alias<usize>,
    /// `A` and `B` counts of the filler, by its length (0 to 7).
    filler: Vec<Alias<[u8; 2]>>,
    /// Bees of a losing bonus stage: up to one fewer than win, more often near it (three bees
    /// when four win: so close).
    loser_bees: Alias<usize>,
    /// The places of `n` bees among the bonus cells, as bit masks, by `n`.
    bee_places: Vec<Vec<u16>>,
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
    prize: Decimal,
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
    pub(super) fn new(params: MaxiParams, prizes: &[Decimal]) -> Result<Self, String> {
        let comps = components(&params);
        let mut plans = Vec::with_capacity(prizes.len());
        for &prize in prizes {
            let bonus_bees = (1..params.bonus.len()).find(|&n| params.bonus[n] == prize);
            let shapes = decompositions(&comps, prize);
            let plan = Plan {
                prize,
                bonus_bees,
                shapes,
            };
            let bonus_weight = params.near_miss.bonus_weight;
            if plan.bonus_bees.is_some()
                && bonus_weight == 0
                && plan.class_weights(false, 1).iter().any(|&w| w > 0)
                && plan.class_weights(false, 0).iter().all(|&w| w == 0)
            {
                return Err(format!(
                    "prize {} € can only be shown by the bonus stage, and near_miss.bonus_weight is 0: give it a weight from 1 to {}",
                    canonical(prize),
                    crate::mechanic::util::MAX_WEIGHT
                ));
            }
            // The E is drawn alike for every prize, so each prize must be showable without it.
            if plan
                .class_weights(false, bonus_weight)
                .iter()
                .all(|&w| w == 0)
            {
                return Err(format!(
                    "prize {} € cannot be shown: no sum of up to {MAX_COMPONENTS} winning rows \
                     (row_amounts, with multipliers 2-6 and 10) and bees (bee_amounts, one per hive) \
                     makes it without an EXTRA hive, and the bonus table does not pay it; add an amount to row_amounts or bee_amounts",
                    canonical(prize)
                ));
            }
            plans.push(plan);
        }
        let nm = &params.near_miss;
        let loser_max_bees = params.bonus_min - 1;
        let loser_weights: Vec<u32> = (1..=loser_max_bees as u32 + 1).collect();
        let bee_places = (0..=BONUS_CELLS)
            .map(|n| {
                (0u16..1 << BONUS_CELLS)
                    .filter(|m| m.count_ones() as usize == n)
                    .collect()
            })
            .collect();
        Ok(MaxiSynthesizer {
            extra: Rate::new(nm.extra_rate),
            row_multiplier: Rate::new(nm.row_multiplier_rate),
            bonus_weight: nm.bonus_weight,
            losing_p: index_table(&nm.row_p_weights).ok_or("near_miss.row_p_weights: all zero")?,
            filler: (0..=MAX_ROW_LEN)
                .map(|k| filler_table(k, MAX_OTHER))
                .collect(),
            loser_bees: index_table(&loser_weights).ok_or("bonus: no losing bee count")?,
            bee_places,
            params,
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

/// All multisets of 1 to 3 components worth `prize` (at most two bees: one per hive), grouped
/// by shape.
fn decompositions(comps: &[(Comp, Decimal)], prize: Decimal) -> [Vec<Shape>; MAX_COMPONENTS] {
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
    // Group by (plain rows, multiplied rows, bees); BTreeMap keeps the order reproducible.
    let mut groups: BTreeMap<(usize, usize, usize), Vec<Decomp>> = BTreeMap::new();
    for set in found {
        let (mut plain, mut mult, mut bees) = (0, 0, 0);
        let mut d = Decomp {
            comps: [Comp::Bee { amount: 0 }; MAX_COMPONENTS],
            len: set.len() as u8,
        };
        for (k, &i) in set.iter().enumerate() {
            d.comps[k] = comps[i].0;
            match comps[i].0 {
                Comp::Row { mult: 0, .. } => plain += 1,
                Comp::Row { .. } => mult += 1,
                Comp::Bee { .. } => bees += 1,
            }
        }
        // One bee per hive. A multiplier shows alone or beside one plain row: each factor makes
        // its own form, so this keeps the number of forms per prize modest.
        let multiplier_ok = match (mult, set.len()) {
            (0, _) | (1, 1) => true,
            (1, 2) => plain == 1,
            _ => false,
        };
        if bees <= 2 && multiplier_ok {
            groups.entry((plain, mult, bees)).or_default().push(d);
        }
    }
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
            bonus = Some(self.loser_bees.draw(bits));
        } else {
            let plan = self
                .plans
                .iter()
                .find(|p| p.prize == prize)
                .ok_or_else(|| SynthesisError::not_a_prize(prize))?;
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
    let class = weighted(bits, &class_weights);
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
    let shape = &shapes[weighted(bits, &shape_weights[..n])];
    Some(shape.decomps[bits.index(shape.decomps.len())])
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
        2 * bits.index(2)
    } else {
        weighted(bits, &PLACEMENT_WEIGHTS)
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
                    let r = bits.index(ROWS);
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
        let mut cells = [[b'F'; 8]; ROWS];
        let mut filled = [0usize; ROWS];
        let mut amounts = [0usize; ROWS];
        for r in 0..ROWS {
            let row = &mut cells[r];
            let mut k = 0;
            let mult = match spec.rows[r] {
                Some((amount, mult)) => {
                    amounts[r] = usize::from(amount);
                    row[..ROW_WIN].fill(b'P');
                    k = ROW_WIN;
                    usize::from(mult)
                }
                None => {
                    amounts[r] = bits.index(self.params.rows.len());
                    let p = self.losing_p.draw(bits);
                    row[..p].fill(b'P');
                    k += p;
                    if bits.chance(self.row_multiplier) {
                        1 + bits.index(MULTIPLIERS.len())
                    } else {
                        0
                    }
                }
            };
            if mult > 0 {
                row[k] = MULTIPLIERS[mult - 1].0;
                k += 1;
            }
            filled[r] = k;
        }
        // Bee and E go to a free cell drawn uniformly over the hive.
        let specials = [spec.bee.map(|_| b'Q'), spec.has_e.then_some(b'E')];
        for special in specials.into_iter().flatten() {
            let free: usize = (0..ROWS).map(|r| ROW_LENGTHS[r] - filled[r]).sum();
            let mut x = bits.index(free);
            for r in 0..ROWS {
                let f = ROW_LENGTHS[r] - filled[r];
                if x < f {
                    cells[r][filled[r]] = special;
                    filled[r] += 1;
                    break;
                }
                x -= f;
            }
        }
        let top = match spec.bee {
            Some(amount) => usize::from(amount),
            None => bits.index(self.params.bees.len()),
        };
        out.extend_from_slice(self.params.bees.get(top).1.as_bytes());
        out.push(b'#');
        let orders = row_orders();
        for r in 0..ROWS {
            let len = ROW_LENGTHS[r];
            let row = &mut cells[r];
            let n = filled[r];
            let [a, b] = self.filler[len - n].draw(bits).map(usize::from);
            row[n..n + a].fill(b'A');
            row[n + a..n + a + b].fill(b'B');
            if r > 0 {
                out.push(b'/');
            }
            out.extend_from_slice(self.params.rows.get(amounts[r]).1.as_bytes());
            out.push(b':');
            out.extend_from_slice(&orders[len].shuffle(row, bits)[..len]);
        }
    }

    /// Writes `+` and the 12 bonus cells with `bees` bees at places drawn uniformly.
    fn write_bonus(&self, bees: usize, bits: &mut Bits, out: &mut Vec<u8>) {
        let places = &self.bee_places[bees.min(BONUS_CELLS)];
        let mask = places[bits.index(places.len())];
        out.push(b'+');
        out.extend((0..BONUS_CELLS).map(|i| if mask >> i & 1 == 1 { b'Q' } else { b'.' }));
    }
}
