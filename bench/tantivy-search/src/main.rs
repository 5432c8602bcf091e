//! tantivy on the tool-search fixtures (`tests/fixtures/tool_search`):
//! name split into words, description and parameter names as three fields,
//! its `en_stem` tokenizer, boosts 3 / 1 / 0.6 as the built-in ranker weighs
//! those fields, an in-memory index, queries parsed leniently (any term may
//! match). Prints R@1/5/10 and MRR per query set, then index build and
//! search p50 / p99 (every query five times) at 1,005 and 10,050 tools, as
//! `cargo bench --bench tool_search` does for the other rankers.
//!
//! `cargo run --release --manifest-path bench/tantivy-search/Cargo.toml`
use mcp_stack::search::ToolDocument;
use std::time::{Duration, Instant};
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::Value as _;
use tantivy::schema::*;
use tantivy::{doc, Index, TantivyDocument};

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/tool_search");

#[path = "../../../tests/fixtures/tool_search/fixture.rs"]
mod fixture;
use fixture::split_name;

fn catalog() -> Vec<ToolDocument> {
    fixture::load_catalog(std::path::Path::new(FIX))
}

fn queries(split: &str) -> Vec<(String, Vec<(String, String)>)> {
    fixture::load_queries(std::path::Path::new(FIX), split)
        .into_iter()
        .map(|q| (q.text, q.expected))
        .collect()
}

struct T {
    index: Index,
    reader: tantivy::IndexReader,
    qp: QueryParser,
    server: Field,
    tool: Field,
}

fn build(docs: &[ToolDocument]) -> (T, Duration) {
    let t0 = Instant::now();
    let mut sb = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let name = sb.add_text_field("name", text.clone());
    let desc = sb.add_text_field("description", text.clone());
    let params = sb.add_text_field("params", text);
    let server = sb.add_text_field("server", STRING | STORED);
    let tool = sb.add_text_field("tool", STRING | STORED);
    let index = Index::create_in_ram(sb.build());
    // One indexing thread: one segment, so that ties rank the same on every run.
    let mut w = index.writer_with_num_threads(1, 50_000_000).unwrap();
    for d in docs {
        let p: Vec<String> = d.params.iter().map(|p| split_name(&p.name)).collect();
        w.add_document(doc!(name => split_name(&d.name), desc => d.description.clone(), params => p.join(" "), server => d.server.clone(), tool => d.name.clone())).unwrap();
    }
    w.commit().unwrap();
    let reader = index.reader().unwrap();
    let mut qp = QueryParser::for_index(&index, vec![name, desc, params]);
    qp.set_field_boost(name, 3.0);
    qp.set_field_boost(params, 0.6);
    let el = t0.elapsed();
    (T { index, reader, qp, server, tool }, el)
}

fn search(t: &T, q: &str) -> Vec<(String, String)> {
    let (query, _) = t.qp.parse_query_lenient(q);
    let s = t.reader.searcher();
    let top = s.search(&query, &TopDocs::with_limit(10).order_by_score()).unwrap();
    top.into_iter()
        .map(|(_, a)| {
            let d: TantivyDocument = s.doc(a).unwrap();
            (
                d.get_first(t.server).unwrap().as_str().unwrap().to_owned(),
                d.get_first(t.tool).unwrap().as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn main() {
    let cat = catalog();
    let (t, _) = build(&cat);
    let _ = &t.index;
    let mut all = Vec::new();
    for split in ["dev", "holdout", "holdout_hard"] {
        let qs = queries(split);
        let mut m = [0.0f64; 4];
        for (q, exp) in &qs {
            let hits = search(&t, q);
            if let Some(r) = hits.iter().position(|h| exp.contains(h)) {
                m[0] += f64::from(r < 1);
                m[1] += f64::from(r < 5);
                m[2] += 1.0;
                m[3] += 1.0 / (r as f64 + 1.0);
            }
            all.push(q.clone());
        }
        let n = qs.len() as f64;
        println!(
            "{split:<13} tantivy {:>4} {:.3} {:.3} {:.3} {:.3}",
            qs.len(),
            m[0] / n,
            m[1] / n,
            m[2] / n,
            m[3] / n
        );
    }
    for copies in [1usize, 10] {
        let mut docs = Vec::new();
        for c in 0..copies {
            for d in &cat {
                let mut d = d.clone();
                if c > 0 {
                    d.server = format!("{}_{c}", d.server);
                }
                docs.push(d);
            }
        }
        let (t, b) = build(&docs);
        let mut times = Vec::new();
        for _ in 0..5 {
            for q in &all {
                let s = Instant::now();
                std::hint::black_box(search(&t, q));
                times.push(s.elapsed());
            }
        }
        times.sort();
        println!(
            "tantivy {:>6} tools build {:.1?} p50 {:.1?} p99 {:.1?}",
            docs.len(),
            b,
            times[times.len() / 2],
            times[times.len() * 99 / 100]
        );
    }
}
