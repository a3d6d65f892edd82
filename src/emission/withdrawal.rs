//! Withdrawal records (`withdrawal-NNNN.json` and its `.sig`): the signed, logged decision to
//! take a block, or a whole emission, off sale (a misprint found, a block stolen, a game
//! stopped). Written by `withdraw` into the emission folder with the emission's own key, never
//! over an earlier one (each gets the next number); `load` applies the records it finds in
//! the database, where the sale function never sells from a withdrawn block again, and
//! `db-verify` checks them there. Past sales are not touched: a withdrawal only stops sales.
//!
//! A record names its emission by game, stake, number, record SHA-256, seed commitment and key
//! fingerprint: a record of another emission, or one that does not verify with the key the
//! loader trusts, is refused and changes nothing ([`check_for`]).

use crate::block::id::{BlockId, EmissionId, FieldError};
use crate::block::keys::SignatureError;
use crate::emission::lock::{LockError, LockFile};
use crate::emission::log::{self, Entry, LogError};
use crate::emission::record::{self, Record, RecordError};
use crate::emission::seal::SealError;
use crate::emission::{read_bounded, FileError};
use crate::fs::FsError;
use crate::json::{parse_strict, Layout, StrictJsonError};
use crate::untrusted::{shown_text, SHOWN_CHARS};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Why a withdrawal was not written, or a withdrawal record not read or accepted. Every
/// refusal of a record read says that nothing was applied.
#[derive(Debug, thiserror::Error)]
pub enum WithdrawalError {
    /// The reason given is not one line of bounded text.
    #[error(transparent)]
    Reason(#[from] ReasonError),
    /// `--block 0`.
    #[error("--block 0: blocks are numbered from 1")]
    BlockZero,
    /// The emission lock could not be taken (see [`LockError`]).
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The emission's record could not be read, or there is none (see [`RecordError`]).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The blocks of the folder could not be listed (see [`SealError`]).
    #[error(transparent)]
    Seal(#[from] SealError),
    /// The block to withdraw is not in the folder.
    #[error(
        "--block {block}: the emission folder {} ({id}) holds no block {block} (its blocks: {}); give one of them, or leave out --block to withdraw the whole emission",
        .folder.display(),
        if .made.is_empty() { "none".to_string() } else { crate::emission::seal::ranges(.made) }
    )]
    NoSuchBlock {
        /// The block asked for.
        block: u32,
        /// The emission folder.
        folder: PathBuf,
        /// Its emission.
        id: EmissionId,
        /// The blocks it holds.
        made: Vec<u32>,
    },
    /// The folder holds as many withdrawal records as it may.
    #[error("{}: already {MAX_WITHDRAWALS} withdrawal records", .folder.display())]
    TooMany {
        /// The emission folder.
        folder: PathBuf,
    },
    /// A file could not be written, published or removed (see [`FsError`]).
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The record is written, and the audit log could not take its line: the record was
    /// removed again.
    #[error(
        "the withdrawal could not be recorded in the audit log ({}), so {file} was removed again: nothing is withdrawn; fix the log and run the same command again",
        log::LOG_FILE
    )]
    NotLogged {
        /// The record's file name.
        file: String,
        /// Why the log could not take the line.
        #[source]
        source: LogError,
    },
    /// The withdrawal is written and logged, and the emission lock could not be released.
    #[error("the withdrawal is written and logged, but the emission lock could not be released")]
    Release(#[source] LockError),
    /// The emission folder could not be listed.
    #[error("cannot list {}", .folder.display())]
    List {
        /// The emission folder.
        folder: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A record could not be read (see [`FileError`]).
    #[error(transparent)]
    File(#[from] FileError),
    /// A record's signature could not be read.
    #[error("{}: its signature is missing", .path.display())]
    SignatureMissing {
        /// The record.
        path: PathBuf,
        /// Why its signature could not be read.
        #[source]
        source: FileError,
    },
    /// A record whose number is not its file name's.
    #[error(
        "{}: the record says it is number {number}, its file name {named}: it was renamed; it is refused and nothing was applied (give it back its name)",
        .path.display()
    )]
    Renamed {
        /// The record.
        path: PathBuf,
        /// The number it holds.
        number: u32,
        /// The number of its file name.
        named: u32,
    },
    /// A record whose signature is not the key's.
    #[error(
        "{}: {error}: the withdrawal record was not signed with the key given, or was changed; it is refused and nothing was applied (remove it, or write a new one with `emission-factory withdraw` and the emission's key)",
        .path.display()
    )]
    Signature {
        /// The record (or its place in the database).
        path: PathBuf,
        /// Why (shown in the sentence).
        error: SignatureError,
    },
    /// Signed bytes that are not a withdrawal record.
    #[error(
        "{}: not a withdrawal record ({error}); it is refused and nothing was applied",
        .path.display()
    )]
    NotWithdrawal {
        /// The record (or its place in the database).
        path: PathBuf,
        /// Why (shown in the sentence).
        error: StrictJsonError,
    },
    /// A format this program does not read.
    #[error(
        "{}: withdrawal format {format} is not one this program reads ({WITHDRAWAL_FORMAT}); nothing was applied",
        .path.display()
    )]
    Format {
        /// The record (or its place in the database).
        path: PathBuf,
        /// Its format.
        format: u32,
    },
    /// A record whose reason is not one line of bounded text.
    #[error("{}: {error}", .path.display())]
    BadReason {
        /// The record (or its place in the database).
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ReasonError,
    },
    /// A record that names block 0.
    #[error("{}: names block 0; nothing was applied", .path.display())]
    NamesBlockZero {
        /// The record (or its place in the database).
        path: PathBuf,
    },
    /// A record of another emission than the one whose folder (or block) holds it (see
    /// [`ForeignWithdrawal`]).
    #[error(transparent)]
    Foreign(Box<ForeignWithdrawal>),
}

/// A withdrawal record of another emission than the one whose folder (or block) holds it
/// ([`check_for`]).
#[derive(Debug, thiserror::Error)]
#[error(
    "{}: this withdrawal record (of {of}) is not of the emission {id} whose folder holds it ({}); it is refused and nothing was applied: move it to its own emission's folder",
    .path.display(),
    .differences.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
)]
pub struct ForeignWithdrawal {
    /// The record.
    pub path: PathBuf,
    /// The emission it names.
    pub of: EmissionId,
    /// The emission it was found with.
    pub id: EmissionId,
    /// What differs.
    pub differences: Vec<BindingDifference>,
}

/// Why a withdrawal's reason is refused ([`check_reason`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReasonError {
    /// Nothing but white space.
    #[error("--reason is empty: say why the tickets are withdrawn (it is signed, logged and stored in the database)")]
    Empty,
    /// More than [`MAX_REASON_CHARS`] characters.
    #[error("--reason is longer than {MAX_REASON_CHARS} characters: shorten it (refer to a longer report by its name)")]
    TooLong,
    /// A line end, a tab, an escape...
    #[error("--reason holds a control character (a line end, a tab, an escape): give it on one line of plain text")]
    Control,
}

/// One way a withdrawal record differs from the emission it was found with ([`check_for`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingDifference {
    /// The field, e.g. `seed_sha256`.
    pub what: &'static str,
    /// The record's value.
    pub record: String,
    /// The emission's.
    pub emission: String,
}

impl std::fmt::Display for BindingDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} in the record, {} in the emission",
            self.what,
            shown_text(&self.record, SHOWN_CHARS),
            shown_text(&self.emission, SHOWN_CHARS)
        )
    }
}

/// The record's format number.
pub const WITHDRAWAL_FORMAT: u32 = 1;
/// Largest record read.
pub const MAX_WITHDRAWAL_BYTES: u64 = 64 << 10;
/// Longest reason, in characters.
pub const MAX_REASON_CHARS: usize = 1000;
/// Most records an emission folder may hold.
pub const MAX_WITHDRAWALS: u32 = 9999;

/// A withdrawal record. Its emission is one [`EmissionId`], checked at reading (a `game` that
/// is no game id, a `stake` that is not a canonical price, are refused, naming the field); on
/// disk the fields are those of [`WithdrawalWire`], in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "WithdrawalWire", into = "WithdrawalWire")]
pub struct Withdrawal {
    /// Always [`WITHDRAWAL_FORMAT`].
    pub format: u32,
    /// Its number in the emission folder (the `NNNN` of its file name).
    pub number: u32,
    /// The emission (fields `game`, `stake` and `emission`).
    pub id: EmissionId,
    /// SHA-256 of the emission record's bytes.
    pub record_sha256: String,
    /// SHA-256 of the seed (the emission's commitment).
    pub seed_sha256: String,
    /// SHA-256 of the emission's public key (SPKI DER).
    pub public_key_sha256: String,
    /// The block of the emission withdrawn, or `None` (JSON `null`): the whole emission.
    pub block: Option<u32>,
    /// Why, as the operator wrote it.
    pub reason: String,
    /// When (UTC, RFC 3339).
    pub time: String,
    /// Who (as the audit log names a user).
    pub user: String,
    /// On which machine.
    pub host: String,
    /// Program that wrote it.
    pub generator: String,
}

/// A withdrawal record as it is written: its fields in their order, the emission's loose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WithdrawalWire {
    format: u32,
    number: u32,
    game: String,
    stake: String,
    emission: u32,
    record_sha256: String,
    seed_sha256: String,
    public_key_sha256: String,
    block: Option<u32>,
    reason: String,
    time: String,
    user: String,
    host: String,
    generator: String,
}

impl TryFrom<WithdrawalWire> for Withdrawal {
    type Error = FieldError;

    fn try_from(w: WithdrawalWire) -> Result<Withdrawal, FieldError> {
        Ok(Withdrawal {
            format: w.format,
            number: w.number,
            id: EmissionId::of_fields(&w.game, &w.stake, w.emission)?,
            record_sha256: w.record_sha256,
            seed_sha256: w.seed_sha256,
            public_key_sha256: w.public_key_sha256,
            block: w.block,
            reason: w.reason,
            time: w.time,
            user: w.user,
            host: w.host,
            generator: w.generator,
        })
    }
}

impl From<Withdrawal> for WithdrawalWire {
    fn from(w: Withdrawal) -> WithdrawalWire {
        WithdrawalWire {
            format: w.format,
            number: w.number,
            game: w.id.game().to_string(),
            stake: w.id.stake().to_string(),
            emission: w.id.number(),
            record_sha256: w.record_sha256,
            seed_sha256: w.seed_sha256,
            public_key_sha256: w.public_key_sha256,
            block: w.block,
            reason: w.reason,
            time: w.time,
            user: w.user,
            host: w.host,
            generator: w.generator,
        }
    }
}

impl Withdrawal {
    /// The exact bytes written (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }

    /// `block 3` or `the whole emission`.
    pub fn what(&self) -> String {
        match self.block {
            Some(b) => format!("block {b}"),
            None => "the whole emission".into(),
        }
    }

    /// The block withdrawn, or `None`: the whole emission.
    pub fn block_id(&self) -> Option<BlockId> {
        self.block.map(|b| self.id.block(b))
    }
}

/// File name of record `n`.
pub fn file_name(n: u32) -> String {
    format!("withdrawal-{n:04}.json")
}

/// File name of its signature.
pub fn sig_name(n: u32) -> String {
    format!("withdrawal-{n:04}.json.sig")
}

/// The number of a record's file name (`withdrawal-0003.json` → 3).
fn number_of(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("withdrawal-")?.strip_suffix(".json")?;
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n >= 1)
}

/// A record found in a folder, its signature checked.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its file.
    pub path: PathBuf,
    /// The record.
    pub withdrawal: Withdrawal,
    /// Its exact bytes (the signed message).
    pub bytes: Vec<u8>,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
    /// Its 64-byte Ed25519 signature.
    pub signature: Vec<u8>,
}

/// What [`withdraw`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The record written.
    pub found: Found,
    /// SHA-256 of the audit-log line that records it.
    pub log_line_sha256: String,
}

/// Checks a reason: not empty, at most [`MAX_REASON_CHARS`] characters, no control character
/// (it is shown in logs and terminals and stored in the database).
pub fn check_reason(reason: &str) -> Result<(), ReasonError> {
    let trimmed = reason.trim();
    if trimmed.is_empty() {
        return Err(ReasonError::Empty);
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(ReasonError::TooLong);
    }
    if reason.chars().any(char::is_control) {
        return Err(ReasonError::Control);
    }
    Ok(())
}

/// Writes a withdrawal of `block` (or of the whole emission) with `reason` into the emission
/// folder `folder`, signed with `key`, which must be the emission's (its record is checked
/// with it), and appends the line that records it to the audit log, all under the emission
/// lock. The record gets the next free number and is published without replacing any file;
/// if the log cannot be appended, the record is removed again and the error says so.
pub fn withdraw(
    folder: &Path,
    key: &SigningKey,
    block: Option<u32>,
    reason: &str,
) -> Result<Written, WithdrawalError> {
    check_reason(reason)?;
    if block == Some(0) {
        return Err(WithdrawalError::BlockZero);
    }
    let public = key.verifying_key();
    let held = LockFile::emission(folder)?.acquire(&mut |_| {})?;
    let (rec, rec_bytes): (Record, Vec<u8>) =
        record::read(folder, &public)?.ok_or_else(|| RecordError::NoRecord {
            folder: folder.to_path_buf(),
        })?;
    if let Some(b) = block {
        let made = crate::emission::seal::complete_blocks(folder)?;
        if !made.contains(&b) {
            return Err(WithdrawalError::NoSuchBlock {
                block: b,
                folder: folder.to_path_buf(),
                id: rec.id,
                made,
            });
        }
    }
    let existing = list(folder)?;
    let number = existing.iter().copied().max().unwrap_or(0) + 1;
    if number > MAX_WITHDRAWALS {
        return Err(WithdrawalError::TooMany {
            folder: folder.to_path_buf(),
        });
    }
    let entry = Entry::for_this_run("withdraw");
    let withdrawal = Withdrawal {
        format: WITHDRAWAL_FORMAT,
        number,
        id: rec.id.clone(),
        record_sha256: hex::encode(Sha256::digest(&rec_bytes)),
        seed_sha256: rec.seed_sha256.clone(),
        public_key_sha256: rec.public_key_sha256.clone(),
        block,
        reason: reason.to_string(),
        time: entry.time.clone(),
        user: entry.user.clone(),
        host: entry.host.clone(),
        generator: crate::block::manifest::generator(),
    };
    let bytes = withdrawal.to_bytes();
    let signature = crate::block::keys::sign(key, &bytes);
    let path = folder.join(file_name(number));
    let sig_path = folder.join(sig_name(number));
    let access = crate::fs::files::Access::of_folder(folder)?;
    {
        let _publishing = crate::interrupt::critical();
        for p in [&path, &sig_path] {
            crate::fs::files::remove_stale_temps(p)?;
        }
        // The signature first, so a record on disk always has one; neither replaces a file.
        crate::fs::files::stage(&sig_path, &signature, access)?.publish_new()?;
        if let Err(e) = crate::fs::files::stage(&path, &bytes, access)?.publish_new() {
            let _ = crate::fs::files::remove(&sig_path);
            return Err(e.into());
        }
    }
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let mut entry = entry;
    entry.result = format!(
        "withdrew {} from sale: {} (SHA-256 {sha256})",
        withdrawal.what(),
        file_name(number)
    );
    let log_line_sha256 = match log::append_locked(folder, &mut entry, Some(key)) {
        Ok(line) => line,
        Err(e) => {
            let _guard = crate::interrupt::critical();
            let _ = crate::fs::files::remove(&path);
            let _ = crate::fs::files::remove(&sig_path);
            return Err(WithdrawalError::NotLogged {
                file: file_name(number),
                source: e,
            });
        }
    };
    held.release().map_err(WithdrawalError::Release)?;
    Ok(Written {
        found: Found {
            path,
            withdrawal,
            bytes,
            sha256,
            signature: signature.to_vec(),
        },
        log_line_sha256,
    })
}

/// The numbers of the withdrawal records of `folder`, in order.
fn list(folder: &Path) -> Result<Vec<u32>, WithdrawalError> {
    let entries = crate::fs::dir::list(folder).map_err(|source| WithdrawalError::List {
        folder: folder.to_path_buf(),
        source,
    })?;
    Ok(entries
        .iter()
        .filter_map(|e| e.name.to_str().and_then(number_of))
        .collect())
}

/// Reads every withdrawal record of `folder` and checks each one's signature with `key` (the
/// key the reader trusts) and its form. Any record that fails is an error naming its file:
/// a reader applies all of a folder's records or none.
pub fn read_all(folder: &Path, key: &VerifyingKey) -> Result<Vec<Found>, WithdrawalError> {
    let mut out = Vec::new();
    for n in list(folder)? {
        let path = folder.join(file_name(n));
        let sig_path = folder.join(sig_name(n));
        let bytes = read_bounded(&path, MAX_WITHDRAWAL_BYTES)?;
        let signature = match read_bounded(&sig_path, 64) {
            Ok(signature) => signature,
            Err(source) => return Err(WithdrawalError::SignatureMissing { path, source }),
        };
        let found = parse(&path, bytes, signature, key)?;
        if found.withdrawal.number != n {
            return Err(WithdrawalError::Renamed {
                path,
                number: found.withdrawal.number,
                named: n,
            });
        }
        out.push(found);
    }
    Ok(out)
}

/// Checks one record's bytes and signature (from a file or the database).
pub fn parse(
    path: &Path,
    bytes: Vec<u8>,
    signature: Vec<u8>,
    key: &VerifyingKey,
) -> Result<Found, WithdrawalError> {
    crate::block::keys::check(key, &bytes, &signature).map_err(|error| {
        WithdrawalError::Signature {
            path: path.to_path_buf(),
            error,
        }
    })?;
    let withdrawal: Withdrawal =
        parse_strict(&bytes, Layout::Pretty).map_err(|error| WithdrawalError::NotWithdrawal {
            path: path.to_path_buf(),
            error,
        })?;
    if withdrawal.format != WITHDRAWAL_FORMAT {
        return Err(WithdrawalError::Format {
            path: path.to_path_buf(),
            format: withdrawal.format,
        });
    }
    check_reason(&withdrawal.reason).map_err(|error| WithdrawalError::BadReason {
        path: path.to_path_buf(),
        error,
    })?;
    if withdrawal.block == Some(0) {
        return Err(WithdrawalError::NamesBlockZero {
            path: path.to_path_buf(),
        });
    }
    let sha256 = hex::encode(Sha256::digest(&bytes));
    Ok(Found {
        path: path.to_path_buf(),
        withdrawal,
        bytes,
        sha256,
        signature,
    })
}

/// What binds a record to its emission, as a block's manifest names it: the emission, its
/// seed, its key and its record.
#[derive(Debug, Clone, Copy)]
pub struct RecordBinding<'a> {
    /// The emission.
    pub emission: &'a EmissionId,
    /// SHA-256 of the seed.
    pub seed_sha256: &'a str,
    /// SHA-256 of the public key.
    pub public_key_sha256: &'a str,
    /// SHA-256 of the emission record, when the manifest names it.
    pub record_sha256: Option<&'a str>,
}

/// Checks that `found` belongs to the emission `id`: a record of another emission found in
/// a folder is refused (an error naming both), so that it changes nothing.
pub fn check_for(found: &Found, binding: &RecordBinding<'_>) -> Result<(), WithdrawalError> {
    let id = binding.emission;
    let w = &found.withdrawal;
    let mut differences = Vec::new();
    let mut differ = |what: &'static str, here: &str, there: &str| {
        if here != there {
            differences.push(BindingDifference {
                what,
                record: here.to_string(),
                emission: there.to_string(),
            });
        }
    };
    differ("game", w.id.game(), id.game());
    differ("stake", w.id.stake(), id.stake());
    differ(
        "emission",
        &w.id.number().to_string(),
        &id.number().to_string(),
    );
    differ("seed_sha256", &w.seed_sha256, binding.seed_sha256);
    differ(
        "public_key_sha256",
        &w.public_key_sha256,
        binding.public_key_sha256,
    );
    if let Some(r) = binding.record_sha256 {
        differ("record_sha256", &w.record_sha256, r);
    }
    if differences.is_empty() {
        return Ok(());
    }
    Err(WithdrawalError::Foreign(Box::new(ForeignWithdrawal {
        path: found.path.clone(),
        of: w.id.clone(),
        id: id.clone(),
        differences,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_names_are_four_digits_from_one() {
        assert_eq!(number_of("withdrawal-0001.json"), Some(1));
        assert_eq!(number_of("withdrawal-0042.json"), Some(42));
        assert_eq!(number_of("withdrawal-0000.json"), None);
        assert_eq!(number_of("withdrawal-1.json"), None);
        assert_eq!(number_of("withdrawal-0001.json.sig"), None);
        assert_eq!(number_of("withdrawal-00a1.json"), None);
        assert_eq!(file_name(7), "withdrawal-0007.json");
    }

    #[test]
    fn a_withdrawal_keeps_its_fields_and_bytes_and_refuses_an_id_no_definition_could_give() {
        let withdrawal = Withdrawal {
            format: WITHDRAWAL_FORMAT,
            number: 2,
            id: "ruche-or/0.5/e0003".parse().unwrap(),
            record_sha256: "11".repeat(32),
            seed_sha256: "22".repeat(32),
            public_key_sha256: "33".repeat(32),
            block: Some(4),
            reason: "misprint".into(),
            time: "2026-01-01T00:00:00Z".into(),
            user: "op".into(),
            host: "h".into(),
            generator: "emission-factory 0.1.0 (generator 3)".into(),
        };
        let bytes = withdrawal.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        // The emission's fields stay where they were, loose.
        assert!(
            text.starts_with("{\n  \"format\": 1,\n  \"number\": 2,\n  \"game\": \"ruche-or\",\n  \"stake\": \"0.5\",\n  \"emission\": 3,\n  \"record_sha256\": \"")
                && text.contains("\"block\": 4,\n  \"reason\": \"misprint\","),
            "{text}"
        );
        let again: Withdrawal = parse_strict(&bytes, Layout::Pretty).unwrap();
        assert_eq!(again, withdrawal);
        assert_eq!(again.to_bytes(), bytes);
        assert_eq!(
            again.block_id().map(|b| b.to_string()),
            Some("ruche-or/0.5/e0003 block 00004".to_string())
        );
        let key = crate::block::keys::generate().unwrap();
        for (bad, said) in crate::block::id::bad_emission_fields(&text, "ruche-or", "0.5") {
            let e = parse_strict::<Withdrawal>(bad.as_bytes(), Layout::Pretty).unwrap_err();
            assert!(e.to_string().contains(&said), "{e}");
            // Signed or not, the record is refused as it is read.
            let signature = crate::block::keys::sign(&key, bad.as_bytes()).to_vec();
            let e = parse(
                Path::new("withdrawal-0002.json"),
                bad.into_bytes(),
                signature,
                &key.verifying_key(),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.contains("not a withdrawal record") && e.contains(&said),
                "{e}"
            );
        }
    }

    #[test]
    fn reasons_are_one_line_of_bounded_text() {
        assert!(check_reason("misprint in block 3").is_ok());
        assert_eq!(check_reason("  "), Err(ReasonError::Empty));
        assert_eq!(check_reason("two\nlines"), Err(ReasonError::Control));
        assert_eq!(check_reason("\u{1b}[31mred"), Err(ReasonError::Control));
        assert_eq!(
            check_reason(&"x".repeat(MAX_REASON_CHARS + 1)),
            Err(ReasonError::TooLong)
        );
    }

    #[test]
    fn a_record_that_cannot_be_logged_is_removed_and_the_error_says_why_after_its_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        let key = SigningKey::from_bytes(&[7; 32]);
        let record = Record {
            blocks: None,
            ..record::test_record()
        };
        record::write(folder, &record, &key).unwrap();
        // A log cut in the middle of its line: it takes no line.
        std::fs::write(folder.join(log::LOG_FILE), "{").unwrap();
        let e = withdraw(folder, &key, None, "misprint").unwrap_err();
        let WithdrawalError::NotLogged { file, source } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(file, "withdrawal-0001.json");
        assert!(matches!(source, LogError::Truncated { .. }), "{source:?}");
        assert_eq!(
            crate::problem::chained(&e),
            format!(
                "the withdrawal could not be recorded in the audit log (emission.log.jsonl), so withdrawal-0001.json was removed again: nothing is withdrawn; fix the log and run the same command again: {}: the last line has no line end: the log was truncated or a write was cut",
                folder.join(log::LOG_FILE).display()
            )
        );
        assert!(!folder.join(file_name(1)).exists());
        assert!(!folder.join(sig_name(1)).exists());
    }
}
