//! The manifest and its signature: the Ed25519 signature of the manifest's exact bytes, the
//! key's fingerprint, the manifest's own fields against the game definition and Article 3, and
//! the folder the block sits in.

use super::{expected_prizes, BlockReport, Stopped, VerifyOptions};
use crate::block::manifest::{Manifest, PrizeCount, FORMAT, FORMATS_READ, FORMAT_1};
use crate::block::{self, keys};
use crate::fs::open::{read_at_most, ReadError};
use crate::game::{Game, Stake};
use crate::money::{canonical, from_cents};
use crate::problem::{Code, Problem};
use crate::untrusted::{shown, shown_path};
use ed25519_dalek::VerifyingKey;
use std::path::Path;

/// Checks the signature of the manifest bytes and the key's fingerprint in them.
pub(super) fn check_signature(
    report: &mut BlockReport,
    dir: &Path,
    number: u32,
    manifest_bytes: &[u8],
    manifest: Option<&Manifest>,
    options: &VerifyOptions,
) {
    let signature_path = dir.join(block::signature_name(number));
    let sig_name = shown_path(&signature_path);
    let key = match options.public_key {
        Some(key) => key,
        None => {
            let path = dir.join(block::PUBLIC_KEY_FILE);
            match keys::read_public_key(&path) {
                Ok(key) => {
                    report.warnings.push(format!(
                        "signatures checked against the emission's own key {}: this proves the files are intact, not who made them; give --public-key with the key you trust",
                        shown_path(&path)
                    ));
                    key
                }
                Err(e) => {
                    report.problem(Problem::in_file(
                        Code::SignatureKey,
                        &sig_name,
                        format!("{sig_name}: {}", crate::problem::chained(&e)),
                    ));
                    return;
                }
            }
        }
    };
    let signature = match read_at_most(&signature_path, keys::SIGNATURE_BYTES, "a signature") {
        Ok(sig) => Some(sig),
        Err(e @ ReadError::TooLarge { .. }) => {
            report.problem(Problem::in_file(
                Code::SignatureTooLarge,
                &sig_name,
                format!("{sig_name}: {e}"),
            ));
            None
        }
        Err(e) => {
            report.problem(Problem::in_file(
                Code::SignatureUnreadable,
                &sig_name,
                format!("{sig_name}: cannot read: {e}"),
            ));
            None
        }
    };
    let checked = check_signed(&key, manifest_bytes, signature.as_deref(), manifest);
    if let (Some(_), Err(m)) = (&signature, checked.signature) {
        report.problem(Problem::in_file(
            Code::SignatureInvalid,
            &sig_name,
            format!("{sig_name}: {m}"),
        ));
    }
    if let Err(m) = checked.fingerprint {
        let manifest_name = shown_path(&dir.join(block::manifest_name(number)));
        report.problem(Problem::in_file(
            Code::ManifestKey,
            &manifest_name,
            format!("{manifest_name}: {m}"),
        ));
    }
}

/// The verdict of [`check_signed`]: on the signature, and on the key the manifest names.
#[derive(Debug)]
pub struct SignatureCheck {
    /// The signature is the key's signature of the manifest's exact bytes.
    pub signature: Result<(), keys::SignatureError>,
    /// The manifest's `public_key_sha256` names that key.
    pub fingerprint: Result<(), FingerprintError>,
}

/// Why the manifest does not name the key it is verified with.
#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    /// `public_key_sha256` is another key's.
    #[error("public_key_sha256 does not match the public key used to verify")]
    Mismatch,
    /// The key's fingerprint cannot be made.
    #[error("{0}")]
    Key(String),
}

/// The signature check of a block, as `verify` makes it and as a ticket proof repeats it:
/// `signature` (when it could be read) is the raw Ed25519 signature of `manifest_bytes` by
/// `key`, and the manifest (when it parses) names that key in `public_key_sha256`.
pub fn check_signed(
    key: &VerifyingKey,
    manifest_bytes: &[u8],
    signature: Option<&[u8]>,
    manifest: Option<&Manifest>,
) -> SignatureCheck {
    let signature = match signature {
        Some(sig) => keys::check(key, manifest_bytes, sig),
        None => Err(keys::SignatureError::Missing),
    };
    let fingerprint = match (keys::public_key_sha256(key), manifest) {
        (Ok(fingerprint), Some(manifest))
            if hex::encode(fingerprint) != manifest.public_key_sha256 =>
        {
            Err(FingerprintError::Mismatch)
        }
        (Err(e), _) => Err(FingerprintError::Key(format!("{e:#}"))),
        _ => Ok(()),
    };
    SignatureCheck {
        signature,
        fingerprint,
    }
}

/// Checks the manifest's own fields; returns the game and stake to check the tickets against.
pub(super) fn check_manifest(
    report: &mut BlockReport,
    path: &Path,
    manifest: &Manifest,
    number: u32,
    csv: &Path,
    options: &VerifyOptions,
) -> Result<(Game, Stake), Stopped> {
    let name = shown_path(path);
    if !FORMATS_READ.contains(&manifest.format) {
        return Err(report.stop(Problem::in_file(
            Code::ManifestFormat,
            &name,
            format!(
                "{name}: format {} is not one this program reads (it reads formats {FORMAT_1} to {FORMAT})",
                manifest.format
            ),
        )));
    }
    // Without --game: the emission folder's copy of its definition (checked against the
    // manifest's hash), else the built-in game of that id.
    let game = match &options.game {
        Some(g) => g.clone(),
        None => {
            match super::folder_definition(super::folder_of(csv), &manifest.game_definition_sha256)
            {
                Ok(Some(g)) => g,
                Ok(None) => Game::builtin(manifest.emission().game()).map_err(|e| {
                    report.stop(Problem::in_file(
                        Code::DefinitionUnknown,
                        &name,
                        format!("{name}: {e}; give --game with its definition"),
                    ))
                })?,
                Err(e) => return Err(report.stop(Problem::new(e.code(), e.to_string()))),
            }
        }
    };
    if game.id != manifest.emission().game() {
        return Err(report.stop(Problem::in_file(
            Code::ManifestGame,
            &name,
            format!(
                "{name}: the manifest is for game {}, the definition given is '{}'",
                shown(manifest.emission().game()),
                game.id
            ),
        )));
    }
    if hex::encode(game.sha256) != manifest.game_definition_sha256 {
        let text = format!(
            "{name}: game_definition_sha256 {} is not the SHA-256 of the definition checked against ({}, {}); give --game with the definition used",
            shown(&manifest.game_definition_sha256),
            game.source,
            hex::encode(game.sha256)
        );
        report.problem(Problem::in_file(Code::ManifestDefinition, &name, text));
    }
    // The stake was read as a canonical price in whole cents (the manifest's EmissionId,
    // `manifest.stake` otherwise).
    let price = from_cents(manifest.emission().stake_cents());
    let stake = game
        .stake(price)
        .map_err(|e| {
            report.stop(Problem::in_file(
                Code::ManifestStakeUnknown,
                &name,
                format!("{name}: {e}"),
            ))
        })?
        .clone();
    if manifest.id.number() != number {
        let text = format!(
            "{name}: the manifest is for block {}, the file name says {number}",
            manifest.id.number()
        );
        report.problem(Problem::in_file(Code::ManifestBlock, &name, text));
    }
    let file = csv.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if manifest.csv.file != file {
        let text = format!(
            "{name}: the manifest describes {}, not {}",
            shown(&manifest.csv.file),
            shown(file)
        );
        report.problem(Problem::in_file(Code::ManifestFile, &name, text));
    }
    let expected: Vec<PrizeCount> = expected_prizes(&game, &stake)
        .iter()
        .map(|p| PrizeCount {
            amount: canonical(p.amount),
            count: p.count,
        })
        .collect();
    if manifest.prizes != expected {
        let text = format!(
            "{name}: the prize list differs from Article 3 for a {} € block",
            canonical(stake.price)
        );
        report.problem(Problem::in_file(Code::ManifestPrizes, &name, text));
    }
    if manifest.winners != stake.winners {
        let text = format!(
            "{name}: {} winners, Article 3 says {}",
            manifest.winners, stake.winners
        );
        report.problem(Problem::in_file(Code::ManifestWinners, &name, text));
    }
    check_place(report, path, manifest, csv);
    Ok((game, stake))
}

/// Checks that the block sits where its coordinates say (FORMAT.md, "Folder"):
/// `<game>/<stake>/e<emission:04>/block-<block:05>.csv`. A validly signed block copied into
/// another emission's folder must not pass for one of that emission. The folders are named
/// as the path given names them (symbolic links are not followed: the place is the one the
/// block is found at).
fn check_place(report: &mut BlockReport, path: &Path, manifest: &Manifest, csv: &Path) {
    let name = shown_path(path);
    let folders = match place(csv) {
        Ok(folders) => folders,
        Err(e) => {
            report.problem(Problem::in_file(
                Code::PlaceUnknown,
                &name,
                format!("{name}: cannot tell which folders hold the block ({e})"),
            ));
            return;
        }
    };
    // Innermost first, as `place` gives them.
    let expected = [
        (
            "emission",
            manifest.emission().number().to_string(),
            manifest.emission().folder_name(),
        ),
        (
            "stake",
            manifest.emission().stake().to_string(),
            manifest.emission().stake().to_string(),
        ),
        (
            "game",
            manifest.emission().game().to_string(),
            manifest.emission().game().to_string(),
        ),
    ];
    for ((what, value, folder), found) in expected.iter().zip(folders) {
        if found.as_deref() != Some(std::ffi::OsStr::new(folder)) {
            let found = match &found {
                Some(f) => format!("folder {}", shown(f.as_encoded_bytes())),
                None => "no folder".to_string(),
            };
            report.problem(Problem::in_file(
                Code::PlaceFolder,
                &name,
                format!(
                    "{name}: the manifest is for {what} {value} (folder {folder}), but the block is in {found}: a block stays in <game>/<stake>/e<emission>/"
                ),
            ));
        }
    }
}

/// The names of the three folders above `csv`, innermost first (`None` above the root), read
/// from the path as given made absolute, `..` taken lexically.
fn place(csv: &Path) -> std::io::Result<[Option<std::ffi::OsString>; 3]> {
    use std::path::Component;
    let absolute = std::path::absolute(csv)?;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in absolute.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    parts.pop(); // the file itself
    let mut folders = parts.iter().rev().map(|p| Some(p.to_os_string()));
    Ok([
        folders.next().flatten(),
        folders.next().flatten(),
        folders.next().flatten(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_of_a_block_is_read_from_its_path() {
        let names = |p: &str| {
            place(Path::new(p))
                .unwrap()
                .map(|n| n.map(|n| n.to_string_lossy().into_owned()))
        };
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            names("/out/ruche-or/0.5/e0003/block-00001.csv"),
            [some("e0003"), some("0.5"), some("ruche-or")]
        );
        // `..` and `.` are taken as written; a symbolic link is not followed.
        assert_eq!(
            names("/out/ruche-or/2/x/../e0001/./block-00001.csv"),
            [some("e0001"), some("2"), some("ruche-or")]
        );
        assert_eq!(names("/e0001/block-00001.csv"), [some("e0001"), None, None]);
        // A relative path is taken from the current folder.
        let here = std::env::current_dir().unwrap();
        let last = here.file_name().map(|n| n.to_string_lossy().into_owned());
        assert_eq!(names("e0001/block-00001.csv")[1], last);
    }
}
