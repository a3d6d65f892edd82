//! Files written on request (`report --json/--html`, `show --svg`, `prove --out`, `man --out`):
//! whole or not at all, and never over what is not ours.
//!
//! A rename replaces whatever has the name, a device node included: run as root,
//! `report --json /dev/full` once replaced the machine's `/dev/full` with a regular file. So
//! the path is looked at first, without following a link: nothing there is the usual case; a
//! regular file is replaced only with [`Replace::RegularFile`] (the commands' `--force`); a
//! link, a folder, a FIFO, a socket or a device is refused. The bytes go to a temporary file
//! beside it (mode 0600), fsynced, then renamed into place: without `--force` with
//! `renameat2(RENAME_NOREPLACE)`, so a file that appears meanwhile is not replaced either;
//! with it, after the path is looked at again. On any error the temporary file is removed and
//! nothing is left.

use crate::untrusted::shown_path;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Whether a file already at the path may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// Never: the path must be free.
    Never,
    /// A regular file may be replaced (`--force`); anything else is still refused.
    RegularFile,
}

impl Replace {
    /// `RegularFile` when `force` is given.
    pub fn when(force: bool) -> Replace {
        if force {
            Replace::RegularFile
        } else {
            Replace::Never
        }
    }
}

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A symbolic link is at the path.
    #[error("{} is a symbolic link: nothing is written through a link; give the path of a new file (or remove the link)", shown_path(.0))]
    Link(PathBuf),
    /// Something other than a regular file is at the path.
    #[error("{} is {kind}: only a regular file is ever written or replaced; give the path of a new file, or `-` for standard output", shown_path(.path))]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What is there.
        kind: &'static str,
    },
    /// A regular file is at the path and may not be replaced.
    #[error("{} exists: give --force to replace it, or another path", shown_path(.0))]
    Exists(PathBuf),
    /// Writing failed (the folder is missing, not writable, the disk is full...).
    #[error("{}: cannot write: {source}", shown_path(.path))]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// Checks that `path` may be written as `replace` says, without writing: a command calls it
/// before its long work, so that it refuses at once.
pub fn check(path: &Path, replace: Replace) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(OutputError::Io {
            path: path.to_path_buf(),
            source,
        }),
        Ok(meta) => {
            let file_type = meta.file_type();
            if file_type.is_symlink() {
                Err(OutputError::Link(path.to_path_buf()))
            } else if !file_type.is_file() {
                Err(OutputError::NotRegular {
                    path: path.to_path_buf(),
                    kind: super::open::kind_name(file_type),
                })
            } else if replace == Replace::Never {
                Err(OutputError::Exists(path.to_path_buf()))
            } else {
                Ok(())
            }
        }
    }
}

/// The folder `path` is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new temporary file (0600) beside `path`, `.<name>.<random>.tmp`: renamed over `path`
/// once whole, removed if dropped before.
fn temporary_beside(path: &Path) -> Result<tempfile::NamedTempFile, OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let name = path.file_name().ok_or_else(|| {
        io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "does not name a file",
        ))
    })?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(folder_of(path))
        .map_err(io)
}

/// Writes `bytes` to `path` whole or not at all, replacing only what `replace` allows (see
/// the module's notes).
pub fn write(path: &Path, bytes: &[u8], replace: Replace) -> Result<(), OutputError> {
    check(path, replace)?;
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = folder_of(path);
    let mut file = temporary_beside(path)?;
    file.write_all(bytes).map_err(io)?;
    file.as_file().sync_all().map_err(io)?;
    match replace {
        Replace::Never => match file.persist_noclobber(path) {
            Ok(_) => {}
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                // Appeared since the check: looked at again for the right message.
                return Err(check(path, Replace::Never)
                    .err()
                    .unwrap_or(OutputError::Exists(path.to_path_buf())));
            }
            Err(e) => return Err(io(e.error)),
        },
        Replace::RegularFile => {
            // Looked at again just before the rename, which would replace anything.
            check(path, replace)?;
            file.persist(path).map_err(|e| io(e.error))?;
        }
    }
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)?;
    Ok(())
}

/// A file written on request as a stream, too large to hold in memory (`pack --out`): the
/// bytes go to a temporary file beside `path` (mode 0600), and [`Streamed::commit`] fsyncs it
/// and publishes it under `path` without replacing anything there
/// (`renameat2(RENAME_NOREPLACE)`). Dropped uncommitted (an error midway), the temporary file
/// is removed and nothing is left.
pub struct Streamed {
    file: tempfile::NamedTempFile,
    path: PathBuf,
}

/// Starts writing a new file at `path`, which must be free ([`check`] with [`Replace::Never`]).
pub fn begin(path: &Path) -> Result<Streamed, OutputError> {
    check(path, Replace::Never)?;
    let file = temporary_beside(path)?;
    Ok(Streamed {
        file,
        path: path.to_path_buf(),
    })
}

impl Streamed {
    /// The temporary file, to write into.
    pub fn file(&mut self) -> &mut std::fs::File {
        self.file.as_file_mut()
    }

    /// Fsyncs the file and publishes it under its path, which must still be free; fsyncs the
    /// folder. On error the temporary file is removed.
    pub fn commit(self) -> Result<(), OutputError> {
        let Streamed { file, path } = self;
        let io = |source| OutputError::Io {
            path: path.clone(),
            source,
        };
        file.as_file().sync_all().map_err(io)?;
        match file.persist_noclobber(&path) {
            Ok(_) => {}
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                return Err(check(&path, Replace::Never)
                    .err()
                    .unwrap_or(OutputError::Exists(path.clone())));
            }
            Err(e) => return Err(io(e.error)),
        }
        std::fs::File::open(folder_of(&path))
            .and_then(|d| d.sync_all())
            .map_err(io)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_file_is_written_and_nothing_is_replaced_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        write(&path, b"one", Replace::Never).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        let err = write(&path, b"two", Replace::Never).unwrap_err();
        assert!(matches!(err, OutputError::Exists(_)), "{err}");
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        write(&path, b"two", Replace::RegularFile).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(dir.path()), ["report.json"]);
    }

    #[test]
    fn links_folders_fifos_and_devices_are_never_replaced_even_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"untouched").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo makes the FIFO");
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        for replace in [Replace::Never, Replace::RegularFile] {
            let err = write(&link, b"x", replace).unwrap_err();
            assert!(matches!(err, OutputError::Link(_)), "{err}");
            let err = write(&fifo, b"x", replace).unwrap_err();
            assert!(err.to_string().contains("is a FIFO"), "{err}");
            let err = write(&folder, b"x", replace).unwrap_err();
            assert!(err.to_string().contains("is a folder"), "{err}");
            let err = write(Path::new("/dev/null"), b"x", replace).unwrap_err();
            assert!(err.to_string().contains("is a character device"), "{err}");
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"untouched");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(names(dir.path()), ["fifo", "folder", "link", "target"]);
    }

    #[test]
    fn a_streamed_file_appears_only_when_committed_and_never_over_another() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.pack");
        let mut streamed = begin(&path).unwrap();
        streamed.file().write_all(b"part").unwrap();
        assert!(!path.exists());
        drop(streamed);
        assert!(names(dir.path()).is_empty(), "dropped: nothing left");
        let mut streamed = begin(&path).unwrap();
        streamed.file().write_all(b"whole").unwrap();
        // A file that appears meanwhile is not replaced.
        std::fs::write(&path, b"theirs").unwrap();
        let err = streamed.commit().unwrap_err();
        assert!(matches!(err, OutputError::Exists(_)), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
        assert_eq!(names(dir.path()), ["e.pack"]);
        std::fs::remove_file(&path).unwrap();
        let mut streamed = begin(&path).unwrap();
        streamed.file().write_all(b"whole").unwrap();
        streamed.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(matches!(begin(&path), Err(OutputError::Exists(_))));
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let err = write(
            &dir.path().join("missing/report.json"),
            b"x",
            Replace::Never,
        )
        .unwrap_err();
        assert!(matches!(err, OutputError::Io { .. }), "{err}");
        assert!(names(dir.path()).is_empty());
    }
}
