//! Retrieval with extraction (issue 20): LoCoMo's evidence found in an assembled prompt within a
//! token budget, from the turns alone and with the facts drawn from them beside the turns. A
//! fact in the prompt counts for the turns it was drawn from (its `extracted_from` links), so a
//! short fact can carry a question's evidence in fewer tokens than the turns it restates.
//!
//! Two kinds of facts are measured: those a model extracted ([`crate::extractbench`]) and the
//! annotators' own observations written as facts ([`write_observations`]) — what a perfect
//! extractor would give, the most facts can help.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use strata_api::extract::{fact_content, statement, subject_key};
use strata_api::{AddRequest, ApiResult, Engine, Target};
use strata_context::{Candidate, ContextOptions, ContextRequest, assemble};
use strata_core::extraction::FACT_SOURCE;

use crate::locomo::{self, Asked, Sample};

/// The token budgets (cl100k_base) measured.
pub use locomo::DERIVED_BUDGETS as BUDGETS;

/// Evidence recall within each budget, turns alone and with facts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FactRecall {
    /// Questions asked (those whose evidence lies in the sessions read).
    pub questions: usize,
    /// Facts beside the turns.
    pub facts: usize,
    /// Budget → mean evidence recall from the turns alone.
    pub turns_only: BTreeMap<usize, f64>,
    /// Budget → mean evidence recall with the facts beside the turns.
    pub with_facts: BTreeMap<usize, f64>,
    /// Budget → mean share of the prompt's memory tokens that went to facts.
    pub fact_token_share: BTreeMap<usize, f64>,
}

/// Sums over the conversations measured so far.
#[derive(Debug, Default)]
pub struct Tally {
    questions: usize,
    facts: usize,
    turns_only: [f64; BUDGETS.len()],
    with_facts: [f64; BUDGETS.len()],
    fact_share: [f64; BUDGETS.len()],
}

/// Writes the observations of session `n` as facts beside its turns, each linked to the turns
/// it names; returns how many.
pub fn write_observations(
    sample: &Sample,
    n: usize,
    engine: &mut Engine,
    memory_of: &HashMap<String, String>,
) -> ApiResult<usize> {
    let mut written = 0;
    for (i, o) in locomo::observations(sample, n).into_iter().enumerate() {
        let key = format!("{}/session-{n}-observation-{i}", subject_key(&o.speaker));
        let fact = engine.add(AddRequest {
            session_id: Some(format!("session_{n}")),
            ..AddRequest::new(fact_content(key, &o.text, None))
        })?;
        for dia in &o.evidence {
            if let Some(turn) = memory_of.get(dia) {
                engine.link(&Target::new(fact.id.clone()), &Target::new(turn.clone()), FACT_SOURCE)?;
            }
        }
        written += 1;
    }
    Ok(written)
}

impl Tally {
    /// Asks `questions` of `engine` (one conversation's store, embedded, holding `facts` facts)
    /// and adds their evidence recall, turns alone and with the facts, to the sums. `dia_of`:
    /// memory id → dia_id of every turn.
    pub fn add(
        &mut self,
        engine: &mut Engine,
        questions: &[Asked],
        dia_of: &HashMap<String, String>,
        facts: usize,
    ) -> ApiResult<()> {
        self.facts += facts;
        let tokens = strata_tokens::OpenAiTokens::new(strata_tokens::Encoding::Cl100kBase);
        // memory id → the dia_ids it carries (a turn its own, a fact those it was drawn from)
        let mut carries: HashMap<String, Vec<String>> =
            dia_of.iter().map(|(id, dia)| (id.clone(), vec![dia.clone()])).collect();
        for q in questions {
            self.questions += 1;
            for with_facts in [false, true] {
                let candidates = locomo::recalled(engine, &q.text, with_facts)?;
                for (b, budget) in BUDGETS.into_iter().enumerate() {
                    let (found, fact_share) =
                        in_prompt(engine, &tokens, q, (&candidates, budget), dia_of, &mut carries)?;
                    if with_facts {
                        self.with_facts[b] += found;
                        self.fact_share[b] += fact_share;
                    } else {
                        self.turns_only[b] += found;
                    }
                }
            }
        }
        Ok(())
    }

    /// The means.
    pub fn report(&self) -> FactRecall {
        let n = self.questions.max(1) as f64;
        let by_budget = |sums: &[f64; BUDGETS.len()]| {
            BUDGETS.iter().zip(sums).map(|(b, s)| (*b, (s / n * 1000.0).round() / 1000.0)).collect()
        };
        FactRecall {
            questions: self.questions,
            facts: self.facts,
            turns_only: by_budget(&self.turns_only),
            with_facts: by_budget(&self.with_facts),
            fact_token_share: by_budget(&self.fact_share),
        }
    }
}

/// Assembles the prompt for `q` from `candidates` within `budget`: the share of its evidence
/// the prompt carries, and the share of the prompt's memory tokens spent on facts.
fn in_prompt(
    engine: &Engine,
    tokens: &strata_tokens::OpenAiTokens,
    q: &Asked,
    (candidates, budget): (&[Candidate], usize),
    dia_of: &HashMap<String, String>,
    carries: &mut HashMap<String, Vec<String>>,
) -> ApiResult<(f64, f64)> {
    let request =
        ContextRequest { message: q.text.clone(), candidates: candidates.to_vec(), budget, ..Default::default() };
    let prompt = assemble(tokens, request, &ContextOptions::default())?;
    let mut found = HashSet::new();
    let (mut fact_tokens, mut all_tokens) = (0, 0);
    for item in &prompt.report.included {
        let id = item.id.to_string();
        if !carries.contains_key(&id) {
            let sources = fact_sources(engine, &id, dia_of)?;
            carries.insert(id.clone(), sources);
        }
        found.extend(carries[&id].iter().filter(|d| q.evidence.contains(*d)).cloned());
        all_tokens += item.tokens;
        if !dia_of.contains_key(&id) {
            fact_tokens += item.tokens;
        }
    }
    let share = if all_tokens == 0 { 0.0 } else { fact_tokens as f64 / all_tokens as f64 };
    Ok((found.len() as f64 / q.evidence.len() as f64, share))
}

/// The dia_ids a fact was drawn from: none for anything else (a subject's document rests on
/// every turn about its subject and carries none of them itself).
fn fact_sources(engine: &Engine, id: &str, dia_of: &HashMap<String, String>) -> ApiResult<Vec<String>> {
    let m = engine.memory(&Target::new(id))?;
    if statement(&m).is_none() {
        return Ok(Vec::new());
    }
    Ok(m.links
        .iter()
        .filter(|l| l.relation == FACT_SOURCE)
        .filter_map(|l| dia_of.get(&l.target.to_string()).cloned())
        .collect())
}
