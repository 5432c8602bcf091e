//! The modern era (2026-07-28): no handshake, every request says who the
//! client is.
//!
//! Every request's `_meta` carries `io.modelcontextprotocol/protocolVersion`,
//! `io.modelcontextprotocol/clientCapabilities` (on every request: a server
//! may not infer them from an earlier one), `io.modelcontextprotocol/clientInfo`
//! and, when the host takes logs, `io.modelcontextprotocol/logLevel` (logs
//! are request-scoped; there is no `logging/setLevel`). They are encoded once,
//! when the era is made ([`Modern::request_meta`]), and the connection
//! merges them into each request's text, keeping whatever else the caller
//! put in `_meta`.
//!
//! [`discover`] sends `server/discover`. A server that does not speak the
//! proposed version answers -32022 with `data.supported`; the client retries
//! once with a version from that list that it speaks, and fails
//! `unsupported_protocol`, naming what the server offered, when there is
//! none. The server's answer is reported as a [`SessionInfo`] like the
//! legacy handshake's.
//!
//! Every result is read for `resultType` ([`Modern::reply`]): absent or
//! `complete` is a result; `input_required` asks for input
//! ([`Reply::InputRequired`]); `task` is a result on `tools/call` when the
//! client declared the Tasks extension (the binding follows the task);
//! anything else fails `server_protocol`.
//! Errors only this era has are classified here
//! ([`Modern::classify_error`]): -32021 (a client capability the server
//! needs) fails `invalid_config` naming it, -32022 `unsupported_protocol`
//! naming the versions offered.
//!
//! Over HTTP a request is mirrored into headers ([`Modern::wire_headers`]):
//! `Mcp-Method` always, `Mcp-Name` for `tools/call`, `prompts/get`,
//! `resources/read` and the Tasks extension's `tasks/get`, `tasks/update`
//! and `tasks/cancel` (the task id), and `Mcp-Param-*` from the [`ParamHeaders`] a layer put
//! in the request's extensions (see [`crate::catalog::mcp_header`]); values
//! are encoded by [`encode_header_value`].
//!
//! A request whose HTTP response stream broke is lost (streams are not
//! resumable in this era): every method but `tools/call` is sent again with
//! a new id, at most [`MAX_REISSUES`](crate::connection::MAX_REISSUES)
//! times and within the call's deadline ([`Modern::reissue_on_loss`]); a
//! tool call ends `indeterminate`, since it may have acted, unless the
//! definition opts in (`Definition::reissue_lost_tool_calls`).
//!
//! The server asks the client for something (elicitation, sampling, roots)
//! only through `input_required` results, and the client sends no JSON-RPC
//! responses: a request the server sends on its own is dropped unanswered
//! with a warning, never served ([`Modern::serves_server_requests`]).

use base64::Engine as _;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::{rpc_error, supported_versions, Era, InputRequired, Reply};
use crate::connection::era::RequestMeta;
use crate::connection::{Connection, RpcError};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::jsonrpc::codes;
use crate::protocol::lifecycle::{ClientCapabilities, Implementation, ServerCapabilities, TASKS_EXTENSION};
use crate::protocol::logging::LoggingLevel;
use crate::protocol::{is_modern_version, methods, Notification, RequestId, SUPPORTED_VERSIONS};
use crate::request::McpRequest;
use crate::session::{ServerIdentity, SessionInfo};
use crate::transport::WireHeaders;

/// `_meta` key: the protocol version of the request.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities.
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the lowest log level the client wants for this request.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of a discover result: the server's identity.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The value prefix of a Base64-encoded header value.
pub(crate) const BASE64_PREFIX: &str = "=?base64?";
/// The value suffix of a Base64-encoded header value.
pub(crate) const BASE64_SUFFIX: &str = "?=";

/// `Mcp-Param-<Name>` header values for one request, as `(Name, encoded
/// value)`: typed per-request data a layer puts in the request's
/// extensions; the modern era passes them to the transport.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ParamHeaders(pub Vec<(String, String)>);

/// The modern era at one version, with what every request declares.
#[derive(Debug, Clone)]
pub(crate) struct Modern {
    version: String,
    meta: RequestMeta,
    cancel_by_notice: bool,
    reissue_tool_calls: bool,
    /// Whether the client declares the Tasks extension, so a tool call may
    /// be answered with a task.
    tasks: bool,
}

impl Modern {
    /// The era at `version` for a client declaring `capabilities` and
    /// `client`, asking for logs at `log_level` when there is one.
    pub(crate) fn new(
        version: impl Into<String>,
        capabilities: &ClientCapabilities,
        client: &Implementation,
        log_level: Option<LoggingLevel>,
    ) -> Self {
        let version = version.into();
        let mut meta = RequestMeta::default();
        meta.insert(META_PROTOCOL_VERSION, &Value::String(version.clone()));
        // 2025-11-25's `tasks` (the requests this client runs as tasks) is
        // not this era's: its tasks are the extension's.
        let capabilities = ClientCapabilities { tasks: None, ..capabilities.clone() };
        meta.insert(
            META_CLIENT_CAPABILITIES,
            &serde_json::to_value(&capabilities).expect("capabilities serialize"),
        );
        meta.insert(META_CLIENT_INFO, &serde_json::to_value(client).expect("client info serializes"));
        if let Some(level) = log_level {
            meta.insert(META_LOG_LEVEL, &serde_json::to_value(level).expect("a level serializes"));
        }
        let tasks = capabilities.declares_extension(TASKS_EXTENSION);
        Modern { version, meta, cancel_by_notice: true, reissue_tool_calls: false, tasks }
    }

    /// Whether a dropped request is cancelled by `notifications/cancelled`
    /// (stdio, the default) or by closing its HTTP response stream.
    pub(crate) fn cancel_by_notice(mut self, notice: bool) -> Self {
        self.cancel_by_notice = notice;
        self
    }

    /// Whether a `tools/call` whose reply was lost is re-issued too (off by
    /// default: see [`Modern::reissue_on_loss`]).
    pub(crate) fn reissue_tool_calls(mut self, reissue: bool) -> Self {
        self.reissue_tool_calls = reissue;
        self
    }

    /// The same declarations at another version.
    fn at(&self, version: &str) -> Modern {
        let mut era = self.clone();
        era.version = version.to_string();
        era.meta.insert(META_PROTOCOL_VERSION, &Value::String(version.to_string()));
        era
    }
}

impl Era for Modern {
    fn protocol_version(&self) -> &str {
        &self.version
    }

    fn request_meta(&self) -> Option<&RequestMeta> {
        Some(&self.meta)
    }

    fn cancel_notice(&self, id: &RequestId) -> Option<Notification> {
        self.cancel_by_notice.then(|| super::cancelled_notification(id, "abandoned by the client"))
    }

    fn change_style(&self) -> super::ChangeStyle {
        super::ChangeStyle::ListenStream
    }

    /// No `logging/setLevel`: every request asks for logs in `_meta`.
    fn sets_log_level(&self) -> bool {
        false
    }

    /// No `notifications/roots/list_changed`: a server asks for the roots
    /// with each request that needs them (an input request).
    fn announces_roots_changes(&self) -> bool {
        false
    }

    fn mirrors_tool_params(&self) -> bool {
        true
    }

    /// Never: in this era a server asks only through `input_required`
    /// results, and a client must not send JSON-RPC responses.
    fn serves_server_requests(&self) -> bool {
        false
    }

    fn classify_error(&self, error: RpcError) -> Error {
        classify_modern_error(&self.version, error)
    }

    /// 2026-07-28 streams are not resumable, and the specification asks a
    /// client to re-issue what it lost. Everything but `tools/call` is
    /// re-issued: a tool call may have acted, and the binding never runs a
    /// tool twice behind the host's back (it ends `indeterminate`) unless
    /// the definition says its tools may run twice
    /// ([`Modern::reissue_tool_calls`]). `subscriptions/listen` is never
    /// re-issued here: the binding re-opens it itself, with backoff.
    fn reissue_on_loss(&self, method: &str) -> bool {
        match method {
            methods::TOOLS_CALL => self.reissue_tool_calls,
            // A stream the binding re-opens itself (with backoff).
            methods::SUBSCRIPTIONS_LISTEN => false,
            _ => true,
        }
    }

    fn reply(&self, method: &str, result: Value) -> Result<Reply, Error> {
        read_reply(method, result, self.tasks)
    }

    fn wire_headers(&self, req: &McpRequest) -> WireHeaders {
        let (method, params, extensions) = (req.method.as_str(), req.params(), &req.extensions);
        let mut headers = vec![("Mcp-Method".to_string(), method.to_string())];
        let name = match method {
            methods::TOOLS_CALL | methods::PROMPTS_GET => params.get("name"),
            methods::RESOURCES_READ => params.get("uri"),
            // The Tasks extension routes a task's requests by its id.
            methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL => params.get("taskId"),
            _ => None,
        };
        if let Some(Value::String(name)) = name {
            headers.push(("Mcp-Name".to_string(), encode_header_value(name)));
        }
        if let Some(ParamHeaders(params)) = extensions.get::<ParamHeaders>() {
            for (name, value) in params {
                headers.push((format!("Mcp-Param-{name}"), value.clone()));
            }
        }
        WireHeaders(headers)
    }
}

/// The classified error for a modern-era JSON-RPC error answering a
/// request made in version `asked`.
pub(crate) fn classify_modern_error(asked: &str, error: RpcError) -> Error {
    match error.code {
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY => {
            let capability = error
                .data
                .as_ref()
                .and_then(|d| d.get("requiredCapabilities").or_else(|| d.get("capability")).or(Some(d)))
                .map(|c| normalize_message(&c.to_string(), 256))
                .unwrap_or_else(|| "(unnamed)".into());
            let message = format!(
                "the server requires a client capability this binding does not declare: {capability} ({})",
                error.message
            );
            Error::new(FailureClass::InvalidConfig, message).with_source(error)
        }
        codes::UNSUPPORTED_PROTOCOL_VERSION => {
            let offered = supported_versions(&error);
            unsupported_version(asked, &offered).with_source(error)
        }
        codes::HEADER_MISMATCH => {
            let message =
                format!("the server found the request's headers do not match it: {}", error.message);
            Error::new(FailureClass::ServerProtocol, message).with_source(error)
        }
        _ => match server_request_hint(&error.message) {
            Some(hint) => {
                let class = error.clone().into_error().class();
                let message = format!("{}; {hint}", error.message);
                Error::new(class, message).with_source(error)
            }
            None => error.into_error(),
        },
    }
}

/// The implementations known to speak 2026-07-28 while their tools still
/// ask for elicitation and roots only through server-initiated requests,
/// which that era does not carry (so those tools fail on it, and work on the
/// `initialize` era): the name of the one `session` (a `server/discover`
/// answer) identifies, if any.
///
/// - **FastMCP 4.x** (every release from 4.0.0 to 4.2.3, the newest when
///   this was written): `ctx.elicit` raises "elicitation via
///   server-initiated requests is unavailable on 2026-07-28 connections",
///   and `ctx.session.list_roots()` "no back-channel for server-initiated
///   requests"; only a tool written to return `InputRequiredResult` asks
///   the 2026-07-28 way. Its `serverInfo.name` is the author's, so it is
///   recognized by what every FastMCP 4 server sends unless its author
///   changes it: the `io.modelcontextprotocol/ui` extension (declared
///   unconditionally) together with a `serverInfo.version` of major 4 (the
///   FastMCP version, the default) or a generated name (`FastMCP-…`).
///
/// A server that is not recognized (a FastMCP server with its own version)
/// keeps the 2026-07-28 era; its failing tools carry a hint
/// ([`server_request_hint`]) naming the one-line configuration. A server
/// wrongly taken for one of these still works, on the older era.
pub(crate) fn mrtr_less_implementation(session: &SessionInfo) -> Option<&'static str> {
    let ui = session.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(UI_EXTENSION));
    let major_4 = session.server.version.split('.').next() == Some("4");
    let generated = session.server.name.starts_with("FastMCP-");
    (ui && (major_4 || generated)).then_some("FastMCP 4")
}

/// The MCP Apps extension's identifier (FastMCP 4 declares it always).
const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// What a tool failure's text says when the server tried to ask the client
/// through a server-initiated request on a 2026-07-28 connection (FastMCP's
/// and the Python SDK's wording), or `None`.
const SERVER_REQUEST_REFUSALS: &[&str] =
    &["unavailable on 2026-07-28 connections", "no back-channel for server-initiated requests"];

/// A hint for a tool failure `text` that shows the server tried to ask
/// through a server-initiated request, which 2026-07-28 does not carry:
/// how to connect on the `initialize` era instead.
pub(crate) fn server_request_hint(text: &str) -> Option<&'static str> {
    let asked = SERVER_REQUEST_REFUSALS.iter().any(|phrase| text.contains(phrase));
    asked.then_some(
        "the server asks through server-initiated requests, which 2026-07-28 connections do not carry: \
         connect with the initialize era (`--protocol legacy`, or `\"x-mcp-stack\": {\"protocol\": \"legacy\"}` \
         in the server's config entry)",
    )
}

/// The error for a -32022 that leaves no version to retry with: the
/// server speaks none this binding may use, or (a contradiction) it
/// refused `asked` while naming it among the versions it supports.
fn unsupported_version(asked: &str, offered: &[String]) -> Error {
    if offered.iter().any(|v| v == asked) {
        let message = format!(
            "the server refused protocol version {asked} though it names it among the versions it supports ({offered:?})"
        );
        return Error::new(FailureClass::ServerProtocol, message);
    }
    let message = format!(
        "the server speaks none of the versions this binding may use (it asked in {asked}); it offered {offered:?}"
    );
    Error::new(FailureClass::UnsupportedProtocol, message)
}

/// Reads a modern result's `resultType`. `task` (the Tasks extension's
/// `CreateTaskResult`) is a result, left for the binding to read, only on
/// `tools/call` when the client declared the extension (`tasks`); on
/// `tasks/get` it is taken for `complete`, as the extension's own examples
/// write it.
pub(crate) fn read_reply(method: &str, mut result: Value, tasks: bool) -> Result<Reply, Error> {
    let kind = result.get("resultType").cloned();
    match kind {
        None => Ok(Reply::Complete(result)),
        Some(Value::String(kind)) if kind == "complete" => Ok(Reply::Complete(result)),
        Some(Value::String(kind)) if kind == "task" => match method {
            methods::TOOLS_CALL if tasks => Ok(Reply::Complete(result)),
            methods::TASKS_GET => Ok(Reply::Complete(result)),
            methods::TOOLS_CALL => Err(Error::new(
                FailureClass::ServerProtocol,
                "the server answered tools/call with a task, though this client did not declare the tasks extension",
            )),
            _ => Err(Error::new(
                FailureClass::ServerProtocol,
                format!("the server answered {method} with a task, which only tools/call may be"),
            )),
        },
        Some(Value::String(kind)) if kind == "input_required" => {
            let object = result.as_object_mut().expect("has a key, so an object");
            let input_requests = match object.remove("inputRequests") {
                Some(Value::Object(requests)) => requests,
                None | Some(Value::Null) => Map::new(),
                Some(_) => {
                    return Err(Error::new(
                        FailureClass::ServerProtocol,
                        format!("the {method} result's inputRequests is not an object"),
                    ))
                }
            };
            let request_state = object.remove("requestState").filter(|s| !s.is_null());
            if input_requests.is_empty() && request_state.is_none() {
                return Err(Error::new(
                    FailureClass::ServerProtocol,
                    format!("the {method} result asks for input but names none and carries no requestState"),
                ));
            }
            Ok(Reply::InputRequired(InputRequired { input_requests, request_state }))
        }
        Some(other) => Err(Error::new(
            FailureClass::ServerProtocol,
            format!(
                "the {method} result has resultType {}, which this client does not know",
                normalize_message(&other.to_string(), 64)
            ),
        )),
    }
}

/// Encodes a header value as the 2026-07-28 transport asks: as is when it
/// is plain printable ASCII without edge whitespace and does not look like
/// the Base64 sentinel, else `=?base64?<Base64 of its UTF-8>?=`.
pub(crate) fn encode_header_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let edge_space = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel = value.starts_with(BASE64_PREFIX) && value.ends_with(BASE64_SUFFIX);
    if printable && !edge_space && !sentinel {
        return value.to_string();
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
    format!("{BASE64_PREFIX}{encoded}{BASE64_SUFFIX}")
}

/// What a `server/discover` result says.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiscoverResult {
    #[serde(default)]
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: ServerCapabilities,
    #[serde(default)]
    server_info: Option<Implementation>,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default, rename = "_meta")]
    meta: Option<Map<String, Value>>,
}

/// How a discover attempt ended, for the automatic choice.
// One per dial, moved once: boxing the session would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Probe {
    /// The server is modern; the era is installed.
    Modern(SessionInfo),
    /// The server answered in a way only a legacy server does (an error
    /// that is not a modern one, a refused HTTP exchange); the connection's
    /// era was reset so that `initialize` can follow.
    Legacy(Error),
}

/// Sends `server/discover` proposing `era`'s version and installs the era
/// the server accepts. -32022 is retried once with a version from
/// `data.supported` that this client speaks (and `allowed` admits); when
/// there is none, or the retry is refused too, the result is
/// `unsupported_protocol` naming what the server offered. Any other error
/// that is a modern one fails as classified, and so does a failed
/// authorization (an `auth_*` class: it tells nothing of the era); an error
/// no modern server sends, or a refused HTTP exchange, is
/// [`Probe::Legacy`]. The caller bounds it in time.
///
/// With `probing` (the automatic choice), a result that names no
/// `supportedVersions` is [`Probe::Legacy`] too: every discover result
/// lists them, and a legacy server that answers any method with an empty
/// result must not be taken for a modern one. Without it (modern only, or
/// a pinned modern version) such a result is accepted as the server's
/// answer.
pub(crate) async fn discover(
    connection: &Connection,
    era: Modern,
    allowed: impl Fn(&str) -> bool,
    probing: bool,
) -> Result<Probe, Error> {
    let mut era = era;
    let mut retried = false;
    loop {
        connection.set_era(Arc::new(era.clone()));
        match connection.request(methods::SERVER_DISCOVER, Map::new()).await {
            Ok(result) => {
                let lists = result
                    .get("supportedVersions")
                    .and_then(Value::as_array)
                    .is_some_and(|versions| !versions.is_empty());
                if probing && !lists {
                    connection.reset_era();
                    return Ok(Probe::Legacy(Error::new(
                        FailureClass::ServerProtocol,
                        "the server/discover result names no supportedVersions: not a modern server",
                    )));
                }
                return Ok(Probe::Modern(session_of(connection, &era, result)?));
            }
            Err(e) => {
                // An authorization that failed (denied, refused, nobody to
                // ask) says nothing about the era: the dial ends with its
                // class, so that `initialize` does not ask the person again.
                if e.class().is_auth() {
                    return Err(e.with_op("server/discover"));
                }
                let Some(rpc) = rpc_error(&e) else {
                    // Probing, any failure that left the connection up is
                    // a legacy answer (a legacy HTTP server may answer an
                    // unknown request with 202, or with a body that is no
                    // JSON-RPC at all): `initialize` follows. A connection
                    // that ended cannot carry `initialize` either.
                    let open = connection.state() == crate::connection::ConnectionState::Open;
                    let refused = matches!(e.class(), FailureClass::RemoteHttp | FailureClass::NotFound);
                    if refused || (probing && open && e.class() != FailureClass::Shutdown) {
                        connection.reset_era();
                        return Ok(Probe::Legacy(e));
                    }
                    return Err(handshake_error(e));
                };
                if !codes::is_modern(rpc.code) {
                    connection.reset_era();
                    return Ok(Probe::Legacy(e));
                }
                if rpc.code != codes::UNSUPPORTED_PROTOCOL_VERSION {
                    return Err(e.with_op("server/discover"));
                }
                // The specification: select a mutually supported version
                // from `supported` and retry (once: a server that refuses
                // the version it named again is not asked a third time).
                // For a dual-era client a mutual version may be an
                // `initialize`-era one: with the automatic choice that is a
                // fall back to `initialize` (the legacy handshake then
                // negotiates which).
                let offered = supported_versions(rpc);
                let next = offered.iter().find(|v| is_modern_version(v) && allowed(v));
                let legacy = offered.iter().any(|v| SUPPORTED_VERSIONS.contains(&v.as_str()));
                match next {
                    Some(version) if !retried => {
                        retried = true;
                        era = era.at(version);
                    }
                    None if probing && legacy => {
                        connection.reset_era();
                        let why = format!("the server offers only initialize-era versions ({offered:?})");
                        return Ok(Probe::Legacy(Error::new(FailureClass::UnsupportedProtocol, why)));
                    }
                    _ => return Err(unsupported_version(&era.version, &offered).with_op("server/discover")),
                }
            }
        }
    }
}

fn handshake_error(e: Error) -> Error {
    let e = match e.class() {
        FailureClass::Indeterminate => e.reclassify(FailureClass::TransportClosed),
        _ => e,
    };
    e.with_op("server/discover")
}

fn session_of(connection: &Connection, era: &Modern, result: Value) -> Result<SessionInfo, Error> {
    let result: DiscoverResult = serde_json::from_value(result).map_err(|e| {
        Error::new(FailureClass::ServerProtocol, format!("malformed server/discover result: {e}"))
            .with_op("server/discover")
    })?;
    if !result.supported_versions.is_empty() && !result.supported_versions.iter().any(|v| v == &era.version) {
        // The server answered in the version asked but lists others: it
        // still accepted this one, as its answer shows.
        tracing::debug!(target: "mcp_stack::era", "server/discover lists {:?}", result.supported_versions);
    }
    let info = result.server_info.or_else(|| {
        result
            .meta
            .as_ref()
            .and_then(|m| m.get(META_SERVER_INFO))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    });
    Ok(SessionInfo {
        protocol_version: era.version.clone(),
        server: info.as_ref().map(ServerIdentity::from_implementation).unwrap_or_default(),
        instructions: result.instructions.map(|text| super::normalize_instructions(&text)),
        capabilities: result.capabilities,
        transport_tolerances: connection.applied_tolerances(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn implementation(name: &str) -> Implementation {
        Implementation {
            name: name.into(),
            version: "1".into(),
            title: None,
            description: None,
            icons: None,
            website_url: None,
        }
    }

    #[test]
    fn header_values_follow_the_spec_vectors() {
        for (value, encoded) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("a b", "a b"),
            ("\tx", "=?base64?CXg=?="),
        ] {
            assert_eq!(encode_header_value(value), encoded, "{value:?}");
        }
    }

    #[test]
    fn every_request_carries_the_declarations() {
        let era = Modern::new(
            "2026-07-28",
            &ClientCapabilities::default(),
            &implementation("c"),
            Some(LoggingLevel::Warning),
        );
        let meta: Map<String, Value> = era
            .request_meta()
            .expect("the modern era declares itself in every request")
            .entries()
            .map(|(key, value)| (key.to_string(), serde_json::from_str(value.get()).unwrap()))
            .collect();
        assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(meta[META_CLIENT_CAPABILITIES], json!({}));
        assert_eq!(meta[META_CLIENT_INFO]["name"], "c");
        assert_eq!(meta[META_LOG_LEVEL], "warning");
        assert_eq!(meta.len(), 4);
        // At another version, the version entry is replaced, not added.
        let other = era.at("2026-01-01");
        let versions: Vec<_> =
            other.request_meta().unwrap().entries().filter(|(k, _)| *k == META_PROTOCOL_VERSION).collect();
        assert_eq!(versions.len(), 1);
        assert_eq!(versions[0].1.get(), "\"2026-01-01\"");
    }

    #[test]
    fn result_types_are_read() {
        assert!(matches!(read_reply("tools/call", json!({ "content": [] }), false), Ok(Reply::Complete(_))));
        assert!(matches!(
            read_reply("tools/call", json!({ "resultType": "complete" }), false),
            Ok(Reply::Complete(_))
        ));
        let Ok(Reply::InputRequired(input)) = read_reply(
            "tools/call",
            json!({ "resultType": "input_required", "inputRequests": { "a": {} }, "requestState": "s" }),
            false,
        ) else {
            panic!("input_required")
        };
        assert_eq!(input.request_state, Some(json!("s")));
        let e = read_reply("tools/call", json!({ "resultType": "later" }), false).unwrap_err();
        assert_eq!(e.class(), FailureClass::ServerProtocol);
        // A task: a result on tools/call when the client declared tasks.
        let task = json!({ "resultType": "task", "taskId": "t", "status": "working" });
        assert!(matches!(read_reply("tools/call", task.clone(), true), Ok(Reply::Complete(_))));
        assert!(matches!(read_reply("tasks/get", task.clone(), true), Ok(Reply::Complete(_))));
        for (method, tasks) in [("tools/call", false), ("tools/list", true), ("resources/read", true)] {
            let e = read_reply(method, task.clone(), tasks).unwrap_err();
            assert_eq!(e.class(), FailureClass::ServerProtocol, "{method}: {e}");
        }
        assert_eq!(e.class(), FailureClass::ServerProtocol);
    }

    #[test]
    fn modern_errors_are_classified_and_name_what_matters() {
        let e = classify_modern_error(
            "2026-07-28",
            RpcError {
                code: codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                message: "need it".into(),
                data: Some(json!({ "requiredCapabilities": { "sampling": {} } })),
            },
        );
        assert_eq!(e.class(), FailureClass::InvalidConfig);
        assert!(e.message().contains("sampling"), "{}", e.message());
        let refused = |supported: Value| {
            classify_modern_error(
                "2026-07-28",
                RpcError {
                    code: codes::UNSUPPORTED_PROTOCOL_VERSION,
                    message: "no".into(),
                    data: Some(json!({ "supported": supported })),
                },
            )
        };
        let e = refused(json!(["2030-01-01"]));
        assert_eq!(e.class(), FailureClass::UnsupportedProtocol);
        assert!(e.message().contains("2030-01-01") && e.message().contains("speaks none"), "{}", e.message());
        // Refusing the version it names as supported is a contradiction,
        // not a server that speaks none of ours.
        let e = refused(json!(["2026-07-28", "2025-11-25"]));
        assert_eq!(e.class(), FailureClass::ServerProtocol);
        assert!(!e.message().contains("speaks none"), "{}", e.message());
        assert!(e.message().contains("names it among the versions it supports"), "{}", e.message());
    }

    #[test]
    fn headers_mirror_method_name_and_params() {
        let era = Modern::new("2026-07-28", &ClientCapabilities::default(), &implementation("x"), None);
        let params: Map<String, Value> = serde_json::from_value(json!({ "name": "é" })).unwrap();
        let mut req = McpRequest::new(methods::TOOLS_CALL, params);
        req.extensions.insert(ParamHeaders(vec![("Region".into(), "us".into())]));
        let WireHeaders(h) = era.wire_headers(&req);
        assert_eq!(
            h,
            vec![
                ("Mcp-Method".into(), "tools/call".into()),
                ("Mcp-Name".into(), encode_header_value("é")),
                ("Mcp-Param-Region".into(), "us".into())
            ]
        );
        // The Tasks extension routes a task's requests by its id.
        for method in [methods::TASKS_GET, methods::TASKS_UPDATE, methods::TASKS_CANCEL] {
            let params: Map<String, Value> = serde_json::from_value(json!({ "taskId": "786512e2" })).unwrap();
            let WireHeaders(h) = era.wire_headers(&McpRequest::new(method, params));
            assert_eq!(h, vec![("Mcp-Method".into(), method.into()), ("Mcp-Name".into(), "786512e2".into())]);
        }
    }
}
