//! Inputs the fuzz targets under `fuzz/` found, kept as regression tests of
//! the behaviour decided for them. (Those of crate-internal parts, such as
//! the stdio frame reader, are unit tests beside the code.)

/// `http_headers`, crash-440361b8: a header name that held text the target
/// took for a secret. Names are not secret and are quoted (bounded) in the
/// error that refuses them; values never are.
#[test]
fn a_refused_header_name_is_quoted_and_its_value_is_not() {
    let mut headers = mcp_stack::transport::http::SecretHeaders::default();
    let e = headers.insert("Authork3yS3cretearer A", "the-value-s3cret").unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(shown.contains("Authork3yS3cretearer A"), "{shown}");
    assert!(!shown.contains("the-value-s3cret"), "{shown}");
}
