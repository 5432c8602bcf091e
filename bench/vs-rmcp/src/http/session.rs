//! One connected HTTP client of any kind, and its call loop.
//!
//! - mcp-stack: a [`Binding`] over [`StreamableHttpFactory`] (defaults:
//!   the listening stream on, which this server refuses with 405), the era
//!   pinned, calls in parallel allowed with room for 32, and the limits
//!   raised so that a 50 MB result is delivered whole (frame, body, text).
//! - rmcp: `StreamableHttpClientTransport::from_config` (the SDK's own
//!   reqwest client, as a user gets it), at most 32 `POST`s at once (its
//!   default is 16) and its JSON and SSE event bounds raised to 64 MiB.
//! - the floors ([`super::floor`]).
//!
//! Every loop checks what it received: no error, a text result, and for
//! the sized cases every byte asked for.

use mcp_stack::handlers::Handlers;
use mcp_stack::transport::http::StreamableHttpFactory;
use mcp_stack::{Binding, CallOpts, Definition, ProtocolChoice};
use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, ProtocolVersion, RequestMetaObject};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::floor::Floor;
use super::Client;
use crate::Era;

/// Bounds raised for the 50 MB results (all clients).
const BOUND: usize = 64 << 20;
/// Callers in flight at most.
pub(crate) const DEPTH: usize = 32;

pub(crate) enum Session {
    Stack(Binding),
    Rmcp(RunningService<RoleClient, ()>),
    Floor(Arc<Floor>),
}

impl Session {
    /// Connects `client` to `url` and makes it ready: the handshake done
    /// and the `tools` tools listed.
    pub(crate) async fn open(client: Client, era: Era, url: &str, tools: usize) -> Session {
        match client {
            Client::Stack => {
                let factory = StreamableHttpFactory::new(url).expect("a factory");
                let mut definition = Definition::new("bench", factory).with_protocol(match era {
                    Era::Legacy => ProtocolChoice::Legacy,
                    Era::Modern => ProtocolChoice::Modern,
                });
                let limits = definition
                    .limits()
                    .with_max_text_result_bytes(BOUND)
                    .with_max_frame_bytes(BOUND)
                    .with_max_body_bytes(BOUND)
                    .with_max_concurrent_requests(DEPTH);
                definition = definition.with_limits(limits).with_allow_parallel_calls(true);
                let binding =
                    Binding::connect(definition, Handlers::default()).await.expect("mcp-stack connects");
                assert_eq!(binding.catalog().tools.len(), tools);
                Session::Stack(binding)
            }
            Client::Rmcp => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url);
                config.max_concurrent_requests = DEPTH;
                config.max_json_response_size = BOUND;
                config.max_sse_event_size = BOUND;
                let transport = StreamableHttpClientTransport::from_config(config);
                let service = match era {
                    Era::Legacy => ().serve(transport).await.expect("rmcp initializes"),
                    Era::Modern => {
                        let discover = ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        };
                        ().serve_with_lifecycle(transport, discover).await.expect("rmcp discovers")
                    }
                };
                let listed = service.list_all_tools().await.expect("rmcp lists");
                assert_eq!(listed.len(), tools);
                Session::Rmcp(service)
            }
            Client::Reqwest | Client::Hyper => {
                Session::Floor(Arc::new(Floor::open(client == Client::Hyper, era, url, tools).await))
            }
        }
    }

    pub(crate) async fn close(self) {
        match self {
            Session::Stack(binding) => binding.close().await,
            Session::Rmcp(service) => {
                let _ = service.cancel().await;
            }
            Session::Floor(floor) => {
                if let Ok(floor) = Arc::try_unwrap(floor) {
                    floor.close().await
                }
            }
        }
    }

    /// `calls` calls of `echo` with `arguments`, by `depth` callers.
    /// `{"bytes": N}` checks every result has N bytes of text;
    /// `{"progress": N}` asks for progress (a token) and counts it.
    pub(crate) async fn calls(&self, calls: usize, depth: usize, arguments: &Map<String, Value>) {
        let bytes = arguments.get("bytes").and_then(Value::as_u64).map(|n| n as usize);
        let progress = arguments.get("progress").and_then(Value::as_u64).map(|n| n as usize);
        let mut tasks = tokio::task::JoinSet::new();
        for share in shares(calls, depth) {
            let arguments = arguments.clone();
            match self {
                Session::Stack(binding) => {
                    let binding = binding.clone();
                    tasks.spawn(async move {
                        for _ in 0..share {
                            let seen = Arc::new(AtomicUsize::new(0));
                            let mut opts = CallOpts::default();
                            if progress.is_some() {
                                let seen = seen.clone();
                                opts = opts.with_progress(move |_| {
                                    seen.fetch_add(1, Ordering::Relaxed);
                                });
                            }
                            let result =
                                binding.call_tool("echo", Value::Object(arguments.clone()), opts).await;
                            let result = result.expect("the call succeeds");
                            assert!(!result.is_error);
                            let text = result.content.first().and_then(|c| c.as_text()).map(str::len);
                            check(bytes, text);
                        }
                    });
                }
                Session::Rmcp(service) => {
                    let peer = service.peer().clone();
                    tasks.spawn(async move {
                        for i in 0..share {
                            let mut params =
                                CallToolRequestParams::new("echo").with_arguments(arguments.clone());
                            if progress.is_some() {
                                let token = ProgressToken(NumberOrString::Number(i as i64));
                                params.meta = Some(RequestMetaObject::with_progress_token(token));
                            }
                            let result = peer.call_tool(params).await.expect("the call succeeds");
                            assert_ne!(result.is_error, Some(true));
                            let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.len());
                            check(bytes, text);
                        }
                    });
                }
                Session::Floor(floor) => {
                    let floor = floor.clone();
                    tasks.spawn(async move {
                        for i in 0..share {
                            let mut params = json!({ "name": "echo", "arguments": arguments });
                            if progress.is_some() {
                                params["_meta"] = json!({ "progressToken": i });
                            }
                            let (reply, notifications) = floor.request("tools/call", params).await;
                            let text = reply["result"]["content"][0]["text"].as_str().map(str::len);
                            check(bytes, text);
                            assert_eq!(notifications, progress.unwrap_or(0), "every notification");
                        }
                    });
                }
            }
        }
        while let Some(done) = tasks.join_next().await {
            done.expect("a calling task");
        }
    }
}

/// A text result arrived, whole when `bytes` were asked for.
fn check(bytes: Option<usize>, text: Option<usize>) {
    let text = text.expect("a text result");
    if let Some(bytes) = bytes {
        assert_eq!(text, bytes, "the result arrived whole");
    }
}

/// `calls` split over `depth` callers.
fn shares(calls: usize, depth: usize) -> Vec<usize> {
    (0..depth).map(|i| calls / depth + usize::from(i < calls % depth)).filter(|n| *n > 0).collect()
}
