//! MCP Apps (`io.modelcontextprotocol/ui`, ext-apps 2026-01-26) in the
//! catalog: which tools have an app, and who may see and call each.
//!
//! A tool's `_meta.ui` names its app's HTML resource (`resourceUri`, a
//! `ui://` URI) and who the tool is for (`visibility`: `"model"`, `"app"`,
//! both by default). The host's rules, which the library enforces so that
//! a host cannot forget them (fail closed):
//!
//! - a tool whose visibility lacks `"model"` is never offered to a model
//!   (the provider conversions leave it out, `Host`'s model routing
//!   refuses it);
//! - a call an app makes is refused unless the tool's visibility includes
//!   `"app"` and the tool is on the app's own server
//!   ([`Host::call_from_app`](crate::host::Host::call_from_app));
//! - every other call of a tool whose visibility lacks `"model"` is refused
//!   by the binding itself, before anything is sent, on every path
//!   ([`Binding::call_tool`](crate::Binding::call_tool), the binding's
//!   service, a task, the host's model routing, the provider dispatch, the
//!   `mcp` command): only a call marked [`FromApp`] — what
//!   [`Binding::call_tool_from_app`](crate::Binding::call_tool_from_app)
//!   sends — reaches such a tool.
//!
//! What the server sent is read within bounds, and a defect costs only the
//! tool's app declaration, never a tool that would then be shown where it
//! must not be: a `resourceUri` that is not `ui://` is dropped (the tool
//! has no app); unknown visibility values are ignored with a warning; a
//! `visibility` that is not a list of strings, or `_meta.ui` that is not an
//! object, makes the tool visible to nobody. The deprecated flat key
//! `_meta["ui/resourceUri"]` (servers built on ext-apps 2.0 send it beside
//! the nested one) is read only when the nested one is absent and the
//! profile allows `app_flat_resource_uri`, with a warning on the tool; the
//! catalog then lists the tolerance in `applied_tolerances`. Without it the
//! flat key is ignored with a warning and the tool has no app.

//!
//! An app's HTML is read with [`Binding::read_app`](crate::Binding::read_app)
//! into an [`AppResource`]: see there for what is checked, what the host
//! is given and how the fingerprint is made. A fingerprint that differs
//! from the last read of the same app is reported as [`AppDrift`]: within
//! the binding, and across bindings, processes and runs when the
//! definition names an [`AppFingerprintStore`] (such as
//! [`FileAppFingerprintStore`]; the `mcp` command keeps one beside its
//! tokens, see `mcp read-app --help`).
//!
//! A host that renders apps wraps each in the headers and attributes
//! [`app_sandbox`] gives, and serves what it posts through an
//! [`AppBridge`](crate::host::app_bridge::AppBridge) (see
//! [`host::app_bridge`](crate::host::app_bridge)).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::normalize_message;

mod resource;
mod sandbox;
mod store;

pub use sandbox::{app_sandbox, AppSandbox};

pub(crate) use resource::{fingerprint, is_app_mime, read_resource_meta};
pub use resource::{AppCsp, AppDrift, AppPermissions, AppResource, AppResourceMeta};
pub(crate) use store::server_key;
pub use store::{
    AppFingerprintStore, FileAppFingerprintStore, MAX_APP_FINGERPRINT_FILE_BYTES, MAX_STORED_APP_FINGERPRINTS,
};

/// The longest `ui://` URI taken.
pub(crate) const MAX_APP_URI_BYTES: usize = 2048;
/// The deprecated flat key of an app's resource URI.
const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// Marks a `tools/call` request as an app's own (MCP Apps): made by an app
/// of the binding's server, through the host's app bridge. A tool whose
/// visibility lacks `"model"` is called only with this mark, and a tool
/// whose visibility lacks `"app"` never with it; the binding's catalog
/// checks refuse anything else with `tool_unavailable`, before anything is
/// sent.
///
/// [`Binding::call_tool_from_app`](crate::Binding::call_tool_from_app) and
/// [`Host::call_from_app`](crate::host::Host::call_from_app) set it; a
/// host that puts it in a request's
/// [extensions](crate::McpRequest::extensions) itself vouches that an app
/// of that server asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FromApp;

impl FromApp {
    /// The mark.
    pub fn new() -> Self {
        FromApp
    }
}

/// Why a call of `tool` is refused by the visibility rule, if it is:
/// `visibility` is the tool's, `from_app` whether the call is an app's.
pub(crate) fn visibility_refusal(tool: &str, visibility: Visibility, from_app: bool) -> Option<String> {
    // The name is quoted only for a refusal: this runs on every call.
    let quoted = || normalize_message(tool, 128);
    match from_app {
        false if !visibility.model => Some(format!(
            "the tool {:?} is for its app only (its _meta.ui.visibility lacks \"model\"): \
             only an app of its server calls it, through the host's app bridge",
            quoted()
        )),
        true if !visibility.app => {
            Some(format!("the tool {:?} is not for apps (its _meta.ui.visibility lacks \"app\")", quoted()))
        }
        _ => None,
    }
}

/// Who a tool is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Visibility {
    /// A model may be offered it and call it.
    pub model: bool,
    /// An app of its server may call it.
    pub app: bool,
}

impl Default for Visibility {
    /// Both, as the specification has it when `visibility` is absent.
    fn default() -> Self {
        Visibility { model: true, app: true }
    }
}

/// A tool's app declaration (`_meta.ui`), as far as it passed the checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppTool {
    /// The `ui://` URI of its app's HTML; `None` when it names none (or
    /// one that was refused).
    pub resource_uri: Option<String>,
    /// Who the tool is for.
    pub visibility: Visibility,
}

/// What reading a tool's `_meta` for Apps found.
pub(crate) struct UiRead {
    pub(crate) app: Option<AppTool>,
    pub(crate) warnings: Vec<String>,
    /// The resource URI came from the deprecated flat key (the tolerance
    /// `app_flat_resource_uri` was applied).
    pub(crate) flat: bool,
}

/// Reads the Apps declaration of the tool `tool` from its `_meta`;
/// `flat_allowed`: the profile allows `app_flat_resource_uri`.
pub(crate) fn read_ui(meta: Option<&Map<String, Value>>, tool: &str, flat_allowed: bool) -> UiRead {
    let mut read = UiRead { app: None, warnings: Vec::new(), flat: false };
    let Some(meta) = meta else { return read };
    let name = normalize_message(tool, 64);
    let mut warn = |what: String| read.warnings.push(format!("tools: {name:?}: {what}"));
    let ui = meta.get("ui");
    let flat = meta.get(FLAT_RESOURCE_URI);
    if ui.is_none() && flat.is_none() {
        return read;
    }
    let mut app = AppTool { resource_uri: None, visibility: Visibility::default() };
    match ui {
        None => {}
        Some(Value::Object(ui)) => {
            app.resource_uri = ui.get("resourceUri").and_then(|uri| app_uri(uri, &mut warn));
            if let Some(visibility) = ui.get("visibility") {
                app.visibility = read_visibility(visibility, &mut warn);
            }
        }
        Some(_) => {
            warn("_meta.ui is not an object: the tool is shown to no model and no app".into());
            app.visibility = Visibility { model: false, app: false };
        }
    }
    if app.resource_uri.is_none() && flat.is_some() && !flat_allowed {
        warn(format!(
            "ignored its app resource under the deprecated _meta[{FLAT_RESOURCE_URI:?}]: \
             the profile does not allow app_flat_resource_uri"
        ));
    } else if app.resource_uri.is_none() {
        if let Some(uri) = flat {
            app.resource_uri = app_uri(uri, &mut warn);
            read.flat = app.resource_uri.is_some();
            if read.flat {
                warn(format!("its app resource is under the deprecated _meta[{FLAT_RESOURCE_URI:?}]"));
            }
        }
    }
    read.app = Some(app);
    read
}

/// A `ui://` URI within bounds, or `None` with a warning.
fn app_uri(uri: &Value, warn: &mut impl FnMut(String)) -> Option<String> {
    match uri.as_str() {
        Some(u)
            if u.starts_with("ui://") && u.len() <= MAX_APP_URI_BYTES && !u.chars().any(char::is_control) =>
        {
            Some(u.to_string())
        }
        Some(u) => {
            warn(format!(
                "dropped its app resource {:?}: not a ui:// URI of at most {MAX_APP_URI_BYTES} bytes",
                normalize_message(u, 64)
            ));
            None
        }
        None => {
            warn("dropped its app resource: the URI is not a string".into());
            None
        }
    }
}

/// `visibility`: known values taken, unknown ones ignored with a warning;
/// anything but a list of strings is visible to nobody.
fn read_visibility(visibility: &Value, warn: &mut impl FnMut(String)) -> Visibility {
    let nobody = Visibility { model: false, app: false };
    let Some(values) = visibility.as_array().filter(|v| v.iter().all(Value::is_string)) else {
        warn("its visibility is not a list of strings: the tool is shown to no model and no app".into());
        return nobody;
    };
    let mut seen = nobody;
    let mut unknown = 0;
    for value in values.iter().filter_map(Value::as_str) {
        match value {
            "model" => seen.model = true,
            "app" => seen.app = true,
            _ => unknown += 1,
        }
    }
    if unknown > 0 {
        warn(format!("ignored {unknown} unknown visibility values"));
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(meta: Value) -> UiRead {
        read_ui(meta.as_object(), "t", true)
    }

    #[test]
    fn a_tools_app_and_visibility_are_read() {
        let r = read(json!({ "ui": { "resourceUri": "ui://a/app.html", "visibility": ["app"] } }));
        let app = r.app.unwrap();
        assert_eq!(app.resource_uri.as_deref(), Some("ui://a/app.html"));
        assert_eq!(app.visibility, Visibility { model: false, app: true });
        assert!(r.warnings.is_empty());
        let plain = read(json!({ "other": 1 }));
        assert!(plain.app.is_none());
        let default = read(json!({ "ui": { "resourceUri": "ui://a" } })).app.unwrap();
        assert_eq!(default.visibility, Visibility::default());
    }

    #[test]
    fn bad_declarations_cost_the_declaration_and_fail_closed() {
        let r = read(json!({ "ui": { "resourceUri": "https://x/app.html" } }));
        assert_eq!(r.app.unwrap().resource_uri, None);
        assert!(r.warnings[0].contains("not a ui:// URI"));
        let r = read(json!({ "ui": { "resourceUri": "ui://a", "visibility": ["model", "admin", "root"] } }));
        assert_eq!(r.app.unwrap().visibility, Visibility { model: true, app: false });
        assert!(r.warnings[0].contains("2 unknown"));
        for bad in [json!({ "ui": { "visibility": "model" } }), json!({ "ui": "x" })] {
            let r = read(bad);
            assert_eq!(r.app.unwrap().visibility, Visibility { model: false, app: false });
        }
    }

    #[test]
    fn the_deprecated_flat_key_is_read_and_reported() {
        let r = read(json!({ "ui/resourceUri": "ui://a/app.html" }));
        assert!(r.flat && r.warnings[0].contains("deprecated"));
        assert_eq!(r.app.unwrap().resource_uri.as_deref(), Some("ui://a/app.html"));
        // Both keys: the nested one wins, and no tolerance is applied.
        let both = read(json!({ "ui": { "resourceUri": "ui://n" }, "ui/resourceUri": "ui://f" }));
        assert!(!both.flat);
        assert_eq!(both.app.unwrap().resource_uri.as_deref(), Some("ui://n"));
        // A profile without the tolerance: the flat key is ignored, said.
        let strict = read_ui(json!({ "ui/resourceUri": "ui://a/app.html" }).as_object(), "t", false);
        assert!(!strict.flat && strict.warnings[0].contains("app_flat_resource_uri"));
        assert_eq!(strict.app.unwrap().resource_uri, None);
    }
}
