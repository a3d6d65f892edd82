//! Build script: the commit the binary is built from and the build profile, for
//! `emission-factory version --verbose` (what a regulator's examiner ties a certified binary to).
//!
//! Sets, for the binary:
//! - `EF_BUILD_COMMIT`: `git rev-parse HEAD` of the package's own repository, with `-dirty`
//!   when a tracked file that goes into the binary (src/, games/, Cargo.toml, Cargo.lock,
//!   build.rs) differs from that commit; `EMISSION_FACTORY_COMMIT` in the build's environment
//!   instead when set (a build from a source archive); else `unknown`.
//! - `EF_BUILD_PROFILE`: cargo's profile (`release`, `ci`, `dev`...), the folder under target/
//!   the build goes to (cargo's `PROFILE` says only `release` or `debug`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// What is compiled into the binary: a change there makes it `-dirty`, and reruns this script.
const SOURCES: [&str; 5] = ["src", "games", "Cargo.toml", "Cargo.lock", "build.rs"];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rerun-if-env-changed=EMISSION_FACTORY_COMMIT");
    for source in SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    let commit = match std::env::var("EMISSION_FACTORY_COMMIT") {
        Ok(given) if is_commit(&given) => given,
        _ => git_commit(&manifest_dir).unwrap_or_else(|| "unknown".into()),
    };
    println!("cargo:rustc-env=EF_BUILD_COMMIT={commit}");
    println!("cargo:rustc-env=EF_BUILD_PROFILE={}", profile());
}

/// A commit as given: hex digits (a full or short hash), maybe with `-dirty`.
fn is_commit(text: &str) -> bool {
    let hash = text.strip_suffix("-dirty").unwrap_or(text);
    (7..=64).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Runs git in `dir`, returning its trimmed standard output on success.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// HEAD of the repository whose top is the package (not of a repository the package happens to
/// sit in), `-dirty` if a source differs from it; and the files whose change moves HEAD.
fn git_commit(dir: &Path) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), dir) {
        return None;
    }
    let head = git(dir, &["rev-parse", "--verify", "HEAD"])?;
    if !is_commit(&head) {
        return None;
    }
    // A commit or a checkout moves HEAD, the branch's ref or packed-refs, and appends to HEAD's
    // reflog (which also sees a commit on a branch `git gc` had packed). In a worktree, HEAD
    // and its reflog are the worktree's and the refs the common repository's: git says where
    // each is. Not the whole refs/heads: another worktree's commit would rebuild this one.
    let mut watched: Vec<String> = ["HEAD", "logs/HEAD", "packed-refs"]
        .map(String::from)
        .to_vec();
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &name]) {
            let path = dir.join(path);
            // A path that does not exist would rerun this script on every build.
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(SOURCES);
    let dirty = git(dir, &status).is_none_or(|changes| !changes.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}

/// The profile's folder: OUT_DIR is target/[TRIPLE/]PROFILE/build/PACKAGE-HASH/out.
fn profile() -> String {
    std::env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .and_then(|out| {
            out.ancestors()
                .nth(3)
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or_else(|| "unknown".into())
}
