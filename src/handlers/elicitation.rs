//! Elicitation: a server asks a person, through the host, for input. Documented in the [elicitation section of the parent module](crate::handlers#elicitation).

use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};
use tokio::time::Instant;
use tower::ServiceExt;

use super::rpc::rpc_error;
use crate::config::limits::Limits;
use crate::error::{normalize_message, Error, FailureClass};
use crate::events::{Event, EventBus};
use crate::protocol::elicitation::{ElicitRequestParams, ElicitResult as WireElicitResult};
use crate::protocol::jsonrpc::codes;
use crate::protocol::ErrorObject;
use tower::util::BoxCloneSyncService;

/// Serves `elicitation/create`: asks a person.
pub type ElicitationService = BoxCloneSyncService<ElicitRequest, ElicitResult, Error>;

/// The elicitation modes a host can carry out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElicitationModes {
    /// Form mode: the host shows a form built from a schema and sends the
    /// answer back.
    pub form: bool,
    /// URL mode (2025-11-25): the host shows a URL and, with the person's
    /// consent, opens it out of band. The URL is passed to the handler as
    /// data and never vetted or opened by this crate.
    pub url: bool,
}

impl Default for ElicitationModes {
    /// Form mode only: URL mode needs a host that can show a URL safely.
    fn default() -> Self {
        ElicitationModes { form: true, url: false }
    }
}

pub use crate::protocol::elicitation::{ElicitAction, ElicitationMode};

/// The first protocol revision with URL-mode elicitation.
pub(crate) const URL_MODE_SINCE: &str = "2025-11-25";
/// URL elicitations remembered for their completion notice; the oldest is
/// forgotten first.
pub(crate) const MAX_PENDING_URL_ELICITATIONS: usize = 256;
/// The longest validation report kept in an event.
const MAX_REPORT_BYTES: usize = 512;

/// What a server asks a person, as the host's elicitation service sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    /// The binding whose server asked: a host shows it, so that the person
    /// knows who is asking.
    pub binding: String,
    /// The mode; always one the host declared.
    pub mode: ElicitationMode,
    /// The prompt to show, verbatim: within the bound, never shortened,
    /// but with any secret this process holds or sent replaced by
    /// `[redacted]` ([`crate::redact`]): a server that quotes one back must
    /// not put it in front of a person. It is server text; a host that
    /// writes it to a terminal should strip control sequences first.
    pub message: String,
    /// The JSON Schema the answer must satisfy, in form mode only (an
    /// object schema of primitive properties, per the specification). Raw
    /// JSON: a schema is a document at the serialization boundary.
    pub schema: Option<Value>,
    /// The URL, in URL mode only. Bounded, not vetted: whether to show or
    /// open it is the host's decision.
    pub url: Option<String>,
    /// The server's correlation id, in URL mode only, up to 2025-11-25. On
    /// 2026-07-28 a URL elicitation is consent only: no id, and no
    /// completion follows.
    pub elicitation_id: Option<String>,
}

impl ElicitRequest {
    /// The schema's `default` values, by property name: the answer of a
    /// person who accepts every default (SEP-1034). Properties without a
    /// default are absent, so the result may still miss a required field;
    /// [`ElicitRequest::validate`] says.
    pub fn defaults(&self) -> Map<String, Value> {
        self.schema.as_ref().map(schema_defaults).unwrap_or_default()
    }

    /// Checks an answer against the requested schema, as the binding will
    /// before sending it: `Ok` in URL mode only for no content.
    pub fn validate(&self, content: &Map<String, Value>) -> Result<(), Error> {
        match (&self.schema, self.mode) {
            (Some(schema), ElicitationMode::Form) => validate_answer(schema, content),
            (_, ElicitationMode::Url) if content.is_empty() => Ok(()),
            _ => Err(Error::new(FailureClass::ElicitationInvalid, "a URL elicitation carries no content")),
        }
    }
}

/// The host's answer to an [`ElicitRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitResult {
    /// What the person did.
    pub action: ElicitAction,
    /// The submitted values, for an accepted form only.
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// An accepted form with its values.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitResult { action: ElicitAction::Accept, content: Some(content) }
    }

    /// An accepted URL elicitation: the person consented to open the URL.
    pub fn accept_url() -> Self {
        ElicitResult { action: ElicitAction::Accept, content: None }
    }

    /// The person explicitly refused.
    pub fn decline() -> Self {
        ElicitResult { action: ElicitAction::Decline, content: None }
    }

    /// The person dismissed the request without choosing.
    pub fn cancel() -> Self {
        ElicitResult { action: ElicitAction::Cancel, content: None }
    }
}

/// The `default` of each property of an object schema, by name.
pub(super) fn schema_defaults(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if let Some(default) = prop.get("default") {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    out
}

/// Compiles an elicitation schema offline: references outside the schema
/// are refused, never fetched. Formats (`email`, `uri`, `date`,
/// `date-time`) are checked.
fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options().offline().should_validate_formats(true).build(schema).map_err(|e| {
        normalize_message(&format!("the requested schema does not compile: {}", e.masked()), 512)
    })
}

/// Checks `content` against `schema` (compiled offline, formats checked).
/// The error names the failing locations without quoting the values, which
/// may be personal data.
pub(super) fn validate_answer(schema: &Value, content: &Map<String, Value>) -> Result<(), Error> {
    let validator = compile(schema).map_err(|m| Error::new(FailureClass::ElicitationInvalid, m))?;
    check(&validator, content).map_err(|m| Error::new(FailureClass::ElicitationInvalid, m))
}

fn check(validator: &jsonschema::Validator, content: &Map<String, Value>) -> Result<(), String> {
    let instance = Value::Object(content.clone());
    let problems: Vec<String> = validator
        .iter_errors(&instance)
        .take(4)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            format!("{at}: {}", e.masked())
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(normalize_message(
            &format!("the answer does not satisfy the requested schema: {}", problems.join("; ")),
            MAX_REPORT_BYTES,
        ))
    }
}

fn depth_of(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth_of).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth_of).max().unwrap_or(0),
        _ => 0,
    }
}

/// Checks the shape and size of a requested schema and compiles it.
fn requested_schema(schema: &Value, limits: &Limits) -> Result<jsonschema::Validator, String> {
    let bytes = serde_json::to_string(schema).map(|s| s.len()).unwrap_or(usize::MAX);
    if bytes > limits.max_elicit_schema_bytes {
        return Err(format!(
            "the requested schema is {bytes} bytes, over the {}-byte bound",
            limits.max_elicit_schema_bytes
        ));
    }
    if depth_of(schema) > limits.max_schema_depth {
        return Err(format!("the requested schema nests deeper than {}", limits.max_schema_depth));
    }
    let Some(obj) = schema.as_object() else {
        return Err("the requested schema is not an object".into());
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the requested schema is not of type \"object\"".into());
    }
    if obj.get("properties").is_some_and(|p| !p.is_object()) {
        return Err("the requested schema's properties are not an object".into());
    }
    compile(schema)
}

/// The elicitation side of a binding's inbound handler.
pub(crate) struct Elicitor {
    binding: String,
    limits: Limits,
    timeout: Duration,
    events: EventBus,
    service: ElicitationService,
    modes: ElicitationModes,
    /// URL elicitations accepted and not yet completed, oldest first.
    pending_urls: Mutex<VecDeque<String>>,
}

/// Why an elicitation was refused before it reached the host.
struct Refusal {
    code: i64,
    message: String,
}

impl Elicitor {
    pub(crate) fn new(
        binding: String,
        limits: Limits,
        timeout: Duration,
        events: EventBus,
        service: ElicitationService,
        modes: ElicitationModes,
    ) -> Self {
        Elicitor {
            binding,
            limits,
            timeout,
            events,
            service,
            modes,
            pending_urls: Mutex::new(VecDeque::new()),
        }
    }

    fn resolved(
        &self,
        mode: ElicitationMode,
        action: Option<ElicitAction>,
        class: Option<FailureClass>,
        message: Option<String>,
        duration: Duration,
    ) {
        self.events.emit(Event::ElicitationResolved {
            binding: self.binding.clone(),
            mode,
            action,
            class,
            message,
            duration,
            at: SystemTime::now(),
        });
    }

    fn refuse(&self, mode: ElicitationMode, refusal: Refusal) -> ErrorObject {
        let message = normalize_message(&refusal.message, MAX_REPORT_BYTES);
        self.resolved(
            mode,
            None,
            Some(FailureClass::ElicitationInvalid),
            Some(message.clone()),
            Duration::ZERO,
        );
        rpc_error(refusal.code, FailureClass::ElicitationInvalid, &message)
    }

    fn bounded(&self, what: &str, text: &str) -> Result<(), Refusal> {
        let max = self.limits.max_elicit_message_bytes;
        if text.len() > max {
            return Err(Refusal {
                code: codes::INVALID_PARAMS,
                message: format!("the elicitation {what} is {} bytes, over the {max}-byte bound", text.len()),
            });
        }
        Ok(())
    }

    /// Serves one `elicitation/create` at the negotiated `version`.
    pub(crate) async fn serve(&self, version: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
        let params: ElicitRequestParams = match serde_json::from_value(params.unwrap_or(Value::Null)) {
            Ok(p) => p,
            Err(e) => {
                let message =
                    normalize_message(&format!("malformed elicitation request: {e}"), MAX_REPORT_BYTES);
                self.events.emit(Event::Warning {
                    binding: self.binding.clone(),
                    text: message.clone(),
                    at: SystemTime::now(),
                });
                return Err(rpc_error(codes::INVALID_PARAMS, FailureClass::ElicitationInvalid, &message));
            }
        };
        let mode = params.mode();
        // 2026-07-28 asks through input requests: a URL elicitation there is
        // consent only, with no id and no completion to wait for.
        let consent_only = crate::protocol::is_modern_version(version);
        let url_allowed = self.modes.url && version >= URL_MODE_SINCE;
        let declared = match mode {
            ElicitationMode::Form => self.modes.form,
            ElicitationMode::Url => url_allowed,
        };
        if !declared {
            let mode_name = if mode == ElicitationMode::Form { "form" } else { "url" };
            return Err(self.refuse(
                mode,
                Refusal {
                    code: codes::INVALID_PARAMS,
                    message: format!("elicitation mode {mode_name:?} was not declared by this client"),
                },
            ));
        }
        let prepared = match &params {
            ElicitRequestParams::Form(form) => self.bounded("message", &form.message).and_then(|()| {
                requested_schema(&form.requested_schema, &self.limits)
                    .map(Some)
                    .map_err(|message| Refusal { code: codes::INVALID_PARAMS, message })
            }),
            ElicitRequestParams::Url(url) => self
                .bounded("message", &url.message)
                .and_then(|()| self.bounded("URL", &url.url))
                .and_then(|()| match (&url.elicitation_id, consent_only) {
                    (Some(id), _) => self.bounded("id", id),
                    (None, true) => Ok(()),
                    (None, false) => Err(Refusal {
                        code: codes::INVALID_PARAMS,
                        message: "a URL elicitation must carry an elicitationId".to_string(),
                    }),
                })
                .map(|()| None),
        };
        let validator = match prepared {
            Ok(v) => v,
            Err(refusal) => return Err(self.refuse(mode, refusal)),
        };
        let request = match params {
            ElicitRequestParams::Form(form) => ElicitRequest {
                binding: self.binding.clone(),
                mode,
                message: crate::redact::scrub(&form.message).into_owned(),
                schema: Some(form.requested_schema),
                url: None,
                elicitation_id: None,
            },
            ElicitRequestParams::Url(url) => ElicitRequest {
                binding: self.binding.clone(),
                mode,
                message: crate::redact::scrub(&url.message).into_owned(),
                schema: None,
                url: Some(url.url),
                // Consent only: no id for the host to correlate, and none
                // remembered for a completion.
                elicitation_id: url.elicitation_id.filter(|_| !consent_only),
            },
        };
        let elicitation_id = request.elicitation_id.clone();

        self.events.emit(Event::ElicitationRequested {
            binding: self.binding.clone(),
            mode,
            at: SystemTime::now(),
        });
        let started = Instant::now();
        let outcome = tokio::time::timeout(self.timeout, self.service.clone().oneshot(request)).await;
        let waited = started.elapsed();

        let answer = match outcome {
            Ok(Ok(answer)) => answer,
            Err(_) => {
                let message = format!("nobody answered within {}", crate::error::for_people(self.timeout));
                self.resolved(
                    mode,
                    Some(ElicitAction::Cancel),
                    Some(FailureClass::ElicitationTimeout),
                    Some(message),
                    waited,
                );
                return Ok(not_accepted(ElicitAction::Cancel));
            }
            Ok(Err(e)) => {
                let (action, class) = match e.class() {
                    FailureClass::ElicitationDeclined => (Some(ElicitAction::Decline), e.class()),
                    FailureClass::ElicitationCancelled => (Some(ElicitAction::Cancel), e.class()),
                    FailureClass::ElicitationTimeout | FailureClass::Deadline => {
                        (Some(ElicitAction::Cancel), FailureClass::ElicitationTimeout)
                    }
                    other => (None, other),
                };
                let message = e.message().to_string();
                self.resolved(mode, action, Some(class), Some(message.clone()), waited);
                return match action {
                    Some(action) => Ok(not_accepted(action)),
                    None => Err(rpc_error(codes::INTERNAL_ERROR, class, "the host could not answer")),
                };
            }
        };

        match answer.action {
            ElicitAction::Accept => {
                let problem = match (&validator, &answer.content) {
                    (Some(validator), content) => {
                        check(validator, content.as_ref().unwrap_or(&Map::new())).err()
                    }
                    (None, Some(_)) => Some("a URL elicitation's accept carries no content".to_string()),
                    (None, None) => None,
                };
                if let Some(problem) = problem {
                    self.resolved(mode, None, Some(FailureClass::ElicitationInvalid), Some(problem), waited);
                    return Err(rpc_error(
                        codes::INTERNAL_ERROR,
                        FailureClass::ElicitationInvalid,
                        "the client's answer did not satisfy the requested schema and was not sent",
                    ));
                }
                if let Some(id) = elicitation_id {
                    self.remember_url(id);
                }
                self.resolved(mode, Some(ElicitAction::Accept), None, None, waited);
                let content = match mode {
                    ElicitationMode::Form => Some(answer.content.unwrap_or_default()),
                    ElicitationMode::Url => None,
                };
                Ok(to_value(WireElicitResult::accept(content)))
            }
            action @ (ElicitAction::Decline | ElicitAction::Cancel) => {
                let class = match action {
                    ElicitAction::Decline => FailureClass::ElicitationDeclined,
                    _ => FailureClass::ElicitationCancelled,
                };
                self.resolved(mode, Some(action), Some(class), None, waited);
                Ok(not_accepted(action))
            }
        }
    }

    fn remember_url(&self, id: String) {
        let mut pending = self.pending_urls.lock().expect("pending urls lock");
        if pending.len() >= MAX_PENDING_URL_ELICITATIONS {
            pending.pop_front();
        }
        pending.push_back(id);
    }

    /// Handles `notifications/elicitation/complete`: an event for an id this
    /// binding accepted, nothing for any other.
    pub(crate) fn complete(&self, params: Option<&Value>) {
        let Some(id) = params.and_then(|p| p.get("elicitationId")).and_then(Value::as_str) else {
            return;
        };
        let known = {
            let mut pending = self.pending_urls.lock().expect("pending urls lock");
            match pending.iter().position(|p| p == id) {
                Some(i) => pending.remove(i).is_some(),
                None => false,
            }
        };
        if known {
            self.events.emit(Event::ElicitationComplete {
                binding: self.binding.clone(),
                elicitation_id: id.to_string(),
                at: SystemTime::now(),
            });
        } else {
            tracing::debug!(target: "mcp_stack::inbound", binding = %self.binding, "ignored the completion of an unknown elicitation");
        }
    }
}

/// The answer the server gets for a request not accepted: `decline` for a
/// decline, `cancel` for everything else (a cancel, a timeout).
fn not_accepted(action: ElicitAction) -> Value {
    match action {
        ElicitAction::Decline => to_value(WireElicitResult::decline()),
        _ => to_value(WireElicitResult::cancel()),
    }
}

fn to_value(result: WireElicitResult) -> Value {
    serde_json::to_value(result).unwrap_or_else(|_| json!({ "action": "cancel" }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "minimum": 0, "default": 30},
                "email": {"type": "string", "format": "email"},
                "verified": {"type": "boolean", "default": true}
            },
            "required": ["name", "email"]
        })
    }

    #[test]
    fn defaults_are_read_from_properties() {
        let d = schema_defaults(&form_schema());
        assert_eq!(Value::Object(d), json!({"name": "John Doe", "age": 30, "verified": true}));
    }

    #[test]
    fn answers_are_checked_with_formats_and_without_quoting_values() {
        let schema = form_schema();
        let ok = json!({"name": "A", "email": "a@example.com"});
        assert!(validate_answer(&schema, ok.as_object().unwrap()).is_ok());
        let bad = json!({"name": "A", "email": "secret-not-an-email", "age": -1});
        let e = validate_answer(&schema, bad.as_object().unwrap()).unwrap_err();
        assert_eq!(e.class(), FailureClass::ElicitationInvalid);
        assert!(e.message().contains("/email"), "{e}");
        assert!(!e.message().contains("secret-not-an-email"), "{e}");
        let missing = json!({"name": "A"});
        assert!(validate_answer(&schema, missing.as_object().unwrap()).is_err());
    }

    #[test]
    fn schemas_are_bounded_shaped_and_never_fetched() {
        let limits = Limits::default();
        assert!(requested_schema(&form_schema(), &limits).is_ok());
        assert!(requested_schema(&json!({"type": "string"}), &limits).is_err());
        assert!(requested_schema(&json!([]), &limits).is_err());
        let remote = json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
        assert!(requested_schema(&remote, &limits).unwrap_err().contains("does not compile"));
        let small = Limits::default().with_max_elicit_schema_bytes(10);
        assert!(requested_schema(&form_schema(), &small).unwrap_err().contains("bound"));
        let mut deep = json!("x");
        for _ in 0..40 {
            deep = json!({ "a": deep });
        }
        let deep = json!({"type": "object", "properties": deep});
        assert!(requested_schema(&deep, &limits).unwrap_err().contains("deeper"));
    }
}
