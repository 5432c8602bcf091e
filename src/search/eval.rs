//! Quality regression test: ranks the labelled queries of
//! `tests/fixtures/tool_search` against its catalog and checks recall@5 and
//! MRR of the built-in ranker on every split (see that directory's README for
//! which split is dev and which is holdout). Run with `--nocapture` to see
//! the table, including the plain BM25 baseline.

use std::path::PathBuf;

use serde_json::Value;

use super::{Bm25Ranker, LexicalRanker, ToolDocument, ToolRanker};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tool_search")
}

fn read(name: &str) -> Value {
    let path = fixtures().join(name);
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&raw).expect("valid JSON fixture")
}

fn catalog() -> Vec<ToolDocument> {
    let mut docs = Vec::new();
    for server in read("catalog.json")["servers"].as_array().expect("servers") {
        let name = server["name"].as_str().expect("server name");
        for tool in server["tools"].as_array().expect("tools") {
            let model = format!("{name}__{}", tool["name"].as_str().unwrap_or_default());
            docs.push(ToolDocument::from_mcp_tool(name, &model, tool).expect("tool has a name"));
        }
    }
    docs
}

/// (recall@1, recall@5, recall@10, MRR) of `ranker` on one query file.
fn measure(ranker: &dyn ToolRanker, file: &str) -> (usize, [f64; 4]) {
    let queries = read(file);
    let queries = queries.as_array().expect("query list");
    let mut m = [0.0; 4];
    for q in queries {
        let hits = ranker.search(q["query"].as_str().expect("query"), 10);
        let expected = q["expected"].as_array().expect("expected");
        let rank = hits.iter().position(|h| {
            expected.iter().any(|e| e["server"] == h.server.as_str() && e["tool"] == h.name.as_str())
        });
        if let Some(r) = rank {
            m[0] += f64::from(r < 1);
            m[1] += f64::from(r < 5);
            m[2] += 1.0;
            m[3] += 1.0 / (r as f64 + 1.0);
        }
    }
    for v in &mut m {
        *v /= queries.len() as f64;
    }
    (queries.len(), m)
}

#[test]
fn ranker_quality_on_fixture_queries() {
    let docs = catalog();
    assert!(docs.len() >= 1000);
    let lexical = LexicalRanker::build(docs.clone());
    let baseline = Bm25Ranker::build(docs);
    println!(
        "{:<14} {:<8} {:>4} {:>6} {:>6} {:>6} {:>6}",
        "split", "ranker", "n", "R@1", "R@5", "R@10", "MRR"
    );
    for split in ["dev", "holdout", "holdout_hard"] {
        let file = format!("queries_{split}.json");
        let (n, base) = measure(&baseline, &file);
        let (_, ours) = measure(&lexical, &file);
        for (name, m) in [("lexical", ours), ("bm25", base)] {
            println!("{split:<14} {name:<8} {n:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3}", m[0], m[1], m[2], m[3]);
        }
        // The bar (recall@5 >= 0.6, MRR >= 0.45) and no worse than BM25.
        assert!(ours[1] >= 0.6 && ours[3] >= 0.45, "{split}: {ours:?}");
        assert!(ours[1] >= base[1] && ours[3] >= base[3], "{split}: {ours:?} vs {base:?}");
    }
}
