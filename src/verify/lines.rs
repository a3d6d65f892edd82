//! The ticket lines of a block: the checks of one line ([`TicketCheck`]), and the scan of a
//! whole file as a pipeline.
//!
//! The file is read, hashed and cut into pieces of 2^10 ticket lines a batch at a time (read
//! straight into the batch's buffer: only the unfinished piece at its end is copied on); rayon
//! workers check whole pieces in parallel (each line, its hash, the piece's Merkle subtree,
//! its prize counts), and the pieces are folded in order. A piece's line hashes, and then its
//! Merkle subtree, are hashed all together (interleaved SHA-256, [`sha256::digest_many`]). Reading the next batch is one more
//! task beside the checks of the current one (`rayon::join`), not a thread of its own: so what
//! only one thread can do (reading, the file's SHA-256, finding line ends) overlaps the checks,
//! and `--threads N` means N threads in all (with one, everything runs in turn on it). The two
//! batch buffers are reused batch after batch: memory stays a few dozen megabytes whatever the
//! block size. The file is read, not mapped: a mapped file that another process truncates
//! kills the reader with SIGBUS, which safe code cannot catch.

use super::observe::{CheckedLine, PieceObserver, PiecePart};
use super::replay::Replay;
use super::BlockReport;
use crate::block::{self, CSV_HEADER, LINES_HEADER};
use crate::fs::files::{DirectReader, ReadMode};
use crate::game::{Game, Stake};
use crate::hash::merkle::MerkleRoot;
use crate::hash::sha256;
use crate::mechanic::Decoder;
use crate::money::{canonical, cents, from_cents};
use crate::problem::{Code, Fault, Problem as Found};
use crate::progress::Progress;
use crate::untrusted::shown;
use rayon::prelude::*;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;

/// Ticket lines per piece: a power of two, so that a piece that starts at a multiple of it is
/// a subtree of the block's Merkle tree (pieces end at multiples of it).
const PIECE_TICKETS: u64 = 1024;
/// A piece also ends at the first line end past this many bytes (only long, hostile lines
/// reach it): what is held stays a few megabytes.
const PIECE_BYTES: usize = 256 << 10;
/// Pieces checked in parallel at a time while the next batch is read: this many are cut
/// before a batch is checked, unless its buffer fills first (two batches are held at once).
const PIECES_PER_BATCH: usize = 32;
/// Bytes of a batch's buffer: 32 pieces of 1024 ticket lines of every game fit (lines of
/// about 200 bytes), and always one piece at its longest (`PIECE_BYTES` and a line of
/// `MAX_LINE_READ`) with room to read more.
const BATCH_BYTES: usize = 8 << 20;
/// Bytes read at a time.
const READ_SIZE: usize = 1 << 20;
/// Reading stops at a line with no line end within this many bytes (a longer line that does
/// end is refused as a line, undecoded).
const MAX_LINE_READ: usize = 512 << 10;

/// The form in which a block's bytes come to [`LineChecker::scan_from`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The CSV itself, byte for byte.
    Csv,
    /// Its lines form, as a pack carries it (docs/FORMAT.md "Emission pack"): the header
    /// `serial,prize,layout` and each ticket line without its `,sha256` field. Each piece is
    /// rebuilt into the CSV's bytes as it is checked (the header `serial,prize,layout,sha256`,
    /// each line's SHA-256 in hex after it), and every check, the file's size and SHA-256
    /// among them, is then made on those bytes as on a CSV's: the rebuilt file must be the
    /// one the signed manifest names. The line hashes the rebuild makes are the ones checked,
    /// so a pack's lines are hashed once, not once to rebuild and again to check.
    Lines,
}

/// The checks `verify` runs on every ticket line of one block, usable one line at a time (by
/// a fuzzer, or a tool that reads tickets its own way): the length of the line, the four
/// fields, the serial, the prize column, the ticket's SHA-256, and the layout, which must be
/// valid and win exactly the prize column. Nothing is allocated on a valid line.
pub struct TicketCheck {
    /// `<game>-<stake cents>-<emission:04>-<block:05>-`: the serial without its index.
    prefix: String,
    /// Tickets in a block of the game.
    block_size: u64,
    /// The stake's prize tiers, highest first, then zero.
    pub(super) tiers: Vec<Decimal>,
    /// The tiers as written in the prize column.
    pub(super) tier_text: Vec<String>,
    /// The tiers in cents, as the decoder reads layouts (`None`: not whole cents, never
    /// for a checked game; no layout matches it).
    tier_cents: Vec<Option<u64>>,
    decoder: Box<dyn Decoder>,
    /// The longest ticket line the game allows, line end excluded.
    max_line: usize,
    /// The tiers' texts packed as [`packed_text`] packs them (`None` for a text too long to
    /// pack: such a prize is found by the full reading only).
    tier_keys: Vec<Option<u128>>,
    /// The serial's prefix has no comma (always, for game ids the loader accepts) and the tier
    /// texts are distinct: only then does [`TicketCheck::quick`] read lines.
    quick: bool,
}

/// What one ticket line showed.
pub(super) struct Inspection<'l> {
    /// The prize tier of the prize column, if it is one.
    pub(super) tier: Option<usize>,
    /// SHA-256 of `serial,prize,layout` (of the whole line if it has not four fields; zero if
    /// it is too long to be a ticket line).
    pub(super) hash: [u8; 32],
    /// Every rule the line breaks (empty on a valid line: no allocation).
    pub(super) problems: Vec<Fault>,
    /// With forms: how the layout shows its prize.
    pub(super) form: Option<String>,
    /// The layout field, when the line has four fields.
    pub(super) layout: Option<&'l [u8]>,
}

/// Length of the hex SHA-256 that ends a ticket line.
const HASH_HEX: usize = 64;
/// Digits of the ticket index that end a serial.
const INDEX_DIGITS: usize = 7;

impl TicketCheck {
    /// The checks for the tickets of block `block` of emission `emission` of this game and
    /// stake.
    pub fn new(game: &Game, stake: &Stake, emission: u32, block: u32) -> Self {
        let decoder = stake.decoder();
        let prefix = crate::block::id::EmissionId::new(&game.id, stake, emission)
            .block(block)
            .serial_prefix();
        let tiers = stake.tiers();
        let tier_text: Vec<String> = tiers.iter().copied().map(canonical).collect();
        let tier_cents = tiers.iter().copied().map(cents).collect();
        let longest_prize = tier_text.iter().map(String::len).max().unwrap_or(1);
        let tier_keys = tier_text
            .iter()
            .map(|t| packed_text(t.as_bytes()))
            .collect();
        // The quick reading finds the tier from the end (losers first); with distinct texts
        // (always: the tiers are distinct amounts) that is the full reading's tier.
        let distinct = (1..tier_text.len()).all(|i| !tier_text[..i].contains(&tier_text[i]));
        let quick = distinct && !prefix.contains(',');
        // serial "," prize "," layout "," sha256
        let max_line = prefix.len()
            + INDEX_DIGITS
            + 1
            + longest_prize
            + 1
            + decoder.max_layout_len()
            + 1
            + HASH_HEX;
        TicketCheck {
            prefix,
            block_size: game.block_size,
            tiers,
            tier_text,
            tier_cents,
            decoder,
            max_line,
            tier_keys,
            quick,
        }
    }

    /// The longest ticket line of this game and stake, in bytes, line end excluded: serial,
    /// the longest prize, the longest layout the mechanic accepts, and the hash.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// The largest CSV a block of `block_size` tickets can be: the header and every ticket
    /// line at its longest, with their line ends.
    pub fn max_block_bytes(&self, block_size: u64) -> u64 {
        let line = self.max_line as u64 + 1;
        (CSV_HEADER.len() as u64 + 1).saturating_add(block_size.saturating_mul(line))
    }

    /// Checks one ticket line (without its line end) of the ticket at `index` in the block
    /// (from 0; the line is line `index + 2` of the file). The error names the line, the
    /// serial expected there, and every rule the line breaks.
    pub fn check(&self, line: &[u8], index: u64) -> Result<(), Found> {
        let seen = self.inspect(line, index, false);
        if seen.problems.is_empty() {
            Ok(())
        } else {
            Err(Found::ticket_line(
                None,
                index.saturating_add(2),
                self.serial(index),
                &seen.problems,
            ))
        }
    }

    /// The serial of the ticket at `index`.
    pub(super) fn serial(&self, index: u64) -> String {
        let digits = block::index_digits(index);
        format!("{}{}", self.prefix, String::from_utf8_lossy(&digits))
    }

    /// Runs every check on one line; with `forms`, also names the form of a valid layout.
    pub(super) fn inspect<'l>(&self, line: &'l [u8], index: u64, forms: bool) -> Inspection<'l> {
        self.inspect_hashed(line, index, forms, None)
    }

    /// [`inspect`](Self::inspect), with the SHA-256 of the line up to its last comma already
    /// made if `known` ([`line_hashes`]): the hash of a line of four fields.
    fn inspect_hashed<'l>(
        &self,
        line: &'l [u8],
        index: u64,
        forms: bool,
        known: Option<&[u8; 32]>,
    ) -> Inspection<'l> {
        if let Some(seen) = self.quick(line, index, forms, known) {
            return seen;
        }
        self.inspect_fully(line, index, forms, known)
    }

    /// The reading of a line written as `emit` writes it, in one pass and without allocating:
    /// the fields are found where a valid line has them (the serial is of known length, the
    /// prize a short text before the second comma, the hash the last 64 bytes), and every
    /// check of [`inspect_fully`](Self::inspect_fully) is made on them. `None` as soon as any
    /// of them fails, or the line is not shaped so: the full reading then names what is wrong,
    /// so messages are its own.
    #[inline]
    fn quick<'l>(
        &self,
        line: &'l [u8],
        index: u64,
        forms: bool,
        known: Option<&[u8; 32]>,
    ) -> Option<Inspection<'l>> {
        if !self.quick || line.len() > self.max_line || index >= self.block_size {
            return None;
        }
        let prefix = self.prefix.as_bytes();
        let serial_end = prefix.len() + INDEX_DIGITS;
        // serial "," prize "," layout "," hash: the hash field and its comma end the line.
        let hashed_end = line.len().checked_sub(HASH_HEX + 1)?;
        let (hashed, comma_hash) = line.split_at(hashed_end);
        let (&comma, hash_text) = comma_hash.split_first()?;
        if comma != b',' || hashed.get(serial_end) != Some(&b',') {
            return None;
        }
        let digits = <[u8; INDEX_DIGITS]>::try_from(&hashed[prefix.len()..serial_end]).ok()?;
        if &hashed[..prefix.len()] != prefix || digits != block::index_digits(index) {
            return None;
        }
        // The prize, then the layout to the hash's comma, which holds no comma of its own.
        let after_serial = &hashed[serial_end + 1..];
        let (key, prize_len) = packed_before_comma(after_serial)?;
        let tier = self.tier_keys.iter().rposition(|&k| k == Some(key))?;
        let layout = after_serial.get(prize_len + 1..)?;
        if memchr::memchr(b',', layout).is_some() {
            return None;
        }
        // `known` is the hash of the line up to its last comma: `hashed` when the hash field
        // holds no comma, which `is_hex_of` requires.
        let hash = match known {
            Some(hash) => *hash,
            None => sha256::digest(hashed),
        };
        if !is_hex_of(hash_text, &hash) {
            return None;
        }
        let won = self.decoder.decode_cents(layout).ok()?;
        if self.tier_cents[tier] != Some(won) {
            return None;
        }
        Some(Inspection {
            tier: Some(tier),
            hash,
            problems: Vec::new(),
            form: if forms {
                self.decoder.form(layout).ok()
            } else {
                None
            },
            layout: Some(layout),
        })
    }

    /// Runs every check on one line, field by field, naming every rule it breaks.
    fn inspect_fully<'l>(
        &self,
        line: &'l [u8],
        index: u64,
        forms: bool,
        known: Option<&[u8; 32]>,
    ) -> Inspection<'l> {
        let mut out = Inspection {
            tier: None,
            hash: [0; 32],
            problems: Vec::new(),
            form: None,
            layout: None,
        };
        if line.len() > self.max_line {
            // Not read further: no field of it can be right.
            out.problems.push(Fault::new(
                Code::LineTooLong,
                format!(
                    "{} bytes, longer than the longest ticket line of this game ({} bytes)",
                    line.len(),
                    self.max_line
                ),
            ));
            return out;
        }
        if index >= self.block_size {
            out.problems.push(Fault::new(
                Code::LineExtra,
                format!(
                    "a block of this game holds {} tickets: this line is one too many",
                    self.block_size
                ),
            ));
        }
        let mut fields: [&[u8]; 4] = [&[]; 4];
        let mut count = 0;
        let mut start = 0;
        for comma in memchr::memchr_iter(b',', line).chain([line.len()]) {
            if count < 4 {
                fields[count] = &line[start..comma];
            }
            count += 1;
            start = comma + 1;
        }
        if count != 4 {
            out.problems.push(Fault::new(
                Code::LineFields,
                format!("{count} fields, a ticket line has 4 (serial,prize,layout,sha256)"),
            ));
            out.hash = Sha256::digest(line).into();
            return out;
        }
        let hashed = &line[..line.len() - fields[3].len() - 1];
        debug_assert_eq!(hashed, hashed_part(line));
        out.hash = match known {
            Some(hash) => *hash,
            None => sha256::digest(hashed),
        };
        let serial = fields[0];
        let prefix = self.prefix.as_bytes();
        let digits = block::index_digits(index);
        if serial.len() != prefix.len() + INDEX_DIGITS
            || !serial.starts_with(prefix)
            || serial[prefix.len()..] != digits[..]
        {
            out.problems.push(Fault::new(
                Code::LineSerial,
                format!(
                    "serial {} where {} was expected: a ticket is missing, added or out of order, or the serial was changed",
                    shown(serial),
                    self.serial(index)
                ),
            ));
        }
        let tier = self
            .tier_text
            .iter()
            .position(|t| t.as_bytes() == fields[1]);
        match tier {
            Some(t) => out.tier = Some(t),
            None => out.problems.push(Fault::new(
                Code::LinePrize,
                format!("prize {} is not a prize of this stake", shown(fields[1])),
            )),
        }
        if !is_hex_of(fields[3], &out.hash) {
            out.problems.push(Fault::new(
                Code::LineHash,
                format!(
                    "sha256 {} is not the SHA-256 of serial,prize,layout ({})",
                    shown(fields[3]),
                    hex::encode(out.hash)
                ),
            ));
        }
        out.layout = Some(fields[2]);
        // A layout that decodes is ASCII: UTF-8 is only asked of one that does not.
        match self.decoder.decode_cents(fields[2]) {
            Err(_) if std::str::from_utf8(fields[2]).is_err() => out
                .problems
                .push(Fault::new(Code::LineLayoutUtf8, "the layout is not UTF-8")),
            Err(e) => out
                .problems
                .push(Fault::new(Code::LineLayout, format!("invalid layout: {e}"))),
            Ok(won) => {
                if let Some(t) = tier {
                    if self.tier_cents[t] != Some(won) {
                        // The prize column is one of the tiers here: safe to show as is.
                        out.problems.push(Fault::new(
                            Code::LineLayoutPrize,
                            format!(
                                "the layout wins {} € but the prize column says {} €",
                                canonical(from_cents(won)),
                                self.tier_text[t]
                            ),
                        ));
                    } else if forms {
                        out.form = self.decoder.form(fields[2]).ok();
                    }
                }
            }
        }
        out
    }
}

/// A text of 1 to 15 bytes and its length in one integer (its bytes from the lowest, its
/// length in the top byte): one-to-one on such texts, whatever their bytes. `None` for longer
/// or empty texts.
fn packed_text(text: &[u8]) -> Option<u128> {
    if text.is_empty() || text.len() > 15 {
        return None;
    }
    let mut bytes = [0u8; 16];
    bytes[..text.len()].copy_from_slice(text);
    bytes[15] = text.len() as u8;
    Some(u128::from_le_bytes(bytes))
}

/// The text before the first comma of `text`, packed as [`packed_text`] packs it, and its
/// length: `None` if it is empty, or no comma is among the first 16 bytes (or `text` is
/// shorter than 16 bytes: a ticket line always has the hash after its prize). The comma is
/// found in one 16-byte word, without a loop over bytes whose exit the varying lengths of
/// prizes would keep mispredicting.
#[inline]
fn packed_before_comma(text: &[u8]) -> Option<(u128, usize)> {
    const ONES: u128 = u128::MAX / 255; // 0x0101…01
    const HIGH: u128 = ONES << 7; // 0x8080…80
    let word = u128::from_le_bytes(*text.first_chunk::<16>()?);
    // Commas become 0; the lowest byte flagged is exactly the first zero (a borrow can only
    // flag bytes above it).
    let x = word ^ (ONES * u128::from(b','));
    let zeros = x.wrapping_sub(ONES) & !x & HIGH;
    let len = (zeros.trailing_zeros() / 8) as usize; // 16 when there is none
    if len == 0 || len > 15 {
        return None;
    }
    let key = (word & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120);
    Some((key, len))
}

/// Whether `text` is `hash` in lowercase hex, as `emit` writes it, compared eight digits at a
/// time without formatting a string.
#[inline]
fn is_hex_of(text: &[u8], hash: &[u8; 32]) -> bool {
    if text.len() != HASH_HEX {
        return false;
    }
    let mut diff = 0u64;
    for (digits, bytes) in text.chunks_exact(8).zip(hash.chunks_exact(4)) {
        let digits = u64::from_le_bytes(digits.try_into().unwrap_or([0; 8]));
        diff |= digits ^ hex_word([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    diff == 0
}

/// The eight lowercase hex digits of four bytes, in text order, as a little-endian word.
#[inline]
fn hex_word(b: [u8; 4]) -> u64 {
    const LOW: u64 = 0x000f_000f_000f_000f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Byte k of `b` goes to bytes 2k (its high nibble) and 2k + 1 (its low nibble).
    let spread = u64::from_le_bytes([b[0], 0, b[1], 0, b[2], 0, b[3], 0]);
    let nibbles = ((spread >> 4) & LOW) | ((spread & LOW) << 8);
    // '0' + n below 10, 'a' + n - 10 = '0' + n + 39 from 10 (n + 6 carries into bit 4).
    let above_9 = ((nibbles + 6 * ONES) >> 4) & ONES;
    nibbles + b'0' as u64 * ONES + 39 * above_9
}

/// Reads the ticket lines of a block file, with the checks of [`TicketCheck`] and, with the
/// seed, the replay.
pub(super) struct LineChecker<'a> {
    /// The CSV file, for messages.
    pub(super) name: &'a str,
    pub(super) tickets: &'a TicketCheck,
    pub(super) forms: bool,
    pub(super) replay: Option<&'a Replay>,
    /// Given the valid lines of each piece as it is checked (`report`).
    pub(super) observer: Option<&'a dyn PieceObserver>,
}

/// What reading the CSV measured.
pub(super) struct Scan {
    /// False if reading stopped at a line far longer than any ticket line.
    pub(super) complete: bool,
    pub(super) bytes: u64,
    pub(super) sha256: [u8; 32],
    pub(super) root: [u8; 32],
    pub(super) counts: Vec<u64>,
}

/// Pieces of the file read in one buffer.
struct Batch {
    /// The bytes read (only the pieces' ranges are to be read: the rest is stale or unread).
    text: Vec<u8>,
    pieces: Vec<Piece>,
}

/// Whole lines of the file, as the reader cut them.
struct Piece {
    /// Where the lines are in the batch's text, each ending with a line end (one is added to
    /// an unterminated last line).
    range: std::ops::Range<usize>,
    /// The number of its first line in the file (the header is line 1).
    first_line: u64,
    /// Its last line is the file's last and had no line end.
    unterminated: bool,
}

/// What the reader saw of the whole file.
struct ReadEnd {
    bytes: u64,
    sha256: [u8; 32],
    /// Lines read (an unterminated last one included).
    lines: u64,
    /// Why reading stopped before the end of the file, if it did.
    stopped: Option<String>,
}

/// A problem found in a piece, in file order.
enum Problem {
    /// About the file (header, line end): always listed.
    File(Found),
    /// About one ticket line: listed up to the report's limit, then counted.
    Line(Found),
}

/// The verdict on one piece.
struct Checked {
    tickets: u64,
    /// The piece starts at a multiple of [`PIECE_TICKETS`]: `merkle` is a subtree of the
    /// block's tree. Otherwise (after a piece cut short by [`PIECE_BYTES`]) its leaves are
    /// appended from `leaves` (the ticket hashes, in order).
    aligned: bool,
    merkle: MerkleRoot,
    leaves: Vec<[u8; 32]>,
    counts: Vec<u64>,
    problems: Vec<Problem>,
    forms: BTreeMap<(Decimal, String), u64>,
    /// The observer's part of the piece.
    observed: Option<PiecePart>,
    /// In the lines form, the piece rebuilt into the CSV's bytes (empty for a CSV).
    rebuilt: Vec<u8>,
}

impl LineChecker<'_> {
    /// Reads the CSV and checks every line (see the module's notes on the pipeline). Reads at
    /// most `expected` + 1 bytes (the manifest's size, and one more to see that the file
    /// grew), and stops at a line that runs past twice the longest ticket line.
    pub(super) fn scan(
        &self,
        csv: &std::path::Path,
        expected: u64,
        report: &mut BlockReport,
        progress: &dyn Progress,
    ) -> std::io::Result<Scan> {
        let file = DirectReader::open(csv, ReadMode::Auto)?;
        self.scan_from(file, Form::Csv, expected, report, progress)
    }

    /// [`LineChecker::scan`] of a block's bytes from `source` (a pack's member as it streams),
    /// in `form`, of which at most `expected + 1` bytes are read.
    pub(super) fn scan_from<R: Read + Send>(
        &self,
        source: R,
        form: Form,
        expected: u64,
        report: &mut BlockReport,
        progress: &dyn Progress,
    ) -> std::io::Result<Scan> {
        let file = source.take(expected.saturating_add(1));
        let mut merkle = MerkleRoot::new();
        let mut counts = vec![0; self.tickets.tiers.len()];
        let mut reader = Reader::new(file, self.tickets.max_line(), BATCH_BYTES);
        // Lines: the file's SHA-256 and size are those of the rebuilt pieces, in order (the
        // reader's are of the lines). A batch's rebuilt pieces are hashed beside the checks
        // of the next one, as the reader hashes a CSV.
        reader.hash_file = form == Form::Csv;
        let mut rebuilt_sha = Sha256::new();
        let mut rebuilt_bytes = 0u64;
        let mut rebuilt: Vec<Vec<u8>> = Vec::new();
        let mut spare = Vec::new();
        let mut batch = reader.batch(PIECES_PER_BATCH, Vec::new())?;
        while !batch.pieces.is_empty() {
            // Reading, hashing and cutting the next batch is one task beside the checks of
            // this one's pieces: on one thread they run one after the other; on more, the
            // thread that reads takes pieces to check once it is done.
            let spare_text = std::mem::take(&mut spare);
            let to_hash = std::mem::take(&mut rebuilt);
            let (next, checked) = rayon::join(
                || {
                    for text in &to_hash {
                        rebuilt_sha.update(text);
                    }
                    reader.batch(PIECES_PER_BATCH, spare_text)
                },
                || {
                    batch
                        .pieces
                        .par_iter()
                        .map(|piece| self.piece(&batch.text[piece.range.clone()], piece, form))
                        .collect::<Vec<Checked>>()
                },
            );
            for mut checked in checked {
                if form == Form::Lines {
                    let text = std::mem::take(&mut checked.rebuilt);
                    rebuilt_bytes += text.len() as u64;
                    rebuilt.push(text);
                }
                self.fold(checked, &mut merkle, &mut counts, report, progress);
            }
            spare = batch.text;
            batch = next?;
        }
        for text in &rebuilt {
            rebuilt_sha.update(text);
        }
        let mut end = reader.end.take().ok_or_else(|| {
            std::io::Error::other("internal error: the file was not read to its end")
        })?;
        if form == Form::Lines {
            end.bytes = rebuilt_bytes;
            end.sha256 = rebuilt_sha.finalize().into();
        }
        if let Some(problem) = end.stopped {
            report.problem(Found::in_file(
                Code::FileLongLine,
                self.name,
                format!("{} {problem}", self.name),
            ));
            return Ok(Scan {
                complete: false,
                bytes: end.bytes,
                sha256: [0; 32],
                root: [0; 32],
                counts,
            });
        }
        if end.lines == 0 {
            report.problem(Found::in_file(
                Code::FileEmpty,
                self.name,
                format!("{}: the file is empty", self.name),
            ));
        }
        Ok(Scan {
            complete: true,
            bytes: end.bytes,
            sha256: end.sha256,
            root: merkle.root(),
            counts,
        })
    }

    /// Adds a checked piece to the block's totals, in file order.
    fn fold(
        &self,
        checked: Checked,
        merkle: &mut MerkleRoot,
        counts: &mut [u64],
        report: &mut BlockReport,
        progress: &dyn Progress,
    ) {
        if !checked.aligned {
            merkle.extend(&checked.leaves);
        } else if !merkle.append(&checked.merkle) {
            // An aligned piece holds at most 2^10 tickets from a multiple of 2^10: never.
            report.problem(Found::in_file(
                Code::Internal,
                self.name,
                format!(
                    "{}: internal error: a piece of the file is not on a Merkle subtree boundary",
                    self.name
                ),
            ));
        }
        report.tickets += checked.tickets;
        for (total, n) in counts.iter_mut().zip(&checked.counts) {
            *total += n;
        }
        for (key, n) in checked.forms {
            *report.forms.entry(key).or_insert(0) += n;
        }
        if let (Some(observer), Some(part)) = (self.observer, checked.observed) {
            observer.fold(part);
        }
        for problem in checked.problems {
            match problem {
                Problem::File(text) => report.problem(text),
                Problem::Line(text) => report.line_problem(text),
            }
        }
        progress.add(checked.tickets);
    }

    /// Checks the lines of one piece, whose bytes are `text`, in `form`.
    fn piece(&self, text: &[u8], piece: &Piece, form: Form) -> Checked {
        match form {
            Form::Csv => self.piece_of(text, piece, None),
            Form::Lines => {
                let (rebuilt, ends, hashes) = rebuilt(text, piece, self.tickets.max_line());
                let mut checked = self.piece_of(&rebuilt, piece, Some((&ends, &hashes)));
                checked.rebuilt = rebuilt;
                if piece.unterminated {
                    // The line end the reader added: not the file's.
                    checked.rebuilt.pop();
                }
                let header = &text[..memchr::memchr(b'\n', text).unwrap_or(text.len())];
                if piece.first_line == 1 && header != LINES_HEADER.as_bytes() {
                    checked.problems.insert(
                        0,
                        Problem::File(Found::at_line(
                            Code::FileHeader,
                            self.name,
                            1,
                            format!(
                                "{} line 1: the header of its lines is {}, it must be '{LINES_HEADER}'",
                                self.name,
                                shown(header)
                            ),
                        )),
                    );
                }
                checked
            }
        }
    }

    /// Checks the lines of one piece of a CSV, whose bytes are `text`; `known`, where each of
    /// its lines ends and its hash up to its last comma (a line too long for a ticket line
    /// excepted), if they are known already.
    fn piece_of(
        &self,
        text: &[u8],
        piece: &Piece,
        known: Option<(&[usize], &[[u8; 32]])>,
    ) -> Checked {
        let first_ticket = piece.first_line.saturating_sub(2);
        let mut out = Checked {
            tickets: 0,
            aligned: first_ticket.is_multiple_of(PIECE_TICKETS),
            merkle: MerkleRoot::new(),
            leaves: Vec::new(),
            counts: vec![0; self.tickets.tiers.len()],
            problems: Vec::new(),
            forms: BTreeMap::new(),
            observed: None,
            rebuilt: Vec::new(),
        };
        let mut observed: Vec<CheckedLine<'_>> = Vec::new();
        if self.observer.is_some() {
            observed.reserve(PIECE_TICKETS as usize);
        }
        let mut start = 0;
        let found: Vec<usize>;
        let ends = match known {
            Some((ends, _)) => ends,
            None => {
                found = memchr::memchr_iter(b'\n', text).collect();
                &found
            }
        };
        let mut hashes = Vec::new();
        for (k, (line_no, &end)) in (piece.first_line..).zip(ends.iter()).enumerate() {
            // The hashes of the next LINE_GROUP lines, made together while they are in cache.
            let hash = match known {
                Some((_, known)) => known.get(k).unwrap_or(&[0; 32]),
                None => {
                    if k.is_multiple_of(LINE_GROUP) {
                        let group = &ends[k..(k + LINE_GROUP).min(ends.len())];
                        hashes = line_hashes(text, start, group, self.tickets.max_line());
                    }
                    &hashes[k % LINE_GROUP]
                }
            };
            let line = &text[start..end];
            start = end + 1;
            if piece.unterminated && start == text.len() {
                out.problems.push(Problem::File(Found::at_line(
                    Code::FileUnterminated,
                    self.name,
                    line_no,
                    format!(
                        "{} line {line_no}: the file does not end with a line end (truncated?)",
                        self.name
                    ),
                )));
            }
            if line_no == 1 {
                if line != CSV_HEADER.as_bytes() {
                    out.problems.push(Problem::File(Found::at_line(
                        Code::FileHeader,
                        self.name,
                        1,
                        format!(
                            "{} line 1: the header is {}, it must be '{CSV_HEADER}'",
                            self.name,
                            shown(line)
                        ),
                    )));
                }
            } else if let Some(valid) = self.line(line, line_no - 2, hash, &mut out) {
                if self.observer.is_some() {
                    observed.push(valid);
                }
            }
        }
        if out.aligned {
            out.merkle.extend(&out.leaves);
        }
        if let Some(observer) = self.observer {
            out.observed = Some(observer.piece(&observed));
        }
        out
    }

    /// Checks one ticket line; `index` is the ticket's index in the block, `hash` the SHA-256
    /// of the line up to its last comma ([`line_hashes`]). Gives the line back if it is valid.
    fn line<'l>(
        &self,
        line: &'l [u8],
        index: u64,
        hash: &[u8; 32],
        out: &mut Checked,
    ) -> Option<CheckedLine<'l>> {
        let mut seen = self
            .tickets
            .inspect_hashed(line, index, self.forms, Some(hash));
        if let (Some(replay), Some(layout)) = (self.replay, seen.layout) {
            replay.check(self.tickets, index, seen.tier, layout, &mut seen.problems);
        }
        out.leaves.push(seen.hash);
        out.tickets += 1;
        if let Some(tier) = seen.tier {
            out.counts[tier] += 1;
            if let Some(form) = seen.form {
                *out.forms
                    .entry((self.tickets.tiers[tier], form))
                    .or_insert(0) += 1;
            }
        }
        if !seen.problems.is_empty() {
            out.problems.push(Problem::Line(Found::ticket_line(
                Some(self.name),
                index.saturating_add(2),
                self.tickets.serial(index),
                &seen.problems,
            )));
            return None;
        }
        Some(CheckedLine {
            index,
            layout: seen.layout?,
            tier: seen.tier?,
        })
    }
}

/// A line up to its last comma (the whole line if it has none): what a ticket line's sha256
/// field is the hash of, when the line has its four fields.
fn hashed_part(line: &[u8]) -> &[u8] {
    &line[..memchr::memrchr(b',', line).unwrap_or(line.len())]
}

/// Lines of a piece hashed together.
const LINE_GROUP: usize = 64;

/// The SHA-256 of [`hashed_part`] of each line of `text` from `start` (ending at `ends`), all
/// hashed together. A line longer than `max_line` is not read (its hash is not used).
fn line_hashes(text: &[u8], mut start: usize, ends: &[usize], max_line: usize) -> Vec<[u8; 32]> {
    let parts: Vec<&[u8]> = ends
        .iter()
        .map(|&end| {
            let line = &text[start..end];
            start = end + 1;
            if line.len() > max_line {
                &[]
            } else {
                hashed_part(line)
            }
        })
        .collect();
    sha256::digest_many(&parts)
}

/// A piece of a block's lines form ([`Form::Lines`], whose bytes are `text`) rebuilt into the
/// CSV's bytes, where each of its lines ends there, and the SHA-256 of each of its ticket
/// lines (a zero hash for the header, for a line longer than `max_line`, which no ticket line
/// is, and for a last line the file does not end: such lines are kept as they are, and
/// refused as a CSV's would be). The first line of the file is the CSV's header whatever it
/// is (the caller refuses any other than `serial,prize,layout`).
fn rebuilt(text: &[u8], piece: &Piece, max_line: usize) -> (Vec<u8>, Vec<usize>, Vec<[u8; 32]>) {
    let mut lines: Vec<&[u8]> = Vec::with_capacity(PIECE_TICKETS as usize + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text) {
        lines.push(&text[start..end]);
        start = end + 1;
    }
    let header = piece.first_line == 1;
    let unterminated = piece.unterminated.then(|| lines.len().saturating_sub(1));
    let kept = |k: usize, line: &[u8]| {
        (header && k == 0) || line.len() > max_line || Some(k) == unterminated
    };
    let parts: Vec<&[u8]> = lines
        .iter()
        .enumerate()
        .map(|(k, &line)| if kept(k, line) { &[][..] } else { line })
        .collect();
    let mut hashes = sha256::digest_many(&parts);
    let mut out = Vec::with_capacity(text.len() + lines.len() * HASH_FIELD);
    let mut ends = Vec::with_capacity(lines.len());
    for (k, (&line, hash)) in lines.iter().zip(hashes.iter_mut()).enumerate() {
        if header && k == 0 {
            *hash = [0; 32];
            out.extend_from_slice(CSV_HEADER.as_bytes());
        } else if kept(k, line) {
            *hash = [0; 32];
            out.extend_from_slice(line);
        } else {
            out.extend_from_slice(line);
            out.push(b',');
            for bytes in hash.chunks_exact(4) {
                let word = hex_word([bytes[0], bytes[1], bytes[2], bytes[3]]);
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
        ends.push(out.len());
        out.push(b'\n');
    }
    (out, ends, hashes)
}

/// Bytes a ticket line's `,sha256` field takes.
const HASH_FIELD: usize = HASH_HEX + 1;

/// Reads `file`, hashes it, and cuts it into pieces of whole lines (the header and the first
/// [`PIECE_TICKETS`] ticket lines, then [`PIECE_TICKETS`] lines each, or fewer at a line end
/// past [`PIECE_BYTES`]), a batch at a time, straight into recycled buffers. Stops at a line
/// with no line end within [`MAX_LINE_READ`] bytes, or at an unterminated last line longer
/// than `max_line` (their bytes are not kept; the lines before are given), or when a signal
/// asks the program to stop (an error then: an interrupted scan proves nothing).
struct Reader<R> {
    file: R,
    max_line: usize,
    /// Bytes of a batch's buffer, at least (a buffer only grows past it if one piece cannot
    /// fit, which the limits on lines rule out at [`BATCH_BYTES`]).
    batch_bytes: usize,
    sha: Sha256,
    /// Whether `sha` hashes what is read (not for [`Form::Lines`], whose file is the rebuilt one).
    hash_file: bool,
    /// Bytes read.
    bytes: u64,
    /// The bytes read of the piece being filled, when a batch ended before it: they start
    /// the next batch's buffer.
    carry: Vec<u8>,
    /// The number of the first line of the piece being filled.
    first_line: u64,
    /// Whole lines read.
    lines: u64,
    /// Ticket lines read.
    tickets: u64,
    /// Bytes of the line being read, in the reads before the last one.
    line_len: usize,
    /// Where that line starts in the piece being filled.
    line_at: usize,
    /// How reading ended, once it has.
    end: Option<ReadEnd>,
}

impl<R: Read> Reader<R> {
    fn new(file: R, max_line: usize, batch_bytes: usize) -> Self {
        Reader {
            file,
            max_line,
            batch_bytes: batch_bytes.max(1),
            sha: Sha256::new(),
            hash_file: true,
            bytes: 0,
            carry: Vec::new(),
            first_line: 1,
            lines: 0,
            tickets: 0,
            line_len: 0,
            line_at: 0,
            end: None,
        }
    }

    /// Reads on into `text` (a spare buffer, or an empty one) until `want` pieces are cut, the
    /// buffer is full, or the file ends, and gives them (none once reading has ended: then
    /// [`Reader::end`] says how).
    fn batch(&mut self, want: usize, mut text: Vec<u8>) -> std::io::Result<Batch> {
        let mut pieces = Vec::with_capacity(want);
        if self.end.is_some() {
            return Ok(Batch { text, pieces });
        }
        // Bytes are read into the buffer's spare capacity, which is never zeroed: `read_to_end`
        // reads into uninitialized memory safely (zeroing the two buffers was 11 % of the
        // instructions of verifying small blocks).
        text.clear();
        text.reserve(self.batch_bytes.max(self.carry.len() + 1));
        text.extend_from_slice(&self.carry);
        let mut filled = self.carry.len();
        self.carry.clear();
        // Where the piece being filled starts in `text`.
        let mut piece_start = 0;
        let stop = MAX_LINE_READ.max(self.max_line);
        while pieces.len() < want {
            if crate::interrupt::requested().is_some() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "stopped by a signal",
                ));
            }
            if filled == text.capacity() {
                if piece_start > 0 {
                    break; // full: the piece being filled goes on in the next buffer
                }
                // One piece larger than the buffer (not with the sizes used): make room.
                text.reserve(filled);
            }
            // Up to `room` bytes (fewer only at the end of the file), within the capacity.
            let room = (text.capacity() - filled).min(READ_SIZE);
            let n = (&mut self.file).take(room as u64).read_to_end(&mut text)?;
            if n == 0 {
                if self.line_len > self.max_line {
                    self.stop_at(&text[piece_start..filled], &mut pieces, piece_start);
                    return Ok(Batch { text, pieces });
                }
                let mut unterminated = false;
                if self.line_len > 0 {
                    text.push(b'\n');
                    filled += 1;
                    unterminated = true;
                    self.lines += 1;
                }
                if filled > piece_start {
                    pieces.push(Piece {
                        range: piece_start..filled,
                        first_line: self.first_line,
                        unterminated,
                    });
                }
                self.end = Some(ReadEnd {
                    bytes: self.bytes,
                    sha256: std::mem::take(&mut self.sha).finalize().into(),
                    lines: self.lines,
                    stopped: None,
                });
                return Ok(Batch { text, pieces });
            }
            let read = &text[filled..filled + n];
            if self.hash_file {
                self.sha.update(read);
            }
            self.bytes += n as u64;
            let mut line_start = 0; // in `read`
            let mut too_long = false;
            for end in memchr::memchr_iter(b'\n', read) {
                if self.line_len + (end - line_start) > stop {
                    too_long = true;
                    break;
                }
                self.line_len = 0;
                line_start = end + 1;
                self.lines += 1;
                let at = filled + line_start; // in `text`
                self.line_at = at - piece_start;
                if self.lines == 1 {
                    continue; // the header rides with the first piece
                }
                self.tickets += 1;
                if self.tickets.is_multiple_of(PIECE_TICKETS) || self.line_at >= PIECE_BYTES {
                    pieces.push(Piece {
                        range: piece_start..at,
                        first_line: self.first_line,
                        unterminated: false,
                    });
                    piece_start = at;
                    self.first_line = self.lines + 1;
                    self.line_at = 0;
                }
            }
            if !too_long {
                self.line_len += n - line_start;
                too_long = self.line_len > stop;
            }
            filled += n;
            if too_long {
                self.stop_at(&text[piece_start..filled], &mut pieces, piece_start);
                return Ok(Batch { text, pieces });
            }
        }
        self.carry.extend_from_slice(&text[piece_start..filled]);
        Ok(Batch { text, pieces })
    }

    /// Stops at the line that starts at `line_at` in the piece being filled (`filling`, at
    /// `start` in the buffer), after the whole lines read: the lines before it are given,
    /// nothing of it is.
    fn stop_at(&mut self, filling: &[u8], pieces: &mut Vec<Piece>, start: usize) {
        let kept = self.line_at.min(filling.len());
        if kept > 0 {
            pieces.push(Piece {
                range: start..start + kept,
                first_line: self.first_line,
                unterminated: false,
            });
        }
        self.end = Some(ReadEnd {
            bytes: self.bytes,
            sha256: [0; 32],
            lines: self.lines,
            stopped: Some(format!(
                "line {}: longer than the longest line of this game ({} bytes); the rest of the file is not read",
                self.lines + 1,
                self.max_line
            )),
        });
    }
}

/// How the quick reading of a ticket line differs from the full one
/// ([`TicketCheck::readings_agree`]): the line, escaped, and the difference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}: {how}")]
pub struct ReadingsDiffer {
    /// The line, escaped.
    pub line: String,
    /// What differs.
    pub how: Difference,
}

/// What differs between the quick and the full reading of a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Difference {
    /// The quick reading, with and without the line's hash made beforehand.
    #[error("the quick reading differs with the hash made beforehand")]
    QuickWithHash,
    /// The full reading, with and without the line's hash made beforehand.
    #[error("the full reading differs with the hash made beforehand")]
    FullWithHash,
    /// The quick reading refuses a line the full one finds no fault in.
    #[error("the quick reading refuses a valid line")]
    QuickRefusesValid,
    /// The quick reading accepts a line the full one refuses (its problems, as `{:?}` writes
    /// them).
    #[error("the quick reading accepts a line the full one refuses: {0}")]
    QuickAcceptsRefused(String),
    /// Both accept the line, and see it differently.
    #[error("the quick and full readings see different tiers, hashes, layouts or forms")]
    Seen,
}

impl TicketCheck {
    /// Whether the quick reading of `line` (the ticket at `index`) agrees with the full one:
    /// it reads exactly the lines the full reading finds no fault in, and sees in them the same
    /// tier, hash, layout and form, with the line's hash made beforehand or not. `Err` says how
    /// they differ. What the property tests of this file and the `csv_line` fuzz target assert.
    pub fn readings_agree(&self, line: &[u8], index: u64) -> Result<(), ReadingsDiffer> {
        let full = self.inspect_fully(line, index, true, None);
        let quick = self.quick(line, index, true, None);
        // The same with the hash of the line to its last comma made beforehand, as a piece's
        // lines are hashed together.
        let known = sha256::digest(hashed_part(line));
        let quick_known = self.quick(line, index, true, Some(&known));
        let full_known = self.inspect_fully(line, index, true, Some(&known));
        type Seen<'a> = Option<(Option<usize>, [u8; 32], Option<&'a [u8]>, Option<String>)>;
        fn seen<'a>(q: &Option<Inspection<'a>>) -> Seen<'a> {
            q.as_ref()
                .map(|q| (q.tier, q.hash, q.layout, q.form.clone()))
        }
        let differs = |how: Difference| {
            Err(ReadingsDiffer {
                line: shown(line),
                how,
            })
        };
        if seen(&quick) != seen(&quick_known) {
            return differs(Difference::QuickWithHash);
        }
        if full_known.problems != full.problems {
            return differs(Difference::FullWithHash);
        }
        match quick {
            None if full.problems.is_empty() => differs(Difference::QuickRefusesValid),
            None => Ok(()),
            Some(_) if !full.problems.is_empty() => differs(Difference::QuickAcceptsRefused(
                format!("{:?}", full.problems),
            )),
            Some(q)
                if (q.tier, q.hash, q.layout, &q.form)
                    != (full.tier, full.hash, full.layout, &full.form) =>
            {
                differs(Difference::Seen)
            }
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanic::LayoutRng;
    use rand::SeedableRng;

    /// Block 7 of emission 3 of La ruche d'or at 2 €.
    fn setup() -> (Game, Stake, TicketCheck) {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = game.stake(Decimal::from(2)).unwrap().clone();
        let check = TicketCheck::new(&game, &stake, 3, 7);
        (game, stake, check)
    }

    /// A ticket line as emit writes it (line end excluded).
    fn line(serial: &str, prize: &str, layout: &str) -> Vec<u8> {
        let body = format!("{serial},{prize},{layout}");
        let hash = hex::encode(Sha256::digest(body.as_bytes()));
        format!("{body},{hash}").into_bytes()
    }

    fn synthesized(_game: &Game, stake: &Stake, prize: Decimal, seed: u64) -> String {
        let synth = stake.synthesizer().unwrap();
        let mut layout = Vec::new();
        synth
            .synthesize(prize, &mut LayoutRng::seed_from_u64(seed), &mut layout)
            .unwrap();
        String::from_utf8(layout).unwrap()
    }

    #[track_caller]
    fn refused(check: &TicketCheck, line: &[u8], index: u64, needle: &str) {
        match check.check(line, index) {
            Ok(()) => panic!("{} should be refused", String::from_utf8_lossy(line)),
            Err(m) => assert!(
                m.message.contains(needle),
                "{m:?} should mention {needle:?}"
            ),
        }
    }

    /// The hashes a piece makes together are those each line's check would make alone, and
    /// so are the verdicts: for good lines, lines of 3 or 5 fields, without a comma, empty,
    /// too long, and with a wrong hash.
    #[test]
    fn a_piece_hashes_its_lines_as_each_check_would() {
        let (game, stake, check) = setup();
        let layout = synthesized(&game, &stake, Decimal::from(20), 1);
        let serial = "ruche-or-200-0003-00007-0000042";
        let good = line(serial, "20", &layout);
        let mut wrong_hash = good.clone();
        let last = wrong_hash.len() - 1;
        wrong_hash[last] ^= 1;
        let lines: Vec<Vec<u8>> = vec![
            good.clone(),
            wrong_hash,
            format!("{serial},20,{layout}").into_bytes(),
            [&good[..], b",extra"].concat(),
            b"no comma at all".to_vec(),
            Vec::new(),
            vec![b','; check.max_line() + 1],
            [&good[..], &good[..]].concat(),
        ];
        let mut text = Vec::new();
        let mut ends = Vec::new();
        for l in &lines {
            text.extend_from_slice(l);
            ends.push(text.len());
            text.push(b'\n');
        }
        let hashes = line_hashes(&text, 0, &ends, check.max_line());
        assert_eq!(hashes.len(), lines.len());
        for (l, hash) in lines.iter().zip(&hashes) {
            let alone = check.inspect(l, 42, true);
            let together = check.inspect_hashed(l, 42, true, Some(hash));
            let shown = String::from_utf8_lossy(l);
            assert_eq!(together.hash, alone.hash, "{shown}");
            assert_eq!(together.problems, alone.problems, "{shown}");
        }
        assert!(check
            .inspect_hashed(&good, 42, true, Some(&hashes[0]))
            .problems
            .is_empty());
    }

    #[test]
    fn valid_ticket_lines_pass() {
        let (game, stake, check) = setup();
        for (i, tier) in stake.tiers().into_iter().enumerate() {
            let layout = synthesized(&game, &stake, tier, i as u64);
            let serial = format!("ruche-or-200-0003-00007-{:07}", 40 + i);
            let ok = line(&serial, &canonical(tier), &layout);
            assert_eq!(check.check(&ok, 40 + i as u64), Ok(()));
        }
    }

    #[test]
    fn every_rule_of_a_ticket_line_is_checked() {
        let (game, stake, check) = setup();
        let layout = synthesized(&game, &stake, Decimal::from(20), 1);
        let serial = "ruche-or-200-0003-00007-0000042";
        // The serial is the index's, in this block of this emission.
        refused(
            &check,
            &line(serial, "20", &layout),
            41,
            "line 43 (ruche-or-200-0003-00007-0000041): serial 'ruche-or-200-0003-00007-0000042'",
        );
        refused(
            &check,
            &line("ruche-or-200-0001-00007-0000042", "20", &layout),
            42,
            "serial",
        );
        // The prize column is a prize of the stake and the one the layout wins.
        refused(
            &check,
            &line(serial, "21", &layout),
            42,
            "prize '21' is not a prize",
        );
        refused(
            &check,
            &line(serial, "4", &layout),
            42,
            "the layout wins 20 € but the prize column says 4 €",
        );
        // The hash covers serial,prize,layout as written.
        let mut tampered = line(serial, "20", &layout);
        let at = serial.len() + 5;
        tampered[at] = if tampered[at] == b'P' { b'A' } else { b'P' };
        refused(
            &check,
            &tampered,
            42,
            "is not the SHA-256 of serial,prize,layout",
        );
        // The layout is valid.
        refused(&check, &line(serial, "20", "20:PPP"), 42, "invalid layout");
        // Cut in the middle of the layout (wherever the generator makes it end): 3 fields.
        refused(
            &check,
            &line(serial, "20", &layout)[..serial.len() + 4 + layout.len() / 2],
            42,
            "fields, a ticket line has 4",
        );
        // No ticket beyond the block's size.
        let last = format!("ruche-or-200-0003-00007-{:07}", game.block_size);
        refused(
            &check,
            &line(&last, "20", &layout),
            game.block_size,
            "holds 900000 tickets",
        );
    }

    #[test]
    fn a_line_longer_than_the_longest_ticket_line_is_refused_unread() {
        let (_, _, check) = setup();
        // The longest prize and the longest layout the mechanic accepts make the longest line.
        let serial = "ruche-or-200-0003-00007-0000042";
        let layout =
            "20000:FFFF/20000:FFFFF/20000:FFFFFF/20000:FFFFFFF/20000:FFFFFF/20000:FFFFF/20000:FFFF";
        let main = layout.replacen("FFFF", "EEEF", 1);
        let longest = line(
            serial,
            "20000",
            &format!("{main}|{layout}|{layout}|{layout}"),
        );
        assert_eq!(longest.len(), check.max_line());
        // It is read (and here refused for its prize, not for its length).
        let said = check.check(&longest, 42).unwrap_err().message;
        assert!(!said.contains("longer than"), "{said}");
        assert!(said.contains("the layout wins 0 €"), "{said}");
        let mut long = longest.clone();
        long.push(b'F');
        refused(
            &check,
            &long,
            42,
            &format!(
                "{} bytes, longer than the longest ticket line of this game ({} bytes)",
                check.max_line() + 1,
                check.max_line()
            ),
        );
    }

    /// Both readings of a line: the quick one accepts exactly what the full one finds no fault
    /// in, and then sees the same tier, hash and layout.
    #[track_caller]
    fn readings_agree(check: &TicketCheck, line: &[u8], index: u64) {
        if let Err(e) = check.readings_agree(line, index) {
            panic!("{e}");
        }
    }

    #[test]
    fn the_quick_reading_accepts_exactly_the_lines_the_full_one_finds_valid() {
        let (game, stake, check) = setup();
        let serial = "ruche-or-200-0003-00007-0000042";
        let layout = synthesized(&game, &stake, Decimal::from(20), 1);
        let ok = line(serial, "20", &layout);
        assert!(check.quick(&ok, 42, false, None).is_some());
        let body = format!("{serial},20,{layout}");
        let hash = hex::encode(Sha256::digest(body.as_bytes()));
        let mut cases: Vec<Vec<u8>> = vec![
            ok.clone(),
            Vec::new(),
            b",,,".to_vec(),
            // Missing fields, extra commas, commas in the wrong field.
            format!("{serial},20,{layout}").into_bytes(),
            format!("{serial},20,{hash}").into_bytes(),
            format!("{serial},20,{layout},{hash},").into_bytes(),
            format!("{serial},,20,{layout},{hash}").into_bytes(),
            format!(",{serial},20,{layout},{hash}").into_bytes(),
            line(serial, "20", &format!("{layout},")),
            line(serial, "20", &layout.replacen('/', ",", 1)),
            line(serial, "2,0", &layout),
            line(&format!("{serial},"), "20", &layout),
            line(serial, "", &layout),
            line(serial, "20", ""),
            // The hash in capitals, short, long, of something else.
            format!("{body},{}", hash.to_uppercase()).into_bytes(),
            format!("{body},{}", &hash[..63]).into_bytes(),
            format!("{body},{hash}0").into_bytes(),
            format!("{body},0{hash}").into_bytes(),
            // Prizes that are not tiers, or not the layout's; long prize texts.
            line(serial, "4", &layout),
            line(serial, "20.0", &layout),
            line(serial, "020", &layout),
            line(serial, "123456789012345678", &layout),
            line(serial, &"2".repeat(15), &layout),
            // Serials of other tickets, blocks, lengths.
            line("ruche-or-200-0003-00007-0000043", "20", &layout),
            line("ruche-or-200-0003-00007-000042", "20", &layout),
            line("ruche-or-200-0003-00007-00000042", "20", &layout),
            line("ruche-or-200-0003-00008-0000042", "20", &layout),
            line("", "20", &layout),
            // Bytes that are not UTF-8, or not ASCII, anywhere.
            line(serial, "20", &format!("{layout}\u{e9}")),
            [&ok[..5], b"\xff", &ok[6..]].concat(),
            [
                &ok[..serial.len() + 4],
                b"\xff\xfe",
                &ok[serial.len() + 6..],
            ]
            .concat(),
        ];
        // Every byte of the valid line changed, and every length it can be cut to.
        for at in 0..ok.len() {
            for to in [b',', b'0', b'P', b'/', b'a', b'A', 0, 0x80, 0xff] {
                let mut changed = ok.clone();
                changed[at] = to;
                cases.push(changed);
            }
            cases.push(ok[..at].to_vec());
            cases.push([&ok[..at], &ok[at + 1..]].concat());
        }
        // A line too long to be a ticket line, and one just as long as the longest.
        cases.push([&ok[..], &vec![b'F'; check.max_line()]].concat());
        for case in &cases {
            readings_agree(&check, case, 42);
        }
        // A valid line at the wrong index, or past the block's end.
        readings_agree(&check, &ok, 41);
        let last = format!("ruche-or-200-0003-00007-{:07}", game.block_size);
        readings_agree(&check, &line(&last, "20", &layout), game.block_size);
        // Every tier of every game, losers included.
        for id in ["ruche-or", "maxi-ruche-or", "annee-chance"] {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                let check = TicketCheck::new(&game, stake, 1, 1);
                for (i, tier) in stake.tiers().into_iter().enumerate() {
                    let layout = synthesized(&game, stake, tier, i as u64);
                    let serial = format!("{}{:07}", check.prefix, i);
                    let ok = line(&serial, &canonical(tier), &layout);
                    let seen = check.quick(&ok, i as u64, false, None);
                    assert_eq!(seen.map(|s| s.tier), Some(Some(i)), "{id} {tier}");
                    readings_agree(&check, &ok, i as u64);
                }
            }
        }
    }

    #[test]
    fn hex_is_compared_as_hex_encode_writes_it() {
        let mut hash = [0u8; 32];
        for round in 0..300u32 {
            for (i, b) in hash.iter_mut().enumerate() {
                *b = (round as u8).wrapping_mul(37).wrapping_add(i as u8 * 11) ^ (round >> 3) as u8;
            }
            if round == 0 {
                hash = [0xff; 32];
            }
            let text = hex::encode(hash).into_bytes();
            assert!(is_hex_of(&text, &hash), "{}", hex::encode(hash));
            for at in 0..text.len() {
                let mut wrong = text.clone();
                for to in [b'0', b'9', b'a', b'f', b'A', b'F', b'g', b':', b'`'] {
                    wrong[at] = to;
                    assert_eq!(is_hex_of(&wrong, &hash), wrong == text, "{at} {to}");
                }
            }
            assert!(
                !is_hex_of(&text.to_ascii_uppercase(), &hash)
                    || !text.iter().any(u8::is_ascii_alphabetic)
            );
            assert!(!is_hex_of(&text[..63], &hash));
            assert!(!is_hex_of(&[&text[..], b"0"].concat(), &hash));
        }
    }

    #[test]
    fn the_text_before_a_comma_is_packed_one_to_one() {
        let packed = packed_before_comma;
        let rest = b"PPPPPPPPPPPPPPPPPPPP";
        for text in [&b"0"[..], b"20", b"0.5", b"123456789012345"] {
            let with_rest = [text, b",", rest].concat();
            assert_eq!(
                packed(&with_rest),
                Some((packed_text(text).unwrap(), text.len()))
            );
        }
        for text in [
            &b",0,PPPPPPPPPPPPPPPP"[..],
            b"1234567890123456,PPPP",
            b"0123456789abcdef0",
            b"0,1",
        ] {
            assert_eq!(packed(text), None, "{}", String::from_utf8_lossy(text));
        }
        // Distinct texts, distinct keys, whatever their bytes (a 0 byte is not the end).
        assert_ne!(packed_text(b"1"), packed_text(b"1\0"));
        assert_ne!(packed_text(b"\xff"), packed_text(b"\xff\xff"));
        assert_eq!(
            packed(&[b"1\0,", &rest[..]].concat()),
            Some((packed_text(b"1\0").unwrap(), 2))
        );
        assert_eq!(
            packed(&[b"\xe9\x80,", &rest[..]].concat()),
            Some((packed_text(b"\xe9\x80").unwrap(), 2))
        );
        assert_eq!(packed_text(b""), None);
        assert_eq!(packed_text(&[b'1'; 16]), None);
    }

    /// Gives its bytes a few at a time, each read a different length.
    struct Dribble<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.step = self.step % 13 + 1;
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// A piece as the reader gave it, its bytes copied out of the batch.
    struct CutPiece {
        text: Vec<u8>,
        first_line: u64,
        unterminated: bool,
    }

    /// Runs the reader on `bytes` (read in pieces of `step`-varying sizes, or whole when `step`
    /// is 0) with batch buffers of the size used, and with small ones (full before 3 pieces
    /// are cut, or smaller than a piece); returns the pieces it sent and its end, checking
    /// that every buffer size gives the same.
    fn cut(bytes: &[u8], max_line: usize, step: usize) -> (Vec<CutPiece>, ReadEnd) {
        fn all<R: Read>(mut reader: Reader<R>) -> (Vec<CutPiece>, ReadEnd) {
            let mut pieces = Vec::new();
            // Buffers are recycled, stale bytes and all, as the scan recycles them.
            let mut spare = vec![b'#'; 10];
            loop {
                let batch = reader.batch(3, std::mem::take(&mut spare)).unwrap();
                if batch.pieces.is_empty() {
                    break;
                }
                pieces.extend(batch.pieces.iter().map(|p| CutPiece {
                    text: batch.text[p.range.clone()].to_vec(),
                    first_line: p.first_line,
                    unterminated: p.unterminated,
                }));
                spare = batch.text;
            }
            (pieces, reader.end.unwrap())
        }
        let run = |batch_bytes| {
            if step == 0 {
                all(Reader::new(bytes, max_line, batch_bytes))
            } else {
                all(Reader::new(Dribble { bytes, step }, max_line, batch_bytes))
            }
        };
        let (pieces, end) = run(BATCH_BYTES);
        for small in [1, 1000, 100_000] {
            let (other, other_end) = run(small);
            assert_eq!(other.len(), pieces.len(), "batch of {small} bytes");
            for (a, b) in other.iter().zip(&pieces) {
                assert!(a.text == b.text && a.first_line == b.first_line, "{small}");
                assert_eq!(a.unterminated, b.unterminated, "{small}");
            }
            assert_eq!(&other_end.stopped, &end.stopped);
            assert_eq!(other_end.lines, end.lines);
            if end.stopped.is_none() {
                // (Reading that stops has read as far as its reads went: the bytes vary.)
                assert_eq!((other_end.bytes, other_end.sha256), (end.bytes, end.sha256));
            }
        }
        (pieces, end)
    }

    /// A file of a header and `n` ticket-like lines of varying lengths, `long` more bytes
    /// every seventh line.
    fn file_with(n: usize, long: usize) -> Vec<u8> {
        let mut text = b"serial,prize,layout,sha256\n".to_vec();
        for i in 0..n {
            let extra = if i % 7 == 3 { long } else { 0 };
            text.extend_from_slice(format!("{i},{}\n", "x".repeat(i % 50 + extra)).as_bytes());
        }
        text
    }

    fn file(n: usize) -> Vec<u8> {
        file_with(n, 0)
    }

    /// The CSV a lines form maps to (docs/FORMAT.md "Emission pack"), written here from the
    /// format's words: the CSV's header for the lines' header, and after each other line of at
    /// most `max_line` bytes `,` and the SHA-256 of the line in lowercase hex.
    fn csv_of_lines(lines: &[u8], max_line: usize) -> Vec<u8> {
        let mut csv = Vec::new();
        let mut rest = lines;
        let mut first = true;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let line = &rest[..end];
            if first && line == LINES_HEADER.as_bytes() {
                csv.extend_from_slice(CSV_HEADER.as_bytes());
            } else if first || line.len() > max_line {
                csv.extend_from_slice(line);
            } else {
                csv.extend_from_slice(line);
                csv.push(b',');
                csv.extend_from_slice(hex::encode(Sha256::digest(line)).as_bytes());
            }
            csv.push(b'\n');
            rest = &rest[end + 1..];
            first = false;
        }
        csv.extend_from_slice(rest); // an unterminated last line: never a valid CSV's
        csv
    }

    /// What a scan saw, in one comparable value.
    fn scanned(check: &TicketCheck, bytes: &[u8], form: Form) -> String {
        let checker = LineChecker {
            name: "block-00007.csv",
            tickets: check,
            forms: true,
            replay: None,
            observer: None,
        };
        let mut report = BlockReport::default();
        let source = Dribble { bytes, step: 0 };
        let scan = checker
            .scan_from(
                source,
                form,
                1 << 30,
                &mut report,
                &crate::progress::NoProgress,
            )
            .unwrap();
        format!(
            "complete {} bytes {} sha256 {} root {} counts {:?} tickets {} forms {:?} problems {:?} unlisted {}",
            scan.complete,
            scan.bytes,
            hex::encode(scan.sha256),
            hex::encode(scan.root),
            scan.counts,
            report.tickets,
            report.forms,
            report.problems,
            report.unlisted
        )
    }

    /// `verify` of a pack's lines sees exactly what `verify` of the CSV they map to sees: the
    /// same size, SHA-256, Merkle root, counts and problems, for a block of lines over several
    /// pieces and batches as `emit` writes them, and for each way a hostile lines member can
    /// differ (a prize changed, lines removed, added, empty or too long, another header, a
    /// last line without its end).
    #[test]
    fn lines_are_checked_as_the_csv_they_map_to_would_be() {
        let (game, stake, check) = setup();
        let mut lines = format!("{LINES_HEADER}\n").into_bytes();
        let tiers = [Decimal::ZERO, Decimal::from(2), Decimal::from(20)];
        for index in 0..2_600u64 {
            let prize = tiers[(index % 3) as usize];
            let layout = synthesized(&game, &stake, prize, index);
            let serial = check.serial(index);
            lines.extend_from_slice(format!("{serial},{},{layout}\n", canonical(prize)).as_bytes());
        }
        let max = check.max_line();
        let csv = csv_of_lines(&lines, max);
        // The mapping written above is the one the pack's writer undoes: a CSV as emit writes
        // its lines.
        assert!(csv.starts_with(format!("{CSV_HEADER}\n").as_bytes()));
        assert_eq!(csv.len(), lines.len() + 7 + 65 * 2_600);
        let valid = scanned(&check, &csv, Form::Csv);
        assert!(valid.contains("problems [] unlisted 0"), "{valid}");
        assert_eq!(scanned(&check, &lines, Form::Lines), valid);

        let line_at = |text: &[u8], n: usize| -> std::ops::Range<usize> {
            let mut start = 0;
            for _ in 0..n {
                start += text[start..].iter().position(|&b| b == b'\n').unwrap() + 1;
            }
            let end = start + text[start..].iter().position(|&b| b == b'\n').unwrap();
            start..end
        };
        let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
        let mut prize = lines.clone();
        let at = line_at(&prize, 1_500).start + check.serial(0).len() + 1;
        prize[at] = if prize[at] == b'2' { b'0' } else { b'2' };
        cases.push(("a prize changed", prize));
        let mut removed = lines.clone();
        removed.drain(line_at(&lines, 1_025).start..line_at(&lines, 1_027).start);
        cases.push(("two lines removed", removed));
        let mut added = lines.clone();
        let copy = lines[line_at(&lines, 10)].to_vec();
        let at = line_at(&added, 2_000).start;
        added.splice(at..at, [&copy[..], b"\n"].concat());
        cases.push(("a line added", added));
        let mut empty = lines.clone();
        let at = line_at(&empty, 700).start;
        empty.insert(at, b'\n');
        cases.push(("an empty line", empty));
        let mut long = lines.clone();
        let at = line_at(&long, 300).start;
        long.splice(at..at, [&vec![b'A'; max + 1][..], b"\n"].concat());
        cases.push(("a line too long", long));
        let mut edge = lines.clone();
        let at = line_at(&edge, 301).end;
        edge.splice(at..at, vec![b'A'; max - line_at(&lines, 301).len() - 10]);
        cases.push(("a line too long once its hash is added", edge));
        let mut unterminated = lines.clone();
        unterminated.pop();
        cases.push(("no end to the last line", unterminated));
        for (case, bytes) in cases {
            let as_csv = scanned(&check, &csv_of_lines(&bytes, max), Form::Csv);
            assert!(
                !as_csv.contains("problems [] unlisted 0"),
                "{case}: {as_csv}"
            );
            assert_eq!(scanned(&check, &bytes, Form::Lines), as_csv, "{case}");
        }
        // No header but the lines' maps to the CSV's: another one is refused, the CSV's own
        // among them, and nothing else is found.
        let wanted = format!("{:?}", BlockReport::default().problems);
        for header in [CSV_HEADER, "serial,prize", ""] {
            let mut other = lines.clone();
            other.splice(0..LINES_HEADER.len(), header.bytes());
            let seen = scanned(&check, &other, Form::Lines);
            let (before, problems) = seen.split_once("problems ").unwrap();
            assert_eq!(before, valid.split_once("problems ").unwrap().0, "{header}");
            assert!(
                problems.starts_with("[Problem { code: FileHeader"),
                "{seen}"
            );
            assert!(
                problems.contains("it must be 'serial,prize,layout'"),
                "{seen}"
            );
            assert_eq!(problems.matches("code:").count(), 1, "{seen}");
            assert_ne!(problems, wanted);
        }
    }

    #[test]
    fn the_reader_cuts_whole_lines_into_pieces_of_1024_tickets_whatever_the_reads() {
        for n in [0usize, 1, 1023, 1024, 1025, 3000] {
            let text = file(n);
            for step in [0, 1] {
                let (pieces, end) = cut(&text, 100, step);
                assert_eq!(end.stopped, None);
                assert_eq!(end.bytes, text.len() as u64);
                assert_eq!(end.sha256, <[u8; 32]>::from(Sha256::digest(&text)));
                assert_eq!(end.lines, n as u64 + 1);
                let joined: Vec<u8> = pieces.iter().flat_map(|p| p.text.clone()).collect();
                assert_eq!(joined, text, "n {n}, step {step}");
                let mut first_line = 1;
                for (k, piece) in pieces.iter().enumerate() {
                    assert_eq!(piece.first_line, first_line);
                    assert!(!piece.unterminated);
                    let lines = memchr::memchr_iter(b'\n', &piece.text).count() as u64;
                    let tickets = lines - u64::from(k == 0);
                    if k + 1 < pieces.len() {
                        assert_eq!(tickets, PIECE_TICKETS, "n {n}, piece {k}");
                    }
                    first_line += lines;
                }
            }
        }
        // Long lines: pieces also end past PIECE_BYTES, and always at multiples of
        // PIECE_TICKETS tickets, so that the pieces after a short one are aligned again.
        let text = file_with(3000, 20_000);
        let (pieces, end) = cut(&text, 100, 0);
        assert_eq!(end.stopped, None);
        let joined: Vec<u8> = pieces.iter().flat_map(|p| p.text.clone()).collect();
        assert_eq!(joined, text);
        let mut tickets = 0u64;
        let mut ends = Vec::new();
        for (k, piece) in pieces.iter().enumerate() {
            let lines = memchr::memchr_iter(b'\n', &piece.text).count() as u64;
            assert!(piece.text.len() < PIECE_BYTES + 20_100, "piece {k}");
            tickets += lines - u64::from(k == 0);
            ends.push(tickets);
        }
        assert!(pieces.len() > 30, "{}", pieces.len());
        assert!(ends.contains(&1024) && ends.contains(&2048), "{ends:?}");
    }

    #[test]
    fn the_reader_marks_a_last_line_without_line_end_and_stops_at_a_runaway_line() {
        // No line end at the end: one is added, and the piece says so.
        let mut text = file(5);
        text.pop();
        for step in [0, 1] {
            let (pieces, end) = cut(&text, 100, step);
            assert_eq!(end.lines, 6);
            assert_eq!(end.stopped, None);
            let last = pieces.last().unwrap();
            assert!(last.unterminated);
            assert!(last.text.ends_with(b"xxxx\n"));
        }
        // A line with no line end within MAX_LINE_READ bytes stops the reading there, with or
        // without a line end after that; the lines before it are sent, nothing of it is.
        for terminated in [false, true] {
            let mut text = file(1500);
            let before = text.len();
            text.extend(std::iter::repeat_n(b'y', MAX_LINE_READ + 1));
            if terminated {
                text.extend_from_slice(b"\n1,2\n");
            }
            for step in [0, 1] {
                let (pieces, end) = cut(&text, 100, step);
                let stopped = end.stopped.unwrap();
                assert!(
                    stopped.starts_with(
                        "line 1502: longer than the longest line of this game (100 bytes)"
                    ),
                    "{stopped}"
                );
                let joined: Vec<u8> = pieces.iter().flat_map(|p| p.text.clone()).collect();
                assert_eq!(joined, text[..before], "step {step}");
            }
        }
        // Up to MAX_LINE_READ bytes, a line that ends is read (and refused line by line).
        let mut text = file(3);
        text.extend(std::iter::repeat_n(b'y', MAX_LINE_READ));
        text.push(b'\n');
        let (_, end) = cut(&text, 100, 0);
        assert_eq!((end.stopped, end.lines), (None, 5));
        // An unterminated last line longer than the longest line stops the reading too.
        let mut text = file(3);
        text.extend(std::iter::repeat_n(b'y', 101));
        let (pieces, end) = cut(&text, 100, 0);
        assert!(end.stopped.unwrap().starts_with("line 5: longer"));
        let joined: Vec<u8> = pieces.iter().flat_map(|p| p.text.clone()).collect();
        assert_eq!(joined, file(3));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(50_000))]

        /// verify's quick reading of a ticket line against its full reading, for every stake
        /// of every built-in game, on lines of changed layouts ([`changed`]) with the prize
        /// column the layout's prize, another tier or other text, the serial of this ticket or
        /// of a neighbour, the hash right or not, and then a byte of the line changed or not:
        /// the quick reading accepts exactly the lines the full one finds no fault in, and then
        /// sees the same tier, hash, layout and form ([`readings_agree`]).
        #[test]
        fn the_quick_line_reading_agrees_with_the_full_one_on_changed_lines(
            which in proptest::sample::select((0..crate::mechanic::changed::stakes().len()).collect::<Vec<_>>()),
            seed in proptest::prelude::any::<u64>(),
            prize_kind in 0u8..4,
            serial_off in 0u8..8,
            hash_right in proptest::prelude::any::<bool>(),
            edit in proptest::option::of((proptest::prelude::any::<proptest::sample::Index>(), proptest::prelude::any::<u8>())),
        ) {
            use crate::mechanic::changed;
            let layouts = &changed::stakes()[which];
            let stake = layouts.stake();
            let check = TicketCheck::new(&layouts.game, stake, 1, 1);
            let layout = changed::changed(layouts, seed);
            let tiers = stake.tiers();
            let prize: Vec<u8> = match prize_kind {
                0 | 1 => match stake.decoder().decode(&layout) {
                    Ok(p) => canonical(p).into_bytes(),
                    Err(_) => b"0".to_vec(),
                },
                2 => canonical(tiers[(seed % tiers.len() as u64) as usize]).into_bytes(),
                _ => format!("{}.0", seed % 7).into_bytes(),
            };
            let index = seed % 1000;
            // Mostly this ticket's serial; else the next one's.
            let serial = check.serial(index + u64::from(serial_off == 0));
            let mut line = [serial.as_bytes(), b",", &prize, b",", &layout].concat();
            let hash = if hash_right {
                hex::encode(Sha256::digest(&line))
            } else {
                hex::encode(Sha256::digest(&layout))
            };
            line.push(b',');
            line.extend_from_slice(hash.as_bytes());
            if let Some((at, byte)) = edit {
                let i = at.index(line.len());
                line[i] = byte;
            }
            readings_agree(&check, &line, index);
        }
    }
}
