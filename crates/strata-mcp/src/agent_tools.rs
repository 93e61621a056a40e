//! The person's agents over MCP: `list_agents`, and `ask_agent`, which gives one a task — it
//! answers from its memory and tools and may hand the task to another agent; the run is
//! recorded as any run is (`strata agents runs`). Offered when the server was given its
//! agents' models (`McpSettings::agents`).

use std::sync::atomic::AtomicBool;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use strata_api::ApiError;

use crate::StrataMcp;

/// The most model calls one `ask_agent` may make.
const MAX_STEPS: usize = 30;

/// Arguments of `ask_agent`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskAgentArgs {
    /// The agent's name, as `list_agents` gives it.
    pub agent: String,
    /// The task, in words.
    pub task: String,
    /// The most model calls the run may make, all agents together (default 10, at most 30).
    #[serde(default)]
    pub max_steps: Option<usize>,
}

#[tool_router(router = agent_tools, vis = "pub(crate)")]
impl StrataMcp {
    #[tool(
        title = "List Agents",
        description = "The person's agents: each one's name, what it is for, its tools and the agents it may hand \
        a task to. Give one a task with ask_agent.",
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_agents(&self, ctx: RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
        let r = self.run(&ctx, |e| e.agents()).await;
        self.answer(r.map(|agents| {
            let listed: Vec<_> = agents
                .iter()
                .map(|a| {
                    json!({"name": a.name, "description": a.spec.description, "tools": a.spec.tools,
                    "handoffs": a.spec.handoffs})
                })
                .collect();
            json!({ "agents": listed })
        }))
    }

    #[tool(
        title = "Ask Agent",
        description = "Give one of the person's agents a task: it answers from its own memories and the shared \
        ones, uses its tools, and may hand the task to another agent. Returns its answer, which agent gave it, \
        how the run ended (answered, step_limit, failed) and the run's id.",
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn ask_agent(
        &self,
        Parameters(args): Parameters<AskAgentArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let Some(models) = self.settings().agents.clone() else {
            return self.answer::<()>(Err(ApiError::invalid("this server runs no agents")));
        };
        let steps = args.max_steps.unwrap_or(strata_agents::DEFAULT_MAX_STEPS).clamp(1, MAX_STEPS);
        let r = self
            .run(&ctx, move |e| {
                let cancel = AtomicBool::new(false);
                strata_agents::run(e, &*models.0, &args.agent, &args.task, steps, &cancel, &mut |_, _| {})
            })
            .await;
        self.answer(r.map(|report| {
            json!({"answer": report.answer, "agent": report.last_agent, "outcome": report.outcome,
                "run": report.id, "steps": report.steps})
        }))
    }
}
