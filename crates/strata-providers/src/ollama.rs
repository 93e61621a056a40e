//! Ollama's `/api/chat` (streamed as JSON lines, with tool calls and token counts) and
//! `/api/embed`.

use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use strata_core::{ChatError, ChatErrorKind, ChatModel, ChatRequest, ChatResponse, Message, ToolCall, Usage};

use crate::http::{self, Endpoint};

/// A model served by Ollama (`http://127.0.0.1:11434` by default).
pub struct Ollama {
    model: String,
    endpoint: Endpoint,
    client: reqwest::blocking::Client,
}

impl std::fmt::Debug for Ollama {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ollama").field("model", &self.model).finish_non_exhaustive()
    }
}

fn classify(status: u16, body: &str) -> ChatErrorKind {
    if status == 404 || body.contains("not found") {
        ChatErrorKind::ModelNotFound
    } else if body.contains("context") && body.contains("exceed") {
        ChatErrorKind::ContextTooLong
    } else {
        ChatErrorKind::BadRequest
    }
}

fn wire(m: &Message) -> Value {
    let mut v = json!({"role": m.role.as_str(), "content": m.content});
    if !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| {
                let args: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                json!({"function": {"name": c.name, "arguments": args}})
            })
            .collect();
    }
    v
}

impl Ollama {
    /// `model` at `endpoint`.
    pub fn new(model: &str, endpoint: Endpoint) -> Result<Ollama, ChatError> {
        Ok(Ollama { model: model.into(), client: http::client(&endpoint)?, endpoint })
    }

    /// Embeddings of `texts`.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ChatError> {
        let body = json!({"model": self.model, "input": texts});
        let go = AtomicBool::new(false);
        let response = http::send(
            &self.endpoint,
            "ollama",
            &|| self.client.post(self.endpoint.url("api/embed")).json(&body),
            classify,
            &go,
        )?;
        let v: Value = http::json_of("ollama", response)?;
        Ok(v["embeddings"]
            .as_array()
            .ok_or_else(|| http::bad_json("ollama", "no embeddings"))?
            .iter()
            .map(http::floats)
            .collect())
    }
}

impl ChatModel for Ollama {
    fn provider(&self) -> &str {
        "ollama"
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
        let mut options = json!({});
        if let Some(t) = request.temperature {
            options["temperature"] = json!(t);
        }
        if let Some(m) = request.max_tokens {
            options["num_predict"] = json!(m);
        }
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(wire).collect::<Vec<_>>(),
            "stream": true,
            "options": options,
        });
        if !request.tools.is_empty() {
            body["tools"] = crate::openai::function_tools(&request.tools);
        }
        let make = || self.client.post(self.endpoint.url("api/chat")).json(&body);
        let response = http::send(&self.endpoint, "ollama", &make, classify, cancel)?;
        let mut out = ChatResponse::default();
        let cancelled = http::lines(response, cancel, &mut |line| {
            if line.trim().is_empty() {
                return Ok(true);
            }
            let v: Value = serde_json::from_str(line).map_err(|e| http::bad_json("ollama", e))?;
            if let Some(e) = v["error"].as_str() {
                return Err(ChatError::new(ChatErrorKind::Server, format!("ollama: {e}")));
            }
            if let Some(t) = v["message"]["content"].as_str().filter(|t| !t.is_empty()) {
                out.content.push_str(t);
                on_text(t);
            }
            for c in v["message"]["tool_calls"].as_array().into_iter().flatten() {
                out.tool_calls.push(ToolCall {
                    id: format!("call_{}", out.tool_calls.len()),
                    name: c["function"]["name"].as_str().unwrap_or_default().into(),
                    arguments: c["function"]["arguments"].to_string(),
                });
            }
            if v["done"].as_bool() == Some(true) {
                out.finish = v["done_reason"].as_str().unwrap_or("stop").to_string();
                out.usage = Usage {
                    prompt_tokens: v["prompt_eval_count"].as_u64().unwrap_or(0) as u32,
                    completion_tokens: v["eval_count"].as_u64().unwrap_or(0) as u32,
                };
                return Ok(false);
            }
            Ok(true)
        })?;
        if cancelled {
            out.finish = "cancelled".into();
        }
        Ok(out)
    }
}
