//! RFC 6962 audit paths (§2.1.1): the sibling subtree hashes that lead from one leaf of a block's
//! Merkle tree to its root, and the fold that checks them (the algorithm of RFC 9162
//! §2.1.3.2, which refuses a path of the wrong length).
//!
//! A path is made from the ticket hashes as a stream ([`PathBuilder`]): the subtrees of a path
//! are disjoint ranges of leaves, in order, so one running [`MerkleRoot`] at a time is enough and
//! a block of 7.5 million tickets never needs its leaves in memory.

use super::merkle::{leaf_hash, node_hash, MerkleRoot};
use std::ops::Range;

/// The longest audit path: a tree of at most 2⁶⁴ leaves is at most 64 levels deep.
pub const MAX_PATH_LEN: usize = 64;

/// Why a path cannot be made or does not fold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The leaf is not in the tree.
    #[error("leaf {index} is not in a tree of {size} leaves")]
    OutOfRange {
        /// The leaf's index (from 0).
        index: u64,
        /// The number of leaves.
        size: u64,
    },
    /// The path has not the length a path of this leaf in a tree of this size has.
    #[error(
        "the audit path has {found} hashes; leaf {index} of a tree of {size} leaves has {expected}"
    )]
    Length {
        /// Hashes in the path given.
        found: usize,
        /// Hashes a path of this leaf has.
        expected: usize,
        /// The leaf's index.
        index: u64,
        /// The number of leaves.
        size: u64,
    },
    /// The builder was given another number of leaves than the tree's size.
    #[error("{pushed} leaves were given for a tree of {size}")]
    Leaves {
        /// Leaves pushed.
        pushed: u64,
        /// The tree's size.
        size: u64,
    },
}

/// The ranges of leaves whose subtree hashes make the audit path of leaf `index` in a tree of
/// `size` leaves, in the path's order (the leaf's sibling first, the root's child last). They
/// cover every leaf but `index`, once.
pub fn path_ranges(index: u64, size: u64) -> Result<Vec<Range<u64>>, PathError> {
    if index >= size {
        return Err(PathError::OutOfRange { index, size });
    }
    let mut ranges = Vec::new();
    // From the root down; the path lists them from the leaf up.
    let (mut lo, mut hi) = (0u64, size);
    while hi - lo > 1 {
        // The split of RFC 6962: the largest power of two below n.
        let n = hi - lo;
        let k = 1u64 << (63 - (n - 1).leading_zeros());
        if index < lo + k {
            ranges.push(lo + k..hi);
            hi = lo + k;
        } else {
            ranges.push(lo..lo + k);
            lo += k;
        }
    }
    ranges.reverse();
    Ok(ranges)
}

/// Makes the audit path of one leaf from all the leaves, given in order.
#[derive(Debug)]
pub struct PathBuilder {
    index: u64,
    size: u64,
    /// (range, its place in the path), by the range's start.
    ranges: Vec<(Range<u64>, usize)>,
    /// The range being summed.
    current: usize,
    subtree: MerkleRoot,
    path: Vec<[u8; 32]>,
    leaf: Option<[u8; 32]>,
    pushed: u64,
}

impl PathBuilder {
    /// A builder for the path of leaf `index` in a tree of `size` leaves.
    pub fn new(index: u64, size: u64) -> Result<Self, PathError> {
        let ranges = path_ranges(index, size)?;
        let path = vec![[0u8; 32]; ranges.len()];
        let mut by_start: Vec<(Range<u64>, usize)> = ranges.into_iter().zip(0..).collect();
        by_start.sort_by_key(|(r, _)| r.start);
        Ok(PathBuilder {
            index,
            size,
            ranges: by_start,
            current: 0,
            subtree: MerkleRoot::new(),
            path,
            leaf: None,
            pushed: 0,
        })
    }

    /// Gives the next leaf's data (a ticket's 32 hash bytes).
    pub fn push(&mut self, data: &[u8]) {
        let i = self.pushed;
        self.pushed += 1;
        if i == self.index {
            self.leaf = Some(leaf_hash(data));
            return;
        }
        let Some((range, slot)) = self.ranges.get(self.current) else {
            return; // beyond the tree: `finish` says so
        };
        if range.contains(&i) {
            self.subtree.push_data(data);
            if i + 1 == range.end {
                self.path[*slot] = self.subtree.root();
                self.subtree = MerkleRoot::new();
                self.current += 1;
            }
        }
    }

    /// The leaf's hash and its audit path, once every leaf was given.
    pub fn finish(self) -> Result<([u8; 32], Vec<[u8; 32]>), PathError> {
        match self.leaf {
            Some(leaf) if self.pushed == self.size && self.current == self.ranges.len() => {
                Ok((leaf, self.path))
            }
            _ => Err(PathError::Leaves {
                pushed: self.pushed,
                size: self.size,
            }),
        }
    }
}

/// The root that the audit path `path` of leaf `index` (whose hash is `leaf`) in a tree of
/// `size` leaves leads to. A path of another length than that leaf's is refused.
pub fn root_from_path(
    index: u64,
    size: u64,
    leaf: &[u8; 32],
    path: &[[u8; 32]],
) -> Result<[u8; 32], PathError> {
    if index >= size {
        return Err(PathError::OutOfRange { index, size });
    }
    let expected = path_len(index, size);
    if path.len() != expected {
        return Err(PathError::Length {
            found: path.len(),
            expected,
            index,
            size,
        });
    }
    // RFC 9162 §2.1.3.2.
    let (mut f, mut s) = (index, size - 1);
    let mut root = *leaf;
    for sibling in path {
        if f & 1 == 1 || f == s {
            root = node_hash(sibling, &root);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            root = node_hash(&root, sibling);
        }
        f >>= 1;
        s >>= 1;
    }
    Ok(root)
}

/// The length of the audit path of leaf `index` (< `size`) in a tree of `size` leaves.
fn path_len(index: u64, size: u64) -> usize {
    let (mut lo, mut hi, mut len) = (0u64, size, 0);
    while hi - lo > 1 {
        let k = 1u64 << (63 - (hi - lo - 1).leading_zeros());
        if index < lo + k {
            hi = lo + k;
        } else {
            lo += k;
        }
        len += 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::{Digest, Sha256};

    fn data(i: u64) -> [u8; 32] {
        Sha256::digest(i.to_be_bytes()).into()
    }

    fn root(size: u64) -> [u8; 32] {
        let mut tree = MerkleRoot::new();
        (0..size).for_each(|i| tree.push(&data(i)));
        tree.root()
    }

    fn path(index: u64, size: u64) -> ([u8; 32], Vec<[u8; 32]>) {
        let mut builder = PathBuilder::new(index, size).unwrap();
        (0..size).for_each(|i| builder.push(&data(i)));
        builder.finish().unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        /// For every size of 1 to 70 leaves and every leaf: the path folds to the root the
        /// block's own MerkleRoot computes, has the length the fold requires, and a change of
        /// any one bit (drawn) of any of its hashes or of the leaf, or another index, leads
        /// elsewhere.
        #[test]
        fn every_path_folds_to_the_block_root(bit in 0usize..256) {
            for size in 1u64..=70 {
            let expected = root(size);
            for index in 0..size {
                let (leaf, path) = path(index, size);
                prop_assert_eq!(leaf, leaf_hash(&data(index)));
                prop_assert_eq!(path.len(), path_len(index, size));
                prop_assert!(path.len() <= MAX_PATH_LEN);
                prop_assert_eq!(root_from_path(index, size, &leaf, &path), Ok(expected));
                let ranges = path_ranges(index, size).unwrap();
                let covered: u64 = ranges.iter().map(|r| r.end - r.start).sum();
                prop_assert_eq!(covered, size - 1);
                for (at, range) in ranges.iter().enumerate() {
                    let mut sub = MerkleRoot::new();
                    range.clone().for_each(|i| sub.push(&data(i)));
                    prop_assert_eq!(sub.root(), path[at]);
                }
                for at in 0..path.len() {
                    let mut bad = path.clone();
                    bad[at][bit / 8] ^= 1 << (bit % 8);
                    prop_assert_ne!(root_from_path(index, size, &leaf, &bad), Ok(expected));
                }
                let mut bad_leaf = leaf;
                bad_leaf[bit / 8] ^= 1 << (bit % 8);
                prop_assert_ne!(root_from_path(index, size, &bad_leaf, &path), Ok(expected));
                for other in (0..size).filter(|&o| o != index) {
                    prop_assert_ne!(root_from_path(other, size, &leaf, &path), Ok(expected));
                }
            }
            }
        }
    }

    #[test]
    fn paths_of_the_wrong_length_or_leaf_are_refused() {
        let (leaf, path) = path(5, 7);
        assert_eq!(path.len(), 3);
        let mut longer = path.clone();
        longer.push([0; 32]);
        assert!(matches!(
            root_from_path(5, 7, &leaf, &longer),
            Err(PathError::Length {
                found: 4,
                expected: 3,
                ..
            })
        ));
        assert!(matches!(
            root_from_path(5, 7, &leaf, &path[..2]),
            Err(PathError::Length { .. })
        ));
        assert_eq!(
            root_from_path(7, 7, &leaf, &path),
            Err(PathError::OutOfRange { index: 7, size: 7 })
        );
        // The last leaf of 7 has a path of two: (4..6) and (0..4).
        assert_eq!(path_ranges(6, 7).unwrap(), vec![4..6, 0..4]);
        assert_eq!(path_ranges(0, 1).unwrap(), Vec::<Range<u64>>::new());
        let mut short = PathBuilder::new(2, 3).unwrap();
        short.push(&data(0));
        short.push(&data(1));
        assert_eq!(
            short.finish().unwrap_err(),
            PathError::Leaves { pushed: 2, size: 3 }
        );
    }

    /// The audit paths of the certificate-transparency reference test vectors (RFC 6962 trees
    /// over eight inputs, as in merkle.rs): leaf 0 of 8, leaf 5 of 8, leaf 2 of 3, leaf 1 of 5.
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
        let cases: [(u64, u64, &[&str]); 4] = [
            (
                0,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                5,
                8,
                &[
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                3,
                &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
            ),
            (
                1,
                5,
                &[
                    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ],
            ),
        ];
        for (index, size, expected) in cases {
            let mut builder = PathBuilder::new(index, size).unwrap();
            for input in &inputs[..size as usize] {
                builder.push(&hex::decode(input).unwrap());
            }
            let (_, path) = builder.finish().unwrap();
            let path: Vec<String> = path.iter().map(hex::encode).collect();
            assert_eq!(path, expected, "leaf {index} of {size}");
        }
    }
}
