//! Streamable HTTP: `POST/GET/DELETE /mcp`, behind a bearer token: the server's own, or a
//! person's (`strata people add`; see [`strata_api::people`]), whose rate and request size are
//! their own and whose calls act as them. Requests must name a host
//! the server's [`Hosts`] allow and come from no page or a loopback page (`Origin`), against DNS
//! rebinding; bodies over [`crate::MAX_REQUEST_BYTES`] are refused, and a body that is not a
//! JSON-RPC message gets the JSON-RPC error for it; every client gets its own session.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use strata_api::{Caller, Gate, Refusal};

use crate::StrataMcp;

/// The path clients connect to.
pub const PATH: &str = "/mcp";

pub use strata_core::access::{Hosts, new_token};

/// A running HTTP server.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Stops accepting, ends the sessions, and waits for the server to finish.
    pub async fn stop(self) -> std::io::Result<()> {
        self.stop.cancel();
        self.task.await.map_err(std::io::Error::other)?
    }

    /// Waits until the server stops (it does not stop by itself).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.map_err(std::io::Error::other)?
    }
}

/// Starts serving `server` on `addr` (port 0: any free one) to this machine's clients,
/// requiring `token`.
pub async fn serve(server: StrataMcp, addr: SocketAddr, token: String) -> std::io::Result<Running> {
    serve_for(server, addr, token, Hosts::loopback()).await
}

/// Starts serving `server` on `addr` (port 0: any free one) to requests for `hosts`,
/// requiring `token`.
pub async fn serve_for(server: StrataMcp, addr: SocketAddr, token: String, hosts: Hosts) -> std::io::Result<Running> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let stop = CancellationToken::new();
    // `Host` is checked by `require_allowed_host` (rmcp's list cannot say "any address").
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .enforce_origin_validation()
        .with_max_request_body_bytes(crate::MAX_REQUEST_BYTES)
        .with_json_response(true)
        .with_cancellation_token(stop.child_token());
    // The gate opens a connection of its own: off the async runtime (a blocking driver).
    let gate = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || server.gate(Some(token))).await.map_err(std::io::Error::other)?
    };
    let gate = Arc::new(gate.map_err(std::io::Error::other)?);
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let hosts = Arc::new(hosts);
    let app = Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(require_json_rpc))
        .layer(middleware::from_fn_with_state(gate.clone(), require_token))
        // Monitoring answers without a token (counts and timings, nothing remembered).
        .route("/metrics", get(metrics))
        .route("/health", get(health).with_state(gate))
        .layer(middleware::from_fn_with_state(hosts, require_allowed_host))
        .layer(middleware::from_fn(timed));
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).with_graceful_shutdown(async move { shutdown.cancelled().await }).await
    });
    Ok(Running { addr, stop, task })
}

/// 401 unless the request carries the server's token or a person's (compared in constant
/// time, or looked up by its hash); 429 with `Retry-After` for a person over their rate; 413
/// for a body over their limit. The request goes on with its [`Caller`] in its extensions.
async fn require_token(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let authorization = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_string);
    let admitted = tokio::task::spawn_blocking({
        let gate = gate.clone();
        move || gate.admit(authorization.as_deref())
    })
    .await;
    let caller = match admitted {
        Ok(Ok(caller)) => caller,
        Ok(Err(refusal)) => return refused(&refusal),
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    let mut request = request;
    if let Caller::Person(p) = &caller
        && request.method() == Method::POST
    {
        let limit = p.limits.max_request_bytes as usize;
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
            strata_api::monitor::refused("size");
            let message = format!("Payload Too Large: the body is over {limit} bytes, {}'s limit", p.name);
            return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
        };
        request = Request::from_parts(parts, Body::from(bytes));
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// A request the gate turned away.
fn refused(refusal: &Refusal) -> Response {
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, refusal.message()).into_response();
    if matches!(refusal, Refusal::Unauthorized) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"strata\""));
    }
    if let Some(seconds) = refusal.retry_after() {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// `GET /metrics`: this process's series for Prometheus ([`strata_api::monitor`]).
async fn metrics() -> Response {
    ([(header::CONTENT_TYPE, strata_api::monitor::CONTENT_TYPE)], strata_api::monitor::encode()).into_response()
}

/// `GET /health`: 200 when the store answers, 503 (saying why) when it does not.
async fn health(State(gate): State<Arc<Gate>>) -> Response {
    let ready = tokio::task::spawn_blocking(move || gate.ready()).await.unwrap_or_else(|e| Err(e.to_string()));
    let (status, body) = match ready {
        Ok(()) => (StatusCode::OK, serde_json::json!({"status": "ready"})),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({"status": "unavailable", "reason": why})),
    };
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// Times every request into the monitor, by route (`/mcp`, `/metrics`, `/health`, `other`).
async fn timed(request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let route = [PATH, "/metrics", "/health"].into_iter().find(|r| *r == path).unwrap_or("other");
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    strata_api::monitor::http_request("mcp", route, response.status().as_u16(), started.elapsed());
    response
}

/// 403 unless the request names a host `hosts` allows; 400 if it names none.
async fn require_allowed_host(State(hosts): State<Arc<Hosts>>, request: Request, next: Next) -> Response {
    let named = match request.headers().get(header::HOST) {
        Some(h) => h.to_str().ok().map(str::to_string),
        None => request.uri().authority().map(|a| a.to_string()),
    };
    match named {
        None => (StatusCode::BAD_REQUEST, "Bad Request: a valid Host header is required").into_response(),
        Some(host) if !hosts.allows_host(Some(&host)) => (
            StatusCode::FORBIDDEN,
            format!("Forbidden: this server does not answer requests for host '{host}' (see strata mcp --allow-remote and --allow-host)"),
        )
            .into_response(),
        Some(_) => next.run(request).await,
    }
}

/// A POST body that is not a JSON-RPC message gets the JSON-RPC error for it (400), rather
/// than rmcp's 415; one over [`crate::MAX_REQUEST_BYTES`] gets 413.
async fn require_json_rpc(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // Reading fails when the body is too long, or when the client is gone and hears nothing.
    let Ok(bytes) = axum::body::to_bytes(body, crate::MAX_REQUEST_BYTES).await else {
        let message = format!("Payload Too Large: the body is over {} bytes", crate::MAX_REQUEST_BYTES);
        return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
    };
    if let Err(error) = crate::jsonrpc::read_message(&bytes) {
        let answer = serde_json::to_string(&ServerJsonRpcMessage::error(error, None)).unwrap_or_default();
        return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], answer).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
