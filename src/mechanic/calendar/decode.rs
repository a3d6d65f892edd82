//! The referee: reads a calendar layout under the published rules (SPEC §2.3 and §3).
//!
//! Written from the rules alone, without the synthesizer: it shares only [`CalendarParams`].
//! It reads untrusted files, so it never panics on a layout, and it runs on every emitted
//! ticket and again in `verify`, so a valid layout is read in one pass without allocating.

use super::params::{CalendarParams, CLOVER_MAX, CLOVER_NUMBERS, CLOVER_WIN, MONTHS};
use crate::mechanic::error::quoted_char;
use crate::mechanic::{add_wins, Cursor, Expected, LayoutError, Quoted};
use crate::money::{parse_canonical, AmountTable};
use rust_decimal::Decimal;
use std::sync::Arc;
use thiserror::Error;

/// Decodes `month ( "/" month ){11} "|" clover` layouts for one stake.
#[derive(Debug, Clone)]
pub struct CalendarDecoder {
    /// Bit `i` set when letter `'A' + i` is a symbol: one test per cell, no table scan.
    symbols: u32,
    /// The symbols as text, for errors (shared with them, not copied).
    symbol_list: Arc<str>,
    month_amounts: AmountTable,
    clover_amounts: AmountTable,
}

/// What a valid layout shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reading {
    prize: Decimal,
    winning_months: usize,
    clover_wins: bool,
}

impl CalendarDecoder {
    /// The decoder for checked parameters.
    pub(super) fn from_params(params: &CalendarParams) -> Self {
        let symbols = params
            .letters
            .iter()
            .fold(0u32, |mask, &l| mask | 1 << (l - b'A'));
        CalendarDecoder {
            symbols,
            symbol_list: Arc::from(params.letter_list()),
            month_amounts: params.month_amounts.clone(),
            clover_amounts: params.clover_amounts.clone(),
        }
    }

    fn is_symbol(&self, b: u8) -> bool {
        b.is_ascii_uppercase() && self.symbols & (1 << (b - b'A')) != 0
    }

    /// Reads the whole layout, or names the first rule it breaks.
    fn read(&self, layout: &[u8]) -> Result<Reading, LayoutError> {
        let mut cur = Cursor::new(layout);
        let mut prize = Decimal::ZERO;
        let mut winning_months = 0;
        for month in 1..=MONTHS {
            let first = self.symbol(&mut cur, month, 1)?;
            let second = self.symbol(&mut cur, month, 2)?;
            match cur.peek() {
                Some(b':') => cur.pos += 1,
                Some(b) if self.is_symbol(b) => {
                    return Err(CalendarRule::MoreThanTwoSymbols { month: nth(month) }.into())
                }
                _ => return Err(cur.unexpected(Expected::ColonAfterSymbols { month: nth(month) })),
            }
            let amount = amount(
                &mut cur,
                &self.month_amounts,
                AmountPlace::Month(nth(month)),
            )?;
            // Delimiter: '/' between months, '|' before the clover.
            match (cur.peek(), month < MONTHS) {
                (Some(b'/'), true) | (Some(b'|'), false) => cur.pos += 1,
                (Some(b'|'), true) => {
                    return Err(CalendarRule::TooFewMonths { months: nth(month) }.into())
                }
                (Some(b'/'), false) => return Err(CalendarRule::TooManyMonths.into()),
                (None, _) => return Err(CalendarRule::EndsAfterMonth { month: nth(month) }.into()),
                (Some(_), true) => {
                    return Err(cur.unexpected(Expected::SlashAfterMonth { month: nth(month) }))
                }
                (Some(_), false) => return Err(cur.unexpected(Expected::CloverAfterDecember)),
            }
            // Rule 4.3.2: two identical symbols win the month's amount.
            if first == second {
                prize = add_wins(prize, amount)?;
                winning_months += 1;
            }
        }
        let mut numbers = [0u8; CLOVER_NUMBERS];
        for (i, number) in numbers.iter_mut().enumerate() {
            *number = clover_number(&mut cur, nth(i + 1))?;
            let last = i + 1 == CLOVER_NUMBERS;
            match cur.peek() {
                Some(b'-') if !last => cur.pos += 1,
                Some(b':') if last => cur.pos += 1,
                Some(b':') => {
                    return Err(CalendarRule::TooFewCloverNumbers {
                        numbers: nth(i + 1),
                    }
                    .into())
                }
                Some(b'-') => return Err(CalendarRule::TooManyCloverNumbers.into()),
                None => return Err(CalendarRule::EndsAfterCloverNumber { nth: nth(i + 1) }.into()),
                Some(_) if last => return Err(cur.unexpected(Expected::ColonAfterCloverNumbers)),
                Some(_) => {
                    return Err(cur.unexpected(Expected::DashAfterCloverNumber { nth: nth(i + 1) }))
                }
            }
        }
        // SPEC §3: the clover numbers are distinct.
        for i in 0..CLOVER_NUMBERS {
            if numbers[..i].contains(&numbers[i]) {
                return Err(CalendarRule::CloverNumberTwice { number: numbers[i] }.into());
            }
        }
        let clover_amount = amount(&mut cur, &self.clover_amounts, AmountPlace::Clover)?;
        if cur.peek().is_some() {
            return Err(cur.unexpected(Expected::EndAfterClover));
        }
        // Rule 4.4.2: a 13 among the numbers wins the clover's amount.
        let clover_wins = numbers.contains(&CLOVER_WIN);
        if clover_wins {
            prize = add_wins(prize, clover_amount)?;
        }
        Ok(Reading {
            prize,
            winning_months,
            clover_wins,
        })
    }

    /// Reads symbol `nth` (1 or 2) of `month`.
    #[inline]
    fn symbol(&self, cur: &mut Cursor, month: usize, nth: usize) -> Result<u8, LayoutError> {
        match cur.peek() {
            Some(b) if self.is_symbol(b) => {
                cur.pos += 1;
                Ok(b)
            }
            _ => Err(self.symbol_error(cur, month, nth)),
        }
    }

    /// Why the symbol at the cursor is refused. Cold: kept out of the scanning code.
    #[cold]
    #[inline(never)]
    fn symbol_error(&self, cur: &Cursor, month: usize, symbol: usize) -> LayoutError {
        let month = nth(month);
        match (cur.peek(), cur.here()) {
            (Some(b':'), _) => CalendarRule::FewerThanTwoSymbols {
                month,
                symbols: nth(symbol - 1),
            },
            (Some(_), Some(found)) => CalendarRule::NotASymbol {
                month,
                nth: nth(symbol),
                found,
                symbols: Arc::clone(&self.symbol_list),
            },
            _ => CalendarRule::EndsInMonth { month },
        }
        .into()
    }
}

impl CalendarDecoder {
    /// The prize of a valid layout in cents, read in one pass over its bytes without
    /// allocating: the same rules as [`read`](Self::read), which a test compares it with.
    /// `None` for any layout it does not accept (or whose amounts are not whole cents): `read`
    /// then gives the verdict and names the rule.
    #[inline]
    pub(super) fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        let mut prize = 0u64;
        let mut at = 0;
        for month in 1..=MONTHS {
            let (first, second) = (*layout.get(at)?, *layout.get(at + 1)?);
            if !self.is_symbol(first)
                || !self.is_symbol(second)
                || layout.get(at + 2) != Some(&b':')
            {
                return None;
            }
            // The amount runs to the delimiter: '/' between months, '|' before the clover
            // (amount texts are digits and '.', so this is the digit run `read` takes).
            let delimiter = if month < MONTHS { b'/' } else { b'|' };
            let (amount, len) = self
                .month_amounts
                .lookup_cents_before(layout.get(at + 3..)?, delimiter)?;
            at += 3 + len + 1;
            // Rule 4.3.2: two identical symbols win the month's amount.
            if first == second {
                prize = prize.checked_add(amount)?;
            }
        }
        let mut numbers = [0u8; CLOVER_NUMBERS];
        for i in 0..CLOVER_NUMBERS {
            // 1 to 13 in plain decimal: one digit, or two without a leading zero.
            let digits = layout
                .get(at..)?
                .iter()
                .take(3)
                .take_while(|b| b.is_ascii_digit())
                .count();
            let value = match (digits, layout.get(at..at + digits)?) {
                (1, &[d]) => d - b'0',
                (2, &[d, e]) if d != b'0' => (d - b'0') * 10 + (e - b'0'),
                _ => return None,
            };
            if !(1..=CLOVER_MAX).contains(&value) || numbers[..i].contains(&value) {
                return None;
            }
            numbers[i] = value;
            let separator = if i + 1 < CLOVER_NUMBERS { b'-' } else { b':' };
            if layout.get(at + digits) != Some(&separator) {
                return None;
            }
            at += digits + 1;
        }
        // The clover amount runs to the end of the layout.
        let amount = self.clover_amounts.lookup_cents(layout.get(at..)?)?;
        // Rule 4.4.2: a 13 among the numbers wins the clover's amount.
        if numbers.contains(&CLOVER_WIN) {
            prize = prize.checked_add(amount)?;
        }
        Some(prize)
    }

    /// The prize a layout wins.
    pub(super) fn prize(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        self.read(layout).map(|r| r.prize)
    }

    /// Twelve months `sym sym ":" amount` joined by `/`, then `|` and the clover
    /// `n "-" n "-" n ":" amount` with two-digit numbers, every amount the longest allowed.
    pub(super) fn max_layout_len(&self) -> usize {
        let month = 2 + 1 + self.month_amounts.max_text_len();
        let number = CLOVER_MAX.to_string().len();
        let clover =
            CLOVER_NUMBERS * number + (CLOVER_NUMBERS - 1) + 1 + self.clover_amounts.max_text_len();
        MONTHS * month + (MONTHS - 1) + 1 + clover
    }

    /// How a layout shows its prize: `1 month`, `2 months + clover`, `clover`, `loss`.
    pub(super) fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        let r = self.read(layout)?;
        let months = match r.winning_months {
            0 => None,
            1 => Some("1 month".to_string()),
            n => Some(format!("{n} months")),
        };
        Ok(match (months, r.clover_wins) {
            (None, false) => "loss".to_string(),
            (None, true) => "clover".to_string(),
            (Some(m), false) => m,
            (Some(m), true) => format!("{m} + clover"),
        })
    }
}

/// A month or a clover number's place (1 to 12, 1 to 3) as an error holds it.
fn nth(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

/// A rule of Année de la chance (SPEC §2.3 and §3) that a layout breaks, with its place.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CalendarRule {
    /// A month shows fewer than its two symbols before `:`.
    #[error(
        "month {month} shows {symbols} symbol(s): a month shows exactly two symbols before ':'"
    )]
    FewerThanTwoSymbols {
        /// The month, from 1 (January).
        month: u8,
        /// The symbols it shows.
        symbols: u8,
    },
    /// A month shows more than its two symbols.
    #[error("month {month} shows more than two symbols: a month shows exactly two, then ':' and its amount")]
    MoreThanTwoSymbols {
        /// The month, from 1 (January).
        month: u8,
    },
    /// A month shows a character that is not one of the game's symbols where a symbol goes.
    #[error("month {month}, symbol {nth}: {} is not a symbol; the symbols are {symbols}", quoted_char(*.found))]
    NotASymbol {
        /// The month, from 1 (January).
        month: u8,
        /// The symbol's place in the month, 1 or 2.
        nth: u8,
        /// The character found (U+FFFD for bytes that are not UTF-8).
        found: char,
        /// The game's symbols, in the order of its pictures (`A, B, C`).
        symbols: Arc<str>,
    },
    /// The layout stops inside a month.
    #[error(
        "the layout ends in month {month}: it must show {MONTHS} months, then '|' and the clover"
    )]
    EndsInMonth {
        /// The month, from 1 (January).
        month: u8,
    },
    /// The layout stops after a month's amount, where the next month (or, after December,
    /// `|` and the clover) must follow.
    #[error("the layout ends after month {month}: it must show {MONTHS} months, then '|' and the clover")]
    EndsAfterMonth {
        /// The last month shown, from 1 (January).
        month: u8,
    },
    /// The clover (`|`) comes before the twelfth month.
    #[error("the layout shows {months} months before '|': it must show exactly {MONTHS} (January to December)")]
    TooFewMonths {
        /// The months shown.
        months: u8,
    },
    /// A thirteenth month follows December.
    #[error("the layout shows more than {MONTHS} months: it must show exactly {MONTHS}, then '|' and the clover")]
    TooManyMonths,
    /// The layout stops after the `:` where an amount goes.
    #[error("{place} has no amount: the layout ends after ':'")]
    EndsBeforeAmount {
        /// Whose amount.
        place: AmountPlace,
    },
    /// Something else than an amount follows the `:` where one goes.
    #[error("{place} has no amount after ':' (found {}); amounts are written like 6 or 0.5", quoted_char(*.found))]
    NoAmount {
        /// Whose amount.
        place: AmountPlace,
        /// The character found (U+FFFD for bytes that are not UTF-8).
        found: char,
    },
    /// An amount not written canonically (a leading or trailing zero, a lone `.`).
    #[error("{place}: amount {amount} is not written canonically (digits, no trailing zeros after '.', e.g. 6 or 0.5)")]
    NotCanonical {
        /// Whose amount.
        place: AmountPlace,
        /// The amount as written, quoted.
        amount: Quoted,
    },
    /// An amount that is not one of the stake's list for its place.
    #[error("{place}: amount {amount} is not one of the amounts this stake allows ({})", .place.key())]
    NotAnAllowedAmount {
        /// Whose amount.
        place: AmountPlace,
        /// The amount, written canonically.
        amount: String,
    },
    /// The layout stops where a clover number goes.
    #[error("the layout ends where clover number {nth} should be")]
    EndsBeforeCloverNumber {
        /// Which number, from 1.
        nth: u8,
    },
    /// A clover number written with a leading zero.
    #[error("clover number {nth} {number} has a leading zero: write numbers in plain decimal")]
    LeadingZero {
        /// Which number, from 1.
        nth: u8,
        /// The number as written, quoted.
        number: Quoted,
    },
    /// A clover number outside 1 to 13.
    #[error("clover number {nth} is {number}: clover numbers run from 1 to {CLOVER_MAX}")]
    CloverNumberOutOfRange {
        /// Which number, from 1.
        nth: u8,
        /// The number as written, quoted.
        number: Quoted,
    },
    /// The clover shows fewer than its three numbers before `:`.
    #[error("the clover shows {numbers} numbers: it must show exactly {CLOVER_NUMBERS}")]
    TooFewCloverNumbers {
        /// The numbers it shows.
        numbers: u8,
    },
    /// The clover shows more than its three numbers.
    #[error("the clover shows more than {CLOVER_NUMBERS} numbers: it must show exactly {CLOVER_NUMBERS}")]
    TooManyCloverNumbers,
    /// The layout stops after a clover number.
    #[error("the layout ends after clover number {nth}: the clover is n-n-n:amount")]
    EndsAfterCloverNumber {
        /// The last number shown, from 1.
        nth: u8,
    },
    /// The clover shows a number twice: its numbers are distinct.
    #[error("the clover shows {number} twice: its numbers must be distinct")]
    CloverNumberTwice {
        /// The number.
        number: u8,
    },
}

/// Where a calendar layout shows an amount: a month's, or the clover's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountPlace {
    /// The amount of a month, from 1 (January), from `month_amounts`.
    Month(u8),
    /// The clover's amount, from `clover_amounts`.
    Clover,
}

impl AmountPlace {
    /// The layout setting that lists the amounts allowed here.
    fn key(self) -> &'static str {
        match self {
            AmountPlace::Month(_) => "month_amounts",
            AmountPlace::Clover => "clover_amounts",
        }
    }
}

impl std::fmt::Display for AmountPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AmountPlace::Month(m) => write!(f, "month {m}"),
            AmountPlace::Clover => write!(f, "the clover"),
        }
    }
}

/// Reads a canonical amount that `table` allows; it runs up to the next byte that cannot be
/// part of an amount.
#[inline]
fn amount(
    cur: &mut Cursor,
    table: &AmountTable,
    what: AmountPlace,
) -> Result<Decimal, LayoutError> {
    // Fast path: the text up to the next delimiter ('/' between months, '|' before the
    // clover) or the end is an amount of the table. Table texts are digits and '.', so this is
    // exactly the digit run below when it is an amount; any other case takes the scan.
    let text = cur.before2(b'/', b'|');
    if let Some(value) = table.lookup_bytes(text) {
        cur.pos += text.len();
        return Ok(value);
    }
    let start = cur.pos;
    // A local index keeps the scan in registers.
    let all = cur.text();
    let mut at = start;
    while let Some(&b) = all.get(at) {
        if !(b.is_ascii_digit() || b == b'.') {
            break;
        }
        at += 1;
    }
    cur.pos = at;
    let bytes = all.get(start..at).unwrap_or(&[]);
    match table.lookup_bytes(bytes) {
        Some(value) => Ok(value),
        None => Err(amount_error(cur, start, what)),
    }
}

/// Why the amount starting at `start` is refused. Cold: kept out of the scanning code.
#[cold]
#[inline(never)]
fn amount_error(cur: &Cursor, start: usize, place: AmountPlace) -> LayoutError {
    let text = std::str::from_utf8(cur.text().get(start..cur.pos).unwrap_or(&[])).unwrap_or("");
    if text.is_empty() {
        match cur.here() {
            None => CalendarRule::EndsBeforeAmount { place },
            Some(found) => CalendarRule::NoAmount { place, found },
        }
    } else {
        match parse_canonical(text) {
            None => CalendarRule::NotCanonical {
                place,
                amount: Quoted::new(text),
            },
            Some(_) => CalendarRule::NotAnAllowedAmount {
                place,
                amount: text.to_string(),
            },
        }
    }
    .into()
}

/// Reads clover number `nth`: plain decimal from 1 to 13, no leading zero.
fn clover_number(cur: &mut Cursor, nth: u8) -> Result<u8, LayoutError> {
    let start = cur.pos;
    let mut value: u32 = 0;
    while let Some(b) = cur.peek().filter(u8::is_ascii_digit) {
        // Saturate: a long digit run is refused below, it must not overflow first.
        value = (value * 10 + u32::from(b - b'0')).min(1000);
        cur.pos += 1;
    }
    let digits = cur.pos - start;
    if digits == 0 {
        return Err(match cur.peek() {
            None => CalendarRule::EndsBeforeCloverNumber { nth }.into(),
            Some(_) => cur.unexpected(Expected::CloverNumber { nth }),
        });
    }
    let text = std::str::from_utf8(cur.text().get(start..cur.pos).unwrap_or(&[])).unwrap_or("");
    if digits > 1 && text.starts_with('0') {
        return Err(CalendarRule::LeadingZero {
            nth,
            number: Quoted::new(text),
        }
        .into());
    }
    match u8::try_from(value) {
        Ok(n) if (1..=CLOVER_MAX).contains(&n) => Ok(n),
        _ => Err(CalendarRule::CloverNumberOutOfRange {
            nth,
            number: Quoted::new(text),
        }
        .into()),
    }
}
