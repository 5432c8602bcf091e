//! OAuth 2.1 authorization for MCP servers over HTTP (feature `oauth`).
//!
//! An MCP server that needs a token answers `401` with a `WWW-Authenticate`
//! challenge. What follows is a fixed sequence, and this module holds its
//! pure, testable pieces, each in its own file:
//!
//! - [`challenge`]: parse `WWW-Authenticate` (RFC 6750, RFC 9728 §5.1).
//! - [`wellknown`]: the metadata URLs to try, in the specification's order,
//!   and the canonical resource URI (RFC 8707).
//! - [`metadata`]: Protected Resource Metadata (RFC 9728) and authorization
//!   server metadata (RFC 8414, OpenID Connect), with their checks.
//! - [`discovery`]: the driver from a challenge to checked metadata, over
//!   [`Fetch`].
//! - [`client`]: which client identity to present (pre-registered, Client ID
//!   Metadata Document, dynamic registration).
//! - [`authorize`]: scopes, the authorization URL with PKCE and `state`, and
//!   the RFC 9207 check of the redirect.
//! - [`store`]: tokens per server origin, in memory or in private files.
//!
//! Nothing here sends a request by itself: documents are read through the
//! [`Fetch`] trait, so each step is tested with a fake. Tokens, client
//! secrets, authorization codes, PKCE verifiers and `state` are held as
//! [`Secret`]s, whose `Debug` prints `[redacted]`; no error carries one.

pub mod authorize;
pub mod challenge;
pub mod client;
pub mod discovery;
mod error;
mod fetch;
pub mod metadata;
mod secret;
pub mod store;
pub mod wellknown;

pub use authorize::{AuthorizationParams, PendingAuthorization};
pub use challenge::{BearerChallenge, Challenge, ChallengeError};
pub use client::{ClientCredentials, ClientIdentity, ClientRegistration, ClientSettings};
pub use discovery::{discover, Discovered, DiscoveryOptions};
pub use error::AuthError;
pub use fetch::{Fetch, FetchError, Fetched};
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use secret::Secret;
pub use store::{FileStore, MemoryStore, TokenStore, Tokens};
