//! The connection to the database: TLS as libpq's `sslmode` and `sslrootcert` say (the
//! client library reads neither `verify-ca`, `verify-full` nor `sslrootcert`, so they are
//! taken out of the URL here and done with OpenSSL), and no plaintext connection to a host that
//! is not this machine.
//!
//! - `sslmode=disable`, `allow`, `prefer` (libpq's default) or none: no TLS. Allowed only to a
//!   Unix socket, `localhost`, `127.0.0.1` or `::1`; to any other host the connection is
//!   refused before it is made, unless the caller allows plaintext (`--allow-plaintext`).
//! - `require`: TLS, the server's certificate not checked; with `sslrootcert`, as `verify-ca`
//!   (libpq does the same).
//! - `verify-ca`: TLS, the certificate chain checked against `sslrootcert` (a PEM file).
//! - `verify-full`: as `verify-ca`, and the certificate must name the host connected to.

use super::error::{chain, LoadError};
use postgres::config::{Host, SslMode};
use postgres::{Client, NoTls};
use std::path::PathBuf;
use std::str::FromStr;
use tokio_postgres::Config;

/// The TLS asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// None.
    Off,
    /// Encrypted, the server not authenticated.
    Require,
    /// The chain checked against the root certificates of the file.
    VerifyCa(PathBuf),
    /// The chain and the host name checked.
    VerifyFull(PathBuf),
}

/// A parsed database URL: the client's configuration and the TLS asked for.
#[derive(Debug, Clone)]
pub struct Target {
    /// What the client library reads.
    pub config: Config,
    /// The TLS.
    pub tls: Tls,
}

/// Parses `url` (libpq's URL or key=value form).
pub fn parse(url: &str) -> Result<Target, LoadError> {
    let (rest, mode, root) = take_ssl_options(url)?;
    let config = Config::from_str(&rest).map_err(|e| LoadError::Url(e.to_string()))?;
    let root = root.map(PathBuf::from);
    let tls = match (mode.as_deref(), root) {
        (None | Some("disable" | "allow" | "prefer"), _) => Tls::Off,
        (Some("require"), None) => Tls::Require,
        (Some("require" | "verify-ca"), Some(r)) => Tls::VerifyCa(r),
        (Some("verify-full"), Some(r)) => Tls::VerifyFull(r),
        (Some(m @ ("verify-ca" | "verify-full")), None) => {
            return Err(LoadError::Url(format!(
                "sslmode={m} needs sslrootcert=FILE, the PEM file of the certificate authority that signed the server's certificate"
            )))
        }
        (Some(other), _) => {
            return Err(LoadError::Url(format!(
                "sslmode={}: not one of disable, allow, prefer, require, verify-ca, verify-full",
                crate::untrusted::shown_text(other, 40)
            )))
        }
    };
    Ok(Target { config, tls })
}

/// True if every host of `config` is this machine: a Unix socket, `localhost`, `127.0.0.1` or
/// `::1` (and every `hostaddr`, when given, `127.0.0.1` or `::1`). No host at all is the
/// client's default, the local socket.
pub fn is_local(config: &Config) -> bool {
    let hosts_local = config.get_hosts().iter().all(|h| match h {
        Host::Unix(_) => true,
        Host::Tcp(name) => matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1" | "[::1]"),
    });
    let addrs_local = config.get_hostaddrs().iter().all(|a| match a {
        std::net::IpAddr::V4(v4) => *v4 == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(v6) => *v6 == std::net::Ipv6Addr::LOCALHOST,
    });
    hosts_local && addrs_local
}

/// Connects to `url`, with the TLS it asks for; a plaintext connection to a host other than
/// this machine is refused before anything is sent, unless `allow_plaintext`.
pub fn connect(url: &str, allow_plaintext: bool) -> Result<Client, LoadError> {
    let (config, tls, target) = prepare(url, allow_plaintext)?;
    let failed = |reason| failed(&target, reason);
    let config = postgres::Config::from(config);
    match tls {
        None => config.connect(NoTls).map_err(|e| failed(chain(&e))),
        Some((connector, mode)) => config
            .connect(connector)
            .map_err(|e| failed(tls_failure(&e, mode))),
    }
}

/// As [`connect`], for the asynchronous client (a second connection of `db-verify`, whose
/// COPY stream is read without the synchronous client's per-row round through its runtime):
/// the same TLS and the same refusal of plaintext. Must run inside a Tokio runtime, which
/// drives the connection (a spawned task) while the client is used.
pub async fn connect_async(
    url: &str,
    allow_plaintext: bool,
) -> Result<tokio_postgres::Client, LoadError> {
    let (config, tls, target) = prepare(url, allow_plaintext)?;
    let failed = |reason| failed(&target, reason);
    match tls {
        None => {
            let (client, connection) =
                config.connect(NoTls).await.map_err(|e| failed(chain(&e)))?;
            tokio::spawn(connection);
            Ok(client)
        }
        Some((connector, mode)) => {
            let (client, connection) = config
                .connect(connector)
                .await
                .map_err(|e| failed(tls_failure(&e, mode)))?;
            tokio::spawn(connection);
            Ok(client)
        }
    }
}

/// A TLS connector and the `sslmode` it stands for.
type Connector = (postgres_openssl::MakeTlsConnector, &'static str);

/// The connection to `target` failed.
fn failed(target: &str, reason: String) -> LoadError {
    LoadError::Connect {
        target: target.to_string(),
        reason,
    }
}

/// The parsed configuration, its TLS connector (none: plaintext, checked allowed), and the
/// target as messages name it.
fn prepare(
    url: &str,
    allow_plaintext: bool,
) -> Result<(tokio_postgres::Config, Option<Connector>, String), LoadError> {
    let Target { mut config, tls } = parse(url)?;
    let target = super::describe(&config);
    let (mode, check_host, root) = match tls {
        Tls::Off => {
            if !allow_plaintext && !is_local(&config) {
                return Err(LoadError::Plaintext { target });
            }
            config.ssl_mode(SslMode::Disable);
            return Ok((config, None, target));
        }
        Tls::Require => ("require", false, None),
        Tls::VerifyCa(root) => ("verify-ca", false, Some(root)),
        Tls::VerifyFull(root) => ("verify-full", true, Some(root)),
    };
    use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
    let mut builder = SslConnector::builder(SslMethod::tls_client())
        .map_err(|e| failed(&target, format!("cannot set up TLS: {e}")))?;
    match root {
        None => builder.set_verify(SslVerifyMode::NONE),
        Some(root) => {
            builder.set_ca_file(&root).map_err(|e| {
                LoadError::Url(format!(
                    "sslrootcert={}: cannot read it as PEM certificates ({e}); give the certificate authority's PEM file",
                    crate::untrusted::shown_path(&root)
                ))
            })?;
            builder.set_verify(SslVerifyMode::PEER);
        }
    }
    let mut connector = postgres_openssl::MakeTlsConnector::new(builder.build());
    connector.set_callback(move |c, _| {
        c.set_verify_hostname(check_host);
        Ok(())
    });
    config.ssl_mode(SslMode::Require);
    Ok((config, Some((connector, mode)), target))
}

/// Why a TLS connection failed, and what sslmode refuses.
fn tls_failure(e: &postgres::Error, mode: &str) -> String {
    format!(
        "{} (TLS with sslmode={mode}: a server that does not speak TLS, a certificate not signed by sslrootcert's authority, or for verify-full one that does not name the host, is refused)",
        chain(e)
    )
}

/// Takes `sslmode` and `sslrootcert` out of `url`: the rest, and their values.
fn take_ssl_options(url: &str) -> Result<(String, Option<String>, Option<String>), LoadError> {
    let (mut mode, mut root) = (None, None);
    if let Some(at) = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|s| url.starts_with(s).then_some(s.len()))
    {
        let _ = at;
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_string(), None, None));
        };
        let mut kept = Vec::new();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => mode = Some(percent_decoded(value)?),
                "sslrootcert" => root = Some(percent_decoded(value)?),
                _ => kept.push(pair),
            }
        }
        let rest = match kept.is_empty() {
            true => base.to_string(),
            false => format!("{base}?{}", kept.join("&")),
        };
        return Ok((rest, mode, root));
    }
    // key=value form: values bare or in single quotes, with \' and \\.
    let bytes = url.as_bytes();
    let mut kept: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        while i < bytes.len() && bytes[i] != b'=' && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &url[start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] != b'=' {
            return Err(LoadError::Url(format!(
                "`{}` has no value (key=value)",
                crate::untrusted::shown_text(key, 40)
            )));
        }
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if i < bytes.len() && bytes[i] == b'\'' {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => return Err(LoadError::Url("a quoted value is not closed".into())),
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if i + 1 < bytes.len() => {
                        value.push(char::from(bytes[i + 1]));
                        i += 2;
                    }
                    Some(_) => {
                        let ch = url[i..].chars().next().unwrap_or_default();
                        value.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
        } else {
            let from = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            value.push_str(&url[from..i]);
        }
        match key {
            "sslmode" => mode = Some(value),
            "sslrootcert" => root = Some(value),
            _ => kept.push(&url[start..i]),
        }
    }
    Ok((kept.join(" "), mode, root))
}

fn percent_decoded(text: &str) -> Result<String, LoadError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    LoadError::Url("a % in the URL is not followed by two hex digits".into())
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| LoadError::Url("a URL value is not UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssl_options_are_taken_out_of_both_forms() {
        let (rest, mode, root) = take_ssl_options(
            "postgresql://u@db.example:5432/game?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(
            rest,
            "postgresql://u@db.example:5432/game?application_name=x"
        );
        assert_eq!(mode.as_deref(), Some("verify-full"));
        assert_eq!(root.as_deref(), Some("/etc/ca.pem"));
        let (rest, mode, root) = take_ssl_options(
            "host=db.example sslmode = require dbname=game sslrootcert='/a b/c\\'.pem'",
        )
        .unwrap();
        assert_eq!(rest, "host=db.example dbname=game");
        assert_eq!(mode.as_deref(), Some("require"));
        assert_eq!(root.as_deref(), Some("/a b/c'.pem"));
    }

    #[test]
    fn only_this_machine_is_local() {
        for (url, local) in [
            ("postgresql://u@/game?host=/run/postgresql", true),
            ("postgresql://u@localhost/game", true),
            ("postgresql://u@127.0.0.1:5433/game", true),
            ("host=::1 dbname=game", true),
            ("postgresql://u@127.0.0.2/game", false),
            ("postgresql://u@db.example/game", false),
            ("host=localhost hostaddr=10.0.0.5 dbname=game", false),
            ("host=localhost,db.example dbname=game", false),
        ] {
            let t = parse(url).unwrap();
            assert_eq!(is_local(&t.config), local, "{url}");
        }
        assert!(matches!(
            parse("postgresql://u@h/g?sslmode=verify-ca").unwrap_err(),
            LoadError::Url(m) if m.contains("sslrootcert")
        ));
        assert_eq!(
            parse("postgresql://u@h/g?sslmode=require&sslrootcert=ca.pem")
                .unwrap()
                .tls,
            Tls::VerifyCa("ca.pem".into())
        );
    }
}
