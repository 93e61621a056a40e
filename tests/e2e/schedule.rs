//! Scheduled training in the window: the schedule set in Settings and said back; an adapter
//! the schedule trained waits on the Training screen with how it did, and a yes puts it in
//! use; an adapter in use whose facts changed fails its daily check and is rolled back by
//! itself, with a note in the window; a third used beside the approved one, each chat question
//! answered by the adapter it is about (or none); and its use by day (answers, marked helpful or wrong)
//! as numbers and a chart, on the Training screen and in Analytics. Both adapters are real,
//! trained on the on-device model.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use strata_api::schedule::Promotion;
use strata_api::{AddRequest, Engine, EngineOptions, Target, UpdateRequest};
use strata_core::{Concept, Content, FactValue, ManualClock};

use crate::webdriver::Session;
use crate::{Driver, screenshot};

fn fact(key: &str, name: &str, value: &str) -> Content {
    Content::Semantic(Concept {
        key: key.into(),
        facts: [(name.to_string(), FactValue::Text(value.into()))].into_iter().collect(),
    })
}

/// A report better than retrieval, as the schedule's gate reads it.
fn better() -> strata_train::Report {
    strata_train::Report {
        facts: 1,
        questions: 3,
        recall_with_adapter: 1.0,
        recall_without: 0.0,
        recall_with_retrieval: 0.67,
        perplexity_base: 10.0,
        perplexity_adapter: 10.1,
        margin: 0.1,
        min_recall: 0.5,
        passed: true,
        reasons: vec![],
        rows: vec![],
    }
}

/// An adapter trained (briefly, for real) on `memory`, evaluated as [`better`].
fn trained(e: &mut Engine, db: &std::path::Path, chat: &strata_models::LocalChat, memory: &str) -> String {
    let m = e.memory(&Target::new(memory)).unwrap();
    let config = strata_train::TrainConfig { epochs: 1, replay: 0, ..Default::default() };
    let set = strata_train::dataset(chat, &[m], &config).unwrap();
    let plan = strata_train::pipeline::Plan { set: &set, config: &config, gate: None };
    let id = strata_train::pipeline::run(e, db, chat, plan, &mut |_| {}, &Default::default()).unwrap().adapter.id;
    e.record_evaluation(&id, &serde_json::to_value(better()).unwrap(), true).unwrap();
    id
}

/// The office adapter in use for two days, answering three questions (one marked helpful, one
/// wrong), its fact changed since; the dog adapter waiting for a yes.
fn seeded(dir: &std::path::Path) -> (std::path::PathBuf, String, String, String) {
    let db = dir.join("strata.db");
    let chat = strata_models::LocalChat::load_for_training(Some("smollm2-135m")).unwrap();
    let clock = Arc::new(ManualClock::new(Utc::now() - chrono::Duration::days(2)));
    let mut e = Engine::open_with_clock(&db, EngineOptions::default(), clock).unwrap();
    let office = e.add(AddRequest::new(fact("office", "floor", "the ninth floor"))).unwrap().id;
    let dog = e.add(AddRequest::new(fact("maya_chen", "dog", "Biscuit"))).unwrap().id;
    let in_use = trained(&mut e, &db, &chat, &office);
    e.activate_adapter(&in_use, false).unwrap();
    // Two recorded answers it gave (the chat records them so), then rated.
    let by = ("on-device", "smollm2-135m");
    let answers: Vec<String> = (0..2)
        .map(|_| {
            e.record_exchange("Which floor is the office on?", "The ninth floor.", by, None, &[]).unwrap().unwrap().id
        })
        .collect();
    e.record_adapter_answer(&in_use, 0.9, Some(&answers[0])).unwrap();
    e.record_adapter_answer(&in_use, 0.85, Some(&answers[1])).unwrap();
    e.record_adapter_answer(&in_use, 0.95, None).unwrap();
    let answer = strata_core::analytics::About::Answer;
    e.rate(&Target::new(answers[0].as_str()), answer, true).unwrap();
    e.rate(&Target::new(answers[1].as_str()), answer, false).unwrap();
    let waiting = trained(&mut e, &db, &chat, &dog);
    strata_train::schedule::decide(&mut e, &waiting, &better(), Promotion::Ask).unwrap();
    // A third, about a trip, passed and not in use: to use beside the dog's.
    let trip = e.add(AddRequest::new(fact("lisbon_trip", "hotel", "Casa Azulejo"))).unwrap().id;
    let beside = trained(&mut e, &db, &chat, &trip);
    drop(e);
    // The office moved since.
    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    let moved = vec![("floor".to_string(), FactValue::Text("the second floor".into()))];
    e.update(&Target::new(office.as_str()), UpdateRequest { set_facts: moved, ..Default::default() }).unwrap();
    (db, in_use, waiting, beside)
}

#[test]
fn the_schedule_is_set_asks_before_using_an_adapter_rolls_back_a_failing_one_and_shows_their_use() {
    let dir = tempfile::tempdir().unwrap();
    let (db, in_use, waiting, beside) = seeded(dir.path());
    let env = [("STRATA_CHAT_MODEL", "smollm2-135m"), ("STRATA_SCHEDULE_EVERY_S", "2")];
    let driver = Driver::start_with(&db, &env, false);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));

    // The daily check finds the office adapter answering the old floor: rolled back, said.
    let note = s.wait_up_to(Duration::from_secs(240), "the rollback's note", |s| {
        s.all("#training-notes p").first().map(|e| s.text(e))
    });
    assert!(note.starts_with(&format!("Adapter {in_use} was taken out of use: its daily check answered 0%")), "{note}");
    assert!(note.ends_with("below the 50% it needs."), "{note}");
    screenshot(&s, "training-rollback-note");
    s.click(&s.find("#training-notes-seen"));

    // Settings: off by default; nightly, then promoting at once, each said back.
    s.click(&s.find("#nav-settings"));
    let said = s.wait_for("the schedule", |s| s.all("#schedule-settings-said").first().map(|e| s.text(e)));
    assert_eq!(said, "Off: nothing is taught unless you press Teach.");
    s.execute("document.getElementById('schedule-settings').scrollIntoView({block: 'center'})", serde_json::json!([]));
    s.click(&s.find("#schedule-when option[value=nightly]"));
    let nightly = "Each night at 03:00, when at least 10 approved facts are new, it teaches them and asks you before using a new adapter.";
    s.wait_for("nightly", |s| s.all("#schedule-settings-said").first().map(|e| s.text(e)).filter(|t| t == nightly));
    s.click(&s.find("#schedule-promote option[value=automatic]"));
    s.wait_for("automatic", |s| {
        s.all("#schedule-settings-said")
            .first()
            .map(|e| s.text(e))
            .filter(|t| t.ends_with("uses a new adapter that passes at once."))
    });
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db.with_file_name("settings.json")).unwrap()).unwrap();
    assert_eq!(saved["training"]["schedule"]["when"], "nightly");
    assert_eq!(saved["training"]["schedule"]["promotion"], "automatic");
    screenshot(&s, "settings-schedule");

    // The adapter the schedule trained waits for a yes, with how it did.
    s.click(&s.find("#nav-training"));
    s.click(&s.find("#tab-schedule"));
    let asked = s.wait_for("the waiting adapter", |s| s.all("#schedule-awaiting-said").first().map(|e| s.text(e)));
    assert!(asked.starts_with(&format!("The schedule taught your new facts to {waiting}.")), "{asked}");
    assert!(asked.contains("Passed: it answers 100% of the check questions"), "{asked}");
    assert!(asked.ends_with("Looking the facts up instead answered 67%. Use it?"), "{asked}");
    let history = s.texts("#schedule-history li");
    assert!(
        history
            .iter()
            .any(|h| h.contains(&format!("{waiting} did better than what is in use: it waits for your yes."))),
        "{history:?}"
    );
    assert!(
        history.iter().any(|h| h.contains(&format!("Took {in_use} out of use: its daily check recalled 0%"))),
        "{history:?}"
    );
    screenshot(&s, "training-schedule");
    s.click(&s.find("#schedule-yes"));
    let yes = s.wait_for("the yes", |s| s.all("#schedule-answered").first().map(|e| s.text(e)));
    assert_eq!(yes, format!("{waiting} is in use: the chat's model answers with it from now on."));
    assert!(s.all("#schedule-awaiting").is_empty());

    // The adapters: the new one in use; the rolled-back one's use, in numbers and a chart.
    s.click(&s.find("#tab-adapters"));
    let row = |id: &str| format!("#adapter-table tr[data-id='{id}']");
    let status =
        s.wait_for("the table", |s| s.all(&format!("{} .adapter-status", row(&waiting))).first().map(|e| s.text(e)));
    assert_eq!(status, "In use");
    assert_eq!(s.text(&s.find(&format!("{} .adapter-status", row(&in_use)))), "Retired");
    assert_eq!(s.text(&s.find(&format!("{} .adapter-answered", row(&in_use)))), "3");
    assert_eq!(s.text(&s.find(&format!("{} .adapter-model", row(&in_use)))), "SmolLM2 135M Instruct (Q4_1)");
    // The one in use: how its check questions reach it among the adapters in use.
    s.click(&s.find(&format!("{} .adapter-open", row(&waiting))));
    let reach = s.wait_for("its selection", |s| s.all("#adapter-selection").first().map(|e| s.text(e)));
    assert_eq!(
        reach,
        "Alone in use, 3 of its 3 check questions would reach it; a question about nothing it learned is answered without it."
    );
    s.click(&s.find(&format!("{} .adapter-open", row(&in_use))));
    let usage = s.wait_for("the usage", |s| s.all("#adapter-usage-said").first().map(|e| s.text(e)));
    assert_eq!(usage, "It answered 3 questions: 1 marked helpful, 1 marked wrong.");
    assert!(!s.all("#adapter-usage canvas, #adapter-usage svg").is_empty(), "the chart is drawn");
    s.execute("document.getElementById('adapter-usage').scrollIntoView({block: 'center'})", serde_json::json!([]));
    screenshot(&s, "training-adapter-usage");

    // The trip's adapter used too: each question now chooses the one it is about.
    s.click(&s.find(&format!("{} .adapter-alongside", row(&beside))));
    let said = s.wait_for("using it too", |s| s.all("#adapters-said").first().map(|e| s.text(e)));
    assert_eq!(
        said,
        format!("The chat's model now uses {beside} too: each question uses the adapter it is about, or none.")
    );
    let both = s.wait_for("two in use", |s| s.all("#adapters-in-use").first().map(|e| s.text(e)));
    assert!(both.starts_with("2 adapters are in use, each taught different facts"), "{both}");
    s.click(&s.find("#nav-chat"));
    let ask = |s: &Session, question: &str, n: usize| {
        s.type_into(&s.find("#chat-input"), question);
        s.click(&s.find("#chat-send"));
        s.wait_up_to(Duration::from_secs(180), "the answer", |s| {
            if let Some(e) = s.all(".turn .error").first() {
                panic!("the chat failed: {}", s.text(e));
            }
            s.texts(".turn .by").get(n).cloned()
        })
    };
    let by = ask(&s, "What is the lisbon trip's hotel?", 0);
    assert!(by.contains(&format!("with what it learned from your memories (adapter {beside})")), "{by}");
    let by = ask(&s, "What is Maya Chen's dog called?", 1);
    assert!(by.contains(&format!("(adapter {waiting})")), "{by}");
    let by = ask(&s, "How many legs does a spider have?", 2);
    assert!(
        by.contains("on this computer") && !by.contains("adapter"),
        "none for a question about nothing taught: {by}"
    );
    screenshot(&s, "chat-adapters-chosen");

    // Analytics shows the same numbers beside the store's.
    s.click(&s.find("#nav-analytics"));
    let cells = s.wait_for("the adapters' use", |s| {
        let cells = s.texts("#chart-adapters tbody td");
        (cells.len() == 15).then_some(cells)
    });
    let rows: Vec<Vec<String>> = cells.chunks(5).map(<[String]>::to_vec).collect();
    let row_of = |id: &str| rows.iter().find(|r| r[0] == id).cloned().unwrap_or_default();
    assert_eq!(row_of(&in_use), [in_use.as_str(), "Retired", "3", "1", "1"], "{rows:?}");
    assert_eq!(row_of(&beside), [beside.as_str(), "In use", "1", "0", "0"], "the chat's answer counted: {rows:?}");
    assert_eq!(row_of(&waiting), [waiting.as_str(), "In use", "1", "0", "0"], "{rows:?}");
    s.execute("document.getElementById('chart-adapters').scrollIntoView({block: 'center'})", serde_json::json!([]));
    screenshot(&s, "analytics-adapters");
    s.end();
}
