//! Forget: a memory's content erased everywhere it is kept, derived data too, in one
//! transaction (`StoreTx::forget`), then the erased bytes checkpointed out of every file
//! (`Store::scrub`, finished in the background when another process's read holds them).

use std::path::Path;

use crate::error::Result;
use crate::event::{Change, EventMeta, Expected};
use crate::model::MemoryId;
pub use crate::sqlite::forget::finish_scrub;
use crate::storage::Log;
use crate::store::{NewMemory, Store, StoreTx};

/// Every column outside `memories` that names a memory on both engines, and what forget does
/// to its rows (table, column, what happens). Each engine's schema test reads its catalogue
/// and fails on a column named as a memory's that this list and the engine's own lack.
pub const FORGET_COVERS: &[(&str, &str, &str)] = &[
    ("events", "stream_id", "payloads erased, a `forgotten` event appended"),
    ("memory_tags", "memory_id", "deleted with the projection"),
    ("memory_links", "source_id", "deleted with the projection"),
    ("memory_links", "target_id", "the linking memories re-projected or forgotten by the cascade"),
    ("memory_vectors", "memory_id", "deleted with the projection"),
    ("extraction_reads", "episode_id", "deleted"),
    ("extraction_decisions", "target_id", "deleted"),
    ("extraction_decisions", "sources", "deleted"),
    ("recalls", "answer_id", "deleted"),
    ("recall_hits", "memory_id", "deleted with their recall"),
    ("feedback", "memory_id", "deleted"),
];

/// What `forget` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgetOutcome {
    /// Earlier events whose payloads were erased.
    pub redacted_events: u64,
    /// The adapters trained from the memory, retired by the same transaction (their files
    /// deleted): what they learned from it is gone too.
    pub retired_adapters: Vec<String>,
    /// Facts extracted from it alone (or whose earlier values were), forgotten with it.
    pub derived: Vec<MemoryId>,
    /// Whether the erased bytes have also left the files on disk. False only when another
    /// process kept reading for the whole wait; the next checkpoint (any later write burst,
    /// [`Store::checkpoint`], or closing the last connection) finishes the job.
    pub scrubbed: bool,
}

/// What one [`StoreTx::forget`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Forgot {
    /// Events whose payloads were erased (those of the facts forgotten with it included).
    pub redacted: u64,
    /// Adapters retired.
    pub retired: Vec<String>,
    /// Facts extracted from it, forgotten with it.
    pub derived: Vec<MemoryId>,
}

impl Store {
    /// Forgets a memory: erases its content from the log, the projections and the index, then
    /// checkpoints the WAL so the erased bytes leave every file. See [`ForgetOutcome`].
    pub fn forget(&mut self, id: MemoryId, meta: &EventMeta) -> Result<ForgetOutcome> {
        self.forget_all(&[id], meta)
    }

    /// [`Store::forget`] of several memories in one transaction (all or none), then one scrub.
    pub fn forget_all(&mut self, ids: &[MemoryId], meta: &EventMeta) -> Result<ForgetOutcome> {
        let redacted_events = self.transact(|tx| {
            let (mut n, mut retired, mut derived) = (0, Vec::new(), Vec::new());
            for id in ids {
                if derived.contains(id) {
                    continue; // already forgotten with a memory it was extracted from
                }
                let forgot = tx.forget(*id, meta)?;
                n += forgot.redacted;
                retired.extend(forgot.retired.into_iter().filter(|a| !retired.contains(a)).collect::<Vec<_>>());
                derived.extend(forgot.derived);
            }
            Ok((n, retired, derived))
        })?;
        let (redacted_events, retired_adapters, derived) = redacted_events;
        if self.keeps_training() {
            self.delete_forgotten_adapter_files()?;
            self.delete_forgotten_training_sets(&[ids, derived.as_slice()].concat())?;
        }
        let scrubbed = self.scrub()?;
        Ok(ForgetOutcome { redacted_events, retired_adapters, derived, scrubbed })
    }

    /// After forgetting in a transaction of one's own: drops the in-memory vector copy (it
    /// may hold a forgotten vector) and checkpoints the WAL so the erased bytes leave every
    /// file — waiting up to ~2 s for a reader in another process. Returns whether they left.
    ///
    /// While another process reads an older snapshot, the erased text stays where that
    /// snapshot needs it: in the database file itself and in earlier frames of its write-ahead
    /// log. Then a background thread ([`finish_scrub`]) keeps checkpointing from a connection of
    /// its own and completes the scrub as soon as that read ends (a process that exits first
    /// leaves it to the next checkpoint; the CLI hands it to a `strata scrub` process).
    ///
    /// On PostgreSQL it vacuums the tables forget wrote to, and returns whether no old row
    /// version is left (docs/security.md).
    pub fn scrub(&mut self) -> Result<bool> {
        *self.vector_cache.borrow_mut() = None;
        *self.dataset_vector_cache.borrow_mut() = None;
        #[cfg(feature = "postgres")]
        if let crate::storage::Engine::Postgres(pg) = &self.engine {
            return pg.vacuum_forgotten();
        }
        let mut scrubbed = self.checkpoint()?;
        for _ in 0..20 {
            if scrubbed {
                break;
            }
            scrubbed = self.checkpoint()?;
        }
        if let (false, Some(path)) = (scrubbed, self.path().map(Path::to_path_buf)) {
            std::thread::spawn(move || {
                if let Err(e) = finish_scrub(&path, SCRUB_PATIENCE) {
                    tracing::warn!("could not finish wiping forgotten content from {}: {e}", path.display());
                }
            });
        }
        Ok(scrubbed)
    }
}

/// How long a delayed scrub waits for another process's read to end.
pub const SCRUB_PATIENCE: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

impl StoreTx<'_> {
    /// Forgets a memory inside this transaction: redacts every payload of its stream, removes
    /// it from the projections and the index, appends `forgotten`, retires the adapters
    /// trained from it, drops extraction's records of it and the agents' runs that quote it. What was extracted from it goes
    /// too: a fact whose current value rests on it alone, or any of whose earlier values did
    /// (its history holds them), is forgotten with it; a fact also said elsewhere only loses
    /// the link to it.
    pub fn forget(&mut self, id: MemoryId, meta: &EventMeta) -> Result<Forgot> {
        self.current(id)?;
        let n = self.tx.redact_stream(id, self.clock.now())?;
        self.write_event(id, Expected::Any, Change::Forgotten { redacted_events: n }, meta)?;
        let mut out =
            Forgot { redacted: n, retired: self.tx.erase_records(id, self.clock.now())?, derived: Vec::new() };
        crate::agent_runs::erase_runs_quoting(self.tx.plain(), self.tx.dialect(), &id.to_string())?;
        for (concept, relation) in self.linking_to(id)? {
            if relation == crate::concepts::GROUPS {
                out.redacted += self.reform_without(concept, id, meta)?;
            }
        }
        for (fact, relation) in self.linking_to(id)? {
            use crate::extraction::{EARLIER_SOURCE, FACT_SOURCE};
            if relation != FACT_SOURCE && relation != EARLIER_SOURCE {
                continue;
            }
            let Some(m) = self.load(fact)? else { continue };
            let said_elsewhere = m.links.iter().any(|l| l.relation == FACT_SOURCE && l.target != id);
            if relation == FACT_SOURCE && said_elsewhere {
                self.unlink(fact, id, FACT_SOURCE, meta)?;
                continue;
            }
            let also = self.forget(fact, meta)?;
            out.redacted += also.redacted;
            out.retired.extend(also.retired.into_iter().filter(|a| !out.retired.contains(a)).collect::<Vec<_>>());
            out.derived.push(fact);
            out.derived.extend(also.derived);
        }
        Ok(out)
    }

    /// Re-forms concept `concept` without its forgotten member `member`: the concept (whose
    /// past versions quote the member) is forgotten, and one with the same key is created from
    /// what its other members said, linked to them — none when fewer than two are left.
    /// Returns the events redacted.
    fn reform_without(&mut self, concept: MemoryId, member: MemoryId, meta: &EventMeta) -> Result<u64> {
        use crate::concepts::{ConceptBody, GROUPS, members};
        let Some(c) = self.load(concept)? else { return Ok(0) };
        if c.expired_at.is_some() {
            // A dissolved concept quotes the member in its versions too; nothing to re-form.
            return Ok(self.forget(concept, meta)?.redacted);
        }
        let (Some(body), Some(key)) = (ConceptBody::read(&c), c.content.key().map(str::to_string)) else {
            return Ok(0);
        };
        let mut said = String::new();
        let mut rest = Vec::new();
        for m in members(&c).into_iter().filter(|m| *m != member) {
            if let Some(m) = self.load(m)? {
                let (title, body) = crate::model::search_text(&m.content);
                said.push_str(&format!("{title}\n{body}\n").to_lowercase());
                rest.push(m.id);
            }
        }
        let redacted = self.forget(concept, meta)?.redacted;
        if rest.len() >= 2 {
            let new = NewMemory {
                scope: c.scope.clone(),
                tags: c.tags.iter().cloned().collect(),
                importance: Some(c.importance),
                tier: Some(c.tier),
                source: c.source.clone(),
            };
            let formed = self.create(body.without(member, &said).content(&key), new, meta)?;
            for m in rest {
                self.link(formed.id, m, GROUPS, meta)?;
            }
        }
        Ok(redacted)
    }
}
