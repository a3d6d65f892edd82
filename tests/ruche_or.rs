//! Full-size La ruche d'or blocks (900 000 tickets) at each stake: emit with a fixed seed,
//! verify, check with OpenSSL, and compare 1 and 2 threads.

mod common;
use common::*;

fn emit_and_verify(price: &str, stake_folder: &str) {
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
    // The manifest states exactly Article 3 for the stake.
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&folder.join("block-00001.manifest.json"))).unwrap();
    assert_eq!(manifest["tickets"], 900_000);
    assert_eq!(manifest["winners"], 238_353);
    let losers = manifest["prizes"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(losers["amount"], "0");
    assert_eq!(losers["count"], 661_647);
}

#[test]
fn full_block_at_0_5() {
    emit_and_verify("0.5", "0.5");
}

#[test]
fn full_block_at_1() {
    emit_and_verify("1", "1");
}

#[test]
fn full_block_at_2_with_article_3_counts() {
    emit_and_verify("2", "2");
}

#[test]
fn full_block_at_3() {
    emit_and_verify("3", "3");
}

#[test]
fn one_and_two_threads_give_identical_files() {
    let w = Workdir::new();
    let folder = emit_with_1_and_2_threads(&w, "ruche-or", "0.5");
    assert_pinned(
        &folder,
        "ee4191f8da61f825b13235b0cd1df8e8dd7aa4faa7e022cab385595a38854b4a",
        "291a5cfdf681245a876c985d70513e09c10e0d563b27b477236a9b6e97c51db9",
        "0b52ff730ef4819d29d9382dff9b155115e9202d31b65198e274f1d749496add",
    );
    verify_with_forms(&w, &folder, "900 000");
}
