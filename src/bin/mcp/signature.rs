//! What `tools` and `prompts` print of each entry's parameters: one short
//! line, `(path: string, recursive?: boolean, mode?: "r"|"w")`, required
//! parameters first as the schema lists them, optional ones marked `?`.
//!
//! It reads the schema as a person would skim it, not as a validator: a
//! parameter's type is its `type` (a list of types joined with `|`), its
//! `enum` (up to three values), an array's item type with `[]`, or `any`.
//! The line is bounded (a server's schema may be huge) and made safe for a
//! terminal by the caller.

use serde_json::Value;

/// The longest signature line printed; longer ones end with `…`.
const MAX_SIGNATURE_CHARS: usize = 160;
/// The most enum values spelled out.
const MAX_ENUM_VALUES: usize = 3;

/// A tool's parameters from its input schema.
pub(crate) fn of_schema(schema: &Value) -> String {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = properties else {
        return "()".into();
    };
    let mut params: Vec<(bool, String)> = properties
        .iter()
        .map(|(name, schema)| {
            let needed = required.contains(&name.as_str());
            let mark = if needed { "" } else { "?" };
            (!needed, format!("{name}{mark}: {}", type_of(schema, 0)))
        })
        .collect();
    // Required first; within each, by name (a stable sort).
    params.sort_by_key(|(optional, _)| *optional);
    bounded(params.into_iter().map(|(_, p)| p))
}

/// A prompt's arguments (strings, so no types): `(name, style?)`.
/// `arguments` are each argument's name and whether it is required.
pub(crate) fn of_prompt<'a>(arguments: impl Iterator<Item = (&'a str, bool)>) -> String {
    let mut params: Vec<(bool, String)> = arguments
        .map(|(name, required)| (!required, format!("{name}{}", if required { "" } else { "?" })))
        .collect();
    params.sort_by_key(|(optional, _)| *optional);
    bounded(params.into_iter().map(|(_, p)| p))
}

fn bounded(params: impl Iterator<Item = String>) -> String {
    let line = format!("({})", params.collect::<Vec<_>>().join(", "));
    if line.chars().count() <= MAX_SIGNATURE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_SIGNATURE_CHARS - 2).collect();
    cut.push_str("…)");
    cut
}

fn type_of(schema: &Value, depth: usize) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let mut shown: Vec<String> = values.iter().take(MAX_ENUM_VALUES).map(|v| v.to_string()).collect();
        if values.len() > MAX_ENUM_VALUES {
            shown.push("…".into());
        }
        return shown.join("|");
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match types.as_slice() {
        ["array"] if depth < 2 => match schema.get("items") {
            Some(items) => format!("{}[]", type_of(items, depth + 1)),
            None => "array".into(),
        },
        [] => "any".into(),
        more => more.join("|"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_first_optional_marked_types_read_as_people_skim_them() {
        let schema = json!({
            "type": "object",
            "properties": {
                "mode": { "enum": ["r", "w", "a", "x"] },
                "path": { "type": "string" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "depth": { "type": ["integer", "null"] },
                "extra": {},
            },
            "required": ["path", "tags"],
        });
        assert_eq!(
            of_schema(&schema),
            r#"(path: string, tags: string[], depth?: integer|null, extra?: any, mode?: "r"|"w"|"a"|…)"#
        );
        assert_eq!(of_schema(&json!({ "type": "object" })), "()");
    }

    #[test]
    fn a_huge_schema_is_one_bounded_line() {
        let properties: serde_json::Map<String, Value> =
            (0..500).map(|i| (format!("p{i}"), json!({ "type": "string" }))).collect();
        let line = of_schema(&json!({ "properties": properties }));
        assert_eq!(line.chars().count(), MAX_SIGNATURE_CHARS);
        assert!(line.ends_with("…)"), "{line}");
    }
}
