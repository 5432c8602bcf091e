//! What the flags make before anything connects: the arguments read and
//! checked, the servers' definitions and the host's handlers.

use mcp_stack::catalog::apps::{AppFingerprintStore, FileAppFingerprintStore};
use mcp_stack::handlers::{root_for_path, ElicitRequest, ElicitationModes, LogMessage};
use mcp_stack::host::config_file;
use mcp_stack::protocol::LoggingLevel;
#[cfg(feature = "http")]
use mcp_stack::transport::http::{HttpBuilder, SecretHeaders};
use mcp_stack::transport::stdio::StdioFactory;
use mcp_stack::transport::TransportFactory;
use mcp_stack::ProtocolChoice;
use mcp_stack::{handlers::Handlers, AllowedCapabilities, Definition, Error, FailureClass, Limits};
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::cli::{Cli, Command};
use crate::terminal::{clean, clean_line, err_line};
use crate::{args, bad_arguments, elicit, failure, usage, Failure, EXIT_USAGE};

/// The arguments of `call` and `get-prompt`, read and checked before
/// anything connects.
pub(crate) fn read_arguments(cli: &Cli) -> Result<Option<Map<String, Value>>, Failure> {
    let limit = cli.limits.max_frame_bytes.unwrap_or(Limits::default().max_frame_bytes());
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
pub(crate) const MAX_PEM_BYTES: u64 = 1 << 20;

/// Reads the PEM file a flag names, bounded; the error names the flag and
/// the path, never the content.
#[cfg(feature = "http")]
pub(crate) fn pem_file(flag: &str, path: &std::path::Path) -> Result<Vec<u8>, Failure> {
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
pub(crate) async fn flag_server(cli: &Cli) -> Result<Option<Arc<dyn TransportFactory>>, Failure> {
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
        let builder = match cli.oauth.settings(cli.open_browser).await? {
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
pub(crate) async fn definitions(
    cli: &Cli,
    capabilities: AllowedCapabilities,
) -> Result<Vec<Definition>, Failure> {
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
    // `read-app` reports an app that changed since an earlier run from
    // this file. Not for an in-process server (the demo): nothing
    // identifies it from one run to the next.
    let app_fingerprints = crate::cli::app_fingerprint_file()
        .map(|path| Arc::new(FileAppFingerprintStore::new(path)) as Arc<dyn AppFingerprintStore>);
    definitions
        .into_iter()
        .map(|mut definition| {
            if definition.transport().kind() != "memory" {
                if let Some(store) = &app_fingerprints {
                    definition = definition.with_app_fingerprint_store(store.clone());
                }
            }
            let timeouts = cli.timeouts.apply(*definition.timeouts());
            definition = definition.with_timeouts(timeouts);
            if let Some(protocol) = &protocol {
                definition = definition.with_protocol(protocol.clone());
            }
            let limits = cli.limits.apply(*definition.limits());
            // The CLI shows apps and skills, so it declares both extensions.
            let extensions = definition.extensions().clone().apps().skills();
            definition =
                definition.with_limits(limits).with_capabilities(capabilities).with_extensions(extensions);
            if let Some(level) = log_level {
                definition = definition.with_log_level(level);
            }
            definition.validate().map_err(|e| failure(EXIT_USAGE, &e))?;
            Ok(definition)
        })
        .collect()
}

/// The host's side: elicitation on the terminal, `--root`, `--log-level`.
pub(crate) fn handlers(cli: &Cli) -> Result<(Handlers, AllowedCapabilities), Failure> {
    let mut roots = Vec::new();
    for dir in &cli.roots {
        let dir = dir
            .canonicalize()
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| usage(format!("--root {}: not a directory", dir.display())))?;
        roots.push(root_for_path(&dir).map_err(|e| usage(e.to_string()))?);
    }
    // The command follows any task a server makes to its result. Roots
    // are declared with or without --root: a server that asks is told what
    // the person gave, possibly nothing, rather than refused (as the MCP
    // Inspector answers an empty list).
    let capabilities =
        AllowedCapabilities::default().with_elicitation(true).with_roots(true).with_tasks(true);
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
