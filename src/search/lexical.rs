//! The built-in ranker ([`LexicalRanker`]) and the plain BM25 baseline
//! ([`Bm25Ranker`]).

use std::collections::HashSet;

use super::engine::{Analyzed, Bm25Params, Concept, Engine, Variant, NUM_FIELDS};
use super::synonyms;
use super::text::{clean, tokenize, tokenize_into};
use super::{
    Field, Hit, MatchedTerm, ToolDocument, ToolRanker, MAX_DESCRIPTION_BYTES, MAX_HINT_BYTES, MAX_NAME_BYTES,
    MAX_PARAMS, MAX_PARAM_DESCRIPTION_BYTES, MAX_QUERY_BYTES, MAX_QUERY_TERMS, MAX_TITLE_BYTES,
};

/// Field weights of the built-in ranker, in [`Field::ALL`] order: name,
/// title, hint, parameter names, parameter descriptions, description, server.
const WEIGHTS: [f32; NUM_FIELDS] = [3.0, 2.0, 2.0, 0.6, 0.3, 1.0, 0.5];
/// Length normalization per field; names are short and similar in length.
const B: [f32; NUM_FIELDS] = [0.3, 0.5, 0.5, 0.75, 0.75, 0.75, 0.0];
/// Weight of a compound joined from two adjacent query words (`on call` → `oncall`).
const COMPOUND_WEIGHT: f32 = 0.9;
/// Most alternatives tried per query term.
const MAX_VARIANTS: usize = 16;
/// How strongly partial matches are discounted: a tool matching `m` of `n`
/// query words has its score multiplied by `(m / n)^COVERAGE_EXPONENT`.
const COVERAGE_EXPONENT: f32 = 1.0;
/// Added to the matching tools of a server the query names, scaled by how
/// specific the server's name is (see `Engine::server_name_specificity`).
const SERVER_BONUS: f32 = 4.0;

/// Analyzes a document for the built-in ranker: every field cleaned, bounded
/// and tokenized separately.
fn analyze_fielded(server: &str, doc: &ToolDocument) -> Analyzed {
    let mut fields: [Vec<String>; NUM_FIELDS] = Default::default();
    let name = clean(&doc.name, MAX_NAME_BYTES);
    tokenize_into(&name, &mut fields[0]);
    if let Some(title) = &doc.title {
        tokenize_into(&clean(title, MAX_TITLE_BYTES), &mut fields[1]);
    }
    if let Some(hint) = &doc.search_hint {
        tokenize_into(&clean(hint, MAX_HINT_BYTES), &mut fields[2]);
    }
    for p in doc.params.iter().take(MAX_PARAMS) {
        tokenize_into(&clean(&p.name, MAX_NAME_BYTES), &mut fields[3]);
        tokenize_into(&clean(&p.description, MAX_PARAM_DESCRIPTION_BYTES), &mut fields[4]);
    }
    tokenize_into(&clean(&doc.description, MAX_DESCRIPTION_BYTES), &mut fields[5]);
    fields[6] = server_terms(server);
    Analyzed { name, model_name: clean(&doc.model_name, MAX_NAME_BYTES), fields }
}

/// Analyzes a document for the baseline: name, description and parameter
/// names in one bag of words.
fn analyze_flat(doc: &ToolDocument) -> Analyzed {
    let mut fields: [Vec<String>; NUM_FIELDS] = Default::default();
    let name = clean(&doc.name, MAX_NAME_BYTES);
    tokenize_into(&name, &mut fields[0]);
    tokenize_into(&clean(&doc.description, MAX_DESCRIPTION_BYTES), &mut fields[0]);
    for p in doc.params.iter().take(MAX_PARAMS) {
        tokenize_into(&clean(&p.name, MAX_NAME_BYTES), &mut fields[0]);
    }
    Analyzed { name, model_name: clean(&doc.model_name, MAX_NAME_BYTES), fields }
}

/// Normalized query terms, distinct, in order, at most [`MAX_QUERY_TERMS`].
fn query_terms(query: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    tokenize(&clean(query, MAX_QUERY_BYTES))
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .take(MAX_QUERY_TERMS)
        .collect()
}

fn server_terms(server: &str) -> Vec<String> {
    tokenize(&clean(server, MAX_NAME_BYTES))
}

/// Turns matched documents into hits with explanations.
fn hits(
    engine: &Engine,
    concepts: &[Concept],
    top: Vec<(u32, super::engine::Scored)>,
    named: &[&str],
) -> Vec<Hit> {
    top.into_iter()
        .map(|(id, scored)| {
            let (server, name, model_name) = engine.identity(id);
            let mut matches = scored.matches;
            matches.sort_unstable();
            let matched = matches
                .into_iter()
                .map(|(ci, vi)| {
                    let concept = &concepts[ci];
                    let variant = &concept.variants[vi];
                    let mut fields: Vec<Field> =
                        variant.tokens.iter().flat_map(|t| engine.fields_of(id, t)).collect();
                    fields.sort_unstable();
                    fields.dedup();
                    MatchedTerm {
                        query_term: concept.term.clone(),
                        matched: variant.tokens.join(" "),
                        expanded: variant.expanded,
                        fields,
                    }
                })
                .collect();
            Hit {
                server: server.to_owned(),
                name: name.to_owned(),
                model_name: model_name.to_owned(),
                score: scored.score,
                matched,
                server_named: named.contains(&server),
            }
        })
        .collect()
}

/// The built-in ranker: BM25F over fielded tool documents with query
/// expansion from a built-in vocabulary of software terms. See the
/// [module documentation](super) for how it ranks.
#[derive(Debug)]
pub struct LexicalRanker {
    engine: Engine,
}

impl Default for LexicalRanker {
    fn default() -> Self {
        Self::new()
    }
}

impl LexicalRanker {
    /// An empty index.
    pub fn new() -> Self {
        LexicalRanker { engine: Engine::new(Bm25Params { k1: 1.2, weights: WEIGHTS, b: B }) }
    }

    /// An index of `tools`, grouped by their `server` field.
    pub fn build(tools: impl IntoIterator<Item = ToolDocument>) -> Self {
        let mut ranker = Self::new();
        for (server, docs) in group_by_server(tools) {
            ranker.replace_server(&server, docs);
        }
        ranker
    }

    /// The query's concepts: each term with its expansions, plus compounds
    /// of adjacent words that the index knows as one word.
    fn concepts(&self, query: &str) -> Vec<Concept> {
        let terms = query_terms(query);
        let mut concepts: Vec<Concept> = terms
            .iter()
            .map(|term| {
                let mut variants = vec![Variant { tokens: vec![term.clone()], weight: 1.0, expanded: false }];
                for e in synonyms::expansions(term) {
                    if variants.len() >= MAX_VARIANTS {
                        break;
                    }
                    if variants.iter().all(|v| v.tokens != e.tokens) {
                        variants.push(Variant { tokens: e.tokens.clone(), weight: e.weight, expanded: true });
                    }
                }
                Concept { term: term.clone(), variants, extra: false }
            })
            .collect();
        // Raw adjacent words, before stopword removal: "on call", "sign up", "who am i".
        let raw: Vec<String> = clean(query, MAX_QUERY_BYTES)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .take(MAX_QUERY_TERMS * 2)
            .collect();
        // Idioms: "money back" means refund, "sign off" means approve.
        let stems: Vec<String> = raw.iter().map(|w| super::text::stem(w)).collect();
        for (key, meaning) in synonyms::phrases() {
            if concepts.len() >= MAX_QUERY_TERMS + 8 {
                break;
            }
            if stems.windows(key.len()).any(|w| w == key.as_slice()) {
                let variants: Vec<Variant> = meaning
                    .iter()
                    .filter(|e| {
                        !concepts.iter().any(|c| c.extra && c.variants.iter().any(|v| v.tokens == e.tokens))
                    })
                    .take(MAX_VARIANTS)
                    .map(|e| Variant { tokens: e.tokens.clone(), weight: e.weight, expanded: true })
                    .collect();
                if !variants.is_empty() {
                    concepts.push(Concept { term: key.join(" "), variants, extra: true });
                }
            }
        }
        for n in [2usize, 3] {
            for window in raw.windows(n) {
                if concepts.len() >= MAX_QUERY_TERMS + 8 {
                    break;
                }
                let joined = super::text::stem(&window.concat());
                let known = concepts.iter().any(|c| {
                    c.term == joined
                        || (c.extra
                            && c.variants.iter().any(|v| v.tokens.len() == 1 && v.tokens[0] == joined))
                });
                if self.engine.has_term(&joined) && !known {
                    concepts.push(Concept {
                        term: window.join(" "),
                        variants: vec![Variant {
                            tokens: vec![joined],
                            weight: COMPOUND_WEIGHT,
                            expanded: true,
                        }],
                        extra: true,
                    });
                }
            }
        }
        concepts
    }
}

impl ToolRanker for LexicalRanker {
    fn replace_server(&mut self, server: &str, tools: Vec<ToolDocument>) {
        let docs = tools.iter().map(|t| analyze_fielded(server, t)).collect();
        self.engine.replace_server(server, server_terms(server), docs);
    }

    fn remove_server(&mut self, server: &str) -> bool {
        self.engine.remove_server(server)
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let concepts = self.concepts(query);
        if concepts.is_empty() || k == 0 {
            return Vec::new();
        }
        // A server counts as named when each word of its name is a query term
        // or an abbreviation of one ("k8s" names "kubernetes").
        let mut words: Vec<&str> = Vec::new();
        for c in &concepts {
            for v in &c.variants {
                if v.tokens.len() == 1 && v.weight >= synonyms::ABBREVIATION_WEIGHT {
                    words.push(&v.tokens[0]);
                }
            }
        }
        let named: Vec<(&str, f32)> = self
            .engine
            .servers_named_by(&words)
            .into_iter()
            .map(|s| (s, self.engine.server_name_specificity(s)))
            .collect();
        let mut scores = self.engine.score(&concepts);
        // Favour tools that cover more of the query over tools that match one
        // word very well.
        let words = concepts.iter().filter(|c| !c.extra).count().max(1) as f32;
        for scored in scores.values_mut() {
            let covered = (scored.matches.len() as f32).min(words);
            scored.score *= (covered / words).powf(COVERAGE_EXPONENT);
        }
        for (server, share) in &named {
            // Only tools that match something else get the bonus, so naming a
            // server ranks its matching tools first without listing all of it.
            let ids: Vec<u32> =
                self.engine.server_docs(server).iter().copied().filter(|d| scores.contains_key(d)).collect();
            Engine::boost(&mut scores, &ids, SERVER_BONUS * share);
        }
        let top = self.engine.top_k(scores, k);
        let named: Vec<&str> = named.iter().filter(|(_, share)| *share > 0.0).map(|(s, _)| *s).collect();
        hits(&self.engine, &concepts, top, &named)
    }

    fn len(&self) -> usize {
        self.engine.len()
    }
}

/// Plain BM25 (k1 = 1.2, b = 0.75) over tool name, description and parameter
/// names as one bag of words, with the built-in tokenizer and no expansion.
/// A baseline for evaluating rankers; hosts should prefer [`LexicalRanker`].
#[derive(Debug)]
pub struct Bm25Ranker {
    engine: Engine,
}

impl Default for Bm25Ranker {
    fn default() -> Self {
        Self::new()
    }
}

impl Bm25Ranker {
    /// An empty index.
    pub fn new() -> Self {
        let mut weights = [0.0; NUM_FIELDS];
        weights[0] = 1.0;
        Bm25Ranker { engine: Engine::new(Bm25Params { k1: 1.2, weights, b: [0.75; NUM_FIELDS] }) }
    }

    /// An index of `tools`, grouped by their `server` field.
    pub fn build(tools: impl IntoIterator<Item = ToolDocument>) -> Self {
        let mut ranker = Self::new();
        for (server, docs) in group_by_server(tools) {
            ranker.replace_server(&server, docs);
        }
        ranker
    }
}

impl ToolRanker for Bm25Ranker {
    fn replace_server(&mut self, server: &str, tools: Vec<ToolDocument>) {
        let docs = tools.iter().map(analyze_flat).collect();
        self.engine.replace_server(server, server_terms(server), docs);
    }

    fn remove_server(&mut self, server: &str) -> bool {
        self.engine.remove_server(server)
    }

    fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let concepts: Vec<Concept> = query_terms(query)
            .into_iter()
            .map(|term| Concept {
                variants: vec![Variant { tokens: vec![term.clone()], weight: 1.0, expanded: false }],
                term,
                extra: false,
            })
            .collect();
        if concepts.is_empty() || k == 0 {
            return Vec::new();
        }
        let top = self.engine.top_k(self.engine.score(&concepts), k);
        hits(&self.engine, &concepts, top, &[])
    }

    fn len(&self) -> usize {
        self.engine.len()
    }
}

fn group_by_server(tools: impl IntoIterator<Item = ToolDocument>) -> Vec<(String, Vec<ToolDocument>)> {
    let mut groups: std::collections::BTreeMap<String, Vec<ToolDocument>> = Default::default();
    for t in tools {
        groups.entry(t.server.clone()).or_default().push(t);
    }
    groups.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::super::ParamDoc;
    use super::*;

    fn tool(server: &str, name: &str, description: &str) -> ToolDocument {
        ToolDocument {
            server: server.into(),
            name: name.into(),
            model_name: format!("{server}__{name}"),
            description: description.into(),
            ..ToolDocument::default()
        }
    }

    fn sample() -> Vec<ToolDocument> {
        vec![
            tool("github", "star_repository", "Star a repository."),
            tool(
                "github",
                "create_pull_request",
                "Open a pull request from a head branch into a base branch.",
            ),
            tool("github", "list_notifications", "List your notifications."),
            tool("github", "list_issues", "List issues in a repository."),
            tool("gitlab", "list_issues", "Issues of a project."),
            tool("slack", "slack_post_message", "Send a message to a channel."),
            tool("files", "delete_file", "Delete a file from disk."),
            tool("kubernetes", "kubectl_get", "List pods, deployments and other resources."),
        ]
    }

    fn names(hits: &[Hit]) -> Vec<String> {
        hits.iter().map(|h| format!("{}/{}", h.server, h.name)).collect()
    }

    #[test]
    fn finds_tools_through_synonyms_and_abbreviations() {
        let r = LexicalRanker::build(sample());
        assert_eq!(names(&r.search("bookmark this repo", 1)), ["github/star_repository"]);
        assert_eq!(names(&r.search("open a PR", 1)), ["github/create_pull_request"]);
        assert_eq!(names(&r.search("any pings for me?", 1)), ["github/list_notifications"]);
        assert_eq!(names(&r.search("erase the file", 1)), ["files/delete_file"]);
        assert_eq!(names(&r.search("k8s pods", 1)), ["kubernetes/kubectl_get"]);
        let hit = &r.search("bookmark this repo", 1)[0];
        assert!(hit
            .matched
            .iter()
            .any(|m| m.expanded && m.matched == "star" && m.fields.contains(&Field::Name)));
        assert!(hit.why().contains("bookmark"));
    }

    #[test]
    fn naming_the_server_ranks_its_tool_first() {
        let r = LexicalRanker::build(sample());
        let hits = r.search("gitlab issues", 2);
        assert_eq!(names(&hits)[0], "gitlab/list_issues");
        assert!(hits[0].server_named);
        let hits = r.search("github issues", 2);
        assert_eq!(names(&hits)[0], "github/list_issues");
    }

    #[test]
    fn a_server_named_like_a_common_word_gets_little_bonus() {
        let mut tools = sample();
        tools.push(tool("time", "get_current_time", "Current time in a timezone."));
        for i in 0..5 {
            tools.push(tool("maps", &format!("route_{i}"), "Travel time and distance between places."));
        }
        let r = LexicalRanker::build(tools);
        // "time" names the time server, but most tools mentioning time are
        // elsewhere, so it stays an ordinary word.
        let hits = r.search("travel time between places", 3);
        assert!(hits.iter().all(|h| h.server == "maps"), "{:?}", names(&hits));
        assert_eq!(r.search("what time is it", 1)[0].name, "get_current_time");
    }

    #[test]
    fn idioms_and_split_compounds_are_understood() {
        let mut tools = sample();
        tools.push(tool("pay", "create_refund", "Refund a payment."));
        tools.push(tool("pay", "create_payment", "Charge money back and forth."));
        tools.push(tool("ops", "list_oncalls", "Who is on duty."));
        tools.push(tool("ops", "list_calls", "Phone calls made."));
        let r = LexicalRanker::build(tools);
        assert_eq!(r.search("I want my money back", 1)[0].name, "create_refund");
        assert_eq!(r.search("who is on call", 1)[0].name, "list_oncalls");
        assert_eq!(r.search("who is on-call", 1)[0].name, "list_oncalls");
    }

    #[test]
    fn empty_and_meaningless_queries_return_nothing() {
        let r = LexicalRanker::build(sample());
        assert!(r.search("", 5).is_empty());
        assert!(r.search("   the of and   ", 5).is_empty());
        assert!(r.search("repository", 0).is_empty());
        assert!(r.search("zzzzqqq", 5).is_empty());
        assert!(LexicalRanker::new().search("repository", 5).is_empty());
    }

    #[test]
    fn huge_query_is_bounded() {
        let r = LexicalRanker::build(sample());
        let mut query = "star repository ".to_string();
        query.push_str(&"lorem ipsum dolor sit amet ".repeat(40_000));
        assert!(query.len() > 1_000_000);
        let start = std::time::Instant::now();
        let hits = r.search(&query, 3);
        assert_eq!(names(&hits)[0], "github/star_repository");
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert!(query_terms(&query).len() <= MAX_QUERY_TERMS);
        let many: String = (0..5000).map(|i| format!("word{i}x ")).collect();
        assert_eq!(query_terms(&many).len(), MAX_QUERY_TERMS);
    }

    #[test]
    fn huge_fields_and_escapes_are_bounded() {
        let mut t = tool("evil", "big_tool", &"description words ".repeat(60_000));
        t.search_hint = Some(format!("\u{1b}[2J\u{1b}]0;pwned\u{7}{}", "hint ".repeat(100_000)));
        t.title = Some("x".repeat(1_000_000));
        t.params =
            (0..10_000).map(|i| ParamDoc { name: format!("p{i}"), description: "d".repeat(5000) }).collect();
        let a = analyze_fielded("evil", &t);
        assert!(a.fields[5].len() <= MAX_DESCRIPTION_BYTES / 2);
        assert!(a.fields[2].len() <= MAX_HINT_BYTES / 2);
        assert!(a.fields[2].iter().all(|w| w == "hint"), "{:?}", &a.fields[2][..3]);
        assert!(a.fields[3].len() <= MAX_PARAMS * 2);
        let mut r = LexicalRanker::new();
        r.replace_server("evil", vec![t]);
        assert_eq!(r.len(), 1);
        assert_eq!(r.search("hint", 1)[0].name, "big_tool");
    }

    #[test]
    fn names_that_collide_after_splitting_stay_distinct_and_ordered() {
        let tools = vec![
            tool("s", "list_issues", "x"),
            tool("s", "listIssues", "x"),
            tool("s", "list-issues", "x"),
            tool("s", "list.issues", "x"),
        ];
        let r = LexicalRanker::build(tools);
        assert_eq!(r.len(), 4);
        let hits = r.search("list issues", 10);
        assert_eq!(hits.len(), 4);
        // Identical words, identical scores: ordered by name.
        let same: Vec<&Hit> = hits.iter().filter(|h| h.name != "listIssues").collect();
        assert_eq!(
            same.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
            ["list-issues", "list.issues", "list_issues"]
        );
        assert!(same.windows(2).all(|w| w[0].score == w[1].score));
        assert!(hits.iter().any(|h| h.name == "listIssues"));
    }

    /// Issue 44, bad input: 100,000 tools (more than a host holds: 64
    /// pages of 1,024 per server) index, answer and shrink again.
    #[test]
    fn a_hundred_thousand_tools_are_indexed_and_searched() {
        let words = ["read", "write", "list", "delete", "star", "issue", "file", "page", "user", "event"];
        let docs = (0..100_000).map(|i| {
            let name = format!("{}_{}_{i}", words[i % 10], words[(i / 10) % 10]);
            tool(&format!("server{}", i / 1_000), &name, "A tool of a very large host.")
        });
        let mut ranker = LexicalRanker::build(docs);
        assert_eq!(ranker.len(), 100_000);
        let hits = ranker.search("star an issue", 10);
        assert_eq!(hits.len(), 10);
        let both = |n: &str| n.contains("star") && n.contains("issue");
        assert!(hits.iter().all(|h| both(&h.name)), "{:?}", names(&hits));
        for server in 0..100 {
            assert!(ranker.remove_server(&format!("server{server}")));
        }
        assert!(ranker.is_empty());
        assert!(ranker.search("star an issue", 10).is_empty());
    }

    #[test]
    fn incremental_update_and_removal() {
        let mut r = LexicalRanker::build(sample());
        assert_eq!(r.len(), 8);
        r.replace_server("github", vec![tool("github", "get_me", "The authenticated user.")]);
        r.engine.check();
        assert_eq!(r.len(), 5);
        assert!(r.search("star repository", 10).iter().all(|h| h.server != "github"));
        assert_eq!(names(&r.search("authenticated user", 1)), ["github/get_me"]);
        assert!(r.remove_server("slack"));
        assert!(!r.remove_server("slack"));
        r.engine.check();
        assert!(r.search("send message channel", 5).is_empty());
        r.replace_server("files", Vec::new());
        assert_eq!(r.len(), 3);
        // Re-adding everything gives the same results as a fresh build.
        for (server, docs) in group_by_server(sample()) {
            r.replace_server(&server, docs);
        }
        r.engine.check();
        let fresh = LexicalRanker::build(sample());
        for q in ["bookmark repo", "issues", "delete", "post a chat message", "pods"] {
            assert_eq!(r.search(q, 5), fresh.search(q, 5), "{q}");
        }
    }

    #[test]
    fn replace_overrides_the_documents_server_field() {
        let mut r = LexicalRanker::new();
        r.replace_server("real", vec![tool("spoofed", "widget", "does a widget")]);
        assert_eq!(r.search("widget", 1)[0].server, "real");
        assert!(r.remove_server("real"));
        assert!(r.is_empty());
    }

    #[test]
    fn results_are_deterministic() {
        let a = LexicalRanker::build(sample());
        let mut rev = sample();
        rev.reverse();
        let b = LexicalRanker::build(rev);
        for q in ["list", "issues repository", "message", "delete file", "notifications"] {
            let first = a.search(q, 10);
            assert_eq!(first, a.search(q, 10));
            assert_eq!(names(&first), names(&b.search(q, 10)), "{q}");
        }
    }

    #[test]
    fn baseline_uses_no_expansion() {
        let r = Bm25Ranker::build(sample());
        assert!(r.search("bookmark", 5).is_empty());
        assert_eq!(names(&r.search("star repository", 1)), ["github/star_repository"]);
        assert_eq!(r.len(), 8);
    }

    #[test]
    fn from_mcp_tool_reads_the_fields_search_uses() {
        let json = serde_json::json!({
            "name": "star_repository",
            "annotations": {"title": "Star"},
            "description": "Star a repository.",
            "inputSchema": {"type": "object", "properties": {
                "owner": {"type": "string", "description": "Repository owner"},
                "repo": {"type": "string"}
            }},
            "_meta": {"anthropic/searchHint": "bookmark"}
        });
        let d = ToolDocument::from_mcp_tool("github", "github__star_repository", &json).unwrap();
        assert_eq!(d.title.as_deref(), Some("Star"));
        assert_eq!(d.params.len(), 2);
        assert_eq!(d.params[0], ParamDoc { name: "owner".into(), description: "Repository owner".into() });
        assert_eq!(d.search_hint.as_deref(), Some("bookmark"));
        assert!(ToolDocument::from_mcp_tool("s", "m", &serde_json::json!({"description": "x"})).is_none());
        let huge = serde_json::json!({"name": "t", "description": "é".repeat(1_000_000)});
        let d = ToolDocument::from_mcp_tool("s", "m", &huge).unwrap();
        assert!(d.description.len() <= 2 * MAX_DESCRIPTION_BYTES);
        let with_enum = serde_json::json!({"name": "merge", "inputSchema": {"properties": {
            "method": {"type": "string", "description": "How", "enum": ["squash", "rebase"]}
        }}});
        let d = ToolDocument::from_mcp_tool("s", "m", &with_enum).unwrap();
        assert_eq!(d.params[0].description, "How squash rebase");
    }

    #[test]
    fn ranker_is_object_safe_and_thread_safe() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Box<dyn ToolRanker>>();
        let mut r = super::super::default_ranker();
        r.replace_server("github", sample().into_iter().filter(|t| t.server == "github").collect());
        assert_eq!(r.len(), 4);
    }
}
