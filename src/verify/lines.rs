//! The ticket lines of a block: the checks of one line ([`TicketCheck`]), and the scan of a
//! whole file as a pipeline.
//!
//! The file is read, hashed and cut into pieces of 2^10 ticket lines a batch at a time; rayon
//! workers check whole pieces in parallel (each line, its hash, the piece's Merkle subtree,
//! its prize counts), and the pieces are folded in order. Reading the next batch is one more
//! task beside the checks of the current one (`rayon::join`), not a thread of its own: so what
//! only one thread can do (reading, the file's SHA-256, finding line ends) overlaps the checks,
//! and `--threads N` means N threads in all (with one, everything runs in turn on it). Piece
//! buffers are reused batch after batch: memory stays a few megabytes whatever the block size.

use super::observe::{CheckedLine, PieceObserver, PiecePart};
use super::replay::Replay;
use super::BlockReport;
use crate::block::merkle::MerkleRoot;
use crate::block::{self, sha256, CSV_HEADER};
use crate::game::{Game, Stake};
use crate::mechanic::Decoder;
use crate::money::{canonical, cents, from_cents};
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
/// Pieces checked in parallel at a time while the next batch is read: at least this many are
/// cut before a batch is checked (two batches, a dozen megabytes, are held at once).
const PIECES_PER_BATCH: usize = 32;
/// Bytes read at a time.
const READ_SIZE: usize = 1 << 20;
/// Reading stops at a line with no line end within this many bytes (a longer line that does
/// end is refused as a line, undecoded).
const MAX_LINE_READ: usize = 512 << 10;

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
}

/// What one ticket line showed.
pub(super) struct Inspection<'l> {
    /// The prize tier of the prize column, if it is one.
    pub(super) tier: Option<usize>,
    /// SHA-256 of `serial,prize,layout` (of the whole line if it has not four fields; zero if
    /// it is too long to be a ticket line).
    pub(super) hash: [u8; 32],
    /// Every rule the line breaks (empty on a valid line: no allocation).
    pub(super) problems: Vec<String>,
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
    /// stake; fails only if the game's mechanic cannot read this stake.
    pub fn new(game: &Game, stake: &Stake, emission: u32, block: u32) -> Result<Self, String> {
        let decoder = stake.decoder();
        let prefix = block::serial_prefix(&game.id, stake, emission, block);
        let tiers = stake.tiers();
        let tier_text: Vec<String> = tiers.iter().copied().map(canonical).collect();
        let tier_cents = tiers.iter().copied().map(cents).collect();
        let longest_prize = tier_text.iter().map(String::len).max().unwrap_or(1);
        // serial "," prize "," layout "," sha256
        let max_line = prefix.len()
            + INDEX_DIGITS
            + 1
            + longest_prize
            + 1
            + decoder.max_layout_len()
            + 1
            + HASH_HEX;
        Ok(TicketCheck {
            prefix,
            block_size: game.block_size,
            tiers,
            tier_text,
            tier_cents,
            decoder,
            max_line,
        })
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
    pub fn check(&self, line: &[u8], index: u64) -> Result<(), String> {
        let seen = self.inspect(line, index, false);
        if seen.problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "line {} ({}): {}",
                index.saturating_add(2),
                self.serial(index),
                seen.problems.join("; ")
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
        let mut out = Inspection {
            tier: None,
            hash: [0; 32],
            problems: Vec::new(),
            form: None,
            layout: None,
        };
        if line.len() > self.max_line {
            // Not read further: no field of it can be right.
            out.problems.push(format!(
                "{} bytes, longer than the longest ticket line of this game ({} bytes)",
                line.len(),
                self.max_line
            ));
            return out;
        }
        if index >= self.block_size {
            out.problems.push(format!(
                "a block of this game holds {} tickets: this line is one too many",
                self.block_size
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
            out.problems.push(format!(
                "{count} fields, a ticket line has 4 (serial,prize,layout,sha256)"
            ));
            out.hash = Sha256::digest(line).into();
            return out;
        }
        let hashed = &line[..line.len() - fields[3].len() - 1];
        out.hash = sha256::digest(hashed);
        let serial = fields[0];
        let prefix = self.prefix.as_bytes();
        let digits = block::index_digits(index);
        if serial.len() != prefix.len() + INDEX_DIGITS
            || !serial.starts_with(prefix)
            || serial[prefix.len()..] != digits[..]
        {
            out.problems.push(format!(
                "serial {} where {} was expected: a ticket is missing, added or out of order, or the serial was changed",
                shown(serial),
                self.serial(index)
            ));
        }
        let tier = self
            .tier_text
            .iter()
            .position(|t| t.as_bytes() == fields[1]);
        match tier {
            Some(t) => out.tier = Some(t),
            None => out.problems.push(format!(
                "prize {} is not a prize of this stake",
                shown(fields[1])
            )),
        }
        let mut hex_hash = [0u8; HASH_HEX];
        hex::encode_to_slice(out.hash, &mut hex_hash).expect("64 bytes hold 32 in hex");
        if fields[3] != hex_hash {
            out.problems.push(format!(
                "sha256 {} is not the SHA-256 of serial,prize,layout ({})",
                shown(fields[3]),
                hex::encode(out.hash)
            ));
        }
        out.layout = Some(fields[2]);
        // A layout that decodes is ASCII: UTF-8 is only asked of one that does not.
        match self.decoder.decode_cents(fields[2]) {
            Err(_) if std::str::from_utf8(fields[2]).is_err() => {
                out.problems.push("the layout is not UTF-8".into())
            }
            Err(e) => out.problems.push(format!("invalid layout: {e}")),
            Ok(won) => {
                if let Some(t) = tier {
                    if self.tier_cents[t] != Some(won) {
                        // The prize column is one of the tiers here: safe to show as is.
                        out.problems.push(format!(
                            "the layout wins {} € but the prize column says {} €",
                            canonical(from_cents(won)),
                            self.tier_text[t]
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

/// Whole lines of the file, as the reader cut them.
struct Piece {
    /// The lines, each ending with a line end (one is added to an unterminated last line).
    text: Vec<u8>,
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
    File(String),
    /// About one ticket line: listed up to the report's limit, then counted.
    Line(String),
}

/// The verdict on one piece.
struct Checked {
    tickets: u64,
    /// The piece starts at a multiple of [`PIECE_TICKETS`]: `merkle` is a subtree of the
    /// block's tree. Otherwise (after a piece cut short by [`PIECE_BYTES`]) its leaves are
    /// appended one by one from `leaves`.
    aligned: bool,
    merkle: MerkleRoot,
    leaves: Vec<[u8; 32]>,
    counts: Vec<u64>,
    problems: Vec<Problem>,
    forms: BTreeMap<(Decimal, String), u64>,
    /// The observer's part of the piece.
    observed: Option<PiecePart>,
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
        let file = std::fs::File::open(csv)?.take(expected.saturating_add(1));
        let mut merkle = MerkleRoot::new();
        let mut counts = vec![0; self.tickets.tiers.len()];
        let mut reader = Reader::new(file, self.tickets.max_line());
        let mut spares: Vec<Vec<u8>> = Vec::new();
        let mut batch = reader.batch(PIECES_PER_BATCH, &mut spares)?;
        while !batch.is_empty() {
            // Reading, hashing and cutting the next batch is one task beside the checks of
            // this one's pieces: on one thread they run one after the other; on more, the
            // thread that reads takes pieces to check once it is done.
            let mut next_spares = Vec::new();
            let (next, checked) = rayon::join(
                || reader.batch(PIECES_PER_BATCH, &mut spares),
                || {
                    batch
                        .par_iter()
                        .map(|piece| self.piece(piece))
                        .collect::<Vec<Checked>>()
                },
            );
            for (piece, checked) in batch.drain(..).zip(checked) {
                self.fold(checked, &mut merkle, &mut counts, report, progress);
                next_spares.push(piece.text);
            }
            spares.append(&mut next_spares);
            batch = next?;
        }
        let end = reader.end.take().ok_or_else(|| {
            std::io::Error::other("internal error: the file was not read to its end")
        })?;
        if let Some(problem) = end.stopped {
            report.problem(format!("{} {problem}", self.name));
            return Ok(Scan {
                complete: false,
                bytes: end.bytes,
                sha256: [0; 32],
                root: [0; 32],
                counts,
            });
        }
        if end.lines == 0 {
            report.problem(format!("{}: the file is empty", self.name));
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
            checked.leaves.iter().for_each(|leaf| merkle.push(leaf));
        } else if !merkle.append(&checked.merkle) {
            // An aligned piece holds at most 2^10 tickets from a multiple of 2^10: never.
            report.problem(format!(
                "{}: internal error: a piece of the file is not on a Merkle subtree boundary",
                self.name
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

    /// Checks the lines of one piece.
    fn piece(&self, piece: &Piece) -> Checked {
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
        };
        let mut observed: Vec<CheckedLine<'_>> = Vec::new();
        if self.observer.is_some() {
            observed.reserve(PIECE_TICKETS as usize);
        }
        let mut start = 0;
        let text = &piece.text;
        for (line_no, end) in (piece.first_line..).zip(memchr::memchr_iter(b'\n', text)) {
            let line = &text[start..end];
            start = end + 1;
            if piece.unterminated && start == text.len() {
                out.problems.push(Problem::File(format!(
                    "{} line {line_no}: the file does not end with a line end (truncated?)",
                    self.name
                )));
            }
            if line_no == 1 {
                if line != CSV_HEADER.as_bytes() {
                    out.problems.push(Problem::File(format!(
                        "{} line 1: the header is {}, it must be '{CSV_HEADER}'",
                        self.name,
                        shown(line)
                    )));
                }
            } else if let Some(valid) = self.line(line, line_no - 2, &mut out) {
                if self.observer.is_some() {
                    observed.push(valid);
                }
            }
        }
        if let Some(observer) = self.observer {
            out.observed = Some(observer.piece(&observed));
        }
        out
    }

    /// Checks one ticket line; `index` is the ticket's index in the block. Gives the line
    /// back if it is valid.
    fn line<'l>(&self, line: &'l [u8], index: u64, out: &mut Checked) -> Option<CheckedLine<'l>> {
        let mut seen = self.tickets.inspect(line, index, self.forms);
        if let (Some(replay), Some(layout)) = (self.replay, seen.layout) {
            replay.check(self.tickets, index, seen.tier, layout, &mut seen.problems);
        }
        if out.aligned {
            out.merkle.push(&seen.hash);
        } else {
            out.leaves.push(seen.hash);
        }
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
            out.problems.push(Problem::Line(format!(
                "{} line {} ({}): {}",
                self.name,
                index.saturating_add(2),
                self.tickets.serial(index),
                seen.problems.join("; ")
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

/// Reads `file`, hashes it, and cuts it into pieces of whole lines (the header and the first
/// [`PIECE_TICKETS`] ticket lines, then [`PIECE_TICKETS`] lines each, or fewer at a line end
/// past [`PIECE_BYTES`]), a batch at a time, into recycled buffers. Stops at a line with no
/// line end within [`MAX_LINE_READ`] bytes, or at an unterminated last line longer than
/// `max_line` (their bytes are not kept; the lines before are given), or when a signal asks
/// the program to stop (an error then: an interrupted scan proves nothing).
struct Reader<R> {
    file: R,
    max_line: usize,
    sha: Sha256,
    /// Bytes read.
    bytes: u64,
    /// The read buffer, allocated once.
    buf: Vec<u8>,
    /// The piece being filled.
    piece: Piece,
    /// Whole lines read.
    lines: u64,
    /// Ticket lines read.
    tickets: u64,
    /// Bytes of the line being read, in the reads before the last one.
    line_len: usize,
    /// Where that line starts in `piece.text`.
    line_at: usize,
    /// How reading ended, once it has.
    end: Option<ReadEnd>,
}

impl<R: Read> Reader<R> {
    fn new(file: R, max_line: usize) -> Self {
        Reader {
            file,
            max_line,
            sha: Sha256::new(),
            bytes: 0,
            buf: vec![0u8; READ_SIZE],
            piece: Piece {
                text: Vec::new(),
                first_line: 1,
                unterminated: false,
            },
            lines: 0,
            tickets: 0,
            line_len: 0,
            line_at: 0,
            end: None,
        }
    }

    /// Reads on until at least `want` pieces are cut or the file ends, and gives them (none
    /// once reading has ended: then [`Reader::end`] says how). Piece buffers are taken from
    /// `spares` when there are some.
    fn batch(&mut self, want: usize, spares: &mut Vec<Vec<u8>>) -> std::io::Result<Vec<Piece>> {
        let mut out = Vec::with_capacity(want + READ_SIZE / PIECE_BYTES + 1);
        if self.end.is_some() {
            return Ok(out);
        }
        let stop = MAX_LINE_READ.max(self.max_line);
        let mut new_piece = |first_line: u64| {
            let mut text = spares.pop().unwrap_or_default();
            text.clear();
            Piece {
                text,
                first_line,
                unterminated: false,
            }
        };
        while out.len() < want {
            if crate::interrupt::requested().is_some() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "stopped by a signal",
                ));
            }
            let n = self.file.read(&mut self.buf)?;
            if n == 0 {
                if self.line_len > self.max_line {
                    self.stop_at(&mut out);
                    return Ok(out);
                }
                if self.line_len > 0 {
                    self.piece.text.push(b'\n');
                    self.piece.unterminated = true;
                    self.lines += 1;
                }
                let piece = std::mem::replace(&mut self.piece, new_piece(0));
                if !piece.text.is_empty() {
                    out.push(piece);
                }
                self.end = Some(ReadEnd {
                    bytes: self.bytes,
                    sha256: std::mem::take(&mut self.sha).finalize().into(),
                    lines: self.lines,
                    stopped: None,
                });
                return Ok(out);
            }
            let read = &self.buf[..n];
            self.sha.update(read);
            self.bytes += n as u64;
            let mut from = 0; // what `piece` has not taken of this read starts here
            let mut line_start = 0;
            let mut too_long = false;
            for end in memchr::memchr_iter(b'\n', read) {
                if self.line_len + (end - line_start) > stop {
                    too_long = true;
                    break;
                }
                self.line_len = 0;
                line_start = end + 1;
                self.lines += 1;
                self.line_at = self.piece.text.len() + (line_start - from);
                if self.lines == 1 {
                    continue; // the header rides with the first piece
                }
                self.tickets += 1;
                if self.tickets.is_multiple_of(PIECE_TICKETS) || self.line_at >= PIECE_BYTES {
                    self.piece.text.extend_from_slice(&read[from..line_start]);
                    from = line_start;
                    out.push(std::mem::replace(
                        &mut self.piece,
                        new_piece(self.lines + 1),
                    ));
                    self.line_at = 0;
                }
            }
            if !too_long {
                self.line_len += n - line_start;
                too_long = self.line_len > stop;
            }
            self.piece.text.extend_from_slice(&read[from..]);
            if too_long {
                self.stop_at(&mut out);
                return Ok(out);
            }
        }
        Ok(out)
    }

    /// Stops at the line that starts at `line_at` in the piece being filled, after the whole
    /// lines read: the lines before it are given, nothing of it is.
    fn stop_at(&mut self, out: &mut Vec<Piece>) {
        let mut piece = std::mem::replace(
            &mut self.piece,
            Piece {
                text: Vec::new(),
                first_line: 0,
                unterminated: false,
            },
        );
        piece.text.truncate(self.line_at);
        if !piece.text.is_empty() {
            out.push(piece);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanic::LayoutRng;
    use rand::SeedableRng;

    /// Block 7 of emission 3 of La ruche d'or at 2 €.
    fn setup() -> (Game, Stake, TicketCheck) {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = game.stake(Decimal::from(2)).unwrap().clone();
        let check = TicketCheck::new(&game, &stake, 3, 7).unwrap();
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
            Err(m) => assert!(m.contains(needle), "{m:?} should mention {needle:?}"),
        }
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
        let said = check.check(&longest, 42).unwrap_err();
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

    /// Runs the reader on `bytes` (read in pieces of `step`-varying sizes, or whole when `step`
    /// is 0); returns the pieces it sent and its end.
    fn cut(bytes: &[u8], max_line: usize, step: usize) -> (Vec<Piece>, ReadEnd) {
        fn all<R: Read>(mut reader: Reader<R>) -> (Vec<Piece>, ReadEnd) {
            let (mut pieces, mut spares) = (Vec::new(), Vec::new());
            loop {
                let batch = reader.batch(3, &mut spares).unwrap();
                if batch.is_empty() {
                    break;
                }
                pieces.extend(batch);
            }
            (pieces, reader.end.unwrap())
        }
        if step == 0 {
            all(Reader::new(bytes, max_line))
        } else {
            all(Reader::new(Dribble { bytes, step }, max_line))
        }
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
}
