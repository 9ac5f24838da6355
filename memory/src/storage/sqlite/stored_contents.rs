//! [`StoredContents`]: which (tenant, scope, content hash) triples are stored, so that an add
//! of new content skips the duplicate lookup in SQLite.
//!
//! Every add of one record first asks the record store for a duplicate, to spare embedding
//! content that is already stored; almost always there is none, and that lookup was a round trip
//! to a connection's worker thread, plus the pool's check of the connection on its return. This
//! set answers "not stored" in memory. It holds a 64-bit fingerprint per stored triple — filled
//! at open from every record, added to after each committed insert or content change, removed
//! from after a delete or a content change (the unique index allows one record per triple) — so
//! it is as large as the store, whatever clients do. A present fingerprint is looked up in
//! SQLite, so a collision never gives a wrong answer; the one cost of a collision is on removal
//! (the other triple's fingerprint goes too), after which that content is embedded again when
//! re-added and then found a duplicate by the insert itself. Like the lexical index it relies
//! on this process being the database's only writer (the data dir's lock).

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

    /// Records that `content_hash` is no longer stored in `scope` of `tenant_id`.
    pub fn remove(&self, tenant_id: &str, scope: &Scope, content_hash: &str) {
        let fingerprint = self.fingerprint(tenant_id, scope, content_hash);
        self.fingerprints.write().remove(&fingerprint);
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

        contents.remove("acme", &project, "hash-1");
        assert!(!contents.may_contain("acme", &project, "hash-1"));
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
