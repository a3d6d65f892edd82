//! Writing a pack of a sealed emission folder.
//!
//! Only a sealed emission is packed: its folder must pass [`check_folder`] (record, key, log,
//! manifests against the record, the seal and its numbers), and every byte packed is bound to the
//! signed seal as it is written: the seal's signature is checked on the bytes packed, the record,
//! the definition and each manifest against the seal's SHA-256 of them, and each CSV, hashed as it
//! streams into the pack, against its manifest's size and SHA-256. A file changed meanwhile fails
//! the pack, which is then not written. The ticket lines themselves are not re-checked here:
//! `verify` of the folder or of the pack does that.

use super::error::PackError;
use super::lines::{lines_bytes, Strip};
use super::member::Member;
use crate::block::id::EmissionId;
use crate::block::keys;
use crate::block::manifest::Manifest;
use crate::custody::Recipient;
use crate::emission::seal::{check_folder, FolderCheck, Seal, SEAL_FILE};
use crate::fs::dir::Kind;
use crate::fs::open::read_at_most;
use crate::json::{parse_strict, Layout};
use crate::untrusted::{shown, shown_path};
use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What packing returns.
type Result<T, E = PackError> = std::result::Result<T, E>;

/// The zstd level used unless another is asked for: 1. On a block's lines it makes 3 % more
/// bytes than zstd's own default of 3 (0.180 of the folder against 0.176 for La ruche d'or),
/// compresses faster, and decompresses in less CPU time (0.11 s against 0.14 to 0.17 s for a
/// La ruche d'or block with the `zstd` tool), which every `verify`, `load` and `report` of the
/// pack pays (docs/PERFORMANCE.md, "Emission packs").
pub const DEFAULT_LEVEL: i32 = 1;

/// How to pack.
#[derive(Clone)]
pub struct PackOptions {
    /// Who can open the pack: one or more age X25519 public keys.
    pub recipients: Vec<Recipient>,
    /// The key the emission must be signed with; without it, the folder's `emission.pub.pem`.
    pub public_key: Option<VerifyingKey>,
    /// The TSA certificates the emission's trusted timestamps are checked with.
    pub tsa_certs: Vec<crate::emission::timestamp::TsaCert>,
    /// zstd level, 1 to 19.
    pub level: i32,
    /// zstd worker threads (0 or 1: compress on the calling thread).
    pub threads: u32,
    /// Hash the pack's bytes as they are written ([`PackSummary::sha256`]: what its trusted
    /// timestamp is asked over).
    pub sha256: bool,
}

/// What a pack holds.
#[derive(Debug, Clone)]
pub struct PackSummary {
    /// The emission packed.
    pub emission: EmissionId,
    /// Files packed.
    pub members: usize,
    /// Blocks packed.
    pub blocks: usize,
    /// Bytes of the files packed.
    pub folder_bytes: u64,
    /// Bytes of the pack.
    pub pack_bytes: u64,
    /// With [`PackOptions::sha256`]: the SHA-256 of the pack's bytes, as written.
    pub sha256: Option<[u8; 32]>,
}

/// Packs the sealed emission `folder` into the new file `out` (which must not exist; mode 0600;
/// written under a temporary name and published whole, or not at all), or, if `out` is `-`,
/// onto standard output (never a terminal: a pack is binary). A stream that fails part way
/// (a block found changed while packed, a signal) stops before age's last chunk, so every
/// reader of it refuses it as cut short; the caller's exit status says so too.
///
/// A signal (SIGINT, SIGTERM, SIGHUP) stops it between reads: the temporary file is removed and
/// the error is [`crate::interrupt::Interrupted`].
pub fn pack(folder: &Path, out: &Path, options: &PackOptions) -> Result<PackSummary> {
    pack_folder(folder, out, options).map_err(stopped_or)
}

/// The error, or [`crate::interrupt::Interrupted`] when a signal is why it failed.
pub(super) fn stopped_or(e: PackError) -> PackError {
    match crate::interrupt::check() {
        Err(signal) => PackError::Interrupted(signal),
        Ok(()) => e,
    }
}

/// The error a read returns once a signal asked to stop, for [`stopped_or`] to replace.
pub(super) fn stop_requested() -> std::io::Result<()> {
    match crate::interrupt::requested() {
        Some(_) => Err(std::io::Error::other("stopped by a signal")),
        None => Ok(()),
    }
}

/// A writer that counts the bytes written through it (the pack's size, whether a file or a
/// stream), and hashes them when asked.
struct Counted<W> {
    to: W,
    bytes: u64,
    sha: Option<Sha256>,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.to.write(buf)?;
        self.bytes += n as u64;
        if let Some(sha) = &mut self.sha {
            sha.update(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.to.flush()
    }
}

fn pack_folder(folder: &Path, out: &Path, options: &PackOptions) -> Result<PackSummary> {
    if options.recipients.is_empty() {
        return Err(PackError::NoRecipient);
    }
    if !(1..=19).contains(&options.level) {
        return Err(PackError::Level {
            level: options.level,
        });
    }
    let to_stdout = out == Path::new("-");
    if to_stdout {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            return Err(PackError::StdoutTerminal);
        }
    } else {
        crate::fs::output::check(out, crate::fs::output::Replace::Never)?;
    }
    let key = match &options.public_key {
        Some(key) => *key,
        None => keys::read_public_key(&folder.join(crate::block::PUBLIC_KEY_FILE))?,
    };
    if !crate::fs::files::entry_exists(&folder.join(SEAL_FILE))? {
        return Err(PackError::NotSealed {
            folder: folder.to_path_buf(),
        });
    }
    let report = check_folder(
        folder,
        &key,
        &FolderCheck {
            tsa_certs: options.tsa_certs.clone(),
            ..FolderCheck::default()
        },
    );
    if !report.problems.is_empty() {
        return Err(PackError::DoesNotVerify {
            folder: folder.to_path_buf(),
            problems: crate::problem::joined(&report.problems, "\n  - "),
        });
    }
    let members = members_of(folder)?;
    // The seal, as it will be packed, and its signature: everything else is checked against it.
    let seal_bytes = read_member(folder, &Member::Seal)?;
    let seal_sig = read_member(folder, &Member::SealSig)?;
    keys::check(&key, &seal_bytes, &seal_sig).map_err(|error| PackError::SealSignature {
        path: shown_path(&folder.join(SEAL_FILE)),
        error,
    })?;
    let seal: Seal =
        parse_strict(&seal_bytes, Layout::Pretty).map_err(|error| PackError::InvalidSeal {
            path: shown_path(&folder.join(SEAL_FILE)),
            error,
        })?;
    // The part of a member's name that names its emission, `<game>/<stake>/e<NNNN>`: the
    // folders verify requires above a block.
    let prefix = seal.id.to_string();
    check_folder_names(folder, &prefix)?;
    let sealed: BTreeMap<u32, &str> = seal
        .blocks
        .iter()
        .map(|b| (b.block, b.manifest_sha256.as_str()))
        .collect();
    let present: BTreeSet<u32> = members
        .keys()
        .filter_map(|m| match m {
            Member::Csv(n) | Member::Manifest(n, _) => Some(*n),
            _ => None,
        })
        .collect();
    for &n in &present {
        for m in [
            Member::Manifest(n, false),
            Member::Manifest(n, true),
            Member::Csv(n),
        ] {
            if !members.contains_key(&m) {
                return Err(PackError::BlockIncomplete {
                    folder: shown_path(folder),
                    block: n,
                    file: m.name(),
                });
            }
        }
    }
    if present.iter().ne(sealed.keys()) {
        return Err(PackError::BlocksNotSealed {
            folder: folder.to_path_buf(),
        });
    }
    let mtime = humantime::parse_rfc3339(&seal.sealed)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());

    let (mut staged, to): (_, Box<dyn Write>) = if to_stdout {
        (None, Box::new(std::io::stdout()))
    } else {
        let mut staged = crate::fs::output::begin(out)?;
        let file = staged
            .file()
            .try_clone()
            .map_err(|source| PackError::WritePack { source })?;
        (Some(staged), Box::new(file))
    };
    let sink = std::io::BufWriter::with_capacity(
        1 << 20,
        Counted {
            to,
            bytes: 0,
            sha: options.sha256.then(Sha256::new),
        },
    );
    let encryptor = age::Encryptor::with_recipients(
        options.recipients.iter().map(|r| r as &dyn age::Recipient),
    )
    .map_err(|error| PackError::Encrypt { error })?;
    let encrypted = encryptor
        .wrap_output(sink)
        .map_err(|source| PackError::WritePack { source })?;
    let compression = |threads| move |source| PackError::Compression { threads, source };
    let mut zstd =
        zstd::stream::write::Encoder::new(encrypted, options.level).map_err(compression(false))?;
    zstd.include_checksum(true).map_err(compression(false))?;
    if options.threads > 1 {
        zstd.multithread(options.threads)
            .map_err(compression(true))?;
    }
    let mut tar = tar::Builder::new(zstd);
    let mut folder_bytes = 0u64;
    let mut csvs: BTreeMap<u32, (u64, String, u64)> = BTreeMap::new();
    let target = if to_stdout {
        "standard output".to_string()
    } else {
        shown_path(out)
    };
    let write_err = |member: &str| {
        let target = target.clone();
        let member = member.to_string();
        move |source| PackError::WriteInto {
            member,
            target,
            source,
        }
    };
    for (member, path) in &members {
        let name = member.name();
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o600);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(mtime);
        header.set_entry_type(tar::EntryType::Regular);
        let entry_name = format!("{prefix}/{name}");
        if let Member::Csv(n) = member {
            let (bytes, sha256, tickets) = csvs
                .get(n)
                .cloned()
                .ok_or(PackError::NoManifestBefore { block: *n })?;
            let file = crate::fs::open::open_regular(path).map_err(PackError::io("read", path))?;
            let size = file.metadata().map_err(PackError::io("read", path))?.len();
            if size != bytes {
                return Err(PackError::CsvSize {
                    path: shown_path(path),
                    size,
                    bytes,
                });
            }
            let lines_size =
                lines_bytes(size, tickets).ok_or_else(|| PackError::CsvCannotHold {
                    path: shown_path(path),
                    size,
                    tickets,
                })?;
            // Packed as its lines (super::lines): each line's hash field checked, then left out.
            let lines_name = format!("{prefix}/{}", Member::Lines(*n).name());
            header.set_size(lines_size);
            let mut reader = Strip::new(Hashing::new(file.take(size)), tickets);
            let appended = tar.append_data(&mut header, &lines_name, &mut reader);
            if let Some(e) = reader.error() {
                return Err(PackError::CsvLines {
                    path: shown_path(path),
                    error: e.clone(),
                });
            }
            appended.map_err(write_err(&name))?;
            let (read, digest) = reader.into_inner().done();
            if read != size || hex::encode(digest) != sha256 {
                return Err(PackError::CsvNotSigned {
                    path: shown_path(path),
                    sha256: hex::encode(digest),
                    bytes: read,
                });
            }
            folder_bytes = folder_bytes.saturating_add(size);
            continue;
        }
        let bytes = read_member(folder, member)?;
        let digest = hex::encode(Sha256::digest(&bytes));
        let against = |what: &'static str, wanted: &str| -> Result<()> {
            if digest != wanted {
                return Err(PackError::NotSealedBytes {
                    path: shown_path(path),
                    sha256: digest.clone(),
                    what,
                    wanted: shown(wanted),
                });
            }
            Ok(())
        };
        match member {
            Member::Record => against("the record", &seal.record_sha256)?,
            Member::Definition => against("the definition", &seal.game_definition_sha256)?,
            Member::Seal if bytes != seal_bytes => {
                return Err(PackError::ChangedWhilePacked {
                    path: shown_path(path),
                })
            }
            Member::SealSig if bytes != seal_sig => {
                return Err(PackError::ChangedWhilePacked {
                    path: shown_path(path),
                })
            }
            Member::Manifest(n, false) => {
                against("the manifest", sealed.get(n).copied().unwrap_or_default())?;
                let manifest =
                    Manifest::from_bytes(&bytes).map_err(|error| PackError::InvalidManifest {
                        path: shown_path(path),
                        error,
                    })?;
                csvs.insert(
                    *n,
                    (manifest.csv.bytes, manifest.csv.sha256, manifest.tickets),
                );
            }
            _ => {}
        }
        header.set_size(bytes.len() as u64);
        tar.append_data(&mut header, &entry_name, &bytes[..])
            .map_err(write_err(&name))?;
        folder_bytes = folder_bytes.saturating_add(bytes.len() as u64);
    }
    let zstd = tar.into_inner().map_err(write_err("the end of the tar"))?;
    let encrypted = zstd
        .finish()
        .map_err(write_err("the end of the compressed stream"))?;
    let mut sink = encrypted
        .finish()
        .map_err(write_err("the end of the encrypted stream"))?;
    sink.flush().map_err(write_err("the pack"))?;
    let counted = sink.into_inner().map_err(|e| PackError::WriteIntoEnd {
        member: "the pack".to_string(),
        target: target.clone(),
        error: e.into_error(),
    })?;
    let Counted {
        to,
        bytes: pack_bytes,
        sha,
    } = counted;
    drop(to);
    let sha256 = sha.map(|s| s.finalize().into());
    if let Some(staged) = staged.take() {
        let publishing = crate::interrupt::critical();
        staged.commit()?;
        drop(publishing);
    }
    Ok(PackSummary {
        emission: seal.id.clone(),
        members: members.len(),
        blocks: present.len(),
        folder_bytes,
        pack_bytes,
        sha256,
    })
}

/// The files of the emission folder a pack carries, in pack order. Files starting with `.` are
/// the factory's working files and are left out; anything else that is not a file of an
/// emission (another file, a folder, a link, a device) is refused, naming it: a pack restores
/// the whole folder, so nothing in it may be left behind unsaid.
fn members_of(folder: &Path) -> Result<BTreeMap<Member, PathBuf>> {
    let entries = crate::fs::dir::list(folder).map_err(|source| PackError::ReadFolder {
        path: shown_path(folder),
        source,
    })?;
    let mut members = BTreeMap::new();
    for entry in entries {
        let Some(name) = entry.name.to_str() else {
            return Err(PackError::NameNotUtf8 {
                path: shown_path(&entry.path),
            });
        };
        if name.starts_with('.') {
            continue;
        }
        let Some(member) = Member::of_name(name).filter(|m| !matches!(m, Member::Lines(_))) else {
            return Err(PackError::NotEmissionFile {
                path: shown_path(&entry.path),
            });
        };
        if entry.kind != Kind::File {
            return Err(PackError::NotRegularFile {
                path: shown_path(&entry.path),
                kind: match entry.kind {
                    Kind::Folder => "a folder",
                    Kind::Link => "a symbolic link",
                    _ => "not a regular file",
                },
            });
        }
        members.insert(member, entry.path);
    }
    for required in [
        Member::Record,
        Member::RecordSig,
        Member::Seal,
        Member::SealSig,
        Member::Log,
        Member::PublicKey,
    ] {
        if !members.contains_key(&required) {
            return Err(PackError::MissingFile {
                folder: shown_path(folder),
                file: required.name(),
            });
        }
    }
    let reshares = members
        .keys()
        .filter(|m| matches!(m, Member::Reshare(_)))
        .count();
    if reshares > super::member::MAX_RESHARE_FILES {
        return Err(PackError::TooManyReshares {
            folder: shown_path(folder),
            count: reshares,
            limit: super::member::MAX_RESHARE_FILES,
        });
    }
    Ok(members)
}

/// The folder's last three names must be the emission's (as `verify` requires of a block's
/// folders), since the pack names its files by them.
fn check_folder_names(folder: &Path, prefix: &str) -> Result<()> {
    let absolute = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
    let parts: Vec<String> = absolute
        .components()
        .rev()
        .take(3)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let found = parts.iter().rev().cloned().collect::<Vec<_>>().join("/");
    if found != prefix {
        return Err(PackError::WrongFolder {
            folder: shown_path(folder),
            emission: prefix.to_string(),
        });
    }
    Ok(())
}

fn read_member(folder: &Path, member: &Member) -> Result<Vec<u8>> {
    let path = folder.join(member.name());
    read_at_most(&path, member.limit(), "a file of an emission").map_err(|error| {
        PackError::ReadFile {
            path: shown_path(&path),
            error,
        }
    })
}

/// A reader that hashes and counts what goes through it.
struct Hashing<R> {
    inner: R,
    sha: Sha256,
    count: u64,
}

impl<R: Read> Hashing<R> {
    fn new(inner: R) -> Self {
        Hashing {
            inner,
            sha: Sha256::new(),
            count: 0,
        }
    }

    fn done(self) -> (u64, [u8; 32]) {
        (self.count, self.sha.finalize().into())
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        stop_requested()?;
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}
