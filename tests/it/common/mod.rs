//! Runs the real binary in a scratch folder; on failure, prints the command, its status,
//! stdout and stderr.

#![allow(dead_code)]

pub mod stats;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The record time of the pinned emissions (`SOURCE_DATE_EPOCH`): 2026-12-01T00:00:00Z.
pub const PINNED_TIME: &str = "1764547200";

/// A test whose subject cannot be run here (a program, a server or a privilege is missing):
/// under env `CI` the test fails, saying `why`; elsewhere it prints `SKIPPED: <test>: why` on
/// the terminal (not captured by the test harness, so `cargo test` shows it beside the test's
/// `ok`) and the caller returns without checking anything. The one skip of the test suite.
#[track_caller]
pub fn cannot_run(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if std::env::var_os("CI").is_some() {
        panic!("CI is set and {test} cannot run its subject: {why}");
    }
    use std::io::Write;
    // Straight to the process's standard error: `eprintln!` would be captured for a passing test.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {why}");
}

/// True if `program probe...` runs and exits 0; otherwise [`cannot_run`] with `program` and
/// `fix` (how to get it) and false, for the caller to return.
#[track_caller]
pub fn require_tool(program: &str, probe: &[&str], fix: &str) -> bool {
    let ok = Command::new(program)
        .args(probe)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        cannot_run(&format!(
            "`{program} {}` does not run here ({fix})",
            probe.join(" ")
        ));
    }
    ok
}

/// A fixed seed for reproducible tests.
pub const SEED: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// A scratch folder with helpers to run the binary in it.
pub struct Workdir {
    pub dir: tempfile::TempDir,
}

impl Workdir {
    pub fn new() -> Self {
        Workdir {
            dir: tempfile::tempdir().expect("temporary folder"),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The binary with `args`, run in the scratch folder. Records are dated [`PINNED_TIME`]
    /// (`SOURCE_DATE_EPOCH`): every manifest names its emission's record by its hash, so two
    /// runs of the same emission in two folders make the same bytes only with the same record
    /// time. A test may set another time with `.env(...)`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_emission-factory"));
        cmd.current_dir(self.dir.path())
            .args(args)
            .env("SOURCE_DATE_EPOCH", PINNED_TIME);
        cmd
    }

    /// Runs and returns the output, whatever the status.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("the binary runs")
    }

    /// Runs and requires exit status `code`.
    pub fn run_expect(&self, args: &[&str], code: i32) -> Output {
        let out = self.run(args);
        if out.status.code() != Some(code) {
            panic!(
                "command: emission-factory {}\nexpected exit {code}, got {:?}\n--- stdout\n{}\n--- stderr\n{}",
                args.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out
    }

    /// Runs and requires success.
    pub fn ok(&self, args: &[&str]) -> Output {
        self.run_expect(args, 0)
    }
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The path of a test data file.
pub fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

/// Reads a file fully.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Runs OpenSSL's own check of a block signature; panics with its output if it refuses.
pub fn openssl_verify(folder: &Path, block: &str) {
    let out = Command::new("openssl")
        .current_dir(folder)
        .args([
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "emission.pub.pem",
            "-rawin",
            "-in",
            &format!("{block}.manifest.json"),
            "-sigfile",
            &format!("{block}.manifest.json.sig"),
        ])
        .output()
        .expect("openssl must be installed (.ci/run installs it)");
    assert!(
        out.status.success(),
        "openssl refused the signature:\n{}",
        String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr)
    );
}

/// Copies the fixed test key pair (tests/data/test-*-key.pem) into `keys/` of the workdir, the
/// private key with mode 0600 (git does not keep modes).
pub fn fixed_test_key(w: &Workdir) {
    std::fs::create_dir_all(w.path("keys")).expect("keys folder");
    for (from, to) in [
        ("test-signing-key.pem", "keys/signing-key.pem"),
        ("test-public-key.pem", "keys/public-key.pem"),
    ] {
        std::fs::copy(data(from), w.path(to)).expect("copy the test key");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            w.path("keys/signing-key.pem"),
            std::fs::Permissions::from_mode(0o600),
        )
        .expect("chmod 600");
    }
}

/// Emits `blocks` blocks of the mini game (2 €, emission 1) under `seed` into `out`, signed
/// with the fixed test key, quietly, with `extra` arguments (`--emission-blocks 3`, ...);
/// returns the emission folder `<out>/mini-ruche/2/e0001`.
pub fn emit_mini_signed(
    w: &Workdir,
    seed: &str,
    out: &str,
    blocks: &str,
    extra: &[&str],
) -> PathBuf {
    fixed_test_key(w);
    let game = data("mini-ruche.toml");
    let mut args = vec![
        "emit",
        "--game",
        &game,
        "--price",
        "2",
        "--seed",
        seed,
        "--signing-key",
        "keys/signing-key.pem",
        "--blocks",
        blocks,
        "--out",
        out,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    w.ok(&args);
    w.path(&format!("{out}/mini-ruche/2/e0001"))
}

/// SHA-256 of a file, hex.
pub fn sha256_file(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(read(path)))
}

/// Pinned outputs: the SHA-256 of block 1's CSV, manifest and signature in `folder` must be
/// exactly these. Any change of a byte for the same inputs (seed, coordinates, key, definition)
/// fails here on purpose: bump GENERATOR_VERSION (see docs/SPEC.md) and update the values.
pub fn assert_pinned(folder: &Path, csv: &str, manifest: &str, signature: &str) {
    let found = [
        sha256_file(&folder.join("block-00001.csv")),
        sha256_file(&folder.join("block-00001.manifest.json")),
        sha256_file(&folder.join("block-00001.manifest.json.sig")),
    ];
    assert_eq!(
        found,
        [csv, manifest, signature],
        "the bytes of a block changed for the same seed, coordinates and key: \
         if on purpose, bump GENERATOR_VERSION and update the pinned values"
    );
}

/// Emits block 1 of `game` at `price` with the fixed seed and the fixed test key, once with 1
/// thread (into `one/`) and once with 2 (into `two/`), checks that every file is
/// byte-identical, and returns the folder of the first.
pub fn emit_with_1_and_2_threads(w: &Workdir, game: &str, price: &str) -> PathBuf {
    emit_with_1_and_2_threads_as(w, game, game, price)
}

/// [`emit_with_1_and_2_threads`] of the game `game` (a built-in name or a definition file)
/// whose id is `id` (its folder).
pub fn emit_with_1_and_2_threads_as(w: &Workdir, game: &str, id: &str, price: &str) -> PathBuf {
    fixed_test_key(w);
    // One thread writing through the page cache, two writing around it (the default).
    for (threads, out, page_cache) in [("1", "one", true), ("2", "two", false)] {
        let mut args = vec![
            "emit",
            "--game",
            game,
            "--price",
            price,
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--threads",
            threads,
            "--out",
            out,
            "--quiet",
        ];
        if page_cache {
            args.push("--page-cache");
        }
        // A fixed time for the emission's record, which every manifest names by its hash.
        let out = w
            .command(&args)
            .env("SOURCE_DATE_EPOCH", PINNED_TIME)
            .output()
            .expect("the binary runs");
        assert!(out.status.success(), "{}", text(&out));
    }
    let folder = w.path(&format!("one/{id}/{price}/e0001"));
    for file in [
        "block-00001.csv",
        "block-00001.manifest.json",
        "block-00001.manifest.json.sig",
        "emission.pub.pem",
    ] {
        let a = read(&folder.join(file));
        let b = read(&w.path(&format!("two/{id}/{price}/e0001/{file}")));
        assert!(
            a == b,
            "{file} differs between 1 thread through the page cache and 2 around it"
        );
    }
    folder
}

/// Checks the manifest of block 1 in `folder` against an Article 3 table (losers last).
pub fn assert_article_3(folder: &Path, table: &[(&str, u64)], winners: u64, total: &str) {
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&folder.join("block-00001.manifest.json"))).unwrap();
    assert_eq!(manifest["total_prizes"], total);
    assert_eq!(manifest["winners"], winners);
    let found: Vec<(String, u64)> = manifest["prizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["amount"].as_str().unwrap().to_string(),
                p["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = table.iter().map(|(a, c)| (a.to_string(), *c)).collect();
    assert_eq!(found, expected);
}

/// Verifies block 1 in `folder` against the keygen key, printing the forms per prize.
pub fn verify_with_forms(w: &Workdir, folder: &Path, tickets: &str) {
    let out = w.ok(&[
        "verify",
        "--forms",
        "--public-key",
        "keys/public-key.pem",
        folder.join("block-00001.csv").to_str().unwrap(),
    ]);
    let said = text(&out);
    println!("{said}");
    assert!(said.contains(&format!("{tickets} tickets")), "{said}");
    assert!(said.contains("1 OK, 0 failed"), "{said}");
    openssl_verify(folder, "block-00001");
}

/// Re-signs `file` with the test key (`keys/signing-key.pem` of `w`), as an insider holding
/// the key could: `file.sig`, by OpenSSL.
pub fn resign(w: &Workdir, file: &Path) {
    let out = Command::new("openssl")
        .args(["pkeyutl", "-sign", "-rawin", "-inkey"])
        .arg(w.path("keys/signing-key.pem"))
        .arg("-in")
        .arg(file)
        .arg("-out")
        .arg(format!("{}.sig", file.display()))
        .output()
        .expect("openssl (installed by .ci/run)");
    assert!(out.status.success(), "{}", text(&out));
}
