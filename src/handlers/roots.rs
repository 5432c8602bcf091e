//! Roots: the directories a host lets a server work in. Documented in the [roots section of the parent module](crate::handlers#roots).

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, SystemTime};
use tower::ServiceExt;

use super::rpc::rpc_error;
use crate::error::{normalize_message, Error, FailureClass};
use crate::events::{Event, EventBus};
use crate::protocol::jsonrpc::codes;
use crate::protocol::roots::{ListRootsResult, Root};
use crate::protocol::ErrorObject;
use tower::util::BoxCloneSyncService;

/// Serves `roots/list`: the host's roots for this server.
pub type RootsService = BoxCloneSyncService<ListRoots, Vec<Root>, Error>;

/// A server's `roots/list`, as the host's roots service sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRoots {
    /// The binding whose server asked.
    pub binding: String,
}

/// A root for a local directory: its `file://` URI (absolute, with
/// everything outside the unreserved set percent-encoded) and its last path
/// component as the name.
///
/// ```
/// let root = mcp_stack::handlers::root_for_path("/tmp/my project").unwrap();
/// assert_eq!(root.uri, "file:///tmp/my%20project");
/// assert_eq!(root.name.as_deref(), Some("my project"));
/// ```
pub fn root_for_path(path: impl AsRef<Path>) -> Result<Root, Error> {
    let path = path.as_ref();
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| Error::new(FailureClass::InvalidConfig, format!("no current directory: {e}")))?
            .join(path)
    };
    let Some(text) = absolute.to_str() else {
        return Err(Error::new(FailureClass::InvalidConfig, "a root path must be valid UTF-8"));
    };
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(byte as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    let name = absolute.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    Ok(Root { uri, name, meta: None })
}

/// The roots side of a binding's inbound handler.
pub(crate) struct RootsServer {
    binding: String,
    timeout: Duration,
    events: EventBus,
    service: RootsService,
}

impl RootsServer {
    pub(crate) fn new(binding: String, timeout: Duration, events: EventBus, service: RootsService) -> Self {
        RootsServer { binding, timeout, events, service }
    }

    /// Serves one `roots/list`.
    pub(crate) async fn serve(&self) -> Result<Value, ErrorObject> {
        let request = ListRoots { binding: self.binding.clone() };
        let roots = match tokio::time::timeout(self.timeout, self.service.clone().oneshot(request)).await {
            Ok(Ok(roots)) => roots,
            Ok(Err(e)) => {
                self.warn(format!("the roots service failed: {e}"));
                return Err(rpc_error(codes::INTERNAL_ERROR, e.class(), "the host could not list its roots"));
            }
            Err(_) => {
                self.warn(format!(
                    "the roots service did not answer within {}",
                    crate::error::for_people(self.timeout)
                ));
                return Err(rpc_error(
                    codes::INTERNAL_ERROR,
                    FailureClass::Deadline,
                    "the host did not list its roots in time",
                ));
            }
        };
        let (roots, refused): (Vec<Root>, Vec<Root>) =
            roots.into_iter().partition(|r| r.uri.starts_with("file://"));
        for root in refused {
            self.warn(format!("left out a root that is not a file:// URI: {}", root.uri));
        }
        serde_json::to_value(ListRootsResult { roots, meta: None })
            .map_err(|e| rpc_error(codes::INTERNAL_ERROR, FailureClass::InvalidConfig, &e.to_string()))
    }

    fn warn(&self, text: String) {
        self.events.emit(Event::Warning {
            binding: self.binding.clone(),
            text: normalize_message(&text, 512),
            at: SystemTime::now(),
        });
    }
}
