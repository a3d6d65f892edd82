//! `pack` and `unpack`: a sealed emission folder as one encrypted, compressed file, and back
//! (see [`emission_factory::pack`]).

use super::Exit;
use anyhow::{bail, Result};
use emission_factory::custody::{parse_recipient, read_recipients_file};
use emission_factory::untrusted::shown_path;
use std::path::PathBuf;

/// `pack` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory pack --recipient age1...server --recipient age1...archive \\
      --out ruche-or-2-e0001.pack emissions/ruche-or/2/e0001
  emission-factory pack --recipients-file recipients.txt --out e0001.pack emissions/ruche-or/2/e0001

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
    /// The certificate of the TSA that signed the emission's trusted timestamps, if it has
    /// any (emission.json.tsr, emission.seal.json.tsr): the pack carries them, and a folder is
    /// packed only once they verify, as `verify --tsa-cert` checks them. Repeatable.
    #[arg(long, value_name = "PEM")]
    pub tsa_cert: Vec<PathBuf>,
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
    let summary = emission_factory::pack::pack(
        &args.folder,
        &args.out,
        &emission_factory::pack::PackOptions {
            recipients,
            public_key,
            tsa_certs: args
                .tsa_cert
                .iter()
                .map(|p| emission_factory::emission::timestamp::read_cert(p, "--tsa-cert"))
                .collect::<Result<_, _>>()?,
            level: args.level,
            threads,
        },
    )?;
    if !args.quiet {
        let to_stdout = args.out == std::path::Path::new("-");
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
    Ok(Exit::Ok)
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
