//! SQLite's side of `crate::datasets`: keeping, listing, paging and forgetting datasets. A
//! table's rows live in a table of their own (`dataset_rows_<rid>`, columns as the dataset
//! names them); every dataset's chunks in `dataset_chunks`, their words in `dataset_fts`,
//! their vectors in `dataset_vectors`. SQL over a table is `dataset_sql.rs`; search is
//! `dataset_search.rs`.

use rusqlite::types::{Value, ValueRef};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use crate::clock::{from_ms, to_ms};
use crate::datasets::{Cell, Chunk, Column, Dataset, DatasetKind, Loaded, NewDataset, Place, check_name};
use crate::error::{Error, Result};
use crate::sqlite::Db;
use crate::store::Store;

const COLUMNS: &str = "d.rid, d.id, d.name, d.kind, d.source, d.format, d.digest, d.loaded_at, d.updated_at, \
                       d.columns, d.sections, d.row_count, d.chunk_count, d.notes";

/// The table holding a table dataset's rows.
pub(crate) fn rows_table(rid: i64) -> String {
    format!("dataset_rows_{rid}")
}

fn json<T: serde::de::DeserializeOwned>(i: usize, text: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
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

/// The message for datasets asked of a PostgreSQL store.
fn not_here() -> Error {
    Error::Unsupported(
        "datasets are kept in a SQLite store for now: a team database (PostgreSQL) does not hold them yet".into(),
    )
}

impl Store {
    /// The SQLite database datasets live in.
    pub(crate) fn datasets_db(&self) -> Result<&Db> {
        self.sqlite().map_err(|_| not_here())
    }

    /// Keeps `new` as `user`'s dataset of that name: added, replaced whole when the name holds
    /// other content, or left as it is when the same bytes were loaded before. One transaction:
    /// a failure leaves nothing of it behind.
    pub fn load_dataset(&mut self, user: &str, new: &NewDataset) -> Result<(Dataset, Loaded)> {
        check_name(&new.name)?;
        check_shape(new)?;
        let now = to_ms(self.clock().now());
        let id = format!("ds_{}", crate::event::new_event_id(self.clock().as_ref()).to_lowercase());
        let db = self.datasets_db()?;
        let tx = Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
        let before = find(&tx, user, &new.name)?;
        let (loaded, loaded_at, id) = match &before {
            Some((_, old)) if old.digest == new.digest => return Ok((old.clone(), Loaded::Unchanged)),
            Some((rid, old)) => {
                erase(&tx, *rid)?;
                (Loaded::Replaced, to_ms(old.loaded_at), old.id.clone())
            }
            None => (Loaded::Added, now, id),
        };
        tx.prepare_cached(
            "INSERT INTO datasets (id, user_id, name, kind, source, format, digest, loaded_at, updated_at, \
             columns, sections, row_count, chunk_count, notes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
            id,
            user,
            new.name,
            new.kind.as_str(),
            new.source,
            new.format,
            new.digest,
            loaded_at,
            now,
            to_json(&new.columns)?,
            to_json(&new.sections)?,
            new.rows.len() as i64,
            new.chunks.len() as i64,
            to_json(&new.notes)?,
        ])?;
        let rid = tx.last_insert_rowid();
        if new.kind == DatasetKind::Table {
            write_rows(&tx, rid, &new.columns, &new.rows)?;
        }
        write_chunks(&tx, rid, &new.chunks)?;
        crate::sqlite::vector_scan::bump_version(&tx)?;
        let (_, dataset) = find(&tx, user, &new.name)?.ok_or_else(|| Error::Storage("the dataset vanished".into()))?;
        tx.commit()?;
        Ok((dataset, loaded))
    }

    /// `user`'s datasets, by name, each with how many chunks have a vector of `model`.
    pub fn datasets(&self, user: &str, model: Option<&str>) -> Result<Vec<Dataset>> {
        let db = self.datasets_db()?;
        let mut stmt =
            db.prepare_cached(&format!("SELECT {COLUMNS} FROM datasets AS d WHERE d.user_id = ?1 ORDER BY d.name"))?;
        let rows = stmt.query_map([user], dataset_from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter().map(|(rid, d)| with_embedded(db, rid, d, model)).collect()
    }

    /// One of `user`'s datasets by name.
    pub fn dataset(&self, user: &str, name: &str, model: Option<&str>) -> Result<Option<Dataset>> {
        let db = self.datasets_db()?;
        find(db, user, name)?.map(|(rid, d)| with_embedded(db, rid, d, model)).transpose()
    }

    /// A page of a table's rows (from `offset`, at most `limit`), in the file's order.
    pub fn dataset_rows(&self, user: &str, name: &str, offset: u64, limit: usize) -> Result<Vec<Vec<Cell>>> {
        let db = self.datasets_db()?;
        let (rid, d) = find(db, user, name)?.ok_or_else(|| unknown(name))?;
        if d.kind != DatasetKind::Table {
            return Err(Error::invalid(format!("{name} is a document: it has passages, not rows")));
        }
        let names: Vec<String> = d.columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
        let sql =
            format!("SELECT {} FROM {} ORDER BY row_number LIMIT ?1 OFFSET ?2", names.join(", "), rows_table(rid));
        let mut stmt = db.prepare(&sql)?;
        let n = names.len();
        let rows = stmt.query_map(params![limit.min(10_000) as i64, offset as i64], |r| {
            (0..n).map(|i| Ok(to_cell(r.get_ref(i)?))).collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A page of a dataset's chunks in order (a document read passage by passage).
    pub fn dataset_chunks(&self, user: &str, name: &str, offset: u64, limit: usize) -> Result<Vec<Chunk>> {
        let db = self.datasets_db()?;
        let (rid, _) = find(db, user, name)?.ok_or_else(|| unknown(name))?;
        let mut stmt = db.prepare_cached(
            "SELECT text, page, heading, line_start, line_end, row_number FROM dataset_chunks \
             WHERE dataset_rid = ?1 ORDER BY ordinal LIMIT ?2 OFFSET ?3",
        )?;
        let rows = stmt.query_map(params![rid, limit.min(10_000) as i64, offset as i64], chunk_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Where the section of `user`'s document `name` that begins on `page` (a PDF's) at `line`
    /// starts among its chunks in order: the offset of its first chunk (the number of chunks,
    /// past the end, when none is at or after it).
    pub fn dataset_section_offset(&self, user: &str, name: &str, page: Option<u32>, line: u32) -> Result<u64> {
        let db = self.datasets_db()?;
        let (rid, _) = find(db, user, name)?.ok_or_else(|| unknown(name))?;
        let first_after = "SELECT min(ordinal) FROM dataset_chunks WHERE dataset_rid = ?1 \
             AND (coalesce(page, 0) > ?2 OR (coalesce(page, 0) = ?2 AND line_end >= ?3))";
        let n: i64 = db.query_row(
            &format!(
                "SELECT count(*) FROM dataset_chunks WHERE dataset_rid = ?1 \
                 AND ordinal < coalesce(({first_after}), 9223372036854775807)"
            ),
            params![rid, page.unwrap_or(0), line],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Forgets `user`'s dataset `name`: its rows, chunks, words and vectors, in one transaction,
    /// then wipes them from the file (see [`Store::scrub`]). False if there was none.
    pub fn forget_dataset(&mut self, user: &str, name: &str) -> Result<bool> {
        let db = self.datasets_db()?;
        let tx = Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
        let Some((rid, _)) = find(&tx, user, name)? else { return Ok(false) };
        erase(&tx, rid)?;
        crate::sqlite::vector_scan::bump_version(&tx)?;
        tx.commit()?;
        self.scrub()?;
        Ok(true)
    }
}

fn unknown(name: &str) -> Error {
    Error::NotFound(format!("no dataset named {name}"))
}

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

fn with_embedded(db: &Db, rid: i64, mut d: Dataset, model: Option<&str>) -> Result<Dataset> {
    if let Some(model) = model {
        let n: i64 = db
            .prepare_cached(
                "SELECT count(*) FROM dataset_vectors v JOIN dataset_chunks c ON c.rid = v.chunk_rid \
                 WHERE c.dataset_rid = ?1 AND v.model = ?2",
            )?
            .query_row(params![rid, model], |r| r.get(0))?;
        d.embedded = n as u64;
    }
    Ok(d)
}

/// Every row the same length as the columns, and column names SQL can use, each once.
fn check_shape(new: &NewDataset) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for c in &new.columns {
        if crate::datasets::sql_name(&c.name).as_deref() != Some(c.name.as_str()) || !seen.insert(&c.name) {
            return Err(Error::invalid(format!("column name {:?} is not a plain, unique SQL name", c.name)));
        }
    }
    if new.kind == DatasetKind::Table && new.columns.is_empty() {
        return Err(Error::invalid(format!("{} has no columns", new.source)));
    }
    if let Some(i) = new.rows.iter().position(|r| r.len() != new.columns.len()) {
        return Err(Error::invalid(format!(
            "row {} has {} values for {} columns",
            i + 1,
            new.rows[i].len(),
            new.columns.len()
        )));
    }
    Ok(())
}

fn write_rows(tx: &Transaction<'_>, rid: i64, columns: &[Column], rows: &[Vec<Cell>]) -> Result<()> {
    let table = rows_table(rid);
    let declared: Vec<String> = columns.iter().map(|c| format!("\"{}\" {}", c.name, c.kind.sql())).collect();
    tx.execute_batch(&format!("CREATE TABLE {table} (row_number INTEGER PRIMARY KEY, {})", declared.join(", ")))?;
    let marks = vec!["?"; columns.len()].join(", ");
    let names: Vec<String> = columns.iter().map(|c| format!("\"{}\"", c.name)).collect();
    let mut insert =
        tx.prepare(&format!("INSERT INTO {table} (row_number, {}) VALUES (?, {marks})", names.join(", ")))?;
    let mut values = Vec::with_capacity(columns.len() + 1);
    for (i, row) in rows.iter().enumerate() {
        values.clear();
        values.push(Value::Integer(i as i64 + 1));
        values.extend(row.iter().map(to_value));
        insert.execute(rusqlite::params_from_iter(values.iter()))?;
    }
    Ok(())
}

fn write_chunks(tx: &Transaction<'_>, rid: i64, chunks: &[Chunk]) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO dataset_chunks (dataset_rid, ordinal, text, page, heading, line_start, line_end, row_number) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut index =
        tx.prepare_cached("INSERT INTO dataset_fts (rowid, text, heading, dataset) VALUES (?1, ?2, ?3, ?4)")?;
    let word = format!("d{rid}");
    for (i, c) in chunks.iter().enumerate() {
        let p = &c.place;
        insert.execute(params![
            rid,
            i as i64,
            c.text,
            p.page.map(i64::from),
            p.heading,
            i64::from(p.lines.0),
            i64::from(p.lines.1),
            p.row.map(|r| r as i64)
        ])?;
        index.execute(params![tx.last_insert_rowid(), c.text, p.heading.as_deref().unwrap_or(""), word])?;
    }
    Ok(())
}

/// Deletes a dataset's rows table, chunks, words and vectors, and its record.
fn erase(tx: &Transaction<'_>, rid: i64) -> Result<()> {
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
