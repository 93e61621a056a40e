//! `strata bench mcp`: the recall tool's round trip through `strata mcp`, timed by the
//! official MCP Python SDK (`scripts/mcp_bench.py`) over stdio and HTTP, one client and four.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// One way of calling.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calls {
    /// Calls timed.
    pub calls: usize,
    /// Median round trip.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// Calls per second, all clients together (for several clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_s: Option<f64>,
}

/// The run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct McpReport {
    /// Memories in the store.
    #[serde(default)]
    pub memories: usize,
    /// Questions each client asks.
    #[serde(default)]
    pub questions: usize,
    /// One client over stdio.
    pub stdio: Calls,
    /// One client over HTTP.
    pub http: Calls,
    /// Four clients, each with its own `strata mcp` process on the same database.
    pub stdio_4_clients: Calls,
    /// Four clients of one HTTP server.
    pub http_4_clients: Calls,
}

/// Fills a store of `size` memories from `data`, starts `strata mcp --http` on it, and runs
/// the script.
/// `say` hears what is going on (for the person waiting); `strata` is the binary to serve with.
pub fn run(
    data: &Path,
    size: usize,
    python: Option<PathBuf>,
    strata: &Path,
    say: &mut dyn FnMut(&str),
) -> Result<McpReport> {
    let python = python.unwrap_or_else(default_python);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp_bench.py");
    let work = tempfile::tempdir()?;
    let db = work.path().join("mcp-bench.db");
    let (turns, questions) = crate::locomo::texts(data)?;
    let questions: Vec<String> = questions.into_iter().take(200).collect();
    let model: Arc<dyn strata_core::Embedder> = Arc::new(strata_models::MiniLm::load_default()?);
    say(&format!("Filling a store of {size} memories…"));
    crate::scalebench::fill(&db, &turns, size, crate::scalebench::caching(model))?;
    let questions_file = work.path().join("questions.json");
    std::fs::write(&questions_file, serde_json::to_vec(&questions)?)?;

    let mut server = Command::new(strata)
        .args(["--user", crate::scalebench::USER, "mcp", "--http", "127.0.0.1:0", "--token", "bench-token"])
        .env("STRATA_DB", &db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = std::io::BufReader::new(server.stderr.take().context("the server's stderr")?);
    let mut line = String::new();
    while !line.contains("MCP server") {
        line.clear();
        if stderr.read_line(&mut line)? == 0 {
            let _ = server.kill();
            bail!("`strata mcp --http` stopped before listening");
        }
    }
    std::thread::spawn(move || for _ in stderr.lines() {});
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).context("the server's address")?.to_string();
    say(&format!("Timing over stdio and {url}…"));
    let out = Command::new(&python)
        .arg(&script)
        .args([questions_file.as_os_str(), strata.as_os_str(), db.as_os_str()])
        .args([url.as_str(), "bench-token"])
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", python.display()));
    let _ = server.kill();
    let _ = server.wait();
    let out = out?;
    if !out.status.success() {
        bail!("{} failed", script.display());
    }
    let mut report: McpReport = serde_json::from_slice(&out.stdout).context("the script's report")?;
    report.memories = size;
    report.questions = questions.len();
    Ok(report)
}

/// The Python scripts/setup installs the SDKs into.
fn default_python() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
    cache.join("strata/pyenv/bin/python")
}
