//! `strata --db postgres://…`: the same commands on a PostgreSQL store (the test server of
//! strata-core's tests), and one line for a server that cannot serve Strata.

use std::path::Path;

use crate::Env;
#[path = "../../../strata-core/tests/it/server.rs"]
#[allow(dead_code)]
mod server;

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
fn migrate_copies_a_store_to_postgres_and_back_and_refuses_a_full_target() {
    let e = Env::new();
    e.json(&["add", "semantic", "tea", "--fact", "likes=oolong", "--tag", "drinks"]);
    e.json(PIXEL);
    let forgotten = e.json(&["add", "semantic", "old_code", "--fact", "pin=4312"]);
    e.ok(&["forget", forgotten["id"].as_str().unwrap(), "--yes"]);
    let url = server::fresh_database();
    let db = e.db();
    let moved = e.json(&["migrate", db.to_str().unwrap(), &url]);
    assert_eq!(moved["memories"], 2, "{moved}");
    assert_eq!(moved["embedded"], 2, "the target's vectors are made: {moved}");
    assert!(moved["events"].as_u64().unwrap() >= 4, "{moved}");
    // The copy answers as the source did, a search by meaning included.
    let run = |args: &[&str]| json_on(&e, Path::new(&url), args);
    assert_eq!(run(&["get", "tea"])["facts"]["likes"], "oolong");
    let recalled = run(&["recall", "a pet we took in"]);
    assert!(recalled.to_string().contains("Pixel"), "{recalled}");
    let gone = e.err_with(&["get", forgotten["id"].as_str().unwrap()], Path::new(&url), None);
    assert!(gone.contains("was forgotten"), "forgetting came along: {gone}");

    // And back to a new file.
    let back = e.dir.path().join("back.db");
    let again = e.json(&["migrate", &url, back.to_str().unwrap()]);
    assert_eq!(again["memories"], 2, "{again}");
    // A target that holds events is refused, and left as it was.
    let full = e.err(&["migrate", back.to_str().unwrap(), &url]);
    assert!(full.contains("already holds") && full.contains("migrate into an empty store"), "{full}");
    let missing = e.err(&["migrate", "/nonexistent/strata.db", &url]);
    assert!(missing.contains("there is no database at /nonexistent/strata.db"), "{missing}");
}
