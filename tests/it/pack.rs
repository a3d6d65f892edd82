//! Emission packs (issue 24 item 1): `pack` of a sealed emission into age(zstd(tar)), opened by
//! the real `age`, `zstd` and `tar`; `unpack` byte for byte, refusing every hostile member and
//! writing nothing when it fails.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const FOLDER: &str = "emissions/mini-ruche/2/e0001";

/// The pack order of a 3-block emission (docs/FORMAT.md, "Emission pack").
const ORDER: [&str; 16] = [
    "emission.json",
    "emission.json.sig",
    "emission.seal.json",
    "emission.seal.json.sig",
    "emission.log.jsonl",
    "emission.game.toml",
    "emission.pub.pem",
    "block-00001.manifest.json",
    "block-00001.manifest.json.sig",
    "block-00002.manifest.json",
    "block-00002.manifest.json.sig",
    "block-00003.manifest.json",
    "block-00003.manifest.json.sig",
    "block-00001.lines.csv",
    "block-00002.lines.csv",
    "block-00003.lines.csv",
];

/// The files of the folder a pack of [`ORDER`] restores (each block's lines member is its CSV).
fn folder_files() -> Vec<String> {
    ORDER
        .iter()
        .map(|n| n.replace(".lines.csv", ".csv"))
        .collect()
}

/// docs/FORMAT.md's recipe for the CSV of a lines member, with common tools (perl's core
/// Digest::SHA): the header given its `sha256` field back, each ticket line its hash.
const REBUILD_RECIPE: &str = r#"perl -MDigest::SHA=sha256_hex -ne 'chomp; print $. == 1 ? "$_,sha256
" : "$_," . sha256_hex($_) . "
"'"#;

/// A sealed mini emission of 3 blocks, made with the fixed key.
fn sealed(w: &Workdir) -> PathBuf {
    emit_mini_signed(w, SEED, "emissions", "3", &["--emission-blocks", "3"])
}

/// The sealed mini emission packed to `e.pack` for a new identity `id.txt`: the folder, the
/// identity's file and its public key.
fn packed(w: &Workdir) -> (PathBuf, PathBuf, String) {
    let folder = sealed(w);
    let (id, key) = identity(w, "id.txt");
    pack(w, &folder, "e.pack", &[&key], 0);
    (folder, id, key)
}

/// A new age identity in the workdir (mode 0600): its file and its public key.
fn identity(w: &Workdir, name: &str) -> (PathBuf, String) {
    use age::secrecy::ExposeSecret;
    let id = age::x25519::Identity::generate();
    let path = w.path(name);
    std::fs::write(
        &path,
        format!("# test identity\n{}\n", id.to_string().expose_secret()),
    )
    .unwrap();
    chmod(&path, 0o600);
    (path, id.to_public().to_string())
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// SHA-256 of every file of a folder but its working files (names starting with `.`).
fn hashes(folder: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                sha256_file(&e.path()),
            )
        })
        .collect()
}

/// Everything in a folder, recursively, working files included: what a failed unpack must not
/// have left.
fn everything(folder: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(folder).unwrap() {
        let e = e.unwrap();
        out.push(e.file_name().to_string_lossy().into_owned());
        if e.file_type().unwrap().is_dir() {
            out.extend(
                everything(&e.path())
                    .into_iter()
                    .map(|n| format!("{}/{n}", e.file_name().to_string_lossy())),
            );
        }
    }
    out.sort();
    out
}

fn pack(w: &Workdir, folder: &Path, out: &str, recipients: &[&str], code: i32) -> String {
    let mut args = vec!["pack", "--out", out];
    for r in recipients {
        args.extend(["--recipient", r]);
    }
    args.push(folder.to_str().unwrap());
    text(&w.run_expect(&args, code))
}

fn unpack(w: &Workdir, id: &Path, pack: &str, out: &str, code: i32) -> String {
    text(&w.run_expect(
        &[
            "unpack",
            "--identity",
            id.to_str().unwrap(),
            "--out",
            out,
            pack,
        ],
        code,
    ))
}

/// `age -d -i ID FILE | zstd -d`, with the real tools: the tar inside a pack.
fn open_with_tools(id: &Path, pack: &Path) -> Option<Vec<u8>> {
    if !require_tool("age", &["--version"], "apt-get install age")
        || !require_tool("zstd", &["--version"], "apt-get install zstd")
    {
        return None;
    }
    let age = std::process::Command::new("age")
        .args(["-d", "-i"])
        .arg(id)
        .arg(pack)
        .output()
        .unwrap();
    assert!(
        age.status.success(),
        "age -d: {}",
        String::from_utf8_lossy(&age.stderr)
    );
    let mut zstd = std::process::Command::new("zstd")
        .args(["-d", "-c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = zstd.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(&age.stdout));
    let out = zstd.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success(), "zstd -d failed");
    Some(out.stdout)
}

#[test]
fn a_sealed_emission_packs_and_age_zstd_tar_list_and_extract_it_exactly() {
    let w = Workdir::new();
    let folder = sealed(&w);
    let (server, server_key) = identity(&w, "server.txt");
    let (archive, archive_key) = identity(&w, "archive.txt");
    std::fs::write(
        w.path("recipients.txt"),
        format!("{archive_key} # the archive\n"),
    )
    .unwrap();
    let out = text(&w.ok(&[
        "pack",
        "--recipient",
        &server_key,
        "--recipients-file",
        "recipients.txt",
        "--out",
        "e0001.pack",
        FOLDER,
    ]));
    assert!(out.contains("16 files, 3 blocks"), "{out}");
    let pack_path = w.path("e0001.pack");
    assert_eq!(mode(&pack_path), 0o600);
    // Nothing else was left beside it.
    assert_eq!(
        everything(w.dir.path())
            .into_iter()
            .filter(|n| n.starts_with(".e0001"))
            .count(),
        0
    );
    for id in [&server, &archive] {
        let Some(tar_bytes) = open_with_tools(id, &pack_path) else {
            return;
        };
        std::fs::write(w.path("inner.tar"), &tar_bytes).unwrap();
        let listed = w_tar(&w, &["tf", "inner.tar"]);
        let expected: Vec<String> = ORDER
            .iter()
            .map(|n| format!("mini-ruche/2/e0001/{n}"))
            .collect();
        assert_eq!(listed.lines().collect::<Vec<_>>(), expected);
    }
    // `tar x` gives the folder back, byte for byte, once each block's CSV is rebuilt from its
    // lines with FORMAT.md's recipe.
    std::fs::create_dir(w.path("x")).unwrap();
    w_tar(&w, &["xf", "inner.tar", "-C", "x"]);
    let x = w.path("x/mini-ruche/2/e0001");
    if !require_tool(
        "perl",
        &["-MDigest::SHA", "-e", "1"],
        "apt-get install perl",
    ) {
        return;
    }
    for block in 1..=3 {
        let lines = format!("block-{block:05}.lines.csv");
        let csv = format!("block-{block:05}.csv");
        let made = std::process::Command::new("sh")
            .current_dir(&x)
            .arg("-c")
            .arg(format!("{REBUILD_RECIPE} {lines} > {csv} && rm {lines}"))
            .status()
            .unwrap();
        assert!(made.success(), "the recipe on {lines}");
        // The lines are the CSV without its last column: 65 bytes a ticket line, 7 the header.
        assert!(std::fs::metadata(x.join(&csv)).unwrap().len() > 7);
    }
    assert_eq!(hashes(&x), hashes(&folder));
    assert_eq!(hashes(&folder).len(), ORDER.len());
}

fn w_tar(w: &Workdir, args: &[&str]) -> String {
    let out = std::process::Command::new("tar")
        .current_dir(w.dir.path())
        .args(args)
        .output()
        .expect("tar runs");
    assert!(
        out.status.success(),
        "tar {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn an_unsealed_emission_is_not_packed_and_the_error_names_the_fix() {
    let w = Workdir::new();
    fixed_test_key(&w);
    w.ok(&[
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "-q",
    ]);
    let (_, key) = identity(&w, "id.txt");
    let out = pack(&w, &w.path(FOLDER), "e.pack", &[&key], 2);
    assert!(
        out.contains("is not sealed") && out.contains("emission-factory seal"),
        "{out}"
    );
    assert!(!w.path("e.pack").exists());
    // No recipient: refused before anything.
    let out = pack(&w, &w.path(FOLDER), "e.pack", &[], 2);
    assert!(out.contains("--recipient"), "{out}");
    // A secret key given as a recipient is refused without being echoed.
    let (id, _) = identity(&w, "id2.txt");
    let secret = std::fs::read_to_string(id).unwrap();
    let secret = secret.lines().nth(1).unwrap();
    let out = pack(&w, &w.path(FOLDER), "e.pack", &[secret], 2);
    assert!(!out.contains(secret), "{out}");
}

#[test]
fn pack_never_replaces_a_file_and_a_changed_block_or_a_stray_file_leaves_no_pack() {
    let w = Workdir::new();
    let folder = sealed(&w);
    let (_, key) = identity(&w, "id.txt");
    std::fs::write(w.path("taken.pack"), b"mine").unwrap();
    let out = pack(&w, &folder, "taken.pack", &[&key], 2);
    assert!(out.contains("exists"), "{out}");
    assert_eq!(read(&w.path("taken.pack")), b"mine");

    // A stray file in the folder: refused, named.
    std::fs::write(folder.join("notes.txt"), b"x").unwrap();
    let out = pack(&w, &folder, "a.pack", &[&key], 2);
    assert!(
        out.contains("notes.txt") && out.contains("move it out"),
        "{out}"
    );
    std::fs::remove_file(folder.join("notes.txt")).unwrap();

    // A folder that no longer verifies as a sealed emission (a line of its signed audit log
    // edited): refused, saying to run verify.
    let log = folder.join("emission.log.jsonl");
    let original = read(&log);
    let edited = String::from_utf8(original.clone())
        .unwrap()
        .replacen("\"emit\"", "\"emi7\"", 1);
    assert_ne!(edited.as_bytes(), &original[..]);
    std::fs::write(&log, edited).unwrap();
    let out = pack(&w, &folder, "a.pack", &[&key], 2);
    assert!(
        out.contains("does not verify as a sealed emission")
            && out.contains("emission-factory verify"),
        "{out}"
    );
    std::fs::write(&log, &original).unwrap();

    // A byte of a sealed block changed (its size kept): the manifest and seal still check, the
    // CSV streamed into the pack does not match its signed manifest.
    let csv = folder.join("block-00002.csv");
    let mut bytes = read(&csv);
    let at = bytes.len() - 10;
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(&csv, &bytes).unwrap();
    let out = pack(&w, &folder, "a.pack", &[&key], 2);
    // The last line's hash field was changed: the pack names the block and the line.
    let last_line = bytes.iter().filter(|&&b| b == b'\n').count();
    assert!(
        out.contains("block-00002.csv")
            && out.contains(&format!(
                "line {last_line}: its sha256 field is not the SHA-256"
            ))
            && out.contains("changed"),
        "{out}"
    );
    let left: Vec<String> = everything(w.dir.path())
        .into_iter()
        .filter(|n| n.contains("a.pack"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn unpack_restores_the_folder_byte_for_byte_privately_and_never_over_an_existing_one() {
    let w = Workdir::new();
    let (folder, id, _key) = packed(&w);
    std::fs::create_dir(w.path("restored")).unwrap();
    let out = unpack(&w, &id, "e.pack", "restored", 0);
    assert!(out.contains("restored/mini-ruche/2/e0001"), "{out}");
    let restored = w.path("restored/mini-ruche/2/e0001");
    assert_eq!(hashes(&restored), hashes(&folder));
    assert_eq!(mode(&restored), 0o700);
    for name in folder_files() {
        assert_eq!(mode(&restored.join(&name)), 0o600, "{name}");
    }
    assert_eq!(
        everything(&w.path("restored")),
        ["mini-ruche", "mini-ruche/2", "mini-ruche/2/e0001"]
            .into_iter()
            .map(String::from)
            .chain(
                folder_files()
                    .iter()
                    .map(|n| format!("mini-ruche/2/e0001/{n}"))
            )
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    w.ok(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        "--public-key",
        "keys/public-key.pem",
        "restored/mini-ruche/2/e0001",
    ]);
    // Again: the folder exists, nothing is touched.
    let before = hashes(&restored);
    let out = unpack(&w, &id, "e.pack", "restored", 2);
    assert!(out.contains("exists"), "{out}");
    assert_eq!(hashes(&restored), before);
    assert!(!everything(&w.path("restored"))
        .iter()
        .any(|n| n.contains(".unpack")));
    // Another identity does not open it; an identity others may read is refused.
    let (other, _) = identity(&w, "other.txt");
    std::fs::create_dir(w.path("r2")).unwrap();
    let out = unpack(&w, &other, "e.pack", "r2", 2);
    assert!(out.contains("other recipients"), "{out}");
    chmod(&id, 0o644);
    let out = unpack(&w, &id, "e.pack", "r2", 2);
    assert!(out.contains("chmod 600"), "{out}");
    assert!(everything(&w.path("r2")).is_empty());
}

// ---- hostile packs ----

/// The tar inside a pack, decrypted with the age crate (no tools needed).
fn inner_tar(pack: &[u8], id: &Path) -> Vec<u8> {
    let text = std::fs::read_to_string(id).unwrap();
    let identity: age::x25519::Identity = text.lines().nth(1).unwrap().parse().unwrap();
    let decryptor = age::Decryptor::new_buffered(pack).unwrap();
    let mut reader = decryptor
        .decrypt(std::iter::once(&identity as &dyn age::Identity))
        .unwrap();
    let mut compressed = Vec::new();
    reader.read_to_end(&mut compressed).unwrap();
    zstd::decode_all(&compressed[..]).unwrap()
}

/// A pack of `tar` for `recipient`, made as `pack` makes one.
fn seal_tar(tar: &[u8], recipient: &str) -> Vec<u8> {
    encrypt_to(&zstd::encode_all(tar, 3).unwrap(), recipient)
}

/// `compressed` (a zstd stream) encrypted with age to `recipient` (age1...), as a pack's bytes.
fn encrypt_to(compressed: &[u8], recipient: &str) -> Vec<u8> {
    let recipient: age::x25519::Recipient = recipient.parse().unwrap();
    let encryptor =
        age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
            .unwrap();
    let mut out = Vec::new();
    let mut writer = encryptor.wrap_output(&mut out).unwrap();
    writer.write_all(compressed).unwrap();
    writer.finish().unwrap();
    out
}

/// One member of a hand-made tar.
#[derive(Clone)]
struct Raw {
    name: String,
    kind: tar::EntryType,
    link: Option<String>,
    data: Vec<u8>,
    /// The size the header states, when it is not the data's.
    size: Option<u64>,
}

fn members_of(tar_bytes: &[u8]) -> Vec<Raw> {
    let mut archive = tar::Archive::new(tar_bytes);
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = String::from_utf8(e.path_bytes().into_owned()).unwrap();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            Raw {
                name,
                kind: tar::EntryType::Regular,
                link: None,
                data,
                size: None,
            }
        })
        .collect()
}

/// A tar of `members` written header by header, names as given (the tar crate's own builder
/// refuses `..`; a hostile packer need not).
fn raw_tar(members: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in members {
        let mut header = tar::Header::new_gnu();
        {
            let old = header.as_old_mut();
            assert!(m.name.len() < 100);
            old.name[..m.name.len()].copy_from_slice(m.name.as_bytes());
            if let Some(link) = &m.link {
                old.linkname[..link.len()].copy_from_slice(link.as_bytes());
            }
        }
        header.set_mode(0o600);
        header.set_size(m.size.unwrap_or(m.data.len() as u64));
        header.set_entry_type(m.kind);
        header.set_cksum();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&m.data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.resize(out.len() + 1024, 0);
    out
}

/// Unpacking `bytes` fails, saying `wanted`, and leaves the out folder empty.
fn refused(w: &Workdir, id: &Path, bytes: &[u8], wanted: &str, case: &str) {
    std::fs::write(w.path("hostile.pack"), bytes).unwrap();
    let out_dir = w.path("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir(&out_dir).unwrap();
    let out = unpack(w, id, "hostile.pack", "out", 2);
    assert!(
        out.contains(wanted),
        "{case}: expected {wanted:?} in:\n{out}"
    );
    assert!(
        everything(&out_dir).is_empty(),
        "{case}: left {:?}",
        everything(&out_dir)
    );
    assert!(
        !w.path("escape").exists() && !w.path("out/escape").exists(),
        "{case}"
    );
}

#[test]
fn unpack_refuses_hostile_members_and_writes_nothing() {
    let w = Workdir::new();
    let (folder, id, key) = packed(&w);
    let genuine = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
    assert_eq!(genuine.len(), ORDER.len());
    // The hand-made tar of the genuine members unpacks: the cases below differ by one thing.
    let control = seal_tar(&raw_tar(&genuine), &key);
    std::fs::write(w.path("control.pack"), &control).unwrap();
    std::fs::create_dir(w.path("ok")).unwrap();
    unpack(&w, &id, "control.pack", "ok", 0);
    assert_eq!(hashes(&w.path("ok/mini-ruche/2/e0001")), hashes(&folder));

    let with = |change: &dyn Fn(&mut Vec<Raw>)| {
        let mut members = genuine.clone();
        change(&mut members);
        seal_tar(&raw_tar(&members), &key)
    };
    let prefix = "mini-ruche/2/e0001";
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "climbing name",
            with(&|m| m[4].name = "mini-ruche/../e0001/emission.log.jsonl".into()),
            "refused",
        ),
        (
            "deep climbing name",
            with(&|m| m[4].name = format!("{prefix}/../../../../escape")),
            "not named",
        ),
        (
            "absolute name",
            with(&|m| m[4].name = "/tmp/x/e0001/emission.log.jsonl".into()),
            "not named",
        ),
        (
            "symbolic link",
            with(&|m| {
                m[6].kind = tar::EntryType::Symlink;
                m[6].link = Some("/etc/passwd".into());
                m[6].data.clear();
            }),
            "regular files only",
        ),
        (
            "hard link",
            with(&|m| {
                m[6].kind = tar::EntryType::Link;
                m[6].link = Some(format!("{prefix}/emission.json"));
                m[6].data.clear();
            }),
            "regular files only",
        ),
        (
            "device",
            with(&|m| {
                m[6].kind = tar::EntryType::Char;
                m[6].data.clear();
            }),
            "regular files only",
        ),
        (
            "folder",
            with(&|m| {
                m[6].kind = tar::EntryType::Directory;
                m[6].data.clear();
            }),
            "regular files only",
        ),
        (
            "duplicate name",
            with(&|m| {
                let again = m[0].clone();
                m.insert(1, again);
            }),
            "twice",
        ),
        (
            "out of order",
            with(&|m| m.swap(0, 1)),
            "out of the pack's order",
        ),
        (
            "CSV before its manifest",
            with(&|m| {
                let csv = m.remove(13);
                m.insert(7, csv);
            }),
            "without its manifest before it",
        ),
        (
            "oversized signature",
            with(&|m| m[1].data.push(0)),
            "more than the 64",
        ),
        (
            "CSV larger than its manifest says",
            with(&|m| m[13].data.extend_from_slice(b"x\n")),
            "its manifest's CSV makes",
        ),
        (
            "a CSV changed, its size kept",
            with(&|m| {
                let at = m[14].data.len() - 3;
                m[14].data[at] ^= 1;
            }),
            "the pack was changed",
        ),
        (
            "unknown file",
            with(&|m| {
                let mut extra = m[6].clone();
                extra.name = format!("{prefix}/run.sh");
                m.insert(7, extra);
            }),
            "not a file of an emission",
        ),
        (
            "another emission's member",
            with(&|m| m[4].name = "mini-ruche/2/e0002/emission.log.jsonl".into()),
            "of another emission",
        ),
        (
            "a missing manifest signature",
            with(&|m| {
                m.remove(8);
            }),
            "no manifest signature",
        ),
        (
            "a missing block CSV",
            with(&|m| {
                m.pop();
            }),
            "no CSV",
        ),
        (
            "a stated size larger than the data",
            with(&|m| m[15].size = Some(1 << 40)),
            "refused unread",
        ),
        (
            "every member under a stake that is not canonical (2.00)",
            with(&|m| {
                for member in m.iter_mut() {
                    member.name = member.name.replace("/2/", "/2.00/");
                }
            }),
            "not those of an emission",
        ),
        (
            "every member under a game id that is no game's (upper case)",
            with(&|m| {
                for member in m.iter_mut() {
                    member.name = member.name.replace("mini-ruche/", "Mini-Ruche/");
                }
            }),
            "not those of an emission",
        ),
        // The lines form (block-NNNNN.lines.csv): what does not map back to the CSV exactly.
        (
            "a lines member that kept its hash column (the whole CSV under the lines' name)",
            with(&|m| m[13].data = read(&folder.join("block-00001.csv"))),
            "its manifest's CSV makes",
        ),
        (
            "a lines member with its last two lines joined (the size kept)",
            with(&|m| {
                let data = &mut m[14].data;
                let last = data.len() - 1;
                let before = data[..last].iter().rposition(|&b| b == b'\n').unwrap();
                data.remove(before);
                data.insert(data.len() - 1, b'x');
            }),
            "ticket lines, its manifest counts",
        ),
        (
            "a lines member whose header is the CSV's",
            with(&|m| {
                let data = &mut m[15].data;
                let end = data.iter().position(|&b| b == b'\n').unwrap();
                data.splice(..end, b"serial,prize,layou".iter().copied());
                data.insert(0, b'x');
            }),
            "not the header `serial,prize,layout`",
        ),
        (
            "block 1 twice, as its CSV then as its lines",
            with(&|m| {
                let mut whole = m[13].clone();
                whole.name = format!("{prefix}/block-00001.csv");
                whole.data = read(&folder.join("block-00001.csv"));
                m.insert(13, whole);
            }),
            "not all in one form",
        ),
        (
            "blocks in both forms",
            with(&|m| {
                m[13].name = format!("{prefix}/block-00001.csv");
                m[13].data = read(&folder.join("block-00001.csv"));
            }),
            "not all in one form",
        ),
    ];
    for (case, bytes, wanted) in &cases {
        refused(&w, &id, bytes, wanted, case);
    }

    // Bytes after the tar's end.
    let mut tar = raw_tar(&genuine);
    tar.extend_from_slice(b"appended");
    refused(
        &w,
        &id,
        &seal_tar(&tar, &key),
        "follow the tar's end",
        "appended",
    );
}

/// The header block of a tar extension record ahead of a member: a GNU long name (`L`), a GNU
/// long link name (`K`) or PAX records (`x`), stating `size` bytes of data (its data follows it).
fn extension_header(kind: tar::EntryType, size: u64) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    let name = b"././@LongLink";
    header.as_old_mut().name[..name.len()].copy_from_slice(name);
    header.set_mode(0o644);
    header.set_size(size);
    header.set_entry_type(kind);
    header.set_cksum();
    header.as_bytes().to_vec()
}

/// `data` as the data of a tar record: padded with zeros to its 512-byte blocks.
fn padded(mut data: Vec<u8>) -> Vec<u8> {
    data.resize(data.len().div_ceil(512) * 512, 0);
    data
}

/// The tar crate reads a member's extension records (a GNU long name or long link name, PAX
/// records) whole into memory before it hands the member on, whatever size they state: a
/// pack of a few kilobytes made it hold gigabytes (a 146 KB pack: 10 GB resident, 41 s, for
/// every reader: unpack, verify, report, load). The headers before a member are refused past
/// a bound, unread; a long name of the size `pack` writes still reads.
#[test]
fn a_members_long_name_or_pax_records_past_the_header_bound_are_refused_unread() {
    let w = Workdir::new();
    let (folder, id, key) = packed(&w);
    let genuine = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
    // A long name of the size a member may have (the name and its NUL, as GNU tar writes it)
    // is read as the member's name: the bound refuses no pack that `pack` makes.
    let mut tar = extension_header(
        tar::EntryType::GNULongName,
        genuine[0].name.len() as u64 + 1,
    );
    tar.extend(padded(format!("{}\0", genuine[0].name).into_bytes()));
    tar.extend(raw_tar(&genuine));
    std::fs::write(w.path("long-name.pack"), seal_tar(&tar, &key)).unwrap();
    std::fs::create_dir(w.path("ok")).unwrap();
    unpack(&w, &id, "long-name.pack", "ok", 0);
    assert_eq!(hashes(&w.path("ok/mini-ruche/2/e0001")), hashes(&folder));

    for (kind, case) in [
        (tar::EntryType::GNULongName, "a GNU long name"),
        (tar::EntryType::GNULongLink, "a GNU long link name"),
        (tar::EntryType::XHeader, "PAX records"),
    ] {
        // 256 KiB: well past the bound, small enough for the reader before the fix to read.
        let mut tar = extension_header(kind, 256 << 10);
        tar.extend(vec![b'a'; 256 << 10]);
        tar.extend(raw_tar(&genuine));
        let bytes = seal_tar(&tar, &key);
        refused(&w, &id, &bytes, "refused unread", case);
        std::fs::write(w.path("hostile.pack"), &bytes).unwrap();
        let out = text(&w.run_expect(
            &["verify", "--identity", id.to_str().unwrap(), "hostile.pack"],
            2,
        ));
        assert!(
            out.contains("member 1: its tar headers take more than"),
            "{case}: {out}"
        );
    }
}

/// A pack of a few hundred kilobytes whose first member states a long name of 64 GiB (its data
/// zeros, cut after 768 MiB): read under a limit of 512 MiB of address space, every reader
/// refuses it unread instead of running out of memory.
#[test]
fn a_long_name_bomb_is_refused_in_bounded_memory() {
    let w = Workdir::new();
    let (_folder, id, key) = packed(&w);
    let mut encoder = zstd::Encoder::new(Vec::new(), 1).unwrap();
    encoder
        .write_all(&extension_header(tar::EntryType::GNULongName, 64 << 30))
        .unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..768 {
        encoder.write_all(&zeros).unwrap();
    }
    // Compressed as it is written (768 MiB are never held), then encrypted.
    let bomb = encrypt_to(&encoder.finish().unwrap(), &key);
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    std::fs::write(w.path("bomb.pack"), &bomb).unwrap();
    std::fs::create_dir(w.path("out")).unwrap();
    let id = id.to_str().unwrap();
    for args in [
        vec!["unpack", "--identity", id, "--out", "out", "bomb.pack"],
        vec!["verify", "--identity", id, "bomb.pack"],
        vec!["report", "--identity", id, "bomb.pack"],
    ] {
        let mut cmd = std::process::Command::new("sh");
        cmd.current_dir(w.path(""))
            .args(["-c", r#"ulimit -v 524288 && exec "$0" "$@""#])
            .arg(env!("CARGO_BIN_EXE_emission-factory"))
            .args(&args);
        let done = cmd.output().unwrap();
        let said = text(&done);
        assert_eq!(done.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains("its tar headers take more than") && said.contains("refused unread"),
            "{args:?}: {said}"
        );
    }
    assert!(everything(&w.path("out")).is_empty());
}

/// A pack in the form made before the lines form (each block's CSV whole, `block-NNNNN.csv`)
/// is still read by every reader: archives outlive the program that made them.
#[test]
fn a_pack_of_whole_csvs_the_earlier_form_is_still_verified_and_unpacked() {
    let w = Workdir::new();
    let (folder, id, key) = packed(&w);
    let mut members = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
    let mut whole = 0;
    for m in members.iter_mut() {
        if let Some(stem) = m.name.strip_suffix(".lines.csv") {
            m.name = format!("{stem}.csv");
            let file = m.name.rsplit('/').next().unwrap().to_string();
            m.data = read(&folder.join(file));
            whole += 1;
        }
    }
    assert_eq!(whole, 3, "the pack's three blocks in the earlier form");
    std::fs::write(w.path("old.pack"), seal_tar(&raw_tar(&members), &key)).unwrap();
    let out = text(&w.ok(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        "--public-key",
        "keys/public-key.pem",
        "--identity",
        id.to_str().unwrap(),
        "old.pack",
    ]));
    assert!(out.contains("3 block(s) checked: 3 OK"), "{out}");
    std::fs::create_dir(w.path("restored")).unwrap();
    unpack(&w, &id, "old.pack", "restored", 0);
    assert_eq!(
        hashes(&w.path("restored/mini-ruche/2/e0001")),
        hashes(&folder)
    );
    // The earlier form with one byte of a CSV changed is caught as before.
    let csv = members
        .iter_mut()
        .find(|m| m.name.ends_with("block-00002.csv"))
        .unwrap();
    let at = csv.data.len() / 2;
    csv.data[at] ^= 1;
    std::fs::write(w.path("old2.pack"), seal_tar(&raw_tar(&members), &key)).unwrap();
    let out = text(&w.run_expect(
        &["verify", "--identity", id.to_str().unwrap(), "old2.pack"],
        1,
    ));
    assert!(out.contains("3 block(s) checked: 2 OK, 1 failed"), "{out}");
}

#[test]
fn a_byte_changed_anywhere_in_a_pack_or_a_pack_cut_or_extended_fails_unpack() {
    let w = Workdir::new();
    let (_folder, id, _key) = packed(&w);
    let genuine = read(&w.path("e.pack"));
    let n = genuine.len();
    // The age header (its recipient stanza and its MAC), the payload's nonce, the middle, the
    // last chunk.
    for at in [20, 100, 200, n / 2, n - 20, n - 1] {
        let mut bytes = genuine.clone();
        bytes[at] ^= 0x01;
        refused(&w, &id, &bytes, "", &format!("byte {at} of {n} changed"));
    }
    refused(&w, &id, &genuine[..n - 1], "", "cut by one byte");
    refused(&w, &id, &genuine[..n / 2], "", "cut in half");
    let mut longer = genuine.clone();
    longer.push(0);
    refused(&w, &id, &longer, "", "one byte added");
}

/// One real La ruche d'or block (900 000 tickets): the pack is at most 0.45 of the folder
/// (issue 24), and restores it exactly.
#[test]
fn a_ruche_block_packs_to_under_045_of_its_folder_and_restores_exactly() {
    let w = Workdir::new();
    fixed_test_key(&w);
    w.ok(&[
        "emit",
        "--game",
        "ruche-or",
        "--price",
        "2",
        "--seed",
        SEED,
        "--signing-key",
        "keys/signing-key.pem",
        "--emission-blocks",
        "1",
        "-q",
    ]);
    let folder = w.path("emissions/ruche-or/2/e0001");
    let (id, key) = identity(&w, "id.txt");
    pack(&w, &folder, "e.pack", &[&key], 0);
    let folder_bytes: u64 = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let pack_bytes = std::fs::metadata(w.path("e.pack")).unwrap().len();
    let ratio = pack_bytes as f64 / folder_bytes as f64;
    assert!(
        ratio <= 0.45,
        "pack {pack_bytes} / folder {folder_bytes} = {ratio:.3}"
    );
    std::fs::create_dir(w.path("r")).unwrap();
    unpack(&w, &id, "e.pack", "r", 0);
    assert_eq!(hashes(&w.path("r/ruche-or/2/e0001")), hashes(&folder));

    // A signal while packing (a block takes seconds of CPU): the run stops as a shell expects,
    // and leaves neither the pack nor its temporary file.
    let child = w
        .command(&[
            "pack",
            "--recipient",
            &key,
            "--out",
            "stopped.pack",
            "emissions/ruche-or/2/e0001",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<String> = everything(w.dir.path())
        .into_iter()
        .filter(|n| n.contains("stopped.pack"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `pack --out -` writes the pack onto standard output and its summary onto standard error
/// (issue 19: `-` is standard output wherever a file is written; it made a file named `-`):
/// the bytes are a pack that verifies, and no file is left.
#[test]
fn pack_out_dash_is_standard_output() {
    let w = Workdir::new();
    let folder = sealed(&w);
    let (id, key) = identity(&w, "id.txt");
    let out = w.run_expect(
        &[
            "pack",
            "--out",
            "-",
            "--recipient",
            &key,
            folder.to_str().unwrap(),
        ],
        0,
    );
    assert!(!w.path("-").exists(), "a file named - was written");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("into standard output"), "{said}");
    assert!(
        out.stdout.starts_with(b"age-encryption.org/v1\n"),
        "no age stream on stdout"
    );
    std::fs::write(w.path("s.pack"), &out.stdout).unwrap();
    let of_pack = text(&w.run_expect(&["verify", "--identity", id.to_str().unwrap(), "s.pack"], 0));
    assert!(
        of_pack.contains("3 block(s) checked: 3 OK, 0 failed"),
        "{of_pack}"
    );
    // The same bytes as a pack written to a file (the pack is deterministic but for age's
    // random file key): the same members, so the same size once opened.
    pack(&w, &folder, "f.pack", &[&key], 0);
    let opened = |p: &str| inner_tar(&read(&w.path(p)), &id);
    assert_eq!(opened("s.pack"), opened("f.pack"));
}

/// `verify PACK --identity KEY`: every check of `verify FOLDER`, read as the pack streams.
#[test]
fn verify_of_a_pack_says_ok_with_the_folders_block_count() {
    let w = Workdir::new();
    let (folder, id, _key) = packed(&w);
    let of_folder = text(&w.run_expect(&["verify", folder.to_str().unwrap()], 0));
    let of_pack = text(&w.run_expect(&["verify", "--identity", id.to_str().unwrap(), "e.pack"], 0));
    for summary in [
        "3 block(s) checked: 3 OK, 0 failed",
        "1 emission(s) checked: 1 OK, 0 failed",
    ] {
        assert!(of_folder.contains(summary), "{of_folder}");
        assert!(of_pack.contains(summary), "{of_pack}");
    }
    assert!(
        of_pack.contains("e.pack:mini-ruche/2/e0001/block-00002.csv"),
        "{of_pack}"
    );
    // --json names the pack's members, not the staged files (removed at exit).
    let json: serde_json::Value = serde_json::from_slice(
        &w.run_expect(
            &[
                "verify",
                "--json",
                "--identity",
                id.to_str().unwrap(),
                "e.pack",
            ],
            0,
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(
        json["blocks"][1]["path"],
        "e.pack:mini-ruche/2/e0001/block-00002.csv"
    );
    assert_eq!(json["emissions"][0]["folder"], "e.pack:mini-ruche/2/e0001");
    // Without an identity: the error names the fix.
    let none = text(&w.run_expect(&["verify", "e.pack"], 2));
    assert!(none.contains("--identity"), "{none}");
}

#[test]
fn verify_of_a_pack_with_one_byte_changed_fails() {
    let w = Workdir::new();
    let (_folder, id, _key) = packed(&w);
    let mut bytes = read(&w.path("e.pack"));
    let n = bytes.len();
    bytes[n / 2] ^= 0x01;
    std::fs::write(w.path("bad.pack"), &bytes).unwrap();
    let out = text(&w.run_expect(
        &["verify", "--identity", id.to_str().unwrap(), "bad.pack"],
        2,
    ));
    assert!(out.contains("bad.pack"), "{out}");
    assert!(!out.contains("OK      emission"), "{out}");
}

/// A well-formed pack (right order, right sizes, authenticated: made by anyone with a
/// recipient's key) whose block 2 has one digit changed: only the checks of the lines and hashes,
/// run as the CSV streams, can tell.
#[test]
fn verify_of_a_pack_with_a_block_changed_fails_that_block_and_the_emission() {
    let w = Workdir::new();
    let (_folder, id, key) = packed(&w);
    let mut members = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
    let second = members
        .iter_mut()
        .find(|m| m.name.ends_with("block-00002.lines.csv"))
        .unwrap();
    let half = second.data.len() / 2;
    let at = half
        + second.data[half..]
            .iter()
            .position(u8::is_ascii_digit)
            .unwrap();
    second.data[at] = if second.data[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(w.path("swapped.pack"), seal_tar(&raw_tar(&members), &key)).unwrap();
    let out = text(&w.run_expect(
        &["verify", "--identity", id.to_str().unwrap(), "swapped.pack"],
        1,
    ));
    assert!(out.contains("3 block(s) checked: 2 OK, 1 failed"), "{out}");
    assert!(
        out.contains("swapped.pack:mini-ruche/2/e0001/block-00002.csv"),
        "{out}"
    );
    assert!(out.contains("SHA-256"), "{out}");
    assert!(
        out.contains("1 emission(s) checked: 0 OK, 1 failed"),
        "{out}"
    );
}

/// A pack of `members` with `extra` bytes after the tar's end, sealed as `pack` seals one: a
/// pack anyone with a recipient's key can make, refused only at its end.
fn with_trailer(members: &[Raw], extra: &[u8], recipient: &str) -> Vec<u8> {
    let mut tar = raw_tar(members);
    tar.extend_from_slice(extra);
    seal_tar(&tar, recipient)
}

/// The pack of `folder` for `key` with one digit of block `block`'s CSV changed (the pack well
/// formed and authenticated: only the checks of the lines can tell).
fn with_block_changed(w: &Workdir, id: &Path, key: &str, block: &str, out: &str) {
    let mut members = members_of(&inner_tar(&read(&w.path("e.pack")), id));
    let csv = members
        .iter_mut()
        .find(|m| m.name.ends_with(&format!("{block}.lines.csv")))
        .unwrap();
    let half = csv.data.len() / 2;
    let at = half
        + csv.data[half..]
            .iter()
            .position(u8::is_ascii_digit)
            .unwrap();
    csv.data[at] = if csv.data[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(w.path(out), seal_tar(&raw_tar(&members), key)).unwrap();
}

/// `report --json`, of a folder or (with `id`) a pack, as a JSON value; the exit status `code`.
fn report_json(w: &Workdir, path: &str, id: Option<&Path>, out: &str, code: i32) -> String {
    let mut args = vec!["report", "-q", "--json", out];
    if let Some(id) = id {
        args.extend(["--identity", id.to_str().unwrap()]);
    }
    args.push(path);
    text(&w.run_expect(&args, code))
}

/// `report PACK --identity KEY`: the report of the folder, made as the pack streams; its files
/// named as the pack's members.
#[test]
fn report_of_a_pack_is_the_report_of_its_folder() {
    let w = Workdir::new();
    let (folder, id, _key) = packed(&w);
    report_json(&w, folder.to_str().unwrap(), None, "folder.json", 0);
    report_json(&w, "e.pack", Some(&id), "pack.json", 0);
    let mut of_folder: serde_json::Value =
        serde_json::from_slice(&read(&w.path("folder.json"))).unwrap();
    let mut of_pack: serde_json::Value =
        serde_json::from_slice(&read(&w.path("pack.json"))).unwrap();
    // The time of the run, the one field that differs between two runs of the same report.
    for r in [&mut of_folder, &mut of_pack] {
        assert!(r["tool"]["date"].is_string());
        r["tool"]["date"] = serde_json::Value::Null;
    }
    let blocks = of_pack["blocks"].as_array_mut().unwrap();
    assert_eq!(blocks.len(), 3);
    for (n, b) in blocks.iter_mut().enumerate() {
        assert_eq!(
            b["file"],
            format!("e.pack:mini-ruche/2/e0001/block-0000{}.csv", n + 1)
        );
        b["file"] = format!("{}/block-0000{}.csv", folder.display(), n + 1).into();
    }
    assert_eq!(of_pack, of_folder);
    assert!(of_folder["emissions"][0]["seal_status"]
        .as_str()
        .unwrap()
        .contains("signature valid"));
    // The text report says the same.
    let text_of_pack = report_json(&w, "e.pack", Some(&id), "pack2.json", 0);
    assert!(
        text_of_pack.contains("e.pack:mini-ruche/2/e0001/block-00003.csv"),
        "{text_of_pack}"
    );
}

/// A pack changed anywhere is refused by report (nothing written); one whose block changed
/// (well formed, made by anyone with a recipient's key) fails that block, as of a folder.
#[test]
fn report_of_a_tampered_pack_is_refused_or_fails_the_block() {
    let w = Workdir::new();
    let (_folder, id, key) = packed(&w);
    let mut bytes = read(&w.path("e.pack"));
    let n = bytes.len();
    bytes[n / 2] ^= 0x01;
    std::fs::write(w.path("bad.pack"), &bytes).unwrap();
    let out = report_json(&w, "bad.pack", Some(&id), "bad.json", 2);
    assert!(out.contains("bad.pack"), "{out}");
    assert!(!w.path("bad.json").exists());
    // Bytes after the tar's end: read to the end before any report is made.
    let members = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
    std::fs::write(w.path("tail.pack"), with_trailer(&members, b"more", &key)).unwrap();
    let out = report_json(&w, "tail.pack", Some(&id), "tail.json", 2);
    assert!(out.contains("bytes follow the tar's end"), "{out}");
    assert!(!w.path("tail.json").exists());
    // A block changed: that block fails, the others are reported.
    with_block_changed(&w, &id, &key, "block-00002", "changed.pack");
    report_json(&w, "changed.pack", Some(&id), "changed.json", 1);
    let r: serde_json::Value = serde_json::from_slice(&read(&w.path("changed.json"))).unwrap();
    let verified: Vec<bool> = r["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["verified"].as_bool().unwrap())
        .collect();
    assert_eq!(verified, [true, false, true]);
    assert_eq!(r["failed"], true);
    // Without an identity: the error names the fix.
    let none = text(&w.run_expect(&["report", "e.pack"], 2));
    assert!(none.contains("--identity"), "{none}");
}

/// A production emission of 2 blocks made from a 2-of-3 custody set (custodians' identity
/// files `c1.key`..`c3.key`), sealed; its share files.
fn production(w: &Workdir, emission: &str) -> Vec<String> {
    fixed_test_key(w);
    let mut args: Vec<String> = [
        "seed",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "--emission",
        emission,
        "--emission-blocks",
        "2",
        "--shares-needed",
        "2",
        "--out",
        &format!("shares{emission}"),
        "--signing-key",
        "keys/signing-key.pem",
    ]
    .map(String::from)
    .to_vec();
    for i in 1..=3 {
        let name = format!("c{i}.key");
        let public = if w.path(&name).exists() {
            let text = std::fs::read_to_string(w.path(&name)).unwrap();
            let secret: age::x25519::Identity = text.lines().nth(1).unwrap().parse().unwrap();
            secret.to_public().to_string()
        } else {
            identity(w, &name).1
        };
        args.extend(["--recipient".into(), public]);
    }
    w.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let shares: Vec<String> = (1..=3)
        .map(|i| format!("shares{emission}/mini-ruche-2-e000{emission}.share-{i}-of-3.age"))
        .collect();
    w.ok(&[
        "emit",
        "--game",
        &data("mini-ruche.toml"),
        "--price",
        "2",
        "--emission",
        emission,
        "--share",
        &shares[0],
        "--share",
        &shares[1],
        "--identity",
        "c1.key",
        "--identity",
        "c2.key",
        "--signing-key",
        "keys/signing-key.pem",
        "--blocks",
        "2",
        "-q",
    ]);
    shares
}

/// `verify PACK --share ... --identity ...`: the auditor's replay from the custody shares, on a
/// pack (it used to say "unpack it first"); shares of another emission are refused.
#[test]
fn verify_of_a_pack_with_custody_shares_replays_every_block() {
    let w = Workdir::new();
    let shares = production(&w, "1");
    let (auditor, key) = identity(&w, "auditor.key");
    pack(&w, &w.path(FOLDER), "e.pack", &[&key], 0);
    let verify = |shares: [&str; 2], code: i32| {
        text(&w.run_expect(
            &[
                "verify",
                "--game",
                &data("mini-ruche.toml"),
                "--public-key",
                "keys/public-key.pem",
                "--share",
                shares[0],
                "--share",
                shares[1],
                "--identity",
                "c1.key",
                "--identity",
                "c3.key",
                "--identity",
                auditor.to_str().unwrap(),
                "e.pack",
            ],
            code,
        ))
    };
    let out = verify([&shares[0], &shares[2]], 0);
    assert!(
        out.contains("seed replay: 2 of 2 block(s) replayed from the seed and matched"),
        "{out}"
    );
    assert!(out.contains("seed replay OK"), "{out}");
    assert!(out.contains("(production emission)"), "{out}");
    assert!(
        out.contains("e.pack:mini-ruche/2/e0001/block-00002.csv"),
        "{out}"
    );
    // The same run on the folder says the same.
    let of_folder = text(&w.ok(&[
        "verify",
        "--game",
        &data("mini-ruche.toml"),
        "--public-key",
        "keys/public-key.pem",
        "--share",
        &shares[0],
        "--share",
        &shares[2],
        "--identity",
        "c1.key",
        "--identity",
        "c3.key",
        FOLDER,
    ]));
    assert!(
        of_folder.contains("seed replay: 2 of 2 block(s) replayed from the seed and matched"),
        "{of_folder}"
    );
    // The shares of another emission (same custodians) do not open this one.
    let other = production(&w, "2");
    let out = verify([&other[0], &other[2]], 2);
    assert!(out.contains("mini-ruche/2/e0001"), "{out}");
    assert!(!out.contains("OK      emission"), "{out}");
}

/// `load PACK --identity KEY` into PostgreSQL: the rows of `load FOLDER`, loaded as the pack
/// streams; a pack changed anywhere, even after its last block, loads nothing.
#[cfg(feature = "load")]
mod load {
    use super::*;
    use crate::load::TestDb;

    fn load(w: &Workdir, db: &TestDb, path: &str, id: Option<&Path>, code: i32) -> String {
        let mut args = vec![
            "load",
            "--database-url",
            &db.url,
            "--public-key",
            "keys/public-key.pem",
            "--game",
            "",
            "--allow-test",
            "-q",
        ];
        let game = data("mini-ruche.toml");
        args[6] = &game;
        if let Some(id) = id {
            args.extend(["--identity", id.to_str().unwrap()]);
        }
        args.push(path);
        text(&w.run_expect(&args, code))
    }

    /// Every ticket row, block row and emission row, as text, in order.
    fn rows(db: &TestDb) -> Vec<String> {
        let mut client = db.client();
        let mut out = Vec::new();
        for query in [
            "SELECT (to_jsonb(e) - 'emission_id')::text FROM emissions e ORDER BY game, emission",
            "SELECT format('%s %s %s %s %s %s %s %s %s', block, tickets, winners, total_prizes_cents,
                    manifest_sha256, signature, csv_sha256, tickets_root, md5(manifest))
             FROM blocks ORDER BY block",
            "SELECT b.block || ' ' || (to_jsonb(t) - 'block_id')::text
             FROM tickets t JOIN blocks b USING (block_id) ORDER BY b.block, t.idx",
            "SELECT format('%s %s %s', b.block, p.prize_cents, p.count)
             FROM block_prizes p JOIN blocks b USING (block_id) ORDER BY 1",
        ] {
            out.extend(
                client
                    .query(query, &[])
                    .unwrap_or_else(|e| panic!("{query}: {e}"))
                    .iter()
                    .map(|r| r.get::<_, String>(0)),
            );
        }
        out
    }

    /// Nothing of an emission in the database: no schema, or no block, emission or ticket.
    fn empty(db: &TestDb) -> bool {
        if !db.tables().iter().any(|t| t == "blocks") {
            return true;
        }
        rows(db).is_empty()
    }

    #[test]
    fn load_of_a_pack_gives_the_rows_of_load_of_its_folder() {
        let (Some(of_folder), Some(of_pack)) = (TestDb::new(), TestDb::new()) else {
            return;
        };
        let w = Workdir::new();
        let folder = sealed(&w);
        let (id, key) = identity(&w, "id.txt");
        pack(&w, &folder, "e.pack", &[&key], 0);
        load(&w, &of_folder, folder.to_str().unwrap(), None, 0);
        let said = load(&w, &of_pack, "e.pack", Some(&id), 0);
        let expected = rows(&of_folder);
        assert_eq!(
            expected.iter().filter(|r| r.contains("\"idx\"")).count(),
            6000
        );
        assert_eq!(rows(&of_pack), expected);
        assert!(
            said.contains("3 block(s): 3 loaded, 0 already loaded"),
            "{said}"
        );
        // Again: every block already there, skipped.
        let said = load(&w, &of_pack, "e.pack", Some(&id), 0);
        assert!(
            said.contains("3 block(s): 0 loaded, 3 already loaded"),
            "{said}"
        );
        assert!(
            said.contains("SKIPPED e.pack:mini-ruche/2/e0001/block-00001.csv"),
            "{said}"
        );
        assert_eq!(rows(&of_pack), expected);
        // Without an identity: the error names the fix, before any connection.
        let none = text(&w.run_expect(
            &[
                "load",
                "--database-url",
                "postgresql://nobody@/none?host=/nonexistent",
                "--public-key",
                "keys/public-key.pem",
                "e.pack",
            ],
            2,
        ));
        assert!(none.contains("--identity"), "{none}");
    }

    #[test]
    fn a_tampered_pack_loads_nothing_not_even_the_blocks_before_the_change() {
        let Some(db) = TestDb::new() else {
            return;
        };
        let w = Workdir::new();
        let folder = sealed(&w);
        let (id, key) = identity(&w, "id.txt");
        pack(&w, &folder, "e.pack", &[&key], 0);
        // One byte changed.
        let mut bytes = read(&w.path("e.pack"));
        let n = bytes.len();
        bytes[n * 3 / 4] ^= 0x01;
        std::fs::write(w.path("bad.pack"), &bytes).unwrap();
        let out = load(&w, &db, "bad.pack", Some(&id), 2);
        assert!(out.contains("nothing of the pack is loaded"), "{out}");
        assert!(empty(&db), "{:?}", rows(&db));
        // Block 3 changed, in a well-formed pack: blocks 1 and 2 verify and load in the
        // pack's transaction, block 3 fails, and the transaction is rolled back.
        with_block_changed(&w, &id, &key, "block-00003", "changed.pack");
        let out = load(&w, &db, "changed.pack", Some(&id), 2);
        assert!(out.contains("did not verify"), "{out}");
        assert!(
            out.contains("changed.pack:mini-ruche/2/e0001/block-00003.csv"),
            "{out}"
        );
        assert!(empty(&db), "{:?}", rows(&db));
        // Every block good, bytes after the tar's end: found after the last block, before the
        // commit.
        let members = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
        std::fs::write(w.path("tail.pack"), with_trailer(&members, b"more", &key)).unwrap();
        let out = load(&w, &db, "tail.pack", Some(&id), 2);
        assert!(out.contains("bytes follow the tar's end"), "{out}");
        assert!(empty(&db), "{:?}", rows(&db));
        // The pack itself loads.
        load(&w, &db, "e.pack", Some(&id), 0);
        assert!(!empty(&db));
    }
}

/// A withdrawal made after the seal is part of the emission: the pack carries it (the folder
/// was refused before: "not a file of an emission") and unpack restores it byte for byte.
#[test]
fn a_withdrawal_made_after_the_seal_travels_in_the_pack() {
    let w = Workdir::new();
    let folder = sealed(&w);
    w.ok(&[
        "withdraw",
        "--key",
        "keys/signing-key.pem",
        "--block",
        "2",
        "--reason",
        "misprint",
        folder.to_str().unwrap(),
    ]);
    assert!(folder.join("withdrawal-0001.json").exists());
    let (id, key) = identity(&w, "id.txt");
    pack(&w, &folder, "e.pack", &[&key], 0);
    let said = text(&w.run_expect(&["verify", "--identity", id.to_str().unwrap(), "e.pack"], 0));
    assert!(said.contains("OK"), "{said}");
    std::fs::create_dir(w.path("restored")).unwrap();
    unpack(&w, &id, "e.pack", "restored", 0);
    let restored = w.path("restored/mini-ruche/2/e0001");
    assert_eq!(hashes(&restored), hashes(&folder));
    assert!(hashes(&restored).contains_key("withdrawal-0001.json.sig"));
}

/// Anyone with a recipient's public key can make a pack: one with a sealed block, the
/// definition's copy or the log's last line left out is refused whole by `unpack`, which checks
/// the restored folder as a sealed emission before publishing it (it restored each of them,
/// exit 0: "13 files, 2 blocks"); and the staging folder a killed unpack left (the blocks in
/// clear) is removed by the next run (it stayed for ever).
#[test]
fn unpack_refuses_a_pack_with_evidence_left_out_and_removes_a_killed_runs_staging() {
    let w = Workdir::new();
    let (_folder, id, key) = packed(&w);
    let genuine = members_of(&inner_tar(&read(&w.path("e.pack")), &id));
    let without = |gone: &dyn Fn(&str) -> bool| -> Vec<Raw> {
        let kept: Vec<Raw> = genuine.iter().filter(|m| !gone(&m.name)).cloned().collect();
        assert!(kept.len() < genuine.len(), "a member was left out");
        kept
    };
    let cases: Vec<(&str, Vec<Raw>)> = vec![
        ("block 3", without(&|n| n.contains("block-00003."))),
        (
            "the definition",
            without(&|n| n.ends_with("emission.game.toml")),
        ),
        ("the log's last line", {
            let mut members = genuine.clone();
            let log = members
                .iter_mut()
                .find(|m| m.name.ends_with("emission.log.jsonl"))
                .unwrap();
            let text = String::from_utf8(log.data.clone()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert!(lines.len() > 1);
            log.data = format!("{}\n", lines[..lines.len() - 1].join("\n")).into_bytes();
            members
        }),
    ];
    for (case, members) in &cases {
        refused(
            &w,
            &id,
            &seal_tar(&raw_tar(members), &key),
            "does not hold together, so nothing was restored",
            case,
        );
    }
    // The report of the pack without block 3 fails too (it said PASSED for the 2 blocks read).
    std::fs::write(w.path("short.pack"), seal_tar(&raw_tar(&cases[0].1), &key)).unwrap();
    let out = w.run(&[
        "report",
        "-q",
        "--game",
        &data("mini-ruche.toml"),
        "--identity",
        id.to_str().unwrap(),
        "short.pack",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("the seal lists block(s) 3 that the pack does not hold"),
        "{}",
        text(&out)
    );
    // A killed run's staging folder (no run holds it): removed, and said.
    let out_dir = w.path("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir(&out_dir).unwrap();
    let stale = out_dir.join(".unpack-AbCdEf");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("block-00001.csv"), b"tickets in clear").unwrap();
    let said = unpack(&w, &id, "e.pack", "out", 0);
    assert!(said.contains("left by an unpack that was killed"), "{said}");
    assert!(!stale.exists(), "the staging folder is still there");
}
