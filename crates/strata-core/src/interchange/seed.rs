//! The memory document of seed 002: `{"semantic": {KEY: facts}, "episodic": [...],
//! "procedural": {NAME: {steps, context}}}`. Imports and exports losslessly.
//!
//! Timestamps without a zone are UTC; exports write them in the same zone-less form.
//!
//! What seed 002 has no field for — tags, a tier, a pin, an importance other than a new
//! memory's — travels as optional extra data a seed-002 reader can pass over: a top-level
//! `"strata"` object (`{"semantic": {KEY: extras}, "procedural": {NAME: extras}}`) and each
//! episode's `metadata.strata`. A memory with none of them writes nothing extra, so a plain
//! document exports as itself.

use chrono::{DateTime, Timelike, Utc};

use indexmap::IndexMap;

use serde::{Deserialize, Serialize};

use super::duplicates::{OnDuplicate, Outcome, merged};
use crate::interchange::duplicates::stored;

use super::json::parse_in;

use super::line_of;

use crate::error::{Error, Result, excerpt};

use crate::event::EventMeta;

use crate::model::{Concept, Content, Episode, EpisodeBody, Facts, Importance, Memory, MemoryKind, Procedure, Tier};

use crate::store::{NewMemory, StoreTx};

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Doc {
    #[serde(default)]
    pub(crate) semantic: IndexMap<String, Facts>,
    #[serde(default)]
    pub(crate) episodic: Vec<DocEpisode>,
    #[serde(default)]
    pub(crate) procedural: IndexMap<String, DocProcedure>,
    #[serde(default, skip_serializing_if = "DocStrata::is_empty")]
    pub(crate) strata: DocStrata,
}

/// The extras of concepts and procedures, by key (seed 002's `semantic` maps a key straight
/// to its facts, so they cannot sit beside them).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocStrata {
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) semantic: IndexMap<String, DocExtras>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) procedural: IndexMap<String, DocExtras>,
}

impl DocStrata {
    fn is_empty(&self) -> bool {
        self.semantic.is_empty() && self.procedural.is_empty()
    }
}

/// What Strata keeps about a memory beyond seed 002: each written only when it differs from
/// what a new memory gets.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocExtras {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tier: Option<Tier>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) pinned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) importance: Option<f64>,
}

impl DocExtras {
    /// `m`'s extras, or `None` when it has only what a new memory gets.
    pub(crate) fn of(m: &Memory) -> Option<DocExtras> {
        let x = DocExtras {
            tags: m.tags.iter().cloned().collect(),
            tier: (m.tier != Tier::default_for(m.kind())).then_some(m.tier),
            pinned: m.pinned,
            importance: (m.importance != Importance::DEFAULT).then_some(m.importance.into()),
        };
        (x != DocExtras::default()).then_some(x)
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocEpisode {
    pub(crate) timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) query: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) response: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) speaker: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) metadata: Option<DocEpisodeMeta>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct DocEpisodeMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) concepts_referenced: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) strata: Option<DocExtras>,
    #[serde(flatten)]
    pub(crate) extra: IndexMap<String, serde_json::Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocProcedure {
    pub(crate) steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context: Option<String>,
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
    /// All memories counted.
    pub fn total(&self) -> u64 {
        self.semantic + self.episodic + self.procedural
    }

    /// Counts one memory of `kind`.
    pub fn add(&mut self, kind: MemoryKind) {
        match kind {
            MemoryKind::Semantic => self.semantic += 1,
            MemoryKind::Episodic => self.episodic += 1,
            MemoryKind::Procedural => self.procedural += 1,
        }
    }
}

/// One memory a document holds, with where it is (its line and field) for the errors that
/// only creating it can find (a key taken, a limit).
pub(crate) struct Item {
    pub(crate) content: Content,
    pub(crate) session_id: Option<String>,
    pub(crate) extras: Extras,
    pub(crate) line: usize,
    pub(crate) field: String,
}

/// [`DocExtras`] checked.
#[derive(Default)]
pub(crate) struct Extras {
    pub(crate) tags: Vec<String>,
    pub(crate) tier: Option<Tier>,
    pub(crate) pinned: bool,
    pub(crate) importance: Option<Importance>,
}

/// Parses a seed-002 document into its memories, checking everything.
pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<Item>> {
    let doc: Doc = parse_in(file, 1, text)?;
    // The line of a value is the line its first occurrence in the text is on.
    let line = |value: &str| line_of(text, &format!("\"{value}\""));
    let bad = |line: usize, field: &str, message: String| {
        Error::bad_import(file, line, format!("field `{field}`: {message}"))
    };
    let extras = |x: Option<DocExtras>, line: usize, field: &str| -> Result<Extras> {
        let x = x.unwrap_or_default();
        let importance = x.importance.map(Importance::new).transpose();
        let importance = importance.map_err(|e| bad(line, &format!("{field}.importance"), e.to_string()))?;
        Ok(Extras { tags: x.tags, tier: x.tier, pinned: x.pinned, importance })
    };
    let item = |content: Content, session_id: Option<String>, extras: Extras, line: usize, field: String| {
        content.validate().map_err(|e| bad(line, &field, e.to_string()))?;
        Ok::<_, Error>(Item { content, session_id, extras, line, field })
    };
    let mut strata = doc.strata;
    let mut out = Vec::new();
    for (key, facts) in doc.semantic {
        let (at, field) = (line(&key), format!("semantic.{}", excerpt(&key)));
        let x = extras(strata.semantic.shift_remove(&key), at, &format!("strata.{field}"))?;
        out.push(item(Content::Semantic(Concept { key, facts }), None, x, at, field)?);
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
        let x = extras(meta.strata, at, &format!("{field}.metadata.strata"))?;
        let c = Content::Episodic(Episode { occurred_at, body, concepts: meta.concepts_referenced, extra: meta.extra });
        out.push(item(c, meta.session_id, x, at, field)?);
    }
    for (name, p) in doc.procedural {
        let (at, field) = (line(&name), format!("procedural.{}", excerpt(&name)));
        let x = extras(strata.procedural.shift_remove(&name), at, &format!("strata.{field}"))?;
        let c = Content::Procedural(Procedure { name, steps: p.steps, context: p.context });
        out.push(item(c, None, x, at, field)?);
    }
    // Extras for a memory the document does not hold are a mistake worth naming.
    let orphans =
        strata.semantic.keys().map(|k| ("semantic", k)).chain(strata.procedural.keys().map(|k| ("procedural", k)));
    if let Some((kind, key)) = orphans.into_iter().next() {
        let field = format!("strata.{kind}.{}", excerpt(key));
        return Err(bad(line(key), &field, format!("the document's `{kind}` has no '{}'", excerpt(key))));
    }
    Ok(out)
}

/// Creates one memory of a document, or does `on_duplicate` when it is already stored.
pub(crate) fn import_item(
    tx: &mut StoreTx<'_>,
    item: Item,
    template: &NewMemory,
    meta: &EventMeta,
    on_duplicate: OnDuplicate,
    file: &str,
) -> Result<Outcome> {
    let mut new = template.clone();
    new.scope.session_id = item.session_id.or(new.scope.session_id);
    if let Some(m) = stored(tx, &new.scope, &item.content)? {
        return match on_duplicate {
            OnDuplicate::Stop => {
                let what = match item.content.key() {
                    Some(key) => format!("\u{201c}{}\u{201d}", excerpt(key)),
                    None => format!("the episode of {}", m.occurred_at().format("%Y-%m-%d %H:%M:%S")),
                };
                Err(Error::AlreadyStored { file: excerpt(file), line: item.line, what })
            }
            OnDuplicate::Skip => Ok(Outcome::Skipped),
            OnDuplicate::Merge => {
                let content = merged(&m.content, item.content);
                if content == m.content {
                    return Ok(Outcome::Unchanged);
                }
                tx.update_content(m.id, content, crate::event::Expected::Any, meta)?;
                Ok(Outcome::Merged)
            }
        };
    }
    let x = item.extras;
    new.tags.extend(x.tags);
    new.tier = x.tier.or(new.tier);
    new.importance = x.importance.or(new.importance);
    let m = tx.create(item.content, new, meta)?;
    if x.pinned {
        tx.pin(m.id, meta)?;
    }
    Ok(Outcome::Added)
}

/// The seed's zone-less UTC form: `2023-07-15T14:32:45`, with milliseconds only when present.
pub(crate) fn seed_timestamp(t: DateTime<Utc>) -> String {
    if t.nanosecond() == 0 {
        t.format("%Y-%m-%dT%H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.3f").to_string()
    }
}
