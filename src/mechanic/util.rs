//! Small helpers shared by the mechanics' parameter checks.

use super::SettingError;
use crate::money::{parse_amount, AmountTable};
use rust_decimal::Decimal;

/// Refuses a list `key` of more than `max` entries, before any entry is read (SPEC §6.1).
pub fn at_most(key: &str, len: usize, max: usize) -> Result<(), SettingError> {
    if len > max {
        return Err(SettingError::TooMany {
            key: key.to_string(),
            len,
            max,
        });
    }
    Ok(())
}

/// Checks the list of amounts `key`: present, not empty, at most `max` entries, every entry a
/// positive canonical amount of whole cents, at most
/// [`MAX_AMOUNT_EUROS`](crate::money::MAX_AMOUNT_EUROS) (so that no sum a decoder makes of them
/// can overflow).
pub fn amount_list(
    key: &str,
    list: Option<&[String]>,
    max: usize,
) -> Result<AmountTable, SettingError> {
    let list = list.ok_or_else(|| SettingError::Missing {
        key: key.to_string(),
        how: format!("list the amounts as strings, e.g. {key} = [\"1\", \"2.5\"]"),
    })?;
    if list.is_empty() {
        return Err(SettingError::Empty {
            key: key.to_string(),
        });
    }
    at_most(key, list.len(), max)?;
    let mut amounts = Vec::with_capacity(list.len());
    for (i, text) in list.iter().enumerate() {
        amounts.push(
            parse_amount(text)
                .map_err(|m| SettingError::invalid(format!("{key}[{i}]"), m.to_string()))?,
        );
    }
    Ok(AmountTable::new(amounts))
}

/// Checks a table of `{ <count> = N, amount = "X" }` entries (the honey or bonus table) given
/// as (count, amount text) pairs in the file's order: at most `max` entries (one per count a
/// layout can show), amounts valid, no count listed twice.
pub fn count_table(
    key: &str,
    count_key: &str,
    entries: Option<&[(u32, String)]>,
    max: usize,
) -> Result<Vec<(u32, Decimal)>, SettingError> {
    let entries = entries.ok_or_else(|| SettingError::Missing {
        key: key.to_string(),
        how: format!("list the entries as {{ {count_key} = N, amount = \"X\" }}"),
    })?;
    at_most(key, entries.len(), max)?;
    let mut out: Vec<(u32, Decimal)> = Vec::with_capacity(entries.len());
    for (i, (n, text)) in entries.iter().enumerate() {
        let a = parse_amount(text)
            .map_err(|m| SettingError::invalid(format!("{key}[{i}].amount"), m.to_string()))?;
        if out.iter().any(|(m, _)| m == n) {
            return Err(SettingError::invalid(
                format!("{key}[{i}]"),
                format!("{count_key} = {n} is listed twice"),
            ));
        }
        out.push((*n, a));
    }
    Ok(out)
}

/// Largest weight a `near_miss` list may give: weights are relative, so this is no limit on
/// what can be said, and it keeps every sum the synthesizers make far from overflowing.
pub const MAX_WEIGHT: i64 = 1_000_000;

/// Checks the weights list `near_miss.<key>`, which must give one weight per case (`cases`
/// names them for the message, e.g. `"0, 1, 2 P"`): whole numbers from 0 to [`MAX_WEIGHT`],
/// not all zero. `None` keeps `default`.
pub fn near_miss_weights<const N: usize>(
    key: &str,
    list: Option<&[i64]>,
    default: [u32; N],
    cases: &str,
) -> Result<[u32; N], SettingError> {
    let Some(list) = list else {
        return Ok(default);
    };
    if list.len() != N {
        return Err(SettingError::rule(
            format!("near_miss.{key}"),
            format!(
                "near_miss.{key} lists {} weight(s): list {N}, one for each of {cases}",
                list.len()
            ),
        ));
    }
    let mut out = [0u32; N];
    for (i, &w) in list.iter().enumerate() {
        out[i] = u32::try_from(w)
            .ok()
            .filter(|&w| i64::from(w) <= MAX_WEIGHT)
            .ok_or_else(|| {
                SettingError::rule(
                    format!("near_miss.{key}[{i}]"),
                    format!(
                        "near_miss.{key}[{i}] = {w} is out of range: a weight is a whole number from 0 to {MAX_WEIGHT}"
                    ),
                )
            })?;
    }
    if out.iter().all(|&w| w == 0) {
        return Err(SettingError::invalid(
            format!("near_miss.{key}"),
            format!(
                "every weight is zero; give at least one of {cases} a weight from 1 to {MAX_WEIGHT}"
            ),
        ));
    }
    Ok(out)
}

/// Checks the rate `near_miss.<key>`: a number from 0 to 1. `None` keeps `default`.
pub fn near_miss_rate(key: &str, rate: Option<f64>, default: f64) -> Result<f64, SettingError> {
    match rate {
        None => Ok(default),
        Some(r) if r.is_finite() && (0.0..=1.0).contains(&r) => Ok(r),
        Some(r) => Err(SettingError::rule(
            format!("near_miss.{key}"),
            format!("near_miss.{key} = {r} is out of range: a rate is a number from 0 to 1"),
        )),
    }
}
