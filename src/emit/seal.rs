//! Sealing an emission, whole: the policy every caller of the library gets, not only `seal`.
//!
//! [`seal`] checks that the folder is an emission with a signed record, resolves the key (the
//! lottery's, or the emission's one-time key in `OUT/private`), and under the emission lock
//! removes what a killed run left, checks the record against the key and the definition,
//! settles the planned block count against the record (a count given that differs is refused,
//! never ignored), verifies every present block in full (a sealed emission: its manifests
//! against the seal), appends the signed audit line the seal will cover, writes the seal, and
//! logs a failed sealing too. `cmd/seal.rs` only turns options into a [`Request`], asks the
//! trusted timestamp and prints.

use super::{Event, SealRunError};
use crate::block::id::EmissionId;
use crate::block::keys;
use crate::emission::lock::LockFile;
use crate::emission::log::{append_locked, Entry, CHECKING_SEAL, SEALING, SEALING_FAILED};
use crate::emission::record::{Record, RECORD_FILE};
use crate::emission::seal::{self as sealing, FolderCheck, FolderReport, Seal, SEAL_FILE};
use crate::game::Game;
use crate::money::parse_canonical;
use crate::progress::NoProgress;
use crate::verify::{verify_block, VerifyOptions};
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a sealing returns.
type Result<T, E = SealRunError> = std::result::Result<T, E>;

/// The key that signs the seal.
pub enum SealKey {
    /// The lottery's key file (`--signing-key`).
    File(PathBuf),
    /// The one-time key `emit` made for a test emission without `--signing-key`, in
    /// `OUT/private` beside the emission folder `OUT/<game>/<stake>/e<NNNN>`.
    OneTime,
}

/// A sealing, as asked.
pub struct Request {
    /// The emission folder, `OUT/<game>/<stake>/e<NNNN>`.
    pub folder: PathBuf,
    /// The key.
    pub key: SealKey,
    /// Blocks the emission holds, for a record that does not say (older records); refused when
    /// it differs from the record's.
    pub blocks: Option<u32>,
    /// The game definition, for a game that is not built in (its SHA-256 must be the record's).
    pub game: Option<Game>,
    /// A group to give the folder to (`--group`), as `emit` does.
    pub group: Option<u32>,
    /// The TSA certificate (SHA-256) this run asks a token of, if any: the seal pins it. With
    /// none, a record that asked one makes a seal that asks one of the same TSA.
    pub timestamp_pin: Option<String>,
    /// The public key the emission must be signed with (`--public-key`): a signing key whose
    /// public half is another is refused before anything is done, and once sealed the folder is
    /// checked as a whole against it, as `verify` checks one ([`Outcome::checked`]), so that
    /// sealing and verifying read each block once.
    pub public_key: Option<VerifyingKey>,
}

/// What a sealing did.
pub struct Outcome {
    /// The seal this run wrote; `None`: the emission was sealed already and its manifests match
    /// the seal.
    pub written: Option<Seal>,
    /// The blocks whose manifests matched the seal found (sealed already).
    pub matching: Vec<u32>,
    /// The emission's record.
    pub record: Record,
    /// The key's public half: the seal's.
    pub public: ed25519_dalek::VerifyingKey,
    /// With [`Request::public_key`]: the folder checked as a whole against it once sealed
    /// (record, key, definition, manifests, audit log, seal and its numbers: `verify`'s checks
    /// of an emission, the blocks' contents being those this run verified, or, sealed already,
    /// whose manifests matched the seal).
    pub checked: Option<FolderReport>,
    /// The error releasing the lock, if any (the seal is written: reported, not undone).
    pub release: Result<(), crate::emission::lock::LockError>,
}

/// Seals the emission of `request` with its blocks verified on `pool`; `on_event` hears of
/// waits and of what a killed run left. An error leaves no seal (and, after the lock is taken,
/// a signed log line saying the sealing failed).
pub fn seal(
    request: &Request,
    pool: &rayon::ThreadPool,
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome> {
    let folder = request.folder.as_path();
    if !folder.join(RECORD_FILE).exists() {
        return Err(SealRunError::NotEmissionFolder {
            folder: folder.to_path_buf(),
        });
    }
    let key_path = match &request.key {
        SealKey::File(path) => path.clone(),
        SealKey::OneTime => one_time_key(folder)?,
    };
    let key = keys::read_signing_key(&key_path)?;
    let public = key.verifying_key();
    if let Some(given) = &request.public_key {
        if *given != public {
            return Err(SealRunError::KeyMismatch {
                key_path,
                key_sha256: hex::encode(keys::public_key_sha256(&public)?),
                given_sha256: hex::encode(keys::public_key_sha256(given)?),
            });
        }
    }
    if let Some(gid) = request.group {
        crate::fs::files::emission_folder(folder, Some(gid))?;
    }
    let held = LockFile::emission(folder)?.acquire(&mut |m| on_event(Event::Waiting(m)))?;
    // Whoever left temporary files of the seal or the record no longer holds the lock.
    for (path, count) in crate::emission::remove_stale(folder)? {
        on_event(Event::StaleRemoved { path, count });
    }
    let checked = check_and_verify(request, &key, pool);
    let outcome = checked.and_then(|(record, record_bytes, planned, good, already, matching)| {
        // The log's line comes first, so that the seal covers it.
        let mut entry = Entry::for_this_run("seal");
        entry.blocks_kept = good.iter().copied().collect();
        entry.result = if already { CHECKING_SEAL } else { SEALING }.into();
        append_locked(folder, &mut entry, Some(&key))?;
        let written = sealing::seal(
            folder,
            &record,
            &record_bytes,
            planned,
            &key,
            request
                .timestamp_pin
                .clone()
                .or_else(|| record.timestamp_authority_sha256.clone()),
            &|b| good.contains(&b),
        );
        match written {
            Ok(written) => {
                // Under the lock, so that no other run's log line is read half-written.
                let checked = request
                    .public_key
                    .map(|given| sealing::check_folder(folder, &given, &FolderCheck::default()));
                Ok((written, matching, record, checked))
            }
            Err(e) => {
                let mut failed = Entry::for_this_run("seal");
                failed.result = format!("{SEALING_FAILED}: {}", crate::problem::chained(&e))
                    .chars()
                    .take(1000)
                    .collect();
                // The sealing error is the one to report; a log that fails too is named in it.
                let e = SealRunError::from(e);
                if let Err(l) = append_locked(folder, &mut failed, Some(&key)) {
                    return Err(SealRunError::FailureNotLogged {
                        log: crate::problem::chained(&l),
                        source: Box::new(e),
                    });
                }
                Err(e)
            }
        }
    });
    let release = held.release();
    match outcome {
        Ok((written, matching, record, checked)) => Ok(Outcome {
            written,
            matching,
            record,
            public,
            checked,
            release,
        }),
        Err(e) => Err(match release {
            Ok(()) => e,
            Err(r) => SealRunError::LockNotReleased {
                lock: crate::problem::chained(&r),
                source: Box::new(e),
            },
        }),
    }
}

/// What [`check_and_verify`] settles: the record and its bytes, the planned block count, the
/// blocks that verify (or match the seal), whether it was sealed already, the matching ones.
type Checked = (Record, Vec<u8>, u32, BTreeSet<u32>, bool, Vec<u32>);

/// Under the lock: the record against the key, the planned count, the definition and stake,
/// then every present block verified in full (or, sealed already, every manifest against the
/// seal: the CSVs are `verify`'s to read again).
fn check_and_verify(
    request: &Request,
    key: &SigningKey,
    pool: &rayon::ThreadPool,
) -> Result<Checked> {
    let folder = request.folder.as_path();
    let public = key.verifying_key();
    let (record, record_bytes) = sealing::record_for_sealing(folder, &public)?;
    let planned = match (record.blocks, request.blocks) {
        (Some(r), Some(a)) if r != a => {
            return Err(SealRunError::BlocksDiffer {
                given: a,
                record: r,
            })
        }
        (Some(r), _) => r,
        (None, Some(a)) => a,
        (None, None) => return Err(SealRunError::BlocksUnknown),
    };
    // The definition given, or the one kept in the folder (as `verify` reads it: refused if
    // changed), or the built-in game.
    let game = match &request.game {
        Some(g) => g.clone(),
        None => match crate::verify::folder_definition(folder, &record.game_definition_sha256)? {
            Some(kept) => kept,
            None => Game::builtin(record.id.game())?,
        },
    };
    if hex::encode(game.sha256) != record.game_definition_sha256 {
        return Err(SealRunError::DefinitionMismatch {
            source_file: game.source.clone(),
            sha256: hex::encode(game.sha256),
            record_sha256: record.game_definition_sha256.clone(),
        });
    }
    let price =
        parse_canonical(record.id.stake()).ok_or_else(|| SealRunError::StakeNotCanonical {
            stake: record.id.stake().to_string(),
        })?;
    game.stake(price)?;
    let already = folder.join(SEAL_FILE).exists();
    let (present, matching) = if already {
        (
            Vec::new(),
            sealing::manifests_match_seal(folder, &public, planned)?,
        )
    } else {
        (sealing::complete_blocks(folder)?, Vec::new())
    };
    let mut good: BTreeSet<u32> = matching.iter().copied().collect();
    let options = VerifyOptions {
        public_key: Some(public),
        game: Some(game),
        forms: false,
        seed: None,
        beacon: None,
    };
    let emission = &record.id;
    let mut failed = Vec::new();
    for &number in present.iter().filter(|&&b| b <= planned) {
        let csv = folder.join(emission.block(number).csv_name());
        let report = pool.install(|| verify_block(&csv, &options, &NoProgress));
        crate::interrupt::check()?;
        if report.ok() {
            good.insert(number);
        } else {
            failed.push(format!(
                "block {number}:\n    {}",
                crate::problem::joined(&report.problems, "\n    ")
            ));
        }
    }
    if !failed.is_empty() {
        return Err(SealRunError::BlocksBroken {
            folder: folder.to_path_buf(),
            failed: failed.join("\n  "),
        });
    }
    Ok((record, record_bytes, planned, good, already, matching))
}

/// The one-time key `emit` keeps for an emission made without --signing-key:
/// `<out>/private/<game>-<stake>-e<NNNN>.signing-key.pem`, from the folder
/// `<out>/<game>/<stake>/e<NNNN>`.
fn one_time_key(folder: &Path) -> Result<PathBuf> {
    let out = folder
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent);
    match (EmissionId::of_folder(folder), out) {
        (Some(id), Some(out)) => {
            let path = out
                .join("private")
                .join(format!("{}.signing-key.pem", id.file_stem()));
            if path.exists() {
                Ok(path)
            } else {
                Err(SealRunError::NoOneTimeKey { path })
            }
        }
        _ => Err(SealRunError::NotNamed {
            folder: folder.to_path_buf(),
        }),
    }
}
