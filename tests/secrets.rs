//! Secret files (seeds and private keys) on the command line: they are made mode 0600 from the
//! start, never written or read through a link, kept only in a folder nobody else can write to,
//! refused when others may read them, and a seed can come from standard input or a file
//! descriptor instead of the process list. Keys of another algorithm are named as what they are.
//!
//! The tests run as root in CI, and root bypasses file modes: they check the mode bits
//! themselves, and probe another user's access only where `setpriv` can run as `nobody`.

#![cfg(unix)]

mod common;
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
fn keygen_makes_a_0600_key_under_any_umask_and_force_never_writes_through_a_link() {
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
    says(&out, "already exists");
    let out = sh_expect(
        &w,
        umask_000,
        &["keygen", "--out", "keys", "--force"],
        b"",
        0,
    );
    says(&out, "mode 0600");
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
/// the way). Elsewhere says it skipped.
fn another_user_cannot_read(w: &Workdir, secret: &str, public: &str) {
    let as_nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .args(args)
            .output()
    };
    if !matches!(as_nobody(&["true"]), Ok(out) if out.status.success()) {
        println!("skipped: setpriv cannot run a command as nobody here");
        return;
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
