//! The emission record (`emission.json` and its signature `emission.json.sig`): what makes an
//! emission one thing. Written by the first run of an emission, under the emission lock; every
//! later run (a resume, another block range, another machine) checks it and refuses to go on
//! when its seed, key, game definition or generator differs.

use crate::block::id::{EmissionId, EmissionKind, FieldError};
use crate::block::keys::KeyError;
use crate::block::DEFINITION_FILE;
use crate::emission::{read_signed, write_signed, FileError};
use crate::fs::FsError;
use crate::json::{parse_strict, Layout, StrictJsonError};
use crate::problem::chained;
use crate::untrusted::shown;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Why an emission record was not read, written or accepted, or a run not let into its
/// emission.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The record, or its signature, could not be read or written, or its signature is not
    /// the key's (see [`FileError`]).
    #[error(transparent)]
    File(#[from] FileError),
    /// Whether the record is there could not be found out (see [`FsError`]).
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The emission's public key could not be encoded (see [`KeyError`]).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The record is not JSON of a record's fields.
    #[error("{} is not a valid emission record: {error}", .path.display())]
    NotJson {
        /// The record.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: StrictJsonError,
    },
    /// The record's fields are not a record's (its `game` or `stake` names no emission...).
    #[error("{} is not a valid emission record: {error}", .path.display())]
    Fields {
        /// The record.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: WireError,
    },
    /// A record of format 1 that names a beacon round, or of format 2 that names none.
    #[error(
        "{}: a record of format {format} {} a beacon round: it was altered",
        .path.display(),
        if *.beacon { "cannot name" } else { "must name" }
    )]
    BeaconFormat {
        /// The record.
        path: PathBuf,
        /// Its format.
        format: u32,
        /// Whether it names a beacon round.
        beacon: bool,
    },
    /// A format this program does not read.
    #[error(
        "{}: record format {format} is not one this program reads (it reads {RECORD_FORMAT} and {RECORD_FORMAT_BEACON})",
        .path.display()
    )]
    Format {
        /// The record.
        path: PathBuf,
        /// Its format.
        format: u32,
    },
    /// A run that differs from the emission's record: another seed, key, definition...
    #[error(
        "this run does not belong to the emission recorded in {}:\n  - {}\nNothing was written.",
        .path.display(),
        .differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  - ")
    )]
    OtherRun {
        /// The record.
        path: PathBuf,
        /// What differs, in the record's order.
        differences: Vec<RunDifference>,
    },
    /// The record was not checked before anything was made ([`peek_kind`]): damaged, edited,
    /// or not signed by the folder's key.
    #[error(
        "{}: {why}; restore emission.json, emission.json.sig and emission.pub.pem from the archive. Nothing was written",
        .path.display()
    )]
    Unverified {
        /// The record.
        path: PathBuf,
        /// Why.
        why: Unverified,
    },
    /// A folder with no record, where only the seed ceremony makes a production emission's
    /// (shares with no record behind them could have been made by anyone holding the
    /// custodians' public keys): `ceremony::no_record`'s refusal.
    #[error(
        "{} has no emission record: a production emission starts at the seed ceremony (`emission-factory seed --signing-key ...`), which writes the record naming its share set; shares without that record are refused. Nothing was written",
        .folder.display()
    )]
    NoRecord {
        /// The emission folder.
        folder: PathBuf,
    },
    /// `SOURCE_DATE_EPOCH` is set to something else than a time this program writes.
    #[error(
        "SOURCE_DATE_EPOCH is set but is not a number of seconds since 1970 up to year 9999: unset it, or give one"
    )]
    SourceDateEpoch,
}

/// One way a run differs from its emission's record ([`Record::check_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDifference {
    /// What differs, e.g. `stake`.
    pub what: &'static str,
    /// The record's value.
    pub here: String,
    /// The run's.
    pub given: String,
    /// What to do, after the values (empty, or ` (...)`).
    pub fix: String,
}

impl std::fmt::Display for RunDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let RunDifference {
            what,
            here,
            given,
            fix,
        } = self;
        write!(
            f,
            "{what}: the emission has {here}, this run has {given}{fix}"
        )
    }
}

/// Why [`peek_kind`] refused a record, with each cause shown in the sentence.
#[derive(Debug, thiserror::Error)]
pub enum Unverified {
    /// `emission.pub.pem` could not be read.
    #[error("the emission's key cannot be read ({})", chained(.0))]
    Key(KeyError),
    /// The record could not be read, or its signature is not the folder key's.
    #[error("{}", chained(.0))]
    File(FileError),
    /// The record, signed, is not a record this program reads.
    #[error("{}", chained(.0))]
    Record(Box<RecordError>),
    /// The record names another key than the folder's.
    #[error("it names the key {}, and emission.pub.pem is {key_sha256}", shown(.named))]
    OtherKey {
        /// The `public_key_sha256` the record names.
        named: String,
        /// SHA-256 of `emission.pub.pem`'s key.
        key_sha256: String,
    },
}

/// File name of the record in the emission folder.
pub const RECORD_FILE: &str = "emission.json";
/// File name of its signature (raw 64-byte Ed25519, as for manifests).
pub const RECORD_SIG_FILE: &str = "emission.json.sig";
/// The record's format number.
pub const RECORD_FORMAT: u32 = 1;
/// The format of a record that names a beacon round (`beacon`); format 1 names none.
pub const RECORD_FORMAT_BEACON: u32 = 2;
/// Largest record accepted (it is a few hundred bytes).
pub const MAX_RECORD_BYTES: u64 = 1 << 20;

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
    /// The shares the first run rebuilt the seed from (records made by `emit` before the
    /// ceremony wrote the record; empty in a ceremony's record).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub used: Vec<UsedShare>,
    /// Every share file of the set, as the ceremony (`seed`) made it: the shares `emit`
    /// accepts. Empty in records made before the ceremony wrote them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ShareEntry>,
}

/// One share file of a set, as the ceremony wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareEntry {
    /// The share's index (1..=n).
    pub index: u32,
    /// Its custodian's age recipient (public key).
    pub recipient: String,
    /// The custodian's name, from the `# comment` after the key in the recipients file ("" if
    /// none).
    pub label: String,
    /// The share file's name.
    pub file: String,
    /// SHA-256 of the (encrypted) share file.
    pub file_sha256: String,
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

/// Why the shares a run rebuilt its seed from are not shares of the recorded set
/// ([`Custody::admits`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CustodyMismatch {
    /// Another share set (its id, k or n differ).
    #[error("the shares given are of share set {given_set} ({given_threshold} of {given_shares}), but the emission's signed record names share set {set} ({threshold} of {shares}): they were not made by this emission's ceremony")]
    ShareSet {
        /// The set id of the shares given.
        given_set: String,
        /// Their k.
        given_threshold: u32,
        /// Their n.
        given_shares: u32,
        /// The recorded set id.
        set: String,
        /// The recorded k.
        threshold: u32,
        /// The recorded n.
        shares: u32,
    },
    /// A share used is none of the set's files.
    #[error("share {index} of {shares} ({file}, file SHA-256 {file_sha256}) is not one of the share files the emission's signed record lists: it was not made by this emission's ceremony")]
    UnknownShare {
        /// The share's index.
        index: u32,
        /// The recorded n.
        shares: u32,
        /// The share file's name, escaped.
        file: String,
        /// SHA-256 of the share file.
        file_sha256: String,
    },
}

impl Custody {
    /// The record of a share set the ceremony made: all n files, each with its custodian's
    /// `label` (`labels[i]` for share i + 1; "" where none).
    pub fn from_made_set(info: &crate::custody::ShareSetInfo, labels: &[String]) -> Custody {
        Custody {
            share_set: hex::encode(info.share_set),
            threshold: u32::from(info.threshold),
            shares: u32::from(info.shares),
            used: Vec::new(),
            files: info
                .files
                .iter()
                .map(|f| ShareEntry {
                    index: u32::from(f.index),
                    recipient: f.recipient.clone(),
                    label: labels
                        .get(usize::from(f.index).saturating_sub(1))
                        .cloned()
                        .unwrap_or_default(),
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

    /// Checks that the shares a run rebuilt its seed from (`rebuilt`, from
    /// [`Custody::from_info`]) are shares of this recorded set: the same set id, k and n, and
    /// every share used one of the set's files (index, recipient and file SHA-256). A record
    /// made before the ceremony listed its files is checked on the set id, k and n only.
    pub fn admits(&self, rebuilt: &Custody) -> Result<(), CustodyMismatch> {
        if self.share_set != rebuilt.share_set
            || self.threshold != rebuilt.threshold
            || self.shares != rebuilt.shares
        {
            return Err(CustodyMismatch::ShareSet {
                given_set: rebuilt.share_set.clone(),
                given_threshold: rebuilt.threshold,
                given_shares: rebuilt.shares,
                set: self.share_set.clone(),
                threshold: self.threshold,
                shares: self.shares,
            });
        }
        if self.files.is_empty() {
            return Ok(());
        }
        for used in &rebuilt.used {
            let known = self.files.iter().any(|f| {
                f.index == used.index
                    && f.recipient == used.recipient
                    && f.file_sha256 == used.file_sha256
            });
            if !known {
                return Err(CustodyMismatch::UnknownShare {
                    index: used.index,
                    shares: self.shares,
                    file: crate::untrusted::shown(&used.file),
                    file_sha256: used.file_sha256.clone(),
                });
            }
        }
        Ok(())
    }

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
            files: Vec::new(),
        }
    }
}

/// The emission record. Its emission is one [`EmissionId`], checked at reading: a record whose
/// `game` is not an id a definition may have, or whose `stake` is not a canonical price, is
/// refused. On disk the fields are those of [`RecordWire`], in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RecordWire", into = "RecordWire")]
pub struct Record {
    /// Always [`RECORD_FORMAT`].
    pub format: u32,
    /// The emission (fields `game`, `stake` and `emission`).
    pub id: EmissionId,
    /// Game display name.
    pub game_name: String,
    /// SHA-256 of the game definition's bytes.
    pub game_definition_sha256: String,
    /// The record names the emission's copy of its definition ([`DEFINITION_FILE`], written
    /// before the record): then that file must be in the folder with that SHA-256. Records made
    /// before the field was written do not name it (`false`).
    pub game_definition_file: bool,
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
    /// The future beacon round whose signature salts the seed (format 2 only; see
    /// [`crate::emission::beacon`]): `seed_sha256` then commits to the custodians' secret.
    pub beacon: Option<crate::emission::beacon::Commitment>,
    /// SHA-256 of the signing public key's DER (SPKI) bytes.
    pub public_key_sha256: String,
    /// Program name, version and generator version.
    pub generator: String,
    /// The generator version: the bytes of a block for a given seed.
    pub generator_version: u32,
    /// When the record was written (UTC, RFC 3339).
    pub created: String,
    /// SHA-256 of the certificate of the time-stamping authority asked for a token over the
    /// record (`emission.json.tsr`, src/timestamp/), when the run that made it asked one:
    /// without that token, the emission fails verify.
    pub timestamp_authority_sha256: Option<String>,
}

/// A record as it is written: its fields in their order, the emission's loose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordWire {
    /// Always [`RECORD_FORMAT`].
    pub format: u32,
    /// Game id.
    pub game: String,
    /// Game display name.
    pub game_name: String,
    /// SHA-256 of the game definition's bytes.
    pub game_definition_sha256: String,
    /// `emission.game.toml`, the emission's copy of its definition, named by records made since
    /// the field was written (absent in older ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_definition_file: Option<String>,
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
    /// The future beacon round whose signature salts the seed (format 2 only; see
    /// [`crate::emission::beacon`]): `seed_sha256` then commits to the custodians' secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beacon: Option<crate::emission::beacon::Commitment>,
    /// SHA-256 of the signing public key's DER (SPKI) bytes.
    pub public_key_sha256: String,
    /// Program name, version and generator version.
    pub generator: String,
    /// The generator version: the bytes of a block for a given seed.
    pub generator_version: u32,
    /// When the record was written (UTC, RFC 3339).
    pub created: String,
    /// SHA-256 of the certificate of the time-stamping authority asked for a token over the
    /// record (`emission.json.tsr`, src/timestamp/), when the run that made it asked one:
    /// without that token, the emission fails verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_authority_sha256: Option<String>,
}

/// Why a record's fields are not a record's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Its `game` or `stake` names no emission.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// Its `game_definition_file` is not the one name it may have (the value, escaped).
    #[error("game_definition_file {0} is not \"{DEFINITION_FILE}\", the only file a record names")]
    DefinitionFile(String),
}

impl TryFrom<RecordWire> for Record {
    type Error = WireError;

    fn try_from(w: RecordWire) -> Result<Record, WireError> {
        let id = EmissionId::of_fields(&w.game, &w.stake, w.emission)?;
        let game_definition_file = match w.game_definition_file.as_deref() {
            None => false,
            Some(DEFINITION_FILE) => true,
            Some(other) => return Err(WireError::DefinitionFile(shown(other))),
        };
        Ok(Record {
            format: w.format,
            id,
            game_name: w.game_name,
            game_definition_sha256: w.game_definition_sha256,
            game_definition_file,
            block_size: w.block_size,
            blocks: w.blocks,
            kind: w.kind,
            seed_sha256: w.seed_sha256,
            custody: w.custody,
            beacon: w.beacon,
            public_key_sha256: w.public_key_sha256,
            generator: w.generator,
            generator_version: w.generator_version,
            created: w.created,
            timestamp_authority_sha256: w.timestamp_authority_sha256,
        })
    }
}

impl From<Record> for RecordWire {
    fn from(r: Record) -> RecordWire {
        RecordWire {
            format: r.format,
            game: r.id.game().to_string(),
            game_name: r.game_name,
            game_definition_sha256: r.game_definition_sha256,
            game_definition_file: r.game_definition_file.then(|| DEFINITION_FILE.to_string()),
            stake: r.id.stake().to_string(),
            emission: r.id.number(),
            block_size: r.block_size,
            blocks: r.blocks,
            kind: r.kind,
            seed_sha256: r.seed_sha256,
            custody: r.custody,
            beacon: r.beacon,
            public_key_sha256: r.public_key_sha256,
            generator: r.generator,
            generator_version: r.generator_version,
            created: r.created,
            timestamp_authority_sha256: r.timestamp_authority_sha256,
        }
    }
}

impl Record {
    /// The exact bytes written (and signed): pretty JSON and a final line end.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }

    /// Checks that a run described by `wanted` may join this emission: same game, definition,
    /// stake, emission, block size, seed, key, kind and generator. The error names both values.
    pub fn check_run(&self, wanted: &Record, path: &Path) -> Result<(), RecordError> {
        let mut differences = Vec::new();
        let mut differ = |what: &'static str, here: String, given: String, fix: &str| {
            if here != given {
                differences.push(RunDifference {
                    what,
                    here,
                    given,
                    fix: fix.to_string(),
                });
            }
        };
        differ("game", self.id.game().into(), wanted.id.game().into(), "");
        differ(
            "game definition SHA-256",
            self.game_definition_sha256.clone(),
            wanted.game_definition_sha256.clone(),
            " (give --game with the definition the emission was made with)",
        );
        differ(
            "stake",
            self.id.stake().into(),
            wanted.id.stake().into(),
            "",
        );
        differ(
            "emission",
            self.id.number().to_string(),
            wanted.id.number().to_string(),
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
        // Fixed when the record is made: given again, it must be the same number.
        if let Some(given) = wanted.blocks {
            let here = match self.blocks {
                Some(here) => here.to_string(),
                None => "no planned block count".to_string(),
            };
            differ(
                "planned blocks (--emission-blocks)",
                here,
                given.to_string(),
                " (the planned block count is fixed when the record is made: leave out --emission-blocks, or start another --emission)",
            );
        }
        if differences.is_empty() {
            return Ok(());
        }
        Err(RecordError::OtherRun {
            path: path.to_path_buf(),
            differences,
        })
    }
}

/// The kind of the emission of `folder` as its record says, for a refusal before anything is
/// made (no seed or key file written yet, so the key the run will sign with is not known):
/// the record must verify against the folder's `emission.pub.pem`, which must be the key the
/// record names (`public_key_sha256`). [`read`] checks it again, against the run's key, under
/// the lock. `None` if there is no record. A record that is damaged or edited (its kind made
/// `test`, say, so that a run without shares drew a new seed into `private/` before the
/// signed read refused it) is refused here, before any secret is made.
pub fn peek_kind(folder: &Path) -> Result<Option<EmissionKind>, RecordError> {
    let path = folder.join(RECORD_FILE);
    if !crate::fs::files::entry_exists(&path)? {
        return Ok(None);
    }
    let refuse = |why: Unverified| RecordError::Unverified {
        path: path.clone(),
        why,
    };
    let key_path = folder.join(crate::block::PUBLIC_KEY_FILE);
    let key =
        crate::block::keys::read_public_key(&key_path).map_err(|e| refuse(Unverified::Key(e)))?;
    let bytes = read_signed(&path, &folder.join(RECORD_SIG_FILE), MAX_RECORD_BYTES, &key)
        .map_err(|e| refuse(Unverified::File(e)))?;
    let record = parse(&bytes, &path).map_err(|e| refuse(Unverified::Record(Box::new(e))))?;
    let key_sha256 = hex::encode(crate::block::keys::public_key_sha256(&key)?);
    if record.public_key_sha256 != key_sha256 {
        return Err(refuse(Unverified::OtherKey {
            named: record.public_key_sha256,
            key_sha256,
        }));
    }
    Ok(Some(record.kind))
}

/// Reads and checks the record of `folder` against `key`; `None` if there is none yet.
pub fn read(folder: &Path, key: &VerifyingKey) -> Result<Option<(Record, Vec<u8>)>, RecordError> {
    let path = folder.join(RECORD_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let bytes = read_signed(&path, &folder.join(RECORD_SIG_FILE), MAX_RECORD_BYTES, key)?;
    let record = parse(&bytes, &path)?;
    Ok(Some((record, bytes)))
}

/// Parses a record's bytes (`path` names it in errors): format 1 names no beacon round, format
/// 2 names one.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Record, RecordError> {
    let wire: RecordWire =
        parse_strict(bytes, Layout::Pretty).map_err(|error| RecordError::NotJson {
            path: path.to_path_buf(),
            error,
        })?;
    let record = Record::try_from(wire).map_err(|error| RecordError::Fields {
        path: path.to_path_buf(),
        error,
    })?;
    match (record.format, record.beacon.is_some()) {
        (RECORD_FORMAT, false) | (RECORD_FORMAT_BEACON, true) => Ok(record),
        (format @ (RECORD_FORMAT | RECORD_FORMAT_BEACON), beacon) => {
            Err(RecordError::BeaconFormat {
                path: path.to_path_buf(),
                format,
                beacon,
            })
        }
        (format, _) => Err(RecordError::Format {
            path: path.to_path_buf(),
            format,
        }),
    }
}

/// Reads the record of `folder` without checking its signature (for a replay, whose manifest,
/// signed, names the record by its SHA-256): its bytes, or `None` if there is none.
pub fn read_unsigned(folder: &Path) -> Result<Option<Vec<u8>>, RecordError> {
    let path = folder.join(RECORD_FILE);
    if !crate::fs::files::entry_exists(&path)? {
        return Ok(None);
    }
    Ok(Some(crate::emission::read_bounded(
        &path,
        MAX_RECORD_BYTES,
    )?))
}

/// Writes the record of `folder` and its signature (the signature first, the record last, so a
/// record on disk always has its signature). Called under the emission lock.
pub fn write(folder: &Path, record: &Record, key: &SigningKey) -> Result<(), RecordError> {
    Ok(write_signed(
        &folder.join(RECORD_FILE),
        &folder.join(RECORD_SIG_FILE),
        &record.to_bytes(),
        key,
    )?)
}

/// The time a new record is made: now, or the time `SOURCE_DATE_EPOCH` gives (seconds since
/// 1970, the reproducible-builds convention) when it is set, so that a known-answer test can
/// pin the bytes of a record and so of every manifest, which names the record by its hash. A
/// record's time is the operator's claim either way (FORMAT.md, "Emission record").
pub fn created_now() -> Result<String, RecordError> {
    match std::env::var_os("SOURCE_DATE_EPOCH") {
        None => Ok(now()),
        Some(value) => {
            let seconds: u64 = value
                .to_str()
                .and_then(|v| v.parse().ok())
                .filter(|s| *s <= 253_402_300_799)
                .ok_or(RecordError::SourceDateEpoch)?;
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
            Ok(humantime::format_rfc3339_seconds(time).to_string())
        }
    }
}

/// The current time, UTC, RFC 3339 to the second.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// A record for tests: a test emission of La ruche d'or at 0.5 €, two blocks of 100.
#[cfg(test)]
pub(crate) fn test_record() -> Record {
    Record {
        format: RECORD_FORMAT,
        id: "ruche-or/0.5/e0003".parse().unwrap(),
        game_name: "La ruche d'or".into(),
        game_definition_sha256: "11".repeat(32),
        game_definition_file: false,
        block_size: 100,
        blocks: Some(2),
        kind: EmissionKind::Test,
        seed_sha256: "22".repeat(32),
        custody: None,
        beacon: None,
        public_key_sha256: "33".repeat(32),
        generator: "emission-factory 0.1.0 (generator 3)".into(),
        generator_version: 3,
        created: "2026-01-01T00:00:00Z".into(),
        timestamp_authority_sha256: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        test_record()
    }

    #[test]
    fn a_record_keeps_its_fields_and_bytes_and_refuses_an_id_no_definition_could_give() {
        let bytes = record().to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        // The emission's fields stay where they were, loose.
        assert!(
            text.contains("\"game\": \"ruche-or\",\n  \"game_name\": \"La ruche d'or\",\n  \"game_definition_sha256\": \"")
                && text.contains("\"stake\": \"0.5\",\n  \"emission\": 3,\n  \"block_size\": 100,"),
            "{text}"
        );
        let again = parse(&bytes, Path::new("emission.json")).unwrap();
        assert_eq!(again, record());
        assert_eq!(again.to_bytes(), bytes);
        for (from, to, field) in [
            ("\"game\": \"ruche-or\"", "\"game\": \"../x\"", "game '"),
            ("\"stake\": \"0.5\"", "\"stake\": \"0.50\"", "stake '"),
        ] {
            let bad = text.replace(from, to);
            assert_ne!(bad, text);
            let e = parse(bad.as_bytes(), Path::new("emission.json"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is not a valid emission record") && e.contains(field),
                "{e}"
            );
        }
    }

    #[test]
    fn a_record_names_its_definition_file_after_its_hash_and_no_other_file() {
        let old = String::from_utf8(record().to_bytes()).unwrap();
        assert!(!old.contains("game_definition_file"), "{old}");
        let named = Record {
            game_definition_file: true,
            ..record()
        };
        let bytes = named.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let sha = format!("\"game_definition_sha256\": \"{}\",\n", "11".repeat(32));
        assert!(
            text.contains(&format!(
                "{sha}  \"game_definition_file\": \"emission.game.toml\",\n  \"stake\""
            )),
            "{text}"
        );
        let again = parse(&bytes, Path::new("emission.json")).unwrap();
        assert_eq!(again, named);
        assert_eq!(again.to_bytes(), bytes);
        for other in [
            "../../etc/passwd",
            "emission.json",
            "",
            "EMISSION.GAME.TOML",
        ] {
            let bad = text.replace(
                "\"game_definition_file\": \"emission.game.toml\"",
                &format!("\"game_definition_file\": \"{other}\""),
            );
            assert_ne!(bad, text);
            let e = parse(bad.as_bytes(), Path::new("emission.json"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is not a valid emission record")
                    && e.contains("game_definition_file")
                    && e.contains("the only file a record names"),
                "{e}"
            );
        }
    }
}
