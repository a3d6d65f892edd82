//! `seal`: checks that every planned block of an emission is there and verifies, then writes
//! the signed emission seal and a line of the audit log.

use super::{pool, Exit, SealArgs};
use anyhow::{anyhow, bail, Result};
use emission_factory::block::{self, keys};
use emission_factory::emission::lock::LockFile;
use emission_factory::emission::log::{append_locked, Entry};
use emission_factory::emission::seal::{self, SEAL_FILE};
use emission_factory::game::Game;
use emission_factory::money::parse_canonical;
use emission_factory::progress::NoProgress;
use emission_factory::untrusted::{shown, shown_path};
use emission_factory::verify::{verify_block, VerifyOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub(super) fn run(args: SealArgs) -> Result<Exit> {
    let folder = &args.folder;
    if !folder
        .join(emission_factory::emission::record::RECORD_FILE)
        .exists()
    {
        bail!(
            "{} is not an emission folder with a record (emission.json); give <out>/<game>/<stake>/e<emission>",
            shown_path(folder)
        );
    }
    let key_path = match &args.signing_key {
        Some(path) => path.clone(),
        None => one_time_key(folder)?,
    };
    let key = keys::read_signing_key(&key_path)?;
    // A token over the seal: its options and certificate checked before anything is done.
    let stamp = super::tsa::plan(&args.tsa)?;
    let public = key.verifying_key();
    if let Some(name) = &args.group {
        emission_factory::fs::files::emission_folder(
            folder,
            Some(emission_factory::fs::files::group_id(name)?),
        )?;
    }
    let lock = LockFile::emission(folder)?;
    let held = lock.acquire(&mut |m| {
        if !args.quiet {
            errln!("note: {m}")
        }
    })?;
    // Whoever left temporary files of the seal or the record no longer holds the lock.
    for (path, count) in emission_factory::emission::remove_stale(folder)? {
        if args.quiet {
            continue;
        }
        errln!(
            "note: removed {count} temporary file(s) for {} left by a run that was killed",
            path.display()
        );
    }
    let (record, record_bytes) = seal::record_for_sealing(folder, &public)?;
    let planned = match (record.blocks, args.blocks) {
        (Some(r), Some(a)) if r != a => bail!(
            "--blocks {a}: the emission's record says it holds {r} blocks"
        ),
        (Some(r), _) => r,
        (None, Some(a)) => a,
        (None, None) => bail!(
            "how many blocks make this emission? Its record does not say (emit --emission-blocks); give --blocks B"
        ),
    };
    let game = match &args.game {
        Some(g) => Game::resolve(g)?,
        None => Game::builtin(&record.game)?,
    };
    if hex::encode(game.sha256) != record.game_definition_sha256 {
        bail!(
            "the game definition {} is not the emission's (SHA-256 {}, the record says {}); give --game with the definition used",
            shown_path(Path::new(&game.source)),
            hex::encode(game.sha256),
            shown(&record.game_definition_sha256)
        );
    }
    let price = parse_canonical(&record.stake).ok_or_else(|| {
        anyhow!(
            "the record's stake {} is not a canonical amount",
            shown(&record.stake)
        )
    })?;
    game.stake(price)?;
    // Every block is verified in full before it is sealed (missing ones are named by `seal`).
    // Sealed already: the blocks were verified when sealed; the manifests (signatures, SHA-256)
    // are checked against the seal, the CSVs are not read again (`verify` reads them).
    let already = folder.join(SEAL_FILE).exists();
    let present = if already {
        Vec::new()
    } else {
        seal::complete_blocks(folder)?
    };
    let matching = if already {
        seal::manifests_match_seal(folder, &public, planned)?
    } else {
        Vec::new()
    };
    let pool = pool(args.threads)?;
    let mut good: BTreeSet<u32> = matching.iter().copied().collect();
    let options = VerifyOptions {
        public_key: Some(public),
        game: Some(game.clone()),
        forms: false,
        seed: None,
        beacon: None,
    };
    let mut failed = Vec::new();
    for &number in present.iter().filter(|&&b| b <= planned) {
        let csv = folder.join(block::csv_name(number));
        let report = pool.install(|| verify_block(&csv, &options, &NoProgress));
        emission_factory::interrupt::check()?;
        if report.ok() {
            good.insert(number);
        } else {
            failed.push(format!(
                "block {number}:\n    {}",
                emission_factory::problem::joined(&report.problems, "\n    ")
            ));
        }
    }
    if !failed.is_empty() {
        bail!(
            "cannot seal {}: blocks do not verify:\n  {}",
            shown_path(folder),
            failed.join("\n  ")
        );
    }
    // The log's line comes first, so that the seal covers it.
    let mut entry = Entry::for_this_run("seal");
    entry.blocks_kept = good.iter().copied().collect();
    entry.result = if already {
        emission_factory::emission::log::CHECKING_SEAL.into()
    } else {
        emission_factory::emission::log::SEALING.into()
    };
    append_locked(folder, &mut entry, Some(&key))?;
    let outcome = seal::seal(
        folder,
        &record,
        &record_bytes,
        planned,
        &key,
        // A record that asked a trusted timestamp makes a seal that asks one (of this run's TSA,
        // or, without --tsa-*, of the record's).
        stamp
            .as_ref()
            .map(super::tsa::Plan::pin)
            .or_else(|| record.timestamp_authority_sha256.clone()),
        &|b| good.contains(&b),
    );
    if let Err(e) = &outcome {
        let mut failed = Entry::for_this_run("seal");
        failed.result = format!("{}: {e:#}", emission_factory::emission::log::SEALING_FAILED)
            .chars()
            .take(1000)
            .collect();
        append_locked(folder, &mut failed, Some(&key))?;
    }
    let released = held.release();
    let name = shown_path(folder);
    let sealed = match outcome {
        Ok(sealed) => sealed,
        Err(e) => {
            if let Err(r) = released {
                errln!("error: {r:#}");
            }
            return Err(e);
        }
    };
    let seal_file = shown_path(&folder.join(SEAL_FILE));
    let done = match sealed {
        Some(_) => format!("{name} was sealed ({seal_file})"),
        None => format!("{name} was already sealed"),
    };
    released.map_err(|e| e.context(format!("{done}, but its lock could not be released")))?;
    if stamp.is_none() && record.timestamp_authority_sha256.is_some() && !args.quiet {
        errln!(
            "note: the emission's record asked a trusted timestamp, so its seal asks one too: get it with `emission-factory timestamp {} --seal --tsa-cert PEM --tsa-url URL` (verify fails until then)",
            emission_factory::fs::files::shell_quoted(folder)
        );
    }
    let stamped = match &stamp {
        None => None,
        Some(plan) => Some(
            stamp_seal(folder, sealed.as_ref(), &public, plan, args.quiet)
                .map_err(|e| e.context(format!("{done}, but")))?,
        ),
    };
    if let Some(said) = &stamped {
        if args.json {
            errln!("{said}");
        } else {
            outln!("{said}").map_err(|e| e.done(done.clone()))?;
        }
    }
    if args.json {
        // What is sealed, read back from the seal (its signature checked) whether this run
        // wrote it or found it: the same object either way.
        let already_sealed = sealed.is_none();
        let seal = match sealed {
            Some(seal) => seal,
            None => seal::read_seal(folder, &public).map_err(|e| e.context(done.clone()))?,
        };
        let json = SealJson::of(folder, &seal, already_sealed);
        let text = serde_json::to_string_pretty(&json)
            .map_err(|e| anyhow!("cannot write the JSON: {e}; {done}"))?;
        outln!("{text}").map_err(|e| e.done(done))?;
        return Ok(Exit::Ok);
    }
    let said = match &sealed {
        Some(s) => outln!(
            "sealed {name}: {} blocks, {} tickets, {} winners, {} € of prizes ({} emission); {seal_file}",
            s.blocks.len(),
            super::grouped(s.tickets),
            super::grouped(s.winners),
            s.total_prizes,
            s.kind.as_str(),
        ),
        None => outln!(
            "{name} was already sealed: {} manifests match the seal (blocks not re-read: verify reads them)",
            matching.len()
        ),
    };
    said.map_err(|e| e.done(done))?;
    Ok(Exit::Ok)
}

/// Gets the token of the seal (`sealed`, or the one found there when it was sealed already),
/// unless it has one.
fn stamp_seal(
    folder: &Path,
    sealed: Option<&seal::Seal>,
    public: &ed25519_dalek::VerifyingKey,
    plan: &super::tsa::Plan,
    quiet: bool,
) -> Result<String> {
    let seal_path = folder.join(SEAL_FILE);
    let pinned = match sealed {
        Some(seal) => seal.timestamp_authority_sha256.clone(),
        None => {
            let token = emission_factory::emission::timestamp::token_path(&seal_path);
            if emission_factory::fs::files::entry_exists(&token)? {
                return Ok(format!(
                    "timestamp:   {} has its token already ({}): kept",
                    shown_path(&seal_path),
                    shown_path(&token)
                ));
            }
            seal::read_seal(folder, public)?.timestamp_authority_sha256
        }
    };
    super::tsa::stamp(folder, &seal_path, pinned.as_deref(), plan, quiet)
}

/// The one-time key `emit` keeps for an emission made without --signing-key:
/// `<out>/private/<game>-<stake>-e<NNNN>.signing-key.pem`, from the folder
/// `<out>/<game>/<stake>/e<NNNN>`.
fn one_time_key(folder: &Path) -> Result<PathBuf> {
    let parts: Vec<String> = folder
        .components()
        .rev()
        .take(3)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let out = folder
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent);
    match (parts.as_slice(), out) {
        ([emission, stake, game], Some(out)) => {
            let path = out
                .join("private")
                .join(format!("{game}-{stake}-{emission}.signing-key.pem"));
            if path.exists() {
                Ok(path)
            } else {
                bail!(
                    "no --signing-key, and no one-time key at {}: give the emission's --signing-key",
                    path.display()
                )
            }
        }
        _ => bail!("give the emission's --signing-key"),
    }
}

/// `seal --json`: the format's version, raised on any change of a key's name or meaning.
pub const SEAL_JSON_FORMAT: u32 = 1;

/// `seal --json`: the emission sealed (docs/FORMAT.md, "seal --json").
#[derive(Debug, serde::Serialize)]
struct SealJson {
    seal_json_format: u32,
    folder: String,
    /// The seal was there already, with these blocks (this run wrote nothing but its log line).
    already_sealed: bool,
    seal_file: String,
    /// SHA-256 of emission.seal.json, as `verify --seal-sha256` takes it.
    seal_sha256: String,
    game: String,
    stake: String,
    emission: u32,
    kind: &'static str,
    blocks: usize,
    tickets: u64,
    winners: u64,
    total_prizes: String,
    record_sha256: String,
    public_key_sha256: String,
}

impl SealJson {
    fn of(folder: &Path, seal: &seal::Seal, already_sealed: bool) -> SealJson {
        use sha2::Digest;
        SealJson {
            seal_json_format: SEAL_JSON_FORMAT,
            folder: folder.to_string_lossy().into_owned(),
            already_sealed,
            seal_file: folder.join(SEAL_FILE).to_string_lossy().into_owned(),
            seal_sha256: hex::encode(sha2::Sha256::digest(seal.to_bytes())),
            game: seal.game.clone(),
            stake: seal.stake.clone(),
            emission: seal.emission,
            kind: seal.kind.as_str(),
            blocks: seal.blocks.len(),
            tickets: seal.tickets,
            winners: seal.winners,
            total_prizes: seal.total_prizes.clone(),
            record_sha256: seal.record_sha256.clone(),
            public_key_sha256: seal.public_key_sha256.clone(),
        }
    }
}
