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
        // SHA-256(layout key ‖ index): 40 bytes, one block, once per ticket.
        let digest = crate::hash::sha256::short(&[&self.layout_key, &index.to_be_bytes()]);
        layout_rng(&digest)
    }

    /// The cosmetic generators of the tickets at `indexes`, in order: the same as
    /// [`ticket_rng`](Self::ticket_rng) of each, their seeds hashed together
    /// ([`crate::hash::sha256::digest_many`]).
    pub fn ticket_rngs(&self, indexes: std::ops::Range<u64>) -> Vec<LayoutRng> {
        use crate::hash::sha256::{digest_fixed, Engine};
        // The 40-byte message padded: the layout key, the index at 32..40, then 0x80 and the
        // length in bits; only the index differs from one ticket to the next.
        let mut template = [0u8; 64];
        template[..32].copy_from_slice(&self.layout_key);
        template[40] = 0x80;
        template[56..].copy_from_slice(&(40u64 * 8).to_be_bytes());
        let start = indexes.start;
        let mut seeds = vec![[0u8; 32]; indexes.count()];
        let fill = |i: usize, _: usize, block: &mut [u8; 64]| {
            block[32..40].copy_from_slice(&(start + i as u64).to_be_bytes());
        };
        digest_fixed(&[template], fill, &mut seeds, Engine::best());
        seeds.iter().map(layout_rng).collect()
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
        order.shuffle(&mut self.prize_generator());
        order
    }

    /// The generator of the prize order: ChaCha20 (20 rounds) keyed with the prize key, nonce
    /// and counter 0 (docs/SPEC.md §4, "The prize order"). [`prize_order`](Self::prize_order)
    /// draws from it; `lab raw` writes its raw output for test laboratories.
    pub fn prize_generator(&self) -> ChaCha20Rng {
        ChaCha20Rng::from_seed(self.prize_key)
    }
}

/// A ticket's cosmetic generator from its seed digest (the first 16 bytes seed it).
fn layout_rng(digest: &[u8; 32]) -> LayoutRng {
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&digest[..16]);
    LayoutRng::from_seed(seed)
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

    #[test]
    fn ticket_rngs_are_the_ticket_rng_of_each_index() {
        use rand::RngCore;
        let game = Game::builtin("ruche-or").unwrap();
        let key = BlockKey::derive(&[3u8; 32], &game.id, &game.stakes[0], 1, 1);
        for range in [0..0, 0..1, 5..12, 1000..1203, u64::MAX - 3..u64::MAX] {
            let rngs = key.ticket_rngs(range.clone());
            assert_eq!(rngs.len() as u64, range.end - range.start);
            for (index, mut rng) in range.zip(rngs) {
                let mut alone = key.ticket_rng(index);
                assert_eq!(rng.next_u64(), alone.next_u64(), "ticket {index}");
                assert_eq!(rng, alone, "ticket {index}");
            }
        }
    }

    /// Pinned: the keys of fixed coordinates, the first 32 prizes of their order and the first
    /// 3 layouts of each built-in game. Any change fails here on purpose: bump
    /// GENERATOR_VERSION (docs/SPEC.md §4) and update these values.
    #[test]
    fn known_answers_for_fixed_coordinates() {
        let seed: Seed =
            hex::decode("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
                .unwrap()
                .try_into()
                .unwrap();
        let mut found = Vec::new();
        for (id, price) in [("ruche-or", 2), ("maxi-ruche-or", 3), ("annee-chance", 3)] {
            let game = Game::builtin(id).unwrap();
            let stake = game.stake(rust_decimal::Decimal::from(price)).unwrap();
            let key = BlockKey::derive(&seed, &game.id, stake, 1, 1);
            let order = key.prize_order(stake, game.block_size);
            let tiers = stake.tiers();
            let first: Vec<String> = order[..32]
                .iter()
                .map(|&t| canonical(tiers[t as usize]))
                .collect();
            let synthesizer = stake.synthesizer().unwrap();
            let mut layouts = Vec::new();
            for i in 0..3u64 {
                let mut out = Vec::new();
                synthesizer
                    .synthesize(
                        tiers[order[i as usize] as usize],
                        &mut key.ticket_rng(i),
                        &mut out,
                    )
                    .unwrap();
                layouts.push(String::from_utf8(out).unwrap());
            }
            found.push(format!(
                "{id} {price}: prize key {}, layout key {}\nfirst prizes {}\n{}",
                hex::encode(key.prize_key),
                hex::encode(key.layout_key),
                first.join(" "),
                layouts.join("\n")
            ));
        }
        let found = found.join("\n");
        assert_eq!(found, KNOWN_ANSWERS.trim(), "\n{found}\n");
    }

    const KNOWN_ANSWERS: &str = r#"
ruche-or 2: prize key 96e60bcae48fd832681e74709006e95309c03e92cb182bee8e2bbfb12723e1e7, layout key 84c85d7fc7764d5042525f40b838ac696b0526d797da5f14fd1e6e3a20dafce3
first prizes 4 0 4 0 0 0 2 4 0 0 2 0 6 0 0 0 0 0 0 0 6 0 0 0 2 0 2 0 0 20 4 0
30:PBAB/2:FPBPP/2:PBBFAA/30:FBHFFPB/2000:PPBBAF/2:PPAPF/10:FAPF
20:BFFA/10:EFAPA/30:APEAFP/2:AFPBABF/10:PAEFPA/100:BAFFA/20000:PFAB|6:HHPP/20:BBFAP/20000:ABFFAB/100:BAFFFFB/2:FABBFA/100:AABFB/4:FBAB|40:PPFF/10:APBFA/20000:BPFABF/6:FABAPFB/10:ABPPAB/2:PFHPB/10:FFPP|20000:PABB/4:BFBPF/4:FPHFAF/40:PFAFBAB/10:PPHABB/2000:ABFPB/20000:FBBA
2:HPBA/4:PBFPP/10:BPBHPF/100:PPFAABB/100:ABAFPF/30:PBAFB/2:FPPA
maxi-ruche-or 3: prize key 5bcc42ec55831ea99bd5642be299398b446c8f235353043f3d4eaec31ff1137b, layout key e58bc9508a5a78bc57d2ed7786c2d699a1212a602c755fefc497539dff3d1922
first prizes 3 50 0 0 0 3 3 0 5 0 0 5 3 3 0 0 0 0 0 0 0 3 0 0 0 0 0 5 0 3 5 0
40#2500:PABP/50000:FPBAE/5:ABAFFB/1:PFBF3PP/100000:A4BFPP/2500:PAFPF/50:BAPP|3#100000:BPAP/250:PABBP/20:FBFPAB/10:FFPBBAF/100:PABFAB/10:FPFBP/100000:FBBP
40#500:BPPA/5:PPBFP/5:BPFPPF/100000:PABFPFA/5000:FFAFQP/1:FPPFB/100:FAFP
40#10:PPBF/20:BPFFP/2500:AFPBBF/2:PAFEA3F/2:BBPFAA/10:PBABP/50:BBPA|5000#1000:BAFA/1:PBPBA/100:BFAFAB/2:FAFPABF/50000:PBABPA/50:PBBFP/100000:4BPP+..Q.....Q...
annee-chance 3: prize key 31593332fd2e057a1295b7405eedf6d8575e652458d430b28b0edb21fa5f5f9b, layout key 30e65897098a8e473522359780e94b1ea53c1b4376ef125b7f136e2668cb3a58
first prizes 10 0 0 0 0 0 0 0 0 0 0 0 6 0 0 0 0 0 0 0 0 6 0 0 0 0 0 0 0 0 0 0
CB:4/EE:3/HA:40000/DA:3/BB:2/DE:4/GD:6/EE:2/GF:30/DF:40000/FA:1000/FG:500|6-13-7:3
HG:30/FH:5/GF:100/FG:50/DH:100/CD:40/EF:4/BA:4/FE:4/BF:6/AH:2/HF:5|1-7-12:20
BA:10000/HD:10000/FE:6/AG:4/AE:2/HF:30/EB:100/CA:20/AF:5/GF:50/CD:500/FH:1000|2-9-10:6
"#;
}
