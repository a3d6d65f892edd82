//! The emission as the unit of trust (issue 8): one seed, one key, one definition and one
//! generator per emission (the signed record), test emissions marked as such, the seal, the
//! audit log, custody shares, and no secret in any output.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FOLDER: &str = "emissions/mini-ruche/2/e0001";
const OTHER_SEED: &str = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

fn setup() -> Workdir {
    let w = Workdir::new();
    fixed_test_key(&w);
    w
}

/// `emit` on the mini game with the fixed test key; `extra` may give another seed.
fn emit_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["emit", "--game", &data("mini-ruche.toml"), "--price", "2"]
        .map(String::from)
        .to_vec();
    if !extra
        .iter()
        .any(|a| a.starts_with("--seed") || *a == "--share")
    {
        args.extend(["--seed".into(), SEED.into()]);
    }
    args.extend(["--signing-key", "keys/signing-key.pem", "-q"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(w: &Workdir, args: &[String], code: i32) -> Output {
    w.run_expect(&args.iter().map(String::as_str).collect::<Vec<_>>(), code)
}

fn verify(w: &Workdir, folder: &Path, code: i32) -> String {
    let out = w.run_expect(
        &[
            "verify",
            "--game",
            &data("mini-ruche.toml"),
            "--public-key",
            "keys/public-key.pem",
            folder.to_str().unwrap(),
        ],
        code,
    );
    text(&out)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&read(path)).unwrap()
}

fn copy_block(from: &Path, to: &Path, block: u32) {
    for suffix in [".csv", ".manifest.json", ".manifest.json.sig"] {
        let name = format!("block-{block:05}{suffix}");
        std::fs::copy(from.join(&name), to.join(&name)).unwrap();
    }
}

/// A block of several batches (tests/data/mini-ruche-batches.toml: 20 000 tickets, 10 chunks of
/// 2 048 with the last one short, made and written in 5 batches) is byte for byte the same
/// made by 1 thread through the page cache and by 2 around it, verifies, and holds its prize
/// table: the batches are written in order and the chunks' Merkle trees join on their
/// boundaries (a full block of a built-in game checks the same in seconds, not this fast).
#[test]
fn a_block_of_several_batches_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    let game = data("mini-ruche-batches.toml");
    let folder = emit_with_1_and_2_threads_as(&w, &game, "mini-ruche-batches", "2");
    let out = w.ok(&[
        "verify",
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
        folder.join("block-00001.csv").to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(said.contains("20 000 tickets"), "{said}");
    assert!(said.contains("1 OK, 0 failed"), "{said}");
    openssl_verify(&folder, "block-00001");
    assert_article_3(
        &folder,
        &[
            ("2000", 10),
            ("100", 20),
            ("20", 500),
            ("4", 1_000),
            ("2", 1_500),
            ("0", 16_970),
        ],
        3_030,
        "39000",
    );
}

#[test]
fn an_explicit_seed_file_that_does_not_exist_is_an_error_and_creates_nothing() {
    let w = setup();
    let out = run(&w, &emit_args(&["--seed-file", "secrets/typo.seed"]), 2);
    assert!(text(&out).contains("no such file"), "{}", text(&out));
    assert!(!w.path("secrets").exists(), "nothing is created");
    assert!(!w.path(FOLDER).join("block-00001.csv").exists());
}

#[test]
fn a_run_with_another_seed_key_definition_or_generator_is_refused_naming_both_values() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let folder = w.path(FOLDER);
    let record = json(&folder.join("emission.json"));
    // Another seed.
    let out = run(
        &w,
        &emit_args(&["--seed", OTHER_SEED, "--first-block", "2"]),
        2,
    );
    let said = text(&out);
    assert!(
        said.contains(record["seed_sha256"].as_str().unwrap()),
        "{said}"
    );
    assert!(said.contains("an emission has one seed"), "{said}");
    // Another key.
    w.ok(&["keygen", "--out", "other-keys"]);
    let mut args = emit_args(&["--first-block", "2"]);
    let at = args
        .iter()
        .position(|a| a == "keys/signing-key.pem")
        .unwrap();
    args[at] = "other-keys/signing-key.pem".into();
    let said = text(&run(&w, &args, 2));
    assert!(said.contains("signing key"), "{said}");
    assert!(
        said.contains(record["public_key_sha256"].as_str().unwrap()),
        "{said}"
    );
    // Another definition of the same game (one more comment line changes its SHA-256).
    let other = w.path("mini-ruche-edited.toml");
    let mut def = read(Path::new(&data("mini-ruche.toml")));
    def.extend_from_slice(b"# edited\n");
    std::fs::write(&other, def).unwrap();
    let mut args = emit_args(&["--first-block", "2"]);
    args[2] = other.display().to_string();
    let said = text(&run(&w, &args, 2));
    assert!(said.contains("game definition SHA-256"), "{said}");
    assert!(
        said.contains(record["game_definition_sha256"].as_str().unwrap()),
        "{said}"
    );
    // An emission made by another generator version (its record re-signed with the key).
    let path = folder.join("emission.json");
    let edited = String::from_utf8(read(&path))
        .unwrap()
        .replace("\"generator_version\": 3", "\"generator_version\": 0");
    std::fs::write(&path, edited).unwrap();
    resign(&w, &path);
    let said = text(&run(&w, &emit_args(&["--first-block", "2"]), 2));
    assert!(
        said.contains("generator version: the emission has 0, this run has 3"),
        "{said}"
    );
    assert!(
        !folder.join("block-00002.csv").exists(),
        "nothing was written"
    );
}

#[test]
fn a_seed_in_clear_makes_a_test_emission_marked_in_the_record_and_every_manifest() {
    let w = setup();
    run(&w, &emit_args(&["--blocks", "2"]), 0);
    let folder = w.path(FOLDER);
    assert_eq!(json(&folder.join("emission.json"))["kind"], "test");
    for b in 1..=2 {
        let manifest = json(&folder.join(format!("block-{b:05}.manifest.json")));
        assert_eq!(manifest["emission_kind"], "test");
        assert_eq!(manifest["format"], 3);
        assert_eq!(
            manifest["record_sha256"],
            sha256_file(&folder.join("emission.json")),
            "every manifest names its emission's record by its hash"
        );
        assert!(manifest["generator"]
            .as_str()
            .unwrap()
            .ends_with("(generator 3)"));
    }
    let said = verify(&w, &folder, 0);
    assert!(said.contains("TEST emission"), "{said}");
    // The quick start (no seed option) keeps its seed in clear: a test emission too.
    let q = Workdir::new();
    q.ok(&["emit", "--game", &data("mini-ruche.toml"), "-q"]);
    assert_eq!(json(&q.path(FOLDER).join("emission.json"))["kind"], "test");
}

#[test]
fn blocks_made_by_separate_processes_are_gathered_sealed_and_verified() {
    let w = setup();
    let children: Vec<_> = (1..=3)
        .map(|b| {
            w.command(
                &emit_args(&["--first-block", &b.to_string(), "--emission-blocks", "3"])
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            )
            .output()
        })
        .collect();
    for child in children {
        let out = child.unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let folder = w.path(FOLDER);
    let seal = json(&folder.join("emission.seal.json"));
    assert_eq!(seal["blocks"].as_array().unwrap().len(), 3);
    assert_eq!(seal["tickets"], 6000);
    assert_eq!(seal["winners"], 3 * 303);
    assert_eq!(seal["total_prizes"], "11700");
    for (i, block) in seal["blocks"].as_array().unwrap().iter().enumerate() {
        let manifest = folder.join(format!("block-{:05}.manifest.json", i + 1));
        assert_eq!(block["manifest_sha256"], sha256_file(&manifest));
    }
    let said = verify(&w, &folder, 0);
    assert!(said.contains("OK      emission"), "{said}");
    assert!(!said.contains("not sealed"), "{said}");
    // A sealed emission takes no new block.
    let out = run(&w, &emit_args(&["--first-block", "4"]), 2);
    assert!(text(&out).contains("holds 3 blocks"), "{}", text(&out));
}

#[test]
fn seal_refuses_an_incomplete_emission_naming_the_missing_blocks() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    run(&w, &emit_args(&["--first-block", "3"]), 0);
    let folder = w.path(FOLDER);
    let said = verify(&w, &folder, 0);
    assert!(said.contains("not sealed"), "{said}");
    let seal = |code| {
        text(&w.run_expect(
            &[
                "seal",
                "--game",
                &data("mini-ruche.toml"),
                "--signing-key",
                "keys/signing-key.pem",
                "--blocks",
                "4",
                folder.to_str().unwrap(),
            ],
            code,
        ))
    };
    let said = seal(2);
    assert!(
        said.contains("2 of its 4 blocks are missing: 2, 4"),
        "{said}"
    );
    assert!(!folder.join("emission.seal.json").exists());
    run(&w, &emit_args(&["--first-block", "2"]), 0);
    run(&w, &emit_args(&["--first-block", "4"]), 0);
    let said = seal(0);
    assert!(said.contains("sealed"), "{said}");
    assert!(said.contains("4 blocks, 8 000 tickets"), "{said}");
    assert!(seal(0).contains("already sealed"));
    verify(&w, &folder, 0);
}

/// A sealed emission of 3 blocks with the fixed seed.
fn sealed(w: &Workdir) -> PathBuf {
    run(
        w,
        &emit_args(&["--blocks", "3", "--emission-blocks", "3"]),
        0,
    );
    let folder = w.path(FOLDER);
    assert!(folder.join("emission.seal.json").exists());
    folder
}

#[test]
fn verify_of_a_sealed_emission_names_missing_extra_foreign_and_replaced_blocks() {
    let w = setup();
    let folder = sealed(&w);
    let keep = w.path("kept");
    std::fs::create_dir_all(&keep).unwrap();
    copy_block(&folder, &keep, 2);
    // Missing.
    for suffix in [".csv", ".manifest.json", ".manifest.json.sig"] {
        std::fs::remove_file(folder.join(format!("block-00002{suffix}"))).unwrap();
    }
    let said = verify(&w, &folder, 1);
    assert!(said.contains("sealed blocks missing: 2"), "{said}");
    copy_block(&keep, &folder, 2);
    verify(&w, &folder, 0);
    // Extra: block 4 of the same seed and key, made elsewhere.
    let elsewhere = Workdir::new();
    fixed_test_key(&elsewhere);
    run(&elsewhere, &emit_args(&["--first-block", "4"]), 0);
    copy_block(&elsewhere.path(FOLDER), &folder, 4);
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("blocks that are not in the seal: 4"),
        "{said}"
    );
    for suffix in [".csv", ".manifest.json", ".manifest.json.sig"] {
        std::fs::remove_file(folder.join(format!("block-00004{suffix}"))).unwrap();
    }
    // Foreign: block 2 of another seed, validly signed with the same key.
    let foreign = Workdir::new();
    fixed_test_key(&foreign);
    run(
        &foreign,
        &emit_args(&["--seed", OTHER_SEED, "--blocks", "2"]),
        0,
    );
    copy_block(&foreign.path(FOLDER), &folder, 2);
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("block 2 is not of this emission: seed commitment"),
        "{said}"
    );
    assert!(
        said.contains("block 2's manifest is not the one sealed"),
        "{said}"
    );
}

#[test]
fn the_audit_log_has_a_line_per_run_and_verify_detects_a_deleted_edited_or_truncated_line() {
    let w = setup();
    run(&w, &emit_args(&["--emission-blocks", "3"]), 0);
    run(&w, &emit_args(&["--first-block", "2", "--blocks", "2"]), 0);
    run(&w, &emit_args(&["--first-block", "2", "--blocks", "2"]), 0);
    let folder = w.path(FOLDER);
    let log_path = folder.join("emission.log.jsonl");
    let log = String::from_utf8(read(&log_path)).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 4, "{log}");
    let entry = |i: usize| -> serde_json::Value { serde_json::from_str(lines[i]).unwrap() };
    assert_eq!(entry(0)["command"], "emit");
    assert_eq!(entry(0)["blocks_made"], serde_json::json!([1]));
    assert_eq!(entry(1)["blocks_made"], serde_json::json!([2, 3]));
    assert_eq!(entry(1)["result"], "ok");
    // The run that completed the emission sealed it; the seal covers that line.
    assert!(entry(2)["result"].as_str().unwrap().starts_with("sealing"));
    assert_eq!(json(&folder.join("emission.seal.json"))["log_lines"], 3);
    assert_eq!(entry(3)["blocks_kept"], serde_json::json!([2, 3]));
    assert!(!log.contains(SEED), "the seed never reaches the log");
    assert!(log.contains("\"--seed\",\"<redacted: seed>\""), "{log}");
    verify(&w, &folder, 0);
    let tampered = [
        // A line deleted.
        format!("{}\n{}\n{}\n", lines[0], lines[2], lines[3]),
        // A line edited.
        log.replace("\"blocks_made\":[2,3]", "\"blocks_made\":[2]"),
        // Truncated at a line end, before the sealed point.
        format!("{}\n{}\n", lines[0], lines[1]),
        // Truncated in the middle of a line.
        log[..log.len() - 3].to_string(),
    ];
    for (i, bad) in tampered.iter().enumerate() {
        std::fs::write(&log_path, bad).unwrap();
        let said = verify(&w, &folder, 1);
        assert!(said.contains("emission.log.jsonl"), "case {i}: {said}");
    }
    std::fs::write(&log_path, &log).unwrap();
    verify(&w, &folder, 0);
}

#[test]
fn a_replay_refuses_a_block_made_by_another_generator_version() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let manifest = w.path(FOLDER).join("block-00001.manifest.json");
    let edited = String::from_utf8(read(&manifest))
        .unwrap()
        .replace("(generator 3)", "(generator 2)");
    std::fs::write(&manifest, edited).unwrap();
    resign(&w, &manifest);
    let out = w.run_expect(
        &[
            "verify",
            "--game",
            &data("mini-ruche.toml"),
            "--public-key",
            "keys/public-key.pem",
            "--seed",
            SEED,
            manifest.with_file_name("block-00001.csv").to_str().unwrap(),
        ],
        1,
    );
    let said = text(&out);
    assert!(said.contains("(generator 2)"), "{said}");
    assert!(said.contains("this program is generator 3"), "{said}");
    // Without --seed the decoder is the referee whatever generator made the block: a block of
    // generator 2 (as every block made before generator 3) still verifies.
    let said = verify(&w, &manifest.with_file_name("block-00001.csv"), 0);
    assert!(said.contains("OK "), "{said}");
    // So does one of generator 1.
    let edited = String::from_utf8(read(&manifest))
        .unwrap()
        .replace("(generator 2)", "(generator 1)");
    std::fs::write(&manifest, edited).unwrap();
    resign(&w, &manifest);
    let said = verify(&w, &manifest.with_file_name("block-00001.csv"), 0);
    assert!(said.contains("OK "), "{said}");
    // emit does not keep it either.
    let said = text(&run(&w, &emit_args(&[]), 2));
    assert!(said.contains("this program is generator 3"), "{said}");
}

fn have(tool: &str) -> bool {
    require_tool(tool, &["--version"], ".ci/run installs it")
}

/// Makes three custodians' identities with age-keygen and a 2-of-3 share set.
fn custody(w: &Workdir) -> Vec<String> {
    let mut recipients = Vec::new();
    for name in ["alice", "bob", "carol"] {
        let out = Command::new("age-keygen")
            .arg("-o")
            .arg(w.path(&format!("{name}.key")))
            .output()
            .unwrap();
        assert!(out.status.success());
        let key = String::from_utf8(read(&w.path(&format!("{name}.key")))).unwrap();
        let public = key
            .lines()
            .find_map(|l| l.strip_prefix("# public key: "))
            .unwrap()
            .to_string();
        recipients.push(public);
    }
    let mut args = vec![
        "seed".to_string(),
        "--game".into(),
        data("mini-ruche.toml"),
        "--price".into(),
        "2".into(),
        "--shares-needed".into(),
        "2".into(),
        "--out".into(),
        "shares".into(),
        "--signing-key".into(),
        "keys/signing-key.pem".into(),
    ];
    for r in &recipients {
        args.extend(["--recipient".into(), r.clone()]);
    }
    run(w, &args, 0);
    (1..=3)
        .map(|i| format!("shares/mini-ruche-2-e0001.share-{i}-of-3.age"))
        .collect()
}

#[test]
fn only_custody_shares_make_a_production_emission_and_any_two_of_three_extend_it() {
    if !have("age-keygen") {
        return;
    }
    let w = setup();
    let shares = custody(&w);
    let with = |s: [usize; 2], ids: [&str; 2], extra: &[&str]| {
        let mut args: Vec<String> = vec![
            "--share".into(),
            shares[s[0]].clone(),
            "--share".into(),
            shares[s[1]].clone(),
            "--identity".into(),
            ids[0].into(),
            "--identity".into(),
            ids[1].into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        emit_args(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let folder = w.path(FOLDER);
    // The seed run is the first line of the emission's audit log.
    let log = String::from_utf8(read(&folder.join("emission.log.jsonl"))).unwrap();
    let first: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(first["command"], "seed");
    let result = first["result"].as_str().unwrap();
    assert!(
        result.starts_with("ok: emission.json (SHA-256 ") && result.ends_with("(2 of 3)"),
        "{result}"
    );
    let out = run(&w, &with([0, 2], ["alice.key", "carol.key"], &[]), 0);
    assert!(text(&out).contains("production emission"), "{}", text(&out));
    let record = json(&folder.join("emission.json"));
    assert_eq!(record["kind"], "production");
    assert_eq!(record["custody"]["threshold"], 2);
    assert_eq!(record["custody"]["shares"], 3);
    // The ceremony's record lists the whole set; emit did not rewrite it.
    assert_eq!(record["custody"]["files"].as_array().unwrap().len(), 3);
    assert!(record["custody"].get("used").is_none());
    assert_eq!(
        json(&folder.join("block-00001.manifest.json"))["emission_kind"],
        "production"
    );
    // Two other custodians extend it.
    run(
        &w,
        &with([1, 2], ["bob.key", "carol.key"], &["--first-block", "2"]),
        0,
    );
    // A seed in clear cannot join a production emission, and nothing is made trying.
    let private_before = std::fs::read_dir(w.path("emissions/private"))
        .map(|d| d.count())
        .unwrap_or(0);
    let said = text(&run(&w, &emit_args(&["--first-block", "3"]), 2));
    assert!(said.contains("is a production emission"), "{said}");
    let private_after = std::fs::read_dir(w.path("emissions/private"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(
        private_before, private_after,
        "a seed or key file was made: {said}"
    );
    // Nor when an insider edits the record to say `test` (its signature then fails): the run
    // without shares that would draw its own seed and key is refused before it makes either.
    // (The kind was read without the signature: a new seed and key were written into
    // private/, then the signed read refused the run.)
    let record_path = folder.join("emission.json");
    let record_bytes = read(&record_path);
    let edited = String::from_utf8(record_bytes.clone())
        .unwrap()
        .replace("\"kind\": \"production\"", "\"kind\": \"test\"");
    assert_ne!(edited.as_bytes(), &record_bytes[..], "the kind was edited");
    std::fs::write(&record_path, edited).unwrap();
    let own = [
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "-q",
        "--first-block",
        "3",
    ];
    let said = text(&w.run_expect(&own, 2));
    assert!(
        said.contains("emission.json") && said.contains("Nothing was written"),
        "{said}"
    );
    let private_after = std::fs::read_dir(w.path("emissions/private"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(
        private_before, private_after,
        "a seed or key file was made for an edited record: {said}"
    );
    std::fs::write(&record_path, &record_bytes).unwrap();
    // The auditor rebuilds the seed from two shares and replays every ticket.
    let out = w.ok(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        "--public-key",
        "keys/public-key.pem",
        "--share",
        &shares[0],
        "--share",
        &shares[1],
        "--identity",
        "alice.key",
        "--identity",
        "bob.key",
        folder.to_str().unwrap(),
    ]);
    assert!(text(&out).contains("2 OK, 0 failed"), "{}", text(&out));
    assert!(
        text(&out).contains("(production emission)"),
        "{}",
        text(&out)
    );
    // One share is not enough.
    let out = w.run(&[
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--share",
        &shares[0],
        "--identity",
        "alice.key",
        "--signing-key",
        "keys/signing-key.pem",
        "--first-block",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!folder.join("block-00003.csv").exists());
}

/// Every file under `dir`, recursively, except the folders named in `skip`.
fn files_under(dir: &Path, skip: &[&str], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !skip.contains(&name.as_str()) {
                files_under(&path, skip, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n =
            chunk.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[test]
fn no_seed_or_private_key_reaches_any_output_log_or_emission_file() {
    let w = setup();
    let mut outputs: Vec<u8> = Vec::new();
    let mut keep = |out: Output| {
        outputs.extend_from_slice(&out.stdout);
        outputs.extend_from_slice(&out.stderr);
    };
    // A test emission from --seed, sealed and verified with the seed.
    keep(run(
        &w,
        &emit_args(&["--blocks", "2", "--emission-blocks", "2"]),
        0,
    ));
    keep(w.ok(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        "--seed",
        SEED,
        w.path(FOLDER).to_str().unwrap(),
    ]));
    // The quick start: a fresh seed and a one-time key, in another emission.
    let game = data("mini-ruche.toml");
    keep(w.ok(&["emit", "--game", &game, "--emission", "2"]));
    keep(w.ok(&[
        "emit",
        "--game",
        &game,
        "--emission",
        "2",
        "--first-block",
        "2",
    ]));
    keep(w.ok(&[
        "seal",
        "--game",
        &game,
        "--blocks",
        "2",
        w.path("emissions/mini-ruche/2/e0002").to_str().unwrap(),
    ]));
    let fresh_seed = String::from_utf8(read(&w.path("emissions/private/mini-ruche-2-e0002.seed")))
        .unwrap()
        .trim()
        .to_string();
    let mut secrets: Vec<String> = Vec::new();
    for seed in [SEED.to_string(), fresh_seed] {
        let bytes = hex::decode(&seed).unwrap();
        secrets.push(seed.clone());
        secrets.push(seed.to_uppercase());
        secrets.push(base64(&bytes).trim_end_matches('=').to_string());
    }
    for key_file in [
        w.path("keys/signing-key.pem"),
        w.path("emissions/private/mini-ruche-2-e0002.signing-key.pem"),
    ] {
        let pem = String::from_utf8(read(&key_file)).unwrap();
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        secrets.push(body.clone());
        // The raw 32 secret bytes end the PKCS#8 v1 DER.
        let der = {
            let mut out = Vec::new();
            let mut acc = 0u32;
            let mut bits = 0;
            for c in body.bytes().filter(|&c| c != b'=') {
                let v = match c {
                    b'A'..=b'Z' => c - b'A',
                    b'a'..=b'z' => c - b'a' + 26,
                    b'0'..=b'9' => c - b'0' + 52,
                    b'+' => 62,
                    _ => 63,
                };
                acc = (acc << 6) | u32::from(v);
                bits += 6;
                if bits >= 8 {
                    bits -= 8;
                    out.push((acc >> bits) as u8);
                }
            }
            out
        };
        let raw = &der[der.len() - 32..];
        secrets.push(hex::encode(raw));
        secrets.push(base64(raw).trim_end_matches('=').to_string());
    }
    let mut files = Vec::new();
    files_under(&w.path("emissions"), &["private"], &mut files);
    assert!(files.len() > 10, "{files:?}");
    let mut haystacks: Vec<(String, Vec<u8>)> = vec![("outputs".into(), outputs)];
    for f in files {
        haystacks.push((f.display().to_string(), read(&f)));
    }
    for (name, bytes) in &haystacks {
        let text = String::from_utf8_lossy(bytes);
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "a secret reached {name}");
        }
    }
}

// ---- honest outputs (issue 20 item 6) ----

#[test]
fn a_seed_replay_says_so_per_block_and_for_the_run() {
    let w = setup();
    run(&w, &emit_args(&["--blocks", "2"]), 0);
    let folder = w.path(FOLDER);
    let game = data("mini-ruche.toml");
    let plain = text(&w.ok(&["verify", "--game", &game, folder.to_str().unwrap()]));
    assert!(!plain.contains("seed replay"), "{plain}");
    let replay = text(&w.ok(&[
        "verify",
        "--game",
        &game,
        "--seed",
        SEED,
        folder.to_str().unwrap(),
    ]));
    assert_eq!(
        replay
            .matches("seed replay OK: 2 000 prizes and layouts re-derived")
            .count(),
        2,
        "{replay}"
    );
    assert!(
        replay.contains("seed replay: 2 of 2 block(s) replayed from the seed and matched"),
        "{replay}"
    );
}

#[test]
fn a_run_that_fails_after_publishing_blocks_logs_them_and_names_the_sudo_user() {
    let w = setup();
    let folder = w.path(FOLDER);
    // Block 2 exists and is damaged: a run of blocks 1 to 3 publishes block 1, then stops.
    run(&w, &emit_args(&["--first-block", "2"]), 0);
    let csv = folder.join("block-00002.csv");
    let mut bytes = read(&csv);
    let at = bytes.len() - 3;
    bytes[at] = if bytes[at] == b'a' { b'b' } else { b'a' };
    std::fs::write(&csv, bytes).unwrap();
    let args = emit_args(&["--blocks", "3"]);
    let out = w
        .command(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .env("SUDO_USER", "alice")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(folder.join("block-00001.manifest.json").exists());
    let log = String::from_utf8(read(&folder.join("emission.log.jsonl"))).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert!(
        last["result"].as_str().unwrap().starts_with("error"),
        "{last}"
    );
    assert_eq!(last["blocks_made"], serde_json::json!([1]), "{last}");
    let user = last["user"].as_str().unwrap();
    assert!(user.contains("via sudo by alice"), "{user}");
    assert!(!last["host"].as_str().unwrap().is_empty());
}

// ---- issue 20, item 3: evidence cannot be removed quietly ----

/// `verify` of `folder` with the test key and `extra` options.
fn verify_with(w: &Workdir, folder: &Path, extra: &[&str], code: i32) -> String {
    let mut args = vec![
        "verify",
        "--game",
        "",
        "--public-key",
        "keys/public-key.pem",
    ];
    let game = data("mini-ruche.toml");
    args[2] = &game;
    args.extend_from_slice(extra);
    let folder = folder.to_str().unwrap();
    args.push(folder);
    text(&w.run_expect(&args, code))
}

/// A production emission of the mini game (block 1), its seed in three shares made with the
/// age crate (two of them used), in the workdir's `FOLDER`.
fn production(w: &Workdir) -> PathBuf {
    use age::secrecy::ExposeSecret;
    use std::os::unix::fs::PermissionsExt;
    let mut seed_args: Vec<String> = [
        "seed",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "--shares-needed",
        "2",
        "--out",
        "shares",
    ]
    .map(String::from)
    .to_vec();
    for i in 1..=3 {
        let identity = age::x25519::Identity::generate();
        let public = identity.to_public().to_string();
        let path = w.path(&format!("custodian-{i}.key"));
        std::fs::write(
            &path,
            format!(
                "# public key: {public}\n{}\n",
                identity.to_string().expose_secret()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        seed_args.extend(["--recipient".into(), public]);
    }
    seed_args.extend(["--signing-key".into(), "keys/signing-key.pem".into()]);
    run(w, &seed_args, 0);
    let shares = [1, 2].map(|i| format!("shares/mini-ruche-2-e0001.share-{i}-of-3.age"));
    run(
        w,
        &emit_args(&[
            "--share",
            &shares[0],
            "--share",
            &shares[1],
            "--identity",
            "custodian-1.key",
            "--identity",
            "custodian-2.key",
        ]),
        0,
    );
    let folder = w.path(FOLDER);
    assert_eq!(json(&folder.join("emission.json"))["kind"], "production");
    folder
}

#[test]
fn a_deleted_record_fails_verify_and_so_does_a_test_block_dropped_into_a_production_folder() {
    let w = setup();
    let folder = production(&w);
    verify(&w, &folder, 0);
    // Block 2 of a test emission of the same game, stake and number, signed with the same key.
    let test = Workdir::new();
    fixed_test_key(&test);
    run(
        &test,
        &emit_args(&["--seed", OTHER_SEED, "--first-block", "2"]),
        0,
    );
    copy_block(&test.path(FOLDER), &folder, 2);
    let said = verify(&w, &folder, 1);
    assert!(said.contains("block 2 is not of this emission"), "{said}");
    // With the record deleted, nothing says which emission the folder holds: that fails.
    for name in ["emission.json", "emission.json.sig"] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    let said = verify(&w, &folder, 1);
    assert!(said.contains("no emission record"), "{said}");
    assert!(said.contains("FAILED  emission"), "{said}");
    assert!(!said.contains("OK      emission"), "{said}");
    // The dropped block named alone fails too.
    let said = verify(&w, &folder.join("block-00002.csv"), 1);
    assert!(said.contains("no emission record"), "{said}");
    // A record that cannot be read fails as well.
    std::fs::write(folder.join("emission.json"), "{").unwrap();
    let said = verify(&w, &folder, 1);
    assert!(said.contains("emission.json"), "{said}");
}

#[test]
fn a_sealed_emission_that_lost_its_seal_fails_and_a_complete_one_must_be_sealed() {
    let w = setup();
    let folder = sealed(&w);
    for name in ["emission.seal.json", "emission.seal.json.sig"] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    let said = verify(&w, &folder, 1);
    assert!(said.contains("the audit log records a seal"), "{said}");
    // --allow-unsealed does not excuse a seal that the log says was made.
    let said = verify_with(&w, &folder, &["--allow-unsealed"], 1);
    assert!(said.contains("the audit log records a seal"), "{said}");
    // Without the log either, the emission is complete (its record plans 3 blocks, all here)
    // and not sealed: that fails unless --allow-unsealed says it is expected; and the log's
    // loss fails on its own, --allow-unsealed or not.
    std::fs::remove_file(folder.join("emission.log.jsonl")).unwrap();
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("all its 3 planned blocks are here, but it is not sealed"),
        "{said}"
    );
    let said = verify_with(&w, &folder, &["--allow-unsealed"], 1);
    assert!(
        said.contains("the audit log was deleted or emptied"),
        "{said}"
    );
}

/// The run that writes the record appends a signed line, so an emission folder with a record
/// and no log (or an empty one, or one of unsigned lines only) lost its log: verify fails,
/// sealed or not. (An unsealed emission's whole log could be deleted and verify said OK.)
#[test]
fn a_deleted_or_emptied_log_of_an_unsealed_emission_fails_verify() {
    let w = setup();
    run(&w, &emit_args(&["--emission-blocks", "3"]), 0);
    let folder = w.path(FOLDER);
    let log = folder.join("emission.log.jsonl");
    let kept = read(&log);
    assert!(!kept.is_empty());
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
    std::fs::remove_file(&log).unwrap();
    assert!(!log.exists(), "the log was deleted");
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("missing or empty, though the record is there"),
        "{said}"
    );
    std::fs::write(&log, b"").unwrap();
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("the audit log was deleted or emptied"),
        "{said}"
    );
    std::fs::write(&log, &kept).unwrap();
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
}

#[test]
fn an_emission_one_of_whose_blocks_failed_is_failed() {
    let w = setup();
    run(&w, &emit_args(&["--blocks", "2"]), 0);
    let folder = w.path(FOLDER);
    let csv = folder.join("block-00002.csv");
    let mut bytes = read(&csv);
    let at = bytes.len() - 2;
    bytes[at] ^= 1;
    std::fs::write(&csv, bytes).unwrap();
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("FAILED  ") && said.contains("block-00002.csv"),
        "{said}"
    );
    assert!(said.contains("FAILED  emission"), "{said}");
    assert!(said.contains("block 2 failed"), "{said}");
    assert!(!said.contains("OK      emission"), "{said}");
}

/// `file`'s top-level object written as a JSON array of its values, in order.
fn as_array(file: &Path) -> String {
    let text = String::from_utf8(read(file)).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let line = match line.strip_prefix("  \"") {
            Some(rest) if !line.starts_with("   ") => {
                format!("  {}", &rest[rest.find("\": ").unwrap() + 3..])
            }
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let out = out.replacen('{', "[", 1);
    let end = out.rfind('}').unwrap();
    format!("{}]{}", &out[..end], &out[end + 1..])
}

#[test]
fn signed_documents_as_arrays_or_with_unknown_missing_or_duplicate_keys_are_refused() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let unsealed = w.path(FOLDER);
    let s = Workdir::new();
    fixed_test_key(&s);
    let sealed = sealed(&s);
    let manifest = unsealed.join("block-00001.manifest.json");
    let record = unsealed.join("emission.json");
    let seal = sealed.join("emission.seal.json");
    for (w, folder, file, missing) in [
        (&w, &unsealed, &manifest, "  \"tickets_root\""),
        (&w, &unsealed, &record, "  \"blocks\""),
        (&s, &sealed, &seal, "  \"log_lines\""),
    ] {
        let original = read(file);
        let signature = read(&PathBuf::from(format!("{}.sig", file.display())));
        verify(w, folder, 0);
        let text = String::from_utf8(original.clone()).unwrap();
        let without: String = text
            .lines()
            .filter(|l| !l.starts_with(missing))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_ne!(without, text);
        let variants = [
            ("array", as_array(file)),
            (
                "unknown",
                text.replacen("{\n", "{\n  \"note\": \"x\",\n", 1),
            ),
            (
                "duplicate",
                text.replacen("{\n", "{\n  \"game\": \"mini-ruche\",\n", 1),
            ),
            ("missing", without),
        ];
        for (what, bytes) in variants {
            std::fs::write(file, &bytes).unwrap();
            resign(w, file);
            let said = verify(w, folder, 1);
            let name = file.file_name().unwrap().to_str().unwrap();
            assert!(said.contains(name), "{what} {name}: {said}");
            assert!(said.contains(what), "{what} {name}: {said}");
        }
        std::fs::write(file, &original).unwrap();
        std::fs::write(format!("{}.sig", file.display()), &signature).unwrap();
        verify(w, folder, 0);
    }
}

#[test]
fn a_resigned_seal_whose_numbers_are_not_the_blocks_fails() {
    let w = setup();
    let folder = sealed(&w);
    let seal = folder.join("emission.seal.json");
    let original = read(&seal);
    let signature = read(&folder.join("emission.seal.json.sig"));
    let entry_3 = {
        let text = String::from_utf8(original.clone()).unwrap();
        let start = text.find("    {\n      \"block\": 3,").unwrap();
        let end = start + text[start..].find("    }").unwrap() + 5;
        text[start..end].to_string()
    };
    let text = String::from_utf8(original.clone()).unwrap();
    let once = |from: &str, to: &str| {
        assert_eq!(text.matches(from).count(), 1, "{from}");
        text.replacen(from, to, 1)
    };
    let sealed_line = {
        let at = text.find("  \"sealed\": \"").unwrap();
        &text[at..at + text[at..].find('\n').unwrap()]
    };
    let edits = [
        (
            once("  \"tickets\": 6000,", "  \"tickets\": 6001,"),
            "tickets",
        ),
        (
            once(
                "  \"total_prizes\": \"11700\",",
                "  \"total_prizes\": \"11701\",",
            ),
            "total",
        ),
        (once("\"winners\": 909,", "\"winners\": 910,"), "winners"),
        // One block's count changed, and the total with it.
        (
            once("\"winners\": 909,", "\"winners\": 910,").replacen(
                "\"winners\": 303,",
                "\"winners\": 304,",
                1,
            ),
            "winners",
        ),
        (
            once("\"kind\": \"test\"", "\"kind\": \"production\""),
            "kind",
        ),
        (
            once(&entry_3, &format!("{entry_3},\n{entry_3}")),
            "block 3 is sealed twice",
        ),
        // Sealed before the emission's record was made.
        (
            once(sealed_line, "  \"sealed\": \"1999-12-31T00:00:00Z\""),
            "sealed",
        ),
    ];
    for (bytes, needle) in &edits {
        std::fs::write(&seal, bytes).unwrap();
        resign(&w, &seal);
        let said = verify(&w, &folder, 1);
        assert!(said.contains("emission.seal.json"), "{needle}: {said}");
        assert!(said.contains(needle), "{needle}: {said}");
    }
    std::fs::write(&seal, &original).unwrap();
    std::fs::write(folder.join("emission.seal.json.sig"), &signature).unwrap();
    verify(&w, &folder, 0);
}

#[test]
fn an_emission_pub_pem_that_is_not_the_emission_key_fails() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let folder = w.path(FOLDER);
    w.ok(&["keygen", "--out", "other-keys"]);
    std::fs::copy(
        w.path("other-keys/public-key.pem"),
        folder.join("emission.pub.pem"),
    )
    .unwrap();
    let said = verify(&w, &folder, 1);
    assert!(said.contains("emission.pub.pem"), "{said}");
    assert!(said.contains("public_key_sha256"), "{said}");
}

/// A record signed by the key given with --public-key but naming another key, which is the
/// one in `emission.pub.pem`: the folder's key is not the one the verifier trusts, whatever the
/// record says (the record's own check passes: it names the file's key).
#[test]
fn an_emission_pub_pem_that_is_not_the_key_given_fails() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let folder = w.path(FOLDER);
    let other = w.ok(&["keygen", "--out", "other-keys", "-q"]);
    let other_sha = String::from_utf8(other.stdout).unwrap().trim().to_string();
    assert_eq!(other_sha.len(), 64, "{other_sha}");
    let record_path = folder.join("emission.json");
    let record = String::from_utf8(read(&record_path)).unwrap();
    let ours = json(&record_path)["public_key_sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let edited = record.replace(&ours, &other_sha);
    assert_ne!(edited, record);
    std::fs::write(&record_path, edited).unwrap();
    resign(&w, &record_path);
    std::fs::copy(
        w.path("other-keys/public-key.pem"),
        folder.join("emission.pub.pem"),
    )
    .unwrap();
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("emission.pub.pem: it is not the key given with --public-key"),
        "{said}"
    );
}

/// Sets every line's `prev_sha256` to the SHA-256 of the line before, as an insider editing the
/// log without the key would.
fn rechain(lines: &[String]) -> String {
    use sha2::{Digest, Sha256};
    let mut out = String::new();
    let mut prev = "0".repeat(64);
    for line in lines {
        let at = line.find("\"prev_sha256\":\"").unwrap() + 15;
        let line = format!("{}{}{}", &line[..at], prev, &line[at + 64..]);
        prev = hex::encode(Sha256::digest(line.as_bytes()));
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn a_log_rewritten_and_rechained_without_the_key_fails_verify() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    run(&w, &emit_args(&["--first-block", "2"]), 0);
    run(&w, &emit_args(&["--first-block", "3"]), 0);
    let folder = w.path(FOLDER);
    let path = folder.join("emission.log.jsonl");
    let log = String::from_utf8(read(&path)).unwrap();
    let lines: Vec<String> = log.lines().map(String::from).collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert_eq!(
        rechain(&lines),
        log,
        "re-chaining an intact log changes nothing"
    );
    verify(&w, &folder, 0);
    let edit = |i: usize, from: &str, to: &str| {
        let mut l = lines.clone();
        assert!(l[i].contains(from), "{from} in line {i}");
        l[i] = l[i].replacen(from, to, 1);
        l
    };
    let user = serde_json::from_str::<serde_json::Value>(&lines[0]).unwrap()["user"]
        .as_str()
        .unwrap()
        .to_string();
    let time = serde_json::from_str::<serde_json::Value>(&lines[2]).unwrap()["time"]
        .as_str()
        .unwrap()
        .to_string();
    let rewrites: Vec<(&str, Vec<String>)> = vec![
        (
            "blocks made",
            edit(1, "\"blocks_made\":[2]", "\"blocks_made\":[]"),
        ),
        (
            "result",
            edit(1, "\"result\":\"ok\"", "\"result\":\"error: disk full\""),
        ),
        (
            "user",
            edit(
                0,
                &format!("\"user\":\"{user}\""),
                "\"user\":\"someone-else\"",
            ),
        ),
        (
            "time",
            edit(
                2,
                &format!("\"time\":\"{time}\""),
                "\"time\":\"2001-01-01T00:00:00Z\"",
            ),
        ),
        ("deleted", vec![lines[0].clone(), lines[2].clone()]),
        (
            "inserted",
            vec![
                lines[0].clone(),
                lines[1].replacen("\"blocks_made\":[2]", "\"blocks_made\":[7]", 1),
                lines[1].clone(),
                lines[2].clone(),
            ],
        ),
        (
            "reordered",
            vec![lines[0].clone(), lines[2].clone(), lines[1].clone()],
        ),
        ("unsigned", {
            let mut l = lines.clone();
            let at = l[2].find(",\"signature\":").unwrap_or(l[2].len() - 1);
            l[2] = format!("{}}}", &l[2][..at]);
            l
        }),
        ("unsigned seed line", {
            let mut l = lines.clone();
            let at = l[2].find(",\"signature\":").unwrap_or(l[2].len() - 1);
            l[2] = format!("{}}}", &l[2][..at]).replacen(
                "\"command\":\"emit\"",
                "\"command\":\"seed\"",
                1,
            );
            l
        }),
    ];
    for (what, rewritten) in &rewrites {
        std::fs::write(&path, rechain(rewritten)).unwrap();
        let said = verify(&w, &folder, 1);
        assert!(said.contains("emission.log.jsonl"), "{what}: {said}");
        assert!(said.contains("signature"), "{what}: {said}");
    }
    std::fs::write(&path, &log).unwrap();
    verify(&w, &folder, 0);
}

#[test]
fn the_record_and_the_seal_can_be_pinned_by_their_sha256() {
    let w = setup();
    let folder = sealed(&w);
    let record = sha256_file(&folder.join("emission.json"));
    let seal = sha256_file(&folder.join("emission.seal.json"));
    let other = "ab".repeat(32);
    verify_with(
        &w,
        &folder,
        &["--record-sha256", &record, "--seal-sha256", &seal],
        0,
    );
    let said = verify_with(&w, &folder, &["--record-sha256", &other], 1);
    assert!(said.contains("--record-sha256"), "{said}");
    let said = verify_with(&w, &folder, &["--seal-sha256", &other], 1);
    assert!(said.contains("--seal-sha256"), "{said}");
    // The lines after the seal can be cut without a trace in the folder itself, but a pinned
    // seal still fixes every line up to it; a seal deleted with its log fails the pin.
    for name in [
        "emission.seal.json",
        "emission.seal.json.sig",
        "emission.log.jsonl",
    ] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    let said = verify_with(
        &w,
        &folder,
        &["--allow-unsealed", "--seal-sha256", &seal],
        1,
    );
    assert!(said.contains("--seal-sha256"), "{said}");
    let said = w.run_expect(
        &["verify", "--record-sha256", "12", folder.to_str().unwrap()],
        2,
    );
    assert!(text(&said).contains("64 hex digits"), "{}", text(&said));
}

#[test]
fn a_record_replaced_by_another_signed_record_of_the_same_emission_fails_from_every_block() {
    // Two runs of the same test emission (same seed, key, game, stake, number), in two places at
    // two times: their records are both validly signed and differ only in `created`.
    let w = setup();
    for (out, time) in [("a", "1764547200"), ("b", "1764633600")] {
        // Not sealed: the seal names the record's hash too, which would be the only check.
        let args = emit_args(&["--blocks", "2", "--out", out]);
        let out = w
            .command(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .env("SOURCE_DATE_EPOCH", time)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    let a = w.path("a/mini-ruche/2/e0001");
    let b = w.path("b/mini-ruche/2/e0001");
    assert_ne!(
        read(&a.join("emission.json")),
        read(&b.join("emission.json")),
        "the attack needs two different records"
    );
    verify_with(&w, &a, &["--allow-unsealed"], 0);
    // The insider swaps in the other record and its signature (no key needed).
    for name in ["emission.json", "emission.json.sig"] {
        std::fs::copy(b.join(name), a.join(name)).unwrap();
    }
    let said = verify_with(&w, &a, &["--allow-unsealed"], 1);
    assert!(
        said.contains("block 1 is not of this emission")
            && said.contains("the record was replaced"),
        "{said}"
    );
    // A block alone names its folder's record too.
    let said = verify_with(&w, &a.join("block-00002.csv"), &["--allow-unsealed"], 1);
    assert!(said.contains("the record was replaced"), "{said}");
}

#[test]
fn a_format_2_manifest_is_still_read_and_a_format_3_one_must_name_its_record() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let folder = w.path(FOLDER);
    let path = folder.join("block-00001.manifest.json");
    let original = String::from_utf8(read(&path)).unwrap();
    let line = original
        .lines()
        .find(|l| l.contains("\"record_sha256\""))
        .expect("a format 3 manifest names its record")
        .to_string();
    // Without the field, format 3 is refused even when signed by the emission's key.
    let stripped = original.replace(&format!("{line}\n"), "").replace(
        "\"emission_kind\": \"test\",",
        "\"emission_kind\": \"test\"",
    );
    std::fs::write(&path, &stripped).unwrap();
    resign(&w, &path);
    let said = verify(&w, &folder, 1);
    assert!(said.contains("has the field record_sha256"), "{said}");
    // The same bytes as a format 2 manifest (made before the field existed) verify.
    std::fs::write(&path, stripped.replace("\"format\": 3,", "\"format\": 2,")).unwrap();
    resign(&w, &path);
    verify(&w, &folder, 0);
}

#[test]
fn the_definition_is_kept_in_the_emission_folder_and_verify_needs_no_game_option() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let folder = w.path(FOLDER);
    let copy = folder.join("emission.game.toml");
    assert_eq!(read(&copy), read(Path::new(&data("mini-ruche.toml"))));
    let plain = |code| {
        text(&w.run_expect(
            &[
                "verify",
                "--public-key",
                "keys/public-key.pem",
                "--allow-unsealed",
                FOLDER,
            ],
            code,
        ))
    };
    let said = plain(0);
    assert!(said.contains("OK      "), "{said}");
    // A changed copy is never used: one added comment, and verify says which file changed.
    let mut changed = read(&copy);
    changed.extend_from_slice(b"# an added comment\n");
    std::fs::write(&copy, &changed).unwrap();
    let said = plain(1);
    assert!(
        said.contains("emission.game.toml has SHA-256")
            && said.contains("copy of its definition was changed"),
        "{said}"
    );
    // And the next run refuses to work on under a changed copy.
    let out = w.run_expect(
        &emit_args(&["--first-block", "2"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        2,
    );
    assert!(text(&out).contains("emission.game.toml"), "{}", text(&out));
    // Without the copy, a game that is not built in needs --game, as before.
    std::fs::remove_file(&copy).unwrap();
    let said = plain(1);
    assert!(said.contains("give --game"), "{said}");
}

/// `--emission-blocks` given to a later run of an emission whose record plans no block count
/// is refused, naming the fix (issue 20: it was ignored silently), and nothing is written.
#[test]
fn emission_blocks_given_once_the_record_plans_none_is_refused_naming_the_fix() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let record = read(&w.path(FOLDER).join("emission.json"));
    let out = run(
        &w,
        &emit_args(&["--first-block", "2", "--emission-blocks", "3"]),
        2,
    );
    let said = text(&out);
    assert!(said.contains("no planned block count"), "{said}");
    assert!(said.contains("leave out --emission-blocks"), "{said}");
    assert!(said.contains("Nothing was written"), "{said}");
    assert!(!w.path(FOLDER).join("block-00002.csv").exists());
    assert_eq!(read(&w.path(FOLDER).join("emission.json")), record);
}

/// `seal` of an emission of a game that is not built in reads the definition kept in its
/// folder, as `verify` does, so the hints that say "run `emission-factory seal FOLDER`" can be
/// run as printed (it asked for `--game` before); a changed copy is refused, naming it.
#[test]
fn seal_of_a_custom_game_uses_the_definition_kept_in_its_folder() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let seal = |code| {
        text(&w.run_expect(
            &[
                "seal",
                "--signing-key",
                "keys/signing-key.pem",
                "--blocks",
                "1",
                FOLDER,
            ],
            code,
        ))
    };
    let copy = w.path(FOLDER).join("emission.game.toml");
    let kept = read(&copy);
    let mut changed = kept.clone();
    changed.extend_from_slice(b"# an added comment\n");
    std::fs::write(&copy, &changed).unwrap();
    let said = seal(2);
    assert!(said.contains("emission.game.toml"), "{said}");
    assert!(!w.path(FOLDER).join("emission.seal.json").exists());
    std::fs::write(&copy, &kept).unwrap();
    let said = seal(0);
    assert!(said.contains("sealed"), "{said}");
    let said = text(&w.run_expect(
        &["verify", "--public-key", "keys/public-key.pem", FOLDER],
        0,
    ));
    assert!(said.contains("OK      emission"), "{said}");
}

/// The record names the emission's copy of its definition, so that deleting the copy (a verify
/// with `--game` then passed: the copy was only a convenience) or replacing it is caught by
/// verify, whatever definition is given; a later emit writes a deleted copy again.
#[test]
fn the_definition_copy_the_record_names_cannot_be_deleted_or_replaced() {
    let w = setup();
    run(&w, &emit_args(&[]), 0);
    let record = String::from_utf8(read(&w.path(FOLDER).join("emission.json"))).unwrap();
    assert!(
        record.contains("\"game_definition_file\": \"emission.game.toml\""),
        "{record}"
    );
    let copy = w.path(FOLDER).join("emission.game.toml");
    let kept = read(&copy);
    let verify = |code| {
        text(&w.run_expect(
            &[
                "verify",
                "--game",
                &data("mini-ruche.toml"),
                "--public-key",
                "keys/public-key.pem",
                FOLDER,
            ],
            code,
        ))
    };
    assert!(verify(0).contains("OK      emission"));
    std::fs::remove_file(&copy).unwrap();
    assert!(!copy.exists(), "the copy was deleted");
    let said = verify(1);
    assert!(
        said.contains("emission.game.toml: missing; the record names it"),
        "{said}"
    );
    let mut changed = kept.clone();
    changed.extend_from_slice(b"# an added comment\n");
    std::fs::write(&copy, &changed).unwrap();
    let said = verify(1);
    assert!(
        said.contains("emission.game.toml: its SHA-256 is")
            && said.contains("not the record's game_definition_sha256"),
        "{said}"
    );
    // A later run of the emission writes the deleted copy again, its bytes the record's.
    std::fs::remove_file(&copy).unwrap();
    run(&w, &emit_args(&["--first-block", "2"]), 0);
    assert_eq!(read(&copy), kept);
    assert!(verify(0).contains("OK      emission"));
}

#[test]
fn emit_json_prints_one_object_with_the_blocks_and_never_the_seed() {
    let w = setup();
    let out = run(
        &w,
        &emit_args(&["--blocks", "2", "--emission-blocks", "2", "--json"]),
        0,
    );
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(json["emit_format"], 1);
    assert_eq!(json["blocks_written"], serde_json::json!([1, 2]));
    assert_eq!(json["blocks_kept"], serde_json::json!([]));
    assert_eq!(json["tickets_written"], 4000);
    assert_eq!(json["planned_blocks"], 2);
    assert_eq!(json["sealed"], true);
    assert_eq!(json["folder"], FOLDER);
    assert!(!text(&out).contains(SEED), "the seed is never printed");
    // A second run keeps both blocks.
    let out = run(&w, &emit_args(&["--blocks", "2", "--json"]), 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["blocks_kept"], serde_json::json!([1, 2]));
    assert_eq!(
        json["sealed"], false,
        "sealed by the first run, not this one"
    );
}

/// Issue 23: `seal` of an emission sealed already (the Slurm seal job after the last task
/// sealed) checks the manifests against the seal and does not read the blocks again; a
/// manifest changed after sealing is refused, and a CSV changed after sealing is still caught
/// by `verify`.
#[test]
fn seal_of_a_sealed_emission_checks_manifests_without_reading_the_blocks() {
    if !require_tool("strace", &["-V"], ".ci/run installs it") {
        return;
    }
    let w = setup();
    let folder = sealed(&w);
    let trace = w.path("openat.txt");
    let seal_args = [
        "seal",
        "--game",
        &data("mini-ruche.toml"),
        "--signing-key",
        "keys/signing-key.pem",
        folder.to_str().unwrap(),
    ];
    let out = Command::new("strace")
        .args(["-f", "-e", "trace=%file", "-o", trace.to_str().unwrap()])
        .arg(env!("CARGO_BIN_EXE_emission-factory"))
        .args(seal_args)
        .current_dir(w.dir.path())
        .env("SOURCE_DATE_EPOCH", PINNED_TIME)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("already sealed: 3 manifests match the seal"),
        "{said}"
    );
    let opened = std::fs::read_to_string(&trace).unwrap();
    assert!(
        opened.contains("block-00003.manifest.json"),
        "the trace shows the manifests opened: {opened}"
    );
    assert!(
        !opened.contains(".csv\""),
        "seal of a sealed emission read a block CSV: {opened}"
    );
    // A manifest changed after sealing: refused by its signature, and, signed again by the
    // key holder (an insider), by the SHA-256 the seal lists.
    let manifest = folder.join("block-00002.manifest.json");
    let signature = folder.join("block-00002.manifest.json.sig");
    let kept = std::fs::read(&manifest).unwrap();
    let kept_signature = std::fs::read(&signature).unwrap();
    let mut changed = kept.clone();
    changed.extend_from_slice(b"\n");
    std::fs::write(&manifest, &changed).unwrap();
    let refused = w.run_expect(&seal_args, 2);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("block-00002.manifest.json.sig: the signature does not match"),
        "{err}"
    );
    if require_tool("openssl", &["version"], ".ci/run installs it") {
        let signed = Command::new("openssl")
            .args([
                "pkeyutl",
                "-sign",
                "-rawin",
                "-inkey",
                "keys/signing-key.pem",
                "-in",
            ])
            .arg(&manifest)
            .arg("-out")
            .arg(&signature)
            .current_dir(w.dir.path())
            .status()
            .unwrap();
        assert!(signed.success());
        let refused = w.run_expect(&seal_args, 2);
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(
            err.contains("block-00002.manifest.json: SHA-256")
                && err.contains("block 2 was changed after sealing"),
            "{err}"
        );
    }
    std::fs::write(&manifest, &kept).unwrap();
    std::fs::write(&signature, &kept_signature).unwrap();
    w.run_expect(&seal_args, 0);
    verify(&w, &folder, 0);
    // A CSV changed after sealing: seal does not read it, the final verify does.
    let csv = folder.join("block-00001.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut swapped: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    swapped.swap(1, 2);
    std::fs::write(&csv, swapped.join("\n") + "\n").unwrap();
    w.run_expect(&seal_args, 0);
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("block-00001.csv") || said.contains("block 1"),
        "{said}"
    );
}

/// The seal's policy is the engine's (issue 20): a library caller that seals goes through the
/// same checks as `seal`: a block count other than the record's, a missing block and a changed
/// block are each refused, and no seal is written; then the complete emission is sealed, and
/// the audit log has the seal's signed line.
#[test]
fn a_library_caller_of_seal_gets_every_check_of_the_command() {
    use emission_factory::emit::seal::{seal, Request, SealKey};
    let w = setup();
    run(&w, &emit_args(&["--emission-blocks", "2"]), 0);
    let folder = w.path(FOLDER);
    let request = |blocks| Request {
        folder: folder.clone(),
        key: SealKey::File(w.path("keys/signing-key.pem")),
        blocks,
        game: Some(emission_factory::game::Game::resolve(&data("mini-ruche.toml")).unwrap()),
        group: None,
        timestamp_pin: None,
        public_key: None,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let refused = |blocks| match seal(&request(blocks), &pool, &mut |_| {}) {
        Ok(_) => panic!("sealed {}", folder.display()),
        Err(e) => format!("{e:#}"),
    };
    let said = refused(Some(3));
    assert!(said.contains("record says it holds 2 blocks"), "{said}");
    let said = refused(None);
    assert!(said.contains("missing: 2"), "{said}");
    run(
        &w,
        &emit_args(&["--emission-blocks", "2", "--first-block", "2"]),
        0,
    );
    // Emit sealed it when the second block completed it: take the seal away, change block 1.
    std::fs::remove_file(folder.join("emission.seal.json")).unwrap();
    std::fs::remove_file(folder.join("emission.seal.json.sig")).unwrap();
    let csv = folder.join("block-00001.csv");
    let mut bytes = std::fs::read(&csv).unwrap();
    let at = bytes.len() - 20;
    let original = bytes[at];
    bytes[at] = if original == b'0' { b'1' } else { b'0' };
    std::fs::write(&csv, &bytes).unwrap();
    let said = refused(None);
    assert!(
        said.contains("block 1:") && said.contains("do not verify"),
        "{said}"
    );
    assert!(!folder.join("emission.seal.json").exists());
    bytes[at] = original;
    std::fs::write(&csv, &bytes).unwrap();
    let done = seal(&request(None), &pool, &mut |_| {}).unwrap();
    done.release.unwrap();
    assert_eq!(done.written.expect("a seal written").blocks.len(), 2);
    let log = String::from_utf8(read(&folder.join("emission.log.jsonl"))).unwrap();
    assert!(
        log.lines().last().unwrap().contains("\"command\":\"seal\""),
        "{log}"
    );
}

/// `seal --public-key`: a signing key whose public half is not the key given is refused before
/// anything is done; once sealed, the folder is checked as a whole against the key, as verify
/// checks an emission (a batch's seal job seals and verifies in one reading of the blocks), and
/// a problem there (a re-chained log line, the definition's copy deleted) fails it, exit 1.
#[test]
fn seal_with_the_public_key_checks_the_folder_once_sealed() {
    let w = setup();
    let folder = sealed(&w);
    let f = folder.to_str().unwrap();
    let game = data("mini-ruche.toml");
    let seal = |public: &str, code: i32| {
        text(&w.run_expect(
            &[
                "seal",
                "--game",
                &game,
                "--signing-key",
                "keys/signing-key.pem",
                "--public-key",
                public,
                f,
            ],
            code,
        ))
    };
    let said = seal("keys/public-key.pem", 0);
    assert!(
        said.contains("OK      emission")
            && said.contains("checked against --public-key once sealed")
            && said.contains("every manifest matched the seal"),
        "{said}"
    );
    w.ok(&["keygen", "--out", "other-keys"]);
    let log_before = read(&folder.join("emission.log.jsonl"));
    let said = seal("other-keys/public-key.pem", 2);
    assert!(said.contains("is not the one --public-key names"), "{said}");
    assert_eq!(
        read(&folder.join("emission.log.jsonl")),
        log_before,
        "a refused seal wrote nothing"
    );
    std::fs::remove_file(folder.join("emission.game.toml")).unwrap();
    let said = seal("keys/public-key.pem", 1);
    assert!(
        said.contains("FAILED")
            && said.contains("emission.game.toml: missing; the record names it"),
        "{said}"
    );
}

/// Insider attacks on the folder that `verify` did not see (issue 20, a second hostile pass):
/// a block's CSV deleted beside its manifest (the folder check counted manifests, the block
/// checks ran on the CSVs found: neither saw it, and verify said OK, sealed and pinned or not);
/// every CSV deleted (the folder was no longer found as an emission); a manifest whose CSV is
/// gone edited and its signature spoilt.
#[test]
fn a_block_whose_tickets_were_deleted_fails_verify() {
    let w = setup();
    let folder = sealed(&w);
    let seal_sha = common::sha256_file(&folder.join("emission.seal.json"));
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
    let csv2 = folder.join("block-00002.csv");
    let kept = read(&csv2);
    std::fs::remove_file(&csv2).unwrap();
    let said = verify_with(&w, &folder, &["--seal-sha256", &seal_sha], 1);
    assert!(
        said.contains("block-00002.csv: missing, and its manifest is here"),
        "{said}"
    );
    // Every CSV gone: the folder is still found and checked, named or below a folder named.
    for n in [1, 3] {
        std::fs::remove_file(folder.join(format!("block-{n:05}.csv"))).unwrap();
    }
    let said = verify(&w, &folder, 1);
    assert!(said.contains("block-00001.csv: missing"), "{said}");
    let out = w.run_expect(
        &[
            "verify",
            "--game",
            &data("mini-ruche.toml"),
            "--public-key",
            "keys/public-key.pem",
            "emissions",
        ],
        1,
    );
    assert!(
        text(&out).contains("block-00003.csv: missing"),
        "{}",
        text(&out)
    );
    std::fs::write(&csv2, &kept).unwrap();
    // A manifest without its CSV is read with its signature checked.
    let manifest = folder.join("block-00001.manifest.json");
    let edited = String::from_utf8(read(&manifest))
        .unwrap()
        .replace("\"tickets\": 2000", "\"tickets\": 1999");
    std::fs::write(&manifest, edited).unwrap();
    let said = verify(&w, &folder, 1);
    assert!(said.contains("block-00001.manifest.json.sig"), "{said}");
}

/// A block the audit log says a run made is gone, CSV, manifest and signature: the emission is
/// not sealed and the planned count not reached, so only the log tells (verify said OK).
#[test]
fn a_block_the_log_says_was_made_cannot_be_deleted_quietly() {
    let w = setup();
    run(
        &w,
        &emit_args(&["--blocks", "2", "--emission-blocks", "3"]),
        0,
    );
    let folder = w.path(FOLDER);
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
    for name in [
        "block-00002.csv",
        "block-00002.manifest.json",
        "block-00002.manifest.json.sig",
    ] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("block 2 is not here (block-00002.manifest.json missing), and the audit log says a run made it"),
        "{said}"
    );
    // Making it again (same seed and key: the same bytes) restores the emission.
    run(&w, &emit_args(&["--first-block", "2"]), 0);
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
}

/// Another emission's log signed by the same key, put in this one's place: its lines name
/// another record (every line names the record it was written under), so verify fails; it
/// passed before (the chain and the signatures hold, and nothing tied a line to its emission).
#[test]
fn the_log_of_another_emission_signed_by_the_same_key_is_refused() {
    let w = setup();
    run(&w, &emit_args(&["--emission-blocks", "3"]), 0);
    let other = [
        "--seed",
        OTHER_SEED,
        "--out",
        "elsewhere",
        "--emission-blocks",
        "3",
    ];
    run(&w, &emit_args(&other), 0);
    let folder = w.path(FOLDER);
    let log = String::from_utf8(read(&folder.join("emission.log.jsonl"))).unwrap();
    let record_sha = common::sha256_file(&folder.join("emission.json"));
    assert!(
        log.contains(&format!("\"record_sha256\":\"{record_sha}\"")),
        "the line names its record: {log}"
    );
    std::fs::copy(
        w.path("elsewhere/mini-ruche/2/e0001/emission.log.jsonl"),
        folder.join("emission.log.jsonl"),
    )
    .unwrap();
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("line 1: it names the record")
            && said.contains("the line is another emission's"),
        "{said}"
    );
}

/// A withdrawal record is evidence too: deleted (the block would be back on sale at the next
/// load), changed, or another's, verify fails; verify did not read them at all before.
#[test]
fn a_withdrawal_record_cannot_be_deleted_or_changed_quietly() {
    let w = setup();
    let folder = sealed(&w);
    let f = folder.to_str().unwrap();
    w.ok(&[
        "withdraw",
        "--key",
        "keys/signing-key.pem",
        "--block",
        "2",
        "--reason",
        "winner leaked",
        f,
    ]);
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
    let record = folder.join("withdrawal-0001.json");
    let sig = folder.join("withdrawal-0001.json.sig");
    let (kept, kept_sig) = (read(&record), read(&sig));
    std::fs::remove_file(&record).unwrap();
    std::fs::remove_file(&sig).unwrap();
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("the audit log records the withdrawal withdrawal-0001.json")
            && said.contains("it is missing"),
        "{said}"
    );
    let changed = String::from_utf8(kept.clone())
        .unwrap()
        .replace("winner leaked", "nothing");
    std::fs::write(&record, changed).unwrap();
    std::fs::write(&sig, &kept_sig).unwrap();
    let said = verify(&w, &folder, 1);
    assert!(said.contains("withdrawal-0001.json"), "{said}");
    std::fs::write(&record, &kept).unwrap();
    assert!(verify(&w, &folder, 0).contains("OK      emission"));
}

/// A sealed emission takes no new block, its seal deleted or not: the log records the seal,
/// and emit reads the log before making a block (with the seal deleted, emit made block 3 of
/// an emission sealed at 2; verify caught it only later).
#[test]
fn emit_adds_no_block_to_an_emission_whose_seal_was_deleted() {
    let w = setup();
    run(&w, &emit_args(&["--blocks", "2"]), 0);
    let folder = w.path(FOLDER);
    w.ok(&[
        "seal",
        "--game",
        &data("mini-ruche.toml"),
        "--signing-key",
        "keys/signing-key.pem",
        "--blocks",
        "2",
        folder.to_str().unwrap(),
    ]);
    for name in ["emission.seal.json", "emission.seal.json.sig"] {
        std::fs::remove_file(folder.join(name)).unwrap();
    }
    let said = text(&run(&w, &emit_args(&["--first-block", "3"]), 2));
    assert!(
        said.contains("records a seal") && said.contains("nothing was made"),
        "{said}"
    );
    assert!(
        !folder.join("block-00003.csv").exists(),
        "a block was added"
    );
}

/// A folder in place of a block's CSV: the walk went into it and the block was never checked,
/// and the folder check took it for the CSV (it asked only that something was there): a sealed
/// emission whose every CSV was made a folder verified OK, "0 block(s) checked".
#[test]
fn a_folder_in_place_of_a_blocks_csv_fails_verify() {
    let w = setup();
    let folder = sealed(&w);
    for n in 1..=3 {
        let csv = folder.join(format!("block-{n:05}.csv"));
        std::fs::remove_file(&csv).unwrap();
        std::fs::create_dir(&csv).unwrap();
    }
    let said = verify(&w, &folder, 1);
    assert!(
        said.contains("block-00002.csv: is a folder, not the block's tickets"),
        "{said}"
    );
}
