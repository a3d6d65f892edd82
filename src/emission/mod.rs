//! What belongs to an emission as a whole, beyond its blocks: the locks that let several
//! processes (or machines, on a shared file system) work on one emission safely, the signed
//! emission record that makes one seed, one key and one generator the emission's, the audit
//! log, and the seal that lists every block of a finished emission.

pub mod beacon;
pub mod ceremony;
pub mod closing;
pub mod lock;
pub mod log;
pub mod record;
pub mod seal;
pub mod timestamp;
pub mod withdrawal;

use crate::block::keys;
use crate::fs::files::{write_atomic, Access};
use anyhow::{anyhow, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::path::Path;

/// Reads a whole file of an emission folder that must not be larger than `max` bytes (refused
/// before it is read), naming it in errors.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    crate::fs::open::read_at_most(path, max, "an emission file")
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))
}

pub use crate::untrusted::shown;

/// Writes `bytes` to `path` and their raw Ed25519 signature to `sig_path`, the signature
/// first, so that a file on disk always has its signature. Both get the access of the files
/// of their folder ([`Access::of_folder`]: 0600, or 0640 for a folder shared with a group).
pub fn write_signed(path: &Path, sig_path: &Path, bytes: &[u8], key: &SigningKey) -> Result<()> {
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
pub fn remove_stale(folder: &Path) -> Result<Vec<(std::path::PathBuf, usize)>> {
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
) -> Result<()> {
    use sha2::{Digest, Sha256};
    // Its stale temporary files were removed with the others ([`remove_stale`]), just before.
    let path = folder.join(crate::block::DEFINITION_FILE);
    if crate::fs::files::entry_exists(&path)? {
        let bytes = read_bounded(&path, crate::game::MAX_DEFINITION_BYTES)?;
        let found: [u8; 32] = Sha256::digest(&bytes).into();
        if found != game.sha256 {
            anyhow::bail!(
                "{} (SHA-256 {}) is not this run's game definition (SHA-256 {}): the emission's copy of its definition was changed, or this run has another definition. Nothing was written",
                path.display(),
                hex::encode(found),
                hex::encode(game.sha256)
            );
        }
        return Ok(());
    }
    Ok(write_atomic(&path, game.text.as_bytes(), access)?)
}

/// Reads `path` (at most `max` bytes) and checks its signature in `sig_path` against `key`.
pub fn read_signed(path: &Path, sig_path: &Path, max: u64, key: &VerifyingKey) -> Result<Vec<u8>> {
    let bytes = read_bounded(path, max)?;
    let sig = read_bounded(sig_path, 64)?;
    keys::check(key, &bytes, &sig).map_err(|m| anyhow!("{}: {m}", sig_path.display()))?;
    Ok(bytes)
}

/// Writes `emission.pub.pem` into `folder`, or checks that the one there is `public`'s: an
/// emission has one key. Called under the emission lock; removes the temporary files a killed
/// run left for it first, and returns how many.
pub fn write_or_check_public_key(
    folder: &Path,
    public: &VerifyingKey,
    access: crate::fs::files::Access,
) -> Result<usize> {
    let path = folder.join(crate::block::PUBLIC_KEY_FILE);
    let count = crate::fs::files::remove_stale_temps(&path)?;
    if path.exists() {
        let existing = keys::read_public_key(&path)?;
        if existing != *public {
            anyhow::bail!(
                "{} holds another public key (SHA-256 {}) than this run's signing key (SHA-256 {}): this emission was signed with another key. Give the same --signing-key, or another --emission.",
                path.display(),
                hex::encode(keys::public_key_sha256(&existing)?),
                hex::encode(keys::public_key_sha256(public)?)
            );
        }
        return Ok(count);
    }
    write_atomic(&path, keys::public_pem(public)?.as_bytes(), access)?;
    Ok(count)
}
