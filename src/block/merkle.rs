//! The Merkle tree of RFC 6962 §2.1 over the tickets of a block, computed as a stream.
//!
//! Leaves are `SHA-256(0x00 ‖ ticket hash)`, nodes `SHA-256(0x01 ‖ left ‖ right)`, and a list of
//! `n` leaves splits at the largest power of two below `n`. Pushing leaves one by one and
//! merging equal-sized perfect subtrees keeps at most 64 hashes in memory; folding the stack
//! from the right at the end gives exactly the RFC's root for any `n`.

use sha2::{Digest, Sha256};

/// A running Merkle root.
#[derive(Debug, Default, Clone)]
pub struct MerkleRoot {
    /// Perfect subtrees, largest first: (number of leaves, hash).
    stack: Vec<(u64, [u8; 32])>,
}

fn node(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    Sha256::new()
        .chain_update([1u8])
        .chain_update(left)
        .chain_update(right)
        .finalize()
        .into()
}

impl MerkleRoot {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the leaf of a ticket whose hash is `ticket_hash`.
    pub fn push(&mut self, ticket_hash: &[u8; 32]) {
        let leaf: [u8; 32] = Sha256::new()
            .chain_update([0u8])
            .chain_update(ticket_hash)
            .finalize()
            .into();
        let mut item = (1u64, leaf);
        while let Some(&(size, hash)) = self.stack.last() {
            if size != item.0 {
                break;
            }
            self.stack.pop();
            item = (size * 2, node(&hash, &item.1));
        }
        self.stack.push(item);
    }

    /// The root (the RFC's hash of the empty list if nothing was pushed).
    pub fn root(&self) -> [u8; 32] {
        let mut iter = self.stack.iter().rev();
        match iter.next() {
            None => Sha256::digest([]).into(),
            Some(&(_, last)) => iter.fold(last, |acc, (_, left)| node(left, &acc)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RFC's recursive definition, written out directly.
    fn reference(leaves: &[[u8; 32]]) -> [u8; 32] {
        match leaves.len() {
            0 => Sha256::digest([]).into(),
            1 => Sha256::new()
                .chain_update([0u8])
                .chain_update(leaves[0])
                .finalize()
                .into(),
            n => {
                let mut k = 1;
                while k * 2 < n {
                    k *= 2;
                }
                node(&reference(&leaves[..k]), &reference(&leaves[k..]))
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
    fn split_point_is_the_largest_power_of_two_below_n() {
        // Checks the test's own reference: n = 5 splits 4 + 1, n = 8 splits 4 + 4.
        let l: Vec<[u8; 32]> = (0u8..8).map(|i| [i; 32]).collect();
        let r5 = node(&reference(&l[..4]), &reference(&l[4..5]));
        assert_eq!(reference(&l[..5]), r5);
        let r8 = node(&reference(&l[..4]), &reference(&l[4..8]));
        assert_eq!(reference(&l[..8]), r8);
        let r3 = node(&reference(&l[..2]), &reference(&l[2..3]));
        assert_eq!(reference(&l[..3]), r3);
    }
}
