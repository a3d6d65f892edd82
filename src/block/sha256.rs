//! SHA-256 of short messages straight on `sha2`'s block function.
//!
//! The hot paths hash millions of short messages of fixed length (a Merkle leaf is 33 bytes, a
//! node 65, a ticket's generator seed 40). The streaming hasher buffers and pads each one; here
//! the padded blocks are written directly, and `sha2::compress256` (SHA-NI where the processor
//! has it) does the rest. The result is SHA-256 itself: the tests compare it with `Sha256` for
//! every length, and the known-answer tests of the Merkle root and the block keys pin it.

use sha2::digest::consts::U64;
use sha2::digest::generic_array::GenericArray;
use sha2::{Digest, Sha256};

/// One 64-byte block of SHA-256's input.
pub type Block = GenericArray<u8, U64>;

/// SHA-256's initial hash value (FIPS 180-4 §5.3.3).
const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The hash of a message whose padded blocks are `blocks`.
pub fn of_blocks(blocks: &[Block]) -> [u8; 32] {
    let mut state = IV;
    sha2::compress256(&mut state, blocks);
    let mut out = [0u8; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// Writes SHA-256's padding of a `len`-byte message into its last block, whose message bytes
/// end at `at` (the length field takes the block's last 8 bytes: `at` ≤ 55).
pub fn pad(block: &mut Block, at: usize, len: u64) {
    block[at] = 0x80;
    block[56..].copy_from_slice(&(len * 8).to_be_bytes());
}

/// SHA-256 of `parts` concatenated: two blocks at most when they total 119 bytes or fewer,
/// else through the streaming hasher.
pub fn short(parts: &[&[u8]]) -> [u8; 32] {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if len > 119 {
        let mut hasher = Sha256::new();
        parts.iter().for_each(|p| hasher.update(p));
        return hasher.finalize().into();
    }
    let mut bytes = [0u8; 128];
    let mut at = 0;
    for part in parts {
        bytes[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    // The padding: 0x80 after the message, its length in bits in the last block's last 8 bytes.
    let count = if len <= 55 { 1 } else { 2 };
    bytes[len] = 0x80;
    bytes[64 * count - 8..64 * count].copy_from_slice(&(len as u64 * 8).to_be_bytes());
    let mut blocks = [Block::default(), Block::default()];
    for (block, chunk) in blocks.iter_mut().zip(bytes.chunks_exact(64)) {
        block.copy_from_slice(chunk);
    }
    of_blocks(&blocks[..count])
}

/// SHA-256 of `message`, of any length: its whole blocks go to the block function straight
/// from the message, and only the tail is copied into one or two padded blocks. The streaming
/// hasher buffers every byte and finalizes through generic code (measured: 2 % of verify
/// beside the compressions themselves); a ticket line is hashed whole this way.
pub fn digest(message: &[u8]) -> [u8; 32] {
    let mut state = IV;
    let mut blocks = message.chunks_exact(64);
    for block in &mut blocks {
        sha2::compress256(&mut state, std::slice::from_ref(Block::from_slice(block)));
    }
    let tail = blocks.remainder();
    let mut last = [Block::default(), Block::default()];
    let count = if tail.len() <= 55 { 1 } else { 2 };
    last[0][..tail.len()].copy_from_slice(tail);
    // The tail is at most 63 bytes: the 0x80 that ends the message fits the first block.
    last[0][tail.len()] = 0x80;
    let bits = (message.len() as u64).wrapping_mul(8).to_be_bytes();
    last[count - 1][56..].copy_from_slice(&bits);
    sha2::compress256(&mut state, &last[..count]);
    let mut out = [0u8; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_messages_hash_as_sha256_at_every_length() {
        let data: Vec<u8> = (0u8..200).map(|i| i.wrapping_mul(37)).collect();
        for len in 0..=data.len() {
            let message = &data[..len];
            let expected: [u8; 32] = Sha256::digest(message).into();
            assert_eq!(short(&[message]), expected, "{len} bytes");
            let (a, b) = message.split_at(len / 3);
            assert_eq!(short(&[a, b]), expected, "{len} bytes in two parts");
            assert_eq!(digest(message), expected, "{len} bytes");
        }
    }
}
