//! Trusted timestamps on the command line: the `--tsa-*` options of `seed` and `seal`, and the
//! `timestamp` command (the second step of the file mode, or a token got later, of an
//! emission's record or seal or of a pack, `--pack`). The work is the engine's
//! (`emission_factory::emission::timestamp`).

use super::Exit;
use anyhow::{bail, Result};
use emission_factory::emission::lock::LockFile;
use emission_factory::emission::record::RECORD_FILE;
use emission_factory::emission::seal::SEAL_FILE;
use emission_factory::emission::timestamp::{
    self, http::Url, FileOutcome, Outcome, Source, TsaCert,
};
use emission_factory::untrusted::{shown, shown_path};
use std::path::{Path, PathBuf};

/// The `--tsa-*` options of `seed` and `seal`.
#[derive(Debug, Clone, clap::Args)]
pub struct TsaArgs {
    /// Ask this RFC 3161 time-stamping authority (http:// URL) for a token over the signed
    /// file this run writes (`seed`: emission.json, `seal`: emission.seal.json), kept beside it
    /// (emission.json.tsr, emission.seal.json.tsr) once checked against --tsa-cert. Needs
    /// --tsa-cert.
    #[arg(
        long,
        value_name = "URL",
        requires = "tsa_cert",
        conflicts_with = "tsa_request_out"
    )]
    pub tsa_url: Option<String>,
    /// The certificate (PEM or DER) of the TSA that signs the tokens: its extended key usage
    /// must be timeStamping, critical. Its SHA-256 is written in the signed file, so that
    /// verify fails if the token is missing.
    #[arg(long, value_name = "PEM")]
    pub tsa_cert: Option<PathBuf>,
    /// File mode, for a machine without a network: write the RFC 3161 request to FILE (to
    /// carry to the TSA) instead of sending it; a copy is kept beside the signed file
    /// (*.tsq), and `emission-factory timestamp FOLDER --tsa-reply REPLY --tsa-cert PEM` takes
    /// the TSA's reply. Needs --tsa-cert.
    #[arg(long, value_name = "FILE", requires = "tsa_cert")]
    pub tsa_request_out: Option<PathBuf>,
}

/// `timestamp` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory timestamp emissions/ruche-or/2/e0003 --tsa-cert tsa.pem --tsa-url http://tsa.example/
  emission-factory timestamp emissions/ruche-or/2/e0003 --tsa-cert tsa.pem --tsa-reply /media/usb/e0003.tsr
  emission-factory timestamp emissions/ruche-or/2/e0003 --seal --tsa-cert tsa.pem --tsa-request-out /media/usb/seal.tsq
  emission-factory timestamp --pack e0003.pack --tsa-cert tsa.pem --tsa-url http://tsa.example/
      # e0003.pack.tsr, over the pack file's bytes: when `pack --tsa-url` got none")]
pub struct TimestampArgs {
    /// The emission folder (<out>/<game>/<stake>/e<emission>).
    #[arg(
        value_name = "FOLDER",
        required_unless_present = "pack",
        conflicts_with = "pack"
    )]
    pub folder: Option<PathBuf>,
    /// The token is for the seal (emission.seal.json), not the record (emission.json).
    #[arg(long, conflicts_with = "pack")]
    pub seal: bool,
    /// The token is for this emission pack (a file `pack` wrote), over the SHA-256 of its
    /// bytes, kept beside it as PACK.tsr (a new file: never replacing one); checked by
    /// `verify --identity KEY --tsa-cert PEM PACK`.
    #[arg(long, value_name = "PACK")]
    pub pack: Option<PathBuf>,
    /// The certificate (PEM or DER) of the TSA: the token must be signed by it, and it must be
    /// the one the record or the seal names, if it names one.
    #[arg(long, value_name = "PEM", required = true)]
    pub tsa_cert: PathBuf,
    /// Ask this TSA (http:// URL) now.
    #[arg(long, value_name = "URL", conflicts_with_all = ["tsa_request_out", "tsa_reply"], required_unless_present_any = ["tsa_request_out", "tsa_reply"])]
    pub tsa_url: Option<String>,
    /// File mode, first step: write the request to FILE (a copy is kept in the folder, or
    /// beside the pack as PACK.tsq).
    #[arg(long, value_name = "FILE", conflicts_with = "tsa_reply")]
    pub tsa_request_out: Option<PathBuf>,
    /// File mode, second step: the TSA's reply (a TimeStampResp, DER) to the request kept in
    /// the folder (or beside the pack); checked, then kept as the token.
    #[arg(long, value_name = "FILE")]
    pub tsa_reply: Option<PathBuf>,
    /// No notes on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A token to get, validated before anything is written.
pub struct Plan {
    /// The TSA certificate.
    pub cert: TsaCert,
    /// Where the token comes from.
    pub source: Source,
}

impl Plan {
    /// The SHA-256 (hex) of the TSA certificate, for the signed file to name.
    pub fn pin(&self) -> String {
        self.cert.sha256_hex()
    }
}

/// Whether any `--tsa-*` option is given.
pub fn asked(args: &TsaArgs) -> bool {
    args.tsa_url.is_some() || args.tsa_cert.is_some() || args.tsa_request_out.is_some()
}

/// Reads and checks the `--tsa-*` options of `seed` or `seal`: `None` if no token is asked.
pub fn plan(args: &TsaArgs) -> Result<Option<Plan>> {
    let source = match (&args.tsa_url, &args.tsa_request_out) {
        (Some(url), _) => Source::Url(Url::parse(url).map_err(anyhow::Error::msg)?),
        (None, Some(out)) => Source::RequestOut(out.clone()),
        (None, None) => {
            if args.tsa_cert.is_some() {
                bail!("--tsa-cert is given, but no --tsa-url (ask the TSA now) or --tsa-request-out FILE (file mode): say how to reach the TSA");
            }
            return Ok(None);
        }
    };
    let Some(cert) = &args.tsa_cert else {
        bail!("--tsa-url and --tsa-request-out need --tsa-cert PEM, the TSA's certificate");
    };
    Ok(Some(Plan {
        cert: timestamp::read_cert(cert, "--tsa-cert")?,
        source,
    }))
}

/// Gets the token of `doc` (in `folder`) under the emission lock; returns the line that says
/// what was done, for the minutes.
pub fn stamp(
    folder: &Path,
    doc: &Path,
    pinned: Option<&str>,
    plan: &Plan,
    quiet: bool,
) -> Result<String> {
    let held = LockFile::emission(folder)?.acquire(&mut |m| {
        if !quiet {
            errln!("note: {m}")
        }
    })?;
    let outcome = timestamp::stamp(&held, doc, pinned, &plan.cert, &plan.source);
    held.release()?;
    Ok(match outcome? {
        Outcome::Stamped { token, stamp } => {
            format!(
                "timestamp:   {} existed by {} (token {}, TSA {}, serial {}); `verify --tsa-cert` checks it",
                shown_path(doc),
                stamp.existed_by(),
                shown_path(&token),
                shown(&plan.cert.subject),
                stamp.serial
            )
        }
        Outcome::Requested { request, kept } => {
            format!(
                "timestamp:   request written to {} (kept as {}): carry it to the TSA, e.g. `curl --data-binary @REQUEST -H 'Content-Type: application/timestamp-query' -o REPLY URL`, then run `emission-factory timestamp {}{} --tsa-cert PEM --tsa-reply REPLY`; until then verify fails on the missing token",
                shown_path(&request),
                shown_path(&kept),
                emission_factory::fs::files::shell_quoted(folder),
                if doc.ends_with(SEAL_FILE) { " --seal" } else { "" }
            )
        }
    })
}

/// The pin a signed file names, read without its signature (a guard before the TSA is asked:
/// the token is over the bytes whatever they say, and verify checks the signature).
fn pinned_of(doc: &Path) -> Result<Option<String>> {
    let bytes = emission_factory::emission::read_bounded(doc, 64 << 20)?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!("{} is not JSON: {}", shown_path(doc), shown(e.to_string()))
    })?;
    Ok(value
        .get("timestamp_authority_sha256")
        .and_then(|v| v.as_str())
        .map(str::to_string))
}

/// The line that says what [`timestamp::stamp_file`] did for `file` (a pack).
pub(super) fn said_of_file(file: &Path, outcome: &FileOutcome) -> String {
    let quoted = emission_factory::fs::files::shell_quoted(file);
    match outcome {
        FileOutcome::Stamped(checked) => format!(
            "timestamp:   {} existed by {} (token {}, TSA {}, serial {}); `emission-factory verify --identity KEY --tsa-cert PEM {quoted}` checks it",
            shown_path(file),
            checked.stamp.existed_by(),
            shown_path(&checked.token),
            shown(&checked.tsa),
            checked.stamp.serial
        ),
        FileOutcome::Requested { request, kept } => format!(
            "timestamp:   request written to {} (kept as {}): carry it to the TSA, e.g. `curl --data-binary @REQUEST -H 'Content-Type: application/timestamp-query' -o REPLY URL`, then run `emission-factory timestamp --pack {quoted} --tsa-cert PEM --tsa-reply REPLY`; until then the pack has no token",
            shown_path(request),
            shown_path(kept)
        ),
    }
}

pub(super) fn run(args: TimestampArgs) -> Result<Exit> {
    let source = || -> Result<Source> {
        Ok(
            match (&args.tsa_url, &args.tsa_request_out, &args.tsa_reply) {
                (Some(url), _, _) => Source::Url(Url::parse(url).map_err(anyhow::Error::msg)?),
                (_, Some(out), _) => Source::RequestOut(out.clone()),
                (_, _, Some(reply)) => Source::Reply(reply.clone()),
                _ => bail!("give --tsa-url URL, --tsa-request-out FILE or --tsa-reply FILE"),
            },
        )
    };
    let folder = match (&args.folder, &args.pack) {
        (_, Some(pack)) => return run_pack(pack, source()?, &args.tsa_cert),
        (Some(folder), None) => folder,
        (None, None) => bail!("give the emission FOLDER, or --pack PACK"),
    };
    let doc = folder.join(if args.seal { SEAL_FILE } else { RECORD_FILE });
    if !emission_factory::fs::files::entry_exists(&doc)? {
        bail!(
            "{} is missing: give an emission folder{}",
            shown_path(&doc),
            if args.seal {
                " that is sealed (emission-factory seal)"
            } else {
                " with its record (<out>/<game>/<stake>/e<emission>)"
            }
        );
    }
    let plan = Plan {
        source: source()?,
        cert: timestamp::read_cert(&args.tsa_cert, "--tsa-cert")?,
    };
    let pinned = pinned_of(&doc)?;
    let said = stamp(folder, &doc, pinned.as_deref(), &plan, args.quiet)?;
    outln!("{said}")?;
    Ok(Exit::Ok)
}

/// `timestamp --pack PACK`: the pack's bytes hashed as a stream, then its token got as `pack
/// --tsa-url` (or `--tsa-request-out`) gets it.
fn run_pack(pack: &Path, source: Source, cert: &Path) -> Result<Exit> {
    let cert = timestamp::read_cert(cert, "--tsa-cert")?;
    if !pack.is_file() {
        bail!(
            "--pack {}: not a file: give the pack `emission-factory pack` wrote",
            shown_path(pack)
        );
    }
    let hash = timestamp::file_sha256(pack)?;
    let outcome = timestamp::stamp_file(pack, hash, &[cert], &source)?;
    outln!("{}", said_of_file(pack, &outcome))?;
    Ok(Exit::Ok)
}
