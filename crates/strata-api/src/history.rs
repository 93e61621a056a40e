//! A person's history from other tools (`strata_core::interchange::chats`): ChatGPT's and
//! Claude's conversations become sessions of dated episodes (a question with its answer is an
//! exchange, whose answer counts half in recall, as in Strata's own chats); mem0's memories
//! become semantic memories with their dates. One transaction: a damaged export imports
//! nothing. Importing the same export again adds nothing twice: each episode keeps the
//! export's message id, each mem0 memory its id as its key.

use serde::Serialize;
use strata_core::interchange::chats::{self, ImportedConversation, Mem0Memory};
use strata_core::{Content, Episode, Filter, MemoryKind, NewMemory, Source};

use crate::engine::Engine;
use crate::error::{ApiError, ApiResult};

/// The episode field naming where an imported turn came from ("chatgpt/<conversation>/<message>").
pub const IMPORTED_FROM: &str = "imported_from";

/// What importing a history did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HistoryReport {
    /// The tool it came from: "ChatGPT", "Claude" or "mem0".
    pub tool: String,
    /// Conversations in the export.
    pub conversations: u64,
    /// Turns (or mem0 memories) added.
    pub added: u64,
    /// Turns (or mem0 memories) already kept from an earlier import.
    pub already: u64,
    /// The sessions that received turns.
    pub sessions: Vec<String>,
}

/// Whether `text` (a file's content) is an export [`Engine::import_history`] reads.
pub fn is_history(text: &str) -> bool {
    first_value(text).as_ref().and_then(chats::shape).is_some()
}

fn first_value(text: &str) -> Option<serde_json::Value> {
    serde_json::Deserializer::from_str(text.trim_start_matches('\u{feff}')).into_iter().next()?.ok()
}

impl Engine {
    /// Imports ChatGPT's or Claude's `conversations.json` or mem0's memories (told apart by
    /// their shape), in one transaction.
    pub fn import_history(&mut self, file: &str, text: &str) -> ApiResult<HistoryReport> {
        let text = text.trim_start_matches('\u{feff}');
        let shape = first_value(text).as_ref().and_then(chats::shape).ok_or_else(|| {
            ApiError::invalid(format!(
                "{file} is neither ChatGPT's nor Claude's conversations.json, nor mem0's memories"
            ))
        })?;
        let report = match shape {
            "chatgpt" => self.import_conversations("ChatGPT", chats::read_chatgpt(file, text)?)?,
            "claude" => self.import_conversations("Claude", chats::read_claude(file, text)?)?,
            _ => self.import_mem0(chats::read_mem0(file, text)?)?,
        };
        self.wrote();
        Ok(report)
    }

    /// The message ids of `session`'s episodes imported before.
    fn imported_ids(&self, session: &str) -> ApiResult<std::collections::HashSet<String>> {
        let filter = Filter {
            session_id: Some(session.to_string()),
            kinds: vec![MemoryKind::Episodic],
            include_expired: true,
            ..Default::default()
        };
        Ok(self
            .all_memories(filter)?
            .into_iter()
            .filter_map(|m| match m.content {
                Content::Episodic(e) => e.extra.get(IMPORTED_FROM).and_then(|v| v.as_str()).map(str::to_string),
                _ => None,
            })
            .collect())
    }

    fn import_conversations(&mut self, tool: &str, all: Vec<ImportedConversation>) -> ApiResult<HistoryReport> {
        let mut report = HistoryReport { tool: tool.into(), conversations: all.len() as u64, ..Default::default() };
        let mut new = Vec::new();
        for c in &all {
            let session = c.session();
            let kept = self.imported_ids(&session)?;
            let mut added_here = false;
            for t in &c.turns {
                let from = format!("{}/{}/{}", c.source.as_str(), c.id, t.message_id);
                if kept.contains(&from) {
                    report.already += 1;
                    continue;
                }
                let mut extra = indexmap::IndexMap::new();
                extra.insert(IMPORTED_FROM.to_string(), serde_json::Value::String(from));
                extra.insert("conversation".to_string(), serde_json::Value::String(c.title.clone()));
                let episode = Episode { occurred_at: t.at, body: t.body.clone(), concepts: Vec::new(), extra };
                new.push((session.clone(), Content::Episodic(episode)));
                added_here = true;
            }
            if added_here {
                report.sessions.push(session);
            }
        }
        report.added = new.len() as u64;
        self.create_all(new)?;
        Ok(report)
    }

    fn import_mem0(&mut self, all: Vec<Mem0Memory>) -> ApiResult<HistoryReport> {
        let mut report = HistoryReport { tool: "mem0".into(), ..Default::default() };
        let mut new = Vec::new();
        for m in all {
            let key = format!("mem0/{}", m.id);
            let scope = self.scope(None);
            if !self
                .store_view()
                .find_by_key(&scope.user_id, scope.agent_id.as_deref(), Some(MemoryKind::Semantic), &key)?
                .is_empty()
            {
                report.already += 1;
                continue;
            }
            let mut facts = strata_core::Facts::new();
            facts.insert("memory".into(), strata_core::FactValue::Text(m.text));
            if let Some(at) = m.created_at {
                facts.insert("noted_on".into(), strata_core::FactValue::Text(at.format("%Y-%m-%d").to_string()));
            }
            new.push((String::new(), Content::Semantic(strata_core::Concept { key, facts })));
        }
        report.added = new.len() as u64;
        self.create_all(new)?;
        Ok(report)
    }

    /// Writes every (session, content) in one transaction, as imported.
    fn create_all(&mut self, all: Vec<(String, Content)>) -> ApiResult<()> {
        if all.is_empty() {
            return Ok(());
        }
        let meta = self.meta();
        let news: Vec<(Content, NewMemory)> = all
            .into_iter()
            .map(|(session, content)| {
                let session = (!session.is_empty()).then_some(session);
                let new = NewMemory {
                    scope: self.scope(session),
                    source: Source::app(strata_core::IMPORTED_APPS[0]),
                    ..Default::default()
                };
                (content, new)
            })
            .collect();
        self.store().transact(|tx| {
            for (content, new) in news {
                let meta = strata_core::EventMeta { session_id: new.scope.session_id.clone(), ..meta.clone() };
                tx.create(content, new, &meta)?;
            }
            Ok(())
        })?;
        Ok(())
    }
}
