//! The hot paths of an emission, per ticket: synthesize and decode (both readings: the
//! `Decimal` referee and the one-pass reading in cents) for each game, the check of
//! a whole ticket line as verify runs it (split, hash, serial, prize, decode), the prize shuffle
//! of a block, and the Merkle tree.
//!
//! `cargo bench --bench hot_paths`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emission_factory::block::merkle::MerkleRoot;
use emission_factory::game::Game;
use emission_factory::plan::BlockKey;
use emission_factory::verify::TicketCheck;
use sha2::{Digest, Sha256};

fn synthesize_and_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("ticket");
    group.throughput(Throughput::Elements(1));
    for (id, stake_index) in [("ruche-or", 2), ("maxi-ruche-or", 0), ("annee-chance", 0)] {
        let game = Game::builtin(id).expect("built-in game");
        let stake = &game.stakes[stake_index];
        let synth = stake.synthesizer().expect("synthesizer");
        let decoder = stake.decoder();
        let explainer = stake.mechanic.explainer();
        // Prizes in block proportions: mostly losers.
        let key = BlockKey::derive(&[1; 32], id, stake, 1, 1);
        let order = key.prize_order(stake, game.block_size);
        let tiers = stake.tiers();
        let mut i = 0usize;
        let mut layout = Vec::with_capacity(256);
        group.bench_function(format!("{id}/synthesize"), |b| {
            b.iter(|| {
                let prize = tiers[order[i % order.len()] as usize];
                let mut rng = key.ticket_rng(i as u64);
                layout.clear();
                synth
                    .synthesize(prize, &mut rng, &mut layout)
                    .expect("synthesize");
                i += 1;
            })
        });
        // A block's worth of layouts, decoded round and round.
        let tickets: Vec<(Vec<u8>, rust_decimal::Decimal)> = (0..4096)
            .map(|i| {
                let prize = tiers[order[i] as usize];
                let mut layout = Vec::new();
                synth
                    .synthesize(prize, &mut key.ticket_rng(i as u64), &mut layout)
                    .expect("synthesize");
                (layout, prize)
            })
            .collect();
        group.bench_function(format!("{id}/decode"), |b| {
            b.iter(|| {
                let (layout, prize) = &tickets[i % tickets.len()];
                assert_eq!(decoder.decode(layout).expect("decode"), *prize);
                i += 1;
            })
        });
        // The one-pass reading in cents that emit's re-check and verify run on every ticket
        // (`decode` above is the Decimal path that names the rule a layout breaks).
        group.bench_function(format!("{id}/decode_cents"), |b| {
            b.iter(|| {
                let (layout, prize) = &tickets[i % tickets.len()];
                assert_eq!(
                    Some(decoder.decode_cents(layout).expect("decode")),
                    emission_factory::money::cents(*prize)
                );
                i += 1;
            })
        });
        // What `report` and `show` pay per ticket on top of the decoder.
        group.bench_function(format!("{id}/explain"), |b| {
            b.iter(|| {
                let (layout, prize) = &tickets[i % tickets.len()];
                let text = std::str::from_utf8(layout).expect("UTF-8");
                assert_eq!(explainer.explain(text).expect("explain").prize, *prize);
                i += 1;
            })
        });
        // The same tickets as verify reads them: whole lines of block 1 of emission 1.
        let check = TicketCheck::new(&game, stake, 1, 1).expect("ticket check");
        let prefix = emission_factory::block::serial_prefix(id, stake, 1, 1);
        let lines: Vec<Vec<u8>> = tickets
            .iter()
            .enumerate()
            .map(|(i, (layout, prize))| {
                let prize = emission_factory::money::canonical(*prize);
                let layout = String::from_utf8_lossy(layout);
                let body = format!("{prefix}{i:07},{prize},{layout}");
                let hash = hex::encode(Sha256::digest(body.as_bytes()));
                format!("{body},{hash}").into_bytes()
            })
            .collect();
        group.bench_function(format!("{id}/ticket line check"), |b| {
            b.iter(|| {
                let n = i % lines.len();
                check.check(&lines[n], n as u64).expect("valid line");
                i += 1;
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
    group.bench_function("merkle root of 100 000 leaves", |b| {
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

criterion_group!(benches, synthesize_and_decode, plan_and_merkle);
criterion_main!(benches);
