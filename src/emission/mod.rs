//! What belongs to an emission as a whole, beyond its blocks: the locks that let several
//! processes (or machines, on a shared file system) work on one emission safely, the signed
//! emission record that makes one seed, one key and one generator the emission's, the audit
//! log, and the seal that lists every block of a finished emission.

pub mod lock;
pub mod log;
pub mod record;
pub mod seal;

use crate::block::files::{write_atomic, Access};
use crate::block::keys;
use anyhow::{anyhow, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::path::Path;

/// Reads a whole file of an emission folder that must not be larger than `max` bytes (refused
/// before it is read), naming it in errors.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    crate::untrusted::read_at_most(path, max, "an emission file")
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))
}

pub use crate::untrusted::shown;

/// The exact bytes of a signed JSON file (manifest, record, seal): pretty JSON, fields in
/// declaration order, and a final line end, so the same value always gives the same bytes.
pub fn json_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .expect("a value of strings, numbers and lists always serializes");
    bytes.push(b'\n');
    bytes
}

/// Writes `bytes` to `path` and their raw Ed25519 signature to `sig_path`, the signature
/// first, so that a file on disk always has its signature. Both get the access of the files
/// of their folder ([`Access::of_folder`]: 0600, or 0640 for a folder shared with a group).
pub fn write_signed(path: &Path, sig_path: &Path, bytes: &[u8], key: &SigningKey) -> Result<()> {
    let access = Access::of_folder(crate::block::files::parent(path))?;
    let _publishing = crate::interrupt::critical();
    write_atomic(sig_path, &keys::sign(key, bytes), access)?;
    write_atomic(path, bytes, access)
}

/// The temporary files a killed run may have left in an emission folder, beside the files of
/// the emission as a whole (record, seal, their signatures, the public key).
pub const STAGED_FILES: &[&str] = &[
    record::RECORD_FILE,
    record::RECORD_SIG_FILE,
    seal::SEAL_FILE,
    seal::SEAL_SIG_FILE,
    crate::block::PUBLIC_KEY_FILE,
];

/// Removes the temporary files that a killed run left for the emission-wide files of `folder`
/// ([`STAGED_FILES`]). Call it only while holding the emission lock: a live run's temporary
/// file would be removed too. Returns each file's path with how many were removed for it.
pub fn remove_stale(folder: &Path) -> Result<Vec<(std::path::PathBuf, usize)>> {
    let mut removed = Vec::new();
    for name in STAGED_FILES {
        let path = folder.join(name);
        let count = crate::block::files::remove_stale_temps(&path)?;
        if count > 0 {
            removed.push((path, count));
        }
    }
    Ok(removed)
}

/// Reads `path` (at most `max` bytes) and checks its signature in `sig_path` against `key`.
pub fn read_signed(path: &Path, sig_path: &Path, max: u64, key: &VerifyingKey) -> Result<Vec<u8>> {
    let bytes = read_bounded(path, max)?;
    let sig = read_bounded(sig_path, 64)?;
    keys::check(key, &bytes, &sig).map_err(|m| anyhow!("{}: {m}", sig_path.display()))?;
    Ok(bytes)
}
