//! [`Handlers`]: the host's services for what a server starts on its own.
//!
//! Each handler is a `tower::Service`, boxed as a `BoxCloneSyncService`, so
//! a host can wrap its own in layers (a timeout, a rate limit, an audit log)
//! before installing it, and test it alone like any other service. When the
//! server cancels its request (`notifications/cancelled`), the call's future
//! is dropped: a handler stops at its next `.await` and nothing is answered
//! (see [`crate::connection`]). For the common case an async closure is
//! enough:
//!
//! ```
//! use mcp_stack::handlers::{ElicitResult, Handlers, SampleResult};
//! use mcp_stack::protocol::roots::Root;
//!
//! let handlers = Handlers::default()
//!     .elicitation(|req| async move {
//!         // Show `req.message` to a person and ask; here: accept the defaults.
//!         Ok(ElicitResult::accept(req.defaults()))
//!     })
//!     .sampling(|req| async move {
//!         Ok(SampleResult::text("my-model", format!("{} messages read", req.messages.len())))
//!     })
//!     .with_roots(vec![Root::new("file:///home/me/project")])
//!     .log(|msg| async move {
//!         eprintln!("[{}] {}", msg.level, msg.text);
//!         Ok(())
//!     });
//! assert!(handlers.elicitation.is_some());
//! ```
//!
//! A tower service plugs in the same way, layers and all:
//!
//! ```
//! use std::time::Duration;
//! use mcp_stack::handlers::{ElicitRequest, ElicitResult, Handlers};
//! use tower::ServiceBuilder;
//!
//! let svc = ServiceBuilder::new()
//!     .timeout(Duration::from_secs(60))
//!     .service_fn(|_req: ElicitRequest| async { Ok::<_, mcp_stack::Error>(ElicitResult::decline()) });
//! let handlers = Handlers::default().elicitation_service(svc);
//! # drop(handlers);
//! ```
//!
//! # What installing a handler does
//!
//! A client capability is advertised in `initialize` only when its handler
//! is installed here **and** the [`Definition`]'s
//! [`AllowedCapabilities`] allows it for that server: the handlers say what
//! the host can do, the definition says what this server may ask for. A
//! server request for a capability that was not advertised is answered
//! "method not found".
//!
//! | handler | advertises | serves |
//! | --- | --- | --- |
//! | `elicitation` | `elicitation.form` (and `elicitation.url` with [`ElicitationModes::url`]) | `elicitation/create` |
//! | `sampling` | `sampling` (and `sampling.tools` with [`Handlers::sampling_tools`]) | `sampling/createMessage` |
//! | `roots` | `roots.listChanged` | `roots/list` |
//! | `log` | nothing (logging is a server capability) | `notifications/message`, and turns logs on with `logging/setLevel` |
//!
//! A handler that calls back through its own binding (a sampling handler
//! calling a tool, say) holds a clone of the [`Binding`], and the binding
//! holds the handler: the two then keep each other alive, and only
//! [`Binding::close`] ends the connection (and a stdio child). Close such a
//! binding explicitly.
//!
//! [`Binding`]: crate::Binding
//! [`Binding::close`]: crate::Binding::close
//! [`Definition`]: crate::Definition
//! [`AllowedCapabilities`]: crate::AllowedCapabilities

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use tower::util::BoxCloneSyncService;
use tower::ServiceExt;
use tower_service::Service;

pub mod elicitation;
pub(crate) mod inbound;
pub mod logging;
pub mod roots;
mod rpc;
pub mod sampling;

use crate::error::{BoxError, Error};
use crate::events::{Event, EventHandler};
use crate::protocol::roots::Root;
pub use elicitation::{
    ElicitAction, ElicitRequest, ElicitResult, ElicitationMode, ElicitationModes, ElicitationService,
};
pub use inbound::{MAX_RESOURCE_URI_BYTES, SUBSCRIPTION_ID_META};
pub use logging::{LogMessage, LogService, LOG_QUEUE};
pub use roots::{root_for_path, ListRoots, RootsService};
pub use sampling::{
    sampling_denied, sampling_depth, with_sampling_depth, SampleOutcome, SampleRequest, SampleResult,
    SamplingService,
};

/// The host's services for what a server starts on its own: elicitation,
/// sampling, roots, logs and the binding's events. See the
/// [module docs](self) for what each one advertises.
#[derive(Clone, Default)]
pub struct Handlers {
    /// Serves elicitation. `None`: the capability is not advertised.
    pub elicitation: Option<ElicitationService>,
    /// The elicitation modes declared when `elicitation` is installed.
    pub elicitation_modes: ElicitationModes,
    /// Serves sampling. `None`: the capability is not advertised.
    pub sampling: Option<SamplingService>,
    /// Declares `sampling.tools`: the host's model can use tools, so a
    /// server may send `tools`, `toolChoice` and `tool_use` / `tool_result`
    /// blocks. Off by default; such a request is refused when it is off.
    pub sampling_tools: bool,
    /// Supplies roots. `None`: the capability is not advertised.
    pub roots: Option<RootsService>,
    /// Receives server log messages. `None`: they are only reported as
    /// events, and `logging/setLevel` is not sent.
    pub log: Option<LogService>,
    /// Receives the binding's events. `None` discards them.
    pub event: Option<EventHandler>,
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("elicitation_modes", &self.elicitation_modes)
            .field("sampling", &self.sampling.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .field("roots", &self.roots.is_some())
            .field("log", &self.log.is_some())
            .field("event", &self.event.is_some())
            .finish()
    }
}

fn boxed<S, Req>(svc: S) -> BoxCloneSyncService<Req, S::Response, Error>
where
    S: Service<Req> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    Req: 'static,
{
    BoxCloneSyncService::new(svc.map_err(|e: S::Error| Error::from_boxed(e.into())))
}

impl Handlers {
    /// Handlers with an event handler.
    pub fn with_events(mut self, f: impl Fn(Event) + Send + Sync + 'static) -> Self {
        self.event = Some(Arc::new(f));
        self
    }

    /// Serves elicitation with an async closure.
    pub fn elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, Error>> + Send + 'static,
    {
        self.elicitation_service(tower::service_fn(f))
    }

    /// Serves elicitation with a tower service (any error type a
    /// `BoxError` holds; an [`Error`] inside keeps its class, tower's
    /// `Elapsed` becomes `deadline`).
    pub fn elicitation_service<S>(mut self, svc: S) -> Self
    where
        S: Service<ElicitRequest, Response = ElicitResult> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.elicitation = Some(boxed(svc));
        self
    }

    /// Declares the elicitation modes the handler carries out (form only by
    /// default).
    pub fn elicitation_modes(mut self, modes: ElicitationModes) -> Self {
        self.elicitation_modes = modes;
        self
    }

    /// Serves sampling with an async closure.
    pub fn sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(SampleRequest) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<SampleResult, Error>> + Send + 'static,
    {
        self.sampling_service(tower::service_fn(f))
    }

    /// Serves sampling with a tower service.
    pub fn sampling_service<S>(mut self, svc: S) -> Self
    where
        S: Service<SampleRequest, Response = SampleResult> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.sampling = Some(boxed(svc));
        self
    }

    /// Declares (or withdraws) `sampling.tools`.
    pub fn sampling_tools(mut self, declared: bool) -> Self {
        self.sampling_tools = declared;
        self
    }

    /// Supplies roots with an async closure.
    pub fn roots<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ListRoots) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, Error>> + Send + 'static,
    {
        self.roots_service(tower::service_fn(f))
    }

    /// Supplies roots with a tower service.
    pub fn roots_service<S>(mut self, svc: S) -> Self
    where
        S: Service<ListRoots, Response = Vec<Root>> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.roots = Some(boxed(svc));
        self
    }

    /// Supplies a fixed list of roots.
    pub fn with_roots(self, roots: Vec<Root>) -> Self {
        let roots = Arc::new(roots);
        self.roots(move |_| {
            let roots = roots.clone();
            async move { Ok(roots.as_ref().clone()) }
        })
    }

    /// Receives log messages with an async closure.
    pub fn log<F, Fut>(self, f: F) -> Self
    where
        F: Fn(LogMessage) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Error>> + Send + 'static,
    {
        self.log_service(tower::service_fn(f))
    }

    /// Receives log messages with a tower service.
    pub fn log_service<S>(mut self, svc: S) -> Self
    where
        S: Service<LogMessage, Response = ()> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        self.log = Some(boxed(svc));
        self
    }
}
