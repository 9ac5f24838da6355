//! Shared test support: a real memory service on SQLite in a temp dir, Hindsight on top, and
//! the fixture corpora of real tool outputs (the tuned one here, the held-out one in
//! `heldout`); the recall protocol both recall tests run is in `protocol`.
#![allow(dead_code)]

pub mod heldout;
pub mod protocol;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aeterna_hindsight::{HindsightConfig, HindsightService};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, MemoryConfig, MemoryService};

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub memory: Arc<MemoryService>,
    pub hindsight: HindsightService,
}

pub async fn harness(config: HindsightConfig) -> Harness {
    let dir = tempfile::tempdir().expect("temp dir");
    let memory = aeterna_testkit::profile::open_memory(
        dir.path(),
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("memory service opens");
    let memory = Arc::new(memory);
    let hindsight = HindsightService::new(memory.clone(), config).expect("hindsight starts");
    Harness {
        dir,
        memory,
        hindsight,
    }
}

pub fn identity(tenant: &str, project: &str, team: Option<&str>) -> Identity {
    Identity {
        tenant_id: tenant.to_string(),
        user_id: Some(format!("{tenant}-dev")),
        project_id: Some(project.to_string()),
        team_id: team.map(str::to_string),
        org_id: Some(format!("{tenant}-org")),
        ..Identity::default()
    }
}

pub fn outputs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/outputs")
}

pub fn fixture(path: &str) -> String {
    let full = outputs_dir().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The corpus: `toolchain/class` → variant outputs (sorted by name). `multi` classes (several
/// errors per output) are left out.
pub fn corpus() -> BTreeMap<String, Vec<(String, String)>> {
    corpus_in(&outputs_dir())
}

/// The corpus of the outputs under `root` (`root/<toolchain>/<class>/<variant>.txt`).
pub fn corpus_in(root: &Path) -> BTreeMap<String, Vec<(String, String)>> {
    let mut classes: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let root = root.to_path_buf();
    for toolchain in std::fs::read_dir(&root).expect("outputs dir") {
        let toolchain = toolchain.expect("entry").path();
        if !toolchain.is_dir() {
            continue;
        }
        for class in std::fs::read_dir(&toolchain).expect("toolchain dir") {
            let class = class.expect("entry").path();
            if class.file_name().is_some_and(|n| n == "multi") {
                continue;
            }
            let name = class
                .strip_prefix(&root)
                .expect("inside")
                .to_string_lossy()
                .to_string();
            let mut variants: Vec<(String, String)> = std::fs::read_dir(&class)
                .expect("class dir")
                .map(|v| v.expect("entry").path())
                .map(|v| {
                    let text = std::fs::read_to_string(&v).expect("output");
                    (
                        v.file_stem().expect("stem").to_string_lossy().to_string(),
                        text,
                    )
                })
                .collect();
            variants.sort();
            classes.insert(name, variants);
        }
    }
    classes
}

/// A class's hand-written companions (`fixtures/descriptions.toml`).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Described {
    pub description: String,
    pub fix: String,
    pub second_wording: Vec<String>,
}

/// `toolchain/class` → its description, fix and second wordings.
pub fn descriptions() -> BTreeMap<String, Described> {
    descriptions_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/descriptions.toml"))
}

/// The descriptions in the file at `path` (the format of `fixtures/descriptions.toml`).
pub fn descriptions_in(path: &Path) -> BTreeMap<String, Described> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first error's message as a person copies it from the output, without its location and
/// without its code: the headline line (the one sharing most words with the extracted message
/// pattern) minus the `path:line:col:` prefix, the severity label with its code
/// (`error[E0308]:`, `error TS2322:`, `fatal error:`), a trailing `[-Werror=…]` flag, Node's
/// `Error [ERR_…]:` and Go's `panic:`. Exception class names stay: they are words of the
/// message (`KeyError: 'banana'`), not codes.
pub fn message_without_code(output: &str) -> String {
    use regex::Regex;
    let signature = aeterna_hindsight::extract(output)
        .into_iter()
        .next()
        .expect("an error");
    let wanted: Vec<String> = aeterna_hindsight::terms::terms(&signature.message_pattern)
        .into_iter()
        .filter(|t| t != aeterna_hindsight::terms::PLACEHOLDER)
        .collect();
    let strip = [
        // Locations: `src/main.rs:4:5: `, `main.ts(2,10): `, `db.c:(.text+0x13): `,
        // `deploy.bash: line 4: `, `build.sh: 3: `, ` --> ` lines never hold messages.
        r"^\S+?\.\w+:\d+(?::\d+)?:\s+",
        r"^\S+?\.\w+\(\d+,\d+\):\s+",
        r"^\S+?\.\w+:\([^)]*\):\s+",
        r"^\S+?\.\w+: (?:line )?\d+: ",
        r"^\./",
        // Severity labels and codes.
        r"^(?:fatal )?error(?:\[\w+\])?:\s+",
        r"^error TS\d+:\s+",
        r"^Exception in thread \S+ ",
        r"^Error \[\w+\]:\s+",
        r"^Error:\s+",
        r"^panic: (?:runtime error: )?",
        r"^E\s+",
        r"\s+\[-W[\w=-]+\]$",
    ]
    .map(|p| Regex::new(p).expect(p));
    let clean = |line: &str| -> String {
        let mut line = line.trim().to_string();
        for _ in 0..3 {
            for re in &strip {
                line = re.replace(&line, "").into_owned();
            }
        }
        line.trim().to_string()
    };
    output
        .lines()
        .map(clean)
        .filter(|line| !line.is_empty())
        .max_by_key(|line| {
            let have = aeterna_hindsight::terms::terms(line);
            let shared = wanted.iter().filter(|w| have.contains(w)).count();
            // The line naming the exception class is the headline when the message has few
            // words of its own (`KeyError: 'banana'`).
            let class = signature.error_type.rsplit('.').next().unwrap_or_default();
            let names_class = class.len() > 3 && line.contains(class);
            // Most shared words; among ties, the shortest line (the headline, not a note).
            (
                shared + 2 * usize::from(names_class),
                std::cmp::Reverse(line.len()),
            )
        })
        .expect("a line")
}
