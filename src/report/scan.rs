//! What the report counts of every ticket, tallied inside `verify`'s own pass over the block
//! ([`crate::verify::PieceObserver`]): no second read, hash or split of the file. Each piece
//! of valid lines `verify` has just checked (decoded, its wins matched to its prize column)
//! goes, in the same parallel task, through its mechanic's features-only path
//! ([`Explain::features`]: one pass over the layout bytes into a fixed-size record, no
//! allocation), its wins checked against the prize column once more; the pieces' counters are
//! folded in block order. Memory is bounded by the block's size: a byte per ticket for the
//! order, 8 bytes per ticket for the duplicate check.
//!
//! The decoder stays the referee: the tallies count only if `verify`'s verdict on the block is
//! ok (the caller checks it), and then every line tallied is one it accepted, from the bytes
//! whose SHA-256 is the signed manifest's. The texts of the forms are the decoder's (asked once
//! per form key, on the first ticket that shows it), and the sample layouts are explained in
//! full by `show`'s path.
//!
//! Duplicate layouts are found by 64-bit hashes compared within a tier, and made exact: if
//! two tickets of a tier share a hash, the file is read once more (its SHA-256 and size must
//! still be the manifest's) and the layouts of those hashes are compared byte for byte.

use crate::block::manifest::Manifest;
use crate::block::CSV_HEADER;
use crate::game::{Game, Stake};
use crate::mechanic::explain::{Explain, Features};
use crate::money::canonical;
use crate::untrusted::shown_path;
use crate::verify::{CheckedLine, PieceObserver, PiecePart};
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Sample layouts kept per prize (the first ones of the block): the most `report --samples`
/// takes.
pub const SAMPLES: usize = 10;
/// Codes of one feature counted in a dense table; larger codes go to a map.
const DENSE: usize = 256;
/// Bytes read at a time by the duplicates' re-read.
const READ_SIZE: usize = 8 << 20;
/// The duplicates' re-read refuses a line longer than this (a ticket line is a few hundred
/// bytes; the file was verified, so only a file changed since would hold one).
const MAX_LINE: usize = 64 << 10;
/// The duplicates' re-read keeps each distinct layout among those whose hash is shared; it
/// gives up past this many bytes of them (only a block made to collide could get there).
const MAX_SUSPECT_BYTES: usize = 256 << 20;

/// The hash of a layout for the duplicate check.
pub type LayoutHash = fn(&[u8]) -> u64;

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
}

/// What [`Observer::finish`] gives.
pub struct Observed {
    /// The tallies.
    pub tally: Tally,
    /// The block's manifest, as `verify` checked it.
    pub manifest: Manifest,
    /// The game definition it was checked against.
    pub game: Game,
    /// Its stake.
    pub stake: Stake,
    /// What counts the layouts that repeat an earlier one of their tier.
    pub duplicates: Duplicates,
}

/// The duplicate check of a block, once its every layout hash is known.
pub struct Duplicates {
    csv: std::path::PathBuf,
    /// Per tier, the layout hash of each ticket.
    hashes: Vec<Vec<u64>>,
    /// What the re-read needs: the tiers as written, the file's size and SHA-256 (hex).
    tiers: Vec<String>,
    bytes: u64,
    sha256: String,
    hash: LayoutHash,
}

impl Duplicates {
    /// Per tier, the tickets whose layout is byte for byte an earlier ticket's of the same
    /// tier. Distinct hashes are distinct layouts; a hash held more than once is checked by
    /// reading the file again (it must still be the manifest's bytes).
    pub fn count(mut self) -> Result<Vec<u64>, TallyError> {
        let mut shared: Vec<HashSet<u64>> = Vec::with_capacity(self.hashes.len());
        for keys in self.hashes.iter_mut() {
            keys.par_sort_unstable();
            shared.push(
                keys.windows(2)
                    .filter(|w| w[0] == w[1])
                    .map(|w| w[0])
                    .collect(),
            );
        }
        if shared.iter().all(HashSet::is_empty) {
            return Ok(vec![0; self.hashes.len()]);
        }
        // Memory first: the hashes are no longer needed.
        drop(std::mem::take(&mut self.hashes));
        let file = crate::fs::open::open_regular(&self.csv).map_err(|error| TallyError::Open {
            csv: self.csv.clone(),
            error,
        })?;
        exact_duplicates(file, &shared, &self.re_read(), self.hash).map_err(|error| {
            TallyError::Reread {
                csv: self.csv.clone(),
                error,
            }
        })
    }

    fn re_read(&self) -> ReRead<'_> {
        ReRead {
            tiers: &self.tiers,
            bytes: self.bytes,
            sha256: &self.sha256,
        }
    }
}

/// What the duplicates' re-read checks the file against.
struct ReRead<'a> {
    /// The tiers as written in the prize column.
    tiers: &'a [String],
    /// The manifest's size and SHA-256 (hex) of the file.
    bytes: u64,
    sha256: &'a str,
}

/// Tallies what the report needs of every ticket `verify` checks: give it to
/// [`crate::verify::verify_block_observed`], then take the [`Tally`] with [`Observer::finish`]
/// if the verdict is ok.
pub struct Observer {
    hash: LayoutHash,
    /// Set by `start`.
    context: OnceLock<Context>,
    /// Set by `start`; folded into in block order.
    state: Mutex<Option<State>>,
}

/// What every task needs to read its tickets.
struct Context {
    /// The tiers as written in the prize column, highest first, then `0`.
    tiers: Vec<String>,
    /// The prize of each tier in cents (`None`: not whole cents, no layout can win it).
    cents: Vec<Option<u64>>,
    loser: usize,
    reader: Box<dyn Explain>,
    /// Per feature, whether each dense code has a value above 0.
    positive: Vec<bool>,
    seen_names: usize,
    near_names: usize,
    /// The CSV's size and SHA-256 (hex) as the manifest states them (for the re-read).
    bytes: u64,
    sha256: String,
}

/// Why the tallies of a block `verify` accepted, or its count of duplicate layouts, could not be
/// had ([`Observer::finish`], [`Duplicates::count`]). Each names the block's file.
#[derive(Debug, thiserror::Error)]
pub enum TallyError {
    /// The report's observer saw no ticket of a block that verified: a defect of the program.
    #[error("{}: internal error: the report saw no ticket of the block", shown_path(.csv))]
    NoTicket {
        /// The block's CSV.
        csv: PathBuf,
    },
    /// A ticket's features, or a way of winning, could not be tallied (the [`ScanError`] says
    /// where and why): a defect of the program or of the game's definition.
    #[error("{} {error}", shown_path(.csv))]
    Scan {
        /// The block's CSV.
        csv: PathBuf,
        /// Where and why (shown in the sentence).
        error: ScanError,
    },
    /// The block could not be opened again to count the layouts that share a hash.
    #[error("{}: cannot read: {error}", shown_path(.csv))]
    Open {
        /// The block's CSV.
        csv: PathBuf,
        /// The operating system's error (shown in the sentence).
        error: std::io::Error,
    },
    /// The second reading that counts the exact duplicates stopped: the file changed, could not
    /// be read, looks made to collide, or a signal came.
    #[error("{}: {error}", shown_path(.csv))]
    Reread {
        /// The block's CSV.
        csv: PathBuf,
        /// Why (shown in the sentence).
        error: RereadError,
    },
}

/// Why the report's pass could not tally a block verify accepted (a defect of the program, or
/// of its definition: the block itself verified). Each says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The mechanic has more features than the tallies hold.
    #[error(": too many features for the report's tallies")]
    TooManyFeatures,
    /// A ticket's features could not be read (its line: the index + 2).
    #[error("line {line}: {error}")]
    Line {
        /// The line in the CSV.
        line: u64,
        /// Why.
        error: TicketError,
    },
    /// The first layout of a way of winning is not UTF-8.
    #[error(": {0}")]
    FormNotUtf8(std::str::Utf8Error),
    /// The first layout of a way of winning is not explained.
    #[error(": invalid layout: {0}")]
    FormLayout(crate::mechanic::LayoutError),
}

/// Why the features path could not read one ticket.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TicketError {
    /// The line's tier is none of the stake's.
    #[error("internal error: a tier the stake does not have")]
    NoSuchTier,
    /// The features path refuses the layout.
    #[error("invalid layout: {0}")]
    Layout(crate::mechanic::LayoutError),
    /// The features path wins another prize than the decoder.
    #[error("the report reads the layout as winning {won} € but the decoder read {decoded} €: the features path disagrees with the decoder (a defect of the program: please report it)")]
    Disagrees {
        /// What the features path wins, canonical euros.
        won: String,
        /// What the decoder read.
        decoded: String,
    },
}

/// Why the re-read that counts the exact duplicates stopped.
#[derive(Debug, thiserror::Error)]
pub enum RereadError {
    /// The run was interrupted.
    #[error("{0}")]
    Interrupted(crate::interrupt::Interrupted),
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Read(std::io::Error),
    /// The file is no longer the manifest's bytes.
    #[error("the file changed while it was read (its SHA-256 or size is no longer the manifest's): run the report again")]
    Changed,
    /// Too many distinct layouts share their hashes.
    #[error(
        "more than {} MB of distinct layouts share their 64-bit hashes: the block looks made to collide; the duplicates cannot be counted",
        MAX_SUSPECT_BYTES >> 20
    )]
    Collide,
}

/// The tallies folded so far.
struct State {
    tally: Tally,
    totals: Totals,
    /// Per tier, the layout hash of each ticket.
    hashes: Vec<Vec<u64>>,
    /// The first error, naming the line.
    error: Option<ScanError>,
    /// The manifest, game and stake `verify` checked the block against.
    head: (Manifest, Game, Stake),
}

/// What one piece tallied.
#[derive(Default)]
struct Part {
    /// Tier of each ticket, in order.
    tiers: Vec<u8>,
    /// Hash of each layout, in order.
    hashes: Vec<u64>,
    /// (tier, form key) → (tickets, the layout of the first one).
    forms: Vec<((u8, u64), u64, Vec<u8>)>,
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
    /// The first layouts of each tier in the piece, in order.
    samples: Vec<(u8, String)>,
    /// The first line the features path could not read (its index), and why.
    error: Option<(u64, TicketError)>,
}

impl Default for Observer {
    fn default() -> Self {
        Observer::new()
    }
}

impl Observer {
    /// An observer for one block.
    pub fn new() -> Self {
        Observer::with_hash(xxhash_rust::xxh3::xxh3_64)
    }

    /// An observer whose duplicate check hashes layouts with `hash` (tests force collisions).
    pub fn with_hash(hash: LayoutHash) -> Self {
        Observer {
            hash,
            context: OnceLock::new(),
            state: Mutex::new(None),
        }
    }

    /// The tallies of a block whose verdict was ok (`csv` is its file, read once more only if
    /// two layouts of a tier share a hash), with the manifest, game and stake `verify` checked
    /// it against.
    pub fn finish(self, csv: &Path) -> Result<Observed, TallyError> {
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (Some(context), Some(state)) = (self.context.get(), state) else {
            return Err(TallyError::NoTicket {
                csv: csv.to_path_buf(),
            });
        };
        if let Some(error) = state.error {
            return Err(TallyError::Scan {
                csv: csv.to_path_buf(),
                error,
            });
        }
        let mut tally = state.tally;
        state.totals.into_tally(&mut tally, context);
        let (manifest, game, stake) = state.head;
        Ok(Observed {
            tally,
            manifest,
            game,
            stake,
            duplicates: Duplicates {
                csv: csv.to_path_buf(),
                hashes: state.hashes,
                tiers: context.tiers.clone(),
                bytes: context.bytes,
                sha256: context.sha256.clone(),
                hash: self.hash,
            },
        })
    }
}

impl PieceObserver for Observer {
    fn start(&self, manifest: &Manifest, game: &Game, stake: &Stake) {
        let reader = stake.mechanic.explainer();
        let names = reader.feature_names();
        let mut state = State {
            tally: Tally::default(),
            totals: Totals::default(),
            hashes: Vec::new(),
            error: None,
            head: (manifest.clone(), game.clone(), stake.clone()),
        };
        if names.seen.len() > 32 || names.near.len() > crate::mechanic::explain::MAX_NEAR {
            state.error = Some(ScanError::TooManyFeatures);
        }
        let tiers: Vec<String> = stake.tiers().into_iter().map(canonical).collect();
        let mut positive = vec![false; names.seen.len() * DENSE];
        for (i, p) in positive.iter_mut().enumerate() {
            *p = reader.seen_value(i / DENSE, (i % DENSE) as u16) > 0;
        }
        let mut expected: Vec<u64> = stake.prizes.iter().map(|p| p.count).collect();
        expected.push(stake.losers(game.block_size));
        let context = Context {
            cents: tiers
                .iter()
                .map(|t| crate::money::parse_canonical(t).and_then(crate::money::cents))
                .collect(),
            loser: tiers.len().saturating_sub(1),
            positive,
            seen_names: names.seen.len(),
            near_names: names.near.len(),
            reader,
            bytes: manifest.csv.bytes,
            sha256: manifest.csv.sha256.clone(),
            tiers,
        };
        state.tally.counts = vec![0; context.tiers.len()];
        state.tally.samples = vec![Vec::new(); context.tiers.len()];
        // Reserved once at the block's size: a growing vector would hold two copies at its
        // peak. Article 3's counts are the verified block's (a block that holds others fails).
        state
            .tally
            .order
            .reserve(expected.iter().sum::<u64>() as usize);
        state.hashes = expected
            .iter()
            .map(|&n| Vec::with_capacity(n as usize))
            .chain(std::iter::repeat_with(Vec::new))
            .take(context.tiers.len())
            .collect();
        state.totals = Totals::new(&context);
        // One block per observer: a second start is ignored (it cannot happen).
        if self.context.set(context).is_ok() {
            *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(state);
        }
    }

    fn piece(&self, lines: &[CheckedLine<'_>]) -> PiecePart {
        match self.context.get() {
            Some(c) => Box::new(read_part(lines, c, self.hash)),
            None => Box::new(Part::default()),
        }
    }

    fn fold(&self, part: PiecePart) {
        let Ok(part) = part.downcast::<Part>() else {
            return;
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (Some(state), Some(c)) = (state.as_mut(), self.context.get()) else {
            return;
        };
        if state.error.is_some() {
            return;
        }
        if let Err(e) = merge(state, *part, c) {
            state.error = Some(e);
        }
    }
}

/// The sums of the pieces' dense counters, turned into the [`Tally`]'s named maps at the end.
#[derive(Default)]
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
    fn new(c: &Context) -> Self {
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

    fn into_tally(self, tally: &mut Tally, c: &Context) {
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

/// Adds one piece to the block's tallies (pieces come in block order).
fn merge(state: &mut State, part: Part, c: &Context) -> Result<(), ScanError> {
    if let Some((index, error)) = part.error {
        return Err(ScanError::Line {
            line: index.saturating_add(2),
            error,
        });
    }
    let (tally, totals) = (&mut state.tally, &mut state.totals);
    // Samples come in order within a piece: the first of the block are kept.
    for (tier, layout) in part.samples {
        let kept = &mut tally.samples[usize::from(tier)];
        if kept.len() < SAMPLES {
            kept.push(layout);
        }
    }
    for (&tier, &hash) in part.tiers.iter().zip(&part.hashes) {
        tally.order.push(tier);
        tally.counts[usize::from(tier)] += 1;
        state.hashes[usize::from(tier)].push(hash);
    }
    for (key, count, layout) in part.forms {
        if let std::collections::hash_map::Entry::Vacant(text) = totals.form_texts.entry(key) {
            // The decoder's text for this way of winning, read once on its first ticket.
            let layout = std::str::from_utf8(&layout).map_err(ScanError::FormNotUtf8)?;
            let e = c.reader.explain(layout).map_err(ScanError::FormLayout)?;
            text.insert(e.form);
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

fn read_part(lines: &[CheckedLine<'_>], c: &Context, hash: LayoutHash) -> Part {
    let mut part = Part {
        tiers: Vec::with_capacity(lines.len()),
        hashes: Vec::with_capacity(lines.len()),
        seen: vec![[0; 2]; c.seen_names * DENSE],
        observed: vec![[0; 2]; c.seen_names],
        shown: vec![[0; 2]; c.seen_names],
        near: vec![[0; 2]; c.near_names],
        ..Part::default()
    };
    // (tier, form key) → (tickets, the line of the first one).
    let mut forms: HashMap<(u8, u64), (u64, usize)> = HashMap::default();
    let mut seen_in_piece = vec![0usize; c.tiers.len()];
    let mut features = Features::default();
    for (i, line) in lines.iter().enumerate() {
        if let Err(e) = read_ticket(line, c, &mut part, &mut features) {
            part.error = Some((line.index, e));
            return part;
        }
        let form = forms
            .entry((line.tier as u8, features.form))
            .or_insert((0, i));
        form.0 += 1;
        if seen_in_piece[line.tier] < SAMPLES {
            seen_in_piece[line.tier] += 1;
            let layout = String::from_utf8_lossy(line.layout).into_owned();
            part.samples.push((line.tier as u8, layout));
        }
        part.tiers.push(line.tier as u8);
        part.hashes.push(hash(line.layout));
    }
    part.forms = forms
        .into_iter()
        .map(|(key, (count, i))| (key, count, lines[i].layout.to_vec()))
        .collect();
    part
}

/// Reads one ticket's features into the piece's counters.
#[inline]
fn read_ticket(
    line: &CheckedLine<'_>,
    c: &Context,
    part: &mut Part,
    features: &mut Features,
) -> Result<(), TicketError> {
    let tier = line.tier;
    if tier >= c.tiers.len() {
        return Err(TicketError::NoSuchTier);
    }
    c.reader
        .features(line.layout, features)
        .map_err(TicketError::Layout)?;
    if c.cents[tier] != Some(features.won) {
        let won = rust_decimal::Decimal::from(features.won) / rust_decimal::Decimal::ONE_HUNDRED;
        return Err(TicketError::Disagrees {
            won: canonical(won),
            decoded: c.tiers[tier].clone(),
        });
    }
    let winner = usize::from(tier != c.loser);
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
    Ok(())
}

/// Reads the block again (it must be the manifest's bytes) and counts, among the tickets of
/// each tier whose layout hash is in `shared`, those whose layout is the same as an earlier
/// one's.
fn exact_duplicates<R: Read>(
    file: R,
    shared: &[HashSet<u64>],
    c: &ReRead<'_>,
    hash: LayoutHash,
) -> Result<Vec<u64>, RereadError> {
    let mut file = file.take(c.bytes.saturating_add(1));
    // (tier, hash) → each distinct layout → its tickets.
    let mut groups: HashMap<(usize, u64), BTreeMap<Vec<u8>, u64>> = HashMap::default();
    let mut held = 0usize;
    let mut sha = Sha256::new();
    let mut bytes = 0u64;
    let mut buf = vec![0u8; READ_SIZE];
    let mut pending: Vec<u8> = Vec::new();
    let mut header = true;
    loop {
        crate::interrupt::check().map_err(RereadError::Interrupted)?;
        let n = file.read(&mut buf).map_err(RereadError::Read)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        sha.update(&buf[..n]);
        pending.extend_from_slice(&buf[..n]);
        let mut at = 0;
        for end in memchr::memchr_iter(b'\n', &pending) {
            let line = &pending[at..end];
            at = end + 1;
            if std::mem::take(&mut header) {
                if line != CSV_HEADER.as_bytes() {
                    return Err(RereadError::Changed);
                }
                continue;
            }
            let mut fields = line.splitn(4, |&b| b == b',');
            let (_, Some(prize), Some(layout)) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(RereadError::Changed);
            };
            let Some(tier) = c.tiers.iter().position(|t| t.as_bytes() == prize) else {
                return Err(RereadError::Changed);
            };
            let h = hash(layout);
            if !shared[tier].contains(&h) {
                continue;
            }
            let distinct = groups.entry((tier, h)).or_default();
            match distinct.get_mut(layout) {
                Some(n) => *n += 1,
                None => {
                    held += layout.len();
                    if held > MAX_SUSPECT_BYTES {
                        return Err(RereadError::Collide);
                    }
                    distinct.insert(layout.to_vec(), 1);
                }
            }
        }
        pending.drain(..at);
        if pending.len() > MAX_LINE {
            return Err(RereadError::Changed);
        }
    }
    let sha256: [u8; 32] = sha.finalize().into();
    if !pending.is_empty() || bytes != c.bytes || hex::encode(sha256) != c.sha256 {
        return Err(RereadError::Changed);
    }
    let mut out = vec![0u64; shared.len()];
    for ((tier, _), distinct) in groups {
        // Every ticket but the first of each distinct layout repeats an earlier one.
        out[tier] += distinct.values().map(|n| n - 1).sum::<u64>();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIERS: [&str; 2] = ["10", "0"];

    /// What the re-read of the block `text` checks, tiers `10` and `0`.
    fn facts(text: &str) -> (Vec<String>, u64, String) {
        (
            TIERS.iter().map(|t| t.to_string()).collect(),
            text.len() as u64,
            hex::encode(Sha256::digest(text.as_bytes())),
        )
    }

    fn re_read(facts: &(Vec<String>, u64, String)) -> ReRead<'_> {
        ReRead {
            tiers: &facts.0,
            bytes: facts.1,
            sha256: &facts.2,
        }
    }

    fn block(lines: &[(&str, &str)]) -> String {
        let mut text = format!("{CSV_HEADER}\n");
        for (i, (prize, layout)) in lines.iter().enumerate() {
            text.push_str(&format!("s{i},{prize},{layout},h\n"));
        }
        text
    }

    /// Hashes of the block's layouts by tier, as the pass collects them.
    fn hashes(lines: &[(&str, &str)], hash: LayoutHash) -> Vec<Vec<u64>> {
        let mut out = vec![Vec::new(), Vec::new()];
        for (prize, layout) in lines {
            out[usize::from(*prize == "0")].push(hash(layout.as_bytes()));
        }
        out
    }

    fn count(lines: &[(&str, &str)], hash: LayoutHash) -> Result<Vec<u64>, String> {
        let text = block(lines);
        let facts = facts(&text);
        let mut shared = Vec::new();
        for mut keys in hashes(lines, hash) {
            keys.sort_unstable();
            let set: HashSet<u64> = keys
                .windows(2)
                .filter(|w| w[0] == w[1])
                .map(|w| w[0])
                .collect();
            shared.push(set);
        }
        exact_duplicates(text.as_bytes(), &shared, &re_read(&facts), hash)
            .map_err(|e| e.to_string())
    }

    const TICKETS: [(&str, &str); 6] = [
        ("10", "A"),
        ("10", "B"),
        ("0", "A"),
        ("10", "A"),
        ("0", "C"),
        ("10", "A"),
    ];

    #[test]
    fn a_repeated_layout_is_counted_within_its_tier() {
        // "A" three times at 10 €: two repeat an earlier one; "A" at 0 € is another tier.
        assert_eq!(count(&TICKETS, xxhash_rust::xxh3::xxh3_64), Ok(vec![2, 0]));
    }

    #[test]
    fn layouts_that_only_share_their_hash_are_not_duplicates() {
        // Every layout hashes alike: only the equal bytes count.
        assert_eq!(count(&TICKETS, |_| 7), Ok(vec![2, 0]));
        assert_eq!(
            count(&[("10", "A"), ("10", "B"), ("0", "C"), ("0", "D")], |_| 7),
            Ok(vec![0, 0])
        );
    }

    #[test]
    fn the_re_read_refuses_a_file_that_is_not_the_manifests() {
        let text = block(&TICKETS);
        let mut facts = facts(&text);
        let shared = vec![HashSet::from_iter([7u64]), HashSet::default()];
        let mut changed = text.clone().into_bytes();
        changed[text.len() - 2] = b'x';
        let said = exact_duplicates(&changed[..], &shared, &re_read(&facts), |_| 7)
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("the file changed while it was read"),
            "{said}"
        );
        facts.1 -= 1;
        let said = exact_duplicates(text.as_bytes(), &shared, &re_read(&facts), |_| 7)
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("the file changed while it was read"),
            "{said}"
        );
    }

    /// The errors of a block's tallies name its file as the messages did.
    #[test]
    fn tally_errors_name_the_block() {
        let csv = PathBuf::from("e/block-00001.csv");
        let none = TallyError::NoTicket { csv: csv.clone() };
        assert_eq!(
            none.to_string(),
            "e/block-00001.csv: internal error: the report saw no ticket of the block"
        );
        let line = TallyError::Scan {
            csv: csv.clone(),
            error: ScanError::Line {
                line: 5,
                error: TicketError::NoSuchTier,
            },
        };
        assert_eq!(
            line.to_string(),
            "e/block-00001.csv line 5: internal error: a tier the stake does not have"
        );
        let changed = TallyError::Reread {
            csv,
            error: RereadError::Changed,
        };
        assert!(changed
            .to_string()
            .starts_with("e/block-00001.csv: the file changed while it was read"));
    }
}
