//! MCP Apps through a binding: an app's HTML read with `resources/read`,
//! checked, fingerprinted, and compared with the binding's last read of
//! the same app (see [`crate::catalog::apps`]).
//!
//! The binding remembers the fingerprint of each app it read (at most
//! [`MAX_REMEMBERED_APPS`], the oldest forgotten first) with the catalog
//! generation it was read under; a read whose fingerprint differs carries
//! an [`AppDrift`] and is reported as a warning event, like a tool whose
//! schema digest changed: the host decides whether to show the new app.
//! With an app fingerprint store on the definition, the binding's first
//! read of an app is compared with the store's, and each new fingerprint
//! saved there (see [`crate::catalog::apps::AppFingerprintStore`]).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use super::{Binding, Definition};
use crate::catalog::apps::{self, AppDrift, AppFingerprintStore, AppResource, AppResourceMeta};
use crate::error::{normalize_message, Error, FailureClass};
use crate::protocol::APP_MIME_TYPE;
use crate::request::{push_warning, CallOpts};

/// How many apps' fingerprints one binding remembers.
pub(crate) const MAX_REMEMBERED_APPS: usize = 256;
/// How long one load or save of the app fingerprint store may take: past
/// it, the read goes on without it.
const STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// The fingerprints a binding remembers: (URI, generation, fingerprint),
/// oldest first.
pub(crate) type AppFingerprints = std::sync::Mutex<VecDeque<(String, u64, String)>>;

/// The definition's app fingerprint store, with the key of this binding's
/// server.
#[derive(Debug)]
pub(crate) struct AppStore {
    store: Arc<dyn AppFingerprintStore>,
    server: String,
}

impl AppStore {
    /// The definition's store, unless it has none or its transport names
    /// no endpoint (then nothing says which server the apps are of).
    pub(crate) fn new(definition: &Definition) -> Option<AppStore> {
        let store = definition.app_fingerprint_store.clone()?;
        let Some(digest) = definition.transport.endpoint_digest() else {
            tracing::warn!(
                binding = %definition.name,
                "the {} transport names no endpoint: app fingerprints are kept in memory only",
                definition.transport.kind()
            );
            return None;
        };
        Some(AppStore { store, server: apps::server_key(&digest) })
    }
}

impl Binding {
    /// Reads the app `uri` (a tool's `app.resource_uri`): `resources/read`,
    /// then the one content item for that URI must be of MIME type
    /// `text/html;profile=mcp-app`, text or a UTF-8 blob, and within the
    /// result limits (`max_text_result_bytes`, `max_binary_item_bytes`).
    /// Its `_meta.ui` is read as data for the host (the content item's,
    /// else the catalog's `resources/list` entry's), and its fingerprint
    /// compared with this binding's last read of the same URI, else (on
    /// its first read) with the one kept in the definition's
    /// [`app_fingerprint_store`](crate::Definition::app_fingerprint_store)
    /// for this server, if any; a new fingerprint is saved there. A
    /// difference is [`AppResource::drift`] and a warning event.
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
        // The binding's own last read, else the store's (an earlier run's).
        let earlier = match self.remember_app(uri, generation, &fingerprint) {
            Some((generation, previous)) => {
                Some(AppDrift { previous, previous_generation: Some(generation) })
            }
            None => {
                self.stored_app(uri).await.map(|previous| AppDrift { previous, previous_generation: None })
            }
        };
        if earlier.as_ref().is_none_or(|e| e.previous != fingerprint) {
            self.store_app(uri, &fingerprint).await;
        }
        let drift = earlier.filter(|e| e.previous != fingerprint);
        if let Some(drift) = &drift {
            let when = match drift.previous_generation {
                Some(generation) => format!("generation {generation}"),
                None => "kept from an earlier read".to_string(),
            };
            self.warn(format!(
                "app resource {uri:?} changed: fingerprint {} ({when}) is now {} (generation {generation})",
                &drift.previous[..16.min(drift.previous.len())],
                &fingerprint[..16],
            ));
        }
        Ok(AppResource { uri: uri.to_string(), html, meta, fingerprint, generation, drift, warnings })
    }

    /// Records the fingerprint of `uri`; the one before (its generation and
    /// fingerprint), if this binding read it before.
    fn remember_app(&self, uri: &str, generation: u64, fingerprint: &str) -> Option<(u64, String)> {
        let mut seen = self.inner.app_fingerprints.lock().expect("app fingerprints lock");
        let earlier = seen.iter().position(|(u, _, _)| u == uri).and_then(|i| seen.remove(i));
        if seen.len() >= MAX_REMEMBERED_APPS {
            seen.pop_front();
        }
        seen.push_back((uri.to_string(), generation, fingerprint.to_string()));
        earlier.map(|(_, generation, fingerprint)| (generation, fingerprint))
    }

    /// The fingerprint of `uri` the store kept, if there is a store and it
    /// answers in time.
    async fn stored_app(&self, uri: &str) -> Option<String> {
        let app_store = self.inner.app_store.as_ref()?;
        match tokio::time::timeout(STORE_TIMEOUT, app_store.store.load(&app_store.server, uri)).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                tracing::warn!(binding = %self.inner.name, "the app fingerprint store failed: {e}");
                None
            }
            Err(_) => {
                tracing::warn!(binding = %self.inner.name, "the app fingerprint store did not answer in time");
                None
            }
        }
    }

    /// Keeps `fingerprint` as the last of `uri` in the store, if there is
    /// one; a failure costs only the record.
    async fn store_app(&self, uri: &str, fingerprint: &str) {
        let Some(app_store) = self.inner.app_store.as_ref() else { return };
        let saved = app_store.store.save(&app_store.server, uri, fingerprint);
        match tokio::time::timeout(STORE_TIMEOUT, saved).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(binding = %self.inner.name, "the app fingerprint store failed: {e}"),
            Err(_) => {
                tracing::warn!(binding = %self.inner.name, "the app fingerprint store did not answer in time")
            }
        }
    }
}
