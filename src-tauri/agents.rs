//! The Agents screen's commands: the person's agents (defined, changed, forgotten), a run with
//! each step shown as it happens, Stop, and a tool that asks first asked in the window; the runs
//! kept, each with its timeline.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use strata_api::agents::{Agent, AgentSpec, NewStep};
use strata_api::{ApiError, ErrorCode};
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

/// How long a tool's question waits for the person before it counts as a no.
const ASK_WAIT: Duration = Duration::from_secs(300);

/// The questions a run is waiting on, by id: the person's answer goes back through it.
#[derive(Default, Clone)]
pub(crate) struct Asks(Arc<Mutex<HashMap<String, mpsc::Sender<bool>>>>);

/// An agent as the screen shows and edits it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct AgentView {
    name: String,
    spec: AgentSpec,
    version: u32,
    /// When it last changed (RFC 3339).
    updated: String,
}

impl From<Agent> for AgentView {
    fn from(a: Agent) -> AgentView {
        AgentView { name: a.name, spec: a.spec, version: a.version as u32, updated: a.updated_at.to_rfc3339() }
    }
}

/// A tool an agent may be given, as the form offers it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct ToolChoice {
    /// Its name in a definition.
    name: String,
    /// What it does, in words.
    what: String,
}

/// One step of a run, as the timeline shows it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct AgentStepView {
    seq: u32,
    agent: String,
    /// `reply`, `tool` or `handoff`.
    kind: String,
    name: String,
    arguments: String,
    result: String,
    failed: bool,
    tokens: u32,
    ms: u32,
}

impl AgentStepView {
    fn of(seq: u64, s: &NewStep) -> AgentStepView {
        AgentStepView {
            seq: seq as u32,
            agent: s.agent.clone(),
            kind: s.kind.map(|k| k.as_str().to_string()).unwrap_or_default(),
            name: s.name.clone(),
            arguments: s.arguments.clone(),
            result: s.result.clone(),
            failed: s.failed,
            tokens: (s.prompt_tokens + s.completion_tokens) as u32,
            ms: s.ms as u32,
        }
    }
}

/// A run, as the list of runs and a run's page show it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct AgentRunView {
    id: String,
    agent: String,
    task: String,
    /// RFC 3339.
    started: String,
    /// `answered`, `step_limit`, `cancelled`, `failed`; empty while it runs.
    outcome: String,
    answer: String,
    last_agent: String,
    tokens: u32,
}

impl From<strata_api::agents::AgentRun> for AgentRunView {
    fn from(r: strata_api::agents::AgentRun) -> AgentRunView {
        AgentRunView {
            id: r.id,
            agent: r.agent,
            task: r.task,
            started: r.started_at.to_rfc3339(),
            outcome: r.outcome.map(|o| o.as_str().to_string()).unwrap_or_default(),
            answer: r.answer.unwrap_or_default(),
            last_agent: r.last_agent.unwrap_or_default(),
            tokens: (r.prompt_tokens + r.completion_tokens) as u32,
        }
    }
}

/// An earlier exchange of a chat with an agent: the task given, and the answer it got.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub(crate) struct Exchange {
    task: String,
    /// Who answered.
    agent: String,
    answer: String,
}

/// What a run under way tells the window.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub(crate) enum AgentEvent {
    /// A step, as it is recorded.
    Step(AgentStepView),
    /// A tool that asks first wants to run: answer with `answer_tool_request`.
    Ask { id: String, server: String, tool: String, arguments: String },
}

/// The person's agents, by name.
#[tauri::command]
#[specta::specta]
pub(crate) async fn agents(state: State<'_, AppState>) -> Result<Vec<AgentView>, ApiError> {
    state.run(|e| Ok(e.agents()?.into_iter().map(AgentView::from).collect())).await
}

/// Defines `name` (`version` none), or changes it from `version` (refused if it changed since).
#[tauri::command]
#[specta::specta]
pub(crate) async fn save_agent(
    state: State<'_, AppState>,
    name: String,
    spec: AgentSpec,
    version: Option<u32>,
) -> Result<AgentView, ApiError> {
    check_tools(&spec)?;
    state
        .run(move |e| {
            let agent = match version {
                None => e.define_agent(&name, spec)?,
                Some(v) => e.change_agent(&name, spec, Some(v as u64))?,
            };
            Ok(AgentView::from(agent))
        })
        .await
}

/// A definition's tools are ones Strata knows: its own, or an added MCP server's.
fn check_tools(spec: &AgentSpec) -> Result<(), ApiError> {
    let known = tool_choices()?;
    match spec.tools.iter().find(|t| !known.iter().any(|k| &k.name == *t || server_of(&k.name) == server_of(t))) {
        Some(t) => Err(ApiError::invalid(format!("there is no tool named {t}"))),
        None => Ok(()),
    }
}

fn server_of(name: &str) -> Option<&str> {
    strata_mcp_client::split_qualified(name).map(|(s, _)| s)
}

/// Forgets `name`: its versions and every run it took part in.
#[tauri::command]
#[specta::specta]
pub(crate) async fn forget_agent(state: State<'_, AppState>, name: String) -> Result<u32, ApiError> {
    state.run(move |e| Ok(e.forget_agent(&name)?.runs as u32)).await
}

/// The tools an agent may be given: Strata's own, and each added MCP server's (all its tools).
#[tauri::command]
#[specta::specta]
pub(crate) async fn agent_tools() -> Result<Vec<ToolChoice>, ApiError> {
    tool_choices()
}

fn tool_choices() -> Result<Vec<ToolChoice>, ApiError> {
    let own = [
        ("recall", "Search the memories it may read"),
        ("remember", "Keep a fact or a note"),
        ("update", "Change a memory it may write"),
        ("forget", "Erase a memory it may write"),
        ("list_datasets", "List your files"),
        ("search_datasets", "Search your files"),
        ("query_dataset", "Run one read-only question over a table"),
    ];
    let mut out: Vec<ToolChoice> =
        own.iter().map(|(n, w)| ToolChoice { name: n.to_string(), what: w.to_string() }).collect();
    let servers = strata_mcp_client::McpConfig::load_from(&strata_mcp_client::McpConfig::path()?)?;
    for name in servers.servers.keys() {
        out.push(ToolChoice {
            name: strata_mcp_client::qualified(name, "*"),
            what: format!("Every tool of your MCP server {name} (as its policies allow)"),
        });
    }
    Ok(out)
}

/// Runs `name` on `task`, after the `earlier` exchanges of the chat (empty: a task on its own):
/// each step goes to `on_event` as it is recorded; a tool that asks first asks there;
/// `cancel_job(job)` stops the run at its next step.
#[tauri::command]
#[specta::specta]
pub(crate) async fn run_agent(
    state: State<'_, AppState>,
    job: String,
    name: String,
    task: String,
    earlier: Vec<Exchange>,
    on_event: Channel<AgentEvent>,
) -> Result<AgentRunView, ApiError> {
    let stop = crate::jobs::Stop::register(&state.jobs, job.clone())?;
    let on_device = state.chat_model().await.map(|m| m as Arc<dyn strata_core::ChatModel>);
    let asks = state.asks.clone();
    let servers = strata_mcp_client::McpConfig::load_from(&strata_mcp_client::McpConfig::path()?)?;
    state
        .run_apart(move |e| {
            let models = |a: &Agent| model_for(a, &on_device);
            let events = on_event.clone();
            let approve = move |server: &str, tool: &str, args: &serde_json::Value| -> bool {
                ask(&asks, &job, &events, server, tool, args)
            };
            let external = strata_agents::McpTools::new(servers, &approve);
            let earlier: Vec<strata_agents::Turn> = earlier
                .into_iter()
                .flat_map(|x| {
                    [
                        strata_agents::Turn::User(x.task),
                        strata_agents::Turn::Assistant { agent: x.agent, text: x.answer, calls: Vec::new() },
                    ]
                })
                .collect();
            let means = strata_agents::Means { models: &models, external: &external, earlier: &earlier };
            let mut progress = |seq: u64, s: &NewStep| {
                let _ = on_event.send(AgentEvent::Step(AgentStepView::of(seq, s)));
            };
            let r = strata_agents::run_with(
                e,
                means,
                &name,
                &task,
                strata_agents::DEFAULT_MAX_STEPS,
                stop.flag(),
                &mut progress,
            )?;
            let (run, _) = e.agent_run(&r.id)?;
            Ok(AgentRunView::from(run))
        })
        .await
}

/// Asks the window whether `tool` of `server` may run, and waits for the answer (a no after
/// [`ASK_WAIT`]).
fn ask(
    asks: &Asks,
    job: &str,
    events: &Channel<AgentEvent>,
    server: &str,
    tool: &str,
    args: &serde_json::Value,
) -> bool {
    let id = format!("{job}-{}", ulid::Ulid::new());
    let (tx, rx) = mpsc::channel();
    asks.0.lock().unwrap_or_else(|p| p.into_inner()).insert(id.clone(), tx);
    let asked =
        AgentEvent::Ask { id: id.clone(), server: server.into(), tool: tool.into(), arguments: args.to_string() };
    let answer = events.send(asked).is_ok() && rx.recv_timeout(ASK_WAIT).unwrap_or(false);
    asks.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    answer
}

/// The person's answer to a tool's question (`AgentEvent::Ask`).
#[tauri::command]
#[specta::specta]
pub(crate) async fn answer_tool_request(state: State<'_, AppState>, id: String, allow: bool) -> Result<(), ApiError> {
    let waiting = state.asks.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    match waiting {
        Some(tx) => {
            let _ = tx.send(allow);
            Ok(())
        }
        None => Err(ApiError::new(ErrorCode::NotFound, "that question was already answered, or its run ended")),
    }
}

/// The model for an agent: its own (`PROVIDER:MODEL`), else the on-device chat model.
fn model_for(
    agent: &Agent,
    on_device: &Result<Arc<dyn strata_core::ChatModel>, ApiError>,
) -> Result<Arc<dyn strata_agents::ToolModel>, String> {
    let chat: Arc<dyn strata_core::ChatModel> = match agent.spec.model.as_deref().and_then(|m| m.split_once(':')) {
        Some((provider, model)) => {
            // A provider Strata serves, or one of the person's chat models: the registry opens both.
            let settings = strata_api::Settings::load().map_err(|e| e.message)?;
            strata_plugins::open::chat_model(&settings, provider, Some(model.to_string()), None, None)
                .map_err(|e| e.to_string())?
                .into()
        }
        None => on_device.clone().map_err(|e| e.message)?,
    };
    Ok(Arc::new(strata_agents::ChatTools(chat)))
}

/// The runs, newest first (of one agent, when named).
#[tauri::command]
#[specta::specta]
pub(crate) async fn agent_runs(
    state: State<'_, AppState>,
    agent: Option<String>,
) -> Result<Vec<AgentRunView>, ApiError> {
    state.run(move |e| Ok(e.agent_runs(agent.as_deref(), 100)?.into_iter().map(AgentRunView::from).collect())).await
}

/// A run's steps, in order.
#[tauri::command]
#[specta::specta]
pub(crate) async fn agent_run_steps(state: State<'_, AppState>, id: String) -> Result<Vec<AgentStepView>, ApiError> {
    state.run(move |e| Ok(e.agent_run(&id)?.1.iter().map(|s| AgentStepView::of(s.seq, &s.step)).collect())).await
}

/// Forgets one run and its steps.
#[tauri::command]
#[specta::specta]
pub(crate) async fn forget_agent_run(state: State<'_, AppState>, id: String) -> Result<(), ApiError> {
    state.run(move |e| e.forget_agent_run(&id)).await
}
