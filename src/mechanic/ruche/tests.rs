//! Decoder unit tests on hand-written layouts (every rule of SPEC §3), round-trip properties of
//! the synthesizer, the settings' checks, and the variety a player expects.

use super::*;
use crate::game::{Game, Stake};
use crate::mechanic::text::{DecodeText, SynthesizeText};
use crate::mechanic::{Mechanic, Params};
use proptest::prelude::*;
use rand::SeedableRng;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

fn d(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn stake(price: &str) -> Stake {
    let game = Game::builtin("ruche-or").unwrap();
    game.stake(d(price)).unwrap().clone()
}

/// The checked parameters of a built-in stake.
fn params_of(stake: &Stake) -> RucheParams {
    match &stake.mechanic {
        Mechanic::Ruche(p) => p.clone(),
        other => panic!("not a ruche stake: {other:?}"),
    }
}

fn decoder(price: &str) -> RucheDecoder {
    params_of(&stake(price)).decoder()
}

fn synthesizer_of(stake: &Stake) -> RucheSynthesizer {
    let prizes: Vec<Decimal> = stake.prizes.iter().map(|p| p.amount).collect();
    params_of(stake).synthesizer(&prizes).unwrap()
}

/// A losing hive at 0.5 €: no row has three P, two honey pots.
const LOSING: &str = "5:PAHB/10:ABPAB/2.5:BPAHPA/1:PPABFBA/25:ABABPF/0.5:PAPBF/7.5:ABFP";

fn with_row(hive: &str, row: usize, text: &str) -> String {
    let mut rows: Vec<&str> = hive.split('/').collect();
    rows[row] = text;
    rows.join("/")
}

#[test]
fn a_losing_hive_wins_nothing() {
    let dec = decoder("0.5");
    assert_eq!(dec.decode_text(LOSING), Ok(Decimal::ZERO));
    assert_eq!(dec.form_text(LOSING).unwrap(), "loss");
}

#[test]
fn three_p_in_a_row_win_its_amount_and_rows_add_up() {
    let dec = decoder("0.5");
    let one = with_row(LOSING, 1, "10:APBPP");
    assert_eq!(dec.decode_text(&one), Ok(d("10")));
    let two = with_row(&one, 6, "7.5:PPPA");
    assert_eq!(dec.decode_text(&two), Ok(d("17.5")));
    assert_eq!(dec.form_text(&two).unwrap(), "2 rows");
}

#[test]
fn honey_pots_follow_the_table_of_the_stake() {
    // 4 pots at 0.5 € win 0.5; at 2 € the same cells win 2.
    let four = "5:PAHB/10:ABPAH/2.5:BPAHPA/1:PPABHBA/25:ABABPF/0.5:PAPBF/7.5:ABFP";
    assert_eq!(decoder("0.5").decode_text(four), Ok(d("0.5")));
    let four_2 = "20:PAHB/40:ABPAH/10:BPAHPA/4:PPABHBA/100:ABABPF/2:PAPBF/30:ABFP";
    assert_eq!(decoder("2").decode_text(four_2), Ok(d("2")));
    // 10 pots at 0.5 € win 500.
    let ten = "5:HHHB/10:ABHAH/2.5:BHAHPA/1:PPAHHBA/25:ABABPF/0.5:PAPBH/7.5:ABFP";
    assert_eq!(decoder("0.5").decode_text(ten), Ok(d("500")));
    assert_eq!(decoder("0.5").form_text(ten).unwrap(), "honey");
}

#[test]
fn extra_hives_add_their_wins() {
    let dec = decoder("0.5");
    let main = with_row(LOSING, 0, "5:PAEB");
    let extra = with_row(LOSING, 3, "1:PPABPBA");
    let layout = format!("{main}|{extra}");
    assert_eq!(dec.decode_text(&layout), Ok(d("1")));
    assert_eq!(dec.form_text(&layout).unwrap(), "EXTRA: row");
    let losing_extra = format!("{main}|{LOSING}");
    assert_eq!(dec.decode_text(&losing_extra), Ok(Decimal::ZERO));
    assert_eq!(dec.form_text(&losing_extra).unwrap(), "loss, EXTRA");
}

fn rejects(layout: &str, needle: &str) {
    let err = decoder("0.5").decode_text(layout).unwrap_err();
    assert!(
        err.to_string().contains(needle),
        "error '{err}' should mention '{needle}' for {layout}"
    );
}

#[test]
fn every_invalid_case_is_rejected_with_its_rule() {
    // Shape.
    rejects("5:PAHB/10:ABPAB", "2 rows, a hive has 7");
    rejects(&format!("{LOSING}/1:PABF"), "more than 7 rows");
    rejects(&with_row(LOSING, 0, "5:PAHBF"), "5 cells, this row has 4");
    rejects(&with_row(LOSING, 0, "5PAHB"), "amount:cells");
    rejects(&with_row(LOSING, 0, "5:PAXB"), "not a cell");
    rejects(&with_row(LOSING, 0, "5:pahb"), "not a cell");
    // Amounts: not allowed at this stake, not canonical, not positive.
    rejects(&with_row(LOSING, 0, "3:PAHB"), "not an amount");
    rejects(&with_row(LOSING, 0, "5.0:PAHB"), "not an amount");
    rejects(&with_row(LOSING, 0, "0:PAHB"), "not an amount");
    rejects(&with_row(LOSING, 0, "-5:PAHB"), "not an amount");
    rejects(&with_row(LOSING, 0, ":PAHB"), "not an amount");
    // At most three P, two A, two B in a row.
    rejects(&with_row(LOSING, 0, "5:PPPP"), "4 P");
    rejects(&with_row(LOSING, 1, "10:AAAPB"), "at most 2 A");
    rejects(&with_row(LOSING, 1, "10:BBBPA"), "at most 2 A and 2 B");
    // At most 10 honey pots.
    rejects(
        "5:HHHB/10:ABHAH/2.5:BHAHPA/1:PPAHHBA/25:ABABPF/0.5:PAPBH/7.5:ABFH",
        "11 honey pots, a hive holds at most 10",
    );
    // E: at most 3, only in the main hive, one EXTRA hive per E.
    let e4 = with_row(LOSING, 0, "5:EEEE");
    rejects(
        &format!("{e4}|{LOSING}|{LOSING}|{LOSING}|{LOSING}"),
        "4 EXTRA symbols",
    );
    let e1 = with_row(LOSING, 0, "5:PAEB");
    rejects(&e1, "1 EXTRA symbol(s) but 0 EXTRA hive(s)");
    rejects(&format!("{LOSING}|{LOSING}"), "1 EXTRA hives follow");
    rejects(&format!("{e1}|{LOSING}|{LOSING}"), "2 EXTRA hives follow");
    rejects(&format!("{e1}|{e1}"), "EXTRA symbol in an EXTRA hive");
    rejects(
        &format!("{e1}|"),
        "EXTRA hive 1, row 1: expected amount:cells",
    );
}

fn rng(seed: u64) -> LayoutRng {
    LayoutRng::seed_from_u64(seed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// decode(synthesize(prize)) == prize for every prize (and zero) of every stake.
    #[test]
    fn synthesized_layouts_decode_to_their_prize(seed in any::<u64>(), stake_i in 0usize..4, tier in 0usize..11) {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = &game.stakes[stake_i];
        let tiers = stake.tiers();
        let prize = tiers[tier % tiers.len()];
        let syn = synthesizer_of(stake);
        let dec = params_of(stake).decoder();
        let mut r = rng(seed);
        let mut out = String::new();
        syn.synthesize_text(prize, &mut r, &mut out).unwrap();
        prop_assert_eq!(dec.decode_text(&out), Ok(prize), "layout {}", out);
    }
}

#[test]
fn every_prize_shows_in_several_forms_and_losers_show_near_misses() {
    let game = Game::builtin("ruche-or").unwrap();
    for stake in &game.stakes {
        let syn = synthesizer_of(stake);
        let dec = params_of(stake).decoder();
        let mut r = rng(7);
        for prize in stake.tiers() {
            let mut forms = BTreeSet::new();
            let mut near_rows = 0;
            let mut three_pots = 0;
            let mut losing_extra = 0;
            for _ in 0..3000 {
                let mut out = String::new();
                syn.synthesize_text(prize, &mut r, &mut out).unwrap();
                let o = dec.outcome(out.as_bytes()).unwrap();
                assert_eq!(o.prize, prize);
                forms.insert(dec.form_text(&out).unwrap());
                near_rows += out
                    .split('|')
                    .next()
                    .unwrap()
                    .split('/')
                    .filter(|row| row.matches('P').count() == 2)
                    .count();
                three_pots += usize::from(o.main.pots == 3);
                losing_extra += usize::from(prize.is_zero() && o.extra_count > 0);
            }
            assert!(
                forms.len() >= 2,
                "{} € at {}: only {forms:?}",
                prize,
                stake.price
            );
            if prize.is_zero() {
                assert!(near_rows > 3000, "losers need rows with two P");
                assert!(three_pots > 100, "losers need three honey pots");
                assert!(losing_extra > 100, "losers need EXTRA hives that lose");
            }
        }
    }
}

#[test]
fn non_winning_parts_look_the_same_on_winners_and_losers() {
    // The share of near-miss rows and of EXTRA symbols must not tell winners from losers.
    let st = stake("2");
    let syn = synthesizer_of(&st);
    let dec = params_of(&st).decoder();
    let mut r = rng(11);
    let mut stats: BTreeMap<bool, (usize, usize, usize)> = BTreeMap::new();
    for i in 0..40_000 {
        let prize = if i % 2 == 0 { Decimal::ZERO } else { d("4") };
        let mut out = String::new();
        syn.synthesize_text(prize, &mut r, &mut out).unwrap();
        let main = out.split('|').next().unwrap();
        let o = dec.outcome(out.as_bytes()).unwrap();
        let e = stats.entry(prize.is_zero()).or_default();
        e.0 += main
            .split('/')
            .filter(|row| row.matches('P').count() == 2)
            .count();
        e.1 += usize::from(o.main.extras > 0);
        e.2 += 1;
    }
    let (lose, win) = (stats[&true], stats[&false]);
    let near = |s: (usize, usize, usize)| s.0 as f64 / s.2 as f64;
    let extra = |s: (usize, usize, usize)| s.1 as f64 / s.2 as f64;
    // A winner has one row fewer that can be a near miss; beyond that, the same rates.
    assert!((near(lose) - near(win)).abs() < 0.5, "{lose:?} {win:?}");
    assert!((extra(lose) - extra(win)).abs() < 0.05, "{lose:?} {win:?}");
}

/// The longest row amount the stake allows.
fn longest_row_amount(price: &str) -> String {
    let params = params_of(&stake(price));
    (0..params.rows.len())
        .map(|i| params.rows.get(i).1.to_string())
        .max_by_key(String::len)
        .unwrap()
}

#[test]
fn the_longest_valid_layout_is_exactly_max_layout_len() {
    for price in ["0.5", "1", "2", "3"] {
        let dec = decoder(price);
        let amount = longest_row_amount(price);
        let hive = |first_row: &str| {
            let mut rows = vec![format!("{amount}:{first_row}")];
            for len in [5, 6, 7, 6, 5, 4] {
                rows.push(format!("{amount}:{}", "F".repeat(len)));
            }
            rows.join("/")
        };
        // Three E in the main hive open three EXTRA hives: the most a layout can show.
        let plain = hive("FFFF");
        let layout = format!("{}|{plain}|{plain}|{plain}", hive("EEEF"));
        assert_eq!(dec.decode_text(&layout), Ok(Decimal::ZERO), "{layout}");
        assert_eq!(layout.len(), dec.max_layout_len(), "{price}: {layout}");
    }
}

#[test]
fn wins_beyond_what_an_amount_holds_are_an_error_not_a_panic() {
    // Parameters built in code, without the loader's bound on amounts.
    let params = RucheParams {
        rows: crate::money::AmountTable::new([Decimal::MAX]),
        honey: vec![None, None, None, None, Some(Decimal::MAX)],
        max_honey: 4,
        near_miss: NearMiss::default(),
    };
    let max = crate::money::canonical(Decimal::MAX);
    let rows = [
        "PPPA", "PPPAB", "FFFFFF", "FFFFFFF", "FFFFFF", "FFFFF", "FFFF",
    ]
    .map(|cells| format!("{max}:{cells}"));
    let two_rows = rows.join("/");
    let err = super::decode::decode(&params, two_rows.as_bytes()).unwrap_err();
    assert_eq!(err, crate::mechanic::LayoutError::WinsOverflow, "{err}");
    // One row and four honey pots.
    let honey = [
        "PPPA", "HHHHB", "FFFFFF", "FFFFFFF", "FFFFFF", "FFFFF", "FFFF",
    ]
    .map(|cells| format!("{max}:{cells}"))
    .join("/");
    assert!(super::decode::decode(&params, honey.as_bytes()).is_err());
}

#[test]
fn a_misspelt_setting_is_refused_naming_the_valid_ones() {
    // The file, the line and the valid keys: see game::tests for whole definitions.
    let e = toml::from_str::<RucheSettings>("row_amount = [\"1\"]").unwrap_err();
    assert!(
        e.to_string().contains(
            "unknown field `row_amount`, expected one of `row_amounts`, `honey`, `near_miss`"
        ),
        "{e}"
    );
    let e = toml::from_str::<RucheSettings>("honey = [{ pots = 4, amuont = \"3\" }]").unwrap_err();
    assert!(
        e.to_string()
            .contains("unknown field `amuont`, expected `pots` or `amount`"),
        "{e}"
    );
}

/// The settings of the built-in stake at `price`, to edit.
fn settings(price: &str) -> RucheSettings {
    let game = Game::builtin("ruche-or").unwrap();
    let index = game
        .stakes
        .iter()
        .position(|s| s.price == d(price))
        .unwrap();
    // Built-in stakes are listed in ascending price in the file too.
    let text = crate::game::BUILTIN
        .iter()
        .find(|(id, _)| *id == "ruche-or")
        .unwrap()
        .1;
    crate::mechanic::settings_of::<RucheParams>(text, index)
}

#[test]
fn impossible_settings_are_refused_naming_the_key() {
    let refused = |edit: &dyn Fn(&mut RucheSettings), needle: &str| {
        let mut s = settings("2");
        edit(&mut s);
        let e = RucheParams::check(s).unwrap_err();
        // The message begins with, or names, the key at fault.
        assert!(e.to_string().contains(e.key()), "{e}: no key {}", e.key());
        let e = e.to_string();
        assert!(e.contains(needle), "{e} should mention {needle}");
    };
    refused(&|s| s.row_amounts = None, "'row_amounts' is missing");
    refused(&|s| s.row_amounts = Some(vec![]), "'row_amounts' is empty");
    refused(
        &|s| s.row_amounts = Some(vec!["1.50".into()]),
        "row_amounts[0]: '1.50' is not a positive canonical amount",
    );
    refused(&|s| s.honey = None, "'honey' is missing");
    refused(&|s| s.honey = Some(vec![]), "honey: the table is empty");
    let entry = |pots: u32, amount: &str| HoneyEntry {
        pots,
        amount: amount.into(),
    };
    refused(
        &|s| s.honey = Some(vec![entry(38, "1")]),
        "honey: pots = 38 is impossible: a hive holds at most 10 honey pots (SPEC §3)",
    );
    refused(
        &|s| s.honey = Some(vec![entry(0, "1")]),
        "honey: pots = 0 is impossible",
    );
    refused(
        &|s| s.honey = Some(vec![entry(4, "1"), entry(4, "2")]),
        "honey[1]: pots = 4 is listed twice",
    );
    refused(
        &|s| s.honey = Some(vec![entry(4, "0")]),
        "honey[0].amount: '0' is not a positive canonical amount",
    );
    // A prize the row amounts and honey table cannot make: the synthesizer says which.
    let mut s = settings("2");
    s.row_amounts = Some(vec!["1000".into()]);
    s.honey = Some(vec![entry(4, "1000")]);
    let params = RucheParams::check(s).unwrap();
    let e = params.synthesizer(&[d("2")]).unwrap_err().to_string();
    assert!(e.contains("the prize 2 € cannot be made"), "{e}");
}
