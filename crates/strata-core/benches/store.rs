//! `cargo bench -p strata-core`: append throughput (individually committed and batched),
//! replay of 1,000,000 events, and full-text search latency over 100,000 memories, on real
//! database files. Prints a table; figures are recorded in docs/benchmarks.md.
//!
//! `STRATA_BENCH_SCALE=0.1` runs everything at a tenth of the size (a quick check).
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata_core::*;

/// `cargo bench` passes `--bench`; `cargo test --all-targets` does not, and then every scenario
/// runs at a tiny size as a smoke test.
fn is_bench() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn scale(n: usize) -> usize {
    let default = if is_bench() { 1.0 } else { 0.002 };
    let s: f64 = std::env::var("STRATA_BENCH_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    ((n as f64 * s) as usize).max(10)
}

/// A vocabulary with a Zipf-like frequency, so some words are common and most are rare.
struct Text {
    words: Vec<String>,
    rng: StdRng,
}

impl Text {
    fn new(seed: u64) -> Text {
        let mut rng = StdRng::seed_from_u64(seed);
        let syll = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "en", "qui", "bar", "nos", "ti", "ur", "phe"];
        let words = (0..8000)
            .map(|_| (0..rng.random_range(2..4)).map(|_| syll[rng.random_range(0..syll.len())]).collect::<String>())
            .collect();
        Text { words, rng }
    }

    fn word(&mut self) -> &str {
        // Inverse-power sampling: rank ~ u^3 concentrates mass on the first words.
        let u: f64 = self.rng.random();
        let i = ((u * u * u) * self.words.len() as f64) as usize;
        &self.words[i.min(self.words.len() - 1)]
    }

    fn sentence(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word().to_string()).collect::<Vec<_>>().join(" ")
    }
}

fn content(text: &mut Text, i: usize) -> Content {
    match i % 3 {
        0 => Content::Semantic(Concept {
            key: format!("concept_{i}"),
            facts: [("note".to_string(), FactValue::Text(text.sentence(12)))].into_iter().collect(),
        }),
        1 => Content::Episodic(Episode {
            occurred_at: chrono::DateTime::from_timestamp(1_600_000_000 + i as i64 * 60, 0).unwrap(),
            body: EpisodeBody::Utterance { speaker: "Mel".into(), text: text.sentence(20) },
            concepts: vec![],
            extra: Default::default(),
        }),
        _ => Content::Procedural(Procedure {
            name: format!("procedure_{i}"),
            steps: vec![text.sentence(6), text.sentence(6), text.sentence(6)],
            context: None,
        }),
    }
}

fn open(dir: &std::path::Path, name: &str) -> Store {
    Store::open(dir.join(name)).unwrap()
}

fn meta() -> EventMeta {
    EventMeta::actor(Actor::User)
}

/// Creates `contents` in transactions of 1,000, running `then` on each new memory inside the
/// same transaction; returns the ids in order.
fn fill(
    store: &mut Store,
    contents: Vec<Content>,
    mut then: impl FnMut(&mut StoreTx<'_>, MemoryId) -> Result<()>,
) -> Vec<MemoryId> {
    let mut ids = Vec::with_capacity(contents.len());
    let mut contents = contents.into_iter().peekable();
    while contents.peek().is_some() {
        let chunk: Vec<Content> = contents.by_ref().take(1000).collect();
        store
            .transact(|tx| {
                for c in chunk {
                    let id = tx.create(c, NewMemory::default(), &meta())?.id;
                    then(tx, id)?;
                    ids.push(id);
                }
                Ok(())
            })
            .unwrap();
    }
    ids
}

struct Row {
    name: String,
    value: String,
    target: String,
}

fn append_individual(dir: &std::path::Path) -> Row {
    let n = scale(5_000);
    let mut store = open(dir, "individual.db");
    let mut text = Text::new(1);
    let contents: Vec<_> = (0..n).map(|i| content(&mut text, i)).collect();
    let t = Instant::now();
    for c in contents {
        store.create(c, NewMemory::default(), &meta()).unwrap();
    }
    let rate = n as f64 / t.elapsed().as_secs_f64();
    Row {
        name: format!("append, one transaction each ({n} creates)"),
        value: format!("{rate:.0} events/s"),
        target: "-".into(),
    }
}

/// One batched run on a fresh database: (creates/s, tag-and-access events/s).
fn append_batched_once(dir: &std::path::Path, run: usize) -> (f64, f64) {
    let n = scale(100_000);
    let mut store = open(dir, &format!("batched{run}.db"));
    let mut text = Text::new(2);
    let contents: Vec<_> = (0..n).map(|i| content(&mut text, i)).collect();
    let t = Instant::now();
    let ids = fill(&mut store, contents, |_, _| Ok(()));
    store.checkpoint().unwrap(); // deferred checkpoint work counts too
    let create_rate = n as f64 / t.elapsed().as_secs_f64();
    // A mixed stream of cheaper events on existing memories: tags and accesses.
    let t = Instant::now();
    for chunk in ids.chunks(1000) {
        store
            .transact(|tx| {
                for id in chunk {
                    tx.tag(*id, "bench", &meta())?;
                    tx.append(*id, Expected::Any, Change::Accessed { count: 1 }, &meta())?;
                }
                Ok(())
            })
            .unwrap();
    }
    store.checkpoint().unwrap();
    (create_rate, (2 * n) as f64 / t.elapsed().as_secs_f64())
}

fn append_batched(dir: &std::path::Path) -> (Row, Row) {
    let n = scale(100_000);
    let runs: Vec<(f64, f64)> = (0..3).map(|run| append_batched_once(dir, run)).collect();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    let creates = median(runs.iter().map(|r| r.0).collect());
    let mixed = median(runs.iter().map(|r| r.1).collect());
    (
        Row {
            name: format!("append, batches of 1,000 ({n} creates, with FTS; median of 3)"),
            value: format!("{creates:.0} events/s"),
            target: "≥ 50,000 events/s".into(),
        },
        Row {
            name: format!("append, batches of 1,000 ({} tag/access events; median of 3)", 2 * n),
            value: format!("{mixed:.0} events/s"),
            target: "≥ 50,000 events/s".into(),
        },
    )
}

fn replay(dir: &std::path::Path) -> Row {
    // 1,000,000 events: 100,000 memories × (create, 3 tags, 4 accesses, importance, tier).
    let memories = scale(100_000);
    let mut store = open(dir, "replay.db");
    let mut text = Text::new(3);
    let contents = (0..memories).map(|i| content(&mut text, i)).collect();
    fill(&mut store, contents, |tx, id| {
        for t in ["alpha", "beta", "gamma"] {
            tx.tag(id, t, &meta())?;
        }
        for _ in 0..4 {
            tx.append(id, Expected::Any, Change::Accessed { count: 1 }, &meta())?;
        }
        tx.set_importance(id, Importance::new(0.7)?, &meta())?;
        tx.set_tier(id, Tier::Long, "bench", &meta()).map(|_| ())
    });
    let events = store.event_count().unwrap();
    let mut times = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        store.replay().unwrap();
        times.push(t.elapsed());
    }
    times.sort();
    Row {
        name: format!("replay {events} events → {memories} memories (median of 3)"),
        value: format!("{:.2} s", times[1].as_secs_f64()),
        target: "< 10 s".into(),
    }
}

fn search(dir: &std::path::Path) -> Row {
    let n = scale(100_000);
    let mut store = open(dir, "search.db");
    let mut text = Text::new(4);
    fill(&mut store, (0..n).map(|i| content(&mut text, i)).collect(), |_, _| Ok(()));
    let mut q = Text::new(5);
    let queries: Vec<String> = (0..1000).map(|i| q.sentence(1 + i % 3)).collect();
    for query in queries.iter().take(50) {
        store.search(query, &Filter::default(), 10, ("[", "]")).unwrap(); // warm up
    }
    let mut lat: Vec<Duration> = queries
        .iter()
        .map(|query| {
            let t = Instant::now();
            store.search(query, &Filter::default(), 10, ("[", "]")).unwrap();
            t.elapsed()
        })
        .collect();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)].as_secs_f64() * 1000.0;
    Row {
        name: format!("FTS search, {n} memories, 1–3 word queries, top 10 + snippets"),
        value: format!("p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms", pct(0.5), pct(0.95), pct(0.99)),
        target: "p95 < 5 ms".into(),
    }
}

/// Opening an existing store, whose integrity check at open reads the whole file, next to
/// the check alone (the baseline: what opening costs without it is the difference).
fn open_existing(dir: &std::path::Path) -> Row {
    let n = scale(100_000);
    let mut store = open(dir, "open.db");
    let mut text = Text::new(6);
    fill(&mut store, (0..n).map(|i| content(&mut text, i)).collect(), |_, _| Ok(()));
    store.checkpoint().unwrap();
    drop(store);
    let path = dir.join("open.db");
    let median = |f: &dyn Fn()| {
        let mut times: Vec<Duration> = (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect();
        times.sort();
        times[2].as_secs_f64() * 1000.0
    };
    let opening = median(&|| drop(Store::open(&path).unwrap()));
    let check = median(&|| {
        let conn = rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        // What the store's open runs: SQLite's quick check over the whole file.
        let ok: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, "ok");
    });
    let mb = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    Row {
        name: format!("open a store of {n} memories ({mb:.0} MB), median of 5"),
        value: format!("{opening:.0} ms, of which integrity check {check:.0} ms"),
        target: "—".into(),
    }
}

fn main() {
    // `STRATA_BENCH_DIR=PATH` keeps the databases there for inspection.
    let guard = tempfile::tempdir().unwrap();
    let dir = match std::env::var("STRATA_BENCH_DIR") {
        Ok(d) => std::path::PathBuf::from(d),
        Err(_) => guard.path().to_path_buf(),
    };
    // `STRATA_BENCH_ONLY=search` (or append, replay, open) runs one scenario.
    let only = std::env::var("STRATA_BENCH_ONLY").unwrap_or_default();
    let run = |name: &str| only.is_empty() || only == name;
    let mut rows = Vec::new();
    if run("append") {
        rows.push(append_individual(&dir));
        let (a, b) = append_batched(&dir);
        rows.push(a);
        rows.push(b);
    }
    if run("replay") {
        rows.push(replay(&dir));
    }
    if run("search") {
        rows.push(search(&dir));
    }
    if run("open") {
        rows.push(open_existing(&dir));
    }
    println!("\n{:<72} {:<40} target", "benchmark", "result");
    let n = rows.len();
    for r in rows {
        println!("{:<72} {:<40} {}", r.name, r.value, r.target);
    }
    if !is_bench() {
        println!("smoke: {n} passed, 0 failed");
    }
}
