//! Spreadsheets (`calamine`): every sheet with rows becomes a table, the first row its header.
//! Dates become ISO 8601 text; a formula keeps the value the spreadsheet saved with it, or its
//! own text when none was saved (said in a note). An `.xlsx` is a zip archive: one that would
//! unpack to far more than it weighs (a zip bomb) is refused before it is opened.

use std::io::Cursor;

use calamine::{Data, Reader};
use strata_core::datasets::{Cell, NewDataset, sql_name};
use strata_core::{Error, Result};

use crate::table::{Raw, finish};

/// The most an archive may unpack to.
pub const MAX_UNPACKED: u64 = 1024 * 1024 * 1024;
/// The most an archive's members may grow by unpacking, together.
pub const MAX_RATIO: u64 = 100;

/// Each sheet with rows, as a table named `<name>` (one sheet) or `<name>_<sheet>`.
pub(crate) fn sheets(file: &str, bytes: &[u8], base: NewDataset) -> Result<Vec<NewDataset>> {
    if bytes.starts_with(b"PK\x03\x04") {
        check_archive(file, bytes)?;
    }
    let unreadable = |e: calamine::Error| Error::invalid(format!("{file} cannot be read as a spreadsheet: {e}"));
    let mut book = calamine::open_workbook_auto_from_rs(Cursor::new(bytes)).map_err(unreadable)?;
    let names = book.sheet_names();
    let mut out = Vec::new();
    for sheet in &names {
        let values = book.worksheet_range(sheet).map_err(unreadable)?;
        let formulas = book.worksheet_formula(sheet).ok();
        let Some((top, left)) = values.start() else { continue };
        let (height, width) = values.get_size();
        let mut formulas_kept = 0usize;
        let mut grid: Vec<Vec<Cell>> = Vec::with_capacity(height);
        for r in 0..height as u32 {
            let mut row = Vec::with_capacity(width);
            for c in 0..width as u32 {
                let at = (top + r, left + c);
                let cell = values.get_value(at).map_or(Cell::Null, cell_of);
                let formula = formulas.as_ref().and_then(|f| f.get_value(at)).filter(|f| !f.is_empty());
                row.push(match (cell, formula) {
                    (Cell::Null, Some(f)) => {
                        formulas_kept += 1;
                        Cell::Text(format!("={f}"))
                    }
                    (cell, _) => cell,
                });
            }
            grid.push(row);
        }
        grid.retain(|row| row.iter().any(|c| *c != Cell::Null));
        if grid.len() < 2 {
            continue;
        }
        let headers = grid.remove(0).iter().map(Cell::display).collect();
        let mut one = base.clone();
        if names.len() > 1 {
            one.name = sql_name(&format!("{}_{sheet}", base.name)).unwrap_or(one.name);
            one.source = format!("{file} › {sheet}");
            one.digest = format!("{}:{}", base.digest, sql_name(sheet).unwrap_or_default());
        }
        if formulas_kept > 0 {
            one.notes.push(format!(
                "{formulas_kept} {} no saved value (the program that wrote the file did not calculate it): \
                 kept as the formula's text",
                if formulas_kept == 1 { "formula had" } else { "formulas had" }
            ));
        }
        out.push(finish(&one.source.clone(), Raw { headers, rows: grid }, one)?);
    }
    if out.is_empty() {
        return Err(Error::invalid(format!("{file} has no sheet with a header and rows")));
    }
    Ok(out)
}

/// A cell's value; dates as ISO 8601 text, errors (`#DIV/0!`) as empty.
fn cell_of(d: &Data) -> Cell {
    match d {
        Data::Empty | Data::Error(_) => Cell::Null,
        Data::Int(i) => Cell::Int(*i),
        Data::Float(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Cell::Int(*x as i64),
        Data::Float(x) => Cell::Real(*x),
        Data::String(s) if s.trim().is_empty() => Cell::Null,
        Data::String(s) => Cell::Text(s.clone()),
        Data::Bool(b) => Cell::Text(b.to_string()),
        Data::DateTime(dt) => match dt.as_datetime() {
            Some(t) if t.time() == chrono::NaiveTime::MIN => Cell::Text(t.date().to_string()),
            Some(t) => Cell::Text(t.format("%Y-%m-%d %H:%M:%S").to_string()),
            None => Cell::Real(dt.as_f64()),
        },
        Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Text(s.clone()),
    }
}

/// Refuses an archive whose members would unpack to more than [`MAX_UNPACKED`] or more than
/// [`MAX_RATIO`] times its size, reading only its directory.
pub(crate) fn check_archive(file: &str, bytes: &[u8]) -> Result<()> {
    let archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| Error::invalid(format!("{file} is a damaged archive: {e}")))?;
    let unpacked: u64 = archive.decompressed_size().map(|n| n as u64).unwrap_or(u64::MAX);
    if unpacked > MAX_UNPACKED || unpacked > (bytes.len() as u64).saturating_mul(MAX_RATIO) {
        return Err(Error::invalid(format!(
            "{file} would unpack to {:.0} MB from {:.1} MB: refused as a zip bomb, nothing was opened",
            unpacked as f64 / 1e6,
            bytes.len() as f64 / 1e6
        )));
    }
    Ok(())
}
