//! Several trained adapters in use, one chosen per question (or none): the question's
//! embedding against the questions each adapter was trained on. The closest trained question
//! of each adapter is its score; the best adapter answers when its score reaches
//! [`CHOOSE_AT`], otherwise the model answers on its own.

use std::sync::Arc;

use strata_core::{Embedder, Result};

use crate::AdapterInUse;

/// The similarity (cosine of all-MiniLM-L6-v2 embeddings) a question must reach to one of an
/// adapter's trained questions for that adapter to answer it. Calibrated by
/// `strata bench adapters --choose-only` (docs/benchmarks.md, "Several adapters"), five topics
/// of twenty facts in use: at 0.80 all 300 held-out phrasings chose their own adapter, all 30
/// general questions chose none, and 17 of 20 near misses (people never trained, asked the
/// trained attributes) chose none — 0.94 of the questions about nothing trained. Lower, near
/// misses reach a stranger's adapter (0.35 chose none at 0.62); higher, held-out phrasings
/// start to miss theirs (0.97 at 0.86). A miss costs little (the memories are still in the
/// prompt); a wrong adapter answers with another's fact: the threshold leans high.
pub const CHOOSE_AT: f32 = 0.80;

/// The adapter chosen for a question.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    /// Its place among the adapters the chooser was made with.
    pub index: usize,
    /// The question's similarity to its closest trained question.
    pub score: f32,
}

/// Chooses among adapters by their trained questions' embeddings.
pub struct Chooser {
    embedder: Arc<dyn Embedder>,
    /// Per adapter, its keys' vectors (normalized).
    keys: Vec<Vec<Vec<f32>>>,
    at: f32,
}

impl std::fmt::Debug for Chooser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chooser").field("adapters", &self.keys.len()).field("at", &self.at).finish()
    }
}

impl Chooser {
    /// Embeds each adapter's keys with `embedder` (the store's: a question searched is then
    /// not embedded again to choose). `at`: the similarity an adapter needs ([`CHOOSE_AT`]).
    pub fn new(embedder: Arc<dyn Embedder>, adapters: &[AdapterInUse], at: f32) -> Result<Chooser> {
        let mut keys = Vec::with_capacity(adapters.len());
        for a in adapters {
            let texts: Vec<&str> = a.keys.iter().map(String::as_str).collect();
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in texts.chunks(32) {
                vectors.extend(embedder.embed(batch)?);
            }
            keys.push(vectors);
        }
        Ok(Chooser { embedder, keys, at })
    }

    /// The id of the embedder its keys were embedded with.
    pub fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    /// Each adapter's score for `question`: its closest key's similarity (an adapter without
    /// keys scores below any threshold).
    pub fn scores(&self, question: &str) -> Result<Vec<f32>> {
        let q = self.embedder.embed_query(question)?;
        Ok(self.keys.iter().map(|keys| keys.iter().map(|k| dot(&q, k)).fold(f32::MIN, f32::max)).collect())
    }

    /// The adapter that answers `question`: the best-scoring one when it reaches the threshold.
    pub fn choose(&self, question: &str) -> Result<Option<Choice>> {
        Ok(best(&self.scores(question)?, self.at))
    }
}

/// The best of `scores` when it reaches `at`.
pub fn best(scores: &[f32], at: f32) -> Option<Choice> {
    let (index, score) = scores.iter().copied().enumerate().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (score >= at).then_some(Choice { index, score })
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_score_answers_only_from_the_threshold() {
        assert_eq!(best(&[0.3, 0.7, 0.5], 0.6), Some(Choice { index: 1, score: 0.7 }));
        assert_eq!(best(&[0.3, 0.59, 0.5], 0.6), None);
        assert_eq!(best(&[0.6], 0.6), Some(Choice { index: 0, score: 0.6 }));
        assert_eq!(best(&[], 0.6), None);
    }
}
