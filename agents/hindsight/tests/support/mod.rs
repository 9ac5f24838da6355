//! Shared test support: a real memory service on SQLite in a temp dir, Hindsight on top, and
//! the fixture corpus of real tool outputs.
#![allow(dead_code)]

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
    let memory = MemoryService::open_embedded(
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
    let mut classes: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let root = outputs_dir();
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
