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

/// The hex digest of a catalog's offering: its four families of entries, as
/// the server sent them, in the fixed order `tools`, `prompts`, `resources`,
/// `resourceTemplates`.
pub(crate) fn catalog_digest(families: [(&str, &[Value]); 4]) -> String {
    let mut h = Sha256::new();
    let mut e = Encoder::new(&mut h);
    e.str(CATALOG_DOMAIN);
    for (name, entries) in families {
        e.str(name);
        e.len(entries.len());
        let mut digests: Vec<[u8; 32]> = entries.iter().map(|v| value_digest("entry", v)).collect();
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

    #[test]
    fn catalog_digest_ignores_entry_order_not_entries() {
        let t1 = json!({"name": "a", "inputSchema": {"type": "object"}});
        let t2 = json!({"name": "b", "inputSchema": {"type": "object"}});
        let d = |tools: &[Value]| {
            catalog_digest([
                ("tools", tools),
                ("prompts", &[]),
                ("resources", &[]),
                ("resourceTemplates", &[]),
            ])
        };
        assert_eq!(d(&[t1.clone(), t2.clone()]), d(&[t2.clone(), t1.clone()]));
        assert_ne!(d(std::slice::from_ref(&t1)), d(&[t1.clone(), t1.clone()]));
        assert_ne!(d(std::slice::from_ref(&t1)), d(&[t2]));
        // The same entry in another family is another offering.
        let as_prompt = catalog_digest([
            ("tools", &[]),
            ("prompts", std::slice::from_ref(&t1)),
            ("resources", &[]),
            ("resourceTemplates", &[]),
        ]);
        assert_ne!(d(&[t1]), as_prompt);
    }
}
