//! Opening a file to read only when it is a regular file.
//!
//! `open()` of a FIFO blocks until a writer comes, and a signal does not end it (the signal
//! handlers only raise a flag); reading a device such as `/dev/zero` never ends. So every
//! file the tools read (block, manifest, record, seal, log, key, share, identity, definition,
//! proof) is opened with `O_NONBLOCK`, checked to be a regular file with `fstat` on the open
//! descriptor (no race with a rename), and only then read, with `O_NONBLOCK` cleared again.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// What is at a path when it is not a regular file, for messages: `a FIFO (named pipe)`.
pub fn kind_name(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The error for something that is not a regular file, in the words of [`kind_name`].
pub fn not_regular(file_type: std::fs::FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "is {}, not a regular file: refused (give the path of a regular file)",
            kind_name(file_type)
        ),
    )
}

/// Opens `path` to read, following links, only if it is a regular file: a FIFO, a socket, a
/// device or a folder is refused at once with an error that says what it is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| socket_said(path, e))?;
        let file = File::from(fd);
        check_regular(&file)?;
        let flags = fcntl_getfl(&file)?;
        fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        let file = File::open(path)?;
        check_regular(&file)?;
        Ok(file)
    }
}

/// [`open_regular`], refusing a link at `path` instead of following it (`O_NOFOLLOW`), with
/// an error that says so: for the files of an emission folder written in place (the audit log),
/// which are never written through a link, and so never read through one either.
pub fn open_regular_nofollow(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::LOOP => io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link: files of an emission folder are never read through links; remove the link",
            ),
            e => socket_said(path, e),
        })?;
        let file = File::from(fd);
        check_regular(&file)?;
        let flags = fcntl_getfl(&file)?;
        fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
        Ok(file)
    }
    #[cfg(not(unix))]
    open_regular(path)
}

/// The error of a failed `open()`: a socket cannot be opened at all (`ENXIO`, "No such device
/// or address", which names nothing the user can act on), so when the path is one, the error
/// says so in [`not_regular`]'s words, as for a FIFO or a device.
#[cfg(unix)]
fn socket_said(path: &Path, e: rustix::io::Errno) -> io::Error {
    if e == rustix::io::Errno::NXIO {
        if let Ok(meta) = std::fs::metadata(path) {
            return not_regular(meta.file_type());
        }
    }
    e.into()
}

/// `Ok` if the open `file` is a regular file, else the error of [`not_regular`].
pub fn check_regular(file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.is_file() {
        Ok(())
    } else {
        Err(not_regular(meta.file_type()))
    }
}

/// A file that could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system's error (not found, a folder, no permission...).
    #[error("{0}")]
    Io(std::io::Error),
    /// Larger than such a file can be: refused before it is read.
    #[error("{size} bytes, more than the {limit} bytes {what} may hold: not read")]
    TooLarge {
        /// The file's size (at least).
        size: u64,
        /// The most it may hold.
        limit: u64,
        /// What the file is, e.g. `a manifest`.
        what: &'static str,
    },
}

/// Reads a whole file of at most `limit` bytes; `what` names such a file in the error (`a
/// manifest`). A larger file is refused on its size before it is read, and a file that grows
/// while it is read is refused as soon as it passes the limit: memory stays bounded.
pub fn read_at_most(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path).map_err(ReadError::Io)?;
    let size = file.metadata().map_err(ReadError::Io)?.len();
    if size > limit {
        return Err(ReadError::TooLarge { size, limit, what });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    let read = bytes.len() as u64;
    if read > limit {
        return Err(ReadError::TooLarge {
            size: read,
            limit,
            what,
        });
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_regular_file_is_read_and_anything_else_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"bytes").unwrap();
        let mut text = String::new();
        open_regular(&file)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "bytes");
        // Through a link to a regular file: read.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(open_regular(&link).is_ok());
        // A FIFO with no writer: refused at once (a plain open would block for ever).
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "mkfifo (coreutils) makes the FIFO"
        );
        let err = open_regular(&fifo).unwrap_err();
        assert!(err.to_string().contains("is a FIFO (named pipe)"), "{err}");
        // A device and a folder.
        let err = open_regular(Path::new("/dev/null")).unwrap_err();
        assert!(err.to_string().contains("is a character device"), "{err}");
        let err = open_regular(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a folder"), "{err}");
        // A socket cannot be opened at all: the error says what it is, not the kernel's ENXIO
        // ("No such device or address").
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for err in [
            open_regular(&socket).unwrap_err(),
            open_regular_nofollow(&socket).unwrap_err(),
        ] {
            assert!(err.to_string().contains("is a socket"), "{err}");
        }
        // The file opened is left blocking: O_NONBLOCK is cleared after the check.
        let opened = open_regular(&file).unwrap();
        let flags = rustix::fs::fcntl_getfl(&opened).unwrap();
        assert!(!flags.contains(rustix::fs::OFlags::NONBLOCK));
    }

    #[test]
    fn reads_are_bounded_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(
            read_at_most(&path, 10, "a test file").unwrap(),
            b"0123456789"
        );
        let err = read_at_most(&path, 9, "a test file").unwrap_err();
        assert_eq!(
            err.to_string(),
            "10 bytes, more than the 9 bytes a test file may hold: not read"
        );
        // A sparse gigabyte is refused on its size.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(1 << 30).unwrap();
        assert!(matches!(
            read_at_most(&path, 1 << 20, "a test file"),
            Err(ReadError::TooLarge {
                size: 1073741824,
                ..
            })
        ));
        assert!(matches!(
            read_at_most(dir.path(), 1 << 20, "a test file"),
            Err(ReadError::Io(_))
        ));
    }
}
