//! `seal`: the options turned into an [`emission_factory::emit::seal::Request`] (the engine
//! checks and verifies every planned block, logs and writes the signed seal), then the trusted
//! timestamp asked and the outcome printed.

use super::{pool, Exit, SealArgs};
use anyhow::{anyhow, Result};
use emission_factory::emission::seal::{self, SEAL_FILE};
use emission_factory::emit::seal::{seal, Request, SealKey};
use emission_factory::emit::Event;
use emission_factory::fs::files::group_id;
use emission_factory::game::Game;
use emission_factory::untrusted::shown_path;
use std::path::Path;

pub(super) fn run(args: SealArgs) -> Result<Exit> {
    let folder = &args.folder;
    // A token over the seal: its options and certificate checked before anything is done.
    let stamp = super::tsa::plan(&args.tsa)?;
    let request = Request {
        folder: folder.clone(),
        key: match &args.signing_key {
            Some(path) => SealKey::File(path.clone()),
            None => SealKey::OneTime,
        },
        blocks: args.blocks,
        game: args.game.as_deref().map(Game::resolve).transpose()?,
        group: args.group.as_deref().map(group_id).transpose()?,
        timestamp_pin: stamp.as_ref().map(super::tsa::Plan::pin),
        public_key: args
            .public_key
            .as_deref()
            .map(emission_factory::block::keys::read_public_key)
            .transpose()?,
    };
    let quiet = args.quiet;
    let done = seal(&request, &pool(args.threads)?, &mut |event| {
        if !quiet {
            print_event(&event)
        }
    })?;
    let name = shown_path(folder);
    let seal_file = shown_path(&folder.join(SEAL_FILE));
    let said = match &done.written {
        Some(_) => format!("{name} was sealed ({seal_file})"),
        None => format!("{name} was already sealed"),
    };
    done.release.map_err(|e| {
        anyhow::Error::new(e).context(format!("{said}, but its lock could not be released"))
    })?;
    if stamp.is_none() && done.record.timestamp_authority_sha256.is_some() && !quiet {
        errln!(
            "note: the emission's record asked a trusted timestamp, so its seal asks one too: get it with `emission-factory timestamp {} --seal --tsa-cert PEM --tsa-url URL` (verify fails until then)",
            emission_factory::fs::files::shell_quoted(folder)
        );
    }
    if let Some(plan) = &stamp {
        let line = stamp_seal(folder, done.written.as_ref(), &done.public, plan, quiet)
            .map_err(|e| e.context(format!("{said}, but")))?;
        if args.json {
            errln!("{line}");
        } else {
            outln!("{line}").map_err(|e| e.done(said.clone()))?;
        }
    }
    if args.json {
        // What is sealed, read back from the seal (its signature checked) whether this run
        // wrote it or found it: the same object either way.
        let already_sealed = done.written.is_none();
        let seal = match done.written {
            Some(seal) => seal,
            None => seal::read_seal(folder, &done.public)
                .map_err(|e| anyhow::Error::from(e).context(said.clone()))?,
        };
        let mut json = SealJson::of(folder, &seal, already_sealed);
        json.emission_check = done.checked.as_ref().map(|report| EmissionCheckJson {
            ok: report.problems.is_empty(),
            problems: report.problems.clone(),
        });
        let ok = done.checked.as_ref().is_none_or(|r| r.problems.is_empty());
        let text = serde_json::to_string_pretty(&json)
            .map_err(|e| anyhow!("cannot write the JSON: {e}; {said}"))?;
        outln!("{text}").map_err(|e| e.done(said))?;
        return Ok(if ok { Exit::Ok } else { Exit::Failed });
    }
    let line = match &done.written {
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
            done.matching.len()
        ),
    };
    line.map_err(|e| e.done(said.clone()))?;
    let Some(report) = &done.checked else {
        return Ok(Exit::Ok);
    };
    for note in &report.notes {
        errln!("note: {}", emission_factory::untrusted::defanged(note));
    }
    let failed = !report.problems.is_empty();
    let verdict = if failed {
        outln!(
            "{}  emission {name}: checked against --public-key once sealed",
            super::output::failed()
        )
    } else {
        outln!(
            "OK      emission {name}: checked against --public-key once sealed ({})",
            match &done.written {
                Some(_) => "every block verified in full by this run",
                None =>
                    "every manifest matched the seal; its blocks were verified when it was made",
            }
        )
    };
    verdict.map_err(|e| e.done(said.clone()))?;
    for p in &report.problems {
        outln!("  - {}", emission_factory::untrusted::defanged(&p.message))
            .map_err(|e| e.done(said.clone()))?;
    }
    Ok(if failed { Exit::Failed } else { Exit::Ok })
}

/// What the engine says while sealing, on standard error.
fn print_event(event: &Event) {
    match event {
        Event::Waiting(m) => errln!("note: {m}"),
        Event::StaleRemoved { path, count } => errln!(
            "note: removed {count} temporary file(s) for {} left by a run that was killed",
            shown_path(path)
        ),
        Event::Note(m) => errln!("note: {m}"),
        Event::Warning(m) => errln!("warning: {m}"),
        Event::Block { .. } | Event::Sealed(_) => {}
    }
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
    /// With `--public-key`: the folder checked as a whole against it, once sealed.
    #[serde(skip_serializing_if = "Option::is_none")]
    emission_check: Option<EmissionCheckJson>,
}

/// `seal --public-key --json`: the emission's check, as `verify --json` gives an emission's.
#[derive(Debug, serde::Serialize)]
struct EmissionCheckJson {
    ok: bool,
    problems: Vec<emission_factory::problem::Problem>,
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
            game: seal.id.game().to_string(),
            stake: seal.id.stake().to_string(),
            emission: seal.id.number(),
            kind: seal.kind.as_str(),
            blocks: seal.blocks.len(),
            tickets: seal.tickets,
            winners: seal.winners,
            total_prizes: seal.total_prizes.clone(),
            record_sha256: seal.record_sha256.clone(),
            public_key_sha256: seal.public_key_sha256.clone(),
            emission_check: None,
        }
    }
}
