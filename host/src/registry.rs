//! The set of loaded extensions, as immutable snapshots.
//!
//! A chain run takes the current snapshot (an `Arc`) once and uses it to the end, so loading,
//! unloading and reloading never disturb runs in flight: they build a new snapshot and swap it in.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use serde::Serialize;

use crate::bindings::ExtensionPre;
use crate::config::Limits;
use crate::error::LoadError;
use crate::health::Health;
use crate::imports::StoreData;
use crate::manifest::FailurePolicy;
use crate::types::{Hook, Registration};

/// A compiled, linked component: what loading the same bytes again can reuse.
#[derive(Clone)]
pub(crate) struct Linked {
    /// SHA-256 of the component's bytes.
    pub(crate) digest: [u8; 32],
    pub(crate) pre: ExtensionPre<StoreData>,
}

/// A loaded, validated extension, ready to instantiate.
pub(crate) struct LoadedExtension {
    pub(crate) id: Arc<str>,
    pub(crate) file: PathBuf,
    /// Orders loads of the same file: a load that started earlier never replaces a later one.
    pub(crate) generation: u64,
    pub(crate) manifest: Option<PathBuf>,
    pub(crate) registration: Registration,
    pub(crate) limits: Limits,
    pub(crate) failure: FailurePolicy,
    pub(crate) config: Arc<[(String, String)]>,
    pub(crate) linked: Linked,
    pub(crate) health: Mutex<Health>,
}

impl LoadedExtension {
    pub(crate) fn info(&self) -> ExtensionInfo {
        ExtensionInfo {
            registration: self.registration.clone(),
            file: self.file.clone(),
            manifest: self.manifest.clone(),
            failure: self.failure,
            limits: self.limits,
            config: self.config.to_vec(),
        }
    }
}

/// What the host knows about a loaded extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtensionInfo {
    /// The registration, after the manifest's `id` and `priority` overrides.
    #[serde(flatten)]
    pub registration: Registration,
    pub file: PathBuf,
    pub manifest: Option<PathBuf>,
    pub failure: FailurePolicy,
    /// The limits in force (the operator's, lowered by the manifest).
    pub limits: Limits,
    /// The manifest's `[config]` as the guest sees it.
    pub config: Vec<(String, String)>,
}

/// One snapshot of the loaded extensions, in execution order: priority DESC, then id ASC.
#[derive(Default)]
pub(crate) struct Registry {
    ordered: Vec<Arc<LoadedExtension>>,
    /// The directory of the last whole-directory load, for `reload_all`.
    pub(crate) dir: Option<PathBuf>,
}

impl Registry {
    pub(crate) fn new(mut extensions: Vec<Arc<LoadedExtension>>, dir: Option<PathBuf>) -> Self {
        extensions.sort_by(|a, b| {
            b.registration
                .priority
                .cmp(&a.registration.priority)
                .then_with(|| a.id.cmp(&b.id))
        });
        Self {
            ordered: extensions,
            dir,
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<LoadedExtension>> {
        self.ordered.iter()
    }

    /// The extensions handling `hook`, in execution order.
    pub(crate) fn handling(&self, hook: Hook) -> impl Iterator<Item = &Arc<LoadedExtension>> {
        self.ordered
            .iter()
            .filter(move |ext| ext.registration.handles(hook))
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Arc<LoadedExtension>> {
        self.ordered.iter().find(|ext| &*ext.id == id)
    }

    /// The extension loaded from `file`, if any.
    pub(crate) fn by_file(&self, file: &std::path::Path) -> Option<&Arc<LoadedExtension>> {
        self.ordered.iter().find(|ext| ext.file == file)
    }

    /// A loaded component with exactly these bytes, to reuse instead of compiling.
    pub(crate) fn linked(&self, digest: &[u8; 32]) -> Option<Linked> {
        self.ordered
            .iter()
            .find(|ext| &ext.linked.digest == digest)
            .map(|ext| ext.linked.clone())
    }

    /// A snapshot with `extension` added, replacing one loaded from the same file or with the
    /// same id. An id already used by another file is an error.
    pub(crate) fn with(&self, extension: Arc<LoadedExtension>) -> Result<Registry, LoadError> {
        if let Some(other) = self
            .ordered
            .iter()
            .find(|ext| ext.id == extension.id && ext.file != extension.file)
        {
            return Err(LoadError::DuplicateId {
                id: extension.id.to_string(),
                other: other.file.clone(),
            });
        }
        let mut extensions: Vec<_> = self
            .ordered
            .iter()
            .filter(|ext| ext.file != extension.file)
            .cloned()
            .collect();
        extensions.push(extension);
        Ok(Registry::new(extensions, self.dir.clone()))
    }

    /// A snapshot without the extension `id`, or `None` if it is not loaded.
    pub(crate) fn without(&self, id: &str) -> Option<Registry> {
        self.get(id)?;
        let extensions = self
            .ordered
            .iter()
            .filter(|ext| &*ext.id != id)
            .cloned()
            .collect();
        Some(Registry::new(extensions, self.dir.clone()))
    }
}
