//! Tool search: find the few tools that fit a request in a host's merged
//! catalog, so a model can be given a search tool instead of every definition.
//!
//! The module knows nothing of connections or the catalog: a host turns each
//! tool into a [`ToolDocument`] (server, raw name, the name the model sees,
//! title, description, parameters, `_meta` search hint) and keeps a
//! [`ToolRanker`] up to date one server at a time with
//! [`ToolRanker::replace_server`] and [`ToolRanker::remove_server`], following
//! each server's catalog generations. [`ToolRanker::search`] returns ranked
//! [`Hit`]s with a short explanation of why each one matched.
//!
//! # The built-in ranker
//!
//! [`LexicalRanker`] (also returned by [`default_ranker`]) is a BM25F index:
//!
//! * names are split into words (`create_pull_request`, `getPullRequest`,
//!   `list-issues` all become words), lowercased, lightly stemmed, with
//!   stopwords dropped;
//! * fields are weighted: tool name highest, then title and the server's
//!   `anthropic/searchHint`, then the description, then parameter names, the
//!   server's name and parameter descriptions (string `enum` values count as
//!   part of a parameter's description);
//! * the query is expanded with a built-in table of software vocabulary
//!   (`pr` → pull request, `bookmark` → star, `ping` → notification,
//!   `k8s` → kubernetes, ...) and idioms (`money back` → refund, `sign off`
//!   → approve) at a lower weight than the words typed, and words written
//!   apart that a catalog writes together (`on call` → `oncall`) are joined;
//! * a tool matching only part of the query is discounted in proportion;
//! * a matching tool whose server is named in the query gets a bonus,
//!   smaller when the name is a common word (a server called `time`).
//!
//! [`Bm25Ranker`] is plain BM25 over name, description and parameter names
//! with the same tokenizer and no expansion; it exists as a baseline to
//! measure the built-in ranker against.
//!
//! # Why our own scoring rather than a crate's
//!
//! `cargo bench --bench tool_search` ranks the same fields (name split into
//! words, description, parameter names) with two BM25 crates beside ours;
//! one run on the 2-core VM (2026-12-04), R@5 / MRR on the hard holdout
//! (109 queries) and search p50 / p99 at 10,050 tools:
//!
//! * built-in: 0.688 / 0.532, 0.37 / 1.7 ms;
//! * the `bm25` crate (2.3; its English tokenizer, with stemming and
//!   stopwords, over one text per tool): 0.440 / 0.349, 0.09 / 0.52 ms,
//!   level with our plain [`Bm25Ranker`] (0.404 / 0.340);
//! * `probly-search` (2.0; BM25 per field, boosted as ours):
//!   0.358 / 0.288, 2.1 / 10 ms, 0.78 s to build the index;
//! * `tantivy` (0.27; three fields with its English stemmer, the same
//!   boosts, in `bench/tantivy-search/`, a crate of its own): 0.303 /
//!   0.237, 0.09 / 0.19 ms, and 122 crates that take 1 min 55 s to build
//!   (release, from clean): not made a dev-dependency, which every CI run
//!   would compile.
//!
//! A crate would replace `engine.rs` (postings and the BM25F formula,
//! about 400 lines). What lifts recall@5 from 0.40 to 0.69 is around the
//! formula: weights and length normalization per field, weighted query
//! expansion, the partial-match discount, the server bonus, and the terms
//! and fields behind [`Hit::why`]. `bm25` has no fields; `probly-search`
//! and `tantivy` sum one BM25 per field rather than weigh term frequencies
//! across fields (BM25F); none takes weighted query terms or says which
//! terms matched. The scoring stays ours: the `bm25` crate and `tantivy`
//! search four times faster at 10k tools, but 0.4 ms is not a cost a host
//! notices.
//!
//! # A ranker of your own
//!
//! A host with its own ranking (embeddings, a remote service) implements
//! [`ToolRanker`] and gives it to
//! [`HostBuilder::tool_ranker`](crate::host::HostBuilder::tool_ranker).
//! `examples/embedding_ranker/` (a crate of its own, so that this one
//! never builds a neural network) ranks by sentence embeddings
//! (all-MiniLM-L6-v2, on the CPU with candle, its files from a PyPI
//! package) and fuses that with [`LexicalRanker`]: on the hard holdout the
//! fusion reaches R@5 0.752 / MRR 0.577 against the built-in 0.688 / 0.532
//! (embeddings alone 0.642 / 0.507), for 23 s of embedding at 1,005 tools
//! and 13.5 ms per query.
//!
//! # Bounds
//!
//! Every field of a document is cut to a byte cap before it is indexed
//! ([`MAX_DESCRIPTION_BYTES`], [`MAX_HINT_BYTES`], ...), control characters are
//! replaced and terminal escape sequences removed; queries are cut to
//! [`MAX_QUERY_BYTES`] and [`MAX_QUERY_TERMS`] distinct terms. A megabyte of
//! description or query therefore costs the same as a few kilobytes.
//!
//! # Example
//!
//! A host searches its merged catalog with
//! [`Host::search_tools`](crate::host::Host::search_tools), which keeps an
//! index like this one in step with the catalog; a ranker can also be used
//! alone:
//!
//! ```
//! use mcp_stack::search::{default_ranker, ToolDocument};
//!
//! let mut ranker = default_ranker();
//! ranker.replace_server("github", vec![ToolDocument {
//!     server: "github".into(),
//!     name: "star_repository".into(),
//!     model_name: "github__star_repository".into(),
//!     description: "Star a repository.".into(),
//!     ..ToolDocument::default()
//! }]);
//! let hits = ranker.search("bookmark this repo", 5);
//! assert_eq!(hits[0].name, "star_repository");
//! ```

mod engine;
#[cfg(test)]
mod eval;
mod lexical;
mod related;
mod synonyms;
mod text;

pub use lexical::{Bm25Ranker, LexicalRanker};

use std::fmt;

/// Largest query, in bytes, that is looked at; the rest is ignored.
pub const MAX_QUERY_BYTES: usize = 1024;
/// Largest number of distinct query terms used; later terms are ignored.
pub const MAX_QUERY_TERMS: usize = 32;
/// Cap on a tool description, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 8 * 1024;
/// Cap on a `_meta` search hint, in bytes.
pub const MAX_HINT_BYTES: usize = 1024;
/// Cap on a tool title, in bytes.
pub const MAX_TITLE_BYTES: usize = 512;
/// Cap on a tool, model or server name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Cap on one parameter description, in bytes.
pub const MAX_PARAM_DESCRIPTION_BYTES: usize = 1024;
/// Largest number of parameters indexed per tool.
pub const MAX_PARAMS: usize = 64;
/// Largest number of `enum` values of one parameter added to its description.
const MAX_ENUM_VALUES: usize = 32;
/// Longest string [`ToolDocument::from_mcp_tool`] copies; above every cap.
const MAX_COPY_BYTES: usize = 2 * MAX_DESCRIPTION_BYTES;

/// The longest prefix of `s` of at most `max` bytes, cut on a character boundary.
fn prefix(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// The `_meta` key servers use to give a tool extra search words.
pub const SEARCH_HINT_META_KEY: &str = "anthropic/searchHint";

/// One parameter of a tool, as far as search is concerned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamDoc {
    /// Property name in the input schema.
    pub name: String,
    /// The property's `description`, or empty.
    pub description: String,
}

/// What the index knows about one tool.
///
/// Plain data: build it however is convenient, or from a tool's JSON with
/// [`ToolDocument::from_mcp_tool`]. Strings may come straight from a server;
/// they are bounded and cleaned when indexed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolDocument {
    /// The server (as configured by the host) that provides the tool.
    pub server: String,
    /// The tool's name as the server spells it.
    pub name: String,
    /// The name the model sees (for example with a server prefix). Returned in
    /// hits; not searched, since it repeats `server` and `name`.
    pub model_name: String,
    /// Human-readable title, if the server gave one.
    pub title: Option<String>,
    /// The tool description.
    pub description: String,
    /// Parameter names and descriptions from the input schema.
    pub params: Vec<ParamDoc>,
    /// The server's `_meta["anthropic/searchHint"]`, if any.
    pub search_hint: Option<String>,
}

impl ToolDocument {
    /// Builds a document from an MCP `Tool` object (`name`, `title` or
    /// `annotations.title`, `description`, `inputSchema.properties` with their
    /// descriptions and string `enum` values, `_meta["anthropic/searchHint"]`).
    ///
    /// Returns `None` when `tool` has no string `name`. Only the first
    /// [`MAX_PARAMS`] properties are kept (in the JSON object's iteration
    /// order), and strings are copied only up to a bound a little above the
    /// index's caps.
    pub fn from_mcp_tool(server: &str, model_name: &str, tool: &serde_json::Value) -> Option<Self> {
        // Copy at most what the index will look at (plus slack for cleaning),
        // so a huge string from a server is never duplicated whole.
        let text =
            |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(|s| prefix(s, MAX_COPY_BYTES));
        let name = text(tool.get("name"))?;
        let title = text(tool.get("title")).or_else(|| text(tool.pointer("/annotations/title")));
        let params = tool
            .pointer("/inputSchema/properties")
            .and_then(|p| p.as_object())
            .map(|props| {
                props
                    .iter()
                    .take(MAX_PARAMS)
                    .map(|(name, schema)| {
                        let mut description = text(schema.get("description")).unwrap_or_default();
                        // Enum values are words too ("squash", "REQUEST_CHANGES").
                        if let Some(values) = schema.get("enum").and_then(|e| e.as_array()) {
                            for v in values.iter().filter_map(|v| v.as_str()).take(MAX_ENUM_VALUES) {
                                description.push(' ');
                                description.push_str(v);
                            }
                        }
                        ParamDoc { name: name.clone(), description }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(ToolDocument {
            server: server.to_owned(),
            name,
            model_name: model_name.to_owned(),
            title,
            description: text(tool.get("description")).unwrap_or_default(),
            params,
            search_hint: tool.get("_meta").and_then(|m| text(m.get(SEARCH_HINT_META_KEY))),
        })
    }
}

/// A part of a tool document that a query term can match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// The tool name, split into words.
    Name,
    /// The tool title.
    Title,
    /// The server's `_meta` search hint.
    Hint,
    /// Parameter names.
    ParamName,
    /// Parameter descriptions.
    ParamDescription,
    /// The tool description.
    Description,
    /// The name of the server providing the tool.
    Server,
}

impl Field {
    /// All fields, in index order.
    pub(crate) const ALL: [Field; 7] = [
        Field::Name,
        Field::Title,
        Field::Hint,
        Field::ParamName,
        Field::ParamDescription,
        Field::Description,
        Field::Server,
    ];

    /// Short lowercase label used in explanations.
    pub fn label(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Title => "title",
            Field::Hint => "hint",
            Field::ParamName => "param",
            Field::ParamDescription => "param description",
            Field::Description => "description",
            Field::Server => "server",
        }
    }
}

/// One query term that contributed to a hit.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchedTerm {
    /// The (normalized) query term.
    pub query_term: String,
    /// The document term or phrase it matched: the query term itself, or a
    /// synonym, abbreviation expansion or joined compound.
    pub matched: String,
    /// Whether `matched` came from expansion rather than the query itself.
    pub expanded: bool,
    /// Fields in which `matched` occurs.
    pub fields: Vec<Field>,
}

/// A search result.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Server providing the tool.
    pub server: String,
    /// Tool name as the server spells it.
    pub name: String,
    /// Tool name as the model sees it.
    pub model_name: String,
    /// Relevance score; only meaningful relative to other hits of one search.
    pub score: f32,
    /// The query terms that matched, in query order.
    pub matched: Vec<MatchedTerm>,
    /// Whether the query named the tool's server.
    pub server_named: bool,
}

impl Hit {
    /// A one-line explanation, e.g.
    /// `"bookmark" ~ star (name); "repo" ~ repository (name, description)`.
    pub fn why(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Hit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for m in &self.matched {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            let fields: Vec<&str> = m.fields.iter().map(|x| x.label()).collect();
            if m.expanded {
                write!(f, "\"{}\" ~ {} ({})", m.query_term, m.matched, fields.join(", "))?;
            } else {
                write!(f, "\"{}\" ({})", m.query_term, fields.join(", "))?;
            }
        }
        if self.server_named {
            if !first {
                f.write_str("; ")?;
            }
            write!(f, "server \"{}\" named", self.server)?;
        }
        Ok(())
    }
}

/// Ranks a host's tools for a query.
///
/// Implementations hold the index and are updated one server at a time, so a
/// server's new catalog generation costs work proportional to that server's
/// tools only. Object safe; a host keeps a `Box<dyn ToolRanker>`.
pub trait ToolRanker: Send + Sync + fmt::Debug {
    /// Replaces every tool of `server` with `tools` (an empty list removes the
    /// server). Each document's `server` field is overwritten with `server`.
    fn replace_server(&mut self, server: &str, tools: Vec<ToolDocument>);

    /// Removes every tool of `server`; returns whether it had any.
    fn remove_server(&mut self, server: &str) -> bool;

    /// The best `k` tools for `query`, best first. Equal scores are ordered
    /// by server then tool name, so results are deterministic. An empty or
    /// meaningless query returns no hits.
    fn search(&self, query: &str, k: usize) -> Vec<Hit>;

    /// Number of tools indexed.
    fn len(&self) -> usize;

    /// Whether no tools are indexed.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The built-in ranker, boxed: an empty [`LexicalRanker`].
pub fn default_ranker() -> Box<dyn ToolRanker> {
    Box::new(LexicalRanker::new())
}
