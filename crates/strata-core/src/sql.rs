//! The SQL both engines share: a filter's conditions, and the statements of lists, counts and
//! sessions, written once with `?` placeholders and each engine's few differences
//! ([`Dialect`]); each engine binds and runs them with its own driver.

use crate::clock::to_ms;
use crate::error::Result;
use crate::query::{Filter, IMPORTED_APPS, Order, Origin, decode_cursor};

/// A value bound to a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SqlValue {
    Text(String),
    Int(i64),
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Real(f64),
    /// An embedding (a blob of little-endian f32 on SQLite, pgvector's `vector` on PostgreSQL).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Vector(Vec<f32>),
    /// NULL, in a column of any type.
    Null,
}

impl SqlValue {
    /// Text, or NULL.
    pub(crate) fn opt_text(v: Option<impl Into<String>>) -> SqlValue {
        v.map_or(SqlValue::Null, |s| SqlValue::Text(s.into()))
    }

    /// A whole number, or NULL.
    pub(crate) fn opt_int(v: Option<i64>) -> SqlValue {
        v.map_or(SqlValue::Null, SqlValue::Int)
    }
}

/// Where the engines' SQL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

impl Dialect {
    /// The day (UTC, `YYYY-MM-DD`) of a column of milliseconds since the epoch.
    pub(crate) fn day_of_ms(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("date({column} / 1000, 'unixepoch')"),
            // Date arithmetic, not a time zone's conversion per row (3× faster on a million).
            Dialect::Postgres => {
                format!("to_char(DATE '1970-01-01' + floor({column} / 86400000.0)::int, 'YYYY-MM-DD')")
            }
        }
    }

    /// The Monday (`YYYY-MM-DD`) of the week of a `YYYY-MM-DD` text expression.
    pub(crate) fn monday_of(self, day: &str) -> String {
        match self {
            Dialect::Sqlite => format!("date({day}, 'weekday 0', '-6 days')"),
            Dialect::Postgres => format!("to_char(date_trunc('week', ({day})::date), 'YYYY-MM-DD')"),
        }
    }

    /// The text of field `field` of the JSON object stored as text in `column`.
    pub(crate) fn json_text(self, column: &str, field: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_extract({column}, '$.{field}')"),
            Dialect::Postgres => format!("({column}::jsonb ->> '{field}')"),
        }
    }
}

/// A statement being written: its text with `?` placeholders, and their values in order.
#[derive(Debug, Clone)]
pub(crate) struct Sql {
    pub text: String,
    pub values: Vec<SqlValue>,
    pub dialect: Dialect,
}

impl Sql {
    pub(crate) fn new(dialect: Dialect, text: impl Into<String>) -> Sql {
        Sql { text: text.into(), values: Vec::new(), dialect }
    }

    /// Appends text.
    pub(crate) fn push(&mut self, text: &str) -> &mut Sql {
        self.text.push_str(text);
        self
    }

    /// Appends text holding one `?`, and its value.
    pub(crate) fn bind(&mut self, text: &str, value: SqlValue) -> &mut Sql {
        self.text.push_str(text);
        self.values.push(value);
        self
    }

    /// Appends `?, ?, …` holding `values` (nothing for none).
    pub(crate) fn bind_list(&mut self, values: impl IntoIterator<Item = SqlValue>) -> &mut Sql {
        for (i, v) in values.into_iter().enumerate() {
            self.bind(if i == 0 { "?" } else { ", ?" }, v);
        }
        self
    }

    /// The text as the engine writes placeholders: `?` for SQLite, `$1`, `$2`, … for PostgreSQL
    /// (the statements hold no `?` but placeholders).
    pub(crate) fn text(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => self.text.clone(),
            Dialect::Postgres => {
                let mut out = String::with_capacity(self.text.len() + 8);
                let mut n = 0;
                for c in self.text.chars() {
                    if c == '?' {
                        n += 1;
                        out.push_str(&format!("${n}"));
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }
}

impl Filter {
    /// The filter's conditions on `memories AS m`, each ` AND …`.
    pub(crate) fn push_sql(&self, q: &mut Sql) {
        let text = |s: &str| SqlValue::Text(s.to_string());
        push_in(q, "m.kind", self.kinds.iter().map(|k| k.as_str()));
        push_in(q, "m.tier", self.tiers.iter().map(|t| t.as_str()));
        for (col, v) in [("user_id", &self.user_id), ("agent_id", &self.agent_id), ("session_id", &self.session_id)] {
            if let Some(v) = v {
                q.bind(&format!(" AND m.{col} = ?"), text(v));
            }
        }
        if !self.include_expired {
            q.push(" AND m.expired_at IS NULL");
        }
        if self.without_concepts {
            q.push(&format!(" AND (m.key IS NULL OR m.key NOT LIKE '{}%')", crate::concepts::KEY_PREFIX));
        }
        if let Some(a) = &self.visible_to_agent {
            q.bind(" AND (m.agent_id IS NULL OR m.agent_id = ?)", text(a));
        }
        for t in &self.tags {
            q.bind(" AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = ?)", text(t.trim()));
        }
        if let Some(s) = self.since {
            q.bind(" AND m.occurred_at >= ?", SqlValue::Int(to_ms(s)));
        }
        if let Some(u) = self.until {
            q.bind(" AND m.occurred_at < ?", SqlValue::Int(to_ms(u)));
        }
        let (app, provider) = (q.dialect.json_text("m.source", "app"), q.dialect.json_text("m.source", "provider"));
        let imported = format!("{app} IN ('{}', '{}')", IMPORTED_APPS[0], IMPORTED_APPS[1]);
        let condition = match self.origin {
            None => return,
            Some(Origin::Imported) => imported.clone(),
            Some(Origin::Conversation) => format!("{provider} IS NOT NULL"),
            Some(Origin::Tool) => format!("{provider} IS NULL AND {app} LIKE 'mcp%'"),
            Some(Origin::Person) => format!("{provider} IS NULL AND {app} NOT LIKE 'mcp%' AND NOT {imported}"),
        };
        q.push(&format!(" AND {condition}"));
    }
}

/// Appends ` AND col IN (?, …)` for a non-empty set of names.
fn push_in<'a>(q: &mut Sql, col: &str, names: impl Iterator<Item = &'a str>) {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        return;
    }
    q.push(&format!(" AND {col} IN ({})", vec!["?"; names.len()].join(", ")));
    q.values.extend(names.into_iter().map(|n| SqlValue::Text(n.to_string())));
}

/// Every memory of one scope (`user_id`'s shared ones, or `agent_id`'s private ones), in the
/// order they happened; `columns` are the engine's memory columns.
pub(crate) fn scope(user_id: &str, agent_id: Option<&str>, columns: &str, dialect: Dialect) -> Sql {
    let mut q = Sql::new(dialect, format!("SELECT {columns} FROM memories AS m WHERE "));
    q.bind("m.user_id = ?", SqlValue::Text(user_id.into()));
    match agent_id {
        Some(a) => q.bind(" AND m.agent_id = ?", SqlValue::Text(a.into())),
        None => q.push(" AND m.agent_id IS NULL"),
    };
    q.push(" ORDER BY m.occurred_at, m.id");
    q
}

/// How many memories match `filter`.
pub(crate) fn count(filter: &Filter, dialect: Dialect) -> Sql {
    let mut q = Sql::new(dialect, "SELECT count(*) FROM memories AS m WHERE 1 = 1");
    filter.push_sql(&mut q);
    q
}

/// A page of a list in `order` after `cursor`, one more than `limit` (to know whether another
/// page follows); `columns` are the engine's memory columns.
pub(crate) fn list(
    filter: &Filter,
    order: Order,
    limit: usize,
    cursor: Option<&str>,
    columns: &str,
    dialect: Dialect,
) -> Result<Sql> {
    let mut q = Sql::new(dialect, format!("SELECT {columns} FROM memories AS m WHERE 1 = 1"));
    filter.push_sql(&mut q);
    let col = order.column();
    if let Some(c) = cursor {
        let (ms, id) = decode_cursor(c, order)?;
        q.bind(&format!(" AND ({col}, m.id) < (?"), SqlValue::Int(ms)).bind(", ?)", SqlValue::Text(id));
    }
    q.bind(&format!(" ORDER BY {col} DESC, m.id DESC LIMIT ?"), SqlValue::Int(limit as i64 + 1));
    Ok(q)
}

/// The sessions whose id starts with `prefix` holding memories that match `filter`: (id,
/// count, first and last time), the one used last first.
pub(crate) fn sessions(filter: &Filter, prefix: &str, limit: usize, dialect: Dialect) -> Sql {
    let mut q = Sql::new(
        dialect,
        "SELECT m.session_id, count(*), min(m.occurred_at), max(m.occurred_at) FROM memories AS m \
         WHERE m.session_id IS NOT NULL",
    );
    // The length as an integer on both engines (PostgreSQL's substr takes an int4).
    q.bind(
        " AND substr(m.session_id, 1, CAST(CAST(? AS BIGINT) AS INTEGER))",
        SqlValue::Int(prefix.chars().count() as i64),
    )
    .bind(" = ?", SqlValue::Text(prefix.to_string()));
    filter.push_sql(&mut q);
    q.bind(
        " GROUP BY m.session_id ORDER BY max(m.occurred_at) DESC, m.session_id DESC LIMIT ?",
        SqlValue::Int(limit.clamp(1, 1000) as i64),
    );
    q
}

/// One row as [`crate::storage::PlainSql`] reads it, decoded by column: each accessor names the
/// table in its error, so a damaged row says where it is.
pub(crate) struct Row<'a> {
    values: Vec<Option<SqlValue>>,
    table: &'a str,
}

impl<'a> Row<'a> {
    pub(crate) fn new(values: Vec<Option<SqlValue>>, table: &'a str) -> Row<'a> {
        Row { values, table }
    }

    fn bad(&self, i: usize, wanted: &str) -> crate::error::Error {
        crate::error::Error::Corrupt(format!(
            "a row of {} holds {:?} in column {} where {wanted} belongs",
            self.table,
            self.values.get(i),
            i + 1
        ))
    }

    /// Column `i` as text, if not NULL.
    pub(crate) fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.values.get(i) {
            Some(None) => Ok(None),
            Some(Some(SqlValue::Text(s))) => Ok(Some(s.clone())),
            _ => Err(self.bad(i, "text")),
        }
    }

    /// Column `i` as text.
    pub(crate) fn text(&self, i: usize) -> Result<String> {
        self.opt_text(i)?.ok_or_else(|| self.bad(i, "text"))
    }

    /// Column `i` as a whole number, if not NULL.
    pub(crate) fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.values.get(i) {
            Some(None) => Ok(None),
            Some(Some(SqlValue::Int(n))) => Ok(Some(*n)),
            _ => Err(self.bad(i, "a whole number")),
        }
    }

    /// Column `i` as a whole number.
    pub(crate) fn int(&self, i: usize) -> Result<i64> {
        self.opt_int(i)?.ok_or_else(|| self.bad(i, "a whole number"))
    }

    /// Column `i` as a number (a whole one read as it is), if not NULL.
    pub(crate) fn opt_real(&self, i: usize) -> Result<Option<f64>> {
        match self.values.get(i) {
            Some(None) => Ok(None),
            Some(Some(SqlValue::Real(x))) => Ok(Some(*x)),
            Some(Some(SqlValue::Int(n))) => Ok(Some(*n as f64)),
            _ => Err(self.bad(i, "a number")),
        }
    }

    /// Column `i` as a number.
    pub(crate) fn real(&self, i: usize) -> Result<f64> {
        self.opt_real(i)?.ok_or_else(|| self.bad(i, "a number"))
    }

    /// Column `i` as a count (a whole number, none below 0).
    pub(crate) fn count(&self, i: usize) -> Result<u64> {
        Ok(self.opt_int(i)?.unwrap_or(0).max(0) as u64)
    }

    /// Column `i` as a flag (a whole number, 0 false; NULL false).
    pub(crate) fn flag(&self, i: usize) -> Result<bool> {
        Ok(self.opt_int(i)?.is_some_and(|n| n != 0))
    }

    /// Column `i` parsed from its text (an id, a name of a kind), said as the table's when it
    /// does not parse.
    pub(crate) fn parsed<T: std::str::FromStr>(&self, i: usize) -> Result<T>
    where
        T::Err: std::fmt::Display,
    {
        let text = self.text(i)?;
        text.parse().map_err(|e| {
            crate::error::Error::Corrupt(format!("a row of {} holds {text:?} in column {}: {e}", self.table, i + 1))
        })
    }

    /// Column `i`'s JSON text, decoded.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(&self, i: usize) -> Result<T> {
        serde_json::from_str(&self.text(i)?).map_err(|e| {
            crate::error::Error::Corrupt(format!(
                "a row of {} holds JSON that does not parse in column {}: {e}",
                self.table,
                i + 1
            ))
        })
    }
}
