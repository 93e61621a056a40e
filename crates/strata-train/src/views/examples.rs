//! The training set of the approved memories as a person reads and edits it: each memory's
//! examples, whether a person edited them, and what is wrong with them.

use std::collections::BTreeMap;

use strata_api::{ApiError, ApiResult, Engine};
use strata_models::LocalChat;

use crate::data::FactRef;
use crate::{Example, Kind, Split, TrainConfig, pipeline};

/// One training example as a person reads and edits it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExampleForm {
    /// The question.
    pub question: String,
    /// The answer taught.
    pub answer: String,
    /// Asked only to check what was learned, never trained on.
    pub held_out: bool,
    /// For a fact: what a right answer contains (checked against the model's answers).
    pub expected: Option<String>,
    /// The fact it is about (kept as it was: edits change the words, not the fact).
    pub subject: Option<String>,
    /// The fact's attribute.
    pub attribute: Option<String>,
    /// `fact` or `procedure`.
    pub kind: String,
}

/// An example as shown.
pub fn form_of(e: &Example) -> ExampleForm {
    ExampleForm {
        question: e.question.clone(),
        answer: e.answer.clone(),
        held_out: e.split == Split::Heldout,
        expected: e.fact.as_ref().map(|f| f.value.clone()),
        subject: e.fact.as_ref().map(|f| f.subject.clone()),
        attribute: e.fact.as_ref().map(|f| f.attribute.clone()),
        kind: if e.kind == Kind::Procedure { "procedure" } else { "fact" }.into(),
    }
}

/// The example a person's form stands for, of memory `source`.
pub fn example_of(f: ExampleForm, source: &str) -> Example {
    let fact = match (f.subject, f.attribute, f.expected) {
        (Some(subject), Some(attribute), Some(value)) => Some(FactRef { subject, attribute, value }),
        _ => None,
    };
    Example {
        question: f.question.trim().to_string(),
        answer: f.answer.trim().to_string(),
        kind: if f.kind == "procedure" { Kind::Procedure } else { Kind::Fact },
        split: if f.held_out { Split::Heldout } else { Split::Train },
        sources: vec![source.to_string()],
        fact,
    }
}

/// An approved memory's examples, whether a person edited them, and what is wrong with them.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SetMemoryView {
    /// The memory.
    pub memory: strata_api::dto::MemoryView,
    /// Whether a person edited its examples.
    pub edited: bool,
    /// Its examples.
    pub examples: Vec<ExampleForm>,
    /// What is wrong, each with how to mend it.
    pub problems: Vec<String>,
}

/// The training set of the approved memories, as it would be trained.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TrainingSetView {
    /// Each approved memory.
    pub memories: Vec<SetMemoryView>,
    /// Examples trained on.
    pub train: u32,
    /// Examples kept to check what was learned.
    pub held_out: u32,
    /// Problems that stop training until mended.
    pub blocking: Vec<String>,
    /// Problems of no one memory.
    pub other: Vec<String>,
}

/// The approved memories' training set (its general questions aside), with the people's edits.
pub fn training_set(e: &Engine, chat: &LocalChat) -> ApiResult<TrainingSetView> {
    let memories = pipeline::approved(e)?;
    let edits: BTreeMap<String, Vec<Example>> = pipeline::edits_of(e, &memories)?;
    let config = TrainConfig { replay: 0, ..TrainConfig::default() };
    let set = crate::dataset_edited(chat, &memories, &edits, &config)?;
    let mut view = TrainingSetView {
        memories: Vec::new(),
        train: set.train().count() as u32,
        held_out: set.heldout().count() as u32,
        blocking: Vec::new(),
        other: Vec::new(),
    };
    let problems: Vec<(String, Vec<String>, bool)> =
        set.problems.iter().map(|p| (p.advice(), p.memories(), p.blocks())).collect();
    for (words, ids, blocks) in &problems {
        if *blocks {
            view.blocking.push(words.clone());
        }
        if ids.is_empty() {
            view.other.push(words.clone());
        }
    }
    for m in memories {
        let id = m.id.to_string();
        let examples = set.examples.iter().filter(|x| x.sources.contains(&id)).map(form_of).collect();
        let problems = problems.iter().filter(|(_, ids, _)| ids.contains(&id)).map(|(w, _, _)| w.clone()).collect();
        view.memories.push(SetMemoryView { edited: edits.contains_key(&id), memory: m.into(), examples, problems });
    }
    Ok(view)
}

/// Keeps a person's examples for memory `id` (`None`: back to the generated ones).
pub fn save_examples(e: &mut Engine, id: &str, examples: Option<Vec<ExampleForm>>) -> ApiResult<()> {
    let value = examples
        .map(|list| {
            let list: Vec<Example> = list.into_iter().map(|f| example_of(f, id)).collect();
            serde_json::to_value(list).map_err(|err| ApiError::invalid(err.to_string()))
        })
        .transpose()?;
    e.save_example_edit(id, value.as_ref())
}
