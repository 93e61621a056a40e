//! Seed 004's `edit_memory`: a subject's document changed by lines — appended to, replaced
//! from a line on, or a range replaced. Each line is a fact, so a replaced line is an update of
//! that fact (its old value stays in its history), a new line an added fact, and a line removed
//! a fact expired (hidden from recall, kept in its history). Every change is a decision like
//! extraction's, by the caller, in one transaction.

use serde::Deserialize;
use strata_core::{Actor, Change, Decision, DecisionAction, DecisionDetail, DecisionStatus, EventMeta, Expected};

use super::facts::{self, subject_key};
use super::review::DocumentView;
use crate::engine::Engine;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// One line edit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LineEdit {
    /// The new lines (one fact each; a leading "- " is dropped, blank lines are skipped).
    pub content: String,
    /// The first line replaced (0 is the first fact); none: the lines are appended.
    #[serde(default)]
    pub start: Option<usize>,
    /// The last line replaced (inclusive); none: every line from `start` on.
    #[serde(default)]
    pub end: Option<usize>,
}

fn lines(content: &str) -> Vec<String> {
    content.lines().map(|l| l.trim().trim_start_matches("- ").trim().to_string()).filter(|l| !l.is_empty()).collect()
}

/// A short topic from a fact's first words of substance (`Ana plays the cello` → `plays_cello`).
fn topic_of(fact: &str, subject: &str) -> String {
    let skip = ["the", "a", "an", "is", "are", "was", "has", "her", "his", "their"];
    let words: Vec<String> = fact
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !skip.contains(&w.as_str()) && !subject.split('_').any(|s| s == w))
        .take(2)
        .collect();
    words.join("_")
}

impl Engine {
    /// Edits subject `subject`'s document by lines (see the module's description); a subject
    /// with no document yet can only be appended to, which makes one.
    pub fn edit_memory(&mut self, subject: &str, edit: &LineEdit) -> ApiResult<DocumentView> {
        let key = subject_key(subject);
        if key.is_empty() {
            return Err(ApiError::invalid("name the subject whose document to edit"));
        }
        let scope = self.scope(None);
        let mut r = self.store_view();
        let doc = facts::document(&mut r, &scope, &key)?;
        let current = match &doc {
            Some(d) => facts::facts_about(&mut r, d.id)?,
            None => Vec::new(),
        };
        let new = lines(&edit.content);
        let (start, end) = match (edit.start, edit.end) {
            (None, _) => (current.len(), current.len()),
            (Some(s), e) => (s, e.map_or(current.len(), |e| e + 1)),
        };
        if doc.is_none() && edit.start.is_some() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no document about '{subject}' to edit; append to start one"),
            ));
        }
        if start > current.len() || end > current.len() || start > end {
            return Err(ApiError::invalid(format!(
                "lines {start} to {} are not in the document, which has {} (0 to {})",
                end.saturating_sub(1),
                current.len(),
                current.len().saturating_sub(1)
            )));
        }
        let old = &current[start..end];
        let by = self.options().client.clone();
        let meta = EventMeta { actor: Actor::User, ..self.meta() };
        let now = self.now();
        let run_id = meta.correlation_id.clone().unwrap_or_default();
        let name = doc.as_ref().map_or_else(|| subject.trim().to_string(), |d| facts::name_and_description(d).0);
        let decision = |action, target, fact: &str, previous: Option<String>| Decision {
            id: strata_core::event::new_event_id(self.store_view().clock().as_ref()),
            run_id: run_id.clone(),
            scope: scope.clone(),
            made_at: now,
            model: format!("person/{by}"),
            action,
            subject: key.clone(),
            target,
            detail: DecisionDetail {
                fact: fact.to_string(),
                topic: topic_of(fact, &key),
                stated: Some(now.format("%Y-%m-%d").to_string()),
                subject_name: name.clone(),
                description: None,
                reason: format!("edited by {by}"),
                previous,
            },
            sources: Vec::new(),
            status: DecisionStatus::Applied,
            decided_at: Some(now),
            decided_by: Some(by.clone()),
        };
        let mut decisions = Vec::new();
        let mut removed = Vec::new();
        for i in 0..old.len().max(new.len()) {
            match (old.get(i), new.get(i)) {
                (Some(m), Some(text)) if facts::statement(m) != Some(text.as_str()) => decisions.push(decision(
                    DecisionAction::Update,
                    Some(m.id),
                    text,
                    facts::statement(m).map(str::to_string),
                )),
                (None, Some(text)) => decisions.push(decision(DecisionAction::Add, None, text, None)),
                (Some(m), None) => removed.push(m.id),
                _ => {}
            }
        }
        let reason = format!("removed from the document about {name} by {by}");
        self.store().transact(|tx| {
            for d in &mut decisions {
                d.target = Some(facts::carry_out(tx, d, &scope, &meta).map_err(super::to_core)?);
                tx.record_decision(d)?;
            }
            for id in &removed {
                tx.append(*id, Expected::Any, Change::Expired { reason: reason.clone() }, &meta)?;
            }
            Ok(())
        })?;
        self.wrote();
        self.document(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_drop_bullets_and_blanks_and_topics_skip_the_subject() {
        assert_eq!(
            lines("- Ana plays the cello\n\n  - Ana lives in Porto  \n"),
            ["Ana plays the cello", "Ana lives in Porto"]
        );
        assert_eq!(topic_of("Ana plays the cello", "ana"), "plays_cello");
    }
}
