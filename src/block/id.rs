//! Who a file belongs to: an emission (a game, a stake, a number) and a block of it, spelt one
//! way for every folder, file name, serial and message (FORMAT.md, "Folder" and "Serials").
//!
//! An [`EmissionId`] is made from a checked game and stake ([`EmissionId::new`]) or from what a
//! manifest, record or seal says ([`EmissionId::from_fields`], which refuses a game id or a stake
//! that the definitions could not have given: such text may be hostile, and it names folders).

use crate::game::{Stake, MAX_ID_BYTES};
use crate::money::{canonical, cents, parse_canonical};
use crate::untrusted::{shown, shown_text, SHOWN_CHARS};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// Whether an emission may be sold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmissionKind {
    /// The seed was given or kept in clear (`--seed`, a plaintext seed file, the quick start):
    /// fine for CI, demonstrations and audits of the method, never for sale.
    Test,
    /// The seed was rebuilt from custody shares and never existed in clear on disk.
    Production,
}

impl EmissionKind {
    /// `test` or `production`.
    pub fn as_str(self) -> &'static str {
        match self {
            EmissionKind::Test => "test",
            EmissionKind::Production => "production",
        }
    }
}

/// Why a document's `game` and `stake` fields name no emission ([`EmissionId::of_fields`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// The game is no game id (the value, escaped).
    #[error("game {0} is not a game id (lowercase letters, digits and '-', at most {MAX_ID_BYTES} bytes)")]
    Game(String),
    /// The stake is not a canonical amount (the value, escaped).
    #[error("stake {0} is not a canonical amount")]
    Stake(String),
}

impl FieldError {
    /// The document's field: `game` or `stake`.
    pub fn field(&self) -> &'static str {
        match self {
            FieldError::Game(_) => "game",
            FieldError::Stake(_) => "stake",
        }
    }
}

/// An emission: `<game>/<stake>/e<NNNN>` (e.g. `ruche-or/2/e0003`), which is also the path of
/// its folder under the output folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EmissionId {
    game: String,
    /// The ticket price, canonical (`2`, `0.5`): as folders and manifests write it.
    stake: String,
    stake_cents: u64,
    number: u32,
}

impl EmissionId {
    /// Emission `number` of a checked game id and stake.
    pub fn new(game_id: &str, stake: &Stake, number: u32) -> EmissionId {
        EmissionId {
            game: game_id.to_string(),
            stake: canonical(stake.price),
            stake_cents: stake.cents,
            number,
        }
    }

    /// The emission a document names (`game`, `stake`, `emission` fields), or `None` when the
    /// game id is not one a definition may have (lowercase letters, digits and `-`, at most
    /// [`MAX_ID_BYTES`] bytes) or the stake is not a canonical price in whole cents.
    pub fn from_fields(game: &str, stake: &str, number: u32) -> Option<EmissionId> {
        let game_ok = !game.is_empty()
            && game.len() <= MAX_ID_BYTES
            && game
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        let price = parse_canonical(stake)?;
        let stake_cents = cents(price).filter(|&c| c > 0)?;
        (game_ok && canonical(price) == stake).then(|| EmissionId {
            game: game.to_string(),
            stake: stake.to_string(),
            stake_cents,
            number,
        })
    }

    /// [`EmissionId::from_fields`] for a document being read: the field that names no
    /// emission is said (the game first), its value escaped.
    pub fn of_fields(game: &str, stake: &str, number: u32) -> Result<EmissionId, FieldError> {
        EmissionId::from_fields(game, stake, number).ok_or_else(|| {
            if EmissionId::from_fields(game, "1", number).is_none() {
                FieldError::Game(shown(game))
            } else {
                FieldError::Stake(shown(stake))
            }
        })
    }

    /// The emission whose folder `folder` is (its last three parts `<game>/<stake>/e<NNNN>`,
    /// as [`EmissionId::folder`] makes it), or `None`.
    pub fn of_folder(folder: &Path) -> Option<EmissionId> {
        let mut parts = folder.components().rev().map(|c| c.as_os_str().to_str());
        let (Some(Some(number)), Some(Some(stake)), Some(Some(game))) =
            (parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        format!("{game}/{stake}/{number}").parse().ok()
    }

    /// The game's id.
    pub fn game(&self) -> &str {
        &self.game
    }

    /// The ticket price, canonical (`2`, `0.5`).
    pub fn stake(&self) -> &str {
        &self.stake
    }

    /// The ticket price in cents, as serials write it.
    pub fn stake_cents(&self) -> u64 {
        self.stake_cents
    }

    /// The emission's number.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The emission's folder under `out`: `<out>/<game>/<stake>/e<NNNN>`.
    pub fn folder(&self, out: &Path) -> PathBuf {
        out.join(&self.game)
            .join(&self.stake)
            .join(self.folder_name())
    }

    /// The last part of the folder: `e<NNNN>`.
    pub fn folder_name(&self) -> String {
        format!("e{:04}", self.number)
    }

    /// The identity as one file-name part, `<game>-<stake>-e<NNNN>` (shares, private seeds).
    pub fn file_stem(&self) -> String {
        format!("{}-{}-e{:04}", self.game, self.stake, self.number)
    }

    /// Block `number` of this emission.
    pub fn block(&self, number: u32) -> BlockId {
        BlockId {
            emission: self.clone(),
            number,
        }
    }
}

/// How a message names the emission of a document's `game`, `stake` and `emission` fields,
/// whether they were checked or not: as [`EmissionId`] writes it, escaped and cut when the
/// fields are not an emission's.
pub fn emission_name(game: &str, stake: &str, number: u32) -> String {
    match EmissionId::from_fields(game, stake, number) {
        Some(id) => id.to_string(),
        None => format!(
            "{}/{}/e{number:04}",
            shown_text(game, SHOWN_CHARS),
            shown_text(stake, SHOWN_CHARS)
        ),
    }
}

/// A text an operator gave as an emission that is not one ([`EmissionId`]'s `from_str`): the
/// text, escaped and cut.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an emission: give GAME/STAKE/eNNNN, e.g. ruche-or/2/e0001")]
pub struct NotAnEmission(pub String);

/// `GAME/STAKE/eNNNN` as an operator gives it (`ruche-or/2/e0001`), the stake canonical as
/// folders write it: the emission's number is at least 1.
impl std::str::FromStr for EmissionId {
    type Err = NotAnEmission;

    fn from_str(text: &str) -> Result<Self, NotAnEmission> {
        let bad = || NotAnEmission(shown_text(text, SHOWN_CHARS));
        let mut parts = text.split('/');
        let (Some(game), Some(stake), Some(number), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let number = number
            .strip_prefix('e')
            .filter(|n| !n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&n| n >= 1)
            .ok_or_else(bad)?;
        EmissionId::from_fields(game, stake, number).ok_or_else(bad)
    }
}

/// For the tests of a document that names its emission by loose `game` and `stake` fields:
/// its pretty JSON `text` (holding `"game": "<game>"` and `"stake": "<stake>"`) with one of
/// them given a value that names no emission, and what the refusal must say.
#[cfg(test)]
pub(crate) fn bad_emission_fields(text: &str, game: &str, stake: &str) -> Vec<(String, String)> {
    let not_canonical = if stake.contains('.') {
        format!("{stake}0")
    } else {
        format!("{stake}.00")
    };
    [
        (
            format!("\"game\": \"{game}\""),
            "\"game\": \"../x\"".to_string(),
            "game \\'../x\\' is not a game id".to_string(),
        ),
        (
            format!("\"stake\": \"{stake}\""),
            format!("\"stake\": \"{not_canonical}\""),
            format!("stake \\'{not_canonical}\\' is not a canonical amount"),
        ),
    ]
    .into_iter()
    .map(|(from, to, said)| {
        let bad = text.replace(&from, &to);
        assert_ne!(bad, text, "{from} is not in the document");
        (bad, said)
    })
    .collect()
}

/// An [`EmissionId`] in a document as one text field, `<game>/<stake>/e<NNNN>` (a reshare's
/// custody file, a share set's description): `#[serde(with = "crate::block::id::as_text")]`.
/// A text that is no emission is refused as [`NotAnEmission`] says.
pub mod as_text {
    use super::EmissionId;

    /// Writes the emission as its name.
    pub fn serialize<S: serde::Serializer>(id: &EmissionId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    /// Reads a name, which must be an emission's.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<EmissionId, D::Error> {
        let text: String = serde::Deserialize::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for EmissionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/e{:04}", self.game, self.stake, self.number)
    }
}

/// A block of an emission: `<emission> block <NNNNN>` in messages.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId {
    emission: EmissionId,
    number: u32,
}

impl BlockId {
    /// The emission the block belongs to.
    pub fn emission(&self) -> &EmissionId {
        &self.emission
    }

    /// The block's number.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// `block-<NNNNN>.csv`.
    pub fn csv_name(&self) -> String {
        super::csv_name(self.number)
    }

    /// `block-<NNNNN>.manifest.json`.
    pub fn manifest_name(&self) -> String {
        super::manifest_name(self.number)
    }

    /// `block-<NNNNN>.manifest.json.sig`.
    pub fn signature_name(&self) -> String {
        super::signature_name(self.number)
    }

    /// The block's CSV under the output folder `out`.
    pub fn csv_path(&self, out: &Path) -> PathBuf {
        self.emission.folder(out).join(self.csv_name())
    }

    /// The part of a serial shared by every ticket of the block:
    /// `<game>-<stake cents>-<NNNN>-<NNNNN>-`. The ticket's index (7 digits) follows.
    pub fn serial_prefix(&self) -> String {
        format!(
            "{}-{}-{:04}-{:05}-",
            self.emission.game, self.emission.stake_cents, self.emission.number, self.number
        )
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} block {:05}", self.emission, self.number)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_emission_as_one_text_field_reads_back_to_the_same_bytes_and_refuses_what_is_none() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Doc {
            #[serde(with = "super::as_text")]
            emission: EmissionId,
        }
        let text = r#"{"emission":"ruche-or/0.5/e0003"}"#;
        let doc: Doc = serde_json::from_str(text).unwrap();
        assert_eq!(doc.emission.stake_cents(), 50);
        assert_eq!(serde_json::to_string(&doc).unwrap(), text);
        for bad in [
            "ruche-or/0.50/e0003",
            "../x/2/e0001",
            "Ruche/2/e0001",
            "ruche-or/2/e0000",
        ] {
            let e = serde_json::from_str::<Doc>(&format!(r#"{{"emission":"{bad}"}}"#))
                .err()
                .unwrap_or_else(|| panic!("{bad} read as an emission"));
            assert!(e.to_string().contains("is not an emission"), "{bad}: {e}");
        }
    }
    use super::*;
    use crate::game::Game;

    #[test]
    fn one_spelling_for_folders_files_serials_and_messages() {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = game.stakes.iter().find(|s| s.cents == 50).unwrap();
        let id = EmissionId::new(&game.id, stake, 3);
        assert_eq!(id.to_string(), "ruche-or/0.5/e0003");
        assert_eq!(
            id.folder(Path::new("out")),
            Path::new("out/ruche-or/0.5/e0003")
        );
        assert_eq!(id.file_stem(), "ruche-or-0.5-e0003");
        let block = id.block(12);
        assert_eq!(block.to_string(), "ruche-or/0.5/e0003 block 00012");
        assert_eq!(block.serial_prefix(), "ruche-or-50-0003-00012-");
        assert_eq!(
            block.csv_path(Path::new("out")),
            Path::new("out/ruche-or/0.5/e0003/block-00012.csv")
        );
        assert_eq!(block.manifest_name(), "block-00012.manifest.json");
        assert_eq!(block.signature_name(), "block-00012.manifest.json.sig");
        assert_eq!(
            EmissionId::of_folder(Path::new("/srv/out/ruche-or/0.5/e0003")),
            Some(id.clone())
        );
        assert_eq!(EmissionId::of_folder(Path::new("0.5/e0003")), None);
        assert_eq!(EmissionId::from_fields("ruche-or", "0.5", 3), Some(id));
    }

    #[test]
    fn a_document_cannot_name_a_folder_a_definition_could_not() {
        for (game, stake) in [
            ("../x", "2"),
            ("Ruche", "2"),
            ("", "2"),
            ("ruche-or", "2.00"),
            ("ruche-or", "0.001"),
            ("ruche-or", "0"),
            ("ruche-or", "-2"),
            ("ruche-or", "2/../.."),
        ] {
            assert_eq!(
                EmissionId::from_fields(game, stake, 1),
                None,
                "{game} {stake}"
            );
        }
        assert!(EmissionId::from_fields(&"a".repeat(MAX_ID_BYTES + 1), "2", 1).is_none());
        assert_eq!(emission_name("\u{1b}[2J", "2", 1), "\\u{1b}[2J/2/e0001");
    }

    #[test]
    fn an_operator_names_an_emission_as_its_folder() {
        let id: EmissionId = "ruche-or/2/e0001".parse().unwrap();
        assert_eq!(id.to_string(), "ruche-or/2/e0001");
        assert_eq!(id.stake_cents(), 200);
        let id: EmissionId = "x/2.5/e12".parse().unwrap();
        assert_eq!((id.stake_cents(), id.number()), (250, 12));
        for bad in [
            "ruche-or/2.50/e1",
            "ruche-or/2.0/e1",
            "a/0/e1",
            "a/2/e1/x",
            "ruche-or/2",
            "ruche-or/2/e0",
            "ruche-or/2/0001",
            "ruche-or/2/e",
            "ruche-or/x/e0001",
            "/2/e0001",
            "a/b/c/d",
            "ruche-or/2/e99999999999",
        ] {
            let e = bad.parse::<EmissionId>().unwrap_err().to_string();
            assert!(e.contains("is not an emission"), "{bad}: {e}");
        }
    }
}
