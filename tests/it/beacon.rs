//! Commit, then beacon, through the real binary: a ceremony names a future round of drand
//! quicknet, emit and verify take the round's JSON (real rounds, tests/data/beacon) and make and
//! replay the blocks from HKDF-SHA256(secret, signature, emission), checked against OpenSSL's
//! HKDF; every wrong round, tampered file, missing round and round older than the record is
//! refused.

use crate::common;
use age::secrecy::ExposeSecret;
use common::*;
use emission_factory::custody::{rebuild_seed, share_file_name};
use std::os::unix::fs::PermissionsExt;
use std::process::Output;

const EMISSION: &str = "ruche-or/2/e0003";
/// The record time of these tests: 2023-08-23T15:03:20Z, before round 3 of quicknet
/// (2023-08-23T15:09:33Z), the latest round of the test data.
const BEFORE_ROUND_3: &str = "1692803000";

/// Two custodians (identity files as age-keygen writes them) and the signing key.
fn custodians(w: &Workdir) -> (Vec<String>, Vec<String>) {
    fixed_test_key(w);
    let (mut ids, mut publics) = (Vec::new(), Vec::new());
    for i in 1..=2 {
        let identity = age::x25519::Identity::generate();
        let name = format!("custodian-{i}.key");
        std::fs::write(
            w.path(&name),
            format!("{}\n", identity.to_string().expose_secret()),
        )
        .unwrap();
        std::fs::set_permissions(w.path(&name), std::fs::Permissions::from_mode(0o600)).unwrap();
        ids.push(name);
        publics.push(identity.to_public().to_string());
    }
    (ids, publics)
}

/// `seed` for ruche-or 2 € emission 3, 2 of 2, with `extra` options, its record dated `time`.
fn ceremony(w: &Workdir, publics: &[String], extra: &[&str], time: &str) -> Output {
    let mut args = vec![
        "seed",
        "--signing-key",
        "keys/signing-key.pem",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        "3",
        "--shares-needed",
        "2",
        "--out",
        "shares",
    ];
    for p in publics {
        args.extend(["--recipient", p.as_str()]);
    }
    args.extend(extra);
    w.command(&args)
        .env("SOURCE_DATE_EPOCH", time)
        .output()
        .unwrap()
}

fn shares() -> Vec<String> {
    (1..=2)
        .map(|i| {
            format!(
                "shares/{}",
                share_file_name(&EMISSION.parse().unwrap(), i, 2)
            )
        })
        .collect()
}

/// `command` (emit or verify) with the two shares, their identities and `extra`.
fn with_shares(w: &Workdir, ids: &[String], command: &[&str], extra: &[&str]) -> Output {
    let mut args: Vec<&str> = command.to_vec();
    let shares = shares();
    for s in &shares {
        args.extend(["--share", s.as_str()]);
    }
    for i in ids {
        args.extend(["--identity", i.as_str()]);
    }
    args.extend(extra);
    w.run(&args)
}

const EMIT: &[&str] = &[
    "emit",
    "--game",
    "ruche-or",
    "--price",
    "2",
    "--emission",
    "3",
    "--signing-key",
    "keys/signing-key.pem",
    "--quiet",
];
const FOLDER: &str = "emissions/ruche-or/2/e0003";

/// Exit 2 and stderr says every one of `needles`.
fn refused(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(out));
    for n in needles {
        assert!(err.contains(n), "stderr should say '{n}':\n{err}");
    }
}

/// A copy of real round 3 with one change, written to `name`.
fn tampered(w: &Workdir, name: &str, change: impl Fn(&mut serde_json::Value)) -> String {
    let mut round: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data("beacon/quicknet-round-3.json")).unwrap(),
    )
    .unwrap();
    change(&mut round);
    std::fs::write(w.path(name), serde_json::to_vec(&round).unwrap()).unwrap();
    name.to_string()
}

fn flip_bit(hex_text: &str, bit: usize) -> String {
    let mut bytes = hex::decode(hex_text).unwrap();
    bytes[bit / 8] ^= 1 << (bit % 8);
    hex::encode(bytes)
}

#[test]
fn a_beacon_emission_is_made_from_its_round_and_audited_with_it() {
    let w = Workdir::new();
    let (ids, publics) = custodians(&w);
    let round_3 = data("beacon/quicknet-round-3.json");
    let round_2 = data("beacon/quicknet-round-2.json");

    let out = ceremony(&w, &publics, &["--beacon-round", "3"], BEFORE_ROUND_3);
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: round 3 is already published by this machine's clock"),
        "{}",
        text(&out)
    );
    assert!(
        said.contains("beacon:      round 3 of drand quicknet")
            && said.contains("published at 2023-08-23T15:09:33Z"),
        "{said}"
    );
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.path(&format!("{FOLDER}/emission.json"))).unwrap())
            .unwrap();
    assert_eq!(record["format"], 2);
    assert_eq!(record["beacon"]["round"], 3);
    assert_eq!(
        record["beacon"]["chain_hash"],
        "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
    );

    // No round, another round, a tampered round: refused, nothing made.
    refused(
        &with_shares(&w, &ids, EMIT, &[]),
        &["waits for round 3 of drand quicknet", "--beacon FILE"],
    );
    refused(
        &with_shares(&w, &ids, EMIT, &["--beacon", &round_2]),
        &["the file is round 2", "names round 3"],
    );
    let bit = tampered(&w, "bit.json", |r| {
        r["signature"] = flip_bit(r["signature"].as_str().unwrap(), 200).into()
    });
    refused(
        &with_shares(&w, &ids, EMIT, &["--beacon", &bit]),
        &["bit.json", "signature"],
    );
    let renumbered = tampered(&w, "renumbered.json", |r| r["round"] = 4.into());
    refused(
        &with_shares(&w, &ids, EMIT, &["--beacon", &renumbered]),
        &[
            "renumbered.json",
            "not drand quicknet's signature of round 4",
        ],
    );
    let randomness = tampered(&w, "randomness.json", |r| {
        r["randomness"] = flip_bit(r["randomness"].as_str().unwrap(), 0).into()
    });
    refused(
        &with_shares(&w, &ids, EMIT, &["--beacon", &randomness]),
        &["randomness.json", "is not SHA-256 of the signature"],
    );
    // A file larger than a round can be is not read; neither is a missing one.
    let mut big = std::fs::read(&round_3).unwrap();
    big.resize(5000, b' ');
    std::fs::write(w.path("big.json"), big).unwrap();
    refused(
        &with_shares(&w, &ids, EMIT, &["--beacon", "big.json"]),
        &[
            "big.json",
            "5000 bytes, more than the 4096 bytes a beacon round file may hold",
        ],
    );
    refused(
        &with_shares(&w, &ids, EMIT, &["--beacon", "missing.json"]),
        &["--beacon missing.json"],
    );
    // The emission is a production one: no run without its shares, none signed with a
    // one-time key.
    refused(
        &w.run(EMIT),
        &[&format!("{FOLDER} is a production emission: its seed comes only from its custody shares; give them with --share and --identity (k of them). Nothing was written")],
    );
    let without_key: Vec<&str> = EMIT
        .iter()
        .copied()
        .filter(|a| !matches!(*a, "--signing-key" | "keys/signing-key.pem"))
        .collect();
    refused(
        &with_shares(&w, &ids, &without_key, &["--beacon", &round_3]),
        &["a production emission (--share) is signed with the lottery's own key: give --signing-key (make one with keygen). Nothing was written"],
    );
    assert!(!w.path(&format!("{FOLDER}/block-00001.csv")).exists());
    assert!(!w.path("emissions/private").exists());

    // The round the record names: made.
    let out = with_shares(&w, &ids, EMIT, &["--beacon", &round_3]);
    assert!(out.status.success(), "{}", text(&out));

    // The blocks' seed is HKDF-SHA256(secret, salt = round 3's signature, info), computed by
    // OpenSSL: a test emission made from that seed has the very same block.
    if require_tool("openssl", &["kdf", "-help"], "apt-get install openssl") {
        let (secret, _) = rebuild_seed(
            &shares().iter().map(|s| w.path(s)).collect::<Vec<_>>(),
            &ids.iter().map(|i| w.path(i)).collect::<Vec<_>>(),
            &EMISSION.parse().unwrap(),
        )
        .unwrap();
        let signature: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&round_3).unwrap()).unwrap();
        let info = hex::encode(format!("emission-factory beacon seed v1 {EMISSION}"));
        let out = std::process::Command::new("openssl")
            .args([
                "kdf",
                "-keylen",
                "32",
                "-kdfopt",
                "digest:SHA256",
                "-kdfopt",
                &format!("hexkey:{}", hex::encode(secret.expose())),
                "-kdfopt",
                &format!("hexsalt:{}", signature["signature"].as_str().unwrap()),
                "-kdfopt",
                &format!("hexinfo:{info}"),
                "HKDF",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let derived = String::from_utf8_lossy(&out.stdout)
            .trim()
            .replace(':', "")
            .to_ascii_lowercase();
        assert_eq!(derived.len(), 64, "{derived}");
        assert_ne!(derived, hex::encode(secret.expose()));
        w.ok(&[
            "emit",
            "--game",
            "ruche-or",
            "--price",
            "2",
            "--emission",
            "3",
            "--out",
            "test",
            "--seed",
            &derived,
            "--quiet",
        ]);
        assert_eq!(
            std::fs::read(w.path(&format!("{FOLDER}/block-00001.csv"))).unwrap(),
            std::fs::read(w.path("test/ruche-or/2/e0003/block-00001.csv")).unwrap(),
            "the beacon emission's block is not the one OpenSSL's HKDF seed makes"
        );
    }

    // A later run keeps the block (replayed from the secret and the round).
    let out = with_shares(&w, &ids, EMIT, &["--beacon", &round_3]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("round 3 of drand quicknet"),
        "{}",
        text(&out)
    );

    // The auditor: shares and round re-derive the seed, and verify says so.
    let verify = &["verify", "--allow-unsealed", FOLDER];
    let out = with_shares(&w, &ids, verify, &["--beacon", &round_3]);
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("seed replay OK"), "{said}");
    assert!(
        said.contains(
            "beacon OK: the blocks' seed re-derived from the secret and round 3 of drand quicknet"
        ),
        "{said}"
    );
    let out = with_shares(&w, &ids, verify, &["--beacon", &round_3, "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["beacon_round"], 3);
    assert_eq!(json["ok"], true);
    // Without the round, or with another: the replay fails, naming why.
    let out = with_shares(&w, &ids, verify, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("give that round's JSON with --beacon"),
        "{}",
        text(&out)
    );
    let out = with_shares(&w, &ids, verify, &["--beacon", &round_2]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("names round 3"), "{}", text(&out));
    // The summary never says the refused round seeded anything (it said "the seed of the
    // blocks replayed is HKDF-SHA256(secret, salt = the signature of round 2 ...)").
    assert!(
        !text(&out).contains("the seed of the")
            && text(&out).contains("no block was replayed from it"),
        "{}",
        text(&out)
    );
    refused(
        &with_shares(&w, &ids, verify, &["--beacon", &bit]),
        &["bit.json", "signature"],
    );
    // --beacon without a seed has nothing to salt.
    refused(
        &w.run(&["verify", "--beacon", &round_3, FOLDER]),
        &["--beacon is for an audit with the emission's seed"],
    );
}

#[test]
fn the_ceremony_refuses_a_round_already_published() {
    let w = Workdir::new();
    let (_, publics) = custodians(&w);
    // Round 3 is published at 1692803373: a record made then (or later) cannot name it.
    for time in ["1692803373", PINNED_TIME] {
        let out = ceremony(&w, &publics, &["--beacon-round", "3"], time);
        refused(
            &out,
            &[
                "--beacon-round 3",
                "not after this ceremony's record",
                "Nothing was written",
            ],
        );
        assert!(out.stdout.is_empty(), "{}", text(&out));
        assert!(!w.path(&format!("{FOLDER}/emission.json")).exists());
        assert!(!w.path("shares").exists());
    }
    // --beacon-after names the first round after the time: 15:09:31 → round 3 (15:09:33).
    let out = ceremony(
        &w,
        &publics,
        &["--beacon-after", "2023-08-23T15:09:31Z"],
        BEFORE_ROUND_3,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("round 3 of drand quicknet"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_record_whose_round_is_older_than_it_is_refused() {
    // An insider with the signing key rewrites the record's time after the round was out
    // (say, to make it look as if the round were fresh for another ceremony): emit refuses.
    let w = Workdir::new();
    let (ids, publics) = custodians(&w);
    let out = ceremony(&w, &publics, &["--beacon-round", "3"], BEFORE_ROUND_3);
    assert!(out.status.success(), "{}", text(&out));
    let folder = w.path(FOLDER);
    let key_path = w.path("keys/signing-key.pem");
    let key = emission_factory::block::keys::parse_signing_key(
        &std::fs::read(&key_path).unwrap(),
        &key_path,
    )
    .unwrap();
    let (mut record, _) = emission_factory::emission::record::read(&folder, &key.verifying_key())
        .unwrap()
        .unwrap();
    record.created = "2023-08-23T15:10:00Z".into();
    std::fs::remove_file(folder.join("emission.json")).unwrap();
    emission_factory::emission::record::write(&folder, &record, &key).unwrap();
    let out = with_shares(
        &w,
        &ids,
        EMIT,
        &["--beacon", &data("beacon/quicknet-round-3.json")],
    );
    refused(
        &out,
        &["round 3 of drand quicknet was published at 2023-08-23T15:09:33Z, not after the emission's record was made"],
    );
    assert!(!folder.join("block-00001.csv").exists());
}

#[test]
fn a_test_emission_takes_no_beacon() {
    let w = Workdir::new();
    refused(
        &w.run(&[
            "emit",
            "--game",
            "ruche-or",
            "--price",
            "2",
            "--seed",
            SEED,
            "--beacon",
            &data("beacon/quicknet-round-3.json"),
            "--quiet",
        ]),
        &["--share"],
    );
    // Without --beacon a test emission is made as before.
    w.ok(&[
        "emit", "--game", "ruche-or", "--price", "2", "--seed", SEED, "--quiet",
    ]);
}
