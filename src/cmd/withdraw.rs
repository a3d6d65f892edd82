//! `withdraw`: writes a signed withdrawal record of a block, or of the whole emission, into
//! the emission folder and logs it (the engine: `emission_factory::emission::withdrawal`).
//! Available without the `load` feature: it runs where the emission's key is kept.

use super::Exit;
use anyhow::Result;
use emission_factory::block::keys;
use emission_factory::emission::withdrawal::withdraw;
use emission_factory::untrusted::{shown_path, shown_text};
use std::path::PathBuf;

/// `withdraw` arguments.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The record (withdrawal-NNNN.json and its .sig, the next free number; an earlier one is never overwritten) is signed with the emission's key and recorded in its audit log. It takes effect in a game server's database when `load` is run on the folder again (the blocks loaded are skipped, the record applied): from then on the sale function sells nothing of what it withdraws; past sales are not changed.\n\nExamples:\n  emission-factory withdraw --key keys/signing-key.pem --block 3 --reason \"misprint found by the printer, ticket 0412\" emissions/ruche-or/2/e0003\n  emission-factory withdraw --key keys/signing-key.pem --reason \"game stopped by decision 2026-17\" emissions/ruche-or/2/e0003"
)]
pub struct WithdrawArgs {
    /// The emission folder (<out>/<game>/<stake>/e<emission>).
    #[arg(value_name = "FOLDER")]
    pub folder: PathBuf,
    /// The emission's signing key (PKCS#8 PEM): the record is signed with it, and the
    /// emission's record must verify with it.
    #[arg(long, value_name = "PEM")]
    pub key: PathBuf,
    /// Why (one line of plain text, at most 1000 characters): signed, logged and stored in
    /// the database.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// The block to withdraw; without it, the whole emission.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=99_999))]
    pub block: Option<u32>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

pub(super) fn run(args: WithdrawArgs) -> Result<Exit> {
    let key = keys::read_signing_key(&args.key)?;
    let written = withdraw(&args.folder, &key, args.block, &args.reason)?;
    if !args.quiet {
        let w = &written.found.withdrawal;
        outln!(
            "WITHDRAWN {} of {}: {} (SHA-256 {}), signed and logged; reason: {}\nRun `emission-factory load` on {} to apply it in the game server's database.",
            w.what(),
            w.id,
            shown_path(&written.found.path),
            written.found.sha256,
            shown_text(&w.reason, 1000),
            shown_path(&args.folder)
        )?;
    }
    Ok(Exit::Ok)
}
