//! `Binding::events`: a stream of a real binding's events.

use mcp_stack::protocol::Root;
use mcp_stack::EventItem;
use mcp_stack::{handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Definition, Event, State};
use serde_json::json;

#[tokio::test]
async fn a_stream_sees_the_warnings_and_state_changes_of_a_demo_binding() {
    let mut definition = Definition::new("demo", mcp_stack::demo::factory());
    definition = definition.with_capabilities(AllowedCapabilities::default().with_roots(true));
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

/// Every progress report a call asked for reaches the call's own sink and,
/// as `Event::RequestProgress`, the binding's events; a call that asked for
/// none produces none.
#[tokio::test]
async fn progress_a_call_asked_for_reaches_the_events_too() {
    use std::sync::{Arc, Mutex};
    let recorded = Arc::new(Mutex::new(Vec::new()));
    let sink = recorded.clone();
    let handlers = Handlers::default().with_events(move |e| sink.lock().unwrap().push(e));
    let binding =
        Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), handlers).await.unwrap();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let call_sink = reports.clone();
    let opts = CallOpts::default().with_progress(move |p| call_sink.lock().unwrap().push(p));
    binding.call_tool("count", json!({"steps": 3}), opts).await.unwrap();
    binding.call_tool("count", json!({"steps": 2}), CallOpts::default()).await.unwrap();
    // The events are delivered on their own task: wait (bounded, tokio's
    // clock) for the three.
    let progress = |recorded: &Arc<Mutex<Vec<Event>>>| -> Vec<(f64, Option<String>)> {
        recorded
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                Event::RequestProgress { progress, .. } => {
                    Some((progress.progress, progress.message.clone()))
                }
                _ => None,
            })
            .collect()
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while progress(&recorded).len() < 3 || reports.lock().unwrap().len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "events: {:?}", progress(&recorded));
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    binding.close().await;
    let from_sink: Vec<(f64, Option<String>)> =
        reports.lock().unwrap().iter().map(|p| (p.progress, p.message.clone())).collect();
    assert_eq!(progress(&recorded), from_sink);
    assert_eq!(from_sink.len(), 3, "the second call asked for no progress: {from_sink:?}");
    assert_eq!(from_sink[2], (3.0, Some("step 3 of 3".to_string())));
}
