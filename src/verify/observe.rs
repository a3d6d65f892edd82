//! A hook into `verify`'s own pass over a block's ticket lines, for tools that need something
//! of every ticket (`report`'s tallies) without a second read, hash and split of the file.
//!
//! The observer is told the block's checked manifest, game and stake before any line is read;
//! then, in the same parallel task that checked them, the valid ticket lines of each piece
//! (up to 2^10 lines, in file order within the piece); then each piece's result again, in
//! block order. Only lines that passed every check are given, so what an observer tallies is
//! only worth something if the block's verdict is ok: the caller must look at it first.

use crate::block::manifest::Manifest;
use crate::game::{Game, Stake};
use std::any::Any;

/// One ticket line `verify` has checked and found valid.
#[derive(Debug, Clone, Copy)]
pub struct CheckedLine<'l> {
    /// The ticket's index in the block (from 0; the line is line `index + 2` of the file).
    pub index: u64,
    /// The layout field, as it is in the file.
    pub layout: &'l [u8],
    /// The prize tier of the prize column (in [`Stake::tiers`], highest first, losers last),
    /// which the layout's decoded prize matches.
    pub tier: usize,
}

/// What an observer made of one piece, handed back to it in block order.
pub type PiecePart = Box<dyn Any + Send>;

/// Sees what `verify` checks (module documentation); every method takes `&self`, as pieces
/// are observed from several threads at once.
pub trait PieceObserver: Sync {
    /// The block's manifest, game and stake, as `verify` checked them, before any line.
    fn start(&self, manifest: &Manifest, game: &Game, stake: &Stake);

    /// The valid lines of one piece, in file order; called in parallel, pieces in any order.
    fn piece(&self, lines: &[CheckedLine<'_>]) -> PiecePart;

    /// The part [`piece`](Self::piece) made of each piece, in block order.
    fn fold(&self, part: PiecePart);
}
