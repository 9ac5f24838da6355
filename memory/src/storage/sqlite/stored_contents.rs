//! [`StoredContents`]: which (tenant, scope, content hash) triples may already be stored, so that
//! an add of new content skips the duplicate lookup in SQLite.
//!
//! Every add of one record first asks the record store for a duplicate, to spare embedding
//! content that is already stored; almost always there is none, and that lookup was a round trip
//! to a connection's worker thread, plus the pool's check of the connection on its return. This
//! set answers "certainly not stored" in memory. It holds a 64-bit fingerprint per triple and
//! is only ever added to — at open from every record, then after each committed insert or
//! content change — so a fingerprint absent from it means the content is not stored. A present
//! fingerprint (stored, since deleted, or a collision) only means "look it up", so deletes need
//! no upkeep and a collision costs one query, never a wrong answer. Like the lexical index it
//! relies on this process being the database's only writer (the data dir's lock).
//!
//! Memory: one `u64` per record stored since open (the set is rebuilt at each start).

use std::hash::BuildHasher;

use foldhash::HashSet;
use parking_lot::RwLock;

use crate::model::Scope;

#[derive(Debug, Default)]
pub(super) struct StoredContents {
    /// Per-process random seed: fingerprints cannot be chosen to collide from outside.
    hasher: foldhash::quality::RandomState,
    fingerprints: RwLock<HashSet<u64>>,
}

impl StoredContents {
    fn fingerprint(&self, tenant_id: &str, scope: &Scope, content_hash: &str) -> u64 {
        self.hasher.hash_one((
            tenant_id,
            scope.layer.as_str(),
            scope.scope_id.as_str(),
            content_hash,
        ))
    }

    /// Records that `content_hash` is stored in `scope` of `tenant_id`.
    pub fn insert(&self, tenant_id: &str, scope: &Scope, content_hash: &str) {
        let fingerprint = self.fingerprint(tenant_id, scope, content_hash);
        self.fingerprints.write().insert(fingerprint);
    }

    /// `false` when `content_hash` is certainly not stored in `scope` of `tenant_id`.
    pub fn may_contain(&self, tenant_id: &str, scope: &Scope, content_hash: &str) -> bool {
        let fingerprint = self.fingerprint(tenant_id, scope, content_hash);
        self.fingerprints.read().contains(&fingerprint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Layer;

    #[test]
    fn only_inserted_triples_may_be_contained() {
        let contents = StoredContents::default();
        let project = Scope::new(Layer::Project, "aeterna".to_string());
        let session = Scope::new(Layer::Session, "aeterna".to_string());
        contents.insert("acme", &project, "hash-1");

        assert!(contents.may_contain("acme", &project, "hash-1"));
        assert!(!contents.may_contain("acme", &project, "hash-2"));
        assert!(!contents.may_contain("acme", &session, "hash-1"));
        assert!(!contents.may_contain("other", &project, "hash-1"));
    }

    #[test]
    fn parts_cannot_run_into_each_other() {
        let contents = StoredContents::default();
        let scope = Scope::new(Layer::Project, "ab".to_string());
        contents.insert("t", &scope, "c");

        let shifted = Scope::new(Layer::Project, "a".to_string());
        assert!(!contents.may_contain("t", &shifted, "bc"));
    }
}
