//! The block manifest (`block-NNNNN.manifest.json`), format 1.
//!
//! Fields are written in a fixed order with two-space indentation and a final line end, so the
//! same block always gives the same bytes (and so the same signature).

use serde::{Deserialize, Serialize};

/// The format number written in every manifest.
pub const FORMAT: u32 = 1;

/// One line of the prize list: `count` tickets win `amount`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrizeCount {
    /// Canonical amount; `"0"` for the losers.
    pub amount: String,
    /// Number of tickets.
    pub count: u64,
}

/// The CSV file a manifest describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvFile {
    /// File name, e.g. `block-00001.csv`.
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the whole file, lowercase hex.
    pub sha256: String,
}

/// A block manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
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
    /// Program name and version.
    pub generator: String,
}

impl Manifest {
    /// The exact bytes written to disk (and signed).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self)
            .expect("a manifest of strings and numbers always serializes");
        bytes.push(b'\n');
        bytes
    }

    /// Parses manifest bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// `emission-factory <version>`.
pub fn generator() -> String {
    format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
}
