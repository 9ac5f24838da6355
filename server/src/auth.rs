//! Who is calling: bearer tokens map to tenants, compared in constant time.
//!
//! The tenant comes from authentication only, never from tool arguments. The other identity
//! fields (user, session, project, …) come from arguments, with defaults from the token's
//! configuration; the user, team and org an argument names must be ones the token's
//! [`Grants`] hold (an argument narrows, never widens).

use std::sync::Arc;

use aeterna_memory::{Grants, Identity, Layer, MemoryError};
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::config::{AuthConfig, IdentityFields};

/// The longest identity field (`project_id`, `session_id`, …) a caller may pass unless the
/// operator configures `memory.max_id_bytes`.
pub const DEFAULT_MAX_ID_BYTES: usize = 256;

/// An authenticated caller: the tenant, what its token proves, its identity defaults and the
/// identity limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub tenant_id: Arc<str>,
    pub defaults: Arc<IdentityFields>,
    pub grants: Arc<Grants>,
    max_id_bytes: usize,
}

impl Principal {
    /// A caller whose grants reach every scope of the tenant: the single-user install.
    pub fn new(tenant_id: impl Into<Arc<str>>, defaults: IdentityFields) -> Self {
        Principal {
            tenant_id: tenant_id.into(),
            defaults: Arc::new(defaults),
            grants: Arc::default(),
            max_id_bytes: DEFAULT_MAX_ID_BYTES,
        }
    }

    /// The same caller, holding only `grants`.
    pub fn with_grants(mut self, grants: Grants) -> Self {
        self.grants = Arc::new(grants);
        self
    }

    /// The same caller with identity fields limited to `max_id_bytes`.
    pub fn with_max_id_bytes(mut self, max_id_bytes: usize) -> Self {
        self.max_id_bytes = max_id_bytes;
        self
    }

    /// The identity of one call: `requested` fields win over the configured defaults, which
    /// win over the one user, team or org a token's grants may hold; empty strings count as
    /// absent. The tenant is always the principal's.
    ///
    /// This is the one place every tool, resource and REST route builds an identity, so the
    /// rules on identity fields are checked here, for all of them alike: a field longer than
    /// `memory.max_id_bytes` is refused with its name, and a `user_id`, `team_id` or `org_id`
    /// the token's grants do not hold is refused naming the scope and the claim.
    pub fn identity(&self, requested: &IdentityFields) -> Result<Identity, MemoryError> {
        let mut fields = requested.or(&self.defaults);
        for (layer, field) in [
            (Layer::User, &mut fields.user_id),
            (Layer::Team, &mut fields.team_id),
            (Layer::Org, &mut fields.org_id),
        ] {
            if field.is_none() {
                *field = self.grants.default_scope(layer).map(str::to_owned);
            }
        }
        for (name, value) in fields.named() {
            if let Some(value) = value
                && value.len() > self.max_id_bytes
            {
                return Err(MemoryError::invalid(format!(
                    "`{name}` is {} bytes; the limit is {} bytes (memory.max_id_bytes): pass a \
                     shorter id",
                    value.len(),
                    self.max_id_bytes
                )));
            }
        }
        for (layer, field) in [
            (Layer::User, &fields.user_id),
            (Layer::Team, &fields.team_id),
            (Layer::Org, &fields.org_id),
        ] {
            if let Some(scope_id) = field {
                self.grants.check(layer, scope_id)?;
            }
        }
        Ok(Identity {
            tenant_id: self.tenant_id.to_string(),
            agent_id: fields.agent_id,
            user_id: fields.user_id,
            session_id: fields.session_id,
            project_id: fields.project_id,
            team_id: fields.team_id,
            org_id: fields.org_id,
            grants: self.grants.clone(),
        })
    }
}

/// Why a request was not authenticated. The messages go to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error(
        "missing credentials: send `Authorization: Bearer <token>` (or `X-API-Key: <token>` for the REST API)"
    )]
    Missing,
    #[error("invalid token: it matches no configured token; check the token or ask the operator")]
    Invalid,
    #[error(
        "conflicting credentials: the request carries different tokens (in `Authorization` and \
         `X-API-Key`, or repeated headers); send exactly one"
    )]
    Conflicting,
}

struct TokenEntry {
    digest: [u8; 32],
    principal: Principal,
}

/// Maps presented tokens to principals.
pub struct Authenticator {
    tokens: Vec<TokenEntry>,
    /// Used when no token is configured (only allowed on loopback, see
    /// [`crate::config::Config::check_exposure`]).
    default_principal: Principal,
}

impl Authenticator {
    /// Principals whose identity fields are limited to `max_id_bytes` each.
    pub fn from_config(config: &AuthConfig, max_id_bytes: usize) -> Self {
        let principal = |tenant: &str, defaults: &IdentityFields| {
            Principal::new(tenant, defaults.clone()).with_max_id_bytes(max_id_bytes)
        };
        let tokens = config
            .tokens
            .iter()
            .map(|token| TokenEntry {
                digest: Sha256::digest(token.token.as_bytes()).into(),
                principal: principal(&token.tenant, &token.defaults).with_grants(token.grants()),
            })
            .collect();
        Authenticator {
            tokens,
            default_principal: principal(&config.default_tenant, &config.defaults),
        }
    }

    /// Whether requests must present a token.
    pub fn requires_token(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// The principal of stdio sessions and of tokenless loopback servers.
    pub fn default_principal(&self) -> &Principal {
        &self.default_principal
    }

    /// Resolves a presented token. Without configured tokens every caller is the default
    /// principal. The comparison hashes the token (so lengths do not leak) and visits every
    /// configured token whatever matches (so timing does not reveal which one).
    pub fn authenticate(&self, presented: Option<&str>) -> Result<Principal, AuthError> {
        if self.tokens.is_empty() {
            return Ok(self.default_principal.clone());
        }
        let presented = presented.map(str::trim).filter(|token| !token.is_empty());
        let Some(presented) = presented else {
            return Err(AuthError::Missing);
        };
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = subtle::Choice::from(0);
        let mut index = 0u32;
        for (position, entry) in self.tokens.iter().enumerate() {
            let matches = digest.ct_eq(&entry.digest);
            found |= matches;
            index = u32::conditional_select(&index, &(position as u32), matches);
        }
        if bool::from(found) {
            self.tokens
                .get(index as usize)
                .map(|entry| entry.principal.clone())
                .ok_or(AuthError::Invalid)
        } else {
            Err(AuthError::Invalid)
        }
    }
}

/// The one token a request presents, from its `Authorization: Bearer …` and `X-API-Key`
/// header values. The same token in several headers counts once; different tokens are refused
/// rather than answered as whichever is read first.
pub fn presented_token<'a>(
    authorization: impl IntoIterator<Item = &'a str>,
    api_keys: impl IntoIterator<Item = &'a str>,
) -> Result<Option<&'a str>, AuthError> {
    let bearers = authorization.into_iter().filter_map(bearer_token);
    let mut presented = None;
    for token in bearers.chain(api_keys.into_iter().map(str::trim)) {
        if token.is_empty() {
            continue;
        }
        match presented {
            None => presented = Some(token),
            Some(earlier) if earlier == token => {}
            Some(_) => return Err(AuthError::Conflicting),
        }
    }
    Ok(presented)
}

/// The token of an `Authorization: Bearer …` header value.
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

#[cfg(test)]
mod tests {
    use aeterna_memory::Claim;

    use super::*;
    use crate::config::TokenConfig;

    fn authenticator() -> Authenticator {
        Authenticator::from_config(
            &AuthConfig {
                tokens: vec![
                    TokenConfig {
                        token: "alpha-token".into(),
                        tenant: "alpha".into(),
                        defaults: IdentityFields {
                            user_id: Some("ann".into()),
                            ..Default::default()
                        },
                        ..Default::default()
                    },
                    TokenConfig {
                        token: "beta-token".into(),
                        tenant: "beta".into(),
                        defaults: IdentityFields::default(),
                        ..Default::default()
                    },
                ],
                ..AuthConfig::default()
            },
            DEFAULT_MAX_ID_BYTES,
        )
    }

    #[test]
    fn tokens_map_to_their_tenants() {
        let auth = authenticator();
        assert_eq!(
            &*auth
                .authenticate(Some("alpha-token"))
                .expect("alpha")
                .tenant_id,
            "alpha"
        );
        assert_eq!(
            &*auth
                .authenticate(Some("beta-token"))
                .expect("beta")
                .tenant_id,
            "beta"
        );
        assert_eq!(
            auth.authenticate(Some("alpha-tokeN")),
            Err(AuthError::Invalid)
        );
        assert_eq!(auth.authenticate(Some("alpha")), Err(AuthError::Invalid));
        assert_eq!(auth.authenticate(None), Err(AuthError::Missing));
        assert_eq!(auth.authenticate(Some("  ")), Err(AuthError::Missing));
    }

    #[test]
    fn without_tokens_everyone_is_the_default_tenant() {
        let auth = Authenticator::from_config(&AuthConfig::default(), DEFAULT_MAX_ID_BYTES);
        assert!(!auth.requires_token());
        assert_eq!(
            &*auth.authenticate(None).expect("default").tenant_id,
            "default"
        );
        assert_eq!(
            &*auth
                .authenticate(Some("anything"))
                .expect("default")
                .tenant_id,
            "default"
        );
    }

    #[test]
    fn arguments_override_defaults_but_never_the_tenant() {
        let principal = authenticator()
            .authenticate(Some("alpha-token"))
            .expect("alpha");
        let who = principal
            .identity(&IdentityFields {
                session_id: Some("s1".into()),
                user_id: Some(" ".into()),
                ..Default::default()
            })
            .expect("valid identity");
        assert_eq!(who.tenant_id, "alpha");
        assert_eq!(who.user_id.as_deref(), Some("ann"));
        assert_eq!(who.session_id.as_deref(), Some("s1"));
        assert_eq!(who.project_id, None);
    }

    #[test]
    fn arguments_narrow_to_the_grants_and_a_sole_claim_is_the_default() {
        let grants = Grants {
            users: Claim::of(["ann"]),
            teams: Claim::of(["web", "core"]),
            orgs: Claim::of(["acme"]),
            approves: Claim::none(),
        };
        let principal = Principal::new("alpha", IdentityFields::default()).with_grants(grants);
        let who = principal
            .identity(&IdentityFields::default())
            .expect("defaults");
        assert_eq!(who.user_id.as_deref(), Some("ann"));
        assert_eq!(who.org_id.as_deref(), Some("acme"));
        assert_eq!(who.team_id, None, "two teams: neither is the default");
        assert_eq!(*who.grants, *principal.grants);
        let who = principal
            .identity(&IdentityFields {
                team_id: Some("core".into()),
                ..Default::default()
            })
            .expect("a team the token holds");
        assert_eq!(who.team_id.as_deref(), Some("core"));
        let refused = principal
            .identity(&IdentityFields {
                team_id: Some("billing".into()),
                ..Default::default()
            })
            .expect_err("a team the token does not hold");
        assert!(matches!(refused, MemoryError::Forbidden(_)), "{refused}");

        // The tokenless principal names any scope.
        let anyone = Principal::new("default", IdentityFields::default());
        assert!(
            anyone
                .identity(&IdentityFields {
                    team_id: Some("billing".into()),
                    user_id: Some("zoe".into()),
                    ..Default::default()
                })
                .is_ok()
        );
    }

    #[test]
    fn identity_fields_over_the_limit_are_refused_by_name() {
        let principal = Principal::new("alpha", IdentityFields::default()).with_max_id_bytes(8);
        let at_limit = principal.identity(&IdentityFields {
            project_id: Some("12345678".into()),
            ..Default::default()
        });
        assert!(at_limit.is_ok());
        let error = principal
            .identity(&IdentityFields {
                project_id: Some("123456789".into()),
                ..Default::default()
            })
            .expect_err("a 9-byte id over an 8-byte limit");
        assert!(
            error.to_string().contains("`project_id` is 9 bytes"),
            "{error}"
        );
    }

    #[test]
    fn one_token_in_several_headers_counts_once_and_two_are_refused() {
        assert_eq!(presented_token(["Bearer a"], ["a"]), Ok(Some("a")));
        assert_eq!(presented_token([], [" a "]), Ok(Some("a")));
        assert_eq!(presented_token(["Basic x"], ["a"]), Ok(Some("a")));
        assert_eq!(presented_token([], []), Ok(None));
        assert_eq!(
            presented_token(["Bearer a"], ["b"]),
            Err(AuthError::Conflicting)
        );
        assert_eq!(
            presented_token(["Bearer a", "Bearer b"], []),
            Err(AuthError::Conflicting)
        );
        assert_eq!(presented_token([], ["a", "b"]), Err(AuthError::Conflicting));
    }

    #[test]
    fn bearer_header_parsing() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
    }
}
