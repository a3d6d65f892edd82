//! Stopping cleanly on SIGINT, SIGTERM and SIGHUP.
//!
//! The binary calls [`install`]; from then on a signal only raises a flag. The long loops of the
//! engine (making a block, verifying one, waiting for a lock) call [`check`] at least every few
//! tenths of a second and return [`Interrupted`]; the error unwinds through the code that owns
//! the temporary files, which removes them as it is dropped, and the binary exits with 128 + the
//! signal's number (130, 143, 129), as a shell would. A second signal while the first is being
//! handled ends the process at once (its temporary files are then removed by the next run).
//!
//! The first signal ends the process promptly even where no loop checks the flag (a system
//! call that waits, a library's long computation): a watchdog thread, woken by the signal,
//! gives the run [`GRACE`] to stop on its own, then ends it with the same status. It waits
//! while a [`Critical`] section is open (the few renames that publish a block, a record or a
//! seal), so that a publication is never cut in half; what a killed run leaves is temporary
//! files, which the next run that takes the lock removes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use thiserror::Error;

/// How long a run has, after the first signal, to stop on its own before the watchdog ends it.
pub const GRACE: Duration = Duration::from_secs(3);

/// Critical sections open now (see [`Critical`]).
static CRITICAL: AtomicUsize = AtomicUsize::new(0);

/// While one is alive, the watchdog does not end the process: hold one across a sequence of
/// renames that must not be cut in half. Keep it short (no computation, no waiting).
#[must_use = "the section ends when this is dropped"]
pub struct Critical(());

/// Opens a critical section, closed when the returned guard is dropped.
pub fn critical() -> Critical {
    CRITICAL.fetch_add(1, Ordering::SeqCst);
    Critical(())
}

impl Drop for Critical {
    fn drop(&mut self) {
        CRITICAL.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The signal received, 0 if none.
static SIGNAL: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

fn flag() -> &'static Arc<AtomicUsize> {
    SIGNAL.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// The run was stopped by a signal, after cleaning up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("stopped by {}: no partial file was left; run the same command again to finish", signal_name(.0))]
pub struct Interrupted(pub i32);

impl Interrupted {
    /// The exit status a shell gives a process ended by this signal: 128 + its number.
    pub fn exit_code(&self) -> u8 {
        u8::try_from(128 + self.0).unwrap_or(130)
    }
}

fn signal_name(signal: &i32) -> String {
    match *signal {
        signal_hook::consts::SIGINT => "SIGINT (Ctrl-C)".into(),
        signal_hook::consts::SIGTERM => "SIGTERM".into(),
        signal_hook::consts::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP: the first raises the flag, a second one ends the process.
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let seen = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // Registered first, so that it sees the flag as it was before this signal.
        signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, seen.clone())?;
        signal_hook::flag::register(signal, seen.clone())?;
        signal_hook::flag::register_usize(signal, flag().clone(), signal as usize)?;
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signal watchdog".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                std::thread::sleep(GRACE);
                while CRITICAL.load(Ordering::SeqCst) > 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "error: stopped by {} after {} s: the run did not stop on its own; any temporary file it left is removed by the next run",
                    signal_name(&signal),
                    GRACE.as_secs()
                );
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// The signal received so far, if any.
pub fn requested() -> Option<i32> {
    match flag().load(Ordering::SeqCst) {
        0 => None,
        n => Some(i32::try_from(n).unwrap_or(signal_hook::consts::SIGTERM)),
    }
}

/// `Err(Interrupted)` once a signal has been received.
pub fn check() -> Result<(), Interrupted> {
    match requested() {
        None => Ok(()),
        Some(signal) => Err(Interrupted(signal)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_those_of_a_shell() {
        assert_eq!(Interrupted(2).exit_code(), 130);
        assert_eq!(Interrupted(15).exit_code(), 143);
        assert_eq!(Interrupted(1).exit_code(), 129);
        assert!(Interrupted(2).to_string().contains("SIGINT"));
    }
}
