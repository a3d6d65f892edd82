//! What belongs to an emission as a whole, beyond its blocks: the locks that let several
//! processes (or machines, on a shared file system) work on one emission safely, the signed
//! emission record that makes one seed, one key and one generator the emission's, the audit
//! log, and the seal that lists every block of a finished emission.

pub mod lock;
pub mod log;
pub mod record;
pub mod seal;

use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::Path;

/// Reads a whole file that must not be larger than `max` bytes (refused before it is read).
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > max {
        bail!(
            "{} is larger than the {max} bytes such a file can hold: not one of ours",
            path.display()
        );
    }
    Ok(bytes)
}

pub use crate::untrusted::shown;
