//! The Merkle tree of RFC 6962 §2.1 over the tickets of a block, computed as a stream.
//!
//! Leaves are `SHA-256(0x00 ‖ ticket hash)`, nodes `SHA-256(0x01 ‖ left ‖ right)`, and a list of
//! `n` leaves splits at the largest power of two below `n`. Pushing leaves one by one and
//! merging equal-sized perfect subtrees keeps at most 64 hashes in memory; folding the stack
//! from the right at the end gives exactly the RFC's root for any `n`.
//!
//! A block's tree hashes about two million fixed-length messages (a 33-byte leaf, a 65-byte
//! node), so they go straight to `sha2`'s block function with their padding written in
//! advance, without the streaming hasher's buffering: the same SHA-256, a fraction of the
//! overhead ([`super::sha256`]). A run of leaves given at once ([`MerkleRoot::extend`]) is
//! hashed level by level, the leaves and then each level's nodes several at a time, each
//! message written straight into the lanes' blocks over its padded template
//! ([`super::sha256::digest_fixed`]): the same tree, the independent hashes computed side by
//! side, the levels in one scratch buffer. The
//! RFC 6962 known answers below, and the comparison with `Sha256::digest`, guard it.

use super::sha256::{digest_fixed, of_blocks, pad, Block, Engine};
use sha2::{Digest, Sha256};

/// A running Merkle root.
#[derive(Debug, Default, Clone)]
pub struct MerkleRoot {
    /// Perfect subtrees, largest first: (number of leaves, hash).
    stack: Vec<(u64, [u8; 32])>,
}

/// A leaf's hash: `SHA-256(0x00 ‖ data)` (RFC 6962 `MTH({d})`). A ticket hash (32 bytes) is
/// hashed as one pre-padded block.
pub fn leaf_hash(data: &[u8]) -> [u8; 32] {
    let Ok(data) = <&[u8; 32]>::try_from(data) else {
        return Sha256::new()
            .chain_update([0u8])
            .chain_update(data)
            .finalize()
            .into();
    };
    let mut block = Block::default();
    block[1..33].copy_from_slice(data);
    pad(&mut block, 33, 33);
    of_blocks(std::slice::from_ref(&block))
}

/// A node's hash: `SHA-256(0x01 ‖ left ‖ right)`, 65 bytes, two pre-padded blocks.
pub fn node_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut blocks = [Block::default(), Block::default()];
    blocks[0][0] = 1;
    blocks[0][1..33].copy_from_slice(left);
    blocks[0][33..].copy_from_slice(&right[..31]);
    blocks[1][0] = right[31];
    pad(&mut blocks[1], 1, 65);
    of_blocks(&blocks)
}

/// A leaf's message (`0x00 ‖ ticket hash`, 33 bytes) padded: the ticket hash goes at 1..33.
const LEAF: [[u8; 64]; 1] = {
    let mut block = [0u8; 64];
    block[33] = 0x80;
    let bits = (33u64 * 8).to_be_bytes();
    let mut i = 0;
    while i < 8 {
        block[56 + i] = bits[i];
        i += 1;
    }
    [block]
};

/// A node's message (`0x01 ‖ left ‖ right`, 65 bytes) padded: left at 1..33, right at 33..64
/// and the second block's first byte.
const NODE: [[u8; 64]; 2] = {
    let mut first = [0u8; 64];
    first[0] = 1;
    let mut second = [0u8; 64];
    second[1] = 0x80;
    let bits = (65u64 * 8).to_be_bytes();
    let mut i = 0;
    while i < 8 {
        second[56 + i] = bits[i];
        i += 1;
    }
    [first, second]
};

/// The leaf hashes of `ticket_hashes` into `out` (as long), hashed together by `engine`.
fn leaf_hashes(ticket_hashes: &[[u8; 32]], out: &mut [[u8; 32]], engine: Engine) {
    let fill = |i: usize, _: usize, block: &mut [u8; 64]| {
        block[1..33].copy_from_slice(&ticket_hashes[i]);
    };
    digest_fixed(&LEAF, fill, out, engine);
}

/// The hashes of the nodes over the pairs of `level` into `out` (half as long), hashed
/// together by `engine`.
fn node_hashes(level: &[[u8; 32]], out: &mut [[u8; 32]], engine: Engine) {
    debug_assert_eq!(level.len(), 2 * out.len());
    let fill = |i: usize, k: usize, block: &mut [u8; 64]| {
        let (left, right) = (&level[2 * i], &level[2 * i + 1]);
        if k == 0 {
            block[1..33].copy_from_slice(left);
            block[33..].copy_from_slice(&right[..31]);
        } else {
            block[0] = right[31];
        }
    };
    digest_fixed(&NODE, fill, out, engine);
}

/// The root of a perfect tree whose lowest level is `level` (2^k hashes, k ≥ 0), hashed a
/// level at a time, each level's nodes together; `scratch` holds the levels above.
fn perfect_root(level: &[[u8; 32]], scratch: &mut Vec<[u8; 32]>, engine: Engine) -> [u8; 32] {
    debug_assert!(level.len().is_power_of_two());
    if level.len() == 1 {
        return level[0];
    }
    // The levels above one after the other: n/2 nodes, then n/4, ... then the root.
    let n = level.len();
    scratch.clear();
    scratch.resize(n - 1, [0; 32]);
    let (mut below, mut above) = scratch.split_at_mut(n / 2);
    node_hashes(level, below, engine);
    while below.len() > 1 {
        let (next, rest) = above.split_at_mut(below.len() / 2);
        node_hashes(below, next, engine);
        below = next;
        above = rest;
    }
    below[0]
}

impl MerkleRoot {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the leaf of a ticket whose hash is `ticket_hash`.
    pub fn push(&mut self, ticket_hash: &[u8; 32]) {
        self.push_data(ticket_hash);
    }

    /// Appends a leaf whose data is `data` (the RFC's `MTH({d(0)}) = SHA-256(0x00 ‖ d(0))`).
    pub fn push_data(&mut self, data: &[u8]) {
        self.push_subtree(1, leaf_hash(data));
    }

    /// Appends the root `hash` of a perfect subtree of `size` leaves that starts at a
    /// multiple of `size` (so every subtree on the stack is at least as large), merging equal
    /// sizes as the leaves pushed one by one would.
    fn push_subtree(&mut self, size: u64, hash: [u8; 32]) {
        let mut item = (size, hash);
        while let Some(&(top, left)) = self.stack.last() {
            if top != item.0 {
                break;
            }
            self.stack.pop();
            item = (top * 2, node_hash(&left, &item.1));
        }
        self.stack.push(item);
    }

    /// Appends the leaves of the tickets whose hashes are `ticket_hashes`, in order: the same
    /// tree as [`push`](Self::push) of each, with the leaves and the nodes of each level
    /// hashed together ([`super::sha256::digest_many`]).
    pub fn extend(&mut self, ticket_hashes: &[[u8; 32]]) {
        self.extend_with(ticket_hashes, Engine::best());
    }

    /// [`extend`](Self::extend) by `engine` (the tests take each).
    fn extend_with(&mut self, ticket_hashes: &[[u8; 32]], engine: Engine) {
        let mut leaves = vec![[0u8; 32]; ticket_hashes.len()];
        leaf_hashes(ticket_hashes, &mut leaves, engine);
        let mut scratch = Vec::new();
        // The leaves split into the perfect subtrees that pushing them one by one would
        // build: from each position, the largest power of two it is a multiple of that fits.
        let mut at = self.len();
        let mut rest = leaves.as_slice();
        while !rest.is_empty() {
            let fits = 1u64 << (63 - (rest.len() as u64).leading_zeros());
            let size = if at == 0 {
                fits
            } else {
                fits.min(1u64 << at.trailing_zeros())
            };
            let (run, next) = rest.split_at(size as usize);
            self.push_subtree(size, perfect_root(run, &mut scratch, engine));
            at += size;
            rest = next;
        }
    }

    /// Leaves pushed so far.
    pub fn len(&self) -> u64 {
        self.stack.iter().map(|&(size, _)| size).sum()
    }

    /// True if no leaf was pushed.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// Appends the leaves of `other` (a tree of the leaves that follow), as if pushed one by
    /// one, merging its perfect subtrees whole: workers build the trees of consecutive runs of
    /// leaves in parallel, and one thread appends them in order. Returns false and changes
    /// nothing unless every subtree of `other` falls on a subtree boundary here, which holds
    /// when this tree's leaf count is a multiple of the largest power of two not above
    /// `other`'s (runs of 2^k leaves, the last one shorter).
    pub fn append(&mut self, other: &MerkleRoot) -> bool {
        let Some(&(largest, _)) = other.stack.first() else {
            return true;
        };
        if !self.len().is_multiple_of(largest) {
            return false;
        }
        for &(size, hash) in &other.stack {
            self.push_subtree(size, hash);
        }
        true
    }

    /// The root (the RFC's hash of the empty list if nothing was pushed).
    pub fn root(&self) -> [u8; 32] {
        let mut iter = self.stack.iter().rev();
        match iter.next() {
            None => Sha256::digest([]).into(),
            Some(&(_, last)) => iter.fold(last, |acc, (_, left)| node_hash(left, &acc)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's hash through the streaming hasher, as the RFC writes it.
    fn node(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
        Sha256::new()
            .chain_update([1u8])
            .chain_update(left)
            .chain_update(right)
            .finalize()
            .into()
    }

    #[test]
    fn pre_padded_blocks_hash_as_sha256_of_the_bytes() {
        for i in 0u8..=255 {
            let a: [u8; 32] = Sha256::digest([i]).into();
            let b: [u8; 32] = Sha256::digest([i, i]).into();
            let mut leaf = vec![0u8];
            leaf.extend_from_slice(&a);
            assert_eq!(
                leaf_hash(&a),
                <[u8; 32]>::from(Sha256::digest(&leaf)),
                "{i}"
            );
            assert_eq!(node_hash(&a, &b), node(&a, &b), "{i}");
        }
        // Other lengths take the streaming hasher.
        for len in [0, 1, 31, 33, 55, 56, 64, 100] {
            let data = vec![7u8; len];
            let mut leaf = vec![0u8];
            leaf.extend_from_slice(&data);
            assert_eq!(
                leaf_hash(&data),
                <[u8; 32]>::from(Sha256::digest(&leaf)),
                "{len}"
            );
        }
    }

    /// The RFC's recursive definition, written out directly.
    fn reference(leaves: &[[u8; 32]]) -> [u8; 32] {
        match leaves.len() {
            0 => Sha256::digest([]).into(),
            1 => leaf_hash(&leaves[0]),
            n => {
                let mut k = 1;
                while k * 2 < n {
                    k *= 2;
                }
                node_hash(&reference(&leaves[..k]), &reference(&leaves[k..]))
            }
        }
    }

    #[test]
    fn stream_matches_the_recursive_definition_for_every_size() {
        let leaves: Vec<[u8; 32]> = (0u32..70)
            .map(|i| Sha256::digest(i.to_be_bytes()).into())
            .collect();
        for n in 0..=leaves.len() {
            let mut m = MerkleRoot::new();
            leaves[..n].iter().for_each(|l| m.push(l));
            assert_eq!(m.root(), reference(&leaves[..n]), "n = {n}");
        }
    }

    #[test]
    fn appending_trees_of_aligned_runs_gives_the_root_of_all_leaves() {
        let leaves: Vec<[u8; 32]> = (0u32..300)
            .map(|i| Sha256::digest(i.to_be_bytes()).into())
            .collect();
        for run in [1usize, 2, 4, 8, 64] {
            for n in [0usize, 1, run - 1, run, run + 1, 3 * run + 5, 300] {
                let n = n.min(leaves.len());
                let mut whole = MerkleRoot::new();
                for part in leaves[..n].chunks(run) {
                    let mut tree = MerkleRoot::new();
                    part.iter().for_each(|l| tree.push(l));
                    assert!(whole.append(&tree), "run {run}, n {n}");
                }
                assert_eq!(whole.len(), n as u64);
                assert_eq!(whole.root(), reference(&leaves[..n]), "run {run}, n {n}");
            }
        }
        // Three leaves then a perfect tree of four: not on a boundary, refused untouched.
        let mut three = MerkleRoot::new();
        leaves[..3].iter().for_each(|l| three.push(l));
        let mut four = MerkleRoot::new();
        leaves[3..7].iter().for_each(|l| four.push(l));
        let before = three.root();
        assert!(!three.append(&four));
        assert_eq!(three.root(), before);
    }

    /// The engine's tree (leaves pushed one by one, and hashed together by `extend`) of `n`
    /// leaves is `node_hash(tree(first k), tree(the rest))` with `k` the largest power of two
    /// below `n` (RFC 6962, 2.1), computed here without [`reference`]; and no other split
    /// gives the same root, so a tree split elsewhere (halves, or the stack folded from the
    /// left) fails here.
    #[test]
    fn split_point_is_the_largest_power_of_two_below_n() {
        let leaves: Vec<[u8; 32]> = (0u32..130)
            .map(|i| Sha256::digest(i.to_be_bytes()).into())
            .collect();
        let pushed = |l: &[[u8; 32]]| {
            let mut m = MerkleRoot::new();
            l.iter().for_each(|x| m.push(x));
            m.root()
        };
        let extended = |l: &[[u8; 32]]| {
            let mut m = MerkleRoot::new();
            m.extend(l);
            m.root()
        };
        for n in 2..=leaves.len() {
            let k = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
            assert!(k < n && 2 * k >= n, "n = {n}, k = {k}");
            let expected = node_hash(&pushed(&leaves[..k]), &pushed(&leaves[k..n]));
            assert_eq!(pushed(&leaves[..n]), expected, "push, n = {n}");
            assert_eq!(extended(&leaves[..n]), expected, "extend, n = {n}");
            for other in (1..n).filter(|&j| j != k) {
                let split = node_hash(&pushed(&leaves[..other]), &pushed(&leaves[other..n]));
                assert_ne!(
                    split, expected,
                    "n = {n}: split at {other} gives the same root"
                );
            }
        }
    }

    /// Pinned: the roots of the certificate-transparency reference test vectors (RFC 6962
    /// trees over the same eight inputs), for the empty tree and the first 1 to 8 leaves.
    #[test]
    fn known_answers_of_the_rfc_6962_test_vectors() {
        let inputs = [
            "",
            "00",
            "10",
            "2021",
            "3031",
            "40414243",
            "5051525354555657",
            "606162636465666768696a6b6c6d6e6f",
        ];
        let roots = [
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
            "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
        ];
        for (n, expected) in roots.iter().enumerate() {
            let mut tree = MerkleRoot::new();
            for input in &inputs[..n] {
                tree.push_data(&hex::decode(input).unwrap());
            }
            assert_eq!(hex::encode(tree.root()), *expected, "{n} leaves");
        }
    }

    #[test]
    fn extend_builds_the_tree_of_pushing_one_by_one() {
        let leaves: Vec<[u8; 32]> = (0u32..300)
            .map(|i| Sha256::digest(i.to_be_bytes()).into())
            .collect();
        // Runs of every length after trees of every size (aligned or not), both paths.
        for before in [0usize, 1, 2, 3, 5, 8, 13, 64, 100] {
            for run in [0usize, 1, 2, 3, 4, 7, 16, 31, 64, 65, 100, 199] {
                let all = &leaves[..before + run];
                let mut pushed = MerkleRoot::new();
                all.iter().for_each(|l| pushed.push(l));
                for engine in Engine::available() {
                    let mut tree = MerkleRoot::new();
                    all[..before].iter().for_each(|l| tree.push(l));
                    tree.extend_with(&all[before..], engine);
                    assert_eq!(tree.stack, pushed.stack, "{before} + {run}, {engine:?}");
                    assert_eq!(tree.root(), reference(all), "{before} + {run}");
                }
            }
        }
        // A piece of 1024 leaves, as verify and emit hash them.
        let piece: Vec<[u8; 32]> = (0u32..1024)
            .map(|i| Sha256::digest(i.to_le_bytes()).into())
            .collect();
        for engine in Engine::available() {
            let mut tree = MerkleRoot::new();
            tree.extend_with(&piece, engine);
            assert_eq!(tree.root(), reference(&piece), "{engine:?}");
        }
    }
}
