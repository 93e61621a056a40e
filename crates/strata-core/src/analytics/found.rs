//! The memories health lists (stale ones, ones without a vector) on either engine: each a
//! condition on `memories m` written once over [`crate::storage::PlainSql`], counted and then
//! listed oldest first.

use chrono::{DateTime, Utc};

use crate::clock::to_ms;
use crate::concepts::KEY_PREFIX;
use crate::error::Result;
use crate::model::{Importance, MemoryId};
use crate::sql::{Row, Sql, SqlValue};
use crate::store::Store;

/// A live memory (`memories m`) that no usage record shows recalled.
pub(crate) const NEVER_RECALLED: &str =
    "m.expired_at IS NULL AND NOT EXISTS (SELECT 1 FROM recall_hits h WHERE h.memory_id = m.id)";

impl Store {
    /// How many memories `condition` (appended to a statement on `memories m`) holds for, and
    /// the first `limit` of them, oldest first.
    fn counted(&self, condition: impl Fn(&mut Sql), limit: usize) -> Result<(u64, Vec<MemoryId>)> {
        let dialect = self.engine.dialect();
        let mut count = Sql::new(dialect, "SELECT count(*) FROM memories m WHERE ");
        condition(&mut count);
        let n = match self.engine.plain().rows(&count)?.pop() {
            Some(r) => Row::new(r, "memories").int(0)?,
            None => 0,
        };
        let mut list = Sql::new(dialect, "SELECT m.id FROM memories m WHERE ");
        condition(&mut list);
        list.bind(" ORDER BY m.created_at, m.id LIMIT ?", SqlValue::Int(limit.min(i64::MAX as usize) as i64));
        let ids = self.engine.plain().rows(&list)?;
        let ids = ids.into_iter().map(|r| Row::new(r, "memories").parsed(0)).collect::<Result<_>>()?;
        Ok((n.max(0) as u64, ids))
    }

    /// `user`'s stale memories: live, not pinned, not a concept, not marked important
    /// (importance at most the default), created before `before`, never retrieved and in no
    /// usage record of a recall — the oldest first. Returns how many there are and the first
    /// `limit`.
    pub fn stale(&self, user: &str, before: DateTime<Utc>, limit: usize) -> Result<(u64, Vec<MemoryId>)> {
        self.counted(
            |q| {
                q.bind("m.user_id = ?", SqlValue::Text(user.into()))
                    .bind(" AND m.created_at < ?", SqlValue::Int(to_ms(before)))
                    .bind(
                        " AND NOT m.pinned AND m.access_count = 0 AND m.importance <= ?",
                        SqlValue::Real(Importance::DEFAULT.get()),
                    )
                    .push(&format!(
                        " AND NOT (m.kind = 'semantic' AND m.key LIKE '{KEY_PREFIX}%') AND {NEVER_RECALLED}"
                    ));
            },
            limit,
        )
    }

    /// `user`'s live memories without a vector from `model`.
    pub fn unembedded(&self, user: &str, model: &str, limit: usize) -> Result<(u64, Vec<MemoryId>)> {
        self.counted(
            |q| {
                q.bind("m.user_id = ?", SqlValue::Text(user.into())).bind(
                    " AND m.expired_at IS NULL AND NOT EXISTS \
                     (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = ?)",
                    SqlValue::Text(model.into()),
                );
            },
            limit,
        )
    }
}
