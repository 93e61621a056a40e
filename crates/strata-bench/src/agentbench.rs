//! Agents judged on tasks (`strata bench agents`, issue 43): `data/agents/tasks.json`, each task
//! run by the product's loop ([`strata_agents::run`]) on a fresh copy of a store holding the
//! memories of `data/answers/memories.json` (embedded), with one model for every agent. A task
//! succeeds when every expectation holds: the answer says what it should, the run called the
//! tools and made the handoffs it should, and a memory made during the run keeps what it should.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use strata_agents::{AgentModels, ToolModel};
use strata_api::agents::{AgentSpec, StepKind};
use strata_api::{ApiError, ApiResult, Engine};
use strata_core::Embedder;

/// The task set's file.
#[derive(Debug, Deserialize)]
struct TaskSet {
    agents: BTreeMap<String, AgentSpec>,
    tasks: Vec<Task>,
}

#[derive(Debug, Deserialize)]
struct Task {
    id: String,
    kind: String,
    agent: String,
    task: String,
    expect: Expect,
}

#[derive(Debug, Default, Deserialize)]
struct Expect {
    /// Each entry: one of these strings (case aside) is in the answer.
    #[serde(default)]
    answer: Vec<Vec<String>>,
    #[serde(default)]
    called: Vec<String>,
    #[serde(default)]
    handed: Vec<String>,
    /// Each string is in a memory made during the run.
    #[serde(default)]
    kept: Vec<String>,
}

/// One task's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    /// The task's id.
    pub id: String,
    /// `single_tool` or `handoff`.
    pub kind: String,
    /// Whether every expectation held.
    pub success: bool,
    /// The expectations that did not hold, in words.
    pub missed: Vec<String>,
    /// How the run ended.
    pub outcome: String,
    /// The answer.
    pub answer: String,
    /// Steps recorded, and of them model calls.
    pub steps: u64,
    /// Model calls.
    pub model_calls: u64,
    /// Seconds the run took.
    pub seconds: f64,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct AgentBench {
    /// The model every agent used.
    pub model: String,
    /// Success rate and mean model calls by kind of task.
    pub by_kind: BTreeMap<String, (f64, f64)>,
    /// Every task.
    pub tasks: Vec<TaskResult>,
}

fn invalid(m: String) -> ApiError {
    ApiError::invalid(m)
}

/// Runs the tasks of `data` (`tasks.json`) with `model` for every agent, each on a copy of a
/// store filled from `memories` (a seed document) and embedded with `embedder`, in `workdir`.
pub fn run(
    data: &Path,
    memories: &Path,
    workdir: &Path,
    embedder: Arc<dyn Embedder>,
    model: Arc<dyn ToolModel>,
    progress: &mut dyn FnMut(&TaskResult),
) -> ApiResult<AgentBench> {
    let text = std::fs::read_to_string(data).map_err(|e| invalid(format!("cannot read {}: {e}", data.display())))?;
    let set: TaskSet = serde_json::from_str(&text).map_err(|e| invalid(format!("{}: {e}", data.display())))?;
    let base = workdir.join("agents-base.db");
    drop(crate::answerbench::fill(&base, memories, None, embedder.clone())?);
    let chosen = model.clone();
    let models = AgentModels(Arc::new(move |_: &strata_api::agents::Agent| Ok(chosen.clone())));
    let mut tasks = Vec::new();
    for t in &set.tasks {
        let path = workdir.join("agents-task.db");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        std::fs::copy(&base, &path).map_err(|e| invalid(format!("cannot copy the store: {e}")))?;
        let mut engine = crate::answerbench::open_filled(&path)?;
        engine.use_embedder(embedder.clone(), false)?;
        for (name, spec) in &set.agents {
            engine.define_agent(name, spec.clone())?;
        }
        let result = one(&mut engine, &models, t)?;
        progress(&result);
        tasks.push(result);
    }
    let mut by_kind: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for kind in tasks.iter().map(|t| t.kind.clone()).collect::<std::collections::BTreeSet<_>>() {
        let of: Vec<&TaskResult> = tasks.iter().filter(|t| t.kind == kind).collect();
        let n = of.len().max(1) as f64;
        let rate = of.iter().filter(|t| t.success).count() as f64 / n;
        let calls = of.iter().map(|t| t.model_calls as f64).sum::<f64>() / n;
        by_kind.insert(kind, ((rate * 1000.0).round() / 1000.0, (calls * 10.0).round() / 10.0));
    }
    Ok(AgentBench { model: model.name(), by_kind, tasks })
}

/// Runs task `t` and judges it.
fn one(engine: &mut Engine, models: &AgentModels, t: &Task) -> ApiResult<TaskResult> {
    let before: std::collections::BTreeSet<String> =
        engine.all_memories(strata_core::Filter::default())?.into_iter().map(|m| m.id.to_string()).collect();
    let started = std::time::Instant::now();
    let report = strata_agents::run(engine, &*models.0, &t.agent, &t.task, 6, &AtomicBool::new(false), &mut |_, _| {})?;
    let seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let (_, steps) = engine.agent_run(&report.id)?;
    let did = |kind: StepKind, name: &str| steps.iter().any(|s| s.step.kind == Some(kind) && s.step.name == name);
    let answer = report.answer.to_lowercase();
    let made: Vec<String> = engine
        .all_memories(strata_core::Filter::default())?
        .into_iter()
        .filter(|m| !before.contains(&m.id.to_string()))
        .map(|m| {
            let (title, body) = strata_core::search_text(&m.content);
            format!("{title} {body}").to_lowercase()
        })
        .collect();
    let mut missed = Vec::new();
    for any in &t.expect.answer {
        if !any.iter().any(|a| answer.contains(&a.to_lowercase())) {
            missed.push(format!("the answer does not say {}", any.join(" or ")));
        }
    }
    missed.extend(t.expect.called.iter().filter(|c| !did(StepKind::Tool, c)).map(|c| format!("{c} was not called")));
    missed.extend(t.expect.handed.iter().filter(|h| !did(StepKind::Handoff, h)).map(|h| format!("not handed to {h}")));
    for k in &t.expect.kept {
        if !made.iter().any(|m| m.contains(&k.to_lowercase())) {
            missed.push(format!("no memory made keeps {k}"));
        }
    }
    Ok(TaskResult {
        id: t.id.clone(),
        kind: t.kind.clone(),
        success: missed.is_empty(),
        missed,
        outcome: report.outcome.to_string(),
        answer: report.answer,
        steps: report.steps,
        model_calls: steps.iter().filter(|s| s.step.kind == Some(StepKind::Reply)).count() as u64,
        seconds,
    })
}
