//! Chains over real components: order, chaining, state, fail-open/closed, quarantine, tags.

use crate::common;

use std::time::Duration;

use aeterna_host::{
    CallContext, FaultKind, Hook, HostError, Message, Outcome, StateScope, ToolDefinition,
};
use common::{ExtDir, ctx, host, load_all};

#[tokio::test]
async fn priority_desc_then_id_asc_and_each_output_feeds_the_next() {
    let dir = ExtDir::new();
    dir.probe("low", -5, "");
    dir.probe("high", 10, "");
    dir.probe("mid-b", 0, "");
    dir.probe("mid-a", 0, "");
    let host = host();
    load_all(&host, &dir).await;

    let run = host.run_plain_text(&ctx(), "in".into()).await.unwrap();
    assert_eq!(run.output, "in[high:1][mid-a:1][mid-b:1][low:1]");
    let order: Vec<_> = run
        .report
        .rows
        .iter()
        .map(|row| row.extension.as_str())
        .collect();
    assert_eq!(order, ["high", "mid-a", "mid-b", "low"]);
    for row in &run.report.rows {
        assert_eq!(row.outcome, Outcome::Ok);
        assert!(row.fuel_used > 0, "{row:?}");
        assert!(row.duration > Duration::ZERO);
    }

    let run = host.run_llm_output(&ctx(), "x").await.unwrap();
    assert_eq!(run.output, "x[high:2][mid-a:2][mid-b:2][low:2]");
}

#[tokio::test]
async fn state_persists_per_tenant_session_and_extension() {
    let dir = ExtDir::new();
    dir.probe("counter", 0, "");
    dir.probe("other", -1, "");
    let host = host();
    load_all(&host, &dir).await;

    let a1 = CallContext::new("tenant-a", "s1");
    let a2 = CallContext::new("tenant-a", "s2");
    let b1 = CallContext::new("tenant-b", "s1");
    for expected in 1..=3 {
        let run = host.run_plain_text(&a1, String::new()).await.unwrap();
        assert_eq!(
            run.output,
            format!("[counter:{expected}][other:{expected}]")
        );
    }
    let run = host.run_plain_text(&a2, String::new()).await.unwrap();
    assert_eq!(
        run.output, "[counter:1][other:1]",
        "another session starts from scratch"
    );
    let run = host.run_plain_text(&b1, String::new()).await.unwrap();
    assert_eq!(
        run.output, "[counter:1][other:1]",
        "another tenant never sees tenant-a's state"
    );

    let stored = host
        .state_store()
        .get(&StateScope::new("tenant-a", "s1", "counter"), "calls")
        .await
        .unwrap();
    assert_eq!(stored.as_deref(), Some(&b"3"[..]));
}

#[tokio::test]
async fn a_faulting_callback_is_skipped_fail_open_and_its_state_is_discarded() {
    let dir = ExtDir::new();
    dir.probe("first", 2, "");
    dir.probe("second", 1, "");
    let host = host();
    load_all(&host, &dir).await;

    // Both probes fail on FAIL; the chain goes on with the previous value each time.
    let run = host.run_plain_text(&ctx(), "FAIL".into()).await.unwrap();
    assert_eq!(run.output, "FAIL");
    for row in &run.report.rows {
        let fault = row.outcome.fault().expect("fault");
        assert_eq!(fault.kind, FaultKind::ExtError);
        assert_eq!(fault.code.as_deref(), Some("probe-failure"));
    }
    // The counter incremented by the faulting calls was never committed.
    let run = host.run_plain_text(&ctx(), "ok".into()).await.unwrap();
    assert_eq!(run.output, "ok[first:1][second:1]");

    // A trap (a guest panic) in the middle of the chain: the next extension gets the value
    // from before the faulting one.
    let run = host.run_plain_text(&ctx(), "TRAP".into()).await.unwrap();
    assert_eq!(run.output, "TRAP");
    assert_eq!(
        run.report.rows[0].outcome.fault().unwrap().kind,
        FaultKind::Trap
    );
}

#[tokio::test]
async fn fail_closed_stops_the_chain_and_names_the_extension() {
    let dir = ExtDir::new();
    dir.probe("before", 10, "");
    dir.hostile("guard", "ext-error", "failure = \"closed\"\npriority = 5");
    dir.probe("after", 0, "");
    let host = host();
    load_all(&host, &dir).await;

    let error = host.run_plain_text(&ctx(), "in".into()).await.unwrap_err();
    let HostError::ChainStopped(stopped) = &error else {
        panic!("expected ChainStopped, got {error}")
    };
    assert_eq!(stopped.extension, "guard");
    assert_eq!(stopped.fault.kind, FaultKind::ExtError);
    let ran: Vec<_> = stopped
        .report
        .rows
        .iter()
        .map(|row| row.extension.as_str())
        .collect();
    assert_eq!(ran, ["before", "guard"], "`after` never ran");
    let message = error.to_string();
    assert!(
        message.contains("`guard`") && message.contains("ext-error"),
        "{message}"
    );

    // `after` really did not run: its counter is still zero.
    let after = host
        .state_store()
        .get(&StateScope::new("tenant-a", "session-1", "after"), "calls")
        .await
        .unwrap();
    assert_eq!(after, None);
}

#[tokio::test]
async fn three_consecutive_faults_quarantine_until_the_cooldown_ends() {
    let dir = ExtDir::new();
    dir.probe("flaky", 0, "");
    let host = host(); // threshold 3, cool-down 300 ms
    load_all(&host, &dir).await;

    for _ in 0..3 {
        let run = host.run_plain_text(&ctx(), "FAIL".into()).await.unwrap();
        assert!(run.report.rows[0].outcome.fault().is_some());
    }
    let run = host.run_plain_text(&ctx(), "fine".into()).await.unwrap();
    assert_eq!(run.output, "fine", "a quarantined extension is skipped");
    assert!(
        matches!(run.report.rows[0].outcome, Outcome::Quarantined { remaining_ms } if remaining_ms <= 300)
    );
    assert!(host.status()[0].quarantined_ms.is_some());

    tokio::time::sleep(Duration::from_millis(350)).await;
    let run = host.run_plain_text(&ctx(), "fine".into()).await.unwrap();
    assert_eq!(run.output, "fine[flaky:1]", "released after the cool-down");
    assert_eq!(
        host.status()[0].consecutive_faults,
        0,
        "a success resets the count"
    );
}

#[tokio::test]
async fn a_success_resets_the_fault_count() {
    let dir = ExtDir::new();
    dir.probe("flaky", 0, "");
    let host = host();
    load_all(&host, &dir).await;
    for input in ["FAIL", "FAIL", "ok", "FAIL", "FAIL"] {
        host.run_plain_text(&ctx(), input.into()).await.unwrap();
    }
    let run = host.run_plain_text(&ctx(), "ok".into()).await.unwrap();
    assert_eq!(
        run.report.rows[0].outcome,
        Outcome::Ok,
        "never three in a row, never quarantined"
    );
}

#[tokio::test]
async fn a_quarantined_fail_closed_extension_stops_its_chain() {
    let dir = ExtDir::new();
    dir.hostile("guard", "ext-error", "failure = \"closed\"");
    let host = host();
    load_all(&host, &dir).await;
    for _ in 0..3 {
        assert!(host.run_plain_text(&ctx(), "x".into()).await.is_err());
    }
    let error = host.run_plain_text(&ctx(), "x".into()).await.unwrap_err();
    let HostError::ChainStopped(stopped) = error else {
        panic!("expected ChainStopped")
    };
    assert_eq!(stopped.fault.kind, FaultKind::Quarantined);
}

#[tokio::test]
async fn input_messages_chain_with_session_info_and_tools() {
    let dir = ExtDir::new();
    dir.probe("a", 1, "");
    dir.probe("b", 0, "");
    let host = host();
    load_all(&host, &dir).await;

    let ctx = CallContext::new("t1", "s9")
        .with_user("ana")
        .with_project("p")
        .with_tools(vec![
            ToolDefinition {
                name: "grep".into(),
                description: String::new(),
                input_schema: "{}".into(),
            },
            ToolDefinition {
                name: "edit".into(),
                description: String::new(),
                input_schema: "{}".into(),
            },
        ]);
    let run = host
        .run_input_messages(&ctx, vec![Message::new("user", "hello")])
        .await
        .unwrap();
    assert_eq!(
        run.output,
        [
            Message::new("user", "hello"),
            Message::new(
                "system",
                "a:1 tenant=t1 session=s9 user=ana project=p tools=grep,edit"
            ),
            Message::new(
                "system",
                "b:1 tenant=t1 session=s9 user=ana project=p tools=grep,edit"
            ),
        ]
    );
}

#[tokio::test]
async fn tag_blocks_go_through_their_handlers_and_the_rest_is_untouched() {
    let dir = ExtDir::new();
    dir.probe("todo-high", 5, "reg-hooks = \"tag\"\nreg-tags = \"todo\"");
    dir.probe(
        "todo-low",
        1,
        "reg-hooks = \"tag\"\nreg-tags = \"todo,note\"",
    );
    dir.probe("text", 0, "reg-hooks = \"llm-output\"\nreg-tags = \"\"");
    let host = host();
    load_all(&host, &dir).await;

    let input = "a <todo who=\"ana\" urgent>ship</todo> b <note>n</note> c <other>x</other>\n";
    let run = host.run_tags(&ctx(), input).await.unwrap();
    // todo: todo-high first, then todo-low receives todo-high's output as its content.
    assert_eq!(
        run.output,
        "a (todo-low:1 todo who=ana urgent=|(todo-high:1 todo who=ana urgent=|ship)) b (todo-low:2 note|n) c <other>x</other>\n"
    );
    let tags: Vec<_> = run
        .report
        .rows
        .iter()
        .map(|r| (r.extension.as_str(), r.tag.as_deref()))
        .collect();
    assert_eq!(
        tags,
        [
            ("todo-high", Some("todo")),
            ("todo-low", Some("todo")),
            ("todo-low", Some("note"))
        ]
    );

    // The whole LLM output: tags first, then the llm-output chain over the result.
    let run = host
        .run_llm_output(&ctx(), "<note>z</note>!")
        .await
        .unwrap();
    assert_eq!(run.output, "(todo-low:3 note|z)![text:1]");
}

#[tokio::test]
async fn a_faulting_tag_handler_leaves_the_block_as_it_was() {
    let dir = ExtDir::new();
    dir.probe("todo", 0, "reg-hooks = \"tag\"\nreg-tags = \"todo\"");
    let host = host();
    load_all(&host, &dir).await;
    let input = "keep <todo a='1'>FAIL</todo> this";
    let run = host.run_tags(&ctx(), input).await.unwrap();
    assert_eq!(run.output, input);
    assert_eq!(
        run.report.rows[0].outcome.fault().unwrap().kind,
        FaultKind::ExtError
    );
}

#[tokio::test]
async fn chains_run_concurrently() {
    let dir = ExtDir::new();
    dir.probe("p", 0, "");
    let host = host();
    load_all(&host, &dir).await;
    let mut tasks = Vec::new();
    for session in 0..32 {
        let host = host.clone();
        tasks.push(tokio::spawn(async move {
            let ctx = CallContext::new("t", format!("s{session}"));
            host.run_plain_text(&ctx, "x".into()).await.unwrap().output
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), "x[p:1]");
    }
}

#[tokio::test]
async fn prompt_additions_and_tool_config_are_aggregated_in_order() {
    let dir = ExtDir::new();
    dir.probe(
        "one",
        1,
        "reg-prompt = \"be brief\"\nreg-schema = '{\"type\":\"object\"}'",
    );
    dir.probe("two", 0, "reg-prompt = \"cite files\"");
    let host = host();
    load_all(&host, &dir).await;

    let additions: Vec<_> = host
        .prompt_additions()
        .into_iter()
        .map(|a| (a.extension, a.text))
        .collect();
    assert_eq!(
        additions,
        [
            ("one".to_owned(), "be brief".to_owned()),
            ("two".to_owned(), "cite files".to_owned())
        ]
    );
    let tools = host.apply_tool_config(vec![
        ToolDefinition {
            name: "removed-tool".into(),
            description: String::new(),
            input_schema: "{}".into(),
        },
        ToolDefinition {
            name: "kept".into(),
            description: String::new(),
            input_schema: "{}".into(),
        },
    ]);
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["kept", "probe-tool"]);
    assert_eq!(host.tool_configs().len(), 2);
}

#[tokio::test]
async fn tag_blocks_beyond_the_limit_are_left_as_they_are() {
    let dir = ExtDir::new();
    dir.probe("todo", 0, "reg-hooks = \"tag\"\nreg-tags = \"t\"");
    let mut config = common::test_config();
    config.max_tag_blocks = 2;
    let host = aeterna_host::ExtensionHost::new(config).unwrap();
    load_all(&host, &dir).await;
    let run = host
        .run_tags(&ctx(), "<t>1</t><t>2</t><t>3</t>")
        .await
        .unwrap();
    assert_eq!(run.output, "(todo:1 t|1)(todo:2 t|2)<t>3</t>");
    assert_eq!(run.report.rows.len(), 2);
}

#[tokio::test]
async fn a_whole_llm_response_flows_through_llm_output_and_tag_extensions_by_priority() {
    let dir = ExtDir::new();
    dir.probe(
        "text-high",
        10,
        "reg-hooks = \"llm-output\"\nreg-tags = \"\"",
    );
    dir.probe("todo", 5, "reg-hooks = \"tag\"\nreg-tags = \"todo\"");
    dir.probe("note", 4, "reg-hooks = \"tag\"\nreg-tags = \"note\"");
    dir.probe("text-low", 0, "reg-hooks = \"llm-output\"\nreg-tags = \"\"");
    let host = host();
    load_all(&host, &dir).await;

    let run = host
        .run_llm_output(&ctx(), "<todo>x</todo> <note>y</note>")
        .await
        .unwrap();
    // text-high sees the raw response (tags included); the two tag extensions form one stage
    // over its output; text-low sees the result.
    assert_eq!(
        run.output,
        "(todo:1 todo|x) (note:1 note|y)[text-high:1][text-low:1]"
    );
    let order: Vec<_> = run
        .report
        .rows
        .iter()
        .map(|r| (r.extension.as_str(), r.hook))
        .collect();
    assert_eq!(
        order,
        [
            ("text-high", Hook::LlmOutput),
            ("todo", Hook::Tag),
            ("note", Hook::Tag),
            ("text-low", Hook::LlmOutput),
        ]
    );
}
