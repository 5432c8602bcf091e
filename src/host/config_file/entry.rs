//! One entry of a server list, made into a [`Definition`].

use serde_json::{Map, Value};

use super::extension::{self, kind_of, unknown_key, Extension};
use super::{take_string, vars, Issue, EXTENSION_KEY, MAX_LIST_ITEMS};
use crate::binding::Definition;
use crate::config::AlwaysLoad;
use crate::transport::stdio::StdioFactory;

/// Fields some clients write that this crate has no use for. Ignored with a
/// warning like any unknown field, but with a reason.
const FOREIGN_FIELDS: &[(&str, &str)] = &[
    ("autoApprove", "tool approval is the host's decision"),
    ("alwaysAllow", "tool approval is the host's decision"),
    ("timeout", "use x-mcp-stack.timeouts"),
    ("description", "descriptive only"),
    ("envFile", "a config file does not make this process read other files"),
    ("dev", "VS Code's development mode"),
];

/// Which transport an entry asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    StreamableHttp,
    Sse,
    /// `"http"`, or remote with no `type`: streamable HTTP with the
    /// HTTP+SSE fallback where the profile allows it.
    Auto,
}

/// Reads the entry `name`. `Ok(None)`: a disabled entry, skipped with a
/// warning.
pub(super) fn read(
    name: &str,
    value: Value,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<Issue>,
) -> Result<Option<Definition>, Issue> {
    let Value::Object(mut obj) = value else {
        return Err(Issue::new(name, "", format!("must be a JSON object, not {}", kind_of(&value))));
    };
    if let Some(disabled) = obj.remove("disabled") {
        match disabled {
            Value::Bool(true) => {
                warnings.push(Issue::new(name, "disabled", "the entry is disabled; not loaded"));
                return Ok(None);
            }
            Value::Bool(false) => {}
            other => {
                return Err(Issue::new(
                    name,
                    "disabled",
                    format!("must be a boolean, not {}", kind_of(&other)),
                ))
            }
        }
    }
    let ext = match obj.remove(EXTENSION_KEY) {
        Some(v) => extension::read(name, v, warnings)?,
        None => Extension::default(),
    };
    let kind = kind(name, &mut obj)?;
    let binding_name = ext.name.clone().unwrap_or_else(|| name.to_string());
    check_binding_name(name, &binding_name, ext.name.is_some())?;
    let mut definition = match kind {
        Kind::Stdio => {
            for ignored in ["url", "headers"] {
                if obj.remove(ignored).is_some() {
                    warnings.push(Issue::new(name, ignored, "is ignored for a stdio entry"));
                }
            }
            if ext.network.any() {
                let field = format!("{EXTENSION_KEY}.proxy");
                warnings.push(Issue::new(
                    name,
                    &field,
                    "the proxy and certificate keys are ignored for a stdio entry",
                ));
            }
            Definition::new(binding_name, stdio(name, &mut obj, env)?)
        }
        remote => {
            for ignored in ["command", "args", "env", "cwd"] {
                if obj.remove(ignored).is_some() {
                    warnings.push(Issue::new(name, ignored, "is ignored for a remote entry"));
                }
            }
            remote_definition(name, binding_name, remote, &mut obj, &ext, env)?
        }
    };
    ext.apply(&mut definition);
    if let Some(value) = obj.remove("alwaysLoad") {
        definition.always_load = always_load(name, value)?;
    }
    for (key, _) in obj {
        match FOREIGN_FIELDS.iter().find(|(k, _)| *k == key) {
            Some((_, why)) => warnings.push(Issue::new(name, &key, format!("is ignored: {why}"))),
            None => warnings.push(unknown_key(name, &key)),
        }
    }
    definition.validate().map_err(|e| {
        let field = if ext.profile.is_some() { format!("{EXTENSION_KEY}.profile") } else { String::new() };
        Issue::new(name, &field, e.message())
    })?;
    Ok(Some(definition))
}

/// The most tool names one `alwaysLoad` list may hold.
const MAX_ALWAYS_LOAD_NAMES: usize = 1024;

/// An entry's `alwaysLoad`: `true` (every tool of the server), `false`
/// (only those whose `_meta` asks), or a list of raw tool names.
fn always_load(name: &str, value: Value) -> Result<AlwaysLoad, Issue> {
    let refuse = |what: String| Err(Issue::new(name, "alwaysLoad", what));
    match value {
        Value::Bool(true) => Ok(AlwaysLoad::All),
        Value::Bool(false) => Ok(AlwaysLoad::AsServerAsks),
        Value::Array(items) if items.len() > MAX_ALWAYS_LOAD_NAMES => {
            refuse(format!("holds more than {MAX_ALWAYS_LOAD_NAMES} names"))
        }
        Value::Array(items) => {
            let mut names = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) if !s.is_empty() && s.len() <= 128 => names.push(s),
                    _ => return refuse("must hold tool names (strings of 1 to 128 bytes)".into()),
                }
            }
            Ok(AlwaysLoad::Tools(names))
        }
        other => refuse(format!("must be a boolean or a list of tool names, not {}", kind_of(&other))),
    }
}

fn kind(name: &str, obj: &mut Map<String, Value>) -> Result<Kind, Issue> {
    let ty = match obj.remove("type") {
        None => None,
        Some(Value::String(t)) => Some(t),
        Some(other) => {
            return Err(Issue::new(name, "type", format!("must be a string, not {}", kind_of(&other))))
        }
    };
    match ty.as_deref() {
        Some("stdio") => Ok(Kind::Stdio),
        // VS Code tries streamable HTTP and falls back to HTTP+SSE for "http".
        Some("http") => Ok(Kind::Auto),
        Some("streamable-http" | "streamableHttp" | "streamable_http") => Ok(Kind::StreamableHttp),
        Some("sse") => Ok(Kind::Sse),
        Some(_) => {
            Err(Issue::new(name, "type", "must be \"stdio\", \"http\", \"streamable-http\" or \"sse\""))
        }
        None => match (obj.contains_key("command"), obj.contains_key("url")) {
            (true, false) => Ok(Kind::Stdio),
            (false, true) => Ok(Kind::Auto),
            (true, true) => Err(Issue::new(
                name,
                "type",
                "the entry has both \"command\" and \"url\"; say which with \"type\"",
            )),
            (false, false) => {
                Err(Issue::new(name, "command", "the entry has neither \"command\" nor \"url\""))
            }
        },
    }
}

fn check_binding_name(entry: &str, binding: &str, from_extension: bool) -> Result<(), Issue> {
    let ok = !binding.is_empty()
        && binding.len() <= crate::catalog::names::MAX_BINDING_NAME_BYTES
        && binding.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        return Ok(());
    }
    let (field, hint) = match from_extension {
        true => (format!("{EXTENSION_KEY}.name"), ""),
        false => (String::new(), "; give it one with \"x-mcp-stack\": {\"name\": …}"),
    };
    Err(Issue::new(entry, &field, format!("a binding name must be 1 to 32 bytes of [A-Za-z0-9_-]{hint}")))
}

fn stdio(
    name: &str,
    obj: &mut Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<StdioFactory, Issue> {
    let command = take_string(name, obj, "command", env)?
        .ok_or_else(|| Issue::new(name, "command", "is required for a stdio entry"))?;
    if command.trim().is_empty() {
        return Err(Issue::new(name, "command", "is empty"));
    }
    let mut factory = StdioFactory::new(command);
    match obj.remove("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(args)) => {
            if args.len() > MAX_LIST_ITEMS {
                return Err(Issue::new(name, "args", format!("holds more than {MAX_LIST_ITEMS} items")));
            }
            for (i, arg) in args.into_iter().enumerate() {
                let field = format!("args[{i}]");
                let Value::String(arg) = arg else {
                    return Err(Issue::new(name, &field, format!("must be a string, not {}", kind_of(&arg))));
                };
                factory = factory.arg(vars::substitute(&arg, env).map_err(|e| Issue::new(name, &field, e))?);
            }
        }
        Some(other) => {
            return Err(Issue::new(name, "args", format!("must be an array, not {}", kind_of(&other))))
        }
    }
    for (key, value) in string_map(name, obj, "env", env)? {
        if key.is_empty() || key.contains('=') || key.contains('\0') {
            return Err(Issue::new(
                name,
                "env",
                "holds a variable name that is empty or contains '=' or NUL",
            ));
        }
        factory = factory.env(key, value);
    }
    if let Some(cwd) = take_string(name, obj, "cwd", env)? {
        factory = factory.current_dir(cwd);
    }
    Ok(factory)
}

/// The object field `field` as name → substituted string value.
fn string_map(
    name: &str,
    obj: &mut Map<String, Value>,
    field: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, Issue> {
    let map = match obj.remove(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(Issue::new(name, field, format!("must be an object, not {}", kind_of(&other))))
        }
    };
    if map.len() > MAX_LIST_ITEMS {
        return Err(Issue::new(name, field, format!("holds more than {MAX_LIST_ITEMS} items")));
    }
    let mut out = Vec::with_capacity(map.len());
    for (key, value) in map {
        let path = format!("{field}.{key}");
        let Value::String(value) = value else {
            return Err(Issue::new(name, &path, format!("must be a string, not {}", kind_of(&value))));
        };
        let value = vars::substitute(&value, env).map_err(|e| Issue::new(name, &path, e))?;
        out.push((key, value));
    }
    Ok(out)
}

#[cfg(feature = "http")]
fn remote_definition(
    name: &str,
    binding: String,
    kind: Kind,
    obj: &mut Map<String, Value>,
    ext: &Extension,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Definition, Issue> {
    use crate::compat::Tolerance;
    use crate::transport::http::{HttpBuilder, SecretHeaders};

    let url = take_string(name, obj, "url", env)?
        .ok_or_else(|| Issue::new(name, "url", "is required for a remote entry"))?;
    let mut headers = SecretHeaders::default();
    for (key, value) in string_map(name, obj, "headers", env)? {
        let path = format!("headers.{key}");
        headers.insert(&key, &value).map_err(|e| Issue::new(name, &path, e.message()))?;
    }
    crate::transport::http::parse_url(&url).map_err(|e| Issue::new(name, "url", e.message()))?;
    let builder =
        HttpBuilder::new(url).headers(headers).allow_redirects(ext.allow_redirects.unwrap_or(false));
    let builder = network(name, builder, &ext.network, env)?;
    // The URL is good: what else fails the build is a network key's (a
    // proxy URL, a certificate that does not parse).
    let build_field = if ext.network.any() { EXTENSION_KEY } else { "url" };
    let url_issue = |e: crate::Error| Issue::new(name, build_field, e.message());
    let definition = match kind {
        Kind::StreamableHttp => Definition::new(binding, builder.build().map_err(url_issue)?),
        Kind::Sse => Definition::new(binding, builder.build_sse().map_err(url_issue)?),
        _ => {
            // The fallback is a tolerance: only where the profile allows it.
            let profile = ext.profile.clone().unwrap_or_default();
            let fallback = profile.allows(Tolerance::LegacySse);
            Definition::new(binding, builder.build_auto(fallback).map_err(url_issue)?)
        }
    };
    Ok(definition)
}

/// Applies the extension's network keys: the proxy URL and the file paths
/// are substituted like any value; the files are read now (each at most
/// [`MAX_PEM_BYTES`]), so that a missing or bad one is an error for the
/// entry, naming the field (never the file's content). A relative path is
/// relative to the working directory.
#[cfg(feature = "http")]
fn network(
    name: &str,
    mut builder: crate::transport::http::HttpBuilder,
    keys: &super::extension::NetworkKeys,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<crate::transport::http::HttpBuilder, Issue> {
    let field = |f: &str| format!("{EXTENSION_KEY}.{f}");
    let value = |f: &str, v: &str| vars::substitute(v, env).map_err(|e| Issue::new(name, &field(f), e));
    let read = |f: &str, v: &str| -> Result<Vec<u8>, Issue> {
        let path = value(f, v)?;
        read_pem_file(&path).map_err(|e| Issue::new(name, &field(f), e))
    };
    if let Some(proxy) = &keys.proxy {
        builder = builder.proxy(&value("proxy", proxy)?);
    }
    if keys.no_proxy {
        builder = builder.no_proxy();
    }
    if let Some(path) = &keys.ca_cert {
        builder = builder.root_certificates_pem(read("caCert", path)?);
    }
    if let (Some(cert), Some(key)) = (&keys.client_cert, &keys.client_key) {
        builder = builder.client_certificate_pem(read("clientCert", cert)?, read("clientKey", key)?);
    }
    Ok(builder)
}

/// The largest PEM file read for a certificate or key: 1 MiB holds any CA
/// bundle a private network uses.
#[cfg(feature = "http")]
const MAX_PEM_BYTES: u64 = 1 << 20;

/// Reads a PEM file, bounded; the error names the problem, never the
/// content.
#[cfg(feature = "http")]
fn read_pem_file(path: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(format!("{path} is larger than {MAX_PEM_BYTES} bytes"));
    }
    Ok(bytes)
}

#[cfg(not(feature = "http"))]
fn remote_definition(
    name: &str,
    _binding: String,
    _kind: Kind,
    _obj: &mut Map<String, Value>,
    _ext: &Extension,
    _env: &dyn Fn(&str) -> Option<String>,
) -> Result<Definition, Issue> {
    Err(Issue::new(name, "url", "a remote server needs this crate's `http` feature"))
}
