//! Schemas: their bounds, and validating a result against an output schema.
//!
//! A schema is bounded twice before anything reads it: its compact JSON text
//! by `Limits::max_schema_bytes` and its nesting by `Limits::max_schema_depth`
//! ([`compact`], which makes the text the catalog keeps).
//!
//! An output schema is compiled with the `jsonschema` crate ([`compile`]):
//! JSON Schema 2020-12 unless the schema declares another draft in
//! `$schema` (draft 4, 6, 7, 2019-09). **No reference is ever fetched**: the
//! crate is built without its HTTP and file resolvers, and the compiler is
//! given [`NoFetch`], a retriever that refuses every URI, so a `$ref` to
//! anything outside the document makes the schema unusable rather than
//! making this process reach out to a place the server chose.

use serde_json::Value;
use std::io;
use std::sync::Arc;

use jsonschema::{Retrieve, Uri, Validator};

/// The longest validation message kept, in bytes.
pub(crate) const MAX_VALIDATION_MESSAGE_BYTES: usize = 512;

/// The nesting depth of a JSON value: 0 for a scalar, 1 for a flat array or
/// object, and so on. [`compact`] measures it on the text it makes;
/// this separate walk is the fuzz target's and the tests' oracle.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The length of `value`'s compact JSON text, counted without building it.
pub(crate) fn encoded_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

/// `schema` as the catalog keeps it (compact text), once its text is within
/// `max_bytes` and its nesting within `max_depth`; else why not (the byte
/// bound first, when both are passed). One serialization, then a scan of
/// the text for its depth.
pub(crate) fn compact(schema: &Value, max_bytes: usize, max_depth: usize) -> Result<super::Schema, String> {
    let text = super::Schema::from_value(schema);
    let bytes = text.as_str().len();
    if bytes > max_bytes {
        return Err(format!("is {bytes} bytes, over the limit of {max_bytes}"));
    }
    let deepest = crate::protocol::jsonrpc::deepest_nesting(text.as_str().as_bytes(), usize::MAX);
    if deepest > max_depth {
        return Err(format!("nests {deepest} deep, over the limit of {max_depth}"));
    }
    Ok(text)
}

/// Counts what is written to it.
struct Count(usize);

impl io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A retriever that refuses every URI: schemas are validated with what they
/// contain, never with what they point to.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoFetch;

impl Retrieve for NoFetch {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("refusing to fetch {}: schemas are never fetched", uri.as_str()).into())
    }
}

/// Compiles an output schema (2020-12 unless `$schema` says otherwise),
/// refusing every external reference. The error is bounded text.
pub(crate) fn compile(schema: &Value) -> Result<Arc<Validator>, String> {
    compile_with(schema, NoFetch)
}

pub(crate) fn compile_with(
    schema: &Value,
    retriever: impl Retrieve + 'static,
) -> Result<Arc<Validator>, String> {
    jsonschema::options()
        .with_retriever(retriever)
        .build(schema)
        .map(Arc::new)
        .map_err(|e| crate::error::normalize_message(&e.to_string(), MAX_VALIDATION_MESSAGE_BYTES))
}

/// Checks that an output schema is usable: an object schema (`"type":
/// "object"`, as MCP requires of `structuredContent`) that compiles.
pub(crate) fn check_output_schema(schema: &Value) -> Result<Arc<Validator>, String> {
    if !schema.is_object() {
        return Err("is not a JSON object".into());
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("does not declare \"type\": \"object\"".into());
    }
    compile(schema).map_err(|e| format!("does not compile: {e}"))
}

/// Validates `instance`; the error names the first failing location.
pub(crate) fn validate(validator: &Validator, instance: &Value) -> Result<(), String> {
    match validator.iter_errors(instance).next() {
        None => Ok(()),
        Some(e) => {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            Err(crate::error::normalize_message(&format!("at {at}: {e}"), MAX_VALIDATION_MESSAGE_BYTES))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn depth_and_size() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!({})), 1);
        assert_eq!(depth(&json!({"a": {"b": [1]}})), 3);
        assert_eq!(encoded_len(&json!({"a": 1})), r#"{"a":1}"#.len());
        let mut deep = json!({"type": "object"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert!(compact(&deep, 1 << 20, 32).unwrap_err().contains("deep"));
        assert!(compact(&json!({"a": "x".repeat(100)}), 50, 32).unwrap_err().contains("bytes"));
        assert!(compact(&json!({"type": "object"}), 50, 32).is_ok());
    }

    /// The text's check measures what `encoded_len` and `depth` measure,
    /// exactly at each bound.
    #[test]
    fn compact_agrees_with_the_two_measures_at_each_bound() {
        let samples = [
            json!(null),
            json!("a \"quoted\" line\n"),
            json!([]),
            json!({}),
            json!([[], {}, [[]]]),
            json!({"a": [1, 2.5, {"b": {}}], "c": {"d": [[["deep"]]]}, "e": -0.0}),
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string"}}}}),
            json!({"pattern": "^[{\\[]+\\\"}$", "k{[": ["]}", {"\\": "\""}]}),
        ];
        for v in &samples {
            let (bytes, d) = (encoded_len(v), depth(v));
            assert_eq!(bytes, serde_json::to_string(v).unwrap().len());
            assert_eq!(compact(v, bytes, d).map(|t| t.to_value()), Ok(v.clone()), "{v}");
            let over = compact(v, bytes - 1, d).unwrap_err();
            assert_eq!(over, format!("is {bytes} bytes, over the limit of {}", bytes - 1));
            if d > 0 {
                let deep = compact(v, bytes, d - 1).unwrap_err();
                assert_eq!(deep, format!("nests {d} deep, over the limit of {}", d - 1));
            }
        }
    }

    #[test]
    fn default_draft_is_2020_12_and_a_declared_draft_is_honoured() {
        // `prefixItems` exists in 2020-12 only.
        let schema = json!({"type": "object", "properties": {"p": {"prefixItems": [{"type": "string"}]}}});
        let v = compile(&schema).unwrap();
        assert!(validate(&v, &json!({"p": ["x"]})).is_ok());
        assert!(validate(&v, &json!({"p": [1]})).is_err());
        // Under draft 7, `prefixItems` is an unknown keyword: no constraint.
        let mut draft7 = schema.clone();
        draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
        let v = compile(&draft7).unwrap();
        assert!(validate(&v, &json!({"p": [1]})).is_ok());
        // Draft 4's boolean exclusiveMaximum.
        let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
            "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": true}}});
        let v = compile(&draft4).unwrap();
        assert!(validate(&v, &json!({"n": 5})).is_err());
        assert!(validate(&v, &json!({"n": 4})).is_ok());
    }

    #[test]
    fn validation_errors_name_the_location() {
        let v = check_output_schema(
            &json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}),
        )
        .unwrap();
        assert!(validate(&v, &json!({"sum": 1})).is_ok());
        let e = validate(&v, &json!({"sum": "x"})).unwrap_err();
        assert!(e.starts_with("at /sum:"), "{e}");
        assert!(validate(&v, &json!({})).unwrap_err().starts_with("at /:"));
    }

    #[test]
    fn output_schemas_must_be_object_schemas() {
        assert!(check_output_schema(&json!(true)).is_err());
        assert!(check_output_schema(&json!({"type": "string"})).is_err());
        assert!(check_output_schema(&json!({"type": "object", "minProperties": "x"})).is_err());
    }

    /// A `$ref` to a network URL is never fetched: the retriever refuses it,
    /// and nothing connects to the address it names.
    #[test]
    fn a_network_ref_is_never_fetched() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/schema.json", listener.local_addr().unwrap());
        let schema = json!({"type": "object", "properties": {"x": {"$ref": url}}});

        let err = check_output_schema(&schema).unwrap_err();
        assert!(err.contains("does not compile"), "{err}");

        struct Counting(Arc<AtomicUsize>);
        impl Retrieve for Counting {
            fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
                self.0.fetch_add(1, Ordering::SeqCst);
                NoFetch.retrieve(uri)
            }
        }
        let asked = Arc::new(AtomicUsize::new(0));
        assert!(compile_with(&schema, Counting(asked.clone())).is_err());
        assert!(asked.load(Ordering::SeqCst) >= 1, "the retriever is what refuses");
        match listener.accept() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            other => panic!("something connected to the $ref's address: {other:?}"),
        }
        // A local reference still works.
        let local = json!({"type": "object", "$defs": {"n": {"type": "number"}},
            "properties": {"x": {"$ref": "#/$defs/n"}}});
        let v = check_output_schema(&local).unwrap();
        assert!(validate(&v, &json!({"x": "no"})).is_err());
    }
}
