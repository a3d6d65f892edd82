//! Ticket proofs (FORMAT.md, "Ticket proof"): evidence, checkable without the block, that one
//! ticket line is the ticket at its index in a block signed by the emission's key.
//!
//! A proof holds the ticket's line, its index, its RFC 6962 audit path to the manifest's
//! `tickets_root`, the manifest's exact bytes and their signature. [`check`] repeats what
//! `verify` checks of that one ticket: the signature (with `verify`'s own code), the manifest's
//! game, definition and stake, the line against the manifest (serial, index, prize, hash, and
//! the layout decoded by the game's decoder to the prize the line states), and the path folded
//! to the root. A game server hands a proof to a player who disputes a ticket.
//!
//! [`make`] issues a proof only for a block that verifies whole, from the very bytes the
//! manifest describes, and checks the proof before handing it out.

use crate::block::id::{BlockId, EmissionKind};
use crate::block::manifest::ManifestError;
use crate::block::manifest::{
    Manifest, FORMAT as MANIFEST_FORMAT, FORMATS_READ, FORMAT_1, MAX_MANIFEST_BYTES,
};
use crate::block::{self, keys};
use crate::fs::open::{read_at_most, ReadError};
use crate::game::{Game, Stake};
use crate::hash::merkle::leaf_hash;
use crate::hash::proof::{root_from_path, PathBuilder, MAX_PATH_LEN};
use crate::interrupt::Interrupted;
use crate::money::from_cents;
use crate::problem::Problem;
use crate::untrusted::{shown, shown_path, tamed};
use crate::verify::{block_number, check_signed, verify_block, TicketCheck, VerifyOptions};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// The format named in every proof; raised on any change of its fields or their meaning.
pub const FORMAT: &str = "emission-factory-ticket-proof/1";

/// The most a proof file may hold: a manifest of at most 1 MiB, escaped in a JSON string
/// (pretty JSON escapes its quotes and line ends, so about 1.2 times its size), a ticket line
/// and at most 64 hashes. A larger file is refused unread.
pub const MAX_PROOF_BYTES: u64 = 3 << 20;

/// A ticket proof, as written (pretty JSON, fields in this order, a final line end).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TicketProof {
    /// Always [`FORMAT`].
    pub format: String,
    /// The ticket's line in the block's CSV, without its line end.
    pub line: String,
    /// The ticket's index in the block, from 0 (the line is line `index + 2` of the CSV).
    pub index: u64,
    /// The RFC 6962 audit path of the ticket's leaf, from its sibling up, lowercase hex.
    pub audit_path: Vec<String>,
    /// The manifest's exact bytes (the signed ones), as a string.
    pub manifest: String,
    /// The raw 64-byte Ed25519 signature of the manifest's bytes, lowercase hex.
    pub signature: String,
}

impl TicketProof {
    /// The exact bytes of a proof file.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }
}

/// Which ticket of a block: its index (from 0) or its serial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ticket {
    /// The index in the block, from 0.
    Index(u64),
    /// The serial, `<game>-<stake cents>-<emission:04>-<block:05>-<index:07>`.
    Serial(String),
}

/// A `--ticket` that names no ticket ([`parse_ticket`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TicketArgError {
    /// Nothing given.
    #[error("give a ticket index (from 0) or a serial")]
    Empty,
    /// Digits too many for an index (the text).
    #[error("{0} is not a ticket index (a block holds at most 9 999 999 tickets)")]
    TooLarge(String),
}

/// Reads `--ticket`: digits only are an index, anything else a serial.
pub fn parse_ticket(text: &str) -> Result<Ticket, TicketArgError> {
    if text.is_empty() {
        Err(TicketArgError::Empty)
    } else if text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse()
            .map(Ticket::Index)
            .map_err(|_| TicketArgError::TooLarge(text.to_string()))
    } else {
        Ok(Ticket::Serial(text.to_string()))
    }
}

/// What a proof that checks establishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proven {
    /// The ticket's serial.
    pub serial: String,
    /// Its prize, canonical euros (`0` for a loser).
    pub prize: String,
    /// Its index in the block.
    pub index: u64,
    /// Its block (and so the game, stake and emission), as the signed manifest names it.
    pub id: BlockId,
    /// The game's display name.
    pub game_name: String,
    /// Tickets in the block.
    pub tickets: u64,
    /// Test or production emission.
    pub kind: EmissionKind,
}

/// Checks a proof file's bytes against the trusted `key`, with the built-in definition of the
/// game the manifest names, or `game` when given (its SHA-256 must be the manifest's). Returns
/// what it proves, or every problem found (each naming the field at fault).
pub fn check(bytes: &[u8], key: &VerifyingKey, game: Option<&Game>) -> Result<Proven, Vec<String>> {
    let one = |m: String| vec![m];
    if bytes.len() as u64 > MAX_PROOF_BYTES {
        return Err(one(format!(
            "{} bytes, more than the {MAX_PROOF_BYTES} bytes a ticket proof may hold: not read",
            bytes.len()
        )));
    }
    let proof: TicketProof = serde_json::from_slice(bytes)
        .map_err(|e| one(format!("not a ticket proof: {}", tamed(&e.to_string()))))?;
    if proof.format != FORMAT {
        return Err(one(format!(
            "format {} is not one this program reads ({FORMAT})",
            shown(&proof.format)
        )));
    }
    let mut problems = Vec::new();

    // The manifest and its signature: the same check as `verify`.
    let manifest_bytes = proof.manifest.as_bytes();
    if manifest_bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(one(format!(
            "manifest: {} bytes, more than the {MAX_MANIFEST_BYTES} bytes a manifest may hold",
            manifest_bytes.len()
        )));
    }
    let parsed = Manifest::from_bytes(manifest_bytes);
    let signature = hex_bytes::<64>(&proof.signature);
    if signature.is_none() {
        problems.push(format!(
            "signature: {} is not 128 lowercase hex digits (the 64 bytes of an Ed25519 signature)",
            shown(&proof.signature)
        ));
    }
    let signed = check_signed(
        key,
        manifest_bytes,
        signature.as_ref().map(|s| &s[..]),
        parsed.as_ref().ok(),
    );
    if let (Some(_), Err(m)) = (&signature, signed.signature) {
        problems.push(format!("signature: {m}"));
    }
    if let Err(m) = signed.fingerprint {
        problems.push(format!("manifest: {m}"));
    }
    let manifest = match parsed {
        Ok(m) => m,
        Err(e) => {
            problems.push(format!("manifest: not a valid manifest: {e}"));
            return Err(problems);
        }
    };
    let (game, stake) = match manifest_game(&manifest, game) {
        Ok(gs) => gs,
        Err(m) => {
            problems.push(format!("manifest: {m}"));
            return Err(problems);
        }
    };

    // The line: the ticket at this index of this block, valid, hashed and decoded.
    if proof.index >= manifest.tickets {
        problems.push(format!(
            "index: {} is not a ticket of a block of {} tickets (indexes go from 0)",
            proof.index, manifest.tickets
        ));
    }
    let tickets = TicketCheck::new(
        &game,
        &stake,
        manifest.emission().number(),
        manifest.id.number(),
    );
    if let Err(m) = tickets.check(proof.line.as_bytes(), proof.index) {
        problems.push(format!("line: {m}"));
    }

    // The path from the line's leaf to the signed root.
    let root = hex_bytes::<32>(&manifest.tickets_root);
    if root.is_none() {
        problems.push(format!(
            "manifest: tickets_root {} is not 64 lowercase hex digits",
            shown(&manifest.tickets_root)
        ));
    }
    let path = audit_path(&proof.audit_path);
    if let Err(m) = &path {
        problems.push(format!("audit_path: {m}"));
    }
    if let (Some(root), Ok(path)) = (root, path) {
        let leaf = leaf_hash(&ticket_hash(proof.line.as_bytes()));
        match root_from_path(proof.index, manifest.tickets, &leaf, &path) {
            Ok(found) if found == root => {}
            Ok(found) => problems.push(format!(
                "audit_path: the line, its index and the path lead to the root {}, not to the manifest's tickets_root {}: the line, the index or the path was changed",
                hex::encode(found),
                manifest.tickets_root
            )),
            Err(e) => problems.push(format!("audit_path: {e}")),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let (serial, rest) = proof.line.split_once(',').unwrap_or_default();
    let prize = rest.split(',').next().unwrap_or_default();
    Ok(Proven {
        serial: serial.to_string(),
        prize: prize.to_string(),
        index: proof.index,
        id: manifest.id.clone(),
        game_name: manifest.game_name.clone(),
        tickets: manifest.tickets,
        kind: manifest.kind(),
    })
}

/// Why no proof was made of a ticket ([`make`]): each names the file, or the `--ticket`, at
/// fault. The proof of a ticket is issued only from a block that verifies whole, read again as
/// the very bytes its manifest describes.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// The file given is not named as a block's CSV is, so its manifest and signature cannot
    /// be found beside it.
    #[error(
        "{}: not a block file (block files are named block-NNNNN.csv)",
        shown_path(.csv)
    )]
    NotABlock {
        /// The file given.
        csv: PathBuf,
    },
    /// A signal stopped the run (the command surfaces the [`Interrupted`] itself, for the
    /// exit status).
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    /// The block does not verify (each problem is `verify`'s): a proof of a broken block is
    /// never issued.
    #[error(
        "{} does not verify, and a proof of a broken block is never issued:{}",
        shown_path(.csv),
        listed(.problems, *.unlisted)
    )]
    Broken {
        /// The block's CSV.
        csv: PathBuf,
        /// What `verify` found wrong, as it lists them.
        problems: Vec<Problem>,
        /// Ticket-line problems found beyond the listed ones.
        unlisted: u64,
    },
    /// The manifest or the signature beside the block could not be read (missing, not a
    /// regular file, larger than such a file can be).
    #[error("cannot read {}", shown_path(.path))]
    Read {
        /// The manifest or signature file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ReadError,
    },
    /// The manifest beside the block is not one (it changed since the block was verified).
    #[error("{}: not a valid manifest", shown_path(.path))]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ManifestError,
    },
    /// The manifest's game, definition or stake is not the one at hand (`--game`).
    #[error("{}: {error}", shown_path(.path))]
    ManifestGame {
        /// The manifest file.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ManifestGameError,
    },
    /// `--ticket` gave an index past the block's last ticket.
    #[error(
        "--ticket {index}: block {block} holds {tickets} tickets, numbered from 0 to {}",
        .tickets.saturating_sub(1)
    )]
    NoSuchIndex {
        /// The index given.
        index: u64,
        /// The block's number.
        block: u32,
        /// Tickets in the block.
        tickets: u64,
    },
    /// `--ticket` gave a serial that is none of the block's.
    #[error(
        "--ticket {}: not a serial of this block; its serials are {prefix}0000000 to {prefix}{:07}",
        shown(.serial),
        .tickets.saturating_sub(1)
    )]
    NoSuchSerial {
        /// The serial given.
        serial: String,
        /// The block's serials' prefix, up to the index.
        prefix: String,
        /// Tickets in the block.
        tickets: u64,
    },
    /// The manifest's bytes are not UTF-8, so a proof (a JSON string) cannot hold them.
    #[error("{}: not UTF-8", shown_path(.path))]
    ManifestNotUtf8 {
        /// The manifest file.
        path: PathBuf,
    },
    /// The public key to check the proof with could not be read or was refused: see
    /// [`keys::KeyError`].
    #[error(transparent)]
    Key(#[from] keys::KeyError),
    /// The proof made does not check: the block changed while it was read (each problem as
    /// `verify-proof` says it).
    #[error(
        "{}: the proof made does not check (was the block changed while it was read?):\n  - {}",
        shown_path(.csv),
        .problems.join("\n  - ")
    )]
    DoesNotCheck {
        /// The block's CSV.
        csv: PathBuf,
        /// What the check found wrong.
        problems: Vec<String>,
    },
    /// The block's CSV could not be opened or read again, to make the ticket's path.
    #[error("cannot read {}", shown_path(.csv))]
    ReadBlock {
        /// The block's CSV.
        csv: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The ticket's index is not one of the manifest's tickets, so it has no audit path.
    #[error(transparent)]
    Tree(#[from] crate::hash::proof::PathError),
    /// Read again, the block's CSV has a line without its line end, or longer than a ticket
    /// line: it changed since it was verified.
    #[error(
        "{}: a line is unterminated or too long: the file changed since it was verified",
        shown_path(.csv)
    )]
    LineCut {
        /// The block's CSV.
        csv: PathBuf,
    },
    /// Read again, the ticket's line is not UTF-8: the block changed since it was verified.
    #[error("{}: the ticket's line is not UTF-8", shown_path(.csv))]
    LineNotUtf8 {
        /// The block's CSV.
        csv: PathBuf,
    },
    /// Read again, the block's CSV is not the bytes (size and SHA-256) its manifest
    /// describes: it changed since it was verified.
    #[error(
        "{}: the file is not the one its manifest describes (it changed since it was verified); no proof is issued",
        shown_path(.csv)
    )]
    Changed {
        /// The block's CSV.
        csv: PathBuf,
    },
    /// Read again, the block's CSV holds another number of tickets than its manifest says.
    #[error("{}: {error}", shown_path(.csv))]
    Leaves {
        /// The block's CSV.
        csv: PathBuf,
        /// Why (shown in the sentence).
        error: crate::hash::proof::PathError,
    },
    /// Read again, the block's CSV has no line at the ticket's index.
    #[error("{}: no ticket at index {index}", shown_path(.csv))]
    NoTicket {
        /// The block's CSV.
        csv: PathBuf,
        /// The ticket's index.
        index: u64,
    },
}

impl ProofError {
    /// The [`ProofError::Read`] of the manifest or signature at `path`, for `map_err`.
    fn read(path: &Path) -> impl FnOnce(ReadError) -> ProofError + '_ {
        move |source| ProofError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The [`ProofError::ReadBlock`] of the block's CSV `csv`, for `map_err`.
    fn read_block(csv: &Path) -> impl FnOnce(std::io::Error) -> ProofError + '_ {
        move |source| ProofError::ReadBlock {
            csv: csv.to_path_buf(),
            source,
        }
    }
}

/// `verify`'s problems with a block, one a line after `\n  - `, and how many more it found.
fn listed(problems: &[Problem], unlisted: u64) -> String {
    let mut text = String::new();
    for p in problems {
        text.push_str(&format!("\n  - {p}"));
    }
    if unlisted > 0 {
        text.push_str(&format!("\n  - ... and {unlisted} more problems"));
    }
    text
}

/// Makes the proof of one ticket of the block whose CSV is `csv`. The block is verified whole
/// first (signature, every ticket, the root: `options` as for `verify`), and a block that does
/// not verify gets no proof; the path is made from the same bytes (their SHA-256 must be the
/// manifest's), and the proof is checked before it is returned.
pub fn make(
    csv: &Path,
    ticket: &Ticket,
    options: &VerifyOptions,
) -> Result<TicketProof, ProofError> {
    let number = block_number(csv).ok_or_else(|| ProofError::NotABlock {
        csv: csv.to_path_buf(),
    })?;
    let dir = crate::verify::folder_of(csv);
    let report = verify_block(csv, options, &crate::progress::NoProgress);
    crate::interrupt::check()?;
    if !report.ok() {
        return Err(ProofError::Broken {
            csv: csv.to_path_buf(),
            problems: report.problems,
            unlisted: report.unlisted,
        });
    }
    let manifest_path = dir.join(block::manifest_name(number));
    let manifest_bytes = read_at_most(&manifest_path, MAX_MANIFEST_BYTES, "a manifest")
        .map_err(ProofError::read(&manifest_path))?;
    let manifest =
        Manifest::from_bytes(&manifest_bytes).map_err(|source| ProofError::Manifest {
            path: manifest_path.clone(),
            source,
        })?;
    let signature_path = dir.join(block::signature_name(number));
    let signature = read_at_most(&signature_path, keys::SIGNATURE_BYTES, "a signature")
        .map_err(ProofError::read(&signature_path))?;
    let (game, stake) = manifest_game(&manifest, options.game.as_ref()).map_err(|error| {
        ProofError::ManifestGame {
            path: manifest_path.clone(),
            error,
        }
    })?;
    let index = match ticket {
        Ticket::Index(i) if *i < manifest.tickets => *i,
        Ticket::Index(i) => {
            return Err(ProofError::NoSuchIndex {
                index: *i,
                block: manifest.id.number(),
                tickets: manifest.tickets,
            })
        }
        Ticket::Serial(serial) => {
            let prefix = manifest.id.serial_prefix();
            serial
                .strip_prefix(&prefix)
                .filter(|d| d.len() == 7 && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<u64>().ok())
                .filter(|&i| i < manifest.tickets)
                .ok_or_else(|| ProofError::NoSuchSerial {
                    serial: serial.clone(),
                    prefix: prefix.clone(),
                    tickets: manifest.tickets,
                })?
        }
    };
    let tickets = TicketCheck::new(
        &game,
        &stake,
        manifest.emission().number(),
        manifest.id.number(),
    );
    let (line, leaf_path) = read_path(csv, &manifest, index, tickets.max_line())?;
    crate::interrupt::check()?;
    let proof = TicketProof {
        format: FORMAT.to_string(),
        line,
        index,
        audit_path: leaf_path.iter().map(hex::encode).collect(),
        manifest: String::from_utf8(manifest_bytes).map_err(|_| ProofError::ManifestNotUtf8 {
            path: manifest_path.clone(),
        })?,
        signature: hex::encode(signature),
    };
    // The proof must stand on its own, under the key the block was verified with.
    let key = match options.public_key {
        Some(key) => key,
        None => keys::read_public_key(&dir.join(block::PUBLIC_KEY_FILE))?,
    };
    if let Err(problems) = check(&proof.to_bytes(), &key, options.game.as_ref()) {
        return Err(ProofError::DoesNotCheck {
            csv: csv.to_path_buf(),
            problems,
        });
    }
    Ok(proof)
}

/// Reads the block's CSV again: the line at `index`, and its audit path. The bytes read must be
/// those the manifest describes (size and SHA-256), so the path is the signed root's.
fn read_path(
    csv: &Path,
    manifest: &Manifest,
    index: u64,
    max_line: usize,
) -> Result<(String, Vec<[u8; 32]>), ProofError> {
    let file = crate::fs::open::open_regular(csv).map_err(ProofError::read_block(csv))?;
    let mut reader =
        std::io::BufReader::with_capacity(1 << 20, file.take(manifest.csv.bytes.saturating_add(1)));
    let mut builder = PathBuilder::new(index, manifest.tickets)?;
    let mut sha = Sha256::new();
    let mut bytes = 0u64;
    let mut line = Vec::with_capacity(max_line + 2);
    let mut found = None;
    let mut i: Option<u64> = None; // None on the header
    loop {
        line.clear();
        // A line is read only up to the longest a ticket line can be (and its line end).
        let n = (&mut reader)
            .take(max_line as u64 + 2)
            .read_until(b'\n', &mut line)
            .map_err(ProofError::read_block(csv))?;
        if n == 0 {
            break;
        }
        sha.update(&line);
        bytes += n as u64;
        let Some(text) = line.strip_suffix(b"\n") else {
            return Err(ProofError::LineCut {
                csv: csv.to_path_buf(),
            });
        };
        match i {
            None => i = Some(0),
            Some(at) => {
                // The second reading of the block is as long as the first: a signal ends it.
                if at % 4096 == 0 {
                    crate::interrupt::check()?;
                }
                builder.push(&ticket_hash(text));
                if at == index {
                    found = Some(String::from_utf8(text.to_vec()).map_err(|_| {
                        ProofError::LineNotUtf8 {
                            csv: csv.to_path_buf(),
                        }
                    })?);
                }
                i = Some(at + 1);
            }
        }
    }
    if bytes != manifest.csv.bytes || hex::encode(sha.finalize()) != manifest.csv.sha256 {
        return Err(ProofError::Changed {
            csv: csv.to_path_buf(),
        });
    }
    let (_, path) = builder.finish().map_err(|error| ProofError::Leaves {
        csv: csv.to_path_buf(),
        error,
    })?;
    let line = found.ok_or_else(|| ProofError::NoTicket {
        csv: csv.to_path_buf(),
        index,
    })?;
    Ok((line, path))
}

/// Why a manifest's block cannot be checked with the definition at hand.
#[derive(Debug, thiserror::Error)]
pub enum ManifestGameError {
    /// A manifest format this program does not read.
    #[error("format {0} is not one this program reads (it reads formats {FORMAT_1} to {MANIFEST_FORMAT})")]
    Format(u32),
    /// No definition given, and the game is not built in.
    #[error("{0}; give --game with its definition")]
    Unknown(crate::game::GameError),
    /// The definition given is of another game.
    #[error("the manifest is for game {manifest}, the definition given is '{given}'")]
    OtherGame {
        /// The manifest's game, escaped.
        manifest: String,
        /// The given definition's game.
        given: String,
    },
    /// The definition is not the one the manifest names.
    #[error("game_definition_sha256 {manifest} is not the SHA-256 of the definition checked against ({definition}, {sha256}); give --game with the definition used")]
    Definition {
        /// The manifest's `game_definition_sha256`, escaped.
        manifest: String,
        /// Where the definition came from.
        definition: String,
        /// Its SHA-256.
        sha256: String,
    },
    /// The definition has no such stake.
    #[error("{0}")]
    Stake(crate::game::GameError),
    /// The manifest's ticket count is not the definition's block size.
    #[error("the manifest says {tickets} tickets, a block of {game} holds {block_size}")]
    BlockSize {
        /// The manifest's tickets.
        tickets: u64,
        /// The game.
        game: String,
        /// Its block size.
        block_size: u64,
    },
}

/// The game and stake a manifest names: its built-in definition, or `given` (whose id and
/// SHA-256 must be the manifest's: a proof decoded by another definition proves nothing).
fn manifest_game(
    manifest: &Manifest,
    given: Option<&Game>,
) -> Result<(Game, Stake), ManifestGameError> {
    if !FORMATS_READ.contains(&manifest.format) {
        return Err(ManifestGameError::Format(manifest.format));
    }
    let game = match given {
        Some(g) => g.clone(),
        None => Game::builtin(manifest.emission().game()).map_err(ManifestGameError::Unknown)?,
    };
    if game.id != manifest.emission().game() {
        return Err(ManifestGameError::OtherGame {
            manifest: shown(manifest.emission().game()),
            given: game.id.clone(),
        });
    }
    if hex::encode(game.sha256) != manifest.game_definition_sha256 {
        return Err(ManifestGameError::Definition {
            manifest: shown(&manifest.game_definition_sha256),
            definition: game.source.clone(),
            sha256: hex::encode(game.sha256),
        });
    }
    // The manifest's stake is canonical, in whole cents (its EmissionId).
    let stake = game
        .stake(from_cents(manifest.emission().stake_cents()))
        .map_err(ManifestGameError::Stake)?
        .clone();
    if manifest.tickets != game.block_size {
        return Err(ManifestGameError::BlockSize {
            tickets: manifest.tickets,
            game: game.id.clone(),
            block_size: game.block_size,
        });
    }
    Ok((game, stake))
}

/// The ticket's hash as the Merkle tree takes it: SHA-256 of `serial,prize,layout`, the line
/// without its last field (of the whole line if it has no comma; such a line fails its check).
fn ticket_hash(line: &[u8]) -> [u8; 32] {
    let hashed = match line.iter().rposition(|&b| b == b',') {
        Some(at) => &line[..at],
        None => line,
    };
    Sha256::digest(hashed).into()
}

/// An audit path that is not one ([`audit_path`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// More hashes than the deepest tree has levels.
    #[error("{0} hashes, more than the {MAX_PATH_LEN} of the deepest tree")]
    TooLong(usize),
    /// A hash (its place from 1, and its text escaped) is not 64 lowercase hex digits.
    #[error("hash {place} ({text}) is not 64 lowercase hex digits")]
    Hash {
        /// Its place in the path, from 1.
        place: usize,
        /// The text, escaped.
        text: String,
    },
}

/// The audit path's hashes: at most [`MAX_PATH_LEN`], each 64 lowercase hex digits.
fn audit_path(path: &[String]) -> Result<Vec<[u8; 32]>, PathError> {
    if path.len() > MAX_PATH_LEN {
        return Err(PathError::TooLong(path.len()));
    }
    path.iter()
        .enumerate()
        .map(|(i, h)| {
            hex_bytes::<32>(h).ok_or_else(|| PathError::Hash {
                place: i + 1,
                text: shown(h),
            })
        })
        .collect()
}

/// `N` bytes written as exactly `2N` lowercase hex digits, as this program writes them.
fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_indexes_or_serials() {
        assert_eq!(parse_ticket("42"), Ok(Ticket::Index(42)));
        assert_eq!(parse_ticket("0"), Ok(Ticket::Index(0)));
        assert_eq!(
            parse_ticket("ruche-or-200-0001-00007-0000042"),
            Ok(Ticket::Serial("ruche-or-200-0001-00007-0000042".into()))
        );
        assert!(parse_ticket("").is_err());
        assert!(parse_ticket("99999999999999999999999").is_err());
    }

    #[test]
    fn hex_is_exact_and_lowercase() {
        assert_eq!(hex_bytes::<2>("0aff"), Some([0x0a, 0xff]));
        assert_eq!(hex_bytes::<2>("0AFF"), None);
        assert_eq!(hex_bytes::<2>("0af"), None);
        assert_eq!(hex_bytes::<2>("0aff00"), None);
        assert_eq!(hex_bytes::<2>("0a+f"), None);
    }

    /// The errors of `make` say what its messages said, causes after `: ` as the program
    /// prints them, and a signal stays the run's own.
    #[test]
    fn errors_keep_their_words() {
        let broken = ProofError::Broken {
            csv: PathBuf::from("e/block-00001.csv"),
            problems: vec![
                Problem::new(crate::problem::Code::BlockName, "one"),
                Problem::new(crate::problem::Code::BlockName, "two"),
            ],
            unlisted: 3,
        };
        assert_eq!(
            broken.to_string(),
            "e/block-00001.csv does not verify, and a proof of a broken block is never issued:\n  - one\n  - two\n  - ... and 3 more problems"
        );
        let read = ProofError::read(Path::new("e/block-00001.manifest.json"))(ReadError::Io(
            std::io::Error::other("gone"),
        ));
        assert_eq!(
            format!("{:#}", anyhow::Error::new(read)),
            "cannot read e/block-00001.manifest.json: gone"
        );
        let index = ProofError::NoSuchIndex {
            index: 7,
            block: 2,
            tickets: 0,
        };
        assert_eq!(
            index.to_string(),
            "--ticket 7: block 2 holds 0 tickets, numbered from 0 to 0"
        );
        let signal = crate::interrupt::Interrupted(2);
        assert_eq!(ProofError::from(signal).to_string(), signal.to_string());
    }

    #[test]
    fn hostile_proofs_are_refused_with_short_messages() {
        let key = keys::generate().unwrap().verifying_key();
        let big = vec![b' '; MAX_PROOF_BYTES as usize + 1];
        let e = check(&big, &key, None).unwrap_err();
        assert!(e[0].contains("more than the 3145728 bytes"), "{e:?}");
        let deep = "[".repeat(100_000);
        assert!(check(deep.as_bytes(), &key, None).is_err());
        let unknown = br#"{"format":"emission-factory-ticket-proof/1","line":"","index":0,"audit_path":[],"manifest":"","signature":"","extra":1}"#;
        let e = check(unknown, &key, None).unwrap_err();
        assert!(e[0].contains("unknown field"), "{e:?}");
        let format = br#"{"format":"\u001b[2J","line":"","index":0,"audit_path":[],"manifest":"","signature":""}"#;
        let e = check(format, &key, None).unwrap_err();
        assert!(e[0].contains("'\\u{1b}[2J'"), "{e:?}");
        let paths = format!(
            r#"{{"format":"{FORMAT}","line":"","index":0,"audit_path":[{}],"manifest":"{{}}","signature":""}}"#,
            vec!["\"00\""; 65].join(",")
        );
        let e = check(paths.as_bytes(), &key, None).unwrap_err();
        assert!(e.iter().any(|m| m.starts_with("signature:")), "{e:?}");
        assert!(
            e.iter().any(|m| m.starts_with("manifest: not a valid")),
            "{e:?}"
        );
    }
}
