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
use crate::emission::lock::LockFile;
use crate::emission::log::{self, Entry};
use crate::emission::read_bounded;
use crate::emission::record::{self, Record};
use crate::json::{parse_strict, Layout};
use crate::untrusted::{shown_text, SHOWN_CHARS};
use anyhow::{anyhow, bail, Context, Result};
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

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
pub fn check_reason(reason: &str) -> Result<()> {
    let trimmed = reason.trim();
    if trimmed.is_empty() {
        bail!("--reason is empty: say why the tickets are withdrawn (it is signed, logged and stored in the database)");
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        bail!("--reason is longer than {MAX_REASON_CHARS} characters: shorten it (refer to a longer report by its name)");
    }
    if reason.chars().any(char::is_control) {
        bail!("--reason holds a control character (a line end, a tab, an escape): give it on one line of plain text");
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
) -> Result<Written> {
    check_reason(reason)?;
    if block == Some(0) {
        bail!("--block 0: blocks are numbered from 1");
    }
    let public = key.verifying_key();
    let held = LockFile::emission(folder)?.acquire(&mut |_| {})?;
    let (rec, rec_bytes): (Record, Vec<u8>) = record::read(folder, &public)?
        .ok_or_else(|| crate::emission::ceremony::no_record(folder))?;
    if let Some(b) = block {
        let made = crate::emission::seal::complete_blocks(folder)?;
        if !made.contains(&b) {
            bail!(
                "--block {b}: the emission folder {} ({}) holds no block {b} (its blocks: {}); give one of them, or leave out --block to withdraw the whole emission",
                folder.display(),
                rec.id,
                match made.is_empty() {
                    true => "none".to_string(),
                    false => crate::emission::seal::ranges(&made),
                }
            );
        }
    }
    let existing = list(folder)?;
    let number = existing.iter().copied().max().unwrap_or(0) + 1;
    if number > MAX_WITHDRAWALS {
        bail!(
            "{}: already {MAX_WITHDRAWALS} withdrawal records",
            folder.display()
        );
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
            return Err(e.context(format!(
                "the withdrawal could not be recorded in the audit log ({}), so {} was removed again: nothing is withdrawn; fix the log and run the same command again",
                log::LOG_FILE,
                file_name(number)
            )));
        }
    };
    held.release().context(
        "the withdrawal is written and logged, but the emission lock could not be released",
    )?;
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
fn list(folder: &Path) -> Result<Vec<u32>> {
    let entries = crate::fs::dir::list(folder)
        .with_context(|| format!("cannot list {}", folder.display()))?;
    Ok(entries
        .iter()
        .filter_map(|e| e.name.to_str().and_then(number_of))
        .collect())
}

/// Reads every withdrawal record of `folder` and checks each one's signature with `key` (the
/// key the reader trusts) and its form. Any record that fails is an error naming its file:
/// a reader applies all of a folder's records or none.
pub fn read_all(folder: &Path, key: &VerifyingKey) -> Result<Vec<Found>> {
    let mut out = Vec::new();
    for n in list(folder)? {
        let path = folder.join(file_name(n));
        let sig_path = folder.join(sig_name(n));
        let bytes = read_bounded(&path, MAX_WITHDRAWAL_BYTES)?;
        let signature = read_bounded(&sig_path, 64)
            .with_context(|| format!("{}: its signature is missing", path.display()))?;
        let found = parse(&path, bytes, signature, key)?;
        if found.withdrawal.number != n {
            bail!(
                "{}: the record says it is number {}, its file name {n}: it was renamed; it is refused and nothing was applied (give it back its name)",
                path.display(),
                found.withdrawal.number
            );
        }
        out.push(found);
    }
    Ok(out)
}

/// Checks one record's bytes and signature (from a file or the database).
pub fn parse(path: &Path, bytes: Vec<u8>, signature: Vec<u8>, key: &VerifyingKey) -> Result<Found> {
    crate::block::keys::check(key, &bytes, &signature).map_err(|m| {
        anyhow!(
            "{}: {m}: the withdrawal record was not signed with the key given, or was changed; it is refused and nothing was applied (remove it, or write a new one with `emission-factory withdraw` and the emission's key)",
            path.display()
        )
    })?;
    let withdrawal: Withdrawal = parse_strict(&bytes, Layout::Pretty).map_err(|e| {
        anyhow!(
            "{}: not a withdrawal record ({e}); it is refused and nothing was applied",
            path.display()
        )
    })?;
    if withdrawal.format != WITHDRAWAL_FORMAT {
        bail!(
            "{}: withdrawal format {} is not one this program reads ({WITHDRAWAL_FORMAT}); nothing was applied",
            path.display(),
            withdrawal.format
        );
    }
    check_reason(&withdrawal.reason).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if withdrawal.block == Some(0) {
        bail!("{}: names block 0; nothing was applied", path.display());
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
pub fn check_for(found: &Found, binding: &RecordBinding<'_>) -> Result<()> {
    let id = binding.emission;
    let w = &found.withdrawal;
    let mut differences = Vec::new();
    let mut differ = |what: &str, here: &str, there: &str| {
        if here != there {
            differences.push(format!(
                "{what}: {} in the record, {} in the emission",
                shown_text(here, SHOWN_CHARS),
                shown_text(there, SHOWN_CHARS)
            ));
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
    bail!(
        "{}: this withdrawal record (of {}) is not of the emission {id} whose folder holds it ({}); it is refused and nothing was applied: move it to its own emission's folder",
        found.path.display(),
        w.id,
        differences.join("; ")
    )
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
        assert!(check_reason("  ").is_err());
        assert!(check_reason("two\nlines").is_err());
        assert!(check_reason("\u{1b}[31mred").is_err());
        assert!(check_reason(&"x".repeat(MAX_REASON_CHARS + 1)).is_err());
    }
}
