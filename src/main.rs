//! `emission-factory`: parse the command line, run it, map the outcome to an exit status
//! (0 success, 1 verification failed, 2 error). The command line lives here, in [`cmd`], not in
//! the library: the engine knows no terminal.

mod cmd;

use clap::Parser;
use cmd::{output, run, Cli, Exit};
use emission_factory::interrupt;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = interrupt::install() {
        let _ = writeln!(std::io::stderr().lock(), "error: cannot catch signals: {e}");
        return Exit::Error.into();
    }
    match run(cli) {
        Ok(exit) => exit.into(),
        // Whoever read standard output closed it: they have what they wanted (as ripgrep).
        Err(e) if output::is_broken_pipe(&e) => Exit::Ok.into(),
        Err(e) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {e:#}");
            // Stopped by a signal, cleanly: exit as a shell expects (130, 143, 129).
            match e
                .chain()
                .find_map(|c| c.downcast_ref::<interrupt::Interrupted>())
            {
                Some(signal) => ExitCode::from(signal.exit_code()),
                None => Exit::Error.into(),
            }
        }
    }
}
