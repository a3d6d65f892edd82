//! The command line on a small test game (blocks of 2 000 tickets): reproducibility, resuming,
//! tampering, keys, and clear errors on bad input.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

const FOLDER: &str = "emissions/mini-ruche/2/e0001";

/// Runs `emit` on the mini game with the fixed seed (unless `extra` gives one) and a keygen
/// key, and requires exit status `code`.
fn run_mini(w: &Workdir, extra: &[&str], code: i32) -> std::process::Output {
    if !w.path("keys/signing-key.pem").exists() {
        w.ok(&["keygen", "--out", "keys"]);
    }
    let game = data("mini-ruche.toml");
    let mut args = vec!["emit", "--game", &game, "--price", "2"];
    if !extra.contains(&"--seed") {
        args.extend_from_slice(&["--seed", SEED]);
    }
    args.extend_from_slice(&["--signing-key", "keys/signing-key.pem"]);
    args.extend_from_slice(extra);
    w.run_expect(&args, code)
}

/// Emits blocks of the mini game (see [`run_mini`]) and returns the emission folder.
fn emit_mini(w: &Workdir, extra: &[&str]) -> PathBuf {
    run_mini(w, extra, 0);
    w.path(FOLDER)
}

fn verify_fails(w: &Workdir, csv: &Path, extra: &[&str], needle: &str) {
    let game = data("mini-ruche.toml");
    let mut args = vec!["verify", "--game", &game, csv.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = w.run_expect(&args, 1);
    assert!(
        text(&out).contains(needle),
        "verify should report '{needle}', said:\n{}",
        text(&out)
    );
    assert!(text(&out).contains("FAILED"));
}

/// Verifies a mini-game block against the keygen key, requiring success.
fn verify_ok(w: &Workdir, csv: &Path) {
    let game = data("mini-ruche.toml");
    w.ok(&[
        "verify",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        csv.to_str().unwrap(),
    ]);
}

fn lines(path: &Path) -> Vec<String> {
    String::from_utf8(read(path))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_block_made_alone_equals_the_same_block_made_in_a_range() {
    let w = Workdir::new();
    // Two emissions of the same coordinates, seed and key, whose records are made at the same
    // time: every manifest names its record by its hash, so the records must be equal too.
    run_mini(&w, &[], 0);
    let game = data("mini-ruche.toml");
    for extra in [
        ["--blocks", "3", "--out", "range"],
        ["--first-block", "2", "--out", "alone"],
    ] {
        let mut args = vec!["emit", "--game", &game, "--price", "2", "--seed", SEED];
        args.extend_from_slice(&["--signing-key", "keys/signing-key.pem"]);
        args.extend_from_slice(&extra);
        let out = w
            .command(&args)
            .env("SOURCE_DATE_EPOCH", PINNED_TIME)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    for file in [
        "block-00002.csv",
        "block-00002.manifest.json",
        "block-00002.manifest.json.sig",
    ] {
        assert_eq!(
            read(&w.path(&format!("range/mini-ruche/2/e0001/{file}"))),
            read(&w.path(&format!("alone/mini-ruche/2/e0001/{file}"))),
            "{file}"
        );
    }
    // Different blocks have different prize orders.
    assert_ne!(
        read(&w.path("range/mini-ruche/2/e0001/block-00001.csv")),
        read(&w.path("range/mini-ruche/2/e0001/block-00002.csv"))
    );
}

#[test]
fn the_csv_is_standard_rfc_4180_with_a_hash_per_ticket() {
    use sha2::{Digest, Sha256};
    let w = Workdir::new();
    let folder = emit_mini(&w, &[]);
    let mut reader = csv::Reader::from_path(folder.join("block-00001.csv")).unwrap();
    assert_eq!(
        reader.headers().unwrap(),
        vec!["serial", "prize", "layout", "sha256"]
    );
    let mut n = 0;
    for (i, record) in reader.records().enumerate() {
        let r = record.unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[0], format!("mini-ruche-200-0001-00001-{i:07}"));
        let hashed = format!("{},{},{}", &r[0], &r[1], &r[2]);
        assert_eq!(r[3], hex::encode(Sha256::digest(hashed.as_bytes())));
        n += 1;
    }
    assert_eq!(n, 2000);
}

#[test]
fn existing_blocks_are_kept_and_missing_ones_made() {
    let w = Workdir::new();
    let folder = emit_mini(&w, &["--blocks", "1"]);
    let first = read(&folder.join("block-00001.csv"));
    let out = run_mini(&w, &["--blocks", "2"], 0);
    assert!(
        text(&out).contains("block 00001: already there, verified and kept"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("1 block(s) written, 1 kept"),
        "{}",
        text(&out)
    );
    assert_eq!(read(&folder.join("block-00001.csv")), first);
    assert!(folder.join("block-00002.manifest.json").exists());
    // A damaged existing block is not silently replaced.
    let mut damaged = first.clone();
    let at = damaged.len() - 10;
    damaged[at] = if damaged[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(folder.join("block-00001.csv"), &damaged).unwrap();
    let out = run_mini(&w, &[], 2);
    assert!(text(&out).contains("does not verify"), "{}", text(&out));
    assert_eq!(
        read(&folder.join("block-00001.csv")),
        damaged,
        "left untouched"
    );
    // --force makes it again, identical to the first time.
    run_mini(&w, &["--force"], 0);
    assert_eq!(read(&folder.join("block-00001.csv")), first);
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn another_seed_cannot_join_an_emission() {
    let w = Workdir::new();
    emit_mini(&w, &[]);
    let other = "ff".repeat(32);
    let out = run_mini(&w, &["--seed", &other, "--blocks", "2"], 2);
    assert!(
        text(&out).contains("an emission has one seed"),
        "{}",
        text(&out)
    );
}

#[test]
fn tampering_is_caught_and_named() {
    let w = Workdir::new();
    let folder = emit_mini(&w, &[]);
    let csv = folder.join("block-00001.csv");
    let manifest = folder.join("block-00001.manifest.json");
    let original = lines(&csv);
    verify_ok(&w, &csv);

    // One byte changed in a layout.
    let mut changed = original.clone();
    changed[10] = changed[10].replacen(":P", ":A", 1).replacen(":B", ":F", 1);
    assert_ne!(changed[10], original[10]);
    write_lines(&csv, &changed);
    verify_fails(&w, &csv, &[], "line 11 (mini-ruche-200-0001-00001-0000009)");
    verify_fails(&w, &csv, &[], "is not the SHA-256 of serial,prize,layout");

    // Two prize cells swapped: a winner's and a loser's.
    let winner = original
        .iter()
        .skip(1)
        .position(|l| l.split(',').nth(1) != Some("0"))
        .unwrap()
        + 1;
    let loser = original
        .iter()
        .skip(1)
        .position(|l| l.split(',').nth(1) == Some("0"))
        .unwrap()
        + 1;
    let mut swapped = original.clone();
    let mut a: Vec<String> = swapped[winner].split(',').map(String::from).collect();
    let mut b: Vec<String> = swapped[loser].split(',').map(String::from).collect();
    std::mem::swap(&mut a[1], &mut b[1]);
    swapped[winner] = a.join(",");
    swapped[loser] = b.join(",");
    write_lines(&csv, &swapped);
    verify_fails(
        &w,
        &csv,
        &[],
        "the layout wins 0 € but the prize column says",
    );
    verify_fails(&w, &csv, &[], &format!("line {} ", winner + 1));

    // A line removed.
    let mut removed = original.clone();
    removed.remove(500);
    write_lines(&csv, &removed);
    verify_fails(
        &w,
        &csv,
        &[],
        "1999 tickets, a block of mini-ruche holds 2000",
    );
    verify_fails(
        &w,
        &csv,
        &[],
        "line 501 (mini-ruche-200-0001-00001-0000499): serial 'mini-ruche-200-0001-00001-0000500'",
    );
    verify_fails(&w, &csv, &[], "a ticket is missing, added or out of order");

    // The manifest edited (the tickets restored).
    write_lines(&csv, &original);
    let text_manifest = String::from_utf8(read(&manifest)).unwrap();
    std::fs::write(
        &manifest,
        text_manifest.replace("\"emission\": 1", "\"emission\": 2"),
    )
    .unwrap();
    verify_fails(&w, &csv, &[], "the signature does not match the manifest");
    std::fs::write(&manifest, &text_manifest).unwrap();

    // A different public key.
    w.ok(&["keygen", "--out", "other"]);
    verify_fails(
        &w,
        &csv,
        &["--public-key", "other/public-key.pem"],
        "the signature does not match",
    );
    verify_fails(
        &w,
        &csv,
        &["--public-key", "other/public-key.pem"],
        "public_key_sha256 does not match",
    );

    // Everything restored verifies again, and OpenSSL agrees with the signature.
    verify_ok(&w, &csv);
    openssl_verify(&folder, "block-00001");
}

#[test]
fn keygen_writes_keys_openssl_reads_and_never_overwrites() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.path("keys/signing-key.pem"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let out = std::process::Command::new("openssl")
        .args(["pkey", "-in", "keys/signing-key.pem", "-pubout"])
        .current_dir(w.dir.path())
        .output()
        .expect("openssl must be installed (.ci/run installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, read(&w.path("keys/public-key.pem")));
    let again = w.run_expect(&["keygen", "--out", "keys"], 2);
    assert!(text(&again).contains("already exists"));
}

#[test]
fn default_run_needs_no_key_or_seed_and_keeps_them_apart() {
    let w = Workdir::new();
    let game = data("mini-ruche.toml");
    let out = w.ok(&["emit", "--game", &game]);
    let said = text(&out);
    assert!(said.contains("new random seed"), "{said}");
    assert!(said.contains("one-time signing key"), "{said}");
    let seed = w.path("emissions/private/mini-ruche-2-e0001.seed");
    assert!(seed.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&seed).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The seed is not in the emission folder; its commitment is.
    let seed_hex = String::from_utf8(read(&seed)).unwrap().trim().to_string();
    let folder = w.path(FOLDER);
    for entry in std::fs::read_dir(&folder).unwrap() {
        let bytes = read(&entry.unwrap().path());
        assert!(!String::from_utf8_lossy(&bytes).contains(&seed_hex));
    }
    // A second run adds blocks to the same emission with the same seed and key.
    let out = w.ok(&["emit", "--game", &game, "--first-block", "2"]);
    assert!(
        text(&out).contains("reusing this emission's seed"),
        "{}",
        text(&out)
    );
    let verified = w.ok(&["verify", folder.to_str().unwrap(), "--game", &game]);
    assert!(
        text(&verified).contains("2 OK, 0 failed"),
        "{}",
        text(&verified)
    );
    assert!(text(&verified).contains("proves the files are intact, not who made them"));
}

#[test]
fn bad_input_gets_a_clear_error_and_status_2() {
    let w = Workdir::new();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["emit".into(), "--game".into(), "loto".into()],
            "unknown game 'loto'",
        ),
        (
            vec![
                "emit".into(),
                "--game".into(),
                "ruche-or".into(),
                "--price".into(),
                "4".into(),
            ],
            "has no stake of 4 €",
        ),
        (
            vec!["emit".into(), "--game".into(), "ruche-or".into()],
            "--price is needed",
        ),
        (
            vec![
                "emit".into(),
                "--game".into(),
                "ruche-or".into(),
                "--price".into(),
                "2".into(),
                "--seed".into(),
                "xyz".into(),
            ],
            "64 hexadecimal digits",
        ),
        (
            vec![
                "emit".into(),
                "--game".into(),
                "ruche-or".into(),
                "--price".into(),
                "2".into(),
                "--signing-key".into(),
                "nowhere.pem".into(),
            ],
            "cannot read signing key nowhere.pem",
        ),
        (
            vec!["verify".into(), "nowhere".into()],
            "nowhere does not exist",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = w.run_expect(&args, 2);
        let said = text(&out);
        assert!(
            said.contains(needle),
            "{args:?}: expected '{needle}' in:\n{said}"
        );
        assert!(
            !said.contains("panicked") && !said.contains("RUST_BACKTRACE"),
            "{said}"
        );
    }
    // A definition whose rows do not add up to its stated totals names the file and entry.
    let bad = std::fs::read_to_string(data("mini-ruche.toml"))
        .unwrap()
        .replace(
            "{ count = 50, amount = \"20\" }",
            "{ count = 51, amount = \"20\" }",
        );
    std::fs::write(w.path("bad.toml"), bad).unwrap();
    let out = w.run_expect(&["emit", "--game", "bad.toml"], 2);
    assert!(
        text(&out).contains("bad.toml, stakes[price=2].winners: the prize rows add up to 304"),
        "{}",
        text(&out)
    );
    std::fs::write(w.path("broken.toml"), "id = \"x\"\nblock_size = [").unwrap();
    let out = w.run_expect(&["emit", "--game", "broken.toml"], 2);
    assert!(
        text(&out).contains("broken.toml is malformed"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("line 2"), "{}", text(&out));
}

#[test]
fn games_lists_payout_and_odds() {
    let w = Workdir::new();
    let out = w.ok(&["games"]);
    let said = text(&out);
    for needle in [
        "ruche-or",
        "maxi-ruche-or",
        "annee-chance",
        "70.0%",
        "1 in 3.78",
        "900 000",
    ] {
        assert!(said.contains(needle), "missing {needle} in\n{said}");
    }
}

#[test]
fn an_audit_with_the_seed_replays_every_ticket() {
    let w = Workdir::new();
    let folder = emit_mini(&w, &[]);
    let csv = folder.join("block-00001.csv");
    let game = data("mini-ruche.toml");
    let csv_arg = csv.to_str().unwrap();
    w.ok(&["verify", "--game", &game, "--seed", SEED, csv_arg]);
    let wrong = "ee".repeat(32);
    verify_fails(
        &w,
        &csv,
        &["--seed", &wrong],
        "this block was made from another seed",
    );
}

#[test]
fn an_insider_with_the_key_but_not_the_seed_is_caught_by_the_audit() {
    use emission_factory::block::{keys, manifest::Manifest};
    use emission_factory::hash::merkle::MerkleRoot;
    use sha2::{Digest, Sha256};
    let w = Workdir::new();
    let folder = emit_mini(&w, &[]);
    let csv = folder.join("block-00001.csv");
    let manifest_path = folder.join("block-00001.manifest.json");
    // Move the top prize to the first ticket: swap prize and layout, fix every hash, re-sign.
    let mut lines = lines(&csv);
    let top = lines
        .iter()
        .position(|l| l.split(',').nth(1) == Some("2000"))
        .unwrap();
    let target = if top == 1 { 2 } else { 1 };
    let fields = |l: &str| l.split(',').map(String::from).collect::<Vec<_>>();
    let (a, b) = (fields(&lines[top]), fields(&lines[target]));
    let rehash = |serial: &str, prize: &str, layout: &str| {
        let body = format!("{serial},{prize},{layout}");
        let hash = hex::encode(Sha256::digest(body.as_bytes()));
        format!("{body},{hash}")
    };
    lines[top] = rehash(&a[0], &b[1], &b[2]);
    lines[target] = rehash(&b[0], &a[1], &a[2]);
    write_lines(&csv, &lines);
    let bytes = read(&csv);
    let mut merkle = MerkleRoot::new();
    for line in &lines[1..] {
        let hash: [u8; 32] = hex::decode(line.rsplit(',').next().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        merkle.push(&hash);
    }
    let mut manifest = Manifest::from_bytes(&read(&manifest_path)).unwrap();
    manifest.csv.bytes = bytes.len() as u64;
    manifest.csv.sha256 = hex::encode(Sha256::digest(&bytes));
    manifest.tickets_root = hex::encode(merkle.root());
    let manifest_bytes = manifest.to_bytes();
    std::fs::write(&manifest_path, &manifest_bytes).unwrap();
    let key = keys::read_signing_key(&w.path("keys/signing-key.pem")).unwrap();
    std::fs::write(
        folder.join("block-00001.manifest.json.sig"),
        keys::sign(&key, &manifest_bytes),
    )
    .unwrap();
    // Everything is consistent and signed: only the seed tells that the draw was changed.
    verify_ok(&w, &csv);
    verify_fails(
        &w,
        &csv,
        &["--seed", SEED],
        &format!("line {} ", target + 1),
    );
    verify_fails(
        &w,
        &csv,
        &["--seed", SEED],
        &format!(
            "line {} (mini-ruche-200-0001-00001-{:07}): the seed draws 2000 € for this ticket",
            top + 1,
            top - 1
        ),
    );
}

/// `emit --print-folder` prints the folder that emit, given the same --game, --price, --emission
/// and --out, writes into (the stake canonical, the out folder as given), and makes nothing; the
/// job scripts of deploy/ ask it instead of building the path themselves (issue 19, item 8).
#[test]
fn emit_print_folder_prints_the_folder_emit_writes_into() {
    let w = Workdir::new();
    let game = data("mini-ruche.toml");
    let printed = |args: &[&str]| {
        let mut all = vec!["emit", "--print-folder"];
        all.extend_from_slice(args);
        let out = w.ok(&all);
        assert!(out.stderr.is_empty(), "{}", text(&out));
        String::from_utf8(out.stdout).expect("the folder is printed as text")
    };
    // A relative --out stays relative, as emit uses it; 2.0 and 2.00 are the stake 2.
    assert_eq!(
        printed(&["--game", &game, "--price", "2.0", "--out", "out"]),
        "out/mini-ruche/2/e0001\n"
    );
    assert_eq!(
        printed(&["--game", &game, "--price", "2.00", "--emission", "10"]),
        "emissions/mini-ruche/2/e0010\n"
    );
    // A single-stake game needs no --price; the id is the one inside the definition file.
    let abs = w.path("abs").display().to_string();
    assert_eq!(
        printed(&["--game", &game, "--out", &abs, "--emission", "0012"]),
        format!("{abs}/mini-ruche/2/e0012\n")
    );
    assert_eq!(
        printed(&["--game", "ruche-or", "--price", "0.50", "--out", "./o/"]),
        "./o/ruche-or/0.5/e0001\n"
    );
    // Nothing is made: no folder, no seed, no key.
    for made in ["out", "emissions", "abs", "o"] {
        assert!(!w.path(made).exists(), "--print-folder made {made}");
    }
    // emit with the same settings writes its block into exactly that folder.
    let folder = printed(&["--game", &game, "--price", "2.0", "--out", "out"]);
    w.ok(&[
        "emit", "--game", &game, "--price", "2.0", "--out", "out", "--seed", SEED, "-q",
    ]);
    assert!(w
        .path(folder.trim_end())
        .join("block-00001.manifest.json")
        .exists());
    // What emit refuses, --print-folder refuses alike (status 2, naming the option).
    let refused = w.run_expect(
        &[
            "emit",
            "--print-folder",
            "--game",
            "ruche-or",
            "--price",
            "2.5",
        ],
        2,
    );
    assert!(refused.stdout.is_empty(), "{}", text(&refused));
    assert!(text(&refused).contains("2.5"), "{}", text(&refused));
    let refused = w.run_expect(
        &[
            "emit",
            "--print-folder",
            "--game",
            "ruche-or",
            "--price",
            "two",
        ],
        2,
    );
    assert!(text(&refused).contains("--price two"), "{}", text(&refused));
    // The folder is printed as one line of text, or not at all.
    let refused = w.run_expect(
        &["emit", "--print-folder", "--game", &game, "--out", "a\nb"],
        2,
    );
    assert!(refused.stdout.is_empty(), "{}", text(&refused));
    assert!(text(&refused).contains("--out"), "{}", text(&refused));
}

#[test]
fn keygen_prints_the_fingerprint_the_manifests_carry() {
    let w = Workdir::new();
    let said = String::from_utf8(w.ok(&["keygen", "--out", "keys"]).stdout).unwrap();
    let fingerprint = said
        .lines()
        .find_map(|l| l.strip_prefix("public_key_sha256: "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no public_key_sha256 in:\n{said}"))
        .to_string();
    let folder = emit_mini(&w, &[]);
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&folder.join("block-00001.manifest.json"))).unwrap();
    assert_eq!(
        manifest["public_key_sha256"],
        fingerprint.as_str(),
        "{said}"
    );
    // --quiet: the fingerprint alone, of the new key.
    let quiet = w.ok(&["keygen", "--out", "other", "--quiet"]).stdout;
    let quiet = String::from_utf8(quiet).unwrap();
    assert_eq!(quiet.trim().len(), 64, "{quiet}");
    assert_eq!(quiet.lines().count(), 1, "{quiet}");
    assert_ne!(quiet.trim(), fingerprint);
}

#[test]
fn version_verbose_names_the_commit_the_profile_and_the_binary_hash() {
    let w = Workdir::new();
    let exe = Path::new(env!("CARGO_BIN_EXE_emission-factory"));
    let said = String::from_utf8(w.ok(&["version", "--verbose"]).stdout).unwrap();
    let field = |name: &str| {
        said.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name} in:\n{said}"))
    };
    assert_eq!(field("binary_sha256"), sha256_file(exe), "{said}");
    // The profile is the folder cargo built the binary into (target/ci/, target/release/...).
    let folder = exe.parent().unwrap().file_name().unwrap().to_str().unwrap();
    let profile = if folder == "debug" { "dev" } else { folder };
    assert_eq!(field("profile"), profile, "{said}");
    // The commit is the repository's HEAD, when built from one.
    let head = std::process::Command::new("git")
        .args(["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let commit = field("commit");
    match head {
        // Cargo reruns build.rs when HEAD moves: the binary is of this very commit.
        Some(head) => assert_eq!(commit.trim_end_matches("-dirty"), head, "{said}"),
        None => assert_eq!(commit, "unknown"),
    }
    assert!(said.starts_with("emission-factory 0.1.0\n"), "{said}");
    // `--version --verbose` is the same; `--version` alone is clap's line.
    assert_eq!(
        String::from_utf8(w.ok(&["--version", "--verbose"]).stdout).unwrap(),
        said
    );
    assert_eq!(w.ok(&["--version"]).stdout, b"emission-factory 0.1.0\n");
    // --json: the same fields.
    let json: serde_json::Value =
        serde_json::from_slice(&w.ok(&["version", "--json"]).stdout).unwrap();
    assert_eq!(json["binary_sha256"], sha256_file(exe).as_str());
    assert_eq!(json["commit"], commit.as_str());
    assert_eq!(json["profile"], profile);
    assert_eq!(json["version"], "0.1.0");
}

#[test]
fn games_json_is_one_object_with_the_tables() {
    let w = Workdir::new();
    let out = w.ok(&["games", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["games_format"], 1);
    let games = json["games"].as_array().unwrap();
    let ids: Vec<&str> = games.iter().map(|g| g["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["ruche-or", "maxi-ruche-or", "annee-chance"]);
    let ruche = &games[0];
    assert_eq!(ruche["block_size"], 900_000);
    assert_eq!(ruche["mechanic"], "ruche");
    assert_eq!(ruche["definition_sha256"].as_str().unwrap().len(), 64);
    let stake = &ruche["stakes"][2];
    assert_eq!(stake["price"], "2");
    assert_eq!(stake["winners"], 238_353);
    assert_eq!(stake["payout_percent"], "70");
    assert_eq!(stake["odds_one_in"], "3.78");
    // The table adds up to its totals.
    let prizes = stake["prizes"].as_array().unwrap();
    let winners: u64 = prizes.iter().map(|p| p["count"].as_u64().unwrap()).sum();
    assert_eq!(winners, 238_353);
    let total: rust_decimal::Decimal = prizes
        .iter()
        .map(|p| {
            p["amount"]
                .as_str()
                .unwrap()
                .parse::<rust_decimal::Decimal>()
                .unwrap()
                * rust_decimal::Decimal::from(p["count"].as_u64().unwrap())
        })
        .sum();
    assert_eq!(total.to_string(), stake["total_prizes"].as_str().unwrap());
}

#[test]
fn quiet_leaves_only_the_result() {
    let w = Workdir::new();
    // games: the rows without their heading.
    let all = text(&w.ok(&["games"]));
    let quiet = String::from_utf8(w.ok(&["games", "-q"]).stdout).unwrap();
    assert_eq!(quiet, all.split_once('\n').unwrap().1, "{quiet}");
    // man --out: no confirmation.
    let out = w.ok(&["man", "--out", "man1", "-q"]);
    assert!(
        out.stderr.is_empty() && out.stdout.is_empty(),
        "{}",
        text(&out)
    );
    assert!(w.path("man1/emission-factory.1").exists());
    // show: checks the ticket and draws nothing; a ticket that fails still says so.
    let folder = emit_mini(&w, &[]);
    let csv = folder.join("block-00001.csv");
    let csv = csv.to_str().unwrap();
    let game = data("mini-ruche.toml");
    let show = [
        "show",
        csv,
        "--ticket",
        "3",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
    ];
    assert!(!w.ok(&show).stdout.is_empty());
    let out = w.ok(&[&show[..], &["-q"]].concat());
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        text(&out)
    );
    let other = w.path("other");
    w.ok(&["keygen", "--out", other.to_str().unwrap(), "-q"]);
    let wrong = [
        "show",
        csv,
        "--ticket",
        "3",
        "--game",
        &game,
        "--public-key",
        "other/public-key.pem",
        "-q",
    ];
    assert!(text(&w.run_expect(&wrong, 1)).contains("FAILED"));
    // prove and verify-proof: the proof, and nothing said on success.
    let prove = [
        "prove",
        csv,
        "--ticket",
        "3",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        "--out",
        "p.json",
        "-q",
    ];
    let out = w.ok(&prove);
    assert!(
        out.stderr.is_empty() && out.stdout.is_empty(),
        "{}",
        text(&out)
    );
    let check = [
        "verify-proof",
        "p.json",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
    ];
    assert!(text(&w.ok(&check)).contains("OK "));
    let out = w.ok(&[&check[..], &["-q"]].concat());
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        text(&out)
    );
    let wrong = [
        "verify-proof",
        "p.json",
        "--game",
        &game,
        "--public-key",
        "other/public-key.pem",
        "-q",
    ];
    assert!(text(&w.run_expect(&wrong, 1)).contains("FAILED"));
}

/// Runs `args` with standard output on a terminal (util-linux's `script` gives it a pty), with
/// NO_COLOR set to `no_color` if given; None (SKIPPED, or a failure under CI) without `script`.
fn on_a_terminal(w: &Workdir, args: &[&str], no_color: Option<&str>) -> Option<String> {
    let have = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        cannot_run(
            "util-linux's script is not installed (apt-get install bsdutils; .ci/run does it)",
        );
        return None;
    }
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_emission-factory"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let mut command = std::process::Command::new("script");
    command
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .current_dir(w.dir.path())
        .env_remove("NO_COLOR");
    if let Some(value) = no_color {
        command.env("NO_COLOR", value);
    }
    let out = command.output().expect("script runs");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn failed_is_red_on_a_terminal_only() {
    let w = Workdir::new();
    let folder = emit_mini(&w, &[]);
    std::fs::remove_file(folder.join("block-00001.manifest.json.sig")).unwrap();
    let game = data("mini-ruche.toml");
    let csv = folder.join("block-00001.csv");
    // --quiet: no progress bar, whose own escapes would be on the terminal too.
    let args = [
        "verify",
        "--quiet",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        csv.to_str().unwrap(),
    ];
    let red = "\x1b[1m\x1b[31mFAILED\x1b[0m";
    let Some(coloured) = on_a_terminal(&w, &args, None) else {
        return;
    };
    assert!(coloured.contains(&format!("{red}  ")), "{coloured:?}");
    // Not with NO_COLOR set; coloured again when it is set empty, as no-color.org says.
    let plain = on_a_terminal(&w, &args, Some("1")).unwrap();
    assert!(
        plain.contains("FAILED  ") && !plain.contains('\x1b'),
        "{plain:?}"
    );
    let empty = on_a_terminal(&w, &args, Some("")).unwrap();
    assert!(empty.contains(red), "{empty:?}");
    // Never into a pipe or a file.
    let piped = w.command(&args).env_remove("NO_COLOR").output().unwrap();
    assert_eq!(piped.status.code(), Some(1));
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(
        piped.contains("FAILED  ") && !piped.contains('\x1b'),
        "{piped:?}"
    );
    // `show` says FAILED on standard error the same way (it was never red).
    let show = [
        "show",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        "--ticket",
        "0",
        csv.to_str().unwrap(),
    ];
    let coloured = on_a_terminal(&w, &show, None).unwrap();
    assert!(coloured.contains(&format!("{red}  ")), "{coloured:?}");
    let piped = w.command(&show).env_remove("NO_COLOR").output().unwrap();
    assert_eq!(piped.status.code(), Some(1), "{}", text(&piped));
    let piped = String::from_utf8(piped.stderr).unwrap();
    assert!(
        piped.contains("FAILED  ") && !piped.contains('\x1b'),
        "{piped:?}"
    );
}

#[test]
fn seal_and_verify_json_are_one_object_each() {
    let w = Workdir::new();
    let folder = emit_mini(&w, &["--blocks", "2"]);
    let game = data("mini-ruche.toml");
    let dir = folder.to_str().unwrap();
    let seal = [
        "seal",
        "--json",
        "--blocks",
        "2",
        "--game",
        &game,
        "--signing-key",
        "keys/signing-key.pem",
        dir,
    ];
    let first: serde_json::Value = serde_json::from_slice(&w.ok(&seal).stdout).unwrap();
    assert_eq!(first["seal_json_format"], 1);
    assert_eq!(first["already_sealed"], false);
    let seal_sha256 = sha256_file(&folder.join("emission.seal.json"));
    assert_eq!(first["seal_sha256"], seal_sha256.as_str());
    assert_eq!(first["blocks"], 2);
    assert_eq!(first["tickets"], 4000);
    assert_eq!(first["kind"], "test");
    assert_eq!(first["stake"], "2");
    assert_eq!(
        first["record_sha256"],
        sha256_file(&folder.join("emission.json")).as_str()
    );
    // Again: already sealed, the same seal.
    let again: serde_json::Value = serde_json::from_slice(&w.ok(&seal).stdout).unwrap();
    assert_eq!(again["already_sealed"], true);
    for key in [
        "seal_sha256",
        "blocks",
        "tickets",
        "winners",
        "total_prizes",
        "public_key_sha256",
    ] {
        assert_eq!(again[key], first[key], "{key}");
    }
    let verify = |extra: &[&str], code: i32| -> serde_json::Value {
        let mut args = vec![
            "verify",
            "--json",
            "--game",
            &game,
            "--public-key",
            "keys/public-key.pem",
        ];
        args.extend_from_slice(extra);
        args.push(dir);
        let out = w.run_expect(&args, code);
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: not one JSON object:\n{}", text(&out)))
    };
    let ok = verify(&["--seal-sha256", &seal_sha256], 0);
    assert_eq!(ok["verify_format"], 2);
    assert_eq!(ok["ok"], true);
    assert_eq!(
        (ok["blocks_checked"].as_u64(), ok["blocks_failed"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(ok["blocks"][1]["block"], 2);
    assert_eq!(ok["blocks"][1]["tickets"], 2000);
    assert_eq!(ok["emissions"][0]["kind"], "test");
    assert_eq!(ok["emissions"][0]["ok"], true);
    assert_eq!(ok["seed_sha256"], serde_json::Value::Null);
    // With the seed: its commitment and the blocks replayed.
    let replayed = verify(&["--seed", SEED], 0);
    assert_eq!(replayed["seed_replayed"], 2);
    assert_eq!(replayed["blocks"][0]["seed_replay"], true);
    assert_eq!(replayed["seed_sha256"].as_str().map(str::len), Some(64));
    // A tampered ticket: not OK, the problem named, exit status 1, still one object.
    let csv = folder.join("block-00002.csv");
    let mut lines = lines(&csv);
    let last = lines[5].pop().unwrap();
    lines[5].push(if last == '0' { '1' } else { '0' });
    write_lines(&csv, &lines);
    let bad = verify(&[], 1);
    assert_eq!(bad["ok"], false);
    assert_eq!(bad["blocks_failed"], 1);
    assert_eq!(bad["blocks"][0]["ok"], true);
    assert_eq!(bad["blocks"][1]["ok"], false);
    assert!(
        !bad["blocks"][1]["problems"].as_array().unwrap().is_empty(),
        "{bad}"
    );
    assert_eq!(bad["emissions"][0]["ok"], false);
}

/// ChaCha20's block function (RFC 8439 §2.3), written here from the RFC, independent of the
/// program's generator: key, 64-bit block counter in words 12-13, nonce 0 in words 14-15 (the
/// counter never reaches 2^32 here, where the RFC's 32-bit counter layout is the same).
fn chacha20_block(key: &[u8; 32], counter: u64) -> [u8; 64] {
    fn quarter(s: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
        s[a] = s[a].wrapping_add(s[b]);
        s[d] = (s[d] ^ s[a]).rotate_left(16);
        s[c] = s[c].wrapping_add(s[d]);
        s[b] = (s[b] ^ s[c]).rotate_left(12);
        s[a] = s[a].wrapping_add(s[b]);
        s[d] = (s[d] ^ s[a]).rotate_left(8);
        s[c] = s[c].wrapping_add(s[d]);
        s[b] = (s[b] ^ s[c]).rotate_left(7);
    }
    let mut state = [0u32; 16];
    state[..4].copy_from_slice(&[0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
    for i in 0..8 {
        state[4 + i] = u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().unwrap());
    }
    state[12] = counter as u32;
    state[13] = (counter >> 32) as u32;
    let mut working = state;
    for _ in 0..10 {
        quarter(&mut working, 0, 4, 8, 12);
        quarter(&mut working, 1, 5, 9, 13);
        quarter(&mut working, 2, 6, 10, 14);
        quarter(&mut working, 3, 7, 11, 15);
        quarter(&mut working, 0, 5, 10, 15);
        quarter(&mut working, 1, 6, 11, 12);
        quarter(&mut working, 2, 7, 8, 13);
        quarter(&mut working, 3, 4, 9, 14);
    }
    let mut out = [0u8; 64];
    for i in 0..16 {
        out[4 * i..4 * i + 4].copy_from_slice(&working[i].wrapping_add(state[i]).to_le_bytes());
    }
    out
}

/// The prize key of docs/SPEC.md §4: SHA-256 of the label, the seed, the game id and the
/// canonical stake each after its length (8 bytes big-endian), the emission and the block
/// (4 bytes big-endian each).
fn prize_key(seed: &[u8; 32], game: &str, stake: &str, emission: u32, block: u32) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"emission-factory/v1/block-key");
    h.update(seed);
    for field in [game, stake] {
        h.update((field.len() as u64).to_be_bytes());
        h.update(field.as_bytes());
    }
    h.update(emission.to_be_bytes());
    h.update(block.to_be_bytes());
    h.finalize().into()
}

#[test]
fn lab_raw_is_the_chacha20_stream_the_spec_defines() {
    // The block function against RFC 8439's published key stream for the zero key and nonce
    // (appendix A.1, test vector 1).
    assert_eq!(
        hex::encode(chacha20_block(&[0; 32], 0)),
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7\
         da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
    );
    let w = Workdir::new();
    let seed: [u8; 32] = hex::decode(SEED).unwrap().try_into().unwrap();
    for (game, price, stake, emission, block) in [
        ("ruche-or", "2.0", "2", 3u32, 7u32),
        ("ruche-or", "0.50", "0.5", 1, 1),
        ("annee-chance", "3", "3", 12, 400),
    ] {
        let key = prize_key(&seed, game, stake, emission, block);
        let expected: Vec<u8> = (0..5).flat_map(|c| chacha20_block(&key, c)).collect();
        // 300 bytes: four whole blocks of the stream and part of a fifth.
        let out = w.ok(&[
            "lab",
            "raw",
            "--game",
            game,
            "--price",
            price,
            "--emission",
            &emission.to_string(),
            "--block",
            &block.to_string(),
            "--seed",
            SEED,
            "--bytes",
            "300",
        ]);
        assert_eq!(
            hex::encode(&out.stdout),
            hex::encode(&expected[..300]),
            "{game} {stake}"
        );
    }
    // Pinned: a change of the generator or of the derivation changes these bytes.
    let out = w.ok(&[
        "lab", "raw", "--game", "ruche-or", "--price", "2", "--seed", SEED, "--bytes", "16",
    ]);
    assert_eq!(hex::encode(out.stdout), "05709067e526ee020923e88588fc41bc");
    // --out FILE: the same bytes, written whole.
    w.ok(&[
        "lab", "raw", "--game", "ruche-or", "--price", "2", "--seed", SEED, "--bytes", "16",
        "--out", "raw.bin", "-q",
    ]);
    assert_eq!(
        hex::encode(read(&w.path("raw.bin"))),
        "05709067e526ee020923e88588fc41bc"
    );
    let without_seed = w.run_expect(
        &[
            "lab", "raw", "--game", "ruche-or", "--price", "2", "--bytes", "16",
        ],
        2,
    );
    assert!(
        text(&without_seed).contains("--seed-file"),
        "{}",
        text(&without_seed)
    );
}

#[test]
fn lab_positions_are_the_prizes_of_the_block_emit_makes() {
    let w = Workdir::new();
    let folder = emit_mini(&w, &[]);
    let game = data("mini-ruche.toml");
    let out = w.ok(&[
        "lab",
        "positions",
        "--game",
        &game,
        "--price",
        "2",
        "--seed",
        SEED,
    ]);
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("tier,prize,index"));
    // The block's prize column, ticket by ticket.
    let prizes: Vec<String> = lines(&folder.join("block-00001.csv"))
        .iter()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().to_string())
        .collect();
    let mut seen = vec![false; prizes.len()];
    let mut last: Option<(u32, usize)> = None;
    for row in rows {
        let fields: Vec<&str> = row.split(',').collect();
        let (tier, prize, index): (u32, &str, usize) = (
            fields[0].parse().unwrap(),
            fields[1],
            fields[2].parse().unwrap(),
        );
        assert_eq!(prizes[index], prize, "row {row}");
        assert!(!seen[index], "index {index} twice");
        seen[index] = true;
        // Tier by tier, indexes ascending.
        if let Some((t, i)) = last {
            assert!(tier > t || (tier == t && index > i), "{row} after {t},{i}");
        }
        last = Some((tier, index));
    }
    assert!(seen.iter().all(|&s| s), "every ticket has a row");
    // Another block has other positions.
    let other = w.ok(&[
        "lab",
        "positions",
        "--game",
        &game,
        "--price",
        "2",
        "--seed",
        SEED,
        "--block",
        "2",
    ]);
    assert_ne!(String::from_utf8(other.stdout).unwrap(), csv);
}

#[test]
fn lab_raw_writes_no_binary_onto_a_terminal() {
    let w = Workdir::new();
    let args = [
        "lab", "raw", "--game", "ruche-or", "--price", "2", "--seed", SEED, "--bytes", "64",
    ];
    let Some(said) = on_a_terminal(&w, &args, None) else {
        return;
    };
    assert!(said.contains("lab raw writes binary data"), "{said:?}");
    // Redirected, the same command writes the bytes.
    assert_eq!(w.ok(&args).stdout.len(), 64);
}
