//! What a client may send, for both transports: a JSON-RPC message, or else the error the
//! JSON-RPC specification gives — parse error (-32700) for what is not JSON, invalid request
//! (-32600) for JSON that is not a message — instead of rmcp's HTTP 415 or silence on stdio;
//! and invalid params (-32602), not "method not found", for a method we serve whose params
//! do not fit it.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, CustomRequest, ErrorCode, GetPromptRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams,
};
use serde::de::DeserializeOwned;

/// `bytes` as a client's message, or the error that answers it (sent without an id: none
/// can be read from such a message).
pub(crate) fn read_message(bytes: &[u8]) -> Result<ClientJsonRpcMessage, McpError> {
    serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            McpError::parse_error(format!("the message is not JSON: {e}"), None)
        }
        serde_json::error::Category::Data | serde_json::error::Category::Io => {
            McpError::invalid_request(format!("not a JSON-RPC 2.0 request, notification or response: {e}"), None)
        }
    })
}

/// The error for a request rmcp could not type. It hands such requests over as custom ones:
/// a method we serve arrives there only when its params do not fit it.
pub(crate) fn untyped_request(request: &CustomRequest) -> McpError {
    let params = request.params.clone().unwrap_or_else(|| serde_json::json!({}));
    let problem = match request.method.as_str() {
        "tools/call" => tool_call_problem(params),
        "resources/read" => problem_with::<ReadResourceRequestParams>(params),
        "prompts/get" => problem_with::<GetPromptRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            problem_with::<PaginatedRequestParams>(params)
        }
        _ => None,
    };
    match problem {
        Some(problem) => McpError::invalid_params(format!("{}: {problem}", request.method), None),
        None => McpError::new(ErrorCode::METHOD_NOT_FOUND, request.method.clone(), None),
    }
}

/// What is wrong with a `tools/call`'s params; the arguments first, as clients get them wrong
/// most (serde would only say "expected a map").
fn tool_call_problem(params: serde_json::Value) -> Option<String> {
    match params.get("arguments") {
        Some(args) if !args.is_object() && !args.is_null() => {
            Some(format!("`arguments` must be an object of the tool's arguments by name, not {}", json_kind(args)))
        }
        _ => problem_with::<CallToolRequestParams>(params),
    }
}

/// Why `params` do not deserialize as `T`, if they do not.
fn problem_with<T: DeserializeOwned>(params: serde_json::Value) -> Option<String> {
    serde_json::from_value::<T>(params).err().map(|e| e.to_string())
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CustomRequest, ErrorCode};
    use serde_json::json;

    use super::{read_message, untyped_request};

    fn code_of(bytes: &str) -> Option<ErrorCode> {
        read_message(bytes.as_bytes()).err().map(|e| e.code)
    }

    #[test]
    fn what_is_not_a_message_gets_the_json_rpc_error_for_it() {
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
        assert_eq!(code_of("this is not json"), Some(ErrorCode::PARSE_ERROR));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1,"#), Some(ErrorCode::PARSE_ERROR), "cut short");
        assert_eq!(code_of(r#"{"hello":"world"}"#), Some(ErrorCode::INVALID_REQUEST));
        assert_eq!(code_of(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Some(ErrorCode::INVALID_REQUEST));
        assert_eq!(code_of(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), Some(ErrorCode::INVALID_REQUEST));
        assert_eq!(code_of("42"), Some(ErrorCode::INVALID_REQUEST));
    }

    fn check(method: &str, params: serde_json::Value) -> (ErrorCode, String) {
        let e = untyped_request(&CustomRequest::new(method, Some(params)));
        (e.code, e.message.into_owned())
    }

    #[test]
    fn a_served_method_with_params_that_do_not_fit_is_invalid_params() {
        for args in [json!("recall everything"), json!(["query"]), json!(3)] {
            let (code, message) = check("tools/call", json!({"name": "recall", "arguments": args}));
            assert_eq!(code, ErrorCode::INVALID_PARAMS);
            assert!(message.contains("`arguments` must be an object"), "{message}");
        }
        let (code, message) = check("tools/call", json!({"arguments": {}}));
        assert_eq!(code, ErrorCode::INVALID_PARAMS);
        assert!(message.contains("missing field `name`"), "{message}");
        let (code, message) = check("resources/read", json!({"uri": 7}));
        assert_eq!(code, ErrorCode::INVALID_PARAMS);
        assert!(message.starts_with("resources/read: "), "{message}");
        assert_eq!(check("no/such/method", json!({})).0, ErrorCode::METHOD_NOT_FOUND);
    }
}
