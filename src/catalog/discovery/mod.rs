//! Bounded discovery: paging through a list, and turning what the server sent
//! into a validated [`Catalog`].
//!
//! Paging lives here and nowhere else: the binding's `list_*` methods and the
//! catalog's discovery and refreshes all page through [`page_through`]. The
//! rules are in the [module docs of the catalog](super).
//!
//! Paging is in `paging`, the assembly of a generation in `assemble`, and
//! the checks of one entry in `entries`.
//!
//! [`Catalog`]: super::Catalog

use serde_json::Value;
use tower::Service;

use super::{digest, Family};
use crate::compat::Profile;
use crate::config::limits::Limits;
use crate::config::ToolFilter;
use crate::error::{normalize_message, Error};
use crate::protocol::methods;
use crate::request::{McpRequest, McpResponse};
use crate::session::SessionInfo;

mod assemble;
mod entries;
mod paging;

pub(crate) use assemble::build;
pub(crate) use paging::{one_page, page_through, BadPage, MAX_CURSOR_BYTES};

/// The entries of one list as the server sent them, with what went wrong
/// while reading it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RawList {
    pub(crate) entries: Vec<Value>,
    pub(crate) warnings: Vec<String>,
}

/// Everything the server offered, as sent: the input of [`build`] and of the
/// catalog digest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Offering {
    pub(crate) tools: RawList,
    pub(crate) prompts: RawList,
    pub(crate) resources: RawList,
    pub(crate) templates: RawList,
}

impl Offering {
    /// Forgets what was read of `family` (a server that no longer
    /// advertises it offers none of it).
    pub(crate) fn clear(&mut self, family: Family) {
        match family {
            Family::Tools => self.tools = RawList::default(),
            Family::Prompts => self.prompts = RawList::default(),
            Family::Resources => {
                self.resources = RawList::default();
                self.templates = RawList::default();
            }
        }
    }

    /// The offering with its digest and its tools' schema digests, all
    /// made from one canonical encoding of each entry: what [`build`]
    /// takes.
    pub(crate) fn digested(self) -> Digested {
        let mut scratch = Vec::new();
        let mut tool_schemas = Vec::with_capacity(self.tools.entries.len());
        let mut tools = Vec::with_capacity(self.tools.entries.len());
        for entry in &self.tools.entries {
            let (digest, schemas) = digest::entry_digest(entry, true, &mut scratch);
            tools.push(digest);
            tool_schemas.push(schemas);
        }
        let mut digests = |list: &RawList| {
            list.entries.iter().map(|v| digest::entry_digest(v, false, &mut scratch).0).collect()
        };
        let digest = digest::catalog_digest([
            ("tools", tools),
            ("prompts", digests(&self.prompts)),
            ("resources", digests(&self.resources)),
            ("resourceTemplates", digests(&self.templates)),
        ]);
        Digested { offering: self, digest, tool_schemas }
    }

    /// The offering as kept between refreshes ([`KeptOffering`]).
    pub(crate) fn keep(&self) -> KeptOffering {
        let keep = |list: &RawList| KeptList {
            entries: serde_json::to_string(&list.entries).expect("JSON values serialize").into_boxed_str(),
            warnings: list.warnings.clone(),
        };
        KeptOffering {
            tools: keep(&self.tools),
            prompts: keep(&self.prompts),
            resources: keep(&self.resources),
            templates: keep(&self.templates),
        }
    }
}

/// An offering with its digest ([`Offering::digested`]).
#[derive(Debug)]
pub(crate) struct Digested {
    pub(crate) offering: Offering,
    /// The catalog digest of the offering.
    pub(crate) digest: String,
    /// The schema digests of each of `offering.tools.entries`, in order.
    pub(crate) tool_schemas: Vec<digest::SchemaDigests>,
}

/// An offering as the catalog keeps it between refreshes, for a refresh of
/// one family to be combined with the others: each family's entries as one
/// JSON text. Read back only when a refresh needs them. As `Value`s, every
/// JSON object is a B-tree node of about 600 bytes: a small tool's entry
/// took 3 KiB, a tenth of an idle binding; as text it takes its length.
#[derive(Debug, Default)]
pub(crate) struct KeptOffering {
    tools: KeptList,
    prompts: KeptList,
    resources: KeptList,
    templates: KeptList,
}

#[derive(Debug, Default)]
struct KeptList {
    entries: Box<str>,
    warnings: Vec<String>,
}

impl KeptOffering {
    /// The offering this was kept from.
    pub(crate) fn restore(&self) -> Offering {
        let restore = |list: &KeptList| RawList {
            // The text was written from values that were read from a
            // message within `MAX_MESSAGE_DEPTH` (127), below serde_json's
            // recursion limit (128): it always reads back.
            entries: if list.entries.is_empty() {
                Vec::new()
            } else {
                serde_json::from_str(&list.entries).expect("kept entries read back")
            },
            warnings: list.warnings.clone(),
        };
        Offering {
            tools: restore(&self.tools),
            prompts: restore(&self.prompts),
            resources: restore(&self.resources),
            templates: restore(&self.templates),
        }
    }
}

/// What a catalog is built with besides the offering: who it is for and the
/// host's policy.
#[derive(Debug, Clone)]
pub(crate) struct BuildContext {
    pub(crate) binding: String,
    pub(crate) session: SessionInfo,
    pub(crate) profile: Profile,
    pub(crate) limits: Limits,
    pub(crate) filter: ToolFilter,
    /// Which tools the definition keeps always loaded.
    pub(crate) always_load: crate::config::AlwaysLoad,
    /// The binding speaks HTTP: on 2026-07-28, a tool with invalid
    /// `x-mcp-header` annotations is dropped.
    pub(crate) http: bool,
    /// The declaration sets read from each tool's `_meta`.
    pub(crate) declarations: crate::catalog::meta::DeclarationSet,
    /// The dropped declarations already reported, for the binding's life.
    pub(crate) warned: std::sync::Arc<crate::catalog::meta::WarnedOnce>,
    /// Where a dropped declaration is reported (besides the catalog).
    pub(crate) events: Option<crate::events::EventBus>,
}

impl BuildContext {
    /// Lists one family from the server.
    pub(crate) async fn fetch<S>(
        &self,
        service: S,
        family: Family,
        offering: &mut Offering,
        bad_page: BadPage,
    ) -> Result<(), Error>
    where
        S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
    {
        let l = &self.limits;
        let pages = l.max_catalog_pages;
        let b = bad_page;
        match family {
            Family::Tools => {
                offering.tools =
                    page_through(service, methods::TOOLS_LIST, "tools", l.max_catalog_items, pages, b).await?
            }
            Family::Prompts => {
                offering.prompts =
                    page_through(service, methods::PROMPTS_LIST, "prompts", l.max_prompt_count, pages, b)
                        .await?
            }
            Family::Resources => {
                let resources = page_through(
                    service.clone(),
                    methods::RESOURCES_LIST,
                    "resources",
                    l.max_resource_count,
                    pages,
                    b,
                )
                .await?;
                let templates = page_through(
                    service,
                    methods::RESOURCES_TEMPLATES_LIST,
                    "resourceTemplates",
                    l.max_resource_count,
                    pages,
                    b,
                )
                .await?;
                offering.resources = resources;
                offering.templates = templates;
            }
        }
        Ok(())
    }

    /// The families the server advertised, which discovery lists.
    pub(crate) fn advertised(&self) -> Vec<Family> {
        let c = &self.session.capabilities;
        let mut out = Vec::new();
        if c.tools.is_some() {
            out.push(Family::Tools);
        }
        if c.prompts.is_some() {
            out.push(Family::Prompts);
        }
        if c.resources.is_some() {
            out.push(Family::Resources);
        }
        out
    }
}

#[cfg(feature = "fuzzing")]
impl BuildContext {
    /// Lists the tools of `service` as discovery at connect does and builds
    /// generation 1 from them (for [`crate::fuzzing`]).
    pub(crate) async fn discover_tools<S>(&self, service: S) -> Result<super::Catalog, Error>
    where
        S: Service<McpRequest, Response = McpResponse, Error = Error> + Clone,
    {
        let mut offering = Offering::default();
        self.fetch(service, Family::Tools, &mut offering, BadPage::Keep).await?;
        Ok(build(self, offering.digested(), 1))
    }
}

/// Quotes server text in a warning, bounded.
fn q(text: &str) -> String {
    format!("{:?}", normalize_message(text, 80))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Message, Outcome};

    /// The tools of the deepest `tools/list` reply a connection accepts.
    fn deepest_tools() -> Vec<Value> {
        (1..200)
            .rev()
            .find_map(|depth| {
                let schema = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
                let frame = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"deep","inputSchema":{{"type":"object","x":{schema}}}}}]}}}}"#
                );
                match Message::parse(&frame) {
                    Ok(Message::Response(r)) => match r.outcome {
                        Outcome::Result(mut result) => serde_json::from_value(result["tools"].take()).ok(),
                        Outcome::Error(_) => None,
                    },
                    _ => None,
                }
            })
            .expect("some depth is accepted")
    }

    fn context(profile: Profile) -> BuildContext {
        BuildContext {
            binding: "b".into(),
            session: SessionInfo {
                protocol_version: "2025-11-25".into(),
                server: Default::default(),
                capabilities: Default::default(),
                instructions: None,
                transport_tolerances: Vec::new(),
            },
            profile,
            limits: Limits::default(),
            filter: Default::default(),
            always_load: Default::default(),
            http: false,
            declarations: Default::default(),
            warned: Default::default(),
            events: None,
        }
    }

    #[test]
    fn a_built_tool_carries_the_digests_of_the_schemas_it_holds() {
        use serde_json::json;
        let output = json!({ "type": "object", "properties": { "n": { "type": "number", "maximum": 1.0 } } });
        let tools = vec![
            json!({ "name": "full", "inputSchema": { "type": "object", "required": ["a"] }, "outputSchema": output }),
            // Put in by the build under the legacy profile.
            json!({ "name": "loose" }),
            json!({ "name": "null_schemas", "inputSchema": null, "outputSchema": null }),
            // Dropped by the build under the legacy profile.
            json!({ "name": "bad_output", "inputSchema": { "type": "object" }, "outputSchema": { "type": "string" } }),
        ];
        let offering =
            Offering { tools: RawList { entries: tools, warnings: vec![] }, ..Offering::default() };
        let catalog = build(&context(Profile::legacy_v1()), offering.digested(), 1);
        assert_eq!(catalog.tools.len(), 4, "{:?}", catalog.warnings);
        for tool in &catalog.tools {
            assert_eq!(
                tool.input_schema_digest,
                digest::schema_digest(&tool.input_schema.to_value()),
                "{}",
                tool.raw_name
            );
            assert_eq!(
                tool.output_schema_digest,
                tool.output_schema.as_ref().map(|s| digest::schema_digest(&s.to_value()))
            );
        }
        let full = catalog.tools.iter().find(|t| t.raw_name == "full").expect("listed");
        assert_eq!(full.output_schema, Some(output.into()));
        let loose = catalog.tools.iter().find(|t| t.raw_name == "loose").expect("listed");
        assert_eq!(loose.input_schema, json!({ "type": "object" }));
        assert!(catalog.tools.iter().filter(|t| t.raw_name != "full").all(|t| t.output_schema.is_none()));
    }

    #[test]
    fn a_kept_offering_reads_back_as_it_was_even_at_the_deepest_accepted() {
        let tools = deepest_tools();
        let depth = serde_json::to_string(&tools).expect("serializes").matches('[').count();
        assert!(depth > 100, "nested {depth} deep");
        let offering = Offering {
            tools: RawList { entries: tools, warnings: vec!["a warning".into()] },
            prompts: RawList {
                entries: vec![serde_json::json!({ "name": "p", "é": 1.5e300 })],
                warnings: vec![],
            },
            ..Offering::default()
        };
        let restored = offering.keep().restore();
        assert_eq!(restored, offering);
        assert_eq!(restored.digested().digest, offering.digested().digest);
    }
}
