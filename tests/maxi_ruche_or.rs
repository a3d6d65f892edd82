//! A full Maxi Ruche d'or block (7 500 000 tickets): emitted with a fixed seed by 1
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
            "maxi-ruche-or",
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
    let folder = w.path("one/maxi-ruche-or/3/e0001");
    for file in [
        "block-00001.csv",
        "block-00001.manifest.json",
        "block-00001.manifest.json.sig",
    ] {
        let a = read(&folder.join(file));
        let b = read(&w.path(&format!("two/maxi-ruche-or/3/e0001/{file}")));
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
    assert!(said.contains("7 500 000 tickets"), "{said}");
    assert!(said.contains("1 OK, 0 failed"), "{said}");
    openssl_verify(&folder, "block-00001");
    let manifest: serde_json::Value =
        serde_json::from_slice(&read(&folder.join("block-00001.manifest.json"))).unwrap();
    assert_eq!(manifest["total_prizes"], "16875000");
    assert_eq!(manifest["winners"], 2_437_768);
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
        ("100000", 3),
        ("5000", 15),
        ("500", 250),
        ("50", 50_000),
        ("20", 200_000),
        ("10", 187_500),
        ("5", 1_000_000),
        ("3", 1_000_000),
        ("0", 5_062_232),
    ]
    .iter()
    .map(|(a, c)| (a.to_string(), *c))
    .collect();
    assert_eq!(table, expected);
}
