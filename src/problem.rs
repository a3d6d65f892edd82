//! What verification finds wrong, typed: a [`Problem`] is a stable [`Code`] (what
//! `verify --json` and `report --json` give a program to act on), the message a person reads
//! (the one `verify` prints), and its place (the file, and the line and serial of a ticket
//! line). Every code is listed, with what it means and what to do, in docs/FORMAT.md
//! ("Problem codes"); a unit test keeps the two the same.
//!
//! A code names a rule, not a message: messages may be reworded, codes are never renamed nor
//! given another meaning (a new rule gets a new code).

use serde::Serialize;
use std::fmt;

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// The rule a problem breaks: its stable name in the JSON outputs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of the table in docs/FORMAT.md.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as the JSON outputs write it: `area.rule`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    // The block file and its manifest.
    /// The file is not named `block-NNNNN.csv`.
    BlockName = "block.name",
    /// The manifest is larger than a manifest can be.
    ManifestTooLarge = "manifest.too_large",
    /// The manifest cannot be read (missing, not a regular file, I/O).
    ManifestUnreadable = "manifest.unreadable",
    /// The manifest is not a manifest (JSON, fields, bytes not canonical).
    ManifestInvalid = "manifest.invalid",
    /// A manifest format this program does not read.
    ManifestFormat = "manifest.format",
    /// The manifest's `public_key_sha256` is not the fingerprint of the key verified with.
    ManifestKey = "manifest.key",
    /// The manifest is for another game than the definition checked against.
    ManifestGame = "manifest.game",
    /// `game_definition_sha256` is not the definition's.
    ManifestDefinition = "manifest.definition_sha256",
    /// The stake is not a canonical amount.
    ManifestStake = "manifest.stake",
    /// The game has no such stake.
    ManifestStakeUnknown = "manifest.stake_unknown",
    /// The manifest's block number is not the file name's.
    ManifestBlock = "manifest.block",
    /// The manifest describes another CSV file.
    ManifestFile = "manifest.file",
    /// The manifest's prize list is not Article 3's.
    ManifestPrizes = "manifest.prizes",
    /// The manifest's winners are not Article 3's.
    ManifestWinners = "manifest.winners",
    /// The manifest states a CSV larger than a block of the game can be.
    ManifestSize = "manifest.size",
    // The signature.
    /// The emission's own key cannot be read to check the signature.
    SignatureKey = "signature.key",
    /// The signature file is larger than a signature.
    SignatureTooLarge = "signature.too_large",
    /// The signature file cannot be read.
    SignatureUnreadable = "signature.unreadable",
    /// The signature is not the key's signature of the manifest's bytes.
    SignatureInvalid = "signature.invalid",
    // The game definition.
    /// The emission folder's copy of its definition cannot be read.
    DefinitionUnreadable = "definition.unreadable",
    /// The emission folder's copy of its definition is not the one the manifest names.
    DefinitionChanged = "definition.changed",
    /// The emission folder's copy of its definition is not a valid definition.
    DefinitionInvalid = "definition.invalid",
    /// No definition: the game is not built in and none was given.
    DefinitionUnknown = "definition.unknown",
    /// The game's mechanic cannot read this stake. No longer raised (every mechanic reads
    /// every stake of a definition that loaded): kept, as codes are stable.
    DefinitionMechanic = "definition.mechanic",
    // The block's place.
    /// The folders holding the block cannot be told.
    PlaceUnknown = "place.unknown",
    /// The block is not in `<game>/<stake>/e<emission>/` of its manifest.
    PlaceFolder = "place.folder",
    // The CSV file as a whole.
    /// The CSV cannot be read.
    FileUnreadable = "file.unreadable",
    /// The CSV is larger than its manifest says.
    FileTooLarge = "file.too_large",
    /// A line far longer than any ticket line: the rest of the file was not read.
    FileLongLine = "file.long_line",
    /// The CSV is empty.
    FileEmpty = "file.empty",
    /// The last line has no line end.
    FileUnterminated = "file.unterminated",
    /// The first line is not the header.
    FileHeader = "file.header",
    /// A check of the program's own failed (a bug, not the file).
    Internal = "internal",
    // The block as a whole.
    /// The ticket lines are not a block of the game.
    BlockTickets = "block.tickets",
    /// The ticket lines are not as many as the manifest says.
    BlockTicketsManifest = "block.tickets_manifest",
    /// The tickets of a prize are not as many as Article 3 says.
    BlockPrizeCount = "block.prize_count",
    /// The prizes do not add up to the manifest's and Article 3's total.
    BlockTotal = "block.total",
    /// The CSV's size is not the manifest's.
    BlockBytes = "block.bytes",
    /// The CSV's SHA-256 is not the manifest's.
    BlockSha256 = "block.sha256",
    /// The Merkle root of the tickets is not the manifest's.
    BlockMerkleRoot = "block.merkle_root",
    // One ticket line.
    /// The line is longer than any ticket line of the game.
    LineTooLong = "line.too_long",
    /// A line beyond the tickets a block holds.
    LineExtra = "line.extra",
    /// The line has not four fields.
    LineFields = "line.fields",
    /// The serial is not the one expected at this line.
    LineSerial = "line.serial",
    /// The prize column is not a prize of the stake.
    LinePrize = "line.prize",
    /// The sha256 field is not the SHA-256 of the line.
    LineHash = "line.hash",
    /// The layout is not UTF-8.
    LineLayoutUtf8 = "line.layout_utf8",
    /// The layout breaks the game's rules.
    LineLayout = "line.layout",
    /// The layout wins another prize than the prize column says.
    LineLayoutPrize = "line.layout_prize",
    // The replay from the seed.
    /// The seed's commitment is not the manifest's.
    ReplaySeed = "replay.seed",
    /// The block was made by another generator: it cannot be replayed.
    ReplayGenerator = "replay.generator",
    /// The game cannot synthesize this stake.
    ReplaySynthesizer = "replay.synthesizer",
    /// The beacon round does not give the blocks' seed.
    ReplayBeacon = "replay.beacon",
    /// The seed draws no ticket at this line.
    ReplayNoTicket = "replay.no_ticket",
    /// The seed draws another prize for this ticket.
    ReplayPrize = "replay.prize",
    /// The seed makes another layout for this ticket.
    ReplayLayout = "replay.layout",
    /// The seed's layout cannot be made.
    ReplayLayoutUnmade = "replay.layout_unmade",
    // The emission folder.
    /// No emission record.
    EmissionRecordMissing = "emission.record_missing",
    /// The record cannot be read, is not valid, or its signature fails.
    EmissionRecord = "emission.record",
    /// The record's SHA-256 is not the one pinned with `--record-sha256`.
    EmissionRecordPin = "emission.record_pin",
    /// The record names the emission's copy of its definition, and it is not there.
    EmissionDefinitionMissing = "emission.definition_missing",
    /// The emission's copy of its definition cannot be read, or is not the one the record names.
    EmissionDefinition = "emission.definition",
    /// `emission.pub.pem` cannot be read.
    EmissionKey = "emission.key",
    /// `emission.pub.pem` is not the key the record names.
    EmissionKeyReplaced = "emission.key_replaced",
    /// `emission.pub.pem` is not the key given with `--public-key`.
    EmissionKeyNotGiven = "emission.key_not_given",
    /// A trusted timestamp fails its checks, or is missing where one is named.
    EmissionTimestamp = "emission.timestamp",
    /// The beacon round the record names was published before the record's trusted time.
    EmissionBeaconTooEarly = "emission.beacon_too_early",
    /// The closing reconciliation (emission.closing.json) or the log line that records it
    /// fails its checks, or one is missing where the other says it exists.
    EmissionClosing = "emission.closing",
    /// The emission folder cannot be listed.
    EmissionFolder = "emission.folder",
    /// A block's manifest cannot be read.
    EmissionManifest = "emission.manifest",
    /// A block's manifest names another emission than the record.
    EmissionForeignBlock = "emission.foreign_block",
    /// The audit log cannot be read, or its chain or signatures fail.
    EmissionLog = "emission.log",
    /// The record is there and the audit log holds no signed line (deleted or emptied).
    EmissionLogMissing = "emission.log_missing",
    /// The audit log is not the one sealed.
    EmissionLogChanged = "emission.log_changed",
    /// A block's CSV is missing beside its manifest, or a block the log says was made is gone.
    EmissionBlockMissing = "emission.block_missing",
    /// A withdrawal record fails its signature, is another emission's, is not the one the log
    /// records, or one the log records is missing.
    EmissionWithdrawal = "emission.withdrawal",
    /// A reshare's custody file fails its signature, is another emission's, is not the one
    /// the log names, or one the log names is missing.
    EmissionCustody = "emission.custody",
    /// A block of the emission failed (listed with the blocks).
    EmissionBlockFailed = "emission.block_failed",
    /// The seal is missing where something says it was made.
    EmissionSealMissing = "emission.seal_missing",
    /// Every planned block is present, and the emission is not sealed.
    EmissionUnsealed = "emission.unsealed",
    /// The seal cannot be read, is not valid, or its signature fails.
    EmissionSeal = "emission.seal",
    /// The seal's SHA-256 is not the one pinned with `--seal-sha256`.
    EmissionSealPin = "emission.seal_pin",
    /// The seal was made for another record.
    EmissionSealRecord = "emission.seal_record",
    /// The seal's game, stake, emission, kind or hashes are not the record's.
    EmissionSealIdentity = "emission.seal_identity",
    /// The seal's block list is out of order, repeats a block, or is not the planned blocks.
    EmissionSealBlocks = "emission.seal_blocks",
    /// The seal's counts or totals are not its blocks'.
    EmissionSealCounts = "emission.seal_counts",
    /// The seal's date is not a date, or is before the record or to come.
    EmissionSealDate = "emission.seal_date",
    /// Blocks the seal lists are missing.
    EmissionSealedMissing = "emission.sealed_missing",
    /// Blocks present that the seal does not list.
    EmissionNotSealed = "emission.not_sealed",
    /// A block's manifest is not the one sealed.
    EmissionManifestChanged = "emission.manifest_changed",
    // The emission pack.
    /// The pack's own trusted timestamp (`PACK.tsr`, `--pack-token`) is missing where it was
    /// asked for, cannot be read, or does not verify over the pack's bytes with a TSA
    /// certificate given.
    PackTimestamp = "pack.timestamp",
    // The audit report.
    /// More problems were found in the block than are listed.
    ReportUnlisted = "report.unlisted",
    /// The problems of a failed block, counted in a public report (they name ticket lines).
    ReportRedacted = "report.redacted",
    /// Blocks read under one emission number were made under different emissions.
    ReportMixedEmission = "report.mixed_emission",
    /// The seal's signature cannot be checked (no key).
    ReportSealKey = "report.seal_key",
    /// The seal does not seal the blocks read.
    ReportSealBlocks = "report.seal_blocks",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One thing found wrong: its code, its message and its place.
///
/// As JSON: `{"code", "message"}`, with `file` when it names a file, `line` and `serial` for a
/// ticket line, and `codes` (every rule the line breaks, `code` first) for a ticket line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The rule broken (a ticket line breaking several: the first).
    pub code: Code,
    /// What `verify` prints: names the file, and the line and serial where it applies.
    pub message: String,
    /// The file the problem is in, as the message names it (escaped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line of the file (from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The serial expected at that line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// A ticket line: every rule it breaks, in the order of the message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<Code>,
}

impl Problem {
    /// A problem without a place beyond what its message says.
    pub fn new(code: Code, message: impl Into<String>) -> Problem {
        Problem {
            code,
            message: message.into(),
            file: None,
            line: None,
            serial: None,
            codes: Vec::new(),
        }
    }

    /// A problem in the file shown as `file` (already escaped).
    pub fn in_file(code: Code, file: &str, message: impl Into<String>) -> Problem {
        Problem {
            file: Some(file.to_string()),
            ..Problem::new(code, message)
        }
    }

    /// A problem at `line` of `file`.
    pub fn at_line(code: Code, file: &str, line: u64, message: impl Into<String>) -> Problem {
        Problem {
            line: Some(line),
            ..Problem::in_file(code, file, message)
        }
    }

    /// The problem of a ticket line at `line` of `file` (shown; `None` for a line checked
    /// alone), expected to hold `serial`, breaking every rule of `faults` (at least one): the
    /// message is `FILE line N (SERIAL): FAULT; FAULT` (`line N (SERIAL): ...` without a file).
    pub fn ticket_line(file: Option<&str>, line: u64, serial: String, faults: &[Fault]) -> Problem {
        let texts: Vec<&str> = faults.iter().map(|f| f.text.as_str()).collect();
        let place = match file {
            Some(file) => format!("{file} line {line}"),
            None => format!("line {line}"),
        };
        Problem {
            code: faults.first().map_or(Code::Internal, |f| f.code),
            message: format!("{place} ({serial}): {}", texts.join("; ")),
            file: file.map(str::to_string),
            line: Some(line),
            serial: Some(serial),
            codes: faults.iter().map(|f| f.code).collect(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One rule a ticket line breaks: its code and the words that say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The rule.
    pub code: Code,
    /// The words, without the line's place.
    pub text: String,
}

impl Fault {
    /// A rule broken, said in `text`.
    pub fn new(code: Code, text: impl Into<String>) -> Fault {
        Fault {
            code,
            text: text.into(),
        }
    }
}

/// The messages of `problems`, joined by `separator`.
pub fn joined(problems: &[Problem], separator: &str) -> String {
    let texts: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    texts.join(separator)
}

/// The messages of `problems`.
pub fn messages(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(|p| p.message.clone()).collect()
}

/// An error and its causes as the program prints an error (anyhow's `{:#}`): its message, then
/// each cause's, after `: `. `{:#}` shows the causes of an `anyhow::Error` only; this shows
/// those of any error, for a message that holds another error's whole text.
pub fn chained(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The codes of the table under "Problem codes" in docs/FORMAT.md: its rows' first cells.
    fn documented() -> Vec<String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/FORMAT.md");
        let text = std::fs::read_to_string(path).unwrap();
        let start = text
            .find("\n### Problem codes\n")
            .expect("docs/FORMAT.md has a section ### Problem codes");
        // The section's table: from its header row to the first line that is not a row.
        text[start + 1..]
            .lines()
            .skip_while(|l| !l.starts_with("| code |"))
            .take_while(|l| l.starts_with('|'))
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once('`'))
            .map(|(code, _)| code.to_string())
            .collect()
    }

    #[test]
    fn the_format_documents_exactly_the_codes() {
        let documented = documented();
        let listed: Vec<String> = Code::ALL.iter().map(|c| c.as_str().to_string()).collect();
        let doc_set: BTreeSet<&String> = documented.iter().collect();
        let code_set: BTreeSet<&String> = listed.iter().collect();
        let undocumented: Vec<_> = code_set.difference(&doc_set).collect();
        let unknown: Vec<_> = doc_set.difference(&code_set).collect();
        assert!(
            undocumented.is_empty() && unknown.is_empty(),
            "docs/FORMAT.md, Problem codes: codes without a line: {undocumented:?}; lines of no code: {unknown:?}"
        );
        assert_eq!(documented.len(), doc_set.len(), "a code documented twice");
        assert_eq!(documented, listed, "the table is not in the enum's order");
    }

    #[test]
    fn codes_are_distinct_and_spelt_area_dot_rule() {
        let set: BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(set.len(), Code::ALL.len(), "two variants share a code");
        for code in Code::ALL {
            let text = code.as_str();
            assert!(
                text.bytes().all(|b| b.is_ascii_lowercase()
                    || b == b'.'
                    || b == b'_'
                    || b.is_ascii_digit())
                    && !text.starts_with('.')
                    && !text.ends_with('.'),
                "{text}"
            );
        }
    }

    #[test]
    fn a_ticket_line_problem_keeps_the_message_and_every_code() {
        let p = Problem::ticket_line(
            Some("b/block-00001.csv"),
            7,
            "S-0000005".into(),
            &[
                Fault::new(Code::LineSerial, "serial 'x' where S-0000005 was expected"),
                Fault::new(Code::LineHash, "sha256 'y' is not the SHA-256"),
            ],
        );
        assert_eq!(
            p.message,
            "b/block-00001.csv line 7 (S-0000005): serial 'x' where S-0000005 was expected; sha256 'y' is not the SHA-256"
        );
        assert_eq!(p.code, Code::LineSerial);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["code"], "line.serial");
        assert_eq!(
            json["codes"],
            serde_json::json!(["line.serial", "line.hash"])
        );
        assert_eq!(json["line"], 7);
        assert_eq!(json["serial"], "S-0000005");
        let plain =
            serde_json::to_value(Problem::new(Code::FileEmpty, "f: the file is empty")).unwrap();
        assert_eq!(
            plain,
            serde_json::json!({"code": "file.empty", "message": "f: the file is empty"})
        );
    }

    /// [`chained`] says what anyhow's `{:#}` says of the same error.
    #[test]
    fn an_error_is_chained_as_the_program_prints_it() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot read b.csv")]
        struct Outer(#[source] std::io::Error);
        let error = Outer(std::io::Error::other("disk on fire"));
        assert_eq!(chained(&error), "cannot read b.csv: disk on fire");
        assert_eq!(chained(&error), format!("{:#}", anyhow::Error::new(error)));
        assert_eq!(chained(&std::io::Error::other("alone")), "alone");
    }
}
