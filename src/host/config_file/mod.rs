//! The MCP server lists users already keep for their agents and editors,
//! read into [`Definition`]s.
//!
//! # The shapes read
//!
//! Claude Desktop (`claude_desktop_config.json`), Cursor (`mcp.json`),
//! Claude Code (`.mcp.json`) and others keep an `mcpServers` object; VS Code
//! (`.vscode/mcp.json`) keeps `servers`, and `mcp.servers` in its settings.
//! Every one of those objects present in a file is read, entry by entry:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
//!                "env": { "DEBUG": "0" }, "cwd": "/tmp" },
//!     "search": { "url": "https://example.com/mcp", "type": "http",
//!                 "headers": { "Authorization": "Bearer ${env:SEARCH_TOKEN}" } }
//!   },
//!   "servers": {
//!     "github": { "type": "stdio", "command": "github-mcp", "args": ["stdio"] }
//!   }
//! }
//! ```
//!
//! | `type` | needs | transport |
//! | --- | --- | --- |
//! | `"stdio"`, or none with `command` | `command`; `args`, `env`, `cwd` optional | [`StdioFactory`] (the child still gets only the inherited allowlist plus `env`) |
//! | `"streamable-http"`, `"streamableHttp"` | `url`; `headers` optional | streamable HTTP |
//! | `"http"`, or none with `url` | `url`; `headers` optional | streamable HTTP, falling back to HTTP+SSE (as VS Code does for `"http"`) when the profile allows `legacy_sse`; a fallback is reported in `applied_tolerances` |
//! | `"sse"` | `url`; `headers` optional | HTTP+SSE (2024-11-05) |
//!
//! Any entry may also say which of its tools stay in front of the model
//! when a host defers tool definitions: `"alwaysLoad": true` (all of
//! them), or a list of the server's tool names (see
//! [`AlwaysLoad`](crate::AlwaysLoad) and
//! [`providers::exposure`](crate::providers::exposure)).
//!
//! Files may hold `//` and `/* */` comments and trailing commas, as VS Code
//! and Cursor allow. A file is at most 1 MiB and holds at most
//! 256 entries; reading it is blocking file I/O (one bounded
//! read).
//!
//! # What goes wrong, and where it is reported
//!
//! Everything in such a file is untrusted input.
//!
//! - A file that cannot be read, is too large, is not JSON, or has none of
//!   the objects above fails the whole load with `invalid_config`.
//! - An entry that cannot become a definition (a missing `command`, a
//!   value of the wrong type, a variable that is not set, a name a binding
//!   cannot have, an unknown `type`) is an [`Issue`] in
//!   [`Loaded::errors`] naming the entry and the field; the other entries
//!   still load.
//! - A field this crate does not know (Cline's `autoApprove`, a newer
//!   client's key, a typo) is a warning in [`Loaded::warnings`] and is
//!   ignored, as are VS Code's `inputs` (so `${input:…}` references fail),
//!   `envFile` (never read: a config file does not get to make this process
//!   read other files), and an entry with `"disabled": true` (not loaded).
//!
//! No issue quotes a value from the file: an `env` value or a header may be
//! a secret, a URL may carry a token. Issues name fields and variables only.
//!
//! # Variables
//!
//! In `command`, `args`, `env` values, `cwd`, `url` and `headers` values:
//!
//! | written | becomes |
//! | --- | --- |
//! | `${env:NAME}` (VS Code, Cursor) | the environment variable `NAME` |
//! | `${NAME}` (Claude Code) | the same |
//! | `${env:NAME:-default}`, `${NAME:-default}` | `NAME`, or `default` when it is not set |
//!
//! `NAME` is `[A-Za-z_][A-Za-z0-9_]*`. A variable that is not set (without a
//! default) is an error naming the entry, the field and the variable. So are
//! `${input:…}`, editor variables such as `${workspaceFolder}` and
//! `${userHome}`, and any other `${…}`: this crate cannot know their values
//! and will not guess. A `$` not followed by `{` is kept as it is; there is
//! no escape for a literal `${`. Substituted values are inserted verbatim
//! and never scanned again. Keys (entry names, `env` names, header names)
//! are never substituted. A value is at most 64 KiB after
//! substitution.
//!
//! # Our own keys: `x-mcp-stack`
//!
//! What these files have no words for goes under one namespaced key per
//! entry, `"x-mcp-stack"`, which the editors ignore (or merely warn
//! about):
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "github.com/acme": {
//!       "command": "acme-mcp",
//!       "x-mcp-stack": {
//!         "name": "acme",
//!         "timeouts": { "startupMs": 10000, "requestMs": 120000, "elicitationMs": 300000 },
//!         "limits": { "maxConcurrentRequests": 4, "maxTextResultBytes": 262144 },
//!         "toolFilter": { "allow": ["search", "read"], "deny": ["delete"] },
//!         "profile": "strict/v1",
//!         "parallelCalls": true,
//!         "logLevel": "warning",
//!         "allowRedirects": false,
//!         "protocol": "auto"
//!       }
//!     }
//!   }
//! }
//! ```
//!
//! | key | sets |
//! | --- | --- |
//! | `name` | the binding name, when the entry's own name is not one (`[A-Za-z0-9_-]`, 1 to 32 bytes) |
//! | `timeouts.startupMs`, `.requestMs`, `.elicitationMs`, `.discoverMs` | [`Timeouts`](crate::Timeouts), in milliseconds (1 ms to one day) |
//! | `limits.<name>` | a [`Limits`](crate::Limits) field, camelCase (`maxFrameBytes`, `maxCatalogItems`, …), at least 1 |
//! | `toolFilter.allow`, `.deny` | the [`ToolFilter`](crate::ToolFilter), by raw name |
//! | `profile` | the compatibility profile: `strict/v1`, `default/v3` (the default), `default/v2`, `default/v1`, `legacy/v3`, `legacy/v2`, `legacy/v1` |
//! | `parallelCalls` | `Definition::allow_parallel_calls` |
//! | `logLevel` | `Definition::log_level` (`debug` … `emergency`) |
//! | `allowRedirects` | HTTP only: follow redirects (credentials never follow one to another origin) |
//! | `proxy` | HTTP only: the proxy URL every request goes through (user info in it is the proxy's credentials, kept secret); without it the environment's `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY` apply |
//! | `noProxy` | HTTP only: `true` reaches the server directly, whatever the environment names |
//! | `retryRequests` | `Definition::retry_requests`: `false` is one try per request |
//! | `cacheResponses` | `Definition::caching`: `false` sends every list and read to the server, whatever its `ttlMs` |
//! | `repeatableTools.names`, `.trustIdempotentHint` | `Definition::repeatable_tools`: the tools safe to run twice, by raw name, and whether to trust `idempotentHint` |
//! | `caCert` | HTTP only: a PEM file of root certificates trusted besides the platform's (a private CA) |
//! | `clientCert`, `clientKey` | HTTP only: PEM files of the client certificate (with any intermediates) and its private key, for a server that requires mutual TLS; both or neither |
//! | `protocol` | `Definition::protocol`: `auto` (the default), `legacy`, `modern` or one version (`2026-07-28`, `2025-11-25`, …); see [`ProtocolChoice`](crate::config::ProtocolChoice). `"legacy"` is the one line for a server whose tools ask (elicitation, roots) through server-initiated requests on 2026-07-28 and that the default profile does not recognize |
//!
//! A field left out keeps the crate's default; an unknown key is a warning,
//! a bad value an error for the entry. The proxy URL and the file paths
//! are substituted like any value (`"${env:HOME}/certs/ca.pem"`); a
//! relative path is relative to the working directory; the files are read
//! when the file is parsed (1 MiB each at most), so a missing or bad one is
//! an error for its entry, naming the field, never quoting the content.
//!
//! ```
//! use mcp_stack::host::config_file;
//!
//! let text = r#"{ "mcpServers": { "files": { "command": "files-mcp", "args": ["--root", "${env:HOME}"] } } }"#;
//! let loaded = config_file::parse(text, &|name| (name == "HOME").then(|| "/home/me".to_string())).unwrap();
//! assert_eq!(loaded.definitions[0].name(), "files");
//! assert!(loaded.errors.is_empty());
//! ```
//!
//! [`StdioFactory`]: crate::transport::stdio::StdioFactory

mod entry;
mod extension;
mod jsonc;
mod ordered;
mod vars;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::binding::Definition;
use crate::error::{normalize_message, Error, FailureClass};
use ordered::Ordered;

/// The largest config file read, in bytes.
pub(crate) const MAX_CONFIG_BYTES: usize = 1 << 20;
/// The most entries read from one file; the rest are errors.
pub(crate) const MAX_ENTRIES: usize = 256;
/// The most `args`, `env` entries or `headers` one entry may have.
pub(crate) const MAX_LIST_ITEMS: usize = 256;
/// The longest string value, in bytes, after substitution.
pub(crate) const MAX_VALUE_BYTES: usize = 64 << 10;
/// The entry key that holds this crate's own settings (see the
/// [module docs](self#our-own-keys-x-mcp-stack)).
pub(crate) const EXTENSION_KEY: &str = "x-mcp-stack";
/// The most warnings kept; further ones are counted in one last warning.
pub(crate) const MAX_ISSUES: usize = 256;

/// Something wrong with a config file, an entry or a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The entry's name as the file spells it (bounded), or `None` for the
    /// file itself.
    pub entry: Option<String>,
    /// The field, as a path (`args[2]`, `env.TOKEN`,
    /// `x-mcp-stack.timeouts.startupMs`), or `None` for the whole entry.
    pub field: Option<String>,
    /// What is wrong. It never quotes a value from the file.
    pub message: String,
}

impl Issue {
    fn new(entry: &str, field: &str, message: impl AsRef<str>) -> Issue {
        Issue {
            entry: Some(normalize_message(entry, 128)),
            field: (!field.is_empty()).then(|| normalize_message(field, 256)),
            message: normalize_message(message.as_ref(), 512),
        }
    }

    fn file(message: impl AsRef<str>) -> Issue {
        Issue { entry: None, field: None, message: normalize_message(message.as_ref(), 512) }
    }

    /// This issue as an `invalid_config` error.
    pub fn to_error(&self) -> Error {
        Error::new(FailureClass::InvalidConfig, self.to_string()).with_op("config_file")
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.entry, &self.field) {
            (Some(entry), Some(field)) => write!(f, "entry {entry:?}, field {field:?}: {}", self.message),
            (Some(entry), None) => write!(f, "entry {entry:?}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// What [`load`] or [`parse`] made of a file.
#[derive(Debug, Default)]
pub struct Loaded {
    /// One definition per entry that could be read, in file order.
    pub definitions: Vec<Definition>,
    /// What was ignored: unknown fields, `inputs`, `envFile`, disabled
    /// entries. Bounded by 256.
    pub warnings: Vec<Issue>,
    /// The entries that could not be read, each naming its field. Bounded
    /// by 256.
    pub errors: Vec<Issue>,
}

/// Reads the file at `path` (at most 1 MiB), substituting
/// variables from this process's environment.
pub fn load(path: impl AsRef<Path>) -> Result<Loaded, Error> {
    load_with(path, &|name| std::env::var(name).ok())
}

/// As [`load`], with variables looked up by `env`.
pub fn load_with(path: impl AsRef<Path>, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, Error> {
    let fail = |what: String| Error::new(FailureClass::InvalidConfig, what).with_op("config_file");
    // The path is the caller's own (never a server's): it says which file.
    let shown = path.as_ref().display();
    let file = std::fs::File::open(path.as_ref())
        .map_err(|e| fail(format!("cannot open the config file {shown}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("cannot read the config file {shown}: {e}")))?;
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(fail(format!("the config file is over {MAX_CONFIG_BYTES} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|_| fail("the config file is not UTF-8".into()))?;
    parse(&text, env)
}

/// Reads the text of a config file, with variables looked up by `env`.
/// Fails with `invalid_config` only when the file as a whole is unusable;
/// see the [module docs](self#what-goes-wrong-and-where-it-is-reported).
pub fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, Error> {
    let fail = |what: String| Error::new(FailureClass::InvalidConfig, what).with_op("config_file");
    if text.len() > MAX_CONFIG_BYTES {
        return Err(fail(format!("the config file is over {MAX_CONFIG_BYTES} bytes")));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let not_json = |e: serde_json::Error| {
        fail(format!("the config file is not JSON (line {}, column {})", e.line(), e.column()))
    };
    let root: Ordered<Box<RawValue>> = serde_json::from_str(&jsonc::strip(text)).map_err(not_json)?;
    let Ordered::Object(root) = root else {
        return Err(fail("the config file is not a JSON object".into()));
    };
    let mut loaded = Loaded::default();
    let mut lists: Vec<(&'static str, Box<RawValue>)> = Vec::new();
    for (key, value) in root {
        match key.as_str() {
            "mcpServers" => lists.push(("mcpServers", value)),
            "servers" => lists.push(("servers", value)),
            "mcp" => match serde_json::from_str::<Ordered<Box<RawValue>>>(value.get()).map_err(not_json)? {
                Ordered::Object(section) => {
                    lists.extend(section.into_iter().filter(|(k, _)| k == "servers").map(|(_, v)| ("mcp.servers", v)))
                }
                Ordered::Not(_) => push(&mut loaded.warnings, Issue::file("the top-level key \"mcp\" is ignored")),
            },
            // An empty list asks nothing, so ignoring it loses nothing.
            "inputs" if value.get().trim() == "[]" => {}
            "inputs" => push(
                &mut loaded.warnings,
                Issue::file(
                    "the file's \"inputs\" are ignored: VS Code asks a person for them; ${input:…} references fail",
                ),
            ),
            other => push(
                &mut loaded.warnings,
                Issue::file(format!("the top-level key {:?} is ignored", normalize_message(other, 64))),
            ),
        }
    }
    if lists.is_empty() {
        return Err(fail("the config file has no \"mcpServers\" or \"servers\" object".into()));
    }
    let mut seen = 0usize;
    for (list, value) in lists {
        let entries = match serde_json::from_str::<Ordered<Value>>(value.get()).map_err(not_json)? {
            Ordered::Object(entries) => entries,
            Ordered::Not(kind) => {
                let issue =
                    Issue::file(format!("\"{list}\" is {kind}, not a JSON object; nothing in it was read"));
                push(&mut loaded.errors, issue);
                continue;
            }
        };
        for (name, value) in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                let issue =
                    Issue::new(&name, "", format!("over the limit of {MAX_ENTRIES} entries; not read"));
                push(&mut loaded.errors, issue);
                continue;
            }
            read_entry(&mut loaded, &name, value, env);
        }
    }
    Ok(loaded)
}

fn read_entry(loaded: &mut Loaded, name: &str, value: Value, env: &dyn Fn(&str) -> Option<String>) {
    let mut warnings = Vec::new();
    let outcome = entry::read(name, value, env, &mut warnings);
    for w in warnings {
        push(&mut loaded.warnings, w);
    }
    match outcome {
        Ok(Some(definition)) => {
            if loaded.definitions.iter().any(|d| d.name == definition.name) {
                let issue = Issue::new(
                    name,
                    "",
                    format!("the binding name {:?} is used by an earlier entry", definition.name),
                );
                push(&mut loaded.errors, issue);
            } else {
                loaded.definitions.push(definition);
            }
        }
        Ok(None) => {}
        Err(issue) => push(&mut loaded.errors, issue),
    }
}

fn push(issues: &mut Vec<Issue>, issue: Issue) {
    match issues.len() {
        n if n < MAX_ISSUES - 1 => issues.push(issue),
        n if n == MAX_ISSUES - 1 => issues.push(Issue::file("further issues were not kept")),
        _ => {}
    }
}

/// Takes the string field `field` out of an entry, substituted. `Ok(None)`
/// when absent.
fn take_string(
    entry: &str,
    obj: &mut Map<String, Value>,
    field: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, Issue> {
    match obj.remove(field) {
        None => Ok(None),
        Some(Value::String(s)) => {
            vars::substitute(&s, env).map(Some).map_err(|e| Issue::new(entry, field, e))
        }
        Some(other) => {
            Err(Issue::new(entry, field, format!("must be a string, not {}", extension::kind_of(&other))))
        }
    }
}
