//! Bounds on what a result may carry.
//!
//! [`ResultLimit`] bounds the JSON result of `tools/call`, `prompts/get` and
//! `resources/read` by the binding's [`Limits`], so a server cannot hand the
//! host (and a model's context) more than it agreed to take. Results of other
//! methods pass through untouched. A bounded result is still a success:
//! what was cut, dropped or replaced is said in [`McpResponse::warnings`],
//! and the conversion into the crate's result types
//! ([`Content`](crate::Content)) shows it as `truncated` and
//! [`Content::Unsupported`].
//!
//! The rules, per result:
//!
//! - **Text** (`max_text_result_bytes`): one budget for all the text of one
//!   result — the text blocks of a tool result, the text of its embedded
//!   resources, the text of every message of a prompt, the text items of a
//!   resource's contents — spent in document order. "Caps the text content of
//!   one tool result" means the total: a per-item cap would let a server
//!   multiply it by sending many items. The item that crosses the budget is
//!   cut at a UTF-8 boundary at or below it, and every later text item is
//!   emptied; each is marked truncated, so what the host keeps is a prefix of
//!   what the server sent. One warning tells how much was received.
//! - **Structured content** (`max_structured_bytes`, measured as compact
//!   JSON): over the bound it is dropped whole, with a warning. Cutting JSON
//!   would make a document its schema does not describe.
//! - **Binary items** — image and audio data, an embedded resource's blob, a
//!   resource's blob — are measured by their *decoded* size, computed from the
//!   base64 length without decoding. An item over `max_binary_item_bytes` is
//!   refused, and so is every item after the first `max_binary_items` the
//!   result keeps (an item refused for its size does not use up a place). A
//!   refused item keeps its place with its payload emptied (`data` or `blob`
//!   becomes `""`), so the JSON stays the shape the specification gives.
//!   Each refusal is a warning (refusals past the count, one warning for
//!   all). In a tool result, an item past the count is not refused in place
//!   but removed, as below.
//! - **Item count** (`max_content_items`): a result keeps at most that many
//!   items — a tool result's content blocks, a prompt's messages, a
//!   resource's contents — and the rest are removed from the JSON. Removed
//!   items cost the host nothing: a tool result with 10,000 images keeps
//!   `max_binary_items` of them, not 9,984 stand-ins. One warning counts
//!   what was removed; [`ResultMarks::dropped`] carries the count and size,
//!   and the conversion of a tool result appends **one**
//!   [`Content::Unsupported`] stand-in for all of them. Items refused for
//!   their size still keep their place.
//!
//! # What the conversion learns: typed marks, not JSON
//!
//! Which items were cut or refused, and whether structured content was
//! dropped, travels up as a [`ResultMarks`] in the response's
//! [extensions](crate::request::McpResponse::extensions) (absent when the
//! layer changed nothing), never as keys inside the server's JSON: nothing
//! a server sends can forge or hide one. The conversion into the crate's
//! result types ([`ToolResult::from_response`] and its siblings) turns a
//! refused item into [`Content::Unsupported`] and a cut one into
//! `truncated`, and output validation does not mistake withheld structured
//! content for missing content.
//!
//! The layer adds no failure: its error is the inner service's.
//!
//! ```
//! # use mcp_stack::layer::result_limit::ResultLimitLayer;
//! # use mcp_stack::{McpRequest, McpResponse};
//! # use mcp_stack::Limits;
//! # use mcp_stack::ResultMarks;
//! use serde_json::json;
//! use tower::{service_fn, ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let limits = Limits::default().with_max_text_result_bytes(5);
//! let svc = ServiceBuilder::new()
//!     .layer(ResultLimitLayer::new(limits))
//!     .service(service_fn(|_req: McpRequest| async move {
//!         let result = json!({ "content": [{ "type": "text", "text": "héllo world" }] });
//!         Ok::<_, mcp_stack::Error>(McpResponse::new(result))
//!     }));
//! let rsp = svc.oneshot(McpRequest::new("tools/call", Default::default())).await.unwrap();
//! // "é" is two bytes: the cut lands on a character boundary.
//! assert_eq!(rsp.result["content"][0]["text"], "héll");
//! assert_eq!(rsp.warnings.len(), 1);
//! let marks = rsp.extensions.get::<ResultMarks>().unwrap();
//! assert!(marks.is_truncated(0));
//! # }
//! ```
//!
//! [`Limits`]: crate::Limits
//! [`McpResponse::warnings`]: crate::request::McpResponse::warnings
//! [`Content::Unsupported`]: crate::Content::Unsupported
//! [`ResultMarks`]: crate::content::ResultMarks
//! [`ToolResult::from_response`]: crate::content::ToolResult::from_response
//! [`ResultMarks::dropped`]: crate::content::ResultMarks::dropped

mod bounds;
mod future;
mod layer;

pub use future::ResponseFuture;
pub use layer::ResultLimitLayer;

use std::task::{Context, Poll};
use tower_service::Service;

use crate::config::limits::Limits;
use crate::request::{McpRequest, McpResponse};
use bounds::Family;

/// The five bounds this layer applies, resolved (never zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResultBounds {
    pub(crate) max_text_result_bytes: usize,
    pub(crate) max_structured_bytes: usize,
    pub(crate) max_binary_item_bytes: usize,
    pub(crate) max_binary_items: usize,
    pub(crate) max_content_items: usize,
}

impl ResultBounds {
    fn from_limits(limits: Limits) -> Self {
        ResultBounds {
            max_text_result_bytes: limits.max_text_result_bytes,
            max_structured_bytes: limits.max_structured_bytes,
            max_binary_item_bytes: limits.max_binary_item_bytes,
            max_binary_items: limits.max_binary_items,
            max_content_items: limits.max_content_items,
        }
    }
}

/// Bounds the results of `tools/call`, `prompts/get` and `resources/read`.
/// See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ResultLimit<S> {
    inner: S,
    bounds: ResultBounds,
}

impl<S> ResultLimit<S> {
    /// Wraps `inner`, bounding results by `limits`.
    pub fn new(inner: S, limits: Limits) -> Self {
        ResultLimit { inner, bounds: ResultBounds::from_limits(limits) }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> Service<McpRequest> for ResultLimit<S>
where
    S: Service<McpRequest, Response = McpResponse>,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = future::ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: McpRequest) -> Self::Future {
        let bound = Family::of(&req.method).map(|family| (family, self.bounds));
        future::ResponseFuture::new(self.inner.call(req), bound)
    }
}

#[cfg(test)]
mod tests;
