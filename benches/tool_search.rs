//! Tool search over the test catalog: quality and cost of the built-in
//! ranker beside a plain BM25 baseline (issue 44). A bench program, not a
//! timed test: `cargo bench --bench tool_search` prints two tables.
//!
//! - **Quality**: recall@1/@5/@10 and MRR on the labelled query sets of
//!   `tests/fixtures/tool_search/` (`dev`, `holdout`, `holdout_hard`: see its
//!   README for how each was written), for the built-in
//!   [`LexicalRanker`] and [`Bm25Ranker`] (BM25 over name, description and
//!   parameter names, the same tokenizer, no expansion).
//! - **Cost**: index build, search latency (p50, p99 over every query five
//!   times), replacing one server's tools, and the resident memory the
//!   index adds, at the catalog's 1,005 tools and at ten copies of it
//!   (10,050 tools, servers renamed).
//!
//! - **Tokens per turn**: the test catalog served by 70 in-memory servers
//!   to one `Host`, converted for OpenAI (strict), Anthropic and Gemini:
//!   every definition (`ToolExposure::All`) against a deferred first turn
//!   (`search_tools` and `read_result` only), tokens estimated at 4 bytes
//!   of JSON.
//!
//! `cargo bench --bench tool_search -- --misses holdout_hard` also prints
//! the queries whose tool is not in the top 5, with what came first.

use std::time::{Duration, Instant};

use mcp_stack::host::Host;
use mcp_stack::providers::exposure::{self, Deferral, ToolExposure, ToolSession};
use mcp_stack::providers::{anthropic, gemini, openai};
use mcp_stack::search::{Bm25Ranker, LexicalRanker, ToolDocument, ToolRanker};
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use mcp_stack::Definition;
use serde_json::{json, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tool_search");

struct Query {
    text: String,
    expected: Vec<(String, String)>,
}

fn load_catalog() -> Vec<ToolDocument> {
    let raw = std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).expect("catalog.json");
    let v: Value = serde_json::from_str(&raw).expect("valid catalog");
    let mut docs = Vec::new();
    for server in v["servers"].as_array().expect("servers") {
        let name = server["name"].as_str().expect("server name");
        for tool in server["tools"].as_array().expect("tools") {
            let model = format!("mcp__{name}__{}", tool["name"].as_str().unwrap_or_default());
            docs.push(ToolDocument::from_mcp_tool(name, &model, tool).expect("tool"));
        }
    }
    docs
}

fn load_queries(split: &str) -> Vec<Query> {
    let raw = std::fs::read_to_string(format!("{FIXTURES}/queries_{split}.json")).expect("queries");
    let v: Vec<Value> = serde_json::from_str(&raw).expect("valid queries");
    v.iter()
        .map(|q| Query {
            text: q["query"].as_str().expect("query").to_owned(),
            expected: q["expected"]
                .as_array()
                .expect("expected")
                .iter()
                .map(|e| (e["server"].as_str().unwrap().to_owned(), e["tool"].as_str().unwrap().to_owned()))
                .collect(),
        })
        .collect()
}

struct Metrics {
    r1: f64,
    r5: f64,
    r10: f64,
    mrr: f64,
}

fn evaluate(ranker: &dyn ToolRanker, queries: &[Query], show_misses: bool) -> Metrics {
    let (mut r1, mut r5, mut r10, mut mrr) = (0.0, 0.0, 0.0, 0.0);
    for q in queries {
        let hits = ranker.search(&q.text, 10);
        let rank = hits.iter().position(|h| q.expected.iter().any(|(s, t)| *s == h.server && *t == h.name));
        if let Some(r) = rank {
            mrr += 1.0 / (r as f64 + 1.0);
            r1 += f64::from(r < 1);
            r5 += f64::from(r < 5);
            r10 += 1.0;
        }
        if show_misses && rank.is_none_or(|r| r >= 5) {
            println!("miss {:?} (rank {:?}), wanted {:?}", q.text, rank.map(|r| r + 1), q.expected[0]);
            for h in hits.iter().take(3) {
                println!("    {:6.2} {}/{}  {}", h.score, h.server, h.name, h.why());
            }
        }
    }
    let n = queries.len() as f64;
    Metrics { r1: r1 / n, r5: r5 / n, r10: r10 / n, mrr: mrr / n }
}

fn percentiles(ranker: &dyn ToolRanker, queries: &[&str]) -> (Duration, Duration) {
    let mut times = Vec::new();
    for _ in 0..5 {
        for q in queries {
            let t = Instant::now();
            std::hint::black_box(ranker.search(q, 10));
            times.push(t.elapsed());
        }
    }
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

/// Resident memory of this process, in KiB (Linux; 0 elsewhere).
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4
}

/// A server that answers `initialize` and lists `tools`; nothing else.
fn listing_server(tools: Vec<Value>) -> MemoryFactory {
    MemoryFactory::new("catalog", move |transport: Transport| {
        let tools = tools.clone();
        tokio::spawn(async move {
            let Transport { sender, mut receiver } = transport;
            while let Ok(Some(Inbound::Frame(text))) = receiver.recv().await {
                let message: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
                    continue;
                };
                let result = match method {
                    "initialize" => json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": { "tools": {} },
                        "serverInfo": { "name": "catalog", "version": "1" },
                    }),
                    "tools/list" => json!({ "tools": tools }),
                    "server/discover" => {
                        let reply = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "method not found" } });
                        if sender.send(reply.to_string()).await.is_err() {
                            break;
                        }
                        continue;
                    }
                    _ => json!({}),
                };
                if sender
                    .send(json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        Ok(())
    })
}

fn tokens_of(tools: &[Value]) -> usize {
    serde_json::to_string(tools).map_or(0, |t| t.len()).div_ceil(exposure::BYTES_PER_TOKEN)
}

/// Tokens per turn for the test catalog, every definition against a
/// deferred first turn, for each provider.
fn tokens_per_turn() {
    let raw = std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).expect("catalog.json");
    let catalog: Value = serde_json::from_str(&raw).expect("valid catalog");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let host = Host::new();
        let definitions: Vec<Definition> = catalog["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .map(|s| {
                let name: String = s["name"]
                    .as_str()
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                    .take(32)
                    .collect();
                Definition::new(name, listing_server(s["tools"].as_array().cloned().unwrap_or_default()))
            })
            .collect();
        let failed = host.add_all(definitions).await;
        assert!(failed.is_empty(), "{failed:?}");
        let merged = host.catalog();
        let deferred = ToolSession::new(ToolExposure::Deferred(Deferral::default()));
        let first_turn = deferred.offered(&merged);
        println!();
        println!(
            "Tokens per turn: {} tools from {} servers, every definition against a deferred first turn",
            merged.tools().count(),
            merged.catalogs().len()
        );
        println!("  {:<20} {:>8} {:>10} {:>8}", "provider", "tools", "All", "Deferred");
        let strict = openai::Options::chat().strict(true);
        let rows = [
            (
                "OpenAI (strict)",
                openai::tools(merged.tools(), &strict).tools,
                [
                    openai::tools(first_turn.tools.iter().copied(), &strict).tools,
                    vec![exposure::openai_search_tool(), exposure::openai_read_result_tool()],
                ]
                .concat(),
            ),
            (
                "Anthropic",
                anthropic::tools(merged.tools()).tools,
                [
                    anthropic::tools(first_turn.tools.iter().copied()).tools,
                    vec![exposure::anthropic_search_tool(), exposure::anthropic_read_result_tool()],
                ]
                .concat(),
            ),
            (
                "Gemini",
                gemini::tools(merged.tools()).tools,
                [
                    gemini::tools(first_turn.tools.iter().copied()).tools,
                    vec![exposure::gemini_search_tool(), exposure::gemini_read_result_tool()],
                ]
                .concat(),
            ),
        ];
        for (provider, all, deferred) in rows {
            println!(
                "  {:<20} {:>8} {:>10} {:>8}",
                provider,
                all.len(),
                tokens_of(&all),
                tokens_of(&deferred)
            );
        }
        host.close().await;
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let misses = args.iter().position(|a| a == "--misses").and_then(|i| args.get(i + 1)).cloned();
    let catalog = load_catalog();
    let lexical = LexicalRanker::build(catalog.clone());
    let baseline = Bm25Ranker::build(catalog.clone());

    println!("Quality: {} tools from {} server sets", catalog.len(), {
        let mut servers: Vec<&str> = catalog.iter().map(|d| d.server.as_str()).collect();
        servers.dedup();
        servers.len()
    });
    println!(
        "  {:<13} {:<18} {:>4} {:>6} {:>6} {:>6} {:>6}",
        "queries", "ranker", "n", "R@1", "R@5", "R@10", "MRR"
    );
    for split in ["dev", "holdout", "holdout_hard"] {
        let queries = load_queries(split);
        for (name, ranker) in [("built-in", &lexical as &dyn ToolRanker), ("BM25 baseline", &baseline)] {
            let show = misses.as_deref() == Some(split) && name == "built-in";
            let m = evaluate(ranker, &queries, show);
            println!(
                "  {:<13} {:<18} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
                split,
                name,
                queries.len(),
                m.r1,
                m.r5,
                m.r10,
                m.mrr
            );
        }
    }

    let mut texts: Vec<String> = Vec::new();
    for split in ["dev", "holdout", "holdout_hard"] {
        texts.extend(load_queries(split).into_iter().map(|q| q.text));
    }
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    println!();
    println!("Cost (built-in ranker; {} queries, each 5 times)", texts.len());
    println!(
        "  {:>7} {:>10} {:>10} {:>10} {:>16} {:>12}",
        "tools", "build", "p50", "p99", "replace 1 server", "index memory"
    );
    for copies in [1usize, 10] {
        let mut docs = Vec::with_capacity(catalog.len() * copies);
        for copy in 0..copies {
            for d in &catalog {
                let mut d = d.clone();
                if copy > 0 {
                    d.server = format!("{}_{copy}", d.server);
                }
                docs.push(d);
            }
        }
        let before = resident_kib();
        let t = Instant::now();
        let mut ranker = LexicalRanker::build(docs);
        let build = t.elapsed();
        let memory = resident_kib().saturating_sub(before);
        let (p50, p99) = percentiles(&ranker, &texts);
        let github: Vec<ToolDocument> = catalog.iter().filter(|d| d.server == "github").cloned().collect();
        let t = Instant::now();
        ranker.replace_server("github", github);
        let replace = t.elapsed();
        println!(
            "  {:>7} {:>10.1?} {:>10.1?} {:>10.1?} {:>16.1?} {:>9} KiB",
            ranker.len(),
            build,
            p50,
            p99,
            replace,
            memory
        );
    }
    tokens_per_turn();
}
