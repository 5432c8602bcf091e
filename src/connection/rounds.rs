//! One call as the era wants it: the request sent (and sent again with a
//! new id when the era re-issues a request whose reply was lost), its
//! result read by the era, and the `input_required` rounds of 2026-07-28:
//! the input gathered through the inbound handler and the request sent
//! again, inside the call's one deadline.

use serde_json::{Map, Value};
use std::sync::Arc;

use super::era::{Era, InputRequired, Reply};
use super::{InboundHandler, Shared, MAX_INPUT_ROUNDS, MAX_REISSUES};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};

/// Marks a response reached through `input_required` rounds: its result
/// depends on the input given, which is not part of the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InputGiven;

impl Shared {
    /// One request as the era wants it: sent, its result read
    /// ([`Era::reply`]), and, when the server asks for input
    /// (`input_required`), the input gathered through the inbound handler
    /// and the request sent again with a new id, at most
    /// [`MAX_INPUT_ROUNDS`] times. The response says whether input was
    /// given ([`InputGiven`]): such a result depends on answers that are
    /// not in the request, so no cache may keep it.
    pub(super) async fn call(self: Arc<Self>, req: McpRequest) -> Result<McpResponse, Error> {
        let (result, rounds) = self.call_counting_rounds(req).await?;
        let mut response = McpResponse::new(result);
        if rounds > 0 {
            response.extensions.insert(InputGiven);
        }
        Ok(response)
    }

    async fn call_counting_rounds(self: Arc<Self>, mut req: McpRequest) -> Result<(Value, usize), Error> {
        let era = self.era.read().expect("era lock").clone();
        let result = self.clone().request_reissuing(&*era, &req).await?;
        let mut reply = era.reply(&req.method, result)?;
        let mut rounds = 0usize;
        loop {
            let input = match reply {
                Reply::Complete(result) => return Ok((result, rounds)),
                Reply::InputRequired(input) => input,
            };
            let method = &req.method;
            if !methods::accepts_input_required(method) {
                return Err(Error::new(
                    FailureClass::ServerProtocol,
                    format!("the server asked for input on {method}, which may not ask for any"),
                ));
            }
            rounds += 1;
            if rounds > MAX_INPUT_ROUNDS {
                return Err(Error::new(
                    FailureClass::LimitExceeded,
                    format!("the server still asked for input after {MAX_INPUT_ROUNDS} rounds of {method}"),
                ));
            }
            self.fulfil(&mut req, input).await?;
            let result = self.clone().request_reissuing(&*era, &req).await?;
            reply = era.reply(&req.method, result)?;
        }
    }

    /// [`Shared::request`], sent again with a new id (at most
    /// [`MAX_REISSUES`] times) when its reply was lost while the connection
    /// stayed up and the era re-issues such a request
    /// ([`Era::reissue_on_loss`]).
    pub(super) async fn request_reissuing(
        self: Arc<Self>,
        era: &dyn Era,
        req: &McpRequest,
    ) -> Result<Value, Error> {
        let mut reissued = 0;
        loop {
            match self.clone().request(req).await {
                Err(e)
                    if e.class() == FailureClass::Indeterminate
                        && reissued < MAX_REISSUES
                        && era.reissue_on_loss(&req.method)
                        && self.check_open().is_ok() =>
                {
                    reissued += 1;
                    tracing::debug!(target: "mcp_stack::connection", "re-issuing {}: {e}", req.method);
                }
                other => return other,
            }
        }
    }

    /// Turns `req` into the next round: its original params, the answers
    /// under the server's keys as `inputResponses`, and `requestState`
    /// echoed as it came (omitted when none came).
    pub(super) async fn fulfil(&self, req: &mut McpRequest, input: InputRequired) -> Result<(), Error> {
        let responses = answer_input_requests(&*self.inbound, input.input_requests).await?;
        let again = req.params_mut();
        again.remove("inputResponses");
        again.remove("requestState");
        if !responses.is_empty() {
            again.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = input.request_state {
            again.insert("requestState".into(), state);
        }
        Ok(())
    }
}

/// Answers a server's input requests (an `input_required` result's, or a
/// 2026-07-28 task's `inputRequests`) through `inbound`, the host's
/// handlers: each under its key, as `inputResponses` carries them. A
/// request that is not an input request, or one the host has no handler
/// for, fails `server_protocol`; one a handler refused fails
/// `remote_tool_error`, naming the method.
pub(crate) async fn answer_input_requests(
    inbound: &dyn InboundHandler,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, Error> {
    let mut responses = Map::new();
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_string();
        if !methods::is_input_request(&method) {
            return Err(Error::new(
                FailureClass::ServerProtocol,
                format!(
                    "the server asked for input with {:?}, which is not an input request",
                    normalize_message(&method, 64)
                ),
            ));
        }
        let request_params = request.get("params").cloned();
        match inbound.request(&method, request_params).await {
            Ok(result) => {
                responses.insert(key, result);
            }
            Err(e) => {
                let class = match e.code {
                    codes::METHOD_NOT_FOUND => FailureClass::ServerProtocol,
                    _ => FailureClass::RemoteToolError,
                };
                return Err(Error::new(
                    class,
                    format!("the server's {method} input request was refused: {}", e.message),
                ));
            }
        }
    }
    Ok(responses)
}
