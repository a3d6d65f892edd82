//! Restoring an emission folder from a pack, byte for byte.
//!
//! The files are written into a private staging folder (`.unpack-<random>`, mode 0700) inside
//! the folder given, each created new (mode 0600) and fsynced; each CSV is hashed as it is
//! written and must be what its manifest says. Only once the whole pack has been read to its
//! authenticated end is the staging folder renamed to `<out>/<game>/<stake>/e<emission:04>`,
//! never over anything there (`renameat2(RENAME_NOREPLACE)`). On any error before that, the
//! staging folder is removed and nothing is left. Before it is published, the restored folder
//! must hold together as a sealed emission against the key it carries ([`check_restored`]);
//! that the key is the lottery's, and the tickets, are for `verify --public-key` to say. A run
//! first removes the staging folders killed runs left (`.unpack-*` that no live run holds).

use super::error::PackError;
use super::member::Member;
use super::read::{read_pack, PackContents, Sink};
use crate::block::id::EmissionId;
use crate::block::manifest::Manifest;
use crate::untrusted::shown_path;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What unpacking returns.
type Result<T, E = PackError> = std::result::Result<T, E>;

/// What was restored.
#[derive(Debug, Clone)]
pub struct Unpacked {
    /// The emission folder made.
    pub folder: PathBuf,
    /// What the pack held.
    pub contents: PackContents,
    /// Staging folders of killed runs removed first.
    pub removed: usize,
}

/// Restores the emission of `pack` under the existing folder `out`, as
/// `out/<game>/<stake>/e<emission:04>` (which must not exist), whole or not at all.
pub fn unpack(
    pack: &Path,
    identities: &[age::x25519::Identity],
    out: &Path,
    tsa_certs: &[crate::emission::timestamp::TsaCert],
) -> Result<Unpacked> {
    let meta = std::fs::metadata(out).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => PackError::OutMissing {
            out: out.to_path_buf(),
        },
        _ => PackError::OutUnreadable {
            out: out.to_path_buf(),
            error,
        },
    })?;
    if !meta.is_dir() {
        return Err(PackError::OutNotFolder {
            out: out.to_path_buf(),
        });
    }
    let removed = remove_stale_stagings(out)?;
    let stage = tempfile::Builder::new()
        .prefix(".unpack-")
        .tempdir_in(out)
        .map_err(PackError::io("create a staging folder in", out))?;
    // Held until the folder is published: a later run removes only stagings nobody holds.
    let held = File::open(stage.path())
        .and_then(|d| d.lock().map(|()| d))
        .map_err(PackError::io("lock", stage.path()))?;
    // The emission folder it becomes is private, as emit makes it (0700), whatever the umask.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(stage.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(PackError::io("set the mode of", stage.path()))?;
    }
    let mut sink = Staging {
        out: out.to_path_buf(),
        dir: stage.path().to_path_buf(),
    };
    let contents = read_pack(pack, identities, &mut sink)?;
    File::open(stage.path())
        .and_then(|d| d.sync_all())
        .map_err(PackError::io("sync", stage.path()))?;
    check_restored(stage.path(), tsa_certs)?;
    let folder = contents.emission.folder(out);
    let parent = crate::fs::files::parent(&folder).to_path_buf();
    crate::interrupt::check()?;
    let publishing = crate::interrupt::critical();
    crate::fs::files::create_dir(&parent, 0o700)?;
    publish_dir(stage.path(), &folder)?;
    drop(publishing);
    // Renamed: nothing is left for the TempDir to remove.
    let _ = stage.keep();
    File::open(&parent)
        .and_then(|d| d.sync_all())
        .map_err(PackError::io("sync", &parent))?;
    drop(held);
    Ok(Unpacked {
        folder,
        contents,
        removed,
    })
}

/// The restored folder holds together as a sealed emission, checked as `verify` checks one
/// (record, key, definition, manifests and their signatures, log, withdrawals, custody files,
/// seal and its blocks) against the key it carries, before it is published: a pack with a
/// sealed block, the log, a withdrawal or the definition left out is refused whole (anyone
/// with a recipient's public key can make a pack; unpack restored such packs, exit 0). That
/// the key is the lottery's, and the tickets, are for `verify --public-key` to say.
fn check_restored(folder: &Path, tsa_certs: &[crate::emission::timestamp::TsaCert]) -> Result<()> {
    let key = crate::block::keys::read_public_key(&folder.join(crate::block::PUBLIC_KEY_FILE))?;
    let report = crate::emission::seal::check_folder(
        folder,
        &key,
        &crate::emission::seal::FolderCheck {
            tsa_certs: tsa_certs.to_vec(),
            ..crate::emission::seal::FolderCheck::default()
        },
    );
    if !report.problems.is_empty() {
        return Err(PackError::NotTogether {
            problems: report
                .problems
                .iter()
                .map(|p| crate::untrusted::defanged(&p.message))
                .collect::<Vec<_>>()
                .join("\n  - "),
        });
    }
    Ok(())
}

/// Removes the staging folders (`.unpack-*`) that runs killed before publishing left in `out`
/// (the blocks in clear, as secret as the seed), skipping any a live run holds locked. Returns
/// how many.
fn remove_stale_stagings(out: &Path) -> Result<usize> {
    let mut removed = 0;
    let entries = crate::fs::dir::list(out).map_err(PackError::io("read", out))?;
    for entry in entries {
        let stale = entry.kind == crate::fs::dir::Kind::Folder
            && entry
                .name
                .to_str()
                .is_some_and(|n| n.starts_with(".unpack-"));
        if !stale {
            continue;
        }
        let Ok(dir) = File::open(&entry.path) else {
            continue;
        };
        if dir.try_lock().is_ok() {
            std::fs::remove_dir_all(&entry.path).map_err(|source| PackError::RemoveStale {
                path: shown_path(&entry.path),
                source,
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Renames the folder `from` to `to`, which must not exist.
fn publish_dir(from: &Path, to: &Path) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE).map_err(|e| {
            if e == rustix::io::Errno::EXIST {
                PackError::FolderExists {
                    path: shown_path(to),
                }
            } else {
                PackError::RenameFolder {
                    from: shown_path(from),
                    to: shown_path(to),
                    error: e.into(),
                }
            }
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        if crate::fs::files::entry_exists(to)? {
            return Err(PackError::FolderExists {
                path: shown_path(to),
            });
        }
        std::fs::rename(from, to).map_err(|error| PackError::RenameFolder {
            from: shown_path(from),
            to: shown_path(to),
            error,
        })
    }
}

struct Staging {
    out: PathBuf,
    dir: PathBuf,
}

impl Staging {
    fn create(&self, member: &Member) -> Result<(File, PathBuf)> {
        let path = self.dir.join(member.name());
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600).custom_flags(no_follow_flag());
        }
        let file = options
            .open(&path)
            .map_err(PackError::io("create", &path))?;
        Ok((file, path))
    }
}

#[cfg(unix)]
fn no_follow_flag() -> i32 {
    rustix::fs::OFlags::NOFOLLOW.bits() as i32
}

impl Sink for Staging {
    fn start(&mut self, emission: &EmissionId) -> Result<()> {
        let folder = emission.folder(&self.out);
        if crate::fs::files::entry_exists(&folder)? {
            return Err(PackError::FolderExists {
                path: shown_path(&folder),
            });
        }
        Ok(())
    }

    fn small(&mut self, member: &Member, bytes: &[u8]) -> Result<()> {
        let (mut file, path) = self.create(member)?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(PackError::write(&path))
    }

    fn csv(&mut self, block: u32, manifest: &Manifest, reader: &mut dyn Read) -> Result<()> {
        let (file, path) = self.create(&Member::Csv(block))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let mut sha = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut count = 0u64;
        loop {
            super::write::stop_requested().map_err(PackError::Stopped)?;
            let n = reader
                .read(&mut buf)
                .map_err(|error| PackError::CsvUnreadable { block, error })?;
            if n == 0 {
                break;
            }
            sha.update(&buf[..n]);
            count += n as u64;
            out.write_all(&buf[..n]).map_err(PackError::write(&path))?;
        }
        let file = out.into_inner().map_err(|e| PackError::WriteEnd {
            path: shown_path(&path),
            error: e.into_error(),
        })?;
        file.sync_all().map_err(PackError::write(&path))?;
        let digest = hex::encode(sha.finalize());
        if count != manifest.csv.bytes || digest != manifest.csv.sha256 {
            return Err(PackError::CsvChanged {
                block,
                sha256: digest,
                bytes: count,
                wanted_sha256: crate::untrusted::shown(&manifest.csv.sha256),
                wanted_bytes: manifest.csv.bytes,
            });
        }
        Ok(())
    }
}
