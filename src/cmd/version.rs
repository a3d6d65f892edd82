//! `version`: the program's version and, with `--verbose`, what ties a binary to its source and
//! to what was certified: the commit it was built from, the build profile and the SHA-256 of
//! the binary running (the file a regulator's examiner certifies, hashed as `sha256sum` does).

use super::Exit;
use anyhow::{Context, Result};
use emission_factory::untrusted::shown_path;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::PathBuf;

/// `version` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory version --verbose
  emission-factory --version --verbose
  emission-factory version --json | jq -r .binary_sha256     (compare with the certified hash)")]
pub struct VersionArgs {
    /// Also the commit the binary was built from, the build profile and the binary's SHA-256.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print one JSON object instead (docs/FORMAT.md, "version --json"): every field, as
    /// --verbose.
    #[arg(long)]
    pub json: bool,
    /// Print nothing but the version (as without --verbose).
    #[arg(long, short, conflicts_with_all = ["verbose", "json"])]
    pub quiet: bool,
}

/// The program's version, as Cargo.toml says.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit built from (`git rev-parse HEAD`, `-dirty` if the sources differed), or
/// `unknown` (build.rs).
pub const COMMIT: &str = env!("EF_BUILD_COMMIT");
/// cargo's build profile (`release`, `ci`, `dev`...).
pub const PROFILE: &str = env!("EF_BUILD_PROFILE");

/// The running program's identity: what `version --verbose` prints, and what a report can
/// carry to say which tool made it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Identity {
    /// Always `emission-factory`.
    pub program: &'static str,
    /// [`VERSION`].
    pub version: &'static str,
    /// [`COMMIT`].
    pub commit: &'static str,
    /// [`PROFILE`].
    pub profile: &'static str,
    /// Whether debug assertions are compiled in (a `dev` build).
    pub debug_assertions: bool,
    /// The binary's path, as the system resolves the running program (lossy UTF-8).
    pub binary: String,
    /// SHA-256 of the binary's bytes, lowercase hex.
    pub binary_sha256: String,
}

/// The identity of the program running: its binary is read and hashed (about 8 MB).
pub fn identity() -> Result<Identity> {
    let (binary, sha256) = binary_sha256()?;
    Ok(Identity {
        program: "emission-factory",
        version: VERSION,
        commit: COMMIT,
        profile: PROFILE,
        debug_assertions: cfg!(debug_assertions),
        binary: binary.to_string_lossy().into_owned(),
        binary_sha256: hex::encode(sha256),
    })
}

/// The path and the SHA-256 of the running binary. On Linux, /proc/self/exe: the file this
/// process was started from, even if it has since been replaced or renamed.
fn binary_sha256() -> Result<(PathBuf, [u8; 32])> {
    let path = std::env::current_exe().context("cannot find the running program's file")?;
    let opened = if cfg!(target_os = "linux") {
        std::fs::File::open("/proc/self/exe")
    } else {
        std::fs::File::open(&path)
    };
    let mut file = opened.with_context(|| format!("cannot open {}", shown_path(&path)))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", shown_path(&path))),
        };
        hasher.update(&buffer[..n]);
    }
    Ok((path, hasher.finalize().into()))
}

pub(super) fn run(args: VersionArgs) -> Result<Exit> {
    if !(args.verbose || args.json) {
        outln!("emission-factory {VERSION}")?;
        return Ok(Exit::Ok);
    }
    let id = identity()?;
    if args.json {
        let text = serde_json::to_string_pretty(&id).context("cannot write the JSON")?;
        outln!("{text}")?;
        return Ok(Exit::Ok);
    }
    outln!(
        "emission-factory {VERSION}\ncommit:        {}\nprofile:       {}{}\nbinary:        {}\nbinary_sha256: {}",
        id.commit,
        id.profile,
        if id.debug_assertions { " (debug assertions on)" } else { "" },
        shown_path(std::path::Path::new(&id.binary)),
        id.binary_sha256
    )?;
    Ok(Exit::Ok)
}
