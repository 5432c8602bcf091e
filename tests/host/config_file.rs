//! The `mcpServers` / `servers` files users already have, read into
//! definitions: one fixture in each of the Claude Desktop, Cursor and VS Code
//! shapes, with variables and bad entries.

use mcp_stack::host::config_file::{self, Issue, Loaded};
use mcp_stack::{host::Host, CallOpts, FailureClass};
use mcp_stack::{AlwaysLoad, Limits, ProtocolChoice, Timeouts};
use std::path::PathBuf;
use std::time::Duration;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/config").join(name)
}

fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
}

fn names(loaded: &Loaded) -> Vec<&str> {
    loaded.definitions.iter().map(|d| d.name()).collect()
}

fn error_for<'a>(loaded: &'a Loaded, entry: &str) -> &'a Issue {
    loaded
        .errors
        .iter()
        .find(|i| i.entry.as_deref() == Some(entry))
        .unwrap_or_else(|| panic!("no error for {entry}: {:?}", loaded.errors))
}

fn has_warning(loaded: &Loaded, entry: Option<&str>, field: &str) -> bool {
    loaded.warnings.iter().any(|w| w.entry.as_deref() == entry && w.field.as_deref() == Some(field))
}

/// Nothing the loader says or prints holds a secret from the file or the
/// environment.
fn assert_no_secret(loaded: &Loaded, secrets: &[&str]) {
    let mut said = format!("{:?}", loaded.definitions);
    for issue in loaded.warnings.iter().chain(&loaded.errors) {
        said.push_str(&issue.to_string());
    }
    for secret in secrets {
        assert!(!said.contains(secret), "{secret} leaked: {said}");
    }
}

#[test]
fn claude_desktop_stdio_entries_load_and_a_bad_entry_does_not_stop_the_others() {
    let env = env_of(&[("PROJECTS_DIR", "/Users/me/projects"), ("GH_TOKEN", "ghp_s3cret")]);
    let loaded = config_file::load_with(fixture("claude_desktop.json"), &env).unwrap();
    assert_eq!(names(&loaded), ["filesystem", "github"]);
    for d in &loaded.definitions {
        assert_eq!(d.transport().kind(), "stdio");
    }
    assert_eq!(loaded.definitions[1].transport().redacted_origin().as_str(), "stdio:docker");

    let sqlite = error_for(&loaded, "sqlite");
    assert_eq!(sqlite.field.as_deref(), Some("args"));
    let brave = error_for(&loaded, "brave-search");
    assert_eq!(brave.field.as_deref(), Some("env.BRAVE_API_KEY"));
    assert!(brave.message.contains("BRAVE_API_KEY") && brave.message.contains("not set"), "{brave}");
    assert_eq!(loaded.errors.len(), 2);
    assert_eq!(brave.to_error().class(), FailureClass::InvalidConfig);
    assert!(loaded.warnings.iter().any(|w| w.entry.is_none() && w.message.contains("globalShortcut")));
    assert_no_secret(&loaded, &["ghp_s3cret"]);
}

#[test]
fn cursor_remote_entries_and_our_own_keys() {
    let env = env_of(&[("CONTEXT7_API_KEY", "c7-s3cret"), ("DOCS_TOKEN", "docs-s3cret")]);
    let loaded = config_file::load_with(fixture("cursor.json"), &env).unwrap();
    assert_eq!(names(&loaded), ["linear", "context7", "internal-docs", "tickets"]);
    let kinds: Vec<&str> = loaded.definitions.iter().map(|d| d.transport().kind()).collect();
    // No `type` with a `url`: streamable HTTP with the HTTP+SSE fallback.
    assert_eq!(kinds, ["sse", "http", "streamable_http", "stdio"]);
    assert_eq!(loaded.definitions[2].transport().redacted_origin().as_str(), "https://docs.internal.example");

    let docs = &loaded.definitions[2];
    assert_eq!(docs.timeouts().startup(), Duration::from_secs(10));
    assert_eq!(docs.timeouts().request(), Duration::from_secs(120));
    assert_eq!(docs.timeouts().elicitation(), Timeouts::default().elicitation(), "left out: the default");
    assert_eq!(docs.limits().max_concurrent_requests(), 2);
    assert_eq!(docs.limits().max_text_result_bytes(), 65536);
    assert_eq!(docs.limits().max_frame_bytes(), Limits::default().max_frame_bytes(), "left out: the default");
    assert_eq!(docs.tool_filter().allowed(), Some(&["search".to_string(), "read_page".to_string()][..]));
    assert_eq!(docs.tool_filter().denied(), ["delete_page"]);
    assert_eq!(docs.compat().id(), "strict/v1");
    assert!(docs.allow_parallel_calls());
    assert_eq!(docs.log_level().as_str(), "warning");
    assert_eq!(docs.protocol(), &ProtocolChoice::Pinned("2026-07-28".into()), "x-mcp-stack.protocol applied");
    assert!(!has_warning(&loaded, Some("internal-docs"), "x-mcp-stack.protocol"));
    assert_eq!(loaded.definitions[0].protocol(), &ProtocolChoice::Auto, "left out: the default");
    assert!(has_warning(&loaded, Some("internal-docs"), "x-mcp-stack.colour"), "unknown: a warning");

    let notion = error_for(&loaded, "notion");
    assert_eq!(notion.field.as_deref(), Some("headers.Authorization"));
    assert!(notion.message.contains("NOTION_TOKEN"));
    let bad = error_for(&loaded, "bad-limit");
    assert_eq!(bad.field.as_deref(), Some("x-mcp-stack.limits.maxFrameBytes"));
    assert_eq!(loaded.errors.len(), 2);
    assert_no_secret(&loaded, &["c7-s3cret", "docs-s3cret"]);
}

#[test]
fn vscode_servers_with_comments_inputs_and_editor_variables() {
    let env = env_of(&[("HOME", "/home/me"), ("GH_TOKEN", "ghp_s3cret")]);
    let loaded = config_file::load_with(fixture("vscode.json"), &env).unwrap();
    assert_eq!(names(&loaded), ["memory", "github", "legacy"]);
    let kinds: Vec<&str> = loaded.definitions.iter().map(|d| d.transport().kind()).collect();
    assert_eq!(kinds, ["stdio", "http", "sse"], "\"http\" falls back to HTTP+SSE, as VS Code does");

    assert!(loaded.warnings.iter().any(|w| w.entry.is_none() && w.message.contains("inputs")));
    assert!(has_warning(&loaded, Some("memory"), "envFile"));
    assert!(has_warning(&loaded, Some("off"), "disabled"));
    let perplexity = error_for(&loaded, "perplexity");
    assert_eq!(perplexity.field.as_deref(), Some("env.PERPLEXITY_API_KEY"));
    assert!(perplexity.message.contains("input"), "{perplexity}");
    let files = error_for(&loaded, "workspace-files");
    assert_eq!(files.field.as_deref(), Some("args[0]"));
    assert!(files.message.contains("workspaceFolder"));
    let ws = error_for(&loaded, "old-tool");
    assert_eq!(ws.field.as_deref(), Some("type"));
    assert_eq!(loaded.errors.len(), 3, "{:?}", loaded.errors);
    assert_no_secret(&loaded, &["ghp_s3cret"]);
}

#[test]
fn an_entry_name_that_cannot_be_a_binding_name_is_an_error_unless_renamed() {
    let text = r#"{"mcpServers": {
        "my server": {"command": "x"},
        "renamed": {"command": "x", "x-mcp-stack": {"name": "also bad"}},
        "ok": {"command": "x", "x-mcp-stack": {"name": "fine"}},
        "dup": {"command": "x", "x-mcp-stack": {"name": "fine"}}
    }}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert_eq!(names(&loaded), ["fine"]);
    assert!(error_for(&loaded, "my server").message.contains("x-mcp-stack"));
    assert_eq!(error_for(&loaded, "renamed").field.as_deref(), Some("x-mcp-stack.name"));
    assert!(error_for(&loaded, "dup").message.contains("earlier entry"));
}

#[test]
fn wrong_kinds_of_values_name_their_field_without_quoting_the_value() {
    let text = r#"{"mcpServers": {
        "a": {"command": 7},
        "b": {"command": "x", "env": {"K": 1}},
        "c": {"command": "x", "url": "https://example.com"},
        "d": {},
        "e": "not an object",
        "f": {"command": "x", "x-mcp-stack": {"timeouts": {"startupMs": "soon"}}},
        "g": {"command": "x", "x-mcp-stack": {"profile": "lenient/v9"}},
        "h": {"url": "not a url with s3cret"},
        "i": {"url": "https://example.com", "headers": {"Host": "evil"}},
        "j": {"command": "x", "x-mcp-stack": {"toolFilter": {"allow": "all"}}}
    }}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert!(loaded.definitions.is_empty());
    let field = |entry: &str| error_for(&loaded, entry).field.clone();
    assert_eq!(field("a").as_deref(), Some("command"));
    assert_eq!(field("b").as_deref(), Some("env.K"));
    assert_eq!(field("c").as_deref(), Some("type"));
    assert_eq!(field("d").as_deref(), Some("command"));
    assert_eq!(field("e"), None);
    assert_eq!(field("f").as_deref(), Some("x-mcp-stack.timeouts.startupMs"));
    assert_eq!(field("g").as_deref(), Some("x-mcp-stack.profile"));
    assert_eq!(field("h").as_deref(), Some("url"));
    assert_eq!(field("i").as_deref(), Some("headers.Host"));
    assert_eq!(field("j").as_deref(), Some("x-mcp-stack.toolFilter.allow"));
    assert_no_secret(&loaded, &["s3cret", "evil", "soon", "lenient"]);
}

#[test]
fn a_strict_profile_turns_the_http_sse_fallback_off_instead_of_failing() {
    let text = r#"{"mcpServers": {"r": {"url": "https://example.com/mcp", "x-mcp-stack": {"profile": "strict/v1"}}}}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let d = &loaded.definitions[0];
    assert!(d.transport().tolerances().is_empty());
    let text = r#"{"mcpServers": {"r": {"url": "https://example.com/mcp"}}}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert_eq!(loaded.definitions[0].transport().tolerances().len(), 1);
}

#[test]
fn every_shipped_profile_is_named_and_the_default_is_default_v3() {
    for id in ["strict/v1", "default/v1", "default/v2", "default/v3", "legacy/v1", "legacy/v2", "legacy/v3"] {
        let text =
            format!(r#"{{"mcpServers": {{"s": {{"command": "x", "x-mcp-stack": {{"profile": "{id}"}}}}}}}}"#);
        let loaded = config_file::parse(&text, &|_| None).unwrap();
        assert!(loaded.errors.is_empty(), "{id}: {:?}", loaded.errors);
        assert_eq!(loaded.definitions[0].compat().id(), id);
    }
    let loaded = config_file::parse(r#"{"mcpServers": {"s": {"command": "x"}}}"#, &|_| None).unwrap();
    assert_eq!(loaded.definitions[0].compat().id(), "default/v3");
    // The one line for a server whose tools ask through server-initiated
    // requests and that the default profile does not recognize.
    let text = r#"{"mcpServers": {"s": {"command": "x", "x-mcp-stack": {"protocol": "legacy"}}}}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert_eq!(loaded.definitions[0].protocol(), &mcp_stack::ProtocolChoice::Legacy);
}

#[test]
fn a_file_that_is_not_a_server_list_fails_as_a_whole() {
    for text in ["", "[1]", "{\"mcpServers\": ", "{\"other\": {}}", "{\"mcpServers\": {}, } trailing"] {
        let e = config_file::parse(text, &|_| None).unwrap_err();
        assert_eq!(e.class(), FailureClass::InvalidConfig, "{text}");
    }
    let big = format!("{{\"mcpServers\": {{}}, \"pad\": \"{}\"}}", "x".repeat(MAX_CONFIG_BYTES));
    assert_eq!(config_file::parse(&big, &|_| None).unwrap_err().class(), FailureClass::InvalidConfig);
    let missing = config_file::load(fixture("no-such-file.json")).unwrap_err();
    assert_eq!(missing.class(), FailureClass::InvalidConfig);
    // A list that is not an object is an error, the file still loads.
    let loaded =
        config_file::parse(r#"{"mcpServers": [], "servers": {"a": {"command": "x"}}}"#, &|_| None).unwrap();
    assert_eq!(names(&loaded), ["a"]);
    assert_eq!(loaded.errors.len(), 1);
}

/// The bounds `config_file` documents: the largest file, the most entries.
const MAX_CONFIG_BYTES: usize = 1 << 20;
const MAX_ENTRIES: usize = 256;

#[test]
fn entries_past_the_bound_are_errors() {
    let entries: Vec<String> =
        (0..MAX_ENTRIES + 3).map(|i| format!("\"s{i}\": {{\"command\": \"x\"}}")).collect();
    let text = format!("{{\"mcpServers\": {{{}}}}}", entries.join(","));
    let loaded = config_file::parse(&text, &|_| None).unwrap();
    assert_eq!(loaded.definitions.len(), MAX_ENTRIES);
    assert_eq!(loaded.errors.len(), 3);
}

#[tokio::test]
async fn a_loaded_file_runs_as_a_host() {
    let demo = env!("CARGO_BIN_EXE_mcp-stack-demo");
    let text = r#"{"mcpServers": {
            "demo": {"command": "${DEMO_BIN}", "args": [], "env": {"DEMO_FLAG": "${env:FLAG:-off}"}},
            "broken": {"command": "x", "args": {}}
        }}"#;
    let env = move |name: &str| (name == "DEMO_BIN").then(|| demo.to_string());
    let loaded = config_file::parse(text, &env).unwrap();
    assert_eq!(loaded.errors.len(), 1);
    let host = Host::new();
    assert!(host.add_all(loaded.definitions).await.is_empty());
    let result = host
        .call_tool("mcp__demo__echo", serde_json::json!({"message": "from a file"}), CallOpts::default())
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("from a file"));
    host.close().await;
}

#[test]
fn the_protocol_key_chooses_the_era_and_a_bad_one_is_an_error_for_its_entry() {
    let text = r#"{ "mcpServers": {
        "legacy": { "command": "a", "x-mcp-stack": { "protocol": "legacy", "timeouts": { "discoverMs": 250 } } },
        "modern": { "command": "b", "x-mcp-stack": { "protocol": "modern" } },
        "typo": { "command": "c", "x-mcp-stack": { "protocol": "2019-01-01" } }
    } }"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert_eq!(names(&loaded), ["legacy", "modern"]);
    assert_eq!(loaded.definitions[0].protocol(), &ProtocolChoice::Legacy);
    assert_eq!(loaded.definitions[0].timeouts().discover(), Duration::from_millis(250));
    assert_eq!(loaded.definitions[1].protocol(), &ProtocolChoice::Modern);
    let typo = error_for(&loaded, "typo");
    assert_eq!(typo.field.as_deref(), Some("x-mcp-stack.protocol"));
    assert!(typo.message.contains("auto"), "{typo}");
}

/// An empty `inputs` list asks nothing: ignoring it is no loss, and no
/// warning is given; a list with inputs still warns.
#[test]
fn an_empty_inputs_list_is_not_warned_about() {
    let text = r#"{"inputs": [], "servers": {"m": {"command": "x"}}}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let text = r#"{"inputs": [{"id": "k", "type": "promptString"}], "servers": {"m": {"command": "x"}}}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert!(loaded.warnings.iter().any(|w| w.message.contains("inputs")), "{:?}", loaded.warnings);
}

#[test]
fn network_keys_that_cannot_be_used_name_their_field_without_quoting_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let not_pem = dir.path().join("not-pem.txt");
    std::fs::write(&not_pem, "s3cret-not-a-certificate").unwrap();
    let big = dir.path().join("big.pem");
    std::fs::write(&big, vec![b'A'; (1 << 20) + 1]).unwrap();
    let text = format!(
        r#"{{"mcpServers": {{
        "a": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"caCert": "{missing}"}}}},
        "b": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"caCert": "{not_pem}"}}}},
        "c": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"clientCert": "{not_pem}"}}}},
        "d": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"proxy": "ftp://s3cret@proxy"}}}},
        "e": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"proxy": "http://p:3128", "noProxy": true}}}},
        "f": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"caCert": "{big}"}}}},
        "g": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"caCert": "${{env:CA_DIR}}/ca.pem"}}}},
        "h": {{"url": "https://example.com/mcp", "x-mcp-stack": {{"noProxy": "yes"}}}}
    }}}}"#,
        missing = dir.path().join("missing.pem").display(),
        not_pem = not_pem.display(),
        big = big.display(),
    );
    let loaded = config_file::parse(&text, &|_| None).unwrap();
    assert!(loaded.definitions.is_empty(), "{:?}", loaded.definitions);
    let field = |entry: &str| error_for(&loaded, entry).field.clone();
    assert_eq!(field("a").as_deref(), Some("x-mcp-stack.caCert"));
    assert!(error_for(&loaded, "a").message.contains("cannot open"), "{:?}", error_for(&loaded, "a"));
    assert_eq!(field("b").as_deref(), Some("x-mcp-stack"));
    assert!(error_for(&loaded, "b").message.contains("root certificates"), "{:?}", error_for(&loaded, "b"));
    assert_eq!(field("c").as_deref(), Some("x-mcp-stack.clientCert"));
    assert_eq!(field("d").as_deref(), Some("x-mcp-stack"));
    assert_eq!(field("e").as_deref(), Some("x-mcp-stack.noProxy"));
    assert_eq!(field("f").as_deref(), Some("x-mcp-stack.caCert"));
    assert!(error_for(&loaded, "f").message.contains("larger than"), "{:?}", error_for(&loaded, "f"));
    // An unknown variable is an error for the entry, as everywhere.
    assert_eq!(field("g").as_deref(), Some("x-mcp-stack.caCert"));
    assert_eq!(field("h").as_deref(), Some("x-mcp-stack.noProxy"));
    assert_no_secret(&loaded, &["s3cret"]);
}

#[test]
fn network_keys_on_a_stdio_entry_are_a_warning() {
    let text = r#"{"mcpServers": {"s": {"command": "x", "x-mcp-stack": {"proxy": "http://p:3128"}}}}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    assert_eq!(loaded.definitions.len(), 1);
    assert!(
        loaded.warnings.iter().any(|w| w.message.contains("ignored for a stdio entry")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn retry_keys_set_the_definitions_retries() {
    let text = r#"{"mcpServers": {
        "a": {"url": "https://example.com/mcp", "x-mcp-stack": {"retryRequests": false}},
        "b": {"url": "https://example.com/mcp", "x-mcp-stack": {"repeatableTools": {"names": ["search"], "trustIdempotentHint": true, "also": 1}}},
        "c": {"url": "https://example.com/mcp", "x-mcp-stack": {"repeatableTools": {"names": "search"}}}
    }}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    let a = loaded.definitions.iter().find(|d| d.name() == "a").unwrap();
    assert!(!a.retry_requests());
    let b = loaded.definitions.iter().find(|d| d.name() == "b").unwrap();
    assert!(b.retry_requests(), "left out: the default");
    assert_eq!(
        b.repeatable_tools(),
        &mcp_stack::RepeatableTools::default().with_names(["search"]).with_trust_idempotent_hint(true)
    );
    assert!(has_warning(&loaded, Some("b"), "x-mcp-stack.repeatableTools.also"));
    assert_eq!(error_for(&loaded, "c").field.as_deref(), Some("x-mcp-stack.repeatableTools.names"));
}

#[test]
fn cache_responses_turns_the_response_cache_off() {
    let text = r#"{"mcpServers": {
        "a": {"url": "https://example.com/mcp", "x-mcp-stack": {"cacheResponses": false}},
        "b": {"command": "server"},
        "c": {"url": "https://example.com/mcp", "x-mcp-stack": {"cacheResponses": "no"}}
    }}"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    let a = loaded.definitions.iter().find(|d| d.name() == "a").unwrap();
    assert!(!a.caching().enabled());
    let b = loaded.definitions.iter().find(|d| d.name() == "b").unwrap();
    assert!(b.caching().enabled(), "left out: the default");
    assert_eq!(error_for(&loaded, "c").field.as_deref(), Some("x-mcp-stack.cacheResponses"));
}

#[test]
fn always_load_names_the_tools_a_deferring_host_keeps_loaded() {
    let text = r#"{ "mcpServers": {
        "all": { "command": "a", "alwaysLoad": true },
        "some": { "command": "b", "alwaysLoad": ["search", "read"] },
        "none": { "command": "c" },
        "bad": { "command": "d", "alwaysLoad": "yes" },
        "worse": { "command": "e", "alwaysLoad": ["ok", 7] }
    } }"#;
    let loaded = config_file::parse(text, &|_| None).unwrap();
    let def = |n: &str| loaded.definitions.iter().find(|d| d.name() == n).unwrap();
    assert_eq!(def("all").always_load(), &AlwaysLoad::All);
    assert_eq!(def("some").always_load(), &AlwaysLoad::Tools(vec!["search".into(), "read".into()]));
    assert_eq!(def("none").always_load(), &AlwaysLoad::AsServerAsks);
    assert!(!has_warning(&loaded, Some("some"), "alwaysLoad"), "a known key: no warning");
    for bad in ["bad", "worse"] {
        assert!(loaded.definitions.iter().all(|d| d.name() != bad), "{bad} is refused, not guessed");
        assert_eq!(
            error_for(&loaded, bad).field.as_deref(),
            Some("alwaysLoad"),
            "{bad}: the error names the field"
        );
    }
}
