//! A connection to one of the person's MCP servers, over stdio (a program Strata starts) or
//! streamable HTTP. The connection lives on a thread of its own, with its own async runtime,
//! so that callers on any thread (the CLI's, a server's blocking pool) call it the same way,
//! one call at a time; a call can be cancelled and has a time limit.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use strata_core::{Error, Result};

use crate::config::{Server, expand};

/// How long a server may take to start and list its tools.
pub const START_LIMIT: Duration = Duration::from_secs(30);

/// How long one tool call may take, unless told otherwise.
pub const CALL_LIMIT: Duration = Duration::from_secs(60);

/// The last lines a server wrote on its standard error, kept to say why it failed.
const STDERR_KEPT: usize = 20;

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Its name on its server.
    pub name: String,
    /// What it does, as the server says.
    pub description: String,
    /// Its arguments' JSON schema.
    pub input_schema: Value,
    /// Whether the server says it only reads.
    pub read_only: bool,
}

/// What a tool call returned: its text, and whether the server called it a failure.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The result's text blocks, one after another (other blocks named by their kind).
    pub text: String,
    /// The server's `isError`.
    pub failed: bool,
}

pub(crate) enum Job {
    Call {
        tool: String,
        args: serde_json::Map<String, Value>,
        limit: Duration,
        reply: mpsc::Sender<Result<CallResult>>,
    },
    Resources {
        reply: mpsc::Sender<Result<Vec<crate::resources::ResourceInfo>>>,
    },
    Read {
        uri: String,
        reply: mpsc::Sender<Result<crate::resources::ResourceText>>,
    },
}

/// A started server: its tools, and calls to them.
pub struct Connection {
    /// The server's name (the person's).
    pub name: String,
    /// What the server calls itself, and its version.
    pub server: String,
    /// Its tools.
    pub tools: Vec<ToolInfo>,
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    interrupt: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

pub(crate) type Conn = RunningService<RoleClient, ClientConfig>;

impl Connection {
    /// Starts the server `name` (its program, or a session with its URL), and lists its tools.
    pub fn start(name: &str, server: &Server) -> Result<Connection> {
        server.check(name)?;
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(String, Vec<ToolInfo>)>>();
        let (jobs_tx, jobs_rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let interrupt = Arc::new(AtomicBool::new(false));
        let (n, s, stop) = (name.to_string(), server.clone(), interrupt.clone());
        let thread = std::thread::Builder::new()
            .name(format!("mcp-{name}"))
            .spawn(move || serve(n, s, ready_tx, jobs_rx, stop))
            .map_err(|e| Error::io("cannot start a thread for an MCP server", e))?;
        let ready = ready_rx.recv_timeout(START_LIMIT + Duration::from_secs(5)).unwrap_or_else(|_| {
            Err(Error::invalid(format!("{name} did not start within {} seconds", START_LIMIT.as_secs())))
        });
        match ready {
            Ok((info, tools)) => Ok(Connection {
                name: name.to_string(),
                server: info,
                tools,
                jobs: Some(jobs_tx),
                interrupt,
                thread: Some(thread),
            }),
            Err(e) => {
                drop(jobs_tx);
                let _ = thread.join();
                Err(e)
            }
        }
    }

    /// Calls its tool `tool` with `args` (a JSON object), within `limit`; `cancel` set while it
    /// runs stops it (the server is told).
    pub fn call(&self, tool: &str, args: &Value, limit: Duration, cancel: &AtomicBool) -> Result<CallResult> {
        let args = match args {
            Value::Object(m) => m.clone(),
            Value::Null => serde_json::Map::new(),
            other => return Err(Error::invalid(format!("a tool's arguments are an object, not {other}"))),
        };
        self.interrupt.store(false, Ordering::Relaxed);
        self.ask(|reply| Job::Call { tool: tool.to_string(), args, limit, reply }, cancel)
    }

    /// Sends the job `make` builds to the connection's thread and waits for its answer; `cancel`
    /// set meanwhile interrupts it.
    pub(crate) fn ask<T>(&self, make: impl FnOnce(mpsc::Sender<Result<T>>) -> Job, cancel: &AtomicBool) -> Result<T> {
        let (reply, answer) = mpsc::channel();
        let gone = || Error::invalid(format!("the MCP server {} has stopped", self.name));
        self.jobs.as_ref().ok_or_else(gone)?.send(make(reply)).map_err(|_| gone())?;
        loop {
            match answer.recv_timeout(Duration::from_millis(50)) {
                Ok(r) => return r,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if cancel.load(Ordering::Relaxed) {
                        self.interrupt.store(true, Ordering::Relaxed);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        }
    }
}

impl Drop for Connection {
    /// Ends the session; a program Strata started is closed (its input, then a signal).
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The connection's thread: connect, say so, then serve calls until the connection is dropped.
fn serve(
    name: String,
    server: Server,
    ready: mpsc::Sender<Result<(String, Vec<ToolInfo>)>>,
    mut jobs: tokio::sync::mpsc::UnboundedReceiver<Job>,
    interrupt: Arc<AtomicBool>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(Error::io("cannot start an MCP client", e)));
            return;
        }
    };
    rt.block_on(async move {
        let stderr = Stderr::default();
        let started = tokio::time::timeout(START_LIMIT, connect(&name, &server, stderr.clone())).await;
        let mut conn = match started {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => {
                // A program that failed at once: what it said may still be in the pipe.
                if server.url.is_none() {
                    let _ = tokio::time::timeout(Duration::from_secs(1), stderr.read.notified()).await;
                }
                let _ = ready.send(Err(with_stderr(e, &stderr)));
                return;
            }
            Err(_) => {
                let e = Error::invalid(format!("{name} did not start within {} seconds", START_LIMIT.as_secs()));
                let _ = ready.send(Err(with_stderr(e, &stderr)));
                return;
            }
        };
        let listed = tokio::time::timeout(START_LIMIT, conn.list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools.into_iter().map(tool_info).collect(),
            Ok(Err(e)) => {
                let _ = ready.send(Err(Error::invalid(format!("{name} did not list its tools: {e}"))));
                let _ = conn.close().await;
                return;
            }
            Err(_) => {
                let _ = ready.send(Err(Error::invalid(format!("{name} did not list its tools in time"))));
                let _ = conn.close().await;
                return;
            }
        };
        let info = conn
            .peer_info()
            .and_then(|p| p.server_info.as_ref().map(|i| format!("{} {}", i.name, i.version)))
            .unwrap_or_else(|| name.clone());
        if ready.send(Ok((info, tools))).is_err() {
            let _ = conn.close().await;
            return;
        }
        while let Some(job) = jobs.recv().await {
            match job {
                Job::Call { tool, args, limit, reply } => {
                    let r = call(&conn, &name, &tool, args, limit, &interrupt).await;
                    let _ = reply.send(r);
                }
                Job::Resources { reply } => {
                    let _ = reply.send(crate::resources::list(&conn, &name).await);
                }
                Job::Read { uri, reply } => {
                    let _ = reply.send(crate::resources::read(&conn, &name, &uri).await);
                }
            }
        }
        let _ = conn.close_with_timeout(Duration::from_secs(5)).await;
    });
}

/// A server program's last lines on standard error, and word when the pipe closed.
#[derive(Clone, Default)]
struct Stderr {
    lines: Arc<Mutex<VecDeque<String>>>,
    read: Arc<tokio::sync::Notify>,
}

async fn connect(name: &str, server: &Server, stderr: Stderr) -> Result<Conn> {
    let info =
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("strata", env!("CARGO_PKG_VERSION")));
    let refused = |e: &dyn std::fmt::Display| Error::invalid(format!("{name} did not answer as an MCP server: {e}"));
    if let Some(url) = &server.url {
        install_tls();
        let mut headers = HashMap::new();
        for (k, v) in &server.headers {
            let key = http::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| Error::invalid(format!("{name} has a header that is not one: {k}")))?;
            let value = http::HeaderValue::from_str(&expand(v)?)
                .map_err(|_| Error::invalid(format!("{name}'s header {k} has a value HTTP cannot carry")))?;
            headers.insert(key, value);
        }
        let config = rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            expand(url)?.as_str(),
        )
        .custom_headers(headers);
        let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
        return info.serve(transport).await.map_err(|e| refused(&e));
    }
    let program = expand(server.command.as_deref().unwrap_or_default())?;
    let mut cmd = tokio::process::Command::new(&program);
    for a in &server.args {
        cmd.arg(expand(a)?);
    }
    for (k, v) in &server.env {
        cmd.env(k, expand(v)?);
    }
    if let Some(dir) = &server.cwd {
        cmd.current_dir(dir);
    }
    let (transport, err) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Error::invalid(format!("cannot start {name} ({program}): {e}")))?;
    if let Some(err) = err {
        tokio::spawn(keep_stderr(name.to_string(), err, stderr));
    }
    info.serve(transport).await.map_err(|e| refused(&e))
}

/// Reads what a server writes on its standard error (so that it never blocks on a full pipe),
/// logging it and keeping the last lines.
async fn keep_stderr(name: String, err: tokio::process::ChildStderr, kept: Stderr) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server = %name, "{line}");
        let mut k = kept.lines.lock().unwrap_or_else(|p| p.into_inner());
        if k.len() == STDERR_KEPT {
            k.pop_front();
        }
        k.push_back(line);
    }
    kept.read.notify_one();
}

fn with_stderr(e: Error, stderr: &Stderr) -> Error {
    let said: Vec<String> = stderr.lines.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
    if said.is_empty() { e } else { Error::invalid(format!("{e}; it said: {}", said.join(" / "))) }
}

async fn call(
    conn: &Conn,
    name: &str,
    tool: &str,
    args: serde_json::Map<String, Value>,
    limit: Duration,
    interrupt: &AtomicBool,
) -> Result<CallResult> {
    let request = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    let stopped = async {
        while !interrupt.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    };
    // Dropping the call's future tells the server it was cancelled.
    tokio::select! {
        r = tokio::time::timeout(limit, conn.call_tool(request)) => match r {
            Ok(Ok(result)) => Ok(CallResult {
                text: result.content.iter().map(block_text).collect::<Vec<_>>().join("\n"),
                failed: result.is_error.unwrap_or(false),
            }
            .or_structured(result.structured_content.as_ref())),
            Ok(Err(e)) => Err(Error::invalid(format!("{name} failed to run {tool}: {e}"))),
            Err(_) => Err(Error::invalid(format!("{name}'s {tool} took longer than {} seconds", limit.as_secs()))),
        },
        _ = stopped => Err(Error::invalid(format!("{tool} was stopped by you"))),
    }
}

impl CallResult {
    /// The structured result as JSON text, when the blocks had no text.
    fn or_structured(mut self, structured: Option<&Value>) -> CallResult {
        if self.text.trim().is_empty()
            && let Some(v) = structured
        {
            self.text = v.to_string();
        }
        self
    }
}

/// A content block as text: its text, or what kind of thing it is.
fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[an image, {}]", i.mime_type),
        ContentBlock::Audio(a) => format!("[a sound, {}]", a.mime_type),
        ContentBlock::Resource(r) => match &r.resource {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => format!("[a resource: {}]", resource_uri(other)),
        },
        ContentBlock::ResourceLink(l) => format!("[a link: {}]", l.uri),
        _ => "[content of a kind Strata does not read]".to_string(),
    }
}

fn resource_uri(r: &rmcp::model::ResourceContents) -> String {
    match r {
        rmcp::model::ResourceContents::TextResourceContents { uri, .. } => uri.clone(),
        rmcp::model::ResourceContents::BlobResourceContents { uri, .. } => uri.clone(),
        _ => "of another kind".to_string(),
    }
}

fn tool_info(t: rmcp::model::Tool) -> ToolInfo {
    ToolInfo {
        name: t.name.to_string(),
        description: t.description.map(|d| d.to_string()).unwrap_or_default(),
        input_schema: Value::Object((*t.input_schema).clone()),
        read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false),
    }
}

/// HTTPS through rustls needs one crypto provider for the process (ring, which the workspace
/// already builds); installed once, before the first HTTP server.
fn install_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
