//! Exact euro amounts: parsing, canonical printing and the small lookup tables that layouts use.
//!
//! Money is always a [`Decimal`]; it never goes through floating point. The canonical form (see
//! FORMAT.md, "Amounts") is the one written in every file: digits, and if not whole a `.` and the
//! fractional digits without trailing zeros.

use crate::untrusted::shown;
use rust_decimal::Decimal;
use std::str::FromStr;

/// The largest amount a game definition may state (a stake, a prize, an amount a layout
/// shows), in euros: one billion. With amounts in whole cents ([`MAX_AMOUNT_DECIMALS`]) and
/// blocks of at most 9 999 999 tickets, every sum and product the program makes of them (a
/// block's total, a ticket's rows times their multipliers) is below 10^20 cents: exact in a
/// `Decimal`, whose limit is near 7.9 × 10^28.
pub const MAX_AMOUNT_EUROS: u64 = 1_000_000_000;

/// Amounts are whole cents: at most two decimals.
pub const MAX_AMOUNT_DECIMALS: u32 = 2;

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

/// Why a text is not an amount a game definition may state ([`parse_amount`]): the text,
/// escaped, with the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    /// Above [`MAX_AMOUNT_EUROS`], or finer than whole cents.
    #[error("{0} is out of range: an amount is at most {MAX_AMOUNT_EUROS} €, in whole cents (at most {MAX_AMOUNT_DECIMALS} decimals)")]
    OutOfRange(String),
    /// Zero, or not written canonically.
    #[error("{0} is not a positive canonical amount such as \"0.5\" or \"2\"")]
    NotPositiveCanonical(String),
}

/// Parses an amount a game definition states: a positive canonical amount of whole cents, at
/// most [`MAX_AMOUNT_EUROS`]. The error says which rule the text breaks, quoting it
/// escaped.
pub fn parse_amount(text: &str) -> Result<Decimal, AmountError> {
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    // A plain decimal number, whatever its size.
    let number = match text.split_once('.') {
        Some((whole, fraction)) => all_digits(whole) && all_digits(fraction),
        None => all_digits(text),
    };
    let out_of_range = || AmountError::OutOfRange(shown(text));
    match parse_canonical(text) {
        Some(value)
            if value > Decimal::from(MAX_AMOUNT_EUROS) || value.scale() > MAX_AMOUNT_DECIMALS =>
        {
            Err(out_of_range())
        }
        Some(value) if !value.is_zero() => Ok(value),
        // Digits that do not even fit a Decimal.
        None if number && Decimal::from_str(text).is_err() => Err(out_of_range()),
        _ => Err(AmountError::NotPositiveCanonical(shown(text))),
    }
}

/// The stake in euro cents, as used in serials (`0.5` → 50, `2` → 200); `None` if it is not a
/// whole number of cents that fits.
pub fn cents(amount: Decimal) -> Option<u64> {
    use rust_decimal::prelude::ToPrimitive;
    let c = amount.checked_mul(Decimal::ONE_HUNDRED)?;
    if c.fract().is_zero() {
        c.to_u64()
    } else {
        None
    }
}

/// The amount of `cents` euro cents (`250` → 2.5), normalized.
pub fn from_cents(cents: u64) -> Decimal {
    Decimal::from_i128_with_scale(i128::from(cents), 2).normalize()
}

/// A fixed set of amounts a layout may show, with their canonical text, for fast lookup both
/// ways. Decoders read an amount back for every row of every ticket, so a text is found in
/// constant time: it is packed with its length into an integer key, and a multiplicative hash
/// chosen when the table is built (a perfect hash: no two keys share a slot) gives its one slot.
#[derive(Debug, Clone, Default)]
pub struct AmountTable {
    entries: Vec<(Decimal, String)>,
    /// `2^bits` slots, [`Slot::EMPTY`] where no key is.
    slots: Vec<Slot>,
    /// The hash multiplier that puts every key in its own slot.
    multiplier: u64,
    /// `64 - bits`.
    shift: u32,
}

/// One slot of the perfect hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    /// The packed text ([`key`]); 0 where the slot is empty (no key is 0).
    key: u128,
    /// 1 + the index of the amount in `entries`; 0 where empty.
    index: u32,
    /// The amount in whole cents, if it is a whole number of cents that fits a `u64`: what the
    /// decoders' hot paths add up, without `Decimal` arithmetic.
    cents: Option<u64>,
}

impl Slot {
    const EMPTY: Slot = Slot {
        key: 0,
        index: 0,
        cents: None,
    };
}

/// Longest text [`key`] packs; longer ones (amounts of 16 digits and more, which no game
/// definition may state) are looked up by a scan.
const PACKED: usize = 15;

/// The text and its length in one integer: one-to-one on texts of 1 to [`PACKED`] bytes,
/// whatever the bytes (so `1` and `1\0` differ). Never zero.
#[inline]
fn key(text: &[u8]) -> Option<u128> {
    if text.is_empty() || text.len() > PACKED {
        return None;
    }
    // A byte loop, not `copy_from_slice`: amounts are a few bytes, and a copy of a variable
    // length is a call to `memcpy` (measured: 3 % of verify).
    let mut packed = (text.len() as u128) << 120;
    for (i, &b) in text.iter().enumerate() {
        packed |= u128::from(b) << (8 * i);
    }
    Some(packed)
}

/// The slot of `key` among `2^(64 - shift)`.
#[inline]
fn slot(key: u128, multiplier: u64, shift: u32) -> usize {
    let folded = (key as u64) ^ ((key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (folded.wrapping_mul(multiplier) >> shift) as usize
}

/// A perfect hash: the slots (each holding its key and `index in keys + 1`), the multiplier,
/// the shift.
type PerfectHash = (Vec<(u128, u32)>, u64, u32);

/// Slots and multiplier for `keys` such that no two share a slot, or `None` if no multiplier
/// tried separates them (then lookups scan, still correct).
fn perfect_hash(keys: &[u128]) -> Option<PerfectHash> {
    // At least four slots per key: a multiplier is found in a few tries.
    let mut bits = 2;
    while (1usize << bits) < keys.len().max(1) * 4 {
        bits += 1;
    }
    for bits in bits..bits + 4 {
        let shift = 64 - bits;
        // A fixed sequence of odd multipliers (SplitMix64): the table is the same every run.
        let mut state = 0u64;
        for _ in 0..256 {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let multiplier = (z ^ (z >> 31)) | 1;
            let mut slots = vec![(0u128, 0u32); 1 << bits];
            let placed = keys.iter().enumerate().all(|(i, &k)| {
                let s = &mut slots[slot(k, multiplier, shift)];
                if s.1 != 0 {
                    return false;
                }
                *s = (k, i as u32 + 1);
                true
            });
            if placed {
                return Some((slots, multiplier, shift));
            }
        }
    }
    None
}

impl AmountTable {
    /// Builds the table; duplicates are dropped, order is ascending.
    pub fn new(amounts: impl IntoIterator<Item = Decimal>) -> Self {
        let mut values: Vec<Decimal> = amounts.into_iter().map(|a| a.normalize()).collect();
        values.sort();
        values.dedup();
        let entries: Vec<(Decimal, String)> =
            values.into_iter().map(|v| (v, canonical(v))).collect();
        let keys: Vec<u128> = entries
            .iter()
            .filter_map(|(_, t)| key(t.as_bytes()))
            .collect();
        // Keys are in entry order only if every text packs; otherwise index by text.
        let hashed = (keys.len() == entries.len() && entries.len() < u32::MAX as usize)
            .then(|| perfect_hash(&keys))
            .flatten();
        let (slots, multiplier, shift) = hashed.unwrap_or((Vec::new(), 0, 0));
        let slots = slots
            .into_iter()
            .map(|(key, index)| match index.checked_sub(1) {
                None => Slot::EMPTY,
                Some(i) => Slot {
                    key,
                    index,
                    cents: cents(entries[i as usize].0),
                },
            })
            .collect();
        AmountTable {
            entries,
            slots,
            multiplier,
            shift,
        }
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

    /// [`lookup`](Self::lookup) on bytes, in constant time.
    #[inline]
    pub fn lookup_bytes(&self, text: &[u8]) -> Option<Decimal> {
        match key(text) {
            Some(k) if !self.slots.is_empty() => {
                let found = self.slots[slot(k, self.multiplier, self.shift)];
                if found.key == k {
                    // `index` is 1 + an index of `entries` wherever `key` is not 0.
                    self.entries.get(found.index as usize - 1).map(|(v, _)| *v)
                } else {
                    None
                }
            }
            _ => self.scan(text),
        }
    }

    /// The index (ascending order, as [`get`](Self::get)) of the amount written as `text`, in
    /// constant time like [`lookup_bytes`](Self::lookup_bytes): for readers that keep a
    /// per-amount table of their own (the report's integer cents).
    #[inline]
    pub fn index_bytes(&self, text: &[u8]) -> Option<usize> {
        match key(text) {
            Some(k) if !self.slots.is_empty() => {
                let found = self.slots[slot(k, self.multiplier, self.shift)];
                // `index` is 1 + an index of `entries` wherever `found` is not 0.
                (found.key == k).then(|| found.index as usize - 1)
            }
            _ => self.entries.iter().position(|(_, t)| t.as_bytes() == text),
        }
    }

    /// The amount written as `text`, in whole cents, in constant time: `None` if `text` is not
    /// the canonical text of an amount of the table, and also (rarely: never for amounts a
    /// game definition may state) if the table has no hash or the amount is not a whole
    /// number of cents that fits a `u64`. The decoders' hot paths use it, and fall back to
    /// [`lookup_bytes`](Self::lookup_bytes) when it says `None`.
    #[inline]
    pub fn lookup_cents(&self, text: &[u8]) -> Option<u64> {
        let k = key(text)?;
        let found = self.slots.get(slot(k, self.multiplier, self.shift))?;
        if found.key == k {
            found.cents
        } else {
            None
        }
    }

    /// The amount written at the start of `text` up to its first `sep`, in whole cents, and
    /// the length of its text: [`lookup_cents`](Self::lookup_cents) of the bytes before the
    /// first `sep`, `None` if no `sep` is among the first 16 bytes. The separator is found and
    /// the text packed without a loop over bytes, whose exit the varying lengths of amounts
    /// kept mispredicting (measured: a fifth of the hive decoder's time).
    #[inline]
    pub fn lookup_cents_before(&self, text: &[u8], sep: u8) -> Option<(u64, usize)> {
        let (found, len) = self.slot_before(text, sep)?;
        found.cents.map(|c| (c, len))
    }

    /// [`lookup_cents_before`](Self::lookup_cents_before), with the amount's index in the
    /// table (for readers that count amounts by index: the report's features path):
    /// (index, cents, length of the text).
    #[inline]
    pub fn lookup_before(&self, text: &[u8], sep: u8) -> Option<(usize, u64, usize)> {
        let (found, len) = self.slot_before(text, sep)?;
        // `index` is 1 + an index of `entries` wherever `found` is not empty.
        let index = (found.index as usize).checked_sub(1)?;
        found.cents.map(|c| (index, c, len))
    }

    /// The slot holding the amount written at the start of `text` up to its first `sep`, and
    /// the length of its text. Always inlined: called apart, it paid about 20 instructions of
    /// saved registers per amount (callgrind), a third of the lookup; only the short path is
    /// inlined, the longer texts go to [`slot_before_wide`](Self::slot_before_wide).
    #[inline(always)]
    fn slot_before(&self, text: &[u8], sep: u8) -> Option<(&Slot, usize)> {
        // Amounts of up to 7 bytes (every amount the built-in games state) in one 64-bit
        // word: the decoders' next read waits on this length, and the 128-bit arithmetic
        // of the wide path is twice the chain. Found at the same place, packed as the same key.
        if let (Some(bytes), true) = (text.first_chunk::<8>(), sep != 0) {
            const ONES_64: u64 = u64::MAX / 255;
            const HIGH_64: u64 = ONES_64 << 7;
            let word = u64::from_le_bytes(*bytes);
            let x = word ^ (ONES_64 * u64::from(sep));
            let zeros = x.wrapping_sub(ONES_64) & !x & HIGH_64;
            if zeros != 0 {
                let len = (zeros.trailing_zeros() / 8) as usize;
                if len == 0 {
                    return None;
                }
                let k = u128::from(word & ((1u64 << (8 * len)) - 1)) | ((len as u128) << 120);
                let found = self.slots.get(slot(k, self.multiplier, self.shift))?;
                // An empty slot's key is 0, never a packed text (its length is not 0).
                return (found.key == k).then_some((found, len));
            }
        }
        self.slot_before_wide(text, sep)
    }

    /// [`slot_before`](Self::slot_before) for texts of 8 bytes or more before `sep`, and
    /// near the end of a layout (fewer than 8 bytes left).
    #[inline(never)]
    fn slot_before_wide(&self, text: &[u8], sep: u8) -> Option<(&Slot, usize)> {
        const ONES: u128 = u128::MAX / 255; // 0x0101…01
        const HIGH: u128 = ONES << 7; // 0x8080…80
        let word = match text.first_chunk::<16>() {
            Some(bytes) => u128::from_le_bytes(*bytes),
            None => {
                // Near the end of a layout: the missing bytes read as 0, never a separator.
                let mut bytes = [0u8; 16];
                for (to, &from) in bytes.iter_mut().zip(text) {
                    *to = from;
                }
                u128::from_le_bytes(bytes)
            }
        };
        // Bytes equal to `sep` become 0; the lowest byte flagged is exactly the first zero
        // (a borrow can only flag bytes above it).
        let x = word ^ (ONES * u128::from(sep));
        let zeros = x.wrapping_sub(ONES) & !x & HIGH;
        if zeros == 0 || (sep == 0 && text.len() < 16) {
            return None;
        }
        let len = (zeros.trailing_zeros() / 8) as usize;
        if len == 0 || len > PACKED {
            return None;
        }
        // The same packing as [`key`]: the text's bytes, its length in the top byte.
        let k = (word & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120);
        let found = self.slots.get(slot(k, self.multiplier, self.shift))?;
        (found.key == k).then_some((found, len))
    }

    /// Lookup by comparing texts: for texts too long to pack, and tables without a hash.
    #[cold]
    fn scan(&self, text: &[u8]) -> Option<Decimal> {
        self.entries
            .iter()
            .find(|(_, t)| t.as_bytes() == text)
            .map(|(v, _)| *v)
    }
}

/// Digits grouped by three with spaces, as the reports and messages write counts: 7 500 000.
/// The one digit grouper (the text report, the commands' summaries, the docs' checks).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
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
        assert_eq!(from_cents(50), d("0.5"));
        assert_eq!(canonical(from_cents(30_000)), "300");
        assert_eq!(cents(from_cents(u64::MAX)), Some(u64::MAX));
        // At the limit of Decimal: no overflow, no panic.
        assert_eq!(cents(Decimal::MAX), None);
    }

    #[test]
    fn amounts_of_a_definition_are_bounded_whole_cents() {
        assert_eq!(parse_amount("0.5"), Ok(d("0.5")));
        assert_eq!(parse_amount("1000000000"), Ok(d("1000000000")));
        assert_eq!(parse_amount("999999999.99"), Ok(d("999999999.99")));
        for (text, needle) in [
            (
                "1000000000.01",
                "out of range: an amount is at most 1000000000 €",
            ),
            ("79228162514264337593543950335", "out of range"),
            ("79228162514264337593543950336", "out of range"),
            ("99999999999999999999999999999999999", "out of range"),
            ("0.001", "in whole cents"),
            ("0", "is not a positive canonical amount"),
            ("0.50", "not a positive canonical amount"),
            ("-1", "not a positive canonical amount"),
            ("1.2.3", "not a positive canonical amount"),
            ("", "not a positive canonical amount"),
        ] {
            let e = parse_amount(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        // What is quoted of the text is escaped and short.
        let e = parse_amount(&format!("\u{1b}{}", "7".repeat(10_000)))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("'\\u{1b}777"), "{e}");
        assert!(e.len() < 300, "{e}");
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
        // The index agrees with the look-up, both ways, packed or not.
        for i in 0..t.len() {
            assert_eq!(t.index_bytes(t.get(i).1.as_bytes()), Some(i));
        }
        assert_eq!(t.index_bytes(b"1\0"), None);
        assert_eq!(t.index_bytes(b"1234567890123456"), None);
        // In cents: only packed texts of whole cents that fit a u64 (the rest say None and
        // the decoders take their Decimal path).
        let t = AmountTable::new([d("0.5"), d("1000000000"), d("0.005")]);
        assert_eq!(t.lookup_cents(b"0.5"), Some(50));
        assert_eq!(t.lookup_cents(b"1000000000"), Some(100_000_000_000));
        assert_eq!(t.lookup_cents(b"0.005"), None);
        assert_eq!(t.lookup_bytes(b"0.005"), Some(d("0.005")));
        assert_eq!(t.lookup_cents(b"0.50"), None);
        // Up to a separator, whatever follows it and however close the end.
        for (text, found) in [
            (&b"0.5:PPP"[..], Some((50, 3))),
            (b"0.5:", Some((50, 3))),
            (b"1000000000:AAAAAAAAAAAAAAAAA", Some((100_000_000_000, 10))),
            (b"0.5", None),
            (b":0.5:", None),
            (b"0.50:", None),
            (b"0.005:", None),
            (b"0.5/:", None),
            (b"00000000000000000.5:", None),
        ] {
            assert_eq!(
                t.lookup_cents_before(text, b':'),
                found,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // With the index: the one `index_bytes` gives the text before the separator.
        for (i, (_, text)) in (0..t.len()).map(|i| (i, t.get(i))) {
            let written = format!("{text}:PPP");
            if let Some((c, len)) = t.lookup_cents_before(written.as_bytes(), b':') {
                assert_eq!(t.lookup_before(written.as_bytes(), b':'), Some((i, c, len)));
                assert_eq!(t.index_bytes(text.as_bytes()), Some(i));
            }
        }
        let t = AmountTable::new([d("0.5"), Decimal::MAX]);
        assert_eq!(t.lookup_cents(b"0.5"), None, "a table without a hash");
        assert_eq!(t.lookup_cents_before(b"0.5:", b':'), None);
        assert_eq!(t.lookup_bytes(b"0.5"), Some(d("0.5")));
    }

    #[test]
    fn the_amount_before_a_separator_is_read_as_a_byte_loop_reads_it() {
        // Texts of every length around the 8- and 16-byte words, separators at every place.
        // The table's amounts; "7" is looked up too, and is not one of them.
        let held = [
            "0.5",
            "2",
            "20",
            "20000",
            "1234567",
            "12345678",
            "123456789012345",
        ];
        let t = AmountTable::new(held.map(|a| Decimal::from_str_exact(a).unwrap()));
        let reference = |text: &[u8], sep: u8| -> Option<(u64, usize)> {
            let len = text.iter().take(16).position(|&b| b == sep)?;
            if sep == 0 && text.len() < 16 {
                return None;
            }
            t.lookup_cents(&text[..len]).map(|c| (c, len))
        };
        for sep in [b':', b'/', b',', 0] {
            for amount in held.into_iter().chain(["7"]) {
                for tail in ["", "P", "PPPPPPPPPPPPPPPP", ":/,", "\0\0\0\0\0\0\0\0\0"] {
                    let sep_text = (sep as char).to_string();
                    let text = format!("{amount}{sep_text}{tail}");
                    for cut in 0..=text.len() {
                        let bytes = &text.as_bytes()[..cut];
                        assert_eq!(
                            t.lookup_cents_before(bytes, sep),
                            reference(bytes, sep),
                            "{:?} sep {sep}",
                            String::from_utf8_lossy(bytes)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_amount_of_a_big_table_is_found_and_nothing_else() {
        // Every whole and half euro up to 500, and texts one byte off each of them.
        let amounts: Vec<Decimal> = (1..=1000).map(|n| Decimal::new(n * 5, 1)).collect();
        let t = AmountTable::new(amounts.iter().copied());
        assert!(!t.slots.is_empty(), "a perfect hash is found");
        for &a in &amounts {
            let text = canonical(a);
            assert_eq!(t.lookup(&text), Some(a), "{text}");
            assert_eq!(t.lookup_cents(text.as_bytes()), cents(a), "{text}");
            for wrong in [format!("{text}\0"), format!("0{text}"), format!("{text}.")] {
                assert_eq!(t.lookup(&wrong), None, "{wrong}");
                assert_eq!(t.lookup_cents(wrong.as_bytes()), None, "{wrong}");
            }
        }
        assert_eq!(t.lookup("0"), None);
        assert_eq!(t.lookup("500.5"), None);
    }

    #[test]
    fn counts_are_grouped_by_three() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1 000"),
            (7_500_000, "7 500 000"),
            (u64::MAX, "18 446 744 073 709 551 615"),
        ] {
            assert_eq!(grouped(n), text);
        }
    }
}
