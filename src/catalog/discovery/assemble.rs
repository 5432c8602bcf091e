//! Assembling a generation from an offering ([`build`]): the ledger of
//! warnings and applied tolerances, deduplication, the checks of display
//! text, and the [`Catalog`] itself.
//!
//! Apart from the checks of one entry (in `entries`) so that the order of
//! the build (dedupe, check, name, filter, sort) reads in one place.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

use super::entries::{check_prompt, check_resource, check_template, check_tool, Checked};
use super::{q, BuildContext, Digested};
use crate::catalog::names;
use crate::catalog::{Catalog, PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec};
use crate::compat::{Profile, Tolerance};
use crate::error::truncate_utf8;
use crate::request::push_warning;

/// Collects warnings and applied tolerances while building.
pub(super) struct Ledger<'a> {
    profile: &'a Profile,
    warnings: Vec<String>,
    applied: BTreeSet<Tolerance>,
}

impl Ledger<'_> {
    pub(super) fn warn(&mut self, text: String) {
        push_warning(&mut self.warnings, text);
    }

    /// Whether the profile allows `t`, without recording it as applied
    /// (for a tolerance known to be needed only after reading further).
    pub(super) fn allows(&self, t: Tolerance) -> bool {
        self.profile.allows(t)
    }

    /// Whether the profile allows `t`; records it as applied when it does.
    pub(super) fn bend(&mut self, t: Tolerance) -> bool {
        let ok = self.profile.allows(t);
        if ok {
            self.applied.insert(t);
        }
        ok
    }
}

/// Checks and bounds one piece of display text. Returns the text to keep,
/// or `None` when it is dropped; warnings and tolerances go to the ledger,
/// named by `what` (made only for a warning: most text needs none).
pub(super) fn display(
    ledger: &mut Ledger<'_>,
    what: &dyn Fn() -> String,
    text: Option<&str>,
    max: usize,
    multiline: bool,
    spec_warnings: Option<&mut Vec<String>>,
) -> Option<String> {
    let text = text?;
    // Control characters (C0, DEL, C1) and bidi formatting characters;
    // a description may keep its line breaks and tabs.
    let bad_char =
        |c: char| crate::error::is_display_hazard(c) && !(multiline && matches!(c, '\n' | '\t' | '\r'));
    let untidy = !multiline && text.trim() != text;
    let mut out = if text.chars().any(bad_char) || untidy {
        if !ledger.bend(Tolerance::DisplayNameNormalization) {
            let w = format!(
                "{}: dropped, it holds control or bidi formatting characters or surrounding blanks",
                what()
            );
            if let Some(sw) = spec_warnings {
                push_warning(sw, w.clone());
            }
            ledger.warn(w);
            return None;
        }
        let cleaned: String = text.chars().map(|c| if bad_char(c) { ' ' } else { c }).collect();
        if multiline {
            cleaned
        } else {
            cleaned.trim().to_string()
        }
    } else {
        text.to_string()
    };
    if truncate_utf8(&mut out, max) {
        let w = format!("{}: cut to {max} bytes", what());
        if let Some(sw) = spec_warnings {
            push_warning(sw, w.clone());
        }
        ledger.warn(w);
    }
    Some(out)
}

/// Groups entries by their identifier. Identical copies are kept once with
/// a warning; an identifier listed with different content refuses every
/// copy. Entries without an identifier are left for the caller to refuse.
fn dedupe<T: PartialEq>(
    ledger: &mut Ledger<'_>,
    family: &str,
    entries: Vec<T>,
    id: impl Fn(&T) -> Option<&str>,
) -> Vec<T> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut keep = vec![true; entries.len()];
    for (i, e) in entries.iter().enumerate() {
        if let Some(k) = id(e) {
            groups.entry(k).or_default().push(i);
        }
    }
    for (k, copies) in groups {
        if copies.len() == 1 {
            continue;
        }
        let first = &entries[copies[0]];
        let same = copies.iter().all(|&c| entries[c] == *first);
        if same {
            ledger.warn(format!("{family}: {} listed {} times; kept once", q(k), copies.len()));
        } else {
            ledger.warn(format!(
                "{family}: {} listed {} times with different content; refused every copy",
                q(k),
                copies.len()
            ));
        }
        let drop_from = if same { 1 } else { 0 };
        for &c in &copies[drop_from..] {
            keep[c] = false;
        }
    }
    entries.into_iter().zip(keep).filter_map(|(e, kept)| kept.then_some(e)).collect()
}

pub(super) fn str_field<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Builds generation `generation` from a digested offering
/// ([`Offering::digested`](super::Offering::digested)): validates every entry, assigns model names,
/// applies the tool filter. Takes the offering: each entry becomes its spec
/// without being copied.
pub(crate) fn build(ctx: &BuildContext, digested: Digested, generation: u64) -> Catalog {
    let Digested { offering, digest, tool_schemas } = digested;
    let mut ledger = Ledger { profile: &ctx.profile, warnings: Vec::new(), applied: BTreeSet::new() };
    for w in offering
        .tools
        .warnings
        .iter()
        .chain(&offering.prompts.warnings)
        .chain(&offering.resources.warnings)
        .chain(&offering.templates.warnings)
    {
        ledger.warn(w.clone());
    }
    // What the connection itself needed (the HTTP transport's `legacy_sse`)
    // is reported with the catalog's own.
    ledger.applied.extend(ctx.session.transport_tolerances.iter().copied());

    let tool_entries = offering.tools.entries.into_iter().zip(tool_schemas).collect();
    let tool_entries = dedupe(&mut ledger, "tools", tool_entries, |(v, _)| str_field(v, "name"));
    let mut checked: Vec<Checked> = tool_entries
        .into_iter()
        .filter_map(|(e, schemas)| check_tool(&mut ledger, ctx, e, schemas))
        .collect();
    let mut named = names::assign(&ctx.binding, checked.iter().map(|c| c.spec.raw_name.as_str()));
    for raw in &named.refused {
        ledger.warn(format!("tools: refused tool {}: no unique model name could be made", q(raw)));
    }
    checked.retain_mut(|c| match named.names.remove(&c.spec.raw_name) {
        Some(m) => {
            c.spec.model_name = m;
            true
        }
        None => false,
    });
    let mut tools: Vec<ToolSpec> =
        checked.into_iter().map(|c| c.spec).filter(|t| ctx.filter.permits(&t.raw_name)).collect();
    tools.sort_by(|a, b| a.raw_name.cmp(&b.raw_name));

    let prompt_entries = dedupe(&mut ledger, "prompts", offering.prompts.entries, |v| str_field(v, "name"));
    let mut prompts: Vec<PromptSpec> =
        prompt_entries.into_iter().filter_map(|e| check_prompt(&mut ledger, e)).collect();
    prompts.sort_by(|a, b| a.name.cmp(&b.name));

    let resource_entries =
        dedupe(&mut ledger, "resources", offering.resources.entries, |v| str_field(v, "uri"));
    let mut resources: Vec<ResourceSpec> =
        resource_entries.into_iter().filter_map(|e| check_resource(&mut ledger, e)).collect();
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));

    let template_entries =
        dedupe(&mut ledger, "resourceTemplates", offering.templates.entries, |v| str_field(v, "uriTemplate"));
    let mut resource_templates: Vec<ResourceTemplateSpec> =
        template_entries.into_iter().filter_map(|e| check_template(&mut ledger, e)).collect();
    resource_templates.sort_by(|a, b| a.uri_template.cmp(&b.uri_template));

    // Kept for the binding's life: without the spare capacity that
    // collecting through filters leaves (a one-tool catalog held four
    // tools' room, 1.0 of the 1.4 KB it took; heaptrack, benches/host_scale).
    tools.shrink_to_fit();
    prompts.shrink_to_fit();
    resources.shrink_to_fit();
    resource_templates.shrink_to_fit();
    let s = &ctx.session;
    Catalog {
        binding: ctx.binding.clone(),
        generation,
        digest,
        protocol_version: s.protocol_version.clone(),
        server: s.server.clone(),
        capabilities: s.capabilities.clone(),
        instructions: s.instructions.clone(),
        tools,
        prompts,
        resources,
        resource_templates,
        warnings: ledger.warnings,
        applied_tolerances: ledger.applied.into_iter().collect(),
    }
}
