//! Tool search over the test catalog: quality and cost of the built-in
//! ranker beside a plain BM25 baseline (issue 44). A bench program, not a
//! timed test: `cargo bench --bench tool_search` prints two tables.
//!
//! - **Quality**: recall@1/@5/@10 and MRR on the labelled query sets of
//!   `tests/fixtures/tool_search/` (`dev`, `holdout`, `holdout_hard`: see its
//!   README for how each was written), for the built-in
//!   [`LexicalRanker`] and [`Bm25Ranker`] (BM25 over name, description and
//!   parameter names, the same tokenizer, no expansion), and for two BM25
//!   crates of crates.io fed the same fields, to decide between our scoring
//!   and a crate's (issue 44): `bm25` (its search engine, its English
//!   tokenizer with stemming and stopwords, one text per tool: name split
//!   into words, description, parameter names) and `probly-search` (its
//!   BM25 over three fields, name, description and parameter names, boosted
//!   3 / 1 / 0.6 as the built-in ranker weighs them, a lowercasing
//!   tokenizer written here since the crate has none). tantivy, 122 crates
//!   of build, is measured the same way by `bench/tantivy-search/`.
//! - **Cost**: index build, search latency (p50, p99 over every query five
//!   times), replacing one server's tools, and the heap memory the index
//!   holds (counted by the bench's global allocator), at the catalog's 1,005 tools and at ten copies of it
//!   (10,050 tools, servers renamed), for the built-in ranker and each
//!   crate.
//!
//! - **Tokens per turn**: the test catalog served by 70 in-memory servers
//!   to one `Host`, converted for OpenAI (strict), Anthropic and Gemini:
//!   every definition (`ToolExposure::All`) against a deferred first turn
//!   (`search_tools` and `read_result` only), tokens estimated at 4 bytes
//!   of JSON.
//!
//! `cargo bench --bench tool_search -- --misses holdout_hard` also prints
//! the queries whose tool is not in the top 5, with what came first.

use std::alloc::{GlobalAlloc, Layout, System};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use mcp_stack::host::Host;
use mcp_stack::providers::exposure::{self, Deferral, ToolExposure, ToolSession};
use mcp_stack::providers::{anthropic, gemini, openai};
use mcp_stack::search::{Bm25Ranker, Hit, LexicalRanker, ToolDocument, ToolRanker};
use mcp_stack::transport::memory::MemoryFactory;
use mcp_stack::transport::{Inbound, Transport};
use mcp_stack::Definition;
use serde_json::{json, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tool_search");

#[path = "../tests/fixtures/tool_search/fixture.rs"]
mod fixture;
use fixture::{copies as copies_of, percentiles, split_name, Query};

fn load_catalog() -> Vec<ToolDocument> {
    fixture::load_catalog(std::path::Path::new(FIXTURES))
}

fn load_queries(split: &str) -> Vec<Query> {
    fixture::load_queries(std::path::Path::new(FIXTURES), split)
}

fn param_names(doc: &ToolDocument) -> String {
    doc.params.iter().map(|p| split_name(&p.name)).collect::<Vec<_>>().join(" ")
}

/// What a crate's ranker keeps of a tool to answer with a [`Hit`].
#[derive(Debug, Clone)]
struct Key {
    server: String,
    name: String,
    model_name: String,
}

impl Key {
    fn of(doc: &ToolDocument) -> Self {
        Key { server: doc.server.clone(), name: doc.name.clone(), model_name: doc.model_name.clone() }
    }

    fn hit(&self, score: f32) -> Hit {
        Hit {
            server: self.server.clone(),
            name: self.name.clone(),
            model_name: self.model_name.clone(),
            score,
            matched: Vec::new(),
            server_named: false,
        }
    }
}

/// Tools by id, and each server's ids, for the crates' rankers.
#[derive(Debug, Default)]
struct Keys {
    keys: HashMap<usize, Key>,
    by_server: HashMap<String, Vec<usize>>,
    next: usize,
}

impl Keys {
    /// Drops `server`'s ids (returned) and gives `tools` new ones.
    fn replace(&mut self, server: &str, tools: &mut [ToolDocument]) -> (Vec<usize>, Vec<usize>) {
        let old = self.by_server.remove(server).unwrap_or_default();
        for id in &old {
            self.keys.remove(id);
        }
        let mut new = Vec::with_capacity(tools.len());
        for doc in tools.iter_mut() {
            doc.server = server.to_owned();
            self.keys.insert(self.next, Key::of(doc));
            new.push(self.next);
            self.next += 1;
        }
        if !new.is_empty() {
            self.by_server.insert(server.to_owned(), new.clone());
        }
        (old, new)
    }

    /// Best first, ties by server then name (as the trait asks).
    fn hits(&self, mut scored: Vec<(usize, f32)>, k: usize) -> Vec<Hit> {
        scored.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.keys[&a.0].server.cmp(&self.keys[&b.0].server))
                .then_with(|| self.keys[&a.0].name.cmp(&self.keys[&b.0].name))
        });
        scored.into_iter().take(k).map(|(id, score)| self.keys[&id].hit(score)).collect()
    }
}

/// The `bm25` crate's in-memory search engine (its English tokenizer:
/// Unicode words, stopwords, Snowball stemming), one text per tool.
#[derive(Debug)]
struct Bm25CrateRanker {
    engine: bm25::SearchEngine<usize>,
    keys: Keys,
}

impl Bm25CrateRanker {
    fn text(doc: &ToolDocument) -> String {
        format!("{}\n{}\n{}", split_name(&doc.name), doc.description, param_names(doc))
    }

    /// The crate fits BM25's average document length to the corpus it is
    /// built with; later upserts keep that length.
    fn build(tools: Vec<ToolDocument>) -> Self {
        let mut keys = Keys::default();
        let mut documents = Vec::with_capacity(tools.len());
        for (server, mut docs) in group(tools) {
            let (_, ids) = keys.replace(&server, &mut docs);
            documents
                .extend(ids.into_iter().zip(&docs).map(|(id, d)| bm25::Document::new(id, Self::text(d))));
        }
        let engine =
            bm25::SearchEngineBuilder::<usize>::with_documents(bm25::Language::English, documents).build();
        Bm25CrateRanker { engine, keys }
    }
}

impl ToolRanker for Bm25CrateRanker {
    fn replace_server(&mut self, server: &str, mut tools: Vec<ToolDocument>) {
        let (old, new) = self.keys.replace(server, &mut tools);
        for id in old {
            self.engine.remove(&id);
        }
        for (id, doc) in new.into_iter().zip(&tools) {
            self.engine.upsert(bm25::Document::new(id, Self::text(doc)));
        }
    }

    fn remove_server(&mut self, server: &str) -> bool {
        let (old, _) = self.keys.replace(server, &mut []);
        for id in &old {
            self.engine.remove(id);
        }
        !old.is_empty()
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let found = self.engine.search(query, k.max(50));
        self.keys.hits(found.into_iter().map(|r| (r.document.id, r.score)).collect(), k)
    }

    fn len(&self) -> usize {
        self.keys.keys.len()
    }
}

/// A tool's fields as `probly-search` reads them.
struct ProblyDoc {
    name: String,
    description: String,
    params: String,
}

fn probly_name(d: &ProblyDoc) -> Vec<&str> {
    vec![d.name.as_str()]
}

fn probly_description(d: &ProblyDoc) -> Vec<&str> {
    vec![d.description.as_str()]
}

fn probly_params(d: &ProblyDoc) -> Vec<&str> {
    vec![d.params.as_str()]
}

/// Lowercased alphanumeric runs: `probly-search` takes its tokenizer
/// from the user and ships none.
fn probly_tokenizer(s: &str) -> Vec<Cow<'_, str>> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| Cow::Owned(w.to_lowercase()))
        .collect()
}

const PROBLY_FIELDS: [probly_search::FieldAccessor<ProblyDoc>; 3] =
    [probly_name, probly_description, probly_params];
/// The built-in ranker's weights for the same three fields.
const PROBLY_BOOSTS: [f64; 3] = [3.0, 1.0, 0.6];

/// `probly-search`'s BM25 over name, description and parameter names.
struct ProblyRanker {
    index: probly_search::Index<usize>,
    keys: Keys,
}

impl std::fmt::Debug for ProblyRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProblyRanker").field("tools", &self.keys.keys.len()).finish_non_exhaustive()
    }
}

impl ProblyRanker {
    fn build(tools: Vec<ToolDocument>) -> Self {
        let mut ranker =
            ProblyRanker { index: probly_search::Index::new(PROBLY_FIELDS.len()), keys: Keys::default() };
        for (server, docs) in group(tools) {
            ranker.replace_server(&server, docs);
        }
        ranker
    }
}

impl ToolRanker for ProblyRanker {
    fn replace_server(&mut self, server: &str, mut tools: Vec<ToolDocument>) {
        let (old, new) = self.keys.replace(server, &mut tools);
        for id in old {
            self.index.remove_document(id);
        }
        self.index.vacuum();
        for (id, doc) in new.into_iter().zip(&tools) {
            let doc = ProblyDoc {
                name: split_name(&doc.name),
                description: doc.description.clone(),
                params: param_names(doc),
            };
            self.index.add_document(&PROBLY_FIELDS, probly_tokenizer, id, &doc);
        }
    }

    fn remove_server(&mut self, server: &str) -> bool {
        let (old, _) = self.keys.replace(server, &mut []);
        for id in &old {
            self.index.remove_document(*id);
        }
        self.index.vacuum();
        !old.is_empty()
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let found =
            self.index.query(query, &mut probly_search::score::bm25::new(), probly_tokenizer, &PROBLY_BOOSTS);
        self.keys.hits(found.into_iter().map(|r| (r.key, r.score as f32)).collect(), k)
    }

    fn len(&self) -> usize {
        self.keys.keys.len()
    }
}

/// `tools` grouped by server, in first-seen order.
fn group(tools: Vec<ToolDocument>) -> Vec<(String, Vec<ToolDocument>)> {
    let mut groups: Vec<(String, Vec<ToolDocument>)> = Vec::new();
    for doc in tools {
        match groups.iter_mut().find(|(s, _)| *s == doc.server) {
            Some((_, docs)) => docs.push(doc),
            None => groups.push((doc.server.clone(), vec![doc])),
        }
    }
    groups
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

/// The system allocator, counting the bytes live on the heap, so that the
/// memory an index holds is measured exactly, whichever ranker was built
/// and dropped before it (resident memory keeps freed pages and hands them
/// to the next build). One relaxed atomic add per allocation, for every
/// ranker alike.
struct CountingAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to `System` with the caller's arguments;
// the counter is only arithmetic on the sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Bytes live on the heap, in KiB.
fn live_kib() -> usize {
    LIVE_BYTES.load(Ordering::Relaxed) / 1024
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
    let bm25_crate = Bm25CrateRanker::build(catalog.clone());
    let probly = ProblyRanker::build(catalog.clone());
    let rankers: [(&str, &dyn ToolRanker); 4] = [
        ("built-in", &lexical),
        ("BM25 baseline", &baseline),
        ("bm25 crate", &bm25_crate),
        ("probly-search", &probly),
    ];

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
        for (name, ranker) in rankers {
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
    println!("Cost ({} queries, each 5 times)", texts.len());
    println!(
        "  {:<14} {:>7} {:>10} {:>10} {:>10} {:>16} {:>12}",
        "ranker", "tools", "build", "p50", "p99", "replace 1 server", "index memory"
    );
    type Build = fn(Vec<ToolDocument>) -> Box<dyn ToolRanker>;
    let builds: [(&str, Build); 3] = [
        ("built-in", |docs| Box::new(LexicalRanker::build(docs))),
        ("bm25 crate", |docs| Box::new(Bm25CrateRanker::build(docs))),
        ("probly-search", |docs| Box::new(ProblyRanker::build(docs))),
    ];
    for (copies, (name, build)) in [1usize, 10].into_iter().flat_map(|c| builds.iter().map(move |b| (c, b))) {
        // Counted from before the documents are made: whatever of them an
        // index keeps is part of its memory.
        let before = live_kib();
        let docs = copies_of(&catalog, copies);
        let t = Instant::now();
        let mut ranker = build(docs);
        let build = t.elapsed();
        let memory = live_kib().saturating_sub(before);
        let (p50, p99) = percentiles(&*ranker, &texts, 5);
        let github: Vec<ToolDocument> = catalog.iter().filter(|d| d.server == "github").cloned().collect();
        let t = Instant::now();
        ranker.replace_server("github", github);
        let replace = t.elapsed();
        println!(
            "  {:<14} {:>7} {:>10.1?} {:>10.1?} {:>10.1?} {:>16.1?} {:>9} KiB",
            name,
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
