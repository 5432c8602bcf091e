//! `Binding::events`: a stream of a real binding's events.

use mcp_stack::events::EventItem;
use mcp_stack::protocol::roots::Root;
use mcp_stack::{Binding, CallOpts, ClientCapabilities, Definition, Event, Handlers, State};
use serde_json::json;

#[tokio::test]
async fn a_stream_sees_the_warnings_and_state_changes_of_a_demo_binding() {
    let mut definition = Definition::new("demo", mcp_stack::demo::factory());
    definition.capabilities = ClientCapabilities { roots: true, ..ClientCapabilities::default() };
    let handlers =
        Handlers::default().with_roots(vec![Root::new("file:///tmp"), Root::new("https://x.test/")]);
    let binding = Binding::connect(definition, handlers).await.unwrap();
    let mut events = binding.events();
    let mut other = binding.events();

    // The server asks for the roots; the binding leaves out the one that
    // is not a file:// URI, with a warning.
    binding.call_tool("roots", json!({}), CallOpts::default()).await.unwrap();
    binding.close().await;

    let mut seen = Vec::new();
    while let Some(item) = events.recv().await {
        let EventItem::Event(event) = item else { panic!("missed events: {item:?}") };
        let closed = matches!(event, Event::StateChanged { to: State::Closed, .. });
        seen.push(event);
        if closed {
            break;
        }
    }
    let summary: Vec<String> = seen
        .iter()
        .map(|event| match event {
            Event::Warning { binding, text, .. } => format!("{binding} warning: {text}"),
            Event::StateChanged { binding, from, to, .. } => format!("{binding} {from} -> {to}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "demo warning: left out a root that is not a file:// URI: https://x.test/",
            "demo ready -> closing",
            "demo closing -> closed",
        ]
    );
    // A second stream saw the same.
    for expected in &seen {
        assert_eq!(other.recv().await.as_ref(), Some(&EventItem::Event(expected.clone())));
    }
}
