//! Reading a pack as a stream: the one reader of packs, for [`super::unpack`] and every command
//! that reads one. Everything in a pack is hostile (anyone with a recipient's public key can
//! make one), so each member is checked before its bytes are handed on:
//!
//! - a regular file (no link, hard link, device, FIFO, folder, sparse file or global header);
//! - named `<game>/<stake>/e<emission:04>/<file>`, the same three folders for every member, the
//!   emission's as it writes them ([`emission_of`]: so no `/`, `..`, leading `.` or absolute
//!   name), the file one an emission holds ([`Member::of_name`]);
//! - strictly after the one before in the pack order (so never twice);
//! - at most the bytes its kind may hold, a CSV exactly the bytes its manifest (read before it)
//!   says; a block's lines member (`block-NNNNN.lines.csv`, the form `pack` writes) exactly the
//!   bytes the manifest's CSV less its hash column makes, handed on as the CSV rebuilt from it
//!   ([`super::lines::Rebuild`]: the very bytes the manifest names, or an error); every block in
//!   one form, once;
//! - and after the tar's end only zeros, then the end of the zstd stream, then the end of the
//!   age stream: age authenticates every 64 KiB chunk and marks the last one, so a byte changed
//!   anywhere, a cut or an addition, fails the read.
//!
//! Memory: the small members (at most the log's 256 MiB, a kilobyte or so each in practice) are
//! held while handed on, a CSV never (it is passed as a reader); zstd's window is at most
//! 2^27 bytes (the decoder's default limit, which a pack's header cannot raise); and what the
//! tar reader reads to find the next member (the padding of the one before, its header, and
//! the extension records the tar crate reads whole into memory: a GNU long name or long link
//! name, PAX records, sparse maps) is at most [`MAX_HEADER_BYTES`], else the member is refused
//! unread (a long name stating gigabytes made every reader hold them).

use super::error::{MemberProblem, PackError};
use super::lines::{lines_bytes, Rebuild};
use super::member::{Member, MAX_RESHARE_FILES};
use crate::block::id::EmissionId;
use crate::block::manifest::Manifest;
use crate::untrusted::{shown, shown_path};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufReader, Read};
use std::path::Path;

/// What the reader and its sinks return.
type Result<T, E = PackError> = std::result::Result<T, E>;

/// Most bytes of zeros allowed after the tar's end-of-archive blocks (tar pads to its records).
const MAX_TRAILING_ZEROS: u64 = 1 << 20;

/// Most bytes the tar reader may read to find the next member, before the member's data: the
/// padding of the member before, the member's header and its extension records (a GNU long
/// name or long link name, PAX records, a sparse map), which the tar crate reads whole into
/// memory whatever size they state. `pack` writes at most a header and a long name of a few
/// hundred bytes (about 1.5 KiB with the padding).
pub const MAX_HEADER_BYTES: u64 = 64 << 10;

/// The decompressed tar stream, read by the tar reader through [`Budget`]: while it looks for
/// the next member, at most what is left of [`MAX_HEADER_BYTES`].
struct Budgeted<R> {
    inner: R,
    budget: std::rc::Rc<Budget>,
}

/// What the tar reader may still read before the next member's data (`None`: while a member's
/// data is read, bounded by its own limit), and whether it asked for more.
#[derive(Default)]
struct Budget {
    left: std::cell::Cell<Option<u64>>,
    exceeded: std::cell::Cell<bool>,
}

impl<R: Read> Read for Budgeted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(left) = self.budget.left.get() else {
            return self.inner.read(buf);
        };
        if buf.is_empty() {
            return Ok(0);
        }
        if left == 0 {
            self.budget.exceeded.set(true);
            return Err(std::io::Error::other(format!(
                "its tar headers take more than {MAX_HEADER_BYTES} bytes"
            )));
        }
        let most = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..most])?;
        self.budget.left.set(Some(left - n as u64));
        Ok(n)
    }
}

/// What receives a pack's members, in order.
pub trait Sink {
    /// The emission the pack holds (its members' `<game>/<stake>/e<emission:04>`), before its
    /// first member.
    fn start(&mut self, emission: &EmissionId) -> Result<()> {
        let _ = emission;
        Ok(())
    }

    /// A member other than a CSV, whole.
    fn small(&mut self, member: &Member, bytes: &[u8]) -> Result<()>;

    /// Block `block`'s CSV, whose manifest (already handed to [`Sink::small`]) is `manifest`:
    /// `reader` gives exactly `manifest.csv.bytes` bytes.
    fn csv(&mut self, block: u32, manifest: &Manifest, reader: &mut dyn Read) -> Result<()>;

    /// Block `block`'s CSV in its lines form (`block-NNNNN.lines.csv`, [`super::lines`]):
    /// `reader` gives exactly the member's bytes. By default the CSV is rebuilt from them
    /// ([`Rebuild`]: the very bytes the manifest names, or an error) and handed to
    /// [`Sink::csv`]; a sink that checks the lines form itself (`verify`:
    /// [`crate::verify::Form::Lines`]) reads them as they are.
    fn lines(&mut self, block: u32, manifest: &Manifest, reader: &mut dyn Read) -> Result<()> {
        rebuilt(reader, manifest, |csv| self.csv(block, manifest, csv))
    }
}

/// Hands the CSV rebuilt from the lines `reader` gives (of the block whose manifest is
/// `manifest`) to `csv`, then reads the rest of it, so that every line is checked to map back
/// whatever `csv` read.
pub(super) fn rebuilt(
    reader: &mut dyn Read,
    manifest: &Manifest,
    csv: impl FnOnce(&mut dyn Read) -> Result<()>,
) -> Result<()> {
    let mut rebuilt = Rebuild::new(reader, manifest.tickets);
    csv(&mut rebuilt)?;
    std::io::copy(&mut rebuilt, &mut std::io::sink())
        .map_err(|error| PackError::Rebuilt { error })?;
    Ok(())
}

/// What a pack held, once read to its end.
#[derive(Debug, Clone)]
pub struct PackContents {
    /// The emission its members name (`<game>/<stake>/e<emission:04>`).
    pub emission: EmissionId,
    /// Members read.
    pub members: usize,
    /// The blocks, in order.
    pub blocks: Vec<u32>,
    /// Bytes of the folder's files the members stand for (a lines member counts as the CSV
    /// it is rebuilt into).
    pub bytes: u64,
}

/// Opens `path` with one of `identities` and hands every member to `sink`, checking the pack as
/// the module says. An error names the pack and the member.
pub fn read_pack(
    path: &Path,
    identities: &[age::x25519::Identity],
    sink: &mut dyn Sink,
) -> Result<PackContents> {
    read_pack_hashing(path, identities, sink, None)
}

/// [`read_pack`], and with `sha256`, the SHA-256 of the pack file's bytes fed to it as they
/// are read: every byte of the file, those after the age stream's end too (none, in a pack
/// this program made), so that the pack's own trusted timestamp is checked against the very
/// bytes read, the file read once.
pub fn read_pack_hashing(
    path: &Path,
    identities: &[age::x25519::Identity],
    sink: &mut dyn Sink,
    mut sha256: Option<&mut sha2::Sha256>,
) -> Result<PackContents> {
    let name = shown_path(path);
    let file = crate::fs::open::open_regular(path).map_err(|source| PackError::Open {
        pack: name.clone(),
        source,
    })?;
    let contents = read_stream(
        &name,
        Hashed {
            inner: &file,
            sha: sha256.as_deref_mut(),
        },
        identities,
        sink,
    )?;
    if let Some(sha) = sha256 {
        let mut rest = Hashed {
            inner: &file,
            sha: Some(sha),
        };
        std::io::copy(&mut rest, &mut std::io::sink()).map_err(|error| PackError::ReadToEnd {
            pack: name.clone(),
            error,
        })?;
    }
    Ok(contents)
}

/// A reader that feeds what it reads to a SHA-256, if it has one.
struct Hashed<'a, R> {
    inner: R,
    sha: Option<&'a mut sha2::Sha256>,
}

impl<R: Read> Read for Hashed<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(sha) = &mut self.sha {
            sha2::Digest::update(&mut **sha, &buf[..n]);
        }
        Ok(n)
    }
}

/// [`read_pack`] of the pack file's bytes `file`, named `name` in errors.
fn read_stream(
    name: &str,
    file: impl Read,
    identities: &[age::x25519::Identity],
    sink: &mut dyn Sink,
) -> Result<PackContents> {
    let decryptor =
        age::Decryptor::new_buffered(BufReader::with_capacity(1 << 20, file)).map_err(|error| {
            PackError::NotAPack {
                pack: name.to_string(),
                error,
            }
        })?;
    let decrypted = decryptor
        .decrypt(identities.iter().map(|i| i as &dyn age::Identity))
        .map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => PackError::NoMatchingIdentity {
                pack: name.to_string(),
            },
            error => PackError::Decrypt {
                pack: name.to_string(),
                error,
            },
        })?;
    let decompress = |source| PackError::Decompress {
        pack: name.to_string(),
        source,
    };
    let mut decoder = zstd::stream::read::Decoder::new(decrypted).map_err(decompress)?;
    // Stated here rather than left to the library's default: a frame may not ask for more.
    decoder.window_log_max(27).map_err(decompress)?;
    let budget = std::rc::Rc::new(Budget::default());
    let mut archive = tar::Archive::new(Budgeted {
        inner: decoder,
        budget: budget.clone(),
    });
    let mut state = State {
        pack: name.to_string(),
        emission: None,
        members: 0,
        blocks: Vec::new(),
        bytes: 0,
        last: None,
        manifests: BTreeMap::new(),
        signed: BTreeSet::new(),
        seen: BTreeSet::new(),
        reshares: 0,
        lines: None,
    };
    let mut entries = archive.entries().map_err(|error| PackError::TarStream {
        pack: name.to_string(),
        error,
    })?;
    loop {
        crate::interrupt::check()?;
        let number = state.members + 1;
        // The headers before the member's data, bounded; its data, by the member's limit.
        budget.left.set(Some(MAX_HEADER_BYTES));
        let next = entries.next();
        budget.left.set(None);
        let Some(entry) = next else { break };
        let mut entry = entry.map_err(|error| {
            if budget.exceeded.get() {
                PackError::HeaderTooLarge {
                    pack: name.to_string(),
                    number,
                    limit: MAX_HEADER_BYTES,
                }
            } else {
                PackError::MemberHeader {
                    pack: name.to_string(),
                    number,
                    error,
                }
            }
        })?;
        state.member(&mut entry, number, sink)?;
    }
    let contents = state.finish()?;
    // The rest of the stream: the tar's padding (zeros), then the ends of the zstd and age
    // streams, which authenticate the whole.
    let mut decoder = archive.into_inner().inner;
    let mut rest = Vec::new();
    (&mut decoder)
        .take(MAX_TRAILING_ZEROS + 1)
        .read_to_end(&mut rest)
        .map_err(|error| PackError::End {
            pack: name.to_string(),
            error,
        })?;
    if rest.len() as u64 > MAX_TRAILING_ZEROS || rest.iter().any(|&b| b != 0) {
        return Err(PackError::AfterTar {
            pack: name.to_string(),
        });
    }
    let mut inner = decoder.finish();
    let mut extra = [0u8; 1];
    let more = inner.read(&mut extra).map_err(|error| PackError::End {
        pack: name.to_string(),
        error,
    })?;
    if more != 0 {
        return Err(PackError::AfterStream {
            pack: name.to_string(),
        });
    }
    Ok(contents)
}

/// The emission whose folders a member's name has, if they are that emission's as it writes
/// them ([`EmissionId::folder`]): a game id, a canonical price, `e` and four digits. So no
/// `..`, no leading `.`, no other spelling of the same emission.
fn emission_of(game: &str, stake: &str, emission: &str) -> Option<EmissionId> {
    let named = format!("{game}/{stake}/{emission}");
    named
        .parse::<EmissionId>()
        .ok()
        .filter(|id| id.to_string() == named && emission.len() == 5)
}

struct State {
    pack: String,
    /// The emission the first member named.
    emission: Option<EmissionId>,
    /// Members read.
    members: usize,
    /// The blocks read, in order.
    blocks: Vec<u32>,
    /// Bytes of the folder's files the members stand for.
    bytes: u64,
    last: Option<Member>,
    manifests: BTreeMap<u32, Manifest>,
    /// The block manifests whose signature was read.
    signed: BTreeSet<u32>,
    /// The members of the emission as a whole read (record, seal...).
    seen: BTreeSet<Member>,
    reshares: usize,
    /// The form of the blocks read so far: lines members (`true`) or whole CSVs.
    lines: Option<bool>,
}

impl State {
    fn member<R: Read>(
        &mut self,
        entry: &mut tar::Entry<'_, R>,
        number: usize,
        sink: &mut dyn Sink,
    ) -> Result<()> {
        let pack = self.pack.clone();
        let raw = entry.path_bytes().into_owned();
        let shown_name = shown(&raw);
        let at = |problem| PackError::Member {
            pack: pack.clone(),
            number,
            name: shown_name.clone(),
            problem,
        };
        let kind = entry.header().entry_type();
        if kind != tar::EntryType::Regular {
            return Err(at(MemberProblem::NotRegular {
                kind: format!("{kind:?}"),
            }));
        }
        let text = std::str::from_utf8(&raw).map_err(|_| at(MemberProblem::NameNotUtf8))?;
        let parts: Vec<&str> = text.split('/').collect();
        let [game, stake, emission, file] = parts[..] else {
            return Err(at(MemberProblem::NotNamed));
        };
        let id = emission_of(game, stake, emission)
            .ok_or_else(|| at(MemberProblem::NotEmissionFolders))?;
        match &self.emission {
            None => {
                sink.start(&id)?;
                self.emission = Some(id);
            }
            Some(first) if *first != id => {
                return Err(at(MemberProblem::OtherEmission {
                    first: first.clone(),
                }))
            }
            Some(_) => {}
        }
        let member = Member::of_name(file).ok_or_else(|| at(MemberProblem::NotEmissionFile))?;
        if let Some(last) = &self.last {
            if member <= *last {
                return Err(at(MemberProblem::OutOfOrder { after: last.name() }));
            }
        }
        if let Member::Reshare(_) = member {
            self.reshares += 1;
            if self.reshares > MAX_RESHARE_FILES {
                return Err(at(MemberProblem::TooManyReshares {
                    limit: MAX_RESHARE_FILES,
                }));
            }
        }
        // The size the entry is read by (a PAX header may state it instead of the ustar field).
        let size = entry.size();
        if size > member.limit() {
            return Err(at(MemberProblem::TooLarge {
                size,
                limit: member.limit(),
            }));
        }
        self.members = number;
        if let Member::Csv(block) | Member::Lines(block) = member {
            let lines = matches!(member, Member::Lines(_));
            match self.lines {
                Some(form) if form != lines => return Err(at(MemberProblem::MixedForms)),
                _ => self.lines = Some(lines),
            }
            if self.blocks.contains(&block) {
                return Err(at(MemberProblem::CsvTwice { block }));
            }
            let manifest = self
                .manifests
                .get(&block)
                .ok_or_else(|| at(MemberProblem::CsvWithoutManifest { block }))?;
            let wanted = if lines {
                lines_bytes(manifest.csv.bytes, manifest.tickets).ok_or_else(|| {
                    at(MemberProblem::CannotHold {
                        bytes: manifest.csv.bytes,
                        tickets: manifest.tickets,
                    })
                })?
            } else {
                manifest.csv.bytes
            };
            if size != wanted {
                return Err(at(MemberProblem::WrongSize { size, wanted }));
            }
            self.bytes = self.bytes.saturating_add(manifest.csv.bytes);
            let mut member = entry.take(size);
            if lines {
                sink.lines(block, manifest, &mut member)
                    .map_err(|source| PackError::Lines {
                        pack: pack.clone(),
                        number,
                        name: shown_name.clone(),
                        source: Box::new(source),
                    })?;
            } else {
                sink.csv(block, manifest, &mut member)?;
            }
            // Whatever the sink left is read too, so that the stream is authenticated to its end.
            std::io::copy(&mut member, &mut std::io::sink())
                .map_err(|error| at(MemberProblem::Unreadable { error }))?;
            self.blocks.push(block);
        } else {
            self.bytes = self.bytes.saturating_add(size);
            let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            entry
                .take(size)
                .read_to_end(&mut bytes)
                .map_err(|error| at(MemberProblem::Unreadable { error }))?;
            if bytes.len() as u64 != size {
                return Err(at(MemberProblem::Cut));
            }
            if let Member::Manifest(block, false) = member {
                let manifest = Manifest::from_bytes(&bytes)
                    .map_err(|error| at(MemberProblem::InvalidManifest { error }))?;
                self.manifests.insert(block, manifest);
            }
            match member {
                Member::Manifest(block, true) => {
                    if !self.manifests.contains_key(&block) {
                        return Err(at(MemberProblem::SignatureWithoutManifest));
                    }
                    self.signed.insert(block);
                }
                Member::Manifest(..) => {}
                ref whole => {
                    self.seen.insert(whole.clone());
                }
            }
            sink.small(&member, &bytes)?;
        }
        self.last = Some(member);
        Ok(())
    }

    /// Every file a sealed emission holds is there, and every block whole: what the pack held.
    fn finish(&self) -> Result<PackContents> {
        let pack = &self.pack;
        let Some(emission) = self.emission.clone() else {
            return Err(PackError::Empty { pack: pack.clone() });
        };
        for required in [
            Member::Record,
            Member::RecordSig,
            Member::Seal,
            Member::SealSig,
            Member::Log,
            Member::PublicKey,
        ] {
            if !self.seen.contains(&required) {
                return Err(PackError::MissingMember {
                    pack: pack.clone(),
                    file: required.name(),
                });
            }
        }
        for block in self.manifests.keys() {
            if self.blocks.binary_search(block).is_err() {
                return Err(PackError::NoCsv {
                    pack: pack.clone(),
                    block: *block,
                });
            }
            if !self.signed.contains(block) {
                return Err(PackError::NoManifestSignature {
                    pack: pack.clone(),
                    block: *block,
                });
            }
        }
        Ok(PackContents {
            emission,
            members: self.members,
            blocks: self.blocks.clone(),
            bytes: self.bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_folders_are_an_emissions_as_it_writes_them() {
        let id = emission_of("ruche-or", "0.5", "e0001").unwrap();
        assert_eq!(id.to_string(), "ruche-or/0.5/e0001");
        for bad in ["", ".", "..", ".hidden", "a/b", "a b", "é", &"x".repeat(65)] {
            assert_eq!(emission_of(bad, "0.5", "e0001"), None, "game {bad}");
            assert_eq!(emission_of("ruche-or", bad, "e0001"), None, "stake {bad}");
            assert_eq!(emission_of("ruche-or", "0.5", bad), None, "emission {bad}");
        }
        // Another spelling of an emission is not its folder.
        for (game, stake, emission) in [
            ("ruche-or", "0.50", "e0001"),
            ("Ruche-or", "0.5", "e0001"),
            ("ruche-or", "0.5", "e1"),
            ("ruche-or", "0.5", "e00001"),
            ("ruche-or", "0.5", "e10000"),
            ("ruche-or", "0.5", "e0000"),
        ] {
            assert_eq!(
                emission_of(game, stake, emission),
                None,
                "{game}/{stake}/{emission}"
            );
        }
    }
}
