//! Small integer ids for repeated values (scopes, kinds, tags), shared by the in-memory
//! indexes.

use std::collections::HashMap;
use std::hash::Hash;

/// Gives small integer ids to repeated values (kinds, tags).
#[derive(Debug)]
pub(crate) struct Interner<T> {
    ids: HashMap<T, u32>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            ids: HashMap::new(),
        }
    }
}

impl<T: Hash + Eq + Clone> Interner<T> {
    pub fn intern(&mut self, value: &T) -> u32 {
        if let Some(id) = self.ids.get(value) {
            return *id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(value.clone(), id);
        id
    }

    pub fn get<Q>(&self, value: &Q) -> Option<u32>
    where
        T: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.ids.get(value).copied()
    }
}
