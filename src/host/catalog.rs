//! [`HostCatalog`]: one view over the adopted catalogs of every connected
//! binding, and the only way the host gets from a model name to a tool.

use std::collections::{BTreeMap, BTreeSet};
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
        let mut owners: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for (_, catalog) in &members {
            for tool in &catalog.tools {
                owners.entry(tool.model_name.to_ascii_lowercase()).or_default().insert(&catalog.binding);
            }
        }
        let mut warnings = Vec::new();
        let mut collisions = BTreeSet::new();
        for (name, bindings) in owners.into_iter().filter(|(_, b)| b.len() > 1) {
            if warnings.len() < crate::binding::MAX_WARNINGS {
                let list: Vec<&str> = bindings.into_iter().collect();
                warnings.push(normalize_message(
                    &format!(
                        "the model name {name:?} (ignoring case) is listed by the bindings {}; \
                         it is refused for all of them",
                        list.join(", ")
                    ),
                    512,
                ));
            }
            collisions.insert(name);
        }
        let (ids, catalogs) = members.into_iter().unzip();
        HostCatalog { catalogs, ids, collisions, warnings }
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
        self.catalogs
            .iter()
            .flat_map(|c| c.tools.iter())
            .filter(|t| !self.collisions.contains(&t.model_name.to_ascii_lowercase()))
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
    /// catalogs' own tables ([`Catalog::tool_by_model_name`]); the name is
    /// never parsed.
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
        let mut hits =
            self.catalogs.iter().filter_map(|c| c.tool_by_model_name(model_name).map(|t| (c.as_ref(), t)));
        match (hits.next(), hits.next()) {
            (Some(hit), None) => Ok(hit),
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
