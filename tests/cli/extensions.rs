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

/// Issue 43, item 6: `call` refuses an app-only tool by its raw name and by
/// its model name, saying why; `--as-app` is the explicit way in.
#[test]
fn call_refuses_an_app_only_tool_unless_called_as_its_app() {
    for name in ["clock_refresh", "mcp__server__clock_refresh"] {
        let refused = mcp(&["call", name]);
        assert_ne!(code(&refused), 0, "{name}: {}", stdout(&refused));
        let err = stderr(&refused);
        assert!(err.contains("tool_unavailable") && err.contains("app only"), "{name}: {err}");
        assert!(stdout(&refused).trim().is_empty(), "no result printed: {}", stdout(&refused));

        let as_app = mcp(&["call", name, "--as-app"]);
        assert_eq!(code(&as_app), 0, "{name}: {}", stderr(&as_app));
        assert!(stdout(&as_app).trim().parse::<u64>().is_ok(), "the server's clock: {}", stdout(&as_app));
    }
    // An app may not call a tool that is not for apps: none in the demo
    // lacks "app", so a tool for both passes either way.
    let both = mcp(&["call", "clock", "--as-app"]);
    assert_eq!(code(&both), 0, "{}", stderr(&both));
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

/// Issue 43, item 11: `read-app` keeps each app's last fingerprint in the
/// config directory (here `XDG_CONFIG_HOME`, a temporary one), so a run
/// that reads an app changed since the run before warns of it. The server
/// is `tests/fixtures/app_server.py`, which serves its app's HTML from a
/// file the test rewrites between runs.
#[test]
fn read_app_reports_an_app_that_changed_since_the_last_run() {
    let dir = tempfile::tempdir().unwrap();
    let config_home = dir.path().join("config");
    let html = dir.path().join("app.html");
    let server =
        format!("python3 {}/tests/fixtures/app_server.py {}", env!("CARGO_MANIFEST_DIR"), html.display());
    let read_app = |extra: &[&str]| {
        std::process::Command::new(super::MCP)
            .args(["--stdio", &server, "read-app", "show"])
            .args(extra)
            .env("XDG_CONFIG_HOME", &config_home)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run mcp")
    };
    std::fs::write(&html, "<p>one</p>").unwrap();
    let first = read_app(&[]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert_eq!(stdout(&first).trim(), "<p>one</p>");
    assert!(!stderr(&first).contains("changed"), "nothing to compare with: {}", stderr(&first));
    let file = config_home.join("mcp-stack").join("app-fingerprints.json");
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let fingerprint = kept["entries"][0]["fingerprint"].as_str().unwrap().to_string();
    assert!(stderr(&first).contains(&format!("fingerprint sha256:{fingerprint}")), "{}", stderr(&first));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }

    // Unchanged: no warning.
    let same = read_app(&[]);
    assert_eq!(code(&same), 0, "{}", stderr(&same));
    assert!(!stderr(&same).contains("changed"), "{}", stderr(&same));

    // Changed between runs: the next run warns, naming the earlier one.
    std::fs::write(&html, "<p>two</p>").unwrap();
    let changed = read_app(&[]);
    assert_eq!(code(&changed), 0, "{}", stderr(&changed));
    let err = stderr(&changed);
    assert!(
        err.contains(&format!(
            "warning: the app changed since it was read in an earlier run (was sha256:{fingerprint})"
        )),
        "{err}"
    );
    let document = json_of(&read_app(&["--json"]));
    assert_eq!(document["html"], "<p>two</p>");
    assert!(document["drift"].is_null(), "the run before saw this one: {document}");

    // A damaged file is read as empty: no failure, no drift, replaced.
    std::fs::write(&file, "{ not json").unwrap();
    let damaged = read_app(&["--json"]);
    assert_eq!(code(&damaged), 0, "{}", stderr(&damaged));
    assert!(json_of(&damaged)["drift"].is_null());
    std::fs::write(&html, "<p>three</p>").unwrap();
    let document = json_of(&read_app(&["--json"]));
    assert_eq!(document["drift"]["previous"], json_of(&damaged)["fingerprint"]);
    assert!(document["drift"]["previousGeneration"].is_null(), "{document}");
}
