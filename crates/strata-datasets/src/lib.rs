//! Reads a person's files into datasets the store keeps (`strata_core::datasets`): tables from
//! CSV, TSV, JSON, JSON lines and spreadsheets; documents from Markdown, plain text, HTML and
//! PDF. Each comes with its chunks for search and where each chunk came from (page, heading,
//! lines, row), and with what reading noticed, in words.
//!
//! Nothing here writes: a file that cannot be read whole is refused with one sentence naming
//! the file and the problem, so nothing of it is half-loaded. Maintained libraries do the
//! reading (`csv`, `calamine`, `pdf-extract`, `html2text`, `pulldown-cmark`), and
//! `text-splitter` cuts the passages (decision 0008).

mod document;
mod pdf;
mod table;
mod text;
mod xlsx;

use std::path::Path;

use sha2::{Digest, Sha256};
use strata_core::datasets::{NewDataset, sql_name};
use strata_core::{Error, Result};

pub use table::{csv_cell, infer_cells};

/// The largest file read (a 1,000,000-row CSV is about 100 MB).
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// What kind of file it is, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values.
    Csv,
    /// Tab-separated values.
    Tsv,
    /// A JSON list of objects.
    Json,
    /// One JSON object per line.
    JsonLines,
    /// A spreadsheet (.xlsx, .xls, .ods).
    Spreadsheet,
    /// Markdown.
    Markdown,
    /// Plain text.
    Text,
    /// A web page.
    Html,
    /// A PDF.
    Pdf,
}

impl Format {
    /// The format of a file named `file`, from its extension.
    pub fn of(file: &str) -> Result<Format> {
        let ext = Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        if let Some(f) = Format::ALL.into_iter().find(|f| f.extensions().contains(&ext.as_str())) {
            return Ok(f);
        }
        Err(Error::invalid(if ext == "docx" {
            format!("{file}: Word files are not read yet; save it as PDF or plain text and load that")
        } else {
            format!(
                "{file}: Strata reads CSV, TSV, JSON, JSON lines, spreadsheets (.xlsx, .xls, .ods), \
                 Markdown, text, HTML and PDF files, told apart by their extension"
            )
        }))
    }

    /// Every format read.
    pub const ALL: [Format; 9] = [
        Format::Csv,
        Format::Tsv,
        Format::Json,
        Format::JsonLines,
        Format::Spreadsheet,
        Format::Markdown,
        Format::Text,
        Format::Html,
        Format::Pdf,
    ];

    /// The file extensions it is told by (lower case, without the dot).
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Format::Csv => &["csv"],
            Format::Tsv => &["tsv", "tab"],
            Format::Json => &["json"],
            Format::JsonLines => &["jsonl", "ndjson"],
            Format::Spreadsheet => &["xlsx", "xlsm", "xls", "ods"],
            Format::Markdown => &["md", "markdown"],
            Format::Text => &["txt", "text"],
            Format::Html => &["html", "htm"],
            Format::Pdf => &["pdf"],
        }
    }

    /// Its name as datasets record it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Json => "json",
            Format::JsonLines => "jsonl",
            Format::Spreadsheet => "spreadsheet",
            Format::Markdown => "markdown",
            Format::Text => "text",
            Format::Html => "html",
            Format::Pdf => "pdf",
        }
    }
}

/// Reads the file at `path` into one dataset (a spreadsheet: one per sheet with rows), named
/// `name` or after the file.
pub fn read_file(path: &Path, name: Option<&str>) -> Result<Vec<NewDataset>> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(format!("cannot read {shown}"), e))?;
    if meta.is_dir() {
        return Err(Error::invalid(format!("{shown} is a folder; load the files in it one by one")));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big(&shown, meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::io(format!("cannot read {shown}"), e))?;
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or(&shown).to_string();
    read_bytes(&file, &bytes, name)
}

fn too_big(file: &str, len: u64) -> Error {
    Error::invalid(format!(
        "{file} is {:.0} MB; the largest file Strata loads is {} MB",
        len as f64 / 1e6,
        MAX_FILE_BYTES / 1024 / 1024
    ))
}

/// Reads `bytes`, the content of a file named `file`.
pub fn read_bytes(file: &str, bytes: &[u8], name: Option<&str>) -> Result<Vec<NewDataset>> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big(file, bytes.len() as u64));
    }
    let format = Format::of(file)?;
    let name = match name {
        Some(n) => {
            strata_core::datasets::check_name(n)?;
            n.to_string()
        }
        None => {
            let stem = Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or(file);
            sql_name(stem).unwrap_or_else(|| "dataset".into())
        }
    };
    let digest = format!("{:x}", Sha256::digest(bytes));
    let base = NewDataset {
        name,
        source: file.to_string(),
        format: format.name().into(),
        digest,
        kind: strata_core::datasets::DatasetKind::Table,
        columns: Vec::new(),
        rows: Vec::new(),
        sections: Vec::new(),
        chunks: Vec::new(),
        notes: Vec::new(),
    };
    let read = match format {
        Format::Csv => table::delimited(file, bytes, b',', base).map(|d| vec![d]),
        Format::Tsv => table::delimited(file, bytes, b'\t', base).map(|d| vec![d]),
        Format::Json => table::json(file, bytes, base).map(|d| vec![d]),
        Format::JsonLines => table::json_lines(file, bytes, base).map(|d| vec![d]),
        Format::Spreadsheet => xlsx::sheets(file, bytes, base),
        Format::Markdown => document::markdown(file, bytes, base).map(|d| vec![d]),
        Format::Text => document::plain(file, bytes, base).map(|d| vec![d]),
        Format::Html => document::html(file, bytes, base).map(|d| vec![d]),
        Format::Pdf => pdf::read(file, bytes, base).map(|d| vec![d]),
    }?;
    Ok(read)
}
