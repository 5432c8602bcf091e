//! The two HTTP floors: what any streamable-HTTP client must do, and
//! nothing else.
//!
//! Each request is a JSON value (with the era's `_meta` on 2026-07-28)
//! serialized and `POST`ed with the headers the transport asks for
//! (`Accept`, `Content-Type`, `Mcp-Session-Id` and `MCP-Protocol-Version`
//! on 2025-11-25 once the session is open); the whole body is read; a JSON
//! body is checked to be UTF-8 and parsed into a value; an SSE body is cut
//! into its events' `data:` payloads ([`sse_data`], the minimum of SSE's
//! framing), each parsed, notifications counted, until the response whose
//! id matches. No bounds, no checks beyond the id, no layers.
//!
//! - the **reqwest floor**: one `reqwest::Client` (0.13, mcp-stack's
//!   version, its connection pool; a new client per connect), `bytes()`;
//! - the **hyper floor**: hyper 1's http1 client over a `TcpStream` of its
//!   own (`TCP_NODELAY`), one connection per caller in flight (http1 runs
//!   one exchange at a time on a connection), bodies `collect`ed.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::Era;

/// The `data` of each event of an SSE body: the lines that start with
/// `data:` (one space after the colon dropped), joined with `\n` when an
/// event has several; events end at a blank line (`\n\n` or `\r\n\r\n`);
/// events with no data line are skipped; other fields and comments are
/// ignored. Borrowed when an event has one data line (the usual case).
pub(crate) fn sse_data(body: &[u8]) -> Vec<Cow<'_, [u8]>> {
    let mut out = Vec::new();
    let mut current: Option<Cow<'_, [u8]>> = None;
    for line in body.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            out.extend(current.take());
            continue;
        }
        let Some(data) = line.strip_prefix(b"data:") else { continue };
        let data = data.strip_prefix(b" ").unwrap_or(data);
        current = Some(match current.take() {
            None => Cow::Borrowed(data),
            Some(before) => {
                let mut joined = before.into_owned();
                joined.push(b'\n');
                joined.extend_from_slice(data);
                Cow::Owned(joined)
            }
        });
    }
    // An event the body ended without its blank line is not dispatched
    // (as the SSE standard says).
    out
}

/// A message's bytes parsed into a value, the way a client that checks a
/// body is UTF-8 once does (as the stdio bench's JSON floor).
fn parse(bytes: &[u8]) -> Value {
    let text = std::str::from_utf8(bytes).expect("a UTF-8 reply");
    serde_json::from_str(text).expect("a JSON reply")
}

/// The response to `id` in a reply body, and the notifications before it.
pub(crate) fn reply_in(body: &[u8], event_stream: bool, id: u64) -> (Value, usize) {
    if !event_stream {
        let reply = parse(body);
        assert_eq!(reply["id"], id, "the reply answers its request");
        return (reply, 0);
    }
    let mut notifications = 0;
    for data in sse_data(body) {
        let message = parse(&data);
        if message.get("method").is_some() {
            notifications += 1;
        } else if message["id"] == id {
            return (message, notifications);
        }
    }
    panic!("the event stream ended without the response to {id}");
}

/// How a floor sends: reqwest, or hyper's http1 connections.
enum Wire {
    Reqwest(reqwest::Client),
    /// Idle connections; a caller takes one or opens one.
    Hyper(Mutex<Vec<SendRequest<Full<Bytes>>>>),
}

/// A floor's connection to the server: the era, the session (2025-11-25)
/// and the wire.
pub(crate) struct Floor {
    url: String,
    authority: String,
    path: String,
    era: Era,
    session: Option<String>,
    next_id: AtomicU64,
    wire: Wire,
}

impl Floor {
    /// Opens a floor on `url` and makes it ready: the handshake done and
    /// the tools listed (`tools` of them).
    pub(crate) async fn open(hyper: bool, era: Era, url: &str, tools: usize) -> Floor {
        let rest = url.strip_prefix("http://").expect("an http URL");
        let split = rest.find('/').unwrap_or(rest.len());
        let wire =
            if hyper { Wire::Hyper(Mutex::new(Vec::new())) } else { Wire::Reqwest(reqwest::Client::new()) };
        let mut floor = Floor {
            url: url.to_string(),
            authority: rest[..split].to_string(),
            path: rest[split..].to_string(),
            era,
            session: None,
            next_id: AtomicU64::new(0),
            wire,
        };
        match era {
            Era::Legacy => {
                let params = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "floor", "version": "0" } });
                let (id, body) = floor.envelope("initialize", params);
                let (status, session, sse, reply) = floor.post(body).await;
                assert!(status.is_success(), "initialize: HTTP {status}");
                reply_in(&reply, sse, id);
                floor.session = Some(session.expect("a session id"));
                let (status, ..) =
                    floor.post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()).await;
                assert!(status.is_success(), "initialized: HTTP {status}");
            }
            Era::Modern => {
                floor.request("server/discover", json!({})).await;
            }
        }
        let (listed, _) = floor.request("tools/list", json!({})).await;
        assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(tools));
        floor
    }

    /// A request's id and serialized text.
    fn envelope(&self, method: &str, mut params: Value) -> (u64, Vec<u8>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        if self.era == Era::Modern {
            let meta = params.as_object_mut().expect("params").entry("_meta").or_insert_with(|| json!({}));
            meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
            meta["io.modelcontextprotocol/clientInfo"] = json!({ "name": "floor", "version": "0" });
            meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        }
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        (id, serde_json::to_vec(&message).expect("serializes"))
    }

    /// One request, its response parsed, and the notifications before it.
    pub(crate) async fn request(&self, method: &str, params: Value) -> (Value, usize) {
        let (id, body) = self.envelope(method, params);
        let (status, _, sse, reply) = self.post(body).await;
        assert!(status.is_success(), "{method}: HTTP {status}");
        reply_in(&reply, sse, id)
    }

    /// One `POST`: its status, the session id it gave, whether it is an
    /// event stream, and its whole body.
    async fn post(&self, body: Vec<u8>) -> (hyper::StatusCode, Option<String>, bool, Bytes) {
        let version = match (self.era, &self.session) {
            (Era::Modern, _) => Some("2026-07-28"),
            (Era::Legacy, Some(_)) => Some("2025-11-25"),
            (Era::Legacy, None) => None,
        };
        let mut headers =
            vec![("accept", "application/json, text/event-stream"), ("content-type", "application/json")];
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session.as_str()));
        }
        if let Some(version) = version {
            headers.push(("mcp-protocol-version", version));
        }
        match &self.wire {
            Wire::Reqwest(client) => {
                let mut request = client.post(&self.url);
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                let response = request.body(body).send().await.expect("the POST");
                let (status, session, sse) = heads(response.status(), response.headers());
                (status, session, sse, response.bytes().await.expect("the body"))
            }
            Wire::Hyper(idle) => {
                let mut request =
                    hyper::Request::post(self.path.as_str()).header("host", self.authority.as_str());
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                let request = request.body(Full::new(Bytes::from(body))).expect("a request");
                let taken = idle.lock().expect("idle").pop();
                let mut sender = match taken {
                    Some(sender) => sender,
                    None => self.dial().await,
                };
                sender.ready().await.expect("the connection");
                let response = sender.send_request(request).await.expect("the POST");
                let (status, session, sse) = heads(response.status(), response.headers());
                let body = response.into_body().collect().await.expect("the body").to_bytes();
                idle.lock().expect("idle").push(sender);
                (status, session, sse, body)
            }
        }
    }

    async fn dial(&self) -> SendRequest<Full<Bytes>> {
        let stream = tokio::net::TcpStream::connect(self.authority.as_str()).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
        tokio::spawn(connection);
        sender
    }

    /// Ends a 2025-11-25 session (`DELETE`), as a client closing does.
    pub(crate) async fn close(self) {
        let Some(session) = &self.session else { return };
        match &self.wire {
            Wire::Reqwest(client) => {
                let _ = client.delete(&self.url).header("mcp-session-id", session).send().await;
            }
            Wire::Hyper(idle) => {
                let taken = idle.lock().expect("idle").pop();
                let Some(mut sender) = taken else { return };
                let request = hyper::Request::delete(self.path.as_str())
                    .header("host", self.authority.as_str())
                    .header("mcp-session-id", session.as_str())
                    .body(Full::new(Bytes::new()))
                    .expect("a request");
                if sender.ready().await.is_ok() {
                    let _ = sender.send_request(request).await;
                }
            }
        }
    }
}

fn heads(status: hyper::StatusCode, headers: &hyper::HeaderMap) -> (hyper::StatusCode, Option<String>, bool) {
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
    let sse = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    (status, session, sse)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(body: &str) -> Vec<String> {
        sse_data(body.as_bytes()).iter().map(|d| String::from_utf8(d.to_vec()).unwrap()).collect()
    }

    #[test]
    fn sse_data_cuts_events_at_blank_lines_and_keeps_only_data() {
        assert_eq!(data("data: {\"a\":1}\n\ndata: {\"b\":2}\n\n"), ["{\"a\":1}", "{\"b\":2}"]);
        // One space after the colon is dropped, not more; none is fine.
        assert_eq!(data("data:x\n\ndata:  y\n\n"), ["x", " y"]);
        // CRLF line ends; other fields and comments are ignored.
        assert_eq!(data(": hi\r\nid: 7\r\nevent: message\r\ndata: z\r\n\r\n"), ["z"]);
        // Several data lines are one event's data, joined with \n.
        assert_eq!(data("data: a\ndata: b\n\n"), ["a\nb"]);
        // An event with no data (a priming event) is no message.
        assert_eq!(data("id: 1\n\ndata: m\n\n"), ["m"]);
        // An event the stream ended without its blank line is not one.
        assert_eq!(data("data: whole\n\ndata: cut"), ["whole"]);
        assert!(data("").is_empty());
    }

    #[test]
    fn sse_data_borrows_a_single_line_event() {
        let body = b"data: {}\n\n";
        assert!(matches!(sse_data(body)[0], Cow::Borrowed(_)));
    }

    #[test]
    fn the_reply_is_found_after_the_notifications() {
        let body = concat!(
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":2}}\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n",
        );
        let (reply, notifications) = reply_in(body.as_bytes(), true, 3);
        assert_eq!(notifications, 2);
        assert_eq!(reply["result"]["content"], json!([]));
        let (reply, notifications) = reply_in(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#, false, 4);
        assert_eq!((reply["id"].as_u64(), notifications), (Some(4), 0));
    }

    #[test]
    #[should_panic(expected = "ended without the response to 9")]
    fn a_stream_without_the_reply_is_an_error() {
        reply_in(b"data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\n", true, 9);
    }
}
