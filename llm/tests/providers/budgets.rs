//! Token budgets: caps per tenant and role from the configuration, usage counted from the
//! providers' answers, the cap checked before a call is sent, usage kept across restarts.

use aeterna_llm::{Api, Caps, ErrorKind, LlmRoles, Role, TenantBudget};
use prometheus_client::registry::Registry;

use crate::standin::{Reply, StandIn};
use crate::{analyze_chain, ask, config, provider, start};

/// Every answer reports 300 input and 100 output tokens.
fn answer() -> Reply {
    Reply::Answer {
        text: "ok".into(),
        input_tokens: 300,
        output_tokens: 100,
    }
}

/// `roles` has counted acme's 800 analyze tokens of its 900 a day, and refuses the next call.
async fn refuses_acme_at_800_of_900(roles: &LlmRoles) {
    let exhausted = ask(analyze_chain(roles), "acme")
        .await
        .expect_err("over the cap");
    assert_eq!(exhausted.skipped[0].kind, ErrorKind::BudgetExhausted);
    assert!(
        exhausted.skipped[0].reason.contains("800 of its 900"),
        "{exhausted}"
    );
    assert_eq!(roles.ledger().used("acme", Role::Analyze), (800, 800));
}

fn metrics_text(roles: &LlmRoles) -> String {
    let mut registry = Registry::with_prefix("aeterna");
    roles.register_metrics(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    text
}

#[tokio::test]
async fn caps_are_enforced_per_tenant_from_the_usage_providers_report() {
    let stand_in = StandIn::start(answer()).await;
    let mut config = config(vec![("local", provider(Api::OpenAi, &stand_in.base_url()))]);
    // acme: 900 tokens an hour for analyze; everyone else is unlimited.
    config.budgets.tenants.insert(
        "acme".into(),
        TenantBudget {
            roles: [(
                Role::Analyze,
                Caps {
                    hourly_tokens: Some(900),
                    daily_tokens: None,
                },
            )]
            .into(),
            ..TenantBudget::default()
        },
    );
    let roles = start(config);
    // Each call reserves its prompt estimate (20) plus max_tokens (100), and is charged the
    // 400 the answer reports: the third call's 120 could pass the cap after 800.
    ask(analyze_chain(&roles), "acme").await.expect("first");
    ask(analyze_chain(&roles), "acme").await.expect("second");
    assert_eq!(roles.ledger().used("acme", Role::Analyze), (800, 800));
    let exhausted = ask(analyze_chain(&roles), "acme")
        .await
        .expect_err("over the cap");
    assert_eq!(stand_in.requests(), 2, "nothing sent over the cap");
    let skip = &exhausted.skipped[0];
    assert_eq!(skip.kind, ErrorKind::BudgetExhausted);
    assert!(
        skip.reason
            .contains("\"acme\" has used 800 of its 900 analyze tokens this hour"),
        "{}",
        skip.reason
    );

    // Another tenant, and another role of the same tenant, are not affected.
    ask(analyze_chain(&roles), "beta")
        .await
        .expect("beta is unlimited");
    ask(roles.chain(Role::Summarize), "acme")
        .await
        .expect("summarize has no cap");
    assert_eq!(stand_in.requests(), 4);

    let metrics = metrics_text(&roles);
    for line in [
        r#"aeterna_llm_tokens_total{tenant="acme",role="analyze",direction="input"} 600"#,
        r#"aeterna_llm_tokens_total{tenant="acme",role="analyze",direction="output"} 200"#,
        r#"aeterna_llm_tokens_total{tenant="beta",role="analyze",direction="input"} 300"#,
        r#"aeterna_llm_budget_exhausted_total{tenant="acme",role="analyze"} 1"#,
        r#"aeterna_llm_served_total{role="analyze",provider="deterministic"} 1"#,
        r#"aeterna_llm_served_total{role="analyze",provider="local"} 3"#,
        r#"aeterna_llm_requests_total{provider="local",outcome="ok"} 4"#,
    ] {
        assert!(metrics.contains(line), "missing {line}:\n{metrics}");
    }
}

#[tokio::test]
async fn usage_is_kept_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let db = aeterna_testkit::profile::open_database(dir.path())
        .await
        .unwrap();
    let stand_in = StandIn::start(answer()).await;
    let mut config = config(vec![("local", provider(Api::OpenAi, &stand_in.base_url()))]);
    config.budgets.daily_tokens = Some(900);

    let first = LlmRoles::start(config.clone(), Some(db.clone())).unwrap();
    ask(analyze_chain(&first), "acme").await.expect("first");
    ask(analyze_chain(&first), "acme").await.expect("second");
    first.shutdown().await;
    drop(first);

    // A new process reads today's 800 tokens back before its first call.
    let second = LlmRoles::start(config, Some(db.clone())).unwrap();
    refuses_acme_at_800_of_900(&second).await;
    ask(analyze_chain(&second), "beta")
        .await
        .expect("beta has its own budget");
    second.shutdown().await;

    let rows: Vec<(String, String, i64, i64, i64)> = aeterna_memory::with_pool!(&db, |pool| {
        sqlx::query_as(
            "SELECT tenant_id, role, input_tokens, output_tokens, calls FROM llm_token_usage \
             ORDER BY tenant_id",
        )
        .fetch_all(pool)
        .await
        .unwrap()
    });
    assert_eq!(
        rows,
        vec![
            ("acme".into(), "analyze".into(), 600, 200, 2),
            ("beta".into(), "analyze".into(), 300, 100, 1),
        ]
    );
}

/// Two instances on one PostgreSQL: each counts the other's usage once it has been written,
/// so together they stay within the cap.
#[tokio::test]
async fn instances_on_one_database_count_each_others_usage() {
    if aeterna_testkit::profile::backend() != aeterna_testkit::profile::Backend::Postgres {
        eprintln!("SKIPPED on SQLite: one data dir has one server; the PostgreSQL pass runs it");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = aeterna_testkit::profile::open_database(dir.path())
        .await
        .unwrap();
    let stand_in = StandIn::start(answer()).await;
    let mut config = config(vec![("local", provider(Api::OpenAi, &stand_in.base_url()))]);
    config.budgets.daily_tokens = Some(900);
    let first = LlmRoles::start(config.clone(), Some(db.clone())).unwrap();
    let second = LlmRoles::start(config, Some(db.clone())).unwrap();

    ask(analyze_chain(&second), "acme")
        .await
        .expect("second's own call");
    ask(analyze_chain(&first), "acme")
        .await
        .expect("first's call");
    first.ledger().flush().await.unwrap();
    second.ledger().flush().await.unwrap();
    // Alone, the second instance would see its own 400 and allow another call.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    refuses_acme_at_800_of_900(&second).await;
    first.shutdown().await;
    second.shutdown().await;
}
