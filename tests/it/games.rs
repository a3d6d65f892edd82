//! `games --game FILE`: the designer's preview of a definition, on the built-in games, a test
//! fixture, and broken definitions (which get the very error `emit` gives).

use crate::common;
use common::*;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn every_built_in_game_is_previewed_with_its_forms() {
    let w = Workdir::new();
    for id in ["ruche-or", "maxi-ruche-or", "annee-chance"] {
        let said = text(&w.ok(&["games", "--game", id]));
        for needle in [
            "payout",
            "hit frequency",
            "odds 1 in",
            "profile fdj",
            "e.g. ",
        ] {
            assert!(said.contains(needle), "{id}: no {needle} in\n{said}");
        }
        let v = json(&w.ok(&["games", "--game", id, "--json"]));
        assert_eq!(v["games_format"], 1);
        let game = &v["games"][0];
        assert_eq!(game["id"], id);
        assert_eq!(game["profile"], "fdj");
        let samples = game["preview_samples"].as_u64().unwrap();
        let stakes = game["preview"].as_array().unwrap();
        assert_eq!(stakes.len(), game["stakes"].as_array().unwrap().len());
        for stake in stakes {
            for prize in stake["prizes"].as_array().unwrap() {
                let forms = prize["forms"].as_array().unwrap();
                let total: u64 = forms.iter().map(|f| f["samples"].as_u64().unwrap()).sum();
                assert_eq!(total, samples, "{id} {}", prize["amount"]);
            }
        }
    }
    // The listing of the built-in games has no preview.
    let v = json(&w.ok(&["games", "--json"]));
    assert!(v["games"][0].get("preview").is_none());
}

#[test]
fn a_hive_prize_shows_its_rows_and_honey_pots_and_a_calendar_its_months_and_clover() {
    let w = Workdir::new();
    let said = text(&w.ok(&["games", "--game", &data("mini-ruche.toml")]));
    for needle in [
        "Mini ruche (test) (mini-ruche), mechanic ruche, blocks of 2 000 tickets",
        "no profile",
        "stake 2 €: payout 97.5 % (3900 € of prizes per block), 303 winners (hit frequency 15.15 %, odds 1 in 6.6), 1 697 losers",
        "2000 €          1       1 in 2000   51.28%",
        "honey: 2000 €",
        "e.g. 10 honey pots → 2000 €",
        "row: 2000 €",
        "e.g. row ",
    ] {
        assert!(said.contains(needle), "no {needle} in\n{said}");
    }
    let v = json(&w.ok(&["games", "--game", &data("mini-annee.toml"), "--json"]));
    let forms: Vec<String> = v["games"][0]["preview"][0]["prizes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["forms"].as_array().unwrap().clone())
        .map(|f| f["form"].as_str().unwrap().to_string())
        .collect();
    assert!(forms.iter().any(|f| f.contains("clover")), "{forms:?}");
    assert!(forms.iter().any(|f| f.contains("month")), "{forms:?}");
}

/// `emit` on a definition, with everything else it needs, in a fresh folder: its stderr.
fn emit_error(w: &Workdir, definition: &str) -> String {
    if !w.path("keys/signing-key.pem").exists() {
        w.ok(&["keygen", "--out", "keys"]);
    }
    let out = w.run_expect(
        &[
            "emit",
            "--game",
            definition,
            "--price",
            "2",
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
        ],
        2,
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_broken_definition_gets_the_error_emit_gives() {
    let w = Workdir::new();
    let good = std::fs::read_to_string(data("mini-ruche.toml")).unwrap();
    let cases = [
        // A misspelt key: refused with its line.
        (
            good.replacen("row_amounts", "row_amount", 1),
            vec!["row_amount", "line 20"],
        ),
        // Two zeros too many on the top prize, the total following: 5 047 %.
        (
            good.replacen("amount = \"2000\"", "amount = \"200000\"", 1)
                .replacen("total = \"3900\"", "total = \"201900\"", 1),
            vec!["stakes[price=2].prizes", "5047.5 %", "100 %"],
        ),
        // A prize the layouts cannot show: the synthesizer's message, naming the setting.
        (
            good.replacen("\"2000\", \"20000\"", "\"20000\"", 1)
                .replacen("{ pots = 10, amount = \"2000\" },", "", 1),
            vec!["stakes[price=2].layout", "2000 €", "add a row amount"],
        ),
    ];
    for (i, (text, needles)) in cases.iter().enumerate() {
        let file = w.path(&format!("broken-{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let file = file.to_str().unwrap();
        for args in [
            vec!["games", "--game", file],
            vec!["games", "--game", file, "--json"],
        ] {
            let out = w.run_expect(&args, 2);
            assert!(out.stdout.is_empty(), "case {i}: nothing on stdout");
            let said = String::from_utf8(out.stderr).unwrap();
            for needle in needles {
                assert!(said.contains(needle), "case {i}: no {needle} in\n{said}");
            }
            assert_eq!(said, emit_error(&w, file), "case {i}: not emit's error");
        }
    }
}
