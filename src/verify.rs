//! Independent verification of a block: everything is recomputed from the files and the game
//! definition, trusting only the decoders.
//!
//! Checked: the CSV header and line format, every serial, every ticket's SHA-256, every layout
//! (valid under SPEC §3 and decoding to its prize column), the multiset of prizes against
//! Article 3 for the stake, the total, the CSV's size and SHA-256, the Merkle root, the
//! manifest's fields, and the Ed25519 signature of the manifest.

use crate::block::manifest::{Manifest, PrizeCount, FORMAT, FORMAT_1, GENERATOR_VERSION};
use crate::block::merkle::MerkleRoot;
use crate::block::{self, keys, CSV_HEADER};
use crate::game::{Game, Stake};
use crate::mechanic::{self, Decoder, Synthesizer};
use crate::money::{canonical, parse_canonical};
use crate::plan::{seed_commitment, BlockKey, Seed};
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
    let name = csv.display().to_string();
    let Some(number) = block_number(csv) else {
        report.problem(format!(
            "{name}: not a block file (block files are named block-NNNNN.csv)"
        ));
        return report;
    };
    let dir = csv.parent().unwrap_or(Path::new("."));
    let manifest_path = dir.join(block::manifest_name(number));
    let manifest_bytes = match std::fs::read(&manifest_path) {
        Ok(b) => b,
        Err(e) => {
            report.problem(format!(
                "{}: cannot read the manifest: {e}",
                manifest_path.display()
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
                manifest_path.display()
            ));
            return report;
        }
    };
    let Some((game, stake)) =
        check_manifest(&mut report, &manifest_path, &manifest, number, csv, options)
    else {
        return report;
    };
    let decoder = match mechanic::decoder(&game, &stake) {
        Ok(d) => d,
        Err(m) => {
            report.problem(format!("{name}: game {}: {m}", game.id));
            return report;
        }
    };
    let replay = match &options.seed {
        None => None,
        Some(seed) => {
            if hex::encode(seed_commitment(seed)) != manifest.seed_sha256 {
                report.problem(format!(
                    "{}: seed_sha256 is not the SHA-256 of the seed given: this block was made from another seed (an emission has one seed)",
                    manifest_path.display()
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
        prefix: block::serial_prefix(&game.id, &stake, manifest.emission, manifest.block),
        tiers: stake.tiers(),
        tier_text: stake.tiers().into_iter().map(canonical).collect(),
        decoder: decoder.as_ref(),
        forms: options.forms,
        replay: replay.as_ref(),
    };
    let scan = match checker.scan(csv, &mut report, progress) {
        Ok(scan) => scan,
        Err(e) => {
            report.problem(format!("{name}: cannot read: {e}"));
            return report;
        }
    };
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
    let mut total = Decimal::ZERO;
    for (tier, &count) in scan.counts.iter().enumerate() {
        let amount = checker.tiers[tier];
        total += amount * Decimal::from(count);
        if count != expected[tier].count {
            report.problem(format!(
                "{name}: {count} tickets win {} €, Article 3 for a {} € block says {}",
                checker.tier_text[tier],
                canonical(stake.price),
                expected[tier].count
            ));
        }
    }
    if canonical(total) != manifest.total_prizes || total != stake.total {
        report.problem(format!(
            "{name}: the prizes add up to {} €; the manifest says {} € and Article 3 {} €",
            canonical(total),
            manifest.total_prizes,
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
            manifest.csv.sha256
        ));
    }
    if hex::encode(scan.root) != manifest.tickets_root {
        report.problem(format!(
            "{name}: the Merkle root of the tickets is {}, the manifest says {}",
            hex::encode(scan.root),
            manifest.tickets_root
        ));
    }
    report
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
                        path.display()
                    ));
                    key
                }
                Err(e) => {
                    report.problem(format!("{}: {e:#}", signature_path.display()));
                    return;
                }
            }
        }
    };
    match std::fs::read(&signature_path) {
        Ok(sig) => {
            if let Err(m) = keys::check(&key, manifest_bytes, &sig) {
                report.problem(format!("{}: {m}", signature_path.display()));
            }
        }
        Err(e) => report.problem(format!("{}: cannot read: {e}", signature_path.display())),
    }
    if let (Ok(fingerprint), Some(manifest)) = (keys::public_key_sha256(&key), manifest) {
        if hex::encode(fingerprint) != manifest.public_key_sha256 {
            report.problem(format!(
                "{}: public_key_sha256 does not match the public key used to verify",
                dir.join(block::manifest_name(number)).display()
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
    let name = path.display();
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
            "{name}: the manifest is for game '{}', the definition given is '{}'",
            manifest.game, game.id
        ));
        return None;
    }
    if hex::encode(game.sha256) != manifest.game_definition_sha256 {
        report.problem(format!(
            "{name}: game_definition_sha256 {} is not the SHA-256 of the definition checked against ({}, {}); give --game with the definition used",
            manifest.game_definition_sha256,
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
                "{name}: stake '{}' is not a canonical amount",
                manifest.stake
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
            "{name}: the manifest describes {}, not {file}",
            manifest.csv.file
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
    Some((game, stake))
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

/// Checks ticket lines.
struct LineChecker<'a> {
    name: &'a str,
    prefix: String,
    tiers: Vec<Decimal>,
    tier_text: Vec<String>,
    decoder: &'a dyn Decoder,
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
    fn scan(
        &self,
        csv: &Path,
        report: &mut BlockReport,
        progress: &indicatif::ProgressBar,
    ) -> std::io::Result<Scan> {
        let mut file = File::open(csv)?;
        let mut scan = Scan {
            bytes: 0,
            sha256: [0; 32],
            root: [0; 32],
            counts: vec![0; self.tiers.len()],
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
                    "{} line 1: the header is '{}', it must be '{CSV_HEADER}'",
                    self.name,
                    String::from_utf8_lossy(header)
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
                    *report.forms.entry((self.tiers[tier], form)).or_insert(0) += 1;
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
        let mut out = Line {
            tier: None,
            hash: [0; 32],
            problem: None,
            form: None,
        };
        let digits = block::index_digits(index);
        let serial_text = || format!("{}{}", self.prefix, String::from_utf8_lossy(&digits));
        let at = |rule: String| {
            format!(
                "{} line {} ({}): {rule}",
                self.name,
                index + 2,
                serial_text()
            )
        };
        let mut fields: [&[u8]; 4] = [&[]; 4];
        let mut count = 0;
        for field in line.split(|&b| b == b',') {
            if count < 4 {
                fields[count] = field;
            }
            count += 1;
        }
        if count != 4 {
            out.problem = Some(at(format!(
                "{count} fields, a ticket line has 4 (serial,prize,layout,sha256)"
            )));
            out.hash = Sha256::digest(line).into();
            return out;
        }
        let hashed = &line[..line.len() - fields[3].len() - 1];
        out.hash = Sha256::digest(hashed).into();
        let mut problems: Vec<String> = Vec::new();
        let serial = fields[0];
        let prefix = self.prefix.as_bytes();
        if serial.len() != prefix.len() + 7
            || !serial.starts_with(prefix)
            || serial[prefix.len()..] != digits[..]
        {
            problems.push(format!(
                "serial '{}' where {} was expected: a ticket is missing, added or out of order, or the serial was changed",
                String::from_utf8_lossy(serial),
                serial_text()
            ));
        }
        let prize_text = String::from_utf8_lossy(fields[1]);
        let tier = self
            .tier_text
            .iter()
            .position(|t| t.as_bytes() == fields[1]);
        match tier {
            Some(t) => out.tier = Some(t),
            None => problems.push(format!("prize '{prize_text}' is not a prize of this stake")),
        }
        let mut hex_hash = [0u8; 64];
        hex::encode_to_slice(out.hash, &mut hex_hash).expect("64 bytes hold 32 in hex");
        if fields[3] != hex_hash {
            problems.push(format!(
                "sha256 '{}' is not the SHA-256 of serial,prize,layout ({})",
                String::from_utf8_lossy(fields[3]),
                hex::encode(out.hash)
            ));
        }
        match std::str::from_utf8(fields[2]) {
            Err(_) => problems.push("the layout is not UTF-8".into()),
            Ok(layout) => match self.decoder.decode(layout) {
                Err(e) => problems.push(format!("invalid layout: {e}")),
                Ok(won) => {
                    if let Some(t) = tier {
                        if won != self.tiers[t] {
                            problems.push(format!(
                                "the layout wins {} € but the prize column says {prize_text} €",
                                canonical(won)
                            ));
                        } else if self.forms {
                            out.form = self.decoder.form(layout).ok();
                        }
                    }
                }
            },
        }
        if let Some(replay) = self.replay {
            replay.check(self, index, tier, fields[2], &mut problems);
        }
        if !problems.is_empty() {
            out.problem = Some(at(problems.join("; ")));
        }
        out
    }
}

impl Replay {
    /// Compares a ticket with the one the seed makes at `index`.
    fn check(
        &self,
        checker: &LineChecker<'_>,
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
                checker.tier_text[drawn]
            ));
            return;
        }
        let mut made = String::with_capacity(layout.len());
        let mut rng = self.key.ticket_rng(index);
        match self
            .synthesizer
            .synthesize(checker.tiers[drawn], &mut rng, &mut made)
        {
            Ok(()) if made.as_bytes() == layout => {}
            Ok(()) => problems.push(format!("the seed makes the layout {made}")),
            Err(e) => problems.push(format!("the seed's layout cannot be made: {e}")),
        }
    }
}
