//! The emission seal (`emission.seal.json` and `emission.seal.json.sig`): the signed list of
//! every block of a finished emission, with its manifest's SHA-256 and counts, the emission's
//! totals, and the hash of the audit log's last line at sealing time.
//!
//! A seal is written once, under the emission lock, only when every planned block is present
//! and verifies, and no other block is there; from then on the emission takes no new block.
//! [`check_folder`] is what `verify` runs on an emission folder: the record, every manifest
//! against it, the log's chain, and the seal against the blocks on disk.

use crate::block::id::{EmissionId, FieldError};
use crate::block::manifest::{Manifest, ManifestError, MAX_MANIFEST_BYTES};
use crate::emission::log::{self, Chain, LogError};
use crate::emission::record::{self, Record, RecordError, RECORD_FILE};
use crate::emission::{read_bounded, read_signed, shown, write_signed, FileError};
use crate::json::{parse_strict, Layout, StrictJsonError};
use crate::money::{canonical, parse_canonical};
use crate::problem::chained;
use crate::problem::{Code, Problem};
use crate::untrusted::shown_path;
use ed25519_dalek::{SigningKey, VerifyingKey};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why an emission was not sealed, or its seal not read or accepted. (What `verify` finds
/// wrong with a folder is not an error: [`check_folder`] reports it as [`Problem`]s.)
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The emission folder could not be listed.
    #[error("cannot read folder {}", .folder.display())]
    List {
        /// The emission folder.
        folder: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A manifest or the seal could not be read or written, or its signature is not the key's
    /// (see [`FileError`]).
    #[error(transparent)]
    File(#[from] FileError),
    /// A manifest that does not parse.
    #[error("{}: not a valid manifest: {error}", .path.display())]
    NotManifest {
        /// The manifest.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ManifestError,
    },
    /// Planned blocks are not in the folder.
    #[error(
        "cannot seal {}: {} of its {planned} blocks are missing: {}. Make them (emit --first-block K --blocks N), then seal.",
        .folder.display(),
        .missing.len(),
        ranges(.missing)
    )]
    Missing {
        /// The emission folder.
        folder: PathBuf,
        /// The blocks planned.
        planned: u32,
        /// The planned blocks missing.
        missing: Vec<u32>,
    },
    /// Blocks beyond the planned ones are in the folder.
    #[error(
        "cannot seal {}: it holds blocks beyond its {planned} planned ones: {}",
        .folder.display(),
        ranges(.extra)
    )]
    Extra {
        /// The emission folder.
        folder: PathBuf,
        /// The blocks planned.
        planned: u32,
        /// The blocks beyond them.
        extra: Vec<u32>,
    },
    /// A block that does not verify.
    #[error("cannot seal {}: block {block} does not verify", .folder.display())]
    NotVerified {
        /// The emission folder.
        folder: PathBuf,
        /// The block.
        block: u32,
    },
    /// A block whose manifest disagrees with the emission's record.
    #[error(
        "cannot seal {}: block {block} is not of this emission: {}",
        .folder.display(),
        .wrong.join("; ")
    )]
    ForeignBlock {
        /// The emission folder.
        folder: PathBuf,
        /// The block.
        block: u32,
        /// What disagrees.
        wrong: Vec<String>,
    },
    /// A manifest's `total_prizes` that is not a canonical amount.
    #[error("block {block}: total_prizes is not a canonical amount")]
    NotCanonical {
        /// The block.
        block: u32,
    },
    /// A sum of the seal that does not fit: `ticket count`, `winner count` or `total`.
    #[error("the emission's {0} overflows")]
    Overflow(&'static str),
    /// The audit log could not be read (see [`LogError`]).
    #[error(transparent)]
    Log(#[from] LogError),
    /// The emission is sealed already, with other blocks.
    #[error(
        "{} is already sealed, with other blocks: a sealed emission is never changed",
        .folder.display()
    )]
    Resealed {
        /// The emission folder.
        folder: PathBuf,
    },
    /// The seal lists other blocks than the planned ones.
    #[error(
        "{}: the seal lists the blocks {} where the emission plans {planned}: a sealed emission is never changed (give --blocks as the record says)",
        .path.display(),
        ranges(.listed)
    )]
    OtherBlocks {
        /// The seal.
        path: PathBuf,
        /// The blocks it lists.
        listed: Vec<u32>,
        /// The blocks planned.
        planned: u32,
    },
    /// A manifest that is not the one the seal lists.
    #[error(
        "{}: SHA-256 {sha256} is not the {} the seal lists: block {block} was changed after sealing; a sealed emission is never changed (restore the block from the archive)",
        .path.display(),
        shown(.sealed.as_bytes())
    )]
    ChangedAfterSealing {
        /// The manifest.
        path: PathBuf,
        /// Its SHA-256.
        sha256: String,
        /// The SHA-256 the seal lists.
        sealed: String,
        /// The block.
        block: u32,
    },
    /// The seal is not JSON of a seal's fields.
    #[error("{}: not a valid seal: {error}", .path.display())]
    NotSeal {
        /// The seal.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: StrictJsonError,
    },
    /// A format this program does not read.
    #[error(
        "{}: seal format {format} is not one this program reads (it reads {SEAL_FORMAT})",
        .path.display()
    )]
    Format {
        /// The seal.
        path: PathBuf,
        /// Its format.
        format: u32,
    },
    /// The emission's record could not be read (see [`RecordError`]).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// An emission with no record, which cannot be sealed.
    #[error(
        "{} has no emission record ({RECORD_FILE}): only emissions made with records can be sealed",
        .folder.display()
    )]
    NoRecord {
        /// The emission folder.
        folder: PathBuf,
    },
}

/// File name of the seal.
pub const SEAL_FILE: &str = "emission.seal.json";
/// File name of its signature.
pub const SEAL_SIG_FILE: &str = "emission.seal.json.sig";
/// The seal's format number.
pub const SEAL_FORMAT: u32 = 1;
/// Largest seal read (99 999 blocks of about 200 bytes).
const MAX_SEAL_BYTES: u64 = 64 << 20;

/// One block as sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealedBlock {
    /// Block number.
    pub block: u32,
    /// SHA-256 of the block's manifest file.
    pub manifest_sha256: String,
    /// Tickets.
    pub tickets: u64,
    /// Winning tickets.
    pub winners: u64,
    /// Sum of its prizes, canonical.
    pub total_prizes: String,
}

/// The seal. Its emission is one [`EmissionId`], checked at reading (a `game` that is no
/// game id, a `stake` that is not a canonical price, are refused); on disk the fields are
/// those of [`SealWire`], in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SealWire", into = "SealWire")]
pub struct Seal {
    /// Always [`SEAL_FORMAT`].
    pub format: u32,
    /// The emission (fields `game`, `stake` and `emission`).
    pub id: EmissionId,
    /// `test` or `production`, from the record.
    pub kind: crate::block::id::EmissionKind,
    /// SHA-256 of the emission record's bytes.
    pub record_sha256: String,
    /// SHA-256 of the game definition.
    pub game_definition_sha256: String,
    /// SHA-256 of the seed (the commitment).
    pub seed_sha256: String,
    /// SHA-256 of the signing public key.
    pub public_key_sha256: String,
    /// Every block, in order.
    pub blocks: Vec<SealedBlock>,
    /// Tickets in the emission.
    pub tickets: u64,
    /// Winning tickets in the emission.
    pub winners: u64,
    /// Sum of all prizes, canonical.
    pub total_prizes: String,
    /// Lines of the audit log when it was sealed.
    pub log_lines: u64,
    /// SHA-256 of the log's last line then (or the log's genesis value).
    pub log_sha256: String,
    /// Program that sealed it.
    pub generator: String,
    /// When (UTC, RFC 3339).
    pub sealed: String,
    /// SHA-256 of the certificate of the time-stamping authority asked for a token over the
    /// seal (`emission.seal.json.tsr`), when the sealing run asked one.
    pub timestamp_authority_sha256: Option<String>,
}

/// A seal as it is written: its fields in their order, the emission's loose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SealWire {
    /// Always [`SEAL_FORMAT`].
    pub format: u32,
    /// Game id.
    pub game: String,
    /// Canonical stake.
    pub stake: String,
    /// Emission number.
    pub emission: u32,
    /// `test` or `production`, from the record.
    pub kind: crate::block::id::EmissionKind,
    /// SHA-256 of the emission record's bytes.
    pub record_sha256: String,
    /// SHA-256 of the game definition.
    pub game_definition_sha256: String,
    /// SHA-256 of the seed (the commitment).
    pub seed_sha256: String,
    /// SHA-256 of the signing public key.
    pub public_key_sha256: String,
    /// Every block, in order.
    pub blocks: Vec<SealedBlock>,
    /// Tickets in the emission.
    pub tickets: u64,
    /// Winning tickets in the emission.
    pub winners: u64,
    /// Sum of all prizes, canonical.
    pub total_prizes: String,
    /// Lines of the audit log when it was sealed.
    pub log_lines: u64,
    /// SHA-256 of the log's last line then (or the log's genesis value).
    pub log_sha256: String,
    /// Program that sealed it.
    pub generator: String,
    /// When (UTC, RFC 3339).
    pub sealed: String,
    /// SHA-256 of the certificate of the time-stamping authority asked for a token over the
    /// seal (`emission.seal.json.tsr`), when the sealing run asked one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_authority_sha256: Option<String>,
}

impl TryFrom<SealWire> for Seal {
    type Error = FieldError;

    fn try_from(w: SealWire) -> Result<Seal, FieldError> {
        let id = EmissionId::of_fields(&w.game, &w.stake, w.emission)?;
        Ok(Seal {
            format: w.format,
            id,
            kind: w.kind,
            record_sha256: w.record_sha256,
            game_definition_sha256: w.game_definition_sha256,
            seed_sha256: w.seed_sha256,
            public_key_sha256: w.public_key_sha256,
            blocks: w.blocks,
            tickets: w.tickets,
            winners: w.winners,
            total_prizes: w.total_prizes,
            log_lines: w.log_lines,
            log_sha256: w.log_sha256,
            generator: w.generator,
            sealed: w.sealed,
            timestamp_authority_sha256: w.timestamp_authority_sha256,
        })
    }
}

impl From<Seal> for SealWire {
    fn from(s: Seal) -> SealWire {
        SealWire {
            format: s.format,
            game: s.id.game().to_string(),
            stake: s.id.stake().to_string(),
            emission: s.id.number(),
            kind: s.kind,
            record_sha256: s.record_sha256,
            game_definition_sha256: s.game_definition_sha256,
            seed_sha256: s.seed_sha256,
            public_key_sha256: s.public_key_sha256,
            blocks: s.blocks,
            tickets: s.tickets,
            winners: s.winners,
            total_prizes: s.total_prizes,
            log_lines: s.log_lines,
            log_sha256: s.log_sha256,
            generator: s.generator,
            sealed: s.sealed,
            timestamp_authority_sha256: s.timestamp_authority_sha256,
        }
    }
}

impl Seal {
    /// The exact bytes written (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }
}

/// Complete blocks of `folder` (those whose manifest is there), by number.
pub fn complete_blocks(folder: &Path) -> Result<Vec<u32>, SealError> {
    let mut blocks = Vec::new();
    let entries = crate::fs::dir::list(folder).map_err(|source| SealError::List {
        folder: folder.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        if let Some((n, crate::block::BlockFile::Manifest)) = crate::block::parse_file_name(name) {
            blocks.push(n);
        }
    }
    blocks.sort_unstable();
    Ok(blocks)
}

/// `1-3, 7, 9-12`.
pub fn ranges(blocks: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        let start = blocks[i];
        let mut end = start;
        while i + 1 < blocks.len() && blocks[i + 1] == end + 1 {
            i += 1;
            end = blocks[i];
        }
        out.push(if start == end {
            format!("{start}")
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(", ")
}

/// Reads and parses the manifest of `block` in `folder`, with its SHA-256.
fn manifest(folder: &Path, block: u32) -> Result<(Manifest, String), SealError> {
    let path = folder.join(crate::block::manifest_name(block));
    parse_manifest(&path, read_bounded(&path, MAX_MANIFEST_BYTES)?)
}

/// [`manifest`], its signature checked with `key` first: the folder check reads every
/// manifest, those whose block is not verified (its CSV missing) included.
fn signed_manifest(
    folder: &Path,
    block: u32,
    key: &VerifyingKey,
) -> Result<(Manifest, String), SealError> {
    let path = folder.join(crate::block::manifest_name(block));
    let sig_path = folder.join(crate::block::signature_name(block));
    parse_manifest(
        &path,
        read_signed(&path, &sig_path, MAX_MANIFEST_BYTES, key)?,
    )
}

fn parse_manifest(path: &Path, bytes: Vec<u8>) -> Result<(Manifest, String), SealError> {
    let manifest = Manifest::from_bytes(&bytes).map_err(|error| SealError::NotManifest {
        path: path.to_path_buf(),
        error,
    })?;
    Ok((manifest, hex::encode(Sha256::digest(&bytes))))
}

/// What in a manifest disagrees with the emission record, if anything.
fn against_record(manifest: &Manifest, record: &Record, record_sha256: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, block: &str, emission: &str| {
        if block != emission {
            out.push(format!(
                "{what} {} where the emission has {}",
                shown(block.as_bytes()),
                emission
            ));
        }
    };
    differ("game", manifest.emission().game(), record.id.game());
    differ("stake", manifest.emission().stake(), record.id.stake());
    differ(
        "emission",
        &manifest.emission().number().to_string(),
        &record.id.number().to_string(),
    );
    differ(
        "game definition",
        &manifest.game_definition_sha256,
        &record.game_definition_sha256,
    );
    differ(
        "seed commitment",
        &manifest.seed_sha256,
        &record.seed_sha256,
    );
    differ(
        "signing key",
        &manifest.public_key_sha256,
        &record.public_key_sha256,
    );
    differ("kind", manifest.kind().as_str(), record.kind.as_str());
    // Formats 1 and 2 do not name the record; format 3 must name this one.
    if let Some(named) = &manifest.record_sha256 {
        if named != record_sha256 {
            out.push(format!(
                "it was made under the emission record of SHA-256 {}, and {RECORD_FILE} has SHA-256 {record_sha256}: the record was replaced, or the block belongs to another emission",
                shown(named.as_bytes())
            ));
        }
    }
    out
}

/// Seals the emission of `folder`, whose record is `record` (`record_bytes` as on disk), with
/// `planned` blocks. The caller holds the emission lock and has verified every block with
/// [`crate::verify::verify_block`] (`verified` tells which blocks; the others are refused).
/// `timestamp_authority_sha256` names the certificate of the TSA that will be asked for a token
/// over the seal (`seal --tsa-cert`). Returns the seal, or `None` if the same blocks were
/// already sealed.
pub fn seal(
    folder: &Path,
    record: &Record,
    record_bytes: &[u8],
    planned: u32,
    key: &SigningKey,
    timestamp_authority_sha256: Option<String>,
    verified: &dyn Fn(u32) -> bool,
) -> Result<Option<Seal>, SealError> {
    let present = complete_blocks(folder)?;
    let missing: Vec<u32> = (1..=planned)
        .filter(|b| present.binary_search(b).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(SealError::Missing {
            folder: folder.to_path_buf(),
            planned,
            missing,
        });
    }
    let extra: Vec<u32> = present.iter().copied().filter(|&b| b > planned).collect();
    if !extra.is_empty() {
        return Err(SealError::Extra {
            folder: folder.to_path_buf(),
            planned,
            extra,
        });
    }
    let record_sha256 = hex::encode(Sha256::digest(record_bytes));
    let mut blocks = Vec::with_capacity(planned as usize);
    let mut tickets: u64 = 0;
    let mut winners: u64 = 0;
    let mut total = Decimal::ZERO;
    for number in 1..=planned {
        if !verified(number) {
            return Err(SealError::NotVerified {
                folder: folder.to_path_buf(),
                block: number,
            });
        }
        let (manifest, sha) = manifest(folder, number)?;
        let wrong = against_record(&manifest, record, &record_sha256);
        if !wrong.is_empty() {
            return Err(SealError::ForeignBlock {
                folder: folder.to_path_buf(),
                block: number,
                wrong,
            });
        }
        let block_total = parse_canonical(&manifest.total_prizes)
            .ok_or(SealError::NotCanonical { block: number })?;
        tickets = tickets
            .checked_add(manifest.tickets)
            .ok_or(SealError::Overflow("ticket count"))?;
        winners = winners
            .checked_add(manifest.winners)
            .ok_or(SealError::Overflow("winner count"))?;
        total = total
            .checked_add(block_total)
            .ok_or(SealError::Overflow("total"))?;
        blocks.push(SealedBlock {
            block: number,
            manifest_sha256: sha,
            tickets: manifest.tickets,
            winners: manifest.winners,
            total_prizes: manifest.total_prizes.clone(),
        });
    }
    let chain = log::read_chain(folder, &key.verifying_key())?;
    let seal = Seal {
        format: SEAL_FORMAT,
        id: record.id.clone(),
        kind: record.kind,
        record_sha256: record_sha256.clone(),
        game_definition_sha256: record.game_definition_sha256.clone(),
        seed_sha256: record.seed_sha256.clone(),
        public_key_sha256: record.public_key_sha256.clone(),
        blocks,
        tickets,
        winners,
        total_prizes: canonical(total),
        log_lines: chain.lines,
        log_sha256: chain.last(),
        generator: crate::block::manifest::generator(),
        sealed: record::now(),
        timestamp_authority_sha256,
    };
    let path = folder.join(SEAL_FILE);
    if path.exists() {
        let existing = read_seal(folder, &key.verifying_key())?;
        if existing.blocks == seal.blocks && existing.record_sha256 == seal.record_sha256 {
            return Ok(None);
        }
        return Err(SealError::Resealed {
            folder: folder.to_path_buf(),
        });
    }
    let bytes = seal.to_bytes();
    write_signed(&path, &folder.join(SEAL_SIG_FILE), &bytes, key)?;
    Ok(Some(seal))
}

/// For an emission sealed already: checks that the seal's signature holds, that it lists the
/// blocks 1..=`planned`, and that each block's manifest is signed by `key` and has the SHA-256
/// the seal lists, without reading the blocks' CSVs (each manifest names its CSV's SHA-256, which
/// `verify` checks). Returns the blocks checked. Whoever changes a block after sealing changes
/// its manifest (caught here) or no longer matches it (caught by `verify`).
pub fn manifests_match_seal(
    folder: &Path,
    key: &VerifyingKey,
    planned: u32,
) -> Result<Vec<u32>, SealError> {
    let seal = read_seal(folder, key)?;
    let numbers: Vec<u32> = seal.blocks.iter().map(|b| b.block).collect();
    if !numbers.iter().copied().eq(1..=planned) {
        return Err(SealError::OtherBlocks {
            path: folder.join(SEAL_FILE),
            listed: numbers,
            planned,
        });
    }
    for sealed in &seal.blocks {
        let path = folder.join(crate::block::manifest_name(sealed.block));
        let bytes = read_signed(
            &path,
            &folder.join(crate::block::signature_name(sealed.block)),
            MAX_MANIFEST_BYTES,
            key,
        )?;
        let sha = hex::encode(Sha256::digest(&bytes));
        if sha != sealed.manifest_sha256 {
            return Err(SealError::ChangedAfterSealing {
                path,
                sha256: sha,
                sealed: sealed.manifest_sha256.clone(),
                block: sealed.block,
            });
        }
    }
    Ok(numbers)
}

/// Reads the seal of `folder` and checks its signature.
pub fn read_seal(folder: &Path, key: &VerifyingKey) -> Result<Seal, SealError> {
    let path = folder.join(SEAL_FILE);
    let bytes = read_signed(&path, &folder.join(SEAL_SIG_FILE), MAX_SEAL_BYTES, key)?;
    let seal: Seal = match parse_strict(&bytes, Layout::Pretty) {
        Ok(seal) => seal,
        Err(error) => return Err(SealError::NotSeal { path, error }),
    };
    if seal.format != SEAL_FORMAT {
        return Err(SealError::Format {
            path,
            format: seal.format,
        });
    }
    Ok(seal)
}

/// The emission-level verdict on a folder.
#[derive(Debug, Default, Clone)]
pub struct FolderReport {
    /// What is wrong.
    pub problems: Vec<Problem>,
    /// What a reader should know (not sealed yet).
    pub notes: Vec<String>,
    /// The record's kind, if there is a record.
    pub kind: Option<crate::block::id::EmissionKind>,
    /// The trusted timestamps that verified: one line each, for the minutes.
    pub timestamps: Vec<String>,
}

impl FolderReport {
    /// A problem with the emission folder: its code and message.
    pub fn problem(&mut self, code: Code, message: impl Into<String>) {
        self.problems.push(Problem::new(code, message));
    }
}

/// What [`check_folder`] is asked to accept, beyond what it always requires.
#[derive(Debug, Default, Clone)]
pub struct FolderCheck {
    /// An emission whose planned blocks are all present may lack its seal (`--allow-unsealed`):
    /// without this, a complete emission that is not sealed fails.
    pub allow_unsealed: bool,
    /// The SHA-256 (hex) the record must have (`--record-sha256`, from the ceremony's minutes).
    pub record_sha256: Option<String>,
    /// The SHA-256 (hex) the seal must have (`--seal-sha256`): the seal must be there.
    pub seal_sha256: Option<String>,
    /// The TSA certificates that tokens are checked against (`--tsa-cert`). A token present,
    /// or named by the record or the seal, is always checked: without a certificate it fails.
    pub tsa_certs: Vec<crate::emission::timestamp::TsaCert>,
    /// The blocks whose CSV was checked from a stream (`verify PACK`: the pack's CSVs are
    /// never written into the folder checked), `None` for a folder: then each manifest's CSV
    /// must be in the folder.
    pub streamed_blocks: Option<Vec<u32>>,
}

/// The emission's copy of its definition, when the record names it: there, a regular file of
/// at most [`crate::game::MAX_DEFINITION_BYTES`], with the record's `game_definition_sha256`.
fn check_definition(report: &mut FolderReport, folder: &Path, record: &Record) {
    if !record.game_definition_file {
        return;
    }
    let path = folder.join(crate::block::DEFINITION_FILE);
    match crate::fs::files::entry_exists(&path) {
        Ok(true) => {}
        Ok(false) => {
            report.problem(Code::EmissionDefinitionMissing, format!(
                "{}: missing; the record names it (game_definition_file), the emission's copy of its game definition (deleted?): restore it from the archive",
                shown_path(&path)
            ));
            return;
        }
        Err(e) => {
            report.problem(Code::EmissionDefinition, chained(&e));
            return;
        }
    }
    match read_bounded(&path, crate::game::MAX_DEFINITION_BYTES) {
        Ok(bytes) => {
            let found = hex::encode(Sha256::digest(&bytes));
            if found != record.game_definition_sha256 {
                report.problem(Code::EmissionDefinition, format!(
                    "{}: its SHA-256 is {found}, not the record's game_definition_sha256 {}: the emission's copy of its definition was replaced; restore it from the archive",
                    shown_path(&path),
                    shown(&record.game_definition_sha256)
                ));
            }
        }
        Err(e) => report.problem(Code::EmissionDefinition, chained(&e)),
    }
}

/// Every block the folder has a manifest of has its CSV (a regular file: its contents are
/// `verify`'s), and every block a signed line of the log says was made has its manifest: a
/// block deleted whole, or its CSV alone, is evidence removed. (The folder check counted blocks
/// by their manifests and the block checks ran on the CSVs found, so a deleted CSV was
/// checked by neither.)
fn check_blocks_there(
    report: &mut FolderReport,
    folder: &Path,
    present: &[u32],
    streamed: Option<&[u32]>,
    chain: Option<&Chain>,
) {
    for &number in present {
        let csv = folder.join(crate::block::csv_name(number));
        let there = match streamed {
            Some(streamed) => Ok(streamed.contains(&number)),
            // A regular file (a folder at a CSV's name was walked into, and its block never
            // checked), through a link or not: dangling, it is missing.
            None => match std::fs::metadata(&csv) {
                Ok(meta) if meta.is_file() => Ok(true),
                Ok(meta) => {
                    report.problem(
                        Code::EmissionBlockMissing,
                        format!(
                            "{}: is {}, not the block's tickets: the block was removed; restore it from the archive",
                            shown_path(&csv),
                            crate::fs::open::kind_name(meta.file_type())
                        ),
                    );
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(format!("{}: {e}", shown_path(&csv))),
            },
        };
        match there {
            Ok(true) => {}
            Ok(false) => report.problem(
                Code::EmissionBlockMissing,
                format!(
                    "{}: missing, and its manifest is here: the block's tickets were deleted; restore the block from the archive (or a pack of the emission)",
                    shown_path(&csv)
                ),
            ),
            Err(e) => report.problem(Code::EmissionBlockMissing, e),
        }
    }
    let Some(chain) = chain else { return };
    for (&number, &line) in &chain.blocks_made {
        if !present.contains(&number) {
            report.problem(
                Code::EmissionBlockMissing,
                format!(
                    "{}: block {number} is not here ({} missing), and the audit log says a run made it ({} line {line}): the block was deleted (or a run replacing it with --force was cut); restore it from the archive, or make it again with `emit` and the emission's seed and key",
                    shown_path(folder),
                    crate::block::manifest_name(number),
                    log::LOG_FILE
                ),
            );
        }
    }
}

/// The log is this emission's: its signed lines name this record (`record_sha256`), none
/// another. Lines of runs before the field was written name none; a record that names its
/// definition file (`game_definition_file`) was made since, so at least one signed line (the
/// run that made it, or the next one) names it: another emission's log signed by the same
/// key, put in this one's place, names another record, or none.
fn check_log_names_the_record(
    report: &mut FolderReport,
    folder: &Path,
    record: &Record,
    record_sha256: &str,
    chain: &Chain,
) {
    let path = folder.join(log::LOG_FILE);
    for (line, named) in &chain.records_named {
        if named != record_sha256 {
            report.problem(
                Code::EmissionLog,
                format!(
                    "{} line {line}: it names the record {}, and this emission's record ({RECORD_FILE}) is {record_sha256}: the line is another emission's (the log was replaced or spliced); restore the emission's own log from the archive",
                    shown_path(&path),
                    shown(named)
                ),
            );
            return;
        }
    }
    if record.game_definition_file && chain.records_named.is_empty() && chain.lines > chain.unsigned
    {
        report.problem(
            Code::EmissionLog,
            format!(
                "{}: no signed line names this emission's record (SHA-256 {record_sha256}), though every run made since this record's version names it: the log is not this emission's (replaced?); restore the emission's own log from the archive",
                shown_path(&path)
            ),
        );
    }
}

/// The reshares' custody files (`emission.shares-SET.json` and `.sig`): each one signed with
/// the key, of this emission and seed, and named with its SHA-256 by a signed `seed` line of
/// the log; and every custody file the log names is there, unchanged. (They were read only by
/// `emit`, for the set it was given: deleted, changed or added, verify said nothing.)
fn check_reshares(
    report: &mut FolderReport,
    folder: &Path,
    key: &VerifyingKey,
    record: &Record,
    chain: Option<&Chain>,
) {
    use crate::emission::ceremony::{Reshare, MAX_RESHARE_BYTES};
    let entries = match crate::fs::dir::list(folder) {
        Ok(entries) => entries,
        Err(e) => {
            report.problem(
                Code::EmissionCustody,
                format!("cannot list {}: {e}", shown_path(folder)),
            );
            return;
        }
    };
    let mut found: Vec<(String, String)> = Vec::new();
    for entry in entries {
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        let Some(stem) = name.strip_prefix("emission.shares-") else {
            continue;
        };
        if stem.ends_with(".json.sig") {
            let json = name.trim_end_matches(".sig");
            if !crate::fs::files::entry_exists(&folder.join(json)).unwrap_or(false) {
                report.problem(Code::EmissionCustody, format!(
                    "{}: the signature of a reshare's custody file, and no {json}: it was deleted; restore it from the archive",
                    shown_path(&entry.path)
                ));
            }
            continue;
        }
        if !stem.ends_with(".json") {
            continue;
        }
        let sig = folder.join(format!("{name}.sig"));
        let bytes = match read_signed(&entry.path, &sig, MAX_RESHARE_BYTES, key) {
            Ok(bytes) => bytes,
            Err(e) => {
                report.problem(Code::EmissionCustody, format!(
                    "{}: a reshare's custody file that is not signed with the emission's key, or was changed",
                    chained(&e)
                ));
                continue;
            }
        };
        match parse_strict::<Reshare>(&bytes, Layout::Pretty) {
            Ok(r) if r.emission == record.id && r.seed_sha256 == record.seed_sha256 => {}
            Ok(_) => report.problem(
                Code::EmissionCustody,
                format!(
                    "{}: a reshare of another emission or seed than this record's",
                    shown_path(&entry.path)
                ),
            ),
            Err(e) => report.problem(
                Code::EmissionCustody,
                format!(
                    "{}: not a valid custody file ({e})",
                    shown_path(&entry.path)
                ),
            ),
        }
        found.push((name.to_string(), hex::encode(Sha256::digest(&bytes))));
    }
    let Some(chain) = chain else { return };
    for (name, sha) in &found {
        if !chain
            .custody_recorded
            .iter()
            .any(|(_, f, s)| f == name && s == sha)
        {
            report.problem(Code::EmissionCustody, format!(
                "{}: no signed `seed` line of the audit log names this custody file with its SHA-256 {sha}: it was not written by a reshare of this emission, or it was changed",
                shown_path(&folder.join(name))
            ));
        }
    }
    for (line, file, sha) in &chain.custody_recorded {
        match found.iter().find(|(f, _)| f == file) {
            None => report.problem(Code::EmissionCustody, format!(
                "{}: the audit log records the reshare's custody file {file} (SHA-256 {sha}, {} line {line}), and it is missing: it was deleted; restore it from the archive",
                shown_path(folder),
                log::LOG_FILE
            )),
            Some((_, s)) if s != sha => report.problem(Code::EmissionCustody, format!(
                "{}: its SHA-256 is {s}, the custody file the audit log records ({} line {line}) {sha}: the file was replaced",
                shown_path(&folder.join(file)),
                log::LOG_FILE
            )),
            Some(_) => {}
        }
    }
}

/// The withdrawal records (`withdrawal-NNNN.json` and `.sig`): each one signed with the key,
/// of this emission (its record, seed and key), and recorded by a signed line of the log with
/// its SHA-256; and every withdrawal the log records is there, unchanged. A deleted withdrawal
/// puts a block withdrawn for cause back on sale at the next `load`.
fn check_withdrawals(
    report: &mut FolderReport,
    folder: &Path,
    key: &VerifyingKey,
    record: &Record,
    record_sha256: &str,
    chain: Option<&Chain>,
) {
    use crate::emission::withdrawal;
    let found = match withdrawal::read_all(folder, key) {
        Ok(found) => found,
        Err(e) => {
            report.problem(Code::EmissionWithdrawal, chained(&e));
            return;
        }
    };
    let binding = withdrawal::RecordBinding {
        emission: &record.id,
        seed_sha256: &record.seed_sha256,
        public_key_sha256: &record.public_key_sha256,
        record_sha256: Some(record_sha256),
    };
    for w in &found {
        if let Err(e) = withdrawal::check_for(w, &binding) {
            report.problem(Code::EmissionWithdrawal, chained(&e));
        }
    }
    let Some(chain) = chain else { return };
    for w in &found {
        let name = w
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !chain
            .withdrawals_recorded
            .iter()
            .any(|(_, file, sha)| *file == name && *sha == w.sha256)
        {
            report.problem(
                Code::EmissionWithdrawal,
                format!(
                    "{}: no signed line of the audit log records this withdrawal with its SHA-256 {}: it was not written by `withdraw` on this folder, or it was changed",
                    shown_path(&w.path),
                    w.sha256
                ),
            );
        }
    }
    for (line, file, sha) in &chain.withdrawals_recorded {
        let there = found.iter().find(|w| {
            w.path
                .file_name()
                .is_some_and(|n| n.to_string_lossy() == file.as_str())
        });
        match there {
            None => report.problem(
                Code::EmissionWithdrawal,
                format!(
                    "{}: the audit log records the withdrawal {file} (SHA-256 {sha}, {} line {line}), and it is missing: it was deleted, which would put what it withdrew back on sale; restore it from the archive",
                    shown_path(folder),
                    log::LOG_FILE
                ),
            ),
            Some(w) if w.sha256 != *sha => report.problem(
                Code::EmissionWithdrawal,
                format!(
                    "{}: its SHA-256 is {}, the withdrawal the audit log records ({} line {line}) {sha}: the file was replaced",
                    shown_path(&w.path),
                    w.sha256,
                    log::LOG_FILE
                ),
            ),
            Some(_) => {}
        }
    }
}

/// Checks an emission folder as a whole (not the blocks' contents: `verify_block` does that):
/// the record (which must be there) and its signature, `emission.pub.pem` against the record
/// and `key`, every manifest against the record, the audit log's chain, the seal (which must be
/// there when the log says it was made, or when every planned block is present) with its own
/// numbers recomputed from the manifests, and the pins of `check`. Only reads.
pub fn check_folder(folder: &Path, key: &VerifyingKey, check: &FolderCheck) -> FolderReport {
    let mut report = FolderReport::default();
    let name = folder.display();
    let record = match record::read(folder, key) {
        Ok(Some(found)) => found,
        Ok(None) => {
            report.problem(Code::EmissionRecordMissing, format!(
                "{name}: no emission record ({RECORD_FILE}): every emission folder has one, signed, from its first run; without it nothing says which emission its blocks belong to (deleted?)"
            ));
            return report;
        }
        Err(e) => {
            report.problem(Code::EmissionRecord, chained(&e));
            return report;
        }
    };
    let (record, record_bytes) = record;
    report.kind = Some(record.kind);
    let record_sha256 = hex::encode(Sha256::digest(&record_bytes));
    if let Some(pinned) = &check.record_sha256 {
        if !pinned.eq_ignore_ascii_case(&record_sha256) {
            report.problem(Code::EmissionRecordPin, format!(
                "{}: its SHA-256 is {record_sha256}, not the {pinned} given with --record-sha256 (the ceremony's minutes): this is not the record made then",
                folder.join(RECORD_FILE).display()
            ));
        }
    }
    check_public_key(&mut report, folder, &record, key);
    check_definition(&mut report, folder, &record);
    let stamped = check_token(
        &mut report,
        &folder.join(RECORD_FILE),
        &record_bytes,
        record.timestamp_authority_sha256.as_deref(),
        check,
    );
    check_beacon_after_stamp(&mut report, folder, &record, stamped);
    let present = match complete_blocks(folder) {
        Ok(p) => p,
        Err(e) => {
            report.problem(Code::EmissionFolder, chained(&e));
            return report;
        }
    };
    let mut manifests: BTreeMap<u32, (Manifest, String)> = BTreeMap::new();
    for &number in &present {
        match signed_manifest(folder, number, key) {
            Ok((manifest, sha)) => {
                let wrong = against_record(&manifest, &record, &record_sha256);
                if !wrong.is_empty() {
                    report.problem(
                        Code::EmissionForeignBlock,
                        format!(
                            "{name}: block {number} is not of this emission: {}",
                            wrong.join("; ")
                        ),
                    );
                }
                manifests.insert(number, (manifest, sha));
            }
            Err(e) => report.problem(Code::EmissionManifest, chained(&e)),
        }
    }
    let chain = match log::read_chain(folder, key) {
        Ok(c) => {
            // The run that writes the record appends its signed line (the ceremony, or the
            // first emit): a record with no signed line after it lost its log, which an insider
            // could otherwise delete to remove what it said.
            if c.lines == c.unsigned {
                report.problem(Code::EmissionLogMissing, format!(
                    "{}: {}, though the record is there: the audit log was deleted or emptied; restore it from the archive (if the run that made the record was killed before writing its line, run it again with the emission's key: it appends one)",
                    folder.join(log::LOG_FILE).display(),
                    if c.lines == 0 { "missing or empty" } else { "no signed line" }
                ));
            }
            if c.unsigned > 0 {
                report.notes.push(format!(
                    "{}: its first {} line(s), of seed runs, are not signed (seed takes no signing key yet); the next line, signed, names the hash of the last of them",
                    folder.join(log::LOG_FILE).display(),
                    c.unsigned
                ));
            }
            Some(c)
        }
        Err(e) => {
            report.problem(Code::EmissionLog, chained(&e));
            None
        }
    };
    check_blocks_there(
        &mut report,
        folder,
        &present,
        check.streamed_blocks.as_deref(),
        chain.as_ref(),
    );
    if let Some(chain) = &chain {
        check_log_names_the_record(&mut report, folder, &record, &record_sha256, chain);
    }
    check_reshares(&mut report, folder, key, &record, chain.as_ref());
    check_withdrawals(
        &mut report,
        folder,
        key,
        &record,
        &record_sha256,
        chain.as_ref(),
    );
    let mut closing = Vec::new();
    crate::emission::closing::check_in_folder(
        folder,
        key,
        &record,
        &manifests,
        chain.as_ref(),
        &mut closing,
    );
    for problem in closing {
        report.problem(Code::EmissionClosing, problem);
    }
    let seal_path = folder.join(SEAL_FILE);
    if !seal_path.exists() {
        let token = crate::emission::timestamp::token_path(&seal_path);
        if crate::fs::files::entry_exists(&token).unwrap_or(true) {
            report.problem(
                Code::EmissionSealMissing,
                format!(
                    "{}: a trusted timestamp of a seal, and no {SEAL_FILE}: the seal was deleted",
                    token.display()
                ),
            );
        }
        check_unsealed(
            &mut report,
            folder,
            &record,
            &present,
            chain.as_ref(),
            check,
        );
        return report;
    }
    let seal = match read_seal(folder, key) {
        Ok(s) => s,
        Err(e) => {
            report.problem(Code::EmissionSeal, chained(&e));
            return report;
        }
    };
    if let Some(pinned) = &check.seal_sha256 {
        match read_bounded(&seal_path, MAX_SEAL_BYTES) {
            Ok(bytes) => {
                let found = hex::encode(Sha256::digest(&bytes));
                if !pinned.eq_ignore_ascii_case(&found) {
                    report.problem(Code::EmissionSealPin, format!(
                        "{}: its SHA-256 is {found}, not the {pinned} given with --seal-sha256: this is not the seal kept",
                        seal_path.display()
                    ));
                }
            }
            Err(e) => report.problem(Code::EmissionSeal, chained(&e)),
        }
    }
    let _ = check_token(
        &mut report,
        &seal_path,
        &seal.to_bytes(),
        seal.timestamp_authority_sha256.as_deref(),
        check,
    );
    if seal.record_sha256 != record_sha256 {
        report.problem(
            Code::EmissionSealRecord,
            format!("{name}: the seal was made for another emission record than {RECORD_FILE}"),
        );
    }
    check_seal_numbers(&mut report, &seal_path, &seal, &record, &manifests);
    let sealed: BTreeMap<u32, &SealedBlock> = seal.blocks.iter().map(|b| (b.block, b)).collect();
    let missing: Vec<u32> = sealed
        .keys()
        .copied()
        .filter(|b| !manifests.contains_key(b))
        .collect();
    if !missing.is_empty() {
        report.problem(
            Code::EmissionSealedMissing,
            format!("{name}: sealed blocks missing: {}", ranges(&missing)),
        );
    }
    let extra: Vec<u32> = present
        .iter()
        .copied()
        .filter(|b| !sealed.contains_key(b))
        .collect();
    if !extra.is_empty() {
        report.problem(
            Code::EmissionNotSealed,
            format!(
                "{name}: blocks that are not in the seal: {}",
                ranges(&extra)
            ),
        );
    }
    for (number, (_, sha)) in &manifests {
        if let Some(block) = sealed.get(number) {
            if &block.manifest_sha256 != sha {
                report.problem(Code::EmissionManifestChanged, format!(
                    "{name}: block {number}'s manifest is not the one sealed (SHA-256 {sha}, sealed {})",
                    block.manifest_sha256
                ));
            }
        }
    }
    if let Some(chain) = chain {
        check_log_against_seal(&mut report, &chain, &seal, folder);
    }
    report
}

/// The trusted timestamp of `doc` (its bytes `bytes`), if it has one or says it asked one
/// (`pinned`): checked against `check.tsa_certs` ([`crate::emission::timestamp::check_document`]).
/// The token's time (seconds since 1970) when it verified.
fn check_token(
    report: &mut FolderReport,
    doc: &Path,
    bytes: &[u8],
    pinned: Option<&str>,
    check: &FolderCheck,
) -> Option<u64> {
    match crate::emission::timestamp::check_document(doc, bytes, pinned, &check.tsa_certs) {
        Ok(Some(checked)) => {
            report.timestamps.push(checked.line(doc));
            // The latest time the token proves: genTime plus the accuracy the TSA states.
            Some(checked.stamp.latest)
        }
        Ok(None) => {
            // Nothing signed names a token got later (`timestamp`), so its absence fails
            // nothing; but a reader who gave a TSA certificate is told there was nothing to
            // check, rather than left to think the date is proven.
            if !check.tsa_certs.is_empty() {
                report.notes.push(format!(
                    "{}: no trusted timestamp ({} absent): a TSA certificate was given, but nothing proves when it was made beyond its own date",
                    doc.display(),
                    crate::emission::timestamp::token_path(doc).display()
                ));
            }
            None
        }
        Err(problem) => {
            report.problem(Code::EmissionTimestamp, problem.to_string());
            None
        }
    }
}

/// A record that names a beacon round must have been fixed before the round was published.
/// The record's own `created` is the operator's word (and checked when the seed is derived);
/// its trusted timestamp is a third party's: a round published at or before the token's time
/// (`stamped`) may have been known when the secret was fixed (a ceremony run, or its token
/// asked, only once the round was out), so it fails. Without a token, a note says the order
/// rests on the record's own date.
fn check_beacon_after_stamp(
    report: &mut FolderReport,
    folder: &Path,
    record: &Record,
    stamped: Option<u64>,
) {
    use crate::emission::beacon::{round_time, round_time_text, CHAIN};
    let Some(named) = &record.beacon else {
        if record.kind == crate::block::id::EmissionKind::Production {
            report.notes.push(format!(
                "{}: its ceremony named no beacon round, so nothing but the custodians' word shows they did not choose among seeds (a ceremony names one with seed --beacon-round or --beacon-after)",
                folder.join(RECORD_FILE).display()
            ));
        }
        return;
    };
    let published = round_time(named.round);
    match (stamped, published) {
        (Some(stamp), Some(published)) if published > stamp => {}
        (Some(stamp), _) => report.problem(Code::EmissionBeaconTooEarly, format!(
            "{}: it names round {} of {CHAIN}, published at {}, and its trusted timestamp says it existed only by {}: the round was out before the record is proven to exist, so whoever made it may have known the round's signature and chosen the seed",
            folder.join(RECORD_FILE).display(),
            named.round,
            round_time_text(named.round).unwrap_or_else(|| "never".into()),
            crate::emission::beacon::rfc3339(stamp),
        )),
        (None, _) if record.timestamp_authority_sha256.is_none() => report.notes.push(format!(
            "{}: it names round {} of {CHAIN} and has no trusted timestamp: that the round was not yet published when it was made rests on its own date ({})",
            folder.join(RECORD_FILE).display(),
            named.round,
            shown(&record.created)
        )),
        // A token asked but missing or bad: a problem already.
        (None, _) => {}
    }
}

/// `emission.pub.pem` must be there, be the key the record names, and be `key` (the key given
/// with `--public-key`, or itself).
fn check_public_key(report: &mut FolderReport, folder: &Path, record: &Record, key: &VerifyingKey) {
    let path = folder.join(crate::block::PUBLIC_KEY_FILE);
    let found = match crate::block::keys::read_public_key(&path) {
        Ok(found) => found,
        Err(e) => {
            report.problem(
                Code::EmissionKey,
                format!("{}: {}", path.display(), chained(&e)),
            );
            return;
        }
    };
    let sha = match crate::block::keys::public_key_sha256(&found) {
        Ok(sha) => hex::encode(sha),
        Err(e) => {
            report.problem(
                Code::EmissionKey,
                format!("{}: {}", path.display(), chained(&e)),
            );
            return;
        }
    };
    if sha != record.public_key_sha256 {
        report.problem(Code::EmissionKeyReplaced, format!(
            "{}: its key (SHA-256 {sha}) is not the one the record names in public_key_sha256 ({}): the file was replaced",
            path.display(),
            record.public_key_sha256
        ));
    } else if found != *key {
        report.problem(
            Code::EmissionKeyNotGiven,
            format!(
                "{}: it is not the key given with --public-key",
                path.display()
            ),
        );
    }
}

/// An emission without its seal: fails when the log says a seal was made (it was deleted),
/// and when every planned block is present (unless `--allow-unsealed`); else a note.
fn check_unsealed(
    report: &mut FolderReport,
    folder: &Path,
    record: &Record,
    present: &[u32],
    chain: Option<&Chain>,
    check: &FolderCheck,
) {
    let name = folder.display();
    if check.seal_sha256.is_some() {
        report.problem(
            Code::EmissionSealMissing,
            format!(
                "{name}: no {SEAL_FILE}, but --seal-sha256 says the emission was sealed (deleted?)"
            ),
        );
    }
    if let Some(line) = chain.and_then(|c| c.seal_recorded) {
        report.problem(Code::EmissionSealMissing, format!(
            "{name}: the audit log records a seal ({} line {line}), but {SEAL_FILE} is missing: it was deleted, or that sealing run was killed before it wrote the seal (then run `emission-factory seal` again)",
            log::LOG_FILE
        ));
        return;
    }
    let complete = record
        .blocks
        .filter(|&planned| planned > 0 && (1..=planned).all(|b| present.binary_search(&b).is_ok()));
    match complete {
        Some(planned) if !check.allow_unsealed => report.problem(Code::EmissionUnsealed, format!(
            "{name}: all its {planned} planned blocks are here, but it is not sealed (no {SEAL_FILE}): a complete emission is sealed (emission-factory seal); give --allow-unsealed if it is not sealed yet on purpose"
        )),
        Some(planned) => report.notes.push(format!(
            "{name}: all its {planned} planned blocks are here, but it is not sealed (no {SEAL_FILE}); accepted with --allow-unsealed"
        )),
        None => report.notes.push(format!(
            "{name}: this emission is not sealed (no {SEAL_FILE}): nothing yet says which blocks make it whole; run `emission-factory seal` when all its blocks are made"
        )),
    }
}

/// The seal's own numbers, recomputed: its coordinates and kind against the record, each
/// sealed block once and in order, each block's counts against its manifest, the totals
/// against the blocks, the planned blocks, and its date.
fn check_seal_numbers(
    report: &mut FolderReport,
    path: &Path,
    seal: &Seal,
    record: &Record,
    manifests: &BTreeMap<u32, (Manifest, String)>,
) {
    let name = path.display();
    let mut wrong = |code: Code, what: String| report.problem(code, format!("{name}: {what}"));
    let mut differ = |what: &str, sealed: String, recorded: String| {
        if sealed != recorded {
            wrong(
                Code::EmissionSealIdentity,
                format!(
                    "the seal's {what} is {}, the record's {}",
                    shown(sealed.as_bytes()),
                    shown(recorded.as_bytes())
                ),
            );
        }
    };
    differ("game", seal.id.game().into(), record.id.game().into());
    differ("stake", seal.id.stake().into(), record.id.stake().into());
    differ(
        "emission",
        seal.id.number().to_string(),
        record.id.number().to_string(),
    );
    differ(
        "kind",
        seal.kind.as_str().into(),
        record.kind.as_str().into(),
    );
    differ(
        "game_definition_sha256",
        seal.game_definition_sha256.clone(),
        record.game_definition_sha256.clone(),
    );
    differ(
        "seed_sha256",
        seal.seed_sha256.clone(),
        record.seed_sha256.clone(),
    );
    differ(
        "public_key_sha256",
        seal.public_key_sha256.clone(),
        record.public_key_sha256.clone(),
    );
    let mut wrong = |code: Code, what: String| report.problem(code, format!("{name}: {what}"));
    let mut tickets: Option<u64> = Some(0);
    let mut winners: Option<u64> = Some(0);
    let mut total: Option<Decimal> = Some(Decimal::ZERO);
    let mut previous: Option<u32> = None;
    for block in &seal.blocks {
        let number = block.block;
        match previous {
            Some(p) if p == number => wrong(
                Code::EmissionSealBlocks,
                format!("block {number} is sealed twice"),
            ),
            Some(p) if p > number => wrong(
                Code::EmissionSealBlocks,
                format!("the sealed blocks are not in order ({number} after {p})"),
            ),
            _ => {}
        }
        previous = Some(number);
        tickets = tickets.and_then(|t| t.checked_add(block.tickets));
        winners = winners.and_then(|w| w.checked_add(block.winners));
        total = match parse_canonical(&block.total_prizes) {
            Some(amount) => total.and_then(|t| t.checked_add(amount)),
            None => {
                wrong(
                    Code::EmissionSealCounts,
                    format!(
                        "block {number}: total_prizes {} is not a canonical amount",
                        shown(block.total_prizes.as_bytes())
                    ),
                );
                None
            }
        };
        if let Some((manifest, _)) = manifests.get(&number) {
            if block.tickets != manifest.tickets {
                wrong(
                    Code::EmissionSealCounts,
                    format!(
                        "the seal says block {number} has {} tickets, its manifest {}",
                        block.tickets, manifest.tickets
                    ),
                );
            }
            if block.winners != manifest.winners {
                wrong(
                    Code::EmissionSealCounts,
                    format!(
                        "the seal says block {number} has {} winners, its manifest {}",
                        block.winners, manifest.winners
                    ),
                );
            }
            if block.total_prizes != manifest.total_prizes {
                wrong(
                    Code::EmissionSealCounts,
                    format!(
                        "the seal says block {number}'s prizes total {} €, its manifest {} €",
                        shown(block.total_prizes.as_bytes()),
                        shown(manifest.total_prizes.as_bytes())
                    ),
                );
            }
        }
    }
    if tickets != Some(seal.tickets) {
        wrong(
            Code::EmissionSealCounts,
            format!(
                "the seal's tickets are {}, its blocks add up to {}",
                seal.tickets,
                tickets.map_or_else(|| "more than a count holds".into(), |t| t.to_string())
            ),
        );
    }
    if winners != Some(seal.winners) {
        wrong(
            Code::EmissionSealCounts,
            format!(
                "the seal's winners are {}, its blocks add up to {}",
                seal.winners,
                winners.map_or_else(|| "more than a count holds".into(), |w| w.to_string())
            ),
        );
    }
    if total.map(canonical).as_deref() != Some(seal.total_prizes.as_str()) {
        wrong(
            Code::EmissionSealCounts,
            format!(
                "the seal's total_prizes is {} €, its blocks add up to {} €",
                shown(seal.total_prizes.as_bytes()),
                total.map_or_else(|| "more than an amount holds".into(), canonical)
            ),
        );
    }
    if let Some(planned) = record.blocks {
        let numbers: Vec<u32> = seal.blocks.iter().map(|b| b.block).collect();
        if numbers != (1..=planned).collect::<Vec<u32>>() {
            wrong(
                Code::EmissionSealBlocks,
                format!(
                    "the seal lists blocks {}, the record plans blocks 1-{planned}",
                    ranges(&numbers)
                ),
            );
        }
    }
    let created = humantime::parse_rfc3339(&record.created).ok();
    match humantime::parse_rfc3339(&seal.sealed) {
        Err(_) => wrong(
            Code::EmissionSealDate,
            format!(
                "sealed {} is not a UTC date and time (RFC 3339)",
                shown(seal.sealed.as_bytes())
            ),
        ),
        Ok(when) if created.is_some_and(|c| when < c) => wrong(
            Code::EmissionSealDate,
            format!(
                "sealed {}, before the emission's record was made ({})",
                seal.sealed,
                shown(record.created.as_bytes())
            ),
        ),
        Ok(when)
            if when > std::time::SystemTime::now() + std::time::Duration::from_secs(86_400) =>
        {
            wrong(
                Code::EmissionSealDate,
                format!("sealed {}, a date still to come", seal.sealed),
            )
        }
        Ok(_) => {}
    }
}

fn check_log_against_seal(report: &mut FolderReport, chain: &Chain, seal: &Seal, folder: &Path) {
    let at_seal = match seal.log_lines {
        0 => Some(log::GENESIS.to_string()),
        n => usize::try_from(n - 1)
            .ok()
            .and_then(|i| chain.hashes.get(i).cloned()),
    };
    if at_seal.as_deref() != Some(seal.log_sha256.as_str()) {
        report.problem(Code::EmissionLogChanged, format!(
            "{}: the audit log ({} lines) is not the one sealed ({} lines, last line SHA-256 {}): lines were deleted, edited or truncated",
            folder.join(log::LOG_FILE).display(),
            chain.lines,
            seal.log_lines,
            seal.log_sha256
        ));
    }
}

/// Reads the record of `folder` for a run that will seal it; errors if there is none.
pub fn record_for_sealing(
    folder: &Path,
    key: &VerifyingKey,
) -> Result<(Record, Vec<u8>), SealError> {
    record::read(folder, key)?.ok_or_else(|| SealError::NoRecord {
        folder: folder.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_keeps_its_fields_and_bytes_and_refuses_an_id_no_definition_could_give() {
        let seal = Seal {
            format: SEAL_FORMAT,
            id: "ruche-or/2/e0001".parse().unwrap(),
            kind: crate::block::id::EmissionKind::Test,
            record_sha256: "11".repeat(32),
            game_definition_sha256: "22".repeat(32),
            seed_sha256: "33".repeat(32),
            public_key_sha256: "44".repeat(32),
            blocks: vec![SealedBlock {
                block: 1,
                manifest_sha256: "55".repeat(32),
                tickets: 2,
                winners: 1,
                total_prizes: "1".into(),
            }],
            tickets: 2,
            winners: 1,
            total_prizes: "1".into(),
            log_lines: 3,
            log_sha256: "66".repeat(32),
            generator: "emission-factory 0.1.0 (generator 3)".into(),
            sealed: "2026-01-01T00:00:00Z".into(),
            timestamp_authority_sha256: None,
        };
        let bytes = seal.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("\"game\": \"ruche-or\",\n  \"stake\": \"2\",\n  \"emission\": 1,\n  \"kind\": \"test\","), "{text}");
        let again: Seal = parse_strict(&bytes, Layout::Pretty).unwrap();
        assert_eq!(again, seal);
        assert_eq!(again.to_bytes(), bytes);
        for (bad, said) in crate::block::id::bad_emission_fields(&text, "ruche-or", "2") {
            let e = parse_strict::<Seal>(bad.as_bytes(), Layout::Pretty).unwrap_err();
            assert!(e.to_string().contains(&said), "{e}");
        }
    }
}
