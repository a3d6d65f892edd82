//! A share file: a small JSON payload (FORMAT.md, "Seed share files") encrypted with age to one
//! custodian's X25519 public key, in age's ASCII armor. Outside the encryption there is nothing
//! but the age header, which does not even name the recipient.
//!
//! age gives confidentiality, not authenticity: anyone holding a custodian's public key can
//! encrypt a file to it. So nothing read here is trusted until the rebuilt seed matches the
//! commitment the shares carry (see `rebuild_seed`).

use super::shamir::{Share, LEN};
use super::CustodyError;
use age::armor::{ArmoredReader, ArmoredWriter, Format};
use age::x25519::{Identity, Recipient};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use zeroize::Zeroizing;

pub use crate::fs::files::Exposure;

/// The `format` field of the payload; raise it on any change of fields or meaning.
pub const FORMAT: &str = "emission-factory-seed-share/1";

/// Larger than any share file (about 700 bytes armored), small enough to read whole.
const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Larger than any payload (about 400 bytes).
const MAX_PAYLOAD_BYTES: u64 = 4096;
/// Larger than any identity file `age-keygen` writes.
const MAX_IDENTITY_BYTES: u64 = 64 * 1024;

/// The payload inside the encryption: fields in this order, as written by `serde_json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Payload {
    /// [`FORMAT`].
    pub format: String,
    /// `<game>/<stake>/e<NNNN>`.
    pub emission: String,
    /// 16 random bytes, hex, the same in every share of one split.
    pub share_set: String,
    /// k: shares needed.
    pub threshold: u8,
    /// n: shares made.
    pub shares: u8,
    /// This share's index, 1..=n, its x coordinate.
    pub index: u8,
    /// The age public key this file is encrypted to.
    pub recipient: String,
    /// SHA-256 of the seed, hex.
    pub seed_sha256: String,
    /// The share's 32 bytes, hex: f(index) for each byte of the seed.
    pub share: Zeroizing<String>,
}

/// A share file read, decrypted and checked on its own (not yet against the others).
pub(super) struct OpenedShare {
    /// The file.
    pub path: PathBuf,
    /// `<game>/<stake>/e<NNNN>`.
    pub emission: String,
    /// The split it belongs to.
    pub share_set: [u8; 16],
    /// k.
    pub threshold: u8,
    /// n.
    pub shares: u8,
    /// The public key it is encrypted to, checked against the identity that opened it.
    pub recipient: String,
    /// SHA-256 of the seed.
    pub commitment: [u8; 32],
    /// The share.
    pub share: Share,
    /// SHA-256 of the file's bytes.
    pub file_sha256: [u8; 32],
}

/// An identity with its public key, read from an identity file.
pub(super) struct KnownIdentity {
    pub identity: Identity,
    pub public: String,
}

/// Why a share could not be sealed ([`seal`]): what serde or age said.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The payload could not be written as JSON.
    #[error("{0}")]
    Payload(serde_json::Error),
    /// age refused the recipient.
    #[error("{0}")]
    Recipient(Box<age::EncryptError>),
    /// Encrypting or armoring failed.
    #[error("{0}")]
    Write(std::io::Error),
}

/// Serializes `payload` and encrypts it to `recipient`, armored.
pub(super) fn seal(payload: &Payload, recipient: &Recipient) -> Result<Vec<u8>, SealError> {
    // Reserved up front so that the buffer holding the plaintext never reallocates (which
    // would leave a copy behind that is not zeroized).
    let mut plain = Zeroizing::new(Vec::with_capacity(MAX_PAYLOAD_BYTES as usize));
    serde_json::to_writer_pretty(&mut *plain, payload).map_err(SealError::Payload)?;
    plain.push(b'\n');
    let encryptor =
        age::Encryptor::with_recipients(std::iter::once(recipient as &dyn age::Recipient))
            .map_err(|e| SealError::Recipient(Box::new(e)))?;
    let mut out = Vec::with_capacity(1024);
    let armor =
        ArmoredWriter::wrap_output(&mut out, Format::AsciiArmor).map_err(SealError::Write)?;
    let mut writer = encryptor.wrap_output(armor).map_err(SealError::Write)?;
    writer.write_all(&plain).map_err(SealError::Write)?;
    writer
        .finish()
        .and_then(|armor| armor.finish())
        .map_err(SealError::Write)?;
    Ok(out)
}

/// Reads a share file, decrypts it with whichever identity opens it, and checks its payload
/// on its own (format, ranges, hex, recipient = the identity that opened it).
///
/// The file gets the checks of every secret file ([`read_checked`]); its mode is added to
/// `exposed` when group or others may read it and `exposure` let it through.
pub(super) fn open(
    path: &Path,
    identities: &[KnownIdentity],
    exposure: Exposure,
    exposed: &mut Vec<(PathBuf, u32)>,
) -> Result<OpenedShare, CustodyError> {
    let bytes =
        read_checked(path, "share file", MAX_FILE_BYTES, exposure, exposed).map_err(|source| {
            CustodyError::ReadShare {
                path: path.to_path_buf(),
                error: source,
            }
        })?;
    let damaged = |reason: String| CustodyError::Damaged {
        path: path.to_path_buf(),
        reason,
    };
    let mut opened = None;
    for known in identities {
        let decryptor = age::Decryptor::new_buffered(ArmoredReader::new(&bytes[..]))
            .map_err(|e| damaged(e.to_string()))?;
        match decryptor.decrypt(std::iter::once(&known.identity as &dyn age::Identity)) {
            Ok(reader) => {
                opened = Some((reader, known));
                break;
            }
            Err(age::DecryptError::NoMatchingKeys) => continue,
            Err(e) => return Err(damaged(e.to_string())),
        }
    }
    let Some((reader, known)) = opened else {
        return Err(CustodyError::NoMatchingIdentity(path.to_path_buf()));
    };
    let mut plain = Zeroizing::new(Vec::with_capacity(MAX_PAYLOAD_BYTES as usize + 1));
    // A failed chunk authentication (a flipped byte, a cut file) shows up here.
    reader
        .take(MAX_PAYLOAD_BYTES + 1)
        .read_to_end(&mut plain)
        .map_err(|e| damaged(e.to_string()))?;
    let bad = |reason: String| CustodyError::Payload {
        path: path.to_path_buf(),
        reason,
    };
    if plain.len() as u64 > MAX_PAYLOAD_BYTES {
        return Err(bad(format!("more than {MAX_PAYLOAD_BYTES} bytes")));
    }
    // serde_json's messages can quote the offending text, which may be the share: only its
    // position and kind are reported.
    let payload: Payload = serde_json::from_slice(&plain).map_err(|e| {
        bad(format!(
            "not the expected JSON object: {:?} error at line {}, column {}",
            e.classify(),
            e.line(),
            e.column()
        ))
    })?;
    if payload.format != FORMAT {
        return Err(bad(format!(
            "format '{}', this program reads '{FORMAT}'",
            cut(&payload.format)
        )));
    }
    if payload.threshold < 2
        || payload.threshold > payload.shares
        || payload.index == 0
        || payload.index > payload.shares
    {
        return Err(bad(format!(
            "share {} of {} with threshold {} is out of range",
            payload.index, payload.shares, payload.threshold
        )));
    }
    let mut share_set = [0u8; 16];
    hex_field(&payload.share_set, &mut share_set)
        .map_err(|()| bad("share_set is not 32 hex digits".into()))?;
    let mut commitment = [0u8; 32];
    hex_field(&payload.seed_sha256, &mut commitment)
        .map_err(|()| bad("seed_sha256 is not 64 hex digits".into()))?;
    let mut share = Zeroizing::new([0u8; LEN]);
    hex_field(&payload.share, &mut share[..])
        .map_err(|()| bad("share is not 64 hex digits".into()))?;
    if payload.recipient != known.public {
        return Err(CustodyError::WrongRecipient {
            path: path.to_path_buf(),
            claimed: cut(&payload.recipient),
            opened_by: known.public.clone(),
        });
    }
    Ok(OpenedShare {
        path: path.to_path_buf(),
        emission: payload.emission.clone(),
        share_set,
        threshold: payload.threshold,
        shares: payload.shares,
        recipient: payload.recipient.clone(),
        commitment,
        share: Share::new(payload.index, *share),
        file_sha256: sha256(&bytes),
    })
}

/// SHA-256 of some bytes.
pub(super) fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}

/// Decodes exactly `out.len()` bytes of lowercase hex.
fn hex_field(text: &str, out: &mut [u8]) -> Result<(), ()> {
    if text.len() != 2 * out.len() || text.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(());
    }
    hex::decode_to_slice(text, out).map_err(|_| ())
}

/// At most 80 characters of a public text, for a message.
/// A value refused as a recipient, as an error shows it: whole when short (a typo), its first
/// characters only when it is as long as a key, for it may be a secret key's data pasted by
/// mistake (`age1` followed by an identity's characters: the full text was echoed).
fn shown_recipient(text: &str) -> String {
    let n = text.chars().count();
    if n <= 24 {
        return cut(text);
    }
    let head: String = text.chars().take(6).collect();
    format!(
        "{}… ({n} characters, not shown in full: a value as long as a key may be a secret pasted by mistake)",
        head.escape_debug()
    )
}

pub(super) fn cut(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s.escape_debug().to_string()
}

/// Reads the X25519 identities of the identity files, in order: lines `AGE-SECRET-KEY-1…`,
/// with blank lines and `#` comments allowed, as `age-keygen -o FILE` writes them. Each file
/// gets the checks of every secret file ([`read_checked`], `exposed` as for [`open`]).
pub(super) fn read_identities(
    paths: &[PathBuf],
    exposure: Exposure,
    exposed: &mut Vec<(PathBuf, u32)>,
) -> Result<Vec<KnownIdentity>, CustodyError> {
    if paths.is_empty() {
        return Err(CustodyError::NoIdentities);
    }
    let mut identities = Vec::new();
    for path in paths {
        let read_error = |source| CustodyError::ReadIdentity {
            path: path.to_path_buf(),
            error: source,
        };
        let bytes = Zeroizing::new(
            read_checked(path, "identity file", MAX_IDENTITY_BYTES, exposure, exposed)
                .map_err(read_error)?,
        );
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| read_error(std::io::Error::other("not UTF-8 text")))?;
        let before = identities.len();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let identity = Identity::from_str(line).map_err(|_| CustodyError::IdentityLine {
                path: path.to_path_buf(),
                line: number + 1,
            })?;
            let public = identity.to_public().to_string();
            identities.push(KnownIdentity { identity, public });
        }
        if identities.len() == before {
            return Err(CustodyError::NoIdentity(path.to_path_buf()));
        }
    }
    Ok(identities)
}

/// Parses an age X25519 public key (`age1…`); `what` says where it came from.
pub fn parse_recipient(text: &str, what: &str) -> Result<Recipient, CustodyError> {
    // Anywhere in the text, in any case, even cut short (and a PEM private key too): never
    // echoed below.
    if text.to_ascii_uppercase().contains("AGE-SECRET-KEY-")
        || crate::secrets::secret_kind(text).is_some()
    {
        return Err(CustodyError::SecretAsRecipient {
            what: what.to_string(),
        });
    }
    Recipient::from_str(text.trim()).map_err(|reason| CustodyError::Recipient {
        what: what.to_string(),
        text: shown_recipient(text.trim()),
        reason,
    })
}

/// Reads a recipients file: one `age1…` public key per line, blank lines and `#` comments
/// allowed (the format of `age -R`).
pub fn read_recipients_file(path: &Path) -> Result<Vec<Recipient>, CustodyError> {
    Ok(read_labelled_recipients_file(path)?
        .into_iter()
        .map(|(recipient, _)| recipient)
        .collect())
}

/// Most characters of a custodian's label kept.
pub const MAX_LABEL_CHARS: usize = 120;

/// Reads a recipients file as [`read_recipients_file`], with each key's custodian label: the
/// `# comment` that may follow the key on its line (`age1… # Alice Martin, notary`), "" if
/// none, cut to [`MAX_LABEL_CHARS`] characters, control characters dropped.
pub fn read_labelled_recipients_file(
    path: &Path,
) -> Result<Vec<(Recipient, String)>, CustodyError> {
    let read_error = |source| CustodyError::ReadRecipients {
        path: path.to_path_buf(),
        error: source,
    };
    let bytes = read_bounded(path, MAX_IDENTITY_BYTES).map_err(|e| match e {
        Bounded::Io(source) => read_error(source),
        Bounded::TooLarge(bytes) => read_error(std::io::Error::other(format!(
            "{bytes} bytes, more than a recipients file holds"
        ))),
    })?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| read_error(std::io::Error::other("not UTF-8 text")))?;
    text.lines()
        .enumerate()
        .map(|(number, line)| (number, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
        .map(|(number, line)| {
            let (key, label) = match line.split_once('#') {
                Some((key, label)) => (key.trim(), label.trim()),
                None => (line, ""),
            };
            // The label goes into the signed record: a secret pasted there by mistake (an age
            // secret key, a PEM private key) is redacted, never written.
            let label: String = crate::secrets::scrub(label)
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_LABEL_CHARS)
                .collect();
            parse_recipient(key, &format!("{}, line {}", path.display(), number + 1))
                .map(|recipient| (recipient, label))
        })
        .collect()
}

/// Reads a share or identity file as every secret file is read
/// ([`crate::fs::files::read_secret`]): not through a link, only a regular file (a FIFO is
/// refused at once), at most `limit` bytes, and refused when group or others may read it
/// unless `exposure` allows it (then its mode is added to `exposed`, for a warning).
fn read_checked(
    path: &Path,
    what: &str,
    limit: u64,
    exposure: Exposure,
    exposed: &mut Vec<(PathBuf, u32)>,
) -> Result<Vec<u8>, std::io::Error> {
    let secret = crate::fs::files::read_secret(path, what, limit, exposure)
        .map_err(|e| std::io::Error::other(crate::problem::chained(&e)))?;
    if let Some(mode) = secret.exposed_mode() {
        exposed.push((path.to_path_buf(), mode));
    }
    Ok(secret.bytes)
}

enum Bounded {
    Io(std::io::Error),
    TooLarge(u64),
}

/// Reads a whole file of at most `limit` bytes.
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, Bounded> {
    let file = crate::fs::open::open_regular(path).map_err(Bounded::Io)?;
    // Room for all of it at once: an identity file's bytes are never copied by a reallocation
    // (the caller zeroizes the one buffer).
    let mut bytes = Vec::with_capacity(limit as usize + 1);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Bounded::Io)?;
    if bytes.len() as u64 > limit {
        let size = std::fs::metadata(path)
            .map(|m| m.len())
            .unwrap_or(limit + 1);
        return Err(Bounded::TooLarge(size));
    }
    Ok(bytes)
}
