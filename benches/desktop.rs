//! The desktop app's figures (`cargo bench -p strata-desktop --bench desktop`; release build,
//! the real app in the real webview under Xvfb, driven over WebDriver):
//! - cold start: from asking tauri-driver for a session (it launches the app) to the first
//!   page of the memory list rendered, on a store of 100,000 memories;
//! - search as you type: from the keystroke that completes a question (an input event) to the
//!   frame that shows its results, on the same store (LoCoMo turns, every one embedded).
//!
//! The data is a LoCoMo-layout file (`STRATA_LOCOMO`, default: the shared development split);
//! the store's size is `STRATA_BENCH_MEMORIES` (default 100,000).

#[path = "../tests/e2e/driver.rs"]
#[allow(dead_code)] // shared with the end-to-end tests, which use all of it
mod driver;
#[path = "../tests/e2e/webdriver.rs"]
#[allow(dead_code)]
mod webdriver;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use strata_bench::scalebench;

/// Memories for `cargo bench`; `cargo test --all-targets` runs it once on a small store.
const MEMORIES: usize = 100_000;
const MEMORIES_UNDER_TEST: usize = 2_000;
const STARTS: usize = 5;
const QUERIES: usize = 100;

/// Sets the search box to `q` as one keystroke would, then resolves with the milliseconds
/// until a frame shows the results for `q`.
const TYPE_AND_WAIT: &str = r#"
const [q, done] = [arguments[0], arguments[arguments.length - 1]];
const input = document.getElementById('search');
const meta = document.getElementById('meta');
const started = performance.now();
Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, q);
input.dispatchEvent(new Event('input', { bubbles: true }));
const look = () => meta.dataset.query === q ? done(performance.now() - started) : requestAnimationFrame(look);
requestAnimationFrame(look);
"#;

#[allow(clippy::print_stdout)]
fn main() {
    let data = std::env::var_os("STRATA_LOCOMO").map(PathBuf::from).unwrap_or_else(|| {
        // The checkout as cargo gives it at run time (a shared build cache may hold a build
        // from another checkout).
        let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
        PathBuf::from(root).join("../shared/bench/locomo/locomo-dev.json")
    });
    let (turns, questions) = strata_bench::locomo::texts(&data).expect("a LoCoMo-layout file (STRATA_LOCOMO)");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    let model = Arc::new(strata_models::MiniLm::load_default().expect("the embedding model (make setup)"));
    // `cargo bench` passes --bench; `cargo test` does not.
    let size = std::env::var("STRATA_BENCH_MEMORIES").ok().and_then(|n| n.parse().ok()).unwrap_or(MEMORIES);
    let memories = if std::env::args().any(|a| a == "--bench") { size } else { MEMORIES_UNDER_TEST };
    let started = Instant::now();
    scalebench::fill(&db, &turns, memories, scalebench::caching(model)).unwrap();
    println!("filled {memories} memories (embedded) in {:.0} s", started.elapsed().as_secs_f64());

    let app = env!("CARGO_BIN_EXE_strata-desktop");
    let driver = driver::Driver::start_with(&db, &[("STRATA_USER", scalebench::USER)], false);
    let mut starts = Vec::new();
    for _ in 0..STARTS {
        let t = Instant::now();
        let s = webdriver::Session::start(&driver.url, app);
        s.wait_up_to(Duration::from_secs(60), "the first page", |s| (s.all(".list li").len() > 1).then_some(()));
        starts.push(t.elapsed().as_secs_f64() * 1000.0);
        s.end();
        std::thread::sleep(Duration::from_secs(1));
    }
    let cold = scalebench::latency(starts);
    println!("cold start to the first page rendered: p50 {} ms, worst of {STARTS} {} ms", cold.p50_ms, cold.p95_ms);

    let s = webdriver::Session::start(&driver.url, app);
    s.find("#search");
    // The embedding model loads in the background after the window opens; the first
    // searches also warm the caches.
    std::thread::sleep(Duration::from_secs(5));
    let time = |q: &str| s.execute_async(TYPE_AND_WAIT, json!([q])).as_f64().expect("a time in ms");
    for q in questions.iter().skip(QUERIES).take(20) {
        time(q);
    }
    let ms: Vec<f64> = questions.iter().take(QUERIES).map(|q| time(q)).collect();
    let search = scalebench::latency(ms);
    println!(
        "search as you type, keystroke to rendered results ({QUERIES} LoCoMo questions, {memories} memories): p50 {} ms, p95 {} ms",
        search.p50_ms, search.p95_ms
    );
    let shown = s.text(&s.find("#meta"));
    println!("the last search: {shown}");
    s.end();
}
