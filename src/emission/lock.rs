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

use crate::block::files;
use crate::interrupt;
use anyhow::{Context, Result};
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The emission-wide lock file's name.
pub const EMISSION_LOCK: &str = ".emission.lock";

/// The lock file of block `block`.
pub fn block_lock_name(block: u32) -> String {
    format!(".block-{block:05}.lock")
}

/// An open lock file, not yet locked.
pub struct LockFile {
    file: File,
    path: PathBuf,
    what: String,
}

/// A held lock; released when dropped.
pub struct LockGuard<'a> {
    lock: &'a LockFile,
}

impl LockFile {
    /// Opens (or creates) the emission lock of `folder`.
    pub fn emission(folder: &Path) -> Result<LockFile> {
        LockFile::open(&folder.join(EMISSION_LOCK), "the emission".into())
    }

    /// Opens (or creates) the lock of block `block` in `folder`.
    pub fn block(folder: &Path, block: u32) -> Result<LockFile> {
        LockFile::open(
            &folder.join(block_lock_name(block)),
            format!("block {block:05}"),
        )
    }

    fn open(path: &Path, what: String) -> Result<LockFile> {
        // 0600 (0640 in a folder shared with a group), never through a link: a lock file that
        // others can open, they can flock, and stall every run.
        let access = files::Access::of_folder(files::parent(path))?;
        let file = files::open_in_place(path, access, false)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        Ok(LockFile {
            file,
            path: path.to_path_buf(),
            what,
        })
    }

    /// Takes the lock, waiting while another process holds it; `on_wait` is told once, with a
    /// sentence naming the holder. A signal stops the wait ([`interrupt::Interrupted`]).
    pub fn acquire(&self, on_wait: &mut dyn FnMut(String)) -> Result<LockGuard<'_>> {
        let mut told = false;
        loop {
            match self.file.try_lock() {
                Ok(()) => break,
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
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| {
                        format!("cannot lock {} ({})", self.what, self.path.display())
                    })
                }
            }
        }
        let guard = LockGuard { lock: self };
        // Who holds it, for the messages of others; a failure here does not matter.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let mut file = &self.file;
        let _ = file.set_len(0).and_then(|()| {
            file.rewind()?;
            writeln!(file, "pid {} on {}", std::process::id(), host.trim())
        });
        Ok(guard)
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

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        let _ = self.lock.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_until_the_first_releases() {
        let dir = tempfile::tempdir().unwrap();
        let first = LockFile::emission(dir.path()).unwrap();
        let guard = first
            .acquire(&mut |_| panic!("nobody holds it yet"))
            .unwrap();
        let path = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            // Another open file description: flock treats it as another holder.
            let second = LockFile::emission(&path).unwrap();
            let mut said = Vec::new();
            let _g = second.acquire(&mut |m| said.push(m)).unwrap();
            tx.send(said).unwrap();
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(rx.try_recv().is_err(), "the second holder must wait");
        drop(guard);
        let said = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        waiter.join().unwrap();
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("locked by another run"), "{}", said[0]);
        assert!(
            said[0].contains(&format!("pid {}", std::process::id())),
            "{}",
            said[0]
        );
    }
}
