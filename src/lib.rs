//! Ticket emission factory: the engine behind the `emission-factory` command.
//!
//! An emission is made of blocks. For each block the engine draws the order of the prizes of
//! Article 3 with ChaCha20 ([`plan`]), synthesizes in parallel a layout for every ticket with the
//! game's [`mechanic`], decodes every layout again before writing it, and writes the block files
//! of FORMAT.md: a CSV of tickets, a manifest and its Ed25519 signature ([`block`]). [`verify`]
//! checks any block afterwards, trusting only the decoders and the game definitions. Whatever
//! comes from a file is read with a bound and echoed escaped and short ([`untrusted`]). A
//! [`proof`] shows that one ticket belongs to a signed block, without the block.
//!
//! The command line is the binary's (`src/main.rs` and `src/cmd/`): the engine knows no
//! terminal, and tells its caller how far it got through [`progress::Progress`].

pub mod block;
pub mod custody;
pub mod emission;
pub mod emit;
pub mod fs;
pub mod game;
pub mod hash;
pub mod interrupt;
pub mod json;
pub mod lab;
#[cfg(feature = "load")]
pub mod load;
pub mod mechanic;
pub mod money;
pub mod pack;
pub mod picture;
pub mod plan;
pub mod problem;
pub mod progress;
pub mod proof;
pub mod report;
pub mod secrets;
pub mod untrusted;
pub mod verify;

/// The layers of docs/ARCHITECTURE.md, checked: a module uses only modules of layers below its
/// own (doc comments and test code aside), so the crate's modules form a DAG.
/// What the unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    /// A unit test cannot run its subject (a tool missing): under `CI` it fails; elsewhere it
    /// says `SKIPPED` on the process's standard error (not captured by the test harness, so
    /// `cargo test` shows it) and the caller returns without checking anything. The unit
    /// tests' one skip, as `tests/it/common::cannot_run` is the integration tests'.
    #[track_caller]
    pub(crate) fn cannot_run(why: &str) {
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and {test} cannot run its subject: {why}"
        );
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {why}");
    }
}

#[cfg(test)]
mod layers {
    /// Lowest first. A module may use the modules of the layers before its own.
    const LAYERS: &[&[&str]] = &[
        &["untrusted", "interrupt", "secrets", "progress", "problem"],
        &["money", "json"],
        &["fs"],
        &["hash"],
        &["mechanic"],
        &["game"],
        &["plan", "block"],
        &["custody"],
        &["emission"],
        &["verify"],
        &["emit", "load", "proof", "report", "lab", "picture"],
        &["pack"],
    ];

    fn layer(module: &str) -> Option<usize> {
        LAYERS.iter().position(|l| l.contains(&module))
    }

    /// The code of a file without its comments and its `#[cfg(test)]` modules, wherever they
    /// sit: each such module is cut from its `#[cfg(test)]` to its closing brace (or its `;`),
    /// and the code after it is still read.
    fn production_code(text: &str) -> String {
        let mut code = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("#[cfg(test)]") {
            code.push_str(&rest[..at]);
            let after = &rest[at + "#[cfg(test)]".len()..];
            let item = after.trim_start();
            let item = item.strip_prefix("pub(crate) ").unwrap_or(item);
            if !item.starts_with("mod ") {
                // Another test-only item (a function, a static): kept, read as production.
                code.push_str("#[cfg(test)]");
                rest = after;
                continue;
            }
            rest = &item[item_end(item)..];
        }
        code.push_str(rest);
        code.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Where the module item at the start of `item` ends: after its `;`, or after the brace
    /// that closes its body (braces inside string and character literals and comments are not
    /// counted).
    fn item_end(item: &str) -> usize {
        let bytes = item.as_bytes();
        let mut depth = 0usize;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b';' if depth == 0 => return i + 1,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        bytes.len()
    }

    #[test]
    fn code_after_a_test_module_is_still_read() {
        let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    fn f() { let s = \"}\"; }\n}\n\
                    fn g() { crate::b::h() }\n#[cfg(test)]\nmod other;\nuse crate::c;\n";
        let code = production_code(text);
        assert!(
            code.contains("crate::a") && code.contains("crate::b") && code.contains("crate::c")
        );
        assert!(!code.contains("fn f()"), "{code}");
    }

    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("tests.rs")
                && !path.ends_with("changed.rs")
            {
                out.push(path);
            }
        }
    }

    #[test]
    fn no_module_uses_one_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        files(&src, &mut paths);
        let mut wrong = Vec::new();
        let mut seen = 0;
        for path in paths {
            let relative = path.strip_prefix(&src).unwrap();
            let first = relative.components().next().unwrap().as_os_str();
            let module = first.to_str().unwrap().trim_end_matches(".rs");
            if matches!(module, "lib" | "main" | "cmd") {
                continue;
            }
            let own = layer(module).unwrap_or_else(|| panic!("{module} is in no layer"));
            let code = production_code(&std::fs::read_to_string(&path).unwrap());
            for (at, _) in code.match_indices("crate::") {
                let used: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if used == module {
                    continue;
                }
                seen += 1;
                match layer(&used) {
                    Some(l) if l < own => {}
                    _ => wrong.push(format!("{} uses crate::{used}", relative.display())),
                }
            }
        }
        assert!(seen > 100, "only {seen} uses found: the scan is broken");
        wrong.sort();
        wrong.dedup();
        assert!(
            wrong.is_empty(),
            "uses against the layers:\n{}",
            wrong.join("\n")
        );
    }
}
