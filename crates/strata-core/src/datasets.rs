//! Datasets: a person's files kept beside their memories. A **table** (CSV, TSV, JSON, a
//! spreadsheet's sheet) is rows with named, typed columns that SQL can read; a **document**
//! (Markdown, text, HTML, PDF) is pages and headings. Both are cut into **chunks** that search
//! finds by keyword and by meaning, each with where it came from (page, heading, lines, row).
//!
//! Datasets are data of their own kind: never memories, so they do not enter recall, tiers,
//! the event log or training; they are scoped to their owner as memories are. Reading files
//! into these shapes is `strata-datasets`' job; keeping them is the engine's
//! (`datasets/keeping.rs` over each engine's tables; decision 0008).

pub(crate) mod keeping;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What a dataset holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DatasetKind {
    /// Rows and columns.
    Table,
    /// Pages or sections of text.
    Document,
}

impl DatasetKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetKind::Table => "table",
            DatasetKind::Document => "document",
        }
    }

    /// Reads a stored name.
    pub fn parse(s: &str) -> Result<DatasetKind> {
        match s {
            "table" => Ok(DatasetKind::Table),
            "document" => Ok(DatasetKind::Document),
            other => Err(Error::Corrupt(format!("unknown dataset kind {other:?}"))),
        }
    }
}

/// One value of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    /// Empty.
    Null,
    /// A whole number.
    Int(i64),
    /// A number with a fraction.
    Real(f64),
    /// Text (dates are ISO 8601 text, so they sort and compare as dates).
    Text(String),
}

impl Cell {
    /// The value as a person reads it ("" when empty).
    pub fn display(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Int(i) => i.to_string(),
            Cell::Real(f) => f.to_string(),
            Cell::Text(t) => t.clone(),
        }
    }
}

/// What a column holds (its SQLite affinity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnType {
    /// Whole numbers.
    Integer,
    /// Numbers.
    Real,
    /// Anything else (dates as ISO 8601 text).
    Text,
}

impl ColumnType {
    /// The SQL type a column is declared with.
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::Integer => "INTEGER",
            ColumnType::Real => "REAL",
            ColumnType::Text => "TEXT",
        }
    }
}

/// A column: the name SQL uses (letters, digits and `_`, unique) and the file's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The name in SQL.
    pub name: String,
    /// The header as the file wrote it.
    pub header: String,
    /// What it holds.
    #[serde(rename = "type")]
    pub kind: ColumnType,
}

/// Where a chunk came from, for citations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The page (PDF), from 1.
    pub page: Option<u32>,
    /// The heading it sits under ("Tenancy › Rent").
    pub heading: Option<String>,
    /// The first and last line (of its page for a PDF, of the file otherwise), from 1.
    pub lines: (u32, u32),
    /// The row of a table, from 1.
    pub row: Option<u64>,
}

impl Place {
    /// "page 2, lines 3–5", "Rent, line 7", "row 12".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(row) = self.row {
            return format!("row {row}");
        }
        if let Some(page) = self.page {
            parts.push(format!("page {page}"));
        }
        if let Some(h) = &self.heading {
            parts.push(format!("“{h}”"));
        }
        let (a, b) = self.lines;
        parts.push(if a == b { format!("line {a}") } else { format!("lines {a}–{b}") });
        parts.join(", ")
    }
}

/// A piece of a dataset that search finds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Its text.
    pub text: String,
    /// Where it came from.
    pub place: Place,
}

/// A page or section of a document, as the outline lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// The page (PDF) it starts on.
    pub page: Option<u32>,
    /// Its heading, if it has one.
    pub heading: Option<String>,
    /// Its heading's depth (1 for `#`), 0 for a page.
    pub depth: u8,
    /// The line it starts on.
    pub line: u32,
}

/// A file read into a dataset, ready to keep (from `strata-datasets`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewDataset {
    /// The name it is known by (unique per person): letters, digits and `_`.
    pub name: String,
    /// The file it came from, as the person named it.
    pub source: String,
    /// The file's format ("csv", "xlsx", "pdf", …).
    pub format: String,
    /// SHA-256 of the file's bytes: loading the same bytes again changes nothing.
    pub digest: String,
    /// Table or document.
    pub kind: DatasetKind,
    /// A table's columns (empty for a document).
    pub columns: Vec<Column>,
    /// A table's rows, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
    /// A document's pages and headings (empty for a table).
    pub sections: Vec<Section>,
    /// The pieces search finds (a table's rows, a document's passages).
    pub chunks: Vec<Chunk>,
    /// What reading noticed, in words ("3 formulas had no saved value: kept as formulas").
    pub notes: Vec<String>,
}

/// A kept dataset, as lists and pages show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Table or document.
    pub kind: DatasetKind,
    /// The file it came from.
    pub source: String,
    /// The file's format.
    pub format: String,
    /// SHA-256 of the file's bytes.
    pub digest: String,
    /// When it was first loaded.
    pub loaded_at: chrono::DateTime<chrono::Utc>,
    /// When it was last loaded with other content.
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// A table's columns.
    pub columns: Vec<Column>,
    /// A document's pages and headings.
    pub sections: Vec<Section>,
    /// A table's rows.
    pub rows: u64,
    /// Pieces search finds.
    pub chunks: u64,
    /// Pieces with a vector of the active embedder (search by meaning reaches only these).
    pub embedded: u64,
    /// What reading noticed.
    pub notes: Vec<String>,
}

/// What loading did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Loaded {
    /// A new dataset.
    Added,
    /// The name existed with other content: replaced whole.
    Replaced,
    /// The same bytes were loaded before: nothing changed.
    Unchanged,
}

/// Bounds on one SQL statement over a table.
#[derive(Debug, Clone, Copy)]
pub struct SqlLimits {
    /// The most rows returned (more are counted as cut off).
    pub rows: usize,
    /// The longest it may run.
    pub time: Duration,
}

impl Default for SqlLimits {
    fn default() -> Self {
        SqlLimits { rows: 1_000, time: Duration::from_secs(5) }
    }
}

/// The answer of a statement over a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqlAnswer {
    /// The result's column names.
    pub columns: Vec<String>,
    /// Its rows (at most the limit).
    pub rows: Vec<Vec<Cell>>,
    /// Whether more rows were left out.
    pub cut_off: bool,
    /// How long it ran.
    pub millis: u64,
}

/// A chunk found by search, with its dataset and place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetHit {
    /// The dataset's name.
    pub dataset: String,
    /// The file it came from.
    pub source: String,
    /// The chunk's text.
    pub text: String,
    /// Where it came from.
    pub place: Place,
    /// Its fused score (higher is better).
    pub score: f64,
}

/// A query's vector and the model that made it.
#[derive(Debug, Clone, Copy)]
pub struct QueryVector<'a> {
    /// The embedder's id.
    pub model: &'a str,
    /// The query's vector.
    pub vector: &'a [f32],
}

/// A value as a CSV export writes it: text a spreadsheet would run as a formula (it begins
/// with `=`, `+`, `-`, `@`, a tab or a carriage return, and is not a plain number) gets a
/// leading `'`, so it is shown, never run (CSV injection).
pub fn csv_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(['=', '+', '-', '@', '\t', '\r']) && text.trim().parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{text}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// The longest name a dataset may have.
pub const MAX_NAME: usize = 64;

/// A name SQL can use unquoted, from anything a person typed or a file was called:
/// lower-case letters, digits and `_`, starting with a letter ("Expenses 2025.csv" →
/// "expenses_2025"). `None` if nothing usable is left.
pub fn sql_name(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.chars().flat_map(char::to_lowercase) {
        let c = fold_accent(c);
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    let out = if out.starts_with(|c: char| c.is_ascii_digit()) { format!("t_{out}") } else { out.to_string() };
    let out: String = out.chars().take(MAX_NAME).collect();
    (!out.is_empty()).then_some(out)
}

/// The common Latin letters with accents, without them (for names only).
fn fold_accent(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        other => other,
    }
}

/// Checks a dataset's name as a person gave it.
pub fn check_name(name: &str) -> Result<()> {
    if sql_name(name).as_deref() != Some(name) {
        return Err(Error::invalid(format!(
            "a dataset's name is lower-case letters, digits and _ (at most {MAX_NAME}), starting with a \
             letter: {name:?} is not (try {:?})",
            sql_name(name).unwrap_or_else(|| "my_data".into())
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_sql_names() {
        assert_eq!(sql_name("Expenses 2025.csv").as_deref(), Some("expenses_2025_csv"));
        assert_eq!(sql_name("2025 budget").as_deref(), Some("t_2025_budget"));
        assert_eq!(sql_name("Café — Lisboa").as_deref(), Some("cafe_lisboa"));
        assert_eq!(sql_name("***"), None);
        assert!(check_name("expenses").is_ok());
        assert!(check_name("Expenses").is_err());
    }

    #[test]
    fn formulas_are_never_written_out_to_run() {
        assert_eq!(csv_safe("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(csv_safe("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_safe("-2+3"), "'-2+3");
        assert_eq!(csv_safe("-2.5"), "-2.5");
        assert_eq!(csv_safe("plain"), "plain");
    }

    #[test]
    fn places_read_as_citations() {
        let p = Place { page: Some(2), heading: Some("Rent".into()), lines: (3, 5), row: None };
        assert_eq!(p.describe(), "page 2, “Rent”, lines 3–5");
        assert_eq!(Place { row: Some(12), ..Place::default() }.describe(), "row 12");
        assert_eq!(Place { lines: (7, 7), ..Place::default() }.describe(), "line 7");
    }
}
