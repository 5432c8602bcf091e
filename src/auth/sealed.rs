//! Tokens encrypted at rest in a shared store: AES-256-GCM (ring, the
//! crypto library rustls already builds) under a 32-byte key the host
//! supplies, a fresh random nonce per value, and the value's header and
//! its key name in the store as associated data, so that a value copied
//! under another key, or relabelled, does not open.
//!
//! A sealed payload is the 12-byte nonce, then the ciphertext with its
//! 16-byte tag.

use std::fmt;

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

use crate::store_record::Unreadable;

/// A host-supplied AES-256-GCM key. Its `Debug` shows nothing of it.
pub(crate) struct SealingKey(LessSafeKey);

impl fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealingKey([redacted])")
    }
}

impl SealingKey {
    /// The key from its 32 bytes.
    pub(crate) fn new(key: &[u8; 32]) -> SealingKey {
        let key = UnboundKey::new(&AES_256_GCM, key).expect("a 32-byte AES-256-GCM key");
        SealingKey(LessSafeKey::new(key))
    }

    /// `plaintext` sealed, bound to `associated` (the value's header and
    /// key name). Fails only when the system's random source does.
    pub(crate) fn seal(&self, associated: &[u8], plaintext: &[u8]) -> Option<Vec<u8>> {
        // A random 96-bit nonce per value (ring's `LessSafeKey` leaves the
        // nonce to the caller): the ~2^32 values one key may seal before a
        // repeat becomes likely are far beyond a token store's.
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).ok()?;
        let mut out = Vec::with_capacity(NONCE_LEN + plaintext.len() + AES_256_GCM.tag_len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plaintext);
        let tag = self
            .0
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(associated),
                &mut out[NONCE_LEN..],
            )
            .ok()?;
        out.extend_from_slice(tag.as_ref());
        Some(out)
    }

    /// The plaintext of `sealed` when it was sealed with this key and
    /// `associated`; [`Unreadable::Unopened`] otherwise (another key,
    /// another key name, tampered with, truncated).
    pub(crate) fn open(&self, associated: &[u8], sealed: &[u8]) -> Result<Vec<u8>, Unreadable> {
        let (nonce, ciphertext) = sealed.split_first_chunk::<NONCE_LEN>().ok_or(Unreadable::Unopened)?;
        let mut in_out = ciphertext.to_vec();
        let nonce = Nonce::assume_unique_for_key(*nonce);
        let plain = self
            .0
            .open_in_place(nonce, Aad::from(associated), &mut in_out)
            .map_err(|_| Unreadable::Unopened)?
            .len();
        in_out.truncate(plain);
        Ok(in_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_with_its_key_and_name_only() {
        let key = SealingKey::new(&[7; 32]);
        let sealed = key.seal(b"name-a", b"access-SECRET").unwrap();
        assert!(!sealed.windows(6).any(|w| w == b"SECRET"), "the plaintext is not in the value");
        assert_eq!(sealed.len(), NONCE_LEN + b"access-SECRET".len() + 16);
        assert_eq!(key.open(b"name-a", &sealed).unwrap(), b"access-SECRET");
        // A random nonce per value: the same plaintext seals differently.
        assert_ne!(key.seal(b"name-a", b"access-SECRET").unwrap(), sealed);
        // Under another name, another key, tampered, truncated: not opened.
        assert_eq!(key.open(b"name-b", &sealed), Err(Unreadable::Unopened));
        assert_eq!(SealingKey::new(&[8; 32]).open(b"name-a", &sealed), Err(Unreadable::Unopened));
        let mut tampered = sealed.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert_eq!(key.open(b"name-a", &tampered), Err(Unreadable::Unopened));
        assert_eq!(key.open(b"name-a", &sealed[..20]), Err(Unreadable::Unopened));
        assert_eq!(key.open(b"name-a", b""), Err(Unreadable::Unopened));
        assert_eq!(format!("{key:?}"), "SealingKey([redacted])");
    }
}
