//! `completions` and `man`: shell completions and manual pages, generated from the command
//! line's own definition (clap_complete, clap_mangen), so they never drift from it.

use super::{Cli, Exit};
use anyhow::{Context, Result};
use clap::CommandFactory;
use emission_factory::fs::output::{self, Replace};
use emission_factory::untrusted::shown_path;
use std::path::{Path, PathBuf};

/// `completions` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory completions bash > /etc/bash_completion.d/emission-factory
  emission-factory completions zsh > ~/.zfunc/_emission-factory
  emission-factory completions fish > ~/.config/fish/completions/emission-factory.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
    /// Accepted as on every command; the script is all `completions` prints.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `man` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  emission-factory man | man -l -
  emission-factory man --out /usr/local/share/man/man1")]
pub struct ManArgs {
    /// Folder to write the pages into: emission-factory.1 and one emission-factory-<command>.1
    /// per command. Without it, the main page goes to standard output.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace pages already in DIR (only regular files are ever replaced, never a link).
    #[arg(long, requires = "out")]
    pub force: bool,
    /// No confirmation on standard error of the pages written.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The program's name, as installed and as the completions and pages call it.
const NAME: &str = "emission-factory";

pub(super) fn run(args: CompletionsArgs) -> Result<Exit> {
    let mut script = Vec::new();
    // Into memory first: clap_complete panics on a write error, and a closed or full standard
    // output must end as any other output does (quietly, or with status 2).
    clap_complete::generate(args.shell, &mut Cli::command(), NAME, &mut script);
    let mut text = String::from_utf8_lossy(&script).into_owned();
    if args.shell == clap_complete::Shell::Bash {
        text = bash_fixed(&text);
    }
    outln!("{}", text.trim_end_matches('\n'))?;
    Ok(Exit::Ok)
}

/// clap_complete's bash script with its states spelt one way (clap issues 6386, 6421, 6529,
/// open in the 4.6.12 we use). The loop over the words names the state of `emission-factory
/// verify` `emission__factory__subcmd__verify` (the program's `-` made `__`), but the arms
/// that list each command's options were labelled `emission__subcmd__factory__subcmd__verify`
/// (its `-` made `__subcmd__`): no arm matched, and no option of any subcommand was ever
/// completed. The arms are relabelled as the loop spells them; once clap_complete spells them
/// so itself, this changes nothing.
fn bash_fixed(script: &str) -> String {
    const SEP: &str = "__subcmd__";
    let wrong = NAME.replace('-', SEP);
    let right = NAME.replace('-', "__");
    let mut out = String::with_capacity(script.len());
    for line in script.split_inclusive('\n') {
        let label = line.trim_start();
        // Only an arm's label: `<state>)` on a line of its own, the state being the program's.
        let is_arm = label
            .strip_prefix(wrong.as_str())
            .is_some_and(|rest| rest.starts_with(SEP) || rest.starts_with(')'))
            && label.trim_end().ends_with(')');
        if is_arm {
            out.push_str(&line[..line.len() - label.len()]);
            out.push_str(&right);
            out.push_str(&label[wrong.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

pub(super) fn run_man(args: ManArgs) -> Result<Exit> {
    let command = Cli::command();
    match args.out {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot make folder {}", dir.display()))?;
            // As clap_mangen::generate_to: one page per command, `help` left out.
            let mut command = command.disable_help_subcommand(true);
            command.build();
            write_pages(&command, &dir, args.force)
                .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
            if !args.quiet {
                errln!("manual pages written to {}", shown_path(&dir));
            }
        }
        None => {
            let page = page(&command).context("cannot render the manual page")?;
            let text = String::from_utf8_lossy(&page);
            outln!("{}", text.trim_end_matches('\n'))?;
        }
    }
    Ok(Exit::Ok)
}

/// Writes the page of `command` and of each of its subcommands into `dir`: every page's path
/// is checked first, so that a refusal (a FIFO, a link, a file without --force at one page's
/// name) writes no page at all (it wrote the pages before the refused one).
fn write_pages(command: &clap::Command, dir: &Path, force: bool) -> Result<()> {
    let mut pages = Vec::new();
    collect_pages(command, dir, &mut pages)?;
    for (path, _) in &pages {
        output::check(path, Replace::when(force))
            .map_err(|e| anyhow::anyhow!("{e}; no page was written"))?;
    }
    for (path, bytes) in &pages {
        output::write(path, bytes, Replace::when(force)).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}

/// The path in `dir` and the bytes of the page of `command` and of each of its subcommands.
fn collect_pages(
    command: &clap::Command,
    dir: &Path,
    pages: &mut Vec<(std::path::PathBuf, Vec<u8>)>,
) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect_pages(sub, dir, pages)?;
    }
    let name = clap_mangen::Man::new(command.clone()).get_filename();
    pages.push((dir.join(name), page(command)?));
    Ok(())
}

/// One manual page: clap_mangen's sections, with the examples of `--help` as an EXAMPLES
/// section set line by line (clap_mangen fills them as a paragraph, which breaks the command
/// lines).
fn page(command: &clap::Command) -> std::io::Result<Vec<u8>> {
    let examples = command.get_after_help().map(|t| t.to_string());
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if command.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    if let Some(text) = examples {
        let mut roff = roff::Roff::new();
        roff.control("SH", ["EXAMPLES"]).control("nf", []);
        for line in text.lines().filter(|l| l.trim() != "Examples:") {
            roff.text([roff::roman(line)]);
        }
        roff.control("fi", []);
        roff.to_writer(&mut out)?;
    }
    environment_section(&mut out)?;
    see_also_section(command, &mut out)?;
    if command.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// The environment variables the program reads, and those its job scripts (deploy/slurm/)
/// read: every page has them, as git's pages do.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "DATABASE_URL",
        "load: the database when --database-url is not given, as libpq reads it \
         (postgresql://USER@HOST/DATABASE, ?host=/run/postgresql for a Unix socket); better \
         than --database-url for a password, which then stays out of the process list.",
    ),
    (
        "NO_COLOR",
        "set and not empty: no colour, even on a terminal (show's drawing with --color auto, \
         verify's FAILED). Colours are never written when standard output is not a terminal.",
    ),
    (
        "EF_BIN, EF_GAME, EF_PRICE, EF_EMISSION, EF_BLOCKS, EF_TASKS, EF_OUT, EF_SIGNING_KEY, EF_THREADS",
        "read by the Slurm job scripts deploy/slurm/emit-array.sbatch and seal-verify.sbatch, \
         not by the program: the binary, --game, --price, --emission, --emission-blocks, the \
         number of array tasks, --out, --signing-key and --threads of each emit, seal and verify.",
    ),
    (
        "EF_SHARES, EF_IDENTITIES, EF_SEED_FILE",
        "the job scripts' seed: ':'-separated custody share files and the age identity files \
         that open them (a production emission), or a seed file in clear (a test emission).",
    ),
    (
        "EF_PUBLIC_KEY",
        "seal-verify.sbatch: the public key (PEM) the blocks must be signed with (verify --public-key).",
    ),
    (
        "EF_FOLDER",
        "refused by seal-verify.sbatch: the folder sealed is the one emit names (emit --print-folder).",
    ),
];

fn environment_section(out: &mut Vec<u8>) -> std::io::Result<()> {
    let mut roff = roff::Roff::new();
    roff.control("SH", ["ENVIRONMENT"]);
    for (names, text) in ENVIRONMENT {
        roff.control("TP", [])
            .text([roff::bold(*names)])
            .text([roff::roman(*text)]);
    }
    roff.to_writer(out)
}

/// Other programs a command works with, by command.
const SEE_ALSO_TOOLS: &[(&str, &[&str])] = &[
    ("keygen", &["openssl(1)", "sha256sum(1)"]),
    ("seed", &["age(1)", "age-keygen(1)", "gfcombine(1)"]),
    ("verify", &["openssl(1)", "sha256sum(1)"]),
    ("load", &["psql(1)", "pg_isready(1)"]),
    ("version", &["sha256sum(1)"]),
    ("completions", &["bash(1)"]),
];

/// The main page names every command's page; a command's page names the main page, the
/// commands beside it, and the programs it works with. The formats are in docs/.
fn see_also_section(command: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let name = command.get_name();
    let mut pages: Vec<String> = Vec::new();
    if name == NAME {
        pages.extend(
            command
                .get_subcommands()
                .filter(|s| !s.is_hide_set() && s.get_name() != "help")
                .map(|s| format!("{NAME}-{}(1)", s.get_name())),
        );
    } else {
        pages.push(format!("{NAME}(1)"));
        let related: &[&str] = match name {
            "emit" => &["verify", "seal", "seed", "keygen"],
            "verify" => &["report", "prove", "seal"],
            "report" => &["verify", "show"],
            "seal" => &["emit", "verify"],
            "load" => &["verify"],
            "keygen" => &["emit", "seed"],
            "seed" => &["emit", "verify"],
            "prove" | "verify-proof" => &["prove", "verify-proof", "verify"],
            "show" => &["report", "verify"],
            "completions" | "man" => &["completions", "man"],
            _ => &[],
        };
        pages.extend(
            related
                .iter()
                .filter(|r| **r != name)
                .map(|r| format!("{NAME}-{r}(1)")),
        );
        for (command, tools) in SEE_ALSO_TOOLS {
            if *command == name {
                pages.extend(tools.iter().map(|t| t.to_string()));
            }
        }
    }
    let mut roff = roff::Roff::new();
    roff.control("SH", ["SEE ALSO"])
        .text([roff::roman(pages.join(", "))])
        .control("PP", []);
    roff.text([roff::roman(
        "The specification (docs/SPEC.md) and the file formats (docs/FORMAT.md) are in the source.",
    )]);
    roff.to_writer(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command, at every level, gives examples in its --help; and clap's own checks of
    /// the definition hold.
    #[test]
    fn every_command_has_examples() {
        fn walk(command: &clap::Command, path: &str) {
            let help = command
                .get_after_long_help()
                .or(command.get_after_help())
                .map(|t| t.to_string())
                .unwrap_or_default();
            // An "Examples:" section, after what the command checks or means if it says so.
            let examples = help
                .split_once("Examples:\n")
                .filter(|(before, _)| before.is_empty() || before.ends_with('\n'))
                .map(|(_, after)| after.trim_start());
            assert!(
                examples.is_some_and(|e| e.contains("emission-factory")),
                "{path} has no examples"
            );
            for sub in command.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        let mut command = Cli::command().disable_help_subcommand(true);
        command.build();
        command.clone().debug_assert();
        walk(&command, NAME);
    }

    /// `-q`/`--quiet` on every command (every leaf: `lab raw`, not `lab`).
    #[test]
    fn every_command_takes_quiet() {
        fn walk(command: &clap::Command, path: &str, without: &mut Vec<String>) -> usize {
            if command.has_subcommands() {
                return command
                    .get_subcommands()
                    .map(|sub| walk(sub, &format!("{path} {}", sub.get_name()), without))
                    .sum();
            }
            let quiet = command.get_arguments().find(|a| a.get_id() == "quiet");
            if !quiet.is_some_and(|a| a.get_short() == Some('q') && a.get_long() == Some("quiet")) {
                without.push(path.to_string());
            }
            1
        }
        let mut command = Cli::command().disable_help_subcommand(true);
        command.build();
        let mut without = Vec::new();
        assert!(walk(&command, "", &mut without) > 14);
        assert!(without.is_empty(), "no -q/--quiet on {without:?}");
    }

    /// Every arm of the bash script's second `case` is a state its loop can reach.
    #[test]
    fn bash_arms_are_states_the_loop_sets() {
        let mut script = Vec::new();
        clap_complete::generate(
            clap_complete::Shell::Bash,
            &mut Cli::command(),
            NAME,
            &mut script,
        );
        let script = bash_fixed(&String::from_utf8(script).unwrap());
        let set: std::collections::BTreeSet<&str> = script
            .lines()
            .filter_map(|l| l.trim().strip_prefix("cmd=\""))
            .filter_map(|l| l.strip_suffix('"'))
            .collect();
        let (_, arms) = script.split_once("case \"${cmd}\" in").unwrap();
        let arms: Vec<&str> = arms
            .lines()
            .filter(|l| l.starts_with("        ") && !l.starts_with("         "))
            .filter_map(|l| l.trim().strip_suffix(')'))
            .collect();
        assert!(arms.len() > 20, "{arms:?}");
        for arm in arms {
            assert!(set.contains(arm), "the arm {arm} is never reached");
        }
    }

    #[test]
    fn examples_are_set_line_by_line_in_the_pages() {
        let page = String::from_utf8(page(&Cli::command()).unwrap()).unwrap();
        let at = page
            .find(".SH EXAMPLES\n.nf\n")
            .expect("an EXAMPLES section");
        assert!(page[at..].contains(".fi\n"), "{page}");
        assert!(!page.contains(".SH EXTRA"), "{page}");
    }
}
