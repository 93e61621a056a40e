//! Analytics' usage records: every recall for a search or a prompt is recorded with what it
//! found and what went into the prompt; the metrics read them; forgetting a memory deletes the
//! records of the recalls that found it, so its words are in no byte of the file; the records
//! age out and can be cleared.

use strata_api::{ContextParams, Target};
use strata_core::Filter;
use strata_core::analytics::{Bucket, Range};

use crate::{Db, fact};

fn prompt(message: &str) -> ContextParams {
    ContextParams {
        model: "gpt-4o".into(),
        message: message.into(),
        system: None,
        history: vec![],
        history_summary: None,
        budget: Some(300),
        filter: Filter::default(),
        placement: None,
        concepts: None,
        without_past_answers: false,
        datasets: vec![],
    }
}

#[test]
fn recalls_are_recorded_measured_forgotten_with_their_memory_aged_out_and_cleared() {
    let db = Db::new();
    let mut e = db.engine("ana", None);
    let tea = e.add(fact("tea", "quokkazanzibar oolong every morning")).unwrap().id;
    e.add(fact("bike", "a red bicycle called Rocket")).unwrap();
    e.add(fact("never", "asked about")).unwrap();
    e.recall("quokkazanzibar", Filter::default(), 5).unwrap();
    e.recall("quokkazanzibar oolong", Filter::default(), 5).unwrap();
    e.recall("submarine", Filter::default(), 5).unwrap();
    let context = e.build_context(prompt("What is Rocket, my red bicycle?")).unwrap();
    assert!(!context.report.included.is_empty());

    let m = e.recall_metrics(&Range::default()).unwrap();
    assert_eq!((m.recalls, m.searches, m.prompts), (4, 3, 1), "{m:?}");
    assert_eq!(m.found, 3, "the submarine found nothing: {m:?}");
    assert_eq!(m.no_result, vec![("submarine".to_string(), 1)]);
    assert_eq!(m.top[0], (tea.clone(), 2), "tea was recalled twice: {m:?}");
    assert!(m.in_prompt >= 1 && m.in_prompt <= m.recalled, "{m:?}");
    assert!(m.never_recalled >= 1, "one fact was never asked about: {m:?}");
    assert!(m.latency_p95_ms >= m.latency_p50_ms && m.latency_p50_ms > 0.0, "{m:?}");
    assert_eq!(m.series.len(), 1);
    assert_eq!((m.series[0].start.as_str(), m.series[0].recalls, m.series[0].found), ("2026-01-31", 4, 3));
    let weekly = e.recall_metrics(&Range { bucket: Bucket::Week, ..Range::default() }).unwrap();
    assert_eq!(weekly.series[0].start, "2026-01-26");
    // The best results' mean score (no embedder here: no similarity), and what made each
    // result's score.
    assert!(m.series[0].score.is_some_and(|s| s >= 1.0) && m.series[0].boost.is_some(), "{m:?}");
    assert_eq!(m.series[0].similarity, None, "no vectors, no closeness in meaning: {m:?}");
    let asked = e.drill_recalls(&Range::default(), false, Some("quokkazanzibar"), 10).unwrap();
    let hit = &asked[0].hits[0];
    let parts = hit.parts.expect("parts recorded");
    assert!((parts.matched + parts.boost() - hit.score).abs() < 1e-9, "the parts sum to the score: {hit:?}");
    assert!(parts.matched > 0.0, "{parts:?}");
    // The prompt's use of its budget: by model and section, and what was left out.
    let u = e.utilization_metrics(&Range::default()).unwrap();
    assert_eq!(u.prompts, 1, "{u:?}");
    let gpt = &u.by_model["gpt-4o"];
    assert_eq!((gpt.prompts, gpt.budget), (1, 300.0), "{u:?}");
    assert_eq!(gpt.used, context.report.used as f64);
    assert!((u.utilization - context.report.used as f64 / 300.0).abs() < 1e-9, "{u:?}");
    let facts = context.report.sections[&strata_context::Section::Facts].tokens as f64;
    assert_eq!(u.sections["facts"], facts, "{u:?}");
    assert_eq!(u.dropped.values().sum::<u64>() as usize, context.report.dropped.len(), "{u:?}");
    assert_eq!((u.series.len(), u.series[0].prompts), (1, 1));
    // Another person's records are theirs.
    assert_eq!(db.engine("bo", None).recall_metrics(&Range::default()).unwrap().recalls, 0);

    // Forgetting the tea deletes the records of the recalls that found it: its word is gone.
    e.forget(&Target::new(tea.clone())).unwrap();
    let m = e.recall_metrics(&Range::default()).unwrap();
    assert_eq!(m.recalls, 2, "{m:?}");
    assert!(m.top.iter().all(|(id, _)| *id != tea));
    let path = db.dir.path().join("s.db");
    drop(e);
    strata_api::Engine::finish_scrub(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(!bytes.windows(14).any(|w| w == b"quokkazanzibar"), "the forgotten word is in no byte of the file");

    // After the retention period a recall's record goes; and records can be cleared.
    let mut e = db.engine("ana", None);
    db.clock.advance(chrono::Duration::days(91));
    e.recall("bicycle", Filter::default(), 5).unwrap();
    let m = e.recall_metrics(&Range::default()).unwrap();
    assert_eq!(m.recalls, 1, "older than 90 days: gone; {m:?}");
    assert_eq!(e.clear_recall_records().unwrap(), 1);
    assert_eq!(e.recall_metrics(&Range::default()).unwrap().recalls, 0);
    // An engine that keeps no records keeps none.
    let opts = strata_api::EngineOptions { user_id: "ana".into(), recall_records_days: None, ..Default::default() };
    let mut quiet = strata_api::Engine::open_with_clock(&path, opts, db.clock.clone()).unwrap();
    quiet.recall("bicycle", Filter::default(), 5).unwrap();
    assert_eq!(quiet.recall_metrics(&Range::default()).unwrap().recalls, 0);
}

/// While another writer holds the lock (a large file being kept), a search and the periodic
/// flush never wait for it: the search's record and the accesses are written once it is free.
#[test]
fn a_search_never_waits_for_another_writer_and_its_records_follow() {
    let db = Db::new();
    let mut e = db.engine("ana", None);
    let pixel = e.add(fact("pixel", "a grey tabby cat")).unwrap().id;
    let mut other = strata_core::Store::open(db.dir.path().join("s.db")).unwrap();
    let writing = other.write().unwrap();
    let started = std::time::Instant::now();
    assert_eq!(e.searched("grey tabby", Filter::default(), 10).unwrap(), 1);
    db.clock.advance(chrono::Duration::seconds(5));
    assert_eq!(e.flush_due().unwrap(), 0, "the accesses wait");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "waited {:?}", started.elapsed());
    assert_eq!(db.engine("ana", None).recall_metrics(&Range::default()).unwrap().recalls, 0);
    drop(writing);
    assert_eq!(e.flush_due().unwrap(), 1, "the accesses are written once the lock is free");
    let m = db.engine("ana", None).recall_metrics(&Range::default()).unwrap();
    assert_eq!((m.recalls, m.searches), (1, 1), "the search's record follows");
    let seen = e.get(&Target::new(&pixel), None).unwrap();
    assert_eq!(seen.access_count, 1);
}
