//! Signed JSON documents (manifest, record, seal, audit-log lines): the one way this program
//! writes them ([`json_bytes`]), and the strict reading that accepts exactly those bytes
//! ([`parse_strict`]), so that a signed document has one spelling and a hand-made variant
//! (an array, a duplicate or unknown key, other spacing) is refused before anything trusts it.

/// The exact bytes of a signed JSON file (manifest, record, seal): pretty JSON, fields in
/// declaration order, and a final line end, so the same value always gives the same bytes.
pub fn json_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .expect("a value of strings, numbers and lists always serializes");
    bytes.push(b'\n');
    bytes
}

/// How a signed JSON document is laid out: pretty (manifest, record, seal: [`json_bytes`]) or
/// one compact line without its line end (a line of the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// [`json_bytes`].
    Pretty,
    /// `serde_json::to_vec`.
    Line,
}

/// Which rule of the strict reading a document breaks ([`parse_strict`]). What it quotes of
/// the document is escaped and cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrictJsonError {
    /// An array.
    #[error(
        "a JSON array, not an object: a signed document is an object with exactly its documented fields"
    )]
    Array,
    /// Neither an object nor an array.
    #[error("not a JSON object")]
    NotObject,
    /// serde_json's refusal (unknown or duplicate key, a wrong type...), escaped and cut.
    #[error("{0}")]
    Serde(String),
    /// A key missing (`at` is its dotted place).
    #[error("key `{at}` is missing")]
    Missing {
        /// Where: `a.b`, `list[2].c`.
        at: String,
    },
    /// An array where an object belongs (`at` is its dotted place).
    #[error("`{at}` is a JSON array where an object belongs")]
    ArrayForObject {
        /// Where.
        at: String,
    },
    /// The right value, not in this program's bytes.
    #[error(
        "not written as this program writes it (spacing, key order, escapes or number forms differ): the bytes were made by hand"
    )]
    NotCanonical,
}

/// Parses a signed JSON document strictly: it must be an object (never an array, which serde
/// would take field by field), with exactly its documented fields (no unknown, missing or
/// duplicate key, every nested object an object), written exactly as this program writes
/// it (so its bytes are the canonical bytes of its value). The error says which rule failed,
/// escaped and cut (it may quote the file).
pub fn parse_strict<T>(bytes: &[u8], layout: Layout) -> std::result::Result<T, StrictJsonError>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let tamed =
        |e: &dyn std::fmt::Display| StrictJsonError::Serde(crate::untrusted::tamed(&e.to_string()));
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => return Err(StrictJsonError::Array),
        _ => return Err(StrictJsonError::NotObject),
    }
    let value: T = serde_json::from_slice(bytes).map_err(|e| tamed(&e))?;
    let found: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| tamed(&e))?;
    let wanted = serde_json::to_value(&value).map_err(|e| tamed(&e))?;
    if let Some(wrong) = shape_difference(&found, &wanted, "") {
        return Err(wrong);
    }
    let canonical = match layout {
        Layout::Pretty => json_bytes(&value),
        Layout::Line => serde_json::to_vec(&value).map_err(|e| tamed(&e))?,
    };
    if canonical != bytes {
        return Err(StrictJsonError::NotCanonical);
    }
    Ok(value)
}

/// The first place where `found` has not the shape of `wanted` (a key missing, an array
/// where an object belongs), as `key \`a.b\` is missing`.
fn shape_difference(
    found: &serde_json::Value,
    wanted: &serde_json::Value,
    at: &str,
) -> Option<StrictJsonError> {
    use serde_json::Value;
    let here = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match (found, wanted) {
        (Value::Object(found), Value::Object(wanted)) => {
            for (key, inner) in wanted {
                match found.get(key) {
                    None => return Some(StrictJsonError::Missing { at: here(key) }),
                    Some(f) => {
                        if let Some(d) = shape_difference(f, inner, &here(key)) {
                            return Some(d);
                        }
                    }
                }
            }
            None
        }
        (Value::Array(_), Value::Object(_)) => {
            Some(StrictJsonError::ArrayForObject { at: at.to_string() })
        }
        (Value::Array(found), Value::Array(wanted)) => found
            .iter()
            .zip(wanted)
            .enumerate()
            .find_map(|(i, (f, w))| shape_difference(f, w, &format!("{at}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        inner: Inner,
    }

    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        n: u32,
    }

    #[test]
    fn the_strict_reading_names_the_rule_and_its_place() {
        let good = json_bytes(&Doc {
            inner: Inner { n: 1 },
        });
        assert!(parse_strict::<Doc>(&good, Layout::Pretty).is_ok());
        let e = parse_strict::<Doc>(br#"{"inner":{"n":1}}"#, Layout::Pretty).err();
        assert_eq!(e, Some(StrictJsonError::NotCanonical));
        assert!(e.is_some_and(|e| e
            .to_string()
            .starts_with("not written as this program writes it")));
        let e = parse_strict::<Doc>(b"[1]", Layout::Line).err();
        assert_eq!(e, Some(StrictJsonError::Array));
        let e = shape_difference(
            &serde_json::json!({"inner": {}}),
            &serde_json::json!({"inner": {"n": 1}}),
            "",
        );
        assert_eq!(
            e,
            Some(StrictJsonError::Missing {
                at: "inner.n".into()
            })
        );
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some("key `inner.n` is missing")
        );
    }
}
