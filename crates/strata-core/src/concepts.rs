//! Concepts (issue 21): related memories grouped under one semantic memory keyed
//! `concept/<slug>`, holding a name, salient terms, the time its members span and an extractive
//! summary whose every sentence names the member it was taken from. A concept links to each
//! member ([`GROUPS`]); members are never changed by compaction. Because a concept is a memory,
//! forming, updating and dissolving one are ordinary events (replay and as-of reads cover them).
//!
//! Forgetting a member re-forms its concepts without it ([`StoreTx::forget`]): the concept's
//! stream, whose past versions quote the member, is forgotten, and a concept with the same key
//! is created from what the other members said — or none, when fewer than two are left.

use chrono::{DateTime, Utc};

use crate::error::Result;
use crate::model::{Concept, Content, FactValue, Facts, Memory, MemoryId};
use crate::sql::{Dialect, Row, Sql, SqlValue};
use crate::storage::PlainSql;
use crate::store::{Store, StoreTx};
use crate::time::{format_time, parse_time};

/// A concept's link to each of its members.
pub const GROUPS: &str = "groups";

/// The key prefix of every concept.
pub const KEY_PREFIX: &str = "concept/";

/// Salient terms kept per concept.
pub const MAX_TERMS: usize = 8;

/// One sentence of a summary and the member it was taken from — or, for a sentence a model
/// wrote, the members it cites.
#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    /// The member (a written sentence: the first it cites).
    pub from: MemoryId,
    /// Its words: as the member says them, or as the model wrote them.
    pub text: String,
    /// The other members a written sentence cites; none for a quoted one.
    pub also: Vec<MemoryId>,
}

impl Sentence {
    /// A sentence `from` said.
    pub fn quoted(from: MemoryId, text: impl Into<String>) -> Sentence {
        Sentence { from, text: text.into(), also: Vec::new() }
    }

    /// Whether it was taken from, or draws on, `member`.
    pub fn cites(&self, member: MemoryId) -> bool {
        self.from == member || self.also.contains(&member)
    }
}

/// What a concept says.
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptBody {
    /// A name a person reads.
    pub name: String,
    /// Its members' salient words, most salient first.
    pub terms: Vec<String>,
    /// The summary, in the members' order.
    pub summary: Vec<Sentence>,
    /// Every sentence of substance its members said, in their order (bounded): what a prompt
    /// picks from for a question ([`ConceptBody::for_query`]).
    pub said: Vec<Sentence>,
    /// When its earliest member happened.
    pub first: DateTime<Utc>,
    /// When its latest member happened.
    pub last: DateTime<Utc>,
    /// The model that wrote the summary (each sentence checked against the members it cites);
    /// `None`: the summary quotes the members.
    pub written_by: Option<String>,
}

/// Whether `m` is a concept.
pub fn is_concept(m: &Memory) -> bool {
    m.content.key().is_some_and(|k| k.starts_with(KEY_PREFIX))
}

/// The members of concept `m`.
pub fn members(m: &Memory) -> Vec<MemoryId> {
    m.links.iter().filter(|l| l.relation == GROUPS).map(|l| l.target).collect()
}

/// The name made of a concept's terms: the first three.
pub fn name_of(terms: &[String]) -> String {
    if terms.is_empty() { "Unnamed".to_string() } else { terms.iter().take(3).cloned().collect::<Vec<_>>().join(", ") }
}

impl ConceptBody {
    /// The content of a concept keyed `key`.
    pub fn content(&self, key: &str) -> Content {
        let mut facts = Facts::new();
        facts.insert("name".into(), FactValue::Text(self.name.clone()));
        facts.insert("terms".into(), FactValue::List(self.terms.iter().cloned().map(FactValue::Text).collect()));
        let sentences = |list: &[Sentence]| {
            list.iter()
                .map(|s| {
                    let mut g = Facts::new();
                    g.insert("text".into(), FactValue::Text(s.text.clone()));
                    g.insert("from".into(), FactValue::Text(s.from.to_string()));
                    if !s.also.is_empty() {
                        let also = s.also.iter().map(|m| FactValue::Text(m.to_string())).collect();
                        g.insert("also".into(), FactValue::List(also));
                    }
                    FactValue::Group(g)
                })
                .collect()
        };
        facts.insert("summary".into(), FactValue::List(sentences(&self.summary)));
        if !self.said.is_empty() {
            facts.insert("said".into(), FactValue::List(sentences(&self.said)));
        }
        facts.insert("first".into(), FactValue::Text(format_time(self.first)));
        facts.insert("last".into(), FactValue::Text(format_time(self.last)));
        if let Some(model) = &self.written_by {
            facts.insert("written_by".into(), FactValue::Text(model.clone()));
        }
        Content::Semantic(Concept { key: key.to_string(), facts })
    }

    /// What concept `m` says; None when `m` is not a concept.
    pub fn read(m: &Memory) -> Option<ConceptBody> {
        let Content::Semantic(c) = &m.content else { return None };
        if !c.key.starts_with(KEY_PREFIX) {
            return None;
        }
        let text = |v: Option<&FactValue>| match v {
            Some(FactValue::Text(t)) => Some(t.clone()),
            _ => None,
        };
        let list = |name: &str| match c.facts.get(name) {
            Some(FactValue::List(items)) => items.clone(),
            _ => Vec::new(),
        };
        let sentences = |name: &str| -> Vec<Sentence> {
            list(name)
                .into_iter()
                .filter_map(|item| match item {
                    FactValue::Group(g) => {
                        let also = match g.get("also") {
                            Some(FactValue::List(ids)) => {
                                ids.iter().filter_map(|i| text(Some(i))?.parse().ok()).collect()
                            }
                            _ => Vec::new(),
                        };
                        Some(Sentence { from: text(g.get("from"))?.parse().ok()?, text: text(g.get("text"))?, also })
                    }
                    _ => None,
                })
                .collect()
        };
        let summary = sentences("summary");
        let time = |name: &str| text(c.facts.get(name)).and_then(|t| parse_time(&t).ok());
        Some(ConceptBody {
            name: text(c.facts.get("name")).unwrap_or_default(),
            terms: list("terms").into_iter().filter_map(|t| text(Some(&t))).collect(),
            summary,
            said: sentences("said"),
            first: time("first").unwrap_or(m.created_at),
            last: time("last").unwrap_or(m.created_at),
            written_by: text(c.facts.get("written_by")),
        })
    }

    /// The same concept without anything taken from `member`: the sentences taken from it or
    /// citing it dropped, and its
    /// terms kept only where `still_said` (what the other members say, lower-cased) holds them.
    pub fn without(&self, member: MemoryId, still_said: &str) -> ConceptBody {
        let terms: Vec<String> = self.terms.iter().filter(|t| contains_word(still_said, t)).cloned().collect();
        let summary: Vec<Sentence> = self.summary.iter().filter(|s| !s.cites(member)).cloned().collect();
        let said: Vec<Sentence> = self.said.iter().filter(|s| !s.cites(member)).cloned().collect();
        // A written summary with nothing left says what the members said until it is written again.
        let (summary, written_by) = match &self.written_by {
            Some(_) if summary.is_empty() => (said.iter().take(3).cloned().collect(), None),
            w => (summary, w.clone()),
        };
        ConceptBody { name: name_of(&terms), terms, summary, said, first: self.first, last: self.last, written_by }
    }
}

impl ConceptBody {
    /// What a prompt shows of this concept for `query`: the sentences its members said that
    /// share the most words of substance with it (per word they cost), in the members' order,
    /// within about as many words as the summary has; the summary when none shares a word. A
    /// summary a model wrote is what the concept shows, whatever the query.
    pub fn for_query(&self, query: &str) -> Vec<&Sentence> {
        if self.written_by.is_some() {
            return self.summary.iter().collect();
        }
        let wanted: std::collections::HashSet<String> = substance(query).collect();
        let limit = self.summary.iter().map(|s| s.text.split_whitespace().count()).sum::<usize>().max(24);
        let mut scored: Vec<(f64, usize)> = self
            .said
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let words: std::collections::HashSet<String> = substance(&s.text).collect();
                let shared = words.intersection(&wanted).count();
                (shared > 0).then(|| (shared as f64 / (s.text.split_whitespace().count() as f64).sqrt(), i))
            })
            .collect();
        if scored.is_empty() {
            return self.summary.iter().collect();
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let (mut chosen, mut used) = (Vec::new(), 0);
        for (_, i) in scored {
            let n = self.said[i].text.split_whitespace().count();
            if used + n <= limit || chosen.is_empty() {
                chosen.push(i);
                used += n;
            }
        }
        chosen.sort_unstable();
        chosen.into_iter().map(|i| &self.said[i]).collect()
    }
}

/// The words of substance of `text`, lower-cased: three letters or more, no function word.
pub fn substance(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !crate::words::is_stopword(w))
        .map(str::to_lowercase)
}

/// Whether `text` (lower-cased) holds `word` as a whole word.
pub fn contains_word(text: &str, word: &str) -> bool {
    let word = word.to_lowercase();
    text.match_indices(&word).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = text[i + word.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        before && after
    })
}

/// How many grouping passes have written concepts (`concept_passes` in `settings`). A pass
/// reads it before it plans and writes only if it has not moved
/// ([`StoreTx::bump_concept_passes`]): two passes at once never both write (each would form
/// the same concepts again, every member in two).
fn passes(sql: &dyn PlainSql, dialect: Dialect) -> Result<i64> {
    let q = Sql::new(dialect, "SELECT value FROM settings WHERE key = 'concept_passes'");
    let value = match sql.rows(&q)?.pop() {
        Some(r) => Row::new(r, "settings").opt_text(0)?,
        None => None,
    };
    Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
}

impl Store {
    /// How many grouping passes have written concepts (see [`StoreTx::bump_concept_passes`]).
    pub fn concept_passes(&self) -> Result<i64> {
        passes(self.engine.plain(), self.engine.dialect())
    }
}

impl StoreTx<'_> {
    /// Inside the transaction that writes a grouping pass: whether no other pass wrote since
    /// this one read [`Store::concept_passes`] as `seen` — then counts this pass
    /// and returns true; otherwise writes nothing and returns false.
    pub fn bump_concept_passes(&mut self, seen: i64) -> Result<bool> {
        if passes(self.tx.plain(), self.tx.dialect())? != seen {
            return Ok(false);
        }
        let mut q = Sql::new(self.tx.dialect(), "INSERT INTO settings (key, value) VALUES ('concept_passes', ");
        q.bind("?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", SqlValue::Text((seen + 1).to_string()));
        self.tx.plain().execute(&q)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> MemoryId {
        MemoryId::from_parts(n, 0)
    }

    #[test]
    fn a_concept_reads_back_what_it_wrote_and_drops_a_member_cleanly() {
        let t = parse_time("2023-05-08T13:56:00Z").unwrap();
        let body = ConceptBody {
            name: "kitten, pixel, piano".into(),
            terms: vec!["kitten".into(), "pixel".into(), "piano".into()],
            summary: vec![
                Sentence::quoted(id(1), "My kitten is called Pixel."),
                Sentence::quoted(id(2), "She sleeps on the piano."),
            ],
            said: vec![
                Sentence::quoted(id(1), "My kitten is called Pixel."),
                Sentence::quoted(id(2), "She sleeps on the piano."),
                Sentence::quoted(id(2), "The vet visit is on Tuesday."),
            ],
            first: t,
            last: t + chrono::Duration::days(11),
            written_by: None,
        };
        let m =
            Memory::new(id(9), crate::model::Scope::user("u"), body.content("concept/kitten"), Default::default(), t);
        assert!(is_concept(&m));
        assert_eq!(ConceptBody::read(&m).unwrap(), body);
        // A summary a model wrote: its sentences cite members, and forgetting any one of them
        // drops the sentence.
        let written = ConceptBody {
            summary: vec![
                Sentence { from: id(1), text: "Pixel, a kitten, sleeps on the piano.".into(), also: vec![id(2)] },
                Sentence::quoted(id(1), "My kitten is called Pixel."),
            ],
            written_by: Some("qwen2.5-coder-0.5b".into()),
            ..body.clone()
        };
        let m = Memory { content: written.content("concept/kitten"), ..m.clone() };
        assert_eq!(ConceptBody::read(&m).unwrap(), written);
        assert_eq!(written.without(id(2), "my kitten is called pixel.").summary, vec![written.summary[1].clone()]);
        let left = written.without(id(1), "she sleeps on the piano.");
        assert_eq!((left.summary, left.written_by), (left.said.clone(), None), "nothing written left: what they said");
        let left = body.without(id(2), "my kitten is called pixel.");
        assert_eq!(left.summary, vec![body.summary[0].clone()]);
        assert_eq!(left.terms, vec!["kitten".to_string(), "pixel".to_string()]);
        assert_eq!(left.name, "kitten, pixel");
        assert!(contains_word("the piano.", "piano") && !contains_word("pianos", "piano"));
        assert_eq!(left.said.len(), 1);
        // For a question, the sentences that answer it; for none, the summary.
        let picked: Vec<&str> = body.for_query("When is the vet visit?").iter().map(|s| s.text.as_str()).collect();
        assert_eq!(picked, ["The vet visit is on Tuesday."]);
        assert_eq!(body.for_query("weather?").len(), 2);
    }
}
