//! The block files of FORMAT.md: their names, how a ticket line and its serial are written,
//! the manifest and its signature. The hashing is [`crate::hash`]'s, the files' writing
//! [`crate::fs`]'s.

pub mod id;
pub mod keys;
pub mod manifest;

/// The CSV header line, without its line end.
pub const CSV_HEADER: &str = "serial,prize,layout,sha256";
/// The header of a block's lines form (its CSV without the `sha256` column, as a pack carries
/// it: docs/FORMAT.md "Emission pack").
pub const LINES_HEADER: &str = "serial,prize,layout";

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

/// `block-<block:05>.lines.csv`: the block's lines form, a pack's member (FORMAT.md, "Emission
/// pack"); never a file of a folder.
pub fn lines_name(block: u32) -> String {
    format!("block-{block:05}.lines.csv")
}

/// What a file named like one of a block's is (`block-NNNNN` then one of these ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockFile {
    /// `.csv`: the block's tickets.
    Csv,
    /// `.lines.csv`: its lines form, as a pack carries it (never a file of a folder).
    Lines,
    /// `.manifest.json`.
    Manifest,
    /// `.manifest.json.sig`.
    Signature,
}

/// The block number and kind of a file name as [`csv_name`], [`manifest_name`],
/// [`signature_name`] or [`lines_name`] write it: `block-`, exactly five digits, one of
/// [`BlockFile`]'s ends; `None` for any other name. The one reading of these names (folders,
/// walks, packs); block 0 is returned too, for the caller to refuse by name.
pub fn parse_file_name(name: &str) -> Option<(u32, BlockFile)> {
    let rest = name.strip_prefix("block-")?;
    let (digits, end) = rest.split_at_checked(5)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let kind = match end {
        ".csv" => BlockFile::Csv,
        ".lines.csv" => BlockFile::Lines,
        ".manifest.json" => BlockFile::Manifest,
        ".manifest.json.sig" => BlockFile::Signature,
        _ => return None,
    };
    Some((digits.parse().ok()?, kind))
}

/// The public key file of an emission folder.
pub const PUBLIC_KEY_FILE: &str = "emission.pub.pem";
/// The emission's game definition, the exact bytes its first run was given (FORMAT.md,
/// "Folder"): `verify` and `load` read a block of a game that is not built in with it, after
/// checking its SHA-256 against the signed manifest's `game_definition_sha256`.
pub const DEFINITION_FILE: &str = "emission.game.toml";

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

/// Turns [`index_digits`] of an index into those of the next one (a carry per `9`), for the
/// consecutive tickets of a chunk: seven divisions by ten per ticket otherwise.
#[inline]
pub fn next_index_digits(digits: &mut [u8; 7]) {
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return;
        }
    }
}

/// A SHA-256 hash in lowercase hexadecimal, as the last field of a ticket line. Four bytes at
/// a time in a 64-bit word (each nibble spread into a byte, then `0`–`9`/`a`–`f` added in
/// every byte at once): one line's hash took 310 instructions with the `hex` crate's loop.
#[inline]
pub fn hex_hash(hash: &[u8; 32]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (four, eight) in hash.chunks_exact(4).zip(out.chunks_exact_mut(8)) {
        let mut x = u64::from(u32::from_be_bytes([four[0], four[1], four[2], four[3]]));
        x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
        x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
        // Each byte is one nibble, the first byte of the input's high nibble the highest.
        x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
        // A nibble of 10 or more carries into bit 4 when 6 is added (no byte overflows).
        let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
        x += 0x3030_3030_3030_3030 + letters * (b'a' - b'0' - 10) as u64;
        eight.copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rust_decimal::Decimal;

    #[test]
    fn block_file_names_read_back_to_what_wrote_them_and_nothing_else() {
        for n in [0, 1, 7, 99_999] {
            assert_eq!(parse_file_name(&csv_name(n)), Some((n, BlockFile::Csv)));
            assert_eq!(
                parse_file_name(&manifest_name(n)),
                Some((n, BlockFile::Manifest))
            );
            assert_eq!(
                parse_file_name(&signature_name(n)),
                Some((n, BlockFile::Signature))
            );
            assert_eq!(parse_file_name(&lines_name(n)), Some((n, BlockFile::Lines)));
        }
        for name in [
            "block-1.csv",
            "block-000001.csv",
            "block-0000a.csv",
            "block-+0001.csv",
            "block-00001.csv.tmp",
            "block-00001.CSV",
            "block-00001",
            "block-",
            "xblock-00001.csv",
            "block-00001.manifest.json.sig.sig",
            "block-é0001.csv",
        ] {
            assert_eq!(parse_file_name(name), None, "{name}");
        }
    }

    #[test]
    fn names_follow_the_format() {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = game.stake(Decimal::new(5, 1)).unwrap();
        assert_eq!(
            id::EmissionId::new(&game.id, stake, 1).folder(std::path::Path::new("out")),
            std::path::Path::new("out/ruche-or/0.5/e0001")
        );
        assert_eq!(csv_name(7), "block-00007.csv");
        let two = game.stake(Decimal::from(2)).unwrap();
        let mut serial = id::EmissionId::new(&game.id, two, 1)
            .block(7)
            .serial_prefix()
            .into_bytes();
        push_index(&mut serial, 42);
        assert_eq!(serial, b"ruche-or-200-0001-00007-0000042");
    }

    /// Counting up the digits gives the digits of every next index, carries and the wrap
    /// past 9 999 999 included (as `index_digits`, which keeps the last seven digits).
    #[test]
    fn next_index_digits_count_up() {
        for start in [0u64, 999_990, 9_999_900] {
            let mut digits = index_digits(start);
            for index in start..start + 200 {
                assert_eq!(digits, index_digits(index), "{index}");
                next_index_digits(&mut digits);
            }
        }
        let mut digits = index_digits(0);
        for index in 0..2_000_000 {
            assert_eq!(digits, index_digits(index));
            next_index_digits(&mut digits);
        }
    }

    /// The line's hash in hex is the `hex` crate's, for every byte value in every position.
    #[test]
    fn hex_hashes_are_lowercase_hex() {
        for start in 0..=255u8 {
            let hash: [u8; 32] = std::array::from_fn(|i| start.wrapping_add((i * 37) as u8));
            assert_eq!(hex_hash(&hash).as_slice(), hex::encode(hash).as_bytes());
        }
        assert_eq!(&hex_hash(&[0xff; 32])[..4], b"ffff");
        assert_eq!(&hex_hash(&[0x09; 32])[..4], b"0909");
        assert_eq!(&hex_hash(&[0xa0; 32])[..4], b"a0a0");
    }
}
