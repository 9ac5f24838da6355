//! A first look at a `/mcp` POST body: is it JSON, is it one JSON-RPC 2.0 message, and are a
//! `tools/call`'s name and arguments the right shape? Errors carry the JSON-RPC code the
//! specification assigns, so a client learns what it got wrong instead of a generic refusal.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::error::jsonrpc_code;

/// What the transport needs to know about a valid message.
#[derive(Debug)]
pub struct Inspected<'a> {
    pub id: Option<&'a RawValue>,
    pub method: Option<String>,
}

impl Inspected<'_> {
    pub fn is_initialize(&self) -> bool {
        self.method.as_deref() == Some("initialize")
    }
}

/// Why a body is not an acceptable message: a JSON-RPC code, the request id when it could be
/// read, and a message naming the fault.
#[derive(Debug)]
pub struct Refusal<'a> {
    pub code: i32,
    pub id: Option<&'a RawValue>,
    pub message: String,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct ToolCallParams<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// Checks `body` as one JSON-RPC 2.0 message.
pub fn inspect(body: &[u8]) -> Result<Inspected<'_>, Refusal<'_>> {
    let refuse = |code, id, message: String| Refusal { code, id, message };
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(_) => {
            return Err(refuse(
                jsonrpc_code::PARSE_ERROR,
                None,
                "parse error: the body is not UTF-8 JSON".into(),
            ));
        }
    };
    if text.trim_start().starts_with('[') {
        return Err(refuse(
            jsonrpc_code::INVALID_REQUEST,
            None,
            "invalid request: JSON-RPC batches are not supported; send one message per request"
                .into(),
        ));
    }
    let envelope: Envelope<'_> = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        Err(error) if error.is_data() => {
            return Err(refuse(
                jsonrpc_code::INVALID_REQUEST,
                None,
                "invalid request: the body must be a JSON-RPC 2.0 object".into(),
            ));
        }
        Err(error) => {
            return Err(refuse(
                jsonrpc_code::PARSE_ERROR,
                None,
                format!("parse error: the body is not valid JSON ({error})"),
            ));
        }
    };
    let id = envelope.id.filter(|id| {
        let id = id.get().trim_start();
        id.starts_with('"') || id.starts_with(|c: char| c == '-' || c.is_ascii_digit())
    });
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(refuse(
            jsonrpc_code::INVALID_REQUEST,
            id,
            "invalid request: `jsonrpc` must be \"2.0\"".into(),
        ));
    }
    if envelope.id.is_some() && id.is_none() && envelope.id.map(RawValue::get) != Some("null") {
        return Err(refuse(
            jsonrpc_code::INVALID_REQUEST,
            None,
            "invalid request: `id` must be a string or a number".into(),
        ));
    }
    let Some(method) = envelope.method else {
        if envelope.result.is_some() || envelope.error.is_some() {
            return Ok(Inspected { id, method: None });
        }
        return Err(refuse(
            jsonrpc_code::INVALID_REQUEST,
            id,
            "invalid request: a message needs `method` (a request or notification) or \
             `result`/`error` (a response)"
                .into(),
        ));
    };
    let Ok(method) = serde_json::from_str::<String>(method.get()) else {
        return Err(refuse(
            jsonrpc_code::INVALID_REQUEST,
            id,
            "invalid request: `method` must be a string".into(),
        ));
    };
    if let Some(params) = envelope.params
        && !params.get().trim_start().starts_with('{')
    {
        return Err(refuse(
            jsonrpc_code::INVALID_PARAMS,
            id,
            format!("invalid params: `params` of {method} must be an object"),
        ));
    }
    if method == "tools/call" {
        check_tool_call(envelope.params).map_err(|message| {
            refuse(
                jsonrpc_code::INVALID_PARAMS,
                id,
                format!("invalid params: {message}"),
            )
        })?;
    }
    Ok(Inspected {
        id,
        method: Some(method),
    })
}

fn check_tool_call(params: Option<&RawValue>) -> Result<(), String> {
    let Some(params) = params else {
        return Err("tools/call needs `params` with the tool's `name`".into());
    };
    let params: ToolCallParams<'_> = serde_json::from_str(params.get())
        .map_err(|_| "tools/call `params` must be an object".to_owned())?;
    match params.name {
        None => return Err("tools/call needs `name`, the tool to call".into()),
        Some(name) if !name.get().trim_start().starts_with('"') => {
            return Err("tools/call `name` must be a string".into());
        }
        Some(_) => {}
    }
    if let Some(arguments) = params.arguments {
        let arguments = arguments.get().trim_start();
        if !arguments.starts_with('{') && arguments != "null" {
            return Err("tools/call `arguments` must be an object of the tool's arguments".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> i32 {
        inspect(body.as_bytes()).expect_err(body).code
    }

    #[test]
    fn messages_of_every_kind_pass() {
        let request = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#;
        let inspected = inspect(request.as_bytes()).expect("valid");
        assert!(inspected.is_initialize());
        assert_eq!(inspected.id.map(RawValue::get), Some("7"));
        inspect(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).expect("notify");
        inspect(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).expect("response");
        inspect(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#)
            .expect("call without arguments");
        inspect(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}"#,
        )
        .expect("call");
    }

    #[test]
    fn faults_get_the_codes_the_specification_assigns() {
        assert_eq!(code("{not json"), jsonrpc_code::PARSE_ERROR);
        assert_eq!(code(""), jsonrpc_code::PARSE_ERROR);
        assert_eq!(code("\"text\""), jsonrpc_code::INVALID_REQUEST);
        assert_eq!(code("[]"), jsonrpc_code::INVALID_REQUEST);
        assert_eq!(
            code(r#"{"id":1,"method":"ping"}"#),
            jsonrpc_code::INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            jsonrpc_code::INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            jsonrpc_code::INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            jsonrpc_code::INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1}"#),
            jsonrpc_code::INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#),
            jsonrpc_code::INVALID_PARAMS
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#),
            jsonrpc_code::INVALID_PARAMS
        );
        let refusal = inspect(
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_add","arguments":[1]}}"#,
        )
        .unwrap_err();
        assert_eq!(refusal.code, jsonrpc_code::INVALID_PARAMS);
        assert_eq!(refusal.id.map(RawValue::get), Some("4"));
        assert!(refusal.message.contains("arguments"), "{}", refusal.message);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#),
            jsonrpc_code::INVALID_PARAMS
        );
    }
}
