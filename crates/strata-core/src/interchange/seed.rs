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
use crate::projection::{MEMORY_COLUMNS, memory_from_row};
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

/// Parses a seed-002 document into contents (with their session ids), checking everything.
fn parse(file: &str, text: &str) -> Result<Vec<(Content, Option<String>)>> {
    let doc: Doc = parse_in(file, 1, text)?;
    let bad = |needle: &str, message: String| Error::bad_import(file, line_of(text, needle), message);
    let mut out = Vec::new();
    for (key, facts) in doc.semantic {
        let c = Content::Semantic(Concept { key: key.clone(), facts });
        c.validate().map_err(|e| bad(&format!("\"{key}\""), format!("field `semantic.{}`: {e}", excerpt(&key))))?;
        out.push((c, None));
    }
    for (i, e) in doc.episodic.into_iter().enumerate() {
        let at = format!("episodic[{i}]");
        let occurred_at = crate::time::parse_time(&e.timestamp)
            .map_err(|err| bad(&format!("\"{}\"", e.timestamp), format!("field `{at}.timestamp`: {err}")))?;
        let body = match (e.query, e.response, e.speaker, e.text) {
            (q, r, None, None) if q.is_some() || r.is_some() => {
                EpisodeBody::Exchange { query: q.unwrap_or_default(), response: r.unwrap_or_default() }
            }
            (None, None, Some(speaker), Some(text)) => EpisodeBody::Utterance { speaker, text },
            _ => {
                return Err(bad(
                    &format!("\"{}\"", e.timestamp),
                    format!("field `{at}`: an episode has either query/response or speaker/text"),
                ));
            }
        };
        let meta = e.metadata.unwrap_or_default();
        let c = Content::Episodic(Episode { occurred_at, body, concepts: meta.concepts_referenced, extra: meta.extra });
        c.validate().map_err(|err| bad(&format!("\"{}\"", e.timestamp), format!("field `{at}`: {err}")))?;
        out.push((c, meta.session_id));
    }
    for (name, p) in doc.procedural {
        let c = Content::Procedural(Procedure { name: name.clone(), steps: p.steps, context: p.context });
        c.validate().map_err(|e| bad(&format!("\"{name}\""), format!("field `procedural.{}`: {e}", excerpt(&name))))?;
        out.push((c, None));
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
        let contents = parse(file, text)?;
        let total = contents.len() as u64;
        self.transact(|tx| {
            let mut counts = ImportCounts::default();
            for (done, (content, session_id)) in contents.into_iter().enumerate() {
                tick(done as u64, total)?;
                let kind = content.kind();
                let line = content.key().map_or(1, |k| line_of(text, &format!("\"{k}\"")));
                let mut new = template.clone();
                new.scope.session_id = session_id.or(new.scope.session_id);
                tx.create(content, new, meta).map_err(|e| match e {
                    Error::DuplicateKey { .. } | Error::Invalid(_) => Error::bad_import(file, line, e.to_string()),
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
