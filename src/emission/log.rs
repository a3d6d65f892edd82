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

use crate::emission::lock::{LockError, LockFile};
use crate::emission::FileError;
use crate::fs::FsError;
use crate::json::{parse_strict, Layout, StrictJsonError};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why the audit log was not read, or a line not appended to it.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A line could not be written as JSON.
    #[error("cannot encode a log entry")]
    Encode(#[source] serde_json::Error),
    /// The log could not be opened or read (not a regular file, a link at its name, no
    /// permission...).
    #[error("cannot read {}", .path.display())]
    Read {
        /// The log.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The log is larger than any log this program writes.
    #[error("{}: larger than {MAX_LOG_BYTES} bytes", .path.display())]
    TooLarge {
        /// The log.
        path: PathBuf,
    },
    /// The log's last line has no line end.
    #[error(
        "{}: the last line has no line end: the log was truncated or a write was cut",
        .path.display()
    )]
    Truncated {
        /// The log.
        path: PathBuf,
    },
    /// A line longer than any line this program writes.
    #[error("{} line {line}: longer than {MAX_LINE_BYTES} bytes", .path.display())]
    LineTooLong {
        /// The log.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
    },
    /// A line that is not a log entry.
    #[error(
        "{} line {line}: not a log entry ({error}): the line was edited or damaged",
        .path.display()
    )]
    NotEntry {
        /// The log.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// Why (shown in the sentence).
        error: StrictJsonError,
    },
    /// A line whose `prev_sha256` is not the hash of the line before it.
    #[error(
        "{} line {line}: prev_sha256 is {}, the line before hashes to {before}: a line was deleted, edited or reordered",
        .path.display(),
        crate::emission::shown(.prev.as_bytes())
    )]
    Chain {
        /// The log.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// Its `prev_sha256`, as found.
        prev: String,
        /// The hash of the line before it (or [`GENESIS`]).
        before: String,
    },
    /// A line with no signature where only the first lines, of seed runs, may have none.
    #[error(
        "{} line {line}: no signature (only the lines of seed runs before the first signed line may have none): the line was edited, or written without the emission's key",
        .path.display()
    )]
    Unsigned {
        /// The log.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
    },
    /// A line whose signature is refused.
    #[error(
        "{} line {line}: {error}: the line was edited, or written without the emission's key",
        .path.display()
    )]
    Signature {
        /// The log.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// Why (shown in the sentence).
        error: LineSignatureError,
    },
    /// The emission lock could not be taken (see [`LockError`]).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The line is appended, and the emission lock could not be released after.
    #[error("the line is appended, but the emission lock could not be released")]
    Release(#[source] LockError),
    /// A line other than a seed run's was to be appended without a signature (a bug).
    #[error("only a seed run's line is appended without a signature")]
    NotSeedLine,
    /// A seed run's unsigned line, after signed ones.
    #[error(
        "{}: the emission's audit log already holds signed lines, and a seed run, which has no signing key, cannot add an unsigned line after them",
        .path.display()
    )]
    UnsignedAfterSigned {
        /// The log.
        path: PathBuf,
    },
    /// A line other than a seed run's, and no key to sign it (a bug).
    #[error("a log line other than a seed run's is signed")]
    NoKey,
    /// The log's folder, or the record, could not be looked at, or the log not opened to
    /// append (see [`FsError`]).
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The record the line names could not be read (see [`FileError`]).
    #[error(transparent)]
    File(#[from] FileError),
    /// The line could not be written to the log, or not flushed to the disk.
    #[error("cannot append to {} (disk full?)", .path.display())]
    Append {
        /// The log.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

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
    /// SHA-256 of the emission record (`emission.json`) in the folder when the line was
    /// written, if there was one: it binds the line to its emission, so that another
    /// emission's log signed by the same key is not taken for this one's. Absent in lines
    /// written before the field was (and in the lines of runs before the record existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_sha256: Option<String>,
    /// SHA-256 of the previous line (without its line end), or [`GENESIS`].
    pub prev_sha256: String,
    /// The emission key's Ed25519 signature (128 hex digits) of this line's bytes without
    /// this field: [`Entry::signed_bytes`]. Absent only on the line of a `seed` run, which
    /// has no signing key yet (its hash is in the next line, which is signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
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
            record_sha256: None,
            prev_sha256: GENESIS.into(),
            signature: None,
        }
    }

    /// The bytes signed: the line as written without its `signature` field, that is the
    /// compact JSON of every other field in order (FORMAT.md, "Audit log").
    pub fn signed_bytes(&self) -> Result<Vec<u8>, LogError> {
        self.unsigned_json().map_err(LogError::Encode)
    }

    /// [`Entry::signed_bytes`], with serde's error.
    fn unsigned_json(&self) -> serde_json::Result<Vec<u8>> {
        let unsigned = Entry {
            signature: None,
            ..self.clone()
        };
        serde_json::to_vec(&unsigned)
    }
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The user: the name the environment gives (`USER`, `LOGNAME`) with the real user id, and
/// `SUDO_USER` too when the run was made through sudo (who actually typed the command).
fn user() -> String {
    let uid = rustix::process::getuid().as_raw();
    let sudo = std::env::var("SUDO_USER")
        .ok()
        .filter(|u| !u.is_empty())
        .map(|u| format!(" via sudo by {}", crate::untrusted::shown_text(&u, 64)))
        .unwrap_or_default();
    for var in ["USER", "LOGNAME"] {
        if let Ok(u) = std::env::var(var) {
            if !u.is_empty() {
                return format!("{} (uid {uid}){sudo}", crate::untrusted::shown_text(&u, 64));
            }
        }
    }
    // Not the owner of /proc/self: a non-dumpable process's is root's.
    if !sudo.is_empty() {
        return format!("uid {uid}{sudo}");
    }
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
    /// The last line (from 1) that says a seal was made: a sealing run's line (its result
    /// starts with [`SEALING`], or is [`CHECKING_SEAL`]) not followed by the line saying that
    /// this sealing failed (its result starts with [`SEALING_FAILED`]).
    pub seal_recorded: Option<u64>,
    /// Lines without a signature: lines of `seed` runs, all before the first signed line.
    pub unsigned: u64,
    /// The last line (from 1) of a `close` run that says the emission was closed, with the
    /// SHA-256 of the final reconciliation it names ([`closing_result`]).
    pub closing_recorded: Option<(u64, String)>,
    /// The record each signed line names (`record_sha256`), with its line (from 1).
    pub records_named: Vec<(u64, String)>,
    /// Every block a signed line says its run made, with the first such line.
    pub blocks_made: BTreeMap<u32, u64>,
    /// The withdrawal records the signed lines of `withdraw` runs name: line, file name and
    /// SHA-256 ([`withdrawal_named`]).
    pub withdrawals_recorded: Vec<(u64, String, String)>,
    /// The reshares' custody files the signed lines of `seed` runs name: line, file name and
    /// SHA-256 ([`custody_named`]).
    pub custody_recorded: Vec<(u64, String, String)>,
}

/// The custody file a reshare's `seed` line names, as the ceremony writes its result:
/// `ok: emission.shares-SET.json (SHA-256 HEX), …`; the file name and hash.
pub fn custody_named(entry: &Entry) -> Option<(String, String)> {
    if entry.command != "seed" {
        return None;
    }
    let rest = entry.result.strip_prefix("ok: ")?;
    let (file, rest) = rest.split_once(" (SHA-256 ")?;
    let sha = rest.get(..64)?;
    let well_formed = file.starts_with("emission.shares-")
        && file.ends_with(".json")
        && rest[64..].starts_with(')')
        && sha.bytes().all(|b| b.is_ascii_hexdigit());
    well_formed.then(|| (file.to_string(), sha.to_string()))
}

/// The withdrawal record a `withdraw` run's line names, as `withdraw` writes its result:
/// `withdrew … from sale: withdrawal-NNNN.json (SHA-256 HEX)`; the file name and hash.
pub fn withdrawal_named(entry: &Entry) -> Option<(String, String)> {
    if entry.command != "withdraw" || !entry.result.starts_with("withdrew ") {
        return None;
    }
    let (_, tail) = entry.result.rsplit_once(": ")?;
    let (file, rest) = tail.split_once(" (SHA-256 ")?;
    let sha = rest.strip_suffix(')')?;
    let well_formed = file.starts_with("withdrawal-")
        && file.ends_with(".json")
        && sha.len() == 64
        && sha.bytes().all(|b| b.is_ascii_hexdigit());
    well_formed.then(|| (file.to_string(), sha.to_string()))
}

/// Checks the signature of a line, if it has one: the key's signature of
/// [`Entry::signed_bytes`] (which lines may have none is checked by the caller).
fn check_signature(entry: &Entry, key: &VerifyingKey) -> Result<(), LineSignatureError> {
    let Some(signature) = &entry.signature else {
        return Ok(());
    };
    let raw = hex::decode(signature)
        .ok()
        .filter(|raw| raw.len() == crate::block::keys::SIGNATURE_BYTES as usize)
        .ok_or(LineSignatureError::NotHex)?;
    let bytes = entry.unsigned_json().map_err(LineSignatureError::Encode)?;
    Ok(crate::block::keys::check(key, &bytes, &raw)?)
}

/// Why the signature of an audit-log line is refused.
#[derive(Debug, thiserror::Error)]
pub enum LineSignatureError {
    /// The field is not a signature in hex.
    #[error("the signature is not 128 hex digits")]
    NotHex,
    /// The line's signed bytes ([`Entry::signed_bytes`]) cannot be made.
    #[error("cannot encode a log entry: {0}")]
    Encode(serde_json::Error),
    /// The signature is refused.
    #[error(transparent)]
    Signature(#[from] crate::block::keys::SignatureError),
}

/// The start of the result of the line a sealing run appends before it writes the seal.
pub const SEALING: &str = "sealing";
/// The result of the line of a `seal` run on an emission already sealed.
pub const CHECKING_SEAL: &str = "checking the seal";
/// The start of the result of the line appended when a sealing run failed.
pub const SEALING_FAILED: &str = "error: sealing failed";
/// The start of the result of the line of a `close` run that closed the emission.
pub const CLOSED: &str = "closed the emission";

/// The result of the line of a `close` run: the emission closed, its final reconciliation
/// `file` with SHA-256 `sha256` (hex).
pub fn closing_result(file: &str, sha256: &str) -> String {
    format!("{CLOSED}: {file} (SHA-256 {sha256})")
}

/// The SHA-256 a `close` run's line names, if `entry` is one ([`closing_result`]).
fn closing_sha256(entry: &Entry) -> Option<String> {
    if entry.command != "close" {
        return None;
    }
    let rest = entry.result.strip_prefix(CLOSED)?.strip_prefix(": ")?;
    let (_, sha) = rest.strip_suffix(')')?.rsplit_once(" (SHA-256 ")?;
    (sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_string())
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

/// Reads the log of `folder` and checks its chain and every line's signature by `key`; a
/// missing log is an empty chain.
pub fn read_chain(folder: &Path, key: &VerifyingKey) -> Result<Chain, LogError> {
    read_lines(folder, Some(key))
}

/// The chain of the log of `folder` without its signatures checked: for a `seed` run, which
/// has no key to check them with, and only appends.
fn read_chain_unsigned(folder: &Path) -> Result<Chain, LogError> {
    read_lines(folder, None)
}

fn read_lines(folder: &Path, key: Option<&VerifyingKey>) -> Result<Chain, LogError> {
    let path = folder.join(LOG_FILE);
    let bytes = match crate::fs::open::open_regular_nofollow(&path) {
        Ok(file) => {
            let mut bytes = Vec::new();
            if let Err(source) = file.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes) {
                return Err(LogError::Read { path, source });
            }
            if bytes.len() as u64 > MAX_LOG_BYTES {
                return Err(LogError::TooLarge { path });
            }
            bytes
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => return Err(LogError::Read { path, source }),
    };
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        return Err(LogError::Truncated { path });
    }
    let mut chain = Chain {
        lines: 0,
        hashes: Vec::new(),
        seal_recorded: None,
        unsigned: 0,
        closing_recorded: None,
        records_named: Vec::new(),
        blocks_made: BTreeMap::new(),
        withdrawals_recorded: Vec::new(),
        custody_recorded: Vec::new(),
    };
    let mut sealing: Option<u64> = None;
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
            return Err(LogError::LineTooLong { path, line: n });
        }
        let entry: Entry = match parse_strict(line, Layout::Line) {
            Ok(entry) => entry,
            Err(error) => {
                return Err(LogError::NotEntry {
                    path,
                    line: n,
                    error,
                })
            }
        };
        if entry.prev_sha256 != prev {
            return Err(LogError::Chain {
                path,
                line: n,
                prev: entry.prev_sha256,
                before: prev,
            });
        }
        let signed_before = chain.lines - chain.unsigned > 0;
        if entry.signature.is_none() && (entry.command != "seed" || signed_before) {
            return Err(LogError::Unsigned { path, line: n });
        }
        if let Some(key) = key {
            if let Err(error) = check_signature(&entry, key) {
                return Err(LogError::Signature {
                    path,
                    line: n,
                    error,
                });
            }
        }
        chain.lines += 1;
        if entry.signature.is_none() {
            chain.unsigned += 1;
        } else {
            if let Some(sha) = &entry.record_sha256 {
                chain.records_named.push((chain.lines, sha.clone()));
            }
            for &block in &entry.blocks_made {
                chain.blocks_made.entry(block).or_insert(chain.lines);
            }
            if let Some((file, sha)) = withdrawal_named(&entry) {
                chain.withdrawals_recorded.push((chain.lines, file, sha));
            }
            if let Some((file, sha)) = custody_named(&entry) {
                chain.custody_recorded.push((chain.lines, file, sha));
            }
        }
        prev = line_hash(line);
        chain.hashes.push(prev.clone());
        if let Some(sha) = closing_sha256(&entry) {
            chain.closing_recorded = Some((chain.lines, sha));
        }
        if entry.result.starts_with(SEALING_FAILED) {
            sealing = None;
        } else {
            if let Some(sealed) = sealing.take() {
                chain.seal_recorded = Some(sealed);
            }
            if entry.result.starts_with(SEALING) || entry.result == CHECKING_SEAL {
                sealing = Some(chain.lines);
            }
        }
    }
    if let Some(sealed) = sealing {
        chain.seal_recorded = Some(sealed);
    }
    Ok(chain)
}

/// Appends `entry` to the log of `folder`, chaining it to the last line and signing it with
/// `key`, under the emission lock (taken here: the caller must not hold it). Returns the new
/// line's hash.
pub fn append(folder: &Path, mut entry: Entry, key: &SigningKey) -> Result<String, LogError> {
    let held = LockFile::emission(folder)?.acquire(&mut |_| {})?;
    let line = append_locked(folder, &mut entry, Some(key))?;
    held.release().map_err(LogError::Release)?;
    Ok(line)
}

/// The line of a `seed` run, which has no signing key yet: appended unsigned (its hash is in
/// the next line, which is signed). Takes the emission lock.
pub fn append_seed_line(folder: &Path, mut entry: Entry) -> Result<String, LogError> {
    if entry.command != "seed" {
        return Err(LogError::NotSeedLine);
    }
    let held = LockFile::emission(folder)?.acquire(&mut |_| {})?;
    let line = append_locked(folder, &mut entry, None)?;
    held.release().map_err(LogError::Release)?;
    Ok(line)
}

/// [`append`] for a caller that already holds the emission lock; `key` is `None` only for
/// [`append_seed_line`]. The log's lines are checked (chain and signatures) against `key`
/// first; without a key, only their chain.
pub fn append_locked(
    folder: &Path,
    entry: &mut Entry,
    key: Option<&SigningKey>,
) -> Result<String, LogError> {
    let chain = match key {
        Some(key) => read_chain(folder, &key.verifying_key())?,
        None => read_chain_unsigned(folder)?,
    };
    if key.is_none() && chain.unsigned < chain.lines {
        return Err(LogError::UnsignedAfterSigned {
            path: folder.join(LOG_FILE),
        });
    }
    entry.prev_sha256 = chain.last();
    // The line names the record it is written under (FORMAT.md, "Audit log").
    let record_path = folder.join(crate::emission::record::RECORD_FILE);
    entry.record_sha256 = if crate::fs::files::entry_exists(&record_path)? {
        let bytes =
            crate::emission::read_bounded(&record_path, crate::emission::record::MAX_RECORD_BYTES)?;
        Some(hex::encode(Sha256::digest(&bytes)))
    } else {
        None
    };
    // Whatever a caller put there, nothing that looks like a secret is written.
    entry.result = crate::secrets::scrub(&entry.result);
    for arg in &mut entry.args {
        *arg = crate::secrets::scrub(arg);
    }
    entry.signature = match key {
        Some(key) => Some(hex::encode(crate::block::keys::sign(
            key,
            &entry.signed_bytes()?,
        ))),
        None if entry.command == "seed" => None,
        None => return Err(LogError::NoKey),
    };
    let line = serde_json::to_vec(&entry).map_err(LogError::Encode)?;
    let path = folder.join(LOG_FILE);
    let access = crate::fs::files::Access::of_folder(folder)?;
    let mut file = crate::fs::files::open_in_place(&path, access, true)?;
    let mut bytes = line.clone();
    bytes.push(b'\n');
    if let Err(source) = file.write_all(&bytes).and_then(|()| file.sync_all()) {
        return Err(LogError::Append { path, source });
    }
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
        append(dir.path(), e, &SigningKey::from_bytes(&[7; 32])).unwrap();
        let log = std::fs::read_to_string(dir.path().join(LOG_FILE)).unwrap();
        assert!(!log.contains("QYQSZ"), "{log}");
        assert!(log.contains("<redacted: age secret key>"), "{log}");
        assert!(log.contains("--recipient"), "{log}");
    }

    #[test]
    fn the_chain_detects_a_deleted_edited_or_truncated_line() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::from_bytes(&[7; 32]);
        let public = key.verifying_key();
        for r in ["one", "two", "three"] {
            append(dir.path(), entry(r), &key).unwrap();
        }
        let chain = read_chain(dir.path(), &public).unwrap();
        assert_eq!(chain.lines, 3);
        let path = dir.path().join(LOG_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Deleted.
        std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[2])).unwrap();
        assert!(read_chain(dir.path(), &public).is_err());
        // Edited.
        std::fs::write(&path, text.replace("\"two\"", "\"TWO\"")).unwrap();
        assert!(read_chain(dir.path(), &public).is_err());
        // Truncated in the middle of a line.
        std::fs::write(&path, &text[..text.len() - 5]).unwrap();
        assert!(read_chain(dir.path(), &public).is_err());
        // Truncated at a line end: the chain holds, but its last hash is not the sealed one.
        std::fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
        assert_eq!(
            read_chain(dir.path(), &public).unwrap().last(),
            chain.hashes[1]
        );
        assert_ne!(
            read_chain(dir.path(), &public).unwrap().last(),
            chain.last()
        );
    }
}
