//! Building a model's context from memory: the model's tokenizer and window from the catalogue,
//! candidates from recall, and the assembler's messages and report.

use std::path::PathBuf;

use serde::Serialize;
use std::sync::Arc;

use strata_context::{Candidate, ContextOptions, ContextRequest, Placement, Report, assemble_with};
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
    /// The person's token counters (plugins), read before the catalogue's tokenizer.
    pub token_plugins: Vec<crate::plugins::PersonPlugin>,
}

impl ContextSettings {
    /// The user's settings: their catalogue (`STRATA_CATALOGUE`, else `models.toml` in their
    /// config folder), the models folder the setup step fills, and their cap on any prompt
    /// (`STRATA_BUDGET_CAP`: a model's window can be far larger than they want to pay for).
    pub fn for_user() -> ContextSettings {
        let catalogue = std::env::var_os("STRATA_CATALOGUE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| directories::ProjectDirs::from("", "", "strata").map(|d| d.config_dir().join("models.toml")));
        let budget_cap = std::env::var("STRATA_BUDGET_CAP").ok().and_then(|v| v.trim().parse().ok()).filter(|v| *v > 0);
        // A damaged settings file is said where it is read for settings; here it adds no counter.
        let token_plugins = crate::Settings::load()
            .map(|s| s.plugins.into_iter().filter(|p| p.kind() == crate::plugins::PluginKind::TokenManager).collect())
            .unwrap_or_default();
        ContextSettings {
            catalogue,
            models_dir: Some(strata_tokens::models_dir()),
            budget_cap,
            token_plugins,
            ..Default::default()
        }
    }
}

/// How many passages of the chosen datasets search offers the assembler beside memories.
pub const PASSAGES: usize = 24;

/// How many memories recall offers the assembler: enough to fill a 2,000-token prompt of
/// conversation turns (LoCoMo's, measured in docs/benchmarks.md), few enough to rank quickly.
pub const CANDIDATES: usize = 150;

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            catalogue: None,
            models_dir: None,
            budget_cap: None,
            candidates: CANDIDATES,
            options: ContextOptions::default(),
            token_plugins: Vec::new(),
        }
    }
}

/// Whether `m` holds what an assistant answered (an exchange with a response).
fn is_past_answer(m: &strata_core::Memory) -> bool {
    use strata_core::{Content, Episode, EpisodeBody};
    matches!(&m.content, Content::Episodic(Episode { body: EpisodeBody::Exchange { response, .. }, .. }) if !response.trim().is_empty())
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
    /// Where the memories go, instead of the settings' placement.
    pub placement: Option<Placement>,
    /// Whether concepts may stand for their members, instead of the settings' choice
    /// ([`strata_context::ContextOptions::concepts`]).
    pub concepts: Option<bool>,
    /// Leave out what an assistant answered before (the exchanges' answers; what the user said
    /// stays): a small on-device model copies the prompt's last lines, and an assistant's
    /// past answer may be wrong (docs/benchmarks.md, "Answers from memory", issue 38).
    pub without_past_answers: bool,
    /// The caller's datasets (by name) whose passages and rows may go in beside memories,
    /// searched for the message; none by default.
    pub datasets: Vec<String>,
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
    /// The usage record of the recall behind it (analytics), when one was kept.
    #[serde(skip)]
    pub record: Option<i64>,
}

/// The catalogue, with the user's file first when there is one.
pub fn catalogue(settings: &ContextSettings) -> ApiResult<Catalogue> {
    match &settings.catalogue {
        Some(file) if file.exists() => Ok(Catalogue::with_user_file(file)?),
        _ => Ok(Catalogue::builtin()),
    }
}

/// A model as the catalogue describes it, with its tokenizer loaded.
pub struct ModelTokens {
    /// Its tokenizer.
    pub tokens: Box<dyn TokenManager>,
    /// What the catalogue says of it.
    pub info: strata_tokens::ModelInfo,
    /// Set when the model is not in the catalogue: what was assumed.
    pub unknown: Option<String>,
}

impl std::fmt::Debug for ModelTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTokens").field("tokenizer", &self.tokens.name()).field("info", &self.info).finish()
    }
}

/// The tokenizer for `model` and what the catalogue says of it (read from disk each call:
/// engines keep theirs, [`Engine::model_tokens`]).
pub fn tokenizer(settings: &ContextSettings, model: &str) -> ApiResult<ModelTokens> {
    let mut found = catalogue(settings)?.lookup(model);
    let dir = settings.models_dir.clone().unwrap_or_default();
    // The person's token counter for this model, if they added one, before the catalogue's.
    if let Some(p) = settings.token_plugins.iter().find(|p| p.counts_for(model)) {
        let file = p.file.as_deref().unwrap_or_default();
        let tokens = strata_tokens::from_file(&p.name, std::path::Path::new(file))?;
        found.info.tokenizer = format!("plugin:{}", p.name);
        return Ok(ModelTokens { tokens, info: found.info, unknown: found.unknown });
    }
    let tokens = strata_tokens::for_model(&found.info, &dir)?;
    Ok(ModelTokens { tokens, info: found.info, unknown: found.unknown })
}

impl Engine {
    /// `model`'s tokenizer and catalogue entry, loaded once per engine (a chat reads the
    /// catalogue and a tokenizer file once, not every turn).
    pub fn model_tokens(&mut self, model: &str) -> ApiResult<Arc<ModelTokens>> {
        if let Some(t) = self.model_tokens.get(model) {
            return Ok(t.clone());
        }
        let t = Arc::new(tokenizer(&self.options().context, model)?);
        self.model_tokens.insert(model.to_string(), t.clone());
        Ok(t)
    }

    /// The context for `params.model`: the memories recall finds for the message, and the
    /// conversation, assembled within the budget, with the report.
    pub fn build_context(&mut self, params: ContextParams) -> ApiResult<ContextView> {
        self.build_context_with(params, None)
    }

    /// [`Engine::build_context`] for the model `exact` serves: the finished prompt is also
    /// counted by its provider where the provider counts (Claude models, whose tokenizer
    /// Strata can only estimate).
    pub fn build_context_with(
        &mut self,
        params: ContextParams,
        exact: Option<&dyn strata_core::ChatModel>,
    ) -> ApiResult<ContextView> {
        let settings = self.options().context.clone();
        let model = self.model_tokens(&params.model)?;
        let (tokens, info) = (&model.tokens, &model.info);
        let mut notes: Vec<String> = model.unknown.iter().cloned().collect();
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
        let concepts = params.concepts.unwrap_or(settings.options.concepts);
        let started = std::time::Instant::now();
        let mut recalled = self.recall_scored(&params.message, params.filter, settings.candidates)?;
        recalled.retain(|r| concepts || !strata_core::concepts::is_concept(&r.memory));
        if params.without_past_answers {
            recalled.retain(|r| !is_past_answer(&r.memory));
        }
        let took = started.elapsed();
        let mut recorded: Vec<_> = recalled.iter().map(|r| crate::analytics::recorded_hit(r, false)).collect();
        let candidates: Vec<Candidate> = recalled.into_iter().map(Candidate::from).collect();
        let passages = self.passages_for(&params.datasets, &params.message)?;
        let message = params.message.clone();
        let req = ContextRequest {
            system: params.system,
            history: params.history,
            history_summary: params.history_summary,
            message: params.message,
            candidates,
            passages,
            budget,
        };
        let options = ContextOptions {
            placement: params.placement.unwrap_or(settings.options.placement),
            concepts,
            ..settings.options
        };
        let assembled = assemble_with(tokens.as_ref(), req, &options, exact)?;
        let included: std::collections::HashSet<_> = assembled.report.included.iter().map(|d| d.id).collect();
        for hit in &mut recorded {
            hit.in_prompt = included.contains(&hit.memory);
        }
        let prompt = crate::analytics::prompt_record(&params.model, &assembled.report);
        let record =
            self.record_recall(strata_core::analytics::Purpose::Prompt, &message, took, recorded, Some(prompt));
        Ok(ContextView { model: params.model, notes, messages: assembled.messages, report: assembled.report, record })
    }

    /// The passages of `datasets` that best match `message`, as the assembler takes them.
    fn passages_for(&self, datasets: &[String], message: &str) -> ApiResult<Vec<strata_context::Passage>> {
        if datasets.is_empty() {
            return Ok(Vec::new());
        }
        let hits = self.search_datasets(datasets, message, PASSAGES)?;
        Ok(hits
            .into_iter()
            .map(|h| strata_context::Passage {
                place: h.place.describe(),
                dataset: h.dataset,
                source: h.source,
                text: h.text,
                score: h.score,
            })
            .collect())
    }
}
