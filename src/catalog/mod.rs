//! The catalog: one validated, digested snapshot of what a server offers,
//! in generations that the host adopts explicitly.
//!
//! A binding discovers its server's tools, prompts, resources and resource
//! templates while it connects (state `discovering`), and that first
//! [`Catalog`] is generation 1, adopted. Afterwards the catalog only changes
//! when the host says so:
//!
//! 1. A `notifications/{tools,prompts,resources}/list_changed` marks that
//!    [`Family`] stale ([`Status::stale_families`], one
//!    [`Event::CatalogStale`] when it goes from fresh to stale).
//! 2. A refetch follows, debounced: the refresh task waits
//!    250 ms after the first notification of a burst and then
//!    refetches every stale family once, so a burst of a thousand
//!    notifications costs one or two refetches, not a thousand.
//! 3. If what came back is identical (same `digest`) to the adopted
//!    generation, nothing changes ([`Event::CatalogRefreshed`]). Otherwise it
//!    is published as a **candidate** with a new ordinal
//!    ([`Event::CatalogCandidate`], [`Binding::candidate`]).
//! 4. The host adopts it with [`Binding::adopt`] ([`Event::CatalogAdopted`]).
//!    Until then, calls, [`Binding::catalog`] and
//!    [`Catalog::tool_by_model_name`] use the adopted generation.
//! 5. A refresh that fails keeps the adopted generation, reports
//!    [`Event::CatalogRejected`], and retries under `Definition::refresh`
//!    ([`RetryPolicy`](crate::RetryPolicy)); a binding that gives up shows the family as stale and
//!    its state as `degraded` until a later refresh succeeds.
//!
//! # Calls and a changed tool (`tool_schema_changed`)
//!
//! A call names a tool by raw name and is checked against the **adopted**
//! generation. When a candidate is waiting in which that tool's input or
//! output schema differs (by schema digest), or from
//! which the tool is gone, the call is refused before any I/O with
//! `tool_schema_changed`: the arguments were built for the adopted schema,
//! and the server has said it now expects something else. The host adopts
//! the candidate (and re-plans with the new schema) or waits. A change of
//! title, description or annotations alone does not refuse calls. A raw name
//! the adopted generation does not list is sent as is (the server is the
//! authority on what it serves, and the `ToolFilter` is the gate for what the
//! host allows), with a warning on the result and no output validation.
//!
//! # Output validation
//!
//! A result's `structuredContent` is validated against the adopted spec's
//! output schema (see `schema`; no reference is ever fetched). A result
//! that fails, or that lacks structured content although the tool declares
//! an output schema, is handled by the profile: with the tolerance
//! `structured_content_mismatch` (every `default` and `legacy` profile) the structured
//! content is dropped and the result carries a warning saying why; without it
//! (`strict/v1`) the call fails with `server_protocol`. A result with
//! `isError` is not validated.
//!
//! # Bounds (none of them "unbounded")
//!
//! | limit | over it |
//! | --- | --- |
//! | `max_catalog_pages` | paging stops; the entries read are kept; warning |
//! | a repeated `nextCursor` | paging stops at once; the entries read are kept; warning |
//! | `max_catalog_items` (tools) | the first N entries in server order are kept, no further page is asked for; warning |
//! | `max_prompt_count` | the same, for prompts |
//! | `max_resource_count` | the same, for resources and for templates (each) |
//! | `max_schema_bytes`, `max_schema_depth` (input schema) | that tool is refused (`catalog_over_limit` in the warning) |
//! | the same (output schema) | the schema is dropped under `invalid_output_schema`, otherwise the tool is refused |
//! | a tool's `_meta` over 16 KiB | the `_meta` is dropped, the tool kept; warning |
//! | a description over 16 KiB, a title over 256 bytes | the text is cut at a UTF-8 boundary; warning |
//! | a URI over 8 KiB | that resource or template is refused |
//! | more than 64 prompt arguments | that prompt is refused |
//!
//! Count limits keep what fits rather than refusing the catalog: a host is
//! better served by the first thousand tools and a warning than by no
//! binding. Warnings are bounded (the first 64
//! are kept, each at most 512 bytes).
//!
//! # Bad entries and bad pages
//!
//! One bad entry drops that entry with a warning, never the list: a raw name
//! that is empty, over 512 bytes or holds a control character
//! (`names::check_raw_name`); an entry that is not the shape the
//! specification gives; an unusable input schema; the same raw name listed
//! twice with different content (every copy is refused: which one would a
//! call be checked against?; identical copies are kept once).
//!
//! A page is bad when the server answers it with a JSON-RPC error, sends a
//! result without its list, or sends a frame the connection cannot parse.
//! A first page answered with "method not found" means the server offers
//! nothing in that family: it reads as empty, with a warning. Otherwise:
//!
//! - at connect, where there is nothing to fall back on, a bad page ends that
//!   family's paging with a warning and the earlier pages are kept;
//! - on a refresh, a bad page fails the refresh (`CatalogRejected`, retried),
//!   so a candidate is never a listing cut short by a bad answer.
//!
//! A failed exchange (a lost connection, a passed deadline) fails discovery
//! either way: `connect` fails (discovery is bounded by `Timeouts::startup`
//! as a whole and by `Timeouts::request` per page), a refresh is rejected.
//!
//! Invalid UTF-8 never reaches the catalog: a JSON string holding a lone
//! surrogate (`"\ud800"`) cannot become a Rust `String`, so serde refuses the
//! whole message that carries it. The connection drops that frame and ends
//! the request it answers with `server_protocol`: the entry is lost together
//! with its page, which is a bad page as above.
//!
//! # Digests
//!
//! [`Catalog::digest`] covers the four families exactly as the server sent
//! them (see [Digests](self#digests)): not the host's filter, profile or model names. Two
//! bindings with equal digests look at the same offering; a refetch with the
//! adopted digest is not a change.
//!
//!
//! # Names
//!
//! Raw names and model names.
//!
//! A **raw name** is the server's identifier for a tool (or prompt). It goes
//! back on the wire verbatim, so it is checked, never changed:
//! the catalog refuses one that is empty, longer than
//! 512 bytes, or holds a control character or a bidirectional
//! formatting character (an override or isolate that would make one tool's
//! name display as another's). (Invalid UTF-8 cannot
//! reach a Rust `String` at all: serde refuses a JSON string holding a lone
//! surrogate such as `"\ud800"`, so the message carrying it is refused by the
//! connection before the catalog sees it; see [`crate::catalog`].)
//!
//! A **model name** is what a model is shown: `mcp__<binding>__<tool>`, only
//! `[A-Za-z0-9_-]`, at most 64 bytes, unique within a
//! catalog (case-insensitively, since some providers fold case). Sanitizing is
//! lossy, so a model name is never parsed back: the catalog keeps the table
//! from raw names to model names and looks model names up in it
//! ([`Catalog::tool_by_model_name`]).
//!
//! ## How a model name is made
//!
//! 1. The *base* of a raw name keeps `[A-Za-z0-9_-]` and replaces every run of
//!    other characters with one `_` (`se.arch` and `se arch` both give
//!    `se_arch`); a base with no letter or digit left (`поиск`, `検索`) becomes
//!    `tool`. It is cut to the bytes left after the prefix.
//! 2. Tools whose bases are equal ignoring ASCII case form a *collision
//!    group*. A tool alone in its group is named `prefix + base`. **Every**
//!    member of a larger group, not just the later ones, gets a suffix `_` +
//!    the first 8 hex digits of a SHA-256 of its raw name (its base is cut to
//!    make room), so no member's name depends on which one the server listed
//!    first.
//! 3. Should two final names still be equal (a suffixed name that happens to
//!    equal another tool's plain name, or two equal 8-digit suffixes), every
//!    tool in that clash takes a longer suffix (16, 24, … hex digits, up to
//!    what fits), and this repeats until no clash is left. Only a server that
//!    searched for a SHA-256 prefix collision of at least 96 bits could outlast
//!    the longest suffix; then the clashing tools after the first (by raw name)
//!    are refused, so uniqueness holds unconditionally.
//!
//! Every decision depends on the *set* of raw names, never on their order, so
//! names are deterministic for any listing order or page split; and a tool's
//! name only changes when a new tool collides with it.
//!
//!
//! # Digests
//!
//! Canonical digests: of a catalog's offering, of one schema, of a profile.
//!
//! Each digest is SHA-256 over a canonical, domain-separated encoding, so two
//! equal digests mean equal content, whatever order keys, list entries or
//! pages came in, and a digest of one kind never equals a digest of another.
//!
//! ## The encoding
//!
//! Every digest starts with its domain tag, encoded as a string
//! (`mcp-stack/catalog/v1`, `mcp-stack/schema/v1`, `mcp-stack/profile/v1`).
//! A JSON value is encoded as one tag byte and its content; lengths and counts
//! are 8-byte big-endian:
//!
//! | value | encoding |
//! | --- | --- |
//! | `null`, `false`, `true` | `n`, `f`, `t` |
//! | number | `d`, then its canonical text as a string (below) |
//! | string | `s`, byte length, the UTF-8 bytes (no Unicode normalization: a raw name is an identifier and goes back verbatim) |
//! | array | `a`, element count, the elements in order |
//! | object | `o`, member count, then each member's key (as a string) and value, keys sorted by their UTF-8 bytes |
//!
//! A number's canonical text: an integer value is written in decimal without
//! sign for zero, exponent or fraction, however it was sent (`1`, `1.0`,
//! `1e0` and `-0` are `1`, `1`, `1` and `0`); any other value is written as
//! the shortest decimal that reads back as the same `f64`, without exponent.
//!
//! The catalog digest covers the four families in a fixed order (`tools`,
//! `prompts`, `resources`, `resourceTemplates`); for each, the family name,
//! the entry count, and the SHA-256 of each entry's encoding, sorted. So the
//! listing order and the page split do not matter, while a repeated entry
//! does. It covers the entries **as the server sent them**: not the host's
//! tool filter, profile or model names, so two hosts with different policies
//! looking at one server see one digest.
//!
//! [`Status::stale_families`]: crate::Status::stale_families
//! [`Event::CatalogStale`]: crate::Event::CatalogStale
//! [`Event::CatalogRefreshed`]: crate::Event::CatalogRefreshed
//! [`Event::CatalogCandidate`]: crate::Event::CatalogCandidate
//! [`Event::CatalogAdopted`]: crate::Event::CatalogAdopted
//! [`Event::CatalogRejected`]: crate::Event::CatalogRejected
//! [`Binding::candidate`]: crate::Binding::candidate
//! [`Binding::adopt`]: crate::Binding::adopt
//! [`Binding::catalog`]: crate::Binding::catalog
//! [`RetryPolicy`]: crate::RetryPolicy

pub mod apps;
pub(crate) mod digest;
pub(crate) mod mcp_header;
pub mod meta;
pub(crate) mod names;
pub(crate) mod schema;
mod schema_text;

mod discovery;
mod generation;
mod guard;

pub use crate::protocol::family::Family;

pub(crate) use discovery::{one_page, page_through, BadPage, BuildContext, MAX_CURSOR_BYTES};
pub use generation::RefreshOutcome;
pub(crate) use generation::{CatalogCell, ChangeFeed};
pub(crate) use guard::CatalogGuard;
pub use schema_text::Schema;

/// What the catalog reads the server's whole offering through: the
/// binding's stack below its tool filter and call checks, under the
/// request deadline (see [`crate::binding`]).
pub(crate) type CatalogService =
    crate::layer::trace::Trace<crate::layer::deadline::Deadline<crate::layer::entry::Entry>>;

use serde::Serialize;
use serde_json::{Map, Value};
use std::time::Duration;

use crate::compat::Tolerance;
use crate::protocol::lifecycle::ServerCapabilities;
use crate::protocol::tools::ToolAnnotations;
use crate::session::ServerIdentity;

/// How long the refresh task waits after the first change notification of a
/// burst before refetching.
pub(crate) const REFRESH_DEBOUNCE: Duration = Duration::from_millis(250);
/// The longest title kept, in bytes.
pub(crate) const MAX_TITLE_BYTES: usize = 256;
/// The longest description kept, in bytes.
pub(crate) const MAX_DESCRIPTION_BYTES: usize = 16 << 10;
/// The largest `_meta` kept on a tool, as compact JSON, in bytes.
pub(crate) const MAX_META_BYTES: usize = 16 << 10;
/// The longest resource URI or URI template accepted, in bytes.
pub(crate) const MAX_URI_BYTES: usize = 8 << 10;
/// The longest MIME type kept, in bytes.
pub(crate) const MAX_MIME_TYPE_BYTES: usize = 256;
/// The most arguments a prompt may declare.
pub(crate) const MAX_PROMPT_ARGUMENTS: usize = 64;

/// One generation of a binding's catalog: what the server offers, validated,
/// with model names and a canonical digest.
///
/// It and its entries serialize with camelCase names, absent values as
/// `null`, tolerances as their snake_case ids.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    /// The binding's name.
    pub binding: String,
    /// The generation's ordinal within the binding, from 1.
    pub generation: u64,
    /// The hex canonical digest of the server's offering (see [Digests](crate::catalog#digests)).
    /// Independent of this host's filter and policy.
    pub digest: String,
    /// The protocol version negotiated at the handshake.
    pub protocol_version: String,
    /// What the server claims to be. Cosmetic: it names a peer, it never
    /// authorizes one.
    pub server: ServerIdentity,
    /// What the server advertised.
    pub capabilities: ServerCapabilities,
    /// The server's bounded usage hint. Reported, never applied: a host that
    /// wants it in a model's instructions must put it there deliberately.
    pub instructions: Option<String>,
    /// The tools the binding's `ToolFilter` permits, by raw name.
    pub tools: Vec<ToolSpec>,
    /// The prompts, by name.
    pub prompts: Vec<PromptSpec>,
    /// The concrete resources, by URI.
    pub resources: Vec<ResourceSpec>,
    /// The resource templates, by URI template.
    pub resource_templates: Vec<ResourceTemplateSpec>,
    /// Defects tolerated during discovery (a dropped tool, a cut listing).
    /// Bounded.
    pub warnings: Vec<String>,
    /// The tolerances this generation actually needed, in their stable order:
    /// empty for a server that follows the specification, whatever the
    /// profile would have allowed. Besides what building the catalog bent,
    /// it holds what the connection it was discovered over needed (the
    /// transport's `legacy_sse`, when an automatic HTTP factory fell back to
    /// HTTP+SSE; see [`crate::session::SessionInfo::transport_tolerances`]).
    pub applied_tolerances: Vec<Tolerance>,
}

impl Catalog {
    /// The tool with this raw name, if the catalog lists it.
    ///
    /// On every call's path (the call checks, a task's requirement): a
    /// discovered catalog keeps its tools sorted by raw name, so this is a
    /// binary search, and a scan only for a name it does not find (a
    /// catalog built by hand need not be sorted).
    pub fn tool(&self, raw_name: &str) -> Option<&ToolSpec> {
        match self.tools.binary_search_by(|t| t.raw_name.as_str().cmp(raw_name)) {
            Ok(i) => Some(&self.tools[i]),
            Err(_) => self.tools.iter().find(|t| t.raw_name == raw_name),
        }
    }

    /// The tool a model named. This is the only way back from a model name to
    /// a tool: model names are lossy and are never parsed.
    pub fn tool_by_model_name(&self, model_name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.model_name == model_name)
    }

    /// The prompt with this name.
    pub fn prompt(&self, name: &str) -> Option<&PromptSpec> {
        self.prompts.iter().find(|p| p.name == name)
    }
}

/// A tool, as the catalog offers it to a host and a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The server's name for the tool: what goes on the wire and what
    /// `call_tool` takes.
    pub raw_name: String,
    /// The sanitized, binding-qualified name to show a model (see [Names](crate::catalog#names)).
    /// Never parse it; resolve it with [`Catalog::tool_by_model_name`].
    pub model_name: String,
    /// The display name: `title`, else `annotations.title` (the
    /// specification's precedence), checked and bounded.
    pub title: Option<String>,
    /// What the tool does, for the model. Bounded.
    pub description: Option<String>,
    /// The JSON Schema the arguments must satisfy. Always present. Kept as
    /// compact text (see [`Schema`]).
    pub input_schema: Schema,
    /// The JSON Schema of `structuredContent`, when the server supplied a
    /// usable one.
    pub output_schema: Option<Schema>,
    /// The hex digest of `input_schema`.
    pub input_schema_digest: String,
    /// The hex digest of `output_schema`, if there is one.
    pub output_schema_digest: Option<String>,
    /// The server's hints, never guarantees; `None` when it gave none. Their
    /// `title` is moved to [`ToolSpec::title`].
    pub annotations: Option<ToolAnnotations>,
    /// Whether the tool runs as a task (`execution.taskSupport`;
    /// `forbidden` when it does not say). See [`Binding::call_tool_task`](crate::Binding::call_tool_task).
    pub task_support: crate::protocol::TaskSupport,
    /// The tool's `_meta`, within 16 KiB. Read declarations from
    /// it with [`ToolSpec::declarations`].
    pub meta: Option<Map<String, Value>>,
    /// What the declaration sets registered on the definition read from
    /// `_meta` when this generation was built (see
    /// [`Definition::declarations`](crate::Definition::declarations)):
    /// `tool.declared.get::<MySet>()`.
    #[serde(skip)]
    pub declared: meta::Declared,
    /// Its MCP Apps declaration (`_meta.ui`): its app's `ui://` resource
    /// and who the tool is for; `None` for a tool that declares none (for
    /// the model and for apps alike). See [`apps`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<apps::AppTool>,
    /// Whether a host that defers tool definitions sends this one every
    /// turn: its `_meta` says `"anthropic/alwaysLoad": true`
    /// ([`ALWAYS_LOAD_META_KEY`]), or the definition's
    /// [`AlwaysLoad`](crate::AlwaysLoad) names it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub always_load: bool,
    /// Defects tolerated for this tool (a dropped output schema, a cut
    /// description).
    pub warnings: Vec<String>,
}

/// The `_meta` key with which a server marks a tool as always loaded
/// (Anthropic's, in use by servers today).
pub const ALWAYS_LOAD_META_KEY: &str = "anthropic/alwaysLoad";

impl ToolSpec {
    /// Reads the declaration set `D` from this tool's `_meta` (see [`meta`]),
    /// now, whether or not it is registered on the definition (the
    /// registered sets were read when the catalog was built: see
    /// [`ToolSpec::declared`]). Never fails; `binding` names the origin in
    /// the warnings.
    pub fn declarations<D: meta::Declarations>(&self, binding: &str) -> meta::Read<D> {
        meta::read::<D>(self.meta.as_ref(), binding, &self.raw_name)
    }

    /// Whether a model may be offered this tool: its visibility includes
    /// `"model"` (the default).
    pub fn visible_to_model(&self) -> bool {
        self.app.as_ref().is_none_or(|app| app.visibility.model)
    }

    /// Whether an app of its server may call this tool: its visibility
    /// includes `"app"` (the default).
    pub fn callable_from_app(&self) -> bool {
        self.app.as_ref().is_none_or(|app| app.visibility.app)
    }
}

/// A prompt the server offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptSpec {
    /// The prompt's name, sent back verbatim.
    pub name: String,
    /// The display name.
    pub title: Option<String>,
    /// What the prompt provides.
    pub description: Option<String>,
    /// The arguments it takes.
    pub arguments: Vec<PromptArg>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArg {
    /// The argument's name.
    pub name: String,
    /// The display name.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

/// A concrete resource the server offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSpec {
    /// The resource's opaque identifier: never a host path.
    pub uri: String,
    /// Its programmatic name.
    pub name: String,
    /// The display name.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type, if known.
    pub mime_type: Option<String>,
    /// Its size in bytes, if the server said.
    pub size: Option<u64>,
    /// For a `ui://` resource whose entry carries `_meta.ui` (MCP Apps):
    /// what its server says of it there. A read's content item may say
    /// otherwise, and then wins ([`apps::AppResource`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<apps::AppResourceMeta>,
}

/// A family of resources described by a URI template.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateSpec {
    /// The RFC 6570 URI template.
    pub uri_template: String,
    /// Its programmatic name.
    pub name: String,
    /// The display name.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// The MIME type shared by every matching resource, if there is one.
    pub mime_type: Option<String>,
}
