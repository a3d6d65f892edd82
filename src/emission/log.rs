//! The emission's audit trail (`emission.log.jsonl`): one JSON line per run of `emit`, `seal`
//! or `seed` on the emission, each carrying the SHA-256 of the line before it, appended under
//! the emission lock (so jobs on several machines append to one log). The seal records the hash
//! of the last line, so `verify` detects a deleted, edited, reordered or truncated line.
//!
//! No seed, share or private key ever reaches the log. The arguments of a line are not the
//! process's `argv` but what the binary registered with [`set_run_arguments`], built from the
//! parsed command line with secret values redacted by type (the seed); and every argument and
//! result is scrubbed again of anything that looks like a secret ([`crate::secrets::scrub`]:
//! an age secret key given by mistake as a recipient, a PEM private key).

use crate::emission::lock::LockFile;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;

/// File name of the log in the emission folder.
pub const LOG_FILE: &str = "emission.log.jsonl";
/// The `prev_sha256` of the first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// Largest log read (a line is a few hundred bytes; this is millions of runs).
const MAX_LOG_BYTES: u64 = 256 << 20;
/// Largest line accepted.
const MAX_LINE_BYTES: usize = 64 << 10;

/// The arguments of this process's run, as its log lines show them (see [`set_run_arguments`]).
static RUN_ARGUMENTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Registers the arguments this process's log lines show: the parsed command line, its secret
/// values already redacted by the caller (the binary redacts `--seed` by its type). Each is
/// scrubbed of secrets again ([`crate::secrets::scrub`]) and cut to 512 characters. Only the
/// first call counts; without one, lines show no arguments (never `argv`).
pub fn set_run_arguments(args: Vec<String>) {
    let _ = RUN_ARGUMENTS.set(
        args.iter()
            .map(|a| crate::secrets::scrub(a).chars().take(512).collect())
            .collect(),
    );
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// When the run ended (UTC, RFC 3339).
    pub time: String,
    /// The machine.
    pub host: String,
    /// The user who ran it.
    pub user: String,
    /// The subcommand (`emit`, `seal`, `seed`).
    pub command: String,
    /// Its arguments, secrets redacted.
    pub args: Vec<String>,
    /// Blocks made by this run.
    pub blocks_made: Vec<u32>,
    /// Blocks found complete, verified and kept.
    pub blocks_kept: Vec<u32>,
    /// Blocks that failed.
    pub blocks_failed: Vec<u32>,
    /// `ok`, or the error.
    pub result: String,
    /// SHA-256 of the previous line (without its line end), or [`GENESIS`].
    pub prev_sha256: String,
}

impl Entry {
    /// A line for the current process's run of `command`; the block lists and result are
    /// filled in by the caller.
    pub fn for_this_run(command: &str) -> Entry {
        Entry {
            time: crate::emission::record::now(),
            host: host(),
            user: user(),
            command: command.into(),
            args: RUN_ARGUMENTS.get().cloned().unwrap_or_default(),
            blocks_made: Vec::new(),
            blocks_kept: Vec::new(),
            blocks_failed: Vec::new(),
            result: "ok".into(),
            prev_sha256: GENESIS.into(),
        }
    }
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn user() -> String {
    for var in ["USER", "LOGNAME"] {
        if let Ok(u) = std::env::var(var) {
            if !u.is_empty() {
                return u;
            }
        }
    }
    // Not the owner of /proc/self: a non-dumpable process's is root's.
    #[cfg(unix)]
    let user = format!("uid {}", rustix::process::getuid().as_raw());
    #[cfg(not(unix))]
    let user = "unknown".to_string();
    user
}

/// SHA-256 of a line's bytes (without its line end), hex.
pub fn line_hash(line: &[u8]) -> String {
    hex::encode(Sha256::digest(line))
}

/// What a read of the log found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// Lines in the log.
    pub lines: u64,
    /// Hash of every line, in order.
    pub hashes: Vec<String>,
}

impl Chain {
    /// The hash of the last line, or [`GENESIS`] for an empty log.
    pub fn last(&self) -> String {
        self.hashes
            .last()
            .cloned()
            .unwrap_or_else(|| GENESIS.into())
    }
}

/// Reads the log of `folder` and checks its chain; a missing log is an empty chain.
pub fn read_chain(folder: &Path) -> Result<Chain> {
    let path = folder.join(LOG_FILE);
    let bytes = match crate::fs::open::open_regular_nofollow(&path) {
        Ok(file) => {
            let mut bytes = Vec::new();
            file.take(MAX_LOG_BYTES + 1)
                .read_to_end(&mut bytes)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if bytes.len() as u64 > MAX_LOG_BYTES {
                bail!("{}: larger than {MAX_LOG_BYTES} bytes", path.display());
            }
            bytes
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        bail!(
            "{}: the last line has no line end: the log was truncated or a write was cut",
            path.display()
        );
    }
    let mut chain = Chain {
        lines: 0,
        hashes: Vec::new(),
    };
    let mut prev = GENESIS.to_string();
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let lines: Vec<&[u8]> = if body.is_empty() {
        Vec::new()
    } else {
        body.split(|&b| b == b'\n').collect()
    };
    for (i, line) in lines.into_iter().enumerate() {
        let n = i + 1;
        if line.len() > MAX_LINE_BYTES {
            bail!(
                "{} line {n}: longer than {MAX_LINE_BYTES} bytes",
                path.display()
            );
        }
        let entry: Entry = serde_json::from_slice(line).map_err(|e| {
            anyhow::anyhow!(
                "{} line {n}: not a log entry ({e}): the line was edited or damaged",
                path.display()
            )
        })?;
        if entry.prev_sha256 != prev {
            bail!(
                "{} line {n}: prev_sha256 is {}, the line before hashes to {prev}: a line was deleted, edited or reordered",
                path.display(),
                crate::emission::shown(entry.prev_sha256.as_bytes())
            );
        }
        prev = line_hash(line);
        chain.hashes.push(prev.clone());
        chain.lines += 1;
    }
    Ok(chain)
}

/// Appends `entry` to the log of `folder`, chaining it to the last line, under the emission
/// lock (taken here: the caller must not hold it). Returns the new line's hash.
pub fn append(folder: &Path, mut entry: Entry) -> Result<String> {
    let lock = LockFile::emission(folder)?;
    let _held = lock.acquire(&mut |_| {})?;
    append_locked(folder, &mut entry)
}

/// [`append`] for a caller that already holds the emission lock.
pub fn append_locked(folder: &Path, entry: &mut Entry) -> Result<String> {
    let chain = read_chain(folder)?;
    entry.prev_sha256 = chain.last();
    // Whatever a caller put there, nothing that looks like a secret is written.
    entry.result = crate::secrets::scrub(&entry.result);
    for arg in &mut entry.args {
        *arg = crate::secrets::scrub(arg);
    }
    let line = serde_json::to_vec(&entry).context("cannot encode a log entry")?;
    let path = folder.join(LOG_FILE);
    let access = crate::block::files::Access::of_folder(folder)?;
    let mut file = crate::block::files::open_in_place(&path, access, true)?;
    let mut bytes = line.clone();
    bytes.push(b'\n');
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot append to {} (disk full?)", path.display()))?;
    Ok(line_hash(&line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(result: &str) -> Entry {
        let mut e = Entry::for_this_run("emit");
        e.result = result.into();
        e
    }

    #[test]
    fn nothing_that_looks_like_a_secret_is_appended() {
        let dir = tempfile::tempdir().unwrap();
        let key = "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSVQX7JR";
        let mut e = entry(&format!("error: {key}"));
        e.args = vec!["seed".into(), "--recipient".into(), key.into()];
        append(dir.path(), e).unwrap();
        let log = std::fs::read_to_string(dir.path().join(LOG_FILE)).unwrap();
        assert!(!log.contains("QYQSZ"), "{log}");
        assert!(log.contains("<redacted: age secret key>"), "{log}");
        assert!(log.contains("--recipient"), "{log}");
    }

    #[test]
    fn the_chain_detects_a_deleted_edited_or_truncated_line() {
        let dir = tempfile::tempdir().unwrap();
        for r in ["one", "two", "three"] {
            append(dir.path(), entry(r)).unwrap();
        }
        let chain = read_chain(dir.path()).unwrap();
        assert_eq!(chain.lines, 3);
        let path = dir.path().join(LOG_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Deleted.
        std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[2])).unwrap();
        assert!(read_chain(dir.path()).is_err());
        // Edited.
        std::fs::write(&path, text.replace("\"two\"", "\"TWO\"")).unwrap();
        assert!(read_chain(dir.path()).is_err());
        // Truncated in the middle of a line.
        std::fs::write(&path, &text[..text.len() - 5]).unwrap();
        assert!(read_chain(dir.path()).is_err());
        // Truncated at a line end: the chain holds, but its last hash is not the sealed one.
        std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
        assert_eq!(read_chain(dir.path()).unwrap().last(), chain.hashes[1]);
        assert_ne!(read_chain(dir.path()).unwrap().last(), chain.last());
    }
}
