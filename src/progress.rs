//! How the engine says how far it got, without knowing who watches: the command line shows a
//! terminal bar (in the binary), a library user may count, most callers ignore it.

/// Receives the engine's progress, in tickets. Called from worker threads, hence `Sync`.
pub trait Progress: Sync {
    /// The work ahead is `total` tickets; called before the first [`Progress::add`] when the
    /// total is known (emit knows it, verify does not).
    fn set_total(&self, total: u64) {
        let _ = total;
    }

    /// `n` more tickets are done.
    fn add(&self, n: u64);

    /// A new stage begins (e.g. `verify block-00001.csv`, then `report block-00001.csv`): the
    /// count starts again from zero under this name.
    fn stage(&self, name: &str) {
        let _ = name;
    }
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn add(&self, _n: u64) {}
}
