//! Memory → repository: learned things announced to the knowledge service become proposals on
//! review branches, by each repository's capture rules, on real repositories read back with the
//! `git` CLI (a bare repository stands for the review remote).

use std::path::Path;
use std::sync::Arc;

use aeterna_knowledge::config::CaptureRules;
use aeterna_knowledge::{KnowledgeConfig, KnowledgeItem, KnowledgeService, RepositoryConfig};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::learned::{Learned, LearnedKind, LearnedSink, LearnedSource};
use aeterna_memory::{Layer, MemoryConfig, Scope};
use aeterna_testkit::git;

fn repository(path: &Path, scope: &str, capture: CaptureRules) -> RepositoryConfig {
    RepositoryConfig {
        path: path.to_owned(),
        branch: "main".into(),
        tenant: "acme".into(),
        layer: Layer::Team,
        scope: Some(scope.into()),
        remote: None,
        capture,
    }
}

fn lessons_only() -> CaptureRules {
    CaptureRules {
        lessons: true,
        ..CaptureRules::default()
    }
}

fn lesson(scope: &str, key: &str, applications: u32) -> Learned {
    Learned {
        kind: LearnedKind::Lesson,
        tenant_id: "acme".into(),
        scope: Scope::new(Layer::Team, scope),
        key: key.into(),
        title: "E0308: mismatched types".into(),
        description: Some("Convert the count with `u32::try_from`.".into()),
        body: format!(
            "## Resolution\n\nConvert the count with `u32::try_from`.\n\nApplied {applications} \
             times.\n"
        ),
        tags: vec!["hindsight".into(), "rust".into()],
        sources: vec![LearnedSource {
            kind: "resolution",
            id: "0190b5c4-0000-7000-8000-000000000001".into(),
        }],
        why: format!("Promoted into team core after {applications} applications."),
        by: "ana".into(),
        quality: None,
    }
}

fn note(quality: f32) -> Learned {
    Learned {
        kind: LearnedKind::Note,
        key: format!("note-{quality}"),
        title: format!("Port collisions in CI (quality {quality})"),
        quality: Some(quality),
        sources: vec![LearnedSource {
            kind: "note",
            id: "0190b5c4-0000-7000-8000-000000000002".into(),
        }],
        ..lesson("core", "n", 1)
    }
}

async fn service(dir: &Path, repositories: Vec<RepositoryConfig>) -> Arc<KnowledgeService> {
    let memory = aeterna_testkit::profile::open_memory(
        &dir.join("data"),
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("memory opens");
    KnowledgeService::start(
        KnowledgeConfig {
            repositories,
            ..KnowledgeConfig::default()
        },
        Arc::new(memory),
    )
    .expect("knowledge starts")
}

fn branches(checkout: &Path) -> Vec<String> {
    git(checkout, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_promoted_lesson_is_a_commit_on_a_review_branch_pushed_to_the_remote() {
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("core");
    let remote = dir.path().join("review.git");
    git(
        dir.path(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    let mut core = repository(&checkout, "core", lessons_only());
    core.remote = Some(remote.display().to_string());
    let knowledge = service(dir.path(), vec![core]).await;

    knowledge.learned(lesson("core", "lineage-1", 3)).await;

    let proposals: Vec<String> = branches(&checkout)
        .into_iter()
        .filter(|b| b.starts_with("aeterna/proposals/"))
        .collect();
    assert_eq!(proposals.len(), 1, "{proposals:?}");
    let branch = &proposals[0];
    assert!(
        branch.starts_with("aeterna/proposals/e0308-mismatched-types-"),
        "{branch}"
    );
    // Nothing reached the protected branch: a person merges the proposal.
    if branches(&checkout).contains(&"main".to_string()) {
        let on_main = git(&checkout, &["ls-tree", "-r", "--name-only", "main"]);
        assert!(!on_main.contains("lessons/"), "{on_main}");
    }
    let id = branch.trim_start_matches("aeterna/proposals/");
    let path = format!("lessons/{id}.md");
    let text = git(&checkout, &["show", &format!("{branch}:{path}")]);
    let item = KnowledgeItem::parse(&text).expect("the file is a valid item");
    assert_eq!(item.front.title, "E0308: mismatched types");
    assert_eq!(item.front.scope.as_deref(), Some("core"));
    assert_eq!(item.front.sources[0].kind, "resolution");
    assert!(item.body.contains("Applied 3 times"), "{}", item.body);
    let log = git(&checkout, &["log", "--format=%an|%s%n%b", branch]);
    assert!(
        log.starts_with("Aeterna Hindsight|propose lesson: E0308: mismatched types"),
        "{log}"
    );
    assert!(log.contains("after 3 applications"), "{log}");
    // The branch is on the remote, for review.
    let pushed = git(&remote, &["rev-parse", branch]);
    let local = git(&checkout, &["rev-parse", branch]);
    assert_eq!(pushed, local);

    // The same lesson again, unchanged: no new commit. Its track record grown: one more.
    knowledge.learned(lesson("core", "lineage-1", 3)).await;
    assert_eq!(git(&checkout, &["rev-parse", branch]), local);
    knowledge.learned(lesson("core", "lineage-1", 5)).await;
    let count = git(&checkout, &["rev-list", "--count", branch]);
    assert_eq!(count.trim(), "2");
    assert!(git(&checkout, &["show", &format!("{branch}:{path}")]).contains("Applied 5 times"));
    let status = &knowledge.status()[0].1;
    assert_eq!(status.captured, 3);
    assert_eq!(status.last_capture.as_deref(), Some(branch.as_str()));
    assert_eq!(status.last_capture_error, None);
    knowledge.shutdown().await;
}

#[tokio::test]
async fn only_the_rules_of_the_learned_things_own_scope_decide() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core");
    let web = dir.path().join("web");
    let knowledge = service(
        dir.path(),
        vec![
            repository(
                &core,
                "core",
                CaptureRules {
                    lessons: false,
                    notes: true,
                    min_note_quality: 0.7,
                },
            ),
            repository(&web, "web", lessons_only()),
        ],
    )
    .await;
    let proposals = |checkout: &Path| {
        branches(checkout)
            .into_iter()
            .filter(|b| b.starts_with("aeterna/proposals/"))
            .count()
    };

    // Core takes no lessons; web's rule does not reach core's lesson; another tenant's
    // lesson for "web" is not web's.
    knowledge.learned(lesson("core", "a", 3)).await;
    let mut other_tenant = lesson("web", "b", 3);
    other_tenant.tenant_id = "globex".into();
    knowledge.learned(other_tenant).await;
    assert_eq!((proposals(&core), proposals(&web)), (0, 0));

    // Notes: only good enough ones.
    knowledge.learned(note(0.5)).await;
    assert_eq!(proposals(&core), 0);
    knowledge.learned(note(0.9)).await;
    assert_eq!(proposals(&core), 1);
    let branch = branches(&core)
        .into_iter()
        .find(|b| b.starts_with("aeterna/proposals/"))
        .unwrap();
    let id = branch.trim_start_matches("aeterna/proposals/");
    let text = git(&core, &["show", &format!("{branch}:notes/{id}.md")]);
    assert!(text.contains("type: note"), "{text}");
    assert!(git(&core, &["log", "-1", "--format=%an", &branch]).starts_with("Aeterna Note-Taking"));

    // Web's rule takes web's lesson.
    knowledge.learned(lesson("web", "c", 3)).await;
    assert_eq!(proposals(&web), 1);
    knowledge.shutdown().await;
}

#[tokio::test]
async fn a_proposal_that_cannot_be_made_is_reported_in_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("core");
    let mut core = repository(&checkout, "core", lessons_only());
    // A remote that does not exist: the commit is made, the push fails.
    core.remote = Some(dir.path().join("missing.git").display().to_string());
    let knowledge = service(dir.path(), vec![core]).await;

    knowledge.learned(lesson("core", "a", 3)).await;

    let status = &knowledge.status()[0].1;
    assert_eq!(status.captured, 0);
    let error = status.last_capture_error.as_deref().expect("an error");
    assert!(error.contains("push"), "{error}");
    knowledge.shutdown().await;
}
