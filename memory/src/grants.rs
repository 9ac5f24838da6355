//! What a caller's credentials prove beyond the tenant: the users, teams and orgs it may act
//! as, and the scopes where it may decide promotions.
//!
//! The server builds [`Grants`] from the token that authenticated the call, and every
//! [`Identity`](crate::Identity) carries them. Two rules follow from them:
//! - an identity field (`user_id`, `team_id`, `org_id`) may only name a scope the grants
//!   hold ([`Grants::check`], applied where the server builds the identity);
//! - an object reached by id (a memory, a note, a loop) is visible only when the grants
//!   reach its scope ([`Grants::reaches`]), whatever the call's own identity fields say.
//!
//! The agent, session and project layers are not claims: within a tenant, any caller may
//! name them. The default grants reach everything: that is the single-user install (no tokens,
//! loopback) and the system acting on its own behalf.

use std::collections::BTreeSet;
use std::fmt;

use crate::error::MemoryError;
use crate::model::{Layer, Scope};

/// The ids of one kind a caller holds: every id, or exactly these (none when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Claim {
    #[default]
    Any,
    Only(BTreeSet<String>),
}

impl Claim {
    /// A claim of exactly `ids`; `*` among them means every id.
    pub fn of<I: IntoIterator<Item = S>, S: Into<String>>(ids: I) -> Self {
        let ids: BTreeSet<String> = ids.into_iter().map(Into::into).collect();
        if ids.contains("*") {
            Claim::Any
        } else {
            Claim::Only(ids)
        }
    }

    /// A claim of nothing.
    pub fn none() -> Self {
        Claim::Only(BTreeSet::new())
    }

    pub fn allows(&self, id: &str) -> bool {
        match self {
            Claim::Any => true,
            Claim::Only(ids) => ids.contains(id),
        }
    }

    /// The one id this claim holds, when it holds exactly one: the default for a call that
    /// leaves the field out.
    pub fn sole(&self) -> Option<&str> {
        match self {
            Claim::Only(ids) if ids.len() == 1 => ids.first().map(String::as_str),
            _ => None,
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::Any => f.write_str("any"),
            Claim::Only(ids) if ids.is_empty() => f.write_str("none"),
            Claim::Only(ids) => {
                for (i, id) in ids.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{id}`")?;
                }
                Ok(())
            }
        }
    }
}

/// What a caller may act as and approve. `Default` reaches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Grants {
    /// The users it may act as (`user_id`).
    pub users: Claim,
    /// The teams it may act as (`team_id`).
    pub teams: Claim,
    /// The organisations it may act as (`org_id`).
    pub orgs: Claim,
    /// The scopes where it holds the `approver` role, as `team:<id>`, `org:<id>` or
    /// `company:company` ([`Scope`]'s display).
    pub approves: Claim,
}

impl Grants {
    /// The claim that governs `layer`, with the identity field and configuration key that name
    /// it; `None` for layers any caller of the tenant may name.
    fn claim(&self, layer: Layer) -> Option<(&Claim, &'static str)> {
        match layer {
            Layer::User => Some((&self.users, "user")),
            Layer::Team => Some((&self.teams, "teams")),
            Layer::Org => Some((&self.orgs, "orgs")),
            Layer::Agent | Layer::Session | Layer::Project | Layer::Company => None,
        }
    }

    /// Whether these grants reach `layer`'s scope `scope_id`.
    pub fn reaches(&self, layer: Layer, scope_id: &str) -> bool {
        self.claim(layer)
            .is_none_or(|(claim, _)| claim.allows(scope_id))
    }

    /// Whether they reach every scope some call could need a check for: when they do, lookups by
    /// id need no extra read to find the object's scope.
    pub fn reach_everything(&self) -> bool {
        [&self.users, &self.teams, &self.orgs]
            .into_iter()
            .all(|claim| *claim == Claim::Any)
    }

    /// The id this caller acts as in `layer` when a call leaves the field out: the claim's only
    /// id, if it holds exactly one.
    pub fn default_scope(&self, layer: Layer) -> Option<&str> {
        self.claim(layer).and_then(|(claim, _)| claim.sole())
    }

    /// Ok when a call may name `scope_id` in `layer`; otherwise a refusal that names the
    /// scope, the claim that lacks it and what to do.
    pub fn check(&self, layer: Layer, scope_id: &str) -> Result<(), MemoryError> {
        match self.claim(layer) {
            Some((claim, key)) if !claim.allows(scope_id) => Err(MemoryError::Forbidden(format!(
                "`{field}` = `{scope_id}`: this token may not act for {layer} `{scope_id}` (its \
                 `{key}` claim holds {claim}); pass an id the token holds, or ask the operator \
                 to add `{scope_id}` to the token's `{key}` in [[auth.tokens]]",
                field = layer.scope_field(),
            ))),
            _ => Ok(()),
        }
    }

    /// Ok when the caller holds the `approver` role on `scope`; otherwise a refusal naming the
    /// scope and the missing role.
    pub fn check_approver(&self, scope: &Scope) -> Result<(), MemoryError> {
        let key = scope.to_string();
        if self.approves.allows(&key) {
            return Ok(());
        }
        Err(MemoryError::Forbidden(format!(
            "deciding a promotion into {} `{}` needs the `approver` role on `{key}`; this token \
             holds it on {}: ask the operator to add `{key}` to the token's `roles.approver` in \
             [[auth.tokens]]",
            scope.layer, scope.scope_id, self.approves
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team_a() -> Grants {
        Grants {
            users: Claim::of(["alice"]),
            teams: Claim::of(["a"]),
            orgs: Claim::none(),
            approves: Claim::of(["team:a"]),
        }
    }

    #[test]
    fn claims_allow_what_they_hold_and_star_means_any() {
        assert!(Claim::of(["a", "b"]).allows("b"));
        assert!(!Claim::of(["a"]).allows("b"));
        assert!(!Claim::none().allows("a"));
        assert_eq!(Claim::of(["a", "*"]), Claim::Any);
        assert_eq!(Claim::of(["a"]).sole(), Some("a"));
        assert_eq!(Claim::of(["a", "b"]).sole(), None);
        assert_eq!(Claim::Any.sole(), None);
    }

    #[test]
    fn grants_govern_user_team_and_org_only() {
        let grants = team_a();
        assert!(grants.reaches(Layer::Team, "a"));
        assert!(!grants.reaches(Layer::Team, "b"));
        assert!(!grants.reaches(Layer::Org, "x"));
        assert!(!grants.reaches(Layer::User, "bob"));
        for layer in [Layer::Agent, Layer::Session, Layer::Project, Layer::Company] {
            assert!(grants.reaches(layer, "anything"), "{layer}");
        }
        assert!(!grants.reach_everything());
        assert!(Grants::default().reach_everything());
        assert_eq!(grants.default_scope(Layer::Team), Some("a"));
        assert_eq!(grants.default_scope(Layer::Org), None);
    }

    #[test]
    fn refusals_name_the_scope_and_the_claim() {
        let grants = team_a();
        let refusal = grants
            .check(Layer::Team, "b")
            .expect_err("team b")
            .to_string();
        assert!(refusal.contains("`team_id` = `b`"), "{refusal}");
        assert!(refusal.contains("`teams` claim holds `a`"), "{refusal}");
        let refusal = grants
            .check(Layer::Org, "x")
            .expect_err("no org")
            .to_string();
        assert!(refusal.contains("`orgs` claim holds none"), "{refusal}");
        assert!(grants.check(Layer::Team, "a").is_ok());

        assert!(grants.check_approver(&Scope::new(Layer::Team, "a")).is_ok());
        let refusal = grants
            .check_approver(&Scope::new(Layer::Org, "x"))
            .expect_err("not an approver there")
            .to_string();
        assert!(refusal.contains("`approver` role on `org:x`"), "{refusal}");
    }
}
