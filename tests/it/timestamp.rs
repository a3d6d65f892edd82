//! Trusted timestamps (RFC 3161) through the real binary, against real time-stamping
//! authorities made here with OpenSSL: a test CA, a TSA certificate (extendedKeyUsage critical
//! timeStamping), an `openssl ts` configuration, and a local HTTP server that pipes each request
//! into `openssl ts -reply`. `seed` and `seal` get tokens, `openssl ts -verify` accepts them,
//! `verify --tsa-cert` prints their time, and each kind of bad token is refused.

use crate::common;
use age::secrecy::ExposeSecret;
use common::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The production emission made by `seed` (mini game, emission 1).
const PRODUCTION: &str = "emissions/mini-ruche/2/e0001";

/// A TSA made with OpenSSL: its folder, CA certificate, TSA certificate and `openssl ts`
/// configuration.
struct Tsa {
    ca: PathBuf,
    cert: PathBuf,
    config: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {}:\n{}",
        args.join(" "),
        text(&out)
    );
    out
}

/// A CA and a TSA certified by it, in `dir`: `key` is `rsa` (ESSCertIDv2, SHA-256) or `ec`
/// (P-256, ESSCertID v1, SHA-1), so both kinds of key and of certificate id are checked.
fn make_tsa(dir: &Path, name: &str, key: &str) -> Tsa {
    std::fs::create_dir_all(dir).unwrap();
    let newkey = match key {
        "rsa" => vec!["-newkey", "rsa:2048"],
        _ => vec!["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
    };
    let ca_subject = format!("/CN=Test CA {name}");
    let mut args = vec![
        "req", "-x509", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
    ];
    args.extend(["-days", "3650", "-subj", &ca_subject]);
    args.extend(&newkey);
    openssl(dir, &args);
    let tsa_subject = format!("/CN=Test TSA {name}");
    let mut args = vec![
        "req", "-new", "-nodes", "-keyout", "tsa.key", "-out", "tsa.csr",
    ];
    args.extend(["-subj", &tsa_subject]);
    args.extend(&newkey);
    openssl(dir, &args);
    std::fs::write(
        dir.join("tsa.ext"),
        "basicConstraints = CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = critical, timeStamping\nsubjectKeyIdentifier = hash\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "3650",
            "-out",
            "tsa.pem",
            "-extfile",
            "tsa.ext",
        ],
    );
    std::fs::write(dir.join("tsaserial"), "01\n").unwrap();
    let ess = if key == "rsa" { "sha256" } else { "sha1" };
    std::fs::write(
        dir.join("ts.cnf"),
        format!(
            "[ tsa ]\ndefault_tsa = tsa_config1\n\n[ tsa_config1 ]\ndir = {}\nserial = $dir/tsaserial\ncrypto_device = builtin\nsigner_cert = $dir/tsa.pem\ncerts = $dir/tsa.pem\nsigner_key = $dir/tsa.key\nsigner_digest = sha256\ndefault_policy = 1.2.3.4.1\ndigests = sha256, sha384, sha512\naccuracy = secs:1\nordering = no\ntsa_name = yes\ness_cert_id_chain = no\ness_cert_id_alg = {ess}\n",
            dir.display()
        ),
    )
    .unwrap();
    Tsa {
        ca: dir.join("ca.pem"),
        cert: dir.join("tsa.pem"),
        config: dir.join("ts.cnf"),
    }
}

/// `openssl ts -reply` to the request file `query`: the reply's bytes.
fn reply_to(tsa: &Tsa, query: &Path) -> Vec<u8> {
    let out = query.with_extension("reply");
    openssl(
        tsa.config.parent().unwrap(),
        &[
            "ts",
            "-reply",
            "-config",
            tsa.config.to_str().unwrap(),
            "-queryfile",
            query.to_str().unwrap(),
            "-out",
            out.to_str().unwrap(),
        ],
    );
    read(&out)
}

/// Serves `tsa` over HTTP on a local port, one request at a time, each piped into
/// `openssl ts -reply`; stops by itself after `requests` requests or two minutes. Returns
/// the URL.
fn serve(tsa: &Tsa, requests: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/tsa", listener.local_addr().unwrap());
    let (config, dir) = (
        tsa.config.clone(),
        tsa.config.parent().unwrap().to_path_buf(),
    );
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut served = 0;
        while served < requests && Instant::now() < deadline {
            let (mut stream, _) = match listener.accept() {
                Ok(s) => s,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
            };
            served += 1;
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            let body = loop {
                let n = stream.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break None;
                }
                got.extend_from_slice(&buf[..n]);
                let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
                    continue;
                };
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                assert!(
                    head.contains("content-type: application/timestamp-query"),
                    "{head}"
                );
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map(|v| v.trim().parse().unwrap())
                    .unwrap();
                if got.len() >= end + 4 + length {
                    break Some(got[end + 4..end + 4 + length].to_vec());
                }
            };
            let Some(body) = body else { continue };
            let query = dir.join(format!("served-{served}.tsq"));
            std::fs::write(&query, body).unwrap();
            let tsa = Tsa {
                ca: PathBuf::new(),
                cert: PathBuf::new(),
                config: config.clone(),
            };
            let reply = reply_to(&tsa, &query);
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    reply.len()
                )
                .as_bytes(),
            );
            let _ = stream.write_all(&reply);
        }
    });
    url
}

/// `openssl ts -verify` of the token `tsr` over `data`, against the TSA's CA.
fn openssl_accepts(tsa: &Tsa, data: &Path, tsr: &Path) {
    let out = Command::new("openssl")
        .args(["ts", "-verify", "-data"])
        .arg(data)
        .arg("-in")
        .arg(tsr)
        .arg("-CAfile")
        .arg(&tsa.ca)
        .arg("-untrusted")
        .arg(&tsa.cert)
        .output()
        .unwrap();
    assert!(
        out.status.success() && text(&out).contains("Verification: OK"),
        "openssl ts -verify refused {}:\n{}",
        tsr.display(),
        text(&out)
    );
}

/// Two custodians (age identities made with the age crate), as in tests/it/custody.rs.
fn custodians(w: &Workdir) -> (Vec<String>, Vec<String>) {
    let (mut ids, mut recipients) = (Vec::new(), Vec::new());
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
        recipients.push(identity.to_public().to_string());
    }
    (ids, recipients)
}

fn seed_args<'a>(game: &'a str, recipients: &'a [String], number: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "seed",
        "--game",
        game,
        "--price",
        "2",
        "--emission",
        number,
        "--shares-needed",
        "2",
        "--out",
        "shares",
        "--signing-key",
        "keys/signing-key.pem",
    ];
    for r in recipients {
        args.extend(["--recipient", r.as_str()]);
    }
    args
}

fn verify(w: &Workdir, folder: &str, certs: &[&Path], code: i32) -> String {
    let mut args = vec!["verify".to_string(), "--quiet".to_string()];
    for c in certs {
        args.extend(["--tsa-cert".to_string(), c.display().to_string()]);
    }
    args.push(folder.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    text(&w.run_expect(&args, code))
}

#[test]
fn seed_and_seal_get_tokens_that_openssl_accepts_and_verify_refuses_every_bad_one() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    fixed_test_key(&w);
    let a = make_tsa(&w.path("tsa-a"), "A", "rsa");
    let b = make_tsa(&w.path("tsa-b"), "B", "ec");
    let url = serve(&a, 4);
    let game = data("mini-ruche.toml");
    let (ids, recipients) = custodians(&w);
    let mut args = seed_args(&game, &recipients, "1");
    let cert_a = a.cert.to_str().unwrap();
    args.extend(["--tsa-url", &url, "--tsa-cert", cert_a]);
    let said = text(&w.ok(&args));
    assert!(
        said.contains("timestamp:") && said.contains("existed by 20"),
        "{said}"
    );
    let folder = w.path(PRODUCTION);
    let (record, record_tsr) = (
        folder.join("emission.json"),
        folder.join("emission.json.tsr"),
    );
    openssl_accepts(&a, &record, &record_tsr);
    // The record names the TSA it asked: a deleted token is a failure, never a skip.
    let named: serde_json::Value = serde_json::from_slice(&read(&record)).unwrap();
    assert_eq!(named["timestamp_authority_sha256"], sha256_of_der(&a.cert));

    // One block with the custodians' shares, then the seal, with its own token.
    let mut args = vec![
        "emit",
        "--game",
        &game,
        "--price",
        "2",
        "--emission",
        "1",
        "--signing-key",
        "keys/signing-key.pem",
        "--quiet",
    ];
    let shares: Vec<String> = (1..=2)
        .map(|i| format!("shares/mini-ruche-2-e0001.share-{i}-of-2.age"))
        .collect();
    for (s, i) in shares.iter().zip(&ids) {
        args.extend(["--share", s.as_str(), "--identity", i.as_str()]);
    }
    w.ok(&args);
    let folder_text = folder.to_str().unwrap();
    let said = text(&w.ok(&[
        "seal",
        "--game",
        &game,
        "--blocks",
        "1",
        "--signing-key",
        "keys/signing-key.pem",
        "--tsa-url",
        &url,
        "--tsa-cert",
        cert_a,
        folder_text,
    ]));
    assert!(
        said.contains("timestamp:") && said.contains("emission.seal.json.tsr"),
        "{said}"
    );
    let (seal, seal_tsr) = (
        folder.join("emission.seal.json"),
        folder.join("emission.seal.json.tsr"),
    );
    openssl_accepts(&a, &seal, &seal_tsr);

    let said = verify(&w, PRODUCTION, &[&a.cert], 0);
    assert_eq!(said.matches("timestamp OK:").count(), 2, "{said}");
    assert!(said.contains("emission.json existed by 20"), "{said}");
    assert!(said.contains("emission.seal.json existed by 20"), "{said}");
    assert!(said.contains("TSA 'CN=Test TSA A'"), "{said}");

    // A pack carries both tokens (it refused the folder before: "not a file of an emission"),
    // verify PACK checks them as on the folder, and unpack gives them back byte for byte.
    let id = age::x25519::Identity::generate();
    std::fs::write(
        w.path("archive.key"),
        format!("{}\n", id.to_string().expose_secret()),
    )
    .unwrap();
    std::fs::set_permissions(
        w.path("archive.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let recipient = id.to_public().to_string();
    let pack_args = |certs: &[&str]| {
        let mut args = vec!["pack", "--recipient", &recipient, "--out", "e0001.pack"];
        for c in certs {
            args.extend(["--tsa-cert", c]);
        }
        args.push(folder_text);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let refused = pack_args(&[]);
    let refused: Vec<&str> = refused.iter().map(String::as_str).collect();
    let said = text(&w.run_expect(&refused, 2));
    assert!(said.contains("no --tsa-cert was given"), "{said}");
    let args = pack_args(&[cert_a]);
    w.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let said = text(&w.run_expect(
        &[
            "verify",
            "--identity",
            "archive.key",
            "--tsa-cert",
            cert_a,
            "e0001.pack",
        ],
        0,
    ));
    assert_eq!(said.matches("timestamp OK:").count(), 2, "{said}");
    let said = text(&w.run_expect(&["verify", "--identity", "archive.key", "e0001.pack"], 1));
    assert!(said.contains("no --tsa-cert was given"), "{said}");
    std::fs::create_dir(w.path("restored")).unwrap();
    // unpack checks the restored folder as verify does, its tokens included: the TSA's
    // certificate is needed, and nothing is restored without it.
    let said = text(&w.run_expect(
        &[
            "unpack",
            "--identity",
            "archive.key",
            "--out",
            "restored",
            "e0001.pack",
        ],
        2,
    ));
    assert!(said.contains("no --tsa-cert was given"), "{said}");
    assert_eq!(std::fs::read_dir(w.path("restored")).unwrap().count(), 0);
    w.ok(&[
        "unpack",
        "--identity",
        "archive.key",
        "--tsa-cert",
        cert_a,
        "--out",
        "restored",
        "e0001.pack",
    ]);
    let restored = w.path("restored/mini-ruche/2/e0001");
    for token in ["emission.json.tsr", "emission.seal.json.tsr"] {
        assert_eq!(
            read(&restored.join(token)),
            read(&folder.join(token)),
            "{token}"
        );
    }

    // A token present and no certificate to check it: said, and a failure.
    let said = verify(&w, PRODUCTION, &[], 1);
    assert!(
        said.contains("no --tsa-cert was given to check it"),
        "{said}"
    );
    // The certificate of another TSA than the one the record names.
    let said = verify(&w, PRODUCTION, &[&b.cert], 1);
    assert!(said.contains("no --tsa-cert given is that one"), "{said}");

    let keep = |p: &Path| read(p);
    let (record_token, seal_token) = (keep(&record_tsr), keep(&seal_tsr));
    let restore = || {
        std::fs::write(&record_tsr, &record_token).unwrap();
        std::fs::write(&seal_tsr, &seal_token).unwrap();
        verify(&w, PRODUCTION, &[&a.cert], 0);
    };

    // A token over another file: the two swapped.
    std::fs::write(&record_tsr, &seal_token).unwrap();
    std::fs::write(&seal_tsr, &record_token).unwrap();
    let said = verify(&w, PRODUCTION, &[&a.cert], 1);
    assert_eq!(
        said.matches("it is a token of another file").count(),
        2,
        "{said}"
    );
    restore();

    // A token by another TSA (another CA), over the very bytes of the record.
    let query = w.path("other-tsa.tsq");
    openssl(
        &w.path(""),
        &[
            "ts",
            "-query",
            "-data",
            record.to_str().unwrap(),
            "-sha256",
            "-cert",
            "-out",
            query.to_str().unwrap(),
        ],
    );
    std::fs::write(&record_tsr, reply_to(&b, &query)).unwrap();
    openssl_accepts(&b, &record, &record_tsr);
    let said = verify(&w, PRODUCTION, &[&a.cert], 1);
    assert!(
        said.contains("its signer is not that certificate"),
        "{said}"
    );
    let said = verify(&w, PRODUCTION, &[&a.cert, &b.cert], 1);
    assert!(
        said.contains("emission.json.tsr: the trusted timestamp of"),
        "{said}"
    );
    restore();

    // A tampered byte: in the signature (the last byte), and in the signed TSTInfo (its
    // policy 1.2.3.4.1 made 1.2.3.4.2).
    let mut tampered = record_token.clone();
    *tampered.last_mut().unwrap() ^= 1;
    std::fs::write(&record_tsr, &tampered).unwrap();
    let said = verify(&w, PRODUCTION, &[&a.cert], 1);
    assert!(said.contains("signature does not verify"), "{said}");
    let mut tampered = record_token.clone();
    let at = tampered
        .windows(6)
        .position(|w| w == [0x06, 0x04, 0x2a, 0x03, 0x04, 0x01])
        .expect("the policy OID in the token");
    tampered[at + 5] = 0x02;
    std::fs::write(&record_tsr, &tampered).unwrap();
    let said = verify(&w, PRODUCTION, &[&a.cert], 1);
    assert!(said.contains("is not the digest of its TSTInfo"), "{said}");
    restore();

    // A deleted token, when the record or the seal says one was asked.
    for token in [&record_tsr, &seal_tsr] {
        std::fs::remove_file(token).unwrap();
        let said = verify(&w, PRODUCTION, &[&a.cert], 1);
        assert!(
            said.contains("says a trusted timestamp was asked for it"),
            "{said}"
        );
        assert!(said.contains("is missing"), "{said}");
        restore();
    }

    // An emission sealed by the emit run that completes its planned blocks: its record asked a
    // token, so its seal names the same TSA and fails verify until `timestamp --seal` gets it.
    let mut args = seed_args(&game, &recipients, "2");
    args.extend([
        "--emission-blocks",
        "1",
        "--tsa-url",
        &url,
        "--tsa-cert",
        cert_a,
    ]);
    w.ok(&args);
    let shares: Vec<String> = (1..=2)
        .map(|i| format!("shares/mini-ruche-2-e0002.share-{i}-of-2.age"))
        .collect();
    let mut args = vec![
        "emit",
        "--game",
        &game,
        "--price",
        "2",
        "--emission",
        "2",
        "--signing-key",
        "keys/signing-key.pem",
        "--quiet",
    ];
    for (s, i) in shares.iter().zip(&ids) {
        args.extend(["--share", s.as_str(), "--identity", i.as_str()]);
    }
    w.ok(&args);
    let second = "emissions/mini-ruche/2/e0002";
    assert!(w.path(second).join("emission.seal.json").exists());
    let said = verify(&w, second, &[&a.cert], 1);
    assert!(
        said.contains("emission.seal.json says a trusted timestamp was asked for it"),
        "{said}"
    );
    let said = text(&w.ok(&[
        "timestamp",
        second,
        "--seal",
        "--tsa-cert",
        cert_a,
        "--tsa-url",
        &url,
    ]));
    assert!(said.contains("emission.seal.json existed by 20"), "{said}");
    let said = verify(&w, second, &[&a.cert], 0);
    assert_eq!(said.matches("timestamp OK:").count(), 2, "{said}");
}

/// SHA-256 of a PEM certificate's DER, hex.
fn sha256_of_der(pem: &Path) -> String {
    use sha2::{Digest, Sha256};
    let out = Command::new("openssl")
        .args(["x509", "-outform", "DER", "-in"])
        .arg(pem)
        .output()
        .unwrap();
    assert!(out.status.success());
    hex::encode(Sha256::digest(&out.stdout))
}

#[test]
fn the_file_mode_carries_a_request_and_takes_back_only_its_own_reply() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    fixed_test_key(&w);
    let b = make_tsa(&w.path("tsa-b"), "B", "ec");
    let game = data("mini-ruche.toml");
    // A test emission: its record is made by emit, without a token; `timestamp` gets one
    // later, through files.
    w.ok(&[
        "emit",
        "--game",
        &game,
        "--price",
        "2",
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--quiet",
    ]);
    let folder = "emissions/mini-ruche/2/e0001";
    let record = w.path(folder).join("emission.json");
    let cert_b = b.cert.to_str().unwrap();
    let request_out = |out: &str, code| {
        text(&w.run_expect(
            &[
                "timestamp",
                folder,
                "--tsa-cert",
                cert_b,
                "--tsa-request-out",
                out,
            ],
            code,
        ))
    };
    // `-` is no file name here: the request is binary, standard output the report's (it made
    // a file named `-` before).
    let said = request_out("-", 2);
    assert!(said.contains("standard output"), "{said}");
    assert!(!w.path("-").exists());
    assert!(!w.path(folder).join("emission.json.tsq").exists());
    let said = request_out("carried.tsq", 0);
    assert!(said.contains("request written to"), "{said}");
    assert!(w.path(folder).join("emission.json.tsq").exists());
    assert!(!w.path(folder).join("emission.json.tsr").exists());

    // A reply to another request over the same file (another nonce) is refused.
    let other = w.path("other.tsq");
    openssl(
        &w.path(""),
        &[
            "ts",
            "-query",
            "-data",
            record.to_str().unwrap(),
            "-sha256",
            "-cert",
            "-out",
            other.to_str().unwrap(),
        ],
    );
    std::fs::write(w.path("other.tsr"), reply_to(&b, &other)).unwrap();
    let said = text(&w.run_expect(
        &[
            "timestamp",
            folder,
            "--tsa-cert",
            cert_b,
            "--tsa-reply",
            "other.tsr",
        ],
        2,
    ));
    assert!(said.contains("does not echo the request's nonce"), "{said}");
    assert!(!w.path(folder).join("emission.json.tsr").exists());

    // The reply to the carried request is taken, and the kept request removed.
    std::fs::write(w.path("carried.tsr"), reply_to(&b, &w.path("carried.tsq"))).unwrap();
    let said = text(&w.ok(&[
        "timestamp",
        folder,
        "--tsa-cert",
        cert_b,
        "--tsa-reply",
        "carried.tsr",
    ]));
    assert!(said.contains("existed by 20"), "{said}");
    assert!(!w.path(folder).join("emission.json.tsq").exists());
    let token = w.path(folder).join("emission.json.tsr");
    openssl_accepts(&b, &record, &token);
    // A token is never replaced.
    let said = request_out("again.tsq", 2);
    assert!(said.contains("never replaced"), "{said}");

    let said = verify(&w, folder, &[&b.cert], 0);
    assert!(
        said.contains("timestamp OK:") && said.contains("TSA 'CN=Test TSA B'"),
        "{said}"
    );
    assert!(!said.contains("no trusted timestamp"), "{said}");

    // A token got later is named by nothing signed: deleting it fails nothing, but a reader
    // who gives a TSA certificate is told there is nothing to check (it said OK in silence).
    std::fs::remove_file(&token).unwrap();
    let said = verify(&w, folder, &[&b.cert], 0);
    assert!(!said.contains("timestamp OK:"), "{said}");
    assert!(
        said.contains("emission.json: no trusted timestamp (")
            && said.contains("emission.json.tsr absent)"),
        "{said}"
    );
}

#[test]
fn a_certificate_that_is_not_a_tsa_s_or_an_https_url_is_refused_before_anything_is_made() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    fixed_test_key(&w);
    let a = make_tsa(&w.path("tsa-a"), "A", "rsa");
    let game = data("mini-ruche.toml");
    let (_, recipients) = custodians(&w);
    let ca = a.ca.to_str().unwrap();
    let cert = a.cert.to_str().unwrap();
    for (extra, needle) in [
        (
            ["--tsa-url", "http://127.0.0.1:9/", "--tsa-cert", ca],
            "extended key usage",
        ),
        (
            ["--tsa-url", "https://tsa.example/", "--tsa-cert", cert],
            "https is not supported",
        ),
    ] {
        let mut args = seed_args(&game, &recipients, "1");
        args.extend(extra);
        let said = text(&w.run_expect(&args, 2));
        assert!(said.contains(needle), "{said}");
        assert!(!w.path("emissions/mini-ruche").exists(), "{said}");
        assert!(!w.path("shares").exists(), "{said}");
    }
}

/// A beacon round must come after the record's trusted time, not only after the date the
/// record gives itself (issue 24): a ceremony dated back to before round 3 of quicknet (2023,
/// with SOURCE_DATE_EPOCH, as a dishonest operator would date it) whose token the TSA signs
/// today is refused by verify, which names the round and the token's time; the same ceremony
/// naming a round after the token is not.
#[test]
fn a_beacon_round_published_before_the_record_s_trusted_time_is_refused() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    fixed_test_key(&w);
    let tsa = make_tsa(&w.path("tsa"), "A", "rsa");
    let url = serve(&tsa, 2);
    let game = data("mini-ruche.toml");
    let (_, recipients) = custodians(&w);
    let cert = tsa.cert.to_str().unwrap();
    let mut args = seed_args(&game, &recipients, "1");
    args.extend(["--tsa-url", &url, "--tsa-cert", cert, "--beacon-round", "3"]);
    // 2023-08-23T15:03:20Z, before round 3 (2023-08-23T15:09:33Z).
    let out = w
        .command(&args)
        .env("SOURCE_DATE_EPOCH", "1692803000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(w.path(PRODUCTION).join("emission.json.tsr").exists());
    let said = verify(&w, PRODUCTION, &[&tsa.cert], 1);
    assert!(
        said.contains("names round 3 of")
            && said.contains("2023-08-23T15:09:33Z")
            && said.contains("the round was out before the record is proven to exist"),
        "{said}"
    );
    let json = text(&w.run_expect(&["verify", "--json", "--tsa-cert", cert, PRODUCTION], 1));
    assert!(json.contains("\"emission.beacon_too_early\""), "{json}");
    // The same ceremony, honest: dated now, naming a round a day ahead.
    let mut args = seed_args(&game, &recipients, "2");
    let tomorrow = rfc3339_in(86_400);
    args.extend([
        "--tsa-url",
        &url,
        "--tsa-cert",
        cert,
        "--beacon-after",
        &tomorrow,
    ]);
    w.ok(&args);
    let folder = PRODUCTION.replace("e0001", "e0002");
    let said = text(&w.run(&["verify", "--tsa-cert", cert, &folder]));
    assert!(!said.contains("the round was out"), "{said}");
    assert!(said.contains("existed by 20"), "{said}");
    assert!(!said.contains("named no beacon round"), "{said}");
    // A production ceremony that named no round: verify says what that leaves unproven.
    let args = seed_args(&game, &recipients, "3");
    w.ok(&args);
    let folder = PRODUCTION.replace("e0001", "e0003");
    let said = text(&w.run(&["verify", &folder]));
    assert!(said.contains("named no beacon round"), "{said}");
}

#[test]
fn a_beacon_round_within_the_token_s_accuracy_is_refused_and_the_accuracy_is_said() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    fixed_test_key(&w);
    // A TSA that vouches for its genTime only to within two minutes (RFC 3161 accuracy).
    let tsa = make_tsa(&w.path("tsa"), "A", "rsa");
    let config = std::fs::read_to_string(&tsa.config).unwrap();
    std::fs::write(
        &tsa.config,
        config.replace("accuracy = secs:1", "accuracy = secs:120"),
    )
    .unwrap();
    let url = serve(&tsa, 2);
    let game = data("mini-ruche.toml");
    let (_, recipients) = custodians(&w);
    let cert = tsa.cert.to_str().unwrap();
    // Ceremony `number`, dated now, naming the first round `seconds` from now: what it said.
    let ceremony = |number: &str, seconds: u64| {
        let after = rfc3339_in(seconds);
        let mut args = seed_args(&game, &recipients, number);
        args.extend([
            "--tsa-url",
            &url,
            "--tsa-cert",
            cert,
            "--beacon-after",
            &after,
        ]);
        let out = w
            .command(&args)
            .env_remove("SOURCE_DATE_EPOCH")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    // A round some 20 s after the ceremony: after genTime, but within its 120 s accuracy, so
    // the token does not prove that the record existed before the round was out.
    let said = ceremony("1", 20);
    assert!(said.contains("± 120 s (so by 20"), "{said}");
    let said = verify(&w, PRODUCTION, &[&tsa.cert], 1);
    assert!(
        said.contains("the round was out before the record is proven to exist"),
        "{said}"
    );
    // The same ceremony with a round a day ahead: accepted, and the time printed says the
    // accuracy and the latest time it leaves.
    ceremony("2", 86_400);
    let folder = PRODUCTION.replace("e0001", "e0002");
    let said = verify(&w, &folder, &[&tsa.cert], 0);
    assert!(
        said.contains("emission.json existed by 20") && said.contains("± 120 s (so by 20"),
        "{said}"
    );
}

/// The time `seconds` from now, as `--beacon-after` takes it (RFC 3339, whole seconds).
fn rfc3339_in(seconds: u64) -> String {
    humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() + std::time::Duration::from_secs(seconds),
    )
    .to_string()
}

/// A new age identity `name` in the workdir (mode 0600): its file's name and its public key.
fn age_identity(w: &Workdir, name: &str) -> String {
    let id = age::x25519::Identity::generate();
    std::fs::write(
        w.path(name),
        format!("{}\n", id.to_string().expose_secret()),
    )
    .unwrap();
    std::fs::set_permissions(w.path(name), std::fs::Permissions::from_mode(0o600)).unwrap();
    id.to_public().to_string()
}

/// `verify --identity archive.key [--tsa-cert C]... [extra...] PACK`, requiring exit `code`:
/// its stdout and stderr.
fn verify_pack(w: &Workdir, pack: &str, certs: &[&Path], extra: &[&str], code: i32) -> String {
    text(&verify_pack_out(w, pack, certs, extra, code))
}

/// `verify --json` of [`verify_pack`]: its standard output, parsed.
fn verify_pack_json(w: &Workdir, pack: &str, certs: &[&Path], code: i32) -> serde_json::Value {
    let out = verify_pack_out(w, pack, certs, &["--json"], code);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn verify_pack_out(
    w: &Workdir,
    pack: &str,
    certs: &[&Path],
    extra: &[&str],
    code: i32,
) -> std::process::Output {
    let mut args = vec![
        "verify".to_string(),
        "--quiet".to_string(),
        "--identity".to_string(),
        "archive.key".to_string(),
    ];
    for c in certs {
        args.extend(["--tsa-cert".to_string(), c.display().to_string()]);
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    args.push(pack.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    w.run_expect(&args, code)
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Issue 24 item 2: `pack --tsa-url` keeps a token over the pack file's bytes beside it
/// (PACK.tsr), which `openssl ts -verify` accepts and `verify PACK --tsa-cert` checks over the
/// bytes it reads, printing its time; each attack fails verify: the token of another pack of
/// the same emission put in place, a token of another TSA over the very bytes, one byte of the
/// pack changed (with its token), `--pack-token` given and the token deleted.
#[test]
fn a_pack_gets_its_own_token_and_verify_checks_it_over_the_bytes_it_reads() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    let a = make_tsa(&w.path("tsa-a"), "A", "rsa");
    let b = make_tsa(&w.path("tsa-b"), "B", "ec");
    let url = serve(&a, 2);
    let folder = emit_mini_signed(&w, SEED, "emissions", "1", &["--emission-blocks", "1"]);
    let folder = folder.to_str().unwrap();
    let recipient = age_identity(&w, "archive.key");
    let cert_a = a.cert.to_str().unwrap();
    let pack_args = |out: &str, extra: &[&str]| -> Vec<String> {
        let mut args = vec!["pack", "--recipient", &recipient, "--out", out];
        args.extend_from_slice(extra);
        args.push(folder);
        args.iter().map(|a| a.to_string()).collect()
    };

    // A pack onto standard output has no beside: refused before anything is written.
    let args = pack_args(
        "-",
        &["--tsa-cert", cert_a, "--tsa-url", "http://127.0.0.1:9/"],
    );
    let out = w.run_expect(&strs(&args), 2);
    assert!(out.stdout.is_empty(), "something was written");
    assert!(text(&out).contains("no place beside it"), "{}", text(&out));

    // The pack, then its token over the pack's bytes.
    let mut args = pack_args("e.pack", &["--tsa-cert", cert_a]);
    args.splice(1..1, ["--tsa-url".to_string(), url.clone()]);
    let said = text(&w.ok(&strs(&args)));
    let (pack, token) = (w.path("e.pack"), w.path("e.pack.tsr"));
    assert!(
        said.contains("timestamp:   e.pack existed by 20") && said.contains("e.pack.tsr"),
        "{said}"
    );
    let mode = std::fs::metadata(&token).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    openssl_accepts(&a, &pack, &token);

    let said = verify_pack(&w, "e.pack", &[&a.cert], &[], 0);
    assert!(said.contains("OK      pack e.pack"), "{said}");
    assert!(
        said.contains("timestamp OK: e.pack existed by 20")
            && said.contains("RFC 3161 token e.pack.tsr, TSA 'CN=Test TSA A'"),
        "{said}"
    );
    // The same token named with --pack-token is checked once.
    let said = verify_pack(&w, "e.pack", &[&a.cert], &["--pack-token", "e.pack.tsr"], 0);
    assert_eq!(said.matches("timestamp OK: e.pack").count(), 1, "{said}");
    let json: serde_json::Value = verify_pack_json(&w, "e.pack", &[&a.cert], 0);
    let stamp = &json["pack_timestamps"][0];
    assert_eq!(stamp["token"], "e.pack.tsr");
    assert_eq!(stamp["checked"], true);
    assert_eq!(stamp["ok"], true);
    assert!(stamp["time"].as_str().unwrap().starts_with("20"), "{json}");
    assert_eq!(stamp["tsa"], "CN=Test TSA A");
    assert_eq!(json["ok"], true);
    // Without a certificate, the token is said to be unchecked, never passed as checked.
    let said = verify_pack(&w, "e.pack", &[], &[], 0);
    assert!(
        said.contains("e.pack.tsr is beside the pack") && said.contains("was NOT checked"),
        "{said}"
    );
    assert!(!said.contains("timestamp OK"), "{said}");
    // --pack-token without a certificate to check it is refused outright.
    let out = w.run_expect(
        &[
            "verify",
            "--identity",
            "archive.key",
            "--pack-token",
            "e.pack.tsr",
            "e.pack",
        ],
        2,
    );
    assert!(text(&out).contains("--tsa-cert"), "{}", text(&out));

    // A token is never replaced: a pack of the same name is refused before it is written.
    std::fs::rename(&pack, w.path("kept.pack")).unwrap();
    let mut args = pack_args("e.pack", &["--tsa-cert", cert_a]);
    args.splice(1..1, ["--tsa-url".to_string(), url.clone()]);
    let said = text(&w.run_expect(&strs(&args), 2));
    assert!(said.contains("e.pack.tsr exists"), "{said}");
    assert!(!pack.exists(), "a pack was written: {said}");
    std::fs::rename(w.path("kept.pack"), &pack).unwrap();

    let good_token = read(&token);
    let attack = |name: &str, pack_bytes: &[u8], token_bytes: &[u8]| {
        std::fs::write(w.path(name), pack_bytes).unwrap();
        std::fs::write(w.path(&format!("{name}.tsr")), token_bytes).unwrap();
    };

    // 1. The token of another file put in place: another pack of the same emission (all of
    // it verifies: only the token tells), with e.pack's token.
    w.ok(&strs(&pack_args("f.pack", &[])));
    let other_pack = read(&w.path("f.pack"));
    assert_ne!(other_pack, read(&pack), "the two packs are the same bytes");
    attack("f.pack", &other_pack, &good_token);
    let said = verify_pack(&w, "f.pack", &[&a.cert], &[], 1);
    assert!(said.contains("OK      emission"), "{said}");
    assert!(
        said.contains("FAILED  pack f.pack")
            && said.contains("f.pack.tsr: the trusted timestamp of f.pack does not verify")
            && said.contains("it is a token of another file"),
        "{said}"
    );
    let json: serde_json::Value = verify_pack_json(&w, "f.pack", &[&a.cert], 1);
    assert_eq!(json["ok"], false);
    assert_eq!(json["pack_timestamps"][0]["ok"], false);
    assert_eq!(
        json["pack_timestamps"][0]["problems"][0]["code"],
        "pack.timestamp"
    );

    // 2. A token of another TSA (another CA), over the very bytes of the pack.
    let query = w.path("other-tsa.tsq");
    openssl(
        &w.path(""),
        &[
            "ts",
            "-query",
            "-data",
            pack.to_str().unwrap(),
            "-sha256",
            "-cert",
            "-out",
            query.to_str().unwrap(),
        ],
    );
    let of_b = reply_to(&b, &query);
    attack("g.pack", &read(&pack), &of_b);
    openssl_accepts(&b, &w.path("g.pack"), &w.path("g.pack.tsr"));
    let said = verify_pack(&w, "g.pack", &[&a.cert], &[], 1);
    assert!(
        said.contains("FAILED  pack g.pack")
            && said.contains("g.pack.tsr")
            && said.contains("its signer is not that certificate"),
        "{said}"
    );
    // With B's certificate too, it verifies: the check is the certificate given.
    let said = verify_pack(&w, "g.pack", &[&a.cert, &b.cert], &[], 0);
    assert!(said.contains("TSA 'CN=Test TSA B'"), "{said}");

    // 3. One byte of the pack changed, with its token: no verdict, and no time said.
    let mut changed = read(&pack);
    let at = changed.len() / 2;
    changed[at] ^= 0x01;
    assert_ne!(changed, read(&pack));
    attack("h.pack", &changed, &good_token);
    let said = verify_pack(&w, "h.pack", &[&a.cert], &["--pack-token", "h.pack.tsr"], 2);
    assert!(said.contains("h.pack"), "{said}");
    assert!(
        !said.contains("timestamp OK") && !said.contains("OK      "),
        "{said}"
    );

    // 4. --pack-token given, and the token deleted: a missing piece of evidence fails.
    attack("i.pack", &read(&pack), &good_token);
    verify_pack(&w, "i.pack", &[&a.cert], &["--pack-token", "i.pack.tsr"], 0);
    std::fs::remove_file(w.path("i.pack.tsr")).unwrap();
    let said = verify_pack(&w, "i.pack", &[&a.cert], &["--pack-token", "i.pack.tsr"], 1);
    assert!(
        said.contains("FAILED  pack i.pack")
            && said.contains("--pack-token i.pack.tsr")
            && said.contains("missing piece of evidence"),
        "{said}"
    );
    // Without --pack-token, the pack alone verifies, with no time said.
    let said = verify_pack(&w, "i.pack", &[&a.cert], &[], 0);
    assert!(!said.contains("pack i.pack"), "{said}");
}

/// The pack's token when the TSA cannot be reached: the pack is kept, the command fails saying
/// how to get the token later, and `timestamp --pack` gets it; through files too
/// (`--tsa-request-out`, then `timestamp --pack --tsa-reply`).
#[test]
fn a_pack_whose_tsa_is_down_is_kept_and_timestamp_pack_gets_its_token_later() {
    if !require_tool("openssl", &["version"], "apt-get install openssl") {
        return;
    }
    let w = Workdir::new();
    let a = make_tsa(&w.path("tsa-a"), "A", "rsa");
    let url = serve(&a, 1);
    let folder = emit_mini_signed(&w, SEED, "emissions", "1", &["--emission-blocks", "1"]);
    let folder = folder.to_str().unwrap();
    let recipient = age_identity(&w, "archive.key");
    let cert_a = a.cert.to_str().unwrap();
    let said = text(&w.run_expect(
        &[
            "pack",
            "--recipient",
            &recipient,
            "--tsa-cert",
            cert_a,
            "--tsa-url",
            "http://127.0.0.1:9/tsa",
            "--out",
            "e.pack",
            folder,
        ],
        2,
    ));
    assert!(
        said.contains("the pack e.pack is written and kept, without its trusted timestamp")
            && said
                .contains("emission-factory timestamp --pack e.pack --tsa-cert PEM --tsa-url URL"),
        "{said}"
    );
    assert!(w.path("e.pack").exists() && !w.path("e.pack.tsr").exists());
    verify_pack(&w, "e.pack", &[&a.cert], &[], 0);
    let said = text(&w.ok(&[
        "timestamp",
        "--pack",
        "e.pack",
        "--tsa-cert",
        cert_a,
        "--tsa-url",
        &url,
    ]));
    assert!(said.contains("e.pack existed by 20"), "{said}");
    openssl_accepts(&a, &w.path("e.pack"), &w.path("e.pack.tsr"));
    let said = verify_pack(&w, "e.pack", &[&a.cert], &["--pack-token", "e.pack.tsr"], 0);
    assert!(
        said.contains("timestamp OK: e.pack existed by 20"),
        "{said}"
    );

    // The file mode: the request carried, the reply taken back for it alone.
    w.ok(&[
        "pack",
        "--recipient",
        &recipient,
        "--tsa-cert",
        cert_a,
        "--tsa-request-out",
        "carried.tsq",
        "--out",
        "f.pack",
        folder,
    ]);
    assert!(w.path("f.pack.tsq").exists() && !w.path("f.pack.tsr").exists());
    std::fs::write(w.path("carried.tsr"), reply_to(&a, &w.path("carried.tsq"))).unwrap();
    // A reply over e.pack's bytes is not f.pack's.
    let said = text(&w.run_expect(
        &[
            "timestamp",
            "--pack",
            "f.pack",
            "--tsa-cert",
            cert_a,
            "--tsa-reply",
            "e.pack.tsr",
        ],
        2,
    ));
    assert!(said.contains("--tsa-reply e.pack.tsr"), "{said}");
    assert!(!w.path("f.pack.tsr").exists());
    w.ok(&[
        "timestamp",
        "--pack",
        "f.pack",
        "--tsa-cert",
        cert_a,
        "--tsa-reply",
        "carried.tsr",
    ]);
    assert!(!w.path("f.pack.tsq").exists());
    let said = verify_pack(&w, "f.pack", &[&a.cert], &[], 0);
    assert!(
        said.contains("timestamp OK: f.pack existed by 20"),
        "{said}"
    );
}
