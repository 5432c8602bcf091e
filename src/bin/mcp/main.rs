//! `mcp`: a command-line MCP client for people and scripts, built on
//! mcp-stack's [`Host`].
//!
//! ```text
//! cargo install --path . --features cli          # installs `mcp`
//! mcp --config ~/.cursor/mcp.json servers        # every server in an mcpServers file
//! mcp --config mcp.json tools                    # every server's tools, by model name
//! mcp --config mcp.json call mcp__files__read_file '{"path":"README.md"}'
//! mcp --stdio "<command> <args>" --env TOKEN=… tools --json
//! mcp --http https://host/mcp --header 'Authorization: Bearer …' tools
//! mcp --sse https://host/sse tools               # 2024-11-05 HTTP+SSE
//! mcp --http https://host/mcp --oauth tools       # OAuth in the browser, tokens kept
//! mcp tools                                      # the built-in demo server
//! ```
//!
//! # Servers
//!
//! `--config FILE` reads the `mcpServers` (Claude Desktop, Cursor, Claude
//! Code) or `servers` (VS Code) file users already keep, through
//! [`config_file`]: every readable entry becomes a binding; an entry that
//! cannot be read, and every ignored field, is reported on stderr and the
//! others still load. `--stdio`, `--http` or `--sse` adds one more server,
//! named by `--binding NAME` (default `server`). With none of these, the
//! command talks to the built-in demo server.
//!
//! - `--stdio "<command> <args>"` runs the server as a child process (split
//!   like a shell). The child inherits only a small allowlist of this
//!   process's environment; `--env KEY=VALUE` (repeatable) gives it more.
//! - `--http URL` speaks streamable HTTP and falls back to HTTP+SSE when the
//!   server refuses it, as the specification describes; a fallback is
//!   reported as `legacy_sse` in the catalog's `appliedTolerances`.
//! - `--sse URL` speaks the 2024-11-05 HTTP+SSE transport only.
//! - `--protocol auto|legacy|modern|VERSION` chooses the protocol era of
//!   every server: `auto` (the default) sends `server/discover` and speaks
//!   2026-07-28 to a server that answers it, the `initialize` handshake to
//!   any other (a server that does not answer at all costs
//!   `--discover-timeout-ms` once); `legacy` and `modern` speak one era
//!   only; a version (`2026-07-28`, `2025-11-25`, …) exactly that one. The
//!   version chosen is the `PROTOCOL` column of `servers` and the
//!   `protocolVersion` of `servers --json` and of each catalog in
//!   `tools --json`.
//! - `--header 'Name: value'` (repeatable) adds a header to every HTTP
//!   request; its value is never printed. Redirects are refused unless
//!   `--allow-redirects`, and then credentials never follow one to another
//!   origin.
//! - `--oauth` authorizes with OAuth 2.1 when the server answers 401: the
//!   authorization URL is printed on stderr (`--open-browser` opens it), a
//!   listener on 127.0.0.1 (`--redirect-port`, else any free port) takes
//!   the browser's redirect, and the tokens are kept, one private file per
//!   server origin, in `--token-dir` (default
//!   `$XDG_CONFIG_HOME/mcp-stack/tokens`, else `~/.config/mcp-stack/tokens`),
//!   so the next run needs no browser until they can no longer be
//!   refreshed. The client registers itself where the server allows it;
//!   `--client-id` (and `--client-secret`) name one registered beforehand;
//!   its credentials are only ever sent to the authorization server
//!   `--issuer URL` names, or else to the first one that grants it a token
//!   (that binding is kept in `--token-dir`).
//!   A machine client takes `--client-credentials` (no browser, no
//!   listener); `--private-key FILE` authenticates it with
//!   `private_key_jwt`, and `--dpop-key FILE` binds the tokens to a key
//!   (DPoP). Both files are PEM private keys; their content is never
//!   printed.
//!
//! Servers connect concurrently (64 at a time), each within its startup
//! timeout.
//! Every timeout and limit of a definition is a flag named after its field
//! (`--startup-timeout-ms`, `--max-frame-bytes`, …); `--help` shows each
//! default. A flag overrides the value of every server, the config file's
//! `x-mcp-stack` settings included.
//!
//! # Commands
//!
//! - `servers`: each binding's state, transport, protocol version, tool
//!   count and last failure. It reports a server that could not connect
//!   instead of failing.
//! - `tools`: every connected server's tools, by model name
//!   (`mcp__<binding>__<tool>`), as a model is offered them: a tool for
//!   apps only is counted, not listed (`apps` lists it; `--json` has every
//!   tool).
//! - `call NAME 'JSON'`: calls a tool by model name, routed by the host
//!   (fail closed: an unknown or ambiguous name is refused before anything
//!   is sent). A raw name (the server's own) works when there is one server,
//!   or with `--server NAME`; with several, a raw name is refused naming the
//!   servers that list it. A name no server lists is refused before any
//!   I/O (`not_found`, exit 2) with the closest names offered, unless that
//!   server's tool list is stale (then it may be new, and it is sent).
//! - `call NAME 'JSON' --task` (`--ttl-ms MS`: how long the server is asked
//!   to keep it) runs the call as a task at a server that offers tasks for
//!   the tool, shows each status change as it comes, then prints the
//!   result (see the `tasks` module). `tasks list`, `tasks get ID`, `tasks
//!   result ID` (waits) and `tasks cancel ID` reach one server's tasks.
//! - Arguments (`call`, `get-prompt`) are inline JSON, `-` (read from
//!   stdin) or `@FILE`, up to `--max-frame-bytes` (4 MiB by default; Linux
//!   caps one command-line argument at 128 KiB). Unusable arguments are
//!   `invalid_arguments` (exit 2). Prompt arguments are strings: a number
//!   or a boolean is sent as its text, anything else is refused.
//! - `prompts`, `get-prompt NAME 'JSON'`, `resources`, `templates`,
//!   `read URI [--output FILE]`: against one server (`--server NAME` when
//!   there are several). A server that does not advertise prompts or
//!   resources is not asked; its list is empty, and the text output says
//!   so. `read` prints text, and for a binary item its size and MIME type;
//!   `--output FILE` saves the first item's bytes (or text).
//! - `apps` lists every server's app tools (MCP Apps): who may see and
//!   call each (`model`, `app`) and its `ui://` resource. `read-app TOOL
//!   [--output FILE]` reads the tool's app (checked: one item,
//!   `text/html;profile=mcp-app`, within the limits) and prints the HTML
//!   on stdout, its fingerprint, CSP origins and permissions on stderr; it
//!   is never rendered or followed.
//! - `skills list` lists one server's skills (nothing fetched); `skills get
//!   NAME [--out DIR]` fetches one, every file verified against the listing
//!   (`verification_failed`, exit 4, when one differs), and prints its
//!   `SKILL.md` or writes every file under DIR (a path that would leave DIR
//!   is refused before anything is written). The CLI declares the Apps and
//!   Skills extensions to every server.
//! - `inspect [--listen 127.0.0.1:PORT]` serves a web inspector of these
//!   servers on loopback until Ctrl-C or SIGTERM; the first line of stdout
//!   is its URL with its token (see the `inspect` module and
//!   `docs/inspect.md`). Elicitations are answered on its page.
//!
//! # What the server may ask
//!
//! - **Elicitation.** The CLI asks on the terminal (stderr for the
//!   questions, stdin for the answers), field by field from the requested
//!   schema; an empty line takes the default or skips an optional field;
//!   `:decline` or `:cancel` at any prompt answers that. A URL request shows
//!   the URL in full (never opened) and asks for consent. With
//!   `--accept-defaults` it accepts the schema's defaults (and consents to a
//!   URL) without prompting, or cancels when a required field has none.
//! - **Roots.** `--root DIR` (repeatable) offers DIR as a `file://` root.
//! - **Logs.** `--log-level LEVEL` (`debug` … `emergency`) turns the
//!   servers' logs on and prints them on stderr as `[binding] level logger:
//!   text`. Without it no logs are asked for (a config entry's `logLevel`
//!   alone does not turn them on; `--log-level` overrides it).
//!
//! # Output
//!
//! Server text is untrusted: wherever the CLI prints it for a person, escape
//! sequences, other control characters (but line breaks and tabs) and
//! bidirectional overrides, isolates and marks are shown as visible escapes
//! (`\u{1b}`), never sent to the terminal raw. `--json` output is exact.
//!
//! A call that reports progress shows a bar when stderr is a terminal, plain
//! `progress N/T message` lines on stderr otherwise, nothing with `--json`.
//! Log records, events or progress notifications the CLI had to drop are
//! counted on stderr at exit. A closed stdout (`mcp tools | head -1`) ends
//! the command quietly, with the exit code it would have had.
//! `RUST_LOG=mcp_stack=debug` turns the crate's tracing on, on stderr
//! (`mcp_stack::request=info`: one line per tool call; see
//! `mcp_stack::layer::trace`).
//!
//! # `--json`
//!
//! One JSON document on stdout, serde's form of the crate's types
//! (camelCase, `null` for what is absent). Every document carries
//! `formatVersion` (now `2`), raised whenever a shape below changes, so a
//! script can check it. Version 1 (the documents had no such field) printed
//! `tools` as the one server's catalog object, `{binding, tools, …}`; since
//! version 2 it is `{catalogs: [...], warnings}` for any number of servers:
//!
//! - `servers`: `{ servers: [Status & {toolCount}] }` — each binding's
//!   `Status` (`binding`, `state`, `protocolVersion`, `server`,
//!   `transportKind`, `redactedOrigin`, `failure`, `droppedLogs`, …) and
//!   its adopted tool count.
//! - `tools`: `{ catalogs: [Catalog], warnings }` — each connected binding's
//!   adopted catalog (`binding`, `generation`, `digest`, `protocolVersion`,
//!   `server`, `capabilities`, `instructions`, `tools: [{rawName, modelName,
//!   title, description, inputSchema, outputSchema, inputSchemaDigest,
//!   outputSchemaDigest, annotations, meta, warnings}]`, `prompts`,
//!   `resources`, `resourceTemplates`, `warnings`, `appliedTolerances`);
//!   a tool's `meta` is its `_meta`. `warnings` are the merged catalog's.
//! - `call`: a `ToolResult`, `{ isError, content, structuredContent,
//!   warnings }`; with `--task` (and `tasks result`) also `task`, the
//!   task's last `TaskInfo` (`id`, `status`, `message`, `createdAt`,
//!   `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`).
//! - `tasks list`: `{ tasks: [TaskInfo], warnings }`; `tasks get` and
//!   `tasks cancel`: `{ task: TaskInfo }`.
//! - `prompts`: `{ prompts, warnings }`; `get-prompt`: `{ description,
//!   messages, warnings }`; `resources`: `{ resources, warnings }`;
//!   `templates`: `{ resourceTemplates, warnings }`; `read`: `{ contents,
//!   warnings }`.
//! - `apps`: `{ apps: [{binding, rawName, modelName, resourceUri,
//!   visibility: {model, app}, warnings}] }`; `read-app`: an `AppResource`,
//!   `{ uri, html, meta: {csp, permissions, domain, prefersBorder},
//!   fingerprint, generation, drift, warnings }`.
//! - `skills list`: `{ skills: [SkillInfo], warnings }`; `skills get`:
//!   `{ skill, files: [{uri, path, size, digest, text | blob}] }`, with
//!   `--out` `{ skill, dir, files: [{uri, path, size, digest}] }`.
//!
//! A failure prints `{ error: {class, message, binding, op, httpStatus?},
//! formatVersion }` with `--json` (`httpStatus` only when an HTTP answer
//! caused it: a 404, a 429, a 503), else `error: <class>: <message>` on
//! stderr.
//!
//! # Exit codes
//!
//! `0` ok; `2` usage (flags, arguments, a tool name no server lists, the
//! config file); `3` could not connect or complete the handshake; `4` the
//! request failed; `5` the tool returned `isError`; `130` interrupted
//! (Ctrl-C): the request in flight was cancelled on the wire and the
//! servers closed, which stderr says.
//!
//! [`Host`]: mcp_stack::host::Host
//! [`config_file`]: mcp_stack::host::config_file

#![forbid(unsafe_code)]

mod args;
mod cli;
mod commands;
mod elicit;
mod extensions;
mod inspect;
mod names;
mod progress;
mod setup;
mod signature;
mod tasks;
mod terminal;

use clap::Parser;
use mcp_stack::host::Host;
use mcp_stack::{Error, ErrorReport, FailureClass, State, Status};
use serde_json::{json, Value};
use std::process::ExitCode;
use std::time::Duration;

use cli::{Cli, Command};
use commands::command;
use setup::{definitions, handlers, read_arguments};
use terminal::{clean, clean_line, err_line, out_line};

pub(crate) const EXIT_USAGE: u8 = 2;
pub(crate) const EXIT_CONNECT: u8 = 3;
pub(crate) const EXIT_CALL: u8 = 4;
pub(crate) const EXIT_TOOL_ERROR: u8 = 5;
/// As a shell reports a process ended by SIGINT (128 + 2).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;
/// How long an interrupted command waits for its cancellation to be sent.
const CANCEL_GRACE: Duration = Duration::from_millis(100);

#[tokio::main]
async fn main() -> ExitCode {
    if std::env::var_os("RUST_LOG").is_some() {
        use std::io::IsTerminal as _;
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            // Colour only for a person: a file or a pipe gets plain text.
            .with_ansi(std::io::stderr().is_terminal())
            .try_init();
    }
    let cli = Cli::parse();
    let json_out = cli.json;
    match run(cli).await {
        Ok(code) => ExitCode::from(code),
        Err((code, report)) => {
            if json_out {
                let _ = out_line(&versioned(json!({ "error": report })).to_string());
            } else {
                err_line(&format!("error: {}: {}", report.class, clean(&report.message)));
            }
            if code == EXIT_INTERRUPTED {
                // A question on the terminal may still wait for a line on a
                // blocking thread, which the runtime would wait for.
                std::process::exit(i32::from(code));
            }
            ExitCode::from(code)
        }
    }
}

pub(crate) type Failure = (u8, ErrorReport);

/// The version of the `--json` documents' shapes (see the module docs):
/// raised whenever a shape changes, so that a script can check it.
const JSON_FORMAT_VERSION: u32 = 2;

/// `document` with its `formatVersion`.
fn versioned(mut document: Value) -> Value {
    if let Some(object) = document.as_object_mut() {
        object.insert("formatVersion".into(), JSON_FORMAT_VERSION.into());
    }
    document
}

pub(crate) fn failure(code: u8, e: &Error) -> Failure {
    (code, e.report())
}

pub(crate) fn usage(message: String) -> Failure {
    failure(EXIT_USAGE, &Error::new(FailureClass::InvalidConfig, message))
}

pub(crate) fn bad_arguments(e: args::BadArguments) -> Failure {
    failure(EXIT_USAGE, &Error::new(FailureClass::InvalidArguments, e.0))
}

async fn run(cli: Cli) -> Result<u8, Failure> {
    // Everything is checked before connecting, so a typo costs no child
    // process.
    let arguments = read_arguments(&cli)?;
    let (mut handlers, capabilities) = handlers(&cli)?;
    let mut definitions = definitions(&cli, capabilities).await?;
    // `inspect` answers elicitations on its page and shows the traffic.
    let inspecting = match &cli.command {
        Command::Inspect { listen } => {
            let hub = inspect::Hub::new();
            (handlers, definitions) = inspect::attach(&hub, handlers, definitions);
            Some((hub, inspect::check_listen(*listen)?))
        }
        _ => None,
    };

    let host = Host::builder().handlers(handlers).build();
    if let Some((name, e)) = host.add_all(definitions).await.into_iter().next() {
        host.close().await;
        return Err(failure(EXIT_USAGE, &e.with_binding(&name)));
    }
    let outcome = match (connected(&cli, &host), inspecting) {
        // The inspector shows every server, connected or not, and ends on
        // Ctrl-C or SIGTERM as its normal end.
        (Ok(()), Some((hub, listen))) => inspect::serve(&host, hub, listen, cli.open_browser).await,
        // Ctrl-C drops the command: its request in flight is cancelled on
        // the wire (notifications/cancelled, or its HTTP stream closed) and
        // the host is closed as after any command.
        (Ok(()), None) => tokio::select! {
            outcome = command(&cli, &host, arguments) => outcome,
            _ = tokio::signal::ctrl_c() => {
                // The dropped call hands its cancellation to a task of its
                // own; a short, bounded grace lets it reach the wire before
                // the host closes the connections.
                tokio::time::sleep(CANCEL_GRACE).await;
                Err(failure(EXIT_INTERRUPTED, &Error::new(
                    FailureClass::Cancelled,
                    "interrupted: the request in flight was cancelled and its server told so",
                )))
            }
        },
        (Err(e), _) => Err(e),
    };
    report_dropped(&host.status());
    host.close().await;
    let output = outcome?;
    if cli.json {
        let _ = out_line(&versioned(output.document).to_string());
    } else {
        for line in &output.lines {
            if out_line(line).is_err() {
                break;
            }
        }
    }
    Ok(output.code)
}

/// After connecting: a server that could not connect is reported on stderr
/// (by `servers` in its table instead); when none connected, the command
/// fails with the first one's failure.
fn connected(cli: &Cli, host: &Host) -> Result<(), Failure> {
    if matches!(cli.command, Command::Servers | Command::Inspect { .. }) {
        return Ok(());
    }
    let statuses = host.status();
    let failed: Vec<&Status> = statuses.iter().filter(|s| s.state == State::Failed).collect();
    if failed.len() == statuses.len() {
        if let Some(status) = failed.first() {
            let f = status.failure.clone().unwrap_or_else(|| mcp_stack::Failure {
                class: FailureClass::TransportClosed,
                message: "could not connect".into(),
                http_status: None,
            });
            let mut e = Error::new(f.class, f.message).with_binding(&status.binding).with_op("connect");
            if let Some(code) = f.http_status {
                e = e.with_http_status(code);
            }
            return Err(failure(EXIT_CONNECT, &e));
        }
    }
    for status in failed {
        let why = status.failure.as_ref().map(|f| format!("{}: {}", f.class, clean_line(&f.message)));
        err_line(&format!(
            "warning: server {} is not connected: {}",
            status.binding,
            why.unwrap_or_else(|| "failed".into())
        ));
    }
    Ok(())
}

/// What was dropped on the way to this process, on stderr.
fn report_dropped(statuses: &[Status]) {
    for line in dropped_lines(statuses) {
        err_line(&line);
    }
}

/// One line per binding that dropped log records, events or progress
/// notifications (because this process fell behind), none for the others.
fn dropped_lines(statuses: &[Status]) -> Vec<String> {
    let mut lines = Vec::new();
    for s in statuses {
        let parts: Vec<String> = [
            (s.dropped_logs, "log records"),
            (s.dropped_events, "events"),
            (s.dropped_progress, "progress notifications"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !parts.is_empty() {
            lines.push(format!("warning: server {} dropped {}", s.binding, parts.join(", ")));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_stack::handlers::Handlers;
    use mcp_stack::{Binding, Definition};

    #[tokio::test]
    async fn what_was_dropped_is_reported_per_server_and_nothing_when_nothing_was() {
        let binding =
            Binding::connect(Definition::new("demo", mcp_stack::demo::factory()), Handlers::default())
                .await
                .unwrap();
        let quiet = binding.status();
        binding.close().await;
        assert_eq!(dropped_lines(std::slice::from_ref(&quiet)), Vec::<String>::new());
        let mut logs = quiet.clone();
        logs.dropped_logs = 3;
        let mut all = quiet.clone();
        (all.binding, all.dropped_logs, all.dropped_events, all.dropped_progress) = ("b".into(), 1, 2, 5);
        assert_eq!(
            dropped_lines(&[logs, quiet, all]),
            [
                "warning: server demo dropped 3 log records",
                "warning: server b dropped 1 log records, 2 events, 5 progress notifications",
            ]
        );
    }
}
