//! `seed` through the real binary: k of n share sets, every subset of k rebuilds the same
//! seed, every bad set fails with a clear error and no output, reshare, and interop with
//! Debian's `age`/`age-keygen` and libgfshare's `gfcombine`.

use crate::common;
use age::secrecy::ExposeSecret;
use common::*;
use emission_factory::custody::{rebuild_seed, share_file_name};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EMISSION: &str = "ruche-or/2/e0003";

/// Custodians' identity files (relative to the workdir) and public keys.
struct Custodians {
    identities: Vec<String>,
    recipients: Vec<String>,
}

/// `n` custodians made with the age crate, identity files as `age-keygen` writes them.
fn custodians(w: &Workdir, n: usize, tag: &str) -> Custodians {
    // The emission's signing key: the ceremony signs the emission's record with it.
    if !w.path("keys/signing-key.pem").exists() {
        fixed_test_key(w);
    }
    let mut identities = Vec::new();
    let mut recipients = Vec::new();
    for i in 1..=n {
        let identity = age::x25519::Identity::generate();
        let public = identity.to_public().to_string();
        let name = format!("{tag}-{i}.key");
        std::fs::write(
            w.path(&name),
            format!(
                "# public key: {public}\n{}\n",
                identity.to_string().expose_secret()
            ),
        )
        .unwrap();
        // As age-keygen makes it: a secret file, 0600.
        std::fs::set_permissions(w.path(&name), std::fs::Permissions::from_mode(0o600)).unwrap();
        identities.push(name);
        recipients.push(public);
    }
    Custodians {
        identities,
        recipients,
    }
}

/// Writes a share file as `seed` makes them, 0600: one that others may read is refused.
fn write_private(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// The share files of a k-of-n set of `emission` under `out`, relative to the workdir.
fn share_paths(out: &str, emission: &str, n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            format!(
                "{out}/{}",
                share_file_name(&emission.parse().unwrap(), i as u8, n as u8)
            )
        })
        .collect()
}

/// Runs `seed` for ruche-or 2 € (emission `number`), k of the custodians, into `out`.
fn seed(w: &Workdir, c: &Custodians, k: usize, out: &str, number: u32) -> Output {
    seed_in(w, c, k, out, number, "emissions")
}

/// As [`seed`], with the emission's record in another emissions folder (a second ceremony of
/// the same emission number elsewhere: one folder refuses a second seed).
fn seed_in(
    w: &Workdir,
    c: &Custodians,
    k: usize,
    out: &str,
    number: u32,
    emissions: &str,
) -> Output {
    let args = seed_args(c, k, out, number, emissions);
    w.ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The arguments of [`seed_in`]'s `seed` run.
fn seed_args(c: &Custodians, k: usize, out: &str, number: u32, emissions: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "seed",
        "--emissions",
        emissions,
        "--signing-key",
        "keys/signing-key.pem",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        &number.to_string(),
        "--shares-needed",
        &k.to_string(),
        "--out",
        out,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    for r in &c.recipients {
        args.extend(["--recipient".to_string(), r.clone()]);
    }
    args
}

/// Runs `seed --check` (emission 3) with these shares and identities.
fn check(w: &Workdir, shares: &[&str], identities: &[&str], code: i32) -> Output {
    let mut args = vec![
        "seed",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        "3",
        "--check",
    ];
    for s in shares {
        args.extend(["--share", s]);
    }
    for i in identities {
        args.extend(["--identity", i]);
    }
    w.run_expect(&args, code)
}

/// The `seed_sha256:` line of an output.
fn commitment(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("seed_sha256: "))
        .unwrap_or_else(|| panic!("no seed_sha256 in:\n{}", text(out)))
        .to_string()
}

/// Exit 2, nothing on stdout, and stderr names `file` and says `needle`.
fn fails_clearly(out: &Output, file: &str, needle: &str) {
    assert!(
        out.stdout.is_empty(),
        "stdout should be empty:\n{}",
        text(out)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(file), "stderr should name {file}:\n{err}");
    assert!(err.contains(needle), "stderr should say '{needle}':\n{err}");
}

/// The `share <i> of <n>: FILE  for KEY` lines of an output.
fn share_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.strip_prefix("share ")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(str::to_string)
        .collect()
}

/// Every subset of `items` of size `k`.
fn subsets<T: Clone>(items: &[T], k: usize) -> Vec<Vec<T>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for (i, first) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], k - 1) {
            rest.insert(0, first.clone());
            out.push(rest);
        }
    }
    out
}

/// The seed, rebuilt through the library from the first k shares.
fn seed_hex(w: &Workdir, shares: &[String], c: &Custodians) -> String {
    let shares: Vec<PathBuf> = shares.iter().map(|s| w.path(s)).collect();
    let ids: Vec<PathBuf> = c.identities.iter().map(|s| w.path(s)).collect();
    let (seed, _) = rebuild_seed(&shares, &ids, &EMISSION.parse().unwrap()).unwrap();
    hex::encode(seed.expose())
}

/// The share bytes (hex) inside each share file.
fn share_hexes(w: &Workdir, shares: &[String], c: &Custodians) -> Vec<String> {
    shares
        .iter()
        .zip(&c.identities)
        .map(|(share, id)| {
            let key = std::fs::read_to_string(w.path(id)).unwrap();
            let identity: age::x25519::Identity = key.lines().last().unwrap().parse().unwrap();
            let plain = age::decrypt(&identity, &read(&w.path(share))).unwrap();
            let payload: serde_json::Value = serde_json::from_slice(&plain).unwrap();
            payload["share"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn every_subset_of_k_shares_and_all_n_rebuild_the_same_seed() {
    for (k, n) in [(2usize, 3usize), (3, 5)] {
        let w = Workdir::new();
        let c = custodians(&w, n, "c");
        let made = seed(&w, &c, k, "shares", 3);
        let committed = commitment(&made);
        let shares = share_paths("shares", EMISSION, n);
        let secret = seed_hex(&w, &shares, &c);
        let all: Vec<usize> = (0..n).collect();
        for size in k..=n {
            for who in subsets(&all, size) {
                let s: Vec<&str> = who.iter().map(|&i| shares[i].as_str()).collect();
                let ids: Vec<&str> = who.iter().map(|&i| c.identities[i].as_str()).collect();
                let out = check(&w, &s, &ids, 0);
                assert_eq!(commitment(&out), committed, "{k} of {n}: {who:?}");
                assert!(!text(&out).contains(&secret));
                // The library rebuilds the very same bytes.
                let paths: Vec<String> = s.iter().map(|p| p.to_string()).collect();
                let again = seed_hex(&w, &paths, &c);
                assert_eq!(again, secret, "{k} of {n}: {who:?}");
            }
        }
        let hashed = {
            use sha2::{Digest, Sha256};
            let mut bytes = [0u8; 32];
            hex::decode_to_slice(&secret, &mut bytes).unwrap();
            hex::encode(Sha256::digest(bytes))
        };
        assert_eq!(hashed, committed, "seed_sha256 is SHA-256 of the seed");
    }
}

#[test]
fn k_minus_one_shares_fail_with_a_clear_error_and_no_output() {
    for (k, n) in [(2usize, 3usize), (3, 5)] {
        let w = Workdir::new();
        let c = custodians(&w, n, "c");
        seed(&w, &c, k, "shares", 3);
        let shares = share_paths("shares", EMISSION, n);
        let all: Vec<usize> = (0..n).collect();
        for who in subsets(&all, k - 1) {
            let s: Vec<&str> = who.iter().map(|&i| shares[i].as_str()).collect();
            let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
            let out = check(&w, &s, &ids, 2);
            fails_clearly(&out, EMISSION, &format!("{} needed", k));
        }
    }
}

#[test]
fn shares_of_another_emission_a_wrong_identity_or_a_damaged_file_fail_naming_the_file() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    seed(&w, &c, 2, "a", 3);
    let a = share_paths("a", EMISSION, 3);
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();

    // Another seed for the same emission (the ceremony run twice, in another folder).
    seed_in(&w, &c, 2, "b", 3, "elsewhere");
    let b = share_paths("b", EMISSION, 3);
    let out = check(&w, &[&a[0], &b[1]], &ids, 2);
    fails_clearly(&out, &b[1], "another share set");

    // Another emission.
    seed(&w, &c, 2, "e4", 4);
    let e4 = share_paths("e4", "ruche-or/2/e0004", 3);
    let out = check(&w, &[&a[0], &e4[1]], &ids, 2);
    fails_clearly(
        &out,
        &e4[1],
        "is a share of emission ruche-or/2/e0004, not of ruche-or/2/e0003",
    );

    // The identity of custodian 3 does not open share 2.
    let out = check(&w, &[&a[0], &a[1]], &[ids[0], ids[2]], 2);
    fails_clearly(&out, &a[1], "none of the identities given opens");

    // A byte of the ciphertext changed (in the payload, the last line of the armor's body).
    let original = read(&w.path(&a[1]));
    let mut flipped = original.clone();
    let at = original.len() - "-----END AGE ENCRYPTED FILE-----\n".len() - 10;
    flipped[at] = if flipped[at] == b'A' { b'B' } else { b'A' };
    write_private(&w.path("flipped.age"), &flipped);
    let out = check(&w, &[&a[0], "flipped.age"], &ids, 2);
    fails_clearly(&out, "flipped.age", "is damaged");

    // Truncated: half of it, and all but the END line.
    write_private(&w.path("half.age"), &original[..original.len() / 2]);
    let out = check(&w, &[&a[0], "half.age"], &ids, 2);
    fails_clearly(&out, "half.age", "is damaged");
    write_private(&w.path("cut.age"), &original[..original.len() - 33]);
    let out = check(&w, &[&a[0], "cut.age"], &ids, 2);
    fails_clearly(&out, "cut.age", "is damaged");

    // The intact files still rebuild.
    check(&w, &[&a[0], &a[1]], &ids, 0);
}

#[test]
fn a_share_given_twice_counts_once() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    seed(&w, &c, 2, "shares", 3);
    let s = share_paths("shares", EMISSION, 3);
    std::fs::copy(w.path(&s[0]), w.path("copy.age")).unwrap();
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
    let out = check(&w, &[&s[0], &s[0]], &ids, 2);
    fails_clearly(&out, EMISSION, "1 distinct share(s)");
    let out = check(&w, &[&s[0], "copy.age"], &ids, 2);
    fails_clearly(&out, EMISSION, "1 distinct share(s)");
    let out = check(&w, &[&s[0], "copy.age", &s[2]], &ids, 0);
    assert_eq!(share_lines(&out).len(), 2, "{}", text(&out));
}

#[test]
fn reshare_makes_a_new_set_of_the_same_seed_that_does_not_mix_with_the_old() {
    let w = Workdir::new();
    let old = custodians(&w, 3, "old");
    let committed = commitment(&seed(&w, &old, 2, "old", 3));
    let s = share_paths("old", EMISSION, 3);
    let secret = seed_hex(&w, &s, &old);
    let new = custodians(&w, 4, "new");
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
        "--reshare",
        "--share",
        &s[0],
        "--share",
        &s[2],
        "--identity",
        &old.identities[0],
        "--identity",
        &old.identities[2],
        "--shares-needed",
        "3",
        "--out",
        "new",
    ];
    for r in &new.recipients {
        args.extend(["--recipient", r.as_str()]);
    }
    let out = w.ok(&args);
    assert_eq!(commitment(&out), committed);
    assert!(text(&out).contains("destroyed"), "{}", text(&out));
    let n = share_paths("new", EMISSION, 4);
    let new_ids: Vec<&str> = new.identities.iter().map(String::as_str).collect();
    for who in subsets(&[0usize, 1, 2, 3], 3) {
        let shares: Vec<&str> = who.iter().map(|&i| n[i].as_str()).collect();
        assert_eq!(commitment(&check(&w, &shares, &new_ids, 0)), committed);
    }
    let rebuilt = seed_hex(
        &w,
        &n[1..],
        &Custodians {
            identities: new.identities[1..].to_vec(),
            recipients: vec![],
        },
    );
    assert_eq!(rebuilt, secret);
    let mut all_ids = new_ids.clone();
    all_ids.extend(old.identities.iter().map(String::as_str));
    let out = check(&w, &[&n[0], &n[1], &s[1]], &all_ids, 2);
    fails_clearly(&out, &s[1], "another share set");
    assert!(!text(&out).contains(&secret));

    // A reshare from too few shares fails and writes nothing.
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
        "--reshare",
        "--share",
        &s[0],
        "--identity",
        &old.identities[0],
        "--shares-needed",
        "2",
        "--out",
        "again",
    ];
    for r in &new.recipients {
        args.extend(["--recipient", r.as_str()]);
    }
    let out = w.run_expect(&args, 2);
    fails_clearly(&out, EMISSION, "2 needed");
    assert!(!w.path("again").exists());
}

#[test]
fn no_output_of_seed_holds_the_seed_or_a_share() {
    let w = Workdir::new();
    let c = custodians(&w, 5, "c");
    let mut outputs = vec![seed(&w, &c, 3, "shares", 3)];
    let s = share_paths("shares", EMISSION, 5);
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
    outputs.push(check(&w, &[&s[0], &s[1], &s[2]], &ids, 0));
    outputs.push(check(&w, &[&s[0], &s[1], &s[2], &s[3], &s[4]], &ids, 0));
    outputs.push(check(&w, &[&s[0], &s[1]], &ids, 2));
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
        "--reshare",
        "--share",
        &s[4],
        "--share",
        &s[3],
        "--share",
        &s[2],
        "--shares-needed",
        "2",
        "--out",
        "re",
    ];
    for i in &ids {
        args.extend(["--identity", i]);
    }
    for r in &c.recipients[..3] {
        args.extend(["--recipient", r.as_str()]);
    }
    outputs.push(w.ok(&args));
    let secret = seed_hex(&w, &s[..3], &c);
    let mut secrets = vec![secret.clone(), secret.to_uppercase()];
    secrets.extend(share_hexes(&w, &s, &c));
    for id in &c.identities {
        let key = std::fs::read_to_string(w.path(id)).unwrap();
        secrets.push(key.lines().last().unwrap().to_string());
    }
    for out in &outputs {
        let all = text(out);
        for secret in &secrets {
            assert!(!all.contains(secret.as_str()), "a secret in:\n{all}");
        }
    }
}

#[test]
fn share_files_are_private_and_never_overwritten() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    seed(&w, &c, 2, "shares", 3);
    let s = share_paths("shares", EMISSION, 3);
    let before: Vec<Vec<u8>> = s.iter().map(|p| read(&w.path(p))).collect();
    for p in &s {
        let mode = std::fs::metadata(w.path(p)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{p}");
    }
    let mode = std::fs::metadata(w.path("shares"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    // Another ceremony (in another emissions folder) into the same share folder.
    let mut args = vec![
        "seed",
        "--emissions",
        "other",
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
    for r in &c.recipients {
        args.extend(["--recipient", r.as_str()]);
    }
    let out = w.run_expect(&args, 2);
    fails_clearly(&out, &s[0], "never overwritten");
    let after: Vec<Vec<u8>> = s.iter().map(|p| read(&w.path(p))).collect();
    assert_eq!(before, after);
}

#[test]
fn recipients_come_from_options_then_files_in_order() {
    let w = Workdir::new();
    let c = custodians(&w, 4, "c");
    std::fs::write(
        w.path("custodians.txt"),
        format!(
            "# custodians 3 and 4\n{}\n\n{}\n",
            c.recipients[2], c.recipients[3]
        ),
    )
    .unwrap();
    let out = w.ok(&[
        "seed",
        "--signing-key",
        "keys/signing-key.pem",
        "--game",
        "ruche-or",
        "--price",
        "2.00",
        "--emission",
        "3",
        "--shares-needed",
        "2",
        "--out",
        "shares",
        "--recipient",
        &c.recipients[0],
        "--recipients-file",
        "custodians.txt",
        "--recipient",
        &c.recipients[1],
    ]);
    let lines = share_lines(&out);
    assert_eq!(lines.len(), 4, "{}", text(&out));
    for (line, r) in lines.iter().zip(&c.recipients) {
        assert!(line.contains(r.as_str()), "{line}");
    }
    let s = share_paths("shares", EMISSION, 4);
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
    check(&w, &[&s[3], &s[0]], &ids, 0);
}

#[test]
fn bad_options_are_refused_clearly_and_write_nothing() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    let r: Vec<&str> = c.recipients.iter().map(String::as_str).collect();
    let secret_key = std::fs::read_to_string(w.path(&c.identities[0])).unwrap();
    let secret_key = secret_key.lines().last().unwrap().to_string();
    let base = [
        "seed",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--out",
        "shares",
        "--signing-key",
        "keys/signing-key.pem",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--shares-needed",
                "1",
                "--recipient",
                r[0],
                "--recipient",
                r[1],
            ],
            "2 <= k <= n",
        ),
        (
            vec![
                "--shares-needed",
                "3",
                "--recipient",
                r[0],
                "--recipient",
                r[1],
            ],
            "k = 3, n = 2",
        ),
        (
            vec!["--shares-needed", "2", "--recipient", r[0]],
            "at least 2 custodians",
        ),
        (
            vec![
                "--shares-needed",
                "2",
                "--recipient",
                r[0],
                "--recipient",
                r[0],
            ],
            "given twice",
        ),
        (
            vec![
                "--shares-needed",
                "2",
                "--recipient",
                r[0],
                "--recipient",
                "age1nope",
            ],
            "'age1nope' is not an age X25519 public key",
        ),
        // A secret key's data after `age1` (a paste gone wrong): never echoed in full (it was).
        (
            vec![
                "--shares-needed",
                "2",
                "--recipient",
                r[0],
                "--recipient",
                "age1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSVQX7JR",
            ],
            "'age1QY… (62 characters, not shown in full",
        ),
        (
            vec![
                "--shares-needed",
                "2",
                "--recipient",
                r[0],
                "--recipient",
                &secret_key,
            ],
            "not a public key",
        ),
        (
            vec!["--recipient", r[0], "--recipient", r[1]],
            "--shares-needed K is needed",
        ),
        (
            vec![
                "--shares-needed",
                "2",
                "--recipient",
                r[0],
                "--recipient",
                r[1],
                "--share",
                "x.age",
                "--identity",
                "k",
            ],
            "--share and --identity are for --reshare",
        ),
        (
            vec!["--check", "--share", "x.age", "--identity", "k"],
            "--out does not go with it",
        ),
        (
            vec![
                "--reshare",
                "--shares-needed",
                "2",
                "--recipient",
                r[0],
                "--recipient",
                r[1],
            ],
            "need the existing share files",
        ),
        (
            vec!["--shares-needed", "2", "--recipients-file", "missing.txt"],
            "missing.txt",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = base.to_vec();
        args.extend(&extra);
        let out = w.run_expect(&args, 2);
        assert!(out.stdout.is_empty(), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle),
            "{extra:?}: expected '{needle}' in:\n{err}"
        );
        assert!(
            !err.contains(&secret_key[16..]),
            "the secret key is echoed:\n{err}"
        );
        assert!(!w.path("shares").exists(), "{extra:?} wrote files");
    }
    let out = w.run_expect(
        &[
            "seed",
            "--signing-key",
            "keys/signing-key.pem",
            "--game",
            "ruche-or",
            "--price",
            "7",
            "--shares-needed",
            "2",
            "--out",
            "shares",
            "--recipient",
            r[0],
            "--recipient",
            r[1],
        ],
        2,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("7"),
        "{}",
        text(&out)
    );
    assert!(!w.path("shares").exists());
}

/// Runs an external tool, `None` when it is not installed.
fn tool(name: &str, args: &[&str], dir: &Path) -> Option<Output> {
    Command::new(name).args(args).current_dir(dir).output().ok()
}

#[test]
fn debian_age_reads_our_shares_and_age_keygen_identities_open_them() {
    let w = Workdir::new();
    fixed_test_key(&w);
    let dir = w.dir.path();
    let mut publics = Vec::new();
    for i in 1..=3 {
        let name = format!("keygen-{i}.key");
        let Some(out) = tool("age-keygen", &["-o", &name], dir) else {
            return cannot_run(
                "age-keygen is not installed (apt-get install age; .ci/run installs it)",
            );
        };
        assert!(out.status.success(), "{}", text(&out));
        let out = tool("age-keygen", &["-y", &name], dir).unwrap();
        publics.push(String::from_utf8(out.stdout).unwrap().trim().to_string());
    }
    let c = Custodians {
        identities: (1..=3).map(|i| format!("keygen-{i}.key")).collect(),
        recipients: publics.clone(),
    };
    let committed = commitment(&seed(&w, &c, 2, "shares", 3));
    let s = share_paths("shares", EMISSION, 3);
    for (i, share) in s.iter().enumerate() {
        let Some(out) = tool("age", &["-d", "-i", &c.identities[i], share], dir) else {
            return cannot_run("age is not installed (apt-get install age; .ci/run installs it)");
        };
        assert!(out.status.success(), "age -d: {}", text(&out));
        let payload: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(payload["format"], "emission-factory-seed-share/1");
        assert_eq!(payload["emission"], EMISSION);
        assert_eq!(payload["index"], i + 1);
        assert_eq!(payload["threshold"], 2);
        assert_eq!(payload["shares"], 3);
        assert_eq!(payload["recipient"], publics[i]);
        assert_eq!(payload["seed_sha256"], committed);
        // Another custodian's identity does not open it.
        let other = &c.identities[(i + 1) % 3];
        let out = tool("age", &["-d", "-i", other, share], dir).unwrap();
        assert!(!out.status.success());
    }
    // age-keygen's identity files open our shares.
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
    assert_eq!(commitment(&check(&w, &[&s[2], &s[0]], &ids, 0)), committed);
    // A share re-encrypted by Debian's age, in binary form, is read too.
    let plain = tool("age", &["-d", "-i", &c.identities[1], &s[1]], dir)
        .unwrap()
        .stdout;
    std::fs::write(w.path("plain.json"), plain).unwrap();
    let out = tool(
        "age",
        &["-r", &publics[1], "-o", "binary.age", "plain.json"],
        dir,
    )
    .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Kept as a custodian keeps a share file: 0600 (one that others may read is refused).
    std::fs::set_permissions(w.path("binary.age"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(w.path("plain.json")).unwrap();
    assert_eq!(
        commitment(&check(&w, &[&s[0], "binary.age"], &ids, 0)),
        committed
    );
    println!("interop: Debian's age decrypted our 3 shares; our code opened them with age-keygen identities");
}

#[test]
fn gfcombine_rebuilds_the_committed_seed_from_the_decrypted_shares() {
    let w = Workdir::new();
    let c = custodians(&w, 5, "c");
    let committed = commitment(&seed(&w, &c, 3, "shares", 3));
    let s = share_paths("shares", EMISSION, 5);
    let hexes = share_hexes(&w, &s, &c);
    for who in subsets(&[0usize, 1, 2, 3, 4], 3) {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for &i in &who {
            let name = format!("seed.{:03}", i + 1);
            std::fs::write(dir.path().join(&name), hex::decode(&hexes[i]).unwrap()).unwrap();
            files.push(name);
        }
        let mut args = vec!["-o", "seed.bin"];
        args.extend(files.iter().map(String::as_str));
        let Some(out) = tool("gfcombine", &args, dir.path()) else {
            return cannot_run(
                "gfcombine is not installed (apt-get install libgfshare-bin; .ci/run installs it)",
            );
        };
        assert!(out.status.success(), "{}", text(&out));
        let rebuilt = read(&dir.path().join("seed.bin"));
        use sha2::{Digest, Sha256};
        assert_eq!(hex::encode(Sha256::digest(&rebuilt)), committed, "{who:?}");
    }
    println!("interop: libgfshare's gfcombine rebuilt the committed seed from every 3 of 5 shares");
}

// ---- the ceremony's record (issue 20): shares are the ceremony's, or refused ----

/// Writes a share set of a seed the forger chose, for the custodians' public keys only (no
/// identity, no signing key): what an insider with the recipients file can do.
fn forge_shares(c: &Custodians, out: &Path, emission: &str) -> Vec<String> {
    let chosen = [0x42u8; 32];
    let recipients: Vec<age::x25519::Recipient> =
        c.recipients.iter().map(|r| r.parse().unwrap()).collect();
    let info = emission_factory::custody::write_share_set(
        &emission_factory::custody::SecretSeed::from_bytes(chosen),
        &emission.parse().unwrap(),
        2,
        &recipients,
        out,
    )
    .unwrap();
    info.files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect()
}

/// `emit` of ruche-or 2 € emission `number`, block 1, with these shares and identities.
fn emit_with_shares(w: &Workdir, number: &str, shares: &[&str], ids: &[&str]) -> Output {
    let mut args = vec![
        "emit",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        number,
        "--signing-key",
        "keys/signing-key.pem",
        "--quiet",
    ];
    for s in shares {
        args.extend(["--share", s]);
    }
    for i in ids {
        args.extend(["--identity", i]);
    }
    w.run(&args)
}

#[test]
fn forged_shares_make_no_production_emission() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
    // An emission no ceremony started: forged shares are refused, and nothing is made.
    let forged = forge_shares(&c, &w.path("forged"), "ruche-or/2/e0007");
    let out = emit_with_shares(&w, "7", &[&forged[0], &forged[1]], &ids);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no emission record"), "{}", text(&out));
    assert!(
        !w.path("emissions/ruche-or/2/e0007").exists(),
        "a folder was made"
    );
    // An emission the ceremony started: shares forged for it are refused by its record.
    seed(&w, &c, 2, "shares", 3);
    let forged = forge_shares(&c, &w.path("forged3"), EMISSION);
    let out = emit_with_shares(&w, "3", &[&forged[0], &forged[2]], &ids);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not made by this emission's ceremony"),
        "{}",
        text(&out)
    );
    assert!(!w
        .path("emissions/ruche-or/2/e0003/block-00001.csv")
        .exists());
    // The attempt is on the record: the emission's audit log ends with the refused run's line,
    // signed with the emission's key (no line before), and the log still verifies.
    let log = String::from_utf8(read(
        &w.path("emissions/ruche-or/2/e0003/emission.log.jsonl"),
    ))
    .unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["command"], "emit", "{log}");
    let result = last["result"].as_str().unwrap();
    assert!(
        result.starts_with("error: ") && result.contains("not made by this emission's ceremony"),
        "{result}"
    );
    assert!(last["signature"].is_string(), "{last}");
    // So is a run refused before its seed is rebuilt (one share of a 2-of-3 set), which left
    // no line before.
    let s = share_paths("shares", EMISSION, 3);
    let out = emit_with_shares(&w, "3", &[&s[1]], &ids);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let log = String::from_utf8(read(
        &w.path("emissions/ruche-or/2/e0003/emission.log.jsonl"),
    ))
    .unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["command"], "emit", "{log}");
    assert!(
        last["result"].as_str().unwrap().starts_with("error: "),
        "{last}"
    );
    assert_ne!(last["result"].as_str().unwrap(), result, "{log}");
    assert!(last["signature"].is_string(), "{last}");
    // The ceremony's own shares make it; the record is the ceremony's, unchanged by emit.
    let record = w.path("emissions/ruche-or/2/e0003/emission.json");
    let before = read(&record);
    let out = emit_with_shares(&w, "3", &[&s[0], &s[2]], &ids);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(read(&record), before);
    // The log, the refused run's line in it, verifies.
    let out = w.run(&[
        "verify",
        "--public-key",
        "keys/public-key.pem",
        "--allow-unsealed",
        "emissions/ruche-or/2/e0003",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// The ceremony of ruche-or 2 € emission 3, 2 of the custodians of `custodians.txt`, 4 blocks.
const CEREMONY: [&str; 17] = [
    "seed",
    "--game",
    "ruche-or",
    "--price",
    "2",
    "--emission",
    "3",
    "--shares-needed",
    "2",
    "--recipients-file",
    "custodians.txt",
    "--out",
    "shares",
    "--signing-key",
    "keys/signing-key.pem",
    "--emission-blocks",
    "4",
];

#[test]
fn the_ceremony_writes_a_signed_record_once_and_prints_its_hash() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    std::fs::write(
        w.path("custodians.txt"),
        format!(
            "{} # Alice Martin, notary\n{}\n{} #Carol\n",
            c.recipients[0], c.recipients[1], c.recipients[2]
        ),
    )
    .unwrap();
    let out = w.ok(&CEREMONY);
    let folder = w.path("emissions/ruche-or/2/e0003");
    let record_bytes = read(&folder.join("emission.json"));
    let printed = text(&out);
    assert!(
        printed.contains(&sha256_file(&folder.join("emission.json"))),
        "the record's SHA-256 is printed:\n{printed}"
    );
    // OpenSSL agrees that the record is signed by the emission's key.
    let check = Command::new("openssl")
        .current_dir(&folder)
        .args([
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "emission.pub.pem",
            "-rawin",
            "-in",
            "emission.json",
            "-sigfile",
            "emission.json.sig",
        ])
        .output()
        .expect("openssl runs (.ci/run installs it)");
    assert!(check.status.success(), "{}", text(&check));
    let record: serde_json::Value = serde_json::from_slice(&record_bytes).unwrap();
    assert_eq!(record["kind"], "production");
    assert_eq!(record["blocks"], 4);
    // The ceremony's audit-log line names what it made (it said only "ok" before): the record
    // and its SHA-256, the seed's commitment and the share set, never a share.
    let log = String::from_utf8(read(&folder.join("emission.log.jsonl"))).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let result = line["result"].as_str().unwrap();
    assert_eq!(
        result,
        format!(
            "ok: emission.json (SHA-256 {}), seed_sha256 {}, share set {} (2 of 3)",
            sha256_file(&folder.join("emission.json")),
            record["seed_sha256"].as_str().unwrap(),
            record["custody"]["share_set"].as_str().unwrap()
        )
    );
    assert_eq!(line["command"], "seed");
    assert!(line["signature"].is_string(), "{line}");
    let files = record["custody"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["label"], "Alice Martin, notary");
    assert_eq!(files[1]["label"], "");
    assert_eq!(files[2]["label"], "Carol");
    let s = share_paths("shares", EMISSION, 3);
    for (i, f) in files.iter().enumerate() {
        assert_eq!(f["file_sha256"], sha256_file(&w.path(&s[i])));
        assert_eq!(f["recipient"], c.recipients[i]);
    }
    assert_eq!(record["seed_sha256"], commitment(&out));
    // A second seed for the same emission is refused, before any share is written.
    let out = w.run_expect(
        &[
            "seed",
            "--game",
            "ruche-or",
            "--price",
            "2",
            "--emission",
            "3",
            "--shares-needed",
            "2",
            "--recipients-file",
            "custodians.txt",
            "--out",
            "again",
            "--signing-key",
            "keys/signing-key.pem",
        ],
        2,
    );
    assert!(
        text(&out).contains("already has its record"),
        "{}",
        text(&out)
    );
    assert!(!w.path("again").exists(), "shares were written");
    assert_eq!(read(&folder.join("emission.json")), record_bytes);
    // Without the signing key, no new seed either.
    let out = w.run_expect(
        &[
            "seed",
            "--game",
            "ruche-or",
            "--price",
            "2",
            "--emission",
            "4",
            "--shares-needed",
            "2",
            "--recipients-file",
            "custodians.txt",
            "--out",
            "four",
        ],
        2,
    );
    assert!(
        text(&out).contains("--signing-key PEM is needed"),
        "{}",
        text(&out)
    );
    assert!(!w.path("four").exists());
    // --emission-blocks given to emit with another value is refused, naming both.
    let ids: Vec<&str> = c.identities.iter().map(String::as_str).collect();
    let mut args = vec![
        "emit",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        "3",
        "--signing-key",
        "keys/signing-key.pem",
        "--emission-blocks",
        "5",
        "--quiet",
    ];
    for x in [&s[0], &s[1]] {
        args.extend(["--share", x.as_str()]);
    }
    for i in &ids {
        args.extend(["--identity", i]);
    }
    let out = w.run_expect(&args, 2);
    let said = text(&out);
    assert!(
        said.contains("planned blocks") && said.contains('4') && said.contains('5'),
        "{said}"
    );
    assert!(!folder.join("block-00001.csv").exists());
}

#[test]
fn reshared_shares_are_admitted_through_their_signed_custody_file() {
    let w = Workdir::new();
    let old = custodians(&w, 3, "old");
    // What a killed seed leaves under the lock is removed by the next one, which says so
    // (seed removed none before): the record's and a reshare's custody file's temporary files.
    let folder = w.path("emissions/ruche-or/2/e0003");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let planted = [
        folder.join(".emission.json.AbCdEfGh.tmp"),
        folder.join(".emission.shares-00ff.json.sig.AbCdEfGh.tmp"),
    ];
    for path in &planted {
        write_private(path, b"half written");
    }
    let out = seed(&w, &old, 2, "old", 3);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("left by a run that was killed"),
        "{}",
        text(&out)
    );
    for path in &planted {
        assert!(!path.exists(), "{} is still there", path.display());
    }
    write_private(&planted[1], b"half written");
    let s = share_paths("old", EMISSION, 3);
    let new = custodians(&w, 3, "new");
    let mut args = vec![
        "seed",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        "3",
        "--reshare",
        "--signing-key",
        "keys/signing-key.pem",
        "--share",
        &s[0],
        "--share",
        &s[1],
        "--identity",
        &old.identities[0],
        "--identity",
        &old.identities[1],
        "--shares-needed",
        "2",
        "--out",
        "new",
    ];
    for r in &new.recipients {
        args.extend(["--recipient", r.as_str()]);
    }
    let out = w.ok(&args);
    assert!(text(&out).contains("emission.shares-"), "{}", text(&out));
    assert!(
        !planted[1].exists(),
        "the reshare left {}",
        planted[1].display()
    );
    let n = share_paths("new", EMISSION, 3);
    let ids: Vec<&str> = new.identities.iter().map(String::as_str).collect();
    let out = emit_with_shares(&w, "3", &[&n[0], &n[2]], &ids);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The custody file is signed: edited, the new shares are refused.
    let folder = w.path("emissions/ruche-or/2/e0003");
    let custody = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".json") && p.to_string_lossy().contains("shares-"))
        .unwrap();
    let text_before = std::fs::read_to_string(&custody).unwrap();
    std::fs::write(
        &custody,
        text_before.replace("\"threshold\": 2", "\"threshold\": 2 "),
    )
    .unwrap();
    let mut args = vec![
        "emit",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--emission",
        "3",
        "--signing-key",
        "keys/signing-key.pem",
        "--first-block",
        "2",
        "--quiet",
    ];
    for x in [&n[0], &n[1]] {
        args.extend(["--share", x.as_str()]);
    }
    for i in &ids {
        args.extend(["--identity", i]);
    }
    let out = w.run_expect(&args, 2);
    assert!(text(&out).contains("signature"), "{}", text(&out));
    // Re-signed by an insider holding the key, a custody file is still read strictly, as the
    // record is: not written as the program writes it, or as a JSON array (which serde would
    // read field by field), it is refused (both were admitted before).
    let value: serde_json::Value = serde_json::from_str(&text_before).unwrap();
    let array = serde_json::to_string(&serde_json::Value::Array(
        value.as_object().unwrap().values().cloned().collect(),
    ))
    .unwrap();
    let respaced = text_before.replace("\"threshold\": 2", "\"threshold\": 2 ");
    for (case, edited, needle) in [
        (
            "respaced",
            respaced,
            "not written as this program writes it",
        ),
        ("an array", array, "array"),
    ] {
        std::fs::write(&custody, &edited).unwrap();
        resign(&w, &custody);
        let out = w.run_expect(&args, 2);
        let said = text(&out);
        assert!(said.contains("not a valid custody file"), "{case}: {said}");
        assert!(said.contains(needle), "{case}: {said}");
    }
    // The file as it was, re-signed: admitted again (the refusals above are of its form).
    std::fs::write(&custody, &text_before).unwrap();
    resign(&w, &custody);
    let out = w.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // verify checks the custody files against the log's signed `seed` lines: deleted, changed
    // or added, it fails (it read none of them: the three passed).
    let folder = custody.parent().unwrap().to_path_buf();
    let verify = |code| {
        text(&w.run_expect(
            &[
                "verify",
                "--public-key",
                "keys/public-key.pem",
                folder.to_str().unwrap(),
            ],
            code,
        ))
    };
    assert!(verify(0).contains("OK      emission"));
    let sig = folder.join(format!(
        "{}.sig",
        custody.file_name().unwrap().to_string_lossy()
    ));
    let kept_sig = read(&sig);
    std::fs::remove_file(&custody).unwrap();
    std::fs::remove_file(&sig).unwrap();
    let said = verify(1);
    assert!(
        said.contains("the audit log records the reshare's custody file")
            && said.contains("it is missing"),
        "{said}"
    );
    std::fs::write(&custody, b"junk").unwrap();
    std::fs::write(&sig, &kept_sig).unwrap();
    let said = verify(1);
    assert!(
        said.contains("not signed with the emission's key, or was changed"),
        "{said}"
    );
    std::fs::write(&custody, &text_before).unwrap();
    assert!(verify(0).contains("OK      emission"));
    let extra = folder.join(format!("emission.shares-{}.json", "0".repeat(32)));
    std::fs::write(&extra, &text_before).unwrap();
    let said = verify(1);
    assert!(
        said.contains(&format!("emission.shares-{}.json", "0".repeat(32))),
        "{said}"
    );
}

/// One private-folder policy (issue 21): `seed --out` refuses a share folder that group or
/// others may write into, as `keygen --out` does (they could replace a share there); it
/// accepted a `chmod 0777` folder before.
#[test]
fn seed_refuses_a_share_folder_others_may_write_into() {
    use std::os::unix::fs::PermissionsExt;
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    std::fs::create_dir(w.path("open")).unwrap();
    std::fs::set_permissions(w.path("open"), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(
        std::fs::metadata(w.path("open"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o777,
        "the folder is really open to others"
    );
    let args = seed_args(&c, 2, "open", 3, "emissions");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = w.run_expect(&args, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("chmod 700"), "{err}");
    assert_eq!(
        std::fs::read_dir(w.path("open")).unwrap().count(),
        0,
        "no share written"
    );
}

/// `seed` says on standard error which temporary files of a killed run it removed. With
/// standard error full (or closed), that note is lost but the ceremony completes: exit 0,
/// the record made, the temporary file gone, never a panic. (It printed the note with
/// `eprintln!`, which panics when standard error cannot be written: exit 101 after the record
/// and shares were written, as if the ceremony had failed.)
#[test]
fn a_full_standard_error_never_panics_a_ceremony_that_removed_a_killed_runs_files() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    let folder = w.path("emissions/ruche-or/2/e0003");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let planted = folder.join(".emission.json.AbCdEfGh.tmp");
    write_private(&planted, b"half a record");
    let args = seed_args(&c, 2, "shares", 3, "emissions");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = w
        .command(&args)
        .stderr(full)
        .output()
        .expect("the binary runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!planted.exists(), "the killed run's file was removed");
    assert!(folder.join("emission.json").exists(), "the record is made");
    assert!(
        said.contains(&sha256_file(&folder.join("emission.json"))),
        "the record's SHA-256 is printed:\n{said}"
    );
}

/// A custodian's label (the `# comment` after the key in the recipients file) goes into the
/// signed record: a secret key pasted there by mistake is redacted, never written (it was
/// copied into emission.json as it was).
#[test]
fn a_secret_pasted_as_a_custodians_label_is_never_written() {
    let w = Workdir::new();
    let c = custodians(&w, 3, "c");
    let secret = "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSVQX7JR";
    std::fs::write(
        w.path("custodians.txt"),
        format!(
            "{} # {secret}\n{} # Bob\n{}\n",
            c.recipients[0], c.recipients[1], c.recipients[2]
        ),
    )
    .unwrap();
    let out = w.run(&CEREMONY);
    assert!(!text(&out).contains(secret), "{}", text(&out));
    let folder = w.path("emissions/ruche-or/2/e0003");
    for name in ["emission.json", "emission.log.jsonl"] {
        let bytes = String::from_utf8(read(&folder.join(name))).unwrap_or_default();
        assert!(!bytes.contains("AGE-SECRET-KEY"), "{name}: {bytes}");
    }
    let record = String::from_utf8(read(&folder.join("emission.json"))).unwrap();
    assert!(record.contains("<redacted"), "{record}");
    assert!(record.contains("\"Bob\""), "{record}");
}
