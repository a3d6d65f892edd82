//! What can go wrong while loading, each with a one-paragraph message that names the block and
//! says what to do. Every error leaves the database as it was before the block's transaction.

use postgres::error::SqlState;
use std::path::PathBuf;
use thiserror::Error;

/// A load that did not happen.
#[derive(Debug, Error)]
pub enum LoadError {
    /// No connection could be made.
    #[error("cannot connect to the database {target}: {reason}. Check the URL (--database-url or DATABASE_URL), that the server runs and accepts connections there (pg_isready), and the role's password; nothing was loaded")]
    Connect {
        /// Host, port, database and user, without the password.
        target: String,
        /// The client's explanation.
        reason: String,
    },
    /// A plaintext connection to another machine.
    #[error("refusing to connect to the database {target} without TLS: it is not this machine (only a Unix socket, localhost, 127.0.0.1 or ::1 are), and the tickets, the sales and the password would cross the network in clear; nothing was sent. Give sslmode=verify-full&sslrootcert=CA.pem in the URL (or sslmode=verify-ca, or require), or --allow-plaintext for a network you trust (an SSH tunnel ends on localhost)")]
    Plaintext {
        /// Host, port, database and user, without the password.
        target: String,
    },
    /// The database URL could not be parsed.
    #[error("--database-url: {0}; give postgresql://USER@HOST:PORT/DATABASE (or host=/run/postgresql dbname=...), the forms libpq reads")]
    Url(String),
    /// A file of the block cannot be read.
    #[error("{}: cannot read: {source}; nothing of this block was loaded", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The block failed verification.
    #[error("{} did not verify, so it was not loaded (the database is as it was):\n  - {}{}", csv.display(), problems.join("\n  - "), more(*unlisted))]
    Verification {
        /// The block's CSV.
        csv: PathBuf,
        /// The problems found.
        problems: Vec<String>,
        /// Problems found beyond those listed.
        unlisted: u64,
    },
    /// A test emission without `--allow-test`.
    #[error("{}: this block belongs to a TEST emission (its seed was given in clear), which is not for sale; it was not loaded. Give --allow-test to load it into a test database", csv.display())]
    TestEmission {
        /// The block's CSV.
        csv: PathBuf,
    },
    /// The database holds emissions of the other kind.
    #[error("{}: this block belongs to a {block} emission, and this database holds {database} emissions; a database never holds both, so it was not loaded. Load it into a database of its own", csv.display())]
    KindMismatch {
        /// The block's CSV.
        csv: PathBuf,
        /// The block's kind.
        block: String,
        /// The database's kind.
        database: String,
    },
    /// The same block number is loaded with another manifest.
    #[error("{}: block {block} of {emission} is already loaded with another manifest (SHA-256 {loaded} in the database, {given} here); it was not loaded again. Two different blocks under one number mean one of them is not the emission's: find out which before selling", csv.display())]
    ManifestConflict {
        /// The block's CSV.
        csv: PathBuf,
        /// The emission, `game/stake/eNNNN`.
        emission: String,
        /// The block number.
        block: u32,
        /// SHA-256 of the manifest in the database.
        loaded: String,
        /// SHA-256 of the manifest given.
        given: String,
    },
    /// The emission is loaded with another key or seed.
    #[error("{}: the blocks of {emission} already loaded have {what} {loaded}, this block has {given}; one emission has one seed and one key, so it was not loaded", csv.display())]
    EmissionConflict {
        /// The block's CSV.
        csv: PathBuf,
        /// The emission.
        emission: String,
        /// Which field differs.
        what: &'static str,
        /// The database's value.
        loaded: String,
        /// This block's value.
        given: String,
    },
    /// The database disagrees with the manifest after the COPY.
    #[error("{}: after loading, the database holds {found} where the manifest says {expected}; the block's transaction was rolled back (the database is as it was). This points at the server or a concurrent writer: check the tickets table's triggers and rules", csv.display())]
    ReadBack {
        /// The block's CSV.
        csv: PathBuf,
        /// What the manifest says.
        expected: String,
        /// What the database holds.
        found: String,
    },
    /// The database's schema is newer than this program's.
    #[error("the database's schema is version {found}, newer than this program's ({known}); use the emission-factory that made it or a newer one")]
    SchemaTooNew {
        /// The database's version.
        found: i32,
        /// The newest this program knows.
        known: i32,
    },
    /// Other loaders kept migrating the schema while this one waited.
    #[error("{}: the schema kept changing while this load waited for it (other loaders migrating it); nothing of this block was loaded: run the same command again", csv.display())]
    SchemaRace {
        /// The block's CSV.
        csv: PathBuf,
    },
    /// The server refused or failed a statement.
    #[error("{}: {} (while {doing}); the block's transaction was rolled back, the database is as it was", csv.display(), explain(error))]
    Database {
        /// The block's CSV.
        csv: PathBuf,
        /// What the loader was doing.
        doing: &'static str,
        /// The server's error (not a `source`: the message already says all of it).
        error: postgres::Error,
    },
    /// A withdrawal record of the block's folder is refused.
    #[error("{message}. Nothing of {} was loaded or applied (the database is as it was)", csv.display())]
    Withdrawal {
        /// The block's CSV.
        csv: PathBuf,
        /// What is wrong, naming the record's file.
        message: String,
    },
    /// Another withdrawal record is in the database under the same number.
    #[error("{}: withdrawal {number} of {emission} is already applied with another record (SHA-256 {loaded} in the database, {given} here); nothing was applied. Two records under one number mean one of them is not the emission's: find out which", path.display())]
    WithdrawalConflict {
        /// The record's file.
        path: PathBuf,
        /// The emission.
        emission: String,
        /// The record's number.
        number: u32,
        /// SHA-256 of the record in the database.
        loaded: String,
        /// SHA-256 of the record here.
        given: String,
    },
    /// Stopped by a signal.
    #[error(transparent)]
    Interrupted(#[from] crate::interrupt::Interrupted),
}

fn more(unlisted: u64) -> String {
    match unlisted {
        0 => String::new(),
        n => format!("\n  - ... and {n} more problems"),
    }
}

/// The server's message, and what to do for the errors an operator can fix.
pub fn explain(e: &postgres::Error) -> String {
    let Some(db) = e.as_db_error() else {
        return match e.is_closed() {
            true => format!("the connection to the server was lost ({})", chain(e)),
            false => chain(e),
        };
    };
    let text = db.message();
    let code = db.code();
    let hint = if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        ". The role lacks a privilege: a loading role must be a member of ef_loader, which owns the schema (GRANT ef_loader TO <login role>; on an empty database it also needs CREATE on the schema and CREATEROLE, or the roles made beforehand); a game server's role a member of ef_seller, an auditor's of ef_auditor. See docs/OPERATIONS.md, \"Loading into PostgreSQL\", Roles"
    } else if *code == SqlState::QUERY_CANCELED {
        ". The server cancelled the statement: statement_timeout (or lock_timeout) is shorter than a block's load; run `ALTER ROLE <loader> SET statement_timeout = 0` or give options=-c statement_timeout=0 in the URL"
    } else if *code == SqlState::DISK_FULL
        || *code == SqlState::OUT_OF_MEMORY
        || *code == SqlState::INSUFFICIENT_RESOURCES
    {
        ". The server is out of space or memory: free some (or grow the disk) and run the same command again"
    } else if *code == SqlState::LOCK_NOT_AVAILABLE {
        ". Another session holds a lock the load needs: wait for it or raise lock_timeout"
    } else if *code == SqlState::ADMIN_SHUTDOWN || *code == SqlState::CRASH_SHUTDOWN {
        ". The server is shutting down: run the same command again once it is back"
    } else {
        ""
    };
    let detail = db.detail().map(|d| format!(" ({d})")).unwrap_or_default();
    format!(
        "the server said: {text}{detail} [SQLSTATE {}]{hint}",
        code.code()
    )
}

/// An error and its causes, `: `-separated (the client's errors keep the useful part in the
/// cause: "error connecting to server: Connection refused").
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}
