//! What goes over the wire: each API's request shape and headers, the API key from the
//! environment variable the configuration names, and usage read from the answers.

use aeterna_llm::{Api, ErrorKind, LlmRoles, Role};
use serde_json::json;

use crate::standin::{Reply, StandIn};
use crate::{analyze_chain, ask, config, provider, start};

#[tokio::test]
async fn openai_requests_carry_the_model_messages_and_bearer_key() {
    let stand_in = StandIn::start(Reply::Answer {
        text: "hi".into(),
        input_tokens: 321,
        output_tokens: 12,
    })
    .await;
    // SAFETY: tests in this binary do not read this variable concurrently.
    unsafe { std::env::set_var("AETERNA_TEST_OPENAI_KEY", "sk-test-0123456789abcdef") };
    let mut openai = provider(Api::OpenAi, &format!("{}/", stand_in.base_url()));
    openai.api_key_env = Some("AETERNA_TEST_OPENAI_KEY".into());
    openai.max_output_tokens = 64;
    let roles = start(config(vec![("openai", openai)]));
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    assert_eq!(
        (
            served.usage.input_tokens,
            served.usage.output_tokens,
            served.usage.reported
        ),
        (321, 12, true)
    );
    assert_eq!(served.model, "test-model");
    let seen = &stand_in.seen()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(
        seen.headers["authorization"].to_str().unwrap(),
        "Bearer sk-test-0123456789abcdef"
    );
    let body = &seen.body;
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["max_tokens"], 64, "capped by max_output_tokens");
    assert_eq!(body["stream"], false);
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "system"}, {"role": "user", "content": "hello"}])
    );
}

#[tokio::test]
async fn anthropic_requests_carry_the_version_and_key_headers() {
    let stand_in = StandIn::start(Reply::Answer {
        text: "bonjour".into(),
        input_tokens: 40,
        output_tokens: 7,
    })
    .await;
    // SAFETY: tests in this binary do not read this variable concurrently.
    unsafe { std::env::set_var("AETERNA_TEST_ANTHROPIC_KEY", "sk-ant-test-abcdef0123456789") };
    let mut claude = provider(Api::Anthropic, &stand_in.base_url());
    claude.api_key_env = Some("AETERNA_TEST_ANTHROPIC_KEY".into());
    let roles = start(config(vec![("claude", claude)]));
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    assert_eq!(served.value, "bonjour");
    assert_eq!(
        (served.usage.input_tokens, served.usage.output_tokens),
        (40, 7)
    );
    let seen = &stand_in.seen()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.headers["x-api-key"], "sk-ant-test-abcdef0123456789");
    assert_eq!(seen.headers["anthropic-version"], "2023-06-01");
    assert!(seen.headers.get("authorization").is_none());
    assert_eq!(seen.body["system"], "system");
    assert_eq!(
        seen.body["messages"],
        json!([{"role": "user", "content": "hello"}])
    );
    assert_eq!(seen.body["max_tokens"], 100);
}

#[tokio::test]
async fn answers_without_usage_are_estimated_and_still_counted() {
    let stand_in = StandIn::start(Reply::AnswerWithoutUsage("x".repeat(300))).await;
    let roles = start(config(vec![(
        "local",
        provider(Api::OpenAi, &stand_in.base_url()),
    )]));
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    assert!(!served.usage.reported);
    assert_eq!(served.usage.output_tokens, 100, "300 bytes at 3 per token");
    let (hour, day) = roles.ledger().used("acme", Role::Analyze);
    assert_eq!((hour, day), (served.usage.total(), served.usage.total()));
}

#[tokio::test]
async fn a_missing_key_variable_stops_the_start_with_what_to_do() {
    let mut openai = provider(Api::OpenAi, "https://api.openai.com/v1");
    openai.api_key_env = Some("AETERNA_TEST_KEY_THAT_IS_NOT_SET".into());
    let error = LlmRoles::start(config(vec![("openai", openai)]), None)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains("AETERNA_TEST_KEY_THAT_IS_NOT_SET"),
        "{error}"
    );
    assert!(
        error.contains("llm.providers.openai.api_key_env"),
        "{error}"
    );
}

#[tokio::test]
async fn https_works_in_the_default_build() {
    // A listener that records what the client sends first: over https:// that is a TLS
    // ClientHello (record type 0x16, version 3.x), so the TLS stack is built in and used.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let first_bytes = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut bytes = [0u8; 5];
        socket.read_exact(&mut bytes).await.unwrap();
        bytes
    });
    let mut secure = provider(
        Api::OpenAi,
        &format!("https://localhost:{}/v1", addr.port()),
    );
    secure.retry = Some(crate::fast_retry(0));
    let roles = start(config(vec![("secure", secure)]));
    let exhausted = ask(analyze_chain(&roles), "acme")
        .await
        .expect_err("no TLS server");
    let hello = first_bytes.await.unwrap();
    assert_eq!((hello[0], hello[1]), (0x16, 0x03), "a TLS handshake record");
    assert_eq!(
        exhausted.skipped[0].kind,
        ErrorKind::Connection,
        "{exhausted}"
    );
}
