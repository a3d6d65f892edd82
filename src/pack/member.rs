//! The files of an emission pack, by name, and the one order they come in (docs/FORMAT.md,
//! "Emission pack"): the record, the seal, the log, the definition and the key first, then every
//! manifest, then every block's CSV. A reader that has read the first part knows what every CSV
//! must be (its size and SHA-256, from its manifest) before the first byte of it arrives, so it
//! can check a pack while streaming it; and two packs of one folder list the same members in
//! the same order.

use crate::block::{BlockFile, DEFINITION_FILE, PUBLIC_KEY_FILE};
use crate::emission::closing::{CLOSING_FILE, CLOSING_SIG_FILE};
use crate::emission::log::LOG_FILE;
use crate::emission::record::{RECORD_FILE, RECORD_SIG_FILE};
use crate::emission::seal::{SEAL_FILE, SEAL_SIG_FILE};

/// `emission.json.tsr`, the record's token ([`crate::emission::timestamp::token_path`]).
pub const RECORD_TOKEN_FILE: &str = "emission.json.tsr";
/// `emission.seal.json.tsr`, the seal's token.
pub const SEAL_TOKEN_FILE: &str = "emission.seal.json.tsr";

/// Most bytes of a CSV member, whatever its manifest says (a Maxi block is 1.5 GB).
pub const MAX_CSV_BYTES: u64 = 64 << 30;

/// Most reshare custody files (`emission.shares-<set>.json` and `.sig`) a pack holds.
pub const MAX_RESHARE_FILES: usize = 512;

/// One file of an emission folder that a pack carries.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Member {
    /// `emission.json`.
    Record,
    /// `emission.json.sig`.
    RecordSig,
    /// `emission.json.tsr`: the record's trusted timestamp, if it has one (RFC 3161: signed by
    /// the TSA over the record's SHA-256, so it authenticates itself).
    RecordToken,
    /// `emission.seal.json`.
    Seal,
    /// `emission.seal.json.sig`.
    SealSig,
    /// `emission.seal.json.tsr`: the seal's trusted timestamp, if it has one.
    SealToken,
    /// `emission.log.jsonl`.
    Log,
    /// `emission.game.toml`.
    Definition,
    /// `emission.pub.pem`.
    PublicKey,
    /// `emission.shares-<set>.json` or its `.sig` (the name).
    Reshare(String),
    /// `withdrawal-NNNN.json`, then its `.sig` (`true`): a signed withdrawal from sale, made
    /// after the seal (`withdraw`), which `load` applies.
    Withdrawal(u32, bool),
    /// `emission.closing.json`, then its `.sig` (`true`): the signed final reconciliation
    /// `close` writes once sales end.
    Closing(bool),
    /// `block-NNNNN.manifest.json`, then its `.sig` (`true`).
    Manifest(u32, bool),
    /// `block-NNNNN.csv`, exactly: the form of packs made before the lines form (still read).
    Csv(u32),
    /// `block-NNNNN.lines.csv`: block NNNNN's CSV without its `sha256` column
    /// ([`super::lines`]), the form `pack` writes; it is never a file of a folder.
    Lines(u32),
}

impl Member {
    /// The member a file name of an emission folder is, if a pack carries it. Files starting
    /// with `.` (locks, temporary files) are never members; anything else not listed is not
    /// part of an emission.
    pub fn of_name(name: &str) -> Option<Member> {
        Some(match name {
            RECORD_FILE => Member::Record,
            RECORD_SIG_FILE => Member::RecordSig,
            RECORD_TOKEN_FILE => Member::RecordToken,
            SEAL_FILE => Member::Seal,
            SEAL_SIG_FILE => Member::SealSig,
            SEAL_TOKEN_FILE => Member::SealToken,
            CLOSING_FILE => Member::Closing(false),
            CLOSING_SIG_FILE => Member::Closing(true),
            LOG_FILE => Member::Log,
            DEFINITION_FILE => Member::Definition,
            PUBLIC_KEY_FILE => Member::PublicKey,
            _ => {
                if let Some(set) = name.strip_prefix("emission.shares-").and_then(|rest| {
                    rest.strip_suffix(".json.sig")
                        .or(rest.strip_suffix(".json"))
                }) {
                    let ok = !set.is_empty()
                        && set.len() <= 64
                        && set
                            .bytes()
                            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                    return ok.then(|| Member::Reshare(name.to_string()));
                }
                if let Some(rest) = name.strip_prefix("withdrawal-") {
                    let (digits, signed) = match rest.strip_suffix(".json.sig") {
                        Some(d) => (d, true),
                        None => (rest.strip_suffix(".json")?, false),
                    };
                    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    let n: u32 = digits.parse().ok().filter(|&n| n >= 1)?;
                    return Some(Member::Withdrawal(n, signed));
                }
                match crate::block::parse_file_name(name)? {
                    (0, _) => return None,
                    (block, BlockFile::Csv) => Member::Csv(block),
                    (block, BlockFile::Lines) => Member::Lines(block),
                    (block, BlockFile::Manifest) => Member::Manifest(block, false),
                    (block, BlockFile::Signature) => Member::Manifest(block, true),
                }
            }
        })
    }

    /// The file's name in the emission folder.
    pub fn name(&self) -> String {
        match self {
            Member::Record => RECORD_FILE.into(),
            Member::RecordSig => RECORD_SIG_FILE.into(),
            Member::RecordToken => RECORD_TOKEN_FILE.into(),
            Member::Seal => SEAL_FILE.into(),
            Member::SealSig => SEAL_SIG_FILE.into(),
            Member::SealToken => SEAL_TOKEN_FILE.into(),
            Member::Closing(false) => CLOSING_FILE.into(),
            Member::Closing(true) => CLOSING_SIG_FILE.into(),
            Member::Log => LOG_FILE.into(),
            Member::Definition => DEFINITION_FILE.into(),
            Member::PublicKey => PUBLIC_KEY_FILE.into(),
            Member::Reshare(name) => name.clone(),
            Member::Withdrawal(n, false) => crate::emission::withdrawal::file_name(*n),
            Member::Withdrawal(n, true) => {
                format!("{}.sig", crate::emission::withdrawal::file_name(*n))
            }
            Member::Manifest(block, false) => crate::block::manifest_name(*block),
            Member::Manifest(block, true) => crate::block::signature_name(*block),
            Member::Csv(block) => crate::block::csv_name(*block),
            Member::Lines(block) => crate::block::lines_name(*block),
        }
    }

    /// Most bytes the member may hold (a CSV: see [`MAX_CSV_BYTES`] and its manifest); the
    /// limits of the readers of each file.
    pub fn limit(&self) -> u64 {
        match self {
            Member::RecordSig
            | Member::SealSig
            | Member::Manifest(_, true)
            | Member::Withdrawal(_, true)
            | Member::Closing(true) => 64,
            Member::Closing(false) => crate::emission::closing::MAX_CLOSING_BYTES,
            Member::RecordToken | Member::SealToken => crate::emission::timestamp::MAX_TOKEN_BYTES,
            Member::Withdrawal(_, false) => crate::emission::withdrawal::MAX_WITHDRAWAL_BYTES,
            Member::Record | Member::Reshare(_) => 1 << 20,
            Member::Seal => 64 << 20,
            Member::Log => 256 << 20,
            Member::Definition => crate::game::MAX_DEFINITION_BYTES,
            Member::PublicKey => crate::block::keys::MAX_PEM_BYTES,
            Member::Manifest(_, false) => crate::block::manifest::MAX_MANIFEST_BYTES,
            Member::Csv(_) | Member::Lines(_) => MAX_CSV_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_members_and_back_and_sort_in_the_pack_order() {
        let names = [
            "block-00002.csv",
            "block-00001.csv",
            "block-00002.lines.csv",
            "block-00001.lines.csv",
            "block-00002.manifest.json.sig",
            "block-00001.manifest.json",
            "emission.pub.pem",
            "emission.shares-0a1b.json",
            "withdrawal-0002.json.sig",
            "withdrawal-0002.json",
            "emission.closing.json.sig",
            "emission.closing.json",
            "emission.seal.json.tsr",
            "emission.json.tsr",
            "emission.game.toml",
            "emission.log.jsonl",
            "emission.seal.json.sig",
            "emission.seal.json",
            "emission.json.sig",
            "emission.json",
        ];
        let mut members: Vec<Member> = names.iter().map(|n| Member::of_name(n).unwrap()).collect();
        for (m, n) in members.iter().zip(names) {
            assert_eq!(m.name(), n);
        }
        members.sort();
        let sorted: Vec<String> = members.iter().map(Member::name).collect();
        assert_eq!(
            sorted,
            [
                "emission.json",
                "emission.json.sig",
                "emission.json.tsr",
                "emission.seal.json",
                "emission.seal.json.sig",
                "emission.seal.json.tsr",
                "emission.log.jsonl",
                "emission.game.toml",
                "emission.pub.pem",
                "emission.shares-0a1b.json",
                "withdrawal-0002.json",
                "withdrawal-0002.json.sig",
                "emission.closing.json",
                "emission.closing.json.sig",
                "block-00001.manifest.json",
                "block-00002.manifest.json.sig",
                "block-00001.csv",
                "block-00002.csv",
                "block-00001.lines.csv",
                "block-00002.lines.csv",
            ]
        );
    }

    #[test]
    fn other_names_are_not_members() {
        for name in [
            ".emission.lock",
            ".block-00001.csv.abc.tmp",
            "block-00000.csv",
            "block-1.csv",
            "block-0000a.csv",
            "block-00001.csv.bak",
            "block-00001.lines",
            "block-00001.lines.csv.tmp",
            "emission.shares-.json",
            "emission.shares-XYZ.json",
            "withdrawal-0000.json",
            "withdrawal-12.json",
            "emission.json.tsq",
            "README",
            "",
        ] {
            assert_eq!(Member::of_name(name), None, "{name}");
        }
    }
}
