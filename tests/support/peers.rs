//! The real peers the interop tests run against, found through the
//! variables `scripts/interop.sh` sets when it installs them. A missing peer
//! is a failure, never a skip.

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

/// A server process a test started, killed (and reaped) when dropped.
pub struct Server(pub std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nothing listens on right now, for a server to bind.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Starts `command` with stdin and stdout closed (stderr as the caller set
/// it) and waits, at most `limit`, until something listens on `port`.
/// Panics, naming `what`, when the process exits first or the wait runs out.
pub async fn start_listening(
    mut command: std::process::Command,
    port: u16,
    what: &str,
    limit: std::time::Duration,
) -> Server {
    let child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let mut server = Server(child);
    let begun = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("{what} exited before listening on {port}: {status}");
        }
        assert!(begun.elapsed() < limit, "{what} does not listen on {port} after {limit:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server
}

/// The task id an `mcp` error names in its advice
/// (`` `mcp tasks result <id>` ``), which a second process takes the task
/// up by; panics with the message when it names none.
pub fn task_named_in(message: &str) -> String {
    message
        .split("`mcp tasks result ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("the error names the task: {message}"))
        .to_string()
}
