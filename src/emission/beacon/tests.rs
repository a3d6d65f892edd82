use super::*;
use crate::block::id::EmissionKind;
use crate::emission::record::{Record, RECORD_FORMAT_BEACON};

/// Real rounds of quicknet, as tests/data/beacon/README.md cites them.
fn round_json(round: u64) -> String {
    let path = format!(
        "{}/tests/data/beacon/quicknet-round-{round}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

/// Round 123's signature, from the drand-verify crate's tests (0.6.2, src/verify.rs).
const ROUND_123_SIGNATURE: &str = "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92";

fn json_of(round: u64, randomness: &str, signature: &str) -> String {
    format!(r#"{{"round":{round},"randomness":"{randomness}","signature":"{signature}"}}"#)
}

#[test]
fn the_pinned_chain_is_quicknet_as_published() {
    // The values of the chain's /info (drand/drand internal/interop/verify_test.go).
    assert_eq!(QUICKNET_GENESIS, 1692803367);
    assert_eq!(QUICKNET_PERIOD, 3);
    assert_eq!(QUICKNET_PUBLIC_KEY.len(), 192);
    assert!(quicknet_key().is_ok());
    assert_eq!(round_time(1), Some(QUICKNET_GENESIS));
    assert_eq!(round_time_text(3).unwrap(), "2023-08-23T15:09:33Z");
    assert_eq!(round_time(0), None);
    assert_eq!(round_time(u64::MAX), None);
    // The first round strictly after a time.
    assert_eq!(first_round_after(0), 1);
    assert_eq!(first_round_after(QUICKNET_GENESIS - 1), 1);
    assert_eq!(first_round_after(QUICKNET_GENESIS), 2);
    assert_eq!(first_round_after(QUICKNET_GENESIS + 2), 2);
    assert_eq!(first_round_after(QUICKNET_GENESIS + 3), 3);
    for t in [QUICKNET_GENESIS, QUICKNET_GENESIS + 1, 1_800_000_000] {
        let r = first_round_after(t);
        assert!(round_time(r).unwrap() > t);
        assert!(r == 1 || round_time(r - 1).unwrap() <= t);
    }
}

#[test]
fn real_rounds_are_accepted() {
    for r in 1..=3 {
        let round = parse_round(round_json(r).as_bytes()).unwrap();
        assert_eq!(round.round, r);
        assert_eq!(round.signature.len(), 48);
        assert_eq!(
            round.randomness,
            <[u8; 32]>::from(Sha256::digest(&round.signature))
        );
    }
    let randomness = hex::encode(Sha256::digest(hex::decode(ROUND_123_SIGNATURE).unwrap()));
    parse_round(json_of(123, &randomness, ROUND_123_SIGNATURE).as_bytes()).unwrap();
}

#[test]
fn a_tampered_round_is_refused() {
    let real = parse_round(round_json(2).as_bytes()).unwrap();
    let randomness = hex::encode(real.randomness);
    let signature = hex::encode(&real.signature);
    // One bit of the signature: not a point, or not the signature.
    for bit in [0usize, 7, 100, 383] {
        let mut sig = real.signature.clone();
        sig[bit / 8] ^= 1 << (bit % 8);
        let err = parse_round(json_of(2, &randomness, &hex::encode(&sig)).as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("signature"), "bit {bit}: {err}");
    }
    // Another round number with this signature.
    for other in [1, 3, 2 + (1 << 32)] {
        let err = parse_round(json_of(other, &randomness, &signature).as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("signature of round {other}")),
            "{err}"
        );
    }
    // The randomness changed (the signature still good).
    let mut wrong = real.randomness;
    wrong[31] ^= 1;
    let err = parse_round(json_of(2, &hex::encode(wrong), &signature).as_bytes())
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not SHA-256 of the signature"), "{err}");
    // Round 1's signature and randomness under round 2's number.
    let one = parse_round(round_json(1).as_bytes()).unwrap();
    let err = parse_round(
        json_of(
            2,
            &hex::encode(one.randomness),
            &hex::encode(&one.signature),
        )
        .as_bytes(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("signature of round 2"), "{err}");
}

#[test]
fn a_malformed_round_file_is_refused() {
    let real = parse_round(round_json(1).as_bytes()).unwrap();
    let (r, s) = (hex::encode(real.randomness), hex::encode(&real.signature));
    for (bytes, says) in [
        (String::from("[]"), "not a drand round"),
        (
            format!(
                r#"{{"round":1,"randomness":"{r}","signature":"{s}","previous_signature":""}}"#
            ),
            "unknown field",
        ),
        (
            format!(r#"{{"round":1,"randomness":"{r}"}}"#),
            "missing field",
        ),
        (json_of(1, &r, &s[..94]), "94 characters"),
        (json_of(1, &r, &format!("{}zz", &s[..94])), "not hex digits"),
        (json_of(1, &r[..62], &s), "62 characters"),
        (json_of(0, &r, &s), "round 0"),
        (
            format!(r#"{{"round":-1,"randomness":"{r}","signature":"{s}"}}"#),
            "not a drand round",
        ),
    ] {
        let err = parse_round(bytes.as_bytes()).unwrap_err().to_string();
        assert!(err.contains(says), "{bytes}: {err}");
    }
}

#[test]
fn hkdf_is_rfc_5869_with_the_secret_as_key_and_the_signature_as_salt() {
    // RFC 5869, test case A.1: the first 32 bytes of its OKM.
    let round = Round {
        round: 1,
        signature: hex::decode("000102030405060708090a0b0c").unwrap(),
        randomness: [0; 32],
    };
    let ikm = [0x0b_u8; 22];
    let mut okm = [0u8; 32];
    hkdf::Hkdf::<Sha256>::new(Some(&round.signature), &ikm)
        .expand(&hex::decode("f0f1f2f3f4f5f6f7f8f9").unwrap(), &mut okm)
        .unwrap();
    assert_eq!(
        hex::encode(okm),
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
    );
    // derive_seed puts the secret, the signature and the info where the RFC's test does.
    let secret = [0x11u8; 32];
    let mut expected = [0u8; 32];
    hkdf::Hkdf::<Sha256>::new(Some(&round.signature), &secret)
        .expand(
            b"emission-factory beacon seed v1 ruche-or/2/e0003",
            &mut expected,
        )
        .unwrap();
    assert_eq!(derive_seed(&secret, &round, "ruche-or/2/e0003"), expected);
    assert_ne!(derive_seed(&secret, &round, "ruche-or/2/e0004"), expected);
}

fn record(round: u64, created: &str) -> Record {
    Record {
        format: RECORD_FORMAT_BEACON,
        id: "ruche-or/2/e0003".parse().unwrap(),
        game_name: "La ruche d'or".into(),
        game_definition_sha256: "00".repeat(32),
        game_definition_file: true,
        block_size: 100,
        blocks: None,
        kind: EmissionKind::Production,
        seed_sha256: "00".repeat(32),
        custody: None,
        beacon: Some(commit(round, created).unwrap()),
        public_key_sha256: "00".repeat(32),
        generator: "test".into(),
        generator_version: 1,
        created: created.into(),
        timestamp_authority_sha256: None,
    }
}

#[test]
fn the_ceremony_names_only_a_round_after_its_record() {
    // Round 3 is published at 2023-08-23T15:09:33Z.
    let c = commit(3, "2023-08-23T15:09:32Z").unwrap();
    assert_eq!(c.round, 3);
    assert_eq!(c.round_time, "2023-08-23T15:09:33Z");
    assert_eq!(c.chain_hash, QUICKNET_CHAIN_HASH);
    for created in ["2023-08-23T15:09:33Z", "2026-12-02T00:00:00Z"] {
        let err = commit(3, created).unwrap_err().to_string();
        assert!(err.contains("not after this ceremony's record"), "{err}");
        assert!(err.contains("Nothing was written"), "{err}");
    }
    assert!(commit(0, "2023-01-01T00:00:00Z").is_err());
    assert!(commit(u64::MAX, "2023-01-01T00:00:00Z").is_err());
    assert_eq!(
        parse_time("2023-08-23T15:09:33Z").unwrap(),
        round_time(3).unwrap()
    );
    assert!(parse_time("tomorrow").is_err());
}

#[test]
fn the_seed_of_a_beacon_record_needs_its_round() {
    let path = Path::new("emission.json");
    let secret = [7u8; 32];
    let three = parse_round(round_json(3).as_bytes()).unwrap();
    let two = parse_round(round_json(2).as_bytes()).unwrap();
    let rec = record(3, "2023-08-23T15:00:00Z");
    // The round the record names: the derived seed, not the secret.
    let seed = block_seed(&rec, path, &secret, Some(&three)).unwrap();
    assert_eq!(seed, derive_seed(&secret, &three, "ruche-or/2/e0003"));
    assert_ne!(seed, secret);
    // Another round, no round.
    let err = block_seed(&rec, path, &secret, Some(&two))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the file is round 2") && err.contains("names round 3"),
        "{err}"
    );
    let err = block_seed(&rec, path, &secret, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("give that round's JSON with --beacon"),
        "{err}"
    );
    // A round published before the record was made (a record altered after the ceremony, or
    // made by hand): refused.
    let mut late = rec.clone();
    late.created = "2023-08-23T15:09:33Z".into();
    let err = block_seed(&late, path, &secret, Some(&three))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not after the emission's record was made"),
        "{err}"
    );
    // Another chain, a round time that is not the round's.
    let mut other = rec.clone();
    other.beacon.as_mut().unwrap().chain_hash = "11".repeat(32);
    let err = block_seed(&other, path, &secret, Some(&three))
        .unwrap_err()
        .to_string();
    assert!(err.contains("knows only drand quicknet"), "{err}");
    let mut other = rec.clone();
    other.beacon.as_mut().unwrap().round_time = "2030-01-01T00:00:00Z".into();
    let err = block_seed(&other, path, &secret, Some(&three))
        .unwrap_err()
        .to_string();
    assert!(err.contains("the record was altered"), "{err}");
    // A record with no round: the secret itself, and a round given is refused.
    let mut plain = rec.clone();
    plain.beacon = None;
    assert_eq!(block_seed(&plain, path, &secret, None).unwrap(), secret);
    let err = block_seed(&plain, path, &secret, Some(&three))
        .unwrap_err()
        .to_string();
    assert!(err.contains("names no beacon round"), "{err}");
}

#[test]
fn a_record_names_a_round_exactly_when_its_format_is_2() {
    use crate::emission::record::{parse, RECORD_FORMAT};
    let path = Path::new("emission.json");
    let rec = record(3, "2023-08-23T15:00:00Z");
    assert_eq!(parse(&rec.to_bytes(), path).unwrap(), rec);
    let mut one = rec.clone();
    one.format = RECORD_FORMAT;
    let err = parse(&one.to_bytes(), path).unwrap_err().to_string();
    assert!(err.contains("format 1 cannot name a beacon round"), "{err}");
    let mut unnamed = rec.clone();
    unnamed.beacon = None;
    let err = parse(&unnamed.to_bytes(), path).unwrap_err().to_string();
    assert!(err.contains("format 2 must name a beacon round"), "{err}");
    // A format-1 record reads as before: no `beacon` key in its bytes.
    unnamed.format = RECORD_FORMAT;
    assert!(!String::from_utf8(unnamed.to_bytes())
        .unwrap()
        .contains("beacon"));
    assert_eq!(parse(&unnamed.to_bytes(), path).unwrap(), unnamed);
    let mut later = rec.clone();
    later.format = 3;
    let err = parse(&later.to_bytes(), path).unwrap_err().to_string();
    assert!(err.contains("not one this program reads"), "{err}");
}

#[test]
fn a_round_zero_and_a_short_field_are_typed_and_named() {
    let real = parse_round(round_json(1).as_bytes()).unwrap();
    let (r, s) = (hex::encode(real.randomness), hex::encode(&real.signature));
    let err = parse_round(json_of(0, &r, &s).as_bytes()).unwrap_err();
    assert!(matches!(err, BeaconError::RoundZero), "{err:?}");
    assert_eq!(
        err.to_string(),
        "round 0 does not exist: quicknet's rounds are numbered from 1"
    );
    let err = parse_round(json_of(1, &r[..62], &s).as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            BeaconError::HexLength {
                field: "randomness",
                len: 62,
                expected: 64
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "randomness: 62 characters, where 64 hex digits are expected"
    );
}

/// An error of the record's, held by [`BeaconError::Record`], is said with its causes in the
/// sentence, as the program prints an error (anyhow's `{:#}`): a verification's problem reads
/// only the sentence.
#[test]
fn a_record_error_is_said_with_its_causes() {
    let cause = || {
        crate::emission::record::RecordError::Fs(crate::fs::FsError::Io {
            action: "open",
            path: "e0001/emission.json".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        })
    };
    let said = crate::problem::chained(&cause());
    assert!(std::error::Error::source(&cause()).is_some(), "{said}");
    let err = BeaconError::record(cause());
    assert_eq!(
        err.to_string(),
        "cannot open e0001/emission.json: permission denied"
    );
    assert_eq!(err.to_string(), said);
    assert!(std::error::Error::source(&err).is_none());
    // A file refused: its name, then what is wrong, in one sentence with no cause after it.
    let err = read_round(Path::new("/nonexistent/round.json")).unwrap_err();
    assert!(matches!(err, BeaconError::ReadRound { .. }), "{err:?}");
    assert!(std::error::Error::source(&err).is_none());
    assert!(
        err.to_string()
            .starts_with("--beacon /nonexistent/round.json: "),
        "{err}"
    );
}
