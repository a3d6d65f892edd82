//! The hot paths of an emission, per ticket: synthesize + decode for each game, the prize
//! shuffle of a block, and the Merkle tree; and, for `report`, decode against explain (the
//! per-ticket explanation) on the same layouts.
//!
//! `cargo bench --bench hot_paths`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emission_factory::block::merkle::MerkleRoot;
use emission_factory::game::Game;
use emission_factory::mechanic;
use emission_factory::plan::BlockKey;

fn synthesize_and_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("ticket");
    group.throughput(Throughput::Elements(1));
    for (id, stake_index) in [("ruche-or", 2), ("maxi-ruche-or", 0), ("annee-chance", 0)] {
        let game = Game::builtin(id).expect("built-in game");
        let stake = &game.stakes[stake_index];
        let synth = mechanic::synthesizer(&game, stake).expect("synthesizer");
        let decoder = mechanic::decoder(&game, stake).expect("decoder");
        // Prizes in block proportions: mostly losers.
        let key = BlockKey::derive(&[1; 32], id, stake, 1, 1);
        let order = key.prize_order(stake, game.block_size);
        let tiers = stake.tiers();
        let mut i = 0usize;
        let mut layout = String::with_capacity(256);
        group.bench_function(format!("{id}/synthesize+decode"), |b| {
            b.iter(|| {
                let prize = tiers[order[i % order.len()] as usize];
                let mut rng = key.ticket_rng(i as u64);
                layout.clear();
                synth
                    .synthesize(prize, &mut rng, &mut layout)
                    .expect("synthesize");
                assert_eq!(decoder.decode(&layout).expect("decode"), prize);
                i += 1;
            })
        });
    }
    group.finish();
}

/// Decoding against explaining, per ticket, on 4 096 layouts in block proportions.
fn decode_and_explain(c: &mut Criterion) {
    let mut group = c.benchmark_group("ticket");
    group.throughput(Throughput::Elements(1));
    for (id, stake_index) in [("ruche-or", 2), ("maxi-ruche-or", 0), ("annee-chance", 0)] {
        let game = Game::builtin(id).expect("built-in game");
        let stake = &game.stakes[stake_index];
        let synth = mechanic::synthesizer(&game, stake).expect("synthesizer");
        let decoder = mechanic::decoder(&game, stake).expect("decoder");
        let explainer = mechanic::explain::explainer(&game, stake).expect("explainer");
        let key = BlockKey::derive(&[1; 32], id, stake, 1, 1);
        let order = key.prize_order(stake, game.block_size);
        let tiers = stake.tiers();
        let layouts: Vec<String> = (0..4096u64)
            .map(|i| {
                let mut layout = String::new();
                let prize = tiers[order[i as usize] as usize];
                synth
                    .synthesize(prize, &mut key.ticket_rng(i), &mut layout)
                    .expect("synthesize");
                layout
            })
            .collect();
        let mut i = 0usize;
        group.bench_function(format!("{id}/decode"), |b| {
            b.iter(|| {
                i += 1;
                decoder.decode(&layouts[i % layouts.len()]).expect("decode")
            })
        });
        group.bench_function(format!("{id}/explain"), |b| {
            b.iter(|| {
                i += 1;
                explainer
                    .explain(&layouts[i % layouts.len()])
                    .expect("explain")
                    .prize
            })
        });
    }
    group.finish();
}

fn plan_and_merkle(c: &mut Criterion) {
    let game = Game::builtin("ruche-or").expect("built-in game");
    let stake = &game.stakes[0];
    let key = BlockKey::derive(&[1; 32], &game.id, stake, 1, 1);
    let mut group = c.benchmark_group("block");
    group.sample_size(10);
    group.bench_function("ruche-or prize shuffle (900 000)", |b| {
        b.iter(|| key.prize_order(stake, game.block_size))
    });
    group.throughput(Throughput::Elements(100_000));
    group.bench_function("merkle 100 000 leaves", |b| {
        b.iter(|| {
            let mut m = MerkleRoot::new();
            for i in 0u32..100_000 {
                let mut leaf = [0u8; 32];
                leaf[..4].copy_from_slice(&i.to_be_bytes());
                m.push(&leaf);
            }
            m.root()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    synthesize_and_decode,
    decode_and_explain,
    plan_and_merkle
);
criterion_main!(benches);
