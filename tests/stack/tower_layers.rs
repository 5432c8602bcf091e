//! Issue 43, items 1 and 2: tower's own middleware inside a live binding,
//! each added with one `.layer(..)` as it is, and the errors they make
//! classified by what they are.

use mcp_stack::{Binding, BoxError, BoxMcpService, CallOpts, Definition, Error, FailureClass, McpRequest};
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tower::buffer::BufferLayer;
use tower::filter::FilterLayer;
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer};
use tower::load_shed::LoadShedLayer;
use tower::retry::{Policy, RetryLayer};
use tower::timeout::TimeoutLayer;
use tower::util::{MapRequestLayer, MapResponseLayer};
use tower::{Layer, Service, ServiceBuilder};

use crate::support::scripted::{id_of, scripted};

fn demo() -> Definition {
    Definition::new("demo", mcp_stack::demo::factory())
}

fn echo(text: &str) -> serde_json::Value {
    json!({ "message": text })
}

async fn echoed(binding: &Binding, text: &str) -> Result<String, Error> {
    let result = binding.call_tool("echo", echo(text), CallOpts::default()).await?;
    Ok(result.content[0].as_text().unwrap_or_default().to_owned())
}

#[tokio::test(start_paused = true)]
async fn timeout_fits_and_its_elapsed_is_a_deadline() {
    let binding =
        Binding::builder(demo()).layer(TimeoutLayer::new(Duration::from_secs(1))).connect().await.unwrap();
    assert_eq!(echoed(&binding, "in time").await.unwrap(), "in time");
    let start = tokio::time::Instant::now();
    let err = binding.call_tool("sleep", json!({ "ms": 5_000 }), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline, "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert_eq!(err.binding(), Some("demo"));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn rate_limit_fits_though_its_service_is_not_clone() {
    let binding = Binding::builder(demo())
        .layer(RateLimitLayer::new(2, Duration::from_secs(10)))
        .connect()
        .await
        .unwrap();
    // Discovery's list calls went through the limit too: wait for a new period.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let start = tokio::time::Instant::now();
    let calls = (0..4).map(|i| {
        let binding = binding.clone();
        async move { echoed(&binding, &i.to_string()).await.unwrap() }
    });
    let out = futures_util::future::join_all(calls).await;
    assert_eq!(out, ["0", "1", "2", "3"]);
    // Two per ten seconds: the third and fourth waited for the next period.
    assert_eq!(start.elapsed(), Duration::from_secs(10));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn concurrency_limit_and_load_shed_fit_and_a_shed_call_is_overloaded() {
    let binding = Binding::builder(demo())
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(1))
        .connect()
        .await
        .unwrap();
    let slow = tokio::spawn({
        let binding = binding.clone();
        async move { binding.call_tool("sleep", json!({ "ms": 1_000 }), CallOpts::default()).await }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let err = binding.call_tool("echo", echo("second"), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Overloaded, "{err}");
    let slow = tokio::time::timeout(Duration::from_secs(60), slow).await.unwrap().unwrap();
    assert!(slow.is_ok(), "{slow:?}");
    // Once the permit is back, calls pass again.
    assert_eq!(echoed(&binding, "after").await.unwrap(), "after");
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn buffer_fits_and_the_errors_it_wraps_keep_their_class() {
    let binding = Binding::builder(demo()).layer(BufferLayer::new(8)).connect().await.unwrap();
    assert_eq!(echoed(&binding, "buffered").await.unwrap(), "buffered");
    // A deadline below the buffer comes back through it as a deadline.
    let opts = CallOpts::default().with_timeout(Duration::from_millis(100));
    let err = binding.call_tool("sleep", json!({ "ms": 5_000 }), opts).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline, "{err}");
    // An unknown prompt: the server's error, through the buffer, keeps its class.
    let err = binding.get_prompt("nope", Default::default(), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::RemoteError, "{err}");
    binding.close().await;
}

/// Sends a request again once after any failure: a policy of the host's own.
#[derive(Clone)]
struct OnceMore(Arc<AtomicUsize>);

impl<E> Policy<McpRequest, mcp_stack::McpResponse, E> for OnceMore {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _req: &mut McpRequest,
        result: &mut Result<mcp_stack::McpResponse, E>,
    ) -> Option<Self::Future> {
        match result {
            Err(_) if self.0.fetch_add(1, Ordering::SeqCst) == 0 => Some(std::future::ready(())),
            _ => None,
        }
    }

    fn clone_request(&mut self, req: &McpRequest) -> Option<McpRequest> {
        Some(req.clone())
    }
}

#[tokio::test(start_paused = true)]
async fn retry_filter_and_maps_fit() {
    let retries = Arc::new(AtomicUsize::new(0));
    let mapped = Arc::new(AtomicUsize::new(0));
    let counted = mapped.clone();
    let binding = Binding::builder(demo())
        .layer(FilterLayer::new(|req: McpRequest| {
            let name = req.params().get("name").and_then(|n| n.as_str()).unwrap_or_default().to_owned();
            match name.as_str() {
                // A refusal of the host's own, with the class that says so.
                "add" => {
                    Err(Error::new(FailureClass::ToolUnavailable, "the host's policy refuses add").into())
                }
                // A refusal as any library might write it.
                "env" => Err(BoxError::from("refused by a plain filter")),
                _ => Ok(req),
            }
        }))
        .layer(RetryLayer::new(OnceMore(retries.clone())))
        .layer(MapRequestLayer::new(|mut req: McpRequest| {
            if req.method == "tools/call" {
                req.params_mut().insert("arguments".into(), echo("rewritten by map_request"));
            }
            req
        }))
        .layer(MapResponseLayer::new(move |rsp| {
            counted.fetch_add(1, Ordering::SeqCst);
            rsp
        }))
        .connect()
        .await
        .unwrap();
    assert_eq!(echoed(&binding, "original").await.unwrap(), "rewritten by map_request");
    assert!(mapped.load(Ordering::SeqCst) >= 1, "map_response saw the responses");

    let err = binding.call_tool("add", json!({ "a": 1, "b": 2 }), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::ToolUnavailable, "{err}");
    let err = binding.call_tool("env", json!({ "name": "HOME" }), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Unknown, "{err}");
    assert!(err.message().contains("refused by a plain filter"), "{err}");

    // The host's retry policy is asked about a request the server fails:
    // after the first failure (it sends it once more) and the second.
    let before = retries.load(Ordering::SeqCst);
    let err = binding.get_prompt("nope", Default::default(), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::RemoteError, "{err}");
    assert_eq!(retries.load(Ordering::SeqCst), before + 2, "the host's retry policy was asked");
    binding.close().await;
}

/// A layer of the host's own, written the usual way: it passes the request
/// on, and fails after the server has answered (a check of its own on the
/// way back, an I/O error of an audit sink) of a tool call: an error this
/// crate does not know.
#[derive(Clone)]
struct FailAfterReply<S>(S);

impl<S> Service<McpRequest> for FailAfterReply<S>
where
    S: Service<McpRequest, Response = mcp_stack::McpResponse> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = mcp_stack::McpResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let tool_call = req.method == "tools/call";
        let reply = self.0.call(req);
        Box::pin(async move {
            let reply = reply.await.map_err(Into::into)?;
            match tool_call {
                true => Err(Box::new(std::io::Error::other("the audit sink is gone")) as BoxError),
                false => Ok(reply),
            }
        })
    }
}

/// A server that counts the tool calls it runs.
fn counting_server() -> (mcp_stack::transport::memory::MemoryFactory, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let (factory, _recorder) = scripted(move |wire, req| {
        if req.method == "tools/call" {
            seen.fetch_add(1, Ordering::SeqCst);
            wire.reply(&id_of(req), json!({ "content": [{ "type": "text", "text": "ran" }] }));
        } else {
            wire.reply(&id_of(req), json!({}));
        }
    });
    (factory, calls)
}

/// Item 2: an error the crate does not recognise promises nothing, so the
/// binding's retry (on by default) does not send the tool call again.
#[tokio::test(start_paused = true)]
async fn an_unknown_error_below_the_retry_is_never_resent() {
    let (factory, calls) = counting_server();
    let definition = Definition::new("counted", factory);
    assert!(definition.retry_requests(), "retries are on");
    let binding = Binding::builder(definition)
        .stack(|parts| {
            let stack = ServiceBuilder::new()
                .layer(parts.result_limit())
                .layer(parts.retry())
                .map_err(Error::from_boxed)
                .layer_fn(FailAfterReply)
                .service(parts.reconnect());
            BoxMcpService::new(stack)
        })
        .connect()
        .await
        .unwrap();
    let request = McpRequest::with_value("tools/call", json!({ "name": "anything", "arguments": {} }));
    let err = tower::ServiceExt::oneshot(binding.service(), request).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Unknown, "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the server ran the tool call once");
    binding.close().await;
}

/// Item 2, as a user layer: the same error from a layer added with
/// `.layer(..)` is `unknown`, with the layer's error kept as the source.
#[tokio::test(start_paused = true)]
async fn a_user_layers_own_error_is_unknown_with_its_source() {
    let (factory, calls) = counting_server();
    let binding = Binding::builder(Definition::new("counted", factory))
        .layer(tower::layer::layer_fn(FailAfterReply))
        .connect()
        .await
        .unwrap();
    let request = McpRequest::with_value("tools/call", json!({ "name": "anything", "arguments": {} }));
    let err = tower::ServiceExt::oneshot(binding.service(), request).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Unknown, "{err}");
    let source = std::error::Error::source(&err).expect("the layer's error is kept");
    assert!(source.to_string().contains("audit sink"), "{source}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    binding.close().await;
}

/// A layer whose `Layer` impl is written for [`BoxMcpService`] alone (not
/// generic) fits too: that is the service user layers wrap.
#[tokio::test(start_paused = true)]
async fn a_layer_written_for_box_mcp_service_fits() {
    struct Named;
    impl Layer<BoxMcpService> for Named {
        type Service = BoxMcpService;
        fn layer(&self, inner: BoxMcpService) -> BoxMcpService {
            inner
        }
    }
    let binding = Binding::builder(demo()).layer(Named).connect().await.unwrap();
    assert_eq!(echoed(&binding, "plain").await.unwrap(), "plain");
    binding.close().await;
}
