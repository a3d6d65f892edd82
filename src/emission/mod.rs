//! What belongs to an emission as a whole, beyond its blocks: the locks that let several
//! processes (or machines, on a shared file system) work on one emission safely, the signed
//! emission record that makes one seed, one key and one generator the emission's, the audit
//! log, and the seal that lists every block of a finished emission.

pub mod lock;
pub mod log;
pub mod record;
pub mod seal;

use anyhow::{anyhow, Result};
use std::path::Path;

/// Reads a whole file of an emission folder that must not be larger than `max` bytes (refused
/// before it is read), naming it in errors.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    crate::untrusted::read_at_most(path, max, "an emission file")
        .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))
}

pub use crate::untrusted::shown;
