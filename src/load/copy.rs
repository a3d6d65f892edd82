//! The second pass over a block's CSV: every ticket line streamed into `COPY ... FROM STDIN
//! (FORMAT binary)`, with the prize in cents and the ticket hash as 32 bytes.
//!
//! This pass trusts nothing either: it checks each line's shape as it converts it, and hashes the
//! whole file it sent so the caller can compare it with the manifest's SHA-256 (the file that was
//! verified is then, byte for byte, the file that was loaded).

use crate::block::CSV_HEADER;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::Transaction;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Bytes read at a time.
const READ_SIZE: usize = 4 << 20;

/// The column types of the COPY, in the order of [`COLUMNS`].
const TYPES: [Type; 6] = [
    Type::INT8,
    Type::INT4,
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::BYTEA,
];

/// The columns the COPY fills.
pub const COLUMNS: &str = "block_id, idx, serial, prize_cents, layout, sha256";

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

/// Streams the tickets of `csv` into `table` as block `block_id`; `prizes` maps each prize's
/// canonical text to cents.
pub fn stream(
    tx: &mut Transaction<'_>,
    table: &str,
    csv: &Path,
    block_id: i64,
    prizes: &[(String, i64)],
) -> Result<Sent, CopyError> {
    let mut file = File::open(csv)?;
    let sink = tx.copy_in(&format!(
        "COPY {table} ({COLUMNS}) FROM STDIN (FORMAT binary, FREEZE)"
    ))?;
    let mut writer = BinaryCopyInWriter::new(sink, &TYPES);
    let mut sha = Sha256::new();
    let mut buf = vec![0u8; READ_SIZE];
    let mut pending: Vec<u8> = Vec::with_capacity(READ_SIZE * 2);
    let mut header_seen = false;
    let mut idx: i32 = 0;
    loop {
        crate::interrupt::check().map_err(CopyError::Interrupted)?;
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        pending.extend_from_slice(&buf[..n]);
        let Some(last) = pending.iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        for line in pending[..last].split(|&b| b == b'\n') {
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
            writer.write(&[
                &block_id as &(dyn ToSql + Sync),
                &idx,
                &row.serial,
                &row.cents,
                &row.layout,
                &&row.sha256[..],
            ])?;
            idx = idx
                .checked_add(1)
                .ok_or_else(|| CopyError::Line("more tickets than a block holds".into()))?;
        }
        pending.drain(..=last);
    }
    if !pending.is_empty() {
        return Err(CopyError::Line(
            "the file does not end with a line end".into(),
        ));
    }
    writer.finish()?;
    Ok(Sent {
        rows: u64::try_from(idx).unwrap_or_default(),
        sha256: sha.finalize().into(),
    })
}

/// One ticket line, converted.
struct Row<'a> {
    serial: &'a str,
    cents: i64,
    layout: &'a str,
    sha256: [u8; 32],
}

impl<'a> Row<'a> {
    /// `serial,prize,layout,sha256`; `None` if the line is not of that shape.
    fn parse(line: &'a [u8], prizes: &[(String, i64)]) -> Option<Row<'a>> {
        let mut fields = line.splitn(4, |&b| b == b',');
        let serial = std::str::from_utf8(fields.next()?).ok()?;
        let prize = fields.next()?;
        let rest = fields.next()?;
        let tail = fields.next()?;
        // The layout holds no comma: the hash is the last field, 64 hex digits.
        if tail.contains(&b',') {
            return None;
        }
        let cents = prizes
            .iter()
            .find(|(text, _)| text.as_bytes() == prize)
            .map(|(_, c)| *c)?;
        let mut sha256 = [0u8; 32];
        hex::decode_to_slice(tail, &mut sha256).ok()?;
        Some(Row {
            serial,
            cents,
            layout: std::str::from_utf8(rest).ok()?,
            sha256,
        })
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
        assert_eq!(row.serial, "g-200-0001-00001-0000000");
        assert_eq!(row.cents, 250);
        assert_eq!(row.layout, "5:PAHB/1:AB");
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
    }
}
