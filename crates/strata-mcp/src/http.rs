//! Streamable HTTP: `POST/GET/DELETE /mcp` on a loopback address, behind a bearer token. The
//! transport checks `Host` and `Origin` (only loopback pages may call it, against DNS
//! rebinding) and refuses bodies over [`crate::MAX_REQUEST_BYTES`]; every client gets its own
//! session.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::StrataMcp;

/// The path clients connect to.
pub const PATH: &str = "/mcp";

/// A token for `Authorization: Bearer …`: 32 random bytes, hex.
pub fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

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

/// Starts serving `server` on `addr` (port 0: any free one), requiring `token`.
pub async fn serve(server: StrataMcp, addr: SocketAddr, token: String) -> std::io::Result<Running> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let stop = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .enforce_origin_validation()
        .with_max_request_body_bytes(crate::MAX_REQUEST_BYTES)
        .with_json_response(true)
        .with_cancellation_token(stop.child_token());
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config);
    let token = Arc::new(format!("Bearer {token}"));
    let app = Router::new().nest_service(PATH, service).layer(middleware::from_fn_with_state(token, require_token));
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).with_graceful_shutdown(async move { shutdown.cancelled().await }).await
    });
    Ok(Running { addr, stop, task })
}

/// 401 unless the request carries the bearer token (compared in constant time).
async fn require_token(State(expected): State<Arc<String>>, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes).unwrap_or_default();
    if !same(given, expected.as_bytes()) {
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

fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
