//! `model: "agent:<name>"`: any OpenAI client talks to one of the caller's agents. The last
//! user message is the agent's task, the messages before it the conversation so far (the
//! person's and the assistant's words); the run (its tool calls and handoffs) happens here, is
//! recorded as any run is, and its answer comes back as the assistant's message — whole, or as
//! one streamed piece. `/v1/models` lists the caller's agents under those names.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use strata_api::Caller;
use strata_api::agents::RunOutcome;

use super::{Proxy, api_error, chunk, error};

/// The prefix of a model name that addresses an agent.
pub const PREFIX: &str = "agent:";

/// What a request says to an agent: the conversation so far, and the task.
pub(crate) struct Said {
    /// The messages before the last user message.
    pub(crate) earlier: Vec<strata_core::Message>,
    /// The last user message.
    pub(crate) task: String,
}

/// A request's answer from the agent `name`: a completion (or its stream) in OpenAI's shape.
pub(crate) async fn completion(
    proxy: Arc<Proxy>,
    caller: Caller,
    name: String,
    said: Said,
    (stream, include_usage): (bool, bool),
) -> Response {
    let Some(models) = proxy.agents.clone() else {
        return error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            Some("model_not_found"),
            "this server runs no agents",
        );
    };
    let worker = tokio::task::spawn_blocking(move || {
        let engine = proxy.engine_for(&caller)?;
        let mut engine = engine.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _busy = strata_api::monitor::busy();
        let cancel = AtomicBool::new(false);
        let steps = strata_agents::DEFAULT_MAX_STEPS;
        let earlier: Vec<strata_agents::Turn> = said
            .earlier
            .into_iter()
            .filter_map(|m| match m.role {
                strata_core::Role::User => Some(strata_agents::Turn::User(m.content)),
                strata_core::Role::Assistant => {
                    Some(strata_agents::Turn::Assistant { agent: name.clone(), text: m.content, calls: Vec::new() })
                }
                _ => None,
            })
            .collect();
        let means = strata_agents::Means { models: &*models.0, external: &strata_agents::NoTools, earlier: &earlier };
        strata_agents::run_with(&mut engine, means, &name, &said.task, steps, &cancel, &mut |_, _| {})
    });
    let report = match worker.await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) if e.code == strata_api::ErrorCode::NotFound => {
            return error(StatusCode::NOT_FOUND, "invalid_request_error", Some("model_not_found"), &e.message);
        }
        Ok(Err(e)) => return api_error(&e),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, &e.to_string()),
    };
    if report.outcome == RunOutcome::Failed {
        return error(StatusCode::BAD_GATEWAY, "upstream_error", None, &report.answer);
    }
    let model = format!("{PREFIX}{}", report.last_agent);
    let finish = if report.outcome == RunOutcome::Answered { "stop" } else { "length" };
    let (p, c) = (report.prompt_tokens, report.completion_tokens);
    let usage = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
    let id = format!("chatcmpl-strata-{}", ulid::Ulid::new());
    let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let run = json!({"run": report.id, "outcome": report.outcome, "agent": report.last_agent, "steps": report.steps});
    if !stream {
        return axum::Json(json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": report.answer}, "finish_reason": finish}],
            "usage": usage,
            "strata": run,
        }))
        .into_response();
    }
    let mut events = vec![
        chunk(&id, created, &model, json!({"role": "assistant", "content": ""}), None),
        chunk(&id, created, &model, json!({"content": report.answer}), None),
        chunk(&id, created, &model, json!({}), Some(finish)),
    ];
    if include_usage {
        let v = json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [], "usage": usage});
        events.push(format!("data: {v}\n\n"));
    }
    events.push("data: [DONE]\n\n".into());
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from(events.concat()))
        .unwrap_or_else(|e| error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, &e.to_string()))
}

/// The caller's agents as models (`agent:<name>`), for `/v1/models`.
pub(crate) fn listed(proxy: &Proxy, caller: &Caller) -> Vec<Value> {
    if proxy.agents.is_none() {
        return Vec::new();
    }
    let agents = proxy
        .engine_for(caller)
        .and_then(|e| e.lock().unwrap_or_else(std::sync::PoisonError::into_inner).agents())
        .unwrap_or_default();
    agents
        .into_iter()
        .map(|a| json!({"id": format!("{PREFIX}{}", a.name), "object": "model", "created": 0, "owned_by": "strata (agent)"}))
        .collect()
}
