//! `keygen`: an Ed25519 key pair in the PEM forms OpenSSL reads.

use super::{Exit, KeygenArgs};
use crate::block::files::{create_dir, write_atomic};
use crate::block::keys;
use anyhow::{bail, Result};

pub(super) fn run(args: KeygenArgs) -> Result<Exit> {
    create_dir(&args.out, 0o700)?;
    let private = args.out.join("signing-key.pem");
    let public = args.out.join("public-key.pem");
    for path in [&private, &public] {
        if path.exists() && !args.force {
            bail!(
                "{} already exists: keys are never overwritten (give --force to replace them)",
                path.display()
            );
        }
    }
    let key = keys::generate()?;
    write_atomic(&private, keys::private_pem(&key)?.as_bytes(), 0o600)?;
    write_atomic(
        &public,
        keys::public_pem(&key.verifying_key())?.as_bytes(),
        0o644,
    )?;
    outln!(
        "private key: {} (PKCS#8 PEM, mode 0600: keep it secret)\npublic key:  {} (SPKI PEM: give it to whoever verifies)",
        private.display(),
        public.display()
    )?;
    Ok(Exit::Ok)
}
