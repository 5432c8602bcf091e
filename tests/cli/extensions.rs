//! `apps`, `read-app`, `skills list` and `skills get` against the built-in
//! demo server, which offers its app to a client that declares MCP Apps
//! (the CLI does) and one skill.

use super::{code, json_of, mcp, stderr, stdout};

#[test]
fn apps_lists_the_app_tools_and_read_app_prints_or_saves_the_checked_html() {
    let apps = mcp(&["apps"]);
    assert_eq!(code(&apps), 0, "{}", stderr(&apps));
    let text = stdout(&apps);
    let row = text.lines().find(|l| l.starts_with("mcp__server__clock_refresh")).unwrap_or_default();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["mcp__server__clock_refresh", "app", "ui://demo/clock.html"]
    );
    assert!(text.contains("mcp__server__clock ") && text.contains("model, app"), "{text}");
    let document = json_of(&mcp(&["apps", "--json"]));
    let rows = document["apps"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{document}");
    assert_eq!(rows[1]["rawName"], "clock_refresh");
    assert_eq!(rows[1]["visibility"], serde_json::json!({ "model": false, "app": true }));

    // A model is not shown the app-only tool; `tools` says where it is.
    let tools = stdout(&mcp(&["tools"]));
    assert!(tools.contains("mcp__server__clock ") && !tools.contains("clock_refresh"), "{tools}");
    assert!(tools.contains("1 more for apps only"), "{tools}");

    // The HTML on stdout, what the host needs of it on stderr.
    let read = mcp(&["read-app", "clock"]);
    assert_eq!(code(&read), 0, "{}", stderr(&read));
    assert!(stdout(&read).starts_with("<!doctype html>"), "{}", stdout(&read));
    assert!(stderr(&read).contains("ui://demo/clock.html: fingerprint sha256:"), "{}", stderr(&read));

    // Saved exactly, by model name of an app-only tool (its app is read).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.html");
    let saved =
        mcp(&["read-app", "mcp__server__clock_refresh", "--output", file.to_str().unwrap(), "--json"]);
    let document = json_of(&saved);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), document["html"].as_str().unwrap());
    assert_eq!(document["fingerprint"].as_str().unwrap().len(), 64);
    assert_eq!(document["meta"]["prefersBorder"], true);

    let none = mcp(&["read-app", "echo"]);
    assert_eq!(code(&none), 2);
    assert!(stderr(&none).contains("not_found") && stderr(&none).contains("has no app"), "{}", stderr(&none));
}

#[test]
fn skills_are_listed_without_fetching_and_fetched_verified_to_stdout_or_a_folder() {
    let list = mcp(&["skills", "list"]);
    assert_eq!(code(&list), 0, "{}", stderr(&list));
    assert!(stdout(&list).contains("greeting-style  2"), "{}", stdout(&list));
    let document = json_of(&mcp(&["skills", "list", "--json"]));
    assert_eq!(document["skills"][0]["name"], "greeting-style");

    let get = mcp(&["skills", "get", "greeting-style"]);
    assert_eq!(code(&get), 0, "{}", stderr(&get));
    let text = stdout(&get);
    assert!(text.starts_with("---\nname: greeting-style"), "{text}");
    assert!(text.contains("--- STYLE.md (43 bytes, sha256:"), "{text}");
    let document = json_of(&mcp(&["skills", "get", "greeting-style", "--json"]));
    let files = document["files"].as_array().unwrap();
    assert_eq!(
        files.iter().map(|f| f["path"].as_str().unwrap()).collect::<Vec<_>>(),
        ["SKILL.md", "STYLE.md"]
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("greeting-style");
    let saved = mcp(&["skills", "get", "greeting-style", "--out", out.to_str().unwrap()]);
    assert_eq!(code(&saved), 0, "{}", stderr(&saved));
    assert!(stdout(&saved).contains("saved skill greeting-style (2 files"), "{}", stdout(&saved));
    for file in files {
        let written = std::fs::read_to_string(out.join(file["path"].as_str().unwrap())).unwrap();
        assert_eq!(written, file["text"].as_str().unwrap());
    }

    let missing = mcp(&["skills", "get", "nope"]);
    assert_eq!(code(&missing), 2);
    assert!(stderr(&missing).contains("it has: greeting-style"), "{}", stderr(&missing));
}
