//! Unit tests of the stdio factory that start no process: command lines,
//! and what its origin and `Debug` never show.

use super::*;

#[test]
fn from_command_line_needs_a_program_and_hides_the_line() {
    let err = StdioFactory::from_command_line("   ").unwrap_err();
    assert_eq!(err.class(), FailureClass::InvalidConfig);
    let err = StdioFactory::from_command_line("server --token 'sekrit").unwrap_err();
    assert_eq!(err.class(), FailureClass::InvalidConfig);
    assert!(!err.to_string().contains("sekrit"));
    let factory = StdioFactory::from_command_line("/opt/bin/server --token sekrit 'a b'").unwrap();
    assert_eq!(factory.args, ["--token", "sekrit", "a b"]);
    assert_eq!(factory.redacted_origin().as_str(), "stdio:server");
}

#[test]
fn origin_and_debug_hold_no_arguments_or_values() {
    let factory = StdioFactory::new("/usr/local/bin/mcp-server")
        .args(["--api-key", "sekrit"])
        .env("API_TOKEN", "hunter2")
        .env("API_TOKEN", "hunter3");
    assert_eq!(factory.kind(), "stdio");
    assert_eq!(factory.redacted_origin().as_str(), "stdio:mcp-server");
    let debug = format!("{factory:?}");
    assert!(!debug.contains("sekrit") && !debug.contains("hunter"), "{debug}");
    assert!(debug.contains("API_TOKEN"));
    assert_eq!(factory.env.len(), 1);
}
