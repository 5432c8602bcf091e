//! Connect-to-ready over HTTPS when several bindings reach one origin:
//! one pool per origin (the default since issue 22) against a client per
//! binding (what every connection had before: its own pool, its own TLS
//! handshakes).
//!
//! A TLS server on loopback (a throw-away CA from `tests/support/tls.rs`,
//! a P-256 certificate) answers the 2025-11-25 handshake and `tools/list`.
//! Each round connects `--bindings` bindings one after the other, keeping
//! the earlier ones open, and times each `Binding::connect` (discovery,
//! `initialize`, the catalog's first listing: ready). The two modes
//! alternate round by round, so that the shared machine's noise falls on
//! both alike. It prints the median time to ready of the first binding
//! and of the later ones, per mode, and their ratio.
//!
//! ```text
//! cargo bench --bench connect                        # the table
//! cargo bench --bench connect -- --rounds 21 --bindings 8
//! ```
//!
//! On the 2-core development VM (2026-12-02, the defaults: 6 bindings,
//! 15 rounds), one run:
//!
//! ```text
//! connect to ready, ms          one pool/origin      client each    ratio
//! first binding                           48.98            43.92     1.11
//! later bindings                           1.13            43.26     0.03
//! ```
//!
//! Almost all of a first connection's time is making the client (reqwest
//! loading the platform's roots for its verifier) and the TLS handshake;
//! the protocol itself (discovery, `initialize`, the first listing) takes
//! about a millisecond. With a client per connection, every binding, and
//! every reconnection, paid that; with a pool per origin only the first
//! does.

#[path = "support.rs"]
mod support;
#[path = "../tests/support/tls.rs"]
#[allow(dead_code)]
mod tls;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use mcp_stack::handlers::Handlers;
use mcp_stack::transport::http::HttpBuilder;
use mcp_stack::{Binding, Definition};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::{arg, median};

/// A legacy-era server in one handler: JSON replies, no session.
async fn mcp(Json(body): Json<Value>) -> Response {
    let Some(id) = body.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let result = match body["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        Some("ping") => json!({}),
        _ => {
            let error = json!({"code": -32601, "message": "Method not found"});
            return Json(json!({"jsonrpc": "2.0", "id": id, "error": error})).into_response();
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    SharedPool,
    ClientEach,
}

/// One round: `n` bindings connected one after the other; the time each
/// took to be ready.
async fn round(url: &str, ca_pem: &str, n: usize, mode: Mode) -> Vec<Duration> {
    let mut bindings = Vec::new();
    let mut times = Vec::new();
    for i in 0..n {
        let builder = match mode {
            Mode::SharedPool => HttpBuilder::new(url).no_proxy().root_certificates_pem(ca_pem),
            Mode::ClientEach => {
                mcp_stack::transport::http::install_crypto_provider();
                let root = reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("the CA");
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .tcp_nodelay(true)
                    .tls_certs_merge([root])
                    .build()
                    .expect("a client");
                HttpBuilder::new(url).client(client)
            }
        };
        let factory = builder.listen(false).build().expect("a factory");
        let started = Instant::now();
        let binding = Binding::connect(Definition::new(format!("b{i}"), factory), Handlers::default())
            .await
            .expect("ready");
        times.push(started.elapsed());
        bindings.push(binding);
    }
    for binding in bindings {
        binding.close().await;
    }
    times
}

fn main() {
    let rounds = arg("--rounds", 15).max(1);
    let n = arg("--bindings", 6).max(2);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let ca = tls::TestCa::new("bench CA");
        let url = tls::serve_mcp_tls(Router::new().route("/mcp", post(mcp)), &ca, None).await;
        let pem = ca.pem();
        // Warm up: the platform's roots, the server's first handshakes.
        round(&url, &pem, 2, Mode::SharedPool).await;
        round(&url, &pem, 2, Mode::ClientEach).await;
        let (mut first, mut later) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        for _ in 0..rounds {
            for (slot, mode) in [(0, Mode::SharedPool), (1, Mode::ClientEach)] {
                let times = round(&url, &pem, n, mode).await;
                first[slot].push(times[0].as_secs_f64() * 1e3);
                later[slot].extend(times[1..].iter().map(|t| t.as_secs_f64() * 1e3));
            }
        }
        let [first_shared, first_each] = first.map(median);
        let [later_shared, later_each] = later.map(median);
        println!("HTTPS on loopback, {n} bindings to one origin per round, median of {rounds} rounds");
        println!(
            "{:<28} {:>16} {:>16} {:>8}",
            "connect to ready, ms", "one pool/origin", "client each", "ratio"
        );
        println!(
            "{:<28} {first_shared:>16.2} {first_each:>16.2} {:>8.2}",
            "first binding",
            first_shared / first_each
        );
        println!(
            "{:<28} {later_shared:>16.2} {later_each:>16.2} {:>8.2}",
            "later bindings",
            later_shared / later_each
        );
    });
}
