//! Tables: CSV and TSV (`csv`), a JSON list of objects, JSON lines. The first row (or the keys,
//! in the order first seen) names the columns; each column's type is what all its values are
//! (whole numbers, numbers, else text); every row is also a chunk that search finds.

use strata_core::datasets::{Cell, Chunk, Column, ColumnType, DatasetKind, NewDataset, Place, sql_name};
use strata_core::{Error, Result};

use crate::text::decode;

/// A table's header and rows, as read; `finish` types and names them.
pub(crate) struct Raw {
    pub(crate) headers: Vec<String>,
    pub(crate) rows: Vec<Vec<Cell>>,
}

/// CSV (`delimiter` `,`) or TSV (`\t`).
pub(crate) fn delimited(file: &str, bytes: &[u8], delimiter: u8, mut base: NewDataset) -> Result<NewDataset> {
    let (text, note) = decode(file, bytes)?;
    base.notes.extend(note);
    let mut reader =
        csv::ReaderBuilder::new().delimiter(delimiter).has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut records = reader.records();
    let headers: Vec<String> = match records.next() {
        Some(r) => r.map_err(|e| bad_csv(file, e))?.iter().map(str::to_string).collect(),
        None => return Err(Error::invalid(format!("{file} is empty"))),
    };
    let mut rows = Vec::new();
    let mut short = 0usize;
    for record in records {
        let record = record.map_err(|e| bad_csv(file, e))?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() > headers.len() {
            return Err(Error::invalid(format!(
                "{file}, line {line}: {} values for {} columns — a quote or a {} too many? Nothing was loaded",
                record.len(),
                headers.len(),
                if delimiter == b'\t' { "tab" } else { "comma" }
            )));
        }
        if record.len() == 1 && record.get(0) == Some("") {
            continue; // a blank line
        }
        if record.len() < headers.len() {
            short += 1;
        }
        let mut row: Vec<Cell> = record.iter().map(infer_text).collect();
        row.resize(headers.len(), Cell::Null);
        rows.push(row);
    }
    if short > 0 {
        base.notes.push(format!(
            "{short} {} fewer values than columns: the missing ones are empty",
            if short == 1 { "row had" } else { "rows had" }
        ));
    }
    finish(file, Raw { headers, rows }, base)
}

fn bad_csv(file: &str, e: csv::Error) -> Error {
    let at = e.position().map(|p| format!(", line {}", p.line())).unwrap_or_default();
    Error::invalid(format!("{file}{at} cannot be read as a table: {e}"))
}

/// A JSON list of objects.
pub(crate) fn json(file: &str, bytes: &[u8], base: NewDataset) -> Result<NewDataset> {
    let (text, _) = decode(file, bytes)?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("{file}, line {}: not JSON ({e})", e.line())))?;
    let serde_json::Value::Array(items) = value else {
        return Err(Error::invalid(format!("{file}: a table in JSON is a list of objects ([{{…}}, {{…}}])")));
    };
    let objects = items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            serde_json::Value::Object(o) => Ok(o),
            _ => Err(Error::invalid(format!("{file}: item {} of the list is not an object", i + 1))),
        })
        .collect::<Result<Vec<_>>>()?;
    finish(file, from_objects(objects), base)
}

/// One JSON object per line (blank lines skipped).
pub(crate) fn json_lines(file: &str, bytes: &[u8], base: NewDataset) -> Result<NewDataset> {
    let (text, _) = decode(file, bytes)?;
    let mut objects = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        match serde_json::from_str(line) {
            Ok(serde_json::Value::Object(o)) => objects.push(o),
            Ok(_) => return Err(Error::invalid(format!("{file}, line {}: not a JSON object", i + 1))),
            Err(e) => return Err(Error::invalid(format!("{file}, line {}: not JSON ({e})", i + 1))),
        }
    }
    finish(file, from_objects(objects), base)
}

fn from_objects(objects: Vec<serde_json::Map<String, serde_json::Value>>) -> Raw {
    let mut headers: Vec<String> = Vec::new();
    for o in &objects {
        for k in o.keys() {
            if !headers.contains(k) {
                headers.push(k.clone());
            }
        }
    }
    let rows = objects
        .iter()
        .map(|o| {
            headers
                .iter()
                .map(|h| match o.get(h) {
                    None | Some(serde_json::Value::Null) => Cell::Null,
                    Some(serde_json::Value::Bool(b)) => Cell::Text(b.to_string()),
                    Some(serde_json::Value::Number(n)) => {
                        n.as_i64().map(Cell::Int).unwrap_or_else(|| Cell::Real(n.as_f64().unwrap_or(f64::NAN)))
                    }
                    Some(serde_json::Value::String(s)) => Cell::Text(s.clone()),
                    Some(nested) => Cell::Text(nested.to_string()),
                })
                .collect()
        })
        .collect();
    Raw { headers, rows }
}

/// A text value as the number it spells, if it spells one plainly ("12", "-3.5"; not "007",
/// which is a code, nor "1e3").
pub(crate) fn infer_text(s: &str) -> Cell {
    let t = s.trim();
    if t.is_empty() {
        return Cell::Null;
    }
    let digits = t.strip_prefix('-').unwrap_or(t);
    let plain = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1
        && !digits.starts_with('.')
        && !digits.ends_with('.')
        && !(digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0."));
    if plain {
        if let Ok(i) = t.parse::<i64>() {
            return Cell::Int(i);
        }
        if let Ok(x) = t.parse::<f64>() {
            return Cell::Real(x);
        }
    }
    Cell::Text(s.to_string())
}

/// Each column's type: whole numbers, numbers, or text; a number in a text column is kept as
/// the text it was.
pub fn infer_cells(rows: &mut [Vec<Cell>], width: usize) -> Vec<ColumnType> {
    let mut kinds = vec![ColumnType::Integer; width];
    for row in rows.iter() {
        for (k, c) in kinds.iter_mut().zip(row) {
            *k = match (*k, c) {
                (k, Cell::Null) => k,
                (ColumnType::Integer, Cell::Int(_)) => ColumnType::Integer,
                (ColumnType::Integer | ColumnType::Real, Cell::Int(_) | Cell::Real(_)) => ColumnType::Real,
                _ => ColumnType::Text,
            };
        }
    }
    for row in rows.iter_mut() {
        for (k, c) in kinds.iter().zip(row.iter_mut()) {
            if *k == ColumnType::Text && matches!(c, Cell::Int(_) | Cell::Real(_)) {
                *c = Cell::Text(c.display());
            }
        }
    }
    kinds
}

/// Names the columns for SQL, types them, and makes each row a chunk.
pub(crate) fn finish(file: &str, mut raw: Raw, mut base: NewDataset) -> Result<NewDataset> {
    if raw.headers.is_empty() {
        return Err(Error::invalid(format!("{file} has no columns")));
    }
    if raw.rows.is_empty() {
        return Err(Error::invalid(format!("{file} has a header but no rows")));
    }
    let kinds = infer_cells(&mut raw.rows, raw.headers.len());
    let mut names: Vec<String> = Vec::new();
    for (i, h) in raw.headers.iter().enumerate() {
        let mut name = sql_name(h).unwrap_or_else(|| format!("column_{}", i + 1));
        if names.contains(&name) || name == "row_number" {
            let mut n = 2;
            while names.contains(&format!("{name}_{n}")) {
                n += 1;
            }
            name = format!("{name}_{n}");
        }
        names.push(name);
    }
    base.columns = names
        .into_iter()
        .zip(&raw.headers)
        .zip(kinds)
        .map(|((name, header), kind)| Column { name, header: header.trim().to_string(), kind })
        .collect();
    base.chunks = raw
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| Chunk {
            text: row_text(&base.columns, row),
            place: Place { row: Some(i as u64 + 1), ..Place::default() },
        })
        .collect();
    base.kind = DatasetKind::Table;
    base.rows = raw.rows;
    Ok(base)
}

/// A row as search reads it: "date: 2025-01-03; category: rent; amount: 950".
fn row_text(columns: &[Column], row: &[Cell]) -> String {
    columns
        .iter()
        .zip(row)
        .filter(|(_, c)| **c != Cell::Null)
        .map(|(col, c)| format!("{}: {}", col.header, c.display()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A value as a CSV export writes it ([`strata_core::datasets::csv_safe`]): a formula is
/// shown, never run; numbers are written as they are.
pub fn csv_cell(c: &Cell) -> String {
    match c {
        Cell::Text(t) => strata_core::datasets::csv_safe(t).into_owned(),
        other => other.display(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_plainly_and_codes_stay_text() {
        assert_eq!(infer_text("12"), Cell::Int(12));
        assert_eq!(infer_text("-3.5"), Cell::Real(-3.5));
        assert_eq!(infer_text("0.25"), Cell::Real(0.25));
        assert_eq!(infer_text("007"), Cell::Text("007".into()));
        assert_eq!(infer_text("1e3"), Cell::Text("1e3".into()));
        assert_eq!(infer_text("2025-01-03"), Cell::Text("2025-01-03".into()));
        assert_eq!(infer_text(" "), Cell::Null);
        let mut rows = vec![vec![Cell::Int(1), Cell::Int(2)], vec![Cell::Real(1.5), Cell::Text("x".into())]];
        assert_eq!(infer_cells(&mut rows, 2), vec![ColumnType::Real, ColumnType::Text]);
        assert_eq!(rows[0][1], Cell::Text("2".into()));
    }

    #[test]
    fn exported_cells_never_run_as_formulas() {
        assert_eq!(csv_cell(&Cell::Text("=1+1".into())), "'=1+1");
        assert_eq!(csv_cell(&Cell::Real(-2.5)), "-2.5");
        assert_eq!(csv_cell(&Cell::Text("-".into())), "'-");
    }
}
