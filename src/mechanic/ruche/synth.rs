//! The La ruche d'or synthesizer: draws a natural-looking hive (and EXTRA hives) for a prize.
//!
//! A prize is first split into *components*: winning rows and honey-pot wins. All the ways of
//! making each prize with one to three components are listed once, at start-up; a ticket picks
//! a number of components (one most often), then one decomposition uniformly, then spreads the
//! components over the main hive and its EXTRA hives. Everything that does not win is drawn
//! from the same distributions on winners and losers (row amounts, near-miss rows with two `P`,
//! up to three honey pots, EXTRA symbols: the game's `near_miss` weights), so no part outside
//! the winning cells hints at the result.
//!
//! Generator 2 draws from tables built here once (SPEC §4): the number of EXTRA hives, the
//! loose honey pots, the `P` of a non-winning row (by the cells left free) and the `A`/`B`
//! filler (by its length) come from exact alias tables; a row's cells are put in order with
//! one draw from the table of all its orders; random bits come from [`Bits`].

use super::params::{RucheParams, MAX_EXTRA};
use crate::mechanic::draw::{filler_table, index_table, row_orders, weighted, Alias, Bits};
use crate::mechanic::hive::{MAX_OTHER, MAX_ROW_LEN, ROWS, ROW_LENGTHS, ROW_WIN};
use crate::mechanic::{LayoutRng, SynthesisError};
use crate::money::canonical;
use rust_decimal::Decimal;

/// One part of a prize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Component {
    /// A winning row showing the amount of this index in the row table.
    Row(usize),
    /// A hive holding this many honey pots.
    Honey(usize),
}

/// Most components a prize is split into.
const MAX_PARTS: usize = 3;

/// Draws La ruche d'or layouts.
#[derive(Debug, Clone)]
pub struct Synth {
    params: RucheParams,
    /// For each prize of the table: the decompositions, by number of components - 1.
    plans: Vec<(Decimal, [Vec<Vec<Component>>; MAX_PARTS])>,
    /// EXTRA hives on a ticket.
    extras: Alias<usize>,
    /// Honey pots in a hive that wins no honey (fewer than the smallest winning count).
    loose_pots: Alias<usize>,
    /// `P` on a non-winning row, by the cells the row has free (0 to 7).
    near_p: Vec<Alias<usize>>,
    /// `A` and `B` counts of the filler, by its length (0 to 7).
    filler: Vec<Alias<[u8; 2]>>,
}

impl Synth {
    /// Lists every decomposition of every prize of the table; an error names a prize that
    /// cannot be shown with the row amounts, honey table and `near_miss.part_weights` given.
    pub fn new(params: RucheParams, prizes: &[Decimal]) -> Result<Self, String> {
        let mut components: Vec<(Component, Decimal)> = (0..params.rows.len())
            .map(|i| (Component::Row(i), params.rows.get(i).0))
            .collect();
        for pots in 0..=params.max_honey {
            let win = params.honey_win(pots);
            if !win.is_zero() {
                components.push((Component::Honey(pots), win));
            }
        }
        let part_weights = params.near_miss.part_weights;
        let mut plans = Vec::with_capacity(prizes.len());
        for &prize in prizes {
            let mut by_size: [Vec<Vec<Component>>; MAX_PARTS] = Default::default();
            let mut stack = Vec::new();
            collect(&components, 0, prize, &mut stack, &mut by_size);
            for options in &mut by_size {
                options.sort_by_key(|d| honey_count(d));
            }
            let showable = |k: usize| {
                by_size[k]
                    .first()
                    .is_some_and(|d| honey_count(d) <= MAX_EXTRA + 1)
            };
            if !(0..MAX_PARTS).any(showable) {
                return Err(format!(
                    "the prize {} € cannot be made of up to {MAX_PARTS} row amounts and honey wins: add a row amount",
                    canonical(prize)
                ));
            }
            if !(0..MAX_PARTS).any(|k| showable(k) && part_weights[k] > 0) {
                let sizes: Vec<String> = (0..MAX_PARTS)
                    .filter(|&k| showable(k))
                    .map(|k| (k + 1).to_string())
                    .collect();
                return Err(format!(
                    "the prize {} € can only be shown with {} part(s), and near_miss.part_weights gives them weight 0: give them a weight from 1 to {}",
                    canonical(prize),
                    sizes.join(" or "),
                    crate::mechanic::util::MAX_WEIGHT
                ));
            }
            plans.push((prize, by_size));
        }
        let nm = &params.near_miss;
        let extras = index_table(&nm.extra_weights).ok_or("near_miss.extra_weights: all zero")?;
        // Loose pots stay below the smallest winning count: more would win honey.
        let loose_limit = params.min_winning_pots().saturating_sub(1);
        let mut loose = [0u32; 4];
        for (pots, &w) in nm.loose_pots_weights.iter().enumerate() {
            loose[pots.min(loose_limit)] += w;
        }
        let loose_pots = index_table(&loose).ok_or("near_miss.loose_pots_weights: all zero")?;
        let near_p = (0..=MAX_ROW_LEN)
            .map(|free| {
                let mut w = [0u32; ROW_WIN];
                for (p, &weight) in nm.row_p_weights.iter().enumerate() {
                    w[p.min(free)] += weight;
                }
                index_table(&w).ok_or("near_miss.row_p_weights: all zero")
            })
            .collect::<Result<Vec<_>, _>>()?;
        let filler = (0..=MAX_ROW_LEN)
            .map(|k| filler_table(k, MAX_OTHER))
            .collect();
        Ok(Synth {
            params,
            plans,
            extras,
            loose_pots,
            near_p,
            filler,
        })
    }

    /// Appends a layout for `prize` to `out`.
    pub fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        let bits = &mut Bits::new(rng);
        // Components assigned to hives: rows (amount index) and honey pots per hive.
        let mut extras = self.extras.draw(bits);
        let mut rows: [[Option<usize>; ROWS]; MAX_EXTRA + 1] = [[None; ROWS]; MAX_EXTRA + 1];
        let mut pots: [Option<usize>; MAX_EXTRA + 1] = [None; MAX_EXTRA + 1];
        if !prize.is_zero() {
            let plan = self
                .plans
                .iter()
                .find(|(p, _)| *p == prize)
                .map(|(_, plan)| plan)
                .ok_or_else(|| SynthesisError::not_a_prize(prize))?;
            // The number of EXTRA hives is drawn as for a loser, so that EXTRA symbols say
            // nothing; a hive wins honey once, so keep the decompositions that fit.
            let part_weights = &self.params.near_miss.part_weights;
            let mut usable = [0usize; MAX_PARTS];
            let mut weights = [0u32; MAX_PARTS];
            loop {
                for (k, options) in plan.iter().enumerate() {
                    usable[k] = options.partition_point(|d| honey_count(d) <= extras + 1);
                    weights[k] = if usable[k] > 0 { part_weights[k] } else { 0 };
                }
                if weights.iter().any(|&w| w > 0) || extras == MAX_EXTRA {
                    break;
                }
                extras += 1; // Only a table without single-hive forms gets here.
            }
            // `new` made sure some weighted form fits MAX_EXTRA + 1 hives.
            let k = weighted(bits, &weights);
            let parts = &plan[k][bits.index(usable[k])];
            let hives = extras + 1;
            let order = row_orders()[hives].shuffle(&[0, 1, 2, 3, 0, 0, 0, 0], bits);
            let mut next_honey_hive = 0;
            for part in parts {
                match *part {
                    Component::Honey(n) => {
                        pots[usize::from(order[next_honey_hive])] = Some(n);
                        next_honey_hive += 1;
                    }
                    Component::Row(i) => {
                        let h = bits.index(hives);
                        // Find a free row in that hive at random (at most 3 rows are taken).
                        loop {
                            let r = bits.index(ROWS);
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
        let h = pots.unwrap_or_else(|| self.loose_pots.draw(bits));
        // Spread the H and E cells over the rows, leaving three cells to winning rows.
        let mut special = [[0usize; 2]; ROWS];
        let mut free: [usize; ROWS] = [0; ROWS];
        for r in 0..ROWS {
            free[r] = ROW_LENGTHS[r] - if winning[r].is_some() { ROW_WIN } else { 0 };
        }
        let mut total: usize = free.iter().sum();
        for (kind, count) in [(0, h), (1, e)] {
            for _ in 0..count {
                let mut x = bits.index(total);
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
        let orders = row_orders();
        for (r, &len) in ROW_LENGTHS.iter().enumerate() {
            if r > 0 {
                out.push(b'/');
            }
            let amount = match winning[r] {
                Some(i) => i,
                None => bits.index(self.params.rows.len()),
            };
            out.extend_from_slice(self.params.rows.get(amount).1.as_bytes());
            out.push(b':');
            // The row's cells in a fixed order (H, E, P, A, B, then flowers), then shuffled.
            let mut cells = [b'F'; 8];
            let [hs, es] = special[r];
            cells[..hs].fill(b'H');
            cells[hs..hs + es].fill(b'E');
            let mut n = hs + es;
            let p = match winning[r] {
                Some(_) => ROW_WIN,
                None => self.near_p[len - n].draw(bits),
            };
            cells[n..n + p].fill(b'P');
            n += p;
            let [a, b] = self.filler[len - n].draw(bits).map(usize::from);
            cells[n..n + a].fill(b'A');
            cells[n + a..n + a + b].fill(b'B');
            out.extend_from_slice(&orders[len].shuffle(&cells, bits)[..len]);
        }
    }
}

fn honey_count(parts: &[Component]) -> usize {
    parts
        .iter()
        .filter(|c| matches!(c, Component::Honey(_)))
        .count()
}

/// Collects the multisets of components (non-decreasing index from `from`) summing to `left`.
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
