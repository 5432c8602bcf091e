//! `Reconnect` alone, over in-memory servers, on the paused clock.

use serde_json::json;
use std::future::poll_fn;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};
use tokio_test::{assert_pending, assert_ready_err};
use tower::ServiceExt;
use tower_layer::Layer;

use super::*;
use crate::config::RetryPolicy;
use crate::connection::NoInbound;
use crate::protocol::{Message, Response};
use crate::transport::memory::MemoryFactory;
use crate::transport::{ConnectConfig, Inbound, Transport};

const MS: Duration = Duration::from_millis(1);

/// A server that can refuse connects, be killed, and counts what it sees.
struct Control {
    /// Connects still to refuse.
    refuse: AtomicU32,
    /// Connects asked for, refused ones included.
    dials: AtomicU32,
    /// `tools/call` requests received, over every connection.
    tool_calls: AtomicU32,
    /// Bumping it ends every live connection.
    kill: watch::Sender<u64>,
    /// Live connections.
    live: AtomicU32,
}

impl Control {
    fn new(refuse: u32) -> Arc<Self> {
        Arc::new(Control {
            refuse: AtomicU32::new(refuse),
            dials: AtomicU32::new(0),
            tool_calls: AtomicU32::new(0),
            kill: watch::channel(0).0,
            live: AtomicU32::new(0),
        })
    }

    fn kill(&self) {
        self.kill.send_modify(|n| *n += 1);
    }

    fn dials(&self) -> u32 {
        self.dials.load(Ordering::SeqCst)
    }

    fn factory(self: &Arc<Self>) -> MemoryFactory {
        let control = self.clone();
        MemoryFactory::new("t", move |transport| {
            control.dials.fetch_add(1, Ordering::SeqCst);
            let refused =
                control.refuse.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
            if refused {
                return Err(Error::new(FailureClass::TransportClosed, "connection refused"));
            }
            tokio::spawn(serve(transport, control.clone()));
            Ok(())
        })
    }
}

/// Answers `initialize`, `ping` and `tools/call` (`hang` never answers, `die`
/// drops the connection on receipt, `mute` stops writing for good but keeps
/// reading) until killed or the client goes.
async fn serve(transport: Transport, control: Arc<Control>) {
    let Transport { sender, mut receiver } = transport;
    let mut sender = Some(sender);
    let mut kill = control.kill.subscribe();
    control.live.fetch_add(1, Ordering::SeqCst);
    loop {
        let frame = tokio::select! {
            _ = kill.changed() => break,
            frame = receiver.recv() => frame,
        };
        let Ok(Some(Inbound::Frame(text))) = frame else { break };
        let Ok(Message::Request(request)) = Message::parse(&text) else { continue };
        let result = match request.method.as_str() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "t", "version": "1"},
            }),
            "tools/call" => {
                control.tool_calls.fetch_add(1, Ordering::SeqCst);
                match request.params.as_ref().and_then(|p| p["name"].as_str()) {
                    Some("die") => break,
                    Some("hang") => continue,
                    Some("mute") => {
                        sender = None;
                        continue;
                    }
                    _ => json!({"content": []}),
                }
            }
            _ => json!({}),
        };
        if let Some(sender) = &sender {
            let _ = sender.send(Message::Response(Response::result(request.id, result)).to_json()).await;
        }
    }
    control.live.fetch_sub(1, Ordering::SeqCst);
}

type Reports = Arc<Mutex<Vec<(Instant, Report)>>>;

async fn start(control: &Arc<Control>, policy: ReconnectPolicy) -> (Reconnect, Reports) {
    let dialer = Dialer::new(Arc::new(control.factory()), ConnectConfig::new("t"), Arc::new(NoInbound))
        .timeout(Duration::from_secs(5));
    let (first, _session) = dialer.dial().await.expect("first dial");
    let reports = Reports::default();
    let sink = reports.clone();
    let layer = ReconnectLayer::new(dialer, policy);
    let mut channel = layer.reports();
    // Recorded as they arrive: the reader wakes at the instant of the send
    // (the paused clock does not move while a task is ready to run).
    tokio::spawn(async move {
        while let Ok(report) = channel.recv().await {
            sink.lock().unwrap().push((Instant::now(), report));
        }
    });
    (layer.layer(first), reports)
}

fn policy(attempts: u32, base: Duration, max: Duration) -> ReconnectPolicy {
    ReconnectPolicy::default().with_retry(
        RetryPolicy::default()
            .with_attempts(attempts)
            .with_base_delay(base)
            .with_max_delay(max)
            .with_jitter(0.0),
    )
}

/// Lets the other tasks run until `done` holds, without moving the clock.
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if done() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("never happened: {what}");
}

/// Kills the server's connections and waits until the supervisor has seen
/// the loss (without moving the clock).
async fn kill(control: &Control, reconnect: &Reconnect) {
    control.kill();
    until("the loss is seen", || reconnect.state() != LinkState::Connected).await;
}

/// `(offset from t0, attempt, retry_in)` of every `Lost`, and
/// `(offset, attempts)` of every `Restored`, as text for one comparison.
fn timeline(reports: &Reports, t0: Instant) -> Vec<String> {
    reports
        .lock()
        .unwrap()
        .iter()
        .map(|(at, report)| match report {
            Report::Lost { attempt, retry_in, .. } => {
                format!("{:?} lost {attempt} retry_in {retry_in:?}", *at - t0)
            }
            Report::Restored { attempts, .. } => format!("{:?} restored after {attempts}", *at - t0),
            Report::Renewed { .. } => format!("{:?} renewed", *at - t0),
        })
        .collect()
}

/// Closes the service, failing the test if the close never returns: on the
/// paused clock an idle runtime jumps to the deadline at once, so a close
/// that waits for a supervisor that never stops fails here instead of
/// hanging the test.
async fn close(reconnect: &Reconnect) {
    within("the close returns once the supervisor has stopped", reconnect.close()).await;
}

/// Awaits `wait`, failing the test if it never ends: on the paused clock an
/// idle runtime jumps to the hour at once, where a bare `.await` on what
/// never comes would hang the suite.
async fn within<F: std::future::Future>(what: &str, wait: F) -> F::Output {
    match tokio::time::timeout(Duration::from_secs(3600), wait).await {
        Ok(out) => out,
        Err(_) => panic!("never happened: {what}"),
    }
}

fn ping() -> McpRequest {
    McpRequest::new("ping", Default::default())
}

fn tool(name: &str) -> McpRequest {
    McpRequest::with_value("tools/call", json!({ "name": name }))
}

async fn ready(svc: &mut Reconnect) -> Result<(), Error> {
    poll_fn(|cx| svc.poll_ready(cx)).await
}

fn unavailable(error: &Error) -> &Unavailable {
    std::error::Error::source(error)
        .and_then(|s| s.downcast_ref::<Unavailable>())
        .expect("an Unavailable source")
}

#[tokio::test(start_paused = true)]
async fn serves_over_the_live_connection() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, ReconnectPolicy::default()).await;
    assert_eq!(reconnect.state(), LinkState::Connected);
    reconnect.clone().oneshot(ping()).await.unwrap();
    reconnect.clone().oneshot(tool("echo")).await.unwrap();
    assert!(reports.lock().unwrap().is_empty());
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn waits_while_reconnecting_then_serves() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, policy(5, 1000 * MS, 5000 * MS)).await;
    control.refuse.store(1, Ordering::SeqCst);
    let t0 = Instant::now();
    control.kill();
    until("attempt 1 refused", || reports.lock().unwrap().len() == 2).await;
    assert_eq!(reconnect.state(), LinkState::Reconnecting { attempt: 2 });

    let mut early = reconnect.clone();
    let mut waiting = tokio_test::task::spawn(());
    assert_pending!(waiting.enter(|cx, _| early.poll_ready(cx)));
    sleep_until(t0 + 999 * MS).await;
    assert!(!waiting.is_woken());
    assert_pending!(waiting.enter(|cx, _| early.poll_ready(cx)));

    let mut svc = reconnect.clone();
    ready(&mut svc).await.unwrap();
    assert_eq!(Instant::now(), t0 + 1000 * MS, "ready as soon as attempt 2 succeeds");
    assert!(waiting.is_woken(), "the supervisor's publish wakes every waiting caller");
    svc.call(ping()).await.unwrap();
    assert_eq!(
        timeline(&reports, t0),
        ["0ns lost 0 retry_in Some(0ns)", "0ns lost 1 retry_in Some(1s)", "1s restored after 2"]
    );
    assert_eq!(reconnect.state(), LinkState::Connected);
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn refused_connects_climb_with_the_policys_delays() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, policy(5, 100 * MS, 250 * MS)).await;
    control.refuse.store(3, Ordering::SeqCst);
    let t0 = Instant::now();
    control.kill();
    until("attempt 1 refused", || reports.lock().unwrap().len() == 2).await;

    // The attempt being made or waited for, at points between the attempts
    // (at 0, 100, 300 and 550 ms).
    for (at, attempt) in [(50, 2), (150, 3), (400, 4)] {
        sleep_until(t0 + at * MS).await;
        assert_eq!(reconnect.state(), LinkState::Reconnecting { attempt }, "at {at} ms");
    }
    ready(&mut reconnect.clone()).await.unwrap();
    assert_eq!(Instant::now(), t0 + 550 * MS);
    assert_eq!(
        timeline(&reports, t0),
        [
            "0ns lost 0 retry_in Some(0ns)",
            "0ns lost 1 retry_in Some(100ms)",
            "100ms lost 2 retry_in Some(200ms)",
            "300ms lost 3 retry_in Some(250ms)",
            "550ms restored after 4",
        ]
    );
    assert_eq!(control.dials(), 1 + 4);
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn jittered_delays_stay_within_their_bounds() {
    let control = Control::new(0);
    let p = policy(4, 100 * MS, 1000 * MS);
    let p = p.with_retry(p.retry().with_jitter(0.5));
    let (reconnect, reports) = start(&control, p).await;
    control.refuse.store(u32::MAX, Ordering::SeqCst);
    kill(&control, &reconnect).await;
    let err = ready(&mut reconnect.clone()).await.unwrap_err();
    assert_eq!(unavailable(&err).reason, Reason::Exhausted { attempts: 4 });
    let delays: Vec<Option<Duration>> = reports
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(_, r)| match r {
            Report::Lost { attempt: 1.., retry_in, .. } => Some(*retry_in),
            _ => None,
        })
        .collect();
    assert_eq!(delays.len(), 4);
    for (delay, base) in delays.iter().zip([100 * MS, 200 * MS, 400 * MS]) {
        let delay = delay.expect("a next attempt");
        assert!(base <= delay && delay <= base + base / 2, "{delay:?} for base {base:?}");
    }
    assert_eq!(delays[3], None, "the last report says there is no next attempt");
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn disabled_stays_unavailable_until_closed() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, ReconnectPolicy::never()).await;
    let mut svc = reconnect.clone();
    kill(&control, &reconnect).await;
    let err = ready(&mut svc).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
    assert_eq!(unavailable(&err).reason, Reason::Disabled);
    assert_eq!(unavailable(&err).class, FailureClass::TransportClosed);
    let reports: Vec<_> = reports.lock().unwrap().iter().map(|(_, r)| r.clone()).collect();
    assert!(matches!(reports[..], [Report::Lost { attempt: 0, retry_in: None, .. }]), "{reports:?}");

    // Nothing is redialed, however long it stays that way; calls fail fast.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(control.dials(), 1);
    let mut fresh = tokio_test::task::spawn(());
    assert_eq!(
        assert_ready_err!(fresh.enter(|cx, _| svc.poll_ready(cx))).class(),
        FailureClass::TransportClosed
    );

    close(&reconnect).await;
    let err = ready(&mut svc).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Shutdown);
    assert_eq!(reconnect.state(), LinkState::Unavailable(unavailable(&err).clone()));
    assert_eq!(control.dials(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_is_final_and_wakes_the_waiting() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, policy(3, 100 * MS, 1000 * MS)).await;
    control.refuse.store(u32::MAX, Ordering::SeqCst);
    let t0 = Instant::now();
    kill(&control, &reconnect).await;
    let err = ready(&mut reconnect.clone()).await.unwrap_err();
    assert_eq!(Instant::now(), t0 + 300 * MS);
    assert_eq!(err.class(), FailureClass::TransportClosed);
    let cause = unavailable(&err);
    assert_eq!(cause.reason, Reason::Exhausted { attempts: 3 });
    assert_eq!(cause.message, "connection refused");
    assert_eq!(
        timeline(&reports, t0),
        [
            "0ns lost 0 retry_in Some(0ns)",
            "0ns lost 1 retry_in Some(100ms)",
            "100ms lost 2 retry_in Some(200ms)",
            "300ms lost 3 retry_in None",
        ]
    );
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(control.dials(), 1 + 3);
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn max_total_ends_the_loop_before_a_delay_would_pass_it() {
    let control = Control::new(0);
    let mut p = policy(10, 100 * MS, 10_000 * MS);
    p.retry.max_total = 350 * MS;
    let (reconnect, reports) = start(&control, p).await;
    control.refuse.store(u32::MAX, Ordering::SeqCst);
    let t0 = Instant::now();
    kill(&control, &reconnect).await;
    let err = ready(&mut reconnect.clone()).await.unwrap_err();
    // Attempts at 0, 100 and 300 ms; the next delay (400 ms) would end at
    // 700 ms, past the 350 ms total, so the loop ends at 300 ms.
    assert_eq!(Instant::now(), t0 + 300 * MS);
    assert_eq!(unavailable(&err).reason, Reason::Exhausted { attempts: 3 });
    assert_eq!(timeline(&reports, t0).last().unwrap(), "300ms lost 3 retry_in None");
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn a_call_lost_in_flight_ends_indeterminate_and_is_not_replayed() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, policy(5, 100 * MS, 1000 * MS)).await;
    let err = reconnect.clone().oneshot(tool("die")).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Indeterminate);
    until("restored", || reports.lock().unwrap().iter().any(|(_, r)| matches!(r, Report::Restored { .. })))
        .await;
    reconnect.clone().oneshot(tool("echo")).await.unwrap();
    // `die` once, `echo` once: nothing was sent again.
    assert_eq!(control.tool_calls.load(Ordering::SeqCst), 2);
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn a_reserved_connection_lost_before_the_call_does_not_send_it() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, ReconnectPolicy::never()).await;
    let mut svc = reconnect.clone();
    ready(&mut svc).await.unwrap();
    let connection = reconnect.connection().unwrap();
    control.kill();
    until("connection lost", || connection.state() != crate::connection::ConnectionState::Open).await;
    let err = svc.call(tool("echo")).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
    assert_eq!(control.tool_calls.load(Ordering::SeqCst), 0);
    close(&reconnect).await;
}

/// A connection that never breaks costs no supervisor task: it starts at
/// the connection's end, and follows every connection after it.
#[tokio::test(start_paused = true)]
async fn the_supervisor_starts_when_the_first_connection_ends() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, policy(5, 100 * MS, 1000 * MS)).await;
    let tasks = || tokio::runtime::Handle::current().metrics().num_alive_tasks();
    let idle = tasks();
    let mut svc = reconnect.clone();
    for _ in 0..3 {
        ready(&mut svc).await.unwrap();
        svc.call(ping()).await.unwrap();
    }
    assert!(reconnect.life.0.supervisor.lock().unwrap().is_some(), "not started by calls");
    assert_eq!(tasks(), idle);

    // Nothing refuses: each loss is repaired within a few turns of the
    // scheduler, on the paused clock.
    control.kill();
    until("reconnected", || control.dials() == 2 && reconnect.state() == LinkState::Connected).await;
    assert!(reconnect.life.0.supervisor.lock().unwrap().is_none(), "started by the loss");
    // The started supervisor watches the second connection too.
    control.kill();
    until("reconnected again", || control.dials() == 3 && reconnect.state() == LinkState::Connected).await;
    assert_eq!(timeline(&reports, Instant::now()).len(), 4, "two losses, two restores");
    close(&reconnect).await;
}

#[tokio::test(start_paused = true)]
async fn close_ends_pending_calls_with_shutdown_and_stops_reconnecting() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, policy(5, 100 * MS, 1000 * MS)).await;
    let pending = tokio::spawn(reconnect.clone().oneshot(tool("hang")));
    until("the call reached the server", || control.tool_calls.load(Ordering::SeqCst) == 1).await;

    close(&reconnect).await;
    let ended = within("the call ended", pending).await;
    assert_eq!(ended.unwrap().unwrap_err().class(), FailureClass::Shutdown);
    until("the server saw the close", || control.live.load(Ordering::SeqCst) == 0).await;
    assert_eq!(ready(&mut reconnect.clone()).await.unwrap_err().class(), FailureClass::Shutdown);
    close(&reconnect).await; // idempotent
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(control.dials(), 1, "nothing was redialed after the close");
}

#[tokio::test(start_paused = true)]
async fn close_during_a_backoff_cuts_it_short() {
    let control = Control::new(0);
    let (reconnect, reports) = start(&control, policy(5, 10_000 * MS, 10_000 * MS)).await;
    control.refuse.store(u32::MAX, Ordering::SeqCst);
    control.kill();
    until("attempt 1 refused", || reports.lock().unwrap().len() == 2).await;
    let waiting = tokio::spawn(ready_owned(reconnect.clone()));
    let t0 = Instant::now();
    close(&reconnect).await;
    assert_eq!(Instant::now(), t0, "close did not wait for the backoff");
    assert_eq!(waiting.await.unwrap().unwrap_err().class(), FailureClass::Shutdown);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(control.dials(), 2);
}

async fn ready_owned(mut svc: Reconnect) -> Result<(), Error> {
    ready(&mut svc).await
}

#[tokio::test(start_paused = true)]
async fn dropping_every_handle_closes_the_connection() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, ReconnectPolicy::default()).await;
    assert_eq!(control.live.load(Ordering::SeqCst), 1);
    drop(reconnect);
    until("the server saw the close", || control.live.load(Ordering::SeqCst) == 0).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(control.dials(), 1, "and nothing was redialed");
}

/// Once the supervisor runs (after a loss), it is what closes the live
/// connection when the last handle goes, and then it ends.
#[tokio::test(start_paused = true)]
async fn dropping_every_handle_after_a_reconnect_closes_the_new_connection_and_ends_the_supervisor() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, policy(5, 100 * MS, 1000 * MS)).await;
    control.kill();
    until("reconnected", || control.dials() == 2 && reconnect.state() == LinkState::Connected).await;
    assert!(reconnect.life.0.supervisor.lock().unwrap().is_none(), "the supervisor runs");
    until("only the new connection is live", || control.live.load(Ordering::SeqCst) == 1).await;
    let mut stopped = reconnect.life.0.stopped.clone();

    drop(reconnect);
    until("the server saw the close", || control.live.load(Ordering::SeqCst) == 0).await;
    within("the supervisor ended", async { while stopped.changed().await.is_ok() {} }).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(control.dials(), 2, "and nothing was redialed");
}

/// A service called many times (as the binding keeps its stack between
/// calls) reuses the connection it read; it must still follow the link.
#[tokio::test(start_paused = true)]
async fn a_reused_service_follows_a_reconnect() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, policy(5, 100 * MS, 1000 * MS)).await;
    let mut svc = reconnect.clone();
    ready(&mut svc).await.unwrap();
    svc.call(ping()).await.unwrap();
    let first = reconnect.connection().unwrap();

    control.kill();
    until("reconnected", || control.dials() == 2 && reconnect.state() == LinkState::Connected).await;
    ready(&mut svc).await.unwrap();
    svc.call(tool("echo")).await.unwrap();
    assert_eq!(control.tool_calls.load(Ordering::SeqCst), 1);
    assert_ne!(first.state(), crate::connection::ConnectionState::Open);
    close(&reconnect).await;
}

/// What a service read is current only until the next publish: once the
/// service is closed, a call through a service that read the connection
/// before is refused, even while that connection is still open.
#[tokio::test(start_paused = true)]
async fn a_reused_service_sees_a_close_before_its_connection_ends() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, ReconnectPolicy::default()).await;
    let mut svc = reconnect.clone();
    ready(&mut svc).await.unwrap();
    svc.call(ping()).await.unwrap();

    // Published, but the supervisor has not run yet: the connection is open.
    reconnect.life.0.close();
    assert_eq!(reconnect.connection().map(|c| c.state()), None);
    let open = svc.live.as_ref().map(|(_, connection)| connection.state());
    assert_eq!(open, Some(crate::connection::ConnectionState::Open));
    assert_eq!(ready(&mut svc).await.unwrap_err().class(), FailureClass::Shutdown);
    assert_eq!(control.tool_calls.load(Ordering::SeqCst), 0);
    close(&reconnect).await;
}

/// A lost connection's transport is closed when the loss is seen, not when
/// the last handle to it goes: a service that keeps the connection it read
/// (as the binding's kept stack does) must not keep a half-open transport,
/// or a stdio child, alive.
#[tokio::test(start_paused = true)]
async fn a_lost_connection_is_closed_though_a_service_still_holds_it() {
    let control = Control::new(0);
    let (reconnect, _reports) = start(&control, policy(5, 100 * MS, 1000 * MS)).await;
    let mut svc = reconnect.clone();
    ready(&mut svc).await.unwrap();
    // The server stops writing: the client sees its connection end, while
    // the server still reads, until the client closes its side.
    assert_eq!(svc.call(tool("mute")).await.unwrap_err().class(), FailureClass::Indeterminate);
    until("reconnected", || control.dials() == 2 && reconnect.state() == LinkState::Connected).await;
    assert!(svc.live.is_some(), "the service still holds the lost connection");
    until("the lost connection's transport was closed", || control.live.load(Ordering::SeqCst) == 1).await;
    close(&reconnect).await;
}
