//! What belongs to an emission as a whole, beyond its blocks: the locks that let several
//! processes (or machines, on a shared file system) work on one emission safely, the signed
//! emission record that makes one seed, one key and one generator the emission's, the audit
//! log, and the seal that lists every block of a finished emission.
//!
//! Each module has its own error type ([`FileError`] here, [`record::RecordError`],
//! [`log::LogError`], [`seal::SealError`], [`withdrawal::WithdrawalError`],
//! [`lock::LockError`], [`beacon::BeaconError`], [`timestamp::TimestampError`]);
//! [`EmissionError`] is any of them, for a caller that gathers several.

pub mod beacon;
pub mod ceremony;
pub mod closing;
pub mod lock;
pub mod log;
pub mod record;
pub mod seal;
pub mod timestamp;
pub mod withdrawal;

use crate::block::keys::{self, KeyError, SignatureError};
use crate::fs::files::{write_atomic, Access};
use crate::fs::open::ReadError;
use crate::fs::FsError;
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::path::{Path, PathBuf};

/// Any error of the emission module that a function called from outside it returns, for a
/// caller (emit, verify, load, pack) that gathers several: each variant is one module's type,
/// shown as it is (transparent).
#[derive(Debug, thiserror::Error)]
pub enum EmissionError {
    /// A file of the emission folder (see [`FileError`]).
    #[error(transparent)]
    File(#[from] FileError),
    /// A lock of the emission folder (see [`lock::LockError`]).
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    /// The emission record (see [`record::RecordError`]).
    #[error(transparent)]
    Record(#[from] record::RecordError),
    /// The audit log (see [`log::LogError`]).
    #[error(transparent)]
    Log(#[from] log::LogError),
    /// The seal (see [`seal::SealError`]).
    #[error(transparent)]
    Seal(#[from] seal::SealError),
    /// A withdrawal record (see [`withdrawal::WithdrawalError`]).
    #[error(transparent)]
    Withdrawal(#[from] withdrawal::WithdrawalError),
    // The errors of beacon.rs, ceremony.rs and timestamp/ (converted on their own): a variant
    // for each of their types, as for the ones above. `ceremony::CeremonyError` has none yet:
    // add `Ceremony(#[from] ceremony::CeremonyError)` here when it exists.
    /// A beacon round, or the seed derived from one (see [`beacon::BeaconError`]).
    #[error(transparent)]
    Beacon(#[from] beacon::BeaconError),
    /// A trusted timestamp (see [`timestamp::TimestampError`]).
    #[error(transparent)]
    Timestamp(#[from] timestamp::TimestampError),
}

/// Why a file of an emission folder (the record, the seal, a manifest, the copy of the game
/// definition, the public key...) was not read, written or accepted.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read whole: missing, not a regular file, larger than such a file
    /// may be...
    #[error("cannot read {}: {error}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ReadError,
    },
    /// A file could not be written, or its folder's access found out (see [`FsError`]).
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The public key could not be read or encoded (see [`KeyError`]).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A file's signature is not the key's signature of its bytes.
    #[error("{}: {error}", .sig_path.display())]
    Signature {
        /// The signature's file.
        sig_path: PathBuf,
        /// Why it is refused (shown in the sentence).
        error: SignatureError,
    },
    /// The emission's copy of its game definition is not the definition of this run.
    #[error(
        "{} (SHA-256 {}) is not this run's game definition (SHA-256 {}): the emission's copy of its definition was changed, or this run has another definition. Nothing was written",
        .path.display(),
        hex::encode(.found),
        hex::encode(.wanted)
    )]
    OtherDefinition {
        /// The emission's copy.
        path: PathBuf,
        /// Its SHA-256.
        found: [u8; 32],
        /// SHA-256 of this run's definition.
        wanted: [u8; 32],
    },
    /// `emission.pub.pem` holds another key than the run's signing key.
    #[error(
        "{} holds another public key (SHA-256 {}) than this run's signing key (SHA-256 {}): this emission was signed with another key. Give the same --signing-key, or another --emission.",
        .path.display(),
        hex::encode(.found),
        hex::encode(.wanted)
    )]
    OtherKey {
        /// `emission.pub.pem`.
        path: PathBuf,
        /// SHA-256 of the key it holds.
        found: [u8; 32],
        /// SHA-256 of the run's public key.
        wanted: [u8; 32],
    },
}

/// Reads a whole file of an emission folder that must not be larger than `max` bytes (refused
/// before it is read), naming it in errors.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, FileError> {
    crate::fs::open::read_at_most(path, max, "an emission file").map_err(|error| FileError::Read {
        path: path.to_path_buf(),
        error,
    })
}

pub use crate::untrusted::shown;

/// Writes `bytes` to `path` and their raw Ed25519 signature to `sig_path`, the signature
/// first, so that a file on disk always has its signature. Both get the access of the files
/// of their folder ([`Access::of_folder`]: 0600, or 0640 for a folder shared with a group).
pub fn write_signed(
    path: &Path,
    sig_path: &Path,
    bytes: &[u8],
    key: &SigningKey,
) -> Result<(), FileError> {
    let access = Access::of_folder(crate::fs::files::parent(path))?;
    let _publishing = crate::interrupt::critical();
    write_atomic(sig_path, &keys::sign(key, bytes), access)?;
    Ok(write_atomic(path, bytes, access)?)
}

/// The temporary files a killed run may have left in an emission folder, beside the files of
/// the emission as a whole (record, seal, their signatures, the public key).
pub const STAGED_FILES: &[&str] = &[
    record::RECORD_FILE,
    record::RECORD_SIG_FILE,
    seal::SEAL_FILE,
    seal::SEAL_SIG_FILE,
    crate::block::PUBLIC_KEY_FILE,
    crate::block::DEFINITION_FILE,
    closing::CLOSING_FILE,
    closing::CLOSING_SIG_FILE,
    "emission.json.tsr",
    "emission.json.tsq",
    "emission.seal.json.tsr",
    "emission.seal.json.tsq",
];

/// Removes the temporary files that a killed run left for the emission-wide files of `folder`
/// ([`STAGED_FILES`], and every reshare's custody file and its signature). Call it only while
/// holding the emission lock: a live run's temporary file would be removed too. Returns each
/// file's path (for custody files, the pattern of their names) with how many were removed.
pub fn remove_stale(folder: &Path) -> Result<Vec<(PathBuf, usize)>, FileError> {
    let mut removed = Vec::new();
    for name in STAGED_FILES {
        let path = folder.join(name);
        let count = crate::fs::files::remove_stale_temps(&path)?;
        if count > 0 {
            removed.push((path, count));
        }
    }
    let count = crate::fs::files::remove_stale_temps_of(folder, ".emission.shares-")?;
    if count > 0 {
        removed.push((folder.join(ceremony::reshare_file("*")), count));
    }
    Ok(removed)
}

/// Writes the emission's copy of its game definition ([`crate::block::DEFINITION_FILE`]), or
/// checks that the one there is `game`'s, byte for byte. Called under the emission lock.
pub fn write_or_check_definition(
    folder: &Path,
    game: &crate::game::Game,
    access: crate::fs::files::Access,
) -> Result<(), FileError> {
    use sha2::{Digest, Sha256};
    // Its stale temporary files were removed with the others ([`remove_stale`]), just before.
    let path = folder.join(crate::block::DEFINITION_FILE);
    if crate::fs::files::entry_exists(&path)? {
        let bytes = read_bounded(&path, crate::game::MAX_DEFINITION_BYTES)?;
        let found: [u8; 32] = Sha256::digest(&bytes).into();
        if found != game.sha256 {
            return Err(FileError::OtherDefinition {
                path,
                found,
                wanted: game.sha256,
            });
        }
        return Ok(());
    }
    Ok(write_atomic(&path, game.text.as_bytes(), access)?)
}

/// Reads `path` (at most `max` bytes) and checks its signature in `sig_path` against `key`.
pub fn read_signed(
    path: &Path,
    sig_path: &Path,
    max: u64,
    key: &VerifyingKey,
) -> Result<Vec<u8>, FileError> {
    let bytes = read_bounded(path, max)?;
    let sig = read_bounded(sig_path, 64)?;
    keys::check(key, &bytes, &sig).map_err(|error| FileError::Signature {
        sig_path: sig_path.to_path_buf(),
        error,
    })?;
    Ok(bytes)
}

/// Writes `emission.pub.pem` into `folder`, or checks that the one there is `public`'s: an
/// emission has one key. Called under the emission lock; removes the temporary files a killed
/// run left for it first, and returns how many.
pub fn write_or_check_public_key(
    folder: &Path,
    public: &VerifyingKey,
    access: crate::fs::files::Access,
) -> Result<usize, FileError> {
    let path = folder.join(crate::block::PUBLIC_KEY_FILE);
    let count = crate::fs::files::remove_stale_temps(&path)?;
    if path.exists() {
        let existing = keys::read_public_key(&path)?;
        if existing != *public {
            return Err(FileError::OtherKey {
                found: keys::public_key_sha256(&existing)?,
                wanted: keys::public_key_sha256(public)?,
                path,
            });
        }
        return Ok(count);
    }
    write_atomic(&path, keys::public_pem(public)?.as_bytes(), access)?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::chained;

    #[test]
    fn with_causes_says_what_anyhow_says() {
        let dir = tempfile::tempdir().unwrap();
        // A cause that is a source (the operating system's error, after the sentence), behind
        // a transparent variant.
        let missing = dir.path().join("missing").join("emission.json");
        let e = write_signed(
            &missing,
            &dir.path().join("missing").join("emission.json.sig"),
            b"{}",
            &SigningKey::from_bytes(&[7; 32]),
        )
        .unwrap_err();
        let shown = chained(&e);
        assert!(shown.contains(": "), "{shown}");
        assert_eq!(shown, format!("{:#}", anyhow::Error::from(e)));
        // A cause shown in the sentence: said once.
        let e = read_bounded(&missing, 10).unwrap_err();
        assert!(matches!(e, FileError::Read { .. }), "{e:?}");
        assert_eq!(chained(&e), e.to_string());
        assert_eq!(chained(&e), format!("{:#}", anyhow::Error::from(e)));
    }
}
