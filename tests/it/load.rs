//! `load` against a real PostgreSQL server (never a mock): `.ci/run` starts a throw-away
//! cluster (tests/pg/start.sh) and exports DATABASE_URL. Each test makes its own database with
//! a random name and drops it at the end, so the tests run in parallel.

#![cfg(feature = "load")]

use crate::common;

use common::{cannot_run, data, fixed_test_key, text, Workdir, SEED};
use emission_factory::block::keys;
use postgres::{Client, NoTls};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ANOTHER_SEED: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

/// A database of its own for one test, dropped at the end (also used by `pack`'s tests).
pub(crate) struct TestDb {
    admin_url: String,
    name: String,
    pub(crate) url: String,
}

impl TestDb {
    /// `None` (and a line saying so) when no server is configured; in CI that is a failure.
    pub(crate) fn new() -> Option<TestDb> {
        let Ok(admin_url) = std::env::var("DATABASE_URL") else {
            cannot_run(
                "DATABASE_URL is not set (.ci/run starts a cluster; or eval \"$(tests/pg/start.sh --fast)\")",
            );
            return None;
        };
        let mut random = [0u8; 6];
        getrandom::fill(&mut random).expect("random bytes");
        let name = format!("ef_test_{}", hex::encode(random));
        let mut admin = Client::connect(&admin_url, NoTls).expect("connect to DATABASE_URL");
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create the test database");
        let url = with_database(&admin_url, &name);
        Some(TestDb {
            admin_url,
            name,
            url,
        })
    }

    pub(crate) fn client(&self) -> Client {
        Client::connect(&self.url, NoTls).expect("connect to the test database")
    }

    /// The tables of the schema that exist.
    pub(crate) fn tables(&self) -> Vec<String> {
        self.client()
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
                &[],
            )
            .expect("list tables")
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// (block number, tickets in the database) of every block loaded.
    fn blocks(&self) -> Vec<(i32, i64)> {
        self.client()
            .query(
                "SELECT b.block, (SELECT count(*) FROM tickets t WHERE t.block_id = b.block_id)
                 FROM blocks b ORDER BY b.block",
                &[],
            )
            .expect("list blocks")
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut admin) = Client::connect(&self.admin_url, NoTls) {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// `url` with its database replaced by `name`, for both forms libpq reads.
fn with_database(url: &str, name: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path_query) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let query = path_query.find('?').map(|i| &path_query[i..]).unwrap_or("");
            format!("{scheme}://{authority}/{name}{query}")
        }
        None => format!("{url} dbname={name}"),
    }
}

/// `url` with a query parameter added (URL form) or a key=value (the other form).
fn with_param(url: &str, key: &str, value_url: &str, value_kv: &str) -> String {
    if url.contains("://") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}{key}={value_url}")
    } else {
        format!("{url} {key}='{value_kv}'")
    }
}

/// `url` with its user replaced by `role`.
fn with_user(url: &str, role: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{role}@{host}{tail}")
        }
        None => format!("{url} user={role}"),
    }
}

/// Emits `blocks` blocks of the mini game with `seed` into `out`, signed with the fixed test key.
fn emit_mini(w: &Workdir, seed: &str, out: &str, blocks: &str) -> std::path::PathBuf {
    common::emit_mini_signed(w, seed, out, blocks, &[])
}

fn load_args<'a>(db: &'a TestDb, extra: &[&'a str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "load".into(),
        "--database-url".into(),
        db.url.clone(),
        "--public-key".into(),
        "keys/public-key.pem".into(),
        "--game".into(),
        data("mini-ruche.toml"),
        "-q".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn load(w: &Workdir, db: &TestDb, extra: &[&str], code: i32) -> String {
    let args = load_args(db, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    text(&w.run_expect(&args, code))
}

/// Rewrites a block's manifest with `edit` and signs it again with the fixed test key.
fn resign(folder: &Path, block: &str, edit: impl Fn(String) -> String) {
    let path = folder.join(format!("{block}.manifest.json"));
    let manifest = edit(std::fs::read_to_string(&path).expect("manifest"));
    std::fs::write(&path, &manifest).expect("write manifest");
    let key = keys::read_signing_key(&folder.join("../../../../keys/signing-key.pem"))
        .expect("the test signing key");
    std::fs::write(
        folder.join(format!("{block}.manifest.json.sig")),
        keys::sign(&key, manifest.as_bytes()),
    )
    .expect("write signature");
}

/// The manifest's prize counts, in cents → count, and its SHA-256.
fn manifest_counts(folder: &Path, block: &str) -> Vec<(i64, i64)> {
    let m: serde_json::Value = serde_json::from_slice(&common::read(
        &folder.join(format!("{block}.manifest.json")),
    ))
    .expect("manifest JSON");
    let mut out: Vec<(i64, i64)> = m["prizes"]
        .as_array()
        .expect("prizes")
        .iter()
        .map(|p| {
            let amount: rust_decimal::Decimal = p["amount"]
                .as_str()
                .expect("amount")
                .parse()
                .expect("decimal");
            let cents: i64 = (amount * rust_decimal::Decimal::ONE_HUNDRED)
                .to_string()
                .parse()
                .expect("whole cents");
            (cents, p["count"].as_i64().expect("count"))
        })
        .collect();
    out.sort();
    out
}

/// Per prize tier of block `block` in the database: (cents, tickets).
fn database_counts(db: &TestDb, block: i32) -> Vec<(i64, i64)> {
    db.client()
        .query(
            "SELECT t.prize_cents, count(*) FROM tickets t JOIN blocks b USING (block_id)
             WHERE b.block = $1 GROUP BY 1 ORDER BY 1",
            &[&block],
        )
        .expect("counts")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn loads_verified_blocks_once_and_skips_them_after() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "2");

    // A test emission needs --allow-test; the refusal leaves even an empty database empty.
    let out = load(&w, &db, &["em"], 2);
    assert!(
        out.contains("TEST emission") && out.contains("--allow-test"),
        "{out}"
    );
    assert!(db.tables().is_empty(), "{:?}", db.tables());

    // A block others may read is loaded, with a warning that names it and the fix (issue 20:
    // a block is as secret as the seed until sold); the private one gets none.
    use std::os::unix::fs::PermissionsExt;
    let open_block = folder.join("block-00001.csv");
    std::fs::set_permissions(&open_block, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(
        out.contains("block-00001.csv has mode 0644: every user of this machine may read it")
            && out.contains("chmod o-rwx"),
        "{out}"
    );
    assert_eq!(out.matches("has mode").count(), 1, "{out}");
    assert!(
        out.contains("schema  created or migrated to version 7"),
        "{out}"
    );
    assert_eq!(out.matches("LOADED").count(), 2, "{out}");
    assert_eq!(db.blocks(), vec![(1, 2000), (2, 2000)]);
    for (n, block) in [(1, "block-00001"), (2, "block-00002")] {
        let expected: Vec<(i64, i64)> = manifest_counts(&folder, block)
            .into_iter()
            .filter(|&(_, count)| count > 0)
            .collect();
        assert_eq!(database_counts(&db, n), expected);
    }
    // What the database holds is what the files say, byte for byte.
    let mut c = db.client();
    let row = c
        .query_one(
            "SELECT b.manifest, b.manifest_sha256, b.signature, e.kind
             FROM blocks b JOIN emissions e USING (emission_id) WHERE b.block = 1",
            &[],
        )
        .expect("block row");
    let manifest: String = row.get(0);
    assert_eq!(
        manifest.as_bytes(),
        common::read(&folder.join("block-00001.manifest.json"))
    );
    assert_eq!(
        row.get::<_, String>(1),
        common::sha256_file(&folder.join("block-00001.manifest.json"))
    );
    assert_eq!(
        row.get::<_, Vec<u8>>(2),
        common::read(&folder.join("block-00001.manifest.json.sig"))
    );
    assert_eq!(row.get::<_, String>(3), "test");
    let csv = std::fs::read_to_string(folder.join("block-00001.csv")).expect("csv");
    let line_42 = csv.lines().nth(43).expect("ticket 42");
    let row = c
        .query_one(
            "SELECT serial || ',' || (prize_cents / 100)::text || ',' || layout || ',' || encode(sha256, 'hex')
             FROM tickets t JOIN blocks b USING (block_id) WHERE b.block = 1 AND t.idx = 42",
            &[],
        )
        .expect("ticket 42");
    // (The mini game's prizes are whole euros, so cents / 100 prints them canonically.)
    assert_eq!(row.get::<_, String>(0), line_42);

    // Again: both skipped, nothing added.
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert_eq!(out.matches("SKIPPED").count(), 2, "{out}");
    assert!(out.contains("0 loaded, 2 already loaded"), "{out}");
    assert_eq!(db.blocks(), vec![(1, 2000), (2, 2000)]);
}

#[test]
fn the_same_block_number_with_another_manifest_is_refused_naming_both() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let first = emit_mini(&w, SEED, "a", "1");
    // Same block coordinates and key, another seed: another manifest. (A manifest that
    // differs only in its spacing no longer verifies: signed JSON must be in its canonical
    // bytes.)
    let second = emit_mini(
        &w,
        "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100",
        "b",
        "1",
    );
    load(&w, &db, &["--allow-test", "a"], 0);
    let loaded = common::sha256_file(&first.join("block-00001.manifest.json"));
    let given = common::sha256_file(&second.join("block-00001.manifest.json"));
    assert_ne!(loaded, given);
    let out = load(&w, &db, &["--allow-test", "b"], 2);
    // Refused: the block's manifest is not the one loaded (here its seed differs first).
    assert!(
        out.contains("already loaded") && out.contains("so it was not loaded"),
        "{out}"
    );
    assert_eq!(db.blocks(), vec![(1, 2000)]);
    // Another seed for the same emission is refused too.
    emit_mini(&w, ANOTHER_SEED, "c", "2");
    let out = load(
        &w,
        &db,
        &["--allow-test", "c/mini-ruche/2/e0001/block-00002.csv"],
        2,
    );
    assert!(out.contains("seed_sha256"), "{out}");
    assert_eq!(db.blocks(), vec![(1, 2000)]);
}

#[test]
fn a_database_holds_test_or_production_emissions_never_both() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    emit_mini(&w, SEED, "test", "1");
    // A production block of another emission: made here by relabelling and re-signing a test
    // block (a real one comes from custody shares; the loader sees only the signed manifest).
    fixed_test_key(&w);
    w.ok(&[
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "--emission",
        "2",
        "--seed",
        ANOTHER_SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--out",
        "prod",
        "-q",
    ]);
    let prod = w.path("prod/mini-ruche/2/e0002");
    resign(&prod, "block-00001", |m| {
        m.replace(
            "\"emission_kind\": \"test\"",
            "\"emission_kind\": \"production\"",
        )
    });
    let out = load(&w, &db, &["prod"], 0);
    assert!(out.contains("LOADED"), "{out}");
    let out = load(&w, &db, &["--allow-test", "test"], 2);
    assert!(
        out.contains("a test emission") && out.contains("holds production emissions"),
        "{out}"
    );
    assert_eq!(db.blocks(), vec![(1, 2000)]);
    let kinds: Vec<String> = db
        .client()
        .query("SELECT DISTINCT kind FROM emissions", &[])
        .expect("kinds")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(kinds, vec!["production".to_string()]);

    // And the other way round, in a fresh database.
    let db2 = TestDb::new().expect("a second database");
    load(&w, &db2, &["--allow-test", "test"], 0);
    let out = load(&w, &db2, &["prod"], 2);
    assert!(out.contains("holds test emissions"), "{out}");
    assert_eq!(db2.blocks(), vec![(1, 2000)]);
}

#[test]
fn bad_input_gets_a_clear_error_and_leaves_the_database_as_it_was() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "3");

    // A tampered block, into an empty database: refused, and not even the schema is left.
    let csv = folder.join("block-00002.csv");
    let original = std::fs::read_to_string(&csv).expect("csv");
    let mut lines: Vec<String> = original.lines().map(String::from).collect();
    let loser = lines
        .iter()
        .position(|l| l.split(',').nth(1) == Some("0"))
        .expect("a losing ticket");
    lines[loser] = lines[loser].replacen(",0,", ",2000,", 1);
    std::fs::write(&csv, lines.join("\n") + "\n").expect("tamper");
    let out = load(&w, &db, &["--allow-test", csv.to_str().expect("path")], 2);
    assert!(
        out.contains("did not verify") && out.contains("the database is as it was"),
        "{out}"
    );
    assert!(db.tables().is_empty(), "{:?}", db.tables());
    std::fs::write(&csv, &original).expect("restore");

    load(
        &w,
        &db,
        &["--allow-test", "em/mini-ruche/2/e0001/block-00001.csv"],
        0,
    );
    let before = db.blocks();
    assert_eq!(before, vec![(1, 2000)]);

    // A wrong key.
    w.ok(&["keygen", "--out", "other-keys"]);
    let mut args = load_args(&db, &["--allow-test", "em"]);
    args[4] = "other-keys/public-key.pem".into();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = text(&w.run_expect(&args, 2));
    assert!(out.contains("not signed with the key given"), "{out}");
    assert_eq!(db.blocks(), before);

    // An unreachable server.
    let out = text(&w.run_expect(
        &[
            "load",
            "--database-url",
            "postgresql://nobody@/nowhere?host=/nonexistent-socket-dir&port=1",
            "--public-key",
            "keys/public-key.pem",
            "--allow-test",
            "em",
        ],
        2,
    ));
    assert!(
        out.contains("cannot connect to the database") && out.contains("nobody@"),
        "{out}"
    );

    // A role without privileges.
    let role = format!("{}_nopriv", db.name);
    let mut admin = db.client();
    admin
        .batch_execute(&format!("CREATE ROLE {role} LOGIN"))
        .expect("create role");
    let mut args = load_args(&db, &["--allow-test", "em"]);
    args[2] = with_user(&db.url, &role);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = text(&w.run_expect(&args, 2));
    assert!(
        out.contains("permission denied") && out.contains("lacks a privilege"),
        "{out}"
    );
    // The hint points at where the roles are documented (no longer the README).
    assert!(
        out.contains("docs/OPERATIONS.md, \"Loading into PostgreSQL\", Roles")
            && !out.contains("README"),
        "{out}"
    );
    assert_eq!(db.blocks(), before);

    // statement_timeout: another session holds a lock the load needs, past the timeout.
    let mut locker = db.client();
    let mut tx = locker.transaction().expect("begin");
    tx.batch_execute("LOCK TABLE blocks IN ACCESS EXCLUSIVE MODE")
        .expect("lock");
    let mut args = load_args(&db, &["--allow-test", "em"]);
    args[2] = with_param(
        &db.url,
        "options",
        "-c%20statement_timeout%3D300",
        "-c statement_timeout=300",
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = text(&w.run_expect(&args, 2));
    assert!(
        out.contains("statement timeout") && out.contains("statement_timeout"),
        "{out}"
    );
    tx.rollback().expect("rollback");
    assert_eq!(db.blocks(), before);
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"))
        .expect("drop role");

    // After all that, the same command finishes the job.
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(out.contains("1 already loaded"), "{out}");
    assert_eq!(db.blocks(), vec![(1, 2000), (2, 2000), (3, 2000)]);
}

#[test]
fn sixty_four_concurrent_sellers_sell_every_ticket_exactly_once() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "2");
    load(&w, &db, &["--allow-test", "em"], 0);
    let mut c = db.client();
    let emission: i64 = c
        .query_one("SELECT emission_id FROM emissions", &[])
        .expect("emission")
        .get(0);
    // Each block of 2 000 tickets has its sale sequence, from index 0 (schema_6.sql).
    let blocks: Vec<(i32, i32, bool)> = c
        .query(
            "SELECT block, tickets, passed FROM sale_blocks ORDER BY block",
            &[],
        )
        .expect("sale_blocks")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(blocks, vec![(1, 2000, false), (2, 2000, false)]);

    // Sales are in index order: 0, 1, 2, ...
    for k in 0..7 {
        let row = c
            .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
            .expect("a sale");
        assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, k));
    }
    check_reconciliation(&db, &folder, 7);

    // A sale in flight does not hold another seller back, who sells the next ticket. When the
    // first rolls back, its ticket is not lost: it is sold once both blocks' sequences have
    // passed their end (from sale_returns), by one of the sellers below.
    let mut first = db.client();
    let mut in_flight = first.transaction().expect("begin");
    let held = in_flight
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a sale in flight");
    let held = (held.get::<_, i32>(0), held.get::<_, i32>(1));
    assert_eq!(held, (1, 7));
    let row = c
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a sale beside it");
    let beside = (row.get::<_, i32>(0), row.get::<_, i32>(1));
    assert_eq!(beside, (1, 8));
    in_flight.rollback().expect("rollback");
    let row = first
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("the next sale");
    assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, 9));
    let mut before: BTreeSet<(i32, i32)> = (0..7).map(|k| (1, k)).collect();
    before.insert(beside);
    before.insert((1, 9));
    assert_eq!(before.len(), 9);
    check_reconciliation(&db, &folder, 9);

    // 64 sellers, each on its own connection, until the emission is sold out; one sale in 16
    // is rolled back (a failed payment) and must be sold again by someone.
    let start = Instant::now();
    let sellers: Vec<_> = (0..64)
        .map(|n| {
            let url = db.url.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(&url, NoTls).expect("seller connection");
                let mut sold = Vec::new();
                let mut rolled_back = 0;
                for round in 0u64.. {
                    let mut tx = c.transaction().expect("begin");
                    let Some(row) = tx
                        .query_opt("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
                        .expect("a sale")
                    else {
                        break;
                    };
                    if (round + n) % 16 == 15 {
                        tx.rollback().expect("rollback");
                        rolled_back += 1;
                    } else {
                        tx.commit().expect("commit");
                        sold.push((row.get::<_, i32>(0), row.get::<_, i32>(1)));
                    }
                }
                (sold, rolled_back)
            })
        })
        .collect();
    let results: Vec<(Vec<(i32, i32)>, u64)> = sellers
        .into_iter()
        .map(|s| s.join().expect("seller thread"))
        .collect();
    let elapsed = start.elapsed();
    let all: Vec<(i32, i32)> = results.iter().flat_map(|r| r.0.clone()).collect();
    let rolled_back: u64 = results.iter().map(|r| r.1).sum();
    let unique: BTreeSet<(i32, i32)> = all.iter().copied().collect();
    println!(
        "64 sellers sold {} tickets in {:.2} s ({} rolled back and sold again); duplicates {}",
        all.len(),
        elapsed.as_secs_f64(),
        rolled_back,
        all.len() - unique.len()
    );
    assert!(rolled_back > 0, "the rollbacks happened");
    assert_eq!(all.len(), unique.len(), "a ticket was sold twice");
    let expected: BTreeSet<(i32, i32)> = (1..=2)
        .flat_map(|b| (0..2000).map(move |i| (b, i)))
        .filter(|t| !before.contains(t))
        .collect();
    assert_eq!(unique, expected, "every ticket sold once, none skipped");
    assert!(unique.contains(&held), "the ticket rolled back was sold");
    let unsold: i64 = c
        .query_one(
            "SELECT count(*) FROM tickets t
             WHERE NOT EXISTS (SELECT 1 FROM sales s WHERE s.block_id = t.block_id AND s.idx = t.idx)",
            &[],
        )
        .expect("unsold")
        .get(0);
    assert_eq!(unsold, 0);
    // Both sequences have passed their end, and no ticket is left to sell again.
    let left: (i64, i64, Option<i64>) = c
        .query_one(
            "SELECT (SELECT count(*) FROM sale_blocks WHERE NOT passed),
                    (SELECT count(*) FROM sale_returns
                     WHERE NOT EXISTS (SELECT 1 FROM sales s
                                       WHERE s.block_id = sale_returns.block_id
                                         AND s.idx = sale_returns.idx)),
                    (SELECT block_id FROM sale_state)",
            &[],
        )
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .expect("the sale state");
    assert_eq!(left, (0, 0, None));
    assert!(c
        .query_opt("SELECT * FROM sell_next_ticket($1)", &[&emission])
        .expect("sold out")
        .is_none());
    check_reconciliation(&db, &folder, 4000);
}

/// A sale opens and locks the partition of `tickets` of the block it sells from, not every
/// block's (schema_7.sql): in version 6 the ticket was joined to its sale in one statement
/// whose plan held every partition, and a database of 100 other blocks sold 1 700 tickets a
/// second at 64 clients instead of 12 900 (docs/PERFORMANCE.md, "The partitions").
#[test]
fn a_sale_locks_only_the_partition_of_its_block() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    emit_mini(&w, SEED, "em", "4");
    load(&w, &db, &["--allow-test", "em"], 0);
    let emission = emission_id(&db, 1);
    let mut owner = db.client();
    let partitions: Vec<u32> = owner
        .query(
            "SELECT i.inhrelid FROM pg_inherits i
             WHERE i.inhparent = 'tickets'::regclass ORDER BY 1",
            &[],
        )
        .expect("partitions")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(partitions.len(), 4, "a partition per block");
    let first: u32 = owner
        .query_one(
            "SELECT ('tickets_' || block_id)::regclass::oid FROM blocks
             WHERE emission_id = $1 AND block = 1",
            &[&emission],
        )
        .expect("block 1's partition")
        .get(0);
    let (_role, mut seller) = login_role(&db, "seller", Some("ef_seller"));
    let mut tx = seller.transaction().expect("begin");
    // More sales than the five custom plans after which the server may choose a generic one.
    for i in 0..8 {
        let row = tx
            .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
            .expect("a sale");
        assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, i));
    }
    // The locks a transaction takes are held to its end: those of its sales' plans.
    let locked: Vec<u32> = tx
        .query(
            "SELECT DISTINCT l.relation FROM pg_locks l
             WHERE l.pid = pg_backend_pid() AND l.relation = ANY($1) ORDER BY 1",
            &[&partitions],
        )
        .expect("locks")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        locked,
        vec![first],
        "partitions locked by 8 sales of block 1"
    );
    tx.commit().expect("commit");
}

/// Schema version 6's edges: a sale outside READ COMMITTED is refused (its snapshot could miss a
/// withdrawal); a ticket rolled back is listed in sale_returns when its block's sequence
/// passes the end, and db-verify names it if that list loses it; a closing waits for the sale
/// in flight, which it counts.
#[test]
fn rolled_back_tickets_are_returned_and_a_closing_waits_for_the_sale_in_flight() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "2");
    load(&w, &db, &["--allow-test", "em"], 0);
    let emission = emission_id(&db, 1);
    let (seller_role, mut seller) = login_role(&db, "seller", Some("ef_seller"));

    // REPEATABLE READ: refused, nothing sold.
    {
        let mut tx = seller
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()
            .expect("begin");
        let e = tx
            .query("SELECT * FROM sell_next_ticket($1)", &[&emission])
            .expect_err("a sale in REPEATABLE READ");
        let message = e.as_db_error().map(|d| d.message().to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("READ COMMITTED transaction only")),
            "{e:?}"
        );
    }
    let sold_count = |c: &mut Client| -> i64 {
        c.query_one("SELECT count(*) FROM sales", &[])
            .expect("sales")
            .get(0)
    };
    let mut owner = db.client();
    assert_eq!(sold_count(&mut owner), 0);

    // Block 1 sold to its end with ticket 5 rolled back: the sequence passes the end, 5 is
    // listed in sale_returns, and block 2 is sold from.
    for i in 0..2000 {
        let mut tx = seller.transaction().expect("begin");
        let row = tx
            .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
            .expect("a sale");
        assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, i));
        if i == 5 {
            tx.rollback().expect("rollback");
        } else {
            tx.commit().expect("commit");
        }
    }
    let row = seller
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a sale of block 2");
    assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (2, 0));
    let returned: Vec<(i32, i32)> = owner
        .query("SELECT block, idx FROM sale_returns ORDER BY 1, 2", &[])
        .expect("returns")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(returned, vec![(1, 5)]);
    let db_verify = |code: i32| db_verify_all(&w, &db.url, code);
    let out = db_verify(0);
    assert!(
        out.contains("2 as signed, 0 changed") && !out.contains("note:"),
        "{out}"
    );
    // The list loses ticket 5 (only the owner can): db-verify names it.
    owner
        .execute("DELETE FROM sale_returns WHERE block = 1 AND idx = 5", &[])
        .expect("the owner deletes a return");
    let out = db_verify(1);
    assert!(
        out.contains(
            "block 1, index 5, serial mini-ruche-200-0001-00001-0000005: unsold, but its block's sale sequence has passed it and it is not in sale_returns"
        ),
        "{out}"
    );
    owner
        .execute(
            "INSERT INTO sale_returns (emission_id, block, block_id, idx)
             SELECT emission_id, block, block_id, 5 FROM blocks WHERE block = 1",
            &[],
        )
        .expect("put back");
    db_verify(0);
    // Sales of no ticket, added by the owner: counted, the first 50 named.
    owner
        .execute(
            "INSERT INTO sales (block_id, idx)
             SELECT block_id, 2000 + i FROM blocks, generate_series(0, 59) i WHERE block = 1",
            &[],
        )
        .expect("sales of no ticket");
    let out = db_verify(1);
    assert!(
        out.contains("60 sale(s) of no ticket of the block (index 2000, 2001, ")
            && out.contains(", 2049 and 10 more): rows added to sales by hand"),
        "{out}"
    );
    owner
        .batch_execute(
            "SET session_replication_role = replica;
             DELETE FROM sales WHERE idx >= 2000;
             RESET session_replication_role",
        )
        .expect("taken out again");
    db_verify(0);

    // A closing waits for the sale in flight, and counts it.
    let mut tx = seller.transaction().expect("begin");
    let row = tx
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a sale in flight");
    assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (2, 1));
    let folder_arg = folder.display().to_string();
    let mut close = w
        .command(&[
            "close",
            "--database-url",
            &db.url,
            "--key",
            "keys/signing-key.pem",
            &folder_arg,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("close");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        close.try_wait().expect("close's status").is_none(),
        "close ended while a sale was in flight"
    );
    tx.commit().expect("commit the sale");
    let out = close.wait_with_output().expect("close");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sold = sold_count(&mut owner);
    assert_eq!(sold, 2001);
    let closing: String = owner
        .query_one("SELECT reconciliation FROM closings", &[])
        .expect("the closing")
        .get(0);
    let closing: serde_json::Value = serde_json::from_str(&closing).expect("JSON");
    assert_eq!(closing["sold"].as_i64(), Some(2001), "{closing}");
    // Closed: nothing more is sold, not even the ticket returned.
    let seller_url = with_user(&db.url, &seller_role);
    let mut late = Client::connect(&seller_url, NoTls).expect("connect");
    assert!(late
        .query_opt("SELECT * FROM sell_next_ticket($1)", &[&emission])
        .expect("after the closing")
        .is_none());
    assert_eq!(sold_count(&mut owner), 2001);
}

/// `db-verify` of every block of the database at `url` with the test key: its output, after
/// checking its exit code.
fn db_verify_all(w: &Workdir, url: &str, code: i32) -> String {
    text(&w.run_expect(
        &[
            "db-verify",
            "--database-url",
            url,
            "--public-key",
            "keys/public-key.pem",
        ],
        code,
    ))
}

/// The reconciliation views add up to the manifests when `sold` tickets have been sold.
fn check_reconciliation(db: &TestDb, folder: &Path, sold: i64) {
    let mut c = db.client();
    let mut total_prizes = 0i64;
    for (n, block) in [(1, "block-00001"), (2, "block-00002")] {
        let counts = manifest_counts(folder, block);
        let tiers = c
            .query(
                "SELECT prize_cents, manifest_count, sold + unsold, paid_cents + remaining_cents
                 FROM block_tier_reconciliation WHERE block = $1 ORDER BY 1",
                &[&n],
            )
            .expect("tiers");
        let found: Vec<(i64, i64)> = tiers.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(found, counts);
        for r in &tiers {
            assert_eq!(r.get::<_, i64>(1), r.get::<_, i64>(2));
            assert_eq!(r.get::<_, i64>(0) * r.get::<_, i64>(1), r.get::<_, i64>(3));
        }
        let row = c
            .query_one(
                "SELECT tickets, sold + unsold, total_prizes_cents, paid_cents + remaining_cents,
                        top_prize_cents
                 FROM block_reconciliation WHERE block = $1",
                &[&n],
            )
            .expect("block");
        assert_eq!(row.get::<_, i64>(0), 2000);
        assert_eq!(row.get::<_, i64>(1), 2000);
        assert_eq!(row.get::<_, i64>(2), row.get::<_, i64>(3));
        assert_eq!(row.get::<_, i64>(4), 200_000);
        total_prizes += row.get::<_, i64>(2);
    }
    let row = c
        .query_one(
            "SELECT blocks, tickets, sold, unsold, total_prizes_cents, paid_cents, remaining_cents,
                    top_prizes_remaining, payout_so_far::float8
             FROM emission_reconciliation",
            &[],
        )
        .expect("emission");
    assert_eq!(row.get::<_, i64>(0), 2);
    assert_eq!(row.get::<_, i64>(1), 4000);
    assert_eq!(row.get::<_, i64>(2), sold);
    assert_eq!(row.get::<_, i64>(3), 4000 - sold);
    assert_eq!(row.get::<_, i64>(4), total_prizes);
    assert_eq!(row.get::<_, i64>(5) + row.get::<_, i64>(6), total_prizes);
    let paid: i64 = c
        .query_one(
            "SELECT coalesce(sum(t.prize_cents), 0)::bigint FROM sales s
             JOIN tickets t ON t.block_id = s.block_id AND t.idx = s.idx",
            &[],
        )
        .expect("paid")
        .get(0);
    assert_eq!(row.get::<_, i64>(5), paid);
    if sold == 4000 {
        assert_eq!(row.get::<_, i64>(7), 0, "no top prize left");
        // Sold out: the payout is the game's, 3 900 € of prizes per 4 000 € of sales.
        let payout: f64 = row.get(8);
        assert!(
            (payout - 2.0 * 390_000.0 / (4000.0 * 200.0)).abs() < 1e-9,
            "{payout}"
        );
    }
    let top_unsold: i64 = c
        .query_one(
            "SELECT count(*) FROM tickets t WHERE prize_cents = 200000
               AND NOT EXISTS (SELECT 1 FROM sales s WHERE s.block_id = t.block_id AND s.idx = t.idx)",
            &[],
        )
        .expect("top prizes unsold")
        .get(0);
    assert_eq!(row.get::<_, i64>(7), top_unsold);
}

#[test]
fn a_load_killed_during_its_copy_leaves_no_partial_block_and_a_rerun_finishes() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    fixed_test_key(&w);
    w.ok(&[
        "emit",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--out",
        "em",
        "-q",
    ]);
    let folder = w.path("em/ruche-or/2/e0001");
    let args = [
        "load",
        "--database-url",
        &db.url,
        "--public-key",
        "keys/public-key.pem",
        "--allow-test",
        "-q",
        "em",
    ];
    let mut child = w
        .command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start load");
    // Wait until the server is receiving the COPY.
    let mut watcher = Client::connect(&db.admin_url, NoTls).expect("watcher");
    let deadline = Instant::now() + Duration::from_secs(120);
    let copying = loop {
        let n: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = $1 AND query LIKE 'COPY tickets_%' AND state = 'active'",
                &[&db.name],
            )
            .expect("pg_stat_activity")
            .get(0);
        if n > 0 || Instant::now() > deadline {
            break n > 0;
        }
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("load ended ({status}) before it was seen copying");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(copying, "never saw the COPY in pg_stat_activity");
    std::thread::sleep(Duration::from_millis(300));
    let rows_so_far: i64 = watcher
        .query_one(
            "SELECT coalesce(max(tuples_processed), 0) FROM pg_stat_progress_copy WHERE datid =
               (SELECT oid FROM pg_database WHERE datname = $1)",
            &[&db.name],
        )
        .expect("copy progress")
        .get(0);
    let kill = Command::new("kill")
        .args(["-9", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = child.wait().expect("reap");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    println!("killed load with SIGKILL while the COPY had sent {rows_so_far} of 900000 rows");
    // The server notices the lost client and rolls back; until then the block is invisible.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let n: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'COPY%'",
                &[&db.name],
            )
            .expect("pg_stat_activity")
            .get(0);
        if n == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the killed COPY never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(db.tables().is_empty(), "{:?}", db.tables());

    let out = text(&w.ok(&args));
    assert!(out.contains("LOADED"), "{out}");
    assert_eq!(db.blocks(), vec![(1, 900_000)]);
    let expected: Vec<(i64, i64)> = manifest_counts(&folder, "block-00001")
        .into_iter()
        .filter(|&(_, count)| count > 0)
        .collect();
    assert_eq!(database_counts(&db, 1), expected);
}

/// Emits block 1 of La ruche d'or at 2 € (900 000 tickets) into `em`, signed with the fixed
/// test key; its arguments for `load` into `db` are returned.
fn emit_ruche_or(w: &Workdir) -> std::path::PathBuf {
    fixed_test_key(w);
    w.ok(&[
        "emit",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--out",
        "em",
        "-q",
    ]);
    w.path("em/ruche-or/2/e0001")
}

/// A tmpfs of `size` mounted on a fresh folder owned by the `postgres` user, unmounted on drop;
/// `None` where this process cannot mount (not root).
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::Builder::new()
            .prefix("ef-full-disk-")
            .tempdir()
            .expect("a folder for the tmpfs");
        let mounted = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            return None;
        }
        let disk = SmallDisk { dir };
        let owned = Command::new("chown")
            .args(["postgres:"])
            .arg(disk.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(owned, "chown postgres on the tmpfs");
        Some(disk)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_statement_timeout_or_a_full_disk_during_the_copy_leaves_the_database_as_it_was() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    emit_mini(&w, SEED, "mini", "1");
    load(&w, &db, &["--allow-test", "mini"], 0);
    let before = db.blocks();
    let tables = db.tables();
    emit_ruche_or(&w);
    let ruche = |url: &str| -> Vec<String> {
        [
            "load",
            "--database-url",
            url,
            "--public-key",
            "keys/public-key.pem",
            "--allow-test",
            "-q",
            "em",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |args: Vec<String>, code: i32| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        text(&w.run_expect(&args, code))
    };

    // A statement_timeout set on the database, far longer than any statement of the load but
    // its COPY of 900 000 tickets (which takes seconds).
    let mut admin = Client::connect(&db.admin_url, NoTls).expect("admin");
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {} SET statement_timeout = '300ms'",
            db.name
        ))
        .expect("set statement_timeout");
    let out = run(ruche(&db.url), 2);
    assert!(
        out.contains("canceling statement due to statement timeout")
            && out.contains("57014")
            && out.contains("while streaming the tickets (COPY)")
            && out.contains("statement_timeout = 0")
            && out.contains("the database is as it was")
            && out.contains("block-00001.csv"),
        "{out}"
    );
    assert_eq!(out.trim().lines().count(), 1, "one paragraph: {out}");
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {} RESET statement_timeout",
            db.name
        ))
        .expect("reset statement_timeout");
    assert_eq!(db.blocks(), before);
    assert_eq!(db.tables(), tables);

    // A full disk: the block's table goes to a tablespace on a 16 MB tmpfs, which the COPY fills.
    match SmallDisk::mount("16m") {
        None => cannot_run("the full-disk case cannot mount a tmpfs here (needs root)"),
        Some(disk) => {
            let space = format!("{}_small", db.name);
            admin
                .batch_execute(&format!(
                    "CREATE TABLESPACE {space} LOCATION '{}'",
                    disk.dir.path().display()
                ))
                .expect("create the tablespace");
            // The block's tables are created as ef_loader, the schema's owner.
            admin
                .batch_execute(&format!("GRANT CREATE ON TABLESPACE {space} TO ef_loader"))
                .expect("grant the tablespace");
            let url = with_param(
                &db.url,
                "options",
                &format!("-c%20default_tablespace%3D{space}"),
                &format!("-c default_tablespace={space}"),
            );
            let out = run(ruche(&url), 2);
            assert!(
                out.contains("No space left on device")
                    && out.contains("53100")
                    && out.contains("out of space")
                    && out.contains("the database is as it was")
                    && out.contains("block-00001.csv"),
                "{out}"
            );
            assert_eq!(out.trim().lines().count(), 1, "one paragraph: {out}");
            assert_eq!(db.blocks(), before);
            assert_eq!(db.tables(), tables);
            // Nothing of the block is left on the full disk: the tablespace drops.
            admin
                .batch_execute(&format!("DROP TABLESPACE {space}"))
                .expect("the tablespace is empty again");
        }
    }

    // With room and time, the same command loads the block.
    let out = run(ruche(&db.url), 0);
    assert!(out.contains("LOADED"), "{out}");
    assert_eq!(db.blocks(), vec![(1, 2000), (1, 900_000)]);
}

#[test]
fn a_version_1_database_with_sales_migrates_and_sells_on_in_order() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    // A database of schema version 1, as the loader of version 1 left it: one block of five
    // tickets, of which 0, 1 and 3 are sold (2 was a sale rolled back while 3 was sold).
    let mut c = db.client();
    c.batch_execute(include_str!("../../src/load/schema.sql"))
        .expect("schema version 1");
    c.batch_execute(&format!(
        "INSERT INTO schema_version (version) VALUES (1);
         INSERT INTO database_kind (kind) VALUES ('test');
         INSERT INTO emissions (game, game_name, stake_cents, emission, kind, public_key_sha256, seed_sha256)
           VALUES ('hand', 'Hand-made', 200, 1, 'test', 'k', 's');
         INSERT INTO blocks (emission_id, block, tickets, winners, total_prizes_cents, manifest,
                             manifest_sha256, signature, csv_sha256, tickets_root)
           VALUES (1, 1, 5, 0, 0, '{{}}', 'm', '\\x{}', 'c', 'r');
         CREATE TABLE tickets_1 PARTITION OF tickets FOR VALUES IN (1);
         INSERT INTO tickets (block_id, idx, serial, prize_cents, layout, sha256, sold_at)
           SELECT 1, i, 'hand-' || i, 0, 'l', '\\x{}',
                  CASE WHEN i IN (0, 1, 3) THEN now() END
           FROM generate_series(0, 4) i;",
        "00".repeat(64),
        "00".repeat(32)
    ))
    .expect("a version 1 block with sales");

    emit_mini(&w, SEED, "em", "1");
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(
        out.contains("schema  created or migrated to version 7") && out.contains("LOADED"),
        "{out}"
    );
    let indexes: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'tickets%unsold%'",
            &[],
        )
        .expect("indexes")
        .get(0);
    assert_eq!(indexes, 0, "the index of unsold tickets is gone");
    // The hand-made block sells on from its first unsold ticket, in index order, skipping the
    // one sold; its sales, with their times, are rows of sales now.
    let sold: Vec<i32> = (0..3)
        .filter_map(|_| {
            c.query_opt("SELECT idx FROM sell_next_ticket(1)", &[])
                .expect("a sale")
                .map(|r| r.get(0))
        })
        .collect();
    assert_eq!(sold, vec![2, 4]);
    let sales: Vec<i32> = c
        .query("SELECT idx FROM sales WHERE block_id = 1 ORDER BY idx", &[])
        .expect("sales")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(sales, vec![0, 1, 2, 3, 4]);
    // The block loaded now starts at its first ticket.
    let row = c
        .query_one(
            "SELECT block, idx FROM sell_next_ticket(
                (SELECT emission_id FROM emissions WHERE game = 'mini-ruche'))",
            &[],
        )
        .expect("a sale of the new block");
    assert_eq!((row.get::<_, i32>(0), row.get::<_, i32>(1)), (1, 0));
}

#[test]
fn a_version_4_database_with_sales_in_progress_migrates_and_sells_on() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    // A database of schema version 4 as its loader left it: one hand-made block of 10 tickets
    // in 10 lanes, of which the version 4 function has sold one.
    let mut c = db.client();
    let mut tx = c.transaction().expect("begin");
    for (version, sql) in [
        (1, include_str!("../../src/load/schema.sql")),
        (2, include_str!("../../src/load/schema_2.sql")),
        (3, include_str!("../../src/load/schema_3.sql")),
        (4, include_str!("../../src/load/schema_4.sql")),
    ] {
        tx.batch_execute(sql).expect("a schema version");
        tx.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&version],
        )
        .expect("its version");
    }
    tx.commit().expect("commit");
    // Made as a loader makes them, as ef_loader.
    c.batch_execute(&format!(
        "SET ROLE ef_loader;
         INSERT INTO database_kind (kind) VALUES ('test');
         INSERT INTO emissions (game, game_name, stake_cents, emission, kind, public_key_sha256, seed_sha256)
           VALUES ('hand', 'Hand-made', 200, 1, 'test', 'k', 's');
         INSERT INTO blocks (emission_id, block, tickets, winners, total_prizes_cents, manifest,
                             manifest_sha256, signature, csv_sha256, tickets_root)
           VALUES (1, 1, 10, 0, 0, '{{}}', 'm', '\\x{}', 'c', 'r');
         CREATE TABLE tickets_1 PARTITION OF tickets FOR VALUES IN (1);
         INSERT INTO tickets (block_id, idx, serial, prize_cents, layout, sha256)
           SELECT 1, i, 'hand-' || i, 0, 'l', '\\x{}' FROM generate_series(0, 9) i;
         INSERT INTO sale_cursors (block_id, lane, lanes, tickets, next_idx)
           SELECT 1, l, 10, 10, l FROM generate_series(0, 9) l;
         RESET ROLE;",
        "00".repeat(64),
        "00".repeat(32)
    ))
    .expect("a version 4 block");
    let lane: i32 = c
        .query_one("SELECT pg_backend_pid() % 10", &[])
        .expect("pid")
        .get(0);
    let first: i32 = c
        .query_one("SELECT idx FROM sell_next_ticket(1)", &[])
        .expect("a version 4 sale")
        .get(0);
    assert_eq!(first, lane);
    // Version 4's triggers are BEFORE triggers (tgtype bit 1).
    let before_triggers = |c: &mut Client| -> Vec<(String, bool)> {
        c.query(
            "SELECT DISTINCT tgname, (tgtype & 2) <> 0 FROM pg_trigger
             WHERE tgname IN ('tickets_immutable', 'sale_cursors_forward_only') ORDER BY 1",
            &[],
        )
        .expect("triggers")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
    };
    assert_eq!(
        before_triggers(&mut c),
        vec![
            ("sale_cursors_forward_only".to_string(), true),
            ("tickets_immutable".to_string(), true)
        ]
    );

    emit_mini(&w, SEED, "em", "1");
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(
        out.contains("schema  created or migrated to version 7") && out.contains("LOADED"),
        "{out}"
    );
    // Version 6: the cursors are gone, a ticket row is never updated (a BEFORE trigger, on the
    // table and on the partition made under version 4), and the sale made under version 4 is
    // a row of sales.
    assert_eq!(
        before_triggers(&mut c),
        vec![("tickets_immutable".to_string(), true)]
    );
    let partitions: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_trigger WHERE tgname = 'tickets_immutable'
                AND tgrelid = 'tickets_1'::regclass",
            &[],
        )
        .expect("the partition's trigger")
        .get(0);
    assert_eq!(partitions, 1);
    let sales: Vec<i32> = c
        .query("SELECT idx FROM sales WHERE block_id = 1", &[])
        .expect("sales")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(sales, vec![first]);
    // They refuse a changed prize, and a sale undone or moved.
    for sql in [
        "UPDATE tickets SET prize_cents = 1 WHERE block_id = 1 AND idx = 5",
        "DELETE FROM sales WHERE block_id = 1 AND idx = $1",
        "UPDATE sales SET idx = 9 WHERE block_id = 1 AND idx = $1",
    ] {
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> = if sql.contains("$1") {
            vec![&first]
        } else {
            vec![]
        };
        let e = c.execute(sql, &params).expect_err(sql);
        let message = e.as_db_error().map(|d| d.message().to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("immutable") || m.contains("never changed")),
            "{sql}: {e:?}"
        );
    }
    // The block sells on from its first unsold ticket, in index order, skipping the one that
    // version 4 sold; every ticket once.
    let mut sold = vec![first];
    while let Some(row) = c
        .query_opt("SELECT idx FROM sell_next_ticket(1)", &[])
        .expect("a sale")
    {
        sold.push(row.get(0));
    }
    let expected: Vec<i32> = std::iter::once(lane)
        .chain((0..10).filter(|&i| i != lane))
        .collect();
    assert_eq!(sold, expected);
}

#[test]
fn four_loaders_started_at_once_on_a_fresh_database_all_succeed() {
    let Some(first) = TestDb::new() else { return };
    let w = Workdir::new();
    emit_mini(&w, SEED, "em", "4");
    // Three rounds, each on a fresh database: the race is at the schema's creation.
    for round in 0..3 {
        let other = (round > 0).then(|| TestDb::new().expect("another database"));
        let db = other.as_ref().unwrap_or(&first);
        let children: Vec<_> = (1..=4)
            .map(|b| {
                let csv = format!("em/mini-ruche/2/e0001/block-0000{b}.csv");
                let args = load_args(db, &["--allow-test", &csv]);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                w.command(&args)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("start load")
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().expect("load");
            assert_eq!(out.status.code(), Some(0), "round {round}: {}", text(&out));
        }
        assert_eq!(
            db.blocks(),
            vec![(1, 2000), (2, 2000), (3, 2000), (4, 2000)],
            "round {round}"
        );
        let versions: Vec<i32> = db
            .client()
            .query("SELECT version FROM schema_version ORDER BY 1", &[])
            .expect("versions")
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(
            versions,
            vec![1, 2, 3, 4, 5, 6, 7],
            "round {round}: each migration once"
        );
    }
}

/// `f`'s error is the server's "permission denied" (SQLSTATE 42501).
fn assert_denied(result: Result<u64, postgres::Error>, what: &str) {
    match result {
        Ok(n) => panic!("{what}: allowed ({n} rows)"),
        Err(e) => assert_eq!(
            e.code(),
            Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
            "{what}: {e:?}"
        ),
    }
}

/// A login role of its own for one test, member of `group`, dropped with the database.
fn login_role(db: &TestDb, suffix: &str, group: Option<&str>) -> (String, Client) {
    let role = format!("{}_{suffix}", db.name);
    let mut admin = db.client();
    admin
        .batch_execute(&format!("CREATE ROLE {role} LOGIN"))
        .expect("create role");
    if let Some(group) = group {
        admin
            .batch_execute(&format!("GRANT {group} TO {role}"))
            .expect("grant");
    }
    let client = Client::connect(&with_user(&db.url, &role), NoTls).expect("connect as the role");
    (role, client)
}

#[test]
fn a_seller_can_only_sell_and_every_attack_of_the_issue_is_refused() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    emit_mini(&w, SEED, "em", "2");
    load(&w, &db, &["--allow-test", "em"], 0);
    let mut owner = db.client();
    // The roles exist, cannot log in, and own / may what the schema says.
    let roles: Vec<(String, bool)> = owner
        .query(
            "SELECT rolname::text, rolcanlogin FROM pg_roles
             WHERE rolname IN ('ef_loader', 'ef_seller', 'ef_auditor') ORDER BY 1",
            &[],
        )
        .expect("roles")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        roles,
        vec![
            ("ef_auditor".into(), false),
            ("ef_loader".into(), false),
            ("ef_seller".into(), false)
        ]
    );
    let not_owned: i64 = owner
        .query_one(
            "SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace
               AND c.relkind IN ('r', 'p', 'v') AND c.relowner <> 'ef_loader'::regrole::oid",
            &[],
        )
        .expect("owners")
        .get(0);
    assert_eq!(not_owned, 0, "ef_loader owns every table and view");

    // The top prize of block 1 (the mini game has one per block), the target of the attacks.
    let (block_id, top) = block_1_and_its_top_prize(&mut owner);
    let (_, mut seller) = login_role(&db, "seller", Some("ef_seller"));
    let ticket = |c: &mut Client, idx: i32| -> (i64, String, Vec<u8>, bool) {
        let r = c
            .query_one(
                "SELECT prize_cents, layout, sha256,
                        EXISTS (SELECT 1 FROM sales s WHERE s.block_id = t.block_id
                                                        AND s.idx = t.idx)
                 FROM tickets t WHERE block_id = $1 AND idx = $2",
                &[&block_id, &idx],
            )
            .expect("a ticket");
        (r.get(0), r.get(1), r.get(2), r.get(3))
    };
    let before_top = ticket(&mut owner, top);
    // Sales are in index order: the attacks need the top prize beyond the next tickets.
    assert!(top > 3, "the top prize of block 1 is at {top}");

    // What a game server needs, it has: the emission, the blocks, the views, the sale.
    let emission: i64 = seller
        .query_one("SELECT emission_id FROM emissions", &[])
        .expect("a seller reads emissions")
        .get(0);
    seller
        .query("SELECT * FROM blocks", &[])
        .expect("a seller reads blocks");
    seller
        .query("SELECT * FROM emission_reconciliation", &[])
        .expect("a seller reads the reconciliation");
    let sold = seller
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a seller sells");
    assert_eq!((sold.get::<_, i32>(0), sold.get::<_, i32>(1)), (1, 0));

    // Attack 1: swap prize, layout and hash between two unsold tickets, so that the top prize
    // is the next one sold (1 now).
    let swap =
        "UPDATE tickets t SET prize_cents = o.prize_cents, layout = o.layout, sha256 = o.sha256
                FROM tickets o WHERE t.block_id = $1 AND o.block_id = $1
                  AND ((t.idx = $3 AND o.idx = $2) OR (t.idx = $2 AND o.idx = $3))";
    assert_denied(seller.execute(swap, &[&block_id, &top, &1i32]), "swap");
    // Attack 2: move the block's sale sequence onto the top prize, or mark the tickets before
    // it sold, or point the emission's sale state elsewhere.
    let jump = format!("SELECT setval('sale_seq_{block_id}', $1::bigint, false)");
    assert_denied(
        seller.execute(&jump, &[&i64::from(top)]),
        "move the sequence",
    );
    let skip = "INSERT INTO sales (block_id, idx) SELECT $1, i FROM generate_series(1, $2 - 1) i";
    assert_denied(
        seller.execute(skip, &[&block_id, &top]),
        "mark tickets sold",
    );
    assert_denied(
        seller.execute("UPDATE sale_state SET tickets = 0", &[]),
        "update the sale state",
    );
    // Attack 3: delete a sale, to sell ticket 0 a second time.
    let reset = "DELETE FROM sales WHERE block_id = $1 AND idx = $2";
    assert_denied(seller.execute(reset, &[&block_id, &0i32]), "delete a sale");
    // And around them: the partition itself, deleting, inserting, reading where prizes are,
    // holding every sale back by locking the emission's gate.
    assert_denied(
        seller.execute(
            &format!("UPDATE tickets_{block_id} SET prize_cents = 0 WHERE idx = {top}"),
            &[],
        ),
        "the partition",
    );
    assert_denied(
        seller.execute("DELETE FROM tickets WHERE block_id = $1", &[&block_id]),
        "delete",
    );
    assert_denied(
        seller.execute("UPDATE blocks SET tickets = 1", &[]),
        "update blocks",
    );
    assert_denied(
        seller.execute("SELECT idx FROM tickets WHERE prize_cents = 200000", &[]),
        "read where the top prizes are",
    );
    {
        let mut tx = seller.transaction().expect("begin");
        assert_denied(
            tx.execute("LOCK TABLE sales IN SHARE MODE", &[]),
            "hold every sale back",
        );
    }
    // A temporary table named like the schema's cannot stand in for it in the sale function
    // (its search_path puts pg_temp last).
    seller
        .batch_execute(&format!(
            "CREATE TEMP TABLE sale_state AS SELECT {emission}::bigint AS emission_id,
                 true AS on_sale, {block_id}::bigint AS block_id,
                 1 AS block, 'sale_seq_{block_id}'::regclass AS seq, 2000 AS tickets"
        ))
        .expect("a temporary table");
    let sold = seller
        .query_one("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a sale");
    assert_eq!((sold.get::<_, i32>(0), sold.get::<_, i32>(1)), (1, 1));
    assert_eq!(
        ticket(&mut owner, top),
        before_top,
        "the top prize is where it was"
    );

    // A role in no group may not even sell; an auditor reads everything and changes nothing.
    let (_, mut nobody) = login_role(&db, "nobody", None);
    let e = nobody
        .query("SELECT * FROM sell_next_ticket($1)", &[&emission])
        .expect_err("no EXECUTE for PUBLIC");
    assert_eq!(
        e.code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
    let (_, mut auditor) = login_role(&db, "auditor", Some("ef_auditor"));
    let n: i64 = auditor
        .query_one("SELECT count(*) FROM tickets", &[])
        .expect("an auditor reads tickets")
        .get(0);
    assert_eq!(n, 4000);
    let n: i64 = auditor
        .query_one("SELECT count(*) FROM sales", &[])
        .expect("an auditor reads sales")
        .get(0);
    assert_eq!(n, 2);
    assert_denied(
        auditor.execute(swap, &[&block_id, &top, &2i32]),
        "auditor swap",
    );
    assert_denied(auditor.execute(reset, &[&block_id, &0i32]), "auditor reset");
    assert_denied(
        auditor
            .query("SELECT * FROM sell_next_ticket($1)", &[&emission])
            .map(|r| r.len() as u64),
        "auditor sells",
    );

    // The database as loaded and sold so far is as signed: db-verify, as the auditor, says so.
    let (auditor_role, _) = login_role(&db, "auditor2", Some("ef_auditor"));
    let auditor_url = with_user(&db.url, &auditor_role);
    let db_verify = |code: i32| {
        text(&w.run_expect(
            &[
                "db-verify",
                "--database-url",
                &auditor_url,
                "--public-key",
                "keys/public-key.pem",
                "mini-ruche/2/e0001",
            ],
            code,
        ))
    };
    let out = db_verify(0);
    assert!(
        out.contains("OK      mini-ruche/2/e0001 block 1: 2 000 tickets (2 sold)")
            && out.contains("2 block(s), 4 000 tickets checked")
            && out.contains("2 as signed, 0 changed")
            && !out.contains("note:"),
        "{out}"
    );

    // Control: the attacks are real. Tickets 0 and 1 are sold: the seller's next is 2. The
    // owner's statements are refused by the triggers...
    let next = 2;
    let before_next = ticket(&mut owner, next);
    for (what, sql, params) in [
        (
            "swap",
            swap,
            vec![
                &block_id as &(dyn postgres::types::ToSql + Sync),
                &top,
                &next,
            ],
        ),
        ("reset", reset, vec![&block_id, &0i32]),
    ] {
        let e = owner.execute(sql, &params).expect_err(what);
        let message = e.as_db_error().map(|d| d.message().to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.contains("immutable") || m.contains("never changed")),
            "{what}: {e:?}"
        );
    }
    // ... and, triggers off (as only an owner or superuser may), succeed at the SQL level; so
    // does a sale inserted by hand ahead of the sequence (the ticket after the top prize).
    owner
        .batch_execute("SET session_replication_role = replica")
        .expect("triggers off");
    assert_eq!(
        owner
            .execute(swap, &[&block_id, &top, &next])
            .expect("swap"),
        2
    );
    assert_eq!(owner.execute(reset, &[&block_id, &0i32]).expect("reset"), 1);
    let ahead = top + 1;
    assert_eq!(
        owner
            .execute(
                "INSERT INTO sales (block_id, idx) VALUES ($1, $2)",
                &[&block_id, &ahead]
            )
            .expect("a sale by hand"),
        1
    );
    owner
        .batch_execute("RESET session_replication_role")
        .expect("triggers on");
    assert_eq!(
        ticket(&mut owner, next),
        (
            before_top.0,
            before_top.1.clone(),
            before_top.2.clone(),
            false
        ),
        "the top prize is the next one sold"
    );
    assert_eq!(ticket(&mut owner, top).0, before_next.0);
    assert!(!ticket(&mut owner, 0).3, "ticket 0 is unsold again");

    // And db-verify finds each change, naming the rows; the sale deleted below the sequence
    // it cannot tell from a sale rolled back, and lists it for the auditor to compare with
    // the game server's records.
    let out = db_verify(1);
    let serial = |idx: i32| format!("serial mini-ruche-200-0001-00001-{idx:07}");
    let row = |idx: i32| format!("block 1, index {idx}, {}", serial(idx));
    for (what, needle) in [
        (
            "the swap: the top prize's row",
            format!("{}: its SHA-256 is not that of its serial", row(next)),
        ),
        (
            "the swap: the other row",
            format!("{}: its SHA-256 is not that of its serial", row(top)),
        ),
        (
            "the swap: the Merkle root",
            "the Merkle root of its tickets in the database is".to_string(),
        ),
        (
            "the sale by hand",
            format!(
                "{}: sold, but the block's sale sequence has not reached it (next 2)",
                row(ahead)
            ),
        ),
        (
            "the sale deleted",
            "note: block 1: 1 ticket(s) unsold below the block's sale sequence (index 0)"
                .to_string(),
        ),
    ] {
        assert!(out.contains(&needle), "{what}: {needle} not in\n{out}");
    }
    assert!(
        out.contains("FAILED  mini-ruche/2/e0001 block 1")
            && out.contains("OK      mini-ruche/2/e0001 block 2")
            && out.contains("1 as signed, 1 changed"),
        "{out}"
    );
}

/// db-verify reads the schema's own tables, whatever the auditor's search_path finds first: a
/// copy of the tickets in a schema named like the auditor (first in the default search_path,
/// `"$user", public`), a view in place of `tickets`, or a row-level security policy hiding a
/// sale from the auditor would each show it rows as signed while the game server sells others.
#[test]
fn db_verify_is_not_shown_a_shadow_schema_a_view_or_rows_hidden_by_a_policy() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    emit_mini(&w, SEED, "em", "1");
    load(&w, &db, &["--allow-test", "em"], 0);
    let emission = emission_id(&db, 1);
    let (_, mut seller) = login_role(&db, "seller", Some("ef_seller"));
    assert_eq!(sell(&mut seller, emission), Some((1, 0)));
    let (auditor, _) = login_role(&db, "auditor", Some("ef_auditor"));
    let auditor_url = with_user(&db.url, &auditor);
    let db_verify = |code: i32| db_verify_all(&w, &auditor_url, code);
    assert!(db_verify(0).contains("1 as signed, 0 changed"));
    let mut owner = db.client();
    let (block_id, top) = block_1_and_its_top_prize(&mut owner);
    assert!(top > 2, "the top prize of block 1 is at {top}");

    // 1. A sale by hand of the ticket after the top prize, ahead of the sequence, hidden from
    // everyone but the owner by a policy.
    let ahead = top + 1;
    owner
        .batch_execute(&format!(
            "INSERT INTO sales (block_id, idx) VALUES ({block_id}, {ahead});
             CREATE POLICY hide ON sales FOR SELECT USING (idx <> {ahead} OR current_user = 'ef_loader');
             ALTER TABLE sales ENABLE ROW LEVEL SECURITY"
        ))
        .expect("the hidden sale");
    let out = db_verify(2);
    assert!(
        out.contains("row-level security") && out.contains("sales"),
        "{out}"
    );
    owner
        .batch_execute(&format!(
            "ALTER TABLE sales DISABLE ROW LEVEL SECURITY; DROP POLICY hide ON sales;
             SET session_replication_role = replica;
             DELETE FROM sales WHERE block_id = {block_id} AND idx = {ahead};
             RESET session_replication_role"
        ))
        .expect("the hidden sale undone");
    assert!(db_verify(0).contains("1 as signed, 0 changed"));

    // 2. The top prize swapped into the next ticket sold (1), the auditor shown a copy of the
    // tickets as loaded, in a schema of its name.
    let swap = format!(
        "SET session_replication_role = replica;
         UPDATE public.tickets t SET prize_cents = o.prize_cents, layout = o.layout,
                                     sha256 = o.sha256
         FROM public.tickets o WHERE t.block_id = {block_id} AND o.block_id = {block_id}
           AND ((t.idx = {top} AND o.idx = 1) OR (t.idx = 1 AND o.idx = {top}));
         RESET session_replication_role"
    );
    owner
        .batch_execute(&format!(
            "CREATE SCHEMA {auditor};
             CREATE TABLE {auditor}.tickets AS SELECT * FROM public.tickets;
             GRANT USAGE ON SCHEMA {auditor} TO {auditor};
             GRANT SELECT ON {auditor}.tickets TO {auditor};
             {swap}"
        ))
        .expect("the shadow schema and the swap");
    let out = db_verify(1);
    assert!(
        out.contains("block 1, index 1, serial mini-ruche-200-0001-00001-0000001: its SHA-256")
            && out.contains("the Merkle root of its tickets in the database is"),
        "{out}"
    );
    let sold = seller
        .query_one(
            "SELECT idx, prize_cents FROM sell_next_ticket($1)",
            &[&emission],
        )
        .expect("a sale");
    assert_eq!(
        (sold.get::<_, i32>(0), sold.get::<_, i64>(1)),
        (1, 200000),
        "the game server sold the swapped top prize"
    );

    // 3. The same copy as a view named `tickets` in the schema itself, the table renamed.
    owner
        .batch_execute(&format!(
            "ALTER TABLE public.tickets RENAME TO tickets_real;
             CREATE TABLE public.tickets_copy AS SELECT * FROM {auditor}.tickets;
             CREATE VIEW public.tickets AS SELECT * FROM public.tickets_copy;
             GRANT SELECT ON public.tickets, public.tickets_copy TO ef_auditor;
             DROP SCHEMA {auditor} CASCADE"
        ))
        .expect("the view");
    let out = db_verify(2);
    assert!(out.contains("tickets") && out.contains("view"), "{out}");
}

/// The emission id of the only emission loaded, and a sale as `client` (block, index, prize).
fn emission_id(db: &TestDb, emission: i32) -> i64 {
    db.client()
        .query_one(
            "SELECT emission_id FROM emissions WHERE emission = $1",
            &[&emission],
        )
        .expect("the emission")
        .get(0)
}

fn sell(client: &mut Client, emission: i64) -> Option<(i32, i32)> {
    client
        .query_opt("SELECT block, idx FROM sell_next_ticket($1)", &[&emission])
        .expect("a sale")
        .map(|r| (r.get(0), r.get(1)))
}

/// (block, index) of every ticket sold.
fn sold_tickets(db: &TestDb) -> Vec<(i32, i32)> {
    db.client()
        .query(
            "SELECT b.block, s.idx FROM sales s JOIN blocks b USING (block_id) ORDER BY 1, 2",
            &[],
        )
        .expect("sold tickets")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

fn withdrawals_in_db(db: &TestDb) -> Vec<(i32, Option<i32>)> {
    db.client()
        .query("SELECT number, block FROM withdrawals ORDER BY 1", &[])
        .expect("withdrawals")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn a_withdrawn_block_is_never_sold_from_and_bad_records_change_nothing() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "3");
    load(&w, &db, &["--allow-test", "em"], 0);
    let emission = emission_id(&db, 1);
    let mut seller = db.client();
    let before: Vec<(i32, i32)> = (0..3)
        .map(|_| sell(&mut seller, emission).unwrap())
        .collect();
    assert!(before.iter().all(|&(b, _)| b == 1), "{before:?}");

    // withdraw: a signed record, logged, the next number.
    let folder_arg = folder.display().to_string();
    let out = text(&w.ok(&[
        "withdraw",
        "--key",
        "keys/signing-key.pem",
        "--block",
        "1",
        "--reason",
        "misprint found by the printer",
        &folder_arg,
    ]));
    assert!(
        out.contains("WITHDRAWN block 1 of mini-ruche/2/e0001")
            && out.contains("withdrawal-0001.json"),
        "{out}"
    );
    let record = folder.join("withdrawal-0001.json");
    let bytes = common::read(&record);
    let public = keys::read_public_key(&w.path("keys/public-key.pem")).expect("public key");
    keys::check(
        &public,
        &bytes,
        &common::read(&folder.join("withdrawal-0001.json.sig")),
    )
    .expect("the record is signed with the emission's key");
    let json: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(json["block"], 1);
    assert_eq!(json["reason"], "misprint found by the printer");
    assert_eq!(json["game"], "mini-ruche");
    let log = std::fs::read_to_string(folder.join("emission.log.jsonl")).expect("log");
    let last = log.lines().last().expect("a line");
    assert!(
        last.contains("\"command\":\"withdraw\"")
            && last.contains(&common::sha256_file(&record))
            && last.contains("\"signature\""),
        "{last}"
    );
    // The folder still verifies (the log's line after the seal is allowed).
    w.ok(&[
        "verify",
        "--public-key",
        "keys/public-key.pem",
        &folder_arg,
        "-q",
    ]);
    // A reason on two lines, a block beyond the emission, the wrong key: refused, no file.
    for (args, needle) in [
        (
            vec!["--block", "2", "--reason", "two\nlines"],
            "control character",
        ),
        (
            vec!["--block", "4", "--reason", "x"],
            "holds no block 4 (its blocks: 1-3)",
        ),
    ] {
        let mut all = vec!["withdraw", "--key", "keys/signing-key.pem"];
        all.extend(args);
        all.push(&folder_arg);
        let out = text(&w.run_expect(&all, 2));
        assert!(out.contains(needle), "{needle}: {out}");
    }
    w.ok(&["keygen", "--out", "other", "-q"]);
    let out = text(&w.run_expect(
        &[
            "withdraw",
            "--key",
            "other/signing-key.pem",
            "--reason",
            "x",
            &folder_arg,
        ],
        2,
    ));
    assert!(out.contains("emission.json"), "{out}");
    assert!(!folder.join("withdrawal-0002.json").exists());

    // Not applied until load runs: the sale goes on in block 1 meanwhile.
    assert_eq!(sell(&mut seller, emission).map(|s| s.0), Some(1));
    let sold_before = sold_tickets(&db);
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(
        out.contains("WITHDRAWN block 1 by")
            && out.contains("3 already loaded; 1 withdrawal record(s) applied"),
        "{out}"
    );
    assert_eq!(withdrawals_in_db(&db), vec![(1, Some(1))]);
    // Never sold from again; past sales unchanged.
    for _ in 0..50 {
        assert_eq!(sell(&mut seller, emission).map(|s| s.0), Some(2));
    }
    let after = sold_tickets(&db);
    let block_1: Vec<_> = after.iter().filter(|s| s.0 == 1).copied().collect();
    assert_eq!(block_1, sold_before);
    // Applied once: loading again applies nothing.
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(!out.contains("WITHDRAWN"), "{out}");

    // Bad records: each stops the load before the database is touched.
    let edited = String::from_utf8(bytes.clone())
        .unwrap()
        .replace("\"number\": 1", "\"number\": 2")
        .replace("\"block\": 1", "\"block\": 2");
    std::fs::write(folder.join("withdrawal-0002.json"), &edited).unwrap();
    std::fs::copy(
        folder.join("withdrawal-0001.json.sig"),
        folder.join("withdrawal-0002.json.sig"),
    )
    .unwrap();
    let out = load(&w, &db, &["--allow-test", "em"], 2);
    assert!(
        out.contains("withdrawal-0002.json")
            && out.contains("not signed with the key given")
            && out.contains("nothing was applied"),
        "{out}"
    );
    // Signed with another key.
    let other = keys::read_signing_key(&w.path("other/signing-key.pem")).unwrap();
    std::fs::write(
        folder.join("withdrawal-0002.json.sig"),
        keys::sign(&other, edited.as_bytes()),
    )
    .unwrap();
    let out = load(&w, &db, &["--allow-test", "em"], 2);
    assert!(out.contains("not signed with the key given"), "{out}");
    // A record of another emission (same key, same game), moved into this folder.
    fixed_test_key(&w);
    w.ok(&[
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "--emission",
        "2",
        "--blocks",
        "2",
        "--seed",
        ANOTHER_SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--out",
        "em2",
        "-q",
    ]);
    let other_folder = w.path("em2/mini-ruche/2/e0002");
    let other_arg = other_folder.display().to_string();
    for _ in 0..2 {
        w.ok(&[
            "withdraw",
            "--key",
            "keys/signing-key.pem",
            "--block",
            "2",
            "--reason",
            "other",
            &other_arg,
            "-q",
        ]);
    }
    for name in ["withdrawal-0002.json", "withdrawal-0002.json.sig"] {
        std::fs::copy(other_folder.join(name), folder.join(name)).unwrap();
    }
    let out = load(&w, &db, &["--allow-test", "em"], 2);
    assert!(
        out.contains("withdrawal-0002.json")
            && out.contains("is not of the emission mini-ruche/2/e0001")
            && out.contains("nothing was applied"),
        "{out}"
    );
    assert_eq!(withdrawals_in_db(&db), vec![(1, Some(1))]);
    assert_eq!(sell(&mut seller, emission).map(|s| s.0), Some(2));
    for name in ["withdrawal-0002.json", "withdrawal-0002.json.sig"] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }

    // The whole emission: nothing is sold any more.
    w.ok(&[
        "withdraw",
        "--key",
        "keys/signing-key.pem",
        "--reason",
        "game stopped",
        &folder_arg,
        "-q",
    ]);
    let out = load(&w, &db, &["--allow-test", "em"], 0);
    assert!(out.contains("WITHDRAWN the whole emission"), "{out}");
    assert_eq!(withdrawals_in_db(&db), vec![(1, Some(1)), (2, None)]);
    let sold = sold_tickets(&db);
    assert_eq!(sell(&mut seller, emission), None);
    assert_eq!(sold_tickets(&db), sold);

    // db-verify checks the records and that nothing was sold after them...
    let db_verify = |code: i32| db_verify_all(&w, &db.url, code);
    let out = db_verify(0);
    assert!(out.contains("3 as signed, 0 changed"), "{out}");
    // ... and names a sale from a withdrawn block made behind the sale function's back.
    let mut owner = db.client();
    owner
        .batch_execute(
            "SET session_replication_role = replica;
             INSERT INTO sales (block_id, idx)
             SELECT block_id, 0 FROM blocks WHERE block = 3;
             SELECT nextval('sale_seq_' || (SELECT block_id FROM blocks WHERE block = 3));
             RESET session_replication_role",
        )
        .expect("a sale by hand");
    let out = db_verify(1);
    assert!(
        out.contains(
            "block 3, index 0, serial mini-ruche-200-0001-00003-0000000: sold after withdrawal 2"
        ),
        "{out}"
    );
    // The records are immutable, even for the owner.
    let e = owner
        .execute("DELETE FROM withdrawals", &[])
        .expect_err("immutable");
    assert!(
        e.to_string().contains("never changed or deleted")
            || format!("{e:?}").contains("never changed or deleted"),
        "{e:?}"
    );
}

#[test]
fn a_closed_emission_sells_nothing_and_its_signed_reconciliation_adds_up() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "2");
    load(&w, &db, &["--allow-test", "em"], 0);
    let emission = emission_id(&db, 1);
    let (seller_role, mut seller) = login_role(&db, "seller", Some("ef_seller"));
    let sold: Vec<(i32, i32)> = (0..10)
        .map(|_| sell(&mut seller, emission).unwrap())
        .collect();
    assert_eq!(sold.len(), 10);
    let seller_url = with_user(&db.url, &seller_role);

    // prizes-remaining, as the seller: per tier, nothing positional.
    let remaining = |url: &str, csv: bool, code: i32| {
        let mut args = vec![
            "prizes-remaining",
            "--database-url",
            url,
            "mini-ruche/2/e0001",
        ];
        if csv {
            args.push("--csv");
        }
        w.run_expect(&args, code)
    };
    let json: serde_json::Value =
        serde_json::from_slice(&remaining(&seller_url, false, 0).stdout).expect("JSON");
    assert_eq!(json["status"], "on sale");
    assert_eq!(json["emission"], "mini-ruche/2/e0001");
    let mut manifest: std::collections::BTreeMap<i64, i64> = Default::default();
    for block in ["block-00001", "block-00002"] {
        for (c, n) in manifest_counts(&folder, block) {
            *manifest.entry(c).or_default() += n;
        }
    }
    let sold_per_tier: std::collections::BTreeMap<i64, i64> = db
        .client()
        .query(
            "SELECT t.prize_cents, count(*) FROM sales s
             JOIN tickets t ON t.block_id = s.block_id AND t.idx = s.idx GROUP BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let tiers = json["tiers"].as_array().expect("tiers");
    assert_eq!(tiers.len(), manifest.keys().filter(|&&c| c > 0).count());
    for t in tiers {
        let obj = t.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        assert_eq!(keys, ["original", "prize", "remaining"], "{t}");
        let cents = (t["prize"].as_str().unwrap().parse::<f64>().unwrap() * 100.0).round() as i64;
        assert_eq!(t["original"].as_i64(), Some(manifest[&cents]));
        assert_eq!(
            t["remaining"].as_i64(),
            Some(manifest[&cents] - sold_per_tier.get(&cents).copied().unwrap_or(0))
        );
    }
    let csv = String::from_utf8(remaining(&seller_url, true, 0).stdout).unwrap();
    assert!(csv.starts_with("prize,original,remaining\n"), "{csv}");
    assert_eq!(csv.lines().count(), tiers.len() + 1);
    // A role in no group: one paragraph naming the privilege.
    let (nobody_role, _) = login_role(&db, "nobody", None);
    let out = text(&remaining(&with_user(&db.url, &nobody_role), false, 2));
    assert!(
        out.contains("permission denied") && out.contains("SELECT on emissions"),
        "{out}"
    );
    assert_eq!(out.trim_end().lines().count(), 1, "{out}");

    // close, as the seller: refused, naming the privileges; nothing changed.
    let folder_arg = folder.display().to_string();
    let close = |url: &str, key: &str, code: i32| {
        text(&w.run_expect(
            &["close", "--database-url", url, "--key", key, &folder_arg],
            code,
        ))
    };
    let log_path = folder.join("emission.log.jsonl");
    let log_before = std::fs::read_to_string(&log_path).unwrap();
    let out = close(&seller_url, "keys/signing-key.pem", 2);
    assert!(
        out.contains("permission denied")
            && out.contains("a SHARE lock on sales, UPDATE on sale_state and INSERT on closings")
            && out.contains("ef_loader"),
        "{out}"
    );
    assert_eq!(out.trim_end().lines().count(), 1, "{out}");
    w.ok(&["keygen", "--out", "other", "-q"]);
    let out = close(&db.url, "other/signing-key.pem", 2);
    assert!(
        out.contains("emission.json") && out.contains("nothing was changed"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(&log_path).unwrap(),
        log_before,
        "a refused close writes no log line"
    );
    let closings: i64 = db
        .client()
        .query_one("SELECT count(*) FROM closings", &[])
        .unwrap()
        .get(0);
    assert_eq!(closings, 0);
    assert!(sell(&mut seller, emission).is_some());

    // close, as the owner.
    let out = close(&db.url, "keys/signing-key.pem", 0);
    assert!(
        out.contains("CLOSED mini-ruche/2/e0001") && out.contains("11 of 4000 tickets sold"),
        "{out}"
    );
    let path = folder.join("emission.closing.json");
    let bytes = common::read(&path);
    let public = keys::read_public_key(&w.path("keys/public-key.pem")).unwrap();
    keys::check(
        &public,
        &bytes,
        &common::read(&folder.join("emission.closing.json.sig")),
    )
    .expect("signed with the emission's key");
    // The audit log: one more line, of close, signed, naming the file's SHA-256, the
    // database URL redacted.
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(log.lines().count(), log_before.lines().count() + 1, "{log}");
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["command"], "close", "{last}");
    assert_eq!(
        last["result"],
        format!(
            "closed the emission: emission.closing.json (SHA-256 {})",
            common::sha256_file(&path)
        )
    );
    assert!(
        !last.to_string().contains(&db.url)
            && last.to_string().contains("<redacted: database URL>"),
        "{last}"
    );
    let chain = emission_factory::emission::log::read_chain(&folder, &public)
        .expect("every line signed by the emission's key");
    assert_eq!(
        chain.closing_recorded,
        Some((chain.lines, common::sha256_file(&path)))
    );
    assert!(last["signature"].as_str().is_some_and(|s| s.len() == 128));
    w.ok(&[
        "verify",
        "--public-key",
        "keys/public-key.pem",
        &folder_arg,
        "-q",
    ]);
    let r: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(r["sold"], 11);
    assert_eq!(r["unsold"], 4000 - 11);
    assert_eq!(r["tickets"], 4000);
    let sold_now = sold_tickets(&db);
    let tier_sum: i64 = r["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["sold"].as_i64().unwrap())
        .sum();
    assert_eq!(tier_sum, 11);
    let block_sold: Vec<i64> = r["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["sold"].as_i64().unwrap())
        .collect();
    assert_eq!(block_sold.iter().sum::<i64>(), sold_now.len() as i64);
    let top = &r["tiers"][0];
    assert_eq!(r["top_prize"], top["prize"]);
    assert_eq!(r["top_prizes_unsold"], top["unsold"]);
    // paid = Σ prize × sold, in cents, recomputed from the rows.
    let paid_cents: i64 = db
        .client()
        .query_one(
            "SELECT sum(t.prize_cents)::bigint FROM sales s
             JOIN tickets t ON t.block_id = s.block_id AND t.idx = s.idx",
            &[],
        )
        .unwrap()
        .get::<_, Option<i64>>(0)
        .unwrap_or(0);
    let paid: f64 = r["paid"].as_str().unwrap().parse().unwrap();
    assert_eq!((paid * 100.0).round() as i64, paid_cents);

    // No more sales, not even on a new connection; the public count says closed.
    assert_eq!(sell(&mut seller, emission), None);
    let (_, mut late) = login_role(&db, "late", Some("ef_seller"));
    assert_eq!(sell(&mut late, emission), None);
    assert_eq!(sold_tickets(&db), sold_now);
    let json: serde_json::Value =
        serde_json::from_slice(&remaining(&seller_url, false, 0).stdout).unwrap();
    assert_eq!(json["status"], "closed");
    assert!(
        json["tiers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["remaining"] == 0),
        "{json}"
    );

    // Again: already closed, the same file, no second line.
    let out = close(&db.url, "keys/signing-key.pem", 0);
    assert!(
        out.contains("ALREADY CLOSED") && out.contains("the audit log recorded it already"),
        "{out}"
    );
    assert_eq!(common::read(&path), bytes);
    std::fs::remove_file(&path).unwrap();
    close(&db.url, "keys/signing-key.pem", 0);
    assert_eq!(
        common::read(&path),
        bytes,
        "written again from the database"
    );
    assert_eq!(std::fs::read_to_string(&log_path).unwrap(), log);
    // The log line lost (the last line cut off): the next close appends it again.
    std::fs::write(&log_path, &log_before).unwrap();
    let out = close(&db.url, "keys/signing-key.pem", 0);
    assert!(out.contains("recorded in the audit log"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&log_path).unwrap().lines().count(),
        log.lines().count()
    );
    w.ok(&[
        "verify",
        "--public-key",
        "keys/public-key.pem",
        &folder_arg,
        "-q",
    ]);

    // db-verify: as signed; then a sale undone behind the function's back is named.
    let db_verify = |code: i32| db_verify_all(&w, &db.url, code);
    let out = db_verify(0);
    assert!(out.contains("2 as signed, 0 changed"), "{out}");
    let (b, i) = sold_now[0];
    db.client()
        .batch_execute(&format!(
            "SET session_replication_role = replica;
             DELETE FROM sales
             WHERE block_id = (SELECT block_id FROM blocks WHERE block = {b}) AND idx = {i};
             RESET session_replication_role"
        ))
        .unwrap();
    let out = db_verify(1);
    assert!(
        out.contains("sales were added or undone after the closing"),
        "{out}"
    );
}

/// `verify` of an emission folder checks its closing: the reconciliation's signature, its
/// numbers against the manifests, and the audit line that records it (issue 22 item 4).
#[test]
fn verify_checks_the_closing_reconciliation_and_the_log_line_that_records_it() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "2");
    load(&w, &db, &["--allow-test", "em"], 0);
    let emission = emission_id(&db, 1);
    let (_, mut seller) = login_role(&db, "seller", Some("ef_seller"));
    for _ in 0..25 {
        sell(&mut seller, emission).expect("a sale");
    }
    let folder_arg = folder.display().to_string();
    w.ok(&[
        "close",
        "--database-url",
        &db.url,
        "--key",
        "keys/signing-key.pem",
        &folder_arg,
        "-q",
    ]);
    let verify = |code: i32| {
        text(&w.run_expect(
            &["verify", "--public-key", "keys/public-key.pem", &folder_arg],
            code,
        ))
    };
    verify(0);
    let path = folder.join("emission.closing.json");
    let sig_path = folder.join("emission.closing.json.sig");
    let log_path = folder.join("emission.log.jsonl");
    let (bytes, sig, log) = (
        common::read(&path),
        common::read(&sig_path),
        common::read(&log_path),
    );
    let restore = || {
        std::fs::write(&path, &bytes).unwrap();
        std::fs::write(&sig_path, &sig).unwrap();
        std::fs::write(&log_path, &log).unwrap();
    };
    let text_of = String::from_utf8(bytes.clone()).unwrap();
    let r: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let sold = r["sold"].as_u64().unwrap();
    assert_eq!(sold, 25);
    let changed = text_of.replace(
        &format!("\"sold\": {sold},\n  \"unsold\""),
        &format!("\"sold\": {},\n  \"unsold\"", sold - 1),
    );
    assert_ne!(changed, text_of, "the total sold is changed");

    // A number changed: the signature no longer holds.
    std::fs::write(&path, &changed).unwrap();
    let out = verify(1);
    assert!(
        out.contains("emission.closing.json") && out.contains("not signed with the emission's key"),
        "{out}"
    );
    // Changed and signed again with the emission's key (an insider holding it): the numbers no
    // longer add up.
    let key = keys::read_signing_key(&w.path("keys/signing-key.pem")).unwrap();
    std::fs::write(&sig_path, keys::sign(&key, changed.as_bytes())).unwrap();
    let out = verify(1);
    assert!(
        out.contains(&format!(
            "sold is {}, its blocks add up to {sold}",
            sold - 1
        )) && out.contains("is not its 4000 tickets"),
        "{out}"
    );
    // ... and the log records another file.
    assert!(out.contains("the file was replaced"), "{out}");
    restore();
    // A tier's count that is not the manifests' (sold and unsold moved with it, re-signed).
    let tier = &r["tiers"][0];
    let (count, unsold) = (
        tier["count"].as_u64().unwrap(),
        tier["unsold"].as_u64().unwrap(),
    );
    let from = format!(
        "\"count\": {count},\n      \"sold\": {},\n      \"unsold\": {unsold}",
        tier["sold"]
    );
    assert!(text_of.contains(&from), "{text_of}");
    let changed = text_of.replacen(
        &from,
        &format!(
            "\"count\": {},\n      \"sold\": {},\n      \"unsold\": {}",
            count + 1,
            tier["sold"],
            unsold + 1
        ),
        1,
    );
    std::fs::write(&path, &changed).unwrap();
    std::fs::write(&sig_path, keys::sign(&key, changed.as_bytes())).unwrap();
    let out = verify(1);
    assert!(
        out.contains("where the manifests of its blocks say"),
        "{out}"
    );
    restore();
    verify(0);

    // The reconciliation deleted (with its signature): the log records a closing.
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_file(&sig_path).unwrap();
    let out = verify(1);
    assert!(
        out.contains("the audit log records a closing")
            && out.contains("emission.closing.json is missing"),
        "{out}"
    );
    // The file alone deleted: its signature is left.
    std::fs::write(&sig_path, &sig).unwrap();
    let out = verify(1);
    assert!(out.contains("and no emission.closing.json"), "{out}");
    restore();
    // The log's closing line cut off: the file is recorded nowhere.
    let log_text = String::from_utf8(log.clone()).unwrap();
    let kept: Vec<&str> = log_text.lines().collect();
    std::fs::write(
        &log_path,
        format!("{}\n", kept[..kept.len() - 1].join("\n")),
    )
    .unwrap();
    let out = verify(1);
    assert!(out.contains("the audit log records no closing"), "{out}");
    restore();
    verify(0);
}

/// A throw-away cluster of its own with TLS (tests/pg/start.sh --tls), stopped at the end.
struct TlsCluster {
    dir: String,
    port: String,
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let _ = Command::new("tests/pg/stop.sh")
            .arg(&self.dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status();
    }
}

impl TlsCluster {
    fn log(&self) -> String {
        std::fs::read_to_string(format!("{}/server.log", self.dir)).unwrap_or_default()
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A certificate authority `name` (name.crt, name.key) in `dir`.
fn make_ca(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.crt"),
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
        ],
    );
}

#[test]
fn tls_is_verified_as_sslmode_says_and_plaintext_to_another_host_is_refused_before_connecting() {
    if Command::new("openssl").arg("version").output().is_err() {
        cannot_run("openssl is not installed (apt-get install -y openssl)");
        return;
    }
    let w = Workdir::new();
    let certs = w.path("certs");
    std::fs::create_dir(&certs).unwrap();
    make_ca(&certs, "ca");
    make_ca(&certs, "other-ca");
    openssl(
        &certs,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        certs.join("san.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        &certs,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    );
    let started = Command::new("tests/pg/start.sh")
        .args(["--fast", "--tls"])
        .arg(&certs)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("start.sh runs");
    if !started.status.success() {
        cannot_run(&format!(
            "tests/pg/start.sh --tls failed: {}",
            String::from_utf8_lossy(&started.stderr)
        ));
        return;
    }
    let said = String::from_utf8_lossy(&started.stdout).to_string();
    let value = |name: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(&format!("export {name}='")))
            .and_then(|v| v.strip_suffix('\''))
            .unwrap_or_else(|| panic!("{name} in {said}"))
            .to_string()
    };
    let cluster = TlsCluster {
        dir: value("PG_TEST_DIR"),
        port: value("PG_TEST_PORT"),
    };
    emit_mini(&w, SEED, "em", "1");
    let ca = certs.join("ca.crt").display().to_string();
    let other_ca = certs.join("other-ca.crt").display().to_string();
    let url = |host: &str, query: &str| {
        format!(
            "postgresql://postgres@{host}:{}/postgres{query}",
            cluster.port
        )
    };
    let load_with = |url: &str, extra: &[&str], code: i32| {
        let mut args = vec![
            "load",
            "--database-url",
            url,
            "--public-key",
            "keys/public-key.pem",
            "--game",
        ];
        let game = data("mini-ruche.toml");
        args.push(&game);
        args.extend_from_slice(&["-q", "--allow-test"]);
        args.extend_from_slice(extra);
        args.push("em");
        text(&w.run_expect(&args, code))
    };
    let ssl_connections = |log: &str| log.matches("SSL enabled").count();

    // verify-full, by name and by address: the certificate names both.
    let out = load_with(
        &url(
            "localhost",
            &format!("?sslmode=verify-full&sslrootcert={ca}"),
        ),
        &[],
        0,
    );
    assert!(out.contains("1 loaded"), "{out}");
    assert_eq!(ssl_connections(&cluster.log()), 1, "{}", cluster.log());
    load_with(
        &url(
            "127.0.0.1",
            &format!("?sslmode=verify-full&sslrootcert={ca}"),
        ),
        &[],
        0,
    );
    // The key=value form too.
    load_with(
        &format!(
            "host=localhost port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert='{ca}'",
            cluster.port
        ),
        &[],
        0,
    );
    assert_eq!(ssl_connections(&cluster.log()), 3);
    // db-verify over verify-full: every one of its connections, the checking one and those
    // its tickets are streamed on, is TLS.
    let authorized = |log: &str| log.matches("connection authorized").count();
    let log = cluster.log();
    let (ssl_before, all_before) = (ssl_connections(&log), authorized(&log));
    let verify_full = url(
        "localhost",
        &format!("?sslmode=verify-full&sslrootcert={ca}"),
    );
    let out = text(&w.run_expect(
        &[
            "db-verify",
            "--database-url",
            &verify_full,
            "--public-key",
            "keys/public-key.pem",
        ],
        0,
    ));
    assert!(out.contains("as signed"), "{out}");
    let log = cluster.log();
    let ssl = ssl_connections(&log) - ssl_before;
    assert!(ssl >= 2, "db-verify made {ssl} TLS connection(s): {log}");
    assert_eq!(ssl, authorized(&log) - all_before, "{log}");
    // 127.0.0.2 is not in the certificate: verify-full refuses it, verify-ca and require take it.
    let out = load_with(
        &url(
            "127.0.0.2",
            &format!("?sslmode=verify-full&sslrootcert={ca}"),
        ),
        &[],
        2,
    );
    assert!(
        out.contains("cannot connect") && out.contains("sslmode=verify-full"),
        "{out}"
    );
    load_with(
        &url("127.0.0.2", &format!("?sslmode=verify-ca&sslrootcert={ca}")),
        &[],
        0,
    );
    load_with(&url("127.0.0.2", "?sslmode=require"), &[], 0);
    // Another authority: refused.
    let out = load_with(
        &url(
            "localhost",
            &format!("?sslmode=verify-ca&sslrootcert={other_ca}"),
        ),
        &[],
        2,
    );
    assert!(out.contains("certificate verify failed"), "{out}");
    let out = load_with(&url("localhost", "?sslmode=verify-full"), &[], 2);
    assert!(out.contains("needs sslrootcert"), "{out}");

    // Plaintext to a host that is not this machine: refused before any connection.
    let before = cluster.log().matches("connection received").count();
    for query in ["", "?sslmode=disable", "?sslmode=prefer"] {
        let out = load_with(&url("127.0.0.2", query), &[], 2);
        assert!(
            out.contains("refusing to connect") && out.contains("--allow-plaintext"),
            "{out}"
        );
    }
    assert_eq!(
        cluster.log().matches("connection received").count(),
        before,
        "no connection was made"
    );
    // ... unless allowed; and plaintext to this machine is fine.
    let out = load_with(
        &url("127.0.0.2", "?sslmode=disable"),
        &["--allow-plaintext"],
        0,
    );
    assert!(out.contains("1 already loaded"), "{out}");
    load_with(&url("127.0.0.1", "?sslmode=disable"), &[], 0);
    assert!(cluster.log().matches("connection received").count() >= before + 2);
}

#[test]
fn load_json_is_one_result_object_and_the_progress_bar_is_on_a_terminal_only() {
    let Some(db) = TestDb::new() else { return };
    let w = Workdir::new();
    let folder = emit_mini(&w, SEED, "em", "2");
    let game = data("mini-ruche.toml");
    let base = |extra: &[&str]| {
        let mut args: Vec<String> = [
            "load",
            "--database-url",
            &db.url,
            "--public-key",
            "keys/public-key.pem",
            "--game",
            &game,
            "--allow-test",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push("em".into());
        args
    };
    let run = |extra: &[&str]| {
        let args = base(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        w.ok(&args)
    };
    // --json: one object on stdout, no progress on stderr.
    let out = run(&["--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json["load_format"], 1);
    assert_eq!(json["blocks_loaded"], 2);
    assert_eq!(json["blocks_skipped"], 0);
    assert_eq!(json["schema_migrated_to"], 7);
    let blocks = json["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["outcome"], "loaded");
    assert_eq!(blocks[0]["tickets"], 2000);
    // Again, with a withdrawal applied.
    w.ok(&[
        "withdraw",
        "--key",
        "keys/signing-key.pem",
        "--block",
        "2",
        "--reason",
        "test",
        &folder.display().to_string(),
        "-q",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&run(&["--json"]).stdout).unwrap();
    assert_eq!(json["blocks_skipped"], 2);
    assert_eq!(json["withdrawals_applied"], 1);
    assert_eq!(json["schema_migrated_to"], serde_json::Value::Null);
    assert_eq!(
        json["blocks"][0]["manifest_sha256"],
        common::sha256_file(&folder.join("block-00001.manifest.json"))
    );
    assert_eq!(
        json["blocks"][0]["withdrawals_applied"][0]["what"],
        "block 2"
    );

    // The bar: on a terminal (util-linux's script gives one), not with -q or --json, and not
    // when standard error is not a terminal.
    let bar = " left)";
    let db2 = TestDb::new().expect("a second database");
    let on_terminal = |args: Vec<String>| -> Option<String> {
        let have = Command::new("script")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !have {
            cannot_run("util-linux's script is not installed (apt-get install bsdutils)");
            return None;
        }
        let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_emission-factory"))
            .chain(args.iter().map(String::as_str))
            .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
            .collect();
        let out = Command::new("script")
            .args(["-qec", &quoted.join(" "), "/dev/null"])
            .current_dir(w.dir.path())
            .output()
            .expect("script runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // Each run into a database of its own, so that each one copies tickets.
    let with_db = |db: &TestDb, extra: &[&str]| {
        let mut args = base(extra);
        args[2] = db.url.clone();
        args
    };
    let Some(shown) = on_terminal(with_db(&db2, &[])) else {
        return;
    };
    assert!(
        shown.contains(bar) && shown.contains("tickets (") && shown.contains("tickets/s"),
        "{shown}"
    );
    for quiet in [&["-q"][..], &["--json"][..]] {
        let fresh = TestDb::new().expect("a database");
        let shown = on_terminal(with_db(&fresh, quiet)).unwrap();
        // It did load (so a bar would have had tickets to count).
        assert!(
            shown.contains("2 loaded") || shown.contains("\"blocks_loaded\": 2"),
            "{quiet:?}: {shown}"
        );
        assert!(!shown.contains(bar), "{quiet:?}: {shown}");
    }
    let fresh = TestDb::new().expect("a database");
    let args = with_db(&fresh, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = text(&w.ok(&args));
    assert!(!out.contains(bar), "{out}");
}

/// The id of block 1 of the mini game loaded, and the index of its top prize (one per block).
fn block_1_and_its_top_prize(owner: &mut Client) -> (i64, i32) {
    let block_id: i64 = owner
        .query_one("SELECT block_id FROM blocks WHERE block = 1", &[])
        .expect("block")
        .get(0);
    let top: i32 = owner
        .query_one(
            "SELECT min(idx) FROM tickets WHERE block_id = $1 AND prize_cents = 200000",
            &[&block_id],
        )
        .expect("a top prize")
        .get::<_, Option<i32>>(0)
        .expect("block 1 has a top prize");
    (block_id, top)
}
