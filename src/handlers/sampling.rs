//! Sampling: a server asks the host's model for a completion. Documented in the [sampling section of the parent module](crate::handlers#sampling).

use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tower::ServiceExt;

use super::rpc::rpc_error;
use crate::config::limits::Limits;
use crate::error::{normalize_message, Error, FailureClass};
use crate::events::SampleOutcome;
use crate::events::{Event, EventBus};
use crate::protocol::content::Role;
use crate::protocol::jsonrpc::codes;
use crate::protocol::sampling::{
    CreateMessageParams, CreateMessageResult, IncludeContext, ModelPreferences, OneOrMany, SamplingContent,
    SamplingMessage, ToolChoice,
};
use crate::protocol::tools::Tool;
use crate::protocol::ErrorObject;
use tower::util::BoxCloneSyncService;

/// Serves `sampling/createMessage`: asks the host's model.
pub type SamplingService = BoxCloneSyncService<SampleRequest, SampleResult, Error>;

/// The JSON-RPC code the specification gives a refused sampling request.
pub(crate) const SAMPLING_REFUSED_CODE: i64 = -1;
/// The longest model name kept in an event.
const MAX_MODEL_NAME_BYTES: usize = 256;

use crate::layer::sampling_depth::with_sampling_depth;

/// What a server asks the host's model, as the host's sampling service sees
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRequest {
    /// The binding whose server asked.
    pub binding: String,
    /// The request's place in a sampling chain: 1 unless it arrived while
    /// the host was serving sampling for it (see the module docs).
    pub depth: u32,
    /// The server's system prompt, within the request bound. The host may
    /// change or ignore it.
    pub system_prompt: Option<String>,
    /// The conversation to complete, within the bounds.
    pub messages: Vec<SamplingMessage>,
    /// The tokens the host grants: the server's request capped at
    /// `Limits::max_sampling_tokens`. The handler must not spend more.
    pub max_tokens: u64,
    /// What the server asked for, before the cap.
    pub requested_max_tokens: u64,
    /// The server's advisory model preferences.
    pub model_preferences: Option<ModelPreferences>,
    /// The requested temperature.
    pub temperature: Option<f64>,
    /// Sequences that should stop generation.
    pub stop_sequences: Option<Vec<String>>,
    /// The context the server asks to include; the host may ignore it.
    pub include_context: Option<IncludeContext>,
    /// Provider-specific metadata, passed through.
    pub metadata: Option<Value>,
    /// Tools the model may use: only when the host declared
    /// `sampling.tools`.
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them.
    pub tool_choice: Option<ToolChoice>,
}

impl SampleRequest {
    /// The text of every text block of the conversation, one message a
    /// line: enough for a simple handler.
    pub fn text(&self) -> String {
        self.messages
            .iter()
            .map(|m| m.content.iter().filter_map(SamplingContent::as_text).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The host's completion.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleResult {
    /// The model the host actually used, which need not be one the server
    /// hinted at.
    pub model: String,
    /// The completion: one block or more (several blocks need a
    /// 2025-11-25 peer; `tool_use` needs `sampling.tools`).
    pub content: Vec<SamplingContent>,
    /// Why generation stopped (`endTurn`, `maxTokens`, `stopSequence`,
    /// `toolUse`, or the provider's own), verbatim.
    pub stop_reason: Option<String>,
}

impl SampleResult {
    /// A text completion that ended its turn.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        SampleResult {
            model: model.into(),
            content: vec![SamplingContent::text(text)],
            stop_reason: Some("endTurn".into()),
        }
    }
}

use crate::layer::sampling_depth::DepthTracker;

/// The sampling side of a binding's inbound handler.
pub(crate) struct Sampler {
    binding: String,
    limits: Limits,
    timeout: Duration,
    events: EventBus,
    service: SamplingService,
    tools: bool,
    permits: Arc<Semaphore>,
    depth: Arc<DepthTracker>,
}

/// How one sampling request ended, as [`Event::SamplingResolved`] says.
struct Resolution {
    outcome: SampleOutcome,
    class: Option<FailureClass>,
    model: Option<String>,
    message: Option<String>,
}

impl Resolution {
    /// Ended without a completion to return, for `message`.
    fn failed(outcome: SampleOutcome, class: FailureClass, message: &str) -> Self {
        Resolution { outcome, class: Some(class), model: None, message: Some(message.to_string()) }
    }
}

/// A refusal before the host is asked.
struct Refusal {
    outcome: SampleOutcome,
    code: i64,
    class: FailureClass,
    message: String,
}

impl Refusal {
    fn over_budget(message: String) -> Self {
        Refusal {
            outcome: SampleOutcome::OverBudget,
            code: SAMPLING_REFUSED_CODE,
            class: FailureClass::SamplingOverBudget,
            message,
        }
    }

    fn invalid(message: String) -> Self {
        Refusal {
            outcome: SampleOutcome::Invalid,
            code: codes::INVALID_PARAMS,
            class: FailureClass::ServerProtocol,
            message,
        }
    }
}

fn uses_tools(params: &CreateMessageParams) -> bool {
    params.tools.is_some()
        || params.tool_choice.is_some()
        || params.messages.iter().any(|m| {
            m.content
                .iter()
                .any(|c| matches!(c, SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_)))
        })
}

impl Sampler {
    pub(crate) fn new(
        binding: String,
        limits: Limits,
        timeout: Duration,
        events: EventBus,
        service: SamplingService,
        tools: bool,
        depth: Arc<DepthTracker>,
    ) -> Self {
        let permits = Arc::new(Semaphore::new(limits.max_sampling_concurrency));
        Sampler { binding, limits, timeout, events, service, tools, permits, depth }
    }

    /// Reports how a request at `depth`, granted `max_tokens`, ended after
    /// `duration` ([`Event::SamplingResolved`]).
    fn resolved(&self, depth: u32, max_tokens: u64, duration: Duration, end: Resolution) {
        let Resolution { outcome, class, model, message } = end;
        self.events.emit(Event::SamplingResolved {
            binding: self.binding.clone(),
            depth,
            outcome,
            class,
            model,
            max_tokens,
            message,
            duration,
            at: SystemTime::now(),
        });
    }

    fn refuse(&self, depth: u32, granted: u64, refusal: Refusal) -> ErrorObject {
        let message = normalize_message(&refusal.message, 512);
        self.resolved(
            depth,
            granted,
            Duration::ZERO,
            Resolution::failed(refusal.outcome, refusal.class, &message),
        );
        rpc_error(refusal.code, refusal.class, &message)
    }

    fn check(&self, params: &CreateMessageParams, depth: u32) -> Result<(), Refusal> {
        let limits = &self.limits;
        if depth as usize > limits.max_sampling_depth {
            return Err(Refusal::over_budget(format!(
                "sampling depth {depth} exceeds the limit of {}",
                limits.max_sampling_depth
            )));
        }
        if params.messages.len() > limits.max_sampling_messages {
            return Err(Refusal::over_budget(format!(
                "{} messages exceed the limit of {}",
                params.messages.len(),
                limits.max_sampling_messages
            )));
        }
        let bytes = serde_json::to_string(&params.messages).map(|s| s.len()).unwrap_or(usize::MAX)
            + params.system_prompt.as_ref().map_or(0, String::len);
        if bytes > limits.max_sampling_request_bytes {
            return Err(Refusal::over_budget(format!(
                "the conversation is {bytes} bytes, over the {}-byte bound",
                limits.max_sampling_request_bytes
            )));
        }
        if !self.tools && uses_tools(params) {
            return Err(Refusal::invalid("tools in sampling were not declared by this client".into()));
        }
        Ok(())
    }

    /// Serves one `sampling/createMessage`.
    pub(crate) async fn serve(&self, version: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let depth = self.depth.arrival_depth();
        let params: CreateMessageParams = match serde_json::from_value(params.unwrap_or(Value::Null)) {
            Ok(p) => p,
            Err(e) => {
                return Err(self.refuse(
                    depth,
                    0,
                    Refusal::invalid(format!("malformed sampling request: {e}")),
                ));
            }
        };
        let requested = params.max_tokens;
        let granted = requested.min(self.limits.max_sampling_tokens as u64);
        self.events.emit(Event::SamplingRequested {
            binding: self.binding.clone(),
            depth,
            messages: params.messages.len(),
            max_tokens: granted,
            requested_max_tokens: requested,
            at: SystemTime::now(),
        });
        if let Err(refusal) = self.check(&params, depth) {
            return Err(self.refuse(depth, granted, refusal));
        }
        let Ok(_permit) = self.permits.clone().try_acquire_owned() else {
            let refusal = Refusal::over_budget(format!(
                "{} sampling requests are already being served",
                self.limits.max_sampling_concurrency
            ));
            return Err(self.refuse(depth, granted, refusal));
        };

        let request = SampleRequest {
            binding: self.binding.clone(),
            depth,
            system_prompt: params.system_prompt,
            messages: params.messages,
            max_tokens: granted,
            requested_max_tokens: requested,
            model_preferences: params.model_preferences,
            temperature: params.temperature,
            stop_sequences: params.stop_sequences,
            include_context: params.include_context,
            metadata: params.metadata,
            tools: params.tools,
            tool_choice: params.tool_choice,
        };
        let started = Instant::now();
        let call = with_sampling_depth(depth, self.service.clone().oneshot(request));
        let outcome = tokio::time::timeout(self.timeout, call).await;
        let took = started.elapsed();
        let result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => {
                let (outcome, code) = match e.class() {
                    FailureClass::SamplingDenied => (SampleOutcome::Denied, SAMPLING_REFUSED_CODE),
                    FailureClass::SamplingOverBudget => (SampleOutcome::OverBudget, SAMPLING_REFUSED_CODE),
                    _ => (SampleOutcome::Failed, codes::INTERNAL_ERROR),
                };
                self.resolved(depth, granted, took, Resolution::failed(outcome, e.class(), e.message()));
                let text = match outcome {
                    SampleOutcome::Denied => "the host declined the sampling request",
                    SampleOutcome::OverBudget => "the sampling request is over the host's budget",
                    _ => "the host could not complete the sampling request",
                };
                return Err(rpc_error(code, e.class(), text));
            }
            Err(_) => {
                let message = format!(
                    "the host's model did not answer within {}",
                    crate::error::for_people(self.timeout)
                );
                self.resolved(
                    depth,
                    granted,
                    took,
                    Resolution::failed(SampleOutcome::Failed, FailureClass::Deadline, &message),
                );
                return Err(rpc_error(
                    codes::INTERNAL_ERROR,
                    FailureClass::Deadline,
                    "the host's model did not answer in time",
                ));
            }
        };
        let model = normalize_message(&result.model, MAX_MODEL_NAME_BYTES);
        let problem = if result.content.is_empty() {
            Some("the host's completion is empty")
        } else if result.content.len() > 1 && version < super::elicitation::URL_MODE_SINCE {
            Some("a completion of several blocks needs protocol 2025-11-25")
        } else if !self.tools
            && result
                .content
                .iter()
                .any(|c| matches!(c, SamplingContent::ToolUse(_) | SamplingContent::ToolResult(_)))
        {
            Some("the host's completion uses tools, which were not declared")
        } else {
            None
        };
        if let Some(problem) = problem {
            let end = Resolution {
                model: Some(model),
                ..Resolution::failed(SampleOutcome::Invalid, FailureClass::SamplingDenied, problem)
            };
            self.resolved(depth, granted, took, end);
            return Err(rpc_error(codes::INTERNAL_ERROR, FailureClass::SamplingDenied, problem));
        }
        let end =
            Resolution { outcome: SampleOutcome::Completed, class: None, model: Some(model), message: None };
        self.resolved(depth, granted, took, end);
        let mut content = result.content;
        let content =
            if content.len() == 1 { OneOrMany::One(content.remove(0)) } else { OneOrMany::Many(content) };
        let wire = CreateMessageResult {
            role: Role::Assistant,
            content,
            model: result.model,
            stop_reason: result.stop_reason,
            meta: None,
        };
        serde_json::to_value(wire).map_err(|e| {
            rpc_error(
                codes::INTERNAL_ERROR,
                FailureClass::SamplingDenied,
                &format!("unserializable completion: {e}"),
            )
        })
    }
}

/// An [`Error`] a sampling handler returns to refuse a request.
pub fn sampling_denied(message: impl AsRef<str>) -> Error {
    Error::new(FailureClass::SamplingDenied, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::sampling_depth::sampling_depth;

    #[tokio::test]
    async fn depth_is_one_past_the_deepest_request_in_flight() {
        let tracker = Arc::new(DepthTracker::default());
        assert_eq!(tracker.arrival_depth(), 1);
        assert!(tracker.track(sampling_depth()).is_none(), "no depth outside a handler");
        let (g1, g2) = with_sampling_depth(1, async {
            (tracker.track(sampling_depth()), tracker.track(sampling_depth()))
        })
        .await;
        assert_eq!(tracker.arrival_depth(), 2);
        let g3 = with_sampling_depth(2, async { tracker.track(sampling_depth()) }).await;
        assert_eq!(tracker.arrival_depth(), 3);
        drop(g3);
        assert_eq!(tracker.arrival_depth(), 2);
        drop(g1);
        assert_eq!(tracker.arrival_depth(), 2);
        drop(g2);
        assert_eq!(tracker.arrival_depth(), 1);
    }
}
