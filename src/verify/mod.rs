//! Independent verification of a block: everything is recomputed from the files and the game
//! definition, trusting only the decoders.
//!
//! Checked: the CSV header and line format, every serial, every ticket's SHA-256, every layout
//! (valid under SPEC §3 and decoding to its prize column), the multiset of prizes against
//! Article 3 for the stake, the total, the CSV's size and SHA-256, the Merkle root, the
//! manifest's fields, and the Ed25519 signature of the manifest.
//!
//! This file runs the checks in order; each concern has its own file: [`manifest`] (the
//! manifest, its signature, the block's folder), [`lines`] (the ticket lines, and the
//! pipeline that reads the file), [`replay`] (with the seed: the block as the seed makes it).

mod lines;
mod manifest;
mod observe;
mod replay;

pub use lines::{Form, TicketCheck};
pub use manifest::{check_signed, FingerprintError, SignatureCheck};
pub use observe::{CheckedLine, PieceObserver, PiecePart};

use crate::block;
use crate::block::manifest::{Manifest, ManifestError, MAX_MANIFEST_BYTES};
use crate::fs::dir::WalkError;
use crate::fs::open::{read_at_most, ReadError};
use crate::game::{Game, Stake};
use crate::money::canonical;
use crate::plan::Seed;
use crate::problem::{Code, Problem};
use crate::progress::Progress;
use crate::untrusted::{shown, shown_path};
use ed25519_dalek::VerifyingKey;
use lines::LineChecker;
use replay::Replay;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Problems listed per block before the rest are only counted.
const MAX_LISTED: usize = 20;

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
    /// The beacon round (`--beacon`) an emission's record may name: with `seed` (then the
    /// custodians' secret), the blocks are replayed from the seed both make
    /// ([`crate::emission::beacon::replay_seed`]).
    pub beacon: Option<crate::emission::beacon::Round>,
}

/// The verdict on one block.
#[derive(Debug, Clone, Default)]
pub struct BlockReport {
    /// The block's CSV file.
    pub csv: PathBuf,
    /// What is wrong, each naming the file, and the line and serial where it applies.
    pub problems: Vec<Problem>,
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
    fn problem(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// A problem that ends the check of the block: listed, and returned to stop with `?`.
    fn stop(&mut self, problem: Problem) -> Stopped {
        self.problem(problem);
        Stopped
    }

    /// A problem on one ticket line: the first [`MAX_LISTED`] are listed, the rest counted.
    fn line_problem(&mut self, problem: Problem) {
        if self.listed_lines < MAX_LISTED {
            self.listed_lines += 1;
            self.problems.push(problem);
        } else {
            self.unlisted += 1;
        }
    }
}

/// The block CSV files named by `paths`, in name order: a file as it is (a bare name is taken
/// in the current folder, `./block-00001.csv`), a folder walked for `block-NNNNN.csv` by
/// [`crate::fs::dir::walk`]: links inside it are never followed (a folder named on the
/// command line may itself be a link), the walk is bounded in depth and never enters a folder
/// twice, and an entry named like a block is returned whatever it is (a FIFO, a link), for the
/// reader to refuse it by name rather than miss it.
pub fn find_blocks(paths: &[PathBuf]) -> Result<Vec<PathBuf>, VerifyError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => VerifyError::NotFound { path: path.clone() },
            _ => VerifyError::LookAt {
                path: path.clone(),
                error,
            },
        })?;
        if meta.is_dir() {
            let wanted = |name: &std::ffi::OsStr| block_number(Path::new(name)).is_some();
            out.extend(crate::fs::dir::walk(path, &wanted).map_err(VerifyError::walk)?);
        } else if path.parent().is_some_and(|p| p.as_os_str().is_empty()) {
            out.push(Path::new(".").join(path));
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// The emission folders under `paths` (the folders themselves, and those found walking the
/// folders named, links not followed): every folder holding a file of an emission's
/// (record, seal, log, key, or a block's manifest or its signature), whether or not a block's
/// CSV is there. A folder whose CSVs were all deleted is still checked as an emission (it was
/// skipped: only the folders of the CSVs found were).
pub fn find_emission_folders(paths: &[PathBuf]) -> Result<Vec<PathBuf>, VerifyError> {
    use crate::block::BlockFile;
    let wanted = |name: &std::ffi::OsStr| {
        let Some(name) = name.to_str() else {
            return false;
        };
        [
            crate::emission::record::RECORD_FILE,
            crate::emission::seal::SEAL_FILE,
            crate::emission::log::LOG_FILE,
            crate::block::PUBLIC_KEY_FILE,
        ]
        .contains(&name)
            || matches!(
                crate::block::parse_file_name(name),
                Some((_, BlockFile::Manifest | BlockFile::Signature))
            )
    };
    let mut out = std::collections::BTreeSet::new();
    for path in paths {
        if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let found = crate::fs::dir::walk(path, &wanted).map_err(VerifyError::walk)?;
        out.extend(found.iter().map(|f| folder_of(f).to_path_buf()));
    }
    Ok(out.into_iter().collect())
}

/// Why the files to verify could not be found (the problems found in them are not errors:
/// they are [`Problem`]s, each with its [`Code`]).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A path named on the command line does not exist.
    #[error("{} does not exist", shown_path(.path))]
    NotFound {
        /// The path, as given.
        path: PathBuf,
    },
    /// A path named on the command line could not be looked at (no permission on a folder
    /// above it, an I/O error...).
    #[error("cannot look at {}: {error}", shown_path(.path))]
    LookAt {
        /// The path, as given.
        path: PathBuf,
        /// The operating system's error (shown in the sentence).
        error: std::io::Error,
    },
    /// A folder named on the command line could not be walked: see [`WalkError`].
    #[error(transparent)]
    Walk(WalkError),
    /// A signal came while the folders were walked: the program exits as a shell expects
    /// (130 for SIGINT...).
    #[error(transparent)]
    Interrupted(#[from] crate::interrupt::Interrupted),
}

impl VerifyError {
    /// A walk's error, a signal kept as itself.
    fn walk(error: WalkError) -> VerifyError {
        match error {
            WalkError::Interrupted(i) => VerifyError::Interrupted(i),
            e => VerifyError::Walk(e),
        }
    }
}

/// The folder holding a block (or any file named by a path): its parent, `.` for a bare name.
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Why the emission folder's copy of its game definition cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    /// Whether the copy is there cannot be told.
    #[error("{}", crate::problem::chained(.0))]
    Entry(crate::fs::FsError),
    /// The copy cannot be read.
    #[error("cannot read {path}: {error}")]
    Unreadable {
        /// The copy, shown.
        path: String,
        /// Why.
        error: ReadError,
    },
    /// The copy is not the definition the manifest names.
    #[error("{path} has SHA-256 {found}, and the manifest names the definition {named}: the emission's copy of its definition was changed")]
    Changed {
        /// The copy, shown.
        path: String,
        /// Its SHA-256.
        found: String,
        /// The manifest's `game_definition_sha256`, shown.
        named: String,
    },
    /// The copy is not UTF-8.
    #[error("{path}: not UTF-8 text")]
    NotUtf8 {
        /// The copy, shown.
        path: String,
    },
    /// The copy is not a valid definition.
    #[error(transparent)]
    Invalid(#[from] crate::game::GameError),
}

impl DefinitionError {
    /// The problem's code in verify's reports.
    pub fn code(&self) -> Code {
        match self {
            DefinitionError::Entry(_) | DefinitionError::Unreadable { .. } => {
                Code::DefinitionUnreadable
            }
            DefinitionError::Changed { .. } => Code::DefinitionChanged,
            DefinitionError::NotUtf8 { .. } | DefinitionError::Invalid(_) => {
                Code::DefinitionInvalid
            }
        }
    }
}

/// The game definition kept in the emission folder of a block ([`block::DEFINITION_FILE`]), if
/// there is one; refused unless its SHA-256 is `sha256` (the manifest's
/// `game_definition_sha256`), so a changed copy is never used. `None` without a copy.
pub fn folder_definition(folder: &Path, sha256: &str) -> Result<Option<Game>, DefinitionError> {
    use sha2::{Digest, Sha256};
    let path = folder.join(block::DEFINITION_FILE);
    match crate::fs::files::entry_exists(&path) {
        Ok(false) => return Ok(None),
        Ok(true) => {}
        Err(e) => return Err(DefinitionError::Entry(e)),
    }
    let bytes = read_at_most(
        &path,
        crate::game::MAX_DEFINITION_BYTES,
        "a game definition",
    )
    .map_err(|error| DefinitionError::Unreadable {
        path: shown_path(&path),
        error,
    })?;
    let found = hex::encode(Sha256::digest(&bytes));
    if found != sha256 {
        return Err(DefinitionError::Changed {
            path: shown_path(&path),
            found,
            named: shown(sha256),
        });
    }
    let text = String::from_utf8(bytes).map_err(|_| DefinitionError::NotUtf8 {
        path: shown_path(&path),
    })?;
    Ok(Some(Game::parse(&text, &path.display().to_string())?))
}

/// The block number in a `block-NNNNN.csv` file name.
pub fn block_number(path: &Path) -> Option<u32> {
    match crate::block::parse_file_name(path.file_name()?.to_str()?)? {
        (number, crate::block::BlockFile::Csv) => Some(number),
        _ => None,
    }
}

/// The check of a block ended early; the reason is the report's last problem.
struct Stopped;

/// Verifies one block, given its CSV file; `progress` counts the ticket lines checked.
pub fn verify_block(csv: &Path, options: &VerifyOptions, progress: &dyn Progress) -> BlockReport {
    verify_block_observed(csv, options, progress, None)
}

/// [`verify_block`], with an observer given every valid ticket line as it is checked, in the
/// same pass ([`PieceObserver`]); what it saw counts only if the verdict is ok.
pub fn verify_block_observed(
    csv: &Path,
    options: &VerifyOptions,
    progress: &dyn Progress,
    observer: Option<&dyn PieceObserver>,
) -> BlockReport {
    let mut report = BlockReport {
        csv: csv.to_path_buf(),
        ..BlockReport::default()
    };
    // Stopped early: what stopped it is in the report already.
    let _ = check_block(&mut report, csv, options, progress, observer, None);
    report
}

/// [`verify_block`] of a block whose CSV is not a file but the bytes `source` gives in `form`
/// (a pack's member as it streams: [`crate::pack::verify`]): `csv` is where it would be,
/// beside its manifest, its signature and its emission's files, which are read from there.
/// Every check is the same; in the lines form ([`Form::Lines`]) they are made on the CSV
/// rebuilt from them, its size and SHA-256 against the manifest among them, so a block passes
/// only if the rebuilt CSV is the one its manifest names. `source` is read once, at most the
/// manifest's CSV size plus one byte.
pub fn verify_block_from(
    csv: &Path,
    source: &mut (dyn std::io::Read + Send),
    form: Form,
    options: &VerifyOptions,
    progress: &dyn Progress,
) -> BlockReport {
    let mut report = BlockReport {
        csv: csv.to_path_buf(),
        ..BlockReport::default()
    };
    // Stopped early: what stopped it is in the report already.
    let _ = check_block(
        &mut report,
        csv,
        options,
        progress,
        None,
        Some((source, form)),
    );
    report
}

/// [`verify_block_from`] with an observer, as [`verify_block_observed`] (`report PACK`).
pub fn verify_block_from_observed(
    csv: &Path,
    source: &mut (dyn std::io::Read + Send),
    options: &VerifyOptions,
    progress: &dyn Progress,
    observer: &dyn PieceObserver,
) -> BlockReport {
    let mut report = BlockReport {
        csv: csv.to_path_buf(),
        ..BlockReport::default()
    };
    // Stopped early: what stopped it is in the report already.
    let _ = check_block(
        &mut report,
        csv,
        options,
        progress,
        Some(observer),
        Some((source, Form::Csv)),
    );
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
    match check_head(&mut report, csv, options) {
        Ok(head) if report.ok() => (
            report,
            Some(CheckedManifest {
                manifest: head.manifest,
                game: head.game,
                stake: head.stake,
            }),
        ),
        _ => (report, None),
    }
}

/// What the first half of the checks gives the second.
struct Head {
    manifest_path: PathBuf,
    manifest: Manifest,
    game: Game,
    stake: Stake,
}

/// The manifest half of the checks: read it (bounded), its signature, its fields.
fn check_head(
    report: &mut BlockReport,
    csv: &Path,
    options: &VerifyOptions,
) -> Result<Head, Stopped> {
    let name = shown_path(csv);
    let number = block_number(csv).ok_or_else(|| {
        report.stop(Problem::in_file(
            Code::BlockName,
            &name,
            format!("{name}: not a block file (block files are named block-NNNNN.csv)"),
        ))
    })?;
    let dir = folder_of(csv);
    let manifest_path = dir.join(block::manifest_name(number));
    let shown_manifest = shown_path(&manifest_path);
    let manifest_bytes =
        read_at_most(&manifest_path, MAX_MANIFEST_BYTES, "a manifest").map_err(|e| match e {
            e @ ReadError::TooLarge { .. } => report.stop(Problem::in_file(
                Code::ManifestTooLarge,
                &shown_manifest,
                format!("{shown_manifest}: {e}"),
            )),
            e => report.stop(Problem::in_file(
                Code::ManifestUnreadable,
                &shown_manifest,
                format!("{shown_manifest}: cannot read the manifest: {e}"),
            )),
        })?;
    let parsed = Manifest::from_bytes(&manifest_bytes);
    manifest::check_signature(
        report,
        dir,
        number,
        &manifest_bytes,
        parsed.as_ref().ok(),
        options,
    );
    let manifest = parsed.map_err(|e| {
        // A game or stake that cannot name an emission keeps the code of the field.
        let (code, text) = match &e {
            ManifestError::Field { field: "game", .. } => (Code::ManifestGame, e.to_string()),
            ManifestError::Field { .. } => (Code::ManifestStake, e.to_string()),
            _ => (Code::ManifestInvalid, format!("not a valid manifest: {e}")),
        };
        report.stop(Problem::in_file(
            code,
            &shown_manifest,
            format!("{shown_manifest}: {text}"),
        ))
    })?;
    let (game, stake) =
        manifest::check_manifest(report, &manifest_path, &manifest, number, csv, options)?;
    Ok(Head {
        manifest_path,
        manifest,
        game,
        stake,
    })
}

/// The checks of [`verify_block`], in order; every early exit is a `?` on [`BlockReport::stop`].
fn check_block(
    report: &mut BlockReport,
    csv: &Path,
    options: &VerifyOptions,
    progress: &dyn Progress,
    observer: Option<&dyn PieceObserver>,
    source: Option<(&mut (dyn std::io::Read + Send), Form)>,
) -> Result<(), Stopped> {
    let name = shown_path(csv);
    let Head {
        manifest_path,
        manifest,
        game,
        stake,
    } = check_head(report, csv, options)?;
    let tickets = TicketCheck::new(
        &game,
        &stake,
        manifest.emission().number(),
        manifest.id.number(),
    );
    let replay = match &options.seed {
        None => None,
        Some(seed) => Some(
            Replay::new(
                seed,
                options.beacon.as_ref(),
                &manifest,
                &manifest_path,
                &game,
                &stake,
                &name,
            )
            .map_err(|m| report.stop(m))?,
        ),
    };
    // Sizes first: a file larger than its manifest says, or a manifest that states more than
    // a block of this game can hold, is refused before a byte of the file is read.
    let most = tickets.max_block_bytes(game.block_size);
    if manifest.csv.bytes > most {
        let shown_manifest = shown_path(&manifest_path);
        return Err(report.stop(Problem::in_file(
            Code::ManifestSize,
            &shown_manifest,
            format!(
                "{shown_manifest}: the manifest says the CSV holds {} bytes, more than a block of {} can ({most}): the file is not read",
                manifest.csv.bytes,
                game.id
            ),
        )));
    }
    if source.is_none() {
        let size = std::fs::metadata(csv)
            .map_err(|e| {
                report.stop(Problem::in_file(
                    Code::FileUnreadable,
                    &name,
                    format!("{name}: cannot read: {e}"),
                ))
            })?
            .len();
        if size > manifest.csv.bytes {
            return Err(report.stop(Problem::in_file(
                Code::FileTooLarge,
                &name,
                format!(
                    "{name}: {size} bytes, more than the {} the manifest says: not read",
                    manifest.csv.bytes
                ),
            )));
        }
    }
    let checker = LineChecker {
        name: &name,
        tickets: &tickets,
        forms: options.forms,
        replay: replay.as_ref(),
        observer,
    };
    if let Some(observer) = observer {
        observer.start(&manifest, &game, &stake);
    }
    let scanned = match source {
        None => checker.scan(csv, manifest.csv.bytes, report, progress),
        Some((source, form)) => {
            checker.scan_from(source, form, manifest.csv.bytes, report, progress)
        }
    };
    let scan = scanned.map_err(|e| {
        report.stop(Problem::in_file(
            Code::FileUnreadable,
            &name,
            format!("{name}: cannot read: {e}"),
        ))
    })?;
    if !scan.complete {
        // A line far longer than any ticket line: the rest of the file was not read.
        return Err(Stopped);
    }
    // The block as a whole.
    if report.tickets != game.block_size {
        let text = format!(
            "{name}: {} tickets, a block of {} holds {}",
            report.tickets, game.id, game.block_size
        );
        report.problem(Problem::in_file(Code::BlockTickets, &name, text));
    }
    if report.tickets != manifest.tickets {
        let text = format!(
            "{name}: {} tickets, the manifest says {}",
            report.tickets, manifest.tickets
        );
        report.problem(Problem::in_file(Code::BlockTicketsManifest, &name, text));
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
            let text = format!(
                "{name}: {count} tickets win {} €, Article 3 for a {} € block says {}",
                tickets.tier_text[tier],
                canonical(stake.price),
                expected[tier].count
            );
            report.problem(Problem::in_file(Code::BlockPrizeCount, &name, text));
        }
    }
    let total_text = total.map_or_else(|| "more than an amount can hold".into(), canonical);
    if total_text != manifest.total_prizes || total != Some(stake.total) {
        let text = format!(
            "{name}: the prizes add up to {total_text} €; the manifest says {} € and Article 3 {} €",
            shown(&manifest.total_prizes),
            canonical(stake.total)
        );
        report.problem(Problem::in_file(Code::BlockTotal, &name, text));
    }
    if scan.bytes != manifest.csv.bytes {
        let text = format!(
            "{name}: {} bytes, the manifest says {}",
            scan.bytes, manifest.csv.bytes
        );
        report.problem(Problem::in_file(Code::BlockBytes, &name, text));
    }
    if hex::encode(scan.sha256) != manifest.csv.sha256 {
        let text = format!(
            "{name}: the file's SHA-256 is {}, the manifest says {}",
            hex::encode(scan.sha256),
            shown(&manifest.csv.sha256)
        );
        report.problem(Problem::in_file(Code::BlockSha256, &name, text));
    }
    if hex::encode(scan.root) != manifest.tickets_root {
        let text = format!(
            "{name}: the Merkle root of the tickets is {}, the manifest says {}",
            hex::encode(scan.root),
            shown(&manifest.tickets_root)
        );
        report.problem(Problem::in_file(Code::BlockMerkleRoot, &name, text));
    }
    Ok(())
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
