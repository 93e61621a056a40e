//! The analytics screen over a database seeded across three days: the headline numbers, a
//! chart's numbers and what is behind one of them, a search that found nothing, the most
//! recalled memory opened in the browser, and a health fix previewed, applied and undone.

use std::sync::Arc;

use chrono::{Duration, Utc};
use strata_api::{AddRequest, ContextParams, Engine, EngineOptions};
use strata_core::{Clock, Concept, Content, Episode, EpisodeBody, FactValue, Filter, ManualClock, Tier};

use crate::webdriver::Session;
use crate::{Driver, screenshot};

fn fact(key: &str, value: &str) -> AddRequest {
    let facts = [("v".to_string(), FactValue::Text(value.into()))].into_iter().collect();
    AddRequest::new(Content::Semantic(Concept { key: key.into(), facts }))
}

fn said(text: &str, at: chrono::DateTime<Utc>) -> AddRequest {
    let body = EpisodeBody::Utterance { speaker: "Ana".into(), text: text.into() };
    AddRequest::new(Content::Episodic(Episode { occurred_at: at, body, concepts: vec![], extra: Default::default() }))
}

/// Three days ago: three facts and two episodes, two of them near-duplicates; two days ago,
/// two more episodes; yesterday, three searches (one finds nothing), a prompt, and a fact
/// moved to long-term by a person.
fn three_days(dir: &std::path::Path) -> (std::path::PathBuf, [String; 3]) {
    let db = dir.join("strata.db");
    let start = Utc::now() - Duration::days(3);
    let clock = Arc::new(ManualClock::new(start));
    let mut e = Engine::open_with_clock(&db, EngineOptions::default(), clock.clone()).unwrap();
    let quokka = e.add(fact("pet", "a quokka called Pip")).unwrap().id;
    e.tag(&strata_api::Target::new(quokka.clone()), &["pets".to_string()]).unwrap();
    e.add(fact("home", "a flat in Lisbon by the harbour")).unwrap();
    let cello = e.add(fact("sister", "Ines plays the cello in the city orchestra")).unwrap().id;
    let first = e.add(said("I started working at the harbour office in March", start)).unwrap().id;
    e.add(said("I started working at the harbour office in March.", start)).unwrap();
    clock.advance(Duration::days(1));
    e.add(said("The marathon training plan starts on Monday", clock.now())).unwrap();
    e.add(said("Pip the quokka hopped onto the balcony", clock.now())).unwrap();
    clock.advance(Duration::days(1));
    e.recall("quokka", Filter::default(), 5).unwrap();
    e.recall("cello orchestra", Filter::default(), 5).unwrap();
    e.recall("submarine", Filter::default(), 5).unwrap();
    let prompt = ContextParams {
        model: "gpt-4o".into(),
        message: "What is my quokka called?".into(),
        budget: Some(300),
        ..ContextParams::default()
    };
    e.build_context(prompt).unwrap();
    e.set_tier(&strata_api::Target::new(cello.clone()), Tier::Long, "a person moved it").unwrap();
    (db, [quokka, cello, first])
}

#[test]
fn a_new_store_says_there_is_nothing_to_show_yet() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("strata.db");
    Engine::open(&db, EngineOptions::default()).unwrap();
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-analytics"));
    let memories = s.wait_for("the cards", |s| s.all("#card-memories").first().map(|e| s.text(e)));
    assert!(memories.starts_with("0 memories0 expired · – searchable by meaning"), "{memories}");
    assert_eq!(s.text(&s.find("#card-prompts")), "0 promptsnone built in this period");
    assert_eq!(s.text(&s.find("#chart-created p")), "No memory was added in this period.");
    assert_eq!(
        s.text(&s.find("#chart-recalls p")),
        "Nothing was recalled in this period: recalls are recorded when you search or chat."
    );
    assert_eq!(s.text(&s.find("#no-result")), "No search yet.");
    assert_eq!(s.text(&s.find("#chart-scores p")), "No recall in this period found something.");
    assert!(s.text(&s.find("#compaction")).starts_with("ConceptsNo concepts yet.Related memories were not grouped"));
    let duplicates = s.wait_for("health", |s| s.all("#health-duplicates td").first().map(|e| s.text(e)));
    assert_eq!(duplicates, "None.");
    s.end();
}

#[test]
fn the_dashboard_shows_real_numbers_opens_what_is_behind_them_and_mends_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (db, [quokka, _cello, first]) = three_days(dir.path());
    let day = |n: i64| (Utc::now() - Duration::days(n)).format("%Y-%m-%d").to_string();
    let driver = Driver::start(&db);
    let s = Session::start(&driver.url, env!("CARGO_BIN_EXE_strata-desktop"));
    s.click(&s.find("#nav-analytics"));

    // The headline numbers.
    let memories = s.wait_for("the cards", |s| s.all("#card-memories").first().map(|e| s.text(e)));
    assert!(memories.starts_with("7 memories"), "{memories}");
    let recalls = s.text(&s.find("#card-recalls"));
    assert!(recalls.starts_with("4 recalls") && recalls.contains("75% found something"), "{recalls}");
    assert!(s.text(&s.find("#card-prompts")).starts_with("1 prompt"), "{}", s.text(&s.find("#card-prompts")));

    // A chart's numbers: what was added each day, by type.
    s.click(&s.find("#chart-created summary"));
    let row = |n: usize| s.texts(&format!("#chart-created tbody tr:nth-child({n}) td"));
    assert_eq!(row(1), [day(3).as_str(), "3", "2", "0", "5"]);
    assert_eq!(row(2), [day(2).as_str(), "0", "2", "0", "2"]);
    assert_eq!(s.all("#chart-created tbody tr").len(), 2);
    // The funnel: recalled, put in a prompt, drawn on by an answer (no chat answered here).
    s.click(&s.find("#chart-funnel summary"));
    let funnel = s.texts("#chart-funnel tbody td");
    assert_eq!(&funnel[4..], ["Drawn on by an answer", "0"], "{funnel:?}");
    assert!(funnel[1].parse::<u32>().unwrap() >= funnel[3].parse::<u32>().unwrap(), "{funnel:?}");
    // The person who moved a fact.
    assert_eq!(s.text(&s.find("#reasons")), "Why: a person moved it (1)");
    s.execute("document.querySelector('.analytics').scrollTo(0, 0)", serde_json::json!([]));
    screenshot(&s, "analytics");

    // What is behind a count: the two episodes of three days ago.
    s.click(&s.find("#chart-created tbody tr:nth-child(1) td:nth-child(3) button"));
    let heading = s.wait_for("the drill-down", |s| s.all("#drill h3").first().map(|e| s.text(e)));
    assert_eq!(heading, format!("Episodes added {}", day(3)));
    let drilled = s.wait_for("its memories", |s| {
        let t = s.texts("#drilled li");
        (!t.is_empty()).then_some(t)
    });
    assert_eq!(drilled.len(), 2, "{drilled:?}");
    assert!(drilled.iter().all(|t| t.contains("harbour office")), "{drilled:?}");

    // Narrowed to a tag: the quokka alone.
    s.click(&s.find("#tag option[value='pets']"));
    let tagged = s.wait_for("the tagged cards", |s| {
        let t = s.text(&s.find("#card-memories"));
        t.starts_with("1 memory").then_some(t)
    });
    assert!(tagged.contains("0 expired"), "{tagged}");
    s.click(&s.find("#tag option[value='']"));
    s.wait_for("every memory again", |s| s.text(&s.find("#card-memories")).starts_with("7 memories").then_some(()));

    // The search that found nothing, and when it was asked.
    assert_eq!(s.texts("#no-result li"), vec!["submarine 1 time"]);
    s.click(&s.find("#no-result li button"));
    let rows = s.wait_for("the query's recalls", |s| {
        let t = s.texts("#drilled > li");
        (t.len() == 1 && t[0].contains("submarine")).then_some(t)
    });
    assert!(rows[0].contains("a search · 0 results"), "{rows:?}");
    // Yesterday's recalls, each result with what made its score.
    s.click(&s.find("#chart-recalls summary"));
    s.click(&s.find("#chart-recalls tbody tr:nth-child(1) td:nth-child(2) button"));
    let rows = s.wait_for("the day's recalls", |s| {
        let t = s.texts("#drilled > li");
        (t.len() == 4).then_some(t)
    });
    let asked = rows.iter().find(|t| t.contains("What is my quokka called?")).expect("the prompt's recall");
    assert!(asked.contains("for a prompt") && asked.contains("(match 0."), "{asked}");
    assert!(asked.contains("in the prompt"), "{asked}");
    // How well recall matched: recorded without the embedding model, so not by meaning; the
    // best results' mean score.
    assert_eq!(
        s.text(&s.find("#chart-scores p")),
        "No recall in this period was matched by meaning: the embedding model was not loaded when they ran."
    );
    s.click(&s.find("#chart-scores summary"));
    let scores = s.texts("#chart-scores tbody td");
    assert_eq!(&scores[..4], [day(1).as_str(), "—", "—", "—"], "{scores:?}");
    assert!(scores[4].parse::<f64>().unwrap() >= 1.0, "{scores:?}");
    s.execute("document.querySelector('#chart-recalls').scrollIntoView()", serde_json::json!([]));
    screenshot(&s, "analytics-recall");

    // The most recalled memory opens in the memory browser.
    let top = s.texts("#top li");
    assert!(top[0].starts_with("Pet: v a quokka called Pip") && top[0].ends_with("2 times"), "{top:?}");
    s.click(&s.find("#top li button"));
    let opened = s.wait_for("the memory", |s| s.all("#detail h2").first().map(|e| s.text(e)));
    assert_eq!(opened, "Pet: v a quokka called Pip");
    let _ = quokka;

    // Health: the near-duplicates, previewed (nothing changes), applied, then one brought back.
    s.click(&s.find("#nav-analytics"));
    let dup = s.wait_for("health", |s| s.all("#health-duplicates").first().map(|e| s.text(e)));
    assert!(
        dup.contains("1 group of memories that say almost the same thing") && dup.contains("expires 1 other"),
        "{dup}"
    );
    s.click(&s.find("#preview-merge_duplicates"));
    let summary = s.wait_for("the preview", |s| s.all("#preview-summary").first().map(|e| s.text(e)));
    assert_eq!(
        summary,
        "1 group of near-duplicates: one memory of each is kept; 1 memory would be expired and linked to it (restorable)."
    );
    let change = s.text(&s.find("#preview li"));
    assert!(
        change.contains("expired as a near-duplicate of “Ana: I started working at the harbour office in March”"),
        "{change}"
    );
    let _ = first;
    s.execute("document.querySelector('#health').scrollIntoView()", serde_json::json!([]));
    screenshot(&s, "analytics-health");
    s.click(&s.find("#apply"));
    let done = s.wait_for("the fix", |s| s.all("#optimized").first().map(|e| s.text(e)));
    assert!(done.contains("memories in use 7 → 6") && done.contains("near-duplicates 1 → 0"), "{done}");
    assert!(
        done.starts_with("Done: 1 group of near-duplicates: one memory of each is kept; 1 memory was expired"),
        "{done}"
    );
    let memories = s.wait_for("the cards again", |s| {
        let t = s.text(&s.find("#card-memories"));
        t.contains("1 expired").then_some(t)
    });
    assert!(memories.starts_with("7 memories"), "{memories}");

    // The merged memory, from today's expiries, opened and brought back.
    s.click(&s.find("#chart-moves summary"));
    let expired =
        s.wait_for("today's moves", |s| s.all("#chart-moves tbody tr td:nth-child(4) button").first().cloned());
    s.click(&expired);
    let drilled = s.wait_for("the expired", |s| {
        let t = s.texts("#drilled li");
        (!t.is_empty()).then_some(t)
    });
    assert!(drilled[0].contains("harbour office") && drilled[0].contains("near-duplicate of"), "{drilled:?}");
    s.click(&s.find("#drilled li button"));
    let put_away = s.wait_for("the put-away memory", |s| s.all("#put-away").first().map(|e| s.text(e)));
    assert!(put_away.starts_with("Expired on "), "{put_away}");
    s.click(&s.find("#revive"));
    s.wait_for("it back", |s| s.all("#put-away").is_empty().then_some(()));

    // Settings: usage records kept for 30 days from now on (in the settings file), then
    // cleared; the analytics screen has no recall left to show.
    s.click(&s.find("#nav-settings"));
    let days = s.wait_for("the usage records", |s| s.all("#usage-days").first().cloned());
    s.clear(&days);
    s.type_into(&days, "30\u{E004}"); // then Tab: saved as the field is left
    let saved = db.with_file_name("settings.json");
    s.wait_for("the saved days", |_| {
        let text = std::fs::read_to_string(&saved).unwrap_or_default();
        text.contains("\"days\": 30").then_some(())
    });
    s.click(&s.find("#usage-clear"));
    let cleared = s.wait_for("the clearing", |s| s.all("#usage-cleared").first().map(|e| s.text(e)));
    assert_eq!(cleared, "Deleted the records of 4 searches and prompts.");
    s.click(&s.find("#nav-analytics"));
    let recalls = s.wait_for("the cards", |s| s.all("#card-recalls").first().map(|e| s.text(e)));
    assert!(recalls.starts_with("0 recalls"), "{recalls}");
    s.end();
}
