//! The data the decoder and the synthesizer share: the symbol letters and the amounts a month
//! or the clover may show, read and checked from the stake's `layout` table.
//!
//! This is the only thing the two halves of the mechanic have in common, so that the decoder
//! stays an independent referee of what the synthesizer writes.

use crate::game::Stake;
use crate::mechanic::util::{amount_list, known_keys};
use crate::money::AmountTable;
use crate::untrusted::shown;

/// Months on a ticket, January to December.
pub const MONTHS: usize = 12;
/// Numbers on the bonus clover.
pub const CLOVER_NUMBERS: usize = 3;
/// Highest number the clover may show (numbers run from 1).
pub const CLOVER_MAX: u8 = 13;
/// The clover number that wins the clover's amount.
pub const CLOVER_WIN: u8 = 13;
/// Default for `max_winning_months`: more winning months than this would look contrived.
pub const DEFAULT_MAX_WINNING_MONTHS: usize = 4;
/// Upper bound for `max_winning_months`: keeps the precomputed decompositions small.
pub const MAX_WINNING_MONTHS: usize = 6;

/// The keys of the `layout` table this mechanic reads; anything else is a typo.
const KEYS: [&str; 4] = [
    "symbols",
    "month_amounts",
    "clover_amounts",
    "max_winning_months",
];

/// The checked layout parameters of one stake.
#[derive(Debug, Clone)]
pub struct CalendarParams {
    /// Symbol letters (ASCII uppercase), in the order of the picture list: neighbours look
    /// alike and make near misses.
    pub letters: Vec<u8>,
    /// The amounts a month may show.
    pub month_amounts: AmountTable,
    /// The amounts the clover may show.
    pub clover_amounts: AmountTable,
    /// Most winning months the synthesizer uses to show one prize (the rules set no limit; the
    /// decoder does not read this).
    pub max_winning_months: usize,
}

impl CalendarParams {
    /// Reads and checks the parameters; the message names the parameter at fault.
    pub fn from_stake(stake: &Stake) -> Result<Self, String> {
        let table = &stake.layout;
        known_keys(table, &KEYS, "calendar")?;
        let letters = symbols(table)?;
        let month_amounts = amount_list(table, "month_amounts")?;
        let clover_amounts = amount_list(table, "clover_amounts")?;
        // Layout synthesis stores amount indices in bytes.
        for (key, list) in [
            ("month_amounts", &month_amounts),
            ("clover_amounts", &clover_amounts),
        ] {
            if list.len() > usize::from(u8::MAX) {
                return Err(format!("'{key}' lists {} amounts: at most 255", list.len()));
            }
        }
        let max_winning_months = match table.get("max_winning_months") {
            None => DEFAULT_MAX_WINNING_MONTHS,
            Some(v) => v
                .as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (1..=MAX_WINNING_MONTHS).contains(n))
                .ok_or_else(|| {
                    format!(
                        "max_winning_months = {} must be a whole number from 1 to {MAX_WINNING_MONTHS}",
                        shown(v.to_string())
                    )
                })?,
        };
        Ok(CalendarParams {
            letters,
            month_amounts,
            clover_amounts,
            max_winning_months,
        })
    }

    /// The symbol letters as text for messages, e.g. `A, B, C`.
    pub fn letter_list(&self) -> String {
        self.letters
            .iter()
            .map(|&l| char::from(l).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads `symbols = [{ letter = "A", picture = "..." }, ...]`.
fn symbols(table: &toml::Table) -> Result<Vec<u8>, String> {
    const SHAPE: &str = "list the symbols as { letter = \"A\", picture = \"...\" }";
    let items = table
        .get("symbols")
        .ok_or_else(|| format!("'symbols' is missing: {SHAPE}"))?
        .as_array()
        .ok_or_else(|| format!("'symbols' must be an array: {SHAPE}"))?;
    let mut letters: Vec<u8> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let t = item
            .as_table()
            .ok_or_else(|| format!("symbols[{i}]: {SHAPE}"))?;
        if let Some(key) = t.keys().find(|k| *k != "letter" && *k != "picture") {
            return Err(format!(
                "symbols[{i}]: unknown key {} ({SHAPE})",
                shown(key)
            ));
        }
        let letter = t
            .get("letter")
            .and_then(|v| v.as_str())
            .ok_or_else(|| format!("symbols[{i}].letter is missing ({SHAPE})"))?;
        let byte = match letter.as_bytes() {
            [b] if b.is_ascii_uppercase() => *b,
            _ => {
                return Err(format!(
                    "symbols[{i}].letter = {} must be a single uppercase letter A..Z",
                    shown(letter)
                ))
            }
        };
        if letters.contains(&byte) {
            return Err(format!("symbols[{i}]: letter {letter} is listed twice"));
        }
        let picture = t.get("picture").and_then(|v| v.as_str()).unwrap_or("");
        if picture.trim().is_empty() {
            return Err(format!(
                "symbols[{i}].picture is missing: say what letter {letter} depicts"
            ));
        }
        letters.push(byte);
    }
    // A losing month needs two different symbols.
    if letters.len() < 2 {
        return Err("'symbols' must list at least 2 symbols".into());
    }
    Ok(letters)
}
