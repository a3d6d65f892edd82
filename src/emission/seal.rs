//! The emission seal (`emission.seal.json` and `emission.seal.json.sig`): the signed list of
//! every block of a finished emission, with its manifest's SHA-256 and counts, the emission's
//! totals, and the hash of the audit log's last line at sealing time.
//!
//! A seal is written once, under the emission lock, only when every planned block is present
//! and verifies, and no other block is there; from then on the emission takes no new block.
//! [`check_folder`] is what `verify` runs on an emission folder: the record, every manifest
//! against it, the log's chain, and the seal against the blocks on disk.

use crate::block::manifest::{Manifest, MAX_MANIFEST_BYTES};
use crate::emission::log::{self, Chain};
use crate::emission::record::{self, Record, RECORD_FILE};
use crate::emission::{read_bounded, read_signed, shown, write_signed};
use crate::money::{canonical, parse_canonical};
use anyhow::{anyhow, bail, Context, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

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

/// The seal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seal {
    /// Always [`SEAL_FORMAT`].
    pub format: u32,
    /// Game id.
    pub game: String,
    /// Canonical stake.
    pub stake: String,
    /// Emission number.
    pub emission: u32,
    /// `test` or `production`, from the record.
    pub kind: record::EmissionKind,
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
}

impl Seal {
    /// The exact bytes written (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::emission::json_bytes(self)
    }
}

/// Complete blocks of `folder` (those whose manifest is there), by number.
pub fn complete_blocks(folder: &Path) -> Result<Vec<u32>> {
    let mut blocks = Vec::new();
    let entries = crate::fs::dir::list(folder)
        .with_context(|| format!("cannot read folder {}", folder.display()))?;
    for entry in entries {
        let Some(name) = entry.name.to_str() else {
            continue;
        };
        let Some(digits) = name
            .strip_prefix("block-")
            .and_then(|n| n.strip_suffix(".manifest.json"))
        else {
            continue;
        };
        if digits.len() == 5 && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = digits.parse::<u32>() {
                blocks.push(n);
            }
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
fn manifest(folder: &Path, block: u32) -> Result<(Manifest, String)> {
    let path = folder.join(crate::block::manifest_name(block));
    let bytes = read_bounded(&path, MAX_MANIFEST_BYTES)?;
    let manifest = Manifest::from_bytes(&bytes)
        .map_err(|e| anyhow!("{}: not a valid manifest: {e}", path.display()))?;
    Ok((manifest, hex::encode(Sha256::digest(&bytes))))
}

/// What in a manifest disagrees with the emission record, if anything.
fn against_record(manifest: &Manifest, record: &Record) -> Vec<String> {
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
    differ("game", &manifest.game, &record.game);
    differ("stake", &manifest.stake, &record.stake);
    differ(
        "emission",
        &manifest.emission.to_string(),
        &record.emission.to_string(),
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
    out
}

/// Seals the emission of `folder`, whose record is `record` (`record_bytes` as on disk), with
/// `planned` blocks. The caller holds the emission lock and has verified every block with
/// [`crate::verify::verify_block`] (`verified` tells which blocks; the others are refused).
/// Returns the seal, or `None` if the same blocks were already sealed.
pub fn seal(
    folder: &Path,
    record: &Record,
    record_bytes: &[u8],
    planned: u32,
    key: &SigningKey,
    verified: &dyn Fn(u32) -> bool,
) -> Result<Option<Seal>> {
    let present = complete_blocks(folder)?;
    let missing: Vec<u32> = (1..=planned)
        .filter(|b| present.binary_search(b).is_err())
        .collect();
    if !missing.is_empty() {
        bail!(
            "cannot seal {}: {} of its {planned} blocks are missing: {}. Make them (emit --first-block K --blocks N), then seal.",
            folder.display(),
            missing.len(),
            ranges(&missing)
        );
    }
    let extra: Vec<u32> = present.iter().copied().filter(|&b| b > planned).collect();
    if !extra.is_empty() {
        bail!(
            "cannot seal {}: it holds blocks beyond its {planned} planned ones: {}",
            folder.display(),
            ranges(&extra)
        );
    }
    let mut blocks = Vec::with_capacity(planned as usize);
    let mut tickets: u64 = 0;
    let mut winners: u64 = 0;
    let mut total = Decimal::ZERO;
    for number in 1..=planned {
        if !verified(number) {
            bail!(
                "cannot seal {}: block {number} does not verify",
                folder.display()
            );
        }
        let (manifest, sha) = manifest(folder, number)?;
        let wrong = against_record(&manifest, record);
        if !wrong.is_empty() {
            bail!(
                "cannot seal {}: block {number} is not of this emission: {}",
                folder.display(),
                wrong.join("; ")
            );
        }
        let block_total = parse_canonical(&manifest.total_prizes)
            .ok_or_else(|| anyhow!("block {number}: total_prizes is not a canonical amount"))?;
        tickets = tickets
            .checked_add(manifest.tickets)
            .ok_or_else(|| anyhow!("the emission's ticket count overflows"))?;
        winners = winners
            .checked_add(manifest.winners)
            .ok_or_else(|| anyhow!("the emission's winner count overflows"))?;
        total = total
            .checked_add(block_total)
            .ok_or_else(|| anyhow!("the emission's total overflows"))?;
        blocks.push(SealedBlock {
            block: number,
            manifest_sha256: sha,
            tickets: manifest.tickets,
            winners: manifest.winners,
            total_prizes: manifest.total_prizes.clone(),
        });
    }
    let chain = log::read_chain(folder)?;
    let seal = Seal {
        format: SEAL_FORMAT,
        game: record.game.clone(),
        stake: record.stake.clone(),
        emission: record.emission,
        kind: record.kind,
        record_sha256: hex::encode(Sha256::digest(record_bytes)),
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
    };
    let path = folder.join(SEAL_FILE);
    if path.exists() {
        let existing = read_seal(folder, &key.verifying_key())?;
        if existing.blocks == seal.blocks && existing.record_sha256 == seal.record_sha256 {
            return Ok(None);
        }
        bail!(
            "{} is already sealed, with other blocks: a sealed emission is never changed",
            folder.display()
        );
    }
    let bytes = seal.to_bytes();
    write_signed(&path, &folder.join(SEAL_SIG_FILE), &bytes, key)?;
    Ok(Some(seal))
}

/// Reads the seal of `folder` and checks its signature.
pub fn read_seal(folder: &Path, key: &VerifyingKey) -> Result<Seal> {
    let path = folder.join(SEAL_FILE);
    let bytes = read_signed(&path, &folder.join(SEAL_SIG_FILE), MAX_SEAL_BYTES, key)?;
    let seal: Seal = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow!("{}: not a valid seal: {e}", path.display()))?;
    if seal.format != SEAL_FORMAT {
        bail!(
            "{}: seal format {} is not one this program reads (it reads {SEAL_FORMAT})",
            path.display(),
            seal.format
        );
    }
    Ok(seal)
}

/// The emission-level verdict on a folder.
#[derive(Debug, Default, Clone)]
pub struct FolderReport {
    /// What is wrong.
    pub problems: Vec<String>,
    /// What a reader should know (unsealed, no record).
    pub notes: Vec<String>,
    /// The record's kind, if there is a record.
    pub kind: Option<record::EmissionKind>,
}

/// Checks an emission folder as a whole (not the blocks' contents: `verify_block` does that):
/// the record and its signature, every manifest against the record, the audit log's chain, and
/// the seal against the blocks present. Only reads.
pub fn check_folder(folder: &Path, key: &VerifyingKey) -> FolderReport {
    let mut report = FolderReport::default();
    let name = folder.display();
    let record = match record::read(folder, key) {
        Ok(Some(found)) => found,
        Ok(None) => {
            report.notes.push(format!(
                "{name}: no emission record ({RECORD_FILE}): made before records existed, or not an emission folder; its blocks are checked one by one only"
            ));
            return report;
        }
        Err(e) => {
            report.problems.push(format!("{e:#}"));
            return report;
        }
    };
    let (record, record_bytes) = record;
    report.kind = Some(record.kind);
    let present = match complete_blocks(folder) {
        Ok(p) => p,
        Err(e) => {
            report.problems.push(format!("{e:#}"));
            return report;
        }
    };
    let mut manifests: BTreeMap<u32, String> = BTreeMap::new();
    for &number in &present {
        match manifest(folder, number) {
            Ok((manifest, sha)) => {
                let wrong = against_record(&manifest, &record);
                if !wrong.is_empty() {
                    report.problems.push(format!(
                        "{name}: block {number} is not of this emission: {}",
                        wrong.join("; ")
                    ));
                }
                manifests.insert(number, sha);
            }
            Err(e) => report.problems.push(format!("{e:#}")),
        }
    }
    let chain = match log::read_chain(folder) {
        Ok(c) => Some(c),
        Err(e) => {
            report.problems.push(format!("{e:#}"));
            None
        }
    };
    if !folder.join(SEAL_FILE).exists() {
        report.notes.push(format!(
            "{name}: this emission is not sealed (no {SEAL_FILE}): nothing yet says which blocks make it whole; run `emission-factory seal` when all its blocks are made"
        ));
        return report;
    }
    let seal = match read_seal(folder, key) {
        Ok(s) => s,
        Err(e) => {
            report.problems.push(format!("{e:#}"));
            return report;
        }
    };
    if seal.record_sha256 != hex::encode(Sha256::digest(&record_bytes)) {
        report.problems.push(format!(
            "{name}: the seal was made for another emission record than {RECORD_FILE}"
        ));
    }
    let sealed: BTreeMap<u32, &SealedBlock> = seal.blocks.iter().map(|b| (b.block, b)).collect();
    let missing: Vec<u32> = sealed
        .keys()
        .copied()
        .filter(|b| !manifests.contains_key(b))
        .collect();
    if !missing.is_empty() {
        report.problems.push(format!(
            "{name}: sealed blocks missing: {}",
            ranges(&missing)
        ));
    }
    let extra: Vec<u32> = manifests
        .keys()
        .copied()
        .filter(|b| !sealed.contains_key(b))
        .collect();
    if !extra.is_empty() {
        report.problems.push(format!(
            "{name}: blocks that are not in the seal: {}",
            ranges(&extra)
        ));
    }
    for (number, sha) in &manifests {
        if let Some(block) = sealed.get(number) {
            if &block.manifest_sha256 != sha {
                report.problems.push(format!(
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

fn check_log_against_seal(report: &mut FolderReport, chain: &Chain, seal: &Seal, folder: &Path) {
    let at_seal = match seal.log_lines {
        0 => Some(log::GENESIS.to_string()),
        n => usize::try_from(n - 1)
            .ok()
            .and_then(|i| chain.hashes.get(i).cloned()),
    };
    if at_seal.as_deref() != Some(seal.log_sha256.as_str()) {
        report.problems.push(format!(
            "{}: the audit log ({} lines) is not the one sealed ({} lines, last line SHA-256 {}): lines were deleted, edited or truncated",
            folder.join(log::LOG_FILE).display(),
            chain.lines,
            seal.log_lines,
            seal.log_sha256
        ));
    }
}

/// Reads the record of `folder` for a run that will seal it; errors if there is none.
pub fn record_for_sealing(folder: &Path, key: &VerifyingKey) -> Result<(Record, Vec<u8>)> {
    record::read(folder, key)?.ok_or_else(|| {
        anyhow!(
            "{} has no emission record ({RECORD_FILE}): only emissions made with records can be sealed",
            folder.display()
        )
    })
}
