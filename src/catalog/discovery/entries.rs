//! The checks of one entry of each family (a tool, a prompt, a resource, a
//! resource template): what is refused, what is bent under the profile,
//! and what is cut, each with its warning.
//!
//! Apart from the build because these are the rules a server's entries
//! meet, one at a time, and they make most of the code.

use serde_json::{json, Value};

use super::assemble::{display, str_field, Ledger};
use super::{q, BuildContext};
use crate::catalog::names::check_raw_name;
use crate::catalog::schema::{check_output_schema, compact, encoded_len};
use crate::catalog::{
    digest, PromptArg, PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec, ALWAYS_LOAD_META_KEY,
    MAX_DESCRIPTION_BYTES, MAX_META_BYTES, MAX_MIME_TYPE_BYTES, MAX_PROMPT_ARGUMENTS, MAX_TITLE_BYTES,
    MAX_URI_BYTES,
};
use crate::compat::Tolerance;
use crate::protocol::prompts::Prompt;
use crate::protocol::resources::{Resource, ResourceTemplate};
use crate::protocol::tools::Tool;
use crate::request::push_warning;

/// A tool that passed every check, before its model name is known.
pub(super) struct Checked {
    pub(super) spec: ToolSpec,
}

/// Checks one tool entry, whose schemas' digests were made with the
/// offering's ([`Offering::digested`](super::Offering::digested)).
pub(super) fn check_tool(
    ledger: &mut Ledger<'_>,
    ctx: &BuildContext,
    mut entry: Value,
    schemas: digest::SchemaDigests,
) -> Option<Checked> {
    let limits = &ctx.limits;
    let Some(name) = str_field(&entry, "name") else {
        ledger.warn("tools: dropped an entry without a string name".into());
        return None;
    };
    if let Err(e) = check_raw_name(name) {
        ledger.warn(format!("tools: refused tool {}: its name {e}", q(name)));
        return None;
    }
    // The entry becomes the tool; its name is kept apart for the warnings.
    let name = &name.to_owned();
    let obj = entry.as_object_mut()?;
    // Whether the build puts in the default input schema (`LooseInputSchema`).
    let mut put_in = false;
    match obj.get("inputSchema") {
        None | Some(Value::Null) => {
            if !ledger.bend(Tolerance::LooseInputSchema) {
                ledger.warn(format!("tools: refused tool {}: it has no input schema", q(name)));
                return None;
            }
            put_in = true;
        }
        Some(Value::Object(schema)) => match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None => {
                if !ledger.bend(Tolerance::LooseInputSchema) {
                    ledger.warn(format!("tools: refused tool {}: its input schema has no \"type\"", q(name)));
                    return None;
                }
            }
            Some(_) => {
                ledger.warn(format!(
                    "tools: refused tool {}: its input schema is not \"type\": \"object\"",
                    q(name)
                ));
                return None;
            }
        },
        Some(_) => {
            ledger.warn(format!("tools: refused tool {}: its input schema is not a JSON object", q(name)));
            return None;
        }
    }
    // The documents (the schemas, an object `_meta`) are moved into the
    // tool as they are: deserializing a `Value` from a `Value` rebuilds
    // every map in it, which was a fifth of the build of a large catalog.
    // A null left in its place satisfies the deserializer.
    let input_schema = match obj.get_mut("inputSchema") {
        Some(schema) if !put_in => std::mem::take(schema),
        _ => {
            obj.insert("inputSchema".into(), Value::Null);
            json!({ "type": "object" })
        }
    };
    let output_schema = obj.remove("outputSchema");
    let meta = crate::protocol::take_meta(obj);
    let mut tool: Tool = match serde_json::from_value(entry) {
        Ok(t) => t,
        Err(e) => {
            ledger.warn(format!("tools: refused tool {}: {e}", q(name)));
            return None;
        }
    };
    tool.input_schema = input_schema;
    tool.output_schema = output_schema;
    tool.meta = meta;
    let input_text = match compact(&tool.input_schema, limits.max_schema_bytes, limits.max_schema_depth) {
        Ok(text) => text,
        Err(e) => {
            ledger.warn(format!("tools: refused tool {}: catalog_over_limit: its input schema {e}", q(name)));
            return None;
        }
    };
    let headers = ctx.http && crate::protocol::is_modern_version(&ctx.session.protocol_version);
    if let Some(Err(why)) = headers.then(|| crate::catalog::mcp_header::header_params(&tool.input_schema)) {
        ledger.warn(format!("tools: refused tool {}: {why}", q(name)));
        return None;
    }
    // A schema the entry did not have as an object was put in by the
    // build (`LooseInputSchema`): digested here. The tree goes; the text
    // stays.
    let input_schema_digest = schemas.input.unwrap_or_else(|| digest::schema_digest(&tool.input_schema));
    drop(std::mem::take(&mut tool.input_schema));
    let mut warnings = Vec::new();
    let task_support = tool.task_support();
    let output_schema = match tool.output_schema {
        None | Some(Value::Null) => None,
        Some(schema) => {
            // Made with the offering's digest from every non-null output
            // schema; the fallback is for an entry changed since.
            let digest = schemas.output.unwrap_or_else(|| digest::schema_digest(&schema));
            let problem = compact(&schema, limits.max_schema_bytes, limits.max_schema_depth)
                .map_err(|e| format!("catalog_over_limit: its output schema {e}"))
                .and_then(|text| {
                    check_output_schema(&schema).map_err(|e| format!("its output schema {e}"))?;
                    Ok(text)
                });
            match problem {
                Ok(text) => Some((text, digest)),
                Err(why) => {
                    if !ledger.bend(Tolerance::InvalidOutputSchema) {
                        ledger.warn(format!("tools: refused tool {}: {why}", q(name)));
                        return None;
                    }
                    let w =
                        format!("tools: {}: dropped {}", q(name), why.replacen("its ", "its unusable ", 1));
                    push_warning(&mut warnings, w.clone());
                    ledger.warn(w);
                    None
                }
            }
        }
    };
    let (output_schema, output_schema_digest) = output_schema.unzip();
    let what = |field: &str| format!("tools: {}: {field}", q(name));
    let raw_title =
        tool.title.as_deref().or_else(|| tool.annotations.as_ref().and_then(|a| a.title.as_deref()));
    let title = display(ledger, &|| what("title"), raw_title, MAX_TITLE_BYTES, false, Some(&mut warnings));
    let description = display(
        ledger,
        &|| what("description"),
        tool.description.as_deref(),
        MAX_DESCRIPTION_BYTES,
        true,
        Some(&mut warnings),
    );
    let meta = match tool.meta {
        Some(m) if encoded_len(&m) > MAX_META_BYTES => {
            let w = format!("tools: {}: _meta dropped, over {MAX_META_BYTES} bytes", q(name));
            push_warning(&mut warnings, w.clone());
            ledger.warn(w);
            None
        }
        other => other,
    };
    let (declared, dropped) = ctx.declarations.read(meta.as_ref(), &ctx.binding, &tool.name);
    for (key, field, warning) in dropped {
        // Once per binding, tool and field, however often the catalog is
        // built again.
        if ctx.warned.first(&tool.name, key, field) {
            tracing::warn!(target: "mcp_stack::catalog", binding = %ctx.binding, "{warning}");
            if let Some(events) = &ctx.events {
                let (binding, at) = (ctx.binding.clone(), std::time::SystemTime::now());
                events.emit(crate::events::Event::Warning { binding, text: warning.clone(), at });
            }
            push_warning(&mut warnings, warning.clone());
            ledger.warn(warning);
        }
    }
    let flat_allowed = ledger.allows(Tolerance::AppFlatResourceUri);
    let ui = crate::catalog::apps::read_ui(meta.as_ref(), &tool.name, flat_allowed);
    if ui.flat {
        ledger.bend(Tolerance::AppFlatResourceUri);
    }
    for warning in ui.warnings {
        push_warning(&mut warnings, warning.clone());
        ledger.warn(warning);
    }
    let always_load = ctx.always_load.includes(&tool.name)
        || meta.as_ref().and_then(|m| m.get(ALWAYS_LOAD_META_KEY)) == Some(&Value::Bool(true));
    let annotations = tool.annotations.map(|mut a| {
        a.title = None;
        a
    });
    Some(Checked {
        spec: ToolSpec {
            model_name: String::new(),
            title,
            description,
            input_schema_digest,
            input_schema: input_text,
            output_schema,
            output_schema_digest,
            annotations: annotations.filter(|a| *a != Default::default()),
            task_support: task_support.clone(),
            meta,
            declared,
            app: ui.app,
            always_load,
            warnings,
            raw_name: tool.name,
        },
    })
}

pub(super) fn check_prompt(ledger: &mut Ledger<'_>, entry: Value) -> Option<PromptSpec> {
    let Some(name) = str_field(&entry, "name") else {
        ledger.warn("prompts: dropped an entry without a string name".into());
        return None;
    };
    if let Err(e) = check_raw_name(name) {
        ledger.warn(format!("prompts: refused prompt {}: its name {e}", q(name)));
        return None;
    }
    let name = &name.to_owned();
    let prompt: Prompt = match serde_json::from_value(entry) {
        Ok(p) => p,
        Err(e) => {
            ledger.warn(format!("prompts: refused prompt {}: {e}", q(name)));
            return None;
        }
    };
    let args = prompt.arguments.unwrap_or_default();
    if args.len() > MAX_PROMPT_ARGUMENTS {
        ledger.warn(format!("prompts: refused prompt {}: over {MAX_PROMPT_ARGUMENTS} arguments", q(name)));
        return None;
    }
    let mut arguments = Vec::with_capacity(args.len());
    for a in args {
        if let Err(e) = check_raw_name(&a.name) {
            ledger.warn(format!("prompts: refused prompt {}: an argument name {e}", q(name)));
            return None;
        }
        let what = |f: &str| format!("prompts: {}: argument {}: {f}", q(name), q(&a.name));
        arguments.push(PromptArg {
            title: display(ledger, &|| what("title"), a.title.as_deref(), MAX_TITLE_BYTES, false, None),
            description: display(
                ledger,
                &|| what("description"),
                a.description.as_deref(),
                MAX_DESCRIPTION_BYTES,
                true,
                None,
            ),
            required: a.required.unwrap_or(false),
            name: a.name,
        });
    }
    let what = |f: &str| format!("prompts: {}: {f}", q(name));
    Some(PromptSpec {
        title: display(ledger, &|| what("title"), prompt.title.as_deref(), MAX_TITLE_BYTES, false, None),
        description: display(
            ledger,
            &|| what("description"),
            prompt.description.as_deref(),
            MAX_DESCRIPTION_BYTES,
            true,
            None,
        ),
        arguments,
        name: prompt.name,
    })
}

/// Checks an identifier URI (or URI template): non-empty, bounded, no control
/// characters. It is opaque and never resolved.
fn check_uri(uri: &str) -> Result<(), String> {
    if uri.is_empty() {
        return Err("is empty".into());
    }
    if uri.len() > MAX_URI_BYTES {
        return Err(format!("is {} bytes, over {MAX_URI_BYTES}", uri.len()));
    }
    if uri.chars().any(char::is_control) {
        return Err("contains a control character".into());
    }
    Ok(())
}

/// The fields resources and templates share, checked.
struct Described {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
}

fn describe(
    ledger: &mut Ledger<'_>,
    family: &str,
    id: &str,
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    mime_type: Option<&str>,
) -> Option<Described> {
    let what = |f: &str| format!("{family}: {}: {f}", q(id));
    let name = display(ledger, &|| what("name"), Some(name), MAX_TITLE_BYTES, false, None)?;
    let mime_type = match mime_type {
        Some(m) if m.len() > MAX_MIME_TYPE_BYTES || m.chars().any(char::is_control) => {
            ledger.warn(what("MIME type dropped, malformed or too long"));
            None
        }
        other => other.map(String::from),
    };
    Some(Described {
        name,
        title: display(ledger, &|| what("title"), title, MAX_TITLE_BYTES, false, None),
        description: display(ledger, &|| what("description"), description, MAX_DESCRIPTION_BYTES, true, None),
        mime_type,
    })
}

pub(super) fn check_resource(ledger: &mut Ledger<'_>, entry: Value) -> Option<ResourceSpec> {
    let r: Resource = match serde_json::from_value(entry) {
        Ok(r) => r,
        Err(e) => {
            ledger.warn(format!("resources: dropped an entry: {e}"));
            return None;
        }
    };
    if let Err(e) = check_uri(&r.uri) {
        ledger.warn(format!("resources: refused resource {}: its URI {e}", q(&r.uri)));
        return None;
    }
    let d = describe(
        ledger,
        "resources",
        &r.uri,
        &r.name,
        r.title.as_deref(),
        r.description.as_deref(),
        r.mime_type.as_deref(),
    );
    let Some(d) = d else {
        ledger.warn(format!("resources: refused resource {}: its name is unusable", q(&r.uri)));
        return None;
    };
    let app = if r.uri.starts_with("ui://") {
        let (app, warnings) = crate::catalog::apps::read_resource_meta(r.meta.as_ref(), &r.uri);
        for warning in warnings {
            ledger.warn(format!("resources: {warning}"));
        }
        app
    } else {
        None
    };
    Some(ResourceSpec {
        uri: r.uri,
        name: d.name,
        title: d.title,
        description: d.description,
        mime_type: d.mime_type,
        size: r.size,
        app,
    })
}

pub(super) fn check_template(ledger: &mut Ledger<'_>, entry: Value) -> Option<ResourceTemplateSpec> {
    let t: ResourceTemplate = match serde_json::from_value(entry) {
        Ok(t) => t,
        Err(e) => {
            ledger.warn(format!("resourceTemplates: dropped an entry: {e}"));
            return None;
        }
    };
    if let Err(e) = check_uri(&t.uri_template) {
        ledger.warn(format!(
            "resourceTemplates: refused template {}: its URI template {e}",
            q(&t.uri_template)
        ));
        return None;
    }
    let d = describe(
        ledger,
        "resourceTemplates",
        &t.uri_template,
        &t.name,
        t.title.as_deref(),
        t.description.as_deref(),
        t.mime_type.as_deref(),
    );
    let Some(d) = d else {
        ledger.warn(format!(
            "resourceTemplates: refused template {}: its name is unusable",
            q(&t.uri_template)
        ));
        return None;
    };
    Some(ResourceTemplateSpec {
        uri_template: t.uri_template,
        name: d.name,
        title: d.title,
        description: d.description,
        mime_type: d.mime_type,
    })
}
