//! Who is calling: bearer tokens map to tenants, compared in constant time.
//!
//! The tenant comes from authentication only, never from tool arguments. The other identity
//! fields (user, session, project, …) come from arguments, with defaults from the token's
//! configuration.

use std::sync::Arc;

use aeterna_memory::{Identity, MemoryError};
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::config::{AuthConfig, IdentityFields};

/// The longest identity field (`project_id`, `session_id`, …) a caller may pass unless the
/// operator configures `memory.max_id_bytes`.
pub const DEFAULT_MAX_ID_BYTES: usize = 256;

/// An authenticated caller: the tenant, its identity defaults and the identity limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub tenant_id: Arc<str>,
    pub defaults: Arc<IdentityFields>,
    max_id_bytes: usize,
}

impl Principal {
    pub fn new(tenant_id: impl Into<Arc<str>>, defaults: IdentityFields) -> Self {
        Principal {
            tenant_id: tenant_id.into(),
            defaults: Arc::new(defaults),
            max_id_bytes: DEFAULT_MAX_ID_BYTES,
        }
    }

    /// The same caller with identity fields limited to `max_id_bytes`.
    pub fn with_max_id_bytes(mut self, max_id_bytes: usize) -> Self {
        self.max_id_bytes = max_id_bytes;
        self
    }

    /// The identity of one call: `requested` fields win over the configured defaults; empty
    /// strings count as absent. The tenant is always the principal's.
    ///
    /// This is the one place every tool and REST route builds an identity, so the limits on
    /// identity fields are checked here, for all of them alike: a field longer than
    /// `memory.max_id_bytes` is refused with its name.
    pub fn identity(&self, requested: &IdentityFields) -> Result<Identity, MemoryError> {
        let fields = requested.or(&self.defaults);
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
        Ok(Identity {
            tenant_id: self.tenant_id.to_string(),
            agent_id: fields.agent_id,
            user_id: fields.user_id,
            session_id: fields.session_id,
            project_id: fields.project_id,
            team_id: fields.team_id,
            org_id: fields.org_id,
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
                principal: principal(&token.tenant, &token.defaults),
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

/// The token of an `Authorization: Bearer …` header value.
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

#[cfg(test)]
mod tests {
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
                    },
                    TokenConfig {
                        token: "beta-token".into(),
                        tenant: "beta".into(),
                        defaults: IdentityFields::default(),
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
    fn bearer_header_parsing() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
    }
}
