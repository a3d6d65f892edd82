//! What one ticket shows and why it wins: the per-ticket explanation behind `show` (the
//! terminal drawing and the SVG picture) and `report` (forms, near-miss rates, the leak check).
//!
//! The decoder stays the referee: every [`Explain`] first decodes the layout with its game's
//! [`Decoder`](super::Decoder), and an explanation's `prize` and `form` are the decoder's own.
//! The rest (the winning parts, the features, the board to draw) is read from the layout only
//! once the decoder has accepted it, and the winning parts must add up to the decoder's prize
//! or the explanation is refused.
//!
//! Features (docs/SPEC.md §3.2 lists them per mechanic) come in two kinds:
//! - *observations* (`outside_wins`): one per part of the ticket a player sees outside its
//!   winning parts (a non-winning row, a hive that wins no honey, a non-winning month…), so a
//!   ticket may hold several of one name, or none when no such part is shown; the leak check
//!   compares the distribution of their values on winners and on losers;
//! - *near misses* (`near_miss`): exactly one of each name per ticket, whose value is how many
//!   near misses of that kind the ticket shows (0: none); the report gives the rate of tickets
//!   with a value above 0 among losers.

use super::hive::{read_row, HiveName, ROW_LENGTHS};
use super::{LayoutError, Quoted};
use crate::money::AmountTable;
use rust_decimal::Decimal;
use thiserror::Error;

/// Why an explainer, or the report's features path, cannot read a layout. `explain` reads only
/// layouts its decoder accepts and `report` only blocks `verify` has accepted, so on those
/// each is a defect of the program (the two readings disagree); on any other bytes the
/// features path answers with one of these rather than a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExplainFault {
    /// The layout is not of its mechanic's grammar, as the features path reads it
    /// (`grammar` names it: `hive|hive...`, `hive|hive+bonus`, `months|clover`).
    #[error("not {grammar}")]
    Malformed {
        /// The grammar, in short.
        grammar: &'static str,
    },
    /// A hive that is not seven rows `amount:cells` joined by `/`.
    #[error("a hive that is not seven rows amount:cells joined by '/'")]
    NotSevenRows,
    /// An amount the layout shows is not one of its table.
    #[error("{text} is not an amount")]
    NotAnAmount {
        /// The text, quoted.
        text: Quoted,
    },
    /// An amount's separator is missing after it.
    #[error("'{separator}' missing after an amount")]
    SeparatorMissing {
        /// The separator (`:`, `#`, `/`, `|`).
        separator: char,
    },
    /// An amount of the table that the report cannot count in whole cents.
    #[error("an amount the report cannot count in cents")]
    NotCountable,
    /// An amount table longer than the report's codes can number.
    #[error("more amounts than the report can count")]
    TooManyAmounts,
    /// More parts outside the winning ones than a ticket record holds ([`MAX_SEEN`]).
    #[error("more parts than a ticket can show")]
    TooManyParts,
    /// More winning parts than the report's form key counts.
    #[error("more winning parts than a ticket can show")]
    TooManyWinningParts,
    /// The winning parts the explanation reads do not add up to the decoder's prize.
    #[error(
        "the winning parts add up to {} but the decoder reads {}: explanation refused",
        euros(*.parts),
        euros(*.prize)
    )]
    PartsDisagree {
        /// What the winning parts add up to.
        parts: Decimal,
        /// The decoder's prize.
        prize: Decimal,
    },
    /// La ruche d'or: the honey pots of a hive the explanation reads are not the decoder's.
    #[error("{hive}: the honey pots read here differ from the decoder's: explanation refused")]
    HoneyDiffers {
        /// The hive.
        hive: HiveName,
    },
    /// Maxi Ruche d'or: a hive without its bee amount and `#`.
    #[error("{hive}: no bee amount")]
    NoBeeAmount {
        /// The hive.
        hive: HiveName,
    },
    /// Maxi Ruche d'or: a bonus stage with more bees than its table counts.
    #[error("bonus stage: {bees} bees")]
    BonusBees {
        /// The bees shown.
        bees: usize,
    },
    /// Année de la chance: a letter that is none of the game's symbols.
    #[error("{symbol:?} is not a symbol")]
    NotASymbol {
        /// The character.
        symbol: char,
    },
    /// Année de la chance: a losing month shows a byte that is none of the game's symbols.
    #[error("a month shows a byte that is not a symbol")]
    MonthNotSymbols,
}

/// Everything a ticket shows about its prize.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The prize, as the decoder reads it (always equal to `Decoder::decode`).
    pub prize: Decimal,
    /// How the prize is shown, the same text as `Decoder::form` (e.g. `row + honey`).
    pub form: String,
    /// One line per winning part, top to bottom: `row 4: 3 × P → 20 €`, `6 honey pots → 6 €`,
    /// `EXTRA hive 1, row 2: 3 × P × 5 → 50 €`, `March: 2 × C → 10 €`, `clover: 13 → 20 €`.
    pub wins: Vec<String>,
    /// What a player sees, for near-miss rates and the leak check (module documentation).
    pub features: Vec<Feature>,
    /// The ticket as it is drawn: hives and rows, or months and the clover.
    pub board: Board,
}

/// One thing a player sees on a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Feature {
    /// Stable snake_case id (docs/SPEC.md §3.2); the report's JSON uses it.
    pub name: &'static str,
    /// A count, or a code for categorical features (an amount in cents, a multiplier's factor).
    pub value: u32,
    /// An observation of a part seen outside the winning parts: compared, winners vs losers,
    /// by the leak check.
    pub outside_wins: bool,
    /// A near-miss count (one per ticket): the report gives the rate of non-zero values among
    /// losers.
    pub near_miss: bool,
}

impl Feature {
    /// An observation of a part seen outside the winning parts.
    pub fn seen(name: &'static str, value: u32) -> Self {
        Feature {
            name,
            value,
            outside_wins: true,
            near_miss: false,
        }
    }

    /// The number of near misses of one kind on the ticket.
    pub fn near_miss(name: &'static str, count: u32) -> Self {
        Feature {
            name,
            value: count,
            outside_wins: false,
            near_miss: true,
        }
    }
}

/// Explains layouts of one game and stake.
pub trait Explain: Send + Sync {
    /// The explanation of a layout, or the rule it breaks (the decoder's message).
    fn explain(&self, layout: &str) -> Result<Explanation, LayoutError>;

    /// The names of the features [`features`](Self::features) fills, by index.
    fn feature_names(&self) -> FeatureNames;

    /// The report's fast path: what [`explain`](Self::explain) says of a layout, reduced to
    /// what `report` counts, read in one pass over the bytes into a fixed-size record, with no
    /// allocation, no `Decimal` and no text. It is not the referee: `report` uses it only on a
    /// block that `verify` (the decoder) has just accepted, byte for byte (the file's SHA-256
    /// is the signed manifest's), and still checks the wins it reads against the prize column.
    /// Anything it cannot read is an error, never a panic. Tests hold it to `explain` on every
    /// ticket of a block of each game.
    fn features(&self, layout: &[u8], out: &mut Features) -> Result<(), LayoutError>;

    /// The value [`explain`](Self::explain) gives the observation `code` of the feature
    /// `feature` (an index in [`FeatureNames::seen`]): an amount's index → its cents, a count
    /// → itself.
    fn seen_value(&self, feature: usize, code: u16) -> u32;
}

/// The features of one mechanic, by index: what [`Features`] records are numbers into.
#[derive(Debug, Clone, Copy)]
pub struct FeatureNames {
    /// Observations seen outside the winning parts ([`Feature::seen`]), in no special order.
    pub seen: &'static [&'static str],
    /// Near-miss counts ([`Feature::near_miss`]), in the order of [`Features::near`].
    pub near: &'static [&'static str],
}

/// Most observations one ticket may hold in a [`Features`] record: La ruche d'or's four hives
/// of 7 rows show at most 4 × (7 × 2 + 1) + 1 = 61; more is an error.
pub const MAX_SEEN: usize = 64;
/// Most kinds of near miss a mechanic counts.
pub const MAX_NEAR: usize = 4;

/// What `report` needs of one ticket, filled by [`Explain::features`]: fixed size, so the
/// per-ticket path allocates nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    /// What the winning parts add up to, in cents.
    pub won: u64,
    /// How the prize is shown, as a number: two layouts with the same `form` key have the same
    /// `Decoder::form` text (the report asks the decoder for the text of each key once).
    pub form: u64,
    /// Near misses of each kind ([`FeatureNames::near`]).
    pub near: [u32; MAX_NEAR],
    /// Observations, as (index in [`FeatureNames::seen`], code), in the order `explain` lists
    /// them; the first `seen_len` are filled.
    seen: [(u8, u16); MAX_SEEN],
    seen_len: usize,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            won: 0,
            form: 0,
            near: [0; MAX_NEAR],
            seen: [(0, 0); MAX_SEEN],
            seen_len: 0,
        }
    }
}

impl Features {
    /// Empties the record for the next ticket.
    #[inline]
    pub fn clear(&mut self) {
        self.won = 0;
        self.form = 0;
        self.near = [0; MAX_NEAR];
        self.seen_len = 0;
    }

    /// Records an observation.
    #[inline]
    pub(crate) fn see(&mut self, feature: u8, code: u16) -> Result<(), LayoutError> {
        let slot = self
            .seen
            .get_mut(self.seen_len)
            .ok_or_else(too_many_parts)?;
        *slot = (feature, code);
        self.seen_len += 1;
        Ok(())
    }

    /// The observations, in the order `explain` lists them.
    pub fn seen(&self) -> &[(u8, u16)] {
        &self.seen[..self.seen_len]
    }

    /// The record as `explain` gives it: observations, then near misses (what
    /// [`super::agree::features_agree`] compares).
    pub fn as_explained(&self, exp: &dyn Explain) -> Vec<Feature> {
        let names = exp.feature_names();
        let mut out: Vec<Feature> = self
            .seen()
            .iter()
            .map(|&(f, code)| {
                Feature::seen(
                    names.seen[usize::from(f)],
                    exp.seen_value(usize::from(f), code),
                )
            })
            .collect();
        for (i, name) in names.near.iter().enumerate() {
            out.push(Feature::near_miss(name, self.near[i]));
        }
        out
    }
}

/// An amount table read by the fast path: the amount's index in the table is its code, and
/// its value in whole cents is what the winning parts add up in.
#[derive(Debug, Clone)]
pub(crate) struct CentsTable {
    table: AmountTable,
    /// Cents of each amount of the table, `None` if not whole cents that fit (a definition's
    /// amounts always are: SPEC §6).
    cents: Vec<Option<u64>>,
}

impl CentsTable {
    pub(crate) fn new(table: &AmountTable) -> Self {
        CentsTable {
            table: table.clone(),
            cents: table.values().map(crate::money::cents).collect(),
        }
    }

    /// The code and cents of the amount written as `text`.
    #[inline(always)]
    pub(crate) fn read(&self, text: &[u8]) -> Result<(u16, u64), LayoutError> {
        match self.table.index_bytes(text) {
            Some(i) => match (u16::try_from(i), self.cents[i]) {
                (Ok(code), Some(cents)) => Ok((code, cents)),
                _ => Err(ExplainFault::NotCountable.into()),
            },
            None => Err(not_an_amount(text)),
        }
    }

    /// The table itself, for readers that look amounts up with it ([`read_row`]).
    pub(crate) fn table(&self) -> &AmountTable {
        &self.table
    }

    /// The feature value of a code: its cents, saturated as [`cents_code`] does.
    pub(crate) fn value(&self, code: u16) -> u32 {
        let i = usize::from(code);
        if i < self.table.len() {
            cents_code(self.table.get(i).0)
        } else {
            u32::MAX
        }
    }
}

/// The feature code of the amount at `index` of its table (its index, if it fits).
#[inline]
pub(crate) fn amount_code(index: usize) -> Result<u16, LayoutError> {
    u16::try_from(index).map_err(|_| ExplainFault::TooManyAmounts.into())
}

/// The error of a ticket with more observations than a [`Features`] record holds.
#[cold]
fn too_many_parts() -> LayoutError {
    ExplainFault::TooManyParts.into()
}

#[cold]
fn not_an_amount(text: &[u8]) -> LayoutError {
    ExplainFault::NotAnAmount {
        text: Quoted::new(text),
    }
    .into()
}

/// Reads the amount of `table` that runs from `*pos` to the next `sep`, and moves past both.
#[inline(always)]
pub(crate) fn amount_before(
    text: &[u8],
    pos: &mut usize,
    sep: u8,
    table: &CentsTable,
) -> Result<(u16, u64), LayoutError> {
    let start = (*pos).min(text.len());
    // The table's look-up without a loop over bytes (whose exit the varying lengths of
    // amounts mispredict), inlined at every call (a call per row cost 12 % of a Maxi report's
    // CPU, measured); the loop only for what it does not find (an error, or an amount too long
    // to pack).
    if let Some((i, cents, len)) = table.table.lookup_before(&text[start..], sep) {
        if let (Ok(code), Some(&Some(own))) = (u16::try_from(i), table.cents.get(i)) {
            debug_assert_eq!(own, cents);
            *pos = start + len + 1;
            return Ok((code, own));
        }
    }
    amount_before_by_bytes(text, pos, sep, table)
}

/// [`amount_before`] by a loop over the bytes: for what the packed look-up does not find.
#[cold]
#[inline(never)]
fn amount_before_by_bytes(
    text: &[u8],
    pos: &mut usize,
    sep: u8,
    table: &CentsTable,
) -> Result<(u16, u64), LayoutError> {
    let start = (*pos).min(text.len());
    let end = text[start..]
        .iter()
        .position(|&b| b == sep)
        .map(|i| start + i)
        .ok_or(ExplainFault::SeparatorMissing {
            separator: char::from(sep),
        })?;
    let read = table.read(&text[start..end])?;
    *pos = end + 1;
    Ok(read)
}

/// `a + b` in cents, for the fast path's wins.
#[inline]
pub(crate) fn add_cents(a: u64, b: u64) -> Result<u64, LayoutError> {
    a.checked_add(b).ok_or_else(super::too_large)
}

/// Splits `text` at the first `sep`: (before, Some(after)), or (text, None).
#[inline]
pub(crate) fn split_once(text: &[u8], sep: u8) -> (&[u8], Option<&[u8]>) {
    match memchr::memchr(sep, text) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    }
}

/// Small counts packed into a form key, `bits` at a time; a count that does not fit is
/// refused (a layout the decoder accepted never has one).
#[derive(Debug, Default)]
pub(crate) struct FormKey {
    key: u64,
    used: u32,
}

impl FormKey {
    #[inline]
    pub(crate) fn push(&mut self, value: u32, bits: u32) -> Result<(), LayoutError> {
        if value >= 1 << bits || self.used + bits > 64 {
            return Err(ExplainFault::TooManyWinningParts.into());
        }
        self.key |= u64::from(value) << self.used;
        self.used += bits;
        Ok(())
    }

    pub(crate) fn key(&self) -> u64 {
        self.key
    }
}

/// The ticket as a player sees it, for drawings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Board {
    /// La ruche d'or and Maxi Ruche d'or: hives of 7 offset rows, and Maxi's bonus stage.
    Hives {
        /// The main hive, then the EXTRA hives in order.
        hives: Vec<Hive>,
        /// Maxi's bonus stage, when the ticket has one.
        bonus: Option<BonusStage>,
    },
    /// Année de la chance: twelve months and a clover.
    Calendar {
        /// January to December.
        months: Vec<Month>,
        /// The bonus clover.
        clover: Clover,
        /// What each symbol letter depicts (from the game definition), in its order.
        pictures: std::sync::Arc<[(char, String)]>,
    },
}

/// One hive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hive {
    /// `main hive`, `EXTRA hive`, `EXTRA hive 2`…
    pub name: String,
    /// Maxi: the bee amount shown at the top of the hive.
    pub bee_amount: Option<Decimal>,
    /// The rows, top to bottom.
    pub rows: Vec<HiveRow>,
    /// Honey pots (`H`) in the hive.
    pub pots: u32,
    /// What the honey pots win (zero below the table).
    pub honey_win: Decimal,
    /// Maxi: the hive holds a bee, which wins `bee_amount`.
    pub bee_wins: bool,
}

/// One row of a hive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiveRow {
    /// The amount the row shows.
    pub amount: Decimal,
    /// The cells, left to right, as the layout writes them (`P`, `A`, `H`, `X`…).
    pub cells: Vec<char>,
    /// What the row wins (zero unless it holds three `P`).
    pub win: Decimal,
    /// Maxi: the factor of the row's multiplier cell, if it has one.
    pub multiplier: Option<u32>,
}

impl HiveRow {
    /// True if the row wins (three `P`).
    pub fn wins(&self) -> bool {
        !self.win.is_zero()
    }
}

/// Maxi's bonus stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BonusStage {
    /// The 12 cells, `Q` (a bee) or `.`.
    pub cells: Vec<char>,
    /// Bees shown.
    pub bees: u32,
    /// What they win (zero below the table).
    pub win: Decimal,
}

/// One month of Année de la chance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Month {
    /// The two symbols (letters).
    pub symbols: [char; 2],
    /// The amount shown.
    pub amount: Decimal,
}

impl Month {
    /// True if the month wins (two identical symbols).
    pub fn wins(&self) -> bool {
        self.symbols[0] == self.symbols[1]
    }
}

/// The bonus clover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clover {
    /// The three numbers.
    pub numbers: [u8; 3],
    /// The amount shown.
    pub amount: Decimal,
    /// True if one number is the winning one (13).
    pub wins: bool,
}

/// Month names for explanations and drawings.
pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

impl Explanation {
    /// The values of the features called `name`, in order (for tests).
    #[cfg(test)]
    pub(crate) fn values(&self, name: &str) -> Vec<u32> {
        self.features
            .iter()
            .filter(|f| f.name == name)
            .map(|f| f.value)
            .collect()
    }
}

/// `amount €` as explanations write it.
pub(crate) fn euros(amount: Decimal) -> String {
    format!("{} €", crate::money::canonical(amount))
}

/// An amount as a feature value: whole cents, saturated (amounts a game states are at most
/// 10^9 €, so only a hostile definition could saturate, and then only its feature codes merge).
pub(crate) fn cents_code(amount: Decimal) -> u32 {
    crate::money::cents(amount)
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(u32::MAX)
}

/// Checks that the winning parts add up to the decoder's prize: the explanation is read
/// outside the decoder, so a disagreement is refused rather than shown.
pub(crate) fn check_total(parts: &[Decimal], prize: Decimal) -> Result<(), LayoutError> {
    let mut total = Decimal::ZERO;
    for &p in parts {
        total = super::add_wins(total, p)?;
    }
    if total == prize {
        Ok(())
    } else {
        Err(ExplainFault::PartsDisagree {
            parts: total,
            prize,
        }
        .into())
    }
}

/// The seven rows of a hive, joined by `/`, of a layout the decoder has accepted, each read
/// by [`read_row`] with the game's cell classes (anything else is still an error, never a
/// panic).
pub(crate) fn hive_rows(
    text: &[u8],
    amounts: &AmountTable,
    class: &[u8; 256],
) -> Result<Vec<HiveRow>, LayoutError> {
    let malformed = || LayoutError::from(ExplainFault::NotSevenRows);
    let mut rows = Vec::with_capacity(ROW_LENGTHS.len());
    let mut pos = 0;
    for (r, &len) in ROW_LENGTHS.iter().enumerate() {
        if r > 0 {
            if text.get(pos) != Some(&b'/') {
                return Err(malformed());
            }
            pos += 1;
        }
        let row = read_row(text, pos, amounts, len, class).ok_or_else(malformed)?;
        pos = row.end;
        rows.push(HiveRow {
            amount: amounts.get(row.amount).0,
            cells: row.cells.iter().map(|&c| char::from(c)).collect(),
            win: Decimal::ZERO,
            multiplier: None,
        });
    }
    if pos != text.len() {
        return Err(malformed());
    }
    Ok(rows)
}

/// An amount of a layout the decoder has accepted, read from the table it allows (a packed
/// compare per entry: no parsing or formatting on the per-ticket path).
pub(crate) fn parsed_amount(text: &str, amounts: &AmountTable) -> Result<Decimal, LayoutError> {
    amounts
        .lookup(text)
        .ok_or_else(|| not_an_amount(text.as_bytes()))
}

/// How many `P` a row holds.
pub(crate) fn p_count(row: &HiveRow) -> u32 {
    row.cells.iter().filter(|&&c| c == 'P').count() as u32
}

#[cfg(test)]
mod tests {
    //! The decoder is the referee: on thousands of synthesized layouts of every game and
    //! stake, the explanation's prize and form are the decoder's.

    use super::*;
    use crate::game::{Game, BUILTIN};
    use crate::mechanic::LayoutRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn explanations_agree_with_the_decoder_on_synthesized_layouts() {
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                let synth = stake.synthesizer().unwrap();
                let dec = stake.decoder();
                let exp = stake.mechanic.explainer();
                let mut rng = LayoutRng::seed_from_u64(7);
                let tiers = stake.tiers();
                let mut bytes = Vec::new();
                let mut near_misses = 0u64;
                let mut fast = Features::default();
                let mut forms = std::collections::HashMap::new();
                for i in 0..3000 {
                    // Every tier, then losers weighted like a block (most tickets lose).
                    let prize = if i < tiers.len() * 20 {
                        tiers[i % tiers.len()]
                    } else if rng.random_range(0..3) == 0 {
                        tiers[rng.random_range(0..tiers.len())]
                    } else {
                        Decimal::ZERO
                    };
                    bytes.clear();
                    synth.synthesize(prize, &mut rng, &mut bytes).unwrap();
                    let layout = std::str::from_utf8(&bytes).unwrap();
                    let e = exp
                        .explain(layout)
                        .unwrap_or_else(|err| panic!("{id} {}: {layout}: {err}", stake.price));
                    assert_eq!(e.prize, dec.decode(&bytes).unwrap(), "{layout}");
                    assert_eq!(e.prize, prize, "{layout}");
                    assert_eq!(e.form, dec.form(&bytes).unwrap(), "{layout}");
                    assert_eq!(e.wins.is_empty(), prize.is_zero(), "{layout}: {:?}", e.wins);
                    // The report's fast path says the same, and its form key has one text.
                    exp.features(&bytes, &mut fast).unwrap();
                    assert_eq!(fast.as_explained(exp.as_ref()), e.features, "{layout}");
                    assert_eq!(Some(fast.won), crate::money::cents(prize), "{layout}");
                    let form = forms.entry(fast.form).or_insert_with(|| e.form.clone());
                    assert_eq!(*form, e.form, "{layout}");
                    // Near-miss features: exactly one of each name per ticket.
                    let mut names: Vec<_> = e
                        .features
                        .iter()
                        .filter(|f| f.near_miss)
                        .map(|f| f.name)
                        .collect();
                    let n = names.len();
                    names.dedup();
                    assert_eq!(names.len(), n, "{:?}", e.features);
                    near_misses += u64::from(
                        prize.is_zero() && e.features.iter().any(|f| f.near_miss && f.value > 0),
                    );
                    for f in &e.features {
                        assert!(f.outside_wins != f.near_miss, "{f:?}");
                        assert!(
                            f.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                            "{f:?}"
                        );
                    }
                }
                // The synthesizers draw near misses on losers: the features must see some.
                assert!(near_misses > 100, "{id} {}: {near_misses}", stake.price);
            }
        }
    }

    #[test]
    fn invalid_layouts_are_refused_with_the_decoders_message() {
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                let dec = stake.decoder();
                let exp = stake.mechanic.explainer();
                for bad in ["", "x", "5:PPPP/", "AB:6|1-2-3:3", "|||"] {
                    assert_eq!(
                        exp.explain(bad).unwrap_err(),
                        dec.decode(bad.as_bytes()).unwrap_err()
                    );
                }
            }
        }
    }

    #[test]
    fn the_features_path_answers_on_any_bytes() {
        // Every prefix of a synthesized layout, and every byte replaced by each of a few
        // others: an error or a record, never a panic.
        for (id, _) in BUILTIN {
            let game = Game::builtin(id).unwrap();
            for stake in &game.stakes {
                let synth = stake.synthesizer().unwrap();
                let exp = stake.mechanic.explainer();
                let mut rng = LayoutRng::seed_from_u64(11);
                let mut fast = Features::default();
                for prize in stake.tiers() {
                    let mut bytes = Vec::new();
                    synth.synthesize(prize, &mut rng, &mut bytes).unwrap();
                    for end in 0..bytes.len() {
                        let _ = exp.features(&bytes[..end], &mut fast);
                    }
                    for i in 0..bytes.len() {
                        for b in [b'P', b'|', b'/', b':', b'#', b'+', b'-', b'9', 0xff] {
                            let mut edited = bytes.clone();
                            edited[i] = b;
                            let _ = exp.features(&edited, &mut fast);
                        }
                    }
                    let mut long = bytes.clone();
                    for _ in 0..40 {
                        long.push(b'|');
                        long.extend_from_slice(&bytes);
                        let _ = exp.features(&long, &mut fast);
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(50_000))]

        /// The three readings of a layout against the referee, on layouts of every stake of
        /// every built-in game, synthesized, recombined and changed ([`changed`]): the decoder's
        /// one-pass reading in cents gives `decode`'s verdict (the prize, or the same error);
        /// `explain` accepts exactly what `decode` accepts, with its prize and form, else its
        /// error; and the report's `features` reads every accepted layout as `explain` does
        /// (the same features, the prize in cents), and answers any other without a panic.
        #[test]
        fn the_fast_readings_agree_with_the_referees_on_changed_layouts(
            which in proptest::sample::select((0..crate::mechanic::changed::stakes().len()).collect::<Vec<_>>()),
            seed in proptest::prelude::any::<u64>(),
        ) {
            use crate::mechanic::changed;
            let layouts = &changed::stakes()[which];
            let stake = layouts.stake();
            let bytes = changed::changed(layouts, seed);
            let shown = String::from_utf8_lossy(&bytes).into_owned();
            let context = format!("{} {}: {shown:?}", layouts.game.id, stake.price);
            let dec = stake.decoder();
            let exp = stake.mechanic.explainer();
            let mut fast = Features::default();
            let agree = crate::mechanic::agree::decode_cents_agrees(dec.as_ref(), &bytes)
                .and_then(|()| crate::mechanic::agree::features_agree(dec.as_ref(), exp.as_ref(), &bytes, &mut fast));
            proptest::prop_assert!(agree.is_ok(), "{}: {:?}", context, agree);
        }
    }
}
