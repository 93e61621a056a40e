//! Facts and subjects as memories. A subject's document is a concept (a semantic memory keyed
//! by the subject: `ana`, `user`) whose facts hold its name and description; each extracted
//! fact is a concept of its own keyed `subject/topic`, linked [`ABOUT`] its subject and
//! [`FACT_SOURCE`] to the episodes it rests on. Carrying out a decision is the one write path of
//! extraction, used alike by an automatic run and by a person accepting a proposal.

use strata_core::extraction::{ABOUT, EARLIER_SOURCE, FACT_SOURCE};
use strata_core::model::MAX_KEY_BYTES;
use strata_core::{
    Concept, Content, Decision, DecisionAction, EventMeta, Expected, FactValue, Facts, Memory, MemoryId, MemoryKind,
    NewMemory, Scope, Source, Store, StoreTx,
};

use crate::error::{ApiError, ApiResult};

/// The key of the user's own subject.
pub const USER: &str = "user";

/// A name as a key: lower case, words joined by `_`, only letters, digits, `-` and `_`.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for word in name.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\'')) {
        let w: String = word.chars().filter(|c| *c != '\'').flat_map(char::to_lowercase).collect();
        if w.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(&w);
    }
    let mut end = out.len().min(MAX_KEY_BYTES / 2);
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    out
}

/// The key of a subject named `name`: the user under any of the names a model gives them.
pub fn subject_key(name: &str) -> String {
    let s = slug(name);
    match s.as_str() {
        "user" | "the_user" | "me" | "i" | "myself" | "the_speaker" => USER.to_string(),
        _ => s,
    }
}

/// The words a fact is compared by: lower case, letters and digits only.
pub fn normalized(fact: &str) -> String {
    fact.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The fact a fact memory states, when it is one.
pub fn statement(m: &Memory) -> Option<&str> {
    match &m.content {
        Content::Semantic(c) => match c.facts.get("fact") {
            Some(FactValue::Text(t)) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The date a fact memory's value was stated, when recorded.
pub fn stated(m: &Memory) -> Option<&str> {
    match &m.content {
        Content::Semantic(c) => match c.facts.get("stated") {
            Some(FactValue::Text(t)) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

fn text(facts: &Facts, name: &str) -> Option<String> {
    match facts.get(name) {
        Some(FactValue::Text(t)) => Some(t.clone()),
        _ => None,
    }
}

/// A subject document's name and description (a concept typed by a person has neither: its key
/// and its first fact stand in).
pub fn name_and_description(m: &Memory) -> (String, String) {
    match &m.content {
        Content::Semantic(c) => {
            let name = text(&c.facts, "name").unwrap_or_else(|| c.key.replace('_', " "));
            let description = text(&c.facts, "description").unwrap_or_else(|| {
                c.facts
                    .iter()
                    .next()
                    .map(|(k, v)| format!("{}: {}", k.replace('_', " "), value_text(v)))
                    .unwrap_or_default()
            });
            (name, description)
        }
        _ => (String::new(), String::new()),
    }
}

fn value_text(v: &FactValue) -> String {
    match v {
        FactValue::Text(t) => t.clone(),
        other => serde_json::to_string(&serde_json::to_value(other).unwrap_or_default()).unwrap_or_default(),
    }
}

/// A fact memory's content: its key (`subject/topic`), what it states, and when it was stated.
pub fn fact_content(key: String, fact: &str, stated: Option<&str>) -> Content {
    let mut facts = Facts::new();
    facts.insert("fact".into(), FactValue::Text(fact.to_string()));
    if let Some(s) = stated {
        facts.insert("stated".into(), FactValue::Text(s.to_string()));
    }
    Content::Semantic(Concept { key, facts })
}

/// The reads extraction makes, alike inside a write transaction and outside one.
pub trait Reads {
    /// The semantic memory keyed `key` in `scope`.
    fn by_key(&mut self, scope: &Scope, key: &str) -> ApiResult<Option<Memory>>;
    /// The memories linking to `id`, with the relation.
    fn linking(&mut self, id: MemoryId) -> ApiResult<Vec<(MemoryId, String)>>;
    /// A live memory.
    fn memory(&mut self, id: MemoryId) -> ApiResult<Memory>;
}

impl Reads for &Store {
    fn by_key(&mut self, scope: &Scope, key: &str) -> ApiResult<Option<Memory>> {
        let found = self.find_by_key(&scope.user_id, scope.agent_id.as_deref(), Some(MemoryKind::Semantic), key)?;
        Ok(found.into_iter().next())
    }
    fn linking(&mut self, id: MemoryId) -> ApiResult<Vec<(MemoryId, String)>> {
        Ok(self.linking_to(id)?)
    }
    fn memory(&mut self, id: MemoryId) -> ApiResult<Memory> {
        Ok(self.get(id)?)
    }
}

impl Reads for StoreTx<'_> {
    fn by_key(&mut self, scope: &Scope, key: &str) -> ApiResult<Option<Memory>> {
        let found = self.find_by_key(&scope.user_id, scope.agent_id.as_deref(), Some(MemoryKind::Semantic), key)?;
        Ok(found.into_iter().next())
    }
    fn linking(&mut self, id: MemoryId) -> ApiResult<Vec<(MemoryId, String)>> {
        Ok(self.linking_to(id)?)
    }
    fn memory(&mut self, id: MemoryId) -> ApiResult<Memory> {
        Ok(self.current(id)?)
    }
}

/// The current facts about a subject's document, oldest first (not those removed from it).
pub fn facts_about(r: &mut impl Reads, doc: MemoryId) -> ApiResult<Vec<Memory>> {
    let mut out = Vec::new();
    for (id, relation) in r.linking(doc)? {
        if relation == ABOUT {
            let m = r.memory(id)?;
            if m.expired_at.is_none() {
                out.push(m);
            }
        }
    }
    out.sort_by_key(|m| (m.created_at, m.id));
    Ok(out)
}

/// The document of subject `key` in `scope`, if there is one.
pub fn document(r: &mut impl Reads, scope: &Scope, key: &str) -> ApiResult<Option<Memory>> {
    r.by_key(scope, key)
}

fn free_key(tx: &mut StoreTx<'_>, scope: &Scope, base: &str) -> ApiResult<String> {
    for n in 1..1000 {
        let key = if n == 1 { base.to_string() } else { format!("{base}_{n}") };
        if document(tx, scope, &key)?.is_none() {
            return Ok(key);
        }
    }
    Err(ApiError::invalid(format!("too many facts named {base}")))
}

/// Carries out `d` in `tx` (its events correlated by the decision's id): creates the subject's
/// document when new, then adds the fact, updates the known one (its old value and sources stay
/// in its history) or adds a source to it. Returns the fact's id.
pub fn carry_out(tx: &mut StoreTx<'_>, d: &Decision, scope: &Scope, meta: &EventMeta) -> ApiResult<MemoryId> {
    let meta = EventMeta { correlation_id: Some(d.id.clone()), ..meta.clone() };
    let (provider, model) = d.model.split_once('/').unwrap_or(("", d.model.as_str()));
    let source = Source {
        app: "extraction".into(),
        provider: Some(provider.to_string()).filter(|p| !p.is_empty()),
        model: Some(model.to_string()),
    };
    let new = |tags: Vec<String>| NewMemory {
        scope: scope.clone(),
        tags,
        importance: None,
        tier: None,
        source: source.clone(),
    };
    let link_sources = |tx: &mut StoreTx<'_>, id: MemoryId| -> ApiResult<()> {
        for s in &d.sources {
            tx.link(id, *s, FACT_SOURCE, &meta)?;
        }
        Ok(())
    };
    match d.action {
        DecisionAction::Add => {
            let doc = match document(tx, scope, &d.subject)? {
                Some(doc) => doc.id,
                None => {
                    let mut facts = Facts::new();
                    let name = if d.subject == USER { "The user".to_string() } else { d.detail.subject_name.clone() };
                    facts.insert("name".into(), FactValue::Text(name));
                    let description = d.detail.description.clone().filter(|s| !s.trim().is_empty());
                    let description =
                        description.unwrap_or_else(|| format!("What is known about {}.", d.detail.subject_name));
                    facts.insert("description".into(), FactValue::Text(description));
                    tx.create(Content::Semantic(Concept { key: d.subject.clone(), facts }), new(vec![]), &meta)?.id
                }
            };
            // The document rests on every conversation that said something about its subject,
            // and is forgotten with the last of them.
            link_sources(tx, doc)?;
            let topic = slug(&d.detail.topic);
            let base = format!("{}/{}", d.subject, if topic.is_empty() { "fact" } else { &topic });
            let key = free_key(tx, scope, &base)?;
            let fact = tx.create(fact_content(key, &d.detail.fact, d.detail.stated.as_deref()), new(vec![]), &meta)?;
            tx.link(fact.id, doc, ABOUT, &meta)?;
            link_sources(tx, fact.id)?;
            Ok(fact.id)
        }
        DecisionAction::Update => {
            let target = d.target.ok_or_else(|| ApiError::invalid("an update names no fact"))?;
            let m = tx.current(target)?;
            let key = match &m.content {
                Content::Semantic(c) => c.key.clone(),
                _ => return Err(ApiError::invalid("an update's fact is not a concept")),
            };
            tx.update_content(
                target,
                fact_content(key, &d.detail.fact, d.detail.stated.as_deref()),
                Expected::Any,
                &meta,
            )?;
            for link in m.links.iter().filter(|l| l.relation == FACT_SOURCE) {
                tx.unlink(target, link.target, FACT_SOURCE, &meta)?;
                tx.link(target, link.target, EARLIER_SOURCE, &meta)?;
            }
            link_sources(tx, target)?;
            if let Some(doc) = m.links.iter().find(|l| l.relation == ABOUT) {
                link_sources(tx, doc.target)?;
            }
            Ok(target)
        }
        DecisionAction::Noop => {
            let target = d.target.ok_or_else(|| ApiError::invalid("a no-op names no fact"))?;
            link_sources(tx, target)?;
            let doc = tx.current(target)?.links.into_iter().find(|l| l.relation == ABOUT);
            if let Some(doc) = doc {
                link_sources(tx, doc.target)?;
            }
            Ok(target)
        }
    }
}
