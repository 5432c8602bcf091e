//! Output budgets: a tool result over the host's budget reaches the model
//! as a faithful preview and a handle; the whole result stays with the
//! host, and a `read_result` meta-tool pages through it.
//!
//! One large result fills a model's context. With an [`OutputBudget`] set
//! on a [`ToolSession`](super::exposure::ToolSession), a result whose
//! estimated tokens exceed it is kept in the session's [`ResultStore`]
//! (in memory, bounded: the oldest kept result is dropped first; or in
//! files in a folder the host names, [`ResultStore::spilling_to`]) and the
//! model gets, instead, a preview that says what it is and what was left
//! out: the start and the end of its text, the shape of its structured
//! content (keys and types, not values), how many images, audio clips and
//! resource links it has, the handle, and how to read the rest
//! (`read_result` with the handle, an offset and a length, in characters
//! of the result's text). Nothing is cut silently.
//!
//! Tokens are estimated from bytes ([`exposure::BYTES_PER_TOKEN`](super::exposure::BYTES_PER_TOKEN)
//! bytes a token); an image or audio clip counts by its size as the
//! base64 a provider is sent.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::exposure::BYTES_PER_TOKEN;
use crate::content::{Content, ToolResult};

/// The meta-tool's name.
pub const READ_RESULT_TOOL_NAME: &str = "read_result";
/// The most results a store keeps.
pub const MAX_KEPT_RESULTS: usize = 64;
/// The most bytes of text a store keeps, over all its results.
pub const MAX_KEPT_BYTES: usize = 64 << 20;
/// The most bytes a spilling store keeps in its files, over all its
/// results.
pub const MAX_SPILLED_BYTES: usize = 1 << 30;
/// The longest page `read_result` returns, in characters.
pub const MAX_PAGE_CHARS: usize = 64 * 1024;

/// How many tokens one result may take before it is previewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputBudget {
    tokens: usize,
}

impl OutputBudget {
    /// A budget of `tokens` (at least 256: a preview needs room).
    pub fn tokens(tokens: usize) -> Self {
        OutputBudget { tokens: tokens.max(256) }
    }

    /// The budget, in tokens.
    pub fn get(&self) -> usize {
        self.tokens
    }
}

/// The results kept for `read_result`, by handle. Bounded in count and in
/// bytes: the oldest is dropped first.
///
/// By default they are kept in memory (at most [`MAX_KEPT_RESULTS`]
/// results and [`MAX_KEPT_BYTES`] bytes). A store made with
/// [`spilling_to`](Self::spilling_to) writes each one to a file of its own
/// in a folder the host names instead (at most [`MAX_SPILLED_BYTES`] in
/// all), and keeps only its length in memory: for hosts whose results are
/// large or whose conversations are many. A file is private to the
/// process's user (created new, mode 0600 on Unix, never over an existing
/// file) and is removed when its result is dropped from the store or the
/// last clone of the store is dropped. A result that cannot be written is
/// kept in memory, with a `tracing` warning: never lost.
#[derive(Debug, Default, Clone)]
pub struct ResultStore {
    kept: VecDeque<(String, Kept)>,
    /// Bytes held in memory.
    bytes: usize,
    /// Bytes held in files.
    spilled: usize,
    next: u64,
    spill_dir: Option<PathBuf>,
}

/// Where one kept result's text is.
#[derive(Debug, Clone)]
enum Kept {
    Memory(String),
    File(Arc<SpillFile>),
}

/// A result's file; removed when the last holder lets it go.
#[derive(Debug)]
struct SpillFile {
    path: PathBuf,
    bytes: usize,
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Tells the files of every store of the process apart.
static SPILL_SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Writes `text` to a new file in `dir`, never over an existing one.
fn spill(dir: &Path, text: &str) -> std::io::Result<SpillFile> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    // A name taken by another process (or anything else) is skipped.
    for _ in 0..16 {
        let n = SPILL_SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("mcp-result-{}-{n}.txt", std::process::id()));
        match options.open(&path) {
            Ok(mut file) => {
                let spilled = SpillFile { path, bytes: text.len() };
                file.write_all(text.as_bytes())?;
                return Ok(spilled);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free file name"))
}

impl ResultStore {
    /// An empty store, in memory.
    pub fn new() -> Self {
        ResultStore::default()
    }

    /// An empty store that keeps each result in a file in `dir` (created
    /// if missing). See [`ResultStore`] for the files' life.
    pub fn spilling_to(dir: impl Into<PathBuf>) -> Self {
        ResultStore { spill_dir: Some(dir.into()), ..ResultStore::default() }
    }

    fn keep(&mut self, text: String) -> String {
        self.next += 1;
        let handle = format!("result-{}", self.next);
        let kept = match self.spill_dir.as_deref().map(|dir| spill(dir, &text)) {
            Some(Ok(file)) => {
                self.spilled += file.bytes;
                Kept::File(Arc::new(file))
            }
            other => {
                if let Some(Err(e)) = other {
                    tracing::warn!(target: "mcp_stack::providers", "a result kept in memory: its file could not be written: {e}");
                }
                self.bytes += text.len();
                Kept::Memory(text)
            }
        };
        self.kept.push_back((handle.clone(), kept));
        while self.kept.len() > MAX_KEPT_RESULTS
            || ((self.bytes > MAX_KEPT_BYTES || self.spilled > MAX_SPILLED_BYTES) && self.kept.len() > 1)
        {
            match self.kept.pop_front() {
                Some((_, Kept::Memory(dropped))) => self.bytes -= dropped.len(),
                Some((_, Kept::File(file))) => self.spilled -= file.bytes,
                None => break,
            }
        }
        handle
    }

    /// How many results are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// `length` characters of the result `handle`'s text from `offset`
    /// (at most [`MAX_PAGE_CHARS`]), or why not. A spilled result is read
    /// back from its file (blocking file I/O).
    pub fn read(&self, handle: &str, offset: usize, length: usize) -> Result<Page, String> {
        let Some((_, kept)) = self.kept.iter().find(|(h, _)| h == handle) else {
            return Err(format!(
                "no result is kept under {:?} (kept: the last {MAX_KEPT_RESULTS})",
                clean(handle)
            ));
        };
        let read;
        let text = match kept {
            Kept::Memory(text) => text,
            Kept::File(file) => {
                // The host's file, so its name may be said; the error's
                // text is the OS's, which quotes nothing of the result.
                read = std::fs::read_to_string(&file.path)
                    .map_err(|e| format!("the result {:?} could not be read back: {e}", clean(handle)))?;
                &read
            }
        };
        let total = text.chars().count();
        let length = length.clamp(1, MAX_PAGE_CHARS);
        let page: String = text.chars().skip(offset).take(length).collect();
        let end = (offset + page.chars().count()).min(total);
        Ok(Page { text: page, offset: offset.min(total), end, total })
    }
}

/// One page of a kept result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The characters read.
    pub text: String,
    /// Where they start.
    pub offset: usize,
    /// Where they end (exclusive).
    pub end: usize,
    /// The result's length, in characters.
    pub total: usize,
}

/// The estimated tokens of a result as a provider is sent it.
pub fn estimated_tokens(result: &ToolResult) -> usize {
    let mut bytes = 0usize;
    for content in &result.content {
        bytes += match content {
            Content::Text { text, .. } => text.len(),
            Content::Image { data, .. } | Content::Audio { data, .. } => data.len().div_ceil(3) * 4,
            Content::Resource { resource, .. } => {
                resource.text.as_ref().map_or(0, String::len)
                    + resource.data.as_ref().map_or(0, |d| d.len().div_ceil(3) * 4)
            }
            Content::ResourceLink { uri, name, .. } => uri.len() + name.len(),
            Content::Unsupported { .. } => 0,
        };
    }
    bytes += result.structured.as_ref().map_or(0, |s| s.to_string().len());
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// `result` as the model gets it under `budget`: itself when it fits, else
/// a preview whose full text is kept in `store`.
pub fn within(result: ToolResult, budget: OutputBudget, store: &mut ResultStore) -> ToolResult {
    let tokens = estimated_tokens(&result);
    if tokens <= budget.get() {
        return result;
    }
    let full = full_text(&result);
    let total = full.chars().count();
    let handle = store.keep(full.clone());
    // The preview's text takes about half the budget: a head and a tail.
    let room = budget.get() * BYTES_PER_TOKEN / 2;
    let head: String = full.chars().take(room * 4 / 5).collect();
    let tail_len = (room / 5).min(total.saturating_sub(head.chars().count()));
    let tail: String = full.chars().skip(total - tail_len).collect();
    let (images, audio, links) = counts(&result);
    let mut preview = format!(
        "[This result is over the output budget ({tokens} estimated tokens, budget {}): a preview follows. \
         The whole result is kept as {handle:?} ({total} characters of text); read any part of it with \
         {READ_RESULT_TOOL_NAME} {{\"handle\": {handle:?}, \"offset\": N, \"length\": N}}.]\n",
        budget.get()
    );
    if images + audio + links > 0 {
        preview.push_str(&format!(
            "[It has {images} image(s), {audio} audio clip(s) and {links} resource link(s), not shown here.]\n"
        ));
    }
    if let Some(structured) = &result.structured {
        preview.push_str(&format!("[Its structured content has this shape: {}]\n", shape(structured, 0)));
    }
    preview.push_str(&format!("--- the first {} characters ---\n{head}\n", head.chars().count()));
    if tail_len > 0 {
        let left_out = total - head.chars().count() - tail_len;
        preview.push_str(&format!(
            "--- {left_out} characters left out (offset {} to {}) ---\n--- the last {tail_len} characters ---\n{tail}",
            head.chars().count(),
            total - tail_len
        ));
    }
    ToolResult { warnings: result.warnings, ..super::exposure::text_result(preview, result.is_error) }
}

/// Answers `read_result {handle, offset, length}` from `store`.
pub fn read_result(store: &ResultStore, arguments: &Value) -> ToolResult {
    let handle = arguments.get("handle").and_then(Value::as_str).unwrap_or_default();
    let offset = arguments.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let length = arguments.get("length").and_then(Value::as_u64).unwrap_or(MAX_PAGE_CHARS as u64) as usize;
    let (text, is_error) = match store.read(handle, offset, length) {
        Ok(page) => {
            let more = if page.end < page.total {
                format!(" (more from offset {})", page.end)
            } else {
                " (the end)".to_string()
            };
            (
                format!(
                    "[{handle}: characters {} to {} of {}{more}]\n{}",
                    page.offset, page.end, page.total, page.text
                ),
                false,
            )
        }
        Err(why) => (why, true),
    };
    super::exposure::text_result(text, is_error)
}

/// The result's text as the model would read it: texts, text resources,
/// placeholders for the rest, then the structured content as JSON.
fn full_text(result: &ToolResult) -> String {
    let mut parts = Vec::new();
    for content in &result.content {
        parts.push(match content {
            Content::Text { text, .. } => text.clone(),
            Content::Image { data, mime_type, .. } => format!("[image {mime_type}, {} bytes]", data.len()),
            Content::Audio { data, mime_type, .. } => format!("[audio {mime_type}, {} bytes]", data.len()),
            Content::Resource { resource, .. } => match &resource.text {
                Some(text) => format!("[resource {}]\n{text}", resource.uri),
                None => format!(
                    "[resource {}, {} bytes]",
                    resource.uri,
                    resource.data.as_ref().map_or(0, Vec::len)
                ),
            },
            Content::ResourceLink { uri, name, .. } => format!("[resource link: {name} <{uri}>]"),
            Content::Unsupported { kind, bytes } => format!("[{kind}, {bytes} bytes, not kept]"),
        });
    }
    if let Some(structured) = &result.structured {
        parts.push(structured.to_string());
    }
    parts.join("\n")
}

fn counts(result: &ToolResult) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for content in &result.content {
        match content {
            Content::Image { .. } => counts.0 += 1,
            Content::Audio { .. } => counts.1 += 1,
            Content::ResourceLink { .. } => counts.2 += 1,
            _ => {}
        }
    }
    counts
}

/// A JSON value's shape: object keys with their shapes, an array's length
/// and first element's shape, a scalar's type; bounded in depth and keys.
fn shape(value: &Value, depth: usize) -> String {
    if depth >= 4 {
        return "…".into();
    }
    match value {
        Value::Object(map) => {
            let mut keys: Vec<String> =
                map.iter().take(16).map(|(k, v)| format!("{}: {}", clean(k), shape(v, depth + 1))).collect();
            if map.len() > 16 {
                keys.push(format!("… {} more keys", map.len() - 16));
            }
            format!("{{{}}}", keys.join(", "))
        }
        Value::Array(items) => match items.first() {
            Some(first) => format!("[{} × {}]", items.len(), shape(first, depth + 1)),
            None => "[]".into(),
        },
        Value::String(_) => "string".into(),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "boolean".into(),
        Value::Null => "null".into(),
    }
}

fn clean(text: &str) -> String {
    crate::error::normalize_message(text, 128)
}

/// The meta-tool's description and input schema, as JSON Schema.
pub(crate) fn read_result_parts() -> (&'static str, Value) {
    (
        "Reads part of a tool result that was over the output budget (its preview named a handle).",
        json!({
            "type": "object",
            "properties": {
                "handle": { "type": "string", "description": "The handle the preview named." },
                "offset": { "type": "integer", "description": "The first character to read (0 is the start)." },
                "length": { "type": "integer", "description": "How many characters to read (at most 65536)." },
            },
            "required": ["handle"],
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> ToolResult {
        ToolResult {
            is_error: false,
            content: vec![Content::Text { text: t.into(), truncated: false, annotations: None, meta: None }],
            structured: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_store_keeps_a_bounded_number_of_results_oldest_dropped_first() {
        let mut store = ResultStore::new();
        let first = store.keep("first".into());
        for i in 0..MAX_KEPT_RESULTS {
            store.keep(format!("r{i}"));
        }
        assert_eq!(store.len(), MAX_KEPT_RESULTS);
        assert!(store.read(&first, 0, 10).is_err(), "the oldest is gone");
        let page = store.read(&format!("result-{}", MAX_KEPT_RESULTS + 1), 1, 100).unwrap();
        assert_eq!((page.text.as_str(), page.offset, page.end, page.total), ("63", 1, 3, 3));
    }

    #[test]
    fn a_spilling_store_keeps_results_in_private_files_it_removes() {
        let dir = std::env::temp_dir().join(format!("mcp-stack-spill-test-{}", std::process::id()));
        let mut store = ResultStore::spilling_to(&dir);
        let big = "é".repeat(10_000);
        let handle = store.keep(big.clone());
        let files = || std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert_eq!(files(), 1);
        assert_eq!(store.bytes, 0, "nothing of it held in memory");
        let page = store.read(&handle, 9_990, 100).unwrap();
        assert_eq!((page.text.chars().count(), page.end, page.total), (10, 10_000, 10_000));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let entry = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
            assert_eq!(entry.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        }
        // A clone shares the files; they go with the last holder.
        let clone = store.clone();
        drop(store);
        assert_eq!(clone.read(&handle, 0, 1).unwrap().text, "é");
        drop(clone);
        assert_eq!(files(), 0, "removed with the store");
        // Dropped from the store: removed at once.
        let mut store = ResultStore::spilling_to(&dir);
        for i in 0..=MAX_KEPT_RESULTS {
            store.keep(format!("r{i}"));
        }
        assert_eq!(files(), MAX_KEPT_RESULTS);
        drop(store);
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn a_result_whose_file_cannot_be_written_is_kept_in_memory() {
        // A folder that cannot be made: a path under a regular file.
        let file = std::env::temp_dir().join(format!("mcp-stack-spill-file-{}", std::process::id()));
        std::fs::write(&file, "x").unwrap();
        let mut store = ResultStore::spilling_to(file.join("sub"));
        let handle = store.keep("kept anyway".into());
        assert_eq!(store.read(&handle, 0, 100).unwrap().text, "kept anyway");
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_preview_shows_the_shape_and_counts_of_what_it_leaves_out() {
        let mut result = text(&"x".repeat(50_000));
        result.structured = Some(serde_json::json!({ "rows": [{ "id": 1, "name": "a" }], "total": 9 }));
        result.content.push(Content::ResourceLink {
            uri: "file:///a".into(),
            name: "a".into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            meta: None,
        });
        let mut store = ResultStore::new();
        let out = within(result, OutputBudget::tokens(300), &mut store);
        let preview = out.content[0].as_text().unwrap();
        assert!(preview.contains("{rows: [1 × {id: number, name: string}], total: number}"), "{preview}");
        assert!(preview.contains("1 resource link(s)"), "{preview}");
        assert!(out.structured.is_none());
        assert_eq!(store.len(), 1);
        // A result within the budget passes untouched.
        let small = text("short");
        assert_eq!(within(small.clone(), OutputBudget::tokens(300), &mut store), small);
    }
}
