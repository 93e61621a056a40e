//! Streamable HTTP: `POST/GET/DELETE /mcp`, behind a bearer token. Requests must name a host
//! [`Access`] allows and come from no page or a loopback page (`Origin`), against DNS
//! rebinding; bodies over [`crate::MAX_REQUEST_BYTES`] are refused, and a body that is not a
//! JSON-RPC message gets the JSON-RPC error for it; every client gets its own session.

use std::net::{IpAddr, SocketAddr};
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

/// Which clients the server answers, by the host their requests name (`Host`). A page
/// elsewhere whose DNS name is rebound to this machine still names its own host, so only known
/// names pass; a request naming an IP address cannot come from one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Access {
    /// This machine's clients only: `localhost` or a loopback address.
    #[default]
    Local,
    /// Other machines' too, naming the address the server listens on (any address, when it
    /// listens on all of them) or one of these host names (lowercase).
    Remote {
        /// Host names clients may name besides addresses.
        names: Vec<String>,
    },
}

impl Access {
    /// Whether a request naming `host` (no port; an IPv6 address without brackets) reaches a
    /// server listening on `listen`.
    pub fn allows(&self, host: &str, listen: IpAddr) -> bool {
        let Ok(host) = host_name(host) else { return false };
        let ip = host.parse::<IpAddr>().ok();
        if host == "localhost" || ip.is_some_and(|ip| ip.is_loopback()) {
            return true;
        }
        match self {
            Access::Local => false,
            Access::Remote { names } => {
                names.contains(&host) || ip.is_some_and(|ip| listen.is_unspecified() || ip == listen)
            }
        }
    }
}

/// `name` as [`Access::Remote`] lists it: a DNS name in lowercase, or an IP address in its
/// usual form; anything else (a port, a scheme, a path) is refused, saying why.
pub fn host_name(name: &str) -> Result<String, String> {
    if let Ok(ip) = name.parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() <= 253 && name.split('.').all(label_ok) {
        return Ok(name.to_ascii_lowercase());
    }
    Err(format!("'{name}' is not a host name or IP address (give one without scheme or port, e.g. memory.home.arpa)"))
}

/// Starts serving `server` on `addr` (port 0: any free one) to this machine's clients,
/// requiring `token`.
pub async fn serve(server: StrataMcp, addr: SocketAddr, token: String) -> std::io::Result<Running> {
    serve_for(server, addr, token, Access::Local).await
}

/// Starts serving `server` on `addr` (port 0: any free one) to the clients `access` allows,
/// requiring `token`.
pub async fn serve_for(server: StrataMcp, addr: SocketAddr, token: String, access: Access) -> std::io::Result<Running> {
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
    let hosts = Arc::new((access, addr.ip()));
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

/// 403 unless the request names a host its [`Access`] allows; 400 if it names none.
async fn require_allowed_host(State(hosts): State<Arc<(Access, IpAddr)>>, request: Request, next: Next) -> Response {
    let (access, listen) = hosts.as_ref();
    match requested_host(&request) {
        None => (StatusCode::BAD_REQUEST, "Bad Request: a valid Host header is required").into_response(),
        Some(host) if !access.allows(&host, *listen) => (
            StatusCode::FORBIDDEN,
            format!("Forbidden: this server does not answer requests for host '{host}' (see strata mcp --allow-remote and --allow-host)"),
        )
            .into_response(),
        Some(_) => next.run(request).await,
    }
}

/// The host a request names (`Host`, or HTTP/2's authority), without port or IPv6 brackets.
fn requested_host(request: &Request) -> Option<String> {
    let authority = match request.headers().get(header::HOST) {
        Some(host) => host.to_str().ok()?.parse::<axum::http::uri::Authority>().ok()?,
        None => request.uri().authority()?.clone(),
    };
    Some(authority.host().trim_start_matches('[').trim_end_matches(']').to_string())
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

fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::{Access, host_name};

    fn check(access: &Access, listen: &str, allowed: &[&str], refused: &[&str]) {
        let listen: IpAddr = listen.parse().unwrap();
        for host in allowed {
            assert!(access.allows(host, listen), "{host} should reach {access:?} on {listen}");
        }
        for host in refused {
            assert!(!access.allows(host, listen), "{host} should not reach {access:?} on {listen}");
        }
    }

    #[test]
    fn hosts_are_allowed_by_access_and_listening_address() {
        let loopback = ["localhost", "LocalHost", "127.0.0.1", "127.0.0.2", "::1"];
        let local = Access::Local;
        check(&local, "127.0.0.1", &loopback, &["192.0.2.7", "strata.example", "evil.example"]);
        check(&local, "0.0.0.0", &loopback, &["192.0.2.7", "strata.example"]);
        let remote = Access::Remote { names: vec!["strata.example".into()] };
        check(&remote, "0.0.0.0", &loopback, &["evil.example", "localhost.evil.example"]);
        check(&remote, "0.0.0.0", &["192.0.2.7", "2001:db8::7", "strata.example", "STRATA.example"], &[]);
        check(&remote, "::", &["192.0.2.7", "2001:db8::7"], &[]);
        check(&remote, "192.0.2.7", &["192.0.2.7", "strata.example", "localhost"], &["192.0.2.8", "evil.example"]);
        let behind_nat = Access::Remote { names: vec![host_name("2001:DB8:0::5").unwrap()] };
        check(&behind_nat, "192.0.2.7", &["2001:db8::5"], &["2001:db8::6", "203.0.113.5"]);
    }

    #[test]
    fn allowed_host_names_are_names_or_addresses_without_port() {
        assert_eq!(host_name("Memory.Home.ARPA").as_deref(), Ok("memory.home.arpa"));
        assert_eq!(host_name("203.0.113.5").as_deref(), Ok("203.0.113.5"));
        for bad in ["", "memory.home.arpa:8765", "http://memory", "-memory", "a..b", "my_host", "x/y"] {
            let e = host_name(bad).unwrap_err();
            assert!(e.contains("not a host name"), "{bad}: {e}");
        }
    }
}
