//! Trusted timestamps (RFC 3161): a time-stamping authority's signed token saying that a file
//! of the emission (its record `emission.json`, its seal `emission.seal.json`) existed, with
//! exactly its bytes, by the token's time. The token is kept beside the file
//! (`emission.json.tsr`, `emission.seal.json.tsr`: the TSA's whole reply, as `openssl ts`
//! reads it) and checked offline, against the TSA certificate the verifier trusts.
//!
//! [`stamp`] gets a token (over HTTP, or in two steps through a request file for an
//! air-gapped machine) and keeps it only once it is checked; [`check_document`] is what
//! `verify` runs on each token. The record and the seal name the TSA certificate they asked
//! (`timestamp_authority_sha256`), so a deleted token fails, never skips the check.
//!
//! An emission pack gets a token of its own, over the pack file's bytes (`PACK.tsr`):
//! [`stamp_file`] gets it (the caller hashes the pack as it writes or reads it: a pack is too
//! large to read whole), [`check_token_file`] checks it against the SHA-256 `verify` computed
//! as the pack streamed.

pub mod http;
pub mod token;

pub use token::{Request, Stamp, TokenError, TsaCert};

use crate::emission::lock::LockGuard;
use crate::fs::files::{self, Access};
use crate::fs::open::ReadError;
use crate::fs::FsError;
use crate::problem::chained;
use crate::untrusted::{shown, shown_path};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What is added to a file's name for its token.
pub const TOKEN_SUFFIX: &str = ".tsr";
/// What is added to a file's name for the request kept while the file mode waits for the
/// reply.
pub const REQUEST_SUFFIX: &str = ".tsq";
/// Largest token (or reply) read.
pub const MAX_TOKEN_BYTES: u64 = 1 << 20;
/// Largest certificate read.
const MAX_CERT_BYTES: u64 = 1 << 20;
/// Largest file stamped (a seal of 99 999 blocks).
const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// The token of `doc`: `doc` with `.tsr` added.
pub fn token_path(doc: &Path) -> PathBuf {
    with_suffix(doc, TOKEN_SUFFIX)
}

/// The request kept for `doc` in file mode: `doc` with `.tsq` added.
pub fn request_path(doc: &Path) -> PathBuf {
    with_suffix(doc, REQUEST_SUFFIX)
}

fn with_suffix(doc: &Path, suffix: &str) -> PathBuf {
    let mut name = doc.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Reads a TSA certificate (PEM or DER) given with `option`, and checks it is a TSA's.
pub fn read_cert(path: &Path, option: &str) -> Result<TsaCert, TimestampError> {
    let bytes =
        crate::fs::open::read_at_most(path, MAX_CERT_BYTES, "a certificate").map_err(|error| {
            TimestampError::ReadCert {
                option: option.to_string(),
                path: path.to_path_buf(),
                error,
            }
        })?;
    TsaCert::parse(&bytes).map_err(|error| TimestampError::NotTsaCert {
        option: option.to_string(),
        path: path.to_path_buf(),
        error: Box::new(error),
    })
}

/// Where a token comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Asked now, over HTTP.
    Url(http::Url),
    /// File mode, first step: write the request to this file (to carry to the TSA), keep a
    /// copy beside the document, and stop.
    RequestOut(PathBuf),
    /// File mode, second step: the TSA's reply to the request kept beside the document.
    Reply(PathBuf),
}

/// What [`stamp`] did.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The token was checked and kept at `token`.
    Stamped {
        /// The token file.
        token: PathBuf,
        /// What it says.
        stamp: Stamp,
    },
    /// The request was written to `request` (and kept at `kept`), for the reply to come.
    Requested {
        /// The request to carry to the TSA.
        request: PathBuf,
        /// The copy kept beside the document, against which the reply is checked.
        kept: PathBuf,
    },
}

/// Gets the token of `doc`, a file of an emission folder whose bytes are final, from `source`
/// and signed by `cert` (which must be the certificate `pinned` names, when the document names
/// one), and keeps it beside `doc` (staged and renamed: never half-written). A token is kept
/// only once it is checked: status granted, over `doc`'s SHA-256, the nonce of the request
/// echoed, signed by `cert` ([`token::check_reply`]). An existing token is never replaced.
/// The caller holds the emission lock (`_held`).
pub fn stamp(
    _held: &LockGuard,
    doc: &Path,
    pinned: Option<&str>,
    cert: &TsaCert,
    source: &Source,
) -> Result<Outcome, TimestampError> {
    let token = token_path(doc);
    if files::entry_exists(&token)? {
        return Err(TimestampError::TokenExists { token });
    }
    if let Some(pin) = pinned {
        if !pin.eq_ignore_ascii_case(&cert.sha256_hex()) {
            return Err(TimestampError::OtherCertGiven {
                doc: doc.to_path_buf(),
                pinned: pin.to_string(),
                subject: cert.subject.clone(),
                sha256: cert.sha256_hex(),
            });
        }
    }
    let bytes =
        crate::emission::read_bounded(doc, MAX_DOCUMENT_BYTES).map_err(TimestampError::file)?;
    let hash: [u8; 32] = Sha256::digest(&bytes).into();
    let access = Access::of_folder(files::parent(doc))?;
    let kept = request_path(doc);
    match source {
        Source::Url(url) => {
            let request = token::request(hash).map_err(TimestampError::Request)?;
            let reply = http::post(url, &request.der).map_err(|error| TimestampError::NoToken {
                doc: doc.to_path_buf(),
                error,
            })?;
            let stamp =
                checked_reply(&reply, &request, cert).map_err(|m| TimestampError::BadReply {
                    url: url_text(url),
                    doc: doc.to_path_buf(),
                    error: Box::new(m),
                })?;
            let _publishing = crate::interrupt::critical();
            files::write_atomic(&token, &reply, access)?;
            Ok(Outcome::Stamped { token, stamp })
        }
        Source::RequestOut(out) => {
            if out == Path::new("-") {
                return Err(TimestampError::RequestToStdout);
            }
            if files::entry_exists(out)? {
                return Err(TimestampError::RequestOutExists { out: out.clone() });
            }
            let request = token::request(hash).map_err(TimestampError::Request)?;
            let _publishing = crate::interrupt::critical();
            files::write_atomic(&kept, &request.der, access)?;
            files::write_atomic(out, &request.der, Access::PRIVATE)?;
            Ok(Outcome::Requested {
                request: out.clone(),
                kept,
            })
        }
        Source::Reply(path) => {
            let (request, reply) = waiting_request(doc, &kept, hash, path, |kept| {
                crate::emission::read_bounded(kept, MAX_TOKEN_BYTES).map_err(TimestampError::file)
            })?;
            let stamp =
                checked_reply(&reply, &request, cert).map_err(|m| TimestampError::ReplyFile {
                    path: path.clone(),
                    error: Box::new(m),
                })?;
            let _publishing = crate::interrupt::critical();
            files::write_atomic(&token, &reply, access)?;
            files::remove(&kept)?;
            Ok(Outcome::Stamped { token, stamp })
        }
    }
}

/// What [`stamp_file`] did.
#[derive(Debug, Clone)]
pub enum FileOutcome {
    /// The token was checked and kept.
    Stamped(Checked),
    /// The request was written to `request` (and kept at `kept`), for the reply to come.
    Requested {
        /// The request to carry to the TSA.
        request: PathBuf,
        /// The copy kept beside the file, against which the reply is checked.
        kept: PathBuf,
    },
}

/// Gets the token of `file` (an emission pack, published and final), whose bytes' SHA-256 is
/// `hash` (hashed by the caller as it wrote or read them), from `source`, signed by one of
/// `certs`, and keeps it beside `file` as `file.tsr`: a new file (mode 0600, staged under a
/// temporary name created `O_EXCL`, published with `renameat2(RENAME_NOREPLACE)`), never
/// replacing anything there, a link included. As for [`stamp`], a token is kept only once it
/// is checked (status granted, over `hash`, the request's nonce echoed, signed by one of
/// `certs`); in file mode the request kept beside `file` (`file.tsq`) is a new file too, and
/// a reply is taken only for it, and only while `file` still has the SHA-256 it was made
/// over. Each error names the file and says how to get the token later (`emission-factory
/// timestamp --pack FILE`).
pub fn stamp_file(
    file: &Path,
    hash: [u8; 32],
    certs: &[TsaCert],
    source: &Source,
) -> Result<FileOutcome, TimestampError> {
    if certs.is_empty() {
        return Err(PackStampError::NoCertificate {
            file: file.to_path_buf(),
        }
        .into());
    }
    let token = token_path(file);
    let kept = request_path(file);
    if files::entry_exists(&token)? {
        return Err(PackStampError::TokenExists {
            file: file.to_path_buf(),
            token,
        }
        .into());
    }
    match source {
        Source::Url(url) => {
            let request = token::request(hash).map_err(TimestampError::Request)?;
            let reply = http::post(url, &request.der).map_err(|error| PackStampError::NoToken {
                file: file.to_path_buf(),
                error,
            })?;
            let checked =
                checked_reply_any(&reply, &request, certs, &token).map_err(|refusals| {
                    PackStampError::BadReply {
                        url: url_text(url),
                        file: file.to_path_buf(),
                        refusals,
                    }
                })?;
            let _publishing = crate::interrupt::critical();
            files::write_new(&token, &reply, 0o600).map_err(|error| PackStampError::NotKept {
                file: file.to_path_buf(),
                error,
            })?;
            Ok(FileOutcome::Stamped(checked))
        }
        Source::RequestOut(out) => {
            if out == Path::new("-") {
                return Err(TimestampError::RequestToStdout);
            }
            for (path, what) in [(out, "--tsa-request-out"), (&kept, "the request kept")] {
                if files::entry_exists(path)? {
                    return Err(PackStampError::RequestExists {
                        what,
                        path: path.clone(),
                        waiting: path == &kept,
                    }
                    .into());
                }
            }
            let request = token::request(hash).map_err(TimestampError::Request)?;
            let _publishing = crate::interrupt::critical();
            files::write_new(&kept, &request.der, 0o600)?;
            files::write_new(out, &request.der, 0o600)?;
            Ok(FileOutcome::Requested {
                request: out.clone(),
                kept,
            })
        }
        Source::Reply(path) => {
            let (request, reply) = waiting_request(file, &kept, hash, path, |kept| {
                crate::fs::open::read_at_most(kept, MAX_TOKEN_BYTES, "a request").map_err(|error| {
                    PackStampError::ReadKept {
                        kept: kept.to_path_buf(),
                        error,
                    }
                    .into()
                })
            })?;
            let checked =
                checked_reply_any(&reply, &request, certs, &token).map_err(|refusals| {
                    PackStampError::ReplyRefused {
                        path: path.clone(),
                        refusals,
                    }
                })?;
            let _publishing = crate::interrupt::critical();
            files::write_new(&token, &reply, 0o600)?;
            files::remove(&kept)?;
            Ok(FileOutcome::Stamped(checked))
        }
    }
}

/// The reply mode's first half, for [`stamp`] and [`stamp_file`]: the request kept beside
/// `doc` (`kept`) must be there, read by `read_kept` (each caller reads it as it reads its
/// other files), and over the document as it is now (`hash`); then the reply file `reply` is
/// read. Returns the request and the reply's bytes.
fn waiting_request(
    doc: &Path,
    kept: &Path,
    hash: [u8; 32],
    reply: &Path,
    read_kept: impl FnOnce(&Path) -> Result<Vec<u8>, TimestampError>,
) -> Result<(token::Request, Vec<u8>), TimestampError> {
    if !files::entry_exists(kept)? {
        return Err(TimestampError::NoRequestWaiting {
            doc: doc.to_path_buf(),
            kept: kept.to_path_buf(),
        });
    }
    let request_bytes = read_kept(kept)?;
    let request =
        token::parse_request(&request_bytes).map_err(|error| TimestampError::KeptRequest {
            kept: kept.to_path_buf(),
            error: Box::new(error),
        })?;
    if request.imprint != hash {
        return Err(TimestampError::DocumentChanged {
            kept: kept.to_path_buf(),
            imprint: request.imprint,
            doc: doc.to_path_buf(),
            hash,
        });
    }
    let reply =
        crate::fs::open::read_at_most(reply, MAX_TOKEN_BYTES, "a TSA reply").map_err(|error| {
            TimestampError::ReadReply {
                path: reply.to_path_buf(),
                error,
            }
        })?;
    Ok((request, reply))
}

/// Why a pack's own token ([`stamp_file`], `pack --tsa-url`, `timestamp --pack`) was not got
/// or kept. Each message names the pack and says how to get its token later.
#[derive(Debug, thiserror::Error)]
pub enum PackStampError {
    /// No TSA certificate was given: a token is kept only once it verifies with one.
    #[error("no --tsa-cert: the token of {} is kept only once it verifies with the TSA's certificate: give --tsa-cert PEM", shown_path(.file))]
    NoCertificate {
        /// The pack.
        file: PathBuf,
    },
    /// The pack already has a token: it is never replaced.
    #[error(
        "{} exists: a token is never replaced (it proves an earlier time than a new one would); verify checks it (`emission-factory verify --identity KEY --tsa-cert PEM {}`)",
        shown_path(.token),
        files::shell_quoted(.file)
    )]
    TokenExists {
        /// The pack.
        file: PathBuf,
        /// Its token.
        token: PathBuf,
    },
    /// The TSA could not be asked, or gave no reply.
    #[error(
        "no token for {}: {error}. The TSA may be down: {}",
        shown_path(.file),
        later(.file, "--tsa-url URL")
    )]
    NoToken {
        /// The pack.
        file: PathBuf,
        /// What the HTTP exchange said.
        error: http::HttpError,
    },
    /// The TSA's reply did not verify with any certificate given.
    #[error(
        "the reply of {} for {}: {refusals}; nothing was kept: {} (or check --tsa-cert: the TSA's own certificate)",
        shown(.url),
        shown_path(.file),
        later(.file, "--tsa-url URL")
    )]
    BadReply {
        /// The TSA's address.
        url: String,
        /// The pack.
        file: PathBuf,
        /// Each certificate's refusal.
        refusals: Refusals,
    },
    /// The checked token could not be written beside the pack.
    #[error("{}; the token was not kept: {}", crate::problem::chained(.error), later(.file, "--tsa-url URL"))]
    NotKept {
        /// The pack.
        file: PathBuf,
        /// Why the file was not written.
        error: FsError,
    },
    /// The request file to write (or the copy kept beside the pack) exists.
    #[error(
        "{what} {}: the file exists, and is never replaced: give a new file name{}",
        shown_path(.path),
        if *.waiting { " (a request already waits for its reply: take it with `emission-factory timestamp --pack FILE --tsa-cert PEM --tsa-reply REPLY`, or remove it to make a new one)" } else { "" }
    )]
    RequestExists {
        /// `--tsa-request-out` or "the request kept".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// It is the request kept beside the pack, which waits for its reply.
        waiting: bool,
    },
    /// The request kept beside the pack could not be read.
    #[error("{}: cannot read: {error}", shown_path(.kept))]
    ReadKept {
        /// The request kept.
        kept: PathBuf,
        /// Why (shown in the sentence).
        error: crate::fs::open::ReadError,
    },
    /// The reply given did not verify with any certificate given.
    #[error("--tsa-reply {}: {refusals}", shown_path(.path))]
    ReplyRefused {
        /// The reply file.
        path: PathBuf,
        /// Each certificate's refusal.
        refusals: Refusals,
    },
    /// The pack could not be read to hash it.
    #[error("cannot read {}: {error}", shown_path(.file))]
    Hash {
        /// The pack.
        file: PathBuf,
        /// Why (shown in the sentence).
        error: String,
    },
}

/// How to get a pack's token later, for [`PackStampError`]'s messages.
fn later(file: &Path, how: &str) -> String {
    format!(
        "get the token later with `emission-factory timestamp --pack {} --tsa-cert PEM {how}`",
        files::shell_quoted(file)
    )
}

/// [`checked_reply`] with the first of `certs` the reply verifies with: the token (to be kept
/// at `token`) checked, or every certificate's refusal.
fn checked_reply_any(
    reply: &[u8],
    request: &Request,
    certs: &[TsaCert],
    token: &Path,
) -> Result<Checked, Refusals> {
    let mut refusals = Vec::new();
    for cert in certs {
        match checked_reply(reply, request, cert) {
            Ok(stamp) => {
                return Ok(Checked {
                    token: token.to_path_buf(),
                    stamp,
                    tsa: cert.subject.clone(),
                })
            }
            Err(e) => refusals.push((cert.subject.clone(), e)),
        }
    }
    Err(Refusals(refusals))
}

/// Why a reply verified with none of the certificates given: each certificate's subject and
/// its refusal, said `with SUBJECT: why`, `; `-separated.
#[derive(Debug)]
pub struct Refusals(pub Vec<(String, TimestampError)>);

impl std::fmt::Display for Refusals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (subject, error)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "with {}: {error}", shown(subject))?;
        }
        Ok(())
    }
}

/// The SHA-256 of the file at `path` (a regular file), read as a stream: for a file too large
/// to read whole (an emission pack), whose token is asked later (`timestamp --pack`).
pub fn file_sha256(path: &Path) -> Result<[u8; 32], TimestampError> {
    let mut file = crate::fs::open::open_regular(path).map_err(|e| PackStampError::Hash {
        file: path.to_path_buf(),
        error: e.to_string(),
    })?;
    let mut sha = Sha256::new();
    std::io::copy(&mut file, &mut sha).map_err(|e| PackStampError::Hash {
        file: path.to_path_buf(),
        error: e.to_string(),
    })?;
    Ok(sha.finalize().into())
}

fn url_text(url: &http::Url) -> String {
    format!("http://{}:{}{}", url.host, url.port, url.path)
}

/// [`token::check_reply`], and the reply echoes `request`'s nonce: it answers this request,
/// not an older one replayed.
fn checked_reply(reply: &[u8], request: &Request, cert: &TsaCert) -> Result<Stamp, TimestampError> {
    let stamp = token::check_reply(reply, &request.imprint, cert)?;
    if stamp.nonce.as_deref() != Some(request.nonce.as_slice()) {
        return Err(TimestampError::NonceNotEchoed {
            nonce: request.nonce.clone(),
        });
    }
    Ok(stamp)
}

/// Why a TSA certificate was refused ([`read_cert`]), why no token was got or kept
/// ([`stamp`]), why a document's token is not good evidence ([`check_document`]), or why a
/// reply is not the answer to a request. Each names the files it is about.
#[derive(Debug, thiserror::Error)]
pub enum TimestampError {
    /// A file of the emission folder could not be looked at, read or written, or a request
    /// file or token could not be staged or removed: see [`FsError`].
    #[error(transparent)]
    Fs(#[from] FsError),
    /// A pack's own token was not got or kept.
    #[error(transparent)]
    Pack(#[from] PackStampError),
    /// A file stamped, or the request kept beside it, could not be read (missing, a link,
    /// larger than any such file...): see [`crate::emission::FileError`].
    #[error(transparent)]
    File(crate::emission::FileError),
    /// The TSA certificate given with `option` could not be read.
    #[error("{option} {}: cannot read: {error}", shown_path(.path))]
    ReadCert {
        /// The option that named it (`--tsa-cert`).
        option: String,
        /// The file.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ReadError,
    },
    /// The file given with `option` is not a TSA's certificate (not PEM or DER, not a
    /// certificate, not one for time stamping).
    #[error(
        "{option} {}: {error}. Give the TSA's own certificate (the one that signs its tokens), PEM or DER",
        shown_path(.path)
    )]
    NotTsaCert {
        /// The option that named it (`--tsa-cert`).
        option: String,
        /// The file.
        path: PathBuf,
        /// What is wrong with it (shown in the sentence).
        error: Box<TokenError>,
    },
    /// The document has a token already: it is never replaced (it proves an earlier time
    /// than a new one would).
    #[error(
        "{} exists: a token is never replaced (it proves an earlier time than a new one would)",
        shown_path(.token)
    )]
    TokenExists {
        /// The token.
        token: PathBuf,
    },
    /// The document names a TSA certificate, and `--tsa-cert` is another.
    #[error(
        "{} names the TSA certificate of SHA-256 {}, and --tsa-cert is {} (SHA-256 {sha256}): give the certificate it names",
        shown_path(.doc),
        shown(.pinned),
        shown(.subject)
    )]
    OtherCertGiven {
        /// The document.
        doc: PathBuf,
        /// The certificate it names.
        pinned: String,
        /// The subject of the certificate given.
        subject: String,
        /// Its SHA-256.
        sha256: String,
    },
    /// A request could not be made (the random generator for its nonce, its encoding).
    #[error("{0}")]
    Request(TokenError),
    /// The TSA could not be asked over HTTP, or did not answer with a reply: the record or
    /// seal stays without a token until `emission-factory timestamp` gets one.
    #[error(
        "no token for {}: {error}. The TSA may be down: get the token later with `emission-factory timestamp {} --tsa-cert PEM --tsa-url URL` (until then verify fails on the missing token)",
        shown_path(.doc),
        files::shell_quoted(files::parent(.doc))
    )]
    NoToken {
        /// The document.
        doc: PathBuf,
        /// What went wrong (shown in the sentence).
        error: http::HttpError,
    },
    /// The TSA's reply over HTTP is not a good token for the document.
    #[error("the reply of {} for {}: {error}", shown(.url), shown_path(.doc))]
    BadReply {
        /// The TSA's URL.
        url: String,
        /// The document.
        doc: PathBuf,
        /// What is wrong with the reply (shown in the sentence).
        error: Box<TimestampError>,
    },
    /// `--tsa-request-out -`: the request is binary, and standard output carries the report.
    #[error("--tsa-request-out -: the request is binary and standard output carries this command's report: give a file name (the file to carry to the TSA)")]
    RequestToStdout,
    /// The file `--tsa-request-out` names exists: it is not overwritten.
    #[error("--tsa-request-out {}: the file exists; give a new file name", shown_path(.out))]
    RequestOutExists {
        /// The file.
        out: PathBuf,
    },
    /// `--tsa-reply` was given, and no request of this program waits beside the document.
    #[error(
        "--tsa-reply: there is no request waiting for a reply beside {} ({} is missing): a reply is taken only for a request this program made (--tsa-request-out)",
        shown_path(.doc),
        shown_path(.kept)
    )]
    NoRequestWaiting {
        /// The document.
        doc: PathBuf,
        /// The request that would be kept beside it.
        kept: PathBuf,
    },
    /// The request kept beside the document is not a request.
    #[error("{}: {error}", shown_path(.kept))]
    KeptRequest {
        /// The request kept.
        kept: PathBuf,
        /// What is wrong with it (shown in the sentence).
        error: Box<TokenError>,
    },
    /// The document changed since its request was made: the reply would not be over it.
    #[error(
        "{}: the request kept is over the SHA-256 {}, and {} has SHA-256 {}: the file changed since the request was made",
        shown_path(.kept),
        hex::encode(.imprint),
        shown_path(.doc),
        hex::encode(.hash)
    )]
    DocumentChanged {
        /// The request kept.
        kept: PathBuf,
        /// The SHA-256 it is over.
        imprint: [u8; 32],
        /// The document.
        doc: PathBuf,
        /// The document's SHA-256.
        hash: [u8; 32],
    },
    /// The reply file (`--tsa-reply`) could not be read.
    #[error("--tsa-reply {}: cannot read: {error}", shown_path(.path))]
    ReadReply {
        /// The file.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ReadError,
    },
    /// The reply file (`--tsa-reply`) is not a good token for the document.
    #[error("--tsa-reply {}: {error}", shown_path(.path))]
    ReplyFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (shown in the sentence).
        error: Box<TimestampError>,
    },
    /// The reply or the token is wrong in itself.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// A token that does not echo the request's nonce.
    #[error(
        "the token does not echo the request's nonce ({}): it is not the answer to this request",
        hex::encode(.nonce)
    )]
    NonceNotEchoed {
        /// The request's nonce.
        nonce: Vec<u8>,
    },
    /// The token's entry cannot be looked at (the error and its causes, in the sentence).
    #[error("{}", chained(.0))]
    Lookup(FsError),
    /// A token asked but missing.
    #[error(
        "{} says a trusted timestamp was asked for it (TSA certificate SHA-256 {}), but {} is missing: it was deleted, or the TSA never answered (then get it with `emission-factory timestamp`)",
        shown_path(.doc),
        shown(.pinned),
        shown_path(.token)
    )]
    Missing {
        /// The document.
        doc: PathBuf,
        /// The certificate it names.
        pinned: String,
        /// Its token's path.
        token: PathBuf,
    },
    /// A token and no certificate to check it with.
    #[error(
        "{} is a trusted timestamp, and no --tsa-cert was given to check it: give --tsa-cert PEM, the certificate of the TSA that signed it{} (a token is evidence: it is checked, never skipped)",
        shown_path(.token),
        .pinned.as_deref().map_or_else(String::new, |p| format!(" (SHA-256 {})", shown(p)))
    )]
    NoCertificate {
        /// The token.
        token: PathBuf,
        /// The certificate the document names, if any.
        pinned: Option<String>,
    },
    /// None of the certificates given is the one the document names.
    #[error(
        "{} asked its token of the TSA certificate of SHA-256 {}, and no --tsa-cert given is that one ({}): give that TSA's certificate",
        shown_path(.doc),
        shown(.pinned),
        .given.join(", ")
    )]
    NotTheCertificate {
        /// The document.
        doc: PathBuf,
        /// The certificate it names.
        pinned: String,
        /// The certificates given: subject (escaped) and SHA-256.
        given: Vec<String>,
    },
    /// The token cannot be read.
    #[error("{}: cannot read: {error}", shown_path(.token))]
    Read {
        /// The token.
        token: PathBuf,
        /// Why.
        error: crate::fs::open::ReadError,
    },
    /// The token verifies with none of the certificates.
    #[error(
        "{}: the trusted timestamp of {} does not verify: {}",
        shown_path(.token),
        shown_path(.doc),
        .refusals.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    DoesNotVerify {
        /// The token.
        token: PathBuf,
        /// The document.
        doc: PathBuf,
        /// What each candidate certificate found.
        refusals: Vec<TokenError>,
    },
}

/// The token of one document, checked by [`check_document`].
#[derive(Debug, Clone)]
pub struct Checked {
    /// The token file.
    pub token: PathBuf,
    /// What it says.
    pub stamp: Stamp,
    /// The subject of the TSA certificate it verified with.
    pub tsa: String,
}

impl Checked {
    /// One line for the minutes: which file existed by when, by which TSA.
    pub fn line(&self, doc: &Path) -> String {
        format!(
            "{} existed by {} (RFC 3161 token {}, TSA {}, serial {}, policy {})",
            shown_path(doc),
            self.stamp.existed_by(),
            shown_path(&self.token),
            shown(&self.tsa),
            self.stamp.serial,
            self.stamp.policy
        )
    }
}

impl TimestampError {
    /// The [`TimestampError::File`] of an error of the emission folder's reading, for
    /// `map_err`.
    fn file(error: crate::emission::FileError) -> Self {
        TimestampError::File(error)
    }
}

/// Checks the token of `doc` (whose bytes are `bytes`) offline against the TSA certificates
/// the verifier trusts (`certs`; `pinned` is the certificate the document says it asked).
/// `Ok(None)`: no token, and none was asked. Every other case is a verdict: a token asked
/// but missing, a token present but no certificate to check it with, a certificate other than
/// the one asked, or a token that does not verify, are each an error that says why.
pub fn check_document(
    doc: &Path,
    bytes: &[u8],
    pinned: Option<&str>,
    certs: &[TsaCert],
) -> Result<Option<Checked>, TimestampError> {
    let token = token_path(doc);
    let present = files::entry_exists(&token).map_err(TimestampError::Lookup)?;
    if !present {
        return match pinned {
            None => Ok(None),
            Some(pin) => Err(TimestampError::Missing {
                doc: doc.to_path_buf(),
                pinned: pin.to_string(),
                token,
            }),
        };
    }
    if certs.is_empty() {
        return Err(TimestampError::NoCertificate {
            token,
            pinned: pinned.map(str::to_string),
        });
    }
    let candidates: Vec<&TsaCert> = match pinned {
        Some(pin) => {
            let named: Vec<&TsaCert> = certs
                .iter()
                .filter(|c| pin.eq_ignore_ascii_case(&c.sha256_hex()))
                .collect();
            if named.is_empty() {
                return Err(TimestampError::NotTheCertificate {
                    doc: doc.to_path_buf(),
                    pinned: pin.to_string(),
                    given: certs
                        .iter()
                        .map(|c| format!("{} {}", shown(&c.subject), c.sha256_hex()))
                        .collect(),
                });
            }
            named
        }
        None => certs.iter().collect(),
    };
    let hash: [u8; 32] = Sha256::digest(bytes).into();
    check_token_file(doc, &token, &hash, candidates).map(Some)
}

/// Checks the token file `token` of `doc`, whose bytes' SHA-256 is `hash`, offline against
/// each of `certs` (the first it verifies with wins): for a file too large to read whole, an
/// emission pack, hashed as `verify` streamed it. The token is read at most
/// [`MAX_TOKEN_BYTES`]; a token missing or unreadable is [`TimestampError::Read`], one that
/// verifies with none of `certs` (over other bytes, of another TSA, changed)
/// [`TimestampError::DoesNotVerify`], each naming the token.
pub fn check_token_file<'a>(
    doc: &Path,
    token: &Path,
    hash: &[u8; 32],
    certs: impl IntoIterator<Item = &'a TsaCert>,
) -> Result<Checked, TimestampError> {
    let reply =
        crate::fs::open::read_at_most(token, MAX_TOKEN_BYTES, "a token").map_err(|error| {
            TimestampError::Read {
                token: token.to_path_buf(),
                error,
            }
        })?;
    let mut refusals = Vec::new();
    for cert in certs {
        match token::check_reply(&reply, hash, cert) {
            Ok(stamp) => {
                return Ok(Checked {
                    token: token.to_path_buf(),
                    stamp,
                    tsa: cert.subject.clone(),
                })
            }
            Err(m) => refusals.push(m),
        }
    }
    Err(TimestampError::DoesNotVerify {
        token: token.to_path_buf(),
        doc: doc.to_path_buf(),
        refusals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_asked_but_missing_names_the_document_and_its_token() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("emission.json");
        let e = check_document(&doc, b"{}", Some("ab12"), &[]).unwrap_err();
        assert!(
            matches!(&e, TimestampError::Missing { doc: d, pinned, token }
                if *d == doc && pinned == "ab12" && *token == token_path(&doc)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "{} says a trusted timestamp was asked for it (TSA certificate SHA-256 'ab12'), but {} is missing: it was deleted, or the TSA never answered (then get it with `emission-factory timestamp`)",
                shown_path(&doc),
                shown_path(&token_path(&doc))
            )
        );
        assert!(check_document(&doc, b"{}", None, &[]).unwrap().is_none());
    }
}
