//! Entry points for the fuzz targets under `fuzz/` (cargo feature
//! `fuzzing`, off by default). **Not API**: hidden from the docs, outside
//! any stability promise, and changed whenever the internals they reach
//! change. The targets that need only the public API (the result limits,
//! the HTTP builder) use it directly; the checks of the others live here,
//! one module per target, so that the internals they drive (the frame
//! reader, the SSE splitter, message parsing, catalog discovery, the OAuth
//! parsers) stay crate-private. Each target is one call to its `run`.

use tower::Service;

pub mod auth_documents;
pub mod jsonrpc_message;
pub mod sse_events;
pub mod stdio_frames;
pub mod tools_list_page;

use crate::catalog::{BuildContext, Catalog};
use crate::compat::Profile;
use crate::config::Limits;
use crate::error::Error;
use crate::protocol::lifecycle::ServerCapabilities;
use crate::request::{McpRequest, McpResponse};
use crate::session::{ServerIdentity, SessionInfo};

/// Discovers the tools `service` lists, as a binding does at connect: pages
/// through `tools/list` within `limits` and builds generation 1 of a catalog
/// of the binding `fuzz` under the default profile.
pub(crate) async fn discover_tools<S>(service: S, limits: Limits) -> Result<Catalog, Error>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
{
    let ctx = BuildContext {
        binding: "fuzz".into(),
        session: SessionInfo {
            protocol_version: "2025-11-25".into(),
            server: ServerIdentity::default(),
            capabilities: ServerCapabilities::default(),
            instructions: None,
            transport_tolerances: Vec::new(),
        },
        profile: Profile::default(),
        filter: Default::default(),
        always_load: Default::default(),
        http: false,
        declarations: Default::default(),
        warned: Default::default(),
        events: None,
        limits,
    };
    ctx.discover_tools(service).await
}

/// What an SSE body gave, read by the transports' event reader.
#[cfg(feature = "http")]
#[derive(Debug, Default)]
pub(crate) struct SseTrace {
    /// The messages delivered, in order.
    pub messages: Vec<String>,
    /// The events skipped as damaged: their reason, data prefix and length.
    pub damaged: Vec<(String, String, u64)>,
    /// Whether reading stopped at the body bound.
    pub body_limit: bool,
    /// The last event id seen.
    pub last_event_id: Option<String>,
    /// The last `retry` advice seen.
    pub retry: Option<std::time::Duration>,
}

/// Reads `chunks` as one SSE body (each chunk as it would arrive) with the
/// event reader of the HTTP transports: events bounded by `max_frame`, the
/// body by `max_body`.
#[cfg(feature = "http")]
pub(crate) fn read_sse(chunks: Vec<Vec<u8>>, max_frame: usize, max_body: Option<usize>) -> SseTrace {
    use crate::transport::http::sse::{End, EventReader, Item};
    use futures_util::FutureExt;
    let body = futures_util::stream::iter(chunks.into_iter().map(|c| Ok(bytes::Bytes::from(c))));
    let mut reader = EventReader::from_stream(Box::pin(body), max_frame, max_body);
    let mut trace = SseTrace::default();
    // Bounded: every turn returns an event of the finite input or ends.
    loop {
        // The body is in memory: the reader never waits.
        let Some(next) = reader.next().now_or_never() else { break };
        match next {
            Ok(Item::Message(text)) => trace.messages.push(text),
            Ok(Item::Damaged { reason, prefix, bytes }) => trace.damaged.push((reason, prefix, bytes)),
            Err(end) => {
                trace.body_limit = matches!(end, End::BodyLimit { .. });
                break;
            }
        }
    }
    trace.last_event_id = reader.last_event_id.clone();
    trace.retry = reader.retry;
    trace
}
