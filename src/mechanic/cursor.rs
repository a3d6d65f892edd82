//! The read position every decoder walks a layout with.
//!
//! A layout is untrusted bytes. The cursor only steps over ASCII bytes one at a time, or jumps
//! to a separator found with `memchr`; errors name what stands at the cursor ([`Found`]), and
//! their messages quote it escaped.

use super::{Expected, Found, LayoutError};

/// A position in a layout.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    text: &'a [u8],
    /// Bytes read so far.
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a [u8]) -> Self {
        Cursor { text, pos: 0 }
    }

    /// The whole layout.
    pub fn text(&self) -> &'a [u8] {
        self.text
    }

    /// The byte at the cursor.
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// What is left to read.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.text.get(self.pos..).unwrap_or(&[])
    }

    /// The bytes up to the next `sep` (found with `memchr`), without moving; `None` if no
    /// `sep` follows.
    #[inline]
    pub fn before(&self, sep: u8) -> Option<&'a [u8]> {
        let rest = self.rest();
        memchr::memchr(sep, rest).map(|i| &rest[..i])
    }

    /// The bytes up to the next `a` or `b`, or to the end, without moving.
    #[inline]
    pub fn before2(&self, a: u8, b: u8) -> &'a [u8] {
        let rest = self.rest();
        &rest[..memchr::memchr2(a, b, rest).unwrap_or(rest.len())]
    }

    /// The character at the cursor (U+FFFD for bytes that are not UTF-8), if any: what a
    /// message quotes.
    pub fn here(&self) -> Option<char> {
        let rest = self.rest();
        let first = *rest.first()?;
        let width = match first {
            0xf0..=0xff => 4,
            0xe0..=0xef => 3,
            0xc0..=0xdf => 2,
            _ => 1,
        };
        String::from_utf8_lossy(&rest[..width.min(rest.len())])
            .chars()
            .next()
    }

    /// What stands at the cursor, for messages: `'x' at byte 12` or `the end of the layout`.
    #[cold]
    pub fn found(&self) -> Found {
        match self.here() {
            Some(found) => Found::Char {
                found,
                at: self.pos,
            },
            None => Found::End,
        }
    }

    /// The error for what stands at the cursor where the grammar puts `expected`: an
    /// unexpected character, or the end of the layout.
    #[cold]
    #[inline(never)]
    pub fn unexpected(&self, expected: Expected) -> LayoutError {
        match self.here() {
            Some(found) => LayoutError::UnexpectedToken {
                expected,
                found,
                at: self.pos,
            },
            None => LayoutError::EndsEarly { expected },
        }
    }
}

/// The fields of `text` between the separators `sep`, found with `memchr` (like
/// `text.split(|&b| b == sep)`, which tests one byte at a time).
#[inline]
pub fn split(text: &[u8], sep: u8) -> Split<'_> {
    Split {
        rest: Some(text),
        sep,
    }
}

/// The iterator of [`split`].
pub struct Split<'a> {
    rest: Option<&'a [u8]>,
    sep: u8,
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        match memchr::memchr(self.sep, rest) {
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                Some(&rest[..i])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_slice_split() {
        for text in [&b""[..], b"/", b"a", b"a/b", b"/a//b/", b"ab/cd/ef"] {
            let ours: Vec<&[u8]> = split(text, b'/').collect();
            let std: Vec<&[u8]> = text.split(|&b| b == b'/').collect();
            assert_eq!(ours, std, "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn messages_quote_what_stands_at_the_cursor() {
        let mut c = Cursor::new("ab\u{e9}".as_bytes());
        c.pos = 2;
        assert_eq!(c.found().to_string(), "'é' at byte 2");
        c.pos = 3; // inside the é: not UTF-8 from here
        assert_eq!(c.found().to_string(), "'\u{fffd}' at byte 3");
        let unexpected = c.unexpected(Expected::EndAfterClover);
        assert_eq!(
            unexpected.to_string(),
            "unexpected '\u{fffd}' at character 4: expected the end of the layout after the clover amount"
        );
        c.pos = 4;
        assert_eq!(c.found(), Found::End);
        assert_eq!(c.found().to_string(), "the end of the layout");
        assert_eq!(
            c.unexpected(Expected::CloverNumber { nth: 2 }).to_string(),
            "the layout ends early: expected clover number 2 (1 to 13)"
        );
    }
}
