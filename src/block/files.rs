//! Writing files so that a block appears under its final name only when complete: write to a
//! temporary name in the same folder, flush, fsync, rename, fsync the folder.

use anyhow::{Context, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name used while `path` is being written: `.<name>.tmp` beside it.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp"))
}

/// Creates (or truncates) the temporary file for `path`, with the given Unix mode.
pub fn create_temp(path: &Path, mode: u32) -> Result<(PathBuf, File)> {
    let tmp = temp_path(path);
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let file = options
        .open(&tmp)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    Ok((tmp, file))
}

/// Fsyncs a finished temporary file, so that it can be published.
pub fn finish(file: File, tmp: &Path) -> Result<()> {
    file.sync_all()
        .with_context(|| format!("cannot write {} (disk full?)", tmp.display()))
}

/// Renames a finished temporary file to its final name, and fsyncs the folder.
pub fn publish(tmp: &Path, path: &Path) -> Result<()> {
    fs::rename(tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    sync_dir(path)
}

/// Writes `bytes` to the temporary file of `path` and fsyncs it; returns the temporary path,
/// to [`publish`] later.
pub fn stage(path: &Path, bytes: &[u8], mode: u32) -> Result<PathBuf> {
    let (tmp, mut file) = create_temp(path, mode)?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write {} (disk full?)", tmp.display()))?;
    finish(file, &tmp)?;
    Ok(tmp)
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let tmp = stage(path, bytes, mode)?;
    publish(&tmp, path)
}

/// Fsyncs the folder holding `path`, so that a rename survives a crash.
fn sync_dir(path: &Path) -> Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("cannot sync folder {}", dir.display()))?;
    }
    Ok(())
}

/// Creates a folder (and its parents) with the given Unix mode for the last one.
pub fn create_dir(path: &Path, mode: u32) -> Result<()> {
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
        .with_context(|| format!("cannot create folder {}", path.display()))
}
