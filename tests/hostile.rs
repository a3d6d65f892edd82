//! Hostile input and hostile surroundings: a closed or full standard output, game definitions
//! at the limits of the number types, block files that are huge, have no line ends, sit in the
//! wrong folder or carry terminal escapes, misspelt mechanic settings. Each gets a clear
//! message and a documented exit status, never a panic, and nothing is read without a bound.

mod common;
use common::*;
use std::path::PathBuf;
use std::process::{Output, Stdio};

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
    // The block was made all the same.
    assert!(folder.join("block-00002.manifest.json").exists());
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
}
