//! Where discovery looks: the well-known URLs of RFC 9728 and RFC 8414 and
//! OpenID Connect Discovery, in the order the MCP specification sets, and
//! the canonical resource URI of RFC 8707.

use url::Url;

use super::AuthError;

const PRM: &str = "/.well-known/oauth-protected-resource";
const OAUTH_AS: &str = "/.well-known/oauth-authorization-server";
const OIDC: &str = "/.well-known/openid-configuration";

/// Parses an absolute `http`/`https` URL without a fragment or credentials.
pub(super) fn http_url(s: &str, what: &'static str) -> Result<Url, AuthError> {
    let url = Url::parse(s).map_err(|_| AuthError::InvalidUrl { what, reason: "not an absolute URL" })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(AuthError::InvalidUrl { what, reason: "not http or https" });
    }
    if url.host().is_none() {
        return Err(AuthError::InvalidUrl { what, reason: "no host" });
    }
    if url.fragment().is_some() {
        return Err(AuthError::InvalidUrl { what, reason: "has a fragment" });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(AuthError::InvalidUrl { what, reason: "has credentials" });
    }
    Ok(url)
}

/// The server's path without a trailing `/` (empty at the root).
fn trimmed_path(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

fn at(base: &Url, path: &str, query: Option<&str>) -> Url {
    let mut url = base.clone();
    url.set_path(path);
    url.set_query(query);
    url.set_fragment(None);
    url
}

/// The Protected Resource Metadata URLs to try, in order: the challenge's
/// `resource_metadata` hint (when it is a valid URL), then the path-based
/// well-known URL (`/.well-known/oauth-protected-resource/<path>`, when the
/// server is not at the root), then the root one. No duplicates.
pub(super) fn protected_resource_metadata_urls(server: &Url, hint: Option<&str>) -> Vec<Url> {
    let mut urls = Vec::with_capacity(3);
    if let Some(hint) = hint.and_then(|h| http_url(h, "resource_metadata").ok()) {
        urls.push(hint);
    }
    let path = trimmed_path(server);
    if !path.is_empty() || server.query().is_some() {
        urls.push(at(server, &format!("{PRM}{path}"), server.query()));
    }
    urls.push(at(server, PRM, None));
    // A hint that names a well-known URL is not asked for twice.
    let mut unique: Vec<Url> = Vec::with_capacity(urls.len());
    for url in urls {
        if !unique.contains(&url) {
            unique.push(url);
        }
    }
    unique
}

/// The authorization server metadata URLs for `issuer`, in the order of the
/// MCP specification: RFC 8414 with path insertion, then OpenID Connect
/// Discovery with path insertion, then with the path appended. An issuer at
/// the root has two: RFC 8414, then OpenID Connect.
pub(super) fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = trimmed_path(issuer);
    if path.is_empty() {
        vec![at(issuer, OAUTH_AS, None), at(issuer, OIDC, None)]
    } else {
        vec![
            at(issuer, &format!("{OAUTH_AS}{path}"), None),
            at(issuer, &format!("{OIDC}{path}"), None),
            at(issuer, &format!("{path}{OIDC}"), None),
        ]
    }
}

/// The 2025-03-26 metadata URL: RFC 8414 at the MCP server's root.
pub(super) fn legacy_metadata_url(server: &Url) -> Url {
    at(server, OAUTH_AS, None)
}

/// The canonical URI of the MCP server (RFC 8707 §2, the MCP
/// specification's form): lowercase scheme and host (the URL parser does
/// this), no fragment, and no trailing `/` at the root.
pub(super) fn canonical_resource(server: &Url) -> String {
    let mut url = server.clone();
    url.set_fragment(None);
    let s = url.to_string();
    if url.path() == "/" && url.query().is_none() {
        s.trim_end_matches('/').to_owned()
    } else {
        s
    }
}

/// Whether `resource` identifies `server`: the same origin and a path that
/// is the server's or a parent of it on a segment boundary (see
/// [`ProtectedResourceMetadata::check_resource`](super::ProtectedResourceMetadata::check_resource)).
pub(super) fn resource_matches(server: &Url, resource: &str) -> bool {
    let Ok(resource) = http_url(resource, "resource") else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    if resource.query().is_some() && resource.query() != server.query() {
        return false;
    }
    let (parent, child) = (trimmed_path(&resource), trimmed_path(server));
    child == parent || child.strip_prefix(parent).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn strings(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(String::from).collect()
    }

    #[test]
    fn prm_urls_hint_then_path_then_root() {
        let server = url("https://example.com/public/mcp");
        assert_eq!(
            strings(protected_resource_metadata_urls(&server, Some("https://meta.example.com/prm"))),
            [
                "https://meta.example.com/prm",
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            strings(protected_resource_metadata_urls(&url("https://example.com/mcp/"), None)),
            [
                "https://example.com/.well-known/oauth-protected-resource/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
    }

    #[test]
    fn prm_urls_at_the_root_and_with_bad_or_duplicate_hints() {
        let root = url("https://example.com");
        assert_eq!(
            strings(protected_resource_metadata_urls(&root, Some("javascript:alert(1)"))),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            strings(protected_resource_metadata_urls(
                &root,
                Some("https://example.com/.well-known/oauth-protected-resource")
            )),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn as_urls_with_and_without_a_path() {
        assert_eq!(
            strings(authorization_server_metadata_urls(&url("https://auth.example.com/tenant1"))),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            strings(authorization_server_metadata_urls(&url("https://auth.example.com/"))),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            legacy_metadata_url(&url("http://127.0.0.1:3000/mcp?a=b")).as_str(),
            "http://127.0.0.1:3000/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn canonical_resource_forms() {
        assert_eq!(canonical_resource(&url("HTTPS://MCP.Example.com/")), "https://mcp.example.com");
        assert_eq!(canonical_resource(&url("https://mcp.example.com:8443")), "https://mcp.example.com:8443");
        assert_eq!(canonical_resource(&url("https://mcp.example.com/mcp#x")), "https://mcp.example.com/mcp");
        assert_eq!(
            canonical_resource(&url("https://mcp.example.com:443/mcp")),
            "https://mcp.example.com/mcp"
        );
    }

    #[test]
    fn http_url_refusals() {
        for bad in ["/relative", "ftp://x/", "https://u:p@x/", "https://x/#f", "data:text/plain,x"] {
            assert!(http_url(bad, "test").is_err(), "{bad}");
        }
    }
}
