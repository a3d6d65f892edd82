//! The command line documents itself: every command's --help has examples, and the shell
//! completions and manual pages generated from its definition cover every command.

use crate::common;
use common::*;

/// The subcommands, as the top-level --help lists them (without `help`).
fn subcommands(w: &Workdir) -> Vec<String> {
    let help = String::from_utf8(w.ok(&["--help"]).stdout).unwrap();
    let listed: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|name| name != "help")
        .collect();
    assert!(listed.len() >= 10, "too few commands found in:\n{help}");
    listed
}

/// The "Examples:" section of a help text, if any.
fn examples(help: &str) -> Option<String> {
    let at = help.find("\nExamples:\n")?;
    Some(help[at..].to_string())
}

#[test]
fn every_command_help_gives_examples_of_itself() {
    let w = Workdir::new();
    let top = String::from_utf8(w.ok(&["--help"]).stdout).unwrap();
    assert!(
        examples(&top).is_some_and(|e| e.contains("emission-factory ")),
        "{top}"
    );
    for name in subcommands(&w) {
        for flag in ["--help", "-h"] {
            let help = String::from_utf8(w.ok(&[&name, flag]).stdout).unwrap();
            let Some(section) = examples(&help) else {
                panic!("`emission-factory {name} {flag}` has no Examples: section:\n{help}");
            };
            assert!(
                section.contains(&format!("emission-factory {name}")),
                "the examples of {name} do not run {name}:\n{section}"
            );
        }
    }
}

#[test]
fn completions_name_every_command_and_option() {
    let w = Workdir::new();
    let commands = subcommands(&w);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = String::from_utf8(w.ok(&["completions", shell]).stdout).unwrap();
        for name in &commands {
            assert!(
                script.contains(name.as_str()),
                "the {shell} completion does not mention {name}"
            );
        }
        // fish writes `-l public-key`, the others `--public-key`.
        for option in ["public-key", "ticket", "signing-key", "emission-blocks"] {
            assert!(
                script.contains(option),
                "the {shell} completion lacks {option}"
            );
        }
    }
    // bash itself reads the script and completes a command from it.
    let bash = String::from_utf8(w.ok(&["completions", "bash"]).stdout).unwrap();
    std::fs::write(w.path("ef.bash"), &bash).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(
            "source ./ef.bash && COMP_WORDS=(emission-factory verify-p) COMP_CWORD=1 \
             && f=$(complete -p emission-factory | sed 's/.*-F \\([^ ]*\\).*/\\1/') \
             && $f emission-factory verify-p emission-factory \
             && printf '%s\\n' \"${COMPREPLY[@]}\"",
        )
        .current_dir(w.dir.path())
        .output()
        .expect("bash runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "verify-proof",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = w.run_expect(&["completions", "cmd.exe"], 2);
    assert!(text(&bad).contains("possible values"), "{}", text(&bad));
}

/// What bash's programmable completion offers for the command line `words` (the last word
/// being completed), from the script `completions bash` prints, run by a real bash as it runs
/// it on <TAB>: COMP_WORDS and COMP_CWORD set, the function `complete -p` names called with
/// the command, the word and the word before it.
fn bash_completes(w: &Workdir, words: &[&str]) -> Vec<String> {
    let script = w.ok(&["completions", "bash"]).stdout;
    std::fs::write(w.path("ef.bash"), &script).unwrap();
    let quoted: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let program = format!(
        "source ./ef.bash || exit 3
         COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}
         f=$(complete -p emission-factory | sed 's/.*-F \\([^ ]*\\).*/\\1/')
         \"$f\" emission-factory '{cur}' '{prev}' || exit 4
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = quoted.join(" "),
        line = words.join(" "),
        cur = words[cword],
    );
    let out = std::process::Command::new("bash")
        .arg("--norc")
        .arg("-c")
        .arg(&program)
        .current_dir(w.dir.path())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash failed on {words:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// bash completes the options of a subcommand, not only the subcommands (clap_complete's
/// script never did for a program whose name has a hyphen).
#[test]
fn bash_completes_the_options_of_subcommands() {
    let w = Workdir::new();
    assert_eq!(
        bash_completes(&w, &["emission-factory", "verify", "--pub"]),
        ["--public-key"]
    );
    // A hyphenated subcommand, an option after others, and a short option's long form.
    assert_eq!(
        bash_completes(&w, &["emission-factory", "verify-proof", "--public-k"]),
        ["--public-key"]
    );
    assert_eq!(
        bash_completes(
            &w,
            &[
                "emission-factory",
                "emit",
                "--game",
                "ruche-or",
                "--emission-b"
            ]
        ),
        ["--emission-blocks"]
    );
    let show = bash_completes(&w, &["emission-factory", "show", "--"]);
    for option in ["--ticket", "--svg", "--public-key", "--help"] {
        assert!(show.iter().any(|o| o == option), "{option} not in {show:?}");
    }
    // A subcommand of a subcommand: `help verify`.
    assert!(
        bash_completes(&w, &["emission-factory", "help", "ver"]).contains(&"verify".to_string())
    );
}

/// A section of a roff page, from its `.SH` line to the next.
fn section<'a>(roff: &'a str, heading: &str) -> Option<&'a str> {
    let at = roff.find(&format!("{heading}\n"))? + heading.len();
    let rest = &roff[at..];
    Some(&rest[..rest.find("\n.SH ").unwrap_or(rest.len())])
}

/// The EF_* variables the job scripts of deploy/ mention.
fn job_variables() -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let mut folders = vec![root];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let mut rest = text.as_str();
            while let Some(at) = rest.find("EF_") {
                let name: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                names.insert(name.trim_end_matches('_').to_string());
                rest = &rest[at + 3..];
            }
        }
    }
    assert!(names.len() >= 10, "{names:?}");
    names.into_iter().collect()
}

#[test]
fn manual_pages_cover_every_command_and_render() {
    let w = Workdir::new();
    let commands = subcommands(&w);
    let job_variables = job_variables();
    w.ok(&["man", "--out", "man1"]);
    let mut pages = vec![(
        "emission-factory".to_string(),
        w.path("man1/emission-factory.1"),
    )];
    for name in &commands {
        pages.push((
            format!("emission-factory-{name}"),
            w.path(&format!("man1/emission-factory-{name}.1")),
        ));
    }
    // The page on standard output is the main page.
    let stdout = String::from_utf8(w.ok(&["man"]).stdout).unwrap();
    assert!(stdout.contains(".TH emission-factory 1"), "{stdout}");
    for name in &commands {
        let roff_name = format!("emission\\-factory\\-{}(1)", name.replace('-', "\\-"));
        assert!(stdout.contains(&roff_name), "{roff_name} not in {stdout}");
    }
    let groff = std::process::Command::new("groff")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    for (title, page) in &pages {
        let roff = String::from_utf8(read(page)).unwrap();
        assert!(
            roff.contains(&format!(".TH {title} 1")) && roff.contains(".SH NAME"),
            "{}:\n{roff}",
            page.display()
        );
        if title != "emission-factory" {
            assert!(roff.contains(".SH EXAMPLES"), "{title} has no examples");
        }
        // ENVIRONMENT: the program's variables and every EF_* a job script reads.
        let environment = section(&roff, ".SH ENVIRONMENT")
            .unwrap_or_else(|| panic!("{title} has no ENVIRONMENT section"));
        for name in ["DATABASE_URL", "NO_COLOR"]
            .into_iter()
            .chain(job_variables.iter().map(String::as_str))
        {
            assert!(
                environment.contains(name),
                "{title}'s ENVIRONMENT lacks {name}"
            );
        }
        let see_also = section(&roff, ".SH \"SEE ALSO\"")
            .unwrap_or_else(|| panic!("{title} has no SEE ALSO section"));
        if title == "emission-factory" {
            for name in &commands {
                let page = format!("emission\\-factory\\-{}(1)", name.replace('-', "\\-"));
                assert!(see_also.contains(&page), "SEE ALSO lacks {page}");
            }
        } else {
            assert!(see_also.contains("emission\\-factory(1)"), "{see_also}");
        }
        if !groff {
            eprintln!("groff is not installed: {title} checked as roff text only");
            continue;
        }
        let out = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(page)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "groff warns on {}:\n{}",
            page.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let out = std::process::Command::new("groff")
            .args(["-man", "-Tutf8"])
            .arg(page)
            .args(["-P", "-c", "-P", "-b", "-P", "-u"])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("NAME") && shown.contains(title.as_str()),
            "{shown}"
        );
    }
}
