//! One list entry that nests deeper than the JSON parser goes costs that
//! entry alone, and a discovery whose every page failed is a connect
//! failure, not an empty catalog (issue 13, item 3).

use crate::support::scripted::{id_of, scripted_lists};
use mcp_stack::{handlers::Handlers, Binding, Definition, FailureClass};
use serde_json::{json, Value};

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

/// A tool whose input schema nests `depth` objects deep.
fn deep_tool(name: &str, depth: usize) -> Value {
    let mut schema = json!({"type": "object"});
    for _ in 0..depth {
        schema = json!({"type": "object", "properties": {"x": schema}});
    }
    json!({"name": name, "inputSchema": schema})
}

#[tokio::test]
async fn a_tool_nested_past_the_parser_limit_costs_only_that_tool() {
    let (factory, _rec) = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            let first = req.params.as_ref().and_then(|p| p["cursor"].as_str()).is_none();
            if first {
                // 200 levels of schema: past serde_json's 128 for the frame,
                // and for the entry parsed alone.
                let tools = json!([tool("before"), deep_tool("abyss", 200), tool("after")]);
                wire.reply(&id_of(req), json!({"tools": tools, "nextCursor": "2"}));
            } else {
                // Deep for the frame, not for the entry alone (the catalog's
                // schema depth bound refuses it then).
                let tools = json!([deep_tool("shallower", 62), tool("last")]);
                wire.reply(&id_of(req), json!({"tools": tools}));
            }
        }
    });
    let binding = Binding::connect(Definition::new("deep", factory), Handlers::default()).await.unwrap();
    let c = binding.catalog();
    let names: Vec<&str> = c.tools.iter().map(|t| t.raw_name.as_str()).collect();
    assert_eq!(names, ["after", "before", "last"]);
    let w = c.warnings.join("\n");
    assert!(w.contains("tools/list: page 0: dropped entry 1 (\"abyss\"): it nests deeper than 127"), "{w}");
    assert!(w.contains("\"shallower\": catalog_over_limit: its input schema nests"), "{w}");
    binding.close().await;
}

#[tokio::test]
async fn a_deep_reply_to_another_request_fails_at_once_with_limit_exceeded() {
    let (factory, _rec) = scripted_lists(|wire, req| match req.method.as_str() {
        "tools/list" => wire.reply(&id_of(req), json!({"tools": [tool("t")]})),
        "tools/call" => {
            let mut deep = json!(1);
            for _ in 0..300 {
                deep = json!([deep]);
            }
            wire.reply(&id_of(req), json!({"content": [], "structuredContent": {"v": deep}}));
        }
        _ => {}
    });
    let binding = Binding::connect(Definition::new("deep", factory), Handlers::default()).await.unwrap();
    let opts = mcp_stack::CallOpts::default().with_timeout(std::time::Duration::from_secs(30));
    let err = binding.call_tool("t", json!({}), opts).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::LimitExceeded, "{err}");
    assert!(err.to_string().contains("nests deeper than 127"), "{err}");
    binding.close().await;
}

#[tokio::test]
async fn a_discovery_whose_only_page_failed_is_a_connect_failure() {
    let (factory, _rec) = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            let id = id_of(req);
            wire.raw(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "boom"}}).to_string(),
            );
        }
    });
    let err = Binding::connect(Definition::new("f", factory), Handlers::default()).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::RemoteToolError, "{err}");
    assert!(err.to_string().contains("tools/list: the first page failed"), "{err}");
}

#[tokio::test]
async fn a_first_page_that_is_not_a_list_is_catalog_invalid() {
    for result in [json!([]), json!({"tools": "none"})] {
        let (factory, _rec) = scripted_lists(move |wire, req| {
            if req.method == "tools/list" {
                wire.reply(&id_of(req), result.clone());
            }
        });
        let err = Binding::connect(Definition::new("f", factory), Handlers::default()).await.unwrap_err();
        assert_eq!(err.class(), FailureClass::CatalogInvalid, "{err}");
    }
}

#[tokio::test]
async fn a_server_request_nested_too_deep_is_refused_as_an_invalid_request() {
    let (factory, rec) = scripted_lists(|wire, req| match req.method.as_str() {
        "tools/list" => wire.reply(&id_of(req), json!({"tools": [tool("t")]})),
        "tools/call" => {
            let mut deep = json!(1);
            for _ in 0..200 {
                deep = json!([deep]);
            }
            wire.raw(
                json!({"jsonrpc": "2.0", "id": 900001, "method": "roots/list", "params": {"d": deep}})
                    .to_string(),
            );
            wire.reply(&id_of(req), json!({"content": []}));
        }
        _ => {}
    });
    let binding = Binding::connect(Definition::new("deep", factory), Handlers::default()).await.unwrap();
    binding.call_tool("t", json!({}), mcp_stack::CallOpts::default()).await.unwrap();
    let reply = rec.reply_to(900001).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    binding.close().await;
}
