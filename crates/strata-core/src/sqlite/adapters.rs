//! SQLite's side of `crate::adapters`: its statements and row decoding.

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::store::Store;
use rusqlite::{OptionalExtension, params};
use std::path::PathBuf;

use crate::adapters::*;

const COLUMNS: &str = "id, created_at, base_model, base_hash, dataset_hash, sources, hyperparameters, metrics, \
                       passed, status, path, bytes";

fn json(text: &str) -> rusqlite::Result<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AdapterRecord> {
    let sources: String = r.get(5)?;
    let status: String = r.get(9)?;
    let metrics: Option<String> = r.get(7)?;
    Ok(AdapterRecord {
        id: r.get(0)?,
        created_at: from_ms(r.get(1)?),
        base_model: r.get(2)?,
        base_hash: r.get(3)?,
        dataset_hash: r.get(4)?,
        sources: serde_json::from_value(json(&sources)?).unwrap_or_default(),
        hyperparameters: json(&r.get::<_, String>(6)?)?,
        metrics: metrics.as_deref().map(json).transpose()?,
        passed: r.get(8)?,
        status: status.parse().map_err(|e: Error| {
            rusqlite::Error::FromSqlConversionFailure(9, rusqlite::types::Type::Text, e.to_string().into())
        })?,
        path: PathBuf::from(r.get::<_, String>(10)?),
        bytes: r.get::<_, i64>(11)? as u64,
    })
}

impl Store {
    fn adapter_event(&self, id: &str, kind: &str, detail: serde_json::Value) -> Result<()> {
        self.sqlite()?.execute(
            "INSERT INTO adapter_events (adapter_id, at, kind, detail) VALUES (?1, ?2, ?3, ?4)",
            params![id, to_ms(self.clock().now()), kind, detail.to_string()],
        )?;
        Ok(())
    }

    /// A fresh adapter id (`ad_` and a lower-case ULID).
    pub fn new_adapter_id(&self) -> String {
        format!("ad_{}", crate::event::new_event_id(self.clock().as_ref()).to_lowercase())
    }

    /// Registers a trained adapter as a candidate (with its `trained` event).
    pub fn register_adapter(&mut self, new: NewAdapter) -> Result<AdapterRecord> {
        let id = new.id.clone();
        if !id.starts_with("ad_") || id.len() > 64 {
            return Err(Error::invalid(format!("'{id}' is not an adapter id")));
        }
        let tx = self.sqlite()?.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO adapters (id, created_at, base_model, base_hash, dataset_hash, sources, hyperparameters, \
             status, path, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'candidate', ?8, ?9)",
            params![
                id,
                to_ms(self.clock().now()),
                new.base_model,
                new.base_hash,
                new.dataset_hash,
                serde_json::to_string(&new.sources).unwrap_or_default(),
                new.hyperparameters.to_string(),
                new.path.to_string_lossy(),
                new.bytes as i64
            ],
        )?;
        // Forgetting wins over a run in flight: an adapter is registered only while no memory
        // it learned from has been forgotten (its writer deletes its files otherwise). A source
        // this store never held (the shipped example facts) is no one's memory to forget.
        for source in &new.sources {
            let Ok(memory) = source.parse::<crate::model::MemoryId>() else { continue };
            if crate::sqlite::rows::load(&tx, memory)?.is_none()
                && let forgotten @ Error::Forgotten { .. } = crate::sqlite::rows::forgotten_error(&tx, memory)?
            {
                return Err(forgotten);
            }
        }
        self.adapter_event(&id, "trained", new.trained)?;
        tx.commit()?;
        self.adapter(&id)
    }

    /// One adapter; an unknown id is an error that says so.
    pub fn adapter(&self, id: &str) -> Result<AdapterRecord> {
        self.sqlite()?
            .query_row(&format!("SELECT {COLUMNS} FROM adapters WHERE id = ?1"), [id], row)
            .optional()?
            .ok_or_else(|| Error::invalid(format!("no adapter {id} (`strata train list` shows them)")))
    }

    /// Every adapter, newest first.
    pub fn adapters(&self) -> Result<Vec<AdapterRecord>> {
        let mut stmt =
            self.sqlite()?.prepare(&format!("SELECT {COLUMNS} FROM adapters ORDER BY created_at DESC, id DESC"))?;
        let rows = stmt.query_map([], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The adapters in use (the on-device model chooses among them per question), in the
    /// order they were put in use.
    pub fn adapters_in_use(&self) -> Result<Vec<AdapterRecord>> {
        // Adapters stay with the desktop's SQLite file: none is in use on a server's store.
        if !self.keeps_training() {
            return Ok(Vec::new());
        }
        let mut stmt = self.sqlite()?.prepare(&format!(
            "SELECT {COLUMNS} FROM adapters a WHERE status = 'active' ORDER BY \
             (SELECT MAX(seq) FROM adapter_events e WHERE e.adapter_id = a.id AND e.kind = 'activated'), id"
        ))?;
        let rows = stmt.query_map([], row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// An adapter's events, oldest first.
    pub fn adapter_history(&self, id: &str) -> Result<Vec<AdapterEvent>> {
        self.adapter(id)?;
        let mut stmt = self.sqlite()?.prepare(
            "SELECT seq, adapter_id, at, kind, detail FROM adapter_events WHERE adapter_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(AdapterEvent {
                    seq: r.get(0)?,
                    adapter_id: r.get(1)?,
                    at: from_ms(r.get(2)?),
                    kind: r.get(3)?,
                    detail: json(&r.get::<_, String>(4)?)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Stores an adapter's evaluation report and whether it passed the gate.
    pub fn record_evaluation(&mut self, id: &str, metrics: &serde_json::Value, passed: bool) -> Result<AdapterRecord> {
        self.adapter(id)?;
        let tx = self.sqlite()?.unchecked_transaction()?;
        // Retired meanwhile (forget retires an adapter trained on a memory and strips its
        // report's rows, which quote it): the report of an evaluation in flight is not kept.
        let kept = tx.execute(
            "UPDATE adapters SET metrics = ?2, passed = ?3 WHERE id = ?1 AND status != 'retired'",
            params![id, metrics.to_string(), passed],
        )?;
        if kept == 0 {
            return Err(Error::invalid(format!(
                "adapter {id} was retired while it was evaluated (a memory it learned from may have been forgotten); its report was not kept"
            )));
        }
        self.adapter_event(id, "evaluated", serde_json::json!({ "passed": passed }))?;
        tx.commit()?;
        self.adapter(id)
    }

    /// Puts `id` in use instead of every adapter in use (they become candidates). An adapter
    /// that failed or never had the gate is refused unless `force`; a retired one always is.
    pub fn activate_adapter(&mut self, id: &str, force: bool) -> Result<AdapterRecord> {
        self.put_in_use(id, force, false)
    }

    /// Puts `id` in use beside the adapters in use (one per topic; each question picks one or
    /// none). They must all be trained on the same model: it is the one that answers.
    pub fn use_alongside(&mut self, id: &str, force: bool) -> Result<AdapterRecord> {
        self.put_in_use(id, force, true)
    }

    fn put_in_use(&mut self, id: &str, force: bool, alongside: bool) -> Result<AdapterRecord> {
        let a = self.adapter(id)?;
        match (a.status, a.passed) {
            (AdapterStatus::Active, _) if alongside => return Ok(a),
            (AdapterStatus::Active, _) if self.adapters_in_use()?.len() == 1 => return Ok(a),
            (AdapterStatus::Active, _) => {}
            (AdapterStatus::Retired, _) => {
                return Err(Error::invalid(format!("adapter {id} is retired; train a new one")));
            }
            (_, Some(true)) => {}
            (_, _) if force => {}
            (_, None) => {
                return Err(Error::invalid(format!(
                    "adapter {id} has not been evaluated; run `strata train eval {id}` first (or force it)"
                )));
            }
            (_, Some(false)) => {
                return Err(Error::invalid(format!(
                    "adapter {id} failed its evaluation; activating it anyway needs --force"
                )));
            }
        }
        let in_use = self.adapters_in_use()?;
        if alongside && let Some(other) = in_use.iter().find(|o| o.base_model != a.base_model) {
            return Err(Error::invalid(format!(
                "adapter {id} was trained on {}, but {} in use was trained on {}: adapters in use together must be \
                 trained on the same model (use it instead of them, or train it again on {})",
                a.base_model, other.id, other.base_model, other.base_model
            )));
        }
        let tx = self.sqlite()?.unchecked_transaction()?;
        for prev in in_use.iter().filter(|p| !alongside && p.id != id) {
            tx.execute("UPDATE adapters SET status = 'candidate' WHERE id = ?1", [&prev.id])?;
            self.adapter_event(&prev.id, "deactivated", serde_json::json!({ "replaced_by": id }))?;
        }
        if a.status != AdapterStatus::Active {
            tx.execute("UPDATE adapters SET status = 'active' WHERE id = ?1", [id])?;
            let forced = force && a.passed != Some(true);
            self.adapter_event(id, "activated", serde_json::json!({ "forced": forced, "alongside": alongside }))?;
        }
        tx.commit()?;
        self.adapter(id)
    }

    /// Rolls back adapter `id` in use (none named: the one in use, when only one is): it is
    /// retired, and the adapters it replaced are in use again if they are still candidates.
    /// `why` goes into its history (a person's rollback, or the daily check's). Returns the
    /// adapters put back in use.
    pub fn rollback_adapter(&mut self, id: Option<&str>, why: &str) -> Result<Vec<AdapterRecord>> {
        let in_use = self.adapters_in_use()?;
        let current = match (id, in_use.as_slice()) {
            (_, []) => return Err(Error::invalid("no adapter is in use; there is nothing to roll back")),
            (None, [only]) => only.clone(),
            (None, _) => {
                return Err(Error::invalid(format!(
                    "{} adapters are in use; name the one to roll back ({})",
                    in_use.len(),
                    in_use.iter().map(|a| a.id.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
            (Some(id), _) => match in_use.iter().find(|a| a.id == id) {
                Some(a) => a.clone(),
                None => {
                    return Err(Error::invalid(format!("adapter {id} is not in use; there is nothing to roll back")));
                }
            },
        };
        // The adapters this one replaced (their last deactivation names it), still candidates.
        let previous: Vec<String> = self
            .sqlite()?
            .prepare(
                "SELECT e.adapter_id FROM adapter_events e JOIN adapters a ON a.id = e.adapter_id \
                 WHERE e.kind = 'deactivated' AND json_extract(e.detail, '$.replaced_by') = ?1 \
                 AND a.status = 'candidate' AND e.seq = (SELECT MAX(seq) FROM adapter_events l \
                 WHERE l.adapter_id = e.adapter_id AND l.kind IN ('deactivated', 'activated')) ORDER BY e.seq",
            )?
            .query_map([&current.id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let tx = self.sqlite()?.unchecked_transaction()?;
        tx.execute("UPDATE adapters SET status = 'retired' WHERE id = ?1", [&current.id])?;
        self.adapter_event(&current.id, "rolled_back", serde_json::json!({ "restored": previous, "why": why }))?;
        for p in &previous {
            tx.execute("UPDATE adapters SET status = 'active' WHERE id = ?1", [p])?;
            self.adapter_event(p, "activated", serde_json::json!({ "by": "rollback" }))?;
        }
        tx.commit()?;
        previous.iter().map(|p| self.adapter(p)).collect()
    }

    /// Retires an adapter a person no longer wants (it can never be activated again; its files
    /// stay). The adapter in use is refused: roll it back first.
    pub fn retire_adapter(&mut self, id: &str) -> Result<AdapterRecord> {
        let a = self.adapter(id)?;
        match a.status {
            AdapterStatus::Retired => return Ok(a),
            AdapterStatus::Active => {
                return Err(Error::invalid(format!("adapter {id} is in use; roll it back first")));
            }
            AdapterStatus::Candidate => {}
        }
        let tx = self.sqlite()?.unchecked_transaction()?;
        tx.execute("UPDATE adapters SET status = 'retired' WHERE id = ?1", [id])?;
        self.adapter_event(id, "retired", serde_json::json!({ "reason": "retired by a person" }))?;
        tx.commit()?;
        self.adapter(id)
    }

    /// Deletes the training sets written beside the database (`strata train dataset`'s and every
    /// run's, in [`adapters_root`]`/datasets`) that name any of `forgotten` as a source, with
    /// the checkpoints of runs on them (`checkpoints/` under the set's name): they quote or
    /// learned its words (called after the forgetting commits). Returns how many sets.
    pub fn delete_forgotten_training_sets(&self, forgotten: &[crate::model::MemoryId]) -> Result<usize> {
        let Some(db) = self.path() else { return Ok(0) };
        let dir = adapters_root(db).join("datasets");
        let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(0) };
        let ids: Vec<String> = forgotten.iter().map(ToString::to_string).collect();
        let mut deleted = 0;
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()) {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io(format!("cannot read the training set {}", path.display()), e))?;
            if ids.iter().any(|id| text.contains(id.as_str())) {
                std::fs::remove_file(&path)
                    .map_err(|e| Error::io(format!("cannot delete the training set {}", path.display()), e))?;
                // The checkpoints of a run on this set (named as it is) learned its words too.
                let checkpoints = path.file_stem().map(|stem| adapters_root(db).join("checkpoints").join(stem));
                if let Some(c) = checkpoints.filter(|c| c.is_dir()) {
                    std::fs::remove_dir_all(&c)
                        .map_err(|e| Error::io(format!("cannot delete the checkpoints in {}", c.display()), e))?;
                }
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Deletes the files of adapters retired because a source memory was forgotten (called
    /// after the forgetting commits). Returns how many folders were deleted.
    pub fn delete_forgotten_adapter_files(&mut self) -> Result<usize> {
        let retired: Vec<String> = self
            .sqlite()?
            .prepare(
                "SELECT DISTINCT a.path FROM adapters a JOIN adapter_events e ON e.adapter_id = a.id \
                      WHERE a.status = 'retired' AND e.kind = 'retired' \
                      AND json_extract(e.detail, '$.memory') IS NOT NULL",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut deleted = 0;
        for path in retired.iter().map(PathBuf::from).filter(|p| p.exists()) {
            std::fs::remove_dir_all(&path)
                .map_err(|e| Error::io(format!("cannot delete the adapter files in {}", path.display()), e))?;
            deleted += 1;
        }
        Ok(deleted)
    }
}

impl Store {
    /// Records a check of adapter `id`.
    pub fn record_adapter_check(&mut self, id: &str, check: &AdapterCheck) -> Result<()> {
        self.adapter(id)?;
        self.sqlite()?.execute(
            "INSERT INTO adapter_checks (adapter_id, at, recall, questions, changed, gone) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                id,
                to_ms(check.at),
                check.recall,
                check.questions as i64,
                check.changed as i64,
                check.gone as i64
            ],
        )?;
        Ok(())
    }

    /// Adapter `id`'s checks, oldest first.
    pub fn adapter_checks(&self, id: &str) -> Result<Vec<AdapterCheck>> {
        let mut stmt = self.sqlite()?.prepare_cached(
            "SELECT at, recall, questions, changed, gone FROM adapter_checks WHERE adapter_id = ?1 ORDER BY at, id",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(AdapterCheck {
                at: from_ms(r.get(0)?),
                recall: r.get(1)?,
                questions: r.get::<_, i64>(2)? as u64,
                changed: r.get::<_, i64>(3)? as u64,
                gone: r.get::<_, i64>(4)? as u64,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
