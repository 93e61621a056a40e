//! Strata as an MCP server: one local memory that Claude Desktop, Cursor, agent frameworks and
//! the Strata app all read and write at the same time.
//!
//! - [`StrataMcp`] is the server: tools ([`tools`], and the reference memory server's graph
//!   tools in [`graph_tools`] when enabled), resources ([`resources`]) and prompts
//!   ([`prompts`]), each call running on an [`Engine`] of the calling client's own.
//! - Transports: stdio ([`serve_stdio`]) and streamable HTTP ([`http::serve`]), bound to
//!   loopback unless allowed further, with a bearer token; both answer what is not a JSON-RPC
//!   message with the JSON-RPC error for it ([`jsonrpc`]).
//!
//! **Scoping.** Every client is an agent named by its identity: the configured agent id, or
//! the name the client gives when it connects (`claude-ai`, `cursor`…). New memories are
//! shared by all clients unless a `remember` asks for `private`; a client sees the shared
//! memories and its own private ones; every write records the client that made it.

pub mod agent_tools;
pub mod conversation_tools;
pub mod dataset_tools;
pub mod graph_tools;
pub mod http;
mod jsonrpc;
pub mod prompts;
pub mod resources;
pub mod stdio;
pub mod tools;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt, tool_handler};
use serde::Serialize;
pub use strata_api::Extractor;
use strata_api::{ApiError, ApiResult, Caller, Engine, EngineOptions, ErrorCode};

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// Every client acts as this agent (instead of by the name it connects with).
    pub agent: Option<String>,
    /// Also offer the reference memory server's nine knowledge-graph tools.
    pub graph_tools: bool,
    /// The most bytes of JSON one result carries; longer lists are cut and say so.
    pub max_result_bytes: usize,
    /// Who extracts facts from the conversations handed over (`remember_conversation`); none:
    /// they are kept as episodes only.
    pub extractor: Option<Extractor>,
    /// The models of the person's agents, for `ask_agent`; none: no agent tools.
    pub agents: Option<strata_agents::AgentModels>,
}

impl Default for McpSettings {
    fn default() -> Self {
        McpSettings { agent: None, graph_tools: false, max_result_bytes: 64 * 1024, extractor: None, agents: None }
    }
}

/// The most bytes a tool's arguments may take (HTTP refuses larger bodies before parsing).
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// What every client's calls share: the server's engine (for the database, embedder and
/// settings) and one engine per client identity.
struct Shared {
    base: Mutex<Engine>,
    callers: Mutex<HashMap<String, Arc<Mutex<Engine>>>>,
    settings: McpSettings,
}

/// The MCP server. Cheap to clone: the HTTP transport makes one per session or request.
#[derive(Clone)]
pub struct StrataMcp {
    shared: Arc<Shared>,
    tools: Arc<ToolRouter<StrataMcp>>,
}

impl StrataMcp {
    /// A server over `engine`'s database (its embedder, if it has one, serves every client).
    pub fn new(engine: Engine, settings: McpSettings) -> StrataMcp {
        let mut tools = StrataMcp::native_tools() + StrataMcp::conversation_tools() + StrataMcp::dataset_tools();
        if settings.graph_tools {
            tools += StrataMcp::graph_tools();
        }
        if settings.agents.is_some() {
            tools += StrataMcp::agent_tools();
        }
        strata_api::monitor::connections("open", 1);
        let shared = Shared { base: Mutex::new(engine), callers: Mutex::new(HashMap::new()), settings };
        StrataMcp { shared: Arc::new(shared), tools: Arc::new(tools) }
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &McpSettings {
        &self.shared.settings
    }

    /// The identity a request acts as: the configured agent, or the client's name.
    fn identity(&self, ctx: &RequestContext<RoleServer>) -> String {
        let named = self.shared.settings.agent.clone().or_else(|| ctx.client_info().map(|i| i.name));
        normalize_identity(named.as_deref().unwrap_or(""))
    }

    /// The person an HTTP request was let in as (by their own token), if any.
    fn person(ctx: &RequestContext<RoleServer>) -> Option<strata_api::people::Person> {
        let parts = ctx.extensions.get::<axum::http::request::Parts>()?;
        match parts.extensions.get::<Caller>()? {
            Caller::Person(p) => Some(p.clone()),
            Caller::Owner => None,
        }
    }

    /// The gate of an HTTP server over this server's store whose own token is `token`.
    pub(crate) fn gate(&self, token: Option<String>) -> ApiResult<strata_api::Gate> {
        strata_api::Gate::new(&self.shared.base.lock().unwrap_or_else(|p| p.into_inner()), token)
    }

    /// The engine of `who` (opened on their first call; blocks, for the connection): a
    /// person's, when the request came with their token (whatever the client calls itself).
    fn engine_for(&self, who: String, person: Option<strata_api::people::Person>) -> ApiResult<Arc<Mutex<Engine>>> {
        let mut callers = self.shared.callers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = callers.get(&who) {
            return Ok(e.clone());
        }
        let base = self.shared.base.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = person {
            let engine = Arc::new(Mutex::new(base.for_person(&p, "mcp", true)?));
            strata_api::monitor::connections("open", 1);
            callers.insert(who, engine.clone());
            return Ok(engine);
        }
        let opts = EngineOptions {
            agent_id: Some(who.clone()),
            client: format!("mcp:{who}"),
            actor: strata_core::Actor::Agent,
            shared_writes: true,
            ..base.options().clone()
        };
        let engine = Arc::new(Mutex::new(base.for_caller(opts)?));
        strata_api::monitor::connections("open", 1);
        callers.insert(who, engine.clone());
        Ok(engine)
    }

    /// Runs `f` on the caller's engine, off the async runtime (SQLite and embedding block).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        ctx: &RequestContext<RoleServer>,
        f: impl FnOnce(&mut Engine) -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let person = Self::person(ctx);
        let who = match &person {
            Some(p) => format!("person:{}", p.name),
            None => self.identity(ctx),
        };
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let engine = this.engine_for(who, person)?;
            let mut e = engine.lock().unwrap_or_else(|p| p.into_inner());
            let _busy = strata_api::monitor::busy();
            f(&mut e)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the call failed: {e}")))?
    }

    /// A tool's answer: `value` as structured content (and as text for older clients), or
    /// the error as a result the model reads and can act on (`isError`), bad arguments
    /// included — as the MCP specification asks of tools (rmcp's own argument errors get the
    /// same shape in [`shaped`]).
    pub(crate) fn answer<T: Serialize>(&self, result: ApiResult<T>) -> Result<CallToolResult, McpError> {
        match result {
            Ok(v) => Ok(CallToolResult::structured(serde_json::to_value(v).map_err(internal)?)),
            Err(e) => Ok(refusal(e)),
        }
    }

    /// Keeps the first items of `items` whose JSON fits the result size (at least one); says
    /// whether any were cut.
    pub(crate) fn bounded<T: Serialize>(&self, mut items: Vec<T>) -> (Vec<T>, bool) {
        let fit = fitting(&items, self.shared.settings.max_result_bytes);
        let cut = fit < items.len();
        items.truncate(fit);
        (items, cut)
    }
}

/// How many of the first `items` fit in `max_bytes` of JSON (at least one).
pub(crate) fn fitting<T: Serialize>(items: &[T], max_bytes: usize) -> usize {
    let mut used = 0usize;
    for (i, item) in items.iter().enumerate() {
        used = used.saturating_add(serde_json::to_vec(item).map(|v| v.len()).unwrap_or(usize::MAX));
        if used > max_bytes && i > 0 {
            return i;
        }
    }
    items.len()
}

/// A client name as an agent id: trimmed, lowercase, at most 64 bytes; `mcp-client` when empty.
pub fn normalize_identity(name: &str) -> String {
    let mut s: String = name.trim().to_lowercase().chars().filter(|c| !c.is_control()).collect();
    while s.len() > 64 {
        s.pop();
    }
    if s.is_empty() { "mcp-client".to_string() } else { s }
}

/// A tool error the model reads: `{"error": {"code", "message"}}` with `isError` set.
pub(crate) fn refusal(e: ApiError) -> CallToolResult {
    CallToolResult::structured_error(serde_json::json!({"error": {"code": e.code, "message": e.message}}))
}

/// A tool error in the shape every tool's has. Ours all are; rmcp answers arguments that do
/// not deserialize (a string for a number, an unknown field) with plain text, which becomes
/// an `invalid_input` refusal here.
fn shaped(response: CallToolResponse) -> CallToolResponse {
    match response {
        CallToolResponse::Complete(result) if result.is_error == Some(true) && result.structured_content.is_none() => {
            let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
            let text = text.join(" ");
            let reason = text.strip_prefix("failed to deserialize parameters:").unwrap_or(&text).trim();
            refusal(ApiError::invalid(format!("the arguments do not fit the tool's schema: {reason}"))).into()
        }
        other => other,
    }
}

/// Bad arguments, as a tool error the model reads.
pub(crate) fn bad_arguments(message: impl Into<String>) -> Result<CallToolResult, McpError> {
    Ok(refusal(ApiError::invalid(message)))
}

pub(crate) fn invalid_params(message: impl Into<String>) -> McpError {
    McpError::invalid_params(message.into(), None)
}

pub(crate) fn internal(e: impl std::fmt::Display) -> McpError {
    McpError::internal_error(e.to_string(), None)
}

/// What the server tells clients when they connect.
pub const INSTRUCTIONS: &str = "Strata is the user's long-term memory, shared by their AI tools. \
Call `recall` with the user's question before answering anything that may depend on what you \
were told before (preferences, people, plans, past conversations). Call `remember` when the user \
tells you something worth keeping: a fact about someone or something (type semantic), an event \
or something said (episodic), or how to do something (procedural). Prefer updating an existing \
memory (`update`) over adding a near-duplicate. `forget` erases for good and needs confirm: true.";

#[tool_handler(router = self.tools)]
impl ServerHandler for StrataMcp {
    /// Refuses arguments over [`MAX_REQUEST_BYTES`] (HTTP refuses such bodies before reading
    /// them; over stdio the message is read, then refused), then routes to the tool.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let size = request.arguments.as_ref().map_or(0, |a| serde_json::to_vec(a).map_or(usize::MAX, |v| v.len()));
        if size > MAX_REQUEST_BYTES {
            return Err(invalid_params(format!(
                "the arguments are {size} bytes; Strata takes at most {MAX_REQUEST_BYTES} per call"
            )));
        }
        self.tools.call(ToolCallContext::new(self, request, ctx)).await.map(shaped)
    }

    /// rmcp passes on a request it could not type as a custom one: for a method we serve,
    /// that means params that do not fit it (invalid params, saying why); any other method is
    /// not found.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(jsonrpc::untyped_request(&request))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build())
            .with_server_info(Implementation::new("strata", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS.to_string())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let listed = self.run(&ctx, |e| Ok((e.concepts()?, e.datasets()?))).await;
        let (concepts, datasets) = listed.map_err(|e| internal(e.message))?;
        Ok(resources::list(self.shared.settings.graph_tools, &concepts, &datasets))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(self, request.uri, &ctx).await.map(Into::into)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(prompts::list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        prompts::get(self, request, &ctx).await.map(Into::into)
    }
}

/// Serves `server` over this process's stdin and stdout until the client hangs up.
pub async fn serve_stdio(server: StrataMcp) -> std::io::Result<()> {
    let transport = stdio::LineTransport::new(tokio::io::stdin(), tokio::io::stdout());
    let running = server.serve(transport).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{fitting, normalize_identity};

    #[test]
    fn results_are_cut_to_the_byte_limit_but_keep_at_least_one_item() {
        let items: Vec<String> = (0..10).map(|i| format!("{i:0>98}")).collect(); // 100 bytes of JSON each
        assert_eq!(fitting(&items, 1_000), 10);
        assert_eq!(fitting(&items, 350), 3);
        assert_eq!(fitting(&items, 10), 1, "one oversized item still goes, alone");
        assert_eq!(fitting::<String>(&[], 10), 0);
    }

    #[test]
    fn client_names_become_agent_ids() {
        assert_eq!(normalize_identity("  Claude-AI "), "claude-ai");
        assert_eq!(normalize_identity(""), "mcp-client");
        assert_eq!(normalize_identity(&"x".repeat(100)).len(), 64);
    }
}
