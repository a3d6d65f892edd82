//! One pass over a verified block: every ticket is read by the game's explainer (whose prize
//! and form are the decoder's), and what the report needs is tallied, in parallel, with memory
//! bounded by the block's size (a byte per ticket for the order, 16 bytes per ticket for the
//! duplicate check).

use crate::block::CSV_HEADER;
use crate::mechanic::explain::Explain;
use crate::money::canonical;
use crate::untrusted::shown;
use rayon::prelude::*;
use rust_decimal::Decimal;
use rustc_hash::FxHashMap as HashMap;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Bytes read at a time.
const READ_SIZE: usize = 8 << 20;
/// Tickets per parallel task.
const TASK: usize = 2048;
/// Sample layouts kept per prize (the first ones of the block).
pub const SAMPLES: usize = 3;

/// What the pass tallied.
#[derive(Debug, Default)]
pub struct Tally {
    /// Prize tier of every ticket, in block order (tiers highest first, the losers last).
    pub order: Vec<u8>,
    /// Tickets per tier.
    pub counts: Vec<u64>,
    /// (tier, form) → tickets.
    pub forms: BTreeMap<(usize, String), u64>,
    /// Observations seen outside the winning parts: (feature, value) → [on losers, on winners].
    pub observations: BTreeMap<(&'static str, u32), [u64; 2]>,
    /// Tickets with at least one observation of a feature: feature → [losers, winners].
    pub observed: BTreeMap<&'static str, [u64; 2]>,
    /// Tickets showing a feature with a value above 0: feature → [losers, winners].
    pub shown: BTreeMap<&'static str, [u64; 2]>,
    /// Near-miss features: feature → [losers, winners] tickets with at least one.
    pub near_misses: BTreeMap<&'static str, [u64; 2]>,
    /// The first layouts of each tier.
    pub samples: Vec<Vec<String>>,
    /// Tickets whose layout is the same as an earlier ticket's, per tier.
    pub duplicates: Vec<u64>,
    /// Bytes and SHA-256 of the file as read.
    pub bytes: u64,
    /// SHA-256 of the file as read.
    pub sha256: [u8; 32],
}

/// One ticket, as read by a parallel task.
struct Ticket {
    tier: u8,
    /// A 120-bit hash of the layout, the tier in the low 8 bits.
    key: u128,
}

/// A feature's name by its address and length: compared as two integers in the hot loop.
type Name = (usize, usize);

fn name(text: &'static str) -> Name {
    (text.as_ptr() as usize, text.len())
}

/// What one parallel task tallied, besides its tickets in order.
#[derive(Default)]
struct Part {
    tickets: Vec<Ticket>,
    forms: HashMap<(usize, String), u64>,
    /// Keyed by the name's address and the value: comparing addresses, not texts, in the hot
    /// loop (two copies of one name at different addresses are merged by text in `merge`).
    observations: HashMap<(usize, usize, u32), (&'static str, [u64; 2])>,
    observed: HashMap<Name, (&'static str, [u64; 2])>,
    shown: HashMap<Name, (&'static str, [u64; 2])>,
    near_misses: HashMap<Name, (&'static str, [u64; 2])>,
    /// (tier, layout) of the first tickets of each tier in the task.
    samples: Vec<(u8, String)>,
    error: Option<(usize, String)>,
}

/// Reads the ticket lines of `csv` (at most `limit` bytes). `tiers` are the stake's prize
/// amounts as written in the prize column, highest first, then `0`. `progress` counts tickets.
pub fn scan(
    csv: &Path,
    limit: u64,
    tiers: &[String],
    reader: &dyn Explain,
    progress: &dyn Fn(u64),
) -> anyhow::Result<Tally> {
    let name = crate::untrusted::shown_path(csv);
    let amounts: Vec<Decimal> = tiers
        .iter()
        .map(|t| t.parse().unwrap_or(Decimal::MAX))
        .collect();
    let loser = tiers.len().saturating_sub(1);
    let mut file = File::open(csv)
        .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?
        .take(limit.saturating_add(1));
    let mut tally = Tally {
        counts: vec![0; tiers.len()],
        samples: vec![Vec::new(); tiers.len()],
        duplicates: vec![0; tiers.len()],
        ..Tally::default()
    };
    let mut keys: Vec<u128> = Vec::new();
    let mut sha = Sha256::new();
    let mut pending: Vec<u8> = Vec::with_capacity(READ_SIZE * 2);
    let mut buf = vec![0u8; READ_SIZE];
    let mut header_seen = false;
    loop {
        crate::interrupt::check()?;
        let n = file
            .read(&mut buf)
            .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        tally.bytes += n as u64;
        pending.extend_from_slice(&buf[..n]);
        let Some(last) = pending.iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        let mut lines: Vec<&[u8]> = pending[..last].split(|&b| b == b'\n').collect();
        if !header_seen {
            header_seen = true;
            if lines.first().copied() != Some(CSV_HEADER.as_bytes()) {
                anyhow::bail!("{name} line 1: not the header '{CSV_HEADER}'");
            }
            lines.remove(0);
        }
        let first = tally.order.len();
        let parts: Vec<Part> = lines
            .par_chunks(TASK)
            .map(|chunk| read_part(chunk, tiers, &amounts, loser, reader))
            .collect();
        for (p, part) in parts.into_iter().enumerate() {
            if let Some((i, e)) = part.error {
                anyhow::bail!(
                    "{name} line {}: {e} (the file changed since it was verified?)",
                    first + p * TASK + i + 2
                );
            }
            merge(&mut tally, part, &mut keys);
        }
        pending.drain(..=last);
        progress(tally.order.len() as u64);
    }
    if !pending.is_empty() {
        anyhow::bail!("{name}: the file does not end with a line end");
    }
    tally.sha256 = sha.finalize().into();
    // Duplicate layouts: equal hashes (tier in the low byte) sit side by side once sorted.
    keys.par_sort_unstable();
    for pair in keys.windows(2) {
        if pair[0] >> 8 == pair[1] >> 8 {
            tally.duplicates[(pair[1] & 0xff) as usize] += 1;
        }
    }
    Ok(tally)
}

fn merge(tally: &mut Tally, part: Part, keys: &mut Vec<u128>) {
    // Parts come in block order, and samples in order within a part: the first are kept.
    for (tier, layout) in part.samples {
        let kept = &mut tally.samples[usize::from(tier)];
        if kept.len() < SAMPLES {
            kept.push(layout);
        }
    }
    for t in part.tickets {
        tally.order.push(t.tier);
        tally.counts[usize::from(t.tier)] += 1;
        keys.push(t.key);
    }
    for (k, v) in part.forms {
        *tally.forms.entry(k).or_insert(0) += v;
    }
    for ((_, _, value), (name, v)) in part.observations {
        add2(tally.observations.entry((name, value)).or_insert([0; 2]), v);
    }
    for (k, v) in part.observed.into_values() {
        add2(tally.observed.entry(k).or_insert([0; 2]), v);
    }
    for (k, v) in part.shown.into_values() {
        add2(tally.shown.entry(k).or_insert([0; 2]), v);
    }
    for (k, v) in part.near_misses.into_values() {
        add2(tally.near_misses.entry(k).or_insert([0; 2]), v);
    }
}

fn add2(into: &mut [u64; 2], v: [u64; 2]) {
    into[0] += v[0];
    into[1] += v[1];
}

fn read_part(
    lines: &[&[u8]],
    tiers: &[String],
    amounts: &[Decimal],
    loser: usize,
    reader: &dyn Explain,
) -> Part {
    let mut part = Part {
        tickets: Vec::with_capacity(lines.len()),
        ..Part::default()
    };
    let mut seen_in_task = vec![0usize; tiers.len()];
    let mut names: Vec<(Name, &'static str)> = Vec::new();
    let mut near: Vec<(Name, &'static str)> = Vec::new();
    let mut outside: Vec<(Name, &'static str)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut fields = line.split(|&b| b == b',');
        let (_, prize, layout) = (fields.next(), fields.next(), fields.next());
        let (Some(prize), Some(layout)) = (prize, layout) else {
            part.error = Some((i, "not a ticket line".into()));
            return part;
        };
        let Some(tier) = tiers.iter().position(|t| t.as_bytes() == prize) else {
            part.error = Some((i, format!("prize {} is not one of the stake", shown(prize))));
            return part;
        };
        let Ok(layout) = std::str::from_utf8(layout) else {
            part.error = Some((i, "the layout is not UTF-8".into()));
            return part;
        };
        let (won, form, features) = match reader.explain(layout) {
            Ok(e) => (e.prize, e.form, e.features),
            Err(e) => {
                part.error = Some((i, format!("invalid layout: {e}")));
                return part;
            }
        };
        if won != amounts[tier] {
            part.error = Some((
                i,
                format!(
                    "the layout wins {} € but the prize column says {} €",
                    canonical(won),
                    tiers[tier]
                ),
            ));
            return part;
        }
        let winner = usize::from(tier != loser);
        *part.forms.entry((tier, form)).or_insert(0) += 1;
        names.clear();
        near.clear();
        outside.clear();
        for f in &features {
            if f.outside_wins {
                let (at, len) = name(f.name);
                part.observations
                    .entry((at, len, f.value))
                    .or_insert((f.name, [0; 2]))
                    .1[winner] += 1;
                outside.push((name(f.name), f.name));
            }
            if f.value > 0 {
                if f.near_miss {
                    near.push((name(f.name), f.name));
                } else {
                    names.push((name(f.name), f.name));
                }
            }
        }
        // Rates count tickets: each name once per ticket.
        for (list, map) in [
            (&mut names, &mut part.shown),
            (&mut outside, &mut part.observed),
            (&mut near, &mut part.near_misses),
        ] {
            list.sort_unstable_by_key(|n| n.0);
            list.dedup_by_key(|n| n.0);
            for &(key, text) in list.iter() {
                map.entry(key).or_insert((text, [0; 2])).1[winner] += 1;
            }
        }
        if seen_in_task[tier] < SAMPLES {
            seen_in_task[tier] += 1;
            part.samples.push((tier as u8, layout.to_string()));
        }
        part.tickets.push(Ticket {
            tier: tier as u8,
            key: (layout_hash(layout) & !0xff) | tier as u128,
        });
    }
    part
}

/// A 128-bit hash of a layout (XXH3-128), to count duplicates within one run: a chance
/// collision among 10⁷ layouts (about 10⁻²⁵) does not matter.
fn layout_hash(layout: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(layout.as_bytes())
}
