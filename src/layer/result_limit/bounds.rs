//! The bounds themselves, applied to a JSON result in place.

use serde_json::{Map, Value};

use super::ResultBounds;
use crate::binding::push_warning;
use crate::content::{
    KIND_AUDIO, KIND_IMAGE, KIND_RESOURCE, STRUCTURED_DROPPED_MARKER, TRUNCATED_MARKER, UNSUPPORTED_MARKER,
};
use crate::error::truncate_utf8;
use crate::protocol::methods;

/// The results this layer covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// `tools/call`: `content` blocks and `structuredContent`.
    Tool,
    /// `prompts/get`: the content of each of `messages`.
    Prompt,
    /// `resources/read`: the items of `contents`.
    Resource,
}

impl Family {
    pub(crate) fn of(method: &str) -> Option<Family> {
        match method {
            methods::TOOLS_CALL => Some(Family::Tool),
            methods::PROMPTS_GET => Some(Family::Prompt),
            methods::RESOURCES_READ => Some(Family::Resource),
            _ => None,
        }
    }
}

/// Bounds `result` in place, adding warnings for what was cut, dropped or
/// replaced. A result that is not shaped as expected is left alone: the
/// conversion above reports it.
pub(crate) fn apply(family: Family, result: &mut Value, bounds: &ResultBounds, warnings: &mut Vec<String>) {
    let Some(result) = result.as_object_mut() else { return };
    let mut walk = Walk::new(bounds);
    match family {
        Family::Tool => {
            // One pass over the result's members, which are few; what must
            // change after it (dropping structured content) is noted.
            let mut forged = false;
            let mut structured_over = None;
            for (key, value) in result.iter_mut() {
                match key.as_str() {
                    // Only this layer says structured content was withheld.
                    "_meta" => {
                        let meta = value.as_object_mut();
                        forged = meta.and_then(|meta| meta.remove(STRUCTURED_DROPPED_MARKER)).is_some();
                    }
                    "content" => {
                        if let Value::Array(items) = value {
                            items.iter_mut().for_each(|item| walk.block(item));
                        }
                    }
                    "structuredContent" if !value.is_null() => {
                        let size = serialized_len(value);
                        structured_over = (size > bounds.max_structured_bytes).then_some(size);
                    }
                    _ => {}
                }
            }
            if forged {
                walk.forged_structured_marker();
            }
            if let Some(size) = structured_over {
                walk.drop_structured(result, size);
            }
        }
        Family::Prompt => {
            if let Some(Value::Array(messages)) = result.get_mut("messages") {
                for message in messages {
                    match message.get_mut("content") {
                        Some(Value::Array(items)) => items.iter_mut().for_each(|item| walk.block(item)),
                        Some(item) => walk.block(item),
                        None => {}
                    }
                }
            }
        }
        Family::Resource => {
            if let Some(Value::Array(items)) = result.get_mut("contents") {
                for item in items {
                    if let Some(item) = item.as_object_mut() {
                        walk.resource_item(item);
                    }
                }
            }
        }
    }
    walk.finish(warnings);
}

/// One result's budgets, spent in document order.
struct Walk<'a> {
    bounds: &'a ResultBounds,
    text_left: usize,
    text_seen: usize,
    text_cut: bool,
    binary_kept: usize,
    binary_over_count: usize,
    warnings: Vec<String>,
}

/// What to do with one binary payload.
enum Binary {
    Keep,
    Refuse,
}

impl<'a> Walk<'a> {
    fn new(bounds: &'a ResultBounds) -> Self {
        Walk {
            bounds,
            text_left: bounds.max_text_result_bytes,
            text_seen: 0,
            text_cut: false,
            binary_kept: 0,
            binary_over_count: 0,
            warnings: Vec::new(),
        }
    }

    fn warn(&mut self, text: String) {
        push_warning(&mut self.warnings, text);
    }

    #[cold]
    fn forged_structured_marker(&mut self) {
        // First among the warnings, as it was the first thing seen.
        let text = format!("ignored the server's own {STRUCTURED_DROPPED_MARKER:?} marker");
        self.warnings.insert(0, text);
        self.warnings.truncate(crate::binding::MAX_WARNINGS);
    }

    /// Drops a tool result's structured content of `size` bytes, over its
    /// bound, and says so in its `_meta`.
    #[cold]
    fn drop_structured(&mut self, result: &mut Map<String, Value>, size: usize) {
        result.remove("structuredContent");
        let meta = result.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(STRUCTURED_DROPPED_MARKER.into(), Value::from(size));
        }
        let bound = self.bounds.max_structured_bytes;
        self.warn(format!("dropped structured content of {size} bytes: over the bound of {bound} bytes"));
    }

    /// One content block (a tool result's item, a prompt message's content).
    fn block(&mut self, item: &mut Value) {
        let Some(obj) = item.as_object_mut() else { return };
        // The common block, text, is bounded in one pass over its members.
        let (mut kind, mut text, mut meta) = (None, None, None);
        for (key, value) in obj.iter_mut() {
            match key.as_str() {
                "type" => kind = Some(value),
                "text" => text = Some(value),
                "_meta" => meta = Some(value),
                _ => {}
            }
        }
        if kind.and_then(|kind| kind.as_str()) == Some("text") {
            self.unmark(meta);
            if self.spend_text(text) {
                mark_truncated(obj);
            }
        } else {
            self.other_block(item);
        }
    }

    /// A content block other than text: out of line, to keep the common
    /// path short.
    #[inline(never)]
    fn other_block(&mut self, item: &mut Value) {
        let Some(obj) = item.as_object_mut() else { return };
        match obj.get("type").and_then(Value::as_str) {
            Some(kind @ ("image" | "audio")) => {
                let kind = if kind == "image" { KIND_IMAGE } else { KIND_AUDIO };
                if let Some(size) = obj.get("data").and_then(Value::as_str).map(decoded_len) {
                    if let Binary::Refuse = self.binary(kind, size) {
                        *item = unsupported(kind, size);
                    }
                }
            }
            Some("resource") => {
                let Some(resource) = obj.get_mut("resource").and_then(Value::as_object_mut) else { return };
                if let Some(size) = resource.get("blob").and_then(Value::as_str).map(decoded_len) {
                    if let Binary::Refuse = self.binary(KIND_RESOURCE, size) {
                        *item = unsupported(KIND_RESOURCE, size);
                    }
                } else {
                    self.text_in(resource, "text");
                }
            }
            Some(UNSUPPORTED_MARKER) => {
                // Only this layer may say that something was refused.
                let size = serialized_len(item);
                self.warn(format!(
                    "replaced a server item claiming the crate-internal type {UNSUPPORTED_MARKER}"
                ));
                *item = unsupported(UNSUPPORTED_MARKER, size);
            }
            _ => {}
        }
    }

    /// One item of `resources/read`. A refused blob is emptied and marked:
    /// there is no slot for a marker item in a resource's contents.
    fn resource_item(&mut self, item: &mut Map<String, Value>) {
        if let Some(size) = item.get("blob").and_then(Value::as_str).map(decoded_len) {
            self.unmark(item.get_mut("_meta"));
            if let Binary::Refuse = self.binary("blob", size) {
                item.insert("blob".into(), Value::String(String::new()));
                mark_truncated(item);
            }
        } else {
            self.text_in(item, "text");
        }
    }

    /// Spends the text budget on `obj[field]`, cutting and marking it when
    /// the budget runs out.
    fn text_in(&mut self, obj: &mut Map<String, Value>, field: &str) {
        self.unmark(obj.get_mut("_meta"));
        if self.spend_text(obj.get_mut(field)) {
            mark_truncated(obj);
        }
    }

    /// Spends the text budget on `text`, if it is a string; whether it was
    /// cut (the caller marks it).
    fn spend_text(&mut self, text: Option<&mut Value>) -> bool {
        let Some(Value::String(text)) = text else { return false };
        self.text_seen = self.text_seen.saturating_add(text.len());
        if text.len() <= self.text_left {
            self.text_left -= text.len();
            return false;
        }
        truncate_utf8(text, self.text_left);
        // Once one item is cut, every later one is emptied: the text a host
        // keeps is a prefix of what the server sent, never a patchwork.
        self.text_left = 0;
        self.text_cut = true;
        true
    }

    /// Removes a truncation flag the server set itself in `meta` (an
    /// item's `_meta`).
    fn unmark(&mut self, meta: Option<&mut Value>) {
        if let Some(Value::Object(meta)) = meta {
            if meta.remove(TRUNCATED_MARKER).is_some() {
                self.warn(format!("removed the crate-internal flag {TRUNCATED_MARKER} a server set"));
            }
        }
    }

    fn binary(&mut self, kind: &str, size: usize) -> Binary {
        if size > self.bounds.max_binary_item_bytes {
            self.warn(format!(
                "replaced a {kind} item of {size} bytes: over the bound of {} bytes",
                self.bounds.max_binary_item_bytes
            ));
            Binary::Refuse
        } else if self.binary_kept >= self.bounds.max_binary_items {
            self.binary_over_count += 1;
            Binary::Refuse
        } else {
            self.binary_kept += 1;
            Binary::Keep
        }
    }

    fn finish(mut self, warnings: &mut Vec<String>) {
        if self.text_cut {
            let (max, seen) = (self.bounds.max_text_result_bytes, self.text_seen);
            self.warn(format!("cut the text to {max} bytes of the {seen} received"));
        }
        if self.binary_over_count > 0 {
            let (n, max) = (self.binary_over_count, self.bounds.max_binary_items);
            self.warn(format!("replaced {n} binary items beyond the first {max}"));
        }
        for w in self.warnings {
            push_warning(warnings, w);
        }
    }
}

/// The crate's stand-in for a refused item.
#[cold]
fn unsupported(kind: &str, bytes: usize) -> Value {
    serde_json::json!({ "type": UNSUPPORTED_MARKER, "kind": kind, "bytes": bytes })
}

#[cold]
fn mark_truncated(obj: &mut Map<String, Value>) {
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(TRUNCATED_MARKER.into(), Value::Bool(true));
    }
}

/// The decoded size of base64 `data`, from its length alone: three bytes per
/// four characters, less the padding. Exact for well-formed base64 (the
/// conversion decodes it later, and refuses what is not).
pub(crate) fn decoded_len(data: &str) -> usize {
    let data = data.trim();
    let unpadded = data.trim_end_matches('=').len();
    unpadded / 4 * 3 + (unpadded % 4 * 3) / 4
}

/// The size of `value` serialized as compact JSON, without building the text.
pub(crate) fn serialized_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("a JSON value serializes");
    count.0
}
