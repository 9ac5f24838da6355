//! Shared helpers of the host's integration tests: real components built from `tests/guests`,
//! copied into temporary extension directories with manifests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use aeterna_host::{CallContext, ExtensionHost, HostConfig, QuarantineConfig};

/// The path of the test guest `name` (crate name, e.g. `not-an-extension`), built from
/// `tests/guests` by the testkit on first use.
pub fn guest(name: &str) -> PathBuf {
    aeterna_testkit::test_guest(name).unwrap_or_else(|error| panic!("test guest {name}: {error:#}"))
}

/// A temporary extensions directory.
pub struct ExtDir {
    pub dir: tempfile::TempDir,
}

impl ExtDir {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Installs guest `guest` as `<file>.wasm` with `manifest` as `<file>.toml` (if non-empty).
    pub fn add(&self, file: &str, guest_name: &str, manifest: &str) -> PathBuf {
        let wasm = self.path().join(format!("{file}.wasm"));
        std::fs::copy(guest(guest_name), &wasm).expect("copy guest");
        if !manifest.is_empty() {
            std::fs::write(self.path().join(format!("{file}.toml")), manifest)
                .expect("write manifest");
        }
        wasm
    }

    /// A probe with its own id, priority and mark, plus extra `[config]` lines.
    pub fn probe(&self, id: &str, priority: i32, config: &str) -> PathBuf {
        self.add(
            id,
            "probe",
            &format!("id = \"{id}\"\npriority = {priority}\n[config]\nmark = \"{id}\"\n{config}\n"),
        )
    }

    /// A hostile extension in `mode`, with optional extra top-level manifest lines.
    pub fn hostile(&self, id: &str, mode: &str, extra: &str) -> PathBuf {
        self.add(
            id,
            "hostile",
            &format!("id = \"{id}\"\n{extra}\n[config]\nmode = \"{mode}\"\n"),
        )
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path().join(name);
        std::fs::write(&path, bytes).expect("write file");
        path
    }
}

/// A configuration for tests: short timeouts and cool-downs so nothing sleeps long, and a compile
/// cache shared by all tests (content-addressed, so sharing is safe) to keep them fast. Tests of
/// the cache itself use their own directory.
pub fn test_config() -> HostConfig {
    HostConfig {
        cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("aeterna-host-compile-cache")),
        limits: aeterna_host::Limits {
            timeout_ms: 2_000,
            ..Default::default()
        },
        quarantine: QuarantineConfig {
            threshold: 3,
            cooldown_ms: 300,
        },
        ..HostConfig::default()
    }
}

pub fn host() -> ExtensionHost {
    ExtensionHost::new(test_config()).expect("host starts")
}

pub fn ctx() -> CallContext {
    CallContext::new("tenant-a", "session-1")
}

/// Loads `dir` and asserts nothing was rejected.
pub async fn load_all(host: &ExtensionHost, dir: &ExtDir) {
    let report = host.load_dir(dir.path()).await.expect("directory loads");
    assert!(
        report.rejected.is_empty(),
        "unexpected rejections: {:?}",
        report
            .rejected
            .iter()
            .map(|(f, e)| format!("{}: {e}", f.display()))
            .collect::<Vec<_>>()
    );
}
