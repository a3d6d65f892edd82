//! The keys a game definition may hold, read from the very serde types the loader parses with:
//! docs/FORMAT.md ("Game definition") documents each, and a test holds the two lists equal, so
//! the documentation cannot lag behind the parser.
//!
//! The list is found by walking a type's `Deserialize` implementation with a deserializer that
//! offers every field of every struct it is asked for (one element of every list, `Some` of
//! every option) and records the path of each: `stakes.prizes.count` is the `count` of an entry
//! of the `prizes` list of a `[[stakes]]` table.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess};
use serde::de::{value::Error, Visitor};

/// The keys of a definition outside its `layout` tables, as dotted paths.
pub fn definition_keys() -> Vec<String> {
    keys_of::<super::RawGame>()
}

/// The keys a `layout` table (`[layout]` or `[stakes.layout]`) of the mechanic `name` accepts,
/// as dotted paths from the table (`near_miss.row_p_weights`); `None` for no such mechanic.
pub fn layout_keys(name: &str) -> Option<Vec<String>> {
    struct Keys;
    impl crate::mechanic::SettingsVisitor for Keys {
        type Output = Vec<String>;
        fn visit<S: DeserializeOwned + Default + Clone>(self) -> Vec<String> {
            keys_of::<S>()
        }
    }
    crate::mechanic::Mechanic::visit_settings(name, Keys)
}

/// Every key of `T` and of the structs it holds, as dotted paths, in the order of the fields.
pub fn keys_of<T: DeserializeOwned>() -> Vec<String> {
    let mut out = Vec::new();
    // The walk offers every field, so the value builds; an error would only cut the list short,
    // which the documentation test would show.
    let _ = T::deserialize(Walker {
        path: String::new(),
        out: &mut out,
    });
    out
}

struct Walker<'a> {
    path: String,
    out: &'a mut Vec<String>,
}

impl<'de> de::Deserializer<'de> for Walker<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(false)
    }
    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(0)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(0)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(0)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(0)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(0)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(0)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(0)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(0)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(0.0)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(0.0)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_char('A')
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("")
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("")
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(One(Some(self)))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_map(Fields {
            walker: self,
            fields,
            next: 0,
        })
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        i128 u128 bytes byte_buf unit unit_struct newtype_struct tuple tuple_struct map enum
        identifier
    }
}

/// A list of one element.
struct One<'a>(Option<Walker<'a>>);

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.0.take() {
            Some(walker) => seed.deserialize(walker).map(Some),
            None => Ok(None),
        }
    }
}

/// Every field of a struct, each recorded as it is offered.
struct Fields<'a> {
    walker: Walker<'a>,
    fields: &'static [&'static str],
    next: usize,
}

impl Fields<'_> {
    fn path(&self) -> String {
        let field = self.fields[self.next - 1];
        if self.walker.path.is_empty() {
            field.to_string()
        } else {
            format!("{}.{field}", self.walker.path)
        }
    }
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some(&field) = self.fields.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let path = self.path();
        if !self.walker.out.contains(&path) {
            self.walker.out.push(path);
        }
        seed.deserialize(field.into_deserializer()).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let path = self.path();
        seed.deserialize(Walker {
            path,
            out: self.walker.out,
        })
    }
}

#[cfg(test)]
mod tests {
    //! docs/FORMAT.md's tables of definition keys against the parser's.

    use super::*;
    use crate::mechanic::NAMES;
    use std::collections::BTreeMap;

    const FORMAT: &str = include_str!("../../docs/FORMAT.md");
    const SECTION: &str = "## Game definition";

    /// The rows of the key tables of FORMAT.md's "Game definition" section, by the mechanic
    /// their heading names (`mechanic = "ruche"`), or "" for the keys of every definition:
    /// key → the whole row.
    fn documented() -> BTreeMap<String, BTreeMap<String, String>> {
        let start = FORMAT
            .find(SECTION)
            .expect("FORMAT.md has a Game definition section");
        let section = &FORMAT[start + SECTION.len()..];
        let section = &section[..section.find("\n## ").unwrap_or(section.len())];
        let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut table = String::new();
        for line in section.lines() {
            if let Some(heading) = line.strip_prefix("### ") {
                table = heading
                    .split_once("mechanic = \"")
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map_or(String::new(), |(name, _)| name.to_string());
                continue;
            }
            let Some(row) = line.strip_prefix("| `") else {
                continue;
            };
            let key = row.split_once('`').expect("a key in backticks").0;
            let previous = out
                .entry(table.clone())
                .or_default()
                .insert(key.to_string(), line.to_string());
            assert!(previous.is_none(), "{key} is documented twice in {table:?}");
        }
        out
    }

    fn sorted(keys: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut keys: Vec<String> = keys.into_iter().collect();
        keys.sort();
        keys
    }

    #[test]
    fn the_walk_finds_every_key_of_the_definition_types() {
        let keys = definition_keys();
        for key in ["id", "profile", "stakes.prizes.count", "stakes.layout"] {
            assert!(keys.contains(&key.to_string()), "{keys:?}");
        }
        let ruche = layout_keys("ruche").unwrap();
        assert!(ruche.contains(&"honey.pots".to_string()), "{ruche:?}");
        assert!(ruche.contains(&"near_miss.part_weights".to_string()));
        assert!(layout_keys("loto").is_none());
    }

    #[test]
    fn format_md_documents_exactly_the_keys_the_parser_accepts() {
        let doc = documented();
        assert_eq!(
            sorted(doc.get("").cloned().unwrap_or_default().into_keys()),
            sorted(definition_keys()),
            "FORMAT.md's keys of every definition (left) against the parser's (right)"
        );
        for name in NAMES {
            assert_eq!(
                sorted(doc.get(*name).cloned().unwrap_or_default().into_keys()),
                sorted(layout_keys(name).expect("every mechanic has its layout keys")),
                "FORMAT.md's layout keys of mechanic = \"{name}\" (left) against the parser's (right)"
            );
        }
        let mut tables: Vec<&str> = doc.keys().map(String::as_str).collect();
        tables.retain(|t| !t.is_empty());
        assert_eq!(
            sorted(tables.iter().map(|t| t.to_string())),
            sorted(NAMES.iter().map(|n| n.to_string()))
        );
        // Every row says whether the key is required.
        for (table, rows) in &doc {
            for (key, row) in rows {
                assert!(
                    row.contains("required") || row.contains("optional"),
                    "{table:?} {key}: say whether it is required: {row}"
                );
            }
        }
    }

    #[test]
    fn format_md_gives_the_bounds_the_loader_checks() {
        use crate::game::{MAX_ID_BYTES, MAX_NAME_CHARS, MAX_PRIZES, MAX_STAKES};
        use crate::mechanic::calendar::{MAX_CALENDAR_AMOUNTS, MAX_SYMBOLS, MAX_WINNING_MONTHS};
        use crate::mechanic::hive::MAX_HIVE_AMOUNTS;
        use crate::mechanic::maxi_ruche::MAX_BONUS_BEES;
        use crate::mechanic::ruche::MAX_HONEY_POTS;
        use crate::mechanic::util::MAX_WEIGHT;
        let doc = documented();
        use crate::money::grouped;
        let bounds: &[(&str, &str, u64)] = &[
            ("", "id", MAX_ID_BYTES as u64),
            ("", "name", MAX_NAME_CHARS as u64),
            ("", "block_size", 9_999_999),
            ("", "stakes", MAX_STAKES as u64),
            ("", "stakes.prizes", MAX_PRIZES as u64),
            ("", "stakes.prizes.amount", crate::money::MAX_AMOUNT_EUROS),
            ("ruche", "row_amounts", MAX_HIVE_AMOUNTS as u64),
            ("ruche", "honey", MAX_HONEY_POTS as u64),
            ("ruche", "honey.pots", MAX_HONEY_POTS as u64),
            ("ruche", "near_miss.row_p_weights", MAX_WEIGHT as u64),
            ("maxi-ruche", "row_amounts", MAX_HIVE_AMOUNTS as u64),
            ("maxi-ruche", "bee_amounts", MAX_HIVE_AMOUNTS as u64),
            ("maxi-ruche", "bonus.bees", MAX_BONUS_BEES as u64),
            ("maxi-ruche", "near_miss.bonus_weight", MAX_WEIGHT as u64),
            ("calendar", "month_amounts", MAX_CALENDAR_AMOUNTS as u64),
            ("calendar", "clover_amounts", MAX_CALENDAR_AMOUNTS as u64),
            ("calendar", "symbols", MAX_SYMBOLS as u64),
            ("calendar", "max_winning_months", MAX_WINNING_MONTHS as u64),
        ];
        for (table, key, bound) in bounds {
            let row = &doc[*table][*key];
            assert!(
                row.contains(&grouped(*bound)),
                "{table:?} {key}: the bound {bound} is not in its row: {row}"
            );
        }
    }
}
