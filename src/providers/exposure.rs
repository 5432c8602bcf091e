//! Which tools a model is sent: all of them, or a few plus a search tool
//! that loads the rest when the model asks ([`ToolExposure`]), kept per
//! conversation by a [`ToolSession`].
//!
//! A host that connects a user's servers would send its model every
//! definition on every turn: hundreds of tools, tens of thousands of tokens
//! before the user has said anything. Deferred, the model is sent the
//! tools that are always loaded plus one meta-tool, `search_tools`, whose
//! call the host answers from its tool index
//! ([`Host::search_tools`](crate::host::Host::search_tools)) with the
//! matching tools' full definitions; those tools are *loaded*: sent with
//! every later turn of the conversation (at most
//! [`Deferral::max_loaded`], the oldest unloaded first).
//!
//! Deferral is never the default: a model that never calls a search tool
//! breaks when its tools are hidden behind one. [`ToolExposure::Auto`]
//! defers only when the full definitions would take more than a share of
//! the context window the host states, estimating tokens from bytes (about
//! 4 bytes of JSON a token: an estimate for budgets, not a count).
//!
//! Always loaded: the model names the host lists
//! ([`Deferral::always`]), and any tool whose
//! [`ToolSpec::always_load`] is set: its `_meta` says
//! `"anthropic/alwaysLoad": true`, or its definition's
//! [`AlwaysLoad`](crate::AlwaysLoad) names it (a config file's
//! per-server `alwaysLoad`).
//!
//! A call of a tool that is deferred and not loaded is refused before
//! anything is sent, with `tool_unavailable` and a message the model can
//! act on (call `search_tools` first); [`ToolSession::call`] answers the
//! meta-tool itself and routes every other call through the host.

use std::collections::VecDeque;

use serde_json::{json, Value};

use super::budget::{OutputBudget, ResultStore, READ_RESULT_TOOL_NAME};
use super::ToolCall;
use crate::catalog::ToolSpec;
use crate::content::{Content, ToolResult};
use crate::error::{normalize_message, Error, FailureClass};
use crate::host::{Host, HostCatalog};
use crate::request::CallOpts;

/// The meta-tool's name, as every provider is sent it.
pub const SEARCH_TOOL_NAME: &str = "search_tools";
pub use crate::catalog::ALWAYS_LOAD_META_KEY;
/// Bytes of JSON counted as one token by the estimates here.
pub const BYTES_PER_TOKEN: usize = 4;
/// The most tools one search loads.
const MAX_HITS_PER_SEARCH: usize = 10;
/// The longest query taken from a model's `search_tools` call.
const MAX_QUERY_BYTES: usize = 1024;

/// How deferral is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deferral {
    always: Vec<String>,
    max_loaded: usize,
    hits: usize,
}

impl Default for Deferral {
    /// No tool always loaded but those whose `_meta` asks; at most 32
    /// loaded by searches; five tools loaded by a search.
    fn default() -> Self {
        Deferral { always: Vec::new(), max_loaded: 32, hits: 5 }
    }
}

impl Deferral {
    /// Also always loads these tools (model names).
    pub fn always<I, S>(mut self, model_names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always.extend(model_names.into_iter().map(Into::into));
        self
    }

    /// The most tools searches keep loaded (at least 1): past it, the one
    /// loaded longest ago is unloaded.
    pub fn max_loaded(mut self, max: usize) -> Self {
        self.max_loaded = max.max(1);
        self
    }

    /// How many tools one search loads (1 to 10).
    pub fn hits_per_search(mut self, hits: usize) -> Self {
        self.hits = hits.clamp(1, MAX_HITS_PER_SEARCH);
        self
    }

    fn always_loads(&self, tool: &ToolSpec) -> bool {
        tool.always_load || self.always.contains(&tool.model_name)
    }
}

/// Which tools a model is sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolExposure {
    /// Every definition, every turn (the default).
    #[default]
    All,
    /// The always-loaded tools, the tools searches loaded, and
    /// `search_tools`.
    Deferred(Deferral),
    /// [`ToolExposure::Deferred`] when every definition together would
    /// take more than `percent` of a context window of `context_tokens`
    /// (estimated from bytes); [`ToolExposure::All`] otherwise.
    Auto {
        /// The model's context window, in tokens.
        context_tokens: usize,
        /// The share of it the definitions may take before they are
        /// deferred, in percent (the specification's client best
        /// practices suggest 1 to 5).
        percent: u8,
        /// How deferral is done when it is.
        deferral: Deferral,
    },
}

/// What one turn sends the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Offered<'a> {
    /// The tools whose definitions are sent.
    pub tools: Vec<&'a ToolSpec>,
    /// Whether `search_tools` is sent too (the tools are deferred).
    pub search_tool: bool,
    /// How many model-visible tools are held back.
    pub deferred: usize,
    /// Whether `read_result` is sent too (the session has an output
    /// budget).
    pub read_result: bool,
}

/// One conversation's tool exposure: what it loaded, and the calls it
/// makes. Cheap; one per conversation.
#[derive(Debug, Clone)]
pub struct ToolSession {
    exposure: ToolExposure,
    loaded: VecDeque<String>,
    budget: Option<OutputBudget>,
    results: ResultStore,
}

impl ToolSession {
    /// A conversation with nothing loaded yet.
    pub fn new(exposure: ToolExposure) -> Self {
        ToolSession { exposure, loaded: VecDeque::new(), budget: None, results: ResultStore::new() }
    }

    /// Results over `budget` reach the model as a preview and a handle,
    /// read back with `read_result` (see [`super::budget`]); offer the
    /// provider's `read_result` tool beside the others
    /// ([`Offered::read_result`]).
    pub fn with_budget(mut self, budget: OutputBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Keeps the results over the budget in `store` (by default one in
    /// memory; [`ResultStore::spilling_to`] keeps them in files).
    pub fn with_result_store(mut self, store: ResultStore) -> Self {
        self.results = store;
        self
    }

    /// The results kept for `read_result`.
    pub fn results(&self) -> &ResultStore {
        &self.results
    }

    /// The tools searches loaded, oldest first (model names).
    pub fn loaded(&self) -> impl Iterator<Item = &str> {
        self.loaded.iter().map(String::as_str)
    }

    /// The deferral in force for `catalog`, if the tools are deferred.
    fn deferral(&self, catalog: &HostCatalog) -> Option<&Deferral> {
        match &self.exposure {
            ToolExposure::All => None,
            ToolExposure::Deferred(deferral) => Some(deferral),
            ToolExposure::Auto { context_tokens, percent, deferral } => {
                let tokens = estimated_tokens(catalog.tools().filter(|t| t.visible_to_model()));
                let budget = context_tokens.saturating_mul(usize::from(*percent)) / 100;
                (tokens > budget).then_some(deferral)
            }
        }
    }

    /// What this turn sends: the tools (convert them with the provider's
    /// `tools`) and whether to add the provider's `search_tool`.
    pub fn offered<'a>(&self, catalog: &'a HostCatalog) -> Offered<'a> {
        let visible: Vec<&ToolSpec> = catalog.tools().filter(|t| t.visible_to_model()).collect();
        let Some(deferral) = self.deferral(catalog) else {
            return Offered {
                tools: visible,
                search_tool: false,
                deferred: 0,
                read_result: self.budget.is_some(),
            };
        };
        let total = visible.len();
        let tools: Vec<&ToolSpec> = visible
            .into_iter()
            .filter(|t| deferral.always_loads(t) || self.loaded.contains(&t.model_name))
            .collect();
        let deferred = total - tools.len();
        Offered { tools, search_tool: true, deferred, read_result: self.budget.is_some() }
    }

    /// Makes a model's call: `search_tools` answered here (and its hits
    /// loaded), a deferred tool that is not loaded refused, any other call
    /// dispatched through the host.
    pub async fn call(&mut self, host: &Host, call: &ToolCall, opts: CallOpts) -> Result<ToolResult, Error> {
        if call.name == READ_RESULT_TOOL_NAME && self.budget.is_some() {
            return Ok(super::budget::read_result(&self.results, &call.arguments));
        }
        let result = self.call_unbudgeted(host, call, opts).await?;
        Ok(match self.budget {
            Some(budget) => super::budget::within(result, budget, &mut self.results),
            None => result,
        })
    }

    async fn call_unbudgeted(
        &mut self,
        host: &Host,
        call: &ToolCall,
        opts: CallOpts,
    ) -> Result<ToolResult, Error> {
        let catalog = host.catalog();
        let deferral = self.deferral(&catalog).cloned();
        if call.name == SEARCH_TOOL_NAME {
            let Some(deferral) = deferral else {
                return Err(Error::new(FailureClass::NotFound, "search_tools is not offered: every tool is")
                    .with_op("tool_call"));
            };
            return Ok(self.search(host, &catalog, &deferral, &call.arguments));
        }
        if let Some(deferral) = &deferral {
            let listed = catalog.resolve(&call.name).ok().map(|(_, t)| t);
            let loaded = self.loaded.contains(&call.name);
            if let Some(tool) = listed.filter(|t| !deferral.always_loads(t) && !loaded) {
                return Err(Error::new(
                    FailureClass::ToolUnavailable,
                    format!(
                        "the tool {:?} is not loaded yet: call {SEARCH_TOOL_NAME} with what you need it for \
                         first, then call it",
                        normalize_message(&tool.model_name, 80)
                    ),
                )
                .with_op("tool_call"));
            }
        }
        super::dispatch(host, call, opts).await
    }

    /// Answers `search_tools`: the hits' full definitions as text, and the
    /// hits loaded for the next turns.
    fn search(
        &mut self,
        host: &Host,
        catalog: &HostCatalog,
        deferral: &Deferral,
        arguments: &Value,
    ) -> ToolResult {
        let query = arguments.get("query").and_then(Value::as_str).unwrap_or_default();
        let query = normalize_message(query, MAX_QUERY_BYTES);
        let k = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(deferral.hits, |k| (k as usize).clamp(1, MAX_HITS_PER_SEARCH));
        if query.trim().is_empty() {
            return text_result(
                "search_tools needs a non-empty \"query\": what the tool should do.".into(),
                true,
            );
        }
        let hits = host.search_tools(&query, k);
        let mut definitions = Vec::new();
        for hit in &hits {
            let Ok((_, tool)) = catalog.resolve(&hit.model_name) else { continue };
            definitions.push(json!({
                "name": tool.model_name,
                "description": tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default(),
                "inputSchema": tool.input_schema,
            }));
            self.load(&tool.model_name, deferral.max_loaded);
        }
        if definitions.is_empty() {
            return text_result(format!("no tool matches {query:?}; try other words"), false);
        }
        let text = format!(
            "{} tools loaded; they can be called from now on:\n{}",
            definitions.len(),
            serde_json::to_string_pretty(&definitions).unwrap_or_default()
        );
        text_result(text, false)
    }

    fn load(&mut self, model_name: &str, max: usize) {
        self.loaded.retain(|n| n != model_name);
        self.loaded.push_back(model_name.to_string());
        while self.loaded.len() > max {
            self.loaded.pop_front();
        }
    }
}

/// A result of one text block, as the meta-tools answer.
pub(super) fn text_result(text: String, is_error: bool) -> ToolResult {
    ToolResult {
        is_error,
        content: vec![Content::Text { text, truncated: false, annotations: None, meta: None }],
        structured: None,
        warnings: Vec::new(),
    }
}

/// The estimated tokens of these tools' definitions (name, description,
/// input schema), at [`BYTES_PER_TOKEN`] bytes a token.
pub fn estimated_tokens<'a>(tools: impl IntoIterator<Item = &'a ToolSpec>) -> usize {
    let bytes: usize = tools
        .into_iter()
        .map(|t| {
            t.model_name.len() + t.description.as_deref().map_or(0, str::len) + t.input_schema.as_str().len()
        })
        .sum();
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The meta-tool's description and input schema, as JSON Schema.
fn search_tool_parts() -> (&'static str, Value) {
    (
        "Finds tools that are not loaded yet. Describe what you need to do; the best matching tools are \
         loaded (their definitions are in the result) and can be called from the next step on.",
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What the tool should do, in a few words." },
                "limit": { "type": "integer", "description": "How many tools to load (1 to 10)." },
            },
            "required": ["query"],
        }),
    )
}

/// `search_tools` as an OpenAI Chat Completions function tool.
pub fn openai_search_tool() -> Value {
    let (description, parameters) = search_tool_parts();
    json!({ "type": "function", "function": { "name": SEARCH_TOOL_NAME, "description": description, "parameters": parameters } })
}

/// `search_tools` as an Anthropic tool definition.
pub fn anthropic_search_tool() -> Value {
    let (description, schema) = search_tool_parts();
    json!({ "name": SEARCH_TOOL_NAME, "description": description, "input_schema": schema })
}

/// `search_tools` as a Gemini function declaration.
pub fn gemini_search_tool() -> Value {
    let (description, _) = search_tool_parts();
    json!({ "name": SEARCH_TOOL_NAME, "description": description, "parameters": {
        "type": "OBJECT",
        "properties": {
            "query": { "type": "STRING", "description": "What the tool should do, in a few words." },
            "limit": { "type": "INTEGER", "description": "How many tools to load (1 to 10)." },
        },
        "required": ["query"],
    }})
}

/// `read_result` as an OpenAI Chat Completions function tool.
pub fn openai_read_result_tool() -> Value {
    let (description, parameters) = super::budget::read_result_parts();
    json!({ "type": "function", "function": { "name": READ_RESULT_TOOL_NAME, "description": description, "parameters": parameters } })
}

/// `read_result` as an Anthropic tool definition.
pub fn anthropic_read_result_tool() -> Value {
    let (description, schema) = super::budget::read_result_parts();
    json!({ "name": READ_RESULT_TOOL_NAME, "description": description, "input_schema": schema })
}

/// `read_result` as a Gemini function declaration.
pub fn gemini_read_result_tool() -> Value {
    let (description, _) = super::budget::read_result_parts();
    json!({ "name": READ_RESULT_TOOL_NAME, "description": description, "parameters": {
        "type": "OBJECT",
        "properties": {
            "handle": { "type": "STRING", "description": "The handle the preview named." },
            "offset": { "type": "INTEGER", "description": "The first character to read (0 is the start)." },
            "length": { "type": "INTEGER", "description": "How many characters to read (at most 65536)." },
        },
        "required": ["handle"],
    }})
}
