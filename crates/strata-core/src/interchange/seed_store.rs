//! Seed-002 documents in and out of a store, on either engine (the document's shapes are
//! `super::seed`'s).

use crate::error::{Error, Result};
use crate::event::EventMeta;
use crate::interchange::duplicates::{ImportSummary, OnDuplicate};
use crate::model::{Content, EpisodeBody};
use crate::store::{NewMemory, Store};
use std::io::Write;

use super::seed::*;

impl Store {
    /// Imports a seed-002 document in one transaction; nothing on any error, a memory that is
    /// already stored included. Every memory gets `template`'s scope, tags, importance, tier
    /// and source (an episode's own session, and a memory's own extras, win).
    pub fn import_seed(
        &mut self,
        file: &str,
        text: &str,
        template: &NewMemory,
        meta: &EventMeta,
    ) -> Result<ImportCounts> {
        let summary =
            self.import_seed_with(file, text, template, meta, OnDuplicate::Stop, &mut crate::interchange::no_tick)?;
        Ok(summary.added)
    }

    /// [`Store::import_seed`], doing `on_duplicate` with a memory already stored, reporting
    /// to `tick` after each memory; an error from `tick` rolls the whole import back.
    pub fn import_seed_with(
        &mut self,
        file: &str,
        text: &str,
        template: &NewMemory,
        meta: &EventMeta,
        on_duplicate: OnDuplicate,
        tick: crate::interchange::Tick,
    ) -> Result<ImportSummary> {
        let items = parse(file, text)?;
        let total = items.len() as u64;
        self.transact(|tx| {
            let mut summary = ImportSummary::default();
            for (done, item) in items.into_iter().enumerate() {
                tick(done as u64, total)?;
                let (line, field, kind) = (item.line, item.field.clone(), item.content.kind());
                let outcome = import_item(tx, item, template, meta, on_duplicate, file).map_err(|e| match e {
                    Error::DuplicateKey { .. } | Error::Invalid(_) => {
                        Error::bad_import(file, line, format!("field `{field}`: {e}"))
                    }
                    other => other,
                })?;
                summary.count(outcome, kind);
            }
            tick(total, total)?;
            Ok(summary)
        })
    }

    /// Writes a user's shared memories (`agent_id` None), or one agent's private ones, as a
    /// seed-002 document. One scope at a time: keys are unique within a scope, not across.
    pub fn export_seed(&self, user_id: &str, agent_id: Option<&str>, out: &mut dyn Write) -> Result<ImportCounts> {
        self.export_seed_with(user_id, agent_id, out, &mut crate::interchange::no_tick)
    }

    /// [`Store::export_seed`], reporting to `tick` as memories are read (and stopped by it).
    pub fn export_seed_with(
        &self,
        user_id: &str,
        agent_id: Option<&str>,
        out: &mut dyn Write,
        tick: crate::interchange::Tick,
    ) -> Result<ImportCounts> {
        let memories = self.engine.lists().scope_rows(user_id, agent_id)?;
        let mut doc = Doc::default();
        let mut counts = ImportCounts::default();
        for (read, m) in memories.into_iter().enumerate() {
            if (read as u64).is_multiple_of(crate::interchange::TICK_EVERY) {
                tick(read as u64, 0)?;
            }
            counts.add(m.kind());
            let extras = DocExtras::of(&m);
            match m.content {
                Content::Semantic(c) => {
                    if let Some(x) = extras {
                        doc.strata.semantic.insert(c.key.clone(), x);
                    }
                    doc.semantic.insert(c.key, c.facts);
                }
                Content::Procedural(p) => {
                    if let Some(x) = extras {
                        doc.strata.procedural.insert(p.name.clone(), x);
                    }
                    doc.procedural.insert(p.name, DocProcedure { steps: p.steps, context: p.context });
                }
                Content::Episodic(e) => {
                    let (query, response, speaker, text) = match e.body {
                        EpisodeBody::Exchange { query, response } => (Some(query), Some(response), None, None),
                        EpisodeBody::Utterance { speaker, text } => (None, None, Some(speaker), Some(text)),
                    };
                    let metadata = DocEpisodeMeta {
                        session_id: m.scope.session_id,
                        concepts_referenced: e.concepts,
                        strata: extras,
                        extra: e.extra,
                    };
                    let empty = metadata.session_id.is_none()
                        && metadata.concepts_referenced.is_empty()
                        && metadata.strata.is_none()
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
