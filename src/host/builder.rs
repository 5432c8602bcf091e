//! [`HostBuilder`]: a host's handlers, connector, bounds and tool ranker,
//! before it holds any binding.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

use super::search::ToolIndex;
use super::{Connector, HandlersFor, Host, Inner, Registry, DEFAULT_CLOSE_TIMEOUT, DEFAULT_EVENT_CAPACITY};
use crate::binding::{Binding, Definition};
use crate::error::Error;
use crate::handlers::Handlers;
use crate::search::ToolRanker;

/// Configures a [`Host`].
#[must_use]
pub struct HostBuilder {
    handlers: HandlersFor,
    connector: Connector,
    close_timeout: Duration,
    event_capacity: usize,
    ranker: Option<Box<dyn ToolRanker>>,
    max_concurrent_connects: Option<usize>,
}

impl fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuilder")
            .field("close_timeout", &self.close_timeout)
            .field("event_capacity", &self.event_capacity)
            .field("max_concurrent_connects", &self.max_concurrent_connects)
            .finish_non_exhaustive()
    }
}

impl Default for HostBuilder {
    fn default() -> Self {
        HostBuilder {
            handlers: Arc::new(|_| Handlers::default()),
            connector: Arc::new(|definition, handlers| Box::pin(Binding::connect(definition, handlers))),
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            ranker: None,
            max_concurrent_connects: None,
        }
    }
}

impl HostBuilder {
    /// Serves every binding's server requests with (clones of) `handlers`.
    pub fn handlers(self, handlers: Handlers) -> Self {
        self.handlers_with(move |_| handlers.clone())
    }

    /// Serves each binding's server requests with the handlers `f` makes for
    /// its definition.
    pub fn handlers_with(mut self, f: impl Fn(&Definition) -> Handlers + Send + Sync + 'static) -> Self {
        self.handlers = Arc::new(f);
        self
    }

    /// Builds every binding with `connect` instead of [`Binding::connect`]:
    /// the one place where a host decides how its bindings are made (user
    /// layers, a wrapped transport). The host bounds it by the definition's
    /// startup timeout and drops it past that.
    pub fn connector<F, Fut>(mut self, connect: F) -> Self
    where
        F: Fn(Definition, Handlers) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Binding, Error>> + Send + 'static,
    {
        self.connector = Arc::new(move |definition, handlers| Box::pin(connect(definition, handlers)));
        self
    }

    /// How long [`Host::close`] and [`Host::remove`] wait for bindings to
    /// close (default 10 s; zero does not wait: every binding is dropped
    /// at once).
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// How many events a reader of [`Host::events`] may fall behind by
    /// before it loses the oldest (default 1024; at
    /// least 1).
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity.max(1);
        self
    }

    /// The ranker behind [`Host::search_tools`], in place of the built-in
    /// lexical one ([`LexicalRanker`](crate::search::LexicalRanker)): a
    /// host's own (embeddings, say), fed one server's tools at a time as
    /// the catalog changes.
    pub fn tool_ranker(mut self, ranker: impl ToolRanker + 'static) -> Self {
        self.ranker = Some(Box::new(ranker));
        self
    }

    /// At most `n` bindings connect at once (at least 1); the others wait
    /// their turn (first come, first served), and a binding's startup
    /// timeout counts from its turn. Unbounded by default: a host dials
    /// every added server at once, which is as fast as a floor of plain
    /// spawns at 500 stdio servers (`benches/host_scale`). A bound is for
    /// servers heavy at start (an `npx` or `uvx` server is hundreds of MiB
    /// and seconds of CPU: 500 at once thrash a machine that runs 8 at a
    /// time), for the open-file limit (three pipes a stdio server), and
    /// for many bindings to one origin, whose concurrent handshakes open as
    /// many pooled connections. [`Host::add_all`](crate::host::Host::add_all)
    /// then waits for every turn.
    pub fn max_concurrent_connects(mut self, n: usize) -> Self {
        self.max_concurrent_connects = Some(n.max(1));
        self
    }

    /// The host, with no bindings yet.
    pub fn build(self) -> Host {
        let (events, _) = broadcast::channel(self.event_capacity);
        let (changes, _) = watch::channel(0u64);
        Host {
            inner: Arc::new(Inner {
                registry: Mutex::new(Registry::default()),
                merged: Mutex::new(None),
                index: Mutex::new(ToolIndex::new(self.ranker.unwrap_or_else(crate::search::default_ranker))),
                events,
                changes,
                handlers: self.handlers,
                connector: self.connector,
                connects: self.max_concurrent_connects.map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
                close_timeout: self.close_timeout,
            }),
        }
    }
}
