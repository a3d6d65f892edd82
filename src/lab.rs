//! Data for test laboratories: the raw output of the prize-order generator and the shuffled
//! positions of a block's prizes (the UK Gambling Commission's "statistical testing of raw
//! output of RNG and scaled or shuffled decks data"; GLI's data collection).
//!
//! Both come from the block's keys exactly as emit uses them ([`BlockKey`]): the raw stream is
//! the generator [`BlockKey::prize_order`] draws from, and the positions are that order. A lab
//! works on a test emission whose seed it is given: either output tells where a block's
//! winners are, and is as secret as the block until its tickets are sold.

use crate::game::{Game, Stake};
use crate::interrupt::{self, Interrupted};
use crate::money::canonical;
use crate::plan::{BlockKey, Seed};
use rand::RngCore;
use std::io::{self, Write};

/// Why the lab's data stopped.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The output could not be written (a closed pipe: its reader has enough).
    #[error("cannot write the output: {0}")]
    Write(#[from] io::Error),
    /// A signal asked the run to stop.
    #[error("{0}")]
    Interrupted(#[from] Interrupted),
}

/// Bytes written at a time.
const CHUNK: usize = 1 << 16;

/// The coordinates of one block.
#[derive(Debug, Clone, Copy)]
pub struct Coordinates<'a> {
    /// The emission's seed.
    pub seed: &'a Seed,
    /// The game.
    pub game: &'a Game,
    /// Its stake.
    pub stake: &'a Stake,
    /// The emission's number.
    pub emission: u32,
    /// The block's number (from 1).
    pub block: u32,
}

impl Coordinates<'_> {
    /// The block's keys.
    pub fn key(&self) -> BlockKey {
        BlockKey::derive(
            self.seed,
            &self.game.id,
            self.stake,
            self.emission,
            self.block,
        )
    }
}

/// Writes the first `bytes` bytes of the block's prize-order generator to `out` (ChaCha20's
/// key stream, docs/SPEC.md), in order, as binary: what `dieharder -g 201` (a file) or
/// `-g 200` (standard input) and the NIST SP 800-22 suite read.
pub fn write_raw(at: &Coordinates<'_>, bytes: u64, out: &mut dyn Write) -> Result<(), LabError> {
    let mut generator = at.key().prize_generator();
    let mut buffer = vec![0u8; CHUNK];
    let mut left = bytes;
    while left > 0 {
        let n = usize::try_from(left.min(CHUNK as u64)).unwrap_or(CHUNK);
        generator.fill_bytes(&mut buffer[..n]);
        out.write_all(&buffer[..n])?;
        interrupt::check()?;
        left -= n as u64;
    }
    Ok(out.flush()?)
}

/// The CSV header of [`write_positions`].
pub const POSITIONS_HEADER: &str = "tier,prize,index";

/// Writes the block's prize order as CSV, one row per ticket, tier by tier (0 the top prize,
/// the last one the losers), each tier's ticket indexes ascending: `tier,prize,index`.
/// The indexes are the tickets' places in the block (from 0), as emit gives them out.
pub fn write_positions(at: &Coordinates<'_>, out: &mut dyn Write) -> Result<(), LabError> {
    let order = at.key().prize_order(at.stake, at.game.block_size);
    let tiers = at.stake.tiers();
    let mut by_tier: Vec<Vec<u64>> = vec![Vec::new(); tiers.len()];
    for (index, &tier) in order.iter().enumerate() {
        if let Some(list) = by_tier.get_mut(usize::from(tier)) {
            list.push(index as u64);
        }
    }
    writeln!(out, "{POSITIONS_HEADER}")?;
    for (tier, indexes) in by_tier.iter().enumerate() {
        let prize = canonical(tiers[tier]);
        for index in indexes {
            writeln!(out, "{tier},{prize},{index}")?;
        }
        interrupt::check()?;
    }
    Ok(out.flush()?)
}
