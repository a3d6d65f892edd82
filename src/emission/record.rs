//! The emission record (`emission.json` and its signature `emission.json.sig`): what makes an
//! emission one thing. Written by the first run of an emission, under the emission lock; every
//! later run (a resume, another block range, another machine) checks it and refuses to go on
//! when its seed, key, game definition or generator differs.

use crate::emission::{parse_strict, read_signed, write_signed, Layout};
use anyhow::{anyhow, bail, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name of the record in the emission folder.
pub const RECORD_FILE: &str = "emission.json";
/// File name of its signature (raw 64-byte Ed25519, as for manifests).
pub const RECORD_SIG_FILE: &str = "emission.json.sig";
/// The record's format number.
pub const RECORD_FORMAT: u32 = 1;
/// Largest record accepted (it is a few hundred bytes).
const MAX_RECORD_BYTES: u64 = 1 << 20;

/// Whether an emission may be sold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmissionKind {
    /// The seed was given or kept in clear (`--seed`, a plaintext seed file, the quick start):
    /// fine for CI, demonstrations and audits of the method, never for sale.
    Test,
    /// The seed was rebuilt from custody shares and never existed in clear on disk.
    Production,
}

impl EmissionKind {
    /// `test` or `production`.
    pub fn as_str(self) -> &'static str {
        match self {
            EmissionKind::Test => "test",
            EmissionKind::Production => "production",
        }
    }
}

/// Who holds the seed of a production emission: the share set, by public key, never by
/// content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Custody {
    /// The share set's random id (hex): a reshare makes a new one.
    pub share_set: String,
    /// Shares needed to rebuild the seed (k).
    pub threshold: u32,
    /// Shares made (n).
    pub shares: u32,
    /// The shares the first run rebuilt the seed from.
    pub used: Vec<UsedShare>,
}

/// One share used to rebuild the seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsedShare {
    /// The share's index (1..=n).
    pub index: u32,
    /// Its custodian's age recipient (public key).
    pub recipient: String,
    /// The share file's name.
    pub file: String,
    /// SHA-256 of the (encrypted) share file.
    pub file_sha256: String,
}

impl Custody {
    /// The record's view of a rebuilt share set.
    pub fn from_info(info: &crate::custody::ShareSetInfo) -> Custody {
        Custody {
            share_set: hex::encode(info.share_set),
            threshold: u32::from(info.threshold),
            shares: u32::from(info.shares),
            used: info
                .files
                .iter()
                .map(|f| UsedShare {
                    index: u32::from(f.index),
                    recipient: f.recipient.clone(),
                    file: f
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    file_sha256: hex::encode(f.file_sha256),
                })
                .collect(),
        }
    }
}

/// The emission record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Always [`RECORD_FORMAT`].
    pub format: u32,
    /// Game id.
    pub game: String,
    /// Game display name.
    pub game_name: String,
    /// SHA-256 of the game definition's bytes.
    pub game_definition_sha256: String,
    /// Canonical stake.
    pub stake: String,
    /// Emission number.
    pub emission: u32,
    /// Tickets per block.
    pub block_size: u64,
    /// Blocks the emission is planned to hold, when the first run said (`--emission-blocks`);
    /// the emission is sealed once all of them are made.
    pub blocks: Option<u32>,
    /// `test` or `production`.
    pub kind: EmissionKind,
    /// SHA-256 of the seed.
    pub seed_sha256: String,
    /// The custody shares of a production emission.
    pub custody: Option<Custody>,
    /// SHA-256 of the signing public key's DER (SPKI) bytes.
    pub public_key_sha256: String,
    /// Program name, version and generator version.
    pub generator: String,
    /// The generator version: the bytes of a block for a given seed.
    pub generator_version: u32,
    /// When the record was written (UTC, RFC 3339).
    pub created: String,
}

impl Record {
    /// The exact bytes written (and signed): pretty JSON and a final line end.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::emission::json_bytes(self)
    }

    /// Checks that a run described by `wanted` may join this emission: same game, definition,
    /// stake, emission, block size, seed, key, kind and generator. The error names both values.
    pub fn check_run(&self, wanted: &Record, path: &Path) -> Result<()> {
        let mut differences = Vec::new();
        let mut differ = |what: &str, here: String, given: String, fix: &str| {
            if here != given {
                differences.push(format!(
                    "{what}: the emission has {here}, this run has {given}{fix}"
                ));
            }
        };
        differ("game", self.game.clone(), wanted.game.clone(), "");
        differ(
            "game definition SHA-256",
            self.game_definition_sha256.clone(),
            wanted.game_definition_sha256.clone(),
            " (give --game with the definition the emission was made with)",
        );
        differ("stake", self.stake.clone(), wanted.stake.clone(), "");
        differ(
            "emission",
            self.emission.to_string(),
            wanted.emission.to_string(),
            "",
        );
        differ(
            "block size",
            self.block_size.to_string(),
            wanted.block_size.to_string(),
            "",
        );
        differ(
            "seed commitment (SHA-256 of the seed)",
            self.seed_sha256.clone(),
            wanted.seed_sha256.clone(),
            " (an emission has one seed: give this emission's seed or shares)",
        );
        differ(
            "signing key (SHA-256 of the public key)",
            self.public_key_sha256.clone(),
            wanted.public_key_sha256.clone(),
            " (give the emission's --signing-key)",
        );
        differ(
            "kind",
            self.kind.as_str().into(),
            wanted.kind.as_str().into(),
            " (a production emission's seed comes from custody shares only)",
        );
        differ(
            "generator version",
            self.generator_version.to_string(),
            wanted.generator_version.to_string(),
            &format!(
                " (the emission was made by {}; use that version to extend it)",
                self.generator
            ),
        );
        if let (Some(here), Some(given)) = (self.blocks, wanted.blocks) {
            differ(
                "planned blocks (--emission-blocks)",
                here.to_string(),
                given.to_string(),
                "",
            );
        }
        if differences.is_empty() {
            return Ok(());
        }
        bail!(
            "this run does not belong to the emission recorded in {}:\n  - {}\nNothing was written.",
            path.display(),
            differences.join("\n  - ")
        )
    }
}

/// Reads and checks the record of `folder` against `key`; `None` if there is none yet.
pub fn read(folder: &Path, key: &VerifyingKey) -> Result<Option<(Record, Vec<u8>)>> {
    let path = folder.join(RECORD_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = read_signed(&path, &folder.join(RECORD_SIG_FILE), MAX_RECORD_BYTES, key)?;
    let record: Record = parse_strict(&bytes, Layout::Pretty)
        .map_err(|e| anyhow!("{} is not a valid emission record: {e}", path.display()))?;
    if record.format != RECORD_FORMAT {
        bail!(
            "{}: record format {} is not one this program reads (it reads {RECORD_FORMAT})",
            path.display(),
            record.format
        );
    }
    Ok(Some((record, bytes)))
}

/// Writes the record of `folder` and its signature (the signature first, the record last, so a
/// record on disk always has its signature). Called under the emission lock.
pub fn write(folder: &Path, record: &Record, key: &SigningKey) -> Result<()> {
    write_signed(
        &folder.join(RECORD_FILE),
        &folder.join(RECORD_SIG_FILE),
        &record.to_bytes(),
        key,
    )
}

/// The current time, UTC, RFC 3339 to the second.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
