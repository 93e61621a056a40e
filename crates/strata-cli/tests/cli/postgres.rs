//! `strata --db postgres://…`: the same commands on a PostgreSQL store (the test server of
//! strata-core's tests), and one line for a server that cannot serve Strata.

use std::path::Path;

use crate::Env;
#[path = "../../../strata-core/tests/it/server.rs"]
#[allow(dead_code)]
mod server;

#[test]
fn the_commands_work_on_a_postgres_store() {
    let e = Env::new();
    let url = server::fresh_database();
    let db = Path::new(&url);
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let r = e.run_with(&all, db, None);
        assert_eq!(r.code, 0, "strata {args:?} failed: {}", r.stderr);
        serde_json::from_str(&r.stdout).unwrap()
    };
    let tea = json(&["add", "semantic", "tea", "--fact", "likes=oolong", "--tag", "drinks"]);
    json(&[
        "add",
        "episodic",
        "--speaker",
        "Ana",
        "--text",
        "We adopted a cat called Pixel",
        "--at",
        "2026-01-02T09:00Z",
    ]);
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
