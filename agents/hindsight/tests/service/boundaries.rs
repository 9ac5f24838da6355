//! What must never happen: secrets reaching storage, one tenant or scope seeing another's
//! data, bad input writing anything.

use aeterna_memory::storage::Database;

use super::*;

#[tokio::test]
async fn secrets_in_error_text_and_resolutions_never_reach_storage() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let text = fixture("python/multi/leaky_config.txt");
    let secrets = [
        "Xq7pR2vLm9sW",
        "ghp_R4nd0mT0k3nF0rT3st1ngPurp0s3sOnly123",
        "AKIAZ3MHT6ZQ4KXLP7WA",
        "ada.lovelace@example.com",
        "sk_live_51HxQmPlK9vTr4eW",
        "grace.hopper@example.org",
    ];
    for secret in &secrets[..4] {
        assert!(text.contains(secret), "the fixture carries {secret}");
    }
    let captured = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: text.clone(),
                layer: None,
            },
        )
        .await
        .expect("capture");
    let resolution = h
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(captured.signatures[0].signature_id),
                error_text: None,
                resolution_id: None,
                description: "rotated token ghp_R4nd0mT0k3nF0rT3st1ngPurp0s3sOnly123; ask grace.hopper@example.org".into(),
                changes: Changes {
                    diff: Some("-API_KEY=sk_live_51HxQmPlK9vTr4eW\n+API_KEY=${API_KEY}".into()),
                    files: vec![FileChange { file: ".env".into(), summary: "DB_PASSWORD=Xq7pR2vLm9sW removed".into() }],
                },
                layer: None,
            },
        )
        .await
        .expect("resolve")
        .resolution;
    feedback(&h, &who, resolution.id, true).await;
    h.hindsight
        .feedback(
            &who,
            FeedbackRequest {
                resolution_id: resolution.id,
                success: true,
                comment: Some("worked, thanks ada.lovelace@example.com".into()),
            },
        )
        .await
        .expect("feedback");

    // Every text and blob column of every hindsight table, and the notes, read back raw.
    let mut scanned = 0;
    for table in [
        "hindsight_signatures",
        "hindsight_resolutions",
        "hindsight_feedback",
        "hindsight_promotions",
        "memories",
    ] {
        for value in raw_values(h.memory.database(), table).await {
            scanned += value.len();
            for secret in secrets {
                assert!(!value.contains(secret), "{table} stores {secret}: {value}");
            }
        }
    }
    assert!(
        scanned > 1000,
        "the scan read the stored rows ({scanned} bytes)"
    );
    let stored = h
        .hindsight
        .signature(&who, captured.signatures[0].signature_id)
        .await
        .expect("visible");
    assert!(stored.sample.contains("[REDACTED:"), "{}", stored.sample);
    assert!(
        stored.signature.message_pattern.contains("<SECRET>"),
        "{:?}",
        stored.signature
    );
}

#[tokio::test]
async fn tenants_and_scopes_are_isolated() {
    let h = harness(HindsightConfig::default()).await;
    let acme = identity("acme", "shop", None);
    let globex = identity("globex", "shop", None);
    let sig = capture(&h, &acme, "python/NameError/report.txt").await;
    let resolution = resolve(&h, &acme, sig.signature_id, "define the variable").await;

    assert_eq!(
        query(&h, &globex, "python/NameError/cli.txt").await.status,
        QueryStatus::NoKnownResolution
    );
    let denied = h
        .hindsight
        .feedback(
            &globex,
            FeedbackRequest {
                resolution_id: resolution.id,
                success: true,
                comment: None,
            },
        )
        .await
        .expect_err("another tenant");
    assert!(
        denied.to_string().contains("no resolution with id"),
        "{denied}"
    );
    assert!(
        h.hindsight
            .signature(&globex, sig.signature_id)
            .await
            .is_err()
    );
    // Another project of the same tenant does not see project-layer knowledge either.
    let other_project = identity("acme", "billing", None);
    assert_eq!(
        query(&h, &other_project, "python/NameError/cli.txt")
            .await
            .status,
        QueryStatus::NoKnownResolution
    );
    assert_eq!(
        query(&h, &acme, "python/NameError/cli.txt").await.status,
        QueryStatus::Matched
    );
}

#[tokio::test]
async fn bad_input_gets_clear_errors_and_writes_nothing() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let empty = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: "  ".into(),
                layer: None,
            },
        )
        .await;
    assert!(
        empty
            .unwrap_err()
            .to_string()
            .contains("`error_text` is empty")
    );
    let huge = "x".repeat(300 * 1024);
    let big = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: huge,
                layer: None,
            },
        )
        .await;
    assert!(big.unwrap_err().to_string().contains("the limit is"));
    let clean = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: "Compiling shop v0.1.0\nFinished".into(),
                layer: None,
            },
        )
        .await;
    assert!(matches!(clean, Err(HindsightError::NoErrorRecognised)));
    let no_team = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: fixture("go/undefined/main.txt"),
                layer: Some(Layer::Team),
            },
        )
        .await;
    assert!(no_team.unwrap_err().to_string().contains("needs `team_id`"));
    let unknown = h
        .hindsight
        .feedback(
            &who,
            FeedbackRequest {
                resolution_id: Uuid::now_v7(),
                success: true,
                comment: None,
            },
        )
        .await;
    assert!(matches!(
        unknown,
        Err(HindsightError::NotFound {
            what: "resolution",
            ..
        })
    ));
    let both = h
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some("x".into()),
                signature: Some(extract(&fixture("go/undefined/main.txt")).remove(0)),
                ..QueryRequest::default()
            },
        )
        .await;
    assert!(both.unwrap_err().to_string().contains("not both"));
    let limit = h
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some(fixture("go/undefined/main.txt")),
                limit: Some(0),
                ..QueryRequest::default()
            },
        )
        .await;
    assert!(limit.unwrap_err().to_string().contains("`limit` is 0"));
    let threshold = h
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some(fixture("go/undefined/main.txt")),
                threshold: Some(1.5),
                ..QueryRequest::default()
            },
        )
        .await;
    assert!(threshold.unwrap_err().to_string().contains("within 0..1"));
    let sig = capture(&h, &who, "go/undefined/main.txt").await;
    let blank = h
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(sig.signature_id),
                error_text: None,
                resolution_id: None,
                description: " ".into(),
                changes: Changes::default(),
                layer: None,
            },
        )
        .await;
    assert!(
        blank
            .unwrap_err()
            .to_string()
            .contains("`description` is empty")
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_resolutions").await,
        0
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_signatures").await,
        1
    );
}

/// Every value stored in `table`, as text: each column's bytes on SQLite, each row as JSON on
/// PostgreSQL.
async fn raw_values(db: &Database, table: &str) -> Vec<String> {
    match db {
        Database::Sqlite(db) => {
            let columns: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT name FROM pragma_table_info('{table}')"
            )))
            .fetch_all(&db.pool)
            .await
            .expect("columns");
            let mut values = Vec::new();
            for column in columns {
                let sql = format!("SELECT CAST({column} AS BLOB) FROM {table}");
                let blobs: Vec<Option<Vec<u8>>> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                    .fetch_all(&db.pool)
                    .await
                    .expect("scan");
                values.extend(
                    blobs.into_iter().map(|bytes| {
                        String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned()
                    }),
                );
            }
            values
        }
        Database::Postgres(db) => sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT row_to_json(t)::text FROM {table} AS t"
        )))
        .fetch_all(&db.pool)
        .await
        .expect("scan"),
    }
}
