//! The canonical encoding that the crate's digests hash (the catalog's, a
//! schema's, a profile's): see [`crate::catalog::digest`] for the rules. It
//! sits below everything that digests, so that the compatibility profile
//! (below the transport) and the catalog share one encoder.

use serde_json::{Map, Number, Value};
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
///
/// The encoding comes in pieces of a few bytes (a tag, a length, a key), so
/// it is gathered in a buffer and handed to the hasher a few KiB at a time,
/// and whatever is left when the encoder is dropped: one `update` per
/// piece made hashing a 1,024-tool catalog several times slower
/// (bench/vs-rmcp, callgrind). Drop the encoder before finalizing.
pub(crate) struct Encoder<'a> {
    /// Where the bytes go; `None` for an encoder that keeps them
    /// ([`Encoder::keeping`]).
    h: Option<&'a mut Sha256>,
    buf: Vec<u8>,
}

/// How much the encoder gathers before hashing it.
const CHUNK: usize = 8 << 10;
/// What the encoder's buffer starts at.
const START: usize = 1 << 10;

impl<'a> Encoder<'a> {
    pub(crate) fn new(h: &'a mut Sha256) -> Self {
        // Most values digested are small (one tool's schema, a session's
        // names): the buffer starts small and grows to `CHUNK` only for
        // large ones.
        Encoder { h: Some(h), buf: Vec::with_capacity(START) }
    }

    /// An encoder that keeps every byte in `buf` (cleared first) instead
    /// of hashing it, for an encoding that is hashed more than once in
    /// parts (a tool entry and its schemas). Take the bytes back with
    /// [`Encoder::into_bytes`].
    pub(crate) fn keeping(mut buf: Vec<u8>) -> Encoder<'static> {
        buf.clear();
        Encoder { h: None, buf }
    }

    /// What a keeping encoder has encoded so far.
    pub(crate) fn bytes(&self) -> &[u8] {
        debug_assert!(self.h.is_none(), "a hashing encoder keeps only its last chunk");
        &self.buf
    }

    /// The bytes of a keeping encoder.
    pub(crate) fn into_bytes(mut self) -> Vec<u8> {
        debug_assert!(self.h.is_none(), "a hashing encoder keeps only its last chunk");
        std::mem::take(&mut self.buf)
    }

    /// Bytes as they are (a digest already made, a domain's raw prefix,
    /// an encoding made before).
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        if let Some(h) = self.h.as_deref_mut() {
            if self.buf.len() + bytes.len() > CHUNK {
                h.update(&self.buf);
                self.buf.clear();
                if bytes.len() > CHUNK {
                    h.update(bytes);
                    return;
                }
            }
        }
        self.buf.extend_from_slice(bytes);
    }

    pub(crate) fn len(&mut self, n: usize) {
        self.put(&(n as u64).to_be_bytes());
    }

    pub(crate) fn str(&mut self, s: &str) {
        self.put(b"s");
        self.len(s.len());
        self.put(s.as_bytes());
    }

    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.put(b"n"),
            Value::Bool(false) => self.put(b"f"),
            Value::Bool(true) => self.put(b"t"),
            Value::Number(n) => {
                self.put(b"d");
                self.str(&canonical_number(n));
            }
            Value::String(s) => self.str(s),
            Value::Array(items) => {
                self.put(b"a");
                self.len(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(map) => self.object(map, |e, _, v| e.value(v)),
        }
    }

    /// Encodes an object whose members' values `member` encodes (given
    /// the encoder, the key and the value), in the canonical order of the
    /// keys.
    pub(crate) fn object(
        &mut self,
        map: &Map<String, Value>,
        mut member: impl FnMut(&mut Self, &str, &Value),
    ) {
        self.put(b"o");
        self.len(map.len());
        // serde_json's map is sorted by key unless a crate in the build
        // turns on its `preserve_order`: sort only then.
        if map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes()) {
            for (k, v) in map {
                self.str(k);
                member(self, k, v);
            }
        } else {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            for k in keys {
                self.str(k);
                member(self, k, &map[k]);
            }
        }
    }
}

impl Drop for Encoder<'_> {
    fn drop(&mut self) {
        if let Some(h) = self.h.as_deref_mut() {
            h.update(&self.buf);
        }
    }
}

// `update` comes from sha2's `Digest` trait.
use sha2::Digest as _;
