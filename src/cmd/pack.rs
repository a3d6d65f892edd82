//! `pack` and `unpack`: a sealed emission folder as one encrypted, compressed file, and back
//! (see [`emission_factory::pack`]).

use super::Exit;
use anyhow::{anyhow, bail, Result};
use emission_factory::custody::{parse_recipient, read_recipients_file};
use emission_factory::emission::timestamp::{self, http::Url, Source};
use emission_factory::fs::files::shell_quoted;
use emission_factory::untrusted::shown_path;
use std::path::{Path, PathBuf};

/// `pack` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory pack --recipient age1...server --recipient age1...archive \\
      --out ruche-or-2-e0001.pack emissions/ruche-or/2/e0001
  emission-factory pack --recipients-file recipients.txt --out e0001.pack emissions/ruche-or/2/e0001
  emission-factory pack --recipients-file recipients.txt --out e0001.pack \\
      --tsa-cert tsa.pem --tsa-url http://tsa.example/tsr emissions/ruche-or/2/e0001
      # e0001.pack.tsr: the TSA's token over the pack's bytes, checked with tsa.pem (which also
      # checks the emission's own tokens, if any: give one --tsa-cert per TSA); then
      # emission-factory verify --identity KEY --tsa-cert tsa.pem e0001.pack  prints its time

An auditor opens a pack with common tools:
  age -d -i identity.txt e0001.pack | zstd -d | tar tv
  age -d -i identity.txt e0001.pack | zstd -d | tar x    # the folder ruche-or/2/e0001
Each block's CSV is in the pack as its lines without the sha256 column (block-NNNNN.lines.csv),
which every reader recomputes; `unpack` gives the folder back byte for byte, and with common
tools each CSV is rebuilt by (docs/FORMAT.md, \"Emission pack\"):
  perl -MDigest::SHA=sha256_hex -ne 'chomp;
      print $. == 1 ? \"$_,sha256\\n\" : \"$_,\" . sha256_hex($_) . \"\\n\"' \\
      block-00001.lines.csv > block-00001.csv")]
pub struct PackArgs {
    /// The sealed emission folder (<game>/<stake>/e<emission>).
    #[arg(value_name = "FOLDER")]
    pub folder: PathBuf,
    /// The pack to write: a new file (mode 0600), written whole or not at all; an existing
    /// file is never replaced. `-` writes it onto standard output (not a terminal), and the
    /// summary onto standard error.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// An age public key (age1...) that may open the pack: the game server, the archive, the
    /// auditor (repeat for each).
    #[arg(long, value_name = "AGE1...")]
    pub recipient: Vec<String>,
    /// A file of age public keys, one per line (`#` comments allowed), as `age -R` reads.
    #[arg(long, value_name = "FILE")]
    pub recipients_file: Vec<PathBuf>,
    /// The public key (SPKI PEM) the emission must be signed with. Without it the folder's own
    /// emission.pub.pem is used.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// The certificate (PEM or DER) of a time-stamping authority (TSA). The emission's own
    /// trusted timestamps, if it has any (emission.json.tsr, emission.seal.json.tsr), must
    /// verify with one of those given: the pack carries them, and a folder is packed only once
    /// they verify, as `verify --tsa-cert` checks them. With --tsa-url or --tsa-request-out,
    /// the pack's own token must verify with one of them too. Repeatable: one per TSA (the
    /// emission's and the pack's may be two).
    #[arg(long, value_name = "PEM")]
    pub tsa_cert: Vec<PathBuf>,
    /// Once the pack is written and published, ask this RFC 3161 TSA (http:// URL) for a token
    /// over the SHA-256 of the pack file's bytes, and keep it beside the pack as PACK.tsr (a
    /// new file, 0600, never replacing one) once it verifies with a --tsa-cert given. If no
    /// token can be had, the pack is kept and the command fails, saying how to get the token
    /// later (`emission-factory timestamp --pack PACK --tsa-cert PEM --tsa-url URL`). Needs
    /// --tsa-cert, and --out FILE (a pack written onto standard output has no file to keep a
    /// token beside).
    #[arg(
        long,
        value_name = "URL",
        requires = "tsa_cert",
        conflicts_with = "tsa_request_out"
    )]
    pub tsa_url: Option<String>,
    /// The file mode of --tsa-url, for a machine without a network: once the pack is
    /// published, write the RFC 3161 request over its SHA-256 to FILE (a new file, to carry to
    /// the TSA) and keep a copy as PACK.tsq; `emission-factory timestamp --pack PACK --tsa-cert
    /// PEM --tsa-reply REPLY` then takes the TSA's reply. Needs --tsa-cert and --out FILE.
    #[arg(long, value_name = "FILE", requires = "tsa_cert")]
    pub tsa_request_out: Option<PathBuf>,
    /// zstd compression level, 1 (fastest) to 19 (smallest).
    #[arg(long, default_value_t = emission_factory::pack::write::DEFAULT_LEVEL, value_name = "L", value_parser = clap::value_parser!(i32).range(1..=19))]
    pub level: i32,
    /// Compression threads (default: one per core).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// No summary on standard output.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `unpack` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory unpack --identity identity.txt --out restored e0001.pack
      # makes restored/ruche-or/2/e0001, then: emission-factory verify restored/ruche-or/2/e0001")]
pub struct UnpackArgs {
    /// The pack.
    #[arg(value_name = "PACK")]
    pub pack: PathBuf,
    /// An age identity file (AGE-SECRET-KEY-1..., from age-keygen) of one of the pack's
    /// recipients (repeat as needed): a regular file that group and others cannot read.
    #[arg(long, value_name = "FILE", required = true)]
    pub identity: Vec<PathBuf>,
    /// An existing folder: the emission is restored as DIR/<game>/<stake>/e<emission>, which
    /// must not exist. Nothing is written there unless the whole pack reads.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The certificate (PEM or DER) of the time-stamping authority of the emission's tokens
    /// (emission.json.tsr, emission.seal.json.tsr), when the pack holds any: the restored
    /// folder is checked as a sealed emission before it is published, its tokens included.
    /// Repeatable.
    #[arg(long, value_name = "PEM")]
    pub tsa_cert: Vec<PathBuf>,
    /// Use an identity file that group or others may read, with a warning, instead of refusing
    /// it (better: `chmod 600 FILE`).
    #[arg(long)]
    pub allow_insecure_key: bool,
    /// No summary on standard output.
    #[arg(long, short)]
    pub quiet: bool,
}

pub(super) fn run_pack(args: PackArgs) -> Result<Exit> {
    let mut recipients = Vec::new();
    for text in &args.recipient {
        recipients.push(parse_recipient(text, "--recipient")?);
    }
    for file in &args.recipients_file {
        recipients.extend(read_recipients_file(file)?);
    }
    if recipients.is_empty() {
        bail!("pack: give --recipient AGE1... or --recipients-file FILE: who may open the pack");
    }
    let public_key = args
        .public_key
        .as_deref()
        .map(emission_factory::block::keys::read_public_key)
        .transpose()?;
    let threads = match args.threads {
        Some(t) => u32::from(t),
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let tsa_certs = args
        .tsa_cert
        .iter()
        .map(|p| timestamp::read_cert(p, "--tsa-cert"))
        .collect::<Result<Vec<_>, _>>()?;
    let stamp = pack_stamp(&args)?;
    let summary = emission_factory::pack::pack(
        &args.folder,
        &args.out,
        &emission_factory::pack::PackOptions {
            recipients,
            public_key,
            tsa_certs: tsa_certs.clone(),
            level: args.level,
            threads,
            sha256: stamp.is_some(),
        },
    )?;
    if !args.quiet {
        let to_stdout = args.out == Path::new("-");
        let said = format!(
            "packed {} ({}: {} files, {} blocks, {} bytes) into {}: {} bytes ({:.3} of the folder)",
            shown_path(&args.folder),
            summary.emission,
            summary.members,
            summary.blocks,
            super::grouped(summary.folder_bytes),
            if to_stdout {
                "standard output".to_string()
            } else {
                shown_path(&args.out)
            },
            super::grouped(summary.pack_bytes),
            summary.pack_bytes as f64 / summary.folder_bytes.max(1) as f64
        );
        if to_stdout {
            // Standard output holds the pack.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{said}");
        } else {
            outln!("{said}")?;
        }
    }
    if let Some(source) = &stamp {
        let Some(hash) = summary.sha256 else {
            bail!("internal: the SHA-256 of {} was not made as it was written: get its token with `emission-factory timestamp --pack {} --tsa-cert PEM --tsa-url URL`", shown_path(&args.out), shell_quoted(&args.out));
        };
        let outcome = timestamp::stamp_file(&args.out, hash, &tsa_certs, source).map_err(|e| {
            anyhow!(
                "the pack {} is written and kept, without its trusted timestamp: {e:#}",
                shown_path(&args.out)
            )
        })?;
        if !args.quiet {
            outln!("{}", super::tsa::said_of_file(&args.out, &outcome))?;
        }
    }
    Ok(Exit::Ok)
}

/// Where the pack's own token comes from (`--tsa-url`, `--tsa-request-out`), if it is asked,
/// checked before anything is written: a pack onto standard output has no beside, and neither
/// its token nor the request kept may be there already (nothing is ever replaced).
fn pack_stamp(args: &PackArgs) -> Result<Option<Source>> {
    let source = match (&args.tsa_url, &args.tsa_request_out) {
        (Some(url), _) => Source::Url(Url::parse(url).map_err(anyhow::Error::msg)?),
        (None, Some(out)) => Source::RequestOut(out.clone()),
        (None, None) => return Ok(None),
    };
    let option = if args.tsa_url.is_some() {
        "--tsa-url"
    } else {
        "--tsa-request-out"
    };
    if args.out == Path::new("-") {
        bail!("--out - with {option}: a pack written onto standard output has no place beside it for its token (PACK.tsr): give --out FILE, or leave out {option} and, once the stream is saved as a file, get its token with `emission-factory timestamp --pack FILE --tsa-cert PEM --tsa-url URL`");
    }
    for beside in [
        timestamp::token_path(&args.out),
        timestamp::request_path(&args.out),
    ] {
        if emission_factory::fs::files::entry_exists(&beside)? {
            bail!(
                "{} exists, beside the pack to write: a token or a request of another pack of that name? It is never replaced: move it away, or give another --out",
                shown_path(&beside)
            );
        }
    }
    if let Source::RequestOut(out) = &source {
        if out == Path::new("-") {
            bail!("--tsa-request-out -: the request is binary and standard output carries this command's report: give a file name (the file to carry to the TSA)");
        }
        if emission_factory::fs::files::entry_exists(out)? {
            bail!(
                "--tsa-request-out {}: the file exists, and is never replaced: give a new file name",
                shown_path(out)
            );
        }
    }
    Ok(Some(source))
}

pub(super) fn run_unpack(args: UnpackArgs) -> Result<Exit> {
    let read = emission_factory::custody::read_identity_files(
        &args.identity,
        super::emit::exposure(args.allow_insecure_key),
    )?;
    super::emit::warn_exposed(&read.exposed);
    let tsa_certs = args
        .tsa_cert
        .iter()
        .map(|p| emission_factory::emission::timestamp::read_cert(p, "--tsa-cert"))
        .collect::<Result<Vec<_>, _>>()?;
    let done = emission_factory::pack::unpack(&args.pack, &read.identities, &args.out, &tsa_certs)?;
    if done.removed > 0 {
        errln!(
            "note: removed {} staging folder(s) (.unpack-*) of {} left by an unpack that was killed",
            done.removed,
            shown_path(&args.out)
        );
    }
    if !args.quiet {
        outln!(
            "unpacked {} into {}: {} files, {} blocks; check it with `emission-factory verify {}`",
            shown_path(&args.pack),
            shown_path(&done.folder),
            done.contents.members,
            done.contents.blocks.len(),
            emission_factory::fs::files::shell_quoted(&done.folder)
        )?;
    }
    Ok(Exit::Ok)
}
