//! `completions` and `man`: shell completions and manual pages, generated from the command
//! line's own definition (clap_complete, clap_mangen), so they never drift from it.

use super::{Cli, Exit};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::path::PathBuf;

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
}

/// The program's name, as installed and as the completions and pages call it.
const NAME: &str = "emission-factory";

pub(super) fn run(args: CompletionsArgs) -> Result<Exit> {
    let mut script = Vec::new();
    // Into memory first: clap_complete panics on a write error, and a closed or full standard
    // output must end as any other output does (quietly, or with status 2).
    clap_complete::generate(args.shell, &mut Cli::command(), NAME, &mut script);
    let text = String::from_utf8_lossy(&script);
    outln!("{}", text.trim_end_matches('\n'))?;
    Ok(Exit::Ok)
}

pub(super) fn run_man(args: ManArgs) -> Result<Exit> {
    let command = Cli::command();
    match args.out {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot make folder {}", dir.display()))?;
            clap_mangen::generate_to(command, &dir)
                .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
            errln!("manual pages written to {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .context("cannot render the manual page")?;
            let text = String::from_utf8_lossy(&page);
            outln!("{}", text.trim_end_matches('\n'))?;
        }
    }
    Ok(Exit::Ok)
}
