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
//! Every server connects concurrently, each within its startup timeout.
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
//!   (`mcp__<binding>__<tool>`).
//! - `call NAME 'JSON'`: calls a tool by model name, routed by the host
//!   (fail closed: an unknown or ambiguous name is refused before anything
//!   is sent). A raw name (the server's own) works when there is one server,
//!   or with `--server NAME`; with several, a raw name is refused naming the
//!   servers that list it. A name no server lists is refused before any
//!   I/O (`not_found`, exit 2) with the closest names offered, unless that
//!   server's tool list is stale (then it may be new, and it is sent).
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
//!   warnings }`.
//! - `prompts`: `{ prompts, warnings }`; `get-prompt`: `{ description,
//!   messages, warnings }`; `resources`: `{ resources, warnings }`;
//!   `templates`: `{ resourceTemplates, warnings }`; `read`: `{ contents,
//!   warnings }`.
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
mod elicit;
mod names;
mod progress;
mod terminal;

use clap::{Args, Parser, Subcommand};
use mcp_stack::handlers::{root_for_path, ElicitRequest, ElicitationModes, LogMessage};
use mcp_stack::host::{config_file, Host};
use mcp_stack::protocol::LoggingLevel;
#[cfg(feature = "http")]
use mcp_stack::transport::http::{HttpBuilder, SecretHeaders};
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::ProtocolChoice;
use mcp_stack::{
    handlers::Handlers, AllowedCapabilities, Binding, CallOpts, Content, Definition, Error, ErrorReport,
    FailureClass, Limits, State, Status, Timeouts,
};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use progress::ProgressDisplay;
use terminal::{clean, clean_line, err_line, out_line};

const EXIT_USAGE: u8 = 2;
const EXIT_CONNECT: u8 = 3;
const EXIT_CALL: u8 = 4;
const EXIT_TOOL_ERROR: u8 = 5;
/// As a shell reports a process ended by SIGINT (128 + 2).
const EXIT_INTERRUPTED: u8 = 130;
/// How long an interrupted command waits for its cancellation to be sent.
const CANCEL_GRACE: Duration = Duration::from_millis(100);

/// Shown by `mcp -h` and `mcp --help`.
const EXAMPLES: &str = "\
Examples:
  mcp tools                                          the built-in demo server's tools
  mcp --config ~/.cursor/mcp.json servers            every server of a config file
  mcp --stdio 'npx -y @modelcontextprotocol/server-everything stdio' call echo '{\"message\":\"hi\"}'
  mcp --http https://host/mcp --oauth tools          OAuth in the browser, tokens kept
  mcp call mcp__server__add @args.json --json        arguments from a file (or - for stdin)

mcp -h is short; mcp --help shows every flag (connection, authorization,
timeouts, limits) with its default. Each command has its own -h.";

/// Shown by `mcp --help` only.
const LONG_AFTER_HELP: &str = "\
Servers: --config FILE (an mcpServers or VS Code servers file) and/or one of
--stdio, --http (streamable HTTP, falling back to HTTP+SSE) or --sse; with
none, the built-in demo server. Timeouts and limits apply to every server.

Server text is printed with escape sequences, control characters and bidi
overrides made visible (\\u{1b}); --json output is exact, one document with
its formatVersion (see the README).

Exit codes:
  0    ok
  2    usage: flags, arguments, a tool name no server lists, the config file
  3    could not connect or complete the handshake
  4    the request failed
  5    the tool returned isError
  130  interrupted (Ctrl-C): the request in flight was cancelled";

const CALL_EXAMPLES: &str = "\
Examples:
  mcp call echo '{\"message\":\"hi\"}'                      a raw name, with one server
  mcp --config mcp.json call mcp__files__read_file '{\"path\":\"a.txt\"}'
  mcp --config mcp.json --server files call read_file @args.json
  cat args.json | mcp call add -                      arguments from stdin";

const GET_PROMPT_EXAMPLES: &str = "\
Examples:
  mcp prompts                                         what the server offers
  mcp get-prompt greeting '{\"name\":\"Ada\",\"times\":3}'     3 is sent as \"3\"";

const READ_EXAMPLES: &str = "\
Examples:
  mcp resources                                       what the server offers
  mcp read demo://readme
  mcp read demo://logo --output logo.png              save a binary resource";

/// The long help's groups.
const CONNECTION: &str = "Connection";
const AUTHORIZATION: &str = "Authorization (--http, --sse)";
const TIMEOUTS: &str = "Timeouts (every server)";
const LIMITS: &str = "Limits (every server)";

#[derive(Parser, Debug)]
#[command(
    name = "mcp",
    version,
    about = "A bounded MCP client for people and scripts",
    after_help = EXAMPLES,
    after_long_help = format!("{EXAMPLES}\n\n{LONG_AFTER_HELP}")
)]
struct Cli {
    /// Read servers from this mcpServers (Claude Desktop, Cursor) or VS Code
    /// servers JSON file.
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION)]
    config: Option<PathBuf>,
    /// Run this server as a child process ("COMMAND ARGS", split like a
    /// shell).
    #[arg(long, global = true, value_name = "COMMAND", help_heading = CONNECTION)]
    stdio: Option<String>,
    /// An environment variable for the --stdio server, KEY=VALUE
    /// (repeatable). The child inherits only a small allowlist otherwise.
    /// The value is never printed.
    #[arg(long = "env", global = true, value_name = "KEY=VALUE", help_heading = CONNECTION, hide_short_help = true)]
    envs: Vec<EnvArg>,
    /// Connect over streamable HTTP to this URL, falling back to HTTP+SSE
    /// when the server refuses it (reported in appliedTolerances).
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL", help_heading = CONNECTION)]
    http: Option<String>,
    /// Connect over the 2024-11-05 HTTP+SSE transport to this SSE URL.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL", help_heading = CONNECTION)]
    sse: Option<String>,
    /// A header for every HTTP request, as 'Name: value' (repeatable). The
    /// value is never printed.
    #[cfg(feature = "http")]
    #[arg(long = "header", global = true, value_name = "NAME: VALUE", help_heading = CONNECTION, hide_short_help = true)]
    headers: Vec<HeaderArg>,
    /// Follow HTTP redirects (refused otherwise); credentials never follow
    /// one to another origin.
    #[cfg(feature = "http")]
    #[arg(long, global = true, help_heading = CONNECTION, hide_short_help = true)]
    allow_redirects: bool,
    /// Reach the --http/--sse server through this proxy (user info in the
    /// URL is its credentials, never printed). Without it, HTTPS_PROXY,
    /// HTTP_PROXY, ALL_PROXY and NO_PROXY apply.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL", help_heading = CONNECTION, hide_short_help = true, conflicts_with = "no_proxy")]
    proxy: Option<String>,
    /// Reach the --http/--sse server directly, whatever proxy the
    /// environment names.
    #[cfg(feature = "http")]
    #[arg(long, global = true, help_heading = CONNECTION, hide_short_help = true)]
    no_proxy: bool,
    /// Trust the root certificates in this PEM file too (a private CA),
    /// for the --http/--sse server.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION, hide_short_help = true)]
    cacert: Option<PathBuf>,
    /// Present this client certificate (PEM, with any intermediates) to
    /// the --http/--sse server; needs --key.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION, hide_short_help = true, requires = "key")]
    cert: Option<PathBuf>,
    /// The private key (PEM) of --cert.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION, hide_short_help = true, requires = "cert")]
    key: Option<PathBuf>,
    #[cfg(feature = "oauth")]
    #[command(flatten)]
    oauth: OAuthFlags,
    /// The binding name of the --stdio/--http/--sse server ([A-Za-z0-9_-],
    /// 1 to 32 bytes): part of every tool's model name,
    /// mcp__BINDING__TOOL.
    #[arg(long, global = true, default_value = "server", help_heading = CONNECTION, hide_short_help = true)]
    binding: String,
    /// The server a single-server command (prompts, get-prompt, resources,
    /// templates, read, a call by raw name) talks to, when there are several.
    #[arg(long, global = true, value_name = "NAME", help_heading = CONNECTION)]
    server: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// Answer elicitation with the schema's defaults, without prompting.
    #[arg(long, global = true, hide_short_help = true)]
    accept_defaults: bool,
    /// Offer this directory to the servers as a root (repeatable).
    #[arg(long = "root", value_name = "DIR", global = true, hide_short_help = true)]
    roots: Vec<PathBuf>,
    /// Print the servers' logs at this level and above on stderr (debug,
    /// info, notice, warning, error, critical, alert, emergency).
    #[arg(long, value_name = "LEVEL", global = true, hide_short_help = true)]
    log_level: Option<String>,
    /// Which protocol era every server is spoken to in: auto (the
    /// 2026-07-28 protocol when the server speaks it, else the initialize
    /// handshake), legacy (initialize only), modern (2026-07-28 only), or
    /// one version exactly (2026-07-28, 2025-11-25, 2025-06-18, ...).
    /// Overrides a config entry's protocol [default: auto, or the entry's
    /// own].
    #[arg(long, value_name = "auto|legacy|modern|VERSION", global = true, help_heading = CONNECTION, hide_short_help = true)]
    protocol: Option<String>,
    #[command(flatten)]
    timeouts: TimeoutFlags,
    #[command(flatten)]
    limits: LimitFlags,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Each server's state, transport, protocol version, tool count and last
    /// failure.
    Servers,
    /// Every server's tools, by model name.
    Tools,
    /// Call a tool with JSON arguments.
    #[command(after_help = CALL_EXAMPLES)]
    Call {
        /// The tool's model name (mcp__BINDING__TOOL), or its raw name
        /// with one server or --server.
        name: String,
        /// The arguments: a JSON object, `-` to read it from stdin, or
        /// @FILE to read it from a file (up to --max-frame-bytes).
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// List a server's prompts.
    Prompts,
    /// Render a prompt with JSON arguments.
    #[command(after_help = GET_PROMPT_EXAMPLES)]
    GetPrompt {
        /// The prompt's name.
        name: String,
        /// The arguments: a JSON object of strings (numbers and booleans
        /// are sent as their text), `-` for stdin, or @FILE.
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// List a server's resources.
    Resources,
    /// List a server's resource templates.
    Templates,
    /// Read a resource.
    #[command(after_help = READ_EXAMPLES)]
    Read {
        /// The resource's URI (passed to the server verbatim).
        uri: String,
        /// Save the resource's content (its bytes, or its text) to FILE
        /// instead of printing it.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

fn millis_help(what: &str, default: Duration) -> String {
    format!("{what}, in milliseconds [default: {} = {} s]", default.as_millis(), default.as_secs())
}

/// OAuth for the --http/--sse server.
#[cfg(feature = "oauth")]
#[derive(Args, Debug)]
struct OAuthFlags {
    /// Authorize with OAuth when the --http/--sse server asks for it: the
    /// authorization URL is printed on stderr (and opened with
    /// --open-browser), a listener on 127.0.0.1 takes the browser's
    /// redirect, and the tokens are kept in --token-dir for the next run.
    #[arg(long, global = true, help_heading = AUTHORIZATION)]
    oauth: bool,
    /// A client registered with the authorization server beforehand (else
    /// the client registers itself where the server allows it).
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "ID", requires = "oauth")]
    client_id: Option<String>,
    /// The secret of the --client-id client. Never printed; mind that a
    /// command line is visible to other users of this machine.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "SECRET", requires = "client_id")]
    client_secret: Option<String>,
    /// The authorization server (its issuer URL) the --client-id client
    /// belongs to: any other is refused before it is sent anything. Without
    /// it, the client is bound to the first server that grants it a token,
    /// and that is kept in --token-dir.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "URL", requires = "client_id")]
    issuer: Option<String>,
    /// Scopes to ask for (space-separated) when the server names none.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "SCOPES", requires = "oauth")]
    scope: Option<String>,
    /// Open the system browser on the authorization URL.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, requires = "oauth")]
    open_browser: bool,
    /// The port of the redirect listener on 127.0.0.1 (default: any free
    /// port; a fixed one for servers with exact redirect URIs).
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "PORT", requires = "oauth")]
    redirect_port: Option<u16>,
    /// Where tokens are kept, one private file (mode 0600) per server
    /// origin [default: $XDG_CONFIG_HOME/mcp-stack/tokens, else
    /// ~/.config/mcp-stack/tokens].
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "DIR", requires = "oauth")]
    token_dir: Option<PathBuf>,
    /// A machine client: the client_credentials grant, no browser and no
    /// redirect listener (with --client-secret or --private-key).
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, requires = "oauth")]
    client_credentials: bool,
    /// Authenticate the client with private_key_jwt, signing with this
    /// private key (PEM: PKCS#8 P-256, P-384 or RSA, or PKCS#1 RSA). Without
    /// --client-id the client registers itself with the key's public half.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "FILE", requires = "oauth")]
    private_key: Option<PathBuf>,
    /// Sender-constrained tokens (DPoP, RFC 9449), proofs signed with this
    /// private key (PEM, as --private-key). The tokens in --token-dir are
    /// bound to it: keep the file as long as them.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "FILE", requires = "oauth")]
    dpop_key: Option<PathBuf>,
}

#[cfg(feature = "oauth")]
impl OAuthFlags {
    /// The OAuth settings the flags ask for, with the loopback handler
    /// listening already (its redirect URI is part of the registration).
    async fn settings(&self) -> Result<Option<mcp_stack::auth::OAuth>, Failure> {
        use mcp_stack::auth::{AuthorizationHandler, FileStore, Grant, LoopbackOptions, OAuth};
        if !self.oauth {
            return Ok(None);
        }
        let dir = match &self.token_dir {
            Some(dir) => dir.clone(),
            None => default_token_dir().ok_or_else(|| {
                usage("--oauth: neither XDG_CONFIG_HOME nor HOME is set; give --token-dir DIR".into())
            })?,
        };
        let mut oauth = OAuth::new().client_name("mcp (mcp-stack)").store(FileStore::new(dir));
        if self.client_credentials {
            oauth = oauth.grant(Grant::ClientCredentials);
        } else {
            let options = LoopbackOptions {
                port: self.redirect_port.unwrap_or(0),
                open_browser: self.open_browser,
                ..LoopbackOptions::default()
            };
            let handler =
                AuthorizationHandler::loopback(options).await.map_err(|e| failure(EXIT_USAGE, &e))?;
            oauth = oauth.handler(handler);
        }
        if let Some(path) = &self.private_key {
            oauth = oauth.private_key(read_key("--private-key", path)?);
        }
        if let Some(path) = &self.dpop_key {
            oauth = oauth.dpop(read_key("--dpop-key", path)?);
        }
        if let Some(id) = &self.client_id {
            oauth = oauth.client_id(id.clone());
        }
        if let Some(secret) = &self.client_secret {
            oauth = oauth.client_secret(secret.clone());
        }
        if let Some(issuer) = &self.issuer {
            oauth = oauth.client_issuer(issuer.clone());
        }
        if let Some(scope) = &self.scope {
            oauth = oauth.scopes(scope.clone());
        }
        Ok(Some(oauth))
    }
}

/// The private key in the PEM file at `path`, for `flag`. What is wrong
/// with it is said without any of its content.
#[cfg(feature = "oauth")]
fn read_key(flag: &str, path: &std::path::Path) -> Result<mcp_stack::auth::SigningKey, Failure> {
    use mcp_stack::auth::{Secret, SigningKey};
    let pem = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("{flag} {}: cannot read it: {e}", path.display())))?;
    SigningKey::from_pem(&Secret::new(pem), None)
        .map_err(|e| usage(format!("{flag} {}: {e}", path.display())))
}

/// `$XDG_CONFIG_HOME/mcp-stack/tokens`, else `~/.config/mcp-stack/tokens`.
#[cfg(feature = "oauth")]
fn default_token_dir() -> Option<PathBuf> {
    let config =
        std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(config.join("mcp-stack").join("tokens"))
}

#[derive(Args, Debug)]
struct TimeoutFlags {
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("How long connecting may take (connect, handshake, catalog)", Timeouts::default().resolved().startup))]
    startup_timeout_ms: Option<u64>,
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("How long one request may take", Timeouts::default().resolved().request))]
    request_timeout_ms: Option<u64>,
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("How long a question to you may wait for an answer", Timeouts::default().resolved().elicitation))]
    elicitation_timeout_ms: Option<u64>,
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("With --protocol auto: how long server/discover may go unanswered before the server is taken for a pre-2026 one", Timeouts::default().resolved().discover))]
    discover_timeout_ms: Option<u64>,
}

impl TimeoutFlags {
    fn apply(&self, timeouts: &mut Timeouts) {
        let set = |field: &mut Duration, flag: Option<u64>| {
            if let Some(ms) = flag {
                *field = Duration::from_millis(ms);
            }
        };
        set(&mut timeouts.startup, self.startup_timeout_ms);
        set(&mut timeouts.request, self.request_timeout_ms);
        set(&mut timeouts.elicitation, self.elicitation_timeout_ms);
        set(&mut timeouts.discover, self.discover_timeout_ms);
    }
}

/// `<what> [default: N]`, with N in KiB or MiB too for a byte count.
fn limit_help(what: &str, field: &str, default: usize) -> String {
    let human = match default {
        n if field.ends_with("_bytes") && n >= 1 << 20 && n % (1 << 20) == 0 => format!(" = {} MiB", n >> 20),
        n if field.ends_with("_bytes") && n >= 1 << 10 && n % (1 << 10) == 0 => format!(" = {} KiB", n >> 10),
        _ => String::new(),
    };
    format!("{what} [default: {default}{human}]")
}

macro_rules! limit_flags {
    ($($field:ident: $what:literal),* $(,)?) => {
        #[derive(Args, Debug)]
        struct LimitFlags {
            $(
                #[arg(long, global = true, value_name = "N", help_heading = LIMITS, hide_short_help = true,
                      help = limit_help($what, stringify!($field), Limits::default().resolved().$field))]
                $field: Option<usize>,
            )*
        }

        impl LimitFlags {
            fn apply(&self, limits: &mut Limits) {
                $( if let Some(n) = self.$field { limits.$field = n; } )*
            }
        }
    };
}

limit_flags!(
    max_concurrent_requests: "Requests in flight at once, per server",
    max_catalog_pages: "Pages read of one list (tools, prompts, resources)",
    max_catalog_items: "Tools taken from one server",
    max_frame_bytes: "The largest message sent or read, in bytes (arguments included)",
    max_body_bytes: "The largest HTTP response body, in bytes",
    max_schema_bytes: "The largest tool schema, in bytes",
    max_schema_depth: "The deepest tool schema nesting",
    max_text_result_bytes: "The text of one result, in bytes (more is cut and marked)",
    max_structured_bytes: "The structured content of one tool result, in bytes",
    max_binary_item_bytes: "One image, audio or blob item, in bytes",
    max_binary_items: "Binary items in one result",
    max_content_items: "Items in one result (content blocks, prompt messages, resource contents)",
    max_log_message_bytes: "One server log message, in bytes",
    max_elicit_message_bytes: "One question a server asks you, in bytes",
    max_elicit_schema_bytes: "The form a question asks for, in bytes",
    max_prompt_count: "Prompts taken from one server",
    max_resource_count: "Resources taken from one server",
    max_sampling_depth: "Nested sampling requests",
    max_sampling_concurrency: "Sampling requests at once",
    max_sampling_tokens: "Tokens of one sampling completion",
    max_sampling_messages: "Messages of one sampling request",
    max_sampling_request_bytes: "One sampling request, in bytes",
);

/// A `--env` value: `KEY=VALUE`. Its `Debug` shows the key only; it is
/// checked after parsing so that no error quotes the value.
#[derive(Clone)]
struct EnvArg {
    text: String,
}

impl std::fmt::Debug for EnvArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.text.split('=').next().unwrap_or("");
        write!(f, "EnvArg({key:?}=…)")
    }
}

impl std::str::FromStr for EnvArg {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(EnvArg { text: text.to_string() })
    }
}

impl EnvArg {
    fn pair(&self) -> Result<(&str, &str), Failure> {
        match self.text.split_once('=') {
            Some((key, value)) if !key.is_empty() && !key.contains('\0') && !value.contains('\0') => {
                Ok((key, value))
            }
            _ => Err(usage("--env takes KEY=VALUE, with a non-empty KEY".into())),
        }
    }
}

/// A `--header` value: `Name: value`. Its `Debug` shows the name only.
#[cfg(feature = "http")]
#[derive(Clone)]
struct HeaderArg {
    line: String,
}

#[cfg(feature = "http")]
impl std::fmt::Debug for HeaderArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.line.split(':').next().unwrap_or("");
        write!(f, "HeaderArg({name:?}: …)")
    }
}

#[cfg(feature = "http")]
impl std::str::FromStr for HeaderArg {
    type Err = std::convert::Infallible;

    /// Never fails: the header is checked when the transport is built, by
    /// an error that never quotes the value.
    fn from_str(line: &str) -> Result<Self, Self::Err> {
        Ok(HeaderArg { line: line.to_string() })
    }
}

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

type Failure = (u8, ErrorReport);

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

fn failure(code: u8, e: &Error) -> Failure {
    (code, e.report())
}

fn usage(message: String) -> Failure {
    failure(EXIT_USAGE, &Error::new(FailureClass::InvalidConfig, message))
}

fn bad_arguments(e: args::BadArguments) -> Failure {
    failure(EXIT_USAGE, &Error::new(FailureClass::InvalidArguments, e.0))
}

/// The arguments of `call` and `get-prompt`, read and checked before
/// anything connects.
fn read_arguments(cli: &Cli) -> Result<Option<Map<String, Value>>, Failure> {
    let limit = cli.limits.max_frame_bytes.unwrap_or(Limits::default().resolved().max_frame_bytes);
    let spec = match &cli.command {
        Command::Call { arguments, .. } | Command::GetPrompt { arguments, .. } => arguments,
        _ => return Ok(None),
    };
    let object = args::text(spec, limit).and_then(|text| args::object(&text)).map_err(bad_arguments)?;
    match cli.command {
        Command::GetPrompt { .. } => args::prompt_strings(object).map(Some).map_err(bad_arguments),
        _ => Ok(Some(object)),
    }
}

/// The largest PEM file --cacert, --cert or --key reads.
#[cfg(feature = "http")]
const MAX_PEM_BYTES: u64 = 1 << 20;

/// Reads the PEM file a flag names, bounded; the error names the flag and
/// the path, never the content.
#[cfg(feature = "http")]
fn pem_file(flag: &str, path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| usage(format!("{flag}: cannot open {shown}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| usage(format!("{flag}: cannot read {shown}: {e}")))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(usage(format!("{flag}: {shown} is larger than {MAX_PEM_BYTES} bytes")));
    }
    Ok(bytes)
}

/// The server the transport flags name, if any.
async fn flag_server(cli: &Cli) -> Result<Option<Arc<dyn TransportFactory>>, Failure> {
    #[cfg(feature = "http")]
    if [cli.stdio.is_some(), cli.http.is_some(), cli.sse.is_some()].iter().filter(|given| **given).count() > 1
    {
        return Err(usage("give at most one of --stdio, --http and --sse".into()));
    }
    #[cfg(feature = "http")]
    if (cli.proxy.is_some() || cli.no_proxy) && cli.http.is_none() && cli.sse.is_none() {
        return Err(usage("--proxy and --no-proxy need --http or --sse".into()));
    }
    #[cfg(feature = "http")]
    if (cli.cacert.is_some() || cli.cert.is_some()) && cli.http.is_none() && cli.sse.is_none() {
        return Err(usage("--cacert, --cert and --key need --http or --sse".into()));
    }
    if !cli.envs.is_empty() && cli.stdio.is_none() {
        return Err(usage("--env needs --stdio (a config file entry has its own \"env\")".into()));
    }
    if let Some(line) = &cli.stdio {
        let mut factory =
            StdioFactory::from_command_line(line).map_err(|e| usage(e.message().to_string()))?;
        for env in &cli.envs {
            let (key, value) = env.pair()?;
            factory = factory.env(key, value);
        }
        return Ok(Some(Arc::new(factory)));
    }
    #[cfg(feature = "http")]
    if let Some(url) = cli.http.as_ref().or(cli.sse.as_ref()) {
        let mut headers = SecretHeaders::default();
        for header in &cli.headers {
            headers.insert_line(&header.line).map_err(|e| usage(e.message().to_string()))?;
        }
        let mut builder =
            HttpBuilder::new(url.as_str()).headers(headers).allow_redirects(cli.allow_redirects);
        if let Some(proxy) = &cli.proxy {
            builder = builder.proxy(proxy);
        }
        if cli.no_proxy {
            builder = builder.no_proxy();
        }
        if let Some(path) = &cli.cacert {
            builder = builder.root_certificates_pem(pem_file("--cacert", path)?);
        }
        if let (Some(cert), Some(key)) = (&cli.cert, &cli.key) {
            builder = builder.client_certificate_pem(pem_file("--cert", cert)?, pem_file("--key", key)?);
        }
        #[cfg(feature = "oauth")]
        let builder = match cli.oauth.settings().await? {
            Some(oauth) => builder.oauth(oauth),
            None => builder,
        };
        let built: Result<Arc<dyn TransportFactory>, Error> = if cli.http.is_some() {
            builder.build_auto(true).map(|f| Arc::new(f) as Arc<dyn TransportFactory>)
        } else {
            builder.build_sse().map(|f| Arc::new(f) as Arc<dyn TransportFactory>)
        };
        return built.map(Some).map_err(|e| usage(e.message().to_string()));
    }
    #[cfg(feature = "oauth")]
    if cli.oauth.oauth {
        return Err(usage("--oauth needs --http or --sse".into()));
    }
    #[cfg(feature = "http")]
    if !cli.headers.is_empty() {
        return Err(usage(
            "--header needs --http or --sse (a config file entry has its own \"headers\")".into(),
        ));
    }

    Ok(None)
}

/// Every server the flags and the config file name, with the flags'
/// timeouts, limits, capabilities and log level applied.
async fn definitions(cli: &Cli, capabilities: AllowedCapabilities) -> Result<Vec<Definition>, Failure> {
    let mut definitions = Vec::new();
    if let Some(path) = &cli.config {
        let loaded = config_file::load(path).map_err(|e| failure(EXIT_USAGE, &e))?;
        for issue in &loaded.warnings {
            err_line(&format!("warning: {}: {}", path.display(), clean_line(&issue.to_string())));
        }
        for issue in &loaded.errors {
            err_line(&format!(
                "error: {}: {} (entry skipped)",
                path.display(),
                clean_line(&issue.to_string())
            ));
        }
        if loaded.definitions.is_empty() {
            return Err(usage(format!("{}: no server could be read from the config file", path.display())));
        }
        definitions.extend(loaded.definitions);
    }
    match flag_server(cli).await? {
        Some(factory) => definitions.push(Definition::with_factory(cli.binding.clone(), factory)),
        None if cli.config.is_none() => {
            definitions.push(Definition::new(cli.binding.clone(), mcp_stack::demo::factory()))
        }
        None => {}
    }
    let log_level = match &cli.log_level {
        Some(level) => Some(level.parse::<LoggingLevel>().map_err(|_| {
            usage(format!(
                "--log-level {:?}: one of debug, info, notice, warning, error, critical, alert, emergency",
                clean_line(level)
            ))
        })?),
        None => None,
    };
    let protocol = match &cli.protocol {
        Some(text) => Some(ProtocolChoice::parse(text).map_err(|_| {
            usage(format!(
                "--protocol {:?}: auto, legacy, modern or a protocol version this client speaks",
                clean_line(text)
            ))
        })?),
        None => None,
    };
    for definition in &mut definitions {
        cli.timeouts.apply(&mut definition.timeouts);
        if let Some(protocol) = &protocol {
            definition.protocol = protocol.clone();
        }
        cli.limits.apply(&mut definition.limits);
        definition.capabilities = capabilities;
        if let Some(level) = log_level {
            definition.log_level = level;
        }
        definition.validate().map_err(|e| failure(EXIT_USAGE, &e))?;
    }
    Ok(definitions)
}

/// The host's side: elicitation on the terminal, `--root`, `--log-level`.
fn handlers(cli: &Cli) -> Result<(Handlers, AllowedCapabilities), Failure> {
    let mut roots = Vec::new();
    for dir in &cli.roots {
        let dir = dir
            .canonicalize()
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| usage(format!("--root {}: not a directory", dir.display())))?;
        roots.push(root_for_path(&dir).map_err(|e| usage(e.to_string()))?);
    }
    let capabilities = AllowedCapabilities { elicitation: true, sampling: false, roots: !roots.is_empty() };
    let accept_defaults = cli.accept_defaults;
    // One question at a time, whatever the servers ask at once.
    let terminal = Arc::new(tokio::sync::Mutex::new(()));
    let mut handlers = Handlers::default()
        .elicitation(move |req: ElicitRequest| {
            let terminal = terminal.clone();
            async move {
                let _turn = terminal.lock().await;
                tokio::task::spawn_blocking(move || elicit::ask(&req, accept_defaults))
                    .await
                    .map_err(|e| Error::new(FailureClass::Cancelled, e.to_string()))
            }
        })
        .elicitation_modes(ElicitationModes { form: true, url: true })
        .with_roots(roots);
    if cli.log_level.is_some() {
        handlers = handlers.log(|m: LogMessage| async move {
            let logger = m.logger.map(|l| format!(" {}:", clean_line(&l))).unwrap_or_default();
            err_line(&format!("[{}] {}{} {}", m.binding, m.level, logger, clean(&m.text)));
            Ok(())
        });
    }
    Ok((handlers, capabilities))
}

async fn run(cli: Cli) -> Result<u8, Failure> {
    // Everything is checked before connecting, so a typo costs no child
    // process.
    let arguments = read_arguments(&cli)?;
    let (handlers, capabilities) = handlers(&cli)?;
    let definitions = definitions(&cli, capabilities).await?;

    let host = Host::builder().handlers(handlers).build();
    if let Some((name, e)) = host.add_all(definitions).await.into_iter().next() {
        host.close().await;
        return Err(failure(EXIT_USAGE, &e.with_binding(&name)));
    }
    let outcome = match connected(&cli, &host) {
        // Ctrl-C drops the command: its request in flight is cancelled on
        // the wire (notifications/cancelled, or its HTTP stream closed) and
        // the host is closed as after any command.
        Ok(()) => tokio::select! {
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
        Err(e) => Err(e),
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
    if matches!(cli.command, Command::Servers) {
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

/// What a command prints: the `--json` document, or lines of text already
/// made safe for a terminal; and its exit code.
struct Output {
    document: Value,
    lines: Vec<String>,
    code: u8,
}

impl Output {
    fn ok(document: Value, lines: Vec<String>) -> Output {
        Output { document, lines, code: 0 }
    }
}

/// A row of `servers --json`: the binding's status and its tool count.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServerRow<'a> {
    #[serde(flatten)]
    status: &'a Status,
    tool_count: usize,
}

/// The one server a single-server command talks to.
async fn one_server(cli: &Cli, host: &Host) -> Result<Binding, Failure> {
    let name = match &cli.server {
        Some(name) => name.clone(),
        None => {
            let names = host.names();
            match names.as_slice() {
                [one] => one.clone(),
                _ => {
                    return Err(usage(format!(
                        "{} servers: choose one with --server NAME ({})",
                        names.len(),
                        names.join(", ")
                    )))
                }
            }
        }
    };
    host.ready(&name).await.map_err(|e| match e.class() {
        FailureClass::NotFound => usage(format!("no server named {:?}", clean_line(&name))),
        _ => failure(EXIT_CONNECT, &e),
    })
}

async fn command(cli: &Cli, host: &Host, arguments: Option<Map<String, Value>>) -> Result<Output, Failure> {
    let call_failed = |e: Error| failure(EXIT_CALL, &e);
    Ok(match &cli.command {
        Command::Servers => {
            let statuses = host.status();
            let catalog = host.catalog();
            let tool_count = |name: &str| catalog.catalog(name).map_or(0, |c| c.tools.len());
            let rows: Vec<ServerRow<'_>> = statuses
                .iter()
                .map(|s| ServerRow { status: s, tool_count: tool_count(&s.binding) })
                .collect();
            let mut table =
                vec![["NAME", "STATE", "TRANSPORT", "PROTOCOL", "TOOLS", "LAST FAILURE"].map(String::from)];
            for row in &rows {
                let s = row.status;
                let protocol = if s.protocol_version.is_empty() { "-" } else { &s.protocol_version };
                let failure = s
                    .failure
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |f| format!("{}: {}", f.class, clean_line(&f.message)));
                table.push([
                    s.binding.clone(),
                    s.state.to_string(),
                    s.transport_kind.to_string(),
                    clean_line(protocol),
                    row.tool_count.to_string(),
                    failure,
                ]);
            }
            Output::ok(json!({ "servers": rows }), aligned(&table))
        }
        Command::Tools => {
            // The adopted catalogs, discovered while connecting: the tools
            // as a host shows them to a model.
            let catalog = host.catalog();
            let mut lines: Vec<String> = catalog
                .tools()
                .map(|t| format!("{:<48} {}", t.model_name, clean_line(first_line(t.description.as_deref()))))
                .collect();
            for c in catalog.catalogs() {
                lines.extend(c.warnings.iter().map(|w| format!("warning: {}: {}", c.binding, clean_line(w))));
            }
            lines.extend(catalog.warnings().iter().map(|w| format!("warning: {}", clean_line(w))));
            let catalogs: Vec<&mcp_stack::catalog::Catalog> =
                catalog.catalogs().iter().map(|c| &**c).collect();
            Output::ok(json!({ "catalogs": catalogs, "warnings": catalog.warnings() }), lines)
        }
        Command::Call { name, .. } => {
            let arguments = Value::Object(arguments.unwrap_or_default());
            let target = call_target(cli, host, name).await?;
            let progress = ProgressDisplay::new(cli.json);
            let result = match &target {
                None => host.call_tool(name, arguments, progress.opts()).await,
                Some((binding, raw)) => binding.call_tool(raw, arguments, progress.opts()).await,
            };
            progress.finish();
            let result = result.map_err(call_failed)?;
            let mut lines: Vec<String> = result.content.iter().map(|c| clean(&content_text(c))).collect();
            // A tool that returns structured content also returns it as text
            // (the specification asks it to); shown once.
            let has_text = result.content.iter().any(|c| matches!(c, Content::Text { .. }));
            if let (Some(s), false) = (&result.structured, has_text) {
                lines.push(format!("structured: {}", clean(&s.to_string())));
            }
            lines.extend(result.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            let code = if result.is_error { EXIT_TOOL_ERROR } else { 0 };
            Output { document: json!(result), lines, code }
        }
        Command::Prompts => {
            let binding = one_server(cli, host).await?;
            let prompts = binding.list_prompts().await.map_err(call_failed)?;
            let rows: Vec<[String; 2]> = prompts
                .items
                .iter()
                .map(|p| [clean_line(&p.name), clean_line(first_line(p.description.as_deref()))])
                .collect();
            let mut lines = listed(&rows, binding.name(), "prompts");
            lines.extend(prompts.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "prompts": prompts.items, "warnings": prompts.warnings }), lines)
        }
        Command::GetPrompt { name, .. } => {
            let binding = one_server(cli, host).await?;
            let prompt = binding
                .get_prompt(name, arguments.unwrap_or_default(), CallOpts::default())
                .await
                .map_err(call_failed)?;
            let lines = prompt
                .messages
                .iter()
                .map(|m| format!("{}: {}", clean_line(&m.role.to_string()), clean(&content_text(&m.content))))
                .collect();
            Output::ok(json!(prompt), lines)
        }
        Command::Resources => {
            let binding = one_server(cli, host).await?;
            let resources = binding.list_resources().await.map_err(call_failed)?;
            let rows: Vec<[String; 2]> =
                resources.items.iter().map(|r| [clean_line(&r.uri), clean_line(&r.name)]).collect();
            let mut lines = listed(&rows, binding.name(), "resources");
            lines.extend(resources.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "resources": resources.items, "warnings": resources.warnings }), lines)
        }
        Command::Templates => {
            let binding = one_server(cli, host).await?;
            let templates = binding.list_resource_templates().await.map_err(call_failed)?;
            let rows: Vec<[String; 2]> =
                templates.items.iter().map(|t| [clean_line(&t.uri_template), clean_line(&t.name)]).collect();
            let mut lines = listed(&rows, binding.name(), "resource templates");
            lines.extend(templates.warnings.iter().map(|w| format!("warning: {}", clean_line(w))));
            Output::ok(json!({ "resourceTemplates": templates.items, "warnings": templates.warnings }), lines)
        }
        Command::Read { uri, output } => {
            let binding = one_server(cli, host).await?;
            let resource = binding.read_resource(uri, CallOpts::default()).await.map_err(call_failed)?;
            let mut lines: Vec<String> =
                resource.warnings.iter().map(|w| format!("warning: {}", clean_line(w))).collect();
            match output {
                Some(path) => lines.extend(save_resource(&resource, path)?),
                None => lines.extend(resource.contents.iter().map(|c| match &c.text {
                    Some(text) => clean(text),
                    None => format!(
                        "<{} bytes of {}; save them with --output FILE>",
                        c.data.as_ref().map_or(0, Vec::len),
                        clean_line(c.mime_type.as_deref().unwrap_or("an unnamed type"))
                    ),
                })),
            }
            Output::ok(json!(resource), lines)
        }
    })
}

/// The tool `call NAME` means (`None`: a model name the host routes),
/// decided before anything is sent (see [`names`]). A name no catalog
/// lists is a usage error (`not_found`, exit 2).
async fn call_target(cli: &Cli, host: &Host, name: &str) -> Result<Option<(Binding, String)>, Failure> {
    let statuses = host.status();
    let stale = |binding: &str| {
        statuses.iter().any(|s| s.binding == binding && s.stale_families.iter().any(|f| f == "tools"))
    };
    let target = names::resolve(&host.catalog(), &host.names(), cli.server.as_deref(), name, &stale)
        .map_err(|names::Unknown(why)| {
            failure(EXIT_USAGE, &Error::new(FailureClass::NotFound, why).with_op("call_tool"))
        })?;
    match target {
        names::Target::Model => Ok(None),
        names::Target::Raw { raw_name, .. } => Ok(Some((one_server(cli, host).await?, raw_name))),
    }
}

/// Rows as columns as wide as their widest cell (the last column as it
/// is), two spaces apart.
fn aligned<const N: usize>(rows: &[[String; N]]) -> Vec<String> {
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..N).map(width).collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, cell)| if i + 1 == N { cell.clone() } else { format!("{cell:<w$}", w = widths[i]) })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

/// A listing's rows, aligned, or one line saying there are none.
fn listed(rows: &[[String; 2]], binding: &str, what: &str) -> Vec<String> {
    if rows.is_empty() {
        return vec![format!("server {binding} offers no {what}")];
    }
    aligned(rows)
}

/// Writes a read resource to `path`: the first item's bytes, or its text.
/// Returns what to tell the person.
fn save_resource(
    resource: &mcp_stack::ResourceResult,
    path: &std::path::Path,
) -> Result<Vec<String>, Failure> {
    let Some(first) = resource.contents.first() else {
        return Err(failure(
            EXIT_CALL,
            &Error::new(FailureClass::NotFound, "the resource has no content to save")
                .with_op("read_resource"),
        ));
    };
    let bytes: &[u8] = match (&first.data, &first.text) {
        (Some(data), _) => data,
        (None, Some(text)) => text.as_bytes(),
        (None, None) => &[],
    };
    std::fs::write(path, bytes).map_err(|e| usage(format!("--output {}: {e}", path.display())))?;
    let mime = first.mime_type.as_deref().map(|m| format!(" ({})", clean_line(m))).unwrap_or_default();
    let mut lines = vec![format!("saved {} bytes{mime} to {}", bytes.len(), path.display())];
    if first.truncated {
        lines.push("warning: a limit cut this content; the file holds what was kept".into());
    }
    if resource.contents.len() > 1 {
        lines.push(format!(
            "warning: the resource has {} items; only the first was saved",
            resource.contents.len()
        ));
    }
    Ok(lines)
}

fn first_line(text: Option<&str>) -> &str {
    text.unwrap_or("").lines().next().unwrap_or("")
}

/// One content item as text (not yet made safe for a terminal).
fn content_text(content: &Content) -> String {
    match content {
        Content::Text { text, truncated: false, .. } => text.clone(),
        Content::Text { text, truncated: true, .. } => format!("{text}… (truncated)"),
        Content::Image { data, mime_type, .. } => format!("<image {mime_type}, {} bytes>", data.len()),
        Content::Audio { data, mime_type, .. } => format!("<audio {mime_type}, {} bytes>", data.len()),
        Content::Resource { resource: c, .. } => match &c.text {
            Some(text) => format!("<resource {}>\n{text}", c.uri),
            None => format!("<resource {}, {} bytes>", c.uri, c.data.as_ref().map_or(0, Vec::len)),
        },
        Content::ResourceLink { uri, name, .. } => format!("<link {name}: {uri}>"),
        Content::Unsupported { kind, bytes } => format!("<{kind} dropped, {bytes} bytes>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_help_shows_real_defaults_and_the_exit_codes() {
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("[default: 30000 = 30 s]"), "{help}");
        assert!(help.contains("[default: 60000 = 60 s]"), "{help}");
        assert!(help.contains("[default: 4194304 = 4 MiB]"), "{help}");
        assert!(!help.contains("[default: 0]"), "{help}");
        for code in [
            "0    ok",
            "2    usage",
            "3    could not connect",
            "4    the request failed",
            "5    the tool returned isError",
            "130  interrupted",
        ] {
            assert!(help.contains(code), "{code}: {help}");
        }
    }

    /// A key file that is missing or not a key is a usage error naming the
    /// flag and the file, and never shows what the file holds.
    #[cfg(feature = "oauth")]
    #[test]
    fn a_bad_key_file_is_a_usage_error_without_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let (code, e) = read_key("--dpop-key", &missing).unwrap_err();
        assert_eq!(code, EXIT_USAGE);
        assert!(e.message.contains("--dpop-key") && e.message.contains("missing.pem"), "{}", e.message);

        let garbage = dir.path().join("garbage.pem");
        std::fs::write(&garbage, "-----BEGIN PRIVATE KEY-----\nSECRET-CONTENT\n-----END PRIVATE KEY-----\n")
            .unwrap();
        let (code, e) = read_key("--private-key", &garbage).unwrap_err();
        assert_eq!(code, EXIT_USAGE);
        assert!(e.message.contains("--private-key"), "{}", e.message);
        assert!(!e.message.contains("SECRET-CONTENT"), "{}", e.message);

        let rsa = concat!(env!("CARGO_MANIFEST_DIR"), "/src/auth/testdata/rsa-2048.pem");
        let key = read_key("--private-key", std::path::Path::new(rsa)).unwrap();
        assert_eq!(key.algorithm().as_str(), "RS256");
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn an_env_argument_needs_a_key_and_never_shows_its_value() {
        let arg: EnvArg = "TOKEN=s3cret".parse().unwrap();
        assert_eq!(arg.pair().unwrap(), ("TOKEN", "s3cret"));
        assert!(!format!("{arg:?}").contains("s3cret"));
        for bad in ["=x", "novalue", ""] {
            let (code, report) = bad.parse::<EnvArg>().unwrap().pair().unwrap_err();
            assert_eq!(code, EXIT_USAGE);
            assert!(!report.message.contains("novalue"));
        }
    }

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

    #[test]
    fn byte_limits_read_in_binary_units() {
        assert_eq!(limit_help("Frame", "max_frame_bytes", 4 << 20), "Frame [default: 4194304 = 4 MiB]");
        assert_eq!(limit_help("Schema", "max_schema_bytes", 256 << 10), "Schema [default: 262144 = 256 KiB]");
        assert_eq!(limit_help("Items", "max_binary_items", 16), "Items [default: 16]");
    }
}
