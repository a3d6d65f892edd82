//! The one network call of the program: an RFC 3161 request POSTed to a time-stamping
//! authority over plain HTTP/1.1 (RFC 3161 §3.4), on std's TcpStream. Plain HTTP is enough:
//! the token is signed by the TSA and checked here before it is kept, so the path to the TSA
//! need not be trusted. `https://` is refused with the way round it (the file mode).
//! The reply is hostile: its size is bounded, its headers are parsed strictly, and nothing of
//! it is echoed unescaped.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Largest reply read (a token with a certificate chain is a few kilobytes).
pub const MAX_REPLY_BYTES: usize = 1 << 20;
/// How long a connection, a write or a read may take.
const TIMEOUT: Duration = Duration::from_secs(30);

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
    pub fn parse(text: &str) -> Result<Url, String> {
        let shown = crate::untrusted::shown(text);
        if text.len() > 2000 || text.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(format!(
                "--tsa-url {shown}: a URL is printable ASCII without spaces, at most 2000 characters"
            ));
        }
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("https://") {
            return Err(format!(
                "--tsa-url {shown}: https is not supported (this program speaks plain HTTP to a TSA: the token is signed and checked, so the transport need not be trusted). Give the TSA's http:// URL, or use the file mode: --tsa-request-out FILE, send FILE with `curl --data-binary @FILE -H 'Content-Type: application/timestamp-query' URL -o REPLY`, then `emission-factory timestamp FOLDER --tsa-reply REPLY`"
            ));
        }
        let Some(rest) = lower.strip_prefix("http://").map(|_| &text[7..]) else {
            return Err(format!("--tsa-url {shown}: give an http:// URL"));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(format!(
                "--tsa-url {shown}: a user or password in the URL is not supported"
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (inside, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("--tsa-url {shown}: an IPv6 address is closed with ]"))?;
            (format!("[{inside}]"), after.strip_prefix(':'))
        } else {
            match authority.split_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (authority.to_string(), None),
            }
        };
        if host.is_empty() || host == "[]" {
            return Err(format!("--tsa-url {shown}: no host"));
        }
        let port = match port {
            None => 80,
            Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                format!("--tsa-url {shown}: the port is not a number from 1 to 65535")
            })?,
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
pub fn post(url: &Url, request: &[u8]) -> Result<Vec<u8>, String> {
    let at = format!("http://{}{}", url.authority(), url.path);
    let shown = crate::untrusted::shown(&at);
    let host = url.host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<_> = (host, url.port)
        .to_socket_addrs()
        .map_err(|e| format!("{shown}: cannot resolve the TSA's host: {e}"))?
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
    let mut stream = stream.ok_or_else(|| {
        format!(
            "{shown}: cannot connect to the TSA: {}",
            last.map_or_else(|| "no address".to_string(), |e| e.to_string())
        )
    })?;
    let io = |e: std::io::Error| format!("{shown}: {e}");
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
        .map_err(|e| format!("{shown}: reading the TSA's reply: {e}"))?;
    if reply.len() > MAX_REPLY_BYTES {
        return Err(format!(
            "{shown}: the TSA's reply is larger than {MAX_REPLY_BYTES} bytes: not read"
        ));
    }
    body_of(&reply).map_err(|m| format!("{shown}: {m}"))
}

/// The body of an HTTP/1.x reply, if its status is 200 and its type a timestamp reply.
fn body_of(reply: &[u8]) -> Result<Vec<u8>, String> {
    let end = memchr::memmem::find(reply, b"\r\n\r\n")
        .ok_or_else(|| "the TSA's reply is not HTTP (no end of headers)".to_string())?;
    let head = std::str::from_utf8(&reply[..end])
        .map_err(|_| "the TSA's reply headers are not text".to_string())?;
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let mut parts = status.splitn(3, ' ');
    let (version, code) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    if !version.starts_with("HTTP/1.") {
        return Err(format!(
            "the TSA's reply is not HTTP/1.x: {}",
            crate::untrusted::shown(status)
        ));
    }
    if code != "200" {
        return Err(format!(
            "the TSA answered {} instead of a token",
            crate::untrusted::shown(status)
        ));
    }
    let mut length = None;
    let mut chunked = false;
    let mut kind = None;
    for line in lines {
        let (name, value) = line.split_once(':').ok_or_else(|| {
            format!(
                "the TSA's reply has a bad header: {}",
                crate::untrusted::shown(line)
            )
        })?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                let n: usize = value
                    .parse()
                    .map_err(|_| "the TSA's reply has a bad Content-Length".to_string())?;
                if length.is_some_and(|l| l != n) {
                    return Err("the TSA's reply has two Content-Lengths".into());
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
            return Err(format!(
            "the TSA's reply is of type {}, not application/timestamp-reply: is the URL the TSA's?",
            other.map_or_else(|| "(none)".into(), crate::untrusted::shown)
        ))
        }
    }
    let body = &reply[end + 4..];
    if chunked {
        return dechunk(body);
    }
    match length {
        Some(n) if body.len() >= n => Ok(body[..n].to_vec()),
        Some(n) => Err(format!(
            "the TSA's reply was cut: {} of its {n} bytes",
            body.len()
        )),
        None => Ok(body.to_vec()),
    }
}

/// A chunked body (RFC 9112 §7.1), without trailers.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let bad = || "the TSA's chunked reply is malformed".to_string();
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
        assert!(body_of(html).unwrap_err().contains("text/html"));
        let refused = b"HTTP/1.1 500 Internal Server Error\r\n\r\n";
        assert!(body_of(refused).unwrap_err().contains("500"));
        let cut = b"HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: 9\r\n\r\nabc";
        assert!(body_of(cut).unwrap_err().contains("cut"));
    }
}
