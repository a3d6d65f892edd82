//! The database schema (`schema.sql`, documented there) and its migrations (`schema_2.sql`, ...).
//!
//! Migrations run in the caller's transaction (the first block's), under an advisory lock, so a
//! load that fails leaves even an empty database as it was, and loaders started at once on a
//! fresh database apply each migration once: the others wait for the lock, and when the one
//! that held it has migrated, start their transaction again ([`Ensured::Retry`]). They must: a
//! backend that looked a table up before another one created it keeps "no such table" in its
//! catalog cache until it takes a lock on a relation or starts a transaction, and an advisory
//! lock is neither (this is what made 9 of 12 concurrent loads fail with `relation
//! "schema_version" already exists`).

use super::LoadError;
use postgres::Transaction;
use std::path::Path;

/// The migrations, in order: `MIGRATIONS[i]` brings the schema to version `i + 1`. Never edit
/// one that has shipped; add the next.
const MIGRATIONS: &[&str] = &[
    include_str!("schema.sql"),
    include_str!("schema_2.sql"),
    include_str!("schema_3.sql"),
    include_str!("schema_4.sql"),
    include_str!("schema_5.sql"),
    include_str!("schema_6.sql"),
    include_str!("schema_7.sql"),
];

/// The schema version this program writes and reads.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// The advisory lock key of the schema (a fixed 64-bit number, "emission-factory schema").
const LOCK_KEY: &str = "emission-factory schema";

/// What [`ensure`] did.
#[derive(Debug)]
pub enum Ensured {
    /// The schema is current; the versions applied in this transaction (none if it was).
    Current(Vec<i32>),
    /// Another loader migrated the schema while this one waited for the lock: roll this
    /// transaction back and start again in a new one, which sees the new tables.
    Retry,
}

/// Creates or migrates the schema in `tx`.
pub fn ensure(tx: &mut Transaction<'_>, csv: &Path) -> Result<Ensured, LoadError> {
    let db = |doing: &'static str| {
        move |error| LoadError::Database {
            csv: csv.to_path_buf(),
            doing,
            error,
        }
    };
    let before = current(tx).map_err(db("reading the schema version"))?;
    if before == VERSION {
        return Ok(Ensured::Current(Vec::new()));
    }
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&LOCK_KEY],
    )
    .map_err(db("waiting for the schema lock"))?;
    // Another loader may have migrated while this one waited. Whether the table exists is
    // read from pg_class itself (a fresh snapshot), not from this backend's catalog cache.
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class
                            WHERE relname = 'schema_version'
                              AND relnamespace = current_schema()::regnamespace)",
            &[],
        )
        .map_err(db("reading the schema version"))?
        .get(0);
    if exists != (before > 0) {
        return Ok(Ensured::Retry);
    }
    let found = current(tx).map_err(db("reading the schema version"))?;
    if found != before {
        return Ok(Ensured::Retry);
    }
    if found > VERSION {
        return Err(LoadError::SchemaTooNew {
            found,
            known: VERSION,
        });
    }
    let mut applied = Vec::new();
    for version in found + 1..=VERSION {
        let index = usize::try_from(version - 1).unwrap_or_default();
        tx.batch_execute(MIGRATIONS[index])
            .map_err(db("creating or migrating the schema"))?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&version],
        )
        .map_err(db("recording the schema version"))?;
        applied.push(version);
    }
    Ok(Ensured::Current(applied))
}

/// The schema version of the database, 0 for none.
fn current(tx: &mut Transaction<'_>) -> Result<i32, postgres::Error> {
    let exists: bool = tx
        .query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let version: Option<i32> = tx
        .query_one("SELECT max(version) FROM schema_version", &[])?
        .get(0);
    Ok(version.unwrap_or(0))
}
