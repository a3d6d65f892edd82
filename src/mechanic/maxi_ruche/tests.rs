//! Decoder unit tests on hand-written layouts (every rule of SPEC §3), round-trip properties of
//! the synthesizer, and checks of the variety a player expects.

// These tests print what they saw, for whoever runs them with --nocapture.
#![allow(clippy::print_stdout)]

use super::{BonusEntry, MaxiDecoder, MaxiParams, MaxiSettings, MaxiSynthesizer};
use crate::game::{Game, Stake};
use crate::mechanic::text::{DecodeText, SynthesizeText};
use crate::mechanic::{LayoutRng, Mechanic, Params};
use proptest::prelude::*;
use rand::SeedableRng;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::OnceLock;

/// The built-in stake, its decoder and its synthesizer, built once for all tests.
fn built() -> &'static (Stake, MaxiDecoder, MaxiSynthesizer) {
    static BUILT: OnceLock<(Stake, MaxiDecoder, MaxiSynthesizer)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let stake = Game::builtin("maxi-ruche-or").unwrap().stakes[0].clone();
        let dec = params_of(&stake).decoder();
        let synth = synthesizer_of(&stake).unwrap();
        (stake, dec, synth)
    })
}

/// The checked parameters of a built-in stake.
fn params_of(stake: &Stake) -> MaxiParams {
    match &stake.mechanic {
        Mechanic::MaxiRuche(p) => p.clone(),
        other => panic!("not a maxi-ruche stake: {other:?}"),
    }
}

/// The synthesizer of a built-in stake.
fn synthesizer_of(stake: &Stake) -> Result<MaxiSynthesizer, String> {
    let prizes: Vec<Decimal> = stake.prizes.iter().map(|p| p.amount).collect();
    params_of(stake)
        .synthesizer(&prizes)
        .map_err(|e| e.to_string())
}

/// The settings of the built-in stake, to edit.
fn settings() -> MaxiSettings {
    let text = crate::game::BUILTIN
        .iter()
        .find(|(id, _)| *id == "maxi-ruche-or")
        .unwrap()
        .1;
    crate::mechanic::settings_of::<MaxiParams>(text, 0)
}

fn stake() -> Stake {
    built().0.clone()
}

fn decoder() -> &'static MaxiDecoder {
    &built().1
}

fn synthesizer() -> &'static MaxiSynthesizer {
    &built().2
}

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

/// Rows of a hive that wins nothing: near misses (two P, a multiplier on a losing row).
const LOSING_ROWS: [&str; 7] = [
    "1:PPAB",
    "2:ABFFP",
    "3:AABBFP",
    "5:PPFAB5A",
    "10:FFFFFF",
    "20:AFBFP",
    "25:FFFF",
];

/// A hive: `top` is the bee amount; `changes` replace rows (index, row).
fn hive(top: &str, changes: &[(usize, &str)]) -> String {
    let mut rows = LOSING_ROWS;
    for &(i, row) in changes {
        rows[i] = row;
    }
    format!("{top}#{}", rows.join("/"))
}

const NO_BEES: &str = "+............";

fn ok(layout: &str) -> Decimal {
    decoder()
        .decode_text(layout)
        .unwrap_or_else(|e| panic!("{layout} should be valid: {e}"))
}

fn form(layout: &str) -> String {
    decoder().form_text(layout).unwrap()
}

/// Asserts the layout is refused with a message containing `needle`.
fn refused(layout: &str, needle: &str) {
    match decoder().decode_text(layout) {
        Ok(p) => panic!("{layout} should be refused ({needle}) but decodes to {p}"),
        Err(e) => assert!(
            e.to_string().contains(needle),
            "{layout}: message {:?} should mention {needle:?}",
            e.to_string()
        ),
    }
}

// ---- valid layouts ----

#[test]
fn losing_ticket_with_empty_bonus() {
    let l = format!("{}{NO_BEES}", hive("2", &[]));
    assert_eq!(ok(&l), d("0"));
    assert_eq!(form(&l), "loss");
}

#[test]
fn three_bonus_bees_lose() {
    let l = format!("{}+Q.Q....Q....", hive("2", &[]));
    assert_eq!(ok(&l), d("0"));
    assert_eq!(form(&l), "loss");
}

#[test]
fn row_wins_its_amount() {
    let l = hive("2", &[(3, "5:PPFPBFA")]);
    assert_eq!(ok(&l), d("5"));
    assert_eq!(form(&l), "row");
}

#[test]
fn multiplier_x10_multiplies_the_winning_row() {
    let l = hive("2", &[(0, "10:PPXP")]);
    assert_eq!(ok(&l), d("100"));
    assert_eq!(form(&l), "row x10");
    let l = hive("2", &[(2, "10:AP5PBP")]);
    assert_eq!(ok(&l), d("50"));
    assert_eq!(form(&l), "row x5");
}

#[test]
fn multiplier_on_a_losing_row_does_nothing() {
    // LOSING_ROWS[3] already holds a 5 with two P.
    let l = format!("{}{NO_BEES}", hive("2", &[(0, "1:PPXA")]));
    assert_eq!(ok(&l), d("0"));
}

#[test]
fn several_rows_add_up() {
    let l = hive("2", &[(1, "20:PPPAB"), (4, "10:PAPFPB")]);
    assert_eq!(ok(&l), d("30"));
    assert_eq!(form(&l), "2 rows");
    let l = hive("2", &[(1, "20:PPPAB"), (4, "10:PAPFP3")]);
    assert_eq!(ok(&l), d("50"));
    assert_eq!(form(&l), "row + row x3");
}

#[test]
fn bee_wins_the_hive_top_amount() {
    let l = hive("50", &[(4, "10:FFQFFF")]);
    assert_eq!(ok(&l), d("50"));
    assert_eq!(form(&l), "bee");
    let l = hive("30", &[(4, "10:FFQFFF"), (5, "20:PPPAB")]);
    assert_eq!(ok(&l), d("50"));
    assert_eq!(form(&l), "row + bee");
}

#[test]
fn bee_in_a_winning_row_counts_both() {
    let l = hive("3", &[(6, "2:PQPP")]);
    assert_eq!(ok(&l), d("5"));
}

#[test]
fn extra_hive_plays_by_the_same_rules() {
    let main = hive("2", &[(6, "25:FEFF")]);
    let extra = hive("30", &[(1, "20:PPPAQ")]);
    let l = format!("{main}|{extra}");
    assert_eq!(ok(&l), d("50"));
    assert_eq!(form(&l), "EXTRA: row + bee");
    let main = hive("2", &[(6, "5:PPEP")]);
    let l = format!("{main}|{extra}");
    assert_eq!(ok(&l), d("55"));
    assert_eq!(form(&l), "row + EXTRA: row + bee");
}

#[test]
fn losing_extra_hive_then_bonus() {
    let main = hive("2", &[(6, "25:FEFF")]);
    let l = format!("{main}|{}{NO_BEES}", hive("5000", &[]));
    assert_eq!(ok(&l), d("0"));
    assert_eq!(form(&l), "loss, EXTRA");
    let l = format!("{main}|{}+QQQQQQQQ....", hive("5000", &[]));
    assert_eq!(ok(&l), d("50"));
    assert_eq!(form(&l), "bonus 8 bees");
}

#[test]
fn bonus_table() {
    for (bonus, prize) in [
        ("QQQQ........", "3"),
        ("Q.Q.Q.Q.Q...", "5"),
        ("QQQQQQ......", "10"),
        ("..QQQQQQQ...", "20"),
        ("QQQQQQQQ....", "50"),
    ] {
        let l = format!("{}+{bonus}", hive("2", &[]));
        assert_eq!(ok(&l), d(prize), "{bonus}");
    }
}

// ---- invalid layouts: one per rule ----

#[test]
fn refuses_bad_shape() {
    refused("", "amount is missing");
    refused(&hive("2", &[(0, "1:PPA")]), "3 cells, expected 4");
    refused(&hive("2", &[(3, "5:PPFABFAA")]), "8 cells, expected 7");
    let six = LOSING_ROWS[..6].join("/");
    refused(&format!("2#{six}{NO_BEES}"), "expected '/' and row 7");
    let eight = format!("{}/1:PPAB", LOSING_ROWS.join("/"));
    refused(&format!("2#{eight}{NO_BEES}"), "unexpected '/'");
    refused(
        &format!("{}{NO_BEES}", LOSING_ROWS.join("/")),
        "expected '#'",
    );
    refused(
        &format!("2#{}{NO_BEES}", LOSING_ROWS.join("|")),
        "expected '/'",
    );
}

#[test]
fn refuses_unknown_or_non_canonical_amounts() {
    refused(
        &hive("2", &[(0, "7:PPPA")]),
        "'7' is not one of the row_amounts",
    );
    refused(
        &hive("7", &[(0, "1:PPPA")]),
        "'7' is not one of the bee_amounts",
    );
    refused(&hive("2", &[(0, "10.0:PPPA")]), "'10.0' is not one");
    refused(&hive("2", &[(0, "05:PPPA")]), "'05' is not one");
    refused(&hive("2", &[(0, "0:PPPA")]), "'0' is not one");
    refused(&hive("2", &[(0, ":PPPA")]), "row 1: the amount is missing");
    refused(
        &hive("", &[(0, "1:PPPA")]),
        "bee amount at the top: the amount is missing",
    );
    refused(&hive("2", &[(0, "-1:PPPA")]), "amount is missing");
    refused(&hive("2", &[(0, "1e1:PPPA")]), "expected ':'");
}

#[test]
fn refuses_four_p() {
    refused(
        &hive("2", &[(1, "2:PPPPA")]),
        "4 P; a row holds at most three P",
    );
}

#[test]
fn refuses_three_a_or_three_b() {
    refused(
        &hive("2", &[(2, "3:AAABFP")]),
        "3 A; a row holds at most two A",
    );
    refused(
        &hive("2", &[(2, "3:ABBBFP")]),
        "3 B; a row holds at most two A and two B",
    );
}

#[test]
fn refuses_two_multipliers_in_a_row() {
    refused(&hive("2", &[(2, "3:PPP2X3")]), "3 multipliers");
    refused(&hive("2", &[(2, "3:PP2XAB")]), "at most one multiplier");
}

#[test]
fn refuses_two_bees_in_a_hive() {
    refused(
        &hive("2", &[(2, "3:QPPPAB"), (4, "10:FFQFFF")]),
        "2 bees (Q); a hive holds at most one bee",
    );
    let main = hive("2", &[(6, "25:FEFF")]);
    refused(
        &format!("{main}|{}", hive("5", &[(0, "1:QQFF")])),
        "EXTRA hive: 2 bees",
    );
}

#[test]
fn refuses_e_in_extra_hive() {
    let main = hive("2", &[(6, "25:FEFF")]);
    let extra = hive("30", &[(1, "20:PPPEQ")]);
    refused(
        &format!("{main}|{extra}"),
        "only the main hive may hold an E",
    );
}

#[test]
fn refuses_two_e() {
    let main = hive("2", &[(6, "25:FEFE")]);
    let extra = hive("30", &[(1, "20:PPPAQ")]);
    refused(
        &format!("{main}|{extra}"),
        "2 E; the main hive holds at most one E",
    );
}

#[test]
fn refuses_e_without_extra_hive() {
    refused(
        &format!("{}{NO_BEES}", hive("2", &[(6, "25:FEFF")])),
        "has an E but no EXTRA hive",
    );
    refused(&hive("2", &[(6, "25:PEPP")]), "has an E but no EXTRA hive");
}

#[test]
fn refuses_extra_hive_without_e() {
    let l = format!("{}|{}", hive("2", &[]), hive("30", &[(1, "20:PPPAQ")]));
    refused(&l, "the main hive has no E");
}

#[test]
fn refuses_second_extra_hive() {
    let main = hive("2", &[(6, "25:FEFF")]);
    let extra = hive("30", &[(1, "20:PPPAQ")]);
    refused(&format!("{main}|{extra}|{extra}"), "at most one EXTRA hive");
}

#[test]
fn refuses_nine_bonus_bees() {
    refused(
        &format!("{}+QQQQQQQQQ...", hive("2", &[])),
        "9 bees; the bonus stage shows at most 8",
    );
    refused(&format!("{}+QQQQQQQQQQQQ", hive("2", &[])), "12 bees");
}

#[test]
fn refuses_bonus_on_a_winning_ticket() {
    refused(
        &format!("{}{NO_BEES}", hive("2", &[(0, "1:PPPA")])),
        "follows hives that win",
    );
    let main = hive("2", &[(6, "25:FEFF")]);
    let extra = hive("30", &[(1, "20:PPAAQ")]);
    refused(
        &format!("{main}|{extra}+QQQQ........"),
        "follows hives that win",
    );
}

#[test]
fn refuses_missing_bonus_on_a_losing_ticket() {
    refused(&hive("2", &[]), "the bonus stage is missing");
    let main = hive("2", &[(6, "25:FEFF")]);
    refused(
        &format!("{main}|{}", hive("5", &[])),
        "the bonus stage is missing",
    );
}

#[test]
fn refuses_bad_cells() {
    refused(&hive("2", &[(0, "1:PPZA")]), "'Z' at byte");
    refused(&hive("2", &[(0, "1:pPPA")]), "'p' at byte");
    refused(&hive("2", &[(0, "1:PP7A")]), "'7' at byte");
    refused(&hive("2", &[(0, "1:PP.A")]), "is not a cell");
    refused(&hive("2", &[(0, "1:PPéA")]), "'é' at byte");
    refused(&hive("2", &[(0, "1:PP A")]), "is not a cell");
    refused(&format!("{}+QQQQ...q....", hive("2", &[])), "'q' at byte");
}

#[test]
fn refuses_bonus_of_wrong_length() {
    refused(
        &format!("{}+...........", hive("2", &[])),
        "11 cells, expected 12",
    );
    refused(
        &format!("{}+.............", hive("2", &[])),
        "13 cells, expected 12",
    );
    refused(&format!("{}+", hive("2", &[])), "0 cells, expected 12");
}

#[test]
fn refuses_trailing_garbage() {
    refused(
        &format!("{} ", hive("2", &[(0, "1:PPPA")])),
        "unexpected ' '",
    );
    refused(
        &format!("{}\n", hive("2", &[(0, "1:PPPA")])),
        "unexpected '\\n'",
    );
    refused(&format!("{}{NO_BEES}/", hive("2", &[])), "'/' at byte");
    refused(
        &format!("{}{NO_BEES}+............", hive("2", &[])),
        "'+' at byte",
    );
    refused(
        &format!("{}#", hive("2", &[(0, "1:PPPA")])),
        "unexpected '#'",
    );
}

#[test]
fn form_is_an_error_on_invalid_layouts() {
    assert!(decoder().form_text("2#").is_err());
}

// ---- construction ----

#[test]
fn new_names_the_parameter_that_makes_a_prize_impossible() {
    let mut s = settings();
    s.row_amounts = Some(vec!["1000000".into()]);
    s.bee_amounts = Some(vec!["5000".into()]);
    let prizes: Vec<Decimal> = stake().prizes.iter().map(|p| p.amount).collect();
    let err = MaxiParams::check(s)
        .unwrap()
        .synthesizer(&prizes)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("prize 100000 €") && err.contains("row_amounts"),
        "{err}"
    );

    let mut s = settings();
    s.row_amounts = Some(vec!["1.50".into()]);
    let err = MaxiParams::check(s).unwrap_err();
    assert_eq!(err.key(), "row_amounts[0]");
    assert!(err.to_string().contains("row_amounts[0]"), "{err}");

    let mut s = settings();
    s.bonus = Some(vec![BonusEntry {
        bees: 9,
        amount: "50".into(),
    }]);
    let err = MaxiParams::check(s).unwrap_err();
    assert_eq!(err.key(), "bonus[0].bees");
    assert!(err.to_string().contains("bonus[0].bees = 9"), "{err}");
}

// ---- synthesizer ----

fn tiers() -> Vec<Decimal> {
    stake().tiers()
}

fn synth(s: &MaxiSynthesizer, prize: Decimal, seed: u64) -> String {
    let mut rng = LayoutRng::seed_from_u64(seed);
    let mut out = String::new();
    s.synthesize_text(prize, &mut rng, &mut out).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn synthesized_layouts_decode_to_their_prize(tier in 0usize..9, seed in any::<u64>()) {
        let tiers = built().0.tiers();
        let prize = tiers[tier % tiers.len()];
        let layout = synth(synthesizer(), prize, seed);
        let decoded = decoder().decode_text(&layout);
        prop_assert_eq!(decoded, Ok(prize), "{}", layout);
    }
}

#[test]
fn prizes_outside_the_table_are_refused() {
    let s = synthesizer();
    let mut rng = LayoutRng::seed_from_u64(1);
    assert!(s
        .synthesize_text(d("7"), &mut rng, &mut String::new())
        .is_err());
}

/// A layout is a function of its prize and its seed alone: a synthesizer built again from the
/// same settings (its tables rebuilt, any hash map seeded anew), after it made other layouts,
/// gives the same layout for each seed; and the seed is used (other seeds, other layouts).
#[test]
fn same_seed_same_layout() {
    let stake = stake();
    let again = synthesizer_of(&stake).unwrap();
    for prize in tiers() {
        // The shared one has made layouts for the other tests; this one makes some first.
        for seed in 1000..1100 {
            synth(&again, prize, seed);
        }
        let layouts: Vec<String> = (0..64)
            .map(|seed| synth(synthesizer(), prize, seed))
            .collect();
        for (seed, layout) in layouts.iter().enumerate() {
            assert_eq!(
                &synth(&again, prize, seed as u64),
                layout,
                "prize {prize}, seed {seed}"
            );
        }
        let distinct: std::collections::BTreeSet<&String> = layouts.iter().collect();
        assert!(
            distinct.len() > 32,
            "prize {prize}: 64 seeds gave only {} layouts",
            distinct.len()
        );
    }
}

/// Forms seen over `n` tickets of `prize`, after checking every ticket decodes to it.
fn forms(prize: Decimal, n: u64) -> (BTreeMap<String, u64>, Vec<String>) {
    let s = synthesizer();
    let dec = decoder();
    let mut forms = BTreeMap::new();
    let mut layouts = Vec::with_capacity(n as usize);
    for seed in 0..n {
        let l = synth(s, prize, seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 7);
        assert_eq!(dec.decode_text(&l), Ok(prize), "{l}");
        *forms.entry(dec.form_text(&l).unwrap()).or_insert(0) += 1;
        layouts.push(l);
    }
    (forms, layouts)
}

#[test]
fn every_prize_shows_in_several_forms() {
    for prize in tiers() {
        let (forms, _) = forms(prize, 20_000);
        println!("{prize}: {} forms {forms:?}", forms.len());
        assert!(forms.len() >= 2, "{prize} shows only {forms:?}");
    }
}

#[test]
fn expected_forms_appear() {
    let expect: &[(&str, &[&str])] = &[
        ("3", &["row", "row x3", "bee", "bonus 4 bees"]),
        ("5", &["row", "bee", "bonus 5 bees"]),
        ("10", &["row", "row x10", "bee", "bonus 6 bees"]),
        ("20", &["row", "bee", "row + bee", "bonus 7 bees"]),
        ("50", &["row", "row x5", "bee", "bonus 8 bees", "2 rows"]),
        ("100000", &["row", "row x10"]),
    ];
    for (prize, wanted) in expect {
        let (forms, _) = forms(d(prize), 20_000);
        for w in *wanted {
            assert!(forms.contains_key(*w), "{prize}: no {w:?} in {forms:?}");
        }
        assert!(
            forms.keys().any(|f| f.contains("EXTRA:")),
            "{prize}: no EXTRA win in {forms:?}"
        );
    }
}

/// Counts over layouts: (with EXTRA, with a row of exactly two P, with a multiplier on a row
/// without three P, with a bonus stage of three bees).
fn near_misses(layouts: &[String]) -> [u64; 4] {
    let mut counts = [0u64; 4];
    for l in layouts {
        let hives = l.split('+').next().unwrap_or("");
        let rows = hives.split(['/', '#', '|']).filter(|r| r.contains(':'));
        let mut two_p = false;
        let mut losing_mult = false;
        for row in rows {
            let cells = row.split(':').nth(1).unwrap_or("");
            let p = cells.matches('P').count();
            two_p |= p == 2;
            losing_mult |= p < 3 && cells.contains(['2', '3', '4', '5', '6', 'X']);
        }
        let bonus_three = l
            .split('+')
            .nth(1)
            .is_some_and(|b| b.matches('Q').count() == 3);
        for (c, hit) in counts
            .iter_mut()
            .zip([l.contains('|'), two_p, losing_mult, bonus_three])
        {
            *c += u64::from(hit);
        }
    }
    counts
}

#[test]
fn losers_show_near_misses() {
    let n = 20_000;
    let (forms, layouts) = forms(Decimal::ZERO, n);
    assert_eq!(forms.len(), 2, "{forms:?}");
    let [extra, two_p, mult, three_bees] = near_misses(&layouts);
    println!("losers: EXTRA {extra}, two P {two_p}, losing multiplier {mult}, 3 bonus bees {three_bees} of {n}");
    assert!(extra > n / 10 && two_p > n * 9 / 10 && mult > n / 3 && three_bees > n / 4);
}

#[test]
fn extra_hive_is_as_frequent_on_winners_as_on_losers() {
    let n = 20_000;
    let (_, losers) = forms(Decimal::ZERO, n);
    let base = near_misses(&losers)[0] as f64 / n as f64;
    for prize in tiers() {
        let (_, layouts) = forms(prize, n);
        let rate = near_misses(&layouts)[0] as f64 / n as f64;
        assert!(
            (rate - base).abs() < 0.02,
            "{prize}: EXTRA on {rate} vs {base} of losers"
        );
    }
}

#[test]
fn hive_tops_without_a_bee_are_alike_on_winners_and_losers() {
    // The bee amount shown on a main hive without a bee must not hint at the prize.
    let n = 20_000;
    let top_mean = |layouts: &[String]| {
        let tops: Vec<Decimal> = layouts
            .iter()
            .filter(|l| !l.split('|').next().unwrap_or("").contains('Q'))
            .map(|l| d(l.split('#').next().unwrap_or("0")))
            .collect();
        tops.iter().sum::<Decimal>() / Decimal::from(tops.len().max(1))
    };
    let (_, losers) = forms(Decimal::ZERO, n);
    let base = top_mean(&losers);
    for prize in [d("3"), d("50"), d("5000")] {
        let (_, layouts) = forms(prize, n);
        let mean = top_mean(&layouts);
        assert!(
            (mean - base).abs() < base / Decimal::from(10),
            "{prize}: mean top {mean} vs {base}"
        );
    }
}

#[test]
fn the_longest_valid_layout_is_exactly_max_layout_len() {
    let params = params_of(&stake());
    let longest = |t: &crate::money::AmountTable| {
        (0..t.len())
            .map(|i| t.get(i).1.to_string())
            .max_by_key(String::len)
            .unwrap()
    };
    let (row, bee) = (longest(&params.rows), longest(&params.bees));
    let hive = |first_row: &str| {
        let mut rows = vec![format!("{row}:{first_row}")];
        for len in [5, 6, 7, 6, 5, 4] {
            rows.push(format!("{row}:{}", "F".repeat(len)));
        }
        format!("{bee}#{}", rows.join("/"))
    };
    // A main hive with an E, its EXTRA hive, both losing, then the bonus stage.
    let layout = format!("{}|{}+QQQ.........", hive("EFFF"), hive("FFFF"));
    assert_eq!(ok(&layout), d("0"), "{layout}");
    assert_eq!(layout.len(), decoder().max_layout_len(), "{layout}");
}

#[test]
fn wins_beyond_what_an_amount_holds_are_an_error_not_a_panic() {
    // Parameters built in code, without the loader's bound on amounts.
    let mut params = params_of(&stake());
    params.rows = crate::money::AmountTable::new([Decimal::MAX]);
    params.bees = crate::money::AmountTable::new([Decimal::MAX]);
    let dec = MaxiDecoder::from_params(&params);
    let max = crate::money::canonical(Decimal::MAX);
    let hive = |first: &str, second: &str| {
        let rows = [
            first, second, "FFFFFF", "FFFFFFF", "FFFFFF", "FFFFF", "FFFF",
        ]
        .map(|cells| format!("{max}:{cells}"));
        format!("{max}#{}", rows.join("/"))
    };
    for layout in [
        hive("PPPA", "PPPAB"), // two rows
        hive("PPXP", "FFFFF"), // one row times 10
        hive("PPPA", "QFFFF"), // a row and the bee
    ] {
        let err = dec.decode_text(&layout).unwrap_err();
        assert_eq!(
            err,
            crate::mechanic::LayoutError::WinsOverflow,
            "{layout}: {err}"
        );
    }
}

#[test]
fn a_misspelt_setting_is_refused_naming_the_valid_ones() {
    // The file, the line and the valid keys: see game::tests for whole definitions.
    let e = toml::from_str::<MaxiSettings>("bee_amount = 1").unwrap_err();
    assert!(
        e.to_string().contains(
            "unknown field `bee_amount`, expected one of `row_amounts`, `bee_amounts`, `bonus`"
        ),
        "{e}"
    );
    let e = toml::from_str::<MaxiSettings>("bonus = [{ bees = 4, bee = 5, amount = \"3\" }]")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown field `bee`, expected `bees` or `amount`"),
        "{e}"
    );
}
