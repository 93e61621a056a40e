//! Agents (issue 43; SQLite migration 0012, PostgreSQL 0009): a person's named assistants, each
//! with its instructions, model, tools, the agents it may hand a task to, and how it may use the
//! memories all of the person's agents share. An agent's own memories are the memories of its
//! scope (`agent_id` = its name), as for any agent that connects.
//!
//! A definition is configuration, not knowledge, so it is not a memory that recall would find
//! (decision 0009, amended): each version is kept (`agent_versions`), so its history says what
//! it was told when, and forgetting an agent erases every version and every run it took part
//! in, from the files too. Written once for both engines in shared SQL.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::sql::{Row, Sql, SqlValue};
use crate::store::Store;

/// The longest instructions an agent may have (they go into every prompt it gets).
pub const MAX_INSTRUCTIONS: usize = 16 * 1024;
/// The longest description.
pub const MAX_DESCRIPTION: usize = 1024;

/// How an agent may use the memories all of its person's agents share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum SharedAccess {
    /// Neither reads nor writes them: only its own.
    None,
    /// Reads them; writes only its own.
    Read,
    /// Reads them, and may write there too (a `remember` with `shared`).
    #[default]
    Write,
}

/// What an agent is told and may do.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentSpec {
    /// What it is for, in a sentence (other agents read it to decide on a handoff).
    #[serde(default)]
    pub description: String,
    /// Its instructions: the system prompt of each of its turns.
    #[serde(default)]
    pub instructions: String,
    /// The model that answers for it (`on-device`, a pinned on-device model's name, or
    /// `PROVIDER:MODEL`); none: the person's chat model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tools it may use, by name (`recall`, `remember`, `update`, `forget`, `datasets`, a
    /// person's MCP server's `SERVER__TOOL`).
    #[serde(default)]
    pub tools: Vec<String>,
    /// The agents it may hand a task to, by name.
    #[serde(default)]
    pub handoffs: Vec<String>,
    /// How it may use the shared memories.
    #[serde(default)]
    pub shared: SharedAccess,
}

/// A stored agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agent {
    /// Its name, unique among its person's agents.
    pub name: String,
    /// Whose it is.
    pub user_id: String,
    /// Its definition now.
    pub spec: AgentSpec,
    /// 1 when defined, one more at each change.
    pub version: u64,
    /// When it was defined.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// One version of an agent, as its history lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentVersion {
    /// Its number.
    pub version: u64,
    /// When it was made.
    pub at: DateTime<Utc>,
    /// `created` or `changed`.
    pub change: String,
    /// The definition it had.
    pub spec: AgentSpec,
}

/// What forgetting an agent erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AgentForgotten {
    /// Versions of its definition.
    pub versions: u64,
    /// Runs it took part in, with their steps.
    pub runs: u64,
}

/// `name` as an agent's name: 1–64 letters, digits, spaces, `-` or `_`, starting with a letter
/// or digit (its handoff tool is named after it: `transfer_to_` and its snake form).
pub fn agent_name(name: &str) -> Result<String> {
    let name = name.trim();
    let ok = (1..=64).contains(&name.chars().count())
        && name.starts_with(|c: char| c.is_alphanumeric())
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'));
    if !ok {
        return Err(Error::invalid(format!(
            "'{}' is not an agent's name: use 1 to 64 letters, digits, spaces, '-' or '_', starting with a letter or digit",
            crate::error::bounded(name)
        )));
    }
    Ok(name.to_string())
}

/// The snake form of an agent's name, as its handoff tool spells it: `Travel Planner` →
/// `travel_planner`.
pub fn snake_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

impl AgentSpec {
    /// The definition, checked: sizes within bounds, each handoff an agent's name, no tool
    /// named twice.
    pub fn checked(mut self, own_name: &str) -> Result<AgentSpec> {
        if self.instructions.len() > MAX_INSTRUCTIONS {
            return Err(Error::invalid(format!(
                "an agent's instructions may be {MAX_INSTRUCTIONS} bytes at most; these are {}",
                self.instructions.len()
            )));
        }
        if self.description.len() > MAX_DESCRIPTION {
            return Err(Error::invalid(format!(
                "an agent's description may be {MAX_DESCRIPTION} bytes at most; this is {}",
                self.description.len()
            )));
        }
        self.handoffs = self.handoffs.iter().map(|h| agent_name(h)).collect::<Result<_>>()?;
        if self.handoffs.iter().any(|h| snake_name(h) == snake_name(own_name)) {
            return Err(Error::invalid(format!("{own_name} cannot hand a task to itself")));
        }
        self.tools = self.tools.iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
        let mut seen = std::collections::BTreeSet::new();
        if let Some(twice) = self.tools.iter().chain(&self.handoffs).find(|t| !seen.insert(t.to_lowercase())) {
            return Err(Error::invalid(format!("'{twice}' is named twice in the agent's tools or handoffs")));
        }
        self.model = self.model.map(|m| m.trim().to_string()).filter(|m| !m.is_empty());
        Ok(self)
    }
}

const COLUMNS: &str = "name, user_id, spec, version, created_at, updated_at";

fn agent_of(values: Vec<Option<SqlValue>>) -> Result<Agent> {
    let row = Row::new(values, "agents");
    Ok(Agent {
        name: row.text(0)?,
        user_id: row.text(1)?,
        spec: row.json(2)?,
        version: row.count(3)?,
        created_at: from_ms(row.int(4)?),
        updated_at: from_ms(row.int(5)?),
    })
}

fn unknown(name: &str) -> Error {
    Error::NotFound(format!("no agent is named '{}' (strata agents list shows them)", crate::error::bounded(name)))
}

impl Store {
    /// `user`'s agents, by name.
    pub fn agents(&self, user: &str) -> Result<Vec<Agent>> {
        let mut q = Sql::new(self.engine.dialect(), format!("SELECT {COLUMNS} FROM agents WHERE "));
        q.bind("user_id = ? ORDER BY name", SqlValue::Text(user.into()));
        self.engine.plain().rows(&q)?.into_iter().map(agent_of).collect()
    }

    /// `user`'s agent `name` (names are matched whatever their case).
    pub fn agent(&self, user: &str, name: &str) -> Result<Agent> {
        let mut q = Sql::new(self.engine.dialect(), format!("SELECT {COLUMNS} FROM agents WHERE "));
        q.bind("user_id = ? ", SqlValue::Text(user.into()))
            .bind("AND lower(name) = lower(?)", SqlValue::Text(name.trim().into()));
        self.engine.plain().rows(&q)?.into_iter().next().map(agent_of).transpose()?.ok_or_else(|| unknown(name))
    }

    /// Defines `user`'s agent `name`; refused when one of that name (in any case) exists.
    pub fn define_agent(&mut self, user: &str, name: &str, spec: AgentSpec) -> Result<Agent> {
        let name = agent_name(name)?;
        let spec = spec.checked(&name)?;
        if self.agents(user)?.iter().any(|a| snake_name(&a.name) == snake_name(&name)) {
            return Err(Error::invalid(format!(
                "an agent named '{name}' (or spelled alike) exists: change it (strata agents edit) or choose another name"
            )));
        }
        let now = to_ms(self.clock.now());
        let json = serde_json::to_string(&spec).map_err(|e| Error::invalid(e.to_string()))?;
        self.transact(|tx| {
            let (plain, dialect) = (tx.tx.plain(), tx.tx.dialect());
            let mut q = Sql::new(dialect, "INSERT INTO agents (user_id, name, spec, version, created_at, updated_at) ");
            q.bind("VALUES (?, ", SqlValue::Text(user.into()))
                .bind("?, ", SqlValue::Text(name.clone()))
                .bind("?, 1, ", SqlValue::Text(json.clone()))
                .bind("?, ", SqlValue::Int(now))
                .bind("?)", SqlValue::Int(now));
            plain.execute(&q)?;
            plain.execute(&version_row(dialect, user, &name, 1, now, "created", &json))?;
            Ok(())
        })?;
        self.agent(user, &name)
    }

    /// Changes `user`'s agent `name` to `spec` (a new version); with `expected`, only if it is
    /// still that version (else [`Error::Conflict`]: someone changed it meanwhile).
    pub fn change_agent(&mut self, user: &str, name: &str, spec: AgentSpec, expected: Option<u64>) -> Result<Agent> {
        let current = self.agent(user, name)?;
        let spec = spec.checked(&current.name)?;
        if let Some(v) = expected.filter(|v| *v != current.version) {
            return Err(Error::Conflict {
                stream: format!("agent {}", current.name),
                expected: v.to_string(),
                actual: current.version,
            });
        }
        if spec == current.spec {
            return Ok(current);
        }
        let (now, version) = (to_ms(self.clock.now()), current.version + 1);
        let json = serde_json::to_string(&spec).map_err(|e| Error::invalid(e.to_string()))?;
        self.transact(|tx| {
            let (plain, dialect) = (tx.tx.plain(), tx.tx.dialect());
            let mut q = Sql::new(dialect, "UPDATE agents SET ");
            q.bind("spec = ?, ", SqlValue::Text(json.clone()))
                .bind("version = ?, ", SqlValue::Int(version as i64))
                .bind("updated_at = ? ", SqlValue::Int(now))
                .bind("WHERE user_id = ? ", SqlValue::Text(user.into()))
                .bind("AND name = ? ", SqlValue::Text(current.name.clone()))
                .bind("AND version = ?", SqlValue::Int(current.version as i64));
            if plain.execute(&q)? == 0 {
                return Err(Error::Conflict {
                    stream: format!("agent {}", current.name),
                    expected: current.version.to_string(),
                    actual: current.version + 1,
                });
            }
            plain.execute(&version_row(dialect, user, &current.name, version, now, "changed", &json))?;
            Ok(())
        })?;
        self.agent(user, &current.name)
    }

    /// Every version of `user`'s agent `name`, the first first.
    pub fn agent_history(&self, user: &str, name: &str) -> Result<Vec<AgentVersion>> {
        let agent = self.agent(user, name)?;
        let mut q = Sql::new(self.engine.dialect(), "SELECT version, at, change, spec FROM agent_versions WHERE ");
        q.bind("user_id = ? ", SqlValue::Text(user.into()))
            .bind("AND name = ? ORDER BY version", SqlValue::Text(agent.name));
        self.engine
            .plain()
            .rows(&q)?
            .into_iter()
            .map(|values| {
                let row = Row::new(values, "agent_versions");
                Ok(AgentVersion {
                    version: row.count(0)?,
                    at: from_ms(row.int(1)?),
                    change: row.text(2)?,
                    spec: row.json(3)?,
                })
            })
            .collect()
    }

    /// Erases `user`'s agent `name`: its definition, every version, and every run it took
    /// part in with their steps, in one transaction, then from the files (as forget does).
    /// Its own memories are memories like any others: forgotten apart.
    pub fn forget_agent(&mut self, user: &str, name: &str) -> Result<AgentForgotten> {
        let agent = self.agent(user, name)?;
        let runs = self.runs_with_agent(user, &agent.name)?;
        let forgotten = self.transact(|tx| {
            let (plain, dialect) = (tx.tx.plain(), tx.tx.dialect());
            for id in &runs {
                crate::agent_runs::erase_run(plain, dialect, id)?;
            }
            let mut q = Sql::new(dialect, "DELETE FROM agent_versions WHERE ");
            q.bind("user_id = ? ", SqlValue::Text(user.into()))
                .bind("AND name = ?", SqlValue::Text(agent.name.clone()));
            let versions = plain.execute(&q)?;
            let mut q = Sql::new(dialect, "DELETE FROM agents WHERE ");
            q.bind("user_id = ? ", SqlValue::Text(user.into()))
                .bind("AND name = ?", SqlValue::Text(agent.name.clone()));
            plain.execute(&q)?;
            Ok(AgentForgotten { versions, runs: runs.len() as u64 })
        })?;
        self.scrub()?;
        Ok(forgotten)
    }
}

/// The insert of one version into `agent_versions`.
pub(crate) fn version_row(
    dialect: crate::sql::Dialect,
    user: &str,
    name: &str,
    version: u64,
    at: i64,
    change: &str,
    spec_json: &str,
) -> Sql {
    let mut q = Sql::new(dialect, "INSERT INTO agent_versions (user_id, name, version, at, change, spec) VALUES (");
    q.bind("?, ", SqlValue::Text(user.into()))
        .bind("?, ", SqlValue::Text(name.into()))
        .bind("?, ", SqlValue::Int(version as i64))
        .bind("?, ", SqlValue::Int(at))
        .bind("?, ", SqlValue::Text(change.into()))
        .bind("?)", SqlValue::Text(spec_json.into()));
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_snaked_for_their_handoff_tool() {
        assert_eq!(agent_name("  Travel Planner ").unwrap(), "Travel Planner");
        assert_eq!(snake_name("Travel Planner"), "travel_planner");
        assert_eq!(snake_name("Ana-Maria's  helper"), "ana_maria_s_helper");
        for bad in ["", "-x", "a/b", "<tool>", &"a".repeat(65)] {
            assert!(agent_name(bad).unwrap_err().to_string().contains("is not an agent's name"), "{bad}");
        }
    }

    #[test]
    fn a_spec_is_bounded_and_never_hands_off_to_itself() {
        let spec = AgentSpec { instructions: "x".repeat(MAX_INSTRUCTIONS + 1), ..AgentSpec::default() };
        assert!(spec.checked("A").unwrap_err().to_string().contains("instructions may be 16384 bytes"));
        let spec = AgentSpec { handoffs: vec!["travel planner".into()], ..AgentSpec::default() };
        assert!(spec.checked("Travel Planner").unwrap_err().to_string().contains("cannot hand a task to itself"));
        let spec = AgentSpec { tools: vec!["recall".into(), " recall".into()], ..AgentSpec::default() };
        assert!(spec.checked("A").unwrap_err().to_string().contains("'recall' is named twice"));
        let spec = AgentSpec { model: Some("  ".into()), ..AgentSpec::default() }.checked("A").unwrap();
        assert_eq!(spec.model, None);
    }
}
