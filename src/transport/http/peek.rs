//! [`Peek`]: the few fields of a JSON-RPC message the HTTP transports route
//! by (id, method, the request a cancellation names), read without parsing
//! the message.
//!
//! Apart from the transports because all three route by it, and apart from
//! the protocol types because it builds no values, so a message of any
//! depth can be peeked at.

use serde::Deserialize;

use crate::protocol::RequestId;
use crate::transport::DAMAGED_PREFIX_BYTES;

/// The fields of a JSON-RPC message the transports route by.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Peek {
    #[serde(default)]
    pub(crate) id: Option<RequestId>,
    #[serde(default)]
    pub(crate) method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
    #[serde(default)]
    jsonrpc: Option<serde_json::Value>,
    /// Whether a `result` member is there (its value is skipped, not built).
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekParams {
    #[serde(default, rename = "requestId")]
    request_id: Option<RequestId>,
}

impl Peek {
    pub(crate) fn of(text: &str) -> Peek {
        Self::parse(text).unwrap_or_default()
    }

    /// The routing fields of `text`, or `None` when it is not a JSON object
    /// they can be read from. Reading them builds no values, so a message of
    /// any depth can be peeked at.
    ///
    /// The members are found by [`top_level`], which skips the other
    /// members' values (a result) without validating them: serde_json's
    /// skip checks every byte of a string, and a reply was read twice over
    /// (here, then by the connection's parse), which was a third of a
    /// 1 MiB result's call. Only the members routed by are parsed, by
    /// serde_json. A text the scan cannot read (a key with an escape, or
    /// not an object) is peeked at by serde_json as before; one that is
    /// not valid JSON in a value skipped is then refused by the
    /// connection's parse, which ends the call it answers at once.
    pub(crate) fn parse(text: &str) -> Option<Peek> {
        match top_level(text) {
            Some(members) => Self::from_members(&members),
            None => serde_json::from_str(text).ok(),
        }
    }

    /// The routing fields from the top-level members, read as serde_json's
    /// derive reads them (a repeated member is refused, as it refuses it),
    /// but for `params`, read only for a cancellation (a request's
    /// arguments are not scanned twice; serde_json's derive would refuse a
    /// message whose `params.requestId` is not an id, this reads it).
    fn from_members(members: &[(&str, &str)]) -> Option<Peek> {
        let mut peek = Peek::default();
        let mut seen = [false; 6];
        for &(key, raw) in members {
            let slot = match key {
                "id" => 0,
                "method" => 1,
                "params" => 2,
                "jsonrpc" => 3,
                "result" => 4,
                "error" => 5,
                _ => continue,
            };
            if std::mem::replace(&mut seen[slot], true) {
                return None;
            }
            match slot {
                0 => peek.id = serde_json::from_str(raw).ok()?,
                1 => peek.method = serde_json::from_str(raw).ok()?,
                // Read below, for a cancellation only.
                2 => {}
                3 => peek.jsonrpc = serde_json::from_str(raw).ok()?,
                4 => peek.result = (raw != "null").then_some(serde::de::IgnoredAny),
                _ => peek.error = (raw != "null").then_some(serde::de::IgnoredAny),
            }
        }
        if peek.method.as_deref() == Some(crate::protocol::methods::NOTIFICATIONS_CANCELLED) {
            if let Some((_, raw)) = members.iter().find(|(k, _)| *k == "params") {
                peek.params = serde_json::from_str(raw).ok()?;
            }
        }
        Some(peek)
    }

    /// The id of a request (a message with a method and an id).
    pub(crate) fn request_id(&self) -> Option<&RequestId> {
        self.method.as_ref().and(self.id.as_ref())
    }

    /// For `notifications/cancelled`, the request it cancels.
    pub(crate) fn cancels(&self) -> Option<&RequestId> {
        if self.method.as_deref() != Some(crate::protocol::methods::NOTIFICATIONS_CANCELLED) {
            return None;
        }
        self.params.as_ref().and_then(|p| p.request_id.as_ref())
    }

    /// Whether this is a JSON-RPC 2.0 success response (a non-null
    /// `result`, no `error`): one the connection takes as the end of its
    /// request whatever the result holds.
    pub(crate) fn is_result(&self) -> bool {
        self.method.is_none()
            && self.result.is_some()
            && self.error.is_none()
            && self.jsonrpc.as_ref().and_then(serde_json::Value::as_str) == Some("2.0")
    }

    /// Whether this is the response to `id`.
    pub(crate) fn answers(&self, id: &RequestId) -> bool {
        self.method.is_none() && self.id.as_ref() == Some(id)
    }

    /// The request this answers, when it is a response to another than
    /// `id`.
    pub(crate) fn answers_other(&self, id: &RequestId) -> Option<&RequestId> {
        self.id.as_ref().filter(|answered| self.method.is_none() && *answered != id)
    }
}

/// The members of a JSON object text, each key (without its quotes) with
/// the raw text of its value, found by skipping strings with `memchr`
/// rather than parsing them; `None` when the text is not an object this
/// scan reads (a key with an escape, a structure that does not close).
/// Bounded: every step moves forward through the text.
fn top_level(text: &str) -> Option<Vec<(&str, &str)>> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(bytes, at + 1);
    let mut members = Vec::with_capacity(4);
    if bytes.get(at) == Some(&b'}') {
        return (skip_space(bytes, at + 1) == bytes.len()).then_some(members);
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, at)?;
        let key = &text[at + 1..key_end - 1];
        if key.contains('\\') {
            return None;
        }
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, at + 1);
        let end = value_end(bytes, start)?;
        members.push((key, text[start..end].trim_end()));
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return (skip_space(bytes, at + 1) == bytes.len()).then_some(members),
            _ => return None,
        }
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The index past the closing quote of the string opening at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        if bytes[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// The index past the value starting at `at`: a string, an array or object
/// (brackets counted outside strings), or a scalar (up to the next `,`,
/// `}` or `]`).
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let rest = bytes.get(at..)?;
            let len = rest.iter().position(|b| matches!(b, b',' | b'}' | b']')).unwrap_or(rest.len());
            (len > 0).then_some(at + len)
        }
    }
}

/// A stand-in frame start naming `id`, for a damaged reply whose own start
/// does not (the engine reads the id from a damaged frame's prefix).
pub(crate) fn id_prefix(id: &RequestId) -> String {
    let id = serde_json::to_string(id).unwrap_or_default();
    let mut prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},");
    crate::error::truncate_utf8(&mut prefix, DAMAGED_PREFIX_BYTES);
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// What serde_json's derive reads, for comparison.
    fn by_serde(text: &str) -> Option<Peek> {
        serde_json::from_str(text).ok()
    }

    fn same(a: &Option<Peek>, b: &Option<Peek>) -> bool {
        match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.id == b.id
                    && a.method == b.method
                    && a.cancels() == b.cancels()
                    && a.is_result() == b.is_result()
                    && a.error.is_some() == b.error.is_some()
            }
            _ => false,
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            // Quotes, escapes and brackets inside strings.
            "[a-z\\\\\"{}\\[\\],:\\u{e9} ]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z\\\"{]{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The scan reads what serde_json reads from every message whose
        /// keys it can read, whatever the values hold.
        #[test]
        fn the_scan_agrees_with_serde(
            members in prop::collection::vec(
                (prop_oneof![
                    Just("id".to_string()), Just("method".to_string()), Just("params".to_string()),
                    Just("jsonrpc".to_string()), Just("result".to_string()), Just("error".to_string()),
                    "[a-z]{1,6}",
                ], json_value()),
                0..6,
            ),
            method in prop_oneof![Just(None), Just(Some("notifications/cancelled")), Just(Some("tools/call"))],
            spaced in any::<bool>(),
        ) {
            let mut text = String::from("{");
            for (i, (k, v)) in members.iter().enumerate() {
                // `params` is an object whose `requestId`, if any, is an
                // id (what serde_json's derive reads of any message).
                let id = match v {
                    Value::String(_) | Value::Number(_) | Value::Null => Some(v.clone()),
                    _ => None,
                };
                let v = match (k.as_str(), method) {
                    ("method", Some(m)) => json!(m),
                    ("params", _) => json!({"requestId": id, "arguments": v.clone()}),
                    _ => v.clone(),
                };
                if i > 0 {
                    text.push(',');
                }
                let sep = if spaced { " : " } else { ":" };
                text.push_str(&format!("{}{sep}{}", serde_json::to_string(k).unwrap(), v));
                if spaced {
                    text.push(' ');
                }
            }
            text.push('}');
            prop_assert!(same(&Peek::parse(&text), &by_serde(&text)), "{text}");
        }
    }

    #[test]
    fn the_scan_reads_replies_and_leaves_what_it_cannot_to_serde() {
        let reply = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a \"}\" ]"}]}}"#;
        let p = Peek::parse(reply).expect("read");
        assert!(p.is_result() && p.answers(&RequestId::Number(7)));
        assert!(top_level(reply).is_some());
        // A key with an escape: read by serde_json.
        let escaped = r#"{"\u0069d":3,"jsonrpc":"2.0","result":{}}"#;
        assert!(top_level(escaped).is_none());
        assert!(Peek::parse(escaped).expect("read").answers(&RequestId::Number(3)));
        // Not closed, or more after it: nothing. (An array is read by
        // serde_json, field by field, as before.)
        for bad in ["{\"id\":1", "{\"id\":\"open}", "", "{} x"] {
            assert!(Peek::parse(bad).is_none(), "{bad}");
        }
        // A null result is no result; a repeated key is refused, as serde does.
        assert!(!Peek::parse(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap().is_result());
        assert!(Peek::parse(r#"{"id":1,"id":2}"#).is_none());
    }

    #[test]
    fn peek_routes_messages() {
        let p = Peek::of(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#);
        assert_eq!(p.request_id(), Some(&RequestId::Number(3)));
        let p = Peek::of(r#"{"result":{},"jsonrpc":"2.0","id":3}"#);
        assert!(p.answers(&RequestId::Number(3)));
        assert!(!p.answers(&RequestId::Number(4)));
        let p =
            Peek::of(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}"#);
        assert_eq!(p.cancels(), Some(&RequestId::String("r".into())));
        assert!(p.request_id().is_none());
        let p = Peek::of("not json");
        assert!(p.id.is_none() && p.method.is_none());
        assert!(id_prefix(&RequestId::String("a".into())).contains(r#""id":"a""#));
    }
}
