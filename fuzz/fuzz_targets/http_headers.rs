//! HTTP header values and URL credentials: custom headers given to
//! `SecretHeaders` and `HttpBuilder::header`, and a URL with user info and
//! a query. Whatever is accepted or refused, no header value, password or
//! query ever shows in `Debug`, `Display`, the redacted origin or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stack::transport::http::{HttpBuilder, SecretHeaders};
use mcp_stack::transport::TransportFactory;

/// Around every secret, so a check cannot mistake other text for it.
const OPEN: &str = "ZqZ";
const CLOSE: &str = "QzQ";
const PASSWORD: &str = "pw5ecretZ";
const QUERY: &str = "k3yS3cret";

fn assert_hidden(shown: &str, secret: &str, what: &str) {
    assert!(!shown.contains(secret), "{what} shows a secret: {shown}");
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{0}');
    let (name, value, host) =
        (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or("h"));
    let secret = format!("{OPEN}{value}{CLOSE}");
    // A secret the name or host repeats could be shown as the name or host.
    let checkable = !name.contains(OPEN) && !name.contains(CLOSE) && !host.contains(OPEN);

    let mut headers = SecretHeaders::default();
    let inserted = headers.insert(name, &secret);
    let line = headers.insert_line(&format!("{name}: {secret}"));
    if checkable {
        for outcome in [&inserted, &line] {
            if let Err(e) = outcome {
                assert_hidden(&format!("{e} {e:?}"), &secret, "an insert error");
            }
        }
        assert_hidden(&format!("{headers:?}"), &secret, "SecretHeaders");
    }

    let url = format!("http://user:{PASSWORD}@{host}/mcp?key={QUERY}");
    // Names and hosts are shown by design: they may repeat a secret.
    let secrets_hidden = [host, name].iter().all(|t| !t.contains(PASSWORD) && !t.contains(QUERY));
    let builder = HttpBuilder::new(url).header(name, &secret).headers(headers);
    let shown = format!("{builder:?}");
    if checkable && secrets_hidden {
        assert_hidden(&shown, &secret, "HttpBuilder");
        assert_hidden(&shown, PASSWORD, "HttpBuilder");
        assert_hidden(&shown, QUERY, "HttpBuilder");
    }
    let shown = match builder.build() {
        Ok(factory) => format!("{factory:?} {factory} {}", factory.redacted_origin()),
        Err(e) => format!("{e} {e:?}"),
    };
    if checkable && secrets_hidden {
        assert_hidden(&shown, &secret, "the factory");
        assert_hidden(&shown, PASSWORD, "the factory");
        assert_hidden(&shown, QUERY, "the factory");
    }
});
