//! Compatibility profiles: how far a binding bends for an imperfect server.
//!
//! A [`Profile`] is a named, versioned set of [`Tolerance`]s. The binding
//! accepts the deviations its profile lists and refuses the others; the
//! catalog reports in [`Catalog::applied_tolerances`] the ones this server
//! actually needed, so a host can tell a faithful server from one that is
//! being carried.
//!
//! | tolerance | what is bent | without it |
//! | --- | --- | --- |
//! | `invalid_output_schema` | a tool whose output schema is unusable (not an object schema, does not compile, over a bound) is kept without it | the tool is refused |
//! | `legacy_sse` | the HTTP transport may fall back to the 2024-11-05 HTTP+SSE transport | no fallback |
//! | `display_name_normalization` | a title, description or resource name holding control characters (C0, C1) or bidirectional formatting characters, or a title with surrounding blanks, is normalized (those characters become spaces; titles are trimmed) | that field is dropped and the entry kept (a resource's or template's required name: the entry is refused) |
//! | `loose_input_schema` | a tool without an input schema is given `{"type":"object"}`; one without `"type"` is kept as sent | the tool is refused |
//! | `structured_content_mismatch` | a call result whose `structuredContent` fails the tool's output schema (or is missing) loses its structured content, with a warning | the call fails with `server_protocol` |
//! | `app_flat_resource_uri` | a tool whose app resource is named only under the deprecated flat key `_meta["ui/resourceUri"]` (ext-apps before 2026-01-26) is given that app, with a warning | the flat key is ignored: the tool has no app (a warning says so) |
//! | `legacy_era_for_mrtr_less_servers` | under the automatic protocol choice, a server whose `server/discover` identifies an implementation known to speak 2026-07-28 while still asking for elicitation and roots only through server-initiated requests (which that era does not carry) is spoken to with `initialize` instead | the 2026-07-28 era is kept, and such tools fail |
//!
//! | profile | tolerances |
//! | --- | --- |
//! | `strict/v1` | none |
//! | `default/v3` (the default) | `invalid_output_schema`, `legacy_sse`, `display_name_normalization`, `structured_content_mismatch`, `legacy_era_for_mrtr_less_servers`, `app_flat_resource_uri` |
//! | `default/v2` | `invalid_output_schema`, `legacy_sse`, `display_name_normalization`, `structured_content_mismatch`, `legacy_era_for_mrtr_less_servers` |
//! | `default/v1` | `invalid_output_schema`, `legacy_sse`, `display_name_normalization`, `structured_content_mismatch` |
//! | `legacy/v3` | all seven |
//! | `legacy/v2` | all but `app_flat_resource_uri` |
//! | `legacy/v1` | all but `app_flat_resource_uri` and `legacy_era_for_mrtr_less_servers` |
//!
//! `legacy_era_for_mrtr_less_servers` is applied by the dialer (see
//! [`Dialer`](crate::era::Dialer)) and reported with the catalog of every
//! session it chose the era for; which implementations it knows is written
//! down at `crate::era::modern::mrtr_less_implementation`. A pinned
//! protocol choice is always obeyed.
//!
//! `structured_content_mismatch` bends a call, not a catalog: when it is
//! applied, the call's result says so in its warnings, and it never appears
//! in `applied_tolerances`. `legacy_sse` is applied by the HTTP transport
//! (an automatic HTTP factory; see [`TransportFactory::tolerances`]) and
//! reported with the catalog of the connection that needed it; a definition
//! whose factory may fall back under a profile without `legacy_sse` is
//! refused at connect (`invalid_config`, see [`Definition::validate`]).
//!
//! [`TransportFactory::tolerances`]: crate::transport::TransportFactory::tolerances
//! [`Definition::validate`]: crate::Definition::validate
//!
//! A profile's tolerances never change under the same name and version: a
//! change is a new version, so that a record of `default/v1` keeps meaning
//! what it meant. [`Profile::digest`] is the checkable form.
//!
//! [`Catalog::applied_tolerances`]: crate::catalog::Catalog::applied_tolerances

use serde::{Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;

use crate::canonical::{hex, Encoder};

/// The domain tag of a profile digest.
pub(crate) const PROFILE_DOMAIN: &str = "mcp-stack/profile/v1";

macro_rules! tolerances {
    ($( $(#[$doc:meta])* $variant:ident => $id:literal, )*) => {
        /// One deviation from the specification a binding may accept. See the
        /// [module docs](self) for what each one bends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Tolerance {
            $( $(#[$doc])* $variant, )*
        }

        impl Tolerance {
            /// Every tolerance, in declaration order.
            pub const ALL: &'static [Tolerance] = &[ $( Tolerance::$variant, )* ];

            /// The stable snake_case identifier.
            pub const fn as_str(self) -> &'static str {
                match self { $( Tolerance::$variant => $id, )* }
            }

            /// Parses an identifier.
            pub fn from_id(id: &str) -> Option<Self> {
                match id { $( $id => Some(Tolerance::$variant), )* _ => None }
            }
        }
    };
}

/// Serialized as its stable identifier ([`Tolerance::as_str`]).
impl Serialize for Tolerance {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

tolerances! {
    /// Keep a tool whose output schema is unusable, without the schema.
    InvalidOutputSchema => "invalid_output_schema",
    /// Allow the legacy HTTP+SSE transport (2024-11-05).
    LegacySse => "legacy_sse",
    /// Normalize display text holding control characters instead of dropping it.
    DisplayNameNormalization => "display_name_normalization",
    /// Accept a tool with no input schema, or one without `"type"`.
    LooseInputSchema => "loose_input_schema",
    /// Drop a call's structured content that fails the output schema instead
    /// of failing the call.
    StructuredContentMismatch => "structured_content_mismatch",
    /// Under the automatic protocol choice, speak the `initialize` era to a
    /// server known to ask only through server-initiated requests.
    LegacyEraForMrtrLessServers => "legacy_era_for_mrtr_less_servers",
    /// Take a tool's app resource from the deprecated flat key
    /// `_meta["ui/resourceUri"]` when the nested `_meta.ui.resourceUri` is
    /// absent.
    AppFlatResourceUri => "app_flat_resource_uri",
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A named, versioned set of tolerances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// A stable identifier, not prose.
    pub name: String,
    /// The revision under this name. Bump it whenever the tolerances change.
    pub version: u32,
    /// The deviations allowed. Order and duplicates are not significant.
    pub tolerances: Vec<Tolerance>,
}

impl Default for Profile {
    /// [`Profile::default_v3`].
    fn default() -> Self {
        Profile::default_v3()
    }
}

impl Profile {
    /// `strict/v1`: no tolerance at all.
    pub fn strict_v1() -> Self {
        Profile { name: "strict".into(), version: 1, tolerances: Vec::new() }
    }

    /// `default/v3`: what a host wants from servers in the wild;
    /// `default/v2` and `app_flat_resource_uri`.
    pub fn default_v3() -> Self {
        let mut profile = Profile::default_v2();
        profile.version = 3;
        profile.tolerances.push(Tolerance::AppFlatResourceUri);
        profile
    }

    /// `default/v2`: the default before `app_flat_resource_uri`;
    /// `default/v1` and `legacy_era_for_mrtr_less_servers`.
    pub fn default_v2() -> Self {
        let mut profile = Profile::default_v1();
        profile.version = 2;
        profile.tolerances.push(Tolerance::LegacyEraForMrtrLessServers);
        profile
    }

    /// `default/v1`: the default before `legacy_era_for_mrtr_less_servers`.
    pub fn default_v1() -> Self {
        Profile {
            name: "default".into(),
            version: 1,
            tolerances: vec![
                Tolerance::InvalidOutputSchema,
                Tolerance::LegacySse,
                Tolerance::DisplayNameNormalization,
                Tolerance::StructuredContentMismatch,
            ],
        }
    }

    /// `legacy/v3`: every tolerance, for old or careless servers.
    pub fn legacy_v3() -> Self {
        let mut profile = Profile::legacy_v2();
        profile.version = 3;
        profile.tolerances.push(Tolerance::AppFlatResourceUri);
        profile
    }

    /// `legacy/v2`: every tolerance there was before `app_flat_resource_uri`.
    pub fn legacy_v2() -> Self {
        let mut profile = Profile::legacy_v1();
        profile.version = 2;
        profile.tolerances.push(Tolerance::LegacyEraForMrtrLessServers);
        profile
    }

    /// `legacy/v1`: the five tolerances there were before
    /// `legacy_era_for_mrtr_less_servers` (a profile never changes under
    /// its name and version).
    pub fn legacy_v1() -> Self {
        Profile {
            name: "legacy".into(),
            version: 1,
            tolerances: vec![
                Tolerance::InvalidOutputSchema,
                Tolerance::LegacySse,
                Tolerance::DisplayNameNormalization,
                Tolerance::LooseInputSchema,
                Tolerance::StructuredContentMismatch,
            ],
        }
    }

    /// The shipped profile named `id` (`name/vN`), if there is one.
    pub fn shipped(id: &str) -> Option<Self> {
        let profile = match id {
            "strict/v1" => Profile::strict_v1(),
            "default/v1" => Profile::default_v1(),
            "default/v2" => Profile::default_v2(),
            "default/v3" => Profile::default_v3(),
            "legacy/v1" => Profile::legacy_v1(),
            "legacy/v2" => Profile::legacy_v2(),
            "legacy/v3" => Profile::legacy_v3(),
            _ => return None,
        };
        Some(profile)
    }

    /// Whether this profile allows `tolerance`.
    pub fn allows(&self, tolerance: Tolerance) -> bool {
        self.tolerances.contains(&tolerance)
    }

    /// `name/vN`, as [`crate::Status::compat_profile`] reports it.
    pub fn id(&self) -> String {
        format!("{}/v{}", self.name, self.version)
    }

    /// The hex digest of the profile: SHA-256 over the domain tag, the name,
    /// the version and the sorted, de-duplicated tolerance identifiers (see
    /// `crate::catalog::digest`).
    pub fn digest(&self) -> String {
        let mut ids: Vec<&str> = self.tolerances.iter().map(|t| t.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut h = Sha256::new();
        let mut e = Encoder::new(&mut h);
        e.str(PROFILE_DOMAIN);
        e.str(&self.name);
        e.len(self.version as usize);
        e.len(ids.len());
        for id in ids {
            e.str(id);
        }
        drop(e);
        hex(&h.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles() {
        assert_eq!(Profile::default(), Profile::default_v3());
        assert_eq!(Profile::strict_v1().id(), "strict/v1");
        assert_eq!(Profile::default_v1().id(), "default/v1");
        assert_eq!(Profile::default_v2().id(), "default/v2");
        assert_eq!(Profile::legacy_v1().id(), "legacy/v1");
        assert_eq!(Profile::legacy_v2().id(), "legacy/v2");
        assert_eq!(Profile::default_v3().id(), "default/v3");
        assert_eq!(Profile::legacy_v3().id(), "legacy/v3");
        let flat = Tolerance::AppFlatResourceUri;
        assert!(Profile::default_v3().allows(flat) && Profile::legacy_v3().allows(flat));
        assert!(!Profile::default_v2().allows(flat) && !Profile::legacy_v2().allows(flat));
        assert!(!Profile::strict_v1().allows(flat));
        let quirk = Tolerance::LegacyEraForMrtrLessServers;
        assert!(Profile::default_v2().allows(quirk) && Profile::legacy_v2().allows(quirk));
        assert!(!Profile::default_v1().allows(quirk) && !Profile::legacy_v1().allows(quirk));
        assert!(!Profile::strict_v1().allows(quirk));
        assert_eq!(
            Profile::legacy_v3().tolerances.len(),
            Tolerance::ALL.len(),
            "legacy/v3 is every tolerance"
        );
        for id in
            ["strict/v1", "default/v1", "default/v2", "default/v3", "legacy/v1", "legacy/v2", "legacy/v3"]
        {
            assert_eq!(Profile::shipped(id).unwrap().id(), id);
        }
        assert!(Profile::shipped("default/v4").is_none());
        assert!(!Profile::strict_v1().allows(Tolerance::InvalidOutputSchema));
        assert!(Profile::default_v1().allows(Tolerance::InvalidOutputSchema));
        assert!(!Profile::default_v1().allows(Tolerance::LooseInputSchema));
        assert!(Profile::legacy_v1().allows(Tolerance::LooseInputSchema));
        for t in Tolerance::ALL {
            assert_eq!(Tolerance::from_id(t.as_str()), Some(*t));
        }
    }

    #[test]
    fn digest_ignores_order_and_duplicates() {
        let mut p = Profile::default_v1();
        let d = p.digest();
        p.tolerances.reverse();
        p.tolerances.push(Tolerance::LegacySse);
        assert_eq!(p.digest(), d);
        p.version = 2;
        assert_ne!(p.digest(), d);
    }

    #[test]
    fn profile_digest_vectors() {
        assert_eq!(
            Profile::strict_v1().digest(),
            "36d9ee75662f36c51ec601e86a9e610c9f0e14cdf1dbe2925b18ab3836c94828"
        );
        assert_eq!(
            Profile::default_v1().digest(),
            "71bda6fa4c82ca1bceb906c14c60151b643501568d24a56ef11144138aefc18a"
        );
        assert_eq!(
            Profile::legacy_v1().digest(),
            "2b1c34adf878d636b479a4e4cc0a292a5e16621ca95603146837f5b35ba1e8ee"
        );
        assert_eq!(
            Profile::default_v2().digest(),
            "e4e347c4fa936494376f6d180e6429c3f4517fe5a1581a5dd377642d0f427904"
        );
        assert_eq!(
            Profile::legacy_v2().digest(),
            "7c9beddc7dac22206b9d2f9dafa9ec704e8da5e26dd4986973ac515c3a107c67"
        );
        assert_eq!(
            Profile::default_v3().digest(),
            "4aef2252dcfed89ad30df3247f0e5f7925600f8ae0b81633eb5326531e81b642"
        );
        assert_eq!(
            Profile::legacy_v3().digest(),
            "766076f2f04c6634e2d4d67b7d7d26013a511d466a116c3279374bdb7b3bbbd1"
        );
    }
}
