//! An app's HTML resource (`ui://`, MIME type `text/html;profile=mcp-app`)
//! and what its server says about it in `_meta.ui`: the origins its
//! Content Security Policy should allow, the sandbox permissions it asks
//! for, a dedicated origin and a border preference.
//!
//! All of it is data for the host. The client never renders the HTML,
//! never fetches what it references and never applies the policy: a host
//! that renders apps builds its sandbox from [`AppResourceMeta`]. What the
//! server sent is read within bounds, and a defect costs only that piece:
//! a domain list that is not a list of strings is read as empty (the most
//! restrictive policy), a bad domain entry is dropped, an unknown
//! permission value asks for nothing, each with a warning. The
//! fingerprint is defined at [`AppResource`].

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::canonical::{hex, Encoder};
use crate::error::normalize_message;

/// The domain tag of an app fingerprint.
const APP_DOMAIN: &str = "mcp-stack/app/v1";
/// The most entries one CSP list keeps.
pub(crate) const MAX_CSP_ENTRIES: usize = 64;
/// The longest CSP entry or dedicated domain kept, in bytes.
pub(crate) const MAX_DOMAIN_BYTES: usize = 256;

/// The origins an app's Content Security Policy should allow, per
/// directive. An empty list allows nothing beyond the specification's
/// default for that directive (no connections, no nested frames, same
/// origin only for `base-uri`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppCsp {
    /// `connect-src`: origins for fetch, XHR and WebSocket.
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    pub resource_domains: Vec<String>,
    /// `frame-src`: origins for nested frames.
    pub frame_domains: Vec<String>,
    /// `base-uri`: the base URIs the document may set.
    pub base_uri_domains: Vec<String>,
}

/// The sandbox permissions an app asks for. Asked, never granted by the
/// client: the host decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppPermissions {
    /// The camera.
    pub camera: bool,
    /// The microphone.
    pub microphone: bool,
    /// The device's location.
    pub geolocation: bool,
    /// Writing to the clipboard.
    pub clipboard_write: bool,
}

/// What a server says of an app resource in its `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppResourceMeta {
    /// The Content Security Policy it asks for.
    pub csp: AppCsp,
    /// The sandbox permissions it asks for.
    pub permissions: AppPermissions,
    /// A dedicated origin for its sandbox (its format is the host's).
    pub domain: Option<String>,
    /// Whether it wants a visible border (`None`: the host's default).
    pub prefers_border: Option<bool>,
}

/// An app's HTML, read and checked, with what its server says about it.
///
/// Read by [`Binding::read_app`](crate::Binding::read_app): the one
/// content item for its URI, of MIME type `text/html;profile=mcp-app`, as
/// text or as a UTF-8 blob, within the result limits.
///
/// # The fingerprint
///
/// [`AppResource::fingerprint`] is the lowercase hex SHA-256 over the
/// crate's canonical encoding (see `crate::catalog::digest`) of, in order:
/// the domain tag `mcp-stack/app/v1`; the URI; the HTML; each CSP list
/// (`connectDomains`, `resourceDomains`, `frameDomains`,
/// `baseUriDomains`) as its length and its sorted, de-duplicated entries;
/// the four permissions (`camera`, `microphone`, `geolocation`,
/// `clipboardWrite`) as 0 or 1; `domain` as 0, or 1 and the string;
/// `prefersBorder` as 0 (absent), 1 (false) or 2 (true). Two reads that
/// would make a host build the same sandbox around the same HTML have the
/// same fingerprint, whatever the order of the lists or of the JSON keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppResource {
    /// Its `ui://` URI.
    pub uri: String,
    /// The HTML, as data: never rendered, run or followed by the client.
    pub html: String,
    /// Its `_meta.ui`: the content item's when it has one, else the
    /// `resources/list` entry's, else the defaults.
    pub meta: AppResourceMeta,
    /// The hex fingerprint (see [`AppResource`]).
    pub fingerprint: String,
    /// The catalog generation in force when it was read.
    pub generation: u64,
    /// How it differs from the last read of the same URI on this binding
    /// (or, on its first read, the one kept in the definition's app
    /// fingerprint store), if it does.
    pub drift: Option<AppDrift>,
    /// Defects tolerated while reading it.
    pub warnings: Vec<String>,
}

/// An app resource whose fingerprint changed since it was last read: the
/// HTML or its sandbox request is not what the host saw before. The
/// earlier read is the binding's own, else (on the binding's first read of
/// the app) the one its definition's
/// [`AppFingerprintStore`](crate::catalog::apps::AppFingerprintStore)
/// kept from an earlier binding, process or run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppDrift {
    /// The earlier fingerprint.
    pub previous: String,
    /// The catalog generation the earlier read was made under, when it
    /// was this binding's; `None` when the earlier fingerprint came from
    /// the store (another binding's generations mean nothing here).
    pub previous_generation: Option<u64>,
}

/// Whether `mime` is `text/html;profile=mcp-app`: the type, subtype and
/// parameter name compared without case, blanks around `;` and `=` and a
/// quoted value allowed, other parameters (such as `charset`) ignored.
pub(crate) fn is_app_mime(mime: &str) -> bool {
    let mut parts = mime.split(';');
    let essence = parts.next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("text/html")
        && parts.any(|p| {
            let (name, value) = p.split_once('=').unwrap_or((p, ""));
            name.trim().eq_ignore_ascii_case("profile") && value.trim().trim_matches('"') == "mcp-app"
        })
}

/// Reads `_meta.ui` of the app resource `uri` (from its listing entry or
/// its content item): `None` when there is no `ui` key. Warnings name the
/// resource and what was dropped.
pub(crate) fn read_resource_meta(
    meta: Option<&Map<String, Value>>,
    uri: &str,
) -> (Option<AppResourceMeta>, Vec<String>) {
    let mut warnings = Vec::new();
    let Some(ui) = meta.and_then(|m| m.get("ui")) else { return (None, warnings) };
    let uri = normalize_message(uri, 96);
    let mut warn = |what: String| warnings.push(format!("app resource {uri:?}: {what}"));
    let mut out = AppResourceMeta::default();
    let Some(ui) = ui.as_object() else {
        warn("_meta.ui is not an object: read as asking for nothing".into());
        return (Some(out), warnings);
    };
    match ui.get("csp") {
        None => {}
        Some(Value::Object(csp)) => {
            let lists = [
                ("connectDomains", &mut out.csp.connect_domains),
                ("resourceDomains", &mut out.csp.resource_domains),
                ("frameDomains", &mut out.csp.frame_domains),
                ("baseUriDomains", &mut out.csp.base_uri_domains),
            ];
            for (key, list) in lists {
                if let Some(value) = csp.get(key) {
                    *list = domains(key, value, &mut warn);
                }
            }
        }
        Some(_) => warn("csp is not an object: read as allowing nothing".into()),
    }
    match ui.get("permissions") {
        None => {}
        Some(Value::Object(permissions)) => {
            let flags = [
                ("camera", &mut out.permissions.camera),
                ("microphone", &mut out.permissions.microphone),
                ("geolocation", &mut out.permissions.geolocation),
                ("clipboardWrite", &mut out.permissions.clipboard_write),
            ];
            for (key, flag) in flags {
                // `{}` is the specification's form; `true` an older one.
                match permissions.get(key) {
                    None | Some(Value::Bool(false)) => {}
                    Some(Value::Object(_)) | Some(Value::Bool(true)) => *flag = true,
                    Some(_) => {
                        warn(format!("permissions.{key} is neither an object nor a boolean: not asked"))
                    }
                }
            }
        }
        Some(_) => warn("permissions is not an object: read as asking for none".into()),
    }
    match ui.get("domain") {
        None => {}
        Some(Value::String(d)) if domain_ok(d) => out.domain = Some(d.clone()),
        Some(_) => warn(format!("dropped its domain: not a string of at most {MAX_DOMAIN_BYTES} bytes")),
    }
    match ui.get("prefersBorder") {
        None => {}
        Some(Value::Bool(b)) => out.prefers_border = Some(*b),
        Some(_) => warn("dropped prefersBorder: not a boolean".into()),
    }
    (Some(out), warnings)
}

/// One CSP list: a list of strings, each bounded; anything else is empty.
fn domains(key: &str, value: &Value, warn: &mut impl FnMut(String)) -> Vec<String> {
    let Some(values) = value.as_array() else {
        warn(format!("csp.{key} is not a list: read as allowing nothing"));
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut dropped = 0;
    for value in values {
        match value.as_str() {
            Some(d) if domain_ok(d) && kept.len() < MAX_CSP_ENTRIES => kept.push(d.to_string()),
            _ => dropped += 1,
        }
    }
    if dropped > 0 {
        warn(format!(
            "csp.{key}: dropped {dropped} entries (not strings of at most {MAX_DOMAIN_BYTES} bytes \
             without blanks, or over {MAX_CSP_ENTRIES})"
        ));
    }
    kept
}

fn domain_ok(d: &str) -> bool {
    !d.is_empty() && d.len() <= MAX_DOMAIN_BYTES && !d.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// The fingerprint of an app (see [`AppResource`]).
pub(crate) fn fingerprint(uri: &str, html: &str, meta: &AppResourceMeta) -> String {
    let mut h = Sha256::new();
    let mut e = Encoder::new(&mut h);
    e.str(APP_DOMAIN);
    e.str(uri);
    e.str(html);
    let csp = &meta.csp;
    for list in [&csp.connect_domains, &csp.resource_domains, &csp.frame_domains, &csp.base_uri_domains] {
        let mut sorted: Vec<&str> = list.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted.dedup();
        e.len(sorted.len());
        for d in sorted {
            e.str(d);
        }
    }
    let p = meta.permissions;
    for flag in [p.camera, p.microphone, p.geolocation, p.clipboard_write] {
        e.len(usize::from(flag));
    }
    match &meta.domain {
        None => e.len(0),
        Some(d) => {
            e.len(1);
            e.str(d);
        }
    }
    e.len(match meta.prefers_border {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    });
    drop(e);
    hex(&h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(ui: Value) -> (Option<AppResourceMeta>, Vec<String>) {
        read_resource_meta(json!({ "ui": ui }).as_object(), "ui://a/app.html")
    }

    #[test]
    fn the_mime_type_is_compared_as_a_media_type() {
        for ok in [
            "text/html;profile=mcp-app",
            "TEXT/HTML; profile=\"mcp-app\"",
            "text/html; charset=utf-8; profile=mcp-app",
        ] {
            assert!(is_app_mime(ok), "{ok}");
        }
        for bad in
            ["text/html", "text/plain;profile=mcp-app", "text/html;profile=mcp-apps", "text/html;x=mcp-app"]
        {
            assert!(!is_app_mime(bad), "{bad}");
        }
    }

    #[test]
    fn every_field_is_read() {
        let (m, warnings) = meta(json!({
            "csp": { "connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"],
                     "frameDomains": ["https://www.youtube.com"], "baseUriDomains": ["https://example.com"] },
            "permissions": { "camera": {}, "clipboardWrite": {}, "microphone": true },
            "domain": "abc.example.com", "prefersBorder": false
        }));
        let m = m.unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(m.csp.connect_domains, ["https://api.example.com"]);
        assert_eq!(m.csp.resource_domains, ["https://cdn.example.com"]);
        assert_eq!(m.csp.frame_domains, ["https://www.youtube.com"]);
        assert_eq!(m.csp.base_uri_domains, ["https://example.com"]);
        let p = m.permissions;
        assert!(p.camera && p.clipboard_write && p.microphone && !p.geolocation);
        assert_eq!((m.domain.as_deref(), m.prefers_border), (Some("abc.example.com"), Some(false)));
        assert_eq!(read_resource_meta(json!({ "other": 1 }).as_object(), "ui://a").0, None);
    }

    #[test]
    fn a_bad_piece_costs_only_that_piece_and_fails_closed() {
        let long = "x".repeat(MAX_DOMAIN_BYTES + 1);
        let many: Vec<String> = (0..100).map(|i| format!("https://h{i}.example")).collect();
        let (m, warnings) = meta(json!({
            "csp": { "connectDomains": "https://everything", "resourceDomains": ["https://ok", 7, long, "a b"],
                     "frameDomains": many },
            "permissions": { "camera": "yes", "geolocation": {} },
            "domain": 12, "prefersBorder": "no"
        }));
        let m = m.unwrap();
        assert!(m.csp.connect_domains.is_empty(), "not a list: nothing allowed");
        assert_eq!(m.csp.resource_domains, ["https://ok"]);
        assert_eq!(m.csp.frame_domains.len(), MAX_CSP_ENTRIES);
        assert!(!m.permissions.camera && m.permissions.geolocation);
        assert_eq!((m.domain, m.prefers_border), (None, None));
        assert_eq!(warnings.len(), 6, "{warnings:?}");
        assert!(warnings.iter().all(|w| w.starts_with("app resource \"ui://a/app.html\"")));
        let (m, warnings) = meta(json!("everything"));
        assert_eq!(m.unwrap(), AppResourceMeta::default());
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn the_fingerprint_covers_the_html_and_the_sandbox_request_but_not_their_order() {
        let mut m = AppResourceMeta::default();
        m.csp.connect_domains = vec!["https://b".into(), "https://a".into()];
        let base = fingerprint("ui://a", "<p>hi</p>", &m);
        assert_eq!(base.len(), 64);
        let mut reordered = m.clone();
        reordered.csp.connect_domains = vec!["https://a".into(), "https://b".into(), "https://a".into()];
        assert_eq!(fingerprint("ui://a", "<p>hi</p>", &reordered), base);
        assert_ne!(fingerprint("ui://a", "<p>hi!</p>", &m), base);
        assert_ne!(fingerprint("ui://b", "<p>hi</p>", &m), base);
        let mut moved = m.clone();
        moved.csp.resource_domains = std::mem::take(&mut moved.csp.connect_domains);
        assert_ne!(fingerprint("ui://a", "<p>hi</p>", &moved), base, "which directive matters");
        let mut camera = m.clone();
        camera.permissions.camera = true;
        assert_ne!(fingerprint("ui://a", "<p>hi</p>", &camera), base);
        let mut border = m.clone();
        border.prefers_border = Some(false);
        assert_ne!(fingerprint("ui://a", "<p>hi</p>", &border), base);
        border.prefers_border = Some(true);
        assert_ne!(fingerprint("ui://a", "<p>hi</p>", &border), base);
    }

    #[test]
    fn fingerprint_vector() {
        // The same computation in Python (hashlib, the encoding of
        // tests/fixtures/digest_reference.py): "A" there.
        let mut m = AppResourceMeta::default();
        m.csp.connect_domains = vec!["https://api.example.com".into()];
        m.permissions.camera = true;
        m.prefers_border = Some(true);
        assert_eq!(
            fingerprint("ui://a/app.html", "<p>hi</p>", &m),
            "852f3ca28fbbcfc2e756757d1ed433d42b9bd84f4012e704d585fab7b70f681e"
        );
    }
}
