//! The command line: its flags, its commands and their help texts.

use clap::{Args, Parser, Subcommand};
use mcp_stack::{Limits, Timeouts};
use std::path::PathBuf;
use std::time::Duration;

#[cfg(feature = "oauth")]
use crate::{failure, EXIT_USAGE};
use crate::{usage, Failure};

/// Shown by `mcp -h` and `mcp --help`.
pub(crate) const EXAMPLES: &str = "\
Examples:
  mcp tools                                          the built-in demo server's tools
  mcp --config ~/.cursor/mcp.json servers            every server of a config file
  mcp --stdio 'npx -y @modelcontextprotocol/server-everything stdio' call echo '{\"message\":\"hi\"}'
  mcp --http https://host/mcp --oauth tools          OAuth in the browser, tokens kept
  mcp call mcp__server__add @args.json --json        arguments from a file (or - for stdin)

mcp -h is short; mcp --help shows every flag (connection, authorization,
timeouts, limits) with its default. Each command has its own -h.";

/// Shown by `mcp --help` only.
pub(crate) const LONG_AFTER_HELP: &str = "\
Servers: --config FILE (an mcpServers or VS Code servers file) and/or one of
--stdio, --http (streamable HTTP, falling back to HTTP+SSE) or --sse; with
none, the built-in demo server. Timeouts and limits apply to every server.

Server text is printed with escape sequences, control characters and bidi
overrides made visible (\\u{1b}); --json output is exact, one document with
its formatVersion (see docs/command.md).

Exit codes:
  0    ok
  2    usage: flags, arguments, a tool name no server lists, the config file
  3    could not connect or complete the handshake
  4    the request failed
  5    the tool returned isError
  130  interrupted (Ctrl-C): the request in flight was cancelled";

pub(crate) const TOOLS_EXAMPLES: &str = "\
Examples:
  mcp tools
  mcp tools --search \"star a repository\" -k 5
  mcp tools --search \"send an email\" --json
  mcp tools --for gemini";

const CALL_EXAMPLES: &str = "\
Examples:
  mcp call echo '{\"message\":\"hi\"}'                      a raw name, with one server
  mcp --config mcp.json call mcp__files__read_file '{\"path\":\"a.txt\"}'
  mcp --config mcp.json --server files call read_file @args.json
  cat args.json | mcp call add -                      arguments from stdin
  mcp call count '{\"steps\":5,\"delay_ms\":500}' --task    as a task, its status shown";

pub(crate) const GET_PROMPT_EXAMPLES: &str = "\
Examples:
  mcp prompts                                         what the server offers
  mcp get-prompt greeting '{\"name\":\"Ada\",\"times\":3}'     3 is sent as \"3\"";

pub(crate) const TASKS_EXAMPLES: &str = "\
A task outlives the connection only at a server that keeps it: over --http,
another run can take it up by its id; a --stdio server ends with the run.

Examples:
  mcp --http https://host/mcp call research '{\"topic\":\"x\"}' --task
  mcp --http https://host/mcp tasks list
  mcp --http https://host/mcp tasks result 786512e2-9e0d
  mcp --http https://host/mcp tasks cancel 786512e2-9e0d";

pub(crate) const READ_EXAMPLES: &str = "\
Examples:
  mcp resources                                       what the server offers
  mcp read demo://readme
  mcp read demo://logo --output logo.png              save a binary resource";

pub(crate) const APPS_EXAMPLES: &str = "\
The HTML is data: it is printed or saved, never rendered or followed. Its
fingerprint, the origins and permissions it asks for go to stderr.

The last fingerprint of each app is kept between runs, per server (its URL,
or its command, arguments and environment) and app URI, in
$XDG_CONFIG_HOME/mcp-stack/app-fingerprints.json, else
~/.config/mcp-stack/app-fingerprints.json (mode 0600, beside the tokens;
at most 512 apps): a run that reads an app that changed since the last one
warns \"the app changed since it was read\" on stderr, and --json shows
the earlier fingerprint as drift.previous. Delete the file to forget them.

Examples:
  mcp apps                                            every server's app tools
  mcp read-app get-time > app.html
  mcp read-app mcp__basic__get-time --output app.html --json";

pub(crate) const SKILLS_EXAMPLES: &str = "\
Nothing of a skill is fetched until `skills get`, and every file is checked
against the listing (size, sha256 digest, SKILL.md's frontmatter) first.

Examples:
  mcp skills list
  mcp skills get pdf-processing                       print its SKILL.md
  mcp skills get pdf-processing --out ./skills/pdf    write every file";

/// The long help's groups.
pub(crate) const CONNECTION: &str = "Connection";
pub(crate) const AUTHORIZATION: &str = "Authorization (--http, --sse)";
pub(crate) const TIMEOUTS: &str = "Timeouts (every server)";
pub(crate) const LIMITS: &str = "Limits (every server)";

#[derive(Parser, Debug)]
#[command(
    name = "mcp",
    version,
    about = "A bounded MCP client for people and scripts",
    after_help = EXAMPLES,
    after_long_help = format!("{EXAMPLES}\n\n{LONG_AFTER_HELP}")
)]
pub(crate) struct Cli {
    /// Read servers from this mcpServers (Claude Desktop, Cursor) or VS Code
    /// servers JSON file.
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION)]
    pub(crate) config: Option<PathBuf>,
    /// Run this server as a child process ("COMMAND ARGS", split like a
    /// shell).
    #[arg(long, global = true, value_name = "COMMAND", help_heading = CONNECTION)]
    pub(crate) stdio: Option<String>,
    /// An environment variable for the --stdio server, KEY=VALUE
    /// (repeatable). The child inherits only a small allowlist otherwise.
    /// The value is never printed.
    #[arg(long = "env", global = true, value_name = "KEY=VALUE", help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) envs: Vec<EnvArg>,
    /// Connect over streamable HTTP to this URL, falling back to HTTP+SSE
    /// when the server refuses it (reported in appliedTolerances).
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL", help_heading = CONNECTION)]
    pub(crate) http: Option<String>,
    /// Connect over the 2024-11-05 HTTP+SSE transport to this SSE URL.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL", help_heading = CONNECTION)]
    pub(crate) sse: Option<String>,
    /// A header for every HTTP request, as 'Name: value' (repeatable). The
    /// value is never printed.
    #[cfg(feature = "http")]
    #[arg(long = "header", global = true, value_name = "NAME: VALUE", help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) headers: Vec<HeaderArg>,
    /// Follow HTTP redirects (refused otherwise); credentials never follow
    /// one to another origin.
    #[cfg(feature = "http")]
    #[arg(long, global = true, help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) allow_redirects: bool,
    /// Reach the --http/--sse server through this proxy (user info in the
    /// URL is its credentials, never printed). Without it, HTTPS_PROXY,
    /// HTTP_PROXY, ALL_PROXY and NO_PROXY apply.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "URL", help_heading = CONNECTION, hide_short_help = true, conflicts_with = "no_proxy")]
    pub(crate) proxy: Option<String>,
    /// Reach the --http/--sse server directly, whatever proxy the
    /// environment names.
    #[cfg(feature = "http")]
    #[arg(long, global = true, help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) no_proxy: bool,
    /// Trust the root certificates in this PEM file too (a private CA),
    /// for the --http/--sse server.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) cacert: Option<PathBuf>,
    /// Present this client certificate (PEM, with any intermediates) to
    /// the --http/--sse server; needs --key.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION, hide_short_help = true, requires = "key")]
    pub(crate) cert: Option<PathBuf>,
    /// The private key (PEM) of --cert.
    #[cfg(feature = "http")]
    #[arg(long, global = true, value_name = "FILE", help_heading = CONNECTION, hide_short_help = true, requires = "cert")]
    pub(crate) key: Option<PathBuf>,
    #[cfg(feature = "oauth")]
    #[command(flatten)]
    pub(crate) oauth: OAuthFlags,
    /// Open the system browser: on the authorization URL (--oauth), on the
    /// inspector's page (inspect). The URL is printed either way.
    #[arg(long, global = true, hide_short_help = true)]
    pub(crate) open_browser: bool,
    /// The binding name of the --stdio/--http/--sse server ([A-Za-z0-9_-],
    /// 1 to 32 bytes): part of every tool's model name,
    /// mcp__BINDING__TOOL.
    #[arg(long, global = true, default_value = "server", help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) binding: String,
    /// The server a single-server command (prompts, get-prompt, resources,
    /// templates, read, a call by raw name) talks to, when there are several.
    #[arg(long, global = true, value_name = "NAME", help_heading = CONNECTION)]
    pub(crate) server: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Answer elicitation with the schema's defaults, without prompting.
    #[arg(long, global = true, hide_short_help = true)]
    pub(crate) accept_defaults: bool,
    /// Offer this directory to the servers as a root (repeatable). Without
    /// it, a server that asks for roots is told there are none.
    #[arg(long = "root", value_name = "DIR", global = true, hide_short_help = true)]
    pub(crate) roots: Vec<PathBuf>,
    /// Print the servers' logs at this level and above on stderr (debug,
    /// info, notice, warning, error, critical, alert, emergency).
    #[arg(long, value_name = "LEVEL", global = true, hide_short_help = true)]
    pub(crate) log_level: Option<String>,
    /// Which protocol era every server is spoken to in: auto (the
    /// 2026-07-28 protocol when the server speaks it, else the initialize
    /// handshake), legacy (initialize only), modern (2026-07-28 only), or
    /// one version exactly (2026-07-28, 2025-11-25, 2025-06-18, ...).
    /// Overrides a config entry's protocol [default: auto, or the entry's
    /// own].
    #[arg(long, value_name = "auto|legacy|modern|VERSION", global = true, help_heading = CONNECTION, hide_short_help = true)]
    pub(crate) protocol: Option<String>,
    #[command(flatten)]
    pub(crate) timeouts: TimeoutFlags,
    #[command(flatten)]
    pub(crate) limits: LimitFlags,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Each server's state, transport, protocol version, tool count and last
    /// failure.
    Servers,
    /// Every server's tools, by model name; or the best matches for a
    /// query (--search); or the tools exactly as a provider is sent them
    /// (--for).
    #[command(after_help = TOOLS_EXAMPLES)]
    Tools {
        /// Rank the tools for QUERY (words as a person or a model would
        /// ask: "bookmark a repo", "open PRs") and print the best -k, best
        /// first, with their score and why they matched.
        #[arg(long, value_name = "QUERY", conflicts_with = "provider")]
        search: Option<String>,
        /// With --search: how many hits (1 to 100).
        #[arg(short = 'k', value_name = "N", default_value_t = 10, requires = "search",
              value_parser = clap::value_parser!(u16).range(1..=100))]
        k: u16,
        /// Print the tool definitions exactly as PROVIDER's API is sent them
        /// (openai: Chat Completions, strict where a schema allows; anthropic;
        /// gemini: function declarations), the warnings of the conversion,
        /// and the estimated tokens of the whole set.
        #[arg(long = "for", value_name = "PROVIDER", value_parser = ["openai", "anthropic", "gemini"])]
        provider: Option<String>,
        /// With --for: what a deferred conversation's first turn sends
        /// (the always-loaded tools, those whose _meta says
        /// anthropic/alwaysLoad, and search_tools), to compare its cost.
        #[arg(long, requires = "provider")]
        deferred: bool,
    },
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
        /// Run the call as a task at the server (one whose tools/list
        /// says taskSupport optional or required): its status changes are
        /// shown as they come, then its result. A tool that requires tasks
        /// runs as one without this flag too.
        #[arg(long)]
        task: bool,
        /// With --task: how long the server is asked to keep the task and
        /// its result, in milliseconds (it may choose otherwise; a
        /// 2026-07-28 server decides alone) [default: the server's].
        #[arg(long, value_name = "MS", requires = "task")]
        ttl_ms: Option<u64>,
        /// Call the tool as an app of its server would (MCP Apps): the
        /// only way to reach a tool whose _meta.ui.visibility is ["app"],
        /// for a person debugging the server. Without it such a tool is
        /// refused, as it is to a model.
        #[arg(long, conflicts_with = "task")]
        as_app: bool,
        /// Save the result's first image, audio or embedded resource (its
        /// bytes, or its text) to FILE instead of printing it; without
        /// one, the result's text.
        #[arg(long, value_name = "FILE", conflicts_with = "task")]
        output: Option<PathBuf>,
    },
    /// A server's tasks: list them, see one, wait for its result, cancel
    /// it.
    #[command(after_help = TASKS_EXAMPLES)]
    Tasks {
        #[command(subcommand)]
        action: TaskAction,
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
    /// Every server's app tools (MCP Apps): who may see and call each,
    /// and its ui:// resource.
    Apps,
    /// Read a tool's app: its HTML, checked and fingerprinted, to stdout
    /// or to a file.
    #[command(after_help = APPS_EXAMPLES)]
    ReadApp {
        /// The tool's model name (mcp__BINDING__TOOL), or its raw name
        /// with one server or --server.
        tool: String,
        /// Save the HTML to FILE instead of printing it.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// A server's skills (SEP-2640): list them, or fetch one, verified.
    #[command(after_help = SKILLS_EXAMPLES)]
    Skills {
        #[command(subcommand)]
        action: SkillAction,
    },
    /// A local web inspector of these servers, on 127.0.0.1: their state,
    /// catalogs, forms to call tools, get prompts and read resources,
    /// tasks, events, JSON-RPC traffic, elicitations answered on the page,
    /// and the tools' apps (MCP Apps) rendered in a sandbox.
    #[command(after_help = INSPECT_HELP)]
    Inspect {
        /// The loopback address and port to listen on (port 0: any free
        /// port). Any other address is refused.
        #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:0")]
        listen: std::net::SocketAddr,
    },
}

/// Shown by `mcp inspect --help`.
const INSPECT_HELP: &str = "\
The first line of stdout is the page's URL with its token, e.g.
  http://127.0.0.1:43117/?token=9f3c...
Nothing is reachable without the token. The command serves until Ctrl-C
or SIGTERM, then closes every server. --open-browser opens the URL.

Each view is a URL: the token plus
  server=S                            S's catalog
  server=S&tool=T[&args=JSON]         tool T's schemas and call form
  server=S&tool=T&view=app&args=JSON  T's app, the tool called with args
  server=S&view=prompts|resources|tasks
  view=servers|events|traffic|model   (model: the tools a model is offered)
An app's state is the data-app-status attribute (loading, ready, error) of
the element #app-frame-container. See docs/inspect.md.

Examples:
  mcp --config mcp.json inspect
  mcp --stdio 'node server.js' inspect --listen 127.0.0.1:6274 --open-browser";

/// `mcp skills ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum SkillAction {
    /// The server's skills (skills/list); nothing of them is fetched.
    List,
    /// Fetch a skill: its SKILL.md and each listed file, each verified
    /// against the listing; SKILL.md printed, or every file written under
    /// --out DIR.
    Get {
        /// The skill's name, as `skills list` shows it.
        name: String,
        /// Write the skill's files under DIR, at their paths below
        /// SKILL.md (created if missing). (`--out` is an older spelling.)
        #[arg(long, alias = "out", value_name = "DIR")]
        output: Option<PathBuf>,
    },
}

/// `mcp tasks ...`.
#[derive(Subcommand, Debug)]
pub(crate) enum TaskAction {
    /// The server's tasks (tasks/list), newest last.
    List,
    /// One task's status (tasks/get).
    Get {
        /// The task's id, as the server gave it.
        id: String,
    },
    /// Wait for a task to end and print its result (tasks/get, then
    /// tasks/result), within --request-timeout-ms.
    Result {
        /// The task's id, as the server gave it.
        id: String,
    },
    /// Cancel a task (tasks/cancel).
    Cancel {
        /// The task's id, as the server gave it.
        id: String,
    },
}

pub(crate) fn millis_help(what: &str, default: Duration) -> String {
    format!("{what}, in milliseconds [default: {} = {} s]", default.as_millis(), default.as_secs())
}

/// OAuth for the --http/--sse server.
#[cfg(feature = "oauth")]
#[derive(Args, Debug)]
pub(crate) struct OAuthFlags {
    /// Authorize with OAuth when the --http/--sse server asks for it: the
    /// authorization URL is printed on stderr (and opened with
    /// --open-browser), a listener on 127.0.0.1 takes the browser's
    /// redirect, and the tokens are kept in --token-dir for the next run.
    #[arg(long, global = true, help_heading = AUTHORIZATION)]
    pub(crate) oauth: bool,
    /// A client registered with the authorization server beforehand (else
    /// the client registers itself where the server allows it).
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "ID", requires = "oauth")]
    pub(crate) client_id: Option<String>,
    /// The secret of the --client-id client. Never printed; mind that a
    /// command line is visible to other users of this machine.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "SECRET", requires = "client_id")]
    pub(crate) client_secret: Option<String>,
    /// The authorization server (its issuer URL) the --client-id client
    /// belongs to: any other is refused before it is sent anything. Without
    /// it, the client is bound to the first server that grants it a token,
    /// and that is kept in --token-dir.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "URL", requires = "client_id")]
    pub(crate) issuer: Option<String>,
    /// Scopes to ask for (space-separated) when the server names none.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "SCOPES", requires = "oauth")]
    pub(crate) scope: Option<String>,
    /// The port of the redirect listener on 127.0.0.1 (default: any free
    /// port; a fixed one for servers with exact redirect URIs).
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "PORT", requires = "oauth")]
    pub(crate) redirect_port: Option<u16>,
    /// Where tokens are kept, one private file (mode 0600) per server
    /// origin [default: $XDG_CONFIG_HOME/mcp-stack/tokens, else
    /// ~/.config/mcp-stack/tokens].
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "DIR", requires = "oauth")]
    pub(crate) token_dir: Option<PathBuf>,
    /// A machine client: the client_credentials grant, no browser and no
    /// redirect listener (with --client-secret or --private-key).
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, requires = "oauth")]
    pub(crate) client_credentials: bool,
    /// Authenticate the client with private_key_jwt, signing with this
    /// private key (PEM: PKCS#8 P-256, P-384 or RSA, or PKCS#1 RSA). Without
    /// --client-id the client registers itself with the key's public half.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "FILE", requires = "oauth")]
    pub(crate) private_key: Option<PathBuf>,
    /// Sender-constrained tokens (DPoP, RFC 9449), proofs signed with this
    /// private key (PEM, as --private-key). The tokens in --token-dir are
    /// bound to it: keep the file as long as them.
    #[arg(long, global = true, help_heading = AUTHORIZATION, hide_short_help = true, value_name = "FILE", requires = "oauth")]
    pub(crate) dpop_key: Option<PathBuf>,
}

#[cfg(feature = "oauth")]
impl OAuthFlags {
    /// The OAuth settings the flags ask for, with the loopback handler
    /// listening already (its redirect URI is part of the registration).
    pub(crate) async fn settings(
        &self,
        open_browser: bool,
    ) -> Result<Option<mcp_stack::auth::OAuth>, Failure> {
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
                open_browser,
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

/// The private key in the PEM file at `path`, for `flag`, read bounded as
/// every PEM file is ([`crate::setup::pem_file`]). What is wrong with it is
/// said without any of its content.
#[cfg(feature = "oauth")]
pub(crate) fn read_key(flag: &str, path: &std::path::Path) -> Result<mcp_stack::auth::SigningKey, Failure> {
    use mcp_stack::auth::{Secret, SigningKey};
    let pem = String::from_utf8(crate::setup::pem_file(flag, path)?)
        .map_err(|_| usage(format!("{flag} {}: not a PEM file (not UTF-8)", path.display())))?;
    SigningKey::from_pem(&Secret::new(pem), None)
        .map_err(|e| usage(format!("{flag} {}: {e}", path.display())))
}

/// The command's own directory of state kept between runs:
/// `$XDG_CONFIG_HOME/mcp-stack`, else `~/.config/mcp-stack`; `None` when
/// neither variable is set.
pub(crate) fn config_dir() -> Option<PathBuf> {
    let config =
        std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(config.join("mcp-stack"))
}

/// `$XDG_CONFIG_HOME/mcp-stack/tokens`, else `~/.config/mcp-stack/tokens`.
#[cfg(feature = "oauth")]
pub(crate) fn default_token_dir() -> Option<PathBuf> {
    Some(config_dir()?.join("tokens"))
}

/// Where `read-app` keeps the last fingerprint of each app, beside the
/// tokens: `$XDG_CONFIG_HOME/mcp-stack/app-fingerprints.json`, else
/// `~/.config/mcp-stack/app-fingerprints.json`.
pub(crate) fn app_fingerprint_file() -> Option<PathBuf> {
    Some(config_dir()?.join("app-fingerprints.json"))
}

#[derive(Args, Debug)]
pub(crate) struct TimeoutFlags {
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("How long connecting may take (connect, handshake, catalog)", Timeouts::default().startup()))]
    pub(crate) startup_timeout_ms: Option<u64>,
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("How long one request may take", Timeouts::default().request()))]
    pub(crate) request_timeout_ms: Option<u64>,
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("How long a question to you may wait for an answer", Timeouts::default().elicitation()))]
    pub(crate) elicitation_timeout_ms: Option<u64>,
    #[arg(long, global = true, value_name = "MS", help_heading = TIMEOUTS, hide_short_help = true,
          help = millis_help("With --protocol auto: how long server/discover may go unanswered before the server is taken for a pre-2026 one", Timeouts::default().discover()))]
    pub(crate) discover_timeout_ms: Option<u64>,
}

impl TimeoutFlags {
    /// `timeouts` with each deadline given on the command line.
    pub(crate) fn apply(&self, mut timeouts: Timeouts) -> Timeouts {
        let ms = Duration::from_millis;
        if let Some(n) = self.startup_timeout_ms {
            timeouts = timeouts.with_startup(ms(n));
        }
        if let Some(n) = self.request_timeout_ms {
            timeouts = timeouts.with_request(ms(n));
        }
        if let Some(n) = self.elicitation_timeout_ms {
            timeouts = timeouts.with_elicitation(ms(n));
        }
        if let Some(n) = self.discover_timeout_ms {
            timeouts = timeouts.with_discover(ms(n));
        }
        timeouts
    }
}

/// `<what> [default: N]`, with N in KiB or MiB too for a byte count.
pub(crate) fn limit_help(what: &str, field: &str, default: usize) -> String {
    let human = match default {
        n if field.ends_with("_bytes") && n >= 1 << 20 && n % (1 << 20) == 0 => format!(" = {} MiB", n >> 20),
        n if field.ends_with("_bytes") && n >= 1 << 10 && n % (1 << 10) == 0 => format!(" = {} KiB", n >> 10),
        _ => String::new(),
    };
    format!("{what} [default: {default}{human}]")
}

macro_rules! limit_flags {
    ($($field:ident / $setter:ident: $what:literal),* $(,)?) => {
        #[derive(Args, Debug)]
        pub(crate) struct LimitFlags {
            $(
                #[arg(long, global = true, value_name = "N", help_heading = LIMITS, hide_short_help = true,
                      help = limit_help($what, stringify!($field), Limits::default().$field()))]
                pub(crate) $field: Option<usize>,
            )*
        }

        impl LimitFlags {
            /// `limits` with each bound given on the command line.
            pub(crate) fn apply(&self, mut limits: Limits) -> Limits {
                $( if let Some(n) = self.$field { limits = limits.$setter(n); } )*
                limits
            }
        }
    };
}

limit_flags!(
    max_concurrent_requests / with_max_concurrent_requests: "Requests in flight at once, per server",
    max_catalog_pages / with_max_catalog_pages: "Pages read of one list (tools, prompts, resources)",
    max_catalog_items / with_max_catalog_items: "Tools taken from one server",
    max_frame_bytes / with_max_frame_bytes: "The largest message sent or read, in bytes (arguments included)",
    max_body_bytes / with_max_body_bytes: "The largest HTTP response body, in bytes",
    max_schema_bytes / with_max_schema_bytes: "The largest tool schema, in bytes",
    max_schema_depth / with_max_schema_depth: "The deepest tool schema nesting",
    max_text_result_bytes / with_max_text_result_bytes: "The text of one result, in bytes (more is cut and marked)",
    max_structured_bytes / with_max_structured_bytes: "The structured content of one tool result, in bytes",
    max_binary_item_bytes / with_max_binary_item_bytes: "One image, audio or blob item, in bytes",
    max_binary_items / with_max_binary_items: "Binary items in one result",
    max_content_items / with_max_content_items: "Items in one result (content blocks, prompt messages, resource contents)",
    max_log_message_bytes / with_max_log_message_bytes: "One server log message, in bytes",
    max_elicit_message_bytes / with_max_elicit_message_bytes: "One question a server asks you, in bytes",
    max_elicit_schema_bytes / with_max_elicit_schema_bytes: "The form a question asks for, in bytes",
    max_prompt_count / with_max_prompt_count: "Prompts taken from one server",
    max_resource_count / with_max_resource_count: "Resources taken from one server",
    max_sampling_depth / with_max_sampling_depth: "Nested sampling requests",
    max_sampling_concurrency / with_max_sampling_concurrency: "Sampling requests at once",
    max_sampling_tokens / with_max_sampling_tokens: "Tokens of one sampling completion",
    max_sampling_messages / with_max_sampling_messages: "Messages of one sampling request",
    max_sampling_request_bytes / with_max_sampling_request_bytes: "One sampling request, in bytes",
);

/// A `--env` value: `KEY=VALUE`. Its `Debug` shows the key only; it is
/// checked after parsing so that no error quotes the value.
#[derive(Clone)]
pub(crate) struct EnvArg {
    pub(crate) text: String,
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
    pub(crate) fn pair(&self) -> Result<(&str, &str), Failure> {
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
pub(crate) struct HeaderArg {
    pub(crate) line: String,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EXIT_USAGE;
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

        // One byte over the PEM bound is refused by its size, unread.
        let huge = dir.path().join("huge.pem");
        let mut body = b"-----BEGIN PRIVATE KEY-----\nSECRET-CONTENT\n".to_vec();
        body.resize(crate::setup::MAX_PEM_BYTES as usize + 1, b'A');
        std::fs::write(&huge, body).unwrap();
        let (code, e) = read_key("--dpop-key", &huge).unwrap_err();
        assert_eq!(code, EXIT_USAGE);
        assert!(e.message.contains("--dpop-key") && e.message.contains("larger than"), "{}", e.message);
        assert!(!e.message.contains("SECRET-CONTENT"), "{}", e.message);

        let binary = dir.path().join("binary.pem");
        std::fs::write(&binary, b"\xff\xfeSECRET-CONTENT").unwrap();
        let (code, e) = read_key("--private-key", &binary).unwrap_err();
        assert_eq!(code, EXIT_USAGE);
        assert!(e.message.contains("not UTF-8") && !e.message.contains("SECRET-CONTENT"), "{}", e.message);

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

    #[test]
    fn byte_limits_read_in_binary_units() {
        assert_eq!(limit_help("Frame", "max_frame_bytes", 4 << 20), "Frame [default: 4194304 = 4 MiB]");
        assert_eq!(limit_help("Schema", "max_schema_bytes", 256 << 10), "Schema [default: 262144 = 256 KiB]");
        assert_eq!(limit_help("Items", "max_binary_items", 16), "Items [default: 16]");
    }
}
