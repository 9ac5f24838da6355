//! The SDK's public API against its native host stand-in, `testing::TestHost`.
//!
//! These tests pin the semantics the WIT documents (quota, eviction, key rules, transactions), so
//! that extension authors' native tests behave like the real host.

use aeterna_extension_sdk::testing::{LogRecord, TestHost};
use aeterna_extension_sdk::{
    ExtError, Extension, Hook, LogLevel, Message, Registration, SessionInfo, Tag, ToolDefinition,
    config, host, state,
};
use serde::{Deserialize, Serialize};

/// Declares every hook and overrides none: the trait's defaults are under test.
struct PassThrough;

impl Extension for PassThrough {
    fn register() -> Registration {
        Registration::new("pass-through", "0.1.0")
            .with_hook(Hook::InputMessages)
            .with_hook(Hook::PlainText)
            .with_hook(Hook::LlmOutput)
            .with_tag("note")
    }
}

/// Declares only the plain-text hook.
struct PlainOnly;

impl Extension for PlainOnly {
    fn register() -> Registration {
        Registration::new("plain-only", "0.1.0").with_hook(Hook::PlainText)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        let n = state::update_json("calls", |n: &mut u32| {
            *n += 1;
            *n
        })?;
        aeterna_extension_sdk::info!("call {n}");
        if text == "fail" {
            return Err(ExtError::invalid_input("asked to fail"));
        }
        Ok(format!("{text}#{n}"))
    }
}

fn kib(n: usize) -> Vec<u8> {
    vec![b'x'; n * 1024]
}

#[test]
fn default_hooks_pass_their_input_through() {
    let host = TestHost::new();
    let messages = vec![Message::system("be brief"), Message::user("hello")];
    assert_eq!(
        host.input_messages::<PassThrough>(messages.clone())
            .unwrap(),
        messages
    );
    assert_eq!(host.plain_text::<PassThrough>("text").unwrap(), "text");
    assert_eq!(host.llm_output::<PassThrough>("out").unwrap(), "out");
    let tag = Tag::new("note", "keep me").with_attribute("by", "ana");
    assert_eq!(
        host.tag::<PassThrough>(tag).unwrap(),
        r#"<note by="ana">keep me</note>"#
    );
}

#[test]
fn state_commits_only_when_the_callback_returns_ok() {
    let host = TestHost::new();
    assert_eq!(host.plain_text::<PlainOnly>("a").unwrap(), "a#1");
    let error = host.plain_text::<PlainOnly>("fail").unwrap_err();
    assert_eq!(error.code, "invalid-input");
    // The failed call's increment was discarded, so the counter continues from 1.
    assert_eq!(host.state_json::<u32>("calls"), Some(1));
    assert_eq!(host.plain_text::<PlainOnly>("b").unwrap(), "b#2");
    // Logs are not transactional: the failed call's line is kept.
    let lines: Vec<_> = host.logs().into_iter().map(|l| l.message).collect();
    assert_eq!(lines, ["call 1", "call 2", "call 2"]);
}

#[test]
fn reads_within_a_callback_see_its_own_writes() {
    let host = TestHost::new();
    host.call(|| {
        state::set("k", b"v1")?;
        assert_eq!(state::get("k").as_deref(), Some(&b"v1"[..]));
        assert!(state::delete("k"));
        assert!(!state::delete("k"));
        assert_eq!(state::get("k"), None);
        state::set("k", b"v2")?;
        Ok(())
    })
    .unwrap();
    assert_eq!(host.state("k").as_deref(), Some(&b"v2"[..]));
}

#[test]
fn usage_counts_key_and_value_bytes_and_overwrites_replace() {
    let host = TestHost::new();
    host.set_state("abc", b"12345").unwrap();
    host.set_state("abc", b"12").unwrap();
    host.set_state("d", b"").unwrap();
    let usage = host.usage();
    assert_eq!(usage.used_bytes, 3 + 2 + 1);
    assert_eq!(usage.keys, 2);
    assert_eq!(usage.quota_bytes, 1 << 20);
    host.call(|| {
        assert_eq!(state::usage().used_bytes, 6);
        state::clear();
        assert_eq!(state::usage().used_bytes, 0);
        assert!(state::keys().is_empty());
        Ok(())
    })
    .unwrap();
    assert!(host.state_keys().is_empty());
}

#[test]
fn set_past_the_quota_evicts_least_recently_used_keys() {
    // 1 MiB quota; four values of 300 KiB each cannot all fit.
    let host = TestHost::new();
    for key in ["a", "b", "c"] {
        host.set_state(key, kib(300)).unwrap();
    }
    // Reading `a` makes `b` the least recently used.
    host.call(|| {
        assert!(state::get("a").is_some());
        Ok(())
    })
    .unwrap();
    host.call(|| state::set("d", kib(300)).map_err(ExtError::from))
        .unwrap();
    assert_eq!(host.state_keys(), ["a", "c", "d"]);
    assert!(host.usage().used_bytes <= 1 << 20);

    // A write needing two evictions takes the two oldest.
    host.set_state("e", kib(600)).unwrap();
    assert_eq!(host.state_keys(), ["d", "e"]);
}

#[test]
fn a_write_that_exactly_fills_the_quota_fits() {
    let host = TestHost::new().with_quota_bytes(100);
    host.set_state("k", vec![0; 99]).unwrap();
    assert_eq!(host.usage().used_bytes, 100);
    host.set_state("j", vec![0; 1]).unwrap();
    assert_eq!(host.state_keys(), ["j"]);
}

#[test]
fn a_single_value_larger_than_the_quota_is_refused_and_evicts_nothing() {
    let host = TestHost::new();
    host.set_state("keep", b"me").unwrap();
    let error = host.set_state("big", vec![0; 1 << 20]).unwrap_err();
    match &error {
        state::StateError::QuotaExceeded {
            key,
            needed_bytes,
            usage,
        } => {
            assert_eq!(key, "big");
            assert_eq!(*needed_bytes, (1 << 20) + 3);
            assert_eq!(usage.used_bytes, 6);
            assert_eq!(usage.quota_bytes, 1 << 20);
        }
        other => panic!("expected quota-exceeded, got {other:?}"),
    }
    assert_eq!(ExtError::from(error).code, "quota-exceeded");
    assert_eq!(host.state_keys(), ["keep"]);
}

#[test]
fn keys_must_be_non_empty_and_at_most_one_kib() {
    let host = TestHost::new();
    assert!(matches!(
        host.set_state("", b"v"),
        Err(state::StateError::InvalidKey { .. })
    ));
    host.set_state(&"k".repeat(1024), b"v").unwrap();
    let error = host.set_state(&"k".repeat(1025), b"v").unwrap_err();
    assert!(
        error.to_string().contains("1025 bytes"),
        "the reason says why: {error}"
    );
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Counts {
    seen: u32,
    names: Vec<String>,
}

#[test]
fn json_helpers_round_trip_and_report_bad_json() {
    let host = TestHost::new();
    host.call(|| {
        assert_eq!(state::get_json::<Counts>("counts")?, None);
        state::set_json(
            "counts",
            &Counts {
                seen: 2,
                names: vec!["a".into()],
            },
        )?;
        let counts: Counts = state::get_json("counts")?.unwrap();
        assert_eq!(counts.seen, 2);
        state::set("broken", b"{not json")?;
        let error = state::get_json::<Counts>("broken").unwrap_err();
        assert!(matches!(error, state::StateError::Decode { .. }));
        assert_eq!(ExtError::from(error).code, "invalid-state");
        Ok(())
    })
    .unwrap();
    assert_eq!(
        host.state_json::<Counts>("counts"),
        Some(Counts {
            seen: 2,
            names: vec!["a".into()]
        })
    );
}

#[test]
fn config_values_read_as_strings_numbers_json_and_lists() {
    let host = TestHost::new()
        .with_config("name", "aeterna")
        .with_config("max_tokens", "2000")
        .with_config("ratio", "oops")
        .with_config("rules", r#"["a","b"]"#)
        .with_config("one_rule", "[wip] keep it short")
        .with_config("table", r#"{"x":1}"#);
    host.call(|| {
        assert_eq!(config::get("name").as_deref(), Some("aeterna"));
        assert_eq!(config::get("absent"), None);
        assert_eq!(config::parse::<u32>("max_tokens")?, Some(2000));
        assert_eq!(config::parse_or::<u32>("absent", 7)?, 7);
        let error = config::parse::<f64>("ratio").unwrap_err();
        assert_eq!(error.key, "ratio");
        assert_eq!(ExtError::from(error).code, "invalid-config");
        assert_eq!(config::list("rules")?, ["a", "b"]);
        assert_eq!(config::list("one_rule")?, ["[wip] keep it short"]);
        assert_eq!(config::list("absent")?, Vec::<String>::new());
        assert!(config::list("table").is_err(), "a table is not a list");
        assert_eq!(
            config::json::<serde_json::Value>("table")?,
            Some(serde_json::json!({"x": 1}))
        );
        assert_eq!(config::all().len(), 6);
        Ok(())
    })
    .unwrap();
}

#[test]
fn config_list_refuses_a_json_array_of_non_strings() {
    let host = TestHost::new().with_config("rules", "[1, 2]");
    let error = host.call(|| Ok(config::list("rules")?)).unwrap_err();
    assert_eq!(error.code, "invalid-config");
    assert!(error.message.contains("rules"), "{}", error.message);
}

#[test]
fn session_tools_and_log_levels_reach_the_extension() {
    let session = SessionInfo {
        tenant_id: "acme".into(),
        session_id: "s-1".into(),
        user_id: Some("ana".into()),
        project_id: None,
    };
    let tool = ToolDefinition::new("grep", "search", r#"{"type":"object"}"#);
    let host = TestHost::new()
        .with_session(session.clone())
        .with_tools(vec![tool.clone()]);
    host.call(|| {
        assert_eq!(host::session(), session);
        assert_eq!(host::tools(), vec![tool.clone()]);
        aeterna_extension_sdk::trace!("t");
        aeterna_extension_sdk::debug!("d");
        aeterna_extension_sdk::info!("i {}", 1);
        aeterna_extension_sdk::warn!("w");
        aeterna_extension_sdk::error!("e");
        Ok(())
    })
    .unwrap();
    let levels: Vec<LogLevel> = host.take_logs().iter().map(|l| l.level).collect();
    assert_eq!(
        levels,
        [
            LogLevel::Trace,
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error
        ]
    );
    assert_eq!(host.logs(), Vec::<LogRecord>::new());
}

#[test]
#[should_panic(expected = "does not declare the plain-text hook")]
fn hook_helpers_refuse_undeclared_hooks() {
    struct OutputOnly;
    impl Extension for OutputOnly {
        fn register() -> Registration {
            Registration::new("output-only", "0.1.0").with_hook(Hook::LlmOutput)
        }
    }
    let _ = TestHost::new().plain_text::<OutputOnly>("x");
}

#[test]
#[should_panic(expected = "does not declare the tag `todo`")]
fn tag_helper_refuses_undeclared_tag_names() {
    let _ = TestHost::new().tag::<PassThrough>(Tag::new("todo", "x"));
}

#[test]
#[should_panic(expected = "must match [a-z0-9][a-z0-9._-]*")]
fn register_checks_the_id_like_the_host() {
    struct BadId;
    impl Extension for BadId {
        fn register() -> Registration {
            Registration::new("Bad Id", "0.1.0").with_hook(Hook::PlainText)
        }
    }
    TestHost::new().register::<BadId>();
}

#[test]
#[should_panic(expected = "declares no hooks")]
fn register_refuses_an_extension_without_hooks() {
    struct Nothing;
    impl Extension for Nothing {
        fn register() -> Registration {
            Registration::new("nothing", "0.1.0")
        }
    }
    TestHost::new().register::<Nothing>();
}

#[test]
#[should_panic(expected = "must be a JSON Schema")]
fn register_refuses_a_schema_that_is_not_an_object() {
    struct NumberSchema;
    impl Extension for NumberSchema {
        fn register() -> Registration {
            Registration::new("number-schema", "0.1.0")
                .with_hook(Hook::PlainText)
                .with_tool(ToolDefinition::new("t", "d", "42"))
        }
    }
    TestHost::new().register::<NumberSchema>();
}

#[test]
#[should_panic(expected = "tag name \"not valid\"")]
fn register_refuses_invalid_tag_names() {
    struct BadTag;
    impl Extension for BadTag {
        fn register() -> Registration {
            Registration::new("bad-tag", "0.1.0").with_tag("not valid")
        }
    }
    TestHost::new().register::<BadTag>();
}

#[test]
#[should_panic(expected = "not JSON")]
fn register_checks_tool_schemas_are_json() {
    struct BadTool;
    impl Extension for BadTool {
        fn register() -> Registration {
            Registration::new("bad-tool", "0.1.0")
                .with_hook(Hook::PlainText)
                .with_tool(ToolDefinition::new("t", "d", "{not json"))
        }
    }
    TestHost::new().register::<BadTool>();
}

#[test]
#[should_panic(expected = "outside a host callback")]
fn imports_outside_a_callback_explain_what_to_do() {
    state::get("k");
}

#[test]
#[should_panic(expected = "callbacks do not nest")]
fn callbacks_do_not_nest() {
    let host = TestHost::new();
    let _ = host.call(|| host.call(|| Ok(())));
}

#[test]
fn a_panicking_callback_leaves_the_host_usable() {
    let host = TestHost::new();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = host.call(|| -> Result<(), ExtError> {
            state::set("half", b"done").unwrap();
            panic!("guest trap");
        });
    }));
    assert!(panicked.is_err());
    assert_eq!(host.state("half"), None, "a trap discards the writes");
    assert_eq!(host.plain_text::<PlainOnly>("x").unwrap(), "x#1");
}

#[test]
#[should_panic(expected = "not available during register()")]
fn register_has_no_state_like_the_host() {
    struct StatefulRegister;
    impl Extension for StatefulRegister {
        fn register() -> Registration {
            let _ = state::get("k");
            Registration::new("stateful-register", "0.1.0").with_hook(Hook::PlainText)
        }
    }
    TestHost::new().register::<StatefulRegister>();
}

#[test]
fn register_sees_config_but_no_session() {
    struct ConfiguredRegister;
    impl Extension for ConfiguredRegister {
        fn register() -> Registration {
            let mut registration =
                Registration::new("configured", "0.1.0").with_hook(Hook::PlainText);
            if let Some(text) = config::get("prompt") {
                registration = registration.with_prompt_addition(text);
            }
            assert_eq!(host::session().tenant_id, "");
            registration
        }
    }
    let registration = TestHost::new()
        .with_config("prompt", "be brief")
        .register::<ConfiguredRegister>();
    assert_eq!(registration.prompt_additions, ["be brief"]);
}
