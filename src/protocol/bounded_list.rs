//! Reading a list result within a bound on its entries *while it is
//! parsed*: the entries past the bound are skipped without being built,
//! and counted.
//!
//! Why: a frame within `Limits::max_frame_bytes` (4 MiB) holds some 100,000
//! small list entries, and building each as a [`Value`] before cutting the
//! list costs about thirty times the frame in memory. A list request
//! carries a [`ListBound`] in its extensions; the connection finds it by
//! the reply's id and parses that reply's `result` with it
//! ([`BoundedResult`]), so that at most `max` entries of the list under
//! `key` are ever built. How many were skipped is in
//! [`ListBound::dropped`], for the caller's warning.

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The visits of a value that is not what a list reply holds: `null`.
macro_rules! scalars_as_null {
    () => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}

/// A list request's bound on the entries of its reply (a request
/// extension; see the [module docs](self)). Clones share the count.
#[derive(Debug, Clone)]
pub(crate) struct ListBound {
    key: Arc<str>,
    max: usize,
    dropped: Arc<AtomicUsize>,
}

impl ListBound {
    /// At most `max` entries of the list under `key`.
    pub(crate) fn new(key: &str, max: usize) -> ListBound {
        ListBound { key: key.into(), max, dropped: Default::default() }
    }

    /// The most entries kept.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Records how many entries a reply had past the bound (for one read
    /// without the connection's parse, such as a page salvaged entry by
    /// entry).
    pub(crate) fn set_dropped(&self, dropped: usize) {
        self.dropped.store(dropped, Ordering::Relaxed);
    }

    /// How many entries the last reply read with this bound had past it.
    pub(crate) fn dropped(&self) -> usize {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Parses a result with a [`ListBound`]: an object whose list under the
/// bound's key keeps at most `max` entries. A result that is not an object,
/// or a list member that is not an array, reads as `null` (the caller
/// refuses it as malformed either way) without building anything.
pub(crate) struct BoundedResult<'a>(pub(crate) &'a ListBound);

impl<'de> DeserializeSeed<'de> for BoundedResult<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ResultVisitor(self.0))
    }
}

struct ResultVisitor<'a>(&'a ListBound);

impl<'de> Visitor<'de> for ResultVisitor<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list result")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut result = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if key == *self.0.key {
                map.next_value_seed(BoundedEntries(self.0))?
            } else {
                map.next_value::<Value>()?
            };
            result.insert(key, value);
        }
        Ok(Value::Object(result))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Null)
    }
    scalars_as_null!();
}

/// The list itself: its first `max` entries built, the rest skipped and
/// counted.
struct BoundedEntries<'a>(&'a ListBound);

impl<'de> DeserializeSeed<'de> for BoundedEntries<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedEntries<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut kept = Vec::with_capacity(self.0.max.min(seq.size_hint().unwrap_or(0)).min(1024));
        while kept.len() < self.0.max {
            match seq.next_element::<Value>()? {
                Some(entry) => kept.push(entry),
                None => {
                    self.0.dropped.store(0, Ordering::Relaxed);
                    return Ok(Value::Array(kept));
                }
            }
        }
        let mut dropped = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            dropped += 1;
        }
        self.0.dropped.store(dropped, Ordering::Relaxed);
        Ok(Value::Array(kept))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Value::Null)
    }
    scalars_as_null!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str, bound: &ListBound) -> Value {
        BoundedResult(bound).deserialize(&mut serde_json::Deserializer::from_str(text)).unwrap()
    }

    #[test]
    fn keeps_the_first_entries_and_counts_the_rest_without_building_them() {
        let bound = ListBound::new("tasks", 2);
        let text = r#"{"tasks":[{"a":1},{"b":2},{"c":3},[4],"five"],"nextCursor":"n"}"#;
        assert_eq!(read(text, &bound), json!({ "tasks": [{ "a": 1 }, { "b": 2 }], "nextCursor": "n" }));
        assert_eq!(bound.dropped(), 3);
        assert_eq!(read(r#"{"tasks":[1]}"#, &bound), json!({ "tasks": [1] }));
        assert_eq!(bound.dropped(), 0, "each reply counts afresh");
    }

    #[test]
    fn what_is_not_a_list_reads_as_null() {
        let bound = ListBound::new("tools", 2);
        assert_eq!(read(r#"{"tools":{"x":[1,2,3]}}"#, &bound), json!({ "tools": null }));
        assert_eq!(read(r#"{"tools":"many"}"#, &bound), json!({ "tools": null }));
        assert_eq!(read(r#"[1,2,3]"#, &bound), Value::Null);
        assert_eq!(read(r#"{}"#, &bound), json!({}));
    }
}
