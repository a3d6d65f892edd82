//! The block manifest (`block-NNNNN.manifest.json`), format 3 (formats 2, without
//! `record_sha256`, and 1, without `emission_kind` either, are still read).
//!
//! Fields are written in a fixed order with two-space indentation and a final line end, so the
//! same block always gives the same bytes (and so the same signature).

use crate::block::id::{BlockId, EmissionId, EmissionKind};
use serde::{Deserialize, Serialize};

/// The format number written in every manifest.
pub const FORMAT: u32 = 3;
/// The format before, still read: the same fields without `record_sha256`.
pub const FORMAT_2: u32 = 2;
/// The first format, still read: the fields of format 2 without `emission_kind`.
pub const FORMAT_1: u32 = 1;
/// Every format this program reads.
pub const FORMATS_READ: [u32; 3] = [FORMAT_1, FORMAT_2, FORMAT];

/// The version of the generator: the bytes of a block (prize order, layouts, files) for given
/// coordinates and seed. Any change of those bytes bumps it; `emit` and `verify --seed` refuse to
/// replay a block made by another version.
pub const GENERATOR_VERSION: u32 = 3;

/// The most a manifest may hold: one is about a kilobyte (a prize table of at most 255 rows).
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Manifest bytes that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// More than [`MAX_MANIFEST_BYTES`]: not parsed.
    #[error("{0} bytes, more than the {MAX_MANIFEST_BYTES} bytes a manifest may hold: not read")]
    TooLarge(usize),
    /// Not JSON, or not the fields of format 1. The parser's message, escaped and cut (it
    /// may quote the file).
    #[error("{0}")]
    Json(String),
    /// The `game` or `stake` field cannot name an emission (a game id a definition could not
    /// have, a stake that is not a canonical price in whole cents).
    #[error("{text}")]
    Field {
        /// `game` or `stake`.
        field: &'static str,
        /// What is wrong, the value escaped and cut.
        text: String,
    },
}

/// One line of the prize list: `count` tickets win `amount`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrizeCount {
    /// Canonical amount; `"0"` for the losers.
    pub amount: String,
    /// Number of tickets.
    pub count: u64,
}

/// The CSV file a manifest describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsvFile {
    /// File name, e.g. `block-00001.csv`.
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the whole file, lowercase hex.
    pub sha256: String,
}

/// A block manifest. Its emission and block are one [`BlockId`], checked at reading: a
/// manifest whose `game` is not an id a definition may have, or whose `stake` is not a
/// canonical price, is refused by [`Manifest::from_bytes`] (an error naming the field). On
/// disk the fields are those of [`ManifestWire`], in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ManifestWire", into = "ManifestWire")]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: u32,
    /// The block (fields `game`, `stake`, `emission` and `block`).
    pub id: BlockId,
    /// Game display name.
    pub game_name: String,
    /// SHA-256 of the game definition file's bytes.
    pub game_definition_sha256: String,
    /// Tickets in the CSV.
    pub tickets: u64,
    /// Winning tickets in the CSV.
    pub winners: u64,
    /// Prizes, highest first, the losers last as `"0"`.
    pub prizes: Vec<PrizeCount>,
    /// Sum of all prizes, canonical.
    pub total_prizes: String,
    /// The CSV file.
    pub csv: CsvFile,
    /// RFC 6962 Merkle root over the ticket hashes, hex.
    pub tickets_root: String,
    /// SHA-256 of the emission seed (a commitment).
    pub seed_sha256: String,
    /// SHA-256 of the signing public key's DER (SPKI) bytes.
    pub public_key_sha256: String,
    /// Program name and version, and the generator version: `emission-factory 0.1.0
    /// (generator 1)`.
    pub generator: String,
    /// `test` (seed given in clear) or `production` (seed from custody shares); absent in
    /// format 1.
    pub emission_kind: Option<EmissionKind>,
    /// SHA-256 of the emission record's bytes (`emission.json`) the block was made under:
    /// deleting or replacing the record is seen from any block. Absent in formats 1 and 2.
    pub record_sha256: Option<String>,
}

/// A manifest as it is written: its fields in their order, the emission's and block's
/// loose. Only [`Manifest`] is used outside this module.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestWire {
    /// Always [`FORMAT`].
    pub format: u32,
    /// Game id.
    pub game: String,
    /// Game display name.
    pub game_name: String,
    /// SHA-256 of the game definition file's bytes.
    pub game_definition_sha256: String,
    /// Canonical stake.
    pub stake: String,
    /// Emission number.
    pub emission: u32,
    /// Block number (from 1).
    pub block: u32,
    /// Tickets in the CSV.
    pub tickets: u64,
    /// Winning tickets in the CSV.
    pub winners: u64,
    /// Prizes, highest first, the losers last as `"0"`.
    pub prizes: Vec<PrizeCount>,
    /// Sum of all prizes, canonical.
    pub total_prizes: String,
    /// The CSV file.
    pub csv: CsvFile,
    /// RFC 6962 Merkle root over the ticket hashes, hex.
    pub tickets_root: String,
    /// SHA-256 of the emission seed (a commitment).
    pub seed_sha256: String,
    /// SHA-256 of the signing public key's DER (SPKI) bytes.
    pub public_key_sha256: String,
    /// Program name and version, and the generator version: `emission-factory 0.1.0
    /// (generator 1)`.
    pub generator: String,
    /// `test` (seed given in clear) or `production` (seed from custody shares); absent in
    /// format 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emission_kind: Option<EmissionKind>,
    /// SHA-256 of the emission record's bytes (`emission.json`) the block was made under:
    /// deleting or replacing the record is seen from any block. Absent in formats 1 and 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_sha256: Option<String>,
}

impl TryFrom<ManifestWire> for Manifest {
    type Error = ManifestError;

    /// The fields of the manifest's format ([`ManifestWire::check_fields`]), then its
    /// emission and block.
    fn try_from(w: ManifestWire) -> Result<Manifest, ManifestError> {
        w.check_fields()?;
        let emission = EmissionId::of_fields(&w.game, &w.stake, w.emission).map_err(|e| {
            ManifestError::Field {
                field: e.field(),
                text: e.to_string(),
            }
        })?;
        Ok(Manifest {
            format: w.format,
            id: emission.block(w.block),
            game_name: w.game_name,
            game_definition_sha256: w.game_definition_sha256,
            tickets: w.tickets,
            winners: w.winners,
            prizes: w.prizes,
            total_prizes: w.total_prizes,
            csv: w.csv,
            tickets_root: w.tickets_root,
            seed_sha256: w.seed_sha256,
            public_key_sha256: w.public_key_sha256,
            generator: w.generator,
            emission_kind: w.emission_kind,
            record_sha256: w.record_sha256,
        })
    }
}

impl From<Manifest> for ManifestWire {
    fn from(m: Manifest) -> ManifestWire {
        let emission = m.id.emission();
        ManifestWire {
            format: m.format,
            game: emission.game().to_string(),
            game_name: m.game_name,
            game_definition_sha256: m.game_definition_sha256,
            stake: emission.stake().to_string(),
            emission: emission.number(),
            block: m.id.number(),
            tickets: m.tickets,
            winners: m.winners,
            prizes: m.prizes,
            total_prizes: m.total_prizes,
            csv: m.csv,
            tickets_root: m.tickets_root,
            seed_sha256: m.seed_sha256,
            public_key_sha256: m.public_key_sha256,
            generator: m.generator,
            emission_kind: m.emission_kind,
            record_sha256: m.record_sha256,
        }
    }
}

impl Manifest {
    /// The emission the manifest names, as messages write it.
    pub fn emission_name(&self) -> String {
        self.id.emission().to_string()
    }

    /// The emission the manifest names.
    pub fn emission(&self) -> &EmissionId {
        self.id.emission()
    }

    /// The exact bytes written to disk (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::json::json_bytes(self)
    }

    /// The emission's kind; a format 1 manifest (made before kinds existed) counts as a test.
    pub fn kind(&self) -> EmissionKind {
        self.emission_kind.unwrap_or(EmissionKind::Test)
    }

    /// The generator version named in `generator` (`(generator N)`); format 1 manifests, made
    /// before the version was written, were made by generator 1.
    pub fn generator_version(&self) -> Option<u32> {
        match self.generator.split_once("(generator ") {
            Some((_, rest)) => rest.strip_suffix(')')?.parse().ok(),
            None if self.format == FORMAT_1 => Some(1),
            None => None,
        }
    }

    /// Parses manifest bytes: at most [`MAX_MANIFEST_BYTES`] of them, refused unread beyond;
    /// an object with exactly the manifest's fields, written as this program writes it
    /// ([`crate::json::parse_strict`]). Never panics, whatever the bytes (serde_json bounds
    /// its recursion).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ManifestError> {
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(ManifestError::TooLarge(bytes.len()));
        }
        let wire: ManifestWire = crate::json::parse_strict(bytes, crate::json::Layout::Pretty)
            .map_err(|e| ManifestError::Json(e.to_string()))?;
        Manifest::try_from(wire)
    }
}

impl ManifestWire {
    /// Requires exactly the fields of the manifest's format: `emission_kind` from format 2
    /// on, `record_sha256` (64 lowercase hex digits) in format 3 only.
    fn check_fields(&self) -> Result<(), ManifestError> {
        let missing = |field: &str| {
            Err(ManifestError::Json(format!(
                "a format {} manifest has the field {field}, and this one has not",
                self.format
            )))
        };
        let extra = |field: &str| {
            Err(ManifestError::Json(format!(
                "a format {} manifest has no field {field}, and this one has",
                self.format
            )))
        };
        match self.format {
            FORMAT_1 if self.emission_kind.is_some() => extra("emission_kind"),
            FORMAT_1 | FORMAT_2 if self.record_sha256.is_some() => extra("record_sha256"),
            FORMAT_2 | FORMAT if self.emission_kind.is_none() => missing("emission_kind"),
            FORMAT => match &self.record_sha256 {
                None => missing("record_sha256"),
                Some(h) if !is_sha256_hex(h) => Err(ManifestError::Json(
                    "record_sha256 is not 64 lowercase hexadecimal digits".into(),
                )),
                Some(_) => Ok(()),
            },
            // Another format is named as such by the readers, which know which they read.
            _ => Ok(()),
        }
    }
}

/// Whether `text` is a SHA-256 written as this program writes it: 64 lowercase hex digits.
fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `emission-factory <version> (generator <N>)`.
pub fn generator() -> String {
    format!(
        "{} {} (generator {GENERATOR_VERSION})",
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_bytes_is_bounded_and_never_panics() {
        let big = vec![b' '; MAX_MANIFEST_BYTES as usize + 1];
        assert!(matches!(
            Manifest::from_bytes(&big),
            Err(ManifestError::TooLarge(1048577))
        ));
        // Deep nesting, control characters, garbage: errors, escaped and short.
        let deep = "[".repeat(100_000);
        assert!(Manifest::from_bytes(deep.as_bytes()).is_err());
        let escape = format!("{{\"format\": \"\\u001b[2J{}\"}}", "x".repeat(10_000));
        let e = Manifest::from_bytes(escape.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\u{1b}') && e.len() < 400, "{e}");
        assert!(Manifest::from_bytes(b"\xff\xfe").is_err());
    }

    /// A format 3 manifest as `emit` writes it.
    const MANIFEST: &str = r#"{
  "format": 3,
  "game": "ruche-or",
  "game_name": "La ruche d'or",
  "game_definition_sha256": "1111111111111111111111111111111111111111111111111111111111111111",
  "stake": "0.5",
  "emission": 3,
  "block": 12,
  "tickets": 2,
  "winners": 1,
  "prizes": [
    {
      "amount": "1",
      "count": 1
    },
    {
      "amount": "0",
      "count": 1
    }
  ],
  "total_prizes": "1",
  "csv": {
    "file": "block-00012.csv",
    "bytes": 200,
    "sha256": "2222222222222222222222222222222222222222222222222222222222222222"
  },
  "tickets_root": "3333333333333333333333333333333333333333333333333333333333333333",
  "seed_sha256": "4444444444444444444444444444444444444444444444444444444444444444",
  "public_key_sha256": "5555555555555555555555555555555555555555555555555555555555555555",
  "generator": "emission-factory 0.1.0 (generator 3)",
  "emission_kind": "test",
  "record_sha256": "6666666666666666666666666666666666666666666666666666666666666666"
}
"#;

    #[test]
    fn a_manifest_holds_its_block_and_is_written_back_byte_for_byte() {
        let manifest = Manifest::from_bytes(MANIFEST.as_bytes()).unwrap();
        assert_eq!(manifest.id.to_string(), "ruche-or/0.5/e0003 block 00012");
        assert_eq!(manifest.id.serial_prefix(), "ruche-or-50-0003-00012-");
        assert_eq!(manifest.emission_name(), "ruche-or/0.5/e0003");
        assert_eq!(manifest.to_bytes(), MANIFEST.as_bytes());
        // Through serde as well (the public struct reads and writes the wire fields).
        let again: Manifest = serde_json::from_str(MANIFEST).unwrap();
        assert_eq!(again, manifest);
        assert_eq!(crate::json::json_bytes(&again), MANIFEST.as_bytes());
    }

    #[test]
    fn a_manifest_whose_game_or_stake_names_no_emission_is_refused_at_reading() {
        for (from, to, field) in [
            (r#""game": "ruche-or""#, r#""game": "../x""#, "game"),
            (r#""game": "ruche-or""#, r#""game": "Ruche""#, "game"),
            (r#""game": "ruche-or""#, r#""game": """#, "game"),
            (r#""stake": "0.5""#, r#""stake": "0.50""#, "stake"),
            (r#""stake": "0.5""#, r#""stake": "0""#, "stake"),
            (r#""stake": "0.5""#, r#""stake": "0.005""#, "stake"),
            (r#""stake": "0.5""#, r#""stake": "2/../..""#, "stake"),
        ] {
            let text = MANIFEST.replace(from, to);
            assert_ne!(text, MANIFEST);
            match Manifest::from_bytes(text.as_bytes()) {
                Err(e @ ManifestError::Field { field: f, .. }) => {
                    assert_eq!(f, field, "{to}");
                    assert!(e.to_string().starts_with(&format!("{field} '")), "{e}");
                }
                other => panic!("{to}: {other:?}"),
            }
            assert!(serde_json::from_str::<Manifest>(&text).is_err(), "{to}");
        }
        // An unknown field is still refused, with serde's deny_unknown_fields.
        let extra = MANIFEST.replace("\n  \"format\": 3,", "\n  \"format\": 3,\n  \"x\": 1,");
        assert_ne!(extra, MANIFEST);
        assert!(matches!(
            Manifest::from_bytes(extra.as_bytes()),
            Err(ManifestError::Json(_))
        ));
    }
}
