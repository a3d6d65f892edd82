//! The second pass over a block's CSV: every ticket line streamed into `COPY ... FROM STDIN
//! (FORMAT binary)`, with the prize in cents and the ticket hash as 32 bytes.
//!
//! This pass trusts nothing either: it checks each line's shape as it converts it, and hashes the
//! whole file it sent so the caller can compare it with the manifest's SHA-256 (the file that was
//! verified is then, byte for byte, the file that was loaded).
//!
//! The rows are encoded here, in the binary COPY format of the PostgreSQL documentation ("COPY",
//! "Binary Format"), into pieces of [`SEND_SIZE`] bytes written through the client's plain
//! [`CopyInWriter`]. The client's own `BinaryCopyInWriter` would do the encoding, but it blocks
//! on the client's runtime once per row and sends a message every 4 KB: on a La ruche d'or block
//! this pass took 1.2 s of CPU with it and takes 0.6 s this way, 0.15 s of which is the file's
//! SHA-256 (`perf record`, README "Speed and memory"): CPU the server's backend and the
//! verification need on a machine of 2 cores.

use crate::block::CSV_HEADER;
use postgres::{CopyInWriter, Transaction};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};

/// Bytes read at a time.
const READ_SIZE: usize = 4 << 20;
/// Bytes of encoded rows sent to the server at a time.
const SEND_SIZE: usize = 1 << 20;

/// The columns the COPY fills, in the order each row is encoded (see [`Row::encode`]).
pub const COLUMNS: &str = "block_id, idx, serial, prize_cents, layout, sha256";

/// The binary COPY header: signature, flags (no OIDs), no header extension.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The binary COPY trailer: a field count of -1.
const TRAILER: &[u8] = &(-1i16).to_be_bytes();

/// What the pass sent.
pub struct Sent {
    /// Ticket rows sent.
    pub rows: u64,
    /// SHA-256 of the whole file read.
    pub sha256: [u8; 32],
}

/// Why the pass stopped.
pub enum CopyError {
    /// Reading the file failed.
    Io(std::io::Error),
    /// The server failed the COPY.
    Db(postgres::Error),
    /// A line is not a ticket line this program can load (verification says more).
    Line(String),
    /// Stopped by a signal.
    Interrupted(crate::interrupt::Interrupted),
}

impl From<postgres::Error> for CopyError {
    fn from(e: postgres::Error) -> Self {
        CopyError::Db(e)
    }
}

impl From<std::io::Error> for CopyError {
    fn from(e: std::io::Error) -> Self {
        CopyError::Io(e)
    }
}

/// Streams the tickets of the CSV `file` gives into `table` as block `block_id`; `prizes` maps
/// each prize's canonical text to cents.
pub fn stream(
    tx: &mut Transaction<'_>,
    table: &str,
    file: &mut dyn Read,
    block_id: i64,
    prizes: &[(String, i64)],
    progress: &dyn crate::progress::Progress,
) -> Result<Sent, CopyError> {
    let mut unsaid: u64 = 0;
    let mut sink = tx.copy_in(&format!(
        "COPY {table} ({COLUMNS}) FROM STDIN (FORMAT binary, FREEZE)"
    ))?;
    let mut sha = Sha256::new();
    // Read into `pending` after the part line left from the last read: one copy of the file's
    // bytes, into the encoded rows.
    let mut pending: Vec<u8> = vec![0u8; READ_SIZE];
    let mut kept = 0;
    let mut out: Vec<u8> = Vec::with_capacity(SEND_SIZE * 2);
    out.extend_from_slice(HEADER);
    let mut header_seen = false;
    let mut idx: i32 = 0;
    loop {
        crate::interrupt::check().map_err(CopyError::Interrupted)?;
        if kept == pending.len() {
            // A line longer than a read: no ticket line is; verification says what it is.
            return Err(CopyError::Line(format!(
                "line {} is longer than {READ_SIZE} bytes",
                i64::from(idx) + 2
            )));
        }
        let n = file.read(&mut pending[kept..])?;
        if n == 0 {
            break;
        }
        sha.update(&pending[kept..kept + n]);
        let filled = kept + n;
        let Some(last) = memchr::memrchr(b'\n', &pending[..filled]) else {
            kept = filled;
            continue;
        };
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &pending[..=last]) {
            let line = &pending[start..end];
            start = end + 1;
            if !header_seen {
                header_seen = true;
                if line != CSV_HEADER.as_bytes() {
                    return Err(CopyError::Line("the header is not the block header".into()));
                }
                continue;
            }
            let row = Row::parse(line, prizes).ok_or_else(|| {
                CopyError::Line(format!("line {} is not a ticket line", i64::from(idx) + 2))
            })?;
            row.encode(block_id, idx, &mut out).ok_or_else(|| {
                CopyError::Line(format!("line {} is too long", i64::from(idx) + 2))
            })?;
            idx = idx
                .checked_add(1)
                .ok_or_else(|| CopyError::Line("more tickets than a block holds".into()))?;
            unsaid += 1;
            if out.len() >= SEND_SIZE {
                send(&mut sink, &mut out)?;
                progress.add(std::mem::take(&mut unsaid));
            }
        }
        pending.copy_within(last + 1..filled, 0);
        kept = filled - (last + 1);
    }
    if kept != 0 {
        return Err(CopyError::Line(
            "the file does not end with a line end".into(),
        ));
    }
    out.extend_from_slice(TRAILER);
    send(&mut sink, &mut out)?;
    progress.add(unsaid);
    sink.finish()?;
    Ok(Sent {
        rows: u64::try_from(idx).unwrap_or_default(),
        sha256: sha.finalize().into(),
    })
}

/// Sends the rows encoded so far and empties `out`.
fn send(sink: &mut CopyInWriter<'_>, out: &mut Vec<u8>) -> Result<(), CopyError> {
    // The writer's errors are the server's, wrapped in an io::Error: unwrap them so the
    // message keeps its SQLSTATE.
    if let Err(e) = sink.write_all(out).and_then(|()| sink.flush()) {
        return Err(
            match e
                .into_inner()
                .map(|inner| inner.downcast::<postgres::Error>())
            {
                Some(Ok(db)) => CopyError::Db(*db),
                Some(Err(other)) => CopyError::Io(std::io::Error::other(other)),
                None => CopyError::Io(std::io::Error::other("the COPY stream failed")),
            },
        );
    }
    out.clear();
    Ok(())
}

/// Length of the hex SHA-256 that ends a ticket line.
const HASH_HEX: usize = 64;

/// The value of each hex digit (either case, as the `hex` crate reads), 0xff for other bytes.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// The 32 bytes of 64 hex digits; `None` if a byte is not a hex digit. A table instead of
/// `hex::decode_to_slice`, which took 0.35 s of a La ruche d'or block's load (`perf record`):
/// more than the SHA-256 of the whole file.
fn decode_hash(hex: &[u8]) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    let mut bad = 0u8;
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let (high, low) = (
            HEX_VALUE[usize::from(pair[0])],
            HEX_VALUE[usize::from(pair[1])],
        );
        bad |= high | low;
        *byte = (high << 4) | (low & 0x0f);
    }
    (hex.len() == HASH_HEX && bad & 0xf0 == 0).then_some(out)
}

/// One ticket line, converted.
struct Row<'a> {
    serial: &'a [u8],
    cents: i64,
    layout: &'a [u8],
    sha256: [u8; 32],
}

impl<'a> Row<'a> {
    /// `serial,prize,layout,sha256`; `None` if the line is not of that shape.
    fn parse(line: &'a [u8], prizes: &[(String, i64)]) -> Option<Row<'a>> {
        // The hash is the last field, 64 hex digits; the layout holds no comma.
        let hash_at = line.len().checked_sub(HASH_HEX)?;
        let (body, tail) = line.split_at(hash_at);
        let body = body.strip_suffix(b",")?;
        let first = memchr::memchr(b',', body)?;
        let serial = &body[..first];
        let rest = &body[first + 1..];
        let second = memchr::memchr(b',', rest)?;
        let prize = &rest[..second];
        let layout = &rest[second + 1..];
        if memchr::memchr(b',', layout).is_some() {
            return None;
        }
        let cents = prizes
            .iter()
            .find(|(text, _)| text.as_bytes() == prize)
            .map(|(_, c)| *c)?;
        let sha256 = decode_hash(tail)?;
        // The server checks the text fields' encoding too; refusing here names the line.
        std::str::from_utf8(serial).ok()?;
        std::str::from_utf8(layout).ok()?;
        Some(Row {
            serial,
            cents,
            layout,
            sha256,
        })
    }

    /// Appends the row as one tuple of the binary COPY format: the field count, then each
    /// field's length and bytes, big-endian, in the order of [`COLUMNS`]. `None` if a field is
    /// longer than the format's 32-bit length (a ticket line never is).
    fn encode(&self, block_id: i64, idx: i32, out: &mut Vec<u8>) -> Option<()> {
        let serial_len = i32::try_from(self.serial.len()).ok()?;
        let layout_len = i32::try_from(self.layout.len()).ok()?;
        out.extend_from_slice(&6i16.to_be_bytes());
        out.extend_from_slice(&8i32.to_be_bytes());
        out.extend_from_slice(&block_id.to_be_bytes());
        out.extend_from_slice(&4i32.to_be_bytes());
        out.extend_from_slice(&idx.to_be_bytes());
        out.extend_from_slice(&serial_len.to_be_bytes());
        out.extend_from_slice(self.serial);
        out.extend_from_slice(&8i32.to_be_bytes());
        out.extend_from_slice(&self.cents.to_be_bytes());
        out.extend_from_slice(&layout_len.to_be_bytes());
        out.extend_from_slice(self.layout);
        out.extend_from_slice(&32i32.to_be_bytes());
        out.extend_from_slice(&self.sha256);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prizes() -> Vec<(String, i64)> {
        vec![("2.5".into(), 250), ("0".into(), 0)]
    }

    #[test]
    fn a_ticket_line_converts() {
        let hash = "ab".repeat(32);
        let line = format!("g-200-0001-00001-0000000,2.5,5:PAHB/1:AB,{hash}");
        let row = Row::parse(line.as_bytes(), &prizes()).expect("a ticket line");
        assert_eq!(row.serial, b"g-200-0001-00001-0000000");
        assert_eq!(row.cents, 250);
        assert_eq!(row.layout, b"5:PAHB/1:AB");
        assert_eq!(row.sha256, [0xab; 32]);
    }

    #[test]
    fn other_lines_are_refused() {
        let hash = "ab".repeat(32);
        for line in [
            format!("s,3,l,{hash}"),
            format!("s,2.5,l,{}", &hash[..62]),
            format!("s,2.5,l,{hash},x"),
            "s,2.5,l".to_string(),
            format!("s,2.50,l,{hash}"),
        ] {
            assert!(Row::parse(line.as_bytes(), &prizes()).is_none(), "{line}");
        }
        let mut bad = format!("s,2.5,l,{hash}").into_bytes();
        bad[6] = 0xff;
        assert!(
            Row::parse(&bad, &prizes()).is_none(),
            "a layout that is not UTF-8"
        );
    }

    #[test]
    fn hashes_decode_as_the_hex_crate_reads_them() {
        let bytes: Vec<u8> = (0..32u8).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
        for text in [hex::encode(&bytes), hex::encode_upper(&bytes)] {
            assert_eq!(
                decode_hash(text.as_bytes()).map(Vec::from),
                Some(bytes.clone())
            );
        }
        let good = hex::encode(&bytes).into_bytes();
        for at in [0, 31, 63] {
            for wrong in [b'g', b'G', b' ', b'/', b':', b'@', b'`', 0xff] {
                let mut bad = good.clone();
                bad[at] = wrong;
                assert_eq!(decode_hash(&bad), None, "{:?}", wrong as char);
            }
        }
        assert_eq!(decode_hash(&good[..62]), None);
    }

    /// The bytes of one tuple, pinned: the binary COPY format (PostgreSQL documentation,
    /// "COPY", "Binary Format") that the server reads.
    #[test]
    fn a_row_encodes_as_the_binary_copy_format_says() {
        let hash = "01".repeat(32);
        let line = format!("ab,2.5,xyz,{hash}");
        let row = Row::parse(line.as_bytes(), &prizes()).expect("a ticket line");
        let mut out = Vec::new();
        row.encode(7, 258, &mut out).expect("encodes");
        let mut expected: Vec<u8> = vec![0, 6];
        expected.extend([0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 7]);
        expected.extend([0, 0, 0, 4, 0, 0, 1, 2]);
        expected.extend([0, 0, 0, 2, b'a', b'b']);
        expected.extend([0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 250]);
        expected.extend([0, 0, 0, 3, b'x', b'y', b'z']);
        expected.extend([0, 0, 0, 32]);
        expected.extend([1u8; 32]);
        assert_eq!(out, expected);
        assert_eq!(HEADER.len(), 19);
        assert_eq!(&HEADER[..11], b"PGCOPY\n\xff\r\n\0");
        assert_eq!(TRAILER, [0xff, 0xff]);
    }
}
