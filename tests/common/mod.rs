//! Runs the real binary in a scratch folder; on failure, prints the command, its status,
//! stdout and stderr.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fixed seed for reproducible tests.
pub const SEED: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// A scratch folder with helpers to run the binary in it.
pub struct Workdir {
    pub dir: tempfile::TempDir,
}

impl Workdir {
    pub fn new() -> Self {
        Workdir {
            dir: tempfile::tempdir().expect("temporary folder"),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_emission-factory"));
        cmd.current_dir(self.dir.path()).args(args);
        cmd
    }

    /// Runs and returns the output, whatever the status.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("the binary runs")
    }

    /// Runs and requires exit status `code`.
    pub fn run_expect(&self, args: &[&str], code: i32) -> Output {
        let out = self.run(args);
        if out.status.code() != Some(code) {
            panic!(
                "command: emission-factory {}\nexpected exit {code}, got {:?}\n--- stdout\n{}\n--- stderr\n{}",
                args.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out
    }

    /// Runs and requires success.
    pub fn ok(&self, args: &[&str]) -> Output {
        self.run_expect(args, 0)
    }
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The path of a test data file.
pub fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

/// Reads a file fully.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Runs OpenSSL's own check of a block signature; panics with its output if it refuses.
pub fn openssl_verify(folder: &Path, block: &str) {
    let out = Command::new("openssl")
        .current_dir(folder)
        .args([
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "emission.pub.pem",
            "-rawin",
            "-in",
            &format!("{block}.manifest.json"),
            "-sigfile",
            &format!("{block}.manifest.json.sig"),
        ])
        .output()
        .expect("openssl must be installed (.ci/run installs it)");
    assert!(
        out.status.success(),
        "openssl refused the signature:\n{}",
        String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr)
    );
}
