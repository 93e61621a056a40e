//! The agent loop with scripted models on a real store: tool calls and results, the step limit,
//! Cancel, handoffs between agents each in its own scope, and untrusted text kept fenced.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use strata_agents::{Reply, ToolCall, ToolModel, ToolSpec, Turn};
use strata_api::agents::{AgentSpec, RunOutcome, SharedAccess, StepKind};
use strata_api::{Engine, EngineOptions};

mod chat_tools;
mod datasets;
mod handoffs;

/// What a scripted model was shown at one turn.
#[derive(Clone)]
pub struct Seen {
    pub agent: String,
    pub system: String,
    pub transcript: Vec<Turn>,
    pub tools: Vec<String>,
}

/// Replies given in order per agent (found in the system prompt's first line), and everything
/// each was shown. An agent with no reply left calls `recall` again (to reach a step limit).
#[derive(Default)]
pub struct Script {
    replies: Mutex<HashMap<String, VecDeque<Result<Reply, String>>>>,
    pub seen: Mutex<Vec<Seen>>,
}

impl Script {
    pub fn new(replies: &[(&str, Result<Reply, String>)]) -> Arc<Script> {
        let script = Script::default();
        for (agent, r) in replies {
            script.replies.lock().unwrap().entry(agent.to_string()).or_default().push_back(r.clone());
        }
        Arc::new(script)
    }
}

impl ToolModel for Script {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn reply(&self, system: &str, transcript: &[Turn], tools: &[ToolSpec], _: &AtomicBool) -> Result<Reply, String> {
        let agent = system.strip_prefix("You are ").and_then(|s| s.split(',').next()).unwrap_or("").to_string();
        self.seen.lock().unwrap().push(Seen {
            agent: agent.clone(),
            system: system.to_string(),
            transcript: transcript.to_vec(),
            tools: tools.iter().map(|t| t.name.clone()).collect(),
        });
        let next = self.replies.lock().unwrap().get_mut(&agent).and_then(VecDeque::pop_front);
        next.unwrap_or_else(|| Ok(calls(&[("recall", json!({"query": "anything"}))])))
    }
}

/// A reply that calls these tools.
pub fn calls(list: &[(&str, Value)]) -> Reply {
    let calls = list
        .iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall { id: format!("call_{i}"), name: name.to_string(), arguments: args.clone() })
        .collect();
    Reply { calls, prompt_tokens: 50, completion_tokens: 5, ..Reply::default() }
}

/// A reply that answers.
pub fn says(text: &str) -> Reply {
    Reply { text: text.into(), prompt_tokens: 60, completion_tokens: 8, ..Reply::default() }
}

pub fn engine(dir: &tempfile::TempDir) -> Engine {
    let opts = EngineOptions { user_id: "alex".into(), client: "test".into(), ..EngineOptions::default() };
    Engine::open(&dir.path().join("strata.db"), opts).unwrap()
}

pub fn spec(tools: &[&str], handoffs: &[&str], shared: SharedAccess) -> AgentSpec {
    AgentSpec {
        description: "helps".into(),
        instructions: "Be brief.".into(),
        tools: tools.iter().map(|t| t.to_string()).collect(),
        handoffs: handoffs.iter().map(|t| t.to_string()).collect(),
        shared,
        ..AgentSpec::default()
    }
}

/// Runs `agent` on `task` with `script` for every agent.
pub fn go(e: &mut Engine, script: &Arc<Script>, agent: &str, task: &str, max: usize) -> strata_agents::RunReport {
    let model: Arc<dyn ToolModel> = script.clone();
    let models = move |_: &strata_api::agents::Agent| Ok(model.clone());
    strata_agents::run(e, &models, agent, task, max, &AtomicBool::new(false), &mut |_, _| {}).unwrap()
}

/// The tool results the transcript holds, in order.
pub fn results(t: &[Turn]) -> Vec<(String, String, bool)> {
    t.iter()
        .filter_map(|turn| match turn {
            Turn::ToolResult { name, content, failed, .. } => Some((name.clone(), content.clone(), *failed)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_agent_calls_tools_reads_their_results_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(&dir);
    e.define_agent("Planner", spec(&["recall", "remember"], &[], SharedAccess::Write)).unwrap();
    let script = Script::new(&[
        ("Planner", Ok(calls(&[("remember", json!({"about": "Lia", "fact": "birthday", "value": "12 May"}))]))),
        ("Planner", Ok(calls(&[("recall", json!({"query": "Lia birthday"}))]))),
        ("Planner", Ok(says("Lia's birthday is on 12 May."))),
    ]);
    let report = go(&mut e, &script, "planner", "When is Lia's birthday? Note it first: 12 May.", 10);
    assert_eq!((report.outcome, report.answer.as_str()), (RunOutcome::Answered, "Lia's birthday is on 12 May."));
    let got = results(&report.transcript);
    assert!(got[0].1.starts_with("kept as ") && got[0].1.ends_with("(yours)"), "{got:?}");
    assert!(got[1].1.starts_with("Lia: birthday: 12 May (memory ") && got[1].1.ends_with(", yours)"), "{got:?}");
    // The fact is the agent's own, and the person sees it with the agent named.
    let mine = e.recall("Lia birthday", strata_core::query::Filter::default(), 5).unwrap();
    assert_eq!(mine[0].memory.scope.agent_id.as_deref(), Some("Planner"));
    // The record: each reply and tool call, in order, with tokens summed.
    let (run, steps) = e.agent_run(&report.id).unwrap();
    let kinds: Vec<(StepKind, &str)> = steps.iter().map(|s| (s.step.kind.unwrap(), s.step.name.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (StepKind::Reply, "scripted"),
            (StepKind::Tool, "remember"),
            (StepKind::Reply, "scripted"),
            (StepKind::Tool, "recall"),
            (StepKind::Reply, "scripted")
        ]
    );
    assert_eq!((run.prompt_tokens, run.completion_tokens, run.outcome), (160, 18, Some(RunOutcome::Answered)));
    assert_eq!(steps[1].step.arguments, r#"{"about":"Lia","fact":"birthday","value":"12 May"}"#);
    // The second turn remembered the fact before the model was asked.
    let seen = script.seen.lock().unwrap();
    assert!(seen[0].system.starts_with("You are Planner, one of the person's assistants.\n\nBe brief."));
    assert!(seen[2].system.contains("<memories>\n- [") && seen[2].system.contains("Lia: birthday: 12 May"));
    assert_eq!(seen[0].tools, ["recall", "remember"]);
    drop(seen);
    // The run quotes the fact: forgetting the fact forgets the run, as derived data.
    let lia = mine[0].memory.id.clone();
    let other = go(&mut e, &Script::new(&[("Planner", Ok(says("Hello.")))]), "Planner", "Say hello.", 3);
    e.forget(&strata_api::Target::new(lia)).unwrap();
    let left: Vec<String> = e.agent_runs(None, 10).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(left, [other.id], "only the run that never read the fact is left");
}

#[test]
fn the_step_limit_and_cancel_end_a_run_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(&dir);
    e.define_agent("Looper", spec(&["recall"], &[], SharedAccess::Write)).unwrap();
    let script = Script::new(&[]);
    let report = go(&mut e, &script, "Looper", "Find it.", 3);
    assert_eq!(report.outcome, RunOutcome::StepLimit);
    assert!(
        report.answer.starts_with("The agents took 3 steps without an answer (0 handoffs); Looper was acting last.")
    );
    assert_eq!(script.seen.lock().unwrap().len(), 3, "three model calls");
    assert_eq!(report.steps, 6);
    // Cancel, set while the second step is recorded: the run stops before its next step.
    let model: Arc<dyn ToolModel> = Script::new(&[]);
    let models = move |_: &strata_api::agents::Agent| Ok(model.clone());
    let cancel = AtomicBool::new(false);
    let mut stop = |seq: u64, _: &strata_api::agents::NewStep| {
        if seq == 2 {
            cancel.store(true, Ordering::Relaxed);
        }
    };
    let report = strata_agents::run(&mut e, &models, "Looper", "Find it.", 10, &cancel, &mut stop).unwrap();
    assert_eq!((report.outcome, report.answer.as_str()), (RunOutcome::Cancelled, "Stopped by you after 2 steps."));
    let (run, _) = e.agent_run(&report.id).unwrap();
    assert_eq!(
        (run.outcome, run.answer.as_deref()),
        (Some(RunOutcome::Cancelled), Some("Stopped by you after 2 steps."))
    );
}

#[test]
fn a_failing_model_and_an_unknown_agent_are_said_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(&dir);
    e.define_agent("Planner", spec(&[], &[], SharedAccess::Write)).unwrap();
    let script = Script::new(&[("Planner", Err("the server did not answer".into()))]);
    let report = go(&mut e, &script, "Planner", "Hello", 5);
    assert_eq!(report.outcome, RunOutcome::Failed);
    assert_eq!(report.answer, "Planner's model failed: the server did not answer");
    let (_, steps) = e.agent_run(&report.id).unwrap();
    assert!(steps[0].step.failed);
    let model: Arc<dyn ToolModel> = script.clone();
    let models = move |_: &strata_api::agents::Agent| Ok(model.clone());
    let err =
        strata_agents::run(&mut e, &models, "Nobody", "Hi", 5, &AtomicBool::new(false), &mut |_, _| {}).unwrap_err();
    assert_eq!(err.code, strata_api::ErrorCode::NotFound);
    assert!(err.message.contains("no agent is named 'Nobody'"), "{}", err.message);
    assert_eq!(e.agent_runs(None, 10).unwrap().len(), 1, "no run was recorded for an unknown agent");
}
