//! Issue 44, item 4: every tool of the test catalog (about 1,000 tools
//! modelled on 70 public MCP servers' tool sets,
//! `tests/fixtures/tool_search/catalog.json`) and a set of hostile schemas
//! converted for OpenAI (strict), Anthropic and Gemini, each output checked
//! against the provider's documented rules by a validator written here
//! from those documents; every tool is either offered valid or left out
//! with a warning naming it, never sent broken.
//!
//! The rules, as the providers document them:
//!
//! - **Gemini** (function calling guide; the `Schema` reference of the
//!   Gemini API, an OpenAPI 3.0 subset): a declaration is `name`,
//!   `description`, `parameters`; the name starts with a letter or `_`,
//!   then letters, digits, `_`, `.`, `:` or `-`, at most 64; `parameters`
//!   is an `OBJECT` schema; a schema has only the `Schema` fields (`type`,
//!   `format`, `title`, `description`, `nullable`, `enum`, `maxItems`,
//!   `minItems`, `properties`, `required`, `minProperties`,
//!   `maxProperties`, `minLength`, `maxLength`, `pattern`, `example`,
//!   `anyOf`, `propertyOrdering`, `default`, `items`, `minimum`,
//!   `maximum`); `type` is one of the `Type` names; `enum` goes with
//!   `STRING` and holds strings; an `OBJECT` has non-empty `properties` and
//!   `required` names only those; an `ARRAY` has `items`; `format` is
//!   `enum`/`date-time` for strings, `int32`/`int64` for integers,
//!   `float`/`double` for numbers.
//! - **OpenAI strict mode** (Structured Outputs, "Supported schemas"): the
//!   root is an object, not `anyOf`; every object has
//!   `additionalProperties: false` and lists every property in
//!   `required`; types are `string`, `number`, `integer`, `boolean`,
//!   `object`, `array`, `null` (alone or in a list); no `allOf`, `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`,
//!   `patternProperties`, `unevaluatedProperties`, `propertyNames`,
//!   `minProperties`, `maxProperties`, `minLength`, `maxLength`,
//!   `unevaluatedItems`, `contains`, `minContains`, `maxContains`,
//!   `uniqueItems`; `format` among the documented ones; at most 10 levels
//!   of nesting, 5,000 properties and 1,000 enum values.
//! - **Anthropic** (tool use, `input_schema`): a JSON Schema object whose
//!   top level is `"type": "object"` without `oneOf`/`anyOf`/`allOf`; the
//!   name matches `^[a-zA-Z0-9_-]{1,64}$`.

use crate::support::tool_server::ToolServer;
use mcp_stack::providers::{anthropic, gemini, openai};
use mcp_stack::{host::Host, Definition};
use serde_json::{json, Value};

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
const GEMINI_TYPES: &[&str] = &["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"];

/// What breaks Gemini's rules in one function declaration.
pub(crate) fn gemini_violations(declaration: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(map) = declaration.as_object() else { return vec!["not an object".into()] };
    for key in map.keys() {
        if !["name", "description", "parameters"].contains(&key.as_str()) {
            out.push(format!("declaration key {key}"));
        }
    }
    let name = map.get("name").and_then(Value::as_str).unwrap_or("");
    let first_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c));
    if !first_ok || !rest_ok || name.len() > 64 {
        out.push(format!("name {name:?}"));
    }
    if let Some(parameters) = map.get("parameters") {
        if parameters.get("type") != Some(&json!("OBJECT")) {
            out.push("parameters are not an OBJECT".into());
        }
        gemini_schema(parameters, "parameters", &mut out);
    }
    out
}

fn gemini_schema(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        out.push(format!("{at}: not an object"));
        return;
    };
    for key in map.keys() {
        if !GEMINI_KEYS.contains(&key.as_str()) {
            out.push(format!("{at}: key {key}"));
        }
    }
    let kind = map.get("type").and_then(Value::as_str);
    if map.contains_key("type") && !kind.is_some_and(|k| GEMINI_TYPES.contains(&k)) {
        out.push(format!("{at}: type {:?}", map["type"]));
    }
    if let Some(values) = map.get("enum") {
        if kind != Some("STRING") || !values.as_array().is_some_and(|v| v.iter().all(Value::is_string)) {
            out.push(format!("{at}: enum on {kind:?} or of non-strings"));
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str) {
        let ok = match kind {
            Some("STRING") => ["enum", "date-time"].contains(&format),
            Some("INTEGER") => ["int32", "int64"].contains(&format),
            Some("NUMBER") => ["float", "double"].contains(&format),
            _ => false,
        };
        if !ok {
            out.push(format!("{at}: format {format} on {kind:?}"));
        }
    }
    match kind {
        Some("OBJECT") => {
            let properties = map.get("properties").and_then(Value::as_object);
            match properties {
                Some(p) if !p.is_empty() => {
                    for (name, sub) in p {
                        gemini_schema(sub, &format!("{at}/{name}"), out);
                    }
                    for r in map.get("required").and_then(Value::as_array).into_iter().flatten() {
                        if !r.as_str().is_some_and(|r| p.contains_key(r)) {
                            out.push(format!("{at}: required {r} is not a property"));
                        }
                    }
                }
                _ => out.push(format!("{at}: OBJECT without properties")),
            }
        }
        Some("ARRAY") => match map.get("items") {
            Some(items) => gemini_schema(items, &format!("{at}/items"), out),
            None => out.push(format!("{at}: ARRAY without items")),
        },
        _ => {}
    }
    if let Some(options) = map.get("anyOf") {
        match options.as_array() {
            Some(options) if !options.is_empty() => {
                for (i, option) in options.iter().enumerate() {
                    gemini_schema(option, &format!("{at}/anyOf/{i}"), out);
                }
            }
            _ => out.push(format!("{at}: anyOf is not a list of schemas")),
        }
    }
}

const OPENAI_STRICT_UNSUPPORTED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
];
const OPENAI_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
const OPENAI_TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array", "null"];

/// What breaks OpenAI's strict-mode rules in one (chat) function tool that
/// says `strict: true`.
fn openai_strict_violations(tool: &Value) -> Vec<String> {
    let function = &tool["function"];
    let mut out = Vec::new();
    let parameters = &function["parameters"];
    if parameters.get("type") != Some(&json!("object")) || parameters.get("anyOf").is_some() {
        out.push("root is not a plain object".into());
    }
    let mut counts = (0usize, 0usize);
    openai_schema(parameters, "parameters", 1, &mut counts, &mut out);
    if counts.0 > 5000 || counts.1 > 1000 {
        out.push(format!("{} properties, {} enum values", counts.0, counts.1));
    }
    out
}

fn openai_schema(schema: &Value, at: &str, depth: usize, counts: &mut (usize, usize), out: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        out.push(format!("{at}: not an object"));
        return;
    };
    if depth > 10 {
        out.push(format!("{at}: over 10 levels"));
    }
    for key in map.keys() {
        if OPENAI_STRICT_UNSUPPORTED.contains(&key.as_str()) {
            out.push(format!("{at}: {key}"));
        }
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for t in &types {
        if !OPENAI_TYPES.contains(t) {
            out.push(format!("{at}: type {t}"));
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str) {
        if !OPENAI_FORMATS.contains(&format) {
            out.push(format!("{at}: format {format}"));
        }
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        counts.1 += values.len();
    }
    if types.contains(&"object") {
        if map.get("additionalProperties") != Some(&json!(false)) {
            out.push(format!("{at}: additionalProperties is not false"));
        }
        let properties = map.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        counts.0 += properties.len();
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for name in properties.keys() {
            if !required.contains(&name.as_str()) {
                out.push(format!("{at}: {name} is not required"));
            }
        }
        for (name, sub) in &properties {
            openai_schema(sub, &format!("{at}/{name}"), depth + 1, counts, out);
        }
    }
    if let Some(items) = map.get("items") {
        openai_schema(items, &format!("{at}/items"), depth + 1, counts, out);
    }
    for key in ["anyOf", "oneOf"] {
        for (i, option) in map.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            openai_schema(option, &format!("{at}/{key}/{i}"), depth + 1, counts, out);
        }
    }
    for key in ["$defs", "definitions"] {
        for (name, sub) in map.get(key).and_then(Value::as_object).into_iter().flatten() {
            openai_schema(sub, &format!("{at}/{key}/{name}"), depth, counts, out);
        }
    }
}

/// What breaks Anthropic's rules in one tool definition.
pub(crate) fn anthropic_violations(tool: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let name = tool["name"].as_str().unwrap_or("");
    if name.is_empty()
        || name.len() > 64
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
    {
        out.push(format!("name {name:?}"));
    }
    let schema = &tool["input_schema"];
    if schema.get("type") != Some(&json!("object")) {
        out.push("input_schema is not an object schema".into());
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if schema.get(key).is_some() {
            out.push(format!("input_schema has {key} at its top"));
        }
    }
    out
}

/// Schemas as MCP servers write them that each provider refuses as they
/// are.
fn hostile_tools() -> Vec<Value> {
    let tool = |name: &str, schema: Value| json!({ "name": name, "description": format!("the {name} case"), "inputSchema": schema });
    vec![
        tool(
            "type_list",
            json!({ "type": "object", "properties": {
                "maybe": { "type": ["string", "null"] },
                "either": { "type": ["string", "integer"] },
            }}),
        ),
        tool(
            "refs",
            json!({ "type": "object", "$defs": { "point": { "type": "object", "properties": {
            "x": { "type": "number" }, "y": { "type": "number" } }, "required": ["x", "y"] } },
            "properties": { "from": { "$ref": "#/$defs/point" }, "to": { "$ref": "#/$defs/point", "description": "where to" } },
            "required": ["from"] }),
        ),
        tool(
            "recursive",
            json!({ "type": "object", "definitions": { "node": { "type": "object", "description": "a tree node",
            "properties": { "label": { "type": "string" }, "child": { "$ref": "#/definitions/node" } } } },
            "properties": { "tree": { "$ref": "#/definitions/node" } } }),
        ),
        tool(
            "constant",
            json!({ "type": "object", "properties": { "kind": { "const": "fixed" }, "version": { "const": 2 } } }),
        ),
        tool(
            "numbers_enum",
            json!({ "type": "object", "properties": { "level": { "type": "integer", "enum": [1, 2, 3] } } }),
        ),
        tool(
            "combinators",
            json!({ "type": "object", "properties": {
                "shape": { "oneOf": [ { "type": "string" }, { "type": "object", "properties": { "w": { "type": "number" } } } ] },
                "merged": { "allOf": [ { "type": "object", "properties": { "a": { "type": "string" } } },
                                       { "properties": { "b": { "type": "boolean" } }, "required": ["b"] } ] },
            }}),
        ),
        tool(
            "loose",
            json!({ "type": "object", "additionalProperties": false, "properties": {
                "meta": { "type": "object", "additionalProperties": { "type": "string" } },
                "when": { "type": "string", "format": "date" },
                "ids": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
                "n": { "type": "number", "exclusiveMinimum": 0, "multipleOf": 2 },
            }}),
        ),
        tool(
            "required_free_form",
            json!({ "type": "object", "properties": { "payload": { "type": "object" } }, "required": ["payload"] }),
        ),
        tool(
            "outside_ref",
            json!({ "type": "object", "properties": { "x": { "$ref": "https://example.com/schema.json" } } }),
        ),
        tool("no_params", json!({ "type": "object" })),
    ]
}

async fn host_of(servers: &[(String, Vec<Value>)]) -> (Host, Vec<ToolServer>) {
    let host = Host::new();
    let mut kept = Vec::new();
    let mut definitions = Vec::new();
    for (name, tools) in servers {
        let server = ToolServer::with_tools(tools.clone());
        definitions.push(Definition::new(name.as_str(), server.factory("catalog")));
        kept.push(server);
    }
    let failed = host.add_all(definitions).await;
    assert!(failed.is_empty(), "{failed:?}");
    (host, kept)
}

fn test_catalog() -> Vec<(String, Vec<Value>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tool_search/catalog.json");
    let catalog: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let servers = catalog["servers"].as_array().unwrap();
    // Binding names: [A-Za-z0-9_-], at most 32 bytes.
    servers
        .iter()
        .map(|s| {
            let name: String = s["name"]
                .as_str()
                .unwrap()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .take(32)
                .collect();
            (name, s["tools"].as_array().unwrap().clone())
        })
        .collect()
}

/// Every tool offered is valid for its provider; every tool not offered is
/// named by a warning.
fn check_all(host: &Host, hostile: bool) {
    let catalog = host.catalog();
    let total = catalog.tools().count();
    let names_in = |warnings: &[String], name: &str| warnings.iter().any(|w| w.contains(name));

    let for_gemini = gemini::tools(catalog.tools());
    let mut broken = Vec::new();
    for declaration in &for_gemini.tools {
        let violations = gemini_violations(declaration);
        if !violations.is_empty() {
            broken.push(format!("{}: {violations:?}", declaration["name"]));
        }
    }
    assert!(broken.is_empty(), "Gemini declarations break its rules:\n{}", broken.join("\n"));
    let offered: Vec<&str> = for_gemini.tools.iter().filter_map(|d| d["name"].as_str()).collect();
    for tool in catalog.tools() {
        if !offered.contains(&tool.model_name.as_str()) {
            assert!(
                names_in(&for_gemini.warnings, &tool.model_name),
                "{} left out silently",
                tool.model_name
            );
        }
    }
    assert!(
        offered.len() * 10 >= total * 9 || hostile,
        "Gemini takes most real tools: {} of {total}",
        offered.len()
    );

    let for_gpt = openai::tools(catalog.tools(), &openai::Options::chat().strict(true));
    assert_eq!(for_gpt.tools.len(), total, "OpenAI is offered every tool, strict or not");
    let mut broken = Vec::new();
    for tool in for_gpt.tools.iter().filter(|t| t["function"]["strict"] == json!(true)) {
        let violations = openai_strict_violations(tool);
        if !violations.is_empty() {
            broken.push(format!("{}: {violations:?}", tool["function"]["name"]));
        }
    }
    assert!(broken.is_empty(), "strict tools break OpenAI's rules:\n{}", broken.join("\n"));
    for tool in for_gpt.tools.iter().filter(|t| t["function"]["strict"] == json!(false)) {
        let name = tool["function"]["name"].as_str().unwrap();
        assert!(names_in(&for_gpt.warnings, name), "{name} is not strict without a warning saying why");
    }

    let for_claude = anthropic::tools(catalog.tools());
    assert_eq!(for_claude.tools.len(), total);
    for tool in &for_claude.tools {
        assert_eq!(anthropic_violations(tool), Vec::<String>::new(), "{}", tool["name"]);
    }
}

#[tokio::test]
async fn the_test_catalog_converts_valid_for_every_provider() {
    let servers = test_catalog();
    assert!(servers.len() >= 30, "{} servers", servers.len());
    let (host, _servers) = host_of(&servers).await;
    assert!(host.catalog().tools().count() >= 1000, "{}", host.catalog().tools().count());
    check_all(&host, false);
    host.close().await;
}

#[tokio::test]
async fn hostile_schemas_are_rewritten_with_warnings_or_left_out() {
    let (host, _servers) = host_of(&[("hostile".to_string(), hostile_tools())]).await;
    check_all(&host, true);
    let catalog = host.catalog();
    let gemini = gemini::tools(catalog.tools());
    let declared = |name: &str| gemini.tools.iter().find(|d| d["name"] == format!("mcp__hostile__{name}"));
    let warned = |name: &str, what: &str| {
        gemini.warnings.iter().any(|w| w.contains(&format!("mcp__hostile__{name}")) && w.contains(what))
    };
    let props = |name: &str| declared(name).unwrap()["parameters"]["properties"].clone();

    assert_eq!(props("type_list")["maybe"], json!({ "type": "STRING", "nullable": true }));
    assert!(props("type_list")["either"]["anyOf"].as_array().is_some_and(|a| a.len() == 2));
    assert!(warned("type_list", "nullable") && warned("type_list", "anyOf"));

    let from = &props("refs")["from"];
    assert_eq!(from["properties"]["x"], json!({ "type": "NUMBER" }), "inlined: {from}");
    assert_eq!(props("refs")["to"]["description"], "where to");
    assert_eq!(declared("refs").unwrap()["parameters"]["required"], json!(["from"]));

    assert!(warned("recursive", "deeper than"), "{:?}", gemini.warnings);
    assert!(declared("recursive").is_some());

    assert_eq!(props("constant")["kind"]["enum"], json!(["fixed"]));
    assert!(props("constant")["version"]["description"].as_str().unwrap().contains("Always 2"));
    assert!(props("numbers_enum")["level"]["description"].as_str().unwrap().contains("One of: 1, 2, 3"));
    assert!(props("numbers_enum")["level"].get("enum").is_none());

    assert!(warned("combinators", "oneOf") && warned("combinators", "allOf"));
    let merged = &props("combinators")["merged"];
    assert_eq!(merged["required"], json!(["b"]), "{merged}");

    let loose = props("loose");
    assert!(loose.get("meta").is_none(), "a free-form optional object is left out: {loose}");
    assert!(loose["when"].get("format").is_none());
    assert!(warned("loose", "additionalProperties") || warned("loose", "uniqueItems"));

    assert!(declared("required_free_form").is_none() && warned("required_free_form", "left out"));
    assert!(declared("outside_ref").is_none() && warned("outside_ref", "outside"));
    let no_params = declared("no_params").unwrap();
    assert!(no_params.get("parameters").is_none(), "{no_params}");
    host.close().await;
}

/// Calls and results in Gemini's shapes: `functionCall` parts read from a
/// response, dispatched through the host, answered as `functionResponse`.
#[tokio::test]
async fn gemini_calls_come_back_and_results_go_out_in_its_shapes() {
    let server = ToolServer::with_tools(vec![json!({ "name": "add", "inputSchema": { "type": "object",
        "properties": { "a": { "type": "number" }, "b": { "type": "number" } } } })])
    .answering(|_, args| {
        let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
        json!({ "content": [{ "type": "text", "text": sum.to_string() }] })
    });
    let host = Host::new();
    assert!(host.add_all([Definition::new("calc", server.factory("calc"))]).await.is_empty());
    let response = json!({ "candidates": [{ "content": { "role": "model", "parts": [
        { "text": "adding" },
        { "functionCall": { "name": "mcp__calc__add", "args": { "a": 2, "b": 3 }, "id": "call-1" } },
        { "functionCall": { "name": "mcp__calc__nope", "args": {} } },
    ]}}]});
    let calls = gemini::tool_calls(&response);
    assert_eq!(calls.len(), 2);
    let first = calls[0].as_ref().unwrap();
    let answer = gemini::answer(&host, first, Default::default()).await;
    assert_eq!(
        answer.value,
        json!({ "functionResponse": { "name": "mcp__calc__add", "id": "call-1", "response": { "output": "5" } } })
    );
    let second = calls[1].as_ref().unwrap();
    assert_eq!(second.id, "mcp__calc__nope", "no id: the name stands for it");
    let refused = gemini::answer(&host, second, Default::default()).await;
    assert!(refused.value["functionResponse"]["response"]["error"].as_str().unwrap().contains("not_found"));
    assert!(refused.value["functionResponse"].get("id").is_none());
    let bad = gemini::tool_calls(&json!({ "functionCall": { "name": "x", "args": "not json" } }));
    assert!(bad[0].is_err());
    host.close().await;
}
