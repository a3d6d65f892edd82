//! Exact euro amounts: parsing, canonical printing and the small lookup tables that layouts use.
//!
//! Money is always a [`Decimal`]; it never goes through floating point. The canonical form (see
//! FORMAT.md, "Amounts") is the one written in every file: digits, and if not whole a `.` and the
//! fractional digits without trailing zeros.

use rust_decimal::Decimal;
use std::str::FromStr;

/// Prints `amount` canonically: `0`, `0.5`, `7.5`, `100000`.
pub fn canonical(amount: Decimal) -> String {
    amount.normalize().to_string()
}

/// Parses an amount that must already be written canonically (so `0.50`, `+1`, `1e3`, `1,5`
/// and `-2` are all refused). Returns `None` when the text is not a canonical amount.
pub fn parse_canonical(text: &str) -> Option<Decimal> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let value = Decimal::from_str(text).ok()?;
    (canonical(value) == text).then_some(value)
}

/// The stake in euro cents, as used in serials (`0.5` → 50, `2` → 200).
pub fn cents(amount: Decimal) -> Option<u64> {
    use rust_decimal::prelude::ToPrimitive;
    let c = amount * Decimal::ONE_HUNDRED;
    if c.fract().is_zero() {
        c.to_u64()
    } else {
        None
    }
}

/// A fixed set of amounts a layout may show, with their canonical text, for fast lookup both
/// ways. Small (a dozen entries), so a linear scan beats hashing; texts are also kept packed
/// into integers so that reading an amount back costs one integer compare per entry (decoders
/// do it for every row of every ticket).
#[derive(Debug, Clone, Default)]
pub struct AmountTable {
    entries: Vec<(Decimal, String)>,
    /// `pack(text)` of each entry short enough to be packed, in the same order.
    packed: Vec<Option<u128>>,
}

/// Longest text [`pack`] represents exactly.
const PACKED: usize = 16;

/// Packs a text of 1 to 16 bytes, none of them NUL, into an integer, zero-padded: one-to-one on
/// such texts. `None` for any other text.
#[inline]
fn pack(text: &[u8]) -> Option<u128> {
    if text.is_empty() || text.len() > PACKED {
        return None;
    }
    let mut key = 0u128;
    for (i, &b) in text.iter().enumerate() {
        if b == 0 {
            return None;
        }
        key |= u128::from(b) << (8 * i);
    }
    Some(key)
}

impl AmountTable {
    /// Builds the table; duplicates are dropped, order is ascending.
    pub fn new(amounts: impl IntoIterator<Item = Decimal>) -> Self {
        let mut values: Vec<Decimal> = amounts.into_iter().map(|a| a.normalize()).collect();
        values.sort();
        values.dedup();
        let entries: Vec<(Decimal, String)> =
            values.into_iter().map(|v| (v, canonical(v))).collect();
        let packed = entries.iter().map(|(_, t)| pack(t.as_bytes())).collect();
        AmountTable { entries, packed }
    }

    /// The amounts, ascending.
    pub fn values(&self) -> impl ExactSizeIterator<Item = Decimal> + '_ {
        self.entries.iter().map(|(v, _)| *v)
    }

    /// Number of amounts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if the table holds no amount.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The i-th amount (ascending order) and its canonical text.
    pub fn get(&self, i: usize) -> (Decimal, &str) {
        let (v, t) = &self.entries[i];
        (*v, t.as_str())
    }

    /// Length in bytes of the longest canonical text in the table (0 if empty).
    pub fn max_text_len(&self) -> usize {
        self.entries.iter().map(|(_, t)| t.len()).max().unwrap_or(0)
    }

    /// True if `amount` is in the table.
    pub fn contains(&self, amount: Decimal) -> bool {
        self.entries.iter().any(|(v, _)| *v == amount)
    }

    /// The canonical text of `amount` if it is in the table.
    pub fn text(&self, amount: Decimal) -> Option<&str> {
        self.entries
            .iter()
            .find(|(v, _)| *v == amount)
            .map(|(_, t)| t.as_str())
    }

    /// The amount written as `text`, if `text` is the canonical text of an amount in the table.
    pub fn lookup(&self, text: &str) -> Option<Decimal> {
        self.lookup_bytes(text.as_bytes())
    }

    /// [`lookup`](Self::lookup) on bytes.
    #[inline]
    pub fn lookup_bytes(&self, text: &[u8]) -> Option<Decimal> {
        let index = match pack(text) {
            Some(key) => self.packed.iter().position(|&k| k == Some(key)),
            None => self.entries.iter().position(|(_, t)| t.as_bytes() == text),
        };
        index.map(|i| self.entries[i].0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(canonical(d("0")), "0");
        assert_eq!(canonical(d("0.50")), "0.5");
        assert_eq!(canonical(d("7.5")), "7.5");
        assert_eq!(canonical(d("10")), "10");
        assert_eq!(canonical(d("100000.00")), "100000");
    }

    #[test]
    fn parse_refuses_non_canonical() {
        assert_eq!(parse_canonical("0.5"), Some(d("0.5")));
        assert_eq!(parse_canonical("100000"), Some(d("100000")));
        for bad in ["0.50", "+1", "-2", "1e3", "1,5", "", ".5", "05", "1.", " 1"] {
            assert_eq!(parse_canonical(bad), None, "{bad:?} must be refused");
        }
    }

    #[test]
    fn stake_cents() {
        assert_eq!(cents(d("0.5")), Some(50));
        assert_eq!(cents(d("3")), Some(300));
        assert_eq!(cents(d("0.005")), None);
    }

    #[test]
    fn table_lookup_both_ways() {
        let t = AmountTable::new([d("5"), d("0.5"), d("5.0")]);
        assert_eq!(t.len(), 2);
        assert_eq!(t.lookup("0.5"), Some(d("0.5")));
        assert_eq!(t.lookup("0.50"), None);
        assert_eq!(t.text(d("5.00")), Some("5"));
        assert_eq!(t.get(0).1, "0.5");
        assert_eq!(t.max_text_len(), 3);
        // Packed look-ups must not confuse a text with its prefix or with NUL padding.
        let t = AmountTable::new([d("1"), d("10"), d("12345678901234567")]);
        assert_eq!(t.lookup_bytes(b"1"), Some(d("1")));
        assert_eq!(t.lookup_bytes(b"10"), Some(d("10")));
        assert_eq!(t.lookup_bytes(b"1\0"), None);
        assert_eq!(t.lookup_bytes(b""), None);
        assert_eq!(t.lookup("12345678901234567"), Some(d("12345678901234567")));
        assert_eq!(t.lookup("1234567890123456"), None);
    }
}
