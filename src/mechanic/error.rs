//! Why a layout is refused, why a synthesizer cannot be built, and why a layout cannot be
//! drawn: typed errors whose variants name the rule at fault and carry its place and values.
//!
//! Each message is what `verify`, `emit`, `show` and `report` print (and `verify`'s JSON
//! carries), so its text is part of the product: a variant's `Display` is that text. The
//! rules of one mechanic are its own enum, in its `decode.rs` ([`RucheRule`], [`MaxiRule`],
//! [`CalendarRule`]); what the explainers refuse is [`ExplainFault`]. Errors are built only
//! where a layout is refused, never on the way a valid one is read: a variant is a few words
//! of fields, and the text is made only when it is shown.

use crate::mechanic::calendar::{CalendarRule, CLOVER_MAX};
use crate::mechanic::explain::ExplainFault;
use crate::mechanic::maxi_ruche::MaxiRule;
use crate::mechanic::ruche::RucheRule;
use crate::mechanic::util::MAX_WEIGHT;
use crate::money::canonical;
use crate::untrusted::shown;
use rust_decimal::Decimal;
use std::fmt;
use thiserror::Error;

/// A layout that breaks a rule of SPEC §3 or of the layout grammar: the variant names the
/// rule, its fields the place in the ticket (hive, row, month, byte) and what was found there.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// A byte other than the one the grammar puts here: a separator missing, or a layout that
    /// goes on where it must end.
    #[error("unexpected {} at character {}: expected {expected}", quoted_char(*.found), .at + 1)]
    UnexpectedToken {
        /// What the grammar puts here.
        expected: Expected,
        /// The character found (U+FFFD for bytes that are not UTF-8).
        found: char,
        /// Where it stands: its byte offset in the layout (the message counts from 1).
        at: usize,
    },
    /// The layout stops where the grammar expects more: a ticket cut short.
    #[error("the layout ends early: expected {expected}")]
    EndsEarly {
        /// What the grammar puts here.
        expected: Expected,
    },
    /// The wins of the layout add up to more than an amount can hold: only a forged layout,
    /// or a stake built without the bounds of SPEC §6, can do this.
    #[error("the wins of this layout add up to more than an amount can hold")]
    WinsOverflow,
    /// The layout wins a prize that is not a whole number of cents an amount can hold, which
    /// no ticket can pay.
    #[error(
        "the wins of this layout, {} €, are not a whole number of cents an amount can hold",
        canonical(*.prize)
    )]
    NotWholeCents {
        /// What the layout wins.
        prize: Decimal,
    },
    /// A rule of La ruche d'or (SPEC §2.1 and §3) is broken.
    #[error(transparent)]
    Ruche(#[from] RucheRule),
    /// A rule of Maxi Ruche d'or (SPEC §2.2 and §3) is broken.
    #[error(transparent)]
    Maxi(#[from] MaxiRule),
    /// A rule of Année de la chance (SPEC §2.3 and §3) is broken.
    #[error(transparent)]
    Calendar(#[from] CalendarRule),
    /// The explainer or the report's features path cannot read a layout (SPEC §3.2); for a
    /// layout the decoder accepts, a defect of the program.
    #[error(transparent)]
    Explain(#[from] ExplainFault),
}

/// What the grammar of a layout puts at a place where something else stands
/// ([`LayoutError::UnexpectedToken`], [`LayoutError::EndsEarly`]): a separator or an end,
/// named with its place. Année de la chance's grammar is read with the cursor's
/// `unexpected`, so its tokens are these; the hive games name theirs in their own rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// `:` after the two symbols of a month (1 to 12).
    ColonAfterSymbols {
        /// The month, from 1 (January).
        month: u8,
    },
    /// `/` after the amount of a month, which another month follows.
    SlashAfterMonth {
        /// The month, from 1 (January).
        month: u8,
    },
    /// `|` and the clover after December's amount.
    CloverAfterDecember,
    /// One of the clover's numbers, 1 to 13.
    CloverNumber {
        /// Which number of the clover, from 1.
        nth: u8,
    },
    /// `-` after one of the clover's first two numbers.
    DashAfterCloverNumber {
        /// Which number of the clover, from 1.
        nth: u8,
    },
    /// `:` after the clover's third number, before its amount.
    ColonAfterCloverNumbers,
    /// The end of the layout after the clover's amount.
    EndAfterClover,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::ColonAfterSymbols { month } => {
                write!(f, "':' after the two symbols of month {month}")
            }
            Expected::SlashAfterMonth { month } => {
                write!(f, "'/' after the amount of month {month}")
            }
            Expected::CloverAfterDecember => f.write_str("'|' and the clover after month 12"),
            Expected::CloverNumber { nth } => {
                write!(f, "clover number {nth} (1 to {CLOVER_MAX})")
            }
            Expected::DashAfterCloverNumber { nth } => write!(f, "'-' after clover number {nth}"),
            Expected::ColonAfterCloverNumbers => f.write_str("':' after the third clover number"),
            Expected::EndAfterClover => {
                f.write_str("the end of the layout after the clover amount")
            }
        }
    }
}

/// What stands where a rule wanted something else, as messages name it: a character and its
/// byte offset (`'x' at byte 12`), or the end of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A character of the layout.
    Char {
        /// The character (U+FFFD for bytes that are not UTF-8).
        found: char,
        /// Its byte offset in the layout, from 0.
        at: usize,
    },
    /// The end of the layout.
    End,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Char { found, at } => write!(f, "{found:?} at byte {at}"),
            Found::End => f.write_str("the end of the layout"),
        }
    }
}

/// A piece of a layout as a message quotes it: between single quotes, escaped, and cut to a
/// few dozen characters with its full length ([`crate::untrusted::shown`]). A layout comes
/// from a file nobody vouches for: what a message echoes of it must not act on a terminal,
/// nor make a 50 MB message of a 50 MB field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quoted(Box<str>);

impl Quoted {
    /// The bytes, quoted and escaped.
    #[cold]
    pub fn new(bytes: impl AsRef<[u8]>) -> Self {
        Quoted(shown(bytes).into_boxed_str())
    }

    /// The quoted text, as messages show it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One character of a layout, quoted and escaped as [`Quoted`] quotes text.
pub(crate) fn quoted_char(c: char) -> String {
    shown(c.encode_utf8(&mut [0; 4]))
}

/// Why a synthesizer was not built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// A prize of the table cannot be shown with the stake's settings: the reason names the
    /// prize and the setting to change, and the stake is named once the game places it
    /// ([`BuildError::at_stake`]).
    #[error("{}{reason}", stake_place(.stake))]
    Unshowable {
        /// The stake's price, once the game has placed the error under its stake (the
        /// message then starts `stakes[price=…].layout: `).
        stake: Option<Decimal>,
        /// What cannot be shown, and what to change.
        reason: Unshowable,
    },
    /// A signal arrived while it was being built.
    #[error(transparent)]
    Interrupted(#[from] crate::interrupt::Interrupted),
}

impl BuildError {
    /// The error placed under the stake of price `price` (what the game's loader calls it).
    pub fn at_stake(self, price: Decimal) -> Self {
        match self {
            BuildError::Unshowable { reason, .. } => BuildError::Unshowable {
                stake: Some(price),
                reason,
            },
            e => e,
        }
    }
}

impl From<Unshowable> for BuildError {
    fn from(reason: Unshowable) -> Self {
        BuildError::Unshowable {
            stake: None,
            reason,
        }
    }
}

/// `stakes[price=…].layout: ` for an error placed under its stake, else nothing.
fn stake_place(stake: &Option<Decimal>) -> String {
    match stake {
        Some(price) => format!("stakes[price={}].layout: ", canonical(*price)),
        None => String::new(),
    }
}

/// Why a prize of a stake's table cannot be shown with the stake's layout settings
/// (SPEC §3.1): each names the prize or the setting at fault, and what a game designer
/// changes to fix it. `emit` refuses to start on one; `verify` does not build synthesizers.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Unshowable {
    /// A prize or an amount of the settings is not a whole number of cents, which no layout
    /// can add up to (the loader refuses such a definition, so only a stake built without it
    /// can show this).
    #[error("{} € is not a whole number of cents", canonical(*.amount))]
    NotWholeCents {
        /// The amount.
        amount: Decimal,
    },
    /// La ruche d'or: no sum of up to `parts` row amounts and honey wins makes the prize; the
    /// fix is another row amount.
    #[error(
        "the prize {} € cannot be made of up to {parts} row amounts and honey wins: add a row amount",
        canonical(*.prize)
    )]
    NoRucheSum {
        /// The prize.
        prize: Decimal,
        /// The most winning parts a ticket shows.
        parts: usize,
    },
    /// La ruche d'or: the prize can only be shown with numbers of winning parts that
    /// `near_miss.part_weights` gives weight 0; the fix is a weight above 0 for one of them.
    #[error(
        "the prize {} € can only be shown with {} part(s), and near_miss.part_weights gives them weight 0: give them a weight from 1 to {MAX_WEIGHT}",
        canonical(*.prize),
        or_list(.parts)
    )]
    PartsWeighedZero {
        /// The prize.
        prize: Decimal,
        /// The numbers of winning parts it can be shown with, smallest first.
        parts: Vec<usize>,
    },
    /// Maxi Ruche d'or: the prize is paid only by the bonus stage, and
    /// `near_miss.bonus_weight` is 0; the fix is a bonus weight above 0.
    #[error(
        "prize {} € can only be shown by the bonus stage, and near_miss.bonus_weight is 0: give it a weight from 1 to {MAX_WEIGHT}",
        canonical(*.prize)
    )]
    BonusWeighedZero {
        /// The prize.
        prize: Decimal,
    },
    /// Maxi Ruche d'or: no sum of up to `components` winning rows and bees makes the prize
    /// without an EXTRA hive, and the bonus table does not pay it; the fix is another row or
    /// bee amount.
    #[error(
        "prize {} € cannot be shown: no sum of up to {components} winning rows \
         (row_amounts, with multipliers 2-6 and 10) and bees (bee_amounts, one per hive) \
         makes it without an EXTRA hive, and the bonus table does not pay it; add an amount to row_amounts or bee_amounts",
        canonical(*.prize)
    )]
    NoMaxiSum {
        /// The prize.
        prize: Decimal,
        /// The most winning parts a ticket shows.
        components: usize,
    },
    /// Année de la chance: no sum of at most `max_winning_months` month amounts and at most
    /// one clover amount makes the prize; the fix is more amounts or a higher
    /// `max_winning_months`.
    #[error(
        "prize {} € cannot be shown: no sum of at most {max_winning_months} amounts of month_amounts plus at most one of clover_amounts makes it (add amounts, or raise max_winning_months)",
        canonical(*.prize)
    )]
    NoCalendarSum {
        /// The prize.
        prize: Decimal,
        /// The stake's `max_winning_months`.
        max_winning_months: usize,
    },
    /// A list of `near_miss` weights gives every case weight 0, so nothing can be drawn from
    /// it (the loader refuses such a list, so only a stake built without it can show this).
    #[error("{key}: all zero")]
    AllWeightsZero {
        /// The setting, e.g. `near_miss.row_p_weights`.
        key: &'static str,
    },
    /// An amount too long to be written in a hive row or at a hive's top (SPEC §6.1 bounds
    /// the amounts a definition may state well below).
    #[error("the amount {amount} is too long to show in a hive")]
    HiveAmountTooLong {
        /// The amount's text, quoted.
        amount: Quoted,
    },
    /// Année de la chance: an amount of the list `key` longer than 12 characters, which a
    /// month or the clover cannot show (SPEC §6.1 bounds the amounts a definition may state).
    #[error("{key}: an amount longer than 12 characters (at most 999999999.99, SPEC §6.1)")]
    AmountTooLong {
        /// The list, `month_amounts` or `clover_amounts`.
        key: &'static str,
    },
    /// A hive row of some kind has no way to be drawn: a defect of the program, since the
    /// rows a hive game needs always exist.
    #[error("{} cannot be drawn", if *.winning { "a winning row" } else { "a row" })]
    RowUndrawable {
        /// Whether the row is a winning one (La ruche d'or), or any row (Maxi Ruche d'or).
        winning: bool,
    },
    /// Maxi Ruche d'or: no number of bees can be drawn for a bonus stage that wins nothing.
    /// The bonus table pays from 1 bee at the lowest, so some always can: a defect of the
    /// program.
    #[error("bonus: no losing bee count")]
    NoLosingBonus,
    /// Année de la chance: a losing month needs two different symbols, and the game has
    /// fewer than two (the loader refuses such a definition, so only a stake built without
    /// it can show this).
    #[error("symbols: a losing month needs two different symbols")]
    NoLosingMonth,
}

/// `1 or 2`: the numbers of parts a prize can be shown with.
fn or_list(parts: &[usize]) -> String {
    parts
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Why a synthesizer drew no layout: a prize it was not built for (a game definition that
/// slipped past `check`, or a caller's mistake).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SynthesisError {
    /// The prize asked for is not in the stake's table, so no layout is planned for it.
    #[error("prize {} € is not in this stake's prize table", canonical(*.prize))]
    NotAPrize {
        /// The prize asked for.
        prize: Decimal,
    },
}

#[cfg(test)]
mod tests {
    //! The texts of the errors are what the tools print and `verify`'s JSON carries: each is
    //! held here to the exact text it had as a free-form message, for the variants that the
    //! decoders' tests do not reach with a layout (the rest are asserted there).

    use super::*;
    use crate::mechanic::calendar::AmountPlace as CalendarAmount;
    use crate::mechanic::hive::{HiveName, RowPlace};
    use crate::mechanic::maxi_ruche::AmountPlace as MaxiAmount;

    fn d(text: &str) -> Decimal {
        text.parse().expect("a decimal")
    }

    #[track_caller]
    fn says(error: impl Into<LayoutError>, text: &str) {
        assert_eq!(error.into().to_string(), text);
    }

    #[test]
    fn layout_errors_keep_their_texts() {
        says(
            LayoutError::WinsOverflow,
            "the wins of this layout add up to more than an amount can hold",
        );
        says(
            LayoutError::NotWholeCents { prize: d("0.001") },
            "the wins of this layout, 0.001 €, are not a whole number of cents an amount can hold",
        );
        says(
            LayoutError::UnexpectedToken {
                expected: Expected::SlashAfterMonth { month: 7 },
                found: '\u{1b}',
                at: 40,
            },
            "unexpected '\\u{1b}' at character 41: expected '/' after the amount of month 7",
        );
        says(
            LayoutError::EndsEarly {
                expected: Expected::ColonAfterSymbols { month: 3 },
            },
            "the layout ends early: expected ':' after the two symbols of month 3",
        );
        says(
            RucheRule::TooManyExtraSymbols { extras: 4 },
            "main hive: 4 EXTRA symbols, at most 3 are allowed",
        );
        says(
            RucheRule::TooManyP {
                row: RowPlace::new(HiveName::NthExtra(2), 5),
                p: 4,
            },
            "EXTRA hive 2, row 5: 4 P, a row holds at most 3",
        );
        says(
            MaxiRule::SecondExtraHive {
                found: Found::Char {
                    found: '|',
                    at: 412,
                },
            },
            "a second EXTRA hive starts at '|' at byte 412: a ticket has at most one EXTRA hive",
        );
        says(
            MaxiRule::TooManyBonusBees { bees: 9 },
            "bonus stage: 9 bees; the bonus stage shows at most 8 bees",
        );
        says(
            MaxiRule::NoSeparatorAfterAmount {
                place: MaxiAmount::Bee(HiveName::Extra),
                amount: Quoted::new("25"),
                found: Found::End,
            },
            "EXTRA hive, bee amount at the top: expected '#' after the amount '25', found the end of the layout",
        );
        says(
            MaxiRule::WrongCellCount {
                row: RowPlace::new(HiveName::Main, 2),
                cells: 3,
                len: 5,
                not_a_cell: Some(Found::Char { found: 'Z', at: 9 }),
            },
            "main hive, row 2: 3 cells, expected 5 ('Z' at byte 9 is not a cell: cells are P A B F E Q 2 3 4 5 6 X)",
        );
        says(
            CalendarRule::NotAnAllowedAmount {
                place: CalendarAmount::Clover,
                amount: "7".to_string(),
            },
            "the clover: amount 7 is not one of the amounts this stake allows (clover_amounts)",
        );
        let explained = [
            (
                ExplainFault::NotSevenRows,
                "a hive that is not seven rows amount:cells joined by '/'",
            ),
            (
                ExplainFault::NotCountable,
                "an amount the report cannot count in cents",
            ),
            (
                ExplainFault::TooManyAmounts,
                "more amounts than the report can count",
            ),
            (
                ExplainFault::TooManyParts,
                "more parts than a ticket can show",
            ),
            (
                ExplainFault::TooManyWinningParts,
                "more winning parts than a ticket can show",
            ),
            (
                ExplainFault::PartsDisagree {
                    parts: d("5"),
                    prize: d("7.50"),
                },
                "the winning parts add up to 5 € but the decoder reads 7.5 €: explanation refused",
            ),
            (
                ExplainFault::HoneyDiffers {
                    hive: HiveName::NthExtra(2),
                },
                "EXTRA hive 2: the honey pots read here differ from the decoder's: explanation refused",
            ),
            (
                ExplainFault::HoneyDiffers {
                    hive: HiveName::Main,
                },
                "main hive: the honey pots read here differ from the decoder's: explanation refused",
            ),
            (
                ExplainFault::NoBeeAmount {
                    hive: HiveName::Extra,
                },
                "EXTRA hive: no bee amount",
            ),
            (ExplainFault::BonusBees { bees: 13 }, "bonus stage: 13 bees"),
            (
                ExplainFault::NotASymbol { symbol: 'Z' },
                "'Z' is not a symbol",
            ),
            (
                ExplainFault::Malformed {
                    grammar: "months|clover",
                },
                "not months|clover",
            ),
        ];
        for (error, text) in explained {
            says(error, text);
        }
    }

    #[test]
    fn build_errors_keep_their_texts() {
        let cases = [
            (
                Unshowable::NotWholeCents {
                    amount: d("0.005"),
                },
                "0.005 € is not a whole number of cents",
            ),
            (
                Unshowable::NoRucheSum {
                    prize: d("2"),
                    parts: 3,
                },
                "the prize 2 € cannot be made of up to 3 row amounts and honey wins: add a row amount",
            ),
            (
                Unshowable::PartsWeighedZero {
                    prize: d("5000"),
                    parts: vec![1],
                },
                "the prize 5000 € can only be shown with 1 part(s), and near_miss.part_weights gives them weight 0: give them a weight from 1 to 1000000",
            ),
            (
                Unshowable::PartsWeighedZero {
                    prize: d("12.50"),
                    parts: vec![2, 3],
                },
                "the prize 12.5 € can only be shown with 2 or 3 part(s), and near_miss.part_weights gives them weight 0: give them a weight from 1 to 1000000",
            ),
            (
                Unshowable::BonusWeighedZero { prize: d("3") },
                "prize 3 € can only be shown by the bonus stage, and near_miss.bonus_weight is 0: give it a weight from 1 to 1000000",
            ),
            (
                Unshowable::NoMaxiSum {
                    prize: d("7"),
                    components: 3,
                },
                "prize 7 € cannot be shown: no sum of up to 3 winning rows (row_amounts, with multipliers 2-6 and 10) and bees (bee_amounts, one per hive) makes it without an EXTRA hive, and the bonus table does not pay it; add an amount to row_amounts or bee_amounts",
            ),
            (
                Unshowable::NoCalendarSum {
                    prize: d("1"),
                    max_winning_months: 4,
                },
                "prize 1 € cannot be shown: no sum of at most 4 amounts of month_amounts plus at most one of clover_amounts makes it (add amounts, or raise max_winning_months)",
            ),
            (
                Unshowable::AllWeightsZero {
                    key: "near_miss.extra_weights",
                },
                "near_miss.extra_weights: all zero",
            ),
            (
                Unshowable::HiveAmountTooLong {
                    amount: Quoted::new("12345678901234567"),
                },
                "the amount '12345678901234567' is too long to show in a hive",
            ),
            (
                Unshowable::AmountTooLong {
                    key: "month_amounts",
                },
                "month_amounts: an amount longer than 12 characters (at most 999999999.99, SPEC §6.1)",
            ),
            (
                Unshowable::RowUndrawable { winning: true },
                "a winning row cannot be drawn",
            ),
            (
                Unshowable::RowUndrawable { winning: false },
                "a row cannot be drawn",
            ),
            (Unshowable::NoLosingBonus, "bonus: no losing bee count"),
            (
                Unshowable::NoLosingMonth,
                "symbols: a losing month needs two different symbols",
            ),
        ];
        for (reason, text) in cases {
            assert_eq!(reason.to_string(), text);
            let error = BuildError::from(reason.clone());
            assert_eq!(error.to_string(), text);
            assert_eq!(
                error.at_stake(d("0.50")).to_string(),
                format!("stakes[price=0.5].layout: {text}")
            );
        }
        let signal = BuildError::from(crate::interrupt::Interrupted(15)).at_stake(d("1"));
        assert!(matches!(
            signal,
            BuildError::Interrupted(crate::interrupt::Interrupted(15))
        ));
        assert_eq!(
            SynthesisError::NotAPrize { prize: d("7.0") }.to_string(),
            "prize 7 € is not in this stake's prize table"
        );
    }

    /// A decoder answers `Result<_, LayoutError>` for every ticket: the error stays a few
    /// words, its texts made only when shown.
    #[test]
    fn a_layout_error_stays_small() {
        assert!(std::mem::size_of::<LayoutError>() <= 48);
    }
}
