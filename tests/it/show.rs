//! `show` on real blocks of small test games of the three mechanics (blocks of 2 000): the
//! drawing of a ticket found by index and by serial, the SVG picture, colours, and refusal of a
//! changed line, a bad signature and bad `--ticket` values.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

/// Emits block 1 of a test game with the fixed seed and test key; returns its CSV.
fn emit(w: &Workdir, game: &str, price: &str) -> PathBuf {
    fixed_test_key(w);
    let def = data(&format!("{game}.toml"));
    w.ok(&[
        "emit",
        "--game",
        &def,
        "--price",
        price,
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "-q",
    ]);
    w.path(&format!("emissions/{game}/{price}/e0001/block-00001.csv"))
}

fn show(w: &Workdir, game: &str, csv: &Path, extra: &[&str], code: i32) -> (String, String) {
    let def = data(&format!("{game}.toml"));
    let mut args = vec![
        "show",
        csv.to_str().unwrap(),
        "--game",
        &def,
        "--public-key",
        "keys/public-key.pem",
    ];
    args.extend_from_slice(extra);
    let out = w.run_expect(&args, code);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The CSV's ticket lines as (serial, prize, layout).
fn tickets(csv: &Path) -> Vec<(String, String, String)> {
    String::from_utf8(read(csv))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

#[test]
fn every_game_shows_winners_and_losers_as_the_decoder_reads_them() {
    for (game, price, marker) in [
        ("mini-ruche", "2", "main hive"),
        ("mini-maxi", "3", "main hive · bee"),
        ("mini-annee", "3", "December"),
    ] {
        let w = Workdir::new();
        let csv = emit(&w, game, price);
        let all = tickets(&csv);
        let winner = all.iter().position(|t| t.1 != "0").unwrap();
        let loser = all.iter().position(|t| t.1 == "0").unwrap();
        for index in [winner, loser, all.len() - 1] {
            let (serial, prize, _) = &all[index];
            let (by_index, _) = show(&w, game, &csv, &["--ticket", &index.to_string()], 0);
            let (by_serial, _) = show(&w, game, &csv, &["--ticket", serial], 0);
            assert_eq!(by_index, by_serial);
            assert!(by_index.contains(serial.as_str()), "{by_index}");
            assert!(by_index.contains(marker), "{by_index}");
            // The decoding ends with the prize column's amount.
            assert!(
                by_index.contains(&format!("total {prize} €")),
                "{game} {index}: {by_index}"
            );
            // Not a terminal: no colour.
            assert!(!by_index.contains('\u{1b}'), "{by_index}");
        }
        // Colours when asked, except with NO_COLOR set and --color auto.
        let (coloured, _) = show(&w, game, &csv, &["--ticket", "0", "--color", "always"], 0);
        assert!(coloured.contains("\u{1b}["));
        let mut cmd = w.command(&[
            "show",
            csv.to_str().unwrap(),
            "--game",
            &data(&format!("{game}.toml")),
            "--ticket",
            "0",
        ]);
        let out = cmd.env("NO_COLOR", "1").output().unwrap();
        assert!(out.status.success());
        assert!(!String::from_utf8_lossy(&out.stdout).contains('\u{1b}'));
        // Without --public-key: the emission's own key, with a warning.
        assert!(String::from_utf8_lossy(&out.stderr).contains("emission's own key"));
        // The picture.
        let svg = w.path("ticket.svg");
        let _ = std::fs::remove_file(&svg);
        let (_, err) = show(
            &w,
            game,
            &csv,
            &["--ticket", &winner.to_string(), "--svg", "ticket.svg"],
            0,
        );
        assert!(err.contains("picture written"), "{err}");
        let text = String::from_utf8(read(&svg)).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
        assert!(text.contains(&all[winner].0));
    }
}

#[test]
fn a_changed_line_or_signature_is_not_drawn() {
    let w = Workdir::new();
    let csv = emit(&w, "mini-ruche", "2");
    let original = read(&csv);
    let all = tickets(&csv);
    let loser = all.iter().position(|t| t.1 == "0").unwrap();
    // The prize column of one ticket raised: its hash and decoding no longer hold.
    let line = format!("{},0,", all[loser].0);
    let changed = String::from_utf8(original.clone()).unwrap().replacen(
        &line,
        &format!("{},2,", all[loser].0),
        1,
    );
    std::fs::write(&csv, &changed).unwrap();
    let (out, err) = show(&w, "mini-ruche", &csv, &["--ticket", &loser.to_string()], 1);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("FAILED") && err.contains("sha256"), "{err}");
    assert!(err.contains(&format!("line {}", loser + 2)), "{err}");
    // Another ticket of the same block is still shown: only the ticket's line is read.
    let other = if loser == 0 { 1 } else { 0 };
    show(&w, "mini-ruche", &csv, &["--ticket", &other.to_string()], 0);
    std::fs::write(&csv, &original).unwrap();
    // A manifest changed after signing.
    let manifest = csv.with_file_name("block-00001.manifest.json");
    let bytes = read(&manifest);
    let text = String::from_utf8(bytes.clone())
        .unwrap()
        .replace("\"emission\": 1", "\"emission\": 1 ");
    std::fs::write(&manifest, text).unwrap();
    let (_, err) = show(&w, "mini-ruche", &csv, &["--ticket", "0"], 1);
    assert!(err.contains("signature"), "{err}");
    std::fs::write(&manifest, bytes).unwrap();
    // A line longer than any ticket line is refused before it is held.
    let long = String::from_utf8(original.clone()).unwrap().replacen(
        "\n",
        &format!("\n{}", "P".repeat(10_000)),
        2,
    );
    std::fs::write(&csv, long).unwrap();
    let (_, err) = show(&w, "mini-ruche", &csv, &["--ticket", "5"], 2);
    assert!(err.contains("longer than the longest line"), "{err}");
}

#[test]
fn bad_ticket_values_name_the_option() {
    let w = Workdir::new();
    let csv = emit(&w, "mini-ruche", "2");
    for bad in [
        "2000",
        "-1",
        "mini-ruche-200-0001-00002-0000001",
        "ruche-or-200-0001-00001-0000001",
        "x\u{1b}[2J",
    ] {
        let (_, err) = show(&w, "mini-ruche", &csv, &["--ticket", bad], 2);
        assert!(err.contains("--ticket"), "{bad}: {err}");
        assert!(!err.contains('\u{1b}'), "{bad}: {err}");
    }
    let (_, err) = show(
        &w,
        "mini-ruche",
        &w.path("emissions/mini-ruche/2/e0001/block-00009.csv"),
        &["--ticket", "0"],
        1,
    );
    assert!(err.contains("block-00009.manifest.json"), "{err}");
}

/// The form `show` prints at the end of its drawing: `... total 20 €  (row + honey)`.
fn drawn_form(drawing: &str) -> String {
    let last = drawing.trim_end().lines().last().unwrap();
    let start = last.rfind("  (").unwrap();
    last[start + 3..last.len() - 1].to_string()
}

/// The serial a drawing shows in its first line.
fn drawn_serial(drawing: &str) -> String {
    let first = drawing.lines().next().unwrap();
    let at = first.find(" (block").unwrap();
    first[..at].rsplit(' ').next().unwrap().to_string()
}

#[test]
fn a_ticket_is_found_by_its_prize_and_the_nth_of_it() {
    for (game, price) in [("mini-ruche", "2"), ("mini-maxi", "3"), ("mini-annee", "3")] {
        let w = Workdir::new();
        let csv = emit(&w, game, price);
        let all = tickets(&csv);
        let mut prizes: Vec<&str> = all.iter().map(|t| t.1.as_str()).collect();
        prizes.sort();
        prizes.dedup();
        for prize in prizes {
            let of: Vec<&(String, String, String)> = all.iter().filter(|t| t.1 == prize).collect();
            let (first, _) = show(&w, game, &csv, &["--prize", prize], 0);
            assert_eq!(drawn_serial(&first), of[0].0, "{game} {prize}: {first}");
            assert!(first.contains(&format!("total {prize} €")), "{first}");
            let last = of.len().to_string();
            let (nth, _) = show(&w, game, &csv, &["--prize", prize, "--nth", &last], 0);
            assert_eq!(drawn_serial(&nth), of[of.len() - 1].0, "{game} {prize}");
            // One more than the block holds: the error says how many there are.
            let beyond = (of.len() + 1).to_string();
            let (out, err) = show(&w, game, &csv, &["--prize", prize, "--nth", &beyond], 2);
            assert!(out.is_empty());
            assert!(
                err.contains(&format!("give --nth 1 to {}", of.len())),
                "{game} {prize}: {err}"
            );
        }
        // An amount the stake does not pay: the error lists the prizes and their counts.
        let (_, err) = show(&w, game, &csv, &["--prize", "0.01"], 2);
        assert!(
            err.contains("--prize '0.01'") && err.contains("0 for the losers"),
            "{err}"
        );
        let (_, err) = show(&w, game, &csv, &["--prize", "twenty"], 2);
        assert!(err.contains("its prizes are"), "{err}");
    }
    // The mini ruche's table, as the error words it.
    let w = Workdir::new();
    let csv = emit(&w, "mini-ruche", "2");
    let (_, err) = show(&w, "mini-ruche", &csv, &["--prize", "7"], 2);
    assert!(
        err.contains("2000 € (1), 100 € (2), 20 € (50), 4 € (100), 2 € (150)"),
        "{err}"
    );
}

#[test]
fn a_ticket_is_found_by_its_form_or_a_near_miss() {
    for (game, price) in [("mini-ruche", "2"), ("mini-maxi", "3"), ("mini-annee", "3")] {
        let w = Workdir::new();
        let csv = emit(&w, game, price);
        let all = tickets(&csv);
        // A form the block holds: that of its last winner.
        let winner = all.iter().rposition(|t| t.1 != "0").unwrap();
        let (drawing, _) = show(&w, game, &csv, &["--ticket", &winner.to_string()], 0);
        let form = drawn_form(&drawing);
        let (found, _) = show(&w, game, &csv, &["--form", &form], 0);
        assert_eq!(drawn_form(&found), form, "{game}: {found}");
        let index = all
            .iter()
            .position(|t| t.0 == drawn_serial(&found))
            .unwrap();
        assert!(index <= winner);
        // With its prize too.
        let prize = &all[winner].1;
        let (found, _) = show(&w, game, &csv, &["--form", &form, "--prize", prize], 0);
        assert_eq!(drawn_form(&found), form);
        assert!(found.contains(&format!("total {prize} €")), "{found}");
        // A form nobody shows: the error lists the block's forms, whose counts add up to the
        // block's tickets, and the near misses one may ask for.
        let (_, err) = show(&w, game, &csv, &["--form", "no such form"], 2);
        assert!(err.contains("their forms: "), "{err}");
        assert!(
            err.contains(&format!("({form})")) || err.contains(&form),
            "{err}"
        );
        assert!(err.contains("or a near miss: near_miss_"), "{err}");
        let listed = err.split("their forms: ").nth(1).unwrap();
        let listed = &listed[..listed.find(" (or a near miss").unwrap()];
        let total: u64 = listed
            .split("), ")
            .map(|f| {
                let n = f.rsplit('(').next().unwrap().trim_end_matches(')');
                n.replace(' ', "").parse::<u64>().unwrap()
            })
            .sum();
        assert_eq!(total, 2000, "{err}");
    }
    // A near miss, by its report name, on a loser.
    let w = Workdir::new();
    let csv = emit(&w, "mini-ruche", "2");
    let (found, _) = show(
        &w,
        "mini-ruche",
        &csv,
        &["--prize", "0", "--form", "near_miss_rows", "--nth", "2"],
        0,
    );
    assert!(found.contains("total 0 €"), "{found}");
    // A near miss no ticket of the prize shows: the error counts each kind.
    let (_, err) = show(
        &w,
        "mini-ruche",
        &csv,
        &["--prize", "2000", "--form", "near_miss_extra"],
        2,
    );
    assert!(
        err.contains("1 ticket wins 2000 €") || err.contains("--nth"),
        "{err}"
    );
}

#[test]
fn a_search_reads_only_checked_lines() {
    let w = Workdir::new();
    let csv = emit(&w, "mini-ruche", "2");
    let all = tickets(&csv);
    // The second ticket of 20 €, and a loser before it changed into a winner of 20 €.
    let second = all
        .iter()
        .enumerate()
        .filter(|(_, t)| t.1 == "20")
        .nth(1)
        .unwrap()
        .0;
    let loser = all[..second].iter().position(|t| t.1 == "0").unwrap();
    let text = String::from_utf8(read(&csv)).unwrap();
    let changed = text.replacen(
        &format!("{},0,", all[loser].0),
        &format!("{},20,", all[loser].0),
        1,
    );
    std::fs::write(&csv, changed).unwrap();
    let (out, err) = show(&w, "mini-ruche", &csv, &["--prize", "20", "--nth", "2"], 1);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("FAILED"), "{err}");
    assert!(err.contains(&format!("line {}", loser + 2)), "{err}");
}

#[test]
fn ticket_and_search_exclude_each_other() {
    let w = Workdir::new();
    let csv = emit(&w, "mini-ruche", "2");
    let (_, err) = show(
        &w,
        "mini-ruche",
        &csv,
        &["--ticket", "1", "--prize", "2"],
        2,
    );
    assert!(err.contains("cannot be used with"), "{err}");
    let (_, err) = show(&w, "mini-ruche", &csv, &["--nth", "2"], 2);
    assert!(err.contains("--prize"), "{err}");
    let (_, err) = show(&w, "mini-ruche", &csv, &["--prize", "2", "--nth", "0"], 2);
    assert!(err.contains("--nth"), "{err}");
}
