//! Secrets in captured events never reach storage: checked in the rows of every table and in
//! the raw bytes of the database and its WAL.

use serde_json::json;

use crate::{Agent, alice, event, for_whom, inspect, manual};

const GITHUB: &str = "ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng";
const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const PASSWORD: &str = "correct-horse-battery-staple";
const JWT: &str =
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

#[tokio::test]
async fn secrets_in_inputs_and_outputs_never_reach_storage() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    let mut leaky = vec![
        event(
            "bash",
            &format!("push with {GITHUB}"),
            json!({"command": format!("GITHUB_TOKEN={GITHUB} git push")}),
            "denied",
            false,
        ),
        event(
            "bash",
            "configure aws",
            json!({"command": "aws configure"}),
            &format!(
                "aws_access_key_id = {AWS_KEY}\naws_secret_access_key = {AWS_SECRET}\nerror: rejected"
            ),
            false,
        ),
        event(
            "http_get",
            "call the api",
            json!({"headers": {"Authorization": format!("Bearer {JWT}")}}),
            "401",
            false,
        ),
        event(
            "edit_file",
            "set the db password",
            json!({"path": "config/app.yaml", "content": format!("db_password: {PASSWORD}")}),
            "ok",
            true,
        ),
        event(
            "bash",
            "retry the push",
            json!({"command": "git push"}),
            "ok",
            true,
        ),
    ];
    leaky[3].tags = vec![format!("db_password={PASSWORD}")];
    leaky[3].metadata = Some(
        serde_json::from_value(json!({"api_key": PASSWORD, "files": ["config/app.yaml"]})).unwrap(),
    );
    agent.notes.capture(for_whom(&who, leaky)).unwrap();
    let note = agent.notes.distill(&who).await.unwrap().notes[0].id;
    assert!(agent.notes.snapshot().capture.redactions >= 6);

    let db = inspect(dir.path()).await;
    let rows: Vec<(String, String, String, String, String, String)> = sqlx::query_as(
        "SELECT tool_name, description, input, output, tags, metadata FROM trajectory_events",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    assert_eq!(rows.len(), 5);
    let (content, metadata, tags): (String, String, String) =
        sqlx::query_as("SELECT content, metadata, tags FROM memories WHERE id = ?")
            .bind(note.to_string())
            .fetch_one(&db)
            .await
            .unwrap();
    let mut stored: Vec<String> = rows
        .into_iter()
        .flat_map(|(a, b, c, d, e, f)| [a, b, c, d, e, f])
        .collect();
    stored.extend([content, metadata, tags]);
    let everything = stored.join("\n");
    for secret in [GITHUB, AWS_KEY, AWS_SECRET, PASSWORD, JWT] {
        assert!(
            !everything.contains(secret),
            "{secret} reached a row: {:?}",
            stored
                .iter()
                .filter(|s| s.contains(secret))
                .collect::<Vec<_>>()
        );
    }
    assert!(
        everything.contains("[REDACTED:github-token]"),
        "{everything}"
    );
    db.close().await;
    agent.close().await;

    // Nor any page of the files (the WAL is checkpointed or still there; check both).
    for file in ["aeterna.db", "aeterna.db-wal"] {
        let Ok(bytes) = std::fs::read(dir.path().join(file)) else {
            continue;
        };
        for secret in [GITHUB, AWS_KEY, AWS_SECRET, PASSWORD, JWT] {
            assert!(
                !bytes
                    .windows(secret.len())
                    .any(|window| window == secret.as_bytes()),
                "{secret} is in {file}"
            );
        }
    }
}
