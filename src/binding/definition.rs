//! [`Definition`]: one server's configuration.

use std::fmt;
use std::sync::Arc;

use crate::compat::Profile;
use crate::config::ProtocolChoice;
use crate::config::ReconnectPolicy;
use crate::config::{AllowedCapabilities, AlwaysLoad, ClientExtensions, Limits, Timeouts, ToolFilter};
use crate::config::{RepeatableTools, RetryPolicy};
use crate::layer::trace::TraceContextSource;
use crate::protocol::logging::LoggingLevel;
use crate::session::ClientIdentity;
use crate::transport::TransportFactory;

/// One server's configuration, from which [`Binding::connect`] builds a live
/// binding.
///
/// # The shape of every configuration type
///
/// `Definition` and the types it holds ([`Timeouts`], [`Limits`],
/// [`RetryPolicy`], [`ReconnectPolicy`], [`ToolFilter`],
/// [`AllowedCapabilities`], [`RepeatableTools`], [`Caching`](crate::cache::Caching),
/// [`CallOpts`](crate::CallOpts), ...) are built one way, as tonic's
/// `Endpoint` is: the fields are private, so that a setting added later is
/// not a breaking change; `new` or `default()` holds the real defaults
/// (none of which is "unbounded"); a consuming `with_*` setter changes one
/// setting; a getter of the setting's own name reads it. No value means
/// "the default" (a zero bound or deadline is refused by
/// [`validate`](Self::validate) with `invalid_config`) and no flag is
/// negative (`enabled`, not `disabled`).
///
/// ```
/// use mcp_stack::{Definition, Limits, Timeouts};
/// use mcp_stack::transport::stdio::StdioFactory;
/// use std::time::Duration;
///
/// let def = Definition::new("files", StdioFactory::new("my-server"))
///     .with_timeouts(Timeouts::default().with_request(Duration::from_secs(10)))
///     .with_limits(Limits::default().with_max_frame_bytes(1 << 20))
///     .with_allow_parallel_calls(true);
/// assert_eq!(def.timeouts().request(), Duration::from_secs(10));
/// assert!(def.validate().is_ok());
/// ```
///
/// [`Binding::connect`]: crate::Binding::connect
#[derive(Clone)]
pub struct Definition {
    pub(crate) name: String,
    pub(crate) transport: Arc<dyn TransportFactory>,
    pub(crate) timeouts: Timeouts,
    pub(crate) limits: Limits,
    pub(crate) capabilities: AllowedCapabilities,
    pub(crate) tool_filter: ToolFilter,
    pub(crate) always_load: AlwaysLoad,
    pub(crate) allow_parallel_calls: bool,
    pub(crate) reconnect: ReconnectPolicy,
    pub(crate) log_level: LoggingLevel,
    pub(crate) compat: Profile,
    pub(crate) refresh: RetryPolicy,
    pub(crate) client: ClientIdentity,
    pub(crate) protocol: ProtocolChoice,
    pub(crate) trace_context: Option<Arc<dyn TraceContextSource>>,
    pub(crate) reissue_lost_tool_calls: bool,
    pub(crate) retry_requests: bool,
    pub(crate) repeatable_tools: RepeatableTools,
    pub(crate) declarations: crate::catalog::meta::DeclarationSet,
    pub(crate) caching: crate::cache::Caching,
    pub(crate) task_store: Arc<dyn crate::tasks::TaskStore>,
    pub(crate) app_fingerprint_store: Option<Arc<dyn crate::catalog::apps::AppFingerprintStore>>,
    pub(crate) extensions: ClientExtensions,
    pub(crate) experimental: serde_json::Map<String, serde_json::Value>,
}

impl fmt::Debug for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Definition")
            .field("name", &self.name)
            .field("transport", &self.transport.kind())
            .field("origin", &self.transport.redacted_origin())
            .field("timeouts", &self.timeouts)
            .field("limits", &self.limits)
            .field("capabilities", &self.capabilities)
            .field("tool_filter", &self.tool_filter)
            .field("always_load", &self.always_load)
            .field("allow_parallel_calls", &self.allow_parallel_calls)
            .field("reconnect", &self.reconnect)
            .field("log_level", &self.log_level)
            .field("compat", &self.compat.id())
            .field("refresh", &self.refresh)
            .field("client", &self.client)
            .field("protocol", &self.protocol)
            .field("trace_context", &self.trace_context.is_some())
            .field("reissue_lost_tool_calls", &self.reissue_lost_tool_calls)
            .field("retry_requests", &self.retry_requests)
            .field("repeatable_tools", &self.repeatable_tools)
            .field("declarations", &self.declarations)
            .field("caching", &self.caching)
            .field("task_store", &self.task_store)
            .field("app_fingerprint_store", &self.app_fingerprint_store)
            .field("extensions", &self.extensions)
            .field("experimental", &self.experimental)
            .finish()
    }
}

impl Definition {
    /// A definition with defaults for everything but the name and transport.
    pub fn new(name: impl Into<String>, transport: impl TransportFactory) -> Self {
        Self::with_factory(name, Arc::new(transport))
    }

    /// As [`Definition::new`], with a shared factory.
    pub fn with_factory(name: impl Into<String>, transport: Arc<dyn TransportFactory>) -> Self {
        Definition {
            name: name.into(),
            transport,
            timeouts: Timeouts::default(),
            limits: Limits::default(),
            capabilities: AllowedCapabilities::default(),
            tool_filter: ToolFilter::default(),
            always_load: AlwaysLoad::default(),
            allow_parallel_calls: false,
            reconnect: ReconnectPolicy::default(),
            log_level: LoggingLevel::Info,
            compat: Profile::default(),
            refresh: RetryPolicy::default(),
            client: ClientIdentity::default(),
            protocol: ProtocolChoice::default(),
            trace_context: None,
            reissue_lost_tool_calls: false,
            retry_requests: true,
            repeatable_tools: RepeatableTools::default(),
            declarations: Default::default(),
            caching: Default::default(),
            task_store: crate::tasks::MemoryTaskStore::process_wide(),
            app_fingerprint_store: None,
            extensions: ClientExtensions::default(),
            experimental: Default::default(),
        }
    }

    /// The binding's name: `[A-Za-z0-9_-]`, 1 to 32 bytes, since it becomes
    /// part of every model name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// With another name (see [`name`](Self::name)).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Makes connections. Required.
    pub fn transport(&self) -> &Arc<dyn TransportFactory> {
        &self.transport
    }

    /// With another factory, every other setting kept: how a host wraps
    /// the factory a config file made (to record the traffic, say) in one
    /// of its own.
    pub fn with_transport(mut self, transport: Arc<dyn TransportFactory>) -> Self {
        self.transport = transport;
        self
    }

    /// Per-connection deadlines.
    pub fn timeouts(&self) -> &Timeouts {
        &self.timeouts
    }

    /// With another [`timeouts`](Self::timeouts).
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Bounds on what the binding takes from the server.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// With another [`limits`](Self::limits).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The optional client capabilities to advertise.
    pub fn capabilities(&self) -> &AllowedCapabilities {
        &self.capabilities
    }

    /// With another [`capabilities`](Self::capabilities).
    pub fn with_capabilities(mut self, capabilities: AllowedCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Which tools are visible and callable.
    pub fn tool_filter(&self) -> &ToolFilter {
        &self.tool_filter
    }

    /// With another [`tool_filter`](Self::tool_filter).
    pub fn with_tool_filter(mut self, tool_filter: ToolFilter) -> Self {
        self.tool_filter = tool_filter;
        self
    }

    /// Which of this server's tools a host that defers tool definitions
    /// sends every turn (see [`AlwaysLoad`]). By default those whose
    /// `_meta` asks.
    pub fn always_load(&self) -> &AlwaysLoad {
        &self.always_load
    }

    /// With another [`always_load`](Self::always_load).
    pub fn with_always_load(mut self, always_load: AlwaysLoad) -> Self {
        self.always_load = always_load;
        self
    }

    /// Lets tool calls run in parallel (still within
    /// `Limits::max_concurrent_requests`). Off by default: one tool call at a
    /// time per binding.
    pub fn allow_parallel_calls(&self) -> bool {
        self.allow_parallel_calls
    }

    /// With another [`allow_parallel_calls`](Self::allow_parallel_calls).
    pub fn with_allow_parallel_calls(mut self, allow_parallel_calls: bool) -> Self {
        self.allow_parallel_calls = allow_parallel_calls;
        self
    }

    /// Governs rebuilding a connection that was lost. The default
    /// reconnects under the default bounds (see [`ReconnectPolicy`]).
    pub fn reconnect(&self) -> &ReconnectPolicy {
        &self.reconnect
    }

    /// With another [`reconnect`](Self::reconnect).
    pub fn with_reconnect(mut self, reconnect: ReconnectPolicy) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// The minimum severity of server log messages to ask for, when a log
    /// handler is installed and the server advertises logging.
    pub fn log_level(&self) -> &LoggingLevel {
        &self.log_level
    }

    /// With another [`log_level`](Self::log_level).
    pub fn with_log_level(mut self, log_level: LoggingLevel) -> Self {
        self.log_level = log_level;
        self
    }

    /// The compatibility profile: how far the binding bends for a server that
    /// does not follow the specification (see [`crate::compat`]).
    /// The default is `default/v3`.
    pub fn compat(&self) -> &Profile {
        &self.compat
    }

    /// With another [`compat`](Self::compat).
    pub fn with_compat(mut self, compat: Profile) -> Self {
        self.compat = compat;
        self
    }

    /// Bounds the retries of a catalog refresh that failed. A failed refresh
    /// never costs the adopted catalog; this decides how hard the binding
    /// tries to catch up with the server's change.
    pub fn refresh(&self) -> &RetryPolicy {
        &self.refresh
    }

    /// With another [`refresh`](Self::refresh).
    pub fn with_refresh(mut self, refresh: RetryPolicy) -> Self {
        self.refresh = refresh;
        self
    }

    /// What the client tells the server it is, in every handshake (renewals
    /// and reconnects included). Defaults to `mcp-stack` and its version.
    pub fn client(&self) -> &ClientIdentity {
        &self.client
    }

    /// With another [`client`](Self::client).
    pub fn with_client(mut self, client: ClientIdentity) -> Self {
        self.client = client;
        self
    }

    /// Which protocol era (or version) the binding may speak, and so which
    /// handshake it runs: see [`ProtocolChoice`] and
    /// [`Dialer`](crate::era::Dialer). The default is
    /// [`ProtocolChoice::Auto`]: `server/discover` first, `initialize` when
    /// the server turns out to be a legacy one (a legacy server that does
    /// not answer unknown requests costs [`Timeouts::discover`] once).
    pub fn protocol(&self) -> &ProtocolChoice {
        &self.protocol
    }

    /// With another [`protocol`](Self::protocol).
    pub fn with_protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.protocol = protocol;
        self
    }

    /// Where each request's W3C trace context comes from, to send it as
    /// `traceparent` (and `tracestate`) in the request's `_meta`
    /// (SEP-414). `None`, the default, sends none: a trace id tells a
    /// server which requests belong together, which a host opts into. See
    /// [`crate::layer::trace`] for the spans and how an OpenTelemetry user
    /// supplies the context.
    pub fn trace_context(&self) -> Option<&Arc<dyn TraceContextSource>> {
        self.trace_context.as_ref()
    }

    /// With another [`trace_context`](Self::trace_context).
    pub fn with_trace_context(mut self, source: Arc<dyn TraceContextSource>) -> Self {
        self.trace_context = Some(source);
        self
    }

    /// Whether a `tools/call` whose reply was lost is sent again. Off by
    /// default.
    ///
    /// On 2026-07-28 over HTTP, a response stream that breaks loses its
    /// request (that era's streams are not resumable), and the
    /// specification asks the client to re-issue it. List and read
    /// requests are re-issued with a new id, within the call's deadline
    /// (2 times at most). A
    /// tool call may already have acted, and this binding never runs a tool
    /// twice behind the host's back: by default it ends `indeterminate`,
    /// for the host to decide. Set this for a server whose tools are safe to
    /// run twice (idempotent, or deduplicated by the server), and a lost
    /// tool call is re-issued like a read. It changes nothing on the legacy
    /// era, whose streams resume instead.
    pub fn reissue_lost_tool_calls(&self) -> bool {
        self.reissue_lost_tool_calls
    }

    /// With another [`reissue_lost_tool_calls`](Self::reissue_lost_tool_calls).
    pub fn with_reissue_lost_tool_calls(mut self, reissue_lost_tool_calls: bool) -> Self {
        self.reissue_lost_tool_calls = reissue_lost_tool_calls;
        self
    }

    /// Sends a request again after a failure that may pass (a connection
    /// lost before it was sent, HTTP 429 and 503 after the server's
    /// `Retry-After`, and, for what is safe to repeat, a lost reply, 408
    /// or another 5xx), within its deadline and a retry budget, each retry
    /// reported as [`Event::RequestRetried`](crate::Event::RequestRetried).
    /// On by default; `false` is one try per request (see
    /// [`crate::layer::retry`]). The tries and delays are
    /// `reconnect.retry`'s.
    pub fn retry_requests(&self) -> bool {
        self.retry_requests
    }

    /// With another [`retry_requests`](Self::retry_requests).
    pub fn with_retry_requests(mut self, retry_requests: bool) -> Self {
        self.retry_requests = retry_requests;
        self
    }

    /// Which tool calls are safe to send again after a failure that may
    /// have let them run. None by default (see [`RepeatableTools`]).
    pub fn repeatable_tools(&self) -> &RepeatableTools {
        &self.repeatable_tools
    }

    /// With another [`repeatable_tools`](Self::repeatable_tools).
    pub fn with_repeatable_tools(mut self, repeatable_tools: RepeatableTools) -> Self {
        self.repeatable_tools = repeatable_tools;
        self
    }

    /// The declaration sets read from every tool's `_meta` when a catalog
    /// generation is built ([`DeclarationSet`](crate::catalog::meta::DeclarationSet));
    /// what passed is on each tool's
    /// [`ToolSpec::declared`](crate::catalog::ToolSpec::declared). None by
    /// default.
    pub fn declarations(&self) -> &crate::catalog::meta::DeclarationSet {
        &self.declarations
    }

    /// With another [`declarations`](Self::declarations).
    pub fn with_declarations(mut self, declarations: crate::catalog::meta::DeclarationSet) -> Self {
        self.declarations = declarations;
        self
    }

    /// How list and read results the server lets clients cache
    /// (`ttlMs`, `cacheScope`) are kept: on by default, private results in
    /// the binding's own memory and public ones shared by every binding of
    /// the process to the same server (see [`crate::cache`]).
    pub fn caching(&self) -> &crate::cache::Caching {
        &self.caching
    }

    /// With another [`caching`](Self::caching).
    pub fn with_caching(mut self, caching: crate::cache::Caching) -> Self {
        self.caching = caching;
        self
    }

    /// Where the tasks this binding starts are recorded (id, tool, start,
    /// TTL, last status seen), so that a restarted host or another replica
    /// can list them ([`Binding::started_tasks`](crate::Binding::started_tasks))
    /// and take them up again ([`Binding::task`](crate::Binding::task)).
    /// By default one [`MemoryTaskStore`](crate::tasks::MemoryTaskStore)
    /// for the whole process; a [`FileTaskStore`](crate::tasks::FileTaskStore)
    /// outlives it, a Redis one (feature `redis`) is shared by replicas. A
    /// store that fails costs the record (a `tracing` warning), never the
    /// call.
    pub fn task_store(&self) -> &Arc<dyn crate::tasks::TaskStore> {
        &self.task_store
    }

    /// With another [`task_store`](Self::task_store).
    pub fn with_task_store(mut self, task_store: Arc<dyn crate::tasks::TaskStore>) -> Self {
        self.task_store = task_store;
        self
    }

    /// Where the last fingerprint of each app read with
    /// [`Binding::read_app`](crate::Binding::read_app) is kept between
    /// bindings, processes and runs, per server (a key derived from the
    /// transport's [`endpoint_digest`](TransportFactory::endpoint_digest),
    /// not the binding's name) and `ui://` URI, so that an app that
    /// changed since an earlier run is reported as drift on the first read
    /// too (see [`crate::catalog::apps::AppFingerprintStore`]; a
    /// [`FileAppFingerprintStore`](crate::catalog::apps::FileAppFingerprintStore)
    /// keeps them in one private file). `None`, the default, keeps them in
    /// the binding's memory only; so does a transport that names no
    /// endpoint. A store that fails costs the comparison, never the read.
    pub fn app_fingerprint_store(&self) -> Option<&Arc<dyn crate::catalog::apps::AppFingerprintStore>> {
        self.app_fingerprint_store.as_ref()
    }

    /// With another [`app_fingerprint_store`](Self::app_fingerprint_store).
    pub fn with_app_fingerprint_store(
        mut self,
        store: Arc<dyn crate::catalog::apps::AppFingerprintStore>,
    ) -> Self {
        self.app_fingerprint_store = Some(store);
        self
    }

    /// The extensions this binding declares, with their settings
    /// (SEP-2133; see [`ClientExtensions`]): in `initialize` on the legacy
    /// era, on every request on 2026-07-28. None by default.
    pub fn extensions(&self) -> &ClientExtensions {
        &self.extensions
    }

    /// With another [`extensions`](Self::extensions).
    pub fn with_extensions(mut self, extensions: ClientExtensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Non-standard capabilities the binding declares (`experimental`), by
    /// name, each an object. None by default.
    pub fn experimental(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.experimental
    }

    /// With another [`experimental`](Self::experimental).
    pub fn with_experimental(mut self, experimental: serde_json::Map<String, serde_json::Value>) -> Self {
        self.experimental = experimental;
        self
    }

    /// Checks what can be checked before connecting: the name, the
    /// reconnect policy, and that the profile allows every tolerance the
    /// transport factory may apply ([`TransportFactory::tolerances`]; e.g.
    /// an automatic HTTP factory with its HTTP+SSE fallback needs
    /// `legacy_sse`). Fails with `invalid_config`.
    pub fn validate(&self) -> Result<(), crate::Error> {
        self.protocol.validate()?;
        let ok = !self.name.is_empty()
            && self.name.len() <= 32
            && self.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(crate::Error::new(
                crate::FailureClass::InvalidConfig,
                format!("binding name {:?} must be 1 to 32 bytes of [A-Za-z0-9_-]", self.name),
            ));
        }
        for tolerance in self.transport.tolerances() {
            if !self.compat.allows(tolerance) {
                return Err(crate::Error::new(
                    crate::FailureClass::InvalidConfig,
                    format!(
                        "the {} transport may apply the tolerance {tolerance}, which the profile {} does not allow",
                        self.transport.kind(),
                        self.compat.id()
                    ),
                ));
            }
        }
        let client = &self.client;
        let field_ok = |s: &str| !s.is_empty() && s.len() <= 256 && !s.chars().any(char::is_control);
        if !field_ok(&client.name)
            || !field_ok(&client.version)
            || client.title.as_deref().is_some_and(|t| !field_ok(t))
        {
            return Err(crate::Error::new(
                crate::FailureClass::InvalidConfig,
                "the client identity's name, version and title must be 1 to 256 bytes without control characters",
            ));
        }
        self.extensions.validate()?;
        crate::config::extensions::validate_experimental(&self.experimental)?;
        self.timeouts.validate()?;
        self.limits.validate()?;
        self.refresh.validate()?;
        self.reconnect.retry.validate()
    }

    /// `advertised` (what the handlers and [`AllowedCapabilities`] imply)
    /// with the declared extensions and experimental capabilities added.
    pub(crate) fn declare(
        &self,
        mut advertised: crate::protocol::ClientCapabilities,
    ) -> crate::protocol::ClientCapabilities {
        if !self.extensions.is_empty() {
            let extensions = advertised.extensions.get_or_insert_with(Default::default);
            for (id, settings) in self.extensions.iter() {
                extensions.insert(id.to_string(), serde_json::Value::Object(settings.clone()));
            }
        }
        if !self.experimental.is_empty() {
            advertised.experimental = Some(self.experimental.clone());
        }
        advertised
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_wins_and_empty_allow_permits_all() {
        let f = ToolFilter::default();
        assert!(f.permits("x"));
        let f = ToolFilter::default().with_allowed(["a", "b"]).with_denied(["b"]);
        assert!(f.permits("a"));
        assert!(!f.permits("b"));
        assert!(!f.permits("c"));
        let none = ToolFilter::default().with_allowed(Vec::<String>::new());
        assert!(!none.permits("x"), "an empty allowed set permits nothing");
        assert!(!none.is_unrestricted());
    }

    #[test]
    fn validate_refuses_values_that_cannot_work() {
        let def = || Definition::new("ok", crate::transport::memory::MemoryFactory::new("m", |_| Ok(())));
        assert!(def().validate().is_ok());
        for bad in [
            def().with_limits(Limits::default().with_max_frame_bytes(0)),
            def().with_timeouts(Timeouts::default().with_request(std::time::Duration::ZERO)),
            def().with_refresh(RetryPolicy::default().with_attempts(0)),
            def().with_reconnect(
                ReconnectPolicy::default().with_retry(RetryPolicy::default().with_jitter(2.0)),
            ),
            def().with_name("bad name"),
        ] {
            assert_eq!(bad.validate().unwrap_err().class(), crate::FailureClass::InvalidConfig);
        }
    }
}
