//! `keygen`: an Ed25519 key pair in the PEM forms OpenSSL reads.

use super::{Exit, KeygenArgs};
use anyhow::{bail, Context, Result};
use emission_factory::block::keys;
use emission_factory::fs::files;
use emission_factory::fs::output::{self, OutputError, Replace};
use emission_factory::untrusted::shown_path;
use std::path::Path;

pub(super) fn run(args: KeygenArgs) -> Result<Exit> {
    // The folder holds the private key: made 0700, refused if others may write to it.
    files::private_dir(&args.out)?;
    let private = args.out.join("signing-key.pem");
    let public = args.out.join("public-key.pem");
    for path in [&private, &public] {
        // Only a regular file is ever replaced, with --force: a link, a FIFO, a socket or a
        // device at a key's name is refused, and so is any file without --force (both before
        // anything is written).
        match output::check(path, Replace::when(args.force)) {
            Err(OutputError::Exists(_)) => bail!(
                "{} already exists: keys are never overwritten (give --force to replace them)",
                shown_path(path)
            ),
            checked => checked?,
        }
    }
    let key = keys::generate()?;
    let private_pem = keys::private_pem(&key)?;
    let public_pem = keys::public_pem(&key.verifying_key())?;
    replace(&private, private_pem.as_bytes(), 0o600)?;
    replace(&public, public_pem.as_bytes(), 0o644)?;
    // The fingerprint the manifests, records and seals carry (public_key_sha256), for the
    // ceremony's minutes and to tell the key at a glance.
    let fingerprint = hex::encode(keys::public_key_sha256(&key.verifying_key())?);
    if args.quiet {
        outln!("{fingerprint}")?;
        return Ok(Exit::Ok);
    }
    outln!(
        "private key: {} (PKCS#8 PEM, mode 0600: keep it secret)\npublic key:  {} (SPKI PEM: give it to whoever verifies)\npublic_key_sha256: {fingerprint} (SHA-256 of its SPKI DER, as the manifests carry it)",
        shown_path(&private),
        shown_path(&public)
    )?;
    Ok(Exit::Ok)
}

/// Writes a new file at `path` with exactly `mode`, after removing the regular file there if
/// any (checked again: anything else is refused, a link is never followed): the new file is
/// created afresh, never written through.
fn replace(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    output::check(path, Replace::RegularFile)?;
    if files::entry_exists(path)? {
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the old {}", path.display()))?;
    }
    Ok(files::write_new(path, bytes, mode)?)
}
