//! The errors of the file layer ([`crate::fs::files`]): each says what was being done, to
//! which path, and why, in the words an operator acts on.
//!
//! An error of the operating system is the variant's `source`, so that `{:#}` (how the
//! program prints an error) shows the variant's sentence, then `: `, then the system's words;
//! a variant whose sentence goes on after the system's words holds it as `error` instead, and
//! shows it in its own sentence.

use crate::fs::files::shell_quoted;
use crate::fs::output::OutputError;
use crate::untrusted::{shown, shown_path};
use std::io;
use std::path::{Path, PathBuf};

/// Why a file or a folder was not read, written, created or accepted.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The operating system refused an operation on a file or a folder: `action` says which
    /// ("open", "look at folder", "remove"...), `path` where, `source` why (not found, no
    /// permission, the disk...).
    #[error("cannot {action} {}", .path.display())]
    Io {
        /// What was being done, as the message says it after "cannot".
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The temporary file that a file is written to before it takes its name could not be
    /// made in the file's folder (the folder is missing, not writable, full...).
    #[error("cannot create a temporary file for {} in {}", .path.display(), .dir.display())]
    CreateTemp {
        /// The file that was to be written.
        path: PathBuf,
        /// Its folder, where the temporary file goes.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The temporary file that a new file (a secret, a key) is written to could not be made in
    /// its folder.
    #[error("cannot create a temporary file in {}", .dir.display())]
    CreateTempIn {
        /// The folder.
        dir: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Writing a file's bytes, or flushing them to the disk, failed; often the disk is full.
    #[error("cannot write {} (disk full?)", .path.display())]
    Write {
        /// The file written (a temporary file, not yet under its final name).
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file could not be renamed; a temporary file was not published under its final name.
    #[error("cannot rename {} to {}", .from.display(), .to.display())]
    Rename {
        /// The file's name before.
        from: PathBuf,
        /// The name it was to take.
        to: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A record written once could not take its final name, which must be free (something
    /// already there is never overwritten: the operating system's error says what happened).
    #[error(
        "cannot publish {} as {}, which must not exist yet (nothing is overwritten)",
        .from.display(),
        .to.display()
    )]
    PublishNew {
        /// The temporary file.
        from: PathBuf,
        /// The final name.
        to: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A new file (a secret, a key) could not take its final name for another reason than
    /// that something is there already.
    #[error("cannot publish {} as {}", .from.display(), .to.display())]
    Publish {
        /// The temporary file.
        from: PathBuf,
        /// The final name.
        to: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file or a link is already where a new file (a secret, a key) was to be written:
    /// nothing is overwritten; the operator removes it first if it must go.
    #[error(
        "{} already exists (a file or a link): it is never overwritten nor written through; remove it first if it must go",
        .path.display()
    )]
    AlreadyExists {
        /// The path taken.
        path: PathBuf,
    },
    /// The path given for a new file ends in no file name (`/`, `..`).
    #[error("{} does not name a file", .path.display())]
    NoFileName {
        /// The path.
        path: PathBuf,
    },
    /// A file was not put in place over what is at its path (a link, a device, a folder...):
    /// see [`OutputError`].
    #[error(transparent)]
    Output(#[from] OutputError),
    /// A file could not be given to the group of `--group`: changing a file's group needs
    /// root, or membership of the group.
    #[error(
        "cannot give {} to group id {gid}: {error}. Changing a file's group needs root, or membership of the group (`id` lists yours)",
        .path.display()
    )]
    GiveToGroup {
        /// The file or folder.
        path: PathBuf,
        /// The group's id.
        gid: u32,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// A file or a folder could not be given its mode (0600, 0640, 0700, 0750).
    #[error("cannot set the mode of {} to {mode:04o}: {error}", .path.display())]
    SetMode {
        /// The file or folder.
        path: PathBuf,
        /// The mode it was to get.
        mode: u32,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// A link is at the name of a file of an emission folder that is written in place (a
    /// lock, the audit log): such files are never opened through links; the operator removes
    /// the link.
    #[error(
        "{} is a symbolic link: files of an emission folder are never opened through links; remove the link",
        .path.display()
    )]
    InPlaceLink {
        /// The link.
        path: PathBuf,
    },
    /// An emission folder found already there belongs to another user, who could replace the
    /// emission's files and its lock: the operator removes it or gives it to this user.
    #[error(
        "{} belongs to user id {uid}, not to this user (id {me}): an emission folder must be its maker's alone, or its owner could replace the emission's files and lock. Remove it, or give it to this user (chown), and run again",
        shown_path(.path)
    )]
    ForeignEmissionFolder {
        /// The folder.
        path: PathBuf,
        /// Its owner's user id.
        uid: u32,
        /// This process's effective user id.
        me: u32,
    },
    /// Group or others may write into an emission folder found already there, and so replace
    /// the emission's files and its lock: the operator runs `chmod go-w` on it.
    #[error(
        "{} has mode {mode:04o}: others may write into it, and could replace the emission's files and lock. Run `chmod go-w {}` (emit makes it 0700, or 0750 with --group), then run again",
        shown_path(.path),
        shell_quoted(.path)
    )]
    WritableEmissionFolder {
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The folder given for secret files is a link: secrets are kept only in a real folder.
    #[error(
        "{} is a symbolic link: secret files are kept only in a real folder; give the folder itself, or replace the link with a folder of mode 0700",
        .path.display()
    )]
    PrivateFolderLink {
        /// The link.
        path: PathBuf,
    },
    /// Something other than a folder is where a folder for secret files was asked for.
    #[error("{} is not a folder", .path.display())]
    NotAFolder {
        /// The path.
        path: PathBuf,
    },
    /// Group or others may write into the folder given for secret files, and so replace them:
    /// the operator runs `chmod 700` on it.
    #[error(
        "folder {} has mode {mode:04o}: group or others may write into it, and so replace the secret files kept there. Run `chmod 700 {}`, then try again",
        .path.display(),
        shell_quoted(.path)
    )]
    WritablePrivateFolder {
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The folder given for secret files belongs to another user: secrets are kept only in a
    /// folder of one's own.
    #[error(
        "folder {} belongs to user id {uid}, not to the user running this (id {me}): secret files are kept only in a folder of one's own. Give another folder, or `chown` it",
        .path.display()
    )]
    ForeignPrivateFolder {
        /// The folder.
        path: PathBuf,
        /// Its owner's user id.
        uid: u32,
        /// This process's effective user id.
        me: u32,
    },
    /// `--group` was given the number that means "no group" to the system (4294967295).
    #[error("--group {gid}: not a group id (it means \"no group\" to the system)")]
    ReservedGroupId {
        /// The number given.
        gid: u32,
    },
    /// `--group` was given a name with a NUL character in it, which no group has.
    #[error("--group: a group name holds no NUL character")]
    GroupNameNul,
    /// The system's group database could not be asked about the name given to `--group`.
    #[error("--group {}: cannot look the group up: {error}", shown(.name))]
    GroupLookup {
        /// The name given.
        name: String,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// The system knows no group of the name given to `--group`.
    #[error(
        "--group {}: no such group (`getent group` lists them; make one with groupadd, or give a group id)",
        shown(.name)
    )]
    NoSuchGroup {
        /// The name given.
        name: String,
    },
    /// `--group` was given a name where names cannot be looked up (off Linux): it needs the
    /// group's number.
    #[error("--group {name}: give the group's number (names are looked up on Linux only)")]
    GroupNameUnsupported {
        /// The name given.
        name: String,
    },
    /// A link is at the path of a secret file (a seed, a key): secrets are not read through
    /// links; the operator gives the path of the file itself.
    #[error(
        "{} is a symbolic link: secret files are not read through links; give the path of the file itself",
        .path.display()
    )]
    SecretLink {
        /// The link.
        path: PathBuf,
    },
    /// A secret file (a seed, a key) could not be opened or read.
    #[error("cannot read {what} {}", .path.display())]
    ReadSecret {
        /// What the file is, e.g. `signing key`.
        what: String,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Something other than a regular file (a FIFO, a device, a folder) is at the path of a
    /// secret file: it is not read.
    #[error(
        "{} is {kind}, not a regular file: secret files are read only from regular files",
        .path.display()
    )]
    SecretNotRegular {
        /// The path.
        path: PathBuf,
        /// What is there, e.g. `a FIFO (named pipe)`.
        kind: &'static str,
    },
    /// A file given as a secret (a seed, a key) is larger than any such file: it is refused
    /// unread (most likely the wrong file was given).
    #[error(
        "{} holds {size} bytes, more than the {limit} a seed or key file may hold: is it the right file?",
        .path.display()
    )]
    SecretTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The most such a file may hold.
        limit: u64,
    },
    /// Group or others may read or change a secret file: it is refused until the operator
    /// runs `chmod 600` on it (or accepts the risk with `--allow-insecure-key`).
    #[error(
        "{} has mode {mode:04o}: group or others may read or change it, and it holds a secret. Run `chmod 600 {}` (or give --allow-insecure-key to use it anyway)",
        .path.display(),
        shell_quoted(.path)
    )]
    SecretExposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A secret file grew past the most such a file may hold while it was read: something
    /// else is writing it.
    #[error("{} grew past {limit} bytes while being read", .path.display())]
    SecretGrew {
        /// The file.
        path: PathBuf,
        /// The most such a file may hold.
        limit: u64,
    },
}

impl FsError {
    /// The [`FsError::Io`] of an operating system's error while doing `action` to `path`, for
    /// `map_err`.
    pub(crate) fn io<'a>(
        action: &'static str,
        path: &'a Path,
    ) -> impl FnOnce(io::Error) -> FsError + 'a {
        move |source| FsError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// An error and its causes, each after `: `, as anyhow's `{:#}` prints them (how the program
/// prints an error): for a message that holds a typed error inline, with its causes.
pub fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printed as the program prints errors (anyhow's `{:#}`), an error of the operating
    /// system is said once, after the variant's sentence, and stays in the chain as itself.
    #[test]
    fn the_system_error_is_said_once_and_kept_in_the_chain() {
        let error = FsError::io("remove", Path::new("out/a.csv"))(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "Permission denied",
        ));
        assert_eq!(error.to_string(), "cannot remove out/a.csv");
        let error = anyhow::Error::new(error).context("cannot clean up");
        assert_eq!(
            format!("{error:#}"),
            "cannot clean up: cannot remove out/a.csv: Permission denied"
        );
        assert!(error
            .chain()
            .filter_map(|c| c.downcast_ref::<io::Error>())
            .any(|e| e.kind() == io::ErrorKind::PermissionDenied));
        // A sentence that goes on after the system's words holds them itself: no cause.
        let error = anyhow::Error::new(FsError::SetMode {
            path: PathBuf::from("k.pem"),
            mode: 0o600,
            error: io::Error::from_raw_os_error(1),
        });
        assert_eq!(error.chain().count(), 1);
        assert!(format!("{error:#}").starts_with("cannot set the mode of k.pem to 0600: "));
    }

    /// `with_causes` says a typed error as anyhow's `{:#}` does.
    #[test]
    fn with_causes_is_anyhows_alternate_form() {
        let error = FsError::io("remove", Path::new("a"))(io::Error::other("gone"));
        assert_eq!(with_causes(&error), "cannot remove a: gone");
        let error = anyhow::Error::new(error).context("cannot clean up");
        assert_eq!(with_causes(&*error), format!("{error:#}"));
    }
}
