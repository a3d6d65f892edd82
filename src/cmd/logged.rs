//! The arguments an audit-log line shows, built from the parsed command line, never from
//! `argv`: each option the user gave, by its long name, in the order the command defines
//! them, with every secret value redacted by its type. A value is secret by the option it came
//! with (`--seed`, a database URL that may hold a password), or by its form wherever it came
//! (an age secret key given as a recipient, a PEM private key:
//! [`emission_factory::secrets::scrub`]). Share, identity and key files are named by their
//! path, which is not secret; their contents are never on the command line.

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory};
use emission_factory::secrets::{redacted, scrub};

/// Options whose values are secret whatever they look like, with what they hold.
const SECRET_OPTIONS: &[(&str, &str)] = &[("seed", "seed"), ("database_url", "database URL")];

/// The subcommand and the options given to it, as the audit log shows them.
pub fn arguments(matches: &ArgMatches) -> Vec<String> {
    let Some((name, sub)) = matches.subcommand() else {
        return Vec::new();
    };
    let cli = super::Cli::command();
    let Some(command) = cli.find_subcommand(name) else {
        return Vec::new();
    };
    let mut out = vec![name.to_string()];
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if sub.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let option = arg.get_long().map(|long| format!("--{long}"));
        if !arg.get_action().takes_values() {
            out.extend(option);
            continue;
        }
        let secret = SECRET_OPTIONS.iter().find(|(o, _)| *o == id);
        for value in sub.get_raw(id).into_iter().flatten() {
            out.extend(option.clone());
            out.push(match secret {
                Some((_, kind)) => redacted(kind),
                None => scrub(&value.to_string_lossy()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(argv: &[&str]) -> Vec<String> {
        let matches = super::super::Cli::command()
            .try_get_matches_from(std::iter::once("emission-factory").chain(argv.iter().copied()))
            .unwrap();
        arguments(&matches)
    }

    #[test]
    fn secrets_are_redacted_by_type_and_paths_kept() {
        let seed = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        let args = logged(&[
            "emit",
            "--game",
            "ruche-or",
            &format!("--seed={seed}"),
            "--signing-key",
            "keys/k.pem",
            "-q",
        ]);
        assert_eq!(
            args,
            [
                "emit",
                "--game",
                "ruche-or",
                "--seed",
                "<redacted: seed>",
                "--signing-key",
                "keys/k.pem",
                "--quiet"
            ]
        );
        let key = "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSVQX7JR";
        let public = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";
        let args = logged(&[
            "seed",
            "--game",
            "ruche-or",
            "--recipient",
            public,
            "--recipient",
            &key.to_lowercase(),
            "--share",
            "s.age",
            "--identity",
            "alice.txt",
        ]);
        let joined = args.join(" ");
        assert!(!joined.to_uppercase().contains("QYQSZ"), "{joined}");
        assert!(
            joined.contains(&format!(
                "--recipient {public} --recipient <redacted: age secret key>"
            )),
            "{joined}"
        );
        assert!(
            joined.contains("--share s.age --identity alice.txt"),
            "{joined}"
        );
        // Defaults are not what the user gave: not shown.
        assert!(!joined.contains("--emissions"), "{joined}");
        // A positional value is shown as it is.
        assert_eq!(
            logged(&["seal", "emissions/g/2/e0001"]),
            ["seal", "emissions/g/2/e0001"]
        );
    }
}
