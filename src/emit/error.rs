//! What can go wrong while blocks are made and an emission is sealed: [`EmitError`], each
//! variant with its place (the block, the ticket, the file). The lower layers' errors are
//! carried whole, so that the message reads as it always has and a signal stays a signal.

use crate::untrusted::{shown, shown_path};
use std::path::PathBuf;

/// An emission run that failed, and where.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// The game has no such stake.
    #[error(transparent)]
    Game(#[from] crate::game::GameError),
    /// A file or folder of the emission could not be read, written or removed.
    #[error(transparent)]
    Fs(#[from] crate::fs::FsError),
    /// A lock of the emission or of a block could not be taken or released.
    #[error(transparent)]
    Lock(#[from] crate::emission::lock::LockError),
    /// A shared file of the emission (its definition's copy, its key) is refused.
    #[error(transparent)]
    File(#[from] crate::emission::FileError),
    /// The emission's record refuses this run, or cannot be read or written.
    #[error(transparent)]
    Record(Box<crate::emission::record::RecordError>),
    /// The emission's audit log cannot take the run's line.
    #[error(transparent)]
    Log(#[from] crate::emission::log::LogError),
    /// The emission cannot be sealed, or its seal read.
    #[error(transparent)]
    Seal(Box<crate::emission::seal::SealError>),
    /// The ceremony's record or shares refuse this run.
    #[error(transparent)]
    Ceremony(Box<crate::emission::ceremony::CeremonyError>),
    /// The beacon round the record names is refused.
    #[error(transparent)]
    Beacon(#[from] crate::emission::beacon::BeaconError),
    /// The signing key's fingerprint cannot be computed.
    #[error(transparent)]
    Key(#[from] crate::block::keys::KeyError),
    /// A signal stopped the run (main finds it by [`crate::interrupt::requested`]).
    #[error(transparent)]
    Interrupted(#[from] crate::interrupt::Interrupted),
    /// The run's seed cannot be read, made or parsed.
    #[error(transparent)]
    Seed(#[from] SeedError),
    /// The custody shares do not rebuild the emission's seed.
    #[error(transparent)]
    Custody(#[from] crate::custody::CustodyError),
    /// `--beacon` on a run that is not a production emission's.
    #[error(
        "--beacon is for a production emission whose ceremony named a beacon round (seed --beacon-round): its seed is rebuilt from custody shares (--share, --identity). Nothing was written"
    )]
    BeaconNotProduction,
    /// A production run without the lottery's own signing key.
    #[error(
        "a production emission (--share) is signed with the lottery's own key: give --signing-key (make one with keygen). Nothing was written"
    )]
    ProductionWithoutKey,
    /// A run without custody shares on a production emission.
    #[error(
        "{} is a production emission: its seed comes only from its custody shares; give them with --share and --identity (k of them). Nothing was written",
        .folder.display()
    )]
    ProductionWithoutShares {
        /// The emission folder.
        folder: PathBuf,
    },
    /// A prize of the stake cannot be shown by the game's layouts (the synthesizer's refusal,
    /// as it says it).
    #[error("game {game}: {reason}")]
    Unshowable {
        /// The game's identifier.
        game: String,
        /// Why.
        reason: crate::mechanic::BuildError,
    },
    /// The blocks were made, and the run's audit line could not be appended.
    #[error("the blocks were made, but the audit log failed")]
    LogAfterBlocks {
        /// Why.
        #[source]
        source: crate::emission::log::LogError,
    },
    /// The audit log, read before any block is made, refuses the run.
    #[error("the emission's audit log, read before any block is made")]
    AuditLog {
        /// Why.
        #[source]
        source: crate::emission::log::LogError,
    },
    /// The audit log records a seal, and the seal file is gone.
    #[error(
        "the audit log of {} records a seal (line {line}), and {seal_file} is missing: it was deleted (restore it from the archive), or the sealing run was killed before writing it (run `emission-factory seal` again). A sealed emission takes no new block; nothing was made",
        shown_path(.folder)
    )]
    SealMissing {
        /// The emission folder.
        folder: PathBuf,
        /// The log's line that records the seal.
        line: u64,
        /// The seal file's name.
        seal_file: &'static str,
    },
    /// A block's file name holds something that is not ours to replace.
    #[error("block {number} cannot be written in {}", shown_path(.folder))]
    BlockOutput {
        /// The block.
        number: u32,
        /// The emission folder.
        folder: PathBuf,
        /// What is at the name.
        #[source]
        source: crate::fs::output::OutputError,
    },
    /// A block already there does not verify.
    #[error(
        "block {number} already exists in {} but does not verify:\n{problems}\nIt was kept untouched; move it away, or give --force to make it again.",
        .folder.display()
    )]
    KeptBlockBroken {
        /// The block.
        number: u32,
        /// The emission folder.
        folder: PathBuf,
        /// Verify's problems, one a line.
        problems: String,
    },
    /// A block was written but its lock stayed.
    #[error("block {number:05} was written, but its lock could not be released")]
    BlockLockRelease {
        /// The block.
        number: u32,
        /// Why.
        #[source]
        source: crate::emission::lock::LockError,
    },
    /// The record file is there but cannot be read as one.
    #[error("{}: unreadable emission record", .folder.display())]
    UnreadableRecord {
        /// The emission folder.
        folder: PathBuf,
    },
    /// The run asks for a block beyond `--emission-blocks`.
    #[error("--emission-blocks {planned}: this run asks for block {last}, beyond the emission's last block")]
    BeyondPlanned {
        /// The planned number of blocks.
        planned: u32,
        /// The run's last block.
        last: u32,
    },
    /// The run asks for a block beyond the record's number of blocks.
    #[error(
        "the emission in {} holds {planned} blocks (its record says so); block {last} is beyond it",
        .folder.display()
    )]
    BeyondRecord {
        /// The emission folder.
        folder: PathBuf,
        /// The record's number of blocks.
        planned: u32,
        /// The run's last block.
        last: u32,
    },
    /// The emission is sealed: no block may be made or remade.
    #[error(
        "the emission in {} is sealed: its blocks can no longer be made or remade",
        .folder.display()
    )]
    Sealed {
        /// The emission folder.
        folder: PathBuf,
    },
    /// A block made by another run does not verify: no seal.
    #[error("cannot seal {}: block {number} does not verify:\n{problems}", .folder.display())]
    SealBlockBroken {
        /// The emission folder.
        folder: PathBuf,
        /// The block.
        number: u32,
        /// Verify's problems, one a line.
        problems: String,
    },
    /// The block range is empty or outside 1 to 99999.
    #[error(
        "blocks {first} to {last}: blocks are numbered from 1 to 99999 (five digits in file names and serials), and a run makes at least one"
    )]
    BlockRange {
        /// The first block asked.
        first: u32,
        /// The last block asked (may be out of range).
        last: u64,
    },
    /// The CSV's temporary file could not be written.
    #[error("cannot write {} (disk full?)", .path.display())]
    CsvWrite {
        /// The temporary file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A chunk of tickets is not on a Merkle subtree boundary (a bug).
    #[error("internal error: a chunk of tickets is not on a Merkle subtree boundary")]
    MerkleBoundary,
    /// The synthesizer failed on a ticket.
    #[error("ticket {serial}: cannot synthesize a layout")]
    Synthesize {
        /// The ticket's serial.
        serial: String,
        /// Why.
        #[source]
        source: crate::mechanic::SynthesisError,
    },
    /// A synthesized layout decodes to another prize than its ticket's.
    #[error(
        "ticket {serial}: the synthesized layout decodes to {decoded} € but its prize is {prize} € ({layout}); no file was written for this block"
    )]
    WrongPrize {
        /// The ticket's serial.
        serial: String,
        /// The amount the layout decodes to.
        decoded: String,
        /// The ticket's prize.
        prize: String,
        /// The layout.
        layout: String,
    },
    /// A synthesized layout does not decode.
    #[error(
        "ticket {serial}: the synthesized layout is invalid: {reason} ({layout}); no file was written for this block"
    )]
    InvalidLayout {
        /// The ticket's serial.
        serial: String,
        /// The decoder's refusal.
        reason: String,
        /// The layout.
        layout: String,
    },
}

// The record's, the seal's and the ceremony's errors are boxed: they are the largest, and a
// run's result is passed up by value (clippy's `result_large_err`).
impl From<crate::emission::ceremony::CeremonyError> for EmitError {
    fn from(error: crate::emission::ceremony::CeremonyError) -> Self {
        EmitError::Ceremony(Box::new(error))
    }
}

impl From<crate::emission::record::RecordError> for EmitError {
    fn from(error: crate::emission::record::RecordError) -> Self {
        EmitError::Record(Box::new(error))
    }
}

impl From<crate::emission::seal::SealError> for EmitError {
    fn from(error: crate::emission::seal::SealError) -> Self {
        EmitError::Seal(Box::new(error))
    }
}

/// A seed (64 hexadecimal digits) that cannot be read, made or parsed, and from where.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// Not 64 hexadecimal digits.
    #[error(transparent)]
    NotHex(#[from] NotHexSeed),
    /// A stream (standard input, a file descriptor) could not be read.
    #[error("cannot read the seed from {what}")]
    Read {
        /// The stream.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A stream holds more than a seed.
    #[error(
        "the seed from {what} is longer than {limit} bytes: give only its 64 hexadecimal digits"
    )]
    TooLong {
        /// The stream.
        what: String,
        /// The most bytes read.
        limit: u64,
    },
    /// A stream's bytes are not text.
    #[error("the seed from {what} must be 64 hexadecimal digits (0-9, a-f), and is not text")]
    NotText {
        /// The stream.
        what: String,
    },
    /// A stream's text is not a seed.
    #[error("the seed from {what}")]
    Stream {
        /// The stream.
        what: String,
        /// Why.
        #[source]
        source: NotHexSeed,
    },
    /// A seed file's bytes are not text.
    #[error("seed file {}: not text", .path.display())]
    FileNotText {
        /// The seed file.
        path: PathBuf,
    },
    /// A seed file's text is not a seed.
    #[error("seed file {}", .path.display())]
    File {
        /// The seed file.
        path: PathBuf,
        /// Why.
        #[source]
        source: NotHexSeed,
    },
    /// `--seed-file` names no file.
    #[error(
        "--seed-file {}: no such file. A seed file is never created by --seed-file; leave out every seed option on an emission's first run to draw a new seed",
        .path.display()
    )]
    NoSuchFile {
        /// The path given.
        path: PathBuf,
    },
    /// The seed file could not be read or written (its mode, its folder, a disk error).
    #[error(transparent)]
    Fs(#[from] crate::fs::FsError),
    /// The system's random generator failed while drawing a new seed.
    #[error("the system's random generator failed: {0}")]
    Random(getrandom::Error),
}

/// Text that is not a seed: 256 bits are 64 hexadecimal digits.
#[derive(Debug, thiserror::Error)]
#[error(
    "the seed must be 256 bits written as 64 hexadecimal digits (0-9, a-f), got {length} characters"
)]
pub struct NotHexSeed {
    /// The characters found, blanks around them left out.
    pub length: usize,
}

/// A sealing ([`super::seal::seal`]) that failed, and where.
#[derive(Debug, thiserror::Error)]
pub enum SealRunError {
    /// The signing key cannot be read, or its fingerprint computed.
    #[error(transparent)]
    Key(#[from] crate::block::keys::KeyError),
    /// A file or folder of the emission could not be read, written or removed.
    #[error(transparent)]
    Fs(#[from] crate::fs::FsError),
    /// The emission lock could not be taken.
    #[error(transparent)]
    Lock(#[from] crate::emission::lock::LockError),
    /// What a killed run left could not be removed.
    #[error(transparent)]
    File(#[from] crate::emission::FileError),
    /// The audit log cannot take the sealing's line.
    #[error(transparent)]
    Log(#[from] crate::emission::log::LogError),
    /// The seal cannot be written, or the record or manifests read for it.
    #[error(transparent)]
    Seal(#[from] crate::emission::seal::SealError),
    /// The definition kept in the folder is refused.
    #[error(transparent)]
    Definition(#[from] crate::verify::DefinitionError),
    /// The game is not built in, or has no such stake.
    #[error(transparent)]
    Game(#[from] crate::game::GameError),
    /// A signal stopped the run (main finds it by [`crate::interrupt::requested`]).
    #[error(transparent)]
    Interrupted(#[from] crate::interrupt::Interrupted),
    /// The folder has no record.
    #[error(
        "{} is not an emission folder with a record ({}); give <out>/<game>/<stake>/e<emission>",
        shown_path(.folder),
        crate::emission::record::RECORD_FILE
    )]
    NotEmissionFolder {
        /// The folder given.
        folder: PathBuf,
    },
    /// The signing key is not the one `--public-key` names.
    #[error(
        "the signing key {} (public key SHA-256 {key_sha256}) is not the one --public-key names (SHA-256 {given_sha256}): give the emission's signing key, or its public key. Nothing was done",
        shown_path(.key_path)
    )]
    KeyMismatch {
        /// The signing key file.
        key_path: PathBuf,
        /// Its public key's SHA-256, hex.
        key_sha256: String,
        /// The SHA-256 of `--public-key`, hex.
        given_sha256: String,
    },
    /// `--blocks` differs from the record's count.
    #[error("--blocks {given}: the emission's record says it holds {record} blocks")]
    BlocksDiffer {
        /// `--blocks`.
        given: u32,
        /// The record's count.
        record: u32,
    },
    /// Neither the record nor `--blocks` says how many blocks.
    #[error(
        "how many blocks make this emission? Its record does not say (emit --emission-blocks); give --blocks B"
    )]
    BlocksUnknown,
    /// The definition is not the record's.
    #[error(
        "the game definition {} is not the emission's (SHA-256 {sha256}, the record says {}); give --game with the definition used",
        shown_path(std::path::Path::new(.source_file)),
        shown(.record_sha256)
    )]
    DefinitionMismatch {
        /// Where the definition came from.
        source_file: String,
        /// Its SHA-256, hex.
        sha256: String,
        /// The record's.
        record_sha256: String,
    },
    /// The record's stake is not a canonical amount.
    #[error("the record's stake {} is not a canonical amount", shown(.stake))]
    StakeNotCanonical {
        /// The stake as written.
        stake: String,
    },
    /// Blocks that do not verify: no seal.
    #[error("cannot seal {}: blocks do not verify:\n  {failed}", shown_path(.folder))]
    BlocksBroken {
        /// The emission folder.
        folder: PathBuf,
        /// Each block's problems.
        failed: String,
    },
    /// No `--signing-key` and no one-time key.
    #[error(
        "no --signing-key, and no one-time key at {}: give the emission's --signing-key",
        shown_path(.path)
    )]
    NoOneTimeKey {
        /// Where the one-time key would be.
        path: PathBuf,
    },
    /// The folder is not named as an emission's, so its one-time key cannot be found.
    #[error(
        "{} is not named <out>/<game>/<stake>/e<NNNN>: give the emission's --signing-key",
        shown_path(.folder)
    )]
    NotNamed {
        /// The folder given.
        folder: PathBuf,
    },
    /// The sealing failed, and its failure could not be logged.
    #[error("and its failure could not be logged: {log}")]
    FailureNotLogged {
        /// The log's error, with its causes.
        log: String,
        /// The sealing's error.
        #[source]
        source: Box<SealRunError>,
    },
    /// The sealing failed, and the lock could not be released.
    #[error("and the lock could not be released: {lock}")]
    LockNotReleased {
        /// The lock's error, with its causes.
        lock: String,
        /// The sealing's error.
        #[source]
        source: Box<SealRunError>,
    },
}
