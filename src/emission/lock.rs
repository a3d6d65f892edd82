//! Advisory locks (`flock`) on an emission folder.
//!
//! Two kinds, both files in the emission folder that are never removed (removing a lock file
//! that another process may be waiting on would let two processes hold "the" lock):
//! - `.emission.lock`, held briefly while a run reads or writes what the whole emission
//!   shares (the seed and key files, `emission.pub.pem`);
//! - `.block-NNNNN.lock`, held while a block is made or checked, so that runs with disjoint
//!   block ranges work side by side while two runs on the same block take turns.
//!
//! A process that dies loses its locks with it (the kernel releases them), so a kill -9 never
//! leaves an emission locked. The holder writes its pid and host into the file, for messages.
//! Locks are always taken in the order emission, then block, and the emission lock is never
//! held while waiting for a block: no deadlock between runs.
//!
//! Within one process, `flock` is no help: two open file descriptions of one file are two
//! holders to the kernel, so a process that takes a lock it already holds waits for itself,
//! forever. A registry of the locks this process holds (by device and inode, whatever the
//! path's spelling) refuses that at once, as the bug it is. Releasing is checked: a lock that
//! cannot be released is an error ([`LockGuard::release`]), and its file is closed all the
//! same, which releases it.

use crate::fs::{files, FsError};
use crate::interrupt;
use std::collections::BTreeSet;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Why a lock of an emission folder was not opened, taken or released.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The access of the folder's files could not be found out (see [`FsError`]).
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The lock file could not be opened or created (a link at its name, no permission...).
    #[error("cannot open the lock file {}", .path.display())]
    Open {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: FsError,
    },
    /// The lock file, once open, could not be looked at.
    #[error("cannot read the lock file {}", .path.display())]
    Read {
        /// The lock file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// This process already holds (or waits for) the lock it asked for: waiting would never
    /// end. A bug of the program, to report.
    #[error(
        "{what} is already held by this process (lock file {}): taking it again would wait forever. This is a bug of emission-factory: please report it",
        .path.display()
    )]
    HeldHere {
        /// What the lock covers, e.g. `the emission`, `block 00001`.
        what: String,
        /// The lock file.
        path: PathBuf,
    },
    /// A signal came while the run waited for the lock: it stopped without taking it.
    #[error(transparent)]
    Interrupted(#[from] interrupt::Interrupted),
    /// The kernel refused to lock the file.
    #[error("cannot lock {what} ({})", .path.display())]
    Lock {
        /// What the lock covers.
        what: String,
        /// The lock file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The kernel refused to release the lock; its file was closed all the same, which
    /// releases it.
    #[error("cannot release the lock of {what} ({})", .path.display())]
    Release {
        /// What the lock covers.
        what: String,
        /// The lock file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// The emission-wide lock file's name.
pub const EMISSION_LOCK: &str = ".emission.lock";

/// The lock file of block `block`.
pub fn block_lock_name(block: u32) -> String {
    format!(".block-{block:05}.lock")
}

/// The lock files this process holds or is waiting for, by (device, inode).
static HELD: Mutex<BTreeSet<(u64, u64)>> = Mutex::new(BTreeSet::new());

fn held() -> std::sync::MutexGuard<'static, BTreeSet<(u64, u64)>> {
    // The set stays consistent whatever panicked while holding it: each change is one call.
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// An open lock file, not yet locked.
pub struct LockFile {
    file: File,
    path: PathBuf,
    what: String,
    /// The file's (device, inode): the lock's identity in [`HELD`].
    id: (u64, u64),
}

/// A held lock. [`LockGuard::release`] releases it and says if that failed; dropped, it is
/// released all the same (on the way out of an error, which is the one reported).
pub struct LockGuard {
    lock: Option<LockFile>,
}

impl LockFile {
    /// Opens (or creates) the emission lock of `folder`.
    pub fn emission(folder: &Path) -> Result<LockFile, LockError> {
        LockFile::open(&folder.join(EMISSION_LOCK), "the emission".into())
    }

    /// Opens (or creates) the lock of block `block` in `folder`.
    pub fn block(folder: &Path, block: u32) -> Result<LockFile, LockError> {
        LockFile::open(
            &folder.join(block_lock_name(block)),
            format!("block {block:05}"),
        )
    }

    fn open(path: &Path, what: String) -> Result<LockFile, LockError> {
        // 0600 even in a folder shared with a group (--group), never through a link: a lock
        // file that another account can open, it can flock, and stall every run of the
        // emission. A lock an earlier version left 0640 is made 0600 again.
        let file = files::open_in_place(path, files::Access::PRIVATE, false).map_err(|source| {
            LockError::Open {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let meta = file.metadata().map_err(|source| LockError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(LockFile {
            file,
            path: path.to_path_buf(),
            what,
            id: identity(&meta, path)?,
        })
    }

    /// Takes the lock, waiting while another process holds it; `on_wait` is told once, with a
    /// sentence naming the holder. A signal stops the wait ([`interrupt::Interrupted`]). A lock
    /// this process already holds (or waits for) is refused at once: waiting would never end.
    pub fn acquire(self, on_wait: &mut dyn FnMut(String)) -> Result<LockGuard, LockError> {
        if !held().insert(self.id) {
            return Err(LockError::HeldHere {
                what: self.what.clone(),
                path: self.path.clone(),
            });
        }
        if let Err(e) = self.wait(on_wait) {
            let id = self.id;
            drop(self);
            held().remove(&id);
            return Err(e);
        }
        // Who holds it, for the messages of others; a failure here does not matter.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let mut file = &self.file;
        let _ = file.set_len(0).and_then(|()| {
            file.rewind()?;
            writeln!(file, "pid {} on {}", std::process::id(), host.trim())
        });
        Ok(LockGuard { lock: Some(self) })
    }

    /// Waits until the lock is ours (see [`LockFile::acquire`]).
    fn wait(&self, on_wait: &mut dyn FnMut(String)) -> Result<(), LockError> {
        let mut told = false;
        loop {
            match self.file.try_lock() {
                Ok(()) => return Ok(()),
                Err(TryLockError::WouldBlock) => {
                    if !told {
                        told = true;
                        on_wait(format!(
                            "{} is locked by another run ({}; lock file {}): waiting for it to finish",
                            self.what,
                            self.holder(),
                            self.path.display()
                        ));
                    }
                    interrupt::check()?;
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(TryLockError::Error(source)) => {
                    return Err(LockError::Lock {
                        what: self.what.clone(),
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
    }

    /// What the lock file says of its holder.
    fn holder(&self) -> String {
        let mut text = String::new();
        let mut file = &self.file;
        let _ = file
            .rewind()
            .and_then(|()| file.take(200).read_to_string(&mut text));
        let text = text.trim();
        if text.is_empty() || !text.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
            "holder unknown".into()
        } else {
            text.to_string()
        }
    }
}

impl LockGuard {
    /// Releases the lock. An error says the kernel refused; the lock file is closed all the
    /// same, which releases the lock (closing cannot fail to), so no run waits for it after.
    pub fn release(mut self) -> Result<(), LockError> {
        let Some(lock) = self.lock.take() else {
            return Ok(());
        };
        let unlocked = lock.file.unlock();
        let (what, path, id) = (lock.what.clone(), lock.path.clone(), lock.id);
        // Closed before the claim is given back: until then, the lock may still be held.
        drop(lock);
        held().remove(&id);
        unlocked.map_err(|source| LockError::Release { what, path, source })
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take() {
            // On the way out of an error: that error is the one said. Closing the file
            // releases the lock even if unlocking failed.
            let _ = lock.file.unlock();
            let id = lock.id;
            drop(lock);
            held().remove(&id);
        }
    }
}

/// A file's (device, inode).
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata, _path: &Path) -> Result<(u64, u64), LockError> {
    use std::os::unix::fs::MetadataExt;
    Ok((meta.dev(), meta.ino()))
}

/// Without inodes: a hash of the file's canonical path.
#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata, path: &Path) -> Result<(u64, u64), LockError> {
    use std::hash::{Hash, Hasher};
    let canonical = path.canonicalize().map_err(|source| LockError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut hasher);
    Ok((0, hasher.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock file is the running account's alone, in a folder shared with a group too, and
    /// one an earlier version left open to the group is closed to it again.
    #[cfg(unix)]
    #[test]
    fn a_lock_is_0600_even_in_a_folder_shared_with_a_group() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("e0001");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o750)).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        drop(LockFile::emission(&folder).unwrap());
        assert_eq!(mode(&folder.join(EMISSION_LOCK)), 0o600);
        let block = folder.join(block_lock_name(7));
        std::fs::write(&block, "").unwrap();
        std::fs::set_permissions(&block, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(mode(&block), 0o640);
        drop(LockFile::block(&folder, 7).unwrap());
        assert_eq!(mode(&block), 0o600);
    }

    /// Runs `take` on another thread; its result, or a failure if it is still waiting after a
    /// few seconds (a process waiting for itself waits forever).
    fn at_once<T: Send + 'static>(take: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(take());
        });
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the process waited for a lock it holds itself")
    }

    #[test]
    fn a_lock_this_process_holds_is_refused_at_once_never_awaited() {
        let dir = tempfile::tempdir().unwrap();
        let first = LockFile::emission(dir.path()).unwrap();
        let guard = first.acquire(&mut |_| panic!("nobody holds it")).unwrap();
        // Another open file description of the same file, under another spelling of its path
        // (a link to the folder), from this thread and from another one.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        for path in [dir.path().to_path_buf(), link.clone()] {
            let again = LockFile::emission(&path).unwrap();
            let err = match again.acquire(&mut |m| panic!("it waits: {m}")) {
                Ok(_) => panic!("a second hold of the same lock was granted"),
                Err(e) => format!("{e:#}"),
            };
            assert!(err.contains("already held by this process"), "{err}");
            let err = at_once(move || {
                let again = LockFile::emission(&path).unwrap();
                again
                    .acquire(&mut |_| {})
                    .map(|_| ())
                    .map_err(|e| format!("{e:#}"))
            })
            .unwrap_err();
            assert!(err.contains("the emission"), "{err}");
            assert!(err.contains(".emission.lock"), "{err}");
        }
        // Released, it can be taken again, once.
        guard.release().unwrap();
        let again = LockFile::emission(&link).unwrap();
        let held = again.acquire(&mut |m| panic!("it waits: {m}")).unwrap();
        held.release().unwrap();
        // A block's lock is another lock.
        let emission = LockFile::emission(dir.path()).unwrap();
        let block = LockFile::block(dir.path(), 1).unwrap();
        let e = emission.acquire(&mut |m| panic!("it waits: {m}")).unwrap();
        let b = block.acquire(&mut |m| panic!("it waits: {m}")).unwrap();
        b.release().unwrap();
        e.release().unwrap();
    }

    #[test]
    fn a_second_holder_waits_until_the_first_releases() {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(EMISSION_LOCK);
        // The first holder is another process (flock(1) of util-linux, running a shell that
        // says who it is, then holds the lock until its standard input closes): within this
        // process, a second holder is refused instead (the test above).
        let first = Command::new("flock")
            .arg(&path)
            .args([
                "sh",
                "-c",
                "echo \"pid $$ on elsewhere\" > \"$0\"; echo $$; read x",
            ])
            .arg(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn();
        let mut first = match first {
            Ok(child) => child,
            Err(e) => {
                crate::test_support::cannot_run(&format!("flock(1) (util-linux) cannot run: {e}"));
                return;
            }
        };
        let mut line = String::new();
        BufReader::new(first.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let holder = format!("pid {} on elsewhere", line.trim());
        let folder = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let second = LockFile::emission(&folder).unwrap();
            let mut said = Vec::new();
            let guard = second.acquire(&mut |m| said.push(m)).unwrap();
            tx.send(said).unwrap();
            guard.release().unwrap();
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(rx.try_recv().is_err(), "the second holder must wait");
        drop(first.stdin.take());
        first.wait().unwrap();
        let said = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        waiter.join().unwrap();
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("locked by another run"), "{}", said[0]);
        assert!(said[0].contains(&holder), "{holder}: {}", said[0]);
        // The new holder said who it is, for the messages of the next.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(&format!("pid {} on ", std::process::id())),
            "{text}"
        );
    }
}
