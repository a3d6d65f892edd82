//! What can go wrong in seed custody. Every message names the file or the option and says what
//! to do; none holds a secret (a seed, a share, an identity, a line of an identity file).

use std::path::PathBuf;

/// An error of seed custody: splitting, writing, reading or rebuilding.
#[derive(Debug, thiserror::Error)]
pub enum CustodyError {
    /// k and n out of range.
    #[error(
        "a seed is split into n shares of which k rebuild it, with 2 <= k <= n <= 255; got k = {k}, n = {n} (give --shares-needed between 2 and the number of recipients)"
    )]
    Threshold {
        /// Shares needed.
        k: u8,
        /// Shares made.
        n: u8,
    },
    /// More than 255 recipients.
    #[error(
        "{0} recipients: a seed is split into at most 255 shares (one per non-zero byte value of GF(256))"
    )]
    TooManyRecipients(usize),
    /// The same recipient twice.
    #[error(
        "recipient {0} is given twice: each share goes to a different custodian (one custodian holding two shares would need fewer others to rebuild the seed)"
    )]
    DuplicateRecipient(String),
    /// A recipient that is not an age X25519 public key.
    #[error(
        "{what}: '{text}' is not an age X25519 public key ({reason}); a custodian's public key is the age1... line that `age-keygen` prints (or `age-keygen -y IDENTITY_FILE`)"
    )]
    Recipient {
        /// Where it came from: the option, or the file and line.
        what: String,
        /// The text given (public, and cut to 80 characters).
        text: String,
        /// What the age crate said.
        reason: &'static str,
    },
    /// A secret key given where a public key belongs (never echoed).
    #[error(
        "{what}: this is an age secret key (AGE-SECRET-KEY-1...), not a public key; it is not shown here. Give the custodian's public key (`age-keygen -y IDENTITY_FILE` prints it); a secret key should never be typed on a command line or sent to the operator, so treat this one as exposed"
    )]
    SecretAsRecipient {
        /// Where it came from.
        what: String,
    },
    /// A recipients file that cannot be read.
    #[error("cannot read recipients file {path}: {error}")]
    ReadRecipients {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// An identity file that cannot be read.
    #[error("cannot read identity file {path}: {error}")]
    ReadIdentity {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A line of an identity file that is not an X25519 identity (never echoed).
    #[error(
        "identity file {path}, line {line}: not an age X25519 identity (AGE-SECRET-KEY-1...); give the file `age-keygen -o FILE` wrote (plugin and passphrase identities are not supported)"
    )]
    IdentityLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// An identity file without identities.
    #[error(
        "identity file {0} holds no identity (no AGE-SECRET-KEY-1... line); give the file `age-keygen -o FILE` wrote"
    )]
    NoIdentity(PathBuf),
    /// No --identity.
    #[error(
        "no identity given: each share file opens only with its custodian's age identity (--identity FILE, one per custodian present)"
    )]
    NoIdentities,
    /// No --share.
    #[error("no share file given (--share FILE, one per custodian present)")]
    NoShares,
    /// The folder the shares go to is not fit for them ([`crate::fs::files::private_dir`],
    /// the one private-folder policy: a link, writable by group or others, or another user's).
    /// The text is the [`crate::fs::FsError`] and its causes ([`crate::problem::chained`]).
    #[error("{0}")]
    Folder(String),
    /// A share file that cannot be read.
    #[error("cannot read share file {path}: {error}")]
    ReadShare {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A file far larger than a share file.
    #[error("{path} is {bytes} bytes: not a share file (those are under 2 KiB)")]
    ShareTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// No identity given opens the share.
    #[error(
        "none of the identities given opens share file {0}: it is encrypted to a custodian whose identity file was not given (add that custodian's --identity), or its header was damaged (ask the custodian for an intact copy)"
    )]
    NoMatchingIdentity(PathBuf),
    /// The file is not an intact age file.
    #[error(
        "share file {path} is damaged, truncated or not an age file ({reason}); ask its custodian for an intact copy"
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What age said.
        reason: String,
    },
    /// It decrypts, but not to a share of our format.
    #[error(
        "share file {path} decrypts, but not to a seed share of format 1 ({reason}); was it made by `emission-factory seed`?"
    )]
    Payload {
        /// The file.
        path: PathBuf,
        /// What is wrong (no content).
        reason: String,
    },
    /// A share of another emission.
    #[error(
        "share file {path} is a share of emission {found}, not of {expected}: give the shares of {expected}"
    )]
    WrongEmission {
        /// The file.
        path: PathBuf,
        /// The emission it names.
        found: String,
        /// The emission asked for.
        expected: String,
    },
    /// The payload names another recipient than the identity that opened it.
    #[error(
        "share file {path} says it was made for {claimed}, but it opened with the identity of {opened_by}: it was not made by `emission-factory seed` for this custodian; do not use it"
    )]
    WrongRecipient {
        /// The file.
        path: PathBuf,
        /// Recipient written inside.
        claimed: String,
        /// Public key of the identity that opened it.
        opened_by: String,
    },
    /// Shares of two different splits.
    #[error(
        "share file {path} belongs to another share set than {first} (different {what}): shares of different splits (another seed, or before and after a reshare) never combine; give shares of one set only"
    )]
    MixedSets {
        /// The odd file.
        path: PathBuf,
        /// The first file, which sets the reference.
        first: PathBuf,
        /// Which field differs.
        what: &'static str,
    },
    /// Two files with the same index and different bytes.
    #[error(
        "share files {first} and {path} both claim share {index} of the set but differ: one of them is not genuine; keep the one its custodian vouches for"
    )]
    ConflictingShares {
        /// The later file.
        path: PathBuf,
        /// The earlier file.
        first: PathBuf,
        /// The index both claim.
        index: u8,
    },
    /// Fewer distinct shares than the threshold.
    #[error(
        "{have} distinct share(s) of emission {emission} given, {need} needed (any {need} of the {n} custodians): add --share and --identity of {missing} more custodian(s)"
    )]
    TooFewShares {
        /// The emission.
        emission: String,
        /// Distinct shares given.
        have: usize,
        /// The threshold k.
        need: u8,
        /// The number of shares n.
        n: u8,
        /// need - have.
        missing: usize,
    },
    /// The rebuilt seed does not match the commitment the shares carry.
    #[error(
        "the shares {files} do not rebuild the seed whose SHA-256 they carry: at least one of them is forged (anyone holding a custodian's public key can encrypt a file to it); rebuild with other custodians' shares"
    )]
    Commitment {
        /// The files used, comma-separated.
        files: String,
    },
    /// Shares with repeated or zero indexes given to `shamir::combine`.
    #[error("shares to combine must have distinct, non-zero indexes")]
    ShareIndexes,
    /// A share file already exists.
    #[error(
        "{0} already exists: share files are never overwritten; write the new set to another --out folder"
    )]
    Exists(PathBuf),
    /// Writing a share file failed.
    #[error("cannot write share file {path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Encrypting failed.
    #[error("cannot encrypt share {index} to {recipient}: {reason}")]
    Encrypt {
        /// Share index.
        index: u8,
        /// Public key.
        recipient: String,
        /// What age said.
        reason: super::SealError,
    },
    /// The shares just made did not give the seed back (a bug: nothing was written).
    #[error(
        "internal check failed: the shares just made do not rebuild the seed; nothing was written (please report this bug)"
    )]
    SelfCheck,
    /// The OS CSPRNG failed.
    #[error("the system's random generator failed: {0}")]
    Random(String),
}
