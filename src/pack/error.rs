//! The errors of emission packs ([`super`]): each names its place (the pack, the member, the
//! block, the folder or file) and says why, in the words an operator or an auditor acts on.
//!
//! An error of the operating system is the variant's `source` when the sentence ends with it, so
//! that `{:#}` (how the program prints an error) shows the variant's sentence, then `: `, then
//! the system's words; a variant whose message has always held a cause inline (an age, zstd or
//! tar error of a hostile pack, say) holds it as `error` and shows it in its own sentence.

use super::lines::LinesError;
use crate::block::id::EmissionId;
use crate::block::keys::{KeyError, SignatureError};
use crate::block::manifest::ManifestError;
use crate::fs::open::ReadError;
use crate::fs::output::OutputError;
use crate::fs::FsError;
use crate::interrupt::Interrupted;
use crate::json::StrictJsonError;
use crate::untrusted::shown_path;
use std::io;
use std::path::PathBuf;

/// Why a pack was not written, read, checked, loaded, reported or unpacked.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped the run; what it left is removed.
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    /// A read was stopped by a signal (the I/O error a reader returns once one was received).
    #[error(transparent)]
    Stopped(io::Error),
    /// A file or folder was refused or not written (see [`FsError`]).
    #[error(transparent)]
    Fs(#[from] FsError),
    /// The pack's output file was not put in place (see [`OutputError`]).
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The emission's public key did not read (see [`KeyError`]).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The report of a block read from the pack could not be made.
    #[error(transparent)]
    Report(crate::report::ReportError),
    /// The seed of the emission a pack names could not be rebuilt from the custody shares
    /// given for its check.
    #[error(transparent)]
    Check(crate::custody::CustodyError),

    // Reading a pack.
    /// The pack file could not be opened (missing, not a regular file, no permission).
    #[error("cannot read the pack {pack}")]
    Open {
        /// The pack, as shown.
        pack: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The pack file's bytes after the age stream (hashed for its trusted timestamp) did not
    /// read.
    #[error("{pack}: cannot read it to its end: {error}")]
    ReadToEnd {
        /// The pack, as shown.
        pack: String,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// The file is not an age file, or its age header is damaged: not an emission pack.
    #[error("{pack}: not an emission pack (not an age file, or its header is damaged): {error}")]
    NotAPack {
        /// The pack, as shown.
        pack: String,
        /// age's error (shown in the sentence).
        error: age::DecryptError,
    },
    /// None of the identities given is a recipient of the pack.
    #[error("{pack}: none of the identities given opens it: it was packed for other recipients (give the identity of one of them with --identity)")]
    NoMatchingIdentity {
        /// The pack, as shown.
        pack: String,
    },
    /// The pack's header does not decrypt: damaged or changed.
    #[error("{pack}: cannot decrypt it (damaged or changed): {error}")]
    Decrypt {
        /// The pack, as shown.
        pack: String,
        /// age's error (shown in the sentence).
        error: age::DecryptError,
    },
    /// The zstd stream inside the pack could not be started.
    #[error("{pack}: cannot start reading the compressed stream")]
    Decompress {
        /// The pack, as shown.
        pack: String,
        /// zstd's error.
        #[source]
        source: io::Error,
    },
    /// The tar stream inside the pack does not read.
    #[error("{pack}: cannot read the tar stream: {error}")]
    TarStream {
        /// The pack, as shown.
        pack: String,
        /// The error (shown in the sentence).
        error: io::Error,
    },
    /// The header of the pack's member `number` does not read: damaged or changed.
    #[error("{pack}: member {number}: cannot read it (damaged or changed): {error}")]
    MemberHeader {
        /// The pack, as shown.
        pack: String,
        /// The member's number, from 1.
        number: usize,
        /// The error (shown in the sentence).
        error: io::Error,
    },
    /// The tar headers before the pack's member `number` (its header, a long name, PAX
    /// records) take more than `limit` bytes: refused before they are read whole.
    #[error("{pack}: member {number}: its tar headers take more than {limit} bytes (a long name or PAX records of that size; a pack this program made has a header and a name of a few hundred bytes): refused unread")]
    HeaderTooLarge {
        /// The pack, as shown.
        pack: String,
        /// The member's number, from 1.
        number: usize,
        /// [`super::read::MAX_HEADER_BYTES`].
        limit: u64,
    },
    /// A member of the pack is refused: see [`MemberProblem`].
    #[error("{pack}: member {number} ({name}): {problem}")]
    Member {
        /// The pack, as shown.
        pack: String,
        /// The member's number, from 1.
        number: usize,
        /// The member's name, as shown.
        name: String,
        /// What is wrong with it.
        problem: MemberProblem,
    },
    /// A block's lines member failed its check (the cause says how).
    #[error("{pack}: member {number} ({name})")]
    Lines {
        /// The pack, as shown.
        pack: String,
        /// The member's number, from 1.
        number: usize,
        /// The member's name, as shown.
        name: String,
        /// What failed.
        #[source]
        source: Box<PackError>,
    },
    /// A CSV rebuilt from its lines member does not read: the lines are damaged or changed.
    #[error("cannot read it (damaged or changed): {error}")]
    Rebuilt {
        /// The error (a [`LinesError`] inside an I/O error, or the stream's; shown in the
        /// sentence).
        error: io::Error,
    },
    /// The end of the pack (the tar's padding, the ends of the zstd and age streams, which
    /// authenticate the whole) does not read.
    #[error("{pack}: the end of the pack does not read (damaged, changed or cut): {error}")]
    End {
        /// The pack, as shown.
        pack: String,
        /// The error (shown in the sentence).
        error: io::Error,
    },
    /// Bytes other than zeros, or too many, follow the tar's end.
    #[error("{pack}: bytes follow the tar's end: not a pack this program made")]
    AfterTar {
        /// The pack, as shown.
        pack: String,
    },
    /// Bytes follow the end of the zstd stream.
    #[error("{pack}: bytes follow the compressed stream: not a pack this program made")]
    AfterStream {
        /// The pack, as shown.
        pack: String,
    },
    /// The pack holds no member.
    #[error("{pack}: an empty pack")]
    Empty {
        /// The pack, as shown.
        pack: String,
    },
    /// The pack lacks a file every sealed emission holds.
    #[error("{pack}: no {file}: a pack of a sealed emission holds it")]
    MissingMember {
        /// The pack, as shown.
        pack: String,
        /// The file's name.
        file: String,
    },
    /// A block's manifest is in the pack, not its CSV.
    #[error("{pack}: block {block} has a manifest and no CSV: cut or changed")]
    NoCsv {
        /// The pack, as shown.
        pack: String,
        /// The block.
        block: u32,
    },
    /// A block's manifest is in the pack, not its signature.
    #[error("{pack}: block {block} has no manifest signature: cut or changed")]
    NoManifestSignature {
        /// The pack, as shown.
        pack: String,
        /// The block.
        block: u32,
    },

    // Staging a pack's members.
    /// The private temporary folder of a pack's signed files could not be made.
    #[error("cannot create a private temporary folder for the pack's signed files")]
    TempFolder {
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The operating system refused an operation on a file or folder: `action` says which
    /// ("create", "lock", "sync", "set the mode of"...), `path` where.
    #[error("cannot {action} {path}")]
    Io {
        /// What was being done, after "cannot".
        action: &'static str,
        /// The file or folder, as shown.
        path: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file's bytes could not be written; often the disk is full.
    #[error("cannot write {path} (disk full?)")]
    Write {
        /// The file, as shown.
        path: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file's last buffered bytes could not be written; often the disk is full.
    #[error("cannot write {path} (disk full?): {error}")]
    WriteEnd {
        /// The file, as shown.
        path: String,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// The thread checking a block's CSV ended without an answer (a bug).
    #[error("internal error: the check of block {block} stopped")]
    CheckStopped {
        /// The block.
        block: u32,
    },
    /// A block's CSV member did not read while it was handed to its check: damaged or changed.
    #[error("{pack}: block {block}'s CSV: cannot read it (damaged or changed): {error}")]
    BlockUnreadable {
        /// The pack, as shown.
        pack: String,
        /// The block.
        block: u32,
        /// The error (shown in the sentence).
        error: io::Error,
    },

    // Loading a pack.
    /// The database transaction of a pack could not be started.
    #[error("{pack}: cannot start the pack's transaction: {reason}")]
    StartTransaction {
        /// The pack, as shown.
        pack: String,
        /// The database's error, explained.
        reason: String,
    },
    /// The pack did not read or load whole, so its transaction was rolled back.
    #[error("{pack}: nothing of the pack is loaded")]
    NothingLoaded {
        /// The pack, as shown.
        pack: String,
        /// Why.
        #[source]
        source: Box<PackError>,
    },
    /// The pack's transaction could not be committed: nothing of it is loaded.
    #[error("{pack}: cannot commit the pack's transaction: nothing of it is loaded: {reason}")]
    Commit {
        /// The pack, as shown.
        pack: String,
        /// The database's error, explained.
        reason: String,
    },
    /// A block of the pack did not load (`load`'s error, the staged folder named as the pack).
    #[error("{message}")]
    Load {
        /// `load`'s message.
        message: String,
    },

    // Unpacking a pack.
    /// The folder given to `--out` does not exist.
    #[error("--out {}: no such folder; create it first (mkdir -m 700 {})", shown_path(.out), crate::fs::files::shell_quoted(.out))]
    OutMissing {
        /// The folder.
        out: PathBuf,
    },
    /// The folder given to `--out` cannot be looked at.
    #[error("--out {}: {error}", shown_path(.out))]
    OutUnreadable {
        /// The folder.
        out: PathBuf,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// What `--out` names is not a folder.
    #[error("--out {}: not a folder", shown_path(.out))]
    OutNotFolder {
        /// The path.
        out: PathBuf,
    },
    /// A folder left by an unpack that was killed could not be removed.
    #[error("cannot remove {path}, left by an unpack that was killed")]
    RemoveStale {
        /// The folder, as shown.
        path: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The emission's folder is already where the pack would be unpacked: nothing is unpacked
    /// over it.
    #[error("{path} exists: nothing is unpacked over an emission folder; give another --out, or move it away")]
    FolderExists {
        /// The emission folder, as shown.
        path: String,
    },
    /// The unpacked folder could not take its emission's name.
    #[error("cannot rename {from} to {to}: {error}")]
    RenameFolder {
        /// The staging folder, as shown.
        from: String,
        /// The emission folder, as shown.
        to: String,
        /// The operating system's error (shown in the sentence).
        error: io::Error,
    },
    /// The unpacked emission does not pass the checks of a sealed emission folder.
    #[error(
        "the pack's emission does not hold together, so nothing was restored:\n  - {problems}"
    )]
    NotTogether {
        /// The problems found, one a line.
        problems: String,
    },
    /// A block's CSV did not read from the pack while it was unpacked.
    #[error("block {block}'s CSV: cannot read it from the pack (damaged or changed): {error}")]
    CsvUnreadable {
        /// The block.
        block: u32,
        /// The error (shown in the sentence).
        error: io::Error,
    },
    /// A block's CSV in the pack is not the one its manifest names.
    #[error("block {block}'s CSV in the pack has SHA-256 {sha256} ({bytes} bytes), its manifest says {wanted_sha256} ({wanted_bytes} bytes): the pack was changed; nothing is unpacked")]
    CsvChanged {
        /// The block.
        block: u32,
        /// The SHA-256 of the CSV read.
        sha256: String,
        /// Its bytes.
        bytes: u64,
        /// The SHA-256 the manifest names, as shown.
        wanted_sha256: String,
        /// The bytes the manifest names.
        wanted_bytes: u64,
    },

    // Writing a pack.
    /// No recipient was given: nobody could open the pack.
    #[error(
        "no recipient: give --recipient AGE1... or --recipients-file FILE (who may open the pack)"
    )]
    NoRecipient,
    /// The zstd level asked for is not one of 1 to 19.
    #[error("--level {level}: zstd levels here are 1 to 19")]
    Level {
        /// The level asked for.
        level: i32,
    },
    /// `--out -` onto a terminal: a pack is binary.
    #[error("--out -: standard output is a terminal, and a pack is binary: redirect it (`> FILE`, `| ...`) or give --out FILE")]
    StdoutTerminal,
    /// The emission folder has no seal: only a sealed emission is packed.
    #[error(
        "{} is not sealed (no {}): only a sealed emission is packed. Make its last blocks, or run `emission-factory seal {}` once every block is made",
        shown_path(.folder),
        crate::emission::seal::SEAL_FILE,
        crate::fs::files::shell_quoted(.folder)
    )]
    NotSealed {
        /// The emission folder.
        folder: PathBuf,
    },
    /// The emission folder does not verify as a sealed emission.
    #[error(
        "{} does not verify as a sealed emission, so it is not packed (run `emission-factory verify {}`):\n  - {problems}",
        shown_path(.folder),
        crate::fs::files::shell_quoted(.folder)
    )]
    DoesNotVerify {
        /// The emission folder.
        folder: PathBuf,
        /// The problems found, one a line.
        problems: String,
    },
    /// The seal's signature is not the emission key's over the seal's bytes.
    #[error("{path}: {error}")]
    SealSignature {
        /// The seal, as shown.
        path: String,
        /// Why (shown in the sentence).
        error: SignatureError,
    },
    /// The seal is not valid JSON of a seal.
    #[error("{path}: not a valid seal: {error}")]
    InvalidSeal {
        /// The seal, as shown.
        path: String,
        /// Why (shown in the sentence).
        error: StrictJsonError,
    },
    /// A block present in the folder lacks one of its files.
    #[error("{folder}: block {block} has no {file}: the folder is not a whole emission")]
    BlockIncomplete {
        /// The emission folder, as shown.
        folder: String,
        /// The block.
        block: u32,
        /// The missing file's name.
        file: String,
    },
    /// The blocks in the folder are not those the seal lists.
    #[error(
        "{}: the blocks present are not the blocks sealed (run `emission-factory verify {}`)",
        shown_path(.folder),
        crate::fs::files::shell_quoted(.folder)
    )]
    BlocksNotSealed {
        /// The emission folder.
        folder: PathBuf,
    },
    /// The pack's bytes could not be written.
    #[error("cannot write the pack")]
    WritePack {
        /// The error.
        #[source]
        source: io::Error,
    },
    /// age refused the recipients given.
    #[error("cannot encrypt to the recipients given: {error}")]
    Encrypt {
        /// age's error (shown in the sentence).
        error: age::EncryptError,
    },
    /// The zstd compression could not be started (`threads`: its worker threads).
    #[error("cannot start the compression{}", if *.threads { " threads" } else { "" })]
    Compression {
        /// Whether it is the worker threads that could not be started.
        threads: bool,
        /// zstd's error.
        #[source]
        source: io::Error,
    },
    /// A block's CSV came before its manifest (a bug: the pack order puts manifests first).
    #[error("block {block}: no manifest read before its CSV")]
    NoManifestBefore {
        /// The block.
        block: u32,
    },
    /// A block's CSV has another size than its manifest says.
    #[error("{path}: {size} bytes, its manifest says {bytes}: the block was changed; not packed")]
    CsvSize {
        /// The CSV, as shown.
        path: String,
        /// Its size.
        size: u64,
        /// The size its manifest says.
        bytes: u64,
    },
    /// A block's CSV is too small for the tickets its manifest counts.
    #[error("{path}: {size} bytes cannot hold the {tickets} tickets its manifest counts: the block was changed; not packed")]
    CsvCannotHold {
        /// The CSV, as shown.
        path: String,
        /// Its size.
        size: u64,
        /// The tickets its manifest counts.
        tickets: u64,
    },
    /// A line of a block's CSV does not map to its lines form (its hash field is wrong...).
    #[error("{path}: {error}: the block was changed (run `emission-factory verify`); not packed")]
    CsvLines {
        /// The CSV, as shown.
        path: String,
        /// Which line, and why.
        error: LinesError,
    },
    /// A member could not be written into the pack.
    #[error("cannot write {member} into {target}")]
    WriteInto {
        /// The member (or `the end of the tar`...).
        member: String,
        /// The pack, as shown, or `standard output`.
        target: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The pack's last buffered bytes could not be written.
    #[error("cannot write {member} into {target}: {error}")]
    WriteIntoEnd {
        /// What was written (`the pack`).
        member: String,
        /// The pack, as shown, or `standard output`.
        target: String,
        /// The error (shown in the sentence).
        error: io::Error,
    },
    /// A block's CSV is not the one its signed manifest names.
    #[error("{path}: its bytes are not those its signed manifest names (SHA-256 {sha256}, {bytes} bytes): the block was changed; not packed")]
    CsvNotSigned {
        /// The CSV, as shown.
        path: String,
        /// Its SHA-256.
        sha256: String,
        /// Its bytes.
        bytes: u64,
    },
    /// A file is not the one the seal names: the folder changed since it was sealed.
    #[error("{path}: SHA-256 {sha256}, the seal names {what} {wanted}: the folder changed since it was sealed; not packed")]
    NotSealedBytes {
        /// The file, as shown.
        path: String,
        /// Its SHA-256.
        sha256: String,
        /// What it is (`the record`...).
        what: &'static str,
        /// The SHA-256 the seal names, as shown.
        wanted: String,
    },
    /// The seal or its signature changed while the pack was written.
    #[error("{path}: changed while being packed")]
    ChangedWhilePacked {
        /// The file, as shown.
        path: String,
    },
    /// A block's manifest is not valid.
    #[error("{path}: not a valid manifest: {error}")]
    InvalidManifest {
        /// The manifest, as shown.
        path: String,
        /// Why (shown in the sentence).
        error: ManifestError,
    },
    /// The emission folder could not be listed.
    #[error("cannot read folder {path}")]
    ReadFolder {
        /// The folder, as shown.
        path: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A file of the folder has a name that is not UTF-8.
    #[error("{path}: a file whose name is not UTF-8 is not part of an emission; move it out of the folder")]
    NameNotUtf8 {
        /// The file, as shown.
        path: String,
    },
    /// A file of the folder is not one an emission holds.
    #[error("{path}: not a file of an emission (record, seal, log, definition, key, custody files, blocks): move it out of the folder before packing")]
    NotEmissionFile {
        /// The file, as shown.
        path: String,
    },
    /// A file of the folder is not a regular file.
    #[error(
        "{path} is {kind}: a pack carries regular files only; replace it with the file itself"
    )]
    NotRegularFile {
        /// The file, as shown.
        path: String,
        /// What it is (`a folder`...).
        kind: &'static str,
    },
    /// The folder lacks a file every sealed emission holds.
    #[error("{folder}: no {file}: a sealed emission holds it")]
    MissingFile {
        /// The folder, as shown.
        folder: String,
        /// The file's name.
        file: String,
    },
    /// The folder holds more custody files than a pack may.
    #[error("{folder}: {count} custody files, more than the {limit} a pack holds")]
    TooManyReshares {
        /// The folder, as shown.
        folder: String,
        /// Custody files found.
        count: usize,
        /// The most a pack holds.
        limit: usize,
    },
    /// The folder is not in its emission's folders, which the pack names its members by.
    #[error("{folder} is not in the folder of its emission {emission} (<game>/<stake>/e<emission>, as emit makes it): move it there, then pack")]
    WrongFolder {
        /// The folder, as shown.
        folder: String,
        /// The emission, `<game>/<stake>/e<NNNN>`.
        emission: String,
    },
    /// A file of the emission could not be read.
    #[error("cannot read {path}: {error}")]
    ReadFile {
        /// The file, as shown.
        path: String,
        /// Why (shown in the sentence).
        error: ReadError,
    },
}

/// Why a member of a pack is refused, said after the member's place.
#[derive(Debug, thiserror::Error)]
pub enum MemberProblem {
    /// A link, a device, a folder...: a pack holds regular files only.
    #[error(
        "a {kind} entry; a pack holds regular files only (no links, devices or folders): refused"
    )]
    NotRegular {
        /// The tar entry's type.
        kind: String,
    },
    /// The name is not UTF-8.
    #[error("a name that is not UTF-8")]
    NameNotUtf8,
    /// The name is not `<game>/<stake>/e<emission>/<file>`.
    #[error("not named <game>/<stake>/e<emission>/<file> (an absolute name, a folder too many or too few): refused")]
    NotNamed,
    /// The name's folders are not an emission's.
    #[error("its folders are not those of an emission (<game>/<stake>/e<NNNN>: a game id, a canonical price, e and four digits; no `..`, no leading `.`): refused")]
    NotEmissionFolders,
    /// The member is of another emission than the first.
    #[error("of another emission than the pack's first member ({first}): refused")]
    OtherEmission {
        /// The emission of the pack's first member.
        first: EmissionId,
    },
    /// The file is not one an emission folder holds.
    #[error("not a file of an emission folder: refused")]
    NotEmissionFile,
    /// The member comes after one it should precede, or twice.
    #[error("after {after}: out of the pack's order, or twice (docs/FORMAT.md, \"Emission pack\"): refused")]
    OutOfOrder {
        /// The member before it.
        after: String,
    },
    /// More custody files than a pack holds.
    #[error("more than {limit} custody files: refused")]
    TooManyReshares {
        /// The most a pack holds.
        limit: usize,
    },
    /// Larger than such a file may be.
    #[error("{size} bytes, more than the {limit} such a file may hold: refused unread")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The most such a file holds.
        limit: u64,
    },
    /// The blocks are in both forms.
    #[error("the pack's blocks are not all in one form (block-NNNNN.csv or block-NNNNN.lines.csv): refused")]
    MixedForms,
    /// A block's CSV twice.
    #[error("block {block}'s CSV twice: refused")]
    CsvTwice {
        /// The block.
        block: u32,
    },
    /// A block's CSV before its manifest.
    #[error("block {block}'s CSV without its manifest before it: refused")]
    CsvWithoutManifest {
        /// The block.
        block: u32,
    },
    /// The manifest's CSV size cannot hold its tickets.
    #[error("its manifest's CSV of {bytes} bytes cannot hold {tickets} tickets: refused")]
    CannotHold {
        /// The manifest's CSV bytes.
        bytes: u64,
        /// The manifest's tickets.
        tickets: u64,
    },
    /// The CSV member's size is not what its manifest makes.
    #[error("{size} bytes, its manifest's CSV makes {wanted}: refused unread")]
    WrongSize {
        /// Its size.
        size: u64,
        /// The size its manifest makes.
        wanted: u64,
    },
    /// The member does not read: damaged or changed.
    #[error("cannot read it (damaged or changed): {error}")]
    Unreadable {
        /// The error (shown in the sentence).
        error: io::Error,
    },
    /// Fewer bytes than its header says.
    #[error("cut short")]
    Cut,
    /// A manifest member that is not a valid manifest.
    #[error("not a valid manifest: {error}")]
    InvalidManifest {
        /// Why (shown in the sentence).
        error: ManifestError,
    },
    /// A manifest signature before its manifest.
    #[error("a signature without its manifest: refused")]
    SignatureWithoutManifest,
}

impl PackError {
    /// The [`PackError::Io`] of an operating system's error while doing `action` to `path`
    /// (shown), for `map_err`.
    pub(crate) fn io<'a>(
        action: &'static str,
        path: &'a std::path::Path,
    ) -> impl FnOnce(io::Error) -> PackError + 'a {
        move |source| PackError::Io {
            action,
            path: shown_path(path),
            source,
        }
    }

    /// The [`PackError::Write`] of an error writing `path` (shown), for `map_err`.
    pub(crate) fn write(path: &std::path::Path) -> impl FnOnce(io::Error) -> PackError + '_ {
        move |source| PackError::Write {
            path: shown_path(path),
            source,
        }
    }
}
