//! `aeterna knowledge import | list | history | export`, through the real binary on real git
//! repositories.

use std::path::Path;
use std::process::{Command, Output};

fn aeterna(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(args)
        .env("AETERNA_LOG", "error")
        .output()
        .expect("the aeterna binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn path(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
fn import_then_export_keeps_agents_md_current_and_check_catches_a_stale_copy() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let knowledge = dir.path().join("knowledge");
    std::fs::create_dir_all(project.join("docs/adr")).unwrap();
    std::fs::write(
        project.join("AGENTS.md"),
        "# Service\n\n## Deploys\n\nDeploy on Tuesdays only.\n",
    )
    .unwrap();
    std::fs::write(
        project.join("docs/adr/0001-use-sqlite.md"),
        "# 1. Use SQLite\n\nStatus: Accepted\n\nOne file, no server.\n",
    )
    .unwrap();
    let (repo, from) = (path(&knowledge), path(&project));

    let import = [
        "knowledge",
        "import",
        "--repo",
        repo,
        "--from",
        from,
        "--scope",
        "core",
    ];
    let dry = aeterna(&[&import[..], &["--dry-run"]].concat());
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        stdout(&dry).contains("2 item(s) found; nothing committed"),
        "{}",
        stdout(&dry)
    );

    let imported = aeterna(&import);
    assert!(imported.status.success(), "{imported:?}");
    assert!(
        stdout(&imported).contains("committed 2 item(s) to main"),
        "{}",
        stdout(&imported)
    );
    let again = aeterna(&import);
    assert!(
        stdout(&again).contains("already in the repository"),
        "{}",
        stdout(&again)
    );

    let listed = stdout(&aeterna(&["knowledge", "list", "--repo", repo]));
    assert_eq!(
        listed,
        "0001-use-sqlite\tadr\taccepted\tUse SQLite\nagents-deploys\tpolicy\taccepted\tDeploys\n"
    );
    let history = stdout(&aeterna(&[
        "knowledge",
        "history",
        "--repo",
        repo,
        "0001-use-sqlite",
    ]));
    assert_eq!(history.lines().count(), 1, "{history}");
    assert!(history.contains("import: 2 item(s)"), "{history}");

    let export = [
        "knowledge",
        "export",
        "--repo",
        repo,
        "--format",
        "agents-md",
        "--to",
        from,
    ];
    assert!(stdout(&aeterna(&export)).starts_with("wrote "));
    let first = std::fs::read(project.join("AGENTS.md")).unwrap();
    assert_eq!(stdout(&aeterna(&export)), "up to date\n");
    assert_eq!(std::fs::read(project.join("AGENTS.md")).unwrap(), first);

    let check = [&export[..], &["--check"]].concat();
    assert!(aeterna(&check).status.success());
    let text = String::from_utf8(first).unwrap();
    assert!(
        text.starts_with(
            "# Service\n\n## Deploys\n\nDeploy on Tuesdays only.\n\n<!-- aeterna:knowledge:begin"
        ),
        "{text}"
    );
    std::fs::write(
        project.join("AGENTS.md"),
        text.replace("One file, no server.", "Edited by hand."),
    )
    .unwrap();
    let stale = aeterna(&check);
    assert_eq!(stale.status.code(), Some(1), "{stale:?}");
    assert!(stdout(&stale).starts_with("stale: "), "{}", stdout(&stale));

    let bad = aeterna(&[
        "knowledge",
        "export",
        "--repo",
        repo,
        "--format",
        "pdf",
        "--to",
        from,
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("use agents-md, claude-md or skills"));
}
