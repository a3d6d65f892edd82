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

/// The RFC 6962 hash of a leaf whose data is `data`: SHA-256(0x00 ‖ data). A ticket's leaf
/// data is its 32 hash bytes.
pub fn leaf_hash(data: &[u8]) -> [u8; 32] {
    Sha256::new()
        .chain_update([0u8])
        .chain_update(data)
        .finalize()
        .into()
}

/// The RFC 6962 hash of an inner node: SHA-256(0x01 ‖ left ‖ right).
pub fn node_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
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
        self.push_data(ticket_hash);
    }

    /// Appends a leaf whose data is `data` (the RFC's `MTH({d(0)}) = SHA-256(0x00 ‖ d(0))`).
    pub fn push_data(&mut self, data: &[u8]) {
        let mut item = (1u64, leaf_hash(data));
        while let Some(&(size, hash)) = self.stack.last() {
            if size != item.0 {
                break;
            }
            self.stack.pop();
            item = (size * 2, node_hash(&hash, &item.1));
        }
        self.stack.push(item);
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
    fn split_point_is_the_largest_power_of_two_below_n() {
        // Checks the test's own reference: n = 5 splits 4 + 1, n = 8 splits 4 + 4.
        let l: Vec<[u8; 32]> = (0u8..8).map(|i| [i; 32]).collect();
        let r5 = node_hash(&reference(&l[..4]), &reference(&l[4..5]));
        assert_eq!(reference(&l[..5]), r5);
        let r8 = node_hash(&reference(&l[..4]), &reference(&l[4..8]));
        assert_eq!(reference(&l[..8]), r8);
        let r3 = node_hash(&reference(&l[..2]), &reference(&l[2..3]));
        assert_eq!(reference(&l[..3]), r3);
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
}
