//! The one network call of the program: an RFC 3161 request POSTed to a time-stamping
//! authority over plain HTTP/1.1 (RFC 3161 §3.4), on std's TcpStream. Plain HTTP is enough:
//! the token is signed by the TSA and checked here before it is kept, so the path to the TSA
//! need not be trusted. `https://` is refused with the way round it (the file mode).
//! The reply is hostile: its size is bounded, its headers are parsed strictly, and nothing of
//! it is echoed unescaped.

use crate::untrusted::shown;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Largest reply read (a token with a certificate chain is a few kilobytes).
pub const MAX_REPLY_BYTES: usize = 1 << 20;
/// How long a connection, a write or a read may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What is wrong with a `--tsa-url`, or with talking to the TSA. `url` is the URL as given (or
/// as asked), shown escaped.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Not printable ASCII, or too long.
    #[error("--tsa-url {}: a URL is printable ASCII without spaces, at most 2000 characters", shown(.url))]
    UrlText {
        /// The URL given.
        url: String,
    },
    /// An https URL.
    #[error("--tsa-url {}: https is not supported (this program speaks plain HTTP to a TSA: the token is signed and checked, so the transport need not be trusted). Give the TSA's http:// URL, or use the file mode: --tsa-request-out FILE, send FILE with `curl --data-binary @FILE -H 'Content-Type: application/timestamp-query' URL -o REPLY`, then `emission-factory timestamp FOLDER --tsa-reply REPLY`", shown(.url))]
    Https {
        /// The URL given.
        url: String,
    },
    /// Another scheme.
    #[error("--tsa-url {}: give an http:// URL", shown(.url))]
    NotHttp {
        /// The URL given.
        url: String,
    },
    /// A user or password.
    #[error("--tsa-url {}: a user or password in the URL is not supported", shown(.url))]
    UserInfo {
        /// The URL given.
        url: String,
    },
    /// An IPv6 address not closed.
    #[error("--tsa-url {}: an IPv6 address is closed with ]", shown(.url))]
    Ipv6 {
        /// The URL given.
        url: String,
    },
    /// No host.
    #[error("--tsa-url {}: no host", shown(.url))]
    NoHost {
        /// The URL given.
        url: String,
    },
    /// A port out of range.
    #[error("--tsa-url {}: the port is not a number from 1 to 65535", shown(.url))]
    Port {
        /// The URL given.
        url: String,
    },
    /// The host does not resolve.
    #[error("{}: cannot resolve the TSA's host: {error}", shown(.url))]
    Resolve {
        /// The URL asked.
        url: String,
        /// Why.
        error: std::io::Error,
    },
    /// No address connects.
    #[error("{}: cannot connect to the TSA: {}", shown(.url), .last.as_ref().map_or_else(|| "no address".to_string(), ToString::to_string))]
    Connect {
        /// The URL asked.
        url: String,
        /// The last address's error (none: no address).
        last: Option<std::io::Error>,
    },
    /// Sending the request failed.
    #[error("{}: {error}", shown(.url))]
    Io {
        /// The URL asked.
        url: String,
        /// Why.
        error: std::io::Error,
    },
    /// Reading the reply failed.
    #[error("{}: reading the TSA's reply: {error}", shown(.url))]
    ReadReply {
        /// The URL asked.
        url: String,
        /// Why.
        error: std::io::Error,
    },
    /// A reply too large.
    #[error("{}: the TSA's reply is larger than {MAX_REPLY_BYTES} bytes: not read", shown(.url))]
    TooLarge {
        /// The URL asked.
        url: String,
    },
    /// A reply that is not a timestamp reply.
    #[error("{}: {error}", shown(.url))]
    Reply {
        /// The URL asked.
        url: String,
        /// What is wrong with it.
        error: ReplyError,
    },
}

/// What is wrong with the TSA's HTTP reply (the TSA's words, shown escaped).
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    /// No end of headers.
    #[error("the TSA's reply is not HTTP (no end of headers)")]
    NoHeaders,
    /// Headers not UTF-8.
    #[error("the TSA's reply headers are not text")]
    HeadersNotText,
    /// Not HTTP/1.x.
    #[error("the TSA's reply is not HTTP/1.x: {}", shown(.status))]
    NotHttp1 {
        /// Its status line.
        status: String,
    },
    /// A status other than 200.
    #[error("the TSA answered {} instead of a token", shown(.status))]
    Status {
        /// Its status line.
        status: String,
    },
    /// A header line without a colon.
    #[error("the TSA's reply has a bad header: {}", shown(.line))]
    BadHeader {
        /// The line.
        line: String,
    },
    /// A Content-Length that is not a number.
    #[error("the TSA's reply has a bad Content-Length")]
    ContentLength,
    /// Two different Content-Lengths.
    #[error("the TSA's reply has two Content-Lengths")]
    TwoContentLengths,
    /// Another content type.
    #[error("the TSA's reply is of type {}, not application/timestamp-reply: is the URL the TSA's?", .kind.as_deref().map_or_else(|| "(none)".into(), shown))]
    ContentType {
        /// Its type, if it gives one.
        kind: Option<String>,
    },
    /// A body shorter than its Content-Length.
    #[error("the TSA's reply was cut: {got} of its {length} bytes")]
    Cut {
        /// Bytes received.
        got: usize,
        /// Bytes announced.
        length: usize,
    },
    /// A chunked body not well formed.
    #[error("the TSA's chunked reply is malformed")]
    Chunks,
}

/// An `http://host[:port][/path]` URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// Host name or address (`[::1]` for IPv6, with its brackets).
    pub host: String,
    /// Port (80 by default).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

impl Url {
    /// Parses `text`; the error says what is wrong and what to give.
    pub fn parse(text: &str) -> Result<Url, HttpError> {
        let url = || text.to_string();
        if text.len() > 2000 || text.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(HttpError::UrlText { url: url() });
        }
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("https://") {
            return Err(HttpError::Https { url: url() });
        }
        let Some(rest) = lower.strip_prefix("http://").map(|_| &text[7..]) else {
            return Err(HttpError::NotHttp { url: url() });
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(HttpError::UserInfo { url: url() });
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (inside, after) = v6
                .split_once(']')
                .ok_or_else(|| HttpError::Ipv6 { url: url() })?;
            (format!("[{inside}]"), after.strip_prefix(':'))
        } else {
            match authority.split_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() || host == "[]" {
            return Err(HttpError::NoHost { url: url() });
        }
        let port = match port {
            None => 80,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| HttpError::Port { url: url() })?,
        };
        Ok(Url {
            host,
            port,
            path: path.to_string(),
        })
    }

    fn authority(&self) -> String {
        if self.port == 80 {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// POSTs `request` (a DER TimeStampReq) to `url` and returns the body of a 200 reply of type
/// `application/timestamp-reply`.
pub fn post(url: &Url, request: &[u8]) -> Result<Vec<u8>, HttpError> {
    let at = format!("http://{}{}", url.authority(), url.path);
    let host = url.host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<_> = (host, url.port)
        .to_socket_addrs()
        .map_err(|error| HttpError::Resolve {
            url: at.clone(),
            error,
        })?
        .collect();
    let mut last = None;
    let mut stream = None;
    for address in &addresses {
        match TcpStream::connect_timeout(address, TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(mut stream) = stream else {
        return Err(HttpError::Connect { url: at, last });
    };
    let io = |error: std::io::Error| HttpError::Io {
        url: at.clone(),
        error,
    };
    stream.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: emission-factory/{}\r\nContent-Type: application/timestamp-query\r\nAccept: application/timestamp-reply\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        url.path,
        url.authority(),
        env!("CARGO_PKG_VERSION"),
        request.len()
    );
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(request).map_err(io)?;
    stream.flush().map_err(io)?;
    let mut reply = Vec::new();
    stream
        .take(MAX_REPLY_BYTES as u64 + 1)
        .read_to_end(&mut reply)
        .map_err(|error| HttpError::ReadReply {
            url: at.clone(),
            error,
        })?;
    if reply.len() > MAX_REPLY_BYTES {
        return Err(HttpError::TooLarge { url: at });
    }
    body_of(&reply).map_err(|error| HttpError::Reply { url: at, error })
}

/// The body of an HTTP/1.x reply, if its status is 200 and its type a timestamp reply.
fn body_of(reply: &[u8]) -> Result<Vec<u8>, ReplyError> {
    let end = memchr::memmem::find(reply, b"\r\n\r\n").ok_or(ReplyError::NoHeaders)?;
    let head = std::str::from_utf8(&reply[..end]).map_err(|_| ReplyError::HeadersNotText)?;
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let mut parts = status.splitn(3, ' ');
    let (version, code) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    if !version.starts_with("HTTP/1.") {
        return Err(ReplyError::NotHttp1 {
            status: status.to_string(),
        });
    }
    if code != "200" {
        return Err(ReplyError::Status {
            status: status.to_string(),
        });
    }
    let mut length = None;
    let mut chunked = false;
    let mut kind = None;
    for line in lines {
        let (name, value) = line.split_once(':').ok_or_else(|| ReplyError::BadHeader {
            line: line.to_string(),
        })?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                let n: usize = value.parse().map_err(|_| ReplyError::ContentLength)?;
                if length.is_some_and(|l| l != n) {
                    return Err(ReplyError::TwoContentLengths);
                }
                length = Some(n);
            }
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "content-type" => kind = Some(value.to_ascii_lowercase()),
            _ => {}
        }
    }
    match kind
        .as_deref()
        .map(|k| k.split(';').next().unwrap_or_default().trim())
    {
        Some("application/timestamp-reply") | Some("application/timestamp-response") => {}
        other => {
            return Err(ReplyError::ContentType {
                kind: other.map(str::to_string),
            })
        }
    }
    let body = &reply[end + 4..];
    if chunked {
        return dechunk(body);
    }
    match length {
        Some(n) if body.len() >= n => Ok(body[..n].to_vec()),
        Some(length) => Err(ReplyError::Cut {
            got: body.len(),
            length,
        }),
        None => Ok(body.to_vec()),
    }
}

/// A chunked body (RFC 9112 §7.1), without trailers.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, ReplyError> {
    let bad = || ReplyError::Chunks;
    let mut out = Vec::new();
    loop {
        let line_end = memchr::memmem::find(body, b"\r\n").ok_or_else(bad)?;
        let size_text = std::str::from_utf8(&body[..line_end]).map_err(|_| bad())?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| bad())?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size.checked_add(2).ok_or_else(bad)? || &body[size..size + 2] != b"\r\n" {
            return Err(bad());
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_split_and_https_is_refused_with_the_file_mode() {
        let u = Url::parse("http://127.0.0.1:3180/tsa?x=1").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 3180, "/tsa?x=1")
        );
        let u = Url::parse("HTTP://tsa.example").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("tsa.example", 80, "/")
        );
        let u = Url::parse("http://[::1]:8080/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("[::1]", 8080));
        assert!(Url::parse("https://tsa.example/")
            .unwrap_err()
            .to_string()
            .contains("--tsa-request-out"));
        for bad in [
            "ftp://x",
            "http://",
            "http://h:0/",
            "http://h:99999/",
            "http://u@h/",
            "http://h /",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_are_read_by_length_or_chunks_and_others_refused() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: 3\r\n\r\nabcXX";
        assert_eq!(body_of(ok).unwrap(), b"abc");
        let chunked = b"HTTP/1.1 200 OK\r\ncontent-type: application/timestamp-reply\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n";
        assert_eq!(body_of(chunked).unwrap(), b"abc");
        let html = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html>";
        assert!(body_of(html).unwrap_err().to_string().contains("text/html"));
        let refused = b"HTTP/1.1 500 Internal Server Error\r\n\r\n";
        assert!(matches!(body_of(refused), Err(ReplyError::Status { .. })));
        assert!(body_of(refused).unwrap_err().to_string().contains("500"));
        let cut = b"HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: 9\r\n\r\nabc";
        assert!(matches!(
            body_of(cut),
            Err(ReplyError::Cut { got: 3, length: 9 })
        ));
        assert!(body_of(cut).unwrap_err().to_string().contains("cut"));
    }
}
