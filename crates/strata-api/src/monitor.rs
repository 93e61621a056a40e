//! What a server process reports to Prometheus (`GET /metrics` on `strata serve` and `strata
//! mcp --http`, in the OpenMetrics text format; docs/formats.md lists every series). One set
//! per process: the engine records recall and prompt latencies and background extractions, the
//! store counts the events it appended, and each server its requests.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type Timings = Family<Labels, Histogram, fn() -> Histogram>;

/// Latency buckets: 1 ms to about 33 s, doubling.
fn timing() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

struct Monitor {
    registry: Registry,
    requests: Family<Labels, Counter>,
    request_seconds: Timings,
    recall_seconds: Timings,
    events: Counter,
    connections: Family<Labels, Gauge>,
    extractions: Gauge,
    refused: Family<Labels, Counter>,
    /// Encoding is one at a time (the events counter is brought up to date first).
    encoding: Mutex<()>,
}

static MONITOR: LazyLock<Monitor> = LazyLock::new(|| {
    let mut registry = Registry::with_prefix("strata");
    let m = Monitor {
        registry: Registry::default(),
        requests: Family::default(),
        request_seconds: Family::new_with_constructor(timing),
        recall_seconds: Family::new_with_constructor(timing),
        events: Counter::default(),
        connections: Family::default(),
        extractions: Gauge::default(),
        refused: Family::default(),
        encoding: Mutex::new(()),
    };
    registry.register("http_requests", "HTTP requests answered, by server, route and status", m.requests.clone());
    registry.register(
        "http_request_duration_seconds",
        "Time from a request's arrival to its response's start, by server and route",
        m.request_seconds.clone(),
    );
    registry.register(
        "recall_duration_seconds",
        "Time to rank memories, by purpose (search: a recall or search; prompt: a context built for a model)",
        m.recall_seconds.clone(),
    );
    registry.register("events_appended", "Events this process appended to the store's log", m.events.clone());
    registry.register(
        "store_connections",
        "Database connections this process holds, by state (open; busy: serving a call now)",
        m.connections.clone(),
    );
    registry.register("extraction_queue", "Background extractions running or waiting", m.extractions.clone());
    registry.register(
        "requests_refused",
        "Requests turned away before they were served, by reason (token, rate, size)",
        m.refused.clone(),
    );
    Monitor { registry, ..m }
});

/// Notes an answered HTTP request: `server` (`proxy`, `mcp`), its route, status and time taken.
pub fn http_request(server: &str, route: &str, status: u16, took: Duration) {
    let labels = vec![("server", server.to_string()), ("route", route.to_string()), ("status", status.to_string())];
    MONITOR.requests.get_or_create(&labels).inc();
    let labels = vec![("server", server.to_string()), ("route", route.to_string())];
    MONITOR.request_seconds.get_or_create(&labels).observe(took.as_secs_f64());
}

/// Notes a request turned away for `reason` (`token`, `rate`, `size`).
pub fn refused(reason: &str) {
    MONITOR.refused.get_or_create(&vec![("reason", reason.to_string())]).inc();
}

/// Notes a ranking of memories for `purpose` (`search`, `prompt`) that took `took`.
pub(crate) fn recall(purpose: &str, took: Duration) {
    MONITOR.recall_seconds.get_or_create(&vec![("purpose", purpose.to_string())]).observe(took.as_secs_f64());
}

/// Notes one more (`+1`) or one less (`-1`) connection in `state` (`open`, `busy`).
pub fn connections(state: &str, delta: i64) {
    MONITOR.connections.get_or_create(&vec![("state", state.to_string())]).inc_by(delta);
}

/// Counts a connection as busy (serving a call) until the guard is dropped.
pub fn busy() -> impl Drop {
    connections("busy", 1);
    Idle
}

struct Idle;

impl Drop for Idle {
    fn drop(&mut self) {
        connections("busy", -1);
    }
}

/// Counts a background extraction from its start until it ends (drop the guard).
pub(crate) fn extraction() -> impl Drop {
    MONITOR.extractions.inc();
    Ended
}

struct Ended;

impl Drop for Ended {
    fn drop(&mut self) {
        MONITOR.extractions.dec();
    }
}

/// Every series, in the OpenMetrics text format (what `/metrics` answers; its content type is
/// [`CONTENT_TYPE`]).
pub fn encode() -> String {
    let _one = MONITOR.encoding.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let appended = strata_core::store::events_appended();
    MONITOR.events.inc_by(appended.saturating_sub(MONITOR.events.get()));
    let mut text = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &MONITOR.registry) {
        tracing::warn!("the metrics could not be written: {e}");
    }
    text
}

/// The content type of [`encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_each_series_with_its_labels() {
        http_request("proxy", "/v1/models", 200, Duration::from_millis(3));
        recall("search", Duration::from_millis(12));
        refused("rate");
        connections("open", 2);
        let text = encode();
        for line in [
            "# TYPE strata_http_requests counter",
            "strata_http_requests_total{server=\"proxy\",route=\"/v1/models\",status=\"200\"} 1",
            "strata_http_request_duration_seconds_bucket{le=\"0.004\",server=\"proxy\",route=\"/v1/models\"} 1",
            "strata_recall_duration_seconds_count{purpose=\"search\"} 1",
            "strata_requests_refused_total{reason=\"rate\"} 1",
            "strata_store_connections{state=\"open\"} 2",
            "# TYPE strata_events_appended counter",
            "# EOF",
        ] {
            assert!(text.contains(line), "{line} is missing from:\n{text}");
        }
    }
}
