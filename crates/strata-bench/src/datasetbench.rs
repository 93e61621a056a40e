//! Datasets at scale (`strata bench datasets`, inputs from `scripts/datasets_bench_data.py`):
//! a large CSV read and kept until SQL can query it, then SQL latency; a long PDF read, kept and
//! embedded; search latency (keyword, and keyword with meaning) over a table's first N rows
//! kept as a dataset of their own and embedded; a ChatGPT export imported; and what a window
//! searching memories meanwhile waits while the large CSV is kept by another engine (as the
//! desktop loads files apart).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;
use strata_api::{ApiResult, Engine, EngineOptions};
use strata_core::Embedder;
use strata_core::datasets::SqlLimits;

use crate::scalebench::{Latency, latency};

/// Times each SQL statement and each search query is run.
const RUNS: usize = 20;

/// The statements timed over the large CSV (`expenses` columns of the generated file).
const STATEMENTS: &[&str] = &[
    "SELECT count(*) FROM big",
    "SELECT category, count(*), round(sum(amount), 2) FROM big GROUP BY category",
    "SELECT * FROM big WHERE city = 'Porto' AND amount > 390 LIMIT 50",
    "SELECT date, sum(amount) FROM big WHERE date LIKE '2023-05-%' GROUP BY date ORDER BY date",
    "SELECT * FROM big ORDER BY amount DESC LIMIT 10",
];

/// Search queries.
const QUERIES: &[&str] =
    &["bakery in Lisbon", "concert tickets", "museum garden", "travel by bicycle", "gifts from the market"];

/// A file loaded.
#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    /// The file's bytes.
    pub bytes: u64,
    /// Rows (a table) or passages (a document).
    pub items: u64,
    /// Seconds to read and parse the file.
    pub read_s: f64,
    /// Seconds to keep it (one transaction), after which SQL and keyword search work.
    pub keep_s: f64,
    /// Seconds to embed its passages (documents), for search by meaning.
    pub embed_s: Option<f64>,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetBenchReport {
    /// The large CSV.
    pub csv: Option<LoadReport>,
    /// Each statement's latency over it.
    pub sql: Vec<(String, Latency)>,
    /// The long PDF.
    pub pdf: Option<LoadReport>,
    /// Chunks searched (the table's first rows, embedded).
    pub search_chunks: u64,
    /// Keyword search latency.
    pub keyword: Option<Latency>,
    /// Keyword and meaning (the query embedded each time).
    pub hybrid: Option<Latency>,
    /// The ChatGPT export: conversations, turns and seconds.
    pub chatgpt: Option<(u64, u64, f64)>,
    /// Searches of the memories by another engine on the same file while the CSV was kept.
    pub beside_load: Option<BesideLoad>,
}

/// What a window's searches waited while a large file was kept beside them.
#[derive(Debug, Clone, Serialize)]
pub struct BesideLoad {
    /// Searches made (one every 50 ms while the load ran).
    pub searches: usize,
    /// Their latency.
    pub latency: Latency,
    /// The slowest.
    pub max_ms: f64,
    /// How long the load took meanwhile.
    pub load_s: f64,
}

/// The window's engine searching the example memories every 50 ms (as its search box does once
/// typing settles, with its periodic flush) while another engine on the same file reads and
/// keeps `csv`, in the (fresh) store at `store`.
fn beside_load(store: &Path, csv: &Path) -> ApiResult<BesideLoad> {
    let mut window = Engine::open(store, EngineOptions::default())?;
    window.demo()?;
    let mut loader = Engine::open(store, EngineOptions::default())?;
    let csv = csv.to_path_buf();
    let started = Instant::now();
    let load = std::thread::spawn(move || keep(&mut loader, &csv, "big"));
    let mut ms = Vec::new();
    while !load.is_finished() {
        let t = Instant::now();
        // What the window does: a settled search (recorded for analytics, its results' accesses
        // noted) and the periodic flush.
        window.searched("Napoleon exile", strata_core::Filter::default(), 10)?;
        window.flush_due()?;
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    load.join().map_err(|_| strata_core::Error::invalid("the load beside the searches panicked"))??;
    let load_s = started.elapsed().as_secs_f64();
    let max_ms = ms.iter().copied().fold(0.0, f64::max);
    Ok(BesideLoad { searches: ms.len(), latency: latency(ms), max_ms, load_s })
}

/// The files to measure (any may be left out).
#[derive(Debug, Clone, Default)]
pub struct Inputs<'a> {
    /// A large CSV (the generated `expenses-1m.csv`).
    pub csv: Option<&'a Path>,
    /// A long PDF.
    pub pdf: Option<&'a Path>,
    /// A ChatGPT export.
    pub chatgpt: Option<&'a Path>,
    /// How many of the CSV's rows to embed and search.
    pub search_rows: usize,
    /// A PostgreSQL server to keep each part on (a fresh database each), instead of SQLite.
    pub postgres: Option<&'a str>,
}

fn keep(engine: &mut Engine, path: &Path, name: &str) -> ApiResult<LoadReport> {
    let started = Instant::now();
    let read = strata_datasets::read_file(path, Some(name))?;
    let read_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut items = 0;
    for d in &read {
        let kept = engine.load_dataset(d)?.dataset;
        items += kept.rows.max(kept.chunks);
    }
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Ok(LoadReport { bytes, items, read_s, keep_s: started.elapsed().as_secs_f64(), embed_s: None })
}

/// Runs what `inputs` names, each part in a store of its own in `workdir` or a fresh database
/// of the PostgreSQL server named (embedding the passages of one store embeds all of them).
pub fn run(workdir: &Path, embedder: Arc<dyn Embedder>, inputs: &Inputs<'_>) -> ApiResult<DatasetBenchReport> {
    // A fresh store's location for each part.
    let location = |name: &str| -> ApiResult<std::path::PathBuf> {
        match inputs.postgres {
            Some(url) => {
                let base = url.rsplit_once('/').map_or(url, |(b, _)| b);
                let db = format!("{base}/strata_datasets_{name}");
                strata_core::postgres::recreate_database(&db)?;
                Ok(db.into())
            }
            None => Ok(workdir.join(format!("{name}.db"))),
        }
    };
    let store = |name: &str| Engine::open(&location(name)?, EngineOptions::default());
    let mut engine = store("csv")?;
    let mut report = DatasetBenchReport {
        csv: None,
        sql: Vec::new(),
        pdf: None,
        search_chunks: 0,
        keyword: None,
        hybrid: None,
        chatgpt: None,
        beside_load: None,
    };
    if let Some(csv) = inputs.csv {
        report.csv = Some(keep(&mut engine, csv, "big")?);
        for sql in STATEMENTS {
            let mut ms = Vec::new();
            for _ in 0..RUNS {
                let started = Instant::now();
                engine.query_dataset("big", sql, SqlLimits::default())?;
                ms.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            report.sql.push((sql.to_string(), latency(ms)));
        }
        search(&mut store("search")?, csv, embedder.clone(), inputs.search_rows, &mut report)?;
        report.beside_load = Some(beside_load(&location("beside")?, csv)?);
    }
    if let Some(pdf) = inputs.pdf {
        let mut engine = store("pdf")?;
        engine.use_embedder(embedder.clone(), false)?;
        let mut kept = keep(&mut engine, pdf, "handbook")?;
        let started = Instant::now();
        engine.embed_passages(&AtomicBool::new(false), &mut |_, _| {})?;
        kept.embed_s = Some(started.elapsed().as_secs_f64());
        report.pdf = Some(kept);
    }
    if let Some(export) = inputs.chatgpt {
        let text = std::fs::read_to_string(export).map_err(|e| strata_core::Error::io("cannot read the export", e))?;
        let started = Instant::now();
        let r = store("history")?.import_history(&export.display().to_string(), &text)?;
        report.chatgpt = Some((r.conversations, r.added, started.elapsed().as_secs_f64()));
    }
    Ok(report)
}

/// The first `rows` rows of the CSV kept as a dataset of their own (in a store of their own),
/// embedded, then searched.
fn search(
    engine: &mut Engine,
    csv: &Path,
    embedder: Arc<dyn Embedder>,
    rows: usize,
    report: &mut DatasetBenchReport,
) -> ApiResult<()> {
    if rows == 0 {
        return Ok(());
    }
    let text = std::fs::read_to_string(csv).map_err(|e| strata_core::Error::io("cannot read the CSV", e))?;
    let head: String = text.lines().take(rows + 1).map(|l| format!("{l}\n")).collect();
    let mut part = strata_datasets::read_bytes("part.csv", head.as_bytes(), Some("part"))?.remove(0);
    part.digest = format!("{}-{rows}", part.digest);
    engine.load_dataset(&part)?;
    engine.use_embedder(embedder, false)?;
    engine.embed_passages(&AtomicBool::new(false), &mut |_, _| {})?;
    report.search_chunks = part.chunks.len() as u64;
    let only = vec!["part".to_string()];
    let time = |with_vectors: bool| -> ApiResult<Latency> {
        let mut ms = Vec::new();
        for _ in 0..RUNS / QUERIES.len().max(1) + 1 {
            for q in QUERIES {
                let started = Instant::now();
                if with_vectors {
                    engine.search_datasets(&only, q, 10)?;
                } else {
                    engine.search_datasets_by_keyword(&only, q, 10)?;
                }
                ms.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        Ok(latency(ms))
    };
    report.keyword = Some(time(false)?);
    report.hybrid = Some(time(true)?);
    Ok(())
}
