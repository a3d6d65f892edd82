//! The form a block's CSV takes in a pack: `block-NNNNN.lines.csv`, the CSV without its `sha256`
//! column (docs/FORMAT.md, "Emission pack"). That column is the SHA-256 of the three fields
//! before it, so it is recomputed from them rather than carried: it is 36 % of a CSV's bytes
//! and, being random, 57 % of what zstd makes of one; dropping it makes a pack 0.18 of its
//! folder instead of 0.40, and a pack's reader decompresses and decrypts half as much.
//!
//! The mapping is exact both ways, so that `unpack` gives the folder's bytes back and every
//! reader of a pack checks the very bytes the signed manifest names:
//!
//! - the CSV's header `serial,prize,layout,sha256` is the lines' header `serial,prize,layout`;
//! - each ticket line `serial,prize,layout,<64 lowercase hex>` is the line `serial,prize,layout`,
//!   the hex being the SHA-256 of those bytes;
//! - every line ends with `\n`, and there are exactly the manifest's `tickets` ticket lines, so
//!   the lines form of a CSV of `B` bytes is `B - 7 - 65 × tickets` bytes.
//!
//! [`Strip`] makes the lines from a folder's CSV (`pack`), refusing a CSV whose hash column does
//! not hold its lines' hashes (naming the line); [`Rebuild`] makes the CSV from the lines (every
//! reader of a pack), refusing anything that does not map back (a header other than the one
//! above, a line over [`MAX_LINE`] bytes, more or fewer lines than the manifest's tickets, a
//! last line without its end), so the bytes it gives are the CSV's exactly. Both hash the lines
//! in batches with the fastest engine this processor has ([`crate::hash::sha256::digest_many`]).

use crate::block::CSV_HEADER;
pub use crate::block::LINES_HEADER;
use std::io::{self, Read};

/// Most bytes of one line of either form, its end not counted; a longer line is refused (a
/// ticket line is at most a few hundred bytes, docs/FORMAT.md "CSV").
pub const MAX_LINE: usize = 64 << 10;
/// Bytes a ticket line's hash field takes in a CSV: `,` and 64 hex digits.
const HASH_FIELD: usize = 65;
/// Bytes read from the source at a time.
const INPUT: usize = 1 << 20;
/// Most bytes one batch of lines makes, but for its last line (so the memory a mapping holds is
/// bounded whatever the lines: a member of empty lines would otherwise grow 66 times).
const OUTPUT: usize = 1 << 20;

/// Bytes of the lines form of a CSV of `csv_bytes` bytes and `tickets` ticket lines; `None` if
/// no CSV of that size can have that many lines.
pub fn lines_bytes(csv_bytes: u64, tickets: u64) -> Option<u64> {
    let removed = tickets
        .checked_mul(HASH_FIELD as u64)?
        .checked_add((CSV_HEADER.len() - LINES_HEADER.len()) as u64)?;
    csv_bytes.checked_sub(removed)
}

/// Why a CSV or its lines do not map to the other form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinesError {
    /// The first line is not the header of its form.
    #[error("line 1: not the header `{wanted}`")]
    Header {
        /// The header the form has.
        wanted: &'static str,
    },
    /// A ticket line of a CSV without a `,` and 64 lowercase hex digits at its end.
    #[error("line {line}: no sha256 field (`,` and 64 lowercase hex digits) at its end")]
    NoHash {
        /// The line, from 1 (the header).
        line: u64,
    },
    /// A ticket line of a CSV whose hash field is not its hash.
    #[error(
        "line {line}: its sha256 field is not the SHA-256 of its serial,prize,layout (the line was changed)"
    )]
    WrongHash {
        /// The line, from 1 (the header).
        line: u64,
    },
    /// A line longer than [`MAX_LINE`].
    #[error("line {line}: longer than {MAX_LINE} bytes")]
    TooLong {
        /// The line, from 1.
        line: u64,
    },
    /// More ticket lines than the manifest's tickets.
    #[error("more than the {tickets} ticket lines its manifest counts")]
    TooMany {
        /// The manifest's tickets.
        tickets: u64,
    },
    /// Fewer ticket lines than the manifest's tickets.
    #[error("{found} ticket lines, its manifest counts {tickets}")]
    TooFew {
        /// Ticket lines read.
        found: u64,
        /// The manifest's tickets.
        tickets: u64,
    },
    /// Bytes after the last line end.
    #[error("line {line}: cut (no line end)")]
    Cut {
        /// The line, from 1.
        line: u64,
    },
}

impl From<LinesError> for io::Error {
    fn from(e: LinesError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// Which way lines are mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// CSV to lines ([`Strip`]).
    Strip,
    /// Lines to CSV ([`Rebuild`]).
    Rebuild,
}

/// What both mappings share: the source read in large pieces, cut into lines, each batch of
/// lines hashed together and written to `out`, which the reader then hands out.
struct Lines<R> {
    inner: R,
    way: Way,
    tickets: u64,
    input: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    out: Vec<u8>,
    out_at: usize,
    /// Lines mapped, the header included.
    lines: u64,
    finished: bool,
    error: Option<LinesError>,
}

impl<R: Read> Lines<R> {
    fn new(inner: R, way: Way, tickets: u64) -> Self {
        Lines {
            inner,
            way,
            tickets,
            input: vec![0; INPUT + MAX_LINE + 1],
            start: 0,
            end: 0,
            eof: false,
            out: Vec::with_capacity(OUTPUT + MAX_LINE + HASH_FIELD + 1),
            out_at: 0,
            lines: 0,
            finished: false,
            error: None,
        }
    }

    fn fail(&mut self, e: LinesError) -> io::Error {
        self.error = Some(e.clone());
        e.into()
    }

    /// Maps the next batch of complete lines into `out` (left empty once the source is done).
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.out_at = 0;
        loop {
            if !self.eof && self.end - self.start < INPUT / 2 {
                // Keep the partial line, read more after it (batches of many lines hash faster).
                self.input.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                let room = self.input.len() - self.end;
                // An interruption is an error like any other: a signal stops the reader.
                let n = self
                    .inner
                    .read(&mut self.input[self.end..self.end + room])?;
                self.eof = n == 0;
                self.end += n;
                continue;
            }
            // A batch is the lines that make at most OUTPUT bytes out (at least one line): short
            // lines grow by their hash field, so the input alone would not bound the output.
            let mut ends = Vec::new();
            let mut at = self.start;
            let mut made = 0;
            for end in memchr::memchr_iter(b'\n', &self.input[self.start..self.end]) {
                let end = self.start + end;
                made += end - at + 1 + HASH_FIELD;
                if end - at > MAX_LINE || (made > OUTPUT && !ends.is_empty()) {
                    break;
                }
                ends.push(end);
                at = end + 1;
            }
            if !ends.is_empty() {
                self.map(&ends)?;
                self.start = at;
                return Ok(());
            }
            if self.end - self.start > MAX_LINE {
                let line = self.lines + 1;
                return Err(self.fail(LinesError::TooLong { line }));
            }
            // Here the source is done (else more would have been read).
            if self.start < self.end {
                let line = self.lines + 1;
                return Err(self.fail(LinesError::Cut { line }));
            }
            self.finished = true;
            if self.lines == 0 {
                let wanted = self.header();
                return Err(self.fail(LinesError::Header { wanted }));
            }
            let found = self.lines - 1;
            if found != self.tickets {
                let tickets = self.tickets;
                return Err(self.fail(LinesError::TooFew { found, tickets }));
            }
            return Ok(());
        }
    }

    /// The header of the form read.
    fn header(&self) -> &'static str {
        match self.way {
            Way::Strip => CSV_HEADER,
            Way::Rebuild => LINES_HEADER,
        }
    }

    /// Maps the lines ending at `ends` (each a `\n`, the first starting at `self.start`).
    fn map(&mut self, ends: &[usize]) -> io::Result<()> {
        let mut from = self.start;
        let mut header = false;
        let mut bodies: Vec<(usize, usize)> = Vec::with_capacity(ends.len());
        for &end in ends {
            let line = &self.input[from..end];
            let number = self.lines + 1;
            if number == 1 {
                if line != self.header().as_bytes() {
                    let wanted = self.header();
                    return Err(self.fail(LinesError::Header { wanted }));
                }
                header = true;
                self.lines = 1;
                from = end + 1;
                continue;
            }
            if number - 1 > self.tickets {
                let tickets = self.tickets;
                return Err(self.fail(LinesError::TooMany { tickets }));
            }
            let body_end = match self.way {
                Way::Rebuild => end,
                Way::Strip => {
                    let ok = line.len() >= HASH_FIELD
                        && line[line.len() - HASH_FIELD] == b','
                        && line[line.len() - HASH_FIELD + 1..]
                            .iter()
                            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
                    if !ok {
                        return Err(self.fail(LinesError::NoHash { line: number }));
                    }
                    end - HASH_FIELD
                }
            };
            bodies.push((from, body_end));
            self.lines = number;
            from = end + 1;
        }
        // The line number of the first body of the batch.
        let first = self.lines + 1 - bodies.len() as u64;
        let hashes = {
            let messages: Vec<&[u8]> = bodies.iter().map(|&(a, b)| &self.input[a..b]).collect();
            crate::hash::sha256::digest_many(&messages)
        };
        if header {
            let header = match self.way {
                Way::Strip => LINES_HEADER,
                Way::Rebuild => CSV_HEADER,
            };
            self.out.extend_from_slice(header.as_bytes());
            self.out.push(b'\n');
        }
        let mut hex = [0u8; 64];
        for (i, (&(a, b), hash)) in bodies.iter().zip(&hashes).enumerate() {
            // hex::encode_to_slice fails only on a wrong output length, which 64 is not.
            let _ = hex::encode_to_slice(hash, &mut hex);
            match self.way {
                Way::Strip => {
                    if self.input[b + 1..b + HASH_FIELD] != hex[..] {
                        let line = first + i as u64;
                        return Err(self.fail(LinesError::WrongHash { line }));
                    }
                    self.out.extend_from_slice(&self.input[a..b]);
                }
                Way::Rebuild => {
                    self.out.extend_from_slice(&self.input[a..b]);
                    self.out.push(b',');
                    self.out.extend_from_slice(&hex);
                }
            }
            self.out.push(b'\n');
        }
        Ok(())
    }

    fn read_out(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = &self.error {
            return Err(e.clone().into());
        }
        while self.out_at == self.out.len() {
            if self.finished {
                return Ok(0);
            }
            self.refill()?;
        }
        let n = buf.len().min(self.out.len() - self.out_at);
        buf[..n].copy_from_slice(&self.out[self.out_at..self.out_at + n]);
        self.out_at += n;
        Ok(n)
    }
}

/// A folder's CSV read as its lines form (`pack`): the header and every ticket line's hash
/// field checked (the hash the line's bytes have), then dropped.
pub struct Strip<R>(Lines<R>);

impl<R: Read> Strip<R> {
    /// The lines of the CSV `inner` gives, which must have `tickets` ticket lines.
    pub fn new(inner: R, tickets: u64) -> Self {
        Strip(Lines::new(inner, Way::Strip, tickets))
    }

    /// Why the CSV did not map, once a read failed for that reason.
    pub fn error(&self) -> Option<&LinesError> {
        self.0.error.as_ref()
    }

    /// The source.
    pub fn into_inner(self) -> R {
        self.0.inner
    }
}

impl<R: Read> Read for Strip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_out(buf)
    }
}

/// A pack's lines member read as the CSV it stands for (every reader of a pack): each ticket
/// line given its hash field back, refusing what does not map (the module says what).
pub struct Rebuild<R>(Lines<R>);

impl<R: Read> Rebuild<R> {
    /// The CSV of the lines `inner` gives, which must have `tickets` ticket lines.
    pub fn new(inner: R, tickets: u64) -> Self {
        Rebuild(Lines::new(inner, Way::Rebuild, tickets))
    }
}

impl<R: Read> Read for Rebuild<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_out(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CSV of `tickets` lines of varied lengths, with their true hashes, and its lines form.
    fn csv_and_lines(tickets: u64) -> (Vec<u8>, Vec<u8>) {
        let mut csv = format!("{CSV_HEADER}\n").into_bytes();
        let mut lines = format!("{LINES_HEADER}\n").into_bytes();
        for i in 0..tickets {
            let body = format!(
                "g-200-0001-00001-{i:07},{},{}",
                i % 7,
                "AB/".repeat((i % 50) as usize)
            );
            let hash = hex::encode(crate::hash::sha256::digest(body.as_bytes()));
            csv.extend_from_slice(format!("{body},{hash}\n").as_bytes());
            lines.extend_from_slice(format!("{body}\n").as_bytes());
        }
        (csv, lines)
    }

    /// A reader giving at most `step` bytes a read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.1).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn all(mut r: impl Read) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    fn error_of(r: io::Result<Vec<u8>>) -> LinesError {
        let e = r.expect_err("must be refused");
        e.into_inner()
            .and_then(|e| e.downcast::<LinesError>().ok())
            .map(|e| *e)
            .expect("a LinesError")
    }

    #[test]
    fn strip_then_rebuild_gives_the_csv_back_whatever_the_reads() {
        for tickets in [0u64, 1, 2, 17, 40_000] {
            let (csv, lines) = csv_and_lines(tickets);
            assert_eq!(
                lines_bytes(csv.len() as u64, tickets),
                Some(lines.len() as u64),
                "{tickets}"
            );
            for step in [1usize, 7, 4096, usize::MAX] {
                if tickets == 40_000 && step < 4096 {
                    continue;
                }
                let stripped = all(Strip::new(Trickle(&csv, step), tickets)).unwrap();
                assert_eq!(stripped, lines, "strip {tickets} by {step}");
                let rebuilt = all(Rebuild::new(Trickle(&lines, step), tickets)).unwrap();
                assert_eq!(rebuilt, csv, "rebuild {tickets} by {step}");
            }
        }
        assert_eq!(lines_bytes(10, 1), None);
    }

    #[test]
    fn strip_refuses_a_csv_whose_hash_column_lies_naming_the_line() {
        let (csv, _) = csv_and_lines(100);
        let mut changed = csv.clone();
        // Line 42 (ticket 40): one hex digit of its hash changed.
        let start = changed
            .split(|&b| b == b'\n')
            .take(41)
            .map(|l| l.len() + 1)
            .sum::<usize>();
        let end = start + changed[start..].iter().position(|&b| b == b'\n').unwrap();
        changed[end - 1] = if changed[end - 1] == b'0' { b'1' } else { b'0' };
        let mut strip = Strip::new(&changed[..], 100);
        let refused = all(&mut strip);
        assert_eq!(error_of(refused), LinesError::WrongHash { line: 42 });
        assert_eq!(strip.error(), Some(&LinesError::WrongHash { line: 42 }));
        // Its layout changed instead, the hash left: the same.
        let mut changed = csv.clone();
        changed[start + 20] ^= 1;
        assert_eq!(
            error_of(all(Strip::new(&changed[..], 100))),
            LinesError::WrongHash { line: 42 }
        );
        // No hash field, upper-case hex, a wrong header.
        let no_hash = csv.replace_line(3, b"a,0,AB");
        assert_eq!(
            error_of(all(Strip::new(&no_hash[..], 100))),
            LinesError::NoHash { line: 3 }
        );
        let upper = csv.to_ascii_uppercase();
        assert_eq!(
            error_of(all(Strip::new(&upper[..], 100))),
            LinesError::Header { wanted: CSV_HEADER }
        );
        let (_, lines) = csv_and_lines(100);
        assert_eq!(
            error_of(all(Strip::new(&lines[..], 100))),
            LinesError::Header { wanted: CSV_HEADER }
        );
    }

    trait ReplaceLine {
        fn replace_line(&self, n: usize, with: &[u8]) -> Vec<u8>;
    }

    impl ReplaceLine for Vec<u8> {
        fn replace_line(&self, n: usize, with: &[u8]) -> Vec<u8> {
            let mut out = Vec::new();
            for (i, line) in self.split(|&b| b == b'\n').enumerate() {
                if i > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(if i + 1 == n { with } else { line });
            }
            out
        }
    }

    #[test]
    fn a_member_of_empty_lines_is_rebuilt_in_bounded_memory() {
        // 200 000 empty ticket lines: 200 001 bytes that make 13.4 MB of CSV.
        let tickets = 200_000u64;
        let mut lines = format!("{LINES_HEADER}\n").into_bytes();
        lines.resize(lines.len() + tickets as usize, b'\n');
        let mut rebuild = Rebuild::new(&lines[..], tickets);
        let mut buf = vec![0u8; 1 << 16];
        let (mut total, mut most) = (0u64, 0usize);
        loop {
            let n = rebuild.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            total += n as u64;
            most = most.max(rebuild.0.out.capacity());
        }
        assert_eq!(lines_bytes(total, tickets), Some(lines.len() as u64));
        assert!(
            most <= OUTPUT + MAX_LINE + HASH_FIELD + 1,
            "a batch held {most} bytes"
        );
    }

    #[test]
    fn rebuild_refuses_lines_that_do_not_map_back() {
        let (csv, lines) = csv_and_lines(10);
        // More or fewer lines than the manifest's tickets.
        assert_eq!(
            error_of(all(Rebuild::new(&lines[..], 9))),
            LinesError::TooMany { tickets: 9 }
        );
        assert_eq!(
            error_of(all(Rebuild::new(&lines[..], 11))),
            LinesError::TooFew {
                found: 10,
                tickets: 11
            }
        );
        // The last line's end cut off; nothing at all.
        assert_eq!(
            error_of(all(Rebuild::new(&lines[..lines.len() - 1], 10))),
            LinesError::Cut { line: 11 }
        );
        assert_eq!(
            error_of(all(Rebuild::new(&b""[..], 0))),
            LinesError::Header {
                wanted: LINES_HEADER
            }
        );
        // The CSV's own form (its header) is not the lines form.
        assert_eq!(
            error_of(all(Rebuild::new(&csv[..], 10))),
            LinesError::Header {
                wanted: LINES_HEADER
            }
        );
        // A line longer than MAX_LINE, in the middle and at the end.
        let long = lines.replace_line(4, &vec![b'A'; MAX_LINE + 1]);
        assert_eq!(
            error_of(all(Rebuild::new(&long[..], 10))),
            LinesError::TooLong { line: 4 }
        );
        let mut endless = lines.clone();
        endless.extend(std::iter::repeat_n(b'A', 3 * MAX_LINE));
        assert_eq!(
            error_of(all(Rebuild::new(&endless[..], 11))),
            LinesError::TooLong { line: 12 }
        );
        // A read error of the source is passed on as it is.
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let e = all(Rebuild::new(Broken, 1)).unwrap_err();
        assert_eq!(e.to_string(), "disk on fire");
    }
}
