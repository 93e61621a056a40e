//! Streamable HTTP: `POST/GET/DELETE /mcp`, behind a bearer token. Requests must name a host
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
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

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
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let token = Arc::new(format!("Bearer {token}"));
    let hosts = Arc::new(hosts);
    let app = Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(require_json_rpc))
        .layer(middleware::from_fn_with_state(token, require_token))
        .layer(middleware::from_fn_with_state(hosts, require_allowed_host));
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).with_graceful_shutdown(async move { shutdown.cancelled().await }).await
    });
    Ok(Running { addr, stop, task })
}

/// 401 unless the request carries the bearer token (compared in constant time).
async fn require_token(State(expected): State<Arc<String>>, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes).unwrap_or_default();
    if !strata_core::access::same_secret(given, expected.as_bytes()) {
        let mut response = (
            StatusCode::UNAUTHORIZED,
            "a bearer token is required: Authorization: Bearer TOKEN (strata mcp --http prints it)",
        )
            .into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"strata\""));
        return response;
    }
    next.run(request).await
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
