//! `verify --json` gives every problem a stable code (docs/FORMAT.md, "Problem codes"), with its
//! place, and the message the text output prints: a block tampered with (a changed ticket
//! hash, a ticket line removed) and an emission whose record was removed.

use crate::common;

use common::{data, text, Workdir, SEED};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One block of the mini game, signed with the fixed test key (the emission is sealed: its
/// one planned block is made).
fn emit_one(w: &Workdir) -> PathBuf {
    common::emit_mini_signed(w, SEED, "out", "1", &[])
}

/// `verify --json` of `folder`, which must exit 1; its JSON and the text output of the same.
fn failed_verify(w: &Workdir, folder: &Path) -> (Value, String) {
    let game = data("mini-ruche.toml");
    let dir = folder.to_str().unwrap();
    let args = ["--game", &game, "--public-key", "keys/public-key.pem", dir];
    let json = w.run_expect(&[&["verify", "--json"], &args[..]].concat(), 1);
    let json: Value = serde_json::from_slice(&json.stdout)
        .unwrap_or_else(|e| panic!("{e}: not one JSON object:\n{}", text(&json)));
    assert_eq!(json["verify_format"], 2);
    let said = text(&w.run_expect(&[&["verify"], &args[..]].concat(), 1));
    (json, said)
}

fn lines(csv: &Path) -> Vec<String> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn write_lines(csv: &Path, lines: &[String]) {
    std::fs::write(csv, lines.join("\n") + "\n").unwrap();
}

/// The problems of `json` at `key` (`blocks` or `emissions`) `[0]` with code `code`.
fn with_code<'a>(json: &'a Value, key: &str, code: &str) -> Vec<&'a Value> {
    json[key][0]["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems array in {json}"))
        .iter()
        .filter(|p| p["code"] == code)
        .collect()
}

/// Every problem printed as text is a JSON problem's message, and the other way round.
fn same_messages(json: &Value, said: &str) {
    for key in ["blocks", "emissions"] {
        for p in json[key][0]["problems"].as_array().unwrap() {
            let message = p["message"].as_str().unwrap();
            assert!(
                said.contains(&format!("  - {message}\n")),
                "{message:?} is not in the text output:\n{said}"
            );
            assert!(p["code"].as_str().is_some_and(|c| !c.is_empty()), "{p}");
        }
    }
}

#[test]
fn a_changed_ticket_hash_is_line_hash_at_its_line_and_serial() {
    let w = Workdir::new();
    let folder = emit_one(&w);
    let csv = folder.join("block-00001.csv");
    let mut all = lines(&csv);
    // Line 11 of the file: the ticket of index 9.
    let serial = all[10].split(',').next().unwrap().to_string();
    let last = all[10].pop().unwrap();
    all[10].push(if last == '0' { '1' } else { '0' });
    write_lines(&csv, &all);
    let (json, said) = failed_verify(&w, &folder);
    let hash = with_code(&json, "blocks", "line.hash");
    assert_eq!(hash.len(), 1, "{json}");
    assert_eq!(hash[0]["line"], 11);
    assert_eq!(hash[0]["serial"], serial.as_str());
    assert_eq!(hash[0]["codes"], serde_json::json!(["line.hash"]));
    assert!(hash[0]["message"]
        .as_str()
        .unwrap()
        .contains("is not the SHA-256 of serial,prize,layout"));
    // The file no longer has its manifest's SHA-256 (the Merkle root is of the tickets' own
    // hashes, recomputed: a changed sha256 field leaves it as it was).
    assert_eq!(
        with_code(&json, "blocks", "block.sha256").len(),
        1,
        "{json}"
    );
    assert!(
        with_code(&json, "blocks", "block.merkle_root").is_empty(),
        "{json}"
    );
    assert_eq!(
        with_code(&json, "emissions", "emission.block_failed").len(),
        1,
        "{json}"
    );
    same_messages(&json, &said);
}

#[test]
fn a_removed_ticket_line_is_named_by_its_codes() {
    let w = Workdir::new();
    let folder = emit_one(&w);
    let csv = folder.join("block-00001.csv");
    let mut all = lines(&csv);
    all.remove(5);
    write_lines(&csv, &all);
    let (json, said) = failed_verify(&w, &folder);
    // The line after the one removed holds the next ticket's serial.
    let serial = with_code(&json, "blocks", "line.serial");
    assert!(!serial.is_empty(), "{json}");
    assert_eq!(serial[0]["line"], 6);
    for code in [
        "block.tickets",
        "block.tickets_manifest",
        "block.prize_count",
        "block.merkle_root",
    ] {
        assert!(
            !with_code(&json, "blocks", code).is_empty(),
            "{code}: {json}"
        );
    }
    same_messages(&json, &said);
}

#[test]
fn a_removed_record_is_emission_record_missing() {
    let w = Workdir::new();
    let folder = emit_one(&w);
    std::fs::remove_file(folder.join("emission.json")).unwrap();
    let (json, said) = failed_verify(&w, &folder);
    assert_eq!(json["blocks"][0]["ok"], true, "{json}");
    let missing = with_code(&json, "emissions", "emission.record_missing");
    assert_eq!(missing.len(), 1, "{json}");
    assert!(missing[0]["message"]
        .as_str()
        .unwrap()
        .contains("no emission record"));
    same_messages(&json, &said);
}
