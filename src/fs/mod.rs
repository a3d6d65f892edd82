//! The file system as a hostile place: what the commands read may be a FIFO, a device or a
//! link planted by someone with write access to a shared folder; what they write may land on
//! a device node or a file that is not theirs; a folder may hold links that loop.
//!
//! - [`open`]: files are read only when they are regular files, opened without blocking, so
//!   that a FIFO at a block's name is refused at once instead of hanging a batch job.
//! - [`dir`]: folders are listed without following links, with loop detection and a depth
//!   bound, and an error closing a folder is an error, not a panic (std's `ReadDir` panics).
//! - [`output`]: a file a command writes on request (`--json`, `--svg`, `--out`) replaces
//!   nothing unless `--force` is given, and then only a regular file; never a device, a FIFO,
//!   a socket, a folder or a link.
//! - [`pipe`]: a stream read by two checks in one pass (a bounded channel as a reader, and a
//!   reader that copies what it reads into one).
//! - [`error`]: [`FsError`], the errors of [`files`], each naming what was being done and
//!   where.

pub mod dir;
pub mod error;
pub mod files;
pub mod open;
pub mod output;
pub mod pipe;

pub use error::{with_causes, FsError};
