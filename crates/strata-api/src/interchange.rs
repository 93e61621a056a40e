//! Import and export through the [`Engine`]: the formats (a seed document, a backup of the
//! whole log, the reference MCP memory server's graph), their detection, and the example
//! memories.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};
use strata_core::interchange::duplicates::{ImportSummary, OnDuplicate};
use strata_core::interchange::seed::ImportCounts;
use strata_core::{Filter, NewMemory, Source};

use crate::engine::Engine;
use crate::error::ApiResult;

/// Import/export file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ImportFormat {
    /// The seed-002 JSON document.
    Seed,
    /// The JSON Lines event backup.
    Backup,
    /// The reference MCP memory server's `memory.json` (JSON Lines of entities and relations).
    Graph,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// The file's format.
    pub format: ImportFormat,
    /// Memories imported (seed, backup), or entities and relations created or extended (graph).
    pub imported: u64,
    /// A graph's relations whose ends are not both entities: not imported, listed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relations_skipped: Vec<crate::graph::Relation>,
    /// A seed document's memories, per type: added, merged, unchanged and skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<ImportSummary>,
}

/// How to import a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// The file's format (detected when `None`).
    pub format: Option<ImportFormat>,
    /// What a seed document's memory that is already stored does (stop, by default).
    pub on_duplicate: OnDuplicate,
}

impl Engine {
    /// Imports a file (format detected when not given). One transaction. Returns the memories
    /// imported (seed, backup) or the entities and relations created or extended (graph).
    pub fn import(
        &mut self,
        name: &str,
        input: &mut dyn BufRead,
        format: Option<ImportFormat>,
    ) -> ApiResult<(ImportFormat, u64)> {
        self.import_with(name, input, format, &mut strata_core::interchange::no_tick)
    }

    /// [`Engine::import`], reporting to `tick` as it goes; an error from `tick` (the person
    /// cancelled) rolls the whole import back.
    pub fn import_with(
        &mut self,
        name: &str,
        input: &mut dyn BufRead,
        format: Option<ImportFormat>,
        tick: strata_core::interchange::Tick,
    ) -> ApiResult<(ImportFormat, u64)> {
        let report = self.import_report_with(name, input, ImportOptions { format, ..Default::default() }, tick)?;
        Ok((report.format, report.imported))
    }

    /// [`Engine::import_with`] with `options` (a seed document's duplicates merged or
    /// skipped), saying also what each memory became or what a graph import left out.
    pub fn import_report_with(
        &mut self,
        name: &str,
        input: &mut dyn BufRead,
        options: ImportOptions,
        tick: strata_core::interchange::Tick,
    ) -> ApiResult<ImportReport> {
        let text = strata_core::interchange::json::read_text(name, input)?;
        let format = options.format.unwrap_or_else(|| detect_format(&text));
        let mut report = ImportReport { format, imported: 0, relations_skipped: Vec::new(), summary: None };
        match format {
            ImportFormat::Seed => {
                let template = NewMemory {
                    scope: self.scope(None),
                    source: Source::app(strata_core::IMPORTED_APPS[0]),
                    ..Default::default()
                };
                let meta = self.meta();
                let summary =
                    self.store().import_seed_with(name, &text, &template, &meta, options.on_duplicate, tick)?;
                report.imported = summary.added.total();
                report.summary = Some(summary);
            }
            ImportFormat::Backup => {
                report.imported = self.store().import_backup_with(name, &mut text.as_bytes(), tick)?.1
            }
            ImportFormat::Graph => {
                let r = self.graph_import_with(name, &mut text.as_bytes(), tick)?;
                report.imported = r.entities_created + r.entities_merged + r.relations_created;
                report.relations_skipped = r.relations_skipped;
            }
        }
        self.wrote();
        Ok(report)
    }

    /// Exports this scope as a seed document or a knowledge graph (`memory.json`), or the
    /// whole log as a backup. Returns the count of memories (seed), lines (graph) or events
    /// (backup) written.
    pub fn export(&self, format: ImportFormat, out: &mut dyn Write) -> ApiResult<u64> {
        self.export_with(format, out, &mut strata_core::interchange::no_tick)
    }

    /// Exports into the file at `path`, written whole by [`strata_core::files::write_whole`]'s
    /// rule (a failed or stopped export leaves the old file or none; a pipe is written into).
    pub fn export_to_file(
        &self,
        format: ImportFormat,
        path: &std::path::Path,
        tick: strata_core::interchange::Tick,
    ) -> ApiResult<u64> {
        strata_core::files::write_whole(path, |out| self.export_with(format, out, tick))
    }

    /// [`Engine::export`], reporting to `tick` as it goes (and stopped by it).
    pub fn export_with(
        &self,
        format: ImportFormat,
        out: &mut dyn Write,
        tick: strata_core::interchange::Tick,
    ) -> ApiResult<u64> {
        Ok(match format {
            ImportFormat::Seed => self
                .store_view()
                .export_seed_with(&self.options().user_id, self.options().agent_id.as_deref(), out, tick)?
                .total(),
            ImportFormat::Backup => self.store_view().export_backup_with(out, tick)?,
            ImportFormat::Graph => self.graph_export_with(out, tick)?,
        })
    }

    /// Seeds example memories of each type (once; tagged `demo`). Returns how many were added.
    pub fn demo(&mut self) -> ApiResult<ImportCounts> {
        let existing = self.list(Filter { tags: vec![crate::demo::TAG.into()], ..Default::default() }, 1, None)?;
        if !existing.items.is_empty() {
            return Ok(ImportCounts::default());
        }
        let template = NewMemory {
            scope: self.scope(None),
            tags: vec![crate::demo::TAG.into()],
            source: Source::app(strata_core::IMPORTED_APPS[1]),
            ..Default::default()
        };
        let meta = self.meta();
        let counts = self.store().import_seed("demo", crate::demo::DOCUMENT, &template, &meta)?;
        self.wrote();
        Ok(counts)
    }
}

/// The format of a file, by what it holds: the first JSON value (the whole document, or a
/// JSON Lines file's first line) when it has a format's shape, else the first line that has
/// a backup header's or a graph line's shape; anything else is read as a seed document,
/// whose reader then says what is wrong and where.
fn detect_format(text: &str) -> ImportFormat {
    let first = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>().next();
    if let Some(format) = first.and_then(Result::ok).as_ref().and_then(shape) {
        return format;
    }
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|v| shape(&v).filter(|f| *f != ImportFormat::Seed))
        .unwrap_or(ImportFormat::Seed)
}

/// The format whose shape a JSON value has, if any.
fn shape(v: &serde_json::Value) -> Option<ImportFormat> {
    let o = v.as_object()?;
    let field = |name: &str| o.get(name).and_then(serde_json::Value::as_str);
    if field("format") == Some(strata_core::interchange::backup::FORMAT) {
        Some(ImportFormat::Backup)
    } else if matches!(field("type"), Some("entity" | "relation")) {
        Some(ImportFormat::Graph)
    } else if o.is_empty() || o.keys().any(|k| matches!(k.as_str(), "semantic" | "episodic" | "procedural")) {
        Some(ImportFormat::Seed)
    } else {
        None
    }
}
