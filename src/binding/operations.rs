//! The MCP methods: each is a request through the binding's one stack
//! ([`Binding::service`]) and a conversion of what comes back, so a host
//! that sends through the service gets the same checks and results.

use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tower::ServiceExt;

use super::*;
use crate::catalog::apps::FromApp;
use crate::protocol::methods;

impl Binding {
    /// Sends one request through the stack: exactly what
    /// `binding.service().oneshot(request)` does, with `op` recorded in the
    /// error. A JSON-RPC error answering anything but a tool call is
    /// `remote_error` here (the stack below knows the answer, not what it
    /// answered), so that a failed prompt or resource is not named a tool's.
    pub async fn request(&self, request: McpRequest, op: &'static str) -> Result<McpResponse, Error> {
        // A task's result is its tool call's: the same errors.
        let tool_call = matches!(request.method.as_str(), methods::TOOLS_CALL | methods::TASKS_RESULT);
        self.service().oneshot(request).await.map_err(|e| {
            let e = match e.class() {
                FailureClass::RemoteToolError if !tool_call => e.reclassify(FailureClass::RemoteError),
                _ => e,
            };
            e.with_binding(&self.inner.name).with_op(op)
        })
    }

    async fn request_as<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        opts: CallOpts,
        op: &'static str,
    ) -> Result<(T, Vec<String>), Error> {
        let rsp = self.request(McpRequest::with_value(method, params).opts(opts), op).await?;
        let parsed = serde_json::from_value(rsp.result).map_err(|e| {
            Error::new(FailureClass::ServerProtocol, format!("malformed {method} result: {e}"))
                .with_binding(&self.inner.name)
                .with_op(op)
        })?;
        Ok((parsed, rsp.warnings))
    }

    /// Sends `ping` and waits for the answer.
    pub async fn ping(&self) -> Result<(), Error> {
        self.request(McpRequest::new(methods::PING, Map::new()), "ping").await.map(drop)
    }

    /// Lists every tool the binding's [`ToolFilter`](crate::ToolFilter) permits, across pages,
    /// within `Limits::max_catalog_pages` and `Limits::max_catalog_items`.
    ///
    /// On 2026-07-28 over HTTP, a tool whose `x-mcp-header` annotations are
    /// invalid is left out with a warning, as in the catalog (see
    /// `crate::catalog::mcp_header`).
    pub async fn list_tools(&self) -> Result<Listing<Tool>, Error> {
        let mut listing = self
            .list_all(
                methods::TOOLS_LIST,
                "tools",
                self.inner.limits.max_catalog_items,
                "list_tools",
                deserialized,
            )
            .await?;
        if self.inner.carries_headers && self.era().mirrors_tool_params() {
            let mut warnings = Vec::new();
            listing.items.retain(|tool: &Tool| {
                match crate::catalog::mcp_header::header_params(&tool.input_schema) {
                    Ok(_) => true,
                    Err(why) => {
                        let text = crate::error::normalize_message(
                            &format!("tools: refused tool {:?}: {why}", tool.name),
                            512,
                        );
                        warnings.push(text);
                        false
                    }
                }
            });
            for text in &warnings {
                self.warn(text.clone());
            }
            listing.warnings.extend(warnings);
        }
        Ok(listing)
    }

    /// Lists every prompt, within `Limits::max_prompt_count`. A server
    /// whose current session does not advertise `prompts` is not asked:
    /// the list is empty, without a warning (as connect-time discovery).
    pub async fn list_prompts(&self) -> Result<Listing<Prompt>, Error> {
        if self.current_session().capabilities.prompts.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None });
        }
        let max = self.inner.limits.max_prompt_count;
        self.list_all(methods::PROMPTS_LIST, "prompts", max, "list_prompts", deserialized).await
    }

    /// Lists every resource, within `Limits::max_resource_count`. A server
    /// whose current session does not advertise `resources` is not asked:
    /// the list is empty, without a warning.
    pub async fn list_resources(&self) -> Result<Listing<Resource>, Error> {
        if self.current_session().capabilities.resources.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None });
        }
        let max = self.inner.limits.max_resource_count;
        self.list_all(methods::RESOURCES_LIST, "resources", max, "list_resources", deserialized).await
    }

    /// Lists every resource template, within `Limits::max_resource_count`.
    /// A server whose current session does not advertise `resources` is not
    /// asked: the list is empty, without a warning.
    pub async fn list_resource_templates(&self) -> Result<Listing<ResourceTemplate>, Error> {
        if self.current_session().capabilities.resources.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None });
        }
        let max = self.inner.limits.max_resource_count;
        let (method, op) = (methods::RESOURCES_TEMPLATES_LIST, "list_resource_templates");
        self.list_all(method, "resourceTemplates", max, op, deserialized).await
    }

    /// One page of the tools the binding's [`ToolFilter`](crate::ToolFilter)
    /// permits: the first when `cursor` is `None`, else the page at the
    /// cursor a previous page gave (`next_cursor`), at most
    /// `Limits::max_catalog_items` entries. For a host that pages itself
    /// (seed 001's `ListToolsWithCursor`); [`Binding::list_tools`] reads
    /// every page. A cursor over 4 KiB is `invalid_arguments`, and one the
    /// server no longer knows is its error.
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<Listing<Tool>, Error> {
        let max = self.inner.limits.max_catalog_items;
        self.list_page(methods::TOOLS_LIST, "tools", cursor, max, "list_tools_page", deserialized).await
    }

    /// One page of the prompts, as [`Binding::list_tools_page`] reads tools
    /// (at most `Limits::max_prompt_count` entries). A server whose current
    /// session does not advertise `prompts` is not asked.
    pub async fn list_prompts_page(&self, cursor: Option<&str>) -> Result<Listing<Prompt>, Error> {
        if self.current_session().capabilities.prompts.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None });
        }
        let max = self.inner.limits.max_prompt_count;
        self.list_page(methods::PROMPTS_LIST, "prompts", cursor, max, "list_prompts_page", deserialized).await
    }

    /// One page of the resources, as [`Binding::list_tools_page`] reads
    /// tools (at most `Limits::max_resource_count` entries). A server whose
    /// current session does not advertise `resources` is not asked.
    pub async fn list_resources_page(&self, cursor: Option<&str>) -> Result<Listing<Resource>, Error> {
        if self.current_session().capabilities.resources.is_none() {
            return Ok(Listing { items: Vec::new(), warnings: Vec::new(), next_cursor: None });
        }
        let max = self.inner.limits.max_resource_count;
        self.list_page(methods::RESOURCES_LIST, "resources", cursor, max, "list_resources_page", deserialized)
            .await
    }

    /// Reads one page of a list (every family the host pages by hand:
    /// tools, prompts, resources, skills, tasks): the cursor bounded before
    /// anything is sent, the page's entries bounded, each entry converted
    /// by `convert`, and one it refuses dropped with a warning naming its
    /// place and `convert`'s reason (see [`crate::catalog`]). An error is
    /// named by the binding and `op`.
    pub(super) async fn list_page<T>(
        &self,
        method: &str,
        key: &str,
        cursor: Option<&str>,
        max_items: usize,
        op: &'static str,
        convert: impl FnMut(Value) -> Result<T, String>,
    ) -> Result<Listing<T>, Error> {
        if cursor.is_some_and(|c| c.len() > crate::catalog::MAX_CURSOR_BYTES) {
            return Err(Error::new(FailureClass::InvalidArguments, "the cursor is longer than 4096 bytes")
                .with_binding(&self.inner.name)
                .with_op(op));
        }
        let (raw, next_cursor) = crate::catalog::one_page(self.service(), method, key, cursor, max_items)
            .await
            .map_err(|e| e.with_binding(&self.inner.name).with_op(op))?;
        let mut warnings = raw.warnings;
        let items = converted(method, raw.entries, &mut warnings, convert);
        Ok(Listing { items, warnings, next_cursor })
    }

    /// Pages through a list: every family read whole (tools, prompts,
    /// resources, templates, skills, tasks) goes through here and the
    /// catalog's own paging, so each has the same bounds (see
    /// [`crate::catalog`]): a repeated cursor, `Limits::max_catalog_pages`
    /// pages, `max_items` entries across pages (counted while each page is
    /// parsed, so the entries past it are never built), or a page the
    /// server answers badly ends the listing with a warning and keeps what
    /// was read. Each entry is converted by `convert`, and one it refuses
    /// dropped with a warning.
    pub(super) async fn list_all<T>(
        &self,
        method: &str,
        key: &str,
        max_items: usize,
        op: &'static str,
        convert: impl FnMut(Value) -> Result<T, String>,
    ) -> Result<Listing<T>, Error> {
        let pages = self.inner.limits.max_catalog_pages;
        let raw = crate::catalog::page_through(
            self.service(),
            method,
            key,
            max_items,
            pages,
            crate::catalog::BadPage::Keep,
        )
        .await
        .map_err(|e| e.with_binding(&self.inner.name).with_op(op))?;
        let mut warnings = raw.warnings;
        let items = converted(method, raw.entries, &mut warnings, convert);
        Ok(Listing { items, warnings, next_cursor: None })
    }

    /// Calls the tool `name` (its raw name) with `arguments` (a JSON object,
    /// or null for none).
    ///
    /// A tool the binding's [`ToolFilter`](crate::ToolFilter) does not permit is refused with
    /// `tool_unavailable` before anything is sent. The result is bounded by
    /// the binding's [`Limits`] (see [`crate::layer::result_limit`]): cut
    /// text is `truncated`, refused items are [`Content::Unsupported`](crate::Content::Unsupported), and
    /// `warnings` says what was done. Unless
    /// [`Definition::allow_parallel_calls`], tool calls on one binding run
    /// one at a time.
    ///
    /// A tool whose `taskSupport` is `required` (on a 2025-11-25 server
    /// that runs tool calls as tasks) is run as a task and waited for,
    /// start and wait inside the one deadline (see
    /// [`Binding::call_tool_task`]); so is a call a 2026-07-28 server
    /// answers with a task (when the binding declares the Tasks extension,
    /// [`AllowedCapabilities::tasks`](crate::AllowedCapabilities::tasks)).
    pub async fn call_tool(&self, name: &str, arguments: Value, opts: CallOpts) -> Result<ToolResult, Error> {
        self.call_tool_as(name, arguments, opts, Caller::Host).await
    }

    /// Calls the tool `name` for an app of this binding's server (MCP
    /// Apps), as the host's app bridge does: the request is marked
    /// [`FromApp`], which lets it reach a
    /// tool whose visibility is app only and refuses it
    /// (`tool_unavailable`, before anything is sent) for a tool whose
    /// visibility lacks `"app"`. Otherwise this is [`Binding::call_tool`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), mcp_stack::Error> {
    /// use mcp_stack::{Binding, CallOpts, ClientExtensions, Definition, FailureClass};
    ///
    /// let definition =
    ///     Definition::new("demo", mcp_stack::demo::factory()).with_extensions(ClientExtensions::default().apps());
    /// let binding = Binding::connect(definition, Default::default()).await?;
    /// // The demo's clock app refreshes itself with a tool only it may call.
    /// let refused = binding.call_tool("clock_refresh", serde_json::json!({}), CallOpts::default()).await;
    /// assert_eq!(refused.unwrap_err().class(), FailureClass::ToolUnavailable);
    /// binding.call_tool_from_app("clock_refresh", serde_json::json!({}), CallOpts::default()).await?;
    /// # binding.close().await;
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_from_app(
        &self,
        name: &str,
        arguments: Value,
        opts: CallOpts,
    ) -> Result<ToolResult, Error> {
        self.call_tool_as(name, arguments, opts, Caller::App).await
    }

    async fn call_tool_as(
        &self,
        name: &str,
        arguments: Value,
        opts: CallOpts,
        caller: Caller,
    ) -> Result<ToolResult, Error> {
        let op = caller.op();
        let named = |e: Error| e.with_binding(&self.inner.name).with_op(op);
        if self.requires_task(name) {
            let deadline = opts.deadline_from(tokio::time::Instant::now(), self.inner.timeouts.request);
            let opts = CallOpts { deadline: Some(deadline), timeout: None, ..opts };
            let started = self.call_tool_task_as(name, arguments, None, opts.clone(), caller).await;
            return match started.map_err(named)? {
                super::TaskStart::Done(result) => Ok(result),
                super::TaskStart::Task(task) => task.result(opts).await.map_err(named),
            };
        }
        let params = tool_call_params(name, arguments).map_err(named)?;
        // One deadline for the call and, on 2026-07-28, the task the server
        // may answer it with (the binding declared the Tasks extension).
        let deadline = opts.deadline_from(tokio::time::Instant::now(), self.inner.timeouts.request);
        let request = McpRequest::new(methods::TOOLS_CALL, params).opts(CallOpts {
            deadline: Some(deadline),
            timeout: None,
            ..opts
        });
        let rsp = self.request(caller.mark(request), op).await?;
        if rsp.result.get("resultType").and_then(Value::as_str) == Some("task") {
            let within = CallOpts { deadline: Some(deadline), timeout: None, progress: None };
            return match self.task_or_result(name, rsp).await.map_err(named)? {
                super::TaskStart::Done(result) => Ok(result),
                super::TaskStart::Task(task) => task.result(within).await.map_err(named),
            };
        }
        ToolResult::from_response(rsp).map_err(named)
    }

    /// Renders the prompt `name` with `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        opts: CallOpts,
    ) -> Result<PromptResult, Error> {
        let mut params = json!({ "name": name });
        if !arguments.is_empty() {
            params["arguments"] = Value::Object(arguments);
        }
        let request = McpRequest::with_value(methods::PROMPTS_GET, params).opts(opts);
        let rsp = self.request(request, "get_prompt").await?;
        PromptResult::from_response(rsp).map_err(|e| e.with_binding(&self.inner.name).with_op("get_prompt"))
    }

    /// Reads the resource `uri`. The URI is passed to the server verbatim and
    /// never resolved on the host.
    pub async fn read_resource(&self, uri: &str, opts: CallOpts) -> Result<ResourceResult, Error> {
        let request = McpRequest::with_value(methods::RESOURCES_READ, json!({ "uri": uri })).opts(opts);
        let rsp = self.request(request, "read_resource").await?;
        ResourceResult::from_response(rsp)
            .map_err(|e| e.with_binding(&self.inner.name).with_op("read_resource"))
    }

    /// Asks the server to complete the argument `argument` of a prompt or
    /// resource template, given its current `value` and the other arguments.
    ///
    /// The values are bounded: at most 100, each at
    /// most 1024 bytes (a longer one is dropped, not
    /// cut), at most 64 KiB in all, in the server's order.
    /// When any was dropped, `has_more` is `Some(true)`: more exist than
    /// were kept.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: Map<String, Value>,
        opts: CallOpts,
    ) -> Result<CompleteResult, Error> {
        let mut params = json!({ "ref": reference, "argument": { "name": argument, "value": value } });
        if !context.is_empty() {
            params["context"] = json!({ "arguments": context });
        }
        let (mut result, _): (CompleteResult, _) =
            self.request_as(methods::COMPLETION_COMPLETE, params, opts, "complete").await?;
        let offered = std::mem::take(&mut result.completion.values);
        let offered_count = offered.len();
        let mut total_bytes = 0;
        for value in offered {
            if result.completion.values.len() >= MAX_COMPLETION_VALUES
                || value.len() > MAX_COMPLETION_VALUE_BYTES
                || total_bytes + value.len() > MAX_COMPLETION_BYTES
            {
                continue;
            }
            total_bytes += value.len();
            result.completion.values.push(value);
        }
        if result.completion.values.len() < offered_count {
            result.completion.has_more = Some(true);
        }
        Ok(result)
    }

    /// Sets the least severe server log level to receive: sends
    /// `logging/setLevel` and delivers nothing below `level` to the log
    /// service from then on. Fails with `invalid_config`, sending nothing,
    /// when the server does not advertise logging.
    ///
    /// A binding calls this itself after the handshake when a log handler is
    /// installed (see [Logging](crate::handlers#logging)).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), Error> {
        if !self.era().sets_log_level() {
            // No `logging/setLevel` (2026-07-28): requests ask for logs at
            // the definition's level; the host sees nothing below `level`.
            self.inner.inbound.set_log_level(level);
            return Ok(());
        }
        if self.current_session().capabilities.logging.is_none() {
            return Err(Error::new(FailureClass::InvalidConfig, "the server does not advertise logging")
                .with_binding(&self.inner.name)
                .with_op("set_log_level"));
        }
        let params = json!({ "level": level });
        self.request(McpRequest::with_value(methods::LOGGING_SET_LEVEL, params), "set_log_level").await?;
        self.inner.inbound.set_log_level(level);
        Ok(())
    }

    /// Tells the server the host's roots changed
    /// (`notifications/roots/list_changed`); it will ask for them again.
    /// Fails with `invalid_config`, sending nothing, when the binding did
    /// not advertise roots. On 2026-07-28 it sends nothing and succeeds:
    /// that era has no such notification, the server asks for the roots
    /// whenever it needs them.
    pub async fn notify_roots_changed(&self) -> Result<(), Error> {
        if !self.inner.inbound.serves_roots() {
            return Err(Error::new(FailureClass::InvalidConfig, "this binding did not advertise roots")
                .with_binding(&self.inner.name)
                .with_op("notify_roots_changed"));
        }
        if !self.era().announces_roots_changes() {
            // No roots/list_changed (2026-07-28): a server asks for the
            // roots with each request that needs them (an input request), so
            // it always gets the current ones.
            return Ok(());
        }
        let connection =
            self.inner.reconnect.connection().ok_or_else(|| {
                Error::new(FailureClass::TransportClosed, "the binding has no live connection")
            });
        connection?
            .notify(methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, None)
            .await
            .map_err(|e| e.with_binding(&self.inner.name).with_op("notify_roots_changed"))
    }
}

/// The params of a `tools/call`: the name, and the arguments unless null
/// (which must otherwise be an object: `invalid_arguments`).
pub(super) fn tool_call_params(name: &str, arguments: Value) -> Result<Map<String, Value>, Error> {
    let mut params = Map::new();
    params.insert("name".into(), Value::String(name.to_string()));
    match arguments {
        Value::Null => {}
        Value::Object(_) => {
            params.insert("arguments".into(), arguments);
        }
        _ => return Err(Error::new(FailureClass::InvalidArguments, "tool arguments must be a JSON object")),
    }
    Ok(params)
}

/// The entries of a list `convert` takes, in order; each it refuses is
/// dropped with a warning naming its place and the reason.
fn converted<T>(
    method: &str,
    entries: Vec<Value>,
    warnings: &mut Vec<String>,
    mut convert: impl FnMut(Value) -> Result<T, String>,
) -> Vec<T> {
    let mut items = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        match convert(entry) {
            Ok(item) => items.push(item),
            Err(why) => push_warning(warnings, format!("{method}: dropped entry {i}: {why}")),
        }
    }
    items
}

/// An entry of a list deserialized as it is, for [`Binding::list_page`]
/// and [`Binding::list_all`]; why it is not one, when it is not.
fn deserialized<T: DeserializeOwned>(entry: Value) -> Result<T, String> {
    serde_json::from_value(entry).map_err(|e| e.to_string())
}

/// Who a tool call is for: the host (and its model), or an app of the
/// binding's server (MCP Apps), whose calls carry [`FromApp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    Host,
    App,
}

impl Caller {
    fn op(self) -> &'static str {
        match self {
            Caller::Host => "call_tool",
            Caller::App => "call_tool_from_app",
        }
    }

    pub(super) fn mark(self, mut request: McpRequest) -> McpRequest {
        if self == Caller::App {
            request.extensions.insert(FromApp::new());
        }
        request
    }
}
