//! Reconnecting: the bottom of a binding's stack, above the connection.
//!
//! A [`Connection`] is one transport's life: once it is lost it stays lost,
//! and its `poll_ready` fails. [`Reconnect`] is the service that outlives
//! it. It shares the current connection with a *supervisor* task, through a
//! `tokio::sync::watch` channel:
//!
//! - The supervisor starts when the first connection ends, or when the
//!   service is closed: a connection that never breaks costs no task. Once
//!   started, it waits for each live connection to end
//!   ([`Connection::watch_state`]). Unless reconnection is off ([`ReconnectPolicy::never`]), it
//!   then re-dials through the [`TransportFactory`] and re-runs the handshake
//!   (a [`Dialer`]), with the backoff of the policy's [`RetryPolicy`]
//!   (tower's [`ExponentialBackoff`]), and publishes the new connection.
//! - [`Reconnect`]'s `poll_ready` is ready when a live connection is
//!   published (and that connection is ready); it is *pending* while the
//!   supervisor reconnects, and woken when it publishes. It fails only when
//!   the service is unavailable for good ([`Unavailable`]): reconnecting is
//!   disabled (`transport_closed`; the binding stays degraded), the budget
//!   is spent (`transport_closed`; the binding has failed), or it was closed
//!   (`shutdown`). Those are final, so it is safe below a `Buffer`.
//! - `call` sends on the connection `poll_ready` reserved, and returns that
//!   connection's own response future (this layer adds nothing to a call in
//!   flight, so it has no future of its own). Once sent, a request belongs
//!   to that connection: if it is lost before the reply, the
//!   engine ends the call `indeterminate`, and nothing here replays it. (The
//!   retry policy above, [`crate::layer::retry`], may repeat a request that is
//!   safe to repeat; never a `tools/call` that left the client.)
//!
//! A caller waiting in `poll_ready` waits for as long as reconnecting takes:
//! put a deadline above (the binding's [`DeadlineLayer`] is outermost, and
//! counts the wait for readiness against each call's own deadline).
//!
//! # Timeline of one loss
//!
//! With the default policy (5 attempts, 200 ms base, 5 s max, 60 s total):
//!
//! ```text
//! t=0       connection lost   -> Report::Lost { attempt: 0, retry_in: Some(0) }
//! t=0       attempt 1 dials   (refused)  -> Report::Lost { attempt: 1, retry_in: Some(200ms + jitter) }
//! t≈200ms   attempt 2 dials   (refused)  -> Report::Lost { attempt: 2, retry_in: Some(400ms + jitter) }
//! t≈600ms   attempt 3 dials   (ok)       -> Report::Restored { attempts: 3, .. }
//! ```
//!
//! The last `Lost` of a loop that gives up has `retry_in: None`. Reports are
//! published, in order, on a channel ([`ReconnectLayer::reports`],
//! [`Reconnect::reports`]), as a connection publishes its state: nothing
//! calls back into the code above, and the supervisor never waits for a
//! reader. A report is sent before the state it describes is published to
//! callers. The channel keeps the last 64 reports for a
//! reader that falls behind; one further behind learns how many it missed.
//!
//! # A forgotten session
//!
//! A streamable-HTTP server may forget the session (404 on a request with
//! its `Mcp-Session-Id`: [`SessionExpired`]). The request was not processed,
//! so this layer renews the session at once on the same connection (the
//! `initialize` handshake again, through the [`Dialer`]'s capabilities and
//! client identity, within its timeout), reports it ([`Report::Renewed`]:
//! the connection was never lost), and sends the request once more: no
//! replay. Once per request: a second expiry is the call's error,
//! which the retry policy above does not repeat (see
//! [`crate::layer::retry`]), so a server that forgets every session fails
//! fast. Calls that see the same expiry at once share one renewal. Calls
//! whose outcome became unknown with the old session end `indeterminate`
//! (the transport reports them) and are never sent again.
//!
//! # Closing
//!
//! [`Reconnect::close`] (idempotent, from any clone) stops the supervisor
//! (a dial in flight is abandoned, a backoff cut short), closes the current
//! connection (its pending calls end `shutdown`; a stdio child is ended),
//! and waits until that is done. Callers then fail with `shutdown`. Dropping
//! every clone of the service closes it too.
//!
//! ```
//! # use mcp_stack::connection::NoInbound;
//! # use mcp_stack::era::Dialer;
//! # use mcp_stack::layer::reconnect::ReconnectLayer;
//! # use mcp_stack::ReconnectPolicy;
//! # use mcp_stack::McpRequest;
//! # use mcp_stack::transport::ConnectConfig;
//! # use std::sync::Arc;
//! use tower::{Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mcp_stack::Error> {
//! let dialer = Dialer::new(Arc::new(mcp_stack::demo::factory()), ConnectConfig::new("demo"), Arc::new(NoInbound));
//! let (first, _session) = dialer.dial().await?;
//! let layer = ReconnectLayer::new(dialer, ReconnectPolicy::default());
//! let mut reports = layer.reports();
//! tokio::spawn(async move {
//!     while let Ok(report) = reports.recv().await {
//!         println!("{report:?}");
//!     }
//! });
//! let reconnect = layer.layer(first);
//!
//! // The first connection dies; the service waits for the next one.
//! reconnect.connection().unwrap().close().await;
//! reconnect.clone().oneshot(McpRequest::new("ping", Default::default())).await?;
//! reconnect.close().await;
//! # Ok(()) }
//! ```
//!
//! [`Connection::watch_state`]: crate::connection::Connection::watch_state
//! [`TransportFactory`]: crate::transport::TransportFactory
//! [`RetryPolicy`]: crate::config::RetryPolicy
//! [`ExponentialBackoff`]: tower::retry::backoff::ExponentialBackoff
//! [`DeadlineLayer`]: crate::layer::deadline::DeadlineLayer
//! [`SessionExpired`]: crate::transport::SessionExpired

mod error;
mod layer;
mod supervisor;

use crate::config::ReconnectPolicy;
use crate::era::Dialer;
pub use error::{Reason, Unavailable};
pub use layer::ReconnectLayer;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::sync::{broadcast, watch};
use tower_service::Service;

use crate::connection::{self, Connection};
use crate::error::{Error, FailureClass};
use crate::request::{McpRequest, McpResponse};
use crate::session::SessionInfo;

/// The reports a reader of [`ReconnectLayer::reports`] may fall behind by
/// before it misses some (it is told how many).
/// A loss makes a handful (lost, each attempt, restored or given up), read
/// at once by the binding; every binding holds the slots for its life (at
/// 64 they were 4.6 KiB of an idle connection; see bench/vs-rmcp).
pub(crate) const REPORT_BACKLOG: usize = 16;

/// The report channel, and what is told of each report sent on it
/// ([`ReconnectLayer::on_report`]).
#[derive(Clone)]
pub(crate) struct Reports {
    tx: broadcast::Sender<Report>,
    on_send: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Reports {
    fn new() -> Self {
        Reports { tx: broadcast::channel(REPORT_BACKLOG).0, on_send: None }
    }

    fn send(&self, report: Report) {
        // No reader is not an error: nobody is watching.
        let _ = self.tx.send(report);
        if let Some(on_send) = &self.on_send {
            on_send();
        }
    }

    fn subscribe(&self) -> broadcast::Receiver<Report> {
        self.tx.subscribe()
    }
}

/// What the reconnect layer reports, in order, on its channel
/// ([`ReconnectLayer::reports`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Report {
    /// The live connection was lost (`attempt` 0), or reconnect attempt
    /// `attempt` failed.
    Lost {
        /// The class of the failure.
        class: FailureClass,
        /// Its bounded text.
        message: String,
        /// 0 for the loss of the live connection, `n` for attempt `n`.
        attempt: u32,
        /// How long until the next attempt, or `None` when there will be none:
        /// reconnecting is disabled (only ever with `attempt` 0) or the
        /// policy's budget is spent.
        retry_in: Option<Duration>,
    },
    /// Attempt `attempts` succeeded: a new connection is live.
    Restored {
        /// What its handshake established (boxed: it is by far the largest
        /// report).
        session: Box<SessionInfo>,
        /// The attempts it took, from 1.
        attempts: u32,
    },
    /// The server forgot the session, and a new one was initialized over
    /// the same connection (see [A forgotten session](self#a-forgotten-session)).
    /// The connection was never lost.
    Renewed {
        /// What the new handshake established.
        session: Box<SessionInfo>,
    },
}

/// Where a [`Reconnect`] stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// A connection is published (it may have just been lost; the supervisor
    /// is about to notice).
    Connected,
    /// Reconnect attempt `attempt` (from 1) is being made or waited for.
    Reconnecting {
        /// The attempt.
        attempt: u32,
    },
    /// Unavailable for good.
    Unavailable(Unavailable),
}

/// What the supervisor publishes.
#[derive(Clone)]
enum Link {
    Up(Connection),
    Reconnecting { attempt: u32 },
    Down(Unavailable),
}

impl Link {
    fn is_closed(&self) -> bool {
        matches!(self, Link::Down(Unavailable { reason: Reason::Closed, .. }))
    }
}

struct Shared {
    link: watch::Sender<Link>,
    /// How many times `link` was published, counted under the channel's
    /// lock. A service that read the link when this was `n` knows that what
    /// it read is still current while this is still `n`: one atomic load,
    /// where reading the link takes the channel's lock.
    publishes: AtomicU64,
    /// Its sender is owned by the supervisor task: `changed` fails once the
    /// task has finished.
    stopped: watch::Receiver<()>,
    /// The supervisor until it starts: when the first connection ends, or
    /// when the service is closed, whichever comes first
    /// (`Shared::start_supervisor`). A connection that never breaks costs
    /// no task: about 12 µs of every connect on one CPU, and the task's
    /// memory for the binding's life (bench/vs-rmcp).
    supervisor: Mutex<Option<supervisor::Start>>,
    /// Renews a session the server forgot (see [A forgotten
    /// session](self#a-forgotten-session)).
    renewal: Renewal,
}

/// Renews forgotten sessions, one at a time.
struct Renewal {
    dialer: Dialer,
    reports: Reports,
    /// Sessions renewed so far: a call that saw `n` before it was sent, and
    /// finds more than `n` when its session expired, was sent on a session
    /// already replaced and only needs sending again.
    renewed: AtomicU64,
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl Renewal {
    /// Renews the session on `connection` unless one was renewed since
    /// `seen`.
    async fn renew(&self, seen: u64, connection: &Connection) -> Result<(), Error> {
        let _one = self.one_at_a_time.lock().await;
        if self.renewed.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        tracing::info!(target: "mcp_stack::reconnect", "the server no longer knows the session; initializing again");
        let session = self.dialer.initialize(connection).await?;
        self.renewed.fetch_add(1, Ordering::Release);
        // No reader is not an error: nobody is watching.
        self.reports.send(Report::Renewed { session: Box::new(session) });
        Ok(())
    }
}

impl Shared {
    /// Publishes `link` unless the service was closed. Returns whether it did.
    fn publish(&self, link: Link) -> bool {
        self.link.send_if_modified(|current| {
            if current.is_closed() {
                return false;
            }
            *current = link;
            self.publishes.fetch_add(1, Ordering::Release);
            true
        })
    }

    /// Closes the service, and starts the supervisor if it has not started:
    /// it is what closes the connection and then reports that it stopped.
    fn close(self: &Arc<Self>) {
        self.publish(Link::Down(Unavailable {
            reason: Reason::Closed,
            class: FailureClass::Shutdown,
            message: "closed".into(),
        }));
        self.start_supervisor();
    }

    /// Starts the supervisor, once.
    fn start_supervisor(self: &Arc<Self>) {
        let start = self.supervisor.lock().expect("supervisor lock").take();
        if let Some(start) = start {
            start.run(self.clone());
        }
    }
}

/// Closes the service when its last handle is dropped, so that a forgotten
/// binding does not keep reconnecting (or keep a child process) forever.
struct LastHandle(Arc<Shared>);

impl Drop for LastHandle {
    fn drop(&mut self) {
        self.0.close();
    }
}

type Changed = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A service over whichever connection is live, replaced by a supervisor
/// task when it is lost. See the [module docs](self).
///
/// Cheap to clone; clones share the connection and the supervisor. A clone
/// starts with nothing reserved.
///
/// There is no `get_ref`/`into_inner`: the inner service changes over time;
/// [`Reconnect::connection`] gives the one live now.
pub struct Reconnect {
    /// The shared state, through the handle whose last drop closes it.
    life: Arc<LastHandle>,
    /// The connection last read from the link, with the publish count it
    /// was read at: later calls through this service (the binding keeps its
    /// stack between calls) reuse it while nothing was published since. A
    /// connection lost since stays here, closed, until the next
    /// `poll_ready` replaces it: a handle, not a live transport.
    live: Option<(u64, Connection)>,
    /// Whether `poll_ready` found `live` ready, for `call` to use.
    reserved: bool,
    /// Resolves when the supervisor next publishes after what this service
    /// last read. In a `Mutex` only to be `Sync`; it is reached through
    /// `&mut self`, never locked.
    changed: Mutex<Option<Changed>>,
}

/// A clone starts with nothing read: it is made for one call (tower's
/// `Retry` keeps one in each call's future, for a retry) more often than it
/// is called many times, and a connection held is a reference count taken
/// and given back.
impl Clone for Reconnect {
    fn clone(&self) -> Self {
        Reconnect { life: self.life.clone(), live: None, reserved: false, changed: Mutex::new(None) }
    }
}

impl fmt::Debug for Reconnect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reconnect").field("state", &self.state()).field("reserved", &self.reserved).finish()
    }
}

impl Reconnect {
    /// Serves over `first`, with a supervisor that replaces it through
    /// `dialer` under `policy` once it ends. Must be called within a tokio
    /// runtime. See
    /// [`ReconnectLayer`] to read every report from the first.
    pub fn new(first: Connection, dialer: Dialer, policy: ReconnectPolicy) -> Self {
        Self::spawn(first, dialer, policy, Reports::new())
    }

    fn spawn(first: Connection, dialer: Dialer, policy: ReconnectPolicy, reports: Reports) -> Self {
        let (link, _) = watch::channel(Link::Up(first.clone()));
        let (stopped_tx, stopped) = watch::channel(());
        let renewal = Renewal {
            dialer: dialer.clone(),
            reports: reports.clone(),
            renewed: AtomicU64::new(0),
            one_at_a_time: tokio::sync::Mutex::new(()),
        };
        let start = supervisor::Start::new(first.clone(), stopped_tx, dialer, policy, reports);
        let shared = Arc::new(Shared {
            link,
            publishes: AtomicU64::new(0),
            stopped,
            supervisor: Mutex::new(Some(start)),
            renewal,
        });
        let weak = Arc::downgrade(&shared);
        first.on_end(move || {
            if let Some(shared) = weak.upgrade() {
                shared.start_supervisor();
            }
        });
        Reconnect {
            life: Arc::new(LastHandle(shared)),
            live: None,
            reserved: false,
            changed: Mutex::new(None),
        }
    }

    /// A receiver of the reports made from now on (see the
    /// [module docs](self#timeline-of-one-loss)); [`ReconnectLayer::reports`]
    /// gives one that also sees those made before the service was built.
    pub fn reports(&self) -> broadcast::Receiver<Report> {
        self.life.0.renewal.reports.subscribe()
    }

    /// Where the service stands now.
    pub fn state(&self) -> LinkState {
        match &*self.life.0.link.borrow() {
            Link::Up(_) => LinkState::Connected,
            Link::Reconnecting { attempt } => LinkState::Reconnecting { attempt: *attempt },
            Link::Down(unavailable) => LinkState::Unavailable(unavailable.clone()),
        }
    }

    /// The connection published now, if any (it may have just been lost).
    pub fn connection(&self) -> Option<Connection> {
        match &*self.life.0.link.borrow() {
            Link::Up(connection) => Some(connection.clone()),
            _ => None,
        }
    }

    /// Closes the service for every clone: stops the supervisor, closes the
    /// current connection (pending calls end `shutdown`), and returns once
    /// that is done. Idempotent; later calls fail with `shutdown`.
    pub async fn close(&self) {
        self.life.0.close();
        let mut stopped = self.life.0.stopped.clone();
        // Fails once the supervisor's end of the channel is dropped, which is
        // the last thing it does.
        while stopped.changed().await.is_ok() {}
    }
}

impl Reconnect {
    /// Readiness for either request type: a live connection in `self.live`,
    /// reserved for `call`.
    fn poll_live(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let shared = &self.life.0;
        if let Some((read_at, connection)) = &mut self.live {
            // The common case: nothing was published since it was read, and
            // it is still open.
            if *read_at == shared.publishes.load(Ordering::Acquire)
                && matches!(connection.poll_ready(cx), Poll::Ready(Ok(())))
            {
                self.reserved = true;
                return Poll::Ready(Ok(()));
            }
            // Replaced, or lost since it was read: look again.
            self.live = None;
        }
        let changed = self.changed.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if changed.is_none() {
            // Read without subscribing: the published connection is live.
            let read_at = shared.publishes.load(Ordering::Acquire);
            if let Link::Up(published) = &*shared.link.borrow() {
                let mut connection = published.clone();
                if let Poll::Ready(Ok(())) = connection.poll_ready(cx) {
                    self.live = Some((read_at, connection));
                    self.reserved = true;
                    return Poll::Ready(Ok(()));
                }
            }
        }
        loop {
            if let Some(wait) = changed {
                ready!(wait.as_mut().poll(cx));
                *changed = None;
            }
            // Subscribed before reading, so that the wait below ends at the
            // first publish after this read, never one before it; the count
            // is read before the link, so that it is never newer than what
            // was read (at worst older, and the next call looks again).
            let mut link = shared.link.subscribe();
            let read_at = shared.publishes.load(Ordering::Acquire);
            let current = link.borrow_and_update().clone();
            match current {
                Link::Up(mut connection) => {
                    if let Poll::Ready(Ok(())) = connection.poll_ready(cx) {
                        self.live = Some((read_at, connection));
                        self.reserved = true;
                        return Poll::Ready(Ok(()));
                    }
                    // Lost, and the supervisor has not yet said so.
                }
                Link::Reconnecting { .. } => {}
                Link::Down(unavailable) => return Poll::Ready(Err(unavailable.to_error())),
            }
            *changed = Some(Box::pin(async move {
                let _ = link.changed().await;
            }));
        }
    }

    /// The connection `poll_ready` reserved, for one call.
    fn take_reserved(&mut self) -> &mut Connection {
        assert!(std::mem::take(&mut self.reserved), "Reconnect::call without a successful poll_ready");
        &mut self.live.as_mut().expect("a reserved connection is kept until the next poll_ready").1
    }

    /// Sends `req` on the reserved connection, renewing a forgotten session
    /// once.
    fn send(&mut self, req: McpRequest) -> ResponseFuture {
        let seen = self.life.0.renewal.renewed.load(Ordering::Acquire);
        let mut connection = self.take_reserved().clone();
        let first = connection.call(req.clone());
        let renew = Some(Renew { shared: self.life.0.clone(), connection, req, seen });
        ResponseFuture { first, renew, renewing: None }
    }
}

impl Service<McpRequest> for Reconnect {
    type Response = McpResponse;
    type Error = Error;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.poll_live(cx)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        self.send(req)
    }
}

/// What a call needs to renew its session and go again.
struct Renew {
    shared: Arc<Shared>,
    connection: Connection,
    req: McpRequest,
    seen: u64,
}

type Renewing = Pin<Box<dyn Future<Output = Result<McpResponse, Error>> + Send>>;

/// The response future of [`Reconnect`]: the connection's reply, or, when
/// the server forgot the session, the reply after renewing it once (see
/// [A forgotten session](self#a-forgotten-session)).
pub struct ResponseFuture {
    first: connection::ResponseFuture,
    renew: Option<Renew>,
    // Boxed: only a call whose session expired comes here.
    renewing: Option<Renewing>,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").field("renewing", &self.renewing.is_some()).finish_non_exhaustive()
    }
}

impl Future for ResponseFuture {
    type Output = Result<McpResponse, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(renewing) = &mut this.renewing {
            return renewing.as_mut().poll(cx);
        }
        match ready!(Pin::new(&mut this.first).poll(cx)) {
            Err(e) if crate::transport::is_session_expired(&e) => match this.renew.take() {
                Some(renew) => {
                    let mut renewing = renewing(renew);
                    let out = renewing.as_mut().poll(cx);
                    this.renewing = Some(renewing);
                    out
                }
                None => Poll::Ready(Err(e)),
            },
            out => {
                this.renew = None;
                Poll::Ready(out)
            }
        }
    }
}

#[cold]
fn renewing(renew: Renew) -> Renewing {
    Box::pin(async move {
        let Renew { shared, mut connection, req, seen } = renew;
        shared.renewal.renew(seen, &connection).await?;
        connection.call(req).await
    })
}

#[cfg(test)]
mod tests;
