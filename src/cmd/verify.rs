//! `verify`: checks blocks and reports, per block, OK or every problem found.

use super::emit::seed_of_options;
use super::output::{self, StdoutError};
use super::{grouped, pool, progress_bar, Exit, VerifyArgs};
use anyhow::{bail, Result};
use emission_factory::block::id::EmissionId;
use emission_factory::block::id::EmissionKind;
use emission_factory::block::keys;
use emission_factory::emission::seal::{check_folder, FolderCheck};
use emission_factory::money::canonical;
use emission_factory::problem::{Code, Problem};
use emission_factory::untrusted::{defanged, shown_path};
use emission_factory::verify::{find_blocks, verify_block, BlockReport, VerifyOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// In a verifying command the exit status is the verdict: a closed standard output drops the
/// lines, never the checks ([`output::write_stdout_unless_gone`]).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cmd::output::write_stdout_unless_gone(format_args!($($arg)*))
    };
}

pub(super) fn run(args: VerifyArgs) -> Result<Exit> {
    let trusted = super::trusted(args.public_key.as_deref(), args.game.as_deref())?;
    let mut options = VerifyOptions {
        forms: args.forms,
        seed: seed_of_options(&args.seed, args.allow_insecure_key)?,
        ..trusted
    };
    let pack = pack_of(&args.paths)?;
    let tsa_certs = args
        .tsa_cert
        .iter()
        .map(|p| emission_factory::emission::timestamp::read_cert(p, "--tsa-cert"))
        .collect::<Result<Vec<_>, _>>()?;
    if let (Some(token), None) = (&args.pack_token, &pack) {
        bail!(
            "--pack-token {}: the trusted timestamp of an emission pack, and no pack is given: give the pack (one file, with --identity) with it",
            shown_path(token)
        );
    }
    // The pack's own trusted timestamps: the one asked for, and the one beside it if another.
    let pack_tokens = match &pack {
        Some(pack) => pack_tokens(pack, args.pack_token.as_deref())?,
        None => Vec::new(),
    };
    let mut verified = None;
    let blocks = match &pack {
        None => {
            if args.shares.share.is_empty() && !args.shares.identity.is_empty() {
                bail!("--identity opens the custody shares or an emission pack: give the --share files with it, or the pack");
            }
            find_blocks(&args.paths)?
        }
        Some(pack) => {
            if args.shares.identity.is_empty() {
                bail!("{} is an emission pack: give --identity KEY (an age identity of one of its recipients) to verify it", shown_path(pack));
            }
            let exposure = super::emit::exposure(args.allow_insecure_key);
            let read =
                emission_factory::custody::read_identity_files(&args.shares.identity, exposure)?;
            super::emit::warn_exposed(&read.exposed);
            if let Some(path) = &args.beacon {
                if options.seed.is_none() && args.shares.share.is_empty() {
                    bail!("--beacon is for an audit with the emission's seed: give the custody shares (--share, --identity) or the seed (--seed-file...) with it");
                }
                options.beacon = Some(emission_factory::emission::beacon::read_round(path)?);
            }
            // With --share: the seed of the emission the pack names, rebuilt from the shares
            // (which must be of that emission) before its first block is read. The same
            // --identity files open the pack and the shares.
            let seed_of = |id: &EmissionId| -> Result<
                emission_factory::plan::Seed,
                emission_factory::custody::CustodyError,
            > {
                let (secret, info) = emission_factory::custody::rebuild_seed_with(
                    &args.shares.share,
                    &args.shares.identity,
                    id,
                    exposure,
                )?;
                super::emit::warn_exposed(&info.exposed);
                Ok(*secret.expose())
            };
            let bar = progress_bar(args.quiet || args.json, "verify", None);
            bar.set_message(format!("verify {}", shown_path(pack)));
            let pool = pool(args.threads)?;
            let done = emission_factory::pack::verify::verify_pack(
                pack,
                &read.identities,
                &options,
                (!args.shares.share.is_empty()).then_some(&seed_of as _),
                &bar,
                &pool,
                // Hashed as it streams, for its token: the pack is read once.
                !pack_tokens.is_empty() && !tsa_certs.is_empty(),
            )?;
            bar.finish_and_clear();
            options.seed = done.seed;
            let blocks = done.reports.iter().map(|r| r.csv.clone()).collect();
            verified = Some(done);
            blocks
        }
    };
    // A pack's blocks were checked as it streamed: their verdicts, by their staged place.
    let mut streamed: BTreeMap<PathBuf, BlockReport> = verified
        .as_mut()
        .map(|v| std::mem::take(&mut v.reports))
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.csv.clone(), r))
        .collect();
    // What a pack's staged files are shown as: `PACK:<game>/<stake>/e<emission>/<file>`.
    let shown_at = |path: &std::path::Path| -> String {
        match &verified {
            Some(v) => v.staged.shown(path),
            None => shown_path(path),
        }
    };
    if !args.shares.share.is_empty() && pack.is_none() {
        // An auditor's rebuild: the shares name their emission, which must be the blocks'.
        let emission_id = blocks
            .first()
            .map(|b| emission_factory::verify::folder_of(b))
            .map(|folder| std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf()))
            .and_then(|folder| EmissionId::of_folder(&folder))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--share: give the blocks of one emission, in their folder <game>/<stake>/e<emission>"
                )
            })?;
        let (secret, info) = emission_factory::custody::rebuild_seed_with(
            &args.shares.share,
            &args.shares.identity,
            &emission_id,
            super::emit::exposure(args.allow_insecure_key),
        )?;
        super::emit::warn_exposed(&info.exposed);
        options.seed = Some(*secret.expose());
    }
    if let (Some(path), None) = (&args.beacon, &pack) {
        if options.seed.is_none() {
            bail!("--beacon is for an audit with the emission's seed: give the custody shares (--share, --identity) or the seed (--seed-file...) with it");
        }
        // Checked here (signature, randomness); that it is the round the emission's record
        // names, published after the record, by every block's replay.
        options.beacon = Some(emission_factory::emission::beacon::read_round(path)?);
    }
    // Emission folders: every folder holding a block found (whether or not its record is
    // still there: a deleted record fails, never turns the checks off), and those named that
    // hold an emission's files.
    let mut emissions: BTreeSet<PathBuf> = blocks
        .iter()
        .map(|b| emission_factory::verify::folder_of(b).to_path_buf())
        .collect();
    emissions.extend(emission_factory::verify::find_emission_folders(
        &args.paths,
    )?);
    if blocks.is_empty() && emissions.is_empty() {
        bail!("no block file (block-NNNNN.csv) found in the paths given");
    }
    if (args.record_sha256.is_some() || args.seal_sha256.is_some()) && emissions.len() != 1 {
        bail!(
            "--record-sha256 and --seal-sha256 pin one emission: give the blocks or the folder of one emission ({} found)",
            emissions.len()
        );
    }
    let check = FolderCheck {
        allow_unsealed: args.allow_unsealed,
        record_sha256: args.record_sha256.clone(),
        seal_sha256: args.seal_sha256.clone(),
        tsa_certs: tsa_certs.clone(),
        // A pack's CSVs were checked as they streamed, never written in the staged folder.
        streamed_blocks: pack.as_ref().map(|_| {
            blocks
                .iter()
                .filter_map(|b| emission_factory::verify::block_number(b))
                .collect()
        }),
    };
    // The blocks that failed, by emission folder: a failed block fails its emission.
    let mut failed_in: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let json = args.json;
    let mut result = VerifyJson {
        verify_format: VERIFY_FORMAT,
        seed_sha256: options
            .seed
            .as_ref()
            .map(|seed| hex::encode(emission_factory::plan::seed_commitment(seed))),
        beacon_round: options.beacon.as_ref().map(|r| r.round),
        ..VerifyJson::default()
    };
    let bar = progress_bar(args.quiet || json, "verify", None);
    let pool = pool(args.threads)?;
    let mut failed = 0;
    let mut replayed = 0u64;
    let mut warned = BTreeSet::new();
    for csv in &blocks {
        let report = match streamed.remove(csv) {
            Some(report) => report,
            None => {
                bar.suspend(|| warn_if_readable_by_others(csv));
                bar.set_message(format!("verify {}", shown_path(csv)));
                bar.set_position(0);
                pool.install(|| verify_block(csv, &options, &bar))
            }
        };
        emission_factory::interrupt::check()?;
        bar.suspend(|| -> Result<(), StdoutError> {
            for w in &report.warnings {
                // The same warning for every block of a folder: say it once.
                if warned.insert(w.clone()) {
                    errln!("warning: {w}");
                }
            }
            // Counted once, whichever output is asked for.
            if report.ok() {
                replayed += u64::from(options.seed.is_some());
            } else {
                failed += 1;
                failed_in
                    .entry(emission_factory::verify::folder_of(csv).to_path_buf())
                    .or_default()
                    .push(csv.clone());
            }
            if json {
                let mut block = BlockJson::of(csv, &report, options.seed.is_some());
                if verified.is_some() {
                    // A pack's member, not the staged place (removed at exit).
                    block.path = shown_at(csv);
                }
                result.blocks.push(block);
                return Ok(());
            }
            if report.ok() {
                outln!(
                    "OK      {} ({} tickets)",
                    shown_at(csv),
                    grouped(report.tickets)
                )?;
                // An auditor's minutes must tell a replay from a plain verify.
                if let Some(seed) = &options.seed {
                    outln!(
                        "        seed replay OK: {} prizes and layouts re-derived from the seed; seed_sha256 {}",
                        grouped(report.tickets),
                        hex::encode(emission_factory::plan::seed_commitment(seed))
                    )?;
                }
                if let Some(round) = &options.beacon {
                    outln!(
                        "        beacon OK: the blocks' seed re-derived from the secret and round {} of {}, the round the emission's record names (signature checked)",
                        round.round,
                        emission_factory::emission::beacon::CHAIN
                    )?;
                }
            } else {
                outln!("{}  {}", output::failed(), shown_at(csv))?;
                for p in &report.problems {
                    outln!("  - {}", defanged(&p.message))?;
                }
                if report.unlisted > 0 {
                    outln!("  - ... and {} more problems", report.unlisted)?;
                }
            }
            if args.forms && !report.forms.is_empty() {
                outln!("  forms (prize € / form / tickets):")?;
                let mut rows: Vec<_> = report.forms.iter().collect();
                rows.sort_by(|a, b| b.0 .0.cmp(&a.0 .0).then(b.1.cmp(a.1)));
                for ((prize, form), count) in rows {
                    outln!(
                        "    {:>8}  {:<40} {:>10}",
                        canonical(*prize),
                        defanged(form),
                        grouped(*count)
                    )?;
                }
            }
            Ok(())
        })?;
    }
    bar.finish_and_clear();
    let mut emissions_failed = 0;
    for folder in &emissions {
        let key = match options.public_key {
            Some(key) => key,
            None => {
                match keys::read_public_key(&folder.join(emission_factory::block::PUBLIC_KEY_FILE))
                    .map_err(anyhow::Error::from)
                {
                    Ok(key) => key,
                    Err(e) => {
                        emissions_failed += 1;
                        if json {
                            result.emissions.push(EmissionJson {
                                folder: folder.to_string_lossy().into_owned(),
                                ok: false,
                                kind: None,
                                problems: vec![Problem::new(Code::EmissionKey, format!("{e:#}"))],
                                timestamps: Vec::new(),
                            });
                            continue;
                        }
                        outln!(
                            "{}  emission {}\n  - {}",
                            output::failed(),
                            shown_path(folder),
                            defanged(&format!("{e:#}"))
                        )?;
                        continue;
                    }
                }
            }
        };
        let mut report = check_folder(folder, &key, &check);
        for csv in failed_in.get(folder).into_iter().flatten() {
            report.problem(
                Code::EmissionBlockFailed,
                match emission_factory::verify::block_number(csv) {
                    Some(n) => format!("block {n} failed (above)"),
                    None => format!("{} failed (above)", shown_path(csv)),
                },
            );
        }
        for note in &report.notes {
            errln!("note: {note}");
        }
        if json {
            emissions_failed += usize::from(!report.problems.is_empty());
            result.emissions.push(EmissionJson {
                folder: match verified {
                    Some(_) => shown_at(folder),
                    None => folder.to_string_lossy().into_owned(),
                },
                ok: report.problems.is_empty(),
                kind: report.kind.map(|k| k.as_str()),
                problems: report.problems,
                timestamps: report.timestamps,
            });
            continue;
        }
        let kind = match report.kind {
            Some(EmissionKind::Test) => {
                " (TEST emission: its seed was given or kept in clear; not for sale)"
            }
            Some(EmissionKind::Production) => " (production emission)",
            None => "",
        };
        if report.problems.is_empty() {
            outln!("OK      emission {}{kind}", shown_at(folder))?;
            for line in &report.timestamps {
                outln!("        timestamp OK: {}", defanged(line))?;
            }
        } else {
            emissions_failed += 1;
            outln!("{}  emission {}{kind}", output::failed(), shown_at(folder))?;
            for p in &report.problems {
                outln!("  - {}", defanged(&p.message))?;
            }
        }
    }
    // The pack's own trusted timestamps, over its bytes as they were read.
    let mut packs_failed = 0;
    for (token, asked) in &pack_tokens {
        let (Some(pack), Some(verified)) = (&pack, &verified) else {
            continue;
        };
        let checked = check_pack_token(pack, token, *asked, verified.sha256.as_ref(), &tsa_certs);
        packs_failed += usize::from(checked.ok == Some(false));
        if !checked.checked {
            errln!(
                "note: {} is beside the pack, a trusted timestamp of it, and was NOT checked: no --tsa-cert was given. Give --tsa-cert PEM (the certificate of the TSA that signed it) to check it and print its time, and --pack-token {} to require it",
                shown_path(token),
                emission_factory::fs::files::shell_quoted(token)
            );
        }
        if json {
            result.pack_timestamps.push(checked);
            continue;
        }
        match (&checked.timestamp, checked.problems.first()) {
            (Some(line), None) => {
                outln!("OK      pack {}", shown_path(pack))?;
                outln!("        timestamp OK: {}", defanged(line))?;
            }
            (_, Some(problem)) => {
                outln!("{}  pack {}", output::failed(), shown_path(pack))?;
                outln!("  - {}", defanged(&problem.message))?;
            }
            (None, None) => {}
        }
    }
    if json {
        result.ok = failed == 0 && emissions_failed == 0 && packs_failed == 0;
        result.blocks_checked = blocks.len();
        result.blocks_failed = failed;
        result.seed_replayed = options.seed.as_ref().map(|_| replayed);
        result.emissions_checked = emissions.len();
        result.emissions_failed = emissions_failed;
        let text = serde_json::to_string_pretty(&result)
            .map_err(|e| anyhow::anyhow!("cannot write the JSON: {e}"))?;
        outln!("{text}")?;
        return Ok(if result.ok { Exit::Ok } else { Exit::Failed });
    }
    outln!(
        "{} block(s) checked: {} OK, {} failed",
        blocks.len(),
        blocks.len() - failed,
        failed
    )?;
    if let Some(seed) = &options.seed {
        outln!(
            "seed replay: {replayed} of {} block(s) replayed from the seed and matched (seed_sha256 {})",
            blocks.len(),
            hex::encode(emission_factory::plan::seed_commitment(seed))
        )?;
    }
    if let Some(round) = &options.beacon {
        // Said only of blocks that were replayed from it and matched: a round the record does
        // not name fails every block, and is then no seed of anything here.
        if replayed > 0 {
            outln!(
                "beacon: the seed of the {replayed} block(s) replayed is HKDF-SHA256(secret, salt = the signature of round {} of {}, info = the emission), the round each emission's signed record names; signature checked against the chain's pinned key",
                round.round,
                emission_factory::emission::beacon::CHAIN
            )?;
        } else {
            outln!(
                "beacon: round {} of {} was given (signature checked against the chain's pinned key); no block was replayed from it (see the failures above)",
                round.round,
                emission_factory::emission::beacon::CHAIN
            )?;
        }
    }
    if !emissions.is_empty() {
        outln!(
            "{} emission(s) checked: {} OK, {} failed",
            emissions.len(),
            emissions.len() - emissions_failed,
            emissions_failed
        )?;
    }
    Ok(
        if failed == 0 && emissions_failed == 0 && packs_failed == 0 {
            Exit::Ok
        } else {
            Exit::Failed
        },
    )
}

/// The pack's own trusted timestamps to check: `asked` (`--pack-token`, required: `true`), and
/// `PACK.tsr` beside the pack when it is there and is not that file (checked when present).
fn pack_tokens(
    pack: &std::path::Path,
    asked: Option<&std::path::Path>,
) -> Result<Vec<(PathBuf, bool)>> {
    let mut tokens: Vec<(PathBuf, bool)> =
        asked.map(|t| (t.to_path_buf(), true)).into_iter().collect();
    let beside = emission_factory::emission::timestamp::token_path(pack);
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b
            || matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(x), Ok(y)) if x == y
            )
    };
    if emission_factory::fs::files::entry_exists(&beside)?
        && !asked.is_some_and(|a| same(a, &beside))
    {
        tokens.push((beside, false));
    }
    Ok(tokens)
}

/// The verdict on the pack's token `token` (`asked`: given with `--pack-token`, so required),
/// the pack's bytes as read hashing to `sha256`, against `certs`. Without a certificate it is
/// not checked (`checked: false`, `ok: None`): said, never passed as checked.
fn check_pack_token(
    pack: &std::path::Path,
    token: &std::path::Path,
    asked: bool,
    sha256: Option<&[u8; 32]>,
    certs: &[emission_factory::emission::timestamp::TsaCert],
) -> PackTimestampJson {
    use emission_factory::emission::timestamp::{check_token_file, TimestampError};
    let mut json = PackTimestampJson {
        token: shown_path(token),
        checked: !certs.is_empty(),
        ok: None,
        timestamp: None,
        time: None,
        tsa: None,
        serial: None,
        policy: None,
        problems: Vec::new(),
    };
    let quoted = emission_factory::fs::files::shell_quoted(pack);
    let fail = |json: &mut PackTimestampJson, message: String| {
        json.ok = Some(false);
        json.problems.push(Problem::in_file(
            Code::PackTimestamp,
            &shown_path(token),
            message,
        ));
    };
    if certs.is_empty() {
        return json;
    }
    let Some(sha256) = sha256 else {
        fail(
            &mut json,
            format!(
                "{}: the SHA-256 of {} was not made as it was read: its token is not checked (a bug: report it)",
                shown_path(token),
                shown_path(pack)
            ),
        );
        return json;
    };
    match check_token_file(pack, token, sha256, certs) {
        Ok(checked) => {
            json.timestamp = Some(checked.line(pack));
            json.ok = Some(true);
            json.time = Some(checked.stamp.time);
            json.tsa = Some(checked.tsa);
            json.serial = Some(checked.stamp.serial);
            json.policy = Some(checked.stamp.policy);
        }
        Err(TimestampError::Read { token: path, error }) => fail(
            &mut json,
            format!(
                "{}{}: the pack's trusted timestamp cannot be read: {error}. {}",
                if asked { "--pack-token " } else { "" },
                shown_path(&path),
                if asked {
                    format!("It was asked for, and a missing piece of evidence is a failure: give the token's path, or restore it from the archive (a pack without one gets it with `emission-factory timestamp --pack {quoted} --tsa-cert PEM --tsa-url URL`)")
                } else {
                    "Restore it from the archive, or remove it if it is of no pack".to_string()
                }
            ),
        ),
        Err(e) => fail(
            &mut json,
            format!(
                "{e}. A pack's token must be over its very bytes as read now (SHA-256 {}) and verify with a --tsa-cert given: the pack was changed or re-made since it was stamped, or the token is another file's, or its TSA's certificate was not given",
                hex::encode(sha256)
            ),
        ),
    }
    json
}

/// Warns when others may read a block: until its tickets are sold, it tells which ticket wins
/// what, and is as secret as the seed (emit makes it 0600, or 0640 with --group).
pub(super) fn warn_if_readable_by_others(csv: &std::path::Path) {
    if let Some(mode) = emission_factory::fs::files::readable_by_others(csv) {
        errln!(
            "warning: {} has mode {mode:04o}: every user of this machine may read it, and until its tickets are sold a block is as secret as the seed (which ticket wins what, in sale order). Run `chmod o-rwx {}` (emit makes blocks 0600, or 0640 with --group)",
            shown_path(csv),
            emission_factory::fs::files::shell_quoted(csv)
        );
    }
}

/// `verify --json`: the format's version, raised on any change of a key's name or meaning.
pub const VERIFY_FORMAT: u32 = 2;

/// `verify --json`: one object for the whole run (docs/FORMAT.md, "verify --json").
#[derive(Debug, Default, serde::Serialize)]
struct VerifyJson {
    verify_format: u32,
    /// Every block and every emission held.
    ok: bool,
    blocks_checked: usize,
    blocks_failed: usize,
    emissions_checked: usize,
    emissions_failed: usize,
    /// With a seed: its commitment, and the blocks replayed from it and matched.
    seed_sha256: Option<String>,
    beacon_round: Option<u64>,
    seed_replayed: Option<u64>,
    blocks: Vec<BlockJson>,
    emissions: Vec<EmissionJson>,
    /// The pack's own trusted timestamps (PACK.tsr, --pack-token), one object each.
    pack_timestamps: Vec<PackTimestampJson>,
}

/// `verify --json` of a pack: its own trusted timestamp.
#[derive(Debug, serde::Serialize)]
struct PackTimestampJson {
    /// The token file.
    token: String,
    /// Checked against the --tsa-cert given (`false`: none was given).
    checked: bool,
    /// `true` it verified, `false` it failed, `null` not checked.
    ok: Option<bool>,
    /// The line for the minutes when it verified (`PACK existed by ...`), else `null`.
    timestamp: Option<String>,
    /// What it says, when it verified.
    time: Option<String>,
    tsa: Option<String>,
    serial: Option<String>,
    policy: Option<String>,
    problems: Vec<Problem>,
}

#[derive(Debug, serde::Serialize)]
struct BlockJson {
    path: String,
    block: Option<u32>,
    ok: bool,
    tickets: u64,
    /// Replayed from the seed and matched (only with a seed).
    seed_replay: Option<bool>,
    /// `{"code", "message", ...}` each (docs/FORMAT.md, "Problem codes").
    problems: Vec<Problem>,
    /// Ticket-line problems found beyond those listed.
    more_problems: u64,
    /// With --forms: prize, form, tickets; highest prize first.
    forms: Vec<FormJson>,
}

#[derive(Debug, serde::Serialize)]
struct FormJson {
    prize: String,
    form: String,
    tickets: u64,
}

#[derive(Debug, serde::Serialize)]
struct EmissionJson {
    folder: String,
    ok: bool,
    kind: Option<&'static str>,
    problems: Vec<Problem>,
    /// The trusted timestamps that verified, one line each.
    timestamps: Vec<String>,
}

impl BlockJson {
    fn of(csv: &std::path::Path, report: &BlockReport, seeded: bool) -> BlockJson {
        let mut forms: Vec<_> = report.forms.iter().collect();
        forms.sort_by(|a, b| b.0 .0.cmp(&a.0 .0).then(b.1.cmp(a.1)));
        BlockJson {
            path: csv.to_string_lossy().into_owned(),
            block: emission_factory::verify::block_number(csv),
            ok: report.ok(),
            tickets: report.tickets,
            seed_replay: seeded.then(|| report.ok()),
            problems: report.problems.clone(),
            more_problems: report.unlisted,
            forms: forms
                .into_iter()
                .map(|((prize, form), tickets)| FormJson {
                    prize: canonical(*prize),
                    form: form.clone(),
                    tickets: *tickets,
                })
                .collect(),
        }
    }
}

/// The emission pack `paths` names, if it is one: a single path that is a file (not a block
/// CSV) named `.pack` or starting with the age header (docs/FORMAT.md, "Emission pack").
pub(super) fn pack_of(paths: &[PathBuf]) -> Result<Option<PathBuf>> {
    let is_pack = |p: &PathBuf| -> bool {
        if !p.is_file() || emission_factory::verify::block_number(p).is_some() {
            return false;
        }
        if p.extension().is_some_and(|e| e == "pack") {
            return true;
        }
        let mut head = [0u8; 21];
        std::fs::File::open(p)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok_and(|()| &head == b"age-encryption.org/v1")
    };
    let packs: Vec<&PathBuf> = paths.iter().filter(|p| is_pack(p)).collect();
    match packs[..] {
        [] => Ok(None),
        [pack] if paths.len() == 1 => Ok(Some(pack.clone())),
        _ => bail!("an emission pack is read alone: give one pack, or blocks and folders"),
    }
}
