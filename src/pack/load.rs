//! `load PACK`: a pack's blocks loaded into PostgreSQL as it streams, with the checks `load`
//! makes of a folder.
//!
//! The small signed files are staged ([`super::stage::Staged`]); each block's CSV member is
//! read once, by the COPY, which hands what it reads to the block's full verification on
//! another thread ([`crate::load::load_block_from`]): the CSV is never on disk.
//!
//! A pack is loaded whole or not at all: its blocks are loaded in one transaction of the
//! database (each block in a savepoint of it, with every check of a block loaded from a
//! folder), committed only once the pack has been read to the authenticated end of its age
//! stream. A pack changed anywhere, cut or extended, fails before the commit: nothing of it is
//! loaded, not even the blocks before the change.

use super::error::PackError;
use super::read::read_pack;
use super::stage::{Staged, StagedCheck};
use crate::load::{load_block_from, LoadOptions, Outcome};
use crate::progress::Progress;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The blocks of a pack loaded and committed: each block's place in the pack
/// (`PACK:<game>/<stake>/e<emission:04>/block-NNNNN.csv`) and what became of it.
pub struct LoadedPack {
    /// In the pack's order.
    pub blocks: Vec<(String, Outcome)>,
}

/// Loads every block of `pack` (opened with one of `identities`) through `client`, in one
/// transaction committed after the pack's last byte is read and authenticated; `progress` is
/// told each block's tickets. An error leaves nothing of the pack in the database.
pub fn load_pack(
    client: &mut postgres::Client,
    pack: &Path,
    identities: &[age::x25519::Identity],
    options: &LoadOptions,
    progress: &dyn Progress,
) -> Result<LoadedPack, PackError> {
    let shown = crate::untrusted::shown_path(pack);
    let mut tx = client
        .transaction()
        .map_err(|e| PackError::StartTransaction {
            pack: shown.clone(),
            reason: crate::load::explain(&e),
        })?;
    let mut sink = Loading {
        staged: Staged::new(pack)?,
        tx: &mut tx,
        options,
        progress,
        blocks: Vec::new(),
    };
    let done = read_pack(pack, identities, &mut sink);
    let Loading { blocks, staged, .. } = sink;
    // Dropped without a commit, the transaction is rolled back.
    done.map_err(|source| PackError::NothingLoaded {
        pack: shown.clone(),
        source: Box::new(source),
    })?;
    tx.commit().map_err(|e| PackError::Commit {
        pack: shown.clone(),
        reason: crate::load::explain(&e),
    })?;
    Ok(LoadedPack {
        blocks: blocks
            .into_iter()
            .map(|(csv, outcome)| (staged.shown(&csv), outcome))
            .collect(),
    })
}

struct Loading<'a, 't> {
    staged: Staged,
    tx: &'a mut postgres::Transaction<'t>,
    options: &'a LoadOptions,
    progress: &'a dyn Progress,
    blocks: Vec<(PathBuf, Outcome)>,
}

impl StagedCheck for Loading<'_, '_> {
    fn staged(&mut self) -> &mut Staged {
        &mut self.staged
    }

    fn check(&mut self, _block: u32, csv: PathBuf, reader: &mut dyn Read) -> Result<(), PackError> {
        self.progress
            .stage(&format!("load {}", self.staged.shown(&csv)));
        let outcome = load_block_from(
            &mut *self.tx,
            &csv,
            Some(reader),
            self.options,
            self.progress,
        )
        .map_err(|e| PackError::Load {
            message: self.staged.unstaged(&e.to_string()),
        })?;
        self.blocks.push((csv, outcome));
        Ok(())
    }
}
