//! Writing files so that a block appears under its final name only when complete: write to a
//! temporary file in the same folder, flush, fsync, rename, fsync the folder.
//!
//! Temporary names are unique per process (`.<name>.<random>.tmp`, created with `O_EXCL` by
//! the `tempfile` crate), so two runs never write into each other's files, and every error
//! path removes its own temporary file (a [`Staged`] file that is dropped unpublished is
//! deleted). A process killed with SIGKILL cannot clean up: the next run that holds the same
//! lock removes such stale files with [`remove_stale_temps`].

use anyhow::{Context, Result};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file being written under a temporary name beside its final `path`; deleted if dropped
/// before [`Staged::publish`].
pub struct Staged {
    file: tempfile::NamedTempFile,
    path: PathBuf,
}

impl Staged {
    /// Creates a new, empty temporary file for `path` (`O_CREAT|O_EXCL`, the given Unix mode).
    pub fn create(path: &Path, mode: u32) -> Result<Staged> {
        let dir = parent(path);
        let prefix = format!(".{}.", file_name(path));
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp").rand_bytes(8);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(mode));
        }
        #[cfg(not(unix))]
        let _ = mode;
        let file = builder.tempfile_in(dir).with_context(|| {
            format!(
                "cannot create a temporary file for {} in {}",
                path.display(),
                dir.display()
            )
        })?;
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
    pub fn finish(&mut self) -> Result<()> {
        let tmp = self.file.path().display().to_string();
        self.file
            .as_file_mut()
            .sync_all()
            .with_context(|| format!("cannot write {tmp} (disk full?)"))
    }

    /// Renames the finished file to its final name, replacing any file there, and fsyncs the
    /// folder. On failure the temporary file is removed.
    pub fn publish(self) -> Result<()> {
        let Staged { file, path } = self;
        let tmp = file.path().display().to_string();
        // On error `persist` hands the file back; dropping it deletes it.
        file.persist(&path)
            .map_err(|e| e.error)
            .with_context(|| format!("cannot rename {tmp} to {}", path.display()))?;
        sync_dir(&path)
    }
}

/// Writes `bytes` to a temporary file for `path` and fsyncs it, to [`Staged::publish`] later.
pub fn stage(path: &Path, bytes: &[u8], mode: u32) -> Result<Staged> {
    let mut staged = Staged::create(path, mode)?;
    let tmp = staged.temp_path().display().to_string();
    staged
        .file()
        .write_all(bytes)
        .with_context(|| format!("cannot write {tmp} (disk full?)"))?;
    staged.finish()?;
    Ok(staged)
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    stage(path, bytes, mode)?.publish()
}

/// Removes the temporary files left for `path` by a process that was killed (`.<name>.*.tmp`,
/// and `.<name>.tmp` of earlier versions). Call it only while holding the lock that covers
/// `path`: a temporary file of a live process would be removed too. Returns how many.
pub fn remove_stale_temps(path: &Path) -> Result<usize> {
    let dir = parent(path);
    let name = file_name(path);
    let prefix = format!(".{name}.");
    let mut removed = 0;
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("cannot read folder {}", dir.display())),
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read folder {}", dir.display()))?;
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if file.starts_with(&prefix) && file.ends_with(".tmp") {
            let stale = entry.path();
            match fs::remove_file(&stale) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot remove stale {}", stale.display()))
                }
            }
        }
    }
    Ok(removed)
}

/// Removes `path` if it exists, and fsyncs its folder.
pub fn remove(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => sync_dir(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// Renames `from` to `to` and fsyncs the folder.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to)
        .with_context(|| format!("cannot rename {} to {}", from.display(), to.display()))?;
    sync_dir(to)
}

fn parent(path: &Path) -> &Path {
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
fn sync_dir(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let dir = parent(path);
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
        let a = Staged::create(&path, 0o644).unwrap();
        let b = Staged::create(&path, 0o644).unwrap();
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
        write_atomic(&path, b"new", 0o644).unwrap();
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
}
