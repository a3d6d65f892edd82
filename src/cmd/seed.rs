//! `seed`: makes an emission's seed and hands it out as age-encrypted shares, k of n; or
//! reshares an existing seed to new custodians; or checks that a set of shares rebuilds.
//! It prints file names, public keys and digests, never the seed or a share.

use super::{Exit, SeedArgs};
use anyhow::{anyhow, bail, Result};
use ed25519_dalek::SigningKey;
use emission_factory::block::id::EmissionId;
use emission_factory::custody::{
    parse_recipient, read_labelled_recipients_file, rebuild_seed_with, Exposure, Recipient,
    ShareSetInfo,
};
use emission_factory::emission::ceremony::Ceremony;
use emission_factory::fs::files;
use emission_factory::game::Game;
use emission_factory::untrusted::{shown_path, shown_text, SHOWN_CHARS};
use std::path::PathBuf;

/// What to do, validated.
enum Task {
    /// A fresh seed, split for `recipients`.
    New(Split),
    /// The seed rebuilt from `shares`, split again.
    Reshare(Existing, Split),
    /// The seed rebuilt from `shares`, reported.
    Check(Existing),
}

/// A split to write.
struct Split {
    threshold: u8,
    recipients: Vec<Recipient>,
    /// The custodians' labels, one per recipient ("" where none).
    labels: Vec<String>,
    out: PathBuf,
    signing_key: SigningKey,
}

/// Existing shares and the identities that open them.
struct Existing {
    shares: Vec<PathBuf>,
    identities: Vec<PathBuf>,
}

pub(super) fn run(args: SeedArgs) -> Result<Exit> {
    let game = Game::resolve(&args.game)?;
    let stake = super::stake(&game, args.price.as_deref())?;
    let emission = EmissionId::new(&game.id, stake, args.emission);
    let folder = emission.folder(&args.emissions);
    let emissions = args.emissions.clone();
    let (number, planned) = (args.emission, args.emission_blocks);
    let exposure = super::emit::exposure(args.allow_insecure_key);
    // A token over the new record (checked before anything is made); its TSA is named in it.
    if (args.check || args.reshare) && super::tsa::asked(&args.tsa) {
        bail!("--tsa-url, --tsa-cert and --tsa-request-out are for a new seed (its record); for a record made already, use `emission-factory timestamp`");
    }
    let stamp = super::tsa::plan(&args.tsa)?;
    let beacon = match (&args.beacon_round, &args.beacon_after) {
        (Some(round), _) => Some(*round),
        (None, Some(time)) => Some(emission_factory::emission::beacon::first_round_after(
            emission_factory::emission::beacon::parse_time(time)?,
        )),
        (None, None) => None,
    };
    let ceremony = Ceremony {
        game: &game,
        stake,
        emission: number,
        emissions: &emissions,
        planned_blocks: planned,
        exposure,
        timestamp_authority_sha256: stamp.as_ref().map(super::tsa::Plan::pin),
        beacon,
    };
    let group = args.group.as_deref().map(files::group_id).transpose()?;
    let quiet = args.quiet;
    let task = task(args);
    // The key the ceremony signs with signs the run's log line too.
    let key = match &task {
        Ok(Task::New(split)) | Ok(Task::Reshare(_, split)) => Some(split.signing_key.clone()),
        _ => None,
    };
    let checking = matches!(task, Ok(Task::Check(_)));
    let outcome =
        task.and_then(|task| act(task, &emission, &ceremony, exposure, stamp.as_ref(), quiet));
    // Every run on an emission leaves a line in its audit log: the engine's rule.
    let note = emission_factory::emission::ceremony::log_seed_run(
        &folder,
        group,
        key.as_ref(),
        checking,
        outcome.as_ref().map(Option::as_ref).map_err(|e| e.as_ref()),
    )?;
    if let (Some(note), false) = (note, quiet) {
        errln!("{note}");
    }
    outcome.map(|_| Exit::Ok)
}

/// Carries out the task of a `seed` run.
fn act(
    task: Task,
    emission: &EmissionId,
    ceremony: &Ceremony<'_>,
    exposure: Exposure,
    stamp: Option<&super::tsa::Plan>,
    quiet: bool,
) -> Result<Option<emission_factory::emission::ceremony::Made>> {
    let made = match task {
        Task::New(split) => {
            let made = ceremony.new_seed(
                &split.signing_key,
                split.threshold,
                &split.recipients,
                &split.labels,
                &split.out,
            )?;
            outln!(
                "made a new seed for emission {emission} from the system's CSPRNG; it was written nowhere"
            )?;
            removed_note(&made.removed);
            print_set(&made.info, "shares")?;
            outln!(
                "record:      {} (signed), SHA-256 {}: write it in the ceremony's minutes; `verify --record-sha256` checks it",
                shown_path(&made.document),
                hex::encode(made.document_sha256)
            )?;
            if let Some(round) = ceremony.beacon {
                outln!(
                    "beacon:      round {round} of {} (chain {}), published at {}: the blocks' seed is derived from the custodians' secret and that round's signature; once it is out, fetch GET /{}/public/{round} from a drand relay to a file and give it to emit --beacon",
                    emission_factory::emission::beacon::CHAIN,
                    emission_factory::emission::beacon::QUICKNET_CHAIN_HASH,
                    emission_factory::emission::beacon::round_time_text(round).unwrap_or_default(),
                    emission_factory::emission::beacon::QUICKNET_CHAIN_HASH,
                )?;
                // The record's time may come from SOURCE_DATE_EPOCH (known-answer tests): a
                // round this machine's clock says is out already is fine only there.
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                if emission_factory::emission::beacon::round_time(round).is_some_and(|t| t <= now) {
                    errln!(
                        "warning: round {round} is already published by this machine's clock: the record's time came from SOURCE_DATE_EPOCH, so it is no proof that the seed was fixed before the round; such an emission is for tests only (unset SOURCE_DATE_EPOCH and name a future round)"
                    );
                }
            }
            outln!(
                "hand each share file to the custodian of its public key; delete this folder's copies once they are handed over"
            )?;
            if let Some(plan) = stamp {
                let folder = emission_factory::verify::folder_of(&made.document);
                let said = super::tsa::stamp(folder, &made.document, Some(&plan.pin()), plan, quiet)
                    .map_err(|e| {
                        e.context("the seed, its shares and its signed record were made (above), but the record has no trusted timestamp yet")
                    })?;
                outln!("{said}")?;
            }
            Some(made)
        }
        Task::Reshare(existing, split) => {
            let (old, made) = ceremony.reshare(
                &split.signing_key,
                &existing.shares,
                &existing.identities,
                split.threshold,
                &split.recipients,
                &split.labels,
                &split.out,
            )?;
            super::emit::warn_exposed(&old.exposed);
            outln!(
                "rebuilt the seed of emission {emission} from {} share(s) of set {} (seed_sha256 {}) and split it again",
                old.files.len(),
                hex::encode(old.share_set),
                hex::encode(old.seed_sha256)
            )?;
            removed_note(&made.removed);
            print_set(&made.info, "new shares")?;
            outln!(
                "recorded:    {} (signed), SHA-256 {}: write it in the ceremony's minutes",
                shown_path(&made.document),
                hex::encode(made.document_sha256)
            )?;
            outln!(
                "the old set {} still rebuilds the same seed: have every old share file destroyed (witnessed), or retire the seed by starting a new emission",
                hex::encode(old.share_set)
            )?;
            Some(made)
        }
        Task::Check(existing) => {
            let (_seed, info) =
                rebuild_seed_with(&existing.shares, &existing.identities, emission, exposure)?;
            super::emit::warn_exposed(&info.exposed);
            outln!(
                "the shares rebuild the seed of emission {emission} (checked against the commitment they carry; the seed is not shown)"
            )?;
            print_set(&info, "shares used")?;
            outln!(
                "compare seed_sha256 with the seed_sha256 of the emission's record and manifests to know it is the seed that made them"
            )?;
            None
        }
    };
    Ok(made)
}

/// Checks which options go together, and reads the recipients and the signing key.
fn task(args: SeedArgs) -> Result<Task> {
    let existing = || -> Result<Existing> {
        if args.share.is_empty() || args.identity.is_empty() {
            bail!(
                "--reshare and --check need the existing share files (--share FILE, repeated) and the identity files that open them (--identity FILE, repeated)"
            );
        }
        Ok(Existing {
            shares: args.share.clone(),
            identities: args.identity.clone(),
        })
    };
    if args.check {
        let given = [
            (args.shares_needed.is_some(), "--shares-needed"),
            (!args.recipient.is_empty(), "--recipient"),
            (!args.recipients_file.is_empty(), "--recipients-file"),
            (args.out.is_some(), "--out"),
            (args.signing_key.is_some(), "--signing-key"),
            (args.emission_blocks.is_some(), "--emission-blocks"),
        ];
        if let Some((_, option)) = given.iter().find(|(is, _)| *is) {
            bail!("--check writes nothing: {option} does not go with it");
        }
        return Ok(Task::Check(existing()?));
    }
    if !args.reshare && (!args.share.is_empty() || !args.identity.is_empty()) {
        bail!(
            "--share and --identity are for --reshare (split an existing seed again) or --check; a new seed needs only --recipient, --shares-needed, --out and --signing-key"
        );
    }
    if args.reshare && args.emission_blocks.is_some() {
        bail!("--emission-blocks is fixed by the emission's record when its seed is made: it does not go with --reshare");
    }
    let mut recipients = Vec::new();
    let mut labels = Vec::new();
    for text in &args.recipient {
        recipients.push(parse_recipient(text, "--recipient")?);
        labels.push(String::new());
    }
    for path in &args.recipients_file {
        for (recipient, label) in read_labelled_recipients_file(path)? {
            recipients.push(recipient);
            labels.push(label);
        }
    }
    if recipients.len() < 2 {
        bail!(
            "{} recipient(s) given: a seed is split among at least 2 custodians (--recipient age1... or --recipients-file FILE, one public key per custodian)",
            recipients.len()
        );
    }
    let threshold = args.shares_needed.ok_or_else(|| {
        anyhow!(
            "--shares-needed K is needed: how many of the {} custodians must come together to rebuild the seed",
            recipients.len()
        )
    })?;
    let out = args
        .out
        .clone()
        .ok_or_else(|| anyhow!("--out DIR is needed: the folder the share files are written to"))?;
    let Some(key_path) = &args.signing_key else {
        bail!(
            "--signing-key PEM is needed: the ceremony writes the emission's record, signed with the key its blocks will be signed with (make one with `emission-factory keygen`)"
        );
    };
    let pem = super::emit::read_secret_file(
        key_path,
        "signing key",
        emission_factory::fs::files::SECRET_LIMIT,
        args.allow_insecure_key,
    )?;
    let signing_key = emission_factory::block::keys::parse_signing_key(&pem, key_path)?;
    let split = Split {
        threshold,
        recipients,
        labels,
        out,
        signing_key,
    };
    if args.reshare {
        Ok(Task::Reshare(existing()?, split))
    } else {
        Ok(Task::New(split))
    }
}

/// Prints a share set: digests, then one line per share file. Nothing secret.
fn print_set(info: &ShareSetInfo, what: &str) -> Result<()> {
    outln!(
        "{what}: any {} of {} rebuild the seed",
        info.threshold,
        info.shares
    )?;
    outln!("seed_sha256: {}", hex::encode(info.seed_sha256))?;
    outln!("share set:   {}", hex::encode(info.share_set))?;
    for file in &info.files {
        outln!(
            "share {} of {}: {}  for {}  (file sha256 {})",
            file.index,
            info.shares,
            shown_path(&file.path),
            shown_text(&file.recipient, SHOWN_CHARS),
            hex::encode(file.file_sha256)
        )?;
    }
    Ok(())
}

/// Says which temporary files a killed run had left, now removed (as emit and seal say it).
fn removed_note(removed: &[(std::path::PathBuf, usize)]) {
    for (path, count) in removed {
        errln!(
            "note: removed {count} temporary file(s) of {} left by a run that was killed",
            shown_path(path)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use emission_factory::money::canonical;

    #[test]
    fn the_emission_id_uses_the_canonical_stake() {
        let game = Game::builtin("ruche-or").unwrap();
        assert_eq!(
            EmissionId::new(
                &game.id,
                super::super::stake(&game, Some("0.50")).unwrap(),
                3
            )
            .to_string(),
            "ruche-or/0.5/e0003"
        );
        assert_eq!(
            canonical(super::super::stake(&game, Some("2.0")).unwrap().price),
            "2"
        );
        assert!(super::super::stake(&game, None).is_err());
        assert!(super::super::stake(&game, Some("2,5")).is_err());
        let maxi = Game::builtin("maxi-ruche-or").unwrap();
        assert_eq!(
            EmissionId::new(&maxi.id, super::super::stake(&maxi, None).unwrap(), 12).to_string(),
            "maxi-ruche-or/3/e0012"
        );
    }
}
