//! MCP Apps through a binding: an app's HTML read with `resources/read`,
//! checked, fingerprinted, and compared with the binding's last read of
//! the same app (see [`crate::catalog::apps`]).
//!
//! The binding remembers the fingerprint of each app it read (at most
//! [`MAX_REMEMBERED_APPS`], the oldest forgotten first) with the catalog
//! generation it was read under; a read whose fingerprint differs carries
//! an [`AppDrift`] and is reported as a warning event, like a tool whose
//! schema digest changed: the host decides whether to show the new app.

use std::collections::VecDeque;

use super::Binding;
use crate::catalog::apps::{self, AppDrift, AppResource, AppResourceMeta};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::APP_MIME_TYPE;
use crate::request::{push_warning, CallOpts};

/// How many apps' fingerprints one binding remembers.
pub(crate) const MAX_REMEMBERED_APPS: usize = 256;

/// The fingerprints a binding remembers: (URI, generation, fingerprint),
/// oldest first.
pub(crate) type AppFingerprints = std::sync::Mutex<VecDeque<(String, u64, String)>>;

impl Binding {
    /// Reads the app `uri` (a tool's `app.resource_uri`): `resources/read`,
    /// then the one content item for that URI must be of MIME type
    /// `text/html;profile=mcp-app`, text or a UTF-8 blob, and within the
    /// result limits (`max_text_result_bytes`, `max_binary_item_bytes`).
    /// Its `_meta.ui` is read as data for the host (the content item's,
    /// else the catalog's `resources/list` entry's), and its fingerprint
    /// compared with this binding's last read of the same URI.
    ///
    /// Fails with `invalid_arguments` before any I/O for a URI that is not
    /// `ui://`; `verification_failed` when the server answers with no such
    /// item, several, another MIME type, or bytes that are not UTF-8;
    /// `limit_exceeded` when a result limit cut it. The HTML is never
    /// rendered, run or followed.
    pub async fn read_app(&self, uri: &str, opts: CallOpts) -> Result<AppResource, Error> {
        let named = |e: Error| e.with_binding(&self.inner.name).with_op("read_app");
        let failure = |class: FailureClass, why: &str| {
            named(Error::new(class, format!("app resource {:?}: {why}", normalize_message(uri, 96))))
        };
        if !uri.starts_with("ui://") || uri.len() > apps::MAX_APP_URI_BYTES {
            return Err(failure(
                FailureClass::InvalidArguments,
                &format!("not a ui:// URI of at most {} bytes", apps::MAX_APP_URI_BYTES),
            ));
        }
        let generation = self.catalog().generation;
        let mut read = self.read_resource(uri, opts).await.map_err(named)?;
        let mut warnings = std::mem::take(&mut read.warnings);
        let Some(mut item) = read.only_item(uri) else {
            return Err(failure(
                FailureClass::VerificationFailed,
                "resources/read did not answer with exactly one item for it",
            ));
        };
        let mime = item.mime_type.as_deref().unwrap_or("");
        if !apps::is_app_mime(mime) {
            let why = format!("served as {:?}, not {APP_MIME_TYPE}", normalize_message(mime, 64));
            return Err(failure(FailureClass::VerificationFailed, &why));
        }
        let item_meta = item.meta.take();
        let bytes = item.whole_bytes().map_err(|(class, why)| failure(class, why))?;
        let html = String::from_utf8(bytes)
            .map_err(|_| failure(FailureClass::VerificationFailed, "its blob is not UTF-8"))?;
        let (meta, meta_warnings) = match apps::read_resource_meta(item_meta.as_ref(), uri) {
            (Some(meta), w) => (meta, w),
            (None, _) => {
                let catalog = self.catalog();
                let listed = catalog.resources.iter().find(|r| r.uri == uri).and_then(|r| r.app.clone());
                (listed.unwrap_or_else(AppResourceMeta::default), Vec::new())
            }
        };
        for w in meta_warnings {
            push_warning(&mut warnings, w);
        }
        let fingerprint = apps::fingerprint(uri, &html, &meta);
        let drift = self.remember_app(uri, generation, &fingerprint);
        if let Some(drift) = &drift {
            self.warn(format!(
                "app resource {uri:?} changed: fingerprint {} (generation {}) is now {} (generation {generation})",
                &drift.previous[..16],
                drift.previous_generation,
                &fingerprint[..16],
            ));
        }
        Ok(AppResource { uri: uri.to_string(), html, meta, fingerprint, generation, drift, warnings })
    }

    /// Records the fingerprint of `uri`; the drift from the one before, if
    /// it differs.
    fn remember_app(&self, uri: &str, generation: u64, fingerprint: &str) -> Option<AppDrift> {
        let mut seen = self.inner.app_fingerprints.lock().expect("app fingerprints lock");
        let earlier = seen.iter().position(|(u, _, _)| u == uri).and_then(|i| seen.remove(i));
        if seen.len() >= MAX_REMEMBERED_APPS {
            seen.pop_front();
        }
        seen.push_back((uri.to_string(), generation, fingerprint.to_string()));
        earlier
            .filter(|(_, _, f)| f != fingerprint)
            .map(|(_, previous_generation, previous)| AppDrift { previous, previous_generation })
    }
}
