//! Extraction from the command line with OpenAI (a loopback server replaying its tool-call
//! streams): `strata extract` applies or proposes, `strata review` accepts, `strata facts`
//! shows a fact with the value it had before, and `strata ask` hands its exchange to a
//! background `strata extract` when the settings say so.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::Env;
use super::providers::loopback;

const KEY: &str = "sk-test-PLANTED-0077";

/// What the loopback OpenAI answers: facts for an extraction request (by what the
/// conversation says), decisions for a merge request, a plain answer otherwise.
fn openai(_: &str, body: &str) -> (u16, &'static str, String) {
    let fixture = if body.contains("You extract facts") && body.contains("moved to Porto") {
        include_str!("../../../strata-providers/tests/fixtures/openai/stream_extract_update.sse")
    } else if body.contains("You extract facts") {
        include_str!("../../../strata-providers/tests/fixtures/openai/stream_extract_facts.sse")
    } else if body.contains("You keep a person's memory current") {
        include_str!("../../../strata-providers/tests/fixtures/openai/stream_decide_update.sse")
    } else {
        include_str!("../../../strata-providers/tests/fixtures/openai/stream_text.sse")
    };
    (200, "text/event-stream", fixture.to_string())
}

fn strata(e: &Env, url: &str, settings: Option<&Path>, args: &[&str]) -> Output {
    strata_on(&e.db(), url, settings, args)
}

/// `strata ARGS` on the store `db` (a file or a `postgres://` URL) with OpenAI at `url`.
fn strata_on(db: &Path, url: &str, settings: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = crate::strata();
    cmd.args(args).env("STRATA_DB", db).env("OPENAI_API_KEY", KEY).env("OPENAI_BASE_URL", url);
    if let Some(s) = settings {
        cmd.env("STRATA_SETTINGS", s);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "strata {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn say(e: &Env, db: &Path, session: &str, when: &str, text: &str) {
    let args = ["add", "episodic", "--speaker", "user", "--text", text, "--session", session, "--at", when];
    let r = e.run_with(&args, db, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn extract_applies_then_proposes_an_update_that_review_accepts_with_its_history() {
    let e = Env::new();
    extract_then_review(&e, &e.db());
    // The key went only into request headers.
    let db = std::fs::read(e.db()).unwrap();
    assert!(!db.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
}

#[test]
fn extraction_and_review_work_on_a_postgres_store() {
    let e = Env::new();
    let url = crate::postgres::server::fresh_database();
    extract_then_review(&e, Path::new(&url));
    // The key went only into request headers: no text column of any table holds it.
    let mut c = crate::postgres::server::connect(&url);
    let columns = c
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND data_type = 'text'",
            &[],
        )
        .unwrap();
    assert!(columns.len() > 20, "the schema was read");
    for col in columns {
        let (table, column): (String, String) = (col.get(0), col.get(1));
        let found: i64 = c
            .query_one(&format!("SELECT count(*) FROM {table} WHERE {column} LIKE '%' || $1 || '%'"), &[&KEY])
            .unwrap()
            .get(0);
        assert_eq!(found, 0, "{table}.{column} holds the key");
    }
}

/// Extraction applies facts, proposes an update that review accepts, and keeps its history, on
/// the store `db`.
fn extract_then_review(e: &Env, db: &Path) {
    let strata = |url: &str, args: &[&str]| strata_on(db, url, None, args);
    let json = |args: &[&str]| -> Value {
        let out = strata("http://127.0.0.1:9", &[args, &["--json"]].concat());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    say(e, db, "s1", "2023-05-06T10:00:00Z", "My sister Ana lives in Lisbon.");
    say(e, db, "s1", "2023-05-06T10:01:00Z", "She works as a nurse there.");
    let (url, seen) = loopback(openai);
    let gpt = ["--provider", "openai", "--model", "gpt-4o-mini"];

    // A provider's model applies at once (the settings say nothing of review).
    let out = strata(&url, &[&["extract"][..], &gpt].concat());
    let shown = text(&out);
    assert!(shown.starts_with("Read 2 turns of 1 conversation: 2 changes."), "{shown}");
    assert!(shown.contains("Ana lives in Lisbon") && shown.contains("nothing was known about this subject"), "{shown}");
    let sent: Value = serde_json::from_str(&seen.lock().unwrap()[0].1).unwrap();
    assert_eq!(sent["tools"][0]["function"]["name"], "extract_facts");
    assert!(sent["messages"][1]["content"].as_str().unwrap().contains("[1] user: My sister Ana lives in Lisbon."));
    assert!(sent["messages"][0]["content"].as_str().unwrap().contains("Saturday 2023-05-06"), "the date is given");
    let facts = text(&strata(&url, &["facts"]));
    assert_eq!(facts.trim(), "Ana — The user's sister.\n- Ana lives in Lisbon\n- Ana works as a nurse");
    let again = text(&strata(&url, &[&["extract"][..], &gpt].concat()));
    assert_eq!(again.trim(), "Nothing new to read: every turn has been read for facts.");

    // Ana moved: proposed, so not recalled until accepted.
    say(e, db, "s2", "2024-03-02T09:00:00Z", "Ana moved to Porto last month.");
    let out = strata(&url, &[&["extract", "--review", "propose"][..], &gpt].concat());
    assert!(text(&out).contains("1 change, 1 waiting for `strata review`"), "{}", text(&out));
    let waiting = json(&["review"]);
    let proposal = &waiting.as_array().unwrap()[0];
    assert_eq!(
        (proposal["action"].as_str(), proposal["previous"].as_str()),
        (Some("update"), Some("Ana lives in Lisbon"))
    );
    assert_eq!(proposal["reason"], "Ana moved");
    let facts = text(&strata(&url, &["facts", "Ana"]));
    assert!(facts.contains("- Ana lives in Lisbon"), "not applied yet: {facts}");
    let accepted = text(&strata(&url, &["review", "accept", "--all"]));
    assert!(accepted.starts_with("Accepted ") && accepted.contains("Ana lives in Porto"), "{accepted}");
    let facts = text(&strata(&url, &["facts", "Ana"]));
    assert!(facts.contains("- Ana lives in Porto (said 2024-03-02)"), "{facts}");
    assert!(facts.contains("    before: Ana lives in Lisbon (from 2023-05-06 until 2024-03-02)"), "{facts}");
    assert_eq!(text(&strata(&url, &["review"])).trim(), "Nothing waiting for review.");
    let err = e.err_with(&["review", "accept"], db, None);
    assert!(err.contains("name the proposals to accept"), "{err}");
}

#[test]
fn ask_hands_its_exchange_to_a_background_extraction_when_the_settings_say_so() {
    let e = Env::new();
    let settings = e.dir.path().join("settings.json");
    std::fs::write(&settings, r#"{"extraction": {"after_exchanges": true, "review": "propose"}}"#).unwrap();
    let (url, seen) = loopback(openai);
    let out = strata(&e, &url, Some(&settings), &["ask", "My sister Ana lives in Lisbon.", "--provider", "openai"]);
    assert_eq!(text(&out).trim(), "Pixel is a grey tabby.", "the answer did not wait");
    // The background process asks the model for facts and proposes those the exchange bears
    // out (the model's "Ana works as a nurse" was never said: it is dropped).
    let mut proposals = Value::Null;
    for _ in 0..200 {
        proposals = e.json(&["review"]);
        if proposals.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(proposals.as_array().map(Vec::len), Some(1), "{proposals}");
    assert_eq!(proposals[0]["fact"], "Ana lives in Lisbon");
    let requests = seen.lock().unwrap();
    assert!(requests.iter().any(|(_, body)| body.contains("[1] user: My sister Ana lives in Lisbon.")), "{requests:?}");
}
