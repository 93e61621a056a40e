//! How a memory reads inside a prompt: one labelled item, an episode's date first, its text
//! fenced ([`fence`]) so that nothing in it can close the memory block or pass for another item.

use chrono::{DateTime, Utc};
use strata_core::chat::fence;
use strata_core::concepts::ConceptBody;
use strata_core::{Content, EpisodeBody, FactValue, Memory};

fn date(t: DateTime<Utc>) -> String {
    t.format("%-d %B %Y").to_string()
}

fn value(v: &FactValue) -> String {
    match v {
        FactValue::Text(s) => s.clone(),
        FactValue::Number(n) => n.to_string(),
        FactValue::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        FactValue::List(items) => items.iter().map(value).collect::<Vec<_>>().join(", "),
        FactValue::Group(g) => {
            format!("({})", g.iter().map(|(k, v)| format!("{k}: {}", value(v))).collect::<Vec<_>>().join("; "))
        }
    }
}

/// The text a memory contributes to a prompt answering `query`, without its label: what
/// duplicates are judged on. A concept shows the sentences its members said that bear on the
/// query ([`ConceptBody::for_query`]).
pub fn body_for(m: &Memory, query: &str) -> String {
    if let Some(c) = ConceptBody::read(m) {
        return concept(&c, query);
    }
    match &m.content {
        Content::Semantic(c) => {
            format!(
                "{}: {}",
                c.key,
                c.facts.iter().map(|(k, v)| format!("{k}: {}", value(v))).collect::<Vec<_>>().join("; ")
            )
        }
        Content::Episodic(e) => match &e.body {
            EpisodeBody::Utterance { speaker, text } => format!("{speaker}: {text}"),
            EpisodeBody::Exchange { query, response } => exchange(query, response),
        },
        Content::Procedural(p) => {
            let mut s = p.name.clone();
            if let Some(c) = &p.context {
                s.push_str(&format!(" (when: {c})"));
            }
            for (i, step) in p.steps.iter().enumerate() {
                // Steps written with their own numbers keep them.
                let numbered = step
                    .trim_start()
                    .split_once(['.', ')'])
                    .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
                s.push_str(&if numbered { format!("\n{}", step.trim_start()) } else { format!("\n{}. {step}", i + 1) });
            }
            s
        }
    }
}

/// A concept: its name, the days it spans, and what its members said that bears on `query`
/// (its summary when nothing does), each sentence as its member said it.
fn concept(c: &ConceptBody, query: &str) -> String {
    let span =
        if date(c.first) == date(c.last) { date(c.first) } else { format!("{} to {}", date(c.first), date(c.last)) };
    let said: Vec<&str> = c.for_query(query).iter().map(|s| s.text.as_str()).collect();
    format!("{} ({span}): {}", c.name, said.join(" "))
}

/// An exchange with who said what: a model's earlier answer may be wrong and must not read as
/// something the user said.
fn exchange(query: &str, response: &str) -> String {
    match (query.trim().is_empty(), response.trim().is_empty()) {
        (false, true) => format!("the user said: {query}"),
        (true, _) => format!("the assistant said (it may be wrong): {response}"),
        (false, false) => format!("the user asked: {query}\nthe assistant answered (it may be wrong): {response}"),
    }
}

/// One item of the block, labelled `[label]`, ending in a newline. Episodes carry their date.
pub fn item(label: usize, m: &Memory, body: &str) -> String {
    format!("[{label}] {}", dated(m, body))
}

/// An item without its label: an episode's date, then `body` fenced, ending in a newline.
pub fn dated(m: &Memory, body: &str) -> String {
    let when = match &m.content {
        Content::Episodic(e) => format!("({}) ", date(e.occurred_at)),
        _ => String::new(),
    };
    format!("{when}{}\n", fence(body))
}

/// A passage of a file as one item of the block: its label, where it came from, its text
/// fenced, ending in a newline.
pub(crate) fn passage_item(label: usize, p: &crate::Passage, body: &str) -> String {
    format!("[{label}] ({}) {}\n", p.citation(), fence(body))
}
