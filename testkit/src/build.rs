//! Building a guest workspace for `wasm32-wasip2`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// The target guests are built for.
pub const TARGET: &str = "wasm32-wasip2";

/// The components of one guest workspace.
#[derive(Debug, Clone)]
pub struct BuiltGuests {
    /// The directory holding exactly this workspace's `.wasm` files.
    pub dir: PathBuf,
    /// The components, sorted.
    pub components: Vec<PathBuf>,
}

/// Builds the cargo workspace at `workspace` for `wasm32-wasip2` (release, `--locked`) into
/// `<target>/wasm-guests`, and copies its components into `<target>/wasm-guests/<label>/`.
///
/// Not cached: [`sample_extensions`](crate::sample_extensions) and
/// [`test_guests`](crate::test_guests) call it once per process.
pub fn build_guest_workspace(workspace: &Path, label: &str) -> anyhow::Result<BuiltGuests> {
    check_target_installed()?;
    let manifest = workspace.join("Cargo.toml");
    if !manifest.is_file() {
        bail!("no guest workspace at {}", workspace.display());
    }
    let target_dir = crate::guests_target_dir();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .args(["build", "--release", "--locked", "--target", TARGET])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target_dir)
        // Flags meant for the host build (coverage, target-cpu=native…) break a wasm build.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .stdin(Stdio::null());
    let shown = format!(
        "CARGO_TARGET_DIR={} cargo build --release --locked --target {TARGET} --manifest-path {}",
        target_dir.display(),
        manifest.display()
    );
    let output = command.output().with_context(|| {
        format!(
            "cannot run cargo ({}) for `{shown}`",
            cargo.to_string_lossy()
        )
    })?;
    if !output.status.success() {
        bail!(
            "building the guest workspace {} for {TARGET} failed ({}).\n\
             command: {shown}\n\
             cargo's output:\n{}",
            workspace.display(),
            output.status,
            tail(&String::from_utf8_lossy(&output.stderr), 200)
        );
    }
    let built = components_from_messages(&String::from_utf8_lossy(&output.stdout));
    if built.is_empty() {
        bail!(
            "building {} produced no .wasm component; are its crates `crate-type = [\"cdylib\"]`?",
            workspace.display()
        );
    }
    let dir = target_dir.join(label);
    let components = copy_components(&built, &dir)?;
    Ok(BuiltGuests { dir, components })
}

/// Fails with what to do if the toolchain has no `wasm32-wasip2` standard library.
fn check_target_installed() -> anyhow::Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(output) = Command::new(&rustc).args(["--print", "sysroot"]).output() else {
        // No rustc to ask: let cargo report whatever is wrong.
        return Ok(());
    };
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || sysroot.is_empty() {
        return Ok(());
    }
    check_sysroot_has_target(Path::new(&sysroot))
}

pub(crate) fn check_sysroot_has_target(sysroot: &Path) -> anyhow::Result<()> {
    let target_lib = sysroot.join("lib/rustlib").join(TARGET);
    if !target_lib.is_dir() {
        bail!(
            "the Rust target {TARGET} is not installed (no {}); run `rustup target add {TARGET}`",
            target_lib.display()
        );
    }
    Ok(())
}

/// The `.wasm` files cargo reported building, from its JSON messages.
fn components_from_messages(stdout: &str) -> Vec<PathBuf> {
    let mut components: Vec<PathBuf> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .flat_map(|message| {
            message["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|file| file.as_str().map(PathBuf::from))
                .collect::<Vec<_>>()
        })
        .filter(|file| file.extension().is_some_and(|ext| ext == "wasm"))
        .collect();
    components.sort();
    components.dedup();
    components
}

/// Copies `components` into `dir` (created if needed), each through a temporary file and a
/// rename, so a concurrent reader never sees half a file.
fn copy_components(components: &[PathBuf], dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut copied = Vec::with_capacity(components.len());
    for component in components {
        let name = component
            .file_name()
            .with_context(|| format!("{} has no file name", component.display()))?;
        let destination = dir.join(name);
        let partial = dir.join(format!(
            ".{}.{}.partial",
            name.to_string_lossy(),
            std::process::id()
        ));
        std::fs::copy(component, &partial).with_context(|| {
            format!(
                "cannot copy {} to {}",
                component.display(),
                partial.display()
            )
        })?;
        std::fs::rename(&partial, &destination)
            .with_context(|| format!("cannot move {} into place", destination.display()))?;
        copied.push(destination);
    }
    copied.sort();
    Ok(copied)
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let start = all.len().saturating_sub(lines);
    let mut out = String::new();
    if start > 0 {
        out.push_str(&format!("[… {start} earlier lines]\n"));
    }
    out.push_str(&all[start..].join("\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sysroot_without_the_target_says_how_to_install_it() {
        let sysroot = tempfile::tempdir().unwrap();
        let error = check_sysroot_has_target(sysroot.path()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("run `rustup target add wasm32-wasip2`"),
            "{error}"
        );
        std::fs::create_dir_all(sysroot.path().join("lib/rustlib/wasm32-wasip2")).unwrap();
        check_sysroot_has_target(sysroot.path()).unwrap();
    }

    #[test]
    fn components_are_read_from_cargo_messages() {
        let stdout = [
            r#"{"reason":"compiler-artifact","filenames":["/t/release/deps/libserde.rlib"]}"#,
            r#"{"reason":"compiler-artifact","filenames":["/t/release/b.wasm","/t/release/libb.rlib"]}"#,
            r#"{"reason":"compiler-artifact","filenames":["/t/release/a.wasm"]}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ]
        .join("\n");
        assert_eq!(
            components_from_messages(&stdout),
            [
                PathBuf::from("/t/release/a.wasm"),
                PathBuf::from("/t/release/b.wasm")
            ]
        );
    }

    #[test]
    fn tail_keeps_the_last_lines_and_says_how_many_were_dropped() {
        assert_eq!(tail("a\nb\nc", 2), "[… 1 earlier lines]\nb\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
