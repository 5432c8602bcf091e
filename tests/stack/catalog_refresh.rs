//! What a refresh lists again: a refetch of one family is combined with
//! the other families as they were listed, and when the last listing had
//! one family only (nothing was kept of it), every advertised family is
//! listed again.

use crate::support::scripted::{id_of, initialize_result, scripted_all, scripted_lists};
use mcp_stack::{handlers::Handlers, Binding, CallOpts, Definition};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[tokio::test(start_paused = true)]
async fn a_refetch_of_one_family_keeps_the_others_as_listed() {
    let tools = Arc::new(Mutex::new(vec![tool("announce")]));
    let list = tools.clone();
    let (factory, rec) = scripted_all(move |wire, req| match req.method.as_str() {
        "initialize" => {
            let mut init = initialize_result();
            init["capabilities"] = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true}});
            wire.reply(&id_of(req), init);
        }
        "tools/list" => wire.reply(&id_of(req), json!({ "tools": list.lock().unwrap().clone() })),
        "prompts/list" => wire.reply(&id_of(req), json!({"prompts": [{"name": "greet"}]})),
        "tools/call" => {
            list.lock().unwrap().push(tool("added"));
            wire.notify("notifications/tools/list_changed", json!({}));
            wire.reply(&id_of(req), json!({"content": []}));
        }
        _ => {}
    });
    let binding = Binding::connect(Definition::new("kept", factory), Handlers::default()).await.unwrap();
    binding.call_tool("announce", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(rec.find("tools/list").len(), 2);
    assert_eq!(rec.find("prompts/list").len(), 1, "the prompts are combined as listed, not listed again");
    assert!(binding.status().stale_families.is_empty());
    let candidate = binding.candidate().expect("the added tool makes a candidate");
    let names: Vec<&str> = candidate.tools.iter().map(|t| t.raw_name.as_str()).collect();
    assert_eq!(names, ["added", "announce"]);
    let prompts: Vec<&str> = candidate.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, ["greet"]);
    binding.close().await;
}

#[tokio::test(start_paused = true)]
async fn after_a_listing_of_one_family_a_refresh_lists_every_advertised_family_too() {
    // The scripted server advertises tools only, and announces a change to
    // its prompts, which it does not advertise.
    let (factory, rec) = scripted_lists(|wire, req| match req.method.as_str() {
        "tools/list" => wire.reply(&id_of(req), json!({"tools": [tool("announce")]})),
        "prompts/list" => wire.reply(&id_of(req), json!({"prompts": []})),
        "tools/call" => {
            wire.notify("notifications/prompts/list_changed", json!({}));
            wire.reply(&id_of(req), json!({"content": []}));
        }
        _ => {}
    });
    let binding = Binding::connect(Definition::new("one", factory), Handlers::default()).await.unwrap();
    binding.call_tool("announce", json!({}), CallOpts::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // The prompts asked for, and the tools: nothing of them was kept to
    // combine the prompts with.
    assert_eq!(rec.find("prompts/list").len(), 1);
    assert_eq!(rec.find("tools/list").len(), 2);
    // Settled: no refresh follows, and nothing changed.
    assert!(binding.status().stale_families.is_empty());
    assert!(binding.candidate().is_none());
    assert_eq!(binding.catalog().tools.len(), 1);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(rec.find("tools/list").len(), 2);
    binding.close().await;
}
