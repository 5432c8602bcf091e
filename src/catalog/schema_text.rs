//! [`Schema`]: a JSON document a catalog keeps as compact text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

/// A tool's input or output JSON Schema, kept as the compact JSON text of
/// what the server sent (after the catalog's checks).
///
/// A catalog keeps its schemas as text rather than as [`Value`]s because a
/// `Value` tree costs about ten times its text in memory (every object a
/// map of its own): a gateway holding 50,000 tools kept 234 MiB for
/// 18.7 MiB of `tools/list` JSON, 60 MiB with schemas as text
/// (`benches/host_scale`). Serializing a `Schema` writes the text as it is
/// (a model's tool list is built without re-encoding every schema);
/// [`Schema::to_value`] parses it when a host needs the tree.
///
/// Two schemas are equal when their texts are: a schema made by
/// [`Schema::from_value`] (as the catalog makes them) is serde_json's
/// compact encoding of the value, so equal values give equal texts.
#[derive(Clone)]
pub struct Schema(Box<RawValue>);

impl Schema {
    /// `value`'s compact JSON text.
    pub fn from_value(value: &Value) -> Schema {
        // Serializing a `Value` cannot fail: its map keys are strings.
        Schema(serde_json::value::to_raw_value(value).expect("a Value serializes"))
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The schema as a [`Value`], parsed from its text (each call parses
    /// anew: keep the value when it is needed more than once).
    pub fn to_value(&self) -> Value {
        // The text is JSON by construction; the recursion limit is off
        // because the value it came from existed, however deep.
        let mut de = serde_json::Deserializer::from_str(self.as_str());
        de.disable_recursion_limit();
        Value::deserialize(&mut de).expect("a schema's text is JSON")
    }

    /// The member `key` of an object schema, parsed (`None` for another key
    /// or a schema that is not an object).
    pub fn get(&self, key: &str) -> Option<Value> {
        // Owned keys: a borrowed `&str` cannot hold a key written with an
        // escape, and one such key would fail the whole object.
        let mut members: std::collections::HashMap<String, &RawValue> =
            serde_json::from_str(self.as_str()).ok()?;
        members.remove(key).and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// Whether the text contains what `needle` finds (a cheap test before
    /// parsing, for a keyword most schemas lack). A finder prepared once,
    /// since this runs on every tool call.
    pub(crate) fn mentions(&self, needle: &memchr::memmem::Finder<'_>) -> bool {
        needle.find(self.as_str().as_bytes()).is_some()
    }
}

impl From<Value> for Schema {
    fn from(value: Value) -> Schema {
        Schema::from_value(&value)
    }
}

impl From<&Schema> for Value {
    fn from(schema: &Schema) -> Value {
        schema.to_value()
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Schema {}

impl PartialEq<Value> for Schema {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Schema {
    /// Any JSON value, kept in compact form (whatever spacing it came with).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Schema, D::Error> {
        Value::deserialize(deserializer).map(|v| Schema::from_value(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_keeps_compact_text_and_gives_its_value_back() {
        let value = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let schema = Schema::from_value(&value);
        assert_eq!(
            schema.as_str(),
            r#"{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}"#
        );
        assert_eq!(schema.to_value(), value);
        assert_eq!(schema, value);
        assert_eq!(schema.get("required"), Some(json!(["q"])));
        assert_eq!(schema.get("missing"), None);
        assert_eq!(Schema::from_value(&json!([1])).get("type"), None);
        // Serialized as it is, inside another document.
        assert_eq!(
            serde_json::to_string(&json!({"s": schema})).unwrap(),
            format!(r#"{{"s":{}}}"#, schema.as_str())
        );
        let spaced: Schema = serde_json::from_str(r#"{ "type" : "object" }"#).unwrap();
        assert_eq!(spaced.as_str(), r#"{"type":"object"}"#);
        let finder = |needle| memchr::memmem::Finder::new(needle);
        assert!(spaced.mentions(&finder("object")) && !spaced.mentions(&finder("x-mcp-header")));
    }

    #[test]
    fn a_key_written_with_an_escape_does_not_hide_its_siblings() {
        // serde_json writes a newline or a quote in a key as an escape.
        let schema = Schema::from_value(&json!({"line\nbreak": 1, "say \"hi\"": 2, "properties": {"q": {}}}));
        assert!(schema.as_str().contains(r#""line\nbreak""#));
        assert_eq!(schema.get("properties"), Some(json!({"q": {}})));
        assert_eq!(schema.get("line\nbreak"), Some(json!(1)));
        assert_eq!(schema.get("say \"hi\""), Some(json!(2)));
    }

    #[test]
    fn a_value_deeper_than_the_parsers_limit_comes_back_whole() {
        let mut value = json!(1);
        for _ in 0..200 {
            value = json!([value]);
        }
        assert_eq!(Schema::from_value(&value).to_value(), value);
    }
}
