//! Unit tests of streamable HTTP that need no server: resumption delays,
//! and what `Debug` and `Display` never show.

use std::time::Duration;

use super::*;

#[test]
fn server_retry_is_exact_and_the_default_backs_off() {
    let p = ResumePolicy::default();
    assert_eq!(p.wait(Some(Duration::from_millis(500)), 1), Duration::from_millis(500));
    assert_eq!(p.wait(Some(Duration::from_millis(500)), 4), Duration::from_millis(500));
    assert_eq!(p.wait(None, 1), Duration::from_secs(1));
    assert_eq!(p.wait(None, 3), Duration::from_secs(4));
    assert_eq!(p.wait(None, 30), Duration::from_secs(30));
}

#[test]
fn debug_never_shows_header_values_or_the_url() {
    let f = StreamableHttpFactory::builder("https://user:pw@host:8443/mcp?key=s3cret")
        .header("Authorization", "Bearer s3cret-token")
        .build()
        .unwrap();
    let shown = format!("{f:?} {f}");
    for secret in ["s3cret", "pw", "user", "/mcp"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert_eq!(f.redacted_origin().as_str(), "https://host:8443");
    let b = StreamableHttpFactory::builder("https://user:pw@host/mcp?key=s3cret").header("X", "s3cret");
    assert!(!format!("{b:?}").contains("s3cret"));
    let e = StreamableHttpFactory::builder("https://host/")
        .header("X", "s3cret\r\nInjected: x")
        .build()
        .unwrap_err();
    assert!(!format!("{e:?} {e}").contains("s3cret"));
}
