//! The command line: arguments (clap), and one file per subcommand that turns them into a
//! validated configuration for the engine and reports the result.
//!
//! Exit status: 0 everything held (or standard output was closed by its reader), 1 `verify`
//! found a problem, 2 an error (bad input, I/O, standard output full).

/// `println!` that returns a [`output::StdoutError`] instead of panicking: `outln!(...)?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cmd::output::write_stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` that drops a message standard error cannot take instead of panicking.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cmd::output::write_stderr(format_args!($($arg)*))
    };
}

#[cfg(feature = "load")]
mod close;
mod completions;
#[cfg(feature = "load")]
mod db_verify;
mod emit;
mod games;
mod keygen;
mod lab;
#[cfg(feature = "load")]
mod load;
pub mod logged;
pub mod options;
pub mod output;
mod pack;
mod prove;
mod report;
mod seal;
mod seed;
mod show;
mod tsa;
mod verify;
pub mod version;
mod withdraw;

use clap::{Parser, Subcommand};
use emission_factory::progress::Progress;
use std::path::PathBuf;

/// How the program ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything held.
    Ok = 0,
    /// A block did not verify.
    Failed = 1,
    /// Bad input or an I/O error: nothing was concluded.
    Error = 2,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// Ticket emission factory: makes, signs and verifies blocks of electronic instant-game tickets.
///
/// Exit status: 0 success (or standard output closed by its reader), 1 a block failed
/// verification, 2 error (bad input, unreadable file, disk full, standard output full...).
#[derive(Debug, Parser)]
#[command(
    name = "emission-factory",
    version,
    about,
    long_about,
    after_help = "Examples:
  emission-factory games
  emission-factory keygen --out keys
  emission-factory emit --game ruche-or --price 2 --blocks 10 --signing-key keys/signing-key.pem
  emission-factory verify --public-key keys/public-key.pem emissions/ruche-or/2/e0001
  emission-factory COMMAND --help     (examples for each command)
  emission-factory --version --verbose     (commit, build profile, SHA-256 of this binary)"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Emit blocks of tickets: plan the prizes, synthesize and check every layout, write,
    /// hash and sign the block files.
    Emit(EmitArgs),
    /// Verify blocks independently: every layout, hash, count, the Merkle root and the
    /// signature; and, for an emission folder, its record, audit log and seal.
    Verify(VerifyArgs),
    /// The auditor's report on blocks: Article 3 recomputed from the tickets, forms, near
    /// misses, a leak check, the order statistics and duplicate layouts (text, --json, --html).
    Report(ReportArgs),
    /// Seal an emission whose blocks are all made: a signed list of every block and the
    /// emission's totals; a sealed emission takes no new block.
    Seal(SealArgs),
    /// Load verified blocks into a game server's PostgreSQL database, one transaction per
    /// block (whole or not at all), with COPY; creates or migrates the schema, with sale and
    /// reconciliation SQL.
    #[cfg(feature = "load")]
    Load(LoadArgs),
    /// Check the blocks loaded in a database again, from their rows alone: every ticket's
    /// SHA-256 and serial, each block's Merkle root and tiers against its signed manifest,
    /// and the sales against the cursors; names every row changed in the database.
    #[cfg(feature = "load")]
    DbVerify(db_verify::DbVerifyArgs),
    /// Withdraw a block, or a whole emission, from sale: a signed, logged record in the
    /// emission folder, which `load` applies in the database (no sale from it again).
    Withdraw(withdraw::WithdrawArgs),
    /// Close an emission in the database (no more sales) and write its signed final
    /// reconciliation: sold and unsold per tier, top prizes unsold, payout.
    #[cfg(feature = "load")]
    Close(close::CloseArgs),
    /// The public, outcome-blind count of an emission's prizes: per tier, the original count
    /// and how many remain (JSON or CSV), nothing positional.
    #[cfg(feature = "load")]
    PrizesRemaining(close::PrizesRemainingArgs),
    /// Make an Ed25519 signing key pair (PKCS#8 and SPKI PEM, readable by OpenSSL).
    Keygen(KeygenArgs),
    /// Make an emission seed and hand it out as age-encrypted shares to n custodians, any k
    /// of whom can rebuild it (or reshare an existing seed, or check a set of shares).
    Seed(SeedArgs),
    /// List the built-in games: stakes, block size, winners, payout ratio, odds; or preview
    /// one definition (--game FILE): its table and the forms its layouts show each prize with.
    Games(games::GamesArgs),
    /// Prove that one ticket belongs to a signed block (JSON on standard output).
    ///
    /// The proof holds the ticket's line, its index, its RFC 6962 audit path to the manifest's
    /// tickets_root, the manifest and its signature; `verify-proof` checks it without the
    /// block. The block is verified first: a block that does not verify gets no proof.
    Prove(prove::ProveArgs),
    /// Check a ticket proof without the block.
    ///
    /// Checked: the manifest's signature under the key given (as `verify` checks it), the
    /// manifest's game, definition and stake, the line against the manifest (serial, index,
    /// prize, hash) and the game's decoder, and the audit path folded to tickets_root.
    /// Exit status 1 if anything fails.
    VerifyProof(prove::VerifyProofArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Write the manual pages (roff), made from this command line's definition.
    Man(completions::ManArgs),
    /// Draw one ticket of a block as a player sees it (in the terminal, or as an SVG picture)
    /// and say how it decodes.
    Show(ShowArgs),
    /// Data for test laboratories: the raw output of the prize-order generator, the shuffled
    /// positions of a block's prizes (from a test emission's seed).
    Lab(lab::LabArgs),
    /// Pack a sealed emission into one file: tar, zstd, age to one or more recipients; an
    /// auditor opens it with `age -d -i KEY PACK | zstd -d | tar t`.
    Pack(pack::PackArgs),
    /// Restore an emission folder from a pack, byte for byte, whole or not at all.
    Unpack(pack::UnpackArgs),
    /// The version; with --verbose the commit, build profile and SHA-256 of this binary.
    Version(version::VersionArgs),
    /// Get an RFC 3161 trusted timestamp for an emission's record or seal, or for a pack
    /// (--pack), later than the run that wrote it, or through files for a machine without a
    /// network (--tsa-request-out, then --tsa-reply).
    Timestamp(tsa::TimestampArgs),
}

/// `emit` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory emit --game ruche-or --price 2 --blocks 10 --signing-key keys/signing-key.pem
  emission-factory emit --game maxi-ruche-or --first-block 11 --blocks 10 --emission-blocks 40 \\
      --share alice.share-1-of-3.age --share bob.share-2-of-3.age --identity my-identity.txt \\
      --signing-key keys/signing-key.pem
  emission-factory emit --game tests/data/mini-ruche.toml --price 2 --seed-file - < test.seed
  emission-factory emit --print-folder --game ruche-or --price 2.0 --out /shared/emissions
      # prints /shared/emissions/ruche-or/2/e0001; in a job script: folder=$(emission-factory ...)")]
pub struct EmitArgs {
    /// Game: a built-in id (ruche-or, maxi-ruche-or, annee-chance) or the path of a game
    /// definition (.toml).
    #[arg(long, value_name = "ID|FILE")]
    pub game: String,
    /// Ticket price in euros, one of the game's stakes (e.g. 0.5, 2). May be left out when
    /// the game has a single stake.
    #[arg(long, value_name = "EUROS")]
    pub price: Option<String>,
    /// Number of blocks to make.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub blocks: u32,
    /// Number of the first block (blocks are numbered from 1): hand each job of a batch
    /// engine its own range.
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub first_block: u32,
    /// Emission number.
    #[arg(long, default_value_t = 1, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=9_999))]
    pub emission: u32,
    /// Blocks the whole emission holds. Recorded by the emission's first run (later runs must
    /// agree); the run that completes them seals the emission. Without it, seal with `seal`.
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub emission_blocks: Option<u32>,
    /// Root folder of the block files; blocks go to DIR/<game>/<stake>/e<emission>/.
    #[arg(long, default_value = "emissions", value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub seed: options::SeedOptions,
    #[command(flatten)]
    pub shares: options::ShareOptions,
    /// The drand quicknet round the emission's record names (seed --beacon-round), as the JSON
    /// a drand relay serves for it (GET /<chain hash>/public/<R>), once published: its BLS
    /// signature is checked offline, and the blocks' seed is derived from the shares' secret
    /// and it. Needed exactly when the record names a round.
    #[arg(long, value_name = "FILE", requires = "share")]
    pub beacon: Option<PathBuf>,
    /// Ed25519 private key (PKCS#8 PEM) that signs the manifests: a regular file that group
    /// and others cannot read (mode 0600 or 0400). Without it, a one-time key is made for the
    /// emission and kept beside its seed file.
    #[arg(long, value_name = "PEM")]
    pub signing_key: Option<PathBuf>,
    /// Use a seed, key, share or identity file that group or others may read, with a warning,
    /// instead of refusing it (better: `chmod 600 FILE`).
    #[arg(long)]
    pub allow_insecure_key: bool,
    /// Let the group NAME (or a group id) read the emission: its folder is made 0750 and
    /// its files 0640, owned by that group (for the account of a game server that loads the
    /// blocks). Without it an emission folder is 0700 and its files 0600: until its tickets
    /// are sold, a block is as secret as the seed. Given for an existing emission, its folder
    /// and files are given to the group. Needs root or membership of the group.
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// Threads doing the work, in all (default: one per core): making the tickets, hashing
    /// and writing the file share them, so `--threads 1` runs everything on one thread. The
    /// files are the same whatever the number.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Make blocks again even if they exist (they are replaced).
    #[arg(long)]
    pub force: bool,
    /// Write the blocks' CSV files through the page cache. By default they are written around
    /// it (Linux O_DIRECT, where the file system allows it): less CPU, and a block of 1.5 GB
    /// does not push everything else out of memory; through it, a block verified or loaded on
    /// this machine straight after is read from memory instead of the disk. The files are the
    /// same either way.
    #[arg(long)]
    pub page_cache: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Make nothing: print the folder this emit would write into, from --game, --price,
    /// --emission and --out (DIR/<game id>/<stake>/e<emission:04>, the stake written
    /// canonically: --price 2.0 is 2), as one line, and exit 0. For job scripts, which ask it
    /// instead of building the path themselves.
    #[arg(long)]
    pub print_folder: bool,
    /// Print one JSON object instead of the summary (docs/FORMAT.md, "emit --json"); no
    /// progress bar. Notes and warnings stay on standard error. The exit status is the same.
    #[arg(long)]
    pub json: bool,
}

/// `verify` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory verify --public-key keys/public-key.pem emissions/ruche-or/2/e0001
  emission-factory verify --forms emissions/ruche-or/2/e0001/block-00007.csv
  emission-factory verify --seed-file - emissions/annee-chance/3/e0002 < audit.seed
  emission-factory verify --identity auditor.key --tsa-cert tsa.pem --pack-token e0001.pack.tsr e0001.pack
      # the pack, and its own trusted timestamp (pack --tsa-url), required: its time printed")]
pub struct VerifyArgs {
    /// Block CSV files, or folders to search for block-NNNNN.csv files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The public key (SPKI PEM) the blocks must be signed with. Without it the emission's own
    /// emission.pub.pem is used, which proves integrity but not origin.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// Check against this game definition (id or .toml path) instead of the built-in one the
    /// manifest names.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Also count, per prize, the forms the tickets show it in (e.g. "row", "2 rows + honey").
    #[arg(long)]
    pub forms: bool,
    #[command(flatten)]
    pub seed: options::SeedOptions,
    /// Use a seed, share or identity file that group or others may read, with a warning,
    /// instead of refusing it (better: `chmod 600 FILE`).
    #[arg(long)]
    pub allow_insecure_key: bool,
    #[command(flatten)]
    pub shares: options::ShareOptions,
    /// With the seed or the shares: the drand quicknet round the emission's record names, as
    /// the JSON a drand relay serves for it. Its signature is checked offline, and the blocks
    /// are replayed from the seed derived from the secret and it.
    #[arg(long, value_name = "FILE")]
    pub beacon: Option<PathBuf>,
    /// Accept an emission whose planned blocks are all made but that is not sealed yet
    /// (without it, that fails: a complete emission is sealed). A seal that the audit log
    /// says was made must be there all the same.
    #[arg(long)]
    pub allow_unsealed: bool,
    /// The SHA-256 of the emission's record (emission.json) as written in the ceremony's
    /// minutes: the record must be that one (one emission folder only).
    #[arg(long, value_name = "HEX", value_parser = sha256_hex)]
    pub record_sha256: Option<String>,
    /// The SHA-256 of the emission's seal (emission.seal.json) as kept elsewhere when it was
    /// sealed: the seal must be there and be that one, which also pins the audit log's lines
    /// up to the seal (one emission folder only).
    #[arg(long, value_name = "HEX", value_parser = sha256_hex)]
    pub seal_sha256: Option<String>,
    /// The certificate (PEM or DER) of a time-stamping authority: every RFC 3161 token of an
    /// emission (emission.json.tsr, emission.seal.json.tsr) is checked against it offline and
    /// its time printed. A token present, or named by the record or the seal, without the
    /// certificate that checks it fails. Repeatable (a TSA whose certificate was renewed).
    /// Of an emission pack, the pack's own token (PACK.tsr beside it, or --pack-token) is
    /// checked with them too, over the pack's bytes as read; a PACK.tsr without any
    /// --tsa-cert is left unchecked, with a note saying so.
    #[arg(long, value_name = "PEM")]
    pub tsa_cert: Vec<PathBuf>,
    /// Of an emission pack: its own RFC 3161 token (what `pack --tsa-url` keeps as PACK.tsr),
    /// which must be there and verify over the pack's bytes with a --tsa-cert given: a token
    /// missing or unreadable fails verify (exit 1), as one of another file or another TSA
    /// does. Without it, a PACK.tsr beside the pack is checked when it is there.
    #[arg(long, value_name = "FILE", requires = "tsa_cert")]
    pub pack_token: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print one JSON object instead of the text (docs/FORMAT.md, "verify --json"); no
    /// progress bar. The exit status is the same.
    #[arg(long)]
    pub json: bool,
}

/// A SHA-256 in hex (64 digits), lowercased.
fn sha256_hex(text: &str) -> Result<String, String> {
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err("a SHA-256 is 64 hex digits (as sha256sum prints it)".into())
    }
}

/// `report` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = REPORT_HELP)]
pub struct ReportArgs {
    /// Block CSV files, or folders to search for block-NNNNN.csv files (a whole emission), or
    /// one emission pack (with --identity).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// An age identity file (AGE-SECRET-KEY-1..., from age-keygen) of one of the recipients of
    /// the emission pack given (repeat as needed): the pack is read as a stream, never
    /// unpacked to disk.
    #[arg(long, value_name = "FILE")]
    pub identity: Vec<PathBuf>,
    /// Use an --identity file that group or others may read, with a warning, instead of
    /// refusing it (better: `chmod 600 FILE`).
    #[arg(long)]
    pub allow_insecure_key: bool,
    /// Also write the report as JSON (docs/FORMAT.md, "Report"; stable, versioned by
    /// report_format). `-` writes it to standard output instead of the text report.
    #[arg(long, value_name = "FILE", value_parser = output::target_parser())]
    pub json: Option<output::Target>,
    /// Also write the report as one self-contained HTML page (inline SVG plots, no script, no
    /// network). `-` writes it to standard output instead of the text report.
    #[arg(long, value_name = "FILE", value_parser = output::target_parser())]
    pub html: Option<output::Target>,
    /// Replace FILE of --json or --html if it exists (only a regular file is ever replaced:
    /// never a link, a device, a FIFO or a folder).
    #[arg(long)]
    pub force: bool,
    /// The public key (SPKI PEM) the blocks must be signed with. Without it the emission's own
    /// emission.pub.pem is used, which proves integrity but not origin.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// Check against this game definition (id or .toml path) instead of the built-in one the
    /// manifest names.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// The public version, for publication: nothing positional (no prizes along the block,
    /// no streak position, no sample ticket of a winning prize); tables, odds, payout and
    /// every test's verdict stay. Without it the report is confidential until the emission
    /// is sold out.
    #[arg(long, alias = "redact")]
    pub public: bool,
    /// Sample tickets drawn per prize in the HTML page (0 to 10).
    #[arg(long, value_name = "N", default_value_t = emission_factory::report::DEFAULT_SAMPLES,
          value_parser = samples_parser)]
    pub samples: usize,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

fn samples_parser(text: &str) -> Result<usize, String> {
    let most = emission_factory::report::scan::SAMPLES;
    match text.parse::<usize>() {
        Ok(n) if n <= most => Ok(n),
        _ => Err(format!(
            "--samples takes a number of tickets from 0 to {most}"
        )),
    }
}

const REPORT_HELP: &str = "\
Every block is first verified in full, as `verify` does (signature, every hash, the Merkle root,
every layout against its prize); a block that fails is listed and not analysed. The tickets are
then read again, explained by the game's decoder, and the file must still have the SHA-256 its
signed manifest states.

The statistics treat a block as what it is: a random permutation of a fixed multiset of prizes
(Article 3 fixes the counts), not independent draws. Their null laws are those of a random
order of the block's own prizes: positions per prize over 100 segments (chi-square with the
hypergeometric correction), runs of winners and losers, serial correlation at lags 1-10 of the
win indicator (normal tail) and of the prize amount (Chebyshev bound: a few top prizes make it
far from normal), gaps between winners against their exact law, the longest losing streak
(Bonferroni bounds of its exact law), and across the blocks of one emission the overlap of
their winners (hypergeometric). They fail at 99 % confidence after a Holm correction over the
whole report. The leak check compares, winners against losers, every feature seen outside the
winning parts (chi-square), flagged at p < 0.001 after Holm.

Exit status: 0 every test passed, 1 a block failed verification, a test failed or a leak was
flagged, 2 error.

Examples:
  emission-factory report emissions/ruche-or/2/e0001
  emission-factory report --public-key keys/public-key.pem --json report.json \\
      --html report.html emissions/maxi-ruche-or/3/e0001/block-00001.csv";

/// `seal` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  emission-factory seal --signing-key keys/signing-key.pem emissions/ruche-or/2/e0003"
)]
pub struct SealArgs {
    /// The emission folder (<out>/<game>/<stake>/e<emission>).
    #[arg(value_name = "FOLDER")]
    pub folder: PathBuf,
    /// The emission's signing key (PKCS#8 PEM). Default: the emission's one-time key in
    /// <out>/private/, if emit made one.
    #[arg(long, value_name = "PEM")]
    pub signing_key: Option<PathBuf>,
    /// Blocks the emission holds, if its record does not say (emit --emission-blocks).
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub blocks: Option<u32>,
    /// The public key (SPKI PEM) the emission must be signed with: a signing key of another is
    /// refused, and once sealed the folder is checked as a whole against it as `verify` checks
    /// an emission (exit 1 if it fails), so a batch seals and verifies reading each block once.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// The game definition (id or .toml path), if it is not a built-in game.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Threads verifying the blocks, in all (default: one per core): reading and hashing the
    /// file share them with the checks, so `--threads 1` runs everything on one thread.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Let the group NAME (or a group id) read the emission: its folder is made 0750 and
    /// its files 0640, owned by that group (for the account of a game server that loads the
    /// blocks). Without it an emission folder is 0700 and its files 0600: until its tickets
    /// are sold, a block is as secret as the seed. Given for an existing emission, its folder
    /// and files are given to the group. Needs root or membership of the group.
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// No notes on standard error (waiting for the lock, temporary files removed); the
    /// result line, warnings and errors stay.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print one JSON object instead of the result line (docs/FORMAT.md, "seal --json").
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tsa: tsa::TsaArgs,
}

/// `load` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  DATABASE_URL=postgresql://loader@/game?host=/run/postgresql \\\n    emission-factory load --public-key keys/public-key.pem emissions/ruche-or/2/e0003"
)]
#[cfg(feature = "load")]
pub struct LoadArgs {
    /// Block CSV files, or folders to search for block-NNNNN.csv files (loaded in name order),
    /// or one emission pack (with --identity: loaded whole, in one transaction, or not at all).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// An age identity file (AGE-SECRET-KEY-1..., from age-keygen) of one of the recipients of
    /// the emission pack given (repeat as needed): the pack is read as a stream, never
    /// unpacked to disk.
    #[arg(long, value_name = "FILE")]
    pub identity: Vec<PathBuf>,
    /// Use an --identity file that group or others may read, with a warning, instead of
    /// refusing it (better: `chmod 600 FILE`).
    #[arg(long)]
    pub allow_insecure_key: bool,
    /// The database, as libpq reads it: postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE
    /// (?host=/run/postgresql for a Unix socket), or "host=... dbname=... user=...". Default:
    /// the DATABASE_URL environment variable (better for a password: it stays out of the
    /// process list).
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// The public key (SPKI PEM) every block must be signed with: the key you trust, not the
    /// emission's own emission.pub.pem.
    #[arg(long, value_name = "PEM")]
    pub public_key: PathBuf,
    /// Check against this game definition (id or .toml path) instead of the built-in one the
    /// manifest names.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Load test emissions (seed given in clear; not for sale). A database holds test or
    /// production emissions, never both.
    #[arg(long)]
    pub allow_test: bool,
    /// Connect without TLS to a host other than this machine (refused otherwise: give
    /// sslmode=verify-full&sslrootcert=CA.pem in the URL).
    #[arg(long)]
    pub allow_plaintext: bool,
    /// No progress messages (no progress bar either).
    #[arg(long, short)]
    pub quiet: bool,
    /// Print one JSON object with the result on standard output instead of the text (no
    /// progress messages or bar; docs/FORMAT.md, "load --json").
    #[arg(long)]
    pub json: bool,
}

/// `show` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
What is checked before the ticket is drawn: the manifest and its signature (against \
--public-key, else the emission's own emission.pub.pem), the manifest's game definition, stake, \
prize table and folder, and the ticket's line: its serial, prize column and SHA-256, and that \
its layout is valid and wins exactly its prize column. The other tickets, the CSV's SHA-256 and \
the Merkle root are not checked: run `verify` for the whole block. A ticket that fails a check \
is not drawn (exit status 1).

With --prize or --form the ticket is the first (or --nth) of the block that wins that prize or \
shows that form; every line read up to it is checked as above.

Examples:
  emission-factory show emissions/ruche-or/2/e0001/block-00001.csv --ticket 42
  emission-factory show emissions/ruche-or/2/e0001/block-00001.csv \\
      --ticket ruche-or-200-0001-00001-0000042 --svg ticket.svg
  emission-factory show emissions/ruche-or/2/e0001/block-00001.csv --prize 20 --nth 3
  emission-factory show emissions/ruche-or/2/e0001/block-00001.csv --form '2 rows + honey'
  emission-factory show emissions/ruche-or/2/e0001/block-00001.csv --prize 0 --form near_miss_rows")]
#[command(group(clap::ArgGroup::new("search").args(["prize", "form"]).multiple(true)))]
pub struct ShowArgs {
    /// The block's CSV file (block-NNNNN.csv, beside its manifest and signature).
    #[arg(value_name = "BLOCK")]
    pub block: PathBuf,
    /// The ticket: its index in the block (from 0) or its serial.
    #[arg(
        long,
        value_name = "N|SERIAL",
        allow_hyphen_values = true,
        required_unless_present = "search",
        conflicts_with = "search"
    )]
    pub ticket: Option<String>,
    /// Show a ticket winning AMOUNT (euros, `0` for a loser): the first of the block, or the
    /// --nth. The error lists the prizes of the stake if none wins it.
    #[arg(long, value_name = "AMOUNT")]
    pub prize: Option<String>,
    /// Show a ticket whose layout shows FORM: the decoder's text of a form, as `games --game`
    /// and `report` list them (`row + honey`, `EXTRA: 2 rows`, `2 months + clover`, `loss`),
    /// or a near miss by its report name (`near_miss_rows`...). The error lists the forms the
    /// block holds, with their counts.
    #[arg(long, value_name = "FORM")]
    pub form: Option<String>,
    /// With --prize or --form: the K-th matching ticket of the block, from 1.
    #[arg(long, value_name = "K", default_value_t = 1, requires = "search",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub nth: u64,
    /// Also write the ticket as an SVG picture to FILE (hexagonal cells, or a calendar and a
    /// clover; self-contained, opens in any browser). `-` writes it to standard output
    /// instead of the drawing.
    #[arg(long, value_name = "FILE", value_parser = output::target_parser())]
    pub svg: Option<output::Target>,
    /// Replace FILE of --svg if it exists (only a regular file is ever replaced).
    #[arg(long)]
    pub force: bool,
    /// The public key (SPKI PEM) the block must be signed with. Without it the emission's own
    /// emission.pub.pem is used, which proves integrity but not origin.
    #[arg(long, value_name = "PEM")]
    pub public_key: Option<PathBuf>,
    /// Check against this game definition (id or .toml path) instead of the built-in one the
    /// manifest names.
    #[arg(long, value_name = "ID|FILE")]
    pub game: Option<String>,
    /// Colours: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long = "color", value_name = "WHEN", default_value = "auto")]
    pub colour: WhenColour,
    /// No drawing on standard output and no confirmation on standard error: only the checks
    /// (FAILED and exit status 1 for a ticket that fails), and the picture of --svg.
    #[arg(long, short)]
    pub quiet: bool,
}

/// When to colour the terminal drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WhenColour {
    /// On a terminal, unless the NO_COLOR environment variable is set (and not empty).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// `keygen` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory keygen --out keys
  fingerprint=$(emission-factory keygen --quiet --out keys)
  openssl pkey -pubin -in keys/public-key.pem -text     (the public key, read by OpenSSL)")]
pub struct KeygenArgs {
    /// Folder to write signing-key.pem (private, mode 0600) and public-key.pem into. It is
    /// made with mode 0700; an existing one is refused if group or others may write to it.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace existing key files (they are removed, never written through).
    #[arg(long)]
    pub force: bool,
    /// Print only the public key's SHA-256 (public_key_sha256), one line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `seed` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A new seed is the start of a production emission: `seed` also writes the emission's
signed record (game, stake, definition, seed commitment, the share set with every share file's
SHA-256, recipient and custodian label, the planned block count, the public key) and prints its
SHA-256 for the ceremony's minutes. It refuses an emission that already has a record.

Examples:
  emission-factory seed --game ruche-or --price 2 --emission 3 --shares-needed 2 \\
      --recipients-file custodians.txt --out shares --signing-key keys/signing-key.pem \\
      --emission-blocks 40
  emission-factory seed --game ruche-or --price 2 --emission 3 --check \\
      --share shares/ruche-or-2-e0003.share-1-of-3.age --identity alice.txt \\
      --share shares/ruche-or-2-e0003.share-2-of-3.age --identity bob.txt"
)]
pub struct SeedArgs {
    /// Game: a built-in id (ruche-or, maxi-ruche-or, annee-chance) or the path of a game
    /// definition (.toml).
    #[arg(long, value_name = "ID|FILE")]
    pub game: String,
    /// Ticket price in euros, one of the game's stakes. May be left out when the game has a
    /// single stake.
    #[arg(long, value_name = "EUROS")]
    pub price: Option<String>,
    /// Root folder of the emissions, as `emit --out`: the emission's audit log
    /// (DIR/<game>/<stake>/e<emission>/emission.log.jsonl) gets a line for this run.
    #[arg(long, default_value = "emissions", value_name = "DIR")]
    pub emissions: PathBuf,
    /// Emission number.
    #[arg(long, default_value_t = 1, value_name = "E", value_parser = clap::value_parser!(u32).range(1..=9_999))]
    pub emission: u32,
    /// k: how many custodians' shares rebuild the seed, from 2 to the number of recipients.
    #[arg(long, value_name = "K")]
    pub shares_needed: Option<u8>,
    /// A custodian's age public key (age1..., as printed by age-keygen): share i goes to the
    /// i-th recipient. Repeatable.
    #[arg(long, value_name = "AGE1...")]
    pub recipient: Vec<String>,
    /// A file of custodians' public keys, one age1... per line (# comments allowed); they
    /// come after those of --recipient, in order. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub recipients_file: Vec<PathBuf>,
    /// Folder for the share files, <game>-<stake>-e<E>.share-<i>-of-<n>.age (made mode 0700;
    /// files are created mode 0600 and never overwritten).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Rebuild the seed from existing shares (--share, --identity) and split it again for
    /// new recipients: the same seed, a new share set (when a custodian leaves).
    #[arg(long, conflicts_with = "check")]
    pub reshare: bool,
    /// Only rebuild the seed from --share and --identity, in memory, and report its
    /// commitment and share set; write nothing.
    #[arg(long)]
    pub check: bool,
    /// An existing share file, for --reshare or --check. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub share: Vec<PathBuf>,
    /// An age identity file (as written by age-keygen) that opens some of the --share files.
    /// Repeatable.
    #[arg(long, value_name = "FILE")]
    pub identity: Vec<PathBuf>,
    /// The emission's signing key (PKCS#8 PEM, as for emit): it signs the emission's record (a
    /// new seed) or the custody file of a reshare. Needed for both.
    #[arg(long, value_name = "PEM")]
    pub signing_key: Option<PathBuf>,
    /// A future round of the drand quicknet beacon, named in the record: the blocks' seed is
    /// derived from the custodians' secret and that round's signature, published later, so
    /// that nobody, custodians or operator, can choose the seed. Its time must be after the
    /// record's.
    #[arg(long, value_name = "R", conflicts_with_all = ["reshare", "check"], value_parser = clap::value_parser!(u64).range(1..))]
    pub beacon_round: Option<u64>,
    /// Like --beacon-round, naming the first round published after TIME (RFC 3339, UTC, e.g.
    /// 2027-01-15T10:00:00Z), computed from quicknet's genesis and period.
    #[arg(long, value_name = "TIME", conflicts_with_all = ["beacon_round", "reshare", "check"])]
    pub beacon_after: Option<String>,
    /// Blocks the emission will hold, fixed in its record (emit seals the emission once all
    /// are made; given again to emit, it must be the same).
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub emission_blocks: Option<u32>,
    /// Use a share or identity file that group or others may read, with a warning, instead
    /// of refusing it (better: `chmod 600 FILE`).
    #[arg(long)]
    pub allow_insecure_key: bool,
    /// Let the group NAME (or a group id) read the emission: its folder is made 0750 and
    /// its files 0640, owned by that group (for the account of a game server that loads the
    /// blocks). Without it an emission folder is 0700 and its files 0600: until its tickets
    /// are sold, a block is as secret as the seed. Given for an existing emission, its folder
    /// and files are given to the group. Needs root or membership of the group.
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// No notes on standard error; what is printed for the minutes, warnings and errors stay.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub tsa: tsa::TsaArgs,
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Emit(args) => emit::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Report(args) => report::run(args),
        Command::Seal(args) => seal::run(args),
        #[cfg(feature = "load")]
        Command::Load(args) => load::run(args),
        #[cfg(feature = "load")]
        Command::DbVerify(args) => db_verify::run(args),
        Command::Withdraw(args) => withdraw::run(args),
        #[cfg(feature = "load")]
        Command::Close(args) => close::run_close(args),
        #[cfg(feature = "load")]
        Command::PrizesRemaining(args) => close::run_prizes_remaining(args),
        Command::Keygen(args) => keygen::run(args),
        Command::Seed(args) => seed::run(args),
        Command::Games(args) => games::run(args),
        Command::Prove(args) => prove::run(args),
        Command::VerifyProof(args) => prove::run_verify(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => completions::run_man(args),
        Command::Show(args) => show::run(args),
        Command::Version(args) => version::run(args),
        Command::Lab(args) => lab::run(args),
        Command::Timestamp(args) => tsa::run(args),
        Command::Pack(args) => pack::run_pack(args),
        Command::Unpack(args) => pack::run_unpack(args),
    }
}

/// The stake for `--price`: any decimal spelling of a stake (2, 2.0, 2.00), or the only stake
/// of a single-stake game.
fn stake<'g>(
    game: &'g emission_factory::game::Game,
    price: Option<&str>,
) -> anyhow::Result<&'g emission_factory::game::Stake> {
    let price = match price {
        Some(p) => p
            .trim()
            .parse::<rust_decimal::Decimal>()
            .map(|d| d.normalize())
            .map_err(|_| anyhow::anyhow!("--price {p}: not an amount in euros such as 0.5 or 2"))?,
        None if game.stakes.len() == 1 => game.stakes[0].price,
        None => anyhow::bail!(
            "--price is needed: {} has stakes of {} €",
            game.id,
            game.stake_list()
        ),
    };
    Ok(game.stake(price)?)
}

/// What `verify`, `report`, `show` and `prove` trust: the public key given (read and checked
/// here, the error naming the file) and the game definition given (a built-in id or a file);
/// without them, the emission's own key and the built-in definition the manifest names.
fn trusted(
    public_key: Option<&std::path::Path>,
    game: Option<&str>,
) -> anyhow::Result<emission_factory::verify::VerifyOptions> {
    Ok(emission_factory::verify::VerifyOptions {
        public_key: public_key
            .map(emission_factory::block::keys::read_public_key)
            .transpose()?,
        game: game
            .map(emission_factory::game::Game::resolve)
            .transpose()?,
        ..Default::default()
    })
}

/// A rayon pool of `threads` workers (default: one per core): the engine runs every part of
/// its work (reading, hashing, writing) as tasks of this pool, so these are all the threads
/// that work.
fn pool(threads: Option<u16>) -> anyhow::Result<rayon::ThreadPool> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        builder = builder.num_threads(usize::from(t));
    }
    builder
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start worker threads: {e}"))
}

/// The terminal's progress bar, as the engine's [`Progress`]: the engine knows no terminal.
pub struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn set_total(&self, total: u64) {
        self.0.set_length(total);
    }

    fn add(&self, n: u64) {
        self.0.inc(n);
    }

    fn stage(&self, name: &str) {
        self.0.set_message(name.to_string());
        self.0.set_position(0);
    }
}

impl std::ops::Deref for Bar {
    type Target = indicatif::ProgressBar;

    fn deref(&self) -> &indicatif::ProgressBar {
        &self.0
    }
}

/// The progress bar on stderr, hidden when stderr is not a terminal or `quiet` is set. With a
/// length it shows a bar and the time left; without one, a count of tickets and the rate.
fn progress_bar(quiet: bool, message: &str, length: Option<u64>) -> Bar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return Bar(indicatif::ProgressBar::hidden());
    }
    let template = match length {
        Some(_) => {
            "{msg} [{elapsed_precise}] {wide_bar} {done}/{total} tickets ({rate}, {eta} left)"
        }
        None => "{spinner} {msg} [{elapsed_precise}] {done} tickets checked ({rate})",
    };
    let bar = match length {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .with_key(
                "done",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}", grouped(state.pos()));
                },
            )
            .with_key(
                "total",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}", grouped(state.len().unwrap_or(0)));
                },
            )
            .with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{} tickets/s", grouped(state.per_sec() as u64));
                },
            ),
    );
    bar.set_message(message.to_string());
    Bar(bar)
}

pub use emission_factory::money::grouped;
