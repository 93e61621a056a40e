//! Seed 004's `edit_memory`: a subject's document changed by lines — appended to, replaced
//! from a line on, or a range replaced. Each line is a fact, so a replaced line is an update of
//! that fact (its old value stays in its history), a new line an added fact, and a line removed
//! a fact expired (hidden from recall, kept in its history). Every change is a decision like
//! extraction's, by the caller, in one transaction.
//!
//! An edit is checked whole before anything is written: the subject's name is one line of at
//! most [`MAX_NAME_CHARS`] characters, a range lies inside the document and does not end
//! before it starts, no line is said twice (in the edit, or beside it in the document), and an
//! edit holds at most [`MAX_EDIT_LINES`] lines of at most [`MAX_FACT_CHARS`] characters — so no
//! edit holds the store's one writer for long.

use serde::Deserialize;
use strata_core::{Actor, Change, Decision, DecisionAction, DecisionDetail, DecisionStatus, EventMeta, Expected};

use super::facts::{self, subject_key};
use super::reply::{MAX_FACT_CHARS, MAX_NAME_CHARS};
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

/// The most lines one edit may write.
pub const MAX_EDIT_LINES: usize = 64;

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
        let subject = subject.trim();
        if subject.chars().count() > MAX_NAME_CHARS || subject.chars().any(|c| c.is_control()) {
            return Err(ApiError::invalid(format!(
                "a subject's name is one line of at most {MAX_NAME_CHARS} characters; nothing was changed"
            )));
        }
        let key = subject_key(subject);
        if key.is_empty() {
            return Err(ApiError::invalid("name the subject whose document to edit"));
        }
        if edit.content.len() > MAX_EDIT_LINES * (MAX_FACT_CHARS * 4 + 8) {
            return Err(ApiError::invalid(format!(
                "an edit writes at most {MAX_EDIT_LINES} lines of at most {MAX_FACT_CHARS} characters; split it into several; nothing was changed"
            )));
        }
        let scope = self.scope(None);
        let mut r = self.store_view();
        let doc = facts::document(&mut r, &scope, &key)?;
        let current = match &doc {
            Some(d) => facts::facts_about(&mut r, d.id)?,
            None => Vec::new(),
        };
        let new = lines(&edit.content);
        if doc.is_none() && edit.start.is_some() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no document about '{subject}' to edit; append to start one"),
            ));
        }
        let (start, end) = range(edit, current.len())?;
        let kept: Vec<&str> = current[..start].iter().chain(&current[end..]).filter_map(facts::statement).collect();
        check_lines(&new, &kept)?;
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

/// The lines `edit` replaces, `start..end` of a document of `len` lines (`len..len`: an
/// append), or why the range is not in it.
fn range(edit: &LineEdit, len: usize) -> ApiResult<(usize, usize)> {
    let outside = |what: String| {
        ApiError::invalid(format!(
            "{what}: the document has {len} lines (0 to {}); nothing was changed",
            len.saturating_sub(1)
        ))
    };
    match (edit.start, edit.end) {
        (None, None) => Ok((len, len)),
        (None, Some(_)) => Err(ApiError::invalid("an edit with an end needs a start; nothing was changed")),
        (Some(s), _) if s > len => Err(outside(format!("line {s} is not in the document"))),
        (Some(s), None) => Ok((s, len)),
        (Some(s), Some(e)) if e < s => Err(ApiError::invalid(format!(
            "the range ends (line {e}) before it starts (line {s}); nothing was changed"
        ))),
        (Some(s), Some(e)) => match e.checked_add(1).filter(|&end| end <= len) {
            Some(end) => Ok((s, end)),
            None => Err(outside(format!("lines {s} to {e} are not in the document"))),
        },
    }
}

/// Refuses an edit's `new` lines when there are too many, one is too long, or one is said
/// twice (in the edit, or already among the document's `kept` lines).
fn check_lines(new: &[String], kept: &[&str]) -> ApiResult<()> {
    if new.len() > MAX_EDIT_LINES {
        return Err(ApiError::invalid(format!(
            "an edit writes at most {MAX_EDIT_LINES} lines, not {}; split it into several; nothing was changed",
            new.len()
        )));
    }
    let mut seen: std::collections::HashSet<String> = kept.iter().map(|k| facts::normalized(k)).collect();
    for (i, line) in new.iter().enumerate() {
        if line.chars().count() > MAX_FACT_CHARS {
            return Err(ApiError::invalid(format!(
                "line {} is longer than {MAX_FACT_CHARS} characters; a fact is one short sentence; nothing was changed",
                i + 1
            )));
        }
        if !seen.insert(facts::normalized(line)) {
            return Err(ApiError::invalid(format!(
                "line {} says again what the document already says ('{line}'); nothing was changed",
                i + 1
            )));
        }
    }
    Ok(())
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

    fn edit(start: Option<usize>, end: Option<usize>) -> LineEdit {
        LineEdit { content: "x".into(), start, end }
    }

    proptest::proptest! {
        /// Any range is either inside the document, not ending before it starts, or refused
        /// with a sentence (end = 2^64 - 1 panicked; start 1, end 0 inserted a line).
        #[test]
        fn any_range_is_inside_the_document_or_refused(
            start in proptest::option::of(proptest::prop_oneof![0..12usize, proptest::num::usize::ANY]),
            end in proptest::option::of(proptest::prop_oneof![0..12usize, proptest::num::usize::ANY]),
            len in 0..10usize,
        ) {
            match range(&edit(start, end), len) {
                Ok((s, e)) => {
                    proptest::prop_assert!(s <= e && e <= len);
                    if let (Some(a), Some(b)) = (start, end) {
                        proptest::prop_assert!(a <= b && (s, e) == (a, b + 1));
                    }
                }
                Err(err) => proptest::prop_assert!(err.message.contains("nothing was changed"), "{}", err.message),
            }
        }
    }

    #[test]
    fn lines_said_twice_too_many_or_too_long_are_refused() {
        let new = |n: usize, text: &str| vec![text.to_string(); n];
        assert!(check_lines(&["Ana plays the cello".into()], &["Ana lives in Porto"]).is_ok());
        assert!(check_lines(&new(2, "Ana plays the cello"), &[]).unwrap_err().message.contains("line 2 says again"));
        assert!(check_lines(&new(1, "ana PLAYS the cello."), &["Ana plays the cello"]).is_err());
        let many: Vec<String> = (0..=MAX_EDIT_LINES).map(|i| format!("Ana has {i} cats")).collect();
        assert!(check_lines(&many, &[]).unwrap_err().message.contains("at most 64 lines"));
        assert!(check_lines(&new(1, &"long ".repeat(100)), &[]).unwrap_err().message.contains("longer than 400"));
        assert!(range(&edit(Some(1), Some(0)), 3).unwrap_err().message.contains("ends (line 0) before it starts"));
        assert!(range(&edit(Some(0), Some(usize::MAX)), 3).is_err());
        assert_eq!(range(&edit(Some(1), None), 3).unwrap(), (1, 3));
        assert_eq!(range(&edit(None, None), 3).unwrap(), (3, 3));
    }
}
