//! `verify PACK`: a pack checked as it streams, with the checks `verify` makes on a folder.
//!
//! The pack is read once by [`super::read_pack`] (which checks its form, its order and that
//! every byte is authenticated to the age stream's end). Each block's CSV is checked by
//! [`crate::verify::verify_block_from`] from the tar member as it streams, on a thread of its
//! own fed through a bounded channel (four 1 MiB chunks): a CSV is never written to disk. The
//! small signed files (record, seal, log, definition, key, custody files, manifests and their
//! signatures: kilobytes) are staged in a private temporary folder (mode 0700, files 0600,
//! removed when the [`VerifiedPack`] is dropped), as `<tmp>/<game>/<stake>/e<emission:04>/`,
//! so that the checks of a manifest and of the emission
//! ([`crate::emission::seal::check_folder`]) read them by path as they do in a folder.

use super::member::Member;
use super::read::{read_pack, PackContents, Sink};
use crate::block::manifest::Manifest;
use crate::progress::Progress;
use crate::untrusted::shown_path;
use crate::verify::{verify_block_from, BlockReport, VerifyOptions};
use anyhow::{anyhow, bail, Context, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};

/// Bytes handed from the pack's reader to a block's check at a time.
const CHUNK: usize = 1 << 20;
/// Chunks in flight between them.
const CHUNKS: usize = 4;

/// A pack read to its end and its blocks checked.
pub struct VerifiedPack {
    /// The private temporary folder the emission folder is staged in.
    pub root: PathBuf,
    /// The staged emission folder (its small files only, no CSV): for the emission's checks.
    pub folder: PathBuf,
    /// The verdict on each block, in order; each report's `csv` is the CSV's place in
    /// `folder` (where it would be: it is never written).
    pub reports: Vec<BlockReport>,
    /// What the pack held.
    pub contents: PackContents,
    /// Removes the staged files when dropped.
    _staged: tempfile::TempDir,
}

/// Reads `pack` with one of `identities`, checking every block with `options` as it streams
/// (its line checks on `pool`). An error is the pack's form (damaged, changed, cut, out of
/// order...): then no verdict holds; a block that fails its checks is a report that says so.
pub fn verify_pack(
    pack: &Path,
    identities: &[age::x25519::Identity],
    options: &VerifyOptions,
    progress: &dyn Progress,
    pool: &rayon::ThreadPool,
) -> Result<VerifiedPack> {
    let staged = tempfile::Builder::new()
        .prefix("emission-factory-verify-")
        .tempdir()
        .context("cannot create a private temporary folder for the pack's signed files")?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(staged.path(), std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot set the mode of {}", shown_path(staged.path())))?;
    }
    let mut sink = Checking {
        pack: shown_path(pack),
        root: staged.path().to_path_buf(),
        folder: PathBuf::new(),
        options,
        progress,
        pool,
        reports: Vec::new(),
    };
    let contents = read_pack(pack, identities, &mut sink)?;
    Ok(VerifiedPack {
        root: sink.root,
        folder: sink.folder,
        reports: sink.reports,
        contents,
        _staged: staged,
    })
}

struct Checking<'a> {
    pack: String,
    root: PathBuf,
    folder: PathBuf,
    options: &'a VerifyOptions,
    progress: &'a dyn Progress,
    pool: &'a rayon::ThreadPool,
    reports: Vec<BlockReport>,
}

impl Sink for Checking<'_> {
    fn start(&mut self, emission: &str) -> Result<()> {
        // `emission` is three plain names (checked by the reader).
        self.folder = self.root.join(emission);
        std::fs::create_dir_all(&self.folder)
            .with_context(|| format!("cannot create {}", shown_path(&self.folder)))
    }

    fn small(&mut self, member: &Member, bytes: &[u8]) -> Result<()> {
        let path = self.folder.join(member.name());
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options
            .open(&path)
            .with_context(|| format!("cannot create {}", shown_path(&path)))?;
        file.write_all(bytes)
            .with_context(|| format!("cannot write {} (disk full?)", shown_path(&path)))
    }

    fn csv(&mut self, block: u32, manifest: &Manifest, reader: &mut dyn Read) -> Result<()> {
        let _ = manifest;
        let csv = self.folder.join(crate::block::csv_name(block));
        let (tx, rx) = sync_channel::<Vec<u8>>(CHUNKS);
        let (options, progress, pool, pack) = (self.options, self.progress, self.pool, &self.pack);
        let report = std::thread::scope(|scope| -> Result<BlockReport> {
            let at = &csv;
            let check = scope.spawn(move || {
                let mut source = Chunks {
                    rx,
                    chunk: Vec::new(),
                    at: 0,
                };
                pool.install(|| verify_block_from(at, &mut source, options, progress))
            });
            let mut failed = None;
            loop {
                let mut chunk = vec![0u8; CHUNK];
                let n = match reader.read(&mut chunk) {
                    Ok(n) => n,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                };
                if n == 0 {
                    break;
                }
                chunk.truncate(n);
                if tx.send(chunk).is_err() {
                    // The check stopped early (its reason is in its report); the reader
                    // reads the rest of the member.
                    break;
                }
            }
            drop(tx);
            let report = check
                .join()
                .map_err(|_| anyhow!("internal error: the check of block {block} stopped"))?;
            if let Some(e) = failed {
                bail!(
                    "{}: block {block}'s CSV: cannot read it (damaged or changed): {e}",
                    pack
                );
            }
            Ok(report)
        })?;
        self.reports.push(report);
        Ok(())
    }
}

/// The bytes the pack's reader sends, as a reader; the end when it stops sending.
struct Chunks {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.chunk = chunk;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
