//! The call path: every message is one `POST`. `initialize` waits for its
//! response headers; any other request is sent and read on a task of its
//! own (at most [`MAX_IN_FLIGHT`](super::MAX_IN_FLIGHT) at a time); a
//! notification or a response waits for the server to accept it.
//!
//! Apart from the reply readers, which take over once the response headers
//! are in.

use reqwest::StatusCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use super::refusal::modern_refusal;
use super::shared::Core;
use crate::error::{Error, FailureClass};
use crate::protocol::{methods, RequestId};
use crate::transport::http::body::{body_kind, error_body_quote, read_body_bounded, BodyKind};
use crate::transport::http::headers::MCP_SESSION_ID;
use crate::transport::http::peek::Peek;
use crate::transport::http::SHORT_EXCHANGE_TIMEOUT;
use crate::transport::{Exchange, Inbound, WireHeaders};

/// How an `initialize` `POST` went, for the automatic mode.
#[derive(Debug)]
pub(crate) enum Started {
    /// Sent; the reply is being read.
    Sent,
    /// Refused with this status before anything was delivered (only in
    /// automatic mode, for 400, 404 and 405).
    Refused(StatusCode),
}

impl Core {
    /// Sends a request. `initialize` waits for the response headers; every
    /// other request is sent and read on a task.
    pub(crate) async fn request(
        self: &Arc<Self>,
        message: String,
        id: RequestId,
        method: &str,
        mirror: WireHeaders,
    ) -> Result<Started, Error> {
        if method == methods::INITIALIZE {
            let (mut response, sent) = self.post(message.clone(), true, None, &mirror).await?;
            if let (Some(sent), StatusCode::NOT_FOUND) = (&sent, response.status()) {
                // The session the host asked to resume is gone: reported,
                // and the handshake runs in a new one.
                self.expire(sent).await;
                response = self.post(message, true, None, &mirror).await?.0;
            }
            let status = response.status();
            if self.fallback_refusals
                && matches!(
                    status,
                    StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                )
            {
                // A 2026-07-28 server refusing `initialize` says so with a
                // modern error naming the versions it speaks: that, not the
                // HTTP+SSE fallback's failure, is what the person needs (the
                // specification's rule: a recognized modern error identifies
                // a modern server, never a legacy one).
                if status == StatusCode::BAD_REQUEST && body_kind(&response) == BodyKind::Json {
                    let limit = self.max_frame.min(64 << 10);
                    if let Ok(body) = read_body_bounded(&self.client, response, limit).await {
                        let text = String::from_utf8_lossy(&body).into_owned();
                        if let Some(refusal) = modern_refusal(&text) {
                            if Peek::of(&text).answers(&id) {
                                self.deliver(Inbound::Frame(text)).await;
                            } else {
                                self.fail(&id, FailureClass::UnsupportedProtocol, refusal).await;
                            }
                            return Ok(Started::Sent);
                        }
                    }
                }
                return Ok(Started::Refused(status));
            }
            if status.is_success() {
                if let Some(session) = response.headers().get(MCP_SESSION_ID) {
                    self.adopt_session(session.clone()).await;
                }
            }
            let core = self.clone();
            self.spawn_stream(id.clone(), move || async move { core.reply(id, response, None, None).await });
            return Ok(Started::Sent);
        }
        if self.session_expired() {
            // The server would refuse it: report it so without sending.
            self.deliver(Inbound::SessionExpired { id: Some(id) }).await;
            return Ok(Started::Sent);
        }
        let permit = self
            .in_flight
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::new(FailureClass::TransportClosed, "the transport is closed"))?;
        let core = self.clone();
        self.spawn_stream(id.clone(), move || core.exchange(message, id, permit, mirror, None));
        Ok(Started::Sent)
    }

    /// Starts the exchange of request `id` without waiting, as
    /// [`Core::request`] would: `Err` hands the message back when that
    /// would wait or needs more than an exchange (`initialize`, which waits
    /// for its response headers; a transport closing or a session expired,
    /// which the waiting path reports; every exchange slot taken).
    ///
    /// Where the exchange runs: when the server's last reply was a JSON
    /// body, on the caller's task (handed back, see [`Exchange`]); else on
    /// a task of its own, as [`Core::request`] does. A server answers alike
    /// from one call to the next (the SDKs answer every request with JSON,
    /// or every one with an event stream), and each kind is fastest where
    /// it runs here. `bench/vs-rmcp --transport http`, three interleaved
    /// runs each, against every exchange on a task of its own: sequential
    /// JSON calls unpinned 7,370-7,420 against 6,350-6,380 calls/s
    /// (2026-07-28) and 7,250-7,520 against 5,740-6,750 (2025-11-25): a
    /// task hop fewer, and no other worker woken for it (the `futex` and
    /// `epoll_wait` calls a call makes fell to the reqwest floor's);
    /// pinned 13,160-13,230 against 12,710-13,070 and 14,310-14,510
    /// against 13,880-14,220; the SSE, progress, 1 MiB and 32-in-flight
    /// cases unchanged. With every exchange on the caller's task, SSE
    /// replies were slower (unpinned 5,900-6,000 against 6,370-6,520
    /// calls/s) and so were calls streaming progress (see [`HandOff`]).
    pub(crate) fn try_request(
        self: &Arc<Self>,
        message: String,
        id: RequestId,
        method: &str,
        mirror: WireHeaders,
    ) -> Result<Option<Exchange>, (String, WireHeaders)> {
        if method == methods::INITIALIZE || self.is_closing() || self.session_expired() {
            return Err((message, mirror));
        }
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            return Err((message, mirror));
        };
        let core = self.clone();
        if !self.json_replies.load(Ordering::Relaxed) {
            self.spawn_stream(id.clone(), move || core.exchange(message, id, permit, mirror, None));
            return Ok(None);
        }
        let asked = Arc::new(AtomicBool::new(false));
        let handoff = Some(asked.clone());
        let work = self.stream(id.clone(), move || core.exchange(message, id, permit, mirror, handoff));
        Ok(Some(Exchange::new(HandOff { work: Some(Box::pin(work)), asked })))
    }

    /// Reads the reply to `id` on a task that ends with the transport, or
    /// when the request is cancelled ([`Core::abandon`]).
    fn spawn_stream<W>(self: &Arc<Self>, id: RequestId, work: impl FnOnce() -> W + Send + 'static)
    where
        W: std::future::Future<Output = ()> + Send + 'static,
    {
        // Boxed: the exchange's future is about 3 KB (reqwest's is half of
        // it), and a task holding it by value was 6.3 KB that tokio copies
        // as it spawns the task and again as the task ends (each stage
        // change writes the whole cell). A box is copied once.
        tokio::spawn(Exchange::new(self.stream(id, work)));
    }

    /// The work `work` makes, the reading of the reply to `id`, until it
    /// ends, the transport ends, or the request is cancelled
    /// ([`Core::abandon`]).
    ///
    /// `work` is made inside the future this returns, on its first poll:
    /// a future handed in whole was held twice in it (as the captured
    /// value and as the one `select!` polls: 7,144 bytes for a 3,320-byte
    /// exchange), and copied whole each time it moved (into this future,
    /// into its box). Made inside, it is held once and moved once.
    fn stream<W>(
        self: &Arc<Self>,
        id: RequestId,
        work: impl FnOnce() -> W + Send + 'static,
    ) -> impl std::future::Future<Output = ()> + Send + 'static
    where
        W: std::future::Future<Output = ()> + Send + 'static,
    {
        let (cancel, cancelled) = oneshot::channel::<()>();
        self.streams.lock().expect("streams lock").insert(id.clone(), cancel);
        let core = self.clone();
        async move {
            let inbound = core.inbound.clone();
            tokio::select! {
                _ = work() => {}
                _ = inbound.closed() => {}
                _ = cancelled => {}
            }
            core.streams.lock().expect("streams lock").remove(&id);
        }
    }

    /// Stops reading the reply to `id` (the caller abandoned it): its HTTP
    /// response is dropped, which closes that stream.
    pub(crate) fn abandon(&self, id: &RequestId) {
        self.streams.lock().expect("streams lock").remove(id);
        self.listening.lock().expect("listening lock").parked.retain(|p| p != id);
    }

    /// Sends request `id` and reads its reply. `handoff`, for an exchange
    /// run on the caller's task ([`Core::try_request`]): raised by an
    /// event stream that brings more than the reply, so that the rest of
    /// it is read on a task of its own ([`HandOff`]).
    async fn exchange(
        self: Arc<Self>,
        message: String,
        id: RequestId,
        _permit: OwnedSemaphorePermit,
        mirror: WireHeaders,
        handoff: Option<Arc<AtomicBool>>,
    ) {
        match self.post(message, false, None, &mirror).await {
            Ok((response, sent)) => self.reply(id, response, sent, handoff.as_deref()).await,
            Err(error) if error.class().is_auth() => {
                // Authorization failed before the request was sent with a
                // token the server took: its class says what to do.
                self.fail_error(&id, &error).await;
            }
            Err(error) => {
                let connect = std::error::Error::source(&error)
                    .and_then(|s| s.downcast_ref::<reqwest::Error>())
                    .is_some_and(|e| e.is_connect());
                if connect {
                    // Never reached the server: that call alone fails
                    // cleanly, and the connection is over.
                    self.fail(&id, FailureClass::TransportClosed, error.message()).await;
                    self.inbound.deliver(Err(error)).await;
                } else {
                    let text = format!("{} (the server may have received the request)", error.message());
                    self.fail(&id, FailureClass::Indeterminate, text).await;
                }
            }
        }
    }

    /// A notification or a response: waits for the server to accept it.
    pub(crate) async fn post_quiet(
        self: &Arc<Self>,
        message: String,
        method: Option<&str>,
    ) -> Result<(), Error> {
        let (response, sent) =
            self.post(message, false, Some(SHORT_EXCHANGE_TIMEOUT), &WireHeaders::default()).await?;
        let status = response.status();
        if status.is_success() {
            if method == Some(methods::NOTIFICATIONS_INITIALIZED) {
                self.start_listener();
            }
            return Ok(());
        }
        if status == StatusCode::NOT_FOUND {
            if let Some(sent) = &sent {
                if self.expire(sent).await {
                    self.deliver(Inbound::SessionExpired { id: None }).await;
                }
                return Ok(());
            }
        }
        let quote = error_body_quote(&self.client, response).await;
        tracing::warn!(
            target: "mcp_stack::http",
            binding = %self.binding,
            origin = %self.origin(),
            status = status.as_u16(),
            "the server refused a notification or response: {quote}"
        );
        Ok(())
    }
}

/// An exchange run on the caller's task that moves to a task of its own
/// once its reply stream asks (`asked`, raised when the stream brought a
/// message besides the reply: progress, a log). Each event would otherwise
/// poll the caller's whole call again: `bench/vs-rmcp --transport http`,
/// pinned, a call with 100 progress notifications read on the caller's
/// task made 1,270-1,460 calls/s against 1,690-1,700 on a task of its own
/// (three interleaved runs). Exchanges run there only for a server that
/// answers with JSON bodies ([`Core::try_request`]); this is for the one
/// that streams a reply now and then.
struct HandOff<F> {
    work: Option<std::pin::Pin<Box<F>>>,
    asked: Arc<AtomicBool>,
}

impl<F: std::future::Future<Output = ()> + Send + 'static> std::future::Future for HandOff<F> {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        let Some(work) = self.work.as_mut() else { return std::task::Poll::Ready(()) };
        if work.as_mut().poll(cx).is_ready() {
            self.work = None;
        } else if self.asked.load(Ordering::Relaxed) {
            tokio::spawn(self.work.take().expect("the work"));
        } else {
            return std::task::Poll::Pending;
        }
        std::task::Poll::Ready(())
    }
}
