//! [`Family`]: the three lists a server can announce a change to.
//!
//! It lives with the wire model, below the catalog and the binding, because
//! it names what a `notifications/*/list_changed` is about: the catalog
//! marks a family stale and the binding's events report it, and an event
//! type should not have to import the catalog to say so. It is re-exported
//! as `crate::catalog::Family`.

use serde::{Serialize, Serializer};
use std::fmt;

use super::methods;

/// A catalog family: what one `list_changed` notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Tools (`tools/list`).
    Tools,
    /// Prompts (`prompts/list`).
    Prompts,
    /// Resources and resource templates (`resources/list`,
    /// `resources/templates/list`).
    Resources,
}

impl Family {
    /// Every family, in their stable order.
    pub const ALL: [Family; 3] = [Family::Tools, Family::Prompts, Family::Resources];

    /// The stable identifier: `tools`, `prompts` or `resources`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Family::Tools => "tools",
            Family::Prompts => "prompts",
            Family::Resources => "resources",
        }
    }

    /// The family a `notifications/*/list_changed` method announces.
    pub fn from_list_changed(method: &str) -> Option<Family> {
        match method {
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => Some(Family::Tools),
            methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => Some(Family::Prompts),
            methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => Some(Family::Resources),
            _ => None,
        }
    }

    /// The family's place in [`Family::ALL`], for per-family tables.
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialized as its stable identifier ([`Family::as_str`]).
impl Serialize for Family {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
