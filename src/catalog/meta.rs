//! Declarations carried in a tool's `_meta`: a typed reader for one
//! namespaced key that never fails the catalog.
//!
//! MCP's `Tool._meta` is an open bag. A host that agrees with a server on a
//! namespaced key (say `agentfootprint`) can carry inert facts about a tool
//! there: what kind of artifact it returns, who owns it. That bag comes from a
//! server this process does not control, so reading it follows rules that
//! make one server's typo cost one fact, never a tool or a catalog:
//!
//! - no `_meta`, no such key, or a non-object under it: the empty value, and
//!   no warning;
//! - a field the reader does not know: ignored in silence (a newer server
//!   talking to an older host is not an error, and warning about it would
//!   make every upgrade noisy at the wrong end);
//! - a field it knows that fails its rule: dropped with **one** warning naming
//!   the binding, the tool, the field and the rule; the rest of the bag still
//!   lands.
//!
//! A set of declarations is a type implementing [`Declarations`]: its key and
//! a table of [`Field`]s, each with a name, the rule in words, and a function
//! that applies a value if it passes. [`ToolExtras`] is the example set: the
//! declarations of seed 004 under the key `agentfootprint`.
//!
//! A host registers its sets on the definition ([`DeclarationSet`]): they
//! are read once per catalog generation, at ingest, and each tool carries
//! what passed ([`ToolSpec::declared`](super::ToolSpec::declared)); a
//! dropped field is reported once per binding, tool and field. [`read`]
//! reads any set on demand instead.
//!
//! ```
//! use mcp_stack::catalog::meta::{read, ToolExtras};
//! use serde_json::json;
//!
//! let meta = json!({"agentfootprint": {"resultKind": "weather", "gates": "yes", "future": 1}});
//! let read = read::<ToolExtras>(meta.as_object(), "files", "forecast");
//! assert_eq!(read.value.result_kind.as_deref(), Some("weather"));
//! assert_eq!(read.value.gates, None);
//! assert_eq!(read.warnings.len(), 1);
//! assert!(read.warnings[0].contains("gates"));
//! ```

use serde_json::{Map, Value};
use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::normalize_message;

/// The longest warning text the reader produces, in bytes.
pub(crate) const MAX_META_WARNING_BYTES: usize = 512;

/// One known field of a declaration set.
#[derive(Debug)]
pub struct Field<D> {
    /// The field's key inside the namespaced object.
    pub name: &'static str,
    /// The rule, in words, for the warning when a value fails it.
    pub rule: &'static str,
    /// Applies `value` to the declarations; returns `false`, changing
    /// nothing, when the value fails the rule.
    pub apply: fn(&mut D, &Value) -> bool,
}

/// A set of declarations read from one namespaced key of a tool's `_meta`.
pub trait Declarations: Default + 'static {
    /// The `_meta` key the declarations travel under.
    const KEY: &'static str;
    /// The fields this reader knows.
    const FIELDS: &'static [Field<Self>];
}

/// What [`read`] found: the declarations that passed, and one warning per
/// known field that did not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Read<D> {
    /// The declarations that passed their rules.
    pub value: D,
    /// One bounded warning per dropped field.
    pub warnings: Vec<String>,
}

/// Reads the declaration set `D` from a tool's `_meta`. Never fails.
///
/// `binding` and `tool` only name the origin in warnings.
pub fn read<D: Declarations>(meta: Option<&Map<String, Value>>, binding: &str, tool: &str) -> Read<D> {
    let (value, dropped) = read_fields::<D>(meta, binding, tool);
    Read { value, warnings: dropped.into_iter().map(|(_, warning)| warning).collect() }
}

/// [`read`], with each warning beside the field it drops.
fn read_fields<D: Declarations>(
    meta: Option<&Map<String, Value>>,
    binding: &str,
    tool: &str,
) -> (D, Vec<(&'static str, String)>) {
    let mut value = D::default();
    let mut dropped = Vec::new();
    let Some(Value::Object(bag)) = meta.and_then(|m| m.get(D::KEY)) else {
        return (value, dropped);
    };
    for field in D::FIELDS {
        let Some(given) = bag.get(field.name) else { continue };
        if !(field.apply)(&mut value, given) {
            let warning = normalize_message(
                &format!(
                    "binding {binding}: tool {tool:?}: _meta[{:?}].{} dropped: must be {}",
                    D::KEY,
                    field.name,
                    field.rule
                ),
                MAX_META_WARNING_BYTES,
            );
            dropped.push((field.name, warning));
        }
    }
    (value, dropped)
}

/// The declaration sets a host registers on a definition
/// ([`Definition::declarations`](crate::Definition::declarations)): each is
/// read from every tool's `_meta` when a catalog generation is built, and
/// what passed is on the tool ([`ToolSpec::declared`](super::ToolSpec::declared)).
/// A known field that fails its rule is dropped and reported once per
/// binding, tool and field (a catalog warning, an [`Event::Warning`] and a
/// `tracing` warning), however often the catalog is built again (refreshes,
/// reconnects); unknown fields stay silent.
///
/// ```
/// use mcp_stack::catalog::meta::{DeclarationSet, ToolExtras};
/// let declarations = DeclarationSet::default().with::<ToolExtras>();
/// # let _ = declarations;
/// ```
///
/// [`Event::Warning`]: crate::Event::Warning
#[derive(Clone, Default)]
pub struct DeclarationSet {
    readers: Vec<Arc<dyn Reader>>,
}

impl std::fmt::Debug for DeclarationSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.readers.iter().map(|r| r.key())).finish()
    }
}

impl DeclarationSet {
    /// Registers the declaration set `D` (once: registering it again
    /// changes nothing).
    pub fn with<D: Declarations + Clone + PartialEq + std::fmt::Debug + Send + Sync>(mut self) -> Self {
        if !self.readers.iter().any(|r| r.set_type() == TypeId::of::<D>()) {
            self.readers.push(Arc::new(TypedReader::<D>(std::marker::PhantomData)));
        }
        self
    }

    /// Whether none is registered.
    pub fn is_empty(&self) -> bool {
        self.readers.is_empty()
    }

    /// Reads every registered set from `meta`: what passed, and the
    /// dropped fields as `(key, field, warning)`.
    pub(crate) fn read(
        &self,
        meta: Option<&Map<String, Value>>,
        binding: &str,
        tool: &str,
    ) -> (Declared, Vec<(&'static str, &'static str, String)>) {
        let mut declared = Declared::default();
        let mut dropped = Vec::new();
        for reader in &self.readers {
            let (value, fields) = reader.read(meta, binding, tool);
            declared.values.push(value);
            dropped.extend(fields.into_iter().map(|(field, warning)| (reader.key(), field, warning)));
        }
        (declared, dropped)
    }
}

/// What the registered declaration sets read from one tool's `_meta`
/// ([`ToolSpec::declared`](super::ToolSpec::declared)).
#[derive(Clone, Default)]
pub struct Declared {
    values: Vec<Arc<dyn DeclaredValue>>,
}

impl Declared {
    /// The set `D` as read, if `D` is registered on the definition.
    pub fn get<D: Declarations>(&self) -> Option<&D> {
        self.values.iter().find_map(|v| v.as_any().downcast_ref::<D>())
    }
}

impl std::fmt::Debug for Declared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.values.iter().map(|v| v.debug())).finish()
    }
}

impl PartialEq for Declared {
    fn eq(&self, other: &Self) -> bool {
        self.values.len() == other.values.len()
            && self.values.iter().zip(&other.values).all(|(a, b)| a.eq_value(b.as_any()))
    }
}

/// One read set, its type erased.
trait DeclaredValue: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn eq_value(&self, other: &dyn Any) -> bool;
    fn debug(&self) -> &dyn std::fmt::Debug;
}

impl<D: Declarations + PartialEq + std::fmt::Debug + Send + Sync> DeclaredValue for D {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn eq_value(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<D>() == Some(self)
    }
    fn debug(&self) -> &dyn std::fmt::Debug {
        self
    }
}

/// One registered set's reader, its type erased.
trait Reader: Send + Sync {
    fn key(&self) -> &'static str;
    fn set_type(&self) -> TypeId;
    fn read(
        &self,
        meta: Option<&Map<String, Value>>,
        binding: &str,
        tool: &str,
    ) -> (Arc<dyn DeclaredValue>, Vec<(&'static str, String)>);
}

struct TypedReader<D>(std::marker::PhantomData<fn() -> D>);

impl<D: Declarations + Clone + PartialEq + std::fmt::Debug + Send + Sync> Reader for TypedReader<D> {
    fn key(&self) -> &'static str {
        D::KEY
    }
    fn set_type(&self) -> TypeId {
        TypeId::of::<D>()
    }
    fn read(
        &self,
        meta: Option<&Map<String, Value>>,
        binding: &str,
        tool: &str,
    ) -> (Arc<dyn DeclaredValue>, Vec<(&'static str, String)>) {
        let (value, dropped) = read_fields::<D>(meta, binding, tool);
        (Arc::new(value), dropped)
    }
}

/// The most (tool, key, field) triples a binding remembers having warned
/// about; past it, warnings are no longer de-duplicated but still bounded
/// per build by the catalog's own warning bound.
pub(crate) const MAX_WARNED_FIELDS: usize = 4096;

/// What one binding has already warned about: each dropped declaration is
/// reported once across refreshes and reconnects.
#[derive(Debug, Default)]
pub(crate) struct WarnedOnce {
    seen: std::sync::Mutex<std::collections::HashSet<(String, &'static str, &'static str)>>,
}

impl WarnedOnce {
    /// Whether this is the first warning for `tool`'s `key`.`field`.
    pub(crate) fn first(&self, tool: &str, key: &'static str, field: &'static str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= MAX_WARNED_FIELDS {
            return true;
        }
        seen.insert((tool.to_string(), key, field))
    }
}

/// Small rules the field tables are built from. Each returns `None` when the
/// value fails.
pub(crate) mod rules {
    use serde_json::Value;

    /// A non-empty string of at most `max` bytes without control characters.
    pub(crate) fn string(v: &Value, max: usize) -> Option<String> {
        let s = v.as_str()?;
        (!s.is_empty() && s.len() <= max && !s.chars().any(char::is_control)).then(|| s.to_string())
    }

    /// An array of at most `max_items` values, each a [`string`] of at most
    /// `max` bytes.
    pub(crate) fn string_list(v: &Value, max_items: usize, max: usize) -> Option<Vec<String>> {
        let items = v.as_array()?;
        if items.len() > max_items {
            return None;
        }
        items.iter().map(|i| string(i, max)).collect()
    }

    /// A boolean.
    pub(crate) fn boolean(v: &Value) -> Option<bool> {
        v.as_bool()
    }

    /// A whole number from 1 to `max`.
    pub(crate) fn positive(v: &Value, max: u64) -> Option<u64> {
        v.as_u64().filter(|n| (1..=max).contains(n))
    }

    /// One of `allowed`.
    pub(crate) fn one_of(v: &Value, allowed: &[&str]) -> Option<String> {
        let s = v.as_str()?;
        allowed.contains(&s).then(|| s.to_string())
    }
}

/// The column types [`ToolExtras::result_columns`] accepts.
pub(crate) const COLUMN_TYPES: &[&str] = &["string", "number", "integer", "boolean", "date", "datetime"];
/// The result classes [`ToolExtras::result_class`] accepts.
pub(crate) const RESULT_CLASSES: &[&str] = &["fact", "list", "rowset", "document", "artifact", "action"];

/// The owner of a tool: the identity edge integrity checks join on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOwner {
    /// Who owns it (a team, a service).
    pub id: String,
    /// The owner's kind, if said (`team`, `service`, …).
    pub kind: Option<String>,
}

/// The author's refusing ceiling on a tool's result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolResultCeiling {
    /// The most bytes a result may have.
    pub bytes: Option<u64>,
    /// The most rows a result may have.
    pub rows: Option<u64>,
}

/// The example declaration set: seed 004's tool declarations under the
/// `_meta` key `agentfootprint`. Every field is optional, and absent means
/// absent.
///
/// The rules are this crate's reading of the seed (which names the fields and
/// their purpose, not every bound): strings are non-empty, bounded and free
/// of control characters; lists are bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolExtras {
    /// Where the tool's arguments come from.
    pub arguments_from: Option<Vec<String>>,
    /// The artifact kind a placed result is minted under.
    pub result_kind: Option<String>,
    /// What the result's rows contain: column name → type.
    pub result_columns: Option<BTreeMap<String, String>>,
    /// Who owns the tool.
    pub owner: Option<ToolOwner>,
    /// The declared class of the tool's results.
    pub result_class: Option<String>,
    /// The author's ceiling on the tool's result.
    pub result_ceiling: Option<ToolResultCeiling>,
    /// The named tools this tool is composed of.
    pub composed_of: Option<Vec<String>>,
    /// Whether the tool's procedure can raise an approval gate.
    pub gates: Option<bool>,
}

fn owner(v: &Value) -> Option<ToolOwner> {
    if let Some(id) = rules::string(v, 256) {
        return Some(ToolOwner { id, kind: None });
    }
    let o = v.as_object()?;
    let id = rules::string(o.get("id")?, 256)?;
    let kind = match o.get("kind") {
        None => None,
        Some(k) => Some(rules::string(k, 64)?),
    };
    Some(ToolOwner { id, kind })
}

fn columns(v: &Value) -> Option<BTreeMap<String, String>> {
    let o = v.as_object()?;
    if o.is_empty() || o.len() > 256 {
        return None;
    }
    o.iter()
        .map(|(k, t)| Some((rules::string(&Value::String(k.clone()), 128)?, rules::one_of(t, COLUMN_TYPES)?)))
        .collect()
}

fn ceiling(v: &Value) -> Option<ToolResultCeiling> {
    let o = v.as_object()?;
    let get = |k: &str| match o.get(k) {
        None => Some(None),
        Some(n) => rules::positive(n, u64::MAX).map(Some),
    };
    let c = ToolResultCeiling { bytes: get("bytes")?, rows: get("rows")? };
    (c.bytes.is_some() || c.rows.is_some()).then_some(c)
}

impl Declarations for ToolExtras {
    const KEY: &'static str = "agentfootprint";
    const FIELDS: &'static [Field<Self>] = &[
        Field {
            name: "argumentsFrom",
            rule: "an array of at most 64 non-empty strings of at most 128 bytes",
            apply: |d, v| rules::string_list(v, 64, 128).map(|x| d.arguments_from = Some(x)).is_some(),
        },
        Field {
            name: "resultKind",
            rule: "a non-empty string of at most 128 bytes without control characters",
            apply: |d, v| rules::string(v, 128).map(|x| d.result_kind = Some(x)).is_some(),
        },
        Field {
            name: "resultColumns",
            rule: "an object of 1 to 256 columns, each named by at most 128 bytes and typed string, number, integer, boolean, date or datetime",
            apply: |d, v| columns(v).map(|x| d.result_columns = Some(x)).is_some(),
        },
        Field {
            name: "owner",
            rule: "a non-empty string of at most 256 bytes, or an object with such an \"id\" and an optional \"kind\"",
            apply: |d, v| owner(v).map(|x| d.owner = Some(x)).is_some(),
        },
        Field {
            name: "resultClass",
            rule: "one of fact, list, rowset, document, artifact, action",
            apply: |d, v| rules::one_of(v, RESULT_CLASSES).map(|x| d.result_class = Some(x)).is_some(),
        },
        Field {
            name: "resultCeiling",
            rule: "an object with a positive whole \"bytes\" or \"rows\" (or both)",
            apply: |d, v| ceiling(v).map(|x| d.result_ceiling = Some(x)).is_some(),
        },
        Field {
            name: "composedOf",
            rule: "an array of at most 64 tool names, each non-empty and at most 512 bytes",
            apply: |d, v| rules::string_list(v, 64, 512).map(|x| d.composed_of = Some(x)).is_some(),
        },
        Field {
            name: "gates",
            rule: "a boolean",
            apply: |d, v| rules::boolean(v).map(|x| d.gates = Some(x)).is_some(),
        },
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_json(meta: Value) -> Read<ToolExtras> {
        read::<ToolExtras>(meta.as_object(), "b", "t")
    }

    #[test]
    fn no_bag_no_key_or_not_an_object_is_empty_and_silent() {
        let empty = Read::<ToolExtras>::default();
        assert_eq!(read::<ToolExtras>(None, "b", "t"), empty);
        assert_eq!(read_json(json!({})), empty);
        assert_eq!(read_json(json!({"other.vendor/x": {"resultKind": "k"}})), empty);
        assert_eq!(read_json(json!({"agentfootprint": "resultKind=k"})), empty);
        assert_eq!(read_json(json!({"agentfootprint": [1, 2]})), empty);
    }

    #[test]
    fn every_field_lands_when_valid() {
        let r = read_json(json!({"agentfootprint": {
            "argumentsFrom": ["user", "tool-result/search"],
            "resultKind": "weather",
            "resultColumns": {"city": "string", "temp": "number"},
            "owner": {"id": "team-geo", "kind": "team"},
            "resultClass": "rowset",
            "resultCeiling": {"rows": 100},
            "composedOf": ["search", "fetch"],
            "gates": false,
        }}));
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let v = r.value;
        assert_eq!(v.arguments_from.unwrap(), ["user", "tool-result/search"]);
        assert_eq!(v.result_kind.as_deref(), Some("weather"));
        assert_eq!(v.result_columns.unwrap()["temp"], "number");
        assert_eq!(v.owner.unwrap(), ToolOwner { id: "team-geo".into(), kind: Some("team".into()) });
        assert_eq!(v.result_class.as_deref(), Some("rowset"));
        assert_eq!(v.result_ceiling.unwrap(), ToolResultCeiling { bytes: None, rows: Some(100) });
        assert_eq!(v.composed_of.unwrap(), ["search", "fetch"]);
        assert_eq!(v.gates, Some(false));
    }

    #[test]
    fn a_bad_field_is_dropped_with_one_warning_and_the_rest_lands() {
        let r = read_json(json!({"agentfootprint": {
            "resultKind": "",
            "owner": "team-geo",
            "gates": "sometimes",
            "resultCeiling": {"bytes": 0},
            "futureField": {"anything": true},
            "needs": ["secret"],
        }}));
        assert_eq!(r.value.owner.as_ref().unwrap().id, "team-geo");
        assert_eq!(r.value.result_kind, None);
        assert_eq!(r.value.gates, None);
        assert_eq!(r.value.result_ceiling, None);
        assert_eq!(r.warnings.len(), 3, "{:?}", r.warnings);
        let w = &r.warnings[0];
        assert!(w.contains("binding b") && w.contains("tool \"t\"") && w.contains("resultKind"), "{w}");
        assert!(w.contains("non-empty string"), "{w}");
        assert!(r.warnings.iter().all(|w| !w.contains("futureField") && !w.contains("needs")));
    }

    /// The reader is generic: another declaration set is a key and a table.
    #[test]
    fn another_declaration_set_is_a_key_and_a_table() {
        #[derive(Default, Debug, PartialEq)]
        struct Cost {
            cents: Option<u64>,
        }
        impl Declarations for Cost {
            const KEY: &'static str = "example.com/cost";
            const FIELDS: &'static [Field<Self>] = &[Field {
                name: "cents",
                rule: "a whole number from 1 to 10000",
                apply: |d, v| rules::positive(v, 10_000).map(|x| d.cents = Some(x)).is_some(),
            }];
        }
        let meta = json!({"example.com/cost": {"cents": 12}});
        assert_eq!(read::<Cost>(meta.as_object(), "b", "t").value, Cost { cents: Some(12) });
        let meta = json!({"example.com/cost": {"cents": 20000}});
        let r = read::<Cost>(meta.as_object(), "b", "t");
        assert_eq!(r.value, Cost { cents: None });
        assert!(r.warnings[0].contains("cents") && r.warnings[0].contains("10000"));
    }
}
