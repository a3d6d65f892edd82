//! Game definitions: what a game pays, read from `games/<id>.toml`.
//!
//! A definition holds data only: stakes, block size, the prize table of Article 3 for every
//! stake with its stated totals, and the parameters its mechanic needs (the amounts a row may
//! show, the honey table...). The loader refuses a definition whose table does not add up to
//! the totals it states, so a typo in a count or an amount can never reach a block file.
//! The built-in definitions are embedded in the binary so `--game ruche-or` works anywhere.

mod builtin;
pub mod preview;
pub mod profile;
pub mod schema;

pub use builtin::BUILTIN;

use crate::fs::open::read_at_most;
use crate::mechanic::{BuildError, Decoder, Mechanic, SettingsError, Synthesizer};
use crate::money::{canonical, cents, parse_amount, parse_canonical};
use crate::untrusted::{shown, tamed};
use profile::Profile;

use rust_decimal::Decimal;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::Path;
use thiserror::Error;

/// The most a game definition file may hold: the built-in ones are a few kilobytes.
pub const MAX_DEFINITION_BYTES: u64 = 1 << 20;

/// Most stakes a definition may list (SPEC §6.1; the built-in games have 1 to 4).
pub const MAX_STAKES: usize = 64;

/// Most rows of a stake's prize table (SPEC §6.1): the plan keeps a ticket's tier in one byte,
/// losers being the last tier.
pub const MAX_PRIZES: usize = u8::MAX as usize - 1;

/// Longest `id`, in bytes: it names a folder and begins every serial.
pub const MAX_ID_BYTES: usize = 64;

/// Longest `name`, in characters: it is shown in summaries and reports.
pub const MAX_NAME_CHARS: usize = 200;

/// A definition that cannot be used, with the file and the entry at fault.
#[derive(Debug, Error)]
pub enum GameError {
    /// `--game` names neither a built-in game nor a readable file.
    #[error("unknown game {}: the built-in games are {list}; or give the path of a game definition (.toml)", shown(.0), list = builtin::ids().join(", "))]
    Unknown(String),
    /// The definition file could not be read.
    #[error("cannot read game definition {file}: {cause}")]
    Read {
        /// The file.
        file: String,
        /// Why: part of the message, not a chained source, so that it is said once.
        cause: String,
    },
    /// The file is not valid TOML or does not have the expected fields.
    #[error("game definition {file} is malformed: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The file parses but an entry is wrong or inconsistent.
    #[error("game definition {file}, {entry}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// Which entry (e.g. `stakes[price=2].prizes[3]`).
        entry: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// The game has no such stake.
    #[error("game '{game}' has no stake of {price} €; its stakes are {stakes} (use --price)")]
    UnknownStake {
        /// Game id.
        game: String,
        /// The stake asked for.
        price: String,
        /// The stakes the game has.
        stakes: String,
    },
}

/// One row of a prize table: `count` tickets win `amount` each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prize {
    /// The ticket's total prize.
    pub amount: Decimal,
    /// How many tickets of a block win it.
    pub count: u64,
}

/// One stake of a game, with its Article 3 table.
#[derive(Debug, Clone)]
pub struct Stake {
    /// Price of a ticket.
    pub price: Decimal,
    /// Price of a ticket in cents, as used in serials.
    pub cents: u64,
    /// Stated number of winning tickets per block (checked against the table).
    pub winners: u64,
    /// Stated total of prizes per block (checked against the table).
    pub total: Decimal,
    /// The prize table, highest amount first; losers are not listed.
    pub prizes: Vec<Prize>,
    /// The mechanic with its checked parameters for this stake: the game-wide `[layout]`
    /// table overlaid by this stake's own `[stakes.layout]`.
    pub mechanic: Mechanic,
}

/// A loaded, validated game definition.
#[derive(Debug, Clone)]
pub struct Game {
    /// Short id used in folders and serials, e.g. `ruche-or`.
    pub id: String,
    /// Display name, e.g. `La ruche d'or`.
    pub name: String,
    /// Which mechanic decodes and synthesizes its layouts (one of [`crate::mechanic::NAMES`]);
    /// each stake holds its parameters.
    pub mechanic: String,
    /// Tickets per block.
    pub block_size: u64,
    /// Where the definition came from: `built-in` or a path.
    pub source: String,
    /// SHA-256 of the definition file's bytes.
    pub sha256: [u8; 32],
    /// The definition file's bytes (at most [`MAX_DEFINITION_BYTES`]), kept to be copied into
    /// the emission folder.
    pub text: String,
    /// The stakes, ascending.
    pub stakes: Vec<Stake>,
    /// The jurisdiction profile the definition names (`profile = "fdj"`), whose bounds every
    /// stake was checked against.
    pub profile: Option<Profile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGame {
    id: String,
    name: String,
    mechanic: String,
    block_size: u64,
    #[serde(default)]
    #[allow(dead_code)]
    rules: Option<String>,
    /// A jurisdiction profile's id ([`profile`]).
    #[serde(default)]
    profile: Option<String>,
    /// Read by the mechanic's own settings type ([`Mechanic::read_stakes`]).
    #[serde(default)]
    #[allow(dead_code)]
    layout: serde::de::IgnoredAny,
    stakes: Vec<RawStake>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStake {
    price: String,
    winners: u64,
    total: String,
    prizes: Vec<RawPrize>,
    /// Read by the mechanic's own settings type ([`Mechanic::read_stakes`]).
    #[serde(default)]
    #[allow(dead_code)]
    layout: serde::de::IgnoredAny,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrize {
    count: u64,
    amount: String,
}

impl Game {
    /// Resolves `--game`: a built-in id first, else a path to a definition file.
    pub fn resolve(arg: &str) -> Result<Game, GameError> {
        if let Some(text) = builtin::text(arg) {
            return Game::parse(text, "built-in");
        }
        let path = Path::new(arg);
        if path.exists() || arg.ends_with(".toml") {
            return Game::from_path(path);
        }
        Err(GameError::Unknown(arg.to_string()))
    }

    /// The built-in game with this id.
    pub fn builtin(id: &str) -> Result<Game, GameError> {
        let text = builtin::text(id).ok_or_else(|| GameError::Unknown(id.to_string()))?;
        Game::parse(text, "built-in")
    }

    /// Loads and validates a definition file.
    pub fn from_path(path: &Path) -> Result<Game, GameError> {
        let file = path.display().to_string();
        let read = |cause: String| GameError::Read {
            file: file.clone(),
            cause,
        };
        let bytes = read_at_most(path, MAX_DEFINITION_BYTES, "a game definition")
            .map_err(|e| read(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            read(format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Game::parse(&text, &file)
    }

    /// Parses and validates a definition; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Game, GameError> {
        let syntax = |e: toml::de::Error| GameError::Syntax {
            file: source.to_string(),
            message: match e.span() {
                Some(span) => {
                    let before = &text[..span.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                    format!(
                        "line {line}, column {column}: {}",
                        tamed(&e.message().trim_end().replace('\n', "; "))
                    )
                }
                None => tamed(&e.message().trim_end().replace('\n', "; ")),
            },
        };
        let raw: RawGame = toml::from_str(text).map_err(syntax)?;
        let invalid = |entry: String, message: String| GameError::Invalid {
            file: if source == "built-in" {
                format!("built-in {}", raw.id)
            } else {
                source.to_string()
            },
            entry,
            message,
        };
        if raw.id.is_empty()
            || !raw
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(invalid(
                "id".into(),
                format!(
                    "{} must be lowercase letters, digits and '-'",
                    shown(&raw.id)
                ),
            ));
        }
        if raw.id.len() > MAX_ID_BYTES {
            return Err(invalid(
                "id".into(),
                format!(
                    "{} characters, at most {MAX_ID_BYTES} (SPEC §6.1)",
                    raw.id.len()
                ),
            ));
        }
        let name_chars = raw.name.chars().count();
        if name_chars > MAX_NAME_CHARS {
            return Err(invalid(
                "name".into(),
                format!("{name_chars} characters, at most {MAX_NAME_CHARS} (SPEC §6.1)"),
            ));
        }
        if raw.block_size == 0 || raw.block_size > 9_999_999 {
            return Err(invalid(
                "block_size".into(),
                format!(
                    "{} is out of range: a block holds 1 to 9 999 999 tickets (serials have 7 digits)",
                    raw.block_size
                ),
            ));
        }
        if raw.stakes.is_empty() {
            return Err(invalid("stakes".into(), "no stake is defined".into()));
        }
        if let Some(message) = too_many(raw.stakes.len(), MAX_STAKES) {
            return Err(invalid("stakes".into(), message));
        }
        // The mechanic reads its own settings, typed: a misspelt key is refused with its line.
        let mut mechanics = match Mechanic::read_stakes(&raw.mechanic, text) {
            Ok(m) => m.into_iter(),
            Err(SettingsError::Syntax(e)) => return Err(syntax(e)),
            Err(e @ SettingsError::Unknown(_)) => {
                return Err(invalid("mechanic".into(), e.to_string()))
            }
        };
        let profile = match &raw.profile {
            None => None,
            Some(id) => {
                Some(Profile::builtin(id).map_err(|e| invalid("profile".into(), e.to_string()))?)
            }
        };
        let mut stakes = Vec::with_capacity(raw.stakes.len());
        let mut seen = BTreeSet::new();
        for (si, rs) in raw.stakes.iter().enumerate() {
            let price = parse_amount(&rs.price)
                .map_err(|message| invalid(format!("stakes[{si}].price"), message.to_string()))?;
            let where_ = format!("stakes[price={}]", canonical(price));
            let Some(price_cents) = cents(price) else {
                return Err(invalid(
                    where_,
                    "a stake must be a whole number of cents".into(),
                ));
            };
            if !seen.insert(price) {
                return Err(invalid(where_, "this stake is defined twice".into()));
            }
            let Some(total) = parse_canonical(&rs.total) else {
                return Err(invalid(
                    format!("{where_}.total"),
                    format!("{} is not a canonical amount", shown(&rs.total)),
                ));
            };
            if let Some(message) = too_many(rs.prizes.len(), MAX_PRIZES) {
                return Err(invalid(format!("{where_}.prizes"), message));
            }
            let mut prizes = Vec::with_capacity(rs.prizes.len());
            let mut amounts = BTreeSet::new();
            for (pi, rp) in rs.prizes.iter().enumerate() {
                let entry = format!("{where_}.prizes[{pi}]");
                let amount = match parse_amount(&rp.amount) {
                    Ok(a) => a,
                    Err(message) => return Err(invalid(entry, format!("amount {message}"))),
                };
                if rp.count == 0 {
                    return Err(invalid(entry, "count must be at least 1".into()));
                }
                if rp.count > raw.block_size {
                    return Err(invalid(
                        entry,
                        format!(
                            "count {} is more than the {} tickets of a block: a count is at most the block size",
                            rp.count, raw.block_size
                        ),
                    ));
                }
                if !amounts.insert(amount) {
                    return Err(invalid(
                        entry,
                        format!("amount {} is listed twice", canonical(amount)),
                    ));
                }
                prizes.push(Prize {
                    amount,
                    count: rp.count,
                });
            }
            if prizes.is_empty() {
                return Err(invalid(
                    format!("{where_}.prizes"),
                    "the prize table is empty".into(),
                ));
            }
            // Checked: counts come from the file (each is at most the block size, and there
            // are at most 254 of them, so this cannot overflow; it must not wrap if it did).
            let Some(winners) = prizes
                .iter()
                .try_fold(0u64, |sum, p| sum.checked_add(p.count))
            else {
                return Err(invalid(
                    format!("{where_}.prizes"),
                    "the counts add up to more than a 64-bit number holds".into(),
                ));
            };
            if winners != rs.winners {
                return Err(invalid(
                    format!("{where_}.winners"),
                    format!(
                        "the prize rows add up to {winners} winning tickets but the definition states {}",
                        rs.winners
                    ),
                ));
            }
            if winners > raw.block_size {
                return Err(invalid(
                    format!("{where_}.winners"),
                    format!(
                        "{winners} winning tickets do not fit in a block of {}",
                        raw.block_size
                    ),
                ));
            }
            // Exact, and checked: amounts and counts come from the file.
            let Some(sum) = prizes.iter().try_fold(Decimal::ZERO, |sum, p| {
                p.amount
                    .checked_mul(Decimal::from(p.count))
                    .and_then(|row| sum.checked_add(row))
            }) else {
                return Err(invalid(
                    format!("{where_}.prizes"),
                    "the prize rows add up to more than an amount can hold".into(),
                ));
            };
            if sum != total {
                return Err(invalid(
                    format!("{where_}.total"),
                    format!(
                        "the prize rows add up to {} € but the definition states {} €",
                        canonical(sum),
                        canonical(total)
                    ),
                ));
            }
            prizes.sort_by_key(|p| std::cmp::Reverse(p.amount));
            // No stake pays back more than its stakes; a profile's bounds, if one is named.
            profile::check_stake(
                profile.as_ref(),
                price,
                raw.block_size,
                total,
                prizes[0].amount,
            )
            .map_err(|e| invalid(format!("{where_}.prizes"), e.to_string()))?;
            // One settings entry per [[stakes]] entry, read from the same text.
            let mechanic = mechanics
                .next()
                .ok_or_else(|| invalid(format!("{where_}.layout"), "not read".into()))?
                .map_err(|e| invalid(format!("{where_}.layout"), e.to_string()))?;
            profile::check_near_misses(profile.as_ref(), &mechanic.near_miss_rates())
                .map_err(|e| invalid(format!("{where_}.layout.near_miss"), e.to_string()))?;
            stakes.push(Stake {
                price,
                cents: price_cents,
                winners,
                total,
                prizes,
                mechanic,
            });
        }
        stakes.sort_by_key(|s| s.price);
        // Whether every prize can be shown is the synthesizer's business: `emit` builds it
        // ([`Stake::synthesizer`]); loading, and `verify`, need only the decoders.
        Ok(Game {
            id: raw.id.clone(),
            name: raw.name.clone(),
            mechanic: raw.mechanic.clone(),
            block_size: raw.block_size,
            source: source.to_string(),
            sha256: Sha256::digest(text.as_bytes()).into(),
            text: text.to_string(),
            stakes,
            profile,
        })
    }

    /// The stake of this price, or an error listing the stakes the game has.
    pub fn stake(&self, price: Decimal) -> Result<&Stake, GameError> {
        self.stakes
            .iter()
            .find(|s| s.price == price)
            .ok_or_else(|| GameError::UnknownStake {
                game: self.id.clone(),
                price: canonical(price),
                stakes: self.stake_list(),
            })
    }

    /// The stakes as text, e.g. `0.5, 1, 2, 3`.
    pub fn stake_list(&self) -> String {
        self.stakes
            .iter()
            .map(|s| canonical(s.price))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What to say of a list of `len` entries if it has more than `max`.
fn too_many(len: usize, max: usize) -> Option<String> {
    (len > max).then(|| format!("{len} entries, at most {max} (SPEC §6.1)"))
}

impl Stake {
    /// The referee of this stake's layouts.
    pub fn decoder(&self) -> Box<dyn Decoder> {
        self.mechanic.decoder()
    }

    /// The synthesizer of this stake's layouts; fails, naming the setting to change, if a
    /// prize of the table cannot be shown, or if a signal arrives while it is built
    /// ([`BuildError::Interrupted`]).
    pub fn synthesizer(&self) -> Result<Box<dyn Synthesizer>, BuildError> {
        let prizes: Vec<Decimal> = self.prizes.iter().map(|p| p.amount).collect();
        crate::interrupt::check()?;
        self.mechanic
            .synthesizer(&prizes)
            .map_err(|e| e.at_stake(self.price))
    }

    /// Every amount a ticket of this stake may win, highest first, then `0`.
    pub fn tiers(&self) -> Vec<Decimal> {
        let mut t: Vec<Decimal> = self.prizes.iter().map(|p| p.amount).collect();
        t.push(Decimal::ZERO);
        t
    }

    /// Number of losing tickets in a block of `block_size`.
    pub fn losers(&self, block_size: u64) -> u64 {
        block_size - self.winners
    }

    /// The share of stakes paid back as prizes (e.g. 0.7 for 70 %).
    pub fn payout_ratio(&self, block_size: u64) -> Decimal {
        self.total / (self.price * Decimal::from(block_size))
    }
}

#[cfg(test)]
mod tests;
