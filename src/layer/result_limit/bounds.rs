//! The bounds themselves, applied to a JSON result in place.

use serde_json::{Map, Value};

use super::ResultBounds;
use crate::content::{Mark, ResultMarks, KIND_AUDIO, KIND_IMAGE, KIND_RESOURCE};
use crate::error::truncate_utf8;
use crate::protocol::methods;
use crate::request::push_warning;

/// The results this layer covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// `tools/call`: `content` blocks and `structuredContent`.
    Tool,
    /// `prompts/get`: the content of each of `messages`.
    Prompt,
    /// `resources/read`: the items of `contents`.
    Resource,
    /// A 2026-07-28 task's `tasks/get`: the tool result it carries inline
    /// (`result`) once the task completed.
    TaskOutcome,
}

impl Family {
    pub(crate) fn of(method: &str) -> Option<Family> {
        match method {
            // A 2025-11-25 task's result is its tool call's.
            methods::TOOLS_CALL | methods::TASKS_RESULT => Some(Family::Tool),
            methods::TASKS_GET => Some(Family::TaskOutcome),
            methods::PROMPTS_GET => Some(Family::Prompt),
            methods::RESOURCES_READ => Some(Family::Resource),
            _ => None,
        }
    }
}

/// Bounds `result` in place, adding warnings for what was cut, dropped or
/// refused, and returns the marks that say which items. A result that is
/// not shaped as expected is left alone: the conversion above reports it.
pub(crate) fn apply(
    family: Family,
    result: &mut Value,
    bounds: &ResultBounds,
    warnings: &mut Vec<String>,
) -> ResultMarks {
    if family == Family::TaskOutcome {
        return match result.get_mut("result") {
            Some(outcome) if outcome.is_object() => apply(Family::Tool, outcome, bounds, warnings),
            _ => ResultMarks::default(),
        };
    }
    let mut walk = Walk::new(bounds);
    let Some(result) = result.as_object_mut() else { return walk.marks };
    match family {
        Family::Tool => {
            // One pass over the result's members, which are few; what must
            // change after it (dropping structured content) is noted.
            let mut structured_over = None;
            for (key, value) in result.iter_mut() {
                match key.as_str() {
                    "content" => {
                        if let Value::Array(items) = value {
                            walk.tool_content(items);
                        }
                    }
                    "structuredContent" if !value.is_null() => {
                        let size = serialized_len(value);
                        structured_over = (size > bounds.max_structured_bytes).then_some(size);
                    }
                    _ => {}
                }
            }
            if let Some(size) = structured_over {
                walk.drop_structured(result, size);
            }
        }
        Family::Prompt => {
            if let Some(Value::Array(messages)) = result.get_mut("messages") {
                walk.drop_past_count(messages);
                for (i, message) in messages.iter_mut().enumerate() {
                    walk.at = i;
                    match message.get_mut("content") {
                        // Not the specification's shape; bounded all the same.
                        Some(Value::Array(items)) => items.iter_mut().for_each(|item| {
                            walk.block(item, false);
                        }),
                        Some(item) => {
                            walk.block(item, false);
                        }
                        None => {}
                    }
                }
            }
        }
        // Bounded as its inline tool result, above.
        Family::TaskOutcome => {}
        Family::Resource => {
            if let Some(Value::Array(items)) = result.get_mut("contents") {
                walk.drop_past_count(items);
                for (i, item) in items.iter_mut().enumerate() {
                    walk.at = i;
                    if let Some(item) = item.as_object_mut() {
                        walk.resource_item(item);
                    }
                }
            }
        }
    }
    walk.finish(warnings)
}

/// One result's budgets, spent in document order.
struct Walk<'a> {
    bounds: &'a ResultBounds,
    text_left: usize,
    text_seen: usize,
    text_cut: bool,
    binary_kept: usize,
    binary_over_count: usize,
    /// Items removed past `max_content_items`, and binary items removed
    /// past `max_binary_items` (tool results only).
    dropped_past_items: usize,
    dropped_binary: usize,
    warnings: Vec<String>,
    /// The index of the item being walked, in the result's list.
    at: usize,
    marks: ResultMarks,
}

/// What to do with one binary payload.
enum Binary {
    Keep,
    /// Over its size: emptied in place.
    Refuse,
    /// Past the count of binary items.
    PastCount,
}

/// What to do with one content block once walked.
enum Block {
    Keep,
    /// A binary item past the count, in a tool result: removed.
    Remove(usize),
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
            dropped_past_items: 0,
            dropped_binary: 0,
            warnings: Vec::new(),
            at: 0,
            marks: ResultMarks::default(),
        }
    }

    fn warn(&mut self, text: String) {
        push_warning(&mut self.warnings, text);
    }

    /// A tool result's content blocks: walked in order; binary items past
    /// the count and every item past `max_content_items` are removed, and
    /// the marks use the indices of what is kept.
    fn tool_content(&mut self, items: &mut Vec<Value>) {
        let max = self.bounds.max_content_items;
        // In place: a result within its bounds (nearly all) is not copied.
        let mut kept = 0;
        items.retain_mut(|item| {
            if kept >= max {
                self.dropped_past_items += 1;
                self.add_dropped_bytes(item_size(item));
                return false;
            }
            self.at = kept;
            match self.block(item, true) {
                Block::Keep => {
                    kept += 1;
                    true
                }
                Block::Remove(bytes) => {
                    self.dropped_binary += 1;
                    self.add_dropped_bytes(bytes);
                    false
                }
            }
        });
    }

    /// Removes the items of a prompt's messages or a resource's contents
    /// past `max_content_items`.
    fn drop_past_count(&mut self, items: &mut Vec<Value>) {
        let max = self.bounds.max_content_items;
        if items.len() <= max {
            return;
        }
        for item in items.drain(max..) {
            self.dropped_past_items += 1;
            self.marks.dropped.bytes = self.marks.dropped.bytes.saturating_add(item_size(&item));
        }
    }

    fn add_dropped_bytes(&mut self, bytes: usize) {
        self.marks.dropped.bytes = self.marks.dropped.bytes.saturating_add(bytes);
    }

    /// Drops a tool result's structured content of `size` bytes, over its
    /// bound, and marks it dropped.
    #[cold]
    fn drop_structured(&mut self, result: &mut Map<String, Value>, size: usize) {
        result.remove("structuredContent");
        self.marks.structured_dropped = Some(size);
        let bound = self.bounds.max_structured_bytes;
        self.warn(format!("dropped structured content of {size} bytes: over the bound of {bound} bytes"));
    }

    /// One content block (a tool result's item, a prompt message's
    /// content). With `remove_past_count`, a binary item past the count is
    /// to be removed; without, it is refused in place.
    fn block(&mut self, item: &mut Value, remove_past_count: bool) -> Block {
        let Some(obj) = item.as_object_mut() else { return Block::Keep };
        // The common block, text, is bounded in one pass over its members.
        let (mut kind, mut text) = (None, None);
        for (key, value) in obj.iter_mut() {
            match key.as_str() {
                "type" => kind = Some(value),
                "text" => text = Some(value),
                _ => {}
            }
        }
        if kind.and_then(|kind| kind.as_str()) == Some("text") {
            if self.spend_text(text) {
                self.mark(Mark::Truncated);
            }
            Block::Keep
        } else {
            self.other_block(item, remove_past_count)
        }
    }

    /// A content block other than text: out of line, to keep the common
    /// path short.
    #[inline(never)]
    fn other_block(&mut self, item: &mut Value, remove_past_count: bool) -> Block {
        let Some(obj) = item.as_object_mut() else { return Block::Keep };
        let (kind, holder, field) = match obj.get("type").and_then(Value::as_str) {
            Some(kind @ ("image" | "audio")) => {
                (if kind == "image" { KIND_IMAGE } else { KIND_AUDIO }, obj, "data")
            }
            Some("resource") => {
                let Some(resource) = obj.get_mut("resource").and_then(Value::as_object_mut) else {
                    return Block::Keep;
                };
                if !resource.get("blob").is_some_and(Value::is_string) {
                    self.text_in(resource, "text");
                    return Block::Keep;
                }
                (KIND_RESOURCE, resource, "blob")
            }
            _ => return Block::Keep,
        };
        let Some(size) = holder.get(field).and_then(Value::as_str).map(decoded_len) else {
            return Block::Keep;
        };
        match self.binary(kind, size) {
            Binary::Keep => return Block::Keep,
            Binary::PastCount if remove_past_count => return Block::Remove(size),
            Binary::PastCount => self.binary_over_count += 1,
            Binary::Refuse => {}
        }
        holder.insert(field.into(), Value::String(String::new()));
        self.mark(Mark::Refused { kind, bytes: size });
        Block::Keep
    }

    /// One item of `resources/read`. A refused blob is emptied and marked
    /// truncated: a resource's item has no stand-in.
    fn resource_item(&mut self, item: &mut Map<String, Value>) {
        if let Some(size) = item.get("blob").and_then(Value::as_str).map(decoded_len) {
            let verdict = self.binary("blob", size);
            if let Binary::PastCount = verdict {
                self.binary_over_count += 1;
            }
            if let Binary::Refuse | Binary::PastCount = verdict {
                item.insert("blob".into(), Value::String(String::new()));
                self.mark(Mark::Truncated);
            }
        } else {
            self.text_in(item, "text");
        }
    }

    /// Spends the text budget on `obj[field]`, cutting and marking it when
    /// the budget runs out.
    fn text_in(&mut self, obj: &mut Map<String, Value>, field: &str) {
        if self.spend_text(obj.get_mut(field)) {
            self.mark(Mark::Truncated);
        }
    }

    /// Marks the item being walked; a refusal outranks a cut.
    fn mark(&mut self, mark: Mark) {
        let at = self.at;
        match self.marks.items.get(&at) {
            Some(Mark::Refused { .. }) => {}
            _ => {
                self.marks.items.insert(at, mark);
            }
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

    fn binary(&mut self, kind: &str, size: usize) -> Binary {
        if size > self.bounds.max_binary_item_bytes {
            self.warn(format!(
                "replaced a {kind} item of {size} bytes: over the bound of {} bytes",
                self.bounds.max_binary_item_bytes
            ));
            Binary::Refuse
        } else if self.binary_kept >= self.bounds.max_binary_items {
            Binary::PastCount
        } else {
            self.binary_kept += 1;
            Binary::Keep
        }
    }

    fn finish(mut self, warnings: &mut Vec<String>) -> ResultMarks {
        if self.text_cut {
            let (max, seen) = (self.bounds.max_text_result_bytes, self.text_seen);
            self.warn(format!("cut the text to {max} bytes of the {seen} received"));
        }
        if self.binary_over_count > 0 {
            let (n, max) = (self.binary_over_count, self.bounds.max_binary_items);
            self.warn(format!("replaced {n} binary items beyond the first {max}"));
        }
        let dropped = self.dropped_past_items + self.dropped_binary;
        if dropped > 0 {
            let (max, bytes) = (self.bounds.max_content_items, self.marks.dropped.bytes);
            let mut why = Vec::new();
            if self.dropped_binary > 0 {
                let max_binary = self.bounds.max_binary_items;
                why.push(format!("{} binary items beyond the first {max_binary}", self.dropped_binary));
            }
            if self.dropped_past_items > 0 {
                why.push(format!("{} items beyond the first {max}", self.dropped_past_items));
            }
            self.warn(format!("dropped {dropped} items of {bytes} bytes: {}", why.join(", ")));
            self.marks.dropped.items = dropped;
        }
        for w in self.warnings {
            push_warning(warnings, w);
        }
        self.marks
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

/// The size of a removed item: its binary payload decoded, else its JSON.
fn item_size(item: &Value) -> usize {
    let binary = item
        .get("data")
        .or_else(|| item.get("blob"))
        .or_else(|| item.get("resource").and_then(|r| r.get("blob")))
        .and_then(Value::as_str);
    match binary {
        Some(data) => decoded_len(data),
        None => serialized_len(item),
    }
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
