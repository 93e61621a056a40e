//! Anthropic's Messages API, streamed: the system prompt apart from the turns, tool use and
//! tool results as content blocks, usage from the message events; and its token-counting
//! endpoint (the exact count for Claude models, which Strata otherwise estimates).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use strata_core::{ChatError, ChatErrorKind, ChatModel, ChatRequest, ChatResponse, Message, Role, ToolCall};

use crate::http::{self, Endpoint};

/// The API version Strata speaks.
pub const VERSION: &str = "2023-06-01";
/// Answer tokens when the request names none (the API requires a number).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A Claude model.
pub struct Anthropic {
    model: String,
    endpoint: Endpoint,
    client: reqwest::blocking::Client,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic").field("model", &self.model).finish_non_exhaustive()
    }
}

fn classify(status: u16, body: &str) -> ChatErrorKind {
    let v: Value = serde_json::from_str(body).unwrap_or_default();
    let message = v["error"]["message"].as_str().unwrap_or_default();
    match (status, v["error"]["type"].as_str().unwrap_or_default()) {
        (_, "not_found_error") | (404, _) => ChatErrorKind::ModelNotFound,
        (413, _) => ChatErrorKind::ContextTooLong,
        _ if message.contains("prompt is too long") || message.contains("too many tokens") => {
            ChatErrorKind::ContextTooLong
        }
        _ => ChatErrorKind::BadRequest,
    }
}

/// The system prompt (every system message, joined) and the turns as content blocks, with
/// consecutive turns of one role merged (the API alternates user and assistant).
fn wire(messages: &[Message]) -> (Option<String>, Vec<Value>) {
    let system: Vec<&str> = messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in messages.iter().filter(|m| m.role != Role::System) {
        let (role, blocks) = match m.role {
            Role::Tool => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": m.tool_call_id.clone().unwrap_or_default(), "content": m.content}),
                ],
            ),
            Role::Assistant => {
                let mut b: Vec<Value> = Vec::new();
                if !m.content.is_empty() {
                    b.push(json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                    b.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                }
                ("assistant", b)
            }
            _ => ("user", vec![json!({"type": "text", "text": m.content})]),
        };
        match turns.last_mut() {
            Some((r, b)) if *r == role => b.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect())
}

impl Anthropic {
    /// `model` at `endpoint` (`https://api.anthropic.com` by default).
    pub fn new(model: &str, endpoint: Endpoint) -> Result<Anthropic, ChatError> {
        Ok(Anthropic { model: model.into(), client: http::client(&endpoint)?, endpoint })
    }

    fn post(&self, path: &str, body: &Value) -> reqwest::blocking::RequestBuilder {
        let r = self.client.post(self.endpoint.url(path)).header("anthropic-version", VERSION).json(body);
        match &self.endpoint.key {
            Some(k) => r.header("x-api-key", k),
            None => r,
        }
    }

    /// The exact number of input tokens `messages` cost this model (the counting endpoint).
    pub fn count_tokens(&self, messages: &[Message]) -> Result<u32, ChatError> {
        let (system, turns) = wire(messages);
        let mut body = json!({"model": self.model, "messages": turns});
        if let Some(s) = system {
            body["system"] = json!(s);
        }
        let go = AtomicBool::new(false);
        let response =
            http::send(&self.endpoint, "anthropic", &|| self.post("v1/messages/count_tokens", &body), classify, &go)?;
        let v: Value = http::json_of("anthropic", response)?;
        v["input_tokens"].as_u64().map(|n| n as u32).ok_or_else(|| http::bad_json("anthropic", "no input_tokens"))
    }
}

impl ChatModel for Anthropic {
    fn provider(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.model
    }

    /// The counting endpoint.
    fn count_prompt(&self, messages: &[Message]) -> Option<Result<usize, ChatError>> {
        Some(self.count_tokens(messages).map(|n| n as usize))
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<ChatResponse, ChatError> {
        let (system, turns) = wire(&request.messages);
        let mut body = json!({
            "model": self.model,
            "messages": turns,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "stream": true,
        });
        if let Some(s) = system {
            body["system"] = json!(s);
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
            if request.tool_required {
                body["tool_choice"] = json!({"type": "any"});
            }
        }
        let response = http::send(&self.endpoint, "anthropic", &|| self.post("v1/messages", &body), classify, cancel)?;
        let mut out = ChatResponse::default();
        let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
        let cancelled = http::lines(response, cancel, &mut |line| {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { return Ok(true) };
            let v: Value = serde_json::from_str(data).map_err(|e| http::bad_json("anthropic", e))?;
            match v["type"].as_str().unwrap_or_default() {
                "message_start" => {
                    let u = &v["message"]["usage"];
                    out.usage.prompt_tokens = u["input_tokens"].as_u64().unwrap_or(0) as u32;
                    out.usage.completion_tokens = u["output_tokens"].as_u64().unwrap_or(0) as u32;
                }
                "content_block_start" if v["content_block"]["type"] == "tool_use" => {
                    let b = &v["content_block"];
                    calls.insert(
                        v["index"].as_u64().unwrap_or(0),
                        ToolCall {
                            id: b["id"].as_str().unwrap_or_default().into(),
                            name: b["name"].as_str().unwrap_or_default().into(),
                            arguments: String::new(),
                        },
                    );
                }
                "content_block_delta" => {
                    let d = &v["delta"];
                    if let Some(t) = d["text"].as_str() {
                        out.content.push_str(t);
                        on_text(t);
                    }
                    if let (Some(j), Some(c)) =
                        (d["partial_json"].as_str(), calls.get_mut(&v["index"].as_u64().unwrap_or(0)))
                    {
                        c.arguments.push_str(j);
                    }
                }
                "message_delta" => {
                    if let Some(r) = v["delta"]["stop_reason"].as_str() {
                        out.finish = r.to_string();
                    }
                    if let Some(n) = v["usage"]["output_tokens"].as_u64() {
                        out.usage.completion_tokens = n as u32;
                    }
                }
                "message_stop" => return Ok(false),
                "error" => {
                    let e = &v["error"];
                    let kind =
                        if e["type"] == "overloaded_error" { ChatErrorKind::Server } else { ChatErrorKind::BadRequest };
                    return Err(ChatError::new(
                        kind,
                        format!("anthropic: {}", e["message"].as_str().unwrap_or("error")),
                    ));
                }
                _ => {}
            }
            Ok(true)
        })?;
        if cancelled {
            out.finish = "cancelled".into();
        }
        for c in calls.values_mut().filter(|c| c.arguments.is_empty()) {
            c.arguments = "{}".into();
        }
        out.tool_calls = calls.into_values().collect();
        Ok(out)
    }
}
