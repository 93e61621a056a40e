//! `strata agents runs`: the record of agents' runs — a line a run, and one run's steps as a
//! timeline (who acted, what it called with what, what came back).

use anyhow::Result;
use strata_api::Engine;
use strata_api::agents::{AgentRun, NewStep, StepKind};

use crate::render::Out;

/// One step as a line of the timeline.
pub(crate) fn step_line(seq: u64, s: &NewStep) -> String {
    let one = |t: &str, max: usize| strata_core::fence::fence_line(t, max);
    let failed = if s.failed { " (failed)" } else { "" };
    match s.kind {
        Some(StepKind::Reply) if s.result.trim().is_empty() => format!("{seq}. {} thinks ({})", s.agent, s.name),
        Some(StepKind::Reply) => format!("{seq}. {} says{failed}: {}", s.agent, one(&s.result, 160)),
        Some(StepKind::Handoff) => format!("{seq}. {} hands the task to {}", s.agent, s.name),
        _ => format!("{seq}. {} calls {} {}{failed} → {}", s.agent, s.name, one(&s.arguments, 80), one(&s.result, 120)),
    }
}

/// How a run stands, in words.
fn state(r: &AgentRun) -> String {
    match r.outcome {
        Some(o) => o.to_string(),
        None if r.ended_at.is_none() => "running, or stopped without an end".into(),
        None => "ended".into(),
    }
}

/// Runs, a line each.
pub(crate) fn list_runs(runs: &[AgentRun], out: &Out) -> Result<()> {
    if out.json {
        say!("{}", crate::terminal::json(runs)?);
        return Ok(());
    }
    if runs.is_empty() {
        say!("No runs yet: strata agents run NAME \"a task\" gives an agent one.");
        return Ok(());
    }
    let mut t = crate::render::table(&["Run", "Started", "Agent", "Task", "Outcome", "Tokens"]);
    for r in runs {
        t.add_row([
            r.id.clone(),
            r.started_at.format("%Y-%m-%d %H:%M").to_string(),
            r.agent.clone(),
            strata_core::fence::fence_line(&r.task, 48),
            state(r),
            (r.prompt_tokens + r.completion_tokens).to_string(),
        ]);
    }
    crate::render::print_table(&t)
}

/// One run: its task, its steps in order, and how it ended.
pub(crate) fn show_run(engine: &Engine, id: &str, out: &Out) -> Result<()> {
    let (run, steps) = engine.agent_run(id)?;
    if out.json {
        say!("{}", serde_json::json!({"run": run, "steps": steps}));
        return Ok(());
    }
    say!("{} gave {}: {}", run.started_at.format("%Y-%m-%d %H:%M"), run.agent, run.task);
    for s in &steps {
        say!("{}", step_line(s.seq, &s.step));
    }
    let by = run.last_agent.as_deref().map(|a| format!(" by {a}")).unwrap_or_default();
    say!("{}{by}: {}", state(&run), run.answer.as_deref().unwrap_or(""));
    say!("{} tokens read, {} written", run.prompt_tokens, run.completion_tokens);
    Ok(())
}
