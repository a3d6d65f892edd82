//! The auditor's report on blocks: is each block what Article 3 says, how does it show its
//! prizes, does anything a player sees give the result away, and are the winners in a random
//! order?
//!
//! Every block is verified in full ([`crate::verify::verify_block_observed`]: signature,
//! hashes, Merkle root, every layout against its prize column), and the report's tallies are
//! made in that same pass ([`scan`]): each piece of lines `verify` has just accepted goes, in
//! the same parallel task, through its mechanic's features-only path (its wins checked against
//! the prize column once more). The block is read, hashed and split once. A block that fails
//! is listed with its problems and not analysed: what was tallied of it is dropped.
//!
//! The statistics ([`stats`], [`order`]) treat a block as what it is, a random permutation of
//! a fixed multiset of prizes: their null laws are conditional on the block's counts.
//! Two families of tests, each Holm-corrected over the whole report:
//! - the order tests fail at 99 % confidence (adjusted p < 0.01);
//! - the leak check flags a feature at adjusted p < 0.001.

pub mod asked;
pub mod html;
pub mod order;
pub mod scan;
pub mod stats;
pub mod text;

use crate::block::id::{BlockId, EmissionId};
use crate::game::{Game, Stake};
use crate::money::canonical;
use crate::problem::{Code, Problem};
use crate::untrusted::{shown_path, shown_text};
use crate::verify::{verify_block_observed, VerifyOptions};
use order::{Order, OrderTest};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The version of the JSON report (docs/FORMAT.md, "Report"); raised on any change of a field's
/// name or meaning.
pub const REPORT_FORMAT: u32 = 3;
/// What every page of a full report says: it shows where the winners are.
pub const CONFIDENTIAL: &str = "Confidential until the emission is sold out";
/// What every page of a public report (`report --public`) says instead.
pub const PUBLIC: &str = "Public version: everything positional (prizes along the block, streak positions, sample tickets of winning prizes, ticket lines of failed blocks) is omitted";
/// Sample tickets drawn per prize unless `--samples` says otherwise.
pub const DEFAULT_SAMPLES: usize = 1;
/// Order tests fail below this Holm-adjusted p-value (99 % confidence).
pub const ORDER_ALPHA: f64 = 0.01;
/// The leak check flags a feature below this Holm-adjusted p-value.
pub const LEAK_ALPHA: f64 = 0.001;
/// A leak-check class holds at least this many expected observations in each group.
const MIN_EXPECTED: f64 = 5.0;

/// What the report is asked for, beyond the blocks and how to verify them.
#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    /// The public version: nothing positional ([`Report::redact`]).
    pub public: bool,
    /// Sample tickets kept per prize (at most [`scan::SAMPLES`]).
    pub samples: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            public: false,
            samples: DEFAULT_SAMPLES,
        }
    }
}

/// The program that made a report, as a regulator certifies it.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    /// `emission-factory`.
    pub name: String,
    /// The crate's version.
    pub version: String,
    /// The commit it was built from (what build.rs found, as `--version --verbose` says), or
    /// `unknown`.
    pub commit: String,
    /// SHA-256 of the running binary (`/proc/self/exe`), or why it is unknown.
    pub binary_sha256: String,
    /// The host it ran on.
    pub host: String,
    /// When the report was made (UTC, RFC 3339).
    pub date: String,
}

impl Tool {
    /// The running program.
    pub fn running() -> Tool {
        let binary_sha256 = match binary_sha256(Path::new("/proc/self/exe")) {
            Ok(sha) => sha,
            Err(e) => format!("unknown (cannot read /proc/self/exe: {e})"),
        };
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| shown_text(h.trim(), 64))
            .unwrap_or_else(|_| "unknown".into());
        Tool {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
            // What build.rs found (as `--version --verbose` says it).
            commit: shown_text(
                option_env!("EF_BUILD_COMMIT")
                    .or(option_env!("EF_GIT_COMMIT"))
                    .unwrap_or("unknown"),
                64,
            ),
            binary_sha256,
            host,
            date: crate::emission::record::now(),
        }
    }
}

fn binary_sha256(path: &Path) -> std::io::Result<String> {
    use sha2::Digest;
    let mut file = std::fs::File::open(path)?;
    let mut hash = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hash)?;
    Ok(hex::encode(hash.finalize()))
}

/// What ties an emission's blocks to it: the same in every manifest of the emission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmissionIdentity {
    /// SHA-256 of the emission record (`emission.json`) the blocks name; `None` before
    /// manifest format 3.
    pub record_sha256: Option<String>,
    /// `test` or `production` (`unknown` before manifest format 2).
    pub kind: String,
    /// The seed commitment (SHA-256 of the seed).
    pub seed_sha256: String,
    /// The key fingerprint: SHA-256 of the signing public key's DER.
    pub public_key_sha256: String,
    /// SHA-256 of the game definition.
    pub game_definition_sha256: String,
    /// The program and generator version that made the blocks.
    pub generator: String,
}

impl EmissionIdentity {
    fn of(manifest: &crate::block::manifest::Manifest) -> Self {
        EmissionIdentity {
            record_sha256: manifest.record_sha256.clone(),
            kind: manifest
                .emission_kind
                .map(|k| k.as_str().to_string())
                .unwrap_or_else(|| "unknown".into()),
            seed_sha256: manifest.seed_sha256.clone(),
            public_key_sha256: manifest.public_key_sha256.clone(),
            game_definition_sha256: manifest.game_definition_sha256.clone(),
            generator: manifest.generator.clone(),
        }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`REPORT_FORMAT`].
    pub report_format: u32,
    /// [`CONFIDENTIAL`], or [`PUBLIC`] in a public report.
    pub confidentiality: String,
    /// True for a public report: nothing positional.
    pub public: bool,
    /// The program that made it.
    pub generator: String,
    /// The program that made it, as a regulator certifies it.
    pub tool: Tool,
    /// Level of the order tests (after Holm).
    pub order_alpha: f64,
    /// Level of the leak check (after Holm).
    pub leak_alpha: f64,
    /// True if a block failed verification, an order test failed or a leak was flagged.
    pub failed: bool,
    /// One line per failure.
    pub failures: Vec<String>,
    /// Per block, in the order read.
    pub blocks: Vec<BlockSection>,
    /// Per emission (game, stake, emission) of the blocks read.
    pub emissions: Vec<EmissionSection>,
}

/// One block.
#[derive(Debug, Clone, Serialize)]
pub struct BlockSection {
    /// The CSV file, as given.
    pub file: String,
    /// False if the block failed verification: nothing below is filled.
    pub verified: bool,
    /// Verification problems.
    pub problems: Vec<Problem>,
    /// The block and its game's name (fields `game`, `game_name`, `stake`, `emission` and
    /// `block`).
    #[serde(flatten)]
    pub of: SectionBlock,
    /// SHA-256 of the CSV (verified).
    pub csv_sha256: String,
    /// SHA-256 of the manifest file (verified by its signature).
    pub manifest_sha256: String,
    /// The Merkle root of the tickets' hashes (verified).
    pub merkle_root: String,
    /// Tickets read.
    pub tickets: u64,
    /// Winning tickets read.
    pub winners: u64,
    /// The Article 3 table recomputed from the tickets, beside the definition's; losers last.
    pub prizes: Vec<PrizeRow>,
    /// The sum of all prizes read, canonical.
    pub total_prizes: String,
    /// Prizes over stakes, as read (0.7 for 70 %).
    pub payout_ratio: f64,
    /// The definition's payout ratio.
    pub expected_payout_ratio: f64,
    /// Tickets per winner, as read.
    pub odds: f64,
    /// The definition's tickets per winner.
    pub expected_odds: f64,
    /// Per prize, the forms it took.
    pub forms: Vec<FormRow>,
    /// Near misses: the share of losers (and winners) with at least one.
    pub near_misses: Vec<Rate>,
    /// The near-miss rates the definition asks for, per part, beside those observed.
    pub near_misses_asked: Vec<asked::AskedRate>,
    /// Observations seen outside the winning parts: the share of losers and winners showing
    /// the feature with a value above 0.
    pub features: Vec<Rate>,
    /// The leak check, one test per observed feature.
    pub leaks: Vec<LeakTest>,
    /// The order statistics.
    pub order: Option<Order>,
    /// Tickets whose layout repeats an earlier ticket's in the block, per prize.
    pub duplicates: Vec<PrizeCount>,
    /// The first layouts of each prize, for pictures (not in the JSON).
    #[serde(skip)]
    pub samples: Vec<(String, Vec<String>)>,
    /// The CSV file as given (not in the JSON: `file` is its shown name).
    #[serde(skip)]
    pub path: PathBuf,
    /// The emission its manifest names (in the JSON through its emission's section).
    #[serde(skip)]
    pub identity: Option<EmissionIdentity>,
}

/// One prize of the Article 3 table.
#[derive(Debug, Clone, Serialize)]
pub struct PrizeRow {
    /// The amount (0 for the losers), canonical.
    pub amount: String,
    /// Tickets read.
    pub count: u64,
    /// Tickets the definition states.
    pub expected_count: u64,
    /// amount × count, canonical.
    pub total: String,
    /// amount × expected count, canonical.
    pub expected_total: String,
}

/// A count per prize.
#[derive(Debug, Clone, Serialize)]
pub struct PrizeCount {
    /// The prize, canonical.
    pub prize: String,
    /// Tickets.
    pub count: u64,
}

/// How many tickets of a prize took one form.
#[derive(Debug, Clone, Serialize)]
pub struct FormRow {
    /// The prize, canonical.
    pub prize: String,
    /// The form (the decoder's text).
    pub form: String,
    /// Tickets.
    pub count: u64,
}

/// A feature's rate on losers and winners.
#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    /// The feature's name (docs/SPEC.md §3.2).
    pub feature: String,
    /// Losers showing it (value above 0).
    pub losers: u64,
    /// Winners showing it.
    pub winners: u64,
    /// losers / all losers.
    pub losers_rate: f64,
    /// winners / all winners.
    pub winners_rate: f64,
    /// For a feature seen outside the wins: the share of its observations (the parts shown
    /// outside the winning ones: rows, hives, months…) whose value is above 0, on losers; what
    /// the leak check compares, per part rather than per ticket (a winner shows fewer losing
    /// parts). `None` for near misses.
    pub losers_share: Option<f64>,
    /// The same share on winners.
    pub winners_share: Option<f64>,
}

/// The leak check of one feature: are its values, outside the winning parts, distributed
/// alike on winners and losers?
#[derive(Debug, Clone, Serialize)]
pub struct LeakTest {
    /// The feature.
    pub feature: String,
    /// Classes compared (values, rare ones merged with their neighbours).
    pub classes: usize,
    /// Chi-square of independence (2 × classes).
    pub statistic: f64,
    /// Degrees of freedom.
    pub df: f64,
    /// p-value.
    pub p: f64,
    /// Holm-adjusted over every leak test of the report.
    pub p_holm: f64,
    /// `p_holm` < [`LEAK_ALPHA`].
    pub flagged: bool,
    /// What is tested, in words.
    pub what: String,
}

/// The block a section is of, as the report writes it: fields `game`, `game_name`, `stake`,
/// `emission` and `block`, empty and 0 for a block that failed verification (`id` `None`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SectionBlock {
    /// The block, once verified.
    pub id: Option<BlockId>,
    /// The game's name ("" if not verified).
    pub game_name: String,
}

impl Serialize for SectionBlock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let emission = self.id.as_ref().map(BlockId::emission);
        let mut fields = s.serialize_struct("SectionBlock", 5)?;
        fields.serialize_field("game", emission.map_or("", EmissionId::game))?;
        fields.serialize_field("game_name", &self.game_name)?;
        fields.serialize_field("stake", emission.map_or("", EmissionId::stake))?;
        fields.serialize_field("emission", &emission.map_or(0, EmissionId::number))?;
        fields.serialize_field("block", &self.id.as_ref().map_or(0, BlockId::number))?;
        fields.end()
    }
}

/// The emission a section is of, as the report writes it: fields `game`, `stake` and
/// `emission`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionEmission(pub EmissionId);

impl Serialize for SectionEmission {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut fields = s.serialize_struct("SectionEmission", 3)?;
        fields.serialize_field("game", self.0.game())?;
        fields.serialize_field("stake", self.0.stake())?;
        fields.serialize_field("emission", &self.0.number())?;
        fields.end()
    }
}

impl BlockSection {
    /// The block, when it verified.
    pub fn id(&self) -> Option<&BlockId> {
        self.of.id.as_ref()
    }

    /// The block's number (0 when it did not verify).
    pub fn number(&self) -> u32 {
        self.id().map_or(0, BlockId::number)
    }

    /// The game's id ("" when it did not verify).
    pub fn game(&self) -> &str {
        self.id().map_or("", |b| b.emission().game())
    }

    /// The stake, canonical ("" when it did not verify).
    pub fn stake(&self) -> &str {
        self.id().map_or("", |b| b.emission().stake())
    }

    /// The emission's number (0 when it did not verify).
    pub fn emission_number(&self) -> u32 {
        self.id().map_or(0, |b| b.emission().number())
    }

    /// Whether this is a verified block of the emission `id`.
    pub fn is_of(&self, id: &EmissionId) -> bool {
        self.verified && self.id().is_some_and(|b| b.emission() == id)
    }
}

/// What the blocks of one emission show together.
#[derive(Debug, Clone, Serialize)]
pub struct EmissionSection {
    /// The emission (fields `game`, `stake` and `emission`).
    #[serde(flatten)]
    pub id: SectionEmission,
    /// What ties the blocks to the emission (the same in each of its blocks, or a failure).
    #[serde(flatten)]
    pub identity: EmissionIdentity,
    /// SHA-256 of the emission's seal (`emission.seal.json`), when there is one.
    pub seal_sha256: Option<String>,
    /// `not sealed`, or what the seal was found to be.
    pub seal_status: String,
    /// What is wrong with the emission as a whole (blocks naming different emissions, a seal
    /// that does not list a block as read): each is a failure.
    pub problems: Vec<Problem>,
    /// Blocks analysed.
    pub blocks: Vec<u32>,
    /// Tickets of those blocks.
    pub tickets: u64,
    /// The Article 3 table over those blocks.
    pub prizes: Vec<PrizeRow>,
    /// Prizes over stakes.
    pub payout_ratio: f64,
    /// Every pair of blocks: the test of their win indicators.
    pub cross_block: Vec<OrderTest>,
    /// The correlation of the win indicators, per pair (same order).
    pub correlations: Vec<f64>,
}

impl EmissionSection {
    /// The emission, as messages name it: `ruche-or/2/e0001`.
    pub fn name(&self) -> String {
        self.id.0.to_string()
    }
}

/// Reads and analyses `blocks`; `progress` counts the tickets of the block being read (its
/// message names the step).
pub fn report(
    blocks: &[PathBuf],
    options: &VerifyOptions,
    settings: &ReportOptions,
    progress: &dyn crate::progress::Progress,
) -> Result<Report, ReportError> {
    let mut reporter = Reporter::new();
    for csv in blocks {
        progress.stage(&format!("verify and report {}", shown_path(csv)));
        // The report's tallies are made in verify's own pass, from the lines it accepts.
        let observer = scan::Observer::new();
        let verdict = verify_block_observed(csv, options, progress, Some(&observer));
        crate::interrupt::check()?;
        reporter.add(csv, verdict, observer, settings)?;
    }
    Ok(reporter.finish(options, settings))
}

/// Why a report could not be made (a block that fails verification is not an error: it is
/// listed in the report with its problems).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A block's tallies, made in verify's pass, or the re-read of its duplicates failed.
    #[error(transparent)]
    Scan(scan::TallyError),
    /// A block that verified has no block id in its section: a bug of this program.
    #[error("{file}: internal error: a verified block without its id")]
    NoBlockId {
        /// The block's CSV, shown.
        file: String,
    },
    /// A signal came between two blocks: the program exits as a shell expects (130 for
    /// SIGINT...).
    #[error(transparent)]
    Interrupted(#[from] crate::interrupt::Interrupted),
}

/// Per emission.
type EmissionKey = EmissionId;

/// A report made block by block, for readers that get the blocks one at a time (a folder's
/// files, a pack's members as it streams): each block verified with a [`scan::Observer`] in
/// its pass is [`Reporter::add`]ed, then [`Reporter::finish`] makes the emissions' sections
/// (reading each emission's seal from the folder beside its blocks).
pub struct Reporter {
    out: Report,
    /// Each block's number, tickets and winner bit set, for the cross-block tests.
    bits: BTreeMap<EmissionKey, Vec<(u32, u64, Vec<u64>)>>,
    /// The stake and tickets, for the summed table.
    tables: BTreeMap<EmissionKey, (Stake, u64)>,
}

impl Default for Reporter {
    fn default() -> Self {
        Self::new()
    }
}

impl Reporter {
    /// An empty report.
    pub fn new() -> Reporter {
        Reporter {
            out: Report {
                report_format: REPORT_FORMAT,
                confidentiality: CONFIDENTIAL.into(),
                public: false,
                generator: crate::block::manifest::generator(),
                tool: Tool::running(),
                order_alpha: ORDER_ALPHA,
                leak_alpha: LEAK_ALPHA,
                failed: false,
                failures: Vec::new(),
                blocks: Vec::new(),
                emissions: Vec::new(),
            },
            bits: BTreeMap::new(),
            tables: BTreeMap::new(),
        }
    }

    /// The block whose CSV is (or would be, beside its manifest) `csv`, verified with
    /// `observer` in its pass: analysed if its verdict is ok, listed with its problems if not.
    pub fn add(
        &mut self,
        csv: &Path,
        verdict: crate::verify::BlockReport,
        observer: scan::Observer,
        settings: &ReportOptions,
    ) -> Result<(), ReportError> {
        if !verdict.ok() {
            let mut problems = verdict.problems.clone();
            if verdict.unlisted > 0 {
                problems.push(Problem::new(
                    Code::ReportUnlisted,
                    format!("... and {} more problems", verdict.unlisted),
                ));
            }
            self.out.blocks.push(unverified(csv, problems));
            return Ok(());
        }
        let observed = observer.finish(csv).map_err(ReportError::Scan)?;
        let (section, order, game, stake) = analyse_block(csv, observed, settings.samples)?;
        let Some(block) = section.id().cloned() else {
            return Err(ReportError::NoBlockId { file: section.file });
        };
        let key = block.emission().clone();
        let loser = (stake.prizes.len()) as u8;
        self.bits.entry(key.clone()).or_default().push((
            block.number(),
            section.tickets,
            order::winner_bits(&order, loser),
        ));
        let entry = self.tables.entry(key).or_insert((stake, 0));
        entry.1 += game.block_size;
        self.out.blocks.push(section);
        Ok(())
    }

    /// The report: the blocks added, and a section per emission.
    pub fn finish(self, options: &VerifyOptions, settings: &ReportOptions) -> Report {
        let Reporter {
            mut out,
            bits,
            tables,
        } = self;
        for (emission, blocks) in bits {
            let mut section = EmissionSection {
                id: SectionEmission(emission.clone()),
                identity: EmissionIdentity {
                    record_sha256: None,
                    kind: String::new(),
                    seed_sha256: String::new(),
                    public_key_sha256: String::new(),
                    game_definition_sha256: String::new(),
                    generator: String::new(),
                },
                seal_sha256: None,
                seal_status: String::new(),
                problems: Vec::new(),
                blocks: blocks.iter().map(|b| b.0).collect(),
                tickets: blocks.iter().map(|b| b.1).sum(),
                prizes: Vec::new(),
                payout_ratio: 0.0,
                cross_block: Vec::new(),
                correlations: Vec::new(),
            };
            // The summed table.
            let ours: Vec<&BlockSection> =
                out.blocks.iter().filter(|b| b.is_of(&emission)).collect();
            identify(&mut section, &ours, options);
            if let Some((stake, _)) = tables.get(&emission) {
                let mut counts = vec![0u64; stake.prizes.len() + 1];
                let mut expected = vec![0u64; stake.prizes.len() + 1];
                for b in &ours {
                    for (i, row) in b.prizes.iter().enumerate() {
                        counts[i] += row.count;
                        expected[i] += row.expected_count;
                    }
                }
                section.prizes = prize_rows(stake, &counts, &expected);
                section.payout_ratio = payout(stake, &counts, section.tickets);
            }
            for i in 0..blocks.len() {
                for j in i + 1..blocks.len() {
                    if blocks[i].1 != blocks[j].1 {
                        continue;
                    }
                    let (test, r) = order::cross_block(
                        (blocks[i].0, &blocks[i].2),
                        (blocks[j].0, &blocks[j].2),
                        blocks[i].1,
                    );
                    section.cross_block.push(test);
                    section.correlations.push(r);
                }
            }
            out.emissions.push(section);
        }
        conclude(&mut out);
        if settings.public {
            out.redact();
        }
        out
    }
}

impl Report {
    /// Makes this report the public version: drops everything that says where a ticket sits
    /// in its block (the prizes along the block, the start of the longest losing streak, the
    /// sample tickets of the winning prizes, the problems of a failed block, which name its
    /// lines and serials), keeps the tables, odds, payout and every test's verdict.
    pub fn redact(&mut self) {
        self.public = true;
        self.confidentiality = PUBLIC.into();
        for b in &mut self.blocks {
            if let Some(order) = &mut b.order {
                order.along.clear();
                order.longest_losing_streak_at = None;
            }
            // Only the losers' samples stay (the last tier).
            let last = b.samples.len().saturating_sub(1);
            for (i, (_, layouts)) in b.samples.iter_mut().enumerate() {
                if i != last {
                    layouts.clear();
                }
            }
            if !b.verified && !b.problems.is_empty() {
                b.problems = vec![Problem::new(
                    Code::ReportRedacted,
                    format!(
                        "{} problem(s), listed in the confidential report only (they name ticket lines)",
                        b.problems.len()
                    ),
                )];
            }
        }
    }
}

/// Fills the identity of an emission from its blocks' manifests, and its seal's status from
/// the folders the blocks were read from; what disagrees goes to its problems.
fn identify(section: &mut EmissionSection, blocks: &[&BlockSection], options: &VerifyOptions) {
    let name = section.name();
    let mut first: Option<(&BlockSection, &EmissionIdentity)> = None;
    for b in blocks {
        let Some(id) = &b.identity else { continue };
        match first {
            None => {
                section.identity = id.clone();
                first = Some((b, id));
            }
            Some((a, named)) if named != id => section.problems.push(Problem::new(
                Code::ReportMixedEmission,
                format!(
                    "emission {name}: blocks {} and {} were not made under the same emission (record, seed, key, definition or generator differ): {} and {} do not belong together",
                    a.number(),
                    b.number(),
                    a.file,
                    b.file
                ),
            )),
            Some(_) => {}
        }
    }
    // The seal of each folder the blocks come from.
    let mut folders: Vec<&Path> = blocks
        .iter()
        .map(|b| b.path.parent().unwrap_or(Path::new(".")))
        .collect();
    folders.sort();
    folders.dedup();
    let mut statuses = Vec::new();
    for folder in &folders {
        let ours: Vec<&&BlockSection> = blocks
            .iter()
            .filter(|b| b.path.parent().unwrap_or(Path::new(".")) == *folder)
            .collect();
        let (sha, status) = seal_of(
            folder,
            &ours,
            &section.identity,
            options,
            &mut section.problems,
        );
        if sha.is_some() {
            section.seal_sha256 = sha;
        }
        statuses.push(if folders.len() > 1 {
            format!("{}: {status}", shown_path(folder))
        } else {
            status
        });
    }
    section.seal_status = statuses.join("; ");
}

/// The seal of `folder`, checked against the blocks read from it: its SHA-256 and status.
fn seal_of(
    folder: &Path,
    blocks: &[&&BlockSection],
    identity: &EmissionIdentity,
    options: &VerifyOptions,
    problems: &mut Vec<Problem>,
) -> (Option<String>, String) {
    use crate::emission::seal::{read_seal, SEAL_FILE};
    use sha2::Digest;
    let path = folder.join(SEAL_FILE);
    let shown = shown_path(&path);
    if std::fs::symlink_metadata(&path).is_err() {
        return (None, "not sealed".into());
    }
    let key = match options.public_key {
        Some(key) => key,
        None => {
            let pem = folder.join(crate::block::PUBLIC_KEY_FILE);
            match crate::block::keys::read_public_key(&pem) {
                Ok(key) => key,
                Err(e) => {
                    problems.push(Problem::in_file(
                        Code::ReportSealKey,
                        &shown,
                        format!(
                            "{shown}: its signature cannot be checked: {} (give --public-key)",
                            crate::problem::chained(&e)
                        ),
                    ));
                    return (None, "seal present, signature not checked".into());
                }
            }
        }
    };
    let seal = match read_seal(folder, &key) {
        Ok(seal) => seal,
        Err(e) => {
            problems.push(Problem::in_file(
                Code::EmissionSeal,
                &shown,
                crate::problem::chained(&e),
            ));
            return (None, "seal INVALID (see the failures)".into());
        }
    };
    // Parsed strictly: its bytes are those of its value.
    let sha = hex::encode(sha2::Sha256::digest(seal.to_bytes()));
    let mut wrong = Vec::new();
    if identity
        .record_sha256
        .as_deref()
        .is_some_and(|r| r != seal.record_sha256)
    {
        wrong.push(format!(
            "it seals the record of SHA-256 {}, the blocks name {}",
            seal.record_sha256,
            identity.record_sha256.as_deref().unwrap_or_default()
        ));
    }
    for b in blocks {
        match seal.blocks.iter().find(|s| s.block == b.number()) {
            None => wrong.push(format!("block {} is not in it", b.number())),
            Some(s) if s.manifest_sha256 != b.manifest_sha256 => wrong.push(format!(
                "it seals block {} with manifest SHA-256 {}, the manifest read has {}",
                b.number(),
                s.manifest_sha256,
                b.manifest_sha256
            )),
            Some(_) => {}
        }
    }
    if !wrong.is_empty() {
        problems.push(Problem::in_file(
            Code::ReportSealBlocks,
            &shown,
            format!(
                "{shown}: does not seal the blocks read: {}",
                wrong.join("; ")
            ),
        ));
        return (
            Some(sha),
            "seal does NOT match the blocks read (see the failures)".into(),
        );
    }
    (
        Some(sha),
        format!(
            "sealed {} ({} blocks), signature valid, the {} block(s) read are sealed",
            shown_text(&seal.sealed, 40),
            seal.blocks.len(),
            blocks.len()
        ),
    )
}

fn unverified(csv: &Path, problems: Vec<Problem>) -> BlockSection {
    BlockSection {
        path: csv.to_path_buf(),
        identity: None,
        csv_sha256: String::new(),
        manifest_sha256: String::new(),
        merkle_root: String::new(),
        file: shown_path(csv),
        verified: false,
        problems,
        of: SectionBlock::default(),
        tickets: 0,
        winners: 0,
        prizes: Vec::new(),
        total_prizes: String::new(),
        payout_ratio: 0.0,
        expected_payout_ratio: 0.0,
        odds: 0.0,
        expected_odds: 0.0,
        forms: Vec::new(),
        near_misses: Vec::new(),
        near_misses_asked: Vec::new(),
        features: Vec::new(),
        leaks: Vec::new(),
        order: None,
        duplicates: Vec::new(),
        samples: Vec::new(),
    }
}

/// Analyses one verified block from what was observed of it; returns its section and its order (the tier of each ticket).
fn analyse_block(
    csv: &Path,
    observed: scan::Observed,
    samples: usize,
) -> Result<(BlockSection, Vec<u8>, Game, Stake), ReportError> {
    let name = shown_path(csv);
    let scan::Observed {
        tally,
        manifest,
        game,
        stake,
        duplicates,
    } = observed;
    let tiers: Vec<Decimal> = stake.tiers();
    let tier_text: Vec<String> = tiers.iter().copied().map(canonical).collect();
    let mut expected: Vec<u64> = stake.prizes.iter().map(|p| p.count).collect();
    expected.push(stake.losers(game.block_size));
    let tickets = tally.order.len() as u64;
    let loser = tiers.len() - 1;
    let losers = tally.counts[loser];
    let winners = tickets - losers;
    let prizes = prize_rows(&stake, &tally.counts, &expected);
    let total: Decimal = tiers
        .iter()
        .zip(&tally.counts)
        .map(|(a, &c)| a * Decimal::from(c))
        .sum();
    let amounts: Vec<f64> = tiers.iter().map(|a| a.to_f64().unwrap_or(0.0)).collect();
    // The order statistics beside the duplicates' sort (and re-read, if hashes collide).
    let (order, duplicates) = rayon::join(
        || order::analyse(&tally.order, &amounts, &tier_text),
        || duplicates.count(),
    );
    let duplicates = duplicates.map_err(ReportError::Scan)?;
    let rate = |name: &str, v: [u64; 2]| Rate {
        feature: name.to_string(),
        losers: v[0],
        winners: v[1],
        losers_rate: ratio(v[0], losers),
        winners_rate: ratio(v[1], winners),
        losers_share: None,
        winners_share: None,
    };
    let mut forms: Vec<FormRow> = tally
        .forms
        .iter()
        .map(|((tier, form), &count)| FormRow {
            prize: tier_text[*tier].clone(),
            form: form.clone(),
            count,
        })
        .collect();
    // Highest prize first, then the most common form.
    forms.sort_by_key(|f| {
        (
            tier_text.iter().position(|t| *t == f.prize),
            std::cmp::Reverse(f.count),
        )
    });
    let observed_names: Vec<&'static str> = tally.observed.keys().copied().collect();
    // Parsed strictly, the manifest's bytes are those of its value.
    let manifest_sha256 = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(manifest.to_bytes()))
    };
    let section = BlockSection {
        path: csv.to_path_buf(),
        identity: Some(EmissionIdentity::of(&manifest)),
        csv_sha256: manifest.csv.sha256.clone(),
        manifest_sha256,
        merkle_root: manifest.tickets_root.clone(),
        file: name,
        verified: true,
        problems: Vec::new(),
        of: SectionBlock {
            id: Some(manifest.id.clone()),
            game_name: game.name.clone(),
        },
        tickets,
        winners,
        prizes,
        total_prizes: canonical(total),
        payout_ratio: payout(&stake, &tally.counts, tickets),
        expected_payout_ratio: stake.payout_ratio(game.block_size).to_f64().unwrap_or(0.0),
        odds: ratio(tickets, winners),
        expected_odds: ratio(game.block_size, stake.winners),
        forms,
        near_misses: tally.near_misses.iter().map(|(n, &v)| rate(n, v)).collect(),
        near_misses_asked: asked::asked_rates(
            stake.mechanic.name(),
            &stake.mechanic.near_miss_rates(),
            &tally,
        ),
        features: tally
            .shown
            .iter()
            .filter(|(n, _)| observed_names.contains(n))
            .map(|(n, &v)| {
                let [losers_share, winners_share] = shares(n, &tally);
                Rate {
                    losers_share: Some(losers_share),
                    winners_share: Some(winners_share),
                    ..rate(n, v)
                }
            })
            .collect(),
        leaks: observed_names
            .iter()
            .filter_map(|n| leak_test(n, &tally))
            .collect(),
        order: Some(order),
        duplicates: duplicates
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(t, &count)| PrizeCount {
                prize: tier_text[t].clone(),
                count,
            })
            .collect(),
        samples: tier_text
            .iter()
            .cloned()
            .zip(
                tally
                    .samples
                    .iter()
                    .map(|s| s.iter().take(samples).cloned().collect()),
            )
            .collect(),
    };
    Ok((section, tally.order, game, stake))
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The Article 3 rows for `counts` read and `expected` (per tier, losers last).
fn prize_rows(stake: &Stake, counts: &[u64], expected: &[u64]) -> Vec<PrizeRow> {
    stake
        .tiers()
        .into_iter()
        .enumerate()
        .map(|(t, amount)| PrizeRow {
            amount: canonical(amount),
            count: counts[t],
            expected_count: expected[t],
            total: canonical(amount * Decimal::from(counts[t])),
            expected_total: canonical(amount * Decimal::from(expected[t])),
        })
        .collect()
}

fn payout(stake: &Stake, counts: &[u64], tickets: u64) -> f64 {
    let total: Decimal = stake
        .tiers()
        .iter()
        .zip(counts)
        .map(|(a, &c)| a * Decimal::from(c))
        .sum();
    let stakes = stake.price * Decimal::from(tickets);
    if stakes.is_zero() {
        0.0
    } else {
        (total / stakes).to_f64().unwrap_or(0.0)
    }
}

/// Per group (losers, winners), the share of a feature's observations whose value is above 0.
fn shares(feature: &str, tally: &scan::Tally) -> [f64; 2] {
    let (mut all, mut above) = ([0u64; 2], [0u64; 2]);
    for (&(_, value), counts) in tally.observations.range((feature, 0)..=(feature, u32::MAX)) {
        for g in 0..2 {
            all[g] += counts[g];
            if value > 0 {
                above[g] += counts[g];
            }
        }
    }
    [ratio(above[0], all[0]), ratio(above[1], all[1])]
}

/// Chi-square of independence between the group (losers, winners) and the feature's value,
/// over its observations outside the winning parts. Values
/// are taken in order and merged with their neighbours until each class expects at least 5
/// observations in each group. `None` when fewer than 2 classes remain.
fn leak_test(feature: &str, tally: &scan::Tally) -> Option<LeakTest> {
    // Only the values: how many parts a ticket shows outside its wins depends on what it
    // wins (a winning row is not a losing one), so presence is no leak; values are.
    let columns: Vec<[u64; 2]> = tally
        .observations
        .range((feature, 0)..=(feature, u32::MAX))
        .map(|(_, &v)| v)
        .collect();
    let rows = [
        columns.iter().map(|c| c[0]).sum::<u64>() as f64,
        columns.iter().map(|c| c[1]).sum::<u64>() as f64,
    ];
    let total = rows[0] + rows[1];
    if rows[0] == 0.0 || rows[1] == 0.0 {
        return None;
    }
    // A class is big enough when its smaller expected cell reaches MIN_EXPECTED.
    let enough = |c: &[u64; 2]| (c[0] + c[1]) as f64 * rows[0].min(rows[1]) / total >= MIN_EXPECTED;
    let mut merged: Vec<[u64; 2]> = Vec::new();
    let mut current = [0u64; 2];
    for c in columns {
        current[0] += c[0];
        current[1] += c[1];
        if enough(&current) {
            merged.push(current);
            current = [0; 2];
        }
    }
    if current != [0, 0] {
        match merged.last_mut() {
            Some(last) => {
                last[0] += current[0];
                last[1] += current[1];
            }
            None => merged.push(current),
        }
    }
    if merged.len() < 2 {
        return None;
    }
    let mut x2 = 0.0;
    for c in &merged {
        let col = (c[0] + c[1]) as f64;
        for g in 0..2 {
            let e = rows[g] * col / total;
            x2 += (c[g] as f64 - e).powi(2) / e;
        }
    }
    let df = merged.len() as f64 - 1.0;
    let p = stats::chi_square_sf(x2, df);
    Some(LeakTest {
        feature: feature.to_string(),
        classes: merged.len(),
        statistic: x2,
        df,
        p,
        p_holm: p,
        flagged: false,
        what: format!(
            "are the values of {feature} shown outside the winning parts distributed alike on winners and losers? chi-square of independence over {} classes",
            merged.len()
        ),
    })
}

/// Holm over each family, the verdicts, and the list of failures.
fn conclude(report: &mut Report) {
    // The order family: every order test of every block, and the cross-block tests.
    let mut ps = Vec::new();
    for b in &report.blocks {
        if let Some(o) = &b.order {
            ps.extend(o.tests.iter().map(|t| t.p));
        }
    }
    for e in &report.emissions {
        ps.extend(e.cross_block.iter().map(|t| t.p));
    }
    let adjusted = stats::holm(&ps);
    let mut next = adjusted.into_iter();
    let mut failures = Vec::new();
    for e in &report.emissions {
        failures.extend(e.problems.iter().map(|p| p.message.clone()));
    }
    for b in &mut report.blocks {
        if let Some(o) = &mut b.order {
            for t in &mut o.tests {
                t.what = in_words(t);
            }
        }
    }
    for e in &mut report.emissions {
        for t in &mut e.cross_block {
            t.what = in_words(t);
        }
    }
    for b in &mut report.blocks {
        if !b.verified {
            failures.push(format!("{}: failed verification", b.file));
        }
        if let Some(o) = &mut b.order {
            for t in &mut o.tests {
                t.p_holm = next.next().unwrap_or(1.0);
                t.failed = t.p_holm < ORDER_ALPHA;
                if t.failed {
                    failures.push(format!("{}: order test {} failed", b.file, describe(t)));
                }
            }
        }
    }
    for e in &mut report.emissions {
        let name = e.name();
        for t in &mut e.cross_block {
            t.p_holm = next.next().unwrap_or(1.0);
            t.failed = t.p_holm < ORDER_ALPHA;
            if t.failed {
                failures.push(format!("{}: order test {} failed", name, describe(t)));
            }
        }
    }
    // The leak family.
    let ps: Vec<f64> = report
        .blocks
        .iter()
        .flat_map(|b| b.leaks.iter().map(|l| l.p))
        .collect();
    let mut next = stats::holm(&ps).into_iter();
    for b in &mut report.blocks {
        for l in &mut b.leaks {
            l.p_holm = next.next().unwrap_or(1.0);
            l.flagged = l.p_holm < LEAK_ALPHA;
            if l.flagged {
                failures.push(format!(
                    "{}: leak check: {} differs between winners and losers",
                    b.file, l.feature
                ));
            }
        }
    }
    report.failed = !failures.is_empty();
    report.failures = failures;
}

/// What an order test tests, in words.
pub fn in_words(t: &OrderTest) -> String {
    let lag = t.lag.unwrap_or(0);
    match t.test {
        "positions" => match t.prize.as_deref() {
            Some("winners") | None => "are the winners spread evenly along the block? their counts in 100 equal segments".into(),
            Some(p) => format!("are the {p} € tickets spread evenly along the block? their counts in 100 equal segments"),
        },
        "runs" => "do winners and losers alternate as often as in a random order? the number of runs of winners and of losers".into(),
        "serial_win" => format!("does a ticket's winning tell anything of the one {lag} places further on? correlation of win indicators at lag {lag}"),
        "serial_amount" => format!("does a ticket's prize tell anything of the prize {lag} places further on? correlation of amounts at lag {lag}"),
        "gaps" => "are the gaps between consecutive winners those of a random order? their counts against their exact law".into(),
        "longest_losing_streak" => "is the longest run of losing tickets longer than chance allows? its length".into(),
        "cross_block" => {
            let [a, b] = t.blocks.unwrap_or_default();
            format!("do blocks {a} and {b} have their winners at the same places? overlap of their win indicators")
        }
        other => other.to_string(),
    }
}

/// The name of a test's statistic.
pub fn statistic_name(t: &OrderTest) -> &'static str {
    match t.test {
        "positions" | "gaps" => "chi-square",
        "longest_losing_streak" => "longest streak",
        _ => "z",
    }
}

/// The verdict on an emission or a block's Article 3 table: do the counts read match the
/// definition's?
pub fn table_matches(rows: &[PrizeRow]) -> bool {
    rows.iter().all(|r| r.count == r.expected_count)
}

/// A p-value as a decimal: four places, or two significant digits below 0.001, or
/// `< 0.000000000001`.
pub fn decimal_p(p: f64) -> String {
    if !p.is_finite() {
        return "n/a".into();
    }
    if p >= 0.001 {
        return format!("{p:.4}");
    }
    if p < 1e-12 {
        return "< 0.000000000001".into();
    }
    let places = (-p.log10().floor()) as usize + 1;
    format!("{p:.places$}")
}

/// `positions (20 €)`, `serial_win (lag 3)`, `cross_block (blocks 1, 2)`.
pub fn describe(t: &OrderTest) -> String {
    match (&t.prize, t.lag, t.blocks) {
        (Some(p), _, _) if p == "winners" => format!("{} (all winners)", t.test),
        (Some(p), _, _) => format!("{} ({p} €)", t.test),
        (_, Some(l), _) => format!("{} (lag {l})", t.test),
        (_, _, Some([a, b])) => format!("{} (blocks {a}, {b})", t.test),
        _ => t.test.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Winners show fewer losing parts (a hive that wins honey shows no loose pots), so the
    /// share of tickets showing a feature differs between losers and winners even when every
    /// part is drawn alike; the share of the parts does not, and it is what `report` shows.
    #[test]
    fn feature_shares_are_per_part_not_per_ticket() {
        let mut tally = scan::Tally::default();
        // 100 losers, one part each: 40 with loose pots. 100 winners, 50 of them with one
        // losing part: 20 with loose pots.
        tally.observations.insert(("loose_honey", 0), [60, 30]);
        tally.observations.insert(("loose_honey", 2), [40, 20]);
        tally.observations.insert(("other", 1), [1, 1]);
        assert_eq!(shares("loose_honey", &tally), [0.4, 0.4]);
        // The ticket rates, 40 % and 20 %, are not what the share says.
        assert_ne!(ratio(20, 100), shares("loose_honey", &tally)[1]);
        assert_eq!(shares("missing", &tally), [ratio(0, 0), ratio(0, 0)]);
    }
}
