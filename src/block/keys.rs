//! Ed25519 keys in the PEM forms OpenSSL reads: PKCS#8 for the private key, SPKI for the
//! public key, and the raw 64-byte signature of FORMAT.md.

use crate::untrusted::read_at_most;
use anyhow::{anyhow, Context, Result};
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, KeypairBytes,
};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The most a PEM key file may hold: a key is a few hundred bytes.
pub const MAX_PEM_BYTES: u64 = 64 << 10;

/// Bytes in a raw Ed25519 signature.
pub const SIGNATURE_BYTES: u64 = 64;

/// Reads a PEM file of at most [`MAX_PEM_BYTES`] as text; `what` names it in errors.
fn read_pem(path: &Path, what: &str) -> Result<String> {
    let bytes = read_at_most(path, MAX_PEM_BYTES, "a key file")
        .map_err(|e| anyhow!("cannot read {what} {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| {
        anyhow!(
            "{what} {} is not text (a PEM file is ASCII)",
            path.display()
        )
    })
}

/// A new key from the operating system's CSPRNG.
pub fn generate() -> Result<SigningKey> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret)
        .map_err(|e| anyhow!("the system's random generator failed: {e}"))?;
    Ok(SigningKey::from_bytes(&secret))
}

/// The private key as PKCS#8 PEM, version 1 (without the public key), the form OpenSSL 3.0
/// reads and writes for Ed25519.
pub fn private_pem(key: &SigningKey) -> Result<String> {
    let bytes = KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    };
    Ok(bytes
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| anyhow!("cannot encode the private key: {e}"))?
        .to_string())
}

/// The public key as SPKI PEM.
pub fn public_pem(key: &VerifyingKey) -> Result<String> {
    key.to_public_key_pem(LineEnding::LF)
        .map_err(|e| anyhow!("cannot encode the public key: {e}"))
}

/// SHA-256 of the public key's DER (SPKI) bytes, as written in manifests.
pub fn public_key_sha256(key: &VerifyingKey) -> Result<[u8; 32]> {
    let der = key
        .to_public_key_der()
        .map_err(|e| anyhow!("cannot encode the public key: {e}"))?;
    Ok(Sha256::digest(der.as_bytes()).into())
}

/// Reads a PKCS#8 PEM Ed25519 private key (as written by `keygen` or `openssl genpkey`).
pub fn read_signing_key(path: &Path) -> Result<SigningKey> {
    let text = read_pem(path, "signing key")?;
    SigningKey::from_pkcs8_pem(&text).map_err(|e| {
        anyhow!(
            "{} is not an Ed25519 private key in PKCS#8 PEM ({e}); make one with `emission-factory keygen --out DIR` or `openssl genpkey -algorithm ed25519`",
            path.display()
        )
    })
}

/// Reads an SPKI PEM Ed25519 public key.
pub fn read_public_key(path: &Path) -> Result<VerifyingKey> {
    let text = read_pem(path, "public key")?;
    parse_public_key(&text).with_context(|| format!("in {}", path.display()))
}

/// Parses an SPKI PEM Ed25519 public key.
pub fn parse_public_key(text: &str) -> Result<VerifyingKey> {
    VerifyingKey::from_public_key_pem(text)
        .map_err(|e| anyhow!("not an Ed25519 public key in SPKI PEM ({e})"))
}

/// Signs `message`: the raw 64 bytes.
pub fn sign(key: &SigningKey, message: &[u8]) -> [u8; 64] {
    key.sign(message).to_bytes()
}

/// Checks a raw 64-byte signature.
pub fn check(key: &VerifyingKey, message: &[u8], signature: &[u8]) -> Result<(), String> {
    let sig = Signature::from_slice(signature)
        .map_err(|_| format!("the signature is {} bytes, not 64", signature.len()))?;
    key.verify(message, &sig)
        .map_err(|_| "the signature does not match the manifest and this public key".to_string())
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
}
