//! The Maxi referee: reads a layout under the rules of SPEC §2.2 and §3 and says what it wins.
//!
//! Written from the rules only; it shares nothing with the synthesizer but [`MaxiParams`]. It
//! reads untrusted files, so every malformed input is an error naming the rule, never a panic,
//! and it allocates nothing on the success path because it runs on every ticket twice (when a
//! block is made and when it is verified).

use super::params::{
    multiplier_index, MaxiParams, BONUS_CELLS, MAX_BONUS_BEES, MAX_OTHER, MULTIPLIERS, ROWS,
    ROW_LEN, WINNING_P,
};
use crate::game::Stake;
use crate::mechanic::{Decoder, LayoutError};
use crate::money::AmountTable;
use rust_decimal::Decimal;
use std::fmt;

/// Decodes Maxi Ruche d'or layouts for one stake.
#[derive(Debug, Clone)]
pub struct MaxiDecoder {
    params: MaxiParams,
}

impl MaxiDecoder {
    /// Builds the decoder for a stake; the message names the layout parameter at fault.
    pub fn new(stake: &Stake) -> Result<Self, String> {
        Ok(MaxiDecoder {
            params: MaxiParams::from_stake(stake)?,
        })
    }
}

impl Decoder for MaxiDecoder {
    fn decode(&self, layout: &str) -> Result<Decimal, LayoutError> {
        self.outcome(layout).map(|o| o.prize)
    }

    fn form(&self, layout: &str) -> Result<String, LayoutError> {
        self.outcome(layout).map(|o| o.form())
    }

    /// Two hives (the main one with an `E`, then its EXTRA hive) showing the longest bee and
    /// row amounts, then a bonus stage: `hive "|" hive "+" bonus`.
    fn max_layout_len(&self) -> usize {
        let row_amount = self.params.rows.max_text_len();
        let hive = self.params.bees.max_text_len()
            + 1
            + ROW_LEN
                .iter()
                .map(|len| row_amount + 1 + len)
                .sum::<usize>()
            + (ROWS - 1);
        2 * hive + 1 + 1 + BONUS_CELLS
    }
}

/// Cell classes, indices into a row's counts.
const NOT_A_CELL: u8 = 0;
const P: u8 = 1;
const A: u8 = 2;
const B: u8 = 3;
const F: u8 = 4;
const E: u8 = 5;
const Q: u8 = 6;
const MULT: u8 = 7;
const CLASSES: usize = 8;

/// The class of every byte: a row is classified with one table look-up per cell.
const CELL_CLASS: [u8; 256] = {
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
fn is_cell(text: &str, pos: usize) -> bool {
    text.as_bytes()
        .get(pos)
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

/// A read position in the layout.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// What stands at the cursor, for messages: `'x' at byte 12` or `the end of the layout`.
    fn found(&self) -> String {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            Some(c) => format!("{c:?} at byte {}", self.pos),
            None => "the end of the layout".into(),
        }
    }

    /// Reads a canonical amount of `table` followed by `sep`, and skips both.
    fn amount(
        &mut self,
        table: &AmountTable,
        sep: u8,
        what: &dyn Fn() -> String,
        allowed: &str,
    ) -> Result<Decimal, LayoutError> {
        let start = self.pos;
        while let Some(b'0'..=b'9' | b'.') = self.peek() {
            self.pos += 1;
        }
        // Only ASCII was skipped, so both ends are character boundaries.
        let text = self.text.get(start..self.pos).unwrap_or("");
        if text.is_empty() {
            return Err(LayoutError::new(format!(
                "{}: the amount is missing (found {})",
                what(),
                self.found()
            )));
        }
        if self.peek() != Some(sep) {
            return Err(LayoutError::new(format!(
                "{}: expected '{}' after the amount {text}, found {}",
                what(),
                char::from(sep),
                self.found()
            )));
        }
        let amount = table.lookup(text).ok_or_else(|| {
            LayoutError::new(format!(
                "{}: amount '{text}' is not one of the {allowed} written canonically",
                what()
            ))
        })?;
        self.pos += 1;
        Ok(amount)
    }
}

impl MaxiDecoder {
    /// Reads the whole layout; every rule of SPEC §3 is checked here.
    fn outcome(&self, layout: &str) -> Result<Outcome, LayoutError> {
        let mut c = Cursor {
            text: layout,
            pos: 0,
        };
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
        let hive_win = main.win + extra.map_or(Decimal::ZERO, |x| x.win);
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
        let bee_amount = c.amount(
            &self.params.bees,
            b'#',
            &|| format!("{which}, bee amount at the top"),
            "bee_amounts",
        )?;
        let mut wins = HiveWins::default();
        let mut bees = 0usize;
        let mut es = 0usize;
        for (r, &len) in ROW_LEN.iter().enumerate() {
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
            let amount = c.amount(
                &self.params.rows,
                b':',
                &|| format!("{which}, row {row}"),
                "row_amounts",
            )?;
            // The row is exactly `len` cells: classify them with a table (no branch per cell),
            // then make sure the next byte is not one more cell.
            let bytes = c.text.as_bytes();
            let end = c.pos + len;
            let mut counts = [0usize; CLASSES];
            let mut mult_cell = 0u8;
            for &cell in bytes.get(c.pos..end).unwrap_or(&[]) {
                let class = CELL_CLASS[usize::from(cell)];
                counts[usize::from(class)] += 1;
                if class == MULT {
                    mult_cell = cell;
                }
            }
            if end > bytes.len() || counts[usize::from(NOT_A_CELL)] > 0 || is_cell(c.text, end) {
                return Err(self.bad_row(c, which, row, len));
            }
            c.pos = end;
            let p = counts[usize::from(P)];
            let a = counts[usize::from(A)];
            let b = counts[usize::from(B)];
            let mults = counts[usize::from(MULT)];
            es += counts[usize::from(E)];
            bees += counts[usize::from(Q)];
            let mult = multiplier_index(mult_cell);
            if p > WINNING_P {
                return Err(LayoutError::new(format!(
                    "{which}, row {row}: {p} P; a row holds at most three P"
                )));
            }
            if a > MAX_OTHER || b > MAX_OTHER {
                let (count, sym) = if a > MAX_OTHER { (a, 'A') } else { (b, 'B') };
                return Err(LayoutError::new(format!(
                    "{which}, row {row}: {count} {sym}; a row holds at most two A and two B (three would show that the choice matters)"
                )));
            }
            if mults > 1 {
                return Err(LayoutError::new(format!(
                    "{which}, row {row}: {mults} multipliers; a row holds at most one multiplier"
                )));
            }
            if p == WINNING_P {
                match mult {
                    Some(i) => {
                        wins.mult_rows[i] += 1;
                        wins.win += amount * Decimal::from(MULTIPLIERS[i].1);
                    }
                    None => {
                        wins.plain_rows += 1;
                        wins.win += amount;
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
            wins.win += bee_amount;
        }
        wins.has_e = es == 1;
        Ok(wins)
    }

    /// The error for a row whose cells are not exactly `len` cells: counts them as written.
    fn bad_row(&self, c: &Cursor<'_>, which: Which, row: usize, len: usize) -> LayoutError {
        let start = c.pos;
        let mut end = start;
        while is_cell(c.text, end) {
            end += 1;
        }
        let stop = Cursor {
            text: c.text,
            pos: end,
        };
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
