//! Who wins what: the block key and the prize order of a block.
//!
//! Every block has a 32-byte key derived from the emission seed and the block's coordinates
//! (game, stake, emission, block). The order of the prizes is a Fisher–Yates shuffle driven by
//! ChaCha20 keyed with it, so it is unpredictable without the seed, yet any block can be made
//! again, alone, on any machine. The cosmetic parts of each ticket come from a fast PCG seeded
//! from the block key and the ticket's index, so tickets can be made in any order on any
//! thread with the same result.

use crate::game::Stake;
use crate::mechanic::LayoutRng;
use crate::money::canonical;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

/// An emission's secret seed.
pub type Seed = [u8; 32];

/// Domain-separation labels: bump them and every derived value changes.
const BLOCK_LABEL: &[u8] = b"emission-factory/v1/block-key";
const LAYOUT_LABEL: &[u8] = b"emission-factory/v1/layout-key";

/// The keys of one block.
#[derive(Clone)]
pub struct BlockKey {
    /// Keys the ChaCha20 shuffle that decides the prize order.
    prize_key: [u8; 32],
    /// Seeds the cosmetic generator of each ticket.
    layout_key: [u8; 32],
}

impl BlockKey {
    /// Derives the keys of block `block` of emission `emission` of this game and stake.
    pub fn derive(seed: &Seed, game_id: &str, stake: &Stake, emission: u32, block: u32) -> Self {
        let mut h = Sha256::new();
        h.update(BLOCK_LABEL);
        h.update(seed);
        // Length-prefixed so that no two (game, stake) pairs hash alike.
        for field in [game_id.as_bytes(), canonical(stake.price).as_bytes()] {
            h.update((field.len() as u64).to_be_bytes());
            h.update(field);
        }
        h.update(emission.to_be_bytes());
        h.update(block.to_be_bytes());
        let prize_key: [u8; 32] = h.finalize().into();
        let layout_key: [u8; 32] = Sha256::new()
            .chain_update(LAYOUT_LABEL)
            .chain_update(prize_key)
            .finalize()
            .into();
        BlockKey {
            prize_key,
            layout_key,
        }
    }

    /// The cosmetic generator of the ticket at `index` in the block.
    pub fn ticket_rng(&self, index: u64) -> LayoutRng {
        let digest = Sha256::new()
            .chain_update(self.layout_key)
            .chain_update(index.to_be_bytes())
            .finalize();
        let mut seed = [0u8; 16];
        seed.copy_from_slice(&digest[..16]);
        LayoutRng::from_seed(seed)
    }

    /// The block's prize list in sale order, as indexes into `stake.tiers()` (0 is the top
    /// prize, the last index is a loser): exactly the Article 3 counts, shuffled by ChaCha20.
    pub fn prize_order(&self, stake: &Stake, block_size: u64) -> Vec<u8> {
        let mut order = Vec::with_capacity(block_size as usize);
        for (tier, prize) in stake.prizes.iter().enumerate() {
            order.extend(std::iter::repeat_n(tier as u8, prize.count as usize));
        }
        let losers = stake.prizes.len() as u8;
        order.resize(block_size as usize, losers);
        order.shuffle(&mut ChaCha20Rng::from_seed(self.prize_key));
        order
    }
}

/// SHA-256 of the seed: the commitment written in every manifest.
pub fn seed_commitment(seed: &Seed) -> [u8; 32] {
    Sha256::digest(seed).into()
}

/// A fresh seed from the operating system's CSPRNG.
pub fn fresh_seed() -> Result<Seed, getrandom::Error> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)?;
    Ok(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use std::collections::BTreeMap;

    #[test]
    fn the_order_holds_exactly_the_table_and_depends_on_every_coordinate() {
        let game = Game::builtin("ruche-or").unwrap();
        let stake = &game.stakes[2];
        let seed = [7u8; 32];
        let key = BlockKey::derive(&seed, &game.id, stake, 1, 1);
        let order = key.prize_order(stake, game.block_size);
        let mut counts = BTreeMap::new();
        for &t in &order {
            *counts.entry(t).or_insert(0u64) += 1;
        }
        for (i, p) in stake.prizes.iter().enumerate() {
            assert_eq!(counts[&(i as u8)], p.count);
        }
        assert_eq!(counts[&(stake.prizes.len() as u8)], 661_647);
        assert_eq!(
            order,
            key.prize_order(stake, game.block_size),
            "deterministic"
        );
        for other in [
            BlockKey::derive(&seed, &game.id, stake, 1, 2),
            BlockKey::derive(&seed, &game.id, stake, 2, 1),
            BlockKey::derive(&seed, &game.id, &game.stakes[1], 1, 1),
            BlockKey::derive(&seed, "maxi-ruche-or", stake, 1, 1),
            BlockKey::derive(&[8u8; 32], &game.id, stake, 1, 1),
        ] {
            assert_ne!(order, other.prize_order(stake, game.block_size));
        }
    }
}
