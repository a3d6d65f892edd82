//! Commit, then beacon: a production seed that nobody could have chosen.
//!
//! With k-of-n custody no single person knows an emission's seed, but the custodians together,
//! or an operator who runs the ceremony again and again, could still look at seeds and keep
//! one they like. So the ceremony (`seed --beacon-round R`) signs a record that holds the
//! commitment to the custodians' secret (its SHA-256, `seed_sha256`) and names a *future*
//! round R of a public randomness beacon, and the seed the blocks are made from is
//!
//! ```text
//! HKDF-SHA256(ikm = the custodians' secret, salt = round R's signature, info = SEED_INFO || emission id)
//! ```
//!
//! Once the record is signed the secret is fixed (its hash is in the record) and R's signature
//! is unknown to everyone; once R is published the seed is fixed and nobody chose it. The beacon
//! is public, so it is never the only input: alone it would tell the whole world the seed.
//!
//! The beacon is drand's quicknet, run by the League of Entropy: one BLS threshold signature
//! every 3 seconds (scheme `bls-unchained-g1-rfc9380`: signatures on G1, the group key on G2),
//! which anyone checks offline against the chain's public key, pinned below. `emit` and
//! `verify` take the round as the JSON file the drand HTTP API serves
//! (`GET /<chain hash>/public/<R>` on a drand relay: `{"round":…,"randomness":…,"signature":…}`),
//! so the air-gapped machine needs no network: [`read_round`] checks the signature with the
//! `drand-verify` crate, and that the randomness is SHA-256 of the signature.

use crate::emission::record::Record;
use crate::fs::open::ReadError;
use crate::plan::Seed;
use crate::untrusted::{shown, shown_path};
use drand_verify::{G2PubkeyRfc, Pubkey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// The beacon's name in records.
pub const CHAIN: &str = "drand quicknet";
/// quicknet's chain hash, which names it on every drand relay.
///
/// Source: the League of Entropy's chain information, `GET /v2/chains` and
/// `GET /52db9ba7…c84e971/info` on api.drand.sh (drand.love, "quicknet is live", 2023-10-16),
/// as pinned by drand's own tests (drand/drand `internal/interop/verify_test.go`,
/// `quicknetInfoJSON`) and by the `drand-verify` crate's (`src/verify.rs`, `PK_QUICKNET`):
/// `{"public_key":"83cf0f28…5ece45a","period":3,"genesis_time":1692803367,
/// "hash":"52db9ba7…c84e971","groupHash":"f477d5c8…331c5d3e","schemeID":"bls-unchained-g1-rfc9380",
/// "metadata":{"beaconID":"quicknet"}}`.
pub const QUICKNET_CHAIN_HASH: &str =
    "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
/// quicknet's group public key (compressed G2, 96 bytes), from the same chain information.
pub const QUICKNET_PUBLIC_KEY: &str = "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a";
/// quicknet's genesis: round 1 was published at this time (seconds since 1970, 2023-08-23T15:09:27Z).
pub const QUICKNET_GENESIS: u64 = 1_692_803_367;
/// Seconds between two rounds of quicknet.
pub const QUICKNET_PERIOD: u64 = 3;
/// The HKDF `info` prefix; the emission's id (`<game>/<stake>/e<NNNN>`) follows it.
pub const SEED_INFO: &str = "emission-factory beacon seed v1 ";
/// Largest round file read (a round's JSON is about 200 bytes).
const MAX_ROUND_BYTES: u64 = 4096;

/// What a ceremony's record says of the beacon (record format 2, field `beacon`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commitment {
    /// Always [`CHAIN`].
    pub chain: String,
    /// Always [`QUICKNET_CHAIN_HASH`].
    pub chain_hash: String,
    /// The round whose signature salts the seed.
    pub round: u64,
    /// When that round is published (UTC, RFC 3339): genesis + (round − 1) × period.
    pub round_time: String,
}

/// A published round of quicknet whose signature was checked against the pinned key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// Its number.
    pub round: u64,
    /// Its BLS signature (compressed G1, 48 bytes).
    pub signature: Vec<u8>,
    /// SHA-256 of the signature, as the API serves it.
    pub randomness: [u8; 32],
}

/// A round as the drand HTTP API serves it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoundJson {
    round: u64,
    randomness: String,
    signature: String,
}

/// When round `round` of quicknet is published, in seconds since 1970; `None` for round 0 or
/// a round beyond any time.
pub fn round_time(round: u64) -> Option<u64> {
    round
        .checked_sub(1)?
        .checked_mul(QUICKNET_PERIOD)?
        .checked_add(QUICKNET_GENESIS)
}

/// The first round of quicknet published strictly after `seconds` (since 1970).
pub fn first_round_after(seconds: u64) -> u64 {
    match seconds.checked_sub(QUICKNET_GENESIS) {
        None => 1,
        Some(since) => since / QUICKNET_PERIOD + 2,
    }
}

/// [`round_time`] as RFC 3339 (UTC); `None` as there.
pub fn round_time_text(round: u64) -> Option<String> {
    round_time(round).map(rfc3339)
}

/// `seconds` since 1970 as RFC 3339 (UTC, whole seconds).
pub fn rfc3339(seconds: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(seconds)).to_string()
}

fn seconds_of(rfc3339: &str) -> Option<u64> {
    humantime::parse_rfc3339(rfc3339)
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// Parses `--beacon-after`: an RFC 3339 time (`2027-01-15T10:00:00Z`).
pub fn parse_time(text: &str) -> Result<u64, BeaconError> {
    seconds_of(text).ok_or_else(|| BeaconError::AfterNotTime {
        text: text.to_string(),
    })
}

/// The commitment a ceremony writes whose record is made at `created` (RFC 3339): round
/// `round` must be published after it, so that nobody knew its signature when the secret was
/// fixed.
pub fn commit(round: u64, created: &str) -> Result<Commitment, BeaconError> {
    let created_s = seconds_of(created).ok_or_else(|| BeaconError::CreatedNotTime {
        created: created.to_string(),
    })?;
    let Some(time) = round_time(round) else {
        return Err(BeaconError::NoSuchRound { round });
    };
    if time <= created_s {
        return Err(BeaconError::RoundNotAfterCeremony {
            round,
            time,
            created: created.to_string(),
            first: first_round_after(created_s),
        });
    }
    Ok(Commitment {
        chain: CHAIN.into(),
        chain_hash: QUICKNET_CHAIN_HASH.into(),
        round,
        round_time: rfc3339(time),
    })
}

/// Why a beacon round or time was refused (`--beacon`, `--beacon-round`, `--beacon-after`),
/// what is wrong with a round file ([`parse_round`] says it without the file's name,
/// [`read_round`] with it), or why a block's seed cannot be made or replayed against the
/// round given ([`block_seed`], [`replay_seed`]).
#[derive(Debug, thiserror::Error)]
pub enum BeaconError {
    /// `--beacon-after` was given something that is not a UTC time in RFC 3339.
    #[error(
        "--beacon-after {}: not a UTC time written as RFC 3339 (e.g. 2027-01-15T10:00:00Z)",
        shown(.text)
    )]
    AfterNotTime {
        /// What was given.
        text: String,
    },
    /// The time a ceremony's record is made at is not RFC 3339 (the clock, or
    /// SOURCE_DATE_EPOCH, gave something this program cannot read back).
    #[error("the record's time {} is not RFC 3339", shown(.created))]
    CreatedNotTime {
        /// The record's time.
        created: String,
    },
    /// `--beacon-round` names a round quicknet never publishes (round 0, or beyond any time).
    #[error(
        "--beacon-round {round}: quicknet's rounds are numbered from 1 and published every {QUICKNET_PERIOD} s from {}",
        rfc3339(QUICKNET_GENESIS)
    )]
    NoSuchRound {
        /// The round named.
        round: u64,
    },
    /// `--beacon-round` names a round published before the ceremony's record is made: its
    /// signature may be known already, so the seed could have been chosen. Nothing was
    /// written.
    #[error(
        "--beacon-round {round}: that round of {CHAIN} is published at {}, not after this ceremony's record ({created}): its signature may be known already, so it could have been chosen. Name a round in the future: --beacon-round {} or later, or --beacon-after TIME. Nothing was written",
        rfc3339(*.time),
        .first
    )]
    RoundNotAfterCeremony {
        /// The round named.
        round: u64,
        /// When it is published (seconds since 1970).
        time: u64,
        /// The record's time (RFC 3339).
        created: String,
        /// The first round published after the record's time.
        first: u64,
    },
    /// A round file (`--beacon`) could not be read: missing, not a regular file, or larger
    /// than any round.
    #[error("--beacon {}: {error}", shown_path(.path))]
    ReadRound {
        /// The file.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ReadError,
    },
    /// A round file (`--beacon`) was read and refused: the file, then what is wrong with it.
    #[error("--beacon {}: {error}", shown_path(.path))]
    RoundFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (shown in the sentence): one of the round's own variants.
        error: Box<BeaconError>,
    },
    /// Not the drand API's JSON of a round.
    #[error("not a drand round ({{\"round\":…,\"randomness\":…,\"signature\":…}} as the drand API serves it): {0}")]
    NotRound(serde_json::Error),
    /// A hex field of the wrong length.
    #[error("{field}: {len} characters, where {expected} hex digits are expected")]
    HexLength {
        /// The field.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The length expected.
        expected: usize,
    },
    /// A hex field that is not hex.
    #[error("{field}: not hex digits: {}", shown(.text))]
    NotHex {
        /// The field.
        field: &'static str,
        /// What it holds.
        text: String,
    },
    /// A field that decodes to another number of bytes.
    #[error("{field}: not {bytes} bytes")]
    NotBytes {
        /// The field.
        field: &'static str,
        /// The bytes expected.
        bytes: usize,
    },
    /// Round 0.
    #[error("round 0 does not exist: quicknet's rounds are numbered from 1")]
    RoundZero,
    /// The pinned key does not read (a build error, never a file's).
    #[error("the pinned quicknet key: {0}")]
    PinnedKey(String),
    /// A signature that is not the chain's of this round.
    #[error("the signature is not {CHAIN}'s signature of round {round}: the file was altered, or is of another round or chain (chain hash {QUICKNET_CHAIN_HASH})")]
    NotSignature {
        /// The round the file says.
        round: u64,
    },
    /// A signature that is not a point of the curve.
    #[error("the signature is not a point of the curve ({0}): the file was altered")]
    NotPoint(String),
    /// A randomness that is not SHA-256 of the signature.
    #[error(
        "randomness {} is not SHA-256 of the signature ({}): the file was altered",
        hex::encode(.randomness),
        hex::encode(.expected)
    )]
    Randomness {
        /// The file's.
        randomness: [u8; 32],
        /// SHA-256 of its signature.
        expected: [u8; 32],
    },
    /// The record beside a replayed block could not be read, or is not a record (its message
    /// names the record, and says its causes in the sentence).
    #[error("{}", crate::problem::chained(.0.as_ref()))]
    Record(Box<crate::emission::record::RecordError>),
    /// The record names a beacon chain other than the pinned one.
    #[error(
        "{}: the record names beacon chain {} ({}), and this program knows only {CHAIN} ({QUICKNET_CHAIN_HASH})",
        .record.display(),
        shown(.chain),
        shown(.chain_hash)
    )]
    OtherChain {
        /// The record.
        record: PathBuf,
        /// The chain it names.
        chain: String,
        /// The chain hash it names.
        chain_hash: String,
    },
    /// The record's time of its round is not the round's time on quicknet: it was altered.
    #[error(
        "{}: the record says round {round} is published at {}, and quicknet publishes it at {}: the record was altered",
        .record.display(),
        shown(.round_time),
        round_time_text(*.round).unwrap_or_else(|| "never".into())
    )]
    RoundTimeAltered {
        /// The record.
        record: PathBuf,
        /// The round it names.
        round: u64,
        /// The time it says the round is published at.
        round_time: String,
    },
    /// A round was given (`--beacon`) for an emission whose record names none: its seed is
    /// the custodians' secret alone.
    #[error(
        "--beacon (round {round}): the emission's record {} names no beacon round, so its seed is the custodians' secret alone; leave out --beacon",
        .record.display()
    )]
    RoundNotNamed {
        /// The round given.
        round: u64,
        /// The record.
        record: PathBuf,
    },
    /// The emission's record names a round, and none was given (`--beacon`): nothing is made
    /// from the secret alone.
    #[error(
        "the emission's record {} says its seed waits for round {round} of {CHAIN} (published at {}): give that round's JSON with --beacon FILE (from a drand relay, GET /{QUICKNET_CHAIN_HASH}/public/{round}). Nothing was made from the secret alone",
        .record.display(),
        round_time_text(*.round).unwrap_or_else(|| "never".into())
    )]
    RoundMissing {
        /// The record.
        record: PathBuf,
        /// The round it names.
        round: u64,
    },
    /// The round given (`--beacon`) is not the one the emission's record names: another round
    /// would let whoever picks it choose the seed.
    #[error(
        "--beacon: the file is round {given} of {CHAIN}, and the emission's record {} names round {named}: give round {named} (another round would let whoever picks it choose the seed)",
        .record.display()
    )]
    OtherRound {
        /// The round of the file given.
        given: u64,
        /// The record.
        record: PathBuf,
        /// The round it names.
        named: u64,
    },
    /// The record's own time (`created`) is not RFC 3339.
    #[error("{}: the record's time {} is not RFC 3339", .record.display(), shown(.created))]
    RecordNotTime {
        /// The record.
        record: PathBuf,
        /// Its time.
        created: String,
    },
    /// The round the record names was published before the record was made: its signature
    /// could have been known when the secret was fixed; the record is refused.
    #[error(
        "--beacon: round {round} of {CHAIN} was published at {}, not after the emission's record was made ({}): its signature could have been known when the secret was fixed, so the seed could have been chosen; this emission's record is refused",
        rfc3339(*.time),
        shown(.created)
    )]
    RoundBeforeRecord {
        /// The round.
        round: u64,
        /// When it was published (seconds since 1970).
        time: u64,
        /// The record's time.
        created: String,
    },
    /// A round given, and no record beside the block.
    #[error("{}: no emission record beside the block, so no beacon round to check --beacon against", shown_path(.record))]
    NoRecord {
        /// Where the record would be.
        record: std::path::PathBuf,
    },
    /// A record other than the one the block was made under.
    #[error("{}: the block was made under the record of SHA-256 {}, and this one differs: the seed cannot be replayed against it", shown_path(.record), shown(.named))]
    OtherRecord {
        /// The record.
        record: std::path::PathBuf,
        /// The SHA-256 the manifest names.
        named: String,
    },
    /// A round given, and a manifest that names no record.
    #[error("{}: the block's manifest names no emission record (it was made before records named a beacon round): leave out --beacon", shown_path(.manifest))]
    ManifestNamesNoRecord {
        /// The manifest.
        manifest: std::path::PathBuf,
    },
}

impl BeaconError {
    /// The [`BeaconError::Record`] of an error of the record's reading, for `map_err`.
    fn record(error: crate::emission::record::RecordError) -> Self {
        BeaconError::Record(Box::new(error))
    }
}

/// Reads a round file (the drand API's JSON for one round of quicknet) and checks it: the JSON
/// has exactly `round`, `randomness` and `signature`; the signature is a valid BLS signature of
/// the round by quicknet's pinned key; the randomness is SHA-256 of the signature. Every
/// refusal names the file.
pub fn read_round(path: &Path) -> Result<Round, BeaconError> {
    let bytes = crate::fs::open::read_at_most(path, MAX_ROUND_BYTES, "a beacon round file")
        .map_err(|error| BeaconError::ReadRound {
            path: path.to_path_buf(),
            error,
        })?;
    parse_round(&bytes).map_err(|m| BeaconError::RoundFile {
        path: path.to_path_buf(),
        error: Box::new(m),
    })
}

/// [`read_round`] on bytes already read; the error says what is wrong, without the file name.
pub fn parse_round(bytes: &[u8]) -> Result<Round, BeaconError> {
    let json: RoundJson = serde_json::from_slice(bytes).map_err(BeaconError::NotRound)?;
    let signature = decode_hex(&json.signature, 48, "signature")?;
    let randomness: [u8; 32] = decode_hex(&json.randomness, 32, "randomness")?
        .try_into()
        .map_err(|_| BeaconError::NotBytes {
            field: "randomness",
            bytes: 32,
        })?;
    if json.round == 0 {
        return Err(BeaconError::RoundZero);
    }
    let key = quicknet_key()?;
    match key.verify(json.round, b"", &signature) {
        Ok(true) => {}
        Ok(false) => return Err(BeaconError::NotSignature { round: json.round }),
        Err(e) => return Err(BeaconError::NotPoint(e.to_string())),
    }
    let expected: [u8; 32] = Sha256::digest(&signature).into();
    if randomness != expected {
        return Err(BeaconError::Randomness {
            randomness,
            expected,
        });
    }
    Ok(Round {
        round: json.round,
        signature,
        randomness,
    })
}

fn quicknet_key() -> Result<G2PubkeyRfc, BeaconError> {
    let mut key = [0u8; 96];
    hex::decode_to_slice(QUICKNET_PUBLIC_KEY, &mut key)
        .map_err(|e| BeaconError::PinnedKey(e.to_string()))?;
    G2PubkeyRfc::from_fixed(key).map_err(|e| BeaconError::PinnedKey(e.to_string()))
}

fn decode_hex(text: &str, bytes: usize, field: &'static str) -> Result<Vec<u8>, BeaconError> {
    if text.len() != 2 * bytes {
        return Err(BeaconError::HexLength {
            field,
            len: text.len(),
            expected: 2 * bytes,
        });
    }
    hex::decode(text).map_err(|_| BeaconError::NotHex {
        field,
        text: text.to_string(),
    })
}

/// HKDF-SHA256 of the custodians' `secret`, salted with the round's signature, with
/// [`SEED_INFO`] and `emission` (`<game>/<stake>/e<NNNN>`) as info: the seed of the blocks.
pub fn derive_seed(secret: &Seed, round: &Round, emission: &str) -> Seed {
    let info = format!("{SEED_INFO}{emission}");
    let mut seed = [0u8; 32];
    // 32 bytes is far below HKDF-SHA256's limit of 255 × 32: expand cannot fail.
    let expanded = hkdf::Hkdf::<Sha256>::new(Some(&round.signature), secret)
        .expand(info.as_bytes(), &mut seed);
    debug_assert!(expanded.is_ok());
    seed
}

/// The emission id of a record, `<game>/<stake>/e<NNNN>`.
pub fn emission_of(record: &Record) -> String {
    record.id.to_string()
}

/// The seed the blocks of the emission of `record` are made from, given its `secret` (the seed
/// its `seed_sha256` commits to) and the `round` given (`--beacon`). A record that names no
/// round: the secret itself, and a round given is refused. A record that names round R: the
/// round given must be R of the pinned chain, published after the record was made, and the
/// seed is [`derive_seed`]; no round is refused. `path` names the record in errors.
pub fn block_seed(
    record: &Record,
    path: &Path,
    secret: &Seed,
    round: Option<&Round>,
) -> Result<Seed, BeaconError> {
    let named = record.beacon.as_ref();
    if let Some(c) = named {
        if c.chain_hash != QUICKNET_CHAIN_HASH || c.chain != CHAIN {
            return Err(BeaconError::OtherChain {
                record: path.to_path_buf(),
                chain: c.chain.clone(),
                chain_hash: c.chain_hash.clone(),
            });
        }
        if round_time_text(c.round).as_deref() != Some(c.round_time.as_str()) {
            return Err(BeaconError::RoundTimeAltered {
                record: path.to_path_buf(),
                round: c.round,
                round_time: c.round_time.clone(),
            });
        }
    }
    let (commitment, round) = match (named, round) {
        (None, None) => return Ok(*secret),
        (None, Some(round)) => {
            return Err(BeaconError::RoundNotNamed {
                round: round.round,
                record: path.to_path_buf(),
            })
        }
        (Some(c), None) => {
            return Err(BeaconError::RoundMissing {
                record: path.to_path_buf(),
                round: c.round,
            })
        }
        (Some(c), Some(round)) => (c, round),
    };
    if round.round != commitment.round {
        return Err(BeaconError::OtherRound {
            given: round.round,
            record: path.to_path_buf(),
            named: commitment.round,
        });
    }
    let created = seconds_of(&record.created).ok_or_else(|| BeaconError::RecordNotTime {
        record: path.to_path_buf(),
        created: record.created.clone(),
    })?;
    // Checked again here, not only by the ceremony: a record whose round was already published
    // when it was made names a beacon someone could have seen first.
    let time = round_time(round.round).unwrap_or(0);
    if time <= created {
        return Err(BeaconError::RoundBeforeRecord {
            round: round.round,
            time,
            created: record.created.clone(),
        });
    }
    Ok(derive_seed(secret, round, &emission_of(record)))
}

/// The seed a replay of a block uses (`verify --seed/--share`, and `emit` checking a block it
/// keeps): [`block_seed`] of the emission's record beside the block, which must be the record
/// its signed manifest names (`record_sha256`). With no round given and no record there, the
/// secret itself (a lone block of a test emission); a block of a beacon emission replayed so
/// fails on its tickets, never passes.
pub fn replay_seed(
    secret: &Seed,
    round: Option<&Round>,
    manifest: &crate::block::manifest::Manifest,
    manifest_path: &Path,
) -> Result<Seed, BeaconError> {
    let folder = match manifest_path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let path = folder.join(crate::emission::record::RECORD_FILE);
    let bytes = match crate::emission::record::read_unsigned(folder).map_err(BeaconError::record)? {
        Some(bytes) => bytes,
        None if round.is_none() => return Ok(*secret),
        None => return Err(BeaconError::NoRecord { record: path }),
    };
    match &manifest.record_sha256 {
        Some(named) if *named == hex::encode(Sha256::digest(&bytes)) => {}
        Some(named) => {
            return Err(BeaconError::OtherRecord {
                record: path,
                named: named.clone(),
            })
        }
        None if round.is_none() => return Ok(*secret),
        None => {
            return Err(BeaconError::ManifestNamesNoRecord {
                manifest: manifest_path.to_path_buf(),
            })
        }
    }
    let record = crate::emission::record::parse(&bytes, &path).map_err(BeaconError::record)?;
    block_seed(&record, &path, secret, round)
}

#[cfg(test)]
mod tests;
