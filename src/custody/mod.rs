//! Seed custody: an emission's seed split *k* of *n* and handed to custodians, then rebuilt in
//! memory from any *k* of them.
//!
//! Why: whoever holds an emission's seed can recompute which ticket wins what, so no single
//! person, disk or backup should. [`write_share_set`] splits a seed with Shamir's scheme over
//! GF(256) ([`shamir`]) and encrypts each share with age to one custodian's X25519 public key
//! (a share file at rest is useless without that custodian's identity). [`rebuild_seed`]
//! decrypts *k* share files with the custodians' identities, checks that they belong together,
//! combines them and checks the result against the SHA-256 commitment they carry, which is the
//! `seed_sha256` of every manifest of the emission. The seed is never written in clear: it
//! lives in a [`SecretSeed`], zeroized on drop, whose `Debug` shows nothing.
//!
//! Zeroization is best effort: our buffers of seeds, shares, payloads and identity files are
//! wiped, but copies made inside the age and serde crates, or swapped to disk, are not in our
//! hands. The `seed` command is meant for an offline machine (docs/OPERATIONS.md, "Seed custody ceremony").

mod error;
pub mod shamir;
mod share_file;
pub use share_file::SealError;

pub use age::x25519::Recipient;
pub use error::CustodyError;
pub use share_file::{
    parse_recipient, read_labelled_recipients_file, read_recipients_file, Exposure, FORMAT,
    MAX_LABEL_CHARS,
};

use crate::block::id::EmissionId;
use crate::plan::{seed_commitment, Seed};
use serde::Serialize;
use share_file::{OpenedShare, Payload};
use std::path::{Path, PathBuf};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

/// An emission seed held in memory: zeroized when dropped, never shown by `Debug`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretSeed(Seed);

impl SecretSeed {
    /// A fresh seed from the operating system's CSPRNG.
    pub fn fresh() -> Result<Self, CustodyError> {
        let mut seed = SecretSeed([0u8; 32]);
        getrandom::fill(&mut seed.0).map_err(|e| CustodyError::Random(e.to_string()))?;
        Ok(seed)
    }

    /// Wraps a seed given otherwise (`--seed HEX` in CI, tests).
    pub fn from_bytes(seed: Seed) -> Self {
        SecretSeed(seed)
    }

    /// The seed's bytes, to derive block keys from. Copy them only where they are needed.
    pub fn expose(&self) -> &Seed {
        &self.0
    }

    /// SHA-256 of the seed: the `seed_sha256` of the manifests.
    pub fn commitment(&self) -> [u8; 32] {
        seed_commitment(&self.0)
    }
}

impl std::fmt::Debug for SecretSeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretSeed(<secret>)")
    }
}

/// The name of share `index` of `n` of an emission: `<game>-<stake>-e<NNNN>.share-<i>-of-<n>.age`.
pub fn share_file_name(emission: &EmissionId, index: u8, n: u8) -> String {
    format!("{}.share-{index}-of-{n}.age", emission.file_stem())
}

/// One share file of a set: which file, which share, for whom. Nothing secret.
#[derive(Debug, Clone, Serialize)]
pub struct ShareInfo {
    /// The share file (in a record, only its name is written).
    #[serde(rename = "file", serialize_with = "file_name")]
    pub path: PathBuf,
    /// The share's index, 1..=n.
    pub index: u8,
    /// The custodian's age public key (`age1…`) it is encrypted to.
    pub recipient: String,
    /// SHA-256 of the share file's bytes (the encrypted file, as handed over).
    #[serde(serialize_with = "hex_bytes")]
    pub file_sha256: [u8; 32],
}

/// A share set: what the emission record lists about the custody of its seed (by public key
/// and file hash, never by content). Serializes to JSON with hex digests.
#[derive(Debug, Clone, Serialize)]
pub struct ShareSetInfo {
    /// The emission (written `<game>/<stake>/e<NNNN>`).
    #[serde(serialize_with = "crate::block::id::as_text::serialize")]
    pub emission: EmissionId,
    /// The split's random id, the same in all its shares: a reshare makes a new one.
    #[serde(serialize_with = "hex_bytes")]
    pub share_set: [u8; 16],
    /// k: how many shares rebuild the seed.
    pub threshold: u8,
    /// n: how many shares were made.
    pub shares: u8,
    /// SHA-256 of the seed, the manifests' `seed_sha256`.
    #[serde(serialize_with = "hex_bytes")]
    pub seed_sha256: [u8; 32],
    /// Made: all n files. Rebuilt: the distinct shares used, in the order given.
    pub files: Vec<ShareInfo>,
    /// Rebuilt: the share and identity files read although group or others may read them
    /// ([`rebuild_seed_with`] and [`Exposure::Allow`]), with their modes, for a warning.
    #[serde(skip)]
    pub exposed: Vec<(PathBuf, u32)>,
}

fn hex_bytes<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&hex::encode(bytes))
}

fn file_name<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    let name = path.file_name().unwrap_or(path.as_os_str());
    s.serialize_str(&name.to_string_lossy())
}

/// Splits `seed` into one share per recipient, any `threshold` of which rebuild it, and writes
/// share `i` encrypted to `recipients[i-1]` as `out_dir/`[`share_file_name`] (mode 0600,
/// created exclusively: an existing file is never replaced; `out_dir` is made mode 0700 if
/// missing).
///
/// Refuses, before writing anything: `threshold` outside 2..=n, more than 255 recipients, a
/// recipient given twice, any of the n files
/// already existing. If a write fails midway, the files already written by this call are
/// removed. Returns the set's description, to print and to record.
pub fn write_share_set(
    seed: &SecretSeed,
    emission: &EmissionId,
    threshold: u8,
    recipients: &[Recipient],
    out_dir: &Path,
) -> Result<ShareSetInfo, CustodyError> {
    let n = u8::try_from(recipients.len())
        .map_err(|_| CustodyError::TooManyRecipients(recipients.len()))?;
    shamir::check_parameters(threshold, n)?;
    let publics: Vec<String> = recipients.iter().map(Recipient::to_string).collect();
    for (i, key) in publics.iter().enumerate() {
        if publics[..i].contains(key) {
            return Err(CustodyError::DuplicateRecipient(key.clone()));
        }
    }
    let paths: Vec<PathBuf> = (1..=n)
        .map(|i| out_dir.join(share_file_name(emission, i, n)))
        .collect();
    if let Some(existing) = paths.iter().find(|p| p.exists()) {
        return Err(CustodyError::Exists(existing.clone()));
    }

    let mut share_set = [0u8; 16];
    getrandom::fill(&mut share_set).map_err(|e| CustodyError::Random(e.to_string()))?;
    let commitment = seed.commitment();
    let shares = shamir::split(seed.expose(), threshold, n)?;
    // The first k and the last k shares must give the seed back before anything is written.
    let k = usize::from(threshold);
    for subset in [&shares[..k], &shares[shares.len() - k..]] {
        if *shamir::combine(subset)? != *seed.expose() {
            return Err(CustodyError::SelfCheck);
        }
    }

    let mut sealed = Vec::with_capacity(shares.len());
    for (share, recipient) in shares.iter().zip(recipients) {
        let payload = Payload {
            format: FORMAT.to_string(),
            emission: emission.to_string(),
            share_set: hex::encode(share_set),
            threshold,
            shares: n,
            index: share.index(),
            recipient: recipient.to_string(),
            seed_sha256: hex::encode(commitment),
            share: Zeroizing::new(hex::encode(share.bytes())),
        };
        let bytes =
            share_file::seal(&payload, recipient).map_err(|reason| CustodyError::Encrypt {
                index: share.index(),
                recipient: recipient.to_string(),
                reason,
            })?;
        sealed.push(bytes);
    }

    // The one private-folder policy (keygen's and emit's): made 0700 when missing, refused
    // when group or others may write into it, when a link, or when another user's.
    crate::fs::files::private_dir(out_dir)
        .map_err(|e| CustodyError::Folder(crate::problem::chained(&e)))?;
    let mut written: Vec<&Path> = Vec::with_capacity(paths.len());
    for (path, bytes) in paths.iter().zip(&sealed) {
        if let Err(e) = write_new(path, bytes) {
            for done in written {
                let _ = std::fs::remove_file(done);
            }
            return Err(e);
        }
        written.push(path);
    }
    sync_dir(out_dir)?;

    let files = paths
        .into_iter()
        .zip(&sealed)
        .zip(publics)
        .zip(1..=n)
        .map(|(((path, bytes), recipient), index)| ShareInfo {
            path,
            index,
            recipient,
            file_sha256: share_file::sha256(bytes),
        })
        .collect();
    Ok(ShareSetInfo {
        emission: emission.clone(),
        share_set,
        threshold,
        shares: n,
        seed_sha256: commitment,
        files,
        exposed: Vec::new(),
    })
}

/// Rebuilds an emission's seed, in memory only, from share files and the identity files of
/// their custodians.
///
/// Contract, for `emit` and `verify`:
/// - `identity_paths` are age identity files (`AGE-SECRET-KEY-1…` lines, `#` comments; as
///   written by `age-keygen -o FILE`); each share file is decrypted with whichever of their
///   identities opens it, so the order of the two lists does not matter.
/// - every share must be of `expected_emission` (an [`emission_id`]), of one share set (same
///   random set id, k, n and seed commitment), and say it is for the very key that opened it;
/// - the same share given twice (same file, or an identical copy) counts once; two different
///   files claiming the same index are refused;
/// - at least k distinct shares are needed; all those given are combined;
/// - SHA-256 of the rebuilt seed must equal the commitment the shares carry.
///
/// Any failure is an error naming the file and the fix; nothing partial is returned. The
/// returned [`ShareSetInfo`] lists the shares used (file, index, recipient, file SHA-256) and
/// its `seed_sha256` equals `seed.commitment()`. **The caller must still compare that
/// commitment with the `seed_sha256` of the manifests it works on**: a complete share set of
/// the right emission id but of another seed (say, `seed` run twice for one emission) rebuilds
/// without error here.
///
/// Share and identity files are secret files: read only when regular files (not links, not
/// FIFOs) that group and others cannot read; see [`rebuild_seed_with`] to let such a file
/// through with a warning.
pub fn rebuild_seed(
    share_paths: &[PathBuf],
    identity_paths: &[PathBuf],
    expected_emission: &EmissionId,
) -> Result<(SecretSeed, ShareSetInfo), CustodyError> {
    rebuild_seed_with(
        share_paths,
        identity_paths,
        expected_emission,
        Exposure::Refuse,
    )
}

/// The X25519 identities of age identity files (`AGE-SECRET-KEY-1…` lines, blank lines and `#`
/// comments allowed, as `age-keygen -o FILE` writes them), read as every secret file is read:
/// not through a link, only a regular file, bounded, and refused when group or others may read
/// it unless `exposure` allows it (such files are returned with their mode, for a warning).
/// Used to open emission packs ([`crate::pack`]) with the same checks as share files.
pub fn read_identity_files(
    paths: &[PathBuf],
    exposure: Exposure,
) -> Result<IdentityFiles, CustodyError> {
    let mut exposed = Vec::new();
    let known = share_file::read_identities(paths, exposure, &mut exposed)?;
    Ok(IdentityFiles {
        identities: known.into_iter().map(|k| k.identity).collect(),
        exposed,
    })
}

/// What [`read_identity_files`] read.
pub struct IdentityFiles {
    /// The identities, in the order of the files and their lines.
    pub identities: Vec<age::x25519::Identity>,
    /// Files read although group or others may read them, with their mode (for a warning).
    pub exposed: Vec<(PathBuf, u32)>,
}

/// [`rebuild_seed`], letting share and identity files that group or others may read through
/// when `exposure` is [`Exposure::Allow`] (`--allow-insecure-key`): they are then listed in
/// the returned [`ShareSetInfo::exposed`], for the caller to warn.
pub fn rebuild_seed_with(
    share_paths: &[PathBuf],
    identity_paths: &[PathBuf],
    expected_emission: &EmissionId,
    exposure: Exposure,
) -> Result<(SecretSeed, ShareSetInfo), CustodyError> {
    if share_paths.is_empty() {
        return Err(CustodyError::NoShares);
    }
    let mut exposed = Vec::new();
    let identities = share_file::read_identities(identity_paths, exposure, &mut exposed)?;
    let mut distinct: Vec<OpenedShare> = Vec::with_capacity(share_paths.len());
    for path in share_paths {
        let share = share_file::open(path, &identities, exposure, &mut exposed)?;
        if share.emission != expected_emission.to_string() {
            return Err(CustodyError::WrongEmission {
                path: path.clone(),
                found: share_file::cut(&share.emission),
                expected: expected_emission.to_string(),
            });
        }
        if let Some(first) = distinct.first() {
            let differs = if share.share_set != first.share_set {
                Some("share set id")
            } else if share.commitment != first.commitment {
                Some("seed commitment")
            } else if (share.threshold, share.shares) != (first.threshold, first.shares) {
                Some("k of n")
            } else {
                None
            };
            if let Some(what) = differs {
                return Err(CustodyError::MixedSets {
                    path: path.clone(),
                    first: first.path.clone(),
                    what,
                });
            }
        }
        match distinct
            .iter()
            .find(|s| s.share.index() == share.share.index())
        {
            Some(same) if same.share.bytes() == share.share.bytes() => continue,
            Some(same) => {
                return Err(CustodyError::ConflictingShares {
                    path: path.clone(),
                    first: same.path.clone(),
                    index: share.share.index(),
                })
            }
            None => distinct.push(share),
        }
    }
    // `distinct` is not empty: share_paths is not, and every path either errs or lands here.
    let Some(first) = distinct.first() else {
        return Err(CustodyError::NoShares);
    };
    let (threshold, n, commitment) = (first.threshold, first.shares, first.commitment);
    if distinct.len() < usize::from(threshold) {
        return Err(CustodyError::TooFewShares {
            emission: expected_emission.to_string(),
            have: distinct.len(),
            need: threshold,
            n,
            missing: usize::from(threshold) - distinct.len(),
        });
    }
    let shares: Vec<shamir::Share> = distinct.iter().map(|s| s.share.clone()).collect();
    let seed = SecretSeed(*shamir::combine(&shares)?);
    if seed.commitment() != commitment {
        return Err(CustodyError::Commitment {
            files: distinct
                .iter()
                .map(|s| s.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let info = ShareSetInfo {
        emission: expected_emission.clone(),
        share_set: first.share_set,
        threshold,
        shares: n,
        seed_sha256: commitment,
        files: distinct
            .iter()
            .map(|s| ShareInfo {
                path: s.path.clone(),
                index: s.share.index(),
                recipient: s.recipient.clone(),
                file_sha256: s.file_sha256,
            })
            .collect(),
        exposed,
    };
    Ok((seed, info))
}

/// Writes a new file (O_CREAT | O_EXCL, mode 0600) and fsyncs it.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), CustodyError> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            CustodyError::Exists(path.to_path_buf())
        } else {
            CustodyError::Write {
                path: path.to_path_buf(),
                error: source,
            }
        }
    })?;
    let result = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(source) = result {
        let _ = std::fs::remove_file(path);
        return Err(CustodyError::Write {
            path: path.to_path_buf(),
            error: source,
        });
    }
    Ok(())
}

/// Fsyncs a folder, so that the new names survive a crash.
fn sync_dir(dir: &Path) -> Result<(), CustodyError> {
    #[cfg(unix)]
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| CustodyError::Write {
            path: dir.to_path_buf(),
            error: source,
        })?;
    Ok(())
}

#[cfg(test)]
mod tests;
