//! What every command that reads a pack as a stream shares: the private temporary folder the
//! small signed files are staged in, and the hand-over of a CSV member to a check on a thread
//! of its own through a bounded channel (a CSV is never written to disk).
//!
//! The small files (record, seal, log, definition, key, custody files, manifests and their
//! signatures: kilobytes) are staged as `<tmp>/<game>/<stake>/e<emission:04>/<file>` in a
//! folder of mode 0700 (files 0600, created new), removed when the [`Staged`] is dropped, so
//! that the checks of a manifest and of the emission read them by path as they do in a folder.

use super::error::PackError;
use super::member::Member;
use super::read::Sink;
use crate::block::id::EmissionId;
use crate::block::manifest::Manifest;
use crate::untrusted::shown_path;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What staging and the checks of a pack's members return.
type Result<T, E = PackError> = std::result::Result<T, E>;

/// Bytes handed from the pack's reader to a block's check at a time.
pub const CHUNK: usize = 1 << 20;
/// Chunks in flight between them (24 were no faster than 4: docs/PERFORMANCE.md).
pub const CHUNKS: usize = 4;

/// The private temporary folder of a pack's small files.
pub struct Staged {
    /// The temporary folder.
    pub root: PathBuf,
    /// The staged emission folder, once the pack's first member named it.
    pub folder: PathBuf,
    /// The pack, as messages show it.
    pack: String,
    dir: tempfile::TempDir,
}

impl Staged {
    /// A new private folder for the pack `pack`.
    pub fn new(pack: &Path) -> Result<Staged> {
        let dir = tempfile::Builder::new()
            .prefix("emission-factory-pack-")
            .tempdir()
            .map_err(|source| PackError::TempFolder { source })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
                .map_err(PackError::io("set the mode of", dir.path()))?;
        }
        Ok(Staged {
            root: dir.path().to_path_buf(),
            folder: PathBuf::new(),
            pack: shown_path(pack),
            dir,
        })
    }

    /// [`super::Sink::start`]: makes the emission's folder.
    pub fn start(&mut self, emission: &EmissionId) -> Result<()> {
        self.folder = emission.folder(self.dir.path());
        std::fs::create_dir_all(&self.folder).map_err(PackError::io("create", &self.folder))
    }

    /// [`super::Sink::small`]: writes the member, as a new file of mode 0600.
    pub fn small(&self, member: &Member, bytes: &[u8]) -> Result<()> {
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
            .map_err(PackError::io("create", &path))?;
        file.write_all(bytes).map_err(PackError::write(&path))
    }

    /// Where block `block`'s CSV would be in the staged folder (it is never written).
    pub fn csv(&self, block: u32) -> PathBuf {
        self.folder.join(crate::block::csv_name(block))
    }

    /// A staged path as messages show it: `PACK:<game>/<stake>/e<emission:04>/<file>`.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => format!("{}:{}", self.pack, shown_path(rel)),
            Err(_) => shown_path(path),
        }
    }

    /// `text` with the staged folder's name replaced by the pack's (`PACK:`), for the
    /// messages of checks that read the staged files by path.
    pub fn unstaged(&self, text: &str) -> String {
        let root = format!("{}/", shown_path(&self.root));
        text.replace(&root, &format!("{}:", self.pack))
    }
}

/// A check of a pack's blocks (`verify`, `load`, `report` of a pack) whose small members are
/// staged in a [`Staged`] folder, so that it reads them by path as it would in a folder: it is a
/// [`Sink`] that stages every small member and hands each CSV to [`StagedCheck::check`].
pub trait StagedCheck {
    /// Where the small members go.
    fn staged(&mut self) -> &mut Staged;

    /// Called once the folder of `emission` (as the pack's members name it) is staged, before
    /// its first member.
    fn started(&mut self, emission: &EmissionId) -> Result<()> {
        let _ = emission;
        Ok(())
    }

    /// Block `block`'s CSV, which would be at `csv` in the staged folder (it is never
    /// written): `reader` gives exactly its manifest's bytes.
    fn check(&mut self, block: u32, csv: PathBuf, reader: &mut dyn Read) -> Result<()>;

    /// Block `block`'s CSV in its lines form, as [`Sink::lines`] gives it: `None` if the check
    /// does not read that form itself (the CSV is then rebuilt and given to
    /// [`StagedCheck::check`]); otherwise what it returns.
    fn check_lines(
        &mut self,
        block: u32,
        csv: &std::path::Path,
        reader: &mut dyn Read,
    ) -> Option<Result<()>> {
        let _ = (block, csv, reader);
        None
    }
}

impl<T: StagedCheck> Sink for T {
    fn start(&mut self, emission: &EmissionId) -> Result<()> {
        self.staged().start(emission)?;
        self.started(emission)
    }

    fn small(&mut self, member: &Member, bytes: &[u8]) -> Result<()> {
        self.staged().small(member, bytes)
    }

    fn csv(&mut self, block: u32, _manifest: &Manifest, reader: &mut dyn Read) -> Result<()> {
        let csv = self.staged().csv(block);
        self.check(block, csv, reader)
    }

    fn lines(&mut self, block: u32, manifest: &Manifest, reader: &mut dyn Read) -> Result<()> {
        let csv = self.staged().csv(block);
        match self.check_lines(block, &csv, reader) {
            Some(done) => done,
            None => {
                super::read::rebuilt(reader, manifest, |rebuilt| self.check(block, csv, rebuilt))
            }
        }
    }
}

/// Hands block `block`'s CSV, as `reader` gives it, to `check` on a thread of its own, through
/// a bounded channel of [`CHUNKS`] chunks of [`CHUNK`] bytes; returns what `check` returns. If
/// `check` stops reading early, the rest is left to the caller (the pack's reader reads every
/// member to its end). An error reading `reader` is the pack's (damaged, changed or cut).
pub fn stream_to<T: Send>(
    pack: &str,
    block: u32,
    reader: &mut dyn Read,
    check: impl FnOnce(&mut crate::fs::pipe::ChunkReader) -> T + Send,
) -> Result<T> {
    let (tx, source) = crate::fs::pipe::channel(CHUNKS);
    // The chunks read come back to be filled again: no new buffer (zeroed, its pages faulted
    // in) per MiB.
    let (back, spare) = std::sync::mpsc::sync_channel::<Vec<u8>>(CHUNKS + 2);
    let mut source = source.recycling(back);
    std::thread::scope(|scope| -> Result<T> {
        let checking = scope.spawn(move || check(&mut source));
        let mut failed = None;
        loop {
            let mut chunk = spare.try_recv().unwrap_or_default();
            // Filled whole (a reader gives what it has at hand, often less): so that a chunk
            // recycled is full, and is not zeroed again before it is filled.
            chunk.resize(CHUNK, 0);
            let mut n = 0;
            while n < CHUNK {
                match reader.read(&mut chunk[n..]) {
                    Ok(0) => break,
                    Ok(m) => n += m,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            if n == 0 || failed.is_some() {
                break;
            }
            chunk.truncate(n);
            if tx.send(chunk).is_err() {
                // The check stopped early (its reason is in what it returns).
                break;
            }
        }
        drop(tx);
        let done = checking
            .join()
            .map_err(|_| PackError::CheckStopped { block })?;
        if let Some(error) = failed {
            return Err(PackError::BlockUnreadable {
                pack: pack.to_string(),
                block,
                error,
            });
        }
        Ok(done)
    })
}
