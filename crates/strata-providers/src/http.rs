//! What every provider shares: a client with timeouts, retries with backoff on 429 and 5xx
//! (honouring `Retry-After`), vendor errors turned into [`ChatError`]s a person can act on —
//! with any key scrubbed from them — and a reader of server-sent events.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use strata_core::{ChatError, ChatErrorKind};

/// How a provider is reached.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434`…).
    pub base_url: String,
    /// The key, if the provider needs one. Never logged, stored or shown.
    pub key: Option<String>,
    /// Longest wait for a connection, and between two pieces of an answer.
    pub timeout: Duration,
    /// Attempts after the first on 429 and 5xx.
    pub retries: u32,
    /// First backoff (doubled each retry) when the provider gives no `Retry-After`.
    pub backoff: Duration,
}

impl Endpoint {
    /// `base_url` with the usual timeouts (10 s to connect, 60 s between pieces) and 2 retries.
    pub fn new(base_url: impl Into<String>, key: Option<String>) -> Endpoint {
        Endpoint {
            base_url: base_url.into().trim_end_matches('/').to_string(),
            key,
            timeout: Duration::from_secs(60),
            retries: 2,
            backoff: Duration::from_millis(500),
        }
    }

    /// `base_url` joined with `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path.trim_start_matches('/'))
    }
}

/// Removes `key` and anything shaped like a provider key (`sk-…`) from `text`.
pub fn scrub(text: &str, key: Option<&str>) -> String {
    let mut s = text.to_string();
    if let Some(k) = key.filter(|k| k.len() >= 4) {
        s = s.replace(k, "[key]");
    }
    s.split_inclusive(char::is_whitespace)
        .map(|w| {
            let t = w.trim_end().trim_matches(|c: char| c == '"' || c == '\'' || c == '.' || c == ',');
            if t.starts_with("sk-") && t.len() > 6 { w.replacen(t, "[key]", 1) } else { w.to_string() }
        })
        .collect()
}

/// A client (one per provider instance; connection reuse).
pub fn client(endpoint: &Endpoint) -> Result<reqwest::blocking::Client, ChatError> {
    // The blocking client's timeout bounds each wait (for the headers, then for every read of
    // the body), not the whole answer: a long stream is fine, a silent server is not.
    reqwest::blocking::Client::builder()
        .connect_timeout(Duration::from_secs(10).min(endpoint.timeout))
        .timeout(endpoint.timeout)
        .build()
        .map_err(|e| ChatError::new(ChatErrorKind::Network, format!("cannot start an HTTP client: {e}")))
}

/// How a vendor's error body maps to a kind: `(status, body) -> kind`, for what the status
/// alone does not settle (a 400 that is a context-length error, a 404 model).
pub type Classify = fn(u16, &str) -> ChatErrorKind;

/// Sends the request `make` builds, retrying on 429 and 5xx (the wait is the provider's
/// `Retry-After` when it gives one, else a doubling backoff), and returns the successful
/// response or the error a person can act on.
pub fn send(
    endpoint: &Endpoint,
    provider: &str,
    make: &dyn Fn() -> reqwest::blocking::RequestBuilder,
    classify: Classify,
    cancel: &AtomicBool,
) -> Result<reqwest::blocking::Response, ChatError> {
    let mut attempt = 0;
    loop {
        let result = make().send();
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                let what = if e.is_timeout() { "did not answer in time" } else { "cannot be reached" };
                let msg = scrub(&format!("{provider} at {} {what} ({e})", endpoint.base_url), endpoint.key.as_deref());
                return Err(ChatError::new(ChatErrorKind::Network, msg));
            }
        };
        let status = response.status().as_u16();
        if response.status().is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|s| Duration::from_secs_f64(s.clamp(0.0, 60.0)));
        let body = text_of(response, MAX_ERROR_BYTES);
        let kind = match status {
            401 | 403 => ChatErrorKind::BadKey,
            429 => ChatErrorKind::RateLimited,
            s if s >= 500 => ChatErrorKind::Server,
            s => classify(s, &body),
        };
        let transient =
            matches!(kind, ChatErrorKind::RateLimited | ChatErrorKind::Server) && !body.contains("insufficient_quota");
        if transient && attempt < endpoint.retries && !cancel.load(Ordering::Relaxed) {
            let wait = retry_after.unwrap_or(endpoint.backoff * 2u32.pow(attempt));
            tracing::debug!(provider, status, ?wait, "retrying");
            std::thread::sleep(wait);
            attempt += 1;
            continue;
        }
        let detail = vendor_message(&body).unwrap_or_else(|| format!("HTTP {status}"));
        let advice = match kind {
            ChatErrorKind::BadKey => " — check the key in Settings or the environment",
            ChatErrorKind::RateLimited => " — wait a little and try again",
            ChatErrorKind::ContextTooLong => " — the prompt is too long for this model",
            ChatErrorKind::ModelNotFound => " — check the model's name",
            _ => "",
        };
        let message = scrub(&format!("{provider}: {detail}{advice}"), endpoint.key.as_deref());
        return Err(ChatError { kind, message, retry_after });
    }
}

/// The most bytes of an error body read (a vendor's message is a sentence or two).
const MAX_ERROR_BYTES: u64 = 64 << 10;
/// The most bytes of a whole reply read (an answer of the longest window, as JSON).
pub const MAX_REPLY_BYTES: u64 = 16 << 20;
/// The most bytes of one line of a streamed reply.
const MAX_LINE_BYTES: u64 = 4 << 20;

/// At most `max` bytes of `response`'s body, as text.
fn text_of(response: impl Read, max: u64) -> String {
    let mut bytes = Vec::new();
    let _ = response.take(max).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A whole reply's JSON, read with a bound: a server that sends more is refused, not swallowed.
pub fn json_of(provider: &str, response: impl Read) -> Result<serde_json::Value, ChatError> {
    let mut bytes = Vec::new();
    response
        .take(MAX_REPLY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ChatError::new(ChatErrorKind::Network, format!("the answer stopped arriving ({e})")))?;
    if bytes.len() as u64 > MAX_REPLY_BYTES {
        return Err(bad_json(provider, format!("a reply over {} MiB", MAX_REPLY_BYTES >> 20)));
    }
    serde_json::from_slice(&bytes).map_err(|e| bad_json(provider, e))
}

/// The human message in a vendor's error body (`{"error": {"message": …}}`,
/// `{"error": "…"}`), if any.
fn vendor_message(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let e = v.get("error")?;
    e.get("message").and_then(|m| m.as_str()).or_else(|| e.as_str()).map(str::to_string)
}

/// Reads `response` as lines, calling `each` for every line until it returns false, the body
/// ends, or `cancel` is set (then returns true).
pub fn lines(
    response: impl Read,
    cancel: &AtomicBool,
    each: &mut dyn FnMut(&str) -> Result<bool, ChatError>,
) -> Result<bool, ChatError> {
    let mut reader = BufReader::new(response);
    let mut line = String::new();
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Ok(true);
        }
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_line(&mut line)
            .map_err(|e| ChatError::new(ChatErrorKind::Network, format!("the answer stopped arriving ({e})")))?;
        if n as u64 > MAX_LINE_BYTES {
            return Err(ChatError::new(
                ChatErrorKind::Server,
                format!("the answer sent a line over {} MiB; it was not read", MAX_LINE_BYTES >> 20),
            ));
        }
        if n == 0 || !each(line.trim_end_matches(['\r', '\n']))? {
            return Ok(false);
        }
    }
}

/// A JSON array of numbers (an embedding) as floats; anything else is empty.
pub fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array().map(|a| a.iter().filter_map(serde_json::Value::as_f64).map(|x| x as f32).collect()).unwrap_or_default()
}

/// A JSON value that did not parse, as a server error.
pub fn bad_json(provider: &str, e: impl std::fmt::Display) -> ChatError {
    ChatError::new(ChatErrorKind::Server, format!("{provider} sent something unreadable ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_scrubbed_from_messages() {
        let key = "sk-proj-SECRET123456";
        let m = scrub(&format!("Incorrect API key provided: {key}. And 'sk-abc***xyz'."), Some(key));
        assert!(!m.contains("SECRET") && !m.contains("sk-abc"), "{m}");
        assert_eq!(scrub("no key here", None), "no key here");
    }
}
