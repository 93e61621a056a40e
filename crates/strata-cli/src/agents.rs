//! `strata agents`: a person's agents — define and change them (each change a version), run
//! one on a task with each step shown as it happens, read the record of runs, forget.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};
use strata_api::Engine;
use strata_api::agents::{Agent, AgentSpec, NewStep, SharedAccess};

use crate::args::{AgentsCommand, ProviderArgs, SharedArg, SpecArgs};
use crate::render::Out;

/// `strata agents …`.
pub(crate) fn agents(engine: &mut Engine, action: Option<AgentsCommand>, out: &Out) -> Result<()> {
    match action.unwrap_or(AgentsCommand::List) {
        AgentsCommand::List => list(&engine.agents()?, out),
        AgentsCommand::Add { name, spec } => {
            let a = engine.define_agent(&name, changed(AgentSpec::default(), spec)?)?;
            shown(&a, out, &format!("Added {} (version 1).", a.name))
        }
        AgentsCommand::Edit { name, spec, expect_version } => {
            let current = engine.agent(&name)?;
            let a = engine.change_agent(&name, changed(current.spec.clone(), spec)?, expect_version)?;
            let words = match a.version == current.version {
                true => format!("{} is unchanged (version {}).", a.name, a.version),
                false => format!("Changed {} (version {}).", a.name, a.version),
            };
            shown(&a, out, &words)
        }
        AgentsCommand::Show { name } => shown(&engine.agent(&name)?, out, ""),
        AgentsCommand::History { name } => {
            let versions = engine.agent_history(&name)?;
            if out.json {
                say!("{}", crate::terminal::json(&versions)?);
                return Ok(());
            }
            for v in versions {
                say!("version {}, {} {}", v.version, v.change, v.at.format("%Y-%m-%d %H:%M"));
                for line in describe(&v.spec) {
                    say!("  {line}");
                }
            }
            Ok(())
        }
        AgentsCommand::Forget { name, yes } => {
            let a = engine.agent(&name)?;
            if !yes && !crate::terminal::confirm(&format!("Forget {} and every run it took part in?", a.name))? {
                bail!("nothing was forgotten");
            }
            let gone = engine.forget_agent(&a.name)?;
            note!(
                "Forgot {}: {} versions and {} runs erased. Its own memories stay.",
                a.name,
                gone.versions,
                gone.runs
            );
            Ok(())
        }
        AgentsCommand::Run { name, task, max_steps, yes } => run(engine, &name, &task.join(" "), (max_steps, yes), out),
        AgentsCommand::Runs { id: Some(id), .. } => crate::agent_runs::show_run(engine, &id, out),
        AgentsCommand::Runs { id: None, agent, limit } => {
            crate::agent_runs::list_runs(&engine.agent_runs(agent.as_deref(), limit)?, out)
        }
        AgentsCommand::ForgetRun { id } => {
            engine.forget_agent_run(&id)?;
            note!("Forgot run {}.", id.trim());
            Ok(())
        }
    }
}

/// `spec` with what the command line gives changed.
fn changed(mut spec: AgentSpec, args: SpecArgs) -> Result<AgentSpec> {
    if let Some(d) = args.description {
        spec.description = d;
    }
    if let Some(i) = args.instructions {
        spec.instructions = i;
    }
    if let Some(f) = args.instructions_file {
        spec.instructions = std::fs::read_to_string(&f)
            .map_err(|e| anyhow::anyhow!("cannot read the instructions in {}: {e}", f.display()))?;
    }
    if let Some(m) = args.model {
        spec.model = Some(m);
    }
    let listed = |given: Vec<String>| -> Vec<String> { given.into_iter().filter(|t| t != "none").collect() };
    if !args.tools.is_empty() {
        spec.tools = listed(args.tools);
        let known: Vec<&str> =
            strata_agents::tools::MEMORY_TOOLS.iter().chain(&strata_agents::datasets::DATASET_TOOLS).copied().collect();
        let servers = strata_mcp_client::McpConfig::load_from(&strata_mcp_client::McpConfig::path()?)?;
        let outside =
            |t: &str| strata_mcp_client::split_qualified(t).is_some_and(|(s, _)| servers.servers.contains_key(s));
        if let Some(unknown) = spec.tools.iter().find(|t| !known.contains(&t.as_str()) && !outside(t)) {
            bail!(
                "there is no tool named {unknown}: the tools are {}, and your MCP servers' as SERVER__TOOL or \
                 SERVER__* (strata mcp-servers)",
                known.join(", ")
            );
        }
    }
    if !args.handoffs.is_empty() {
        spec.handoffs = listed(args.handoffs);
    }
    if let Some(s) = args.shared {
        spec.shared = match s {
            SharedArg::None => SharedAccess::None,
            SharedArg::Read => SharedAccess::Read,
            SharedArg::Write => SharedAccess::Write,
        };
    }
    Ok(spec)
}

/// The lines that say what an agent is.
fn describe(spec: &AgentSpec) -> Vec<String> {
    let none = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    let shared = match spec.shared {
        SharedAccess::None => "only its own",
        SharedAccess::Read => "its own; reads the shared ones",
        SharedAccess::Write => "its own and the shared ones",
    };
    let mut lines = vec![
        format!("model: {}", spec.model.as_deref().unwrap_or("on-device (the chosen one)")),
        format!("tools: {}", none(&spec.tools)),
        format!("hands tasks to: {}", none(&spec.handoffs)),
        format!("memories: {shared}"),
    ];
    if !spec.description.is_empty() {
        lines.insert(0, format!("for: {}", spec.description));
    }
    if !spec.instructions.is_empty() {
        lines.push(format!("instructions: {}", spec.instructions.trim()));
    }
    lines
}

fn shown(a: &Agent, out: &Out, words: &str) -> Result<()> {
    if out.json {
        say!("{}", crate::terminal::json(a)?);
        return Ok(());
    }
    say!("{} (version {}, changed {})", a.name, a.version, a.updated_at.format("%Y-%m-%d %H:%M"));
    for line in describe(&a.spec) {
        say!("  {line}");
    }
    if !words.is_empty() {
        note!("{words}");
    }
    Ok(())
}

fn list(agents: &[Agent], out: &Out) -> Result<()> {
    if out.json {
        say!("{}", crate::terminal::json(agents)?);
        return Ok(());
    }
    if agents.is_empty() {
        say!("No agents yet: strata agents add NAME --instructions \"…\" --tool recall defines one.");
        return Ok(());
    }
    let mut t = crate::render::table(&["Name", "Model", "Tools", "Hands tasks to", "Version"]);
    for a in agents {
        let join = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
        t.add_row([
            a.name.clone(),
            a.spec.model.clone().unwrap_or_else(|| "on-device".into()),
            join(&a.spec.tools),
            join(&a.spec.handoffs),
            a.version.to_string(),
        ]);
    }
    crate::render::print_table(&t)
}

/// The model an agent's `model` names: on-device (the chosen one, or a pinned one by name), or
/// `PROVIDER:MODEL`.
pub(crate) fn model_for(agent: &Agent) -> std::result::Result<Arc<dyn strata_agents::ToolModel>, String> {
    let args = match agent.spec.model.as_deref() {
        None | Some("on-device") => ProviderArgs { provider: "on-device".into(), model: None, base_url: None },
        Some(m) => match m.split_once(':') {
            Some((provider, model)) => {
                ProviderArgs { provider: provider.into(), model: Some(model.into()), base_url: None }
            }
            None => ProviderArgs { provider: "on-device".into(), model: Some(m.into()), base_url: None },
        },
    };
    let chat = crate::commands::open_chat(args, None).map_err(|e| e.to_string())?;
    Ok(Arc::new(strata_agents::ChatTools(Arc::from(chat))))
}

/// Runs `name` on `task`; `(max_steps, yes)`: the step limit, and whether calls of tools
/// asked about are allowed without asking.
fn run(engine: &mut Engine, name: &str, task: &str, (max_steps, yes): (usize, bool), out: &Out) -> Result<()> {
    let models = model_for;
    let approve = move |server: &str, tool: &str, args: &serde_json::Value| -> bool {
        use std::io::IsTerminal;
        if yes {
            return true;
        }
        if !std::io::stdin().is_terminal() {
            note!(
                "Not allowed: {tool} of {server} asks first (pass --yes, or `strata mcp-servers policy {server} {tool} allowed`)."
            );
            return false;
        }
        crate::terminal::ask(&format!("Let {server} run {tool} with {args}?")).unwrap_or(false)
    };
    let servers = strata_mcp_client::McpConfig::load_from(&strata_mcp_client::McpConfig::path()?)?;
    let external = strata_agents::McpTools::new(servers, &approve);
    let show = !out.json;
    let mut progress = |seq: u64, s: &NewStep| {
        if show {
            note!("{}", crate::agent_runs::step_line(seq, s));
        }
    };
    let means = strata_agents::Means { models: &models, external: &external, earlier: &[] };
    let report = strata_agents::run_with(engine, means, name, task, max_steps, &AtomicBool::new(false), &mut progress)?;
    if out.json {
        say!("{}", crate::terminal::json(&report)?);
        return Ok(());
    }
    say!("{}", report.answer);
    let how = match report.outcome {
        strata_api::agents::RunOutcome::Answered => format!("answered by {}", report.last_agent),
        other => format!("{other}, {} acting last", report.last_agent),
    };
    note!("Run {} ({how}): strata agents runs {} shows its steps.", report.id, report.id);
    if report.outcome != strata_api::agents::RunOutcome::Answered {
        std::process::exit(1);
    }
    Ok(())
}
