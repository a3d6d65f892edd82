//! `emission-factory`: parse the command line, run it, map the outcome to an exit status
//! (0 success, 1 verification failed, 2 error). The command line lives here, in [`cmd`], not in
//! the library: the engine knows no terminal.

mod cmd;

use clap::{CommandFactory, FromArgMatches};
use cmd::{output, run, Cli, Exit};
use emission_factory::{interrupt, secrets};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    // First, before any secret is read (seed, key, share, identity): no core dump may hold one.
    if let Err(e) = secrets::no_core_dumps() {
        let _ = writeln!(
            std::io::stderr().lock(),
            "error: cannot turn core dumps off ({e}), so a crash could write the seed and keys to disk: refusing to run"
        );
        return Exit::Error.into();
    }
    // --help and --version are written with their errors checked (clap_said).
    let matches = match Cli::command().try_get_matches_from(arguments()) {
        Ok(matches) => matches,
        Err(e) => return clap_said(&e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return clap_said(&e),
    };
    // The audit log shows the parsed arguments, secrets redacted, never argv.
    emission_factory::emission::log::set_run_arguments(cmd::logged::arguments(&matches));
    if let Err(e) = interrupt::install() {
        output::write_stderr(format_args!("error: cannot catch signals: {e}"));
        return Exit::Error.into();
    }
    match run(cli) {
        Ok(exit) => exit.into(),
        // Whoever read standard output closed it: they have what they wanted (as ripgrep).
        Err(e) if output::is_broken_pipe(&e) => Exit::Ok.into(),
        Err(e) => {
            // No error message echoes a secret, whatever a lower layer put in it.
            let message = secrets::scrub(&format!("{e:#}"));
            output::write_stderr(format_args!("error: {message}"));
            // Stopped by a signal, cleanly: exit as a shell expects (130, 143, 129).
            match e
                .chain()
                .find_map(|c| c.downcast_ref::<interrupt::Interrupted>())
            {
                Some(signal) => ExitCode::from(signal.exit_code()),
                // A signal that a lower layer reported as its own error (an I/O error "stopped
                // by a signal" from a reader, say): still the signal's status, as a shell
                // expects (`unpack` said 2).
                None => match interrupt::requested() {
                    Some(signal) => ExitCode::from(interrupt::Interrupted(signal).exit_code()),
                    None => Exit::Error.into(),
                },
            }
        }
    }
}

/// The command line, with `--version --verbose` (in either order, `-V` for `--version`) read
/// as `version --verbose`: clap answers `--version` alone before it reads another option.
fn arguments() -> Vec<std::ffi::OsString> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let rest: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let asks = |names: &[&str]| rest.iter().any(|a| names.contains(a));
    if rest.len() == 2 && asks(&["--version", "-V"]) && asks(&["--verbose"]) {
        let program = args
            .first()
            .cloned()
            .unwrap_or_else(|| "emission-factory".into());
        return vec![program, "version".into(), "--verbose".into()];
    }
    args
}

/// What clap has to say instead of a command line: the help or the version on standard output
/// (status 0), checked as every output is (clap's own `exit` drops a write error: `--help
/// >/dev/full` would end with 0), or a usage error on standard error (clap's status, 2).
fn clap_said(e: &clap::Error) -> ExitCode {
    if e.use_stderr() {
        // Best effort, as every message to standard error.
        let _ = e.print();
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(Exit::Error as u8));
    }
    let printed = e.print().and_then(|()| std::io::stdout().lock().flush());
    match printed.map_err(output::StdoutError::from) {
        Ok(()) => Exit::Ok.into(),
        Err(e) if e.is_broken_pipe() => Exit::Ok.into(),
        Err(e) => {
            output::write_stderr(format_args!("error: {e}"));
            Exit::Error.into()
        }
    }
}
