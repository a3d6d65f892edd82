//! SHA-256 of short messages straight on the block function, one message or several at once.
//!
//! The hot paths hash millions of short messages (a Merkle leaf is 33 bytes, a node 65, a
//! ticket's generator seed 40, a ticket line about 90). The streaming hasher buffers and pads
//! each one; here the padded blocks are written directly and go to the block function.
//!
//! One message alone goes to `sha2::compress256` (SHA-NI where the processor has it).
//! Independent messages given together ([`digest_many`]) go through SHA-NI several at a time,
//! their rounds interleaved ([`lanes`]): `SHA256RNDS2` has a latency of several cycles and each
//! round of one message waits for the previous one, so a single stream leaves the unit idle
//! most of the time. Processors without SHA-NI (detected at run time) hash the same messages
//! one by one through `sha2`. The result is SHA-256 itself either way: the tests compare both
//! paths with `Sha256` at every length, and the known-answer tests of the Merkle root and the
//! block keys pin it.

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
    to_bytes(&state)
}

/// The digest's bytes from the state words (big-endian).
fn to_bytes(state: &[u32; 8]) -> [u8; 32] {
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
    to_bytes(&state)
}


/// A message as SHA-256 blocks: its whole 64-byte blocks read in place, the rest of it and
/// the padding copied into one or two blocks of their own.
struct Padded<'a> {
    /// The message's whole blocks (a multiple of 64 bytes).
    whole: &'a [u8],
    /// The tail of the message and the padding.
    tail: [[u8; 64]; 2],
    /// Blocks in all.
    count: usize,
}

impl<'a> Padded<'a> {
    fn new(message: &'a [u8]) -> Self {
        let split = message.len() - message.len() % 64;
        let (whole, rest) = message.split_at(split);
        let mut tail = [[0u8; 64]; 2];
        tail[0][..rest.len()].copy_from_slice(rest);
        // The rest is at most 63 bytes: the 0x80 that ends the message fits the first block.
        tail[0][rest.len()] = 0x80;
        let tail_count = if rest.len() <= 55 { 1 } else { 2 };
        let bits = (message.len() as u64).wrapping_mul(8).to_be_bytes();
        tail[tail_count - 1][56..].copy_from_slice(&bits);
        Padded {
            whole,
            tail,
            count: split / 64 + tail_count,
        }
    }

    /// Block `i` (below `count`).
    fn block(&self, i: usize) -> &[u8; 64] {
        let whole = self.whole.len() / 64;
        if i < whole {
            self.whole[i * 64..i * 64 + 64]
                .try_into()
                .expect("a whole block is 64 bytes")
        } else {
            &self.tail[i - whole]
        }
    }
}

/// SHA-256 of each message, in order. Hashed [`lanes::WIDTH`] at a time, interleaved, where the
/// processor has SHA-NI; one by one through `sha2` elsewhere.
pub fn digest_many(messages: &[&[u8]]) -> Vec<[u8; 32]> {
    let mut out = vec![[0u8; 32]; messages.len()];
    digest_each(messages.len(), |i| messages[i], &mut out, lanes::available());
    out
}

/// SHA-256 of `(0..count).map(message)` into `out` (`count` long); interleaved if `interleave`
/// (only when [`lanes::available`]), else one by one through `sha2`.
pub(crate) fn digest_each<'a>(
    count: usize,
    message: impl Fn(usize) -> &'a [u8],
    out: &mut [[u8; 32]],
    interleave: bool,
) {
    debug_assert_eq!(out.len(), count);
    if !interleave {
        for (i, hash) in out.iter_mut().enumerate() {
            *hash = digest(message(i));
        }
        return;
    }
    // Each lane hashes one message; a lane whose message is done takes the next, so messages
    // of different lengths keep every lane busy until the last ones.
    const W: usize = lanes::WIDTH;
    let mut states = [IV; W];
    let mut work: [Option<(usize, Padded, usize)>; W] = std::array::from_fn(|_| None);
    let mut next = 0;
    loop {
        for (lane, state) in work.iter_mut().zip(&mut states) {
            if lane.is_none() && next < count {
                *lane = Some((next, Padded::new(message(next)), 0));
                *state = IV;
                next += 1;
            }
        }
        let busy = work.iter().filter(|lane| lane.is_some()).count();
        if busy == W {
            let blocks = std::array::from_fn(|l| {
                let (_, padded, at) = work[l].as_ref().expect("every lane is busy");
                padded.block(*at)
            });
            lanes::compress(&mut states, blocks);
        } else if busy == 0 {
            return;
        } else {
            // The last messages: the busy lanes, two at a time, then one.
            let mut busy_lanes = (0..W).filter(|&l| work[l].is_some());
            while let Some(a) = busy_lanes.next() {
                let block = |l: usize| {
                    let (_, padded, at) = work[l].as_ref().expect("a busy lane");
                    padded.block(*at)
                };
                match busy_lanes.next() {
                    Some(b) => {
                        let mut pair = [states[a], states[b]];
                        lanes::compress(&mut pair, [block(a), block(b)]);
                        [states[a], states[b]] = pair;
                    }
                    None => {
                        let mut one = [states[a]];
                        lanes::compress(&mut one, [block(a)]);
                        states[a] = one[0];
                    }
                }
            }
        }
        for (lane, state) in work.iter_mut().zip(&states) {
            if let Some((index, padded, at)) = lane {
                *at += 1;
                if *at == padded.count {
                    out[*index] = to_bytes(state);
                    *lane = None;
                }
            }
        }
    }
}

/// SHA-256's block function on several independent states at once, with SHA-NI.
///
/// Hand-written `unsafe`: the `core::arch` intrinsics are `unsafe fn`s, and `sha2` has no
/// interface that hashes independent messages together. The structure of each lane is that
/// of `sha2`'s own SHA-NI code (`sha2/src/sha256/x86.rs`); the lanes' instructions are
/// interleaved so that the rounds of one fill the latency of the others'.
pub mod lanes {
    /// Messages hashed together by [`super::digest_many`].
    pub const WIDTH: usize = 4;

    /// True if this processor has SHA-NI (and the SSE levels the code uses).
    pub fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("sha")
                && std::arch::is_x86_feature_detected!("sse2")
                && std::arch::is_x86_feature_detected!("ssse3")
                && std::arch::is_x86_feature_detected!("sse4.1")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Compresses `blocks[l]` into `states[l]` for each lane `l`, with SHA-NI if
    /// [`available`], else one by one through `sha2`.
    pub fn compress<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[u8; 64]; N]) {
        #[cfg(target_arch = "x86_64")]
        if available() {
            // SAFETY: the processor has every feature `ni::compress` is compiled for (checked
            // just above).
            unsafe { ni::compress(states, blocks) };
            return;
        }
        for (state, block) in states.iter_mut().zip(blocks) {
            sha2::compress256(state, std::slice::from_ref(super::Block::from_slice(block)));
        }
    }

    /// The round constants (FIPS 180-4 §4.2.2).
    #[cfg(target_arch = "x86_64")]
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    #[cfg(target_arch = "x86_64")]
    mod ni {
        use super::K;
        use core::arch::x86_64::*;

        /// Four rounds of every lane: `w[l]` holds the lane's next four message words.
        macro_rules! rounds4 {
            ($abef:ident, $cdgh:ident, $w:expr, $i:expr) => {
                // SAFETY: K has 64 words; $i < 16 reads words 4 $i .. 4 $i + 3.
                let k = unsafe { _mm_loadu_si128(K.as_ptr().add(4 * $i).cast()) };
                for l in 0..N {
                    let t1 = _mm_add_epi32($w[l], k);
                    $cdgh[l] = _mm_sha256rnds2_epu32($cdgh[l], $abef[l], t1);
                    let t2 = _mm_shuffle_epi32(t1, 0x0E);
                    $abef[l] = _mm_sha256rnds2_epu32($abef[l], $cdgh[l], t2);
                }
            };
        }

        /// The next four message words from the last sixteen, `w0` the oldest four.
        macro_rules! schedule {
            ($w0:expr, $w1:expr, $w2:expr, $w3:expr) => {{
                let t1 = _mm_sha256msg1_epu32($w0, $w1);
                let t2 = _mm_alignr_epi8($w3, $w2, 4);
                _mm_sha256msg2_epu32(_mm_add_epi32(t1, t2), $w3)
            }};
        }

        /// Schedules four message words of every lane into `w[..][$j]` from the previous
        /// sixteen, then runs their four rounds.
        macro_rules! schedule_rounds4 {
            ($abef:ident, $cdgh:ident, $w:ident, $i:expr) => {
                for l in 0..N {
                    $w[l][$i % 4] = schedule!(
                        $w[l][$i % 4],
                        $w[l][($i + 1) % 4],
                        $w[l][($i + 2) % 4],
                        $w[l][($i + 3) % 4]
                    );
                }
                let words: [__m128i; N] = std::array::from_fn(|l| $w[l][$i % 4]);
                rounds4!($abef, $cdgh, words, $i);
            };
        }

        /// The block function on each lane.
        ///
        /// # Safety
        /// The processor must have SHA-NI, SSE2, SSSE3 and SSE4.1.
        #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
        pub(super) unsafe fn compress<const N: usize>(
            states: &mut [[u32; 8]; N],
            blocks: [&[u8; 64]; N],
        ) {
            // Big-endian words from the block's bytes.
            let mask = _mm_set_epi64x(
                0x0C0D_0E0F_0809_0A0Bu64 as i64,
                0x0405_0607_0001_0203u64 as i64,
            );
            let mut abef = [_mm_setzero_si128(); N];
            let mut cdgh = [_mm_setzero_si128(); N];
            let mut w = [[_mm_setzero_si128(); 4]; N];
            for l in 0..N {
                // SAFETY: a state is 8 words (two 16-byte loads), a block 64 bytes (four);
                // `loadu` takes unaligned addresses.
                let (dcba, efgh, words) = unsafe {
                    let state = states[l].as_ptr().cast::<__m128i>();
                    let block = blocks[l].as_ptr().cast::<__m128i>();
                    (
                        _mm_loadu_si128(state),
                        _mm_loadu_si128(state.add(1)),
                        [
                            _mm_loadu_si128(block),
                            _mm_loadu_si128(block.add(1)),
                            _mm_loadu_si128(block.add(2)),
                            _mm_loadu_si128(block.add(3)),
                        ],
                    )
                };
                let cdab = _mm_shuffle_epi32(dcba, 0xB1);
                let efgh = _mm_shuffle_epi32(efgh, 0x1B);
                abef[l] = _mm_alignr_epi8(cdab, efgh, 8);
                cdgh[l] = _mm_blend_epi16(efgh, cdab, 0xF0);
                for j in 0..4 {
                    w[l][j] = _mm_shuffle_epi8(words[j], mask);
                }
            }
            let (abef_in, cdgh_in) = (abef, cdgh);
            for j in 0..4 {
                let words: [__m128i; N] = std::array::from_fn(|l| w[l][j]);
                rounds4!(abef, cdgh, words, j);
            }
            schedule_rounds4!(abef, cdgh, w, 4);
            schedule_rounds4!(abef, cdgh, w, 5);
            schedule_rounds4!(abef, cdgh, w, 6);
            schedule_rounds4!(abef, cdgh, w, 7);
            schedule_rounds4!(abef, cdgh, w, 8);
            schedule_rounds4!(abef, cdgh, w, 9);
            schedule_rounds4!(abef, cdgh, w, 10);
            schedule_rounds4!(abef, cdgh, w, 11);
            schedule_rounds4!(abef, cdgh, w, 12);
            schedule_rounds4!(abef, cdgh, w, 13);
            schedule_rounds4!(abef, cdgh, w, 14);
            schedule_rounds4!(abef, cdgh, w, 15);
            for l in 0..N {
                let abef = _mm_add_epi32(abef[l], abef_in[l]);
                let cdgh = _mm_add_epi32(cdgh[l], cdgh_in[l]);
                let feba = _mm_shuffle_epi32(abef, 0x1B);
                let dchg = _mm_shuffle_epi32(cdgh, 0xB1);
                let dcba = _mm_blend_epi16(feba, dchg, 0xF0);
                let hgef = _mm_alignr_epi8(dchg, feba, 8);
                // SAFETY: a state is 8 words, two 16-byte stores; `storeu` takes unaligned
                // addresses.
                unsafe {
                    let state = states[l].as_mut_ptr().cast::<__m128i>();
                    _mm_storeu_si128(state, dcba);
                    _mm_storeu_si128(state.add(1), hgef);
                }
            }
        }
    }
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

    /// Both paths of [`digest_each`]: interleaved (where this processor can) and one by one.
    fn both_paths(messages: &[&[u8]]) -> [Vec<[u8; 32]>; 2] {
        [lanes::available(), false].map(|interleave| {
            let mut out = vec![[0u8; 32]; messages.len()];
            digest_each(messages.len(), |i| messages[i], &mut out, interleave);
            out
        })
    }

    fn sha256(message: &[u8]) -> [u8; 32] {
        Sha256::digest(message).into()
    }

    #[test]
    fn many_messages_hash_as_sha256_at_every_length() {
        let data: Vec<u8> = (0u32..300).map(|i| (i * 151 + 7) as u8).collect();
        // Every length from 0 to 300 bytes (1 to 6 blocks), in one batch: lanes take messages
        // of different lengths side by side and refill as each ends.
        let messages: Vec<&[u8]> = (0..=data.len()).map(|len| &data[..len]).collect();
        let expected: Vec<[u8; 32]> = messages.iter().map(|m| sha256(m)).collect();
        for (path, got) in both_paths(&messages).iter().enumerate() {
            for (len, (got, want)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(got, want, "path {path}, {len} bytes");
            }
        }
        // Reversed, and every batch size from 0 to 9 (full lanes, then the last few).
        let reversed: Vec<&[u8]> = messages.iter().rev().copied().collect();
        let expected_reversed: Vec<[u8; 32]> = expected.iter().rev().copied().collect();
        assert_eq!(both_paths(&reversed), [(); 2].map(|_| expected_reversed.clone()));
        for n in 0..10 {
            let batch = &messages[150 - n..150];
            assert_eq!(both_paths(batch)[0], expected[150 - n..150], "{n} messages");
            assert_eq!(digest_many(batch), expected[150 - n..150], "{n} messages");
        }
    }

    #[test]
    fn pairs_of_different_lengths_hash_as_sha256() {
        let data: Vec<u8> = (0u32..200).map(|i| (i * 89 + 3) as u8).collect();
        for a in (0..200).step_by(7) {
            for b in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 199] {
                let messages = [&data[..a], &data[200 - b..]];
                let expected = vec![sha256(messages[0]), sha256(messages[1])];
                assert_eq!(both_paths(&messages), [expected.clone(), expected], "{a}, {b}");
            }
        }
    }

    #[test]
    fn the_lanes_compress_as_sha2_does() {
        let blocks: Vec<[u8; 64]> = (0u8..4).map(|i| [i.wrapping_mul(71); 64]).collect();
        let mut expected = [IV; 4];
        for (state, block) in expected.iter_mut().zip(&blocks) {
            sha2::compress256(state, std::slice::from_ref(Block::from_slice(block)));
        }
        let mut four = [IV; 4];
        lanes::compress(&mut four, [&blocks[0], &blocks[1], &blocks[2], &blocks[3]]);
        assert_eq!(four, expected);
        let mut two = [IV; 2];
        lanes::compress(&mut two, [&blocks[0], &blocks[1]]);
        assert_eq!(two, expected[..2]);
        let mut one = [IV; 1];
        lanes::compress(&mut one, [&blocks[3]]);
        assert_eq!(one, expected[3..]);
    }

    #[test]
    fn this_machine_interleaves_where_it_has_sha_ni() {
        // The speed aims are measured on a Xeon with SHA-NI: on such a machine the interleaved
        // path must be the one taken (the other tests compare it with sha2 there).
        #[cfg(target_arch = "x86_64")]
        {
            let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
            if flags.split_whitespace().any(|f| f == "sha_ni") {
                assert!(lanes::available());
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn random_messages_hash_as_sha256(
            messages in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..400), 0..20)
        ) {
            let slices: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
            let expected: Vec<[u8; 32]> = slices.iter().map(|m| sha256(m)).collect();
            let [interleaved, one_by_one] = both_paths(&slices);
            proptest::prop_assert_eq!(interleaved, expected.clone());
            proptest::prop_assert_eq!(one_by_one, expected);
        }
    }
}
