//! RFC 3161 in DER: the request this program sends, and the checks of a reply and of the token
//! it holds (a CMS SignedData over a TSTInfo, RFC 5652), against the TSA certificate given.
//! Everything here reads hostile bytes: every length is the DER decoder's, bounded by the
//! caller's read, and every failure is a message, never a panic.

use cms::cert::x509::Certificate;
use cms::content_info::ContentInfo;
use cms::signed_data::{EncapsulatedContentInfo, SignerIdentifier, SignerInfo};
use der::asn1::{Any, Int, ObjectIdentifier, OctetString};
use der::{
    Decode, DecodeValue, Encode, FixedTag, Header, Reader, Sequence, SliceReader, Tag, Tagged,
};
use sha2::Digest;
use x509_tsp::{MessageImprint, TimeStampReq, TimeStampResp, TspVersion};

/// id-sha256.
pub const SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
/// id-signedData (RFC 5652).
const SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
/// id-ct-TSTInfo (RFC 3161).
const TST_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");
/// Signed attributes (RFC 5652, RFC 2634, RFC 5035).
const CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
const MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
const SIGNING_CERTIFICATE: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.12");
const SIGNING_CERTIFICATE_V2: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.47");
/// Extensions of the TSA certificate.
const EXTENDED_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
const TIME_STAMPING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.8");
const SUBJECT_KEY_IDENTIFIER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.14");
/// Public keys and signature algorithms.
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const ECDSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const ECDSA_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.4");
const P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");

/// A TSTInfo (RFC 3161 §2.4.2), with its time kept as it was encoded: `der`'s
/// GeneralizedTime refuses the fractions of a second that many TSAs write.
#[derive(Clone, Debug, Sequence)]
struct TstInfo {
    version: TspVersion,
    policy: ObjectIdentifier,
    message_imprint: MessageImprint,
    serial_number: Int,
    gen_time: Any,
    #[asn1(optional = "true")]
    accuracy: Option<x509_tsp::Accuracy>,
    #[asn1(default = "Default::default")]
    ordering: bool,
    #[asn1(optional = "true")]
    nonce: Option<Int>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    tsa: Option<Any>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    extensions: Option<Any>,
}

/// A SignedData (RFC 5652 §5.1) as a token holds it, read loosely where this program needs
/// nothing: the certificates and CRLs it carries are skipped (OpenSSL, for one, may carry the
/// TSA's certificate twice, which `cms`'s strict SET OF refuses), and the signer infos are read
/// one by one (more than one is refused by the caller).
struct TokenSignedData {
    encap_content_info: EncapsulatedContentInfo,
    signer_infos: Vec<SignerInfo>,
}

impl FixedTag for TokenSignedData {
    const TAG: Tag = Tag::Sequence;
}

impl<'a> DecodeValue<'a> for TokenSignedData {
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        reader.read_nested(header.length, |r| {
            let _version = cms::content_info::CmsVersion::decode(r)?;
            let _digest_algorithms = Any::decode(r)?;
            let encap_content_info = EncapsulatedContentInfo::decode(r)?;
            let mut next = Any::decode(r)?;
            // [0] certificates, [1] crls.
            while next.tag().is_context_specific() {
                next = Any::decode(r)?;
            }
            if next.tag() != Tag::Set {
                return Err(der::Tag::Set.value_error());
            }
            let mut infos = SliceReader::new(next.value())?;
            let mut signer_infos = Vec::new();
            while !infos.is_finished() {
                signer_infos.push(SignerInfo::decode(&mut infos)?);
            }
            Ok(TokenSignedData {
                encap_content_info,
                signer_infos,
            })
        })
    }
}

/// SigningCertificate (RFC 2634 §5.4) and SigningCertificateV2 (RFC 5035 §3): only their first
/// ESSCertID matters, the one of the signer's certificate.
#[derive(Clone, Debug, Sequence)]
struct SigningCertificate {
    certs: Vec<EssCertId>,
    #[asn1(optional = "true")]
    policies: Option<Any>,
}

#[derive(Clone, Debug, Sequence)]
struct EssCertId {
    cert_hash: OctetString,
    #[asn1(optional = "true")]
    issuer_serial: Option<Any>,
}

#[derive(Clone, Debug, Sequence)]
struct SigningCertificateV2 {
    certs: Vec<EssCertIdV2>,
    #[asn1(optional = "true")]
    policies: Option<Any>,
}

#[derive(Clone, Debug, Sequence)]
struct EssCertIdV2 {
    /// DEFAULT id-sha256.
    #[asn1(optional = "true")]
    hash_algorithm: Option<x509_cert::spki::AlgorithmIdentifierOwned>,
    cert_hash: OctetString,
    #[asn1(optional = "true")]
    issuer_serial: Option<Any>,
}

/// What is wrong with a TSA certificate, a request, a reply or a token. Each message says
/// what was found; the caller names the file it came from.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A PEM that cannot be decoded.
    #[error("not a PEM certificate: {0}")]
    NotPem(der::pem::Error),
    /// A PEM of another label.
    #[error("a PEM \"{}\", not a \"CERTIFICATE\"", crate::untrusted::shown(.label))]
    PemLabel {
        /// The PEM's label, as written.
        label: String,
    },
    /// Neither PEM nor DER of a certificate.
    #[error("not an X.509 certificate (PEM or DER): {0}")]
    NotCertificate(der::Error),
    /// Two extended key usage extensions.
    #[error("it has two extended key usage extensions")]
    TwoKeyUsages,
    /// No extended key usage.
    #[error(
        "it has no extended key usage: a TSA certificate has one, critical, of timeStamping only (RFC 3161 §2.3)"
    )]
    NoKeyUsage,
    /// An extended key usage that cannot be read.
    #[error("its extended key usage cannot be read: {0}")]
    KeyUsageUnreadable(der::Error),
    /// An extended key usage other than timeStamping alone.
    #[error(
        "its extended key usage is {}, not timeStamping (1.3.6.1.5.5.7.3.8) alone: it is not a TSA certificate (RFC 3161 §2.3)",
        oids(.usages)
    )]
    NotTimeStamping {
        /// The usages it has.
        usages: Vec<ObjectIdentifier>,
    },
    /// An extended key usage not marked critical.
    #[error(
        "its extended key usage (timeStamping) is not critical: RFC 3161 §2.3 requires it critical"
    )]
    KeyUsageNotCritical,
    /// The system gave no random bytes for a nonce.
    #[error("no random nonce: {0}")]
    Nonce(getrandom::Error),
    /// A request that cannot be encoded.
    #[error("{0}")]
    Encoding(der::Error),
    /// Bytes that are not a TimeStampReq.
    #[error("not a TimeStampReq: {0}")]
    NotRequest(der::Error),
    /// A request over another hash.
    #[error("not a request over a SHA-256")]
    RequestNotSha256,
    /// A request whose hash is not 32 bytes.
    #[error("its hash is not 32 bytes long")]
    RequestHashLength,
    /// A request without a nonce.
    #[error("it has no nonce")]
    RequestNoNonce,
    /// Bytes that are not a TimeStampResp.
    #[error("not an RFC 3161 reply (TimeStampResp): {0}")]
    NotReply(der::Error),
    /// A reply that grants nothing.
    #[error("the TSA did not grant a token: status {status:?}{}", said_text(.said))]
    NotGranted {
        /// Its status.
        status: cmpv2::status::PkiStatus,
        /// What the TSA said, escaped.
        said: Vec<String>,
    },
    /// A granted reply without a token.
    #[error("the reply says granted but holds no token")]
    NoToken,
    /// A token of another content type.
    #[error("the token is a {content_type} content, not a SignedData")]
    NotSignedData {
        /// Its content type.
        content_type: ObjectIdentifier,
    },
    /// A SignedData that cannot be read.
    #[error("the token's SignedData cannot be read: {0}")]
    SignedDataUnreadable(der::Error),
    /// A SignedData over another content.
    #[error("the token signs a {content_type} content, not a TSTInfo")]
    NotTstInfo {
        /// The content type it signs.
        content_type: ObjectIdentifier,
    },
    /// A SignedData without its content.
    #[error("the token holds no TSTInfo")]
    NoTstInfo,
    /// A TSTInfo not in an OCTET STRING.
    #[error("the token's TSTInfo is not an OCTET STRING: {0}")]
    TstInfoNotOctets(der::Error),
    /// A TSTInfo that cannot be read.
    #[error("the token's TSTInfo cannot be read: {0}")]
    TstInfoUnreadable(der::Error),
    /// A token over another hash than SHA-256.
    #[error("the token is over a {oid} hash, not the SHA-256 this program asks for")]
    ImprintAlgorithm {
        /// The hash it is over.
        oid: ObjectIdentifier,
    },
    /// A token over another file.
    #[error(
        "the token is over the SHA-256 {}, and the file's is {}: it is a token of another file",
        hex::encode(.token),
        hex::encode(.file)
    )]
    OtherFile {
        /// The hash the token is over.
        token: Vec<u8>,
        /// The file's.
        file: [u8; 32],
    },
    /// Not exactly one signature.
    #[error("the token has {count} signatures; an RFC 3161 token has the TSA's only")]
    Signatures {
        /// How many there are.
        count: usize,
    },
    /// A digest algorithm not accepted.
    #[error(
        "the token's digest algorithm {oid} is not one this program accepts (SHA-256, SHA-384, SHA-512)"
    )]
    DigestAlgorithm {
        /// The algorithm.
        oid: ObjectIdentifier,
    },
    /// No signed attributes.
    #[error("the token's signature has no signed attributes (RFC 3161 requires them)")]
    NoSignedAttributes,
    /// A signed attribute twice, or with several values.
    #[error("the token's signed attribute {name} is there twice, or with several values")]
    AttributeTwice {
        /// The attribute.
        name: &'static str,
    },
    /// No content-type attribute.
    #[error("the token's signed attributes have no content type")]
    NoContentType,
    /// A content-type attribute that cannot be read.
    #[error("the token's content-type attribute cannot be read: {0}")]
    ContentTypeUnreadable(der::Error),
    /// A signed content type other than TSTInfo.
    #[error("the token's signed content type is not TSTInfo")]
    ContentTypeNotTstInfo,
    /// No message-digest attribute.
    #[error("the token's signed attributes have no message digest")]
    NoMessageDigest,
    /// A message-digest attribute that cannot be read.
    #[error("the token's message-digest attribute cannot be read: {0}")]
    MessageDigestUnreadable(der::Error),
    /// A signed digest that is not the TSTInfo's.
    #[error(
        "the token's signed message digest is not the digest of its TSTInfo: the token was altered"
    )]
    DigestMismatch,
    /// Signed attributes that cannot be encoded again.
    #[error("the token's signed attributes cannot be encoded: {0}")]
    AttributesEncoding(der::Error),
    /// A time outside the certificate's validity.
    #[error(
        "the token's time {time} is outside the TSA certificate's validity ({not_before} to {not_after})"
    )]
    OutsideValidity {
        /// The token's time, RFC 3339.
        time: String,
        /// The certificate's first day.
        not_before: x509_cert::time::Time,
        /// Its last.
        not_after: x509_cert::time::Time,
    },
    /// A signer other than the certificate given.
    #[error(
        "the token was signed by another TSA than the certificate given ({}): its signer is not that certificate",
        crate::untrusted::shown(.subject)
    )]
    OtherSigner {
        /// The subject of the certificate given.
        subject: String,
    },
    /// A signing-certificate(-v2) attribute that cannot be read.
    #[error("the token's {name} attribute cannot be read: {error}")]
    SigningCertificateUnreadable {
        /// `signing-certificate` or `signing-certificate-v2`.
        name: &'static str,
        /// Why.
        error: der::Error,
    },
    /// An empty signing-certificate(-v2) attribute.
    #[error("the token's {name} attribute is empty")]
    SigningCertificateEmpty {
        /// `signing-certificate` or `signing-certificate-v2`.
        name: &'static str,
    },
    /// An ESSCertIDv2 of a hash not accepted.
    #[error("the token's ESSCertIDv2 uses the hash {oid}, not one this program accepts")]
    EssCertHash {
        /// The hash.
        oid: ObjectIdentifier,
    },
    /// An ESSCertID of another certificate.
    #[error(
        "the token's signing-certificate attribute names another certificate than the TSA certificate given ({}): the token is another TSA's",
        crate::untrusted::shown(.subject)
    )]
    AnotherCertificate {
        /// The subject of the certificate given.
        subject: String,
    },
    /// No ESSCertID.
    #[error(
        "the token's signed attributes do not name the TSA's certificate (no ESSCertID: RFC 3161 §2.4.1 requires one)"
    )]
    NoEssCertId,
    /// The certificate's key cannot be encoded.
    #[error("the TSA certificate's key cannot be encoded: {0}")]
    KeyEncoding(der::Error),
    /// The certificate's key cannot be read.
    #[error("the TSA certificate's {kind} key cannot be read: {reason}")]
    KeyUnreadable {
        /// `RSA` or `EC`.
        kind: &'static str,
        /// Why.
        reason: String,
    },
    /// A signature that does not verify.
    #[error(
        "the token's signature does not verify with the key of the TSA certificate given ({}): the token was altered, or is another TSA's",
        crate::untrusted::shown(.subject)
    )]
    BadSignature {
        /// The subject of the certificate given.
        subject: String,
    },
    /// A signature algorithm that does not go with the key.
    #[error("the token's signature algorithm {oid} does not go with an {kind} key")]
    SignatureAlgorithm {
        /// The algorithm.
        oid: ObjectIdentifier,
        /// `RSA` or `EC`.
        kind: &'static str,
    },
    /// A signature hash not accepted.
    #[error("the token's signature hash {oid} is not one this program accepts")]
    SignatureHash {
        /// The hash.
        oid: ObjectIdentifier,
    },
    /// A key neither RSA nor EC.
    #[error(
        "the TSA certificate's key is a {oid} key: this program checks RSA and ECDSA (P-256, P-384) tokens"
    )]
    KeyAlgorithm {
        /// The key's algorithm.
        oid: ObjectIdentifier,
    },
    /// An EC key on another curve.
    #[error(
        "the TSA certificate's EC key is not on P-256 or P-384: this program does not check it"
    )]
    Curve,
    /// A genTime not as RFC 3161 writes it.
    #[error("the token's genTime is not a GeneralizedTime in UTC (YYYYMMDDHHMMSS[.f]Z)")]
    GenTime,
    /// An accuracy not as RFC 3161 writes it (millis or micros outside 1 to 999), or too large.
    #[error("the token's accuracy is not as RFC 3161 writes it (millis and micros 1 to 999)")]
    Accuracy,
}

fn oids(list: &[ObjectIdentifier]) -> String {
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn said_text(said: &[String]) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join("; "))
    }
}

/// A TSA's certificate, read from the PEM the operator or the auditor gives, with the checks
/// RFC 3161 §2.3 asks of it: an extended key usage, critical, of timeStamping only.
#[derive(Clone, Debug)]
pub struct TsaCert {
    /// The certificate.
    pub cert: Certificate,
    /// Its DER bytes.
    pub der: Vec<u8>,
    /// SHA-256 of its DER bytes: what a record or a seal pins.
    pub sha256: [u8; 32],
    /// Its subject, as text (for messages; escaped by the caller).
    pub subject: String,
}

impl TsaCert {
    /// Parses a certificate (PEM or DER) and checks that it is a TSA's.
    pub fn parse(bytes: &[u8]) -> Result<TsaCert, TokenError> {
        let der = if bytes.starts_with(b"-----BEGIN") {
            let (label, der) = der::pem::decode_vec(bytes).map_err(TokenError::NotPem)?;
            if label != "CERTIFICATE" {
                return Err(TokenError::PemLabel {
                    label: label.to_string(),
                });
            }
            der
        } else {
            bytes.to_vec()
        };
        let cert = Certificate::from_der(&der).map_err(TokenError::NotCertificate)?;
        let mut eku = None;
        for ext in cert.tbs_certificate.extensions.iter().flatten() {
            if ext.extn_id == EXTENDED_KEY_USAGE {
                if eku.is_some() {
                    return Err(TokenError::TwoKeyUsages);
                }
                eku = Some(ext);
            }
        }
        let Some(eku) = eku else {
            return Err(TokenError::NoKeyUsage);
        };
        let usages = x509_cert::ext::pkix::ExtendedKeyUsage::from_der(eku.extn_value.as_bytes())
            .map_err(TokenError::KeyUsageUnreadable)?;
        if usages.0.as_slice() != [TIME_STAMPING] {
            return Err(TokenError::NotTimeStamping { usages: usages.0 });
        }
        if !eku.critical {
            return Err(TokenError::KeyUsageNotCritical);
        }
        let sha256 = sha2::Sha256::digest(&der).into();
        let subject = cert.tbs_certificate.subject.to_string();
        Ok(TsaCert {
            cert,
            der,
            sha256,
            subject,
        })
    }

    /// SHA-256 of the certificate's DER, hex.
    pub fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }
}

/// A request made for one document hash.
#[derive(Clone, Debug)]
pub struct Request {
    /// Its DER bytes, as sent (`application/timestamp-query`).
    pub der: Vec<u8>,
    /// The SHA-256 it asks a token over.
    pub imprint: [u8; 32],
    /// Its nonce (the INTEGER's content bytes).
    pub nonce: Vec<u8>,
}

/// A TimeStampReq over `imprint` (SHA-256), with a fresh 64-bit random nonce, asking for the
/// TSA's certificate in the token (certReq).
pub fn request(imprint: [u8; 32]) -> Result<Request, TokenError> {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(TokenError::Nonce)?;
    // A positive INTEGER in its shortest form: the first byte 1..=0x7f.
    nonce[0] = (nonce[0] & 0x7f).max(1);
    let req = TimeStampReq {
        version: TspVersion::V1,
        message_imprint: imprint_of(imprint)?,
        req_policy: None,
        nonce: Some(Int::new(&nonce).map_err(TokenError::Encoding)?),
        cert_req: true,
        extensions: None,
    };
    Ok(Request {
        der: req.to_der().map_err(TokenError::Encoding)?,
        imprint,
        nonce: nonce.to_vec(),
    })
}

/// Reads back a request this program made (kept in the emission folder in file mode).
pub fn parse_request(der: &[u8]) -> Result<Request, TokenError> {
    let req = TimeStampReq::from_der(der).map_err(TokenError::NotRequest)?;
    if req.message_imprint.hash_algorithm.oid != SHA256 {
        return Err(TokenError::RequestNotSha256);
    }
    let imprint: [u8; 32] = req
        .message_imprint
        .hashed_message
        .as_bytes()
        .try_into()
        .map_err(|_| TokenError::RequestHashLength)?;
    let nonce = req
        .nonce
        .ok_or(TokenError::RequestNoNonce)?
        .as_bytes()
        .to_vec();
    Ok(Request {
        der: der.to_vec(),
        imprint,
        nonce,
    })
}

fn imprint_of(hash: [u8; 32]) -> Result<MessageImprint, TokenError> {
    Ok(MessageImprint {
        hash_algorithm: x509_cert::spki::AlgorithmIdentifier {
            oid: SHA256,
            parameters: Some(Any::null()),
        },
        hashed_message: OctetString::new(hash.to_vec()).map_err(TokenError::Encoding)?,
    })
}

/// What a checked token says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// genTime, UTC, RFC 3339 (with the fraction of a second the TSA wrote, if any).
    pub time: String,
    /// genTime, whole seconds since 1970.
    pub unix: u64,
    /// The TSTInfo's `accuracy` (RFC 3161 §2.4.2: the time deviation around genTime the TSA
    /// vouches for), as text (`120 s`, `0.5 s`), `None` when the token states none.
    pub accuracy: Option<String>,
    /// The latest time the token proves the file existed by, whole seconds since 1970 (rounded
    /// down): genTime plus its accuracy. A TSA that states an accuracy of `a` says only that
    /// the file existed by genTime + `a`; every "existed by" check uses this, not genTime.
    pub latest: u64,
    /// The token's serial number (hex).
    pub serial: String,
    /// The TSA's policy (OID).
    pub policy: String,
    /// The nonce the token echoes, if any (content bytes).
    pub nonce: Option<Vec<u8>>,
}

impl Stamp {
    /// When the token says the file existed by, for the minutes: genTime, and when the token
    /// states an accuracy, that accuracy and the latest time it leaves (genTime + accuracy),
    /// the time a check against another date uses.
    pub fn existed_by(&self) -> String {
        match &self.accuracy {
            None => self.time.clone(),
            Some(accuracy) => format!(
                "{} ± {accuracy} (so by {} at the latest)",
                self.time,
                crate::emission::beacon::rfc3339(self.latest)
            ),
        }
    }
}

/// Checks a TSA's reply (a TimeStampResp: what `openssl ts -reply` writes and what the file
/// `*.tsr` holds): its status is granted, and its token is valid for `imprint` and `cert`
/// ([`check_token`]). The reply must be exactly one DER value.
pub fn check_reply(reply: &[u8], imprint: &[u8; 32], cert: &TsaCert) -> Result<Stamp, TokenError> {
    let resp = TimeStampResp::from_der(reply).map_err(TokenError::NotReply)?;
    use cmpv2::status::PkiStatus;
    match resp.status.status {
        PkiStatus::Accepted | PkiStatus::GrantedWithMods => {}
        status => {
            let said = resp
                .status
                .status_string
                .iter()
                .flat_map(|s| s.iter())
                .map(|s| crate::untrusted::shown(s.as_str()))
                .collect();
            return Err(TokenError::NotGranted { status, said });
        }
    }
    let token = resp.time_stamp_token.ok_or(TokenError::NoToken)?;
    check_token(&token, imprint, cert)
}

/// Checks a token: a SignedData, of one signer, over an encapsulated TSTInfo whose message
/// imprint is SHA-256 `imprint`; the signer is `cert` (by issuer and serial or key id), its
/// signed attributes hold the content type TSTInfo, the digest of the TSTInfo, and an
/// ESSCertID (v1 or v2) that is `cert`'s hash; the signature over the DER of the signed
/// attributes verifies with `cert`'s key; genTime falls within `cert`'s validity.
pub fn check_token(
    token: &ContentInfo,
    imprint: &[u8; 32],
    cert: &TsaCert,
) -> Result<Stamp, TokenError> {
    if token.content_type != SIGNED_DATA {
        return Err(TokenError::NotSignedData {
            content_type: token.content_type,
        });
    }
    let signed: TokenSignedData = token
        .content
        .decode_as()
        .map_err(TokenError::SignedDataUnreadable)?;
    let encap = &signed.encap_content_info;
    if encap.econtent_type != TST_INFO {
        return Err(TokenError::NotTstInfo {
            content_type: encap.econtent_type,
        });
    }
    let content = encap.econtent.as_ref().ok_or(TokenError::NoTstInfo)?;
    let tst_der = content
        .decode_as::<OctetString>()
        .map_err(TokenError::TstInfoNotOctets)?;
    let tst = TstInfo::from_der(tst_der.as_bytes()).map_err(TokenError::TstInfoUnreadable)?;
    if tst.message_imprint.hash_algorithm.oid != SHA256 {
        return Err(TokenError::ImprintAlgorithm {
            oid: tst.message_imprint.hash_algorithm.oid,
        });
    }
    if tst.message_imprint.hashed_message.as_bytes() != imprint {
        return Err(TokenError::OtherFile {
            token: tst.message_imprint.hashed_message.as_bytes().to_vec(),
            file: *imprint,
        });
    }
    let infos = signed.signer_infos.as_slice();
    let [signer] = infos else {
        return Err(TokenError::Signatures { count: infos.len() });
    };
    check_signer_id(signer, cert)?;
    let digest_of = |alg: &ObjectIdentifier, bytes: &[u8]| -> Result<Vec<u8>, TokenError> {
        Ok(match *alg {
            SHA256 => sha2::Sha256::digest(bytes).to_vec(),
            SHA384 => sha2::Sha384::digest(bytes).to_vec(),
            SHA512 => sha2::Sha512::digest(bytes).to_vec(),
            oid => return Err(TokenError::DigestAlgorithm { oid }),
        })
    };
    let attrs = signer
        .signed_attrs
        .as_ref()
        .ok_or(TokenError::NoSignedAttributes)?;
    let one = |oid, name| one_attribute(attrs, oid, name);
    let content_type = one(CONTENT_TYPE, "content-type")?
        .ok_or(TokenError::NoContentType)?
        .decode_as::<ObjectIdentifier>()
        .map_err(TokenError::ContentTypeUnreadable)?;
    if content_type != TST_INFO {
        return Err(TokenError::ContentTypeNotTstInfo);
    }
    let digest = one(MESSAGE_DIGEST, "message-digest")?
        .ok_or(TokenError::NoMessageDigest)?
        .decode_as::<OctetString>()
        .map_err(TokenError::MessageDigestUnreadable)?;
    if digest.as_bytes() != digest_of(&signer.digest_alg.oid, tst_der.as_bytes())? {
        return Err(TokenError::DigestMismatch);
    }
    check_ess_cert_id(attrs, cert)?;
    let signed_bytes = attrs.to_der().map_err(TokenError::AttributesEncoding)?;
    check_signature(signer, &signed_bytes, cert)?;
    let (time, at) = generalized_time(&tst.gen_time)?;
    let unix = at.as_secs();
    let deviation = accuracy(tst.accuracy.as_ref())?;
    let latest = at
        .checked_add(deviation)
        .ok_or(TokenError::Accuracy)?
        .as_secs();
    let validity = &cert.cert.tbs_certificate.validity;
    let (from, until) = (
        validity.not_before.to_unix_duration().as_secs(),
        validity.not_after.to_unix_duration().as_secs(),
    );
    if unix < from || unix > until {
        return Err(TokenError::OutsideValidity {
            time,
            not_before: validity.not_before,
            not_after: validity.not_after,
        });
    }
    Ok(Stamp {
        time,
        unix,
        accuracy: tst.accuracy.as_ref().map(|_| accuracy_text(deviation)),
        latest,
        serial: hex::encode(tst.serial_number.as_bytes()),
        policy: tst.policy.to_string(),
        nonce: tst.nonce.map(|n| n.as_bytes().to_vec()),
    })
}

fn check_signer_id(signer: &SignerInfo, cert: &TsaCert) -> Result<(), TokenError> {
    let tbs = &cert.cert.tbs_certificate;
    let ok = match &signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(id) => {
            id.issuer == tbs.issuer && id.serial_number == tbs.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => tbs
            .extensions
            .iter()
            .flatten()
            .filter(|e| e.extn_id == SUBJECT_KEY_IDENTIFIER)
            .any(|e| {
                x509_cert::ext::pkix::SubjectKeyIdentifier::from_der(e.extn_value.as_bytes())
                    .is_ok_and(|own| own.0 == ski.0)
            }),
    };
    if ok {
        Ok(())
    } else {
        Err(TokenError::OtherSigner {
            subject: cert.subject.clone(),
        })
    }
}

/// The one value of the signed attribute `oid`, if it is there; an error if it is there twice
/// or with several values.
fn one_attribute<'a>(
    attrs: &'a cms::signed_data::SignedAttributes,
    oid: ObjectIdentifier,
    name: &'static str,
) -> Result<Option<&'a Any>, TokenError> {
    let mut found = attrs.iter().filter(|a| a.oid == oid);
    let Some(attr) = found.next() else {
        return Ok(None);
    };
    if found.next().is_some() || attr.values.len() != 1 {
        return Err(TokenError::AttributeTwice { name });
    }
    Ok(attr.values.get(0))
}

/// The ESSCertID of the signed attributes names `cert` (RFC 3161 §2.4.1 requires one).
fn check_ess_cert_id(
    attrs: &cms::signed_data::SignedAttributes,
    cert: &TsaCert,
) -> Result<(), TokenError> {
    let one = |oid, name| one_attribute(attrs, oid, name);
    let another = || TokenError::AnotherCertificate {
        subject: cert.subject.clone(),
    };
    const V2: &str = "signing-certificate-v2";
    if let Some(v2) = one(SIGNING_CERTIFICATE_V2, V2)? {
        let v2: SigningCertificateV2 = v2
            .decode_as()
            .map_err(|error| TokenError::SigningCertificateUnreadable { name: V2, error })?;
        let first = v2
            .certs
            .first()
            .ok_or(TokenError::SigningCertificateEmpty { name: V2 })?;
        let alg = first.hash_algorithm.as_ref().map_or(SHA256, |a| a.oid);
        let hash = match alg {
            SHA256 => sha2::Sha256::digest(&cert.der).to_vec(),
            SHA384 => sha2::Sha384::digest(&cert.der).to_vec(),
            SHA512 => sha2::Sha512::digest(&cert.der).to_vec(),
            oid => return Err(TokenError::EssCertHash { oid }),
        };
        return if first.cert_hash.as_bytes() == hash {
            Ok(())
        } else {
            Err(another())
        };
    }
    const V1: &str = "signing-certificate";
    if let Some(v1) = one(SIGNING_CERTIFICATE, V1)? {
        let v1: SigningCertificate = v1
            .decode_as()
            .map_err(|error| TokenError::SigningCertificateUnreadable { name: V1, error })?;
        let first = v1
            .certs
            .first()
            .ok_or(TokenError::SigningCertificateEmpty { name: V1 })?;
        return if first.cert_hash.as_bytes() == sha1::Sha1::digest(&cert.der).as_slice() {
            Ok(())
        } else {
            Err(another())
        };
    }
    Err(TokenError::NoEssCertId)
}

/// The signature of `signer` over `signed` verifies with `cert`'s public key (RSA PKCS#1 v1.5,
/// or ECDSA on P-256 or P-384).
fn check_signature(signer: &SignerInfo, signed: &[u8], cert: &TsaCert) -> Result<(), TokenError> {
    use rsa::signature::Verifier;
    let spki = &cert.cert.tbs_certificate.subject_public_key_info;
    let spki_der = spki.to_der().map_err(TokenError::KeyEncoding)?;
    let sig = signer.signature.as_bytes();
    let bad = || TokenError::BadSignature {
        subject: cert.subject.clone(),
    };
    let alg = signer.signature_algorithm.oid;
    let digest = signer.digest_alg.oid;
    if spki.algorithm.oid == RSA_ENCRYPTION {
        use rsa::pkcs8::DecodePublicKey;
        let key = rsa::RsaPublicKey::from_public_key_der(&spki_der).map_err(|e| {
            TokenError::KeyUnreadable {
                kind: "RSA",
                reason: e.to_string(),
            }
        })?;
        let signature = rsa::pkcs1v15::Signature::try_from(sig).map_err(|_| bad())?;
        let hash = match alg {
            RSA_ENCRYPTION => digest,
            SHA256_WITH_RSA => SHA256,
            SHA384_WITH_RSA => SHA384,
            SHA512_WITH_RSA => SHA512,
            oid => return Err(TokenError::SignatureAlgorithm { oid, kind: "RSA" }),
        };
        let ok = match hash {
            SHA256 => {
                rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(key).verify(signed, &signature)
            }
            SHA384 => {
                rsa::pkcs1v15::VerifyingKey::<sha2::Sha384>::new(key).verify(signed, &signature)
            }
            SHA512 => {
                rsa::pkcs1v15::VerifyingKey::<sha2::Sha512>::new(key).verify(signed, &signature)
            }
            oid => return Err(TokenError::SignatureHash { oid }),
        };
        return ok.map_err(|_| bad());
    }
    if spki.algorithm.oid != EC_PUBLIC_KEY {
        return Err(TokenError::KeyAlgorithm {
            oid: spki.algorithm.oid,
        });
    }
    let curve = spki
        .algorithm
        .parameters
        .as_ref()
        .and_then(|p| p.decode_as::<ObjectIdentifier>().ok());
    let hash = match alg {
        ECDSA_SHA256 => SHA256,
        ECDSA_SHA384 => SHA384,
        ECDSA_SHA512 => SHA512,
        oid => return Err(TokenError::SignatureAlgorithm { oid, kind: "EC" }),
    };
    macro_rules! ecdsa {
        ($curve:ident) => {{
            use $curve::pkcs8::DecodePublicKey;
            let key = $curve::ecdsa::VerifyingKey::from_public_key_der(&spki_der).map_err(|e| {
                TokenError::KeyUnreadable {
                    kind: "EC",
                    reason: e.to_string(),
                }
            })?;
            let signature = $curve::ecdsa::DerSignature::try_from(sig).map_err(|_| bad())?;
            let signature: $curve::ecdsa::Signature = signature.try_into().map_err(|_| bad())?;
            let prehash = match hash {
                SHA256 => sha2::Sha256::digest(signed).to_vec(),
                SHA384 => sha2::Sha384::digest(signed).to_vec(),
                _ => sha2::Sha512::digest(signed).to_vec(),
            };
            use $curve::ecdsa::signature::hazmat::PrehashVerifier;
            key.verify_prehash(&prehash, &signature).map_err(|_| bad())
        }};
    }
    match curve {
        Some(P256) => ecdsa!(p256),
        Some(P384) => ecdsa!(p384),
        _ => Err(TokenError::Curve),
    }
}

/// A GeneralizedTime as RFC 3161 writes it (`YYYYMMDDHHMMSS[.f]Z`, UTC), as RFC 3339 text and
/// whole seconds since 1970.
/// The deviation a TSTInfo's `accuracy` states (RFC 3161 §2.4.2: `seconds`, `millis` and
/// `micros`, each optional, the last two 1 to 999); none stated is zero. Out of range: refused.
fn accuracy(accuracy: Option<&x509_tsp::Accuracy>) -> Result<std::time::Duration, TokenError> {
    let Some(a) = accuracy else {
        return Ok(std::time::Duration::ZERO);
    };
    let part = |v: Option<i16>| -> Result<u64, TokenError> {
        match v {
            None => Ok(0),
            Some(v @ 1..=999) => Ok(u64::from(v.unsigned_abs())),
            Some(_) => Err(TokenError::Accuracy),
        }
    };
    let micros = part(a.millis)? * 1000 + part(a.micros)?;
    std::time::Duration::from_secs(a.seconds.unwrap_or(0))
        .checked_add(std::time::Duration::from_micros(micros))
        .ok_or(TokenError::Accuracy)
}

/// A deviation as text, in seconds: `120 s`, `0.5 s`, `1.000250 s`.
fn accuracy_text(d: std::time::Duration) -> String {
    let micros = d.subsec_micros();
    if micros == 0 {
        return format!("{} s", d.as_secs());
    }
    let fraction = format!("{micros:06}");
    format!("{}.{} s", d.as_secs(), fraction.trim_end_matches('0'))
}

/// genTime as RFC 3339 text, and the time since 1970 it names (with its fraction of a second).
fn generalized_time(value: &Any) -> Result<(String, std::time::Duration), TokenError> {
    let wrong = || TokenError::GenTime;
    if value.tag() != Tag::GeneralizedTime {
        return Err(wrong());
    }
    let text = std::str::from_utf8(value.value()).map_err(|_| wrong())?;
    let body = text.strip_suffix('Z').ok_or_else(wrong)?;
    let (whole, fraction) = match body.split_once('.') {
        Some((w, f))
            if !f.is_empty()
                && f.len() <= 9
                && f.bytes().all(|b| b.is_ascii_digit())
                && !f.ends_with('0') =>
        {
            (w, Some(f))
        }
        Some(_) => return Err(wrong()),
        None => (body, None),
    };
    if whole.len() != 14 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(wrong());
    }
    let rfc3339 = format!(
        "{}-{}-{}T{}:{}:{}{}Z",
        &whole[0..4],
        &whole[4..6],
        &whole[6..8],
        &whole[8..10],
        &whole[10..12],
        &whole[12..14],
        fraction.map(|f| format!(".{f}")).unwrap_or_default()
    );
    let when = humantime::parse_rfc3339(&rfc3339).map_err(|_| wrong())?;
    let since = when
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| wrong())?;
    Ok((rfc3339, since))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(text: &str) -> Result<(String, u64), TokenError> {
        let any = Any::new(der::Tag::GeneralizedTime, text.as_bytes()).unwrap();
        generalized_time(&any).map(|(t, d)| (t, d.as_secs()))
    }

    #[test]
    fn the_accuracy_is_added_to_gen_time_and_refused_out_of_range() {
        let a = |seconds, millis, micros| x509_tsp::Accuracy {
            seconds,
            millis,
            micros,
        };
        use std::time::Duration;
        assert_eq!(accuracy(None).unwrap(), Duration::ZERO);
        let d = accuracy(Some(&a(Some(120), None, None))).unwrap();
        assert_eq!(
            (d, accuracy_text(d)),
            (Duration::from_secs(120), "120 s".into())
        );
        let d = accuracy(Some(&a(None, Some(500), None))).unwrap();
        assert_eq!(accuracy_text(d), "0.5 s");
        let d = accuracy(Some(&a(Some(1), None, Some(250)))).unwrap();
        assert_eq!(accuracy_text(d), "1.00025 s");
        for bad in [
            a(None, Some(0), None),
            a(None, Some(1000), None),
            a(None, None, Some(-1)),
        ] {
            assert!(
                matches!(accuracy(Some(&bad)), Err(TokenError::Accuracy)),
                "{bad:?}"
            );
        }
        // The largest accuracy stated is a Duration; added to a genTime (where the token's
        // check adds it, `checked_add`) it overflows, and the token is refused there.
        let d = accuracy(Some(&a(Some(u64::MAX), Some(999), None))).unwrap();
        assert!(Duration::from_secs(1_796_182_800).checked_add(d).is_none());
    }

    #[test]
    fn gen_time_takes_fractions_and_refuses_local_times() {
        assert_eq!(
            time("20261202034000Z").unwrap(),
            ("2026-12-02T03:40:00Z".into(), 1_796_182_800)
        );
        assert_eq!(
            time("20261202034000.25Z").unwrap().0,
            "2026-12-02T03:40:00.25Z"
        );
        for bad in [
            "20261202034000",
            "20261202034000+0100",
            "2026120203400Z",
            "20261202034000.Z",
            "20261202034000.50Z",
            "20261302034000Z",
        ] {
            assert!(matches!(time(bad), Err(TokenError::GenTime)), "{bad}");
        }
        assert_eq!(
            time("20261202034000").unwrap_err().to_string(),
            "the token's genTime is not a GeneralizedTime in UTC (YYYYMMDDHHMMSS[.f]Z)"
        );
    }

    #[test]
    fn a_pem_of_another_label_is_refused_naming_it() {
        let pem = b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";
        let e = TsaCert::parse(pem).unwrap_err();
        assert!(
            matches!(&e, TokenError::PemLabel { label } if label == "PUBLIC KEY"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "a PEM \"'PUBLIC KEY'\", not a \"CERTIFICATE\""
        );
        let e = TsaCert::parse(b"not a certificate").unwrap_err();
        assert!(matches!(e, TokenError::NotCertificate(_)), "{e:?}");
        assert!(e
            .to_string()
            .starts_with("not an X.509 certificate (PEM or DER): "));
    }

    #[test]
    fn a_request_is_over_the_hash_with_a_positive_nonce_and_reads_back() {
        let req = request([7; 32]).unwrap();
        let back = parse_request(&req.der).unwrap();
        assert_eq!(back.imprint, [7; 32]);
        assert_eq!(back.nonce, req.nonce);
        assert!(req.nonce[0] > 0 && req.nonce[0] < 0x80);
        assert_ne!(request([7; 32]).unwrap().nonce, req.nonce);
    }
}
