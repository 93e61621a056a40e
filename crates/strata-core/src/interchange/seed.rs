//! The memory document of seed 002: `{"semantic": {KEY: facts}, "episodic": [...],
//! "procedural": {NAME: {steps, context}}}`. Imports and exports losslessly.
//!
//! Timestamps without a zone are UTC; exports write them in the same zone-less form.

use std::io::Write;

use chrono::{DateTime, Timelike, Utc};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::json::parse_in;
use super::line_of;
use crate::error::{Error, Result, excerpt};
use crate::event::EventMeta;
use crate::model::{Concept, Content, Episode, EpisodeBody, Facts, Procedure};
use crate::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::store::{NewMemory, Store};

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    #[serde(default)]
    semantic: IndexMap<String, Facts>,
    #[serde(default)]
    episodic: Vec<DocEpisode>,
    #[serde(default)]
    procedural: IndexMap<String, DocProcedure>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocEpisode {
    timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    query: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    speaker: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<DocEpisodeMeta>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct DocEpisodeMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    concepts_referenced: Vec<String>,
    #[serde(flatten)]
    extra: IndexMap<String, serde_json::Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocProcedure {
    steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    context: Option<String>,
}

/// What an import created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ImportCounts {
    /// Semantic memories created.
    pub semantic: u64,
    /// Episodic memories created.
    pub episodic: u64,
    /// Procedural memories created.
    pub procedural: u64,
}

impl ImportCounts {
    /// All memories created.
    pub fn total(&self) -> u64 {
        self.semantic + self.episodic + self.procedural
    }
}

/// One memory a document holds, with where it is (its line and field) for the errors that
/// only creating it can find (a key taken, a limit).
struct Item {
    content: Content,
    session_id: Option<String>,
    line: usize,
    field: String,
}

/// Parses a seed-002 document into its memories, checking everything.
fn parse(file: &str, text: &str) -> Result<Vec<Item>> {
    let doc: Doc = parse_in(file, 1, text)?;
    // The line of a value is the line its first occurrence in the text is on.
    let line = |value: &str| line_of(text, &format!("\"{value}\""));
    let bad = |line: usize, field: &str, message: String| {
        Error::bad_import(file, line, format!("field `{field}`: {message}"))
    };
    let item = |content: Content, session_id: Option<String>, line: usize, field: String| -> Result<Item> {
        content.validate().map_err(|e| bad(line, &field, e.to_string()))?;
        Ok(Item { content, session_id, line, field })
    };
    let mut out = Vec::new();
    for (key, facts) in doc.semantic {
        let (at, field) = (line(&key), format!("semantic.{}", excerpt(&key)));
        out.push(item(Content::Semantic(Concept { key, facts }), None, at, field)?);
    }
    for (i, e) in doc.episodic.into_iter().enumerate() {
        let (at, field) = (line(&e.timestamp), format!("episodic[{i}]"));
        let occurred_at = crate::time::parse_time(&e.timestamp)
            .map_err(|err| bad(at, &format!("{field}.timestamp"), err.to_string()))?;
        let body = match (e.query, e.response, e.speaker, e.text) {
            (q, r, None, None) if q.is_some() || r.is_some() => {
                EpisodeBody::Exchange { query: q.unwrap_or_default(), response: r.unwrap_or_default() }
            }
            (None, None, Some(speaker), Some(text)) => EpisodeBody::Utterance { speaker, text },
            _ => return Err(bad(at, &field, "an episode has either query/response or speaker/text".into())),
        };
        let meta = e.metadata.unwrap_or_default();
        let c = Content::Episodic(Episode { occurred_at, body, concepts: meta.concepts_referenced, extra: meta.extra });
        out.push(item(c, meta.session_id, at, field)?);
    }
    for (name, p) in doc.procedural {
        let (at, field) = (line(&name), format!("procedural.{}", excerpt(&name)));
        out.push(item(Content::Procedural(Procedure { name, steps: p.steps, context: p.context }), None, at, field)?);
    }
    Ok(out)
}

impl Store {
    /// Imports a seed-002 document in one transaction; nothing on any error. Every memory gets
    /// `template`'s scope, tags, importance, tier and source (an episode's own session wins).
    pub fn import_seed(
        &mut self,
        file: &str,
        text: &str,
        template: &NewMemory,
        meta: &EventMeta,
    ) -> Result<ImportCounts> {
        self.import_seed_with(file, text, template, meta, &mut super::no_tick)
    }

    /// [`Store::import_seed`], reporting to `tick` after each memory; an error from `tick`
    /// rolls the whole import back.
    pub fn import_seed_with(
        &mut self,
        file: &str,
        text: &str,
        template: &NewMemory,
        meta: &EventMeta,
        tick: super::Tick,
    ) -> Result<ImportCounts> {
        let items = parse(file, text)?;
        let total = items.len() as u64;
        self.transact(|tx| {
            let mut counts = ImportCounts::default();
            for (done, item) in items.into_iter().enumerate() {
                tick(done as u64, total)?;
                let kind = item.content.kind();
                let mut new = template.clone();
                new.scope.session_id = item.session_id.or(new.scope.session_id);
                tx.create(item.content, new, meta).map_err(|e| match e {
                    Error::DuplicateKey { .. } | Error::Invalid(_) => {
                        Error::bad_import(file, item.line, format!("field `{}`: {e}", item.field))
                    }
                    other => other,
                })?;
                match kind {
                    crate::model::MemoryKind::Semantic => counts.semantic += 1,
                    crate::model::MemoryKind::Episodic => counts.episodic += 1,
                    crate::model::MemoryKind::Procedural => counts.procedural += 1,
                }
            }
            tick(total, total)?;
            Ok(counts)
        })
    }

    /// Writes a user's shared memories (`agent_id` None), or one agent's private ones, as a
    /// seed-002 document. One scope at a time: keys are unique within a scope, not across.
    pub fn export_seed(&self, user_id: &str, agent_id: Option<&str>, out: &mut dyn Write) -> Result<ImportCounts> {
        self.export_seed_with(user_id, agent_id, out, &mut super::no_tick)
    }

    /// [`Store::export_seed`], reporting to `tick` as memories are read (and stopped by it).
    pub fn export_seed_with(
        &self,
        user_id: &str,
        agent_id: Option<&str>,
        out: &mut dyn Write,
        tick: super::Tick,
    ) -> Result<ImportCounts> {
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.user_id = ?1 AND m.agent_id IS ?2 \
             ORDER BY m.occurred_at, m.rid"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let memories = stmt.query_map(rusqlite::params![user_id, agent_id], memory_from_row)?;
        let mut doc = Doc::default();
        let mut counts = ImportCounts::default();
        for (read, m) in memories.enumerate() {
            let m = m?;
            if (read as u64).is_multiple_of(super::TICK_EVERY) {
                tick(read as u64, 0)?;
            }
            match m.content {
                Content::Semantic(c) => {
                    counts.semantic += 1;
                    doc.semantic.insert(c.key, c.facts);
                }
                Content::Procedural(p) => {
                    counts.procedural += 1;
                    doc.procedural.insert(p.name, DocProcedure { steps: p.steps, context: p.context });
                }
                Content::Episodic(e) => {
                    counts.episodic += 1;
                    let (query, response, speaker, text) = match e.body {
                        EpisodeBody::Exchange { query, response } => (Some(query), Some(response), None, None),
                        EpisodeBody::Utterance { speaker, text } => (None, None, Some(speaker), Some(text)),
                    };
                    let metadata = DocEpisodeMeta {
                        session_id: m.scope.session_id,
                        concepts_referenced: e.concepts,
                        extra: e.extra,
                    };
                    let empty = metadata.session_id.is_none()
                        && metadata.concepts_referenced.is_empty()
                        && metadata.extra.is_empty();
                    doc.episodic.push(DocEpisode {
                        timestamp: seed_timestamp(e.occurred_at),
                        query,
                        response,
                        speaker,
                        text,
                        metadata: (!empty).then_some(metadata),
                    });
                }
            }
        }
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(|e| Error::io("cannot write the export", e.into()))?;
        out.write_all(b"\n").map_err(|e| Error::io("cannot write the export", e))?;
        let n = counts.total();
        tick(n, n)?;
        Ok(counts)
    }
}

/// The seed's zone-less UTC form: `2023-07-15T14:32:45`, with milliseconds only when present.
fn seed_timestamp(t: DateTime<Utc>) -> String {
    if t.nanosecond() == 0 {
        t.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.3f").to_string()
    }
}
