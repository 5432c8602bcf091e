//! Issue 13, item 5 (library part): the catalog's display strings — titles
//! and descriptions — and the raw names a host shows neutralize C1 controls
//! and bidirectional formatting characters, not only C0 controls.

use crate::support::scripted::{id_of, scripted_lists};
use mcp_stack::compat::Profile;
use mcp_stack::{handlers::Handlers, Binding, Definition};
use serde_json::{json, Value};

/// Every bidi formatting character the issue names, and C1 controls
/// (U+009B is the 8-bit CSI; U+0085 is NEL).
const HAZARDS: &[char] = &[
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{0080}', '\u{0085}', '\u{009B}', '\u{009F}',
];

/// One of [`HAZARDS`] (the library's own predicate, which covers them, is
/// unit-tested in `error.rs`).
fn is_display_hazard(c: char) -> bool {
    HAZARDS.contains(&c)
}

fn hostile(text: &str) -> String {
    HAZARDS.iter().map(|c| format!("{text}{c}")).collect()
}

fn tools() -> Vec<Value> {
    vec![
        json!({"name": "ok", "title": hostile("T"), "description": hostile("line\nd"),
               "inputSchema": {"type": "object"}}),
        json!({"name": "evil\u{202E}txt.exe", "inputSchema": {"type": "object"}}),
        json!({"name": "evil\u{2067}iso", "inputSchema": {"type": "object"}}),
    ]
}

async fn connect(profile: Option<Profile>) -> Binding {
    let factory = scripted_lists(|wire, req| {
        if req.method == "tools/list" {
            wire.reply(&id_of(req), json!({ "tools": tools() }));
        }
    })
    .0;
    let mut def = Definition::new("display", factory);
    if let Some(profile) = profile {
        def = def.with_compat(profile);
    }
    Binding::connect(def, Handlers::default()).await.unwrap()
}

#[tokio::test]
async fn titles_and_descriptions_lose_bidi_and_c1_under_the_default_profile() {
    let binding = connect(None).await;
    let catalog = binding.catalog();
    let tool = catalog.tool("ok").unwrap();
    let title = tool.title.as_deref().unwrap();
    let description = tool.description.as_deref().unwrap();
    assert!(!title.chars().any(is_display_hazard), "{title:?}");
    assert!(!description.chars().any(|c| is_display_hazard(c) && c != '\n'), "{description:?}");
    // Replaced by spaces, the text around them kept; line breaks survive in
    // a description.
    assert_eq!(title, vec!["T"; HAZARDS.len()].join(" "));
    assert!(description.contains("line\nd line\nd"), "{description:?}");
    binding.close().await;
}

#[tokio::test]
async fn a_strict_profile_drops_the_field_and_raw_names_with_bidi_are_refused() {
    let binding = connect(Some(Profile::strict_v1())).await;
    let catalog = binding.catalog();
    let tool = catalog.tool("ok").unwrap();
    assert_eq!((tool.title.as_deref(), tool.description.as_deref()), (None, None));
    // A raw name goes back verbatim, so it is never changed: one that could
    // display as another name is refused.
    assert_eq!(catalog.tools.len(), 1, "{:?}", catalog.warnings);
    let warnings = catalog.warnings.join("\n");
    assert!(warnings.contains("bidirectional formatting character"), "{warnings}");
    assert!(!warnings.chars().any(|c| is_display_hazard(c) && c != '\n'), "{warnings:?}");
    binding.close().await;
}
