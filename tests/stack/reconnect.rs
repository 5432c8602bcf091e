//! Reconnecting, end to end through a real binding: in-memory servers that
//! refuse connects or die mid-call (on the paused clock), and a stdio server
//! process killed mid-call.

use crate::support::wire;
use mcp_stack::layer::deadline::Elapsed;
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use mcp_stack::McpRequest;
use mcp_stack::{
    handlers::Handlers, Binding, CallOpts, Definition, Error, Event, FailureClass, ReconnectPolicy,
    RetryPolicy, State,
};
use serde_json::{json, Map};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

const MS: Duration = Duration::from_millis(1);

/// A server that can refuse connects, be killed, change its version, and
/// counts what it sees across all its connections.
struct Control {
    refuse: AtomicU32,
    dials: AtomicU32,
    tool_calls: AtomicU32,
    tool_lists: AtomicU32,
    /// `tools/list` requests still to answer by dropping the connection.
    die_on_list: AtomicU32,
    /// `tools/list` requests still to leave unanswered.
    hang_on_list: AtomicU32,
    /// Whether `tools/list` offers a second tool, `reverse`.
    more_tools: AtomicBool,
    version: Mutex<String>,
    kill: watch::Sender<u64>,
    /// `server/discover` requests seen.
    discovers: AtomicU32,
    /// Whether `server/discover` goes unanswered (a silent legacy server);
    /// otherwise it is refused as a legacy server refuses it.
    silent_discover: AtomicBool,
    /// Whether `echo` carries a seed 004 declaration with a bad field.
    bad_declaration: AtomicBool,
}

impl Control {
    fn new() -> Arc<Self> {
        Arc::new(Control {
            refuse: AtomicU32::new(0),
            dials: AtomicU32::new(0),
            tool_calls: AtomicU32::new(0),
            tool_lists: AtomicU32::new(0),
            die_on_list: AtomicU32::new(0),
            hang_on_list: AtomicU32::new(0),
            more_tools: AtomicBool::new(false),
            version: Mutex::new("1".into()),
            kill: watch::channel(0).0,
            discovers: AtomicU32::new(0),
            silent_discover: AtomicBool::new(false),
            bad_declaration: AtomicBool::new(false),
        })
    }

    fn factory(self: &Arc<Self>) -> MemoryFactory {
        let control = self.clone();
        MemoryFactory::new("flaky", move |transport| {
            control.dials.fetch_add(1, Ordering::SeqCst);
            if control.refuse.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
                return Err(Error::new(FailureClass::TransportClosed, "connection refused"));
            }
            tokio::spawn(serve(transport, control.clone()));
            Ok(())
        })
    }

    fn kill(&self) {
        self.kill.send_modify(|n| *n += 1);
    }

    fn dials(&self) -> u32 {
        self.dials.load(Ordering::SeqCst)
    }

    fn tool_calls(&self) -> u32 {
        self.tool_calls.load(Ordering::SeqCst)
    }
}

/// `tools/call`: `die` drops the connection on receipt, `hang` never
/// answers, anything else echoes its name.
async fn serve(transport: Transport, control: Arc<Control>) {
    let Transport { sender, mut receiver } = transport;
    let mut kill = control.kill.subscribe();
    loop {
        let frame = tokio::select! {
            _ = kill.changed() => return,
            frame = receiver.recv() => frame,
        };
        let Ok(Some(Inbound::Frame(text))) = frame else { return };
        let Some(request) = wire::request(&text) else { continue };
        let result = match request.method.as_str() {
            "server/discover" => {
                control.discovers.fetch_add(1, Ordering::SeqCst);
                if control.silent_discover.load(Ordering::SeqCst) {
                    continue;
                }
                let _ = sender.send(wire::error(&request.id, -32601, "Method not found")).await;
                continue;
            }
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "flaky", "version": *control.version.lock().unwrap()},
            }),
            "tools/list" => {
                control.tool_lists.fetch_add(1, Ordering::SeqCst);
                let die = control
                    .die_on_list
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
                if die.is_ok() {
                    return;
                }
                let hang = control
                    .hang_on_list
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
                if hang.is_ok() {
                    continue;
                }
                let mut tools = vec![json!({"name": "echo", "inputSchema": {"type": "object"}})];
                if control.bad_declaration.load(Ordering::SeqCst) {
                    tools[0]["_meta"] = json!({"agentfootprint": {"resultKind": "text", "gates": "maybe"}});
                }
                if control.more_tools.load(Ordering::SeqCst) {
                    tools.push(json!({"name": "reverse", "inputSchema": {"type": "object"}}));
                }
                json!({ "tools": tools })
            }
            "tools/call" => {
                control.tool_calls.fetch_add(1, Ordering::SeqCst);
                match request.params.as_ref().and_then(|p| p["name"].as_str()) {
                    Some("die") => return,
                    Some("hang") => continue,
                    name => json!({"content": [{"type": "text", "text": name.unwrap_or_default()}]}),
                }
            }
            _ => json!({}),
        };
        let _ = sender.send(wire::result(&request.id, result)).await;
    }
}

/// Every event with the (tokio) instant it reached the handler.
#[derive(Clone, Default)]
struct Recorded(Arc<Mutex<Vec<(Instant, Event)>>>);

impl Recorded {
    fn handlers(&self) -> Handlers {
        let sink = self.0.clone();
        Handlers::default().with_events(move |event| sink.lock().unwrap().push((Instant::now(), event)))
    }

    /// How many `ConnectionRestored` events have arrived.
    fn restores(&self) -> usize {
        self.0.lock().unwrap().iter().filter(|(_, e)| matches!(e, Event::ConnectionRestored { .. })).count()
    }

    /// How many lifecycle events (those [`Recorded::lifecycle`] shows) have
    /// arrived; catalog events are not counted.
    fn len(&self) -> usize {
        self.lifecycle(None).len()
    }

    /// The lifecycle events, as text without timestamps, with their offset
    /// from `t0` when given.
    fn lifecycle(&self, t0: Option<Instant>) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(at, event)| {
                let text = match event {
                    Event::StateChanged { from, to, .. } => format!("state {from} -> {to}"),
                    Event::ConnectionLost { class, retrying, attempt, retry_in, adopted, .. } => {
                        format!("lost {class} attempt {attempt} retrying {retrying} in {retry_in:?} adopted {adopted}")
                    }
                    Event::ConnectionRestored { server, drift, attempts, adopted, generation, .. } => {
                        format!(
                            "restored {} v{} after {attempts} drift {drift:?} adopted {adopted} generation {generation}",
                            server.name, server.version
                        )
                    }
                    _ => return None,
                };
                Some(match t0 {
                    Some(t0) => format!("{:?} {text}", at.saturating_duration_since(t0)),
                    None => text,
                })
            })
            .collect()
    }
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

async fn bind(control: &Arc<Control>, reconnect: ReconnectPolicy, recorded: &Recorded) -> Binding {
    let mut definition = Definition::new("flaky", control.factory());
    definition = definition.with_reconnect(reconnect);
    Binding::connect(definition, recorded.handlers()).await.expect("connect")
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

/// Kills the server's connections and waits until the binding has seen it.
async fn kill(control: &Control, binding: &Binding) -> Instant {
    let t0 = Instant::now();
    control.kill();
    until("the loss is seen", || binding.status().state != State::Ready).await;
    t0
}

async fn echo(binding: &Binding) -> Result<String, Error> {
    let result = binding.call_tool("echo", json!({}), CallOpts::default()).await?;
    Ok(result.content[0].as_text().unwrap_or_default().to_string())
}

#[tokio::test(start_paused = true)]
async fn server_dies_mid_call_the_call_is_indeterminate_and_the_binding_reconnects() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, ReconnectPolicy::default(), &recorded).await;
    // The server that comes back is a newer version of itself.
    *control.version.lock().unwrap() = "2".into();

    let err = binding.call_tool("die", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Indeterminate, "{err}");
    assert_eq!(err.op(), "call_tool");
    // The next call waits for the reconnect, then succeeds.
    assert_eq!(echo(&binding).await.unwrap(), "echo");
    // `die` reached the server once and was never replayed.
    assert_eq!(control.tool_calls(), 2);
    assert_eq!(control.dials(), 2);

    // The restore is reported once the catalog has looked again (calls
    // did not wait for that).
    until("restored", || binding.status().state == State::Ready).await;
    let status = binding.status();
    assert_eq!(status.state, State::Ready);
    assert_eq!(status.reconnect_attempt, 0);
    assert_eq!(status.server.version, "2");
    assert_eq!(status.failure.as_ref().unwrap().class, FailureClass::TransportClosed);
    assert_eq!(binding.session().server.version, "1", "session() is the first handshake's");

    binding.close().await;
    until("all events", || recorded.len() == 9).await;
    assert_eq!(
        recorded.lifecycle(None),
        [
            "state configured -> starting",
            "state starting -> discovering",
            "state discovering -> ready",
            "lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
            "state ready -> reconnecting",
            r#"restored flaky v2 after 1 drift Some("version \"1\" -> \"2\"") adopted 1 generation 1"#,
            "state reconnecting -> ready",
            "state ready -> closing",
            "state closing -> closed",
        ]
    );
}

/// Binds, then has the server come back offering one more tool (and as
/// `version`, when given), and waits for the restore.
async fn comes_back_changed(control: &Arc<Control>, recorded: &Recorded, version: Option<&str>) -> Binding {
    let binding = bind(control, ReconnectPolicy::default(), recorded).await;
    if let Some(version) = version {
        *control.version.lock().unwrap() = version.into();
    }
    control.more_tools.store(true, Ordering::SeqCst);
    // The first attempt dials at once and succeeds: the whole reconnect can
    // happen between two looks at the state, so count the restores.
    control.kill();
    until("restored", || recorded.restores() == 1).await;
    binding
}

/// A server that comes back offering something else: the restore reports
/// the candidate discovered over the new connection, and the adopted
/// generation stays in force until the host adopts.
#[tokio::test(start_paused = true)]
async fn a_server_that_comes_back_changed_is_restored_with_a_candidate_generation() {
    let (control, recorded) = (Control::new(), Recorded::default());
    let binding = comes_back_changed(&control, &recorded, None).await;

    let candidate = binding.candidate().expect("a candidate");
    assert_eq!(candidate.generation, 2);
    assert!(candidate.tool("reverse").is_some());
    assert_eq!(binding.catalog().generation, 1, "the reconnect adopted nothing");
    assert!(binding.catalog().tool("reverse").is_none());
    let status = binding.status();
    assert_eq!((status.catalog_generation, status.candidate_generation), (1, 2));

    // Once more with the same offering: the candidate is found again.
    control.kill();
    until("restored again", || recorded.restores() == 2).await;
    binding.adopt(2).unwrap();
    // Adopted: a third restore finds the adopted generation, unchanged.
    control.kill();
    until("restored a third time", || recorded.restores() == 3).await;
    assert!(binding.candidate().is_none());

    binding.close().await;
    until("all events", || recorded.len() == 3 + 4 * 3 + 2).await;
    assert_eq!(
        recorded.lifecycle(None)[3..],
        [
            "lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
            "state ready -> reconnecting",
            "restored flaky v1 after 1 drift None adopted 1 generation 2",
            "state reconnecting -> ready",
            "lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
            "state ready -> reconnecting",
            "restored flaky v1 after 1 drift None adopted 1 generation 2",
            "state reconnecting -> ready",
            "lost transport_closed attempt 0 retrying true in Some(0ns) adopted 2",
            "state ready -> reconnecting",
            "restored flaky v1 after 1 drift None adopted 2 generation 2",
            "state reconnecting -> ready",
            "state ready -> closing",
            "state closing -> closed",
        ]
    );
}

/// The candidate read over a new connection describes that connection's
/// server (here a newer version), while the adopted generation keeps
/// describing the one it was read over.
#[tokio::test(start_paused = true)]
async fn a_candidate_after_a_reconnect_carries_the_new_servers_identity() {
    let (control, recorded) = (Control::new(), Recorded::default());
    let binding = comes_back_changed(&control, &recorded, Some("2")).await;

    let candidate = binding.candidate().expect("a candidate");
    assert_eq!(candidate.server.version, "2");
    assert_eq!(binding.catalog().server.version, "1");
    assert_eq!(binding.adopt(candidate.generation).unwrap().server.version, "2");
    binding.close().await;
}

/// When the catalog cannot be read over the new connection (here: the
/// server never answers `tools/list`), the restore is still reported, after
/// `Timeouts::startup`, as generation 0 with a warning; the adopted
/// generation stays in force, and calls went through meanwhile.
#[tokio::test(start_paused = true)]
async fn a_catalog_that_cannot_be_read_after_a_restore_is_reported_as_generation_0() {
    let control = Control::new();
    let recorded = Recorded::default();
    let mut definition = Definition::new("flaky", control.factory());
    let timeouts = definition.timeouts().with_startup(Duration::from_secs(2));
    definition = definition.with_timeouts(timeouts);
    let binding = Binding::connect(definition, recorded.handlers()).await.expect("connect");
    control.hang_on_list.store(1, Ordering::SeqCst);
    let t0 = Instant::now();
    control.kill();
    until("the loss is seen", || {
        recorded.0.lock().unwrap().iter().any(|(_, e)| matches!(e, Event::ConnectionLost { .. }))
    })
    .await;
    // A call goes through the new connection while the catalog waits.
    assert_eq!(echo(&binding).await.unwrap(), "echo");
    assert_eq!(binding.status().state, State::Reconnecting, "not reported yet");
    tokio::time::sleep_until(t0 + Duration::from_secs(3)).await;
    assert_eq!(binding.status().state, State::Ready);
    assert_eq!(binding.catalog().generation, 1);
    assert!(binding.candidate().is_none());
    binding.close().await;

    until("all events", || recorded.len() == 9).await;
    assert_eq!(
        recorded.lifecycle(Some(t0))[3..7],
        [
            "0ns lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
            "0ns state ready -> reconnecting",
            "2s restored flaky v1 after 1 drift None adopted 1 generation 0",
            "2s state reconnecting -> ready",
        ]
    );
    let warned = recorded.0.lock().unwrap().iter().any(
        |(_, e)| matches!(e, Event::Warning { text, .. } if text.contains("catalog over the new connection")),
    );
    assert!(warned, "a warning says why");
}

#[tokio::test(start_paused = true)]
async fn requests_issued_while_reconnecting_wait_within_their_own_deadline() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, policy(5, 1000 * MS, 5000 * MS), &recorded).await;
    // Attempts at 0 s and 1 s are refused; the one at 3 s succeeds.
    control.refuse.store(2, Ordering::SeqCst);
    let t0 = kill(&control, &binding).await;

    let patient = {
        let binding = binding.clone();
        let opts = CallOpts::default().with_deadline(t0 + 5000 * MS);
        tokio::spawn(async move {
            let result = binding.call_tool("patient", json!({}), opts).await;
            (result.map(|r| r.content[0].as_text().unwrap().to_string()), Instant::now())
        })
    };
    let hasty = {
        let binding = binding.clone();
        let opts = CallOpts::default().with_deadline(t0 + 2000 * MS);
        tokio::spawn(async move { (binding.call_tool("hasty", json!({}), opts).await, Instant::now()) })
    };

    let (result, at) = hasty.await.unwrap();
    let err = result.unwrap_err();
    assert_eq!(err.class(), FailureClass::Deadline);
    assert_eq!(at, t0 + 2000 * MS, "it gave up at its own deadline");
    // It was queued (at the tool-call gate behind `patient`, and for the
    // reconnect); the deadline's cause names the call and what it had. That
    // it never reached the server is checked below.
    let elapsed = std::error::Error::source(&err).unwrap().downcast_ref::<Elapsed>().unwrap();
    assert_eq!(elapsed.method, "tools/call");

    let (result, at) = patient.await.unwrap();
    assert_eq!(result.unwrap(), "patient");
    assert_eq!(at, t0 + 3000 * MS, "served as soon as the connection was back");
    // Only the patient call ever reached the server.
    assert_eq!(control.tool_calls(), 1);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn refused_reconnects_climb_in_status_and_events_with_the_policys_delays() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, policy(5, 100 * MS, 250 * MS), &recorded).await;
    control.refuse.store(3, Ordering::SeqCst);
    let t0 = kill(&control, &binding).await;

    // Attempts at 0, 100, 300 and 550 ms (delays 100, 200, then 250: the max).
    for (at, attempt) in [(50, 2), (150, 3), (299, 3), (400, 4)] {
        sleep_until(t0 + at * MS).await;
        let status = binding.status();
        assert_eq!((status.state, status.reconnect_attempt), (State::Reconnecting, attempt), "at {at} ms");
        assert_eq!(status.failure.unwrap().message, "connection refused");
    }
    assert_eq!(echo(&binding).await.unwrap(), "echo");
    assert_eq!(Instant::now(), t0 + 550 * MS);
    assert_eq!(binding.status().reconnect_attempt, 0);

    until("all events", || recorded.len() == 10).await;
    assert_eq!(
        recorded.lifecycle(Some(t0))[3..],
        [
            "0ns lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
            "0ns state ready -> reconnecting",
            "0ns lost transport_closed attempt 1 retrying true in Some(100ms) adopted 1",
            "100ms lost transport_closed attempt 2 retrying true in Some(200ms) adopted 1",
            "300ms lost transport_closed attempt 3 retrying true in Some(250ms) adopted 1",
            "550ms restored flaky v1 after 4 drift None adopted 1 generation 1",
            "550ms state reconnecting -> ready",
        ]
    );
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_leaves_the_binding_failed() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, policy(2, 100 * MS, 100 * MS), &recorded).await;
    control.refuse.store(u32::MAX, Ordering::SeqCst);
    let t0 = kill(&control, &binding).await;

    let err = echo(&binding).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
    assert_eq!(Instant::now(), t0 + 100 * MS, "a waiting call fails when the binding gives up");
    let status = binding.status();
    assert_eq!((status.state, status.reconnect_attempt), (State::Failed, 0));
    // Failed for good: calls fail at once, nothing is dialed again.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let at = Instant::now();
    assert_eq!(binding.ping().await.unwrap_err().class(), FailureClass::TransportClosed);
    assert_eq!(Instant::now(), at);
    assert_eq!(control.dials(), 1 + 2);

    binding.close().await;
    assert_eq!(binding.ping().await.unwrap_err().class(), FailureClass::Shutdown);
    until("all events", || recorded.len() == 10).await;
    assert_eq!(
        recorded.lifecycle(Some(t0))[3..],
        [
            "0ns lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
            "0ns state ready -> reconnecting",
            "0ns lost transport_closed attempt 1 retrying true in Some(100ms) adopted 1",
            "100ms lost transport_closed attempt 2 retrying false in None adopted 1",
            "100ms state reconnecting -> failed",
            "3600.1s state failed -> closing",
            "3600.1s state closing -> closed",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn with_reconnect_disabled_the_binding_stays_degraded_until_closed() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, ReconnectPolicy::never(), &recorded).await;
    kill(&control, &binding).await;

    let status = binding.status();
    assert_eq!(status.state, State::Degraded);
    assert_eq!(status.failure.unwrap().class, FailureClass::TransportClosed);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(binding.status().state, State::Degraded);
    let at = Instant::now();
    let err = echo(&binding).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
    assert_eq!(Instant::now(), at, "calls fail fast");
    assert_eq!(control.dials(), 1);
    assert_eq!(control.tool_calls(), 0);

    binding.close().await;
    assert_eq!(binding.status().state, State::Closed);
    assert_eq!(echo(&binding).await.unwrap_err().class(), FailureClass::Shutdown);
    until("all events", || recorded.len() == 7).await;
    assert_eq!(
        recorded.lifecycle(None)[3..],
        [
            "lost transport_closed attempt 0 retrying false in None adopted 1",
            "state ready -> degraded",
            "state degraded -> closing",
            "state closing -> closed",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_safe_request_lost_mid_flight_is_retried_over_the_new_connection() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, policy(5, 100 * MS, 1000 * MS), &recorded).await;
    // Discovery at connect listed the tools once already.
    let before = control.tool_lists.load(Ordering::SeqCst);
    control.die_on_list.store(1, Ordering::SeqCst);
    let tools = binding.list_tools().await.unwrap();
    assert_eq!(tools.items.len(), 1);
    // Sent, lost, sent again; the catalog's own look after the restore may
    // add one more.
    let sent = control.tool_lists.load(Ordering::SeqCst) - before;
    assert!((2..=3).contains(&sent), "sent again after the loss: {sent}");
    assert_eq!(control.dials(), 2);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn close_while_reconnecting_stops_for_good() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, policy(5, 10_000 * MS, 10_000 * MS), &recorded).await;
    control.refuse.store(u32::MAX, Ordering::SeqCst);
    kill(&control, &binding).await;
    until("attempt 1 refused", || binding.status().reconnect_attempt == 2).await;
    let waiting = tokio::spawn({
        let binding = binding.clone();
        async move { binding.ping().await }
    });

    let at = Instant::now();
    binding.close().await;
    binding.close().await;
    assert_eq!(Instant::now(), at, "close does not wait out the backoff");
    assert_eq!(binding.status().state, State::Closed);
    let ended =
        tokio::time::timeout(Duration::from_secs(60), waiting).await.expect("close ends the waiting ping");
    assert_eq!(ended.unwrap().unwrap_err().class(), FailureClass::Shutdown);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(control.dials(), 2, "nothing dialed after the close");
}

#[tokio::test(start_paused = true)]
async fn startup_still_fails_fast_and_within_its_timeout() {
    let control = Control::new();
    control.refuse.store(1, Ordering::SeqCst);
    let recorded = Recorded::default();
    let err =
        Binding::connect(Definition::new("flaky", control.factory()), recorded.handlers()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
    assert_eq!(err.op(), "connect");

    // A server that never answers `initialize`.
    let silent = MemoryFactory::new("silent", |transport| {
        tokio::spawn(async move {
            let Transport { sender: _sender, mut receiver } = transport;
            while let Ok(Some(_)) = receiver.recv().await {}
        });
        Ok(())
    });
    let mut definition = Definition::new("silent", silent);
    let timeouts = definition.timeouts().with_startup(Duration::from_secs(3));
    definition = definition.with_timeouts(timeouts);
    let t0 = Instant::now();
    let err = Binding::connect(definition, Handlers::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::StartupTimeout);
    assert_eq!(Instant::now(), t0 + Duration::from_secs(3));

    until("events", || recorded.len() == 2).await;
    assert_eq!(recorded.lifecycle(None), ["state configured -> starting", "state starting -> failed"]);
}

#[tokio::test(start_paused = true)]
async fn a_raw_request_through_the_stack_is_not_replayed_when_unsafe() {
    let control = Control::new();
    let recorded = Recorded::default();
    let binding = bind(&control, policy(5, 100 * MS, 1000 * MS), &recorded).await;
    let mut params = Map::new();
    params.insert("name".into(), json!("die"));
    let err = binding.request(McpRequest::new("tools/call", params), "raw").await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Indeterminate);
    binding.ping().await.unwrap();
    assert_eq!(control.tool_calls(), 1);
    binding.close().await;
}

mod stdio {
    //! The same through a real child process: `tests/fixtures/sleep_server.py`,
    //! killed with `SIGKILL` mid-call. Real time; every wait is bounded.

    use super::*;
    use mcp_stack::transport::stdio::StdioFactory;
    use mcp_stack::transport::TransportFactory;
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::future::Future;

    const LIMIT: Duration = Duration::from_secs(20);

    async fn within<F: Future>(what: &str, fut: F) -> F::Output {
        tokio::time::timeout(LIMIT, fut).await.unwrap_or_else(|_| panic!("timed out: {what}"))
    }

    /// Polls `done` (bounded by [`LIMIT`]).
    async fn eventually(what: &str, done: impl Fn() -> bool) {
        within(what, async {
            while !done() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
    }

    fn python() -> Arc<StdioFactory> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sleep_server.py");
        Arc::new(StdioFactory::new("python3").arg(script).shutdown_grace(Duration::from_millis(500)))
    }

    async fn bind(factory: &Arc<StdioFactory>, reconnect: ReconnectPolicy, recorded: &Recorded) -> Binding {
        let mut definition = Definition::with_factory("py", factory.clone() as Arc<dyn TransportFactory>);
        definition = definition.with_reconnect(reconnect);
        within("connect", Binding::connect(definition, recorded.handlers())).await.expect("connect")
    }

    /// Starts a 30 s `sleep` call and returns it once the server has begun
    /// it (it says so on stderr, which the binding reports as an event).
    async fn sleeping_call(
        binding: &Binding,
        recorded: &Recorded,
    ) -> tokio::task::JoinHandle<Result<(), Error>> {
        let call = tokio::spawn({
            let binding = binding.clone();
            async move { binding.call_tool("sleep", json!({"seconds": 30}), CallOpts::default()).await.map(drop) }
        });
        eventually("the server is sleeping", || {
            recorded
                .0
                .lock()
                .unwrap()
                .iter()
                .any(|(_, e)| matches!(e, Event::ServerStderr { line, .. } if line.starts_with("sleeping")))
        })
        .await;
        call
    }

    /// Issue 43, item 4: a call cancelled at its deadline leaves the server
    /// busy with it; closing does not wait the shutdown grace (30 s here)
    /// for the server to finish it, and leaves no process behind.
    #[tokio::test]
    async fn close_is_prompt_after_a_call_cancelled_at_its_deadline() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sleep_server.py");
        let factory =
            Arc::new(StdioFactory::new("python3").arg(script).shutdown_grace(Duration::from_secs(30)));
        let recorded = Recorded::default();
        let binding = bind(&factory, ReconnectPolicy::default(), &recorded).await;
        let pid = factory.last_pid().unwrap();
        let opts = CallOpts::default().with_timeout(Duration::from_millis(500));
        let err =
            within("the call", binding.call_tool("sleep", json!({"seconds": 60}), opts)).await.unwrap_err();
        assert_eq!(err.class(), FailureClass::Deadline, "{err}");
        let start = std::time::Instant::now();
        within("close", binding.close()).await;
        let took = start.elapsed();
        assert!(took < Duration::from_secs(10), "close waited {took:?}, as for the 30 s grace");
        let gone = kill(Pid::from_raw(pid as i32), None).is_err();
        assert!(gone, "the server process is gone");
    }

    fn sigkill(pid: u32) {
        kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("kill the server");
    }

    /// Binds under `reconnect`, kills the server in the middle of a call,
    /// checks that the call ended `indeterminate`, and returns the binding
    /// and the killed child's pid.
    async fn killed_mid_call(
        factory: &Arc<StdioFactory>,
        reconnect: ReconnectPolicy,
        recorded: &Recorded,
    ) -> (Binding, u32) {
        let binding = bind(factory, reconnect, recorded).await;
        let pid = factory.last_pid().unwrap();
        let call = sleeping_call(&binding, recorded).await;
        sigkill(pid);
        let err = within("the call ends", call).await.unwrap().unwrap_err();
        assert_eq!(err.class(), FailureClass::Indeterminate, "{err}");
        (binding, pid)
    }

    #[tokio::test]
    async fn killing_the_stdio_server_mid_call_ends_it_indeterminate_and_the_binding_reconnects() {
        let (factory, recorded) = (python(), Recorded::default());
        let (binding, first) = killed_mid_call(&factory, ReconnectPolicy::default(), &recorded).await;

        // The next call waits for the new child and succeeds.
        let result = within("echo", binding.call_tool("echo", json!({"text": "back"}), CallOpts::default()))
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("back"));
        let second = factory.last_pid().unwrap();
        assert_ne!(first, second, "a new server process");
        eventually("ready", || binding.status().state == State::Ready).await;

        within("close", binding.close()).await;
        eventually("events", || recorded.lifecycle(None).len() == 9).await;
        assert_eq!(
            recorded.lifecycle(None),
            [
                "state configured -> starting",
                "state starting -> discovering",
                "state discovering -> ready",
                "lost transport_closed attempt 0 retrying true in Some(0ns) adopted 1",
                "state ready -> reconnecting",
                "restored py-sleep v1 after 1 drift None adopted 1 generation 1",
                "state reconnecting -> ready",
                "state ready -> closing",
                "state closing -> closed",
            ]
        );
        // Closing ended the second child too.
        eventually("the child is gone", || kill(Pid::from_raw(second as i32), None).is_err()).await;
    }

    #[tokio::test]
    async fn with_reconnect_disabled_a_killed_stdio_server_leaves_the_binding_degraded_until_closed() {
        let (factory, recorded) = (python(), Recorded::default());
        let (binding, pid) = killed_mid_call(&factory, ReconnectPolicy::never(), &recorded).await;
        eventually("degraded", || binding.status().state == State::Degraded).await;

        let err = within("echo", binding.call_tool("echo", json!({"text": "x"}), CallOpts::default()))
            .await
            .unwrap_err();
        assert_eq!(err.class(), FailureClass::TransportClosed, "{err}");
        assert_eq!(factory.last_pid(), Some(pid), "no new server was started");
        assert_eq!(binding.status().state, State::Degraded);

        within("close", binding.close()).await;
        assert_eq!(binding.status().state, State::Closed);
        assert_eq!(binding.ping().await.unwrap_err().class(), FailureClass::Shutdown);
        assert_eq!(factory.last_pid(), Some(pid));
    }
}

#[tokio::test(start_paused = true)]
async fn the_legacy_verdict_of_the_automatic_choice_is_kept_for_reconnects() {
    // A legacy server that never answers server/discover: the first dial
    // waits the discover timeout, a reconnect to the same server does not.
    let control = Control::new();
    control.silent_discover.store(true, Ordering::SeqCst);
    let recorded = Recorded::default();
    let t0 = Instant::now();
    let binding = bind(&control, ReconnectPolicy::default(), &recorded).await;
    assert!(t0.elapsed() >= mcp_stack::Timeouts::default().discover(), "{:?}", t0.elapsed());
    assert_eq!(binding.session().protocol_version, "2025-11-25");
    assert_eq!(control.discovers.load(Ordering::SeqCst), 1);

    let t1 = Instant::now();
    control.kill();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let lifecycle = recorded.lifecycle(None);
    assert!(lifecycle.iter().any(|l| l.starts_with("restored flaky")), "{lifecycle:?}");
    assert_eq!(echo(&binding).await.unwrap(), "echo");
    assert!(t1.elapsed() < mcp_stack::Timeouts::default().discover(), "no second wait: {:?}", t1.elapsed());
    assert_eq!(control.dials(), 2);
    assert_eq!(control.discovers.load(Ordering::SeqCst), 1, "the reconnect did not probe again");
    binding.close().await;
}

/// Issue 22, item 7: a dropped declaration is reported once per binding,
/// tool and field across reconnects: a server that comes back with a new
/// offering (a new generation is built) does not warn again.
#[tokio::test(start_paused = true)]
async fn a_dropped_declaration_warns_once_across_reconnects() {
    use mcp_stack::catalog::meta::{DeclarationSet, ToolExtras};
    let (control, recorded) = (Control::new(), Recorded::default());
    control.bad_declaration.store(true, Ordering::SeqCst);
    let mut definition = Definition::new("flaky", control.factory());
    definition = definition.with_declarations(DeclarationSet::default().with::<ToolExtras>());
    let binding = Binding::connect(definition, recorded.handlers()).await.expect("connect");
    control.more_tools.store(true, Ordering::SeqCst);
    control.kill();
    until("restored", || recorded.restores() == 1).await;
    let candidate = binding.candidate().expect("a new generation over the new connection");
    let extras = candidate.tool("echo").unwrap().declared.get::<ToolExtras>().unwrap();
    assert_eq!(extras.result_kind.as_deref(), Some("text"));
    assert!(!candidate.warnings.iter().any(|w| w.contains("gates")), "{:?}", candidate.warnings);
    assert_eq!(binding.catalog().warnings.iter().filter(|w| w.contains("gates")).count(), 1);
    binding.close().await;
    let warned = recorded
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, e)| matches!(e, Event::Warning { text, .. } if text.contains("gates")))
        .count();
    assert_eq!(warned, 1);
}

#[tokio::test(start_paused = true)]
async fn a_connection_lost_during_discovery_is_redialed_and_the_listing_sent_again() {
    // The server drops the connection on the first `tools/list`, the one of
    // discovery at connect: a read safe to repeat, sent again over the
    // redialed connection, so the binding connects.
    let (control, definition) = losing_the_first_listing();
    let recorded = Recorded::default();
    let binding = Binding::connect(definition, recorded.handlers()).await.expect("connected after the loss");
    assert_eq!(control.dials(), 2);
    assert_eq!(control.tool_lists.load(Ordering::SeqCst), 2);
    assert_eq!(binding.catalog().tools.len(), 1);
    binding.close().await;

    // The same through a host, which connects in its turns.
    let (control, definition) = losing_the_first_listing();
    let host = mcp_stack::host::Host::new();
    assert!(host.add_all([definition]).await.is_empty());
    assert_eq!(host.status_of("flaky").map(|s| s.state), Some(State::Ready));
    assert_eq!(control.dials(), 2);
    host.close().await;
}

/// A server that drops the connection on the first `tools/list` (the one
/// of discovery at connect), and a definition that redials it.
fn losing_the_first_listing() -> (Arc<Control>, Definition) {
    let control = Control::new();
    control.die_on_list.store(1, Ordering::SeqCst);
    let definition =
        Definition::new("flaky", control.factory()).with_reconnect(policy(5, 100 * MS, 1000 * MS));
    (control, definition)
}
