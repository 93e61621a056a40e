//! The [`Engine`]: every operation a user can perform on their memory, in one place.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use strata_core::{
    AsOf, Clock, Concept, Content, Embedder, Episode, EpisodeBody, EventMeta, Expected, FactValue, Filter,
    HybridOptions, Importance, MemoryId, MemoryKind, NewMemory, Procedure, Scope, Source, Store, SystemClock, Tier,
};

use crate::context::ContextSettings;
use crate::dto::{EventView, MemoryView, PageView, StatsView};
use crate::embedding::{EmbedProgress, EmbedWorker};
use crate::error::{ApiError, ApiResult, ErrorCode};

/// Who is using the engine: the scope new memories get and reads default to, and the client
/// recorded on every write.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The user whose memories these are.
    pub user_id: String,
    /// An agent, for agent-private memories.
    pub agent_id: Option<String>,
    /// The client name recorded as the source and on events (`cli`, `desktop`, an MCP client).
    pub client: String,
    /// New memories go to the scope all agents share even when this caller is an agent (it
    /// still sees its own private ones, and [`AddRequest::private`] writes one). Off: an
    /// agent's writes are its own.
    pub shared_writes: bool,
    /// The kind of actor behind this client.
    pub actor: strata_core::Actor,
    /// How [`Engine::recall`] ranks.
    pub recall: HybridOptions,
    /// How [`Engine::build_context`] builds contexts.
    pub context: ContextSettings,
    /// Keep a usage record of each recall (a search or a prompt's) for this many days, for
    /// analytics; none: keep none.
    pub recall_records_days: Option<u32>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            user_id: Scope::DEFAULT_USER.into(),
            agent_id: None,
            client: "api".into(),
            shared_writes: false,
            actor: strata_core::Actor::User,
            recall: HybridOptions::default(),
            context: ContextSettings::default(),
            recall_records_days: Some(crate::analytics::RECALL_RECORDS_DAYS),
        }
    }
}

/// A memory to create.
#[derive(Debug, Clone)]
pub struct AddRequest {
    /// What it says.
    pub content: Content,
    /// Tags.
    pub tags: Vec<String>,
    /// 0 to 1 (default 0.5).
    pub importance: Option<f64>,
    /// Starting tier (default by type).
    pub tier: Option<Tier>,
    /// Session it belongs to.
    pub session_id: Option<String>,
    /// Private to this caller's agent (an error without one); otherwise the engine's default
    /// scope (see [`EngineOptions::shared_writes`]).
    pub private: bool,
}

impl AddRequest {
    /// `content` with the defaults: no tags, importance and tier by type, no session, shared.
    pub fn new(content: Content) -> AddRequest {
        AddRequest { content, tags: Vec::new(), importance: None, tier: None, session_id: None, private: false }
    }
}

/// Changes to a memory; `None` fields stay as they are.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    /// Facts to set (semantic).
    pub set_facts: Vec<(String, FactValue)>,
    /// Facts to remove (semantic).
    pub unset_facts: Vec<String>,
    /// New text (an utterance's text, or an exchange's response).
    pub text: Option<String>,
    /// New query (exchange).
    pub query: Option<String>,
    /// New steps (procedural), replacing the old ones.
    pub steps: Option<Vec<String>>,
    /// New context (procedural).
    pub context: Option<String>,
    /// New importance.
    pub importance: Option<f64>,
    /// Fail with a conflict unless the memory is at this version.
    pub expected_version: Option<u64>,
}

impl UpdateRequest {
    /// Whether it changes anything (the version it expects aside).
    pub fn changes_anything(&self) -> bool {
        !self.set_facts.is_empty()
            || !self.unset_facts.is_empty()
            || self.text.is_some()
            || self.query.is_some()
            || self.steps.is_some()
            || self.context.is_some()
            || self.importance.is_some()
    }
}

/// How a memory is named on the command line: its id, or its key in the current scope.
#[derive(Debug, Clone)]
pub struct Target {
    /// An id or a concept key / procedure name.
    pub id_or_key: String,
    /// Which type to look the key up in, when both have it.
    pub kind: Option<MemoryKind>,
}

impl Target {
    /// A target from what the user typed.
    pub fn new(id_or_key: impl Into<String>) -> Self {
        Target { id_or_key: id_or_key.into(), kind: None }
    }
}

/// What `replay` did.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// Events read from the log.
    pub events: u64,
    /// Memories in the rebuilt projections.
    pub memories: u64,
    /// Whether the rebuilt projections equal the ones before (they should).
    pub matched: bool,
    /// How long the rebuild took.
    pub millis: u64,
}

/// What `forget` did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetReport {
    /// The forgotten memory.
    pub id: String,
    /// Earlier events whose payloads were erased.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub redacted_events: u64,
    /// The adapters trained from it, retired (their files deleted).
    pub retired_adapters: Vec<String>,
    /// The facts extracted from it alone (or whose earlier values were), forgotten with it.
    pub derived: Vec<String>,
    /// Whether the bytes have also left the files on disk (false while another process keeps
    /// reading; the next checkpoint finishes it).
    pub scrubbed: bool,
}

/// Strata's engine over one database.
pub struct Engine {
    store: Store,
    opts: EngineOptions,
    embedder: Option<Arc<dyn Embedder>>,
    worker: Option<Arc<EmbedWorker>>,
    /// Tokenizers by model name, loaded on first use.
    pub(crate) model_tokens: std::collections::HashMap<String, Arc<crate::context::ModelTokens>>,
    /// Searches' usage records put off while another writer held the lock (written with the
    /// next record made when it is free).
    pub(crate) pending_recalls: Vec<crate::analytics::PendingRecall>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("store", &self.store)
            .field("opts", &self.opts)
            .field("embedder", &self.embedder.as_ref().map(|e| e.model_id().to_string()))
            .finish()
    }
}

impl Engine {
    /// Opens (or creates) the database at `path`, or connects to the PostgreSQL database a
    /// `postgres://` URL given as the path names.
    pub fn open(path: &Path, opts: EngineOptions) -> ApiResult<Engine> {
        Engine::open_with_clock(path, opts, Arc::new(SystemClock))
    }

    /// Opens with an injected clock (tests, deterministic maintenance).
    pub fn open_with_clock(path: &Path, opts: EngineOptions, clock: Arc<dyn Clock>) -> ApiResult<Engine> {
        let store = match path.to_str() {
            Some(location) => Store::open_location(location, clock)?,
            None => Store::open_with_clock(path, clock)?,
        };
        Ok(Engine {
            store,
            opts,
            embedder: None,
            worker: None,
            model_tokens: Default::default(),
            pending_recalls: Vec::new(),
        })
    }

    /// Uses `embedder` for recall, and with `background` embeds new and changed memories on a
    /// worker thread (a memory is keyword-searchable at once, vector-searchable once embedded).
    pub fn use_embedder(&mut self, embedder: Arc<dyn Embedder>, background: bool) -> ApiResult<()> {
        self.worker = None; // a previous worker stops (and finishes its batch) first
        // An in-memory database has no second connection for a worker: it embeds on request.
        if background && self.store.has_second_connection() {
            self.worker = Some(Arc::new(EmbedWorker::start(self.store.open_another()?, embedder.clone())?));
        }
        self.embedder = Some(embedder);
        Ok(())
    }

    /// An engine on the same database for another caller (an MCP client, say): its own
    /// connection and scope, the same clock, embedder and background worker.
    pub fn for_caller(&self, opts: EngineOptions) -> ApiResult<Engine> {
        let store = self.store.open_another()?;
        Ok(Engine {
            store,
            opts,
            embedder: self.embedder.clone(),
            worker: self.worker.clone(),
            model_tokens: Default::default(),
            pending_recalls: Vec::new(),
        })
    }

    /// Whether memories are embedded in the background.
    pub(crate) fn has_worker(&self) -> bool {
        self.worker.is_some()
    }

    /// The embedder recall uses, if any.
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Tells the background worker (if any) that memories may need embedding.
    pub(crate) fn wrote(&self) {
        if let Some(w) = &self.worker {
            w.wake();
        }
    }

    /// Waits until the background worker has embedded everything written so far (true), or
    /// `timeout` passed (false). Without a worker there is nothing to wait for.
    pub fn wait_embedded(&self, timeout: std::time::Duration) -> ApiResult<bool> {
        match &self.worker {
            Some(w) => w.wait_idle(timeout),
            None => Ok(true),
        }
    }

    /// Embeds, in the foreground, every memory without a vector from the engine's embedder
    /// (after a model change, or to catch up an import): resumable, with progress after each
    /// batch, stopped by `cancel`.
    pub fn embed_all(
        &mut self,
        cancel: &std::sync::atomic::AtomicBool,
        progress: &mut dyn FnMut(EmbedProgress),
    ) -> ApiResult<EmbedProgress> {
        let embedder = self.embedder.clone().ok_or_else(|| {
            ApiError::new(ErrorCode::Model, "no embedding model is loaded; keyword search works without one")
        })?;
        crate::embedding::embed_all(&mut self.store, embedder.as_ref(), cancel, progress)
    }

    /// Memories without a vector from the engine's embedder.
    pub fn pending_embeddings(&self) -> ApiResult<u64> {
        match &self.embedder {
            Some(e) => Ok(self.store.pending_embeddings(e.as_ref())?),
            None => Ok(0),
        }
    }

    /// The underlying store, for the engine's own modules: callers outside the crate go
    /// through `Engine` methods.
    pub(crate) fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The store, to read, for the engine's own modules.
    pub(crate) fn store_view(&self) -> &Store {
        &self.store
    }

    /// Finishes the scrub of forgotten text in the database at `path` that another process's
    /// read delayed, waiting for that read to end (up to a day); whether it finished. Opens
    /// nothing else: for a process of its own (`strata scrub`).
    pub fn finish_scrub(path: &Path) -> ApiResult<bool> {
        Ok(strata_core::store::finish_scrub(path, strata_core::store::SCRUB_PATIENCE)?)
    }

    /// The database file (none for an in-memory database).
    pub fn path(&self) -> Option<&Path> {
        self.store.path()
    }

    /// The time now, by this engine's clock (tests and replays set their own).
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.store.clock().now()
    }

    /// Metadata for the events of one operation: the caller, and a fresh correlation id that
    /// groups everything this operation writes (an import, an update of content and importance).
    pub(crate) fn meta(&mut self) -> EventMeta {
        EventMeta {
            actor: self.opts.actor,
            client: Some(self.opts.client.clone()),
            correlation_id: Some(strata_core::event::new_event_id(self.store.clock().as_ref())),
            ..Default::default()
        }
    }

    /// The scope of a new memory: the agent's own, or (with [`EngineOptions::shared_writes`])
    /// the one all agents share.
    pub(crate) fn scope(&self, session_id: Option<String>) -> Scope {
        let agent_id = if self.opts.shared_writes { None } else { self.opts.agent_id.clone() };
        Scope { user_id: self.opts.user_id.clone(), agent_id, session_id }
    }

    /// The filter that keeps reads inside what this caller may see: its user's memories; for
    /// an agent, only the ones shared by all agents and its own.
    pub fn scoped(&self, mut filter: Filter) -> Filter {
        filter.user_id = Some(self.opts.user_id.clone());
        filter.visible_to_agent = self.opts.agent_id.clone();
        filter
    }

    /// Whether this caller may see a memory with this scope.
    pub(crate) fn can_see(&self, scope: &Scope) -> bool {
        scope.user_id == self.opts.user_id
            && match (&self.opts.agent_id, &scope.agent_id) {
                (Some(me), Some(owner)) => me == owner,
                _ => true,
            }
    }

    /// Resolves an id or a key to the id of a memory this caller may see. A key is looked up
    /// among the agent's own memories first, then the shared ones. Memories outside the
    /// caller's scope are reported as not found, like ids that never existed.
    pub fn resolve(&self, target: &Target) -> ApiResult<MemoryId> {
        let s = target.id_or_key.trim();
        if s.len() == 26
            && let Ok(id) = s.parse::<MemoryId>()
        {
            return match self.store.get(id) {
                Ok(m) if !self.can_see(&m.scope) => Err(not_found(s)),
                Ok(_) => Ok(id),
                Err(strata_core::Error::NotFound(_)) => Err(not_found(s)),
                Err(e) => Err(e.into()),
            };
        }
        let mut found = Vec::new();
        if let Some(agent) = self.opts.agent_id.as_deref() {
            found = self.store.find_by_key(&self.opts.user_id, Some(agent), target.kind, s)?;
        }
        if found.is_empty() {
            found = self.store.find_by_key(&self.opts.user_id, None, target.kind, s)?;
        }
        match found.as_slice() {
            [] => Err(not_found(s)),
            [one] => Ok(one.id),
            several => Err(ApiError::invalid(format!(
                "several memories have the key '{s}' ({}); pass --type or use an id",
                several.iter().map(|m| format!("{} {}", m.kind(), m.id)).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// Creates a memory.
    pub fn add(&mut self, req: AddRequest) -> ApiResult<MemoryView> {
        let importance = req.importance.map(Importance::new).transpose()?;
        let mut scope = self.scope(req.session_id);
        if req.private {
            scope.agent_id =
                Some(self.opts.agent_id.clone().ok_or_else(|| {
                    ApiError::invalid("a private memory needs an agent: this caller has no agent id")
                })?);
        }
        let new = NewMemory {
            scope,
            tags: req.tags,
            importance,
            tier: req.tier,
            source: Source::app(self.opts.client.clone()),
        };
        self.create(req.content, new)
    }

    /// Writes a new memory in its session, and wakes the embedding worker.
    pub(crate) fn create(&mut self, content: Content, new: NewMemory) -> ApiResult<MemoryView> {
        let meta = EventMeta { session_id: new.scope.session_id.clone(), ..self.meta() };
        let m = self.store.create(content, new, &meta)?;
        self.wrote();
        Ok(m.into())
    }

    /// Reads a memory (recording the access), optionally as it was at a past point.
    pub fn get(&mut self, target: &Target, as_of: Option<AsOf>) -> ApiResult<MemoryView> {
        let id = self.resolve(target)?;
        let m = match as_of {
            Some(at) => self.store.get_as_of(id, at)?,
            None => {
                let m = self.store.get(id)?;
                self.store.note_access([id])?;
                m
            }
        };
        Ok(m.into())
    }

    /// Reads a memory as it is, without recording an access (for showing it to the person
    /// before acting on it, or handing it to training).
    pub fn memory(&self, target: &Target) -> ApiResult<strata_core::Memory> {
        Ok(self.store.get(self.resolve(target)?)?)
    }

    /// A page of memories in this scope, newest first.
    pub fn list(&self, filter: Filter, limit: usize, cursor: Option<&str>) -> ApiResult<PageView> {
        self.list_by(filter, strata_core::Order::Added, limit, cursor)
    }

    /// A page of memories in this scope in `order`, latest first.
    pub fn list_by(
        &self,
        filter: Filter,
        order: strata_core::Order,
        limit: usize,
        cursor: Option<&str>,
    ) -> ApiResult<PageView> {
        let page = self.store.list_by(&self.scoped(filter), order, limit, cursor)?;
        Ok(PageView { items: page.items.into_iter().map(Into::into).collect(), next_cursor: page.next_cursor })
    }

    /// Every memory in this scope that `filter` selects, newest first (all pages).
    pub fn all_memories(&self, filter: Filter) -> ApiResult<Vec<strata_core::Memory>> {
        let filter = self.scoped(filter);
        let (mut out, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let page = self.store.list(&filter, 500, cursor.as_deref())?;
            out.extend(page.items);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(out),
            }
        }
    }

    /// The options the engine was opened with.
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// Keeps usage records of recalls for `days` from now on (none: keeps none);
    /// [`crate::settings::UsageSettings::records_days`].
    pub fn set_recall_records_days(&mut self, days: Option<u32>) {
        self.opts.recall_records_days = days;
    }

    /// Adds tags; returns the memory after.
    pub fn tag(&mut self, target: &Target, tags: &[String]) -> ApiResult<MemoryView> {
        self.retag(target, tags, true)
    }

    /// Removes tags; returns the memory after.
    pub fn untag(&mut self, target: &Target, tags: &[String]) -> ApiResult<MemoryView> {
        self.retag(target, tags, false)
    }

    fn retag(&mut self, target: &Target, tags: &[String], add: bool) -> ApiResult<MemoryView> {
        let id = self.resolve(target)?;
        let meta = self.meta();
        let m = self.store.transact(|tx| {
            for t in tags {
                if add {
                    tx.tag(id, t, &meta)?;
                } else {
                    tx.untag(id, t, &meta)?;
                }
            }
            tx.current(id)
        })?;
        Ok(m.into())
    }

    /// Applies an update in one transaction.
    pub fn update(&mut self, target: &Target, req: UpdateRequest) -> ApiResult<MemoryView> {
        let id = self.resolve(target)?;
        self.change(id, Some(&req), &[], &[])
    }

    /// Applies an update (if any) and adds and removes tags, all in one transaction.
    pub(crate) fn change(
        &mut self,
        id: MemoryId,
        update: Option<&UpdateRequest>,
        add: &[String],
        remove: &[String],
    ) -> ApiResult<MemoryView> {
        let meta = self.meta();
        let importance = update.and_then(|r| r.importance).map(Importance::new).transpose()?;
        self.store.transact(|tx| {
            if let Some(req) = update {
                let current = tx.current(id)?;
                // Reads recorded since (a search that found it) are no change the person missed.
                if let Some(v) = req.expected_version
                    && current.version != v
                    && (current.version < v || tx.changed_since(id, v)?)
                {
                    return Err(strata_core::Error::Conflict {
                        stream: id.to_string(),
                        expected: v.to_string(),
                        actual: current.version,
                    });
                }
                let content = apply_update(current.content, req)?;
                tx.update_content(id, content, Expected::Exact(current.version), &meta)?;
                if let Some(i) = importance {
                    tx.set_importance(id, i, &meta)?;
                }
            }
            for t in add {
                tx.tag(id, t, &meta)?;
            }
            for t in remove {
                tx.untag(id, t, &meta)?;
            }
            Ok(())
        })?;
        self.wrote();
        Ok(self.store.get(id)?.into())
    }

    /// Moves a memory to a tier, with a reason.
    pub fn set_tier(&mut self, target: &Target, tier: Tier, reason: &str) -> ApiResult<MemoryView> {
        let id = self.resolve(target)?;
        let meta = self.meta();
        Ok(self.store.transact(|tx| tx.set_tier(id, tier, reason, &meta))?.into())
    }

    /// Pins or unpins a memory (pinned memories never move down a tier).
    pub fn pin(&mut self, target: &Target, pinned: bool) -> ApiResult<MemoryView> {
        let id = self.resolve(target)?;
        let meta = self.meta();
        let m = self.store.transact(|tx| {
            if pinned {
                tx.pin(id, &meta)?;
            } else {
                tx.unpin(id, &meta)?;
            }
            tx.current(id)
        })?;
        Ok(m.into())
    }

    /// Runs tier maintenance now (or previews it). It covers the whole store, every user: it
    /// is the store's housekeeping, not a user's action.
    pub fn maintain(&mut self, policy: &strata_core::TierPolicy, apply: bool) -> ApiResult<Vec<strata_core::Move>> {
        Ok(self.store.maintain(policy, apply)?)
    }

    /// [`Engine::maintain`], reporting the moves applied to `tick` (an error from it rolls
    /// them all back).
    pub fn maintain_with(
        &mut self,
        policy: &strata_core::TierPolicy,
        apply: bool,
        tick: strata_core::interchange::Tick,
    ) -> ApiResult<Vec<strata_core::Move>> {
        Ok(self.store.maintain_with(policy, apply, tick)?)
    }

    /// Records that one memory relates to another.
    pub fn link(&mut self, target: &Target, to: &Target, relation: &str) -> ApiResult<MemoryView> {
        let (id, to) = (self.resolve(target)?, self.resolve(to)?);
        let meta = self.meta();
        Ok(self.store.transact(|tx| tx.link(id, to, relation, &meta))?.into())
    }

    /// Forgets a memory for good.
    pub fn forget(&mut self, target: &Target) -> ApiResult<ForgetReport> {
        let id = self.resolve(target)?;
        let meta = self.meta();
        let outcome = self.store.forget(id, &meta)?;
        Ok(ForgetReport {
            id: id.to_string(),
            redacted_events: outcome.redacted_events,
            retired_adapters: outcome.retired_adapters,
            derived: outcome.derived.iter().map(ToString::to_string).collect(),
            scrubbed: outcome.scrubbed,
        })
    }

    /// A memory's events, oldest first.
    pub fn history(&self, target: &Target) -> ApiResult<Vec<EventView>> {
        let id = self.resolve(target)?;
        Ok(crate::changes::described(self.store.history(id)?))
    }

    /// Rebuilds the projections from the log and says whether they matched.
    pub fn replay(&mut self) -> ApiResult<ReplayReport> {
        let before = self.store.snapshot();
        let t = Instant::now();
        let (events, memories) = self.store.replay()?;
        let millis = t.elapsed().as_millis() as u64;
        let matched = match before {
            Ok(b) => self.store.snapshot()? == b,
            Err(_) => false,
        };
        Ok(ReplayReport { events, memories, matched, millis })
    }

    /// The storage engine the store runs on: `sqlite` or `postgres`.
    pub fn storage_engine(&self) -> &'static str {
        if strata_core::store::is_database_url(&self.store.location()) { "postgres" } else { "sqlite" }
    }

    /// Summary counts.
    pub fn stats(&self) -> ApiResult<StatsView> {
        Ok(self.store.stats()?)
    }

    /// Writes pending access records now (they are also written when the engine is dropped).
    pub fn flush(&mut self) -> ApiResult<()> {
        self.store.flush_accesses()?;
        self.write_pending_recalls();
        Ok(())
    }

    /// Writes pending access records when the oldest is a few seconds old
    /// ([`strata_core::store::ACCESS_FLUSH_AFTER_SECS`]): what a long-running program calls
    /// about every second ([`flush_periodically`]), so counts survive a kill.
    pub fn flush_due(&mut self) -> ApiResult<usize> {
        let written = self.store.flush_due_accesses()?;
        if !self.pending_recalls.is_empty() && !self.store.writer_busy()? {
            self.write_pending_recalls();
        }
        Ok(written)
    }
}

/// Calls [`Engine::flush_due`] on `engine` every second, from a thread of its own, for as long
/// as the engine lives; a second the engine is busy is skipped, never waited for.
pub fn flush_periodically(engine: &std::sync::Arc<std::sync::Mutex<Engine>>) {
    let weak = std::sync::Arc::downgrade(engine);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
            let Some(engine) = weak.upgrade() else { return };
            if let Ok(mut e) = engine.try_lock()
                && let Err(err) = e.flush_due()
            {
                tracing::warn!("recall counts could not be written: {err}");
            }
        }
    });
}

fn not_found(what: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no memory with id or key '{what}'"))
}

/// The content after an update request, checking the request fits the memory's type.
fn apply_update(content: Content, req: &UpdateRequest) -> strata_core::Result<Content> {
    let wrong =
        |what: &str, kind: MemoryKind| strata_core::Error::invalid(format!("{what} does not apply to a {kind} memory"));
    let kind = content.kind();
    let has_facts = !req.set_facts.is_empty() || !req.unset_facts.is_empty();
    let has_episode = req.text.is_some() || req.query.is_some();
    let has_procedure = req.steps.is_some() || req.context.is_some();
    Ok(match content {
        Content::Semantic(mut c) => {
            if has_episode || has_procedure {
                return Err(wrong("text, query, steps or context", kind));
            }
            for (k, v) in &req.set_facts {
                c.facts.insert(k.clone(), v.clone());
            }
            for k in &req.unset_facts {
                if c.facts.shift_remove(k).is_none() {
                    return Err(strata_core::Error::invalid(format!("'{}' has no fact named '{k}'", c.key)));
                }
            }
            Content::Semantic(Concept { key: c.key, facts: c.facts })
        }
        Content::Episodic(mut e) => {
            if has_facts || has_procedure {
                return Err(wrong("facts, steps or context", kind));
            }
            e.body = match e.body {
                EpisodeBody::Exchange { query, response } => EpisodeBody::Exchange {
                    query: req.query.clone().unwrap_or(query),
                    response: req.text.clone().unwrap_or(response),
                },
                EpisodeBody::Utterance { speaker, text } => {
                    if req.query.is_some() {
                        return Err(strata_core::Error::invalid("an utterance has no query; set its text"));
                    }
                    EpisodeBody::Utterance { speaker, text: req.text.clone().unwrap_or(text) }
                }
            };
            Content::Episodic(Episode { ..e })
        }
        Content::Procedural(p) => {
            if has_facts || has_episode {
                return Err(wrong("facts, text or query", kind));
            }
            Content::Procedural(Procedure {
                name: p.name,
                steps: req.steps.clone().unwrap_or(p.steps),
                context: req.context.clone().or(p.context),
            })
        }
    })
}
