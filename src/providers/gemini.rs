//! Google's Gemini API: function declarations (`{"name", "description",
//! "parameters"}`), `functionCall` parts back, `functionResponse` parts
//! out. The declarations go in a request as
//! `"tools": [{"functionDeclarations": <ProviderTools::tools>}]`.
//!
//! # The schema subset
//!
//! Gemini takes a tool's parameters as its own `Schema` object, a subset of
//! OpenAPI 3.0 rather than JSON Schema, and refuses a request whose schema
//! steps outside it (gemini-cli #13326 collects the failures MCP servers
//! cause). Each tool's input schema is rewritten into that subset, every
//! rewrite a warning naming the tool:
//!
//! | JSON Schema | Gemini |
//! | --- | --- |
//! | `"type": "string"` (and the others) | `"type": "STRING"` (the `Type` enum's names) |
//! | `"type": ["string", "null"]` | `"type": "STRING", "nullable": true` |
//! | `"type": ["string", "integer"]` | `anyOf` of the two |
//! | `$ref` to `#/$defs/..` or `#/definitions/..` | the definition inlined, at most 8 references deep and 256 KiB in all; a deeper (recursive) one is cut to its description |
//! | `const: "x"` | `enum: ["x"]` |
//! | an `enum` of other than strings | dropped, its values said in the description |
//! | `oneOf` | `anyOf` |
//! | `allOf` of objects | merged into one object |
//! | `anyOf` beside `type` at one level | `anyOf` kept, the rest of that level dropped |
//! | `additionalProperties`, `patternProperties`, `not`, `if`, `$schema`, `exclusiveMinimum`, `multipleOf`, `uniqueItems`, `examples`, … | dropped (the server still validates) |
//! | `format` other than `enum`/`date-time` (strings), `int32`/`int64`, `float`/`double` | dropped |
//! | an object without `properties` (free-form), optional | the parameter left out |
//!
//! A tool that cannot be expressed is left out with a warning, never sent
//! broken: a `$ref` outside the schema (or to nothing), a required
//! free-form object, an input schema that is not an object. A tool whose
//! schema has no parameters is declared without `parameters`.
//!
//! # Calls and results
//!
//! A `functionCall` part is `{"name", "args", "id"?}`; [`tool_calls`]
//! reads them from a `GenerateContentResponse`, a `Content`, a list of
//! parts or one part. A call without an `id` (older models) gets its
//! function's name as its id: Gemini matches a response to its call by
//! name, in order. [`result`] answers with a `functionResponse` part whose
//! `response` is `{"output": TEXT}`, or `{"error": TEXT}` for a tool error,
//! as Google's documentation advises; images and audio are placeholders
//! (as the rest of [`super`] says).

use serde_json::{json, Map, Value};

use super::render::{parts, Part};
use super::{bounded, call_arguments, call_name, description, offered};
use super::{CallError, ProviderTools, Rendered, ToolCall, MAX_CALL_ID_BYTES};
use crate::catalog::ToolSpec;
use crate::content::ToolResult;
use crate::error::Error;
use crate::host::Host;
use crate::request::CallOpts;

/// How many `$ref`s deep a schema is inlined.
const MAX_REF_DEPTH: usize = 8;
/// The most bytes one tool's rewritten schema may take (inlined
/// definitions can multiply a schema's size).
const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// How deep a schema is followed at all (the catalog bounds it at 32).
const MAX_DEPTH: usize = 32;
/// The enum values said in a description when the enum is dropped.
const MAX_ENUM_IN_DESCRIPTION: usize = 20;

/// The keys Gemini's `Schema` has: anything else is dropped.
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The tools as Gemini function declarations, for a request's
/// `tools: [{"functionDeclarations": …}]`.
pub fn tools<'a>(tools: impl IntoIterator<Item = &'a ToolSpec>) -> ProviderTools {
    let mut warnings = Vec::new();
    let mut declarations = Vec::new();
    for tool in offered(tools, &mut warnings) {
        match declaration(tool) {
            Ok((declaration, rewrites)) => {
                warnings.extend(rewrites.into_iter().map(|w| format!("{}: {w}", tool.model_name)));
                declarations.push(declaration);
            }
            Err(why) => warnings.push(format!("left out the tool {}: {why}", tool.model_name)),
        }
    }
    ProviderTools { tools: declarations, warnings: bounded(warnings) }
}

/// One function declaration and the rewrites made, or why the tool cannot
/// be declared.
fn declaration(tool: &ToolSpec) -> Result<(Value, Vec<String>), String> {
    let input_schema = tool.input_schema.to_value();
    let mut rewriter = Rewriter::new(&input_schema);
    let Value::Object(root) = &input_schema else {
        return Err("its input schema is not an object".into());
    };
    let mut def = Map::new();
    def.insert("name".into(), json!(tool.model_name));
    if let Some(d) = description(tool) {
        def.insert("description".into(), json!(d));
    }
    let parameters = rewriter.object_root(root)?;
    if serde_json::to_vec(&parameters).map_or(usize::MAX, |b| b.len()) > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its parameters take over {} KiB once references are inlined",
            MAX_SCHEMA_BYTES / 1024
        ));
    }
    if parameters.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty()) {
        def.insert("parameters".into(), parameters);
    }
    Ok((Value::Object(def), rewriter.warnings))
}

/// Rewrites one tool's schema into Gemini's subset.
struct Rewriter<'a> {
    root: &'a Value,
    warnings: Vec<String>,
}

impl<'a> Rewriter<'a> {
    fn new(root: &'a Value) -> Self {
        Rewriter { root, warnings: Vec::new() }
    }

    fn warn(&mut self, path: &str, what: impl std::fmt::Display) {
        let at = if path.is_empty() { String::new() } else { format!(" at {path}") };
        self.warnings.push(format!("{what}{at}"));
    }

    /// The top level: an object schema (its `type` set if missing).
    fn object_root(&mut self, root: &Map<String, Value>) -> Result<Value, String> {
        match root.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None => {}
            Some(_) => return Err("its input schema's type is not \"object\"".into()),
        }
        let mut schema = self.node(&Value::Object(root.clone()), "", 0, 0)?;
        if let Value::Object(map) = &mut schema {
            if map.remove("anyOf").is_some() {
                self.warn(
                    "",
                    "dropped \"anyOf\" from the top of the parameters (Gemini wants an object there)",
                );
            }
            map.insert("type".into(), json!("OBJECT"));
            map.remove("nullable");
        }
        Ok(schema)
    }

    /// One schema node, rewritten. `refs` counts the `$ref`s followed to
    /// reach it.
    fn node(&mut self, schema: &Value, path: &str, depth: usize, refs: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("its schema is nested over {MAX_DEPTH} levels"));
        }
        let Value::Object(input) = schema else {
            // `true`/`false` schemas and garbage: nothing Gemini can say.
            return Err(format!("a schema{} is not an object", in_path(path)));
        };
        if let Some(reference) = input.get("$ref") {
            return self.reference(reference, input, path, depth, refs);
        }
        let mut input = input.clone();
        if let Some(Value::Array(all)) = input.remove("allOf") {
            self.merge_all_of(&mut input, all, path);
        }
        if let Some(one_of) = input.remove("oneOf") {
            self.warn(path, "\"oneOf\" sent as \"anyOf\"");
            input.entry("anyOf").or_insert(one_of);
        }
        let mut out = Map::new();
        if let Some(Value::Array(options)) = input.get("anyOf") {
            let mut kept = Vec::new();
            for (i, option) in options.iter().enumerate() {
                let at = format!("{path}/anyOf/{i}");
                let option = self.node(option, &at, depth + 1, refs)?;
                match is_unexpressible(&option) {
                    true => self.warn(&at, "left out an \"anyOf\" option Gemini cannot declare"),
                    false => kept.push(option),
                }
            }
            if kept.is_empty() {
                return Ok(unexpressible());
            }
            let dropped: Vec<&str> = input
                .keys()
                .map(String::as_str)
                .filter(|k| !matches!(*k, "anyOf" | "description" | "title" | "default"))
                .collect();
            if !dropped.is_empty() {
                self.warn(path, format!("dropped {} beside \"anyOf\"", quoted_list(&dropped)));
            }
            out.insert("anyOf".into(), Value::Array(kept));
            for key in ["description", "title"] {
                if let Some(v) = input.get(key).filter(|v| v.is_string()) {
                    out.insert(key.into(), v.clone());
                }
            }
            return Ok(Value::Object(out));
        }
        if let Some(value) = input.remove("const") {
            match value {
                Value::String(_) => {
                    self.warn(path, "\"const\" sent as a one-value \"enum\"");
                    input.insert("enum".into(), json!([value]));
                    input.entry("type").or_insert(json!("string"));
                }
                other => {
                    self.warn(path, "dropped a non-string \"const\", said in the description");
                    append_description(&mut input, &format!("Always {other}."));
                }
            }
        }
        let types = self.types(&input, path);
        let (kind, nullable) = match types {
            Types::One(kind, nullable) => (Some(kind), nullable),
            Types::Any(nullable) => (None, nullable),
            Types::Several(kinds, nullable) => {
                self.warn(path, "a list of types sent as \"anyOf\"");
                let mut options = Vec::new();
                for kind in kinds {
                    let mut one = input.clone();
                    one.insert("type".into(), json!(kind));
                    options.push(self.node(&Value::Object(one), path, depth + 1, refs)?);
                }
                out.insert("anyOf".into(), Value::Array(options));
                if nullable {
                    out.insert("nullable".into(), json!(true));
                }
                return Ok(Value::Object(out));
            }
        };
        if let Some(kind) = kind {
            out.insert("type".into(), json!(kind.to_ascii_uppercase()));
        }
        if nullable {
            out.insert("nullable".into(), json!(true));
        }
        for key in ["title", "description"] {
            if let Some(v) = input.get(key).filter(|v| v.is_string()) {
                out.insert(key.into(), v.clone());
            }
        }
        if let Some(Value::Array(values)) = input.get("enum") {
            match values.iter().all(Value::is_string) {
                true if kind.is_none_or(|k| k == "string") => {
                    out.insert("type".into(), json!("STRING"));
                    out.insert("enum".into(), Value::Array(values.clone()));
                }
                _ => {
                    let shown: Vec<String> =
                        values.iter().take(MAX_ENUM_IN_DESCRIPTION).map(Value::to_string).collect();
                    let more = if values.len() > MAX_ENUM_IN_DESCRIPTION { ", …" } else { "" };
                    self.warn(path, "dropped an \"enum\" of other than strings, said in the description");
                    append_description(&mut out, &format!("One of: {}{more}.", shown.join(", ")));
                }
            }
        }
        if let Some(format) = input.get("format").and_then(Value::as_str) {
            let supported = match kind {
                Some("string") => matches!(format, "enum" | "date-time"),
                Some("integer") => matches!(format, "int32" | "int64"),
                Some("number") => matches!(format, "float" | "double"),
                _ => false,
            };
            match supported {
                true => {
                    out.insert("format".into(), json!(format));
                }
                false => self.warn(path, format!("dropped \"format\": {format:?}")),
            }
        }
        for key in [
            "minimum",
            "maximum",
            "minItems",
            "maxItems",
            "minLength",
            "maxLength",
            "minProperties",
            "maxProperties",
        ] {
            if let Some(v) = input.get(key).filter(|v| v.is_number()) {
                out.insert(key.into(), v.clone());
            }
        }
        if let Some(v) = input.get("pattern").filter(|v| v.is_string()) {
            out.insert("pattern".into(), v.clone());
        }
        if let Some(v) = input.get("default") {
            out.insert("default".into(), v.clone());
        }
        match kind {
            Some("array") => {
                let items = match input.get("items") {
                    Some(items @ Value::Object(_)) => {
                        self.node(items, &format!("{path}/items"), depth + 1, refs)?
                    }
                    _ => {
                        self.warn(path, "an array without one \"items\" schema takes strings");
                        json!({ "type": "STRING" })
                    }
                };
                out.insert("items".into(), items);
            }
            Some("object") => self.properties(&input, &mut out, path, depth, refs)?,
            _ => {}
        }
        let dropped: Vec<&str> = input
            .keys()
            .map(String::as_str)
            .filter(|k| !GEMINI_KEYS.contains(k) && !matches!(*k, "const" | "$defs" | "definitions"))
            .collect();
        if !dropped.is_empty() {
            self.warn(path, format!("dropped {}", quoted_list(&dropped)));
        }
        Ok(Value::Object(out))
    }

    /// An object's properties: each rewritten; a free-form object left out
    /// when optional, the tool refused when required.
    fn properties(
        &mut self,
        input: &Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
        refs: usize,
    ) -> Result<(), String> {
        let required: Vec<&str> = input
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut properties = Map::new();
        if let Some(Value::Object(given)) = input.get("properties") {
            for (name, schema) in given {
                let at = format!("{path}/{name}");
                let rewritten = self.node(schema, &at, depth + 1, refs)?;
                if is_unexpressible(&rewritten) {
                    if required.contains(&name.as_str()) {
                        return Err(format!("the required parameter {at} is an object without properties, which Gemini cannot declare"));
                    }
                    self.warn(
                        &at,
                        "left out an optional parameter Gemini cannot declare (an object without properties)",
                    );
                    continue;
                }
                properties.insert(name.clone(), rewritten);
            }
        }
        let required: Vec<Value> =
            required.into_iter().filter(|r| properties.contains_key(*r)).map(|r| json!(r)).collect();
        if !path.is_empty() && properties.is_empty() {
            // Marked so that the parent leaves it out (or refuses the tool).
            out.insert("properties".into(), json!({}));
            return Ok(());
        }
        out.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        Ok(())
    }

    /// Follows a local `$ref`, inlining its target.
    fn reference(
        &mut self,
        reference: &Value,
        beside: &Map<String, Value>,
        path: &str,
        depth: usize,
        refs: usize,
    ) -> Result<Value, String> {
        let target = reference.as_str().and_then(|r| self.resolve(r));
        let Some(target) = target else {
            return Err(format!("a \"$ref\"{} points outside its schema or to nothing", in_path(path)));
        };
        if refs >= MAX_REF_DEPTH {
            self.warn(
                path,
                format!("cut a reference chain deeper than {MAX_REF_DEPTH} (recursive?) to its description"),
            );
            let mut cut = Map::new();
            cut.insert("type".into(), json!("STRING"));
            let said =
                target.get("description").and_then(Value::as_str).unwrap_or("A nested value, as text.");
            cut.insert("description".into(), json!(said));
            return Ok(Value::Object(cut));
        }
        // Keywords beside `$ref` (a description, say) apply too.
        let mut merged = match target {
            Value::Object(map) => map.clone(),
            _ => return Err(format!("a \"$ref\"{} points to a schema that is not an object", in_path(path))),
        };
        for (k, v) in beside {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.node(&Value::Object(merged), path, depth + 1, refs + 1)
    }

    /// A local reference's target: `#/$defs/name`, `#/definitions/name`
    /// or another JSON pointer into the root.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(pointer)
    }

    fn merge_all_of(&mut self, input: &mut Map<String, Value>, all: Vec<Value>, path: &str) {
        let mut merged = 0;
        for part in all {
            let part = match part.get("$ref").and_then(Value::as_str).and_then(|r| self.resolve(r)) {
                Some(target) => target.clone(),
                None => part,
            };
            let Value::Object(part) = part else { continue };
            if let Some(Value::Object(props)) = part.get("properties") {
                let into = input.entry("properties").or_insert_with(|| json!({}));
                if let Value::Object(into) = into {
                    for (k, v) in props {
                        into.entry(k.clone()).or_insert(v.clone());
                    }
                }
            }
            if let Some(Value::Array(req)) = part.get("required") {
                let into = input.entry("required").or_insert_with(|| json!([]));
                if let Value::Array(into) = into {
                    for r in req {
                        if !into.contains(r) {
                            into.push(r.clone());
                        }
                    }
                }
            }
            for key in ["type", "description", "title"] {
                if let Some(v) = part.get(key) {
                    input.entry(key).or_insert(v.clone());
                }
            }
            merged += 1;
        }
        if merged > 0 {
            self.warn(path, "merged \"allOf\" into one schema");
        }
    }

    fn types(&mut self, input: &Map<String, Value>, path: &str) -> Types {
        let listed: Vec<&str> = match input.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let nullable = listed.contains(&"null") || input.get("nullable") == Some(&Value::Bool(true));
        let mut kinds: Vec<&'static str> = Vec::new();
        for t in listed.iter().filter(|t| **t != "null") {
            match KINDS.iter().find(|k| **k == *t) {
                Some(k) if !kinds.contains(k) => kinds.push(k),
                Some(_) => {}
                None => self.warn(path, format!("dropped the unknown type {t:?}")),
            }
        }
        if listed.len() > 1 && nullable && kinds.len() == 1 {
            self.warn(path, "a type list with \"null\" sent as \"nullable\"");
        }
        match kinds.as_slice() {
            [] if input.contains_key("properties") => Types::One("object", nullable),
            [] if input.contains_key("items") => Types::One("array", nullable),
            [] if input
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().all(Value::is_string)) =>
            {
                Types::One("string", nullable)
            }
            [] => Types::Any(nullable),
            [one] => Types::One(one, nullable),
            more => Types::Several(more.to_vec(), nullable),
        }
    }
}

/// The JSON Schema types Gemini has (bar `null`, which is `nullable`).
const KINDS: &[&str] = &["string", "number", "integer", "boolean", "array", "object"];

enum Types {
    One(&'static str, bool),
    Any(bool),
    Several(Vec<&'static str>, bool),
}

/// Whether a rewritten schema holds an object without properties, which
/// Gemini refuses: itself, or the items of an array of them.
fn is_unexpressible(schema: &Value) -> bool {
    match schema.get("type").and_then(Value::as_str) {
        Some("OBJECT") => schema.get("properties").and_then(Value::as_object).is_none_or(Map::is_empty),
        Some("ARRAY") => schema.get("items").is_some_and(is_unexpressible),
        _ => false,
    }
}

/// What stands for a schema Gemini cannot declare, for the parent to leave
/// out (or to refuse the tool for).
fn unexpressible() -> Value {
    json!({ "type": "OBJECT", "properties": {} })
}

fn append_description(map: &mut Map<String, Value>, text: &str) {
    let description = match map.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} {text}"),
        _ => text.to_string(),
    };
    map.insert("description".into(), json!(description));
}

fn in_path(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    }
}

fn quoted_list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("{:?}", crate::error::normalize_message(k, 64)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `functionCall` parts of a `GenerateContentResponse` (its first
/// candidate's), of a `Content` (`{"role", "parts"}`), of a list of parts,
/// or one part, in order. Other parts (text) are skipped.
pub fn tool_calls(value: &Value) -> Vec<Result<ToolCall, CallError>> {
    let parts: Vec<&Value> = if let Some(candidates) = value.get("candidates").and_then(Value::as_array) {
        candidates
            .first()
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array)
            .map(|p| p.iter().collect())
            .unwrap_or_default()
    } else if let Some(parts) = value.get("parts").and_then(Value::as_array) {
        parts.iter().collect()
    } else if let Value::Array(parts) = value {
        parts.iter().collect()
    } else {
        vec![value]
    };
    parts.into_iter().filter_map(|p| p.get("functionCall")).map(parse_call).collect()
}

/// One `functionCall`: `{"name", "args", "id"?}`. Without an id, the
/// function's name is the call's id (Gemini matches responses by name).
pub fn parse_call(call: &Value) -> Result<ToolCall, CallError> {
    let given = call.get("id").and_then(Value::as_str);
    let name = call_name(call.get("name"), given.unwrap_or(""))?;
    let id = match given {
        Some(id) if !id.is_empty() && id.len() <= MAX_CALL_ID_BYTES && !id.chars().any(char::is_control) => {
            id.to_string()
        }
        Some(_) => {
            return Err(super::bad_call(None, "the call's id is empty, too long or holds control characters"))
        }
        None => crate::error::normalize_message(&name, MAX_CALL_ID_BYTES),
    };
    let arguments = call_arguments(call.get("args"), &id)?;
    Ok(ToolCall { id, name, arguments })
}

/// Calls the tool through the host (see [`super::dispatch`]).
pub async fn dispatch(host: &Host, call: &ToolCall, opts: CallOpts) -> Result<ToolResult, Error> {
    super::dispatch(host, call, opts).await
}

/// Dispatches the call and renders what came back: the result, or the
/// host's failure as an error the model can read.
pub async fn answer(host: &Host, call: &ToolCall, opts: CallOpts) -> Rendered {
    match dispatch(host, call, opts).await {
        Ok(out) => result(call, &out),
        Err(e) => Rendered { value: error(call, &e), warnings: Vec::new() },
    }
}

/// The `functionResponse` part answering `call`: `{"output": TEXT}`, or
/// `{"error": TEXT}` when the tool reported failure.
pub fn result(call: &ToolCall, result: &ToolResult) -> Rendered {
    let mut warnings = Vec::new();
    let text: Vec<String> = parts(result, false, "Gemini", &mut warnings)
        .into_iter()
        .filter_map(|part| match part {
            Part::Text(text) => Some(text),
            Part::Image { .. } => None,
        })
        .collect();
    let key = if result.is_error { "error" } else { "output" };
    let value = function_response(call, json!({ key: text.join("\n") }));
    Rendered { value, warnings: bounded(warnings) }
}

/// A `functionResponse` part that tells the model why the call could not
/// be made.
pub fn error(call: &ToolCall, error: &Error) -> Value {
    function_response(call, json!({ "error": error.to_string() }))
}

fn function_response(call: &ToolCall, response: Value) -> Value {
    let mut inner = Map::new();
    inner.insert("name".into(), json!(call.name));
    if call.id != call.name {
        inner.insert("id".into(), json!(call.id));
    }
    inner.insert("response".into(), response);
    json!({ "functionResponse": inner })
}
