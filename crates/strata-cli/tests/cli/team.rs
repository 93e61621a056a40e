//! One memory for many people: `strata people` gives each their own token (kept only as its
//! hash), the servers over the store act as the person a token names, keep their private
//! memories theirs, hold them to their own rate and request size, and refuse a revoked token
//! at once.

use std::io::{Read, Write};
use std::process::Command;

use serde_json::Value;

use crate::{Env, in_crate, python, spawn_server};

fn mcp_client(args: &[&str]) -> Value {
    let out = Command::new(python()).arg(in_crate("tests/fixtures/mcp_client.py")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `GET path` from the server at `url` (its scheme, host and port): the status and the text.
fn get(url: &str, path: &str) -> (u16, String) {
    let addr = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    (text.split_whitespace().nth(1).unwrap().parse().unwrap(), text)
}

/// Whether the metrics `text` hold each of `lines`.
fn has_series(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.lines().any(|l| l.starts_with(line)), "{line} is missing from:\n{text}");
    }
}

/// Whether a `Retry-After` is a whole number of seconds within one request's refill at three
/// a minute (20 s).
fn within_a_refill(retry_after: &Value) -> bool {
    retry_after.as_str().and_then(|s| s.parse::<u64>().ok()).is_some_and(|s| (1..=20).contains(&s))
}

/// `strata people add` with `extra`: the token it printed, checked for shape.
fn add(e: &Env, name: &str, extra: &[&str]) -> String {
    let r = e.run(&[&["people", "add", name], extra].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let added = format!("Added {}", name.to_lowercase());
    assert!(r.stderr.contains(&added) && r.stderr.contains("cannot be shown again"), "{}", r.stderr);
    let token = r.stdout.trim().to_string();
    assert!(token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()), "{token:?}");
    token
}

#[test]
fn people_get_tokens_shown_once_and_listed_without_them() {
    let e = Env::new();
    let ana = add(&e, "Ana", &["--per-minute", "30", "--max-kib", "64"]);
    let listed = e.ok(&["people"]);
    assert!(
        listed.contains("ana") && listed.contains("30") && listed.contains("64 KiB") && listed.contains("active"),
        "{listed}"
    );
    let json = e.json(&["people", "list"]);
    assert_eq!(json[0]["name"], "ana");
    assert!(!json.to_string().contains(&ana), "the list never shows a token");
    let file = std::fs::read(e.db()).unwrap();
    assert!(!file.windows(ana.len()).any(|w| w == ana.as_bytes()), "the database holds no token");

    let again = e.err(&["people", "add", "ana"]);
    assert!(again.contains("ana already has a token: revoke it first"), "{again}");
    let bad = e.err(&["people", "add", "ana smith"]);
    assert!(bad.contains("is not a person's name"), "{bad}");
    let big = e.run(&["people", "add", "ben", "--max-kib", "4096"]);
    assert!(big.code != 0 && big.stderr.contains("1..=1024"), "{}", big.stderr);

    let r = e.run(&["people", "revoke", "ana"]);
    assert!(r.code == 0 && r.stderr.contains("Revoked ana"), "{}", r.stderr);
    assert!(e.ok(&["people"]).contains("revoked"));
    let nobody = e.err(&["people", "revoke", "ana"]);
    assert!(nobody.contains("nobody named 'ana' has a token to revoke"), "{nobody}");
    assert_ne!(add(&e, "ana", &[]), ana, "a new token after a revoke");
}

#[test]
fn mcp_callers_act_as_the_person_their_token_names_within_their_limits() {
    let e = Env::new();
    let ana = add(&e, "ana", &[]);
    let ben = add(&e, "ben", &[]);
    let carol = add(&e, "carol", &["--per-minute", "3", "--max-kib", "1"]);
    let (mut server, url) =
        spawn_server(&e, &["mcp", "--http", "127.0.0.1:0", "--token", "local-secret"], "MCP server");

    // Both connect under the same client name: who they are comes from the token.
    for token in [&ana, &ben] {
        let v = mcp_client(&["writer", &url, token, "laptop", "10"]);
        assert_eq!((v["written"].as_u64(), v["secret_written"].as_bool()), (Some(10), Some(true)), "{v}");
    }
    let seen_by_ben = mcp_client(&["peek", &url, &ben, "laptop"]);
    assert_eq!(seen_by_ben["seen"], 21, "the team's 20 shared notes and Ben's own secret: {seen_by_ben}");
    assert_eq!(seen_by_ben["secrets"], serde_json::json!(["laptop secret"]));

    // Carol: three requests a minute, then 429 with when to retry; a body over 1 KiB, 413.
    let big = mcp_client(&["knock", &url, &carol, "1", "4096"]);
    assert_eq!(big["statuses"], serde_json::json!([413]), "{big}");
    assert!(big["body"].as_str().unwrap().contains("over 1024 bytes, carol's limit"), "{big}");
    let knocks = mcp_client(&["knock", &url, &carol, "3", "300"]);
    assert_eq!(knocks["statuses"], serde_json::json!([200, 200, 429]), "{knocks}");
    assert!(within_a_refill(&knocks["retry_after"]), "{knocks}");
    assert!(knocks["body"].as_str().unwrap().contains("carol may send 3 requests a minute"), "{knocks}");
    // Each person's rate and size are their own: Ana, with 1 MiB, sends 4 KiB.
    let big = mcp_client(&["knock", &url, &ana, "1", "4096"]);
    assert_eq!(big["statuses"], serde_json::json!([200]), "Ana's limit is 1 MiB: {big}");

    // A revoked token is refused from the next request; a stranger's never let in.
    let r = e.run(&["people", "revoke", "ana"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = mcp_client(&["knock", &url, &ana, "1", "300"]);
    assert_eq!(after["statuses"], serde_json::json!([401]), "{after}");
    assert!(after["body"].as_str().unwrap().contains("strata people add"), "{after}");

    // Monitoring, without a token: readiness, and the series of what happened above.
    let (status, health) = get(&url, "/health");
    assert!(status == 200 && health.contains(r#""status":"ready""#), "{health}");
    let (status, metrics) = get(&url, "/metrics");
    assert_eq!(status, 200, "{metrics}");
    assert!(metrics.contains("application/openmetrics-text"), "{metrics}");
    has_series(
        &metrics,
        &[
            r#"strata_http_requests_total{server="mcp",route="/mcp",status="200"}"#,
            r#"strata_http_requests_total{server="mcp",route="/mcp",status="429"} 1"#,
            r#"strata_http_requests_total{server="mcp",route="/mcp",status="413"} 1"#,
            r#"strata_http_requests_total{server="mcp",route="/mcp",status="401"} 1"#,
            r#"strata_http_request_duration_seconds_count{server="mcp",route="/mcp"}"#,
            r#"strata_requests_refused_total{reason="rate"} 1"#,
            r#"strata_requests_refused_total{reason="size"} 1"#,
            r#"strata_store_connections{state="busy"} 0"#,
            "strata_extraction_queue 0",
        ],
    );
    let appended: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("strata_events_appended_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(appended >= 22, "the 22 notes written are counted: {appended}");
    let _ = server.kill();
    let _ = server.wait();

    let list = e.json(&["list", "--limit", "100"]);
    let items = list["items"].as_array().unwrap();
    let sources: std::collections::BTreeSet<&str> =
        items.iter().map(|m| m["source"]["app"].as_str().unwrap()).collect();
    assert_eq!(sources, ["mcp:ana", "mcp:ben"].into_iter().collect(), "each write records its person");
    let private: Vec<&str> = items.iter().filter_map(|m| m["scope"]["agent_id"].as_str()).collect();
    assert_eq!(private.len(), 2, "one private note each: {private:?}");
}

#[test]
fn the_proxy_serves_a_person_with_the_openai_sdk_until_their_rate_runs_out() {
    let e = Env::new();
    let dan = add(&e, "dan", &["--per-minute", "3"]);
    let (mut server, url) = spawn_server(&e, &["serve", "--port", "0", "--token", "local-secret"], "memory proxy");
    let out = Command::new(python()).args([&in_crate("tests/fixtures/openai_person.py"), &url, &dan]).output().unwrap();
    let (_, metrics) = get(&url, "/metrics");
    has_series(
        &metrics,
        &[
            r#"strata_http_requests_total{server="proxy",route="/v1/chat/completions",status="200"} 1"#,
            r#"strata_http_requests_total{server="proxy",route="/v1/models",status="429"} 1"#,
            r#"strata_requests_refused_total{reason="token"} 1"#,
            r#"strata_recall_duration_seconds_count{purpose="prompt"} 1"#,
            "strata_events_appended_total",
        ],
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["answered"], true, "{v}");
    // Three a minute: the answer and two lists (a slow answer may have earned a third).
    assert!(matches!(v["listed"].as_u64(), Some(2 | 3)) && v["limited"] == 429, "{v}");
    assert!(within_a_refill(&v["retry_after"]), "{v}");
    assert!(v["message"].as_str().unwrap().contains("dan may send 3 requests a minute"), "{v}");
    assert_eq!(v["stranger"], 401, "{v}");
    // Dan's conversation is his own: kept under his name, recorded as his.
    let episodes = e.json(&["list", "--type", "episodic"]);
    let items = episodes["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{episodes}");
    assert_eq!(
        (items[0]["scope"]["agent_id"].as_str(), items[0]["source"]["app"].as_str()),
        (Some("dan"), Some("proxy:dan"))
    );
}
