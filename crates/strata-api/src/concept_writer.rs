//! Concept summaries written by a chat model (issue 38), in place of the extractive ones a
//! grouping pass writes. The model reads a concept's members as notes, as a prompt shows
//! memories (an episode with its date), and writes three short sentences. Each sentence is
//! attributed to the notes it draws on — those sharing at least two words of substance with
//! it, the three that share most ([`attribute`]; a 0.5B model asked to cite notes itself
//! copied them out instead of summarizing) — and checked against them: one that draws on no
//! note, or holds a name, number or date none of its notes holds
//! ([`crate::answer_check::claims_anywhere`]), is dropped. A concept none of whose sentences
//! survives keeps its extractive summary. Each concept is written in a transaction of its own,
//! and only if no grouping pass changed it meanwhile, so stopping loses at most the one being
//! written; a later grouping pass that changes a concept's members writes an extractive summary
//! again, which the next writing pass replaces.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;
use strata_core::chat::{ChatModel, ChatRequest, Message};
use strata_core::concepts::{ConceptBody, Sentence, members, substance};
use strata_core::event::{Actor, EventMeta, Expected};
use strata_core::interchange::Tick;
use strata_core::{Memory, MemoryId};
use strata_tokens::{Encoding, OpenAiTokens, TokenManager};

use crate::answer_check::{claims_anywhere, held};
use crate::{ApiError, ApiResult, Engine, ErrorCode};

/// The most tokens (cl100k_base) of notes one summary is written from: the members in the
/// order they happened, until this is spent.
pub const NOTES_TOKENS: usize = 900;
/// A note longer than this many words is cut (a summary needs its gist, not all of it).
const NOTE_WORDS: usize = 60;
/// A sentence of fewer words says nothing worth a summary's room.
const MIN_WORDS: usize = 3;
/// A sentence draws on a note that shares at least this many words of substance with it.
const SHARED_WORDS: usize = 2;
/// It draws on at most this many notes (those sharing most).
const MOST_NOTES: usize = 3;

/// How a writing pass runs.
#[derive(Debug, Clone)]
pub struct WriteParams {
    /// The most tokens the model may write for one summary.
    pub summary_tokens: usize,
    /// Write only this many concepts (the largest first); `None`: every one.
    pub limit: Option<usize>,
}

impl Default for WriteParams {
    fn default() -> Self {
        WriteParams { summary_tokens: crate::compact::SUMMARY_TOKENS, limit: None }
    }
}

/// What a writing pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WriteReport {
    /// The model that wrote.
    pub model: String,
    /// Concepts whose summary it wrote.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub written: usize,
    /// Concepts it had written already (left alone).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub already: usize,
    /// Concepts none of whose sentences held up (they keep the extractive summary).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub kept_extractive: usize,
    /// Concepts a grouping pass changed while this one wrote (left for the next pass).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub changed_meanwhile: usize,
    /// Sentences kept, in all.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub sentences_kept: usize,
    /// Sentences dropped by the check, in all.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub sentences_dropped: usize,
    /// Seconds the pass took.
    pub seconds: f64,
}

/// A sentence the model wrote and the notes it draws on (1-based, in the prompt's order).
#[derive(Debug, Clone, PartialEq)]
pub struct Cited {
    /// The sentence, citations taken out.
    pub text: String,
    /// The notes it draws on.
    pub notes: Vec<usize>,
}

impl Engine {
    /// Writes the caller's concept summaries with `model` (see the module's text). Reports
    /// progress per concept through `tick`; `cancel` stops it between concepts (the ones
    /// written stay written).
    pub fn write_summaries(
        &mut self,
        model: &dyn ChatModel,
        params: &WriteParams,
        tick: Tick<'_>,
        cancel: &AtomicBool,
    ) -> ApiResult<WriteReport> {
        let started = Instant::now();
        let mut concepts = self.live_concepts()?;
        concepts.sort_by_key(|c| std::cmp::Reverse(members(c).len()));
        concepts.truncate(params.limit.unwrap_or(usize::MAX));
        let mut report = WriteReport { model: model.model().to_string(), ..WriteReport::default() };
        let total = concepts.len() as u64;
        for (done, concept) in concepts.iter().enumerate() {
            tick(done as u64, total)?;
            if cancel.load(Ordering::Relaxed) {
                return Err(ApiError::new(
                    ErrorCode::Cancelled,
                    format!("writing summaries was stopped; {} written stay written", report.written),
                ));
            }
            let Some(body) = ConceptBody::read(concept) else { continue };
            if body.written_by.as_deref() == Some(model.model()) {
                report.already += 1;
                continue;
            }
            let (ids, notes) = self.notes(concept)?;
            let request = ChatRequest {
                messages: vec![Message::system(SYSTEM), Message::user(ask(&notes))],
                max_tokens: Some(u32::try_from(params.summary_tokens).unwrap_or(u32::MAX)),
                temperature: Some(0.0),
                ..ChatRequest::default()
            };
            let reply = model.chat(&request, &mut |_| {}, cancel)?;
            let sentences: Vec<Cited> = sentences(&reply.content)
                .into_iter()
                .map(|text| Cited { notes: attribute(&text, &notes), text })
                .collect();
            let (kept, dropped) = checked(&sentences, &notes);
            tracing::debug!(concept = %concept.id, kept = kept.len(), dropped, reply = %reply.content, "a summary written");
            report.sentences_dropped += dropped;
            if kept.is_empty() {
                report.kept_extractive += 1;
                continue;
            }
            report.sentences_kept += kept.len();
            let summary = kept.iter().map(|c| sentence(c, &ids)).collect();
            let written = ConceptBody { summary, written_by: Some(model.model().to_string()), ..body };
            if self.write_summary(concept, &written)? {
                report.written += 1;
            } else {
                report.changed_meanwhile += 1;
            }
        }
        tick(total, total)?;
        report.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        Ok(report)
    }

    /// A concept's members as notes, as a prompt shows memories (an episode with its date), in
    /// the order they happened, within [`NOTES_TOKENS`]: their ids and texts.
    fn notes(&self, concept: &Memory) -> ApiResult<(Vec<MemoryId>, Vec<String>)> {
        let mut read: Vec<Memory> = Vec::new();
        for id in members(concept) {
            match self.store_view().get(id) {
                Ok(m) => read.push(m),
                Err(strata_core::Error::NotFound(_) | strata_core::Error::Forgotten { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        read.sort_by_key(|m| (m.occurred_at(), m.id));
        let tokens = OpenAiTokens::new(Encoding::Cl100kBase);
        let (mut ids, mut notes, mut used) = (Vec::new(), Vec::new(), 0);
        for m in &read {
            let body = strata_context::body_for(m, "");
            let words: Vec<&str> = body.split_whitespace().collect();
            let body = if words.len() > NOTE_WORDS { format!("{} …", words[..NOTE_WORDS].join(" ")) } else { body };
            let note = strata_context::dated(m, &body);
            used += tokens.count(&note)?;
            if used > NOTES_TOKENS && !ids.is_empty() {
                break;
            }
            ids.push(m.id);
            notes.push(note);
        }
        Ok((ids, notes))
    }

    /// Writes `body` as `concept`'s new content if no one changed the concept since it was
    /// read; false when someone did.
    fn write_summary(&mut self, concept: &Memory, body: &ConceptBody) -> ApiResult<bool> {
        let meta = EventMeta { actor: Actor::App, client: Some(crate::compact::COMPACTION.into()), ..self.meta() };
        let key = concept.content.key().unwrap_or_default().to_string();
        let wrote = self.store().transact(|tx| {
            if tx.changed_since(concept.id, concept.version)? {
                return Ok(false);
            }
            tx.update_content(concept.id, body.content(&key), Expected::Exact(concept.version), &meta)?;
            Ok(true)
        })?;
        if wrote {
            self.wrote();
        }
        Ok(wrote)
    }
}

const SYSTEM: &str = "You are a helpful assistant.";

/// The request: the notes, then what to write.
fn ask(notes: &[String]) -> String {
    format!("Notes:\n{}\nSummarize these notes in three short sentences.", notes.concat())
}

/// The notes `sentence` draws on (1-based): those sharing at least [`SHARED_WORDS`] words of
/// substance with it, the [`MOST_NOTES`] sharing most, in the notes' order.
pub fn attribute(sentence: &str, notes: &[String]) -> Vec<usize> {
    let wanted: HashSet<String> = substance(sentence).collect();
    let mut shared: Vec<(usize, usize)> = notes
        .iter()
        .enumerate()
        .map(|(i, n)| (substance(n).collect::<HashSet<String>>().intersection(&wanted).count(), i + 1))
        .filter(|(k, _)| *k >= SHARED_WORDS)
        .collect();
    shared.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut most: Vec<usize> = shared.into_iter().take(MOST_NOTES).map(|(_, n)| n).collect();
    most.sort_unstable();
    most
}

/// The reply's sentences: list markers at the start of a line dropped, and any note numbers
/// the model added anyway (`[2]`) taken out (Strata attributes sentences itself).
pub fn sentences(reply: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut finish = |current: &mut String| {
        let text = current.split_whitespace().collect::<Vec<_>>().join(" ").replace(" .", ".").replace(" ,", ",");
        if !text.is_empty() {
            out.push(text);
        }
        current.clear();
    };
    for line in reply.lines() {
        let line = line.trim_start().trim_start_matches(['-', '*', '•']).trim_start();
        let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let mut rest = if digits > 0 && line[digits..].starts_with(['.', ')']) { &line[digits + 1..] } else { line };
        while let Some(c) = rest.chars().next() {
            let numbers = |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || ", ".contains(c));
            if let Some((_, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')).filter(|(n, _)| numbers(n))
            {
                rest = after;
                continue;
            }
            current.push(c);
            rest = &rest[c.len_utf8()..];
            if matches!(c, '.' | '!' | '?') && rest.chars().next().is_none_or(|n| n.is_whitespace() || n == '[') {
                finish(&mut current);
            }
        }
        current.push(' ');
    }
    finish(&mut current);
    out
}

/// The sentences that hold up against `notes`, and how many were dropped: each draws on at
/// least one note that is there, says something (three words or more), and every name, number
/// and date in it stands in one of the notes it draws on.
pub fn checked(sentences: &[Cited], notes: &[String]) -> (Vec<Cited>, usize) {
    let mut kept: Vec<Cited> = Vec::new();
    for s in sentences {
        let cites_real = !s.notes.is_empty() && s.notes.iter().all(|&n| (1..=notes.len()).contains(&n));
        let says = s.text.split_whitespace().count() >= MIN_WORDS;
        let holds = cites_real && {
            let words: HashSet<String> = s.notes.iter().flat_map(|&n| held(&notes[n - 1])).collect();
            claims_anywhere(&s.text).iter().all(|c| words.contains(c))
        };
        if cites_real && says && holds && !kept.iter().any(|k| k.text == s.text) {
            kept.push(s.clone());
        }
    }
    let dropped = sentences.len() - kept.len();
    (kept, dropped)
}

/// A kept sentence as a concept stores it: from its first note's member, citing the others.
fn sentence(c: &Cited, ids: &[MemoryId]) -> Sentence {
    let mut cited: Vec<MemoryId> = c.notes.iter().map(|&n| ids[n - 1]).collect();
    let from = cited.remove(0);
    Sentence { from, text: c.text.clone(), also: cited }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes() -> Vec<String> {
        vec![
            "(8 May 2023) Caroline: I went to the LGBTQ support group yesterday.\n".into(),
            "(20 May 2023) Caroline: I'm saving up to adopt a child; the agency is in Boston.\n".into(),
            "(25 May 2023) Melanie: we painted a sunrise at the lake last week.\n".into(),
        ]
    }

    #[test]
    fn a_reply_reads_as_sentences_without_list_marks_or_note_numbers() {
        let reply = "- Caroline went to a support group [1].\n- She plans to adopt a child. [2]\n\
                     3. Melanie painted a sunrise [3, 1]. Done";
        assert_eq!(
            sentences(reply),
            ["Caroline went to a support group.", "She plans to adopt a child.", "Melanie painted a sunrise.", "Done"]
        );
        assert_eq!(sentences("A note [x] stays text."), ["A note [x] stays text."]);
    }

    #[test]
    fn a_sentence_stands_only_on_the_notes_it_draws_on() {
        let reply = "Caroline went to an LGBTQ support group in May 2023. \
                     Caroline is saving to adopt a child through an agency in Boston. \
                     Caroline adopted a child in Chicago in June. \
                     Melanie painted a sunrise in Boston at the lake. \
                     Melanie painted a sunrise at the lake. \
                     Everyone was happy. \
                     Melanie painted a sunrise at the lake.";
        let notes = notes();
        let sentences: Vec<Cited> =
            sentences(reply).into_iter().map(|text| Cited { notes: attribute(&text, &notes), text }).collect();
        assert_eq!(sentences[2].notes, vec![2], "Caroline and child: the adoption note");
        assert_eq!(sentences[3].notes, vec![3], "Boston alone is one word shared with note 2");
        let (kept, dropped) = checked(&sentences, &notes);
        let texts: Vec<&str> = kept.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Caroline went to an LGBTQ support group in May 2023.",
                "Caroline is saving to adopt a child through an agency in Boston.",
                "Melanie painted a sunrise at the lake."
            ]
        );
        // Chicago and June are in no note; Boston is not in the sunrise note; one draws on no
        // note; one repeats a kept sentence.
        assert_eq!(dropped, 4);
        let ids = [MemoryId::from_parts(1, 0), MemoryId::from_parts(2, 0), MemoryId::from_parts(3, 0)];
        let s = sentence(&Cited { text: "x y z".into(), notes: vec![3, 1] }, &ids);
        assert_eq!((s.from, s.also), (ids[2], vec![ids[0]]));
    }
}
