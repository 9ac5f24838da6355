//! On-disk cache of precompiled components, so that a restart does not recompile.
//!
//! An entry is `<sha256 of the wasm>-<engine compatibility hash>.cwasm`: a changed component or
//! an engine with other settings (or another wasmtime version) simply misses. Entries are written
//! to a temporary file and renamed into place, so readers never see a partial entry. An entry
//! that fails to deserialize (truncated, corrupted, foreign) is recompiled and overwritten.

use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::error::LoadError;

/// Counters of the compile cache since the host started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Components loaded from a cache entry.
    pub hits: u64,
    /// Components compiled (no cache, no entry, or an unusable entry).
    pub compiles: u64,
    /// Entries that existed but could not be used and were recompiled.
    pub rejected_entries: u64,
    /// Entries that could not be written (the component still loaded).
    pub write_errors: u64,
}

pub(crate) struct ComponentCache {
    dir: Option<PathBuf>,
    engine_hash: String,
    hits: AtomicU64,
    compiles: AtomicU64,
    rejected_entries: AtomicU64,
    write_errors: AtomicU64,
}

impl ComponentCache {
    pub(crate) fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        let mut hasher = Sha256Hasher(Sha256::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
        let engine_hash = hex::encode(&hasher.0.finalize()[..8]);
        Self {
            dir,
            engine_hash,
            hits: AtomicU64::new(0),
            compiles: AtomicU64::new(0),
            rejected_entries: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
        }
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            compiles: self.compiles.load(Ordering::Relaxed),
            rejected_entries: self.rejected_entries.load(Ordering::Relaxed),
            write_errors: self.write_errors.load(Ordering::Relaxed),
        }
    }

    /// The cached component for the bytes whose SHA-256 is `digest`, if there is a usable
    /// entry. Blocking (file I/O); cheap next to compiling.
    pub(crate) fn cached(&self, engine: &Engine, digest: &[u8; 32]) -> Option<Component> {
        let entry = self.entry(digest)?;
        if !entry.exists() {
            return None;
        }
        // SAFETY: the cache directory belongs to the operator and is written only by this
        // module, with wasmtime's own serialization of a component compiled from exactly the
        // bytes whose hash names the file, by a compatible engine (the name holds the
        // compatibility hash). Deserialization still validates the artifact's header and layout
        // and fails, rather than loading, if the file is not such an artifact.
        match unsafe { Component::deserialize_file(engine, &entry) } {
            Ok(component) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(component)
            }
            Err(error) => {
                self.rejected_entries.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    entry = %entry.display(),
                    error = %format!("{error:#}"),
                    "unusable compile cache entry; recompiling"
                );
                None
            }
        }
    }

    /// Compiles `wasm` (whose SHA-256 is `digest`) and stores the result in the cache. Blocking
    /// and CPU-heavy: callers run it on a thread of its own.
    pub(crate) fn compile(
        &self,
        engine: &Engine,
        digest: &[u8; 32],
        wasm: &[u8],
    ) -> Result<Component, LoadError> {
        self.compiles.fetch_add(1, Ordering::Relaxed);
        let component = Component::new(engine, wasm)
            .map_err(|error| LoadError::Compile(format!("{error:#}")))?;
        if let (Some(dir), Some(entry)) = (&self.dir, self.entry(digest))
            && let Err(error) = write_entry(dir, &entry, &component)
        {
            self.write_errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                entry = %entry.display(),
                %error,
                "cannot write the compile cache entry; the component still loads"
            );
        }
        Ok(component)
    }

    fn entry(&self, digest: &[u8; 32]) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!(
            "{}-{}.cwasm",
            hex::encode(digest),
            self.engine_hash
        )))
    }
}

/// SHA-256 of a component's bytes: its identity for the cache and for reuse across loads.
pub(crate) fn digest(wasm: &[u8]) -> [u8; 32] {
    Sha256::digest(wasm).into()
}

fn write_entry(dir: &Path, entry: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component
        .serialize()
        .map_err(|error| std::io::Error::other(format!("{error:#}")))?;
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile_in(dir)?;
    std::io::Write::write_all(&mut temp.1, &bytes)?;
    temp.1.sync_all()?;
    std::fs::rename(&temp.0, entry).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp.0);
    })
}

/// A new file in `dir` with a name no other writer uses.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let unique = format!(
        ".tmp-{}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    );
    let path = dir.join(unique);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    Ok((path, file))
}

/// Feeds `Hash` output into SHA-256, for a digest that is stable across processes.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        0 // never called by `Hash::hash`; only the SHA-256 digest is used
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}
