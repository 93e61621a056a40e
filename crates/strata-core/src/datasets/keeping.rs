//! Datasets kept by the store, on either engine: what each engine does with its own tables
//! ([`DatasetStorage`]: `sqlite/datasets.rs`, `postgres/datasets.rs`), and the store's methods
//! over it, which check what is asked before an engine sees it. SQL over a table runs on a
//! SQLite connection on both engines (`sqlite/dataset_sql.rs`), so a statement means the same
//! and is refused the same way wherever the dataset is kept (decision 0008).

use std::path::Path;

use super::{
    Cell, Chunk, Column, ColumnType, Dataset, DatasetHit, DatasetKind, Loaded, NewDataset, QueryVector, SqlAnswer,
};
use super::{SqlLimits, check_name};
use crate::error::{Error, Result};
use crate::retrieval::{Breakdown, HybridOptions, MatchScale};
use crate::storage::Engine;
use crate::store::Store;

/// How many candidates each list (keyword, meaning) gives fusion.
pub(crate) const CANDIDATES: usize = 50;

/// What an engine does with its datasets' tables. A dataset is known here by its row id in
/// the engine (`rid`), found by its owner and name.
pub(crate) trait DatasetStorage {
    /// `user`'s dataset `name`, with its row id.
    fn find(&self, user: &str, name: &str) -> Result<Option<(i64, Dataset)>>;
    /// `user`'s datasets by name, with their row ids.
    fn list(&self, user: &str) -> Result<Vec<(i64, Dataset)>>;
    /// Everyone who has a dataset.
    fn owners(&self) -> Result<Vec<String>>;
    /// How many of a dataset's chunks have a vector of `model`.
    fn embedded(&self, rid: i64, model: &str) -> Result<u64>;
    /// Keeps `new`, seen whole or not at all: added as `id`, replaced whole (keeping its id and
    /// first load), or left as it is when its digest is the one kept. PostgreSQL writes it in
    /// one transaction; SQLite in batches under a hidden name (`sqlite/dataset_load.rs`).
    fn keep(&self, user: &str, new: &NewDataset, now_ms: i64, id: &str) -> Result<(Dataset, Loaded)>;
    /// A page of a table's rows in the file's order.
    fn rows(&self, rid: i64, columns: &[Column], offset: u64, limit: usize) -> Result<Vec<Vec<Cell>>>;
    /// A page of a dataset's chunks in order.
    fn chunks(&self, rid: i64, offset: u64, limit: usize) -> Result<Vec<Chunk>>;
    /// How many chunks come before the first that ends at or after `page` and `line`.
    fn section_offset(&self, rid: i64, page: Option<u32>, line: u32) -> Result<u64>;
    /// Erases `user`'s dataset `name` (rows, chunks, words, vectors) in one transaction;
    /// false if there was none.
    fn erase(&self, user: &str, name: &str) -> Result<bool>;
    /// The best chunks by keyword among the datasets `within`: (chunk, score).
    fn keyword(&self, text: &str, within: &[i64]) -> Result<Vec<(i64, f64)>>;
    /// Chunks by their row ids, each with its dataset's row id (in any order).
    fn chunks_at(&self, rids: &[i64]) -> Result<Vec<(i64, Chunk, i64)>>;
    /// Up to `batch` chunks without a vector of `model`: (chunk, text).
    fn to_embed(&self, model: &str, batch: usize) -> Result<Vec<(i64, String)>>;
    /// How many chunks wait for a vector of `model`.
    fn pending(&self, model: &str) -> Result<u64>;
    /// Keeps chunks' vectors (a chunk forgotten meanwhile is skipped): how many were kept.
    fn put_vectors(&self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<usize>;
    /// Runs one read-only statement over the table dataset `rid` on SQLite (the store's own
    /// file at `path`, or a copy of the table), under `sqlite/dataset_sql.rs`'s authorizer.
    fn sql(&self, path: Option<&Path>, rid: i64, d: &Dataset, sql: &str, limits: SqlLimits) -> Result<SqlAnswer>;
}

impl Engine {
    /// The engine's [`DatasetStorage`].
    pub(crate) fn datasets(&self) -> &dyn DatasetStorage {
        match self {
            Engine::Sqlite(db) => db,
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.as_ref(),
        }
    }
}

/// The table holding a table dataset's rows, on either engine.
pub(crate) fn rows_table(rid: i64) -> String {
    format!("dataset_rows_{rid}")
}

fn unknown(name: &str) -> Error {
    Error::NotFound(format!("no dataset named {name}"))
}

impl Store {
    fn kept(&self) -> &dyn DatasetStorage {
        self.engine.datasets()
    }

    /// Keeps `new` as `user`'s dataset of that name: added, replaced whole when the name holds
    /// other content, or left as it is when the same bytes were loaded before. It is seen whole
    /// or not at all: a failure leaves nothing of it behind.
    pub fn load_dataset(&mut self, user: &str, new: &NewDataset) -> Result<(Dataset, Loaded)> {
        check_name(&new.name)?;
        check_shape(new)?;
        let now = crate::clock::to_ms(self.clock().now());
        let id = format!("ds_{}", crate::event::new_event_id(self.clock().as_ref()).to_lowercase());
        self.kept().keep(user, new, now, &id)
    }

    /// `user`'s datasets, by name, each with how many chunks have a vector of `model`.
    pub fn datasets(&self, user: &str, model: Option<&str>) -> Result<Vec<Dataset>> {
        self.kept().list(user)?.into_iter().map(|(rid, d)| self.with_embedded(rid, d, model)).collect()
    }

    /// One of `user`'s datasets by name.
    pub fn dataset(&self, user: &str, name: &str, model: Option<&str>) -> Result<Option<Dataset>> {
        self.kept().find(user, name)?.map(|(rid, d)| self.with_embedded(rid, d, model)).transpose()
    }

    fn with_embedded(&self, rid: i64, mut d: Dataset, model: Option<&str>) -> Result<Dataset> {
        if let Some(model) = model {
            d.embedded = self.kept().embedded(rid, model)?;
        }
        Ok(d)
    }

    /// Everyone who has a dataset, in order (a migration copies each one's).
    pub fn dataset_owners(&self) -> Result<Vec<String>> {
        self.kept().owners()
    }

    /// `user`'s dataset `name` whole, as it was loaded: its record, every row and passage (for
    /// a copy into another store; its vectors are not in it).
    pub fn dataset_whole(&self, user: &str, name: &str) -> Result<Option<NewDataset>> {
        let Some((rid, d)) = self.kept().find(user, name)? else { return Ok(None) };
        let rows = match d.kind {
            DatasetKind::Table => self.kept().rows(rid, &d.columns, 0, usize::MAX)?,
            DatasetKind::Document => Vec::new(),
        };
        Ok(Some(NewDataset {
            name: d.name,
            source: d.source,
            format: d.format,
            digest: d.digest,
            kind: d.kind,
            columns: d.columns,
            rows,
            sections: d.sections,
            chunks: self.kept().chunks(rid, 0, usize::MAX)?,
            notes: d.notes,
        }))
    }

    /// A page of a table's rows (from `offset`, at most `limit`), in the file's order.
    pub fn dataset_rows(&self, user: &str, name: &str, offset: u64, limit: usize) -> Result<Vec<Vec<Cell>>> {
        let (rid, d) = self.kept().find(user, name)?.ok_or_else(|| unknown(name))?;
        if d.kind != DatasetKind::Table {
            return Err(Error::invalid(format!("{name} is a document: it has passages, not rows")));
        }
        self.kept().rows(rid, &d.columns, offset, limit.min(10_000))
    }

    /// A page of a dataset's chunks in order (a document read passage by passage).
    pub fn dataset_chunks(&self, user: &str, name: &str, offset: u64, limit: usize) -> Result<Vec<Chunk>> {
        let (rid, _) = self.kept().find(user, name)?.ok_or_else(|| unknown(name))?;
        self.kept().chunks(rid, offset, limit.min(10_000))
    }

    /// Where the section of `user`'s document `name` that begins on `page` (a PDF's) at `line`
    /// starts among its chunks in order: the offset of its first chunk (the number of chunks,
    /// past the end, when none is at or after it).
    pub fn dataset_section_offset(&self, user: &str, name: &str, page: Option<u32>, line: u32) -> Result<u64> {
        let (rid, _) = self.kept().find(user, name)?.ok_or_else(|| unknown(name))?;
        self.kept().section_offset(rid, page, line)
    }

    /// Forgets `user`'s dataset `name`: its rows, chunks, words and vectors, in one transaction,
    /// then wipes them from the store's files (see [`Store::scrub`]). False if there was none.
    pub fn forget_dataset(&mut self, user: &str, name: &str) -> Result<bool> {
        if !self.kept().erase(user, name)? {
            return Ok(false);
        }
        self.scrub()?;
        Ok(true)
    }

    /// Runs one read-only `SELECT` over `user`'s table dataset `name`, which the statement
    /// calls by that name. Anything else is refused with what it tried.
    pub fn dataset_sql(&self, user: &str, name: &str, sql: &str, limits: SqlLimits) -> Result<SqlAnswer> {
        let (rid, d) = self.kept().find(user, name)?.ok_or_else(|| unknown(name))?;
        if d.kind != DatasetKind::Table {
            return Err(Error::invalid(format!(
                "{name} is a document: search its passages instead of SQL (SQL reads tables)"
            )));
        }
        crate::sqlite::dataset_sql::check_statement(sql)?;
        self.kept().sql(self.path(), rid, &d, sql, limits)
    }

    /// The best `limit` chunks of `user`'s datasets (`only`: these names; empty: all) for
    /// `text`, by keyword and, with `query`, by meaning: the two lists fused as recall fuses
    /// memories (`MatchScale`, the product's weighted fusion).
    pub fn search_datasets(
        &self,
        user: &str,
        only: &[String],
        text: &str,
        query: Option<QueryVector<'_>>,
        limit: usize,
    ) -> Result<Vec<DatasetHit>> {
        let chosen: std::collections::HashMap<i64, Dataset> =
            self.kept().list(user)?.into_iter().filter(|(_, d)| only.is_empty() || only.contains(&d.name)).collect();
        if chosen.is_empty() {
            return Ok(Vec::new());
        }
        let mut within: Vec<i64> = chosen.keys().copied().collect();
        within.sort_unstable();
        let mut found: std::collections::HashMap<i64, Breakdown> = std::collections::HashMap::new();
        for (rank, (rid, score)) in self.kept().keyword(text, &within)?.into_iter().enumerate() {
            let b = found.entry(rid).or_default();
            b.keyword_rank = Some(rank + 1);
            b.keyword_score = Some(score);
        }
        let options = HybridOptions::hybrid();
        if let Some(q) = query {
            // What only vaguely resembles the query is no answer to it (recall's floor).
            let close =
                self.nearest_chunks(user, q, &within)?.into_iter().filter(|(_, s)| *s >= options.min_similarity);
            for (rank, (rid, similarity)) in close.enumerate() {
                let b = found.entry(rid).or_default();
                b.vector_rank = Some(rank + 1);
                b.similarity = Some(similarity);
            }
        }
        let scale = MatchScale::of(found.values().map(|b| (b.keyword_score, b.similarity)));
        let mut ranked: Vec<(i64, f64)> =
            found.iter().map(|(rid, b)| (*rid, scale.matched(options.fusion, b, query.is_some()))).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        let rids: Vec<i64> = ranked.iter().map(|(rid, _)| *rid).collect();
        let mut found: std::collections::HashMap<i64, (Chunk, i64)> =
            self.kept().chunks_at(&rids)?.into_iter().map(|(rid, c, d)| (rid, (c, d))).collect();
        Ok(ranked
            .into_iter()
            .filter_map(|(rid, score)| {
                let (c, dataset) = found.remove(&rid)?;
                let d = &chosen[&dataset];
                Some(DatasetHit {
                    dataset: d.name.clone(),
                    source: d.source.clone(),
                    text: c.text,
                    place: c.place,
                    score,
                })
            })
            .collect())
    }

    /// The chunks most similar to the query among the datasets `within`: (chunk, cosine).
    fn nearest_chunks(&self, user: &str, q: QueryVector<'_>, within: &[i64]) -> Result<Vec<(i64, f64)>> {
        match &self.engine {
            Engine::Sqlite(_) => crate::sqlite::dataset_search::nearest(self, user, q, within),
            #[cfg(feature = "postgres")]
            Engine::Postgres(pg) => pg.nearest_chunks(&self.dataset_vector_cache, q, within),
        }
    }

    /// Up to `batch` chunks of every dataset without a vector of `model`: (chunk, text).
    pub fn dataset_chunks_to_embed(&self, model: &str, batch: usize) -> Result<Vec<(i64, String)>> {
        self.kept().to_embed(model, batch)
    }

    /// How many chunks wait for a vector of `model`.
    pub fn dataset_chunks_pending(&self, model: &str) -> Result<u64> {
        self.kept().pending(model)
    }

    /// Keeps the vectors of chunks (a chunk forgotten meanwhile is skipped).
    pub fn put_dataset_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<usize> {
        self.kept().put_vectors(model, vectors)
    }
}

/// Every row the same length as the columns, every value one its column can hold (a whole
/// number in a column of numbers, anything in a text column), and column names SQL can use,
/// each once.
fn check_shape(new: &NewDataset) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for c in &new.columns {
        if super::sql_name(&c.name).as_deref() != Some(c.name.as_str()) || !seen.insert(&c.name) {
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
    for (i, row) in new.rows.iter().enumerate() {
        for (cell, c) in row.iter().zip(&new.columns) {
            let misfit = matches!(
                (c.kind, cell),
                (ColumnType::Integer, Cell::Real(_) | Cell::Text(_)) | (ColumnType::Real, Cell::Text(_))
            );
            if misfit {
                return Err(Error::invalid(format!(
                    "row {}: {:?} is not a {} for column {}",
                    i + 1,
                    cell.display(),
                    if c.kind == ColumnType::Integer { "whole number" } else { "number" },
                    c.name
                )));
            }
        }
    }
    Ok(())
}
