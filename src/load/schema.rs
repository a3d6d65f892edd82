//! The database schema (`schema.sql`, documented there) and its migrations (`schema_2.sql`, ...).
//!
//! Migrations run in the caller's transaction (the first block's), under an advisory lock, so a
//! load that fails leaves even an empty database as it was, and loaders started at once on a
//! fresh database apply each migration once.

use super::LoadError;
use postgres::Transaction;
use std::path::Path;

/// The migrations, in order: `MIGRATIONS[i]` brings the schema to version `i + 1`. Never edit
/// one that has shipped; add the next.
const MIGRATIONS: &[&str] = &[include_str!("schema.sql"), include_str!("schema_2.sql")];

/// The schema version this program writes and reads.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// The advisory lock key of the schema (a fixed 64-bit number, "emission-factory schema").
const LOCK_KEY: &str = "emission-factory schema";

/// Creates or migrates the schema in `tx`; returns the versions applied (none if current).
pub fn ensure(tx: &mut Transaction<'_>, csv: &Path) -> Result<Vec<i32>, LoadError> {
    let db = |doing: &'static str| {
        move |error| LoadError::Database {
            csv: csv.to_path_buf(),
            doing,
            error,
        }
    };
    if current(tx).map_err(db("reading the schema version"))? == VERSION {
        return Ok(Vec::new());
    }
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&LOCK_KEY],
    )
    .map_err(db("waiting for the schema lock"))?;
    // Another loader may have migrated while this one waited.
    let found = current(tx).map_err(db("reading the schema version"))?;
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
    Ok(applied)
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
