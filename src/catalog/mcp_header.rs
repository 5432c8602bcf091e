//! `x-mcp-header`: tool parameters a 2026-07-28 server wants mirrored into
//! `Mcp-Param-<Name>` HTTP headers.
//!
//! [`header_params`] reads a tool's input schema and checks every
//! annotation as the specification asks: the name is a non-empty HTTP token
//! (RFC 9110 `tchar`s), case-insensitively unique in the schema; the
//! parameter is a `string`, `integer` or `boolean` (not `number`); and it is
//! reachable from the root through `properties` keys alone (not through
//! `items`, `oneOf`/`anyOf`/`allOf`/`not`, `if`/`then`/`else`, `$ref` or
//! `$defs`). One violation makes the whole tool's annotations invalid:
//! over HTTP the catalog then drops that tool, with a warning, and keeps
//! the others.
//!
//! [`param_headers`] reads the values of a call's arguments at each
//! annotated path: absent or `null` means no header; strings are sent
//! encoded ([`encode_header_value`]), integers in decimal (within
//! ±(2^53−1)), booleans as `true` / `false`. The binding puts the result in
//! the request's extensions as [`ParamHeaders`].
//!
//! [`encode_header_value`]: crate::era::modern::encode_header_value

use serde::Serialize;
use serde_json::Value;

use crate::era::modern::{encode_header_value, ParamHeaders};

/// The annotation's key in a property's schema.
pub(crate) const X_MCP_HEADER: &str = "x-mcp-header";
/// The largest integer (in magnitude) a header may carry: 2^53 − 1.
pub(crate) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The JSON type of an annotated parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum HeaderKind {
    /// `"string"`.
    String,
    /// `"integer"`.
    Integer,
    /// `"boolean"`.
    Boolean,
}

/// One annotated parameter: its header name and where its value is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HeaderParam {
    /// The `<Name>` of `Mcp-Param-<Name>`, as the server wrote it.
    pub name: String,
    /// The chain of `properties` keys from the root to the parameter.
    pub path: Vec<String>,
    /// Its type.
    pub kind: HeaderKind,
}

/// The annotated parameters of `schema`, or why its annotations are
/// invalid.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut found = Vec::new();
    visit(schema, Some(Vec::new()), &mut found, 0)?;
    let mut seen = std::collections::HashSet::new();
    for param in &found {
        if !seen.insert(param.name.to_ascii_lowercase()) {
            return Err(format!(
                "the x-mcp-header {:?} appears twice (names are case-insensitive)",
                param.name
            ));
        }
    }
    Ok(found)
}

/// Walks a schema node. `path` is `Some` while the node is reachable from
/// the root through `properties` alone.
fn visit(
    node: &Value,
    path: Option<Vec<String>>,
    found: &mut Vec<HeaderParam>,
    depth: usize,
) -> Result<(), String> {
    // The catalog bounds schema depth before this runs; this is a backstop.
    if depth > 128 {
        return Err("the schema is too deep to check its x-mcp-header annotations".into());
    }
    match node {
        Value::Object(map) => {
            if let Some(annotation) = map.get(X_MCP_HEADER) {
                let at = path.as_ref().filter(|p| !p.is_empty()).ok_or_else(|| {
                    "an x-mcp-header annotation is not reachable through properties alone".to_string()
                })?;
                let name = annotation.as_str().ok_or("an x-mcp-header value is not a string")?;
                check_name(name)?;
                let kind = match map.get("type").and_then(Value::as_str) {
                    Some("string") => HeaderKind::String,
                    Some("integer") => HeaderKind::Integer,
                    Some("boolean") => HeaderKind::Boolean,
                    other => {
                        return Err(format!(
                            "the x-mcp-header {name:?} is on a parameter of type {}, not string, integer or boolean",
                            other.unwrap_or("(none)")
                        ))
                    }
                };
                found.push(HeaderParam { name: name.to_string(), path: at.clone(), kind });
            }
            for (key, child) in map {
                if key == "properties" {
                    if let Value::Object(properties) = child {
                        for (property, schema) in properties {
                            let next = path.as_ref().map(|p| {
                                let mut p = p.clone();
                                p.push(property.clone());
                                p
                            });
                            visit(schema, next, found, depth + 1)?;
                        }
                        continue;
                    }
                }
                if key == X_MCP_HEADER {
                    continue;
                }
                visit(child, None, found, depth + 1)?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for item in items {
                visit(item, None, found, depth + 1)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// An RFC 9110 token: `1*tchar`.
fn check_name(name: &str) -> Result<(), String> {
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() {
        return Err("an x-mcp-header value is empty".into());
    }
    if !name.bytes().all(tchar) {
        return Err(format!(
            "the x-mcp-header {:?} is not an HTTP token",
            crate::error::normalize_message(name, 64)
        ));
    }
    Ok(())
}

/// The `Mcp-Param-*` headers for a call with `arguments`.
pub(crate) fn param_headers(params: &[HeaderParam], arguments: &Value) -> ParamHeaders {
    let mut headers = Vec::new();
    for param in params {
        let mut value = Some(arguments);
        for key in &param.path {
            value = value.and_then(|v| v.get(key));
        }
        let text = match (param.kind, value) {
            (_, None | Some(Value::Null)) => continue,
            (HeaderKind::String, Some(Value::String(s))) => encode_header_value(s),
            (HeaderKind::Integer, Some(Value::Number(n))) => match n.as_i64() {
                Some(i) if i.abs() <= MAX_SAFE_INTEGER => i.to_string(),
                // Out of range or not an integer: no header; the server
                // refuses the call (a header mismatch), which says why.
                _ => continue,
            },
            (HeaderKind::Boolean, Some(Value::Bool(b))) => b.to_string(),
            // A value of the wrong type is sent as its JSON text, encoded,
            // so the server can refuse it rather than miss it.
            (_, Some(other)) => encode_header_value(&other.to_string()),
        };
        headers.push((param.name.clone(), text));
    }
    ParamHeaders(headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reachable_primitive_annotations_are_read() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "n": { "type": "integer", "x-mcp-header": "N" },
                "deep": { "type": "object", "properties": { "flag": { "type": "boolean", "x-mcp-header": "Flag" } } },
                "plain": { "type": "number" }
            }
        });
        let params = header_params(&schema).unwrap();
        assert_eq!(params.len(), 3);
        let headers =
            param_headers(&params, &json!({ "region": "Hello, 世界", "n": 42, "deep": { "flag": false } }));
        let mut got = headers.0;
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Flag".to_string(), "false".to_string()),
                ("N".to_string(), "42".to_string()),
                ("Region".to_string(), "=?base64?SGVsbG8sIOS4lueVjA==?=".to_string()),
            ]
        );
        let none = param_headers(&params, &json!({ "region": null }));
        assert!(none.0.is_empty(), "null and absent values send no header");
        let too_big = param_headers(&params, &json!({ "n": MAX_SAFE_INTEGER + 1 }));
        assert!(too_big.0.is_empty());
    }

    #[test]
    fn every_invalid_annotation_is_refused() {
        let prop = |p: Value| json!({ "type": "object", "properties": { "p": p } });
        for (schema, why) in [
            (prop(json!({ "type": "string", "x-mcp-header": "" })), "empty"),
            (prop(json!({ "type": "object", "x-mcp-header": "Data" })), "object"),
            (prop(json!({ "type": "array", "x-mcp-header": "Items" })), "array"),
            (prop(json!({ "type": "null", "x-mcp-header": "Nil" })), "null"),
            (prop(json!({ "type": "number", "x-mcp-header": "Score" })), "number"),
            (prop(json!({ "type": "string", "x-mcp-header": "My Region" })), "space"),
            (prop(json!({ "type": "string", "x-mcp-header": "Region:Primary" })), "colon"),
            (prop(json!({ "type": "string", "x-mcp-header": "Région" })), "non-ascii"),
            (prop(json!({ "type": "string", "x-mcp-header": "Region\t1" })), "control"),
            (
                json!({ "type": "object", "properties": {
                    "a": { "type": "string", "x-mcp-header": "MyField" },
                    "b": { "type": "string", "x-mcp-header": "myfield" } } }),
                "duplicate",
            ),
            (
                json!({ "type": "object", "properties": { "a": { "type": "array",
                    "items": { "type": "string", "x-mcp-header": "A" } } } }),
                "items",
            ),
            (
                json!({ "type": "object", "anyOf": [ { "properties": { "a": { "type": "string", "x-mcp-header": "A" } } } ] }),
                "anyOf",
            ),
            (
                json!({ "type": "object", "$defs": { "a": { "type": "string", "x-mcp-header": "A" } } }),
                "$defs",
            ),
        ] {
            assert!(header_params(&schema).is_err(), "{why} must be refused");
        }
    }
}
