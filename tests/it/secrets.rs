//! Secret files (seeds and private keys) on the command line: they are made mode 0600 from the
//! start, never written or read through a link, kept only in a folder nobody else can write to,
//! refused when others may read them, and a seed can come from standard input or a file
//! descriptor instead of the process list. Keys of another algorithm are named as what they are.
//!
//! The tests run as root in CI, and root bypasses file modes: they check the mode bits
//! themselves, and probe another user's access only where `setpriv` can run as `nobody`.

#![cfg(unix)]

use crate::common;
use common::*;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const SEED_FILE: &str = "emissions/private/mini-ruche-2-e0001.seed";
const KEY_FILE: &str = "emissions/private/mini-ruche-2-e0001.signing-key.pem";
const VICTIM: &str = "a file outside, that no link may write to\n";

/// Runs `emit` on the mini game at 2 € with only `extra` added (no seed, no key unless given).
fn emit(w: &Workdir, extra: &[&str], code: i32) -> Output {
    let game = data("mini-ruche.toml");
    let mut args = vec!["emit", "--game", &game, "--price", "2", "-q"];
    args.extend_from_slice(extra);
    w.run_expect(&args, code)
}

/// The permission bits of `path` itself (a link is not followed).
fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// Requires `path` to be a regular file (not a link) of mode 0600.
fn assert_secret_file(path: &Path) {
    let meta = fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        meta.file_type().is_file(),
        "{} is not a regular file",
        path.display()
    );
    assert_eq!(
        format!("{:04o}", mode(path)),
        "0600",
        "mode of {}",
        path.display()
    );
}

fn write_mode(path: &Path, bytes: &[u8], mode: u32) {
    fs::write(path, bytes).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn make_dir(path: &Path, mode: u32) {
    fs::create_dir_all(path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn says(out: &Output, needle: &str) {
    assert!(
        text(out).contains(needle),
        "expected '{needle}' in:\n{}",
        text(out)
    );
}

/// Runs the binary through `sh -c SCRIPT` (the binary is "$0", `args` are "$@"), with `input`
/// on its standard input.
fn sh(w: &Workdir, script: &str, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new("sh")
        .current_dir(w.dir.path())
        // Records dated as Workdir's runs date them (tests/common).
        .env("SOURCE_DATE_EPOCH", PINNED_TIME)
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_emission-factory"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut stdin = child.stdin.take().expect("stdin");
    // The program may stop reading early (a too long seed): a broken pipe here is expected.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().expect("sh ends")
}

fn sh_expect(w: &Workdir, script: &str, args: &[&str], input: &[u8], code: i32) -> Output {
    let out = sh(w, script, args, input);
    assert_eq!(
        out.status.code(),
        Some(code),
        "sh -c '{script}' {}\n{}",
        args.join(" "),
        text(&out)
    );
    out
}

fn openssl(w: &Workdir, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(w.dir.path())
        .args(args)
        .output()
        .expect("openssl must be installed (.ci/run installs it)");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        text(&out)
    );
}

#[test]
fn stale_temporary_files_and_links_in_private_do_not_expose_the_secrets() {
    let w = Workdir::new();
    let private = w.path("emissions/private");
    make_dir(&private, 0o700);
    fs::write(w.path("victim.txt"), VICTIM).unwrap();
    // What the old writer reused: a stale temporary file of mode 0644, and a link planted at
    // the temporary name of the key.
    write_mode(
        &private.join(".mini-ruche-2-e0001.seed.tmp"),
        b"stale",
        0o644,
    );
    symlink(
        w.path("victim.txt"),
        private.join(".mini-ruche-2-e0001.signing-key.pem.tmp"),
    )
    .unwrap();
    let out = emit(&w, &[], 0);
    says(&out, "mode 0600");
    assert_secret_file(&w.path(SEED_FILE));
    assert_secret_file(&w.path(KEY_FILE));
    assert_eq!(fs::read_to_string(w.path("victim.txt")).unwrap(), VICTIM);
    // The seed never reaches the output.
    let seed = fs::read_to_string(w.path(SEED_FILE)).unwrap();
    assert!(!text(&out).contains(seed.trim()));
}

#[test]
fn a_link_at_the_name_of_a_seed_or_key_is_refused_and_not_followed() {
    let w = Workdir::new();
    let private = w.path("emissions/private");
    make_dir(&private, 0o700);
    // A link to a valid seed: following it would silently use someone else's seed.
    write_mode(
        &w.path("planted.seed"),
        format!("{SEED}\n").as_bytes(),
        0o600,
    );
    symlink(w.path("planted.seed"), w.path(SEED_FILE)).unwrap();
    let out = emit(&w, &[], 2);
    says(&out, "mini-ruche-2-e0001.seed");
    says(&out, "symbolic link");
    assert!(!w.path(KEY_FILE).exists());

    // A dangling link at the key's name: the key is not written through it, nor over it.
    fs::remove_file(w.path(SEED_FILE)).unwrap();
    symlink(w.path("nowhere.pem"), w.path(KEY_FILE)).unwrap();
    let out = emit(&w, &["--seed", SEED], 2);
    says(&out, "mini-ruche-2-e0001.signing-key.pem");
    says(&out, "symbolic link");
    assert!(!w.path("nowhere.pem").exists());
    assert!(fs::symlink_metadata(w.path(KEY_FILE))
        .unwrap()
        .file_type()
        .is_symlink());

    // A seed file given with --seed-file is not read through a link either.
    symlink(w.path("planted.seed"), w.path("link.seed")).unwrap();
    let out = emit(&w, &["--seed-file", "link.seed", "--out", "other"], 2);
    says(&out, "link.seed");
    says(&out, "symbolic link");
    assert_eq!(
        fs::read_to_string(w.path("planted.seed")).unwrap(),
        format!("{SEED}\n")
    );
}

#[test]
fn a_private_folder_others_can_write_to_is_refused() {
    let w = Workdir::new();
    make_dir(&w.path("emissions/private"), 0o777);
    let out = emit(&w, &[], 2);
    says(&out, "emissions/private");
    says(&out, "0777");
    says(&out, "chmod 700");
    assert!(!w.path(SEED_FILE).exists());
    assert!(!w.path(KEY_FILE).exists());
    assert_eq!(mode(&w.path("emissions/private")), 0o777, "left as it was");

    // Group-writable is refused too; once fixed as told, the run goes on.
    fs::set_permissions(
        w.path("emissions/private"),
        fs::Permissions::from_mode(0o770),
    )
    .unwrap();
    says(&emit(&w, &[], 2), "0770");
    fs::set_permissions(
        w.path("emissions/private"),
        fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    emit(&w, &[], 0);
    assert_secret_file(&w.path(SEED_FILE));

    // A private folder that is a link to another folder is refused.
    make_dir(&w.path("elsewhere"), 0o700);
    make_dir(&w.path("linked"), 0o755);
    symlink(w.path("elsewhere"), w.path("linked/private")).unwrap();
    let out = emit(&w, &["--out", "linked"], 2);
    says(&out, "linked/private");
    says(&out, "symbolic link");
    assert_eq!(fs::read_dir(w.path("elsewhere")).unwrap().count(), 0);

    // keygen's folder holds a private key: the same rule.
    make_dir(&w.path("keys"), 0o777);
    let out = w.run_expect(&["keygen", "--out", "keys"], 2);
    says(&out, "keys");
    says(&out, "0777");
    says(&out, "chmod 700");
    assert!(!w.path("keys/signing-key.pem").exists());
}

#[test]
fn a_seed_or_key_file_others_can_read_is_refused_unless_allowed() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    let key = w.path("keys/signing-key.pem");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).unwrap();
    let with_key = ["--seed", SEED, "--signing-key", "keys/signing-key.pem"];
    let out = emit(&w, &with_key, 2);
    says(&out, "keys/signing-key.pem");
    says(&out, "0644");
    says(&out, "chmod 600");
    let out = emit(&w, &[&with_key[..], &["--allow-insecure-key"]].concat(), 0);
    says(&out, "warning:");
    says(&out, "keys/signing-key.pem");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();

    // A seed file readable by group.
    write_mode(&w.path("s.seed"), format!("{SEED}\n").as_bytes(), 0o640);
    let with_seed = [
        "--seed-file",
        "s.seed",
        "--signing-key",
        "keys/signing-key.pem",
        "--out",
        "b",
    ];
    let out = emit(&w, &with_seed, 2);
    says(&out, "s.seed");
    says(&out, "0640");
    says(&out, "chmod 600");
    let out = emit(&w, &[&with_seed[..], &["--allow-insecure-key"]].concat(), 0);
    says(&out, "warning:");
    // Same seed, same key: the same block as with --seed.
    assert_eq!(
        read(&w.path("emissions/mini-ruche/2/e0001/block-00001.csv")),
        read(&w.path("b/mini-ruche/2/e0001/block-00001.csv"))
    );

    // verify --seed-file follows the same rule.
    let game = data("mini-ruche.toml");
    let csv = "b/mini-ruche/2/e0001/block-00001.csv";
    let audit = ["verify", "--game", &game, "--seed-file", "s.seed", csv];
    let out = w.run_expect(&audit, 2);
    says(&out, "s.seed");
    says(&out, "chmod 600");
    let out = w.ok(&[&audit[..], &["--allow-insecure-key"]].concat());
    says(&out, "warning:");
    says(&out, "1 OK, 0 failed");

    // The emission's own seed file, opened up after it was made, is refused as well.
    emit(
        &w,
        &["--signing-key", "keys/signing-key.pem", "--out", "c"],
        0,
    );
    let own = w.path("c/private/mini-ruche-2-e0001.seed");
    fs::set_permissions(&own, fs::Permissions::from_mode(0o604)).unwrap();
    let out = emit(
        &w,
        &[
            "--signing-key",
            "keys/signing-key.pem",
            "--out",
            "c",
            "--first-block",
            "2",
        ],
        2,
    );
    says(&out, "0604");
    says(&out, "chmod 600");
}

#[test]
fn keygen_makes_a_0600_key_under_any_umask_and_force_replaces_only_a_regular_file() {
    let w = Workdir::new();
    let umask_000 = "umask 000; exec \"$0\" \"$@\"";
    sh_expect(&w, umask_000, &["keygen", "--out", "keys"], b"", 0);
    assert_secret_file(&w.path("keys/signing-key.pem"));
    assert_eq!(mode(&w.path("keys")) & 0o077, 0, "keys/ is private");
    assert_eq!(mode(&w.path("keys/public-key.pem")), 0o644);

    // Stale temporary files of the old writer, one a link, and the key itself replaced by a
    // link to a file outside.
    fs::write(w.path("victim.txt"), VICTIM).unwrap();
    write_mode(&w.path("keys/.signing-key.pem.tmp"), b"stale", 0o644);
    symlink(w.path("victim.txt"), w.path("keys/.public-key.pem.tmp")).unwrap();
    fs::remove_file(w.path("keys/signing-key.pem")).unwrap();
    symlink(w.path("victim.txt"), w.path("keys/signing-key.pem")).unwrap();
    let out = sh_expect(&w, umask_000, &["keygen", "--out", "keys"], b"", 2);
    says(&out, "is a symbolic link");
    // --force replaces a regular file only: the link is refused, left as it is, nothing is
    // written (--force removed the link and wrote a key in its place before, issue 19).
    let public_before = read(&w.path("keys/public-key.pem"));
    let forced = |code| {
        sh_expect(
            &w,
            umask_000,
            &["keygen", "--out", "keys", "--force"],
            b"",
            code,
        )
    };
    says(&forced(2), "is a symbolic link");
    assert!(fs::symlink_metadata(w.path("keys/signing-key.pem"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read(&w.path("keys/public-key.pem")), public_before);
    // A FIFO at the key's name is refused too (rename would have replaced it).
    fs::remove_file(w.path("keys/signing-key.pem")).unwrap();
    let fifo = Command::new("mkfifo")
        .arg(w.path("keys/signing-key.pem"))
        .status()
        .expect("mkfifo (coreutils) runs");
    assert!(fifo.success());
    says(&forced(2), "is a FIFO (named pipe)");
    assert_eq!(read(&w.path("keys/public-key.pem")), public_before);
    fs::remove_file(w.path("keys/signing-key.pem")).unwrap();
    let out = forced(0);
    says(&out, "mode 0600");
    assert_ne!(read(&w.path("keys/public-key.pem")), public_before);
    assert_eq!(fs::read_to_string(w.path("victim.txt")).unwrap(), VICTIM);
    assert_secret_file(&w.path("keys/signing-key.pem"));
    let public = w.path("keys/public-key.pem");
    assert!(fs::symlink_metadata(&public).unwrap().file_type().is_file());
    assert_eq!(mode(&public), 0o644);
    // The new pair is a pair, and OpenSSL reads it.
    let out = Command::new("openssl")
        .current_dir(w.dir.path())
        .args(["pkey", "-in", "keys/signing-key.pem", "-pubout"])
        .output()
        .expect("openssl must be installed (.ci/run installs it)");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(out.stdout, read(&public));
    another_user_cannot_read(&w, "keys/signing-key.pem", "keys/public-key.pem");
}

/// Where `setpriv` can run a command as `nobody`, checks that nobody can read `public` but not
/// `secret` (the folders on the way are opened to others, so that only the files' modes stand in
/// the way). Elsewhere [`cannot_run`].
fn another_user_cannot_read(w: &Workdir, secret: &str, public: &str) {
    let as_nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .args(args)
            .output()
    };
    if !matches!(as_nobody(&["true"]), Ok(out) if out.status.success()) {
        return cannot_run("setpriv cannot run a command as nobody here (needs root)");
    }
    let mut dir = w.path(secret);
    while dir.pop() && dir.starts_with(w.dir.path()) {
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cat = |file: &str| {
        let path = w.path(file);
        as_nobody(&["cat", path.to_str().unwrap()])
            .expect("setpriv runs")
            .status
            .success()
    };
    assert!(cat(public), "nobody should read {public}");
    assert!(!cat(secret), "nobody must not read {secret}");
}

#[test]
fn a_seed_from_standard_input_or_a_descriptor_makes_the_same_block_as_seed() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    let key = ["--signing-key", "keys/signing-key.pem"];
    emit(&w, &[&key[..], &["--seed", SEED, "--out", "a"]].concat(), 0);
    let game = data("mini-ruche.toml");
    let emit_args = |out: &'static str, how: &'static [&'static str]| {
        let mut args = vec!["emit", "--game", &game, "--price", "2", "-q"];
        args.extend_from_slice(&key);
        args.extend_from_slice(&["--out", out]);
        args.extend_from_slice(how);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let input = format!("{SEED}\n");
    let run = |script: &str, args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        sh_expect(&w, script, &args, input.as_bytes(), 0)
    };
    let plain = "exec \"$0\" \"$@\"";
    let out = run(plain, emit_args("b", &["--seed-file", "-"]));
    says(&out, "standard input");
    assert!(!text(&out).contains(SEED));
    // Descriptor 3 is the pipe; standard input is empty.
    let out = run(
        "exec \"$0\" \"$@\" 3<&0 </dev/null",
        emit_args("c", &["--seed-fd", "3"]),
    );
    says(&out, "descriptor 3");
    assert!(!text(&out).contains(SEED));
    for file in [
        "block-00001.csv",
        "block-00001.manifest.json",
        "block-00001.manifest.json.sig",
        "emission.pub.pem",
    ] {
        let a = read(&w.path(&format!("a/mini-ruche/2/e0001/{file}")));
        for other in ["b", "c"] {
            assert!(
                a == read(&w.path(&format!("{other}/mini-ruche/2/e0001/{file}"))),
                "{other}/{file} differs from the block made with --seed"
            );
        }
    }
    // Like --seed, a seed read this way is not stored.
    for out in ["b", "c"] {
        assert!(!w.path(&format!("{out}/private")).exists());
        assert!(!w.path("-").exists());
    }

    // verify reads it the same ways, and tells a wrong seed.
    let csv = "a/mini-ruche/2/e0001/block-00001.csv";
    let verify = |how: &[&str]| {
        let mut args = vec!["verify".to_string(), "--game".into(), game.clone()];
        args.extend(how.iter().map(|s| s.to_string()));
        args.push(csv.into());
        args
    };
    says(&run(plain, verify(&["--seed-file", "-"])), "1 OK, 0 failed");
    says(
        &run(
            "exec \"$0\" \"$@\" 3<&0 </dev/null",
            verify(&["--seed-fd", "3"]),
        ),
        "1 OK, 0 failed",
    );
    let wrong = format!("{}0\n", &SEED[..63]);
    let args = verify(&["--seed-file", "-"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sh_expect(&w, plain, &args, wrong.as_bytes(), 1);
    says(&out, "another seed");
}

#[test]
fn a_seed_on_standard_input_is_64_hex_digits_and_read_with_a_bound() {
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    let game = data("mini-ruche.toml");
    let args = [
        "emit",
        "--game",
        &game,
        "--price",
        "2",
        "--signing-key",
        "keys/signing-key.pem",
        "--seed-file",
        "-",
        "-q",
    ];
    let plain = "exec \"$0\" \"$@\"";
    // A megabyte of hex digits is refused without being read whole (and nothing echoed).
    let big = vec![b'a'; 1 << 20];
    let out = sh_expect(&w, plain, &args, &big, 2);
    says(&out, "standard input");
    assert!(text(&out).len() < 2000, "{}", text(&out));
    let out = sh_expect(&w, plain, &args, b"not a seed\n", 2);
    says(&out, "64 hexadecimal digits");
    let out = sh_expect(&w, plain, &args, b"", 2);
    says(&out, "standard input");
    // A descriptor that is not open.
    let out = sh_expect(
        &w,
        plain,
        &[&args[..7], &["--seed-fd", "7", "-q"]].concat(),
        b"",
        2,
    );
    says(&out, "descriptor 7");
    // Only one source of seed at a time.
    let out = sh_expect(
        &w,
        plain,
        &[&args[..], &["--seed-fd", "0"]].concat(),
        b"",
        2,
    );
    says(&out, "cannot be used with");
}

#[test]
fn help_says_a_seed_on_the_command_line_is_visible_to_other_users() {
    let w = Workdir::new();
    for command in ["emit", "verify"] {
        let out = w.ok(&[command, "--help"]);
        let said = text(&out);
        assert!(said.contains("process list"), "{command} --help:\n{said}");
        assert!(said.contains("--seed-file -"), "{command} --help:\n{said}");
        assert!(said.contains("--seed-fd"), "{command} --help:\n{said}");
        assert!(
            said.contains("--allow-insecure-key"),
            "{command} --help:\n{said}"
        );
    }
}

#[test]
fn rsa_ec_and_other_keys_are_named_as_what_they_are() {
    let w = Workdir::new();
    openssl(
        &w,
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
            "rsa.pem",
        ],
    );
    openssl(
        &w,
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            "ec.pem",
        ],
    );
    openssl(&w, &["genpkey", "-algorithm", "ed448", "-out", "ed448.pem"]);
    openssl(
        &w,
        &["genpkey", "-algorithm", "x25519", "-out", "x25519.pem"],
    );
    let cases = [
        ("rsa", "an RSA private key", "an RSA public key"),
        (
            "ec",
            "an EC private key on curve P-256",
            "an EC public key on curve P-256",
        ),
        ("ed448", "an Ed448 private key", "an Ed448 public key"),
        ("x25519", "an X25519 private key", "an X25519 public key"),
    ];
    fs::create_dir(w.path("block")).unwrap();
    let game = data("mini-ruche.toml");
    for (name, private, public) in cases {
        let pem = format!("{name}.pem");
        let pubpem = format!("{name}.pub.pem");
        fs::set_permissions(w.path(&pem), fs::Permissions::from_mode(0o600)).unwrap();
        openssl(&w, &["pkey", "-in", &pem, "-pubout", "-out", &pubpem]);
        let out = emit(&w, &["--seed", SEED, "--signing-key", &pem], 2);
        says(&out, &pem);
        says(&out, private);
        says(&out, "Ed25519");
        assert!(
            !text(&out).contains("not an Ed25519 private key"),
            "{}",
            text(&out)
        );
        let out = w.run_expect(
            &["verify", "--game", &game, "--public-key", &pubpem, "block"],
            2,
        );
        says(&out, &pubpem);
        says(&out, public);
    }
    // A public key given as the signing key, and a private key given as the public key.
    w.ok(&["keygen", "--out", "keys"]);
    write_mode(
        &w.path("pub-as-private.pem"),
        &read(&w.path("keys/public-key.pem")),
        0o600,
    );
    let out = emit(
        &w,
        &["--seed", SEED, "--signing-key", "pub-as-private.pem"],
        2,
    );
    says(&out, "a public key");
    let out = w.run_expect(
        &["verify", "--public-key", "keys/signing-key.pem", "block"],
        2,
    );
    says(&out, "a private key");
}

// ---- issue 20, items 4 and 5: secrets stay secret, blocks are as secret as the seed ----

const FOLDER: &str = "emissions/mini-ruche/2/e0001";

/// Runs `args` as the user `nobody` (no groups but `group`), or `None` where setpriv cannot.
fn as_nobody(group: &str, args: &[&str]) -> Option<Output> {
    let out = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            &format!("--regid={group}"),
            "--clear-groups",
        ])
        .args(args)
        .output()
        .ok()?;
    Some(out)
}

/// True where this process may run commands as `nobody` (root with setpriv).
fn can_be_nobody() -> bool {
    matches!(as_nobody("nogroup", &["true"]), Some(out) if out.status.success())
}

/// Every entry of `dir` (recursively), with its path.
fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            all.extend(entries(&path));
        }
        all.push(path);
    }
    all
}

/// Requires `folder` to be `dir_mode` and every entry in it a regular file of `file_mode`.
fn assert_modes(folder: &Path, dir_mode: u32, file_mode: u32, what: &str) {
    assert_eq!(
        format!("{:04o}", mode(folder)),
        format!("{dir_mode:04o}"),
        "{what}: mode of {}",
        folder.display()
    );
    let files = entries(folder);
    // At least the lock and the log (all `seed` makes).
    assert!(files.len() >= 2, "{what}: {files:?}");
    for path in files {
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(
            meta.is_file(),
            "{what}: {} is not a regular file",
            path.display()
        );
        // The hidden files (the locks) are the running account's alone, whatever the group.
        let hidden = path.file_name().unwrap().to_string_lossy().starts_with('.');
        let file_mode = if hidden { 0o600 } else { file_mode };
        assert_eq!(
            format!("{:04o}", mode(&path)),
            format!("{file_mode:04o}"),
            "{what}: mode of {}",
            path.display()
        );
    }
}

#[test]
fn an_age_secret_key_given_as_a_recipient_is_refused_and_never_logged_nor_echoed() {
    use age::secrecy::ExposeSecret;
    let w = Workdir::new();
    // The ceremony signs the emission's record with the emission's key.
    fixed_test_key(&w);
    let secret = age::x25519::Identity::generate();
    let secret_text = secret.to_string().expose_secret().to_string();
    let public = age::x25519::Identity::generate().to_public().to_string();
    // The key's own characters, after its well-known prefix, in any case.
    let body = secret_text["AGE-SECRET-KEY-1".len()..].to_ascii_uppercase();
    let leaks = |what: &str, bytes: &str| {
        assert!(
            !bytes.to_ascii_uppercase().contains(&body[..20]),
            "{what} holds the secret key:\n{bytes}"
        );
    };
    fs::write(
        w.path("custodians.txt"),
        format!("{public}\n{secret_text}\n"),
    )
    .unwrap();
    let lower = format!("--recipient={}", secret_text.to_lowercase());
    let attempts: [Vec<&str>; 3] = [
        vec!["--recipient", &public, "--recipient", &secret_text],
        vec!["--recipient", &public, &lower],
        vec!["--recipients-file", "custodians.txt"],
    ];
    for (n, extra) in attempts.iter().enumerate() {
        let emission = (n + 1).to_string();
        // A refused new seed makes no folder; where the emission's folder already exists (made
        // by an earlier run or by hand), the refused run leaves its line in the folder's log.
        make_dir(
            &w.path(&format!("emissions/ruche-or/2/e{:04}", n + 1)),
            0o700,
        );
        let mut args = vec![
            "seed",
            "--signing-key",
            "keys/signing-key.pem",
            "--game",
            "ruche-or",
            "--price",
            "2",
            "--emission",
            &emission,
            "--shares-needed",
            "2",
            "--out",
            "shares",
        ];
        args.extend(extra);
        let out = w.run_expect(&args, 2);
        says(&out, "age secret key");
        says(&out, "it is not shown here");
        leaks("the output of seed", &text(&out));
        assert!(!w.path("shares").exists(), "no share may be written");
        let log = w.path(&format!(
            "emissions/ruche-or/2/e{:04}/emission.log.jsonl",
            n + 1
        ));
        let log = fs::read_to_string(&log).expect("the failed run has its line in the audit log");
        leaks("the audit log", &log);
        assert!(log.contains("\"seed\""), "{log}");
        if n < 2 {
            assert!(log.contains("<redacted: age secret key>"), "{log}");
            assert!(log.contains(&public), "the public key is logged: {log}");
        }
    }
}

#[test]
fn a_core_dump_never_holds_the_seed_or_the_key() {
    use std::os::unix::process::ExitStatusExt;
    let pattern = fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    let pattern = pattern.trim().to_string();
    // Cores must land where this test can read them: a plain file name, in the process's
    // folder. As root, a piped or absolute pattern is set to `core` for the test, then restored.
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(p) = &self.0 {
                let _ = fs::write("/proc/sys/kernel/core_pattern", p);
            }
        }
    }
    let _restore = if pattern.is_empty() || pattern.contains('/') || pattern.starts_with('|') {
        if fs::write("/proc/sys/kernel/core_pattern", "core").is_err() {
            return cannot_run(&format!(
                "core_pattern is '{pattern}' and cannot be set to a file name here"
            ));
        }
        Restore(Some(pattern.clone()))
    } else {
        Restore(None)
    };
    let cores = |dir: &Path| -> Vec<std::path::PathBuf> {
        entries(dir)
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("core"))
            })
            .collect()
    };
    let quit = |pid: u32| {
        let sent = Command::new("kill")
            .args(["-QUIT", &pid.to_string()])
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "SIGQUIT sent");
    };

    // The control: a plain program under `ulimit -c unlimited` leaves a core on SIGQUIT.
    let control = tempfile::tempdir().unwrap();
    let mut sleeper = Command::new("sh")
        .current_dir(control.path())
        .args(["-c", "ulimit -c unlimited && exec sleep 30"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    quit(sleeper.id());
    let status = sleeper.wait().unwrap();
    if !status.core_dumped() || cores(control.path()).is_empty() {
        return cannot_run(&format!(
            "no core dump even from `sleep` (status {status:?}, core_pattern '{pattern}'): cores cannot be produced here"
        ));
    }

    // emit holds the seed (from standard input) and the signing key, and waits for a block
    // lock held by this test.
    let w = Workdir::new();
    w.ok(&["keygen", "--out", "keys"]);
    let folder = w.path(FOLDER);
    make_dir(&folder, 0o700);
    let lock = folder.join(".block-00001.lock");
    fs::write(&lock, b"").unwrap();
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "60"])
        .spawn()
        .expect("flock (util-linux) holds the lock");
    let held = || {
        Command::new("flock")
            .args(["-n"])
            .arg(&lock)
            .arg("true")
            .status()
            .is_ok_and(|s| !s.success())
    };
    let start = std::time::Instant::now();
    while !held() {
        assert!(start.elapsed().as_secs() < 10, "flock took the lock");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stderr = fs::File::create(w.path("emit.stderr")).unwrap();
    let game = data("mini-ruche.toml");
    let mut emit = Command::new("sh")
        .current_dir(w.dir.path())
        .args(["-c", "ulimit -c unlimited && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_emission-factory"))
        .args(["emit", "--game", &game, "--price", "2", "--seed-file", "-"])
        .args(["--signing-key", "keys/signing-key.pem", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = emit.stdin.take().unwrap();
        stdin.write_all(format!("{SEED}\n").as_bytes()).unwrap();
    }
    let start = std::time::Instant::now();
    loop {
        let said = fs::read_to_string(w.path("emit.stderr")).unwrap_or_default();
        if said.contains("locked by another run") {
            break;
        }
        if start.elapsed().as_secs() > 20 || emit.try_wait().unwrap().is_some() {
            let _ = emit.kill();
            let _ = holder.kill();
            panic!("emit did not come to wait for the block lock:\n{said}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    quit(emit.id());
    let status = emit.wait().unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(
        status.signal(),
        Some(3),
        "emit ended by SIGQUIT: {status:?}"
    );

    // The secrets, as text and as bytes.
    let pem = fs::read_to_string(w.path("keys/signing-key.pem")).unwrap();
    let key = {
        use ed25519_dalek::pkcs8::DecodePrivateKey;
        ed25519_dalek::SigningKey::from_pkcs8_pem(&pem)
            .unwrap()
            .to_bytes()
    };
    let pem_body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let secrets: [(&str, Vec<u8>); 4] = [
        ("the seed's hex", SEED.as_bytes().to_vec()),
        ("the seed's bytes", hex::decode(SEED).unwrap()),
        ("the key's PEM", pem_body.into_bytes()),
        ("the key's bytes", key.to_vec()),
    ];
    let found: Vec<String> = cores(w.dir.path())
        .iter()
        .map(|core| {
            let bytes = fs::read(core).unwrap();
            let held: Vec<&str> = secrets
                .iter()
                .filter(|(_, s)| bytes.windows(s.len()).any(|win| win == &s[..]))
                .map(|(what, _)| *what)
                .collect();
            format!("{} (holds: {})", core.display(), held.join(", "))
        })
        .collect();
    assert!(
        found.is_empty() && !status.core_dumped(),
        "emit left a core dump: {found:?}"
    );
    // Nor any other file of the run (the key file itself aside).
    for path in entries(w.dir.path()) {
        if path.starts_with(w.path("keys")) || !path.is_file() {
            continue;
        }
        let bytes = fs::read(&path).unwrap();
        for (what, s) in &secrets {
            assert!(
                !bytes.windows(s.len()).any(|win| win == &s[..]),
                "{} holds {what}",
                path.display()
            );
        }
    }
}

/// A 2-of-2 share set of the mini game's emission 1, made by `seed`, with its custodians'
/// identity files (0600, as age-keygen makes them).
fn share_set(w: &Workdir) -> ([String; 2], [String; 2]) {
    use age::secrecy::ExposeSecret;
    let mut recipients = Vec::new();
    for name in ["alice.key", "bob.key"] {
        let identity = age::x25519::Identity::generate();
        write_mode(
            &w.path(name),
            format!("{}\n", identity.to_string().expose_secret()).as_bytes(),
            0o600,
        );
        recipients.push(identity.to_public().to_string());
    }
    let game = data("mini-ruche.toml");
    w.ok(&[
        "seed",
        "--signing-key",
        "keys/signing-key.pem",
        "--game",
        &game,
        "--price",
        "2",
        "--shares-needed",
        "2",
        "--out",
        "shares",
        "--recipient",
        &recipients[0],
        "--recipient",
        &recipients[1],
    ]);
    (
        [
            "shares/mini-ruche-2-e0001.share-1-of-2.age".into(),
            "shares/mini-ruche-2-e0001.share-2-of-2.age".into(),
        ],
        ["alice.key".into(), "bob.key".into()],
    )
}

#[test]
fn share_and_identity_files_others_may_read_links_and_fifos_are_refused() {
    let w = Workdir::new();
    // The ceremony signs the emission's record with the emission's key.
    fixed_test_key(&w);
    let (shares, ids) = share_set(&w);
    let game = data("mini-ruche.toml");
    let check = |share: &str, id: &str, extra: &[&str], code: i32| {
        let mut args = vec![
            "seed",
            "--game",
            &game,
            "--price",
            "2",
            "--check",
            "--share",
            &shares[0],
            "--share",
            share,
            "--identity",
            &ids[0],
            "--identity",
            id,
        ];
        args.extend_from_slice(extra);
        w.run_expect(&args, code)
    };
    check(&shares[1], &ids[1], &[], 0);
    // Readable by group or others: refused, saying how to fix it; let through with a warning
    // by --allow-insecure-key.
    for (i, path) in [&shares[1], &ids[1]].into_iter().enumerate() {
        for bad in [0o644, 0o640, 0o604] {
            fs::set_permissions(w.path(path), fs::Permissions::from_mode(bad)).unwrap();
            let out = check(&shares[1], &ids[1], &[], 2);
            says(&out, &format!("{path} has mode {bad:04o}"));
            says(&out, "chmod 600");
            let out = check(&shares[1], &ids[1], &["--allow-insecure-key"], 0);
            says(&out, &format!("warning: {path} has mode {bad:04o}"));
        }
        fs::set_permissions(w.path(path), fs::Permissions::from_mode(0o600)).unwrap();
        // A link to the very file: refused, not followed.
        let link = format!("link-{i}");
        symlink(w.path(path), w.path(&link)).unwrap();
        let (share, id) = if i == 0 {
            (link.as_str(), ids[1].as_str())
        } else {
            (shares[1].as_str(), link.as_str())
        };
        let out = check(share, id, &[], 2);
        says(&out, "symbolic link");
        let out = check(share, id, &["--allow-insecure-key"], 2);
        says(&out, "symbolic link");
    }
    // A FIFO: refused at once (no writer ever comes).
    let made = Command::new("mkfifo").arg(w.path("fifo")).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    says(&check("fifo", &ids[1], &[], 2), "is a FIFO");
    says(&check(&shares[1], "fifo", &[], 2), "is a FIFO");
}

#[test]
fn every_file_of_an_emission_is_private_under_umask_022_and_000() {
    for umask in ["022", "000"] {
        let w = Workdir::new();
        // The ceremony signs the emission's record with the emission's key.
        fixed_test_key(&w);
        let game = data("mini-ruche.toml");
        let script = format!("umask {umask}; exec \"$0\" \"$@\"");
        // Two runs, the second completing and sealing the emission, then seal again.
        for first in ["1", "2"] {
            sh_expect(
                &w,
                &script,
                &[
                    "emit",
                    "--game",
                    &game,
                    "--price",
                    "2",
                    "--seed",
                    SEED,
                    "--first-block",
                    first,
                    "--emission-blocks",
                    "2",
                    "-q",
                ],
                b"",
                0,
            );
        }
        let folder = w.path(FOLDER);
        assert!(folder.join("emission.seal.json").is_file());
        for name in [
            ".emission.lock",
            ".block-00001.lock",
            "emission.log.jsonl",
            "emission.json",
        ] {
            assert!(folder.join(name).is_file(), "{name}");
        }
        assert_modes(&folder, 0o700, 0o600, &format!("umask {umask}"));
        // seed makes its emission's folder and log private too.
        let w = Workdir::new();
        fixed_test_key(&w);
        let [a, b] = [0, 1].map(|_| age::x25519::Identity::generate().to_public().to_string());
        sh_expect(
            &w,
            &script,
            &[
                "seed",
                "--signing-key",
                "keys/signing-key.pem",
                "--game",
                &game,
                "--price",
                "2",
                "--shares-needed",
                "2",
                "--out",
                "shares",
                "--recipient",
                &a,
                "--recipient",
                &b,
            ],
            b"",
            0,
        );
        let seeded = w.path(FOLDER);
        assert!(seeded.join("emission.log.jsonl").is_file());
        assert_modes(&seeded, 0o700, 0o600, &format!("umask {umask}, after seed"));
    }
}

#[test]
fn lock_and_log_files_are_never_opened_through_a_link() {
    for name in [".emission.lock", ".block-00001.lock", "emission.log.jsonl"] {
        let w = Workdir::new();
        fs::write(w.path("victim.txt"), VICTIM).unwrap();
        let folder = w.path(FOLDER);
        make_dir(&folder, 0o700);
        symlink(w.path("victim.txt"), folder.join(name)).unwrap();
        let out = emit(&w, &["--seed", SEED], 2);
        says(&out, "symbolic link");
        assert_eq!(
            fs::read_to_string(w.path("victim.txt")).unwrap(),
            VICTIM,
            "{name}: the link was followed"
        );
    }
}

#[test]
fn no_other_user_can_open_the_lock_and_an_old_open_lock_is_closed() {
    if !can_be_nobody() {
        return cannot_run("setpriv cannot run a command as nobody here (needs root)");
    }
    let w = Workdir::new();
    emit(&w, &["--seed", SEED], 0);
    let folder = w.path(FOLDER);
    let lock = folder.join(".emission.lock");
    let try_flock = || {
        as_nobody("nogroup", &["flock", "-n", lock.to_str().unwrap(), "true"])
            .expect("setpriv runs")
    };
    // As made: the folder shuts nobody out.
    assert!(!try_flock().status.success(), "nobody flocked the lock");
    // Even with the folder opened to others, the lock's own mode does.
    for dir in [
        w.dir.path(),
        &w.path("emissions"),
        &w.path("emissions/mini-ruche"),
        &w.path("emissions/mini-ruche/2"),
        &folder,
    ] {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = try_flock();
    assert!(
        !out.status.success(),
        "nobody flocked the lock: {}",
        text(&out)
    );
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    // A lock and a log of an earlier version, 0644, are made 0600 by the next run.
    for name in [".emission.lock", "emission.log.jsonl", ".block-00001.lock"] {
        fs::set_permissions(folder.join(name), fs::Permissions::from_mode(0o644)).unwrap();
    }
    assert!(
        try_flock().status.success(),
        "the control: a 0644 lock can be flocked by nobody"
    );
    emit(&w, &["--seed", SEED], 0);
    for name in [".emission.lock", "emission.log.jsonl", ".block-00001.lock"] {
        assert_eq!(mode(&folder.join(name)), 0o600, "{name}");
    }
    assert!(!try_flock().status.success());
}

#[test]
fn temporary_files_a_killed_run_left_of_the_record_the_seal_and_the_secrets_are_removed() {
    let w = Workdir::new();
    emit(&w, &["--emission-blocks", "3"], 0);
    let folder = w.path(FOLDER);
    let private = w.path("emissions/private");
    // What a run killed while writing them leaves (Staged and write_new name their temporary
    // files so): the record and seal with their signatures, and the secrets in private/.
    let planted = [
        folder.join(".emission.json.AbCdEfGh.tmp"),
        folder.join(".emission.json.sig.AbCdEfGh.tmp"),
        folder.join(".emission.seal.json.AbCdEfGh.tmp"),
        folder.join(".emission.seal.json.sig.AbCdEfGh.tmp"),
        private.join(".mini-ruche-2-e0001.seed.AbCdEfGh.tmp"),
        private.join(".mini-ruche-2-e0001.signing-key.pem.AbCdEfGh.tmp"),
    ];
    for path in &planted {
        write_mode(path, b"secret left behind", 0o600);
    }
    let out = emit(&w, &["--first-block", "2"], 0);
    says(&out, "left by a run that was killed");
    for path in &planted {
        assert!(!path.exists(), "{} is still there", path.display());
    }
    // A killed seal's temporary files are removed by the next seal (it holds the same lock).
    let seal_temps = [
        folder.join(".emission.seal.json.ZyXwVuTs.tmp"),
        folder.join(".emission.seal.json.sig.ZyXwVuTs.tmp"),
    ];
    for path in &seal_temps {
        write_mode(path, b"half a seal", 0o600);
    }
    emit(&w, &["--first-block", "3", "--seed-file", SEED_FILE], 0);
    for path in &seal_temps {
        assert!(!path.exists(), "{} is still there", path.display());
    }
    for path in &seal_temps {
        write_mode(path, b"half a seal", 0o600);
    }
    let out = w.ok(&[
        "seal",
        FOLDER,
        "--signing-key",
        KEY_FILE,
        "--game",
        &data("mini-ruche.toml"),
    ]);
    says(&out, "left by a run that was killed");
    for path in &seal_temps {
        assert!(!path.exists(), "{} is still there", path.display());
    }
}

#[test]
fn group_makes_an_emission_0750_and_its_files_0640_owned_by_the_group() {
    use std::os::unix::fs::MetadataExt;
    let w = Workdir::new();
    // The ceremony signs the emission's record with the emission's key.
    fixed_test_key(&w);
    let game = data("mini-ruche.toml");
    let out = emit(&w, &["--seed", SEED, "--group", "no-such-group-here"], 2);
    says(&out, "no-such-group-here");
    says(&out, "no such group");
    assert!(
        !w.path(FOLDER).exists(),
        "nothing made for an unknown group"
    );
    // `users` (gid 100) is in every Debian base system; changing a file's group needs root or
    // membership of it.
    let Some(gid) = group_of("users") else {
        return cannot_run("no group `users` on this system");
    };
    if !rustix::process::geteuid().is_root() {
        return cannot_run("giving files to the group `users` needs root here");
    }
    let folder = w.path(FOLDER);
    for first in ["1", "2"] {
        sh_expect(
            &w,
            "umask 077; exec \"$0\" \"$@\"",
            &[
                "emit",
                "--game",
                &game,
                "--price",
                "2",
                "--seed",
                SEED,
                "--first-block",
                first,
                "--emission-blocks",
                "2",
                "--group",
                "users",
                "-q",
            ],
            b"",
            0,
        );
    }
    assert!(folder.join("emission.seal.json").is_file());
    assert_modes(&folder, 0o750, 0o640, "--group users, umask 077");
    // Every file but the locks (0600, the running account's alone) is the group's.
    let shared = entries(&folder)
        .into_iter()
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'));
    for path in shared.chain([folder.clone()]) {
        assert_eq!(
            fs::metadata(&path).unwrap().gid(),
            gid,
            "{}",
            path.display()
        );
    }
    // A member of the group reads a block; another user does not.
    if can_be_nobody() {
        for dir in [
            w.dir.path(),
            &w.path("emissions"),
            &w.path("emissions/mini-ruche"),
            &w.path("emissions/mini-ruche/2"),
        ] {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let csv = folder.join("block-00001.csv");
        let cat = |group| {
            as_nobody(group, &["cat", csv.to_str().unwrap()])
                .unwrap()
                .status
                .success()
        };
        assert!(cat("users"), "a member of the group reads the block");
        assert!(!cat("nogroup"), "another user must not read the block");
        // ...but cannot take the emission's lock: one that could would stall every run.
        let lock = folder.join(".emission.lock");
        assert!(lock.is_file());
        let flock = as_nobody("users", &["flock", "-n", lock.to_str().unwrap(), "true"]).unwrap();
        assert!(
            !flock.status.success(),
            "a member of the group took the emission lock: {}",
            text(&flock)
        );
        assert!(
            String::from_utf8_lossy(&flock.stderr).contains("Permission denied"),
            "{}",
            text(&flock)
        );
    } else {
        cannot_run("setpriv cannot run a command as nobody here: the group member's reads and locks were not tried");
    }
    // verify does not warn about a block the group may read; it does when others may.
    let out = w.ok(&["verify", "--game", &game, FOLDER]);
    assert!(
        !text(&out).contains("readable") && !text(&out).contains("may read it"),
        "{}",
        text(&out)
    );
    fs::set_permissions(
        folder.join("block-00002.csv"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let out = w.ok(&["verify", "--game", &game, FOLDER]);
    says(
        &out,
        "block-00002.csv has mode 0644: every user of this machine may read it",
    );
    assert!(
        !text(&out).contains("block-00001.csv has mode"),
        "{}",
        text(&out)
    );

    // An emission made private, given to the group by seal --group (and by seed --group).
    let w = Workdir::new();
    for first in ["1", "2"] {
        emit(
            &w,
            &[
                "--seed",
                SEED,
                "--first-block",
                first,
                "--emission-blocks",
                "2",
            ],
            0,
        );
    }
    let folder = w.path(FOLDER);
    assert_modes(&folder, 0o700, 0o600, "without --group");
    w.ok(&[
        "seal",
        FOLDER,
        "--signing-key",
        KEY_FILE,
        "--game",
        &game,
        "--group",
        "users",
    ]);
    assert_modes(&folder, 0o750, 0o640, "after seal --group users");
    let w = Workdir::new();
    fixed_test_key(&w);
    let [a, b] = [0, 1].map(|_| age::x25519::Identity::generate().to_public().to_string());
    let out = w.run(&[
        "seed",
        "--signing-key",
        "keys/signing-key.pem",
        "--game",
        &game,
        "--price",
        "2",
        "--group",
        "users",
        "--shares-needed",
        "2",
        "--out",
        "shares",
        "--recipient",
        &a,
        "--recipient",
        &b,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_modes(&w.path(FOLDER), 0o750, 0o640, "after seed --group users");
}

/// The id of group `name`, from `getent group`.
fn group_of(name: &str) -> Option<u32> {
    let out = Command::new("getent").args(["group", name]).output().ok()?;
    let line = String::from_utf8(out.stdout).ok()?;
    line.trim().split(':').nth(2)?.parse().ok()
}

#[test]
fn a_reshare_refuses_old_shares_others_may_read_unless_allowed_and_then_warns() {
    let w = Workdir::new();
    fixed_test_key(&w);
    let (shares, ids) = share_set(&w);
    fs::set_permissions(w.path(&shares[1]), fs::Permissions::from_mode(0o644)).unwrap();
    let carol = age::x25519::Identity::generate().to_public().to_string();
    let dave = age::x25519::Identity::generate().to_public().to_string();
    let game = data("mini-ruche.toml");
    let reshare = |extra: &[&str], code: i32| {
        let mut args = vec![
            "seed",
            "--reshare",
            "--signing-key",
            "keys/signing-key.pem",
            "--game",
            &game,
            "--price",
            "2",
            "--share",
            &shares[0],
            "--share",
            &shares[1],
            "--identity",
            &ids[0],
            "--identity",
            &ids[1],
            "--shares-needed",
            "2",
            "--out",
            "new-shares",
            "--recipient",
            &carol,
            "--recipient",
            &dave,
        ];
        args.extend_from_slice(extra);
        w.run_expect(&args, code)
    };
    let out = reshare(&[], 2);
    says(&out, &format!("{} has mode 0644", shares[1]));
    assert!(!w.path("new-shares").exists(), "nothing written");
    // Allowed: the reshare is made, and says which file others could read.
    let out = reshare(&["--allow-insecure-key"], 0);
    says(&out, &format!("warning: {} has mode 0644", shares[1]));
    assert!(w.path("new-shares").is_dir());
}

/// An emission folder found already there must be this user's and closed to others' writes:
/// made beforehand by another account, or left 0777, its owner (or anyone) could replace the
/// emission's files and lock between two runs. It was used as it was, without a word.
#[test]
fn an_emission_folder_another_user_owns_or_may_write_into_is_refused() {
    let w = Workdir::new();
    let folder = w.path(FOLDER);
    fs::create_dir_all(&folder).unwrap();
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(mode(&folder), 0o777, "the folder is really open");
    let out = emit(&w, &["--seed", SEED], 2);
    says(&out, "others may write into it");
    says(&out, "chmod go-w");
    assert_eq!(
        fs::read_dir(&folder).unwrap().count(),
        0,
        "nothing was written"
    );
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o700)).unwrap();
    emit(&w, &["--seed", SEED], 0);
    if !rustix::process::geteuid().is_root() {
        return cannot_run("giving a folder to another user needs root here");
    }
    let w = Workdir::new();
    let folder = w.path(FOLDER);
    fs::create_dir_all(&folder).unwrap();
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&folder, Some(65534), Some(65534)).unwrap();
    let out = emit(&w, &["--seed", SEED], 2);
    says(&out, "belongs to user id 65534");
    assert_eq!(
        fs::read_dir(&folder).unwrap().count(),
        0,
        "nothing was written"
    );
}
