//! A full 2013 Année de la chance block (2 000 000 tickets): emitted with a fixed seed by 1
//! and by 2 threads, byte-identical, and verified (with the forms each prize took).

mod common;
use common::*;

#[test]
fn full_block_verifies_and_is_the_same_with_1_and_2_threads() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    for (threads, out) in [("1", "one"), ("2", "two")] {
        w.ok(&[
            "emit",
            "--game",
            "annee-chance",
            "--price",
            "3",
            "--seed",
            SEED,
            "--signing-key",
            "keys/signing-key.pem",
            "--threads",
            threads,
            "--out",
            out,
        ]);
    }
    let folder = w.path("one/annee-chance/3/e0001");
    for file in [
        "block-00001.csv",
        "block-00001.manifest.json",
        "block-00001.manifest.json.sig",
    ] {
        let a = read(&folder.join(file));
        let b = read(&w.path(&format!("two/annee-chance/3/e0001/{file}")));
        assert!(a == b, "{file} differs between 1 and 2 threads");
    }
    let out = w.ok(&[
        "verify",
        "--forms",
        "--public-key",
        "keys/public-key.pem",
        folder.join("block-00001.csv").to_str().unwrap(),
    ]);
    let said = text(&out);
    println!("{said}");
    assert!(said.contains("2 000 000 tickets"), "{said}");
    assert!(said.contains("1 OK, 0 failed"), "{said}");
    openssl_verify(&folder, "block-00001");
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&folder.join("block-00001.manifest.json"))).unwrap();
    assert_eq!(manifest["total_prizes"], "3960000");
    assert_eq!(manifest["winners"], 433_720);
    let prizes = manifest["prizes"].as_array().unwrap();
    let table: Vec<(String, u64)> = prizes
        .iter()
        .map(|p| {
            (
                p["amount"].as_str().unwrap().to_string(),
                p["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [
        ("40000", 2),
        ("1000", 18),
        ("100", 1_700),
        ("50", 8_000),
        ("20", 20_000),
        ("10", 117_000),
        ("6", 287_000),
        ("0", 1_566_280),
    ]
    .iter()
    .map(|(a, c)| (a.to_string(), *c))
    .collect();
    assert_eq!(table, expected);
}
