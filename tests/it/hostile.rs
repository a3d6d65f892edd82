//! Hostile input and hostile surroundings: a closed or full standard output, game definitions
//! at the limits of the number types or with lists beyond their maximums, block files that are
//! huge, have no line ends, sit in the wrong folder or carry terminal escapes, misspelt
//! mechanic settings. Each gets a clear message and a documented exit status, never a panic,
//! and nothing is read without a bound; the largest definition allowed starts at once, and a
//! signal stops its start.

use crate::common;
use common::*;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Emits block 1 of the mini game (2 000 tickets) with the fixed seed and a keygen key, into
/// `emissions/mini-ruche/2/e<emission>`; returns that folder.
fn emit_mini(w: &Workdir, emission: &str) -> PathBuf {
    if !w.path("keys/signing-key.pem").exists() {
        w.ok(&["keygen", "--out", "keys"]);
    }
    let game = data("mini-ruche.toml");
    w.ok(&[
        "emit",
        "--game",
        &game,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--emission",
        emission,
        "--quiet",
    ]);
    w.path(&format!(
        "emissions/mini-ruche/2/e{:04}",
        emission.parse::<u32>().unwrap()
    ))
}

/// The test game's definition with `from` replaced by `to` (which must be there), written to
/// `name` in the work folder; returns its path.
fn variant(w: &Workdir, name: &str, replacements: &[(&str, &str)]) -> String {
    variant_of(w, "mini-ruche.toml", name, replacements)
}

/// [`variant`] of the test definition `base` (`mini-maxi.toml`...).
fn variant_of(w: &Workdir, base: &str, name: &str, replacements: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(data(base)).unwrap();
    for (from, to) in replacements {
        assert!(text.contains(from), "{from} is not in {base}");
        text = text.replacen(from, to, 1);
    }
    let path = w.path(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A ticket line as emit writes it, with its hash, without the line end.
fn ticket(serial: &str, prize: &str, layout: &str) -> String {
    let body = format!("{serial},{prize},{layout}");
    format!("{body},{}", hex::encode(Sha256::digest(body.as_bytes())))
}

/// Requires exit status `code`, no panic, and `needle` in what was said.
#[track_caller]
fn said(out: &Output, code: i32, needle: &str) -> String {
    let text = text(out);
    assert_eq!(out.status.code(), Some(code), "{text}");
    assert!(
        !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
        "{text}"
    );
    assert!(text.contains(needle), "expected {needle:?} in:\n{text}");
    text
}

// ---- defect 7: standard output closed or full ----

/// Runs the binary with a standard output whose reader is already gone: every write to it
/// fails with a broken pipe, as in `games | head -1` once `head` has exited.
fn run_with_closed_stdout(w: &Workdir, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    w.command(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_standard_output_ends_quietly_with_status_0() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let game = data("mini-ruche.toml");
    let runs: Vec<Vec<&str>> = vec![
        vec!["games"],
        vec!["verify", "--game", &game, csv.to_str().unwrap()],
        vec!["verify", "--game", &game, folder.to_str().unwrap()],
        vec![
            "emit",
            "--game",
            &game,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--first-block",
            "2",
        ],
        // seal prints once the seal is written; run again, it finds the emission sealed.
        seal_args(&game, "2", folder.to_str().unwrap()),
        seal_args(&game, "2", folder.to_str().unwrap()),
        // clap's own output goes the same way.
        vec!["--help"],
        vec!["--version"],
        vec!["emit", "--help"],
    ];
    for args in runs {
        let out = run_with_closed_stdout(&w, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("error"),
            "{args:?}: {err}"
        );
    }
    // The block was made and the emission sealed all the same.
    assert!(folder.join("block-00002.manifest.json").exists());
    assert!(folder.join("emission.seal.json").exists());
    // A verifier's status is its verdict, whoever reads its lines: with the reader gone, a
    // block that fails still ends with 1 (`verify | head -1` ended with 0: the broken pipe
    // stopped the run before the verdict).
    let mut bytes = read(&csv);
    let at = bytes.len() - 10;
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(&csv, bytes).unwrap();
    for args in [
        vec!["verify", "--game", &game, csv.to_str().unwrap()],
        vec!["verify", "--game", &game, folder.to_str().unwrap()],
    ] {
        let out = run_with_closed_stdout(&w, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `man --out DIR` writes every page or none: a page's path that is refused (a FIFO there)
/// is found before any page is written (it wrote the pages before the refused one, 24 of 25).
#[test]
fn man_out_writes_every_page_or_none() {
    let w = Workdir::new();
    std::fs::create_dir(w.path("man")).unwrap();
    mkfifo(&w.path("man/emission-factory.1"));
    let out = run_within(
        &w,
        &["man", "--out", "man", "-q"],
        std::time::Duration::from_secs(60),
    );
    said(&out, 2, "is a FIFO");
    let names: Vec<String> = std::fs::read_dir(w.path("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["emission-factory.1".to_string()],
        "pages were written"
    );
    std::fs::remove_file(w.path("man/emission-factory.1")).unwrap();
    let out = run_within(
        &w,
        &["man", "--out", "man", "-q"],
        std::time::Duration::from_secs(60),
    );
    said(&out, 0, "");
    assert!(std::fs::read_dir(w.path("man")).unwrap().count() > 10);
}

/// A FIFO or a link at the audit log's name is refused before any block is made (emit made
/// every block, then failed on the log, leaving blocks no log line records).
#[test]
fn emit_refuses_a_log_it_cannot_append_to_before_making_a_block() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let log = folder.join("emission.log.jsonl");
    let kept = read(&log);
    let game = data("mini-ruche.toml");
    let args = [
        "emit",
        "--game",
        &game,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--first-block",
        "2",
        "--quiet",
    ];
    std::fs::remove_file(&log).unwrap();
    mkfifo(&log);
    let out = run_within(&w, &args, std::time::Duration::from_secs(60));
    said(&out, 2, "is a FIFO");
    said(&out, 2, "before any block is made");
    assert!(!folder.join("block-00002.csv").exists(), "a block was made");
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink("elsewhere.jsonl", &log).unwrap();
    let out = run_within(&w, &args, std::time::Duration::from_secs(60));
    said(&out, 2, "symbolic link");
    assert!(!folder.join("block-00002.csv").exists(), "a block was made");
    std::fs::remove_file(&log).unwrap();
    std::fs::write(&log, kept).unwrap();
    said(
        &run_within(&w, &args, std::time::Duration::from_secs(60)),
        0,
        "",
    );
    assert!(folder.join("block-00002.csv").exists());
}

/// `seal` of the emission in `folder` with the keygen key, planned for `blocks` blocks.
fn seal_args<'a>(game: &'a str, blocks: &'a str, folder: &'a str) -> Vec<&'a str> {
    vec![
        "seal",
        "--game",
        game,
        "--blocks",
        blocks,
        "--signing-key",
        "keys/signing-key.pem",
        folder,
    ]
}

fn run_with_full_stdout(w: &Workdir, args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    w.command(args)
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_full_standard_output_is_an_error_with_status_2() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    for args in [
        vec!["games"],
        vec!["verify", "--game", &game, folder.to_str().unwrap()],
    ] {
        let out = run_with_full_stdout(&w, &args);
        said(
            &out,
            2,
            "error: cannot write to standard output: No space left on device",
        );
    }
    // emit writes the block, then cannot print its summary: still an error, which says that
    // the block is there.
    let out = run_with_full_stdout(
        &w,
        &[
            "emit",
            "--game",
            &game,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--first-block",
            "2",
        ],
    );
    let text = said(&out, 2, "error: cannot write to standard output");
    assert!(text.contains("were written"), "{text}");
    assert!(folder.join("block-00002.manifest.json").exists());
    // seal writes the seal, then cannot say so: an error that says the seal is written.
    let out = run_with_full_stdout(&w, &seal_args(&game, "2", folder.to_str().unwrap()));
    let text = said(
        &out,
        2,
        "error: cannot write to standard output: No space left on device",
    );
    assert!(text.contains("was sealed"), "{text}");
    assert!(folder.join("emission.seal.json").exists());
    let out = run_with_full_stdout(&w, &seal_args(&game, "2", folder.to_str().unwrap()));
    said(
        &out,
        2,
        "error: cannot write to standard output: No space left on device",
    );
    // The help and the version, as `cat` would end on a full disk (clap drops the error).
    for args in [vec!["--help"], vec!["--version"], vec!["emit", "--help"]] {
        let out = run_with_full_stdout(&w, &args);
        let text = said(
            &out,
            2,
            "error: cannot write to standard output: No space left on device",
        );
        assert!(out.stdout.is_empty(), "{args:?}: {text}");
    }
    // A real usage error keeps clap's status 2 and its message on standard error.
    let out = run_with_full_stdout(&w, &["emit", "--no-such-option"]);
    said(&out, 2, "unexpected argument '--no-such-option'");
}

/// A database of its own on the PostgreSQL cluster of DATABASE_URL (tests/pg/start.sh, which
/// .ci/run starts), dropped at the end; `None` with a line saying so where no cluster is
/// configured, a failure in CI.
#[cfg(feature = "load")]
struct Database {
    admin_url: String,
    name: String,
    url: String,
}

#[cfg(feature = "load")]
impl Database {
    fn new() -> Option<Database> {
        let Ok(admin_url) = std::env::var("DATABASE_URL") else {
            cannot_run(
                "DATABASE_URL is not set (.ci/run starts a cluster; or eval \"$(tests/pg/start.sh --fast)\")",
            );
            return None;
        };
        let mut random = [0u8; 6];
        getrandom::fill(&mut random).expect("random bytes");
        let name = format!("ef_hostile_{}", hex::encode(random));
        postgres::Client::connect(&admin_url, postgres::NoTls)
            .expect("connect to DATABASE_URL")
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create the test database");
        // The database replaced in either form libpq reads.
        let url = match admin_url.split_once("://") {
            Some((scheme, rest)) => {
                let (authority, path_query) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                let query = path_query.find('?').map_or("", |i| &path_query[i..]);
                format!("{scheme}://{authority}/{name}{query}")
            }
            None => format!("{admin_url} dbname={name}"),
        };
        Some(Database {
            admin_url,
            name,
            url,
        })
    }

    /// The numbers of the blocks loaded.
    fn blocks(&self) -> Vec<i32> {
        postgres::Client::connect(&self.url, postgres::NoTls)
            .expect("connect to the test database")
            .query("SELECT block FROM blocks ORDER BY block", &[])
            .expect("list blocks")
            .iter()
            .map(|r| r.get(0))
            .collect()
    }
}

#[cfg(feature = "load")]
impl Drop for Database {
    fn drop(&mut self) {
        if let Ok(mut admin) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// `load` prints a line per block after committing it: a closed standard output does not stop
/// the loading (status 0 once every block is in), a full one is an error that says what was
/// committed.
#[test]
#[cfg(feature = "load")]
fn load_on_a_closed_or_full_standard_output_commits_and_says_so() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    w.ok(&[
        "emit",
        "--game",
        &game,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--first-block",
        "2",
        "--quiet",
    ]);
    let load = |db: &Database| {
        vec![
            "load".to_string(),
            "--database-url".into(),
            db.url.clone(),
            "--public-key".into(),
            "keys/public-key.pem".into(),
            "--game".into(),
            game.clone(),
            "--allow-test".into(),
            folder.display().to_string(),
        ]
    };
    let Some(db) = Database::new() else { return };
    let args = load(&db);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_with_closed_stdout(&w, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
    assert_eq!(db.blocks(), vec![1, 2]);

    let Some(db) = Database::new() else { return };
    let args = load(&db);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_with_full_stdout(&w, &args);
    let text = said(
        &out,
        2,
        "error: cannot write to standard output: No space left on device",
    );
    assert!(
        text.contains("2 block(s) of 2 loaded and committed"),
        "{text}"
    );
    assert_eq!(db.blocks(), vec![1, 2]);
}

// ---- issue 19, item 5: a lock that cannot be taken or released ----

/// True if strace can trace here; otherwise [`cannot_run`] (a failure under CI).
fn have_strace() -> bool {
    require_tool(
        "strace",
        &["-qq", "-o", "/dev/null", "true"],
        "apt-get install strace; .ci/run installs it",
    )
}

/// Runs the binary under strace with the `n`-th `flock` of each thread failing with EIO
/// (within a time limit: a wait that never ends is a failure); its output, and whether strace
/// says a call was failed.
fn with_failing_flock(w: &Workdir, args: &[&str], n: u32) -> (Output, bool) {
    let log = w.path(&format!("strace-flock-{n}.log"));
    let out = std::process::Command::new("timeout")
        .current_dir(w.dir.path())
        .args(["120", "strace", "-f", "-qq", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=flock",
            "-e",
            &format!("inject=flock:error=EIO:when={n}"),
        ])
        .arg(env!("CARGO_BIN_EXE_emission-factory"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("timeout and strace run");
    let traced = std::fs::read_to_string(&log).unwrap_or_default();
    let injected = traced
        .lines()
        .any(|l| l.contains("flock(") && l.contains("(INJECTED)"));
    (out, injected)
}

/// Files under `dir` (at any depth) whose name ends with `.tmp`.
fn temporaries_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(path);
            } else if path.to_string_lossy().ends_with(".tmp") {
                found.push(path);
            }
        }
    }
    found
}

/// A run whose `flock` failed: status 2 with an error naming the lock, no panic, no wait.
#[track_caller]
fn refused_on_the_lock(out: &Output, context: &str) {
    let text = text(out);
    assert_eq!(out.status.code(), Some(2), "{context}: {text}");
    assert!(
        !text.contains("panicked") && !text.contains("RUST_BACKTRACE"),
        "{context}: {text}"
    );
    assert!(
        text.contains("error: ") && text.contains("lock") && text.contains("Input/output error"),
        "{context}: the error does not say which lock failed: {text}"
    );
}

/// After a failed run: no temporary file, and what is published verifies (a block, a seal).
#[track_caller]
/// `interrupted`: the run was cut before it could seal a complete emission, which `verify` then
/// accepts only with `--allow-unsealed` (issue 20: a complete emission is sealed).
fn nothing_half_written(w: &Workdir, folder: &Path, context: &str, interrupted: bool) {
    assert!(
        temporaries_under(w.dir.path()).is_empty(),
        "{context}: left {:?}",
        temporaries_under(w.dir.path())
    );
    if folder.join("block-00001.manifest.json").exists() {
        let game = data("mini-ruche.toml");
        let mut args = vec![
            "verify",
            "--game",
            &game,
            "--public-key",
            "keys/public-key.pem",
        ];
        if interrupted {
            args.push("--allow-unsealed");
        }
        args.push(folder.to_str().unwrap());
        let out = w.run(&args);
        let said = text(&out);
        // A run whose lock failed after it wrote the record and before its audit-log line
        // leaves a record with no log: verify names exactly that, and the fix (run it again,
        // which the callers do and then require OK).
        let problems: Vec<&str> = said.lines().filter(|l| l.starts_with("  - ")).collect();
        let unlogged = interrupted
            && out.status.code() == Some(1)
            && problems.len() == 1
            && problems[0]
                .contains("emission.log.jsonl: missing or empty, though the record is there")
            && problems[0].contains("run it again with the emission's key");
        assert!(
            out.status.code() == Some(0) || unlogged,
            "{context}: what is published does not verify: {said}"
        );
    }
}

#[test]
fn a_lock_that_cannot_be_taken_or_released_is_an_error_never_a_panic() {
    if !have_strace() {
        return;
    }
    let game = data("mini-ruche.toml");
    let emit = [
        "emit",
        "--game",
        &game,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--emission-blocks",
        "1",
        "--quiet",
    ];
    let folder_name = "emissions/mini-ruche/2/e0001";
    // emit: the emission lock (cmd, engine, audit log, seal at the end) and the block's.
    let mut injected_runs = 0;
    for n in 1..=30 {
        let w = Workdir::new();
        w.ok(&["keygen", "--out", "keys"]);
        let context = format!("emit, flock #{n} fails");
        let (out, injected) = with_failing_flock(&w, &emit, n);
        if !injected {
            // Past the last flock of the run: it must have succeeded.
            assert_eq!(out.status.code(), Some(0), "{context}: {}", text(&out));
            break;
        }
        injected_runs += 1;
        refused_on_the_lock(&out, &context);
        let folder = w.path(folder_name);
        nothing_half_written(&w, &folder, &context, true);
        // Running again finishes the job: no lock is left taken.
        w.ok(&emit);
        nothing_half_written(&w, &folder, &context, false);
        assert!(folder.join("emission.seal.json").exists(), "{context}");
    }
    // strace counts each thread's calls apart: the main thread takes and releases the emission
    // lock three times (the run's files, the audit log, the seal), the engine's thread the
    // emission lock and the block's.
    assert!(
        injected_runs >= 6,
        "only {injected_runs} flock calls failed"
    );

    // seal: the emission lock, taken and released.
    let mut injected_runs = 0;
    for n in 1..=10 {
        let w = Workdir::new();
        let folder = emit_mini(&w, "1");
        let context = format!("seal, flock #{n} fails");
        let seal = seal_args(&game, "1", folder.to_str().unwrap());
        let (out, injected) = with_failing_flock(&w, &seal, n);
        if !injected {
            assert_eq!(out.status.code(), Some(0), "{context}: {}", text(&out));
            break;
        }
        injected_runs += 1;
        refused_on_the_lock(&out, &context);
        nothing_half_written(&w, &folder, &context, false);
        w.ok(&seal);
        nothing_half_written(&w, &folder, &context, false);
    }
    assert!(
        injected_runs >= 2,
        "only {injected_runs} flock calls failed"
    );
}

// ---- defect 7: numbers at the limits of their types ----

#[test]
fn game_definitions_beyond_the_limits_are_refused_naming_the_entry() {
    let w = Workdir::new();
    // Decimal's largest value, as a prize amount (its count × amount overflows Decimal), as a
    // price, and as a layout amount.
    let max = "79228162514264337593543950335";
    let amount = variant(
        &w,
        "amount.toml",
        &[(
            "{ count = 1, amount = \"2000\" }",
            &format!("{{ count = 1, amount = \"{max}\" }}"),
        )],
    );
    let price = variant(
        &w,
        "price.toml",
        &[("price = \"2\"", &format!("price = \"{max}\""))],
    );
    let row = variant(&w, "row.toml", &[("\"20000\"]", &format!("\"{max}\"]"))]);
    // Counts whose sum wraps around 2^64 to the stated 303 winners, with the total that
    // the (unwrapped) rows add up to: the totals check alone does not see it.
    let huge = i64::MAX.to_string();
    let total = (2100u128 * i64::MAX as u128 + 1100 + 400 + 300).to_string();
    let wraps = variant(
        &w,
        "wraps.toml",
        &[
            (
                "{ count = 1, amount = \"2000\" }",
                &format!("{{ count = {huge}, amount = \"2000\" }}"),
            ),
            (
                "{ count = 2, amount = \"100\" }",
                &format!("{{ count = {huge}, amount = \"100\" }}"),
            ),
            (
                "{ count = 50, amount = \"20\" }",
                "{ count = 55, amount = \"20\" }",
            ),
            ("total = \"3900\"", &format!("total = \"{total}\"")),
        ],
    );
    for (file, needle) in [
        (&amount, "amount.toml, stakes[price=2].prizes[0]: amount"),
        (&price, "price.toml, stakes[0].price"),
        (&row, "row.toml, stakes[price=2].layout: row_amounts[9]"),
        (
            &wraps,
            "wraps.toml, stakes[price=2].prizes[0]: count 9223372036854775807",
        ),
    ] {
        let out = w.run(&["emit", "--game", file, "--seed", SEED, "--out", "limits"]);
        let text = said(&out, 2, needle);
        assert!(text.contains("at most"), "{text}");
    }
    assert!(!w.path("limits/mini-ruche").exists(), "no block is made");
}

#[test]
fn a_line_with_huge_winning_rows_is_a_reported_problem() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // Two winning rows showing the largest amount the definition allows, on ticket 0.
    let rows = |amount: &str| {
        format!("{amount}:PPPA/{amount}:PPPAB/2:FFFFFF/2:FFFFFFF/2:FFFFFF/2:FFFFF/2:FFFF")
    };
    let max = "79228162514264337593543950335";
    let at_max = variant(&w, "max.toml", &[("\"20000\"]", &format!("\"{max}\"]"))]);
    lines[1] = ticket("mini-ruche-200-0001-00001-0000000", "0", &rows(max));
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    // A definition whose amounts could overflow is refused before any line is read.
    let out = w.run(&["verify", "--game", &at_max, csv.to_str().unwrap()]);
    said(&out, 2, "max.toml, stakes[price=2].layout: row_amounts[9]");
    // At the limit, the sum of the rows is exact and named.
    let limit = "1000000000";
    let at_limit = variant(
        &w,
        "limit.toml",
        &[("\"20000\"]", &format!("\"{limit}\"]"))],
    );
    lines[1] = ticket("mini-ruche-200-0001-00001-0000000", "0", &rows(limit));
    // The new line may be longer than ticket 0's was, and a file larger than its manifest
    // says is not read at all: drop the last ticket so that the file stays within it.
    lines.pop();
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let out = w.run(&["verify", "--game", &at_limit, csv.to_str().unwrap()]);
    said(
        &out,
        1,
        "line 2 (mini-ruche-200-0001-00001-0000000): the layout wins 2000000000 € but the prize column says 0 €",
    );
}

// ---- defect 8: sizes bounded before reading ----

/// The CSV size the manifest of `folder`'s block 1 states.
fn manifest_bytes(folder: &Path) -> u64 {
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&folder.join("block-00001.manifest.json"))).unwrap();
    manifest["csv"]["bytes"].as_u64().unwrap()
}

#[test]
fn a_file_larger_than_its_manifest_says_is_refused_unread() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let expected = manifest_bytes(&folder);
    // 1 GiB without a single line end (sparse: no disk is used).
    let file = std::fs::OpenOptions::new().write(true).open(&csv).unwrap();
    file.set_len(1 << 30).unwrap();
    drop(file);
    let out = w.run(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        csv.to_str().unwrap(),
    ]);
    let text = said(
        &out,
        1,
        &format!("1073741824 bytes, more than the {expected} the manifest says: not read"),
    );
    // Refused on its size alone: no line of it was looked at.
    assert!(!text.contains(" line "), "{text}");
}

#[test]
fn a_first_line_longer_than_any_ticket_line_is_refused_at_that_line() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    // Exactly the size the manifest states, and not a line end in it.
    let size = manifest_bytes(&folder) as usize;
    std::fs::write(&csv, vec![b'x'; size]).unwrap();
    let out = w.run(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        csv.to_str().unwrap(),
    ]);
    let text = said(
        &out,
        1,
        "line 1: longer than the longest line of this game (",
    );
    assert!(
        text.contains("bytes); the rest of the file is not read"),
        "{text}"
    );
    // Nothing of the line is echoed.
    assert!(
        !text.contains(
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        ),
        "{text}"
    );
}

/// A line somewhat longer than any ticket line is refused on its own, and the rest of the
/// file is still read, wherever the line sits. (Verify used to read in pieces of 8 MiB and
/// stop at a partial line longer than a ticket line at the end of a piece: the same line
/// stopped the reading when it straddled byte 8 MiB, and did not elsewhere.)
#[test]
fn a_long_line_across_the_8_mib_mark_is_refused_alone_and_reading_goes_on() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    // 60 000 tickets: about 9 MB, past the 8 MiB mark.
    let game = variant(
        &w,
        "big-mini.toml",
        &[("block_size = 2000", "block_size = 60000")],
    );
    w.ok(&[
        "emit",
        "--game",
        &game,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--quiet",
    ]);
    let folder = w.path("emissions/mini-ruche/2/e0001");
    let csv = folder.join("block-00001.csv");
    let original = read(&csv);
    let mark = 8 << 20;
    assert!(original.len() > mark + 1000);
    // The line that starts 500 to 700 bytes before the mark becomes 'x's up to 10 bytes past it.
    let mut start = 0;
    for end in original
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i)
    {
        if end + 1 > mark - 500 {
            break;
        }
        start = end + 1;
    }
    let end = start + original[start..].iter().position(|&b| b == b'\n').unwrap();
    let mut bytes = original[..start].to_vec();
    bytes.extend(std::iter::repeat_n(b'x', mark + 10 - start));
    bytes.extend_from_slice(&original[end..]);
    // And the last ticket's hash is changed: seen only if the reading went on to the end.
    let last_hash = bytes.len() - 2;
    bytes[last_hash] = if bytes[last_hash] == b'0' { b'1' } else { b'0' };
    std::fs::write(&csv, &bytes).unwrap();
    // The manifest states the new size, so that the whole file is read (its signature fails).
    let manifest = folder.join("block-00001.manifest.json");
    let signed = std::fs::read_to_string(&manifest).unwrap();
    let stated = format!("\"bytes\": {}", original.len());
    assert!(signed.contains(&stated));
    std::fs::write(
        &manifest,
        signed.replace(&stated, &format!("\"bytes\": {}", bytes.len())),
    )
    .unwrap();
    let line = original[..start].iter().filter(|&&b| b == b'\n').count() + 1;
    let out = w.run(&["verify", "--game", &game, csv.to_str().unwrap()]);
    let text = said(
        &out,
        1,
        &format!(
            "line {line} (mini-ruche-200-0001-00001-{:07}): {} bytes, longer than the longest ticket line of this game",
            line - 2,
            mark + 10 - start
        ),
    );
    assert!(!text.contains("the rest of the file is not read"), "{text}");
    assert!(
        text.contains("line 60001 (mini-ruche-200-0001-00001-0059999): sha256"),
        "{text}"
    );
    assert!(!text.contains("tickets, a block of"), "{text}");
}

#[test]
fn oversized_manifest_signature_and_key_files_are_refused_unread() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let game = data("mini-ruche.toml");
    let grow = |name: &str, size: u64| {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(folder.join(name))
            .unwrap();
        file.set_len(size).unwrap();
    };
    let original: Vec<(String, Vec<u8>)> = [
        "block-00001.manifest.json",
        "block-00001.manifest.json.sig",
        "emission.pub.pem",
    ]
    .iter()
    .map(|n| (n.to_string(), read(&folder.join(n))))
    .collect();
    let restore = || {
        for (name, bytes) in &original {
            std::fs::write(folder.join(name), bytes).unwrap();
        }
    };
    grow("block-00001.manifest.json", 1 << 30);
    said(
        &w.run(&["verify", "--game", &game, csv.to_str().unwrap()]),
        1,
        "block-00001.manifest.json: 1073741824 bytes, more than the 1048576 bytes a manifest may hold: not read",
    );
    restore();
    grow("block-00001.manifest.json.sig", 1 << 30);
    said(
        &w.run(&["verify", "--game", &game, csv.to_str().unwrap()]),
        1,
        "block-00001.manifest.json.sig: 1073741824 bytes, more than the 64 bytes a signature may hold: not read",
    );
    restore();
    grow("emission.pub.pem", 1 << 30);
    said(
        &w.run(&["verify", "--game", &game, csv.to_str().unwrap()]),
        1,
        "1073741824 bytes, more than the 65536 bytes a key file may hold: not read",
    );
    restore();
    w.ok(&["verify", "--game", &game, csv.to_str().unwrap()]);
}

// ---- defect 9: a block's coordinates are those of its place ----

/// Copies the block files and public key of `from` into `to`.
fn copy_block(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for name in [
        "block-00001.csv",
        "block-00001.manifest.json",
        "block-00001.manifest.json.sig",
        "emission.pub.pem",
    ] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
}

#[test]
fn a_block_in_another_place_than_its_coordinates_fails() {
    let w = Workdir::new();
    let three = emit_mini(&w, "3");
    let game = data("mini-ruche.toml");
    // It verifies where it was made.
    w.ok(&["verify", "--game", &game, three.to_str().unwrap()]);
    for (folder, needle) in [
        (
            "emissions/mini-ruche/2/e0001",
            "the manifest is for emission 3 (folder e0003), but the block is in folder 'e0001'",
        ),
        (
            "emissions/mini-ruche/3/e0003",
            "the manifest is for stake 2 (folder 2), but the block is in folder '3'",
        ),
        (
            "emissions/other-game/2/e0003",
            "the manifest is for game mini-ruche (folder mini-ruche), but the block is in folder 'other-game'",
        ),
        (
            "flat",
            "the manifest is for emission 3 (folder e0003), but the block is in folder 'flat'",
        ),
    ] {
        let to = w.path(folder);
        copy_block(&three, &to);
        let out = w.run(&["verify", "--game", &game, to.to_str().unwrap()]);
        said(&out, 1, needle);
        std::fs::remove_dir_all(&to).unwrap();
    }
}

// ---- defect 10: what is shown of a file is escaped and short ----

/// Requires every line said to be short and free of control characters.
#[track_caller]
fn tame(out: &Output) {
    for stream in [&out.stdout, &out.stderr] {
        for line in stream.split(|&b| b == b'\n') {
            assert!(
                line.len() <= 600,
                "a line of {} bytes: {}",
                line.len(),
                String::from_utf8_lossy(&line[..600])
            );
            assert!(
                !line.iter().any(|&b| b < 0x20 || b == 0x7f),
                "a control character in {:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}

#[test]
fn echoes_of_file_content_are_escaped_and_short() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // A serial that would turn the terminal red and set its title.
    lines[1] = lines[1].replacen(
        "mini-ruche-200",
        "mini-ruche-200\u{1b}[31mRED\u{1b}]0;pwned\u{7}",
        1,
    );
    // A hash field of 150 characters with escapes in it.
    let mut fields: Vec<String> = lines[2].split(',').map(String::from).collect();
    fields[3] = format!("{}\u{1b}[2J{}", "z".repeat(100), "y".repeat(50));
    lines[2] = fields.join(",");
    // A prize field of 300 000 bytes: the file stays within what a block can hold.
    let original_line = lines[3].clone();
    let mut fields: Vec<String> = lines[3].split(',').map(String::from).collect();
    fields[1] = "9".repeat(300_000);
    lines[3] = fields.join(",");
    // The manifest states the new size, so that the lines are read (its signature fails).
    let expected = manifest_bytes(&folder);
    let manifest = folder.join("block-00001.manifest.json");
    let signed = std::fs::read_to_string(&manifest).unwrap();
    let write = |lines: &[String], stated: Option<u64>| {
        let bytes = lines.join("\n") + "\n";
        std::fs::write(&csv, &bytes).unwrap();
        let m = signed.replace(
            &format!("\"bytes\": {expected}"),
            &format!("\"bytes\": {}", stated.unwrap_or(bytes.len() as u64)),
        );
        std::fs::write(&manifest, m).unwrap();
    };
    write(&lines, None);
    let verify = || {
        w.run(&[
            "verify",
            "--game",
            &data("mini-ruche.toml"),
            csv.to_str().unwrap(),
        ])
    };
    let out = verify();
    let report = said(&out, 1, "line 2 (mini-ruche-200-0001-00001-0000000): serial 'mini-ruche-200\\u{1b}[31mRED\\u{1b}]0;pwned\\u{7}-0001-00001-0000000'");
    assert!(
        report.contains("line 3 (mini-ruche-200-0001-00001-0000001): sha256 'zzzzzzzz"),
        "{report}"
    );
    assert!(report.contains("…' (154 bytes)"), "{report}");
    assert!(
        report.contains("line 4 (mini-ruche-200-0001-00001-0000002): 300"),
        "{report}"
    );
    assert!(
        report.contains("bytes, longer than the longest ticket line of this game"),
        "{report}"
    );
    tame(&out);
    // A prize field of 50 MB: refused on the file's size, whatever the manifest states.
    let mut fields: Vec<String> = original_line.split(',').map(String::from).collect();
    fields[1] = "9".repeat(50 << 20);
    lines[3] = fields.join(",");
    write(&lines, Some(expected));
    let out = verify();
    said(
        &out,
        1,
        &format!("bytes, more than the {expected} the manifest says: not read"),
    );
    tame(&out);
    write(&lines, None);
    let out = verify();
    said(&out, 1, "more than a block of mini-ruche can");
    tame(&out);

    // The game loader echoes values the same way.
    let long = format!("\\u001b[31m{}", "7".repeat(50_000));
    let bad = variant(
        &w,
        "echo.toml",
        &[(
            "{ count = 1, amount = \"2000\" }",
            &format!("{{ count = 1, amount = \"{long}\" }}"),
        )],
    );
    let out = w.run(&["verify", "--game", &bad, csv.to_str().unwrap()]);
    said(
        &out,
        2,
        "echo.toml, stakes[price=2].prizes[0]: amount '\\u{1b}[31m777",
    );
    tame(&out);
    let bad = variant(
        &w,
        "echo2.toml",
        &[("id = \"mini-ruche\"", &format!("id = \"{long}\""))],
    );
    let out = w.run(&["verify", "--game", &bad, csv.to_str().unwrap()]);
    said(&out, 2, "echo2.toml, id: '\\u{1b}[31m777");
    tame(&out);
}

// ---- issue 19, item 6: every string from a file is escaped when echoed ----

/// What turns a terminal red, rings it, or reorders what it shows: ESC, BEL, the bidirectional
/// embeddings, overrides and isolates, and the direction marks.
const TERMINAL_CONTROLS: [char; 13] = [
    '\u{1b}', '\u{7}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}',
    '\u{2067}', '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}',
];

/// Requires `bytes` (what `what` wrote) to hold none of [`TERMINAL_CONTROLS`].
#[track_caller]
fn no_terminal_control(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for c in TERMINAL_CONTROLS {
        assert!(
            !text.contains(c),
            "{what} wrote U+{:04X} raw:\n{}",
            c as u32,
            text.escape_debug()
        );
    }
}

#[track_caller]
fn no_terminal_control_said(what: &str, out: &Output) {
    no_terminal_control(&format!("{what} (stdout)"), &out.stdout);
    no_terminal_control(&format!("{what} (stderr)"), &out.stderr);
}

#[test]
fn names_and_fields_from_files_never_reach_the_terminal_raw() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    // A definition named with an escape sequence, a bell, a right-to-left override, an isolate
    // and direction marks (TOML escapes: the file itself is plain text).
    let game = variant(
        &w,
        "hostile-name.toml",
        &[(
            "name = \"Mini ruche (test)\"",
            "name = \"Mini \\u001b[31mred\\u0007 \\u202eesrever\\u202c \\u2066iso\\u2069 \\u200emarks\\u200f\"",
        )],
    );
    let mut runs: Vec<(String, Output)> = Vec::new();
    let mut run = |what: &str, args: &[&str], code: i32| {
        let out = w.run(args);
        assert_eq!(out.status.code(), Some(code), "{what}: {}", text(&out));
        runs.push((what.to_string(), out));
    };
    let folder = "emissions/mini-ruche/2/e0001";
    let csv = format!("{folder}/block-00001.csv");
    run(
        "emit",
        &[
            "emit",
            "--game",
            &game,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
        ],
        0,
    );
    run("verify", &["verify", "--game", &game, folder], 0);
    run(
        "show",
        &[
            "show", &csv, "--ticket", "0", "--game", &game, "--svg", "t.svg",
        ],
        0,
    );
    run(
        "report",
        &[
            "report", "--game", &game, "--html", "r.html", "--json", "r.json", "--quiet", folder,
        ],
        0,
    );
    run(
        "seal",
        &[
            "seal",
            "--game",
            &game,
            "--blocks",
            "1",
            "--signing-key",
            "keys/signing-key.pem",
            folder,
        ],
        0,
    );
    run("verify, sealed", &["verify", "--game", &game, folder], 0);
    let proved = w.ok(&[
        "prove",
        &csv,
        "--ticket",
        "0",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
    ]);
    // The proof is JSON: the control characters are escaped by JSON's rules.
    assert!(!proved.stdout.contains(&0x1b) && !proved.stdout.contains(&0x07));
    let proof: serde_json::Value = serde_json::from_slice(&proved.stdout).unwrap();
    std::fs::write(w.path("proof.json"), &proved.stdout).unwrap();
    let verify_proof = [
        "verify-proof",
        "proof.json",
        "--public-key",
        "keys/public-key.pem",
        "--game",
        &game,
    ];
    run("verify-proof", &verify_proof, 0);
    // Proofs whose fields carry them, refused field by field.
    let hostile = "\u{1b}[31m\u{7}\u{202e}\u{2066}\u{200f}";
    let mut changed = proof.clone();
    changed["line"] = format!("{}{hostile}", proof["line"].as_str().unwrap()).into();
    changed["signature"] = hostile.into();
    changed["audit_path"][0] = hostile.into();
    let mut format = proof.clone();
    format["format"] = hostile.into();
    let mut manifest = proof.clone();
    manifest["manifest"] = format!("{{\"game\": \"{hostile}\"").into();
    let mut manifest_field = proof.clone();
    manifest_field["manifest"] = proof["manifest"]
        .as_str()
        .unwrap()
        .replacen(
            "\"mini-ruche\"",
            &serde_json::to_string(hostile).unwrap(),
            1,
        )
        .into();
    for (what, p) in [
        ("a proof with a hostile line, signature and path", changed),
        ("a proof with a hostile format", format),
        ("a proof with a broken manifest", manifest),
        ("a proof with a hostile manifest field", manifest_field),
    ] {
        std::fs::write(w.path("proof.json"), serde_json::to_vec(&p).unwrap()).unwrap();
        run(what, &verify_proof, 1);
    }
    for (what, out) in &runs {
        no_terminal_control_said(what, out);
    }
    // In colour, `show` writes its own escape sequences, and only those: the name's are escaped.
    let coloured = w.ok(&[
        "show", &csv, "--ticket", "1", "--game", &game, "--color", "always",
    ]);
    let drawn = String::from_utf8_lossy(&coloured.stdout).into_owned();
    assert!(drawn.contains("\u{1b}["), "{drawn:?}");
    assert!(!drawn.contains("\u{1b}[31mred"), "{drawn:?}");
    let no_escape: Vec<char> = TERMINAL_CONTROLS[1..].to_vec();
    assert!(!drawn.contains(&no_escape[..]), "{drawn:?}");
    no_terminal_control("show --color always (stderr)", &coloured.stderr);
    // The name is there, escaped.
    let emitted = String::from_utf8_lossy(&runs[0].1.stdout).into_owned();
    assert!(
        emitted.contains("Mini \\u{1b}[31mred\\u{7} \\u{202e}esrever\\u{202c}"),
        "{emitted}"
    );
    // The files written are escaped by their own rules: HTML and SVG as visible escapes, JSON as
    // JSON escapes.
    for page in ["r.html", "t.svg"] {
        no_terminal_control(page, &std::fs::read(w.path(page)).unwrap());
    }
    let json = std::fs::read(w.path("r.json")).unwrap();
    assert!(!json.contains(&0x1b) && !json.contains(&0x07));
}

// ---- defect 11: misspelt settings, doubled causes ----

#[test]
fn a_misspelt_mechanic_setting_is_refused_naming_the_valid_ones() {
    let w = Workdir::new();
    let maxi = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("games/maxi-ruche-or.toml"),
    )
    .unwrap();
    // Each message names the file, the line of the misspelt key, and the valid keys.
    let cases: Vec<(String, &str)> = vec![
        (
            variant(&w, "honney.toml", &[("honey = [", "honney = [\"1\"]\nhoney = [")]),
            "honney.toml is malformed: line 21, column 1: unknown field `honney`, expected one of `row_amounts`, `honey`, `near_miss`",
        ),
        (
            variant(&w, "row.toml", &[("row_amounts = [", "row_amount = [\"2\"]\nrow_amounts = [")]),
            "row.toml is malformed: line 20, column 1: unknown field `row_amount`, expected one of `row_amounts`, `honey`, `near_miss`",
        ),
        (
            variant(&w, "pots.toml", &[("{ pots = 4, amount = \"2\" }", "{ pots = 4, amount = \"2\", amuont = \"3\" }")]),
            "pots.toml is malformed: line 22, column 29: unknown field `amuont`, expected `pots` or `amount`",
        ),
        (
            {
                let path = w.path("maxi.toml");
                std::fs::write(&path, maxi.replacen("bonus = [", "bee_amount = [\"2\"]\nbonus = [", 1)).unwrap();
                path.display().to_string()
            },
            "maxi.toml is malformed: line 47, column 1: unknown field `bee_amount`, expected one of `row_amounts`, `bee_amounts`, `bonus`, `near_miss`",
        ),
        (
            {
                let path = w.path("bonus.toml");
                std::fs::write(&path, maxi.replacen("{ bees = 4, amount = \"3\" }", "{ bees = 4, amount = \"3\", bee = 5 }", 1)).unwrap();
                path.display().to_string()
            },
            "bonus.toml is malformed: line 48, column 29: unknown field `bee`, expected `bees` or `amount`",
        ),
    ];
    for (file, needle) in cases {
        let out = w.run(&["verify", "--game", &file, "nowhere"]);
        said(&out, 2, needle);
    }
}

#[test]
fn every_cause_is_said_once() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    std::fs::create_dir(w.path("dir")).unwrap();
    let csv = folder.join("block-00001.csv");
    let csv = csv.to_str().unwrap();
    let mut runs: Vec<Vec<&str>> = vec![
        vec!["verify", "--game", "dir", csv],
        vec!["emit", "--game", "dir"],
        vec!["verify", "--game", &game, "--public-key", "dir", csv],
        vec!["verify", "--game", &game, "--seed-file", "dir", csv],
    ];
    // A folder named like a block file, inside an emission folder.
    let fake = w.path("emissions/mini-ruche/2/e0002/block-00001.csv");
    std::fs::create_dir_all(&fake).unwrap();
    let fake = fake.display().to_string();
    runs.push(vec!["verify", "--game", &game, &fake]);
    // A folder where the emission's public key or the manifest should be.
    let keyless = w.path("emissions/mini-ruche/2/e0003");
    let manifestless = w.path("emissions/mini-ruche/2/e0004");
    for (copy, replaced) in [
        (&keyless, "emission.pub.pem"),
        (&manifestless, "block-00001.manifest.json"),
    ] {
        std::fs::create_dir_all(copy).unwrap();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let from = entry.unwrap().path();
            std::fs::copy(&from, copy.join(from.file_name().unwrap())).unwrap();
        }
        std::fs::remove_file(copy.join(replaced)).unwrap();
        std::fs::create_dir(copy.join(replaced)).unwrap();
    }
    let keyless = keyless.join("block-00001.csv").display().to_string();
    let manifestless = manifestless.join("block-00001.csv").display().to_string();
    runs.push(vec!["verify", "--game", &game, &keyless]);
    runs.push(vec!["verify", "--game", &game, &manifestless]);
    for args in runs {
        let out = w.run(&args);
        let text = text(&out);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {text}");
        assert!(!text.contains("panicked"), "{text}");
        for line in text.lines() {
            assert!(
                line.matches("(os error").count() <= 1,
                "{args:?}: the cause is said twice: {line}"
            );
            let cause = line.rsplit(": ").next().unwrap_or_default();
            assert!(
                line.matches(cause).count() == 1 || cause.len() < 8,
                "{args:?}: '{cause}' is said twice: {line}"
            );
        }
    }
}

// ---- a prize the layouts cannot show: refused by emit before anything is written ----

#[test]
fn a_prize_no_layout_can_show_loads_but_emit_refuses_it_naming_the_stake() {
    let w = Workdir::new();
    let mut edits: Vec<(String, String)> = vec![(
        "row_amounts = [\"2\", \"4\", \"6\", \"10\", \"20\", \"30\", \"40\", \"100\", \"2000\", \"20000\"]".into(),
        "row_amounts = [\"20000\"]".into(),
    )];
    for (pots, amount) in [
        (4, 2),
        (5, 4),
        (6, 6),
        (7, 20),
        (8, 30),
        (9, 100),
        (10, 2000),
    ] {
        edits.push((
            format!("{{ pots = {pots}, amount = \"{amount}\" }}"),
            format!("{{ pots = {pots}, amount = \"20000\" }}"),
        ));
    }
    let edits: Vec<(&str, &str)> = edits
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let file = variant(&w, "unshowable.toml", &edits);
    // The definition loads (verify needs only the decoders)...
    let out = w.run(&["verify", "--game", &file, "nowhere"]);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!text.contains("cannot be made"), "{text}");
    // ...but emit refuses it, naming the stake and the prize.
    w.ok(&["keygen", "--out", "keys"]);
    let out = w.run(&[
        "emit",
        "--game",
        &file,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--out",
        "unshowable",
    ]);
    said(
        &out,
        2,
        "stakes[price=2].layout: the prize 2000 € cannot be made",
    );
    // ...before anything is written: no folder, no seed, no key.
    assert!(
        !w.path("unshowable").exists(),
        "emit wrote into its --out folder before refusing the definition"
    );
}

// ---- hardening, second pass (issue 19): output paths, walks, FIFOs, signals, relative paths ----

/// Runs the binary and waits at most `limit` for it (a hang is a failure: the child is killed).
fn run_within(w: &Workdir, args: &[&str], limit: std::time::Duration) -> Output {
    let child = w
        .command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    // Read in a thread (a full pipe must not stall the child), waited for with a limit.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!(
                "emission-factory {} did not end within {limit:?}",
                args.join(" ")
            );
        }
    }
}

/// Makes a FIFO at `path` (coreutils' mkfifo).
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}

/// True if the process may make device nodes (root); otherwise [`cannot_run`] for the device cases.
fn can_mknod(at: &Path) -> bool {
    let made = std::process::Command::new("mknod")
        .arg(at)
        .args(["c", "1", "7"]) // what /dev/full is
        .output();
    let ok = made.is_ok_and(|o| o.status.success());
    if !ok {
        cannot_run("the device cases cannot make a device node here (mknod needs root)");
    }
    ok
}

#[test]
fn output_paths_are_never_clobbered_and_dash_is_standard_output() {
    use std::os::unix::fs::FileTypeExt;
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let csv = folder.join("block-00001.csv");
    let csv = csv.to_str().unwrap();
    let game = data("mini-ruche.toml");
    let device = w.path("device");
    let have_device = can_mknod(&device);
    mkfifo(&w.path("fifo"));
    // A socket's file stays when its listener is gone.
    drop(std::os::unix::net::UnixListener::bind(w.path("socket")).unwrap());
    std::os::unix::fs::symlink(w.path("target"), w.path("link")).unwrap();
    // Each command that writes a file on request, with its option.
    let runs: Vec<(&str, Vec<&str>)> = vec![
        (
            "--json",
            vec!["report", "-q", "--game", &game, csv, "--json"],
        ),
        (
            "--html",
            vec!["report", "-q", "--game", &game, csv, "--html"],
        ),
        (
            "--svg",
            vec!["show", "--game", &game, csv, "--ticket", "3", "--svg"],
        ),
        (
            "--out",
            vec!["prove", "--game", &game, csv, "--ticket", "3", "--out"],
        ),
        (
            "lab --out",
            vec![
                "lab", "raw", "--game", "ruche-or", "--price", "2", "--seed", SEED, "--bytes",
                "16", "--out",
            ],
        ),
    ];
    for (option, args) in &runs {
        let with = |target: &str, force: bool| {
            let mut a = args.clone();
            a.push(target);
            if force {
                a.push("--force");
            }
            run_within(&w, &a, std::time::Duration::from_secs(60))
        };
        for force in [false, true] {
            if have_device {
                said(&with("device", force), 2, "is a character device");
                let kind = std::fs::symlink_metadata(&device).unwrap().file_type();
                assert!(
                    kind.is_char_device(),
                    "{option}: the device node was replaced"
                );
            }
            said(&with("fifo", force), 2, "is a FIFO");
            assert!(std::fs::symlink_metadata(w.path("fifo"))
                .unwrap()
                .file_type()
                .is_fifo());
            said(&with("socket", force), 2, "is a socket");
            assert!(std::fs::symlink_metadata(w.path("socket"))
                .unwrap()
                .file_type()
                .is_socket());
            said(&with("link", force), 2, "is a symbolic link");
            assert!(
                !w.path("target").exists(),
                "{option}: written through the link"
            );
        }
        // A new file is written; an existing one is replaced only with --force.
        let out = w.path("out.file");
        let _ = std::fs::remove_file(&out);
        assert_eq!(with("out.file", false).status.code(), Some(0), "{option}");
        std::fs::write(&out, b"mine").unwrap();
        said(&with("out.file", false), 2, "exists: give --force");
        assert_eq!(std::fs::read(&out).unwrap(), b"mine", "{option}");
        assert_eq!(with("out.file", true).status.code(), Some(0), "{option}");
        assert_ne!(std::fs::read(&out).unwrap(), b"mine", "{option}");
        // `-` is standard output: no file named `-`, and the document on standard output.
        let out = with("-", false);
        assert_eq!(out.status.code(), Some(0), "{option} -: {}", text(&out));
        assert!(!w.path("-").exists(), "{option} - made a file named -");
        if *option == "lab --out" {
            assert_eq!(out.stdout.len(), 16, "{option} -: the 16 bytes asked");
            continue;
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let starts = match *option {
            "--json" | "--out" => "{",
            "--html" => "<!DOCTYPE html>",
            _ => "<svg",
        };
        assert!(stdout.starts_with(starts), "{option} -: {stdout:.200}");
    }
    // No temporary file was left anywhere.
    let left: Vec<_> = std::fs::read_dir(w.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A proof refused leaves no file: the block is tampered with, so it does not verify.
    let mut bytes = read(Path::new(csv));
    let at = bytes.len() - 10;
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(csv, bytes).unwrap();
    let out = run_within(
        &w,
        &[
            "prove",
            "--game",
            &game,
            csv,
            "--ticket",
            "3",
            "--out",
            "proof.json",
        ],
        std::time::Duration::from_secs(60),
    );
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !w.path("proof.json").exists(),
        "a refused prove left proof.json"
    );
}

#[test]
fn walks_follow_no_link_to_a_folder() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    std::os::unix::fs::symlink(".", folder.join("a")).unwrap();
    std::os::unix::fs::symlink(".", folder.join("b")).unwrap();
    std::os::unix::fs::symlink("..", folder.join("up")).unwrap();
    let game = data("mini-ruche.toml");
    let f = folder.to_str().unwrap();
    let limit = std::time::Duration::from_secs(60);
    let out = run_within(&w, &["verify", "--game", &game, f], limit);
    let said = said(&out, 0, "1 block(s) checked: 1 OK");
    assert!(!said.contains("block(s) checked: 2"), "{said}");
    // From the top of the emissions folder too (the links are two levels down).
    let out = run_within(&w, &["verify", "--game", &game, "emissions"], limit);
    self::said(&out, 0, "1 block(s) checked: 1 OK");
    let out = run_within(&w, &["report", "-q", "--game", &game, f], limit);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run_within(
        &w,
        &[
            "emit",
            "--game",
            &game,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--first-block",
            "2",
            "--quiet",
        ],
        limit,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = seal_within(&w, &game, f, "2", limit);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// `seal FOLDER` of the mini game for `blocks` blocks, with the test key, within `limit`.
fn seal_within(
    w: &Workdir,
    game: &str,
    folder: &str,
    blocks: &str,
    limit: std::time::Duration,
) -> Output {
    let args = [
        "seal",
        "--game",
        game,
        "--signing-key",
        "keys/signing-key.pem",
        "--blocks",
        blocks,
        folder,
    ];
    run_within(w, &args, limit)
}

#[test]
fn a_fifo_or_device_where_a_file_is_read_is_refused_at_once() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    let limit = std::time::Duration::from_secs(30);
    let f = folder.to_str().unwrap().to_string();
    // A FIFO instead of the block, found by the walk or named; instead of the manifest, the
    // record, the log; as the definition, the key, a proof.
    let block = folder.join("block-00001.csv");
    std::fs::rename(&block, w.path("kept")).unwrap();
    mkfifo(&block);
    let out = run_within(
        &w,
        &["verify", "--game", &game, block.to_str().unwrap()],
        limit,
    );
    said(&out, 1, "is a FIFO");
    for command in ["report", "prove", "show"] {
        let mut args = vec![command, "--game", &game, block.to_str().unwrap()];
        if command != "report" {
            args.extend(["--ticket", "1"]);
        }
        let out = run_within(&w, &args, limit);
        let t = text(&out);
        assert!(t.contains("is a FIFO"), "{command}: {t}");
        assert!(!t.contains("panicked"), "{command}: {t}");
    }
    std::fs::remove_file(&block).unwrap();
    std::fs::rename(w.path("kept"), &block).unwrap();
    for name in [
        "block-00001.csv",
        "block-00001.manifest.json",
        "emission.json",
        "emission.log.jsonl",
    ] {
        let path = folder.join(name);
        let kept = w.path("kept");
        std::fs::rename(&path, &kept).unwrap();
        mkfifo(&path);
        let out = run_within(&w, &["verify", "--game", &game, &f], limit);
        said(&out, 1, "is a FIFO");
        // A socket cannot even be opened (ENXIO, "No such device or address", was all the
        // error said): the error says what is there.
        std::fs::remove_file(&path).unwrap();
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let out = run_within(&w, &["verify", "--game", &game, &f], limit);
        let t = said(&out, 1, "is a socket");
        assert!(!t.contains("No such device or address"), "{name}: {t}");
        std::fs::remove_file(&path).unwrap();
        std::fs::rename(&kept, &path).unwrap();
    }
    mkfifo(&w.path("fifo"));
    let out = run_within(&w, &["verify", "--game", "fifo", &f], limit);
    said(&out, 2, "is a FIFO");
    let out = run_within(
        &w,
        &["verify", "--game", &game, "--public-key", "fifo", &f],
        limit,
    );
    said(&out, 2, "is a FIFO");
    let out = run_within(
        &w,
        &[
            "verify-proof",
            "fifo",
            "--public-key",
            "keys/public-key.pem",
        ],
        limit,
    );
    said(&out, 2, "is a FIFO");
    let out = run_within(
        &w,
        &[
            "verify-proof",
            "/dev/zero",
            "--public-key",
            "keys/public-key.pem",
        ],
        limit,
    );
    said(&out, 2, "is a character device");
    // A FIFO as a share or an identity file: refused, and said once.
    let out = run_within(
        &w,
        &[
            "verify",
            "--game",
            &game,
            "--share",
            "fifo",
            "--identity",
            "fifo",
            &f,
        ],
        limit,
    );
    let t = said(&out, 2, "is a FIFO");
    assert_eq!(t.matches("is a FIFO").count(), 1, "{t}");
    // A FIFO as the signing key or the seed file (secret files).
    let out = run_within(
        &w,
        &[
            "emit",
            "--game",
            &game,
            "--seed",
            SEED,
            "--signing-key",
            "fifo",
            "--first-block",
            "3",
        ],
        limit,
    );
    said(&out, 2, "not a regular file");
    let out = run_within(
        &w,
        &[
            "emit",
            "--game",
            &game,
            "--seed-file",
            "fifo",
            "--signing-key",
            "keys/signing-key.pem",
            "--first-block",
            "3",
        ],
        limit,
    );
    said(&out, 2, "not a regular file");
    // A FIFO where the seal would be.
    let seal = folder.join("emission.seal.json");
    mkfifo(&seal);
    let out = run_within(&w, &["verify", "--game", &game, &f], limit);
    said(&out, 1, "is a FIFO");
    let out = seal_within(&w, &game, &f, "1", limit);
    said(&out, 2, "FIFO");
    std::fs::remove_file(&seal).unwrap();
}

#[test]
fn the_first_sigterm_ends_a_run_that_waits_in_a_system_call() {
    // SIGINT (Ctrl-C) the same way: 130.
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        first_signal_ends_a_run_waiting_in_a_read(signal, code);
    }
}

/// emit waits for its seed on a pipe nobody writes to: a read() that a signal flag alone never
/// ends (the handler only raises the flag; the read is restarted). The first SIG`signal` must
/// end it promptly, with status `code`, saying which signal.
fn first_signal_ends_a_run_waiting_in_a_read(signal: &str, code: i32) {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    let game = data("mini-ruche.toml");
    let (reader, writer) = std::io::pipe().unwrap();
    let mut cmd = w.command(&[
        "emit",
        "--game",
        &game,
        "--seed-file",
        "-",
        "--signing-key",
        "keys/signing-key.pem",
        "--quiet",
    ]);
    let mut child = cmd
        .stdin(reader)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "emit waits for its seed"
    );
    let pid = child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args([format!("-{signal}").as_str(), &pid])
        .status();
    assert!(killed.is_ok_and(|s| s.success()), "SIG{signal} sent");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(15) {
            let _ = child.kill();
            panic!("the first SIG{signal} did not end emit within 15 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(writer);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("SIG{signal}")),
        "{}",
        text(&out)
    );
}

#[test]
fn a_block_named_relative_to_the_current_folder_verifies() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_emission-factory"))
        .current_dir(&folder)
        .args(["verify", "--game", &game, "block-00001.csv"])
        .output()
        .unwrap();
    let said = said(&out, 0, "1 block(s) checked: 1 OK, 0 failed");
    assert!(said.contains("1 emission(s) checked: 1 OK"), "{said}");
    let out = Command::new(env!("CARGO_BIN_EXE_emission-factory"))
        .current_dir(&folder)
        .args(["report", "-q", "--game", &game, "block-00001.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn an_eio_closing_a_folder_is_an_error_never_a_panic() {
    if !have_strace() {
        return;
    }
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    let mut injected = 0;
    let mut said_folder = 0;
    for n in 1..=60 {
        let log = w.path(&format!("strace-{n}.log"));
        let out = Command::new("strace")
            .current_dir(w.dir.path())
            .arg("-f")
            .arg("-o")
            .arg(&log)
            .args(["-e", "trace=close"])
            .args(["-e", &format!("inject=close:error=EIO:when={n}")])
            .arg(env!("CARGO_BIN_EXE_emission-factory"))
            .args(["verify", "--game", &game, folder.to_str().unwrap()])
            .output()
            .unwrap();
        let t = text(&out);
        assert_ne!(out.status.code(), Some(101), "close {n} failed: {t}");
        assert!(!t.contains("panicked"), "close {n} failed: {t}");
        if std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("(INJECTED)")
        {
            injected += 1;
        }
        if t.contains("closing the folder") {
            said_folder += 1;
            assert_ne!(out.status.code(), Some(0), "close {n} failed: {t}");
        }
    }
    assert!(
        injected > 0,
        "no close() was failed: the fault was not injected"
    );
    assert!(said_folder > 0, "no run failed at closing a folder");
}

// ---- issue 19, item 4: definitions are bounded ----

/// `count` amounts of whole cents, `first` cents apart from 0 and `step` cents apart, as a
/// TOML list: `["0.01", "0.02", ...]`.
fn cents_list(first: u64, step: u64, count: u64) -> String {
    let items: Vec<String> = (0..count)
        .map(|i| format!("\"{}\"", in_euros(first + i * step)))
        .collect();
    format!("[{}]", items.join(", "))
}

/// `cents` written as a canonical amount: `0.5`, `1.25`, `3`.
fn in_euros(cents: u64) -> String {
    match cents % 100 {
        0 => (cents / 100).to_string(),
        c if c % 10 == 0 => format!("{}.{}", cents / 100, c / 10),
        c => format!("{}.{c:02}", cents / 100),
    }
}

/// One `[[stakes]]` entry at `price` cents whose prizes are `prizes` (cents, one ticket each),
/// with `layout` as its `[stakes.layout]` table.
fn stake_entry(price: u64, prizes: &[u64], layout: &str) -> String {
    let rows: Vec<String> = prizes
        .iter()
        .map(|&c| format!("  {{ count = 1, amount = \"{}\" }},", in_euros(c)))
        .collect();
    format!(
        "[[stakes]]\nprice = \"{}\"\nwinners = {}\ntotal = \"{}\"\nprizes = [\n{}\n]\n\n[stakes.layout]\n{layout}\n",
        in_euros(price),
        prizes.len(),
        in_euros(prizes.iter().sum()),
        rows.join("\n")
    )
}

/// The largest definition SPEC §6.1 allows for `mechanic` but with `stakes` stakes (at most
/// 64), made as slow to build as we know how: each stake with 254 prizes of one ticket (1 to 2.54 €, one cent apart) and every
/// list at its maximum, of amounts a cent or so apart, so that nearly every combination of
/// amounts the synthesizer weighs makes one of the prizes; calendar at `max_winning_months = 6`
/// with 26 symbols. Its id is `largest-<mechanic>`.
fn largest_definition(mechanic: &str, stakes: u64) -> String {
    let prizes: Vec<u64> = (1..=254).collect();
    let (game_layout, layout) = match mechanic {
        // Rows of 2 to 128 cents, honey of 1 to 19 cents: every prize is made of up to three.
        "ruche" => (
            String::new(),
            format!(
                "row_amounts = {}\nhoney = [{}]",
                cents_list(2, 2, 64),
                (1..=10)
                    .map(|p| format!("{{ pots = {p}, amount = \"{}\" }}", in_euros(2 * p - 1)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        "maxi-ruche" => (
            String::new(),
            format!(
                "row_amounts = {}\nbee_amounts = {}\nbonus = [{}]",
                cents_list(1, 1, 64),
                cents_list(1, 1, 64),
                (1..=8)
                    .map(|b| format!("{{ bees = {b}, amount = \"{}\" }}", in_euros(b)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        "calendar" => (
            format!(
                "[layout]\nmax_winning_months = 6\nsymbols = [{}]\n\n",
                (b'A'..=b'Z')
                    .map(|l| format!("{{ letter = \"{}\", picture = \"p{l}\" }}", char::from(l)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "month_amounts = {}\nclover_amounts = {}",
                cents_list(1, 1, 32),
                cents_list(33, 1, 32)
            ),
        ),
        other => panic!("no such mechanic {other}"),
    };
    let mut text = format!(
        "id = \"largest-{mechanic}\"\nname = \"Largest {mechanic}\"\nmechanic = \"{mechanic}\"\nblock_size = 2000\n\n{game_layout}"
    );
    for stake in 65 - stakes..=64 {
        text.push_str(&stake_entry(100 * stake, &prizes, &layout));
        text.push('\n');
    }
    text
}

/// Writes [`largest_definition`] to the work folder; returns its path.
fn write_largest(w: &Workdir, mechanic: &str, stakes: u64) -> String {
    let path = w.path(&format!("largest-{mechanic}-{stakes}.toml"));
    std::fs::write(&path, largest_definition(mechanic, stakes)).unwrap();
    path.display().to_string()
}

/// `emit` of block 1 of `game` at `price`, with the fixed seed, into the folder `out`.
fn emit_args<'a>(game: &'a str, price: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "emit", "--game", game, "--price", price, "--seed", SEED, "--out", out, "--quiet",
    ]
}

#[test]
fn every_list_of_a_definition_has_a_maximum_the_error_names() {
    let w = Workdir::new();
    let amounts = |n: u64| cents_list(1, 1, n);
    let ruche_rows = "row_amounts = [\"2\", \"4\", \"6\", \"10\", \"20\", \"30\", \"40\", \"100\", \"2000\", \"20000\"]";
    let maxi_rows = "row_amounts = [\"1\", \"2\", \"3\", \"5\", \"10\", \"20\", \"25\", \"50\", \"100\", \"250\", \"500\", \"1000\", \"2500\", \"5000\", \"10000\", \"50000\", \"100000\"]";
    let maxi_bees = "bee_amounts = [\"2\", \"3\", \"5\", \"10\", \"20\", \"30\", \"40\", \"50\", \"100\", \"500\", \"1000\", \"5000\"]";
    let months = "month_amounts = [\"2\", \"3\", \"4\", \"5\", \"6\", \"10\", \"20\", \"30\", \"40\", \"50\", \"100\", \"500\", \"1000\", \"10000\", \"40000\"]";
    let clovers =
        "clover_amounts = [\"3\", \"4\", \"6\", \"10\", \"20\", \"30\", \"50\", \"100\", \"1000\"]";
    let honey_10 = "honey = [\n  { pots = 4, amount = \"2\" },";
    let stakes_65: String = (1..=65)
        .map(|s| {
            stake_entry(
                s,
                &[200_000],
                "row_amounts = [\"2000\"]\nhoney = [{ pots = 4, amount = \"2\" }]",
            )
        })
        .collect();
    let prizes_255: Vec<u64> = (1..=255).collect();
    let cases: Vec<(String, &str)> = vec![
        (
            variant(&w, "rows.toml", &[(ruche_rows, &format!("row_amounts = {}", amounts(65)))]),
            "rows.toml, stakes[price=2].layout: row_amounts: 65 entries, at most 64",
        ),
        (
            variant(
                &w,
                "honey.toml",
                &[(honey_10, "honey = [\n  { pots = 1, amount = \"1\" }, { pots = 2, amount = \"1\" }, { pots = 3, amount = \"1\" }, { pots = 11, amount = \"1\" },\n  { pots = 4, amount = \"2\" },")],
            ),
            "honey.toml, stakes[price=2].layout: honey: 11 entries, at most 10",
        ),
        (
            {
                let text = format!(
                    "id = \"many-stakes\"\nname = \"Many stakes\"\nmechanic = \"ruche\"\nblock_size = 2000\n\n{stakes_65}"
                );
                let path = w.path("stakes.toml");
                std::fs::write(&path, text).unwrap();
                path.display().to_string()
            },
            "stakes.toml, stakes: 65 entries, at most 64",
        ),
        (
            {
                let text = format!(
                    "id = \"many-prizes\"\nname = \"Many prizes\"\nmechanic = \"ruche\"\nblock_size = 2000\n\n{}",
                    stake_entry(200, &prizes_255, "row_amounts = [\"0.01\"]\nhoney = [{ pots = 4, amount = \"2\" }]")
                );
                let path = w.path("prizes.toml");
                std::fs::write(&path, text).unwrap();
                path.display().to_string()
            },
            "prizes.toml, stakes[price=2].prizes: 255 entries, at most 254",
        ),
        (
            variant_of(&w, "mini-maxi.toml", "maxi-rows.toml", &[(maxi_rows, &format!("row_amounts = {}", amounts(65)))]),
            "maxi-rows.toml, stakes[price=3].layout: row_amounts: 65 entries, at most 64",
        ),
        (
            variant_of(&w, "mini-maxi.toml", "bees.toml", &[(maxi_bees, &format!("bee_amounts = {}", amounts(65)))]),
            "bees.toml, stakes[price=3].layout: bee_amounts: 65 entries, at most 64",
        ),
        (
            variant_of(&w, "mini-maxi.toml", "bonus.toml", &[("bonus = [", "bonus = [\n  { bees = 1, amount = \"1\" }, { bees = 2, amount = \"1\" }, { bees = 3, amount = \"1\" }, { bees = 9, amount = \"1\" },")]),
            "bonus.toml, stakes[price=3].layout: bonus: 9 entries, at most 8",
        ),
        (
            variant_of(&w, "mini-annee.toml", "months.toml", &[(months, &format!("month_amounts = {}", amounts(33)))]),
            "months.toml, stakes[price=3].layout: month_amounts: 33 entries, at most 32",
        ),
        (
            variant_of(&w, "mini-annee.toml", "clovers.toml", &[(clovers, &format!("clover_amounts = {}", amounts(33)))]),
            "clovers.toml, stakes[price=3].layout: clover_amounts: 33 entries, at most 32",
        ),
        (
            variant(&w, "id.toml", &[("id = \"mini-ruche\"", &format!("id = \"{}\"", "r".repeat(65)))]),
            "id.toml, id: 65 characters, at most 64",
        ),
        (
            variant(&w, "name.toml", &[("name = \"Mini ruche (test)\"", &format!("name = \"{}\"", "é".repeat(201)))]),
            "name.toml, name: 201 characters, at most 200",
        ),
    ];
    for (file, needle) in &cases {
        let out = w.run(&emit_args(file, "2", "limits"));
        let text = said(&out, 2, needle);
        assert!(!text.contains("panicked"), "{text}");
    }
    assert!(!w.path("limits").exists(), "no block is made");
}

#[test]
fn more_symbols_than_letters_are_refused_naming_the_key() {
    let w = Workdir::new();
    // 27 symbols: one per letter A to Z, and one more (any letter would be listed twice).
    let symbols: Vec<String> = (b'A'..=b'Z')
        .chain([b'A'])
        .map(|l| format!("{{ letter = \"{}\", picture = \"p{l}\" }}", char::from(l)))
        .collect();
    let file = variant_of(
        &w,
        "mini-annee.toml",
        "27.toml",
        &[(
            "symbols = [",
            &format!("symbols = [{},", symbols.join(", ")),
        )],
    );
    let out = w.run(&emit_args(&file, "3", "limits"));
    said(
        &out,
        2,
        "27.toml, stakes[price=3].layout: symbols: 35 entries, at most 26",
    );
}

#[test]
fn impossible_counts_are_refused_naming_the_key() {
    let w = Workdir::new();
    for (file, needle) in [
        // A hive holds at most 10 honey pots (SPEC §3): 11 can never be shown.
        (
            variant(&w, "pots.toml", &[("{ pots = 10,", "{ pots = 11,")]),
            "pots.toml, stakes[price=2].layout: honey: pots = 11 is impossible: a hive holds at most 10 honey pots",
        ),
        // The bonus stage shows at most 8 bees.
        (
            variant_of(&w, "mini-maxi.toml", "bees.toml", &[("{ bees = 8,", "{ bees = 9,")]),
            "bees.toml, stakes[price=3].layout: bonus[4].bees = 9 is out of range",
        ),
        // A ticket has twelve months; the synthesizer uses at most six.
        (
            variant_of(&w, "mini-annee.toml", "months.toml", &[("max_winning_months = 4", "max_winning_months = 13")]),
            "months.toml, stakes[price=3].layout: max_winning_months = 13 must be a whole number from 1 to 6",
        ),
    ] {
        let out = w.run(&emit_args(&file, "2", "impossible"));
        said(&out, 2, needle);
    }
    assert!(!w.path("impossible").exists(), "no block is made");
}

#[test]
fn the_largest_allowed_definitions_emit_and_verify() {
    let w = Workdir::new();
    for mechanic in ["ruche", "maxi-ruche", "calendar"] {
        let file = write_largest(&w, mechanic, 64);
        assert!(std::fs::metadata(&file).unwrap().len() < 1 << 20);
        // The last stake: every stake is checked on loading, one synthesizer is built.
        let child = w
            .command(&emit_args(&file, "64", "largest"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Generous: it takes well under a second (docs/PERFORMANCE.md); before the bounds it took minutes.
        let out = finish(child, std::time::Duration::from_secs(60));
        said(&out, 0, "");
        let folder = w.path(&format!("largest/largest-{mechanic}/64/e0001"));
        let out = w.run(&["verify", "--game", &file, folder.to_str().unwrap()]);
        said(&out, 0, "1 OK");
    }
}

/// Waits for a child, killing it if it takes longer than `limit` (a hang is a failure).
fn finish(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("the process did not end within {limit:?}: {}", text(&out));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The unit of the CPU times of `/proc/PID/stat`, per second (`getconf CLK_TCK`).
fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .expect("getconf runs");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("getconf CLK_TCK prints a number")
    })
}

/// CPU time a running process has used so far (user and system), from `/proc/PID/stat`.
fn cpu_time(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(
        ticks * 1000 / clock_ticks(),
    ))
}

/// A SIGTERM that arrives while `emit` builds the synthesizer of the largest calendar lists
/// (the slowest of the three to build: some 35 ms of CPU here, docs/PERFORMANCE.md) ends it promptly with
/// status 143, having written nothing. The definition has one stake, so that loading it takes
/// a few milliseconds and the build most of the run's CPU time before it makes its `--out`
/// folder. What this proves: the signal is sent once the process has used 10 ms of CPU (so
/// after it caught signals, which it does first, and after it loaded the definition) and while
/// its folder does not exist yet, so while the synthesizer is built; and the run stops there,
/// before anything is written. Without the checks inside the build, the run finished building
/// and went on to make the emission folder, its seed and key (and, before the build was fast,
/// took minutes to do so).
#[test]
fn sigterm_while_the_synthesizer_is_built_ends_emit_at_once_with_143_leaving_nothing() {
    let w = Workdir::new();
    let file = write_largest(&w, "calendar", 1);
    let mut sent_while_building = 0;
    for round in 0..5 {
        let out_dir = format!("sig{round}");
        let child = w
            .command(&emit_args(&file, "64", &out_dir))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let start = std::time::Instant::now();
        // Until it has used 10 ms of CPU, or has made its folder (then this round proves nothing).
        while cpu_time(pid).is_some_and(|t| t < std::time::Duration::from_millis(10))
            && !w.path(&out_dir).exists()
            && start.elapsed() < std::time::Duration::from_secs(60)
        {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let building = !w.path(&out_dir).exists();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        // Generous: the build checks for a signal many times a second.
        let out = finish(child, std::time::Duration::from_secs(10));
        if !building {
            continue;
        }
        sent_while_building += 1;
        let text = said(&out, 143, "stopped by SIGTERM");
        assert!(
            !w.path(&out_dir).exists(),
            "a run stopped while its synthesizer was built left its folder: {text}"
        );
    }
    assert!(
        sent_while_building >= 3,
        "the signal reached the build in only {sent_while_building} of 5 rounds: the build of the largest definition is too quick for this test to aim at"
    );
}

/// emit publishes a block by renaming its files over their names, which replaces whatever is
/// there: a FIFO, a socket or a link at one of a block's names is refused before the block is
/// made, even with --force, and left as it is. (With --force, a FIFO at the CSV's name was
/// replaced by the new block, exit 0.)
#[test]
fn emit_replaces_nothing_but_a_regular_file_at_a_blocks_names() {
    use std::os::unix::fs::FileTypeExt;
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    let emit = |force: bool| {
        let mut args = vec![
            "emit",
            "--game",
            &game,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--quiet",
        ];
        if force {
            args.push("--force");
        }
        run_within(&w, &args, std::time::Duration::from_secs(60))
    };
    type Make = fn(&Path);
    let cases: [(&str, &str, Make); 3] = [
        ("block-00001.csv", "is a FIFO", |p| mkfifo(p)),
        ("block-00001.manifest.json.sig", "is a socket", |p| {
            drop(std::os::unix::net::UnixListener::bind(p).unwrap())
        }),
        ("block-00001.manifest.json", "is a symbolic link", |p| {
            std::os::unix::fs::symlink("elsewhere.json", p).unwrap()
        }),
    ];
    for (name, says, make) in cases {
        let path = folder.join(name);
        let kept = read(&path);
        std::fs::remove_file(&path).unwrap();
        make(&path);
        let before = std::fs::symlink_metadata(&path).unwrap().file_type();
        for force in [true, false] {
            let out = emit(force);
            said(&out, 2, says);
            said(&out, 2, name);
            let after = std::fs::symlink_metadata(&path).unwrap().file_type();
            assert_eq!(
                (after.is_fifo(), after.is_socket(), after.is_symlink()),
                (before.is_fifo(), before.is_socket(), before.is_symlink()),
                "{name} was replaced (--force {force})"
            );
        }
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, kept).unwrap();
    }
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    said(&emit(false), 0, "");
}

/// `report --json X --html ./X` names one file twice: refused before anything is written,
/// however the two paths are spelt. (Compared as written, with --force the page replaced the
/// JSON, exit 0.)
#[test]
fn report_refuses_one_file_named_twice_however_spelt() {
    let w = Workdir::new();
    let folder = emit_mini(&w, "1");
    let game = data("mini-ruche.toml");
    let csv = folder.join("block-00001.csv");
    let csv = csv.to_str().unwrap();
    std::fs::create_dir(w.path("sub")).unwrap();
    for (json, html) in [
        ("out.x", "./out.x"),
        ("sub/../out.x", "out.x"),
        ("out.x", "out.x"),
    ] {
        for force in [false, true] {
            let mut args = vec![
                "report", "-q", "--game", &game, csv, "--json", json, "--html", html,
            ];
            if force {
                args.push("--force");
            }
            let out = run_within(&w, &args, std::time::Duration::from_secs(60));
            said(&out, 2, "name the same file");
            assert!(
                !w.path("out.x").exists(),
                "{json} {html}: a file was written"
            );
        }
    }
    let args = [
        "report",
        "-q",
        "--game",
        &game,
        csv,
        "--json",
        "sub/out.x",
        "--html",
        "out.x",
    ];
    said(
        &run_within(&w, &args, std::time::Duration::from_secs(60)),
        0,
        "",
    );
    assert!(w.path("out.x").exists() && w.path("sub/out.x").exists());
}
