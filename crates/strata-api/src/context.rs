//! Building a model's context from memory: the model's tokenizer and window from the catalogue,
//! candidates from recall, and the assembler's messages and report.

use std::path::PathBuf;

use serde::Serialize;
use strata_context::{Candidate, ContextOptions, ContextRequest, Report, assemble_with};
use strata_core::{Filter, Message};
use strata_tokens::{Catalogue, TokenManager};

use crate::engine::Engine;
use crate::error::{ApiError, ApiResult};

/// How the engine builds contexts.
#[derive(Debug, Clone)]
pub struct ContextSettings {
    /// The user's model catalogue file, read before Strata's own.
    pub catalogue: Option<PathBuf>,
    /// Where local tokenizers (`hf:<folder>` in the catalogue) are found.
    pub models_dir: Option<PathBuf>,
    /// The user's cap on any budget (a model's window can be far larger than a user wants to
    /// pay for).
    pub budget_cap: Option<usize>,
    /// How many memories recall offers the assembler.
    pub candidates: usize,
    /// Shares, placement, framing, duplicates, order.
    pub options: ContextOptions,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            catalogue: None,
            models_dir: None,
            budget_cap: None,
            candidates: crate::locomo::BUDGET_CANDIDATES,
            options: ContextOptions::default(),
        }
    }
}

/// What to build a context for.
#[derive(Debug, Clone, Default)]
pub struct ContextParams {
    /// The model it is for (a catalogue name).
    pub model: String,
    /// The user's new message (also what memories are recalled for).
    pub message: String,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    pub history: Vec<Message>,
    /// A summary of the conversation's earlier turns.
    pub history_summary: Option<String>,
    /// The budget; by default the model's window less its reserved answer, capped by the
    /// settings. A larger budget than the model allows is lowered to what it allows.
    pub budget: Option<usize>,
    /// Which memories may be used (kept inside the caller's scope).
    pub filter: Filter,
}

/// A built context.
#[derive(Debug, Clone, Serialize)]
pub struct ContextView {
    /// The model it is for.
    pub model: String,
    /// Anything assumed on the way (an unknown model, a lowered budget).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The messages to send.
    pub messages: Vec<Message>,
    /// What is in them and why.
    pub report: Report,
}

/// The catalogue, with the user's file first when there is one.
pub fn catalogue(settings: &ContextSettings) -> ApiResult<Catalogue> {
    match &settings.catalogue {
        Some(file) if file.exists() => Ok(Catalogue::with_user_file(file)?),
        _ => Ok(Catalogue::builtin()),
    }
}

/// The tokenizer for `model`, what the catalogue says of it, and a note when it guessed.
pub fn tokenizer(
    settings: &ContextSettings,
    model: &str,
) -> ApiResult<(Box<dyn TokenManager>, strata_tokens::ModelInfo, Option<String>)> {
    let found = catalogue(settings)?.lookup(model);
    let dir = settings.models_dir.clone().unwrap_or_default();
    let tokens = strata_tokens::for_model(&found.info, &dir)?;
    Ok((tokens, found.info, found.unknown))
}

impl Engine {
    /// The context for `params.model`: the memories recall finds for the message, and the
    /// conversation, assembled within the budget, with the report.
    pub fn build_context(&mut self, params: ContextParams) -> ApiResult<ContextView> {
        self.build_context_with(params, None)
    }

    /// [`Engine::build_context`], the finished prompt also counted by `exact` (the provider's
    /// own count, for models whose tokenizer Strata can only estimate).
    pub fn build_context_with(
        &mut self,
        params: ContextParams,
        exact: Option<&dyn strata_context::PromptCounter>,
    ) -> ApiResult<ContextView> {
        let settings = self.options().context.clone();
        let (tokens, info, unknown) = tokenizer(&settings, &params.model)?;
        let mut notes: Vec<String> = unknown.into_iter().collect();
        let allowed = (info.context_window - info.max_output) as usize;
        let default = settings.budget_cap.map_or(allowed, |cap| cap.min(allowed));
        let budget = match params.budget {
            Some(b) if b > allowed => {
                notes.push(format!(
                    "{} reads at most {allowed} tokens besides its {}-token answer: the budget is {allowed}",
                    params.model, info.max_output
                ));
                allowed
            }
            Some(0) => return Err(ApiError::invalid("a budget must be at least one token")),
            Some(b) => b,
            None => default,
        };
        if params.message.trim().is_empty() {
            return Err(ApiError::invalid("a context needs the user's message"));
        }
        let candidates = self
            .recall_scored(&params.message, params.filter, settings.candidates)?
            .into_iter()
            .map(|r| Candidate { score: r.breakdown.score, why: Some(r.breakdown), memory: r.memory })
            .collect();
        let req = ContextRequest {
            system: params.system,
            history: params.history,
            history_summary: params.history_summary,
            message: params.message,
            candidates,
            budget,
        };
        let assembled = assemble_with(tokens.as_ref(), req, &settings.options, exact)?;
        Ok(ContextView { model: params.model, notes, messages: assembled.messages, report: assembled.report })
    }
}
