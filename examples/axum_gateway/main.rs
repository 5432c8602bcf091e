//! An axum app that holds bindings in its state and exposes their tools over
//! HTTP: `POST /tools/{name}` calls a tool on the demo server's binding.
//!
//! ```text
//! cargo run --example axum_gateway                  # listens on 127.0.0.1 at a free port
//! cargo run --example axum_gateway -- --port 8080
//! curl -s -X POST http://127.0.0.1:8080/tools/echo -d '{"message": "hi"}'
//! curl -s -X POST http://127.0.0.1:8080/tools/add -d '{"a": 2, "b": 3}'
//! curl -si -X POST http://127.0.0.1:8080/tools/sleep -d '{"ms": 60000}'   # 502, class deadline
//! ```
//!
//! The binding is built with the default stack, so what the app serves is
//! already bounded: a 5 s request deadline (the demo's `sleep` shows it),
//! the default result limits, and one tool call at a time. Ctrl-C stops it
//! and closes the bindings. The routes are in `router.rs`.

mod router;

use mcp_stack::{handlers::Handlers, Binding, Definition, Timeouts};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 0u16;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => port = args.next().ok_or("--port needs a number")?.parse()?,
            other => return Err(format!("unknown argument {other:?} (try --port N)").into()),
        }
    }

    let mut demo = Definition::new("demo", mcp_stack::demo::factory());
    demo = demo.with_timeouts(Timeouts::default().with_request(Duration::from_secs(5)));
    let gateway = router::Gateway::new([Binding::connect(demo, Handlers::default()).await?], "demo");

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    println!("try: curl -s -X POST http://{addr}/tools/echo -d '{{\"message\": \"hi\"}}'");
    axum::serve(listener, router::router(gateway.clone()))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    gateway.close().await;
    Ok(())
}
