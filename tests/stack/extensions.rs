//! Extension negotiation (SEP-2133) in both eras: what a definition
//! declares (`ClientExtensions`, `experimental`) and what the handlers
//! imply (`sampling.context`) go into `initialize` on the legacy era and
//! into every request's client capabilities on 2026-07-28; the server's
//! extensions are read from `initialize` and `server/discover` into the
//! session and the catalog; a bad declaration fails the connect with
//! `invalid_config` before anything is sent.

use mcp_stack::handlers::{Handlers, SampleResult};
use mcp_stack::{Binding, ClientExtensions, Definition, FailureClass, ProtocolChoice};
use serde_json::{json, Value};

use crate::support::modern::server;

const UI: &str = "io.modelcontextprotocol/ui";
const SKILLS: &str = "io.modelcontextprotocol/skills";

/// A server of either era that declares the Skills extension.
fn declaring_server() -> (mcp_stack::transport::memory::MemoryFactory, crate::support::modern::Seen) {
    let capabilities =
        json!({ "tools": {}, "resources": {}, "extensions": { SKILLS: { "directoryRead": true } } });
    server(move |method, _| match method {
        "initialize" => Some(json!({ "result": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "serverInfo": { "name": "ext", "version": "1" }
        }})),
        "server/discover" => Some(json!({ "result": {
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": capabilities,
            "serverInfo": { "name": "ext", "version": "1" }
        }})),
        "tools/list" => Some(json!({ "result": { "tools": [] } })),
        "resources/list" => Some(json!({ "result": { "resources": [] } })),
        _ => Some(json!({ "result": {} })),
    })
}

fn definition(factory: mcp_stack::transport::memory::MemoryFactory, protocol: ProtocolChoice) -> Definition {
    let mut definition = Definition::new("ext", factory);
    definition = definition.with_protocol(protocol);
    definition = definition.with_extensions(ClientExtensions::default().apps().skills());
    definition =
        definition.with_experimental(json!({ "x-trace": { "level": 2 } }).as_object().unwrap().clone());
    let capabilities = definition.capabilities().with_sampling(true);
    definition = definition.with_capabilities(capabilities);
    definition
}

fn handlers() -> Handlers {
    Handlers::default()
        .sampling(|_| async move { Ok(SampleResult::text("model", "hi")) })
        .sampling_context(true)
}

fn expect_declared(capabilities: &Value) {
    assert_eq!(capabilities["extensions"][UI], json!({ "mimeTypes": ["text/html;profile=mcp-app"] }));
    assert_eq!(capabilities["extensions"][SKILLS], json!({}));
    assert_eq!(capabilities["experimental"], json!({ "x-trace": { "level": 2 } }));
    assert_eq!(capabilities["sampling"]["context"], json!({}));
}

#[tokio::test(start_paused = true)]
async fn the_legacy_era_declares_extensions_in_initialize_and_reads_the_servers() {
    let (factory, seen) = declaring_server();
    let binding = Binding::connect(definition(factory, ProtocolChoice::Legacy), handlers()).await.unwrap();
    expect_declared(&seen.requests("initialize")[0]["params"]["capabilities"]);
    assert!(binding.session().capabilities.declares_extension(SKILLS));
    assert_eq!(binding.catalog().capabilities.extensions.as_ref().unwrap()[SKILLS]["directoryRead"], true);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn the_modern_era_declares_extensions_on_every_request_and_reads_the_servers() {
    let (factory, seen) = declaring_server();
    let binding = Binding::connect(definition(factory, ProtocolChoice::Modern), handlers()).await.unwrap();
    let lists = seen.requests("tools/list");
    assert!(!lists.is_empty());
    expect_declared(&lists[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]);
    assert!(binding.session().capabilities.declares_extension(SKILLS));
    assert!(binding.catalog().capabilities.declares_extension(SKILLS));
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn a_bad_declaration_fails_the_connect_before_anything_is_sent() {
    for extensions in [
        ClientExtensions::default().with("no-slash", Default::default()),
        ClientExtensions::default().with("io.modelcontextprotocol/tasks", Default::default()),
    ] {
        let (factory, seen) = declaring_server();
        let mut definition = definition(factory, ProtocolChoice::Legacy);
        definition = definition.with_extensions(extensions);
        let e = Binding::connect(definition, handlers()).await.unwrap_err();
        assert_eq!(e.class(), FailureClass::InvalidConfig, "{e}");
        assert!(seen.methods().is_empty(), "nothing sent: {:?}", seen.methods());
    }
}
