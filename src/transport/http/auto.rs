//! Streamable HTTP with the specification's fallback to HTTP+SSE.

use async_trait::async_trait;
use std::fmt;
use std::sync::{Arc, Mutex};
use tokio::sync::{watch, OnceCell};

use super::builder::{Settings, StreamOptions};
use super::inbound::{inbound_channel, InboundTx};
use super::legacy::LegacyCore;
use super::peek::Peek;
use super::streamable::{Core, Started, StreamableSender};
use super::{SseFactory, StreamableHttpFactory};
use crate::compat::Tolerance;
use crate::error::Error;
use crate::transport::{
    ConnectConfig, Exchange, Inbound, MessageSender, RedactedOrigin, Transport, TransportFactory, WireHeaders,
};

/// Which transport an automatic connection settled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpMode {
    /// Streamable HTTP.
    Streamable,
    /// The 2024-11-05 HTTP+SSE transport, after streamable HTTP was refused.
    LegacySse,
}

/// Streamable HTTP with the specification's fallback to HTTP+SSE.
///
/// [`HttpFactory`] speaks streamable HTTP. With `legacy_sse_fallback` set
/// (the profile tolerance `legacy_sse`), when the server refuses the first
/// `POST` (`initialize`) with 400, 404 or 405, the connection `GET`s the
/// same URL expecting an HTTP+SSE event stream and its `endpoint` event, as
/// the backwards-compatibility section of the 2025-03-26 and later
/// transports chapters describes, and sends `initialize` and everything
/// after it that way. [`HttpFactory::mode`] tells which one the last
/// connection settled on. Without the flag, a refusal ends the `initialize`
/// call with `remote_http`.
///
/// # The `legacy_sse` tolerance
///
/// The fallback is a deviation the binding's compatibility profile must
/// allow ([`Tolerance::LegacySse`], in every `default` and `legacy` profile, not in
/// `strict/v1`). The factory says it may need it
/// ([`TransportFactory::tolerances`]), and `Binding::connect` refuses
/// (`invalid_config`, before any I/O) a definition whose profile forbids a
/// tolerance its factory may apply: under `strict/v1`, build the factory
/// with `build_auto(false)`. The profile is checked rather than quietly
/// switching the fallback off, so that a definition never means something
/// other than what it says.
///
/// When a connection did fall back, its sender reports it
/// ([`MessageSender::applied_tolerances`], read into the session) and the
/// binding lists `legacy_sse` in the [`Catalog::applied_tolerances`] of the
/// generations it discovers over that connection; over streamable HTTP it
/// is absent. The factory's [`HttpFactory::mode`] tells, for information,
/// where the last connection made through it (or a clone) settled.
///
/// [`Catalog::applied_tolerances`]: crate::catalog::Catalog::applied_tolerances
#[derive(Clone)]
pub struct HttpFactory {
    streamable: StreamableHttpFactory,
    sse: SseFactory,
    legacy_sse_fallback: bool,
    mode: Arc<Mutex<Option<HttpMode>>>,
}

impl fmt::Debug for HttpFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpFactory")
            .field("streamable", &self.streamable)
            .field("legacy_sse_fallback", &self.legacy_sse_fallback)
            .field("mode", &self.mode())
            .finish()
    }
}

impl fmt::Display for HttpFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http {}", self.redacted_origin())
    }
}

impl HttpFactory {
    /// An automatic factory for `url`, with defaults otherwise.
    pub fn new(url: &str, legacy_sse_fallback: bool) -> Result<Self, Error> {
        super::HttpBuilder::new(url).build_auto(legacy_sse_fallback)
    }

    pub(crate) fn from_parts(
        settings: Arc<Settings>,
        options: StreamOptions,
        legacy_sse_fallback: bool,
    ) -> Self {
        HttpFactory {
            streamable: StreamableHttpFactory::from_parts(settings.clone(), options, legacy_sse_fallback),
            sse: SseFactory::from_settings(settings),
            legacy_sse_fallback,
            mode: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether the fallback to HTTP+SSE is allowed.
    pub fn legacy_sse_fallback(&self) -> bool {
        self.legacy_sse_fallback
    }

    /// The transport the last connection's handshake settled on, over this
    /// factory and its clones; `None` before any handshake was sent. For
    /// information: what one connection needed is its own
    /// ([`SessionInfo::transport_tolerances`]).
    ///
    /// [`SessionInfo::transport_tolerances`]: crate::session::SessionInfo::transport_tolerances
    pub fn mode(&self) -> Option<HttpMode> {
        *self.mode.lock().expect("mode lock")
    }
}

#[async_trait]
impl TransportFactory for HttpFactory {
    fn kind(&self) -> &'static str {
        "http"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.streamable.redacted_origin()
    }

    fn endpoint_digest(&self) -> Option<[u8; 32]> {
        self.streamable.endpoint_digest()
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let (inbound, receiver, closed) = inbound_channel();
        let streamable = self.streamable.core(config, inbound.clone(), closed.clone())?;
        let sender = AutoSender {
            streamable,
            legacy: OnceCell::new(),
            sse: self.sse.clone(),
            config: config.clone(),
            inbound,
            closed,
            fallback: self.legacy_sse_fallback,
            mode: self.mode.clone(),
            version: Mutex::new(None),
        };
        Ok(Transport { sender: Arc::new(sender), receiver: Box::new(receiver) })
    }

    /// `legacy_sse` when the fallback is on, else none.
    fn tolerances(&self) -> Vec<Tolerance> {
        match self.legacy_sse_fallback {
            true => vec![Tolerance::LegacySse],
            false => Vec::new(),
        }
    }
}

struct AutoSender {
    streamable: Arc<Core>,
    legacy: OnceCell<Arc<LegacyCore>>,
    sse: SseFactory,
    config: ConnectConfig,
    inbound: InboundTx,
    closed: Arc<watch::Sender<bool>>,
    fallback: bool,
    mode: Arc<Mutex<Option<HttpMode>>>,
    version: Mutex<Option<String>>,
}

impl fmt::Debug for AutoSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AutoSender")
            .field("streamable", &self.streamable)
            .field("legacy", &self.legacy.get())
            .field("fallback", &self.fallback)
            .finish_non_exhaustive()
    }
}

impl AutoSender {
    fn settle(&self, mode: HttpMode) {
        *self.mode.lock().expect("mode lock") = Some(mode);
    }
}

#[async_trait]
impl MessageSender for AutoSender {
    fn carries_headers(&self) -> bool {
        true
    }

    /// Once settled on streamable HTTP, as [`StreamableSender`] does; the
    /// HTTP+SSE fallback and `initialize` (which settles it) wait.
    fn try_send_request(
        &self,
        message: String,
        headers: WireHeaders,
    ) -> Result<Option<Exchange>, (String, WireHeaders)> {
        if self.legacy.get().is_some() {
            return Err((message, headers));
        }
        StreamableSender::try_with(&self.streamable, message, headers)
    }

    async fn send(&self, message: String) -> Result<(), Error> {
        self.send_request(message, WireHeaders::default()).await
    }

    async fn send_request(&self, message: String, headers: WireHeaders) -> Result<(), Error> {
        if let Some(legacy) = self.legacy.get() {
            return legacy.send(message).await;
        }
        let is_initialize =
            Peek::of(&message).method.as_deref() == Some(crate::protocol::methods::INITIALIZE);
        match StreamableSender::send_with(&self.streamable, message.clone(), headers).await? {
            Started::Sent => {
                if is_initialize {
                    self.settle(HttpMode::Streamable);
                }
                Ok(())
            }
            Started::Refused(status) => {
                let id = Peek::of(&message).id;
                tracing::info!(
                    target: "mcp_stack::http",
                    binding = %self.config.binding,
                    origin = %self.sse.redacted_origin(),
                    status = status.as_u16(),
                    "streamable HTTP refused initialize; trying HTTP+SSE (tolerance legacy_sse)"
                );
                let legacy = match self
                    .sse
                    .core(&self.config, self.inbound.clone(), self.closed.clone())
                    .await
                {
                    Ok(legacy) => legacy,
                    Err(e) => {
                        if let Some(id) = id {
                            let message = format!(
                                "streamable HTTP refused initialize (HTTP {}) and the HTTP+SSE fallback failed: {}",
                                status.as_u16(),
                                e.message()
                            );
                            let message = crate::error::normalize_message(
                                &message,
                                crate::error::MAX_ERROR_MESSAGE_BYTES,
                            );
                            self.inbound
                                .deliver(Ok(Inbound::RequestFailed {
                                    id,
                                    class: e.class(),
                                    message,
                                    http_status: e.http_status().or(Some(status.as_u16())),
                                    retry_after: e.retry_after(),
                                }))
                                .await;
                        }
                        return Ok(());
                    }
                };
                if let Some(version) = self.version.lock().expect("version lock").clone() {
                    legacy.negotiated(&version);
                }
                let legacy = self.legacy.get_or_init(|| async { legacy }).await;
                self.settle(HttpMode::LegacySse);
                legacy.send(message).await
            }
        }
    }

    async fn cancel(&self, id: &crate::protocol::RequestId, notice: Option<String>) -> Result<(), Error> {
        self.streamable.abandon(id);
        match notice {
            Some(notice) => self.send(notice).await,
            None => Ok(()),
        }
    }

    async fn close(&self) -> Result<(), Error> {
        if let Some(legacy) = self.legacy.get() {
            legacy.close();
        }
        self.streamable.close().await
    }

    fn negotiated(&self, protocol_version: &str) {
        *self.version.lock().expect("version lock") = Some(protocol_version.to_string());
        self.streamable.negotiated(protocol_version);
        if let Some(legacy) = self.legacy.get() {
            legacy.negotiated(protocol_version);
        }
    }

    /// `legacy_sse` once this connection fell back to HTTP+SSE.
    fn applied_tolerances(&self) -> Vec<Tolerance> {
        match self.legacy.initialized() {
            true => vec![Tolerance::LegacySse],
            false => Vec::new(),
        }
    }
}
