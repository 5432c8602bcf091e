//! The host's tool index: its merged catalog as a [`ToolRanker`] sees it,
//! kept in step with the catalog's generations.
//!
//! The index is brought up to date when it is searched, from the merged
//! catalog of that moment ([`Host::catalog`](super::Host::catalog)): a
//! binding whose adopted catalog changed since the last search (another
//! generation, or the binding removed and added again) has its tools
//! replaced, and only its; a binding no longer in the catalog (removed,
//! failed, closed) has its tools removed before the search runs. So a
//! search never returns a tool the host would not route, and what a
//! refresh costs is the changed server's tools.
//!
//! What is indexed is what a model may be offered: the merged catalog's
//! tools ([`HostCatalog::tools`]: no colliding model names) that are
//! visible to a model (never an app-only tool).

use std::collections::HashMap;
use std::sync::Arc;

use super::catalog::HostCatalog;
use super::Host;
use crate::catalog::{Catalog, ToolSpec};
use crate::search::{Hit, ParamDoc, ToolDocument, ToolRanker, SEARCH_HINT_META_KEY};

/// The most hits one search returns.
pub(crate) const MAX_HITS: usize = 100;

/// A ranker and what it holds of each binding.
pub(crate) struct ToolIndex {
    ranker: Box<dyn ToolRanker>,
    /// Per binding: the catalog indexed (compared by identity: a catalog is
    /// one generation, shared, never changed).
    indexed: HashMap<String, Arc<Catalog>>,
    /// The merged catalog's colliding model names when last indexed.
    collisions: Vec<String>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex").field("bindings", &self.indexed.len()).finish_non_exhaustive()
    }
}

impl ToolIndex {
    pub(crate) fn new(ranker: Box<dyn ToolRanker>) -> Self {
        ToolIndex { ranker, indexed: HashMap::new(), collisions: Vec::new() }
    }

    /// Brings the index in step with `merged`; returns how many bindings
    /// were (re)indexed and removed.
    pub(crate) fn sync(&mut self, merged: &HostCatalog) -> (usize, usize) {
        // A change of the colliding names (rare) changes what every binding
        // offers: then everything is indexed again.
        let collisions: Vec<String> = merged.collisions().map(str::to_string).collect();
        if collisions != self.collisions {
            self.indexed.clear();
            self.collisions = collisions;
        }
        let mut seen = std::collections::HashSet::new();
        let mut reindexed = 0;
        for catalog in merged.catalogs() {
            seen.insert(catalog.binding.as_str());
            if self.indexed.get(&catalog.binding).is_some_and(|c| Arc::ptr_eq(c, catalog)) {
                continue;
            }
            let documents = catalog
                .tools
                .iter()
                .filter(|t| t.visible_to_model())
                .filter(|t| !self.collisions.iter().any(|c| c.eq_ignore_ascii_case(&t.model_name)))
                .map(|t| document(&catalog.binding, t))
                .collect();
            self.ranker.replace_server(&catalog.binding, documents);
            self.indexed.insert(catalog.binding.clone(), catalog.clone());
            reindexed += 1;
        }
        let gone: Vec<String> = self.indexed.keys().filter(|b| !seen.contains(b.as_str())).cloned().collect();
        for binding in &gone {
            self.ranker.remove_server(binding);
            self.indexed.remove(binding);
        }
        (reindexed, gone.len())
    }

    pub(crate) fn search(&self, query: &str, k: usize) -> Vec<crate::search::Hit> {
        self.ranker.search(query, k.min(MAX_HITS))
    }
}

impl Host {
    /// The `k` tools of the merged catalog that best match `query`, best
    /// first (at most 100): each [`Hit`] names the server, the tool's raw
    /// and model names, its score and why it matched. Only what a model
    /// may be offered is searched (never an app-only tool, nor a model name
    /// two bindings share).
    ///
    /// The index follows the catalog: a binding that adopted a new
    /// generation has its tools indexed again (and only its), a removed
    /// one's tools are gone from the next search. The ranker is the
    /// built-in lexical one unless the host set its own
    /// ([`HostBuilder::tool_ranker`](super::HostBuilder::tool_ranker)); see [`crate::search`] for how it
    /// ranks and what it bounds (a query is read up to 1 KiB and 32 terms;
    /// an empty one finds nothing).
    ///
    /// ```
    /// # #[cfg(feature = "demo")]
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use mcp_stack::{host::Host, Definition};
    ///
    /// let host = Host::new();
    /// host.add_all([Definition::new("demo", mcp_stack::demo::factory())]).await;
    /// let hits = host.search_tools("sum two numbers", 3);
    /// assert_eq!(hits[0].model_name, "mcp__demo__add");
    /// host.close().await;
    /// # }
    /// # #[cfg(not(feature = "demo"))]
    /// # fn main() {}
    /// ```
    pub fn search_tools(&self, query: &str, k: usize) -> Vec<Hit> {
        let merged = self.catalog();
        let mut index = self.inner.index.lock().expect("host tool index lock");
        index.sync(&merged);
        index.search(query, k)
    }
}

impl HostCatalog {
    /// [`Host::search_tools`] over this snapshot alone, with the built-in
    /// ranker: the index is built for the call (about 8 ms for 1,000
    /// tools, 120 ms for 10,000 on the bench's machine), so a host that
    /// searches often uses [`Host::search_tools`], whose index follows
    /// the catalog and is built once.
    pub fn search_tools(&self, query: &str, k: usize) -> Vec<Hit> {
        let mut index = ToolIndex::new(crate::search::default_ranker());
        index.sync(self);
        index.search(query, k)
    }
}

/// What the ranker knows of one tool: its names, title, description,
/// parameters (names, descriptions, string enum values) and its server's
/// search hint. The ranker bounds every string.
pub(crate) fn document(binding: &str, tool: &ToolSpec) -> ToolDocument {
    let properties = tool.input_schema.get("properties");
    let params = properties
        .as_ref()
        .and_then(|p| p.as_object())
        .map(|props| {
            props
                .iter()
                .take(crate::search::MAX_PARAMS)
                .map(|(name, schema)| {
                    let mut description =
                        schema.get("description").and_then(|d| d.as_str()).unwrap_or_default().to_string();
                    if let Some(values) = schema.get("enum").and_then(|e| e.as_array()) {
                        for v in values.iter().filter_map(|v| v.as_str()).take(32) {
                            description.push(' ');
                            description.push_str(v);
                        }
                    }
                    ParamDoc { name: name.clone(), description }
                })
                .collect()
        })
        .unwrap_or_default();
    let hint = tool.meta.as_ref().and_then(|m| m.get(SEARCH_HINT_META_KEY)).and_then(|h| h.as_str());
    ToolDocument {
        server: binding.to_string(),
        name: tool.raw_name.clone(),
        model_name: tool.model_name.clone(),
        title: tool.title.clone(),
        description: tool.description.clone().unwrap_or_default(),
        params,
        search_hint: hint.map(str::to_string),
    }
}
