//! The tools Strata gives its agents: memory (`recall`, `remember`, `update`, `forget`) within
//! the agent's scope — its own memories, and the ones its person's agents share as its
//! [`SharedAccess`] allows — and a handoff tool per agent it may hand a task to
//! (`transfer_to_<snake name>`, answered `{"assistant": "<Name>"}`, as OpenAI's Agents SDK and
//! Swarm name them).
//!
//! A tool's failure is a result the model reads (`Err(words)`), not an end of the run.

use serde_json::{Value, json};
use strata_api::agents::{Agent, SharedAccess, snake_name};
use strata_api::{AddRequest, ApiError, Engine, Target, UpdateRequest};
use strata_core::model::{Concept, Content, FactValue, MemoryKind};
use strata_core::query::Filter;

use crate::model::ToolSpec;

/// The memory tools, by name.
pub const MEMORY_TOOLS: [&str; 4] = ["recall", "remember", "update", "forget"];

/// The most memories one `recall` returns.
const MAX_RECALLED: usize = 20;

/// The handoff tool's name for the agent called `name`.
pub fn handoff_tool(name: &str) -> String {
    format!("transfer_to_{}", snake_name(name))
}

/// The handoff tool to `to`.
pub(crate) fn handoff_spec(to: &Agent) -> ToolSpec {
    let what = if to.spec.description.trim().is_empty() { String::new() } else { format!(": {}", to.spec.description) };
    ToolSpec {
        name: handoff_tool(&to.name),
        description: format!("Hand the task to the agent {}{what}", to.name),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

/// The memory tool `name`'s description for a model; none for another name.
pub(crate) fn memory_spec(name: &str) -> Option<ToolSpec> {
    // Every string at least a character long, at most a paragraph: a small model held to the
    // schema otherwise fills optional fields with "" or runs on.
    let text = |d: &str| json!({"type": "string", "description": d, "minLength": 1, "maxLength": 400});
    let (description, parameters) = match name {
        "recall" => (
            "Search the memories you may read, by meaning and words. Use it before answering anything that may \
             depend on what you were told before.",
            json!({"type": "object", "properties": {"query": text("what to look for"),
                "limit": {"type": "integer", "description": "at most this many (default 5)"}}, "required": ["query"]}),
        ),
        "remember" => (
            "Keep a fact about someone or something (`about`, `fact`, `value`), or a note (`text`). Kept as your \
             own unless `shared` is true and you may write shared memories.",
            {
                let shared = json!({"type": "boolean", "description": "keep it where all agents can read it"});
                json!({"anyOf": [
                    {"type": "object", "properties": {"about": text("who or what the fact is about"),
                        "fact": text("the fact's name, e.g. birthday"), "value": text("the fact's value"),
                        "shared": shared}, "required": ["about", "fact", "value"], "additionalProperties": false},
                    {"type": "object", "properties": {"text": text("a note, when it is not one fact about one thing"),
                        "shared": shared}, "required": ["text"], "additionalProperties": false}
                ]})
            },
        ),
        "update" => (
            "Change a memory you may write, by the id `recall` gave: set a fact (`fact`, `value`) or replace a note's \
             `text`.",
            json!({"type": "object", "properties": {"id": text("the memory's id"), "fact": text("the fact's name"),
                "value": text("its new value"), "text": text("a note's new text")}, "required": ["id"]}),
        ),
        "forget" => (
            "Erase a memory you may write, by its id, for good. Only when the person asked to forget it.",
            json!({"type": "object", "properties": {"id": text("the memory's id")}, "required": ["id"]}),
        ),
        _ => return None,
    };
    Some(ToolSpec { name: name.into(), description: description.into(), parameters })
}

/// A string argument, trimmed; none when absent or empty.
fn arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

fn words(e: ApiError) -> String {
    e.message
}

/// Runs memory tool `name` for `agent` on `engine` (the agent's own: its scope is the agent's).
pub(crate) fn call_memory(engine: &mut Engine, agent: &Agent, name: &str, args: &Value) -> Result<String, String> {
    match name {
        "recall" => recall(engine, agent, args),
        "remember" => remember(engine, agent, args),
        "update" => update(engine, agent, args),
        "forget" => {
            let id = writable(engine, agent, args)?;
            engine.forget(&Target::new(id.clone())).map_err(words)?;
            Ok(format!("forgot {id}"))
        }
        other => Err(format!("there is no memory tool named {other}")),
    }
}

fn recall(engine: &mut Engine, agent: &Agent, args: &Value) -> Result<String, String> {
    let query = arg(args, "query").ok_or("give `query`: what to look for")?;
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(5).clamp(1, MAX_RECALLED as u64) as usize;
    let mut filter = Filter::default();
    if agent.spec.shared == SharedAccess::None {
        filter.agent_id = Some(agent.name.clone());
    }
    let hits = engine.recall(query, filter, limit).map_err(words)?;
    if hits.is_empty() {
        return Ok("no memory matches".into());
    }
    let lines: Vec<String> = hits
        .iter()
        .map(|h| {
            let (title, body) = strata_core::search_text(&h.memory.content);
            let whose = if h.memory.scope.agent_id.is_some() { "yours" } else { "shared" };
            format!("{title}: {body} (memory {}, {whose})", h.memory.id)
        })
        .collect();
    Ok(lines.join("\n"))
}

fn remember(engine: &mut Engine, agent: &Agent, args: &Value) -> Result<String, String> {
    let shared = args.get("shared").and_then(Value::as_bool).unwrap_or(false);
    if shared && agent.spec.shared != SharedAccess::Write {
        return Err(format!("{} may not write shared memories: keep it as your own (shared: false)", agent.name));
    }
    let content = match (arg(args, "about"), arg(args, "fact"), arg(args, "value"), arg(args, "text")) {
        (Some(about), Some(fact), Some(value), _) => {
            if let Some(done) = add_fact(engine, agent, about, fact, value, shared)? {
                return Ok(done);
            }
            let facts = [(fact.to_string(), FactValue::Text(value.to_string()))].into_iter().collect();
            Content::Semantic(Concept { key: about.to_string(), facts })
        }
        (_, _, _, Some(text)) => Content::Episodic(strata_core::model::Episode {
            occurred_at: engine.now(),
            body: strata_core::model::EpisodeBody::Utterance { speaker: agent.name.clone(), text: text.to_string() },
            concepts: vec![],
            extra: Default::default(),
        }),
        _ => return Err("give `about`, `fact` and `value` for a fact, or `text` for a note".into()),
    };
    let mut req = AddRequest::new(content);
    req.private = !shared;
    let m = engine.add(req).map_err(words)?;
    Ok(format!("kept as {} ({})", m.id, if shared { "shared" } else { "yours" }))
}

/// Sets `fact` on the concept `about` where one the agent may write exists: what was done.
fn add_fact(
    engine: &mut Engine,
    agent: &Agent,
    about: &str,
    fact: &str,
    value: &str,
    shared: bool,
) -> Result<Option<String>, String> {
    let target = Target { id_or_key: about.to_string(), kind: Some(MemoryKind::Semantic) };
    let Ok(m) = engine.memory(&target) else { return Ok(None) };
    let own = m.scope.agent_id.as_deref() == Some(agent.name.as_str());
    if !own && (!shared || agent.spec.shared != SharedAccess::Write) {
        return Ok(None);
    }
    let req = UpdateRequest { set_facts: vec![(fact.into(), FactValue::Text(value.into()))], ..Default::default() };
    engine.update(&Target::new(m.id.to_string()), req).map_err(words)?;
    Ok(Some(format!("set {fact} of {about} ({})", m.id)))
}

fn update(engine: &mut Engine, agent: &Agent, args: &Value) -> Result<String, String> {
    let id = writable(engine, agent, args)?;
    let mut req = UpdateRequest::default();
    match (arg(args, "fact"), arg(args, "value"), arg(args, "text")) {
        (Some(fact), Some(value), _) => req.set_facts = vec![(fact.into(), FactValue::Text(value.into()))],
        (_, _, Some(text)) => req.text = Some(text.into()),
        _ => return Err("give `fact` and `value`, or `text`".into()),
    }
    let m = engine.update(&Target::new(id), req).map_err(words)?;
    Ok(format!("changed {} (version {})", m.id, m.version))
}

/// The id in `args` of a memory `agent` may change: its own, or a shared one where it may
/// write them.
fn writable(engine: &mut Engine, agent: &Agent, args: &Value) -> Result<String, String> {
    let id = arg(args, "id").ok_or("give `id`: the memory's id, as recall shows it")?;
    let m = engine.memory(&Target::new(id)).map_err(words)?;
    let own = m.scope.agent_id.as_deref() == Some(agent.name.as_str());
    if own || (m.scope.agent_id.is_none() && agent.spec.shared == SharedAccess::Write) {
        return Ok(m.id.to_string());
    }
    if m.scope.agent_id.is_none() && agent.spec.shared == SharedAccess::Read {
        return Err(format!("{} may read the shared memory {id} but not change it", agent.name));
    }
    Err(format!("no memory has the id {id}"))
}
