//! Shamir's secret sharing of a 32-byte seed over GF(2^8), byte by byte.
//!
//! Written here rather than taken from a crate, on purpose: it is about sixty lines, the
//! arithmetic is branch-free and table-free (no secret-dependent memory access, unlike the
//! log/exp tables of `sharks` and its fork `blahaj`), and it uses the field of Debian's
//! `libgfshare` (reduction polynomial x^8 + x^4 + x^3 + x^2 + 1, 0x11d) with the share index as
//! the x coordinate. So `gfcombine` (package `libgfshare-bin`), an implementation we did not
//! write, rebuilds a seed from our shares and we rebuild one from its shares: the tests check
//! both ways, with vectors made by `gfsplit` pinned below and, when installed, live.
//!
//! Share `i` (1 ≤ i ≤ n ≤ 255) holds, for every byte `s` of the seed, `f(i)` where
//! `f(x) = s + c1·x + … + c(k-1)·x^(k-1)` with coefficients fresh from the OS CSPRNG; any `k`
//! shares give `f(0) = s` by Lagrange interpolation, fewer give no information about it.

use super::CustodyError;
use crate::plan::Seed;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

/// Bytes of a seed, and of a share.
pub const LEN: usize = 32;

/// One share: its index (the x coordinate, 1..=255) and the 32 values f(index).
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct Share {
    index: u8,
    bytes: [u8; LEN],
}

impl Share {
    /// A share from its index and bytes (as read from a share file).
    pub fn new(index: u8, bytes: [u8; LEN]) -> Self {
        Share { index, bytes }
    }

    /// The index of the share, its x coordinate.
    pub fn index(&self) -> u8 {
        self.index
    }

    /// The share's bytes: secret, handle with care (they never go into a message).
    pub fn bytes(&self) -> &[u8; LEN] {
        &self.bytes
    }
}

impl std::fmt::Debug for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Share {{ index: {}, bytes: <secret> }}", self.index)
    }
}

/// Product in GF(2^8) modulo 0x11d, in constant time: eight shift-and-add rounds with masks.
fn mul(mut a: u8, mut b: u8) -> u8 {
    let mut product = 0u8;
    for _ in 0..8 {
        product ^= a & (b & 1).wrapping_neg();
        let carry = (a >> 7).wrapping_neg();
        a = (a << 1) ^ (0x1d & carry);
        b >>= 1;
    }
    product
}

/// Inverse in GF(2^8): a^254 (a^255 = 1 for a ≠ 0); 0 maps to 0, callers never pass it.
fn inv(a: u8) -> u8 {
    let (mut power, mut result) = (a, 1u8);
    for _ in 0..7 {
        power = mul(power, power); // a^2, a^4, … a^128
        result = mul(result, power); // a^(2+4+…+128) = a^254
    }
    result
}

/// Splits `seed` into `n` shares, any `k` of which rebuild it (2 ≤ k ≤ n ≤ 255).
pub fn split(seed: &Seed, k: u8, n: u8) -> Result<Vec<Share>, CustodyError> {
    check_parameters(k, n)?;
    let mut coefficients = Zeroizing::new(vec![0u8; LEN * usize::from(k - 1)]);
    getrandom::fill(&mut coefficients).map_err(|e| CustodyError::Random(e.to_string()))?;
    Ok(split_with(seed, n, &coefficients))
}

/// Checks 2 ≤ k ≤ n ≤ 255 (n ≤ 255 holds by type: x runs over the 255 non-zero bytes).
pub fn check_parameters(k: u8, n: u8) -> Result<(), CustodyError> {
    if k < 2 || k > n {
        return Err(CustodyError::Threshold { k, n });
    }
    Ok(())
}

/// Splits with the given coefficients: `LEN` bytes per degree, degree 1 first.
fn split_with(seed: &Seed, n: u8, coefficients: &[u8]) -> Vec<Share> {
    (1..=n)
        .map(|x| {
            let mut bytes = [0u8; LEN];
            for (j, out) in bytes.iter_mut().enumerate() {
                // Horner, from the highest degree down to the seed byte.
                let mut y = 0u8;
                for c in coefficients.chunks_exact(LEN).rev() {
                    y = mul(y, x) ^ c[j];
                }
                *out = mul(y, x) ^ seed[j];
            }
            Share::new(x, bytes)
        })
        .collect()
}

/// Rebuilds the seed from shares with distinct non-zero indexes: f(0) by Lagrange
/// interpolation. Given fewer than the threshold the result is a wrong seed, which only the
/// caller can tell (by the commitment); given more, all must lie on the same polynomial.
pub fn combine(shares: &[Share]) -> Result<Zeroizing<Seed>, CustodyError> {
    for (i, a) in shares.iter().enumerate() {
        if a.index == 0 || shares[..i].iter().any(|b| b.index == a.index) {
            return Err(CustodyError::ShareIndexes);
        }
    }
    let mut seed = Zeroizing::new([0u8; LEN]);
    for a in shares {
        // The Lagrange basis polynomial of x_a at 0: prod over b ≠ a of x_b / (x_b - x_a);
        // minus is xor in GF(2^8). The indexes are public, so this is not secret data.
        let (mut num, mut den) = (1u8, 1u8);
        for b in shares.iter().filter(|b| b.index != a.index) {
            num = mul(num, b.index);
            den = mul(den, b.index ^ a.index);
        }
        let basis = mul(num, inv(den));
        for (out, &y) in seed.iter_mut().zip(&a.bytes) {
            *out ^= mul(y, basis);
        }
    }
    Ok(seed)
}

/// Every subset of `items` of size `k`, in order.
#[cfg(test)]
pub(crate) fn subsets<T: Clone>(items: &[T], k: usize) -> Vec<Vec<T>> {
    if k == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for (i, first) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], k - 1) {
            rest.insert(0, first.clone());
            out.push(rest);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(index: u8, hex_bytes: &str) -> Share {
        let mut bytes = [0u8; LEN];
        hex::decode_to_slice(hex_bytes, &mut bytes).unwrap();
        Share::new(index, bytes)
    }

    #[test]
    fn the_field_is_gf256_modulo_0x11d() {
        // The worked example of Wikiversity's "Reed–Solomon codes for coders", which uses the
        // same field: 10001001 × 00101010 = 11000011 modulo 100011101.
        assert_eq!(mul(0b1000_1001, 0b0010_1010), 0b1100_0011);
        // x^8 reduces to x^4 + x^3 + x^2 + 1.
        assert_eq!(mul(0x80, 0x02), 0x1d);
        // 2 generates the multiplicative group: its powers run over all 255 non-zero bytes.
        let mut seen = [false; 256];
        let mut p = 1u8;
        for _ in 0..255 {
            assert!(!seen[usize::from(p)], "2 has order below 255");
            seen[usize::from(p)] = true;
            p = mul(p, 2);
        }
        assert_eq!(p, 1);
        // Field laws, exhaustively.
        for a in 0..=255u8 {
            assert_eq!(mul(a, 1), a);
            assert_eq!(mul(a, 0), 0);
            if a != 0 {
                assert_eq!(mul(a, inv(a)), 1, "inverse of {a}");
            }
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul(b, a));
                assert_eq!(mul(a, b ^ 0x5a), mul(a, b) ^ mul(a, 0x5a));
            }
        }
    }

    /// Shares made by Debian's `gfsplit` (libgfshare 2.0.0) from the 32 bytes of
    /// "libgfshare vector: 32-byte seed!"; file `s.NNN` is the share of index NNN.
    const GF_SECRET: &[u8; 32] = b"libgfshare vector: 32-byte seed!";
    const GF_2_OF_3: [(u8, &str); 3] = [
        (
            21,
            "28e5a8b9f0a43344d282403ab5bc6666a249c9d09a4ea1c8b095f919b7e38168",
        ),
        (
            59,
            "8b7176b315d7d4473cdc1a1a1a4c941f0d1b3241f70706c7cb0c2f29f11d367d",
        ),
        (
            224,
            "aaa7cbf0d68451229f317b0eb22ab40fa57f34386109ab2b9d70973713b491d8",
        ),
    ];
    const GF_3_OF_5: [(u8, &str); 5] = [
        (
            21,
            "b0bfed19bb415ae440207de10250792c5d0527b5a8ba5a215916cf12aaca5186",
        ),
        (
            59,
            "1b255b7627936f497f6d42f14a4dea6a467876580c51dfd0792ecacf640bcf8e",
        ),
        (
            62,
            "a2d9d2bce46c14bd638dc70cc7378f184cad1c8fcf3852382531fd18f40b9829",
        ),
        (
            224,
            "2847b422348de26113b67f08744ae732451766e5443056c49f325c8de14a5ef5",
        ),
        (
            243,
            "dd67b544fe7f76695e68879e9b56f774d4196aa7ba29c2181479769895ed88dd",
        ),
    ];

    #[test]
    fn shares_made_by_libgfshare_combine_to_its_secret() {
        for (vector, k) in [(&GF_2_OF_3[..], 2), (&GF_3_OF_5[..], 3)] {
            let shares: Vec<Share> = vector.iter().map(|&(x, y)| share(x, y)).collect();
            for size in k..=shares.len() {
                for subset in subsets(&shares, size) {
                    assert_eq!(*combine(&subset).unwrap(), *GF_SECRET);
                }
            }
            for subset in subsets(&shares, k - 1) {
                assert_ne!(*combine(&subset).unwrap(), *GF_SECRET);
            }
        }
    }

    #[test]
    fn known_answer_split_with_fixed_coefficients() {
        // Pins the bytes: f(x) = s + c1·x, s = 0x00..0x1f, c1 = 0x80..0x9f.
        let seed: Seed = std::array::from_fn(|i| i as u8);
        let c1: Vec<u8> = (0x80..0xa0).collect();
        let shares = split_with(&seed, 3, &c1);
        assert_eq!(
            hex::encode(shares[0].bytes()),
            "8080808080808080808080808080808080808080808080808080808080808080"
        );
        // f(2) = s ^ 2·c1, and 2·c = c << 1 ^ 0x1d for c ≥ 0x80.
        let expected: Vec<u8> = (0..32u8).map(|i| i ^ (((0x80 + i) << 1) ^ 0x1d)).collect();
        assert_eq!(shares[1].bytes().as_slice(), expected.as_slice());
        assert_eq!(
            shares.iter().map(Share::index).collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }

    #[test]
    fn every_subset_of_size_k_rebuilds_and_k_minus_1_does_not() {
        let seed: Seed = *b"an emission seed of 32 bytes....";
        for (k, n) in [(2u8, 3u8), (3, 5), (2, 2), (5, 5), (4, 9)] {
            let shares = split(&seed, k, n).unwrap();
            assert_eq!(shares.len(), usize::from(n));
            for size in usize::from(k)..=usize::from(n) {
                for subset in subsets(&shares, size) {
                    assert_eq!(*combine(&subset).unwrap(), seed, "{k} of {n}");
                }
            }
            for subset in subsets(&shares, usize::from(k) - 1) {
                assert_ne!(*combine(&subset).unwrap(), seed, "{k} of {n}, k-1 shares");
            }
        }
        // All 255 indexes.
        let shares = split(&seed, 200, 255).unwrap();
        assert_eq!(*combine(&shares).unwrap(), seed);
        assert_eq!(*combine(&shares[55..]).unwrap(), seed);
    }

    #[test]
    fn two_splits_of_one_seed_differ() {
        let seed = [9u8; 32];
        let a = split(&seed, 2, 3).unwrap();
        let b = split(&seed, 2, 3).unwrap();
        assert_ne!(a[0].bytes(), b[0].bytes());
        // Shares of different splits do not combine to the seed.
        assert_ne!(*combine(&[a[0].clone(), b[1].clone()]).unwrap(), seed);
    }

    #[test]
    fn bad_parameters_and_indexes_are_refused() {
        let seed = [1u8; 32];
        for (k, n) in [(0, 3), (1, 3), (4, 3), (2, 1), (0, 0)] {
            assert!(matches!(
                split(&seed, k, n),
                Err(CustodyError::Threshold { .. })
            ));
        }
        let s = split(&seed, 2, 3).unwrap();
        assert!(matches!(
            combine(&[s[0].clone(), s[0].clone()]),
            Err(CustodyError::ShareIndexes)
        ));
        assert!(matches!(
            combine(&[Share::new(0, [0; 32]), s[1].clone()]),
            Err(CustodyError::ShareIndexes)
        ));
    }

    #[test]
    fn debug_shows_no_share_bytes() {
        let s = Share::new(7, [0xab; 32]);
        let text = format!("{s:?}");
        assert!(!text.contains("ab") && !text.contains("171"), "{text}");
        assert!(text.contains("index: 7"));
    }

    /// Live check against the `gfsplit` on this machine, when installed (Debian package
    /// `libgfshare-bin`; `.ci/run` installs it).
    #[test]
    fn shares_made_by_the_installed_gfsplit_combine() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("temporary folder");
        };
        let secret = dir.path().join("s");
        let seed = [0x5cu8; 32];
        std::fs::write(&secret, seed).unwrap();
        let status = std::process::Command::new("gfsplit")
            .args(["-n", "3", "-m", "5"])
            .arg(&secret)
            .status();
        let Ok(status) = status else {
            crate::test_support::cannot_run(
                "gfsplit is not installed (apt-get install libgfshare-bin; .ci/run does it)",
            );
            return;
        };
        assert!(status.success());
        let mut shares = Vec::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
                continue;
            };
            let bytes: [u8; 32] = std::fs::read(&path).unwrap().try_into().unwrap();
            shares.push(Share::new(ext.parse().unwrap(), bytes));
        }
        assert_eq!(shares.len(), 5);
        for subset in subsets(&shares, 3) {
            assert_eq!(*combine(&subset).unwrap(), seed);
        }
    }
}
