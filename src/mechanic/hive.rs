//! The hive both hive games are played on (La ruche d'or, SPEC 2.1; Maxi Ruche d'or, SPEC
//! 2.2): its shape, and the reading of a row's cells that both decoders share.
//!
//! A row is `amount ":" cells`; it wins when it holds exactly [`ROW_WIN`] `P`, may not hold
//! more, and holds at most [`MAX_OTHER`] `A` and `B` each (three would show the player that
//! the choice mattered). What else a cell may be differs per game: each decoder gives its own
//! class table to [`count_cells`] and [`read_row`].
//!
//! [`read_row`] is the one reading of a row outside the referees: both decoders' one-pass
//! `prize_cents`, both explainers' `features` (the report's fast path) and their `explain`
//! ([`crate::mechanic::explain`]'s `hive_rows`) read every row with it. The referees (`decode`
//! of each hive mechanic) read their rows on their own, from the rules, with the messages that
//! name the rule a row breaks: they are what the fast readings are compared with (unit and
//! property tests, and the fuzz targets of `fuzz/`), so they must not share the reading under
//! test.

use crate::money::AmountTable;

/// Rows of a hive.
pub const ROWS: usize = 7;
/// Cells per row, top to bottom (Article 4.1: 7 rows, 37 cells).
pub const ROW_LENGTHS: [usize; ROWS] = [4, 5, 6, 7, 6, 5, 4];
/// The longest row.
pub const MAX_ROW_LEN: usize = 7;
/// Cells of a hive.
pub const CELLS: usize = 37;
/// Number of `P` that make a winning row; a row never holds more.
pub const ROW_WIN: usize = 3;
/// Most `A` (or `B`) a row may hold: three would show that the player's choice mattered.
pub const MAX_OTHER: usize = 2;

/// Most amounts a hive game's amount lists (`row_amounts`, and Maxi's `bee_amounts`) may hold
/// (SPEC §6.1): the built-in games list 10 to 17. The synthesizers weigh every combination of
/// up to three amounts, so this bounds their start-up (docs/PERFORMANCE.md, "Definitions at their limits").
pub const MAX_HIVE_AMOUNTS: usize = 64;

/// Class 0 of every class table: a byte that is not a cell of the game.
pub const NOT_A_CELL: u8 = 0;

/// Counts the cells of a row by class: `counts[k]` is the number of cells of class `k`,
/// `counts[NOT_A_CELL]` the bytes that are not cells. The counts are kept in one register,
/// byte `k` for class `k`, one table look-up and one add per cell: random cells defeat branch
/// prediction, and counters in memory stalled each row on store forwarding (measured: a
/// fifth of the hive decoder's time). `N` is at most 8; a row is a few bytes (the callers give
/// at most [`MAX_ROW_LEN`]), and a count cannot reach 256 below 256 bytes.
#[inline]
pub fn count_cells<const N: usize>(cells: &[u8], class: &[u8; 256]) -> [u8; N] {
    const { assert!(N <= 8, "at most 8 classes fit the packed counts") };
    let mut counts = [0u8; N];
    if let Some(packed) = packed_counts(cells, class) {
        counts.copy_from_slice(&packed.to_le_bytes()[..N]);
    } else {
        for &c in cells {
            let k = usize::from(class[usize::from(c)]);
            counts[k] = counts[k].saturating_add(1);
        }
    }
    counts
}

/// The counts of [`count_cells`] as one word, byte `k` for class `k` (classes are taken
/// modulo 8), for the one-pass readers that test a row's limits on the word with
/// [`over_limits`] instead of a branch per count; `None` from 256 cells on, where a count
/// would spill into the next byte.
#[inline]
pub fn packed_counts(cells: &[u8], class: &[u8; 256]) -> Option<u64> {
    (cells.len() < 256).then(|| {
        cells.iter().fold(0u64, |acc, &c| {
            // The class is taken below 8: the shift stays below 64.
            acc + (1u64 << (8 * u32::from(class[usize::from(c)] & 7)))
        })
    })
}

/// The bias that [`over_limits`] adds to packed counts: byte `k` is `0x7f - limits[k]`, so
/// that a count above `limits[k]` (and at most `0x80 + limits[k]`) reaches the byte's top bit
/// and no byte carries into the next. Limits above 127 are taken as 127: counts of a row or a
/// hive are far below.
pub const fn limit_bias(limits: [u8; 8]) -> u64 {
    let mut bias = 0u64;
    let mut k = 0;
    while k < 8 {
        let limit = if limits[k] > 0x7f { 0x7f } else { limits[k] };
        bias |= ((0x7f - limit) as u64) << (8 * k);
        k += 1;
    }
    bias
}

/// Whether a class of packed counts (each count at most 128) is above its limit, the limits
/// given as [`limit_bias`]: one add and one mask for every class at once.
#[inline]
pub fn over_limits(packed: u64, bias: u64) -> bool {
    const TOP_BITS: u64 = 0x8080_8080_8080_8080;
    packed.wrapping_add(bias) & TOP_BITS != 0
}

/// The count of class `k` in packed counts.
#[inline]
pub fn packed_count(packed: u64, k: usize) -> u8 {
    packed.to_le_bytes()[k & 7]
}

/// One row of a hive as [`read_row`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    /// The index of the row's amount in its table ([`AmountTable::get`]).
    pub amount: usize,
    /// The row's amount in whole cents.
    pub cents: u64,
    /// The row's cells, exactly as many as the row has.
    pub cells: &'a [u8],
    /// The cells counted by class, packed ([`packed_counts`]): byte `k` is the count of class
    /// `k`, byte [`NOT_A_CELL`] the bytes that are not cells of the game.
    pub counts: u64,
    /// Where the row ends: the index of the byte after its last cell.
    pub end: usize,
}

/// Reads the row `amount ":" cells` of `len` cells that starts at `text[at]`, without
/// allocating: the amount, the cells and their counts by `class`, and where the row ends.
/// `None` when the bytes before the first `:` are not the canonical text of an amount of
/// `amounts` that is a whole number of cents, when fewer than `len` bytes follow the `:`, or
/// when the byte after them is a cell of the game (the row would be longer than `len`).
///
/// It does not judge the cells: a byte that is not a cell is counted in [`NOT_A_CELL`], and
/// the rules of a row ([`over_limits`], [`row_wins`]) and what separates rows (`/`) are the
/// caller's. Always inlined: it is most of the hive decoders' one-pass reading.
#[inline(always)]
pub fn read_row<'a>(
    text: &'a [u8],
    at: usize,
    amounts: &AmountTable,
    len: usize,
    class: &[u8; 256],
) -> Option<Row<'a>> {
    let rest = text.get(at..)?;
    let (amount, cents, amount_len) = match amounts.lookup_before(rest, b':') {
        Some(found) => found,
        None => amount_by_bytes(rest, amounts)?,
    };
    let start = at + amount_len + 1;
    let end = start + len;
    let cells = text.get(start..end)?;
    // `len` is a row's length (at most MAX_ROW_LEN), far below the 256 the packing holds.
    let counts = packed_counts(cells, class)?;
    if text
        .get(end)
        .is_some_and(|&b| class[usize::from(b)] != NOT_A_CELL)
    {
        return None;
    }
    Some(Row {
        amount,
        cents,
        cells,
        counts,
        end,
    })
}

/// The amount before the first `:` of `text` by a search and a comparison of texts: for what
/// [`AmountTable::lookup_before`] does not find in its packed table (a text it cannot pack, a
/// table without a hash, and every text that is not an amount). (index, cents, length).
#[cold]
#[inline(never)]
fn amount_by_bytes(text: &[u8], amounts: &AmountTable) -> Option<(usize, u64, usize)> {
    let colon = memchr::memchr(b':', text)?;
    let index = amounts.index_bytes(&text[..colon])?;
    let cents = crate::money::cents(amounts.get(index).0)?;
    Some((index, cents, colon))
}

/// A hive of a ticket, as errors name it: the main hive, or an EXTRA hive (La ruche d'or's up
/// to three are numbered from 1 in the order they follow the main hive; Maxi Ruche d'or has
/// one, unnumbered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiveName {
    /// The main hive, the first of the layout.
    Main,
    /// Maxi Ruche d'or's one EXTRA hive.
    Extra,
    /// La ruche d'or's EXTRA hive `n`, from 1.
    NthExtra(u8),
}

impl std::fmt::Display for HiveName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HiveName::Main => f.write_str("main hive"),
            HiveName::Extra => f.write_str("EXTRA hive"),
            HiveName::NthExtra(n) => write!(f, "EXTRA hive {n}"),
        }
    }
}

/// A row of a hive, as errors name it: `main hive, row 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowPlace {
    /// The hive.
    pub hive: HiveName,
    /// The row, from 1 at the top.
    pub row: u8,
}

impl RowPlace {
    /// Row `row` (from 1) of `hive`; a hive has 7 rows, far below a byte's 255.
    pub fn new(hive: HiveName, row: usize) -> Self {
        RowPlace {
            hive,
            row: u8::try_from(row).unwrap_or(u8::MAX),
        }
    }
}

impl std::fmt::Display for RowPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, row {}", self.hive, self.row)
    }
}

/// A row that breaks the `P`/`A`/`B` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFault {
    /// More than [`ROW_WIN`] `P`.
    TooManyP(usize),
    /// More than [`MAX_OTHER`] of the symbol (`'A'` or `'B'`).
    TooManyOthers(usize, char),
}

/// Whether a row with `p` `P`, `a` `A` and `b` `B` wins, or the rule it breaks.
#[inline]
pub fn row_wins(p: usize, a: usize, b: usize) -> Result<bool, RowFault> {
    if p > ROW_WIN {
        return Err(RowFault::TooManyP(p));
    }
    if a > MAX_OTHER {
        return Err(RowFault::TooManyOthers(a, 'A'));
    }
    if b > MAX_OTHER {
        return Err(RowFault::TooManyOthers(b, 'B'));
    }
    Ok(p == ROW_WIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hive_has_37_cells_in_7_rows() {
        assert_eq!(ROW_LENGTHS.iter().sum::<usize>(), CELLS);
        assert_eq!(ROW_LENGTHS.iter().max(), Some(&MAX_ROW_LEN));
    }

    #[test]
    fn cells_are_counted_by_class() {
        let mut class = [NOT_A_CELL; 256];
        class[usize::from(b'P')] = 1;
        class[usize::from(b'A')] = 2;
        class[usize::from(b'Z')] = 7;
        assert_eq!(count_cells::<8>(b"PPAxZ", &class), [1, 2, 1, 0, 0, 0, 0, 1]);
        assert_eq!(count_cells::<3>(b"", &class), [0, 0, 0]);
        let long = [b'P'; 255];
        assert_eq!(count_cells::<3>(&long, &class), [0, 255, 0]);
        let longer = [b'A'; 300];
        assert_eq!(count_cells::<3>(&longer, &class), [0, 0, 255]);
    }

    #[test]
    fn limits_are_tested_on_packed_counts() {
        // Class 0 at most 0, class 1 at most 3, class 2 at most 2, the others unlimited.
        let bias = limit_bias([0, 3, 2, 127, 200, 127, 127, 127]);
        let pack = |counts: [u8; 8]| u64::from_le_bytes(counts);
        assert!(!over_limits(pack([0, 3, 2, 127, 127, 0, 0, 127]), bias));
        assert!(over_limits(pack([0, 0, 0, 0, 128, 0, 0, 0]), bias));
        assert!(over_limits(pack([1, 0, 0, 0, 0, 0, 0, 0]), bias));
        assert!(over_limits(pack([0, 4, 0, 0, 0, 0, 0, 0]), bias));
        assert!(over_limits(pack([0, 0, 3, 0, 0, 0, 0, 0]), bias));
        assert!(over_limits(pack([0, 0, 0, 0, 0, 0, 0, 129]), bias));
        // Every count of every class against every limit it can be given.
        for k in 0..8 {
            for limit in 0..=127u8 {
                let mut limits = [127; 8];
                limits[k] = limit;
                for count in 0..=128u8 {
                    let mut counts = [0; 8];
                    counts[k] = count;
                    assert_eq!(
                        over_limits(pack(counts), limit_bias(limits)),
                        count > limit,
                        "class {k}, limit {limit}, count {count}"
                    );
                }
            }
        }
        let mut class = [NOT_A_CELL; 256];
        class[usize::from(b'P')] = 1;
        let packed = packed_counts(b"PPxP", &class);
        assert_eq!(packed.map(|p| packed_count(p, 1)), Some(3));
        assert_eq!(packed.map(|p| packed_count(p, 0)), Some(1));
        assert_eq!(packed_counts(&[b'P'; 256], &class), None);
    }

    /// A class table of the test rows: `P`, `A`, `B` and `H` are cells.
    fn test_classes() -> [u8; 256] {
        let mut class = [NOT_A_CELL; 256];
        for (k, &c) in b"PABH".iter().enumerate() {
            class[usize::from(c)] = k as u8 + 1;
        }
        class
    }

    #[test]
    fn a_row_is_read_with_its_amount_cells_and_counts() {
        let amounts = AmountTable::new(["2.5", "10"].map(|a| a.parse().unwrap()));
        let class = test_classes();
        let text = b"x10:PAPB/2.5:HHPxB|";
        let row = read_row(text, 1, &amounts, 4, &class).unwrap();
        assert_eq!((row.amount, row.cents, row.cells), (1, 1000, &b"PAPB"[..]));
        assert_eq!(row.counts, u64::from_le_bytes([0, 2, 1, 1, 0, 0, 0, 0]));
        assert_eq!(row.end, 8);
        // A byte that is not a cell is counted, not refused: the rules are the caller's.
        let row = read_row(text, 9, &amounts, 5, &class).unwrap();
        assert_eq!((row.cents, row.end), (250, 18));
        assert_eq!(packed_count(row.counts, usize::from(NOT_A_CELL)), 1);
    }

    #[test]
    fn a_row_that_is_not_amount_colon_cells_is_refused() {
        let amounts = AmountTable::new(["2.5", "10"].map(|a| a.parse().unwrap()));
        let class = test_classes();
        let read = |text: &'static [u8], len| read_row(text, 0, &amounts, len, &class);
        assert!(read(b"10:PAPB", 4).is_some());
        // Too few cells, one cell too many, a cell after the row.
        assert_eq!(read(b"10:PAP", 4), None);
        assert_eq!(read(b"10:PAPBA", 4), None);
        assert!(read(b"10:PAPB/", 4).is_some());
        // No colon, an amount not in the table, one not written canonically, none at all.
        assert_eq!(read(b"10PAPB", 4), None);
        assert_eq!(read(b"5:PAPB", 4), None);
        assert_eq!(read(b"10.0:PAPB", 4), None);
        assert_eq!(read(b"2.50:PAPB", 4), None);
        assert_eq!(read(b":PAPB", 4), None);
        assert_eq!(read(b"", 0), None);
        // Out of the text: no panic.
        assert_eq!(read_row(b"10:PAPB", 99, &amounts, 4, &class), None);
    }

    #[test]
    fn amounts_the_packed_table_cannot_hold_are_read_by_their_text() {
        // 20 digits: too long to pack, found by comparing texts.
        let long: rust_decimal::Decimal = "12345678901234567.89".parse().unwrap();
        let amounts = AmountTable::new([long, "1".parse().unwrap()]);
        let class = test_classes();
        let row = read_row(b"12345678901234567.89:PPPA", 0, &amounts, 4, &class).unwrap();
        assert_eq!((row.amount, row.cents), (1, 1_234_567_890_123_456_789));
        assert_eq!(row.end, 25);
        assert_eq!(
            read_row(b"12345678901234567.80:PPPA", 0, &amounts, 4, &class),
            None
        );
        // An amount that is not a whole number of cents has no fast reading.
        let amounts = AmountTable::new(["0.001".parse().unwrap()]);
        assert_eq!(read_row(b"0.001:PPPA", 0, &amounts, 4, &class), None);
    }

    #[test]
    fn the_row_rule() {
        assert_eq!(row_wins(3, 2, 2), Ok(true));
        assert_eq!(row_wins(2, 2, 2), Ok(false));
        assert_eq!(row_wins(4, 0, 0), Err(RowFault::TooManyP(4)));
        assert_eq!(row_wins(0, 3, 0), Err(RowFault::TooManyOthers(3, 'A')));
        assert_eq!(row_wins(0, 0, 3), Err(RowFault::TooManyOthers(3, 'B')));
    }
}
