//! The binding's catalog methods: discovery at connect, the adopted
//! generation, the candidate, adoption and explicit refresh. The rules are in
//! [`crate::catalog`].

use std::sync::Arc;

use super::Binding;
use crate::catalog::{Catalog, RefreshOutcome};
use crate::error::Error;

impl Binding {
    /// The adopted catalog generation: what calls and model-name lookups use.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.inner.catalog.adopted()
    }

    /// The validated candidate waiting for adoption, if the server's offering
    /// changed since the adopted generation.
    pub fn candidate(&self) -> Option<Arc<Catalog>> {
        self.inner.catalog.candidate()
    }

    /// Adopts the candidate `generation` and returns it. Adopting the
    /// generation already in force is a no-op. A generation that was a
    /// candidate but has been superseded fails with `catalog_stale`; one that
    /// never existed with `not_found`.
    pub fn adopt(&self, generation: u64) -> Result<Arc<Catalog>, Error> {
        self.inner.catalog.adopt(generation).map_err(|e| e.with_binding(&self.inner.name).with_op("adopt"))
    }

    /// Refetches every family the server advertised now, without waiting for
    /// a change notification, and publishes a candidate unless the offering
    /// is the adopted one. A failure leaves the adopted generation in force.
    /// Cached lists are dropped first: a refresh asks the server.
    pub async fn refresh_catalog(&self) -> Result<RefreshOutcome, Error> {
        self.inner.cache.lists_refreshed();
        self.inner
            .catalog
            .refresh_all()
            .await
            .map_err(|e| e.with_binding(&self.inner.name).with_op("refresh_catalog"))
    }
}
