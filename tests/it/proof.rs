//! Ticket proofs on a real block of the mini game (2 000 tickets, not a power of two): made by
//! `prove` from a block that verifies, checked by `verify-proof` without the block, and refused
//! after any change to the line, the index, the path, the manifest or the signature.

use crate::common;
use common::*;
use serde_json::Value;

const BLOCK: &str = "emissions/mini-ruche/2/e0001/block-00001.csv";
const TICKETS: u64 = 2000;

/// A workdir with block 1 of the mini game, signed with the fixed test key.
fn setup() -> Workdir {
    let w = Workdir::new();
    fixed_test_key(&w);
    let game = data("mini-ruche.toml");
    w.ok(&[
        "emit",
        "--game",
        &game,
        "--price",
        "2",
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "-q",
    ]);
    w
}

/// `prove` of one ticket (index or serial), required to succeed: the proof's bytes.
fn prove(w: &Workdir, ticket: &str) -> Vec<u8> {
    let game = data("mini-ruche.toml");
    w.ok(&[
        "prove",
        BLOCK,
        "--ticket",
        ticket,
        "--game",
        &game,
        "--public-key",
        "keys/public-key.pem",
    ])
    .stdout
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("a proof is JSON")
}

/// `verify-proof` of `proof` (written to proof.json) against the trusted test key, required
/// to end with `code`; its output.
fn verify_proof(w: &Workdir, proof: &[u8], code: i32) -> String {
    std::fs::write(w.path("proof.json"), proof).unwrap();
    let game = data("mini-ruche.toml");
    text(&w.run_expect(
        &[
            "verify-proof",
            "proof.json",
            "--public-key",
            "keys/public-key.pem",
            "--game",
            &game,
        ],
        code,
    ))
}

/// `proof` changed by `change`, required to be refused with a message containing `needle`.
#[track_caller]
fn refused_after(w: &Workdir, proof: &[u8], needle: &str, change: impl FnOnce(&mut Value)) {
    let mut value = json(proof);
    change(&mut value);
    let bytes = serde_json::to_vec_pretty(&value).unwrap();
    let said = verify_proof(w, &bytes, 1);
    assert!(
        said.contains("FAILED") && said.contains(needle),
        "expected '{needle}' in:\n{said}"
    );
}

fn csv_line(w: &Workdir, index: u64) -> String {
    let csv = String::from_utf8(read(&w.path(BLOCK))).unwrap();
    csv.lines().nth(index as usize + 1).unwrap().to_string()
}

/// The line with the first cell of its layout changed (P to A, anything else to P).
fn changed_cell(line: &str) -> String {
    let layout_at = line.match_indices(',').nth(1).unwrap().0;
    let cell = layout_at + line[layout_at..].find(':').unwrap() + 1;
    let new = if &line[cell..cell + 1] == "P" {
        "A"
    } else {
        "P"
    };
    format!("{}{new}{}", &line[..cell], &line[cell + 1..])
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn first_last_and_middle_tickets_are_proven_without_the_block() {
    let w = setup();
    for index in [0, 1, 1023, 1024, 1000, TICKETS - 2, TICKETS - 1] {
        let proof = prove(&w, &index.to_string());
        let value = json(&proof);
        assert_eq!(value["format"], "emission-factory-ticket-proof/1");
        assert_eq!(value["index"], index);
        assert_eq!(value["line"], csv_line(&w, index));
        assert_eq!(
            value["manifest"].as_str().unwrap().as_bytes(),
            read(&w.path("emissions/mini-ruche/2/e0001/block-00001.manifest.json"))
        );
        assert_eq!(
            value["signature"].as_str().unwrap(),
            hex::encode(read(
                &w.path("emissions/mini-ruche/2/e0001/block-00001.manifest.json.sig")
            ))
        );
        let path = value["audit_path"].as_array().unwrap();
        assert!((1..=11).contains(&path.len()), "{}", path.len());
        // Checked without the block: the folder is gone.
        std::fs::write(w.path("proof.json"), &proof).unwrap();
        let elsewhere = Workdir::new();
        fixed_test_key(&elsewhere);
        let said = verify_proof(&elsewhere, &proof, 0);
        let line = csv_line(&w, index);
        let serial = line.split(',').next().unwrap();
        let prize = line.split(',').nth(1).unwrap();
        assert!(
            said.starts_with("OK ")
                && said.contains(&format!("ticket {serial} (index {index}) wins {prize} €"))
                && said.contains("TEST emission"),
            "{said}"
        );
    }
}

#[test]
fn a_serial_gives_the_same_proof_as_its_index() {
    let w = setup();
    let by_index = prove(&w, "1234");
    let by_serial = prove(&w, "mini-ruche-200-0001-00001-0001234");
    assert_eq!(by_index, by_serial);
    let game = data("mini-ruche.toml");
    for (ticket, needle) in [
        (
            "mini-ruche-200-0001-00002-0001234",
            "not a serial of this block",
        ),
        (
            "mini-ruche-200-0001-00001-0002000",
            "not a serial of this block",
        ),
        (
            "mini-ruche-200-0001-00001-12345",
            "not a serial of this block",
        ),
        ("2000", "holds 2000 tickets, numbered from 0 to 1999"),
    ] {
        let out = w.run_expect(&["prove", BLOCK, "--ticket", ticket, "--game", &game], 2);
        assert!(text(&out).contains(needle), "{ticket}: {}", text(&out));
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_changed_line_fails() {
    let w = setup();
    let proof = prove(&w, "700");
    // One byte of the layout.
    refused_after(&w, &proof, "line: ", |v| {
        let line = changed_cell(v["line"].as_str().unwrap());
        v["line"] = line.into();
    });
    // A forged line that passes every check of a line on its own (the serial of index 700,
    // the prize and layout of the block's top winner, its hash recomputed): only the audit
    // path tells it is not the block's.
    let csv = String::from_utf8(read(&w.path(BLOCK))).unwrap();
    let winner = csv
        .lines()
        .skip(1)
        .find(|l| l.split(',').nth(1) == Some("2000"))
        .unwrap()
        .to_string();
    let own = csv_line(&w, 700);
    assert_ne!(own.split(',').nth(1), Some("2000"));
    let serial = own.split(',').next().unwrap();
    let fields: Vec<&str> = winner.split(',').collect();
    let body = format!("{serial},{},{}", fields[1], fields[2]);
    let forged = format!("{body},{}", sha256_hex(body.as_bytes()));
    refused_after(
        &w,
        &proof,
        "audit_path: the line, its index and the path lead to the root",
        |v| v["line"] = forged.clone().into(),
    );
    let said = {
        let mut value = json(&proof);
        value["line"] = forged.into();
        verify_proof(&w, &serde_json::to_vec(&value).unwrap(), 1)
    };
    assert!(
        !said.contains("line: "),
        "the forged line is valid on its own: {said}"
    );
}

#[test]
fn a_changed_index_fails() {
    let w = setup();
    let proof = prove(&w, "700");
    refused_after(&w, &proof, "serial 'mini-ruche-200-0001-00001-0000700' where mini-ruche-200-0001-00001-0000701 was expected", |v| {
        v["index"] = 701.into()
    });
    // The index and the line's serial changed together (hash recomputed): the path refuses.
    let line = csv_line(&w, 700);
    let fields: Vec<&str> = line.split(',').collect();
    let body = format!(
        "{},{},{}",
        fields[0].replace("0000700", "0000699"),
        fields[1],
        fields[2]
    );
    let moved = format!("{body},{}", sha256_hex(body.as_bytes()));
    refused_after(&w, &proof, "lead to the root", |v| {
        v["index"] = 699.into();
        v["line"] = moved.into();
    });
    refused_after(
        &w,
        &proof,
        "index: 2000 is not a ticket of a block of 2000",
        |v| v["index"] = 2000.into(),
    );
    refused_after(&w, &proof, "not a ticket proof", |v| {
        v["index"] = (-1).into()
    });
}

#[test]
fn a_changed_path_fails() {
    let w = setup();
    let proof = prove(&w, "700");
    let length = json(&proof)["audit_path"].as_array().unwrap().len();
    for at in 0..length {
        refused_after(&w, &proof, "lead to the root", |v| {
            let hash = v["audit_path"][at].as_str().unwrap();
            let flipped = if hash.starts_with('0') { "1" } else { "0" };
            v["audit_path"][at] = format!("{flipped}{}", &hash[1..]).into();
        });
    }
    refused_after(
        &w,
        &proof,
        &format!(
            "the audit path has {} hashes; leaf 700 of a tree of 2000 leaves has {length}",
            length - 1
        ),
        |v| {
            v["audit_path"].as_array_mut().unwrap().pop();
        },
    );
    refused_after(&w, &proof, &format!("has {} hashes", length + 1), |v| {
        let copy = v["audit_path"][0].clone();
        v["audit_path"].as_array_mut().unwrap().push(copy);
    });
    // Two hashes swapped.
    refused_after(&w, &proof, "lead to the root", |v| {
        v["audit_path"].as_array_mut().unwrap().swap(0, 1);
    });
    refused_after(
        &w,
        &proof,
        "audit_path: hash 1 ('ABC') is not 64 lowercase hex digits",
        |v| v["audit_path"][0] = "ABC".into(),
    );
    refused_after(&w, &proof, "more than the 64 of the deepest tree", |v| {
        v["audit_path"] = vec!["00"; 65].into()
    });
}

#[test]
fn a_changed_manifest_fails() {
    let w = setup();
    let proof = prove(&w, "700");
    // Any byte: the signature no longer matches.
    refused_after(&w, &proof, "signature: the signature does not match", |v| {
        let manifest = v["manifest"]
            .as_str()
            .unwrap()
            .replacen("\"block\": 1", "\"block\": 2", 1);
        v["manifest"] = manifest.into();
    });
    refused_after(&w, &proof, "signature: the signature does not match", |v| {
        let manifest = v["manifest"].as_str().unwrap().replacen("\n}", " \n}", 1);
        v["manifest"] = manifest.into();
    });
    // A manifest made to match a forged line and re-signed by another key: refused under the
    // key trusted (and it names another key).
    use emission_factory::block::keys;
    let other = keys::generate().unwrap();
    let mut value = json(&proof);
    let manifest = value["manifest"].as_str().unwrap().to_string();
    value["signature"] = hex::encode(keys::sign(&other, manifest.as_bytes())).into();
    let said = verify_proof(&w, &serde_json::to_vec(&value).unwrap(), 1);
    assert!(
        said.contains("signature: the signature does not match"),
        "{said}"
    );
    assert!(
        !said.contains("line: ") && !said.contains("audit_path"),
        "{said}"
    );
    // Not a manifest at all.
    refused_after(&w, &proof, "manifest: not a valid manifest", |v| {
        v["manifest"] = "{}".into()
    });
}

#[test]
fn a_changed_signature_fails() {
    let w = setup();
    let proof = prove(&w, "700");
    refused_after(&w, &proof, "signature: the signature does not match", |v| {
        let sig = v["signature"].as_str().unwrap();
        let flipped = if sig.ends_with('0') { "1" } else { "0" };
        v["signature"] = format!("{}{flipped}", &sig[..sig.len() - 1]).into();
    });
    refused_after(&w, &proof, "is not 128 lowercase hex digits", |v| {
        let sig = v["signature"].as_str().unwrap().to_string();
        v["signature"] = sig[..126].to_string().into();
    });
    refused_after(&w, &proof, "is not 128 lowercase hex digits", |v| {
        let sig = v["signature"].as_str().unwrap().to_uppercase();
        v["signature"] = sig.into();
    });
    // Another key than the one trusted.
    w.ok(&["keygen", "--out", "other"]);
    std::fs::write(w.path("proof.json"), &proof).unwrap();
    let game = data("mini-ruche.toml");
    let out = w.run_expect(
        &[
            "verify-proof",
            "proof.json",
            "--public-key",
            "other/public-key.pem",
            "--game",
            &game,
        ],
        1,
    );
    assert!(
        text(&out).contains("signature: the signature does not match"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("public_key_sha256 does not match"),
        "{}",
        text(&out)
    );
}

#[test]
fn the_definition_checked_against_is_the_one_the_manifest_names() {
    let w = setup();
    let proof = prove(&w, "3");
    std::fs::write(w.path("proof.json"), &proof).unwrap();
    // Without --game: the mini game is not built in.
    let out = w.run_expect(
        &[
            "verify-proof",
            "proof.json",
            "--public-key",
            "keys/public-key.pem",
        ],
        1,
    );
    assert!(
        text(&out).contains("unknown game 'mini-ruche'") && text(&out).contains("give --game"),
        "{}",
        text(&out)
    );
    // Another definition of the same id (a comment added): its SHA-256 differs.
    let changed = format!(
        "# changed\n{}",
        String::from_utf8(read(std::path::Path::new(&data("mini-ruche.toml")))).unwrap()
    );
    std::fs::write(w.path("changed.toml"), changed).unwrap();
    let out = w.run_expect(
        &[
            "verify-proof",
            "proof.json",
            "--public-key",
            "keys/public-key.pem",
            "--game",
            "changed.toml",
        ],
        1,
    );
    assert!(
        text(&out).contains("game_definition_sha256"),
        "{}",
        text(&out)
    );
}

#[test]
fn hostile_proof_files_are_refused() {
    let w = setup();
    let proof = prove(&w, "3");
    refused_after(&w, &proof, "unknown field `extra`", |v| {
        v["extra"] = 1.into()
    });
    refused_after(
        &w,
        &proof,
        "format 'emission-factory-ticket-proof/2' is not one this program reads",
        |v| v["format"] = "emission-factory-ticket-proof/2".into(),
    );
    refused_after(&w, &proof, "missing field `signature`", |v| {
        v.as_object_mut().unwrap().remove("signature");
    });
    let said = verify_proof(&w, b"\x1b[2J not json", 1);
    assert!(
        said.contains("not a ticket proof") && !said.contains('\u{1b}'),
        "{said}"
    );
    // A file larger than any proof is refused unread.
    let file = std::fs::File::create(w.path("proof.json")).unwrap();
    file.set_len(1 << 30).unwrap();
    let game = data("mini-ruche.toml");
    let out = w.run_expect(
        &[
            "verify-proof",
            "proof.json",
            "--public-key",
            "keys/public-key.pem",
            "--game",
            &game,
        ],
        1,
    );
    assert!(
        text(&out)
            .contains("1073741824 bytes, more than the 3145728 bytes a ticket proof may hold"),
        "{}",
        text(&out)
    );
    let out = w.run_expect(
        &[
            "verify-proof",
            "missing.json",
            "--public-key",
            "keys/public-key.pem",
            "--game",
            &game,
        ],
        2,
    );
    assert!(
        text(&out).contains("cannot read missing.json"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_broken_block_gets_no_proof() {
    let w = setup();
    let game = data("mini-ruche.toml");
    // One cell of one ticket far from the one asked for.
    let csv = w.path(BLOCK);
    let text_before = String::from_utf8(read(&csv)).unwrap();
    let mut lines: Vec<String> = text_before.lines().map(str::to_string).collect();
    lines[1500] = changed_cell(&lines[1500]);
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let out = w.run_expect(&["prove", BLOCK, "--ticket", "3", "--game", &game], 2);
    assert!(out.stdout.is_empty());
    assert!(
        text(&out).contains("does not verify, and a proof of a broken block is never issued")
            && text(&out).contains("line 1501"),
        "{}",
        text(&out)
    );
    // A signature of another key than the one trusted: no proof either.
    std::fs::write(&csv, text_before).unwrap();
    w.ok(&["keygen", "--out", "other"]);
    let out = w.run_expect(
        &[
            "prove",
            BLOCK,
            "--ticket",
            "3",
            "--game",
            &game,
            "--public-key",
            "other/public-key.pem",
        ],
        2,
    );
    assert!(out.stdout.is_empty());
    assert!(
        text(&out).contains("signature does not match"),
        "{}",
        text(&out)
    );
}
