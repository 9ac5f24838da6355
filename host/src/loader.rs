//! Loads one extension file: manifest, size and binary checks, compilation (through the cache,
//! on a thread of its own under a time budget, with progress in the log), contract check,
//! linking, `register()`, and validation of the registration.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use crate::bindings::{ExtensionPre, wit_types};
use crate::cache::{ComponentCache, digest};
use crate::callback::{self, Call, CallbackSpec, Returned};
use crate::config::HostConfig;
use crate::error::LoadError;
use crate::health::Health;
use crate::imports::StoreData;
use crate::manifest::Manifest;
use crate::registry::{Linked, LoadedExtension};
use crate::sandbox::OutputCap;
use crate::tags::is_valid_tag_name;
use crate::types::{Hook, Registration, ToolConfig, ToolDefinition};

/// The WIT package version this host implements.
pub const CONTRACT_VERSION: &str = "0.1.0";
const CONTRACT_PACKAGE: &str = "aeterna:extension";
const REQUIRED_EXPORTS: [&str; 5] = [
    "register",
    "on-input-messages",
    "on-plain-text",
    "on-tag",
    "on-llm-output",
];
const MAX_ID_BYTES: usize = 64;

/// How often a running compilation reports that it is still running.
const COMPILE_PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The `tracing` target of compilation progress, so an embedder can show it alone.
pub(crate) const COMPILE_TARGET: &str = "aeterna_host::compile";

/// The shared machinery a load needs.
pub(crate) struct Loader {
    pub(crate) config: HostConfig,
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<StoreData>,
    pub(crate) cache: ComponentCache,
}

pub(crate) enum Loaded {
    Extension(Arc<LoadedExtension>),
    /// The manifest says `enabled = false`.
    Disabled,
}

impl Loader {
    /// Loads `wasm`. With `honor_enabled` false, a disabled extension is validated anyway.
    /// `known` finds an already linked component with the same bytes, which is reused instead
    /// of compiled again (a manifest change, or the same component under two names).
    pub(crate) async fn load(
        self: &Arc<Self>,
        wasm: &Path,
        honor_enabled: bool,
        generation: u64,
        known: &(dyn Fn(&[u8; 32]) -> Option<Linked> + Sync),
    ) -> Result<Loaded, LoadError> {
        let (manifest_path, manifest) = match Manifest::load_beside(wasm) {
            Ok(Some((path, manifest))) => (Some(path), manifest),
            Ok(None) => (None, Manifest::default()),
            Err((path, message)) => return Err(LoadError::Manifest { path, message }),
        };
        let manifest_error = |message: String| LoadError::Manifest {
            path: manifest_path
                .clone()
                .unwrap_or_else(|| Manifest::path_for(wasm)),
            message,
        };
        if honor_enabled && !manifest.enabled() {
            return Ok(Loaded::Disabled);
        }
        if let Some(id) = &manifest.id {
            validate_id(id).map_err(|why| manifest_error(format!("`id = {id:?}`: {why}")))?;
        }
        let label: Arc<str> = Arc::from(file_label(wasm));
        // `register()` runs under the operator's limits for the manifest's id (or the file's
        // name), lowered by the manifest; the final limits follow the registered id.
        let register_limits = manifest
            .effective_limits(
                &self
                    .config
                    .limits_for(manifest.id.as_deref().unwrap_or(&label)),
            )
            .map_err(&manifest_error)?;

        let bytes = self.read(wasm).await?;
        check_header(&bytes)?;
        let digest = digest(&bytes);
        let linked = match known(&digest) {
            Some(linked) => linked,
            None => self.link(wasm, digest, bytes).await?,
        };

        let config: Arc<[(String, String)]> = manifest.config_pairs().into();
        let registered = callback::run(
            CallbackSpec {
                pre: &linked.pre,
                extension: &label,
                limits: register_limits,
                config: config.clone(),
                call: None,
                state: None,
                output_cap: self.output_cap(),
                max_copy_bytes: self.config.max_run_output_bytes,
                max_output_bytes: self.config.max_run_output_bytes,
            },
            Call::Register,
        )
        .await;
        let mut registration = match registered.result {
            Ok(Returned::Registration(registration)) => convert_registration(registration),
            Ok(_) => {
                return Err(LoadError::Registration(
                    "register() returned no registration".into(),
                ));
            }
            Err(fault) => return Err(LoadError::Register(fault)),
        };
        if let Some(id) = manifest.id.clone() {
            registration.id = id;
        }
        if let Some(priority) = manifest.priority {
            registration.priority = priority;
        }
        validate_registration(&registration).map_err(LoadError::Registration)?;
        let limits = manifest
            .effective_limits(&self.config.limits_for(&registration.id))
            .map_err(manifest_error)?;

        Ok(Loaded::Extension(Arc::new(LoadedExtension {
            id: Arc::from(registration.id.as_str()),
            file: wasm.to_path_buf(),
            generation,
            manifest: manifest_path,
            registration,
            limits,
            failure: manifest.failure(),
            config,
            linked,
            health: Mutex::new(Health::default()),
        })))
    }

    pub(crate) fn output_cap(&self) -> OutputCap {
        OutputCap {
            bytes: self.config.output_cap_bytes,
            records: self.config.output_cap_records,
        }
    }

    /// Reads the component, refusing one over `max_component_bytes` before reading it all.
    async fn read(&self, wasm: &Path) -> Result<Vec<u8>, LoadError> {
        use tokio::io::AsyncReadExt;

        let max = self.config.max_component_bytes;
        let file = tokio::fs::File::open(wasm).await?;
        let size = file.metadata().await?.len();
        if size > max {
            return Err(LoadError::TooLarge { size, max });
        }
        // The file may grow between the check and the read; never read past the bound.
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.take(max + 1).read_to_end(&mut bytes).await?;
        let read = bytes.len() as u64;
        if read > max {
            return Err(LoadError::TooLarge { size: read, max });
        }
        Ok(bytes)
    }

    /// The component from the compile cache, or compiled on a thread of its own within
    /// `compile_timeout_ms` (with progress in the log), then checked against the contract and
    /// linked.
    async fn link(
        self: &Arc<Self>,
        wasm: &Path,
        digest: [u8; 32],
        bytes: Vec<u8>,
    ) -> Result<Linked, LoadError> {
        let loader = self.clone();
        let cached =
            tokio::task::spawn_blocking(move || loader.cache.cached(&loader.engine, &digest))
                .await
                .map_err(|error| LoadError::Compile(format!("the cache lookup failed: {error}")))?;
        let component = match cached {
            Some(component) => component,
            None => self.compile(wasm, digest, bytes).await?,
        };
        check_contract(&self.engine, &component)?;
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|error| link_error(&error))?;
        let pre = ExtensionPre::new(instance_pre).map_err(|error| {
            LoadError::Compile(format!("its exports do not match the contract: {error:#}"))
        })?;
        Ok(Linked { digest, pre })
    }

    /// Compiles on a dedicated thread, so neither a callback nor the async runtime ever waits
    /// on the compiler. Past the budget the load fails; the compiler cannot be interrupted, so
    /// it finishes on its thread and its result still lands in the compile cache.
    async fn compile(
        self: &Arc<Self>,
        wasm: &Path,
        digest: [u8; 32],
        bytes: Vec<u8>,
    ) -> Result<Component, LoadError> {
        let budget = self.config.compile_timeout();
        let size_mib = bytes.len() as f64 / (1024.0 * 1024.0);
        tracing::info!(
            target: COMPILE_TARGET,
            file = %wasm.display(),
            size_mib = format!("{size_mib:.1}"),
            "compiling the component (first load of these bytes); runs keep the loaded \
             extensions meanwhile"
        );
        let started = Instant::now();
        let (done, mut finished) = tokio::sync::oneshot::channel();
        let loader = self.clone();
        std::thread::Builder::new()
            .name("aeterna-compile".into())
            .spawn(move || {
                let _ = done.send(loader.cache.compile(&loader.engine, &digest, &bytes));
            })
            .map_err(|error| {
                LoadError::Compile(format!("cannot start a compiler thread: {error}"))
            })?;
        let deadline = tokio::time::Instant::now() + budget;
        loop {
            let next_report = tokio::time::Instant::now() + COMPILE_PROGRESS_EVERY;
            tokio::select! {
                result = &mut finished => {
                    let component = result.map_err(|_| {
                        LoadError::Compile("the compiler thread panicked".into())
                    })??;
                    tracing::info!(
                        target: COMPILE_TARGET,
                        file = %wasm.display(),
                        seconds = format!("{:.1}", started.elapsed().as_secs_f64()),
                        "compiled the component"
                    );
                    return Ok(component);
                }
                () = tokio::time::sleep_until(deadline.min(next_report)) => {
                    if tokio::time::Instant::now() >= deadline {
                        tracing::warn!(
                            target: COMPILE_TARGET,
                            file = %wasm.display(),
                            budget_ms = self.config.compile_timeout_ms,
                            "compilation is over its budget; the load is rejected"
                        );
                        return Err(LoadError::CompileTimeout {
                            budget_ms: self.config.compile_timeout_ms,
                        });
                    }
                    tracing::info!(
                        target: COMPILE_TARGET,
                        file = %wasm.display(),
                        seconds = started.elapsed().as_secs(),
                        budget_seconds = budget.as_secs(),
                        "still compiling"
                    );
                }
            }
        }
    }
}

/// A link error, with what to do when the component needs an import this host does not give.
fn link_error(error: &wasmtime::Error) -> LoadError {
    let message = format!("{error:#}");
    let hint = if message.contains("wasi:") {
        "; this host links the WASI 0.2 interfaces listed in `wit/extension.wit` and \
         `aeterna:extension`; rebuild the component so it imports only those"
    } else {
        ""
    };
    LoadError::Link(format!("{message}{hint}"))
}

/// A short name for log lines about a file that has no id yet.
fn file_label(wasm: &Path) -> String {
    wasm.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Tells a component from a core module or something else, before handing bytes to wasmtime.
pub(crate) fn check_header(bytes: &[u8]) -> Result<(), LoadError> {
    const COMPONENT: u32 = 0x0001_000d; // version 0x0d, layer 1
    const CORE_MODULE: u32 = 0x0000_0001; // version 1, layer 0
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadError::NotWasm);
    }
    match u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) {
        COMPONENT => Ok(()),
        CORE_MODULE => Err(LoadError::CoreModule),
        other => Err(LoadError::UnknownEncoding(other)),
    }
}

/// Checks the contract version of the component's `aeterna:extension` imports and that it exports
/// the extension world, with messages that say what was built instead.
fn check_contract(engine: &Engine, component: &Component) -> Result<(), LoadError> {
    let ty = component.component_type();
    for (name, _) in ty.imports(engine) {
        if let Some(interface) = name
            .strip_prefix(CONTRACT_PACKAGE)
            .and_then(|r| r.strip_prefix('/'))
        {
            let version = interface.split_once('@').map(|(_, version)| version);
            if version != Some(CONTRACT_VERSION) {
                return Err(LoadError::ContractVersion {
                    found: name.to_owned(),
                    expected: CONTRACT_VERSION,
                });
            }
        }
    }
    let exports: Vec<&str> = ty.exports(engine).map(|(name, _)| name).collect();
    let missing: Vec<&str> = REQUIRED_EXPORTS
        .iter()
        .copied()
        .filter(|name| !exports.contains(name))
        .collect();
    if !missing.is_empty() {
        let quote = |names: &[&str]| {
            names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(LoadError::NotAnExtension {
            missing: quote(&missing),
            exports: if exports.is_empty() {
                "none".into()
            } else {
                quote(&exports)
            },
            expected: CONTRACT_VERSION,
        });
    }
    Ok(())
}

fn convert_registration(wit: wit_types::Registration) -> Registration {
    let tool = |t: wit_types::ToolDefinition| ToolDefinition {
        name: t.name,
        description: t.description,
        input_schema: t.input_schema,
    };
    let mut hooks: Vec<Hook> = Vec::with_capacity(wit.hooks.len());
    for hook in wit.hooks {
        let hook = match hook {
            wit_types::Hook::InputMessages => Hook::InputMessages,
            wit_types::Hook::PlainText => Hook::PlainText,
            wit_types::Hook::Tag => Hook::Tag,
            wit_types::Hook::LlmOutput => Hook::LlmOutput,
        };
        if !hooks.contains(&hook) {
            hooks.push(hook);
        }
    }
    Registration {
        id: wit.id,
        version: wit.version,
        priority: wit.priority,
        hooks,
        tags: wit.tags,
        prompt_additions: wit.prompt_additions,
        tool_config: ToolConfig {
            add: wit.tool_config.add.into_iter().map(tool).collect(),
            remove: wit.tool_config.remove,
            override_: wit.tool_config.override_.into_iter().map(tool).collect(),
        },
    }
}

/// Checks an extension id: `[a-z0-9][a-z0-9._-]*`, at most 64 bytes; the error says why not.
pub fn validate_id(id: &str) -> Result<(), String> {
    let bytes = id.as_bytes();
    let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() {
        return Err("the id is empty".into());
    }
    if bytes.len() > MAX_ID_BYTES {
        return Err(format!(
            "the id is {} bytes long; at most {MAX_ID_BYTES} are allowed",
            bytes.len()
        ));
    }
    if !allowed(&bytes[0])
        || !bytes[1..]
            .iter()
            .all(|b| allowed(b) || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err("an id must match `[a-z0-9][a-z0-9._-]*`".into());
    }
    Ok(())
}

pub(crate) fn validate_registration(registration: &Registration) -> Result<(), String> {
    validate_id(&registration.id).map_err(|why| format!("id {:?}: {why}", registration.id))?;
    if registration.hooks.is_empty() {
        return Err("`hooks` is empty: an extension must handle at least one hook".into());
    }
    let handles_tags = registration.handles(Hook::Tag);
    match (handles_tags, registration.tags.is_empty()) {
        (true, true) => {
            return Err(
                "the `tag` hook is declared but `tags` is empty: name the tags to receive".into(),
            );
        }
        (false, false) => {
            return Err(format!(
                "`tags` lists {:?} but the `tag` hook is not declared",
                registration.tags
            ));
        }
        _ => {}
    }
    if let Some(bad) = registration.tags.iter().find(|tag| !is_valid_tag_name(tag)) {
        return Err(format!(
            "tag name {bad:?} is invalid: it must match `[A-Za-z_][A-Za-z0-9_.:-]*` (at most 64 bytes)"
        ));
    }
    let tools = &registration.tool_config;
    for (list, tool) in tools
        .add
        .iter()
        .map(|tool| ("add", tool))
        .chain(tools.override_.iter().map(|tool| ("override", tool)))
    {
        if tool.name.is_empty() {
            return Err(format!("tool-config.{list}: a tool has an empty name"));
        }
        match serde_json::from_str::<serde_json::Value>(&tool.input_schema) {
            Ok(serde_json::Value::Object(_) | serde_json::Value::Bool(_)) => {}
            Ok(_) => {
                return Err(format!(
                    "tool-config.{list} `{}`: input-schema must be a JSON Schema (an object or a boolean)",
                    tool.name
                ));
            }
            Err(error) => {
                return Err(format!(
                    "tool-config.{list} `{}`: input-schema is not valid JSON: {error}",
                    tool.name
                ));
            }
        }
    }
    if let Some(empty) = tools.remove.iter().find(|name| name.is_empty()) {
        return Err(format!(
            "tool-config.remove contains an empty name ({empty:?})"
        ));
    }
    Ok(())
}

/// The `*.wasm` files of `dir`, sorted by name so loads are deterministic.
pub(crate) fn wasm_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "wasm") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registration() -> Registration {
        Registration {
            id: "probe".into(),
            version: "1.0.0".into(),
            priority: 0,
            hooks: vec![Hook::PlainText],
            tags: vec![],
            prompt_additions: vec![],
            tool_config: ToolConfig::default(),
        }
    }

    #[test]
    fn ids_follow_the_contract_syntax() {
        for good in ["a", "0", "a.b_c-d", &"a".repeat(64)] {
            assert!(validate_id(good).is_ok(), "{good}");
        }
        for bad in ["", "A", "-a", ".a", "a b", "a/b", "é", &"a".repeat(65)] {
            assert!(validate_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn registration_rules() {
        assert!(validate_registration(&registration()).is_ok());

        let mut r = registration();
        r.hooks.clear();
        assert!(validate_registration(&r).unwrap_err().contains("hooks"));

        let mut r = registration();
        r.hooks.push(Hook::Tag);
        assert!(
            validate_registration(&r)
                .unwrap_err()
                .contains("`tags` is empty")
        );
        r.tags.push("todo".into());
        assert!(validate_registration(&r).is_ok());
        r.tags.push("not valid".into());
        assert!(validate_registration(&r).unwrap_err().contains("invalid"));

        let mut r = registration();
        r.tags.push("todo".into());
        assert!(
            validate_registration(&r)
                .unwrap_err()
                .contains("not declared")
        );

        let mut r = registration();
        r.tool_config.add.push(ToolDefinition {
            name: "t".into(),
            description: String::new(),
            input_schema: "{not json".into(),
        });
        assert!(
            validate_registration(&r)
                .unwrap_err()
                .contains("not valid JSON")
        );
        r.tool_config.add[0].input_schema = "42".into();
        assert!(
            validate_registration(&r)
                .unwrap_err()
                .contains("JSON Schema")
        );
        r.tool_config.add[0].input_schema = r#"{"type":"object"}"#.into();
        assert!(validate_registration(&r).is_ok());
    }

    #[test]
    fn header_check_tells_components_from_modules_and_garbage() {
        assert!(matches!(
            check_header(b"hello world"),
            Err(LoadError::NotWasm)
        ));
        assert!(matches!(check_header(b"\0asm"), Err(LoadError::NotWasm)));
        assert!(matches!(
            check_header(b"\0asm\x01\0\0\0"),
            Err(LoadError::CoreModule)
        ));
        assert!(check_header(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(matches!(
            check_header(b"\0asm\x02\0\0\0"),
            Err(LoadError::UnknownEncoding(2))
        ));
    }
}
