//! The memory protocol of seed 003 (AutoGen's `Memory`): a name, `query` returning scored
//! entries, `add`, `clear` and `close`. Implemented by the SQLite store ([`StoreMemory`]) and by
//! an in-process [`ListMemory`] for tests and embedding in other programs.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::chat::{DEFAULT_PREAMBLE, MEMORIES_CLOSE, MEMORIES_OPEN, Message, Role, fence};
use crate::error::{Error, Result};
use crate::event::{Actor, EventMeta};
use crate::model::{Content, Episode, EpisodeBody, MemoryKind, Scope, Source};
use crate::query::Filter;
use crate::retrieval::{HybridOptions, Recalled};
use crate::store::{NewMemory, Store};
use crate::vectors::Embedder;

/// Something to remember: text and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEntry {
    /// The text.
    pub content: String,
    /// Where it came from (a guide, a user, an agent).
    pub source: String,
}

impl MemoryEntry {
    /// An entry from text and a source.
    pub fn new(content: impl Into<String>, source: impl Into<String>) -> Self {
        MemoryEntry { content: content.into(), source: source.into() }
    }

    /// The entry an utterance is (its text, its speaker as the source); other content is not
    /// an entry of this protocol.
    pub fn of(content: &Content) -> Option<MemoryEntry> {
        match content {
            Content::Episodic(Episode { body: EpisodeBody::Utterance { speaker, text }, .. }) => {
                Some(MemoryEntry::new(text.clone(), speaker.clone()))
            }
            _ => None,
        }
    }
}

/// How many results a query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryOptions {
    /// At most this many results.
    pub limit: usize,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions { limit: 5 }
    }
}

/// A query result: the entry and how relevant it is (higher is better; comparable within one
/// query of one implementation).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// The remembered entry.
    pub entry: MemoryEntry,
    /// Relevance.
    pub score: f64,
}

/// What [`MemoryProtocol::update_context`] put into a model context.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateContextResult {
    /// The entries added, best first.
    pub memories: Vec<QueryResult>,
}

/// The memory protocol.
pub trait MemoryProtocol {
    /// This memory's name.
    fn name(&self) -> &str;
    /// The most relevant entries for `query`, best first.
    fn query(&mut self, query: &str, options: QueryOptions) -> Result<Vec<QueryResult>>;
    /// Remembers an entry.
    fn add(&mut self, entry: MemoryEntry) -> Result<()>;
    /// Forgets every entry of this memory.
    fn clear(&mut self) -> Result<()>;
    /// Releases resources; the memory cannot be used afterwards.
    fn close(self) -> Result<()>
    where
        Self: Sized;

    /// Transforms a model context with this memory. By default, the entries most relevant to
    /// the last user message go in one system message just before it, fenced and introduced as
    /// data; a context without a user message is left as it is. Strata's token-budgeted
    /// assembler (`strata-context`) overrides this with a budget and a report.
    fn update_context(&mut self, context: &mut Vec<Message>) -> Result<UpdateContextResult> {
        let Some(at) = context.iter().rposition(|m| m.role == Role::User) else {
            return Ok(UpdateContextResult::default());
        };
        let memories = self.query(&context[at].content.clone(), QueryOptions::default())?;
        if memories.is_empty() {
            return Ok(UpdateContextResult::default());
        }
        let mut block = format!("{DEFAULT_PREAMBLE}\n{MEMORIES_OPEN}\n");
        for (i, m) in memories.iter().enumerate() {
            block.push_str(&format!("[{}] {}: {}\n", i + 1, fence(&m.entry.source), fence(&m.entry.content)));
        }
        block.push_str(MEMORIES_CLOSE);
        context.insert(at, Message::system(block));
        Ok(UpdateContextResult { memories })
    }
}

/// The protocol over a Strata store, in one scope: entries are episodes (the source as the
/// speaker), queries are the store's hybrid recall (keywords alone without an embedder), and
/// `clear` really forgets.
pub struct StoreMemory {
    name: String,
    store: Store,
    scope: Scope,
    embedder: Option<Arc<dyn Embedder>>,
}

impl StoreMemory {
    /// A memory named `name` over `store`, reading and writing `scope` only.
    pub fn new(name: impl Into<String>, store: Store, scope: Scope) -> Self {
        StoreMemory { name: name.into(), store, scope, embedder: None }
    }

    /// Recalls by meaning as well: entries are embedded as they are added.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    fn filter(&self) -> Filter {
        Filter {
            kinds: vec![MemoryKind::Episodic],
            user_id: Some(self.scope.user_id.clone()),
            agent_id: self.scope.agent_id.clone(),
            session_id: self.scope.session_id.clone(),
            ..Default::default()
        }
    }

    /// The memories of this scope most relevant to `query`, with why (hybrid recall), noted as
    /// accessed.
    pub fn recall(&mut self, query: &str, limit: usize) -> Result<Vec<Recalled>> {
        let hits = self.store.hybrid_search(
            self.embedder.as_deref(),
            query,
            &self.filter(),
            limit,
            HybridOptions::default(),
        )?;
        self.store.note_access(hits.iter().map(|h| h.memory.id))?;
        Ok(hits)
    }

    fn meta() -> EventMeta {
        EventMeta { client: Some("memory-protocol".into()), ..EventMeta::actor(Actor::Agent) }
    }
}

impl MemoryProtocol for StoreMemory {
    fn name(&self) -> &str {
        &self.name
    }

    fn query(&mut self, query: &str, options: QueryOptions) -> Result<Vec<QueryResult>> {
        let hits = self.recall(query, options.limit)?;
        Ok(hits
            .into_iter()
            .filter_map(|h| {
                MemoryEntry::of(&h.memory.content).map(|entry| QueryResult { entry, score: h.breakdown.score })
            })
            .collect())
    }

    fn add(&mut self, entry: MemoryEntry) -> Result<()> {
        if entry.source.trim().is_empty() {
            return Err(Error::invalid("a memory entry needs a source"));
        }
        let now: DateTime<Utc> = self.store.clock().now();
        let content = Content::Episodic(Episode {
            occurred_at: now,
            body: EpisodeBody::Utterance { speaker: entry.source, text: entry.content },
            concepts: vec![],
            extra: Default::default(),
        });
        let new = NewMemory { scope: self.scope.clone(), source: Source::app("memory-protocol"), ..Default::default() };
        self.store.create(content, new, &Self::meta())?;
        if let Some(e) = &self.embedder {
            self.store.embed_pending(e.as_ref(), 64)?;
        }
        Ok(())
    }

    fn clear(&mut self) -> Result<()> {
        let filter = Filter { include_expired: true, ..self.filter() };
        loop {
            let page = self.store.list(&filter, 1000, None)?;
            if page.items.is_empty() {
                return Ok(());
            }
            for m in page.items {
                self.store.forget(m.id, &Self::meta())?;
            }
        }
    }

    fn close(mut self) -> Result<()> {
        self.store.flush_accesses()?;
        Ok(())
    }
}

/// An in-process memory: a list of entries, scored by the share of the query's words (without
/// function words) each contains, newest first among equals.
#[derive(Debug, Default, Clone)]
pub struct ListMemory {
    name: String,
    entries: Vec<MemoryEntry>,
}

impl ListMemory {
    /// An empty list memory.
    pub fn new(name: impl Into<String>) -> Self {
        ListMemory { name: name.into(), entries: Vec::new() }
    }
}

fn words(text: &str) -> Vec<String> {
    crate::query::fts_terms(text).into_iter().map(|t| t.trim_matches('"').to_lowercase()).collect()
}

impl MemoryProtocol for ListMemory {
    fn name(&self) -> &str {
        &self.name
    }

    fn query(&mut self, query: &str, options: QueryOptions) -> Result<Vec<QueryResult>> {
        let wanted = words(query);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut scored: Vec<(f64, usize)> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let have: std::collections::HashSet<String> = words(&e.content).into_iter().collect();
                (wanted.iter().filter(|w| have.contains(*w)).count() as f64 / wanted.len() as f64, i)
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        Ok(scored
            .into_iter()
            .take(options.limit)
            .map(|(score, i)| QueryResult { entry: self.entries[i].clone(), score })
            .collect())
    }

    fn add(&mut self, entry: MemoryEntry) -> Result<()> {
        if entry.source.trim().is_empty() {
            return Err(Error::invalid("a memory entry needs a source"));
        }
        self.entries.push(entry);
        Ok(())
    }

    fn clear(&mut self) -> Result<()> {
        self.entries.clear();
        Ok(())
    }

    fn close(self) -> Result<()> {
        Ok(())
    }
}
