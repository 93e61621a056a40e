//! SQLite's side of `crate::datasets` ([`DatasetStorage`]): keeping, listing, paging and
//! forgetting datasets. A
//! table's rows live in a table of their own (`dataset_rows_<rid>`, columns as the dataset
//! names them); every dataset's chunks in `dataset_chunks`, their words in `dataset_fts`,
//! their vectors in `dataset_vectors`. SQL over a table is `dataset_sql.rs`; search is
//! `dataset_search.rs`.

use std::path::Path;

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::clock::from_ms;
use crate::datasets::keeping::{DatasetStorage, rows_table};
use crate::datasets::{Cell, Chunk, Column, Dataset, DatasetKind, Loaded, NewDataset, Place, SqlAnswer, SqlLimits};
use crate::error::{Error, Result};
use crate::sqlite::Db;

const COLUMNS: &str = "d.rid, d.id, d.name, d.kind, d.source, d.format, d.digest, d.loaded_at, d.updated_at, \
                       d.columns, d.sections, d.row_count, d.chunk_count, d.notes";

fn json<T: serde::de::DeserializeOwned>(i: usize, text: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Storage(e.to_string()))
}

/// A dataset's row (its `embedded` count is filled in by the caller).
fn dataset_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, Dataset)> {
    let kind: String = r.get(3)?;
    Ok((
        r.get(0)?,
        Dataset {
            id: r.get(1)?,
            name: r.get(2)?,
            kind: DatasetKind::parse(&kind).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, e.to_string().into())
            })?,
            source: r.get(4)?,
            format: r.get(5)?,
            digest: r.get(6)?,
            loaded_at: from_ms(r.get(7)?),
            updated_at: from_ms(r.get(8)?),
            columns: json(9, &r.get::<_, String>(9)?)?,
            sections: json(10, &r.get::<_, String>(10)?)?,
            rows: r.get::<_, i64>(11)? as u64,
            chunks: r.get::<_, i64>(12)? as u64,
            embedded: 0,
            notes: json(13, &r.get::<_, String>(13)?)?,
        },
    ))
}

pub(crate) fn to_value(c: &Cell) -> Value {
    match c {
        Cell::Null => Value::Null,
        Cell::Int(i) => Value::Integer(*i),
        Cell::Real(x) => Value::Real(*x),
        Cell::Text(t) => Value::Text(t.clone()),
    }
}

pub(crate) fn to_cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(x) => Cell::Real(x),
        ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Cell::Text(format!("({} bytes)", b.len())),
    }
}

impl DatasetStorage for Db {
    fn find(&self, user: &str, name: &str) -> Result<Option<(i64, Dataset)>> {
        find(self, user, name)
    }

    fn list(&self, user: &str) -> Result<Vec<(i64, Dataset)>> {
        let mut stmt = self.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM datasets AS d WHERE d.user_id = ?1 AND d.name NOT LIKE '~%' ORDER BY d.name"
        ))?;
        Ok(stmt.query_map([user], dataset_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn owners(&self) -> Result<Vec<String>> {
        let mut stmt =
            self.prepare_cached("SELECT DISTINCT user_id FROM datasets WHERE name NOT LIKE '~%' ORDER BY user_id")?;
        Ok(stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn embedded(&self, rid: i64, model: &str) -> Result<u64> {
        let n: i64 = self
            .prepare_cached(
                "SELECT count(*) FROM dataset_vectors v JOIN dataset_chunks c ON c.rid = v.chunk_rid \
                 WHERE c.dataset_rid = ?1 AND v.model = ?2",
            )?
            .query_row(params![rid, model], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn keep(&self, user: &str, new: &NewDataset, now: i64, id: &str) -> Result<(Dataset, Loaded)> {
        crate::sqlite::dataset_load::keep(self, user, new, now, id)
    }

    fn rows(&self, rid: i64, columns: &[Column], offset: u64, limit: usize) -> Result<Vec<Vec<Cell>>> {
        let names: Vec<String> = columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
        let sql =
            format!("SELECT {} FROM {} ORDER BY row_number LIMIT ?1 OFFSET ?2", names.join(", "), rows_table(rid));
        let mut stmt = self.prepare(&sql)?;
        let n = names.len();
        let rows = stmt.query_map(params![i64::try_from(limit).unwrap_or(i64::MAX), offset as i64], |r| {
            (0..n).map(|i| Ok(to_cell(r.get_ref(i)?))).collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn chunks(&self, rid: i64, offset: u64, limit: usize) -> Result<Vec<Chunk>> {
        let mut stmt = self.prepare_cached(
            "SELECT text, page, heading, line_start, line_end, row_number FROM dataset_chunks \
             WHERE dataset_rid = ?1 ORDER BY ordinal LIMIT ?2 OFFSET ?3",
        )?;
        let rows =
            stmt.query_map(params![rid, i64::try_from(limit).unwrap_or(i64::MAX), offset as i64], chunk_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn section_offset(&self, rid: i64, page: Option<u32>, line: u32) -> Result<u64> {
        let n: i64 = self.query_row(SECTION_OFFSET, params![rid, page.unwrap_or(0), line], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn erase(&self, user: &str, name: &str) -> Result<bool> {
        let tx = Transaction::new_unchecked(self, TransactionBehavior::Immediate)?;
        // What a killed load of that name left goes too (a load going on fails).
        let hidden = find(&tx, user, &crate::sqlite::dataset_load::hidden_name(name))?;
        if let Some((rid, _)) = hidden {
            erase(&tx, rid)?;
        }
        let Some((rid, _)) = find(&tx, user, name)? else {
            tx.commit()?;
            return Ok(hidden.is_some());
        };
        erase(&tx, rid)?;
        crate::sqlite::vector_scan::bump_version(&tx)?;
        tx.commit()?;
        Ok(true)
    }

    fn keyword(&self, text: &str, within: &[i64]) -> Result<Vec<(i64, f64)>> {
        crate::sqlite::dataset_search::keyword(self, text, within)
    }

    fn chunks_at(&self, rids: &[i64]) -> Result<Vec<(i64, Chunk, i64)>> {
        let mut stmt = self.prepare_cached(
            "SELECT text, page, heading, line_start, line_end, row_number, dataset_rid FROM dataset_chunks WHERE rid = ?1",
        )?;
        let mut out = Vec::with_capacity(rids.len());
        for rid in rids {
            if let Some((c, d)) = stmt.query_row([rid], |r| Ok((chunk_from_row(r)?, r.get::<_, i64>(6)?))).optional()? {
                out.push((*rid, c, d));
            }
        }
        Ok(out)
    }

    fn to_embed(&self, model: &str, batch: usize) -> Result<Vec<(i64, String)>> {
        crate::sqlite::dataset_search::to_embed(self, model, batch)
    }

    fn pending(&self, model: &str) -> Result<u64> {
        crate::sqlite::dataset_search::pending(self, model)
    }

    fn put_vectors(&self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<usize> {
        crate::sqlite::dataset_search::put_vectors(self, model, vectors)
    }

    fn sql(&self, path: Option<&Path>, rid: i64, d: &Dataset, sql: &str, limits: SqlLimits) -> Result<SqlAnswer> {
        let path = path.ok_or_else(|| {
            Error::Unsupported("SQL over a dataset needs a store kept in a file, not in memory".into())
        })?;
        let mut conn =
            Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.busy_timeout(crate::sqlite::schema::BUSY_TIMEOUT)?;
        crate::sqlite::dataset_sql::run_over(&mut conn, rid, d, sql, limits)
    }
}

/// How many chunks of a dataset (`?1`) come before the first at or after page `?2`, line `?3`.
const SECTION_OFFSET: &str = "SELECT count(*) FROM dataset_chunks WHERE dataset_rid = ?1 AND ordinal < coalesce(\
     (SELECT min(ordinal) FROM dataset_chunks WHERE dataset_rid = ?1 \
      AND (coalesce(page, 0) > ?2 OR (coalesce(page, 0) = ?2 AND line_end >= ?3))), 9223372036854775807)";

pub(crate) fn chunk_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Chunk> {
    Ok(Chunk {
        text: r.get(0)?,
        place: Place {
            page: r.get::<_, Option<i64>>(1)?.map(|p| p as u32),
            heading: r.get(2)?,
            lines: (r.get::<_, i64>(3)? as u32, r.get::<_, i64>(4)? as u32),
            row: r.get::<_, Option<i64>>(5)?.map(|n| n as u64),
        },
    })
}

/// `user`'s dataset `name` with its rowid.
pub(crate) fn find(conn: &rusqlite::Connection, user: &str, name: &str) -> Result<Option<(i64, Dataset)>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM datasets AS d WHERE d.user_id = ?1 AND d.name = ?2"))?
        .query_row([user, name], dataset_from_row)
        .optional()?)
}

/// Deletes a dataset's rows table, chunks, words and vectors, and its record.
pub(crate) fn erase(tx: &Transaction<'_>, rid: i64) -> Result<()> {
    tx.prepare_cached(
        "DELETE FROM dataset_fts WHERE rowid IN (SELECT rid FROM dataset_chunks WHERE dataset_rid = ?1)",
    )?
    .execute([rid])?;
    tx.prepare_cached(
        "DELETE FROM dataset_vectors WHERE chunk_rid IN (SELECT rid FROM dataset_chunks WHERE dataset_rid = ?1)",
    )?
    .execute([rid])?;
    tx.prepare_cached("DELETE FROM dataset_chunks WHERE dataset_rid = ?1")?.execute([rid])?;
    tx.execute_batch(&format!("DROP TABLE IF EXISTS {}", rows_table(rid)))?;
    tx.prepare_cached("DELETE FROM datasets WHERE rid = ?1")?.execute([rid])?;
    Ok(())
}
