use super::*;
use std::str::FromStr;

#[test]
fn builtin_games_load_with_their_article_3_totals() {
    let expect = [
        (
            "ruche-or",
            900_000,
            vec![
                ("0.5", 238_353, "315000"),
                ("1", 238_353, "630000"),
                ("2", 238_353, "1260000"),
                ("3", 238_353, "1890000"),
            ],
        ),
        (
            "maxi-ruche-or",
            7_500_000,
            vec![("3", 2_437_768, "16875000")],
        ),
        ("annee-chance", 2_000_000, vec![("3", 433_720, "3960000")]),
    ];
    for (id, block, stakes) in expect {
        let g = Game::builtin(id).unwrap();
        assert_eq!(g.id, id);
        assert_eq!(g.block_size, block);
        assert_eq!(g.stakes.len(), stakes.len());
        for (s, (price, winners, total)) in g.stakes.iter().zip(stakes) {
            assert_eq!(canonical(s.price), price);
            assert_eq!(s.winners, winners);
            assert_eq!(canonical(s.total), total);
        }
    }
    let g = Game::builtin("ruche-or").unwrap();
    let two = g.stake(Decimal::from(2)).unwrap();
    assert_eq!(two.losers(g.block_size), 661_647);
    assert_eq!(two.prizes[0].amount, Decimal::from(20_000));
    assert_eq!(
        two.payout_ratio(g.block_size),
        Decimal::from_str("0.7").unwrap()
    );
}

const MINI: &str = r#"
id = "mini"
name = "Mini"
mechanic = "ruche"
block_size = 100
[[stakes]]
price = "2"
winners = 3
total = "10"
prizes = [ { count = 1, amount = "6" }, { count = 2, amount = "2" } ]
[stakes.layout]
row_amounts = ["2", "6"]
honey = [ { pots = 4, amount = "2" } ]
"#;

fn error(text: &str) -> String {
    Game::parse(text, "defs/mini.toml").unwrap_err().to_string()
}

#[test]
fn a_consistent_definition_loads() {
    let g = Game::parse(MINI, "defs/mini.toml").unwrap();
    assert_eq!(
        g.stakes[0].tiers(),
        vec![Decimal::from(6), Decimal::from(2), Decimal::ZERO]
    );
    assert_eq!(g.source, "defs/mini.toml");
}

#[test]
fn wrong_definitions_name_the_file_and_the_entry() {
    let cases = [
        (MINI.replace("winners = 3", "winners = 4"), "defs/mini.toml, stakes[price=2].winners: the prize rows add up to 3 winning tickets but the definition states 4"),
        (MINI.replace("total = \"10\"", "total = \"11\""), "stakes[price=2].total: the prize rows add up to 10 € but the definition states 11 €"),
        (MINI.replace("block_size = 100", "block_size = 2"), "3 winning tickets do not fit in a block of 2"),
        (MINI.replace("amount = \"6\" }", "amount = \"6.0\" }"), "stakes[price=2].prizes[0]: amount '6.0' is not a positive canonical amount"),
        (MINI.replace("amount = \"6\" }", "amount = \"2\" }"), "stakes[price=2].prizes[1]: amount 2 is listed twice"),
        (MINI.replace("{ count = 1,", "{ count = 0,"), "count must be at least 1"),
        (MINI.replace("price = \"2\"", "price = \"0\""), "stakes[0].price: '0' is not a positive canonical amount"),
        (MINI.replace("mechanic = \"ruche\"", "mechanic = \"bingo\""), "unknown mechanic 'bingo'"),
        (MINI.replace("row_amounts = [\"2\", \"6\"]", "row_amounts = [2, 6]"), "defs/mini.toml is malformed: line 12, column 16: invalid type: integer `2`, expected a string"),
        (MINI.replace("pots = 4", "pots = 40"), "stakes[price=2].layout: honey: pots = 40 is impossible: a hive holds at most 10 honey pots"),
        (MINI.replace("id = \"mini\"", "id = \"Mini Game\""), "defs/mini.toml, id:"),
        (MINI.replace("name = \"Mini\"", "name = \"Mini\"\ncolour = \"red\""), "unknown field `colour`"),
        (format!("{MINI}\n[[stakes]]\nprice = \"2\"\nwinners = 0\ntotal = \"0\"\nprizes = []\n"), "this stake is defined twice"),
        // Limits (SPEC §6): amounts in whole cents up to a billion euros, counts up to a block.
        (MINI.replace("price = \"2\"", "price = \"79228162514264337593543950335\""), "stakes[0].price: '79228162514264337593543950335' is out of range: an amount is at most 1000000000 €"),
        (MINI.replace("amount = \"6\" }", "amount = \"1000000000.5\" }"), "stakes[price=2].prizes[0]: amount '1000000000.5' is out of range"),
        (MINI.replace("amount = \"6\" }", "amount = \"6.001\" }"), "in whole cents"),
        (MINI.replace("\"2\", \"6\"]", "\"2\", \"6\", \"0.001\"]"), "stakes[price=2].layout: row_amounts[2]: '0.001' is out of range"),
        (MINI.replace("{ count = 1,", "{ count = 101,"), "stakes[price=2].prizes[0]: count 101 is more than the 100 tickets of a block"),
        // Lists and strings have maximums (SPEC §6.1), and counts the rules allow.
        (MINI.replace("id = \"mini\"", &format!("id = \"{}\"", "m".repeat(65))), "defs/mini.toml, id: 65 characters, at most 64"),
        (MINI.replace("name = \"Mini\"", &format!("name = \"{}\"", "n".repeat(201))), "defs/mini.toml, name: 201 characters, at most 200"),
        (MINI.replace("\"2\", \"6\"]", &format!("\"2\", \"6\", {}]", vec!["\"7\""; 63].join(", "))), "stakes[price=2].layout: row_amounts: 65 entries, at most 64"),
        (MINI.replace("pots = 4", "pots = 11"), "stakes[price=2].layout: honey: pots = 11 is impossible: a hive holds at most 10 honey pots"),
    ];
    for (text, needle) in cases {
        let e = error(&text);
        assert!(e.contains(needle), "expected '{needle}' in: {e}");
        assert!(e.contains("defs/mini.toml"), "the file must be named: {e}");
    }
}

#[test]
fn unknown_games_and_stakes_say_what_exists() {
    let e = Game::resolve("loto").unwrap_err().to_string();
    assert!(e.contains("ruche-or, maxi-ruche-or, annee-chance"), "{e}");
    let g = Game::builtin("ruche-or").unwrap();
    let e = g.stake(Decimal::from(5)).unwrap_err().to_string();
    assert!(e.contains("0.5, 1, 2, 3"), "{e}");
}

#[test]
fn a_prize_the_layouts_cannot_show_is_refused_by_the_synthesizer_not_the_loader() {
    let text = MINI
        .replace("row_amounts = [\"2\", \"6\"]", "row_amounts = [\"6\"]")
        .replace("pots = 4, amount = \"2\"", "pots = 4, amount = \"5\"");
    // Loading (and so verify) needs only the decoders.
    let game = Game::parse(&text, "defs/mini.toml").unwrap();
    let e = game.stakes[0].synthesizer().err().unwrap().to_string();
    assert!(
        e.contains("stakes[price=2].layout: the prize 2 € cannot be made"),
        "{e}"
    );
}

/// The line (from 1) where `needle` first occurs in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in the text"));
    text[..at].matches('\n').count() + 1
}

#[test]
fn a_misspelt_setting_is_refused_naming_the_file_the_line_and_the_valid_keys() {
    let cases = [
        // (built-in game, key as written, misspelt, valid keys as listed by the message)
        ("ruche-or", "row_amounts = [", "row_amount = [", "unknown field `row_amount`, expected one of `row_amounts`, `honey`, `near_miss`"),
        ("ruche-or", "honey = [", "honney = [", "unknown field `honney`, expected one of `row_amounts`, `honey`, `near_miss`"),
        ("ruche-or", "{ pots = 4, amount", "{ pots = 4, amuont", "unknown field `amuont`, expected `pots` or `amount`"),
        ("maxi-ruche-or", "bee_amounts = [", "bee_amount = [", "unknown field `bee_amount`, expected one of `row_amounts`, `bee_amounts`, `bonus`, `near_miss`"),
        ("maxi-ruche-or", "{ bees = 4, amount", "{ bee = 4, amount", "unknown field `bee`, expected `bees` or `amount`"),
        ("annee-chance", "max_winning_months = ", "max_winning_month = ", "unknown field `max_winning_month`, expected one of `symbols`, `month_amounts`, `clover_amounts`, `max_winning_months`, `near_miss`"),
        ("annee-chance", "clover_amounts = [", "clover_amount = [", "unknown field `clover_amount`, expected one of `symbols`, `month_amounts`, `clover_amounts`, `max_winning_months`, `near_miss`"),
        ("annee-chance", "{ letter = \"A\", picture", "{ letter = \"A\", pictur", "unknown field `pictur`, expected `letter` or `picture`"),
    ];
    for (id, key, misspelt, valid) in cases {
        let text = BUILTIN.iter().find(|(i, _)| *i == id).unwrap().1;
        let copy = text.replacen(key, misspelt, 1);
        assert_ne!(copy, text, "{id}: {key} not found");
        let line = line_of(&copy, misspelt);
        let e = error_in(&copy, "defs/copy.toml");
        assert!(
            e.starts_with(&format!(
                "game definition defs/copy.toml is malformed: line {line}, column "
            )),
            "{id}, {misspelt}: {e}"
        );
        assert!(e.contains(valid), "{id}, {misspelt}: {e}");
    }
}

fn error_in(text: &str, file: &str) -> String {
    Game::parse(text, file).unwrap_err().to_string()
}

#[test]
fn impossible_near_miss_settings_are_refused_naming_the_file_the_key_and_the_range() {
    let cases = [
        // (built-in game, setting as written, replacement, what the message says)
        ("ruche-or", "row_p_weights = [25, 40, 35]", "row_p_weights = [25, -1, 35]",
         "near_miss.row_p_weights[1] = -1 is out of range: a weight is a whole number from 0 to 1000000"),
        ("ruche-or", "extra_weights = [84, 11, 4, 1]", "extra_weights = [0, 0, 0, 0]",
         "near_miss.extra_weights: every weight is zero; give at least one of 0, 1, 2, 3 EXTRA hives a weight from 1 to 1000000"),
        ("ruche-or", "loose_pots_weights = [30, 30, 24, 16]", "loose_pots_weights = [30, 30]",
         "near_miss.loose_pots_weights lists 2 weight(s): list 4, one for each of 0, 1, 2, 3 pots"),
        ("ruche-or", "part_weights = [55, 32, 13]", "part_weights = [55, 32, 2000000]",
         "near_miss.part_weights[2] = 2000000 is out of range"),
        ("maxi-ruche-or", "extra_rate = 0.2", "extra_rate = 1.5",
         "near_miss.extra_rate = 1.5 is out of range: a rate is a number from 0 to 1"),
        ("maxi-ruche-or", "row_multiplier_rate = 0.12", "row_multiplier_rate = -0.1",
         "near_miss.row_multiplier_rate = -0.1 is out of range: a rate is a number from 0 to 1"),
        ("maxi-ruche-or", "bonus_weight = 3", "bonus_weight = -3",
         "near_miss.bonus_weight = -3 is out of range: a weight is a whole number from 0 to 1000000"),
        ("annee-chance", "twelve_rate = 0.375", "twelve_rate = 2",
         "near_miss.twelve_rate = 2 is out of range: a rate is a number from 0 to 1"),
        ("annee-chance", "neighbour_rate = 0.375", "neighbour_rate = nan",
         "near_miss.neighbour_rate = NaN is out of range: a rate is a number from 0 to 1"),
    ];
    for (id, setting, replacement, message) in cases {
        let text = BUILTIN.iter().find(|(i, _)| *i == id).unwrap().1;
        let copy = text.replacen(setting, replacement, 1);
        assert_ne!(copy, text, "{id}: {setting} not found");
        let e = error_in(&copy, "defs/near.toml");
        assert!(
            e.starts_with("game definition defs/near.toml, stakes[price="),
            "{id}, {replacement}: {e}"
        );
        assert!(e.contains(message), "{id}, {replacement}: {e}");
    }
    // A misspelt near-miss key names the valid ones, with its line.
    let text = BUILTIN
        .iter()
        .find(|(i, _)| *i == "annee-chance")
        .unwrap()
        .1;
    let copy = text.replacen("twelve_rate =", "twelves_rate =", 1);
    let e = error_in(&copy, "defs/near.toml");
    let line = line_of(&copy, "twelves_rate");
    assert!(
        e.starts_with(&format!(
            "game definition defs/near.toml is malformed: line {line}, "
        )),
        "{e}"
    );
    assert!(
        e.contains("unknown field `twelves_rate`, expected `neighbour_rate` or `twelve_rate`"),
        "{e}"
    );
}

#[test]
fn near_miss_weights_that_make_a_prize_impossible_are_refused_naming_the_key() {
    // 5000 € at the 0.5 € stake is one row only (three of the next amounts make 1500 at most).
    let text = BUILTIN.iter().find(|(i, _)| *i == "ruche-or").unwrap().1;
    let copy = text.replacen(
        "part_weights = [55, 32, 13]",
        "part_weights = [0, 32, 13]",
        1,
    );
    let game = Game::parse(&copy, "defs/parts.toml").expect("loads: verify needs no synthesizer");
    let e = game.stakes[0].synthesizer().err().unwrap().to_string();
    assert!(
        e.contains("the prize 5000 € can only be shown with 1 part(s), and near_miss.part_weights gives them weight 0: give them a weight from 1 to 1000000"),
        "{e}"
    );
    // Lower but not zero: every prize still has a form.
    let copy = text.replacen("part_weights = [55, 32, 13]", "part_weights = [1, 0, 0]", 1);
    let game = Game::parse(&copy, "defs/parts.toml").unwrap();
    for stake in &game.stakes {
        assert!(stake.synthesizer().is_ok(), "{}", stake.price);
    }
}

#[test]
fn the_asked_near_miss_rates_are_the_definition_s() {
    let rates = |id: &str, from: &str, to: &str| {
        let text = BUILTIN.iter().find(|(i, _)| *i == id).unwrap().1;
        let game = Game::parse(&text.replacen(from, to, 1), "defs/rates.toml").unwrap();
        game.stakes[0].mechanic.near_miss_rates()
    };
    assert_eq!(
        rates(
            "ruche-or",
            "row_p_weights = [25, 40, 35]",
            "row_p_weights = [1, 1, 2]"
        ),
        [
            ("near_miss_rows", 0.5),
            ("near_miss_honey", 0.16),
            ("near_miss_extra", 0.16)
        ]
    );
    assert_eq!(
        rates("maxi-ruche-or", "extra_rate = 0.2", "extra_rate = 0"),
        [
            ("near_miss_rows", 0.45),
            ("near_miss_multiplier", 0.12),
            ("near_miss_extra", 0.0)
        ]
    );
    assert_eq!(
        rates("annee-chance", "twelve_rate = 0.375", "twelve_rate = 0.25"),
        [("near_miss_months", 0.375), ("near_miss_clover", 0.25)]
    );
}

#[test]
fn the_built_in_games_name_the_fdj_profile_and_are_within_it() {
    for id in builtin::ids() {
        let g = Game::builtin(id).unwrap();
        let profile = g
            .profile
            .as_ref()
            .expect("every built-in game is an FDJ game");
        assert_eq!(profile.id, "fdj");
        for s in &g.stakes {
            let payout = s.payout_ratio(g.block_size);
            assert!(payout >= profile.payout_min && payout <= profile.payout_max);
        }
    }
}

#[test]
fn a_top_prize_with_two_zeros_too_many_is_refused_with_or_without_a_profile() {
    // La ruche d'or at 0.5 €: a top prize of 500 000 € instead of 5 000 €, the stated total
    // made to agree (315 000 + 495 000): 180 % of the stakes.
    let text = builtin::text("ruche-or").unwrap();
    let typo = text
        .replacen(
            "{ count = 1, amount = \"5000\" },",
            "{ count = 1, amount = \"500000\" },",
            1,
        )
        .replacen("total = \"315000\"", "total = \"810000\"", 1);
    assert_ne!(typo, text, "the typo was made");
    for definition in [typo.clone(), typo.replacen("profile = \"fdj\"\n", "", 1)] {
        let e = Game::parse(&definition, "typo.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("typo.toml, stakes[price=0.5].prizes")
                && e.contains("180 %")
                && e.contains("100 %"),
            "{e}"
        );
    }
    // 80 %: a game, but outside FDJ's bounds (décret 2019-1061) — and fine without a profile.
    let high = text
        .replacen(
            "{ count = 1, amount = \"5000\" },",
            "{ count = 1, amount = \"50000\" },",
            1,
        )
        .replacen("total = \"315000\"", "total = \"360000\"", 1);
    let e = Game::parse(&high, "high.toml").unwrap_err().to_string();
    assert!(
        e.contains("80 %") && e.contains("62 % to 75 %") && e.contains("2019-1061"),
        "{e}"
    );
    assert!(Game::parse(&high.replacen("profile = \"fdj\"\n", "", 1), "high.toml").is_ok());
    let unknown = text.replacen("profile = \"fdj\"", "profile = \"mars\"", 1);
    let e = Game::parse(&unknown, "mars.toml").unwrap_err().to_string();
    assert!(e.contains("mars.toml, profile") && e.contains("fdj"), "{e}");
}
