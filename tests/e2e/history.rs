//! Another tool's history brought in from the window: a ChatGPT export imported beside the memory list
//! (its conversations kept, said in words), then read for facts in the background with the
//! chat's model (OpenAI replayed on loopback, slowly), with progress; stopped, it goes on where
//! it stopped when asked, and what it found waits for review.

use std::time::Duration;

use serde_json::{Value, json};

use crate::webdriver::Session;
use crate::{Driver, screenshot};

use crate::facts::reply;

/// A ChatGPT conversation of one question and its answer, in the export's shape.
fn conversation(id: &str, title: &str, at: f64, question: &str, answer: &str) -> Value {
    let message = |mid: &str, role: &str, text: &str, t: f64| {
        json!({"id": mid, "author": {"role": role, "name": null, "metadata": {}}, "create_time": t, "update_time": null,
               "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
               "end_turn": true, "weight": 1.0, "metadata": {}, "recipient": "all"})
    };
    json!({"title": title, "create_time": at, "update_time": at + 20.0, "conversation_id": id, "id": id,
           "current_node": "a", "mapping": {
               "r": {"id": "r", "message": null, "parent": null, "children": ["q"]},
               "q": {"id": "q", "message": message("q", "user", question, at + 1.0), "parent": "r", "children": ["a"]},
               "a": {"id": "a", "message": message("a", "assistant", answer, at + 10.0), "parent": "q", "children": []}}})
}

#[test]
fn a_chatgpt_export_comes_in_and_is_read_for_facts_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    crate::facts::answering_with_openai_for_review(dir.path());
    let export = dir.path().join("conversations.json");
    let conversations = json!([
        conversation("c-1", "Family", 1736935200.0, "My sister Ana lives in Lisbon.", "Lisbon is lovely in spring."),
        conversation("c-2", "Weather", 1737021600.0, "Will it rain tomorrow?", "I cannot see forecasts."),
        conversation("c-3", "Books", 1737108000.0, "Suggest a short novel.", "Try The Old Man and the Sea."),
    ]);
    std::fs::write(&export, conversations.to_string()).unwrap();
    let (url, seen) = crate::providers::openai_replying(Duration::from_secs(5), reply);
    let driver =
        Driver::start_with(&db, &[("OPENAI_BASE_URL", &url), ("OPENAI_API_KEY", "sk-test-E2E-HISTORY")], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    s.type_into(&s.find("#import"), export.to_str().unwrap());
    let notice = s.wait_up_to(Duration::from_secs(30), "the import", |s| s.all("#notice").first().map(|e| s.text(e)));
    assert_eq!(notice, "Imported 3 conversations from ChatGPT: 3 questions with their answers.");
    // Read for facts in the background, a conversation at a time; stopped during the first.
    let stage = s.wait_for("the reading", |s| s.all("#job-stage").first().map(|e| s.text(e)));
    assert_eq!(stage, "Conversation 1 of 3");
    assert!(s.text(&s.find("#job .job-label")).starts_with("Reading 3 imported conversations for facts"));
    screenshot(&s, "history-reading");
    s.click(&s.find("#job-cancel"));
    let stopped =
        s.wait_up_to(Duration::from_secs(30), "the stop", |s| s.all("#history-facts").first().map(|e| s.text(e)));
    assert!(stopped.contains("was stopped") && stopped.contains("Go on reading"), "{stopped}");
    let calls = seen.lock().unwrap().len();

    // Going on reads what is left; the fact Ana's conversation bears out waits for review.
    s.click(&s.find("#history-facts-again"));
    let done = s.wait_up_to(Duration::from_secs(90), "the reading done", |s| {
        s.all("#history-facts").first().map(|e| s.text(e)).filter(|t| t.starts_with("Read "))
    });
    assert_eq!(done, "Read 3 conversations: 0 facts remembered, 1 fact waiting for your review.");
    assert!(seen.lock().unwrap().len() > calls, "the rest was read");
    s.click(&s.find("#nav-facts"));
    let change = s.wait_for("the proposal", |s| s.all(".proposal .change").first().map(|e| s.text(e)));
    assert_eq!(change, "Ana: new fact");
    s.end();
}
