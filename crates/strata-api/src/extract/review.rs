//! What extraction made, as a person reads it: the subjects' documents (each fact with the
//! values it had before and when each held), the decisions, and the review of proposals —
//! accepted (as proposed, or edited first) or rejected, one by one or many at once.

use serde::Serialize;
use strata_core::extraction::{ABOUT, FACT_SOURCE};
use strata_core::{Actor, Change, Content, Decision, DecisionStatus, EventMeta, Filter, MemoryId, MemoryKind};

use super::facts;
use crate::engine::Engine;
use crate::error::{ApiError, ApiResult};

/// A decision as a person reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DecisionView {
    /// Its id.
    pub id: String,
    /// `add`, `update` or `noop`.
    pub action: String,
    /// `proposed`, `applied` or `rejected`.
    pub status: String,
    /// The subject's key.
    pub subject: String,
    /// The subject's name.
    pub subject_name: String,
    /// The fact.
    pub fact: String,
    /// What it is about.
    pub topic: String,
    /// When it was stated (`YYYY-MM-DD`).
    pub stated: Option<String>,
    /// Why.
    pub reason: String,
    /// The value it replaces (an update).
    pub previous: Option<String>,
    /// The fact memory it changed or will change.
    pub target: Option<String>,
    /// The episodes it rests on.
    pub sources: Vec<String>,
    /// When it was made (RFC 3339).
    pub made_at: String,
    /// `provider/model` that decided.
    pub model: String,
    /// Who decided (`automatic`, or a client's name).
    pub decided_by: Option<String>,
}

impl From<&Decision> for DecisionView {
    fn from(d: &Decision) -> Self {
        DecisionView {
            id: d.id.clone(),
            action: d.action.as_str().to_string(),
            status: d.status.as_str().to_string(),
            subject: d.subject.clone(),
            subject_name: d.detail.subject_name.clone(),
            fact: d.detail.fact.clone(),
            topic: d.detail.topic.clone(),
            stated: d.detail.stated.clone(),
            reason: d.detail.reason.clone(),
            previous: d.detail.previous.clone(),
            target: d.target.map(|t| t.to_string()),
            sources: d.sources.iter().map(ToString::to_string).collect(),
            made_at: d.made_at.to_rfc3339(),
            model: d.model.clone(),
            decided_by: d.decided_by.clone(),
        }
    }
}

/// One value a fact had, and when it held.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ValueView {
    /// The fact as it was.
    pub fact: String,
    /// When it was stated, if known (`YYYY-MM-DD`).
    pub stated: Option<String>,
    /// When it was recorded (RFC 3339).
    pub recorded_at: String,
    /// When the next value replaced it (RFC 3339); `None` for the current one.
    pub replaced_at: Option<String>,
    /// When the next value was stated, if known: the end of this one's validity.
    pub valid_until: Option<String>,
}

/// A fact about a subject.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FactView {
    /// The fact memory's id.
    pub id: String,
    /// Its key (`subject/topic`).
    pub key: String,
    /// What it says now.
    pub fact: String,
    /// When that was stated.
    pub stated: Option<String>,
    /// The episodes it rests on now.
    pub sources: Vec<String>,
    /// Every value it had, oldest first (the last is the current one).
    pub history: Vec<ValueView>,
}

/// A subject's memory document (seed 004): name, description and the facts as Markdown lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DocumentView {
    /// The document's memory id.
    pub id: String,
    /// The subject's key.
    pub key: String,
    /// Its name.
    pub name: String,
    /// One sentence on who or what it is.
    pub description: String,
    /// The facts, one Markdown list line each (line 0 is the first fact).
    pub content: String,
    /// The facts.
    pub facts: Vec<FactView>,
}

/// The documents of a caller.
pub type Documents = Vec<DocumentView>;

impl Engine {
    fn document_view(&self, doc: &strata_core::Memory) -> ApiResult<DocumentView> {
        let mut r = self.store_view();
        let (name, description) = facts::name_and_description(doc);
        let mut out = Vec::new();
        for m in facts::facts_about(&mut r, doc.id)? {
            let Some(fact) = facts::statement(&m) else { continue };
            let key = match &m.content {
                Content::Semantic(c) => c.key.clone(),
                _ => continue,
            };
            let mut history: Vec<ValueView> = Vec::new();
            for e in self.store_view().history(m.id)? {
                let content = match e.change {
                    Change::Created(c) => c.content,
                    Change::ContentUpdated { content } => content,
                    _ => continue,
                };
                let probe = strata_core::Memory { content, ..m.clone() };
                if let Some(last) = history.last_mut() {
                    last.replaced_at = Some(e.recorded_at.to_rfc3339());
                    last.valid_until = facts::stated(&probe).map(str::to_string);
                }
                history.push(ValueView {
                    fact: facts::statement(&probe).unwrap_or_default().to_string(),
                    stated: facts::stated(&probe).map(str::to_string),
                    recorded_at: e.recorded_at.to_rfc3339(),
                    replaced_at: None,
                    valid_until: None,
                });
            }
            out.push(FactView {
                id: m.id.to_string(),
                key,
                fact: fact.to_string(),
                stated: facts::stated(&m).map(str::to_string),
                sources: m.links.iter().filter(|l| l.relation == FACT_SOURCE).map(|l| l.target.to_string()).collect(),
                history,
            });
        }
        let content = out.iter().map(|f| format!("- {}", f.fact)).collect::<Vec<_>>().join("\n");
        let key = match &doc.content {
            Content::Semantic(c) => c.key.clone(),
            _ => String::new(),
        };
        Ok(DocumentView { id: doc.id.to_string(), key, name, description, content, facts: out })
    }

    /// Every subject with extracted facts this caller may see, by name.
    pub fn documents(&self) -> ApiResult<Documents> {
        let docs = self.store_view().subject_documents(&self.options().user_id)?;
        let mut out = docs
            .iter()
            .filter(|m| self.can_see(&m.scope))
            .map(|m| self.document_view(m))
            .collect::<ApiResult<Documents>>()?;
        out.sort_by_key(|d| d.name.to_lowercase());
        Ok(out)
    }

    /// The subjects extraction knows, as the extraction prompt lists them: name and description.
    pub(super) fn subjects(&self) -> ApiResult<Vec<(String, String)>> {
        let docs = self.store_view().subject_documents(&self.options().user_id)?;
        Ok(docs.iter().filter(|m| self.can_see(&m.scope)).map(facts::name_and_description).collect())
    }

    /// One subject's document, by its key or a name (`Ana`, `user`).
    pub fn document(&self, subject: &str) -> ApiResult<DocumentView> {
        let scope = self.scope(None);
        let mut r = self.store_view();
        let doc = facts::document(&mut r, &scope, &facts::subject_key(subject))?
            .or(facts::document(&mut r, &scope, subject.trim())?)
            .ok_or_else(|| ApiError::new(crate::ErrorCode::NotFound, format!("no subject named '{subject}'")))?;
        self.document_view(&doc)
    }

    /// The documents most related to `query` (seed 004's `recollect`): recall over the
    /// subjects and their facts, each hit standing for its subject's document.
    pub fn recollect(&mut self, query: &str, limit: usize) -> ApiResult<Documents> {
        let filter = Filter { kinds: vec![MemoryKind::Semantic], ..Filter::default() };
        let hits = self.recall(query, filter, limit.saturating_mul(8).max(20))?;
        let mut seen: Vec<MemoryId> = Vec::new();
        for h in hits {
            let id: MemoryId = h.memory.id.parse()?;
            let m = self.store_view().get(id)?;
            let doc = match m.links.iter().find(|l| l.relation == ABOUT) {
                Some(l) => l.target,
                None if self.store_view().linking_to(id)?.iter().any(|(_, r)| r == ABOUT) => id,
                None => continue,
            };
            if !seen.contains(&doc) {
                seen.push(doc);
            }
            if seen.len() == limit {
                break;
            }
        }
        seen.into_iter()
            .map(|id| self.store_view().get(id).map_err(ApiError::from).and_then(|m| self.document_view(&m)))
            .collect()
    }

    /// The decisions waiting for a person, oldest first.
    pub fn proposals(&self) -> ApiResult<Vec<DecisionView>> {
        let mine = self.store_view().decisions(&self.options().user_id, Some(DecisionStatus::Proposed), usize::MAX)?;
        Ok(mine.iter().filter(|d| self.visible(d)).map(DecisionView::from).collect())
    }

    /// Every decision of this caller's, oldest first, at most `limit`.
    pub fn decisions(&self, limit: usize) -> ApiResult<Vec<DecisionView>> {
        let mine = self.store_view().decisions(&self.options().user_id, None, limit)?;
        Ok(mine.iter().filter(|d| self.visible(d)).map(DecisionView::from).collect())
    }

    fn visible(&self, d: &Decision) -> bool {
        match (&self.options().agent_id, &d.scope.agent_id) {
            (Some(me), Some(owner)) => me == owner,
            _ => true,
        }
    }

    fn proposal(&self, id: &str) -> ApiResult<Decision> {
        let d = self.store_view().decision(id.trim())?;
        if d.scope.user_id != self.options().user_id || !self.visible(&d) {
            return Err(ApiError::new(crate::ErrorCode::NotFound, format!("no decision {id}")));
        }
        Ok(d)
    }

    /// Accepts proposals (all of them or none), each as proposed or with its fact edited by a
    /// person (`(id, Some(new wording))`). Returns them as applied.
    pub fn accept(&mut self, items: &[(String, Option<String>)]) -> ApiResult<Vec<DecisionView>> {
        let mut decisions = Vec::new();
        for (id, edit) in items {
            let mut d = self.proposal(id)?;
            if let Some(text) = edit {
                let text = text.trim();
                if text.is_empty() {
                    return Err(ApiError::invalid("an edited fact must not be empty"));
                }
                d.detail.fact = text.to_string();
                // The person's wording replaces the model's wherever it would be stored: a new
                // subject is described by the neutral line, not by the model's sentence.
                d.detail.description = None;
                d.detail.reason = format!("{} (edited by a person)", d.detail.reason);
            }
            decisions.push(d);
        }
        let meta = EventMeta { actor: Actor::User, ..self.meta() };
        let scope = self.scope(None);
        let by = self.options().client.clone();
        let done = self.store().transact(|tx| {
            let mut done = Vec::new();
            for d in &decisions {
                let id = facts::carry_out(tx, d, &scope, &meta).map_err(super::to_core)?;
                tx.settle_decision(&d.id, DecisionStatus::Applied, Some(id), &d.detail, &by)?;
                done.push(tx.decision(&d.id)?);
            }
            Ok(done)
        })?;
        self.wrote();
        Ok(done.iter().map(DecisionView::from).collect())
    }

    /// Rejects proposals (all of them or none).
    pub fn reject(&mut self, ids: &[String]) -> ApiResult<Vec<DecisionView>> {
        let decisions = ids.iter().map(|id| self.proposal(id)).collect::<ApiResult<Vec<_>>>()?;
        let by = self.options().client.clone();
        let done = self.store().transact(|tx| {
            let mut done = Vec::new();
            for d in &decisions {
                tx.settle_decision(&d.id, DecisionStatus::Rejected, None, &d.detail, &by)?;
                done.push(tx.decision(&d.id)?);
            }
            Ok(done)
        })?;
        Ok(done.iter().map(DecisionView::from).collect())
    }
}
