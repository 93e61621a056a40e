//! Conversations held in a window: each turn is an exchange episode in the conversation's
//! session, so a past conversation is read back from the store itself — what is forgotten
//! leaves it too, and nothing else keeps a copy. An answer can be marked wrong: it is then
//! excluded from recall and prompts, and its history says why.

use serde::Serialize;
use strata_core::{Change, Content, EpisodeBody, Expected, Filter, Memory, MemoryId, MemoryKind};

use crate::engine::{Engine, Target};
use crate::error::{ApiError, ApiResult};

/// Every conversation's session id starts with this.
pub const CONVERSATION_PREFIX: &str = "chat-";

/// The reason an answer marked wrong is excluded with (its history shows it).
pub const MARKED_WRONG: &str = "marked wrong: the answer was wrong, so it is no longer recalled or given to a model";

/// A past conversation in a list.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConversationView {
    /// Its id (a session id).
    pub id: String,
    /// Its first question, shortened.
    pub title: String,
    /// When it began (RFC 3339).
    pub started_at: String,
    /// When it was last added to.
    pub last_at: String,
    /// Its remembered turns.
    pub turns: u32,
}

/// One remembered turn of a conversation.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConversationTurnView {
    /// The exchange's memory id.
    pub id: String,
    /// What was asked.
    pub question: String,
    /// What the assistant answered.
    pub answer: String,
    /// When (RFC 3339).
    pub at: String,
    /// Who answered (`on-device`, `openai`…), if known.
    pub provider: Option<String>,
    /// With which model, if known.
    pub model: Option<String>,
    /// Whether the answer was marked wrong (it is then excluded from recall and prompts).
    pub wrong: bool,
    /// The prompt it was answered from, as the usage records kept it (none where they were not
    /// kept): a reopened conversation shows the memories used and the budget as it did live.
    pub prompt: Option<KeptPromptView>,
}

/// A past answer's prompt, from the usage records.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct KeptPromptView {
    /// The memories it included, in rank order (their part of the prompt by their kind).
    pub injected: Vec<crate::ask::InjectedView>,
    /// Tokens per part of the prompt.
    pub sections: Vec<(String, u32)>,
    /// The budget.
    pub budget: u32,
    /// Tokens used.
    pub used: u32,
}

/// A conversation id a window may use: the prefix, then letters, digits or `-`/`_`.
pub fn check_conversation_id(id: &str) -> ApiResult<()> {
    let rest = id.strip_prefix(CONVERSATION_PREFIX).unwrap_or("");
    if rest.is_empty() || rest.len() > 64 || !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(ApiError::invalid(format!(
            "a conversation id is '{CONVERSATION_PREFIX}' then up to 64 letters, digits, '-' or '_'"
        )));
    }
    Ok(())
}

fn shorten(text: &str, chars: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= chars {
        return text;
    }
    format!("{}…", text.chars().take(chars - 1).collect::<String>().trim_end())
}

/// An exchange episode as a turn; None for any other memory.
fn turn(m: &Memory) -> Option<ConversationTurnView> {
    let Content::Episodic(e) = &m.content else { return None };
    let EpisodeBody::Exchange { query, response } = &e.body else { return None };
    Some(ConversationTurnView {
        id: m.id.to_string(),
        question: query.clone(),
        answer: response.clone(),
        at: m.occurred_at().to_rfc3339(),
        provider: m.source.provider.clone(),
        model: m.source.model.clone(),
        wrong: m.expired_at.is_some(),
        prompt: None,
    })
}

impl Engine {
    /// The conversations held in windows, the one used last first (at most `limit`).
    pub fn conversations(&self, limit: usize) -> ApiResult<Vec<ConversationView>> {
        let filter =
            self.scoped(Filter { kinds: vec![MemoryKind::Episodic], include_expired: true, ..Default::default() });
        let sessions = self.store_view().sessions(&filter, CONVERSATION_PREFIX, limit)?;
        let mut out = Vec::with_capacity(sessions.len());
        for s in sessions {
            let first = self.conversation(&s.session_id)?.into_iter().next();
            out.push(ConversationView {
                title: first.map_or_else(|| "A conversation".to_string(), |t| shorten(&t.question, 60)),
                started_at: s.first.to_rfc3339(),
                last_at: s.last.to_rfc3339(),
                turns: u32::try_from(s.memories).unwrap_or(u32::MAX),
                id: s.session_id,
            });
        }
        Ok(out)
    }

    /// A conversation's remembered turns, oldest first; answers marked wrong are included
    /// (and say so).
    pub fn conversation(&self, id: &str) -> ApiResult<Vec<ConversationTurnView>> {
        check_conversation_id(id)?;
        let filter = Filter {
            kinds: vec![MemoryKind::Episodic],
            session_id: Some(id.to_string()),
            include_expired: true,
            ..Default::default()
        };
        let mut memories = self.all_memories(filter)?;
        memories.sort_by(|a, b| a.occurred_at().cmp(&b.occurred_at()).then(a.id.cmp(&b.id)));
        let mut turns = Vec::with_capacity(memories.len());
        for (m, mut t) in memories.iter().filter_map(|m| turn(m).map(|t| (m, t))) {
            t.prompt = self.kept_prompt(m.id)?;
            turns.push(t);
        }
        Ok(turns)
    }

    /// [`ConversationTurnView::prompt`] of the recorded answer `id`.
    fn kept_prompt(&self, id: MemoryId) -> ApiResult<Option<KeptPromptView>> {
        let Some((p, hits)) = self.store_view().prompt_of_answer(id)? else { return Ok(None) };
        let injected = hits
            .into_iter()
            .filter_map(|(id, score)| {
                // A memory forgotten since is left out: its title is gone with it.
                let m = self.store_view().get(id).ok()?;
                let section = match m.kind() {
                    MemoryKind::Semantic => "facts",
                    MemoryKind::Procedural => "procedures",
                    MemoryKind::Episodic => "episodes",
                };
                Some(crate::ask::InjectedView {
                    id: id.to_string(),
                    title: crate::dto::content_title(&m.content),
                    memory: Some(m.into()),
                    section: section.into(),
                    score,
                    tokens: 0,
                })
            })
            .collect();
        let n = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        Ok(Some(KeptPromptView {
            injected,
            sections: p.sections.iter().map(|(s, t)| (s.clone(), n(*t))).collect(),
            budget: n(p.budget),
            used: n(p.used),
        }))
    }

    /// Marks an assistant's answer wrong: the exchange is excluded from recall and prompts
    /// (expired, with [`MARKED_WRONG`] as the reason in its history) but kept, so the
    /// conversation still shows what was said. Only an exchange with an answer can be marked.
    pub fn mark_answer_wrong(&mut self, target: &Target) -> ApiResult<ConversationTurnView> {
        let id = self.resolve(target)?;
        let m = self.memory(target)?;
        if !strata_core::said_by_assistant(&m) {
            return Err(ApiError::invalid("only an answer an assistant gave can be marked wrong"));
        }
        if m.expired_at.is_none() {
            let meta = self.meta();
            let reason = MARKED_WRONG.to_string();
            self.store().transact(|tx| tx.append(id, Expected::Any, Change::Expired { reason }, &meta).map(|_| ()))?;
            // Analytics counts it as an answer rated not helpful.
            let user = self.options().user_id.clone();
            self.store().record_feedback(&user, id, strata_core::analytics::About::Answer, false)?;
        }
        turn(&self.memory(target)?)
            .ok_or_else(|| ApiError::invalid("only an answer an assistant gave can be marked wrong"))
    }
}
