//! One memory-augmented turn: recall for the question, assemble the context within the
//! model's budget, ask the model (streaming), and record the exchange as an episode with the
//! provider and model it came from. A context-too-long answer shrinks the budget and retries
//! once; nothing is recorded unless a whole answer came back.

use std::sync::atomic::AtomicBool;

use serde::Serialize;
use strata_core::{
    ChatErrorKind, ChatModel, ChatRequest, Content, Episode, EpisodeBody, EventMeta, Filter, Message, NewMemory,
    Source, Usage,
};

use crate::context::{ContextParams, ContextView};
use crate::dto::MemoryView;
use crate::engine::Engine;
use crate::error::{ApiError, ApiResult};

/// The system prompt of a memory-augmented turn when the caller gives none.
pub const DEFAULT_SYSTEM: &str = "You are a helpful assistant with a long-term memory. Use the memories when they help; say so when you do not know.";

/// What to ask (the model's name, [`ChatModel::model`], is looked up in the catalogue for its
/// tokenizer and window).
#[derive(Debug, Clone, Default)]
pub struct AskParams {
    /// The question.
    pub question: String,
    /// The system prompt ([`DEFAULT_SYSTEM`] when absent).
    pub system: Option<String>,
    /// The conversation so far.
    pub history: Vec<Message>,
    /// The prompt's budget (when absent, the model's preferred one, else its window capped by
    /// the settings).
    pub budget: Option<usize>,
    /// Which memories may be used.
    pub filter: Filter,
    /// The most tokens to answer with.
    pub max_tokens: Option<u32>,
    /// The session the exchange belongs to.
    pub session_id: Option<String>,
    /// Record the exchange as an episode.
    pub record: bool,
    /// The caller's datasets (by name) the answer may draw on beside memories.
    pub datasets: Vec<String>,
}

/// What the system prompt adds when files may be used.
const CITE_FILES: &str = " Passages from the user's files are labelled with their file and place: when one answers, cite its label, like [3].";

/// A passage of a file that went into a prompt.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FilePassageView {
    /// Its label in the prompt.
    pub label: u32,
    /// The dataset.
    pub dataset: String,
    /// The file it came from.
    pub source: String,
    /// Where in the file ("page 2, lines 3–5").
    pub place: String,
    /// Its text.
    pub text: String,
    /// What it cost.
    pub tokens: u32,
    /// Whether the answer cites it (by its label) or rests on it (the on-device answer's check).
    pub cited: bool,
}

/// A finished turn.
#[derive(Debug, Clone, Serialize)]
pub struct AskView {
    /// The answer.
    pub answer: String,
    /// Who answered.
    pub provider: String,
    /// With which model.
    pub model: String,
    /// Tokens the call used, as the provider counted.
    pub usage: Usage,
    /// Why it stopped.
    pub finish: String,
    /// The context sent: messages and the report (memories injected and why).
    pub context: ContextView,
    /// Whether the first try was too long and the budget was shrunk.
    pub shrunk: bool,
    /// The passages of files in the prompt, in prompt order, with those the answer cites marked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FilePassageView>,
    /// The memory the answer rests on, shown beside it: the one that bears it out
    /// ([`AskView::check`]), else the best-scoring one in the prompt. A small model's sentence alone is often wrong where this memory is right
    /// (docs/benchmarks.md, "Answers from memory").
    pub source: Option<String>,
    /// The exchange as recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<MemoryView>,
    /// The on-device model's answer checked against the memories its prompt quoted (none for
    /// a provider's model). When no memory bears it out, `answer` says so and the model's
    /// sentence is kept in `guess`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<crate::answer_check::AnswerCheck>,
    /// The model's own sentence, when it was not presented as the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
    /// The log-probability of each token of the model's sentence, where the model gives them
    /// (kept for measuring; docs/benchmarks.md, "token probabilities").
    #[serde(skip)]
    pub logprobs: Vec<f32>,
}

impl Engine {
    /// One memory-augmented turn with `model` (see the module's description).
    pub fn ask(
        &mut self,
        params: AskParams,
        model: &dyn ChatModel,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> ApiResult<AskView> {
        self.ask_seeing(params, model, &mut |_, _| {}, on_text, cancel)
    }

    /// [`Engine::ask`], telling `on_prompt` what the prompt holds before the model is called:
    /// a window shows the memories found at once, before the model's first word.
    pub fn ask_seeing(
        &mut self,
        params: AskParams,
        model: &dyn ChatModel,
        on_prompt: &mut dyn FnMut(&Engine, &crate::ContextView),
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> ApiResult<AskView> {
        if params.question.trim().is_empty() {
            return Err(ApiError::invalid("ask needs a question"));
        }
        let system = match &params.system {
            Some(s) => s.clone(),
            None if params.datasets.is_empty() => DEFAULT_SYSTEM.to_string(),
            None => format!("{DEFAULT_SYSTEM}{CITE_FILES}"),
        };
        let context_params = |budget: Option<usize>| ContextParams {
            model: model.model().to_string(),
            message: params.question.clone(),
            system: Some(system.clone()),
            datasets: params.datasets.clone(),
            history: params.history.clone(),
            history_summary: None,
            budget,
            filter: params.filter.clone(),
            placement: model.memories_before_message().then_some(strata_context::Placement::BeforeLastUser),
            concepts: None,
            without_past_answers: model.provider() == "on-device",
        };
        let cap = self.options().context.budget_cap;
        let budget = params.budget.or_else(|| model.prompt_budget().map(|b| cap.map_or(b, |c| c.min(b))));
        let mut context = self.build_context_with(context_params(budget), Some(model))?;
        on_prompt(self, &context);
        let mut shrunk = false;
        let response = loop {
            let request = ChatRequest {
                messages: context.messages.clone(),
                max_tokens: params.max_tokens,
                question: Some(params.question.clone()),
                ..Default::default()
            };
            match model.chat(&request, on_text, cancel) {
                Ok(r) => break r,
                Err(e) if e.kind == ChatErrorKind::ContextTooLong && !shrunk => {
                    // Our count and the provider's disagree: try once with three quarters.
                    shrunk = true;
                    let smaller = (context.report.used * 3 / 4).max(1);
                    context = self.build_context_with(context_params(Some(smaller)), Some(model))?;
                }
                Err(e) => return Err(e.into()),
            }
        };
        let check = (model.provider() == "on-device" && response.finish != "cancelled")
            .then(|| crate::answer_check::check(&response.content, &params.question, &quoted(&context)));
        let (answer, guess) = match &check {
            Some(c) if !c.borne_out => {
                let withheld = if params.datasets.is_empty() {
                    crate::answer_check::WITHHELD
                } else {
                    crate::answer_check::WITHHELD_WITH_FILES
                };
                (withheld.to_string(), Some(response.content.clone()))
            }
            _ => (response.content.clone(), None),
        };
        // The on-device model names the trained adapter it chose for this question.
        let answered_by = match &response.adapter {
            Some(a) => format!("{}+{}", model.model(), a.id),
            None => model.model().to_string(),
        };
        let recorded = if params.record && response.finish != "cancelled" && !answer.trim().is_empty() {
            let drew_on: Vec<strata_core::MemoryId> = context.report.included.iter().map(|d| d.id).collect();
            let by = (model.provider(), answered_by.as_str());
            self.record_exchange(&params.question, &answer, by, params.session_id.clone(), &drew_on)?
        } else {
            None
        };
        if let Some(a) = response.adapter.as_ref().filter(|_| response.finish != "cancelled") {
            let answer_id = recorded.as_ref().map(|r| r.id.clone());
            if let Err(e) = self.record_adapter_answer(&a.id, a.score, answer_id.as_deref()) {
                tracing::warn!("adapter {}'s answer was not counted: {e}", a.id);
            }
        }
        if response.finish != "cancelled" {
            self.record_answer(&context, &params.question, &answer, recorded.as_ref().and_then(|r| r.id.parse().ok()));
        }
        // The memory that bears the answer out, else the best-scoring one of the prompt that a
        // person said (a model's earlier answer is never "the closest memory").
        let best = context
            .report
            .included
            .iter()
            .filter(|d| self.store_view().get(d.id).is_ok_and(|m| !strata_core::said_by_assistant(&m)))
            .max_by(|a, b| a.score.total_cmp(&b.score));
        let rests_on = check.as_ref().and_then(|c| c.memory.clone());
        let files = file_passages(&context, &response.content, rests_on.as_deref());
        // A passage that bears the answer out is among `files`; `source` names a memory.
        let is_passage =
            |id: &String| context.report.passages.iter().any(|p| p.label.map(label_tag).as_ref() == Some(id));
        let source = rests_on.filter(|id| !is_passage(id)).or_else(|| best.map(|d| d.id.to_string()));
        Ok(AskView {
            files,
            source,
            check,
            guess,
            answer,
            provider: model.provider().to_string(),
            model: answered_by,
            usage: response.usage,
            logprobs: response.logprobs,
            finish: response.finish,
            context,
            shrunk,
            recorded,
        })
    }

    /// Records a question and its answer as one episode (one transaction), with the provider
    /// and model (`by`) as its source — unless a memory of `drew_on` (the ones its prompt quoted) was
    /// forgotten while the model answered: the answer may repeat it, and forgetting wins, so
    /// nothing is recorded (`None`).
    pub fn record_exchange(
        &mut self,
        question: &str,
        answer: &str,
        by: (&str, &str),
        session_id: Option<String>,
        drew_on: &[strata_core::MemoryId],
    ) -> ApiResult<Option<MemoryView>> {
        let now = self.store().clock().now();
        let content = Content::Episodic(Episode {
            occurred_at: now,
            body: EpisodeBody::Exchange { query: question.to_string(), response: answer.to_string() },
            concepts: vec![],
            extra: Default::default(),
        });
        let source = Source {
            app: self.options().client.clone(),
            provider: Some(by.0.to_string()),
            model: Some(by.1.to_string()),
        };
        let new = NewMemory { scope: self.scope(session_id), source, ..Default::default() };
        let meta = EventMeta { session_id: new.scope.session_id.clone(), ..self.meta() };
        let created = self.store().transact(|tx| match tx.still_live(drew_on) {
            Err(strata_core::Error::Forgotten { .. }) => Ok(None),
            other => {
                other?;
                tx.create(content, new, &meta).map(Some)
            }
        })?;
        if created.is_none() {
            tracing::info!("an answer was not recorded: a memory it drew on was forgotten while it was made");
        }
        self.wrote();
        Ok(created.map(MemoryView::from))
    }
}

/// A chat turn as a window shows it: the answer, the memories that went into the prompt (with
/// their titles) and how the token budget was spent.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ChatTurnView {
    /// The answer.
    pub answer: String,
    /// Who answered.
    pub provider: String,
    /// With which model.
    pub model: String,
    /// Why it stopped (`stop`, `length`, `cancelled`).
    pub finish: String,
    /// The memories in the prompt, in prompt order.
    pub injected: Vec<InjectedView>,
    /// Tokens per part of the prompt (`system`, `facts`, `procedures`, `episodes`, `history`,
    /// `message`).
    pub sections: Vec<(String, u32)>,
    /// The prompt's budget.
    pub budget: u32,
    /// Tokens used.
    pub used: u32,
    /// The tokenizer that counted (and whether exactly).
    pub tokenizer: String,
    /// The exchange as recorded, if it was.
    pub recorded_id: Option<String>,
    /// The memory closest to the question ([`AskView::source`]), shown with the answer.
    pub source: Option<InjectedView>,
    /// The on-device model's own sentence when no memory bore it out (`answer` then says so).
    pub guess: Option<String>,
    /// The passages of files in the prompt, those the answer cites marked.
    pub files: Vec<FilePassageView>,
}

/// A memory that went into a prompt.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct InjectedView {
    /// Its id.
    pub id: String,
    /// Its one-line title.
    pub title: String,
    /// The memory itself (for a window to word and open it); absent if it was forgotten
    /// since.
    pub memory: Option<MemoryView>,
    /// Its part of the prompt.
    pub section: String,
    /// Its relevance.
    pub score: f64,
    /// What it cost.
    pub tokens: u32,
}

impl Engine {
    /// [`Engine::ask`], summarized for a window: titles of the injected memories looked up,
    /// and told to `on_found` as soon as they are (before the model's first word).
    pub fn chat_turn(
        &mut self,
        params: AskParams,
        model: &dyn ChatModel,
        on_found: &mut dyn FnMut(Vec<InjectedView>),
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> ApiResult<ChatTurnView> {
        let mut seen = |e: &Engine, c: &crate::ContextView| on_found(e.injected(&c.report));
        let view = self.ask_seeing(params, model, &mut seen, on_text, cancel)?;
        let report = &view.context.report;
        let injected = self.injected(report);
        let sections = report
            .sections
            .iter()
            .map(|(s, r)| (section_name(*s), u32::try_from(r.tokens).unwrap_or(u32::MAX)))
            .collect();
        let source = view.source.as_ref().and_then(|id| injected.iter().find(|i| &i.id == id)).cloned();
        Ok(ChatTurnView {
            source,
            files: view.files,
            guess: view.guess,
            answer: view.answer,
            provider: view.provider,
            model: view.model,
            finish: view.finish,
            injected,
            sections,
            budget: u32::try_from(report.budget).unwrap_or(u32::MAX),
            used: u32::try_from(report.used).unwrap_or(u32::MAX),
            tokenizer: format!("{}{}", report.tokenizer, if report.exact { "" } else { " (approximate)" }),
            recorded_id: view.recorded.map(|m| m.id),
        })
    }
}

/// One side of [`ComparedView`]: a prompt's memories.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PromptView {
    /// The memory block as the model reads it.
    pub memories: String,
    /// The memories in it, in prompt order.
    pub injected: Vec<InjectedView>,
    /// The concepts in it and what each stood for.
    pub concepts: Vec<ConceptUseView>,
    /// Tokens used.
    pub used: u32,
    /// The budget.
    pub budget: u32,
}

/// A concept in a prompt, standing for members left out.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConceptUseView {
    /// The concept's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it cost.
    pub tokens: u32,
    /// Members left out for it.
    pub covered: u32,
    /// What they would have cost.
    pub covered_tokens: u32,
    /// `covered_tokens - tokens`.
    pub saved: i32,
}

/// The same question's prompt from the memories as they are and with concepts standing for
/// their members (the compare view).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ComparedView {
    /// Memories as they are.
    pub raw: PromptView,
    /// With concepts.
    pub compacted: PromptView,
}

impl Engine {
    /// The memories of `report`, in prompt order, with their titles looked up.
    fn injected(&self, report: &strata_context::Report) -> Vec<InjectedView> {
        let mut injected = Vec::new();
        for d in &report.included {
            let memory = self.store_view().get(d.id).ok();
            let title = memory.as_ref().map_or_else(|| d.id.to_string(), |m| crate::dto::content_title(&m.content));
            injected.push(InjectedView {
                id: d.id.to_string(),
                title,
                memory: memory.map(Into::into),
                section: section_name(d.section),
                score: d.score,
                tokens: u32::try_from(d.tokens).unwrap_or(u32::MAX),
            });
        }
        injected
    }

    /// The prompt `params` builds without concepts and with them, side by side.
    pub fn compare_contexts(&mut self, params: ContextParams) -> ApiResult<ComparedView> {
        let raw = self.build_context(ContextParams { concepts: Some(false), ..params.clone() })?;
        let compacted = self.build_context(ContextParams { concepts: Some(true), ..params })?;
        Ok(ComparedView { raw: self.prompt_view(&raw), compacted: self.prompt_view(&compacted) })
    }

    fn prompt_view(&self, c: &crate::ContextView) -> PromptView {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let injected = self.injected(&c.report);
        let concepts = c
            .report
            .concepts
            .iter()
            .map(|u| ConceptUseView {
                id: u.id.to_string(),
                name: self
                    .store_view()
                    .get(u.id)
                    .ok()
                    .and_then(|m| strata_core::concepts::ConceptBody::read(&m).map(|b| b.name))
                    .unwrap_or_else(|| u.id.to_string()),
                tokens: clamp(u.tokens),
                covered: clamp(u.covered.len()),
                covered_tokens: clamp(u.covered_tokens),
                saved: i32::try_from(u.saved).unwrap_or(i32::MAX),
            })
            .collect();
        PromptView {
            memories: c.messages.iter().find_map(|m| memory_block(&m.content)).unwrap_or_default().to_string(),
            injected,
            concepts,
            used: clamp(c.report.used),
            budget: clamp(c.report.budget),
        }
    }
}

/// The memories the prompt quoted, each as it read there (`[n] …` and its continuation
/// lines), by id.
fn quoted(context: &crate::ContextView) -> Vec<(String, String)> {
    let Some(block) = context.messages.iter().find_map(|m| memory_block(&m.content)) else { return Vec::new() };
    let mut items: Vec<(usize, String)> = Vec::new();
    for line in block.lines() {
        let label = line.strip_prefix('[').and_then(|l| l.split_once(']'));
        match (label.and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest))), items.last_mut()) {
            (Some((n, rest)), _) => items.push((n, rest.to_string())),
            (None, Some((_, text))) => {
                text.push('\n');
                text.push_str(line);
            }
            (None, None) => {}
        }
    }
    // A memory by its id; a passage of a file (it has none) by its label, `[n]`.
    let id_of = |n: usize| context.report.included.iter().find(|d| d.label == Some(n)).map(|d| d.id.to_string());
    // What an assistant once answered bears nothing out: it may be wrong (strata-context's
    // `render::exchange` words it so), and repeating it is being misled.
    let said_by_people = |text: String| match text.find("the assistant answered (it may be wrong)") {
        Some(at) => text[..at].to_string(),
        None if text.contains("the assistant said (it may be wrong)") => String::new(),
        None => text,
    };
    items.into_iter().map(|(n, text)| (id_of(n).unwrap_or_else(|| label_tag(n)), said_by_people(text))).collect()
}

/// The passages of files in `context`'s prompt, in prompt order; those `answer` cites by label
/// (`[3]`), or the one the on-device answer's check found bearing it out (`rests_on`, `[n]`),
/// are marked cited.
fn file_passages(context: &crate::ContextView, answer: &str, rests_on: Option<&str>) -> Vec<FilePassageView> {
    let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    context
        .report
        .passages
        .iter()
        .filter_map(|p| {
            let label = p.label?;
            let tag = label_tag(label);
            Some(FilePassageView {
                label: clamp(label),
                dataset: p.dataset.clone(),
                source: p.source.clone(),
                place: p.place.clone(),
                text: p.text.clone(),
                tokens: clamp(p.tokens),
                cited: answer.contains(&tag) || rests_on == Some(tag.as_str()),
            })
        })
        .collect()
}

/// How a prompt's item is cited: `[3]`.
fn label_tag(label: usize) -> String {
    format!("[{label}]")
}

/// The memory block of a message: what lies between `<memories>` and `</memories>`.
fn memory_block(content: &str) -> Option<&str> {
    let start = content.find("<memories>")? + "<memories>".len();
    let end = content[start..].find("</memories>").map_or(content.len(), |e| start + e);
    Some(content[start..end].trim_matches('\n'))
}

/// A prompt section's name as it serializes (`facts`, `episodes`…).
fn section_name(s: strata_context::Section) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}
