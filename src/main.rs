//! `emission-factory`: parse the command line, run it, map the outcome to an exit status
//! (0 success, 1 verification failed, 2 error).

use clap::Parser;
use emission_factory::cmd::{output, run, Cli, Exit};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(exit) => exit.into(),
        // Whoever read standard output closed it: they have what they wanted (as ripgrep).
        Err(e) if output::is_broken_pipe(&e) => Exit::Ok.into(),
        Err(e) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {e:#}");
            Exit::Error.into()
        }
    }
}
