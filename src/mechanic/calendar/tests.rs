//! Tests of the calendar mechanic: the decoder on hand-written layouts (every rule and every
//! invalid case of SPEC §3), the parameters, and the synthesizer checked by the decoder.

// These tests print what they saw, for whoever runs them with --nocapture.
#![allow(clippy::print_stdout)]

use super::{CalendarDecoder, CalendarParams, CalendarSettings, CalendarSynthesizer};
use crate::game::Game;
use crate::mechanic::{Mechanic, Params};
use rust_decimal::Decimal;
use std::str::FromStr;

/// Decimal from text (test data only).
fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

/// A stake as these tests build it: its checked parameters (or why they are refused), and
/// its prize amounts (losers excluded).
struct TestStake {
    params: Result<CalendarParams, String>,
    prizes: Vec<Decimal>,
}

impl TestStake {
    /// The prize tiers, highest first, then zero.
    fn tiers(&self) -> Vec<Decimal> {
        let mut t = self.prizes.clone();
        t.push(Decimal::ZERO);
        t
    }
}

/// The built-in stake of "2013 Année de la chance".
fn builtin_stake() -> TestStake {
    let stake = Game::builtin("annee-chance").unwrap().stakes[0].clone();
    let Mechanic::Calendar(params) = stake.mechanic else {
        panic!("annee-chance is a calendar game")
    };
    TestStake {
        params: Ok(params),
        prizes: stake.prizes.iter().map(|p| p.amount).collect(),
    }
}

/// The checked parameters of the built-in stake.
fn builtin_params() -> CalendarParams {
    builtin_stake().params.unwrap()
}

/// A stake with this `layout` table (TOML text) and these prizes.
fn stake_with(layout: &str, prizes: &[&str]) -> TestStake {
    let params = toml::from_str::<CalendarSettings>(layout)
        .map_err(|e| e.to_string())
        .and_then(|s| CalendarParams::check(s).map_err(|e| e.to_string()));
    TestStake {
        params,
        prizes: prizes.iter().map(|a| d(a)).collect(),
    }
}

/// The decoder of a test stake, or why its parameters are refused.
fn decoder_of(stake: &TestStake) -> Result<CalendarDecoder, String> {
    stake
        .params
        .as_ref()
        .map(|p| p.decoder())
        .map_err(Clone::clone)
}

/// The synthesizer of a test stake, or why it cannot be built.
fn synthesizer_of(stake: &TestStake) -> Result<CalendarSynthesizer, String> {
    let params = stake.params.as_ref().map_err(Clone::clone)?;
    params.synthesizer(&stake.prizes).map_err(|e| e.to_string())
}

/// The decoder on hand-written layouts.
mod decode {
    use super::*;

    use crate::mechanic::text::DecodeText;

    /// Twelve losing months (no two identical symbols), January to December.
    const LOSING_MONTHS: [&str; 12] = [
        "AB:6", "CD:10", "EF:2", "GH:3", "BA:4", "DC:5", "FE:20", "HG:30", "AC:40", "BD:50",
        "CE:100", "DF:500",
    ];

    fn decoder() -> CalendarDecoder {
        decoder_of(&builtin_stake()).unwrap()
    }

    /// A layout from twelve months (with some replaced) and a clover.
    fn layout(replace: &[(usize, &str)], clover: &str) -> String {
        let mut months: Vec<&str> = LOSING_MONTHS.to_vec();
        for &(i, m) in replace {
            months[i] = m;
        }
        format!("{}|{clover}", months.join("/"))
    }

    /// Asserts that `layout` is refused with a message containing `needle`.
    #[track_caller]
    fn bad(layout: &str, needle: &str) {
        let dec = decoder();
        match dec.decode_text(layout) {
            Ok(p) => panic!("{layout:?} decoded to {p}, expected an error about {needle:?}"),
            Err(e) => assert!(
                e.to_string().contains(needle),
                "{layout:?}: message {:?} should mention {needle:?}",
                e.to_string()
            ),
        }
        assert!(
            dec.form_text(layout).is_err(),
            "form() must refuse {layout:?} too"
        );
    }

    #[track_caller]
    fn good(layout: &str, prize: &str, form: &str) {
        let dec = decoder();
        assert_eq!(dec.decode_text(layout), Ok(d(prize)), "{layout}");
        assert_eq!(dec.form_text(layout).unwrap(), form, "{layout}");
    }

    #[test]
    fn losing_layout() {
        good(&layout(&[], "1-2-12:20"), "0", "loss");
        // Adjacent or not, different symbols never win; a 12 is not a 13.
        good(&layout(&[], "12-11-10:1000"), "0", "loss");
    }

    #[test]
    fn one_month_wins_its_amount() {
        good(&layout(&[(1, "CC:10")], "1-2-12:20"), "10", "1 month");
        good(&layout(&[(11, "HH:40000")], "3-5-7:3"), "40000", "1 month");
    }

    #[test]
    fn several_months_add_up() {
        good(
            &layout(&[(0, "AA:6"), (5, "DD:4"), (11, "HH:2")], "1-2-12:20"),
            "12",
            "3 months",
        );
    }

    #[test]
    fn clover_wins_with_a_13_anywhere() {
        good(&layout(&[], "13-1-2:3"), "3", "clover");
        good(&layout(&[], "1-13-2:3"), "3", "clover");
        good(&layout(&[], "1-2-13:1000"), "1000", "clover");
    }

    #[test]
    fn months_and_clover_add_up() {
        good(
            &layout(&[(3, "BB:6")], "4-12-13:20"),
            "26",
            "1 month + clover",
        );
        good(
            &layout(&[(0, "AA:6"), (2, "EE:4")], "4-12-13:20"),
            "30",
            "2 months + clover",
        );
    }

    #[test]
    fn twelve_winning_months() {
        let months: Vec<String> = "ABCDEFGHABCD"
            .chars()
            .map(|c| format!("{c}{c}:10000"))
            .collect();
        good(
            &format!("{}|13-12-11:1000", months.join("/")),
            "121000",
            "12 months + clover",
        );
    }

    #[test]
    fn wrong_number_of_months() {
        let eleven = LOSING_MONTHS[..11].join("/");
        bad(&format!("{eleven}|1-2-3:20"), "11 months");
        let thirteen = format!("{}/AB:6", LOSING_MONTHS.join("/"));
        bad(&format!("{thirteen}|1-2-3:20"), "more than 12 months");
        bad(&LOSING_MONTHS.join("/"), "ends after month 12");
        bad("", "ends in month 1");
        bad("AB:6/CD:10", "ends after month 2");
    }

    #[test]
    fn month_symbols() {
        bad(&layout(&[(2, "A:6")], "1-2-3:20"), "month 3 shows 1 symbol");
        bad(&layout(&[(2, ":6")], "1-2-3:20"), "month 3 shows 0 symbol");
        bad(
            &layout(&[(2, "ABC:6")], "1-2-3:20"),
            "more than two symbols",
        );
        bad(&layout(&[(4, "AI:6")], "1-2-3:20"), "'I' is not a symbol");
        bad(&layout(&[(4, "ZZ:6")], "1-2-3:20"), "'Z' is not a symbol");
        bad(&layout(&[(0, "ab:6")], "1-2-3:20"), "'a' is not a symbol");
        bad(&layout(&[(0, " AB:6")], "1-2-3:20"), "' ' is not a symbol");
        bad(&layout(&[(0, "AÉ:6")], "1-2-3:20"), "'É' is not a symbol");
        bad(&layout(&[(0, "AB6")], "1-2-3:20"), "expected ':'");
    }

    #[test]
    fn month_amounts() {
        bad(
            &layout(&[(6, "AB:7")], "1-2-3:20"),
            "amount 7 is not one of",
        );
        bad(
            &layout(&[(6, "AB:0")], "1-2-3:20"),
            "amount 0 is not one of",
        );
        bad(
            &layout(&[(6, "AB:6.0")], "1-2-3:20"),
            "not written canonically",
        );
        bad(
            &layout(&[(6, "AB:06")], "1-2-3:20"),
            "not written canonically",
        );
        bad(
            &layout(&[(6, "AB:6.")], "1-2-3:20"),
            "not written canonically",
        );
        bad(
            &layout(&[(6, "AB:.5")], "1-2-3:20"),
            "not written canonically",
        );
        bad(&layout(&[(6, "AB:")], "1-2-3:20"), "month 7 has no amount");
        bad(
            &layout(&[(6, "AB:-6")], "1-2-3:20"),
            "month 7 has no amount",
        );
        bad(
            &layout(&[(6, "AB: 6")], "1-2-3:20"),
            "month 7 has no amount",
        );
        bad(&layout(&[(6, "AB:6 ")], "1-2-3:20"), "unexpected ' '");
        bad(&layout(&[(6, "AB:6e0")], "1-2-3:20"), "unexpected 'e'");
        // An amount of the clover's list only is not a month amount.
        let clover_only = "AA:1000000";
        bad(&layout(&[(6, clover_only)], "1-2-3:20"), "month_amounts");
    }

    #[test]
    fn separators() {
        bad(
            &LOSING_MONTHS.join("/").replace("CD:10/", "CD:10;"),
            "expected '/'",
        );
        bad(
            &format!("{};1-2-3:20", LOSING_MONTHS.join("/")),
            "expected '|'",
        );
        bad(
            &format!("{}||1-2-3:20", LOSING_MONTHS.join("/")),
            "clover number 1",
        );
        bad(&format!("{}|1-2-3:20", LOSING_MONTHS.join("//")), "symbol");
    }

    #[test]
    fn clover_shape() {
        bad(&layout(&[], "4-12:20"), "clover shows 2 numbers");
        bad(&layout(&[], "4:20"), "clover shows 1 numbers");
        bad(&layout(&[], "1-2-3-4:20"), "more than 3 numbers");
        bad(&layout(&[], "1-2-3"), "ends after clover number 3");
        bad(&layout(&[], "1-2-"), "clover number 3");
        bad(&layout(&[], ""), "clover number 1");
        bad(&layout(&[], "1-2-3:"), "the clover has no amount");
        bad(&layout(&[], "1-2-3;20"), "expected ':'");
        bad(&layout(&[], "1,2-3:20"), "expected '-'");
    }

    #[test]
    fn clover_numbers() {
        bad(&layout(&[], "0-2-13:20"), "clover number 1 is '0'");
        bad(&layout(&[], "1-14-3:20"), "clover number 2 is '14'");
        bad(&layout(&[], "1-2-130:20"), "clover number 3 is '130'");
        bad(
            &layout(&[], "1-2-99999999999999999999:20"),
            "clover number 3 is '9999",
        );
        // A long run of digits is shown cut, with its length.
        bad(
            &layout(&[], &format!("1-2-{}:20", "9".repeat(500))),
            "…' (500 bytes)",
        );
        bad(&layout(&[], "01-2-13:20"), "leading zero");
        bad(&layout(&[], "1-2-013:20"), "leading zero");
        bad(&layout(&[], "00-2-13:20"), "leading zero");
        bad(&layout(&[], "4-4-13:20"), "shows 4 twice");
        bad(&layout(&[], "13-4-13:20"), "shows 13 twice");
        bad(&layout(&[], "+1-2-13:20"), "clover number 1");
    }

    #[test]
    fn clover_amounts() {
        bad(
            &layout(&[], "1-2-13:5"),
            "amount 5 is not one of the amounts this stake allows (clover_amounts)",
        );
        bad(&layout(&[], "1-2-12:40000"), "clover_amounts");
        bad(&layout(&[], "1-2-13:20.0"), "not written canonically");
        bad(&layout(&[], "1-2-13:020"), "not written canonically");
    }

    #[test]
    fn trailing_garbage() {
        bad(&layout(&[], "1-2-13:20x"), "unexpected 'x'");
        bad(&layout(&[], "1-2-13:20 "), "unexpected ' '");
        // Control characters are shown escaped.
        bad(&layout(&[], "1-2-13:20\n"), "unexpected '\\n'");
        bad(&layout(&[], "1-2-13:20\u{1b}[2J"), "unexpected '\\u{1b}'");
        bad(&layout(&[], "1-2-13:20|1-2-3:20"), "unexpected '|'");
        bad(&layout(&[], "1-2-13:20/"), "unexpected '/'");
    }

    #[test]
    fn never_panics_on_prefixes_and_noise() {
        let dec = decoder();
        let full = layout(&[(0, "AA:6")], "4-12-13:20");
        for end in 0..full.len() {
            let _ = dec.decode_text(&full[..end]);
        }
        for noise in ["é", "\u{0}", "ÿÿ", "|||", "::::", "-1", "AA:6/"] {
            for at in 0..full.len() {
                let mut s = full.clone();
                s.insert_str(at, noise);
                assert!(dec.decode_text(&s).is_err(), "{s:?}");
            }
        }
    }

    #[test]
    fn the_longest_valid_layout_is_exactly_max_layout_len() {
        let dec = decoder();
        let params = builtin_params();
        let longest = |t: &crate::money::AmountTable| {
            (0..t.len())
                .map(|i| t.get(i).1.to_string())
                .max_by_key(String::len)
                .unwrap()
        };
        let month = format!("AB:{}", longest(&params.month_amounts));
        let months = vec![month; 12].join("/");
        let layout = format!("{months}|10-11-12:{}", longest(&params.clover_amounts));
        assert_eq!(dec.decode_text(&layout), Ok(d("0")), "{layout}");
        assert_eq!(layout.len(), dec.max_layout_len(), "{layout}");
    }

    #[test]
    fn wins_beyond_what_an_amount_holds_are_an_error_not_a_panic() {
        // Parameters built in code, without the loader's bound on amounts.
        let mut params = builtin_params();
        let huge = rust_decimal::Decimal::MAX;
        params.month_amounts = crate::money::AmountTable::new([huge]);
        params.clover_amounts = crate::money::AmountTable::new([huge]);
        let dec = CalendarDecoder::from_params(&params);
        let max = crate::money::canonical(huge);
        let mut months = vec![format!("AB:{max}"); 12];
        months[0] = format!("AA:{max}");
        let one_month_and_clover = format!("{}|1-2-13:{max}", months.join("/"));
        let err = dec.decode_text(&one_month_and_clover).unwrap_err();
        assert_eq!(err, crate::mechanic::LayoutError::WinsOverflow, "{err}");
        months[1] = format!("BB:{max}");
        let two_months = format!("{}|1-2-3:{max}", months.join("/"));
        assert!(dec.decode_text(&two_months).is_err());
    }
}

/// The layout parameters: every check names the parameter at fault.
mod params {
    use super::*;

    use crate::mechanic::text::{DecodeText, SynthesizeText};
    use crate::mechanic::LayoutRng;
    use rand::SeedableRng;

    const SYMBOLS: &str = r#"symbols = [
  { letter = "A", picture = "a" }, { letter = "B", picture = "b" }, { letter = "C", picture = "c" },
]
"#;

    /// Both halves must refuse the stake with a message containing `needle`.
    #[track_caller]
    fn refused(layout: &str, prizes: &[&str], needle: &str) {
        let stake = stake_with(layout, prizes);
        let e = synthesizer_of(&stake).expect_err("synthesizer must refuse");
        assert!(e.contains(needle), "{e:?} should mention {needle:?}");
        if !needle.contains("cannot be shown") {
            let e = decoder_of(&stake).expect_err("decoder must refuse");
            assert!(e.contains(needle), "{e:?} should mention {needle:?}");
        }
    }

    #[test]
    fn builtin_stake_is_accepted() {
        let stake = builtin_stake();
        assert!(decoder_of(&stake).is_ok());
        assert!(synthesizer_of(&stake).is_ok());
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
            "unknown field `colour`, expected `letter` or `picture`",
        );
        refused(&one(r#""A""#), &["2"], "expected struct SymbolEntry");
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
            "unknown field `month_amount`, expected one of `symbols`, `month_amounts`, `clover_amounts`, `max_winning_months`",
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
        let e = synthesizer_of(&stake_with(&layout, &["17"])).unwrap_err();
        assert!(
            e.contains("month_amounts") && e.contains("clover_amounts"),
            "{e}"
        );
        assert!(synthesizer_of(&stake_with(&layout, &["13", "3", "0.5"])).is_err());
        assert!(synthesizer_of(&stake_with(&layout, &["13", "3", "10"])).is_ok());
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
        let syn = synthesizer_of(&stake).unwrap();
        let dec = decoder_of(&stake).unwrap();
        let mut out = String::new();
        for seed in 0..2000u64 {
            let mut rng = LayoutRng::seed_from_u64(seed);
            for p in ["0", "0.5", "1.5", "3", "7.5", "14.5"] {
                out.clear();
                syn.synthesize_text(d(p), &mut rng, &mut out).unwrap();
                assert_eq!(dec.decode_text(&out), Ok(d(p)), "{out}");
                assert!(out.bytes().all(|b| !b"ABCDEFGH".contains(&b)), "{out}");
            }
        }
        // The built-in letters are not symbols of this game.
        let builtin = "AB:0.5/".repeat(11) + "AB:0.5|1-2-3:7";
        assert!(dec
            .decode_text(&builtin)
            .unwrap_err()
            .to_string()
            .contains("the symbols are X, Y, Z"));
    }
}

/// The synthesizer, judged by the decoder: exact prizes, variety of forms, near misses, and
/// non-winning parts that do not depend on the prize.
mod synth {
    use super::*;

    use crate::mechanic::text::{DecodeText, SynthesizeText};
    use crate::mechanic::LayoutRng;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rust_decimal::Decimal;
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::LazyLock;

    static PAIR: LazyLock<(CalendarSynthesizer, CalendarDecoder, Vec<Decimal>)> =
        LazyLock::new(|| {
            let stake = builtin_stake();
            (
                synthesizer_of(&stake).unwrap(),
                decoder_of(&stake).unwrap(),
                stake.tiers(),
            )
        });

    const LETTERS: &[u8] = b"ABCDEFGH";

    /// A month as shown: two symbols and the amount's text.
    struct Month<'a> {
        first: u8,
        second: u8,
        amount: &'a str,
    }

    /// Splits a (valid) layout into its months and clover, for statistics.
    fn parts(layout: &str) -> (Vec<Month<'_>>, Vec<u8>, &str) {
        let (months, clover) = layout.split_once('|').unwrap();
        let months = months
            .split('/')
            .map(|m| Month {
                first: m.as_bytes()[0],
                second: m.as_bytes()[1],
                amount: &m[3..],
            })
            .collect();
        let (numbers, amount) = clover.split_once(':').unwrap();
        let numbers = numbers.split('-').map(|n| n.parse().unwrap()).collect();
        (months, numbers, amount)
    }

    fn synthesize(prize: Decimal, seed: u64) -> String {
        let mut rng = LayoutRng::seed_from_u64(seed);
        let mut out = String::new();
        PAIR.0.synthesize_text(prize, &mut rng, &mut out).unwrap();
        out
    }

    fn form_text(months: usize, clover: bool) -> String {
        match (months, clover) {
            (0, false) => "loss".into(),
            (0, true) => "clover".into(),
            (1, false) => "1 month".into(),
            (n, false) => format!("{n} months"),
            (1, true) => "1 month + clover".into(),
            (n, true) => format!("{n} months + clover"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// decode(synthesize(prize)) == prize for every prize of the table and 0, across seeds.
        #[test]
        fn every_prize_round_trips(seed in any::<u64>(), tier in 0usize..8) {
            let (syn, dec, tiers) = &*PAIR;
            let prize = tiers[tier % tiers.len()];
            let mut rng = LayoutRng::seed_from_u64(seed);
            let mut out = String::from("kept:");
            syn.synthesize_text(prize, &mut rng, &mut out).unwrap();
            // The layout is appended: what `out` held stays.
            prop_assert!(out.starts_with("kept:"));
            prop_assert_eq!(dec.decode_text(&out[5..]), Ok(prize), "{}", out);
        }
    }

    /// A synthesizer built again from the same stake, after it has made other layouts first,
    /// gives the shared one's layout for every seed (a layout depends on the prize and the seed
    /// only: no state carried between tickets), and 64 seeds give many layouts. (This test
    /// compared one synthesizer's output with itself, which could not fail.)
    #[test]
    fn same_seed_same_layout() {
        let again = synthesizer_of(&builtin_stake()).unwrap();
        let with = |syn: &CalendarSynthesizer, prize: Decimal, seed: u64| {
            let mut rng = LayoutRng::seed_from_u64(seed);
            let mut out = String::new();
            syn.synthesize_text(prize, &mut rng, &mut out).unwrap();
            out
        };
        for &prize in &PAIR.2 {
            for seed in 1000..1100 {
                with(&again, prize, seed);
            }
            let layouts: Vec<String> = (0..64).map(|seed| synthesize(prize, seed)).collect();
            for (seed, layout) in layouts.iter().enumerate() {
                assert_eq!(
                    &with(&again, prize, seed as u64),
                    layout,
                    "prize {prize}, seed {seed}"
                );
            }
            let distinct: BTreeSet<&String> = layouts.iter().collect();
            assert!(
                distinct.len() > 32,
                "prize {prize}: 64 seeds gave only {} layouts",
                distinct.len()
            );
        }
    }

    #[test]
    fn prize_outside_the_table_is_refused() {
        let mut rng = LayoutRng::seed_from_u64(0);
        let mut out = String::new();
        let e = PAIR
            .0
            .synthesize_text(d("7"), &mut rng, &mut out)
            .unwrap_err();
        assert_eq!(
            e,
            crate::mechanic::SynthesisError::NotAPrize { prize: d("7") }
        );
        assert_eq!(
            e.to_string(),
            "prize 7 € is not in this stake's prize table"
        );
        assert!(out.is_empty());
    }

    /// Over 20 000 tickets per prize, every form the amounts allow appears, and simple forms
    /// dominate. Prints the forms observed (run with --nocapture for the report).
    #[test]
    fn every_form_appears() {
        let (syn, dec, tiers) = &*PAIR;
        for &prize in tiers {
            let expected: BTreeSet<String> = syn
                .forms(prize)
                .into_iter()
                .map(|(m, c)| form_text(m, c))
                .collect();
            let mut seen: BTreeMap<String, u32> = BTreeMap::new();
            for seed in 0..20_000 {
                let layout = synthesize(prize, seed);
                assert_eq!(dec.decode_text(&layout), Ok(prize), "{layout}");
                *seen.entry(dec.form_text(&layout).unwrap()).or_default() += 1;
            }
            println!("{prize:>6} €: {seen:?}");
            if prize.is_zero() {
                assert_eq!(seen.keys().collect::<Vec<_>>(), ["loss"]);
                continue;
            }
            let seen_forms: BTreeSet<String> = seen.keys().cloned().collect();
            assert_eq!(seen_forms, expected, "prize {prize}");
            if expected.len() >= 2 {
                assert!(seen.len() >= 2, "prize {prize} shows a single form");
            }
            // One component (one month or the clover alone) is the most common when possible.
            let simple: u32 = ["1 month", "clover"]
                .iter()
                .filter_map(|f| seen.get(*f))
                .sum();
            let top = seen.values().max().copied().unwrap_or(0);
            if simple > 0 {
                assert!(
                    seen.get("1 month").or(seen.get("clover")) >= Some(&(top / 2)),
                    "prize {prize}: {seen:?}"
                );
            }
        }
    }

    /// Every prize with at least two possible forms has them (the built-in amounts allow it).
    #[test]
    fn builtin_prizes_have_several_forms() {
        let (syn, _, tiers) = &*PAIR;
        for &p in tiers.iter().filter(|p| !p.is_zero()) {
            assert!(syn.forms(p).len() >= 2, "prize {p}: {:?}", syn.forms(p));
        }
    }

    #[test]
    fn losers_show_near_misses() {
        let n = 20_000;
        let (mut twelve, mut adjacent_tickets, mut adjacent_months) = (0, 0, 0);
        for seed in 0..n {
            let layout = synthesize(Decimal::ZERO, seed);
            let (months, numbers, _) = parts(&layout);
            assert!(!numbers.contains(&13), "{layout}");
            twelve += usize::from(numbers.contains(&12));
            let adj = months
                .iter()
                .filter(|m| {
                    let a = LETTERS.iter().position(|&l| l == m.first).unwrap();
                    let b = LETTERS.iter().position(|&l| l == m.second).unwrap();
                    a.abs_diff(b) == 1
                })
                .count();
            adjacent_months += adj;
            adjacent_tickets += usize::from(adj > 0);
        }
        let twelve = twelve as f64 / n as f64;
        let adjacent_months = adjacent_months as f64 / (12 * n) as f64;
        let adjacent_tickets = adjacent_tickets as f64 / n as f64;
        println!("losers: clover with 12 {twelve:.3}, neighbouring symbols per month {adjacent_months:.3}, tickets with one {adjacent_tickets:.3}");
        assert!(twelve > 0.3, "{twelve}");
        assert!(adjacent_months > 0.3, "{adjacent_months}");
        assert!(adjacent_tickets > 0.95, "{adjacent_tickets}");
    }

    /// Frequencies of the amounts shown by non-winning months and non-winning clovers, and of the
    /// symbol pairs of non-winning months.
    #[derive(Default)]
    struct Shown {
        month_amounts: BTreeMap<String, f64>,
        pairs: BTreeMap<(u8, u8), f64>,
        clover_amounts: BTreeMap<String, f64>,
        clover_twelve: f64,
        months: f64,
        clovers: f64,
    }

    impl Shown {
        fn add(&mut self, layout: &str) {
            let (months, numbers, clover_amount) = parts(layout);
            for m in months.iter().filter(|m| m.first != m.second) {
                *self.month_amounts.entry(m.amount.to_string()).or_default() += 1.0;
                *self.pairs.entry((m.first, m.second)).or_default() += 1.0;
                self.months += 1.0;
            }
            if !numbers.contains(&13) {
                *self
                    .clover_amounts
                    .entry(clover_amount.to_string())
                    .or_default() += 1.0;
                self.clover_twelve += f64::from(u8::from(numbers.contains(&12)));
                self.clovers += 1.0;
            }
        }
    }

    /// Largest difference of frequency between two histograms.
    fn gap<K: Ord + Clone>(a: &BTreeMap<K, f64>, na: f64, b: &BTreeMap<K, f64>, nb: f64) -> f64 {
        let keys: BTreeSet<K> = a.keys().chain(b.keys()).cloned().collect();
        keys.iter()
            .map(|k| (a.get(k).unwrap_or(&0.0) / na - b.get(k).unwrap_or(&0.0) / nb).abs())
            .fold(0.0, f64::max)
    }

    /// What does not win looks the same on winning and losing tickets: the amounts of
    /// non-winning months and clovers, and the symbol pairs, follow one distribution.
    #[test]
    fn non_winning_parts_do_not_reveal_the_prize() {
        let mut losers = Shown::default();
        for seed in 0..20_000 {
            losers.add(&synthesize(Decimal::ZERO, seed));
        }
        for prize in ["6", "10", "100", "1000"] {
            let mut winners = Shown::default();
            for seed in 0..20_000 {
                winners.add(&synthesize(d(prize), seed));
            }
            let g = gap(
                &losers.month_amounts,
                losers.months,
                &winners.month_amounts,
                winners.months,
            );
            assert!(g < 0.006, "prize {prize}: month amounts differ by {g}");
            let g = gap(&losers.pairs, losers.months, &winners.pairs, winners.months);
            assert!(g < 0.005, "prize {prize}: symbol pairs differ by {g}");
            if winners.clovers > 5000.0 {
                let g = gap(
                    &losers.clover_amounts,
                    losers.clovers,
                    &winners.clover_amounts,
                    winners.clovers,
                );
                assert!(g < 0.02, "prize {prize}: clover amounts differ by {g}");
                let g = (losers.clover_twelve / losers.clovers
                    - winners.clover_twelve / winners.clovers)
                    .abs();
                assert!(g < 0.02, "prize {prize}: 12 on the clover differs by {g}");
            }
        }
    }

    /// Winning months fall anywhere among the twelve.
    #[test]
    fn winning_months_at_any_position() {
        let mut at = [0u32; 12];
        for seed in 0..12_000 {
            let layout = synthesize(d("10"), seed);
            for (i, m) in parts(&layout).0.iter().enumerate() {
                at[i] += u32::from(m.first == m.second);
            }
        }
        let (lo, hi) = (at.iter().min().unwrap(), at.iter().max().unwrap());
        assert!(*lo > 0 && f64::from(*hi) / f64::from(*lo) < 1.3, "{at:?}");
    }
}
