//! What comes from a file is hostile until checked: a block to verify, a game definition, a
//! key. Two rules keep it from doing harm before it is checked, and this module holds both.
//!
//! - **Read with a bound.** A file is read whole only if it is no larger than what such a
//!   file can hold; a larger one is refused on its size, before it is read
//!   ([`crate::fs::open::read_at_most`]). Block CSVs are read as a stream, with their own
//!   bounds (`verify`).
//! - **Echo escaped and short.** What a message shows of a file goes through [`shown`]:
//!   control characters and other non-printables are escaped as Rust's `escape_debug` does
//!   (an escape sequence in a serial must not reach the terminal), and at most
//!   [`SHOWN_CHARS`] characters are shown, with the full length (a 50 MB field must not
//!   make a 50 MB report line). Messages of other libraries that may quote a file go through
//!   [`tamed`], names shown as text (a game's name in a title) through [`shown_text`], and
//!   what reaches a terminal made of such messages through [`defanged`], a last guard. One
//!   escaper does all four, so they cannot drift apart.

use std::fmt::Write as _;
use std::path::Path;

/// Most characters [`shown`] writes of a value, escapes counted as written.
pub const SHOWN_CHARS: usize = 80;

/// Most characters [`tamed`] keeps of a library's message.
pub const TAMED_CHARS: usize = 240;

/// A value read from a file, as a message may show it: between single quotes, escaped, and
/// cut to [`SHOWN_CHARS`] characters with an ellipsis and its full length in bytes.
///
/// `'P:AB'`, `'mini\u{1b}[31m'`, `'\xff'`, `'9999…' (52428800 bytes)`.
pub fn shown(bytes: impl AsRef<[u8]>) -> String {
    let bytes = bytes.as_ref();
    let (text, cut) = escaped(bytes, SHOWN_CHARS);
    if cut {
        format!("'{text}…' ({} bytes)", bytes.len())
    } else {
        format!("'{text}'")
    }
}

/// A message from a library (a parser) that may quote the file it read: escaped like
/// [`shown`], without quotes, and cut to [`TAMED_CHARS`] characters with an ellipsis.
pub fn tamed(message: &str) -> String {
    let (mut text, cut) = escaped(message.as_bytes(), TAMED_CHARS);
    if cut {
        text.push('…');
    }
    text
}

/// A path as a message may show it: escaped like [`shown`] (a folder named with an escape
/// sequence must not reach the terminal either), but whole and without quotes, since it names
/// a file the reader must be able to find.
pub fn shown_path(path: &Path) -> String {
    escaped(path.as_os_str().as_encoded_bytes(), usize::MAX).0
}

/// A text from a file shown as text rather than as a quoted value (a game's name in a title, a
/// picture's name in a legend, a name in an HTML page): escaped as [`shown`] escapes, but
/// without quotes around it, so a quote stays as it is; cut to `limit` characters (escapes
/// counted as written) with an ellipsis. `usize::MAX` keeps it whole.
///
/// `La ruche d'or`, `Mini \u{1b}[31m`, `\u{202e}rouge`.
pub fn shown_text(text: &str, limit: usize) -> String {
    let (mut out, cut) = escape(text.as_bytes(), limit, Mode::Text);
    if cut {
        out.push('…');
    }
    out
}

/// The last guard before a terminal, for text made of messages that already echo what they
/// quote through [`shown`] (a verification's problems, an error and its causes): what acts on
/// a terminal (control characters but the line end, bidirectional overrides, zero-width and
/// other invisible characters) is escaped as [`shown`] escapes it; the rest, backslashes and
/// quotes included, stays as it is, so an escape already written reads the same, and nothing
/// is cut.
pub fn defanged(text: &str) -> String {
    escape(text.as_bytes(), usize::MAX, Mode::Defang).0
}

/// Text for HTML and XML (the report's page and the pictures it embeds: element content and
/// attribute values): what would act on the page or reorder it (control characters, which XML
/// cannot even hold, bidirectional overrides, invisible characters) is written as a visible
/// escape, as on a terminal ([`defanged`]), then the five characters of markup as entities
/// that both languages read (`&#39;` for the apostrophe: HTML 4 has no `&apos;`).
pub fn markup(text: &str) -> String {
    let text = defanged(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `bytes` escaped (invalid UTF-8 as `\xNN`), at most `limit` characters of output; true if
/// cut.
fn escaped(bytes: &[u8], limit: usize) -> (String, bool) {
    escape(bytes, limit, Mode::Quoted)
}

/// What [`escape`] leaves as it is, beside printable characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A value between quotes: the quote and the backslash are escaped, so that the quotes
    /// around it stay unambiguous.
    Quoted,
    /// Text without quotes: the backslash is escaped (an escape written stays unambiguous),
    /// the quote is not.
    Text,
    /// Text already escaped: the backslash, the quote and the line end stay.
    Defang,
}

/// The one escaper: printable characters as they are, everything else as `escape_debug` says
/// (control characters, bidirectional overrides, zero-width and other invisible characters,
/// lone combining marks); `mode` says which of the backslash, the quote and the line end stay.
fn escape(bytes: &[u8], limit: usize, mode: Mode) -> (String, bool) {
    let mut out = String::new();
    let mut written = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let raw = match c {
                '\'' => mode != Mode::Quoted,
                '\\' => mode == Mode::Defang,
                '\n' => mode == Mode::Defang,
                ' '..='~' => true,
                // Printable beyond ASCII (é, €, →): escape_debug leaves it alone.
                _ if !c.is_ascii() => {
                    let mut e = c.escape_debug();
                    e.next() == Some(c) && e.next().is_none()
                }
                _ => false,
            };
            let width = if raw { 1 } else { c.escape_debug().count() };
            if written + width > limit {
                return (out, true);
            }
            if raw {
                out.push(c);
            } else {
                out.extend(c.escape_debug());
            }
            written += width;
        }
        for &b in chunk.invalid() {
            if written + 4 > limit {
                return (out, true);
            }
            let _ = write!(out, "\\x{b:02x}");
            written += 4;
        }
    }
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_are_quoted_as_they_are() {
        assert_eq!(shown("P:AB"), "'P:AB'");
        assert_eq!(shown(""), "''");
        assert_eq!(shown("année"), "'année'");
    }

    #[test]
    fn control_characters_and_non_printables_are_escaped() {
        assert_eq!(shown("a\u{1b}[31mb"), "'a\\u{1b}[31mb'");
        assert_eq!(shown("\n\r\t\0\u{7}"), "'\\n\\r\\t\\0\\u{7}'");
        // Bidirectional overrides, zero-width characters, a lone combining accent.
        assert_eq!(
            shown("\u{202e}x\u{200b}\u{301}"),
            "'\\u{202e}x\\u{200b}\\u{301}'"
        );
        // Quotes and backslashes, so that the quotes of the value stay unambiguous.
        assert_eq!(shown("it's \\"), "'it\\'s \\\\'");
        // Invalid UTF-8, byte by byte.
        assert_eq!(shown(b"a\xff\xfeb"), "'a\\xff\\xfeb'");
    }

    #[test]
    fn every_character_that_acts_on_a_terminal_is_escaped_in_every_form() {
        // ESC, BEL, DEL, a C1 control, the bidirectional embeddings, overrides, isolates and
        // marks, zero-width characters and the byte order mark.
        let hostile: Vec<char> = ['\u{1b}', '\u{7}', '\u{7f}', '\u{9b}', '\u{61c}', '\u{feff}']
            .into_iter()
            .chain('\u{200b}'..='\u{200f}')
            .chain('\u{202a}'..='\u{202e}')
            .chain('\u{2060}'..='\u{2069}')
            .collect();
        for c in hostile {
            let text = format!("a{c}b");
            let escaped = format!("a\\u{{{:x}}}b", c as u32);
            assert_eq!(shown(&text), format!("'{escaped}'"), "U+{:04X}", c as u32);
            assert_eq!(
                shown_text(&text, SHOWN_CHARS),
                escaped,
                "U+{:04X}",
                c as u32
            );
            assert_eq!(defanged(&text), escaped, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn text_is_shown_without_quotes_and_cut() {
        assert_eq!(shown_text("La ruche d'or", SHOWN_CHARS), "La ruche d'or");
        assert_eq!(shown_text("année → 2 €", SHOWN_CHARS), "année → 2 €");
        assert_eq!(
            shown_text("Mini \u{1b}[31mred\u{7} \u{202e}x", SHOWN_CHARS),
            "Mini \\u{1b}[31mred\\u{7} \\u{202e}x"
        );
        // A backslash is escaped: a name cannot pretend to hold an escape.
        assert_eq!(shown_text("a\\u{1b}", SHOWN_CHARS), "a\\\\u{1b}");
        assert_eq!(shown_text("a\nb", SHOWN_CHARS), "a\\nb");
        assert_eq!(
            shown_text(&"x".repeat(50), 40),
            format!("{}…", "x".repeat(40))
        );
        assert_eq!(shown_text(&"x".repeat(40), 40), "x".repeat(40));
        let whole = "\u{1b}".repeat(1000);
        assert_eq!(shown_text(&whole, usize::MAX), "\\u{1b}".repeat(1000));
    }

    #[test]
    fn defanged_text_keeps_what_is_already_escaped_and_its_lines() {
        let message = "line 2: serial 'ab\\u{1b}[31m' is not 'c\\'d'\n  - and \u{1b}[2J\u{202e}";
        assert_eq!(
            defanged(message),
            "line 2: serial 'ab\\u{1b}[31m' is not 'c\\'d'\n  - and \\u{1b}[2J\\u{202e}"
        );
        // Idempotent: escaping twice changes nothing more.
        assert_eq!(defanged(&defanged(message)), defanged(message));
        let long = "é".repeat(100_000);
        assert_eq!(defanged(&long), long);
        assert_eq!(defanged("a\tb\rc"), "a\\tb\\rc");
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        let long = "9".repeat(50 << 20);
        let s = shown(&long);
        assert_eq!(
            s,
            format!("'{}…' (52428800 bytes)", "9".repeat(SHOWN_CHARS))
        );
        // The cut counts escapes as written and never splits one.
        let escapes = "\u{1b}".repeat(100);
        let s = shown(&escapes);
        assert!(s.starts_with("'\\u{1b}"), "{s}");
        assert!(s.ends_with("\\u{1b}…' (100 bytes)"), "{s}");
        assert!(s.chars().count() <= SHOWN_CHARS + 20, "{s}");
        // Exactly at the limit: not cut.
        assert_eq!(
            shown("x".repeat(SHOWN_CHARS)),
            format!("'{}'", "x".repeat(SHOWN_CHARS))
        );
    }

    #[test]
    fn paths_are_escaped_whole() {
        assert_eq!(
            shown_path(Path::new("out/ruche-or/0.5/e0001/block-00001.csv")),
            "out/ruche-or/0.5/e0001/block-00001.csv"
        );
        let long = format!("a/{}\u{1b}[2J/b", "x".repeat(200));
        assert_eq!(
            shown_path(Path::new(&long)),
            format!("a/{}\\u{{1b}}[2J/b", "x".repeat(200))
        );
    }

    #[test]
    fn library_messages_are_escaped_and_cut_without_quotes() {
        assert_eq!(tamed("expected u64 at line 2"), "expected u64 at line 2");
        assert_eq!(tamed("invalid \u{1b}[2J"), "invalid \\u{1b}[2J");
        let long = tamed(&"a".repeat(10_000));
        assert_eq!(long, format!("{}…", "a".repeat(TAMED_CHARS)));
    }

    /// One escaper for the page and the pictures it embeds (issue 21): HTML's and XML's
    /// characters as entities both read, what acts on a page as a visible escape.
    #[test]
    fn markup_is_escaped_for_html_and_xml_alike() {
        assert_eq!(
            markup("<script>\"a\" & 'b'\u{1b}</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;\\u{1b}&lt;/script&gt;"
        );
        assert_eq!(
            markup("a\u{0}b\u{202e}c\u{2066}d\u{200b}e\u{feff}\u{ffff}"),
            "a\\0b\\u{202e}c\\u{2066}d\\u{200b}e\\u{feff}\\u{ffff}"
        );
    }
}
