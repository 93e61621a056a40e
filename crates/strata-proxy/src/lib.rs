//! The memory proxy: an OpenAI-compatible API on loopback (`/v1/chat/completions`, streamed
//! or not, and `/v1/models`). Any OpenAI client, or LiteLLM, points at it; each request is one
//! memory-augmented turn of the [`Engine`] — recall for the last user message, the context
//! fitted to the upstream model's budget, the upstream's answer relayed, the exchange
//! remembered. Errors come back in OpenAI's shape, with OpenAI's status codes.
#![deny(missing_docs)]

mod agents;
pub use strata_agents::AgentModels;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Extension, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use strata_api::{ApiError, ApiResult, AskParams, Caller, Engine, ErrorCode, Gate, Refusal};
use strata_core::{ChatModel, Message, Role};

/// The largest request body accepted (larger ones get 413); a person's own limit may be lower.
pub const MAX_BODY: usize = strata_api::people::MAX_REQUEST_BYTES as usize;

type Shared = Arc<Mutex<Engine>>;

/// What the proxy serves with.
pub struct Proxy {
    /// The owner's engine (the server's own token, or none needed).
    engine: Shared,
    /// Each person's engine, opened on their first request (see [`Engine::for_person`]).
    people: Mutex<HashMap<String, Shared>>,
    gate: Gate,
    model: Arc<dyn ChatModel>,
    access: Access,
    extractor: Option<strata_api::Extractor>,
    /// The models of the caller's agents (`model: "agent:<name>"`); none: no agents served.
    agents: Option<AgentModels>,
}

/// Who may call the proxy (see [`strata_core::access`] for the rules).
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// With a token, requests must carry `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// The `Host` names accepted besides loopback ones (a proxy listening beyond loopback is
    /// reached by the machine's name or address).
    pub hosts: strata_core::access::Hosts,
}

impl Proxy {
    /// Serves `engine`'s memory with `model` upstream, to the callers `access` lets in and the
    /// people the store lets in (`strata people add`), each with their own token.
    pub fn new(engine: Engine, model: Arc<dyn ChatModel>, access: Access) -> ApiResult<Proxy> {
        let gate = Gate::new(&engine, access.token.clone())?;
        strata_api::monitor::connections("open", 1);
        let engine = Arc::new(Mutex::new(engine));
        Ok(Proxy { engine, people: Mutex::default(), gate, model, access, extractor: None, agents: None })
    }

    /// The engine `caller` is served by. Blocks (a person's first request opens a connection).
    fn engine_for(&self, caller: &Caller) -> ApiResult<Shared> {
        let Caller::Person(person) = caller else { return Ok(self.engine.clone()) };
        let mut people = self.people.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(e) = people.get(&person.name) {
            return Ok(e.clone());
        }
        // A person's conversations through the proxy are their own unless they share them.
        let opened =
            self.engine.lock().unwrap_or_else(std::sync::PoisonError::into_inner).for_person(person, "proxy", false)?;
        strata_api::monitor::connections("open", 1);
        let opened = Arc::new(Mutex::new(opened));
        people.insert(person.name.clone(), opened.clone());
        Ok(opened)
    }

    /// Serves the callers' agents as `agent:<name>`, each thinking with the model `models`
    /// chooses for it.
    pub fn with_agents(mut self, models: AgentModels) -> Proxy {
        self.agents = Some(models);
        self
    }

    /// Extracts facts from each exchange, in the background, with `extractor`.
    pub fn with_extractor(mut self, extractor: Option<strata_api::Extractor>) -> Proxy {
        self.extractor = extractor;
        self
    }
}

/// An error in OpenAI's shape.
fn error(status: StatusCode, kind: &str, code: Option<&str>, message: &str) -> Response {
    // A message may echo what the request sent: each quoted value cut to an excerpt.
    let message = strata_core::error::bounded(message);
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    (status, axum::Json(body)).into_response()
}

fn api_error(e: &ApiError) -> Response {
    let (status, kind, code) = match e.code {
        ErrorCode::InvalidInput => (StatusCode::BAD_REQUEST, "invalid_request_error", None),
        ErrorCode::ContextTooLong => {
            (StatusCode::BAD_REQUEST, "invalid_request_error", Some("context_length_exceeded"))
        }
        ErrorCode::ProviderKey => (StatusCode::UNAUTHORIZED, "authentication_error", Some("invalid_api_key")),
        ErrorCode::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", Some("rate_limit_exceeded")),
        ErrorCode::ModelNotFound => (StatusCode::NOT_FOUND, "invalid_request_error", Some("model_not_found")),
        ErrorCode::NotFound => (StatusCode::NOT_FOUND, "invalid_request_error", None),
        ErrorCode::Network | ErrorCode::Provider => (StatusCode::BAD_GATEWAY, "upstream_error", None),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "server_error", None),
    };
    error(status, kind, code, &e.message)
}

/// Every route, before anything else: a `Host` that is not loopback (or named), a foreign
/// `Origin`, a POST whose body is not declared JSON (what a page's plain cross-site request
/// sends) get 403 / 415; then the [`Gate`]: a token that is neither the server's (when it has
/// one) nor a person's gets 401, a person over their rate 429 (with `Retry-After`), a body
/// over the caller's limit 413. All in OpenAI's error shape. The handler gets the [`Caller`].
async fn guard(
    State(proxy): State<Arc<Proxy>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Some(refused) = refusal(&proxy.access, &request) {
        return refused;
    }
    // Monitoring answers without a token (it tells counts and timings, nothing remembered).
    if matches!(request.uri().path(), "/metrics" | "/health") {
        return next.run(request).await;
    }
    let authorization = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_string);
    let gate = proxy.clone();
    let caller = match tokio::task::spawn_blocking(move || gate.gate.admit(authorization.as_deref())).await {
        Ok(Ok(caller)) => caller,
        Ok(Err(refusal)) => return refused(&refusal),
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, &e.to_string()),
    };
    let limit = caller.max_request_bytes();
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        strata_api::monitor::refused("size");
        let whose = caller.name().map_or("this server's".to_string(), |n| format!("{n}'s"));
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            None,
            &format!("the request is over {limit} bytes, {whose} limit"),
        );
    };
    let mut request = axum::extract::Request::from_parts(parts, Body::from(bytes));
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// A request the [`Gate`] turned away, in OpenAI's shape.
fn refused(refusal: &Refusal) -> Response {
    let (kind, code) = match refusal {
        Refusal::Unauthorized => ("authentication_error", Some("invalid_api_key")),
        Refusal::TooMany { .. } => ("rate_limit_error", Some("rate_limit_exceeded")),
        Refusal::Unavailable(_) => ("server_error", None),
    };
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = error(status, kind, code, &refusal.message());
    if let Some(seconds) = refusal.retry_after() {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// Why `request` is refused before anyone is asked who sent it, if it is.
fn refusal(access: &Access, request: &axum::extract::Request) -> Option<Response> {
    let header = |name: header::HeaderName| request.headers().get(name).and_then(|v| v.to_str().ok());
    let forbidden = |message: &str| error(StatusCode::FORBIDDEN, "permission_error", None, message);
    if !access.hosts.allows_host(header(header::HOST)) {
        return Some(forbidden("this proxy answers only requests addressed to this machine's loopback address"));
    }
    if !strata_core::access::allows_origin(header(header::ORIGIN)) {
        return Some(forbidden("web pages from other sites may not call this proxy"));
    }
    if request.method() == axum::http::Method::POST && !is_json(header(header::CONTENT_TYPE)) {
        return Some(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "invalid_request_error",
            None,
            "the request body must be JSON (Content-Type: application/json)",
        ));
    }
    None
}

/// Whether a `Content-Type` is JSON (`application/json`, any parameters).
fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|t| t.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// OpenAI's usage object.
fn usage_json(u: strata_core::Usage) -> Value {
    json!({"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.prompt_tokens + u.completion_tokens})
}

/// A message's text: a string, or the text parts of a list of parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The turn a request asks for: system prompt, conversation, the last user message.
fn turn(body: &Value) -> Result<(Option<String>, Vec<Message>, String), String> {
    let messages = body["messages"].as_array().ok_or("'messages' must be a list")?;
    let mut system = Vec::new();
    let mut all = Vec::new();
    for m in messages {
        let role: Role = m["role"]
            .as_str()
            .map(|r| if r == "developer" { "system" } else { r })
            .ok_or("every message needs a 'role'")?
            .parse()
            .map_err(|e: strata_core::Error| e.to_string())?;
        let text = text_of(&m["content"]);
        if role == Role::System {
            system.push(text);
        } else {
            all.push(Message::new(role, text));
        }
    }
    let last = all.pop().filter(|m| m.role == Role::User).ok_or("the last message must be the user's")?;
    Ok(((!system.is_empty()).then(|| system.join("\n\n")), all, last.content))
}

/// The request's options Strata honours, checked: nonsense is refused rather than ignored.
struct Options {
    max_tokens: Option<u32>,
    stream: bool,
    include_usage: bool,
    /// Strata's own field, `"strata": {"datasets": ["lease"]}` (an OpenAI SDK sends it with
    /// `extra_body`): the caller's datasets the answer may draw on.
    datasets: Vec<String>,
}

impl Options {
    fn of(body: &Value) -> Result<Options, String> {
        let mut max_tokens = None;
        for name in ["max_tokens", "max_completion_tokens"] {
            match &body[name] {
                Value::Null => {}
                v => {
                    let n = v
                        .as_u64()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| format!("'{name}' must be a whole number of at least 1, not {v}"))?;
                    max_tokens = Some(u32::try_from(n).unwrap_or(u32::MAX));
                }
            }
        }
        match &body["n"] {
            Value::Null => {}
            v if v.as_u64() == Some(1) => {}
            v => return Err(format!("'n' must be 1 (this proxy answers with one choice), not {v}")),
        }
        let flag = |v: &Value, name: &str| match v {
            Value::Null => Ok(false),
            Value::Bool(b) => Ok(*b),
            other => Err(format!("'{name}' must be true or false, not {other}")),
        };
        let datasets = match &body["strata"]["datasets"] {
            Value::Null => vec![],
            Value::Array(names) => names
                .iter()
                .map(|n| n.as_str().map(String::from).ok_or_else(|| format!("'strata.datasets' holds names, not {n}")))
                .collect::<Result<_, _>>()?,
            other => return Err(format!("'strata.datasets' must be a list of dataset names, not {other}")),
        };
        Ok(Options {
            datasets,
            max_tokens,
            stream: flag(&body["stream"], "stream")?,
            include_usage: flag(&body["stream_options"]["include_usage"], "stream_options.include_usage")?,
        })
    }
}

async fn models(State(proxy): State<Arc<Proxy>>, Extension(caller): Extension<Caller>) -> Response {
    let mut data = vec![
        json!({"id": proxy.model.model(), "object": "model", "created": 0, "owned_by": format!("strata ({})", proxy.model.provider())}),
    ];
    let agents = tokio::task::spawn_blocking(move || agents::listed(&proxy, &caller)).await.unwrap_or_default();
    data.extend(agents);
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

fn chunk(id: &str, created: u64, model: &str, delta: Value, finish: Option<&str>) -> String {
    let v = json!({
        "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {v}\n\n")
}

async fn completions(
    State(proxy): State<Arc<Proxy>>,
    Extension(caller): Extension<Caller>,
    body: axum::body::Bytes,
) -> Response {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", None, &format!("not JSON: {e}")),
    };
    let (system, history, question) = match turn(&body) {
        Ok(t) => t,
        Err(e) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", None, &e),
    };
    let options = match Options::of(&body) {
        Ok(o) => o,
        Err(e) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", None, &e),
    };
    let Options { max_tokens, stream, include_usage, datasets } = options;
    if let Some(agent) = body["model"].as_str().and_then(|m| m.strip_prefix(agents::PREFIX)) {
        let said = agents::Said { earlier: history, task: question };
        return agents::completion(proxy, caller, agent.to_string(), said, (stream, include_usage)).await;
    }
    let params = AskParams { question, system, history, max_tokens, record: true, datasets, ..Default::default() };
    let id = format!("chatcmpl-strata-{}", ulid::Ulid::new());
    let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let model_name = proxy.model.model().to_string();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let cancel = Arc::new(AtomicBool::new(false));
    let worker = {
        let (proxy, cancel) = (proxy.clone(), cancel.clone());
        tokio::task::spawn_blocking(move || {
            let engine = proxy.engine_for(&caller)?;
            let mut engine = engine.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let _busy = strata_api::monitor::busy();
            let result = engine.ask(
                params,
                proxy.model.as_ref(),
                &mut |piece| {
                    // A client that went away stops the generation.
                    if tx.send(piece.to_string()).is_err() {
                        cancel.store(true, Ordering::Relaxed);
                    }
                },
                &cancel,
            );
            if let Err(e) = engine.flush() {
                tracing::warn!("could not record memory accesses: {e}");
            }
            // The answer is complete: its facts are extracted after it, apart from it.
            if let (Ok(view), Some(x)) = (&result, &proxy.extractor)
                && let Some(m) = &view.recorded
            {
                let params = strata_api::ExtractParams { episodes: vec![m.id.clone()], ..Default::default() };
                if let Err(e) = engine.extract_in_background(x.clone(), params) {
                    tracing::warn!("could not start extraction: {e}");
                }
            }
            result
        })
    };
    if !stream {
        let view = match worker.await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return api_error(&e),
            Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, &e.to_string()),
        };
        return axum::Json(json!({
            "id": id, "object": "chat.completion", "created": created, "model": model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": view.answer}, "finish_reason": finish_reason(&view.finish)}],
            "usage": usage_json(view.usage),
            "strata": {"files": view.files},
        }))
        .into_response();
    }
    let stream =
        async_stream(Streamed { id, created, model: model_name, include_usage, cancel }, worker, &mut rx).await;
    match stream {
        Ok(events) => Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(Body::from_stream(events))
            .unwrap_or_else(|e| error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, &e.to_string())),
        Err(r) => r,
    }
}

/// OpenAI's finish reasons from the upstream's.
fn finish_reason(f: &str) -> &'static str {
    match f {
        "length" | "max_tokens" => "length",
        "tool_calls" | "tool_use" => "tool_calls",
        _ => "stop",
    }
}

type Events = tokio_stream::wrappers::UnboundedReceiverStream<Result<String, Infallible>>;

/// A streamed answer's identity, and its generation's cancel flag.
struct Streamed {
    id: String,
    created: u64,
    model: String,
    include_usage: bool,
    cancel: Arc<AtomicBool>,
}

/// The server-sent events of a streamed answer. The first piece (or the failure) is awaited
/// before the response starts, so an upstream error still gets its status code. A client that
/// goes away (the response body is dropped) stops the generation at once: nothing further is
/// generated and nothing is recorded.
async fn async_stream(
    s: Streamed,
    worker: tokio::task::JoinHandle<Result<strata_api::AskView, ApiError>>,
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
) -> Result<Events, Response> {
    let Streamed { id, created, model, include_usage, cancel } = s;
    let first = rx.recv().await;
    let (out, events) = tokio::sync::mpsc::unbounded_channel::<Result<String, Infallible>>();
    if first.is_none() {
        // No text at all: an error (its status code still applies) or an empty answer.
        let view = match worker.await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(api_error(&e)),
            Err(e) => return Err(error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, &e.to_string())),
        };
        let _ = out.send(Ok(chunk(&id, created, &model, json!({"role": "assistant", "content": ""}), None)));
        let _ = out.send(Ok(chunk(&id, created, &model, json!({}), Some(finish_reason(&view.finish)))));
        let _ = out.send(Ok("data: [DONE]\n\n".into()));
        return Ok(tokio_stream::wrappers::UnboundedReceiverStream::new(events));
    }
    let mut rest = std::mem::replace(rx, tokio::sync::mpsc::unbounded_channel().1);
    tokio::spawn(async move {
        let _ = out.send(Ok(chunk(&id, created, &model, json!({"role": "assistant", "content": ""}), None)));
        let mut next = first;
        while let Some(piece) = next {
            let sent = out.send(Ok(chunk(&id, created, &model, json!({"content": piece}), None)));
            next = match sent {
                Ok(()) => tokio::select! {
                    piece = rest.recv() => piece,
                    () = out.closed() => None,
                },
                Err(_) => None,
            };
            if out.is_closed() {
                // The client went away: stop the generation (and with it the recording).
                cancel.store(true, Ordering::Relaxed);
                drop(rest);
                let _ = worker.await;
                return;
            }
        }
        match worker.await {
            Ok(Ok(view)) => {
                let _ = out.send(Ok(chunk(&id, created, &model, json!({}), Some(finish_reason(&view.finish)))));
                if include_usage {
                    let v = json!({
                        "id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [],
                        "usage": usage_json(view.usage),
                    });
                    let _ = out.send(Ok(format!("data: {v}\n\n")));
                }
            }
            Ok(Err(e)) => {
                let v = json!({"error": {"message": e.message, "type": "upstream_error"}});
                let _ = out.send(Ok(format!("data: {v}\n\n")));
            }
            Err(_) => {}
        }
        let _ = out.send(Ok("data: [DONE]\n\n".into()));
    });
    Ok(tokio_stream::wrappers::UnboundedReceiverStream::new(events))
}

/// `GET /metrics`: this process's series for Prometheus ([`strata_api::monitor`]).
async fn metrics() -> Response {
    ([(header::CONTENT_TYPE, strata_api::monitor::CONTENT_TYPE)], strata_api::monitor::encode()).into_response()
}

/// `GET /health`: 200 when the store answers, 503 (saying why) when it does not.
async fn health(State(proxy): State<Arc<Proxy>>) -> Response {
    let ready = tokio::task::spawn_blocking(move || proxy.gate.ready()).await.unwrap_or_else(|e| Err(e.to_string()));
    match ready {
        Ok(()) => axum::Json(json!({"status": "ready"})).into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({"status": "unavailable", "reason": why})))
            .into_response(),
    }
}

/// Times every request into the monitor, by route (an unknown path counts as `other`).
async fn timed(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    const ROUTES: &[&str] = &["/v1/models", "/v1/chat/completions", "/metrics", "/health"];
    let route = ROUTES.iter().find(|r| **r == request.uri().path()).copied().unwrap_or("other");
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    strata_api::monitor::http_request("proxy", route, response.status().as_u16(), started.elapsed());
    response
}

/// The proxy's routes.
pub fn router(proxy: Arc<Proxy>) -> Router {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completions))
        .route("/metrics", get(metrics))
        .route("/health", get(health))
        .layer(axum::middleware::from_fn_with_state(proxy.clone(), guard))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(timed))
        .with_state(proxy)
}

/// Serves on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    proxy: Arc<Proxy>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(proxy)).with_graceful_shutdown(shutdown).await
}
