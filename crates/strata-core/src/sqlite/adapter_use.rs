//! Adapters in use, watched: which answered what (`adapter_answers`), their use by day with
//! what people said of their answers, and the training schedule's record (`schedule_log`).

use crate::clock::{from_ms, to_ms};
use crate::error::Result;
use crate::store::Store;
use rusqlite::params;

use crate::adapters::{AdapterDay, ScheduleEntry};

impl Store {
    /// Records that adapter `id` answered a question whose similarity to its facts was `score`
    /// (`answer`: the recorded answer, when it was recorded).
    pub fn record_adapter_answer(&mut self, id: &str, score: f32, answer: Option<&str>) -> Result<()> {
        self.adapter(id)?;
        self.sqlite()?.execute(
            "INSERT INTO adapter_answers (adapter_id, at, score, answer_id) VALUES (?1, ?2, ?3, ?4)",
            params![id, to_ms(self.clock().now()), f64::from(score), answer],
        )?;
        Ok(())
    }

    /// Adapter `id`'s use by day (UTC), oldest first: answers it gave, and of those the ones
    /// people marked helpful or wrong (an answer's latest mark counts).
    pub fn adapter_days(&self, id: &str) -> Result<Vec<AdapterDay>> {
        self.adapter(id)?;
        let mut stmt = self.sqlite()?.prepare_cached(
            "SELECT date(x.at / 1000, 'unixepoch') AS day, COUNT(*), \
                    COALESCE(SUM(f.helpful = 1), 0), COALESCE(SUM(f.helpful = 0), 0) \
             FROM adapter_answers x LEFT JOIN feedback f ON f.id = (SELECT MAX(id) FROM feedback l \
                  WHERE l.memory_id = x.answer_id AND l.about = 'answer') \
             WHERE x.adapter_id = ?1 GROUP BY day ORDER BY day",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(AdapterDay {
                day: r.get(0)?,
                chosen: r.get::<_, i64>(1)? as u64,
                helpful: r.get::<_, i64>(2)? as u64,
                wrong: r.get::<_, i64>(3)? as u64,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Adds an entry to the training schedule's record.
    pub fn log_schedule(&mut self, kind: &str, adapter: Option<&str>, detail: &serde_json::Value) -> Result<i64> {
        let c = self.sqlite()?;
        c.execute(
            "INSERT INTO schedule_log (at, kind, adapter_id, detail) VALUES (?1, ?2, ?3, ?4)",
            params![to_ms(self.clock().now()), kind, adapter, detail.to_string()],
        )?;
        Ok(c.last_insert_rowid())
    }

    /// The training schedule's record, newest first, at most `limit` entries.
    pub fn schedule_log(&self, limit: usize) -> Result<Vec<ScheduleEntry>> {
        let mut stmt = self
            .sqlite()?
            .prepare_cached("SELECT seq, at, kind, adapter_id, detail FROM schedule_log ORDER BY seq DESC LIMIT ?1")?;
        let rows = stmt.query_map([limit as i64], |r| {
            let detail: String = r.get(4)?;
            Ok(ScheduleEntry {
                seq: r.get(0)?,
                at: from_ms(r.get(1)?),
                kind: r.get(2)?,
                adapter_id: r.get(3)?,
                detail: serde_json::from_str(&detail).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
