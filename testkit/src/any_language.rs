//! Extensions written in JavaScript and Python, built from source with the registries' own
//! toolchains: componentize-js (npm) and componentize-py (PyPI).
//!
//! The toolchains live under the cargo target directory (`<target>/guest-toolchains/bin`),
//! installed by `scripts/guest-toolchains`; if they are missing, the first build here runs that
//! script. A component is built once per content — sources, WIT, toolchain version — into
//! `<target>/wasm-guests/any-language/<stem>-<hash>.wasm`, so the slow build (seconds) happens
//! once per change, not once per test process, and its bytes then hit the host's compile cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

/// The languages built here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `package.json` and `src/extension.js`, built with componentize-js.
    JavaScript,
    /// `app.py`, built with componentize-py.
    Python,
}

impl Language {
    /// The language of the project in `dir`, from its files.
    pub fn of(dir: &Path) -> Option<Language> {
        if dir.join("package.json").is_file() {
            Some(Language::JavaScript)
        } else if dir.join("app.py").is_file() {
            Some(Language::Python)
        } else {
            None
        }
    }

    fn tool(self) -> &'static str {
        match self {
            Language::JavaScript => "componentize-js",
            Language::Python => "componentize-py",
        }
    }
}

/// The directory of the toolchain commands: `<target>/guest-toolchains/bin`.
pub fn toolchain_bin() -> PathBuf {
    crate::target_dir().join("guest-toolchains").join("bin")
}

/// The component of the JavaScript or Python sample `name` (`sample-extensions/<name>`), built
/// from source. `Ok(None)` when its toolchain cannot be installed on this machine: the reason is
/// printed (tests then skip visibly).
pub fn script_sample(name: &str) -> anyhow::Result<Option<PathBuf>> {
    let dir = crate::repo_root().join("sample-extensions").join(name);
    build_extension(&dir, &name.replace('-', "_"))
}

/// Builds the JavaScript or Python extension project in `dir` into a component named `stem`.
/// `Ok(None)` when the toolchain cannot be installed on this machine (the reason is printed).
pub fn build_extension(dir: &Path, stem: &str) -> anyhow::Result<Option<PathBuf>> {
    let language = Language::of(dir).with_context(|| {
        format!(
            "{} is neither a JavaScript project (package.json) nor a Python one (app.py)",
            dir.display()
        )
    })?;
    let Some(bin) = toolchains() else {
        return Ok(None);
    };
    let tool = bin.join(language.tool());
    let version = command_output(Command::new(&tool).arg("--version"))?;
    let wit = crate::repo_root().join("wit");
    let mut hasher = Sha256::new();
    hasher.update(version.trim().as_bytes());
    hash_tree(&mut hasher, &wit, &wit)?;
    hash_tree(&mut hasher, dir, dir)?;
    let hash = hex(&hasher.finalize()[..8]);
    let out_dir = crate::guests_target_dir().join("any-language");
    let out = out_dir.join(format!("{stem}-{hash}.wasm"));
    // One build at a time in a process: tests running in parallel want the same components.
    static BUILDING: Mutex<()> = Mutex::new(());
    let _building = BUILDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if out.is_file() {
        return Ok(Some(out));
    }
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let partial = out_dir.join(format!(".{stem}-{hash}.{}.partial", std::process::id()));
    let mut command = Command::new(&tool);
    match language {
        Language::JavaScript => command
            .arg(dir.join("src").join("extension.js"))
            .arg("--wit")
            .arg(&wit)
            .args(["--world-name", "extension", "--out"])
            .arg(&partial),
        Language::Python => command
            .arg("-d")
            .arg(&wit)
            .args(["-w", "extension", "componentize", "app", "-p"])
            .arg(dir)
            .arg("-o")
            .arg(&partial),
    };
    command.current_dir(dir).env("PATH", path_with(&bin));
    command_output(&mut command)
        .with_context(|| format!("building {} with {}", dir.display(), language.tool()))?;
    std::fs::rename(&partial, &out)
        .with_context(|| format!("cannot move {} into place", out.display()))?;
    Ok(Some(out))
}

/// The toolchain directory (`node`, `componentize-js`, `componentize-py`), installing the
/// toolchains first if needed (once per process). `None` if they cannot be installed here; the
/// reason is printed once.
pub fn toolchains() -> Option<PathBuf> {
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        let bin = toolchain_bin();
        let present = || {
            ["node", "componentize-js", "componentize-py"]
                .iter()
                .all(|tool| bin.join(tool).is_file())
        };
        if present() {
            return Ok(bin);
        }
        let script = crate::repo_root().join("scripts").join("guest-toolchains");
        let mut install = Command::new(&script);
        install.env("CARGO_TARGET_DIR", crate::target_dir());
        match command_output(&mut install) {
            Ok(_) if present() => Ok(bin),
            Ok(_) => Err(format!("{} ran but left no tools", script.display())),
            Err(error) => Err(format!("{error:#}")),
        }
    });
    match ready {
        Ok(bin) => Some(bin.clone()),
        Err(reason) => {
            static SAID: OnceLock<()> = OnceLock::new();
            SAID.get_or_init(|| {
                eprintln!(
                    "SKIPPED: the JavaScript and Python guest toolchains cannot be installed \
                     here, so their extensions are not built: {reason}"
                );
            });
            None
        }
    }
}

/// Runs `command`, returning its stdout, or an error with its output.
pub fn command_output(command: &mut Command) -> anyhow::Result<String> {
    let shown = format!("{command:?}");
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {shown}"))?;
    if !output.status.success() {
        bail!(
            "{shown} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Hashes the files under `dir` (names relative to `root`, then contents), in a stable order,
/// skipping what builds and package managers leave behind.
fn hash_tree(hasher: &mut Sha256, root: &Path, dir: &Path) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if matches!(
            name.as_ref(),
            "node_modules" | "__pycache__" | "dist" | "target" | ".git"
        ) || name.ends_with(".wasm")
        {
            continue;
        }
        if path.is_dir() {
            hash_tree(hasher, root, &path)?;
        } else {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            hasher.update(relative.to_string_lossy().as_bytes());
            hasher.update([0]);
            hasher.update(
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?,
            );
            hasher.update([0]);
        }
    }
    Ok(())
}

fn path_with(bin: &Path) -> std::ffi::OsString {
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
