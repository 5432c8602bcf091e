//! The canonical encoding that the crate's digests hash (the catalog's, a
//! schema's, a profile's): see [`crate::catalog::digest`] for the rules. It
//! sits below everything that digests, so that the compatibility profile
//! (below the transport) and the catalog share one encoder.

use serde_json::{Number, Value};
use sha2::Sha256;

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// The canonical text of a JSON number (see the module docs).
pub(crate) fn canonical_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        return "0".to_string();
    }
    // 2^127: every integral f64 below it converts to i128 exactly.
    if f.fract() == 0.0 && f.abs() < 1.7014118346046923e38 {
        return (f as i128).to_string();
    }
    // Rust prints the shortest round-tripping digits, never an exponent.
    format!("{f}")
}

/// Writes the canonical encoding of values into a hasher.
pub(crate) struct Encoder<'a> {
    pub(crate) h: &'a mut Sha256,
}

impl<'a> Encoder<'a> {
    pub(crate) fn new(h: &'a mut Sha256) -> Self {
        Encoder { h }
    }

    pub(crate) fn len(&mut self, n: usize) {
        self.h.update((n as u64).to_be_bytes());
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.h.update(b"s");
        self.len(s.len());
        self.h.update(s.as_bytes());
    }

    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.h.update(b"n"),
            Value::Bool(false) => self.h.update(b"f"),
            Value::Bool(true) => self.h.update(b"t"),
            Value::Number(n) => {
                self.h.update(b"d");
                self.str(&canonical_number(n));
            }
            Value::String(s) => self.str(s),
            Value::Array(items) => {
                self.h.update(b"a");
                self.len(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(map) => {
                self.h.update(b"o");
                self.len(map.len());
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                for k in keys {
                    self.str(k);
                    self.value(&map[k]);
                }
            }
        }
    }
}

// `update` comes from sha2's `Digest` trait.
use sha2::Digest as _;
