//! `close` and `prizes-remaining`: closing an emission in the game server's database with a
//! signed final reconciliation, and the public count of the prizes remaining (the engine:
//! `emission_factory::load::close`).

use super::Exit;
use anyhow::{bail, Result};
use emission_factory::block::id::EmissionId;
use emission_factory::block::keys;
use emission_factory::load::close::{close, prizes_remaining};
use emission_factory::load::connect;
use emission_factory::untrusted::shown_path;
use std::path::PathBuf;

/// `close` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Holds the database's sales back (the sales in flight end first; new ones wait for the closing's commit, a fraction of a second), reads the final reconciliation from the database (sold and unsold per block and tier, the top prizes unsold, the payout), signs it with the emission's key, stores it and commits: from then on nothing of the emission is sold. The reconciliation is written into the emission folder (emission.closing.json and its .sig, never over another file) and recorded by a signed line of the emission's audit log; `verify` of the folder checks both. Run again on a closed emission, it writes the same file again from the database, and the log line if it is missing.\n\nExamples:\n  DATABASE_URL=postgresql://loader@/game?host=/run/postgresql \\\n    emission-factory close --key keys/signing-key.pem emissions/ruche-or/2/e0003"
)]
pub struct CloseArgs {
    /// The emission folder (<out>/<game>/<stake>/e<emission>) its blocks were loaded from: its
    /// record names the emission; the reconciliation and the log line are written there.
    #[arg(value_name = "FOLDER")]
    pub folder: PathBuf,
    /// The database, as for `load` (a member of ef_loader). Default: DATABASE_URL.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// The emission's signing key (PKCS#8 PEM): it signs the reconciliation.
    #[arg(long, value_name = "PEM")]
    pub key: PathBuf,
    /// Connect without TLS to a host other than this machine (refused otherwise: give
    /// sslmode=verify-full&sslrootcert=CA.pem in the URL).
    #[arg(long)]
    pub allow_plaintext: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `prizes-remaining` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Per prize tier of the emission's loaded blocks: the original count and how many can still be won (unsold, in a block on sale; none once the emission is closed or withdrawn). Nothing per block, nothing positional: fit for publication.\n\nExamples:\n  emission-factory prizes-remaining --database-url postgresql://game_server@/game ruche-or/2/e0003\n  emission-factory prizes-remaining --csv ruche-or/2/e0003 > remaining.csv"
)]
pub struct PrizesRemainingArgs {
    /// The emission, GAME/STAKE/eNNNN.
    #[arg(value_name = "EMISSION")]
    pub emission: EmissionId,
    /// The database, as for `load` (a member of ef_seller or ef_auditor). Default: DATABASE_URL.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// Connect without TLS to a host other than this machine (refused otherwise: give
    /// sslmode=verify-full&sslrootcert=CA.pem in the URL).
    #[arg(long)]
    pub allow_plaintext: bool,
    /// CSV (prize,original,remaining) instead of JSON.
    #[arg(long)]
    pub csv: bool,
    /// Print nothing: the exit status alone says whether the emission's counts could be read
    /// (0), or not (2, the error on standard error).
    #[arg(long, short)]
    pub quiet: bool,
}

fn url(given: &Option<String>) -> Result<String> {
    match given.clone() {
        Some(url) => Ok(url),
        None => match std::env::var("DATABASE_URL") {
            Ok(url) if !url.is_empty() => Ok(url),
            _ => bail!(
                "no database given: pass --database-url URL or set DATABASE_URL (e.g. postgresql://loader@/game?host=/run/postgresql)"
            ),
        },
    }
}

pub(super) fn run_close(args: CloseArgs) -> Result<Exit> {
    let key = keys::read_signing_key(&args.key)?;
    let mut client = connect(&url(&args.database_url)?, args.allow_plaintext)?;
    let closed = close(&mut client, &args.folder, &key)?;
    if !args.quiet {
        let r = &closed.reconciliation;
        outln!(
            "{} {} at {}: {} of {} tickets sold, {} unsold; paid {} €, {} € unsold; top prize {} €: {} unsold; payout {}\nFinal reconciliation: {} (SHA-256 {}) and its .sig; {}",
            if closed.already { "ALREADY CLOSED" } else { "CLOSED" },
            r.id,
            r.closed,
            r.sold,
            r.tickets,
            r.unsold,
            r.paid,
            r.remaining,
            r.top_prize,
            r.top_prizes_unsold,
            r.payout.as_deref().unwrap_or("none (nothing sold)"),
            shown_path(&closed.path),
            closed.sha256,
            match &closed.log_line_sha256 {
                Some(line) => format!("recorded in the audit log (line SHA-256 {line})"),
                None => "the audit log recorded it already".into(),
            }
        )?;
    }
    Ok(Exit::Ok)
}

pub(super) fn run_prizes_remaining(args: PrizesRemainingArgs) -> Result<Exit> {
    let mut client = connect(&url(&args.database_url)?, args.allow_plaintext)?;
    let remaining = prizes_remaining(&mut client, &args.emission)?;
    if args.quiet {
        return Ok(Exit::Ok);
    }
    if args.csv {
        let mut text = String::from("prize,original,remaining\n");
        for t in &remaining.tiers {
            text.push_str(&format!("{},{},{}\n", t.prize, t.original, t.remaining));
        }
        outln!("{}", text.trim_end())?;
    } else {
        outln!("{}", serde_json::to_string_pretty(&remaining)?)?;
    }
    Ok(Exit::Ok)
}
