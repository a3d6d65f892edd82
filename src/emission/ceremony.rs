//! A production emission starts at the seed ceremony: `seed` draws the seed, hands it out as
//! k-of-n shares, and writes the emission's signed record, which names the share set (id, k,
//! n, every share file's SHA-256, recipient and custodian) and the seed's commitment. From then
//! on `emit` accepts only shares of a set a record signed by its own key names
//! ([`admit_shares`]), and refuses a production emission with no record: forging shares from
//! the custodians' *public* keys is no longer enough to choose an emission's seed; it takes
//! the signing key, and a new record shows in the ceremony's minutes (the record's SHA-256,
//! which `seed` prints and `verify --record-sha256` checks).
//!
//! A reshare (new custodians for the same seed, from k old shares) is recorded in a signed
//! custody file beside the record (`emission.shares-<set id>.json` and `.sig`): the record
//! itself, which every manifest may name by its hash, never changes.

use crate::block;
use crate::block::id::EmissionKind;
use crate::block::keys::{self, KeyError};
use crate::custody::{self, CustodyError, Recipient, SecretSeed, ShareSetInfo};
use crate::emission::beacon::BeaconError;
use crate::emission::lock::{LockError, LockFile};
use crate::emission::log::LogError;
use crate::emission::record::{self, Custody, CustodyMismatch, Record, RecordError, RECORD_FILE};
use crate::emission::{read_signed, write_signed, FileError};
use crate::fs::{files, FsError};
use crate::game::{Game, Stake};
use crate::json::StrictJsonError;
use crate::problem::chained;
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Why a seed ceremony (a new seed, a reshare) made nothing, why its log line was not written,
/// or why custody shares are not the ones the emission's ceremony made ([`admit_shares`]).
#[derive(Debug, thiserror::Error)]
pub enum CeremonyError {
    /// A file or folder of the emission could not be looked at or given its modes: see
    /// [`FsError`].
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The emission lock could not be taken (or a signal stopped the wait): see [`LockError`].
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The seed could not be drawn, split into shares, or rebuilt from the shares given: see
    /// [`CustodyError`].
    #[error(transparent)]
    Custody(#[from] CustodyError),
    /// The ceremony's key could not be hashed for the record: see [`KeyError`].
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The beacon round named (`--beacon-round`) is refused: see [`BeaconError`].
    #[error(transparent)]
    Beacon(#[from] BeaconError),
    /// The emission's record could not be read, made or written: see [`RecordError`].
    #[error(transparent)]
    Record(RecordError),
    /// A file of the emission folder could not be read, written or checked: a signed file (a
    /// reshare's custody file), the emission's public key or the game definition's copy, or
    /// the temporary files a killed run left: see [`FileError`].
    #[error(transparent)]
    Folder(FileError),
    /// The run's line could not be added to the emission's audit log: see [`LogError`].
    #[error(transparent)]
    Log(LogError),
    /// Custody shares were given for an emission with no record: only the ceremony makes a
    /// production emission's record, and shares with no record behind them could have been
    /// made by anyone holding the custodians' public keys. Nothing was written.
    #[error(
        "{} has no emission record: a production emission starts at the seed ceremony (`emission-factory seed --signing-key ...`), which writes the record naming its share set; shares without that record are refused. Nothing was written",
        .folder.display()
    )]
    NoRecord {
        /// The emission folder.
        folder: PathBuf,
    },
    /// A reshare was asked for an emission with no record: there is no seed to reshare.
    #[error(
        "{} has no emission record: a production emission starts with `seed` (a new seed and its record), and only then can its seed be reshared",
        .folder.display()
    )]
    NoRecordToReshare {
        /// The emission folder.
        folder: PathBuf,
    },
    /// A new seed was asked for an emission that has its record: an emission has one seed.
    #[error(
        "{} exists: this emission already has its record, so its seed was made already; an emission has one seed. To hand it to new custodians, use `seed --reshare` with k of its shares; for a new seed, choose another --emission",
        .record.display()
    )]
    RecordExists {
        /// The record.
        record: PathBuf,
    },
    /// The shares given for a reshare rebuild another seed than the one the record commits to.
    #[error(
        "the shares rebuild a seed whose SHA-256 is {}, not the emission's {recorded}",
        hex::encode(.rebuilt)
    )]
    OtherSeed {
        /// SHA-256 of the seed the shares rebuild.
        rebuilt: [u8; 32],
        /// The record's `seed_sha256`.
        recorded: String,
    },
    /// Custody shares were given for a test emission: they are for production emissions only.
    #[error(
        "{}: the emission's record is of a test emission; custody shares are for production emissions only",
        .record.display()
    )]
    TestEmission {
        /// The record.
        record: PathBuf,
    },
    /// The emission's record names no share set.
    #[error("{}: the emission's record names no share set", .record.display())]
    NoShareSet {
        /// The record.
        record: PathBuf,
    },
    /// The shares given are not of the set the record (or a reshare's custody file) names:
    /// the file, then how they differ.
    #[error("{}: {error}", .path.display())]
    NotTheSet {
        /// The record or the reshare's custody file.
        path: PathBuf,
        /// How the shares differ from the set (shown in the sentence).
        error: CustodyMismatch,
    },
    /// A reshare's custody file, signed, is not a custody file as this program writes it.
    #[error("{} is not a valid custody file", .path.display())]
    NotCustodyFile {
        /// The custody file.
        path: PathBuf,
        /// What the strict reading found.
        #[source]
        source: StrictJsonError,
    },
    /// A reshare's custody file names another emission than the record.
    #[error("{}: the reshare names the emission {named}, the record {record}", .path.display())]
    ReshareOtherEmission {
        /// The custody file.
        path: PathBuf,
        /// The emission it names (`<game>/<stake>/e<NNNN>`).
        named: String,
        /// The record's emission.
        record: String,
    },
    /// A reshare's custody file is of another seed than the record's.
    #[error(
        "{}: the reshare is of another seed than the emission's record",
        .path.display()
    )]
    ReshareOtherSeed {
        /// The custody file.
        path: PathBuf,
    },
}

impl CeremonyError {
    /// The [`CeremonyError::Record`] of an error of the record's, for `map_err`.
    fn record(error: RecordError) -> Self {
        CeremonyError::Record(error)
    }

    /// The [`CeremonyError::Folder`] of an error of the emission folder's files, for
    /// `map_err`.
    fn folder(error: FileError) -> Self {
        CeremonyError::Folder(error)
    }

    /// The [`CeremonyError::Log`] of an error of the audit log's, for `map_err`.
    fn log(error: LogError) -> Self {
        CeremonyError::Log(error)
    }
}

/// The [`CeremonyError::NotTheSet`] of shares that are not of the set `path` names, for
/// `map_err`.
fn not_the_set(path: &Path) -> impl FnOnce(CustodyMismatch) -> CeremonyError + '_ {
    move |error| CeremonyError::NotTheSet {
        path: path.to_path_buf(),
        error,
    }
}

/// The refusal of custody shares for an emission with no record: only the ceremony makes a
/// production emission's record, and shares with no record behind them could have been made by
/// anyone holding the custodians' public keys.
pub fn no_record(folder: &Path) -> CeremonyError {
    CeremonyError::NoRecord {
        folder: folder.to_path_buf(),
    }
}

/// What a ceremony is asked to do.
pub struct Ceremony<'a> {
    /// The game.
    pub game: &'a Game,
    /// The stake.
    pub stake: &'a Stake,
    /// The emission number.
    pub emission: u32,
    /// The emissions folder (`<out>`): the record goes into `<out>/<game>/<stake>/e<NNNN>/`.
    pub emissions: &'a Path,
    /// Blocks the emission will hold, fixed in the record (`--emission-blocks`).
    pub planned_blocks: Option<u32>,
    /// Whether a reshare's old share and identity files that others may read are refused
    /// or used (`--allow-insecure-key`; they are listed in the old set's `exposed`).
    pub exposure: custody::Exposure,
    /// SHA-256 of the certificate of the TSA that will be asked for a token over the record
    /// (`seed --tsa-cert`), written in the record.
    pub timestamp_authority_sha256: Option<String>,
    /// The future round of the beacon the seed waits for (`--beacon-round`), named in the
    /// record ([`crate::emission::beacon`]); `None`: the seed is the custodians' secret alone.
    pub beacon: Option<u64>,
}

/// What a ceremony made.
pub struct Made {
    /// The share set written.
    pub info: ShareSetInfo,
    /// The signed document that records it (the record, or a reshare's custody file).
    pub document: PathBuf,
    /// Its SHA-256, for the ceremony's minutes.
    pub document_sha256: [u8; 32],
    /// Temporary files a killed run left in the emission folder, removed under the lock
    /// ([`crate::emission::remove_stale`]): each file's path with how many.
    pub removed: Vec<(PathBuf, usize)>,
}

/// Appends the audit-log line of a `seed` run on the emission `folder` (issue 20 item 1: every
/// run leaves one, whatever its outcome; no seed, share or key in it), if the folder exists (a
/// refused new seed makes none), first giving the folder its modes (0700 and 0600, 0750 and
/// 0640 with `group`, as emit makes them). The line is signed with `key`, the ceremony's key,
/// when the run had one; its result names what a ceremony made: the signed document and its
/// SHA-256, the seed's commitment and the new share set, or the error. Without a key (a
/// `--check`, or options refused before the key was read) the line can be added only unsigned,
/// before any signed line: then a check that succeeded gets `Ok(Some(note))` to say it is not
/// in the log, and a run that failed keeps its own error (the line is not added). Anything
/// else that stops the line from being written is the error. The run's error is written in
/// the line with its causes, as the program prints it.
pub fn log_seed_run(
    folder: &Path,
    group: Option<u32>,
    key: Option<&SigningKey>,
    checking: bool,
    outcome: Result<Option<&Made>, &(dyn std::error::Error + 'static)>,
) -> Result<Option<String>, CeremonyError> {
    if !folder.is_dir() {
        return Ok(None);
    }
    files::emission_folder(folder, group)?;
    let mut entry = crate::emission::log::Entry::for_this_run("seed");
    match outcome {
        Err(e) => {
            entry.result = format!("error: {}", chained(e))
                .chars()
                .take(1000)
                .collect()
        }
        Ok(Some(made)) => entry.result = made_result(made),
        Ok(None) => {}
    }
    match key {
        Some(key) => crate::emission::log::append(folder, entry, key)
            .map(|_| None)
            .map_err(CeremonyError::log),
        None => match crate::emission::log::append_seed_line(folder, entry) {
            Ok(_) => Ok(None),
            Err(e) if checking && outcome.is_ok() => Ok(Some(format!(
                "note: this check is not in the emission's audit log: {}",
                chained(&e)
            ))),
            // A failed run wrote nothing: its own error is the one to say.
            Err(_) if outcome.is_err() => Ok(None),
            Err(e) => Err(CeremonyError::Log(e)),
        },
    }
}

/// The result of the log line of a ceremony that made `made`: `ok: ` then the signed document
/// (file name) and its SHA-256, the seed's commitment, the new share set's id, k and n (the
/// custodians' shares themselves never).
fn made_result(made: &Made) -> String {
    let file = made
        .document
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "ok: {file} (SHA-256 {}), seed_sha256 {}, share set {} ({} of {})",
        hex::encode(made.document_sha256),
        hex::encode(made.info.seed_sha256),
        hex::encode(made.info.share_set),
        made.info.threshold,
        made.info.shares
    )
}

/// A reshare's custody file: the new share set of an emission's seed, signed like the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reshare {
    /// Always 1.
    pub format: u32,
    /// The emission (written `<game>/<stake>/e<NNNN>`; a text that names no emission is
    /// refused at reading).
    #[serde(with = "crate::block::id::as_text")]
    pub emission: crate::block::id::EmissionId,
    /// The seed's commitment: the record's `seed_sha256`.
    pub seed_sha256: String,
    /// The share set whose shares rebuilt the seed for this reshare.
    pub from_share_set: String,
    /// The new set.
    pub custody: Custody,
    /// When it was made (UTC, RFC 3339).
    pub created: String,
}

/// The file name of the custody file of a reshare to share set `set` (hex).
pub fn reshare_file(set: &str) -> String {
    format!("emission.shares-{set}.json")
}

/// Largest custody file read.
pub const MAX_RESHARE_BYTES: u64 = 1 << 20;

impl Ceremony<'_> {
    fn folder(&self) -> PathBuf {
        crate::block::id::EmissionId::new(&self.game.id, self.stake, self.emission)
            .folder(self.emissions)
    }

    fn id(&self) -> crate::block::id::EmissionId {
        crate::block::id::EmissionId::new(&self.game.id, self.stake, self.emission)
    }

    /// A new emission: checks there is none yet, draws its seed, writes the share set into
    /// `out` for `recipients` (each with its custodian's label), then the emission's signed
    /// record and public key, signed with `signing_key` (the key its blocks will be signed
    /// with), all under the emission lock. Refuses an emission that already
    /// has a record, before drawing anything: an emission has one seed.
    pub fn new_seed(
        &self,
        signing_key: &SigningKey,
        threshold: u8,
        recipients: &[Recipient],
        labels: &[String],
        out: &Path,
    ) -> Result<Made, CeremonyError> {
        let folder = self.folder();
        let record_path = folder.join(RECORD_FILE);
        // Refused before any folder is made, and again under the lock.
        refuse_existing(&record_path)?;
        // The record's time first: a beacon round already published by then is refused
        // before anything is drawn or written.
        let created = record::created_now().map_err(CeremonyError::record)?;
        let beacon = self
            .beacon
            .map(|round| crate::emission::beacon::commit(round, &created))
            .transpose()?;
        let access = files::emission_folder(&folder, None)?;
        let lock = LockFile::emission(&folder)?;
        let _held = lock.acquire(&mut |_| {})?;
        let removed = crate::emission::remove_stale(&folder).map_err(CeremonyError::folder)?;
        refuse_existing(&record_path)?;
        crate::emission::write_or_check_public_key(&folder, &signing_key.verifying_key(), access)
            .map_err(CeremonyError::folder)?;
        // The record names the definition's copy: the copy is there before the record (and
        // before the seed is drawn, so that a copy of another definition refuses it first).
        crate::emission::write_or_check_definition(&folder, self.game, access)
            .map_err(CeremonyError::folder)?;
        let seed = SecretSeed::fresh()?;
        let info = custody::write_share_set(&seed, &self.id(), threshold, recipients, out)?;
        let record = Record {
            format: match beacon {
                Some(_) => record::RECORD_FORMAT_BEACON,
                None => record::RECORD_FORMAT,
            },
            id: crate::block::id::EmissionId::new(&self.game.id, self.stake, self.emission),
            game_name: self.game.name.clone(),
            game_definition_sha256: hex::encode(self.game.sha256),
            game_definition_file: true,
            block_size: self.game.block_size,
            blocks: self.planned_blocks,
            kind: EmissionKind::Production,
            seed_sha256: hex::encode(info.seed_sha256),
            custody: Some(Custody::from_made_set(&info, labels)),
            beacon,
            public_key_sha256: hex::encode(keys::public_key_sha256(&signing_key.verifying_key())?),
            generator: block::manifest::generator(),
            generator_version: block::manifest::GENERATOR_VERSION,
            created,
            timestamp_authority_sha256: self.timestamp_authority_sha256.clone(),
        };
        let bytes = record.to_bytes();
        record::write(&folder, &record, signing_key).map_err(CeremonyError::record)?;
        Ok(Made {
            info,
            document: record_path,
            document_sha256: Sha256::digest(&bytes).into(),
            removed,
        })
    }

    /// A reshare: rebuilds the seed from `shares` (which must be shares of a set the signed
    /// record or an earlier reshare names, and rebuild the record's commitment), splits it
    /// again for `recipients`, and records the new set in a signed custody file.
    #[allow(clippy::too_many_arguments)]
    pub fn reshare(
        &self,
        signing_key: &SigningKey,
        shares: &[PathBuf],
        identities: &[PathBuf],
        threshold: u8,
        recipients: &[Recipient],
        labels: &[String],
        out: &Path,
    ) -> Result<(ShareSetInfo, Made), CeremonyError> {
        let folder = self.folder();
        let public = signing_key.verifying_key();
        let lock = LockFile::emission(&folder)?;
        let _held = lock.acquire(&mut |_| {})?;
        let removed = crate::emission::remove_stale(&folder).map_err(CeremonyError::folder)?;
        let (seed, old) =
            custody::rebuild_seed_with(shares, identities, &self.id(), self.exposure)?;
        let (record, _) = record::read(&folder, &public)
            .map_err(CeremonyError::record)?
            .ok_or_else(|| CeremonyError::NoRecordToReshare {
                folder: folder.clone(),
            })?;
        admit_shares(&folder, &record, &Custody::from_info(&old), &public)?;
        if record.seed_sha256 != hex::encode(seed.commitment()) {
            return Err(CeremonyError::OtherSeed {
                rebuilt: seed.commitment(),
                recorded: record.seed_sha256.clone(),
            });
        }
        let info = custody::write_share_set(&seed, &self.id(), threshold, recipients, out)?;
        let reshare = Reshare {
            format: 1,
            emission: self.id(),
            seed_sha256: record.seed_sha256.clone(),
            from_share_set: hex::encode(old.share_set),
            custody: Custody::from_made_set(&info, labels),
            created: record::now(),
        };
        let bytes = crate::json::json_bytes(&reshare);
        let name = reshare_file(&hex::encode(info.share_set));
        let path = folder.join(&name);
        write_signed(
            &path,
            &folder.join(format!("{name}.sig")),
            &bytes,
            signing_key,
        )
        .map_err(CeremonyError::folder)?;
        Ok((
            old,
            Made {
                info,
                document: path,
                document_sha256: Sha256::digest(&bytes).into(),
                removed,
            },
        ))
    }
}

fn refuse_existing(record_path: &Path) -> Result<(), CeremonyError> {
    if files::entry_exists(record_path)? {
        return Err(CeremonyError::RecordExists {
            record: record_path.to_path_buf(),
        });
    }
    Ok(())
}

/// Checks that shares a run rebuilt its seed from (`rebuilt`, as [`Custody::from_info`] says)
/// are shares the emission's ceremony made: of the set the signed `record` names, or of a set
/// a reshare's custody file signed by the same key names. The error says why not.
pub fn admit_shares(
    folder: &Path,
    record: &Record,
    rebuilt: &Custody,
    public: &ed25519_dalek::VerifyingKey,
) -> Result<(), CeremonyError> {
    let record_path = folder.join(RECORD_FILE);
    if record.kind != EmissionKind::Production {
        return Err(CeremonyError::TestEmission {
            record: record_path,
        });
    }
    let Some(recorded) = &record.custody else {
        return Err(CeremonyError::NoShareSet {
            record: record_path,
        });
    };
    if recorded.share_set == rebuilt.share_set {
        return recorded.admits(rebuilt).map_err(not_the_set(&record_path));
    }
    // A reshare's set: its custody file, signed by the emission's key.
    let name = reshare_file(&rebuilt.share_set);
    let path = folder.join(&name);
    let valid_set =
        rebuilt.share_set.len() == 32 && rebuilt.share_set.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid_set || !files::entry_exists(&path)? {
        return recorded.admits(rebuilt).map_err(not_the_set(&record_path));
    }
    let bytes = read_signed(
        &path,
        &folder.join(format!("{name}.sig")),
        MAX_RESHARE_BYTES,
        public,
    )
    .map_err(CeremonyError::folder)?;
    // Read as strictly as the record: signed bytes, so exactly as this program writes them.
    let reshare: Reshare =
        crate::json::parse_strict(&bytes, crate::json::Layout::Pretty).map_err(|source| {
            CeremonyError::NotCustodyFile {
                path: path.clone(),
                source,
            }
        })?;
    if reshare.emission != record.id {
        return Err(CeremonyError::ReshareOtherEmission {
            path,
            named: reshare.emission.to_string(),
            record: record.id.to_string(),
        });
    }
    if reshare.seed_sha256 != record.seed_sha256 {
        return Err(CeremonyError::ReshareOtherSeed { path });
    }
    reshare.custody.admits(rebuilt).map_err(not_the_set(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error of the emission's other files keeps its sentence and its causes: printed as
    /// the program prints errors (anyhow's `{:#}`), it says exactly what it said alone.
    #[test]
    fn an_error_of_the_other_files_is_said_as_before() {
        let cause = || {
            crate::emission::record::RecordError::Fs(crate::fs::FsError::Io {
                action: "open",
                path: "e0001/emission.json".into(),
                source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
            })
        };
        let alone = chained(&cause());
        assert!(std::error::Error::source(&cause()).is_some(), "{alone}");
        let wrapped = anyhow::Error::new(CeremonyError::record(cause()));
        assert_eq!(format!("{wrapped:#}"), alone);
        assert_eq!(
            format!("{:#}", anyhow::Error::new(no_record(Path::new("out/g/2/e0001")))),
            "out/g/2/e0001 has no emission record: a production emission starts at the seed ceremony (`emission-factory seed --signing-key ...`), which writes the record naming its share set; shares without that record are refused. Nothing was written"
        );
    }
}
