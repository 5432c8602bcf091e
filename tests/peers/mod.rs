//! The real peers the interop tests run against, found through the
//! variables `scripts/interop.sh` sets when it installs them. A missing peer
//! is a failure, never a skip.
#![allow(dead_code)]

use mcp_stack::transport::stdio::StdioFactory;

/// The path in `var`, which must name an existing file.
pub fn peer(var: &str) -> String {
    let value = std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run the interop tests through scripts/interop.sh, which installs the peers")
    });
    assert!(std::path::Path::new(&value).exists(), "{var}={value} does not exist");
    value
}

/// The reference server "everything" over stdio.
pub fn everything() -> StdioFactory {
    StdioFactory::new(peer("MCP_NODE")).arg(peer("MCP_EVERYTHING_JS")).arg("stdio")
}
