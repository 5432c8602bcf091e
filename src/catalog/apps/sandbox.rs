//! The headers and iframe attributes an app is rendered with: [`app_sandbox`].

use crate::catalog::apps::AppResourceMeta;
use crate::error::{normalize_message, Error, FailureClass};

/// The headers and iframe attributes a host renders an app with (see
/// [`app_sandbox`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppSandbox {
    /// The `Content-Security-Policy` header value for the app's document.
    pub content_security_policy: String,
    /// The `Permissions-Policy` header value for the app's document.
    pub permissions_policy: String,
    /// The iframe's `sandbox` attribute.
    pub sandbox: String,
    /// The iframe's `allow` attribute (empty when the app asks for nothing).
    pub allow: String,
}

/// The headers and attributes for an app whose resource says `meta`;
/// `verification_failed` when a declared source is not a plain host source
/// (see below): the host then does not render the app. They are the
/// headers of the page that serves the app's HTML and the attributes of
/// its iframe, so that every host gets them right.
///
/// # Decisions
///
/// Where the specification leaves the host free:
///
/// - the policy starts from `default-src 'none'`; scripts, styles, images,
///   fonts and media come from the document itself (inline included, as
///   an app is one HTML document) and the `resourceDomains`; `connect-src`
///   and `frame-src` are `'none'` unless the app names origins;
///   `base-uri` is `'self'` unless it names some; `object-src` and
///   `form-action` are always `'none'`;
/// - a source the server declared must be a host source: an optional
///   scheme (`http`, `https`, `ws` or `wss`), a host (a leading `*.` allowed), an
///   optional port and path. Anything else (a bare `*`, a scheme alone, a
///   keyword such as `'unsafe-eval'`, and above all a character that would
///   end a directive or a header: `;`, `,`, quotes, blanks, control
///   characters) refuses the whole policy with `verification_failed`
///   rather than being passed through or silently widened;
/// - the iframe's sandbox is `allow-scripts allow-forms`: no
///   `allow-same-origin` (the app runs in an opaque origin and reads none
///   of the host's storage or cookies), no popups and no top navigation
///   (links go through `ui/open-link`, which the host answers);
/// - the permissions the app asks for become the iframe's `allow` list and
///   a `Permissions-Policy` granting them to the document only; what is
///   not asked for is denied. Asked is not granted: a host that refuses a
///   permission removes it from [`AppResourceMeta::permissions`] first.
///
/// ```
/// use mcp_stack::catalog::apps::{app_sandbox, AppResourceMeta};
///
/// let mut meta = AppResourceMeta::default();
/// meta.csp.connect_domains.push("https://api.example.com".into());
/// meta.permissions.camera = true;
/// let sandbox = app_sandbox(&meta).unwrap();
/// assert!(sandbox.content_security_policy.contains("connect-src https://api.example.com;"));
/// assert_eq!(sandbox.allow, "camera");
/// meta.csp.connect_domains.push("https://x.example; script-src *".into());
/// assert!(app_sandbox(&meta).is_err());
/// ```
pub fn app_sandbox(meta: &AppResourceMeta) -> Result<AppSandbox, Error> {
    let csp = &meta.csp;
    let lists = [
        ("connectDomains", &csp.connect_domains),
        ("resourceDomains", &csp.resource_domains),
        ("frameDomains", &csp.frame_domains),
        ("baseUriDomains", &csp.base_uri_domains),
    ];
    for (key, list) in lists {
        if let Some(bad) = list.iter().find(|s| !host_source(s)) {
            return Err(Error::new(
                FailureClass::VerificationFailed,
                format!("the app's csp.{key} entry {:?} is not a host source", normalize_message(bad, 64)),
            )
            .with_op("app_sandbox"));
        }
    }
    let join = |base: &str, list: &[String]| {
        let mut out = base.to_string();
        for s in list {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(s);
        }
        out
    };
    let or_none = |list: &[String]| if list.is_empty() { "'none'".to_string() } else { join("", list) };
    let resources = &csp.resource_domains;
    let base_uri =
        if csp.base_uri_domains.is_empty() { "'self'".to_string() } else { join("", &csp.base_uri_domains) };
    let content_security_policy = format!(
        "default-src 'none'; script-src {}; style-src {}; img-src {}; font-src {}; media-src {}; \
         connect-src {}; frame-src {}; base-uri {base_uri}; object-src 'none'; form-action 'none'",
        join("'self' 'unsafe-inline'", resources),
        join("'self' 'unsafe-inline'", resources),
        join("'self' data: blob:", resources),
        join("'self' data:", resources),
        join("'self' data: blob:", resources),
        or_none(&csp.connect_domains),
        or_none(&csp.frame_domains),
    );
    let p = meta.permissions;
    let features = [
        ("camera", p.camera),
        ("microphone", p.microphone),
        ("geolocation", p.geolocation),
        ("clipboard-write", p.clipboard_write),
    ];
    let permissions_policy = features
        .iter()
        .map(|(name, asked)| format!("{name}=({})", if *asked { "self" } else { "" }))
        .collect::<Vec<_>>()
        .join(", ");
    let allow =
        features.iter().filter(|(_, asked)| *asked).map(|(name, _)| *name).collect::<Vec<_>>().join("; ");
    Ok(AppSandbox {
        content_security_policy,
        permissions_policy,
        sandbox: "allow-scripts allow-forms".to_string(),
        allow,
    })
}

/// Whether `s` is a CSP host source: `[scheme://]host[:port][/path]` (the
/// scheme `http`, `https`, `ws` or `wss`), the
/// host a DNS name (a leading `*.` allowed), an IPv4 address or
/// `localhost`; the path of URL characters that end no directive.
fn host_source(s: &str) -> bool {
    if s.is_empty() || s.len() > 256 {
        return false;
    }
    let rest = match s.split_once("://") {
        Some((scheme, rest)) => {
            let ok = ["http", "https", "ws", "wss"].iter().any(|k| scheme.eq_ignore_ascii_case(k));
            if !ok {
                return false;
            }
            rest
        }
        None => s,
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    let host = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
        });
    let port_ok = port
        .is_none_or(|p| p == "*" || (!p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit())));
    let path_ok = path.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '/' | '-' | '.' | '_' | '~' | '%' | '!' | '$' | '&' | '(' | ')' | '*' | '+' | '=' | '@' | ':'
            )
    });
    host_ok && port_ok && path_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_allow_nothing_beyond_the_document() {
        let s = app_sandbox(&AppResourceMeta::default()).unwrap();
        assert!(s
            .content_security_policy
            .starts_with("default-src 'none'; script-src 'self' 'unsafe-inline';"));
        assert!(s.content_security_policy.contains("connect-src 'none'; frame-src 'none'; base-uri 'self';"));
        assert_eq!(s.permissions_policy, "camera=(), microphone=(), geolocation=(), clipboard-write=()");
        assert_eq!(s.sandbox, "allow-scripts allow-forms");
        assert_eq!(s.allow, "");
    }

    #[test]
    fn declared_sources_and_permissions_are_placed() {
        let mut meta = AppResourceMeta::default();
        meta.csp.resource_domains = vec!["https://cdn.example.com".into(), "*.static.example:8443".into()];
        meta.csp.frame_domains = vec!["https://maps.example.com/embed/".into()];
        meta.permissions.microphone = true;
        meta.permissions.clipboard_write = true;
        let s = app_sandbox(&meta).unwrap();
        assert!(s
            .content_security_policy
            .contains("script-src 'self' 'unsafe-inline' https://cdn.example.com *.static.example:8443;"));
        assert!(s.content_security_policy.contains("frame-src https://maps.example.com/embed/;"));
        assert_eq!(s.allow, "microphone; clipboard-write");
        assert!(
            s.permissions_policy.contains("microphone=(self)") && s.permissions_policy.contains("camera=()")
        );
    }

    #[test]
    fn injection_and_wildcards_refuse_the_whole_policy() {
        for bad in [
            "https://a.example; script-src *",
            "https://a.example, https://b.example",
            "'unsafe-eval'",
            "\"https://a.example\"",
            "https://a.example\r\nSet-Cookie: x=1",
            "https://a .example",
            "*",
            "https:",
            "https://",
            "javascript://x",
        ] {
            let mut meta = AppResourceMeta::default();
            meta.csp.connect_domains.push(bad.into());
            let e = app_sandbox(&meta).unwrap_err();
            assert_eq!(e.class(), FailureClass::VerificationFailed, "{bad:?}");
        }
    }
}
