//! What a person fills in to create a memory (the desktop's forms): plain text fields for
//! each type, turned into an [`AddRequest`] here so every front end checks them the same way.

use serde::{Deserialize, Serialize};
use strata_core::{Concept, Content, Episode, EpisodeBody, FactValue, Facts, Procedure};

use crate::dto::MemoryView;
use crate::engine::{AddRequest, Engine, Target, UpdateRequest};
use crate::error::{ApiError, ApiResult};

/// A new memory as a form holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryForm {
    /// The type and its fields.
    pub content: ContentForm,
    /// Tags, as typed (commas or spaces between them are fine in the UI; here one per item).
    pub tags: Vec<String>,
    /// 0 to 1; the default is 0.5.
    pub importance: Option<f64>,
}

/// The fields of each type.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentForm {
    /// Facts about one thing: its key and named values (text; numbers stay text unless they
    /// read as numbers).
    Semantic {
        /// What the facts are about.
        key: String,
        /// Name and value pairs, in order.
        facts: Vec<(String, String)>,
    },
    /// Something said or that happened.
    Episodic {
        /// Who said it.
        speaker: String,
        /// What was said.
        text: String,
        /// When (a date, RFC 3339, or words: "yesterday", "last Saturday"); now when empty.
        occurred_at: Option<String>,
    },
    /// How to do something.
    Procedural {
        /// Its name.
        name: String,
        /// The steps, in order (empty lines are dropped).
        steps: Vec<String>,
        /// When it applies.
        context: Option<String>,
    },
}

impl MemoryForm {
    /// The request to create it, `now` standing in for a missing time. Empty fields are
    /// refused with a sentence that names them.
    pub fn request(self, now: chrono::DateTime<chrono::Utc>) -> ApiResult<AddRequest> {
        let nonempty = |what: &str, s: &str| -> ApiResult<String> {
            let t = s.trim();
            if t.is_empty() { Err(ApiError::invalid(format!("{what} is empty"))) } else { Ok(t.to_string()) }
        };
        let content = match self.content {
            ContentForm::Semantic { key, facts } => {
                let key = nonempty("The key", &key)?;
                let mut all = Facts::new();
                for (name, value) in facts {
                    if name.trim().is_empty() && value.trim().is_empty() {
                        continue;
                    }
                    let name = nonempty("A fact's name", &name)?;
                    let value = nonempty(&format!("The value of '{name}'"), &value)?;
                    all.insert(name, from_text(&value));
                }
                if all.is_empty() {
                    return Err(ApiError::invalid("Add at least one fact"));
                }
                Content::Semantic(Concept { key, facts: all })
            }
            ContentForm::Episodic { speaker, text, occurred_at } => {
                let occurred_at = match occurred_at.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                    Some(t) => strata_core::temporal::parse_when(t, now, false)?,
                    None => now,
                };
                let speaker = if speaker.trim().is_empty() { "user".to_string() } else { speaker.trim().to_string() };
                let body = EpisodeBody::Utterance { speaker, text: nonempty("What was said", &text)? };
                Content::Episodic(Episode { occurred_at, body, concepts: vec![], extra: Default::default() })
            }
            ContentForm::Procedural { name, steps, context } => {
                let steps: Vec<String> = steps.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                if steps.is_empty() {
                    return Err(ApiError::invalid("Add at least one step"));
                }
                let context = context.map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
                Content::Procedural(Procedure { name: nonempty("The name", &name)?, steps, context })
            }
        };
        let tags = self.tags.into_iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
        Ok(AddRequest { content, tags, importance: self.importance, tier: None, session_id: None, private: false })
    }
}

/// Which memories a list or a search shows, as the filter bar holds it (empty means any).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FilterForm {
    /// Types: `semantic`, `episodic`, `procedural`.
    pub types: Vec<String>,
    /// Tiers: `short`, `medium`, `long`.
    pub tiers: Vec<String>,
    /// Tags every memory must have.
    pub tags: Vec<String>,
    /// Occurred at or after (a date, RFC 3339, or words: "last Saturday", "in May 2023").
    pub since: Option<String>,
    /// Occurred up to and including (the same forms).
    pub until: Option<String>,
    /// Only this agent's private memories.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only this session's memories.
    #[serde(default)]
    pub session: Option<String>,
    /// Only memories from this origin: `person`, `imported`, `conversation`, `tool`.
    #[serde(default)]
    pub origin: Option<String>,
}

impl FilterForm {
    /// The filter, or a sentence naming what does not parse. Times are dates or words read at
    /// `now` ("last Saturday"); `until` includes the day it names.
    pub fn filter(self, now: chrono::DateTime<chrono::Utc>) -> ApiResult<strata_core::Filter> {
        let time = |s: Option<String>, end: bool| when(s, now, end);
        Ok(strata_core::Filter {
            kinds: self.types.iter().map(|t| t.parse()).collect::<strata_core::Result<_>>()?,
            tiers: self.tiers.iter().map(|t| t.parse()).collect::<strata_core::Result<_>>()?,
            tags: self.tags.into_iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect(),
            since: time(self.since, false)?,
            until: time(self.until, true)?,
            agent_id: given(self.agent),
            session_id: given(self.session),
            origin: given(self.origin).map(|o| o.parse()).transpose()?,
            ..Default::default()
        })
    }
}

/// What the analytics screen shows: a date range, its buckets and what is counted (empty means
/// any).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RangeForm {
    /// From (the same forms as a filter's).
    #[serde(default)]
    pub since: Option<String>,
    /// Up to and including.
    #[serde(default)]
    pub until: Option<String>,
    /// `day` or `week` (none: day).
    #[serde(default)]
    pub bucket: Option<String>,
    /// Only memories of this type.
    #[serde(default)]
    pub kind: Option<String>,
    /// Only memories this app or client wrote and recalls it ran.
    #[serde(default)]
    pub client: Option<String>,
    /// Only memories with this tag.
    #[serde(default)]
    pub tag: Option<String>,
}

impl RangeForm {
    /// The range, or a sentence naming what does not parse (times read at `now`).
    pub fn range(self, now: chrono::DateTime<chrono::Utc>) -> ApiResult<strata_core::analytics::Range> {
        Ok(strata_core::analytics::Range {
            since: when(self.since, now, false)?,
            until: when(self.until, now, true)?,
            bucket: given(self.bucket).map(|b| b.parse()).transpose()?.unwrap_or_default(),
            kind: given(self.kind).map(|k| k.parse()).transpose()?,
            client: given(self.client),
            tag: given(self.tag).map(|t| strata_core::model::normalize_tag(&t)).transpose()?,
        })
    }
}

/// A form's text, trimmed; none when empty.
fn given(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// A time a form holds, read at `now` (`end`: the end of what it names).
fn when(
    s: Option<String>,
    now: chrono::DateTime<chrono::Utc>,
    end: bool,
) -> ApiResult<Option<chrono::DateTime<chrono::Utc>>> {
    Ok(match given(s) {
        Some(t) => Some(strata_core::temporal::parse_when(&t, now, end)?),
        None => None,
    })
}

/// A fact's value from a form's text: a number if it reads back exactly as written, else the
/// text.
fn from_text(text: &str) -> FactValue {
    match strata_core::model::number_as_written(text) {
        Some(n) => FactValue::Number(n),
        None => FactValue::Text(text.to_string()),
    }
}

/// An edited fact's text read the way its old value is shaped, as the edit form shows each
/// shape: a list as items between commas, yes or no, a group as JSON. A text or a number
/// stays what the text reads as.
fn shaped_like(old: &FactValue, new: FactValue, name: &str) -> ApiResult<FactValue> {
    let text = match &new {
        FactValue::Text(s) => s.clone(),
        FactValue::Number(n) => n.to_string(),
        _ => return Ok(new),
    };
    Ok(match old {
        FactValue::List(_) => {
            FactValue::List(text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(from_text).collect())
        }
        FactValue::Bool(_) => match text.trim().to_lowercase().as_str() {
            "yes" | "true" => FactValue::Bool(true),
            "no" | "false" => FactValue::Bool(false),
            _ => return Err(ApiError::invalid(format!("The value of '{name}' is yes or no, not '{text}'"))),
        },
        FactValue::Group(_) => serde_json::from_str::<FactValue>(&text).unwrap_or(new),
        _ => new,
    })
}

/// Changes to a memory as the edit form holds them: its fields as they should now read (the
/// type, key and name stay), its tags and importance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EditForm {
    /// The fields, of the memory's own type.
    pub content: ContentForm,
    /// The tags it should have.
    pub tags: Vec<String>,
    /// 0 to 1.
    pub importance: Option<f64>,
    /// The version the form was filled from: a change made meanwhile is a conflict, not lost.
    #[cfg_attr(feature = "specta", specta(type = Option<f64>))]
    pub expected_version: Option<u64>,
}

impl EditForm {
    /// The update that makes `current` read as the form does (`None` when its fields and
    /// importance are unchanged), and the tags to add and to remove.
    pub fn changes(self, current: &MemoryView) -> ApiResult<(Option<UpdateRequest>, Vec<String>, Vec<String>)> {
        let now = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH; // unused: an episode keeps its time
        let as_new = MemoryForm { content: self.content, tags: self.tags, importance: self.importance };
        let wanted = as_new.request(now)?;
        let importance = wanted.importance.filter(|i| (i - current.importance).abs() > f64::EPSILON);
        let mut req = UpdateRequest { importance, expected_version: self.expected_version, ..Default::default() };
        match (&current.content, wanted.content) {
            (Content::Semantic(old), Content::Semantic(new)) => {
                if old.key != new.key {
                    return Err(ApiError::invalid("A memory's key cannot change; create a new memory instead"));
                }
                req.unset_facts = old.facts.keys().filter(|k| !new.facts.contains_key(*k)).cloned().collect();
                let mut set = Vec::new();
                for (k, v) in new.facts {
                    let v = match old.facts.get(&k) {
                        Some(before) => shaped_like(before, v, &k)?,
                        None => v,
                    };
                    if old.facts.get(&k) != Some(&v) {
                        set.push((k, v));
                    }
                }
                req.set_facts = set;
            }
            (Content::Episodic(old), Content::Episodic(new)) => {
                let (EpisodeBody::Utterance { text, .. }, EpisodeBody::Utterance { text: new_text, .. }) =
                    (&old.body, new.body)
                else {
                    return Err(ApiError::invalid("Only what was said can be edited here"));
                };
                if *text != new_text {
                    req.text = Some(new_text);
                }
            }
            (Content::Procedural(old), Content::Procedural(new)) => {
                if old.name != new.name {
                    return Err(ApiError::invalid("A procedure's name cannot change; create a new one instead"));
                }
                if old.steps != new.steps {
                    req.steps = Some(new.steps);
                }
                if old.context != new.context {
                    req.context = Some(new.context.unwrap_or_default());
                }
            }
            _ => return Err(ApiError::invalid("A memory's type cannot change")),
        }
        let changed = req.changes_anything();
        let add: Vec<String> = wanted.tags.iter().filter(|t| !current.tags.contains(t)).cloned().collect();
        let remove: Vec<String> = current.tags.iter().filter(|t| !wanted.tags.contains(t)).cloned().collect();
        Ok((changed.then_some(req), add, remove))
    }
}

impl Engine {
    /// Applies an edit form to a memory: its fields and its tags, in one transaction.
    pub fn edit(&mut self, target: &Target, form: EditForm) -> ApiResult<MemoryView> {
        let current = self.get(target, None)?;
        let (update, add, remove) = form.changes(&current)?;
        let id = self.resolve(&Target::new(current.id.clone()))?;
        self.change(id, update.as_ref(), &add, &remove)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> chrono::DateTime<chrono::Utc> {
        strata_core::time::parse_time("2026-05-01T10:00:00Z").unwrap()
    }

    #[test]
    fn forms_become_requests_and_empty_fields_are_named() {
        let form = MemoryForm {
            content: ContentForm::Semantic {
                key: " pixel ".into(),
                facts: vec![("age".into(), "3".into()), ("colour".into(), "ginger".into()), ("".into(), "".into())],
            },
            tags: vec!["pets".into(), " ".into()],
            importance: None,
        };
        let req = form.request(now()).unwrap();
        let Content::Semantic(c) = req.content else { panic!() };
        assert_eq!(c.key, "pixel");
        assert_eq!(c.facts["age"], FactValue::Number(3.into()));
        assert_eq!(req.tags, ["pets"]);

        let empty = MemoryForm {
            content: ContentForm::Procedural { name: "x".into(), steps: vec![" ".into()], context: None },
            tags: vec![],
            importance: None,
        };
        assert_eq!(empty.request(now()).unwrap_err().message, "Add at least one step");
        let no_value = MemoryForm {
            content: ContentForm::Semantic { key: "k".into(), facts: vec![("colour".into(), " ".into())] },
            tags: vec![],
            importance: None,
        };
        assert_eq!(no_value.request(now()).unwrap_err().message, "The value of 'colour' is empty");
        let said = MemoryForm {
            content: ContentForm::Episodic { speaker: "".into(), text: "hello".into(), occurred_at: None },
            tags: vec![],
            importance: None,
        };
        let Content::Episodic(e) = said.request(now()).unwrap().content else { panic!() };
        assert_eq!(e.occurred_at, now());
    }
}
