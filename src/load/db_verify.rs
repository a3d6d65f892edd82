//! Re-verification inside the database (`db-verify`): every loaded block checked again from
//! its rows alone, against the signed manifest stored at load time.
//!
//! The triggers and privileges of schema version 3 stop a seller; they do not stop the
//! schema's owner (or a superuser), who can disable triggers. What this check trusts is the
//! key the operator gives and nothing the database says: for each block, in one read-only
//! snapshot (REPEATABLE READ, so sales going on do not tear it), it
//!
//! - checks the manifest's Ed25519 signature with that key, its SHA-256 against the block row,
//!   and every column of the block, emission and prize rows against the manifest;
//! - streams the block's tickets out in index order (`COPY ... TO STDOUT (FORMAT binary)`) and
//!   recomputes each one's SHA-256 from its serial, prize and layout (FORMAT.md), its serial
//!   from its block and index, the block's Merkle root (RFC 6962, as `verify` does) and the
//!   count per prize tier, and compares them with the manifest;
//! - checks the sales (schema_6.sql): each is of a ticket of the block, none twice, none
//!   beyond the block's sale sequence (a ticket sold ahead of it was sold by hand), and once the
//!   sequence has passed the block's end every ticket unsold is in `sale_returns` (else it
//!   would never be sold).
//!
//! Every changed row is named (block, index, serial). An owner who changes a ticket and its
//! hash together breaks the Merkle root; one who deletes a sale of a block whose sequence has
//! not passed its end leaves what no check of the database alone can tell from a sale rolled
//! back (the sale's own record is the game server's).

use super::error::explain;
use crate::block::id::{emission_name, EmissionId};
use crate::block::keys;
use crate::block::manifest::Manifest;
use crate::hash::merkle::MerkleRoot;
use crate::hash::sha256;
use crate::money::{canonical, cents, from_cents, parse_canonical};
use crate::untrusted::{shown_text, SHOWN_CHARS};
use ed25519_dalek::VerifyingKey;
use postgres::Client;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::ops::Range;
use std::sync::mpsc::{Receiver, Sender, SyncSender};
use thiserror::Error;

/// Problems listed per block; more are counted.
pub const LISTED: usize = 50;

/// Hashes pushed to the Merkle tree at a time, and ticket lines hashed together.
const BATCH: usize = 4096;
/// Bytes of the COPY stream the reading thread hands over at a time.
const CHUNK: usize = 1 << 20;
/// Chunks it reads ahead.
const AHEAD: usize = 4;
/// Leaves of the Merkle subtrees built side by side (a power of two).
const MERKLE_RUN: usize = 1 << 18;
/// Connections a block's tickets are streamed on at most, each over a share of its pages.
const STREAMS: usize = 4;

/// What to check, against which key.
#[derive(Clone)]
pub struct DbVerifyOptions {
    /// The key every manifest must be signed with.
    pub public_key: VerifyingKey,
    /// One emission, or every emission of the database.
    pub emission: Option<EmissionId>,
    /// The database, as the connection given to [`db_verify`] was made: the tickets are
    /// streamed on more connections to it, in the same snapshot.
    pub url: String,
    /// As for that connection: plaintext to a host other than this machine allowed.
    pub allow_plaintext: bool,
    /// The schema `load` created the tables in (`public` unless the loading role's
    /// `current_schema()` was another). Every name is read in it, never through the session's
    /// search_path: a schema named like the auditor, first in the default `"$user", public`,
    /// could otherwise hold copies of the tables as loaded.
    pub schema: String,
}

/// The tables db-verify reads and the kind each must be (`pg_class.relkind`): `tickets` the
/// partitioned table, the others ordinary tables. A view, or a table whose rows a policy
/// filters, could show the auditor other rows than the sale function reads.
const READ: [(&str, &str); 9] = [
    ("tickets", "p"),
    ("blocks", "r"),
    ("emissions", "r"),
    ("block_prizes", "r"),
    ("sales", "r"),
    ("sale_blocks", "r"),
    ("sale_returns", "r"),
    ("withdrawals", "r"),
    ("closings", "r"),
];

/// What every connection of the check sets first: names looked up in the schema given only
/// (pg_temp last), and an error rather than rows filtered by a row-level security policy.
fn session_settings(schema: &str) -> String {
    format!(
        "SET search_path = pg_catalog, \"{}\", pg_temp; SET row_security = off",
        schema.replace('"', "\"\"")
    )
}

/// The verdict on one block.
#[derive(Debug, Clone)]
pub struct BlockVerdict {
    /// `game/stake cents/eNNNN`.
    pub emission: String,
    /// The block's number.
    pub block: i32,
    /// Ticket rows read.
    pub tickets: u64,
    /// Of which sold.
    pub sold: u64,
    /// What is wrong (empty: the block is as signed).
    pub problems: Vec<String>,
    /// Problems found beyond those listed.
    pub unlisted: u64,
    /// What is not wrong as far as the database can tell, but an auditor should compare with
    /// the game server's records (tickets unsold below the sale sequence).
    pub notes: Vec<String>,
}

impl BlockVerdict {
    /// True if nothing is wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, text: String) {
        if self.problems.len() < LISTED {
            self.problems.push(text);
        } else {
            self.unlisted += 1;
        }
    }
}

/// A check that could not be made.
#[derive(Debug, Error)]
pub enum DbVerifyError {
    /// The server refused or failed a statement.
    #[error("{} (while {doing}); nothing was concluded", explain(error))]
    Database {
        /// What the check was doing.
        doing: &'static str,
        /// The server's error.
        error: postgres::Error,
    },
    /// The schema is not what `load` made: a table read is missing kind or shows rows
    /// filtered by a policy.
    #[error("{0}; nothing was concluded")]
    Schema(String),
    /// A connection on which the tickets are streamed could not be made.
    #[error("cannot open a connection the tickets are streamed on: {0}; nothing was concluded")]
    Connect(String),
    /// The database holds no block of the emission asked for (or none at all).
    #[error("the database holds no block{}; check --database-url and the EMISSION argument (GAME/STAKE/eNNNN)", .0.as_ref().map(|e| format!(" of {e}")).unwrap_or_default())]
    Nothing(Option<EmissionId>),
    /// The ticket stream is not what the COPY format says.
    #[error(
        "the server's COPY stream of block {block} is malformed ({what}); nothing was concluded"
    )]
    Stream {
        /// The block's number.
        block: i32,
        /// What is wrong with it.
        what: String,
    },
}

fn db(doing: &'static str) -> impl Fn(postgres::Error) -> DbVerifyError {
    move |error| DbVerifyError::Database { doing, error }
}

/// Checks every block of the emission asked for (or of the database), in one read-only
/// snapshot, and returns a verdict per block in emission then block order.
pub fn db_verify(
    client: &mut Client,
    options: &DbVerifyOptions,
) -> Result<Vec<BlockVerdict>, DbVerifyError> {
    client
        .batch_execute(&session_settings(&options.schema))
        .map_err(db("setting the search_path to the schema"))?;
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(db("starting a read-only transaction"))?;
    check_tables(&mut tx, &options.schema)?;
    let tickets = TicketStreams::open(&mut tx, options)?;
    let (game, stake, number) = match &options.emission {
        Some(e) => (
            Some(e.game().to_string()),
            i64::try_from(e.stake_cents()).ok(),
            i32::try_from(e.number()).ok(),
        ),
        None => (None, None, None),
    };
    let rows = tx
        .query(
            "SELECT b.block_id, b.block, b.tickets, b.winners, b.total_prizes_cents, b.manifest,
                    b.manifest_sha256, b.signature, b.csv_sha256, b.tickets_root,
                    e.game, e.stake_cents, e.emission, e.kind, e.public_key_sha256, e.seed_sha256,
                    e.emission_id
             FROM blocks b JOIN emissions e USING (emission_id)
             WHERE ($1::text IS NULL OR e.game = $1) AND ($2::bigint IS NULL OR e.stake_cents = $2)
               AND ($3::integer IS NULL OR e.emission = $3)
             ORDER BY e.game, e.stake_cents, e.emission, b.block",
            &[&game, &stake, &number],
        )
        .map_err(db("reading the blocks"))?;
    if rows.is_empty() {
        return Err(DbVerifyError::Nothing(options.emission.clone()));
    }
    // Withdrawals and closings exist from schema version 4.
    let off_sale: bool = tx
        .query_one("SELECT to_regclass('closings') IS NOT NULL", &[])
        .map_err(db("reading the schema"))?
        .get(0);
    let mut verdicts = Vec::with_capacity(rows.len());
    for row in &rows {
        crate::interrupt::check().map_err(|_| DbVerifyError::Stream {
            block: row.get(1),
            what: "interrupted".into(),
        })?;
        let mut verdict = check_block(&mut tx, &tickets, row, options)?;
        if off_sale {
            check_off_sale(&mut tx, row, options, &mut verdict)?;
        }
        verdicts.push(verdict);
    }
    tx.commit().map_err(db("ending the transaction"))?;
    Ok(verdicts)
}

/// The schema exists, and each table read that is there is of its kind, with no row-level
/// security (`row_security = off` would make a filtered read an error; this names it).
fn check_tables(tx: &mut postgres::Transaction<'_>, schema: &str) -> Result<(), DbVerifyError> {
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)",
            &[&schema],
        )
        .map_err(db("reading the schema"))?
        .get(0);
    if !exists {
        return Err(DbVerifyError::Schema(format!(
            "the database has no schema `{}` (give the one `load` created the tables in with --schema)",
            shown_text(schema, SHOWN_CHARS)
        )));
    }
    let names: Vec<&str> = READ.iter().map(|(n, _)| *n).collect();
    let rows = tx
        .query(
            "SELECT c.relname::text, c.relkind::text, c.relrowsecurity
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relname = ANY($2)",
            &[&schema, &names],
        )
        .map_err(db("reading the schema's tables"))?;
    let mut wrong = Vec::new();
    for r in &rows {
        let (name, kind, policed): (String, String, bool) = (r.get(0), r.get(1), r.get(2));
        let Some((_, want)) = READ.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        if kind != *want {
            let what = match kind.as_str() {
                "v" => "a view",
                "m" => "a materialized view",
                "f" => "a foreign table",
                "r" => "an ordinary table",
                "p" => "a partitioned table",
                _ => "another kind of relation",
            };
            wrong.push(format!(
                "{schema}.{name} is {what} (relkind {kind}), not the table `load` made: what it shows is not what the sale function reads"
            ));
        }
        if policed {
            wrong.push(format!(
                "{schema}.{name} has row-level security enabled: a policy could hide rows from the auditor"
            ));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(DbVerifyError::Schema(wrong.join("; ")))
    }
}

/// The block row against its manifest, then its tickets and cursors.
fn check_block(
    tx: &mut postgres::Transaction<'_>,
    tickets: &TicketStreams,
    row: &postgres::Row,
    options: &DbVerifyOptions,
) -> Result<BlockVerdict, DbVerifyError> {
    let block_id: i64 = row.get(0);
    let block: i32 = row.get(1);
    let manifest_text: String = row.get(5);
    let signature: Vec<u8> = row.get(7);
    let game: String = row.get(10);
    let stake_cents: i64 = row.get(11);
    let emission: i32 = row.get(12);
    let mut v = BlockVerdict {
        emission: emission_name(
            &game,
            &stake_text(stake_cents),
            u32::try_from(emission).unwrap_or(0),
        ),
        block,
        tickets: 0,
        sold: 0,
        problems: Vec::new(),
        unlisted: 0,
        notes: Vec::new(),
    };
    if let Err(m) = keys::check(&options.public_key, manifest_text.as_bytes(), &signature) {
        v.problem(format!(
            "block {block}: the manifest stored with it does not verify with the key given ({m}): it was changed in the database, or the block was not signed with --public-key"
        ));
        return Ok(v);
    }
    let m = match Manifest::from_bytes(manifest_text.as_bytes()) {
        Ok(m) => m,
        Err(e) => {
            v.problem(format!(
                "block {block}: the stored manifest is signed but not a manifest: {e}"
            ));
            return Ok(v);
        }
    };
    // Each column of the rows against the signed manifest.
    let to_cents = |text: &str| {
        parse_canonical(text)
            .and_then(cents)
            .and_then(|c| i64::try_from(c).ok())
    };
    let manifest_sha256 = hex::encode(Sha256::digest(manifest_text.as_bytes()));
    let columns: [(&str, String, String); 13] = [
        ("blocks.manifest_sha256", row.get(6), manifest_sha256),
        ("blocks.block", block.to_string(), m.id.number().to_string()),
        (
            "blocks.tickets",
            row.get::<_, i64>(2).to_string(),
            m.tickets.to_string(),
        ),
        (
            "blocks.winners",
            row.get::<_, i64>(3).to_string(),
            m.winners.to_string(),
        ),
        (
            "blocks.total_prizes_cents",
            row.get::<_, i64>(4).to_string(),
            to_cents(&m.total_prizes).map_or("?".into(), |c| c.to_string()),
        ),
        ("blocks.csv_sha256", row.get(8), m.csv.sha256.clone()),
        ("blocks.tickets_root", row.get(9), m.tickets_root.clone()),
        (
            "emissions.game",
            game.clone(),
            m.emission().game().to_string(),
        ),
        (
            "emissions.stake_cents",
            stake_cents.to_string(),
            to_cents(m.emission().stake()).map_or("?".into(), |c| c.to_string()),
        ),
        (
            "emissions.emission",
            emission.to_string(),
            m.emission().number().to_string(),
        ),
        ("emissions.kind", row.get(13), m.kind().as_str().to_string()),
        (
            "emissions.public_key_sha256",
            row.get(14),
            m.public_key_sha256.clone(),
        ),
        ("emissions.seed_sha256", row.get(15), m.seed_sha256.clone()),
    ];
    for (column, found, signed) in columns {
        if found != signed {
            v.problem(format!(
                "block {block}: {column} is {} in the database, {} in the signed manifest",
                shown_text(&found, SHOWN_CHARS),
                shown_text(&signed, SHOWN_CHARS)
            ));
        }
    }
    // cents → (canonical text, count), from the manifest.
    let mut tiers: BTreeMap<i64, (String, u64)> = BTreeMap::new();
    for p in &m.prizes {
        match to_cents(&p.amount) {
            Some(c) => {
                tiers.insert(c, (p.amount.clone(), p.count));
            }
            None => v.problem(format!(
                "block {block}: the manifest's prize '{}' is not in whole cents",
                shown_text(&p.amount, SHOWN_CHARS)
            )),
        }
    }
    let stored: BTreeMap<i64, i64> = tx
        .query(
            "SELECT prize_cents, count FROM block_prizes WHERE block_id = $1",
            &[&block_id],
        )
        .map_err(db("reading the block's prizes"))?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let signed: BTreeMap<i64, i64> = tiers
        .iter()
        .map(|(c, (_, n))| (*c, i64::try_from(*n).unwrap_or(i64::MAX)))
        .collect();
    if stored != signed {
        v.problem(format!(
            "block {block}: block_prizes holds {} where the signed manifest says {}",
            show_tiers(&stored),
            show_tiers(&signed)
        ));
    }

    // The block's sales (schema_6.sql): which indices are sold, and its sequence.
    let slots = usize::try_from(m.tickets).unwrap_or(0);
    let sales = read_sales(tx, block_id, block, slots)?;
    let seq = tx
        .query_opt(
            "SELECT tickets, passed, migrated, pg_catalog.pg_sequence_last_value(seq)
             FROM sale_blocks WHERE block_id = $1",
            &[&block_id],
        )
        .map_err(db("reading the block's sale sequence"))?;
    // The first index the sequence has not given: below it a ticket unsold is a sale rolled
    // back (sold later from sale_returns), above it a ticket sold was sold by hand.
    let mut next: Option<i64> = None;
    let mut passed = false;
    let mut migrated = false;
    match seq {
        None => v.problem(format!(
            "block {block}: no sale_blocks row (it can never be sold): the row was deleted"
        )),
        Some(r) => {
            let tickets: i32 = r.get(0);
            passed = r.get(1);
            migrated = r.get(2);
            if u64::try_from(tickets).ok() != Some(m.tickets) {
                v.problem(format!(
                    "block {block}: its sale_blocks row says {tickets} tickets, the signed manifest {}",
                    m.tickets
                ));
            }
            next = Some(
                r.get::<_, Option<i64>>(3)
                    .map_or(0, |l| l.saturating_add(1)),
            );
        }
    }
    let returned: std::collections::HashSet<i32> = if passed {
        tx.query(
            "SELECT idx FROM sale_returns WHERE block_id = $1",
            &[&block_id],
        )
        .map_err(db("reading the block's returned tickets"))?
        .iter()
        .map(|r| r.get(0))
        .collect()
    } else {
        Default::default()
    };
    for text in &sales.problems {
        v.problem(format!("block {block}: {text}"));
    }

    // The tickets, in index order.
    // The manifest's block (checked above against the emission row; its game and stake were
    // checked at reading).
    let prefix = m.id.serial_prefix();
    // In the table's order, not the index's: sorting 900 000 rows by index took the server
    // 2.4 s against 1.1 s for the scan. Each hash goes to its index's slot, and the tree is
    // built from the slots once the stream is read (32 bytes a ticket).
    //
    // One stream per connection of `tickets`, each over its share of the table's pages
    // (ctid ranges: the server scans only those pages): the server's COPY is the bound, and
    // two COPYs of half a block each took 0.28 s against 0.47 s for one of the whole block.
    // The ranges cover every page whatever the page count the server gives (only the
    // balance depends on it): the first has no lower bound, the last no upper one.
    let pages: i64 = tx
        .query_one(
            "SELECT coalesce(pg_catalog.pg_relation_size(pg_catalog.to_regclass($1))
                     / pg_catalog.current_setting('block_size')::bigint, 0)",
            &[&super::partition(block_id)],
        )
        .map_err(db("reading the size of the block's table"))?
        .get(0);
    let pages = u32::try_from(pages.max(0)).unwrap_or(u32::MAX);
    let n = tickets.connections.len();
    let mut readers = Vec::with_capacity(n);
    for (k, c) in tickets.connections.iter().enumerate() {
        let bound = |k: usize| u64::from(pages) * k as u64 / n as u64;
        let mut range = String::new();
        if k > 0 {
            range.push_str(&format!(" AND ctid >= '({},0)'", bound(k)));
        }
        if k + 1 < n {
            range.push_str(&format!(" AND ctid < '({},0)'", bound(k + 1)));
        }
        let query = format!(
            "COPY (SELECT idx, serial, prize_cents, layout, sha256
                   FROM tickets WHERE block_id = {block_id}{range}) TO STDOUT (FORMAT binary)"
        );
        let reader = c
            .runtime
            .block_on(c.client.copy_out(&query))
            .map_err(db("streaming the tickets out (COPY)"))?;
        readers.push((c, reader));
    }
    let mut hashes: Vec<[u8; 32]> = vec![[0u8; 32]; slots];
    let mut seen: Vec<bool> = vec![false; slots];
    let mut rows = RowProblems::default();
    // Counted per tier of the manifest in a list searched from the commonest (the losing
    // tickets' tier first) instead of two map lookups a row (the tier, then its count);
    // prizes not in the manifest in a map.
    let mut tier_list: Vec<(i64, &str, u64)> = tiers
        .iter()
        .map(|(c, (text, n))| (*c, text.as_str(), *n))
        .collect();
    tier_list.sort_by_key(|&(_, _, n)| std::cmp::Reverse(n));
    let mut tier_counts = vec![0u64; tier_list.len()];
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    let mut pending = Pending::default();
    // Each stream is read on a thread of its own (the client library's work for each row's
    // message, in one runtime call for the whole stream) and handed over in chunks, while
    // this one parses, hashes and checks them, a batch of each stream in turn so that every
    // stream's server moves on.
    std::thread::scope(|scope| -> Result<(), DbVerifyError> {
        let mut streams = Vec::with_capacity(n);
        for (c, reader) in readers {
            let (full_tx, full_rx) = std::sync::mpsc::sync_channel(AHEAD);
            let (back_tx, back_rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("db-verify COPY".into())
                .spawn_scoped(scope, move || {
                    c.runtime.block_on(read_ahead(reader, &full_tx, &back_rx))
                })
                .map_err(|e| DbVerifyError::Stream {
                    block,
                    what: format!("no thread to read it: {e}"),
                })?;
            streams.push(Some(Stream::new(Chunks::new(full_rx, back_tx), block)?));
        }
        let mut turn = 0;
        while streams.iter().any(Option::is_some) {
            turn = (turn + 1) % streams.len();
            let Some(stream) = streams[turn].as_mut() else {
                continue;
            };
            for _ in 0..BATCH {
                let Some(t) = stream.next()? else {
                    // Whatever follows the trailer is not read: the reading thread stops at its
                    // next chunk.
                    streams[turn] = None;
                    break;
                };
                // Formatted only for a row with a problem.
                let name = Name {
                    block,
                    idx: t.idx,
                    serial: t.serial,
                };
                v.tickets += 1;
                match usize::try_from(t.idx).ok().filter(|&i| i < slots) {
                    None => rows.add(
                        t.idx,
                        format!(
                    "{name}: an index beyond the block's {} tickets (a row added in the database)",
                    m.tickets
                ),
                    ),
                    Some(slot) => {
                        if seen[slot] {
                            rows.add(t.idx, format!("{name}: index {} appears twice", t.idx));
                        }
                        seen[slot] = true;
                        hashes[slot] = t.sha256;
                    }
                }
                let digits = u64::try_from(t.idx).map(crate::block::index_digits);
                let serial_ok = digits.is_ok_and(|d| {
                    t.serial.len() == prefix.len() + 7
                        && t.serial.starts_with(prefix.as_bytes())
                        && t.serial[prefix.len()..] == d
                });
                if !serial_ok {
                    rows.add(
                        t.idx,
                        format!(
                        "{name}: the serial is not that of index {} of this block ({prefix}{:07})",
                        t.idx, t.idx
                    ),
                    );
                }
                match tier_list.iter().position(|(c, _, _)| *c == t.prize_cents) {
                    None => {
                        *counts.entry(t.prize_cents).or_default() += 1;
                        rows.add(
                            t.idx,
                            format!(
                                "{name}: prize {} cents is not a prize of the signed manifest",
                                t.prize_cents
                            ),
                        )
                    }
                    Some(tier) => {
                        tier_counts[tier] += 1;
                        pending.push(&t, tier_list[tier].1.as_bytes());
                        if pending.rows.len() == BATCH {
                            pending.check(block, &mut rows);
                        }
                    }
                }
                let sold = usize::try_from(t.idx)
                    .ok()
                    .is_some_and(|i| sales.sold.get(i).copied().unwrap_or(false));
                if sold {
                    v.sold += 1;
                }
                if let Some(next) = next {
                    if sold && t.idx >= next && !migrated {
                        rows.add(t.idx, format!(
                        "{name}: sold, but the block's sale sequence has not reached it (next {next}): the sale was made outside sell_next_ticket"
                    ));
                    } else if !sold
                        && passed
                        && !returned.contains(&i32::try_from(t.idx).unwrap_or(-1))
                    {
                        rows.add(t.idx, format!(
                        "{name}: unsold, but its block's sale sequence has passed it and it is not in sale_returns (it would never be sold): a sale was deleted, or the list was changed by hand"
                    ));
                    }
                }
            }
        }
        pending.check(block, &mut rows);
        Ok(())
    })?;
    // Unsold below the sequence of a block that has not passed its end (tickets present).
    if let Some(next) = next.filter(|_| !passed) {
        let below = usize::try_from(next).unwrap_or(0).min(slots);
        let behind = runs((0..below).filter(|&i| seen[i] && !sales.sold[i]));
        if !behind.is_empty() {
            let count: usize = behind.iter().map(|(from, to)| to - from + 1).sum();
            let ranges: Vec<String> = behind
                .iter()
                .take(LISTED)
                .map(|&(from, to)| match to - from {
                    0 => from.to_string(),
                    _ => format!("{from} to {to}"),
                })
                .collect();
            v.notes.push(format!(
                "block {block}: {count} ticket(s) unsold below the block's sale sequence (index {}): sales rolled back, to be sold once the sequence passes the block's end; the database alone cannot tell them from sales deleted or a sequence moved by its owner: compare with the game server's record of its sales",
                listed(&ranges, behind.len(), " ranges")
            ));
        }
    }
    // Missing indexes, as ranges.
    for (from, to) in runs((0..slots).filter(|&i| !seen[i])) {
        let text = if from == to {
            format!("block {block}: index {from} missing (deleted from the database)")
        } else {
            format!("block {block}: indexes {from} to {to} missing (deleted from the database)")
        };
        rows.add(i64::try_from(from).unwrap_or(i64::MAX), text);
    }
    // The trees of runs of 2^18 leaves side by side (the cores), appended in order: the same
    // root (MerkleRoot::append), 58 ms for a block of 900 000 on one core.
    let runs: Vec<MerkleRoot> = hashes
        .par_chunks(MERKLE_RUN)
        .map(|run| {
            let mut tree = MerkleRoot::new();
            for chunk in run.chunks(BATCH) {
                tree.extend(chunk);
            }
            tree
        })
        .collect();
    let mut root = MerkleRoot::new();
    for run in &runs {
        if !root.append(run) {
            // Unreachable: every run but the last has 2^18 leaves.
            return Err(DbVerifyError::Stream {
                block,
                what: "its Merkle tree could not be assembled".into(),
            });
        }
    }
    let found_root = hex::encode(root.root());
    if found_root != m.tickets_root {
        v.problem(format!(
            "block {block}: the Merkle root of its tickets in the database is {found_root}, the signed manifest's {}: ticket rows were changed, added, removed or reordered",
            m.tickets_root
        ));
    }
    for (&(c, _, _), &n) in tier_list.iter().zip(&tier_counts) {
        if n > 0 {
            counts.insert(c, n);
        }
    }
    let signed_counts: BTreeMap<i64, u64> = tiers
        .iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(c, (_, n))| (*c, *n))
        .collect();
    if counts != signed_counts {
        let show = |m: &BTreeMap<i64, u64>| {
            m.iter()
                .rev()
                .map(|(c, n)| format!("{n} × {c} cents"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        v.problem(format!(
            "block {block}: the tickets in the database are {} where the signed manifest says {}",
            show(&counts),
            show(&signed_counts)
        ));
    }
    // The block's own problems first, then its rows', in index order.
    for text in rows.listed.into_values() {
        v.problem(text);
    }
    v.unlisted += rows.unlisted;
    Ok(v)
}

/// The withdrawals and the closing that apply to the block: each record's signature with the
/// key given, that it is of this emission and says what its row says, and that no ticket of
/// the block was sold after it (a sale after a closing, or from a withdrawn block, or a sale
/// undone after the closing, is named).
fn check_off_sale(
    tx: &mut postgres::Transaction<'_>,
    row: &postgres::Row,
    options: &DbVerifyOptions,
    v: &mut BlockVerdict,
) -> Result<(), DbVerifyError> {
    let block_id: i64 = row.get(0);
    let block: i32 = row.get(1);
    let emission_id: i64 = row.get(16);
    let manifest_text: String = row.get(5);
    let Ok(m) = Manifest::from_bytes(manifest_text.as_bytes()) else {
        return Ok(()); // Said by check_block.
    };
    let id = crate::emission::withdrawal::RecordBinding {
        emission: m.emission(),
        seed_sha256: &m.seed_sha256,
        public_key_sha256: &m.public_key_sha256,
        record_sha256: m.record_sha256.as_deref(),
    };
    let sold_after = |tx: &mut postgres::Transaction<'_>,
                      since: &str,
                      param: &(dyn postgres::types::ToSql + Sync)|
     -> Result<Vec<(i32, String)>, DbVerifyError> {
        Ok(tx
            .query(
                &format!(
                    "SELECT t.idx, t.serial FROM sales x
                     JOIN tickets t ON t.block_id = x.block_id AND t.idx = x.idx
                     WHERE x.block_id = $1 AND x.sold_at > ({since})
                     ORDER BY t.idx LIMIT {LISTED}"
                ),
                &[&block_id, param],
            )
            .map_err(db("reading the sales after a withdrawal or closing"))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    };
    let withdrawals = tx
        .query(
            "SELECT withdrawal_id, number, block, reason, record, record_sha256, signature
             FROM withdrawals WHERE emission_id = $1 AND (block IS NULL OR block = $2)
             ORDER BY number",
            &[&emission_id, &block],
        )
        .map_err(db("reading the withdrawals"))?;
    for w in &withdrawals {
        let withdrawal_id: i64 = w.get(0);
        let number: i32 = w.get(1);
        let column_block: Option<i32> = w.get(2);
        let reason: String = w.get(3);
        let record: String = w.get(4);
        let column_sha256: String = w.get(5);
        let signature: Vec<u8> = w.get(6);
        let place = format!("withdrawal {number} (withdrawals row {withdrawal_id})");
        let sha256 = hex::encode(Sha256::digest(record.as_bytes()));
        let checked = crate::emission::withdrawal::parse(
            std::path::Path::new(&place),
            record.into_bytes(),
            signature,
            &options.public_key,
        )
        .and_then(|f| crate::emission::withdrawal::check_for(&f, &id).map(|()| f));
        match checked {
            Err(e) => v.problem(format!(
                "block {block}: {}",
                shown_text(&crate::problem::chained(&e), 400)
            )),
            Ok(f) => {
                let w = &f.withdrawal;
                if w.block.map(i64::from) != column_block.map(i64::from)
                    || w.reason != reason
                    || sha256 != column_sha256
                {
                    v.problem(format!(
                        "block {block}: {place}: its block, reason or SHA-256 column is not the signed record's: the row was changed in the database"
                    ));
                }
            }
        }
        for (idx, serial) in sold_after(
            tx,
            "SELECT applied_at FROM withdrawals WHERE withdrawal_id = $2",
            &withdrawal_id,
        )? {
            v.problem(format!(
                "block {block}, index {idx}, serial {}: sold after {place} withdrew it",
                shown_text(&serial, SHOWN_CHARS)
            ));
        }
    }
    let closing = tx
        .query_opt(
            "SELECT reconciliation, signature FROM closings WHERE emission_id = $1",
            &[&emission_id],
        )
        .map_err(db("reading the closing"))?;
    if let Some(c) = closing {
        let text: String = c.get(0);
        let signature: Vec<u8> = c.get(1);
        if let Err(e) = crate::block::keys::check(&options.public_key, text.as_bytes(), &signature)
        {
            v.problem(format!(
                "block {block}: the emission's closing reconciliation does not verify with the key given ({e}): it was changed in the database"
            ));
            return Ok(());
        }
        let parsed: Result<super::close::Reconciliation, crate::json::StrictJsonError> =
            crate::json::parse_strict(text.as_bytes(), crate::json::Layout::Pretty);
        let r = match parsed {
            Ok(r) => r,
            Err(e) => {
                v.problem(format!(
                    "block {block}: the emission's closing reconciliation is signed but not one: {e}"
                ));
                return Ok(());
            }
        };
        match r.blocks.iter().find(|b| i64::from(b.block) == i64::from(block)) {
            None => v.problem(format!(
                "block {block}: not in the emission's signed closing reconciliation: loaded after the emission was closed"
            )),
            Some(b) if b.sold != v.sold || b.manifest_sha256 != m_sha(&manifest_text) => {
                v.problem(format!(
                    "block {block}: {} tickets sold in the database, {} when the emission was closed (signed reconciliation of {}): sales were added or undone after the closing",
                    v.sold, b.sold, r.closed
                ))
            }
            Some(_) => {}
        }
        for (idx, serial) in sold_after(tx, "SELECT $2::text::timestamptz", &r.closed)? {
            v.problem(format!(
                "block {block}, index {idx}, serial {}: sold after the emission was closed ({})",
                shown_text(&serial, SHOWN_CHARS),
                r.closed
            ));
        }
    }
    Ok(())
}

fn m_sha(manifest_text: &str) -> String {
    hex::encode(Sha256::digest(manifest_text.as_bytes()))
}

/// A stake in cents as `load` and the emission folders write it: `2`, `2.5`.
fn stake_text(cents: i64) -> String {
    u64::try_from(cents).map_or_else(|_| cents.to_string(), |c| canonical(from_cents(c)))
}

fn show_tiers(m: &BTreeMap<i64, i64>) -> String {
    m.iter()
        .rev()
        .map(|(c, n)| format!("{n} × {c} cents"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "block B, index I, serial S", the serial escaped.
struct Name<'a> {
    block: i32,
    idx: i64,
    serial: &'a [u8],
}

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "block {}, index {}, serial {}",
            self.block,
            self.idx,
            shown_text(&String::from_utf8_lossy(self.serial), SHOWN_CHARS)
        )
    }
}

/// The problems of rows, the [`LISTED`] of the lowest indexes kept in index order.
#[derive(Default)]
struct RowProblems {
    listed: BTreeMap<(i64, u64), String>,
    added: u64,
    unlisted: u64,
}

impl RowProblems {
    fn add(&mut self, idx: i64, text: String) {
        self.added += 1;
        self.listed.insert((idx, self.added), text);
        if self.listed.len() > LISTED {
            self.listed.pop_last();
            self.unlisted += 1;
        }
    }
}

/// The ticket lines waiting to be hashed, [`BATCH`] at a time side by side
/// ([`sha256::digest_many`]: sixteen lanes with AVX-512), each with what its row says.
#[derive(Default)]
struct Pending {
    /// The lines (`serial,prize,layout`), one after the other.
    lines: Vec<u8>,
    rows: Vec<PendingRow>,
}

struct PendingRow {
    idx: i64,
    /// The line's bytes in `lines`; its serial and layout in them.
    line: Range<usize>,
    serial: Range<usize>,
    layout: Range<usize>,
    prize_cents: i64,
    sha256: [u8; 32],
}

impl Pending {
    fn push(&mut self, t: &Ticket<'_>, prize: &[u8]) {
        let start = self.lines.len();
        self.lines.extend_from_slice(t.serial);
        let serial = start..self.lines.len();
        self.lines.push(b',');
        self.lines.extend_from_slice(prize);
        self.lines.push(b',');
        let at = self.lines.len();
        self.lines.extend_from_slice(t.layout);
        self.rows.push(PendingRow {
            idx: t.idx,
            line: start..self.lines.len(),
            serial,
            layout: at..self.lines.len(),
            prize_cents: t.prize_cents,
            sha256: t.sha256,
        });
    }

    /// Hashes the lines waiting, names each row whose stored hash is not its line's, and
    /// empties the batch.
    fn check(&mut self, block: i32, rows: &mut RowProblems) {
        let messages: Vec<&[u8]> = self
            .rows
            .iter()
            .map(|r| &self.lines[r.line.clone()])
            .collect();
        let found = sha256::digest_many(&messages);
        for (r, hash) in self.rows.iter().zip(found) {
            if hash != r.sha256 {
                let name = Name {
                    block,
                    idx: r.idx,
                    serial: &self.lines[r.serial.clone()],
                };
                rows.add(r.idx, format!(
                    "{name}: its SHA-256 is not that of its serial, prize and layout (prize {} cents, layout {}): the row was changed in the database",
                    r.prize_cents,
                    shown_text(&String::from_utf8_lossy(&self.lines[r.layout.clone()]), SHOWN_CHARS)
                ));
            }
        }
        self.lines.clear();
        self.rows.clear();
    }
}

/// The connections on which the tickets are streamed out, besides the checking one: in its
/// snapshot (exported by it, imported by each), so every read of the check sees the same
/// database.
///
/// Why a second connection: the synchronous client hands a COPY stream over a message (a
/// row) at a time, each through a call into its runtime, which took about a third of
/// db-verify's CPU; the asynchronous client, polled in one call for the whole stream, does
/// not (docs/PERFORMANCE.md, "db-verify against verify").
struct TicketStreams {
    connections: Vec<Connection>,
}

/// A connection of [`TicketStreams`] and the runtime that drives it.
struct Connection {
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl TicketStreams {
    /// Opens one connection per core, at most [`STREAMS`].
    fn open(
        tx: &mut postgres::Transaction<'_>,
        options: &DbVerifyOptions,
    ) -> Result<Self, DbVerifyError> {
        let snapshot: String = tx
            .query_one("SELECT pg_catalog.pg_export_snapshot()", &[])
            .map_err(db("exporting the snapshot for the ticket streams"))?
            .get(0);
        // From the server: put in a statement only if it is a snapshot's name (hex digits
        // and dashes, as PostgreSQL makes them).
        let well_formed = !snapshot.is_empty()
            && snapshot.len() <= 64
            && snapshot.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
        if !well_formed {
            return Err(DbVerifyError::Connect(format!(
                "the server named its snapshot `{}`, not a snapshot's name",
                shown_text(&snapshot, SHOWN_CHARS)
            )));
        }
        let n = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, STREAMS);
        let mut connections = Vec::with_capacity(n);
        for _ in 0..n {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| DbVerifyError::Connect(format!("no runtime for it: {e}")))?;
            let client = runtime
                .block_on(super::tls::connect_async(
                    &options.url,
                    options.allow_plaintext,
                ))
                .map_err(|e| DbVerifyError::Connect(e.to_string()))?;
            runtime
                .block_on(client.batch_execute(&session_settings(&options.schema)))
                .map_err(db("setting the search_path to the schema"))?;
            runtime
                .block_on(client.batch_execute(&format!(
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
                     SET TRANSACTION SNAPSHOT '{snapshot}'"
                )))
                .map_err(db("importing the checking transaction's snapshot"))?;
            connections.push(Connection { runtime, client });
        }
        Ok(TicketStreams { connections })
    }
}

/// Reads the COPY stream into chunks of about [`CHUNK`] bytes and hands them over, until its
/// end (an empty chunk), an error (handed over too), or the receiver is gone. Chunks handed
/// back are used again. Blocking on the hand-over stops the runtime, and so the reading of
/// the socket, until the checks catch up.
async fn read_ahead(
    stream: tokio_postgres::CopyOutStream,
    full: &SyncSender<std::io::Result<Vec<u8>>>,
    back: &Receiver<Vec<u8>>,
) {
    use futures_util::StreamExt;
    let mut stream = std::pin::pin!(stream);
    loop {
        let mut chunk = back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        chunk.clear();
        let mut end = false;
        while chunk.len() < CHUNK {
            match stream.next().await {
                None => {
                    end = true;
                    break;
                }
                Some(Ok(bytes)) => chunk.extend_from_slice(&bytes),
                Some(Err(e)) => {
                    let _ = full.send(Err(std::io::Error::other(e)));
                    return;
                }
            }
        }
        if !chunk.is_empty() && full.send(Ok(chunk)).is_err() {
            return;
        }
        if end {
            let _ = full.send(Ok(Vec::new()));
            return;
        }
    }
}

/// The chunks of [`read_ahead`], read as one stream.
struct Chunks {
    full: Receiver<std::io::Result<Vec<u8>>>,
    back: Sender<Vec<u8>>,
    cur: Vec<u8>,
    at: usize,
    done: bool,
}

impl Chunks {
    fn new(full: Receiver<std::io::Result<Vec<u8>>>, back: Sender<Vec<u8>>) -> Self {
        Chunks {
            full,
            back,
            cur: Vec::new(),
            at: 0,
            done: false,
        }
    }
}

impl BufRead for Chunks {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.at == self.cur.len() {
            if self.done {
                return Ok(&[]);
            }
            match self.full.recv() {
                Ok(Ok(next)) => {
                    self.done = next.is_empty();
                    let used = std::mem::replace(&mut self.cur, next);
                    let _ = self.back.send(used);
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the thread reading the stream ended",
                    ))
                }
            }
        }
        Ok(&self.cur[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.cur.len());
    }
}

impl Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let bytes = self.fill_buf()?;
        let n = out.len().min(bytes.len());
        out[..n].copy_from_slice(&bytes[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// The first [`LISTED`] of `items` (of `total` in all), joined, then how many more
/// (`and N more{what}`).
fn listed(items: &[String], total: usize, what: &str) -> String {
    let shown = items.len().min(LISTED);
    let mut s = items[..shown].join(", ");
    if total > shown {
        s.push_str(&format!(" and {} more{what}", total - shown));
    }
    s
}

/// The longest line of the `COPY` of a block's sales (one integer and its newline).
const MAX_SALE_LINE: u64 = 32;

/// The runs of consecutive numbers of an increasing sequence, as (first, last).
fn runs(increasing: impl Iterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for i in increasing {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    runs
}

/// The sales of a block, as read from `sales`.
struct Sales {
    /// Per index of the block: sold.
    sold: Vec<bool>,
    /// What is wrong with them (a sale of no ticket of the block, a ticket sold twice).
    problems: Vec<String>,
}

/// Reads the block's sales (`COPY`, one integer a line: the block's sales may be millions).
fn read_sales(
    tx: &mut postgres::Transaction<'_>,
    block_id: i64,
    block: i32,
    slots: usize,
) -> Result<Sales, DbVerifyError> {
    let mut reader = tx
        .copy_out(&format!(
            "COPY (SELECT idx FROM sales WHERE block_id = {block_id}) TO STDOUT"
        ))
        .map_err(db("streaming the block's sales out (COPY)"))?;
    let mut sales = Sales {
        sold: vec![false; slots],
        problems: Vec::new(),
    };
    // Streamed a line at a time; what is kept of the wrong ones is bounded (the first LISTED
    // of each kind, and their count).
    let mut reader = std::io::BufReader::new(&mut reader);
    let mut line = Vec::with_capacity(32);
    let (mut beyond, mut twice) = (Vec::new(), Vec::new());
    let (mut beyond_n, mut twice_n) = (0usize, 0usize);
    loop {
        line.clear();
        let n = std::io::Read::take(&mut reader, MAX_SALE_LINE)
            .read_until(b'\n', &mut line)
            .map_err(|e| DbVerifyError::Stream {
                block,
                what: format!("the sales, cut short: {e}"),
            })?;
        if n == 0 {
            break;
        }
        if line.last() != Some(&b'\n') {
            return Err(DbVerifyError::Stream {
                block,
                what: format!("a line of sales longer than {MAX_SALE_LINE} bytes"),
            });
        }
        let text = &line[..line.len() - 1];
        let idx = std::str::from_utf8(text)
            .ok()
            .and_then(|l| l.parse::<i64>().ok());
        match idx
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < slots)
        {
            None => {
                beyond_n += 1;
                if beyond.len() < LISTED {
                    beyond.push(shown_text(&String::from_utf8_lossy(text), SHOWN_CHARS));
                }
            }
            Some(i) if sales.sold[i] => {
                twice_n += 1;
                if twice.len() < LISTED {
                    twice.push(i.to_string());
                }
            }
            Some(i) => sales.sold[i] = true,
        }
    }
    if beyond_n > 0 {
        sales.problems.push(format!(
            "{beyond_n} sale(s) of no ticket of the block (index {}): rows added to sales by hand",
            listed(&beyond, beyond_n, "")
        ));
    }
    if twice_n > 0 {
        sales.problems.push(format!(
            "{twice_n} ticket(s) sold twice (index {}): the primary key of sales was dropped",
            listed(&twice, twice_n, "")
        ));
    }
    Ok(sales)
}

/// One ticket row of the stream.
struct Ticket<'a> {
    idx: i64,
    serial: &'a [u8],
    prize_cents: i64,
    layout: &'a [u8],
    sha256: [u8; 32],
}

/// A reader of the binary COPY format (PostgreSQL documentation, "COPY", "Binary Format")
/// for the five columns queried, every length bounded. A row whole in the reader's buffer is
/// read where it lies; one cut by a chunk's end is copied together first.
struct Stream<R: BufRead> {
    reader: R,
    block: i32,
    buf: Vec<u8>,
    /// Bytes of the reader's buffer the last row took, consumed at the next one.
    consumed: usize,
}

/// The longest text field accepted (a serial or layout is far shorter).
const MAX_FIELD: usize = 1 << 16;

/// The fields of a row: (start, length) in its bytes.
type Spans = [(usize, usize); 5];

/// What the bytes at a row's place hold.
enum Frame {
    /// The trailer: the end of the stream.
    Trailer,
    /// A whole row of that many bytes.
    Row(usize, Spans),
    /// Not all of it: it needs at least that many bytes.
    Short(usize),
}

/// Why the bytes at a row's place are no row of the ticket stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum FrameError {
    /// A row of another number of fields than the stream's five.
    #[error("a row of {0} fields")]
    Fields(i16),
    /// A field's length negative (but for NULL, which no column holds) or over the bound.
    #[error("a field of length {0}")]
    FieldLength(i32),
}

/// The frame at the start of `bytes`.
#[inline]
fn frame(bytes: &[u8]) -> Result<Frame, FrameError> {
    let Some(head) = bytes.get(..2) else {
        return Ok(Frame::Short(2));
    };
    let fields = i16::from_be_bytes([head[0], head[1]]);
    if fields == -1 {
        return Ok(Frame::Trailer);
    }
    if fields != 5 {
        return Err(FrameError::Fields(fields));
    }
    let mut spans: Spans = [(0, 0); 5];
    let mut at = 2;
    for span in &mut spans {
        let Some(len) = bytes.get(at..at + 4) else {
            return Ok(Frame::Short(at + 4));
        };
        let len = field_len(len)?;
        at += 4;
        if bytes.len() < at + len {
            return Ok(Frame::Short(at + len));
        }
        *span = (at, len);
        at += len;
    }
    Ok(Frame::Row(at, spans))
}

/// A field's length (4 bytes, big-endian), bounded.
#[inline]
fn field_len(bytes: &[u8]) -> Result<usize, FrameError> {
    let len = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    usize::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_FIELD)
        .ok_or(FrameError::FieldLength(len))
}

/// The ticket of a row's bytes and field spans.
#[inline]
fn ticket<'a>(row: &'a [u8], spans: &Spans) -> Result<Ticket<'a>, &'static str> {
    let field = |i: usize| &row[spans[i].0..spans[i].0 + spans[i].1];
    let int = |bytes: &[u8]| -> Option<i64> {
        match bytes.len() {
            4 => Some(i64::from(i32::from_be_bytes(bytes.try_into().ok()?))),
            8 => Some(i64::from_be_bytes(bytes.try_into().ok()?)),
            _ => None,
        }
    };
    let (Some(idx), Some(prize_cents)) = (int(field(0)), int(field(2))) else {
        return Err("an index or prize that is not an integer");
    };
    let Ok(sha256) = <[u8; 32]>::try_from(field(4)) else {
        return Err("a ticket hash that is not 32 bytes");
    };
    Ok(Ticket {
        idx,
        serial: field(1),
        prize_cents,
        layout: field(3),
        sha256,
    })
}

impl<R: BufRead> Stream<R> {
    fn new(mut reader: R, block: i32) -> Result<Self, DbVerifyError> {
        let mut header = [0u8; 19];
        let bad = |what: &str| DbVerifyError::Stream {
            block,
            what: what.to_string(),
        };
        reader
            .read_exact(&mut header)
            .map_err(|e| bad(&format!("no header: {e}")))?;
        if &header[..11] != b"PGCOPY\n\xff\r\n\0" {
            return Err(bad("not the binary COPY signature"));
        }
        let ext = u32::from_be_bytes([header[15], header[16], header[17], header[18]]);
        let mut skip = vec![0u8; usize::try_from(ext.min(1 << 16)).unwrap_or_default()];
        reader
            .read_exact(&mut skip)
            .map_err(|e| bad(&format!("header extension: {e}")))?;
        Ok(Stream {
            reader,
            block,
            buf: Vec::with_capacity(512),
            consumed: 0,
        })
    }

    fn read(&mut self, n: usize) -> Result<(), DbVerifyError> {
        let at = self.buf.len();
        self.buf.resize(at + n, 0);
        let block = self.block;
        self.reader
            .read_exact(&mut self.buf[at..])
            .map_err(|e| bad_stream(block, format!("cut short: {e}")))
    }

    /// The next row, or `None` after the trailer.
    fn next(&mut self) -> Result<Option<Ticket<'_>>, DbVerifyError> {
        let block = self.block;
        self.reader.consume(std::mem::take(&mut self.consumed));
        let found = {
            let bytes = self
                .reader
                .fill_buf()
                .map_err(|e| bad_stream(block, format!("cut short: {e}")))?;
            frame(bytes).map_err(|what| bad_stream(block, what.to_string()))?
        };
        match found {
            Frame::Trailer => {
                self.consumed = 2;
                return Ok(None);
            }
            Frame::Row(len, spans) => {
                self.consumed = len;
                let bytes = self
                    .reader
                    .fill_buf()
                    .map_err(|e| bad_stream(block, format!("cut short: {e}")))?;
                return ticket(&bytes[..len], &spans)
                    .map(Some)
                    .map_err(|what| bad_stream(block, what));
            }
            Frame::Short(_) => {}
        }
        // The row is cut by the end of the buffer: copied together, as many bytes at a time
        // as the same reading of the frame says it needs.
        self.buf.clear();
        loop {
            match frame(&self.buf).map_err(|what| bad_stream(block, what.to_string()))? {
                Frame::Trailer => return Ok(None),
                Frame::Row(len, spans) => {
                    return ticket(&self.buf[..len], &spans)
                        .map(Some)
                        .map_err(|what| bad_stream(block, what))
                }
                Frame::Short(need) => self.read(need - self.buf.len())?,
            }
        }
    }
}

/// The ticket stream of `block` is malformed.
fn bad_stream(block: i32, what: impl Into<String>) -> DbVerifyError {
    DbVerifyError::Stream {
        block,
        what: what.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's frame is read whole, short or refused, the refusals typed with the messages
    /// db-verify prints.
    #[test]
    fn frames_are_rows_trailers_short_or_refused_by_their_kind() {
        let mut row = 5i16.to_be_bytes().to_vec();
        for field in [&b"ab"[..], b"", b"c", b"de", b"f"] {
            row.extend_from_slice(&(field.len() as i32).to_be_bytes());
            row.extend_from_slice(field);
        }
        assert!(matches!(frame(&row), Ok(Frame::Row(n, _)) if n == row.len()));
        assert!(matches!(frame(&row[..row.len() - 1]), Ok(Frame::Short(n)) if n == row.len()));
        assert!(matches!(frame(&(-1i16).to_be_bytes()), Ok(Frame::Trailer)));
        assert!(matches!(frame(&[0]), Ok(Frame::Short(2))));
        let e = frame(&4i16.to_be_bytes()).err().unwrap();
        assert_eq!(
            (e, e.to_string()),
            (FrameError::Fields(4), "a row of 4 fields".into())
        );
        let mut long = 5i16.to_be_bytes().to_vec();
        long.extend_from_slice(&(-2i32).to_be_bytes());
        let e = frame(&long).err().unwrap();
        assert_eq!(e.to_string(), "a field of length -2");
        let mut long = 5i16.to_be_bytes().to_vec();
        long.extend_from_slice(&i32::try_from(MAX_FIELD + 1).unwrap().to_be_bytes());
        assert_eq!(
            frame(&long).err(),
            Some(FrameError::FieldLength(MAX_FIELD as i32 + 1))
        );
    }

    #[test]
    fn runs_and_listings_are_what_the_messages_show() {
        assert_eq!(
            runs([0, 1, 2, 5, 7, 8].into_iter()),
            vec![(0, 2), (5, 5), (7, 8)]
        );
        assert!(runs(std::iter::empty()).is_empty());
        let items: Vec<String> = (0..LISTED + 2).map(|i| i.to_string()).collect();
        let text = listed(&items, items.len(), " ranges");
        assert!(
            text.starts_with("0, 1, 2") && text.ends_with(" and 2 more ranges"),
            "{text}"
        );
        assert_eq!(listed(&items[..2], 2, ""), "0, 1");
        assert_eq!(listed(&items[..2], 5, ""), "0, 1 and 3 more");
    }

    #[test]
    fn the_stream_reads_the_binary_copy_format_and_refuses_the_rest() {
        let mut bytes: Vec<u8> = b"PGCOPY\n\xff\r\n\0".to_vec();
        bytes.extend([0u8; 8]);
        bytes.extend(5i16.to_be_bytes());
        for field in [
            7i32.to_be_bytes().to_vec(),
            b"s".to_vec(),
            250i64.to_be_bytes().to_vec(),
            b"l".to_vec(),
            vec![9u8; 32],
        ] {
            bytes.extend(i32::try_from(field.len()).expect("len").to_be_bytes());
            bytes.extend(field);
        }
        bytes.extend((-1i16).to_be_bytes());
        let mut s = Stream::new(&bytes[..], 1).expect("header");
        let t = s.next().expect("a row").expect("a row");
        assert_eq!(
            (t.idx, t.serial, t.prize_cents, t.layout, t.sha256),
            (7, &b"s"[..], 250, &b"l"[..], [9u8; 32])
        );
        assert!(s.next().expect("the trailer").is_none());
        // The same rows cut anywhere by the reader's buffer: read together, the same.
        for capacity in 1..bytes.len() {
            let mut s = Stream::new(std::io::BufReader::with_capacity(capacity, &bytes[..]), 1)
                .expect("header");
            let t = s.next().expect("a row").expect("a row");
            assert_eq!(
                (t.idx, t.serial, t.prize_cents, t.layout, t.sha256),
                (7, &b"s"[..], 250, &b"l"[..], [9u8; 32]),
                "buffer of {capacity} bytes"
            );
            assert!(s.next().expect("the trailer").is_none());
        }
        // Cut short, and a hostile length: errors, never a panic or a huge allocation.
        let mut s = Stream::new(&bytes[..bytes.len() - 10], 1).expect("header");
        assert!(s.next().is_err());
        let mut huge = bytes[..21].to_vec();
        huge.extend(i32::MAX.to_be_bytes());
        let mut s = Stream::new(&huge[..], 1).expect("header");
        assert!(s.next().is_err());
        assert!(Stream::new(&b"PGCOPY\n"[..], 1).is_err());
    }
}
