//! Keeping the emission's secrets (the seed, the signing key, custody shares and identities) out
//! of the places a process leaves traces: core dumps, the audit log, error messages.
//!
//! - [`no_core_dumps`]: called first thing by the binary, before any secret is read. A core
//!   dump (SIGQUIT, a crash) writes the whole memory of the process to disk, seed and key
//!   included, where whoever reads the folder of the core finds them; so the process is made
//!   non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`, which also keeps other processes of the same
//!   user from attaching to it with `ptrace`) and its core size limit set to 0.
//! - [`secret_kind`] and [`scrub`]: what looks like a secret by its type (an age secret key
//!   `AGE-SECRET-KEY-1…`, a PEM private key) is recognised wherever it appears, so that a
//!   secret given by mistake where something public belongs (a recipient) is never logged nor
//!   echoed, whatever the option it came with.

/// Makes the process non-dumpable and sets its core size limit to 0 (soft and hard, so that
/// nothing in the process can raise it again). Linux; elsewhere only the limit is set.
///
/// Errors are returned, not ignored: a process that cannot make sure its memory stays off the
/// disk must not go on to read a secret.
pub fn no_core_dumps() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use rustix::process::{setrlimit, Resource, Rlimit};
        setrlimit(
            Resource::Core,
            Rlimit {
                current: Some(0),
                maximum: Some(0),
            },
        )?;
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{set_dumpable_behavior, DumpableBehavior};
        set_dumpable_behavior(DumpableBehavior::NotDumpable)?;
    }
    Ok(())
}

/// The characters of a bech32 string (an age key's data), in upper case.
const BECH32: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
/// Key characters after an opening that make it a key rather than a mention of the form
/// (`AGE-SECRET-KEY-1...` in a message): a real age key has 58, a PEM body far more.
const KEY_CHARS: usize = 16;

/// What kind of secret `text` holds, if any: `"age secret key"` when it holds
/// `AGE-SECRET-KEY-1` followed by key data (bech32, in any case: such keys are
/// case-insensitive), `"PEM private key"` when it holds a PEM `PRIVATE KEY-----` armour line
/// followed by a base64 body. A mere mention of the forms (`AGE-SECRET-KEY-1...`) is not one.
pub fn secret_kind(text: &str) -> Option<&'static str> {
    let upper = text.to_ascii_uppercase();
    let followed_by = |mark: &str, is_key: &dyn Fn(char) -> bool, skip: &dyn Fn(char) -> bool| {
        upper.match_indices(mark).any(|(at, _)| {
            upper[at + mark.len()..]
                .chars()
                .filter(|&c| !skip(c))
                .take_while(|&c| is_key(c))
                .take(KEY_CHARS)
                .count()
                == KEY_CHARS
        })
    };
    if followed_by("AGE-SECRET-KEY-1", &|c| BECH32.contains(c), &|_| false) {
        return Some("age secret key");
    }
    // The body of a PEM block, in upper case here: letters, digits, + / =, across line ends.
    let base64 = |c: char| c.is_ascii_alphanumeric() || "+/=".contains(c);
    if followed_by("PRIVATE KEY-----", &base64, &|c| c == '\r' || c == '\n') {
        return Some("PEM private key");
    }
    None
}

/// `text`, or a placeholder naming the kind of secret it holds (`<redacted: age secret key>`):
/// nothing of a secret is kept, not even its length.
pub fn scrub(text: &str) -> String {
    match secret_kind(text) {
        Some(kind) => format!("<redacted: {kind}>"),
        None => text.to_string(),
    }
}

/// The placeholder for a value that is secret by the option it was given with (`--seed`).
pub fn redacted(kind: &str) -> String {
    format!("<redacted: {kind}>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised_by_their_form_in_any_case() {
        let age = "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSVQX7JR";
        assert_eq!(secret_kind(age), Some("age secret key"));
        assert_eq!(secret_kind(&age.to_lowercase()), Some("age secret key"));
        assert_eq!(secret_kind(&format!("x{age}")), Some("age secret key"));
        let pem =
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAbCdEf\n-----END PRIVATE KEY-----\n";
        assert_eq!(secret_kind(pem), Some("PEM private key"));
        assert_eq!(
            secret_kind("-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAA"),
            Some("PEM private key")
        );
        // Mentions of the forms, as messages make them, are not secrets.
        assert_eq!(secret_kind("an age secret key (AGE-SECRET-KEY-1...)"), None);
        assert_eq!(secret_kind("-----BEGIN PRIVATE KEY-----"), None);
        assert_eq!(
            secret_kind("age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"),
            None
        );
        assert_eq!(secret_kind("-----BEGIN PUBLIC KEY-----"), None);
        assert_eq!(scrub(age), "<redacted: age secret key>");
        assert!(!scrub(&format!("error: {age}")).contains("QYQSZ"));
        assert_eq!(scrub("keys/a.pem"), "keys/a.pem");
    }

    #[test]
    fn the_process_is_made_non_dumpable_with_no_core_size() {
        no_core_dumps().unwrap();
        let limit = rustix::process::getrlimit(rustix::process::Resource::Core);
        assert_eq!((limit.current, limit.maximum), (Some(0), Some(0)));
        #[cfg(target_os = "linux")]
        assert_eq!(
            rustix::process::dumpable_behavior().unwrap(),
            rustix::process::DumpableBehavior::NotDumpable
        );
    }
}
