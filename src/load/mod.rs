//! Pre-loading verified blocks into a game server's PostgreSQL database.
//!
//! Each block is loaded in one transaction, so it is in the database whole or not at all: the
//! schema is created or migrated ([`schema`]), the emission and block rows are written, the
//! tickets are streamed with `COPY (FORMAT binary)` into a fresh table that is then indexed in
//! one sort and attached as the block's partition of `tickets` (its sale sequence at its first
//! ticket, schema_6.sql), and the counts per prize, the
//! total and the number of tickets are read back and compared with the manifest before the
//! commit. The block is verified in full ([`crate::verify`], against the key the operator
//! trusts) on another thread while the server takes the COPY, builds the index and is read
//! back; the transaction commits only if it passed. The COPY hashes the bytes it sends, so the
//! file loaded is the file verified.
//!
//! A block already loaded with the same manifest is skipped; the same block number with
//! another manifest is refused. A process killed at any moment leaves an uncommitted
//! transaction, which the server rolls back: running the same command again finishes the job.

pub mod close;
mod copy;
pub mod db_verify;
mod error;
pub mod schema;
pub mod tls;

pub use error::{chain, explain, LoadError};

use crate::block::id::EmissionKind;
use crate::block::manifest::Manifest;
use crate::block::{self, keys};
use crate::emission::withdrawal::{self, Found as FoundWithdrawal};
use crate::game::Game;
use crate::money::{cents, parse_canonical};
use crate::verify::{verify_block, VerifyOptions};
use ed25519_dalek::VerifyingKey;
use postgres::{Client, GenericClient};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to load.
#[derive(Clone)]
pub struct LoadOptions {
    /// The key every manifest must be signed with (the one the operator trusts; the emission's
    /// own `emission.pub.pem` proves nothing about origin).
    pub public_key: VerifyingKey,
    /// The game definition, for games that are not built in.
    pub game: Option<Game>,
    /// Load test emissions (into a test database).
    pub allow_test: bool,
}

/// What happened to one block.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Loaded and committed.
    Loaded(Loaded),
    /// Already in the database with the same manifest.
    Skipped {
        /// SHA-256 of the manifest, lowercase hex.
        manifest_sha256: String,
        /// Withdrawal records of the block's folder applied in this run.
        withdrawals: Vec<Applied>,
    },
}

/// A withdrawal record applied in the database by this run.
#[derive(Debug, Clone)]
pub struct Applied {
    /// Its file.
    pub path: PathBuf,
    /// `block 3` or `the whole emission`.
    pub what: String,
    /// SHA-256 of the record, hex.
    pub sha256: String,
}

/// A block loaded, with where the time went.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Tickets loaded.
    pub tickets: u64,
    /// Schema versions applied in this block's transaction.
    pub migrated: Vec<i32>,
    /// Streaming the tickets into the server.
    pub copy: Duration,
    /// Indexing the new partition and attaching it.
    pub attach: Duration,
    /// Reading the counts back from the database.
    pub read_back: Duration,
    /// The verification, on its own thread beside the COPY, index and read-back.
    pub verify: Duration,
    /// Waiting for the verification after the read-back (zero when it was done by then).
    pub wait: Duration,
    /// Committing.
    pub commit: Duration,
    /// From the first statement to the commit.
    pub total: Duration,
    /// Withdrawal records of the block's folder applied in its transaction.
    pub withdrawals: Vec<Applied>,
}

/// Connects to `url` (a libpq URL or key=value string), with the TLS its `sslmode` and
/// `sslrootcert` ask for ([`tls`]); without TLS only to this machine, unless `allow_plaintext`.
pub fn connect(url: &str, allow_plaintext: bool) -> Result<Client, LoadError> {
    tls::connect(url, allow_plaintext)
}

/// The name of a block's partition of `tickets` (made by `load`, read by `db-verify`).
pub(crate) fn partition(block_id: i64) -> String {
    format!("tickets_{block_id}")
}

/// `user@host:port/dbname`, never the password.
pub fn describe(config: &tokio_postgres::Config) -> String {
    use postgres::config::Host;
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    format!(
        "{}@{}:{}/{}",
        config.get_user().unwrap_or("(default user)"),
        if hosts.is_empty() {
            "(default host)".into()
        } else {
            hosts.join(",")
        },
        if ports.is_empty() {
            "5432".into()
        } else {
            ports.join(",")
        },
        config.get_dbname().unwrap_or("(default database)")
    )
}

/// The files of one block, read and checked before the database is touched.
struct Block {
    csv: PathBuf,
    manifest: Manifest,
    manifest_bytes: Vec<u8>,
    manifest_sha256: String,
    signature: Vec<u8>,
    game: Game,
    stake_cents: i64,
    /// Each prize of the manifest: canonical text → cents.
    prizes: Vec<(String, i64)>,
    total_cents: i64,
    /// The withdrawal records of the block's folder, each verified and of this emission.
    withdrawals: Vec<FoundWithdrawal>,
}

/// Loads the block whose CSV is `csv`.
///
/// `progress` is told the block's tickets ([`crate::progress::Progress::set_total`]) and each
/// batch of them sent to the server.
pub fn load_block(
    client: &mut Client,
    csv: &Path,
    options: &LoadOptions,
    progress: &dyn crate::progress::Progress,
) -> Result<Outcome, LoadError> {
    load_block_from(client, csv, None, options, progress)
}

/// [`load_block`], of a block whose CSV is, with `source`, not a file but the bytes `source`
/// gives (a pack's member as it streams: `crate::pack::load`): `csv` is where it would be,
/// beside its manifest and signature, which are read from there. The stream is read once:
/// what the COPY reads of it is handed, through a bounded channel, to the verification on its
/// own thread, so every check is the same as of a file. `client` may be a transaction (a
/// pack's): the block's transaction is then a savepoint in it, and nothing is committed
/// before it is.
pub fn load_block_from(
    client: &mut impl GenericClient,
    csv: &Path,
    source: Option<&mut dyn std::io::Read>,
    options: &LoadOptions,
    progress: &dyn crate::progress::Progress,
) -> Result<Outcome, LoadError> {
    let block = read_block(csv, options)?;
    let start = Instant::now();
    let db = |doing: &'static str| {
        move |error| LoadError::Database {
            csv: csv.to_path_buf(),
            doing,
            error,
        }
    };
    let m = &block.manifest;
    let emission_name = m.emission_name();
    let mut attempts = 0;
    let (mut tx, migrated) = loop {
        let mut tx = client
            .transaction()
            .map_err(db("starting the block's transaction"))?;
        match schema::ensure(&mut tx, csv)? {
            schema::Ensured::Current(migrated) => break (tx, migrated),
            // Migrated by another loader meanwhile: a new transaction sees its tables. Each
            // retry follows a migration that committed, so a few always suffice.
            schema::Ensured::Retry if attempts < schema::VERSION => {
                attempts += 1;
                tx.rollback()
                    .map_err(db("starting the block's transaction again"))?;
            }
            schema::Ensured::Retry => {
                return Err(LoadError::SchemaRace {
                    csv: csv.to_path_buf(),
                })
            }
        }
    };
    // Everything the block creates is owned by ef_loader, the schema's owner (schema_3.sql).
    tx.batch_execute("SET LOCAL ROLE ef_loader")
        .map_err(db("taking the role ef_loader"))?;
    // One loader at a time per block; loaders of other blocks go on.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!(
            "emission-factory block {emission_name}/{}",
            m.id.number()
        )],
    )
    .map_err(db("waiting for the block's lock"))?;

    let kind = m.kind().as_str();
    tx.execute(
        "INSERT INTO database_kind (kind) VALUES ($1) ON CONFLICT DO NOTHING",
        &[&kind],
    )
    .map_err(db("recording the database's kind"))?;
    let database_kind: String = tx
        .query_one("SELECT kind FROM database_kind", &[])
        .map_err(db("reading the database's kind"))?
        .get(0);
    if database_kind != kind {
        return Err(LoadError::KindMismatch {
            csv: csv.to_path_buf(),
            block: kind.to_string(),
            database: database_kind,
        });
    }

    let emission = i32::try_from(m.emission().number()).unwrap_or(i32::MAX);
    tx.execute(
        "INSERT INTO emissions (game, game_name, stake_cents, emission, kind, public_key_sha256, seed_sha256)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (game, stake_cents, emission) DO NOTHING",
        &[&m.emission().game(), &m.game_name, &block.stake_cents, &emission, &kind, &m.public_key_sha256, &m.seed_sha256],
    )
    .map_err(db("recording the emission"))?;
    let row = tx
        .query_one(
            "SELECT emission_id, public_key_sha256, seed_sha256 FROM emissions
             WHERE game = $1 AND stake_cents = $2 AND emission = $3",
            &[&m.emission().game(), &block.stake_cents, &emission],
        )
        .map_err(db("reading the emission"))?;
    let emission_id: i64 = row.get(0);
    for (what, loaded, given) in [
        (
            "public_key_sha256",
            row.get::<_, String>(1),
            &m.public_key_sha256,
        ),
        ("seed_sha256", row.get::<_, String>(2), &m.seed_sha256),
    ] {
        if &loaded != given {
            return Err(LoadError::EmissionConflict {
                csv: csv.to_path_buf(),
                emission: emission_name,
                what,
                loaded,
                given: given.clone(),
            });
        }
    }

    let number = i32::try_from(m.id.number()).unwrap_or(i32::MAX);
    if let Some(row) = tx
        .query_opt(
            "SELECT manifest_sha256 FROM blocks WHERE emission_id = $1 AND block = $2",
            &[&emission_id, &number],
        )
        .map_err(db("looking for the block"))?
    {
        let loaded: String = row.get(0);
        return if loaded == block.manifest_sha256 {
            let withdrawals = apply_withdrawals(&mut tx, &block, emission_id, &emission_name)?;
            if !withdrawals.is_empty() {
                tx.commit().map_err(db("committing the withdrawals"))?;
            }
            Ok(Outcome::Skipped {
                manifest_sha256: loaded,
                withdrawals,
            })
        } else {
            Err(LoadError::ManifestConflict {
                csv: csv.to_path_buf(),
                emission: emission_name,
                block: m.id.number(),
                loaded,
                given: block.manifest_sha256.clone(),
            })
        };
    }

    let tickets = i64::try_from(m.tickets).unwrap_or(i64::MAX);
    let winners = i64::try_from(m.winners).unwrap_or(i64::MAX);
    let manifest_text = std::str::from_utf8(&block.manifest_bytes).unwrap_or_default();
    let block_id: i64 = tx
        .query_one(
            "INSERT INTO blocks (emission_id, block, tickets, winners, total_prizes_cents, manifest,
                                 manifest_sha256, signature, csv_sha256, tickets_root)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING block_id",
            &[
                &emission_id,
                &number,
                &tickets,
                &winners,
                &block.total_cents,
                &manifest_text,
                &block.manifest_sha256,
                &block.signature,
                &m.csv.sha256,
                &m.tickets_root,
            ],
        )
        .map_err(db("recording the block"))?
        .get(0);
    for (prize, count) in m.prizes.iter().zip(&block.prizes) {
        let n = i64::try_from(prize.count).unwrap_or(i64::MAX);
        tx.execute(
            "INSERT INTO block_prizes (block_id, prize_cents, count) VALUES ($1, $2, $3)",
            &[&block_id, &count.1, &n],
        )
        .map_err(db("recording the block's prizes"))?;
    }
    let table = partition(block_id);
    // The CHECK is the partition's constraint: with it, attaching needs no scan of the table.
    tx.batch_execute(&format!(
        "CREATE TABLE {table} (LIKE tickets INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
                               CONSTRAINT {table}_block CHECK (block_id = {block_id}))"
    ))
    .map_err(db("creating the block's partition"))?;

    // Verify on another thread while this one streams the COPY, indexes the table and reads
    // it back: the server's work overlaps the verification's, which is waited for only before
    // the commit.
    let verify_options = VerifyOptions {
        public_key: Some(options.public_key),
        game: Some(block.game.clone()),
        ..VerifyOptions::default()
    };
    // A stream is read by the COPY, which copies what it reads to the verification.
    let (tee, from) = match source {
        Some(source) => {
            let (to, from) = crate::fs::pipe::channel(4);
            (Some(crate::fs::pipe::Tee::new(source, to)), Some(from))
        }
        None => (None, None),
    };
    let (report, verify, loaded) = std::thread::scope(|scope| {
        let verify_options = &verify_options;
        let verifier = scope.spawn(move || {
            let t = Instant::now();
            let report = match from {
                Some(mut from) => crate::verify::verify_block_from(
                    csv,
                    &mut from,
                    crate::verify::Form::Csv,
                    verify_options,
                    &crate::progress::NoProgress,
                ),
                None => verify_block(csv, verify_options, &crate::progress::NoProgress),
            };
            (report, t.elapsed())
        });
        progress.set_total(block.manifest.tickets);
        let loaded = store_tickets(&mut tx, &block, block_id, &table, progress, tee);
        let t = Instant::now();
        let (report, verify) = verifier.join().unwrap_or_else(|_| {
            let mut report = crate::verify::BlockReport::default();
            report.problems.push(crate::problem::Problem::new(
                crate::problem::Code::Internal,
                "the verification thread stopped unexpectedly",
            ));
            (report, Duration::ZERO)
        });
        (report, verify, loaded.map(|l| (l, t.elapsed())))
    });
    crate::interrupt::check()?;
    // The verification's verdict first: when the file is wrong, that is what to fix.
    if !report.ok() {
        return Err(LoadError::Verification {
            csv: csv.to_path_buf(),
            problems: crate::problem::messages(&report.problems),
            unlisted: report.unlisted,
        });
    }
    let (mut stored, wait) = loaded?;
    // The folder's withdrawals, in this transaction, last: a block loaded now that a record
    // withdraws is never on sale, not even for a moment, and the sales they hold back
    // (schema_6.sql, sale_hold) wait only for the commit.
    let withdrawals = apply_withdrawals(&mut tx, &block, emission_id, &emission_name)?;
    let t = Instant::now();
    tx.commit().map_err(db("committing the block"))?;
    stored.verify = verify;
    stored.wait = wait;
    stored.commit = t.elapsed();
    stored.migrated = migrated;
    stored.withdrawals = withdrawals;
    stored.total = start.elapsed();
    Ok(Outcome::Loaded(stored))
}

/// Streams the block's tickets into `table`, checks that the file sent is the file the
/// manifest describes, indexes the table, attaches it as the block's partition with its sale
/// sequence, and reads the block back; the transaction is left for the caller to commit.
fn store_tickets(
    tx: &mut postgres::Transaction<'_>,
    block: &Block,
    block_id: i64,
    table: &str,
    progress: &dyn crate::progress::Progress,
    mut tee: Option<crate::fs::pipe::Tee<'_>>,
) -> Result<Loaded, LoadError> {
    let csv = block.csv.as_path();
    let m = &block.manifest;
    let db = |doing: &'static str| {
        move |error| LoadError::Database {
            csv: csv.to_path_buf(),
            doing,
            error,
        }
    };
    let t = Instant::now();
    let mut file;
    let reader: &mut dyn std::io::Read = match tee.as_mut() {
        Some(tee) => tee,
        None => {
            file = crate::fs::open::open_regular(csv).map_err(|source| LoadError::Io {
                path: csv.to_path_buf(),
                source,
            })?;
            &mut file
        }
    };
    let sent = copy::stream(tx, table, reader, block_id, &block.prizes, progress);
    // The end of the stream for the verification, whatever the COPY did.
    drop(tee);
    let sent = match sent {
        Ok(sent) => sent,
        Err(copy::CopyError::Db(error)) => {
            return Err(LoadError::Database {
                csv: csv.to_path_buf(),
                doing: "streaming the tickets (COPY)",
                error,
            })
        }
        Err(copy::CopyError::Io(source)) => {
            return Err(LoadError::Io {
                path: csv.to_path_buf(),
                source,
            })
        }
        Err(copy::CopyError::Interrupted(i)) => return Err(i.into()),
        Err(copy::CopyError::Line(what)) => {
            return Err(LoadError::Verification {
                csv: csv.to_path_buf(),
                problems: vec![format!("{what} (the file changed while it was loaded?)")],
                unlisted: 0,
            })
        }
    };
    let copy_time = t.elapsed();
    if hex::encode(sent.sha256) != m.csv.sha256 || sent.rows != m.tickets {
        return Err(LoadError::Verification {
            csv: csv.to_path_buf(),
            problems: vec![format!(
                "the file sent to the server ({} tickets, SHA-256 {}) is not the one the manifest describes: it changed while it was loaded; load it again once it is stable",
                sent.rows,
                hex::encode(sent.sha256)
            )],
            unlisted: 0,
        });
    }

    let t = Instant::now();
    // The primary key is built in one sort, in memory: the server's default of 64 MB spills a
    // 900 000-ticket block to disk, and so do parallel workers, which share the memory and were
    // no faster. For this transaction only.
    tx.batch_execute(
        "SET LOCAL maintenance_work_mem = '256MB'; SET LOCAL max_parallel_maintenance_workers = 0",
    )
    .map_err(db("setting maintenance_work_mem"))?;
    tx.batch_execute(&format!(
        "ALTER TABLE {table} ADD PRIMARY KEY (block_id, idx)"
    ))
    .map_err(db("indexing the block's partition"))?;
    // Finds the index and the constraint it needs: neither builds nor scans anything.
    tx.batch_execute(&format!(
        "ALTER TABLE tickets ATTACH PARTITION {table} FOR VALUES IN ({block_id})"
    ))
    .map_err(db("attaching the block's partition"))?;
    // The block's sale sequence, from its first ticket (schema_6.sql).
    tx.execute("SELECT sale_open_block($1, 0)", &[&block_id])
        .map_err(db("opening the block's sales"))?;
    let attach = t.elapsed();

    let t = Instant::now();
    read_back(tx, block, block_id)?;
    Ok(Loaded {
        tickets: sent.rows,
        migrated: Vec::new(),
        copy: copy_time,
        attach,
        read_back: t.elapsed(),
        verify: Duration::ZERO,
        wait: Duration::ZERO,
        commit: Duration::ZERO,
        total: Duration::ZERO,
        withdrawals: Vec::new(),
    })
}

/// Applies the block's folder's withdrawal records not yet in the database, in the block's
/// transaction. Each one first holds the sales back (`sale_hold`), so the sales in flight end
/// before it and every later sale sees it (schema_6.sql). A record already
/// applied is skipped; another record under the same number is refused.
fn apply_withdrawals(
    tx: &mut postgres::Transaction<'_>,
    block: &Block,
    emission_id: i64,
    emission_name: &str,
) -> Result<Vec<Applied>, LoadError> {
    let csv = block.csv.as_path();
    let db = |doing: &'static str| {
        move |error| LoadError::Database {
            csv: csv.to_path_buf(),
            doing,
            error,
        }
    };
    let mut applied = Vec::new();
    if block.withdrawals.is_empty() {
        return Ok(applied);
    }
    // One loader at a time applies an emission's withdrawals.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("emission-factory withdrawals {emission_name}")],
    )
    .map_err(db("waiting for the emission's withdrawal lock"))?;
    for found in &block.withdrawals {
        let w = &found.withdrawal;
        let number = i32::try_from(w.number).unwrap_or(i32::MAX);
        if let Some(row) = tx
            .query_opt(
                "SELECT record_sha256 FROM withdrawals WHERE emission_id = $1 AND number = $2",
                &[&emission_id, &number],
            )
            .map_err(db("looking for the withdrawal records applied"))?
        {
            let there: String = row.get(0);
            if there != found.sha256 {
                return Err(LoadError::WithdrawalConflict {
                    path: found.path.clone(),
                    emission: emission_name.to_string(),
                    number: w.number,
                    loaded: there,
                    given: found.sha256.clone(),
                });
            }
            continue;
        }
        let withdrawn = w.block.map(|b| i32::try_from(b).unwrap_or(i32::MAX));
        tx.execute("SELECT sale_hold()", &[]).map_err(db(
            "holding the sales back (waiting for the sales in flight)",
        ))?;
        let text = std::str::from_utf8(&found.bytes).unwrap_or_default();
        tx.execute(
            "INSERT INTO withdrawals (emission_id, number, block, reason, record, record_sha256, signature)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &emission_id,
                &number,
                &withdrawn,
                &w.reason,
                &text,
                &found.sha256,
                &found.signature,
            ],
        )
        .map_err(db("recording the withdrawal"))?;
        tx.execute("SELECT sale_refresh($1)", &[&emission_id])
            .map_err(db("stopping the sales of what is withdrawn"))?;
        applied.push(Applied {
            path: found.path.clone(),
            what: w.what(),
            sha256: found.sha256.clone(),
        });
    }
    Ok(applied)
}

/// Reads the block's files and checks what can be checked without the tickets: the manifest,
/// its signature with the trusted key, the emission's kind.
fn read_block(csv: &Path, options: &LoadOptions) -> Result<Block, LoadError> {
    let bad = |problem: String| LoadError::Verification {
        csv: csv.to_path_buf(),
        problems: vec![problem],
        unlisted: 0,
    };
    let number = crate::verify::block_number(csv).ok_or_else(|| {
        bad(format!(
            "{}: not a block file (block files are named block-NNNNN.csv)",
            csv.display()
        ))
    })?;
    let dir = crate::verify::folder_of(csv);
    // Bounded, regular files only: a manifest or signature is read whole, so a huge file or
    // a FIFO at its name must be refused before it is read.
    let read = |path: PathBuf| {
        crate::fs::open::read_at_most(
            &path,
            block::manifest::MAX_MANIFEST_BYTES,
            "a manifest or signature",
        )
        .map_err(|e| LoadError::Io {
            path: path.clone(),
            source: match e {
                crate::fs::open::ReadError::Io(e) => e,
                e => std::io::Error::other(e.to_string()),
            },
        })
    };
    let manifest_path = dir.join(block::manifest_name(number));
    let manifest_bytes = read(manifest_path.clone())?;
    let signature = read(dir.join(block::signature_name(number)))?;
    if let Err(m) = keys::check(&options.public_key, &manifest_bytes, &signature) {
        return Err(bad(format!(
            "{}: {m}: the block was not signed with the key given (--public-key), or the manifest was changed",
            dir.join(block::signature_name(number)).display()
        )));
    }
    let manifest = Manifest::from_bytes(&manifest_bytes).map_err(|e| {
        bad(format!(
            "{}: not a valid manifest: {e}",
            manifest_path.display()
        ))
    })?;
    if manifest.kind() == EmissionKind::Test && !options.allow_test {
        return Err(LoadError::TestEmission {
            csv: csv.to_path_buf(),
        });
    }
    let folder_copy = crate::verify::folder_definition(
        crate::verify::folder_of(csv),
        &manifest.game_definition_sha256,
    )
    .map_err(|e| bad(e.to_string()))?;
    let game = match (&options.game, folder_copy) {
        (Some(g), _) => g.clone(),
        (None, Some(g)) => g,
        (None, None) => Game::builtin(manifest.emission().game()).map_err(|e| {
            bad(format!(
                "{}: {e}; give --game with its definition",
                manifest_path.display()
            ))
        })?,
    };
    let to_cents = |text: &str| {
        parse_canonical(text)
            .and_then(cents)
            .and_then(|c| i64::try_from(c).ok())
            .ok_or_else(|| {
                bad(format!(
                    "{}: '{text}' is not a canonical amount in whole cents",
                    manifest_path.display()
                ))
            })
    };
    let stake_cents = to_cents(manifest.emission().stake())?;
    let prizes = manifest
        .prizes
        .iter()
        .map(|p| Ok((p.amount.clone(), to_cents(&p.amount)?)))
        .collect::<Result<Vec<_>, LoadError>>()?;
    let total_cents = to_cents(&manifest.total_prizes)?;
    let manifest_sha256 = hex::encode(Sha256::digest(&manifest_bytes));
    // Every withdrawal record of the folder must verify with the trusted key and be of this
    // emission; one that is not stops the load before the database is touched.
    let withdrawals = withdrawal::read_all(dir, &options.public_key)
        .and_then(|found| {
            let id = withdrawal::RecordBinding {
                emission: manifest.emission(),
                seed_sha256: &manifest.seed_sha256,
                public_key_sha256: &manifest.public_key_sha256,
                record_sha256: manifest.record_sha256.as_deref(),
            };
            for f in &found {
                withdrawal::check_for(f, &id)?;
            }
            Ok(found)
        })
        .map_err(|e| LoadError::Withdrawal {
            csv: csv.to_path_buf(),
            message: crate::problem::chained(&e),
        })?;
    Ok(Block {
        csv: csv.to_path_buf(),
        manifest,
        manifest_bytes,
        manifest_sha256,
        signature,
        game,
        stake_cents,
        prizes,
        total_cents,
        withdrawals,
    })
}

/// Reads back from the database the counts per prize, the total and the number of tickets of
/// the block, and compares them with the manifest.
fn read_back(
    tx: &mut postgres::Transaction<'_>,
    block: &Block,
    block_id: i64,
) -> Result<(), LoadError> {
    let rows = tx
        .query(
            "SELECT prize_cents, count(*), sum(prize_cents)::bigint FROM tickets
             WHERE block_id = $1 GROUP BY prize_cents",
            &[&block_id],
        )
        .map_err(|error| LoadError::Database {
            csv: block.csv.clone(),
            doing: "reading the loaded block back",
            error,
        })?;
    let mut found: BTreeMap<i64, i64> = BTreeMap::new();
    let mut total: i64 = 0;
    let mut tickets: i64 = 0;
    for row in &rows {
        found.insert(row.get(0), row.get(1));
        total = total.saturating_add(row.get::<_, i64>(2));
        tickets = tickets.saturating_add(row.get::<_, i64>(1));
    }
    let expected: BTreeMap<i64, i64> = block
        .manifest
        .prizes
        .iter()
        .zip(&block.prizes)
        .filter(|(p, _)| p.count > 0)
        .map(|(p, (_, c))| (*c, i64::try_from(p.count).unwrap_or(i64::MAX)))
        .collect();
    let mismatch = |expected: String, found: String| LoadError::ReadBack {
        csv: block.csv.clone(),
        expected,
        found,
    };
    let show = |m: &BTreeMap<i64, i64>| {
        m.iter()
            .rev()
            .map(|(c, n)| format!("{n} × {c} cents"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if found != expected {
        return Err(mismatch(show(&expected), show(&found)));
    }
    if total != block.total_cents {
        return Err(mismatch(
            format!("a total of {} cents", block.total_cents),
            format!("{total} cents"),
        ));
    }
    if u64::try_from(tickets).ok() != Some(block.manifest.tickets) {
        return Err(mismatch(
            format!("{} tickets", block.manifest.tickets),
            format!("{tickets}"),
        ));
    }
    Ok(())
}
