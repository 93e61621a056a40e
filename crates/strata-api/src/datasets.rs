//! Datasets through the front door (decision 0008): the seed's `DatasetManager` — list, load,
//! query — and search with citations, scoped to the caller's user. Files are read into
//! datasets by `strata-datasets` (a front end's job: this crate reads no files); the engine
//! keeps them, embeds their passages and answers SQL and searches over them.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use strata_core::datasets::{Chunk, Dataset, DatasetHit, Loaded, NewDataset, QueryVector, SqlAnswer, SqlLimits};

use crate::engine::Engine;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// How many passages are embedded in one batch.
const EMBED_BATCH: usize = 64;

/// What loading a dataset did.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetLoaded {
    /// The dataset as kept.
    pub dataset: Dataset,
    /// Added, replaced, or unchanged.
    pub outcome: Loaded,
}

/// How far embedding passages got.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PassagesEmbedded {
    /// Passages embedded by this call.
    pub embedded: u64,
    /// Passages still waiting (after a cancel).
    pub pending: u64,
}

impl Engine {
    fn user(&self) -> &str {
        &self.options().user_id
    }

    fn model_id(&self) -> Option<String> {
        self.embedder().map(|e| e.model_id().to_string())
    }

    /// Keeps a dataset read from a file: added, replaced whole if the name holds other content,
    /// or unchanged if the same bytes were loaded before.
    pub fn load_dataset(&mut self, new: &NewDataset) -> ApiResult<DatasetLoaded> {
        let user = self.user().to_string();
        let (mut dataset, outcome) = self.store().load_dataset(&user, new)?;
        if let Some(d) = self.store_view().dataset(&user, &dataset.name, self.model_id().as_deref())? {
            dataset = d;
        }
        Ok(DatasetLoaded { dataset, outcome })
    }

    /// The caller's datasets, by name (the seed's `listDatasets`).
    pub fn datasets(&self) -> ApiResult<Vec<Dataset>> {
        Ok(self.store_view().datasets(self.user(), self.model_id().as_deref())?)
    }

    /// One dataset by name.
    pub fn dataset(&self, name: &str) -> ApiResult<Dataset> {
        self.store_view().dataset(self.user(), name, self.model_id().as_deref())?.ok_or_else(|| unknown_dataset(name))
    }

    /// A page of a table's rows (the seed's `loadDataset`, a page at a time).
    pub fn dataset_rows(
        &self,
        name: &str,
        offset: u64,
        limit: usize,
    ) -> ApiResult<Vec<Vec<strata_core::datasets::Cell>>> {
        Ok(self.store_view().dataset_rows(self.user(), name, offset, limit)?)
    }

    /// A page of a dataset's passages in order (a document read page by page or heading by
    /// heading; a table's rows as text).
    pub fn dataset_passages(&self, name: &str, offset: u64, limit: usize) -> ApiResult<Vec<Chunk>> {
        Ok(self.store_view().dataset_chunks(self.user(), name, offset, limit)?)
    }

    /// Where a document's page or heading (beginning on `page`, at `line`) starts among its
    /// passages: the offset to read them from.
    pub fn dataset_section_offset(&self, name: &str, page: Option<u32>, line: u32) -> ApiResult<u64> {
        Ok(self.store_view().dataset_section_offset(self.user(), name, page, line)?)
    }

    /// One read-only `SELECT` over a table dataset, which it calls by its name (the seed's
    /// `queryDataset`). Writes, other tables and the schema are refused, saying what was tried.
    pub fn query_dataset(&self, name: &str, sql: &str, limits: SqlLimits) -> ApiResult<SqlAnswer> {
        Ok(self.store_view().dataset_sql(self.user(), name, sql, limits)?)
    }

    /// The passages and rows of the caller's datasets (`only` these names; empty: all) that
    /// best match `text`, by keyword and, with an embedder, by meaning; each with its place.
    pub fn search_datasets(&self, only: &[String], text: &str, limit: usize) -> ApiResult<Vec<DatasetHit>> {
        self.search_datasets_with(only, text, limit, true)
    }

    /// [`Engine::search_datasets`] by keyword alone.
    pub fn search_datasets_by_keyword(&self, only: &[String], text: &str, limit: usize) -> ApiResult<Vec<DatasetHit>> {
        self.search_datasets_with(only, text, limit, false)
    }

    fn search_datasets_with(
        &self,
        only: &[String],
        text: &str,
        limit: usize,
        meaning: bool,
    ) -> ApiResult<Vec<DatasetHit>> {
        // Each named dataset must exist (not counting its vectors: that scan cost a search on
        // PostgreSQL 38 ms of its ~50 over 100,000 passages).
        for name in only {
            if self.store_view().dataset(self.user(), name, None)?.is_none() {
                return Err(unknown_dataset(name));
            }
        }
        let vector = match self.embedder().filter(|_| meaning) {
            Some(e) => Some((e.model_id().to_string(), e.embed_query(text)?)),
            None => None,
        };
        let query = vector.as_ref().map(|(model, vector)| QueryVector { model, vector });
        Ok(self.store_view().search_datasets(self.user(), only, text, query, limit.clamp(1, 100))?)
    }

    /// Forgets a dataset everywhere: rows, passages, words and vectors, then wipes them from the
    /// file. False if there was none.
    pub fn forget_dataset(&mut self, name: &str) -> ApiResult<bool> {
        let user = self.user().to_string();
        Ok(self.store().forget_dataset(&user, name)?)
    }

    /// Embeds the passages still without a vector, in batches, telling `progress` (done,
    /// total) after each; stops between batches when `cancel` is set (what was embedded stays).
    pub fn embed_passages(
        &mut self,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> ApiResult<PassagesEmbedded> {
        let embedder = self.embedder().cloned().ok_or_else(|| {
            ApiError::new(ErrorCode::Model, "no embedding model is loaded; keyword search works without one")
        })?;
        self.embed_passages_with(embedder.as_ref(), cancel, progress)
    }

    /// [`Engine::embed_passages`] with `embedder` (another than the one in use: a switch).
    pub(crate) fn embed_passages_with(
        &mut self,
        embedder: &dyn strata_core::Embedder,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> ApiResult<PassagesEmbedded> {
        let model = embedder.model_id().to_string();
        let total = self.store_view().dataset_chunks_pending(&model)?;
        let mut done = 0u64;
        while !cancel.load(Ordering::Relaxed) {
            let batch = self.store_view().dataset_chunks_to_embed(&model, EMBED_BATCH)?;
            if batch.is_empty() {
                break;
            }
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = embedder.embed(&texts)?;
            let pairs: Vec<(i64, Vec<f32>)> = batch.iter().map(|(rid, _)| *rid).zip(vectors).collect();
            self.store().put_dataset_vectors(&model, &pairs)?;
            done += pairs.len() as u64;
            progress(done.min(total), total);
        }
        Ok(PassagesEmbedded { embedded: done, pending: self.store_view().dataset_chunks_pending(&model)? })
    }
}

/// The answer for a dataset name the caller has none of.
fn unknown_dataset(name: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no dataset named {name}"))
}
