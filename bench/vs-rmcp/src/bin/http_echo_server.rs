//! The one small streamable-HTTP MCP server every client of the HTTP bench
//! talks to (hyper 1, http1, loopback).
//!
//! `http-echo-server` binds `127.0.0.1:0`, prints its endpoint
//! (`http://127.0.0.1:PORT/mcp`) on stdout and serves until its stdin
//! closes (the bench holds it open). It speaks both eras on one endpoint,
//! and answers what the stdio `echo-server` answers:
//!
//! - **2025-11-25**, the session form: `initialize` opens a session whose
//!   id comes back in `Mcp-Session-Id`; every later message must carry it
//!   (unknown: 404; missing: 400); notifications (`initialized`) are
//!   accepted with 202; `DELETE` ends the session; `GET` (the listening
//!   stream) is 405: this server sends nothing on its own.
//! - **2026-07-28**, the stateless form: no session; `server/discover`
//!   answers the versions, capabilities and server info; every other
//!   request must carry `_meta` with
//!   `io.modelcontextprotocol/protocolVersion: 2026-07-28` (else 400), and
//!   each result is marked `resultType: "complete"`.
//!
//! A request without a session header that is not `initialize` is taken
//! as 2026-07-28.
//!
//! The query picks the reply's form and the catalog, per request, so that
//! one server serves every case: `?sse=1` answers `text/event-stream` (one
//! `data:` event per message; no event ids: nothing here is resumed),
//! anything else `application/json`; `?tools=N` lists `echo` and N-1 more
//! tools (as the stdio server's `ECHO_TOOLS`).
//!
//! `tools/call` of any tool: `{"text": T}` echoes T; `{"bytes": N}`
//! answers N bytes of text (at most 64 MiB); `{"progress": N}` (SSE only)
//! first sends N `notifications/progress` on the reply stream, with the
//! request's `_meta.progressToken`, then an empty text result.
//!
//! Large results and catalogs are encoded once and kept (the reply is
//! written as the envelope's head, the kept bytes, and its tail), so that
//! the server's own work per call is small and the same for every client.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::io::{Read, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

const MAX_BYTES: usize = 64 << 20;
const MAX_PROGRESS: u64 = 10_000;
const MODERN: &str = "2026-07-28";
const SESSION: &str = "mcp-session-id";

/// A reply body: chunks written one after the other. JSON replies give
/// their exact length (so hyper sends `Content-Length`); SSE replies do not
/// (chunked).
struct Chunks {
    chunks: VecDeque<Bytes>,
    remaining: u64,
    exact: bool,
}

impl Chunks {
    fn new(chunks: Vec<Bytes>, exact: bool) -> Chunks {
        let remaining = chunks.iter().map(|c| c.len() as u64).sum();
        Chunks { chunks: chunks.into(), remaining, exact }
    }
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.chunks.pop_front();
        if let Some(chunk) = &next {
            self.remaining -= chunk.len() as u64;
        }
        Poll::Ready(next.map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        if self.exact {
            SizeHint::with_exact(self.remaining)
        } else {
            SizeHint::default()
        }
    }
}

#[derive(Default)]
struct Server {
    sessions: Mutex<HashSet<String>>,
    next_session: AtomicU64,
    /// Encoded results kept: (what, modern) → the result's JSON text.
    kept: Mutex<HashMap<(String, bool), Bytes>>,
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let port = listener.local_addr().expect("an address").port();
        println!("http://127.0.0.1:{port}/mcp");
        std::io::stdout().flush().expect("stdout");
        // Ends with the bench: when stdin closes.
        std::thread::spawn(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            std::process::exit(0);
        });
        let server = Arc::new(Server::default());
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let server = server.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(server.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

fn status(code: StatusCode, text: &str) -> Response<Chunks> {
    let mut response = Response::new(Chunks::new(vec![Bytes::from(text.to_string())], true));
    *response.status_mut() = code;
    response
}

impl Server {
    async fn handle(&self, request: Request<Incoming>) -> Response<Chunks> {
        let query = request.uri().query().unwrap_or_default().to_string();
        let sse = query.split('&').any(|p| p == "sse=1");
        let tools: usize = query
            .split('&')
            .find_map(|p| p.strip_prefix("tools="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(1usize)
            .clamp(1, 100_000);
        let session = request.headers().get(SESSION).and_then(|v| v.to_str().ok()).map(String::from);
        match *request.method() {
            Method::POST => {}
            Method::DELETE => {
                let known = session.is_some_and(|s| self.sessions.lock().unwrap().remove(&s));
                return status(if known { StatusCode::OK } else { StatusCode::NOT_FOUND }, "");
            }
            _ => return status(StatusCode::METHOD_NOT_ALLOWED, ""),
        }
        let Ok(body) = request.into_body().collect().await.map(|b| b.to_bytes()) else {
            return status(StatusCode::BAD_REQUEST, "the body broke");
        };
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            return status(StatusCode::BAD_REQUEST, "not JSON");
        };
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let mut new_session = None;
        let modern = match &session {
            Some(id) if !self.sessions.lock().unwrap().contains(id) => {
                return status(StatusCode::NOT_FOUND, "no such session");
            }
            Some(_) => false,
            None if method == "initialize" => {
                let id = format!("s{}", self.next_session.fetch_add(1, Ordering::Relaxed));
                self.sessions.lock().unwrap().insert(id.clone());
                new_session = Some(id);
                false
            }
            None if method == "server/discover" => true,
            None => {
                let version = &message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
                if version != MODERN {
                    return status(StatusCode::BAD_REQUEST, "a session, or the 2026-07-28 _meta");
                }
                true
            }
        };
        let Some(id) = message.get("id") else {
            // A notification or a response.
            return status(StatusCode::ACCEPTED, "");
        };
        let id = serde_json::to_string(id).expect("an id serializes");
        let params = &message["params"];
        let mut events = Vec::new();
        let result: Result<Bytes, Value> = match method.as_str() {
            "initialize" if !modern => Ok(encode(
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": { "tools": {} },
                    "serverInfo": { "name": "http-echo-server", "version": "1.0.0" },
                }),
                false,
            )),
            "server/discover" if modern => Ok(encode(
                json!({
                    "supportedVersions": [MODERN],
                    "capabilities": { "tools": {} },
                    "serverInfo": { "name": "http-echo-server", "version": "1.0.0" },
                    "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "http-echo-server", "version": "1.0.0" } },
                    "ttlMs": 0,
                    "cacheScope": "private",
                }),
                true,
            )),
            "ping" => Ok(encode(json!({}), modern)),
            "tools/list" => {
                Ok(self.kept(format!("tools {tools}"), modern, || json!({ "tools": catalog(tools) })))
            }
            "tools/call" => {
                let arguments = &params["arguments"];
                if let Some(n) = arguments.get("bytes").and_then(Value::as_u64) {
                    let n = (n as usize).min(MAX_BYTES);
                    Ok(self.kept(format!("bytes {n}"), modern, || text_result("x".repeat(n))))
                } else {
                    if let Some(n) = arguments.get("progress").and_then(Value::as_u64) {
                        let token = params["_meta"]["progressToken"].clone();
                        for i in 1..=n.min(MAX_PROGRESS) {
                            let notification = json!({
                                "jsonrpc": "2.0",
                                "method": "notifications/progress",
                                "params": { "progressToken": token, "progress": i, "total": n },
                            });
                            events.push(Bytes::from(serde_json::to_vec(&notification).expect("serializes")));
                        }
                    }
                    let text = arguments["text"].as_str().unwrap_or_default().to_string();
                    Ok(encode(text_result(text), modern))
                }
            }
            _ => Err(json!({ "code": -32601, "message": format!("method not found: {method}") })),
        };
        let head = Bytes::from(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},"));
        let mut reply = vec![head];
        match result {
            Ok(result) => reply.extend([Bytes::from_static(b"\"result\":"), result]),
            Err(error) => reply.extend([Bytes::from_static(b"\"error\":"), Bytes::from(error.to_string())]),
        }
        reply.push(Bytes::from_static(b"}"));
        let mut response = if sse {
            let mut chunks = Vec::new();
            for event in events {
                chunks.extend([Bytes::from_static(b"data: "), event, Bytes::from_static(b"\n\n")]);
            }
            chunks.push(Bytes::from_static(b"data: "));
            chunks.extend(reply);
            chunks.push(Bytes::from_static(b"\n\n"));
            let mut response = Response::new(Chunks::new(chunks, false));
            response.headers_mut().insert("content-type", "text/event-stream".parse().unwrap());
            response
        } else {
            // `progress` in a JSON reply: the notifications are not sent.
            let mut response = Response::new(Chunks::new(reply, true));
            response.headers_mut().insert("content-type", "application/json".parse().unwrap());
            response
        };
        if let Some(session) = new_session {
            response.headers_mut().insert(SESSION, session.parse().expect("a header value"));
        }
        response
    }

    /// The encoded result `what` of the era, made once by `make`.
    fn kept(&self, what: String, modern: bool, make: impl FnOnce() -> Value) -> Bytes {
        let key = (what, modern);
        if let Some(kept) = self.kept.lock().unwrap().get(&key) {
            return kept.clone();
        }
        let encoded = encode(make(), modern);
        self.kept.lock().unwrap().insert(key, encoded.clone());
        encoded
    }
}

/// A result's JSON text, marked complete on 2026-07-28.
fn encode(mut result: Value, modern: bool) -> Bytes {
    if modern {
        result["resultType"] = json!("complete");
    }
    Bytes::from(serde_json::to_vec(&result).expect("a value serializes"))
}

fn text_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": false })
}

/// `echo` and `n - 1` tools like those of a real server, the same as the
/// stdio server's.
fn catalog(n: usize) -> Value {
    let mut tools = vec![json!({
        "name": "echo",
        "description": "Echoes text, or answers `bytes` bytes of it",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": { "type": "string" },
                "bytes": { "type": "integer", "minimum": 0 },
                "progress": { "type": "integer", "minimum": 0 },
            },
        },
    })];
    for i in 1..n {
        tools.push(json!({
            "name": format!("tool_{i:04}"),
            "description": format!("Tool number {i}: looks a record up by id and returns its fields"),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The record's id" },
                    "fields": { "type": "array", "items": { "type": "string" } },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100 },
                },
                "required": ["id"],
            },
            "annotations": { "readOnlyHint": true },
        }));
    }
    Value::Array(tools)
}
