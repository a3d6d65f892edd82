//! The block files of FORMAT.md: where they live, how a ticket line is written, the manifest,
//! the Merkle root, a ticket's audit path to it, and the signature.

pub mod files;
pub mod keys;
pub mod manifest;
pub mod merkle;
pub mod proof;
pub mod sha256;

use crate::game::{Game, Stake};
use crate::money::canonical;
use std::path::{Path, PathBuf};

/// The CSV header line, without its line end.
pub const CSV_HEADER: &str = "serial,prize,layout,sha256";

/// The folder of one emission: `<out>/<game>/<stake>/e<emission:04>`.
pub fn emission_dir(out: &Path, game: &Game, stake: &Stake, emission: u32) -> PathBuf {
    out.join(&game.id)
        .join(canonical(stake.price))
        .join(format!("e{emission:04}"))
}

/// `block-<block:05>.csv`.
pub fn csv_name(block: u32) -> String {
    format!("block-{block:05}.csv")
}

/// `block-<block:05>.manifest.json`.
pub fn manifest_name(block: u32) -> String {
    format!("block-{block:05}.manifest.json")
}

/// `block-<block:05>.manifest.json.sig`.
pub fn signature_name(block: u32) -> String {
    format!("block-{block:05}.manifest.json.sig")
}

/// The public key file of an emission folder.
pub const PUBLIC_KEY_FILE: &str = "emission.pub.pem";

/// The part of a serial shared by every ticket of a block:
/// `<game>-<stake cents>-<emission:04>-<block:05>-`. The ticket's index (7 digits) follows.
pub fn serial_prefix(game_id: &str, stake: &Stake, emission: u32, block: u32) -> String {
    format!("{game_id}-{}-{emission:04}-{block:05}-", stake.cents)
}

/// A ticket's index as the 7 digits that end its serial.
pub fn index_digits(index: u64) -> [u8; 7] {
    let mut digits = [b'0'; 7];
    let mut n = index;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    digits
}

/// Appends a ticket's index as the 7 digits that end its serial.
pub fn push_index(out: &mut Vec<u8>, index: u64) {
    out.extend_from_slice(&index_digits(index));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rust_decimal::Decimal;

    #[test]
    fn names_follow_the_format() {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = game.stake(Decimal::new(5, 1)).unwrap();
        assert_eq!(
            emission_dir(Path::new("out"), &game, stake, 1),
            Path::new("out/ruche-or/0.5/e0001")
        );
        assert_eq!(csv_name(7), "block-00007.csv");
        let two = game.stake(Decimal::from(2)).unwrap();
        let mut serial = serial_prefix(&game.id, two, 1, 7).into_bytes();
        push_index(&mut serial, 42);
        assert_eq!(serial, b"ruche-or-200-0001-00007-0000042");
    }
}
