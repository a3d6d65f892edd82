//! How layouts look across a full block of each game (generator 3): the forms each prize
//! takes, the near-miss rates against those the definition asks for, and no difference between
//! winners and losers in anything a player sees outside the winning parts (a chi-square test
//! of independence per visible feature, at p ≥ 0.001). The layouts are read from the block's
//! text, not through the synthesizer; the forms are the decoder's. Then near misses set to 0
//! in a definition: none in the block, which still verifies. The Maxi Ruche d'or and Année de
//! la chance blocks are those their games' full-block tests emit (`maxi_ruche_or`,
//! `annee_chance`), which call the checks here: the same seed, the same tickets, made once.

use crate::common;
use common::stats::{upper_gamma, Table};
use common::*;
use emission_factory::game::Game;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

/// The significance below which a feature is said to differ between winners and losers.
const ALPHA: f64 = 0.001;

/// Emits block 1 of `game` (an id or a definition file) at `price` and returns the text of its
/// CSV; [`tickets`] reads it.
fn block(w: &Workdir, game: &str, id: &str, price: &str) -> String {
    w.ok(&[
        "emit", "--game", game, "--price", price, "--blocks", "1", "--seed", SEED, "-q",
    ]);
    let csv = w.path(&format!("emissions/{id}/{price}/e0001/block-00001.csv"));
    String::from_utf8(read(&csv)).unwrap()
}

/// The ticket lines of a block's CSV text as (prize, layout), borrowed from it.
fn tickets(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .skip(1)
        .map(|line| {
            let mut fields = line.split(',');
            let _serial = fields.next();
            (fields.next().unwrap(), fields.next().unwrap())
        })
        .collect()
}

/// Where the visible features of one ticket go, as (feature, value) pairs.
type Features<'s> = &'s mut dyn FnMut(&'static str, &str);

/// A small count as text, without allocating.
fn small(n: usize) -> &'static str {
    const DIGITS: [&str; 16] = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
    ];
    DIGITS[n]
}

/// Counts the features of every ticket by group (0: winners, 1: losers), checks that none
/// differs, prints the tables.
fn no_feature_tells_the_result(
    tickets: &[(&str, &str)],
    features: impl Fn(&str, Features),
) -> BTreeMap<&'static str, Table> {
    let mut tables: BTreeMap<&'static str, Table> = BTreeMap::new();
    for (prize, layout) in tickets {
        let group = usize::from(*prize == "0");
        features(layout, &mut |feature, value| {
            tables.entry(feature).or_default().add_str(group, value);
        });
    }
    let mut differing = Vec::new();
    for (feature, table) in &tables {
        let (x2, df, p) = table.chi_square();
        println!(
            "{feature}: chi2 {x2:.1}, {df} df, p = {p:.4} ({} winners, {} losers)",
            table.total(0),
            table.total(1)
        );
        if p < ALPHA {
            differing.push(format!("{feature} (p = {p:.2e}): {:?}", table.counts));
        }
    }
    assert!(
        differing.is_empty(),
        "features that tell winners from losers: {differing:#?}"
    );
    tables
}

/// The share of `value` among the counts of both groups of a feature.
fn share(table: &Table, value: &str) -> (f64, f64) {
    let n = (table.total(0) + table.total(1)) as f64;
    let k = table.counts.get(value).map_or(0, |c| c[0] + c[1]) as f64;
    (k / n, n)
}

/// Checks an observed rate against the asked one, within 6 standard deviations.
fn near(what: &str, observed: (f64, f64), asked: f64) {
    let (rate, n) = observed;
    let sd = (asked * (1.0 - asked) / n).sqrt();
    println!("{what}: {rate:.4} observed, {asked:.4} asked ({n} cases)");
    assert!(
        (rate - asked).abs() <= 6.0 * sd + 1e-12,
        "{what}: {rate} observed, {asked} asked"
    );
}

/// The forms each prize took (the decoder's words); every prize of more than 1000 tickets
/// shows at least two forms, and every ticket decodes to its prize.
fn forms_per_prize(id: &str, price: &str, tickets: &[(&str, &str)]) {
    let game = Game::builtin(id).unwrap();
    let stake = game.stake(Decimal::from_str(price).unwrap()).unwrap();
    let decoder = stake.decoder();
    let mut forms: BTreeMap<Decimal, BTreeMap<String, u64>> = BTreeMap::new();
    let mut prizes: BTreeMap<&str, Decimal> = BTreeMap::new();
    for (text, layout) in tickets {
        let prize = *prizes
            .entry(text)
            .or_insert_with(|| Decimal::from_str(text).unwrap());
        assert_eq!(decoder.decode(layout.as_bytes()), Ok(prize), "{layout}");
        let form = decoder.form(layout.as_bytes()).unwrap();
        let by_form = forms.entry(prize).or_default();
        match by_form.get_mut(&form) {
            Some(n) => *n += 1,
            None => {
                by_form.insert(form, 1);
            }
        }
    }
    for (prize, by_form) in &forms {
        let count: u64 = by_form.values().sum();
        println!(
            "{prize} €: {count} tickets, {} forms: {by_form:?}",
            by_form.len()
        );
        if count > 1000 && !prize.is_zero() {
            assert!(
                by_form.len() >= 2,
                "{prize} € always takes one form: {by_form:?}"
            );
        }
    }
}

/// The rows of a hive as (amount, cells).
fn rows(hive: &str) -> impl Iterator<Item = (&str, &str)> {
    hive.split('/').map(|row| row.split_once(':').unwrap())
}

fn count(cells: &str, c: char) -> usize {
    cells.chars().filter(|&x| x == c).count()
}

/// La ruche d'or: EXTRA hives; on rows that do not win and hold no honey pot or E, the P
/// count and the amount; honey pots of hives that win no honey (fewer than 4).
fn ruche_features(layout: &str, f: Features) {
    f("extra_hives", small(layout.matches('|').count()));
    for hive in layout.split('|') {
        let pots: usize = rows(hive).map(|(_, c)| count(c, 'H')).sum();
        if pots < 4 {
            f("loose_honey", small(pots));
        }
        for (amount, cells) in rows(hive) {
            let p = count(cells, 'P');
            if p < 3 {
                f("losing_row_amount", amount);
                if count(cells, 'H') + count(cells, 'E') == 0 {
                    f("losing_row_p", small(p));
                }
            }
        }
    }
}

#[test]
fn ruche_or_full_block_forms_near_misses_and_no_tell() {
    let w = Workdir::new();
    let text = block(&w, "ruche-or", "ruche-or", "2");
    let tickets = tickets(&text);
    assert_eq!(tickets.len(), 900_000);
    forms_per_prize("ruche-or", "2", &tickets);
    let tables = no_feature_tells_the_result(&tickets, ruche_features);
    near("rows with two P", share(&tables["losing_row_p"], "2"), 0.35);
    near(
        "tickets with an EXTRA hive",
        (1.0 - share(&tables["extra_hives"], "0").0, 900_000.0),
        0.16,
    );
    // Three loose pots: asked 16 %, among hives below the honey table.
    near(
        "hives with three loose pots",
        share(&tables["loose_honey"], "3"),
        0.16,
    );
}

/// Maxi Ruche d'or: an EXTRA hive; on rows that do not win, the P count, the multiplier and
/// the amount; the top amount of hives without a bee.
fn maxi_features(layout: &str, f: Features) {
    let hives = layout.split('+').next().unwrap();
    f(
        "extra_hive",
        if hives.contains('|') { "true" } else { "false" },
    );
    for hive in hives.split('|') {
        let (top, body) = hive.split_once('#').unwrap();
        if !body.contains('Q') {
            f("top_amount", top);
        }
        for (amount, cells) in rows(body) {
            let p = count(cells, 'P');
            if p < 3 {
                // The multiplier a row shows (its first of 2 to 6 or X), or none.
                let mult = cells.find(|c| "23456X".contains(c));
                f("losing_row_p", small(p));
                f(
                    "losing_row_multiplier",
                    mult.map_or("None", |i| &cells[i..i + 1]),
                );
                f("losing_row_amount", amount);
            }
        }
    }
}

/// The forms, near misses and features of the full Maxi Ruche d'or block at `csv` (block 1 of
/// the seed [`SEED`] at 3 €): called by `maxi_ruche_or`'s full-block test on the block it emitted,
/// rather than emitting the same 7 500 000 tickets a third time.
pub(crate) fn maxi_ruche_or_full_block_forms_near_misses_and_no_tell(csv: &Path) {
    let text = String::from_utf8(read(csv)).unwrap();
    let tickets = tickets(&text);
    assert_eq!(tickets.len(), 7_500_000);
    forms_per_prize("maxi-ruche-or", "3", &tickets);
    let tables = no_feature_tells_the_result(&tickets, maxi_features);
    near("rows with two P", share(&tables["losing_row_p"], "2"), 0.45);
    near(
        "rows with a multiplier",
        (
            1.0 - share(&tables["losing_row_multiplier"], "None").0,
            share(&tables["losing_row_multiplier"], "None").1,
        ),
        0.12,
    );
    near(
        "tickets with an EXTRA hive",
        share(&tables["extra_hive"], "true"),
        0.2,
    );
}

/// Année de la chance: on months that do not win, whether the two pictures are neighbours in
/// the picture list (A..H) and the amount; on a clover that does not win, a 12 and the amount.
fn calendar_features(layout: &str, f: Features) {
    let (months, clover) = layout.split_once('|').unwrap();
    let yes = |b: bool| if b { "true" } else { "false" };
    for month in months.split('/') {
        let b = month.as_bytes();
        if b[0] != b[1] {
            f("losing_month_neighbours", yes(b[0].abs_diff(b[1]) == 1));
            f("losing_month_amount", &month[3..]);
        }
    }
    let (numbers, amount) = clover.split_once(':').unwrap();
    let mut numbers = numbers.split('-');
    if !numbers.clone().any(|n| n == "13") {
        f("losing_clover_twelve", yes(numbers.any(|n| n == "12")));
        f("losing_clover_amount", amount);
    }
}

/// The same for the full Année de la chance block at `csv` (block 1 of [`SEED`] at 3 €): called by
/// `annee_chance`'s full-block test on the block it emitted.
pub(crate) fn annee_chance_full_block_forms_near_misses_and_no_tell(csv: &Path) {
    let text = String::from_utf8(read(csv)).unwrap();
    let tickets = tickets(&text);
    assert_eq!(tickets.len(), 2_000_000);
    forms_per_prize("annee-chance", "3", &tickets);
    let tables = no_feature_tells_the_result(&tickets, calendar_features);
    // Asked 0.375 neighbours, and any two different pictures are neighbours 14 times in 56.
    near(
        "months with neighbouring pictures",
        share(&tables["losing_month_neighbours"], "true"),
        0.375 + 0.625 * 14.0 / 56.0,
    );
    near(
        "clovers with a 12",
        share(&tables["losing_clover_twelve"], "true"),
        0.375,
    );
}

/// A copy of a built-in definition with `from` replaced by `to`, written in the work folder.
fn definition(w: &Workdir, id: &str, from: &str, to: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("games/{id}.toml"));
    let text = String::from_utf8(read(&path)).unwrap();
    let copy = text.replacen(from, to, 1);
    assert_ne!(copy, text, "{from} not in {id}");
    let file = w.path("lowered.toml");
    std::fs::write(&file, copy).unwrap();
    file.to_str().unwrap().to_string()
}

#[test]
fn near_misses_set_to_zero_leave_none_and_the_block_verifies() {
    // La ruche d'or without rows of two P.
    let w = Workdir::new();
    let game = definition(
        &w,
        "ruche-or",
        "row_p_weights = [25, 40, 35]",
        "row_p_weights = [25, 40, 0]",
    );
    let lines = block(&w, &game, "ruche-or", "0.5");
    let two_p = tickets(&lines)
        .iter()
        .flat_map(|(_, l)| {
            l.split('|')
                .flat_map(rows)
                .map(|(_, c)| count(c, 'P'))
                .collect::<Vec<_>>()
        })
        .filter(|&p| p == 2)
        .count();
    assert_eq!(
        two_p, 0,
        "rows with two P although the definition asks none"
    );
    let csv = w.path("emissions/ruche-or/0.5/e0001/block-00001.csv");
    let out = w.ok(&["verify", "--game", &game, csv.to_str().unwrap()]);
    assert!(text(&out).contains("OK "), "{}", text(&out));

    // Année de la chance without a 12 on a losing clover.
    let w = Workdir::new();
    let game = definition(&w, "annee-chance", "twelve_rate = 0.375", "twelve_rate = 0");
    let lines = block(&w, &game, "annee-chance", "3");
    let mut twelves = 0;
    for (_, l) in tickets(&lines) {
        calendar_features(l, &mut |feature, value| {
            twelves += usize::from(feature == "losing_clover_twelve" && value == "true");
        });
    }
    assert_eq!(
        twelves, 0,
        "losing clovers with a 12 although the definition asks none"
    );
    let csv = w.path("emissions/annee-chance/3/e0001/block-00001.csv");
    let out = w.ok(&["verify", "--game", &game, csv.to_str().unwrap()]);
    assert!(text(&out).contains("OK "), "{}", text(&out));
}

#[test]
fn the_chi_square_law_at_known_points() {
    // Survival function of the chi-square law: (x, df, p) from published tables.
    for (x, df, p) in [
        (3.841_458_820_694_124, 1.0, 0.05),
        (10.827_566_170_662_733, 1.0, 0.001),
        (16.266_236_196_238_13, 3.0, 0.001),
        (2.0, 2.0, (-1.0f64).exp()),
        // Even degrees of freedom have a closed form: Q(5, 10) = e^-10 (1 + 10 + 50 + 500/3 + 1250/3).
        (
            20.0,
            10.0,
            (-10.0f64).exp() * (1.0 + 10.0 + 50.0 + 500.0 / 3.0 + 1250.0 / 3.0),
        ),
    ] {
        let got = upper_gamma(df / 2.0, x / 2.0);
        assert!((got - p).abs() < 1e-6 * p, "x={x} df={df}: {got} vs {p}");
    }
    // A table whose groups differ is caught, one whose groups match is not.
    let mut differ = Table::default();
    let mut same = Table::default();
    for i in 0..10_000u32 {
        differ.add(0, i % 2);
        differ.add(1, u32::from(i % 3 == 0));
        same.add(0, i % 2);
        same.add(1, (i / 7) % 2);
    }
    assert!(differ.chi_square().2 < ALPHA);
    assert!(same.chi_square().2 > 0.01);
}
