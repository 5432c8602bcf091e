//! `Definition::client`: what the client tells a server it is, in every
//! handshake a binding runs.

use crate::support::wire;
use mcp_stack::session::ClientIdentity;
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition, Event, FailureClass};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A server that records the `clientInfo` of every `initialize`, and dies
/// on a call of the tool `die`.
fn recording_server(seen: Arc<Mutex<Vec<Value>>>) -> MemoryFactory {
    MemoryFactory::new("recording", move |transport: Transport| {
        let seen = seen.clone();
        tokio::spawn(async move {
            let Transport { sender, mut receiver } = transport;
            while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
                let Some(req) = wire::request(&text) else { continue };
                let params = req.params.clone().unwrap_or(Value::Null);
                let result = match req.method.as_str() {
                    "initialize" => {
                        seen.lock().unwrap().push(params["clientInfo"].clone());
                        json!({
                            "protocolVersion": "2025-11-25",
                            "capabilities": { "tools": {} },
                            "serverInfo": { "name": "recording", "version": "1" },
                        })
                    }
                    "tools/list" => {
                        json!({ "tools": [{ "name": "die", "inputSchema": { "type": "object" } }] })
                    }
                    "tools/call" => return,
                    _ => json!({}),
                };
                let reply = wire::result(&req.id, result);
                if sender.send(reply).await.is_err() {
                    return;
                }
            }
        });
        Ok(())
    })
}

#[tokio::test(start_paused = true)]
async fn the_definitions_client_identity_is_sent_in_every_handshake() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut definition = Definition::new("recorded", recording_server(seen.clone()));
    definition = definition.with_client(ClientIdentity::new("my-agent", "4.2.0").with_title("My Agent"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let handlers = Handlers::default().with_events(move |e| {
        let _ = tx.send(e);
    });
    let binding = Binding::connect(definition, handlers).await.unwrap();
    let err = binding.call_tool("die", json!({}), CallOpts::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Indeterminate);
    let restored = async {
        while let Some(event) = rx.recv().await {
            if matches!(event, Event::ConnectionRestored { .. }) {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), restored).await.expect("reconnected");
    let expected = json!({ "name": "my-agent", "version": "4.2.0", "title": "My Agent" });
    assert_eq!(
        *seen.lock().unwrap(),
        vec![expected.clone(), expected],
        "the first handshake and the reconnect's"
    );
    binding.close().await;
}

#[tokio::test]
async fn by_default_the_client_is_mcp_stack() {
    let identity = ClientIdentity::default();
    assert_eq!(identity.name(), "mcp-stack");
    assert_eq!(identity.version(), env!("CARGO_PKG_VERSION"));
    let mut definition = Definition::new("x", mcp_stack::demo::factory());
    definition = definition.with_client(ClientIdentity::new("", "1"));
    let err = Binding::connect(definition, Handlers::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::InvalidConfig);
}

/// Issue 22, item 6: what a server says of itself in `serverInfo` (its
/// description, website and icons) reaches the host in the session, and in
/// the binding's status as JSON.
#[tokio::test]
async fn the_servers_description_website_and_icons_reach_the_session() {
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {
            "name": "files", "version": "2.0", "title": "Files",
            "description": "Reads and writes the project's files",
            "websiteUrl": "https://files.example.com",
            "icons": [{"src": "https://files.example.com/icon.png", "sizes": ["48x48"]}, {"src": "file:///etc/passwd"}],
        },
    });
    let (factory, _seen) = crate::support::scripted::scripted_with(init, |_, _| {});
    let binding = Binding::connect(Definition::new("files", factory), Handlers::default()).await.unwrap();
    let server = &binding.session().server;
    assert_eq!(server.description.as_deref(), Some("Reads and writes the project's files"));
    assert_eq!(server.website_url.as_deref(), Some("https://files.example.com"));
    assert_eq!(server.icons.len(), 1, "{:?}", server.icons);
    assert_eq!(server.icons[0].sizes.as_deref(), Some(&["48x48".to_string()][..]));
    let status = serde_json::to_value(binding.status()).unwrap();
    assert_eq!(status["server"]["websiteUrl"], "https://files.example.com", "{status}");
    binding.close().await;
}
