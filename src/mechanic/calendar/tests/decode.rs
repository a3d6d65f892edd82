//! The decoder on hand-written layouts.

use super::builtin_stake;
use super::d;
use crate::mechanic::calendar::CalendarDecoder;
use crate::mechanic::Decoder;

/// Twelve losing months (no two identical symbols), January to December.
const LOSING_MONTHS: [&str; 12] = [
    "AB:6", "CD:10", "EF:2", "GH:3", "BA:4", "DC:5", "FE:20", "HG:30", "AC:40", "BD:50", "CE:100",
    "DF:500",
];

fn decoder() -> CalendarDecoder {
    CalendarDecoder::new(&builtin_stake()).unwrap()
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
    match dec.decode(layout) {
        Ok(p) => panic!("{layout:?} decoded to {p}, expected an error about {needle:?}"),
        Err(e) => assert!(
            e.0.contains(needle),
            "{layout:?}: message {:?} should mention {needle:?}",
            e.0
        ),
    }
    assert!(
        dec.form(layout).is_err(),
        "form() must refuse {layout:?} too"
    );
}

#[track_caller]
fn good(layout: &str, prize: &str, form: &str) {
    let dec = decoder();
    assert_eq!(dec.decode(layout), Ok(d(prize)), "{layout}");
    assert_eq!(dec.form(layout).unwrap(), form, "{layout}");
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
    bad(&layout(&[], "0-2-13:20"), "clover number 1 is 0");
    bad(&layout(&[], "1-14-3:20"), "clover number 2 is 14");
    bad(&layout(&[], "1-2-130:20"), "clover number 3 is 130");
    bad(
        &layout(&[], "1-2-99999999999999999999:20"),
        "clover number 3 is 9999",
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
    bad(&layout(&[], "1-2-13:20\n"), "unexpected '\n'");
    bad(&layout(&[], "1-2-13:20|1-2-3:20"), "unexpected '|'");
    bad(&layout(&[], "1-2-13:20/"), "unexpected '/'");
}

#[test]
fn never_panics_on_prefixes_and_noise() {
    let dec = decoder();
    let full = layout(&[(0, "AA:6")], "4-12-13:20");
    for end in 0..full.len() {
        let _ = dec.decode(&full[..end]);
    }
    for noise in ["é", "\u{0}", "ÿÿ", "|||", "::::", "-1", "AA:6/"] {
        for at in 0..full.len() {
            let mut s = full.clone();
            s.insert_str(at, noise);
            assert!(dec.decode(&s).is_err(), "{s:?}");
        }
    }
}

#[test]
fn the_longest_valid_layout_is_exactly_max_layout_len() {
    let dec = decoder();
    let params =
        crate::mechanic::calendar::params::CalendarParams::from_stake(&builtin_stake()).unwrap();
    let longest = |t: &crate::money::AmountTable| {
        (0..t.len())
            .map(|i| t.get(i).1.to_string())
            .max_by_key(String::len)
            .unwrap()
    };
    let month = format!("AB:{}", longest(&params.month_amounts));
    let months = vec![month; 12].join("/");
    let layout = format!("{months}|10-11-12:{}", longest(&params.clover_amounts));
    assert_eq!(dec.decode(&layout), Ok(d("0")), "{layout}");
    assert_eq!(layout.len(), dec.max_layout_len(), "{layout}");
}
