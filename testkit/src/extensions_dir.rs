//! A temporary extensions directory holding exactly the components a test wants.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// A temporary directory of `<name>.wasm` files with optional `<name>.toml` manifests, as the
/// host's `load_dir` expects. Deleted when dropped.
pub struct ExtensionsDir {
    dir: tempfile::TempDir,
}

impl ExtensionsDir {
    /// An empty directory.
    pub fn new() -> anyhow::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("aeterna-extensions-")
            .tempdir()
            .context("cannot create a temporary extensions directory")?;
        Ok(Self { dir })
    }

    /// A directory with every sample extension, each with its example manifest.
    pub fn with_all_samples() -> anyhow::Result<Self> {
        let dir = Self::new()?;
        let samples = crate::sample_extensions()?;
        let mut found = false;
        for entry in std::fs::read_dir(samples)
            .with_context(|| format!("cannot list {}", samples.display()))?
        {
            let path = entry?.path();
            if path.extension().is_some_and(|ext| ext == "wasm") {
                let stem = file_stem(&path)?;
                dir.add_sample(&stem)?;
                found = true;
            }
        }
        anyhow::ensure!(found, "no sample components in {}", samples.display());
        Ok(dir)
    }

    /// The directory, for `ExtensionHost::load_dir`.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies `wasm` in as `<file>.wasm`, with `manifest` (TOML text) as `<file>.toml` if given.
    /// Returns the path of the copied component.
    pub fn add(&self, file: &str, wasm: &Path, manifest: Option<&str>) -> anyhow::Result<PathBuf> {
        let destination = self.path().join(format!("{file}.wasm"));
        std::fs::copy(wasm, &destination).with_context(|| {
            format!(
                "cannot copy {} to {}",
                wasm.display(),
                destination.display()
            )
        })?;
        let manifest_path = self.path().join(format!("{file}.toml"));
        match manifest {
            Some(text) => std::fs::write(&manifest_path, text)
                .with_context(|| format!("cannot write {}", manifest_path.display()))?,
            None => {
                if manifest_path.exists() {
                    std::fs::remove_file(&manifest_path)?;
                }
            }
        }
        Ok(destination)
    }

    /// Adds the built sample `name` (crate name or file stem) with its example manifest from
    /// `sample-extensions/<name>/`.
    pub fn add_sample(&self, name: &str) -> anyhow::Result<PathBuf> {
        let manifest = match crate::sample_manifest(name) {
            Some(path) => Some(
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
            ),
            None => None,
        };
        self.add_sample_inner(name, manifest.as_deref())
    }

    /// Adds the built sample `name` with `manifest` instead of its example manifest.
    pub fn add_sample_with(&self, name: &str, manifest: &str) -> anyhow::Result<PathBuf> {
        self.add_sample_inner(name, Some(manifest))
    }

    /// Adds the built test guest `guest` (from `tests/guests`) as `<file>.wasm`.
    pub fn add_test_guest(
        &self,
        file: &str,
        guest: &str,
        manifest: Option<&str>,
    ) -> anyhow::Result<PathBuf> {
        self.add(file, &crate::test_guest(guest)?, manifest)
    }

    /// Adds the JavaScript or Python sample `name` (`sample-extensions/<name>`), built from
    /// source, with its example manifest. `Ok(None)` when its toolchain cannot be installed here
    /// (the reason was printed): the caller skips.
    pub fn add_script_sample(&self, name: &str) -> anyhow::Result<Option<PathBuf>> {
        let Some(wasm) = crate::any_language::script_sample(name)? else {
            return Ok(None);
        };
        let stem = name.replace('-', "_");
        let manifest = crate::sample_manifest(name)
            .map(|path| {
                std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))
            })
            .transpose()?;
        self.add(&stem, &wasm, manifest.as_deref()).map(Some)
    }

    /// Writes arbitrary bytes as `<file>` (for broken components and manifests).
    pub fn write(&self, file: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
        let path = self.path().join(file);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }

    fn add_sample_inner(&self, name: &str, manifest: Option<&str>) -> anyhow::Result<PathBuf> {
        let wasm = crate::sample(name)?;
        let stem = file_stem(&wasm)?;
        self.add(&stem, &wasm, manifest)
    }
}

fn file_stem(path: &Path) -> anyhow::Result<String> {
    path.file_stem()
        .and_then(|stem| stem.to_str())
        .map(str::to_owned)
        .with_context(|| format!("{} has no UTF-8 file stem", path.display()))
}
