//! A host of several in-process bindings: the merged catalog, routing by
//! model name, failing closed, isolation between bindings, events and
//! bounded closing.

use crate::support::tool_server::ToolServer;
use async_trait::async_trait;
use mcp_stack::host::{Host, HostEvent};
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{ConnectConfig, MessageSender, RedactedOrigin, Transport, TransportFactory};
use mcp_stack::{CallOpts, Definition, Error, Event, FailureClass, State};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Counts the `tools/call` requests a binding sends.
#[derive(Clone, Default)]
struct Calls(Arc<AtomicUsize>);

impl Calls {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The demo server, with the client's `tools/call` requests counted and,
/// optionally, a transport whose close never returns.
struct Demo {
    inner: MemoryFactory,
    calls: Calls,
    stuck_close: bool,
}

impl Demo {
    fn counted() -> (Demo, Calls) {
        let calls = Calls::default();
        (Demo { inner: mcp_stack::demo::factory(), calls: calls.clone(), stuck_close: false }, calls)
    }
}

struct CountingSender {
    inner: Arc<dyn MessageSender>,
    calls: Calls,
    stuck_close: bool,
}

#[async_trait]
impl MessageSender for CountingSender {
    async fn send(&self, message: String) -> Result<(), Error> {
        let value: Value = serde_json::from_str(&message).unwrap_or(Value::Null);
        if value["method"] == "tools/call" {
            self.calls.0.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.send(message).await
    }

    async fn close(&self) -> Result<(), Error> {
        if self.stuck_close {
            std::future::pending::<()>().await;
        }
        self.inner.close().await
    }
}

#[async_trait]
impl TransportFactory for Demo {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        self.inner.redacted_origin()
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let Transport { sender, receiver } = self.inner.connect(config).await?;
        let sender = Arc::new(CountingSender {
            inner: sender,
            calls: self.calls.clone(),
            stuck_close: self.stuck_close,
        });
        Ok(Transport { sender, receiver })
    }
}

/// A server that never answers the dial.
struct Hangs;

#[async_trait]
impl TransportFactory for Hangs {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        RedactedOrigin::from_redacted("memory://hangs")
    }

    async fn connect(&self, _config: &ConnectConfig) -> Result<Transport, Error> {
        std::future::pending().await
    }
}

fn text(result: &mcp_stack::ToolResult) -> &str {
    result.content[0].as_text().expect("text content")
}

#[tokio::test]
async fn the_merged_catalog_lists_every_bindings_tools_under_distinct_model_names() {
    let host = Host::new();
    let refused = host
        .add_all(["alpha", "beta", "gamma"].map(|n| Definition::new(n, mcp_stack::demo::factory())))
        .await;
    assert!(refused.is_empty());
    let catalog = host.catalog();
    assert_eq!(catalog.catalogs().len(), 3);
    let per_binding = catalog.catalog("alpha").unwrap().tools.len();
    assert!(per_binding > 0);
    let names: Vec<&str> = catalog.tools().map(|t| t.model_name.as_str()).collect();
    assert_eq!(names.len(), 3 * per_binding);
    let distinct: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(distinct.len(), names.len(), "model names are unique across bindings");
    assert!(names.contains(&"mcp__alpha__echo") && names.contains(&"mcp__gamma__echo"));
    assert!(catalog.collisions().next().is_none());
    // The same snapshot while nothing changes.
    assert!(Arc::ptr_eq(&catalog, &host.catalog()));
    let states: Vec<State> = host.status().iter().map(|s| s.state).collect();
    assert_eq!(states, [State::Ready; 3]);
    host.close().await;
}

#[tokio::test]
async fn a_call_by_model_name_reaches_the_binding_that_lists_it() {
    let (a, a_calls) = Demo::counted();
    let (b, b_calls) = Demo::counted();
    let host = Host::new();
    host.add_all([Definition::new("a", a), Definition::new("b", b)]).await;

    let route = host.route("mcp__b__echo").unwrap();
    assert_eq!((route.binding.as_str(), route.raw_name.as_str(), route.generation), ("b", "echo", 1));
    let result =
        host.call_tool("mcp__b__echo", json!({"message": "to b"}), CallOpts::default()).await.unwrap();
    assert_eq!(text(&result), "to b");
    assert_eq!((a_calls.get(), b_calls.get()), (0, 1));
    host.call_tool("mcp__a__add", json!({"a": 1, "b": 2}), CallOpts::default()).await.unwrap();
    assert_eq!((a_calls.get(), b_calls.get()), (1, 1));
    host.close().await;
}

#[tokio::test]
async fn unknown_removed_and_malformed_names_are_refused_before_any_io() {
    let (a, a_calls) = Demo::counted();
    let (b, b_calls) = Demo::counted();
    let host = Host::new();
    host.add_all([Definition::new("a", a), Definition::new("b", b)]).await;
    let args = || json!({"message": "x"});

    for name in
        ["mcp__a__nope", "mcp__zz__echo", "echo", "MCP__A__ECHO", "not a model name", &"x".repeat(5000)]
    {
        let e = host.call_tool(name, args(), CallOpts::default()).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::NotFound, "{name:.40}: {e}");
        assert!(e.message().len() < 200);
    }
    assert!(host.remove("b").await);
    assert!(!host.remove("b").await);
    let e = host.call_tool("mcp__b__echo", args(), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound);
    assert!(host.catalog().catalog("b").is_none());
    assert_eq!((a_calls.get(), b_calls.get()), (0, 0), "nothing was sent");
    // The other binding is untouched.
    host.call_tool("mcp__a__echo", args(), CallOpts::default()).await.unwrap();
    assert_eq!(host.names(), ["a"]);
    host.close().await;
}

#[tokio::test]
async fn model_names_that_meet_across_bindings_are_refused_for_all_of_them() {
    // `a` + `b__x` and `a__b` + `x` both make mcp__a__b__x.
    let host = Host::new();
    host.add_all([
        Definition::new("a", ToolServer::named(&["b__x", "only_a"]).factory("a")),
        Definition::new("a__b", ToolServer::named(&["x"]).factory("ab")),
        // Equal but for case: refused too (some providers fold case).
        Definition::new("Demo", mcp_stack::demo::factory()),
        Definition::new("demo", mcp_stack::demo::factory()),
    ])
    .await;
    let catalog = host.catalog();
    let collisions: Vec<&str> = catalog.collisions().collect();
    assert!(collisions.contains(&"mcp__a__b__x"), "{collisions:?}");
    assert!(collisions.contains(&"mcp__demo__echo"));
    assert!(!catalog.warnings().is_empty());
    let offered: Vec<&str> = catalog.tools().map(|t| t.model_name.as_str()).collect();
    assert_eq!(offered, ["mcp__a__only_a"], "only the tool no other binding's name meets");

    for name in ["mcp__a__b__x", "mcp__demo__echo", "mcp__Demo__echo"] {
        let e = host.call_tool(name, json!({}), CallOpts::default()).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::ToolUnavailable, "{name}");
    }
    let ok = host.call_tool("mcp__a__only_a", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(text(&ok), "a:only_a");
    host.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_hanging_connect_delays_nobody_but_itself() {
    let host = Host::new();
    let mut events = host.events();
    let start = Instant::now();
    let mut hangs = Definition::new("hangs", Hangs);
    let timeouts = hangs.timeouts().with_startup(Duration::from_secs(5));
    hangs = hangs.with_timeouts(timeouts);
    host.add(hangs).unwrap();
    host.add(Definition::new("a", mcp_stack::demo::factory())).unwrap();
    host.add(Definition::new("b", mcp_stack::demo::factory())).unwrap();

    host.ready("a").await.unwrap();
    host.ready("b").await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
    assert_eq!(host.status_of("hangs").unwrap().state, State::Starting);
    let result =
        host.call_tool("mcp__b__echo", json!({"message": "meanwhile"}), CallOpts::default()).await.unwrap();
    assert_eq!(text(&result), "meanwhile");
    assert!(start.elapsed() < Duration::from_secs(1));

    host.settled().await;
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(5) && waited < Duration::from_secs(6), "{waited:?}");
    let status = host.status_of("hangs").unwrap();
    assert_eq!(status.state, State::Failed);
    assert_eq!(status.failure.unwrap().class, FailureClass::StartupTimeout);
    assert_eq!(host.ready("hangs").await.unwrap_err().class(), FailureClass::StartupTimeout);
    let e = host.call_tool("mcp__hangs__echo", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound);

    let failed = async {
        loop {
            if let Some(HostEvent::ConnectFailed { binding, class, .. }) = events.recv().await {
                return (binding, class);
            }
        }
    };
    let (binding, class) = tokio::time::timeout(Duration::from_secs(5), failed).await.unwrap();
    assert_eq!((binding.as_str(), class), ("hangs", FailureClass::StartupTimeout));
    host.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_on_one_binding_does_not_hold_up_another() {
    let host = Host::new();
    host.add_all([
        Definition::new("slow", mcp_stack::demo::factory()),
        Definition::new("fast", mcp_stack::demo::factory()),
    ])
    .await;
    let start = Instant::now();
    let slow = {
        let host = host.clone();
        tokio::spawn(async move {
            host.call_tool("mcp__slow__sleep", json!({"ms": 30_000}), CallOpts::default()).await
        })
    };
    tokio::task::yield_now().await;
    let fast =
        host.call_tool("mcp__fast__echo", json!({"message": "now"}), CallOpts::default()).await.unwrap();
    assert_eq!(text(&fast), "now");
    assert!(start.elapsed() < Duration::from_secs(1));
    // Removing the busy binding ends its call and leaves the other serving.
    assert!(host.remove("slow").await);
    let ended = slow.await.unwrap().unwrap_err();
    assert_eq!(ended.class(), FailureClass::Shutdown);
    assert!(start.elapsed() < Duration::from_secs(30));
    host.call_tool("mcp__fast__echo", json!({"message": "still"}), CallOpts::default()).await.unwrap();
    host.close().await;
}

#[tokio::test(start_paused = true)]
async fn settled_waits_for_every_connect_and_counts_a_removed_one_as_done() {
    let host = Host::builder().build();
    let hanging = |name: &str| {
        let definition = Definition::new(name, Hangs);
        let timeouts = definition.timeouts().with_startup(Duration::from_secs(600));
        definition.with_timeouts(timeouts)
    };
    host.add(hanging("first")).unwrap();
    host.add(hanging("second")).unwrap();
    host.add(Definition::new("fine", mcp_stack::demo::factory())).unwrap();
    host.ready("fine").await.unwrap();
    let settled = tokio::spawn({
        let host = host.clone();
        async move { host.settled().await }
    });
    // Removing one of the two connects leaves the other to wait for.
    assert!(host.remove("first").await);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(!settled.is_finished(), "second is still connecting");
    assert!(host.remove("second").await);
    tokio::time::timeout(Duration::from_secs(1), settled).await.expect("settled").unwrap();
    // Settled at once when nothing connects, and after a connect fails.
    host.settled().await;
    let late = hanging("late");
    let timeouts = late.timeouts().with_startup(Duration::from_secs(5));
    host.add(late.with_timeouts(timeouts)).unwrap();
    tokio::time::timeout(Duration::from_secs(10), host.settled()).await.expect("the startup timeout ends it");
    assert_eq!(host.ready("late").await.unwrap_err().class(), FailureClass::StartupTimeout);
    host.close().await;
}

#[tokio::test(start_paused = true)]
async fn close_is_bounded_even_when_a_binding_never_finishes_closing() {
    let host = Host::builder().close_timeout(Duration::from_secs(2)).build();
    let stuck = Demo { inner: mcp_stack::demo::factory(), calls: Calls::default(), stuck_close: true };
    let mut hangs = Definition::new("hangs", Hangs);
    let timeouts = hangs.timeouts().with_startup(Duration::from_secs(600));
    hangs = hangs.with_timeouts(timeouts);
    host.add(hangs).unwrap();
    host.add(Definition::new("fine", mcp_stack::demo::factory())).unwrap();
    host.add(Definition::new("stuck", stuck)).unwrap();
    // Not `settled`: `hangs` is still connecting.
    host.ready("fine").await.unwrap();
    host.ready("stuck").await.unwrap();

    let start = Instant::now();
    let report = host.close().await;
    let took = start.elapsed();
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(3), "{took:?}");
    assert_eq!(report.closed, ["fine"]);
    assert_eq!(report.timed_out, ["stuck"]);
    assert_eq!(report.abandoned, ["hangs"]);

    assert!(host.names().is_empty());
    let e = host.add(Definition::new("late", mcp_stack::demo::factory())).unwrap_err();
    assert_eq!(e.class(), FailureClass::Shutdown);
    let e = host.call_tool("mcp__fine__echo", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound);
    // Idempotent, and quick the second time.
    assert_eq!(host.close().await, Default::default());
}

#[tokio::test]
async fn every_bindings_events_arrive_on_one_stream() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    // A handler the host's handlers already had still runs.
    let handlers = mcp_stack::handlers::Handlers::default().with_events(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let host = Host::builder().handlers(handlers).build();
    let mut events = host.events();
    host.add_all([
        Definition::new("a", mcp_stack::demo::factory()),
        Definition::new("b", mcp_stack::demo::factory()),
    ])
    .await;
    let mut added = Vec::new();
    let mut ready = Vec::new();
    let collect = async {
        while ready.len() < 2 {
            match events.recv().await.unwrap() {
                HostEvent::Added { binding, .. } => added.push(binding),
                HostEvent::Binding(Event::StateChanged { binding, to: State::Ready, .. }) => {
                    ready.push(binding)
                }
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), collect).await.unwrap();
    added.sort();
    ready.sort();
    assert_eq!((added, ready), (vec!["a".to_string(), "b".into()], vec!["a".to_string(), "b".into()]));
    assert_eq!(events.missed(), 0);
    assert!(seen.load(Ordering::SeqCst) > 0);
    host.remove("a").await;
    let removed = async {
        loop {
            if let Some(HostEvent::Removed { binding, .. }) = events.recv().await {
                return binding;
            }
        }
    };
    assert_eq!(tokio::time::timeout(Duration::from_secs(10), removed).await.unwrap(), "a");
    host.close().await;
}

#[tokio::test]
async fn a_reader_that_falls_behind_loses_events_with_a_count_and_blocks_nobody() {
    let host = Host::builder().event_capacity(2).build();
    let mut events = host.events();
    // Nobody reads while three bindings connect and serve calls.
    host.add_all(["a", "b", "c"].map(|n| Definition::new(n, mcp_stack::demo::factory()))).await;
    for name in ["mcp__a__echo", "mcp__b__echo", "mcp__c__echo"] {
        host.call_tool(name, json!({"message": "x"}), CallOpts::default()).await.unwrap();
    }
    let mut read = 0;
    while events.try_recv().is_some() {
        read += 1;
    }
    assert!(read <= 2, "{read}");
    assert!(events.missed() > 0);
    host.close().await;
}

#[tokio::test]
async fn candidates_stay_per_binding_and_are_adopted_per_binding() {
    let one = ToolServer::named(&["first"]);
    let two = ToolServer::named(&["first"]);
    let host = Host::new();
    host.add_all([Definition::new("one", one.factory("one")), Definition::new("two", two.factory("two"))])
        .await;
    one.set(&["first", "second"]);
    host.binding("one").unwrap().refresh_catalog().await.unwrap();

    let candidates = host.candidates();
    assert_eq!(candidates.len(), 1);
    assert_eq!((candidates[0].binding.as_str(), candidates[0].generation), ("one", 2));
    // Not adopted yet: the new tool is not routable.
    let e = host.call_tool("mcp__one__second", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(e.class(), FailureClass::NotFound);
    // Adopting a generation the other binding never had is refused by it.
    assert!(host.adopt("two", 2).is_err());
    assert_eq!(host.adopt("nobody", 2).unwrap_err().class(), FailureClass::NotFound);
    host.adopt("one", 2).unwrap();
    let result = host.call_tool("mcp__one__second", json!({}), CallOpts::default()).await.unwrap();
    assert_eq!(text(&result), "one:second");
    assert_eq!(host.catalog().catalog("two").unwrap().generation, 1);
    assert!(host.candidates().is_empty());
    host.close().await;
}

#[tokio::test]
async fn each_binding_is_made_by_the_hosts_connector() {
    let made = Arc::new(Mutex::new(Vec::new()));
    let log = made.clone();
    let host = Host::builder()
        .connector(move |mut definition, handlers| {
            log.lock().unwrap().push(definition.name().to_string());
            definition = definition.with_allow_parallel_calls(true);
            mcp_stack::Binding::connect(definition, handlers)
        })
        .build();
    host.add_all([
        Definition::new("a", mcp_stack::demo::factory()),
        Definition::new("b", mcp_stack::demo::factory()),
    ])
    .await;
    let mut made = made.lock().unwrap().clone();
    made.sort();
    assert_eq!(made, ["a", "b"]);
    host.close().await;
}

/// A connector that takes a second of (paused) time per binding, and the
/// most bindings it saw connecting at once.
fn slow_connector(
    active: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
) -> impl Fn(
    Definition,
    mcp_stack::handlers::Handlers,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<mcp_stack::Binding, Error>> + Send>>
       + Send
       + Sync
       + 'static {
    move |definition, handlers| {
        let (active, most) = (active.clone(), most.clone());
        Box::pin(async move {
            let now = active.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(1)).await;
            active.fetch_sub(1, Ordering::SeqCst);
            mcp_stack::Binding::connect(definition, handlers).await
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_bound_on_concurrent_connects_takes_bindings_in_turns() {
    let definitions = |n: usize| (0..n).map(|i| Definition::new(format!("s{i}"), mcp_stack::demo::factory()));
    let run = |host: Host, n: usize, most: Arc<AtomicUsize>| async move {
        let started = Instant::now();
        assert!(host.add_all(definitions(n)).await.is_empty());
        assert!(host.status().iter().all(|s| s.state == State::Ready), "{:?}", host.status());
        host.close().await;
        (most.load(Ordering::SeqCst), started.elapsed())
    };
    let counted = || (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));

    // The default: 64 at once, so 70 bindings take two turns of a second.
    let (active, most) = counted();
    let host = Host::builder().connector(slow_connector(active, most.clone())).build();
    let (most, took) = run(host, 70, most).await;
    assert_eq!(most, 64);
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(3), "{took:?}");

    // No bound: all seventy at once.
    let (active, most) = counted();
    let host = Host::builder()
        .connector(slow_connector(active, most.clone()))
        .max_concurrent_connects(usize::MAX)
        .build();
    let (most, took) = run(host, 70, most).await;
    assert_eq!(most, 70);
    assert!(took < Duration::from_secs(2), "{took:?}");

    // At most three: in turns of a second each, every binding ready, and
    // the startup timeout (here 1.5 s) counted from a binding's turn.
    let (active, most) = counted();
    let host =
        Host::builder().connector(slow_connector(active, most.clone())).max_concurrent_connects(3).build();
    let started = Instant::now();
    let timeouts = mcp_stack::Timeouts::default().with_startup(Duration::from_millis(1500));
    assert!(host.add_all(definitions(7).map(|d| d.with_timeouts(timeouts))).await.is_empty());
    assert_eq!(most.load(Ordering::SeqCst), 3);
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(3) && took < Duration::from_secs(4), "{took:?}");
    assert!(host.status().iter().all(|s| s.state == State::Ready), "{:?}", host.status());
    assert_eq!(host.names().len(), 7);
    host.close().await;
}

/// The demo server behind a connect that takes a second of (paused) time,
/// counting the connects under way at once, and whose connections all end
/// when the server "restarts".
#[derive(Clone)]
struct Restarts {
    active: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    restart: tokio::sync::watch::Sender<u64>,
    /// What it says its connection origin is (none: as a memory transport).
    origin: Option<&'static str>,
}

impl Restarts {
    fn new() -> Self {
        Restarts {
            active: Arc::default(),
            most: Arc::default(),
            restart: tokio::sync::watch::channel(0).0,
            origin: None,
        }
    }

    /// A server at the network origin `origin`.
    fn at(origin: &'static str) -> Self {
        Restarts { origin: Some(origin), ..Restarts::new() }
    }
}

/// A receiver that ends cleanly when its server restarts.
struct EndsOnRestart {
    inner: Box<dyn mcp_stack::transport::MessageReceiver>,
    restart: tokio::sync::watch::Receiver<u64>,
}

#[async_trait]
impl mcp_stack::transport::MessageReceiver for EndsOnRestart {
    async fn recv(&mut self) -> Result<Option<mcp_stack::transport::Inbound>, Error> {
        tokio::select! {
            _ = self.restart.changed() => Ok(None),
            inbound = self.inner.recv() => inbound,
        }
    }
}

#[async_trait]
impl TransportFactory for Restarts {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn redacted_origin(&self) -> RedactedOrigin {
        RedactedOrigin::from_redacted("memory://restarts")
    }

    fn connection_origin(&self) -> Option<RedactedOrigin> {
        self.origin.map(RedactedOrigin::from_redacted)
    }

    async fn connect(&self, config: &ConnectConfig) -> Result<Transport, Error> {
        let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(1)).await;
        self.active.fetch_sub(1, Ordering::SeqCst);
        let Transport { sender, receiver } = mcp_stack::demo::factory().connect(config).await?;
        let mut restart = self.restart.subscribe();
        restart.mark_unchanged();
        Ok(Transport { sender, receiver: Box::new(EndsOnRestart { inner: receiver, restart }) })
    }
}

#[tokio::test(start_paused = true)]
async fn bindings_a_host_connected_redial_in_its_turns() {
    // Seven bindings to one server, connected three at a time; then the
    // server restarts under all of them: the redials take the same turns,
    // not all seven at once.
    let server = Restarts::new();
    let host = Host::builder().max_concurrent_connects(3).build();
    let definitions = (0..7).map(|i| Definition::new(format!("s{i}"), server.clone()));
    assert!(host.add_all(definitions).await.is_empty());
    assert_eq!(server.most.load(Ordering::SeqCst), 3);
    assert!(host.status().iter().all(|s| s.state == State::Ready), "{:?}", host.status());

    // Every binding is ready again after three turns of a second (the
    // first redial is at once).
    let (most, took) = restart(&host, &server).await;
    assert_eq!(most, 3, "at most three redials at once");
    assert!(took >= Duration::from_secs(3) && took < Duration::from_secs(4), "{took:?}");
    host.close().await;
}

/// Restarts `server` under `host`'s bindings: the most redials to it at
/// once, and how long until every binding was ready again.
async fn restart(host: &Host, server: &Restarts) -> (usize, Duration) {
    server.most.store(0, Ordering::SeqCst);
    server.restart.send_modify(|n| *n += 1);
    let took = ready_again(host).await;
    (server.most.load(Ordering::SeqCst), took)
}

/// Until every binding of `host` is ready, looking every 100 ms of
/// (paused) time, at most 100 times; how long that took.
async fn ready_again(host: &Host) -> Duration {
    let started = Instant::now();
    let mut looks = 0;
    while !(started.elapsed() > Duration::from_millis(100)
        && host.status().iter().all(|s| s.state == State::Ready))
    {
        looks += 1;
        assert!(looks < 100, "not ready again: {:?}", host.status());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    started.elapsed()
}

#[tokio::test(start_paused = true)]
async fn bindings_to_one_origin_connect_and_redial_in_that_origins_turns() {
    // Seven bindings to origin a, two at a time, and three to origin b:
    // b's bindings do not wait behind a's, whose queue holds none of the
    // host's turns (three here).
    let (a, b) = (Restarts::at("http://a.example"), Restarts::at("http://b.example"));
    let host = Host::builder().max_concurrent_connects(3).max_concurrent_connects_per_origin(2).build();
    let definitions = (0..7)
        .map(|i| Definition::new(format!("a{i}"), a.clone()))
        .chain((0..3).map(|i| Definition::new(format!("b{i}"), b.clone())));
    for definition in definitions {
        host.add(definition).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let ready: Vec<String> =
        host.status().into_iter().filter(|s| s.state == State::Ready).map(|s| s.binding).collect();
    assert_eq!(ready, ["a0", "a1", "b0"], "two of a and one of b in the first second");
    host.settled().await;
    assert_eq!(a.most.load(Ordering::SeqCst), 2);
    assert!(b.most.load(Ordering::SeqCst) <= 2);
    assert!(host.status().iter().all(|s| s.state == State::Ready), "{:?}", host.status());

    // a restarts under its seven bindings: they redial two at a time, in
    // four turns of a second (the first redial is at once).
    let (most, took) = restart(&host, &a).await;
    assert_eq!(most, 2, "at most two redials to a at once");
    assert!(took >= Duration::from_secs(4) && took < Duration::from_secs(5), "{took:?}");
    host.close().await;
}

#[tokio::test(start_paused = true)]
async fn by_default_four_bindings_to_one_origin_connect_at_once() {
    let server = Restarts::at("http://a.example");
    let host = Host::new();
    assert!(host.add_all((0..10).map(|i| Definition::new(format!("s{i}"), server.clone()))).await.is_empty());
    assert_eq!(server.most.load(Ordering::SeqCst), 4);
    // Without an origin (a process of its own, say), only the host's 64.
    let server = Restarts::new();
    let host = Host::new();
    assert!(host.add_all((0..10).map(|i| Definition::new(format!("s{i}"), server.clone()))).await.is_empty());
    assert_eq!(server.most.load(Ordering::SeqCst), 10);
    host.close().await;
}

#[test]
fn an_http_server_has_its_origin_as_connection_origin_and_a_stdio_one_none() {
    let http = mcp_stack::transport::http::HttpBuilder::new("https://user:secret@mcp.example:8443/s/1?key=k")
        .build()
        .unwrap();
    assert_eq!(
        http.connection_origin().map(|o| o.as_str().to_string()).as_deref(),
        Some("https://mcp.example:8443")
    );
    let stdio = mcp_stack::transport::stdio::StdioFactory::new("server");
    assert!(stdio.connection_origin().is_none());
}

#[tokio::test]
async fn definitions_the_host_cannot_take_are_refused_when_added() {
    let host = Host::new();
    host.add(Definition::new("a", mcp_stack::demo::factory())).unwrap();
    let e = host.add(Definition::new("a", mcp_stack::demo::factory())).unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig);
    let e = host.add(Definition::new("not valid!", mcp_stack::demo::factory())).unwrap_err();
    assert_eq!(e.class(), FailureClass::InvalidConfig);
    host.settled().await;
    assert_eq!(host.names(), ["a"]);
    host.close().await;
}

#[tokio::test]
async fn user_layers_apply_per_binding() {
    // Each binding gets its own layer, made by the connector: it tags the
    // tool calls it sees with the binding's name.
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let log = seen.clone();
    let host = Host::builder()
        .connector(move |definition, handlers| {
            let (log, name) = (log.clone(), definition.name().to_string());
            let layer = tower::util::MapRequestLayer::new(move |req: mcp_stack::McpRequest| {
                if let Some(tool) = req.tool_name() {
                    log.lock().unwrap().push((name.clone(), tool.to_string()));
                }
                req
            });
            mcp_stack::Binding::builder(definition).handlers(handlers).layer(layer).connect()
        })
        .build();
    let refused = host
        .add_all([
            Definition::new("a", mcp_stack::demo::factory()),
            Definition::new("b", mcp_stack::demo::factory()),
        ])
        .await;
    assert!(refused.is_empty());
    host.call_tool("mcp__a__echo", json!({ "message": "1" }), CallOpts::default()).await.unwrap();
    host.call_tool("mcp__b__add", json!({ "a": 1, "b": 2 }), CallOpts::default()).await.unwrap();
    host.call_tool("mcp__a__add", json!({ "a": 3, "b": 4 }), CallOpts::default()).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let want = [("a", "echo"), ("b", "add"), ("a", "add")].map(|(b, t)| (b.to_string(), t.to_string()));
    assert_eq!(seen, want, "each call went through its own binding's layer only");
    host.close().await;
}
