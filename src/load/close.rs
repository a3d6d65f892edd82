//! Closing an emission (`close`) and the public count of the prizes remaining
//! (`prizes-remaining`), from the game server's database (schema version 4, schema_4.sql).
//!
//! Closing locks every sale cursor of the emission (the sales in flight end first), reads the
//! final reconciliation from the rows in the same transaction, signs it with the emission's
//! key, stores it in `closings` and commits: from then on `sell_next_ticket` sells nothing of
//! the emission. The signed reconciliation is then written to a file, never over another one;
//! run again on a closed emission, `close` writes that same file again from the database.

use super::error::explain;
use crate::block::id::EmissionId;
use crate::block::keys;
use crate::money::{canonical, from_cents};
use crate::untrusted::{shown_text, SHOWN_CHARS};
use ed25519_dalek::SigningKey;
use postgres::error::SqlState;
use postgres::Client;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The reconciliation's format number.
pub const RECONCILIATION_FORMAT: u32 = 1;

/// One block in the final reconciliation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedBlock {
    /// Block number.
    pub block: u32,
    /// SHA-256 of its manifest.
    pub manifest_sha256: String,
    /// Tickets.
    pub tickets: u64,
    /// Sold.
    pub sold: u64,
    /// Unsold.
    pub unsold: u64,
    /// Withdrawn from sale (by a record naming it or the whole emission).
    pub withdrawn: bool,
}

/// One prize tier, over the emission's loaded blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedTier {
    /// The prize, canonical euros (`0` for the losing tickets).
    pub prize: String,
    /// Tickets of this prize in the manifests.
    pub count: u64,
    /// Sold.
    pub sold: u64,
    /// Unsold.
    pub unsold: u64,
}

/// A withdrawal applied before the closing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedWithdrawal {
    /// Its number.
    pub number: u32,
    /// The block, or `None`: the whole emission.
    pub block: Option<u32>,
    /// SHA-256 of the record.
    pub record_sha256: String,
}

/// The signed final reconciliation of a closed emission (FORMAT.md, "Closing reconciliation").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reconciliation {
    /// Always [`RECONCILIATION_FORMAT`].
    pub format: u32,
    /// Game id.
    pub game: String,
    /// Game name.
    pub game_name: String,
    /// Canonical stake.
    pub stake: String,
    /// Emission number.
    pub emission: u32,
    /// `test` or `production`.
    pub kind: String,
    /// SHA-256 of the seed.
    pub seed_sha256: String,
    /// SHA-256 of the emission's public key.
    pub public_key_sha256: String,
    /// When it was closed (the database's clock, UTC): every sale is before.
    pub closed: String,
    /// Every loaded block.
    pub blocks: Vec<ClosedBlock>,
    /// The withdrawals applied.
    pub withdrawals: Vec<ClosedWithdrawal>,
    /// Per tier, highest prize first.
    pub tiers: Vec<ClosedTier>,
    /// Tickets loaded.
    pub tickets: u64,
    /// Sold.
    pub sold: u64,
    /// Unsold.
    pub unsold: u64,
    /// Prizes of the tickets sold, canonical euros.
    pub paid: String,
    /// Prizes of the tickets unsold.
    pub remaining: String,
    /// The highest prize.
    pub top_prize: String,
    /// Tickets of the highest prize unsold.
    pub top_prizes_unsold: u64,
    /// Prizes paid over the price of the tickets sold (6 decimals); `None` when none was sold.
    pub payout: Option<String>,
    /// Program that wrote it.
    pub generator: String,
}

impl Reconciliation {
    /// The exact bytes written (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }
}

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

const LOADER: &str = "UPDATE on sale_cursors and INSERT on closings, which the members of ef_loader have (GRANT ef_loader TO <login role>)";
const READER: &str = "SELECT on emissions, closings, withdrawals and prizes_remaining, which the members of ef_seller and ef_auditor have";

/// The emission's row: id, game name, kind, public key and seed SHA-256.
fn emission_row(
    tx: &mut postgres::Transaction<'_>,
    name: &EmissionId,
    privilege: &'static str,
) -> Result<(i64, String, String, String, String), CloseError> {
    let has_v4: bool = tx
        .query_one("SELECT to_regclass('closings') IS NOT NULL", &[])
        .map_err(db("reading the schema", privilege))?
        .get(0);
    if !has_v4 {
        return Err(CloseError::Refused(format!(
            "the database's schema is older than version {}, which has closing and withdrawals: run `emission-factory load` with this version on any of its emission folders (it migrates the schema and skips the blocks loaded); nothing was changed",
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
}

/// The file name of an emission's reconciliation: `GAME-STAKE-eNNNN.closing.json`.
pub fn file_name(name: &EmissionId) -> String {
    format!("{}.closing.json", name.file_stem())
}

/// Closes the emission `name`, signing its final reconciliation with `key` (the emission's:
/// its public key's SHA-256 must be the one the database holds), and writes it into the
/// folder `out`.
pub fn close(
    client: &mut Client,
    name: &EmissionId,
    key: &SigningKey,
    out: &Path,
) -> Result<Closed, CloseError> {
    let path = out.join(file_name(name));
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
        write_new_or_same(&path, text.as_bytes(), &signature)?;
        return Ok(Closed {
            already: true,
            reconciliation,
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
            path,
        });
    }
    // Every sale cursor of the emission: the sales in flight end first, and every later sale
    // sees the closing (schema_4.sql).
    tx.query(
        "SELECT 1 FROM sale_cursors s JOIN blocks b ON b.block_id = s.block_id
         WHERE b.emission_id = $1 ORDER BY s.block_id, s.lane FOR UPDATE OF s",
        &[&emission_id],
    )
    .map_err(db(
        "locking the emission's sale cursors (waiting for the sales in flight)",
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
    let mut top: Option<(String, u64)> = None;
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
        if top.is_none() && tier.count > 0 && cents > 0 {
            top = Some((tier.prize.clone(), tier.unsold));
        }
        tiers.push(tier);
    }
    let tickets: u64 = blocks.iter().map(|b| b.tickets).sum();
    let sold: u64 = blocks.iter().map(|b| b.sold).sum();
    let stake = from_cents(name.stake_cents());
    let payout = (sold > 0).then(|| {
        (paid / (stake * Decimal::from(sold)))
            .round_dp(6)
            .normalize()
            .to_string()
    });
    let (top_prize, top_prizes_unsold) = top.unwrap_or_else(|| ("0".into(), 0));
    let reconciliation = Reconciliation {
        format: RECONCILIATION_FORMAT,
        game: name.game().to_string(),
        game_name,
        stake: canonical(stake),
        emission: name.number(),
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
    tx.commit().map_err(db("committing the closing", LOADER))?;
    write_new_or_same(&path, &bytes, &signature).map_err(|e| {
        CloseError::Refused(format!(
            "{e}. The emission IS closed in the database (nothing more is sold); run the same command again to write the file"
        ))
    })?;
    Ok(Closed {
        already: false,
        reconciliation,
        sha256,
        path,
    })
}

/// Writes `bytes` to `path` and the signature beside it, never replacing another file: a
/// file already there with the same bytes is kept, one with other bytes is an error.
fn write_new_or_same(path: &Path, bytes: &[u8], signature: &[u8]) -> Result<(), CloseError> {
    let sig_path = PathBuf::from(format!("{}.sig", path.display()));
    let folder = crate::fs::files::parent(path);
    let refused = |e: anyhow::Error| CloseError::Refused(format!("{e:#}"));
    let access = crate::fs::files::Access::of_folder(folder).map_err(refused)?;
    for (p, b) in [(&sig_path, signature), (&path.to_path_buf(), bytes)] {
        if crate::fs::files::entry_exists(p).map_err(refused)? {
            let there = crate::fs::open::read_at_most(p, 16 << 20, "a closing reconciliation")
                .map_err(|e| CloseError::Refused(format!("{}: {e}", p.display())))?;
            if there != b {
                return Err(CloseError::Refused(format!(
                    "{} exists and is not this emission's final reconciliation: it is not overwritten; move it away, or give --out another folder",
                    p.display()
                )));
            }
            continue;
        }
        let _publishing = crate::interrupt::critical();
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
    /// `game/stake/eNNNN`.
    pub emission: String,
    /// The game's name.
    pub game_name: String,
    /// `on sale`, `closed` or `withdrawn`.
    pub status: &'static str,
    /// When counted (the database's clock, UTC).
    pub as_of: String,
    /// Per tier, highest prize first (losing tickets left out).
    pub tiers: Vec<RemainingTier>,
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
        emission: show_name(name),
        game_name,
        status,
        as_of: status_row.get(2),
        tiers,
    })
}
