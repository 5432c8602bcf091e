//! Who the client is at each authorization server: a pre-registered
//! client (bound to the issuer of its first use), a Client ID Metadata
//! Document, or a dynamic registration, per issuer.

use super::*;

impl Authorizer {
    /// Reads, once, the issuer the pre-registered client was bound to on
    /// its first use, when none is configured. A store that cannot be read
    /// fails the flow: going on could show the secret to another server.
    pub(super) async fn load_client_issuer(&self) -> Result<(), Error> {
        let client = &self.oauth.client;
        let Some(id) = client.client_id.as_deref().filter(|_| client.issuer.is_none()) else {
            return Ok(());
        };
        if self.oauth.bound_issuer.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
            return Ok(());
        }
        let stored = self.oauth.store.load_client_issuer(&self.server, id).await.map_err(|e| {
            Error::new(
                FailureClass::AuthFailed,
                format!(
                    "could not read which authorization server the pre-registered client belongs to: {e}"
                ),
            )
        })?;
        self.oauth.bound_issuer.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(stored);
        Ok(())
    }

    /// The issuer the pre-registered client belongs to: the configured one,
    /// else the one it was bound to on first use.
    pub(super) fn client_issuer(&self) -> Option<String> {
        let bound = || self.oauth.bound_issuer.lock().unwrap_or_else(|e| e.into_inner()).clone().flatten();
        self.oauth.client.issuer.clone().or_else(bound)
    }

    /// Binds the pre-registered client to `issuer` after its first token
    /// there (when no issuer is configured), and keeps that in the store.
    pub(super) async fn bind_client_issuer(&self, credentials: &ClientCredentials, issuer: &str) {
        let client = &self.oauth.client;
        if client.issuer.is_some() || client.client_id.as_deref() != Some(credentials.client_id.as_str()) {
            return;
        }
        {
            let mut bound = self.oauth.bound_issuer.lock().unwrap_or_else(|e| e.into_inner());
            if bound.as_ref().is_some_and(Option::is_some) {
                return;
            }
            *bound = Some(Some(issuer.to_owned()));
        }
        tracing::debug!(target: "mcp_stack::auth", %issuer, "bound the pre-registered client to its issuer");
        if let Err(e) =
            self.oauth.store.save_client_issuer(&self.server, &credentials.client_id, issuer).await
        {
            // The binding holds for this process; a later one would bind again
            // on its first use.
            tracing::warn!(target: "mcp_stack::auth", error = %e, "could not keep the pre-registered client's issuer in the token store");
        }
    }

    pub(super) fn client_settings(&self, redirect_uri: &str) -> ClientSettings {
        let client = &self.oauth.client;
        ClientSettings {
            pre_registered: client.client_id.as_ref().map(|id| ClientRegistration {
                issuer: self.client_issuer(),
                credentials: ClientCredentials {
                    client_id: id.clone(),
                    client_secret: client.client_secret.clone(),
                },
            }),
            metadata_document: client.metadata_document.clone(),
            registered: None,
            client_name: client.client_name.clone(),
            redirect_uris: if redirect_uri.is_empty() { Vec::new() } else { vec![redirect_uri.to_owned()] },
        }
    }

    /// The identity this client already has for `meta`'s issuer, without
    /// registering.
    pub(super) fn known_identity(
        &self,
        meta: &AuthorizationServerMetadata,
        redirect_uri: &str,
    ) -> Result<Option<(ClientCredentials, Option<TokenEndpointAuth>)>, Error> {
        let mut settings = self.client_settings(redirect_uri);
        let registered = self.registered(&meta.issuer);
        settings.registered = registered.as_ref().map(|r| r.registration.clone());
        match choose_identity(&settings, meta).map_err(classify)? {
            IdentityChoice::Known(c) => {
                let method = registered.filter(|r| r.registration.credentials == c).and_then(|r| r.method);
                Ok(Some((c, method)))
            }
            IdentityChoice::MetadataDocument(url) => Ok(Some((
                ClientCredentials { client_id: url, client_secret: None },
                Some(TokenEndpointAuth::None),
            ))),
            IdentityChoice::Register { .. } => Ok(None),
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    pub(super) fn registered(&self, issuer: &str) -> Option<Registered> {
        self.oauth.registrations.lock().unwrap_or_else(|e| e.into_inner()).get(issuer).cloned()
    }

    /// The client identity for `meta`, registering (RFC 7591) when there
    /// is no other.
    pub(super) async fn identity(
        &self,
        meta: &AuthorizationServerMetadata,
        grant: Grant,
        redirect_uri: &str,
    ) -> Result<(ClientCredentials, Option<TokenEndpointAuth>), Error> {
        if let Some(known) = self.known_identity(meta, redirect_uri)? {
            return Ok(known);
        }
        let mut settings = self.client_settings(redirect_uri);
        settings.registered = None;
        let IdentityChoice::Register { endpoint, mut request } =
            choose_identity(&settings, meta).map_err(classify)?
        else {
            return Err(Error::new(FailureClass::AuthFailed, "no client identity could be chosen"));
        };
        // Ask for the method the server will take: `private_key_jwt` with
        // the key's public half when a key is configured and the server may
        // take it, else a public client where it may be one, else a secret
        // sent the way it prefers.
        let supported = meta.token_endpoint_auth_methods_supported.as_deref();
        let public_ok = supported.is_none_or(|s| s.iter().any(|m| m == "none"));
        let key = self.oauth.private_key.as_ref();
        let key_ok = TokenEndpointAuth::choose_with_key(supported, key.is_some(), false, None)
            == TokenEndpointAuth::PrivateKeyJwt;
        let wanted = match grant {
            _ if key_ok => TokenEndpointAuth::PrivateKeyJwt,
            Grant::ClientCredentials => TokenEndpointAuth::choose(supported, true, None),
            Grant::AuthorizationCode if public_ok => TokenEndpointAuth::None,
            Grant::JwtBearer | Grant::EnterpriseManaged if public_ok => TokenEndpointAuth::None,
            _ => TokenEndpointAuth::choose(supported, true, None),
        };
        request.token_endpoint_auth_method = wanted.as_str().to_owned();
        if let (TokenEndpointAuth::PrivateKeyJwt, Some(key)) = (wanted, key) {
            request.jwks = Some(serde_json::json!({ "keys": [key.public_jwk()] }));
        }
        if grant != Grant::AuthorizationCode {
            request.grant_types = vec![match grant {
                Grant::ClientCredentials => "client_credentials".into(),
                _ => super::super::grant::JWT_BEARER_GRANT.into(),
            }];
            request.response_types = Vec::new();
            request.redirect_uris = Vec::new();
        }
        let url = Url::parse(&endpoint).map_err(|_| {
            classify(AuthError::InvalidUrl { what: "registration endpoint", reason: "not a URL" })
        })?;
        let body = serde_json::to_vec(&request)
            .map_err(|_| Error::new(FailureClass::AuthFailed, "could not encode the registration request"))?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let answer = self
            .fetch
            .post(&url, &headers, body, MAX_REGISTRATION_BYTES)
            .await
            .map_err(|e| classify(AuthError::Fetch { url: url.to_string(), reason: e.0 }))?;
        if !(200..300).contains(&answer.status) {
            return Err(Error::new(
                FailureClass::AuthFailed,
                format!(
                    "dynamic client registration at {} was refused with HTTP {}",
                    meta.issuer, answer.status
                ),
            ));
        }
        let registration = ClientRegistration::from_response(&answer.body, &meta.issuer).map_err(classify)?;
        #[derive(Deserialize)]
        struct Method {
            #[serde(default)]
            token_endpoint_auth_method: Option<String>,
        }
        let method = serde_json::from_slice::<Method>(&answer.body)
            .ok()
            .and_then(|m| m.token_endpoint_auth_method)
            .and_then(|m| TokenEndpointAuth::from_name(&m));
        tracing::debug!(target: "mcp_stack::auth", issuer = %meta.issuer, "registered a client");
        let credentials = registration.credentials.clone();
        self.oauth
            .registrations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(meta.issuer.clone(), Registered { registration, method });
        Ok((credentials, method))
    }
}
