//! [`AuthError`]: every way authorization can fail before a token is sent.

/// Why discovery, client identity or the authorization step failed.
///
/// No variant holds a token, secret, code, verifier or `state`: what it
/// carries is public (URLs of metadata, issuers, OAuth error codes) and
/// bounded. Messages from the JSON parser are reduced to their category and
/// position, since serde's text can quote the offending value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A `WWW-Authenticate` header that does not parse (RFC 9110 §11.6.1).
    #[error("malformed WWW-Authenticate header: {0}")]
    Challenge(#[from] crate::auth::challenge::ChallengeError),
    /// A URL that is not absolute `http`/`https`, or not fit for its role.
    #[error("invalid {what} URL: {reason}")]
    InvalidUrl {
        /// Which URL (`server`, `resource_metadata`, `issuer`, ...).
        what: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The [`Fetch`](crate::auth::Fetch) implementation failed for a URL.
    #[error("fetching {url} failed: {reason}")]
    Fetch {
        /// The metadata URL.
        url: String,
        /// The fetcher's reason.
        reason: String,
    },
    /// A body over its bound.
    #[error("{what} is larger than {limit} bytes")]
    TooLarge {
        /// What was being read.
        what: &'static str,
        /// The bound.
        limit: usize,
    },
    /// A metadata or registration document that does not parse or lacks a
    /// field the flow needs.
    #[error("invalid {what} from {url}: {reason}")]
    InvalidDocument {
        /// Which document.
        what: &'static str,
        /// Where it came from.
        url: String,
        /// Category and position, or the missing field.
        reason: String,
    },
    /// No Protected Resource Metadata at the hint or either well-known URL,
    /// and the 2025-03-26 fallback is not allowed for this server.
    #[error("no protected resource metadata found for {server}")]
    NoResourceMetadata {
        /// The MCP server URL.
        server: String,
    },
    /// Protected Resource Metadata whose `resource` is not the server's.
    #[error("protected resource metadata names resource {found}, not {expected}")]
    ResourceMismatch {
        /// The server URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// Protected Resource Metadata without authorization servers.
    #[error("protected resource metadata at {url} lists no authorization server")]
    NoAuthorizationServer {
        /// Where the metadata came from.
        url: String,
    },
    /// No authorization server metadata at any well-known URL.
    #[error("no authorization server metadata found for issuer {issuer}")]
    NoServerMetadata {
        /// The issuer that was tried.
        issuer: String,
    },
    /// Authorization server metadata whose `issuer` is not the issuer it was
    /// discovered from (RFC 8414 §3.3).
    #[error("authorization server metadata names issuer {found}, not {expected}")]
    IssuerMismatch {
        /// The issuer discovered from.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// The authorization server does not advertise PKCE `S256`; the MCP
    /// specification requires the client to refuse.
    #[error("authorization server {issuer} does not advertise PKCE S256")]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// No pre-registered client, no Client ID Metadata Document support and
    /// no registration endpoint.
    #[error("no way to obtain a client identity at {issuer}")]
    NoClientIdentity {
        /// The issuer.
        issuer: String,
    },
    /// Pre-registered credentials bound to another authorization server.
    #[error("the pre-registered client is for issuer {found}, not {expected}")]
    ClientIssuerMismatch {
        /// The issuer discovered.
        expected: String,
        /// The issuer the credentials belong to.
        found: String,
    },
    /// The redirect's query is malformed (a duplicate or missing parameter).
    #[error("invalid authorization response: {0}")]
    InvalidRedirect(&'static str),
    /// The redirect's `state` is not the one sent.
    #[error("authorization response state does not match the request")]
    StateMismatch,
    /// The redirect lacks `iss` though the server advertises it (RFC 9207).
    #[error("authorization response lacks iss, which {expected} advertises")]
    IssuerMissing {
        /// The recorded issuer.
        expected: String,
    },
    /// The redirect's `iss` is not the recorded issuer (RFC 9207): a mix-up.
    #[error("authorization response iss {found} is not {expected}")]
    AuthorizationIssuerMismatch {
        /// The recorded issuer.
        expected: String,
        /// The response's `iss`.
        found: String,
    },
    /// The authorization server refused (`error` in the redirect).
    #[error("authorization refused: {error}")]
    AuthorizationDenied {
        /// The OAuth error code, bounded and limited to its RFC 6749 characters.
        error: String,
    },
    /// The token endpoint refused (RFC 6749 §5.2).
    #[error("token request refused with status {status}: {error}")]
    TokenRefused {
        /// The HTTP status.
        status: u16,
        /// The OAuth error code (or `http_<status>` when the body had none).
        error: String,
    },
    /// A token store failed.
    #[error("token store: {0}")]
    Store(#[source] std::io::Error),
    /// A private key could not be loaded or a JWT (client assertion, DPoP
    /// proof) signed.
    #[error("signing: {0}")]
    Signing(#[from] crate::auth::jose::JoseError),
    /// A [`TokenSource`](crate::auth::TokenSource) file (a workload token,
    /// an ID token) could not be read.
    #[error("token file {path}: {reason}")]
    TokenSource {
        /// The token file.
        path: String,
        /// The I/O error kind, or what is wrong with the content.
        reason: String,
    },
}
// A serde_json error, reduced to what cannot quote the input.
pub(crate) use crate::files::json_reason;
