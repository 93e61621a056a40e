//! The datasets' tools Strata gives its agents: list the person's datasets, search their
//! documents and rows, and run one read-only SELECT over a table (the issue before agents:
//! `strata datasets`). What a file says is the person's data, not instructions: a model reads
//! every tool result fenced (`ChatTools`).

use serde_json::{Value, json};
use strata_api::Engine;
use strata_core::datasets::{DatasetKind, SqlLimits};

use crate::model::ToolSpec;

/// The datasets' tools, by name.
pub const DATASET_TOOLS: [&str; 3] = ["list_datasets", "search_datasets", "query_dataset"];

/// The most rows a `query_dataset` result shows a model.
const MAX_ROWS: usize = 50;

/// The most passages one `search_datasets` returns.
const MAX_PASSAGES: usize = 10;

/// The dataset tool `name`'s description for a model; none for another name.
pub(crate) fn dataset_spec(name: &str) -> Option<ToolSpec> {
    let text = |d: &str| json!({"type": "string", "description": d, "minLength": 1, "maxLength": 1000});
    let (description, parameters) = match name {
        "list_datasets" => (
            "List the person's datasets: tables (with their columns) and documents.",
            json!({"type": "object", "properties": {}}),
        ),
        "search_datasets" => (
            "Search the person's documents and tables by words and meaning; each result names its file and place.",
            json!({"type": "object", "properties": {"query": text("what to look for"),
                "dataset": text("only this dataset (default: all)")}, "required": ["query"]}),
        ),
        "query_dataset" => (
            "Run one read-only SELECT over a table dataset, which the statement calls by its name, e.g. \
             SELECT category, sum(amount) FROM expenses GROUP BY category.",
            json!({"type": "object", "properties": {"dataset": text("the table's name"), "sql": text("one SELECT")},
                "required": ["dataset", "sql"]}),
        ),
        _ => return None,
    };
    Some(ToolSpec { name: name.into(), description: description.into(), parameters })
}

fn arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// Runs dataset tool `name` on `engine` (the person's datasets).
pub(crate) fn call_dataset(engine: &Engine, name: &str, args: &Value) -> Result<String, String> {
    let words = |e: strata_api::ApiError| e.message;
    match name {
        "list_datasets" => {
            let all = engine.datasets().map_err(words)?;
            if all.is_empty() {
                return Ok("The person has no datasets.".to_string());
            }
            Ok(all
                .iter()
                .map(|d| match d.kind {
                    DatasetKind::Table => format!(
                        "- {} (table from {}, {} rows): columns {}",
                        d.name,
                        d.source,
                        d.rows,
                        d.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                    DatasetKind::Document => {
                        format!("- {} (document from {}, {} passages)", d.name, d.source, d.chunks)
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"))
        }
        "search_datasets" => {
            let query = arg(args, "query").ok_or("give a `query`")?;
            let only: Vec<String> = arg(args, "dataset").map(|d| vec![d.to_string()]).unwrap_or_default();
            let hits = engine.search_datasets(&only, query, MAX_PASSAGES).map_err(words)?;
            if hits.is_empty() {
                return Ok(format!("Nothing in the datasets matches \"{query}\"."));
            }
            Ok(hits
                .iter()
                .map(|h| format!("- {} ({}, {}): {}", h.dataset, h.source, h.place.describe(), h.text))
                .collect::<Vec<_>>()
                .join("\n"))
        }
        "query_dataset" => {
            let dataset = arg(args, "dataset").ok_or("give the table's name as `dataset`")?;
            let sql = arg(args, "sql").ok_or("give one SELECT as `sql`")?;
            let limits = SqlLimits { rows: MAX_ROWS, ..SqlLimits::default() };
            let answer = engine.query_dataset(dataset, sql, limits).map_err(words)?;
            let mut out = answer.columns.join(" | ");
            for row in &answer.rows {
                let cells: Vec<String> = row.iter().map(|c| c.display()).collect();
                out.push('\n');
                out.push_str(&cells.join(" | "));
            }
            if answer.cut_off {
                out.push_str(&format!("\n(only the first {MAX_ROWS} rows)"));
            }
            Ok(out)
        }
        other => Err(format!("there is no dataset tool named {other}")),
    }
}
