//! Standard output and standard error, written without panicking.
//!
//! `println!` panics when standard output is closed (`emission-factory games | head -1`) or
//! full (`>/dev/full`). The commands print through [`outln!`](crate::cmd) instead, which
//! returns the error: the binary then ends quietly with status 0 on a broken pipe, as ripgrep
//! does (whoever read the output took all they wanted), and with an error and status 2 on any
//! other failure. Messages to standard error are best effort: one that cannot be written is
//! dropped, there is nowhere else to say it.

use emission_factory::fs::output::{self as file_output, Replace};
use emission_factory::untrusted::defanged;
use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;

/// Where a command writes a file it was asked for (`--json FILE`, `--svg FILE`, `--out FILE`):
/// `-` is standard output, anything else a path written by
/// [`emission_factory::fs::output::write`] (never over a device, a FIFO, a link, nor over a
/// file without `--force`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `-`: standard output.
    Stdout,
    /// A file.
    File(PathBuf),
}

impl Target {
    /// The path, unless it is standard output.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Target::Stdout => None,
            Target::File(path) => Some(path),
        }
    }

    /// Refuses at once a path that [`Target::write`] would refuse (before long work).
    pub fn check(&self, force: bool, option: &str) -> anyhow::Result<()> {
        if let Target::File(path) = self {
            file_output::check(path, Replace::when(force))
                .map_err(|e| anyhow::anyhow!("{option} {e}"))?;
        }
        Ok(())
    }

    /// Writes `bytes` whole: to standard output, or to the file, which replaces only a
    /// regular file and only with `force`. `option` names the option in errors (`--json`).
    pub fn write(&self, bytes: &[u8], force: bool, option: &str) -> anyhow::Result<()> {
        match self {
            Target::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)
                    .and_then(|()| out.flush())
                    .map_err(|error| StdoutError { error, done: None })?;
                Ok(())
            }
            Target::File(path) => file_output::write(path, bytes, Replace::when(force))
                .map_err(|e| anyhow::anyhow!("{option} {e}")),
        }
    }
}

impl From<std::ffi::OsString> for Target {
    /// `-` is standard output, anything else a path.
    fn from(text: std::ffi::OsString) -> Target {
        if text == "-" {
            Target::Stdout
        } else {
            Target::File(PathBuf::from(text))
        }
    }
}

/// clap's parser of a [`Target`] (any bytes: a path need not be UTF-8).
pub fn target_parser() -> impl clap::builder::TypedValueParser<Value = Target> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(Target::from)
}

/// Standard output could not be written.
#[derive(Debug)]
pub struct StdoutError {
    error: io::Error,
    /// What was done all the same, said with the error (e.g. the blocks written).
    done: Option<String>,
}

impl StdoutError {
    /// True if the reader of standard output has gone (a closed pipe): not an error for a
    /// command whose work is done.
    pub fn is_broken_pipe(&self) -> bool {
        self.error.kind() == io::ErrorKind::BrokenPipe
    }

    /// Says, with the error, what was done before the output failed.
    pub fn done(mut self, what: String) -> Self {
        self.done = Some(what);
        self
    }
}

impl From<io::Error> for StdoutError {
    fn from(error: io::Error) -> Self {
        StdoutError { error, done: None }
    }
}

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The I/O error is part of the message, not a chained source: said once.
        write!(f, "cannot write to standard output: {}", self.error)?;
        if let Some(done) = &self.done {
            write!(f, "; {done}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StdoutError {}

/// True if `error`, or one of its causes, is a broken pipe on standard output.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<StdoutError>()
            .is_some_and(StdoutError::is_broken_pipe)
    })
}

/// True if what goes to standard output may be coloured: it is a terminal and the NO_COLOR
/// environment variable is not set to something (<https://no-color.org>). A file, a pipe or a
/// job's log never gets escape sequences.
pub fn stdout_colours() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stdout().is_terminal()
}

/// True if what goes to standard error may be coloured, as [`stdout_colours`] says of
/// standard output.
pub fn stderr_colours() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && io::stderr().is_terminal()
}

/// `FAILED`, in bold red if `coloured`.
fn failed_word(coloured: bool) -> String {
    if coloured {
        let red = anstyle::Style::new()
            .bold()
            .fg_color(Some(anstyle::AnsiColor::Red.into()));
        format!("{red}FAILED{red:#}")
    } else {
        "FAILED".into()
    }
}

/// The word that marks a failure on standard output: `FAILED`, in bold red when
/// [`stdout_colours`] (decided once: standard output does not change during a run).
pub fn failed() -> &'static str {
    static WORD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WORD.get_or_init(|| failed_word(stdout_colours()))
}

/// [`failed`] for standard error (`show` says there that a ticket or block fails).
pub fn failed_on_stderr() -> &'static str {
    static WORD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WORD.get_or_init(|| failed_word(stderr_colours()))
}

/// Writes one line to standard output; use [`outln!`](crate::cmd).
pub fn write_stdout(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    let mut out = io::stdout().lock();
    writeln!(out, "{args}").map_err(|error| StdoutError { error, done: None })
}

/// Set once standard output's reader is gone, for [`write_stdout_unless_gone`].
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// [`write_stdout`] for a verifying command, whose exit status is its verdict: once the reader
/// of standard output has gone (`verify | head -1`), the lines are dropped and the checks go on,
/// so that the status still says whether everything held (it said 0 for a failed block when
/// the reader left early). A write that fails otherwise (a full disk) is still an error.
pub fn write_stdout_unless_gone(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    use std::sync::atomic::Ordering;
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    match write_stdout(args) {
        Err(e) if e.is_broken_pipe() => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// Writes standard output's lines for a command whose work goes on whatever becomes of them
/// (`load`: each block is committed, then said): the first failure is kept and the lines
/// after it are dropped, and [`Lines::finish`] returns it once the work is done.
#[derive(Default)]
#[cfg(feature = "load")]
pub struct Lines {
    failed: Option<StdoutError>,
}

#[cfg(feature = "load")]
impl Lines {
    /// Writes one line, unless a line failed before.
    pub fn line(&mut self, args: fmt::Arguments<'_>) {
        if self.failed.is_none() {
            self.failed = write_stdout(args).err();
        }
    }

    /// The first failure, if any, with `done` saying what was done all the same.
    pub fn finish(self, done: impl FnOnce() -> String) -> Result<(), StdoutError> {
        match self.failed {
            Some(e) => Err(e.done(done())),
            None => Ok(()),
        }
    }
}

/// Writes one line to standard error, dropping it if it cannot be written; use
/// [`errln!`](crate::cmd). Nothing written to standard error is meant to act on a terminal:
/// every line goes through [`defanged`], the last guard behind the escaping of each value.
pub fn write_stderr(args: fmt::Arguments<'_>) {
    let line = defanged(&args.to_string());
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// Writes one line to standard error that starts with [`failed_on_stderr`] (its colour kept),
/// the rest escaped as [`write_stderr`] escapes a line.
pub fn write_stderr_failed(rest: fmt::Arguments<'_>) {
    let line = defanged(&rest.to_string());
    let _ = writeln!(io::stderr().lock(), "{}{line}", failed_on_stderr());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "load")]
    fn lines_keep_the_first_failure_for_the_end() {
        let mut lines = Lines {
            failed: Some(StdoutError::from(io::Error::from(
                io::ErrorKind::BrokenPipe,
            ))),
        };
        lines.line(format_args!("not written"));
        let e = lines.finish(|| "2 blocks loaded".into()).unwrap_err();
        assert!(e.is_broken_pipe());
        assert!(e.to_string().ends_with("; 2 blocks loaded"), "{e}");
        assert!(Lines::default().finish(|| unreachable!()).is_ok());
    }

    #[test]
    fn a_broken_pipe_is_found_under_context_and_said_once_otherwise() {
        let pipe = StdoutError {
            error: io::Error::from(io::ErrorKind::BrokenPipe),
            done: None,
        };
        let wrapped = anyhow::Error::new(pipe).context("printing the summary");
        assert!(is_broken_pipe(&wrapped));
        let full = StdoutError {
            error: io::Error::other("No space left on device"),
            done: None,
        }
        .done("the blocks were written".into());
        let full = anyhow::Error::new(full);
        assert!(!is_broken_pipe(&full));
        assert_eq!(
            format!("{full:#}"),
            "cannot write to standard output: No space left on device; the blocks were written"
        );
    }
}
