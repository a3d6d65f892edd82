//! One emission over many machines on a real batch engine (issue 12): the job scripts of
//! `deploy/slurm/` submitted to a real Slurm, their blocks compared byte for byte with those of
//! one `emit` run, and the faults of a distributed run (a task cancelled mid-block, overlapping
//! ranges).
//!
//! These tests need a running cluster: `.ci/run` starts a single-node one with
//! `tests/slurm/start-cluster.sh` (as root; the jobs run on this machine, so the scratch folder
//! is the "shared file system"). Without one they print why and pass.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const NO_CLUSTER: &str =
    "no Slurm cluster answers (start one with tests/slurm/start-cluster.sh DIR; .ci/run does)";

/// One test at a time: both share the cluster's two cores, and the figures they print mean
/// something only when nothing else runs.
static CLUSTER: Mutex<()> = Mutex::new(());

/// Longest wait for a job to leave the queue before the test gives up (a hang, not a timing).
const JOB_DEADLINE: Duration = Duration::from_secs(600);

/// Is a Slurm cluster answering, with a node that takes jobs? Under `CI`, a missing cluster
/// fails the test (`.ci/run` starts one); elsewhere the test prints why and passes.
fn cluster_up() -> bool {
    let up = cluster_answers();
    if !up {
        cannot_run(NO_CLUSTER);
    }
    up
}

fn cluster_answers() -> bool {
    let Ok(out) = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%T"])
        .output()
    else {
        return false;
    };
    let states = String::from_utf8_lossy(&out.stdout);
    out.status.success()
        && states
            .lines()
            .any(|s| ["idle", "mixed", "allocated"].contains(&s.trim_end_matches('*')))
}

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/slurm")
        .join(name)
        .display()
        .to_string()
}

/// A scratch folder that the jobs share with the test, with the key, the seed file and the
/// settings every job gets.
struct Batch {
    w: Workdir,
    /// Every job submitted, cancelled when the test ends (a failed test leaves nothing queued).
    jobs: std::cell::RefCell<Vec<String>>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        let jobs = self.jobs.borrow();
        if !jobs.is_empty() {
            let _ = Command::new("scancel").args(jobs.iter()).output();
        }
    }
}

/// What Slurm says of one job, or of one task of an array.
#[derive(Debug, Clone)]
struct TaskState {
    state: String,
    exit_code: String,
    reason: String,
}

impl Batch {
    fn new() -> Self {
        let w = Workdir::new();
        w.ok(&["keygen", "--out", "keys"]);
        std::fs::create_dir_all(w.path("logs")).expect("logs folder");
        let seed = w.path("seed");
        std::fs::write(&seed, format!("{SEED}\n")).expect("seed file");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&seed, std::fs::Permissions::from_mode(0o600))
            .expect("chmod 600 seed");
        Batch {
            w,
            jobs: Default::default(),
        }
    }

    fn path(&self, rel: &str) -> String {
        self.w.path(rel).display().to_string()
    }

    /// The settings of the job scripts (see their headers) for `game` at `price`, B blocks in J
    /// tasks, into `out`.
    fn settings(
        &self,
        game: &str,
        price: &str,
        b: u32,
        j: u32,
        out: &str,
    ) -> Vec<(String, String)> {
        [
            ("EF_BIN", env!("CARGO_BIN_EXE_emission-factory").to_string()),
            ("EF_GAME", game.to_string()),
            ("EF_PRICE", price.to_string()),
            ("EF_BLOCKS", b.to_string()),
            ("EF_TASKS", j.to_string()),
            ("EF_OUT", self.path(out)),
            ("EF_SIGNING_KEY", self.path("keys/signing-key.pem")),
            ("EF_PUBLIC_KEY", self.path("keys/public-key.pem")),
            ("EF_SEED_FILE", self.path("seed")),
            ("EF_THREADS", "1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// `sbatch --parsable ARGS SCRIPT` with `env` added to the environment the job inherits;
    /// returns the job id.
    fn sbatch(&self, args: &[&str], env: &[(String, String)], script_name: &str) -> String {
        let out = Command::new("sbatch")
            .current_dir(self.w.dir.path())
            .arg("--parsable")
            .args(["-o", &self.path("logs/%x-%A_%a.out")])
            .args(args)
            .arg(script(script_name))
            .envs(env.iter().map(|(k, v)| (k, v)))
            // The jobs inherit it: records dated as the reference run's (tests/common).
            .env("SOURCE_DATE_EPOCH", PINNED_TIME)
            .output()
            .expect("sbatch runs");
        assert!(
            out.status.success(),
            "sbatch {} {script_name} failed:\n{}",
            args.join(" "),
            text(&out)
        );
        let id = String::from_utf8_lossy(&out.stdout);
        let id = id.trim().split(';').next().unwrap_or_default().to_string();
        self.jobs.borrow_mut().push(id.clone());
        id
    }

    /// Waits until none of `jobs` is in the queue (pending or running).
    fn wait_gone(&self, jobs: &[&str]) {
        let started = Instant::now();
        loop {
            let out = Command::new("squeue")
                .args(["-h", "-o", "%i %T %r", "-j", &jobs.join(",")])
                .output()
                .expect("squeue runs");
            let listed = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && listed.is_empty() {
                return;
            }
            if started.elapsed() > JOB_DEADLINE {
                panic!(
                    "jobs {jobs:?} still queued after {JOB_DEADLINE:?}:\n{listed}\n{}",
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The state of each task of `job` (key: the array index, or "" for a plain job).
    fn states(&self, job: &str) -> BTreeMap<String, TaskState> {
        let out = Command::new("scontrol")
            .args(["-o", "show", "job", job])
            .output()
            .expect("scontrol runs");
        assert!(
            out.status.success(),
            "scontrol show job {job}:\n{}",
            text(&out)
        );
        let mut states = BTreeMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|f| f.strip_prefix(name).and_then(|f| f.strip_prefix('=')))
                    .unwrap_or_default()
                    .to_string()
            };
            states.insert(
                field("ArrayTaskId"),
                TaskState {
                    state: field("JobState"),
                    exit_code: field("ExitCode"),
                    reason: field("Reason"),
                },
            );
        }
        states
    }

    /// Requires every task of `job` to have completed with status 0.
    fn require_completed(&self, job: &str) {
        let states = self.states(job);
        let bad: Vec<_> = states
            .iter()
            .filter(|(_, s)| s.state != "COMPLETED" || s.exit_code != "0:0")
            .collect();
        assert!(
            !states.is_empty() && bad.is_empty(),
            "job {job}: tasks did not all complete: {bad:?}\n{}",
            self.logs()
        );
    }

    /// Every job log, for failure messages.
    fn logs(&self) -> String {
        let mut all = String::new();
        let mut names: Vec<PathBuf> = std::fs::read_dir(self.w.path("logs"))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        names.sort();
        for name in names {
            all += &format!(
                "--- {}\n{}\n",
                name.display(),
                std::fs::read_to_string(&name).unwrap_or_default()
            );
        }
        all
    }

    /// The log of one task (`%x-%A_%a.out`).
    fn log(&self, name: &str, job: &str, task: &str) -> String {
        std::fs::read_to_string(self.w.path(&format!("logs/{name}-{job}_{task}.out")))
            .unwrap_or_default()
    }

    /// One `emit` process on this machine (all its cores), the reference the jobs must match;
    /// returns its wall time.
    fn one_process(&self, game: &str, price: &str, blocks: u32, out: &str) -> Duration {
        let started = Instant::now();
        self.w.ok(&[
            "emit",
            "--game",
            game,
            "--price",
            price,
            "--blocks",
            &blocks.to_string(),
            "--emission-blocks",
            &blocks.to_string(),
            "--seed-file",
            "seed",
            "--signing-key",
            "keys/signing-key.pem",
            "--out",
            out,
            "-q",
        ]);
        started.elapsed()
    }
}

/// Requires blocks 1..=blocks of two emission folders to be the same bytes (CSV, manifest,
/// signature). The emission records differ (creation time, runs), so they are not compared.
fn same_blocks(made: &Path, reference: &Path, blocks: u32) {
    for block in 1..=blocks {
        for suffix in [".csv", ".manifest.json", ".manifest.json.sig"] {
            let name = format!("block-{block:05}{suffix}");
            assert!(
                read(&made.join(&name)) == read(&reference.join(&name)),
                "{name} made by the Slurm array differs from the one made by one process"
            );
        }
    }
}

/// Files of `dir` whose name ends with `.tmp`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// An array of 4 tasks makes 8 blocks of the test game, the dependent job seals and verifies
/// them, and they are byte-identical to one process's; the same for 2 full blocks of La ruche
/// d'or in 2 tasks. Then two jobs with overlapping ranges write into one emission: both succeed
/// (the second to reach a block waits, verifies and keeps it) and the blocks are the same.
#[test]
fn array_makes_the_same_blocks_as_one_process() {
    let _one_at_a_time = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_up() {
        return;
    }
    let batch = Batch::new();
    let mini = data("mini-ruche.toml");

    // 8 blocks of the test game in 4 tasks, then seal + verify.
    let started = Instant::now();
    // A game given as a .toml file: the seal job asks the binary for the folder.
    let env = batch.settings(&mini, "2", 8, 4, "array");
    let array = batch.sbatch(&["--array=0-3"], &env, "emit-array.sbatch");
    let seal = batch.sbatch(
        &[&format!("--dependency=afterok:{array}")],
        &env,
        "seal-verify.sbatch",
    );
    batch.wait_gone(&[&array, &seal]);
    let array_time = started.elapsed();
    batch.require_completed(&array);
    batch.require_completed(&seal);
    assert_eq!(batch.states(&array).len(), 4, "{:?}", batch.states(&array));
    let seal_log = batch.log("seal", &seal, "4294967294");
    // One `seal --public-key` run: sealed (by the last task, or here) and the folder checked
    // as a whole against the public key, each block read once after it was made.
    assert!(
        seal_log.contains("OK      emission")
            && seal_log.contains("checked against --public-key once sealed"),
        "the seal job's check did not pass:\n{}",
        batch.logs()
    );
    let one_time = batch.one_process(&mini, "2", 8, "one");
    same_blocks(
        &batch.w.path("array/mini-ruche/2/e0001"),
        &batch.w.path("one/mini-ruche/2/e0001"),
        8,
    );
    assert!(batch
        .w
        .path("array/mini-ruche/2/e0001/emission.seal.json")
        .exists());
    println!(
        "slurm: 8 blocks of the test game, array of 4 tasks + seal/verify job: {}; one process: {}",
        seconds(array_time),
        seconds(one_time)
    );

    // 2 full blocks of La ruche d'or at 0.5 € in 2 tasks of one thread each.
    let started = Instant::now();
    let env = batch.settings("ruche-or", "0.5", 2, 2, "array");
    let array = batch.sbatch(&["--array=0-1"], &env, "emit-array.sbatch");
    let seal = batch.sbatch(
        &[&format!("--dependency=afterok:{array}")],
        &env,
        "seal-verify.sbatch",
    );
    batch.wait_gone(&[&array, &seal]);
    let array_time = started.elapsed();
    batch.require_completed(&array);
    batch.require_completed(&seal);
    // The last task sealed; the seal job's `seal` checks the manifests against the seal without
    // reading the blocks (issue 23), and its `verify` reads them: once.
    let seal_log: String = std::fs::read_dir(batch.w.path("logs"))
        .expect("logs")
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("seal-{seal}_"))
        })
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        seal_log.contains("already sealed: 2 manifests match the seal"),
        "the seal job's log: {seal_log}"
    );
    let one_time = batch.one_process("ruche-or", "0.5", 2, "one");
    same_blocks(
        &batch.w.path("array/ruche-or/0.5/e0001"),
        &batch.w.path("one/ruche-or/0.5/e0001"),
        2,
    );
    println!(
        "slurm: 2 blocks of La ruche d'or, array of 2 tasks + seal/verify job: {}; one process: {}",
        seconds(array_time),
        seconds(one_time)
    );

    // Overlapping ranges: job X makes blocks 1-2 (B=2 in 1 task), job Y block 2 (B=2 in 2
    // tasks, index 1), at once, into one emission.
    let x = batch.sbatch(
        &["--array=0"],
        &batch.settings("ruche-or", "0.5", 2, 1, "overlap"),
        "emit-array.sbatch",
    );
    let y = batch.sbatch(
        &["--array=1"],
        &batch.settings("ruche-or", "0.5", 2, 2, "overlap"),
        "emit-array.sbatch",
    );
    batch.wait_gone(&[&x, &y]);
    batch.require_completed(&x);
    batch.require_completed(&y);
    let folder = batch.w.path("overlap/ruche-or/0.5/e0001");
    same_blocks(&folder, &batch.w.path("one/ruche-or/0.5/e0001"), 2);
    assert!(
        temporaries(&folder).is_empty(),
        "{:?}",
        temporaries(&folder)
    );
    batch.w.ok(&[
        "verify",
        "--public-key",
        "keys/public-key.pem",
        "-q",
        &folder.display().to_string(),
    ]);
    let both = batch.log("emit", &x, "0") + &batch.log("emit", &y, "1");
    println!(
        "slurm: overlapping ranges (blocks 1-2 and 2): both tasks exit 0, blocks verify and match; block 2 {}",
        if both.contains("already there, verified and kept") {
            "was made by one task and verified and kept by the other"
        } else {
            "was not reached by both at once this time"
        }
    );
}

/// A task cancelled in the middle of its block leaves no partial block; the dependent seal job
/// never runs; `seal` refuses, naming the missing block; resubmitting just that index completes
/// the emission, which then seals and verifies.
#[test]
fn cancelled_task_is_resubmitted_and_the_emission_completes() {
    let _one_at_a_time = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_up() {
        return;
    }
    let batch = Batch::new();
    let env = batch.settings("ruche-or", "1", 4, 4, "emissions");
    let folder = batch.w.path("emissions/ruche-or/1/e0001");
    let array = batch.sbatch(&["--array=0-3"], &env, "emit-array.sbatch");
    let seal = batch.sbatch(
        &[&format!("--dependency=afterok:{array}")],
        &env,
        "seal-verify.sbatch",
    );

    // Task 2 makes block 3: cancel it once its temporary CSV exists.
    let started = Instant::now();
    loop {
        if temporaries(&folder)
            .iter()
            .any(|n| n.starts_with(".block-00003.csv."))
        {
            break;
        }
        let task = batch.states(&array).get("2").cloned();
        if let Some(t) = task.filter(|t| !["PENDING", "RUNNING"].contains(&t.state.as_str())) {
            panic!(
                "task 2 ended before it could be cancelled: {t:?}\n{}",
                batch.logs()
            );
        }
        assert!(
            started.elapsed() < JOB_DEADLINE,
            "task 2 never started block 3"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = Command::new("scancel")
        .arg(format!("{array}_2"))
        .output()
        .expect("scancel runs");
    assert!(out.status.success(), "scancel: {}", text(&out));
    batch.wait_gone(&[&array]);

    let states = batch.states(&array);
    assert_eq!(
        states["2"].state,
        "CANCELLED",
        "{states:?}\n{}",
        batch.logs()
    );
    for task in ["0", "1", "3"] {
        assert_eq!(
            states[task].state,
            "COMPLETED",
            "{states:?}\n{}",
            batch.logs()
        );
    }
    // No partial block: no manifest for block 3 and, once the task is gone, no temporary file.
    assert!(!folder.join("block-00003.manifest.json").exists());
    let gone = Instant::now();
    while !temporaries(&folder).is_empty() && gone.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        temporaries(&folder).is_empty(),
        "temporary files left by the cancelled task: {:?}\n{}",
        temporaries(&folder),
        batch.logs()
    );
    // The seal job never runs: it waits on a dependency that can no longer be met (Slurm says
    // so at its next scheduling pass).
    let pending = Instant::now();
    let mut seal_state = batch.states(&seal)[""].clone();
    while seal_state.reason != "DependencyNeverSatisfied"
        && pending.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(200));
        seal_state = batch.states(&seal)[""].clone();
    }
    assert_eq!(
        seal_state.state,
        "PENDING",
        "{seal_state:?}\n{}",
        batch.logs()
    );
    Command::new("scancel")
        .arg(&seal)
        .status()
        .expect("scancel runs");
    // seal refuses and names the missing block.
    let refused = batch.w.run_expect(
        &[
            "seal",
            "--signing-key",
            "keys/signing-key.pem",
            &folder.display().to_string(),
        ],
        2,
    );
    assert!(
        text(&refused).contains("1 of its 4 blocks are missing: 3."),
        "{}",
        text(&refused)
    );
    assert!(!folder.join("emission.seal.json").exists());
    let killed_log = batch.log("emit", &array, "2");

    // Resubmit just index 2, with the same settings; then seal and verify.
    let again = batch.sbatch(&["--array=2"], &env, "emit-array.sbatch");
    let seal = batch.sbatch(
        &[&format!("--dependency=afterok:{again}")],
        &env,
        "seal-verify.sbatch",
    );
    batch.wait_gone(&[&again, &seal]);
    batch.require_completed(&again);
    batch.require_completed(&seal);
    assert!(folder.join("emission.seal.json").exists());
    assert!(batch
        .log("emit", &again, "2")
        .contains("block 00003: written"));
    batch.w.ok(&[
        "verify",
        "--public-key",
        "keys/public-key.pem",
        "-q",
        &folder.display().to_string(),
    ]);
    println!(
        "slurm: task 2 cancelled mid-block 3 ({}, exit {}); no partial block; the seal job stayed pending ({}); seal refused naming block 3; resubmitting --array=2 completed, sealed and verified the emission.\n  cancelled task's log: {}",
        states["2"].state,
        states["2"].exit_code,
        seal_state.reason,
        killed_log.trim().replace('\n', " | ")
    );
}

/// Sets one setting of `env`, replacing the one there.
fn set(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_string(), value.to_string()));
}

/// Every entry under `dir`, for "nothing was made" messages.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().display().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The jobs take the price as emit does (issue 19, item 8): `EF_PRICE=2.0` is the stake 2, and
/// the seal job seals and verifies the folder emit wrote, `.../2/e0001` (it asks the binary,
/// `emit --print-folder`, instead of building the path itself), for a built-in game and for a
/// game given as a .toml file (no EF_FOLDER needed).
#[test]
fn a_price_written_as_emit_takes_it_seals_the_folder_emit_wrote() {
    let _one_at_a_time = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_up() {
        return;
    }
    let batch = Batch::new();
    let mini = data("mini-ruche.toml");
    let runs = [
        (
            "ruche-or",
            "2.0",
            2,
            2,
            "builtin",
            "builtin/ruche-or/2/e0001",
        ),
        (
            mini.as_str(),
            "2.00",
            4,
            2,
            "toml",
            "toml/mini-ruche/2/e0001",
        ),
    ];
    let mut jobs = Vec::new();
    for (game, price, b, j, out, _) in runs {
        let env = batch.settings(game, price, b, j, out);
        let array = batch.sbatch(
            &[&format!("--array=0-{}", j - 1)],
            &env,
            "emit-array.sbatch",
        );
        let seal = batch.sbatch(
            &[&format!("--dependency=afterok:{array}")],
            &env,
            "seal-verify.sbatch",
        );
        jobs.push((array, seal));
    }
    let all: Vec<&str> = jobs
        .iter()
        .flat_map(|(a, s)| [a.as_str(), s.as_str()])
        .collect();
    batch.wait_gone(&all);
    for ((array, seal), (_, _, b, _, _, folder)) in jobs.iter().zip(runs) {
        batch.require_completed(array);
        batch.require_completed(seal);
        let folder = batch.w.path(folder);
        assert!(
            folder.join("emission.seal.json").exists(),
            "{} is not sealed\n{}",
            folder.display(),
            batch.logs()
        );
        let seal_log = batch.log("seal", seal, "4294967294");
        assert!(
            seal_log.contains(&format!("sealing and checking {}", folder.display()))
                && seal_log.contains("OK      emission")
                && seal_log.contains("checked against --public-key once sealed")
                && folder.join(format!("block-{b:05}.manifest.json")).exists(),
            "the seal job did not seal and verify {}:\n{}",
            folder.display(),
            batch.logs()
        );
    }
    // Only the canonical folders were made.
    for (stake_dir, only) in [("builtin/ruche-or", "2"), ("toml/mini-ruche", "2")] {
        let made = entries(&batch.w.path(stake_dir));
        assert_eq!(
            made,
            [batch.path(&format!("{stake_dir}/{only}"))],
            "{}",
            batch.logs()
        );
    }
    println!("slurm: EF_PRICE=2.0 (ruche-or) and 2.00 (a .toml game): arrays and seal jobs complete, .../2/e0001 sealed and verified");
}

/// A number setting with a leading zero (`EF_BLOCKS=010`, which bash reads as octal 8 and emit
/// as 10) or that is not a number is refused by the job scripts, naming the setting, before
/// anything is made (issue 19, item 8).
#[test]
fn numbers_with_leading_zeros_or_not_numbers_are_refused_before_anything_is_made() {
    let _one_at_a_time = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    if !cluster_up() {
        return;
    }
    let batch = Batch::new();
    let mini = data("mini-ruche.toml");
    // (script, setting, value, the message's words)
    let cases = [
        (
            "emit-array.sbatch",
            "EF_BLOCKS",
            "010",
            "EF_BLOCKS=010 has a leading zero",
        ),
        (
            "emit-array.sbatch",
            "EF_EMISSION",
            "010",
            "EF_EMISSION=010 has a leading zero",
        ),
        (
            "emit-array.sbatch",
            "EF_TASKS",
            "02",
            "EF_TASKS=02 has a leading zero",
        ),
        (
            "emit-array.sbatch",
            "EF_EMISSION",
            "3x",
            "EF_EMISSION=3x is not a whole number",
        ),
        (
            "seal-verify.sbatch",
            "EF_EMISSION",
            "010",
            "EF_EMISSION=010 has a leading zero",
        ),
        (
            "seal-verify.sbatch",
            "EF_EMISSION",
            "3x",
            "EF_EMISSION=3x is not a whole number",
        ),
        (
            "seal-verify.sbatch",
            "EF_THREADS",
            "01",
            "EF_THREADS=01 has a leading zero",
        ),
    ];
    let mut jobs = Vec::new();
    for (i, (script_name, key, value, _)) in cases.iter().enumerate() {
        let out = format!("case{i}");
        let mut env = batch.settings(&mini, "2", 4, 2, &out);
        set(&mut env, key, value);
        let array = if *script_name == "emit-array.sbatch" {
            "--array=0-1"
        } else {
            "--array=0"
        };
        jobs.push(batch.sbatch(&[array], &env, script_name));
    }
    batch.wait_gone(&jobs.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, ((script_name, _, _, message), job)) in cases.iter().zip(&jobs).enumerate() {
        let states = batch.states(job);
        let name = script_name.trim_end_matches(".sbatch");
        let name = if name == "emit-array" { "emit" } else { "seal" };
        for (task, state) in &states {
            assert!(
                state.state == "FAILED" && state.exit_code == "2:0",
                "{script_name} with {message}: task {task} was not refused (exit 2): {state:?}\n{}",
                batch.logs()
            );
            let log = batch.log(name, job, task);
            assert!(
                log.contains(message) && log.contains("write it"),
                "{script_name}, task {task}: the log does not say `{message}`:\n{log}"
            );
        }
        assert!(!states.is_empty(), "job {job}: no task");
        let out = batch.w.path(&format!("case{i}"));
        assert!(
            !out.exists(),
            "{script_name} with {message} made {:?}",
            entries(&out)
        );
    }
    println!("slurm: EF_BLOCKS=010, EF_EMISSION=010 and 3x, EF_TASKS=02, EF_THREADS=01 refused by the job scripts (exit 2, naming the setting), nothing made");
}

/// The shell script of a Kubernetes Job (`deploy/k8s/NAME`): the literal block under the
/// container's `args:` (`- |`), without its indentation.
fn k8s_script(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/k8s")
        .join(name);
    let yaml = std::fs::read_to_string(&path).expect("the Job file is readable");
    let lines: Vec<&str> = yaml.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let at = lines
        .iter()
        .position(|l| l.trim() == "args:")
        .and_then(|a| (a + 1..lines.len()).find(|&i| lines[i].trim() == "- |"))
        .unwrap_or_else(|| panic!("{}: no `args:` with a `- |` block", path.display()));
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > indent(lines[at]))
        .copied()
        .collect();
    let cut = body
        .iter()
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| indent(l));
    body.iter()
        .map(|l| l.get(cut..).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a Kubernetes Job's script with `sh` and `env`, with `emission-factory` on the PATH a
/// stand-in that runs the real binary for `emit --print-folder` and records any other call in
/// `calls`; returns the status, the output and the calls.
fn run_k8s(w: &Workdir, name: &str, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let bin = w.path("bin");
    std::fs::create_dir_all(&bin).expect("bin folder");
    let calls = w.path("calls");
    let _ = std::fs::remove_file(&calls);
    let stub = bin.join("emission-factory");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\nif [ \"$1 $2\" = \"emit --print-folder\" ]; then exec '{}' \"$@\"; fi\nprintf '%s\\n' \"$*\" >> '{}'\n",
            env!("CARGO_BIN_EXE_emission-factory"),
            calls.display()
        ),
    )
    .expect("stand-in binary");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(k8s_script(name))
        .current_dir(w.dir.path())
        .env("PATH", path)
        .envs(env.iter().copied())
        .output()
        .expect("sh runs");
    (
        out.status.code(),
        text(&out),
        std::fs::read_to_string(&calls).unwrap_or_default(),
    )
}

/// The Kubernetes Jobs of deploy/k8s (documented, not run on a cluster here) have the scripts
/// of the Slurm ones, run here with `sh` and a stand-in binary: numbers with leading zeros are
/// refused naming the setting, and the seal Job seals the folder the binary names (`emit
/// --print-folder`: `PRICE=2.0` is `.../2/...`), not one it builds (issue 19, item 8).
#[test]
fn k8s_jobs_refuse_leading_zeros_and_ask_the_binary_for_the_folder() {
    let w = Workdir::new();
    let emit = [
        ("GAME", "ruche-or"),
        ("PRICE", "2"),
        ("EMISSION", "3"),
        ("B", "40"),
        ("J", "8"),
        ("JOB_COMPLETION_INDEX", "2"),
    ];
    let (code, said, calls) = run_k8s(&w, "emit-indexed-job.yaml", &emit);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        calls.starts_with("emit --game ruche-or --price 2 --emission 3 --first-block 11 --blocks 5 --emission-blocks 40 "),
        "{calls}"
    );
    for (key, value, message) in [
        ("B", "010", "B=010 has a leading zero"),
        ("J", "08", "J=08 has a leading zero"),
        ("EMISSION", "03", "EMISSION=03 has a leading zero"),
        ("B", "4O", "B=4O is not a whole number"),
    ] {
        let mut env = emit.to_vec();
        env.retain(|(k, _)| *k != key);
        env.push((key, value));
        let (code, said, calls) = run_k8s(&w, "emit-indexed-job.yaml", &env);
        assert_eq!(code, Some(2), "{key}={value}: {said}");
        assert!(said.contains(message), "{key}={value}: {said}");
        assert!(calls.is_empty(), "{key}={value} still ran: {calls}");
    }

    let seal = [("GAME", "ruche-or"), ("PRICE", "2.0"), ("EMISSION", "10")];
    let (code, said, calls) = run_k8s(&w, "seal-job.yaml", &seal);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        calls,
        "seal --signing-key /secrets/signing-key.pem --public-key /secrets/public-key.pem /shared/emissions/ruche-or/2/e0010\n",
        "{said}"
    );
    let (code, said, calls) = run_k8s(
        &w,
        "seal-job.yaml",
        &[("GAME", "ruche-or"), ("PRICE", "2"), ("EMISSION", "010")],
    );
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("EMISSION=010 has a leading zero"), "{said}");
    assert!(calls.is_empty(), "{calls}");
}
