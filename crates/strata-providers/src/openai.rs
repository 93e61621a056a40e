//! OpenAI's Chat Completions API, streamed (server-sent events), with tool calls and usage;
//! its embeddings API. The same code serves any OpenAI-compatible server (a LiteLLM proxy,
//! vLLM, LM Studio, llama.cpp's server) at another base URL.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use strata_core::{ChatError, ChatErrorKind, ChatModel, ChatRequest, ChatResponse, Message, ToolCall, ToolSpec, Usage};

use crate::http::{self, Endpoint};

/// A model behind the Chat Completions API.
pub struct OpenAi {
    provider: String,
    model: String,
    endpoint: Endpoint,
    client: reqwest::blocking::Client,
}

impl std::fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAi").field("provider", &self.provider).field("model", &self.model).finish_non_exhaustive()
    }
}

fn classify(status: u16, body: &str) -> ChatErrorKind {
    let v: Value = serde_json::from_str(body).unwrap_or_default();
    let code = v["error"]["code"].as_str().unwrap_or_default();
    match (status, code) {
        (_, "context_length_exceeded" | "string_above_max_length") => ChatErrorKind::ContextTooLong,
        (404, _) | (_, "model_not_found") => ChatErrorKind::ModelNotFound,
        _ => ChatErrorKind::BadRequest,
    }
}

/// Tools in the API's shape (which Ollama takes too).
pub fn function_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
        .collect()
}

/// A message in the API's shape.
fn wire(m: &Message) -> Value {
    let mut v = json!({ "role": m.role.as_str(), "content": m.content });
    if !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
        if m.content.is_empty() {
            v["content"] = Value::Null;
        }
    }
    if let Some(id) = &m.tool_call_id {
        v["tool_call_id"] = json!(id);
    }
    v
}

impl OpenAi {
    /// `model` at OpenAI (`provider` "openai") or at an OpenAI-compatible server.
    pub fn new(provider: &str, model: &str, endpoint: Endpoint) -> Result<OpenAi, ChatError> {
        Ok(OpenAi { provider: provider.into(), model: model.into(), client: http::client(&endpoint)?, endpoint })
    }

    fn post(&self, path: &str, body: &Value) -> reqwest::blocking::RequestBuilder {
        let r = self.client.post(self.endpoint.url(path)).json(body);
        match &self.endpoint.key {
            Some(k) => r.bearer_auth(k),
            None => r,
        }
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(wire).collect::<Vec<_>>(),
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(m) = request.max_tokens {
            // OpenAI's newer models take only max_completion_tokens; other servers know max_tokens.
            let name = if self.provider == "openai" { "max_completion_tokens" } else { "max_tokens" };
            body[name] = json!(m);
        }
        if !request.tools.is_empty() {
            body["tools"] = function_tools(&request.tools);
            if request.tool_required {
                body["tool_choice"] = json!("required");
            }
        }
        body
    }

    /// Embeddings of `texts` (`model` must be an embedding model).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ChatError> {
        let body = json!({"model": self.model, "input": texts});
        let go = AtomicBool::new(false);
        let response = http::send(&self.endpoint, &self.provider, &|| self.post("embeddings", &body), classify, &go)?;
        let v: Value = http::json_of(&self.provider, response)?;
        let mut rows: Vec<(u64, Vec<f32>)> = v["data"]
            .as_array()
            .ok_or_else(|| http::bad_json(&self.provider, "no data"))?
            .iter()
            .map(|d| (d["index"].as_u64().unwrap_or(0), http::floats(&d["embedding"])))
            .collect();
        rows.sort_by_key(|r| r.0);
        Ok(rows.into_iter().map(|r| r.1).collect())
    }
}

impl ChatModel for OpenAi {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<ChatResponse, ChatError> {
        let body = self.body(request);
        let response =
            http::send(&self.endpoint, &self.provider, &|| self.post("chat/completions", &body), classify, cancel)?;
        let mut out = ChatResponse::default();
        // Tool calls arrive in pieces, keyed by their index.
        let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
        let provider = self.provider.clone();
        let cancelled = http::lines(response, cancel, &mut |line| {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { return Ok(true) };
            if data == "[DONE]" {
                return Ok(false);
            }
            let v: Value = serde_json::from_str(data).map_err(|e| http::bad_json(&provider, e))?;
            if let Some(err) = v.get("error") {
                let msg = err["message"].as_str().unwrap_or("an error in the stream");
                return Err(ChatError::new(ChatErrorKind::Server, format!("{provider}: {msg}")));
            }
            if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
                out.usage = Usage {
                    prompt_tokens: u["prompt_tokens"].as_u64().unwrap_or(0) as u32,
                    completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0) as u32,
                };
            }
            for choice in v["choices"].as_array().into_iter().flatten() {
                let delta = &choice["delta"];
                if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                    out.content.push_str(t);
                    on_text(t);
                }
                for c in delta["tool_calls"].as_array().into_iter().flatten() {
                    let call = calls.entry(c["index"].as_u64().unwrap_or(0)).or_insert_with(|| ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                    if let Some(id) = c["id"].as_str() {
                        call.id = id.to_string();
                    }
                    if let Some(n) = c["function"]["name"].as_str() {
                        call.name.push_str(n);
                    }
                    if let Some(a) = c["function"]["arguments"].as_str() {
                        call.arguments.push_str(a);
                    }
                }
                if let Some(f) = choice["finish_reason"].as_str() {
                    out.finish = f.to_string();
                }
            }
            Ok(true)
        })?;
        if cancelled {
            out.finish = "cancelled".into();
        }
        out.tool_calls = calls.into_values().collect();
        Ok(out)
    }
}
