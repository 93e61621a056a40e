//! How an adapter fares among the adapters in use, as the report shows it: of its check
//! questions, how many choose it; of the others', how many choose it by mistake. Embeddings
//! only (no answer is generated): seconds, on the store's embedder.

use std::sync::Arc;

use strata_api::{ApiResult, Engine};
use strata_models::{AdapterInUse, CHOOSE_AT, Chooser};

use crate::Dataset;

/// An adapter among the adapters in use.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SelectionView {
    /// The adapters compared: those in use of its model, and it.
    pub among: Vec<String>,
    /// Of its check questions, those that choose it.
    pub own_chosen: u32,
    /// Its check questions.
    pub own_questions: u32,
    /// Of the others' check questions, those that choose it.
    pub others_to_it: u32,
    /// The others' check questions.
    pub other_questions: u32,
    /// The threshold a question must reach.
    pub threshold: f32,
    /// In a sentence.
    pub said: String,
}

/// Adapter `id` among the adapters in use of its model; none without an embedder.
pub fn selection(e: &Engine, id: &str) -> ApiResult<Option<SelectionView>> {
    let Some(embedder) = e.embedder().cloned() else { return Ok(None) };
    let me = e.adapter(id)?;
    let mut records: Vec<_> =
        e.adapters_in_use()?.into_iter().filter(|a| a.base_model == me.base_model && a.id != id).collect();
    records.push(me);
    let mut adapters = Vec::new();
    let mut heldout = Vec::new();
    for a in records {
        let set = Dataset::read(&a.path.join("training-set.jsonl"))?;
        heldout.push(set.heldout().map(|x| x.question.clone()).collect::<Vec<_>>());
        let keys = super::trained_questions(&set);
        adapters.push(AdapterInUse { dir: a.path, id: a.id, base_model: a.base_model, keys });
    }
    let chooser = Chooser::new(Arc::clone(&embedder), &adapters, CHOOSE_AT)?;
    let mine = adapters.len() - 1;
    let choosing_me = |qs: &[String]| -> ApiResult<u32> {
        let mut n = 0;
        for q in qs {
            n += u32::from(chooser.choose(q)?.is_some_and(|c| c.index == mine));
        }
        Ok(n)
    };
    let own_chosen = choosing_me(&heldout[mine])?;
    let others: Vec<String> = heldout[..mine].iter().flatten().cloned().collect();
    let others_to_it = choosing_me(&others)?;
    let (own_questions, other_questions) = (heldout[mine].len() as u32, others.len() as u32);
    let said = match mine {
        0 => format!(
            "Alone in use, {own_chosen} of its {own_questions} check questions would reach it; a question about \
             nothing it learned is answered without it."
        ),
        n => format!(
            "Among the {} adapters in use, {own_chosen} of its {own_questions} check questions choose it; \
             {others_to_it} of the other {n}'s {other_questions} choose it by mistake.",
            n + 1
        ),
    };
    let among = adapters.into_iter().map(|a| a.id).collect();
    Ok(Some(SelectionView {
        among,
        own_chosen,
        own_questions,
        others_to_it,
        other_questions,
        threshold: CHOOSE_AT,
        said,
    }))
}
