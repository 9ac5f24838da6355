//! Exports into AGENTS.md, CLAUDE.md and Agent Skills folders, on real files.

use std::path::Path;

use aeterna_knowledge::export::{self, ExportOptions, Format};
use aeterna_knowledge::{ItemType, KnowledgeItem, Status};
use aeterna_memory::Layer;

fn item(id: &str, kind: ItemType, body: &str) -> KnowledgeItem {
    KnowledgeItem::new(
        id,
        kind,
        format!("Title of {id}"),
        Layer::Team,
        Some("core".into()),
        body,
    )
}

fn items() -> Vec<KnowledgeItem> {
    let mut retired = item("old-way", ItemType::Pattern, "Do it the old way.\n");
    retired.front.status = Status::Superseded;
    let mut described = item(
        "port-zero",
        ItemType::Lesson,
        "# Why\n\nFixed ports collide.\n",
    );
    described.front.description = Some("Bind port 0 in tests and read the port back".into());
    vec![
        item(
            "sqlx-offline",
            ItemType::Pattern,
            "Set SQLX_OFFLINE=true.\n",
        ),
        described,
        item(
            "no-force-push",
            ItemType::Policy,
            "Never force-push main.\n",
        ),
        item("0007-sqlite", ItemType::Adr, "We embed SQLite.\n"),
        retired,
    ]
}

fn export(format: Format, items: &[KnowledgeItem], dir: &Path, options: &ExportOptions) -> bool {
    let plan = export::plan(format, items, dir, options).expect("plan");
    let changed = !plan.is_current();
    plan.apply().expect("apply");
    changed
}

#[test]
fn agents_md_is_rewritten_between_its_markers_only_and_twice_is_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("AGENTS.md");
    std::fs::write(&path, "# Our repo\n\nRun `make test` before pushing.\n").unwrap();
    let options = ExportOptions::default();
    assert!(export(Format::AgentsMd, &items(), dir.path(), &options));
    let first = std::fs::read(&path).unwrap();
    assert!(!export(Format::AgentsMd, &items(), dir.path(), &options));
    assert_eq!(std::fs::read(&path).unwrap(), first);

    let text = String::from_utf8(first).unwrap();
    assert!(
        text.starts_with(
            "# Our repo\n\nRun `make test` before pushing.\n\n<!-- aeterna:knowledge:begin"
        ),
        "{text}"
    );
    let order: Vec<usize> = [
        "Policy: Title of no-force-push",
        "Decision: Title of 0007-sqlite",
        "Pattern: Title of sqlx-offline",
        "Lesson: Title of port-zero",
    ]
    .iter()
    .map(|heading| {
        text.find(heading)
            .unwrap_or_else(|| panic!("{heading} in {text}"))
    })
    .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
    assert!(
        !text.contains("old way"),
        "superseded items are not exported: {text}"
    );
    assert!(
        text.contains("#### Why"),
        "the item's headings nest under it: {text}"
    );

    // Hand edits on both sides of the section survive a new export; the section follows the items.
    let edited = text.replace("# Our repo", "# Our repository") + "\n## Written after\n";
    std::fs::write(&path, &edited).unwrap();
    let mut fewer = items();
    fewer.remove(0);
    assert!(export(Format::AgentsMd, &fewer, dir.path(), &options));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# Our repository\n"), "{text}");
    assert!(
        text.ends_with("<!-- aeterna:knowledge:end -->\n\n## Written after\n"),
        "{text}"
    );
    assert!(!text.contains("sqlx-offline"), "{text}");

    // CLAUDE.md is the same section in its own file.
    assert!(export(Format::ClaudeMd, &items(), dir.path(), &options));
    let claude = std::fs::read_to_string(dir.path().join("CLAUDE.md")).unwrap();
    assert!(
        claude.contains("Policy: Title of no-force-push"),
        "{claude}"
    );
}

#[test]
fn the_file_stays_within_its_cap_with_the_most_useful_items_first() {
    let dir = tempfile::tempdir().unwrap();
    let many: Vec<KnowledgeItem> = (0..200)
        .map(|n| {
            let kind = if n % 2 == 0 {
                ItemType::Policy
            } else {
                ItemType::Note
            };
            item(
                &format!("item-{n:03}"),
                kind,
                &"A sentence of knowledge. ".repeat(8),
            )
        })
        .collect();
    let options = ExportOptions {
        max_bytes: 8 * 1024,
    };
    let plan = export::plan(Format::AgentsMd, &many, dir.path(), &options).unwrap();
    let contents = plan.changes[0].contents.clone().unwrap();
    assert!(contents.len() <= 8 * 1024, "{} bytes", contents.len());
    assert!(!plan.left_out.is_empty());
    assert!(
        contents.contains(&format!("_{} more item(s)", plan.left_out.len())),
        "{contents}"
    );
    assert!(
        !contents.contains("Note: "),
        "policies fill the cap before notes: {contents}"
    );
    plan.apply().unwrap();
    assert!(
        std::fs::metadata(dir.path().join("AGENTS.md"))
            .unwrap()
            .len()
            <= 8 * 1024
    );
}

#[test]
fn a_section_that_never_closes_is_refused_and_the_file_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("AGENTS.md");
    let broken = "# Repo\n<!-- aeterna:knowledge:begin -->\nhalf a section\n";
    std::fs::write(&path, broken).unwrap();
    let error = export::plan(
        Format::AgentsMd,
        &items(),
        dir.path(),
        &ExportOptions::default(),
    )
    .expect_err("unclosed");
    assert!(error.to_string().contains("never closes"), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
}

#[test]
fn skills_are_one_folder_per_pattern_and_lesson_and_hand_written_skills_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    let mine = skills.join("deploy");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(
        mine.join("SKILL.md"),
        "---\nname: deploy\ndescription: how we deploy\n---\nsteps\n",
    )
    .unwrap();

    let options = ExportOptions::default();
    assert!(export(Format::Skills, &items(), &skills, &options));
    assert!(
        !export(Format::Skills, &items(), &skills, &options),
        "twice changes nothing"
    );
    let mut names: Vec<String> = std::fs::read_dir(&skills)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["deploy", "port-zero", "sqlx-offline"]);
    let skill = std::fs::read_to_string(skills.join("port-zero/SKILL.md")).unwrap();
    let (front, body) = skill
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("---\n"))
        .expect("front matter");
    let front: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).unwrap();
    assert_eq!(front["name"].as_str(), Some("port-zero"));
    assert_eq!(
        front["description"].as_str(),
        Some("Bind port 0 in tests and read the port back")
    );
    assert!(
        body.starts_with("# Title of port-zero\n\n# Why\n"),
        "{body}"
    );

    // An item retired from the repository takes its folder with it; the hand-written one stays.
    let remaining: Vec<KnowledgeItem> = items()
        .into_iter()
        .filter(|item| item.id() != "port-zero")
        .collect();
    assert!(export(Format::Skills, &remaining, &skills, &options));
    assert!(!skills.join("port-zero").exists());
    assert!(mine.join("SKILL.md").exists());
}

#[test]
fn a_file_already_over_its_cap_is_said_to_be() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), "# Notes\n".repeat(2000)).unwrap();
    let options = ExportOptions { max_bytes: 4096 };
    let plan = export::plan(Format::AgentsMd, &items(), dir.path(), &options).unwrap();
    let over = plan
        .left_out
        .iter()
        .find(|reason| reason.contains("over `--max-bytes` (4096)"));
    assert!(over.is_some(), "{:?}", plan.left_out);
    // The hand-written text is still kept whole.
    let contents = plan.changes[0].contents.as_deref().unwrap();
    assert!(contents.starts_with(&"# Notes\n".repeat(2000)));
}
