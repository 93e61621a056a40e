//! What changed between two versions of a memory, in words ("favourite drink: oolong tea →
//! green tea"), and restoring a past version: its content, importance and tags become the
//! memory's again as new events, so the history keeps every step.

use serde::Serialize;
use strata_core::{AsOf, Change, Content, EpisodeBody, FactValue, Memory, RecordedEvent};

use crate::dto::{EventView, MemoryView};
use crate::engine::{Engine, Target, UpdateRequest};
use crate::error::{ApiError, ApiResult};

/// A key or fact name as words: `favourite_drink` → `favourite drink`.
fn words(key: &str) -> String {
    key.replace('_', " ")
}

/// A fact's value as a person writes it.
fn value(v: &FactValue) -> String {
    match v {
        FactValue::Text(s) => format!("“{s}”"),
        FactValue::Number(n) => n.to_string(),
        FactValue::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        FactValue::List(items) => items.iter().map(value).collect::<Vec<_>>().join(", "),
        FactValue::Group(g) => {
            format!("({})", g.iter().map(|(k, v)| format!("{}: {}", words(k), value(v))).collect::<Vec<_>>().join("; "))
        }
    }
}

/// A text quoted, shortened to about 60 characters.
fn quoted(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= 60 {
        format!("“{s}”")
    } else {
        format!("“{}…”", s.chars().take(59).collect::<String>())
    }
}

/// The differences from `old` to `new` content, one line each; empty when they read the same.
pub fn differences(old: &Content, new: &Content) -> Vec<String> {
    let mut out = Vec::new();
    match (old, new) {
        (Content::Semantic(a), Content::Semantic(b)) => {
            for (name, v) in &a.facts {
                match b.facts.get(name) {
                    None => out.push(format!("removed {} ({})", words(name), value(v))),
                    Some(w) if w != v => out.push(format!("{}: {} → {}", words(name), value(v), value(w))),
                    Some(_) => {}
                }
            }
            for (name, w) in &b.facts {
                if !a.facts.contains_key(name) {
                    out.push(format!("added {}: {}", words(name), value(w)));
                }
            }
        }
        (Content::Episodic(a), Content::Episodic(b)) => match (&a.body, &b.body) {
            (EpisodeBody::Utterance { text: x, .. }, EpisodeBody::Utterance { text: y, .. }) if x != y => {
                out.push(format!("what was said: {} → {}", quoted(x), quoted(y)));
            }
            (EpisodeBody::Exchange { query: q1, response: r1 }, EpisodeBody::Exchange { query: q2, response: r2 }) => {
                if q1 != q2 {
                    out.push(format!("the question: {} → {}", quoted(q1), quoted(q2)));
                }
                if r1 != r2 {
                    out.push(format!("the answer: {} → {}", quoted(r1), quoted(r2)));
                }
            }
            _ => {}
        },
        (Content::Procedural(a), Content::Procedural(b)) => {
            for i in 0..a.steps.len().max(b.steps.len()) {
                match (a.steps.get(i), b.steps.get(i)) {
                    (Some(x), Some(y)) if x != y => out.push(format!("step {}: {} → {}", i + 1, quoted(x), quoted(y))),
                    (Some(x), None) => out.push(format!("removed step {}: {}", i + 1, quoted(x))),
                    (None, Some(y)) => out.push(format!("added step {}: {}", i + 1, quoted(y))),
                    _ => {}
                }
            }
            if a.context != b.context {
                let c = |c: &Option<String>| c.as_deref().map_or_else(|| "(none)".to_string(), quoted);
                out.push(format!("when it applies: {} → {}", c(&a.context), c(&b.context)));
            }
        }
        _ => out.push("its type changed".to_string()),
    }
    out
}

/// A memory's events as views, each content change summarized as what it changed from the
/// version before ("changed favourite drink: “oolong tea” → “green tea”").
pub fn described(events: Vec<RecordedEvent>) -> Vec<EventView> {
    let mut before: Option<Content> = None;
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        let after = match &e.change {
            Change::Created(c) => Some(c.content.clone()),
            Change::ContentUpdated { content } => Some(content.clone()),
            Change::Redacted { .. } | Change::Forgotten { .. } => None,
            _ => before.clone(),
        };
        let diff = match (&before, &e.change) {
            (Some(old), Change::ContentUpdated { content }) => Some(differences(old, content)),
            _ => None,
        };
        let mut view = EventView::from(e);
        if let Some(d) = diff {
            view.summary =
                if d.is_empty() { "saved unchanged".to_string() } else { format!("changed {}", d.join("; ")) };
        }
        out.push(view);
        before = after;
    }
    out
}

/// A past version of a memory next to the memory now.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ComparisonView {
    /// The memory as it was.
    pub then: MemoryView,
    /// What differs from then to now, one line each (empty: it reads the same).
    pub changes: Vec<String>,
}

/// The differences from `then` to `now` that a restore would undo: content, importance, tags.
fn restorable(then: &Memory, now: &Memory) -> Vec<String> {
    let mut out = differences(&then.content, &now.content);
    if then.importance != now.importance {
        out.push(format!("importance: {} → {}", then.importance.get(), now.importance.get()));
    }
    for t in now.tags.difference(&then.tags) {
        out.push(format!("tagged “{t}”"));
    }
    for t in then.tags.difference(&now.tags) {
        out.push(format!("untagged “{t}”"));
    }
    out
}

/// The update that makes `now`'s content and importance read as `then`'s.
fn update_to(then: &Memory, now: &Memory) -> ApiResult<UpdateRequest> {
    let mut req = UpdateRequest { expected_version: Some(now.version), ..Default::default() };
    if then.importance != now.importance {
        req.importance = Some(then.importance.get());
    }
    match (&then.content, &now.content) {
        (Content::Semantic(a), Content::Semantic(b)) => {
            req.set_facts = a
                .facts
                .iter()
                .filter(|(k, v)| b.facts.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            req.unset_facts = b.facts.keys().filter(|k| !a.facts.contains_key(*k)).cloned().collect();
        }
        (Content::Episodic(a), Content::Episodic(b)) => match (&a.body, &b.body) {
            (EpisodeBody::Utterance { text: x, .. }, EpisodeBody::Utterance { text: y, .. }) => {
                req.text = (x != y).then(|| x.clone());
            }
            (EpisodeBody::Exchange { query: q1, response: r1 }, EpisodeBody::Exchange { query: q2, response: r2 }) => {
                req.query = (q1 != q2).then(|| q1.clone());
                req.text = (r1 != r2).then(|| r1.clone());
            }
            _ => return Err(ApiError::invalid("an episode's form cannot change")),
        },
        (Content::Procedural(a), Content::Procedural(b)) => {
            req.steps = (a.steps != b.steps).then(|| a.steps.clone());
            req.context = (a.context != b.context).then(|| a.context.clone().unwrap_or_default());
        }
        _ => return Err(ApiError::invalid("a memory's type cannot change")),
    }
    Ok(req)
}

impl Engine {
    /// A memory as it was after event `seq`, and as it is.
    fn then_and_now(&self, target: &Target, seq: i64) -> ApiResult<(Memory, Memory)> {
        let id = self.resolve(target)?;
        Ok((self.store_view().get_as_of(id, AsOf::Seq(seq))?, self.store_view().get(id)?))
    }

    /// A memory as it was after event `seq`, with what has changed since (nothing recorded).
    pub fn compare(&self, target: &Target, seq: i64) -> ApiResult<ComparisonView> {
        let (then, now) = self.then_and_now(target, seq)?;
        Ok(ComparisonView { changes: restorable(&then, &now), then: then.into() })
    }

    /// Makes a memory's content, importance and tags what they were after event `seq`, as new
    /// events (its tier and pin stay as they are: they say where it lives, not what it says).
    pub fn restore(&mut self, target: &Target, seq: i64) -> ApiResult<MemoryView> {
        let (then, now) = self.then_and_now(target, seq)?;
        let id = now.id;
        let req = update_to(&then, &now)?;
        let add: Vec<String> = then.tags.difference(&now.tags).cloned().collect();
        let remove: Vec<String> = now.tags.difference(&then.tags).cloned().collect();
        self.change(id, req.changes_anything().then_some(&req), &add, &remove)
    }
}
