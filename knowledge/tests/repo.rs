//! The knowledge repository against real git: items committed through the library are what
//! the `git` CLI sees, and what a person commits with `git` is what the library reads.

mod common;

use std::path::Path;

use aeterna_knowledge::repo::Revision;
use aeterna_knowledge::{Author, Change, KnowledgeError, KnowledgeItem, KnowledgeRepo, Limits};
use aeterna_testkit::git;
use common::lesson;

fn put(item: KnowledgeItem) -> Change {
    Change {
        put: vec![item],
        remove: Vec::new(),
    }
}

fn open(dir: &Path) -> KnowledgeRepo {
    KnowledgeRepo::open_or_init(dir, "main", Limits::default()).expect("repository")
}

#[test]
fn a_commit_is_what_git_sees_and_the_working_tree_follows() {
    let dir = tempfile::tempdir().unwrap();
    let repo = open(dir.path());
    let item = lesson(
        "flaky-port",
        "Bind port 0 in tests; fixed ports collide on CI.\n",
    );
    let commit = repo
        .commit(
            "main",
            &put(item.clone()),
            &Author::aeterna(),
            "learn: tests bind port 0 (Hindsight resolution promoted by ana)",
        )
        .unwrap();

    let log = git(dir.path(), &["log", "--format=%H %an <%ae> %s", "main"]);
    assert_eq!(
        log.trim(),
        format!(
            "{commit} Aeterna <aeterna@localhost> learn: tests bind port 0 (Hindsight \
             resolution promoted by ana)"
        )
    );
    let committed = git(dir.path(), &["show", "main:lessons/flaky-port.md"]);
    assert_eq!(committed, item.render().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("lessons/flaky-port.md")).unwrap(),
        committed
    );
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
    assert_eq!(repo.get("flaky-port").unwrap(), item);

    // The same change again makes no empty commit.
    let again = repo
        .commit("main", &put(item), &Author::aeterna(), "again")
        .unwrap();
    assert_eq!(again, commit);
}

#[test]
fn what_a_person_commits_with_git_is_read_and_bad_files_are_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let repo = open(dir.path());
    repo.commit(
        "main",
        &put(lesson("flaky-port", "Bind port 0.\n")),
        &Author::aeterna(),
        "learn: port 0",
    )
    .unwrap();
    let path = dir.path().join("lessons/flaky-port.md");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("Bind port 0.", "Bind port 0 and read the port back.");
    std::fs::write(&path, edited).unwrap();
    std::fs::create_dir_all(dir.path().join("policies")).unwrap();
    std::fs::write(dir.path().join("policies/broken.md"), "no front matter\n").unwrap();
    std::fs::write(
        dir.path().join("policies/renamed.md"),
        lesson("other-id", "x").render().unwrap(),
    )
    .unwrap();
    std::fs::write(dir.path().join("README.md"), "not an item\n").unwrap();
    git(dir.path(), &["add", "-A"]);
    git(
        dir.path(),
        &["commit", "-qm", "ana: say how to read the port back"],
    );

    let snapshot = repo.snapshot().unwrap();
    assert_eq!(
        snapshot.commit.as_deref(),
        Some(git(dir.path(), &["rev-parse", "main"]).trim())
    );
    assert_eq!(snapshot.entries.len(), 1);
    assert!(snapshot.entries[0].item.body.contains("read the port back"));
    let problems: Vec<_> = snapshot
        .problems
        .iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("policies/broken.md: an item starts with"),
        "{problems:?}"
    );
    assert!(
        problems[1].contains("says `id: other-id` but the file is `renamed.md`"),
        "{problems:?}"
    );
}

#[test]
fn history_is_the_git_log_of_the_item() {
    let dir = tempfile::tempdir().unwrap();
    let repo = open(dir.path());
    let author = Author {
        name: "Ana".into(),
        email: "ana@example.com".into(),
    };
    for (body, message) in [("v1\n", "first"), ("v2\n", "second")] {
        repo.commit("main", &put(lesson("port", body)), &author, message)
            .unwrap();
    }
    repo.commit("main", &put(lesson("other", "x")), &author, "unrelated")
        .unwrap();
    repo.commit(
        "main",
        &Change {
            remove: vec!["port".into()],
            ..Change::default()
        },
        &author,
        "retire: superseded by the fixture",
    )
    .unwrap();
    let history: Vec<(String, bool)> = repo
        .history("port")
        .unwrap()
        .into_iter()
        .map(
            |Revision {
                 message, removed, ..
             }| (message, removed),
        )
        .collect();
    assert_eq!(
        history,
        vec![
            ("retire: superseded by the fixture".to_owned(), true),
            ("second".to_owned(), false),
            ("first".to_owned(), false),
        ]
    );
    let git_log = git(dir.path(), &["log", "--format=%s", "--", "lessons/port.md"]);
    assert_eq!(
        git_log.lines().collect::<Vec<_>>(),
        vec!["retire: superseded by the fixture", "second", "first"]
    );
    assert!(matches!(repo.get("port"), Err(KnowledgeError::NotFound(_))));
    let missing = repo.commit(
        "main",
        &Change {
            remove: vec!["port".into()],
            ..Change::default()
        },
        &author,
        "again",
    );
    assert!(
        matches!(missing, Err(KnowledgeError::NotFound(_))),
        "{missing:?}"
    );
}

#[test]
fn a_proposal_is_a_branch_pushed_for_review_and_the_protected_branch_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("local");
    let remote = dir.path().join("remote.git");
    git(
        dir.path(),
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    );
    let repo = open(&local);
    let base = repo
        .commit(
            "main",
            &put(lesson("base", "b")),
            &Author::aeterna(),
            "seed",
        )
        .unwrap();
    let proposal = repo
        .commit(
            "aeterna/proposals/port",
            &put(lesson("port", "Bind port 0.\n")),
            &Author::aeterna(),
            "propose: tests bind port 0",
        )
        .unwrap();
    assert_eq!(repo.tip("main").unwrap().as_deref(), Some(base.as_str()));
    assert!(matches!(repo.get("port"), Err(KnowledgeError::NotFound(_))));
    assert_eq!(
        repo.snapshot_of("aeterna/proposals/port")
            .unwrap()
            .entries
            .len(),
        2
    );
    // The working tree (on main) did not change.
    assert!(!local.join("lessons/port.md").exists());

    repo.push(remote.to_str().unwrap(), "aeterna/proposals/port")
        .unwrap();
    let pushed = git(&remote, &["rev-parse", "aeterna/proposals/port"]);
    assert_eq!(pushed.trim(), proposal);
    let file = git(&remote, &["show", "aeterna/proposals/port:lessons/port.md"]);
    assert!(file.contains("Bind port 0."), "{file}");

    // A remote this build cannot reach is an error that never shows the URL's password.
    let error = repo
        .push(
            "https://ana:s3cret-token@git.example.com/k.git",
            "aeterna/proposals/port",
        )
        .expect_err("no network transports");
    assert!(!error.to_string().contains("s3cret-token"), "{error}");

    for bad in ["../main", "-x", "a..b", "a b"] {
        let error = repo
            .commit(bad, &put(lesson("x", "x")), &Author::aeterna(), "x")
            .expect_err(bad);
        assert!(
            error.to_string().contains("not a valid branch name"),
            "{error}"
        );
    }
}

#[test]
fn secrets_are_redacted_before_commit_and_limits_are_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_item_bytes: 2048,
        max_items: 3,
        ..Limits::default()
    };
    let repo = KnowledgeRepo::open_or_init(dir.path(), "main", limits).unwrap();
    let token = "ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng";
    repo.commit(
        "main",
        &put(lesson("token", &format!("export GITHUB_TOKEN={token}\n"))),
        &Author::aeterna(),
        "learn",
    )
    .unwrap();
    let committed = git(dir.path(), &["show", "main:lessons/token.md"]);
    assert!(!committed.contains(token), "{committed}");
    assert!(committed.contains("[REDACTED:github-token]"), "{committed}");

    let error = repo
        .commit(
            "main",
            &put(lesson("big", &"x".repeat(4096))),
            &Author::aeterna(),
            "big",
        )
        .expect_err("too big");
    assert!(
        error
            .to_string()
            .contains("`knowledge.max_item_bytes` (2048)"),
        "{error}"
    );

    let many = Change {
        put: (0..3).map(|n| lesson(&format!("n{n}"), "x")).collect(),
        remove: Vec::new(),
    };
    let error = repo
        .commit("main", &many, &Author::aeterna(), "many")
        .expect_err("too many");
    assert!(
        error.to_string().contains("`knowledge.max_items`"),
        "{error}"
    );

    // A file too big committed by hand is reported, not read.
    std::fs::write(
        dir.path().join("lessons/huge.md"),
        format!(
            "{}{}",
            lesson("huge", "").render().unwrap(),
            "y".repeat(4096)
        ),
    )
    .unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "huge"]);
    let snapshot = repo.snapshot().unwrap();
    assert_eq!(snapshot.entries.len(), 1);
    assert!(
        snapshot.problems[0]
            .message
            .contains("more than `knowledge.max_item_bytes`"),
        "{:?}",
        snapshot.problems
    );
}

#[test]
fn a_branch_over_its_byte_limit_is_refused_whole_before_its_items_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_branch_bytes: 4096,
        ..Limits::default()
    };
    let repo = KnowledgeRepo::open_or_init(dir.path(), "main", limits).unwrap();
    let change = Change {
        put: (0..3)
            .map(|n| lesson(&format!("n{n}"), &"z".repeat(1000)))
            .collect(),
        remove: Vec::new(),
    };
    repo.commit("main", &change, &Author::aeterna(), "three")
        .unwrap();
    assert_eq!(repo.snapshot().unwrap().entries.len(), 3);
    // Two more by hand: now over 4 KiB in all.
    for n in 3..5 {
        std::fs::write(
            dir.path().join(format!("lessons/n{n}.md")),
            lesson(&format!("n{n}"), &"z".repeat(1000))
                .render()
                .unwrap(),
        )
        .unwrap();
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "two more"]);
    let error = repo.snapshot().expect_err("over the branch's byte limit");
    assert!(
        error.to_string().contains("`knowledge.max_branch_bytes`"),
        "{error}"
    );
}

#[test]
fn a_file_someone_is_editing_survives_a_commit_to_the_checked_out_branch() {
    let dir = tempfile::tempdir().unwrap();
    let repo = open(dir.path());
    repo.commit("main", &put(lesson("a", "a\n")), &Author::aeterna(), "a")
        .unwrap();
    let editing = dir.path().join("lessons/a.md");
    let draft = format!(
        "{}more, not committed yet\n",
        std::fs::read_to_string(&editing).unwrap()
    );
    std::fs::write(&editing, &draft).unwrap();
    repo.commit("main", &put(lesson("b", "b\n")), &Author::aeterna(), "b")
        .unwrap();
    assert_eq!(std::fs::read_to_string(&editing).unwrap(), draft);
    assert!(dir.path().join("lessons/b.md").exists());
    assert_eq!(
        git(dir.path(), &["status", "--porcelain"]).trim(),
        "M lessons/a.md"
    );
}
