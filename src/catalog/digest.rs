//! Canonical digests: of a catalog's offering, of one schema, of a profile. Documented in the [digests section of the parent module](crate::catalog#digests).

use serde_json::Value;
use sha2::{Digest, Sha256};

pub(crate) use crate::canonical::hex;
pub(crate) use crate::canonical::Encoder;

/// The domain tag of a catalog digest.
pub(crate) const CATALOG_DOMAIN: &str = "mcp-stack/catalog/v1";
/// The domain tag of a schema digest.
pub(crate) const SCHEMA_DOMAIN: &str = "mcp-stack/schema/v1";

/// SHA-256 of `domain` followed by the canonical encoding of `value`.
fn value_digest(domain: &str, value: &Value) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut e = Encoder::new(&mut h);
    e.str(domain);
    e.value(value);
    drop(e);
    h.finalize().into()
}

/// The hex digest of one schema document.
pub(crate) fn schema_digest(schema: &Value) -> String {
    hex(&value_digest(SCHEMA_DOMAIN, schema))
}

/// The schema digests of one tool entry, made from the entry's own
/// canonical encoding ([`entry_digest`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SchemaDigests {
    /// Of its `inputSchema`, when that is an object.
    pub(crate) input: Option<String>,
    /// Of its `outputSchema`, when it has one that is not null.
    pub(crate) output: Option<String>,
}

/// The digest of one entry of an offering (SHA-256 of `"entry"` and its
/// canonical encoding), encoded into `scratch`. For a tool entry (`tool`),
/// its schemas' digests too, hashed from their bytes within that one
/// encoding: a schema's encoding inside its entry is the encoding of the
/// schema alone, so encoding it a second time for its own digest (a tenth
/// of the build of a large catalog) would make the same bytes again.
pub(crate) fn entry_digest(entry: &Value, tool: bool, scratch: &mut Vec<u8>) -> ([u8; 32], SchemaDigests) {
    let mut e = Encoder::keeping(std::mem::take(scratch));
    e.str("entry");
    let (mut input, mut output) = (None, None);
    match entry {
        Value::Object(map) if tool => e.object(map, |e, key, value| {
            let start = e.bytes().len();
            e.value(value);
            let range = start..e.bytes().len();
            match (key, value) {
                ("inputSchema", Value::Object(_)) => input = Some(range),
                ("outputSchema", v) if !v.is_null() => output = Some(range),
                _ => {}
            }
        }),
        other => e.value(other),
    }
    *scratch = e.into_bytes();
    let schema = |range: std::ops::Range<usize>| {
        let mut h = Sha256::new();
        let mut e = Encoder::new(&mut h);
        e.str(SCHEMA_DOMAIN);
        e.put(&scratch[range]);
        drop(e);
        hex(&h.finalize())
    };
    let schemas = SchemaDigests { input: input.map(schema), output: output.map(schema) };
    (Sha256::digest(&scratch[..]).into(), schemas)
}

/// The hex digest of a catalog's offering from the digests of its entries
/// ([`entry_digest`]): its four families, as the server sent them, in the
/// fixed order `tools`, `prompts`, `resources`, `resourceTemplates`.
pub(crate) fn catalog_digest(families: [(&str, Vec<[u8; 32]>); 4]) -> String {
    let mut h = Sha256::new();
    let mut e = Encoder::new(&mut h);
    e.str(CATALOG_DOMAIN);
    for (name, mut digests) in families {
        e.str(name);
        e.len(digests.len());
        digests.sort_unstable();
        for d in digests {
            e.put(&d);
        }
    }
    drop(e);
    hex(&h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::canonical_number;
    use serde_json::json;

    fn n(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        canonical_number(v.as_number().unwrap())
    }

    #[test]
    fn numbers_are_normalized() {
        assert_eq!(n("1"), "1");
        assert_eq!(n("1.0"), "1");
        assert_eq!(n("1e0"), "1");
        assert_eq!(n("10E2"), "1000");
        assert_eq!(n("-0"), "0");
        assert_eq!(n("-0.0"), "0");
        assert_eq!(n("-3"), "-3");
        assert_eq!(n("0.1"), "0.1");
        assert_eq!(n("1.50"), "1.5");
        assert_eq!(n("18446744073709551615"), "18446744073709551615");
        assert_eq!(n("1e19"), "10000000000000000000");
        assert_eq!(n("2.5e-3"), "0.0025");
    }

    #[test]
    fn schema_digests_ignore_key_order_and_number_spelling() {
        let a = json!({"type": "object", "properties": {"n": {"type": "number", "maximum": 10}}});
        let b: Value = serde_json::from_str(
            r#"{"properties": {"n": {"maximum": 10.0, "type": "number"}}, "type": "object"}"#,
        )
        .unwrap();
        assert_eq!(schema_digest(&a), schema_digest(&b));
        let c = json!({"type": "object", "properties": {"n": {"type": "number", "maximum": 11}}});
        assert_ne!(schema_digest(&a), schema_digest(&c));
        // Array order is meaningful.
        assert_ne!(schema_digest(&json!(["a", "b"])), schema_digest(&json!(["b", "a"])));
        // Length prefixes: no two splits of the same bytes collide.
        assert_ne!(schema_digest(&json!(["ab", "c"])), schema_digest(&json!(["a", "bc"])));
        assert_ne!(schema_digest(&json!({"a": "bc"})), schema_digest(&json!({"ab": "c"})));
        // A string is not a number.
        assert_ne!(schema_digest(&json!("1")), schema_digest(&json!(1)));
    }

    #[test]
    fn schema_vectors() {
        assert_eq!(
            schema_digest(&json!({"type": "object"})),
            "3069fb348968c58f861b7543e754459a1dc3919e77b23965323f6fffefb6dd8e",
        );
        assert_eq!(
            schema_digest(
                &json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]})
            ),
            "c087ff5c241e9cac16f00b8aa8ebdc5c1c282f75cae329f1a80a66a6e23e2042",
        );
    }

    /// The catalog digest of `tools` and `prompts`, the way an offering
    /// makes it.
    fn offering_digest(tools: &[Value], prompts: &[Value]) -> String {
        let mut scratch = Vec::new();
        let mut digests = |family: &[Value], tool: bool| -> Vec<[u8; 32]> {
            family.iter().map(|v| entry_digest(v, tool, &mut scratch).0).collect()
        };
        let (tools, prompts) = (digests(tools, true), digests(prompts, false));
        catalog_digest([
            ("tools", tools),
            ("prompts", prompts),
            ("resources", vec![]),
            ("resourceTemplates", vec![]),
        ])
    }

    #[test]
    fn catalog_digest_ignores_entry_order_not_entries() {
        let t1 = json!({"name": "a", "inputSchema": {"type": "object"}});
        let t2 = json!({"name": "b", "inputSchema": {"type": "object"}});
        let d = |tools: &[Value]| offering_digest(tools, &[]);
        assert_eq!(d(&[t1.clone(), t2.clone()]), d(&[t2.clone(), t1.clone()]));
        assert_ne!(d(std::slice::from_ref(&t1)), d(&[t1.clone(), t1.clone()]));
        assert_ne!(d(std::slice::from_ref(&t1)), d(&[t2]));
        // The same entry in another family is another offering.
        assert_ne!(d(std::slice::from_ref(&t1)), offering_digest(&[], &[t1]));
    }

    #[test]
    fn an_entry_digest_is_the_canonical_hash_of_the_entry() {
        let mut scratch = Vec::new();
        let entry = json!({"name": "a", "inputSchema": {"type": "object"}, "x": [1.0, "y", null, true]});
        let mut h = Sha256::new();
        let mut e = Encoder::new(&mut h);
        e.str("entry");
        e.value(&entry);
        drop(e);
        let expected: [u8; 32] = h.finalize().into();
        assert_eq!(entry_digest(&entry, true, &mut scratch).0, expected);
        assert_eq!(entry_digest(&entry, false, &mut scratch).0, expected);
        // The scratch buffer carries nothing from one entry to the next.
        let other = json!({"name": "b"});
        let fresh = entry_digest(&other, false, &mut Vec::new()).0;
        assert_eq!(entry_digest(&other, false, &mut scratch).0, fresh);
    }

    #[test]
    fn a_tool_entry_gives_the_digests_of_its_schemas_as_schema_digest_does() {
        let input = json!({"type": "object", "properties": {"n": {"type": "number", "maximum": 1e3}}});
        let output = json!({"type": "object", "required": ["sum"]});
        let tool = json!({"name": "t", "inputSchema": input, "outputSchema": output, "z": 1});
        let (_, schemas) = entry_digest(&tool, true, &mut Vec::new());
        assert_eq!(schemas.input, Some(schema_digest(&input)));
        assert_eq!(schemas.output, Some(schema_digest(&output)));
        // Not a tool: no schema digests.
        assert_eq!(entry_digest(&tool, false, &mut Vec::new()).1, SchemaDigests::default());
        // An input schema that is not an object, a null output schema: none.
        let loose = json!({"name": "t", "inputSchema": null, "outputSchema": null});
        assert_eq!(entry_digest(&loose, true, &mut Vec::new()).1, SchemaDigests::default());
        let no_schemas = json!({"name": "t"});
        assert_eq!(entry_digest(&no_schemas, true, &mut Vec::new()).1, SchemaDigests::default());
        // An output schema that is not an object is still digested: the
        // build decides what is usable.
        let odd = json!({"name": "t", "inputSchema": {}, "outputSchema": "x"});
        let (_, schemas) = entry_digest(&odd, true, &mut Vec::new());
        assert_eq!(schemas.input, Some(schema_digest(&json!({}))));
        assert_eq!(schemas.output, Some(schema_digest(&json!("x"))));
    }
}
