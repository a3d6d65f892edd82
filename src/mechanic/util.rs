//! Small helpers shared by the mechanics' parameter readers.

use crate::money::{parse_amount, AmountTable};
use crate::untrusted::shown;
use rust_decimal::Decimal;

/// Refuses a key of a mechanic's `layout` table that is not one of `keys`: a misspelt
/// setting must not be silently ignored. The message names the key and the valid ones.
pub fn known_keys(table: &toml::Table, keys: &[&str], mechanic: &str) -> Result<(), String> {
    match table.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(key) => Err(format!(
            "unknown layout parameter {}: the {mechanic} mechanic reads {}",
            shown(key),
            keys.join(", ")
        )),
        None => Ok(()),
    }
}

/// Reads `key` from a layout table as a list of positive canonical amounts (strings).
pub fn amount_list(table: &toml::Table, key: &str) -> Result<AmountTable, String> {
    let value = table.get(key).ok_or_else(|| {
        format!("'{key}' is missing: list the amounts as strings, e.g. {key} = [\"1\", \"2.5\"]")
    })?;
    let items = value
        .as_array()
        .ok_or_else(|| format!("'{key}' must be an array of amounts as strings"))?;
    let mut amounts = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        amounts.push(amount_value(item).map_err(|m| format!("{key}[{i}]: {m}"))?);
    }
    if amounts.is_empty() {
        return Err(format!("'{key}' is empty"));
    }
    Ok(AmountTable::new(amounts))
}

/// Reads an amount written as a TOML string: positive, canonical, whole cents, at most
/// [`MAX_AMOUNT_EUROS`](crate::money::MAX_AMOUNT_EUROS) (so that no sum a decoder makes of
/// them can overflow).
pub fn amount_value(value: &toml::Value) -> Result<Decimal, String> {
    let text = value.as_str().ok_or_else(|| {
        format!(
            "{} must be a string such as \"2.5\" (amounts are exact decimals)",
            shown(value.to_string())
        )
    })?;
    parse_amount(text)
}

/// Reads `key` as an array of tables `{ <count_key> = N, amount = "X" }`, e.g. the honey table,
/// refusing any other key in them. Returns the pairs in the file's order.
pub fn count_table(
    table: &toml::Table,
    key: &str,
    count_key: &str,
) -> Result<Vec<(u32, Decimal)>, String> {
    let value = table
        .get(key)
        .ok_or_else(|| format!("'{key}' is missing"))?;
    let items = value.as_array().ok_or_else(|| {
        format!("'{key}' must be an array of {{ {count_key} = N, amount = \"X\" }}")
    })?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let t = item
            .as_table()
            .ok_or_else(|| format!("{key}[{i}] must be {{ {count_key} = N, amount = \"X\" }}"))?;
        if let Some(unknown) = t.keys().find(|k| *k != count_key && *k != "amount") {
            return Err(format!(
                "{key}[{i}]: unknown key {}: an entry is {{ {count_key} = N, amount = \"X\" }}",
                shown(unknown)
            ));
        }
        let n = t
            .get(count_key)
            .and_then(|v| v.as_integer())
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{key}[{i}].{count_key} must be a whole number"))?;
        let a = amount_value(
            t.get("amount")
                .ok_or_else(|| format!("{key}[{i}].amount is missing"))?,
        )
        .map_err(|m| format!("{key}[{i}].amount: {m}"))?;
        if out.iter().any(|(m, _)| *m == n) {
            return Err(format!("{key}[{i}]: {count_key} = {n} is listed twice"));
        }
        out.push((n, a));
    }
    Ok(out)
}
