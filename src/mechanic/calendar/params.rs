//! The data the decoder and the synthesizer share: the symbol letters and the amounts a month
//! or the clover may show, read and checked from the stake's `layout` table.
//!
//! This is the only thing the two halves of the mechanic have in common, so that the decoder
//! stays an independent referee of what the synthesizer writes.

use crate::mechanic::util::{amount_list, at_most, near_miss_rate};
use crate::mechanic::SettingError;
use crate::money::AmountTable;
use crate::untrusted::shown;
use serde::Deserialize;

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
/// Most amounts `month_amounts` and `clover_amounts` may each list (SPEC §6.1; the built-in
/// game lists 15 and 9). The synthesizer weighs every list of up to [`MAX_WINNING_MONTHS`]
/// month amounts, C(32 + 6, 6) = 2 760 681 of them at most, so this bounds its start-up
/// (README, "Definitions at their limits").
pub const MAX_CALENDAR_AMOUNTS: usize = 32;
/// Most symbols: one per letter A to Z.
pub const MAX_SYMBOLS: usize = 26;

// Synthesizer plans store amount indices in a byte.
const _: () = assert!(MAX_CALENDAR_AMOUNTS <= u8::MAX as usize);

/// One `layout` table of a `calendar` game, as written; a stake's overrides the game's key by
/// key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarSettings {
    /// The pictures behind the symbol letters of a month (4.3.1), in the order of the picture
    /// list.
    pub symbols: Option<Vec<SymbolEntry>>,
    /// Amounts a month may show (4.3.1), as canonical strings.
    pub month_amounts: Option<Vec<String>>,
    /// Amounts the bonus clover may show (4.4.1), as canonical strings.
    pub clover_amounts: Option<Vec<String>>,
    /// Most winning months the synthesizer uses to show one prize (1 to
    /// [`MAX_WINNING_MONTHS`], default [`DEFAULT_MAX_WINNING_MONTHS`]).
    pub max_winning_months: Option<i64>,
    /// How often losing parts look like near misses (`[layout.near_miss]`).
    pub near_miss: Option<NearMissSettings>,
}

/// `[layout.near_miss]` of a `calendar` game, as written: the chances of the near misses on
/// what does not win, on winners and losers alike. Each key is optional; a stake's overrides
/// the game's key by key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NearMissSettings {
    /// Chance that a month that does not win shows two neighbouring pictures, 0 to 1.
    pub neighbour_rate: Option<f64>,
    /// Chance that a clover that does not win shows a 12, 0 to 1.
    pub twelve_rate: Option<f64>,
}

/// The checked `near_miss` settings of one stake.
#[derive(Debug, Clone, PartialEq)]
pub struct NearMiss {
    /// Chance that a non-winning month shows two neighbouring pictures (else any two
    /// different pictures, which may also be neighbours).
    pub neighbour_rate: f64,
    /// Chance that a non-winning clover shows a 12 (else three numbers from 1 to 11).
    pub twelve_rate: f64,
}

impl Default for NearMiss {
    /// The values of generator 1 (6 in 16), written out in `games/annee-chance.toml`.
    fn default() -> Self {
        NearMiss {
            neighbour_rate: 0.375,
            twelve_rate: 0.375,
        }
    }
}

impl NearMiss {
    /// Checks the settings; unset keys keep the defaults.
    pub fn check(settings: Option<NearMissSettings>) -> Result<Self, SettingError> {
        let s = settings.unwrap_or_default();
        let d = NearMiss::default();
        Ok(NearMiss {
            neighbour_rate: near_miss_rate("neighbour_rate", s.neighbour_rate, d.neighbour_rate)?,
            twelve_rate: near_miss_rate("twelve_rate", s.twelve_rate, d.twelve_rate)?,
        })
    }

    /// The rates asked, by feature name (as the report names them).
    pub fn rates(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("near_miss_months", self.neighbour_rate),
            ("near_miss_clover", self.twelve_rate),
        ]
    }
}

/// `{ letter = "A", picture = "..." }`: what a symbol letter depicts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolEntry {
    /// One uppercase letter A to Z.
    pub letter: Option<String>,
    /// What it depicts, for people reading a layout.
    pub picture: Option<String>,
}

impl CalendarSettings {
    /// These settings with `stake`'s on top.
    pub fn overlay(&self, stake: CalendarSettings) -> CalendarSettings {
        CalendarSettings {
            symbols: stake.symbols.or_else(|| self.symbols.clone()),
            month_amounts: stake.month_amounts.or_else(|| self.month_amounts.clone()),
            clover_amounts: stake.clover_amounts.or_else(|| self.clover_amounts.clone()),
            max_winning_months: stake.max_winning_months.or(self.max_winning_months),
            near_miss: match (&self.near_miss, stake.near_miss) {
                (Some(game), Some(stake)) => Some(NearMissSettings {
                    neighbour_rate: stake.neighbour_rate.or(game.neighbour_rate),
                    twelve_rate: stake.twelve_rate.or(game.twelve_rate),
                }),
                (game, stake) => stake.or_else(|| game.clone()),
            },
        }
    }
}

/// The checked layout parameters of one stake.
#[derive(Debug, Clone)]
pub struct CalendarParams {
    /// Symbol letters (ASCII uppercase), in the order of the picture list: neighbours look
    /// alike and make near misses.
    pub letters: Vec<u8>,
    /// What each letter depicts, in the same order (shown by `show` and `report`, never read
    /// by the decoder).
    pub pictures: Vec<String>,
    /// The amounts a month may show.
    pub month_amounts: AmountTable,
    /// The amounts the clover may show.
    pub clover_amounts: AmountTable,
    /// Most winning months the synthesizer uses to show one prize (the rules set no limit; the
    /// decoder does not read this).
    pub max_winning_months: usize,
    /// The chances of near misses on what does not win (the decoder does not read them).
    pub near_miss: NearMiss,
}

impl CalendarParams {
    /// Checks the settings; the message names the key at fault.
    pub fn check(settings: CalendarSettings) -> Result<Self, SettingError> {
        let letters = symbols(settings.symbols.as_deref())?;
        // `symbols` checked that every entry has a picture.
        let pictures = settings
            .symbols
            .iter()
            .flatten()
            .map(|s| s.picture.clone().unwrap_or_default())
            .collect();
        let month_amounts = amount_list(
            "month_amounts",
            settings.month_amounts.as_deref(),
            MAX_CALENDAR_AMOUNTS,
        )?;
        let clover_amounts = amount_list(
            "clover_amounts",
            settings.clover_amounts.as_deref(),
            MAX_CALENDAR_AMOUNTS,
        )?;
        let max_winning_months = match settings.max_winning_months {
            None => DEFAULT_MAX_WINNING_MONTHS,
            Some(n) => usize::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_WINNING_MONTHS).contains(n))
                .ok_or_else(|| {
                    SettingError::rule(
                        "max_winning_months",
                        format!(
                            "max_winning_months = {n} must be a whole number from 1 to {MAX_WINNING_MONTHS}"
                        ),
                    )
                })?,
        };
        let near_miss = NearMiss::check(settings.near_miss)?;
        Ok(CalendarParams {
            letters,
            pictures,
            month_amounts,
            clover_amounts,
            max_winning_months,
            near_miss,
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

/// Checks `symbols = [{ letter = "A", picture = "..." }, ...]`.
fn symbols(items: Option<&[SymbolEntry]>) -> Result<Vec<u8>, SettingError> {
    const SHAPE: &str = "list the symbols as { letter = \"A\", picture = \"...\" }";
    let items = items.ok_or_else(|| SettingError::Missing {
        key: "symbols".into(),
        how: SHAPE.into(),
    })?;
    at_most("symbols", items.len(), MAX_SYMBOLS)?;
    let mut letters: Vec<u8> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let letter = item.letter.as_deref().ok_or_else(|| {
            SettingError::rule(
                format!("symbols[{i}].letter"),
                format!("symbols[{i}].letter is missing ({SHAPE})"),
            )
        })?;
        let byte = match letter.as_bytes() {
            [b] if b.is_ascii_uppercase() => *b,
            _ => {
                return Err(SettingError::rule(
                    format!("symbols[{i}].letter"),
                    format!(
                        "symbols[{i}].letter = {} must be a single uppercase letter A..Z",
                        shown(letter)
                    ),
                ))
            }
        };
        if letters.contains(&byte) {
            return Err(SettingError::invalid(
                format!("symbols[{i}]"),
                format!("letter {letter} is listed twice"),
            ));
        }
        let picture = item.picture.as_deref().unwrap_or("");
        if picture.trim().is_empty() {
            return Err(SettingError::rule(
                format!("symbols[{i}].picture"),
                format!("symbols[{i}].picture is missing: say what letter {letter} depicts"),
            ));
        }
        letters.push(byte);
    }
    // A losing month needs two different symbols.
    if letters.len() < 2 {
        return Err(SettingError::rule(
            "symbols",
            "'symbols' must list at least 2 symbols",
        ));
    }
    Ok(letters)
}
