//! rustls's crypto provider for every reqwest client of the process.
//!
//! reqwest is built with `rustls-no-provider`: the crate does not build
//! aws-lc-rs (a long C build) for rustls, and brings ring instead. reqwest
//! then takes the process-default provider of rustls, and panics when a
//! client is built with none installed. The library installs ring's before
//! it builds a client of its own; a host that builds its own
//! `reqwest::Client` first calls [`install_crypto_provider`], or installs
//! a provider of its choice.

/// Installs rustls's ring provider as the process default, unless a
/// provider is installed already (the host's choice is kept), so that
/// reqwest clients can be built.
///
/// The library calls this before it builds any HTTP client of its own (the
/// transports' clients, [`HttpFetch`](crate::auth::HttpFetch), the headless
/// authorization handler). Call it before building a `reqwest::Client`
/// that you hand to [`HttpBuilder::client`](super::HttpBuilder::client):
/// reqwest, as this crate builds it, panics when a client is built and no
/// provider is installed (unless another crate of the program turns on
/// reqwest's `rustls` feature, which brings aws-lc-rs as its fallback). A
/// host that wants another provider (aws-lc-rs, a FIPS one) installs it
/// with `rustls::crypto::CryptoProvider::install_default` before the first
/// client is built; this function then leaves it in place. Cheap, and safe
/// to call from any thread, any number of times.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one between the check and here: then
        // that one is the default, and the error is nothing to act on.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_is_installed_and_a_host_choice_is_kept() {
        install_crypto_provider();
        let first = rustls::crypto::CryptoProvider::get_default().expect("a provider").clone();
        install_crypto_provider();
        let second = rustls::crypto::CryptoProvider::get_default().expect("a provider");
        assert!(std::sync::Arc::ptr_eq(&first, second), "a second call replaces nothing");
        reqwest::Client::builder().build().expect("a client builds");
    }
}
