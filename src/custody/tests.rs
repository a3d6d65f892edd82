//! Custody through the library: split, write, rebuild, and every way a rebuild must fail.

use super::shamir::subsets;
use super::*;
use age::secrecy::ExposeSecret;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;

const EMISSION: &str = "ruche-or/2/e0003";

fn id(text: &str) -> EmissionId {
    text.parse().unwrap()
}

/// Custodians: identity files (as `age-keygen` writes them) and their public keys.
struct Custodians {
    identities: Vec<PathBuf>,
    recipients: Vec<Recipient>,
}

fn custodians(dir: &Path, n: usize, tag: &str) -> Custodians {
    let mut identities = Vec::new();
    let mut recipients = Vec::new();
    for i in 1..=n {
        let identity = age::x25519::Identity::generate();
        let public = identity.to_public();
        let path = dir.join(format!("{tag}-custodian-{i}.key"));
        let text = format!(
            "# created: 2025-01-01T00:00:00Z\n# public key: {public}\n{}\n",
            identity.to_string().expose_secret()
        );
        std::fs::write(&path, text).unwrap();
        // As age-keygen makes it: a secret file, 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        identities.push(path);
        recipients.push(public);
    }
    Custodians {
        identities,
        recipients,
    }
}

/// Writes a share or identity file as they are made (age-keygen, `seed`): 0600, since a secret
/// file others may read is refused.
fn write_private(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    std::fs::write(path, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// A share set of `k` of `n` written under `dir/tag`.
struct Set {
    seed: SecretSeed,
    info: ShareSetInfo,
    shares: Vec<PathBuf>,
    custodians: Custodians,
}

fn make_set(dir: &Path, tag: &str, emission: &str, k: u8, n: usize) -> Set {
    let custodians = custodians(dir, n, tag);
    let seed = SecretSeed::fresh().unwrap();
    let info = write_share_set(
        &seed,
        &id(emission),
        k,
        &custodians.recipients,
        &dir.join(tag),
    )
    .unwrap();
    let shares = info.files.iter().map(|f| f.path.clone()).collect();
    Set {
        seed,
        info,
        shares,
        custodians,
    }
}

impl Set {
    /// Rebuilds from the shares of these (0-based) custodians, with their identities.
    fn rebuild(&self, who: &[usize]) -> Result<(SecretSeed, ShareSetInfo), CustodyError> {
        let shares: Vec<PathBuf> = who.iter().map(|&i| self.shares[i].clone()).collect();
        let ids: Vec<PathBuf> = who
            .iter()
            .map(|&i| self.custodians.identities[i].clone())
            .collect();
        rebuild_seed(&shares, &ids, &id(EMISSION))
    }
}

/// The error's message names `file` and holds nothing secret of `set`.
fn check_message(err: &CustodyError, file: &Path, set: &Set) -> String {
    let text = format!("{err} {err:?}");
    assert!(
        text.contains(&file.display().to_string()),
        "the message should name {}: {text}",
        file.display()
    );
    assert_clean(&text, set);
    text
}

/// No seed, share or identity of `set` in `text`.
fn assert_clean(text: &str, set: &Set) {
    assert!(!text.contains(&hex::encode(set.seed.expose())), "{text}");
    for id in &set.custodians.identities {
        let key = std::fs::read_to_string(id).unwrap();
        let secret = key.lines().last().unwrap();
        assert!(!text.contains(secret), "{text}");
        assert!(!text.to_lowercase().contains(&secret[15..].to_lowercase()));
    }
}

fn flip(path: &Path, at: usize, to: u8) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] = to;
    bytes
}

#[test]
fn two_of_three_and_three_of_five_rebuild_from_every_subset_of_k_and_from_all_n() {
    let dir = tempfile::tempdir().unwrap();
    for (k, n) in [(2u8, 3usize), (3, 5)] {
        let set = make_set(dir.path(), &format!("{k}of{n}"), EMISSION, k, n);
        assert_eq!(set.info.seed_sha256, set.seed.commitment());
        let all: Vec<usize> = (0..n).collect();
        for size in usize::from(k)..=n {
            for who in subsets(&all, size) {
                let (seed, info) = set.rebuild(&who).unwrap();
                assert_eq!(seed.expose(), set.seed.expose(), "{k} of {n}: {who:?}");
                assert_eq!(info.seed_sha256, set.info.seed_sha256);
                assert_eq!(info.share_set, set.info.share_set);
                assert_eq!((info.threshold, info.shares), (k, n as u8));
                assert_eq!(info.files.len(), size);
                for (file, &i) in info.files.iter().zip(&who) {
                    assert_eq!(file.index as usize, i + 1);
                    assert_eq!(file.recipient, set.custodians.recipients[i].to_string());
                    assert_eq!(file.file_sha256, set.info.files[i].file_sha256);
                }
            }
        }
        // The identities may come in any order, and extra ones do no harm.
        let mut ids = set.custodians.identities.clone();
        ids.reverse();
        let shares = [
            set.shares[n - 1].clone(),
            set.shares[0].clone(),
            set.shares[1].clone(),
        ];
        let (seed, _) =
            rebuild_seed(&shares[..usize::from(k).max(2)], &ids, &id(EMISSION)).unwrap();
        assert_eq!(seed.expose(), set.seed.expose());
    }
}

#[test]
fn k_minus_one_shares_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (k, n) in [(2u8, 3usize), (3, 5)] {
        let set = make_set(dir.path(), &format!("{k}of{n}"), EMISSION, k, n);
        let all: Vec<usize> = (0..n).collect();
        for who in subsets(&all, usize::from(k) - 1) {
            let err = set.rebuild(&who).map(|_| ()).unwrap_err();
            assert!(
                matches!(err, CustodyError::TooFewShares { have, need, .. } if have == usize::from(k) - 1 && need == k),
                "{err}"
            );
            let text = err.to_string();
            assert!(text.contains(&format!("{need} needed", need = k)), "{text}");
            assert_clean(&text, &set);
        }
    }
}

#[test]
fn the_same_share_given_twice_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let set = make_set(dir.path(), "dup", EMISSION, 2, 3);
    let copy = dir.path().join("copy-of-share-1.age");
    std::fs::copy(&set.shares[0], &copy).unwrap();
    let ids = &set.custodians.identities;
    for twice in [set.shares[0].clone(), copy.clone()] {
        let err = rebuild_seed(&[set.shares[0].clone(), twice], ids, &id(EMISSION))
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(err, CustodyError::TooFewShares { have: 1, .. }),
            "{err}"
        );
    }
    let (seed, info) = rebuild_seed(
        &[set.shares[0].clone(), copy, set.shares[1].clone()],
        ids,
        &id(EMISSION),
    )
    .unwrap();
    assert_eq!(seed.expose(), set.seed.expose());
    assert_eq!(info.files.len(), 2);
}

#[test]
fn shares_of_another_emission_or_another_seed_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let a = make_set(dir.path(), "a", EMISSION, 2, 3);
    // Same emission id, another seed (the command run twice).
    let b = make_set(dir.path(), "b", EMISSION, 2, 3);
    let ids: Vec<PathBuf> = [&a.custodians.identities[..], &b.custodians.identities[..]].concat();
    let err = rebuild_seed(
        &[a.shares[0].clone(), b.shares[1].clone()],
        &ids,
        &id(EMISSION),
    )
    .map(|_| ())
    .unwrap_err();
    assert!(
        matches!(
            err,
            CustodyError::MixedSets {
                what: "share set id",
                ..
            }
        ),
        "{err}"
    );
    check_message(&err, &b.shares[1], &a);
    assert_clean(&err.to_string(), &b);

    // Another emission id.
    let c = make_set(dir.path(), "c", "ruche-or/2/e0004", 2, 3);
    let ids: Vec<PathBuf> = [&a.custodians.identities[..], &c.custodians.identities[..]].concat();
    let err = rebuild_seed(
        &[a.shares[0].clone(), c.shares[1].clone()],
        &ids,
        &id(EMISSION),
    )
    .map(|_| ())
    .unwrap_err();
    assert!(matches!(err, CustodyError::WrongEmission { .. }), "{err}");
    let text = check_message(&err, &c.shares[1], &c);
    assert!(
        text.contains("ruche-or/2/e0004") && text.contains(EMISSION),
        "{text}"
    );
    // A whole set, asked for the wrong emission.
    let err = a.rebuild(&[0, 1]).map(|_| ());
    assert!(err.is_ok());
    let err = rebuild_seed(
        &a.shares[..2],
        &a.custodians.identities,
        &id("ruche-or/3/e0003"),
    )
    .map(|_| ())
    .unwrap_err();
    check_message(&err, &a.shares[0], &a);
}

#[test]
fn a_wrong_identity_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let set = make_set(dir.path(), "w", EMISSION, 2, 3);
    let ids = [
        set.custodians.identities[0].clone(),
        set.custodians.identities[2].clone(),
    ];
    let err = rebuild_seed(&set.shares[..2], &ids, &id(EMISSION))
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, CustodyError::NoMatchingIdentity(_)), "{err}");
    check_message(&err, &set.shares[1], &set);
}

#[test]
fn every_flipped_byte_and_every_truncation_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let set = make_set(dir.path(), "x", EMISSION, 2, 3);
    let original = std::fs::read(&set.shares[1]).unwrap();
    assert!(original.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----\n"));
    let bad = dir.path().join("bad.age");
    let try_bytes = |bytes: &[u8]| -> Option<CustodyError> {
        write_private(&bad, bytes).unwrap();
        rebuild_seed(
            &[set.shares[0].clone(), bad.clone()],
            &set.custodians.identities[..2],
            &id(EMISSION),
        )
        .err()
    };
    // Armored: every character of the base64 body changed to another base64 character.
    for at in 0..original.len() {
        let c = original[at];
        if !c.is_ascii_alphanumeric() || at < 35 || at >= original.len() - 33 {
            continue;
        }
        let to = if c == b'A' { b'B' } else { b'A' };
        let err = try_bytes(&flip(&set.shares[1], at, to))
            .unwrap_or_else(|| panic!("a flipped byte at {at} was accepted"));
        check_message(&err, &bad, &set);
    }
    // Binary age: every bit-flip of every byte of the decoded file.
    let mut binary = Vec::new();
    age::armor::ArmoredReader::new(&original[..])
        .read_to_end(&mut binary)
        .unwrap();
    assert!(binary.starts_with(b"age-encryption.org/v1\n"));
    assert!(try_bytes(&binary).is_none(), "the binary form is read too");
    for at in 0..binary.len() {
        let mut bytes = binary.clone();
        bytes[at] ^= 0x01;
        let err = try_bytes(&bytes).unwrap_or_else(|| panic!("binary flip at {at} accepted"));
        check_message(&err, &bad, &set);
    }
    // Truncated anywhere, armored or binary.
    // (Only the armor's last line end may go: the file is whole without it.)
    assert!(try_bytes(&original[..original.len() - 1]).is_none());
    for cut in 0..original.len() - 1 {
        let err = try_bytes(&original[..cut]).expect("a truncated file is refused");
        check_message(&err, &bad, &set);
    }
    for cut in 0..binary.len() {
        let err = try_bytes(&binary[..cut]).expect("a truncated file is refused");
        check_message(&err, &bad, &set);
    }
}

/// Encrypts a hand-made payload to custodian `i` of `set`.
fn forge(set: &Set, i: usize, edit: impl FnOnce(&mut Payload), path: &Path) {
    let opened = share_file::open(
        &set.shares[i],
        &share_file::read_identities(
            &set.custodians.identities,
            share_file::Exposure::Refuse,
            &mut Vec::new(),
        )
        .unwrap(),
        share_file::Exposure::Refuse,
        &mut Vec::new(),
    )
    .map_err(|e| e.to_string())
    .unwrap();
    let mut payload = Payload {
        format: FORMAT.to_string(),
        emission: opened.emission.clone(),
        share_set: hex::encode(opened.share_set),
        threshold: opened.threshold,
        shares: opened.shares,
        index: opened.share.index(),
        recipient: opened.recipient.clone(),
        seed_sha256: hex::encode(opened.commitment),
        share: Zeroizing::new(hex::encode(opened.share.bytes())),
    };
    edit(&mut payload);
    let bytes = share_file::seal(&payload, &set.custodians.recipients[i]).unwrap();
    write_private(path, bytes).unwrap();
}

#[test]
fn forged_and_malformed_payloads_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let set = make_set(dir.path(), "f", EMISSION, 2, 3);
    let forged = dir.path().join("forged.age");
    let ids = &set.custodians.identities;
    let rebuild = |with: &Path| {
        rebuild_seed(
            &[set.shares[0].clone(), with.to_path_buf()],
            ids,
            &id(EMISSION),
        )
        .map(|_| ())
        .unwrap_err()
    };
    // Unchanged: accepted (the forge is faithful).
    forge(&set, 1, |_| {}, &forged);
    assert!(rebuild_seed(&[set.shares[0].clone(), forged.clone()], ids, &id(EMISSION)).is_ok());

    // Everything right but the share's bytes: only the commitment can tell.
    forge(
        &set,
        1,
        |p| p.share = Zeroizing::new("00".repeat(32)),
        &forged,
    );
    let err = rebuild(&forged);
    assert!(matches!(err, CustodyError::Commitment { .. }), "{err}");
    check_message(&err, &forged, &set);

    // Another index with the same bytes as share 1: a conflict.
    forge(&set, 1, |p| p.index = 1, &forged);
    let err = rebuild(&forged);
    assert!(
        matches!(err, CustodyError::ConflictingShares { index: 1, .. }),
        "{err}"
    );
    check_message(&err, &forged, &set);

    // Made for someone else than the key that opens it.
    let other = set.custodians.recipients[2].to_string();
    forge(&set, 1, |p| p.recipient = other, &forged);
    let err = rebuild(&forged);
    assert!(matches!(err, CustodyError::WrongRecipient { .. }), "{err}");
    check_message(&err, &forged, &set);

    // Another k, a future format, indexes out of range, bad hex.
    type Edit = Box<dyn FnOnce(&mut Payload)>;
    let edits: Vec<(&str, Edit)> = vec![
        ("k of n", Box::new(|p: &mut Payload| p.threshold = 3)),
        (
            "format",
            Box::new(|p: &mut Payload| p.format = "emission-factory-seed-share/2".into()),
        ),
        ("out of range", Box::new(|p: &mut Payload| p.index = 4)),
        ("out of range", Box::new(|p: &mut Payload| p.index = 0)),
        ("out of range", Box::new(|p: &mut Payload| p.threshold = 1)),
        (
            "share is not",
            Box::new(|p: &mut Payload| p.share = Zeroizing::new("zz".repeat(32))),
        ),
        (
            "share is not",
            Box::new(|p: &mut Payload| p.share = Zeroizing::new("AB".repeat(32))),
        ),
        (
            "seed_sha256 is not",
            Box::new(|p: &mut Payload| {
                p.seed_sha256.pop();
            }),
        ),
        (
            "share_set is not",
            Box::new(|p: &mut Payload| p.share_set.push('0')),
        ),
    ];
    for (needle, edit) in edits {
        forge(&set, 1, edit, &forged);
        let err = rebuild(&forged);
        let text = check_message(&err, &forged, &set);
        assert!(text.contains(needle), "expected '{needle}': {text}");
    }

    // Not our JSON at all, or JSON with an extra field: the message quotes none of it.
    let share_hex = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2";
    for text in [
        format!("{{\"format\": \"{FORMAT}\", \"share\": 7, \"note\": \"{share_hex}\"}}"),
        format!("{{\"format\": \"{FORMAT}\", \"share\": [\"{share_hex}\"]}}"),
        format!("not json {share_hex}"),
    ] {
        let bytes = age::encrypt(&set.custodians.recipients[1], text.as_bytes()).unwrap();
        write_private(&forged, bytes).unwrap();
        let err = rebuild(&forged);
        assert!(matches!(err, CustodyError::Payload { .. }), "{err}");
        let message = check_message(&err, &forged, &set);
        assert!(!message.contains(share_hex), "{message}");
    }
}

#[test]
fn a_reshare_keeps_the_seed_and_its_shares_do_not_mix_with_the_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let old = make_set(dir.path(), "old", EMISSION, 2, 3);
    let (seed, before) = old.rebuild(&[0, 2]).unwrap();
    let new_custodians = custodians(dir.path(), 4, "new");
    let info = write_share_set(
        &seed,
        &id(EMISSION),
        3,
        &new_custodians.recipients,
        &dir.path().join("new"),
    )
    .unwrap();
    assert_eq!(info.seed_sha256, before.seed_sha256);
    assert_ne!(info.share_set, before.share_set);
    let new_shares: Vec<PathBuf> = info.files.iter().map(|f| f.path.clone()).collect();
    for who in subsets(&[0usize, 1, 2, 3], 3) {
        let shares: Vec<PathBuf> = who.iter().map(|&i| new_shares[i].clone()).collect();
        let (again, _) = rebuild_seed(&shares, &new_custodians.identities, &id(EMISSION)).unwrap();
        assert_eq!(again.expose(), old.seed.expose());
    }
    let ids: Vec<PathBuf> = [
        &old.custodians.identities[..],
        &new_custodians.identities[..],
    ]
    .concat();
    let err = rebuild_seed(
        &[
            new_shares[0].clone(),
            new_shares[1].clone(),
            old.shares[1].clone(),
        ],
        &ids,
        &id(EMISSION),
    )
    .map(|_| ())
    .unwrap_err();
    assert!(matches!(err, CustodyError::MixedSets { .. }), "{err}");
    check_message(&err, &old.shares[1], &old);
}

#[test]
fn writing_refuses_bad_parameters_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let c = custodians(dir.path(), 3, "p");
    let seed = SecretSeed::fresh().unwrap();
    let out = dir.path().join("out");
    for k in [0u8, 1, 4] {
        let err = write_share_set(&seed, &id(EMISSION), k, &c.recipients, &out).unwrap_err();
        assert!(matches!(err, CustodyError::Threshold { .. }), "{err}");
    }
    let twice = [
        c.recipients[0].clone(),
        c.recipients[1].clone(),
        c.recipients[0].clone(),
    ];
    let err = write_share_set(&seed, &id(EMISSION), 2, &twice, &out).unwrap_err();
    assert!(matches!(err, CustodyError::DuplicateRecipient(_)), "{err}");
    for bad in [
        "",
        "../x/2/e0001",
        "/abs/2/e0001",
        "Ruche/2/e0001",
        "a b/2/e0001",
    ] {
        // Not an emission: such a text never reaches write_share_set, which takes an
        // EmissionId (the share files' names are made from one).
        assert!(bad.parse::<EmissionId>().is_err(), "{bad}");
    }
    let many: Vec<Recipient> = (0..256)
        .map(|_| age::x25519::Identity::generate().to_public())
        .collect();
    let err = write_share_set(&seed, &id(EMISSION), 2, &many, &out).unwrap_err();
    assert!(matches!(err, CustodyError::TooManyRecipients(256)), "{err}");
    assert!(!out.exists(), "nothing is written on bad parameters");

    let info = write_share_set(&seed, &id(EMISSION), 2, &c.recipients, &out).unwrap();
    let names: Vec<String> = info
        .files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "ruche-or-2-e0003.share-1-of-3.age",
            "ruche-or-2-e0003.share-2-of-3.age",
            "ruche-or-2-e0003.share-3-of-3.age"
        ]
    );
    for f in &info.files {
        let mode = std::fs::metadata(&f.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", f.path.display());
    }
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let before: Vec<Vec<u8>> = info
        .files
        .iter()
        .map(|f| std::fs::read(&f.path).unwrap())
        .collect();
    let err = write_share_set(&seed, &id(EMISSION), 2, &c.recipients, &out).unwrap_err();
    assert!(matches!(err, CustodyError::Exists(_)), "{err}");
    // Only one file of the set is in the way: still nothing is written.
    std::fs::remove_file(&info.files[0].path).unwrap();
    std::fs::remove_file(&info.files[1].path).unwrap();
    let err = write_share_set(&seed, &id(EMISSION), 2, &c.recipients, &out).unwrap_err();
    assert!(matches!(err, CustodyError::Exists(_)), "{err}");
    assert!(!info.files[0].path.exists() && !info.files[1].path.exists());
    assert_eq!(std::fs::read(&info.files[2].path).unwrap(), before[2]);
}

#[test]
fn identity_and_recipient_files_are_read_strictly_and_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let set = make_set(dir.path(), "i", EMISSION, 2, 3);
    let good = std::fs::read_to_string(&set.custodians.identities[0]).unwrap();
    let secret = good.lines().last().unwrap().to_string();
    // A damaged key (one character changed) on line 3.
    let mut damaged = secret.clone();
    damaged.replace_range(20..21, if &secret[20..21] == "Q" { "P" } else { "Q" });
    let bad = dir.path().join("bad.key");
    write_private(&bad, good.replace(&secret, &damaged)).unwrap();
    let err = rebuild_seed(&set.shares[..2], std::slice::from_ref(&bad), &id(EMISSION))
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(err, CustodyError::IdentityLine { line: 3, .. }),
        "{err}"
    );
    let text = check_message(&err, &bad, &set);
    assert!(!text.contains(&damaged[16..]), "{text}");
    // Comments only.
    write_private(&bad, "# nothing here\n\n").unwrap();
    let err = rebuild_seed(&set.shares[..2], std::slice::from_ref(&bad), &id(EMISSION))
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, CustodyError::NoIdentity(_)), "{err}");
    // Several identities in one file, CRLF line ends.
    let both = format!(
        "{}\r\n{}\r\n",
        std::fs::read_to_string(&set.custodians.identities[0])
            .unwrap()
            .lines()
            .last()
            .unwrap(),
        std::fs::read_to_string(&set.custodians.identities[1])
            .unwrap()
            .lines()
            .last()
            .unwrap()
    );
    write_private(&bad, both).unwrap();
    let (seed, _) =
        rebuild_seed(&set.shares[..2], std::slice::from_ref(&bad), &id(EMISSION)).unwrap();
    assert_eq!(seed.expose(), set.seed.expose());
    // No identity, no share.
    assert!(matches!(
        rebuild_seed(&set.shares[..2], &[], &id(EMISSION)).map(|_| ()),
        Err(CustodyError::NoIdentities)
    ));
    assert!(matches!(
        rebuild_seed(&[], &set.custodians.identities, &id(EMISSION)).map(|_| ()),
        Err(CustodyError::NoShares)
    ));
    // A share file that is not there.
    let missing = dir.path().join("missing.age");
    let err = rebuild_seed(
        std::slice::from_ref(&missing),
        &set.custodians.identities,
        &id(EMISSION),
    )
    .map(|_| ())
    .unwrap_err();
    check_message(&err, &missing, &set);

    // Recipients files: comments, blanks, and a bad line named by number.
    let list = dir.path().join("recipients.txt");
    let keys: Vec<String> = set
        .custodians
        .recipients
        .iter()
        .map(|r| r.to_string())
        .collect();
    std::fs::write(
        &list,
        format!("# custodians\n{}\n\n  {}  \n", keys[0], keys[1]),
    )
    .unwrap();
    let read: Vec<String> = read_recipients_file(&list)
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_eq!(read, keys[..2]);
    std::fs::write(&list, format!("{}\nage1nope\n", keys[0])).unwrap();
    let err = read_recipients_file(&list).unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("age1nope"), "{err}");
    // An identity pasted where a public key belongs is refused without being echoed.
    let err = parse_recipient(&secret, "--recipient").unwrap_err();
    assert!(
        matches!(err, CustodyError::SecretAsRecipient { .. }),
        "{err}"
    );
    assert_clean(&format!("{err} {err:?}"), &set);
}

#[test]
fn debug_and_records_show_nothing_secret() {
    let dir = tempfile::tempdir().unwrap();
    let set = make_set(dir.path(), "d", EMISSION, 2, 3);
    assert_eq!(format!("{:?}", set.seed), "SecretSeed(<secret>)");
    let (_, info) = set.rebuild(&[0, 1]).unwrap();
    let json = serde_json::to_string(&info).unwrap();
    assert_clean(&json, &set);
    assert_clean(&format!("{info:?}"), &set);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["emission"], EMISSION);
    assert_eq!(value["threshold"], 2);
    assert_eq!(value["shares"], 3);
    assert_eq!(value["seed_sha256"], hex::encode(set.seed.commitment()));
    assert_eq!(
        value["files"][0]["file"],
        "ruche-or-2-e0003.share-1-of-3.age"
    );
    assert_eq!(
        value["files"][1]["recipient"],
        set.custodians.recipients[1].to_string()
    );
    // The share file, outside its encryption, is the age armor and nothing else.
    let text = std::fs::read_to_string(&set.shares[0]).unwrap();
    assert!(text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----\n"));
    assert!(text.ends_with("-----END AGE ENCRYPTED FILE-----\n"));
    for word in [EMISSION, "share", "age1"] {
        let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
        assert!(!body.contains(word), "{word} in the clear");
    }
}
