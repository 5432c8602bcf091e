//! What each provider accepts as a tool's parameter schema, and the
//! rewrites that get an MCP input schema there. Every rewrite is reported.

use serde_json::{json, Map, Value};

/// The most nesting levels OpenAI's strict mode accepts.
pub(crate) const OPENAI_STRICT_MAX_DEPTH: usize = 10;
/// The most object properties OpenAI's strict mode accepts in one schema.
pub(crate) const OPENAI_STRICT_MAX_PROPERTIES: usize = 5000;
/// The most enum values OpenAI's strict mode accepts in one schema.
pub(crate) const OPENAI_STRICT_MAX_ENUM_VALUES: usize = 1000;

/// The `format` values OpenAI's strict mode accepts.
const OPENAI_STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// Keywords strict mode does not support and that only narrow what is
/// valid: dropped (the server still validates the arguments).
const OPENAI_STRICT_DROPPED: &[&str] = &[
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "minLength",
    "maxLength",
];

/// Keywords strict mode does not support whose removal would change what
/// is valid in a way a model could not know: the tool is offered without
/// strict instead.
const OPENAI_STRICT_BLOCKING: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "prefixItems",
    "$ref",
    "$dynamicRef",
];

/// Which provider a schema is being made for, and what it refuses at the top
/// level of a tool's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI",
            Provider::Anthropic => "Anthropic",
        }
    }

    /// Keywords the provider refuses at the top level of a tool's schema:
    /// OpenAI wants a plain object (no `oneOf`, `anyOf`, `allOf`, `enum` or
    /// `not` at the root); Anthropic refuses `oneOf`, `anyOf` and `allOf`
    /// there.
    fn refused_at_root(self) -> &'static [&'static str] {
        match self {
            Provider::OpenAi => &["anyOf", "oneOf", "allOf", "enum", "not"],
            Provider::Anthropic => &["anyOf", "oneOf", "allOf"],
        }
    }
}

/// The tool's input schema as `provider` accepts it at the top level: a
/// JSON object with `"type": "object"` and none of the combinators it
/// refuses there (OpenAI also wants `properties`). What was changed is
/// pushed onto `warnings`.
pub(crate) fn top_level(schema: Value, provider: Provider, tool: &str, warnings: &mut Vec<String>) -> Value {
    let who = provider.name();
    let mut map = match schema {
        Value::Object(map) => map,
        _ => {
            warnings.push(format!(
                "{tool}: the input schema is not an object; {who} gets an empty object schema"
            ));
            Map::new()
        }
    };
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            warnings.push(format!(
                "{tool}: added \"type\": \"object\" to the input schema, which {who} requires"
            ));
            map.insert("type".into(), json!("object"));
        }
        Some(_) => {
            warnings.push(format!(
                "{tool}: replaced the input schema's \"type\" with \"object\", which {who} requires"
            ));
            map.insert("type".into(), json!("object"));
        }
    }
    for keyword in provider.refused_at_root() {
        if map.remove(*keyword).is_some() {
            warnings.push(format!(
                "{tool}: dropped \"{keyword}\" from the top of the input schema: {who} refuses it there \
                 (the server still validates the arguments)"
            ));
        }
    }
    if provider == Provider::OpenAi && !map.contains_key("properties") {
        warnings.push(format!("{tool}: added an empty \"properties\" to the input schema, as OpenAI asks"));
        map.insert("properties".into(), json!({}));
    }
    Value::Object(map)
}

/// What making a schema strict did.
pub(crate) struct Strict {
    pub(crate) schema: Value,
    pub(crate) notes: Vec<String>,
}

/// The schema rewritten for OpenAI's strict mode (Structured Outputs), or
/// why it cannot be: every object gets `additionalProperties: false`, every
/// property is required and an optional one becomes nullable (a `null` the
/// model then sends for it is removed before the call, see
/// [`strip_optional_nulls`]), `oneOf` becomes `anyOf`, keywords strict mode
/// does not support are dropped when that only loosens the schema.
pub(crate) fn openai_strict(schema: &Value) -> Result<Strict, String> {
    let mut walk = StrictWalk { notes: Vec::new(), properties: 0, enum_values: 0 };
    let schema = walk.node(schema, "", 0, false)?;
    if walk.properties > OPENAI_STRICT_MAX_PROPERTIES {
        return Err(format!("it has more than {OPENAI_STRICT_MAX_PROPERTIES} properties"));
    }
    if walk.enum_values > OPENAI_STRICT_MAX_ENUM_VALUES {
        return Err(format!("it has more than {OPENAI_STRICT_MAX_ENUM_VALUES} enum values"));
    }
    Ok(Strict { schema, notes: walk.notes })
}

struct StrictWalk {
    notes: Vec<String>,
    properties: usize,
    enum_values: usize,
}

impl StrictWalk {
    /// One schema node at `path`. `in_union`: under an `anyOf`, where an
    /// optional property's `null` could not be told apart again.
    fn node(&mut self, schema: &Value, path: &str, depth: usize, in_union: bool) -> Result<Value, String> {
        if depth > OPENAI_STRICT_MAX_DEPTH {
            return Err(format!("it nests deeper than {OPENAI_STRICT_MAX_DEPTH} levels"));
        }
        let Value::Object(source) = schema else {
            // `true` / `false` schemas.
            return Err(format!("{} is a boolean schema", at(path)));
        };
        if source.contains_key("anyOf") && source.contains_key("oneOf") {
            return Err(format!("{} uses both \"anyOf\" and \"oneOf\"", at(path)));
        }
        let mut map = Map::new();
        for (key, value) in source {
            let key = key.as_str();
            if OPENAI_STRICT_BLOCKING.contains(&key) {
                return Err(format!("{} uses \"{key}\"", at(path)));
            }
            if OPENAI_STRICT_DROPPED.contains(&key) {
                self.notes.push(format!("dropped \"{key}\" {} (strict mode does not support it)", at(path)));
                continue;
            }
            match key {
                "format" => match value.as_str() {
                    Some(f) if OPENAI_STRICT_FORMATS.contains(&f) => {
                        map.insert(key.into(), value.clone());
                    }
                    _ => self.notes.push(format!(
                        "dropped the \"format\" {} (strict mode does not support it)",
                        at(path)
                    )),
                },
                "enum" => {
                    self.enum_values += value.as_array().map_or(0, Vec::len);
                    map.insert(key.into(), value.clone());
                }
                "anyOf" | "oneOf" => {
                    let Some(branches) = value.as_array() else {
                        return Err(format!("{} has a \"{key}\" that is not an array", at(path)));
                    };
                    if key == "oneOf" {
                        self.notes.push(format!(
                            "rewrote \"oneOf\" {} as \"anyOf\" (strict mode has no oneOf)",
                            at(path)
                        ));
                    }
                    let mut out = Vec::with_capacity(branches.len());
                    for (i, branch) in branches.iter().enumerate() {
                        out.push(self.node(branch, &format!("{path}/{key}/{i}"), depth + 1, true)?);
                    }
                    map.insert("anyOf".into(), Value::Array(out));
                }
                "items" => {
                    map.insert(key.into(), self.node(value, &format!("{path}/items"), depth + 1, in_union)?);
                }
                "properties" | "required" | "additionalProperties" => {} // below
                _ => {
                    map.insert(key.into(), value.clone());
                }
            }
        }
        let is_object = source.get("type").is_some_and(|t| type_includes(t, "object"))
            || source.contains_key("properties");
        if is_object {
            self.object(source, &mut map, path, depth, in_union)?;
        }
        Ok(Value::Object(map))
    }

    fn object(
        &mut self,
        source: &Map<String, Value>,
        map: &mut Map<String, Value>,
        path: &str,
        depth: usize,
        in_union: bool,
    ) -> Result<(), String> {
        match source.get("additionalProperties") {
            None => self.notes.push(format!("added \"additionalProperties\": false {}", at(path))),
            Some(Value::Bool(false)) => {}
            Some(_) => return Err(format!("{} allows additional properties", at(path))),
        }
        map.insert("additionalProperties".into(), json!(false));
        let required: Vec<&str> = source
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = Map::new();
        let properties = source.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        self.properties += properties.len();
        let mut out = Map::new();
        for (name, property) in properties {
            let child = format!("{path}/properties/{name}");
            let mut converted = self.node(property, &child, depth + 1, in_union)?;
            if !required.contains(&name.as_str()) {
                if in_union {
                    return Err(format!("{} is optional inside \"anyOf\"", at(&child)));
                }
                if !allows_null(property) {
                    converted = nullable(converted);
                    self.notes.push(format!(
                        "made the optional {} required and nullable (a null is removed before the call)",
                        at(&child)
                    ));
                }
            }
            out.insert(name.clone(), converted);
        }
        map.insert("required".into(), Value::Array(properties.keys().map(|k| json!(k)).collect()));
        map.insert("properties".into(), Value::Object(out));
        Ok(())
    }
}

fn at(path: &str) -> String {
    if path.is_empty() {
        "at the top".to_string()
    } else {
        format!("at {path}")
    }
}

fn type_includes(t: &Value, name: &str) -> bool {
    match t {
        Value::String(s) => s == name,
        Value::Array(list) => list.iter().any(|v| v.as_str() == Some(name)),
        _ => false,
    }
}

/// Whether `schema` already lets a property be `null`.
fn allows_null(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| type_includes(t, "null"))
        || schema.get("anyOf").and_then(Value::as_array).is_some_and(|b| b.iter().any(allows_null))
        || schema.get("oneOf").and_then(Value::as_array).is_some_and(|b| b.iter().any(allows_null))
}

/// `schema`, also accepting `null`.
fn nullable(mut schema: Value) -> Value {
    let Some(map) = schema.as_object_mut() else { return schema };
    if let Some(list) = map.get_mut("enum").and_then(Value::as_array_mut) {
        if !list.contains(&Value::Null) {
            list.push(Value::Null);
        }
    }
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(list)) => list.push(json!("null")),
        _ => {
            if let Some(branches) = map.get_mut("anyOf").and_then(Value::as_array_mut) {
                branches.push(json!({"type": "null"}));
            } else {
                return json!({"anyOf": [schema, {"type": "null"}]});
            }
        }
    }
    schema
}

/// Removes, from arguments a model made against the strict form of
/// `schema`, every `null` given for a property that `schema` itself has as
/// optional and not nullable: the model had to send something, and "left
/// out" is what it meant. Returns how many were removed.
pub(crate) fn strip_optional_nulls(schema: &Value, arguments: &mut Value) -> usize {
    strip(schema, arguments, 0)
}

fn strip(schema: &Value, value: &mut Value, depth: usize) -> usize {
    if depth > OPENAI_STRICT_MAX_DEPTH + 1 {
        return 0;
    }
    match value {
        Value::Object(args) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return 0 };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut removed = 0;
            args.retain(|key, v| {
                let drop = v.is_null()
                    && !required.contains(&key.as_str())
                    && properties.get(key).is_some_and(|p| !allows_null(p));
                removed += usize::from(drop);
                !drop
            });
            for (key, v) in args.iter_mut() {
                if let Some(p) = properties.get(key) {
                    removed += strip(p, v, depth + 1);
                }
            }
            removed
        }
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) => items.iter_mut().map(|v| strip(item_schema, v, depth + 1)).sum(),
            None => 0,
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_keeps_the_meaning_and_adds_null() {
        assert_eq!(nullable(json!({"type": "string"})), json!({"type": ["string", "null"]}));
        assert_eq!(
            nullable(json!({"type": "string", "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(
            nullable(json!({"anyOf": [{"type": "string"}]})),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        assert_eq!(
            nullable(json!({"description": "x"})),
            json!({"anyOf": [{"description": "x"}, {"type": "null"}]})
        );
    }

    #[test]
    fn only_nulls_for_optional_non_nullable_properties_are_removed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "limit": {"type": "integer"},
                "cursor": {"type": ["string", "null"]},
                "nested": {"type": "object", "properties": {"deep": {"type": "string"}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}}},
            },
            "required": ["q"],
        });
        let mut args = json!({"q": null, "limit": null, "cursor": null, "nested": {"deep": null}, "list": [{"x": null}, {"x": 1}]});
        assert_eq!(strip_optional_nulls(&schema, &mut args), 3);
        assert_eq!(args, json!({"q": null, "cursor": null, "nested": {}, "list": [{}, {"x": 1}]}));
    }
}
