//! `emission-factory`: parse the command line, run it, map the outcome to an exit status
//! (0 success, 1 verification failed, 2 error).

use clap::Parser;
use emission_factory::cmd::{run, Cli, Exit};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprintln!("error: {e:#}");
            Exit::Error.into()
        }
    }
}
