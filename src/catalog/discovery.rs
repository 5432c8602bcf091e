//! Bounded discovery: paging through a list, and turning what the server sent
//! into a validated [`Catalog`].
//!
//! Paging lives here and nowhere else: the binding's `list_*` methods and the
//! catalog's discovery and refreshes all page through [`page_through`]. The
//! rules are in the [module docs of the catalog](super).

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use tower::{Service, ServiceExt};

use super::names::{self, check_raw_name};
use super::profile::{Profile, Tolerance};
use super::schema::{check_bounds, check_output_schema, encoded_len};
use super::{
    digest, Catalog, Family, PromptArg, PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec,
    MAX_DESCRIPTION_BYTES, MAX_META_BYTES, MAX_MIME_TYPE_BYTES, MAX_PROMPT_ARGUMENTS, MAX_TITLE_BYTES,
    MAX_URI_BYTES,
};
use crate::config::limits::Limits;
use crate::config::ToolFilter;
use crate::error::{normalize_message, truncate_utf8, Error, FailureClass};
use crate::protocol::jsonrpc::{nests_deeper_than, TooDeep, MAX_MESSAGE_DEPTH};
use crate::protocol::methods;
use crate::protocol::prompts::Prompt;
use crate::protocol::resources::{Resource, ResourceTemplate};
use crate::protocol::tools::Tool;
use crate::request::push_warning;
use crate::request::{McpRequest, McpResponse};
use crate::session::SessionInfo;

/// The entries of one list as the server sent them, with what went wrong
/// while reading it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RawList {
    pub(crate) entries: Vec<Value>,
    pub(crate) warnings: Vec<String>,
}

/// Everything the server offered, as sent: the input of [`build`] and of the
/// catalog digest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Offering {
    pub(crate) tools: RawList,
    pub(crate) prompts: RawList,
    pub(crate) resources: RawList,
    pub(crate) templates: RawList,
}

impl Offering {
    /// Forgets what was read of `family` (a server that no longer
    /// advertises it offers none of it).
    pub(crate) fn clear(&mut self, family: Family) {
        match family {
            Family::Tools => self.tools = RawList::default(),
            Family::Prompts => self.prompts = RawList::default(),
            Family::Resources => {
                self.resources = RawList::default();
                self.templates = RawList::default();
            }
        }
    }

    pub(crate) fn digest(&self) -> String {
        digest::catalog_digest([
            ("tools", &self.tools.entries),
            ("prompts", &self.prompts.entries),
            ("resources", &self.resources.entries),
            ("resourceTemplates", &self.templates.entries),
        ])
    }
}

/// Whether a failed page means the server answered badly (the page is lost,
/// the listing goes on without it) rather than that the exchange itself
/// failed (the discovery fails).
fn is_bad_answer(class: FailureClass) -> bool {
    matches!(
        class,
        FailureClass::ServerProtocol
            | FailureClass::RemoteToolError
            | FailureClass::NotFound
            | FailureClass::LimitExceeded
            | FailureClass::CatalogInvalid
    )
}

/// How [`page_through`] treats a page the server answers badly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadPage {
    /// Stop with a warning and keep the earlier pages (discovery at connect,
    /// where there is nothing to fall back on, and the `list_*` methods).
    Keep,
    /// Fail, so that a refresh never publishes a listing cut short by a bad
    /// answer: the adopted generation is the fallback.
    Fail,
}

/// Pages through the list `method`, whose result carries its entries under
/// `key`, within `max_items` entries and `max_pages` pages. Returns the raw
/// entries; every stop short of the end leaves a warning.
///
/// A first page answered with "method not found" means the server offers
/// nothing there: an empty list and a warning, whatever `bad_page` says. Any
/// other bad answer to a later page follows `bad_page`; a bad first page
/// fails either way (with the page's class, or `catalog_invalid` for a
/// result that is not an object or whose list is not an array), since then
/// every page failed and there is nothing to keep: an empty list would pass
/// for "the server offers none". A first result that is an object without
/// the list at all is read as empty, with a warning (servers that offer
/// nothing have been seen to answer `{}`).
/// A failed exchange (a lost connection, a passed deadline) always fails.
///
/// A page that nests deeper than the connection parses
/// ([`MAX_MESSAGE_DEPTH`]) is not a bad page: the connection hands its raw
/// result over ([`TooDeep`]), and the entries are read one by one, so that
/// one entry too deep costs that entry alone, with a warning.
pub(crate) async fn page_through<S>(
    service: S,
    method: &str,
    key: &str,
    max_items: usize,
    max_pages: usize,
    bad_page: BadPage,
) -> Result<RawList, Error>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
{
    let mut list = RawList::default();
    let mut seen_cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 0..max_pages {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let read = match service.clone().oneshot(McpRequest::with_value(method, params)).await {
            Ok(rsp) => read_page(rsp.result, key),
            Err(e) if page == 0 && e.class() == FailureClass::NotFound => {
                push_warning(
                    &mut list.warnings,
                    format!("{method}: the server does not serve it ({}); read as empty", e.message()),
                );
                return Ok(list);
            }
            Err(e) => match too_deep(&e) {
                Some(raw) => salvage_page(raw, key, &mut |i, why| {
                    push_warning(&mut list.warnings, format!("{method}: page {page}: dropped entry {i}{why}"))
                }),
                None if is_bad_answer(e.class()) && bad_page == BadPage::Keep && page > 0 => {
                    push_warning(
                        &mut list.warnings,
                        format!(
                            "{method}: page {page} failed ({}: {}); kept the {} entries before it",
                            e.class(),
                            e.message(),
                            list.entries.len()
                        ),
                    );
                    return Ok(list);
                }
                None if is_bad_answer(e.class()) && page == 0 => {
                    let text =
                        format!("{method}: the first page failed, nothing was listed: {}", e.message());
                    return Err(Error::new(e.class(), text).with_source(e));
                }
                None => return Err(e),
            },
        };
        let (entries, next) = match read {
            Ok(read) => read,
            Err(PageError::NoList) if bad_page == BadPage::Keep && page == 0 => {
                // A result without its list at all reads as an empty list,
                // as servers that offer nothing have been seen to send.
                push_warning(
                    &mut list.warnings,
                    format!("{method}: page 0 has no {key} list; read as empty"),
                );
                return Ok(list);
            }
            Err(why) if bad_page == BadPage::Keep && page > 0 => {
                push_warning(&mut list.warnings, format!("{method}: page {page} {why}; stopped"));
                return Ok(list);
            }
            Err(why) => {
                return Err(Error::new(FailureClass::CatalogInvalid, format!("{method}: page {page} {why}")))
            }
        };
        for entry in entries {
            if list.entries.len() >= max_items {
                push_warning(&mut list.warnings, format!("{method}: kept the first {max_items} entries"));
                return Ok(list);
            }
            list.entries.push(entry);
        }
        match next {
            Some(Value::String(next)) => {
                if !seen_cursors.insert(next.clone()) {
                    push_warning(
                        &mut list.warnings,
                        format!("{method}: the server repeated a cursor; stopped paging"),
                    );
                    return Ok(list);
                }
                cursor = Some(next);
            }
            _ => return Ok(list),
        }
    }
    push_warning(&mut list.warnings, format!("{method}: stopped after {max_pages} pages"));
    Ok(list)
}

/// A page's entries and its `nextCursor`, or why the page is malformed.
type PageRead = Result<(Vec<Value>, Option<Value>), PageError>;

/// Why a page is malformed.
#[derive(Debug)]
enum PageError {
    /// The result is an object without the list's key.
    NoList,
    /// Anything else, said in words.
    Malformed(String),
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::NoList => f.write_str("has no list"),
            PageError::Malformed(why) => f.write_str(why),
        }
    }
}

fn read_page(result: Value, key: &str) -> PageRead {
    let Value::Object(mut result) = result else {
        return Err(PageError::Malformed("is not an object".into()));
    };
    match result.remove(key) {
        Some(Value::Array(entries)) => Ok((entries, result.remove("nextCursor"))),
        None => Err(PageError::NoList),
        Some(_) => Err(PageError::Malformed(format!("has a {key} member that is not a list"))),
    }
}

/// The raw result of a reply that nested too deep for the connection, when
/// `error` is that.
fn too_deep(error: &Error) -> Option<&str> {
    let mut source = std::error::Error::source(error);
    // Bounded: an error's chain of sources is finite, and short here.
    for _ in 0..8 {
        let s = source?;
        if let Some(deep) = s.downcast_ref::<TooDeep>() {
            return deep.result();
        }
        source = s.source();
    }
    None
}

/// Reads a page from its raw result text, entry by entry: each entry is
/// parsed alone, and one that cannot be (it nests deeper than
/// [`MAX_MESSAGE_DEPTH`] by itself) is reported to `dropped` with its index
/// and why, and left out. Reading the raw text builds no values, so it has
/// no depth limit.
fn salvage_page(raw: &str, key: &str, dropped: &mut dyn FnMut(usize, String)) -> PageRead {
    use serde_json::value::RawValue;
    /// What an entry is called, read without building its values.
    #[derive(serde::Deserialize)]
    struct Named {
        #[serde(default)]
        name: Option<String>,
    }
    let Ok(mut result) = serde_json::from_str::<HashMap<String, &RawValue>>(raw) else {
        return Err(PageError::Malformed("is not an object".into()));
    };
    let raw_entries = match result.remove(key).map(|v| serde_json::from_str::<Vec<&RawValue>>(v.get())) {
        Some(Ok(entries)) => entries,
        None => return Err(PageError::NoList),
        Some(Err(_)) => return Err(PageError::Malformed(format!("has a {key} member that is not a list"))),
    };
    let mut entries = Vec::with_capacity(raw_entries.len());
    for (i, entry) in raw_entries.into_iter().enumerate() {
        match serde_json::from_str::<Value>(entry.get()) {
            Ok(value) => entries.push(value),
            Err(e) => {
                let name = serde_json::from_str::<Named>(entry.get()).ok().and_then(|n| n.name);
                let name = name.map(|n| format!(" ({})", q(&n))).unwrap_or_default();
                let why = if nests_deeper_than(entry.get().as_bytes(), MAX_MESSAGE_DEPTH) {
                    format!("it nests deeper than {MAX_MESSAGE_DEPTH} levels")
                } else {
                    normalize_message(&e.to_string(), 120)
                };
                dropped(i, format!("{name}: {why}"));
            }
        }
    }
    let next = result.remove("nextCursor").and_then(|v| serde_json::from_str::<Value>(v.get()).ok());
    Ok((entries, next))
}

/// What a catalog is built with besides the offering: who it is for and the
/// host's policy.
#[derive(Debug, Clone)]
pub(crate) struct BuildContext {
    pub(crate) binding: String,
    pub(crate) session: SessionInfo,
    pub(crate) profile: Profile,
    pub(crate) limits: Limits,
    pub(crate) filter: ToolFilter,
    /// The binding speaks HTTP: on 2026-07-28, a tool with invalid
    /// `x-mcp-header` annotations is dropped.
    pub(crate) http: bool,
}

impl BuildContext {
    /// Lists one family from the server.
    pub(crate) async fn fetch<S>(
        &self,
        service: S,
        family: Family,
        offering: &mut Offering,
        bad_page: BadPage,
    ) -> Result<(), Error>
    where
        S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
    {
        let l = &self.limits;
        let pages = l.max_catalog_pages;
        let b = bad_page;
        match family {
            Family::Tools => {
                offering.tools =
                    page_through(service, methods::TOOLS_LIST, "tools", l.max_catalog_items, pages, b).await?
            }
            Family::Prompts => {
                offering.prompts =
                    page_through(service, methods::PROMPTS_LIST, "prompts", l.max_prompt_count, pages, b)
                        .await?
            }
            Family::Resources => {
                let resources = page_through(
                    service.clone(),
                    methods::RESOURCES_LIST,
                    "resources",
                    l.max_resource_count,
                    pages,
                    b,
                )
                .await?;
                let templates = page_through(
                    service,
                    methods::RESOURCES_TEMPLATES_LIST,
                    "resourceTemplates",
                    l.max_resource_count,
                    pages,
                    b,
                )
                .await?;
                offering.resources = resources;
                offering.templates = templates;
            }
        }
        Ok(())
    }

    /// The families the server advertised, which discovery lists.
    pub(crate) fn advertised(&self) -> Vec<Family> {
        let c = &self.session.capabilities;
        let mut out = Vec::new();
        if c.tools.is_some() {
            out.push(Family::Tools);
        }
        if c.prompts.is_some() {
            out.push(Family::Prompts);
        }
        if c.resources.is_some() {
            out.push(Family::Resources);
        }
        out
    }
}

#[cfg(feature = "fuzzing")]
impl BuildContext {
    /// Lists the tools of `service` as discovery at connect does and builds
    /// generation 1 from them (for [`crate::fuzzing`]).
    pub(crate) async fn discover_tools<S>(&self, service: S) -> Result<Catalog, Error>
    where
        S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
    {
        let mut offering = Offering::default();
        self.fetch(service, Family::Tools, &mut offering, BadPage::Keep).await?;
        Ok(build(self, &offering, 1))
    }
}

/// Collects warnings and applied tolerances while building.
struct Ledger<'a> {
    profile: &'a Profile,
    warnings: Vec<String>,
    applied: BTreeSet<Tolerance>,
}

impl Ledger<'_> {
    fn warn(&mut self, text: String) {
        push_warning(&mut self.warnings, text);
    }

    /// Whether the profile allows `t`; records it as applied when it does.
    fn bend(&mut self, t: Tolerance) -> bool {
        let ok = self.profile.allows(t);
        if ok {
            self.applied.insert(t);
        }
        ok
    }
}

/// Quotes server text in a warning, bounded.
fn q(text: &str) -> String {
    format!("{:?}", normalize_message(text, 80))
}

/// Checks and bounds one piece of display text. Returns the text to keep,
/// or `None` when it is dropped; warnings and tolerances go to the ledger.
fn display(
    ledger: &mut Ledger<'_>,
    what: &str,
    text: Option<&str>,
    max: usize,
    multiline: bool,
    spec_warnings: Option<&mut Vec<String>>,
) -> Option<String> {
    let text = text?;
    // Control characters (C0, DEL, C1) and bidi formatting characters;
    // a description may keep its line breaks and tabs.
    let bad_char =
        |c: char| crate::error::is_display_hazard(c) && !(multiline && matches!(c, '\n' | '\t' | '\r'));
    let untidy = !multiline && text.trim() != text;
    let mut out = if text.chars().any(bad_char) || untidy {
        if !ledger.bend(Tolerance::DisplayNameNormalization) {
            let w = format!(
                "{what}: dropped, it holds control or bidi formatting characters or surrounding blanks"
            );
            if let Some(sw) = spec_warnings {
                push_warning(sw, w.clone());
            }
            ledger.warn(w);
            return None;
        }
        let cleaned: String = text.chars().map(|c| if bad_char(c) { ' ' } else { c }).collect();
        if multiline {
            cleaned
        } else {
            cleaned.trim().to_string()
        }
    } else {
        text.to_string()
    };
    if truncate_utf8(&mut out, max) {
        let w = format!("{what}: cut to {max} bytes");
        if let Some(sw) = spec_warnings {
            push_warning(sw, w.clone());
        }
        ledger.warn(w);
    }
    Some(out)
}

/// Groups entries by their identifier. Identical copies are kept once with
/// a warning; an identifier listed with different content refuses every
/// copy. Entries without an identifier are left for the caller to refuse.
fn dedupe<'v>(
    ledger: &mut Ledger<'_>,
    family: &str,
    entries: &'v [Value],
    id: impl Fn(&Value) -> Option<&str>,
) -> Vec<&'v Value> {
    let mut groups: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    let mut out = Vec::new();
    for e in entries {
        match id(e) {
            Some(k) => groups.entry(k).or_default().push(e),
            None => out.push(e),
        }
    }
    for (k, copies) in groups {
        let first = copies[0];
        if copies.len() == 1 {
            out.push(first);
        } else if copies.iter().all(|c| *c == first) {
            ledger.warn(format!("{family}: {} listed {} times; kept once", q(k), copies.len()));
            out.push(first);
        } else {
            ledger.warn(format!(
                "{family}: {} listed {} times with different content; refused every copy",
                q(k),
                copies.len()
            ));
        }
    }
    out
}

fn str_field<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// A tool that passed every check, before its model name is known.
struct Checked {
    spec: ToolSpec,
}

fn check_tool(ledger: &mut Ledger<'_>, ctx: &BuildContext, entry: &Value) -> Option<Checked> {
    let limits = &ctx.limits;
    let Some(name) = str_field(entry, "name") else {
        ledger.warn("tools: dropped an entry without a string name".into());
        return None;
    };
    if let Err(e) = check_raw_name(name) {
        ledger.warn(format!("tools: refused tool {}: its name {e}", q(name)));
        return None;
    }
    let mut entry = entry.clone();
    let obj = entry.as_object_mut()?;
    match obj.get("inputSchema") {
        None | Some(Value::Null) => {
            if !ledger.bend(Tolerance::LooseInputSchema) {
                ledger.warn(format!("tools: refused tool {}: it has no input schema", q(name)));
                return None;
            }
            obj.insert("inputSchema".into(), json!({ "type": "object" }));
        }
        Some(Value::Object(schema)) => match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None => {
                if !ledger.bend(Tolerance::LooseInputSchema) {
                    ledger.warn(format!("tools: refused tool {}: its input schema has no \"type\"", q(name)));
                    return None;
                }
            }
            Some(_) => {
                ledger.warn(format!(
                    "tools: refused tool {}: its input schema is not \"type\": \"object\"",
                    q(name)
                ));
                return None;
            }
        },
        Some(_) => {
            ledger.warn(format!("tools: refused tool {}: its input schema is not a JSON object", q(name)));
            return None;
        }
    }
    let tool: Tool = match serde_json::from_value(entry) {
        Ok(t) => t,
        Err(e) => {
            ledger.warn(format!("tools: refused tool {}: {e}", q(name)));
            return None;
        }
    };
    if let Err(e) = check_bounds(&tool.input_schema, limits.max_schema_bytes, limits.max_schema_depth) {
        ledger.warn(format!("tools: refused tool {}: catalog_over_limit: its input schema {e}", q(name)));
        return None;
    }
    let headers = ctx.http && crate::protocol::is_modern_version(&ctx.session.protocol_version);
    if let Some(Err(why)) = headers.then(|| super::mcp_header::header_params(&tool.input_schema)) {
        ledger.warn(format!("tools: refused tool {}: {why}", q(name)));
        return None;
    }
    let mut warnings = Vec::new();
    let output_schema = match tool.output_schema {
        None | Some(Value::Null) => None,
        Some(schema) => {
            let problem = check_bounds(&schema, limits.max_schema_bytes, limits.max_schema_depth)
                .map_err(|e| format!("catalog_over_limit: its output schema {e}"))
                .and_then(|()| {
                    check_output_schema(&schema).map(drop).map_err(|e| format!("its output schema {e}"))
                });
            match problem {
                Ok(()) => Some(schema),
                Err(why) => {
                    if !ledger.bend(Tolerance::InvalidOutputSchema) {
                        ledger.warn(format!("tools: refused tool {}: {why}", q(name)));
                        return None;
                    }
                    let w =
                        format!("tools: {}: dropped {}", q(name), why.replacen("its ", "its unusable ", 1));
                    push_warning(&mut warnings, w.clone());
                    ledger.warn(w);
                    None
                }
            }
        }
    };
    let what = |field: &str| format!("tools: {}: {field}", q(name));
    let raw_title =
        tool.title.as_deref().or_else(|| tool.annotations.as_ref().and_then(|a| a.title.as_deref()));
    let title = display(ledger, &what("title"), raw_title, MAX_TITLE_BYTES, false, Some(&mut warnings));
    let description = display(
        ledger,
        &what("description"),
        tool.description.as_deref(),
        MAX_DESCRIPTION_BYTES,
        true,
        Some(&mut warnings),
    );
    let meta = match tool.meta {
        Some(m) if encoded_len(&Value::Object(m.clone())) > MAX_META_BYTES => {
            let w = format!("tools: {}: _meta dropped, over {MAX_META_BYTES} bytes", q(name));
            push_warning(&mut warnings, w.clone());
            ledger.warn(w);
            None
        }
        other => other,
    };
    let annotations = tool.annotations.map(|mut a| {
        a.title = None;
        a
    });
    Some(Checked {
        spec: ToolSpec {
            model_name: String::new(),
            title,
            description,
            input_schema_digest: digest::schema_digest(&tool.input_schema),
            output_schema_digest: output_schema.as_ref().map(digest::schema_digest),
            input_schema: tool.input_schema,
            output_schema,
            annotations: annotations.filter(|a| *a != Default::default()),
            meta,
            warnings,
            raw_name: tool.name,
        },
    })
}

fn check_prompt(ledger: &mut Ledger<'_>, entry: &Value) -> Option<PromptSpec> {
    let Some(name) = str_field(entry, "name") else {
        ledger.warn("prompts: dropped an entry without a string name".into());
        return None;
    };
    if let Err(e) = check_raw_name(name) {
        ledger.warn(format!("prompts: refused prompt {}: its name {e}", q(name)));
        return None;
    }
    let prompt: Prompt = match serde_json::from_value(entry.clone()) {
        Ok(p) => p,
        Err(e) => {
            ledger.warn(format!("prompts: refused prompt {}: {e}", q(name)));
            return None;
        }
    };
    let args = prompt.arguments.unwrap_or_default();
    if args.len() > MAX_PROMPT_ARGUMENTS {
        ledger.warn(format!("prompts: refused prompt {}: over {MAX_PROMPT_ARGUMENTS} arguments", q(name)));
        return None;
    }
    let mut arguments = Vec::with_capacity(args.len());
    for a in args {
        if let Err(e) = check_raw_name(&a.name) {
            ledger.warn(format!("prompts: refused prompt {}: an argument name {e}", q(name)));
            return None;
        }
        let what = |f: &str| format!("prompts: {}: argument {}: {f}", q(name), q(&a.name));
        arguments.push(PromptArg {
            title: display(ledger, &what("title"), a.title.as_deref(), MAX_TITLE_BYTES, false, None),
            description: display(
                ledger,
                &what("description"),
                a.description.as_deref(),
                MAX_DESCRIPTION_BYTES,
                true,
                None,
            ),
            required: a.required.unwrap_or(false),
            name: a.name,
        });
    }
    let what = |f: &str| format!("prompts: {}: {f}", q(name));
    Some(PromptSpec {
        title: display(ledger, &what("title"), prompt.title.as_deref(), MAX_TITLE_BYTES, false, None),
        description: display(
            ledger,
            &what("description"),
            prompt.description.as_deref(),
            MAX_DESCRIPTION_BYTES,
            true,
            None,
        ),
        arguments,
        name: prompt.name,
    })
}

/// Checks an identifier URI (or URI template): non-empty, bounded, no control
/// characters. It is opaque and never resolved.
fn check_uri(uri: &str) -> Result<(), String> {
    if uri.is_empty() {
        return Err("is empty".into());
    }
    if uri.len() > MAX_URI_BYTES {
        return Err(format!("is {} bytes, over {MAX_URI_BYTES}", uri.len()));
    }
    if uri.chars().any(char::is_control) {
        return Err("contains a control character".into());
    }
    Ok(())
}

/// The fields resources and templates share, checked.
struct Described {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
}

fn describe(
    ledger: &mut Ledger<'_>,
    family: &str,
    id: &str,
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    mime_type: Option<&str>,
) -> Option<Described> {
    let what = |f: &str| format!("{family}: {}: {f}", q(id));
    let name = display(ledger, &what("name"), Some(name), MAX_TITLE_BYTES, false, None)?;
    let mime_type = match mime_type {
        Some(m) if m.len() > MAX_MIME_TYPE_BYTES || m.chars().any(char::is_control) => {
            ledger.warn(what("MIME type dropped, malformed or too long"));
            None
        }
        other => other.map(String::from),
    };
    Some(Described {
        name,
        title: display(ledger, &what("title"), title, MAX_TITLE_BYTES, false, None),
        description: display(ledger, &what("description"), description, MAX_DESCRIPTION_BYTES, true, None),
        mime_type,
    })
}

fn check_resource(ledger: &mut Ledger<'_>, entry: &Value) -> Option<ResourceSpec> {
    let r: Resource = match serde_json::from_value(entry.clone()) {
        Ok(r) => r,
        Err(e) => {
            ledger.warn(format!("resources: dropped an entry: {e}"));
            return None;
        }
    };
    if let Err(e) = check_uri(&r.uri) {
        ledger.warn(format!("resources: refused resource {}: its URI {e}", q(&r.uri)));
        return None;
    }
    let d = describe(
        ledger,
        "resources",
        &r.uri,
        &r.name,
        r.title.as_deref(),
        r.description.as_deref(),
        r.mime_type.as_deref(),
    );
    let Some(d) = d else {
        ledger.warn(format!("resources: refused resource {}: its name is unusable", q(&r.uri)));
        return None;
    };
    Some(ResourceSpec {
        uri: r.uri,
        name: d.name,
        title: d.title,
        description: d.description,
        mime_type: d.mime_type,
        size: r.size,
    })
}

fn check_template(ledger: &mut Ledger<'_>, entry: &Value) -> Option<ResourceTemplateSpec> {
    let t: ResourceTemplate = match serde_json::from_value(entry.clone()) {
        Ok(t) => t,
        Err(e) => {
            ledger.warn(format!("resourceTemplates: dropped an entry: {e}"));
            return None;
        }
    };
    if let Err(e) = check_uri(&t.uri_template) {
        ledger.warn(format!(
            "resourceTemplates: refused template {}: its URI template {e}",
            q(&t.uri_template)
        ));
        return None;
    }
    let d = describe(
        ledger,
        "resourceTemplates",
        &t.uri_template,
        &t.name,
        t.title.as_deref(),
        t.description.as_deref(),
        t.mime_type.as_deref(),
    );
    let Some(d) = d else {
        ledger.warn(format!(
            "resourceTemplates: refused template {}: its name is unusable",
            q(&t.uri_template)
        ));
        return None;
    };
    Some(ResourceTemplateSpec {
        uri_template: t.uri_template,
        name: d.name,
        title: d.title,
        description: d.description,
        mime_type: d.mime_type,
    })
}

/// Builds generation `generation` from an offering: validates every entry,
/// assigns model names, applies the tool filter, digests the offering.
pub(crate) fn build(ctx: &BuildContext, offering: &Offering, generation: u64) -> Catalog {
    let mut ledger = Ledger { profile: &ctx.profile, warnings: Vec::new(), applied: BTreeSet::new() };
    for w in offering
        .tools
        .warnings
        .iter()
        .chain(&offering.prompts.warnings)
        .chain(&offering.resources.warnings)
        .chain(&offering.templates.warnings)
    {
        ledger.warn(w.clone());
    }
    // What the connection itself needed (the HTTP transport's `legacy_sse`)
    // is reported with the catalog's own.
    ledger.applied.extend(ctx.session.transport_tolerances.iter().copied());

    let tool_entries = dedupe(&mut ledger, "tools", &offering.tools.entries, |v| str_field(v, "name"));
    let mut checked: Vec<Checked> =
        tool_entries.into_iter().filter_map(|e| check_tool(&mut ledger, ctx, e)).collect();
    let named = names::assign(&ctx.binding, checked.iter().map(|c| c.spec.raw_name.as_str()));
    for raw in &named.refused {
        ledger.warn(format!("tools: refused tool {}: no unique model name could be made", q(raw)));
    }
    checked.retain_mut(|c| match named.names.get(&c.spec.raw_name) {
        Some(m) => {
            c.spec.model_name = m.clone();
            true
        }
        None => false,
    });
    let mut tools: Vec<ToolSpec> =
        checked.into_iter().map(|c| c.spec).filter(|t| ctx.filter.permits(&t.raw_name)).collect();
    tools.sort_by(|a, b| a.raw_name.cmp(&b.raw_name));

    let prompt_entries = dedupe(&mut ledger, "prompts", &offering.prompts.entries, |v| str_field(v, "name"));
    let mut prompts: Vec<PromptSpec> =
        prompt_entries.into_iter().filter_map(|e| check_prompt(&mut ledger, e)).collect();
    prompts.sort_by(|a, b| a.name.cmp(&b.name));

    let resource_entries =
        dedupe(&mut ledger, "resources", &offering.resources.entries, |v| str_field(v, "uri"));
    let mut resources: Vec<ResourceSpec> =
        resource_entries.into_iter().filter_map(|e| check_resource(&mut ledger, e)).collect();
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));

    let template_entries = dedupe(&mut ledger, "resourceTemplates", &offering.templates.entries, |v| {
        str_field(v, "uriTemplate")
    });
    let mut resource_templates: Vec<ResourceTemplateSpec> =
        template_entries.into_iter().filter_map(|e| check_template(&mut ledger, e)).collect();
    resource_templates.sort_by(|a, b| a.uri_template.cmp(&b.uri_template));

    let s = &ctx.session;
    Catalog {
        binding: ctx.binding.clone(),
        generation,
        digest: offering.digest(),
        protocol_version: s.protocol_version.clone(),
        server: s.server.clone(),
        capabilities: s.capabilities.clone(),
        instructions: s.instructions.clone(),
        tools,
        prompts,
        resources,
        resource_templates,
        warnings: ledger.warnings,
        applied_tolerances: ledger.applied.into_iter().collect(),
    }
}
