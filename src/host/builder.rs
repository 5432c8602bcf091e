//! [`HostBuilder`]: a host's handlers, connector, bounds and tool ranker,
//! before it holds any binding.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

use super::search::ToolIndex;
use super::{
    Connector, HandlersFor, Host, Inner, OriginTurns, Registry, DEFAULT_CLOSE_TIMEOUT, DEFAULT_EVENT_CAPACITY,
};
use crate::binding::{Binding, Definition};
use crate::error::Error;
use crate::handlers::Handlers;
use crate::search::ToolRanker;

/// How many bindings a host connects at once unless told otherwise: see
/// [`HostBuilder::max_concurrent_connects`] for why 64.
const DEFAULT_CONCURRENT_CONNECTS: usize = 64;

/// How many bindings to one origin a host connects at once unless told
/// otherwise: see [`HostBuilder::max_concurrent_connects_per_origin`] for
/// why 4.
const DEFAULT_CONCURRENT_CONNECTS_PER_ORIGIN: usize = 4;

/// Configures a [`Host`].
#[must_use]
pub struct HostBuilder {
    handlers: HandlersFor,
    connector: Connector,
    close_timeout: Duration,
    event_capacity: usize,
    ranker: Option<Box<dyn ToolRanker>>,
    max_concurrent_connects: usize,
    max_concurrent_connects_per_origin: usize,
}

impl fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuilder")
            .field("close_timeout", &self.close_timeout)
            .field("event_capacity", &self.event_capacity)
            .field("max_concurrent_connects", &self.max_concurrent_connects)
            .field("max_concurrent_connects_per_origin", &self.max_concurrent_connects_per_origin)
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
            max_concurrent_connects: DEFAULT_CONCURRENT_CONNECTS,
            max_concurrent_connects_per_origin: DEFAULT_CONCURRENT_CONNECTS_PER_ORIGIN,
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

    /// At most `n` bindings connect at once (at least 1; `usize::MAX` for
    /// no bound); the others wait their turn (first come, first served),
    /// and a binding's startup timeout counts from its turn.
    /// [`Host::add_all`](crate::host::Host::add_all) then waits for every
    /// turn. A binding the host connected redials in the same turns once
    /// it is ready (see [the module docs](crate::host)).
    ///
    /// The default, 64, was measured in
    /// `benches/host_scale` (2026-12-05, 2 cores): 1,000 HTTP bindings to
    /// one origin dialed all at once held 60-66 KiB resident each once idle,
    /// 29.5-29.8 KiB with 64 at a time, and were ready sooner (500 in
    /// 160-180 ms against 240-280): a herd of handshakes opens as many
    /// connections, and their buffers, freed between the bindings' long-lived
    /// state, leave the heap fragmented. 500 stdio servers are ready in the
    /// same time either way (about the floor of 500 raw spawns in
    /// parallel). A lower bound suits servers heavy at start (an `npx` or
    /// `uvx` server is hundreds of MiB and seconds of CPU) and the open-file
    /// limit (three pipes a stdio server); the cost of any bound is that
    /// servers which hang in their handshake hold turns until their startup
    /// timeout, delaying the others behind them.
    pub fn max_concurrent_connects(mut self, n: usize) -> Self {
        self.max_concurrent_connects = n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        self
    }

    /// At most `n` bindings to one network origin connect (and redial) at
    /// once (at least 1; `usize::MAX` for no bound beyond
    /// [`HostBuilder::max_concurrent_connects`]). The origin is the
    /// transport's [`connection_origin`]: an HTTP server's
    /// `scheme://host:port`; a stdio server has none, and is bound only by
    /// the host's turns. A binding waits for its origin's turn before it
    /// takes one of the host's, so bindings queued behind one slow origin
    /// keep no binding to another waiting.
    ///
    /// The default, 4, was measured in `benches/host_scale` (2026-12-05,
    /// 2 cores): over HTTP/1.1 each handshake request in flight opens a
    /// connection of its own, so 64 handshakes to one origin at once leave
    /// 64 connections in the pool, and their buffers fragment the heap
    /// even once freed. 100 idle HTTP bindings to one origin held 60-70
    /// KiB resident each with 64 at a time (the default before), 38-40 KiB
    /// with 16, 33-34 with 8, 31-32 with 6 and 29-30 with 4 (28 with 2); a
    /// thousand, 29.7 and 26.1 KiB with 64 and 4. It is also what a server
    /// sees: browsers open at most six connections to a host, and a server
    /// that limits requests by client address takes dozens of handshakes
    /// at once for abuse. The cost falls on many bindings to one origin:
    /// over loopback 100 were ready in 41-49 ms against 38-42 with 64 at a
    /// time, 500 in 191-197 ms against 153-167; to a distant origin each
    /// connect's round trips are waited for four at a time (an HTTP/2
    /// server takes more at once over its one connection): raise it for a
    /// gateway of many servers behind one remote origin.
    ///
    /// [`connection_origin`]: crate::transport::TransportFactory::connection_origin
    pub fn max_concurrent_connects_per_origin(mut self, n: usize) -> Self {
        self.max_concurrent_connects_per_origin = n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
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
                connects: Arc::new(tokio::sync::Semaphore::new(self.max_concurrent_connects)),
                origin_connects: Mutex::new(OriginTurns::new(self.max_concurrent_connects_per_origin)),
                close_timeout: self.close_timeout,
            }),
        }
    }
}
