//! The closing of an emission as evidence in its folder: the signed final reconciliation
//! (`emission.closing.json` and its `.sig`) that `close` writes from the game server's
//! database, and the audit-log line that records it ([`log::closing_result`]).
//!
//! `verify` of an emission folder checks them ([`check_in_folder`]): the reconciliation's
//! signature with the emission's key; that it names this emission (game, stake, number, kind,
//! seed and key commitments of the record); that its numbers agree with the folder's signed
//! manifests (each block's manifest SHA-256 and tickets, sold + unsold = tickets per block and
//! per tier, the tier counts = the manifests' Article 3 counts, the totals, the prizes paid and
//! remaining, the top prize and the payout recomputed); that the withdrawals it lists are the
//! folder's records; and that the audit log records exactly this file. A log that records a
//! closing whose file is missing fails, as one recording a seal does; so does a file that the
//! log does not record.

use crate::block::id::{EmissionId, FieldError};
use crate::block::manifest::Manifest;
use crate::emission::log::{self, Chain};
use crate::emission::record::Record;
use crate::emission::{read_signed, shown};
use crate::json::{parse_strict, Layout};
use crate::money::{canonical, cents, from_cents, parse_canonical};
use crate::problem::chained;
use ed25519_dalek::VerifyingKey;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The final reconciliation's file in the emission folder.
pub const CLOSING_FILE: &str = "emission.closing.json";
/// Its signature (64 raw bytes, Ed25519, the emission's key).
pub const CLOSING_SIG_FILE: &str = "emission.closing.json.sig";
/// Largest reconciliation read.
pub const MAX_CLOSING_BYTES: u64 = 16 << 20;
/// The reconciliation's format number.
pub const RECONCILIATION_FORMAT: u32 = 1;

/// One block in the final reconciliation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedBlock {
    /// Block number.
    pub block: u32,
    /// SHA-256 of its manifest.
    pub manifest_sha256: String,
    /// Tickets.
    pub tickets: u64,
    /// Sold.
    pub sold: u64,
    /// Unsold.
    pub unsold: u64,
    /// Withdrawn from sale (by a record naming it or the whole emission).
    pub withdrawn: bool,
}

/// One prize tier, over the emission's loaded blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedTier {
    /// The prize, canonical euros (`0` for the losing tickets).
    pub prize: String,
    /// Tickets of this prize in the manifests.
    pub count: u64,
    /// Sold.
    pub sold: u64,
    /// Unsold.
    pub unsold: u64,
}

/// A withdrawal applied before the closing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedWithdrawal {
    /// Its number.
    pub number: u32,
    /// The block, or `None`: the whole emission.
    pub block: Option<u32>,
    /// SHA-256 of the record.
    pub record_sha256: String,
}

/// The signed final reconciliation of a closed emission (FORMAT.md, "Closing reconciliation").
/// Its emission is one [`EmissionId`], checked at reading (a `game` that is no game id, a
/// `stake` that is not a canonical price, are refused, naming the field); on disk the fields
/// are those of [`ReconciliationWire`], in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ReconciliationWire", into = "ReconciliationWire")]
pub struct Reconciliation {
    /// Always [`RECONCILIATION_FORMAT`].
    pub format: u32,
    /// The emission (fields `game`, `stake` and `emission`).
    pub id: EmissionId,
    /// Game name.
    pub game_name: String,
    /// `test` or `production`.
    pub kind: String,
    /// SHA-256 of the seed.
    pub seed_sha256: String,
    /// SHA-256 of the emission's public key.
    pub public_key_sha256: String,
    /// When it was closed (the database's clock, UTC): every sale is before.
    pub closed: String,
    /// Every loaded block.
    pub blocks: Vec<ClosedBlock>,
    /// The withdrawals applied.
    pub withdrawals: Vec<ClosedWithdrawal>,
    /// Per tier, highest prize first.
    pub tiers: Vec<ClosedTier>,
    /// Tickets loaded.
    pub tickets: u64,
    /// Sold.
    pub sold: u64,
    /// Unsold.
    pub unsold: u64,
    /// Prizes of the tickets sold, canonical euros.
    pub paid: String,
    /// Prizes of the tickets unsold.
    pub remaining: String,
    /// The highest prize.
    pub top_prize: String,
    /// Tickets of the highest prize unsold.
    pub top_prizes_unsold: u64,
    /// Prizes paid over the price of the tickets sold (6 decimals); `None` when none was sold.
    pub payout: Option<String>,
    /// Program that wrote it.
    pub generator: String,
}

/// A reconciliation as it is written: its fields in their order, the emission's loose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReconciliationWire {
    format: u32,
    game: String,
    game_name: String,
    stake: String,
    emission: u32,
    kind: String,
    seed_sha256: String,
    public_key_sha256: String,
    closed: String,
    blocks: Vec<ClosedBlock>,
    withdrawals: Vec<ClosedWithdrawal>,
    tiers: Vec<ClosedTier>,
    tickets: u64,
    sold: u64,
    unsold: u64,
    paid: String,
    remaining: String,
    top_prize: String,
    top_prizes_unsold: u64,
    payout: Option<String>,
    generator: String,
}

impl TryFrom<ReconciliationWire> for Reconciliation {
    type Error = FieldError;

    fn try_from(w: ReconciliationWire) -> Result<Reconciliation, FieldError> {
        Ok(Reconciliation {
            format: w.format,
            id: EmissionId::of_fields(&w.game, &w.stake, w.emission)?,
            game_name: w.game_name,
            kind: w.kind,
            seed_sha256: w.seed_sha256,
            public_key_sha256: w.public_key_sha256,
            closed: w.closed,
            blocks: w.blocks,
            withdrawals: w.withdrawals,
            tiers: w.tiers,
            tickets: w.tickets,
            sold: w.sold,
            unsold: w.unsold,
            paid: w.paid,
            remaining: w.remaining,
            top_prize: w.top_prize,
            top_prizes_unsold: w.top_prizes_unsold,
            payout: w.payout,
            generator: w.generator,
        })
    }
}

impl From<Reconciliation> for ReconciliationWire {
    fn from(r: Reconciliation) -> ReconciliationWire {
        ReconciliationWire {
            format: r.format,
            game: r.id.game().to_string(),
            game_name: r.game_name,
            stake: r.id.stake().to_string(),
            emission: r.id.number(),
            kind: r.kind,
            seed_sha256: r.seed_sha256,
            public_key_sha256: r.public_key_sha256,
            closed: r.closed,
            blocks: r.blocks,
            withdrawals: r.withdrawals,
            tiers: r.tiers,
            tickets: r.tickets,
            sold: r.sold,
            unsold: r.unsold,
            paid: r.paid,
            remaining: r.remaining,
            top_prize: r.top_prize,
            top_prizes_unsold: r.top_prizes_unsold,
            payout: r.payout,
            generator: r.generator,
        }
    }
}

impl Reconciliation {
    /// The exact bytes written (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }
}

/// The top prize and how many of it are unsold, from the tiers (highest prize first): the
/// first tier with tickets and a prize; `("0", 0)` when there is none.
pub fn top_prize(tiers: &[ClosedTier]) -> (String, u64) {
    tiers
        .iter()
        .find(|t| t.count > 0 && parse_canonical(&t.prize).is_some_and(|p| p > Decimal::ZERO))
        .map_or_else(|| ("0".into(), 0), |t| (t.prize.clone(), t.unsold))
}

/// Prizes paid over the price of the tickets sold, rounded to 6 decimals; `None` when none
/// was sold.
pub fn payout(paid: Decimal, stake: Decimal, sold: u64) -> Option<String> {
    if sold == 0 || stake <= Decimal::ZERO {
        return None;
    }
    let price = stake.checked_mul(Decimal::from(sold))?;
    Some(paid.checked_div(price)?.round_dp(6).normalize().to_string())
}

/// Checks the closing of the emission folder `folder`, whose record `record` has verified
/// with `key`, against its manifests (block → manifest and its SHA-256) and its audit log
/// `chain` (when it could be read): see the module's documentation. Each problem found is
/// pushed to `problems`, naming the file and what to do. Only reads.
pub fn check_in_folder(
    folder: &Path,
    key: &VerifyingKey,
    record: &Record,
    manifests: &BTreeMap<u32, (Manifest, String)>,
    chain: Option<&Chain>,
    problems: &mut Vec<String>,
) {
    let path = folder.join(CLOSING_FILE);
    let sig_path = folder.join(CLOSING_SIG_FILE);
    let exists = |p: &Path| crate::fs::files::entry_exists(p).unwrap_or(true);
    let logged = chain.and_then(|c| c.closing_recorded.clone());
    if !exists(&path) {
        if exists(&sig_path) {
            problems.push(format!(
                "{}: the signature of a final reconciliation, and no {CLOSING_FILE}: it was deleted; run `emission-factory close` on this folder again to write it from the database",
                sig_path.display()
            ));
        } else if let Some((line, _)) = logged {
            problems.push(format!(
                "{}: the audit log records a closing ({} line {line}), but {CLOSING_FILE} is missing: it was deleted; run `emission-factory close` on this folder again to write it from the database",
                folder.display(),
                log::LOG_FILE
            ));
        }
        return;
    }
    let bytes = match read_signed(&path, &sig_path, MAX_CLOSING_BYTES, key) {
        Ok(b) => b,
        Err(e) => {
            problems.push(format!(
                "{}: the final reconciliation was changed, or not signed with the emission's key",
                chained(&e)
            ));
            return;
        }
    };
    let sha256 = hex::encode(Sha256::digest(&bytes));
    match (&logged, chain) {
        (_, None) => {} // The log's own problem is said.
        (None, Some(_)) => problems.push(format!(
            "{}: the audit log records no closing: it was not written by `close` on this folder, or the log's last line was removed; run `emission-factory close` on this folder again (it records the closing)",
            path.display()
        )),
        (Some((line, logged)), Some(_)) if *logged != sha256 => problems.push(format!(
            "{}: its SHA-256 is {sha256}, the closing the audit log records ({} line {line}) {logged}: the file was replaced",
            path.display(),
            log::LOG_FILE
        )),
        _ => {}
    }
    let r: Reconciliation = match parse_strict(&bytes, Layout::Pretty) {
        Ok(r) => r,
        Err(e) => {
            problems.push(format!(
                "{}: signed, but not a final reconciliation: {e}",
                path.display()
            ));
            return;
        }
    };
    let withdrawals = match crate::emission::withdrawal::read_all(folder, key) {
        Ok(w) => Some(
            w.into_iter()
                .map(|f| (f.withdrawal.number, f.sha256))
                .collect::<BTreeMap<u32, String>>(),
        ),
        Err(e) => {
            problems.push(format!(
                "{} (the withdrawals the final reconciliation lists cannot be checked)",
                chained(&e)
            ));
            None
        }
    };
    for p in check_numbers(&r, record, manifests, withdrawals.as_ref()) {
        problems.push(format!("{}: {p}", path.display()));
    }
}

/// The reconciliation's numbers against the record, the manifests and the folder's
/// withdrawal records (number → SHA-256, when they could be read). Returns what is wrong.
pub fn check_numbers(
    r: &Reconciliation,
    record: &Record,
    manifests: &BTreeMap<u32, (Manifest, String)>,
    withdrawals: Option<&BTreeMap<u32, String>>,
) -> Vec<String> {
    let mut wrong: Vec<String> = Vec::new();
    if r.format != RECONCILIATION_FORMAT {
        wrong.push(format!(
            "format {} is not one this program reads ({RECONCILIATION_FORMAT})",
            r.format
        ));
        return wrong;
    }
    let mut differ = |what: &str, closed: &str, recorded: &str| {
        if closed != recorded {
            wrong.push(format!(
                "its {what} is {}, the emission record's {}: it is not this emission's",
                shown(closed.as_bytes()),
                shown(recorded.as_bytes())
            ));
        }
    };
    differ("game", r.id.game(), record.id.game());
    differ("game_name", &r.game_name, &record.game_name);
    differ("stake", r.id.stake(), record.id.stake());
    differ(
        "emission",
        &r.id.number().to_string(),
        &record.id.number().to_string(),
    );
    differ("kind", &r.kind, record.kind.as_str());
    differ("seed_sha256", &r.seed_sha256, &record.seed_sha256);
    differ(
        "public_key_sha256",
        &r.public_key_sha256,
        &record.public_key_sha256,
    );
    match humantime::parse_rfc3339(&r.closed) {
        Err(_) => wrong.push(format!(
            "closed {} is not a UTC date and time (RFC 3339)",
            shown(r.closed.as_bytes())
        )),
        Ok(when) => {
            if humantime::parse_rfc3339(&record.created).is_ok_and(|c| when < c) {
                wrong.push(format!(
                    "closed {}, before the emission's record was made ({})",
                    r.closed,
                    shown(record.created.as_bytes())
                ));
            }
            if when > std::time::SystemTime::now() + std::time::Duration::from_secs(86_400) {
                wrong.push(format!("closed {}, a date still to come", r.closed));
            }
        }
    }

    // The withdrawals: each one the folder's record of its number, in order.
    let mut previous: Option<u32> = None;
    for w in &r.withdrawals {
        if previous.is_some_and(|p| p >= w.number) {
            wrong.push(format!(
                "withdrawal {} is listed out of order or twice",
                w.number
            ));
        }
        previous = Some(w.number);
        if let Some(found) = withdrawals {
            match found.get(&w.number) {
                None => wrong.push(format!(
                    "it lists withdrawal {}, which the folder does not hold ({} missing: deleted?)",
                    w.number,
                    crate::emission::withdrawal::file_name(w.number)
                )),
                Some(sha) if *sha != w.record_sha256 => wrong.push(format!(
                    "withdrawal {} has SHA-256 {sha} in the folder, {} in the reconciliation: the record applied was another one",
                    w.number,
                    shown(w.record_sha256.as_bytes())
                )),
                Some(_) => {}
            }
        }
    }
    let withdrawn = |block: u32| {
        r.withdrawals
            .iter()
            .any(|w| w.block.is_none() || w.block == Some(block))
    };

    // The blocks, each one a block of the folder, counted as its manifest says; and the
    // manifests' counts per tier over the blocks closed (prize in cents → count).
    let mut signed_tiers: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut tickets, mut sold): (Option<u64>, Option<u64>) = (Some(0), Some(0));
    let mut previous: Option<u32> = None;
    for b in &r.blocks {
        let n = b.block;
        if previous.is_some_and(|p| p >= n) {
            wrong.push(format!("block {n} is listed out of order or twice"));
        }
        previous = Some(n);
        tickets = tickets.and_then(|t| t.checked_add(b.tickets));
        sold = sold.and_then(|s| s.checked_add(b.sold));
        if b.sold.checked_add(b.unsold) != Some(b.tickets) {
            wrong.push(format!(
                "block {n}: {} sold + {} unsold is not its {} tickets",
                b.sold, b.unsold, b.tickets
            ));
        }
        if b.withdrawn != withdrawn(n) {
            wrong.push(format!(
                "block {n}: withdrawn is {}, but the withdrawals it lists say {}",
                b.withdrawn,
                withdrawn(n)
            ));
        }
        let Some((m, sha)) = manifests.get(&n) else {
            wrong.push(format!(
                "block {n} was closed, and the folder holds no complete block {n} (its manifest, signature and CSV): deleted, or the reconciliation is of another emission"
            ));
            continue;
        };
        if *sha != b.manifest_sha256 {
            wrong.push(format!(
                "block {n}: manifest SHA-256 {}, the folder's manifest {sha}: the block loaded was not this one",
                shown(b.manifest_sha256.as_bytes())
            ));
        }
        if b.tickets != m.tickets {
            wrong.push(format!(
                "block {n}: {} tickets, its manifest {}",
                b.tickets, m.tickets
            ));
        }
        for p in &m.prizes {
            match parse_canonical(&p.amount).and_then(cents) {
                Some(c) => {
                    let e = signed_tiers.entry(c).or_default();
                    *e = e.saturating_add(p.count);
                }
                None => wrong.push(format!(
                    "block {n}: its manifest's prize {} is not in whole cents",
                    shown(p.amount.as_bytes())
                )),
            }
        }
    }

    // The tiers: highest first, each the manifests' count, sold + unsold = count.
    let mut closed_tiers: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut paid, mut remaining) = (Some(Decimal::ZERO), Some(Decimal::ZERO));
    let mut tier_sold: Option<u64> = Some(0);
    let mut previous: Option<u64> = None;
    for t in &r.tiers {
        let Some(c) = parse_canonical(&t.prize).and_then(cents) else {
            wrong.push(format!(
                "tier {}: not a canonical amount in whole cents",
                shown(t.prize.as_bytes())
            ));
            paid = None;
            remaining = None;
            continue;
        };
        if previous.is_some_and(|p| p <= c) {
            wrong.push(format!(
                "tier {} is listed out of order (highest prize first) or twice",
                t.prize
            ));
        }
        previous = Some(c);
        if t.sold.checked_add(t.unsold) != Some(t.count) {
            wrong.push(format!(
                "tier {} €: {} sold + {} unsold is not its {} tickets",
                t.prize, t.sold, t.unsold, t.count
            ));
        }
        if t.count > 0 {
            closed_tiers.insert(c, t.count);
        }
        tier_sold = tier_sold.and_then(|s| s.checked_add(t.sold));
        let prize = from_cents(c);
        paid = paid.and_then(|p| p.checked_add(prize.checked_mul(Decimal::from(t.sold))?));
        remaining =
            remaining.and_then(|p| p.checked_add(prize.checked_mul(Decimal::from(t.unsold))?));
    }
    signed_tiers.retain(|_, n| *n > 0);
    if closed_tiers != signed_tiers {
        let show = |m: &BTreeMap<u64, u64>| {
            m.iter()
                .rev()
                .map(|(c, n)| format!("{n} × {} €", canonical(from_cents(*c))))
                .collect::<Vec<_>>()
                .join(", ")
        };
        wrong.push(format!(
            "its tiers count {} where the manifests of its blocks say {}",
            show(&closed_tiers),
            show(&signed_tiers)
        ));
    }

    // The totals, recomputed.
    let mut total = |what: &str, said: u64, found: Option<u64>| {
        if found != Some(said) {
            wrong.push(format!(
                "{what} is {said}, its {} add up to {}",
                if what == "sold (tiers)" {
                    "tiers"
                } else {
                    "blocks"
                },
                found.map_or_else(|| "more than a count holds".into(), |f| f.to_string())
            ));
        }
    };
    total("tickets", r.tickets, tickets);
    total("sold", r.sold, sold);
    total("sold (tiers)", r.sold, tier_sold);
    if r.sold.checked_add(r.unsold) != Some(r.tickets) {
        wrong.push(format!(
            "{} sold + {} unsold is not its {} tickets",
            r.sold, r.unsold, r.tickets
        ));
    }
    let mut amount = |what: &str, said: &str, found: Option<Decimal>| {
        let found = found.map(|d| canonical(d.normalize()));
        if found.as_deref() != Some(said) {
            wrong.push(format!(
                "{what} is {} €, its tiers give {} €",
                shown(said.as_bytes()),
                found.unwrap_or_else(|| "more than an amount holds".into())
            ));
        }
    };
    amount("paid", &r.paid, paid);
    amount("remaining", &r.remaining, remaining);
    let (top, top_unsold) = top_prize(&r.tiers);
    if top != r.top_prize || top_unsold != r.top_prizes_unsold {
        wrong.push(format!(
            "the top prize is {} € with {} unsold, its tiers say {top} € with {top_unsold}",
            shown(r.top_prize.as_bytes()),
            r.top_prizes_unsold
        ));
    }
    let expected = match (paid, parse_canonical(record.id.stake())) {
        (Some(p), Some(stake)) => payout(p, stake, r.sold),
        _ => None,
    };
    if expected != r.payout {
        wrong.push(format!(
            "payout {} where paid over the price of the tickets sold gives {}",
            r.payout
                .as_deref()
                .map_or_else(|| "none".into(), |p| shown(p.as_bytes())),
            expected.as_deref().unwrap_or("none")
        ));
    }
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reconciliation_keeps_its_fields_and_bytes_and_refuses_an_id_no_definition_could_give() {
        let r = Reconciliation {
            format: RECONCILIATION_FORMAT,
            id: "ruche-or/0.5/e0003".parse().unwrap(),
            game_name: "La ruche d'or".into(),
            kind: "test".into(),
            seed_sha256: "11".repeat(32),
            public_key_sha256: "22".repeat(32),
            closed: "2026-01-01T00:00:00Z".into(),
            blocks: vec![ClosedBlock {
                block: 1,
                manifest_sha256: "33".repeat(32),
                tickets: 2,
                sold: 1,
                unsold: 1,
                withdrawn: false,
            }],
            withdrawals: Vec::new(),
            tiers: Vec::new(),
            tickets: 2,
            sold: 1,
            unsold: 1,
            paid: "0".into(),
            remaining: "0".into(),
            top_prize: "0".into(),
            top_prizes_unsold: 0,
            payout: None,
            generator: "emission-factory 0.1.0 (generator 3)".into(),
        };
        let bytes = r.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        // The emission's fields stay where they were, loose, the game's name between them.
        assert!(
            text.starts_with("{\n  \"format\": 1,\n  \"game\": \"ruche-or\",\n  \"game_name\": \"La ruche d'or\",\n  \"stake\": \"0.5\",\n  \"emission\": 3,\n  \"kind\": \"test\",\n"),
            "{text}"
        );
        let again: Reconciliation = parse_strict(&bytes, Layout::Pretty).unwrap();
        assert_eq!(again, r);
        assert_eq!(again.to_bytes(), bytes);
        for (bad, said) in crate::block::id::bad_emission_fields(&text, "ruche-or", "0.5") {
            let e = parse_strict::<Reconciliation>(bad.as_bytes(), Layout::Pretty).unwrap_err();
            assert!(e.to_string().contains(&said), "{e}");
        }
    }
}
