//! `verify PACK`: a pack checked as it streams, with the checks `verify` makes on a folder.
//!
//! The pack is read once by [`super::read_pack`] (which checks its form, its order and that
//! every byte is authenticated to the age stream's end). Each block's CSV is checked by
//! [`crate::verify::verify_block_from`] from the tar member as it streams, on a thread of its
//! own fed through a bounded channel ([`super::stage::stream_to`]): a CSV is never written to
//! disk. The small signed files are staged in a private temporary folder
//! ([`super::stage::Staged`], removed when the [`VerifiedPack`] is dropped), so that the checks
//! of a manifest and of the emission ([`crate::emission::seal::check_folder`]) read them by
//! path as they do in a folder.
//!
//! The audit with custody shares (`verify PACK --share ...`) needs the seed before the first
//! CSV: the pack names its emission in its first member, and [`SeedOf`] is asked for that
//! emission's seed then (the shares are opened and must be of that emission; the replay of
//! every block then checks the manifests' commitment to it).

use super::error::PackError;
use super::read::{read_pack_hashing, PackContents};
use super::stage::{stream_to, Staged, StagedCheck};
use crate::block::id::EmissionId;
use crate::progress::Progress;
use crate::verify::{verify_block_from, BlockReport, Form, VerifyOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Gives the seed of the emission a pack names (the custody shares' rebuild), before its
/// first block is read.
pub type SeedOf<'a> =
    &'a dyn Fn(&EmissionId) -> Result<crate::plan::Seed, crate::custody::CustodyError>;

/// A pack read to its end and its blocks checked.
pub struct VerifiedPack {
    /// The verdict on each block, in order; each report's `csv` is the CSV's place in
    /// `staged.folder` (where it would be: it is never written).
    pub reports: Vec<BlockReport>,
    /// What the pack held.
    pub contents: PackContents,
    /// The seed the blocks were replayed from, if any (given, or from [`SeedOf`]).
    pub seed: Option<crate::plan::Seed>,
    /// The staged small files, removed when dropped.
    pub staged: Staged,
    /// When asked: the SHA-256 of the pack file's bytes, as they were read (for the pack's
    /// own trusted timestamp).
    pub sha256: Option<[u8; 32]>,
}

/// Reads `pack` with one of `identities`, checking every block with `options` as it streams
/// (its line checks on `pool`); with `seed_of`, the blocks are replayed from the seed it gives
/// for the emission the pack names; with `hash`, the pack file's bytes are hashed as they are
/// read ([`VerifiedPack::sha256`]: the file is read once). An error is the pack's form
/// (damaged, changed, cut, out of order...) or the seed's: then no verdict holds; a block that
/// fails its checks is a report that says so.
pub fn verify_pack(
    pack: &Path,
    identities: &[age::x25519::Identity],
    options: &VerifyOptions,
    seed_of: Option<SeedOf<'_>>,
    progress: &dyn Progress,
    pool: &rayon::ThreadPool,
    hash: bool,
) -> Result<VerifiedPack, PackError> {
    let mut sink = Checking {
        pack: crate::untrusted::shown_path(pack),
        staged: Staged::new(pack)?,
        options: options.clone(),
        seed_of,
        progress,
        pool,
        reports: Vec::new(),
    };
    let mut sha = hash.then(<sha2::Sha256 as sha2::Digest>::new);
    let contents = read_pack_hashing(pack, identities, &mut sink, sha.as_mut())?;
    Ok(VerifiedPack {
        reports: sink.reports,
        contents,
        seed: sink.options.seed,
        staged: sink.staged,
        sha256: sha.map(|s| sha2::Digest::finalize(s).into()),
    })
}

struct Checking<'a> {
    pack: String,
    staged: Staged,
    options: VerifyOptions,
    seed_of: Option<SeedOf<'a>>,
    progress: &'a dyn Progress,
    pool: &'a rayon::ThreadPool,
    reports: Vec<BlockReport>,
}

impl StagedCheck for Checking<'_> {
    fn staged(&mut self) -> &mut Staged {
        &mut self.staged
    }

    fn started(&mut self, emission: &EmissionId) -> Result<(), PackError> {
        if let Some(seed_of) = self.seed_of {
            self.options.seed = Some(seed_of(emission).map_err(PackError::Check)?);
        }
        Ok(())
    }

    fn check(&mut self, block: u32, csv: PathBuf, reader: &mut dyn Read) -> Result<(), PackError> {
        let (options, progress, pool) = (&self.options, self.progress, self.pool);
        let report = stream_to(&self.pack, block, reader, |source| {
            pool.install(|| verify_block_from(&csv, source, Form::Csv, options, progress))
        })?;
        self.reports.push(report);
        Ok(())
    }

    /// The lines are checked as they are ([`Form::Lines`]): not rebuilt into the CSV first,
    /// then hashed again to be checked.
    fn check_lines(
        &mut self,
        block: u32,
        csv: &Path,
        reader: &mut dyn Read,
    ) -> Option<Result<(), PackError>> {
        let (options, progress, pool) = (&self.options, self.progress, self.pool);
        let checked = stream_to(&self.pack, block, reader, |source| {
            pool.install(|| verify_block_from(csv, source, Form::Lines, options, progress))
        });
        Some(checked.map(|report| self.reports.push(report)))
    }
}
