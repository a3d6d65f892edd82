//! SHA-256 of short messages straight on the block function, one message or several at once.
//!
//! The hot paths hash millions of short messages (a Merkle leaf is 33 bytes, a node 65, a
//! ticket's generator seed 40, a ticket line about 90). The streaming hasher buffers and pads
//! each one; here the padded blocks are written directly and go to the block function.
//!
//! One message alone goes to `sha2::compress256` (SHA-NI where the processor has it).
//! Independent messages given together ([`digest_many`]) are hashed side by side ([`lanes`]):
//! sixteen at a time in the 32-bit lanes of AVX-512 registers, or two at a time with their
//! SHA-NI rounds interleaved (`SHA256RNDS2` has a latency of several cycles and each round of
//! one message waits for the previous one, so a single stream leaves the unit idle much of
//! the time). Measured per 64-byte block on the project's Xeon: `sha2` one stream 48 ns,
//! SHA-NI two lanes 38 ns, AVX-512 sixteen lanes 22 ns ([`lanes`] has the details). The
//! engine is chosen at run time ([`Engine::best`]); a processor without either hashes the
//! same messages one by one through `sha2`. The result is SHA-256 itself whatever the
//! engine: the tests compare every engine with `Sha256` at every length, and the known-answer
//! tests of the Merkle root, the block keys and the blocks pin it.
//!
//! Messages of one fixed length (a Merkle leaf or node, a generator seed) go through
//! [`digest_fixed`]: written by the caller straight into the lanes' blocks over a template
//! that already holds the padding, with none of the per-block bookkeeping that messages of
//! different lengths need (measured: 5 % of verify's CPU, 2 % of emit's).

// The SIMD engines call the processor's intrinsics: the one module of the crate where
// `unsafe` is allowed throughout (Cargo.toml denies it elsewhere).
#![allow(unsafe_code)]

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

/// The number of 64-byte blocks of a `len`-byte message once padded.
fn block_count(len: usize) -> usize {
    len / 64 + if len % 64 <= 55 { 1 } else { 2 }
}

/// Writes block `i` (below [`block_count`]) of `message` padded into `out`: 64 bytes of the
/// message, or its tail with the padding.
fn fill_block(message: &[u8], i: usize, out: &mut [u8; 64]) {
    let start = i * 64;
    if let Some(whole) = message.get(start..start + 64) {
        out.copy_from_slice(whole);
        return;
    }
    *out = [0; 64];
    if let Some(rest) = message.get(start..) {
        // The block where the message ends (rest is 0 to 63 bytes): the 0x80 that ends it.
        out[..rest.len()].copy_from_slice(rest);
        out[rest.len()] = 0x80;
    }
    if i + 1 == block_count(message.len()) {
        out[56..].copy_from_slice(&(message.len() as u64).wrapping_mul(8).to_be_bytes());
    }
}

/// A lane's message while it is hashed.
struct Lane<'a> {
    /// Its place in the output.
    index: usize,
    message: &'a [u8],
    /// The next block to compress.
    at: usize,
    /// Its blocks in all.
    count: usize,
}

impl<'a> Lane<'a> {
    fn new(index: usize, message: &'a [u8]) -> Self {
        Lane {
            index,
            message,
            at: 0,
            count: block_count(message.len()),
        }
    }
}

/// How [`digest_many`] hashes several messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// One by one through `sha2` (its SHA-NI code where the processor has it, else portable).
    OneByOne,
    /// Two at a time, their SHA-NI rounds interleaved ([`lanes::compress`]).
    ShaNi,
    /// Sixteen at a time, one in each 32-bit lane of AVX-512 registers ([`lanes::compress16`]);
    /// batches of fewer than [`Engine::AVX512_MIN`] messages go to the next best engine.
    Avx512,
}

impl Engine {
    /// Batches smaller than this are not worth the sixteen lanes of [`Engine::Avx512`].
    pub const AVX512_MIN: usize = 8;

    /// The fastest engine this processor has (measured: see the module's notes). AVX-512 even
    /// though the core may clock down while it runs: whole runs took less CPU with it than
    /// with the SHA-NI lanes (La ruche d'or, `--threads 2`, task-clock, five interleaved runs
    /// of the same binary: verify 0.62 against 0.66 µs per ticket, emit 1.02 against 1.06).
    pub fn best() -> Engine {
        if lanes::has_avx512() {
            Engine::Avx512
        } else {
            Engine::small()
        }
    }

    /// The engine for a few messages: SHA-NI if the processor has it.
    fn small() -> Engine {
        if lanes::has_sha_ni() {
            Engine::ShaNi
        } else {
            Engine::OneByOne
        }
    }

    /// Every engine this processor can run (the tests compare them all with `Sha256`).
    pub fn available() -> Vec<Engine> {
        let mut all = vec![Engine::OneByOne];
        if lanes::has_sha_ni() {
            all.push(Engine::ShaNi);
        }
        if lanes::has_avx512() {
            all.push(Engine::Avx512);
        }
        all
    }
}

/// SHA-256 of each message, in order, hashed together by the fastest engine this processor
/// has ([`Engine::best`]).
pub fn digest_many(messages: &[&[u8]]) -> Vec<[u8; 32]> {
    digest_many_with(Engine::best(), messages)
}

/// SHA-256 of each message, in order, hashed by `engine` (which this processor must have:
/// one of [`Engine::available`]; another falls back to one by one).
pub fn digest_many_with(engine: Engine, messages: &[&[u8]]) -> Vec<[u8; 32]> {
    let mut out = vec![[0u8; 32]; messages.len()];
    digest_each(messages.len(), |i| messages[i], &mut out, engine);
    out
}

/// SHA-256 of `(0..count).map(message)` into `out` (`count` long), hashed by `engine`.
fn digest_each<'a>(
    count: usize,
    message: impl Fn(usize) -> &'a [u8],
    out: &mut [[u8; 32]],
    engine: Engine,
) {
    debug_assert_eq!(out.len(), count);
    let engine = match engine {
        Engine::Avx512 if !lanes::has_avx512() => Engine::OneByOne,
        Engine::Avx512 if count < Engine::AVX512_MIN => Engine::small(),
        Engine::ShaNi if !lanes::has_sha_ni() => Engine::OneByOne,
        engine => engine,
    };
    match engine {
        Engine::OneByOne => {
            for (i, hash) in out.iter_mut().enumerate() {
                *hash = digest(message(i));
            }
        }
        Engine::ShaNi => interleaved::<2>(count, message, out),
        Engine::Avx512 => sixteen(count, message, out),
    }
}

/// SHA-256 of `out.len()` messages of `BLOCKS` padded blocks each (the Merkle leaves and
/// nodes, the tickets' generator seeds), written straight into the lanes' blocks: each lane's
/// block `k` starts as `template[k]` (the bytes every message shares, its padding included)
/// and `fill(i, k, block)` writes over it the bytes of message `i` that differ. No message is
/// built in a buffer of its own, padded, or copied again, and the lanes need no bookkeeping:
/// every message has as many blocks. Hashed by `engine` (as [`digest_each`]); sixteen messages
/// at a time with AVX-512, the last fewer than [`Engine::AVX512_MIN`] by the small engine.
pub(crate) fn digest_fixed<const BLOCKS: usize>(
    template: &[[u8; 64]; BLOCKS],
    fill: impl Fn(usize, usize, &mut [u8; 64]),
    out: &mut [[u8; 32]],
    engine: Engine,
) {
    let engine = match engine {
        Engine::Avx512 if !lanes::has_avx512() => Engine::OneByOne,
        Engine::ShaNi if !lanes::has_sha_ni() => Engine::OneByOne,
        engine => engine,
    };
    let mut done = 0;
    if engine == Engine::Avx512 {
        let mut blocks: [lanes::Blocks16; BLOCKS] =
            std::array::from_fn(|k| lanes::Blocks16([template[k]; 16]));
        let iv = lanes::States16(std::array::from_fn(|j| [IV[j]; 16]));
        let count = out.len();
        while count - done >= Engine::AVX512_MIN {
            let group = &mut out[done..(done + 16).min(count)];
            for (k, blocks) in blocks.iter_mut().enumerate() {
                for (l, block) in blocks.0.iter_mut().take(group.len()).enumerate() {
                    fill(done + l, k, block);
                }
            }
            // Lanes past the group's end hash stale blocks: their states are not read.
            let mut states = iv.clone();
            for blocks in &blocks {
                lanes::compress16(&mut states, blocks);
            }
            for (l, hash) in group.iter_mut().enumerate() {
                *hash = to_bytes(&states.get(l));
            }
            done += group.len();
        }
    }
    let rest = &mut out[done..];
    if engine == Engine::OneByOne || !lanes::has_sha_ni() {
        let mut message = *template;
        for (i, hash) in rest.iter_mut().enumerate() {
            for (k, block) in message.iter_mut().enumerate() {
                fill(done + i, k, block);
            }
            *hash = of_blocks(&message.map(Block::from));
        }
        return;
    }
    // SHA-NI, two messages at a time (and the last one alone).
    let mut pair = [*template, *template];
    for (p, hashes) in rest.chunks_mut(2).enumerate() {
        let first = done + 2 * p;
        let mut states = [IV; 2];
        let n = hashes.len();
        for (l, blocks) in pair.iter_mut().take(n).enumerate() {
            for (k, block) in blocks.iter_mut().enumerate() {
                fill(first + l, k, block);
            }
        }
        for (a, b) in pair[0].iter().zip(&pair[1]) {
            if n == 2 {
                lanes::compress(&mut states, [a, b]);
            } else {
                lanes::compress(std::array::from_mut(&mut states[0]), [a]);
            }
        }
        for (hash, state) in hashes.iter_mut().zip(&states) {
            *hash = to_bytes(state);
        }
    }
}

/// [`digest_each`] with SHA-NI, `W` lanes interleaved. A lane whose message is done takes the
/// next, so messages of different lengths keep every lane busy until the last ones.
fn interleaved<'a, const W: usize>(
    count: usize,
    message: impl Fn(usize) -> &'a [u8],
    out: &mut [[u8; 32]],
) {
    let mut states = [IV; W];
    let mut blocks = [[0u8; 64]; W];
    let mut slots: [Option<Lane>; W] = std::array::from_fn(|_| None);
    let mut next = 0;
    loop {
        let mut busy = 0;
        for ((lane, state), block) in slots.iter_mut().zip(&mut states).zip(&mut blocks) {
            if lane.is_none() && next < count {
                *lane = Some(Lane::new(next, message(next)));
                *state = IV;
                next += 1;
            }
            if let Some(lane) = lane {
                fill_block(lane.message, lane.at, block);
                busy += 1;
            }
        }
        if busy == 0 {
            return;
        }
        if busy == W {
            lanes::compress(&mut states, std::array::from_fn(|l| &blocks[l]));
        } else {
            // The last messages: one by one.
            for ((lane, state), block) in slots.iter().zip(&mut states).zip(&blocks) {
                if lane.is_some() {
                    lanes::compress(std::array::from_mut(state), [block]);
                }
            }
        }
        for (slot, state) in slots.iter_mut().zip(&states) {
            if let Some(lane) = slot {
                lane.at += 1;
                if lane.at == lane.count {
                    out[lane.index] = to_bytes(state);
                    *slot = None;
                }
            }
        }
    }
}

/// [`digest_each`] with AVX-512, sixteen lanes. A lane whose message is done takes the next;
/// once none is left, idle lanes hash a block that is thrown away.
fn sixteen<'a>(count: usize, message: impl Fn(usize) -> &'a [u8], out: &mut [[u8; 32]]) {
    let mut states = lanes::States16::default();
    let mut blocks = lanes::Blocks16::default();
    let mut slots: [Option<Lane>; 16] = std::array::from_fn(|_| None);
    let mut next = 0;
    loop {
        let mut busy = false;
        for (l, (slot, block)) in slots.iter_mut().zip(&mut blocks.0).enumerate() {
            if slot.is_none() && next < count {
                *slot = Some(Lane::new(next, message(next)));
                states.set(l, &IV);
                next += 1;
            }
            if let Some(lane) = slot {
                fill_block(lane.message, lane.at, block);
                busy = true;
            }
        }
        if !busy {
            return;
        }
        lanes::compress16(&mut states, &blocks);
        for (l, slot) in slots.iter_mut().enumerate() {
            if let Some(lane) = slot {
                lane.at += 1;
                if lane.at == lane.count {
                    out[lane.index] = to_bytes(&states.get(l));
                    *slot = None;
                }
            }
        }
    }
}

/// SHA-256's block function on several independent states at once: SHA-NI with the lanes'
/// rounds interleaved ([`compress`]), or AVX-512 with one state in each 32-bit lane
/// ([`compress16`]).
///
/// Hand-written `unsafe`: the `core::arch` intrinsics are `unsafe fn`s, and `sha2` has no
/// interface that hashes independent messages together. Measured on the project's 2-core
/// Xeon VM (loaded; `cargo bench --bench hot_paths -- sha256/block`, and a stand-alone loop
/// of the same code), per 64-byte block: `sha2`'s SHA-NI one stream 48 to 75 ns, SHA-NI two
/// lanes 38 to 57 ns (×1.3), four lanes no better (their registers spill), AVX-512 sixteen
/// lanes 22 to 30 ns (×2.2). The SHA-NI code follows `sha2`'s own (`sha2/src/sha256/x86.rs`);
/// the AVX-512 code is FIPS 180-4 §6.2.2 written on 16-lane vectors.
pub mod lanes {
    /// True if this processor has SHA-NI (and the SSE levels the code uses).
    pub fn has_sha_ni() -> bool {
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

    /// True if this processor has AVX-512 F and BW (what [`compress16`] uses).
    pub fn has_avx512() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Compresses `blocks[l]` into `states[l]` for each lane `l`, with SHA-NI if
    /// [`has_sha_ni`], else one by one through `sha2`.
    pub fn compress<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[u8; 64]; N]) {
        #[cfg(target_arch = "x86_64")]
        if has_sha_ni() {
            // SAFETY: the processor has every feature `ni::compress` is compiled for (checked
            // just above).
            unsafe { ni::compress(states, blocks) };
            return;
        }
        for (state, block) in states.iter_mut().zip(blocks) {
            sha2::compress256(state, std::slice::from_ref(super::Block::from_slice(block)));
        }
    }

    /// Sixteen states, word by word: `0[j][l]` is word `j` of lane `l`.
    #[derive(Debug, Clone, Default)]
    #[repr(C, align(64))]
    pub struct States16(pub [[u32; 16]; 8]);

    impl States16 {
        /// Lane `l`'s state.
        pub fn get(&self, l: usize) -> [u32; 8] {
            std::array::from_fn(|j| self.0[j][l])
        }

        /// Sets lane `l`'s state.
        pub fn set(&mut self, l: usize, state: &[u32; 8]) {
            for (word, &value) in self.0.iter_mut().zip(state) {
                word[l] = value;
            }
        }
    }

    /// Sixteen blocks, one per lane, side by side.
    #[derive(Debug, Clone)]
    #[repr(C, align(64))]
    pub struct Blocks16(pub [[u8; 64]; 16]);

    impl Default for Blocks16 {
        fn default() -> Self {
            Blocks16([[0; 64]; 16])
        }
    }

    /// Calls of the AVX-512 block function so far (tests: the engine must be seen to run
    /// wherever the processor has it).
    #[cfg(test)]
    pub(super) static AVX512_RUNS: std::sync::atomic::AtomicU64 =
        std::sync::atomic::AtomicU64::new(0);

    /// Compresses block `l` into lane `l`'s state, for the sixteen lanes: with AVX-512 if
    /// [`has_avx512`], else one by one through `sha2`.
    pub fn compress16(states: &mut States16, blocks: &Blocks16) {
        #[cfg(target_arch = "x86_64")]
        if has_avx512() {
            // SAFETY: the processor has every feature `avx512::compress16` is compiled for
            // (checked just above).
            unsafe { avx512::compress16(states, blocks) };
            #[cfg(test)]
            AVX512_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        for (l, block) in blocks.0.iter().enumerate() {
            let mut state = states.get(l);
            sha2::compress256(&mut state, &[(*block).into()]);
            states.set(l, &state);
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
    mod avx512 {
        use super::{Blocks16, States16, K};
        use core::arch::x86_64::*;

        /// The block function on sixteen lanes.
        ///
        /// # Safety
        /// The processor must have AVX-512 F and BW.
        #[target_feature(enable = "avx512f,avx512bw")]
        pub(super) unsafe fn compress16(states: &mut States16, blocks: &Blocks16) {
            // Word j of every lane's block: 32-bit loads 64 bytes apart, then big-endian.
            let offsets = _mm512_setr_epi32(
                0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240,
            );
            let bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
            let base = blocks.0.as_ptr().cast::<i32>();
            let mut w = [_mm512_setzero_si512(); 16];
            for (j, word) in w.iter_mut().enumerate() {
                // SAFETY: word j of lane l is at 4 (16 l + j) bytes, within the 1024 of
                // `blocks` (l, j < 16).
                let gathered = unsafe { _mm512_i32gather_epi32::<4>(offsets, base.add(j)) };
                *word = _mm512_shuffle_epi8(gathered, bswap);
            }
            let mut v = [_mm512_setzero_si512(); 8];
            for (j, word) in v.iter_mut().enumerate() {
                // SAFETY: a row of `States16` is 16 words, 64 bytes; `loadu` takes any
                // address.
                *word = unsafe { _mm512_loadu_si512(states.0[j].as_ptr().cast()) };
            }
            let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = v;
            for i in 0..64 {
                if i >= 16 {
                    // W[i] = σ1(W[i-2]) + W[i-7] + σ0(W[i-15]) + W[i-16], in a ring of 16.
                    let w15 = w[(i - 15) % 16];
                    let w2 = w[(i - 2) % 16];
                    let s0 = _mm512_ternarylogic_epi32::<0x96>(
                        _mm512_ror_epi32::<7>(w15),
                        _mm512_ror_epi32::<18>(w15),
                        _mm512_srli_epi32::<3>(w15),
                    );
                    let s1 = _mm512_ternarylogic_epi32::<0x96>(
                        _mm512_ror_epi32::<17>(w2),
                        _mm512_ror_epi32::<19>(w2),
                        _mm512_srli_epi32::<10>(w2),
                    );
                    w[i % 16] = _mm512_add_epi32(
                        _mm512_add_epi32(w[i % 16], s0),
                        _mm512_add_epi32(w[(i - 7) % 16], s1),
                    );
                }
                // Σ1(e), Ch(e, f, g), Σ0(a), Maj(a, b, c): 0x96 is a ^ b ^ c, 0xCA is
                // a ? b : c, 0xE8 the majority.
                let big_s1 = _mm512_ternarylogic_epi32::<0x96>(
                    _mm512_ror_epi32::<6>(e),
                    _mm512_ror_epi32::<11>(e),
                    _mm512_ror_epi32::<25>(e),
                );
                let ch = _mm512_ternarylogic_epi32::<0xCA>(e, f, g);
                let kw = _mm512_add_epi32(w[i % 16], _mm512_set1_epi32(K[i] as i32));
                let t1 = _mm512_add_epi32(_mm512_add_epi32(h, big_s1), _mm512_add_epi32(ch, kw));
                let big_s0 = _mm512_ternarylogic_epi32::<0x96>(
                    _mm512_ror_epi32::<2>(a),
                    _mm512_ror_epi32::<13>(a),
                    _mm512_ror_epi32::<22>(a),
                );
                let maj = _mm512_ternarylogic_epi32::<0xE8>(a, b, c);
                let t2 = _mm512_add_epi32(big_s0, maj);
                h = g;
                g = f;
                f = e;
                e = _mm512_add_epi32(d, t1);
                d = c;
                c = b;
                b = a;
                a = _mm512_add_epi32(t1, t2);
            }
            for (j, x) in [a, b, c, d, e, f, g, h].into_iter().enumerate() {
                // SAFETY: as the loads above.
                unsafe {
                    _mm512_storeu_si512(states.0[j].as_mut_ptr().cast(), _mm512_add_epi32(v[j], x))
                };
            }
        }
    }

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
            // `j` is also the round group (which constants), not only an index into `w`.
            #[allow(clippy::needless_range_loop)]
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

    /// The hashes of `messages` by every engine this processor has, one by one first.
    fn every_engine(messages: &[&[u8]]) -> Vec<Vec<[u8; 32]>> {
        Engine::available()
            .into_iter()
            .map(|engine| digest_many_with(engine, messages))
            .collect()
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
        let engines = Engine::available();
        for (engine, got) in engines.iter().zip(every_engine(&messages)) {
            for (len, (got, want)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(got, want, "{engine:?}, {len} bytes");
            }
        }
        // Reversed, and every batch size from 0 to 40 (below and above the sixteen lanes and
        // Engine::AVX512_MIN, lanes left idle at the end).
        let reversed: Vec<&[u8]> = messages.iter().rev().copied().collect();
        let expected_reversed: Vec<[u8; 32]> = expected.iter().rev().copied().collect();
        for (engine, got) in engines.iter().zip(every_engine(&reversed)) {
            assert_eq!(got, expected_reversed, "{engine:?}");
        }
        for n in 0..=40 {
            let (batch, want) = (&messages[150 - n..150], &expected[150 - n..150]);
            for (engine, got) in engines.iter().zip(every_engine(batch)) {
                assert_eq!(got, want, "{engine:?}, {n} messages");
            }
            assert_eq!(digest_many(batch), want, "{n} messages");
        }
    }

    #[test]
    fn pairs_of_different_lengths_hash_as_sha256() {
        let data: Vec<u8> = (0u32..200).map(|i| (i * 89 + 3) as u8).collect();
        for a in (0..200).step_by(7) {
            for b in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 199] {
                // A pair, and a batch for the sixteen lanes: the two alternating.
                let pair = [&data[..a], &data[200 - b..]];
                let batch: Vec<&[u8]> = (0..24).map(|i| pair[i % 2]).collect();
                let want: Vec<[u8; 32]> = batch.iter().map(|m| sha256(m)).collect();
                for engine in Engine::available() {
                    assert_eq!(
                        digest_many_with(engine, &pair),
                        want[..2],
                        "{engine:?} {a}, {b}"
                    );
                    assert_eq!(
                        digest_many_with(engine, &batch),
                        want,
                        "{engine:?} {a}, {b}"
                    );
                }
            }
        }
    }

    /// `count` messages of `len` bytes (the same length: `BLOCKS` blocks once padded), message
    /// `i` made of bytes that differ from one message to the next.
    fn fixed_messages(count: usize, len: usize) -> Vec<Vec<u8>> {
        (0..count)
            .map(|i| (0..len).map(|j| (i * 131 + j * 7 + 1) as u8).collect())
            .collect()
    }

    /// The hashes of `messages` (all `len` bytes, `BLOCKS` blocks) by `digest_fixed` with
    /// `engine`: a template of zeros and the padding, the message bytes filled in.
    fn by_digest_fixed<const BLOCKS: usize>(
        messages: &[Vec<u8>],
        len: usize,
        engine: Engine,
    ) -> Vec<[u8; 32]> {
        assert_eq!(block_count(len), BLOCKS);
        let mut template = [[0u8; 64]; BLOCKS];
        for (k, block) in template.iter_mut().enumerate() {
            fill_block(&vec![0u8; len], k, block);
        }
        let fill = |i: usize, k: usize, block: &mut [u8; 64]| {
            let message = &messages[i];
            let bytes = message.get(k * 64..).unwrap_or(&[]);
            let bytes = &bytes[..bytes.len().min(64)];
            block[..bytes.len()].copy_from_slice(bytes);
        };
        let mut out = vec![[0xAAu8; 32]; messages.len()];
        digest_fixed(&template, fill, &mut out, engine);
        out
    }

    #[test]
    fn fixed_length_messages_hash_as_sha256_by_every_engine() {
        // One, two and three blocks (the 40-byte seeds, 33-byte leaves and 65-byte nodes among
        // them), every batch size from 0 to 40: sixteen lanes, fewer, and the tails.
        for len in [0usize, 33, 40, 55, 56, 64, 65, 119, 120, 150] {
            for count in 0..=40 {
                let messages = fixed_messages(count, len);
                let want: Vec<[u8; 32]> = messages.iter().map(|m| sha256(m)).collect();
                for engine in Engine::available() {
                    let got = match block_count(len) {
                        1 => by_digest_fixed::<1>(&messages, len, engine),
                        2 => by_digest_fixed::<2>(&messages, len, engine),
                        _ => by_digest_fixed::<3>(&messages, len, engine),
                    };
                    assert_eq!(got, want, "{engine:?}, {count} messages of {len} bytes");
                }
            }
        }
    }

    #[test]
    fn the_lanes_compress_as_sha2_does() {
        let blocks: Vec<[u8; 64]> = (0u8..16).map(|i| [i.wrapping_mul(71); 64]).collect();
        let mut expected = [IV; 16];
        for (i, state) in expected.iter_mut().enumerate() {
            // States other than the IV too: a message's second block.
            state[i % 8] ^= i as u32;
            sha2::compress256(state, &[blocks[i].into()]);
        }
        let mut start = [IV; 16];
        for (i, state) in start.iter_mut().enumerate() {
            state[i % 8] ^= i as u32;
        }
        let mut four = [start[0], start[1], start[2], start[3]];
        lanes::compress(&mut four, [&blocks[0], &blocks[1], &blocks[2], &blocks[3]]);
        assert_eq!(four, expected[..4]);
        let mut two = [start[4], start[5]];
        lanes::compress(&mut two, [&blocks[4], &blocks[5]]);
        assert_eq!(two, expected[4..6]);
        let mut one = [start[6]];
        lanes::compress(&mut one, [&blocks[6]]);
        assert_eq!(one, expected[6..7]);
        let mut sixteen = lanes::States16::default();
        let mut input = lanes::Blocks16::default();
        for l in 0..16 {
            sixteen.set(l, &start[l]);
            input.0[l] = blocks[l];
        }
        lanes::compress16(&mut sixteen, &input);
        for (l, want) in expected.iter().enumerate() {
            assert_eq!(sixteen.get(l), *want, "lane {l}");
        }
    }

    #[test]
    fn this_machine_uses_the_engines_it_has() {
        // The speed aims are measured on a Xeon with SHA-NI and AVX-512: there, the engines
        // must be the ones taken (and the other tests compare them with sha2).
        let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
        assert_eq!(lanes::has_sha_ni(), has("sha_ni"));
        assert_eq!(lanes::has_avx512(), has("avx512f") && has("avx512bw"));
        if has("avx512bw") {
            assert_eq!(Engine::best(), Engine::Avx512);
        } else if has("sha_ni") {
            assert_eq!(Engine::best(), Engine::ShaNi);
        }
    }

    /// Issue 21: the AVX-512 engine is the one `emit` and `verify` take where the processor
    /// has AVX-512 F and BW (as /proc/cpuinfo says, not only as the engine's own detection
    /// says): there it must run here, and hash as `sha2` does, or this fails. Where the
    /// processor lacks it, the engine cannot run and the test says so (SKIPPED) whatever `CI`.
    #[test]
    fn the_avx512_engine_runs_and_agrees_where_the_processor_has_it() {
        let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
        let data: Vec<u8> = (0u32..4096).map(|i| (i * 31 + 3) as u8).collect();
        let messages: Vec<&[u8]> = (0..64).map(|i| &data[i..i + 40 + i * 7]).collect();
        let expected: Vec<[u8; 32]> = messages.iter().map(|m| sha256(m)).collect();
        let runs = || lanes::AVX512_RUNS.load(std::sync::atomic::Ordering::Relaxed);
        let before = runs();
        assert_eq!(digest_many_with(Engine::Avx512, &messages), expected);
        if has("avx512f") && has("avx512bw") {
            assert!(
                lanes::has_avx512() && runs() > before,
                "the processor has AVX-512 F and BW but the AVX-512 engine did not run"
            );
            assert_eq!(Engine::best(), Engine::Avx512);
        } else {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: the AVX-512 SHA-256 engine: this processor has no AVX-512 F and BW, the engine is not exercised here"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn random_messages_hash_as_sha256(
            messages in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..400), 0..40)
        ) {
            let slices: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
            let expected: Vec<[u8; 32]> = slices.iter().map(|m| sha256(m)).collect();
            for (engine, got) in Engine::available().into_iter().zip(every_engine(&slices)) {
                proptest::prop_assert_eq!(got, expected.clone(), "{:?}", engine);
            }
        }
    }
}
