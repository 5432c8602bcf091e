//! Unit tests of streamable HTTP: resumption delays, what `Debug` and
//! `Display` never show, and the listening task's end (against a local
//! server that offers no listening stream).

use std::time::Duration;

use super::*;

#[test]
fn server_retry_is_exact_and_the_default_backs_off() {
    let p = ResumePolicy::default();
    assert_eq!(p.wait(Some(Duration::from_millis(500)), 1), Duration::from_millis(500));
    assert_eq!(p.wait(Some(Duration::from_millis(500)), 4), Duration::from_millis(500));
    assert_eq!(p.wait(None, 1), Duration::from_secs(1));
    assert_eq!(p.wait(None, 3), Duration::from_secs(4));
    assert_eq!(p.wait(None, 30), Duration::from_secs(30));
}

#[test]
fn debug_never_shows_header_values_or_the_url() {
    let f = StreamableHttpFactory::builder("https://user:pw@host:8443/mcp?key=s3cret")
        .header("Authorization", "Bearer s3cret-token")
        .build()
        .unwrap();
    let shown = format!("{f:?} {f}");
    for secret in ["s3cret", "pw", "user", "/mcp"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert_eq!(f.redacted_origin().as_str(), "https://host:8443");
    let b = StreamableHttpFactory::builder("https://user:pw@host/mcp?key=s3cret").header("X", "s3cret");
    assert!(!format!("{b:?}").contains("s3cret"));
    let e = StreamableHttpFactory::builder("https://host/")
        .header("X", "s3cret\r\nInjected: x")
        .build()
        .unwrap_err();
    assert!(!format!("{e:?} {e}").contains("s3cret"));
}

/// A listening stream the server does not offer (405 to `GET`) ends its
/// task, and the task's handle goes with it: kept, it held the ended task's
/// cell for as long as the binding lived (2.4 KB an idle binding).
#[tokio::test]
async fn an_ended_listener_leaves_no_task_behind() {
    use axum::routing::get;
    let app = axum::Router::new().route("/mcp", get(|| async { axum::http::StatusCode::METHOD_NOT_ALLOWED }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let factory = StreamableHttpFactory::builder(url).no_proxy().build().unwrap();
    let (inbound, _receiver, closed) = inbound_channel();
    let core = factory.core(&ConnectConfig::new("b"), inbound, closed).unwrap();
    core.start_listener();
    assert!(core.listening.lock().unwrap().task.is_some(), "the listener started");
    let ended = async {
        while core.listening.lock().unwrap().live {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), ended).await.expect("the listener ends");
    assert!(core.listening.lock().unwrap().task.is_none(), "the ended task's handle is dropped");
    server.abort();
}
