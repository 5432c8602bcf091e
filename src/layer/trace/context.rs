//! [`TraceContext`]: a W3C trace context to send with a request, and
//! [`TraceContextSource`], where it comes from.

use std::fmt;

use crate::error::{Error, FailureClass};

/// The longest `tracestate` sent: W3C Trace Context asks propagators to
/// pass at least 512 characters of it, and allows cutting beyond that.
pub(crate) const MAX_TRACESTATE_BYTES: usize = 512;

/// A W3C trace context (version `00`): the `traceparent` that a request
/// made inside a trace carries, and its optional `tracestate`.
///
/// Only well-formed values can be built, so what goes out in `_meta` is
/// always a valid `traceparent`: 2 + 32 + 16 + 2 lowercase hex digits,
/// neither id all zeros.
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

impl TraceContext {
    /// The context of span `parent_id` in trace `trace_id`, with the W3C
    /// `trace-flags` (`0x01`: sampled). `None` when either id is all zeros,
    /// which W3C Trace Context defines as invalid (an OpenTelemetry span
    /// context that is not valid has such ids).
    pub fn new(trace_id: [u8; 16], parent_id: [u8; 8], flags: u8) -> Option<Self> {
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        let mut traceparent = String::with_capacity(55);
        traceparent.push_str("00-");
        push_hex(&mut traceparent, &trace_id);
        traceparent.push('-');
        push_hex(&mut traceparent, &parent_id);
        traceparent.push('-');
        push_hex(&mut traceparent, &[flags]);
        Some(TraceContext { traceparent, tracestate: None })
    }

    /// Reads a `traceparent` value, as another propagator wrote it. Fails
    /// with `invalid_config` unless it is a version-`00` value with valid
    /// ids (a later version's value is read for its first four fields, as
    /// the W3C specification asks, and sent as version `00`).
    pub fn parse(traceparent: &str) -> Result<Self, Error> {
        let invalid = || {
            Error::new(
                FailureClass::InvalidConfig,
                format!("not a W3C traceparent: {:?}", crate::error::normalize_message(traceparent, 64)),
            )
        };
        let value = traceparent.trim();
        let mut fields = value.split('-');
        let (Some(version), Some(trace), Some(parent), Some(flags)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(invalid());
        };
        let hex =
            |s: &str, len: usize| s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(parent, 16) || !hex(flags, 2) {
            return Err(invalid());
        }
        if version == "00" && fields.next().is_some() {
            return Err(invalid());
        }
        let mut trace_id = [0u8; 16];
        let mut parent_id = [0u8; 8];
        decode_hex(trace, &mut trace_id);
        decode_hex(parent, &mut parent_id);
        let mut flag = [0u8; 1];
        decode_hex(flags, &mut flag);
        TraceContext::new(trace_id, parent_id, flag[0]).ok_or_else(invalid)
    }

    /// The same context with a `tracestate`. A value longer than
    /// 512 bytes or with a character W3C does not allow
    /// there (outside printable ASCII) is left out rather than sent
    /// damaged; an empty one is none.
    pub fn with_tracestate(mut self, tracestate: &str) -> Self {
        let state = tracestate.trim();
        let ok = !state.is_empty()
            && state.len() <= MAX_TRACESTATE_BYTES
            && state.bytes().all(|b| (0x20..=0x7e).contains(&b));
        self.tracestate = ok.then(|| state.to_string());
        self
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, when there is one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id, as 32 hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The parent (span) id, as 16 hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the `sampled` flag is set.
    pub fn sampled(&self) -> bool {
        let mut flag = [0u8; 1];
        decode_hex(&self.traceparent[53..55], &mut flag);
        flag[0] & 1 == 1
    }
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent)
            .field("tracestate", &self.tracestate)
            .finish()
    }
}

impl fmt::Display for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.traceparent)
    }
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0x0f)] as char);
    }
}

/// Decodes lowercase hex that has been checked already.
fn decode_hex(text: &str, out: &mut [u8]) {
    let nibble = |b: u8| if b.is_ascii_digit() { b - b'0' } else { b - b'a' + 10 };
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        out[i] = (nibble(pair[0]) << 4) | nibble(pair[1]);
    }
}

/// Where a binding gets the trace context of the request it is sending:
/// set one in [`Definition::trace_context`](crate::Definition::trace_context)
/// to send `traceparent` (and `tracestate`) in each request's `_meta`.
///
/// `tracing` has spans but no trace ids of its own, so the ids come from
/// whatever the host traces with. It is called inside the request's
/// `mcp.request` span (see [the module docs](super)), so with
/// `tracing-opentelemetry` the current span's OpenTelemetry context *is*
/// that request's client span, and the server's work joins the host's
/// trace as its child:
///
/// ```text
/// use opentelemetry::trace::TraceContextExt as _;
/// use tracing_opentelemetry::OpenTelemetrySpanExt as _;
///
/// let definition = definition.with_trace_context(std::sync::Arc::new(|| {
///     let context = tracing::Span::current().context();
///     let span = context.span();
///     let ids = span.span_context();
///     mcp_stack::layer::trace::TraceContext::new(
///         ids.trace_id().to_bytes(),
///         ids.span_id().to_bytes(),
///         ids.trace_flags().to_u8(),
///     )
/// }));
/// ```
///
/// (A closure `Fn() -> Option<TraceContext>` is a source.) Returning
/// `None` sends nothing for that request: outside any trace, say.
pub trait TraceContextSource: Send + Sync + 'static {
    /// The context to send with the request being made now, if any.
    fn current(&self) -> Option<TraceContext>;
}

impl<F> TraceContextSource for F
where
    F: Fn() -> Option<TraceContext> + Send + Sync + 'static,
{
    fn current(&self) -> Option<TraceContext> {
        self()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W3C_EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn builds_and_reads_the_w3c_example() {
        let trace =
            [0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36];
        let span = [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7];
        let built = TraceContext::new(trace, span, 1).unwrap();
        assert_eq!(built.traceparent(), W3C_EXAMPLE);
        assert_eq!(TraceContext::parse(W3C_EXAMPLE).unwrap(), built);
        assert_eq!(built.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(built.parent_id(), "00f067aa0ba902b7");
        assert!(built.sampled());
        assert!(!TraceContext::new(trace, span, 0).unwrap().sampled());
    }

    #[test]
    fn refuses_what_w3c_calls_invalid() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
        ] {
            let e = TraceContext::parse(bad).unwrap_err();
            assert_eq!(e.class(), FailureClass::InvalidConfig, "{bad:?}");
        }
        assert_eq!(TraceContext::new([0; 16], [1; 8], 1), None);
        // A later version's first four fields are read, and sent as 00.
        let later =
            TraceContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future").unwrap();
        assert_eq!(later.traceparent(), W3C_EXAMPLE);
    }

    #[test]
    fn a_tracestate_that_cannot_be_sent_whole_is_left_out() {
        let cx = TraceContext::parse(W3C_EXAMPLE).unwrap();
        assert_eq!(cx.clone().with_tracestate("congo=t61rcWkgMzE").tracestate(), Some("congo=t61rcWkgMzE"));
        assert_eq!(cx.clone().with_tracestate("a=b\nc=d").tracestate(), None);
        assert_eq!(cx.clone().with_tracestate(&"a".repeat(MAX_TRACESTATE_BYTES + 1)).tracestate(), None);
        assert_eq!(cx.with_tracestate("  ").tracestate(), None);
    }
}
