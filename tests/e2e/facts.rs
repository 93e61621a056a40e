//! Facts from the app's chat: after an answer (OpenAI, a loopback server replaying its
//! streams) the conversation is read for facts; what it finds waits on the Facts screen, where
//! a person rewords one and accepts it, and it is then what Strata knows about Ana.

use std::time::Duration;

use crate::webdriver::Session;
use crate::{Driver, screenshot};

const ANSWER: &str = include_str!("../../crates/strata-providers/tests/fixtures/openai/stream_text.sse");
const FACTS: &str = include_str!("../../crates/strata-providers/tests/fixtures/openai/stream_extract_facts.sse");

/// What the loopback OpenAI answers: facts for an extraction request, the recorded answer
/// otherwise.
pub(crate) fn reply(body: &str) -> &'static str {
    if body.contains("You extract facts") { FACTS } else { ANSWER }
}

/// Settings in `dir` that answer with OpenAI's gpt-4o-mini and keep the facts read from
/// conversations for review.
pub(crate) fn answering_with_openai_for_review(dir: &std::path::Path) {
    std::fs::write(
        dir.join("settings.json"),
        r#"{"chat": {"provider": "openai", "model": "gpt-4o-mini"}, "extraction": {"after_exchanges": true, "review": "propose"}}"#,
    )
    .unwrap();
}

#[test]
fn a_fact_said_in_chat_waits_for_review_and_is_known_once_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    crate::facts::answering_with_openai_for_review(dir.path());
    let (url, _) = crate::providers::openai_replying(Duration::ZERO, reply);
    let driver = Driver::start_with(&db, &[("OPENAI_BASE_URL", &url), ("OPENAI_API_KEY", "sk-test-E2E-FACTS")], false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    s.click(&s.find("#nav-chat"));
    s.type_into(&s.find("#chat-input"), "My sister Ana lives in Lisbon.");
    s.click(&s.find("#chat-send"));
    let note = s.wait_up_to(Duration::from_secs(60), "the facts found", |s| {
        if let Some(e) = s.all(".turn .error").first() {
            panic!("the chat failed: {}", s.text(e));
        }
        s.all("#facts-note").first().map(|e| s.text(e)).filter(|t| t.contains("review"))
    });
    // The model also said Ana is a nurse, which nobody said: that is not proposed.
    assert_eq!(note, "1 fact from this conversation is waiting for your review. See the facts");
    screenshot(&s, "chat-facts-found");

    s.click(&s.find("#open-facts"));
    let change = s.wait_for("the proposal", |s| s.all(".proposal .change").first().map(|e| s.text(e)));
    assert_eq!(change, "Ana: new fact");
    let field = s.find(".proposal .fact-text");
    let value = "return document.querySelector('.proposal .fact-text').value";
    assert_eq!(s.execute(value, serde_json::json!([])), "Ana lives in Lisbon");
    assert!(s.text(&s.find(".proposal .muted")).starts_with("Why: nothing was known about this subject"));
    assert_eq!(
        s.texts("#known .empty"),
        ["No facts yet. They come from your conversations in Chat, and from AI tools connected to Strata."]
    );
    screenshot(&s, "facts-review");

    s.clear(&field);
    s.type_into(&field, "Ana lives in Lisbon, Portugal");
    let accept = s.find(".proposal .accept");
    assert_eq!(s.text(&accept), "Accept as edited");
    s.click(&accept);
    let notice = s.wait_for("the fact remembered", |s| s.all("#facts-notice").first().map(|e| s.text(e)));
    assert_eq!(notice, "Remembered 1 fact: Ana lives in Lisbon, Portugal.");
    assert_eq!(s.texts("#proposals .empty"), ["Nothing is waiting for your review."]);
    assert_eq!(s.texts("#known .document h4"), ["Ana"]);
    // The person's wording replaced the model's everywhere: Ana is not described by the
    // model's sentence either.
    assert_eq!(s.texts("#known .document > .muted"), ["What is known about Ana."]);
    let known = s.texts("#known .document li");
    assert_eq!(known.len(), 1);
    assert!(known[0].starts_with("Ana lives in Lisbon, Portugal · said on "), "{known:?}");
    screenshot(&s, "facts");
    s.end();
}
