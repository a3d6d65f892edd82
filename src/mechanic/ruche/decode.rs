//! The La ruche d'or decoder, written from the rules (Articles 4.4 to 4.7, SPEC 2.1 and 3).
//! It does not use the synthesizer: it is the referee of every ticket.

use super::params::{RucheParams, MAX_EXTRA};
use crate::mechanic::cursor::split;
use crate::mechanic::hive::{
    count_cells, limit_bias, over_limits, packed_count, read_row, row_wins, HiveName, RowFault,
    RowPlace, MAX_OTHER, NOT_A_CELL, ROWS, ROW_LENGTHS, ROW_WIN,
};
use crate::mechanic::{add_wins, LayoutError, Quoted};
use rust_decimal::Decimal;
use thiserror::Error;

/// Reads La ruche d'or layouts of one stake.
#[derive(Debug, Clone)]
pub struct RucheDecoder {
    params: RucheParams,
    /// The honey table in cents (`None`: not whole cents, every layout takes [`decode`]).
    honey_cents: Option<Vec<u64>>,
}

impl RucheDecoder {
    /// The decoder for checked parameters.
    pub(super) fn from_params(params: &RucheParams) -> Self {
        RucheDecoder {
            params: params.clone(),
            honey_cents: honey_cents(params),
        }
    }

    /// The full outcome of a layout: what every hive wins.
    pub fn outcome(&self, layout: &[u8]) -> Result<Outcome, LayoutError> {
        decode(&self.params, layout)
    }

    /// The prize a layout wins.
    pub(super) fn prize(&self, layout: &[u8]) -> Result<Decimal, LayoutError> {
        Ok(self.outcome(layout)?.prize)
    }

    /// The prize of a valid layout in cents, in one pass ([`prize_cents`]).
    #[inline]
    pub(super) fn prize_cents(&self, layout: &[u8]) -> Option<u64> {
        self.honey_cents
            .as_deref()
            .and_then(|honey| prize_cents(&self.params, honey, layout))
    }

    /// How a layout shows its prize.
    pub(super) fn form(&self, layout: &[u8]) -> Result<String, LayoutError> {
        Ok(form(&self.outcome(layout)?))
    }

    /// The longest layout the decoder can accept ([`max_layout_len`]).
    pub(super) fn max_layout_len(&self) -> usize {
        max_layout_len(&self.params)
    }
}

/// What one hive wins, and why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HiveOutcome {
    /// Rows with exactly three `P`.
    pub winning_rows: u8,
    /// Sum of the amounts of those rows.
    pub rows_win: Decimal,
    /// Honey pots in the hive.
    pub pots: u8,
    /// The honey-table win for those pots.
    pub honey_win: Decimal,
    /// `E` cells in the hive.
    pub extras: u8,
}

/// What a whole layout wins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The ticket's prize: every row and honey win of every hive.
    pub prize: Decimal,
    /// The main hive.
    pub main: HiveOutcome,
    /// The EXTRA hives, in order (`extra_count` of them are used).
    pub extra: [HiveOutcome; MAX_EXTRA],
    /// Number of EXTRA hives.
    pub extra_count: usize,
}

/// A rule of La ruche d'or (SPEC §2.1 and §3) that a layout breaks, with its place.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RucheRule {
    /// The main hive holds more `E` (EXTRA symbols) than the rules allow.
    #[error("main hive: {extras} EXTRA symbols, at most {MAX_EXTRA} are allowed")]
    TooManyExtraSymbols {
        /// The `E` of the main hive.
        extras: u8,
    },
    /// More EXTRA hives follow the main hive than it holds `E`: each `E` opens exactly one.
    #[error("{hives} EXTRA hives follow the main hive but it holds {extras} EXTRA symbol(s): one EXTRA hive per E")]
    ExtraHivesBeyondE {
        /// The EXTRA hives written after the main hive.
        hives: usize,
        /// The `E` of the main hive.
        extras: u8,
    },
    /// Fewer EXTRA hives follow the main hive than it holds `E`: each `E` opens exactly one.
    #[error("the main hive holds {extras} EXTRA symbol(s) but {hives} EXTRA hive(s) follow: one EXTRA hive per E")]
    MissingExtraHives {
        /// The `E` of the main hive.
        extras: u8,
        /// The EXTRA hives written after it.
        hives: usize,
    },
    /// An EXTRA hive holds an `E`: only the main hive may open EXTRA hives.
    #[error("{hive}: EXTRA symbol in an EXTRA hive (E may only appear in the main hive)")]
    EInExtraHive {
        /// The EXTRA hive.
        hive: HiveName,
    },
    /// A hive of fewer than its 7 rows.
    #[error("{hive}: {rows} rows, a hive has {ROWS}")]
    TooFewRows {
        /// The hive.
        hive: HiveName,
        /// The rows it has.
        rows: usize,
    },
    /// A hive of more than its 7 rows.
    #[error("{hive}: more than {ROWS} rows")]
    TooManyRows {
        /// The hive.
        hive: HiveName,
    },
    /// A row that is not `amount:cells`: no `:` in it.
    #[error("{row}: expected amount:cells, got {text}")]
    NotAmountAndCells {
        /// The row.
        row: RowPlace,
        /// The row as written, quoted.
        text: Quoted,
    },
    /// A row's amount is not one of the stake's `row_amounts`, written canonically.
    #[error("{row}: {amount} is not an amount a row may show at this stake")]
    NotARowAmount {
        /// The row.
        row: RowPlace,
        /// The amount as written, quoted.
        amount: Quoted,
    },
    /// A row of another number of cells than its place in the hive has (4, 5, 6, 7, 6, 5, 4).
    #[error("{row}: {cells} cells, this row has {len}")]
    WrongCellCount {
        /// The row.
        row: RowPlace,
        /// The cells written (characters).
        cells: usize,
        /// The cells the row has.
        len: usize,
    },
    /// A row holds a character that is not a cell of the game (`P A B H E F`).
    #[error("{row}: {cells} is not a cell (cells are P A B H E F)")]
    NotACell {
        /// The row.
        row: RowPlace,
        /// The row's cells as written, quoted.
        cells: Quoted,
    },
    /// A row holds more than three `P`.
    #[error("{row}: {p} P, a row holds at most {ROW_WIN}")]
    TooManyP {
        /// The row.
        row: RowPlace,
        /// Its `P`.
        p: usize,
    },
    /// A row holds three of `A` or of `B`, which would show the player that the choice of
    /// symbol mattered.
    #[error("{row}: {count} identical non-chosen symbols, a row holds at most {MAX_OTHER} A and {MAX_OTHER} B")]
    TooManyOthers {
        /// The row.
        row: RowPlace,
        /// The larger of its `A` and `B` counts.
        count: usize,
    },
    /// A hive holds more honey pots than the honey table's largest count.
    #[error("{hive}: {pots} honey pots, a hive holds at most {max}")]
    TooManyPots {
        /// The hive.
        hive: HiveName,
        /// Its honey pots (`H`).
        pots: u8,
        /// The most the stake's honey table counts.
        max: usize,
    },
}

/// Decodes a whole layout: the main hive, then one EXTRA hive per `E` in it.
pub fn decode(params: &RucheParams, layout: &[u8]) -> Result<Outcome, LayoutError> {
    let mut hives = split(layout, b'|');
    let main_text = hives.next().unwrap_or_default();
    let main = decode_hive(params, main_text, HiveName::Main)?;
    if main.extras as usize > MAX_EXTRA {
        return Err(RucheRule::TooManyExtraSymbols {
            extras: main.extras,
        }
        .into());
    }
    let mut outcome = Outcome {
        prize: add_wins(main.rows_win, main.honey_win)?,
        main,
        ..Outcome::default()
    };
    for hive_text in hives {
        let n = outcome.extra_count;
        if n >= main.extras as usize {
            return Err(RucheRule::ExtraHivesBeyondE {
                hives: split(layout, b'|').count() - 1,
                extras: main.extras,
            }
            .into());
        }
        let name = extra_name(n);
        let hive = decode_hive(params, hive_text, name)?;
        if hive.extras > 0 {
            return Err(RucheRule::EInExtraHive { hive: name }.into());
        }
        outcome.prize = add_wins(outcome.prize, add_wins(hive.rows_win, hive.honey_win)?)?;
        outcome.extra[n] = hive;
        outcome.extra_count += 1;
    }
    if outcome.extra_count != main.extras as usize {
        return Err(RucheRule::MissingExtraHives {
            extras: main.extras,
            hives: outcome.extra_count,
        }
        .into());
    }
    Ok(outcome)
}

/// The honey table in cents, by pots (0 to `max_honey`), for [`prize_cents`]; `None` if a win
/// is not a whole number of cents (then every layout takes [`decode`]).
fn honey_cents(params: &RucheParams) -> Option<Vec<u64>> {
    (0..=params.max_honey)
        .map(|pots| crate::money::cents(params.honey_win(pots)))
        .collect()
}

/// The prize of a valid layout in cents, read in one pass over its bytes without allocating:
/// the same rules as [`decode`], which a test compares it with. `None` for any layout it does
/// not accept (or whose amounts are not whole cents): [`decode`] then gives the verdict and
/// names the rule.
#[inline]
fn prize_cents(params: &RucheParams, honey: &[u64], layout: &[u8]) -> Option<u64> {
    let mut at = 0;
    let (mut prize, extras) = hive_cents(params, honey, layout, &mut at)?;
    if usize::from(extras) > MAX_EXTRA {
        return None;
    }
    // One EXTRA hive per E, each after a '|', and nothing after the last.
    for _ in 0..extras {
        if layout.get(at) != Some(&b'|') {
            return None;
        }
        at += 1;
        let (win, e) = hive_cents(params, honey, layout, &mut at)?;
        if e != 0 {
            return None;
        }
        prize = prize.checked_add(win)?;
    }
    (at == layout.len()).then_some(prize)
}

/// Reads the hive at `*at` (7 rows `amount ":" cells` joined by `/`), and moves `*at` past it:
/// its win in cents (rows and honey) and its `E` count. What follows is the caller's.
///
/// The rules of a row are tested on its packed counts at once ([`ROW_BIAS`]) and the verdict
/// of all seven rows is taken once at the end of the hive: a branch per count per row cost
/// more than the whole count (a bad row is rare, and any bad row still gives `None`).
#[inline]
fn hive_cents(
    params: &RucheParams,
    honey: &[u64],
    text: &[u8],
    at: &mut usize,
) -> Option<(u64, u8)> {
    let mut pos = *at;
    let (mut win, mut hive, mut bad) = (0u64, 0u64, false);
    for (r, &len) in ROW_LENGTHS.iter().enumerate() {
        if r > 0 {
            if text.get(pos) != Some(&b'/') {
                return None;
            }
            pos += 1;
        }
        let row = read_row(text, pos, &params.rows, len, &CELL_KIND)?;
        bad |= over_limits(row.counts, ROW_BIAS);
        hive += row.counts;
        // Exactly ROW_WIN P win the row's amount (more is refused above).
        let wins = usize::from(packed_count(row.counts, P)) == ROW_WIN;
        win = win.checked_add(if wins { row.cents } else { 0 })?;
        pos = row.end;
    }
    if bad {
        return None;
    }
    // 37 cells: the hive's counts stay far below a byte's 256.
    let (pots, extras) = (packed_count(hive, H), packed_count(hive, E));
    win = win.checked_add(*honey.get(usize::from(pots))?)?;
    *at = pos;
    Some((win, extras))
}

/// The limits of a row's counts, for [`over_limits`]: no byte that is not a cell, at most
/// [`ROW_WIN`] `P`, at most [`MAX_OTHER`] `A` and `B` each ([`row_wins`]).
const ROW_BIAS: u64 = {
    let mut limits = [u8::MAX; 8];
    limits[NOT_A_CELL as usize] = 0;
    limits[P] = ROW_WIN as u8;
    limits[A] = MAX_OTHER as u8;
    limits[B] = MAX_OTHER as u8;
    limit_bias(limits)
};

/// The longest layout [`decode`] can accept: the main hive and [`MAX_EXTRA`] EXTRA hives
/// joined by `|`, every row showing the longest amount the stake allows.
pub fn max_layout_len(params: &RucheParams) -> usize {
    let amount = params.rows.max_text_len();
    // Per row: amount ":" cells; rows joined by "/".
    let hive: usize = ROW_LENGTHS
        .iter()
        .map(|len| amount + 1 + len)
        .sum::<usize>()
        + (ROW_LENGTHS.len() - 1);
    (1 + MAX_EXTRA) * hive + MAX_EXTRA
}

/// Kinds of cell, indexes into a row's counts (0 is [`NOT_A_CELL`]).
pub(super) const P: usize = 1;
const A: usize = 2;
const B: usize = 3;
pub(super) const H: usize = 4;
pub(super) const E: usize = 5;
const F: usize = 6;
const KINDS: usize = 7;

/// The kind of every byte.
pub(super) const CELL_KIND: [u8; 256] = {
    let mut t = [NOT_A_CELL; 256];
    t[b'P' as usize] = P as u8;
    t[b'A' as usize] = A as u8;
    t[b'B' as usize] = B as u8;
    t[b'H' as usize] = H as u8;
    t[b'E' as usize] = E as u8;
    t[b'F' as usize] = F as u8;
    t
};

/// EXTRA hive `n + 1`, the `n`-th after the main hive (`n` below [`MAX_EXTRA`]).
fn extra_name(n: usize) -> HiveName {
    HiveName::NthExtra(u8::try_from(n + 1).unwrap_or(u8::MAX))
}

fn decode_hive(
    params: &RucheParams,
    text: &[u8],
    name: HiveName,
) -> Result<HiveOutcome, LayoutError> {
    let mut hive = HiveOutcome::default();
    let mut rows = split(text, b'/');
    for (r, &len) in ROW_LENGTHS.iter().enumerate() {
        let place = RowPlace::new(name, r + 1);
        let row = rows.next().ok_or(RucheRule::TooFewRows {
            hive: name,
            rows: r,
        })?;
        let colon = memchr::memchr(b':', row).ok_or_else(|| RucheRule::NotAmountAndCells {
            row: place,
            text: Quoted::new(row),
        })?;
        let (amount_text, cells) = (&row[..colon], &row[colon + 1..]);
        let amount =
            params
                .rows
                .lookup_bytes(amount_text)
                .ok_or_else(|| RucheRule::NotARowAmount {
                    row: place,
                    amount: Quoted::new(amount_text),
                })?;
        if cells.len() != len {
            return Err(RucheRule::WrongCellCount {
                row: place,
                cells: String::from_utf8_lossy(cells).chars().count(),
                len,
            }
            .into());
        }
        let count: [u8; KINDS] = count_cells(cells, &CELL_KIND);
        if count[usize::from(NOT_A_CELL)] > 0 {
            return Err(RucheRule::NotACell {
                row: place,
                cells: Quoted::new(cells),
            }
            .into());
        }
        let (p, a, b) = (
            usize::from(count[P]),
            usize::from(count[A]),
            usize::from(count[B]),
        );
        hive.pots += count[H];
        hive.extras += count[E];
        let wins = row_wins(p, a, b).map_err(|fault| match fault {
            RowFault::TooManyP(p) => RucheRule::TooManyP { row: place, p },
            RowFault::TooManyOthers(..) => RucheRule::TooManyOthers {
                row: place,
                count: a.max(b),
            },
        })?;
        if wins {
            hive.winning_rows += 1;
            hive.rows_win = add_wins(hive.rows_win, amount)?;
        }
    }
    if rows.next().is_some() {
        return Err(RucheRule::TooManyRows { hive: name }.into());
    }
    if hive.pots as usize > params.max_honey {
        return Err(RucheRule::TooManyPots {
            hive: name,
            pots: hive.pots,
            max: params.max_honey,
        }
        .into());
    }
    hive.honey_win = params.honey_win(hive.pots as usize);
    Ok(hive)
}

/// Describes how an outcome shows its prize, in the words the Maxi report uses: `row`,
/// `2 rows + honey`, `row + EXTRA: honey` (the wins of all EXTRA hives together),
/// `loss`, `loss, EXTRA`.
pub fn form(outcome: &Outcome) -> String {
    fn part(rows: u32, honey: u32) -> String {
        let mut parts = Vec::new();
        match rows {
            0 => {}
            1 => parts.push("row".to_string()),
            n => parts.push(format!("{n} rows")),
        }
        match honey {
            0 => {}
            1 => parts.push("honey".to_string()),
            n => parts.push(format!("{n}×honey")),
        }
        parts.join(" + ")
    }
    let hive_honey = |h: &HiveOutcome| u32::from(!h.honey_win.is_zero());
    let main = part(
        u32::from(outcome.main.winning_rows),
        hive_honey(&outcome.main),
    );
    let extras = &outcome.extra[..outcome.extra_count];
    let extra = part(
        extras.iter().map(|h| u32::from(h.winning_rows)).sum(),
        extras.iter().map(hive_honey).sum(),
    );
    match (main.is_empty(), extra.is_empty()) {
        (true, true) if outcome.extra_count > 0 => "loss, EXTRA".to_string(),
        (true, true) => "loss".to_string(),
        (false, true) => main,
        (true, false) => format!("EXTRA: {extra}"),
        (false, false) => format!("{main} + EXTRA: {extra}"),
    }
}
