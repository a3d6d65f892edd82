//! Small helpers shared by the mechanics' parameter checks.

use crate::money::{parse_amount, AmountTable};
use rust_decimal::Decimal;

/// Checks the list of amounts `key`: present, not empty, every entry a positive canonical
/// amount of whole cents, at most [`MAX_AMOUNT_EUROS`](crate::money::MAX_AMOUNT_EUROS) (so
/// that no sum a decoder makes of them can overflow).
pub fn amount_list(key: &str, list: Option<&[String]>) -> Result<AmountTable, String> {
    let list = list.ok_or_else(|| {
        format!("'{key}' is missing: list the amounts as strings, e.g. {key} = [\"1\", \"2.5\"]")
    })?;
    if list.is_empty() {
        return Err(format!("'{key}' is empty"));
    }
    let mut amounts = Vec::with_capacity(list.len());
    for (i, text) in list.iter().enumerate() {
        amounts.push(parse_amount(text).map_err(|m| format!("{key}[{i}]: {m}"))?);
    }
    Ok(AmountTable::new(amounts))
}

/// Checks a table of `{ <count> = N, amount = "X" }` entries (the honey or bonus table) given
/// as (count, amount text) pairs in the file's order: amounts valid, no count listed twice.
pub fn count_table(
    key: &str,
    count_key: &str,
    entries: Option<impl IntoIterator<Item = (u32, String)>>,
) -> Result<Vec<(u32, Decimal)>, String> {
    let entries = entries.ok_or_else(|| {
        format!("'{key}' is missing: list the entries as {{ {count_key} = N, amount = \"X\" }}")
    })?;
    let mut out: Vec<(u32, Decimal)> = Vec::new();
    for (i, (n, text)) in entries.into_iter().enumerate() {
        let a = parse_amount(&text).map_err(|m| format!("{key}[{i}].amount: {m}"))?;
        if out.iter().any(|(m, _)| *m == n) {
            return Err(format!("{key}[{i}]: {count_key} = {n} is listed twice"));
        }
        out.push((n, a));
    }
    Ok(out)
}
