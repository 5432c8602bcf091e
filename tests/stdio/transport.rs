//! The stdio transport against real child processes (`sh`, `env`).

use crate::support::process_group::{group_members, wait_group_empty};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_stack::connection::NoInbound;
use mcp_stack::era::Dialer;
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::{ConnectConfig, Inbound, Transport, TransportFactory};
use mcp_stack::FailureClass;
use tokio::time::timeout;

/// The longest prefix of a damaged frame that is kept, as `Inbound::Damaged`
/// documents it.
const DAMAGED_PREFIX_BYTES: usize = 256;

/// The bound on every wait in these tests.
const LIMIT: Duration = Duration::from_secs(20);

async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    timeout(LIMIT, fut).await.unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// A shell loop that echoes each line it reads.
const ECHO: &str = r#"while IFS= read -r l; do printf '%s\n' "$l"; done"#;

fn sh(script: &str) -> StdioFactory {
    StdioFactory::new("sh").arg("-c").arg(script).shutdown_grace(Duration::from_millis(500))
}

async fn connect(factory: &StdioFactory, config: &ConnectConfig) -> Transport {
    within("connect", factory.connect(config)).await.expect("connect")
}

async fn recv(transport: &mut Transport) -> Option<Inbound> {
    within("recv", transport.receiver.recv()).await.expect("recv")
}

fn frame(text: &str) -> Option<Inbound> {
    Some(Inbound::Frame(text.to_string()))
}

#[tokio::test]
async fn echo_round_trip_and_clean_close() {
    let factory = sh(ECHO);
    assert_eq!(factory.kind(), "stdio");
    assert_eq!(factory.redacted_origin().as_str(), "stdio:sh");
    let mut t = connect(&factory, &ConnectConfig::new("echo")).await;

    for i in 0..3 {
        let msg = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
        within("send", t.sender.send(msg.clone())).await.expect("send");
        assert_eq!(recv(&mut t).await, frame(&msg));
    }
    // A message that would split its frame is refused before any I/O.
    let err = within("send", t.sender.send("a\nb".into())).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Framing);

    within("close", t.sender.close()).await.expect("close");
    within("close again", t.sender.close()).await.expect("close is idempotent");
    assert_eq!(recv(&mut t).await, None);
    let err = within("send", t.sender.send("{}".into())).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
}

#[tokio::test]
async fn close_kills_the_whole_process_group() {
    let factory = sh(r#"sleep 1000 & exec sh -c 'while IFS= read -r l; do printf "%s\n" "$l"; done'"#);
    let mut t = connect(&factory, &ConnectConfig::new("group")).await;
    within("send", t.sender.send("{}".into())).await.unwrap();
    assert_eq!(recv(&mut t).await, frame("{}"));
    let pgid = factory.last_pid().expect("a child was started");
    let before = group_members(pgid);
    assert!(before.len() >= 2, "expected the shell and its sleep in group {pgid}: {before:?}");

    within("close", t.sender.close()).await.expect("close");
    let left = wait_group_empty(pgid).await;
    assert!(left.is_empty(), "processes left in group {pgid}: {left:?}");
    assert_eq!(recv(&mut t).await, None);
}

#[tokio::test]
async fn close_kills_the_group_even_when_the_child_already_exited() {
    // The direct child exits at once; its background sleep lives on, holding
    // stdout open.
    let factory = sh("sleep 1000 & exit 0");
    let t = connect(&factory, &ConnectConfig::new("orphan")).await;
    let pgid = factory.last_pid().unwrap();
    within("close", t.sender.close()).await.expect("close");
    let left = wait_group_empty(pgid).await;
    assert!(left.is_empty(), "processes left in group {pgid}: {left:?}");
}

#[tokio::test]
async fn dropping_without_close_kills_the_group() {
    let factory = sh(r#"sleep 1000 & exec sleep 1000"#);
    let t = connect(&factory, &ConnectConfig::new("dropped")).await;
    let pgid = factory.last_pid().unwrap();
    // Wait until the background sleep is there too.
    within("group starts", async {
        while group_members(pgid).len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    drop(t);
    let left = wait_group_empty(pgid).await;
    assert!(left.is_empty(), "processes left in group {pgid}: {left:?}");
}

#[tokio::test]
async fn the_child_sees_only_the_allowlist_and_its_definition() {
    // Safe in edition 2021; the name is unique to this test.
    std::env::set_var("MCP_STACK_TEST_PARENT_SECRET", "hunter2");
    let factory = StdioFactory::new("env").env("MCP_STACK_TEST_DEFINED", "from-definition");
    let mut t = connect(&factory, &ConnectConfig::new("env")).await;

    let mut vars = Vec::new();
    loop {
        match within("recv", t.receiver.recv()).await {
            Ok(Some(Inbound::Frame(line))) => vars.push(line),
            Ok(Some(other)) => panic!("unexpected {other:?}"),
            // `env` exits after printing: the end of stdout is an error.
            Ok(None) | Err(_) => break,
        }
    }
    within("close", t.sender.close()).await.unwrap();

    assert!(vars.iter().any(|v| v.starts_with("PATH=")), "{vars:?}");
    assert!(vars.iter().any(|v| v == "MCP_STACK_TEST_DEFINED=from-definition"), "{vars:?}");
    assert!(!vars.iter().any(|v| v.contains("hunter2")), "{vars:?}");
    for var in &vars {
        let name = var.split('=').next().unwrap();
        assert!(
            !name.starts_with("CARGO") && !name.starts_with("RUST") && name != "MCP_STACK_TEST_PARENT_SECRET",
            "{name} is not on the allowlist, yet the child has it"
        );
    }
}

/// What `npx` and `uvx` need behind a TLS-intercepting proxy reaches the
/// child; the proxy's credentials never show in an error or `Debug`.
#[tokio::test]
async fn certificate_and_proxy_variables_reach_the_child_and_credentials_stay_hidden() {
    const PASSWORD: &str = "s3cr3t-proxy-pw";
    let proxy = format!("http://alice:{PASSWORD}@127.0.0.1:9/");
    let certs = [
        ("NODE_EXTRA_CA_CERTS", "/etc/ssl/corp/node.pem"),
        ("SSL_CERT_FILE", "/etc/ssl/corp/bundle.pem"),
        ("SSL_CERT_DIR", "/etc/ssl/corp/certs"),
        ("REQUESTS_CA_BUNDLE", "/etc/ssl/corp/requests.pem"),
        ("CURL_CA_BUNDLE", "/etc/ssl/corp/curl.pem"),
        ("PIP_CERT", "/etc/ssl/corp/pip.pem"),
    ];
    // Safe in edition 2021; no other test of this binary reads these.
    for (key, value) in certs {
        std::env::set_var(key, value);
    }
    std::env::set_var("HTTPS_PROXY", &proxy);
    std::env::set_var("no_proxy", "localhost,127.0.0.1");

    let factory = StdioFactory::new("env");
    let mut t = connect(&factory, &ConnectConfig::new("env")).await;
    let mut vars = Vec::new();
    // `env` prints and exits: the end of stdout is an error, and ends the loop.
    while let Ok(Some(Inbound::Frame(line))) = within("recv", t.receiver.recv()).await {
        vars.push(line);
    }
    within("close", t.sender.close()).await.unwrap();
    for (key, value) in certs {
        assert!(vars.contains(&format!("{key}={value}")), "{key}: {vars:?}");
    }
    assert!(vars.contains(&format!("HTTPS_PROXY={proxy}")), "the proxy is passed on: {vars:?}");
    assert!(vars.contains(&"no_proxy=localhost,127.0.0.1".to_string()), "{vars:?}");

    // While the factory lives, the proxy value and its password are secrets.
    assert!(!format!("{factory:?}").contains(PASSWORD));
    let e = mcp_stack::Error::new(FailureClass::TransportClosed, format!("via {proxy} and {PASSWORD}"));
    assert!(!e.message().contains(PASSWORD), "{}", e.message());
    // NO_PROXY holds host names: never hidden.
    let e = mcp_stack::Error::new(FailureClass::TransportClosed, "localhost,127.0.0.1");
    assert_eq!(e.message(), "localhost,127.0.0.1");

    // A server that quotes the proxy on stderr and never starts: the
    // startup timeout quotes its stderr, without the credentials.
    let script =
        r#"echo "npm error request via $HTTPS_PROXY failed: SELF_SIGNED_CERT_IN_CHAIN" >&2; exec sleep 30"#;
    let dialer = Dialer::new(Arc::new(sh(script)), ConnectConfig::new("npx"), Arc::new(NoInbound))
        .timeout(Duration::from_secs(1));
    let err = within("dial", dialer.dial()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::StartupTimeout);
    assert!(err.message().contains("SELF_SIGNED_CERT_IN_CHAIN"), "{}", err.message());
    assert!(!err.message().contains(PASSWORD), "{}", err.message());
    drop(factory);
}

/// A stdio server that does not finish starting is explained: what it last
/// wrote on stderr, and how to give it the environment it may lack.
#[tokio::test]
async fn a_startup_timeout_says_what_the_server_last_wrote_and_names_env() {
    let script = "printf 'starting\\nnpm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY\\n' >&2; exec sleep 30";
    let started = std::time::Instant::now();
    let dialer = Dialer::new(Arc::new(sh(script)), ConnectConfig::new("npx"), Arc::new(NoInbound))
        .timeout(Duration::from_secs(1));
    let err = within("dial", dialer.dial()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10), "bounded: {:?}", started.elapsed());
    assert_eq!(err.class(), FailureClass::StartupTimeout);
    let message = err.message();
    assert!(message.contains("did not finish within 1 s"), "{message}");
    assert!(
        message.contains("last stderr: starting | npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY"),
        "{message}"
    );
    assert!(
        message.contains("--env KEY=VALUE") && message.contains("an allowlist of this environment"),
        "{message}"
    );

    // Silence is said too.
    let dialer = Dialer::new(Arc::new(sh("exec sleep 30")), ConnectConfig::new("quiet"), Arc::new(NoInbound))
        .timeout(Duration::from_secs(1));
    let err = within("dial", dialer.dial()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::StartupTimeout);
    assert!(err.message().contains("wrote nothing on stderr"), "{}", err.message());
}

#[tokio::test]
async fn a_flood_of_stderr_never_stalls_the_child() {
    // 5 MiB of stderr in 100-byte lines before the first reply: a pipe that
    // nobody drained would block the child long before it answered.
    let script = format!(r#"yes "$(printf '%099d' 7)" | head -c 5242880 >&2; echo ready; {ECHO}"#);
    let lines = Arc::new(AtomicUsize::new(0));
    let mut config = ConnectConfig::new("chatty");
    let counter = lines.clone();
    config.diagnostics = Some(Arc::new(move |line: String| {
        assert!(line.len() <= 1024);
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    let factory = sh(&script);
    let mut t = connect(&factory, &config).await;

    assert_eq!(recv(&mut t).await, frame("ready"));
    within("send", t.sender.send(r#"{"id":1}"#.into())).await.unwrap();
    assert_eq!(recv(&mut t).await, frame(r#"{"id":1}"#));

    let full_lines = 5 * 1024 * 1024 / 100;
    within("diagnostics", async {
        while lines.load(Ordering::Relaxed) < full_lines {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    within("close", t.sender.close()).await.unwrap();
}

#[tokio::test]
async fn a_child_that_dies_is_explained_by_status_and_stderr() {
    let factory = sh("echo starting >&2; echo boom >&2; exit 3");
    let mut t = connect(&factory, &ConnectConfig::new("dies")).await;
    let err = within("recv", t.receiver.recv()).await.expect_err("the end of stdout is an error");
    assert_eq!(err.class(), FailureClass::TransportClosed);
    let message = err.to_string();
    assert!(message.contains("status 3"), "{message}");
    assert!(message.contains("boom"), "{message}");
    assert!(message.contains("stdio:sh"), "{message}");
    assert!(!message.contains("exit 3"), "arguments must not leak: {message}");
    // The connection stays over.
    assert_eq!(recv(&mut t).await, None);
    within("close", t.sender.close()).await.unwrap();
}

#[tokio::test]
async fn a_child_is_explained_by_its_status_while_a_grandchild_holds_stderr() {
    // The grandchild keeps stderr open (only stderr) after the child exits.
    let factory = sh("echo boom >&2; sleep 1000 </dev/null >/dev/null & exit 4");
    let mut t = connect(&factory, &ConnectConfig::new("held")).await;
    let err = within("recv", t.receiver.recv()).await.expect_err("the end of stdout is an error");
    let message = err.to_string();
    assert!(message.contains("status 4"), "the exit status, not a wait for stderr's end: {message}");
    assert!(message.contains("boom"), "{message}");
    within("close", t.sender.close()).await.unwrap();
}

#[tokio::test]
async fn a_program_that_cannot_start_is_a_connect_error() {
    let factory = StdioFactory::new("/nonexistent/mcp-server-binary").arg("--token=sekrit");
    let err = within("connect", factory.connect(&ConnectConfig::new("missing"))).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::TransportClosed);
    assert!(!err.to_string().contains("sekrit"));
}

#[tokio::test]
async fn damaged_lines_are_skipped_and_the_next_is_delivered() {
    let script = r#"printf '\377\376{"id":1}\n'; echo '{"first":true}'; head -c 5000 /dev/zero | tr '\0' a; printf '\n{"second":true}\n'; exec sleep 1000"#;
    let mut config = ConnectConfig::new("damaged");
    config.max_frame_bytes = 1024;
    let factory = sh(script);
    let mut t = connect(&factory, &config).await;

    match recv(&mut t).await {
        Some(Inbound::Damaged { reason, prefix, bytes }) => {
            assert!(reason.contains("UTF-8"), "{reason}");
            assert!(prefix.ends_with(r#"{"id":1}"#), "{prefix}");
            assert_eq!(bytes, 10);
        }
        other => panic!("expected a damaged frame, got {other:?}"),
    }
    assert_eq!(recv(&mut t).await, frame(r#"{"first":true}"#));
    match recv(&mut t).await {
        Some(Inbound::Damaged { reason, prefix, bytes }) => {
            assert!(reason.contains("max_frame_bytes"), "{reason}");
            assert!(prefix.len() <= DAMAGED_PREFIX_BYTES);
            assert_eq!(bytes, 5000);
        }
        other => panic!("expected a damaged frame, got {other:?}"),
    }
    assert_eq!(recv(&mut t).await, frame(r#"{"second":true}"#));
    let pgid = factory.last_pid().unwrap();
    within("close", t.sender.close()).await.unwrap();
    assert!(wait_group_empty(pgid).await.is_empty());
}

#[tokio::test]
async fn from_command_line_runs_the_split_words() {
    let factory =
        StdioFactory::from_command_line(r#"sh -c 'printf "%s|%s\n" "$0" "$1"' 'arg zero' "arg one""#)
            .unwrap()
            .shutdown_grace(Duration::from_millis(200));
    assert_eq!(factory.redacted_origin().as_str(), "stdio:sh");
    let mut t = connect(&factory, &ConnectConfig::new("cmdline")).await;
    assert_eq!(recv(&mut t).await, frame("arg zero|arg one"));
    within("close", t.sender.close()).await.unwrap();
}

#[tokio::test]
async fn a_message_sent_at_once_is_written_whole_or_not_at_all() {
    // The child reads nothing until the file exists: its stdin pipe fills.
    let gate = std::env::temp_dir().join(format!("mcp-stack-try-send-{}", std::process::id()));
    let _ = std::fs::remove_file(&gate);
    let script = r#"i=0; while [ ! -e "$0" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; exec cat"#;
    let factory = sh(script).arg(&gate);
    let mut t = connect(&factory, &ConnectConfig::new("at-once")).await;

    // A send through the writer's path first: then the pipe is known to
    // have room.
    let first = r#"{"n":"first"}"#.to_string();
    within("send", t.sender.send(first.clone())).await.expect("send");

    // What a pipe cannot take in one atomic write (a frame over
    // `PIPE_BUF`, 4096 bytes on Linux) is declined, untouched.
    assert_eq!(t.sender.try_send("a\nb".into()), Err("a\nb".to_string()));
    let long = "x".repeat(4096);
    assert_eq!(t.sender.try_send(long.clone()), Err(long));
    let mut taken = vec![first];
    let mut declined = None;
    for n in 0..200 {
        let message = format!(r#"{{"n":{n},"pad":"{}"}}"#, "p".repeat(1000));
        match t.sender.try_send(message.clone()) {
            Ok(()) => taken.push(message),
            Err(back) => {
                assert_eq!(back, message, "a declined message comes back whole");
                declined = Some(back);
                break;
            }
        }
    }
    let declined = declined.expect("a full pipe declines");
    assert!(taken.len() > 10, "the pipe took {} messages", taken.len());

    // The child reads: every message taken arrives whole and in order, and
    // nothing of the declined one, which the writer's path then sends.
    std::fs::write(&gate, b"").expect("open the gate");
    within("send", t.sender.send(declined.clone())).await.expect("send");
    taken.push(declined);
    for message in &taken {
        assert_eq!(recv(&mut t).await, frame(message));
    }
    within("close", t.sender.close()).await.expect("close");
    let _ = std::fs::remove_file(&gate);
}
