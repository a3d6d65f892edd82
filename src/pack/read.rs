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
//! 2^27 bytes (the decoder's default limit, which a pack's header cannot raise).

use super::lines::{lines_bytes, Rebuild};
use super::member::{Member, MAX_RESHARE_FILES};
use crate::block::id::EmissionId;
use crate::block::manifest::Manifest;
use crate::untrusted::{shown, shown_path};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufReader, Read};
use std::path::Path;

/// Most bytes of zeros allowed after the tar's end-of-archive blocks (tar pads to its records).
const MAX_TRAILING_ZEROS: u64 = 1 << 20;

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
        .map_err(|e| anyhow!("cannot read it (damaged or changed): {e}"))?;
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
    let file = crate::fs::open::open_regular(path)
        .with_context(|| format!("cannot read the pack {name}"))?;
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
        std::io::copy(&mut rest, &mut std::io::sink())
            .map_err(|e| anyhow!("{name}: cannot read it to its end: {e}"))?;
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
        age::Decryptor::new_buffered(BufReader::with_capacity(1 << 20, file)).map_err(|e| {
            anyhow!("{name}: not an emission pack (not an age file, or its header is damaged): {e}")
        })?;
    let decrypted = decryptor
        .decrypt(identities.iter().map(|i| i as &dyn age::Identity))
        .map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => anyhow!(
                "{name}: none of the identities given opens it: it was packed for other recipients (give the identity of one of them with --identity)"
            ),
            e => anyhow!("{name}: cannot decrypt it (damaged or changed): {e}"),
        })?;
    let mut decoder = zstd::stream::read::Decoder::new(decrypted)
        .with_context(|| format!("{name}: cannot start reading the compressed stream"))?;
    // Stated here rather than left to the library's default: a frame may not ask for more.
    decoder
        .window_log_max(27)
        .with_context(|| format!("{name}: cannot start reading the compressed stream"))?;
    let mut archive = tar::Archive::new(decoder);
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
    let entries = archive
        .entries()
        .map_err(|e| anyhow!("{name}: cannot read the tar stream: {e}"))?;
    for entry in entries {
        crate::interrupt::check()?;
        let number = state.members + 1;
        let mut entry = entry.map_err(|e| {
            anyhow!("{name}: member {number}: cannot read it (damaged or changed): {e}")
        })?;
        state.member(&mut entry, number, sink)?;
    }
    let contents = state.finish()?;
    // The rest of the stream: the tar's padding (zeros), then the ends of the zstd and age
    // streams, which authenticate the whole.
    let mut decoder = archive.into_inner();
    let mut rest = Vec::new();
    (&mut decoder)
        .take(MAX_TRAILING_ZEROS + 1)
        .read_to_end(&mut rest)
        .map_err(|e| {
            anyhow!("{name}: the end of the pack does not read (damaged, changed or cut): {e}")
        })?;
    if rest.len() as u64 > MAX_TRAILING_ZEROS || rest.iter().any(|&b| b != 0) {
        bail!("{name}: bytes follow the tar's end: not a pack this program made");
    }
    let mut inner = decoder.finish();
    let mut extra = [0u8; 1];
    let more = inner.read(&mut extra).map_err(|e| {
        anyhow!("{name}: the end of the pack does not read (damaged, changed or cut): {e}")
    })?;
    if more != 0 {
        bail!("{name}: bytes follow the compressed stream: not a pack this program made");
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
        let at = format!("{pack}: member {number} ({})", shown(&raw));
        let kind = entry.header().entry_type();
        if kind != tar::EntryType::Regular {
            bail!("{at}: a {kind:?} entry; a pack holds regular files only (no links, devices or folders): refused");
        }
        let text =
            std::str::from_utf8(&raw).map_err(|_| anyhow!("{at}: a name that is not UTF-8"))?;
        let parts: Vec<&str> = text.split('/').collect();
        let [game, stake, emission, file] = parts[..] else {
            bail!("{at}: not named <game>/<stake>/e<emission>/<file> (an absolute name, a folder too many or too few): refused");
        };
        let id = emission_of(game, stake, emission).ok_or_else(|| {
                anyhow!("{at}: its folders are not those of an emission (<game>/<stake>/e<NNNN>: a game id, a canonical price, e and four digits; no `..`, no leading `.`): refused")
            })?;
        match &self.emission {
            None => {
                sink.start(&id)?;
                self.emission = Some(id);
            }
            Some(first) if *first != id => {
                bail!("{at}: of another emission than the pack's first member ({first}): refused")
            }
            Some(_) => {}
        }
        let member = Member::of_name(file)
            .ok_or_else(|| anyhow!("{at}: not a file of an emission folder: refused"))?;
        if let Some(last) = &self.last {
            if member <= *last {
                bail!(
                    "{at}: after {}: out of the pack's order, or twice (docs/FORMAT.md, \"Emission pack\"): refused",
                    last.name()
                );
            }
        }
        if let Member::Reshare(_) = member {
            self.reshares += 1;
            if self.reshares > MAX_RESHARE_FILES {
                bail!("{at}: more than {MAX_RESHARE_FILES} custody files: refused");
            }
        }
        // The size the entry is read by (a PAX header may state it instead of the ustar field).
        let size = entry.size();
        if size > member.limit() {
            bail!(
                "{at}: {size} bytes, more than the {} such a file may hold: refused unread",
                member.limit()
            );
        }
        self.members = number;
        if let Member::Csv(block) | Member::Lines(block) = member {
            let lines = matches!(member, Member::Lines(_));
            match self.lines {
                Some(form) if form != lines => bail!(
                    "{at}: the pack's blocks are not all in one form (block-NNNNN.csv or block-NNNNN.lines.csv): refused"
                ),
                _ => self.lines = Some(lines),
            }
            if self.blocks.contains(&block) {
                bail!("{at}: block {block}'s CSV twice: refused");
            }
            let manifest = self.manifests.get(&block).ok_or_else(|| {
                anyhow!("{at}: block {block}'s CSV without its manifest before it: refused")
            })?;
            let wanted = if lines {
                lines_bytes(manifest.csv.bytes, manifest.tickets).ok_or_else(|| {
                    anyhow!(
                        "{at}: its manifest's CSV of {} bytes cannot hold {} tickets: refused",
                        manifest.csv.bytes,
                        manifest.tickets
                    )
                })?
            } else {
                manifest.csv.bytes
            };
            if size != wanted {
                bail!("{at}: {size} bytes, its manifest's CSV makes {wanted}: refused unread");
            }
            self.bytes = self.bytes.saturating_add(manifest.csv.bytes);
            let mut member = entry.take(size);
            if lines {
                sink.lines(block, manifest, &mut member)
                    .with_context(|| at.clone())?;
            } else {
                sink.csv(block, manifest, &mut member)?;
            }
            // Whatever the sink left is read too, so that the stream is authenticated to its end.
            std::io::copy(&mut member, &mut std::io::sink())
                .map_err(|e| anyhow!("{at}: cannot read it (damaged or changed): {e}"))?;
            self.blocks.push(block);
        } else {
            self.bytes = self.bytes.saturating_add(size);
            let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            entry
                .take(size)
                .read_to_end(&mut bytes)
                .map_err(|e| anyhow!("{at}: cannot read it (damaged or changed): {e}"))?;
            if bytes.len() as u64 != size {
                bail!("{at}: cut short");
            }
            if let Member::Manifest(block, false) = member {
                let manifest = Manifest::from_bytes(&bytes)
                    .map_err(|e| anyhow!("{at}: not a valid manifest: {e}"))?;
                self.manifests.insert(block, manifest);
            }
            match member {
                Member::Manifest(block, true) => {
                    if !self.manifests.contains_key(&block) {
                        bail!("{at}: a signature without its manifest: refused");
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
            bail!("{pack}: an empty pack");
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
                bail!(
                    "{pack}: no {}: a pack of a sealed emission holds it",
                    required.name()
                );
            }
        }
        for block in self.manifests.keys() {
            if self.blocks.binary_search(block).is_err() {
                bail!("{pack}: block {block} has a manifest and no CSV: cut or changed");
            }
            if !self.signed.contains(block) {
                bail!("{pack}: block {block} has no manifest signature: cut or changed");
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
