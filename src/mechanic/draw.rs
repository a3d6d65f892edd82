//! Small drawing helpers shared by the synthesizers (cosmetic randomness only).

use super::LayoutRng;
use rand::Rng;

/// An index drawn with the given weights (not all zero).
pub fn weighted(rng: &mut LayoutRng, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    let mut x = rng.random_range(0..total);
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

/// Fills `cells` with the two symbols the player did not pick, `A` and `B`, as often as the cap
/// of `max_each` allows (three of a kind would show that the choice mattered), and flowers `F`
/// for the rest. The caller shuffles the row afterwards.
pub fn fill_others(rng: &mut LayoutRng, cells: &mut [u8], max_each: usize) {
    let (mut a, mut b) = (0, 0);
    for cell in cells {
        *cell = match rng.random_range(0..8u32) {
            0..=2 if a < max_each => {
                a += 1;
                b'A'
            }
            3..=5 if b < max_each => {
                b += 1;
                b'B'
            }
            _ => b'F',
        };
    }
}
