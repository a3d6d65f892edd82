//! Independent verification of a block: everything is recomputed from the files and the game
//! definition, trusting only the decoders.
//!
//! Checked: the CSV header and line format, every serial, every ticket's SHA-256, every layout
//! (valid under SPEC §3 and decoding to its prize column), the multiset of prizes against
//! Article 3 for the stake, the total, the CSV's size and SHA-256, the Merkle root, the
//! manifest's fields, and the Ed25519 signature of the manifest.

use crate::block::manifest::{
    Manifest, PrizeCount, FORMAT, FORMAT_1, GENERATOR_VERSION, MAX_MANIFEST_BYTES,
};
use crate::block::merkle::MerkleRoot;
use crate::block::{self, keys, CSV_HEADER};
use crate::game::{Game, Stake};
use crate::mechanic::{self, Decoder, Synthesizer};
use crate::money::{canonical, parse_canonical};
use crate::plan::{seed_commitment, BlockKey, Seed};
use crate::untrusted::{read_at_most, shown, shown_path, ReadError};
use ed25519_dalek::VerifyingKey;
use rayon::prelude::*;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Problems listed per block before the rest are only counted.
const MAX_LISTED: usize = 20;
/// Bytes read at a time.
const READ_SIZE: usize = 8 << 20;

/// How to verify.
#[derive(Clone, Default)]
pub struct VerifyOptions {
    /// The key the manifests must be signed with; without it, the emission's own
    /// `emission.pub.pem` is used (integrity, not origin).
    pub public_key: Option<VerifyingKey>,
    /// The game definition to check against, instead of the built-in one the manifest names.
    pub game: Option<Game>,
    /// Also count the forms each prize takes (slower).
    pub forms: bool,
    /// The emission's seed, for an audit: check the manifest's commitment, and that every
    /// ticket's prize is the one the seed draws and its layout the one the seed makes.
    pub seed: Option<Seed>,
}

/// The verdict on one block.
#[derive(Debug, Clone, Default)]
pub struct BlockReport {
    /// The block's CSV file.
    pub csv: PathBuf,
    /// What is wrong, each naming the file, and the line and serial where it applies.
    pub problems: Vec<String>,
    /// Ticket-line problems found beyond the listed ones.
    pub unlisted: u64,
    /// Ticket-line problems listed so far.
    listed_lines: usize,
    /// Things to know that are not failures.
    pub warnings: Vec<String>,
    /// Ticket lines read.
    pub tickets: u64,
    /// With `forms`: (prize, form) → tickets.
    pub forms: BTreeMap<(Decimal, String), u64>,
}

impl BlockReport {
    /// True if nothing is wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// A problem with the block as a whole: always listed (there are few).
    fn problem(&mut self, text: String) {
        self.problems.push(text);
    }

    /// A problem on one ticket line: the first [`MAX_LISTED`] are listed, the rest counted.
    fn line_problem(&mut self, text: String) {
        if self.listed_lines < MAX_LISTED {
            self.listed_lines += 1;
            self.problems.push(text);
        } else {
            self.unlisted += 1;
        }
    }
}

/// The block CSV files named by `paths`: files as they are, folders walked for
/// `block-NNNNN.csv`, in name order.
pub fn find_blocks(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| anyhow::anyhow!("cannot read folder {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out)?;
            } else if block_number(&path).is_some() {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut out)?;
        } else if path.exists() {
            out.push(path.clone());
        } else {
            anyhow::bail!("{} does not exist", path.display());
        }
    }
    Ok(out)
}

/// The block number in a `block-NNNNN.csv` file name.
pub fn block_number(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_prefix("block-")?.strip_suffix(".csv")?;
    (digits.len() == 5 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Verifies one block, given its CSV file; `progress` counts the ticket lines checked.
pub fn verify_block(
    csv: &Path,
    options: &VerifyOptions,
    progress: &indicatif::ProgressBar,
) -> BlockReport {
    let mut report = BlockReport {
        csv: csv.to_path_buf(),
        ..BlockReport::default()
    };
    let name = shown_path(csv);
    let Some(number) = block_number(csv) else {
        report.problem(format!(
            "{name}: not a block file (block files are named block-NNNNN.csv)"
        ));
        return report;
    };
    let dir = csv.parent().unwrap_or(Path::new("."));
    let manifest_path = dir.join(block::manifest_name(number));
    let manifest_bytes = match read_at_most(&manifest_path, MAX_MANIFEST_BYTES, "a manifest") {
        Ok(b) => b,
        Err(e @ ReadError::TooLarge { .. }) => {
            report.problem(format!("{}: {e}", shown_path(&manifest_path)));
            return report;
        }
        Err(e) => {
            report.problem(format!(
                "{}: cannot read the manifest: {e}",
                shown_path(&manifest_path)
            ));
            return report;
        }
    };
    let parsed = Manifest::from_bytes(&manifest_bytes);
    check_signature(
        &mut report,
        dir,
        number,
        &manifest_bytes,
        parsed.as_ref().ok(),
        options,
    );
    let manifest = match parsed {
        Ok(m) => m,
        Err(e) => {
            report.problem(format!(
                "{}: not a valid manifest: {e}",
                shown_path(&manifest_path)
            ));
            return report;
        }
    };
    let Some((game, stake)) =
        check_manifest(&mut report, &manifest_path, &manifest, number, csv, options)
    else {
        return report;
    };
    let tickets = match TicketCheck::new(&game, &stake, manifest.emission, manifest.block) {
        Ok(t) => t,
        Err(m) => {
            report.problem(format!("{name}: {m}"));
            return report;
        }
    };
    let replay = match &options.seed {
        None => None,
        Some(seed) => {
            if hex::encode(seed_commitment(seed)) != manifest.seed_sha256 {
                report.problem(format!(
                    "{}: seed_sha256 is not the SHA-256 of the seed given: this block was made from another seed (an emission has one seed)",
                    shown_path(&manifest_path)
                ));
                return report;
            }
            // A replay is only meaningful with the generator that made the block.
            if manifest.generator_version() != Some(GENERATOR_VERSION) {
                report.problem(format!(
                    "{}: the block was made by {} and this program is generator {GENERATOR_VERSION} ({}): it cannot replay it; use the version that made it",
                    manifest_path.display(),
                    crate::emission::shown(manifest.generator.as_bytes()),
                    crate::block::manifest::generator()
                ));
                return report;
            }
            let synthesizer = match mechanic::synthesizer(&game, &stake) {
                Ok(s) => s,
                Err(m) => {
                    report.problem(format!("{name}: game {}: {m}", game.id));
                    return report;
                }
            };
            let key = BlockKey::derive(seed, &game.id, &stake, manifest.emission, manifest.block);
            Some(Replay {
                order: key.prize_order(&stake, game.block_size),
                key,
                synthesizer,
            })
        }
    };
    let checker = LineChecker {
        name: &name,
        tickets: &tickets,
        forms: options.forms,
        replay: replay.as_ref(),
    };
    // Sizes first: a file larger than its manifest says, or a manifest that states more than
    // a block of this game can hold, is refused before a byte of the file is read.
    let most = tickets.max_block_bytes(game.block_size);
    if manifest.csv.bytes > most {
        report.problem(format!(
            "{}: the manifest says the CSV holds {} bytes, more than a block of {} can ({most}): the file is not read",
            shown_path(&manifest_path),
            manifest.csv.bytes,
            game.id
        ));
        return report;
    }
    match std::fs::metadata(csv) {
        Ok(meta) if meta.len() > manifest.csv.bytes => {
            report.problem(format!(
                "{name}: {} bytes, more than the {} the manifest says: not read",
                meta.len(),
                manifest.csv.bytes
            ));
            return report;
        }
        Ok(_) => {}
        Err(e) => {
            report.problem(format!("{name}: cannot read: {e}"));
            return report;
        }
    }
    let scan = match checker.scan(csv, manifest.csv.bytes, &mut report, progress) {
        Ok(scan) => scan,
        Err(e) => {
            report.problem(format!("{name}: cannot read: {e}"));
            return report;
        }
    };
    if !scan.complete {
        // A line longer than any ticket line: the rest of the file was not read.
        return report;
    }
    // The block as a whole.
    if report.tickets != game.block_size {
        report.problem(format!(
            "{name}: {} tickets, a block of {} holds {}",
            report.tickets, game.id, game.block_size
        ));
    }
    if report.tickets != manifest.tickets {
        report.problem(format!(
            "{name}: {} tickets, the manifest says {}",
            report.tickets, manifest.tickets
        ));
    }
    let expected = expected_prizes(&game, &stake);
    // Checked: the counts come from the file (bounded by the tickets a block holds, so exact).
    let mut total = Some(Decimal::ZERO);
    for (tier, &count) in scan.counts.iter().enumerate() {
        let amount = tickets.tiers[tier];
        total = total
            .zip(amount.checked_mul(Decimal::from(count)))
            .and_then(|(sum, tier_total)| sum.checked_add(tier_total));
        if count != expected[tier].count {
            report.problem(format!(
                "{name}: {count} tickets win {} €, Article 3 for a {} € block says {}",
                tickets.tier_text[tier],
                canonical(stake.price),
                expected[tier].count
            ));
        }
    }
    let total_text = total.map_or_else(|| "more than an amount can hold".into(), canonical);
    if total_text != manifest.total_prizes || total != Some(stake.total) {
        report.problem(format!(
            "{name}: the prizes add up to {total_text} €; the manifest says {} € and Article 3 {} €",
            shown(&manifest.total_prizes),
            canonical(stake.total)
        ));
    }
    if scan.bytes != manifest.csv.bytes {
        report.problem(format!(
            "{name}: {} bytes, the manifest says {}",
            scan.bytes, manifest.csv.bytes
        ));
    }
    if hex::encode(scan.sha256) != manifest.csv.sha256 {
        report.problem(format!(
            "{name}: the file's SHA-256 is {}, the manifest says {}",
            hex::encode(scan.sha256),
            shown(&manifest.csv.sha256)
        ));
    }
    if hex::encode(scan.root) != manifest.tickets_root {
        report.problem(format!(
            "{name}: the Merkle root of the tickets is {}, the manifest says {}",
            hex::encode(scan.root),
            shown(&manifest.tickets_root)
        ));
    }
    report
}

/// A block's manifest, checked as [`verify_block`] checks it, without reading its tickets.
pub struct CheckedManifest {
    /// The manifest.
    pub manifest: Manifest,
    /// The game definition it was checked against.
    pub game: Game,
    /// Its stake.
    pub stake: Stake,
}

/// The first half of [`verify_block`], for tools that read one ticket (`show`): the manifest
/// (bounded read), its signature, its fields against the game definition and Article 3, and
/// the block's place. On failure the report lists the problems; its warnings are kept either
/// way.
pub fn check_manifest_of(
    csv: &Path,
    options: &VerifyOptions,
) -> (BlockReport, Option<CheckedManifest>) {
    let mut report = BlockReport {
        csv: csv.to_path_buf(),
        ..BlockReport::default()
    };
    let Some(number) = block_number(csv) else {
        report.problem(format!(
            "{}: not a block file (block files are named block-NNNNN.csv)",
            shown_path(csv)
        ));
        return (report, None);
    };
    let dir = csv.parent().unwrap_or(Path::new("."));
    let manifest_path = dir.join(block::manifest_name(number));
    let manifest_bytes = match read_at_most(&manifest_path, MAX_MANIFEST_BYTES, "a manifest") {
        Ok(b) => b,
        Err(e) => {
            report.problem(format!(
                "{}: cannot read the manifest: {e}",
                shown_path(&manifest_path)
            ));
            return (report, None);
        }
    };
    let parsed = Manifest::from_bytes(&manifest_bytes);
    check_signature(
        &mut report,
        dir,
        number,
        &manifest_bytes,
        parsed.as_ref().ok(),
        options,
    );
    let manifest = match parsed {
        Ok(m) => m,
        Err(e) => {
            report.problem(format!(
                "{}: not a valid manifest: {e}",
                shown_path(&manifest_path)
            ));
            return (report, None);
        }
    };
    let checked = check_manifest(&mut report, &manifest_path, &manifest, number, csv, options);
    match checked {
        Some((game, stake)) if report.ok() => (
            report,
            Some(CheckedManifest {
                manifest,
                game,
                stake,
            }),
        ),
        _ => (report, None),
    }
}

/// Checks the signature of the manifest bytes and the key's fingerprint in them.
fn check_signature(
    report: &mut BlockReport,
    dir: &Path,
    number: u32,
    manifest_bytes: &[u8],
    manifest: Option<&Manifest>,
    options: &VerifyOptions,
) {
    let signature_path = dir.join(block::signature_name(number));
    let key = match options.public_key {
        Some(key) => key,
        None => {
            let path = dir.join(block::PUBLIC_KEY_FILE);
            match keys::read_public_key(&path) {
                Ok(key) => {
                    report.warnings.push(format!(
                        "signatures checked against the emission's own key {}: this proves the files are intact, not who made them; give --public-key with the key you trust",
                        shown_path(&path)
                    ));
                    key
                }
                Err(e) => {
                    report.problem(format!("{}: {e:#}", shown_path(&signature_path)));
                    return;
                }
            }
        }
    };
    match read_at_most(&signature_path, keys::SIGNATURE_BYTES, "a signature") {
        Ok(sig) => {
            if let Err(m) = keys::check(&key, manifest_bytes, &sig) {
                report.problem(format!("{}: {m}", shown_path(&signature_path)));
            }
        }
        Err(e @ ReadError::TooLarge { .. }) => {
            report.problem(format!("{}: {e}", shown_path(&signature_path)))
        }
        Err(e) => report.problem(format!("{}: cannot read: {e}", shown_path(&signature_path))),
    }
    if let (Ok(fingerprint), Some(manifest)) = (keys::public_key_sha256(&key), manifest) {
        if hex::encode(fingerprint) != manifest.public_key_sha256 {
            report.problem(format!(
                "{}: public_key_sha256 does not match the public key used to verify",
                shown_path(&dir.join(block::manifest_name(number)))
            ));
        }
    }
}

/// Checks the manifest's own fields; returns the game and stake to check the tickets against.
fn check_manifest(
    report: &mut BlockReport,
    path: &Path,
    manifest: &Manifest,
    number: u32,
    csv: &Path,
    options: &VerifyOptions,
) -> Option<(Game, Stake)> {
    let name = shown_path(path);
    if manifest.format != FORMAT && manifest.format != FORMAT_1 {
        report.problem(format!(
            "{name}: format {} is not one this program reads (it reads formats {FORMAT_1} and {FORMAT})",
            manifest.format
        ));
        return None;
    }
    if manifest.format == FORMAT && manifest.emission_kind.is_none() {
        report.problem(format!(
            "{name}: format {FORMAT} manifests state emission_kind (test or production)"
        ));
    }
    let game = match &options.game {
        Some(g) => g.clone(),
        None => match Game::builtin(&manifest.game) {
            Ok(g) => g,
            Err(e) => {
                report.problem(format!("{name}: {e}; give --game with its definition"));
                return None;
            }
        },
    };
    if game.id != manifest.game {
        report.problem(format!(
            "{name}: the manifest is for game {}, the definition given is '{}'",
            shown(&manifest.game),
            game.id
        ));
        return None;
    }
    if hex::encode(game.sha256) != manifest.game_definition_sha256 {
        report.problem(format!(
            "{name}: game_definition_sha256 {} is not the SHA-256 of the definition checked against ({}, {}); give --game with the definition used",
            shown(&manifest.game_definition_sha256),
            game.source,
            hex::encode(game.sha256)
        ));
    }
    let stake = match parse_canonical(&manifest.stake).map(|p| game.stake(p)) {
        Some(Ok(s)) => s.clone(),
        Some(Err(e)) => {
            report.problem(format!("{name}: {e}"));
            return None;
        }
        None => {
            report.problem(format!(
                "{name}: stake {} is not a canonical amount",
                shown(&manifest.stake)
            ));
            return None;
        }
    };
    if manifest.block != number {
        report.problem(format!(
            "{name}: the manifest is for block {}, the file name says {number}",
            manifest.block
        ));
    }
    let file = csv.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if manifest.csv.file != file {
        report.problem(format!(
            "{name}: the manifest describes {}, not {}",
            shown(&manifest.csv.file),
            shown(file)
        ));
    }
    let expected: Vec<PrizeCount> = expected_prizes(&game, &stake)
        .iter()
        .map(|p| PrizeCount {
            amount: canonical(p.amount),
            count: p.count,
        })
        .collect();
    if manifest.prizes != expected {
        report.problem(format!(
            "{name}: the prize list differs from Article 3 for a {} € block",
            canonical(stake.price)
        ));
    }
    if manifest.winners != stake.winners {
        report.problem(format!(
            "{name}: {} winners, Article 3 says {}",
            manifest.winners, stake.winners
        ));
    }
    check_place(report, path, manifest, csv);
    Some((game, stake))
}

/// Checks that the block sits where its coordinates say (FORMAT.md, "Folder"):
/// `<game>/<stake>/e<emission:04>/block-<block:05>.csv`. A validly signed block copied into
/// another emission's folder must not pass for one of that emission. The folders are named
/// as the path given names them (symbolic links are not followed: the place is the one the
/// block is found at).
fn check_place(report: &mut BlockReport, path: &Path, manifest: &Manifest, csv: &Path) {
    let name = shown_path(path);
    let folders = match place(csv) {
        Ok(folders) => folders,
        Err(e) => {
            report.problem(format!(
                "{name}: cannot tell which folders hold the block ({e})"
            ));
            return;
        }
    };
    // Innermost first, as `place` gives them.
    let expected = [
        (
            "emission",
            manifest.emission.to_string(),
            format!("e{:04}", manifest.emission),
        ),
        ("stake", manifest.stake.clone(), manifest.stake.clone()),
        ("game", manifest.game.clone(), manifest.game.clone()),
    ];
    for ((what, value, folder), found) in expected.iter().zip(folders) {
        if found.as_deref() != Some(std::ffi::OsStr::new(folder)) {
            let found = match &found {
                Some(f) => format!("folder {}", shown(f.as_encoded_bytes())),
                None => "no folder".to_string(),
            };
            report.problem(format!(
                "{name}: the manifest is for {what} {value} (folder {folder}), but the block is in {found}: a block stays in <game>/<stake>/e<emission>/"
            ));
        }
    }
}

/// The names of the three folders above `csv`, innermost first (`None` above the root), read
/// from the path as given made absolute, `..` taken lexically.
fn place(csv: &Path) -> std::io::Result<[Option<std::ffi::OsString>; 3]> {
    use std::path::Component;
    let absolute = std::path::absolute(csv)?;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in absolute.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    parts.pop(); // the file itself
    let mut folders = parts.iter().rev().map(|p| Some(p.to_os_string()));
    Ok([
        folders.next().flatten(),
        folders.next().flatten(),
        folders.next().flatten(),
    ])
}

/// Article 3 for the stake, with the losers last.
fn expected_prizes(game: &Game, stake: &Stake) -> Vec<crate::game::Prize> {
    let mut prizes = stake.prizes.clone();
    prizes.push(crate::game::Prize {
        amount: Decimal::ZERO,
        count: stake.losers(game.block_size),
    });
    prizes
}

/// The checks `verify` runs on every ticket line of one block, usable one line at a time (by
/// a fuzzer, or a tool that reads tickets its own way): the length of the line, the four
/// fields, the serial, the prize column, the ticket's SHA-256, and the layout, which must be
/// valid and win exactly the prize column. Nothing is allocated on a valid line.
pub struct TicketCheck {
    /// `<game>-<stake cents>-<emission:04>-<block:05>-`: the serial without its index.
    prefix: String,
    /// Tickets in a block of the game.
    block_size: u64,
    /// The stake's prize tiers, highest first, then zero.
    tiers: Vec<Decimal>,
    /// The tiers as written in the prize column.
    tier_text: Vec<String>,
    decoder: Box<dyn Decoder>,
    /// The longest ticket line the game allows, line end excluded.
    max_line: usize,
}

/// What one ticket line showed.
struct Inspection<'l> {
    /// The prize tier of the prize column, if it is one.
    tier: Option<usize>,
    /// SHA-256 of `serial,prize,layout` (of the whole line if it has not four fields; zero if
    /// it is too long to be a ticket line).
    hash: [u8; 32],
    /// Every rule the line breaks (empty on a valid line: no allocation).
    problems: Vec<String>,
    /// With forms: how the layout shows its prize.
    form: Option<String>,
    /// The layout field, when the line has four fields.
    layout: Option<&'l [u8]>,
}

/// Length of the hex SHA-256 that ends a ticket line.
const HASH_HEX: usize = 64;
/// Digits of the ticket index that end a serial.
const INDEX_DIGITS: usize = 7;

impl TicketCheck {
    /// The checks for the tickets of block `block` of emission `emission` of this game and
    /// stake; fails only if the game's mechanic cannot read this stake.
    pub fn new(game: &Game, stake: &Stake, emission: u32, block: u32) -> Result<Self, String> {
        let decoder =
            mechanic::decoder(game, stake).map_err(|m| format!("game {}: {m}", game.id))?;
        let prefix = block::serial_prefix(&game.id, stake, emission, block);
        let tiers = stake.tiers();
        let tier_text: Vec<String> = tiers.iter().copied().map(canonical).collect();
        let longest_prize = tier_text.iter().map(String::len).max().unwrap_or(1);
        // serial "," prize "," layout "," sha256
        let max_line = prefix.len()
            + INDEX_DIGITS
            + 1
            + longest_prize
            + 1
            + decoder.max_layout_len()
            + 1
            + HASH_HEX;
        Ok(TicketCheck {
            prefix,
            block_size: game.block_size,
            tiers,
            tier_text,
            decoder,
            max_line,
        })
    }

    /// The longest ticket line of this game and stake, in bytes, line end excluded: serial,
    /// the longest prize, the longest layout the mechanic accepts, and the hash.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// The largest CSV a block of `block_size` tickets can be: the header and every ticket
    /// line at its longest, with their line ends.
    pub fn max_block_bytes(&self, block_size: u64) -> u64 {
        let line = self.max_line as u64 + 1;
        (CSV_HEADER.len() as u64 + 1).saturating_add(block_size.saturating_mul(line))
    }

    /// Checks one ticket line (without its line end) of the ticket at `index` in the block
    /// (from 0; the line is line `index + 2` of the file). The error names the line, the
    /// serial expected there, and every rule the line breaks.
    pub fn check(&self, line: &[u8], index: u64) -> Result<(), String> {
        let seen = self.inspect(line, index, false);
        if seen.problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "line {} ({}): {}",
                index.saturating_add(2),
                self.serial(index),
                seen.problems.join("; ")
            ))
        }
    }

    /// The serial of the ticket at `index`.
    fn serial(&self, index: u64) -> String {
        let digits = block::index_digits(index);
        format!("{}{}", self.prefix, String::from_utf8_lossy(&digits))
    }

    /// Runs every check on one line; with `forms`, also names the form of a valid layout.
    fn inspect<'l>(&self, line: &'l [u8], index: u64, forms: bool) -> Inspection<'l> {
        let mut out = Inspection {
            tier: None,
            hash: [0; 32],
            problems: Vec::new(),
            form: None,
            layout: None,
        };
        if line.len() > self.max_line {
            // Not read further: no field of it can be right.
            out.problems.push(format!(
                "{} bytes, longer than the longest ticket line of this game ({} bytes)",
                line.len(),
                self.max_line
            ));
            return out;
        }
        if index >= self.block_size {
            out.problems.push(format!(
                "a block of this game holds {} tickets: this line is one too many",
                self.block_size
            ));
        }
        let mut fields: [&[u8]; 4] = [&[]; 4];
        let mut count = 0;
        for field in line.split(|&b| b == b',') {
            if count < 4 {
                fields[count] = field;
            }
            count += 1;
        }
        if count != 4 {
            out.problems.push(format!(
                "{count} fields, a ticket line has 4 (serial,prize,layout,sha256)"
            ));
            out.hash = Sha256::digest(line).into();
            return out;
        }
        let hashed = &line[..line.len() - fields[3].len() - 1];
        out.hash = Sha256::digest(hashed).into();
        let serial = fields[0];
        let prefix = self.prefix.as_bytes();
        let digits = block::index_digits(index);
        if serial.len() != prefix.len() + INDEX_DIGITS
            || !serial.starts_with(prefix)
            || serial[prefix.len()..] != digits[..]
        {
            out.problems.push(format!(
                "serial {} where {} was expected: a ticket is missing, added or out of order, or the serial was changed",
                shown(serial),
                self.serial(index)
            ));
        }
        let tier = self
            .tier_text
            .iter()
            .position(|t| t.as_bytes() == fields[1]);
        match tier {
            Some(t) => out.tier = Some(t),
            None => out.problems.push(format!(
                "prize {} is not a prize of this stake",
                shown(fields[1])
            )),
        }
        let mut hex_hash = [0u8; HASH_HEX];
        hex::encode_to_slice(out.hash, &mut hex_hash).expect("64 bytes hold 32 in hex");
        if fields[3] != hex_hash {
            out.problems.push(format!(
                "sha256 {} is not the SHA-256 of serial,prize,layout ({})",
                shown(fields[3]),
                hex::encode(out.hash)
            ));
        }
        out.layout = Some(fields[2]);
        match std::str::from_utf8(fields[2]) {
            Err(_) => out.problems.push("the layout is not UTF-8".into()),
            Ok(layout) => match self.decoder.decode(layout) {
                Err(e) => out.problems.push(format!("invalid layout: {e}")),
                Ok(won) => {
                    if let Some(t) = tier {
                        if won != self.tiers[t] {
                            // The prize column is one of the tiers here: safe to show as is.
                            out.problems.push(format!(
                                "the layout wins {} € but the prize column says {} €",
                                canonical(won),
                                self.tier_text[t]
                            ));
                        } else if forms {
                            out.form = self.decoder.form(layout).ok();
                        }
                    }
                }
            },
        }
        out
    }
}

/// Reads the ticket lines of a block file, with the checks of [`TicketCheck`] and, with the
/// seed, the replay.
struct LineChecker<'a> {
    /// The CSV file, for messages.
    name: &'a str,
    tickets: &'a TicketCheck,
    forms: bool,
    replay: Option<&'a Replay>,
}

/// With the seed: the block as the seed makes it.
struct Replay {
    key: BlockKey,
    /// Prize tier of every ticket, as drawn.
    order: Vec<u8>,
    synthesizer: Box<dyn Synthesizer>,
}

/// What reading the CSV measured.
struct Scan {
    /// False if reading stopped at a line longer than any ticket line.
    complete: bool,
    bytes: u64,
    sha256: [u8; 32],
    root: [u8; 32],
    counts: Vec<u64>,
}

/// The verdict on one line.
struct Line {
    tier: Option<usize>,
    hash: [u8; 32],
    problem: Option<String>,
    form: Option<String>,
}

impl LineChecker<'_> {
    /// Reads the CSV in large pieces, checks the lines of each piece in parallel, and folds
    /// the results in order.
    /// Reads at most `expected` + 1 bytes (the manifest's size, and one more to see that the
    /// file grew): what is held in memory is one piece and at most one line of the game.
    fn scan(
        &self,
        csv: &Path,
        expected: u64,
        report: &mut BlockReport,
        progress: &indicatif::ProgressBar,
    ) -> std::io::Result<Scan> {
        let mut file = File::open(csv)?.take(expected.saturating_add(1));
        let mut scan = Scan {
            complete: true,
            bytes: 0,
            sha256: [0; 32],
            root: [0; 32],
            counts: vec![0; self.tickets.tiers.len()],
        };
        let mut sha = Sha256::new();
        let mut merkle = MerkleRoot::new();
        let mut pending: Vec<u8> = Vec::with_capacity(READ_SIZE * 2);
        let mut buf = vec![0u8; READ_SIZE];
        let mut line_no: u64 = 0; // lines seen so far, header included
        loop {
            // The caller checks the flag too: an interrupted scan proves nothing.
            if crate::interrupt::requested().is_some() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "stopped by a signal",
                ));
            }
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            sha.update(&buf[..n]);
            scan.bytes += n as u64;
            pending.extend_from_slice(&buf[..n]);
            if let Some(last) = pending.iter().rposition(|&b| b == b'\n') {
                self.lines(
                    &pending[..=last],
                    &mut line_no,
                    &mut scan,
                    &mut merkle,
                    report,
                );
                pending.drain(..=last);
                progress.set_position(report.tickets);
            }
            if pending.len() > self.tickets.max_line() {
                report.problem(format!(
                    "{} line {}: longer than the longest line of this game ({} bytes); the rest of the file is not read",
                    self.name,
                    line_no + 1,
                    self.tickets.max_line()
                ));
                scan.complete = false;
                return Ok(scan);
            }
        }
        if !pending.is_empty() {
            report.problem(format!(
                "{} line {}: the file does not end with a line end (truncated?)",
                self.name,
                line_no + 1
            ));
            let mut last = pending;
            last.push(b'\n');
            self.lines(&last, &mut line_no, &mut scan, &mut merkle, report);
        }
        if line_no == 0 {
            report.problem(format!("{}: the file is empty", self.name));
        }
        scan.sha256 = sha.finalize().into();
        scan.root = merkle.root();
        Ok(scan)
    }

    fn lines(
        &self,
        text: &[u8],
        line_no: &mut u64,
        scan: &mut Scan,
        merkle: &mut MerkleRoot,
        report: &mut BlockReport,
    ) {
        let mut lines: Vec<&[u8]> = text[..text.len() - 1].split(|&b| b == b'\n').collect();
        if *line_no == 0 && !lines.is_empty() {
            let header = lines.remove(0);
            *line_no = 1;
            if header != CSV_HEADER.as_bytes() {
                report.problem(format!(
                    "{} line 1: the header is {}, it must be '{CSV_HEADER}'",
                    self.name,
                    shown(header)
                ));
            }
        }
        let first_index = *line_no - 1;
        let results: Vec<Line> = lines
            .par_iter()
            .enumerate()
            .with_min_len(1024)
            .map(|(i, line)| self.line(line, first_index + i as u64))
            .collect();
        for line in results {
            merkle.push(&line.hash);
            report.tickets += 1;
            if let Some(tier) = line.tier {
                scan.counts[tier] += 1;
                if let Some(form) = line.form {
                    *report
                        .forms
                        .entry((self.tickets.tiers[tier], form))
                        .or_insert(0) += 1;
                }
            }
            if let Some(problem) = line.problem {
                report.line_problem(problem);
            }
        }
        *line_no += lines.len() as u64;
    }

    /// Checks one ticket line; `index` is the ticket's index in the block.
    fn line(&self, line: &[u8], index: u64) -> Line {
        let mut seen = self.tickets.inspect(line, index, self.forms);
        if let (Some(replay), Some(layout)) = (self.replay, seen.layout) {
            replay.check(self.tickets, index, seen.tier, layout, &mut seen.problems);
        }
        Line {
            tier: seen.tier,
            hash: seen.hash,
            problem: (!seen.problems.is_empty()).then(|| {
                format!(
                    "{} line {} ({}): {}",
                    self.name,
                    index.saturating_add(2),
                    self.tickets.serial(index),
                    seen.problems.join("; ")
                )
            }),
            form: seen.form,
        }
    }
}

impl Replay {
    /// Compares a ticket with the one the seed makes at `index`.
    fn check(
        &self,
        tickets: &TicketCheck,
        index: u64,
        tier: Option<usize>,
        layout: &[u8],
        problems: &mut Vec<String>,
    ) {
        let Some(&drawn) = usize::try_from(index).ok().and_then(|i| self.order.get(i)) else {
            problems.push("the seed draws no ticket at this index".into());
            return;
        };
        let drawn = usize::from(drawn);
        if tier != Some(drawn) {
            problems.push(format!(
                "the seed draws {} € for this ticket",
                tickets.tier_text[drawn]
            ));
            return;
        }
        let mut made = String::with_capacity(layout.len());
        let mut rng = self.key.ticket_rng(index);
        match self
            .synthesizer
            .synthesize(tickets.tiers[drawn], &mut rng, &mut made)
        {
            Ok(()) if made.as_bytes() == layout => {}
            Ok(()) => problems.push(format!("the seed makes the layout {}", shown(&made))),
            Err(e) => problems.push(format!("the seed's layout cannot be made: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanic::LayoutRng;
    use rand::SeedableRng;

    /// Block 7 of emission 3 of La ruche d'or at 2 €.
    fn setup() -> (Game, Stake, TicketCheck) {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = game.stake(Decimal::from(2)).unwrap().clone();
        let check = TicketCheck::new(&game, &stake, 3, 7).unwrap();
        (game, stake, check)
    }

    /// A ticket line as emit writes it (line end excluded).
    fn line(serial: &str, prize: &str, layout: &str) -> Vec<u8> {
        let body = format!("{serial},{prize},{layout}");
        let hash = hex::encode(Sha256::digest(body.as_bytes()));
        format!("{body},{hash}").into_bytes()
    }

    fn synthesized(game: &Game, stake: &Stake, prize: Decimal, seed: u64) -> String {
        let synth = mechanic::synthesizer(game, stake).unwrap();
        let mut layout = String::new();
        synth
            .synthesize(prize, &mut LayoutRng::seed_from_u64(seed), &mut layout)
            .unwrap();
        layout
    }

    #[track_caller]
    fn refused(check: &TicketCheck, line: &[u8], index: u64, needle: &str) {
        match check.check(line, index) {
            Ok(()) => panic!("{} should be refused", String::from_utf8_lossy(line)),
            Err(m) => assert!(m.contains(needle), "{m:?} should mention {needle:?}"),
        }
    }

    #[test]
    fn valid_ticket_lines_pass() {
        let (game, stake, check) = setup();
        for (i, tier) in stake.tiers().into_iter().enumerate() {
            let layout = synthesized(&game, &stake, tier, i as u64);
            let serial = format!("ruche-or-200-0003-00007-{:07}", 40 + i);
            let ok = line(&serial, &canonical(tier), &layout);
            assert_eq!(check.check(&ok, 40 + i as u64), Ok(()));
        }
    }

    #[test]
    fn every_rule_of_a_ticket_line_is_checked() {
        let (game, stake, check) = setup();
        let layout = synthesized(&game, &stake, Decimal::from(20), 1);
        let serial = "ruche-or-200-0003-00007-0000042";
        // The serial is the index's, in this block of this emission.
        refused(
            &check,
            &line(serial, "20", &layout),
            41,
            "line 43 (ruche-or-200-0003-00007-0000041): serial 'ruche-or-200-0003-00007-0000042'",
        );
        refused(
            &check,
            &line("ruche-or-200-0001-00007-0000042", "20", &layout),
            42,
            "serial",
        );
        // The prize column is a prize of the stake and the one the layout wins.
        refused(
            &check,
            &line(serial, "21", &layout),
            42,
            "prize '21' is not a prize",
        );
        refused(
            &check,
            &line(serial, "4", &layout),
            42,
            "the layout wins 20 € but the prize column says 4 €",
        );
        // The hash covers serial,prize,layout as written.
        let mut tampered = line(serial, "20", &layout);
        let at = serial.len() + 5;
        tampered[at] = if tampered[at] == b'P' { b'A' } else { b'P' };
        refused(
            &check,
            &tampered,
            42,
            "is not the SHA-256 of serial,prize,layout",
        );
        // The layout is valid.
        refused(&check, &line(serial, "20", "20:PPP"), 42, "invalid layout");
        refused(
            &check,
            &line(serial, "20", &layout)[..100],
            42,
            "fields, a ticket line has 4",
        );
        // No ticket beyond the block's size.
        let last = format!("ruche-or-200-0003-00007-{:07}", game.block_size);
        refused(
            &check,
            &line(&last, "20", &layout),
            game.block_size,
            "holds 900000 tickets",
        );
    }

    #[test]
    fn a_line_longer_than_the_longest_ticket_line_is_refused_unread() {
        let (_, _, check) = setup();
        // The longest prize and the longest layout the mechanic accepts make the longest line.
        let serial = "ruche-or-200-0003-00007-0000042";
        let layout =
            "20000:FFFF/20000:FFFFF/20000:FFFFFF/20000:FFFFFFF/20000:FFFFFF/20000:FFFFF/20000:FFFF";
        let main = layout.replacen("FFFF", "EEEF", 1);
        let longest = line(
            serial,
            "20000",
            &format!("{main}|{layout}|{layout}|{layout}"),
        );
        assert_eq!(longest.len(), check.max_line());
        // It is read (and here refused for its prize, not for its length).
        let said = check.check(&longest, 42).unwrap_err();
        assert!(!said.contains("longer than"), "{said}");
        assert!(said.contains("the layout wins 0 €"), "{said}");
        let mut long = longest.clone();
        long.push(b'F');
        refused(
            &check,
            &long,
            42,
            &format!(
                "{} bytes, longer than the longest ticket line of this game ({} bytes)",
                check.max_line() + 1,
                check.max_line()
            ),
        );
    }

    #[test]
    fn the_place_of_a_block_is_read_from_its_path() {
        let names = |p: &str| {
            place(Path::new(p))
                .unwrap()
                .map(|n| n.map(|n| n.to_string_lossy().into_owned()))
        };
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            names("/out/ruche-or/0.5/e0003/block-00001.csv"),
            [some("e0003"), some("0.5"), some("ruche-or")]
        );
        // `..` and `.` are taken as written; a symbolic link is not followed.
        assert_eq!(
            names("/out/ruche-or/2/x/../e0001/./block-00001.csv"),
            [some("e0001"), some("2"), some("ruche-or")]
        );
        assert_eq!(names("/e0001/block-00001.csv"), [some("e0001"), None, None]);
        // A relative path is taken from the current folder.
        let here = std::env::current_dir().unwrap();
        let last = here.file_name().map(|n| n.to_string_lossy().into_owned());
        assert_eq!(names("e0001/block-00001.csv")[1], last);
    }
}
