//! The memory browser's finer tools: the history's "as of" view, the scope and date filters,
//! and the keyboard.

use strata_api::{AddRequest, Engine, EngineOptions, Target, UpdateRequest};
use strata_core::{Content, Episode, EpisodeBody, FactValue};

use crate::webdriver::Session;
use crate::{Driver, screenshot, seeded};

fn utterance(speaker: &str, text: &str, at: &str) -> Content {
    Content::Episodic(Episode {
        occurred_at: strata_core::time::parse_time(at).unwrap(),
        body: EpisodeBody::Utterance { speaker: speaker.into(), text: text.into() },
        concepts: vec![],
        extra: Default::default(),
    })
}

/// Sets a date field's text at once, as pasting does.
fn set_date(s: &Session, id: &str, value: &str) {
    s.execute(
        "const i = document.getElementById(arguments[0]); \
         Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(i, arguments[1]); \
         i.dispatchEvent(new Event('input', { bubbles: true }));",
        serde_json::json!([id, value]),
    );
}

#[test]
fn history_as_of_scope_and_date_filters_and_the_keyboard() {
    let dir = tempfile::tempdir().unwrap();
    let db = seeded(dir.path());
    {
        // An agent's private note in a session, a dated episode, and a fact changed once.
        let opts = EngineOptions { agent_id: Some("cursor".into()), client: "mcp:cursor".into(), ..Default::default() };
        let mut agent = Engine::open(&db, opts).unwrap();
        let req = AddRequest {
            session_id: Some("s-42".into()),
            private: true,
            ..AddRequest::new(utterance("cursor", "The build uses cargo nextest", "2026-03-02T10:00:00Z"))
        };
        agent.add(req).unwrap();
        let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
        let old = AddRequest::new(utterance("Ana", "We met in Lisbon", "2023-05-07T18:00:00Z"));
        e.add(old).unwrap();
        let met = e.recall("Where did we meet? Lisbon", strata_core::Filter::default(), 1).unwrap();
        assert!(format!("{:?}", met[0].memory).contains("We met in Lisbon"), "{met:?}");
        let update = UpdateRequest {
            set_facts: vec![("favourite_drink".into(), FactValue::Text("green tea".into()))],
            ..Default::default()
        };
        e.update(&Target::new("user_preferences"), update).unwrap();
    }
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    let titles = |s: &Session| s.texts(".list li .title");
    s.wait_for("the list", |s| (titles(s).len() == 10).then_some(()));

    // Scope: one agent's private memories; one session's.
    s.click(&s.find(".more-filters summary"));
    s.type_into(&s.find("#filter-agent"), "cursor");
    s.wait_for("the agent's memories", |s| (titles(s) == ["cursor: The build uses cargo nextest"]).then_some(()));
    // Who sees it, in words (not "Scope … session abc123").
    s.click(&s.all(".list li")[0]);
    let detail = s.wait_for("its page", |s| s.all("#detail").first().map(|e| s.text(e)));
    assert!(detail.contains("Who sees itonly the AI tool “cursor”") && !detail.contains("Scope"), "{detail}");
    s.clear(&s.find("#filter-agent"));
    s.type_into(&s.find("#filter-session"), "s-42");
    s.wait_for("the session's memories", |s| (titles(s).len() == 1).then_some(()));
    s.clear(&s.find("#filter-session"));
    // Dates: May 2023 only (both ends included).
    set_date(&s, "filter-since", "2023-05-01");
    set_date(&s, "filter-until", "2023-05-07");
    s.wait_for("May 2023", |s| (titles(s) == ["Ana: We met in Lisbon"]).then_some(()));
    // Or in words, as search understands them; words it does not are said plainly.
    set_date(&s, "filter-since", "in May 2023");
    set_date(&s, "filter-until", "in May 2023");
    s.wait_for("May 2023 in words", |s| (titles(s) == ["Ana: We met in Lisbon"]).then_some(()));
    set_date(&s, "filter-until", "soonish");
    let error = s.wait_for("the refusal", |s| s.all(".list .error").first().map(|e| s.text(e)));
    assert!(error.contains("'soonish' is not a time I understand") && error.contains("last Saturday"), "{error}");
    set_date(&s, "filter-since", "");
    set_date(&s, "filter-until", "");
    s.wait_for("every memory again", |s| (titles(s).len() == 10).then_some(()));

    // Where from: the examples are imported, the episode was written by a person, the agent's
    // note came from an AI tool over MCP.
    let meta = |s: &Session| s.text(&s.find("#meta"));
    s.click(&s.find("#filter-origin option[value=imported]"));
    s.wait_for("the imported", |s| (meta(s) == "8 memories match the filters").then_some(()));
    s.click(&s.find("#filter-origin option[value=person]"));
    s.wait_for("the written", |s| (titles(s) == ["Ana: We met in Lisbon"]).then_some(()));
    let tool = s.find("#filter-origin option[value=tool]");
    assert_eq!(s.text(&tool), "Added by AI tools");
    s.click(&tool);
    s.wait_for("the AI tool's", |s| (titles(s) == ["cursor: The build uses cargo nextest"]).then_some(()));
    s.click(&s.find("#filter-origin option[value=conversation]"));
    s.wait_for("none from chats", |s| (meta(s) == "0 memories match the filters").then_some(()));
    assert_eq!(s.text(&s.find(".list .empty")), "No memory matches these filters.");
    s.click(&s.find("#filter-origin option[value='']"));
    // Sorted by when it happened: the oldest episode (May 2023) comes last.
    s.click(&s.find("#order option[value=occurred]"));
    s.wait_for("the order by time", |s| {
        (titles(s).last().map(String::as_str) == Some("Ana: We met in Lisbon")).then_some(())
    });
    // Last recalled first: the one episode recalled above leads.
    let recalled = s.find("#order option[value=recalled]");
    assert_eq!(s.text(&recalled), "Last recalled first");
    s.click(&recalled);
    s.wait_for("the order by recall", |s| {
        (titles(s).first().map(String::as_str) == Some("Ana: We met in Lisbon")).then_some(())
    });
    s.click(&s.find("#order option[value=added]"));
    s.wait_for("every memory again", |s| (titles(s).len() == 10 && meta(s) == "10 memories").then_some(()));

    // The keyboard: / searches, ↓ opens the first result, Escape clears the search.
    s.execute(
        "document.activeElement.blur(); window.dispatchEvent(new KeyboardEvent('keydown', { key: '/' }));",
        serde_json::json!([]),
    );
    let focused = s.execute("return document.activeElement.id", serde_json::json!([]));
    assert_eq!(focused, "search", "/ goes to the search box");
    s.type_into(&s.find("#search"), "favourite drink");
    s.wait_for("results", |s| titles(s).first().filter(|t| t.starts_with("User preferences")).map(|_| ()));
    s.type_into(&s.find("#search"), "\u{E015}"); // ↓
    let detail = s.wait_for("the detail", |s| s.all("#detail h2").first().map(|e| s.text(e)));
    assert!(detail.starts_with("User preferences"), "{detail}");
    assert!(detail.contains("green tea"), "now: {detail}");

    // As of the first event: the memory as it was created, read-only; then back to now.
    // The history loads after the detail's heading: wait for both of its events.
    let events = s.wait_for("created, then changed", |s| {
        let events = s.all(".timeline li button");
        (events.len() >= 2).then_some(events)
    });
    s.click(&events[0]);
    let banner = s.wait_for("the past", |s| s.all("#as-of").first().map(|e| s.text(e)));
    assert!(banner.contains("version 1"), "{banner}");
    let then = s.text(&s.find("#detail h2"));
    assert!(!then.contains("green tea") && then.contains("oolong tea"), "as of creation: {then}");
    assert!(s.all("#edit").is_empty() && s.all("#tier").is_empty(), "the past is read-only");
    // What changed since, in words; the history says it too.
    let since = s.texts("#as-of-changes li");
    assert_eq!(since, ["favourite drink: “oolong tea” → “green tea”"]);
    let history = s.texts(".timeline li");
    assert!(history.iter().any(|h| h.contains("changed favourite drink: “oolong tea” → “green tea”")), "{history:?}");
    screenshot(&s, "history-as-of");
    s.click(&s.find("#as-of-now"));
    s.wait_for("now again", |s| Some(s.text(&s.find("#detail h2"))).filter(|t| t.contains("green tea")));

    // Restored to the first version: new events, the old ones kept.
    let before = s.all(".timeline li").len();
    s.click(&s.all(".timeline li button")[0]);
    s.click(&s.find("#restore"));
    // The past version shows oolong tea too: the restore is done when the view is back to now.
    s.wait_for("the restored version, back to now", |s| {
        Some(s.text(&s.find("#detail h2"))).filter(|t| t.contains("oolong tea") && s.all("#as-of").is_empty())
    });
    let history =
        s.wait_for("the restore in the history", |s| Some(s.texts(".timeline li")).filter(|h| h.len() > before));
    assert!(history.iter().any(|h| h.contains("changed favourite drink: “green tea” → “oolong tea”")), "{history:?}");
    // Who made each change, in words: a program through the API (the examples and the change
    // above were written so), then this window's restore.
    assert_eq!(s.texts(".timeline li .who"), ["A program using Strata", "A program using Strata", "You, in this app"]);
    s.click(&s.all(".timeline li button")[0]);
    assert_eq!(
        s.wait_for("the comparison", |s| s.all("#as-of-changes").first().map(|e| s.text(e))),
        "It reads the same now."
    );
    assert!(s.all("#restore").is_empty(), "nothing to restore");
    s.click(&s.find("#as-of-now"));
    s.type_into(&s.find("#search"), "\u{E00C}"); // Escape
    s.wait_for("the search cleared", |s| (titles(s).len() == 10).then_some(()));
    s.end();
}
