//! The names of every MCP request and notification this crate sends or reads.
//!
//! Each constant is named after its method, path separators and camelCase
//! turned into `SCREAMING_SNAKE_CASE`: `tools/call` is [`TOOLS_CALL`],
//! `notifications/tools/list_changed` is [`NOTIFICATIONS_TOOLS_LIST_CHANGED`].

// Lifecycle and utilities.

/// Request (client → server): opens a legacy-era session.
pub(crate) const INITIALIZE: &str = "initialize";
/// Notification (client → server): the client finished initializing.
pub(crate) const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
/// Request (either way): a liveness check.
pub(crate) const PING: &str = "ping";
/// Notification (either way): a previously issued request is cancelled.
pub(crate) const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
/// Notification (either way): progress of a long-running request.
pub(crate) const NOTIFICATIONS_PROGRESS: &str = "notifications/progress";
/// Request (client → server): the modern-era (2026-07-28) discovery call.
pub(crate) const SERVER_DISCOVER: &str = "server/discover";

// Tools.

/// Request (client → server): lists the server's tools.
pub(crate) const TOOLS_LIST: &str = "tools/list";
/// Request (client → server): calls a tool.
pub(crate) const TOOLS_CALL: &str = "tools/call";
/// Notification (server → client): the tool list changed.
pub(crate) const NOTIFICATIONS_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

// Prompts.

/// Request (client → server): lists the server's prompts.
pub(crate) const PROMPTS_LIST: &str = "prompts/list";
/// Request (client → server): renders one prompt.
pub(crate) const PROMPTS_GET: &str = "prompts/get";
/// Notification (server → client): the prompt list changed.
pub(crate) const NOTIFICATIONS_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";

// Resources.

/// Request (client → server): lists the server's resources.
pub(crate) const RESOURCES_LIST: &str = "resources/list";
/// Request (client → server): reads one resource.
pub(crate) const RESOURCES_READ: &str = "resources/read";
/// Request (client → server): lists the server's resource templates.
pub(crate) const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// Request (client → server): asks for updates of one resource.
pub(crate) const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// Request (client → server): stops updates of one resource.
pub(crate) const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// Request (client → server, 2026-07-28): opens the one stream that carries
/// the subscribed resources' updates and the lists' change notices.
pub(crate) const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// Notification (server → client, 2026-07-28): the first message of a
/// listen stream, saying what the server honours.
pub(crate) const NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// Notification (server → client): a subscribed resource changed.
pub(crate) const NOTIFICATIONS_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// Notification (server → client): the resource list changed.
pub(crate) const NOTIFICATIONS_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";

// Skills (SEP-2640).

/// Request (client → server): lists the server's skills.
pub(crate) const SKILLS_LIST: &str = "skills/list";

// Completion and logging.

/// Request (client → server): asks for argument completions.
pub(crate) const COMPLETION_COMPLETE: &str = "completion/complete";
/// Request (client → server): sets the server's log level.
pub(crate) const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// Notification (server → client): one log message.
pub(crate) const NOTIFICATIONS_MESSAGE: &str = "notifications/message";

// Server-initiated requests.

/// Request (server → client): asks the user for input.
pub(crate) const ELICITATION_CREATE: &str = "elicitation/create";
/// Notification (server → client): a URL-mode elicitation completed.
pub(crate) const NOTIFICATIONS_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// Request (server → client): asks the host's model for a completion.
pub(crate) const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Request (server → client): lists the host's roots.
pub(crate) const ROOTS_LIST: &str = "roots/list";
/// Notification (client → server): the root list changed.
pub(crate) const NOTIFICATIONS_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";

// Tasks (2025-11-25).

/// Request (either way): the state of one task.
pub(crate) const TASKS_GET: &str = "tasks/get";
/// Request (either way): the result of a finished task.
pub(crate) const TASKS_RESULT: &str = "tasks/result";
/// Request (either way): lists tasks.
pub(crate) const TASKS_LIST: &str = "tasks/list";
/// Request (either way): cancels one task.
pub(crate) const TASKS_CANCEL: &str = "tasks/cancel";
/// Notification (either way): a task's status changed.
pub(crate) const NOTIFICATIONS_TASKS_STATUS: &str = "notifications/tasks/status";

// The Tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`): its
// `tasks/get` and `tasks/cancel` are the names above.

/// Request (client to server): answers what a task asks for
/// (`inputResponses`).
pub(crate) const TASKS_UPDATE: &str = "tasks/update";
/// Notification (server to client, on a listen stream): a task's state.
pub(crate) const NOTIFICATIONS_TASKS: &str = "notifications/tasks";

/// Every method and notification name above.
pub(crate) const ALL: &[&str] = &[
    INITIALIZE,
    NOTIFICATIONS_INITIALIZED,
    PING,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_PROGRESS,
    SERVER_DISCOVER,
    TOOLS_LIST,
    TOOLS_CALL,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PROMPTS_LIST,
    PROMPTS_GET,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_SUBSCRIBE,
    RESOURCES_UNSUBSCRIBE,
    SUBSCRIPTIONS_LISTEN,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    SKILLS_LIST,
    COMPLETION_COMPLETE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_MESSAGE,
    ELICITATION_CREATE,
    NOTIFICATIONS_ELICITATION_COMPLETE,
    SAMPLING_CREATE_MESSAGE,
    ROOTS_LIST,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    TASKS_GET,
    TASKS_RESULT,
    TASKS_LIST,
    TASKS_CANCEL,
    NOTIFICATIONS_TASKS_STATUS,
    TASKS_UPDATE,
    NOTIFICATIONS_TASKS,
];

/// The protocol's own spelling of `name`, borrowed for as long as the
/// program runs, when `name` is one of [`ALL`]. A `match`, so that the hot
/// path (a layer keeping a call's method for its error message) compares
/// lengths before bytes instead of scanning the list.
pub(crate) fn known(name: &str) -> Option<&'static str> {
    Some(match name {
        INITIALIZE => INITIALIZE,
        NOTIFICATIONS_INITIALIZED => NOTIFICATIONS_INITIALIZED,
        PING => PING,
        NOTIFICATIONS_CANCELLED => NOTIFICATIONS_CANCELLED,
        NOTIFICATIONS_PROGRESS => NOTIFICATIONS_PROGRESS,
        SERVER_DISCOVER => SERVER_DISCOVER,
        TOOLS_LIST => TOOLS_LIST,
        TOOLS_CALL => TOOLS_CALL,
        NOTIFICATIONS_TOOLS_LIST_CHANGED => NOTIFICATIONS_TOOLS_LIST_CHANGED,
        PROMPTS_LIST => PROMPTS_LIST,
        PROMPTS_GET => PROMPTS_GET,
        NOTIFICATIONS_PROMPTS_LIST_CHANGED => NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        RESOURCES_LIST => RESOURCES_LIST,
        RESOURCES_READ => RESOURCES_READ,
        RESOURCES_TEMPLATES_LIST => RESOURCES_TEMPLATES_LIST,
        RESOURCES_SUBSCRIBE => RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE => RESOURCES_UNSUBSCRIBE,
        SUBSCRIPTIONS_LISTEN => SUBSCRIPTIONS_LISTEN,
        NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
        NOTIFICATIONS_RESOURCES_UPDATED => NOTIFICATIONS_RESOURCES_UPDATED,
        NOTIFICATIONS_RESOURCES_LIST_CHANGED => NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        SKILLS_LIST => SKILLS_LIST,
        COMPLETION_COMPLETE => COMPLETION_COMPLETE,
        LOGGING_SET_LEVEL => LOGGING_SET_LEVEL,
        NOTIFICATIONS_MESSAGE => NOTIFICATIONS_MESSAGE,
        ELICITATION_CREATE => ELICITATION_CREATE,
        NOTIFICATIONS_ELICITATION_COMPLETE => NOTIFICATIONS_ELICITATION_COMPLETE,
        SAMPLING_CREATE_MESSAGE => SAMPLING_CREATE_MESSAGE,
        ROOTS_LIST => ROOTS_LIST,
        NOTIFICATIONS_ROOTS_LIST_CHANGED => NOTIFICATIONS_ROOTS_LIST_CHANGED,
        TASKS_GET => TASKS_GET,
        TASKS_RESULT => TASKS_RESULT,
        TASKS_LIST => TASKS_LIST,
        TASKS_CANCEL => TASKS_CANCEL,
        NOTIFICATIONS_TASKS_STATUS => NOTIFICATIONS_TASKS_STATUS,
        TASKS_UPDATE => TASKS_UPDATE,
        NOTIFICATIONS_TASKS => NOTIFICATIONS_TASKS,
        _ => return None,
    })
}

/// Whether a result of `method` may ask for input (`input_required`,
/// 2026-07-28): `tools/call`, `prompts/get` and `resources/read`.
pub(crate) fn accepts_input_required(method: &str) -> bool {
    matches!(method, TOOLS_CALL | PROMPTS_GET | RESOURCES_READ)
}

/// Whether `method` is one a server may ask the client to fulfil as an
/// input request (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`).
pub(crate) fn is_input_request(method: &str) -> bool {
    matches!(method, ELICITATION_CREATE | SAMPLING_CREATE_MESSAGE | ROOTS_LIST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_recognizes_exactly_the_listed_names() {
        for name in ALL {
            assert_eq!(known(name), Some(*name));
        }
        assert_eq!(known("tools/calls"), None);
        assert_eq!(known(""), None);
    }

    #[test]
    fn names_are_distinct_and_notifications_are_prefixed() {
        let mut seen = std::collections::HashSet::new();
        for name in ALL {
            assert!(seen.insert(*name), "duplicate method name {name}");
        }
        assert_eq!(ALL.len(), 37);
        assert!(NOTIFICATIONS_TASKS_STATUS.starts_with("notifications/"));
        assert_eq!(LOGGING_SET_LEVEL, "logging/setLevel");
        assert_eq!(SAMPLING_CREATE_MESSAGE, "sampling/createMessage");
    }
}
