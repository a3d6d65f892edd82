//! Emission packs: a sealed emission folder as one file made of standard parts, to ship it from
//! the air-gapped factory and keep it for years (docs/FORMAT.md, "Emission pack").
//!
//! A pack is `age(zstd(tar(folder)))`: a tar stream of the emission folder's files, in one fixed
//! order ([`member`]), compressed with zstd and encrypted with age to one or more X25519
//! recipients (the game server, the archive, the auditor). The tar holds the folder's files'
//! exact bytes but for one thing: each block's CSV is carried as its lines without the `sha256`
//! column ([`lines`]), which every reader recomputes to rebuild the CSV's exact bytes (36 % of a
//! CSV, 57 % of what zstd makes of it: a pack is 0.18 of its folder instead of 0.40, and half as
//! much to decrypt and decompress). `age -d -i KEY PACK | zstd -d | tar x` gives the folder with
//! common tools (the CSVs as their lines: docs/FORMAT.md says how to rebuild them), and this
//! program's [`unpack`] gives it back byte for byte, every member treated as hostile. Packs made
//! before the lines form (whole CSVs) are still read.
//!
//! - [`error`]: [`PackError`], why a pack was not written, read, checked or unpacked, naming
//!   the pack, the member, the block or the file;
//! - [`member`]: which files a pack carries, their names and their order;
//! - [`lines`]: a CSV as its lines and back, exactly;
//! - [`write`]: [`write::pack`], which refuses an emission that is not sealed and binds every byte
//!   it packs to the signed seal;
//! - [`read`]: the streaming reader every use of a pack goes through (refuses links, devices,
//!   absolute or climbing names, duplicates, members out of order, oversized members or
//!   headers (a long name or PAX records past [`read::MAX_HEADER_BYTES`]), and any
//!   byte changed, cut or added, by reading the age stream to its authenticated end);
//! - [`stage`]: what the streaming readers share: the private folder of the small signed
//!   files, and a CSV member handed to a check on a thread of its own;
//! - [`verify`]: `verify PACK`, every block checked from its member as it streams (with
//!   custody shares, replayed from the seed they rebuild);
//! - [`load`]: `load PACK`, every block loaded from its member as it streams, with `load`'s
//!   checks; the whole pack in one transaction, committed once it has read to its end;
//! - [`report`]: `report PACK`, the auditor's report made as the pack streams;
//! - [`unpack`]: the folder restored byte for byte, staged, published whole or not at all.

pub mod error;
pub mod lines;
#[cfg(feature = "load")]
pub mod load;
pub mod member;
pub mod read;
pub mod report;
pub mod stage;
pub mod unpack;
pub mod verify;
pub mod write;

pub use error::{MemberProblem, PackError};
pub use read::{read_pack, PackContents, Sink};
pub use unpack::unpack;
pub use write::{pack, PackOptions, PackSummary};
