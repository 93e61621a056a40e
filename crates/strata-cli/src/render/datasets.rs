//! How `strata datasets` prints: lists, a table's page, a document's passages, SQL answers and
//! search results with their citations.

use anyhow::Result;
use strata_api::{DatasetLoaded, HistoryReport};
use strata_core::datasets::{Cell, Chunk, Dataset, DatasetHit, DatasetKind, Loaded, SqlAnswer};

use super::{Out, print_json, print_table, table};

/// "48 rows, 5 columns" or "3 pages, 9 passages".
fn size(d: &Dataset) -> String {
    match d.kind {
        DatasetKind::Table => format!("{} rows, {} columns", d.rows, d.columns.len()),
        DatasetKind::Document => {
            let pages = d.sections.iter().filter_map(|s| s.page).max();
            match pages {
                Some(p) => format!("{p} pages, {} passages", d.chunks),
                None => format!("{} headings, {} passages", d.sections.len(), d.chunks),
            }
        }
    }
}

/// "all 9 embedded", "3 of 9 embedded".
fn embedded(d: &Dataset) -> String {
    if d.embedded >= d.chunks {
        "searchable by meaning".into()
    } else {
        format!("{} of {} passages searchable by meaning", d.embedded, d.chunks)
    }
}

fn cell(c: &Cell) -> String {
    strata_api::dto::truncate(&c.display(), 60)
}

impl Out {
    /// Prints any value as JSON (the CLI's `--json`).
    pub fn json_value(&self, v: &serde_json::Value) -> Result<()> {
        print_json(v)
    }

    pub fn datasets(&self, list: &[Dataset]) -> Result<()> {
        if self.json {
            return print_json(list);
        }
        if list.is_empty() {
            say!("No datasets yet: `strata datasets load FILE` brings in a table or a document.");
            return Ok(());
        }
        let mut t = table(&["name", "kind", "size", "from", "loaded"]);
        for d in list {
            t.add_row(vec![
                d.name.clone(),
                d.kind.as_str().into(),
                size(d),
                d.source.clone(),
                d.updated_at.format("%Y-%m-%d").to_string(),
            ]);
        }
        print_table(&t)
    }

    pub fn datasets_loaded(&self, loaded: &[DatasetLoaded]) -> Result<()> {
        if self.json {
            return print_json(loaded);
        }
        for l in loaded {
            let d = &l.dataset;
            let verb = match l.outcome {
                Loaded::Added => "Loaded",
                Loaded::Replaced => "Reloaded (the file changed)",
                Loaded::Unchanged => "Already loaded, unchanged",
            };
            say!("{verb}: {} from {} — {}", d.name, d.source, size(d));
            for n in &d.notes {
                say!("  Note: {n}");
            }
        }
        Ok(())
    }

    pub fn dataset_table(&self, d: &Dataset, from: u64, rows: &[Vec<Cell>]) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({ "dataset": d, "from": from, "rows": rows }));
        }
        say!("{} — a table from {}, {}; {}", d.name, d.source, size(d), embedded(d));
        let columns: Vec<String> = d
            .columns
            .iter()
            .map(|c| if c.header == c.name { c.name.clone() } else { format!("{} (“{}”)", c.name, c.header) })
            .collect();
        say!("Columns: {}", columns.join(", "));
        let names: Vec<&str> = d.columns.iter().map(|c| c.name.as_str()).collect();
        let mut t = table(&names);
        for r in rows {
            t.add_row(r.iter().map(cell).collect::<Vec<_>>());
        }
        print_table(&t)?;
        let last = from + rows.len() as u64 - u64::from(!rows.is_empty());
        say!("Rows {from}–{last} of {}.", d.rows);
        Ok(())
    }

    pub fn dataset_document(&self, d: &Dataset, from: u64, passages: &[Chunk]) -> Result<()> {
        if self.json {
            return print_json(&serde_json::json!({ "dataset": d, "from": from, "passages": passages }));
        }
        say!("{} — a document from {}, {}; {}", d.name, d.source, size(d), embedded(d));
        for s in d.sections.iter().filter(|s| s.heading.is_some()) {
            let indent = "  ".repeat(usize::from(s.depth.saturating_sub(1)));
            let at = match s.page {
                Some(p) => format!("page {p}"),
                None => format!("line {}", s.line),
            };
            say!("{indent}{} ({at})", s.heading.as_deref().unwrap_or_default());
        }
        for (i, p) in passages.iter().enumerate() {
            say!("");
            say!("[{}] {}", from + i as u64, p.place.describe());
            say!("{}", p.text.trim());
        }
        Ok(())
    }

    pub fn sql_answer(&self, a: &SqlAnswer) -> Result<()> {
        if self.json {
            return print_json(a);
        }
        let names: Vec<&str> = a.columns.iter().map(String::as_str).collect();
        let mut t = table(&names);
        for r in &a.rows {
            t.add_row(r.iter().map(cell).collect::<Vec<_>>());
        }
        print_table(&t)?;
        let more = if a.cut_off { " (more were left out: raise --rows)" } else { "" };
        say!("{} {} in {} ms{more}.", a.rows.len(), if a.rows.len() == 1 { "row" } else { "rows" }, a.millis);
        Ok(())
    }

    pub fn dataset_hits(&self, hits: &[DatasetHit], query: &str) -> Result<()> {
        if self.json {
            return print_json(hits);
        }
        if hits.is_empty() {
            say!("Nothing in your datasets matches “{query}”.");
            return Ok(());
        }
        for (i, h) in hits.iter().enumerate() {
            say!("[{}] {} — {}, {}", i + 1, h.dataset, h.source, h.place.describe());
            say!("    {}", strata_api::dto::truncate(&h.text.split_whitespace().collect::<Vec<_>>().join(" "), 300));
        }
        Ok(())
    }

    pub fn history_imported(&self, file: &str, r: &HistoryReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        if r.tool == "mem0" {
            say!("Imported {} of mem0's memories from {file} ({} already here).", r.added, r.already);
            return Ok(());
        }
        say!(
            "Imported {} turns of {} {} conversations from {file} into {} sessions ({} already here).",
            r.added,
            r.conversations,
            r.tool,
            r.sessions.len(),
            r.already
        );
        if r.added > 0 {
            say!("`strata extract` reads the facts worth keeping from them (it goes on where it stopped).");
        }
        Ok(())
    }

    pub fn datasets_bench(&self, r: &strata_bench::datasetbench::DatasetBenchReport) -> Result<()> {
        if self.json {
            return print_json(r);
        }
        if let Some(c) = &r.csv {
            say!(
                "CSV: {:.0} MB, {} rows — read {:.1} s, kept (queryable) {:.1} s, in all {:.1} s",
                c.bytes as f64 / 1e6,
                c.items,
                c.read_s,
                c.keep_s,
                c.read_s + c.keep_s
            );
        }
        for (sql, l) in &r.sql {
            say!("  SQL p50 {:.1} ms, p95 {:.1} ms: {sql}", l.p50_ms, l.p95_ms);
        }
        if let (Some(k), Some(h)) = (&r.keyword, &r.hybrid) {
            say!(
                "Search over {} rows: keyword p50 {:.1} / p95 {:.1} ms; keyword and meaning p50 {:.1} / p95 {:.1} ms",
                r.search_chunks,
                k.p50_ms,
                k.p95_ms,
                h.p50_ms,
                h.p95_ms
            );
        }
        if let Some(p) = &r.pdf {
            say!(
                "PDF: {:.1} MB, {} passages — read {:.1} s, kept {:.1} s, embedded {:.1} s",
                p.bytes as f64 / 1e6,
                p.items,
                p.read_s,
                p.keep_s,
                p.embed_s.unwrap_or(0.0)
            );
        }
        if let Some(b) = &r.beside_load {
            say!(
                "Memory searches while the CSV was kept beside them ({:.1} s): {} searches, p50 {:.1} / p95 {:.1} / max {:.1} ms",
                b.load_s,
                b.searches,
                b.latency.p50_ms,
                b.latency.p95_ms,
                b.max_ms
            );
        }
        if let Some((conversations, turns, s)) = r.chatgpt {
            say!("ChatGPT export: {conversations} conversations, {turns} turns imported in {s:.1} s");
        }
        Ok(())
    }

    pub fn table_answer(&self, a: &strata_api::TableAnswer) -> Result<()> {
        if self.json {
            return print_json(a);
        }
        say!("{} wrote: {}", a.model, a.sql);
        self.sql_answer(&a.answer)
    }
}
