//! Full-size La ruche d'or blocks (900 000 tickets) at each stake: emit with a fixed seed,
//! verify, check with OpenSSL, check the block's prizes tier by tier against Article 3 of the
//! rules, and compare 1 and 2 threads.

use crate::common;
use common::*;

/// Article 3.1 of the rules (../shared/rules/ruche-or.fr.txt), a block at 0.5 €:
/// (amount, count) of each tier, then the losers (900 000 − 238 353 winners), and the total.
const ARTICLE_3_1: ([(&str, u64); 11], &str) = (
    [
        ("5000", 1),
        ("500", 2),
        ("25", 300),
        ("10", 300),
        ("7.5", 4_000),
        ("5", 10_450),
        ("2.5", 6_300),
        ("1.5", 27_000),
        ("1", 130_000),
        ("0.5", 60_000),
        ("0", 661_647),
    ],
    "315000",
);

/// Article 3.2 of the rules (../shared/rules/ruche-or.fr.txt), a block at 1 €:
/// (amount, count) of each tier, then the losers (900 000 − 238 353 winners), and the total.
const ARTICLE_3_2: ([(&str, u64); 11], &str) = (
    [
        ("10000", 1),
        ("1000", 2),
        ("50", 300),
        ("20", 300),
        ("15", 4_000),
        ("10", 10_450),
        ("5", 6_300),
        ("3", 27_000),
        ("2", 130_000),
        ("1", 60_000),
        ("0", 661_647),
    ],
    "630000",
);

/// Article 3.3 of the rules (../shared/rules/ruche-or.fr.txt), a block at 2 €:
/// (amount, count) of each tier, then the losers (900 000 − 238 353 winners), and the total.
const ARTICLE_3_3: ([(&str, u64); 11], &str) = (
    [
        ("20000", 1),
        ("2000", 2),
        ("100", 300),
        ("40", 300),
        ("30", 4_000),
        ("20", 10_450),
        ("10", 6_300),
        ("6", 27_000),
        ("4", 130_000),
        ("2", 60_000),
        ("0", 661_647),
    ],
    "1260000",
);

/// Article 3.4 of the rules (../shared/rules/ruche-or.fr.txt), a block at 3 €:
/// (amount, count) of each tier, then the losers (900 000 − 238 353 winners), and the total.
const ARTICLE_3_4: ([(&str, u64); 11], &str) = (
    [
        ("30000", 1),
        ("3000", 2),
        ("150", 300),
        ("60", 300),
        ("45", 4_000),
        ("30", 10_450),
        ("15", 6_300),
        ("9", 27_000),
        ("6", 130_000),
        ("3", 60_000),
        ("0", 661_647),
    ],
    "1890000",
);

fn emit_and_verify(price: &str, stake_folder: &str, article_3: &([(&str, u64); 11], &str)) {
    let w = Workdir::new();
    let out = w.ok(&[
        "emit", "--game", "ruche-or", "--price", price, "--blocks", "1", "--seed", SEED,
    ]);
    let folder = w.path(&format!("emissions/ruche-or/{stake_folder}/e0001"));
    assert!(
        text(&out).contains("1 block(s) written"),
        "summary: {}",
        text(&out)
    );
    let csv = folder.join("block-00001.csv");
    let verified = w.ok(&["verify", csv.to_str().unwrap()]);
    assert!(text(&verified).contains("OK "), "{}", text(&verified));
    assert!(text(&verified).contains("900 000 tickets"));
    openssl_verify(&folder, "block-00001");
    // The manifest states exactly Article 3 for the stake, tier by tier (verify, above, checked
    // that the CSV's tickets are the manifest's: this is the block's whole prize multiset).
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&read(
            &folder.join("block-00001.manifest.json")
        ))
        .unwrap()["tickets"],
        900_000
    );
    let (tiers, total) = article_3;
    // The table as transcribed adds up: a block of 900 000 tickets, and the stated total.
    let dec = |s: &str| s.parse::<rust_decimal::Decimal>().unwrap();
    assert_eq!(tiers.iter().map(|t| t.1).sum::<u64>(), 900_000);
    let sum: rust_decimal::Decimal = tiers
        .iter()
        .map(|t| dec(t.0) * rust_decimal::Decimal::from(t.1))
        .sum();
    assert_eq!(sum, dec(total));
    assert_article_3(&folder, tiers, 238_353, total);
}

#[test]
fn full_block_at_0_5() {
    emit_and_verify("0.5", "0.5", &ARTICLE_3_1);
}

#[test]
fn full_block_at_1() {
    emit_and_verify("1", "1", &ARTICLE_3_2);
}

#[test]
fn full_block_at_2() {
    emit_and_verify("2", "2", &ARTICLE_3_3);
}

#[test]
fn full_block_at_3() {
    emit_and_verify("3", "3", &ARTICLE_3_4);
}

#[test]
fn one_and_two_threads_give_identical_files() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "ruche-or", "0.5");
    assert_pinned(
        &folder,
        "ee4191f8da61f825b13235b0cd1df8e8dd7aa4faa7e022cab385595a38854b4a",
        "e4ac302963b5b82391ba72a6c3d4aba61b544679b89b981e36268ad45cd1c860",
        "88f2984086e36f9a992c1fd3c8dfee5b96cc5309f7c95147a4c2659290e5983f",
    );
    verify_with_forms(&w, &folder, "900 000");
}
