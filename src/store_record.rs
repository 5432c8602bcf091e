//! The envelope of every value this crate keeps in a store shared across
//! processes (Redis): a version tag first, so that a value written by a
//! newer release, or by anything else, is recognised as not ours before
//! any of it is parsed.
//!
//! A value is `mcs`, the format version ([`VERSION`]), one byte naming
//! what follows ([`Kind`]), then the payload. What is read back is bounded
//! before it is looked at; a value that is too large, of a newer version,
//! of another kind or not an envelope at all is [`Unreadable`], which the
//! stores treat as a miss with a warning ([`skipped`]) that names the
//! reason and never quotes the value.

// Built for its unit tests without `redis`, and without the token store
// (which needs `oauth`) some of it goes unused.
#![cfg_attr(not(all(feature = "redis", feature = "oauth")), allow(dead_code))]

use std::fmt;

/// The first bytes of every value.
const MAGIC: &[u8; 3] = b"mcs";
/// The format version this release writes and reads.
pub(crate) const VERSION: u8 = 1;
/// Magic, version and kind.
pub(crate) const HEADER_BYTES: usize = MAGIC.len() + 2;

/// What a value holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One origin's tokens, JSON.
    Tokens,
    /// One origin's tokens, JSON sealed with the store's key.
    SealedTokens,
    /// A pre-registered client's issuer binding, JSON.
    ClientIssuer,
    /// A pre-registered client's issuer binding, sealed.
    SealedClientIssuer,
    /// A task record, JSON.
    Task,
    /// A cached result: its expiry (8 bytes, milliseconds since the epoch,
    /// big-endian), then its JSON.
    Cached,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Tokens => b't',
            Kind::SealedTokens => b'T',
            Kind::ClientIssuer => b'i',
            Kind::SealedClientIssuer => b'I',
            Kind::Task => b'k',
            Kind::Cached => b'c',
        }
    }

    fn from_byte(byte: u8) -> Option<Kind> {
        [
            Kind::Tokens,
            Kind::SealedTokens,
            Kind::ClientIssuer,
            Kind::SealedClientIssuer,
            Kind::Task,
            Kind::Cached,
        ]
        .into_iter()
        .find(|k| k.byte() == byte)
    }
}

/// The header of a value of `kind` (what sealed payloads authenticate
/// along with their key).
pub(crate) fn header(kind: Kind) -> [u8; HEADER_BYTES] {
    [MAGIC[0], MAGIC[1], MAGIC[2], VERSION, kind.byte()]
}

/// `payload` in its envelope.
pub(crate) fn wrap(kind: Kind, payload: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(HEADER_BYTES + payload.len());
    value.extend_from_slice(&header(kind));
    value.extend_from_slice(payload);
    value
}

/// Why a value read back is not used. Never carries any of the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// Over the bound for its kind.
    TooLarge,
    /// Written by a newer release (its format version).
    Newer(u8),
    /// Not an envelope of this crate, or of a version never written.
    NotOurs,
    /// An envelope of another kind than the key holds.
    OtherKind,
    /// Its content is not what the key holds (bad JSON, another origin,
    /// another task, a value out of bounds).
    Invalid,
    /// Sealed, and this store has no key.
    Sealed,
    /// Not sealed, and this store only trusts sealed values.
    NotSealed,
    /// Sealed under another key, moved from another key, or tampered with.
    Unopened,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::TooLarge => f.write_str("larger than its bound"),
            Unreadable::Newer(v) => write!(f, "written by a newer release (format {v})"),
            Unreadable::NotOurs => f.write_str("not a value this crate writes"),
            Unreadable::OtherKind => f.write_str("a value of another kind"),
            Unreadable::Invalid => f.write_str("not valid for its key"),
            Unreadable::Sealed => f.write_str("encrypted, and this store has no key"),
            Unreadable::NotSealed => f.write_str("not encrypted, and this store encrypts"),
            Unreadable::Unopened => f.write_str("not decryptable with this store's key"),
        }
    }
}

/// The kind and payload of `value`, at most `max_payload` bytes of it.
pub(crate) fn open(value: &[u8], max_payload: usize) -> Result<(Kind, &[u8]), Unreadable> {
    if value.len() > HEADER_BYTES.saturating_add(max_payload) {
        return Err(Unreadable::TooLarge);
    }
    let Some((head, payload)) = value.split_first_chunk::<HEADER_BYTES>() else {
        return Err(Unreadable::NotOurs);
    };
    if head[..MAGIC.len()] != MAGIC[..] {
        return Err(Unreadable::NotOurs);
    }
    match head[3] {
        VERSION => {}
        v if v > VERSION => return Err(Unreadable::Newer(v)),
        _ => return Err(Unreadable::NotOurs),
    }
    Kind::from_byte(head[4]).map(|kind| (kind, payload)).ok_or(Unreadable::OtherKind)
}

/// The payload of `value` when it is of `kind`.
pub(crate) fn open_as(value: &[u8], kind: Kind, max_payload: usize) -> Result<&[u8], Unreadable> {
    match open(value, max_payload)? {
        (k, payload) if k == kind => Ok(payload),
        _ => Err(Unreadable::OtherKind),
    }
}

/// The bounded warning for a value a store did not use: which store, why;
/// never the value, its key or a secret.
pub(crate) fn skipped(store: &'static str, why: Unreadable) {
    tracing::warn!(target: "mcp_stack::store", store, reason = %why, "a stored value was not used (treated as missing)");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_round_trips_in_its_envelope() {
        let value = wrap(Kind::Task, b"{}");
        assert_eq!(&value[..5], b"mcs\x01k");
        assert_eq!(open(&value, 16), Ok((Kind::Task, &b"{}"[..])));
        assert_eq!(open_as(&value, Kind::Task, 16), Ok(&b"{}"[..]));
        assert_eq!(open_as(&value, Kind::Tokens, 16), Err(Unreadable::OtherKind));
        assert_eq!(open(&wrap(Kind::Cached, b""), 0), Ok((Kind::Cached, &b""[..])));
    }

    #[test]
    fn newer_foreign_oversized_and_garbage_values_are_unreadable() {
        let mut newer = wrap(Kind::Tokens, b"{}");
        newer[3] = VERSION + 1;
        assert_eq!(open(&newer, 16), Err(Unreadable::Newer(VERSION + 1)));
        let mut old = newer.clone();
        old[3] = 0;
        assert_eq!(open(&old, 16), Err(Unreadable::NotOurs));
        let mut unknown_kind = wrap(Kind::Tokens, b"{}");
        unknown_kind[4] = b'?';
        assert_eq!(open(&unknown_kind, 16), Err(Unreadable::OtherKind));
        for garbage in [&b""[..], b"mc", b"mcs\x01", b"{\"origin\":\"x\"}", b"\xff\xfe\x00garbage"] {
            assert_eq!(open(garbage, 16), Err(Unreadable::NotOurs), "{garbage:?}");
        }
        assert_eq!(open(&wrap(Kind::Task, &[b' '; 17]), 16), Err(Unreadable::TooLarge));
        assert_eq!(open(&vec![0; 1 << 20], 16), Err(Unreadable::TooLarge));
    }

    #[test]
    fn reasons_never_quote_the_value() {
        for why in [Unreadable::TooLarge, Unreadable::Newer(9), Unreadable::Unopened, Unreadable::Invalid] {
            assert!(!why.to_string().is_empty());
        }
    }
}
