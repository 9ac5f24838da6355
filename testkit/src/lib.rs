//! Test support shared by Aeterna's crates: real guest components, built from source, and the
//! storage profile a suite runs against ([`profile`]).
//!
//! Tests and benches never use checked-in `.wasm` files: they build the guest workspaces for
//! `wasm32-wasip2` the first time a process asks, then reuse the result.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! use aeterna_testkit::ExtensionsDir;
//!
//! // Every sample, each with its example manifest:
//! let all = ExtensionsDir::with_all_samples()?;
//! // Or exactly the set a test wants:
//! let dir = ExtensionsDir::new()?;
//! dir.add_sample("secret-redactor")?;
//! dir.add_sample_with("output-compactor", "[config]\nmax_tokens = 100\n")?;
//! dir.add_test_guest("probe", "probe", Some("priority = 5"))?;
//! // host.load_dir(dir.path()) …
//! # Ok(()) }
//! ```
//!
//! # How guests are built
//!
//! [`sample_extensions`] and [`test_guests`] run, once per process,
//!
//! ```text
//! cargo build --release --locked --target wasm32-wasip2 --manifest-path <workspace>/Cargo.toml
//! ```
//!
//! with `CARGO_TARGET_DIR=<target>/wasm-guests`, where `<target>` is `$CARGO_TARGET_DIR` or
//! `<repo>/target`. The separate target directory means the inner build never waits for the
//! outer cargo's lock (which is held while tests are being built). `RUSTFLAGS` and its
//! variants are cleared, since flags meant for the host (coverage, `target-cpu=native`) break a
//! wasm build. The components of each workspace are then copied to their own directory,
//! `<target>/wasm-guests/<name>/`, so a directory of samples never contains a hostile test guest.
//!
//! A missing `wasm32-wasip2` target or a failed build is an error that says what to do (and
//! includes cargo's output).
//!
//! The JavaScript and Python samples are built by [`any_language`] with componentize-js and
//! componentize-py, once per content, and are skipped visibly where those toolchains cannot be
//! installed.

pub mod any_language;
mod build;
mod extensions_dir;
pub mod git;
pub mod profile;
pub mod state_store;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use build::{BuiltGuests, build_guest_workspace};
pub use extensions_dir::ExtensionsDir;
pub use git::git;

/// The repository root (the directory of the root `Cargo.toml`).
pub fn repo_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The cargo target directory of the outer build: `$CARGO_TARGET_DIR`, or `<repo>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_relative() {
                repo_root().join(dir)
            } else {
                dir
            }
        }
        _ => repo_root().join("target"),
    }
}

/// Where guest workspaces are built: `<target>/wasm-guests`.
pub fn guests_target_dir() -> PathBuf {
    target_dir().join("wasm-guests")
}

/// Builds `sample-extensions/` (once per process) and returns the directory holding its
/// components: `secret_redactor.wasm`, `todo_tags.wasm`, …
pub fn sample_extensions() -> anyhow::Result<&'static Path> {
    static BUILT: OnceLock<Result<BuiltGuests, String>> = OnceLock::new();
    built_once(&BUILT, "sample-extensions", "sample-extensions")
}

/// Builds `tests/guests/` (once per process) and returns the directory holding its components
/// (the host's test guests, hostile ones included).
pub fn test_guests() -> anyhow::Result<&'static Path> {
    static BUILT: OnceLock<Result<BuiltGuests, String>> = OnceLock::new();
    built_once(&BUILT, "tests/guests", "test-guests")
}

/// The built sample `name`, by crate name (`secret-redactor`) or file stem (`secret_redactor`).
pub fn sample(name: &str) -> anyhow::Result<PathBuf> {
    component_in(sample_extensions()?, name)
}

/// The built test guest `name`, by crate name or file stem.
pub fn test_guest(name: &str) -> anyhow::Result<PathBuf> {
    component_in(test_guests()?, name)
}

/// The example manifest of sample `name`: `sample-extensions/<name>/<stem>.toml`, if it exists.
pub fn sample_manifest(name: &str) -> Option<PathBuf> {
    let crate_dir = name.replace('_', "-");
    let stem = name.replace('-', "_");
    let path = repo_root()
        .join("sample-extensions")
        .join(crate_dir)
        .join(format!("{stem}.toml"));
    path.is_file().then_some(path)
}

fn built_once(
    cell: &'static OnceLock<Result<BuiltGuests, String>>,
    workspace: &str,
    label: &str,
) -> anyhow::Result<&'static Path> {
    let built = cell.get_or_init(|| {
        build_guest_workspace(&repo_root().join(workspace), label).map_err(|e| format!("{e:#}"))
    });
    match built {
        Ok(built) => Ok(&built.dir),
        Err(message) => Err(anyhow::anyhow!("{message}")),
    }
}

/// `<dir>/<name>.wasm`, trying `-` → `_` (libraries' file names use `_`; binaries keep `-`).
fn component_in(dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
    let candidates = [name.to_owned(), name.replace('-', "_")];
    candidates
        .iter()
        .map(|stem| dir.join(format!("{stem}.wasm")))
        .find(|path| path.is_file())
        .ok_or_else(|| {
            let available: Vec<String> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|file| file.ends_with(".wasm"))
                .collect();
            anyhow::anyhow!(
                "no component `{name}` in {}; available: {}",
                dir.display(),
                available.join(", ")
            )
        })
}
