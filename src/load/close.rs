//! Closing an emission (`close`) and the public count of the prizes remaining
//! (`prizes-remaining`), from the game server's database (schema version 6 and later, schema_6.sql).
//!
//! Closing holds the sales back (`sale_hold`: the sales in flight end first), reads the
//! final reconciliation from the rows in the same transaction, signs it with the emission's
//! key, stores it in `closings` and commits: from then on `sell_next_ticket` sells nothing of
//! the emission. The signed reconciliation is then written into the emission's folder
//! (`emission.closing.json` and its `.sig`, never over another file) and recorded by a signed
//! line of its audit log, under the emission lock; run again on a closed emission, `close`
//! writes that same file again from the database and appends the line if the log lacks it.
//! `verify` of the folder checks both (`emission::closing`).

use super::error::explain;
use crate::block::id::EmissionId;
use crate::block::keys;
use crate::emission::lock::{LockError, LockFile};
use crate::emission::log;
use crate::emission::record::{self, Record};
use crate::fs::FsError;
use crate::money::{canonical, from_cents};
use crate::problem::chained;
use crate::untrusted::{shown_text, SHOWN_CHARS};
use ed25519_dalek::SigningKey;
use postgres::error::SqlState;
use postgres::Client;
use rust_decimal::Decimal;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use thiserror::Error;

pub use crate::emission::closing::{
    ClosedBlock, ClosedTier, ClosedWithdrawal, Reconciliation, CLOSING_FILE, CLOSING_SIG_FILE,
    RECONCILIATION_FORMAT,
};

/// A closing or count that did not happen.
#[derive(Debug, Error)]
pub enum CloseError {
    /// The server refused or failed a statement.
    #[error(
        "{} (while {doing}){}",
        explain(error),
        privilege_hint(error, privilege)
    )]
    Database {
        /// What was being done.
        doing: &'static str,
        /// The privilege the statement needs, for the error when it is missing.
        privilege: &'static str,
        /// The server's error.
        error: postgres::Error,
    },
    /// The emission lock could not be taken: nothing was changed.
    #[error("{}; nothing was changed", chained(.0))]
    Lock(LockError),
    /// The emission's record could not be read or did not check with the key: nothing was
    /// changed.
    #[error("{}; nothing was changed", chained(&.0))]
    Record(crate::emission::record::RecordError),
    /// The emission's audit log did not read or check, so the closing could not have been
    /// recorded in it: the emission was not closed.
    #[error(
        "{}: the closing could not be recorded in the emission's audit log, so the emission was not closed; nothing was changed (restore the log from the archive)",
        chained(&.0)
    )]
    Log(crate::emission::log::LogError),
    /// The closing's line could not be appended to the emission's audit log (the emission is
    /// closed in the database all the same).
    #[error("{}", chained(&.0))]
    LogAppend(crate::emission::log::LogError),
    /// The reconciliation's file or its signature could not be written into the folder, or
    /// a file there could not be looked at.
    #[error("{}", chained(.0))]
    File(FsError),
    /// The emission lock could not be released, after the emission was closed and recorded.
    #[error(
        "{}: the emission is closed and recorded, but the emission lock could not be released",
        chained(.0)
    )]
    Release(LockError),
    /// Anything else, said in full.
    #[error("{0}")]
    Refused(String),
}

/// For a permission error, the privilege the statement needed and which group role has it.
fn privilege_hint(error: &postgres::Error, privilege: &str) -> String {
    match error.code() {
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => format!(
            ". This needs {privilege}; the role has not got it: GRANT the group role named to the login role (docs/OPERATIONS.md, \"Loading into PostgreSQL\", Roles). Nothing was changed"
        ),
        _ => ". Nothing was changed".into(),
    }
}

fn db(doing: &'static str, privilege: &'static str) -> impl Fn(postgres::Error) -> CloseError {
    move |error| CloseError::Database {
        doing,
        privilege,
        error,
    }
}

const LOADER: &str = "a SHARE lock on sales, UPDATE on sale_state and INSERT on closings, which the members of ef_loader have (GRANT ef_loader TO <login role>)";
const READER: &str = "SELECT on emissions, closings, withdrawals and prizes_remaining, which the members of ef_seller and ef_auditor have";

/// The emission's row: id, game name, kind, public key and seed SHA-256.
fn emission_row(
    tx: &mut postgres::Transaction<'_>,
    name: &EmissionId,
    privilege: &'static str,
) -> Result<(i64, String, String, String, String), CloseError> {
    let has_v6: bool = tx
        .query_one("SELECT to_regclass('sale_state') IS NOT NULL", &[])
        .map_err(db("reading the schema", privilege))?
        .get(0);
    if !has_v6 {
        return Err(CloseError::Refused(format!(
            "the database's schema is older than version {}, whose sale function this closing stops: run `emission-factory load` with this version on any of its emission folders (it migrates the schema and skips the blocks loaded); nothing was changed",
            super::schema::VERSION
        )));
    }
    let row = tx
        .query_opt(
            "SELECT emission_id, game_name, kind, public_key_sha256, seed_sha256 FROM emissions
             WHERE game = $1 AND stake_cents = $2 AND emission = $3",
            &[&name.game(), &stake_cents(name)?, &emission_number(name)?],
        )
        .map_err(db("reading the emission", privilege))?
        .ok_or_else(|| {
            CloseError::Refused(format!(
                "the database holds no emission {}: check --database-url and the EMISSION argument (GAME/STAKE/eNNNN, as `load` prints it); nothing was changed",
                show_name(name)
            ))
        })?;
    Ok((row.get(0), row.get(1), row.get(2), row.get(3), row.get(4)))
}

fn show_name(name: &EmissionId) -> String {
    name.to_string()
}

/// The emission's stake and number as the database's columns hold them.
fn stake_cents(name: &EmissionId) -> Result<i64, CloseError> {
    i64::try_from(name.stake_cents())
        .map_err(|_| CloseError::Refused(format!("{name}: the stake is too large")))
}

fn emission_number(name: &EmissionId) -> Result<i32, CloseError> {
    i32::try_from(name.number())
        .map_err(|_| CloseError::Refused(format!("{name}: the emission number is too large")))
}

fn count(value: i64, what: &str) -> Result<u64, CloseError> {
    u64::try_from(value).map_err(|_| {
        CloseError::Refused(format!(
            "the database gives {value} for {what}, not a count: run db-verify; nothing was changed"
        ))
    })
}

/// What [`close`] did.
#[derive(Debug, Clone)]
pub struct Closed {
    /// Closed by an earlier run (this one wrote its reconciliation's file again if missing).
    pub already: bool,
    /// The reconciliation.
    pub reconciliation: Reconciliation,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// The file written (and its signature beside it, `.sig`).
    pub path: PathBuf,
    /// SHA-256 of the audit-log line this run appended to record the closing; `None` when
    /// the log recorded it already (an earlier run).
    pub log_line_sha256: Option<String>,
}

/// Closes the emission whose folder is `folder` (its record names it; the folder must be the
/// one its blocks were loaded from), signing its final reconciliation with `key` (the
/// emission's: the record must verify with it, and its public key's SHA-256 must be the one
/// the database holds), writes the reconciliation into the folder ([`CLOSING_FILE`] and its
/// signature) and records it in the emission's audit log, all under the emission lock.
///
/// The log is checked before the database is touched. The closing commits in the database
/// before the file and the line are written: if either fails, the emission is closed all the
/// same (nothing more is sold), and the same command run again writes the file from the
/// database and appends the line the log lacks.
pub fn close(client: &mut Client, folder: &Path, key: &SigningKey) -> Result<Closed, CloseError> {
    let public = key.verifying_key();
    let held = LockFile::emission(folder)
        .and_then(|l| l.acquire(&mut |_| {}))
        .map_err(CloseError::Lock)?;
    let (record, _) = record::read(folder, &public)
        .map_err(CloseError::Record)?
        .ok_or_else(|| {
            CloseError::Refused(format!(
                "{} has no emission record ({}): give the emission's own folder (<out>/<game>/<stake>/e<emission>, the one its blocks were loaded from); nothing was changed",
                folder.display(),
                record::RECORD_FILE
            ))
        })?;
    // A record whose game or stake names no emission is refused as it is read.
    let name = record.id.clone();
    let chain = log::read_chain(folder, &public).map_err(CloseError::Log)?;
    let (already, reconciliation, bytes, signature) =
        close_in_database(client, &name, &record, key)?;
    let path = folder.join(CLOSING_FILE);
    let sig_path = folder.join(CLOSING_SIG_FILE);
    let closed_anyway = |e: CloseError| {
        CloseError::Refused(format!(
            "{e}. The emission IS closed in the database (nothing more is sold); fix this and run the same command again: it writes the reconciliation from the database and records it in the audit log"
        ))
    };
    write_new_or_same(&path, &sig_path, &bytes, &signature).map_err(closed_anyway)?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let log_line_sha256 = match &chain.closing_recorded {
        None => {
            let mut entry = log::Entry::for_this_run("close");
            entry.result = log::closing_result(CLOSING_FILE, &sha256);
            Some(
                log::append_locked(folder, &mut entry, Some(key))
                    .map_err(|e| closed_anyway(CloseError::LogAppend(e)))?,
            )
        }
        Some((_, logged)) if *logged == sha256 => None,
        Some((line, logged)) => {
            return Err(CloseError::Refused(format!(
                "{}: line {line} records a closing whose reconciliation has SHA-256 {logged}, and the database's has {sha256}: this folder was closed with another database, or the log or the database was changed; nothing was written to the log",
                folder.join(log::LOG_FILE).display()
            )))
        }
    };
    held.release().map_err(CloseError::Release)?;
    Ok(Closed {
        already,
        reconciliation,
        sha256,
        path,
        log_line_sha256,
    })
}

/// The closing in the database: the reconciliation stored by an earlier run (`true`), or one
/// made, signed and stored now (`false`), with its bytes and signature.
fn close_in_database(
    client: &mut Client,
    name: &EmissionId,
    record: &Record,
    key: &SigningKey,
) -> Result<(bool, Reconciliation, Vec<u8>, Vec<u8>), CloseError> {
    let mut tx = client
        .transaction()
        .map_err(db("starting a transaction", LOADER))?;
    let (emission_id, game_name, kind, public_key_sha256, seed_sha256) =
        emission_row(&mut tx, name, LOADER)?;
    let given = keys::public_key_sha256(&key.verifying_key())
        .map(hex::encode)
        .map_err(|e| CloseError::Refused(format!("--key: {e:#}")))?;
    if given != public_key_sha256 {
        return Err(CloseError::Refused(format!(
            "--key is not the key of {} (its public key's SHA-256 is {given}, the emission's {}): the final reconciliation is signed with the emission's own key; nothing was changed",
            show_name(name),
            shown_text(&public_key_sha256, SHOWN_CHARS)
        )));
    }
    if seed_sha256 != record.seed_sha256 {
        return Err(CloseError::Refused(format!(
            "the database's {} has the seed commitment {}, the emission folder's record {}: the folder is not the one its blocks were loaded from; nothing was changed",
            show_name(name),
            shown_text(&seed_sha256, SHOWN_CHARS),
            record.seed_sha256
        )));
    }
    // One closing at a time.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("emission-factory close {emission_id}")],
    )
    .map_err(db("waiting for the emission's closing lock", LOADER))?;
    if let Some(row) = tx
        .query_opt(
            "SELECT reconciliation, signature FROM closings WHERE emission_id = $1",
            &[&emission_id],
        )
        .map_err(db("reading the emission's closing", LOADER))?
    {
        let text: String = row.get(0);
        let signature: Vec<u8> = row.get(1);
        tx.commit().map_err(db("ending the transaction", LOADER))?;
        keys::check(&key.verifying_key(), text.as_bytes(), &signature).map_err(|m| {
            CloseError::Refused(format!(
                "{} is closed, but the reconciliation stored in the database does not verify with --key ({m}): it was changed in the database; run db-verify",
                show_name(name)
            ))
        })?;
        let reconciliation: Reconciliation =
            crate::json::parse_strict(text.as_bytes(), crate::json::Layout::Pretty).map_err(
                |e| {
                    CloseError::Refused(format!(
                        "{} is closed, but its stored reconciliation is not one: {e}",
                        show_name(name)
                    ))
                },
            )?;
        return Ok((true, reconciliation, text.into_bytes(), signature));
    }
    // The sales held back: the sales in flight end first, and every later sale sees the
    // closing (schema_6.sql).
    tx.execute("SELECT sale_hold()", &[]).map_err(db(
        "holding the sales back (waiting for the sales in flight)",
        LOADER,
    ))?;
    let closed: String = tx
        .query_one(
            "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
            &[],
        )
        .map_err(db("reading the database's clock", LOADER))?
        .get(0);
    let block_rows = tx
        .query(
            "SELECT b.block, b.manifest_sha256, b.tickets,
                    coalesce(sum(r.sold), 0)::bigint, coalesce(sum(r.unsold), 0)::bigint,
                    EXISTS (SELECT 1 FROM withdrawals w WHERE w.emission_id = b.emission_id
                            AND (w.block IS NULL OR w.block = b.block))
             FROM blocks b LEFT JOIN block_tier_reconciliation r ON r.block_id = b.block_id
             WHERE b.emission_id = $1 GROUP BY b.block_id ORDER BY b.block",
            &[&emission_id],
        )
        .map_err(db("reading the blocks' sales", LOADER))?;
    let mut blocks = Vec::with_capacity(block_rows.len());
    for r in &block_rows {
        blocks.push(ClosedBlock {
            block: u32::try_from(r.get::<_, i32>(0)).unwrap_or_default(),
            manifest_sha256: r.get(1),
            tickets: count(r.get(2), "a block's tickets")?,
            sold: count(r.get(3), "a block's tickets sold")?,
            unsold: count(r.get(4), "a block's tickets unsold")?,
            withdrawn: r.get(5),
        });
    }
    let mut withdrawals = Vec::new();
    for r in tx
        .query(
            "SELECT number, block, record_sha256 FROM withdrawals WHERE emission_id = $1
             ORDER BY number",
            &[&emission_id],
        )
        .map_err(db("reading the withdrawals", LOADER))?
    {
        withdrawals.push(ClosedWithdrawal {
            number: u32::try_from(r.get::<_, i32>(0)).unwrap_or_default(),
            block: r
                .get::<_, Option<i32>>(1)
                .map(|b| u32::try_from(b).unwrap_or_default()),
            record_sha256: r.get(2),
        });
    }
    let tier_rows = tx
        .query(
            "SELECT prize_cents, manifest_count, sold, unsold FROM emission_tier_reconciliation
             WHERE emission_id = $1 ORDER BY prize_cents DESC",
            &[&emission_id],
        )
        .map_err(db("reading the tiers' sales", LOADER))?;
    let (mut paid, mut remaining) = (Decimal::ZERO, Decimal::ZERO);
    let mut tiers = Vec::with_capacity(tier_rows.len());
    for r in &tier_rows {
        let cents = count(r.get(0), "a prize")?;
        let tier = ClosedTier {
            prize: canonical(from_cents(cents)),
            count: count(r.get(1), "a tier's count")?,
            sold: count(r.get(2), "a tier's tickets sold")?,
            unsold: count(r.get(3), "a tier's tickets unsold")?,
        };
        let prize = from_cents(cents);
        paid += prize * Decimal::from(tier.sold);
        remaining += prize * Decimal::from(tier.unsold);
        tiers.push(tier);
    }
    let tickets: u64 = blocks.iter().map(|b| b.tickets).sum();
    let sold: u64 = blocks.iter().map(|b| b.sold).sum();
    let stake = from_cents(name.stake_cents());
    // The same computations as `verify`'s check of the file (emission::closing).
    let payout = crate::emission::closing::payout(paid, stake, sold);
    let (top_prize, top_prizes_unsold) = crate::emission::closing::top_prize(&tiers);
    let reconciliation = Reconciliation {
        format: RECONCILIATION_FORMAT,
        id: name.clone(),
        game_name,
        kind,
        seed_sha256,
        public_key_sha256,
        closed,
        tickets,
        sold,
        unsold: tickets.saturating_sub(sold),
        blocks,
        withdrawals,
        tiers,
        paid: canonical(paid.normalize()),
        remaining: canonical(remaining.normalize()),
        top_prize,
        top_prizes_unsold,
        payout,
        generator: crate::block::manifest::generator(),
    };
    let bytes = reconciliation.to_bytes();
    let signature = keys::sign(key, &bytes);
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let text = std::str::from_utf8(&bytes).unwrap_or_default();
    tx.execute(
        "INSERT INTO closings (emission_id, closed_at, reconciliation, reconciliation_sha256, signature)
         VALUES ($1, $2::text::timestamptz, $3, $4, $5)",
        &[&emission_id, &reconciliation.closed, &text, &sha256, &signature.as_slice()],
    )
    .map_err(db("recording the closing", LOADER))?;
    tx.execute("SELECT sale_refresh($1)", &[&emission_id])
        .map_err(db("stopping the emission's sales", LOADER))?;
    tx.commit().map_err(db("committing the closing", LOADER))?;
    Ok((false, reconciliation, bytes, signature.to_vec()))
}

/// Writes `bytes` to `path` and the signature beside it, never replacing another file: a
/// file already there with the same bytes is kept, one with other bytes is an error.
fn write_new_or_same(
    path: &Path,
    sig_path: &Path,
    bytes: &[u8],
    signature: &[u8],
) -> Result<(), CloseError> {
    let folder = crate::fs::files::parent(path);
    let refused = CloseError::File;
    let access = crate::fs::files::Access::of_folder(folder).map_err(refused)?;
    for (p, b) in [(sig_path, signature), (path, bytes)] {
        if crate::fs::files::entry_exists(p).map_err(refused)? {
            let there = crate::fs::open::read_at_most(p, 16 << 20, "a closing reconciliation")
                .map_err(|e| CloseError::Refused(format!("{}: {e}", p.display())))?;
            if there != b {
                return Err(CloseError::Refused(format!(
                    "{} exists and is not this emission's final reconciliation: it is not overwritten: find out where it came from (it may be another closing's), move it away and run the same command again",
                    p.display()
                )));
            }
            continue;
        }
        let _publishing = crate::interrupt::critical();
        crate::fs::files::remove_stale_temps(p).map_err(refused)?;
        crate::fs::files::stage(p, b, access)
            .and_then(|s| s.publish_new())
            .map_err(refused)?;
    }
    Ok(())
}

/// One tier of the public count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemainingTier {
    /// The prize, canonical euros.
    pub prize: String,
    /// Tickets of this prize in the emission's loaded blocks.
    pub original: u64,
    /// Of which still to be won (unsold, in a block on sale).
    pub remaining: u64,
}

/// The outcome-blind count of an emission's prizes (FORMAT.md, "prizes-remaining").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remaining {
    /// The emission, written `game/stake/eNNNN`.
    #[serde(serialize_with = "as_text")]
    pub emission: EmissionId,
    /// The game's name.
    pub game_name: String,
    /// `on sale`, `closed` or `withdrawn`.
    pub status: &'static str,
    /// When counted (the database's clock, UTC).
    pub as_of: String,
    /// Per tier, highest prize first (losing tickets left out).
    pub tiers: Vec<RemainingTier>,
}

/// An emission written as its name, `game/stake/eNNNN`.
fn as_text<S: serde::Serializer>(id: &EmissionId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(id)
}

/// Counts the prizes remaining of `name`: per tier, the original count and how many can
/// still be won, nothing per block or position.
pub fn prizes_remaining(client: &mut Client, name: &EmissionId) -> Result<Remaining, CloseError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(db("starting a read-only transaction", READER))?;
    let (emission_id, game_name, ..) = emission_row(&mut tx, name, READER)?;
    let status_row = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM closings WHERE emission_id = $1),
                    EXISTS (SELECT 1 FROM withdrawals WHERE emission_id = $1 AND block IS NULL),
                    to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
            &[&emission_id],
        )
        .map_err(db("reading whether the emission is on sale", READER))?;
    let status = match (status_row.get::<_, bool>(0), status_row.get::<_, bool>(1)) {
        (true, _) => "closed",
        (false, true) => "withdrawn",
        (false, false) => "on sale",
    };
    let mut tiers = Vec::new();
    for r in tx
        .query(
            "SELECT prize_cents, original, remaining FROM prizes_remaining
             WHERE emission_id = $1 ORDER BY prize_cents DESC",
            &[&emission_id],
        )
        .map_err(db("counting the prizes remaining", READER))?
    {
        tiers.push(RemainingTier {
            prize: canonical(from_cents(count(r.get(0), "a prize")?)),
            original: count(r.get(1), "a tier's count")?,
            remaining: count(r.get(2), "a tier's remaining count")?,
        });
    }
    tx.commit().map_err(db("ending the transaction", READER))?;
    Ok(Remaining {
        emission: name.clone(),
        game_name,
        status,
        as_of: status_row.get(2),
        tiers,
    })
}
