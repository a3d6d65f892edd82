//! One pass over a block `verify` has just accepted: every ticket is read by its game's
//! features-only path ([`Explain::features`]: one pass over the layout bytes into a fixed-size
//! record, no allocation), its wins checked against its prize column, and what the report
//! needs is tallied, in parallel, into fixed-size counters. Memory is bounded by the block's
//! size: a byte per ticket for the order, 8 bytes per ticket for the duplicate check.
//!
//! The decoder stays the referee: `verify` decoded every layout of this file, and the file's
//! SHA-256, computed here as it is read, must still be the signed manifest's (the caller checks
//! it) — so these are the very bytes it accepted. The texts of the forms are the decoder's
//! (asked once per form key, on the first ticket that shows it), and the sample layouts are
//! explained in full by `show`'s path.

use crate::block::CSV_HEADER;
use crate::mechanic::explain::{Explain, Features};
use crate::untrusted::shown;
use rayon::prelude::*;
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
    /// Tickets whose layout is the same as an earlier ticket's, per tier (64-bit layout hashes,
    /// compared within a tier: a chance collision among the 7.5 million layouts of a Maxi
    /// block has a probability of about 1.5 × 10⁻⁶).
    pub duplicates: Vec<u64>,
    /// Bytes and SHA-256 of the file as read.
    pub bytes: u64,
    /// SHA-256 of the file as read.
    pub sha256: [u8; 32],
}

/// Codes of one feature counted in a dense table; larger codes go to a map.
const DENSE: usize = 256;

/// What one parallel task tallied.
#[derive(Default)]
struct Part {
    /// Tier of each ticket, in order.
    tiers: Vec<u8>,
    /// 64-bit hash of each layout, in order.
    hashes: Vec<u64>,
    /// (tier, form key) → (tickets, index in the task of the first one).
    forms: HashMap<(u8, u64), (u64, usize)>,
    /// Observations: `feature * DENSE + code` → [on losers, on winners].
    seen: Vec<[u64; 2]>,
    /// Observations of codes of [`DENSE`] and above.
    seen_large: HashMap<(u8, u16), [u64; 2]>,
    /// Per feature, tickets with at least one observation: [losers, winners].
    observed: Vec<[u64; 2]>,
    /// Per feature, tickets with at least one observation of a value above 0.
    shown: Vec<[u64; 2]>,
    /// Per kind of near miss, tickets with at least one.
    near: Vec<[u64; 2]>,
    /// (tier, index in the task) of the first tickets of each tier in the task.
    samples: Vec<(u8, usize)>,
    error: Option<(usize, String)>,
}

/// What every task needs to read its tickets.
struct Context<'a> {
    tiers: &'a [String],
    /// The prize of each tier in cents (`None`: not whole cents, no layout can win it).
    cents: Vec<Option<u64>>,
    loser: usize,
    reader: &'a dyn Explain,
    /// Per feature, whether each dense code has a value above 0.
    positive: Vec<bool>,
    seen_names: usize,
    near_names: usize,
}

/// Reads the ticket lines of `csv` (at most `limit` bytes). `tiers` are the stake's prize
/// amounts as written in the prize column, highest first, then `0`; `expected` the tickets of
/// each tier a block holds (to reserve memory once). `progress` counts tickets.
pub fn scan(
    csv: &Path,
    limit: u64,
    tiers: &[String],
    expected: &[u64],
    reader: &dyn Explain,
    progress: &dyn Fn(u64),
) -> anyhow::Result<Tally> {
    let name = crate::untrusted::shown_path(csv);
    let names = reader.feature_names();
    if names.seen.len() > 32 || names.near.len() > crate::mechanic::explain::MAX_NEAR {
        anyhow::bail!("too many features for the report's tallies");
    }
    let mut positive = vec![false; names.seen.len() * DENSE];
    for (i, p) in positive.iter_mut().enumerate() {
        *p = reader.seen_value(i / DENSE, (i % DENSE) as u16) > 0;
    }
    let context = Context {
        tiers,
        cents: tiers
            .iter()
            .map(|t| crate::money::parse_canonical(t).and_then(crate::money::cents))
            .collect(),
        loser: tiers.len().saturating_sub(1),
        reader,
        positive,
        seen_names: names.seen.len(),
        near_names: names.near.len(),
    };
    let mut file = File::open(csv)
        .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?
        .take(limit.saturating_add(1));
    let mut tally = Tally {
        counts: vec![0; tiers.len()],
        samples: vec![Vec::new(); tiers.len()],
        duplicates: vec![0; tiers.len()],
        ..Tally::default()
    };
    // Reserved once at the block's size: a growing vector would hold two copies at its peak.
    tally.order.reserve(expected.iter().sum::<u64>() as usize);
    let mut hashes: Vec<Vec<u64>> = expected
        .iter()
        .map(|&n| Vec::with_capacity(n as usize))
        .chain(std::iter::repeat_with(Vec::new))
        .take(tiers.len())
        .collect();
    let mut totals = Totals::new(&context);
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
        tally.bytes += n as u64;
        pending.extend_from_slice(&buf[..n]);
        let Some(last) = pending.iter().rposition(|&b| b == b'\n') else {
            sha.update(&buf[..n]);
            continue;
        };
        let mut lines_start = 0;
        if !header_seen {
            header_seen = true;
            let end = memchr::memchr(b'\n', &pending).unwrap_or(last);
            if &pending[..end] != CSV_HEADER.as_bytes() {
                anyhow::bail!("{name} line 1: not the header '{CSV_HEADER}'");
            }
            lines_start = end + 1;
        }
        // The file's hash and the tickets at once: the hash is the one serial part.
        let first = tally.order.len();
        let (_, parts) = rayon::join(
            || sha.update(&buf[..n]),
            || {
                let text = &pending[lines_start.min(last)..last];
                let mut lines: Vec<&[u8]> = Vec::new();
                if lines_start < last {
                    let mut at = 0;
                    for end in memchr::memchr_iter(b'\n', text) {
                        lines.push(&text[at..end]);
                        at = end + 1;
                    }
                    lines.push(&text[at..]);
                }
                let parts: Vec<Part> = lines
                    .par_chunks(TASK)
                    .map(|chunk| read_part(chunk, &context))
                    .collect();
                (lines, parts)
            },
        );
        let (chunk_lines, parts) = parts;
        for (p, part) in parts.into_iter().enumerate() {
            if let Some((i, e)) = part.error {
                anyhow::bail!(
                    "{name} line {}: {e} (the file changed since it was verified?)",
                    first + p * TASK + i + 2
                );
            }
            let chunk = &chunk_lines[p * TASK..];
            merge(&mut tally, &mut totals, &mut hashes, part, chunk, &context).map_err(|e| {
                anyhow::anyhow!("{name}: {e} (the file changed since it was verified?)")
            })?;
        }
        pending.drain(..=last);
        progress(tally.order.len() as u64);
    }
    if !pending.is_empty() {
        anyhow::bail!("{name}: the file does not end with a line end");
    }
    tally.sha256 = sha.finalize().into();
    totals.into_tally(&mut tally, &context);
    // Duplicate layouts: equal hashes sit side by side once sorted, tier by tier.
    for (tier, keys) in hashes.iter_mut().enumerate() {
        keys.par_sort_unstable();
        tally.duplicates[tier] = keys.windows(2).filter(|w| w[0] == w[1]).count() as u64;
    }
    Ok(tally)
}

/// The sums of the tasks' dense counters, turned into the [`Tally`]'s named maps at the end.
struct Totals {
    seen: Vec<[u64; 2]>,
    seen_large: HashMap<(u8, u16), [u64; 2]>,
    observed: Vec<[u64; 2]>,
    shown: Vec<[u64; 2]>,
    near: Vec<[u64; 2]>,
    forms: HashMap<(u8, u64), u64>,
    form_texts: HashMap<(u8, u64), String>,
}

impl Totals {
    fn new(c: &Context<'_>) -> Self {
        Totals {
            seen: vec![[0; 2]; c.seen_names * DENSE],
            seen_large: HashMap::default(),
            observed: vec![[0; 2]; c.seen_names],
            shown: vec![[0; 2]; c.seen_names],
            near: vec![[0; 2]; c.near_names],
            forms: HashMap::default(),
            form_texts: HashMap::default(),
        }
    }

    fn into_tally(self, tally: &mut Tally, c: &Context<'_>) {
        let names = c.reader.feature_names();
        let observations = self
            .seen
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != [0, 0])
            .map(|(i, &v)| (i / DENSE, (i % DENSE) as u16, v))
            .chain(
                self.seen_large
                    .iter()
                    .map(|(&(f, code), &v)| (usize::from(f), code, v)),
            );
        for (f, code, v) in observations {
            let value = c.reader.seen_value(f, code);
            add2(
                tally
                    .observations
                    .entry((names.seen[f], value))
                    .or_insert([0; 2]),
                v,
            );
        }
        for (f, name) in names.seen.iter().enumerate() {
            if self.observed[f] != [0, 0] {
                tally.observed.insert(name, self.observed[f]);
            }
            if self.shown[f] != [0, 0] {
                tally.shown.insert(name, self.shown[f]);
            }
        }
        for (k, name) in names.near.iter().enumerate() {
            if self.near[k] != [0, 0] {
                tally.near_misses.insert(name, self.near[k]);
            }
        }
        for (key, count) in self.forms {
            let text = self.form_texts.get(&key).cloned().unwrap_or_default();
            *tally.forms.entry((usize::from(key.0), text)).or_insert(0) += count;
        }
    }
}

fn merge(
    tally: &mut Tally,
    totals: &mut Totals,
    hashes: &mut [Vec<u64>],
    part: Part,
    lines: &[&[u8]],
    c: &Context<'_>,
) -> Result<(), String> {
    // Parts come in block order, and samples in order within a part: the first are kept.
    for (tier, i) in part.samples {
        let kept = &mut tally.samples[usize::from(tier)];
        if kept.len() < SAMPLES {
            kept.push(String::from_utf8_lossy(layout_of(lines[i])).into_owned());
        }
    }
    for (&tier, &hash) in part.tiers.iter().zip(&part.hashes) {
        tally.order.push(tier);
        tally.counts[usize::from(tier)] += 1;
        hashes[usize::from(tier)].push(hash);
    }
    for (key, (count, i)) in part.forms {
        if let std::collections::hash_map::Entry::Vacant(slot) = totals.form_texts.entry(key) {
            // The decoder's text for this way of winning, read once on its first ticket.
            let layout = std::str::from_utf8(layout_of(lines[i])).map_err(|e| e.to_string())?;
            let e = c
                .reader
                .explain(layout)
                .map_err(|e| format!("invalid layout: {e}"))?;
            slot.insert(e.form);
        }
        *totals.forms.entry(key).or_insert(0) += count;
    }
    for (into, from) in [
        (&mut totals.seen, &part.seen),
        (&mut totals.observed, &part.observed),
        (&mut totals.shown, &part.shown),
        (&mut totals.near, &part.near),
    ] {
        for (a, b) in into.iter_mut().zip(from) {
            add2(a, *b);
        }
    }
    for (k, v) in part.seen_large {
        add2(totals.seen_large.entry(k).or_insert([0; 2]), v);
    }
    Ok(())
}

fn add2(into: &mut [u64; 2], v: [u64; 2]) {
    into[0] += v[0];
    into[1] += v[1];
}

/// The layout field of a ticket line (`serial,prize,layout,sha256`), or the empty slice.
fn layout_of(line: &[u8]) -> &[u8] {
    let mut fields = line.splitn(4, |&b| b == b',');
    fields.nth(2).unwrap_or(&[])
}

fn read_part(lines: &[&[u8]], c: &Context<'_>) -> Part {
    let mut part = Part {
        tiers: Vec::with_capacity(lines.len()),
        hashes: Vec::with_capacity(lines.len()),
        seen: vec![[0; 2]; c.seen_names * DENSE],
        observed: vec![[0; 2]; c.seen_names],
        shown: vec![[0; 2]; c.seen_names],
        near: vec![[0; 2]; c.near_names],
        ..Part::default()
    };
    let mut seen_in_task = vec![0usize; c.tiers.len()];
    let mut features = Features::default();
    for (i, line) in lines.iter().enumerate() {
        if let Err(e) = read_ticket(line, i, c, &mut part, &mut features, &mut seen_in_task) {
            part.error = Some((i, e));
            return part;
        }
    }
    part
}

/// Reads one ticket line into the task's counters.
#[inline]
fn read_ticket(
    line: &[u8],
    i: usize,
    c: &Context<'_>,
    part: &mut Part,
    features: &mut Features,
    seen_in_task: &mut [usize],
) -> Result<(), String> {
    let mut commas = memchr::memchr_iter(b',', line);
    let (Some(a), Some(b), Some(d)) = (commas.next(), commas.next(), commas.next()) else {
        return Err("not a ticket line".into());
    };
    let (prize, layout) = (&line[a + 1..b], &line[b + 1..d]);
    let Some(tier) = c.tiers.iter().position(|t| t.as_bytes() == prize) else {
        return Err(format!("prize {} is not one of the stake", shown(prize)));
    };
    c.reader
        .features(layout, features)
        .map_err(|e| format!("invalid layout: {e}"))?;
    if c.cents[tier] != Some(features.won) {
        let won = rust_decimal::Decimal::from(features.won) / rust_decimal::Decimal::ONE_HUNDRED;
        return Err(format!(
            "the layout wins {} € but the prize column says {} €",
            crate::money::canonical(won),
            c.tiers[tier]
        ));
    }
    let winner = usize::from(tier != c.loser);
    let form = part
        .forms
        .entry((tier as u8, features.form))
        .or_insert((0, i));
    form.0 += 1;
    let (mut observed, mut shown_mask) = (0u32, 0u32);
    for &(f, code) in features.seen() {
        let f = usize::from(f);
        observed |= 1 << f;
        if usize::from(code) < DENSE {
            let slot = f * DENSE + usize::from(code);
            part.seen[slot][winner] += 1;
            shown_mask |= u32::from(c.positive[slot]) << f;
        } else {
            part.seen_large.entry((f as u8, code)).or_insert([0; 2])[winner] += 1;
            shown_mask |= u32::from(c.reader.seen_value(f, code) > 0) << f;
        }
    }
    // Rates count tickets: each feature once per ticket.
    for f in 0..c.seen_names {
        part.observed[f][winner] += u64::from(observed >> f & 1);
        part.shown[f][winner] += u64::from(shown_mask >> f & 1);
    }
    for k in 0..c.near_names {
        part.near[k][winner] += u64::from(features.near[k] > 0);
    }
    if seen_in_task[tier] < SAMPLES {
        seen_in_task[tier] += 1;
        part.samples.push((tier as u8, i));
    }
    part.tiers.push(tier as u8);
    part.hashes.push(xxhash_rust::xxh3::xxh3_64(layout));
    Ok(())
}
