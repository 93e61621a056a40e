//! `strata --db postgres://…`: the same commands on a PostgreSQL store (the test server of
//! strata-core's tests), and one line for a server that cannot serve Strata.

use std::path::Path;

use crate::Env;
#[path = "../../../strata-core/tests/it/server.rs"]
#[allow(dead_code)]
pub(crate) mod server;

/// An episode both tests add (and find by its words or its meaning).
const PIXEL: &[&str] =
    &["add", "episodic", "--speaker", "Ana", "--text", "We adopted a cat called Pixel", "--at", "2026-01-02T09:00Z"];

/// `strata ARGS --json` on the store at `db`, which must succeed: what it printed.
fn json_on(e: &Env, db: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let r = e.run_with(&all, db, None);
    assert_eq!(r.code, 0, "strata {args:?} failed: {}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn the_commands_work_on_a_postgres_store() {
    let e = Env::new();
    let url = server::fresh_database();
    let db = Path::new(&url);
    let json = |args: &[&str]| json_on(&e, db, args);
    let tea = json(&["add", "semantic", "tea", "--fact", "likes=oolong", "--tag", "drinks"]);
    json(PIXEL);
    let id = tea["id"].as_str().unwrap();
    assert_eq!(json(&["get", "tea"])["facts"]["likes"], "oolong");
    assert_eq!(json(&["list"])["items"].as_array().unwrap().len(), 2);
    let hits = json(&["search", "Pixel"]);
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0]["snippet"].as_str().unwrap().contains("**Pixel**"), "{hits:?}");
    json(&["update", "tea", "--fact", "likes=sencha"]);
    let history = json(&["history", id]);
    let types: Vec<&str> = history.as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["semantic_created", "accessed", "content_updated"], "reading it was recorded too");
    let r = e.run_with(&["forget", id, "--yes"], db, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let gone = e.err_with(&["get", id], db, None);
    assert!(gone.contains("was forgotten"), "{gone}");
    // The people a server over it lets in are kept in it too (their tokens as hashes).
    let added = json(&["people", "add", "ana", "--per-minute", "30"]);
    let token = added["token"].as_str().unwrap();
    assert_eq!(added["person"]["limits"]["per_minute"], 30);
    let listed = json(&["people"]);
    assert_eq!((listed[0]["name"].as_str(), listed.to_string().contains(token)), (Some("ana"), false));
    let mut c = server::connect(&url);
    let kept: i64 = c.query_one("SELECT count(*) FROM people WHERE token_sha256 IS NOT NULL", &[]).unwrap().get(0);
    assert_eq!(kept, 1);
    json(&["people", "revoke", "ana"]);
    assert!(json(&["people"])[0]["revoked_at"].is_string());
}

#[test]
fn a_postgres_that_cannot_serve_strata_is_one_line_without_the_password() {
    let e = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://ana:s3cret@127.0.0.1:{port}/strata");
    let said = e.err_with(&["list"], Path::new(&url), None);
    assert!(said.starts_with("error: cannot reach a PostgreSQL server at postgres://ana:***@127.0.0.1:"), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
    // Training stays with the desktop's SQLite: asked of a PostgreSQL store, it says so.
    let url = server::fresh_database();
    let said = e.err_with(&["train", "candidates"], Path::new(&url), None);
    assert!(said.contains("PostgreSQL"), "{said}");
}

#[test]
fn concepts_usage_records_analytics_and_seed_exports_work_on_a_postgres_store() {
    let e = Env::new();
    let url = server::fresh_database();
    let db = Path::new(&url);
    let json = |args: &[&str]| json_on(&e, db, args);
    for (i, text) in crate::concepts::said().into_iter().enumerate() {
        let at = format!("2026-01-{:02}T09:00Z", i + 1);
        json(&["add", "episodic", "--speaker", "Ana", "--text", text, "--at", &at]);
    }
    // Concepts are formed by meaning, and the pass is kept for analytics.
    let r = json(&["concepts", "rebuild"]);
    assert_eq!(r["memories"], 12, "{r}");
    assert!(r["formed"].as_u64().unwrap() >= 2, "{r}");
    let names: Vec<String> =
        json(&["concepts"]).as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect();
    assert!(names.iter().any(|n| n.contains("marathon")), "{names:?}");
    let passes = json(&["analytics", "compaction"]);
    assert_eq!(passes[0]["formed"], r["formed"], "{passes}");
    // A recall is kept as a usage record; clearing them says how many went.
    json(&["recall", "how is the kitten"]);
    let mut c = server::connect(&url);
    let kept: i64 = c.query_one("SELECT count(*) FROM recalls", &[]).unwrap().get(0);
    assert_eq!(kept, 1);
    let cleared = e.run_with(&["analytics", "clear"], db, None);
    assert_eq!(cleared.code, 0, "{}", cleared.stderr);
    let kept: i64 = c.query_one("SELECT count(*) FROM recalls", &[]).unwrap().get(0);
    assert_eq!(kept, 0);
    // The views made from them (their own tests run on both engines: `analytics.rs`).
    let summary = json(&["analytics", "summary"]);
    assert_eq!(
        (summary["memories"].as_u64(), summary["concepts"].as_u64()),
        (Some(12 + r["formed"].as_u64().unwrap()), r["formed"].as_u64()),
        "{summary}"
    );
    // A seed document comes out as it went in.
    let out = e.run_with(&["export", "--format", "seed"], db, None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["episodic"].as_array().map(Vec::len), Some(12), "{doc}");
}

#[test]
fn migrate_copies_a_store_to_postgres_and_back_and_refuses_a_full_target() {
    let e = Env::new();
    e.json(&["add", "semantic", "tea", "--fact", "likes=oolong", "--tag", "drinks"]);
    e.json(PIXEL);
    let forgotten = e.json(&["add", "semantic", "old_code", "--fact", "pin=4312"]);
    e.ok(&["forget", forgotten["id"].as_str().unwrap(), "--yes"]);
    let sample = |name: &str| crate::in_crate(&format!("../strata-datasets/tests/data/{name}"));
    e.ok(&["datasets", "load", "--no-embed", &sample("expenses.csv"), &sample("contract.pdf")]);
    e.ok(&["agents", "add", "Booker", "--description", "Books trips", "--tool", "recall"]);
    e.ok(&["agents", "edit", "Booker", "--instructions", "Be brief."]);
    let url = server::fresh_database();
    let db = e.db();
    let moved = e.json(&["migrate", db.to_str().unwrap(), &url]);
    assert_eq!(moved["memories"], 2, "{moved}");
    assert_eq!(moved["datasets"], 2, "{moved}");
    assert_eq!(moved["embedded"], 2, "the target's vectors are made: {moved}");
    assert!(moved["events"].as_u64().unwrap() >= 4, "{moved}");
    // The copy answers as the source did, a search by meaning included.
    let run = |args: &[&str]| json_on(&e, Path::new(&url), args);
    assert_eq!(run(&["get", "tea"])["facts"]["likes"], "oolong");
    let recalled = run(&["recall", "a pet we took in"]);
    assert!(recalled.to_string().contains("Pixel"), "{recalled}");
    let gone = e.err_with(&["get", forgotten["id"].as_str().unwrap()], Path::new(&url), None);
    assert!(gone.contains("was forgotten"), "forgetting came along: {gone}");
    // The files came along whole: the same rows, and passages with their places.
    let sum = "SELECT count(*) AS n, round(sum(amount), 2) AS total FROM expenses";
    let here = e.ok(&["datasets", "sql", "expenses", sum]);
    let there = run(&["datasets", "sql", "expenses", sum]);
    assert!(there.to_string().contains("48") && here.contains("48"), "{there} {here}");
    let found = run(&["datasets", "search", "how much is the deposit", "--in", "contract"]);
    assert_eq!(found[0]["place"]["page"], 2, "{found}");
    // The agents came along with their history.
    let history = run(&["agents", "history", "Booker"]);
    assert_eq!(history.as_array().unwrap().len(), 2, "{history}");
    assert_eq!(history[1]["spec"]["instructions"], "Be brief.");

    // And back to a new file.
    let back = e.dir.path().join("back.db");
    let again = e.json(&["migrate", &url, back.to_str().unwrap()]);
    assert_eq!(again["memories"], 2, "{again}");
    assert_eq!(json_on(&e, &back, &["agents", "show", "Booker"])["version"], 2);
    // A target that holds events is refused, and left as it was.
    let full = e.err(&["migrate", back.to_str().unwrap(), &url]);
    assert!(full.contains("already holds") && full.contains("migrate into an empty store"), "{full}");
    let missing = e.err(&["migrate", "/nonexistent/strata.db", &url]);
    assert!(missing.contains("there is no database at /nonexistent/strata.db"), "{missing}");
}

/// The official MCP client's `mode` against a server: what it printed.
fn mcp_client(args: &[&str]) -> serde_json::Value {
    let script = crate::in_crate("tests/fixtures/mcp_client.py");
    let out = std::process::Command::new(crate::python()).arg(script).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Two `strata mcp --http` processes over one PostgreSQL store behave as one: what one writes
/// the other reads at once (nothing is cached), and killing one (SIGKILL) in the middle of
/// writes loses nothing it acknowledged, half-writes nothing, and the other goes on serving.
#[test]
fn two_servers_over_one_postgres_act_as_one_share_rates_and_a_killed_one_loses_nothing() {
    let e = Env::new();
    let url = server::fresh_database();
    let serve = || {
        crate::spawn_server(
            &e,
            &["--db", &url, "mcp", "--http", "127.0.0.1:0", "--token", "local-secret"],
            "MCP server",
        )
    };
    let (mut first, at_first) = serve();
    let (mut second, at_second) = serve();

    // A person's rate is the store's, not each server's: three a minute across both.
    let carol = json_on(&e, Path::new(&url), &["people", "add", "carol", "--per-minute", "3"]);
    let carol = carol["token"].as_str().unwrap();
    let on_first = mcp_client(&["knock", &at_first, carol, "2", "300"]);
    let on_second = mcp_client(&["knock", &at_second, carol, "2", "300"]);
    assert_eq!(
        (&on_first["statuses"], &on_second["statuses"]),
        (&serde_json::json!([200, 200]), &serde_json::json!([200, 429]))
    );
    assert!(on_second["body"].as_str().unwrap().contains("carol may send 3 requests a minute"), "{on_second}");

    let wrote = mcp_client(&["writer", &at_first, "local-secret", "alpha", "20"]);
    assert_eq!(wrote["written"], 20, "{wrote}");
    let seen = mcp_client(&["peek", &at_second, "local-secret", "alpha"]);
    assert_eq!((seen["seen"].as_u64(), &seen["secrets"]), (Some(21), &serde_json::json!(["alpha secret"])));

    // Kill the first in the middle of a client's steady writes.
    let writer = std::process::Command::new(crate::python())
        .args([&crate::in_crate("tests/fixtures/mcp_client.py"), "steady", &at_first, "local-secret", "beta", "5000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(200));
        if notes_of(&e, &url, "beta steady note") >= 30 {
            break;
        }
    }
    let _ = first.kill(); // SIGKILL
    let _ = first.wait();
    let out = writer.wait_with_output().unwrap();
    let steady: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let acknowledged = steady["acknowledged"].as_array().unwrap().len();
    assert!((30..5000).contains(&acknowledged) && !steady["failure"].is_null(), "{steady}");

    // Every acknowledged note is there once; at most the one in flight beyond them.
    let texts = all_texts(&e, &url);
    for i in 0..acknowledged {
        let text = format!("beta steady note {i}");
        assert_eq!(texts.iter().filter(|t| **t == text).count(), 1, "{text}");
    }
    let beyond = texts.iter().filter(|t| t.starts_with("beta steady note")).count() - acknowledged;
    assert!(beyond <= 1, "only the write in flight may have landed unacknowledged: {beyond}");
    // Nothing half-written: the projections rebuilt from the log are what was served.
    let replay = json_on(&e, Path::new(&url), &["replay"]);
    assert_eq!(
        (replay["memories"].as_u64(), replay["matched"].as_bool()),
        (Some(texts.len() as u64), Some(true)),
        "{replay}"
    );
    assert_eq!(all_texts(&e, &url), texts, "replaying the log gives the same memories");
    // The other server goes on serving, and sees everything.
    let seen = mcp_client(&["peek", &at_second, "local-secret", "beta"]);
    assert_eq!(seen["seen"].as_u64(), Some(texts.len() as u64 - 1), "all but alpha's secret: {seen}");
    let _ = second.kill();
    let _ = second.wait();
}

/// Every memory's text on the store at `url` (the user sees all of them), sorted.
fn all_texts(e: &Env, url: &str) -> Vec<String> {
    let listed = json_on(e, Path::new(url), &["list", "--limit", "1000"]);
    let mut texts: Vec<String> =
        listed["items"].as_array().unwrap().iter().map(|m| m["body"]["text"].as_str().unwrap().to_string()).collect();
    texts.sort();
    texts
}

/// How many memories on the store at `url` hold `words`.
fn notes_of(e: &Env, url: &str, words: &str) -> usize {
    all_texts(e, url).iter().filter(|t| t.contains(words)).count()
}
