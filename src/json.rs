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

/// Parses a signed JSON document strictly: it must be an object (never an array, which serde
/// would take field by field), with exactly its documented fields (no unknown, missing or
/// duplicate key, every nested object an object), written exactly as this program writes
/// it (so its bytes are the canonical bytes of its value). The error says which rule failed,
/// escaped and cut (it may quote the file).
pub fn parse_strict<T>(bytes: &[u8], layout: Layout) -> std::result::Result<T, String>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let tamed = |e: &dyn std::fmt::Display| crate::untrusted::tamed(&e.to_string());
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => {
            return Err(
                "a JSON array, not an object: a signed document is an object with exactly its documented fields".into(),
            )
        }
        _ => return Err("not a JSON object".into()),
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
        return Err(
            "not written as this program writes it (spacing, key order, escapes or number forms differ): the bytes were made by hand".into(),
        );
    }
    Ok(value)
}

/// The first place where `found` has not the shape of `wanted` (a key missing, an array
/// where an object belongs), as `key \`a.b\` is missing`.
fn shape_difference(
    found: &serde_json::Value,
    wanted: &serde_json::Value,
    at: &str,
) -> Option<String> {
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
                    None => return Some(format!("key `{}` is missing", here(key))),
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
            Some(format!("`{at}` is a JSON array where an object belongs"))
        }
        (Value::Array(found), Value::Array(wanted)) => found
            .iter()
            .zip(wanted)
            .enumerate()
            .find_map(|(i, (f, w))| shape_difference(f, w, &format!("{at}[{i}]"))),
        _ => None,
    }
}
