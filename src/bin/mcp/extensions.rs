//! The extensions' commands: `apps` and `read-app TOOL` (MCP Apps),
//! `skills list` and `skills get NAME` (SEP-2640).
//!
//! The CLI declares both extensions to every server, so that a server
//! that offers apps or skills only to a client that declares them shows
//! them here. An app's HTML is data: `read-app` prints or saves it and
//! never renders it or fetches what it references. The last fingerprint
//! of each app is kept between runs in the config directory, beside the
//! tokens (`cli::app_fingerprint_file`), so that a run warns of an app
//! that changed since the last one. A skill is fetched only
//! by `skills get`, each file verified against the listing before it is
//! printed or written; `--output DIR` writes the files under DIR at the paths
//! their URIs have below the skill's `SKILL.md`, and refuses a path that
//! would leave DIR.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use mcp_stack::catalog::ToolSpec;
use mcp_stack::host::Host;
use mcp_stack::skills::{LoadedSkill, SkillInfo};
use mcp_stack::{Binding, CallOpts, Error, FailureClass};
use serde_json::{json, Value};
use std::path::Path;

use crate::cli::{Cli, SkillAction};
use crate::commands::{aligned, first_line, one_server, Output};
use crate::terminal::{clean, clean_line, err_line};
use crate::{failure, usage, Failure, EXIT_CALL, EXIT_USAGE};

/// `apps`: every connected server's app tools.
pub(crate) fn apps(host: &Host) -> Output {
    let catalog = host.catalog();
    let mut rows = Vec::new();
    let mut table = vec![["TOOL", "VISIBLE TO", "RESOURCE"].map(String::from)];
    for c in catalog.catalogs() {
        for tool in &c.tools {
            let Some(app) = &tool.app else { continue };
            let visibility = match (app.visibility.model, app.visibility.app) {
                (true, true) => "model, app",
                (true, false) => "model",
                (false, true) => "app",
                (false, false) => "nobody",
            };
            table.push([
                clean_line(&tool.model_name),
                visibility.to_string(),
                clean_line(app.resource_uri.as_deref().unwrap_or("-")),
            ]);
            rows.push(json!({
                "binding": c.binding, "rawName": tool.raw_name, "modelName": tool.model_name,
                "resourceUri": app.resource_uri, "visibility": app.visibility, "warnings": tool.warnings,
            }));
        }
    }
    let lines =
        if rows.is_empty() { vec!["no server offers app tools".to_string()] } else { aligned(&table) };
    Output::ok(json!({ "apps": rows }), lines)
}

/// `read-app TOOL [--output FILE]`.
pub(crate) async fn read_app(
    cli: &Cli,
    host: &Host,
    name: &str,
    output: Option<&Path>,
) -> Result<Output, Failure> {
    let (binding, tool) = app_tool(cli, host, name).await?;
    let Some(uri) = tool.app.as_ref().and_then(|a| a.resource_uri.clone()) else {
        return Err(failure(
            EXIT_USAGE,
            &Error::new(FailureClass::NotFound, format!("the tool {:?} has no app", clean_line(name)))
                .with_binding(binding.name())
                .with_op("read_app"),
        ));
    };
    let app = binding.read_app(&uri, CallOpts::default()).await.map_err(|e| failure(EXIT_CALL, &e))?;
    // What is not the HTML goes to stderr, so that stdout is the page.
    if !cli.json {
        err_line(&format!("{}: fingerprint sha256:{}", clean_line(&app.uri), app.fingerprint));
        let csp = &app.meta.csp;
        for (directive, list) in [
            ("connect", &csp.connect_domains),
            ("resource", &csp.resource_domains),
            ("frame", &csp.frame_domains),
            ("base-uri", &csp.base_uri_domains),
        ] {
            if !list.is_empty() {
                err_line(&format!("csp {directive}: {}", clean_line(&list.join(" "))));
            }
        }
        let p = app.meta.permissions;
        let asked: Vec<&str> = [
            ("camera", p.camera),
            ("microphone", p.microphone),
            ("geolocation", p.geolocation),
            ("clipboard-write", p.clipboard_write),
        ]
        .into_iter()
        .filter_map(|(name, asked)| asked.then_some(name))
        .collect();
        if !asked.is_empty() {
            err_line(&format!("permissions asked: {}", asked.join(", ")));
        }
        if let Some(drift) = &app.drift {
            // No generation: the earlier fingerprint is an earlier run's,
            // from the file kept beside the tokens (see `read-app --help`).
            let when = if drift.previous_generation.is_some() { "" } else { " in an earlier run" };
            err_line(&format!(
                "warning: the app changed since it was read{when} (was sha256:{})",
                clean_line(&drift.previous)
            ));
        }
        for w in &app.warnings {
            err_line(&format!("warning: {}", clean_line(w)));
        }
    }
    let lines = match output {
        Some(path) => {
            std::fs::write(path, app.html.as_bytes())
                .map_err(|e| usage(format!("--output {}: {e}", path.display())))?;
            vec![format!("saved {} bytes of {} to {}", app.html.len(), clean_line(&app.uri), path.display())]
        }
        None => vec![clean(&app.html)],
    };
    Ok(Output::ok(json!(app), lines))
}

/// The binding and tool `name` means: a model name of any server, or a
/// raw name on the one server (or `--server`). Unlike `call`, an app-only
/// tool is found too: its app is what is read.
async fn app_tool(cli: &Cli, host: &Host, name: &str) -> Result<(Binding, ToolSpec), Failure> {
    // `resolve`, not `route`: the host's model-name lookup, without the
    // refusal of app-only tools that `route` adds for the model.
    let catalog = host.catalog();
    match catalog.resolve(name) {
        Ok((found, tool)) => {
            let binding = &found.binding;
            let binding =
                host.binding(binding).ok_or_else(|| usage(format!("no server named {binding:?}")))?;
            return Ok((binding, tool.clone()));
        }
        Err(e) if e.class() != FailureClass::NotFound => {
            return Err(failure(EXIT_USAGE, &e.with_op("read_app")))
        }
        Err(_) => {}
    }
    let binding = one_server(cli, host).await?;
    let tool = binding.catalog().tool(name).cloned().ok_or_else(|| {
        failure(
            EXIT_USAGE,
            &Error::new(
                FailureClass::NotFound,
                format!("no tool {:?} on {}", clean_line(name), binding.name()),
            )
            .with_op("read_app"),
        )
    })?;
    Ok((binding, tool))
}

/// `skills list` and `skills get NAME [--output DIR]`.
pub(crate) async fn skills(cli: &Cli, host: &Host, action: &SkillAction) -> Result<Output, Failure> {
    let binding = one_server(cli, host).await?;
    let call_failed = |e: Error| failure(EXIT_CALL, &e);
    let listing = binding.list_skills().await.map_err(call_failed)?;
    let warnings: Vec<String> =
        listing.warnings.iter().map(|w| format!("warning: {}", clean_line(w))).collect();
    match action {
        SkillAction::List => {
            let mut table = vec![["NAME", "FILES", "DESCRIPTION"].map(String::from)];
            for s in &listing.items {
                let files = s.files.as_ref().map_or_else(|| "dynamic".to_string(), |f| f.len().to_string());
                table.push([clean_line(&s.name), files, clean_line(first_line(Some(&s.description)))]);
            }
            let mut lines = if listing.items.is_empty() {
                vec![format!("server {} offers no skills", binding.name())]
            } else {
                aligned(&table)
            };
            lines.extend(warnings);
            Ok(Output::ok(json!({ "skills": listing.items, "warnings": listing.warnings }), lines))
        }
        SkillAction::Get { name, output: out } => {
            // Two skills with one name: the name does not say which, so
            // neither is taken (a usage error naming both).
            let skill = mcp_stack::skills::skill_by_name(&listing.items, name).map_err(|e| {
                let e = match e.class() {
                    FailureClass::NotFound => {
                        let names: Vec<String> = listing.items.iter().map(|s| clean_line(&s.name)).collect();
                        let message =
                            format!("{} on {} (it has: {})", e.message(), binding.name(), names.join(", "));
                        Error::new(FailureClass::NotFound, message)
                    }
                    _ => Error::new(e.class(), format!("{} on {}", e.message(), binding.name())),
                };
                failure(EXIT_USAGE, &e.with_op("load_skill"))
            })?;
            let loaded = binding.load_skill(skill, CallOpts::default()).await.map_err(call_failed)?;
            let mut output = match out {
                Some(dir) => save_skill(&loaded, dir)?,
                None => print_skill(&loaded),
            };
            output.lines.extend(warnings);
            Ok(output)
        }
    }
}

/// A loaded skill printed: its `SKILL.md`, then the other files by path.
fn print_skill(loaded: &LoadedSkill) -> Output {
    let mut lines = Vec::new();
    let mut files = Vec::new();
    for (file, bytes) in &loaded.files {
        let path = relative_path(&loaded.skill, &file.uri);
        let text = std::str::from_utf8(bytes).ok();
        if file.uri == loaded.skill.uri {
            lines.push(clean(text.unwrap_or_default()));
        } else {
            lines.push(format!(
                "--- {} ({} bytes, {})",
                clean_line(path.as_deref().unwrap_or(&file.uri)),
                bytes.len(),
                file.digest
            ));
        }
        let mut entry = json!({ "uri": file.uri, "path": path, "size": file.size, "digest": file.digest });
        match text {
            Some(text) => entry["text"] = Value::String(text.to_string()),
            None => entry["blob"] = Value::String(STANDARD.encode(bytes)),
        }
        files.push(entry);
    }
    Output::ok(json!({ "skill": loaded.skill, "files": files }), lines)
}

/// A loaded skill written under `dir`.
fn save_skill(loaded: &LoadedSkill, dir: &Path) -> Result<Output, Failure> {
    // Every path is checked before anything is written.
    let mut planned = Vec::new();
    for (file, bytes) in &loaded.files {
        let Some(path) = relative_path(&loaded.skill, &file.uri) else {
            return Err(failure(
                EXIT_CALL,
                &Error::new(
                    FailureClass::VerificationFailed,
                    format!(
                        "skill {:?}: the file {:?} has no safe path below its SKILL.md; nothing was written",
                        clean_line(&loaded.skill.name),
                        clean_line(&file.uri)
                    ),
                )
                .with_op("load_skill"),
            ));
        };
        planned.push((dir.join(&path), path, file, bytes));
    }
    let mut lines = Vec::new();
    let mut saved = Vec::new();
    let mut total = 0;
    for (target, path, file, bytes) in planned {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| usage(format!("--output {}: {e}", parent.display())))?;
        }
        std::fs::write(&target, bytes).map_err(|e| usage(format!("--output {}: {e}", target.display())))?;
        total += bytes.len();
        lines.push(format!("{}  {} bytes", target.display(), bytes.len()));
        saved.push(json!({ "uri": file.uri, "path": path, "size": file.size, "digest": file.digest }));
    }
    lines.push(format!(
        "saved skill {} ({} files, {total} bytes, each verified) to {}",
        clean_line(&loaded.skill.name),
        saved.len(),
        dir.display()
    ));
    Ok(Output::ok(json!({ "skill": loaded.skill, "dir": dir, "files": saved }), lines))
}

/// Where the file `uri` of `skill` goes below the skill's folder: its URI
/// below the directory of the skill's `SKILL.md`, each segment a plain
/// name (no `.`, `..`, empty segment, backslash or control character),
/// at most 16 deep. `None` when it has no such path.
pub(crate) fn relative_path(skill: &SkillInfo, uri: &str) -> Option<String> {
    let base = &skill.uri[..skill.uri.rfind('/')? + 1];
    let rest = uri.strip_prefix(base)?;
    let segments: Vec<&str> = rest.split('/').collect();
    let plain = |s: &&str| {
        !s.is_empty()
            && *s != "."
            && *s != ".."
            && s.len() <= 255
            && !s.chars().any(|c| c == '\\' || c == ':' || c.is_control())
    };
    (segments.len() <= 16 && segments.iter().all(plain)).then(|| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(uri: &str) -> SkillInfo {
        SkillInfo {
            uri: uri.into(),
            name: "s".into(),
            description: String::new(),
            frontmatter: Default::default(),
            files: None,
        }
    }

    #[test]
    fn a_files_path_stays_below_the_skill() {
        let s = skill("skill://srv/pdf/SKILL.md");
        assert_eq!(relative_path(&s, "skill://srv/pdf/SKILL.md").as_deref(), Some("SKILL.md"));
        assert_eq!(relative_path(&s, "skill://srv/pdf/scripts/run.py").as_deref(), Some("scripts/run.py"));
        for bad in [
            "skill://srv/pdf/../../etc/passwd",
            "skill://srv/pdf/./x",
            "skill://srv/pdf//x",
            "skill://srv/other/x",
            "skill://srv/pdf/a\\b",
            "skill://srv/pdf/C:x",
            "skill://srv/pdf/",
        ] {
            assert_eq!(relative_path(&s, bad), None, "{bad}");
        }
        let deep = format!("skill://srv/pdf/{}x", "d/".repeat(16));
        assert_eq!(relative_path(&s, &deep), None);
    }
}
