//! Paging through one list within its bounds ([`page_through`]), and
//! reading a page, entry by entry when it nests too deep for the
//! connection.
//!
//! Apart from building the catalog because the binding's `list_*` methods
//! page through here too, and what a bad page costs is a rule of its own.

use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use tower::{Service, ServiceExt};

use super::{q, RawList};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::bounded_list::ListBound;
use crate::protocol::jsonrpc::{nests_deeper_than, TooDeep, MAX_MESSAGE_DEPTH};
use crate::request::push_warning;
use crate::request::{McpRequest, McpResponse};

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
        // The entries past what is left of the bound are never built.
        let left = max_items - list.entries.len();
        let bound = ListBound::new(key, left);
        let mut request = McpRequest::with_value(method, params);
        request.extensions.insert(bound.clone());
        let read = match service.clone().oneshot(request).await {
            Ok(rsp) => read_page(rsp.result, key),
            Err(e) if page == 0 && e.class() == FailureClass::NotFound => {
                push_warning(
                    &mut list.warnings,
                    format!("{method}: the server does not serve it ({}); read as empty", e.message()),
                );
                return Ok(list);
            }
            Err(e) => match too_deep(&e) {
                Some(raw) => salvage_page(raw, key, &bound, &mut |i, why| {
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
        // Past the bound: what the reader skipped, and what a page served
        // whole (from a cache) has over it.
        let dropped = bound.dropped() + entries.len().saturating_sub(left);
        list.entries.extend(entries.into_iter().take(left));
        if dropped > 0 {
            push_warning(
                &mut list.warnings,
                format!("{method}: kept the first {max_items} entries, dropped {dropped} more"),
            );
            return Ok(list);
        }
        match next {
            Some(Value::String(next)) if next.len() > MAX_CURSOR_BYTES => {
                push_warning(
                    &mut list.warnings,
                    format!("{method}: the server gave a nextCursor over {MAX_CURSOR_BYTES} bytes; stopped paging"),
                );
                return Ok(list);
            }
            Some(Value::String(_)) if list.entries.len() >= max_items => {
                push_warning(
                    &mut list.warnings,
                    format!("{method}: kept the first {max_items} entries; the pages after were not read"),
                );
                return Ok(list);
            }
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

/// The longest cursor kept from a server (or taken from a caller), in
/// bytes: a cursor is an opaque token, not a payload.
pub(crate) const MAX_CURSOR_BYTES: usize = 4096;

/// Reads one page of `method` at `cursor`: at most `max_items` entries, and
/// the `nextCursor` when it is a string within [`MAX_CURSOR_BYTES`] (one
/// that is not is dropped with a warning, ending the paging). A malformed
/// page is `catalog_invalid`.
pub(crate) async fn one_page<S>(
    service: S,
    method: &str,
    key: &str,
    cursor: Option<&str>,
    max_items: usize,
) -> Result<(RawList, Option<String>), Error>
where
    S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
{
    let params = match cursor {
        Some(c) => json!({ "cursor": c }),
        None => json!({}),
    };
    // The entries past the bound are never built.
    let bound = ListBound::new(key, max_items);
    let mut request = McpRequest::with_value(method, params);
    request.extensions.insert(bound.clone());
    let rsp = service.oneshot(request).await?;
    let mut list = RawList { entries: Vec::new(), warnings: rsp.warnings };
    let (mut entries, next) = read_page(rsp.result, key)
        .map_err(|why| Error::new(FailureClass::CatalogInvalid, format!("{method}: the page {why}")))?;
    if entries.len() > max_items || bound.dropped() > 0 {
        let dropped = bound.dropped() + entries.len().saturating_sub(max_items);
        entries.truncate(max_items);
        push_warning(
            &mut list.warnings,
            format!("{method}: kept the first {max_items} entries of the page, dropped {dropped} more"),
        );
    }
    list.entries = entries;
    let next = match next {
        None | Some(Value::Null) => None,
        Some(Value::String(next)) if next.len() <= MAX_CURSOR_BYTES => Some(next),
        Some(_) => {
            push_warning(
                &mut list.warnings,
                format!(
                    "{method}: dropped a nextCursor that is not a string of at most {MAX_CURSOR_BYTES} bytes"
                ),
            );
            None
        }
    };
    Ok((list, next))
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
fn salvage_page(raw: &str, key: &str, bound: &ListBound, dropped: &mut dyn FnMut(usize, String)) -> PageRead {
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
        Some(Ok(mut entries)) => {
            // Past the bound, entries are counted, never parsed.
            bound.set_dropped(entries.len().saturating_sub(bound.max()));
            entries.truncate(bound.max());
            entries
        }
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
