//! Listing and walking folders without following links, looping or panicking.
//!
//! std's `fs::read_dir` panics when `closedir` fails (an `EIO` from a network file system),
//! and `Path::is_dir` follows links, so two links `a -> .` and `b -> .` in an emission folder
//! made a walk that never ended. Here a folder is read with `getdents` (rustix), its entries'
//! kinds are those of the entries themselves (`lstat`, never followed), an error closing it
//! is returned like any other, and a walk descends only into real folders, at most
//! [`MAX_DEPTH`] levels, never twice into the same one (device and inode).

use std::collections::HashSet;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// Most levels of folders a walk descends below a folder it was given (an emission is three
/// levels below `--out`: `<game>/<stake>/e<emission>`).
pub const MAX_DEPTH: usize = 16;

/// Most entries a folder may hold for it to be listed (an emission of 99 999 blocks holds
/// about 300 000 files).
pub const MAX_ENTRIES: usize = 4_000_000;

/// What an entry of a folder is, itself (a link is a link, whatever it points to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link.
    Link,
    /// A FIFO, a socket or a device.
    Other,
}

/// One entry of a folder.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name in the folder.
    pub name: OsString,
    /// The folder's path joined with the name.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
}

/// The entries of `dir` (but `.` and `..`), in name order; the kinds are those of the entries,
/// links not followed. `dir` itself may be a link to a folder (it was named by the caller).
pub fn list(dir: &Path) -> io::Result<Vec<Entry>> {
    #[cfg(target_os = "linux")]
    {
        list_linux(dir)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let t = entry.file_type()?;
            let kind = if t.is_symlink() {
                Kind::Link
            } else if t.is_dir() {
                Kind::Folder
            } else if t.is_file() {
                Kind::File
            } else {
                Kind::Other
            };
            out.push(Entry {
                path: entry.path(),
                name: entry.file_name(),
                kind,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

#[cfg(target_os = "linux")]
fn list_linux(dir: &Path) -> io::Result<Vec<Entry>> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::IntoRawFd;
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let mut out = Vec::new();
    let listed = (|| -> io::Result<()> {
        // Reads through a descriptor of its own (closed, errors unseen, when dropped); the
        // one opened above is closed below, where an error is seen.
        let mut entries = rustix::fs::Dir::read_from(&fd)?;
        while let Some(entry) = entries.read() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if out.len() >= MAX_ENTRIES {
                return Err(io::Error::other(format!(
                    "more than {MAX_ENTRIES} entries: not an emission folder"
                )));
            }
            let file_type = match entry.file_type() {
                FileType::Unknown => {
                    let stat = rustix::fs::statat(
                        &fd,
                        entry.file_name(),
                        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                    )?;
                    FileType::from_raw_mode(stat.st_mode)
                }
                known => known,
            };
            let kind = match file_type {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Folder,
                FileType::Symlink => Kind::Link,
                _ => Kind::Other,
            };
            let name = OsString::from(std::ffi::OsStr::from_bytes(name));
            out.push(Entry {
                path: dir.join(&name),
                name,
                kind,
            });
        }
        Ok(())
    })();
    // SAFETY: `into_raw_fd` gives up the descriptor, so it is closed exactly once, here.
    #[allow(unsafe_code)] // close's result, which dropping an OwnedFd ignores
    let closed = unsafe { libc::close(fd.into_raw_fd()) };
    let closed = if closed == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    listed?;
    closed.map_err(|e| io::Error::new(e.kind(), format!("closing the folder: {e}")))?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// A walk went wrong: the folder and what happened.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// A folder could not be read.
    #[error("cannot read folder {}: {source}", crate::untrusted::shown_path(.path))]
    Read {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A signal came: the walk stopped.
    #[error(transparent)]
    Interrupted(crate::interrupt::Interrupted),
    /// Folders nested deeper than [`MAX_DEPTH`].
    #[error("{} is more than {MAX_DEPTH} folders below {}: not walked (is a folder mounted inside itself?)", crate::untrusted::shown_path(.path), crate::untrusted::shown_path(.root))]
    TooDeep {
        /// The folder too deep.
        path: PathBuf,
        /// The folder the walk started from.
        root: PathBuf,
    },
}

/// The files under `root` whose name `wanted` accepts, in name order folder by folder.
///
/// Descends only into real folders (a link to a folder is listed as a link, never
/// followed), at most [`MAX_DEPTH`] levels, and never twice into the same folder (a bind
/// mount of a parent). Entries `wanted` accepts are returned whatever they are (a link, a
/// FIFO), so that the caller, which opens them as regular files, refuses them by name
/// instead of missing them.
pub fn walk(
    root: &Path,
    wanted: &dyn Fn(&std::ffi::OsStr) -> bool,
) -> Result<Vec<PathBuf>, WalkError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    walk_into(root, root, 0, wanted, &mut seen, &mut out)?;
    Ok(out)
}

fn walk_into(
    root: &Path,
    dir: &Path,
    depth: usize,
    wanted: &dyn Fn(&std::ffi::OsStr) -> bool,
    seen: &mut HashSet<(u64, u64)>,
    out: &mut Vec<PathBuf>,
) -> Result<(), WalkError> {
    if depth > MAX_DEPTH {
        return Err(WalkError::TooDeep {
            path: dir.to_path_buf(),
            root: root.to_path_buf(),
        });
    }
    let read = |source| WalkError::Read {
        path: dir.to_path_buf(),
        source,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir).map_err(read)?;
        if !seen.insert((meta.dev(), meta.ino())) {
            return Ok(());
        }
    }
    #[cfg(not(unix))]
    let _ = &seen;
    for entry in list(dir).map_err(read)? {
        crate::interrupt::check().map_err(WalkError::Interrupted)?;
        if entry.kind == Kind::Folder {
            walk_into(root, &entry.path, depth + 1, wanted, seen, out)?;
        } else if wanted(&entry.name) {
            out.push(entry.path);
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(paths: &[PathBuf], root: &Path) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_walk_follows_no_link_and_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("g/2/e0001")).unwrap();
        std::fs::write(root.join("g/2/e0001/block-00001.csv"), b"").unwrap();
        std::fs::write(root.join("g/2/e0001/notes.txt"), b"").unwrap();
        // Loops: two links to the folder itself, one to its parent, one to the root.
        symlink(".", root.join("g/2/e0001/a")).unwrap();
        symlink(".", root.join("g/2/e0001/b")).unwrap();
        symlink("..", root.join("g/2/e0001/up")).unwrap();
        symlink(root, root.join("g/loop")).unwrap();
        // A link named like a block is returned (the reader refuses or checks it).
        symlink("block-00001.csv", root.join("g/2/e0001/block-00002.csv")).unwrap();
        let wanted = |n: &std::ffi::OsStr| n.to_string_lossy().ends_with(".csv");
        let found = walk(root, &wanted).unwrap();
        assert_eq!(
            names(&found, root),
            ["g/2/e0001/block-00001.csv", "g/2/e0001/block-00002.csv"]
        );
        let kinds: Vec<Kind> = list(&root.join("g/2/e0001"))
            .unwrap()
            .iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(
            kinds,
            [
                Kind::Link,
                Kind::Link,
                Kind::File,
                Kind::Link,
                Kind::File,
                Kind::Link
            ]
        );
    }

    #[test]
    fn a_walk_too_deep_is_an_error_naming_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for i in 0..=MAX_DEPTH + 1 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        let err = walk(dir.path(), &|_| true).unwrap_err();
        assert!(matches!(err, WalkError::TooDeep { .. }), "{err}");
        assert!(err.to_string().contains("/d16"), "{err}");
    }
}
