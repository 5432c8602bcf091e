//! The one redaction point: every secret this process holds or has sent is
//! known here, and every text quoted from a server is scrubbed of them
//! before it reaches an [`Error`](crate::Error), an event or a log line.
//!
//! Why one process-wide registry rather than a list per binding: a server
//! can reflect what the client sent it (a framework's debug page, a
//! gateway's "upstream refused Authorization: Bearer …", an authorization
//! server that answers `{"error": "<the client secret>"}`), and the text it
//! sends passes many hands before anyone shows it. Threading a per-binding
//! list through every one of them would be a fix per call site; here the
//! secrets register themselves when they are made and every quote goes
//! through `scrub`, which `normalize_message`
//! (the function that bounds every quoted text) calls first. A secret of one
//! binding is a secret for every other, so one list for the process loses
//! nothing.
//!
//! - **What registers.** Every [`auth::Secret`] (access and refresh tokens,
//!   client secrets, authorization codes, PKCE verifiers, `state`, client
//!   assertions, DPoP proofs, workload and ID tokens) for as long as a copy
//!   of it lives; every static header value of an HTTP definition (and,
//!   for `Authorization`, the credential after its scheme); every header
//!   value built from secrets (`Basic` credentials) when it is sent. A host
//!   registers its own with [`register`] or `remember`.
//! - **How long.** A held value is known while a [`Registration`] for it
//!   lives; once the last one is dropped, it is kept among the
//!   128 most recently dropped values, so that the answer to
//!   the request that carried it (which may arrive after the request's own
//!   copy is gone) is still scrubbed. Memory is bounded by what the process
//!   holds plus that ring.
//! - **Which forms.** The value as it is, its `application/x-www-form-urlencoded`
//!   form (how it leaves in a form body) and its JSON string form, each where
//!   it differs. A text whose end is the start of a secret (a quote cut by a
//!   read bound in the middle of a reflected token) loses that end too.
//! - **What is too short.** Values under 6 bytes are not
//!   searched: they cannot be told from ordinary words (a header `X-Debug:
//!   true` would garble every message), and a credential that short has no
//!   strength to protect.
//!
//! ```
//! use mcp_stack::{redact, Error, FailureClass};
//!
//! let key = redact::register("sk-live-0123456789");
//! let e = Error::new(FailureClass::RemoteError, "upstream refused key sk-live-0123456789");
//! assert_eq!(e.message(), "upstream refused key [redacted]");
//! drop(key); // still known: among the recently dropped values
//! let e = Error::new(FailureClass::RemoteError, "sk-live-0123456789");
//! assert_eq!(e.message(), "[redacted]");
//! ```
//!
//! [`auth::Secret`]: https://docs.rs/mcp-stack/latest/mcp_stack/auth/struct.Secret.html

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a scrubbed secret is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";

/// The shortest value searched for, in bytes.
pub(crate) const MIN_SECRET_BYTES: usize = 6;

/// How many dropped values stay known.
pub(crate) const RECENT_SECRETS: usize = 128;

/// The shortest start of a secret that is cut off a text's end: shorter
/// ones are too likely to end ordinary text by chance.
const MIN_CUT_PREFIX_BYTES: usize = 8;

/// Keys are ordered longest first, so that a secret that contains another
/// (a `Basic` value and the secret inside it) is replaced whole.
type Key = (std::cmp::Reverse<usize>, Arc<str>);

struct Registry {
    /// Every known form, with how many live registrations hold it and the
    /// ring position that retains it once none do.
    known: BTreeMap<Key, Entry>,
    /// The forms of recently dropped values, oldest first, with the
    /// sequence number their entry carries while this ring retains them.
    recent: VecDeque<(Key, u64)>,
    sequence: u64,
}

#[derive(Default)]
struct Entry {
    live: usize,
    retained: Option<u64>,
}

/// How many forms are known: read without the lock, so that scrubbing a
/// text costs one atomic load in a process that holds no secret.
static KNOWN: AtomicUsize = AtomicUsize::new(0);

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: Mutex<Registry> =
        Mutex::new(Registry { known: BTreeMap::new(), recent: VecDeque::new(), sequence: 0 });
    // A panic while holding the lock leaves a consistent map (every change
    // is a single insert or remove), so poisoning is ignored.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps a secret known to `scrub` while it lives (and for a while after:
/// see the [module docs](self)). Clones share one registration.
#[derive(Clone)]
pub struct Registration {
    _forms: Arc<Forms>,
}

struct Forms(Vec<Key>);

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Registration([redacted])")
    }
}

/// Registers `value` for as long as the returned [`Registration`] (or a
/// clone of it) lives. A value under 6 bytes registers nothing.
pub fn register(value: &str) -> Registration {
    let forms = forms_of(value);
    if !forms.is_empty() {
        let mut registry = registry();
        for key in &forms {
            registry.known.entry(key.clone()).or_default().live += 1;
        }
        KNOWN.store(registry.known.len(), Ordering::Release);
    }
    Registration { _forms: Arc::new(Forms(forms)) }
}

#[cfg_attr(not(feature = "oauth"), allow(dead_code))] // only the OAuth flow sends one-off secrets
/// Makes `value` known as a value that was just sent and is not held: it
/// stays among the [`RECENT_SECRETS`] most recently dropped values.
pub(crate) fn remember(value: &str) {
    drop(register(value));
}

impl Drop for Forms {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let mut registry = registry();
        for key in self.0.drain(..) {
            registry.sequence += 1;
            let sequence = registry.sequence;
            let Some(entry) = registry.known.get_mut(&key) else { continue };
            entry.live -= 1;
            if entry.live == 0 {
                entry.retained = Some(sequence);
                registry.recent.push_back((key, sequence));
            }
        }
        while registry.recent.len() > RECENT_SECRETS {
            let Some((key, sequence)) = registry.recent.pop_front() else { break };
            // Forget the value unless it was registered again or dropped
            // again later (then a newer ring entry retains it).
            let forget =
                registry.known.get(&key).is_some_and(|e| e.live == 0 && e.retained == Some(sequence));
            if forget {
                registry.known.remove(&key);
            }
        }
        KNOWN.store(registry.known.len(), Ordering::Release);
    }
}

fn forms_of(value: &str) -> Vec<Key> {
    if value.len() < MIN_SECRET_BYTES {
        return Vec::new();
    }
    let mut forms: Vec<String> = vec![value.to_owned()];
    let form_encoded: String = url_encode(value);
    let json = serde_json::to_string(value).unwrap_or_default();
    let json = json.get(1..json.len().saturating_sub(1)).unwrap_or_default().to_owned();
    for form in [form_encoded, json] {
        if form.len() >= MIN_SECRET_BYTES && !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms.into_iter().map(|f| (std::cmp::Reverse(f.len()), Arc::from(f))).collect()
}

/// `application/x-www-form-urlencoded` (the WHATWG set: alphanumerics and
/// `*-._` stay, a space becomes `+`).
fn url_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `text` with every known secret replaced by `[redacted]`, and a secret's
/// start at its very end cut off too. The crate scrubs every text it quotes
/// itself; a host that shows text the crate does not quote (the JSON-RPC
/// traffic of a transport it wrapped, say) scrubs it here, the same way.
pub fn scrub(text: &str) -> Cow<'_, str> {
    if KNOWN.load(Ordering::Acquire) == 0 || text.is_empty() {
        return Cow::Borrowed(text);
    }
    let registry = registry();
    let mut out = Cow::Borrowed(text);
    for (_, secret) in registry.known.keys() {
        if out.contains(&**secret) {
            out = Cow::Owned(out.replace(&**secret, REDACTED));
        }
    }
    for (_, secret) in registry.known.keys() {
        let cut = cut_prefix_len(&out, secret);
        if cut > 0 {
            let keep = out.len() - cut;
            let mut owned = out.into_owned();
            owned.truncate(keep);
            owned.push_str(REDACTED);
            out = Cow::Owned(owned);
        }
    }
    out
}

/// The length of the longest start of `secret` (at least
/// [`MIN_CUT_PREFIX_BYTES`], shorter than the whole) that ends `text`.
fn cut_prefix_len(text: &str, secret: &str) -> usize {
    let longest = (secret.len() - 1).min(text.len());
    (MIN_CUT_PREFIX_BYTES..=longest)
        .rev()
        .find(|&n| secret.is_char_boundary(n) && text.ends_with(&secret[..n]))
        .unwrap_or(0)
}

/// Scrubs every string inside `value` (keys and values), in place.
pub(crate) fn scrub_value(value: &mut serde_json::Value) {
    if KNOWN.load(Ordering::Acquire) == 0 {
        return;
    }
    match value {
        serde_json::Value::String(s) => {
            if let Cow::Owned(clean) = scrub(s) {
                *s = clean;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(scrub_value),
        serde_json::Value::Object(map) => {
            let dirty: Vec<String> =
                map.keys().filter(|k| matches!(scrub(k), Cow::Owned(_))).cloned().collect();
            for key in dirty {
                if let Some(v) = map.remove(&key) {
                    map.insert(scrub(&key).into_owned(), v);
                }
            }
            map.values_mut().for_each(scrub_value);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that fill the ring of dropped values run one at a time.
    static RING: Mutex<()> = Mutex::new(());

    #[test]
    fn a_held_secret_is_scrubbed_in_every_form_it_leaves_in() {
        let held = register("s3cr3t/with+odd chars");
        assert_eq!(scrub("a s3cr3t/with+odd chars b"), "a [redacted] b");
        assert_eq!(scrub("form: s3cr3t%2Fwith%2Bodd+chars"), "form: [redacted]");
        let json = register(r#"quote"in-it"#);
        assert_eq!(scrub(r#"{"error":"quote\"in-it"}"#), r#"{"error":"[redacted]"}"#);
        drop((held, json));
    }

    #[test]
    fn a_secret_cut_at_the_end_of_a_quote_loses_its_start_too() {
        let _held = register("eyJhbGciOiJFUzI1NiJ9.tail-of-the-token");
        assert_eq!(scrub("refused Bearer eyJhbGciOiJF"), "refused Bearer [redacted]");
        // Too short a start is left alone: it ends ordinary text by chance.
        assert_eq!(scrub("the word eyJh"), "the word eyJh");
    }

    #[test]
    fn short_values_are_not_searched() {
        let _short = register("true");
        assert_eq!(scrub("it is true"), "it is true");
    }

    #[test]
    fn a_secret_inside_another_is_replaced_by_the_longer_one_whole() {
        let _inner = register("inner-secret-1");
        let _outer = register("Basic aW5uZXItc2VjcmV0LTE6inner-secret-1");
        assert_eq!(scrub("got Basic aW5uZXItc2VjcmV0LTE6inner-secret-1!"), "got [redacted]!");
    }

    #[test]
    fn dropped_secrets_stay_known_for_a_bounded_while() {
        let _ring = RING.lock().unwrap_or_else(|e| e.into_inner());
        remember("just-sent-proof-0001");
        assert_eq!(scrub("echo just-sent-proof-0001"), "echo [redacted]");
        for i in 0..(RECENT_SECRETS + 8) {
            remember(&format!("filler-value-{i:06}"));
        }
        assert_eq!(scrub("echo just-sent-proof-0001"), "echo just-sent-proof-0001");
    }

    #[test]
    fn a_value_held_twice_lives_until_both_are_gone_and_clones_share() {
        let _ring = RING.lock().unwrap_or_else(|e| e.into_inner());
        let a = register("twice-held-value");
        let b = register("twice-held-value");
        let c = a.clone();
        drop(a);
        drop(b);
        // `c` still holds it; and then it moves to the ring.
        for i in 0..(RECENT_SECRETS + 8) {
            remember(&format!("other-filler-{i:06}"));
        }
        assert_eq!(scrub("twice-held-value"), "[redacted]");
        drop(c);
        assert_eq!(scrub("twice-held-value"), "[redacted]");
    }

    #[test]
    fn values_are_scrubbed_inside_json() {
        let _held = register("json-held-secret");
        let mut v = serde_json::json!({"a": ["x json-held-secret"], "json-held-secret": 1});
        scrub_value(&mut v);
        assert_eq!(v, serde_json::json!({"a": ["x [redacted]"], "[redacted]": 1}));
    }
}
