//! PostgreSQL's side of `crate::datasets` ([`DatasetStorage`]), as SQLite's keeps them: a
//! table's rows in `dataset_rows_<rid>` (written with `COPY … BINARY`), every dataset's chunks
//! in `dataset_chunks` (their words in a generated `tsvector`, ranked by the memories' bm25),
//! their vectors in `dataset_vectors` (an int8 copy in the process proposes, the stored vectors
//! decide, as on SQLite). SQL over a table runs on a SQLite copy of its rows (`table_copy.rs`).

use std::cell::RefCell;

use postgres::GenericClient;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};

use super::Pg;
use super::query::{Corpus, push_bm25, push_tsquery};
use crate::clock::from_ms;
use crate::datasets::keeping::{CANDIDATES, DatasetStorage, rows_table};
use crate::datasets::{Cell, Chunk, Column, ColumnType, Dataset, DatasetKind, Loaded, NewDataset, Place, QueryVector};
use crate::error::{Error, Result};
use crate::query::SEARCH_WINDOW;
use crate::sql::{Dialect, Sql, SqlValue};
use crate::sqlite::vector_scan::UserVectors;
use crate::vectors::RERANK_FLOOR;

const COLUMNS: &str = "d.rid, d.id, d.name, d.kind, d.source, d.format, d.digest, d.loaded_at, d.updated_at, \
                       d.columns, d.sections, d.row_count, d.chunk_count, d.notes";

const CHUNK_COLUMNS: &str = "text, page, heading, line_start, line_end, row_number";

fn json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt(format!("a stored dataset does not parse: {e}")))
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Storage(e.to_string()))
}

/// A dataset's row selected with [`COLUMNS`] (its `embedded` count is filled in by the caller).
fn dataset_from_row(r: &postgres::Row) -> Result<(i64, Dataset)> {
    Ok((
        r.try_get(0)?,
        Dataset {
            id: r.try_get(1)?,
            name: r.try_get(2)?,
            kind: DatasetKind::parse(r.try_get(3)?)?,
            source: r.try_get(4)?,
            format: r.try_get(5)?,
            digest: r.try_get(6)?,
            loaded_at: from_ms(r.try_get(7)?),
            updated_at: from_ms(r.try_get(8)?),
            columns: json(r.try_get(9)?)?,
            sections: json(r.try_get(10)?)?,
            rows: r.try_get::<_, i64>(11)? as u64,
            chunks: r.try_get::<_, i64>(12)? as u64,
            embedded: 0,
            notes: json(r.try_get(13)?)?,
        },
    ))
}

/// A chunk's row selected with [`CHUNK_COLUMNS`].
fn chunk_from_row(r: &postgres::Row) -> Result<Chunk> {
    Ok(Chunk {
        text: r.try_get(0)?,
        place: Place {
            page: r.try_get::<_, Option<i32>>(1)?.map(|p| p as u32),
            heading: r.try_get(2)?,
            lines: (r.try_get::<_, i32>(3)? as u32, r.try_get::<_, i32>(4)? as u32),
            row: r.try_get::<_, Option<i64>>(5)?.map(|n| n as u64),
        },
    })
}

fn find(c: &mut impl GenericClient, user: &str, name: &str) -> Result<Option<(i64, Dataset)>> {
    let sql = format!("SELECT {COLUMNS} FROM datasets AS d WHERE d.user_id = $1 AND d.name = $2");
    c.query_opt(sql.as_str(), &[&user, &name])?.as_ref().map(dataset_from_row).transpose()
}

/// The column's type on PostgreSQL.
pub(crate) fn pg_type(kind: ColumnType) -> Type {
    match kind {
        ColumnType::Integer => Type::INT8,
        ColumnType::Real => Type::FLOAT8,
        ColumnType::Text => Type::TEXT,
    }
}

/// A cell as its column's type binds it (the store's checks let a whole number into a column of
/// numbers, and anything into a text column, as SQLite's affinity does).
fn bound(cell: &Cell, kind: ColumnType) -> Box<dyn ToSql + Sync> {
    match (kind, cell) {
        (_, Cell::Null) => match kind {
            ColumnType::Integer => Box::new(None::<i64>),
            ColumnType::Real => Box::new(None::<f64>),
            ColumnType::Text => Box::new(None::<String>),
        },
        (ColumnType::Integer, Cell::Int(i)) => Box::new(*i),
        (ColumnType::Real, Cell::Int(i)) => Box::new(*i as f64),
        (ColumnType::Real, Cell::Real(x)) => Box::new(*x),
        (_, other) => Box::new(other.display()),
    }
}

/// Column `i` of `row`, of a column of `kind`, as a cell.
pub(crate) fn cell_at(row: &postgres::Row, i: usize, kind: ColumnType) -> Result<Cell> {
    Ok(match kind {
        ColumnType::Integer => row.try_get::<_, Option<i64>>(i)?.map_or(Cell::Null, Cell::Int),
        ColumnType::Real => row.try_get::<_, Option<f64>>(i)?.map_or(Cell::Null, Cell::Real),
        ColumnType::Text => row.try_get::<_, Option<String>>(i)?.map_or(Cell::Null, Cell::Text),
    })
}

/// The columns' names, quoted, joined.
pub(crate) fn quoted(columns: &[Column]) -> String {
    columns.iter().map(|c| format!("\"{}\"", c.name)).collect::<Vec<_>>().join(", ")
}

impl DatasetStorage for Pg {
    fn find(&self, user: &str, name: &str) -> Result<Option<(i64, Dataset)>> {
        find(&mut *self.client(), user, name)
    }

    fn list(&self, user: &str) -> Result<Vec<(i64, Dataset)>> {
        let sql = format!("SELECT {COLUMNS} FROM datasets AS d WHERE d.user_id = $1 ORDER BY d.name");
        self.client().query(sql.as_str(), &[&user])?.iter().map(dataset_from_row).collect()
    }

    fn owners(&self) -> Result<Vec<String>> {
        let rows = self.client().query("SELECT DISTINCT user_id FROM datasets ORDER BY user_id", &[])?;
        rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
    }

    fn embedded(&self, rid: i64, model: &str) -> Result<u64> {
        let n: i64 = self
            .client()
            .query_one(
                "SELECT count(*) FROM dataset_vectors v JOIN dataset_chunks c ON c.rid = v.chunk_rid \
                 WHERE c.dataset_rid = $1 AND v.model = $2",
                &[&rid, &model],
            )?
            .try_get(0)?;
        Ok(n as u64)
    }

    fn keep(&self, user: &str, new: &NewDataset, now: i64, id: &str) -> Result<(Dataset, Loaded)> {
        let mut client = self.client();
        let mut tx = client.transaction()?;
        // Two loads of one name wait for each other (writers of memories do not wait for them).
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&format!("dataset\n{user}\n{}", new.name)],
        )?;
        let (loaded, loaded_at, id) = match find(&mut tx, user, &new.name)? {
            Some((_, old)) if old.digest == new.digest => return Ok((old, Loaded::Unchanged)),
            Some((rid, old)) => {
                erase(&mut tx, rid)?;
                (Loaded::Replaced, crate::clock::to_ms(old.loaded_at), old.id)
            }
            None => (Loaded::Added, now, id.to_string()),
        };
        let rid: i64 = tx
            .query_one(
                "INSERT INTO datasets (id, user_id, name, kind, source, format, digest, loaded_at, updated_at, \
                 columns, sections, row_count, chunk_count, notes) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING rid",
                &[
                    &id,
                    &user,
                    &new.name,
                    &new.kind.as_str(),
                    &new.source,
                    &new.format,
                    &new.digest,
                    &loaded_at,
                    &now,
                    &to_json(&new.columns)?,
                    &to_json(&new.sections)?,
                    &(new.rows.len() as i64),
                    &(new.chunks.len() as i64),
                    &to_json(&new.notes)?,
                ],
            )?
            .try_get(0)?;
        if new.kind == DatasetKind::Table {
            write_rows(&mut tx, rid, &new.columns, &new.rows)?;
        }
        write_chunks(&mut tx, rid, &new.chunks)?;
        bump_version(&mut tx)?;
        let (_, dataset) =
            find(&mut tx, user, &new.name)?.ok_or_else(|| Error::Storage("the dataset vanished".into()))?;
        tx.commit()?;
        Ok((dataset, loaded))
    }

    fn rows(&self, rid: i64, columns: &[Column], offset: u64, limit: usize) -> Result<Vec<Vec<Cell>>> {
        let sql = format!("SELECT {} FROM {} ORDER BY row_number LIMIT $1 OFFSET $2", quoted(columns), rows_table(rid));
        let rows = self.client().query(sql.as_str(), &[&i64::try_from(limit).unwrap_or(i64::MAX), &(offset as i64)])?;
        rows.iter().map(|r| columns.iter().enumerate().map(|(i, c)| cell_at(r, i, c.kind)).collect()).collect()
    }

    fn chunks(&self, rid: i64, offset: u64, limit: usize) -> Result<Vec<Chunk>> {
        let sql = format!(
            "SELECT {CHUNK_COLUMNS} FROM dataset_chunks WHERE dataset_rid = $1 ORDER BY ordinal LIMIT $2 OFFSET $3"
        );
        let rows =
            self.client().query(sql.as_str(), &[&rid, &i64::try_from(limit).unwrap_or(i64::MAX), &(offset as i64)])?;
        rows.iter().map(chunk_from_row).collect()
    }

    fn section_offset(&self, rid: i64, page: Option<u32>, line: u32) -> Result<u64> {
        let n: i64 = self
            .client()
            .query_one(
                "SELECT count(*) FROM dataset_chunks WHERE dataset_rid = $1 AND ordinal < coalesce(\
                 (SELECT min(ordinal) FROM dataset_chunks WHERE dataset_rid = $1 \
                  AND (coalesce(page, 0) > $2 OR (coalesce(page, 0) = $2 AND line_end >= $3))), 9223372036854775807)",
                &[&rid, &(page.unwrap_or(0) as i32), &(line as i32)],
            )?
            .try_get(0)?;
        Ok(n as u64)
    }

    fn erase(&self, user: &str, name: &str) -> Result<bool> {
        let mut client = self.client();
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &[&format!("dataset\n{user}\n{name}")])?;
        let Some((rid, _)) = find(&mut tx, user, name)? else { return Ok(false) };
        erase(&mut tx, rid)?;
        bump_version(&mut tx)?;
        tx.commit()?;
        // The copy SQL ran over may hold its rows.
        *self.table_copy.borrow_mut() = None;
        Ok(true)
    }

    fn keyword(&self, text: &str, within: &[i64]) -> Result<Vec<(i64, f64)>> {
        let weighted = self.plan(Corpus::DatasetChunks, text, false)?;
        if weighted.is_empty() || within.is_empty() {
            return Ok(Vec::new());
        }
        let terms: Vec<String> = weighted.iter().map(|(t, _)| t.clone()).collect();
        let list = within.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        // A chunk's length is its count of distinct words (`length`): counting every position
        // cost a second pass over each candidate's words.
        let mut q = Sql::new(
            Dialect::Postgres,
            "WITH candidates AS (SELECT c.rid AS id, c.search, \
             length(c.search)::float8 AS dl \
             FROM dataset_chunks AS c WHERE c.search @@ ",
        );
        push_tsquery(&mut q, &terms);
        q.bind(&format!(" AND c.dataset_rid IN ({list}) ORDER BY c.rid DESC LIMIT ?), "), SqlValue::Int(SEARCH_WINDOW));
        push_bm25(&mut q, &weighted);
        q.bind(" SELECT id, rank::float8 FROM ranked ORDER BY rank DESC, id LIMIT ?", SqlValue::Int(CANDIDATES as i64));
        self.run_planned(&q)?.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
    }

    fn chunks_at(&self, rids: &[i64]) -> Result<Vec<(i64, Chunk, i64)>> {
        let sql = format!("SELECT {CHUNK_COLUMNS}, dataset_rid, rid FROM dataset_chunks WHERE rid = ANY($1)");
        let rows = self.client().query(sql.as_str(), &[&rids])?;
        rows.iter().map(|r| Ok((r.try_get(7)?, chunk_from_row(r)?, r.try_get(6)?))).collect()
    }

    fn to_embed(&self, model: &str, batch: usize) -> Result<Vec<(i64, String)>> {
        let rows = self.client().query(
            "SELECT c.rid, c.text FROM dataset_chunks c WHERE NOT EXISTS \
             (SELECT 1 FROM dataset_vectors v WHERE v.chunk_rid = c.rid AND v.model = $1) ORDER BY c.rid LIMIT $2",
            &[&model, &(batch as i64)],
        )?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
    }

    fn pending(&self, model: &str) -> Result<u64> {
        let n: i64 = self
            .client()
            .query_one(
                "SELECT count(*) FROM dataset_chunks c WHERE NOT EXISTS \
                 (SELECT 1 FROM dataset_vectors v WHERE v.chunk_rid = c.rid AND v.model = $1)",
                &[&model],
            )?
            .try_get(0)?;
        Ok(n as u64)
    }

    fn put_vectors(&self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<usize> {
        let mut client = self.client();
        let mut tx = client.transaction()?;
        let put = tx.prepare(
            "INSERT INTO dataset_vectors (chunk_rid, model, vector) SELECT rid, $2, $3 FROM dataset_chunks \
             WHERE rid = $1 ON CONFLICT (chunk_rid, model) DO UPDATE SET vector = excluded.vector",
        )?;
        let mut kept = 0;
        for (rid, v) in vectors {
            kept += tx.execute(&put, &[rid, &model, &pgvector::Vector::from(v.clone())])? as usize;
        }
        bump_version(&mut tx)?;
        tx.commit()?;
        Ok(kept)
    }

    fn sql(
        &self,
        _path: Option<&std::path::Path>,
        rid: i64,
        d: &Dataset,
        sql: &str,
        limits: crate::datasets::SqlLimits,
    ) -> Result<crate::datasets::SqlAnswer> {
        self.sql_on_copy(rid, d, sql, limits)
    }
}

impl Pg {
    /// The chunks most similar to the query among the datasets `within`: (chunk, cosine). As on
    /// SQLite, an int8 copy of their vectors (in `cache`, kept while no dataset vector changes:
    /// [`VERSION`]) proposes candidates and their stored vectors decide: an exact scan of
    /// 100,000 vectors in the server took 128 ms at p95 (docs/benchmarks.md).
    pub(crate) fn nearest_chunks(
        &self,
        cache: &RefCell<Option<UserVectors>>,
        q: QueryVector<'_>,
        within: &[i64],
    ) -> Result<Vec<(i64, f64)>> {
        let key = format!("{within:?}");
        let version: i64 = self
            .client()
            .query_opt("SELECT value::bigint FROM settings WHERE key = $1", &[&VERSION])?
            .map_or(Ok(0), |r| r.try_get(0))?;
        let fresh = matches!(&*cache.borrow(),
            Some(c) if c.model == q.model && c.user == key && c.version == version);
        if !fresh {
            *cache.borrow_mut() = None;
            let mut copy = UserVectors::empty(q.model, &key, version, q.vector.len());
            let rows = self.client().query(
                "SELECT v.chunk_rid, v.vector FROM dataset_vectors v JOIN dataset_chunks c ON c.rid = v.chunk_rid \
                 WHERE v.model = $1 AND c.dataset_rid = ANY($2)",
                &[&q.model, &within],
            )?;
            for r in &rows {
                copy.push(r.try_get(0)?, r.try_get::<_, pgvector::Vector>(1)?.as_slice());
            }
            *cache.borrow_mut() = Some(copy);
        }
        let proposed = match &*cache.borrow() {
            Some(c) => c.nearest(q.vector, RERANK_FLOOR.max(2 * CANDIDATES)),
            None => Vec::new(),
        };
        if proposed.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.client().query(
            "SELECT chunk_rid, (1 - (vector <=> $1))::float8 AS s FROM dataset_vectors \
             WHERE model = $2 AND chunk_rid = ANY($3) ORDER BY s DESC, chunk_rid LIMIT $4",
            &[&pgvector::Vector::from(q.vector.to_vec()), &q.model, &proposed, &(CANDIDATES as i64)],
        )?;
        rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect()
    }
}

/// The setting counting changes to datasets' vectors (a load, a forget, vectors kept).
const VERSION: &str = "dataset_vector_version";

/// Counts a change to datasets' vectors, inside the transaction that makes it.
fn bump_version(tx: &mut postgres::Transaction<'_>) -> Result<()> {
    tx.execute(
        "INSERT INTO settings (key, value) VALUES ($1, '1') \
         ON CONFLICT (key) DO UPDATE SET value = (settings.value::bigint + 1)::text",
        &[&VERSION],
    )?;
    Ok(())
}

/// Makes the dataset's rows table and copies its rows in, numbered from 1.
fn write_rows(tx: &mut postgres::Transaction<'_>, rid: i64, columns: &[Column], rows: &[Vec<Cell>]) -> Result<()> {
    let table = rows_table(rid);
    let declared: Vec<String> =
        columns.iter().map(|c| format!("\"{}\" {}", c.name, pg_type(c.kind).name().to_uppercase())).collect();
    tx.batch_execute(&format!("CREATE TABLE {table} (row_number BIGINT PRIMARY KEY, {})", declared.join(", ")))?;
    let types: Vec<Type> = std::iter::once(Type::INT8).chain(columns.iter().map(|c| pg_type(c.kind))).collect();
    let sink = tx.copy_in(&format!("COPY {table} (row_number, {}) FROM STDIN BINARY", quoted(columns)))?;
    let mut writer = BinaryCopyInWriter::new(sink, &types);
    let mut values: Vec<Box<dyn ToSql + Sync>> = Vec::with_capacity(columns.len() + 1);
    for (i, row) in rows.iter().enumerate() {
        values.clear();
        values.push(Box::new(i as i64 + 1));
        values.extend(row.iter().zip(columns).map(|(cell, c)| bound(cell, c.kind)));
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|b| b.as_ref()).collect();
        writer.write(&refs)?;
    }
    writer.finish()?;
    Ok(())
}

/// Copies a dataset's chunks in, in order (their words are a generated column).
fn write_chunks(tx: &mut postgres::Transaction<'_>, rid: i64, chunks: &[Chunk]) -> Result<()> {
    let sink = tx.copy_in(
        "COPY dataset_chunks (dataset_rid, ordinal, text, page, heading, line_start, line_end, row_number) \
         FROM STDIN BINARY",
    )?;
    let types = [Type::INT8, Type::INT8, Type::TEXT, Type::INT4, Type::TEXT, Type::INT4, Type::INT4, Type::INT8];
    let mut writer = BinaryCopyInWriter::new(sink, &types);
    for (i, c) in chunks.iter().enumerate() {
        let p = &c.place;
        writer.write(&[
            &rid,
            &(i as i64),
            &c.text,
            &p.page.map(|n| n as i32),
            &p.heading,
            &(p.lines.0 as i32),
            &(p.lines.1 as i32),
            &p.row.map(|n| n as i64),
        ])?;
    }
    writer.finish()?;
    Ok(())
}

/// Deletes a dataset's record (its chunks and vectors go with it) and drops its rows table.
fn erase(tx: &mut postgres::Transaction<'_>, rid: i64) -> Result<()> {
    tx.execute("DELETE FROM datasets WHERE rid = $1", &[&rid])?;
    tx.batch_execute(&format!("DROP TABLE IF EXISTS {}", rows_table(rid)))?;
    Ok(())
}
