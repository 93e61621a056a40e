//! The gate an adapter must pass. Fact recall: the held-out questions (phrasings never trained
//! on) answered greedily with the adapter, without it, and without it but with the fact in the
//! prompt (answering by retrieval, the honest baseline); an answer counts when it contains the
//! fact's value (normalised). An answer is its first sentence: generation stops there (the
//! examples trained on answer in one sentence), which makes the judgement stricter, for the
//! three ways alike, and the evaluation several times faster. No collateral damage: perplexity on general text the adapter
//! never saw, with and without it; more than `margin` worse fails.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use strata_core::{Message, Result, Role};
use strata_models::{Adapter, LocalChat, Sampling};

use crate::data::{Example, normalise};

/// General text for the perplexity check: everyday explanatory prose written for this test,
/// about nothing the example facts mention.
pub const GENERAL_TEXT: &str = include_str!("general.txt");

/// One held-out question's answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The question.
    pub question: String,
    /// What a correct answer contains.
    pub expected: String,
    /// The answer with the adapter.
    pub with_adapter: String,
    /// The answer without it.
    pub without: String,
    /// The answer without it, the fact in the prompt.
    pub with_retrieval: String,
}

/// The evaluation report, stored with the adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Facts evaluated.
    pub facts: usize,
    /// Held-out questions asked.
    pub questions: usize,
    /// Share answered correctly with the adapter.
    pub recall_with_adapter: f64,
    /// Share answered correctly by the base model.
    pub recall_without: f64,
    /// Share answered correctly by the base model with the fact in its prompt.
    pub recall_with_retrieval: f64,
    /// The base model's perplexity on the general text.
    pub perplexity_base: f64,
    /// With the adapter.
    pub perplexity_adapter: f64,
    /// The largest allowed rise in perplexity (0.10: 10%).
    pub margin: f64,
    /// The least fact recall with the adapter that passes.
    pub min_recall: f64,
    /// Whether the adapter passes the gate.
    pub passed: bool,
    /// Why it fails, in words (empty when it passes).
    pub reasons: Vec<String>,
    /// Every question's answers.
    pub rows: Vec<Row>,
}

impl Report {
    /// The rise in perplexity with the adapter (0.05: 5% worse).
    pub fn perplexity_change(&self) -> f64 {
        self.perplexity_adapter / self.perplexity_base - 1.0
    }
}

/// The gate's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// Largest allowed rise in general perplexity (share).
    pub margin: f64,
    /// Least held-out fact recall with the adapter (share).
    pub min_recall: f64,
}

impl Default for Gate {
    fn default() -> Self {
        Gate { margin: 0.10, min_recall: 0.5 }
    }
}

fn ask(chat: &LocalChat, question: &str, context: Option<&str>) -> Result<String> {
    let mut messages = Vec::new();
    if let Some(c) = context {
        messages.push(Message::new(Role::System, strata_models::DEFAULT_SYSTEM));
        messages.push(Message::new(Role::System, c));
    }
    messages.push(Message::new(Role::User, question));
    let sampling = Sampling { max_tokens: 40, ..Sampling::default() };
    let (over, mut said) = (AtomicBool::new(false), String::new());
    let mut follow = |piece: &str| {
        said.push_str(piece);
        if first_sentence(&said).is_some() {
            over.store(true, Ordering::Relaxed);
        }
    };
    let text = chat.generate(&messages, sampling, &mut follow, &over)?.text;
    Ok(first_sentence(&text).unwrap_or(text.trim()).to_string())
}

/// `text`'s first sentence, once it is whole: up to a full stop, question or exclamation mark
/// that whitespace follows (so "4.5 km" and "v1.2" are not cut), or to the end of the first
/// line that has words.
fn first_sentence(text: &str) -> Option<&str> {
    let start = text.len() - text.trim_start().len();
    let chars: Vec<(usize, char)> = text[start..].char_indices().collect();
    chars.windows(2).find_map(|w| {
        let ((i, c), (_, next)) = (w[0], w[1]);
        let ends = c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_whitespace());
        ends.then(|| text[start..start + i + c.len_utf8()].trim_end())
    })
}

/// The answers to `questions` with `adapter` applied unmerged (removed again after).
/// `on_question(done, total)` follows them.
pub fn answers_with(
    chat: &LocalChat,
    adapter: &Adapter,
    questions: &[&str],
    on_question: &mut dyn FnMut(usize, usize),
) -> Result<Vec<String>> {
    chat.set_adapter(Some(adapter))?;
    let result = (|| {
        let mut out = Vec::with_capacity(questions.len());
        for (i, q) in questions.iter().enumerate() {
            out.push(ask(chat, q, None)?);
            on_question(i + 1, questions.len());
        }
        Ok(out)
    })();
    chat.set_adapter(None)?;
    result
}

/// Whether `answer` gives `expected` (the judgement every report's shares use).
pub fn correct(answer: &str, expected: &str) -> bool {
    normalise(answer).contains(&normalise(expected))
}

/// The perplexity of `text` under the model as it is now, over windows of `window` tokens.
pub fn perplexity(chat: &LocalChat, text: &str, window: usize) -> Result<f64> {
    let ids = chat.text_ids(text)?;
    let (mut sum, mut count) = (0f64, 0usize);
    for chunk in ids.chunks(window.max(2)) {
        if chunk.len() < 2 {
            continue;
        }
        let lp = chat.token_logprobs(chunk)?;
        sum += lp.iter().map(|&x| x as f64).sum::<f64>();
        count += lp.len();
    }
    Ok((-sum / count.max(1) as f64).exp())
}

/// Evaluates `adapter` on the held-out questions, applying it to `chat` unmerged and
/// removing it again. `on_question` is told each question's number as it is done.
pub fn evaluate(
    chat: &LocalChat,
    adapter: &Adapter,
    heldout: &[&Example],
    gate: Gate,
    on_question: &mut dyn FnMut(usize, usize),
) -> Result<Report> {
    let questions: Vec<&Example> = heldout.iter().copied().filter(|e| e.fact.is_some()).collect();
    let mut rows = Vec::with_capacity(questions.len());
    chat.set_adapter(None)?;
    let perplexity_base = perplexity(chat, GENERAL_TEXT, 256)?;
    for (i, e) in questions.iter().enumerate() {
        let f = e.fact.as_ref().map(|f| (f.value.clone(), format!("{}'s {} is {}.", f.subject, f.attribute, f.value)));
        let (expected, statement) = f.unwrap_or_default();
        let without = ask(chat, &e.question, None)?;
        let remembered = strata_core::fence::fence_line(&statement, 400);
        let with_retrieval = ask(chat, &e.question, Some(&format!("What you remember:\n- {remembered}")))?;
        rows.push(Row { question: e.question.clone(), expected, with_adapter: String::new(), without, with_retrieval });
        on_question(i + 1, questions.len() * 2);
    }
    chat.set_adapter(Some(adapter))?;
    let result = (|| -> Result<f64> {
        for (i, (row, e)) in rows.iter_mut().zip(&questions).enumerate() {
            row.with_adapter = ask(chat, &e.question, None)?;
            on_question(questions.len() + i + 1, questions.len() * 2);
        }
        perplexity(chat, GENERAL_TEXT, 256)
    })();
    chat.set_adapter(None)?;
    let perplexity_adapter = result?;
    let n = rows.len().max(1) as f64;
    let share = |f: &dyn Fn(&Row) -> &str| rows.iter().filter(|r| correct(f(r), &r.expected)).count() as f64 / n;
    let recall_with_adapter = share(&|r| &r.with_adapter);
    let mut report = Report {
        facts: questions.iter().filter_map(|e| e.fact.as_ref()).collect::<std::collections::HashSet<_>>().len(),
        questions: rows.len(),
        recall_with_adapter,
        recall_without: share(&|r| &r.without),
        recall_with_retrieval: share(&|r| &r.with_retrieval),
        perplexity_base,
        perplexity_adapter,
        margin: gate.margin,
        min_recall: gate.min_recall,
        passed: false,
        reasons: Vec::new(),
        rows,
    };
    if report.perplexity_change() > gate.margin {
        report.reasons.push(format!(
            "general perplexity rose {:.1}% (allowed {:.0}%)",
            report.perplexity_change() * 100.0,
            gate.margin * 100.0
        ));
    }
    if recall_with_adapter < gate.min_recall {
        report.reasons.push(format!(
            "held-out fact recall is {:.0}% (needs {:.0}%)",
            recall_with_adapter * 100.0,
            gate.min_recall * 100.0
        ));
    }
    if recall_with_adapter <= report.recall_without {
        report.reasons.push("the adapter answers no better than the model without it".into());
    }
    report.passed = report.reasons.is_empty();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn an_answer_is_its_first_sentence_once_it_is_whole() {
        assert_eq!(first_sentence("Maya's dog is called Biscuit. She"), Some("Maya's dog is called Biscuit."));
        assert_eq!(first_sentence("  Is it Porto? Yes"), Some("Is it Porto?"));
        assert_eq!(first_sentence("It is Porto\nand"), Some("It is Porto"));
        // Not yet whole: what follows the stop decides.
        assert_eq!(first_sentence("Maya's dog is called Biscuit."), None);
        assert_eq!(first_sentence("The run is 4.5 km long"), None);
        assert_eq!(first_sentence("Helix v1.2 it is"), None);
        assert_eq!(first_sentence("\n\nPixel"), None, "leading blank lines are not a sentence");
    }
}
