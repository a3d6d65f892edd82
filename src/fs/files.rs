//! Writing files so that a block appears under its final name only when complete: write to a
//! temporary file in the same folder, flush, fsync, rename, fsync the folder.
//!
//! Temporary names are unique per process (`.<name>.<random>.tmp`, created with `O_EXCL` by
//! the `tempfile` crate), so two runs never write into each other's files, and every error
//! path removes its own temporary file (a [`Staged`] file that is dropped unpublished is
//! deleted). A process killed with SIGKILL cannot clean up: the next run that holds the same
//! lock removes such stale files with [`remove_stale_temps`].

use crate::fs::FsError;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A file being written under a temporary name beside its final `path`; deleted if dropped
/// before [`Staged::publish`].
pub struct Staged {
    file: tempfile::NamedTempFile,
    path: PathBuf,
}

impl Staged {
    /// Creates a new, empty temporary file for `path` (`O_CREAT|O_EXCL`, mode 0600 from the
    /// start), then gives it exactly `access` (its mode and group, whatever the umask).
    pub fn create(path: &Path, access: Access) -> Result<Staged, FsError> {
        let dir = parent(path);
        let prefix = format!(".{}.", file_name(path));
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp").rand_bytes(8);
        let file = builder
            .tempfile_in(dir)
            .map_err(|source| FsError::CreateTemp {
                path: path.to_path_buf(),
                dir: dir.to_path_buf(),
                source,
            })?;
        // Dropping `file` on an error removes it.
        access.apply(file.as_file(), file.path())?;
        Ok(Staged {
            file,
            path: path.to_path_buf(),
        })
    }

    /// The open file, to write into.
    pub fn file(&mut self) -> &mut File {
        self.file.as_file_mut()
    }

    /// The temporary file's path (for messages).
    pub fn temp_path(&self) -> &Path {
        self.file.path()
    }

    /// Flushes the file to the disk (fsync), so that it can be published.
    pub fn finish(&mut self) -> Result<(), FsError> {
        self.file
            .as_file_mut()
            .sync_all()
            .map_err(|source| FsError::Write {
                path: self.file.path().to_path_buf(),
                source,
            })
    }

    /// Renames the finished file to its final name, replacing a regular file there (anything
    /// else at the name, a link, a FIFO, a socket or a device, is refused), and fsyncs the
    /// folder. On failure the temporary file is removed.
    pub fn publish(self) -> Result<(), FsError> {
        let Staged { file, path } = self;
        let tmp = file.path().to_path_buf();
        // A rename replaces whatever has the name, a device node or a FIFO included: only a
        // regular file is ever replaced (the temporary file is dropped, so removed, on refusal).
        crate::fs::output::check(&path, crate::fs::output::Replace::RegularFile)?;
        // On error `persist` hands the file back; dropping it deletes it.
        file.persist(&path).map_err(|e| FsError::Rename {
            from: tmp,
            to: path.clone(),
            source: e.error,
        })?;
        sync_dir(&path)
    }

    /// [`Staged::publish`] that never replaces a file: it fails, removing the temporary
    /// file, when `path` exists (a link, `O_EXCL`-like: a concurrent writer cannot be
    /// overwritten either). For records that are written once, never rewritten.
    pub fn publish_new(self) -> Result<(), FsError> {
        let Staged { file, path } = self;
        let tmp = file.path().to_path_buf();
        file.persist_noclobber(&path)
            .map_err(|e| FsError::PublishNew {
                from: tmp,
                to: path.clone(),
                source: e.error,
            })?;
        sync_dir(&path)
    }
}

/// Asks the kernel to start writing `len` bytes of `file` from `offset` to the disk, without
/// waiting (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`; elsewhere nothing). A block's CSV
/// is hundreds of megabytes: written back as it is made, its final fsync has only the last
/// part left to wait for, instead of all of it after the last ticket (measured: 83 ms of
/// a 0.8 s La ruche d'or emit, serial). Only a hint: errors are left to the fsync, which
/// reports them.
#[allow(unsafe_code)] // sync_file_range: no safe wrapper in std or rustix
pub fn start_writeback(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
            return;
        };
        // SAFETY: a plain system call on a descriptor that `file` keeps open for the duration
        // of the call; it reads no memory of this process.
        let _ = unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// Appends a stream of bytes to a new, empty file, around the page cache where the kernel
/// allows it (Linux `O_DIRECT`), else through it.
///
/// A block's CSV is written once and not read again by the process that writes it (Maxi Ruche
/// d'or: 1.5 GB per block). Through the page cache, the kernel copies every byte into freshly
/// allocated cache pages: measured on the project's 2-vCPU EPYC VM, copying a Maxi block with
/// `cat` took 0.43 to 5.0 s of CPU and 1.5 to 3.7 s of wall time, `dd oflag=direct` 0.11 to
/// 0.16 s and 0.41 to 0.58 s; in `emit` the kernel's copy was 23 % of all CPU. So the bytes
/// are gathered here in an aligned buffer and written in aligned multiples of
/// [`StreamWriter::ALIGN`], the disk reading them straight from this buffer; the last partial
/// block is written through the page cache by [`StreamWriter::finish`]. Where direct writes
/// are refused (a file system without `O_DIRECT`, an unusual alignment: `EINVAL`), the writer
/// falls back to ordinary writes for the rest of the file, so the bytes on disk are the same
/// either way; only the file's final fsync makes them durable, in both cases.
pub struct StreamWriter<'a> {
    file: &'a File,
    /// `buf[start..start + CAPACITY]` is aligned to `ALIGN`; `used` bytes of it are pending.
    buf: Vec<u8>,
    start: usize,
    used: usize,
    direct: bool,
    /// Bytes handed to the kernel, and those whose writeback was started (ordinary writes).
    written: u64,
    flushed: u64,
}

impl<'a> StreamWriter<'a> {
    /// The alignment of direct writes: of the buffer's address, the file offset and the length
    /// (4 KiB: a multiple of every disk's logical block size).
    pub const ALIGN: usize = 4096;
    /// Bytes gathered before a direct write.
    pub const CAPACITY: usize = 4 << 20;

    /// A writer for `file`, which must be empty and open at offset 0. `direct`: try to write
    /// around the page cache (if the kernel refuses, ordinary writes are used).
    pub fn new(file: &'a File, direct: bool) -> StreamWriter<'a> {
        let (buf, start, aligned) = aligned_buffer(Self::CAPACITY);
        let empty = file.metadata().map(|m| m.len() == 0).unwrap_or(false);
        let mut writer = StreamWriter {
            file,
            buf,
            start,
            used: 0,
            direct: false,
            written: 0,
            flushed: 0,
        };
        if direct && aligned && empty {
            writer.direct = set_direct(file, true);
        }
        writer
    }

    /// True while writes go around the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// Appends `bytes`.
    pub fn write(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while self.direct && !bytes.is_empty() {
            let room = Self::CAPACITY - self.used;
            let take = room.min(bytes.len());
            let at = self.start + self.used;
            self.buf[at..at + take].copy_from_slice(&bytes[..take]);
            self.used += take;
            bytes = &bytes[take..];
            if self.used == Self::CAPACITY {
                self.drain(Self::CAPACITY)?;
            }
        }
        if bytes.is_empty() {
            return Ok(());
        }
        // Through the page cache. Bytes still gathered go first: a direct write refused during
        // this call or an earlier one leaves some, and they come before `bytes` in the file.
        if self.used > 0 {
            let used = self.used;
            self.drain(used)?;
        }
        let mut file = self.file;
        file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Lets the disk take what was written so far without waiting for it (ordinary writes:
    /// [`start_writeback`]; direct writes are on their way already).
    pub fn start_writeback(&mut self) {
        if !self.direct {
            start_writeback(self.file, self.flushed, self.written - self.flushed);
            self.flushed = self.written;
        }
    }

    /// Writes what is still gathered. The file still needs its fsync.
    pub fn finish(mut self) -> std::io::Result<()> {
        if self.direct {
            // The tail is not a whole aligned block: through the page cache.
            self.direct = !set_direct(self.file, false);
        }
        let used = self.used;
        self.drain(used)
    }

    /// Writes the first `len` gathered bytes (a multiple of `ALIGN` while direct) and moves
    /// the rest to the front of the buffer.
    fn drain(&mut self, len: usize) -> std::io::Result<()> {
        let mut done = 0;
        while done < len {
            let mut file = self.file;
            let from = self.start + done;
            match file.write(&self.buf[from..self.start + len]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Refused (or a short write left an unaligned rest): ordinary writes from here.
                Err(e) if self.direct && e.raw_os_error() == Some(EINVAL) => {
                    leave_direct(self.file, e)?;
                    self.direct = false;
                }
                Err(e) => return Err(e),
            }
        }
        self.written += len as u64;
        self.buf
            .copy_within(self.start + len..self.start + self.used, self.start);
        self.used -= len;
        Ok(())
    }
}

/// Reads a file from its start around the page cache where the kernel allows it (Linux
/// `O_DIRECT`), else through it: the reading side of [`StreamWriter`].
///
/// `verify` reads each block once. Through the page cache, a block that is not cached yet
/// (made by `emit`, which writes around it; copied in; evicted) is first copied by the kernel
/// into freshly allocated cache pages: measured on the project's 2-vCPU EPYC VM, `verify` of a
/// Maxi Ruche d'or block just made spent 2.1 to 2.3 s of system CPU on it, against 0.12 s
/// when the block was cached. Read directly, the disk puts the bytes in this reader's aligned
/// buffer, and they are copied from there. But a block already cached is read faster from
/// the cache (1.46 s against 2.04 s of wall time, the same CPU: a direct read waits for the
/// disk while the other threads check), so [`ReadMode::Auto`] reads directly only a file that
/// is not wholly in the cache, seen by sampling pages with `RWF_NOWAIT` reads (which never
/// wait for the disk). Where direct reads are refused (`EINVAL`), the reader goes on through
/// the page cache from where it is: the bytes read are the same.
pub struct DirectReader {
    file: File,
    /// `buf[start..start + CAPACITY]` is aligned; `buf[start + at..start + len]` is unread.
    buf: Vec<u8>,
    start: usize,
    at: usize,
    len: usize,
    direct: bool,
}

impl DirectReader {
    /// Bytes asked of the disk at a time (as many as [`StreamWriter`] writes at a time).
    pub const CAPACITY: usize = StreamWriter::CAPACITY;

    /// Opens `path` for reading, around the page cache or through it as `mode` says.
    pub fn open(path: &Path, mode: ReadMode) -> std::io::Result<DirectReader> {
        let file = crate::fs::open::open_regular(path)?;
        let (buf, start, aligned) = aligned_buffer(Self::CAPACITY);
        let want = match mode {
            ReadMode::Cached => false,
            ReadMode::Direct => true,
            ReadMode::Auto => !is_cached(&file),
        };
        let direct = want && aligned && set_direct(&file, true);
        Ok(DirectReader {
            file,
            buf,
            start,
            at: 0,
            len: 0,
            direct,
        })
    }

    /// True while reads go around the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// Reads the next bytes of the file into the buffer (none at its end).
    fn fill(&mut self) -> std::io::Result<()> {
        self.at = 0;
        self.len = 0;
        loop {
            let mut file = &self.file;
            match file.read(&mut self.buf[self.start..self.start + Self::CAPACITY]) {
                Ok(n) => {
                    self.len = n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Refused (or a short read left the offset unaligned): the page cache from here.
                Err(e) if self.direct && e.raw_os_error() == Some(EINVAL) => {
                    leave_direct(&self.file, e)?;
                    self.direct = false;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// How a [`DirectReader`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Through the page cache.
    Cached,
    /// Around it, where the kernel allows.
    Direct,
    /// Around it only if the file is not wholly in the cache.
    Auto,
}

/// True unless a sample of the file's pages shows one that is not in the page cache (or the
/// kernel cannot tell: then the cache is used, as ordinary reads do). 64 one-byte `RWF_NOWAIT`
/// reads spread over the file, the last byte included: a few microseconds.
fn is_cached(file: &File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use rustix::io::{preadv2, Errno, ReadWriteFlags};
        const SAMPLES: u64 = 64;
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            return true;
        };
        if len == 0 {
            return true;
        }
        for k in 0..SAMPLES {
            let offset = (len - 1) / (SAMPLES - 1) * k;
            let offset = if k == SAMPLES - 1 { len - 1 } else { offset };
            let mut byte = [0u8; 1];
            let mut bufs = [std::io::IoSliceMut::new(&mut byte)];
            match preadv2(file, &mut bufs, offset, ReadWriteFlags::NOWAIT) {
                Err(Errno::AGAIN) => return false,
                Err(_) => return true,
                Ok(_) => {}
            }
        }
        true
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        true
    }
}

impl std::io::Read for DirectReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.len {
            if !self.direct {
                // Through the cache: straight into the caller's buffer, no copy of our own.
                let mut file = &self.file;
                return file.read(out);
            }
            if out.is_empty() {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = out.len().min(self.len - self.at);
        let from = self.start + self.at;
        out[..n].copy_from_slice(&self.buf[from..from + n]);
        self.at += n;
        Ok(n)
    }
}

/// `EINVAL`: how Linux refuses a direct write (the same number on every Unix).
const EINVAL: i32 = 22;

/// A zeroed buffer with room for `capacity` bytes from an address aligned to
/// [`StreamWriter::ALIGN`]: the buffer, where that room starts, and whether it is aligned
/// (`align_offset` may give up on exotic targets: then no direct I/O, and the room starts at 0).
fn aligned_buffer(capacity: usize) -> (Vec<u8>, usize, bool) {
    let align = StreamWriter::ALIGN;
    let buf = vec![0u8; capacity + align];
    let start = buf.as_ptr().align_offset(align);
    if start < align {
        (buf, start, true)
    } else {
        (buf, 0, false)
    }
}

/// After the kernel refused a direct read or write with `refusal`: turns `O_DIRECT` off, so
/// that the call can be made again through the page cache; `refusal` if it cannot be.
fn leave_direct(file: &File, refusal: std::io::Error) -> std::io::Result<()> {
    if set_direct(file, false) {
        Ok(())
    } else {
        Err(refusal)
    }
}

/// Turns `O_DIRECT` on or off for `file` (through `rustix`, no `unsafe`); true if the file now
/// has it as asked.
fn set_direct(file: &File, on: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
        let Ok(flags) = fcntl_getfl(file) else {
            return false;
        };
        let wanted = if on {
            flags | OFlags::DIRECT
        } else {
            flags - OFlags::DIRECT
        };
        fcntl_setfl(file, wanted).is_ok()
            && fcntl_getfl(file).is_ok_and(|now| now.contains(OFlags::DIRECT) == on)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        !on
    }
}

/// Writes `bytes` to a temporary file for `path` and fsyncs it, to [`Staged::publish`] later.
pub fn stage(path: &Path, bytes: &[u8], access: Access) -> Result<Staged, FsError> {
    let mut staged = Staged::create(path, access)?;
    let tmp = staged.temp_path().to_path_buf();
    staged
        .file()
        .write_all(bytes)
        .map_err(|source| FsError::Write { path: tmp, source })?;
    staged.finish()?;
    Ok(staged)
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename), with exactly `access`.
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> Result<(), FsError> {
    stage(path, bytes, access)?.publish()
}

/// Removes the temporary files left for `path` by a process that was killed (`.<name>.*.tmp`,
/// and `.<name>.tmp` of earlier versions). Call it only while holding the lock that covers
/// `path`: a temporary file of a live process would be removed too. Returns how many.
pub fn remove_stale_temps(path: &Path) -> Result<usize, FsError> {
    remove_stale_temps_of(parent(path), &format!(".{}.", file_name(path)))
}

/// [`remove_stale_temps`] of every file of `dir` whose temporary files' names start with
/// `prefix` (`.<name>.` for one file; `.emission.shares-` for every reshare's custody file).
pub fn remove_stale_temps_of(dir: &Path, prefix: &str) -> Result<usize, FsError> {
    let mut removed = 0;
    let entries = match crate::fs::dir::list(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(FsError::io("read folder", dir)(e)),
    };
    for entry in entries {
        let Some(file) = entry.name.to_str() else {
            continue;
        };
        if file.starts_with(prefix) && file.ends_with(".tmp") {
            let stale = entry.path;
            match fs::remove_file(&stale) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(FsError::io("remove stale", &stale)(e)),
            }
        }
    }
    Ok(removed)
}

/// Removes `path` if it exists, and fsyncs its folder.
pub fn remove(path: &Path) -> Result<(), FsError> {
    match fs::remove_file(path) {
        Ok(()) => sync_dir(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FsError::io("remove", path)(e)),
    }
}

/// Renames `from` to `to` and fsyncs the folder.
pub fn rename(from: &Path, to: &Path) -> Result<(), FsError> {
    fs::rename(from, to).map_err(|source| FsError::Rename {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        source,
    })?;
    sync_dir(to)
}

/// The folder holding `path` (`.` for a bare name).
pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Fsyncs the folder holding `path`, so that a rename survives a crash.
fn sync_dir(path: &Path) -> Result<(), FsError> {
    #[cfg(unix)]
    {
        let dir = parent(path);
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(FsError::io("sync folder", dir))?;
    }
    Ok(())
}

/// Creates a folder (and its parents) with the given Unix mode for the last one.
pub fn create_dir(path: &Path, mode: u32) -> Result<(), FsError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    builder
        .create(path)
        .map_err(FsError::io("create folder", path))
}

/// Who may read the files of an emission folder: its owner alone (folder 0700, files 0600), or
/// also one group (folder 0750, files 0640, owned by that group: `--group`, for the account of
/// a game server that loads the blocks). Never others: until its tickets are sold, a block
/// (which ticket wins what, in sale order) is as secret as the seed.
///
/// Modes are set with `fchmod` on the open file, so the umask changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    group: Option<u32>,
}

impl Access {
    /// The owner alone: 0700 and 0600.
    pub const PRIVATE: Access = Access { group: None };

    /// The owner, and the group of id `gid` for reading: 0750 and 0640.
    pub fn shared_with(gid: u32) -> Access {
        Access { group: Some(gid) }
    }

    /// The group that may read, if any.
    pub fn group(&self) -> Option<u32> {
        self.group
    }

    /// The mode of a file: 0600 or 0640.
    pub fn file_mode(&self) -> u32 {
        if self.group.is_some() {
            0o640
        } else {
            0o600
        }
    }

    /// The mode of a folder: 0700 or 0750.
    pub fn dir_mode(&self) -> u32 {
        if self.group.is_some() {
            0o750
        } else {
            0o700
        }
    }

    /// The access the files of `dir` get: shared with the folder's group when the folder is
    /// exactly group-readable and closed to others (0750, as `--group` makes it), else private.
    /// (A folder of an earlier version, 0755, gets private files.)
    pub fn of_folder(dir: &Path) -> Result<Access, FsError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let meta = fs::metadata(dir).map_err(FsError::io("look at folder", dir))?;
            if meta.mode() & 0o077 == 0o050 {
                return Ok(Access::shared_with(meta.gid()));
            }
        }
        #[cfg(not(unix))]
        let _ = dir;
        Ok(Access::PRIVATE)
    }

    /// Whether a file with metadata `meta` is open beyond this access: to others, to the
    /// group when this access names none or another one, or with any bit (execute, setuid,
    /// sticky) that [`Access::file_mode`] does not give.
    pub fn is_exceeded_by(&self, meta: &fs::Metadata) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let beyond_mode = meta.mode() & 0o7777 & !self.file_mode() != 0;
            let other_group = meta.mode() & 0o070 != 0 && self.group != Some(meta.gid());
            beyond_mode || other_group
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            false
        }
    }

    /// Gives the open `file` (at `path`, for messages) this access: its group first (a chown
    /// may clear mode bits), then exactly its mode.
    pub fn apply(&self, file: &File, path: &Path) -> Result<(), FsError> {
        self.apply_mode(file, path, self.file_mode())
    }

    fn apply_mode(&self, file: &File, path: &Path, mode: u32) -> Result<(), FsError> {
        #[cfg(unix)]
        {
            use rustix::fs::{fchmod, fchown, Gid, Mode};
            if let Some(gid) = self.group {
                fchown(file, None, Some(Gid::from_raw(gid))).map_err(|e| FsError::GiveToGroup {
                    path: path.to_path_buf(),
                    gid,
                    error: e.into(),
                })?;
            }
            fchmod(file, Mode::from_raw_mode(mode)).map_err(|e| FsError::SetMode {
                path: path.to_path_buf(),
                mode,
                error: e.into(),
            })?;
        }
        #[cfg(not(unix))]
        let _ = (file, path, mode);
        Ok(())
    }
}

/// Makes sure the emission folder `dir` exists and returns the access its files get.
///
/// A missing folder is created (its missing parents as `create_dir_all` makes them) with
/// exactly `group`'s folder mode: 0700, or 0750 and owned by the group. An existing folder is
/// left as it is when `group` is `None` (its files get [`Access::of_folder`]); with a group, it
/// and every regular file directly in it are given to that group, 0750 and 0640 (links are
/// not followed, nor changed).
pub fn emission_folder(dir: &Path, group: Option<u32>) -> Result<Access, FsError> {
    let existed = dir.is_dir();
    if !existed {
        if let Some(up) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            create_dir(up, 0o755)?;
        }
        match fs::create_dir(dir) {
            Ok(()) => {}
            // Another run made it at the same moment.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => return Err(FsError::io("create folder", dir)(e)),
        }
    }
    if existed {
        refuse_foreign_folder(dir)?;
    }
    let access = match group {
        Some(gid) => Access::shared_with(gid),
        None if existed => return Access::of_folder(dir),
        None => Access::PRIVATE,
    };
    let folder = File::open(dir).map_err(FsError::io("open folder", dir))?;
    access.apply_mode(&folder, dir, access.dir_mode())?;
    if existed && group.is_some() {
        for entry in crate::fs::dir::list(dir).map_err(FsError::io("read folder", dir))? {
            if let Some(file) = open_own_file(&entry.path)? {
                // The hidden files (the locks, a killed run's temporary files) stay the
                // running account's alone: a lock the group could open, it could flock.
                let hidden = entry
                    .path
                    .file_name()
                    .is_some_and(|n| n.as_encoded_bytes().first() == Some(&b'.'));
                if hidden {
                    Access::PRIVATE.apply(&file, &entry.path)?;
                } else {
                    access.apply(&file, &entry.path)?;
                }
            }
        }
    }
    Ok(access)
}

/// An emission folder found already there must be this user's, and nobody else may write
/// into it: a folder made beforehand by another account (or left 0777) lets that account
/// replace the emission's files and its lock between two runs.
fn refuse_foreign_folder(dir: &Path) -> Result<(), FsError> {
    let meta = fs::metadata(dir).map_err(FsError::io("look at folder", dir))?;
    match not_ours_alone(&meta) {
        Some(NotOurs::Owner { uid, me }) => Err(FsError::ForeignEmissionFolder {
            path: dir.to_path_buf(),
            uid,
            me,
        }),
        Some(NotOurs::Writable(mode)) => Err(FsError::WritableEmissionFolder {
            path: dir.to_path_buf(),
            mode,
        }),
        None => Ok(()),
    }
}

/// `path` opened without following a link or blocking on a FIFO, if it is a regular file
/// (`None` for anything else, or when it is gone).
fn open_own_file(path: &Path) -> Result<Option<File>, FsError> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let fd = match rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(FsError::io("open", path)(e.into())),
        };
        let file = File::from(fd);
        let regular = file
            .metadata()
            .map_err(FsError::io("look at", path))?
            .is_file();
        Ok(regular.then_some(file))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(None)
    }
}

/// Opens (or creates) a file of an emission folder that is written in place: a lock, the
/// audit log (`append`). Created with exactly `access` whatever the umask; never opened
/// through a link (`O_NOFOLLOW`: a link planted at its name is refused, not followed), nor
/// blocking on a FIFO; only a regular file. An existing file of ours that is open beyond
/// `access` (to others, to a group `access` does not name, or with more bits than its mode:
/// made by an earlier version, or in a folder since taken back from its group) is given
/// exactly `access` again: anyone who can open a lock file can `flock` it and stall every run,
/// and a log left 0640 would be readable by the group again if the folder were ever reopened.
pub fn open_in_place(path: &Path, access: Access, append: bool) -> Result<File, FsError> {
    #[cfg(unix)]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags};
        use std::os::unix::fs::MetadataExt;
        let mut flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        flags |= OFlags::NOCTTY;
        if append {
            flags |= OFlags::APPEND;
        }
        let refused = |e: rustix::io::Errno| -> FsError {
            if e == rustix::io::Errno::LOOP {
                FsError::InPlaceLink {
                    path: path.to_path_buf(),
                }
            } else {
                FsError::io("open", path)(e.into())
            }
        };
        let (file, created) = match rustix::fs::open(
            path,
            flags | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(0o600),
        ) {
            Ok(fd) => (File::from(fd), true),
            Err(rustix::io::Errno::EXIST) => (
                File::from(rustix::fs::open(path, flags, Mode::empty()).map_err(refused)?),
                false,
            ),
            Err(e) => return Err(refused(e)),
        };
        let meta = file.metadata().map_err(FsError::io("look at", path))?;
        if !meta.is_file() {
            return Err(FsError::io("open", path)(crate::fs::open::not_regular(
                meta.file_type(),
            )));
        }
        let me = rustix::process::geteuid().as_raw();
        if created || (meta.uid() == me && access.is_exceeded_by(&meta)) {
            access.apply(&file, path)?;
        }
        let now = fcntl_getfl(&file).map_err(|e| FsError::io("open", path)(e.into()))?;
        fcntl_setfl(&file, now - OFlags::NONBLOCK)
            .map_err(|e| FsError::io("open", path)(e.into()))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        let _ = access;
        fs::OpenOptions::new()
            .read(true)
            .write(true)
            .append(append)
            .create(true)
            .open(path)
            .map_err(FsError::io("open", path))
    }
}

/// The id of the group `name` (a name known to the system's group database, NSS included,
/// or a number), for `--group`.
#[allow(unsafe_code)] // getgrnam_r: no safe wrapper in std or rustix
pub fn group_id(name: &str) -> Result<u32, FsError> {
    if let Ok(gid) = name.parse::<u32>() {
        if gid == u32::MAX {
            return Err(FsError::ReservedGroupId { gid });
        }
        return Ok(gid);
    }
    #[cfg(target_os = "linux")]
    {
        let c_name = std::ffi::CString::new(name).map_err(|_| FsError::GroupNameNul)?;
        let mut buf: Vec<libc::c_char> = vec![0; 4096];
        loop {
            // SAFETY: `group` is plain data (integers and pointers) for which all-zero is a valid
            // value; getgrnam_r writes into it, into `buf` (whose length it is given) and into
            // `found`, and reads only the NUL-terminated `c_name`. The pointers it leaves in
            // `group` point into `buf`, and only `gr_gid` (an integer) is read afterwards.
            let mut group: libc::group = unsafe { std::mem::zeroed() };
            let mut found: *mut libc::group = std::ptr::null_mut();
            let rc = unsafe {
                libc::getgrnam_r(
                    c_name.as_ptr(),
                    &mut group,
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut found,
                )
            };
            if rc == libc::ERANGE && buf.len() < 1 << 20 {
                buf.resize(buf.len() * 2, 0);
                continue;
            }
            if rc != 0 {
                return Err(FsError::GroupLookup {
                    name: name.to_string(),
                    error: std::io::Error::from_raw_os_error(rc),
                });
            }
            if found.is_null() {
                return Err(FsError::NoSuchGroup {
                    name: name.to_string(),
                });
            }
            return Ok(group.gr_gid);
        }
    }
    #[cfg(not(target_os = "linux"))]
    Err(FsError::GroupNameUnsupported {
        name: name.to_string(),
    })
}

/// The mode of `path` when others may read it (a block, for `verify` and `load` to warn).
pub fn readable_by_others(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mode = fs::metadata(path).ok()?.mode() & 0o7777;
        (mode & 0o004 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The most bytes a secret file (a seed, a PEM key) may hold; a larger one is refused unread.
pub const SECRET_LIMIT: u64 = 64 * 1024;

/// Writes `bytes` to `path` as a secret: mode 0600, published atomically and never over an
/// existing file or link. See [`write_new`].
pub fn write_secret(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    write_new(path, bytes, 0o600)
}

/// Writes `bytes` to `path`, which must not exist, with exactly the Unix mode `mode`.
///
/// The bytes go to a temporary file with a random name in the same folder, created with
/// `O_CREAT|O_EXCL` (so never a stale file, nor through a link planted at its name) and mode
/// 0600 from the start, then set to `mode` whatever the umask; it is fsynced and published
/// under `path` without replacing anything there (`renameat2(RENAME_NOREPLACE)`, or a hard
/// link): a file or a link found at `path` is an error naming it, and a link is not followed.
/// The folder is fsynced last. On every error the temporary file is removed.
pub fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<(), FsError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| FsError::NoFileName {
        path: path.to_path_buf(),
    })?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .rand_bytes(8)
        .tempfile_in(dir)
        .map_err(|source| FsError::CreateTempIn {
            dir: dir.to_path_buf(),
            source,
        })?;
    // Dropping `tmp` on an early return removes the temporary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(mode))
            .map_err(FsError::io("set the mode of", tmp.path()))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|source| FsError::Write {
            path: tmp.path().to_path_buf(),
            source,
        })?;
    tmp.persist_noclobber(path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            FsError::AlreadyExists {
                path: path.to_path_buf(),
            }
        } else {
            FsError::Publish {
                from: e.file.path().to_path_buf(),
                to: path.to_path_buf(),
                source: e.error,
            }
        }
    })?;
    sync_dir(path)
}

/// Makes sure `dir` is fit to hold secret files, creating it (mode 0700) when missing.
///
/// An existing folder is refused when it is a link, when group or others may write into it
/// (they could then replace or add files there), or when it belongs to another user. The
/// mode bits themselves are checked, since root may write anywhere whatever they say.
pub fn private_dir(dir: &Path) -> Result<(), FsError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_dir(dir, 0o700)?,
        Err(e) => return Err(FsError::io("look at folder", dir)(e)),
        Ok(_) => {}
    }
    let meta = fs::symlink_metadata(dir).map_err(FsError::io("look at folder", dir))?;
    if meta.file_type().is_symlink() {
        return Err(FsError::PrivateFolderLink {
            path: dir.to_path_buf(),
        });
    }
    if !meta.is_dir() {
        return Err(FsError::NotAFolder {
            path: dir.to_path_buf(),
        });
    }
    match not_ours_alone(&meta) {
        Some(NotOurs::Writable(mode)) => Err(FsError::WritablePrivateFolder {
            path: dir.to_path_buf(),
            mode,
        }),
        Some(NotOurs::Owner { uid, me }) => Err(FsError::ForeignPrivateFolder {
            path: dir.to_path_buf(),
            uid,
            me,
        }),
        None => Ok(()),
    }
}

/// Why a folder is not this user's alone, by the one policy of folders that hold secrets or an
/// emission ([`private_dir`], [`emission_folder`]): others may write into it, or another user
/// owns it (either could replace the files kept there).
enum NotOurs {
    /// Group or others may write into it: its mode.
    Writable(u32),
    /// Another user owns it.
    Owner {
        /// The owner's user id.
        uid: u32,
        /// This process's effective user id.
        me: u32,
    },
}

/// [`NotOurs`] of a folder's metadata, `None` when it is this user's alone.
fn not_ours_alone(meta: &fs::Metadata) -> Option<NotOurs> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Some(NotOurs::Writable(mode));
        }
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Some(NotOurs::Owner {
                uid: meta.uid(),
                me,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    None
}

/// Whether a secret file that group or others may read is refused or let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Refuse it, with an error that says how to fix its mode.
    Refuse,
    /// Read it all the same; the caller warns (see [`Secret::exposed_mode`]).
    Allow,
}

/// The contents of a secret file read by [`read_secret`].
pub struct Secret {
    /// The bytes of the file.
    pub bytes: Vec<u8>,
    /// The file's permission bits.
    pub mode: u32,
}

impl Secret {
    /// The file's mode when group or others may read or write it.
    pub fn exposed_mode(&self) -> Option<u32> {
        (self.mode & 0o077 != 0).then_some(self.mode)
    }
}

/// Reads a secret file (a seed, a private key) of at most `limit` bytes; `what` names it in
/// errors ("seed file", "signing key").
///
/// The file is opened without following a link (`O_NOFOLLOW`), and without blocking on a
/// FIFO; it must be a regular file no larger than `limit`, else it is refused without being
/// read. A file whose mode lets group or others in is refused unless `exposure` allows it.
pub fn read_secret(
    path: &Path,
    what: &str,
    limit: u64,
    exposure: Exposure,
) -> Result<Secret, FsError> {
    use std::io::Read;
    let unreadable = |source| FsError::ReadSecret {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    };
    let file = open_nofollow(path, what)?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(FsError::SecretNotRegular {
            path: path.to_path_buf(),
            kind: crate::fs::open::kind_name(meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(FsError::SecretTooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            limit,
        });
    }
    let mode = permission_bits(&meta);
    if mode & 0o077 != 0 && exposure == Exposure::Refuse {
        return Err(FsError::SecretExposed {
            path: path.to_path_buf(),
            mode,
        });
    }
    // Room for all of it at once: no reallocation leaves a copy of the secret behind.
    let room = usize::try_from(meta.len().min(limit)).unwrap_or(0) + 1;
    let mut bytes = Vec::with_capacity(room);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(FsError::SecretGrew {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(Secret { bytes, mode })
}

#[cfg(unix)]
fn open_nofollow(path: &Path, what: &str) -> Result<File, FsError> {
    use rustix::fs::{Mode, OFlags};
    match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => Ok(File::from(fd)),
        Err(rustix::io::Errno::LOOP) => Err(FsError::SecretLink {
            path: path.to_path_buf(),
        }),
        Err(e) => Err(FsError::ReadSecret {
            what: what.to_string(),
            path: path.to_path_buf(),
            source: e.into(),
        }),
    }
}

#[cfg(not(unix))]
fn open_nofollow(path: &Path, what: &str) -> Result<File, FsError> {
    if fs::symlink_metadata(path)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
    {
        return Err(FsError::SecretLink {
            path: path.to_path_buf(),
        });
    }
    crate::fs::open::open_regular(path).map_err(|source| FsError::ReadSecret {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(unix)]
fn permission_bits(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn permission_bits(_: &fs::Metadata) -> u32 {
    0o600
}

/// Whether anything (a file, a folder, a link, even a dangling one) is at `path`.
pub fn entry_exists(path: &Path) -> Result<bool, FsError> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(FsError::io("look at", path)(e)),
    }
}

/// `path` as a shell word, for the commands that errors suggest: as it is when it is made of
/// safe characters, else single-quoted.
pub fn shell_quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if safe {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(all(test, unix))]
mod secret_tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_secret_is_0600_and_never_replaces_nor_follows_anything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.seed");
        write_secret(&path, b"first").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read(&path).unwrap(), b"first");
        let err = write_secret(&path, b"second").unwrap_err().to_string();
        assert!(err.contains("a.seed already exists"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"first");

        // A link at the final name, to a file or to nothing: refused, not followed.
        let target = dir.path().join("target");
        fs::write(&target, b"untouched").unwrap();
        symlink(&target, dir.path().join("b.seed")).unwrap();
        assert!(write_secret(&dir.path().join("b.seed"), b"x").is_err());
        assert_eq!(fs::read(&target).unwrap(), b"untouched");
        symlink(dir.path().join("nothing"), dir.path().join("c.seed")).unwrap();
        assert!(write_secret(&dir.path().join("c.seed"), b"x").is_err());
        assert!(!dir.path().join("nothing").exists());
        // No temporary file is left behind by the failures.
        assert_eq!(names(dir.path()), ["a.seed", "b.seed", "c.seed", "target"]);
    }

    #[test]
    fn a_new_file_gets_exactly_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("public.pem");
        write_new(&path, b"public", 0o644).unwrap();
        assert_eq!(mode(&path), 0o644);
        assert!(write_new(&dir.path().join("missing/x"), b"x", 0o600).is_err());
    }

    /// A file written in place (the audit log, a lock) that is open beyond the access it is
    /// opened with is narrowed to exactly that access; one already within it is never widened.
    /// The case first seen: an emission shared with `--group`, then taken back (folder 0700),
    /// whose log stayed 0640 for the group at every later append.
    #[test]
    fn a_file_written_in_place_is_narrowed_to_its_access_never_widened() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("emission.log.jsonl");
        let gid = fs::metadata(dir.path()).unwrap().gid();
        let set = |m: u32| fs::set_permissions(&path, fs::Permissions::from_mode(m)).unwrap();
        fs::write(&path, b"").unwrap();
        // (mode before, access, mode after)
        for (before, access, after) in [
            (0o640, Access::PRIVATE, 0o600),
            (0o644, Access::PRIVATE, 0o600),
            (0o700, Access::PRIVATE, 0o600),
            (0o4600, Access::PRIVATE, 0o600),
            (0o600, Access::PRIVATE, 0o600),
            (0o644, Access::shared_with(gid), 0o640),
            (0o660, Access::shared_with(gid), 0o640),
            (0o640, Access::shared_with(gid), 0o640),
            (0o600, Access::shared_with(gid), 0o600),
        ] {
            set(before);
            assert_eq!(mode(&path), before, "the mode was not set");
            drop(open_in_place(&path, access, true).unwrap());
            assert_eq!(mode(&path), after, "{before:o} opened with {access:?}");
        }
        // A group-readable file of another group than the access names is narrowed too.
        let other = Access::shared_with(gid.wrapping_add(1));
        set(0o640);
        assert!(other.is_exceeded_by(&fs::metadata(&path).unwrap()));
        assert!(!Access::shared_with(gid).is_exceeded_by(&fs::metadata(&path).unwrap()));
    }

    #[test]
    fn a_private_folder_is_made_0700_and_refused_when_others_may_write() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("out/private");
        private_dir(&private).unwrap();
        assert_eq!(mode(&private) & 0o077, 0);
        private_dir(&private).unwrap();
        for bad in [0o777, 0o720, 0o702, 0o1777] {
            fs::set_permissions(&private, fs::Permissions::from_mode(bad)).unwrap();
            let err = format!("{:#}", private_dir(&private).unwrap_err());
            assert!(err.contains(&format!("mode {bad:04o}")), "{err}");
            assert!(err.contains("chmod 700"), "{err}");
            assert!(err.contains("out/private"), "{err}");
        }
        // Readable by others is not what lets them replace a secret.
        fs::set_permissions(&private, fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&private).unwrap();
        let link = dir.path().join("link");
        symlink(&private, &link).unwrap();
        let err = private_dir(&link).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        let file = dir.path().join("file");
        fs::write(&file, b"").unwrap();
        assert!(private_dir(&file).is_err());
    }

    #[test]
    fn a_secret_is_read_only_from_a_private_regular_file_of_bounded_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        write_secret(&path, b"secret").unwrap();
        let read = read_secret(&path, "key", 100, Exposure::Refuse).unwrap();
        assert_eq!(read.bytes, b"secret");
        assert_eq!(read.exposed_mode(), None);

        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_secret(&path, "key", 100, Exposure::Refuse)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("key.pem has mode 0644"), "{err}");
        assert!(err.contains("chmod 600"), "{err}");
        let read = read_secret(&path, "key", 100, Exposure::Allow).unwrap();
        assert_eq!(read.bytes, b"secret");
        assert_eq!(read.exposed_mode(), Some(0o644));

        let link = dir.path().join("link.pem");
        symlink(&path, &link).unwrap();
        let err = read_secret(&link, "key", 100, Exposure::Allow)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("symbolic link"), "{err}");

        let big = dir.path().join("big.pem");
        File::create(&big).unwrap().set_len(1 << 30).unwrap();
        fs::set_permissions(&big, fs::Permissions::from_mode(0o600)).unwrap();
        let err = read_secret(&big, "key", 100, Exposure::Refuse)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("more than the 100"), "{err}");
        assert!(read_secret(dir.path(), "key", 100, Exposure::Allow).is_err());
    }

    #[test]
    fn paths_are_quoted_for_the_shell_when_needed() {
        assert_eq!(shell_quoted(Path::new("keys/a-b_c.pem")), "keys/a-b_c.pem");
        assert_eq!(shell_quoted(Path::new("my keys/k.pem")), "'my keys/k.pem'");
        assert_eq!(shell_quoted(Path::new("it's")), r"'it'\''s'");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temporary_names_are_unique_and_removed_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("block-00001.csv");
        let a = Staged::create(&path, Access::PRIVATE).unwrap();
        let b = Staged::create(&path, Access::PRIVATE).unwrap();
        assert_ne!(a.temp_path(), b.temp_path());
        assert!(a
            .temp_path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".block-00001.csv."));
        drop(a);
        drop(b);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn publish_replaces_and_stale_temps_of_this_name_only_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("block-00001.csv");
        fs::write(&path, b"old").unwrap();
        write_atomic(&path, b"new", Access::PRIVATE).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        for stale in [
            ".block-00001.csv.tmp",
            ".block-00001.csv.abcdefgh.tmp",
            ".block-00002.csv.abcdefgh.tmp",
        ] {
            fs::write(dir.path().join(stale), b"x").unwrap();
        }
        assert_eq!(remove_stale_temps(&path).unwrap(), 2);
        assert_eq!(
            names(dir.path()),
            vec![".block-00002.csv.abcdefgh.tmp", "block-00001.csv"]
        );
    }

    /// True if the file system of `dir` takes `O_DIRECT`.
    fn direct_io_here(dir: &Path) -> bool {
        set_direct(&File::create(dir.join("probe")).unwrap(), true)
    }

    /// Bytes written in pieces of every awkward size (empty, one byte, a few bytes short of an
    /// aligned block, more than the whole buffer) reach the file exactly, in order, with direct
    /// writes asked for or not; and where this folder's file system takes direct writes, the
    /// writer keeps them to the end (a misaligned buffer or write would fall back silently).
    #[test]
    fn a_stream_writer_writes_exactly_its_bytes_direct_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let supported = direct_io_here(dir.path());
        let align = StreamWriter::ALIGN;
        let sizes = [
            0,
            1,
            align - 3,
            align,
            7,
            StreamWriter::CAPACITY - 1,
            2 * StreamWriter::CAPACITY + 5,
            align + 1,
            0,
            300,
        ];
        for direct in [true, false] {
            let path = dir.path().join(format!("out-{direct}"));
            let file = File::create(&path).unwrap();
            let mut writer = StreamWriter::new(&file, direct);
            assert_eq!(writer.is_direct(), direct && supported);
            let mut expected = Vec::new();
            let mut next = 0u32;
            for &size in &sizes {
                let piece: Vec<u8> = (0..size)
                    .map(|_| {
                        next = next.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        (next >> 16) as u8
                    })
                    .collect();
                writer.write(&piece).unwrap();
                writer.start_writeback();
                expected.extend_from_slice(&piece);
            }
            assert_eq!(writer.is_direct(), direct && supported);
            writer.finish().unwrap();
            file.sync_all().unwrap();
            assert!(fs::read(&path).unwrap() == expected, "direct: {direct}");
        }
    }

    /// A file that is not empty is appended to through the page cache: its offset would not be
    /// aligned.
    #[test]
    fn a_stream_writer_appends_to_a_non_empty_file_without_direct_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        fs::write(&path, b"head,").unwrap();
        let file = fs::OpenOptions::new().append(true).open(&path).unwrap();
        let mut writer = StreamWriter::new(&file, true);
        assert!(!writer.is_direct());
        writer.write(&vec![b'x'; 3 * StreamWriter::ALIGN]).unwrap();
        writer.finish().unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_eq!(&bytes[..5], b"head,");
        assert_eq!(bytes.len(), 5 + 3 * StreamWriter::ALIGN);
    }

    /// Files of every awkward size are read back exactly, in reads of awkward sizes, whichever
    /// way they are read; asked to, the reader reads around the cache where the folder's file
    /// system allows it, and keeps doing so to the end.
    #[test]
    fn a_direct_reader_reads_exactly_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let supported = direct_io_here(dir.path());
        let align = StreamWriter::ALIGN;
        for size in [
            0,
            1,
            align - 1,
            align,
            align + 1,
            DirectReader::CAPACITY + 3,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let path = dir.path().join(format!("in-{size}"));
            fs::write(&path, &bytes).unwrap();
            for mode in [ReadMode::Cached, ReadMode::Direct, ReadMode::Auto] {
                let mut reader = DirectReader::open(&path, mode).unwrap();
                assert_eq!(reader.is_direct(), mode == ReadMode::Direct && supported);
                let mut got = Vec::new();
                let mut piece = vec![0u8; 1000];
                for step in [1, 999, 0, 37, 1000].iter().cycle() {
                    let n = reader.read(&mut piece[..*step]).unwrap();
                    if n == 0 && *step > 0 {
                        break;
                    }
                    got.extend_from_slice(&piece[..n]);
                }
                assert!(got == bytes, "size {size}, {mode:?}");
                assert_eq!(reader.is_direct(), mode == ReadMode::Direct && supported);
            }
        }
    }

    /// `Auto` reads a file just written through the cache from the cache, and one written
    /// around it (as `emit` writes a block) around it, where the file system allows that.
    #[test]
    fn auto_reads_around_the_cache_only_a_file_that_is_not_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = vec![b'x'; 2 * StreamWriter::CAPACITY + 10];
        let cached = dir.path().join("cached");
        fs::write(&cached, &bytes).unwrap();
        assert!(!DirectReader::open(&cached, ReadMode::Auto)
            .unwrap()
            .is_direct());
        let around = dir.path().join("around");
        let file = File::create(&around).unwrap();
        let mut writer = StreamWriter::new(&file, true);
        let supported = writer.is_direct();
        writer.write(&bytes).unwrap();
        writer.finish().unwrap();
        file.sync_all().unwrap();
        let reader = DirectReader::open(&around, ReadMode::Auto).unwrap();
        assert_eq!(reader.is_direct(), supported);
    }

    /// A direct write or read the kernel refuses (here: from a buffer one byte off its
    /// alignment, `EINVAL`) goes on through the page cache from where it was: nothing is lost,
    /// repeated or reordered.
    #[test]
    fn refused_direct_io_falls_back_to_the_page_cache_without_losing_a_byte() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..2 * StreamWriter::CAPACITY + 12_345)
            .map(|i| (i % 253) as u8)
            .collect();
        let path = dir.path().join("out");
        let file = File::create(&path).unwrap();
        let mut writer = StreamWriter::new(&file, true);
        let supported = writer.is_direct();
        writer.start += 1;
        // The refusal comes in the middle of the second write, with bytes left gathered; the
        // third write comes after them.
        let tail = bytes.len() - 1000;
        writer.write(&bytes[..100]).unwrap();
        writer.write(&bytes[100..tail]).unwrap();
        assert!(
            !writer.is_direct(),
            "the refused write must have turned direct writes off"
        );
        writer.write(&bytes[tail..]).unwrap();
        writer.finish().unwrap();
        file.sync_all().unwrap();
        assert!(fs::read(&path).unwrap() == bytes);

        // Refused at the first read, and after a whole buffer was read directly.
        for before in [0, DirectReader::CAPACITY] {
            let mut reader = DirectReader::open(&path, ReadMode::Direct).unwrap();
            assert_eq!(reader.is_direct(), supported);
            let mut got = vec![0u8; before];
            reader.read_exact(&mut got).unwrap();
            assert_eq!(reader.at, reader.len);
            reader.start += 1;
            reader.read_to_end(&mut got).unwrap();
            assert!(!reader.is_direct());
            assert!(got == bytes, "refused after {before} bytes");
        }
    }
}
