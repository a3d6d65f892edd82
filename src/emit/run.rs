//! One emission run, whole: the policy every caller of the library gets, not only the binary.
//!
//! [`run`] checks the request before it makes anything (the block range, the definition, that
//! the emission's kind is the run's), then under the emission lock resolves the seed (handed
//! over, a seed file, the emission's own file in `OUT/private`, or rebuilt from custody shares)
//! and the key, joins or creates the emission's record, makes the blocks, appends the audit
//! log's signed line whatever the outcome, and seals the emission when its planned blocks are
//! all made. A production emission exists only through [`SeedSource::Custody`]: the kind is
//! never asked of the caller, so a library caller cannot make a production block whose shares
//! were not admitted against the ceremony's signed record. The pipeline's own configuration
//! is not public:
//!
//! ```compile_fail
//! // The kind and custody of an emission are the engine's to decide, never a caller's.
//! use emission_factory::emit::EmitConfig;
//! ```

use super::error::{EmitError, NotHexSeed, SeedError};
use super::{emit, seal_if_complete, BlockOutcome, EmitConfig, EmitSummary, Event};
use crate::block::id::EmissionKind;
use crate::block::keys;
use crate::emission::ceremony;
use crate::emission::lock::LockFile;
use crate::emission::log::{self as audit, Entry};
use crate::emission::record::{self, Custody};
use crate::fs::files::{self, Exposure};
use crate::game::Game;
use crate::mechanic::BuildError;
use crate::plan::{fresh_seed, Seed};
use crate::progress::Progress;
use crate::untrusted::shown_path;
use ed25519_dalek::SigningKey;
use rust_decimal::Decimal;
use std::path::{Path, PathBuf};

type Result<T, E = EmitError> = std::result::Result<T, E>;

/// The most bytes read for a seed: 64 hex digits and a line end, with room for blanks.
pub const SEED_LIMIT: u64 = 256;

/// Where the run's seed comes from.
pub enum SeedSource {
    /// Handed over for this run only and stored nowhere (`--seed`, standard input, a file
    /// descriptor); `how` says how, for the summary. A test emission.
    Given {
        /// The seed.
        seed: Seed,
        /// How it came (`given with --seed`).
        how: String,
    },
    /// A seed file the operator names: read, never made (a typo must not start a new seed).
    File(PathBuf),
    /// The emission's own seed file in `OUT/private`, drawn from the system's CSPRNG on the
    /// emission's first run. A test emission.
    Private,
    /// Rebuilt in memory from k custody shares, which must be those of the share set the
    /// emission's signed record names: the only way to a production emission.
    Custody {
        /// The share files.
        shares: Vec<PathBuf>,
        /// The age identities that open them.
        identities: Vec<PathBuf>,
    },
}

/// Where the run's signing key comes from.
pub enum KeySource {
    /// The lottery's key file (`--signing-key`).
    File(PathBuf),
    /// The emission's one-time key in `OUT/private`, made on its first run (test emissions).
    Private,
}

/// An emission run, as asked.
pub struct Request {
    /// The game.
    pub game: Game,
    /// The stake's price.
    pub price: Decimal,
    /// Emission number.
    pub emission: u32,
    /// First block to make (from 1).
    pub first_block: u32,
    /// Number of blocks.
    pub blocks: u32,
    /// Root output folder (`--out`).
    pub out: PathBuf,
    /// The seed.
    pub seed: SeedSource,
    /// The signing key.
    pub key: KeySource,
    /// Remake blocks that already exist.
    pub force: bool,
    /// Blocks the whole emission holds (`--emission-blocks`), fixed by its record.
    pub planned_blocks: Option<u32>,
    /// Write the CSV around the page cache where the kernel allows it.
    pub direct_io: bool,
    /// The group that may read the emission's files (`--group`).
    pub group: Option<u32>,
    /// Whether secret files others may read are refused or used with a warning.
    pub exposure: Exposure,
    /// The beacon round's JSON file (`--beacon`), for a production emission whose record names
    /// a round: its seed is derived from the custodians' secret and the round's signature.
    pub beacon: Option<PathBuf>,
}

/// What a run did.
pub struct Outcome {
    /// The blocks made and kept.
    pub summary: EmitSummary,
    /// Where the seed came from, for the summary (never the seed).
    pub seed_note: String,
    /// Which key signed, for the summary (never the key).
    pub key_note: String,
    /// Whether this run sealed the emission.
    pub sealed: bool,
}

/// Runs `request`: see the module's documentation. `progress` counts tickets; `on_event` hears
/// of each block, of waits for locks, of notes and warnings.
pub fn run(
    request: Request,
    progress: &dyn Progress,
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome> {
    let game = &request.game;
    let stake = game.stake(request.price)?;
    let folder =
        crate::block::id::EmissionId::new(&game.id, stake, request.emission).folder(&request.out);
    // Checked before any folder, seed or key file is made: the block range, that the emission's
    // kind is the run's (the signed record is read again under the lock), that every prize of
    // the stake can be shown.
    super::block_range(request.first_block, request.blocks)?;
    let production = matches!(request.seed, SeedSource::Custody { .. });
    refuse_wrong_kind(&folder, production)?;
    // The round is checked (signature, randomness) before anything is read or made; that it
    // is the round the signed record names, under the lock ([`crate::emission::beacon::block_seed`]).
    if request.beacon.is_some() && !production {
        return Err(EmitError::BeaconNotProduction);
    }
    let beacon = request
        .beacon
        .as_deref()
        .map(crate::emission::beacon::read_round)
        .transpose()?;
    if production && matches!(request.key, KeySource::Private) {
        return Err(EmitError::ProductionWithoutKey);
    }
    let synthesizer = stake.synthesizer().map_err(|e| match e {
        // A signal: the binary exits as a shell expects (143...).
        BuildError::Interrupted(signal) => EmitError::Interrupted(signal),
        reason => EmitError::Unshowable {
            game: game.id.clone(),
            reason,
        },
    })?;
    let base = crate::block::id::EmissionId::new(&game.id, stake, request.emission).file_stem();
    let private = request.out.join("private");
    // The seed and key files are read or made under the emission lock, so that two first runs
    // of an emission started at once agree on them.
    files::emission_folder(&folder, request.group)?;
    let held = LockFile::emission(&folder)?.acquire(&mut |m| on_event(Event::Waiting(m)))?;
    // The emission's own secrets live in OUT/private: that folder must be ours alone.
    if matches!(request.seed, SeedSource::Private) || matches!(request.key, KeySource::Private) {
        files::private_dir(&private)?;
    }
    // A killed run's temporary copies of this emission's seed and key are secrets: removed.
    for name in [format!("{base}.seed"), format!("{base}.signing-key.pem")] {
        let path = private.join(&name);
        let count = files::remove_stale_temps(&path)?;
        if count > 0 {
            on_event(Event::StaleRemoved { path, count });
        }
    }
    let resolved = resolve_seed(
        &request.seed,
        &private.join(format!("{base}.seed")),
        &crate::block::id::EmissionId::new(&game.id, stake, request.emission),
        request.exposure,
        on_event,
    );
    let (seed, seed_note, custody) = match resolved {
        Ok(resolved) => resolved,
        Err(e) => {
            if production {
                log_refused_shares(&folder, &request.key, request.exposure, &e, on_event);
            }
            return Err(e);
        }
    };
    let (signing_key, key_note) = resolve_key(
        &request.key,
        &private.join(format!("{base}.signing-key.pem")),
        request.exposure,
        on_event,
    )?;
    held.release()?;
    let seed_note = match &beacon {
        Some(round) => format!(
            "{seed_note}; the blocks' seed is derived from it and round {} of {} (signature checked)",
            round.round,
            crate::emission::beacon::CHAIN
        ),
        None => seed_note,
    };
    let config = EmitConfig {
        game: request.game.clone(),
        price: request.price,
        emission: request.emission,
        first_block: request.first_block,
        blocks: request.blocks,
        out: request.out.clone(),
        seed,
        beacon,
        signing_key,
        force: request.force,
        kind: match custody {
            Some(_) => EmissionKind::Production,
            None => EmissionKind::Test,
        },
        custody,
        planned_blocks: request.planned_blocks,
        synthesizer,
        direct_io: request.direct_io,
        group: request.group,
    };
    let (summary, sealed) = make_and_seal(&config, &folder, progress, on_event)?;
    Ok(Outcome {
        summary,
        seed_note,
        key_note,
        sealed,
    })
}

/// Makes the blocks, logs the run whatever its outcome (with the blocks published before a
/// failure), and seals the emission if the run completed it.
fn make_and_seal(
    config: &EmitConfig,
    folder: &Path,
    progress: &dyn Progress,
    on_event: &mut dyn FnMut(Event),
) -> Result<(EmitSummary, bool)> {
    let mut published: Vec<u32> = Vec::new();
    let mut kept: Vec<u32> = Vec::new();
    let outcome = emit(config, progress, |event| {
        if let Event::Block {
            number, outcome, ..
        } = &event
        {
            match outcome {
                BlockOutcome::Written => published.push(*number),
                BlockOutcome::Kept => kept.push(*number),
            }
        }
        on_event(event)
    });
    // Every run on the emission leaves a line in its audit log, whatever the outcome.
    let mut entry = Entry::for_this_run("emit");
    entry.blocks_made = published;
    entry.blocks_kept = kept;
    if let Err(e) = &outcome {
        entry.result = error_line(&crate::problem::chained(e));
    }
    if let Err(e) = audit::append(folder, entry, &config.signing_key) {
        if outcome.is_ok() {
            return Err(EmitError::LogAfterBlocks { source: e });
        }
        on_event(Event::Warning(format!(
            "cannot append to the emission's audit log: {}",
            crate::problem::chained(&e)
        )));
    }
    let summary = outcome?;
    // The run that completes a planned emission seals it; the seal covers the log's line that
    // says so, appended first under the same lock.
    let mut sealing = Entry::for_this_run("emit");
    sealing.result = "sealing: all the emission's planned blocks are made".into();
    let sealed = seal_if_complete(config, &summary, &mut |e| on_event(e), &mut || {
        audit::append_locked(folder, &mut sealing.clone(), Some(&config.signing_key)).map(|_| ())
    });
    if let Err(e) = &sealed {
        let mut failed = Entry::for_this_run("emit");
        failed.result = error_line(&format!("sealing failed: {}", crate::problem::chained(e)));
        // The sealing error is the one to report; a log that fails too was warned about above.
        let _ = audit::append(folder, failed, &config.signing_key);
    }
    Ok((summary, sealed?))
}

/// A failed run's `result` in the audit log: `error: ` and the message, at most 1000 characters.
fn error_line(message: &str) -> String {
    format!("error: {message}").chars().take(1000).collect()
}

/// Refuses, before anything is made: custody shares for an emission the ceremony has not
/// started (no record), and a run without shares on a production emission (which would draw
/// or read another seed). The record's kind is only peeked at here: [`emit`] reads the record
/// whole and checks its signature under the emission lock.
fn refuse_wrong_kind(folder: &Path, production: bool) -> Result<()> {
    match record::peek_kind(folder)? {
        None if production => Err(ceremony::no_record(folder).into()),
        Some(EmissionKind::Production) if !production => Err(EmitError::ProductionWithoutShares {
            folder: folder.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// The run's seed, how it came (for the summary) and, for a production emission, the share
/// set it was rebuilt from. Called under the emission lock.
fn resolve_seed(
    source: &SeedSource,
    own_file: &Path,
    emission_id: &crate::block::id::EmissionId,
    exposure: Exposure,
    on_event: &mut dyn FnMut(Event),
) -> Result<(Seed, String, Option<Custody>)> {
    Ok(match source {
        SeedSource::Custody { shares, identities } => {
            let (secret, info) =
                crate::custody::rebuild_seed_with(shares, identities, emission_id, exposure)?;
            warn_exposed(&info.exposed, on_event);
            let custody = Custody::from_info(&info);
            let note = format!(
                "rebuilt in memory from {} of {} custody shares (production emission)",
                custody.used.len(),
                custody.shares
            );
            (*secret.expose(), note, Some(custody))
        }
        SeedSource::Given { seed, how } => {
            on_event(Event::Note(format!(
                "seed {how}; it is not stored anywhere"
            )));
            (*seed, format!("{how}, not stored"), None)
        }
        SeedSource::File(path) => {
            if !files::entry_exists(path)? {
                return Err(SeedError::NoSuchFile {
                    path: path.to_path_buf(),
                }
                .into());
            }
            let seed = read_seed_file(path, exposure, on_event)?;
            (seed, format!("read from {}", shown_path(path)), None)
        }
        SeedSource::Private => {
            let seed = load_or_make_seed(own_file, exposure, on_event)?;
            let note = format!(
                "kept in {} (not in the emission folder)",
                shown_path(own_file)
            );
            (seed, note, None)
        }
    })
}

/// The run's signing key and which it is (for the summary). Called under the emission lock.
/// A production run whose shares were refused (forged, of another set, not enough...) leaves
/// its line in the emission's audit log, signed, when the key it was given is the emission's
/// (the signed record verifies with it): an attempt with forged shares is on the record. With
/// another key, or no record, nothing is written (a line signed by another key would be a
/// forged line). Called under the emission lock; a failure to log is a warning, the refusal
/// stays the error.
fn log_refused_shares(
    folder: &Path,
    key: &KeySource,
    exposure: Exposure,
    error: &EmitError,
    on_event: &mut dyn FnMut(Event),
) {
    let KeySource::File(path) = key else { return };
    let mut quiet = |_: Event| {};
    let Ok((key, _)) = resolve_key(&KeySource::File(path.clone()), path, exposure, &mut quiet)
    else {
        return;
    };
    if !matches!(record::read(folder, &key.verifying_key()), Ok(Some(_))) {
        return;
    }
    let mut entry = Entry::for_this_run("emit");
    entry.result = error_line(&crate::problem::chained(error));
    if let Err(e) = audit::append_locked(folder, &mut entry, Some(&key)) {
        on_event(Event::Warning(format!(
            "cannot append to the emission's audit log: {}",
            crate::problem::chained(&e)
        )));
    }
}

fn resolve_key(
    source: &KeySource,
    own_file: &Path,
    exposure: Exposure,
    on_event: &mut dyn FnMut(Event),
) -> Result<(SigningKey, String)> {
    match source {
        KeySource::File(path) => {
            let pem =
                read_secret_file(path, "signing key", files::SECRET_LIMIT, exposure, on_event)?;
            Ok((keys::parse_signing_key(&pem, path)?, shown_path(path)))
        }
        KeySource::Private => {
            let key = load_or_make_key(own_file, exposure, on_event)?;
            Ok((key, format!("one-time key {}", shown_path(own_file))))
        }
    }
}

/// Parses a seed written as 64 hexadecimal digits (blanks around them allowed).
pub fn parse_seed(text: &str) -> Result<Seed, NotHexSeed> {
    let text = text.trim();
    let mut seed = [0u8; 32];
    if text.len() != 64 || hex::decode_to_slice(text, &mut seed).is_err() {
        return Err(NotHexSeed { length: text.len() });
    }
    Ok(seed)
}

/// Reads a seed of 64 hex digits from a stream (standard input, a file descriptor), reading at
/// most [`SEED_LIMIT`] bytes; `what` names the stream in errors.
pub fn read_seed_from(reader: impl std::io::Read, what: &str) -> Result<Seed, SeedError> {
    use std::io::Read;
    let what = || what.to_string();
    let mut bytes = Vec::new();
    reader
        .take(SEED_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| SeedError::Read {
            what: what(),
            source,
        })?;
    if bytes.len() as u64 > SEED_LIMIT {
        return Err(SeedError::TooLong {
            what: what(),
            limit: SEED_LIMIT,
        });
    }
    let text = std::str::from_utf8(&bytes).map_err(|_| SeedError::NotText { what: what() })?;
    parse_seed(text).map_err(|source| SeedError::Stream {
        what: what(),
        source,
    })
}

/// Reads a secret file (seed, private key; `what` names it in errors) of at most `limit`
/// bytes. One that group or others may read is refused, or with [`Exposure::Allow`] read with
/// a warning.
pub fn read_secret_file(
    path: &Path,
    what: &str,
    limit: u64,
    exposure: Exposure,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<u8>, crate::fs::FsError> {
    let secret = files::read_secret(path, what, limit, exposure)?;
    if let Some(mode) = secret.exposed_mode() {
        warn_exposed(&[(path.to_path_buf(), mode)], on_event);
    }
    Ok(secret.bytes)
}

/// Reads a seed file (see [`read_secret_file`]).
pub fn read_seed_file(
    path: &Path,
    exposure: Exposure,
    on_event: &mut dyn FnMut(Event),
) -> Result<Seed, SeedError> {
    let bytes = read_secret_file(path, "seed file", SEED_LIMIT, exposure, on_event)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| SeedError::FileNotText {
        path: path.to_path_buf(),
    })?;
    parse_seed(text).map_err(|source| SeedError::File {
        path: path.to_path_buf(),
        source,
    })
}

/// The warning for secret files read although group or others may read them.
pub fn exposed_warning(path: &Path, mode: u32) -> String {
    format!(
        "{} has mode {mode:04o}: group or others may read or change it, and it holds a secret; used anyway because of --allow-insecure-key. Run `chmod 600 {}`",
        path.display(),
        files::shell_quoted(path)
    )
}

fn warn_exposed(exposed: &[(PathBuf, u32)], on_event: &mut dyn FnMut(Event)) {
    for (path, mode) in exposed {
        on_event(Event::Warning(exposed_warning(path, *mode)));
    }
}

/// Reads the emission's seed file, or makes a new seed and writes it (mode 0600, in a folder
/// that only we can write to).
fn load_or_make_seed(
    path: &Path,
    exposure: Exposure,
    on_event: &mut dyn FnMut(Event),
) -> Result<Seed> {
    if files::entry_exists(path)? {
        let seed = read_seed_file(path, exposure, on_event)?;
        on_event(Event::Note(format!(
            "reusing this emission's seed from {}",
            path.display()
        )));
        return Ok(seed);
    }
    let seed = fresh_seed().map_err(SeedError::Random)?;
    files::private_dir(folder_of(path))?;
    files::write_secret(path, format!("{}\n", hex::encode(seed)).as_bytes())?;
    on_event(Event::Note(format!(
        "new random seed for this emission written to {} (mode 0600). It is not in the emission folder: keep it secret and safe, it is needed to add blocks to this emission and to reproduce it in an audit",
        path.display()
    )));
    Ok(seed)
}

/// Reads the emission's one-time signing key, or makes one and writes it (mode 0600, in a
/// folder that only we can write to).
fn load_or_make_key(
    path: &Path,
    exposure: Exposure,
    on_event: &mut dyn FnMut(Event),
) -> Result<SigningKey> {
    if files::entry_exists(path)? {
        let pem = read_secret_file(path, "signing key", files::SECRET_LIMIT, exposure, on_event)?;
        let key = keys::parse_signing_key(&pem, path)?;
        on_event(Event::Note(format!(
            "no --signing-key: signing with this emission's one-time key {}",
            path.display()
        )));
        return Ok(key);
    }
    let key = keys::generate()?;
    files::private_dir(folder_of(path))?;
    files::write_secret(path, keys::private_pem(&key)?.as_bytes())?;
    on_event(Event::Note(format!(
        "no --signing-key: made a one-time signing key for this emission, kept at {} (mode 0600); its public key is emission.pub.pem in the emission folder. For production, sign with your own key (keygen, --signing-key)",
        path.display()
    )));
    Ok(key)
}

/// The folder a file is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    /// A run of La ruche d'or at 2 €, emission 1, block 1, into `out`, its seed from `seed`.
    fn request(out: &Path, seed: SeedSource) -> Request {
        Request {
            game: Game::builtin("ruche-or").unwrap(),
            price: Decimal::from(2),
            emission: 1,
            first_block: 1,
            blocks: 1,
            out: out.to_path_buf(),
            seed,
            key: KeySource::Private,
            force: false,
            planned_blocks: None,
            direct_io: false,
            group: None,
            exposure: Exposure::Refuse,
            beacon: None,
        }
    }

    /// What a run refuses, said as the program says it.
    fn refusal(request: Request) -> String {
        match run(request, &NoProgress, &mut |_| {}) {
            Ok(_) => panic!("the run was not refused"),
            Err(e) => crate::problem::chained(&e),
        }
    }

    #[test]
    fn a_run_is_refused_before_it_makes_anything_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        // --beacon on a test emission: refused before any folder is made.
        let mut beacon = request(&out, SeedSource::Private);
        beacon.beacon = Some(dir.path().join("round.json"));
        assert_eq!(
            refusal(beacon),
            "--beacon is for a production emission whose ceremony named a beacon round (seed --beacon-round): its seed is rebuilt from custody shares (--share, --identity). Nothing was written"
        );
        assert!(!out.exists());
        // A seed file that is not there is never made.
        let missing = dir.path().join("missing.seed");
        assert_eq!(
            refusal(request(&out, SeedSource::File(missing.clone()))),
            format!("--seed-file {}: no such file. A seed file is never created by --seed-file; leave out every seed option on an emission's first run to draw a new seed", missing.display())
        );
        assert!(!missing.exists());
        // The one-time key was not made either (its folder was, under the lock).
        assert_eq!(std::fs::read_dir(out.join("private")).unwrap().count(), 0);
        // A seed file of bytes that are not text, and one of text that is not a seed.
        let binary = dir.path().join("binary.seed");
        files::write_secret(&binary, b"\xff\xfe").unwrap();
        assert_eq!(
            refusal(request(&out, SeedSource::File(binary.clone()))),
            format!("seed file {}: not text", binary.display())
        );
        let short = dir.path().join("short.seed");
        files::write_secret(&short, b"abc\n").unwrap();
        assert_eq!(
            refusal(request(&out, SeedSource::File(short.clone()))),
            format!("seed file {}: the seed must be 256 bits written as 64 hexadecimal digits (0-9, a-f), got 3 characters", short.display())
        );
        // Blocks beyond five digits.
        let mut far = request(&out, SeedSource::Private);
        far.first_block = 99_999;
        far.blocks = 2;
        assert!(refusal(far).starts_with("blocks 99999 to 100000: "));
        assert_eq!(std::fs::read_dir(out.join("private")).unwrap().count(), 0);
    }

    const HEX: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn a_seed_is_read_from_a_stream_with_a_bound() {
        let seed = read_seed_from(format!("{HEX}\r\n").as_bytes(), "test").unwrap();
        assert_eq!(hex::encode(seed), HEX);
        // An endless stream is not read to its end.
        let err = read_seed_from(std::io::repeat(b'a'), "test").unwrap_err();
        assert!(err.to_string().contains("longer than 256 bytes"), "{err}");
        let err = read_seed_from(&b"\xff\xfe"[..], "test").unwrap_err();
        assert!(err.to_string().contains("not text"), "{err}");
        let err = crate::problem::chained(&read_seed_from(&b""[..], "test").unwrap_err());
        assert!(err.contains("the seed from test"), "{err}");
        assert!(err.contains("64 hexadecimal digits"), "{err}");
    }
}
