//! Replies to server requests are bounded (issue 13, item 2): a server that
//! floods requests and never reads what the client writes ends the
//! connection with `limit_exceeded`, and the client never holds more than
//! its reply backlog nor spawns a task per request.
//!
//! Over the in-memory transport, whose channels are bounded like pipes, on
//! tokio's paused clock: the reader's wait for room ([`REPLY_STALL`]) passes
//! as soon as everything is idle.

use async_trait::async_trait;
use mcp_stack::connection::{Connection, ConnectionState, InboundHandler, NoInbound};
use mcp_stack::protocol::ErrorObject;
use mcp_stack::transport::memory::duplex;
use mcp_stack::transport::{Inbound, Transport};
use mcp_stack::FailureClass;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The engine's bounds, as `Connection` documents them: server requests
/// served at once, replies queued for the writer, and how long a stalled
/// writer is waited for.
const MAX_CONCURRENT_SERVER_REQUESTS: usize = 16;
const MAX_REPLY_BACKLOG: usize = 64;
const REPLY_STALL: std::time::Duration = std::time::Duration::from_secs(10);

/// Requests the flooding server tries to send.
const FLOOD: usize = 20_000;

/// Sends `FLOOD` requests made by `request`, counting those the client took;
/// never reads.
fn flood(server: &Transport, request: fn(usize) -> Value) -> Arc<AtomicUsize> {
    let sent = Arc::new(AtomicUsize::new(0));
    let (count, sender) = (sent.clone(), server.sender.clone());
    tokio::spawn(async move {
        for i in 0..FLOOD {
            if sender.send(request(i).to_string()).await.is_err() {
                return;
            }
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    sent
}

fn ping(i: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": i, "method": "ping"})
}

fn alive_tasks() -> usize {
    tokio::runtime::Handle::current().metrics().num_alive_tasks()
}

/// Waits (on the paused clock) for the connection to end; returns how.
async fn ended(connection: &Connection) -> ConnectionState {
    let mut state = connection.watch_state();
    let wait = state.wait_for(|s| *s != ConnectionState::Open);
    let limit = REPLY_STALL * 6;
    let end = match tokio::time::timeout(limit, wait).await {
        Ok(state) => state.unwrap().clone(),
        Err(_) => panic!(
            "the connection did not end within {limit:?}; backlog {}, alive tasks {}",
            connection.reply_backlog(),
            alive_tasks()
        ),
    };
    end
}

fn assert_limit_exceeded(state: &ConnectionState) {
    match state {
        ConnectionState::Closed { class, message } => {
            assert_eq!(*class, FailureClass::LimitExceeded, "{message}");
            assert!(message.contains("replies"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_ping_flood_that_never_reads_ends_the_connection_with_limit_exceeded() {
    let (client, server) = duplex(1 << 20);
    let before = alive_tasks();
    let connection = Connection::start(client, Arc::new(NoInbound));
    let sent = flood(&server, ping);
    let state = ended(&connection).await;
    assert_limit_exceeded(&state);
    // The backlog filled to its bound and no further; the server was pushed
    // back long before the end of its flood.
    assert_eq!(connection.reply_backlog(), MAX_REPLY_BACKLOG);
    let sent = sent.load(Ordering::SeqCst);
    assert!(sent < 4 * MAX_REPLY_BACKLOG + 64, "the client took {sent} requests");
    // No task per request: the reader, the writer and the flooder.
    let grew = alive_tasks() - before;
    assert!(grew <= 4, "{grew} more tasks alive");
    drop(server);
}

/// A handler that never answers.
struct Stuck;

#[async_trait]
impl InboundHandler for Stuck {
    async fn request(&self, _method: &str, _params: Option<Value>) -> Result<Value, ErrorObject> {
        std::future::pending().await
    }
}

/// A handler that answers at once.
struct Quick;

#[async_trait]
impl InboundHandler for Quick {
    async fn request(&self, _method: &str, _params: Option<Value>) -> Result<Value, ErrorObject> {
        Ok(json!({"roots": []}))
    }
}

fn roots_list(i: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": i, "method": "roots/list"})
}

#[tokio::test(start_paused = true)]
async fn requests_past_the_handler_limit_are_refused_within_the_same_bound() {
    let (client, server) = duplex(1 << 20);
    let before = alive_tasks();
    let connection = Connection::start(client, Arc::new(Stuck));
    flood(&server, roots_list);
    let state = ended(&connection).await;
    assert_limit_exceeded(&state);
    let grew = alive_tasks().saturating_sub(before);
    assert!(grew <= 4 + MAX_CONCURRENT_SERVER_REQUESTS, "{grew} more tasks alive");
    drop(server);
}

#[tokio::test(start_paused = true)]
async fn handler_replies_that_cannot_be_written_do_not_pile_up_in_tasks() {
    // Handlers that answer at once keep their permits until their replies
    // are queued: they cannot free room for more while the backlog is full.
    let (client, server) = duplex(1 << 20);
    let before = alive_tasks();
    let connection = Connection::start(client, Arc::new(Quick));
    flood(&server, roots_list);
    let state = ended(&connection).await;
    assert_limit_exceeded(&state);
    let grew = alive_tasks().saturating_sub(before);
    assert!(grew <= 4 + MAX_CONCURRENT_SERVER_REQUESTS, "{grew} more tasks alive");
    drop(server);
}

#[tokio::test(start_paused = true)]
async fn a_burst_from_a_server_that_reads_is_answered_in_full() {
    let (client, mut server) = duplex(1 << 20);
    let connection = Connection::start(client, Arc::new(NoInbound));
    let sent = flood(&server, ping);
    let mut answered = 0;
    while answered < FLOOD {
        let frame = tokio::time::timeout(Duration::from_secs(1), server.receiver.recv()).await;
        match frame {
            Ok(Ok(Some(Inbound::Frame(text)))) => {
                let reply: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(reply["id"], answered, "replies in order");
                answered += 1;
            }
            other => panic!("after {answered} replies: {other:?}"),
        }
    }
    assert_eq!(sent.load(Ordering::SeqCst), FLOOD);
    assert_eq!(connection.state(), ConnectionState::Open);
}

#[tokio::test]
async fn a_stdio_server_that_floods_pings_and_never_reads_its_stdin_ends_the_connection() {
    use mcp_stack::transport::stdio::StdioFactory;
    use mcp_stack::transport::{ConnectConfig, TransportFactory};
    let script = r#"i=0; while [ $i -lt 1000000 ]; do printf '{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' $i; i=$((i+1)); done"#;
    let factory = StdioFactory::new("sh").arg("-c").arg(script);
    let transport = factory.connect(&ConnectConfig::new("flood")).await.unwrap();
    let before = alive_tasks();
    let connection = Connection::start(transport, Arc::new(NoInbound));
    let state = stalled_then_ended(&connection).await;
    assert_limit_exceeded(&state);
    assert_eq!(connection.reply_backlog(), MAX_REPLY_BACKLOG);
    let grew = alive_tasks().saturating_sub(before);
    assert!(grew <= 4, "{grew} more tasks alive");
    connection.close().await;
}

/// Over real pipes: waits (real time, bounded) until the child's unread stdin
/// has stopped the writer, then lets the paused clock run the reader's wait
/// for room out; returns how the connection ended.
///
/// A full backlog alone does not show a stopped writer: the reader can
/// outpace the writer for a moment, and if the child is then slow to write
/// its next ping, the idle runtime lets the paused clock jump past the test's
/// own limit while the writer still has room. So the backlog must stay full
/// for `STEADY` (a writer with room empties it in microseconds, and the
/// child's buffered pings refill it only while the writer keeps draining, which
/// fills the child's stdin pipe within milliseconds); and an attempt where the
/// paused clock still ran out with room in the backlog is a false start,
/// tried again (bounded).
async fn stalled_then_ended(connection: &Connection) -> ConnectionState {
    const STEADY: Duration = Duration::from_millis(250);
    const ATTEMPTS: usize = 5;
    for attempt in 1..=ATTEMPTS {
        let start = std::time::Instant::now();
        let mut full_since = None;
        loop {
            assert!(start.elapsed() < Duration::from_secs(20), "the backlog never stayed full");
            if connection.reply_backlog() < MAX_REPLY_BACKLOG {
                full_since = None;
            } else if full_since.get_or_insert_with(std::time::Instant::now).elapsed() >= STEADY {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::pause();
        let mut state = connection.watch_state();
        let wait = state.wait_for(|s| *s != ConnectionState::Open);
        let ended = tokio::time::timeout(REPLY_STALL * 6, wait).await;
        let backlog = connection.reply_backlog();
        tokio::time::resume();
        match ended {
            Ok(state) => return state.unwrap().clone(),
            Err(_) if backlog < MAX_REPLY_BACKLOG && attempt < ATTEMPTS => continue,
            Err(_) => panic!(
                "attempt {attempt}: the connection did not end; backlog {backlog}, alive tasks {}",
                alive_tasks()
            ),
        }
    }
    unreachable!("the last attempt returns or panics")
}
