//! The person's agents in a backup (format version 2): after the events, one line per agent
//! with every version it had, so that a restored store (or a store moved to another engine by
//! `strata migrate`) keeps its agents and their history. Runs are derived records, like
//! recalls: they stay behind.

use serde::{Deserialize, Serialize};

use crate::agents::{AgentSpec, agent_name};
use crate::clock::{from_ms, to_ms};
use crate::error::{Result, excerpt};
use crate::sql::{Row, Sql, SqlValue};
use crate::storage::EngineTx;
use crate::store::Store;
use crate::time::{format_time, parse_time};

use super::backup::LineError;

/// One agent's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentLine {
    pub(crate) agent: AgentEntry,
}

/// An agent and its versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentEntry {
    user_id: String,
    name: String,
    versions: Vec<VersionEntry>,
}

/// One version of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionEntry {
    version: u64,
    at: String,
    change: String,
    spec: AgentSpec,
}

impl Store {
    /// Every person's agents, each with its versions, for a backup.
    pub(crate) fn agent_lines(&self) -> Result<Vec<AgentLine>> {
        let q = Sql::new(
            self.engine.dialect(),
            "SELECT user_id, name, version, at, change, spec FROM agent_versions ORDER BY user_id, name, version",
        );
        let mut out: Vec<AgentLine> = Vec::new();
        for values in self.engine.plain().rows(&q)? {
            let row = Row::new(values, "agent_versions");
            let (user_id, name) = (row.text(0)?, row.text(1)?);
            let version = VersionEntry {
                version: row.count(2)?,
                at: format_time(from_ms(row.int(3)?)),
                change: row.text(4)?,
                spec: row.json(5)?,
            };
            match out.last_mut() {
                Some(l) if l.agent.user_id == user_id && l.agent.name == name => l.agent.versions.push(version),
                _ => out.push(AgentLine { agent: AgentEntry { user_id, name, versions: vec![version] } }),
            }
        }
        Ok(out)
    }
}

/// Reads the agent on line `n` and writes it, with its versions, in the restore's transaction:
/// its name and every definition held to the rules the commands keep, its versions numbered
/// 1, 2, 3 … from `created`, in time order, no agent twice.
pub(crate) fn restore_agent(
    tx: &EngineTx<'_>,
    n: usize,
    text: &str,
    seen: &mut Vec<(String, String)>,
) -> Result<(), LineError> {
    let bad = |field: &str, message: String| LineError { line: n, message: format!("field `{field}`: {message}") };
    let line: AgentLine = super::json::parse(text).map_err(|e| LineError { line: n, message: e.message })?;
    let a = line.agent;
    let name = agent_name(&a.name).map_err(|e| bad("agent.name", e.to_string()))?;
    let key = (a.user_id.clone(), crate::agents::snake_name(&name));
    if seen.contains(&key) {
        return Err(bad("agent.name", format!("'{}' appears twice", excerpt(&name))));
    }
    seen.push(key);
    if a.versions.is_empty() {
        return Err(bad("agent.versions", "an agent has at least its first version".into()));
    }
    let mut last_at = i64::MIN;
    let mut rows = Vec::new();
    for (i, v) in a.versions.iter().enumerate() {
        let want = if i == 0 { "created" } else { "changed" };
        if v.version != i as u64 + 1 || v.change != want {
            return Err(bad(
                "agent.versions",
                format!("version {} is '{}'; expected version {} '{want}'", v.version, excerpt(&v.change), i + 1),
            ));
        }
        let at = to_ms(parse_time(&v.at).map_err(|e| bad("agent.versions.at", e.to_string()))?);
        if at < last_at {
            return Err(bad("agent.versions.at", format!("version {} is older than the one before it", v.version)));
        }
        last_at = at;
        let spec = v.spec.clone().checked(&name).map_err(|e| bad("agent.versions.spec", e.to_string()))?;
        rows.push((v.version, at, v.change.as_str(), spec));
    }
    let (created, (version, updated, _, spec)) = (rows[0].1, rows.last().expect("one at least").clone());
    let json = |s: &AgentSpec| serde_json::to_string(s).map_err(|e| bad("agent.versions.spec", e.to_string()));
    let (plain, dialect) = (tx.plain(), tx.dialect());
    let mut q = Sql::new(dialect, "INSERT INTO agents (user_id, name, spec, version, created_at, updated_at) VALUES (");
    q.bind("?, ", SqlValue::Text(a.user_id.clone()))
        .bind("?, ", SqlValue::Text(name.clone()))
        .bind("?, ", SqlValue::Text(json(&spec)?))
        .bind("?, ", SqlValue::Int(version as i64))
        .bind("?, ", SqlValue::Int(created))
        .bind("?)", SqlValue::Int(updated));
    plain.execute(&q).map_err(|e| bad("agent", e.to_string()))?;
    for (version, at, change, spec) in &rows {
        let q = crate::agents::version_row(dialect, &a.user_id, &name, *version, *at, change, &json(spec)?);
        plain.execute(&q).map_err(|e| bad("agent.versions", e.to_string()))?;
    }
    Ok(())
}
