//! The La ruche d'or synthesizer: draws a natural-looking hive (and EXTRA hives) for a prize.
//!
//! A prize is first split into *components*: winning rows and honey-pot wins. All the ways of
//! making each prize with one to three components are listed once, at start-up; a ticket picks
//! a number of components (one most often), then one decomposition uniformly, then spreads the
//! components over the main hive and its EXTRA hives. Everything that does not win is drawn
//! from the same distributions on winners and losers (row amounts, near-miss rows with two `P`,
//! up to three honey pots, EXTRA symbols), so no part outside the winning cells hints at the
//! result.

use super::params::{RucheParams, MAX_EXTRA};
use crate::mechanic::draw::{fill_others, weighted};
use crate::mechanic::hive::{MAX_OTHER, ROW_LENGTHS, ROW_WIN};
use crate::mechanic::{LayoutRng, SynthesisError};
use crate::money::canonical;
use rand::seq::SliceRandom;
use rand::Rng;
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
/// Weights of 1, 2 and 3 components, when the prize allows them.
const PART_WEIGHTS: [u32; MAX_PARTS] = [55, 32, 13];
/// Weights of 0, 1, 2, 3 EXTRA hives, on every ticket (winners and losers alike).
const EXTRA_WEIGHTS: [u32; MAX_EXTRA + 1] = [84, 11, 4, 1];
/// Weights of 0..=2 `P` in a row that does not win: two is the classic near miss.
const NEAR_P_WEIGHTS: [u32; ROW_WIN] = [25, 40, 35];
/// Weights of 0..=3 honey pots in a hive that wins no honey: three is a near miss.
const LOOSE_POTS_WEIGHTS: [u32; 4] = [30, 30, 24, 16];

/// Draws La ruche d'or layouts.
#[derive(Debug, Clone)]
pub struct Synth {
    params: RucheParams,
    /// For each prize of the table: the decompositions, by number of components - 1.
    plans: Vec<(Decimal, [Vec<Vec<Component>>; MAX_PARTS])>,
}

impl Synth {
    /// Lists every decomposition of every prize of the table; an error names a prize that
    /// cannot be shown with the row amounts and honey table given.
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
        let mut plans = Vec::with_capacity(prizes.len());
        for &prize in prizes {
            let mut by_size: [Vec<Vec<Component>>; MAX_PARTS] = Default::default();
            let mut stack = Vec::new();
            collect(&components, 0, prize, &mut stack, &mut by_size);
            for options in &mut by_size {
                options.sort_by_key(|d| honey_count(d));
            }
            if by_size.iter().all(|options| {
                options
                    .first()
                    .is_none_or(|d| honey_count(d) > MAX_EXTRA + 1)
            }) {
                return Err(format!(
                    "the prize {} € cannot be made of up to {MAX_PARTS} row amounts and honey wins: add a row amount",
                    canonical(prize)
                ));
            }
            plans.push((prize, by_size));
        }
        Ok(Synth { params, plans })
    }

    /// Appends a layout for `prize` to `out`.
    pub fn synthesize(
        &self,
        prize: Decimal,
        rng: &mut LayoutRng,
        out: &mut Vec<u8>,
    ) -> Result<(), SynthesisError> {
        // Components assigned to hives: rows (amount index) and honey pots per hive.
        let mut extras = weighted(rng, &EXTRA_WEIGHTS);
        let mut rows: [[Option<usize>; 7]; MAX_EXTRA + 1] = [[None; 7]; MAX_EXTRA + 1];
        let mut row_count = [0usize; MAX_EXTRA + 1];
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
            let mut usable = [0usize; MAX_PARTS];
            loop {
                for (k, options) in plan.iter().enumerate() {
                    usable[k] = options.partition_point(|d| honey_count(d) <= extras + 1);
                }
                if usable.iter().any(|&n| n > 0) {
                    break;
                }
                extras += 1; // Only a table without single-hive forms gets here.
            }
            let weights: [u32; MAX_PARTS] =
                std::array::from_fn(|k| if usable[k] > 0 { PART_WEIGHTS[k] } else { 0 });
            let k = weighted(rng, &weights);
            let parts = &plan[k][rng.random_range(0..usable[k])];
            let hives = extras + 1;
            let mut order = [0usize, 1, 2, 3];
            order[..hives].shuffle(rng);
            let mut next_honey_hive = 0;
            for part in parts {
                match *part {
                    Component::Honey(n) => {
                        pots[order[next_honey_hive]] = Some(n);
                        next_honey_hive += 1;
                    }
                    Component::Row(i) => {
                        let h = rng.random_range(0..hives);
                        // Find a free row in that hive at random (at most 3 rows are taken).
                        loop {
                            let r = rng.random_range(0..ROW_LENGTHS.len());
                            if rows[h][r].is_none() {
                                rows[h][r] = Some(i);
                                row_count[h] += 1;
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
            self.hive(rng, &rows[h], pots[h], e, out);
        }
        Ok(())
    }

    /// Writes one hive: the given winning rows, `pots` honey pots if it wins honey (else a
    /// loose 0 to 3), and `e` EXTRA symbols.
    fn hive(
        &self,
        rng: &mut LayoutRng,
        winning: &[Option<usize>; 7],
        pots: Option<usize>,
        e: usize,
        out: &mut Vec<u8>,
    ) {
        let loose_limit = self.params.min_winning_pots().saturating_sub(1);
        let h = pots.unwrap_or_else(|| weighted(rng, &LOOSE_POTS_WEIGHTS).min(loose_limit));
        // Spread the H and E cells over the rows, leaving three cells to winning rows.
        let mut special = [[0usize; 2]; 7];
        let mut free: [usize; 7] = [0; 7];
        for r in 0..7 {
            free[r] = ROW_LENGTHS[r] - if winning[r].is_some() { ROW_WIN } else { 0 };
        }
        for (kind, count) in [(0, h), (1, e)] {
            for _ in 0..count {
                let total: usize = free.iter().sum();
                let mut x = rng.random_range(0..total);
                for r in 0..7 {
                    if x < free[r] {
                        special[r][kind] += 1;
                        free[r] -= 1;
                        break;
                    }
                    x -= free[r];
                }
            }
        }
        for (r, &len) in ROW_LENGTHS.iter().enumerate() {
            if r > 0 {
                out.push(b'/');
            }
            let amount = match winning[r] {
                Some(i) => i,
                None => rng.random_range(0..self.params.rows.len()),
            };
            out.extend_from_slice(self.params.rows.get(amount).1.as_bytes());
            out.push(b':');
            let mut cells = [b'F'; 7];
            let mut n = 0;
            for _ in 0..special[r][0] {
                cells[n] = b'H';
                n += 1;
            }
            for _ in 0..special[r][1] {
                cells[n] = b'E';
                n += 1;
            }
            let p = if winning[r].is_some() {
                ROW_WIN
            } else {
                weighted(rng, &NEAR_P_WEIGHTS).min(len - n)
            };
            for _ in 0..p {
                cells[n] = b'P';
                n += 1;
            }
            fill_others(rng, &mut cells[n..len], MAX_OTHER);
            cells[..len].shuffle(rng);
            out.extend_from_slice(&cells[..len]);
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
