//! The layout parameters: every check names the parameter at fault.

use super::{builtin_stake, d, stake_with};
use crate::mechanic::calendar::{CalendarDecoder, CalendarSynthesizer};
use crate::mechanic::{Decoder, LayoutRng, Synthesizer};
use rand::SeedableRng;

const SYMBOLS: &str = r#"symbols = [
  { letter = "A", picture = "a" }, { letter = "B", picture = "b" }, { letter = "C", picture = "c" },
]
"#;

/// Both halves must refuse the stake with a message containing `needle`.
#[track_caller]
fn refused(layout: &str, prizes: &[&str], needle: &str) {
    let stake = stake_with(layout, prizes);
    let e = CalendarSynthesizer::new(&stake).expect_err("synthesizer must refuse");
    assert!(e.contains(needle), "{e:?} should mention {needle:?}");
    if !needle.contains("cannot be shown") {
        let e = CalendarDecoder::new(&stake).expect_err("decoder must refuse");
        assert!(e.contains(needle), "{e:?} should mention {needle:?}");
    }
}

#[test]
fn builtin_stake_is_accepted() {
    let stake = builtin_stake();
    assert!(CalendarDecoder::new(&stake).is_ok());
    assert!(CalendarSynthesizer::new(&stake).is_ok());
}

#[test]
fn symbols_are_checked() {
    let amounts = "month_amounts = [\"2\"]\nclover_amounts = [\"3\"]\n";
    let one =
        |s: &str| format!("symbols = [{s}, {{ letter = \"Q\", picture = \"q\" }}]\n{amounts}");
    refused(
        &one(r#"{ letter = "a", picture = "x" }"#),
        &["2"],
        "single uppercase letter",
    );
    refused(
        &one(r#"{ letter = "AB", picture = "x" }"#),
        &["2"],
        "single uppercase letter",
    );
    refused(
        &one(r#"{ letter = "É", picture = "x" }"#),
        &["2"],
        "single uppercase letter",
    );
    refused(
        &one(r#"{ letter = "1", picture = "x" }"#),
        &["2"],
        "single uppercase letter",
    );
    refused(
        &one(r#"{ letter = "Q", picture = "x" }"#),
        &["2"],
        "listed twice",
    );
    refused(&one(r#"{ letter = "A" }"#), &["2"], "symbols[0].picture");
    refused(&one(r#"{ picture = "x" }"#), &["2"], "symbols[0].letter");
    refused(
        &one(r#"{ letter = "A", picture = "x", colour = "red" }"#),
        &["2"],
        "unknown key 'colour'",
    );
    refused(&one(r#""A""#), &["2"], "symbols[0]");
    refused(
        &format!("symbols = [{{ letter = \"A\", picture = \"x\" }}]\n{amounts}"),
        &["2"],
        "at least 2 symbols",
    );
    refused(amounts, &["2"], "'symbols' is missing");
}

#[test]
fn amounts_and_options_are_checked() {
    refused(
        &format!("{SYMBOLS}clover_amounts = [\"3\"]"),
        &["3"],
        "'month_amounts' is missing",
    );
    refused(
        &format!("{SYMBOLS}month_amounts = [\"2\"]"),
        &["2"],
        "'clover_amounts' is missing",
    );
    refused(
        &format!("{SYMBOLS}month_amounts = [\"2.0\"]\nclover_amounts = [\"3\"]"),
        &["2"],
        "month_amounts[0]",
    );
    refused(
        &format!("{SYMBOLS}month_amounts = [\"2\"]\nclover_amounts = [\"0\"]"),
        &["2"],
        "clover_amounts[0]",
    );
    refused(
        &format!(
            "{SYMBOLS}month_amounts = [\"2\"]\nclover_amounts = [\"3\"]\nmax_winning_months = 0"
        ),
        &["2"],
        "max_winning_months",
    );
    refused(
        &format!(
            "{SYMBOLS}month_amounts = [\"2\"]\nclover_amounts = [\"3\"]\nmonth_amount = [\"2\"]"
        ),
        &["2"],
        "unknown layout parameter 'month_amount'",
    );
}

#[test]
fn unreachable_prize_is_refused_at_construction() {
    let layout = format!(
        "{SYMBOLS}month_amounts = [\"2\", \"5\"]\nclover_amounts = [\"3\"]\nmax_winning_months = 2"
    );
    // 1 is below every amount; 17 needs more than two months and a clover.
    refused(&layout, &["1"], "prize 1 € cannot be shown");
    refused(&layout, &["10", "17"], "prize 17 € cannot be shown");
    let e = CalendarSynthesizer::new(&stake_with(&layout, &["17"])).unwrap_err();
    assert!(
        e.contains("month_amounts") && e.contains("clover_amounts"),
        "{e}"
    );
    assert!(CalendarSynthesizer::new(&stake_with(&layout, &["13", "3", "0.5"])).is_err());
    assert!(CalendarSynthesizer::new(&stake_with(&layout, &["13", "3", "10"])).is_ok());
}

/// Another game of the same kind needs only new data: other letters, other amounts (cents).
#[test]
fn another_game_reuses_the_mechanic() {
    let layout = r#"
        symbols = [{ letter = "X", picture = "x" }, { letter = "Y", picture = "y" }, { letter = "Z", picture = "z" }]
        month_amounts = ["0.5", "1", "2.5"]
        clover_amounts = ["0.5", "7"]
        max_winning_months = 3
    "#;
    let stake = stake_with(layout, &["0.5", "1.5", "3", "7.5", "14.5"]);
    let syn = CalendarSynthesizer::new(&stake).unwrap();
    let dec = CalendarDecoder::new(&stake).unwrap();
    let mut out = String::new();
    for seed in 0..2000u64 {
        let mut rng = LayoutRng::seed_from_u64(seed);
        for p in ["0", "0.5", "1.5", "3", "7.5", "14.5"] {
            out.clear();
            syn.synthesize(d(p), &mut rng, &mut out).unwrap();
            assert_eq!(dec.decode(&out), Ok(d(p)), "{out}");
            assert!(out.bytes().all(|b| !b"ABCDEFGH".contains(&b)), "{out}");
        }
    }
    // The built-in letters are not symbols of this game.
    let builtin = "AB:0.5/".repeat(11) + "AB:0.5|1-2-3:7";
    assert!(dec
        .decode(&builtin)
        .unwrap_err()
        .0
        .contains("the symbols are X, Y, Z"));
}
