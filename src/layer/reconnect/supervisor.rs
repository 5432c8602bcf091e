//! The task that notices a lost connection and replaces it.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tower::retry::backoff::Backoff;

use super::{Dialer, Link, Reason, ReconnectPolicy, Report, Shared, Unavailable};
use crate::connection::{Connection, ConnectionState};
use crate::error::{Error, FailureClass};

struct Supervisor {
    shared: Arc<Shared>,
    dialer: Dialer,
    policy: ReconnectPolicy,
    reports: super::Reports,
}

/// A supervisor not yet started: what its task will take, and the runtime
/// to start it on (its start may come from a thread outside the runtime:
/// the drop of the service's last handle, or a connection's end).
pub(super) struct Start {
    first: Connection,
    stopped: watch::Sender<()>,
    dialer: Dialer,
    policy: ReconnectPolicy,
    reports: super::Reports,
    runtime: tokio::runtime::Handle,
}

impl Start {
    /// Must be called within a tokio runtime.
    pub(super) fn new(
        first: Connection,
        stopped: watch::Sender<()>,
        dialer: Dialer,
        policy: ReconnectPolicy,
        reports: super::Reports,
    ) -> Self {
        let runtime = tokio::runtime::Handle::current();
        Start { first, stopped, dialer, policy, reports, runtime }
    }

    /// Spawns the supervisor's task over `shared`.
    pub(super) fn run(self, shared: Arc<Shared>) {
        let Start { first, stopped, dialer, policy, reports, runtime } = self;
        let supervisor = Supervisor { shared, dialer, policy, reports };
        runtime.spawn(supervisor.run(first, stopped));
    }
}

impl Supervisor {
    /// Runs until the service is closed, then closes the last connection.
    /// `_stopped` is dropped last: that is what `Reconnect::close` awaits.
    ///
    /// The redial and the final close are boxed: inline, their futures (a
    /// whole dial, a transport's close) made this task 6.9 KiB, held by
    /// every idle binding for its life; boxed, they are allocated only
    /// when a connection is lost or closed (bench/vs-rmcp).
    async fn run(self, mut connection: Connection, _stopped: watch::Sender<()>) {
        let mut link = self.shared.link.subscribe();
        let closing = async move {
            let _ = link.wait_for(Link::is_closed).await;
        };
        tokio::pin!(closing);
        loop {
            // Closing wins a tie: nothing is redialed after a close.
            let (class, message) = tokio::select! {
                biased;
                () = &mut closing => break,
                lost = lost(&connection) => lost,
            };
            // Its transport is released now, not when the last handle to it
            // goes: services keep the connection they last read (see
            // `Reconnect::live`), and a lost connection may still be half
            // open (a stdio child that stopped writing). Closed beside the
            // redial, which need not wait out a child's grace period.
            let lost_connection = connection.clone();
            tokio::spawn(async move { lost_connection.close().await });
            let restored = tokio::select! {
                biased;
                () = &mut closing => break,
                restored = Box::pin(self.restore(class, message)) => restored,
            };
            match restored {
                Some(next) => connection = next,
                None => {
                    // Unavailable for good: keep the dead connection until
                    // closed, so that closing still releases its transport.
                    closing.as_mut().await;
                    break;
                }
            }
        }
        Box::pin(connection.close()).await;
    }

    /// Replaces the connection lost with `class`/`message`, or gives up.
    async fn restore(&self, class: FailureClass, message: String) -> Option<Connection> {
        if !self.policy.enabled {
            self.report(Report::Lost { class, message: message.clone(), attempt: 0, retry_in: None });
            self.shared.publish(Link::Down(Unavailable { reason: Reason::Disabled, class, message }));
            return None;
        }
        let retry = self.policy.retry.resolved();
        let give_up_at = Instant::now() + retry.max_total;
        let mut backoff = retry.backoff();
        self.report(Report::Lost { class, message, attempt: 0, retry_in: Some(Duration::ZERO) });
        self.shared.publish(Link::Reconnecting { attempt: 1 });
        let mut attempt = 1;
        loop {
            let left = give_up_at.saturating_duration_since(Instant::now());
            let dialed = tokio::time::timeout(left, self.dialer.dial()).await.unwrap_or_else(|_| {
                Err(Error::new(
                    FailureClass::StartupTimeout,
                    format!(
                        "reconnect attempt {attempt} ran past the policy's total of {:?}",
                        retry.max_total
                    ),
                ))
            });
            let error = match dialed {
                Ok((connection, session)) => {
                    self.report(Report::Restored { session: Box::new(session), attempts: attempt });
                    self.shared.publish(Link::Up(connection.clone()));
                    return Some(connection);
                }
                Err(error) => error,
            };
            // No delay is started that would end past the total.
            let next = (attempt < retry.attempts)
                .then(|| backoff.next_backoff())
                .filter(|delay| delay.deadline() < give_up_at);
            let retry_in =
                next.as_ref().map(|delay| delay.deadline().saturating_duration_since(Instant::now()));
            let (class, message) = (error.class(), error.message().to_string());
            self.report(Report::Lost { class, message: message.clone(), attempt, retry_in });
            let Some(delay) = next else {
                let reason = Reason::Exhausted { attempts: attempt };
                self.shared.publish(Link::Down(Unavailable { reason, class, message }));
                return None;
            };
            attempt += 1;
            self.shared.publish(Link::Reconnecting { attempt });
            delay.await;
        }
    }

    fn report(&self, report: Report) {
        tracing::debug!(target: "mcp_stack::reconnect", ?report, "reconnect");
        self.reports.send(report);
    }
}

/// Waits for `connection` to end; returns why.
async fn lost(connection: &Connection) -> (FailureClass, String) {
    let mut state = connection.watch_state();
    let closed = state.wait_for(|s| *s != ConnectionState::Open).await.map(|s| s.clone());
    match closed {
        Ok(ConnectionState::Closed { class, message }) => (class, message),
        _ => (FailureClass::TransportClosed, "the connection ended".into()),
    }
}
