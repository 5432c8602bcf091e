//! [`Core`]: what one streamable HTTP connection shares between its sender
//! and its tasks, the one place a request's headers are built, and the
//! `POST` and `GET` every exchange goes through.
//!
//! Apart from the paths that use it (the call path, the reply readers, the
//! listening stream, the session) so that each of those reads as one task.

use bytes::Bytes;
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::Method;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, watch, Semaphore};

use super::listen::Listening;
use super::resume::ResumePolicy;
use super::session::SessionState;
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::RequestId;
use crate::transport::http::client::HttpClient;
use crate::transport::http::headers::{RequestHeaders, LAST_EVENT_ID, MCP_PROTOCOL_VERSION};
use crate::transport::http::inbound::InboundTx;
use crate::transport::{Inbound, RedactedOrigin, WireHeaders};

/// Headers a request's mirror may not set: the transport's own.
const RESERVED_MIRROR: &[&str] =
    &["accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"];

const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// What one streamable HTTP connection shares between its sender and its
/// tasks.
pub(crate) struct Core {
    pub(super) client: HttpClient,
    pub(super) listen: bool,
    pub(super) resume: ResumePolicy,
    /// Automatic mode: a refused `initialize` is returned to the caller
    /// instead of being reported.
    pub(super) fallback_refusals: bool,
    pub(super) max_frame: usize,
    pub(super) max_body: usize,
    pub(super) binding: String,
    pub(super) session: Mutex<SessionState>,
    pub(super) version: Mutex<Option<HeaderValue>>,
    /// The negotiated version is a modern one (2026-07-28): no session, no
    /// `GET` stream, no resumption; every request is one `POST`.
    pub(super) stateless: AtomicBool,
    pub(super) inbound: InboundTx,
    pub(super) closed: Arc<watch::Sender<bool>>,
    pub(super) closing: AtomicBool,
    pub(super) listening: Mutex<Listening>,
    pub(super) in_flight: Arc<Semaphore>,
    /// The reply streams being read, by request: dropping an entry's sender
    /// ends its task (and closes its HTTP response).
    pub(super) streams: Mutex<HashMap<RequestId, oneshot::Sender<()>>>,
    /// Responses dropped because they came on another request's stream.
    pub(super) strays: AtomicU64,
    /// Whether the server's last successful reply was a JSON body rather
    /// than an event stream: where a lone request's exchange runs
    /// ([`Core::try_request`]).
    pub(super) json_replies: AtomicBool,
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = self.session.lock().expect("session lock");
        f.debug_struct("Core")
            .field("origin", self.client.origin())
            .field("binding", &self.binding)
            .field("session", &session.id.is_some())
            .field("session_expired", &session.expired)
            .field("closing", &self.closing.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Core {
    pub(super) fn origin(&self) -> &RedactedOrigin {
        self.client.origin()
    }

    pub(super) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    pub(super) async fn deliver(&self, item: Inbound) -> bool {
        self.inbound.deliver(Ok(item)).await
    }

    /// Whether a reply's messages may go straight to the connection (see
    /// [`DirectSink`](crate::transport::DirectSink)): not during the
    /// handshake, whose session is queued and must reach the connection
    /// before the reply that ends it.
    pub(super) fn may_deliver_direct(&self) -> bool {
        self.version.lock().expect("version lock").is_some()
    }

    /// Delivers one message of a reply stream in the stream's order:
    /// straight to the connection while `*direct`, else queued. The first
    /// one the connection hands back turns `*direct` off, so that every
    /// later one is queued behind it. Returns `false` when nobody reads
    /// any more.
    pub(super) async fn deliver_in_order(&self, text: String, direct: &mut bool) -> bool {
        let text = match *direct {
            true => match self.inbound.try_direct(text) {
                Ok(()) => return true,
                Err(back) => back,
            },
            false => text,
        };
        *direct = false;
        self.deliver(Inbound::Frame(text)).await
    }

    pub(super) async fn fail(&self, id: &RequestId, class: FailureClass, message: impl AsRef<str>) {
        self.fail_with(id, class, message, None, None).await;
    }

    /// Fails `id` because the server answered `status`: the class the
    /// status means, and the status itself on the call's error.
    pub(super) async fn fail_status(
        &self,
        id: &RequestId,
        status: reqwest::StatusCode,
        retry_after: Option<Duration>,
        message: impl AsRef<str>,
    ) {
        let class = crate::transport::http::status_class(status);
        self.fail_with(id, class, message, Some(status.as_u16()), retry_after).await;
    }

    /// Fails `id` with what `error` says (its class, message and status).
    pub(super) async fn fail_error(&self, id: &RequestId, error: &Error) {
        self.fail_with(id, error.class(), error.message(), error.http_status(), error.retry_after()).await;
    }

    async fn fail_with(
        &self,
        id: &RequestId,
        class: FailureClass,
        message: impl AsRef<str>,
        http_status: Option<u16>,
        retry_after: Option<Duration>,
    ) {
        let message = normalize_message(message.as_ref(), crate::error::MAX_ERROR_MESSAGE_BYTES);
        self.deliver(Inbound::RequestFailed { id: id.clone(), class, message, http_status, retry_after })
            .await;
    }

    /// The headers of a request now, the one place they are built.
    /// `initialize` opens a new session and carries neither the session id
    /// nor the protocol version. A stateless (modern) connection sends no
    /// session id. `mirror` are the headers that mirror the request
    /// (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); one that is not a valid
    /// header is left out with a warning (the server then refuses the
    /// request as a header mismatch, which names it).
    fn headers(&self, accept: HeaderValue, initialize: bool, mirror: &WireHeaders) -> RequestHeaders {
        let mut headers = RequestHeaders::default();
        headers.public.insert(ACCEPT, accept);
        if initialize {
            let mut session = self.session.lock().expect("session lock");
            if session.resuming {
                // The session the host asked to resume: its `initialize`
                // carries the id (once).
                session.resuming = false;
                headers.session = session.id.clone();
            } else {
                *session = SessionState::default();
            }
            return headers;
        }
        if let Some(version) = self.version.lock().expect("version lock").clone() {
            headers.public.insert(MCP_PROTOCOL_VERSION, version);
        }
        for (name, value) in &mirror.0 {
            match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
                (Ok(name), Ok(value)) if !RESERVED_MIRROR.contains(&name.as_str()) => {
                    headers.public.append(name, value);
                }
                _ => {
                    tracing::warn!(target: "mcp_stack::http", binding = %self.binding, header = %crate::error::normalize_message(name, 64), "left out a request header that is not valid")
                }
            }
        }
        if !self.is_stateless() {
            headers.session = self.session.lock().expect("session lock").id.clone();
        }
        headers
    }

    pub(super) fn is_stateless(&self) -> bool {
        self.stateless.load(Ordering::Acquire)
    }

    pub(super) async fn post(
        &self,
        body: String,
        initialize: bool,
        timeout: Option<Duration>,
        mirror: &WireHeaders,
    ) -> Result<(crate::transport::http::HttpResponse, Option<HeaderValue>), Error> {
        let mut headers = self.headers(ACCEPT_BOTH, initialize, mirror);
        headers.public.insert(CONTENT_TYPE, JSON);
        let url = self.client.settings.url.clone();
        let response =
            self.client.execute(Method::POST, &url, &headers, Some(Bytes::from(body)), timeout).await?;
        Ok((response, headers.session))
    }

    pub(super) async fn get(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<(crate::transport::http::HttpResponse, Option<HeaderValue>), Error> {
        let mut headers = self.headers(ACCEPT_SSE, false, &WireHeaders::default());
        if let Some(last) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.public.insert(LAST_EVENT_ID, last);
        }
        let url = self.client.settings.url.clone();
        let response = self.client.execute(Method::GET, &url, &headers, None, None).await?;
        Ok((response, headers.session))
    }

    pub(crate) fn negotiated(&self, protocol_version: &str) {
        self.stateless.store(crate::protocol::is_modern_version(protocol_version), Ordering::Release);
        if protocol_version.is_empty() {
            *self.version.lock().expect("version lock") = None;
            return;
        }
        if let Ok(value) = HeaderValue::from_str(protocol_version) {
            *self.version.lock().expect("version lock") = Some(value);
        }
    }
}
