//! Importing what a team already has: instructions files, rules and an adr-tools folder.

use std::path::Path;

use aeterna_knowledge::export::{self, ExportOptions, Format};
use aeterna_knowledge::import::{self, Target};
use aeterna_knowledge::{Author, Change, ItemType, KnowledgeRepo, Limits, Status};
use aeterna_memory::Layer;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn team() -> Target {
    Target {
        layer: Layer::Team,
        scope: Some("core".into()),
    }
}

fn a_teams_repository(root: &Path) {
    write(
        root,
        "AGENTS.md",
        "# Parser\n\nA CSV parser.\n\n## Testing\n\nRun `cargo test --workspace`.\n\n\
         ## Style\n\n```md\n## not a heading inside a fence\n```\nUse rustfmt.\n",
    );
    write(root, "CLAUDE.md", "## Commits\n\nSay why in the message.\n");
    write(
        root,
        ".claude/rules/testing.md",
        "---\npaths:\n  - \"src/**/*.rs\"\n---\n# Test names\n\nName tests after behaviour.\n",
    );
    write(
        root,
        ".cursor/rules/no-unwrap.mdc",
        "---\ndescription: errors\n---\nNo unwrap in library code.\n",
    );
    write(
        root,
        "docs/adr/0001-record-architecture-decisions.md",
        "# 1. Record architecture decisions\n\nDate: 2026-01-05\n\n## Status\n\nAccepted\n\n\
         ## Context\n\nWe need to record decisions.\n",
    );
    write(
        root,
        "docs/adr/0002-use-yaml-config.md",
        "# 2. Use YAML config\n\n## Status\n\nSuperseded by [3. Use TOML](0003-use-toml.md)\n",
    );
    write(root, "docs/adr/README.md", "An index, not a decision.\n");
    write(root, "docs/adr/big-0003.md", "not numbered first\n");
}

#[test]
fn instructions_rules_and_adrs_become_items_with_their_origin() {
    let dir = tempfile::tempdir().unwrap();
    a_teams_repository(dir.path());
    let imported = import::scan(dir.path(), &team(), &Limits::default()).unwrap();
    let summary: Vec<(String, ItemType, String, String)> = imported
        .items
        .iter()
        .map(|item| {
            (
                item.id().to_owned(),
                item.front.kind,
                item.front.title.clone(),
                item.front.sources[0].id.clone(),
            )
        })
        .collect();
    let expect = |id: &str, kind, title: &str, origin: &str| {
        (id.to_owned(), kind, title.to_owned(), origin.to_owned())
    };
    assert_eq!(
        summary,
        vec![
            expect(
                "agents-introduction",
                ItemType::Policy,
                "AGENTS.md (introduction)",
                "AGENTS.md"
            ),
            expect("agents-testing", ItemType::Policy, "Testing", "AGENTS.md"),
            expect("agents-style", ItemType::Policy, "Style", "AGENTS.md"),
            expect("claude-commits", ItemType::Policy, "Commits", "CLAUDE.md"),
            expect(
                "rule-testing",
                ItemType::Policy,
                "Test names",
                ".claude/rules/testing.md"
            ),
            expect(
                "cursor-rule-no-unwrap",
                ItemType::Policy,
                "no unwrap",
                ".cursor/rules/no-unwrap.mdc"
            ),
            expect(
                "0001-record-architecture-decisions",
                ItemType::Adr,
                "Record architecture decisions",
                "docs/adr/0001-record-architecture-decisions.md"
            ),
            expect(
                "0002-use-yaml-config",
                ItemType::Adr,
                "Use YAML config",
                "docs/adr/0002-use-yaml-config.md"
            ),
        ]
    );
    let style = &imported.items[2];
    assert!(
        style.body.contains("## not a heading inside a fence"),
        "{}",
        style.body
    );
    assert!(
        !imported.items[4].body.contains("paths:"),
        "the rule's front matter is not its text"
    );
    assert_eq!(imported.items[6].front.status, Status::Accepted);
    assert_eq!(imported.items[7].front.status, Status::Superseded);
    assert!(
        imported
            .items
            .iter()
            .all(|item| item.front.layer == Layer::Team)
    );
}

#[test]
fn an_import_commits_once_and_never_takes_back_what_an_export_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    a_teams_repository(&project);
    let repo =
        KnowledgeRepo::open_or_init(&dir.path().join("knowledge"), "main", Limits::default())
            .unwrap();
    let imported = import::scan(&project, &team(), repo.limits()).unwrap();
    let change = Change {
        put: imported.items.clone(),
        remove: Vec::new(),
    };
    let first = repo
        .commit("main", &change, &Author::aeterna(), "import")
        .unwrap();
    assert_eq!(repo.snapshot().unwrap().entries.len(), imported.items.len());

    // Export into the same AGENTS.md, import again: the exported section is not re-imported,
    // so nothing changes.
    let items: Vec<_> = repo
        .snapshot()
        .unwrap()
        .entries
        .into_iter()
        .map(|entry| entry.item)
        .collect();
    export::plan(
        Format::AgentsMd,
        &items,
        &project,
        &ExportOptions::default(),
    )
    .unwrap()
    .apply()
    .unwrap();
    let again = import::scan(&project, &team(), repo.limits()).unwrap();
    assert_eq!(again.items, imported.items);
    let second = repo
        .commit(
            "main",
            &Change {
                put: again.items,
                remove: Vec::new(),
            },
            &Author::aeterna(),
            "import",
        )
        .unwrap();
    assert_eq!(second, first, "no change, no commit");
}

#[test]
fn files_over_the_limits_are_skipped_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".claude/rules/huge.md", &"x".repeat(5000));
    write(dir.path(), ".claude/rules/a.md", "a\n");
    write(dir.path(), ".claude/rules/b.md", "b\n");
    write(dir.path(), ".claude/rules/c.md", "c\n");
    let limits = Limits {
        max_item_bytes: 4096,
        max_items: 2,
        ..Limits::default()
    };
    let imported = import::scan(dir.path(), &team(), &limits).unwrap();
    assert_eq!(imported.items.len(), 2);
    assert_eq!(imported.skipped.len(), 2, "{:?}", imported.skipped);
    assert!(
        imported.skipped[0].contains(".claude/rules/huge.md: 5000 bytes"),
        "{:?}",
        imported.skipped
    );
    assert!(
        imported.skipped[1].contains("more than `knowledge.max_items` (2)"),
        "{:?}",
        imported.skipped
    );
}
