//! [`Host`]: many named bindings as one — a merged catalog, calls routed by
//! model name (fail closed), per-binding status and one event stream.
//!
//! A host holds a set of bindings by name. Each is added with a
//! [`Definition`] and connects on a task of its own, within that
//! definition's `Timeouts::startup` (connect, handshake and discovery
//! together; past it the attempt is dropped and the binding is listed as
//! failed with `startup_timeout`). Bindings added together connect
//! concurrently, 64 at a time by default
//! ([`HostBuilder::max_concurrent_connects`]) and at most 4 to one network
//! origin ([`HostBuilder::max_concurrent_connects_per_origin`]; a stdio
//! server has none), so one slow or hanging server delays nobody but
//! itself; only as many hanging servers as the bound could hold the others
//! back, each until its startup timeout, and bindings waiting for a slow
//! origin hold no turn meanwhile.
//!
//! The same turns bound the redials of the bindings the host connected,
//! once they are ready: a server that restarts under a thousand bindings
//! is dialed 4 at a time, not a thousand times at once (a herd of
//! handshakes opens as many connections, and their buffers fragment the
//! heap; see [`HostBuilder::max_concurrent_connects`]). A connector
//! ([`HostBuilder::connector`]) whose binding connects in its own future
//! gets this too; one that connects on a task it spawns does not. A
//! renewed session's handshake takes no turn (it runs on a call's path).
//!
//! ```
//! # #[cfg(feature = "demo")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! use mcp_stack::host::Host;
//! use mcp_stack::{CallOpts, Definition};
//!
//! let host = Host::new();
//! host.add(Definition::new("alpha", mcp_stack::demo::factory()))?;
//! host.add(Definition::new("beta", mcp_stack::demo::factory()))?;
//! host.settled().await;
//! for tool in host.catalog().tools() {
//!     println!("{}", tool.model_name); // mcp__alpha__echo, …, mcp__beta__echo, …
//! }
//! let args = serde_json::json!({"message": "hi"});
//! let result = host.call_tool("mcp__beta__echo", args, CallOpts::default()).await?;
//! assert_eq!(result.content[0].as_text(), Some("hi"));
//! host.close().await;
//! # Ok(()) }
//! # #[cfg(not(feature = "demo"))]
//! # fn main() {}
//! ```
//!
//! # Routing, and why it fails closed
//!
//! [`Host::call_tool`] takes a model name (`mcp__<binding>__<tool>`) and
//! finds its tool only through the adopted catalogs' own tables
//! ([`HostCatalog::resolve`], through an index of their model names that
//! finds what [`Catalog::tool_by_model_name`] of each would); the name is
//! never parsed, since sanitizing made it lossy. Before
//! anything is sent:
//!
//! | the name | error |
//! | --- | --- |
//! | not listed by any connected binding (unknown, removed, its binding still connecting or failed, hidden by a tool filter, not model-name shaped) | `not_found` |
//! | listed by more than one binding, ignoring ASCII case | `tool_unavailable` |
//!
//! `not_found` because, as far as this host can tell, there is no such tool;
//! `tool_unavailable` because there are tools by that name but the host may
//! not call one of them without knowing which was meant.
//!
//! The tool is resolved in the generation adopted when the call starts, and
//! sent by raw name to its binding, which checks it again against its own
//! adopted generation (see [`crate::catalog`]): a candidate whose schema for
//! that tool changed refuses the call with `tool_schema_changed` until it is
//! adopted ([`Host::adopt`]).
//!
//! # Nothing one binding does stops the others
//!
//! The host's registry is a plain mutex that is never held across an
//! `await`: calls clone a binding's handle and let go. A binding that is
//! still connecting, failed, reconnecting or closing affects only the calls
//! routed to it. Removing a binding closes it (within the host's close
//! timeout) after it has left the registry, so new calls to its tools are
//! `not_found` at once and calls in flight end with `shutdown`.
//!
//! # Events
//!
//! Every binding's events, and the host's own ([`HostEvent`]), go into one
//! bounded broadcast stream ([`Host::events`]). Publishing never waits; a
//! reader that falls behind loses the oldest events and learns how many
//! ([`HostEvents::missed`]). An event handler the host's [`Handlers`]
//! already had is still called, after the event is published.
//!
//! # How each binding is made
//!
//! Every binding is built by one function, the host's *connector*
//! ([`HostBuilder::connector`]); the default is [`Binding::connect`]. A host
//! that wants user layers or other per-binding construction installs its
//! own, and it applies to every binding the host connects.

pub mod app_bridge;
mod builder;
mod catalog;
pub mod config_file;
mod events;
mod search;
mod turns;

pub use builder::HostBuilder;
pub use catalog::{HostCatalog, Route};
pub(crate) use events::DEFAULT_EVENT_CAPACITY;
pub use events::{HostEvent, HostEvents};

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};
use tokio::sync::{broadcast, watch};
pub(crate) use turns::OriginTurns;

use crate::binding::{Binding, Definition, Status};
use crate::catalog::Catalog;
use crate::content::ToolResult;
use crate::era::ConnectTurns;
use crate::error::{normalize_message, Error, FailureClass};
use crate::events::{Event, Failure, State};
use crate::handlers::Handlers;
use crate::request::CallOpts;
use crate::session::ServerIdentity;
use search::ToolIndex;

/// The most bindings one host holds.
pub(crate) const MAX_BINDINGS: usize = 1024;
/// How long [`Host::close`] and [`Host::remove`] wait for bindings to close.
pub(crate) const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The future a connector returns.
pub(crate) type ConnectFuture = Pin<Box<dyn Future<Output = Result<Binding, Error>> + Send + 'static>>;

/// Builds one binding from its definition and handlers; see
/// [`HostBuilder::connector`].
pub(crate) type Connector = Arc<dyn Fn(Definition, Handlers) -> ConnectFuture + Send + Sync>;

pub(crate) type HandlersFor = Arc<dyn Fn(&Definition) -> Handlers + Send + Sync>;

/// Many named bindings as one. Cheap to clone; clones share the bindings.
/// See the [module docs](self).
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    registry: Mutex<Registry>,
    /// The last merged catalog, reused while no member changed.
    merged: Mutex<Option<Arc<HostCatalog>>>,
    /// The tool index behind [`Host::search_tools`], brought in step with
    /// the merged catalog at each search.
    index: Mutex<ToolIndex>,
    events: broadcast::Sender<HostEvent>,
    /// Bumped on every change of a binding's slot; `settled` waits on it.
    changes: watch::Sender<u64>,
    handlers: HandlersFor,
    connector: Connector,
    /// The turns of [`HostBuilder::max_concurrent_connects`].
    connects: Arc<tokio::sync::Semaphore>,
    /// The turns of [`HostBuilder::max_concurrent_connects_per_origin`].
    origin_connects: Mutex<OriginTurns>,
    close_timeout: Duration,
}

#[derive(Default)]
pub(crate) struct Registry {
    entries: BTreeMap<String, Entry>,
    /// How many entries are `Slot::Connecting`: kept with every change of
    /// a slot, so that [`Host::settled`], woken at each connect's end,
    /// asks in constant time rather than rescanning every binding (which
    /// made waiting for N bindings O(N²)).
    connecting: usize,
    next_id: u64,
    closed: bool,
}

impl Registry {
    fn insert(&mut self, name: String, entry: Entry) {
        self.connecting += usize::from(matches!(entry.slot, Slot::Connecting(_)));
        if let Some(replaced) = self.entries.insert(name, entry) {
            self.connecting -= usize::from(matches!(replaced.slot, Slot::Connecting(_)));
        }
    }

    fn remove(&mut self, name: &str) -> Option<Entry> {
        let entry = self.entries.remove(name)?;
        self.connecting -= usize::from(matches!(entry.slot, Slot::Connecting(_)));
        Some(entry)
    }

    fn take_all(&mut self) -> BTreeMap<String, Entry> {
        self.connecting = 0;
        std::mem::take(&mut self.entries)
    }
}

struct Entry {
    id: u64,
    transport_kind: &'static str,
    origin: String,
    compat: String,
    since: SystemTime,
    slot: Slot,
}

enum Slot {
    Connecting(tokio::task::AbortHandle),
    Ready(Binding),
    Failed(Failure),
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let registry = self.inner.registry.lock().expect("host registry lock");
        let names: Vec<&str> = registry.entries.keys().map(String::as_str).collect();
        f.debug_struct("Host").field("bindings", &names).field("closed", &registry.closed).finish()
    }
}

impl Default for Host {
    fn default() -> Self {
        Host::new()
    }
}

/// What [`Host::close`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CloseReport {
    /// The bindings that closed within the host's close timeout.
    pub closed: Vec<String>,
    /// The bindings that had not finished closing when the timeout passed;
    /// their close was abandoned.
    pub timed_out: Vec<String>,
    /// The bindings still connecting, whose attempt was dropped.
    pub abandoned: Vec<String>,
}

impl Host {
    /// A host with default handlers, connector and bounds.
    pub fn new() -> Host {
        HostBuilder::default().build()
    }

    /// Configures a host.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// Adds a binding and starts connecting it on a task of its own (once
    /// its turn comes: 64 bindings connect at once, 4 to one origin, unless
    /// [`HostBuilder::max_concurrent_connects`] and
    /// [`HostBuilder::max_concurrent_connects_per_origin`] say otherwise); returns at
    /// once. Its state is `starting` until the connect ends,
    /// within the definition's startup timeout (see [`Host::settled`]).
    ///
    /// Fails, adding nothing, with `invalid_config` when the definition is
    /// invalid ([`Definition::validate`]), the name is taken, or there is no
    /// Tokio runtime to connect on; `limit_exceeded` past 1024;
    /// `shutdown` once the host is closed.
    pub fn add(&self, definition: Definition) -> Result<(), Error> {
        definition.validate()?;
        let name = definition.name.clone();
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::new(FailureClass::InvalidConfig, "a host connects its bindings on a Tokio runtime")
                .with_binding(&name)
                .with_op("add")
        })?;
        let startup = definition.timeouts.startup;
        let handlers = self.handlers_for(&definition);
        let mut registry = self.inner.registry.lock().expect("host registry lock");
        let problem = if registry.closed {
            Some(Error::new(FailureClass::Shutdown, "the host is closed"))
        } else if registry.entries.contains_key(&name) {
            Some(Error::new(FailureClass::InvalidConfig, "the host has a binding of this name already"))
        } else if registry.entries.len() >= MAX_BINDINGS {
            Some(Error::new(FailureClass::LimitExceeded, format!("the host holds {MAX_BINDINGS} bindings")))
        } else {
            None
        };
        if let Some(e) = problem {
            return Err(e.with_binding(&name).with_op("add"));
        }
        registry.next_id += 1;
        let id = registry.next_id;
        let (transport_kind, origin) =
            (definition.transport.kind(), definition.transport.redacted_origin().to_string());
        let compat = definition.compat.id();
        let connector = self.inner.connector.clone();
        let weak = Arc::downgrade(&self.inner);
        let task_name = name.clone();
        // Spawned under the lock, so that the task's settle (which takes it)
        // always finds the slot this call fills in; the connector runs on the
        // task, so that it may use the host itself.
        let factory = definition.transport.clone();
        let origin_turns = definition
            .transport
            .connection_origin()
            .map(|o| self.inner.origin_connects.lock().expect("origin turns lock").of(o.as_str()));
        let turns = ConnectTurns::new(self.inner.connects.clone(), origin_turns);
        let task = runtime.spawn(async move {
            // Held until the connect ends; the semaphores are never closed.
            let _turn = turns.take().await;
            let connect = crate::binding::redialing_in(turns, connector(definition, handlers));
            let outcome = match tokio::time::timeout(startup, connect).await {
                Ok(outcome) => outcome,
                // The transport may know why (a stdio server's last words on
                // stderr): this timeout, the host's, usually fires before the
                // dialer's, so it says the same.
                Err(_) => {
                    let hint = factory.startup_hint().map(|h| format!("; {h}")).unwrap_or_default();
                    Err(Error::new(
                        FailureClass::StartupTimeout,
                        format!("the binding did not connect within {startup:?}{hint}"),
                    ))
                }
            };
            settle(weak, &task_name, id, outcome);
        });
        let slot = Slot::Connecting(task.abort_handle());
        let entry = Entry { id, transport_kind, origin, compat, since: SystemTime::now(), slot };
        registry.insert(name.clone(), entry);
        drop(registry);
        self.changed();
        let _ = self.inner.events.send(HostEvent::Added { binding: name, at: SystemTime::now() });
        Ok(())
    }

    /// Adds every definition (see [`Host::add`]) and waits until each has
    /// connected or failed: at most the longest startup timeout among them
    /// for each turn of [`HostBuilder::max_concurrent_connects`] (64 at a
    /// time by default) and of
    /// [`HostBuilder::max_concurrent_connects_per_origin`] (4).
    /// Returns the definitions refused by `add`, with why; a binding that
    /// failed to connect is not among them (see [`Host::status`]).
    pub async fn add_all(&self, definitions: impl IntoIterator<Item = Definition>) -> Vec<(String, Error)> {
        let mut refused = Vec::new();
        for definition in definitions {
            let name = definition.name.clone();
            if let Err(e) = self.add(definition) {
                refused.push((name, e));
            }
        }
        self.settled().await;
        refused
    }

    /// Waits until no binding is connecting. Each connect ends within its own
    /// startup timeout, so this returns within the longest of them (unless
    /// bindings keep being added).
    pub async fn settled(&self) {
        let mut changes = self.inner.changes.subscribe();
        loop {
            if !self.any_connecting() {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Waits until the binding `name` has connected or failed, and returns
    /// it: `not_found` when there is no such binding (or it was removed
    /// meanwhile), the connect's error when it failed.
    pub async fn ready(&self, name: &str) -> Result<Binding, Error> {
        let mut changes = self.inner.changes.subscribe();
        loop {
            let found = {
                let registry = self.inner.registry.lock().expect("host registry lock");
                match registry.entries.get(name).map(|e| &e.slot) {
                    None => {
                        Some(Err(Error::new(FailureClass::NotFound, "the host has no binding of this name")))
                    }
                    Some(Slot::Ready(binding)) => Some(Ok(binding.clone())),
                    Some(Slot::Failed(f)) => Some(Err(Error::new(f.class, &f.message))),
                    Some(Slot::Connecting(_)) => None,
                }
            };
            if let Some(outcome) = found {
                return outcome.map_err(|e| e.with_binding(name).with_op("ready"));
            }
            if changes.changed().await.is_err() {
                return Err(Error::new(FailureClass::Shutdown, "the host is gone").with_binding(name));
            }
        }
    }

    /// The connected binding `name`, if there is one.
    pub fn binding(&self, name: &str) -> Option<Binding> {
        let registry = self.inner.registry.lock().expect("host registry lock");
        match registry.entries.get(name).map(|e| &e.slot) {
            Some(Slot::Ready(binding)) => Some(binding.clone()),
            _ => None,
        }
    }

    /// The names of every binding, connected or not, in order.
    pub fn names(&self) -> Vec<String> {
        self.inner.registry.lock().expect("host registry lock").entries.keys().cloned().collect()
    }

    /// Every binding's status, in name order. A connected binding reports
    /// its own ([`Binding::status`]); one still connecting is `starting`,
    /// one that failed to connect is `failed` with the failure, both with an
    /// empty catalog.
    pub fn status(&self) -> Vec<Status> {
        let snapshot = self.snapshot();
        snapshot.into_iter().map(|(_, s)| s.status()).collect()
    }

    /// The status of the binding `name` (see [`Host::status`]).
    pub fn status_of(&self, name: &str) -> Option<Status> {
        let view = {
            let registry = self.inner.registry.lock().expect("host registry lock");
            registry.entries.get(name).map(|e| SlotView::of(name, e))
        };
        view.map(|v| v.status())
    }

    /// The merged catalog of every connected binding (see [`HostCatalog`]).
    /// Rebuilt only when a binding was added, removed or adopted a new
    /// generation since the last call.
    pub fn catalog(&self) -> Arc<HostCatalog> {
        let members: Vec<(u64, Arc<Catalog>)> = {
            let registry = self.inner.registry.lock().expect("host registry lock");
            registry
                .entries
                .values()
                .filter_map(|e| match &e.slot {
                    Slot::Ready(binding) => Some((e.id, binding.catalog())),
                    _ => None,
                })
                .collect()
        };
        let mut merged = self.inner.merged.lock().expect("host catalog lock");
        if let Some(current) = merged.as_ref() {
            let same = current.catalogs().len() == members.len()
                && current
                    .catalogs()
                    .iter()
                    .zip(&current.ids)
                    .zip(&members)
                    .all(|((c, id), (mid, m))| id == mid && Arc::ptr_eq(c, m));
            if same {
                return current.clone();
            }
        }
        let built = Arc::new(HostCatalog::build(members));
        *merged = Some(built.clone());
        built
    }

    /// The candidates waiting for adoption, one per binding that has one, in
    /// binding-name order. Each names its binding (`Catalog::binding`).
    pub fn candidates(&self) -> Vec<Arc<Catalog>> {
        self.ready_bindings().iter().filter_map(Binding::candidate).collect()
    }

    /// Adopts the candidate `generation` of the binding `binding` (see
    /// [`Binding::adopt`]); the merged catalog follows. `not_found` when the
    /// binding is not connected.
    pub fn adopt(&self, binding: &str, generation: u64) -> Result<Arc<Catalog>, Error> {
        match self.binding(binding) {
            Some(b) => b.adopt(generation),
            None => Err(Error::new(FailureClass::NotFound, "the host has no connected binding of this name")
                .with_binding(binding)
                .with_op("adopt")),
        }
    }

    /// Where `model_name` leads now, without calling anything (see
    /// [`HostCatalog::resolve`] for the failures).
    pub fn route(&self, model_name: &str) -> Result<Route, Error> {
        self.resolve(model_name).map(|(route, _)| route)
    }

    /// Calls the tool a model named. The name is resolved through the
    /// adopted catalogs only and refused before any I/O when it is unknown,
    /// removed (`not_found`) or ambiguous (`tool_unavailable`); see the
    /// [module docs](self#routing-and-why-it-fails-closed). Otherwise this is
    /// [`Binding::call_tool`] on the binding that lists it, by raw name.
    pub async fn call_tool(
        &self,
        model_name: &str,
        arguments: Value,
        opts: CallOpts,
    ) -> Result<ToolResult, Error> {
        let (route, binding) = self.resolve(model_name)?;
        binding.call_tool(&route.raw_name, arguments, opts).await
    }

    /// Calls the tool `raw_name` on behalf of an app of the binding
    /// `app_binding` (the server whose `ui://` resource the app is): the
    /// MCP Apps rule, enforced here so that a host cannot forget it. The
    /// tool is looked up on that binding's adopted catalog only (an app
    /// never reaches another server's tools), and refused before anything
    /// is sent with `tool_unavailable` unless its visibility includes
    /// `"app"` (the default), with `not_found` when the binding is not
    /// ready or does not list it. Otherwise this is
    /// [`Binding::call_tool`].
    pub async fn call_from_app(
        &self,
        app_binding: &str,
        raw_name: &str,
        arguments: Value,
        opts: CallOpts,
    ) -> Result<ToolResult, Error> {
        let quoted = || normalize_message(raw_name, 128);
        let refused = |class, message: String| {
            Err(Error::new(class, message).with_binding(app_binding).with_op("call_from_app"))
        };
        let Some(binding) = self.binding(app_binding) else {
            return refused(
                FailureClass::NotFound,
                "the app's server is not a ready binding of this host".into(),
            );
        };
        match binding.catalog().tool(raw_name) {
            None => refused(FailureClass::NotFound, format!("the app's server lists no tool {:?}", quoted())),
            Some(tool) if !tool.callable_from_app() => refused(
                FailureClass::ToolUnavailable,
                format!("the tool {:?} is not for apps (its visibility lacks \"app\")", quoted()),
            ),
            Some(_) => binding.call_tool_from_app(raw_name, arguments, opts).await,
        }
    }

    fn resolve(&self, model_name: &str) -> Result<(Route, Binding), Error> {
        let merged = self.catalog();
        let route = merged.route(model_name).map_err(|e| e.with_op("call_tool"))?;
        let id = merged.id_of(&route.binding);
        let registry = self.inner.registry.lock().expect("host registry lock");
        match registry.entries.get(&route.binding) {
            Some(Entry { id: current, slot: Slot::Ready(binding), .. }) if Some(*current) == id => {
                Ok((route, binding.clone()))
            }
            // Removed (or replaced) between the snapshot and now.
            _ => Err(Error::new(
                FailureClass::NotFound,
                format!(
                    "the binding that listed {:?} was removed",
                    normalize_message(model_name, crate::catalog::names::MAX_MODEL_NAME_BYTES)
                ),
            )
            .with_binding(&route.binding)
            .with_op("call_tool")),
        }
    }

    /// A reader of the merged event stream, from now on (see [`HostEvents`]).
    pub fn events(&self) -> HostEvents {
        HostEvents::new(self.inner.events.subscribe())
    }

    /// Removes the binding `name`: it leaves the registry at once (its tools
    /// are `not_found` from now on), a connect in progress is dropped, and a
    /// connected binding is closed, waiting at most the host's close
    /// timeout. Returns whether there was such a binding.
    pub async fn remove(&self, name: &str) -> bool {
        let entry = self.inner.registry.lock().expect("host registry lock").remove(name);
        let Some(entry) = entry else { return false };
        self.changed();
        match entry.slot {
            Slot::Connecting(task) => task.abort(),
            Slot::Ready(binding) => {
                if tokio::time::timeout(self.inner.close_timeout, binding.close()).await.is_err() {
                    tracing::warn!(target: "mcp_stack::host", binding = %name, "the removed binding did not close in time");
                }
            }
            Slot::Failed(_) => {}
        }
        let _ =
            self.inner.events.send(HostEvent::Removed { binding: name.to_string(), at: SystemTime::now() });
        true
    }

    /// Closes the host: no binding can be added any more, connects in
    /// progress are dropped, and every connected binding is closed
    /// concurrently, all within the host's close timeout (past it, the
    /// closes still running are abandoned and reported). Idempotent; the
    /// registry is empty afterwards.
    pub async fn close(&self) -> CloseReport {
        let entries = {
            let mut registry = self.inner.registry.lock().expect("host registry lock");
            registry.closed = true;
            registry.take_all()
        };
        self.changed();
        let mut report = CloseReport::default();
        let mut closing = tokio::task::JoinSet::new();
        let mut pending = Vec::new();
        for (name, entry) in entries {
            match entry.slot {
                Slot::Connecting(task) => {
                    task.abort();
                    report.abandoned.push(name);
                }
                Slot::Ready(binding) => {
                    pending.push(name.clone());
                    closing.spawn(async move {
                        binding.close().await;
                        name
                    });
                }
                Slot::Failed(_) => {}
            }
        }
        let drain = async {
            while let Some(done) = closing.join_next().await {
                if let Ok(name) = done {
                    report.closed.push(name);
                }
            }
        };
        let _ = tokio::time::timeout(self.inner.close_timeout, drain).await;
        // Dropping the set aborts the closes still running.
        drop(closing);
        report.closed.sort();
        report.timed_out = pending.into_iter().filter(|n| !report.closed.contains(n)).collect();
        report
    }

    fn handlers_for(&self, definition: &Definition) -> Handlers {
        let mut handlers = (self.inner.handlers)(definition);
        let theirs = handlers.event.take();
        let events = self.inner.events.clone();
        handlers.event = Some(Arc::new(move |event: Event| {
            // Published first: the host's own handler may take its time.
            let _ = events.send(HostEvent::Binding(event.clone()));
            if let Some(theirs) = &theirs {
                theirs(event);
            }
        }));
        handlers
    }

    fn changed(&self) {
        self.inner.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn any_connecting(&self) -> bool {
        let registry = self.inner.registry.lock().expect("host registry lock");
        registry.connecting > 0
    }

    fn ready_bindings(&self) -> Vec<Binding> {
        let registry = self.inner.registry.lock().expect("host registry lock");
        registry
            .entries
            .values()
            .filter_map(|e| match &e.slot {
                Slot::Ready(binding) => Some(binding.clone()),
                _ => None,
            })
            .collect()
    }

    fn snapshot(&self) -> Vec<(String, SlotView)> {
        let registry = self.inner.registry.lock().expect("host registry lock");
        registry.entries.iter().map(|(name, e)| (name.clone(), SlotView::of(name, e))).collect()
    }
}

/// What a status needs from an entry, taken under the lock and read after.
enum SlotView {
    Ready(Binding),
    Waiting {
        name: String,
        state: State,
        failure: Option<Failure>,
        kind: &'static str,
        origin: String,
        compat: String,
        since: SystemTime,
    },
}

impl SlotView {
    fn of(name: &str, e: &Entry) -> SlotView {
        let (state, failure) = match &e.slot {
            Slot::Ready(binding) => return SlotView::Ready(binding.clone()),
            Slot::Connecting(_) => (State::Starting, None),
            Slot::Failed(f) => (State::Failed, Some(f.clone())),
        };
        SlotView::Waiting {
            name: name.to_string(),
            state,
            failure,
            kind: e.transport_kind,
            origin: e.origin.clone(),
            compat: e.compat.clone(),
            since: e.since,
        }
    }

    fn status(self) -> Status {
        match self {
            SlotView::Ready(binding) => binding.status(),
            SlotView::Waiting { name, state, failure, kind, origin, compat, since } => Status {
                binding: name,
                state,
                protocol_version: String::new(),
                server: ServerIdentity::default(),
                transport_kind: kind.to_string(),
                redacted_origin: origin,
                failure,
                last_change: since,
                reconnect_attempt: 0,
                dropped_events: 0,
                catalog_generation: 0,
                catalog_digest: String::new(),
                candidate_generation: 0,
                candidate_digest: String::new(),
                stale_families: Vec::new(),
                compat_profile: compat,
                dropped_logs: 0,
                progress_routes: 0,
                dropped_progress: 0,
            },
        }
    }
}

/// Records how the connect of entry `id` ended, unless the entry was
/// removed (or the host dropped) meanwhile; then a binding that did connect
/// is closed, since nobody can reach it.
fn settle(host: Weak<Inner>, name: &str, id: u64, outcome: Result<Binding, Error>) {
    let Some(inner) = host.upgrade() else {
        if let Ok(binding) = outcome {
            tokio::spawn(async move { binding.close().await });
        }
        return;
    };
    let failure = outcome.as_ref().err().map(Failure::from);
    let recorded = {
        let mut guard = inner.registry.lock().expect("host registry lock");
        let registry = &mut *guard;
        match registry.entries.get_mut(name) {
            Some(entry) if entry.id == id && matches!(entry.slot, Slot::Connecting(_)) => {
                registry.connecting -= 1;
                entry.since = SystemTime::now();
                entry.slot = match outcome {
                    Ok(binding) => Slot::Ready(binding),
                    Err(_) => Slot::Failed(failure.clone().expect("an error")),
                };
                Ok(())
            }
            _ => Err(outcome.ok()),
        }
    };
    match recorded {
        Ok(()) => {
            inner.changes.send_modify(|n| *n = n.wrapping_add(1));
            if let Some(f) = failure {
                let _ = inner.events.send(HostEvent::ConnectFailed {
                    binding: name.to_string(),
                    class: f.class,
                    message: f.message,
                    at: SystemTime::now(),
                });
            }
        }
        Err(Some(orphan)) => {
            tokio::spawn(async move { orphan.close().await });
        }
        Err(None) => {}
    }
}
