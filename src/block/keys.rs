//! Ed25519 keys in the PEM forms OpenSSL reads: PKCS#8 for the private key, SPKI for the
//! public key, and the raw 64-byte signature of FORMAT.md.

use crate::fs::files;
use crate::fs::open::{read_at_most, ReadError};
use crate::fs::FsError;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, KeypairBytes,
};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What an operator runs to make a signing key, as errors about one suggest.
const MAKE_ONE: &str =
    "make one with `emission-factory keygen --out DIR` or `openssl genpkey -algorithm ed25519`";

/// Why a key was not made, written out, read or accepted.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// A secret key file was refused or could not be read (a link, a mode that lets others
    /// in, too large...): see [`FsError`].
    #[error(transparent)]
    Fs(#[from] FsError),
    /// A PEM file (a public key) could not be read: missing, not a regular file, or larger
    /// than any key.
    #[error("cannot read {what} {}: {error}", .path.display())]
    Read {
        /// What the file is, e.g. `public key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why (shown in the sentence).
        error: ReadError,
    },
    /// A PEM file holds bytes that are not text: it is not a key file.
    #[error("{what} {} is not text (a PEM file is ASCII)", .path.display())]
    NotText {
        /// What the file is, e.g. `public key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// The operating system's random generator failed, so no key was made.
    #[error("the system's random generator failed: {0}")]
    Random(getrandom::Error),
    /// A private key could not be written as PKCS#8 PEM.
    #[error("cannot encode the private key: {0}")]
    EncodePrivate(ed25519_dalek::pkcs8::Error),
    /// A public key could not be written as SPKI (PEM or DER).
    #[error("cannot encode the public key: {0}")]
    EncodePublic(ed25519_dalek::pkcs8::spki::Error),
    /// The file given as a signing key is not text, so not a PEM key.
    #[error("{} is not a PEM key (it is not text); {}", .path.display(), MAKE_ONE)]
    SigningKeyNotText {
        /// The file.
        path: PathBuf,
    },
    /// The file given as a signing key holds a public key: signing needs the private key.
    #[error(
        "{} holds {what}: that is a public key, and signing needs the private key (signing-key.pem from keygen)",
        .path.display()
    )]
    SigningKeyIsPublic {
        /// The file.
        path: PathBuf,
        /// What it holds, e.g. `an Ed25519 public key (SPKI, ...)`.
        what: String,
    },
    /// The file given as a signing key holds a key of another algorithm than Ed25519.
    #[error(
        "{} holds {what}, but manifests are signed with Ed25519 keys only: {}",
        .path.display(),
        MAKE_ONE
    )]
    SigningKeyNotEd25519 {
        /// The file.
        path: PathBuf,
        /// What it holds, e.g. `an RSA private key (PKCS#1)`.
        what: String,
    },
    /// The file given as a signing key is not an Ed25519 private key in PKCS#8 PEM, nor a key
    /// this program can name.
    #[error(
        "{} is not an Ed25519 private key in PKCS#8 PEM ({error}); {}",
        .path.display(),
        MAKE_ONE
    )]
    NotSigningKey {
        /// The file.
        path: PathBuf,
        /// The parser's words (shown in the sentence).
        error: ed25519_dalek::pkcs8::Error,
    },
    /// The text given as a public key holds a private key, which must be kept secret: the
    /// public key is wanted.
    #[error(
        "this file holds {what}: that is a private key (keep it secret); give the public key (SPKI PEM, public-key.pem from keygen)"
    )]
    PublicKeyIsPrivate {
        /// What it holds, e.g. `an Ed25519 private key (PKCS#8, ...)`.
        what: String,
    },
    /// The text given as a public key holds a key of another algorithm than Ed25519, or
    /// something else than a key.
    #[error("this file holds {what}, but manifests are signed with Ed25519 keys only")]
    PublicKeyNotEd25519 {
        /// What it holds, e.g. `an RSA public key (SPKI, ...)`.
        what: String,
    },
    /// The text given as a public key is not an Ed25519 public key in SPKI PEM, nor a key this
    /// program can name.
    #[error("not an Ed25519 public key in SPKI PEM ({0})")]
    NotPublicKey(ed25519_dalek::pkcs8::spki::Error),
    /// A public key file was read but its key was refused: the file, then why.
    #[error("in {}", .path.display())]
    In {
        /// The file.
        path: PathBuf,
        /// Why the key was refused.
        #[source]
        source: Box<KeyError>,
    },
}

/// The most a PEM key file may hold: a key is a few hundred bytes.
pub const MAX_PEM_BYTES: u64 = 64 << 10;

/// Bytes in a raw Ed25519 signature.
pub const SIGNATURE_BYTES: u64 = 64;

/// Reads a PEM file of at most [`MAX_PEM_BYTES`] as text; `what` names it in errors.
fn read_pem(path: &Path, what: &'static str) -> Result<String, KeyError> {
    let bytes =
        read_at_most(path, MAX_PEM_BYTES, "a key file").map_err(|error| KeyError::Read {
            what,
            path: path.to_path_buf(),
            error,
        })?;
    String::from_utf8(bytes).map_err(|_| KeyError::NotText {
        what,
        path: path.to_path_buf(),
    })
}

/// A new key from the operating system's CSPRNG.
pub fn generate() -> Result<SigningKey, KeyError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(KeyError::Random)?;
    Ok(SigningKey::from_bytes(&secret))
}

/// The private key as PKCS#8 PEM, version 1 (without the public key), the form OpenSSL 3.0
/// reads and writes for Ed25519.
pub fn private_pem(key: &SigningKey) -> Result<String, KeyError> {
    let bytes = KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    };
    Ok(bytes
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(KeyError::EncodePrivate)?
        .to_string())
}

/// The public key as SPKI PEM.
pub fn public_pem(key: &VerifyingKey) -> Result<String, KeyError> {
    key.to_public_key_pem(LineEnding::LF)
        .map_err(KeyError::EncodePublic)
}

/// SHA-256 of the public key's DER (SPKI) bytes, as written in manifests.
pub fn public_key_sha256(key: &VerifyingKey) -> Result<[u8; 32], KeyError> {
    let der = key.to_public_key_der().map_err(KeyError::EncodePublic)?;
    Ok(Sha256::digest(der.as_bytes()).into())
}

/// Reads a PKCS#8 PEM Ed25519 private key (as written by `keygen` or `openssl genpkey`),
/// as a secret file: not through a link, and refused when group or others may read it
/// (see [`files::read_secret`]).
pub fn read_signing_key(path: &Path) -> Result<SigningKey, KeyError> {
    let secret = files::read_secret(
        path,
        "signing key",
        files::SECRET_LIMIT,
        files::Exposure::Refuse,
    )?;
    parse_signing_key(&secret.bytes, path)
}

/// Parses a PKCS#8 PEM Ed25519 private key read from `path` (which errors name). A key of
/// another algorithm or form is named as what it is.
pub fn parse_signing_key(pem: &[u8], path: &Path) -> Result<SigningKey, KeyError> {
    let path = path.to_path_buf();
    let Ok(text) = std::str::from_utf8(pem) else {
        return Err(KeyError::SigningKeyNotText { path });
    };
    SigningKey::from_pkcs8_pem(text).map_err(|error| match held(text) {
        Some(h) if h.kind == Kind::Public => KeyError::SigningKeyIsPublic { path, what: h.what },
        Some(h) if !h.ed25519 => KeyError::SigningKeyNotEd25519 { path, what: h.what },
        _ => KeyError::NotSigningKey { path, error },
    })
}

/// Reads an SPKI PEM Ed25519 public key (at most [`files::SECRET_LIMIT`] bytes are read).
pub fn read_public_key(path: &Path) -> Result<VerifyingKey, KeyError> {
    let text = read_pem(path, "public key")?;
    parse_public_key(&text).map_err(|e| KeyError::In {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

/// Parses an SPKI PEM Ed25519 public key. A key of another algorithm or form is named as
/// what it is.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, KeyError> {
    VerifyingKey::from_public_key_pem(text).map_err(|e| match held(text) {
        Some(h) if h.kind == Kind::Private => KeyError::PublicKeyIsPrivate { what: h.what },
        Some(h) if !h.ed25519 || h.kind != Kind::Public => {
            KeyError::PublicKeyNotEd25519 { what: h.what }
        }
        _ => KeyError::NotPublicKey(e),
    })
}

/// Signs `message`: the raw 64 bytes.
pub fn sign(key: &SigningKey, message: &[u8]) -> [u8; 64] {
    key.sign(message).to_bytes()
}

/// Why a signature is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// There is no signature to check.
    #[error("no signature")]
    Missing,
    /// Not the 64 bytes of an Ed25519 signature.
    #[error("the signature is {0} bytes, not 64")]
    Length(usize),
    /// Not the key's signature of the bytes.
    #[error("the signature does not match the manifest and this public key")]
    Mismatch,
}

/// Checks a raw 64-byte signature.
pub fn check(key: &VerifyingKey, message: &[u8], signature: &[u8]) -> Result<(), SignatureError> {
    let sig =
        Signature::from_slice(signature).map_err(|_| SignatureError::Length(signature.len()))?;
    key.verify(message, &sig)
        .map_err(|_| SignatureError::Mismatch)
}

/// What a PEM file holds, as far as its label and algorithm identifier tell.
struct Held {
    /// For messages: "an RSA private key (PKCS#8, algorithm OID 1.2.840.113549.1.1.1)".
    what: String,
    kind: Kind,
    ed25519: bool,
}

#[derive(PartialEq, Eq)]
enum Kind {
    Private,
    Public,
    Other,
}

/// Says what a PEM file holds, from its first label and, for PKCS#8 and SPKI, its algorithm
/// OID (and an EC key's curve). `None` when the text is not PEM at all.
fn held(text: &str) -> Option<Held> {
    use ed25519_dalek::pkcs8::spki::SubjectPublicKeyInfoRef;
    use ed25519_dalek::pkcs8::{PrivateKeyInfo, SecretDocument};
    let label = first_label(text)?;
    let der = SecretDocument::from_pem(text).ok().map(|(_, doc)| doc);
    let der = der.as_ref().map(SecretDocument::as_bytes);
    let (kind, what, ed25519) = match label {
        "PRIVATE KEY" => match der.and_then(|d| PrivateKeyInfo::try_from(d).ok()) {
            Some(info) => {
                let oid = info.algorithm.oid.to_string();
                let curve = info.algorithm.parameters_oid().ok().map(|c| c.to_string());
                (
                    Kind::Private,
                    format!(
                        "{} private key{} (PKCS#8, algorithm OID {oid})",
                        algorithm_name(&oid),
                        curve_words(curve.as_deref())
                    ),
                    oid == ED25519_OID,
                )
            }
            None => (Kind::Private, "a PKCS#8 private key".to_string(), false),
        },
        "PUBLIC KEY" => match der.and_then(|d| SubjectPublicKeyInfoRef::try_from(d).ok()) {
            Some(info) => {
                let oid = info.algorithm.oid.to_string();
                let curve = info.algorithm.parameters_oid().ok().map(|c| c.to_string());
                (
                    Kind::Public,
                    format!(
                        "{} public key{} (SPKI, algorithm OID {oid})",
                        algorithm_name(&oid),
                        curve_words(curve.as_deref())
                    ),
                    oid == ED25519_OID,
                )
            }
            None => (Kind::Public, "an SPKI public key".to_string(), false),
        },
        "RSA PRIVATE KEY" => (Kind::Private, "an RSA private key (PKCS#1)".into(), false),
        "EC PRIVATE KEY" => (Kind::Private, "an EC private key (SEC1)".into(), false),
        "DSA PRIVATE KEY" => (Kind::Private, "a DSA private key".into(), false),
        "OPENSSH PRIVATE KEY" => (
            Kind::Private,
            "a private key in OpenSSH's own format".into(),
            false,
        ),
        "ENCRYPTED PRIVATE KEY" => (
            Kind::Private,
            "an encrypted PKCS#8 private key (this program reads unencrypted keys only)".into(),
            false,
        ),
        "RSA PUBLIC KEY" => (Kind::Public, "an RSA public key (PKCS#1)".into(), false),
        "CERTIFICATE" => (Kind::Other, "a certificate".into(), false),
        other => (Kind::Other, format!("a PEM block labelled {other}"), false),
    };
    Some(Held {
        what,
        kind,
        ed25519,
    })
}

/// The algorithm identifier of Ed25519 (RFC 8410).
const ED25519_OID: &str = "1.3.101.112";

/// "an RSA", "an EC", "an Ed448"...: the article and name of the algorithm of a key's OID.
fn algorithm_name(oid: &str) -> String {
    let known = match oid {
        "1.2.840.113549.1.1.1" => "an RSA",
        "1.2.840.113549.1.1.10" => "an RSA-PSS",
        "1.2.840.10045.2.1" => "an EC",
        "1.2.840.10040.4.1" => "a DSA",
        "1.2.840.113549.1.3.1" | "1.2.840.10046.2.1" => "a Diffie-Hellman",
        "1.3.101.110" => "an X25519",
        "1.3.101.111" => "an X448",
        "1.3.101.112" => "an Ed25519",
        "1.3.101.113" => "an Ed448",
        "1.2.156.10197.1.301" => "an SM2",
        _ => "an unrecognised",
    };
    known.to_string()
}

/// " on curve P-256" for an EC key's named curve; nothing for other keys.
fn curve_words(curve: Option<&str>) -> String {
    let name = match curve {
        None => return String::new(),
        Some("1.2.840.10045.3.1.7") => "P-256",
        Some("1.3.132.0.34") => "P-384",
        Some("1.3.132.0.35") => "P-521",
        Some("1.3.132.0.10") => "secp256k1",
        Some("1.3.132.0.33") => "P-224",
        Some("1.2.840.10045.3.1.1") => "P-192",
        Some("1.3.36.3.3.2.8.1.1.7") => "brainpoolP256r1",
        Some("1.3.36.3.3.2.8.1.1.11") => "brainpoolP384r1",
        Some("1.3.36.3.3.2.8.1.1.13") => "brainpoolP512r1",
        Some(other) => return format!(" on curve {other}"),
    };
    format!(" on curve {name}")
}

/// The label of the first `-----BEGIN <label>-----` line.
fn first_label(text: &str) -> Option<&str> {
    let start = text.find("-----BEGIN ")? + "-----BEGIN ".len();
    let rest = &text[start..];
    let end = rest.find("-----")?;
    let label = &rest[..end];
    (label.len() <= 64
        && label
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == ' '))
    .then_some(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_round_trip_and_signature() {
        let key = generate().unwrap();
        let pem = private_pem(&key).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let back = SigningKey::from_pkcs8_pem(&pem).unwrap();
        assert_eq!(back.to_bytes(), key.to_bytes());
        let public = public_pem(&key.verifying_key()).unwrap();
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
        let vk = parse_public_key(&public).unwrap();
        let sig = sign(&key, b"manifest");
        assert_eq!(check(&vk, b"manifest", &sig), Ok(()));
        assert!(check(&vk, b"manifest!", &sig).is_err());
        assert!(check(&vk, b"manifest", &sig[..63]).is_err());
    }

    // Throwaway keys made with `openssl genpkey` for these tests only.
    const RSA_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDnYLTW2PGwz16bMNA9+QFxEkVB
vkRCu5YlvojzJn6fQSZoecTMF0Wv8fecai4xNNjTn8ao41jEbEagvKyuw7XCRtrU
7Z3lMiXwII1jXSpdVkne7E7nIQh/uJDnEKODuQXqnKhGquoS0/RAzmzAnK3+TVK2
3Sw+r40Q081V0x3d4QIDAQAB
-----END PUBLIC KEY-----
";
    const EC_P384_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDADLfR/3rJasz/ow1n4
rILpXrVFr6LhCccX/pbcsanhDMouUJyriA+L3vWFPdQTTTGhZANiAATA/pPwhYdO
DieLEIsXb3UOFCO5L8WHQTP00JioG5ND3n6okilM1s0o2713NZDlwtjZwIl00LxK
x7KPkC5S3ObzRMlQhvKZlicMGU/yOsGYmBEJxtSojhjplDi+V9HgV08=
-----END PRIVATE KEY-----
";
    const ED448_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MEcCAQAwBQYDK2VxBDsEOa9Jzmuj1HbQZqIRRSKW5OkwyO8XIEFs1XJop70XbatO
dQnJI/zaV4QbHpH1oYgfxABie95JMwO54g==
-----END PRIVATE KEY-----
";
    const X25519_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VuAyEA6K37C59j07QbpMMq6cfuoXkKJ4m+vc6+mqU2GGyuMFo=
-----END PUBLIC KEY-----
";

    fn signing_error(pem: &str) -> String {
        format!(
            "{:#}",
            parse_signing_key(pem.as_bytes(), Path::new("k.pem")).unwrap_err()
        )
    }

    fn public_error(pem: &str) -> String {
        format!("{:#}", parse_public_key(pem).unwrap_err())
    }

    #[test]
    fn a_key_of_another_algorithm_is_named_as_what_it_is() {
        let err = signing_error(EC_P384_PRIVATE);
        assert!(
            err.contains("k.pem holds an EC private key on curve P-384"),
            "{err}"
        );
        assert!(err.contains("1.2.840.10045.2.1"), "{err}");
        assert!(!err.contains("1.3.101.112"), "{err}");
        let err = signing_error(ED448_PRIVATE);
        assert!(err.contains("an Ed448 private key"), "{err}");
        let err =
            signing_error("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        assert!(err.contains("an RSA private key (PKCS#1)"), "{err}");
        let err = signing_error(RSA_PUBLIC);
        assert!(err.contains("an RSA public key"), "{err}");
        assert!(err.contains("that is a public key"), "{err}");

        let err = public_error(RSA_PUBLIC);
        assert!(
            err.contains("an RSA public key (SPKI, algorithm OID 1.2.840.113549.1.1.1)"),
            "{err}"
        );
        let err = public_error(X25519_PUBLIC);
        assert!(err.contains("an X25519 public key"), "{err}");
        let err = public_error(EC_P384_PRIVATE);
        assert!(err.contains("that is a private key"), "{err}");
        let ours = private_pem(&generate().unwrap()).unwrap();
        let err = public_error(&ours);
        assert!(err.contains("an Ed25519 private key"), "{err}");
        // Not PEM at all: the parser's own words.
        let err = public_error("hello");
        assert!(
            err.contains("not an Ed25519 public key in SPKI PEM"),
            "{err}"
        );
        let err = signing_error("hello");
        assert!(
            err.contains("k.pem is not an Ed25519 private key in PKCS#8 PEM"),
            "{err}"
        );
    }
}
