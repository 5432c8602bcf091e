//! [`HostCatalog`]: one view over the adopted catalogs of every connected
//! binding, and the only way the host gets from a model name to a tool.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::catalog::names::is_valid_model_name;
use crate::catalog::{Catalog, ToolSpec};
use crate::error::{normalize_message, Error, FailureClass};

/// The longest model name quoted in an error, in bytes.
const QUOTED_NAME_BYTES: usize = 80;

/// The merged catalog of a [`Host`](super::Host): the adopted generation of
/// every connected binding, in binding-name order, at one moment.
///
/// Model names embed their binding's name, so they are unique across
/// bindings in the normal course. They can still meet: binding `a` with a
/// tool `b__x` and binding `a__b` with a tool `x` both give `mcp__a__b__x`,
/// and `Demo` and `demo` give names that differ only in case (which some
/// providers fold). Every tool whose model name equals another binding's,
/// ignoring ASCII case, is left out of [`HostCatalog::tools`] and refused by
/// [`HostCatalog::resolve`] with `tool_unavailable`: the host will not guess
/// which one a model meant. [`HostCatalog::collisions`] lists those names.
///
/// A snapshot: it does not change when a binding adopts a new generation or
/// is added or removed; [`Host::catalog`](super::Host::catalog) then returns
/// a new one.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCatalog {
    catalogs: Vec<Arc<Catalog>>,
    /// The host's entry id of each catalog's binding, by position: a binding
    /// removed and added again under the same name is another binding.
    pub(super) ids: Vec<u64>,
    /// Lower-cased model names listed by more than one binding.
    collisions: BTreeSet<String>,
    warnings: Vec<String>,
    /// Every tool's position (catalog, tool), ordered by model name and,
    /// among equal names, by position: [`HostCatalog::resolve`] is a binary
    /// search here rather than a scan of every tool of every catalog, which
    /// made each call cost time in proportion to the whole merged catalog
    /// (0.36 ms a call at 50k tools; see `benches/host_scale`).
    by_model_name: Vec<(usize, usize)>,
}

/// `a` and `b` in the order of their ASCII-lowercased bytes (the order of
/// the collisions, which ignore case), then exactly (so that equal names
/// are neighbours within names equal but for case). Allocates nothing.
fn name_order(a: &str, b: &str) -> Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
        .then_with(|| a.cmp(b))
}

/// Where a model name leads: one binding's tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The binding that serves the tool.
    pub binding: String,
    /// The tool's raw name: what is sent to that binding's server.
    pub raw_name: String,
    /// The adopted generation the name was resolved in.
    pub generation: u64,
}

impl HostCatalog {
    pub(super) fn build(members: Vec<(u64, Arc<Catalog>)>) -> HostCatalog {
        let (ids, catalogs): (Vec<u64>, Vec<Arc<Catalog>>) = members.into_iter().unzip();
        let mut by_model_name: Vec<(usize, usize)> = catalogs
            .iter()
            .enumerate()
            .flat_map(|(c, catalog)| (0..catalog.tools.len()).map(move |t| (c, t)))
            .collect();
        let name = |&(c, t): &(usize, usize)| catalogs[c].tools[t].model_name.as_str();
        // Stable: equal names keep their catalogs' order, as a scan met them.
        by_model_name.sort_by(|p, q| name_order(name(p), name(q)));
        // Names equal but for ASCII case are neighbours now: a run of them
        // that more than one binding lists is a collision.
        let mut warnings = Vec::new();
        let mut collisions = BTreeSet::new();
        for run in by_model_name.chunk_by(|p, q| name(p).eq_ignore_ascii_case(name(q))) {
            if run.iter().all(|&(c, _)| c == run[0].0) {
                continue;
            }
            let bindings: BTreeSet<&str> = run.iter().map(|&(c, _)| catalogs[c].binding.as_str()).collect();
            if bindings.len() < 2 {
                continue;
            }
            let lower = name(&run[0]).to_ascii_lowercase();
            if warnings.len() < crate::binding::MAX_WARNINGS {
                let list: Vec<&str> = bindings.into_iter().collect();
                warnings.push(normalize_message(
                    &format!(
                        "the model name {lower:?} (ignoring case) is listed by the bindings {}; \
                         it is refused for all of them",
                        list.join(", ")
                    ),
                    512,
                ));
            }
            collisions.insert(lower);
        }
        HostCatalog { catalogs, ids, collisions, warnings, by_model_name }
    }

    /// The tools named `model_name` exactly, as (catalog, tool) positions,
    /// in catalog order.
    fn named<'a>(&'a self, model_name: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
        let name = |&(c, t): &(usize, usize)| self.catalogs[c].tools[t].model_name.as_str();
        let start = self.by_model_name.partition_point(|p| name_order(name(p), model_name).is_lt());
        self.by_model_name[start..].iter().take_while(move |p| name(p) == model_name).copied()
    }

    /// The adopted catalogs, one per connected binding, in binding-name
    /// order.
    pub fn catalogs(&self) -> &[Arc<Catalog>] {
        &self.catalogs
    }

    /// The adopted catalog of `binding`, if it is connected.
    pub fn catalog(&self, binding: &str) -> Option<&Arc<Catalog>> {
        self.catalogs.iter().find(|c| c.binding == binding)
    }

    /// Every tool a model may be offered: all tools of all catalogs, except
    /// those whose model name collides across bindings.
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> + '_ {
        self.catalogs.iter().flat_map(|c| c.tools.iter()).filter(|t| {
            self.collisions.is_empty() || !self.collisions.contains(&t.model_name.to_ascii_lowercase())
        })
    }

    /// The model names (lower-cased) refused because more than one binding
    /// lists them.
    pub fn collisions(&self) -> impl Iterator<Item = &str> + '_ {
        self.collisions.iter().map(String::as_str)
    }

    /// What merging found: one bounded line per collision.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The tool `model_name` names, with its catalog, found only through the
    /// catalogs' own model names (an index of them, built with the merged
    /// catalog, that finds what [`Catalog::tool_by_model_name`] of each
    /// catalog would); the name is never parsed.
    ///
    /// Fails closed, before any I/O:
    ///
    /// - `not_found` when no connected binding lists the name (unknown, a
    ///   removed binding's, one whose binding has not connected, one its
    ///   binding's tool filter hides, or a name of the wrong shape); a name
    ///   that matches only in case is not the name;
    /// - `tool_unavailable` when the name is ambiguous: more than one
    ///   binding lists it, ignoring case.
    pub fn resolve(&self, model_name: &str) -> Result<(&Catalog, &ToolSpec), Error> {
        let quoted = normalize_message(model_name, QUOTED_NAME_BYTES);
        if !is_valid_model_name(model_name) {
            return Err(Error::new(
                FailureClass::NotFound,
                format!("{quoted:?} is not a model name this host lists"),
            ));
        }
        if self.collisions.contains(&model_name.to_ascii_lowercase()) {
            return Err(Error::new(
                FailureClass::ToolUnavailable,
                format!("the model name {quoted:?} is listed by more than one binding; refused"),
            ));
        }
        // What `Catalog::tool_by_model_name` of each catalog finds, from the
        // index: the first tool of that name in the first catalog listing it,
        // and whether another catalog lists it too.
        let mut hits = self.named(model_name);
        let first = hits.next();
        let other = first.and_then(|(c, _)| hits.find(|&(d, _)| d != c));
        match (first, other) {
            (Some((c, t)), None) => Ok((self.catalogs[c].as_ref(), &self.catalogs[c].tools[t])),
            (None, _) => Err(Error::new(
                FailureClass::NotFound,
                format!("no connected binding lists the tool {quoted:?}"),
            )),
            // Excluded by the collision set; kept so that the lookup fails
            // closed on its own.
            (Some(_), Some(_)) => Err(Error::new(
                FailureClass::ToolUnavailable,
                format!("the model name {quoted:?} is listed by more than one binding; refused"),
            )),
        }
    }

    /// [`HostCatalog::resolve`], as a [`Route`] for a model's call: a tool
    /// its server shows to its app only (MCP Apps visibility without
    /// `"model"`) is refused with `tool_unavailable`.
    pub fn route(&self, model_name: &str) -> Result<Route, Error> {
        let (catalog, tool) = self.resolve(model_name)?;
        if !tool.visible_to_model() {
            return Err(Error::new(
                FailureClass::ToolUnavailable,
                format!(
                    "the tool {:?} is for its app only, never a model's",
                    normalize_message(model_name, crate::catalog::names::MAX_MODEL_NAME_BYTES)
                ),
            )
            .with_binding(&catalog.binding));
        }
        Ok(Route {
            binding: catalog.binding.clone(),
            raw_name: tool.raw_name.clone(),
            generation: catalog.generation,
        })
    }

    /// The host entry id of `binding`'s catalog.
    pub(super) fn id_of(&self, binding: &str) -> Option<u64> {
        self.catalogs.iter().position(|c| c.binding == binding).map(|i| self.ids[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolSpec;
    use serde_json::json;

    fn tool(raw: &str, model: &str) -> ToolSpec {
        ToolSpec {
            raw_name: raw.into(),
            model_name: model.into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}).into(),
            output_schema: None,
            input_schema_digest: String::new(),
            output_schema_digest: None,
            annotations: None,
            task_support: crate::protocol::TaskSupport::Forbidden,
            meta: None,
            declared: Default::default(),
            app: None,
            always_load: false,
            warnings: Vec::new(),
        }
    }

    fn catalog(binding: &str, tools: Vec<ToolSpec>) -> Arc<Catalog> {
        Arc::new(Catalog {
            binding: binding.into(),
            generation: 1,
            digest: String::new(),
            protocol_version: "2025-11-25".into(),
            server: Default::default(),
            capabilities: Default::default(),
            instructions: None,
            tools,
            prompts: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            warnings: Vec::new(),
            applied_tolerances: Vec::new(),
        })
    }

    #[test]
    fn every_model_name_resolves_to_its_own_binding_and_tool_through_the_index() {
        // Tools in no particular order (a catalog built by hand need not be
        // sorted), many bindings.
        let members: Vec<(u64, Arc<Catalog>)> = (0..40u64)
            .map(|b| {
                let tools =
                    (0..30).rev().map(|t| tool(&format!("t{t}"), &format!("mcp__b{b}__t{t}"))).collect();
                (b, catalog(&format!("b{b}"), tools))
            })
            .collect();
        let merged = HostCatalog::build(members);
        for b in 0..40 {
            for t in 0..30 {
                let (c, spec) = merged.resolve(&format!("mcp__b{b}__t{t}")).expect("listed");
                assert_eq!(
                    (c.binding.as_str(), spec.raw_name.as_str()),
                    (format!("b{b}").as_str(), format!("t{t}").as_str())
                );
            }
        }
        for unknown in
            ["mcp__b0__t30", "mcp__b40__t0", "mcp__b0__t", "mcp__B0__t0", "mcp__a__t0", "mcp__zz__t0"]
        {
            assert_eq!(merged.resolve(unknown).unwrap_err().class(), FailureClass::NotFound, "{unknown}");
        }
    }

    #[test]
    fn a_name_two_catalogs_list_is_refused_and_within_one_catalog_the_first_tool_wins() {
        let a =
            catalog("a", vec![tool("x", "mcp__a__x"), tool("shared", "mcp__s__y"), tool("x2", "mcp__a__x")]);
        let b = catalog("b", vec![tool("y", "mcp__s__y"), tool("z", "mcp__b__z")]);
        let merged = HostCatalog::build(vec![(1, a), (2, b)]);
        assert_eq!(merged.resolve("mcp__s__y").unwrap_err().class(), FailureClass::ToolUnavailable);
        let (c, spec) = merged.resolve("mcp__a__x").expect("listed");
        assert_eq!((c.binding.as_str(), spec.raw_name.as_str()), ("a", "x"));
        assert_eq!(merged.resolve("mcp__b__z").expect("listed").1.raw_name, "z");
    }

    #[test]
    fn names_equal_but_for_case_collide_across_bindings_only() {
        let a = catalog("a", vec![tool("X", "mcp__a__X"), tool("x", "mcp__a__x"), tool("k", "mcp__k__z")]);
        let b = catalog("b", vec![tool("y", "mcp__A__x"), tool("k", "mcp__K__z")]);
        let c = catalog("c", vec![tool("p", "mcp__c__P"), tool("q", "mcp__c__p")]);
        let merged = HostCatalog::build(vec![(1, a), (2, b), (3, c)]);
        let collisions: Vec<&str> = merged.collisions().collect();
        assert_eq!(collisions, ["mcp__a__x", "mcp__k__z"]);
        assert_eq!(merged.warnings().len(), 2);
        for refused in ["mcp__a__X", "mcp__a__x", "mcp__A__x", "mcp__k__z", "mcp__K__z"] {
            assert_eq!(
                merged.resolve(refused).unwrap_err().class(),
                FailureClass::ToolUnavailable,
                "{refused}"
            );
        }
        // Within one binding, case makes two names, each its own tool.
        assert_eq!(merged.resolve("mcp__c__P").expect("listed").1.raw_name, "p");
        assert_eq!(merged.resolve("mcp__c__p").expect("listed").1.raw_name, "q");
        let offered: Vec<&str> = merged.tools().map(|t| t.raw_name.as_str()).collect();
        assert_eq!(offered, ["p", "q"]);
    }
}
