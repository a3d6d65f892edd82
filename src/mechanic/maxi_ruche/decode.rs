//! The Maxi referee: reads a layout under the rules of SPEC §2.2 and §3 and says what it wins.
//!
//! Written from the rules only; it shares nothing with the synthesizer but [`MaxiParams`]. It
//! reads untrusted files, so every malformed input is an error naming the rule, never a panic,
//! and it allocates nothing on the success path because it runs on every ticket twice (when a
//! block is made and when it is verified).

use super::params::{multiplier_index, MaxiParams, BONUS_CELLS, MAX_BONUS_BEES, MULTIPLIERS};
use crate::mechanic::hive::{
    count_cells, limit_bias, over_limits, packed_count, read_row, row_wins, RowFault, MAX_OTHER,
    NOT_A_CELL, ROWS, ROW_LENGTHS, ROW_WIN,
};
use crate::mechanic::{add_wins, multiply_win, Cursor, LayoutError};
use crate::money::AmountTable;
use crate::untrusted::shown;
use rust_decimal::Decimal;
use std::fmt;

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

/// Which hive is being read, for messages and for the E rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Main,
    Extra,
}

impl fmt::Display for Which {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Which::Main => "main hive",
            Which::Extra => "EXTRA hive",
        })
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

/// Reads a canonical amount of `table` followed by `sep`, and skips both.
#[inline]
fn amount(
    c: &mut Cursor<'_>,
    table: &AmountTable,
    sep: u8,
    what: &dyn Fn() -> String,
    allowed: &str,
) -> Result<Decimal, LayoutError> {
    // Fast path: the text up to the separator is an amount of the table. Table texts are
    // digits and '.', so this is exactly "an amount of the table, then `sep`".
    if let Some(text) = c.before(sep) {
        if let Some(amount) = table.lookup_bytes(text) {
            c.pos += text.len() + 1;
            return Ok(amount);
        }
    }
    Err(amount_error(c, table, sep, what, allowed))
}

/// Why the amount at the cursor is refused. Cold: kept out of the scanning code.
#[cold]
#[inline(never)]
fn amount_error(
    c: &mut Cursor<'_>,
    table: &AmountTable,
    sep: u8,
    what: &dyn Fn() -> String,
    allowed: &str,
) -> LayoutError {
    let start = c.pos;
    while let Some(b'0'..=b'9' | b'.') = c.peek() {
        c.pos += 1;
    }
    let text = &c.text()[start..c.pos];
    if text.is_empty() {
        return LayoutError::new(format!(
            "{}: the amount is missing (found {})",
            what(),
            c.found()
        ));
    }
    if c.peek() != Some(sep) {
        return LayoutError::new(format!(
            "{}: expected '{}' after the amount {}, found {}",
            what(),
            char::from(sep),
            shown(text),
            c.found()
        ));
    }
    debug_assert!(table.lookup_bytes(text).is_none());
    LayoutError::new(format!(
        "{}: amount {} is not one of the {allowed} written canonically",
        what(),
        shown(text)
    ))
}

impl MaxiDecoder {
    /// Reads the whole layout; every rule of SPEC §3 is checked here.
    fn outcome(&self, layout: &[u8]) -> Result<Outcome, LayoutError> {
        let mut c = Cursor::new(layout);
        let main = self.hive(&mut c, Which::Main)?;
        let extra = if c.peek() == Some(b'|') {
            if !main.has_e {
                return Err(LayoutError::new(
                    "an EXTRA hive ('|') follows but the main hive has no E: an EXTRA hive is opened only by an E",
                ));
            }
            c.pos += 1;
            Some(self.hive(&mut c, Which::Extra)?)
        } else {
            if main.has_e {
                return Err(LayoutError::new(format!(
                    "the main hive has an E but no EXTRA hive follows: expected '|' and a hive, found {}",
                    c.found()
                )));
            }
            None
        };
        let hive_win = add_wins(main.win, extra.map_or(Decimal::ZERO, |x| x.win))?;
        let mut bonus_bees = None;
        let mut prize = hive_win;
        match c.peek() {
            Some(b'+') => {
                if !hive_win.is_zero() {
                    return Err(LayoutError::new(
                        "a bonus stage ('+') follows hives that win: the bonus stage is only for tickets whose hives win nothing",
                    ));
                }
                c.pos += 1;
                let bees = self.bonus(&mut c)?;
                bonus_bees = Some(bees);
                prize = self.params.bonus[bees];
            }
            None => {
                if hive_win.is_zero() {
                    return Err(LayoutError::new(
                        "the bonus stage is missing: hives that win nothing must be followed by '+' and 12 bonus cells",
                    ));
                }
            }
            Some(b'|') => {
                return Err(LayoutError::new(format!(
                    "a second EXTRA hive starts at {}: a ticket has at most one EXTRA hive",
                    c.found()
                )));
            }
            Some(_) => {
                return Err(LayoutError::new(format!(
                    "unexpected {} after the {}: expected '|', '+' or the end",
                    c.found(),
                    if extra.is_some() {
                        "EXTRA hive"
                    } else {
                        "main hive"
                    }
                )));
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
        let bee_amount = amount(
            c,
            &self.params.bees,
            b'#',
            &|| format!("{which}, bee amount at the top"),
            "bee_amounts",
        )?;
        let mut wins = HiveWins::default();
        let mut bees = 0usize;
        let mut es = 0usize;
        for (r, &len) in ROW_LENGTHS.iter().enumerate() {
            let row = r + 1;
            if r > 0 {
                if c.peek() != Some(b'/') {
                    return Err(LayoutError::new(format!(
                        "{which}, row {r}: expected '/' and row {row} of {ROWS}, found {}",
                        c.found()
                    )));
                }
                c.pos += 1;
            }
            let amount = amount(
                c,
                &self.params.rows,
                b':',
                &|| format!("{which}, row {row}"),
                "row_amounts",
            )?;
            // The row is exactly `len` cells: classify them with a table (no branch per cell),
            // then make sure the next byte is not one more cell.
            let bytes = c.text();
            let end = c.pos + len;
            let cells = bytes.get(c.pos..end).unwrap_or(&[]);
            let counts: [u8; CLASSES] = count_cells(cells, &CELL_CLASS);
            if end > bytes.len() || counts[usize::from(NOT_A_CELL)] > 0 || is_cell(bytes, end) {
                return Err(self.bad_row(c, which, row, len));
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
                RowFault::TooManyP(p) => LayoutError::new(format!(
                    "{which}, row {row}: {p} P; a row holds at most three P"
                )),
                RowFault::TooManyOthers(count, sym) => LayoutError::new(format!(
                    "{which}, row {row}: {count} {sym}; a row holds at most two A and two B (three would show that the choice matters)"
                )),
            })?;
            if mults > 1 {
                return Err(LayoutError::new(format!(
                    "{which}, row {row}: {mults} multipliers; a row holds at most one multiplier"
                )));
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
            return Err(LayoutError::new(format!(
                "{which}: {bees} bees (Q); a hive holds at most one bee"
            )));
        }
        if which == Which::Extra && es > 0 {
            return Err(LayoutError::new(
                "EXTRA hive: holds an E; only the main hive may hold an E",
            ));
        }
        if es > 1 {
            return Err(LayoutError::new(format!(
                "{which}: {es} E; the main hive holds at most one E"
            )));
        }
        if bees == 1 {
            wins.bee = true;
            wins.win = add_wins(wins.win, bee_amount)?;
        }
        wins.has_e = es == 1;
        Ok(wins)
    }

    /// The error for a row whose cells are not exactly `len` cells: counts them as written.
    fn bad_row(&self, c: &Cursor<'_>, which: Which, row: usize, len: usize) -> LayoutError {
        let start = c.pos;
        let mut end = start;
        while is_cell(c.text(), end) {
            end += 1;
        }
        let mut stop = *c;
        stop.pos = end;
        let hint = match stop.peek() {
            Some(b'/' | b'|' | b'+') | None => String::new(),
            Some(_) => format!(
                " ({} is not a cell: cells are P A B F E Q 2 3 4 5 6 X)",
                stop.found()
            ),
        };
        LayoutError::new(format!(
            "{which}, row {row}: {} cells, expected {len}{hint}",
            end - start
        ))
    }

    /// Reads the 12 bonus cells, which must end the layout; returns the number of bees.
    fn bonus(&self, c: &mut Cursor<'_>) -> Result<usize, LayoutError> {
        let start = c.pos;
        let mut bees = 0;
        while let Some(cell) = c.peek() {
            match cell {
                b'Q' => bees += 1,
                b'.' => {}
                _ => {
                    return Err(LayoutError::new(format!(
                        "bonus stage: {} is not a bonus cell (Q or .); nothing may follow the bonus stage",
                        c.found()
                    )))
                }
            }
            c.pos += 1;
        }
        let n = c.pos - start;
        if n != BONUS_CELLS {
            return Err(LayoutError::new(format!(
                "bonus stage: {n} cells, expected {BONUS_CELLS}"
            )));
        }
        if bees > MAX_BONUS_BEES {
            return Err(LayoutError::new(format!(
                "bonus stage: {bees} bees; the bonus stage shows at most {MAX_BONUS_BEES} bees"
            )));
        }
        Ok(bees)
    }
}
