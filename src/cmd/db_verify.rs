//! `db-verify`: checks the blocks loaded in a database again, from their rows alone, against
//! the signed manifests stored at load time (the engine: `emission_factory::load::db_verify`).

use super::{grouped, Exit};
use anyhow::{bail, Result};
use emission_factory::block::id::EmissionId;
use emission_factory::block::keys;
use emission_factory::load::connect;
use emission_factory::load::db_verify::{db_verify, DbVerifyOptions};
use std::path::PathBuf;
use std::time::Instant;

/// `db-verify` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 every block is as signed, 1 a block was changed in the database (every changed row is named), 2 error.\n\nExamples:\n  DATABASE_URL=postgresql://auditor@/game?host=/run/postgresql \\\n    emission-factory db-verify --public-key keys/public-key.pem ruche-or/2/e0003\n  emission-factory db-verify --database-url postgresql://auditor@/game --public-key keys/public-key.pem"
)]
pub struct DbVerifyArgs {
    /// The emission to check, GAME/STAKE/eNNNN as `load` names it (e.g. ruche-or/2/e0001);
    /// default: every emission of the database.
    #[arg(value_name = "EMISSION")]
    pub emission: Option<EmissionId>,
    /// The database, as libpq reads it (as for `load`); a member of ef_auditor suffices.
    /// Default: the DATABASE_URL environment variable.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// The public key (SPKI PEM) every stored manifest must be signed with: the key you trust.
    #[arg(long, value_name = "PEM")]
    pub public_key: PathBuf,
    /// Connect without TLS to a host other than this machine (refused otherwise: give
    /// sslmode=verify-full&sslrootcert=CA.pem in the URL).
    #[arg(long)]
    pub allow_plaintext: bool,
    /// The schema the tables were loaded into (the loading role's current schema); every name
    /// is read in it, never through the session's search_path.
    #[arg(long, value_name = "NAME", default_value = "public")]
    pub schema: String,
    /// Print only the blocks changed in the database and the summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

pub(super) fn run(args: DbVerifyArgs) -> Result<Exit> {
    let url = match args.database_url.clone() {
        Some(url) => url,
        None => match std::env::var("DATABASE_URL") {
            Ok(url) if !url.is_empty() => url,
            _ => bail!(
                "no database given: pass --database-url URL or set DATABASE_URL (e.g. postgresql://auditor@/game?host=/run/postgresql)"
            ),
        },
    };
    let options = DbVerifyOptions {
        public_key: keys::read_public_key(&args.public_key)?,
        emission: args.emission,
        url: url.clone(),
        allow_plaintext: args.allow_plaintext,
        schema: args.schema.clone(),
    };
    let mut client = connect(&url, args.allow_plaintext)?;
    let start = Instant::now();
    let verdicts = db_verify(&mut client, &options)?;
    let seconds = start.elapsed().as_secs_f64();
    let mut failed = 0usize;
    let mut tickets = 0u64;
    for v in &verdicts {
        tickets += v.tickets;
        if v.ok() {
            if args.quiet {
                continue;
            }
            outln!(
                "OK      {} block {}: {} tickets ({} sold): hashes, serials, Merkle root, tiers and sales as signed",
                v.emission,
                v.block,
                grouped(v.tickets),
                grouped(v.sold)
            )?;
        } else {
            failed += 1;
            outln!(
                "{}  {} block {}: changed in the database:\n  - {}{}",
                super::output::failed(),
                v.emission,
                v.block,
                v.problems.join("\n  - "),
                match v.unlisted {
                    0 => String::new(),
                    n => format!("\n  - ... and {n} more problems"),
                }
            )?;
        }
        for note in &v.notes {
            outln!("  note: {note}")?;
        }
    }
    outln!(
        "{} block(s), {} tickets checked in {seconds:.2} s ({} tickets/s): {} as signed, {failed} changed",
        verdicts.len(),
        grouped(tickets),
        grouped((tickets as f64 / seconds.max(1e-9)) as u64),
        verdicts.len() - failed
    )?;
    Ok(if failed == 0 { Exit::Ok } else { Exit::Failed })
}
