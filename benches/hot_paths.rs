//! The hot paths of an emission, per ticket: synthesize and decode (both readings: the
//! `Decimal` referee and the one-pass reading in cents) for each game, the check of
//! a whole ticket line as verify runs it (split, hash, serial, prize, decode), the prize shuffle
//! of a block, the Merkle tree, and SHA-256 one message at a time or several together.
//!
//! `cargo bench --bench hot_paths`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emission_factory::game::Game;
use emission_factory::hash::merkle::MerkleRoot;
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
        let check = TicketCheck::new(&game, stake, 1, 1);
        let prefix = emission_factory::block::id::EmissionId::new(id, stake, 1)
            .block(1)
            .serial_prefix();
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

/// SHA-256's block function alone (`sha2` one stream; the interleaved SHA-NI lanes by 1, 2 and
/// 4), then whole messages as the pipelines hash them: one by one or together.
fn sha256_lanes(c: &mut Criterion) {
    use emission_factory::hash::sha256::{self, lanes};
    let mut group = c.benchmark_group("sha256");
    let blocks: Vec<[u8; 64]> = (0u8..4).map(|i| [i.wrapping_mul(97); 64]).collect();
    // Throughput in 64-byte blocks compressed.
    group.throughput(Throughput::Elements(1));
    let mut state = [1u32; 8];
    group.bench_function("block/sha2 one stream", |b| {
        b.iter(|| sha2::compress256(&mut state, &[blocks[0].into()]))
    });
    let mut one = [[1u32; 8]; 1];
    group.bench_function("block/lanes x1", |b| {
        b.iter(|| lanes::compress(&mut one, [&blocks[0]]))
    });
    group.throughput(Throughput::Elements(2));
    let mut two = [[1u32; 8]; 2];
    group.bench_function("block/lanes x2", |b| {
        b.iter(|| lanes::compress(&mut two, [&blocks[0], &blocks[1]]))
    });
    group.throughput(Throughput::Elements(4));
    let mut four = [[1u32; 8]; 4];
    group.bench_function("block/lanes x4", |b| {
        b.iter(|| lanes::compress(&mut four, [&blocks[0], &blocks[1], &blocks[2], &blocks[3]]))
    });
    group.throughput(Throughput::Elements(16));
    let mut sixteen = lanes::States16::default();
    let mut input = lanes::Blocks16::default();
    for (l, block) in input.0.iter_mut().enumerate() {
        *block = blocks[l % 4];
    }
    group.bench_function("block/lanes x16 (AVX-512)", |b| {
        b.iter(|| lanes::compress16(&mut sixteen, &input))
    });
    // 1024 ticket lines of 80 to 100 bytes (two blocks each), as a verify piece hashes them.
    let lines: Vec<Vec<u8>> = (0u32..1024)
        .map(|i| {
            let len = 80 + (i as usize * 7) % 21;
            (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
        })
        .collect();
    let messages: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    group.throughput(Throughput::Elements(messages.len() as u64));
    group.bench_function("1024 lines/one by one", |b| {
        b.iter(|| {
            messages
                .iter()
                .map(|m| sha256::digest(m))
                .collect::<Vec<_>>()
        })
    });
    for engine in sha256::Engine::available() {
        group.bench_function(format!("1024 lines/digest_many {engine:?}"), |b| {
            b.iter(|| sha256::digest_many_with(engine, &messages))
        });
    }
    // The Merkle subtree of a 1024-ticket piece: leaf by leaf, or the piece at once.
    let hashes: Vec<[u8; 32]> = messages.iter().map(|m| sha256::digest(m)).collect();
    group.bench_function("1024 leaves/MerkleRoot::push", |b| {
        b.iter(|| {
            let mut tree = MerkleRoot::new();
            hashes.iter().for_each(|h| tree.push(h));
            tree.root()
        })
    });
    group.bench_function("1024 leaves/MerkleRoot::extend", |b| {
        b.iter(|| {
            let mut tree = MerkleRoot::new();
            tree.extend(&hashes);
            tree.root()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    synthesize_and_decode,
    plan_and_merkle,
    sha256_lanes
);
criterion_main!(benches);
