//! The emission pipeline: plan → synthesize → decode → hash → write → sign, once per block.
//!
//! Tickets are made in fixed-size chunks by rayon and written in order by a task of the same
//! pool, while the next batch is being made (`rayon::join`: no thread of its own, so
//! `--threads N` is N threads in all), so a block streams through a few megabytes of memory
//! whatever its size. Every ticket's randomness comes from the block key and its index,
//! never from scheduling, so the files are byte-identical with any number of threads.
//!
//! What only one thread can do is kept small: a chunk is 2^11 tickets, so each chunk's maker
//! also builds the Merkle tree of its tickets (a perfect subtree of the block's), and the writer
//! only writes, hashes the file and appends the chunk's subtree. Chunk buffers go back to a
//! pool once written, so a block reuses the same few megabytes instead of faulting in fresh
//! pages for every chunk. The CSV goes to the disk around the page cache where the kernel
//! allows it ([`StreamWriter`], SPEC §5: the kernel's copy into fresh cache pages was up to a
//! quarter of emit's CPU), else through it with each batch's writeback started at once. What
//! nothing overlaps is kept short too: the final fsync only waits for the last writes, the
//! last batches shrink to one chunk (the last write is one chunk's), and the synthesizer is
//! built once, by the caller.

use crate::block::id::EmissionKind;
use crate::block::manifest::{generator, CsvFile, Manifest, PrizeCount, FORMAT, GENERATOR_VERSION};
use crate::block::{self, keys, CSV_HEADER};
use crate::emission::lock::LockFile;
use crate::emission::record::{self, Custody, Record};
use crate::emission::seal as sealing;
use crate::fs::files::{self, remove_stale_temps, stage, Access, Staged, StreamWriter};
use crate::game::{Game, Stake};
use crate::hash::merkle::MerkleRoot;
use crate::hash::sha256;
use crate::interrupt;
use crate::mechanic::{Decoder, Synthesizer};
use crate::money::{canonical, cents, from_cents};
use crate::plan::{seed_commitment, BlockKey, Seed};
use crate::progress::{NoProgress, Progress};
use ed25519_dalek::SigningKey;
use rayon::prelude::*;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Tickets per rayon task: a power of two, so that each full chunk is a perfect subtree of the
/// block's Merkle tree.
const CHUNK: usize = 2048;
/// Chunks made in parallel while the previous batch is written.
const CHUNKS_PER_BATCH: usize = 32;

mod error;
pub mod run;
pub mod seal;

pub use error::{EmitError, NotHexSeed, SealRunError, SeedError};

/// What the engine returns.
type Result<T, E = EmitError> = std::result::Result<T, E>;

/// Everything an emission run needs, validated. Made only by [`run::run`], which holds the
/// policy (where the seed and key come from, the kind of the emission): the library has no
/// other way to make blocks.
pub(crate) struct EmitConfig {
    /// The game.
    pub game: Game,
    /// The stake's price (one of the game's stakes).
    pub price: Decimal,
    /// Emission number.
    pub emission: u32,
    /// First block to make (from 1).
    pub first_block: u32,
    /// Number of blocks.
    pub blocks: u32,
    /// Root output folder.
    pub out: PathBuf,
    /// The emission seed: the custodians' secret of a beacon emission (`seed_sha256` commits to
    /// it), from which and [`EmitConfig::beacon`] the blocks' seed is derived.
    pub seed: Seed,
    /// The beacon round the emission's record names, checked ([`crate::emission::beacon::read_round`]).
    pub beacon: Option<crate::emission::beacon::Round>,
    /// The key that signs the manifests.
    pub signing_key: SigningKey,
    /// Remake blocks that already exist.
    pub force: bool,
    /// Test (seed given in clear) or production (seed from custody shares).
    pub kind: EmissionKind,
    /// The custody share set the seed was rebuilt from (production emissions).
    pub custody: Option<Custody>,
    /// Blocks the whole emission holds (`--emission-blocks`), recorded by its first run; once
    /// they are all made, the run that completes them seals the emission.
    pub planned_blocks: Option<u32>,
    /// The layout synthesizer of the stake of `price` ([`Stake::synthesizer`]), built once by
    /// the caller when it checks the definition (building it lists every row and form: a few
    /// milliseconds, serial, before the first ticket). Every layout it makes is still decoded
    /// before it is written, so a synthesizer of another stake cannot make a wrong block.
    pub synthesizer: Box<dyn Synthesizer>,
    /// Write the CSV around the page cache where the kernel allows it ([`StreamWriter`]);
    /// `false`: through it (`--page-cache`). The bytes are the same.
    pub direct_io: bool,
    /// The group (id) that may read the emission's files (`--group`): folder 0750, files 0640.
    /// `None`: a new emission folder is 0700 with files 0600, an existing one keeps its access
    /// ([`files::emission_folder`]).
    pub group: Option<u32>,
}

/// What happened to one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockOutcome {
    /// Written now.
    Written,
    /// Already there, verified, kept.
    Kept,
}

/// What the engine tells its caller while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A block was finished or kept.
    Block {
        /// Its number.
        number: u32,
        /// What happened.
        outcome: BlockOutcome,
        /// Its CSV file.
        csv: PathBuf,
    },
    /// Waiting for a lock held by another run (the sentence says which and who).
    Waiting(String),
    /// Something the operator should know (a seed reused, a key made).
    Note(String),
    /// Something the operator should act on (a secret file others may read, a log that could
    /// not be appended to).
    Warning(String),
    /// The emission was sealed (all its planned blocks are made and verify).
    Sealed(PathBuf),
    /// Temporary files left by a run that was killed were removed.
    StaleRemoved {
        /// The file they were meant to become.
        path: PathBuf,
        /// How many.
        count: usize,
    },
}

/// The result of a run.
#[derive(Debug, Clone)]
pub struct EmitSummary {
    /// The emission folder.
    pub folder: PathBuf,
    /// Blocks written.
    pub written: u32,
    /// Blocks found complete and kept.
    pub kept: u32,
    /// Tickets written.
    pub tickets: u64,
    /// Blocks written, in order.
    pub made: Vec<u32>,
    /// Blocks kept, in order.
    pub kept_blocks: Vec<u32>,
    /// Blocks the whole emission holds, if its record says.
    pub planned: Option<u32>,
}

/// One chunk of finished tickets, in order.
struct Chunk {
    text: Vec<u8>,
    /// Tickets in the chunk.
    tickets: u64,
    /// The Merkle tree of the chunk's tickets.
    merkle: MerkleRoot,
    /// Tickets per prize tier.
    counts: Vec<u64>,
}

/// Text buffers of written chunks, for the next chunks to fill: at most two batches of chunks
/// are alive at once, so the pool settles at that many buffers.
#[derive(Default)]
struct BufferPool(std::sync::Mutex<Vec<Vec<u8>>>);

impl BufferPool {
    /// An empty buffer of at least `capacity` bytes, reused if one is free.
    fn take(&self, capacity: usize) -> Vec<u8> {
        let spare = match self.0.lock() {
            Ok(mut spares) => spares.pop(),
            Err(_) => None,
        };
        let mut buffer = spare.unwrap_or_default();
        buffer.clear();
        buffer.reserve(capacity);
        buffer
    }

    /// Gives a buffer back.
    fn give(&self, buffer: Vec<u8>) {
        if let Ok(mut spares) = self.0.lock() {
            spares.push(buffer);
        }
    }
}

/// What a block's writer needs, fixed for the run.
struct BlockMaker<'a> {
    game: &'a Game,
    stake: &'a Stake,
    tiers: Vec<Decimal>,
    tier_text: Vec<String>,
    /// The tiers in cents, as the decoder reads layouts (`None` if not whole cents: never
    /// for a checked game, and then no layout passes the re-check).
    tier_cents: Vec<Option<u64>>,
    synthesizer: &'a dyn Synthesizer,
    decoder: Box<dyn Decoder>,
    buffers: BufferPool,
    /// Who may read the block files.
    access: Access,
    /// SHA-256 (hex) of the emission record the blocks are made under, named by every manifest.
    record_sha256: String,
    /// The seed the blocks are made from ([`crate::emission::beacon::block_seed`] of the record).
    block_seed: Seed,
}

/// Emits the blocks of `config`; `progress` counts tickets (its total is set here), and
/// `on_event` is told about each block as it is finished or kept, and about waits for locks.
///
/// Several runs may work on one emission at once (on one machine or on a shared file system):
/// the shared files are checked and written under the emission lock, and each block is made
/// under its own lock, so disjoint block ranges proceed side by side and a run that reaches a
/// block another run is making waits for it, then checks and keeps it.
pub(crate) fn emit(
    config: &EmitConfig,
    progress: &dyn Progress,
    mut on_event: impl FnMut(Event),
) -> Result<EmitSummary> {
    let game = &config.game;
    let stake = game.stake(config.price)?;
    let blocks = block_range(config.first_block, config.blocks)?;
    let folder =
        crate::block::id::EmissionId::new(&game.id, stake, config.emission).folder(&config.out);
    // Refused before anything is made (and again under the lock, in `join_or_create`).
    if config.kind == EmissionKind::Production
        && !crate::fs::files::entry_exists(&folder.join(record::RECORD_FILE))?
    {
        return Err(crate::emission::ceremony::no_record(&folder).into());
    }
    // Until sold, a block is as secret as the seed: 0700 and 0600 (0750 and 0640 with a group).
    let access = files::emission_folder(&folder, config.group)?;
    let public = config.signing_key.verifying_key();
    let wanted = record_of(config, game, stake)?;
    let (planned, record_sha256, block_seed) = {
        let held = LockFile::emission(&folder)?.acquire(&mut |m| on_event(Event::Waiting(m)))?;
        // Whoever left temporary files of the record, the seal or the key no longer holds
        // the lock: they are stale.
        for (path, count) in crate::emission::remove_stale(&folder)? {
            on_event(Event::StaleRemoved { path, count });
        }
        check_emission_key(&folder, &public, access)?;
        // The run ends by appending its line to the audit log: a log that cannot take it (a
        // FIFO or a link at its name, a broken chain) is refused now, before any block is made.
        let chain = crate::emission::log::read_chain(&folder, &public)
            .map_err(|source| EmitError::AuditLog { source })?;
        // A sealed emission takes no new block, its seal deleted or not.
        if let Some(line) = chain.seal_recorded {
            if !crate::fs::files::entry_exists(&folder.join(sealing::SEAL_FILE))? {
                return Err(EmitError::SealMissing {
                    folder: folder.clone(),
                    line,
                    seal_file: sealing::SEAL_FILE,
                });
            }
        }
        let write_definition = || crate::emission::write_or_check_definition(&folder, game, access);
        let joined = join_or_create(&folder, &wanted, config, &blocks, &write_definition)?;
        // Joining: after the record, so that a run of another definition is refused by it,
        // naming both hashes (and a deleted copy is written again, its hash the record's).
        write_definition()?;
        held.release()?;
        joined
    };
    let maker = BlockMaker {
        game,
        stake,
        tiers: stake.tiers(),
        tier_text: stake.tiers().into_iter().map(canonical).collect(),
        tier_cents: stake.tiers().into_iter().map(cents).collect(),
        synthesizer: config.synthesizer.as_ref(),
        buffers: BufferPool::default(),
        decoder: stake.decoder(),
        access,
        record_sha256,
        block_seed,
    };
    progress.set_total(u64::from(config.blocks) * game.block_size);
    let mut summary = EmitSummary {
        folder: folder.clone(),
        written: 0,
        kept: 0,
        tickets: 0,
        made: Vec::new(),
        kept_blocks: Vec::new(),
        planned: None,
    };
    for number in blocks {
        interrupt::check()?;
        let paths = BlockPaths::new(&folder, number);
        let held =
            LockFile::block(&folder, number)?.acquire(&mut |m| on_event(Event::Waiting(m)))?;
        // Whoever left temporary files for this block no longer holds its lock: they are stale.
        for path in [&paths.csv, &paths.manifest, &paths.signature] {
            let count = remove_stale_temps(path)?;
            if count > 0 {
                on_event(Event::StaleRemoved {
                    path: path.clone(),
                    count,
                });
            }
        }
        // Before the block is made, not after: a block's files are regular files of ours, and
        // nothing else at their names (a FIFO, a device, a link) is replaced, even with --force.
        for path in [&paths.csv, &paths.manifest, &paths.signature] {
            crate::fs::output::check(path, crate::fs::output::Replace::RegularFile).map_err(
                |source| EmitError::BlockOutput {
                    number,
                    folder: folder.clone(),
                    source,
                },
            )?;
        }
        if paths.manifest.exists() && !config.force {
            // A manifest is renamed last: the block was complete. Keep it, if it is sound.
            let report = replay(config, &paths.csv)?;
            if !report.ok() {
                return Err(EmitError::KeptBlockBroken {
                    number,
                    folder: folder.clone(),
                    problems: crate::problem::joined(&report.problems, "\n"),
                });
            }
            progress.add(game.block_size);
            summary.kept += 1;
            summary.kept_blocks.push(number);
            on_event(Event::Block {
                number,
                outcome: BlockOutcome::Kept,
                csv: paths.csv,
            });
            held.release()?;
            continue;
        }
        maker.write_block(config, number, &paths, progress)?;
        summary.made.push(number);
        summary.written += 1;
        summary.tickets += game.block_size;
        on_event(Event::Block {
            number,
            outcome: BlockOutcome::Written,
            csv: paths.csv,
        });
        held.release()
            .map_err(|source| EmitError::BlockLockRelease { number, source })?;
    }
    summary.planned = planned;
    Ok(summary)
}

/// The record this run would write for its emission.
fn record_of(config: &EmitConfig, game: &Game, stake: &Stake) -> Result<Record> {
    Ok(Record {
        format: record::RECORD_FORMAT,
        id: crate::block::id::EmissionId::new(&game.id, stake, config.emission),
        game_name: game.name.clone(),
        game_definition_sha256: hex::encode(game.sha256),
        game_definition_file: true,
        block_size: game.block_size,
        blocks: config.planned_blocks,
        kind: config.kind,
        seed_sha256: hex::encode(seed_commitment(&config.seed)),
        custody: config.custody.clone(),
        beacon: None,
        public_key_sha256: hex::encode(keys::public_key_sha256(
            &config.signing_key.verifying_key(),
        )?),
        generator: generator(),
        generator_version: GENERATOR_VERSION,
        created: record::created_now()?,
        timestamp_authority_sha256: None,
    })
}

/// Under the emission lock: checks this run against the emission's record, or writes the record
/// if this is the emission's first run. Returns the planned number of blocks, if known, the
/// SHA-256 (hex) of the record's bytes, and the seed the blocks are made from (the run's seed,
/// or with the beacon round the record names, the seed derived from both).
fn join_or_create(
    folder: &Path,
    wanted: &Record,
    config: &EmitConfig,
    blocks: &std::ops::RangeInclusive<u32>,
    write_definition: &dyn Fn() -> Result<(), crate::emission::FileError>,
) -> Result<(Option<u32>, String, Seed)> {
    let public = config.signing_key.verifying_key();
    let record_path = folder.join(record::RECORD_FILE);
    let (planned, record_bytes, block_seed) = match record::read(folder, &public)? {
        Some((existing, bytes)) => {
            // A production run's shares must be the ceremony's, as the signed record says
            // (checked first: it is the more telling refusal for forged shares).
            if let Some(rebuilt) = &config.custody {
                crate::emission::ceremony::admit_shares(folder, &existing, rebuilt, &public)?;
            }
            existing.check_run(wanted, &record_path)?;
            let block_seed = crate::emission::beacon::block_seed(
                &existing,
                &record_path,
                &config.seed,
                config.beacon.as_ref(),
            )?;
            (existing.blocks, bytes, block_seed)
        }
        None => {
            if folder.join(record::RECORD_FILE).exists() {
                return Err(EmitError::UnreadableRecord {
                    folder: folder.to_path_buf(),
                });
            }
            // Only the ceremony makes a production emission's record: shares with no record
            // behind them could have been made by anyone holding the custodians' public keys.
            if config.kind == EmissionKind::Production || config.custody.is_some() {
                return Err(crate::emission::ceremony::no_record(folder).into());
            }
            if let Some(planned) = wanted.blocks {
                if *blocks.end() > planned {
                    return Err(EmitError::BeyondPlanned {
                        planned,
                        last: *blocks.end(),
                    });
                }
            }
            let block_seed = crate::emission::beacon::block_seed(
                wanted,
                &record_path,
                &config.seed,
                config.beacon.as_ref(),
            )?;
            // The record names the definition's copy: the copy is there before the record.
            write_definition()?;
            record::write(folder, wanted, &config.signing_key)?;
            (wanted.blocks, wanted.to_bytes(), block_seed)
        }
    };
    if let Some(planned) = planned {
        if *blocks.end() > planned {
            return Err(EmitError::BeyondRecord {
                folder: folder.to_path_buf(),
                planned,
                last: *blocks.end(),
            });
        }
    }
    if folder.join(sealing::SEAL_FILE).exists() {
        let complete = sealing::complete_blocks(folder)?;
        let missing: Vec<u32> = blocks
            .clone()
            .filter(|b| complete.binary_search(b).is_err())
            .collect();
        if config.force || !missing.is_empty() {
            return Err(EmitError::Sealed {
                folder: folder.to_path_buf(),
            });
        }
    }
    Ok((
        planned,
        hex::encode(Sha256::digest(&record_bytes)),
        block_seed,
    ))
}

/// Seals the emission if all its `planned` blocks are now there (the caller runs it after
/// [`emit`]). Blocks this run made or kept are verified already; the others (made by other
/// runs) are verified here. `before_sealing` runs under the emission lock just before the seal
/// is written (it appends the audit log's line, so that the seal covers it).
pub(crate) fn seal_if_complete(
    config: &EmitConfig,
    summary: &EmitSummary,
    on_event: &mut impl FnMut(Event),
    before_sealing: &mut dyn FnMut() -> Result<(), crate::emission::log::LogError>,
) -> Result<bool> {
    let folder = summary.folder.as_path();
    let Some(planned) = summary.planned else {
        return Ok(false);
    };
    let held = LockFile::emission(folder)?.acquire(&mut |m| on_event(Event::Waiting(m)))?;
    let sealed = seal_locked(config, summary, planned, on_event, before_sealing)?;
    held.release()?;
    Ok(sealed)
}

/// [`seal_if_complete`] under the emission lock.
fn seal_locked(
    config: &EmitConfig,
    summary: &EmitSummary,
    planned: u32,
    on_event: &mut impl FnMut(Event),
    before_sealing: &mut dyn FnMut() -> Result<(), crate::emission::log::LogError>,
) -> Result<bool> {
    let folder = summary.folder.as_path();
    let complete = sealing::complete_blocks(folder)?;
    if folder.join(sealing::SEAL_FILE).exists()
        || (1..=planned).any(|b| complete.binary_search(&b).is_err())
    {
        return Ok(false);
    }
    let public = config.signing_key.verifying_key();
    let (record, record_bytes) = sealing::record_for_sealing(folder, &public)?;
    let mut good = std::collections::BTreeSet::new();
    for number in 1..=planned {
        if summary.made.contains(&number) || summary.kept_blocks.contains(&number) {
            good.insert(number);
            continue;
        }
        interrupt::check()?;
        let report = replay(config, &folder.join(block::csv_name(number)))?;
        if !report.ok() {
            return Err(EmitError::SealBlockBroken {
                folder: folder.to_path_buf(),
                number,
                problems: crate::problem::joined(&report.problems, "\n"),
            });
        }
        good.insert(number);
    }
    before_sealing()?;
    let sealed = sealing::seal(
        folder,
        &record,
        &record_bytes,
        planned,
        &config.signing_key,
        // A record that asked a trusted timestamp makes a seal that asks one of the same TSA.
        record.timestamp_authority_sha256.clone(),
        &|b| good.contains(&b),
    )?;
    if sealed.is_some() {
        on_event(Event::Sealed(folder.join(sealing::SEAL_FILE)));
    }
    Ok(sealed.is_some())
}

/// The three files of a block.
struct BlockPaths {
    csv: PathBuf,
    manifest: PathBuf,
    signature: PathBuf,
}

impl BlockPaths {
    fn new(folder: &Path, number: u32) -> Self {
        BlockPaths {
            csv: folder.join(block::csv_name(number)),
            manifest: folder.join(block::manifest_name(number)),
            signature: folder.join(block::signature_name(number)),
        }
    }
}

/// Verifies an existing block with the run's key and game, and with its seed: the block must be
/// exactly the one this run would make. An interrupted check says nothing about the block.
fn replay(config: &EmitConfig, csv: &Path) -> Result<crate::verify::BlockReport> {
    let report = crate::verify::verify_block(
        csv,
        &crate::verify::VerifyOptions {
            public_key: Some(config.signing_key.verifying_key()),
            game: Some(config.game.clone()),
            forms: false,
            seed: Some(config.seed),
            beacon: config.beacon.clone(),
        },
        &NoProgress,
    );
    interrupt::check()?;
    Ok(report)
}

/// The block numbers `first ..= first + count - 1`, checked: blocks are numbered from 1 to
/// 99999 (five digits in file names and serials) and a run makes at least one.
pub fn block_range(first: u32, count: u32) -> Result<std::ops::RangeInclusive<u32>> {
    match count.checked_sub(1).and_then(|n| first.checked_add(n)) {
        Some(last) if first >= 1 && last <= 99_999 => Ok(first..=last),
        _ => Err(EmitError::BlockRange {
            first,
            last: u64::from(first) + u64::from(count) - 1,
        }),
    }
}

/// Writes `emission.pub.pem`, or checks that the one there is ours: an emission has one key.
/// Called under the emission lock.
fn check_emission_key(
    folder: &Path,
    public: &ed25519_dalek::VerifyingKey,
    access: Access,
) -> Result<()> {
    // Its stale temporary files were removed with the others, just before.
    crate::emission::write_or_check_public_key(folder, public, access)?;
    Ok(())
}

/// Tickets whose generator seeds and line hashes are hashed together: enough to keep every
/// SHA-256 lane busy, few enough that the group's lines are still in the L1 cache when hashed.
const GROUP: usize = 64;

/// Hashes the ticket lines `text[a..b]` of `lines` together, writes each one's hash in hex
/// into the 64 bytes kept after its comma (`text[b + 1..b + 65]`), and appends the hashes to
/// `hashes`.
fn write_hashes(text: &mut [u8], lines: &[(usize, usize)], hashes: &mut Vec<[u8; 32]>) {
    let messages: Vec<&[u8]> = lines.iter().map(|&(a, b)| &text[a..b]).collect();
    let first = hashes.len();
    hashes.extend(sha256::digest_many(&messages));
    for (&(_, b), hash) in lines.iter().zip(&hashes[first..]) {
        text[b + 1..b + 65].copy_from_slice(&block::hex_hash(hash));
    }
}

impl BlockMaker<'_> {
    /// Makes one chunk of tickets `[start, start + len)`: synthesize, decode, hash, format.
    fn chunk(&self, key: &BlockKey, order: &[u8], prefix: &str, start: usize) -> Result<Chunk> {
        let end = (start + CHUNK).min(order.len());
        let mut chunk = Chunk {
            text: self.buffers.take((end - start) * 256),
            tickets: (end - start) as u64,
            merkle: MerkleRoot::new(),
            counts: vec![0; self.tiers.len()],
        };
        // Tickets go GROUP at a time: their generators' seeds, then their lines' hashes, are
        // hashed together (interleaved SHA-256, `sha256::digest_many`).
        let mut rngs = Vec::new().into_iter();
        let mut lines = Vec::with_capacity(GROUP);
        let mut hashes = Vec::with_capacity(end - start);
        let mut digits = block::index_digits(start as u64);
        for (index, &tier) in order.iter().enumerate().take(end).skip(start) {
            let prize = self.tiers[tier as usize];
            if (index - start).is_multiple_of(GROUP) {
                let group_end = (index + GROUP).min(end);
                rngs = key.ticket_rngs(index as u64..group_end as u64).into_iter();
            }
            // The same generator as ticket_rng's, made with the group's.
            let mut rng = rngs.next().unwrap_or_else(|| key.ticket_rng(index as u64));
            let serial = || {
                let mut s = prefix.as_bytes().to_vec();
                block::push_index(&mut s, index as u64);
                String::from_utf8_lossy(&s).into_owned()
            };
            let line_start = chunk.text.len();
            chunk.text.extend_from_slice(prefix.as_bytes());
            chunk.text.extend_from_slice(&digits);
            block::next_index_digits(&mut digits);
            chunk.text.push(b',');
            chunk
                .text
                .extend_from_slice(self.tier_text[tier as usize].as_bytes());
            chunk.text.push(b',');
            // The layout is written straight into the chunk, then read back from it.
            let layout_start = chunk.text.len();
            self.synthesizer
                .synthesize(prize, &mut rng, &mut chunk.text)
                .map_err(|source| EmitError::Synthesize {
                    serial: serial(),
                    source,
                })?;
            let layout = &chunk.text[layout_start..];
            // The decoder is the referee: a ticket that does not read back is never written.
            match self.decoder.decode_cents(layout) {
                Ok(read) if Some(read) == self.tier_cents[tier as usize] => {}
                Ok(read) => {
                    return Err(EmitError::WrongPrize {
                        serial: serial(),
                        decoded: canonical(from_cents(read)),
                        prize: canonical(prize),
                        layout: String::from_utf8_lossy(layout).into_owned(),
                    })
                }
                Err(e) => {
                    return Err(EmitError::InvalidLayout {
                        serial: serial(),
                        reason: e.to_string(),
                        layout: String::from_utf8_lossy(layout).into_owned(),
                    })
                }
            }
            // The hash is written once the group's lines are made: its place is kept.
            lines.push((line_start, chunk.text.len()));
            chunk.text.push(b',');
            chunk.text.extend_from_slice(&[b'0'; 64]);
            chunk.text.push(b'\n');
            chunk.counts[tier as usize] += 1;
            if lines.len() == GROUP {
                write_hashes(&mut chunk.text, &lines, &mut hashes);
                lines.clear();
            }
        }
        write_hashes(&mut chunk.text, &lines, &mut hashes);
        chunk.merkle.extend(&hashes);
        Ok(chunk)
    }

    /// Makes a whole block and writes its three files.
    fn write_block(
        &self,
        config: &EmitConfig,
        number: u32,
        paths: &BlockPaths,
        progress: &dyn Progress,
    ) -> Result<()> {
        let key = BlockKey::derive(
            &self.block_seed,
            &self.game.id,
            self.stake,
            config.emission,
            number,
        );
        let order = key.prize_order(self.stake, self.game.block_size);
        let id = crate::block::id::EmissionId::new(&self.game.id, self.stake, config.emission)
            .block(number);
        let prefix = id.serial_prefix();
        // Every early return below drops the staged files, which removes them.
        let mut csv = Staged::create(&paths.csv, self.access)?;
        let written =
            self.stream_csv(&key, &order, &prefix, &mut csv, config.direct_io, progress)?;
        csv.finish()?;

        let tickets = order.len() as u64;
        let mut prizes: Vec<PrizeCount> = Vec::with_capacity(self.tiers.len());
        let mut total = Decimal::ZERO;
        for (tier, &count) in written.counts.iter().enumerate() {
            total += self.tiers[tier] * Decimal::from(count);
            prizes.push(PrizeCount {
                amount: self.tier_text[tier].clone(),
                count,
            });
        }
        let manifest = Manifest {
            format: FORMAT,
            id,
            game_name: self.game.name.clone(),
            game_definition_sha256: hex::encode(self.game.sha256),
            tickets,
            winners: tickets - written.counts.last().copied().unwrap_or(0),
            prizes,
            total_prizes: canonical(total),
            csv: CsvFile {
                file: block::csv_name(number),
                bytes: written.bytes,
                sha256: hex::encode(written.sha256),
            },
            tickets_root: hex::encode(written.root),
            seed_sha256: hex::encode(seed_commitment(&config.seed)),
            public_key_sha256: hex::encode(keys::public_key_sha256(
                &config.signing_key.verifying_key(),
            )?),
            generator: generator(),
            emission_kind: Some(config.kind),
            record_sha256: Some(self.record_sha256.clone()),
        };
        let bytes = manifest.to_bytes();
        let signature = stage(
            &paths.signature,
            &keys::sign(&config.signing_key, &bytes),
            self.access,
        )?;
        let manifest = stage(&paths.manifest, &bytes, self.access)?;
        interrupt::check()?;
        // All three files are on disk; publish them, the manifest last: a block is complete
        // exactly when its manifest is there. A block being replaced (--force) loses its
        // manifest first, so that no moment shows an old manifest beside a new CSV. The
        // signal watchdog waits until the three are published.
        let _publishing = interrupt::critical();
        files::remove(&paths.manifest)?;
        csv.publish()?;
        signature.publish()?;
        Ok(manifest.publish()?)
    }

    /// Makes and writes the CSV, overlapping the making of a batch with the writing of the
    /// previous one.
    fn stream_csv(
        &self,
        key: &BlockKey,
        order: &[u8],
        prefix: &str,
        csv: &mut Staged,
        direct_io: bool,
        progress: &dyn Progress,
    ) -> Result<Written> {
        let tmp = csv.temp_path().to_path_buf();
        let mut out = Output {
            writer: StreamWriter::new(csv.file(), direct_io),
            sha: Sha256::new(),
            bytes: 0,
            merkle: MerkleRoot::new(),
            counts: vec![0; self.tiers.len()],
            tmp: &tmp,
            buffers: &self.buffers,
        };
        out.write(format!("{CSV_HEADER}\n").as_bytes())?;
        let starts: Vec<usize> = (0..order.len()).step_by(CHUNK).collect();
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut rest = starts.as_slice();
        for size in batch_sizes(starts.len()) {
            let (batch, after) = rest.split_at(size);
            batches.push(batch);
            rest = after;
        }
        let make = |batch: &[usize]| -> Result<Vec<Chunk>> {
            batch
                .par_iter()
                .map(|&start| self.chunk(key, order, prefix, start))
                .collect()
        };
        let mut pending: Option<Vec<Chunk>> = None;
        for batch in batches {
            // A batch takes a fraction of a second: a signal is answered well within one.
            interrupt::check()?;
            let (written, made) = rayon::join(
                || match pending.take() {
                    Some(chunks) => out.chunks(chunks, progress),
                    None => Ok(()),
                },
                || make(batch),
            );
            written?;
            pending = Some(made?);
        }
        if let Some(chunks) = pending {
            out.chunks(chunks, progress)?;
        }
        out.writer.finish().map_err(|source| EmitError::CsvWrite {
            path: tmp.clone(),
            source,
        })?;
        Ok(Written {
            bytes: out.bytes,
            sha256: out.sha.finalize().into(),
            root: out.merkle.root(),
            counts: out.counts,
        })
    }
}

/// The CSV being written.
struct Output<'a> {
    writer: StreamWriter<'a>,
    sha: Sha256,
    bytes: u64,
    merkle: MerkleRoot,
    counts: Vec<u64>,
    tmp: &'a Path,
    buffers: &'a BufferPool,
}

impl Output<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer
            .write(bytes)
            .map_err(|source| EmitError::CsvWrite {
                path: self.tmp.to_path_buf(),
                source,
            })?;
        self.sha.update(bytes);
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    fn chunks(&mut self, chunks: Vec<Chunk>, progress: &dyn Progress) -> Result<()> {
        for chunk in chunks {
            self.write(&chunk.text)?;
            // Chunks start at multiples of CHUNK, a power of two: always on a boundary.
            if !self.merkle.append(&chunk.merkle) {
                return Err(EmitError::MerkleBoundary);
            }
            for (total, n) in self.counts.iter_mut().zip(&chunk.counts) {
                *total += n;
            }
            progress.add(chunk.tickets);
            self.buffers.give(chunk.text);
        }
        // The disk takes the batch while the next ones are made: the final fsync is short.
        self.writer.start_writeback();
        Ok(())
    }
}

/// The number of chunks of each batch, in order, for a block of `chunks` chunks:
/// [`CHUNKS_PER_BATCH`] each, but the last ones halve down to one chunk (… 16, 8, 4, 2, 1, 1).
/// The writing of the last batch is the one thing nothing overlaps: it is one chunk's
/// instead of a whole batch's (12 MB of a La ruche d'or block written and hashed while the
/// other threads wait), for a few more batches.
fn batch_sizes(chunks: usize) -> Vec<usize> {
    let mut tail = Vec::new();
    let mut left = chunks;
    let mut size = 1;
    while left > 0 && size < CHUNKS_PER_BATCH {
        let take = size.min(left);
        tail.push(take);
        left -= take;
        // 1, 1, 2, 4, …: the last two batches are one chunk each.
        if tail.len() > 1 {
            size *= 2;
        }
    }
    let mut sizes = vec![CHUNKS_PER_BATCH; left / CHUNKS_PER_BATCH];
    let first = left % CHUNKS_PER_BATCH;
    if first > 0 {
        sizes.insert(0, first);
    }
    sizes.extend(tail.iter().rev());
    sizes
}

/// What the CSV writer measured.
struct Written {
    bytes: u64,
    sha256: [u8; 32],
    root: [u8; 32],
    counts: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches cover every chunk once, in order, none larger than `CHUNKS_PER_BATCH`, and end
    /// with one-chunk batches whenever the block has more than one chunk.
    #[test]
    fn batches_cover_the_block_and_end_small() {
        for chunks in (0..200).chain([440, 3663]) {
            let sizes = batch_sizes(chunks);
            assert_eq!(sizes.iter().sum::<usize>(), chunks, "{chunks}: {sizes:?}");
            assert!(sizes.iter().all(|&s| (1..=CHUNKS_PER_BATCH).contains(&s)));
            if chunks > 1 {
                assert_eq!(sizes[sizes.len() - 2..], [1, 1], "{chunks}: {sizes:?}");
            }
        }
        assert_eq!(batch_sizes(40), vec![8, 16, 8, 4, 2, 1, 1]);
        assert_eq!(batch_sizes(95), vec![31, 32, 16, 8, 4, 2, 1, 1]);
        assert_eq!(batch_sizes(1), vec![1]);
    }
}
