//! Catalog ingest of `tools/list` pages: a real `Connection` over the
//! in-memory transport, whose server answers each `tools/list` with the next
//! page of the input (pages separated by NUL bytes) as its `result`, and
//! discovery as a binding runs it at connect. On tokio's paused clock, so a
//! reply that never comes costs nothing. Whatever is built keeps the
//! catalog's rules.

use crate::catalog::names::is_valid_model_name;
use crate::catalog::schema::depth;
use crate::config::Limits;
use crate::connection::{Connection, InboundHandler};
use crate::protocol::jsonrpc::Message;
use crate::transport::memory::duplex;
use crate::transport::Inbound;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap()
    })
}

#[derive(Debug)]
struct Quiet;
impl InboundHandler for Quiet {
    fn warning(&self, _text: String) {}
}

/// Serves `data` (pages separated by NUL) as `tools/list` pages and checks
/// the catalog discovery builds from them.
pub fn run(data: &[u8]) {
    let pages: Vec<String> =
        data.split(|b| *b == 0).take(8).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
    let limits = Limits::default()
        .with_max_catalog_pages(8)
        .with_max_catalog_items(32)
        .with_max_schema_depth(8)
        .with_max_schema_bytes(4096);
    runtime().block_on(async move {
        let (client, mut server) = duplex(1 << 20);
        let connection = Connection::start(client, Arc::new(Quiet));
        tokio::spawn(async move {
            let mut pages = pages.into_iter();
            while let Ok(Some(Inbound::Frame(text))) = server.receiver.recv().await {
                let Ok(Message::Request(request)) = Message::parse(&text) else { continue };
                let id = serde_json::to_string(&request.id).unwrap();
                let page = pages.next().unwrap_or_else(|| r#"{"tools":[]}"#.into());
                let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{page}}}"#);
                if server.sender.send(reply).await.is_err() {
                    return;
                }
            }
        });
        let discovery = super::discover_tools(connection.clone(), limits);
        let outcome = tokio::time::timeout(Duration::from_secs(3600), discovery).await;
        if let Ok(Ok(catalog)) = outcome {
            assert!(catalog.tools.len() <= limits.max_catalog_items);
            let mut raw = HashSet::new();
            let mut model = HashSet::new();
            for tool in &catalog.tools {
                assert!(is_valid_model_name(&tool.model_name), "{:?}", tool.model_name);
                assert!(raw.insert(tool.raw_name.clone()), "two tools named {:?}", tool.raw_name);
                assert!(model.insert(tool.model_name.clone()));
                assert!(depth(&tool.input_schema.to_value()) <= limits.max_schema_depth);
            }
            assert!(catalog.tools.windows(2).all(|w| w[0].raw_name < w[1].raw_name));
        }
        connection.close().await;
    });
}
