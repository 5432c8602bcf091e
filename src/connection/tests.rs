use super::call::request_json;
use super::era::RequestMeta;
use super::reader::{sniff_id, sniff_reply_id};
use super::*;
use crate::protocol::{Request, Response};
use crate::transport::Inbound;

#[test]
fn borrowed_request_text_is_the_owned_requests() {
    let params: Map<String, Value> =
        serde_json::from_value(serde_json::json!({ "name": "echo", "arguments": { "m": "hé\"llo" } }))
            .unwrap();
    for id in [RequestId::Number(7), RequestId::String("a\"b".into())] {
        for params in [None, Some(&params)] {
            let owned = Request::new(id.clone(), "tools/call", params.cloned().map(Value::Object));
            assert_eq!(request_json(&id, "tools/call", params, None), Message::Request(owned).to_json());
        }
    }
}

fn stamps() -> RequestMeta {
    let mut meta = RequestMeta::default();
    meta.insert("stamp", &Value::Bool(true));
    meta.insert("by", &serde_json::json!({ "era": "test" }));
    meta
}

#[test]
fn the_eras_meta_is_merged_into_the_callers_as_the_request_is_written() {
    use serde_json::json;
    let id = RequestId::Number(1);
    let meta = stamps();
    let written = |params: Option<Value>, method: &str| {
        let params: Option<Map<String, Value>> = params.map(|p| serde_json::from_value(p).unwrap());
        let text = request_json(&id, method, params.as_ref(), Some(&meta));
        let Ok(Message::Request(req)) = Message::parse(&text) else { panic!("a request: {text}") };
        assert_eq!(req.method, method);
        req.params.expect("params are written when the era adds to them")
    };
    let era = json!({ "stamp": true, "by": { "era": "test" } });
    // No params, or no `_meta`: the era's entries alone.
    assert_eq!(written(None, "ping"), json!({ "_meta": era }));
    assert_eq!(written(Some(json!({ "name": "t" })), "tools/call"), json!({ "name": "t", "_meta": era }));
    // The caller's entries are kept, except those the era sets.
    assert_eq!(
        written(
            Some(json!({ "name": "t", "_meta": { "progressToken": 3, "stamp": "caller's" } })),
            "tools/call"
        ),
        json!({ "name": "t", "_meta": { "progressToken": 3, "stamp": true, "by": { "era": "test" } } })
    );
    // A `_meta` that is empty, or not an object, is replaced.
    assert_eq!(written(Some(json!({ "_meta": {} })), "tools/call"), json!({ "_meta": era }));
    assert_eq!(written(Some(json!({ "_meta": [1] })), "tools/call"), json!({ "_meta": era }));
}

/// An era that adds to every request's `_meta`.
#[derive(Debug)]
struct Stamping(RequestMeta);

impl Era for Stamping {
    fn protocol_version(&self) -> &str {
        "test"
    }
    fn request_meta(&self) -> Option<&RequestMeta> {
        Some(&self.0)
    }
}

#[tokio::test]
async fn a_decorating_era_leaves_the_callers_request_alone() {
    use tower_service::Service;
    let (client, mut server) = crate::transport::memory::duplex(1 << 20);
    let mut connection = Connection::start(client, Arc::new(NoInbound));
    connection.set_era(Arc::new(Stamping(stamps())));
    // One request kept by the caller (as the retry layer keeps one to
    // send again) and sent twice.
    let kept = McpRequest::with_value("tools/call", serde_json::json!({ "name": "echo" }));
    let calls = async {
        let mut other = connection.clone();
        let (a, b) = tokio::join!(connection.call(kept.clone()), other.call(kept.clone()));
        [a, b]
    };
    let answer = async {
        for _ in 0..2 {
            let Ok(Some(Inbound::Frame(text))) = server.receiver.recv().await else { panic!("a request") };
            let Ok(Message::Request(req)) = Message::parse(&text) else { panic!("a request: {text}") };
            let params = req.params.expect("params");
            assert_eq!(
                params,
                serde_json::json!({ "name": "echo", "_meta": { "stamp": true, "by": { "era": "test" } } })
            );
            let reply = Message::Response(Response::result(req.id, Value::Object(Map::new())));
            server.sender.send(reply.to_json()).await.unwrap();
        }
    };
    let (results, ()) = tokio::join!(calls, answer);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(kept.params().get("_meta"), None, "the caller's request is not touched");
}

/// A sender that holds the request `first` until released and then
/// fails it, fails every `notifications/fail`, and passes the rest on.
struct Gate {
    inner: Arc<dyn MessageSender>,
    entered: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl MessageSender for Gate {
    async fn send(&self, message: String) -> Result<(), Error> {
        if message.contains("\"method\":\"first\"") {
            self.entered.notify_one();
            self.release.notified().await;
            return Err(Error::new(FailureClass::TransportClosed, "the pipe broke"));
        }
        if message.contains("\"method\":\"notifications/fail\"") {
            return Err(Error::new(FailureClass::Indeterminate, "the POST failed"));
        }
        self.inner.send(message).await
    }
    async fn close(&self) -> Result<(), Error> {
        self.inner.close().await
    }
}

#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl InboundHandler for Warnings {
    fn warning(&self, text: String) {
        self.0.lock().unwrap().push(text);
    }
}

/// A connection over a [`Gate`], and the server's side (which answers
/// every request with `{}` while `answer` is set).
fn gated(
    inbound: Arc<dyn InboundHandler>,
    answer: bool,
) -> (Connection, Arc<tokio::sync::Notify>, Arc<tokio::sync::Notify>, tokio::task::JoinHandle<()>) {
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let entered = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = Gate { inner: client.sender, entered: entered.clone(), release: release.clone() };
    let transport = Transport { sender: Arc::new(gate), receiver: client.receiver };
    let connection = Connection::start(transport, inbound);
    let peer = peer_answering(server, answer);
    (connection, entered, release, peer)
}

/// The server's side of a memory transport: it answers every request with
/// `{}` when `answer` (else it reads and never answers), until it is
/// aborted or the client's side ends.
fn peer_answering(server: Transport, answer: bool) -> tokio::task::JoinHandle<()> {
    let Transport { sender, mut receiver } = server;
    tokio::spawn(async move {
        while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
            if let (true, Ok(Message::Request(req))) = (answer, Message::parse(&text)) {
                let reply = Message::Response(Response::result(req.id, Value::Object(Map::new())));
                if sender.send(reply.to_json()).await.is_err() {
                    return;
                }
            }
        }
    })
}

type Call = tokio::task::JoinHandle<Result<Value, Error>>;

/// Starts request `first` and, once the [`Gate`] holds it in the
/// writer, request `second`, queued behind it.
async fn first_and_second_queued(connection: &Connection, entered: &tokio::sync::Notify) -> (Call, Call) {
    let start = |method: &'static str| {
        let c = connection.clone();
        tokio::spawn(async move { c.request(method, Map::new()).await })
    };
    let first = start("first");
    entered.notified().await;
    let second = start("second");
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    (first, second)
}

#[tokio::test(start_paused = true)]
async fn a_request_the_transport_could_not_send_and_those_queued_behind_it_end_transport_closed() {
    let (connection, entered, release, _peer) = gated(Arc::new(NoInbound), true);
    let (first, second) = first_and_second_queued(&connection, &entered).await;
    release.notify_one();
    let first = first.await.unwrap().unwrap_err();
    assert_eq!(first.class(), FailureClass::TransportClosed, "{first}");
    assert!(first.message().contains("not sent"), "{first}");
    let second = second.await.unwrap().unwrap_err();
    assert_eq!(second.class(), FailureClass::TransportClosed, "never written, so retry-safe: {second}");
    assert!(matches!(connection.state(), ConnectionState::Closed { .. }));
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_ends_fails_written_requests_indeterminate_and_queued_ones_transport_closed() {
    let (connection, entered, _release, peer) = gated(Arc::new(NoInbound), false);
    let (first, second) = first_and_second_queued(&connection, &entered).await;
    // The server goes away while `first` is being written and `second`
    // waits behind it.
    peer.abort();
    let first = first.await.unwrap().unwrap_err();
    assert_eq!(first.class(), FailureClass::Indeterminate, "it was being written: {first}");
    let second = second.await.unwrap().unwrap_err();
    assert_eq!(second.class(), FailureClass::TransportClosed, "it never left: {second}");
    assert!(second.message().contains("not sent"), "{second}");
}

#[tokio::test(start_paused = true)]
async fn a_notification_that_fails_to_send_is_a_warning_and_the_connection_goes_on() {
    let warnings = Arc::new(Warnings::default());
    let (connection, _entered, _release, _peer) = gated(warnings.clone(), true);
    connection.notify("notifications/fail", None).await.expect("queued");
    let result = connection.request("after", Map::new()).await.expect("the connection goes on");
    assert_eq!(result, Value::Object(Map::new()));
    assert_eq!(connection.state(), ConnectionState::Open);
    let warnings = warnings.0.lock().unwrap().clone();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("could not be sent") && warnings[0].contains("the POST failed"),
        "{warnings:?}"
    );
}

#[test]
fn a_request_without_a_reply_keeps_shutdown_and_auth_and_is_indeterminate_only_if_it_left() {
    for left in [false, true] {
        let e = unanswered(FailureClass::Shutdown, "closed by the host", left);
        assert_eq!(e.class(), FailureClass::Shutdown, "{e}");
        let e = unanswered(FailureClass::AuthRequired, "needs authorization", left);
        assert_eq!(e.class(), FailureClass::AuthRequired, "{e}");
        assert!(e.message().contains("needs authorization"), "{e}");
    }
    let e = unanswered(FailureClass::TransportClosed, "the child exited", true);
    assert_eq!(e.class(), FailureClass::Indeterminate, "it may have acted: {e}");
    assert!(e.message().contains("the child exited"), "{e}");
    let e = unanswered(FailureClass::ServerProtocol, "bad frame", false);
    assert_eq!(e.class(), FailureClass::TransportClosed, "safe to send again: {e}");
    assert!(e.message().starts_with("not sent") && e.message().contains("server_protocol"), "{e}");
}

#[test]
fn sniffs_plain_ids_only() {
    assert_eq!(sniff_id(r#"{"jsonrpc":"2.0","id":42,"result":{"#), Some(RequestId::Number(42)));
    assert_eq!(sniff_id(r#"{"id" : "abc","#), Some(RequestId::String("abc".into())));
    assert_eq!(sniff_id(r#"{"jsonrpc":"2.0","result":"#), None);
    assert_eq!(sniff_id(r#"{"id":4"#), None);
    assert_eq!(sniff_id(r#"{"id":"a\"b","#), None);
}

#[test]
fn sniffs_reply_ids_only_before_the_result() {
    let bad = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"\ud800"}]}}"#;
    assert_eq!(sniff_reply_id(bad), Some(RequestId::Number(7)));
    // The id after the result could be anyone's: no guess.
    assert_eq!(sniff_reply_id(r#"{"result":{"items":[{"id":3}]},"id":9}"#), None);
    // A server request's id is not ours.
    assert_eq!(sniff_reply_id(r#"{"jsonrpc":"2.0","id":0,"method":"x","params":{"result":1"#), None);
    assert_eq!(sniff_reply_id(r#"{"jsonrpc":"2.0","id":0,"method":"x"}"#), None);
}

/// A sender that counts the writes it is asked for: one per `send`, one
/// per `send_batch`.
struct CountingWrites {
    inner: Arc<dyn MessageSender>,
    writes: Arc<std::sync::atomic::AtomicUsize>,
}

#[async_trait]
impl MessageSender for CountingWrites {
    async fn send(&self, message: String) -> Result<(), Error> {
        self.writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.send(message).await
    }
    async fn send_batch(&self, messages: &[String]) -> Result<(), crate::transport::BatchError> {
        self.writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for (sent, message) in messages.iter().enumerate() {
            self.inner
                .send(message.clone())
                .await
                .map_err(|error| crate::transport::BatchError { sent, error })?;
        }
        Ok(())
    }
    async fn close(&self) -> Result<(), Error> {
        self.inner.close().await
    }
}

/// An era whose requests have HTTP headers, as 2026-07-28's do.
#[derive(Debug)]
struct Headed;

impl Era for Headed {
    fn protocol_version(&self) -> &str {
        "test"
    }
    fn wire_headers(&self, req: &McpRequest) -> WireHeaders {
        WireHeaders(vec![("Mcp-Method".into(), req.method.clone())])
    }
}

/// On one worker thread, as a server's runtime pinned to one CPU runs:
/// each caller's request wakes the writer, which tokio then runs at once.
/// Written one by one, 16 callers' 320 calls would be 320 writes. An era
/// with headers changes nothing on a transport that has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn requests_in_flight_together_are_written_together() {
    writes_for_calls_in_flight(None).await;
    writes_for_calls_in_flight(Some(Arc::new(Headed))).await;
}

async fn writes_for_calls_in_flight(era: Option<Arc<dyn Era>>) {
    const CALLERS: usize = 16;
    const CALLS: usize = 20;
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sender = CountingWrites { inner: client.sender, writes: writes.clone() };
    let transport = Transport { sender: Arc::new(sender), receiver: client.receiver };
    let connection = Connection::start(transport, Arc::new(NoInbound));
    if let Some(era) = era {
        connection.set_era(era);
    }
    let Transport { sender, mut receiver } = server;
    tokio::spawn(async move {
        while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
            if let Ok(Message::Request(req)) = Message::parse(&text) {
                let reply = Message::Response(Response::result(req.id, Value::Object(Map::new())));
                if sender.send(reply.to_json()).await.is_err() {
                    return;
                }
            }
        }
    });
    // The callers are started from the worker, as a host's tasks are.
    let callers = tokio::spawn(async move {
        let mut callers = tokio::task::JoinSet::new();
        for _ in 0..CALLERS {
            let connection = connection.clone();
            callers.spawn(async move {
                for _ in 0..CALLS {
                    connection.request("echo", Map::new()).await.expect("answered");
                }
            });
        }
        while let Some(done) = callers.join_next().await {
            done.expect("a caller");
        }
    });
    callers.await.expect("the callers");
    let writes = writes.load(std::sync::atomic::Ordering::Relaxed);
    assert!(writes <= CALLERS * CALLS / 4, "{writes} writes for {} calls", CALLERS * CALLS);
}

/// How a message left: written at once by its caller, or by the writer.
type Log = Arc<Mutex<Vec<(&'static str, String)>>>;

/// A sender that logs each message (by its method; "reply" for a reply)
/// with how it left. It takes a message at once unless it is a
/// `notifications/slow`, whose send waits for `release`.
struct Recording {
    inner: Arc<dyn MessageSender>,
    log: Log,
    release: Arc<tokio::sync::Notify>,
}

fn method_of(text: &str) -> String {
    match Message::parse(text) {
        Ok(Message::Request(req)) => req.method,
        Ok(Message::Notification(n)) => n.method,
        _ => "reply".into(),
    }
}

#[async_trait]
impl MessageSender for Recording {
    async fn send(&self, message: String) -> Result<(), Error> {
        let method = method_of(&message);
        if method == "notifications/slow" {
            self.release.notified().await;
        }
        self.log.lock().unwrap().push(("writer", method));
        self.inner.send(message).await
    }
    fn try_send(&self, message: String) -> Result<(), String> {
        let method = method_of(&message);
        if method == "notifications/slow" {
            return Err(message);
        }
        self.inner.try_send(message)?;
        self.log.lock().unwrap().push(("at once", method));
        Ok(())
    }
    async fn close(&self) -> Result<(), Error> {
        self.inner.close().await
    }
}

/// A connection over a [`Recording`] sender, its log, its release, and
/// the server's side, which answers every request with `{}` until it is
/// aborted.
fn recording() -> (Connection, Log, Arc<tokio::sync::Notify>, tokio::task::JoinHandle<()>) {
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let log = Log::default();
    let release = Arc::new(tokio::sync::Notify::new());
    let sender = Recording { inner: client.sender, log: log.clone(), release: release.clone() };
    let connection = Connection::start(
        Transport { sender: Arc::new(sender), receiver: client.receiver },
        Arc::new(NoInbound),
    );
    let peer = peer_answering(server, true);
    (connection, log, release, peer)
}

fn logged(log: &Log) -> Vec<(&'static str, String)> {
    log.lock().unwrap().clone()
}

#[tokio::test]
async fn a_lone_message_is_written_by_its_caller_and_one_among_others_by_the_writer() {
    let (connection, log, _release, _peer) = recording();
    // `first` is alone when it is sent; `second` is not, and goes to the
    // writer, which would batch it with others.
    let (first, second) =
        tokio::join!(connection.request("first", Map::new()), connection.request("second", Map::new()));
    first.expect("answered");
    second.expect("answered");
    // Once the writer is done, a lone message is written at once again.
    connection.request("third", Map::new()).await.expect("answered");
    connection.notify("notifications/alone", None).await.expect("sent");
    let expected = [
        ("at once", "first"),
        ("writer", "second"),
        ("at once", "third"),
        ("at once", "notifications/alone"),
    ];
    assert_eq!(logged(&log), expected.map(|(how, method)| (how, method.to_string())));
}

#[tokio::test(start_paused = true)]
async fn nothing_is_written_at_once_ahead_of_what_waits_for_the_writer() {
    let (connection, log, release, _peer) = recording();
    // The transport cannot take the notification at once: the writer has
    // it, and its send waits.
    connection.notify("notifications/slow", None).await.expect("queued");
    let after = tokio::spawn({
        let connection = connection.clone();
        async move { connection.request("after", Map::new()).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    assert_eq!(logged(&log), [], "the request sent after the notification did not overtake it");
    release.notify_one();
    after.await.unwrap().expect("answered");
    let expected = [("writer", "notifications/slow"), ("writer", "after")];
    assert_eq!(logged(&log), expected.map(|(how, method)| (how, method.to_string())));
}

#[tokio::test]
async fn a_request_written_at_once_and_never_answered_is_indeterminate() {
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let log = Log::default();
    let sender = Recording { inner: client.sender, log: log.clone(), release: Default::default() };
    let connection = Connection::start(
        Transport { sender: Arc::new(sender), receiver: client.receiver },
        Arc::new(NoInbound),
    );
    // The server reads the request, and goes away without a reply.
    let Transport { sender: _server_sender, mut receiver } = server;
    let (lost, read) = tokio::join!(connection.request("lost", Map::new()), async move {
        let read = receiver.recv().await;
        drop((receiver, _server_sender));
        read
    });
    assert!(matches!(read, Ok(Some(Inbound::Frame(_)))), "{read:?}");
    assert_eq!(logged(&log), [("at once", "lost".to_string())]);
    let lost = lost.unwrap_err();
    assert_eq!(lost.class(), FailureClass::Indeterminate, "it left, outcome unknown: {lost}");
}

/// The writer's task starts the first time a message waits for it: here a
/// reply to the server's `ping`, before the client sent anything.
#[tokio::test]
async fn a_reply_to_the_server_starts_the_writer() {
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let _connection = Connection::start(client, Arc::new(NoInbound));
    let Transport { sender, mut receiver } = server;
    sender.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#.into()).await.expect("sent");
    let reply = tokio::time::timeout(std::time::Duration::from_secs(20), receiver.recv()).await;
    let Ok(Ok(Some(Inbound::Frame(text)))) = reply else { panic!("no reply: {reply:?}") };
    assert_eq!(text, r#"{"jsonrpc":"2.0","id":"p","result":{}}"#);
}

/// A receiver that keeps the [`DirectSink`] the connection hands it and
/// passes everything else through.
struct SinkHolder {
    inner: Box<dyn crate::transport::MessageReceiver>,
    sink: Arc<Mutex<Option<DirectSink>>>,
}

#[async_trait]
impl crate::transport::MessageReceiver for SinkHolder {
    async fn recv(&mut self) -> Result<Option<Inbound>, Error> {
        self.inner.recv().await
    }
    fn take_direct_sink(&mut self, sink: DirectSink) {
        *self.sink.lock().unwrap() = Some(sink);
    }
}

#[tokio::test]
async fn a_reply_sink_completes_its_call_from_the_transports_task() {
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let held = Arc::new(Mutex::new(None));
    let receiver = Box::new(SinkHolder { inner: client.receiver, sink: held.clone() });
    let connection = Connection::start(Transport { sender: client.sender, receiver }, Arc::new(NoInbound));
    let sink = held.lock().unwrap().clone().expect("the connection gave its sink before reading");
    let Transport { sender: _server_sender, receiver: mut from_client } = server;

    // The server never answers on the wire: the reply reaches the call
    // through the sink alone.
    let call = tokio::spawn({
        let connection = connection.clone();
        async move { connection.request("tools/call", Map::new()).await }
    });
    let Some(Inbound::Frame(text)) = from_client.recv().await.unwrap() else { panic!("the request") };
    let Ok(Message::Request(request)) = Message::parse(&text) else { panic!("a request: {text}") };
    let reply = Message::Response(Response::result(request.id.clone(), serde_json::json!({"via": "sink"})));
    assert!(sink.deliver(&reply.to_json()));
    assert_eq!(call.await.unwrap().unwrap(), serde_json::json!({"via": "sink"}));

    // A notification is handled as the reader would; a server request
    // (served on a task of the reader's) or a text that does not parse is
    // left for the reader.
    let notification = Message::Notification(Notification::new("notifications/message", None));
    assert!(sink.deliver(&notification.to_json()));
    let request = Message::Request(Request::new(RequestId::Number(5), "ping", None));
    assert!(!sink.deliver(&request.to_json()));
    assert!(!sink.deliver("{not json"));
    // A reply to a call nobody waits for is taken (and ignored, as the
    // reader would).
    let stray = Message::Response(Response::result(RequestId::Number(999), Value::Null));
    assert!(sink.deliver(&stray.to_json()));

    // Once the connection is closed nothing is taken.
    connection.close().await;
    assert!(!sink.deliver(&reply.to_json()));
}

/// A sender that leaves each lone request to an exchange for the caller
/// to run: it notes the task that ran it, sends the request, and, when
/// `hang`, then never ends; an exchange dropped before its end is counted.
struct LeavesExchanges {
    inner: Arc<dyn MessageSender>,
    ran_on: Arc<Mutex<Vec<Option<tokio::task::Id>>>>,
    dropped_unfinished: Arc<std::sync::atomic::AtomicUsize>,
    hang: bool,
}

/// Counts its exchange as dropped unfinished unless `finished`.
struct Unfinished(Arc<std::sync::atomic::AtomicUsize>, bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl MessageSender for LeavesExchanges {
    async fn send(&self, message: String) -> Result<(), Error> {
        self.inner.send(message).await
    }
    fn try_send_request(
        &self,
        message: String,
        _headers: crate::transport::WireHeaders,
    ) -> Result<Option<crate::transport::Exchange>, (String, crate::transport::WireHeaders)> {
        let (inner, ran_on, hang) = (self.inner.clone(), self.ran_on.clone(), self.hang);
        let unfinished = Unfinished(self.dropped_unfinished.clone(), false);
        Ok(Some(crate::transport::Exchange::new(async move {
            let mut unfinished = unfinished;
            ran_on.lock().unwrap().push(tokio::task::try_id());
            let _ = inner.send(message).await;
            if hang {
                std::future::pending::<()>().await;
            }
            unfinished.1 = true;
        })))
    }
    async fn close(&self) -> Result<(), Error> {
        self.inner.close().await
    }
}

/// A connection over [`LeavesExchanges`] to a peer that answers every
/// request with `{}` (when `answer`; else it reads and never answers),
/// what the sender notes, and the peer.
#[allow(clippy::type_complexity)]
fn leaving_exchanges(
    hang: bool,
    answer: bool,
) -> (
    Connection,
    Arc<Mutex<Vec<Option<tokio::task::Id>>>>,
    Arc<std::sync::atomic::AtomicUsize>,
    tokio::task::JoinHandle<()>,
) {
    let (client, server) = crate::transport::memory::duplex(1 << 20);
    let (ran_on, dropped) = (Arc::default(), Arc::default());
    let sender = LeavesExchanges {
        inner: client.sender,
        ran_on: Arc::clone(&ran_on),
        dropped_unfinished: Arc::clone(&dropped),
        hang,
    };
    let connection = Connection::start(
        Transport { sender: Arc::new(sender), receiver: client.receiver },
        Arc::new(NoInbound),
    );
    let peer = peer_answering(server, answer);
    (connection, ran_on, dropped, peer)
}

#[tokio::test]
async fn a_lone_requests_exchange_runs_on_the_callers_task() {
    let (connection, ran_on, dropped, _peer) = leaving_exchanges(false, true);
    let caller = tokio::spawn(async move {
        connection.request("lone", Map::new()).await.expect("answered");
        tokio::task::id()
    });
    let caller = caller.await.expect("the caller");
    assert_eq!(*ran_on.lock().unwrap(), [Some(caller)]);
    assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn an_exchange_outliving_its_reply_runs_on_and_one_given_up_is_dropped() {
    let (connection, ran_on, dropped, _peer) = leaving_exchanges(true, true);
    let call = connection.request("never ends", Map::new());
    // The peer answers, but the exchange never ends: the reply still
    // reaches the caller, and what is left of the exchange goes on a task
    // of its own, not dropped.
    call.await.expect("answered");
    assert_eq!(ran_on.lock().unwrap().len(), 1);
    assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 0);
    // A caller that gives up before its reply drops the exchange with it.
    let (connection, _ran_on, dropped, _peer) = leaving_exchanges(true, false);
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(10),
        connection.request("given up", Map::new()),
    )
    .await;
    assert!(gave_up.is_err(), "no answer: the caller gives up");
    assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 1);
}
