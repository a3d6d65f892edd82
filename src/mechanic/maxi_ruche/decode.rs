//! The Maxi referee: reads a layout under the rules of SPEC §2.2 and §3 and says what it wins.
//!
//! Written from the rules only; it shares nothing with the synthesizer but [`MaxiParams`]. It
//! reads untrusted files, so every malformed input is an error naming the rule, never a panic,
//! and it allocates nothing on the success path because it runs on every ticket twice (when a
//! block is made and when it is verified).

use super::params::{multiplier_index, MaxiParams, BONUS_CELLS, MAX_BONUS_BEES, MULTIPLIERS};
use crate::mechanic::hive::{
    count_cells, limit_bias, over_limits, packed_count, read_row, row_wins, HiveName, RowFault,
    RowPlace, MAX_OTHER, NOT_A_CELL, ROWS, ROW_LENGTHS, ROW_WIN,
};
use crate::mechanic::{add_wins, multiply_win, Cursor, Found, LayoutError, Quoted};
use crate::money::AmountTable;
use rust_decimal::Decimal;
use std::fmt;
use thiserror::Error;

/// Decodes Maxi Ruche d'or layouts for one stake.
#[derive(Debug, Clone)]
pub struct MaxiDecoder {
    params: MaxiParams,
    /// The bonus table in cents, by bees (`None`: not whole cents, every layout takes the
    /// `Decimal` path).
    bonus_cents: Option<[u64; MAX_BONUS_BEES + 1]>,
}

impl MaxiDecoder {
    /// The decoder for checked parameters.
    pub(super) fn from_params(params: &MaxiParams) -> Self {
        let mut bonus_cents = Some([0u64; MAX_BONUS_BEES + 1]);
        for (bees, &amount) in params.bonus.iter().enumerate() {
            match (crate::money::cents(amount), bonus_cents.as_mut()) {
                (Some(c), Some(table)) => table[bees] = c,
                _ => bonus_cents = None,
            }
        }
        MaxiDecoder {
            params: params.clone(),
            bonus_cents,
        }
    }

    /// The prize of a valid layout in cents, read in one pass over its bytes without
    /// allocating: the same rules as [`outcome`](Self::outcome), which a test compares it
    /// with. `None` for any layout it does not accept (or whose amounts are not whole cents):
    /// `outcome` then gives the verdict and names the rule.
    #[inline]
    pub(super) fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        let bonus = self.bonus_cents.as_ref()?;
        let mut at = 0;
        let (mut win, has_e) = self.hive_cents(layout, &mut at, Which::Main)?;
        if layout.get(at) == Some(&b'|') {
            if !has_e {
                return None;
            }
            at += 1;
            win = win.checked_add(self.hive_cents(layout, &mut at, Which::Extra)?.0)?;
        } else if has_e {
            return None;
        }
        match layout.get(at) {
            // The bonus stage: only after hives that win nothing, and it ends the layout.
            Some(b'+') if win == 0 => {
                let cells = layout.get(at + 1..)?;
                if cells.len() != BONUS_CELLS {
                    return None;
                }
                let mut bees = 0;
                for &cell in cells {
                    match cell {
                        b'Q' => bees += 1,
                        b'.' => {}
                        _ => return None,
                    }
                }
                bonus.get(bees).copied().filter(|_| bees <= MAX_BONUS_BEES)
            }
            None if win != 0 => Some(win),
            _ => None,
        }
    }

    /// Reads `amount "#" row ("/" row){6}` at `*at` and moves past it: the hive's win in cents
    /// and whether it holds its one `E`.
    ///
    /// The rules of a row are tested on its packed counts at once ([`ROW_BIAS`]), those of
    /// the hive on the sum of its rows' ([`HIVE_BIAS`]), and the verdict taken once at the
    /// end: a bad row is rare, and any still gives `None`.
    #[inline]
    fn hive_cents(&self, text: &[u8], at: &mut usize, which: Which) -> Option<(u64, bool)> {
        let mut pos = *at;
        let (bee_amount, after) = amount_cents(text, pos, &self.params.bees, b'#')?;
        pos = after;
        let (mut win, mut hive, mut bad) = (0u64, 0u64, false);
        for (r, &len) in ROW_LENGTHS.iter().enumerate() {
            if r > 0 {
                if text.get(pos) != Some(&b'/') {
                    return None;
                }
                pos += 1;
            }
            let row = read_row(text, pos, &self.params.rows, len, &CELL_CLASS)?;
            bad |= over_limits(row.counts, ROW_BIAS);
            hive += row.counts;
            // Exactly ROW_WIN P win the row's amount, times its multiplier if it shows one.
            if usize::from(packed_count(row.counts, usize::from(P))) == ROW_WIN {
                let won = if packed_count(row.counts, usize::from(MULT)) != 0 {
                    let i = row.cells.iter().find_map(|&cell| multiplier_index(cell))?;
                    row.cents.checked_mul(u64::from(MULTIPLIERS[i].1))?
                } else {
                    row.cents
                };
                win = win.checked_add(won)?;
            }
            pos = row.end;
        }
        // 37 cells: the hive's counts stay far below the limits' 128.
        let may_hold_e = usize::from(which == Which::Main);
        if bad || over_limits(hive, HIVE_BIAS[may_hold_e]) {
            return None;
        }
        if packed_count(hive, usize::from(Q)) == 1 {
            win = win.checked_add(bee_amount)?;
        }
        *at = pos;
        Some((win, packed_count(hive, usize::from(E)) == 1))
    }

    /// The prize a layout wins.
    pub(super) fn prize(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        self.outcome(layout).map(|o| o.prize)
    }

    /// How a layout shows its prize.
    pub(super) fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        self.outcome(layout).map(|o| o.form())
    }

    /// Two hives (the main one with an `E`, then its EXTRA hive) showing the longest bee and
    /// row amounts, then a bonus stage: `hive "|" hive "+" bonus`.
    pub(super) fn max_layout_len(&self) -> usize {
        let row_amount = self.params.rows.max_text_len();
        let hive = self.params.bees.max_text_len()
            + 1
            + ROW_LENGTHS
                .iter()
                .map(|len| row_amount + 1 + len)
                .sum::<usize>()
            + (ROWS - 1);
        2 * hive + 1 + 1 + BONUS_CELLS
    }
}

/// Cell classes, indices into a row's counts (0 is [`NOT_A_CELL`]).
pub(super) const P: u8 = 1;
const A: u8 = 2;
const B: u8 = 3;
const F: u8 = 4;
pub(super) const E: u8 = 5;
pub(super) const Q: u8 = 6;
pub(super) const MULT: u8 = 7;
const CLASSES: usize = 8;

/// The limits of a row's counts, for [`over_limits`]: no byte that is not a cell, at most
/// [`ROW_WIN`] `P`, at most [`MAX_OTHER`] `A` and `B` each ([`row_wins`]), at most one
/// multiplier.
const ROW_BIAS: u64 = {
    let mut limits = [u8::MAX; 8];
    limits[NOT_A_CELL as usize] = 0;
    limits[P as usize] = ROW_WIN as u8;
    limits[A as usize] = MAX_OTHER as u8;
    limits[B as usize] = MAX_OTHER as u8;
    limits[MULT as usize] = 1;
    limit_bias(limits)
};

/// The limits of a hive's counts, by the `E` it may hold (0 in an EXTRA hive, 1 in the
/// main one): at most one bee.
const HIVE_BIAS: [u64; 2] = {
    let mut limits = [u8::MAX; 8];
    limits[Q as usize] = 1;
    limits[E as usize] = 0;
    let extra = limit_bias(limits);
    limits[E as usize] = 1;
    [extra, limit_bias(limits)]
};

/// The class of every byte: a row is classified with one table look-up per cell.
pub(super) const CELL_CLASS: [u8; 256] = {
    let mut t = [NOT_A_CELL; 256];
    t[b'P' as usize] = P;
    t[b'A' as usize] = A;
    t[b'B' as usize] = B;
    t[b'F' as usize] = F;
    t[b'E' as usize] = E;
    t[b'Q' as usize] = Q;
    let mut i = 0;
    while i < MULTIPLIERS.len() {
        t[MULTIPLIERS[i].0 as usize] = MULT;
        i += 1;
    }
    t
};

/// True if the byte at `pos` is a hive cell.
#[inline]
fn is_cell(text: &[u8], pos: usize) -> bool {
    text.get(pos)
        .is_some_and(|&b| CELL_CLASS[usize::from(b)] != NOT_A_CELL)
}

/// Which hive is being read, for the E rule and for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Main,
    Extra,
}

impl Which {
    /// The hive as errors name it.
    fn name(self) -> HiveName {
        match self {
            Which::Main => HiveName::Main,
            Which::Extra => HiveName::Extra,
        }
    }
}

/// A rule of Maxi Ruche d'or (SPEC §2.2 and §3) that a layout breaks, with its place.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MaxiRule {
    /// No amount where a hive shows one (at its top, or at the start of a row).
    #[error("{place}: the amount is missing (found {found})")]
    AmountMissing {
        /// Where the amount belongs.
        place: AmountPlace,
        /// What stands there instead.
        found: Found,
    },
    /// An amount not followed by its separator (`#` after the bee amount, `:` after a row's).
    #[error("{place}: expected '{}' after the amount {amount}, found {found}", .place.separator())]
    NoSeparatorAfterAmount {
        /// Where the amount stands.
        place: AmountPlace,
        /// The amount as written, quoted.
        amount: Quoted,
        /// What stands after it.
        found: Found,
    },
    /// An amount that is not one of the stake's list for its place, written canonically.
    #[error("{place}: amount {amount} is not one of the {} written canonically", .place.key())]
    NotAnAllowedAmount {
        /// Where the amount stands.
        place: AmountPlace,
        /// The amount as written, quoted.
        amount: Quoted,
    },
    /// A row not followed by `/` and the next row: the hive has fewer than its 7 rows, or
    /// something else stands between two of them.
    #[error("{after}: expected '/' and row {} of {ROWS}, found {found}", .after.row + 1)]
    RowSeparatorMissing {
        /// The row read last.
        after: RowPlace,
        /// What stands after it.
        found: Found,
    },
    /// A row of another number of cells than its place in the hive has (4, 5, 6, 7, 6, 5, 4),
    /// or a row that holds a character that is not a cell.
    #[error("{row}: {cells} cells, expected {len}{}", not_a_cell_hint(.not_a_cell))]
    WrongCellCount {
        /// The row.
        row: RowPlace,
        /// The cells written before the first character that is not a cell.
        cells: usize,
        /// The cells the row has.
        len: usize,
        /// The character that ends the row, when it is not a cell and not a separator.
        not_a_cell: Option<Found>,
    },
    /// A row holds more than three `P`.
    #[error("{row}: {p} P; a row holds at most three P")]
    TooManyP {
        /// The row.
        row: RowPlace,
        /// Its `P`.
        p: usize,
    },
    /// A row holds three of `A` or of `B`, which would show the player that the choice of
    /// symbol mattered.
    #[error("{row}: {count} {symbol}; a row holds at most two A and two B (three would show that the choice matters)")]
    TooManyOthers {
        /// The row.
        row: RowPlace,
        /// The symbol, `A` or `B`.
        symbol: char,
        /// How many the row holds.
        count: usize,
    },
    /// A row holds more than one multiplier.
    #[error("{row}: {count} multipliers; a row holds at most one multiplier")]
    TooManyMultipliers {
        /// The row.
        row: RowPlace,
        /// Its multipliers.
        count: usize,
    },
    /// A hive holds more than one bee (`Q`).
    #[error("{hive}: {bees} bees (Q); a hive holds at most one bee")]
    TooManyBees {
        /// The hive.
        hive: HiveName,
        /// Its bees.
        bees: usize,
    },
    /// The EXTRA hive holds an `E`: only the main hive may open the EXTRA hive.
    #[error("EXTRA hive: holds an E; only the main hive may hold an E")]
    EInExtraHive,
    /// The main hive holds more than one `E`.
    #[error("main hive: {count} E; the main hive holds at most one E")]
    TooManyE {
        /// Its `E`.
        count: usize,
    },
    /// An EXTRA hive follows a main hive without an `E`.
    #[error("an EXTRA hive ('|') follows but the main hive has no E: an EXTRA hive is opened only by an E")]
    ExtraHiveWithoutE,
    /// The main hive holds an `E` but no EXTRA hive follows.
    #[error(
        "the main hive has an E but no EXTRA hive follows: expected '|' and a hive, found {found}"
    )]
    EWithoutExtraHive {
        /// What follows the main hive instead.
        found: Found,
    },
    /// A second EXTRA hive: a ticket has at most one.
    #[error("a second EXTRA hive starts at {found}: a ticket has at most one EXTRA hive")]
    SecondExtraHive {
        /// The `|` that starts it.
        found: Found,
    },
    /// Something other than an EXTRA hive, a bonus stage or the end follows the hives.
    #[error("unexpected {found} after the {hive}: expected '|', '+' or the end")]
    UnexpectedAfterHives {
        /// The last hive read.
        hive: HiveName,
        /// What follows it.
        found: Found,
    },
    /// A bonus stage follows hives that win: the bonus stage is only for tickets whose hives
    /// win nothing.
    #[error("a bonus stage ('+') follows hives that win: the bonus stage is only for tickets whose hives win nothing")]
    BonusAfterWin,
    /// Hives that win nothing without the bonus stage they must be followed by.
    #[error("the bonus stage is missing: hives that win nothing must be followed by '+' and 12 bonus cells")]
    BonusMissing,
    /// A character of the bonus stage that is neither a bee `Q` nor an empty cell `.`
    /// (nothing may follow the bonus stage).
    #[error(
        "bonus stage: {found} is not a bonus cell (Q or .); nothing may follow the bonus stage"
    )]
    NotABonusCell {
        /// The character.
        found: Found,
    },
    /// A bonus stage of another number of cells than 12.
    #[error("bonus stage: {cells} cells, expected {BONUS_CELLS}")]
    BonusCellCount {
        /// The cells written.
        cells: usize,
    },
    /// A bonus stage showing more bees than the rules allow.
    #[error("bonus stage: {bees} bees; the bonus stage shows at most {MAX_BONUS_BEES} bees")]
    TooManyBonusBees {
        /// The bees shown.
        bees: usize,
    },
}

/// ` ('x' at byte 12 is not a cell: …)` when a row ends on a character that is not a cell.
fn not_a_cell_hint(found: &Option<Found>) -> String {
    match found {
        Some(found) => format!(" ({found} is not a cell: cells are P A B F E Q 2 3 4 5 6 X)"),
        None => String::new(),
    }
}

/// Where a Maxi layout shows an amount: at the top of a hive (its bee amount), or at the start
/// of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountPlace {
    /// The bee amount at the top of a hive, from `bee_amounts`, followed by `#`.
    Bee(HiveName),
    /// A row's amount, from `row_amounts`, followed by `:`.
    Row(RowPlace),
}

impl AmountPlace {
    /// The byte that follows the amount.
    fn separator(self) -> char {
        match self {
            AmountPlace::Bee(_) => '#',
            AmountPlace::Row(_) => ':',
        }
    }

    /// The layout setting that lists the amounts allowed here.
    fn key(self) -> &'static str {
        match self {
            AmountPlace::Bee(_) => "bee_amounts",
            AmountPlace::Row(_) => "row_amounts",
        }
    }
}

impl fmt::Display for AmountPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AmountPlace::Bee(hive) => write!(f, "{hive}, bee amount at the top"),
            AmountPlace::Row(row) => write!(f, "{row}"),
        }
    }
}

/// What one hive wins, and how.
#[derive(Debug, Clone, Copy, Default)]
struct HiveWins {
    /// Winning rows without a multiplier.
    plain_rows: u8,
    /// Winning rows with a multiplier, counted by index in [`MULTIPLIERS`].
    mult_rows: [u8; MULTIPLIERS.len()],
    /// A bee in the hive.
    bee: bool,
    /// An `E` in the hive (main hive only).
    has_e: bool,
    /// The hive's total win.
    win: Decimal,
}

impl HiveWins {
    /// The winning parts as words, e.g. `["2 rows", "row x5", "bee"]`.
    fn parts(&self, parts: &mut Vec<String>) {
        match self.plain_rows {
            0 => {}
            1 => parts.push("row".into()),
            n => parts.push(format!("{n} rows")),
        }
        // Biggest multiplier first, so the text of a form does not depend on row order.
        for (i, (_, factor)) in MULTIPLIERS.iter().enumerate().rev() {
            match self.mult_rows[i] {
                0 => {}
                1 => parts.push(format!("row x{factor}")),
                n => parts.push(format!("{n} rows x{factor}")),
            }
        }
        if self.bee {
            parts.push("bee".into());
        }
    }
}

/// Everything a layout shows about its prize.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    main: HiveWins,
    extra: Option<HiveWins>,
    /// Bees of the bonus stage, if there is one.
    bonus_bees: Option<usize>,
    prize: Decimal,
}

impl Outcome {
    /// The form text: winning parts, no amounts, stable for a given way of winning.
    fn form(&self) -> String {
        let mut main = Vec::new();
        self.main.parts(&mut main);
        let mut extra = Vec::new();
        if let Some(x) = &self.extra {
            x.parts(&mut extra);
        }
        let mut text = main.join(" + ");
        if !extra.is_empty() {
            if !text.is_empty() {
                text.push_str(" + ");
            }
            text.push_str("EXTRA: ");
            text.push_str(&extra.join(" + "));
        }
        if !text.is_empty() {
            return text;
        }
        match self.bonus_bees {
            Some(n) if !self.prize.is_zero() => format!("bonus {n} bees"),
            _ if self.extra.is_some() => "loss, EXTRA".into(),
            _ => "loss".into(),
        }
    }
}

/// The amount of `table`, in cents, written at `at` and followed by `sep`, and where the
/// bytes after `sep` start.
#[inline]
fn amount_cents(text: &[u8], at: usize, table: &AmountTable, sep: u8) -> Option<(u64, usize)> {
    let (cents, len) = table.lookup_cents_before(text.get(at..)?, sep)?;
    Some((cents, at + len + 1))
}

/// Reads a canonical amount of `table` followed by `sep`, and skips both; `place` names it in
/// errors.
#[inline]
fn amount(
    c: &mut Cursor<'_>,
    table: &AmountTable,
    sep: u8,
    place: AmountPlace,
) -> Result<Decimal, LayoutError> {
    // Fast path: the text up to the separator is an amount of the table. Table texts are
    // digits and '.', so this is exactly "an amount of the table, then `sep`".
    if let Some(text) = c.before(sep) {
        if let Some(amount) = table.lookup_bytes(text) {
            c.pos += text.len() + 1;
            return Ok(amount);
        }
    }
    Err(amount_error(c, table, sep, place))
}

/// Why the amount at the cursor is refused. Cold: kept out of the scanning code.
#[cold]
#[inline(never)]
fn amount_error(
    c: &mut Cursor<'_>,
    table: &AmountTable,
    sep: u8,
    place: AmountPlace,
) -> LayoutError {
    let start = c.pos;
    while let Some(b'0'..=b'9' | b'.') = c.peek() {
        c.pos += 1;
    }
    let text = &c.text()[start..c.pos];
    if text.is_empty() {
        return MaxiRule::AmountMissing {
            place,
            found: c.found(),
        }
        .into();
    }
    if c.peek() != Some(sep) {
        return MaxiRule::NoSeparatorAfterAmount {
            place,
            amount: Quoted::new(text),
            found: c.found(),
        }
        .into();
    }
    debug_assert!(table.lookup_bytes(text).is_none());
    MaxiRule::NotAnAllowedAmount {
        place,
        amount: Quoted::new(text),
    }
    .into()
}

impl MaxiDecoder {
    /// Reads the whole layout; every rule of SPEC §3 is checked here.
    fn outcome(&self, layout: &[u8]) -> Result<Outcome, LayoutError> {
        let mut c = Cursor::new(layout);
        let main = self.hive(&mut c, Which::Main)?;
        let extra = if c.peek() == Some(b'|') {
            if !main.has_e {
                return Err(MaxiRule::ExtraHiveWithoutE.into());
            }
            c.pos += 1;
            Some(self.hive(&mut c, Which::Extra)?)
        } else {
            if main.has_e {
                return Err(MaxiRule::EWithoutExtraHive { found: c.found() }.into());
            }
            None
        };
        let hive_win = add_wins(main.win, extra.map_or(Decimal::ZERO, |x| x.win))?;
        let mut bonus_bees = None;
        let mut prize = hive_win;
        match c.peek() {
            Some(b'+') => {
                if !hive_win.is_zero() {
                    return Err(MaxiRule::BonusAfterWin.into());
                }
                c.pos += 1;
                let bees = self.bonus(&mut c)?;
                bonus_bees = Some(bees);
                prize = self.params.bonus[bees];
            }
            None => {
                if hive_win.is_zero() {
                    return Err(MaxiRule::BonusMissing.into());
                }
            }
            Some(b'|') => {
                return Err(MaxiRule::SecondExtraHive { found: c.found() }.into());
            }
            Some(_) => {
                return Err(MaxiRule::UnexpectedAfterHives {
                    hive: if extra.is_some() {
                        HiveName::Extra
                    } else {
                        HiveName::Main
                    },
                    found: c.found(),
                }
                .into());
            }
        }
        Ok(Outcome {
            main,
            extra,
            bonus_bees,
            prize,
        })
    }

    /// Reads `amount "#" row ("/" row){6}`.
    fn hive(&self, c: &mut Cursor<'_>, which: Which) -> Result<HiveWins, LayoutError> {
        let bee_amount = amount(c, &self.params.bees, b'#', AmountPlace::Bee(which.name()))?;
        let mut wins = HiveWins::default();
        let mut bees = 0usize;
        let mut es = 0usize;
        for (r, &len) in ROW_LENGTHS.iter().enumerate() {
            let row = RowPlace::new(which.name(), r + 1);
            if r > 0 {
                if c.peek() != Some(b'/') {
                    return Err(MaxiRule::RowSeparatorMissing {
                        after: RowPlace::new(which.name(), r),
                        found: c.found(),
                    }
                    .into());
                }
                c.pos += 1;
            }
            let amount = amount(c, &self.params.rows, b':', AmountPlace::Row(row))?;
            // The row is exactly `len` cells: classify them with a table (no branch per cell),
            // then make sure the next byte is not one more cell.
            let bytes = c.text();
            let end = c.pos + len;
            let cells = bytes.get(c.pos..end).unwrap_or(&[]);
            let counts: [u8; CLASSES] = count_cells(cells, &CELL_CLASS);
            if end > bytes.len() || counts[usize::from(NOT_A_CELL)] > 0 || is_cell(bytes, end) {
                return Err(self.bad_row(c, row, len));
            }
            let count = |class: u8| usize::from(counts[usize::from(class)]);
            let mults = count(MULT);
            let mult = if mults == 0 {
                None
            } else {
                cells.iter().find_map(|&cell| multiplier_index(cell))
            };
            c.pos = end;
            es += count(E);
            bees += count(Q);
            let winning = row_wins(count(P), count(A), count(B)).map_err(|fault| match fault {
                RowFault::TooManyP(p) => MaxiRule::TooManyP { row, p },
                RowFault::TooManyOthers(count, symbol) => {
                    MaxiRule::TooManyOthers { row, symbol, count }
                }
            })?;
            if mults > 1 {
                return Err(MaxiRule::TooManyMultipliers { row, count: mults }.into());
            }
            if winning {
                match mult {
                    Some(i) => {
                        wins.mult_rows[i] += 1;
                        wins.win = add_wins(wins.win, multiply_win(amount, MULTIPLIERS[i].1)?)?;
                    }
                    None => {
                        wins.plain_rows += 1;
                        wins.win = add_wins(wins.win, amount)?;
                    }
                }
            }
        }
        if bees > 1 {
            return Err(MaxiRule::TooManyBees {
                hive: which.name(),
                bees,
            }
            .into());
        }
        if which == Which::Extra && es > 0 {
            return Err(MaxiRule::EInExtraHive.into());
        }
        if es > 1 {
            // Only the main hive gets here: an E in the EXTRA hive is refused above.
            return Err(MaxiRule::TooManyE { count: es }.into());
        }
        if bees == 1 {
            wins.bee = true;
            wins.win = add_wins(wins.win, bee_amount)?;
        }
        wins.has_e = es == 1;
        Ok(wins)
    }

    /// The error for a row whose cells are not exactly `len` cells: counts them as written.
    #[cold]
    #[inline(never)]
    fn bad_row(&self, c: &Cursor<'_>, row: RowPlace, len: usize) -> LayoutError {
        let start = c.pos;
        let mut end = start;
        while is_cell(c.text(), end) {
            end += 1;
        }
        let mut stop = *c;
        stop.pos = end;
        let not_a_cell = match stop.peek() {
            Some(b'/' | b'|' | b'+') | None => None,
            Some(_) => Some(stop.found()),
        };
        MaxiRule::WrongCellCount {
            row,
            cells: end - start,
            len,
            not_a_cell,
        }
        .into()
    }

    /// Reads the 12 bonus cells, which must end the layout; returns the number of bees.
    fn bonus(&self, c: &mut Cursor<'_>) -> Result<usize, LayoutError> {
        let start = c.pos;
        let mut bees = 0;
        while let Some(cell) = c.peek() {
            match cell {
                b'Q' => bees += 1,
                b'.' => {}
                _ => return Err(MaxiRule::NotABonusCell { found: c.found() }.into()),
            }
            c.pos += 1;
        }
        let n = c.pos - start;
        if n != BONUS_CELLS {
            return Err(MaxiRule::BonusCellCount { cells: n }.into());
        }
        if bees > MAX_BONUS_BEES {
            return Err(MaxiRule::TooManyBonusBees { bees }.into());
        }
        Ok(bees)
    }
}
