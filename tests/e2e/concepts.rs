//! Concepts in the app: related memories grouped from the memory browser (with progress), a
//! concept opened with its summary and members, and the chat's compare view — the same
//! question's prompt from the memories as they are and with concepts — side by side.

use std::sync::Arc;
use std::time::Duration;

use strata_api::{AddRequest, Engine, EngineOptions};
use strata_core::{Content, Episode, EpisodeBody};

use crate::providers::{KEY, openai_after};
use crate::webdriver::Session;
use crate::{Driver, screenshot};

/// Twelve things Ana said, one a line: six about her kitten, six about her marathon.
const SAID: &str = include_str!("../../crates/strata-cli/tests/fixtures/concept-said.txt");

/// A database holding [`SAID`], embedded by the on-device model (as the app would have done).
fn said(dir: &std::path::Path) -> std::path::PathBuf {
    let db = dir.join("strata.db");
    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    for (i, text) in SAID.lines().enumerate() {
        let at = strata_core::time::parse_time(&format!("2026-01-{:02}T09:00:00Z", i + 1)).unwrap();
        let body = EpisodeBody::Utterance { speaker: "Ana".into(), text: text.to_string() };
        let content = Content::Episodic(Episode { occurred_at: at, body, concepts: vec![], extra: Default::default() });
        e.add(AddRequest { tier: Some(strata_core::Tier::Medium), ..AddRequest::new(content) }).unwrap();
    }
    e.use_embedder(Arc::new(strata_models::MiniLm::load_default().unwrap()), false).unwrap();
    e.embed_all(&std::sync::atomic::AtomicBool::new(false), &mut |_| {}).unwrap();
    db
}

#[test]
fn related_memories_are_grouped_opened_and_compared_in_a_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let db = said(dir.path());
    let (url, _) = openai_after(Duration::ZERO);
    let env = [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_API_KEY", KEY)];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.wait_for("the list", |s| (s.texts(".list li .title").len() == 12).then_some(()));

    // No concepts yet: the panel says what a concept is and how to get some.
    s.click(&s.find("#concepts-open"));
    let panel = s.text(&s.find("#concepts"));
    assert!(panel.contains("A concept is a group of memories about one thing"), "{panel}");
    assert_eq!(
        s.text(&s.find("#no-concepts")),
        "No concepts yet. “Group related memories” finds them: seconds for a few thousand memories, about two minutes for 100,000."
    );

    // Grouping: the outcome in words, then the concepts by name with their sizes and dates.
    // (The app loads its embedding model in the background: until then grouping says so.)
    // Clicked once, and again only after that error (between the job's bar going and the
    // outcome showing there is a moment with neither: a second click then would group again).
    let mut clicked = false;
    let grouped = s.wait_up_to(Duration::from_secs(60), "the grouping", |s| {
        if let Some(e) = s.all("#concepts .error").first() {
            assert!(s.text(e).contains("needs the embedding model"), "{}", s.text(e));
            clicked = false;
        }
        if !clicked && s.all("#job").is_empty() {
            s.click(&s.find("#group"));
            clicked = true;
            std::thread::sleep(Duration::from_millis(300));
        }
        s.all("#grouped").first().map(|e| s.text(e))
    });
    assert!(grouped.contains("concepts now group") && grouped.contains("of 12 memories"), "{grouped}");
    assert!(grouped.contains("new") && grouped.contains("shorter than what they stand for"), "{grouped}");
    let names = s.texts("#concept-list li button");
    assert!(names.len() >= 2, "{names:?}");
    assert!(names.iter().any(|n| n.contains("kitten") || n.contains("Pixel")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("marathon")), "{names:?}");
    let first = s.texts("#concept-list li")[0].clone();
    assert!(first.contains(" memories · ") && first.contains("2026"), "{first}");
    screenshot(&s, "concepts");

    // A concept opened: what it groups, a summary quoted from its memories, and its memories.
    let kitten = s.all("#concept-list li button").into_iter().find(|b| s.text(b).contains("kitten")).unwrap();
    s.click(&kitten);
    let about = s.wait_for("the concept", |s| s.all("#concept-about").first().map(|e| s.text(e)));
    assert!(about.starts_with("Groups ") && about.contains(" memories from "), "{about}");
    assert_eq!(s.text(&s.find("#detail dd")), "Concept");
    let summary = s.texts("#concept-summary li");
    assert!(!summary.is_empty() && summary.iter().all(|t| SAID.lines().any(|said| t.contains(said))), "{summary:?}");
    let members = s.texts("#concept-members li");
    assert!(members.iter().all(|m| m.starts_with("Ana: ") && m.contains("Pixel")), "{members:?}");
    assert!(s.all("#edit").is_empty(), "a concept is not edited by hand");
    let history = s.texts(".timeline li");
    assert!(
        history[0].contains("created: concept/kitten") && history[0].ends_with("Strata, grouping related memories"),
        "{history:?}"
    );
    screenshot(&s, "concept");
    // A member opens as itself.
    let member = members[0].clone();
    s.click(&s.find("#concept-members li button"));
    s.wait_for("the member", |s| (s.text(&s.find("#detail h2")) == member).then_some(()));
    // Concepts have their panel: the list shows what was said, not the groups.
    let rows = s.wait_for("the list", |s| Some(s.texts(".list li .title")).filter(|t| t.len() == 12));
    assert!(rows.iter().all(|t| t.starts_with("Ana: ")), "{rows:?}");
    assert!(s.text(&s.find("#meta")).contains("12 memories"), "{}", s.text(&s.find("#meta")));

    // The on-device model writes the summaries: what it did in words, then the concept says
    // who wrote its summary, and each sentence still opens a memory it draws on.
    s.click(&s.find("#concepts-open"));
    s.click(&s.find("#write-summaries"));
    let wrote = s.wait_up_to(Duration::from_secs(240), "the summaries", |s| {
        if let Some(e) = s.all("#concepts .error").first() {
            panic!("{}", s.text(e));
        }
        s.all("#grouped").first().map(|e| s.text(e))
    });
    assert!(wrote.starts_with("Qwen2.5-Coder 0.5B Instruct (Q4_K_M) wrote "), "{wrote}");
    let kitten = s.all("#concept-list li button").into_iter().find(|b| s.text(b).contains("kitten")).unwrap();
    s.click(&kitten);
    let source = s.wait_for("the written summary", |s| s.all("#summary-source").first().map(|e| s.text(e)));
    assert!(
        source.starts_with("Written by Qwen2.5-Coder 0.5B Instruct (Q4_K_M) from these memories. Every name"),
        "{source} ({wrote})"
    );
    let written = s.texts("#concept-summary li");
    assert!(!written.is_empty(), "{written:?}");
    screenshot(&s, "concept-written");
    s.click(&s.find("#concept-summary li button"));
    s.wait_for("the memory it draws on", |s| s.text(&s.find("#detail h2")).starts_with("Ana: ").then_some(()));

    // Analytics tells what the grouping did.
    s.click(&s.find("#nav-analytics"));
    let pass = s.wait_for("the passes", |s| {
        let t = s.texts("#passes tbody tr:nth-child(1) td");
        (!t.is_empty()).then_some(t)
    });
    assert_eq!((pass[1].as_str(), pass[2].clone()), ("everything", names.len().to_string()), "{pass:?}");
    assert!(pass[7].ends_with('×') && pass[7].trim_end_matches('×').parse::<f64>().unwrap() > 1.0, "{pass:?}");
    let held = s.text(&s.find("#compaction p"));
    assert!(held.starts_with(&format!("{} concepts hold ", names.len())), "{held}");
    // Its table is whole, and the page does not scroll sideways.
    let fits = s.execute(
        "const t = document.getElementById('passes'); const a = document.querySelector('.analytics'); \
         return [t.scrollWidth <= t.parentElement.clientWidth, a.scrollWidth <= a.clientWidth]",
        serde_json::json!([]),
    );
    assert_eq!(fits, serde_json::json!([true, true]));
    assert_eq!(s.texts("#passes th").last().map(String::as_str), Some("Summaries shorter by"));

    // Chat: the same question's prompt with and without concepts, side by side.
    s.click(&s.find("#nav-chat"));
    s.click(&s.find("#chat-provider option[value=openai]"));
    s.type_into(&s.find("#chat-model"), "gpt-4o-mini");
    s.type_into(&s.find("#chat-input"), "How is Pixel the kitten doing?");
    s.click(&s.find("#chat-send"));
    s.wait_up_to(Duration::from_secs(60), "the answer", |s| s.all(".turn .why").first().map(|_| ()));
    s.click(&s.find(".compare-toggle"));
    let compacted = s.wait_for("the comparison", |s| s.all("#compare-compacted").first().map(|e| s.text(e)));
    let raw = s.text(&s.find("#compare-raw"));
    // At the 500 tokens it starts with, both prompts hold what fits of the memories.
    assert_eq!(s.text(&s.find("#compare-room option:checked")), "500 tokens");
    assert!(raw.starts_with("Memories as they are"), "{raw}");
    assert!(raw.contains("memories in ") && raw.contains(" of 500 tokens"), "{raw}");
    assert!(raw.contains("Pixel the kitten"), "{raw}");
    assert!(compacted.starts_with("With concepts"), "{compacted}");
    let uses = s.texts("#compare-compacted .concept-use");
    assert!(!uses.is_empty(), "a concept is in the compacted prompt: {compacted}");
    assert!(
        uses.iter().any(|u| u.contains("kitten") && (u.contains("stands for") || u.contains("beside its memories"))),
        "{uses:?}"
    );
    let said = s.text(&s.find(".compare-said"));
    assert!(said.starts_with("With concepts, "), "{said}");
    screenshot(&s, "compare");
    // A smaller room: the prompts are rebuilt within it.
    s.click(&s.find("#compare-room option[value='250']"));
    s.wait_for("the smaller prompts", |s| s.text(&s.find("#compare-raw")).contains(" of 250 tokens").then_some(()));
    s.end();
}
