//! `report PACK`: the auditor's report of a pack, made as it streams with the checks and
//! tallies `report` makes of a folder.
//!
//! Each block's CSV is verified from its tar member on a thread of its own (as `verify PACK`
//! does: [`super::stage::stream_to`]), its tallies made in that pass
//! ([`crate::report::scan::Observer`]), and added to the report ([`crate::report::Reporter`]);
//! the emission's seal is read from the staged small files. A pack that does not read to its
//! authenticated end gives no report (an error): a report is made only of a whole pack. The
//! files the report names are the pack's members, `PACK:<game>/<stake>/e<emission:04>/<file>`.

use super::error::PackError;
use super::read::read_pack;
use super::stage::{stream_to, Staged, StagedCheck};
use crate::progress::Progress;
use crate::report::{scan, Report, ReportOptions, Reporter};
use crate::verify::{verify_block_from_observed, VerifyOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads `pack` with one of `identities` and reports on its blocks, verified with `options`;
/// the line checks run on `pool`.
pub fn report_pack(
    pack: &Path,
    identities: &[age::x25519::Identity],
    options: &VerifyOptions,
    settings: &ReportOptions,
    progress: &dyn Progress,
    pool: &rayon::ThreadPool,
) -> Result<Report, PackError> {
    let mut sink = Reporting {
        pack: crate::untrusted::shown_path(pack),
        staged: Staged::new(pack)?,
        options,
        settings,
        progress,
        pool,
        reporter: Reporter::new(),
    };
    let contents = read_pack(pack, identities, &mut sink)?;
    let Reporting {
        staged, reporter, ..
    } = sink;
    let mut report = reporter.finish(options, settings);
    // A pack is a whole sealed emission: a sealed block it lacks fails the report (the report
    // of a pack with a block left out said PASSED for the blocks it read).
    let key = match options.public_key {
        Some(key) => Some(key),
        None => {
            crate::block::keys::read_public_key(&staged.folder.join(crate::block::PUBLIC_KEY_FILE))
                .ok()
        }
    };
    if let Some(seal) = key.and_then(|k| crate::emission::seal::read_seal(&staged.folder, &k).ok())
    {
        let missing: Vec<String> = seal
            .blocks
            .iter()
            .map(|b| b.block)
            .filter(|b| !contents.blocks.contains(b))
            .map(|b| b.to_string())
            .collect();
        if !missing.is_empty() {
            let message = format!(
                "{}: the seal lists block(s) {} that the pack does not hold: a pack holds every sealed block; this one had blocks left out",
                crate::untrusted::shown_path(pack),
                missing.join(", ")
            );
            report.failed = true;
            report.failures.push(message.clone());
            if let Some(e) = report.emissions.first_mut() {
                e.problems.push(crate::problem::Problem::new(
                    crate::problem::Code::ReportSealBlocks,
                    message,
                ));
            }
        }
    }
    // What the report says of the staged files, said of the pack's members.
    let un = |t: &mut String| *t = staged.unstaged(t);
    let un_problem = |p: &mut crate::problem::Problem| {
        p.message = staged.unstaged(&p.message);
        if let Some(file) = &mut p.file {
            *file = staged.unstaged(file);
        }
    };
    report.failures.iter_mut().for_each(un);
    for b in &mut report.blocks {
        b.file = staged.shown(&b.path);
        b.problems.iter_mut().for_each(un_problem);
    }
    for e in &mut report.emissions {
        e.problems.iter_mut().for_each(un_problem);
        un(&mut e.seal_status);
    }
    Ok(report)
}

struct Reporting<'a> {
    pack: String,
    staged: Staged,
    options: &'a VerifyOptions,
    settings: &'a ReportOptions,
    progress: &'a dyn Progress,
    pool: &'a rayon::ThreadPool,
    reporter: Reporter,
}

impl StagedCheck for Reporting<'_> {
    fn staged(&mut self) -> &mut Staged {
        &mut self.staged
    }

    fn check(&mut self, block: u32, csv: PathBuf, reader: &mut dyn Read) -> Result<(), PackError> {
        self.progress
            .stage(&format!("verify and report {}", self.staged.shown(&csv)));
        let observer = scan::Observer::new();
        let (options, progress, pool) = (self.options, self.progress, self.pool);
        let verdict = stream_to(&self.pack, block, reader, |source| {
            pool.install(|| verify_block_from_observed(&csv, source, options, progress, &observer))
        })?;
        crate::interrupt::check()?;
        self.reporter
            .add(&csv, verdict, observer, self.settings)
            .map_err(PackError::Report)
    }
}
