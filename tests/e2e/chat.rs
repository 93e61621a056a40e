//! The chat screen as a person uses it: a "thinking" state until the first word, memories used
//! that open in the list, an answer marked wrong (kept, crossed out, never sent again), one not
//! remembered at all, and conversations kept — across screens, in a list, and across restarts.

use std::time::Duration;

use strata_api::{Engine, EngineOptions};
use strata_core::Filter;

use crate::providers::{KEY, openai_after};
use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

const ANSWER: &str = "Pixel is a grey tabby.";

fn ask(s: &Session, question: &str) {
    s.type_into(&s.find("#chat-input"), question);
    s.click(&s.find("#chat-send"));
}

/// Chooses OpenAI's gpt-4o-mini (served by the loopback server) in the chat's model picker.
fn pick_openai(s: &Session) {
    s.click(&s.find("#chat-provider option[value=openai]"));
    s.type_into(&s.find("#chat-model"), "gpt-4o-mini");
}

/// Waits for the `n`th turn's finished answer (its "why" panel) and returns that panel's text.
fn answered(s: &Session, n: usize) -> String {
    s.wait_up_to(Duration::from_secs(60), "the answer", |s| {
        if let Some(e) = s.all(".turn .error").first() {
            panic!("the chat failed: {}", s.text(e));
        }
        s.all(".turn .why").get(n - 1).map(|e| s.text(e))
    })
}

#[test]
fn conversations_are_kept_and_a_wrong_answer_is_never_used_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (url, seen) = openai_after(Duration::from_millis(1500));
    let env = [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_API_KEY", KEY)];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-chat"));
    assert!(s.text(&s.find(".conversations")).contains("Conversations you have here are kept"));
    pick_openai(&s);

    // Until the first word, the answer says it is thinking.
    ask(&s, "What is my favourite drink?");
    let thinking = s.wait_for("the thinking state", |s| s.all(".turn .answer.thinking").first().map(|e| s.text(e)));
    assert_eq!(thinking, "Thinking…");
    // The memories found show before the model's first word, in words.
    let found = s.wait_for("the memories found", |s| s.all("#found").first().map(|e| s.text(e)));
    assert!(found.starts_with("Found 1 memory: user preferences: name: Alex; favourite drink: oolong tea"), "{found}");
    let why = answered(&s, 1);
    assert_eq!(s.text(&s.find(".turn .answer")), ANSWER);
    assert!(why.contains("Answered by openai gpt-4o-mini · remembered in this conversation"), "{why}");
    assert!(why.contains("Facts User preferences: name Alex"), "memories in words, not keys: {why}");
    let source = s.text(&s.find(".turn .source"));
    assert!(source.starts_with("The memory closest to your question: User preferences: name Alex"), "{source}");

    // A memory used opens in the list; the conversation is still there on coming back.
    let used = s.find(".injected .link");
    let name = s.text(&used);
    s.click(&used);
    let shown = s.wait_for("the memory opened", |s| s.all("#detail h2").first().map(|e| s.text(e)));
    assert_eq!(shown, name);
    // The exchange is in the list as who said what: the assistant's words labelled as such.
    let exchange =
        "Asked: What is my favourite drink? — the assistant answered (it may be wrong): Pixel is a grey tabby.";
    s.wait_for("the exchange in the list", |s| {
        s.texts(".list li .title").contains(&exchange.to_string()).then_some(())
    });
    s.click(&s.find("#nav-chat"));
    assert_eq!(s.texts(".turn .question"), vec!["What is my favourite drink?"]);
    assert_eq!(s.text(&s.find(".turn .answer")), ANSWER);

    // Said helpful, and a memory said useful: counted in Analytics.
    s.click(&s.find(".turn .helpful"));
    assert_eq!(s.wait_for("noted", |s| s.all(".turn .helpful-said").first().map(|e| s.text(e))), "Noted as helpful");
    s.click(&s.find(".injected .rate .link"));
    assert_eq!(s.wait_for("noted", |s| s.all(".injected .rated").first().map(|e| s.text(e))), " · useful, noted");

    // Marked wrong: crossed out, said why, and never sent to the model again.
    s.click(&s.find(".turn .wrong-answer"));
    let notice = s.wait_for("the notice", |s| s.all(".turn .notice").first().map(|e| s.text(e)));
    assert!(notice.starts_with("Marked wrong. Strata will not give this answer to a model again"), "{notice}");
    assert_eq!(s.all(".turn .answer.wrong").len(), 1);
    assert!(s.all(".turn .wrong-answer").is_empty(), "it cannot be marked twice");
    s.click(&s.find("#nav-analytics"));
    let said = s.wait_for("what was said", |s| s.all("#card-feedback").first().map(|e| s.text(e)));
    assert!(said.starts_with("2 helpful · 1 not"), "the answer and the memory helpful, then the answer wrong: {said}");
    s.click(&s.find("#nav-chat"));
    ask(&s, "And what do I drink in the evening?");
    answered(&s, 2);
    let second = seen.lock().unwrap()[1].clone();
    assert!(second.contains("And what do I drink in the evening?"), "{second}");
    assert!(!second.contains(ANSWER), "the wrong answer was sent again: {second}");

    // Not remembered at all: the app's own dialog, then what was erased.
    s.click(&s.all(".turn .dont-remember")[1]);
    assert!(s.text(&s.find("#forget-title")).contains("And what do I drink in the evening?"));
    s.click(&s.find("#forget-confirm"));
    let notice = s.wait_for("the forget notice", |s| s.all(".turn .notice").get(1).map(|e| s.text(e)));
    assert!(notice.starts_with("Forgot “this question and its answer”: its words are erased"), "{notice}");
    screenshot(&s, "chat-conversation");

    // A new conversation starts empty; the old one is listed and opens as it was left.
    s.click(&s.find("#chat-new"));
    assert!(s.all(".turn").is_empty());
    let listed = s.texts(".conversations li");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].starts_with("What is my favourite drink?") && listed[0].ends_with("1 question"), "{listed:?}");
    s.click(&s.find(".conversations li .link"));
    s.wait_for("the old conversation", |s| (s.all(".turn .answer.wrong").len() == 1).then_some(()));
    assert_eq!(s.texts(".turn .question"), vec!["What is my favourite drink?"]);
    s.end();
    drop(driver);

    // After a restart the window opens on the last conversation.
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-chat"));
    let kept = s.wait_for("the kept conversation", |s| s.all(".turn .answer.wrong").first().map(|e| s.text(e)));
    assert_eq!(kept, ANSWER);
    // As it was answered: the memories used, the budget and Compare, not only who answered.
    let why = s.text(&s.find(".turn .why"));
    assert!(why.contains("Memories used (1)") && why.contains("Facts User preferences: name Alex"), "{why}");
    assert!(why.contains("The question used ") && why.contains(" tokens: "), "{why}");
    assert!(why.contains("Answered by openai gpt-4o-mini · remembered in this conversation"), "{why}");
    assert_eq!(s.all(".turn .compare-toggle").len(), 1, "Compare is there: {why}");
    s.end();
    drop(driver);

    // In the store: the wrong answer is kept but never recalled; the forgotten one is gone.
    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    let recalled = e.recall("what do I drink", Filter::default(), 20).unwrap();
    assert!(recalled.iter().all(|r| !serde_json::to_string(&r.memory).unwrap().contains(ANSWER)), "{recalled:?}");
    let everything = e.all_memories(Filter { include_expired: true, ..Default::default() }).unwrap();
    assert!(!format!("{everything:?}").contains("in the evening"), "forgotten");
}

/// A conversation taller than the window keeps its newest answer in view.
#[test]
fn the_newest_answer_stays_in_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (url, _seen) = openai_after(Duration::from_millis(100));
    let env = [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_API_KEY", KEY)];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-chat"));
    pick_openai(&s);
    let questions = ["What is my favourite drink?", "And in the evening?", "And in the morning?", "What about tea?"];
    for (n, question) in questions.iter().enumerate() {
        ask(&s, question);
        answered(&s, n + 1);
    }
    // Taller than its pane, and scrolled so that the last answer's bottom is on screen.
    let in_view = "const t = document.querySelector('.turns'); \
                   const last = [...t.querySelectorAll('.turn')].pop().getBoundingClientRect(); \
                   return [t.scrollHeight > t.clientHeight + 100, last.bottom <= t.getBoundingClientRect().bottom + 2];";
    s.wait_for("the newest answer in view", |s| {
        (s.execute(in_view, serde_json::json!([])) == serde_json::json!([true, true])).then_some(())
    });
    assert_eq!(s.texts(".turn .question").last().map(String::as_str), Some("What about tea?"));
    s.end();
}

/// A model's answers do not pile up as memories a person reads as theirs: in a new
/// conversation the model's earlier answer is not "the memory closest to your question", and
/// it is never among the most recalled.
#[test]
fn a_model_s_past_answers_are_not_the_closest_memory_nor_the_most_recalled() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    let (url, _) = openai_after(Duration::ZERO);
    let env = [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_API_KEY", KEY)];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-chat"));
    pick_openai(&s);
    for n in 1..=3 {
        if n > 1 {
            s.click(&s.find("#chat-new"));
        }
        ask(&s, "What size are my hiking boots?");
        let why = answered(&s, 1);
        assert!(why.contains("Answered by openai gpt-4o-mini"), "{why}");
        let closest = s.all(".turn .source").first().map(|e| s.text(e)).unwrap_or_default();
        assert!(!closest.contains("Asked: What size are my hiking boots?"), "turn {n}: {closest}");
    }
    let injected = s.text(&s.find(".turn .injected"));
    assert!(injected.contains("What size are my hiking boots?"), "the past answers are in the prompt: {injected}");
    s.click(&s.find("#nav-analytics"));
    let lists = s.wait_for("the lists", |s| s.all("#lists").first().map(|e| s.text(e)));
    let top = s.texts("#top li");
    assert!(!top.iter().any(|t| t.contains("hiking boots") || t.starts_with("Asked:")), "{top:?} ({lists})");
    s.end();
}
