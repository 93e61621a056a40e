//! The schedule's decisions on a real store: an adapter better than retrieval and than the
//! adapters in use waits for a curator (ask) or is put in use (automatic); one that is not is
//! kept out, each reason recorded. And the daily check rolls back an adapter whose facts
//! changed under it, on the real model.

use std::sync::Arc;

use strata_api::schedule::Promotion;
use strata_api::{AddRequest, Engine, EngineOptions};
use strata_core::{ManualClock, NewAdapter};
use strata_train::Report;
use strata_train::schedule::{self, Looked};

fn report(recall: f64, retrieval: f64, passed: bool) -> Report {
    Report {
        facts: 2,
        questions: 6,
        recall_with_adapter: recall,
        recall_without: 0.0,
        recall_with_retrieval: retrieval,
        perplexity_base: 10.0,
        perplexity_adapter: 10.2,
        margin: 0.1,
        min_recall: 0.5,
        passed,
        reasons: if passed { vec![] } else { vec!["it answers 30% of its questions, below 50%".into()] },
        rows: vec![],
    }
}

/// A registered, evaluated adapter (its files are not read by the decisions).
fn adapter(e: &mut Engine, dir: &std::path::Path, r: &Report) -> String {
    let id = e.new_adapter_id();
    let path = dir.join(&id);
    std::fs::create_dir_all(&path).unwrap();
    let new = NewAdapter {
        id: id.clone(),
        base_model: "smollm2-135m".into(),
        base_hash: "ab".repeat(32),
        dataset_hash: "cd".repeat(32),
        sources: vec![],
        hyperparameters: serde_json::json!({}),
        path,
        bytes: 1,
        trained: serde_json::json!({}),
    };
    e.register_adapter(new).unwrap();
    e.record_evaluation(&id, &serde_json::to_value(r).unwrap(), r.passed).unwrap();
    id
}

fn kinds(e: &Engine) -> Vec<String> {
    e.schedule_log(50).unwrap().into_iter().rev().map(|x| x.kind).collect()
}

#[test]
fn a_better_adapter_waits_for_a_yes_or_is_promoted_and_a_worse_one_is_kept_out_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = Engine::open(&dir.path().join("s.db"), EngineOptions::default()).unwrap();

    // Ask: better than retrieval, nothing in use → it waits; the curator says yes.
    let first = adapter(&mut e, dir.path(), &report(0.9, 0.6, true));
    let looked = schedule::decide(&mut e, &first, &report(0.9, 0.6, true), Promotion::Ask).unwrap();
    assert_eq!(looked, Looked::AwaitingApproval { adapter: first.clone() });
    assert_eq!(schedule::awaiting(&e).unwrap().as_deref(), Some(first.as_str()));
    assert!(e.adapters_in_use().unwrap().is_empty(), "nothing is used before the yes");
    schedule::answer(&mut e, &first, true).unwrap();
    assert_eq!(e.adapters_in_use().unwrap()[0].id, first);
    assert_eq!(schedule::awaiting(&e).unwrap(), None);
    let err = schedule::answer(&mut e, &first, true).unwrap_err().message;
    assert!(err.contains("not waiting for your approval"), "{err}");

    // Worse than the adapter in use, or than retrieval, or failing its gate: kept out, why said.
    let worse = adapter(&mut e, dir.path(), &report(0.8, 0.6, true));
    let Looked::Kept { reasons, .. } =
        schedule::decide(&mut e, &worse, &report(0.8, 0.6, true), Promotion::Automatic).unwrap()
    else {
        panic!("a worse adapter was promoted")
    };
    assert_eq!(reasons, [format!("{first} in use answers more (90% against 80%)")]);
    let level = adapter(&mut e, dir.path(), &report(0.95, 0.95, true));
    let Looked::Kept { reasons, .. } =
        schedule::decide(&mut e, &level, &report(0.95, 0.95, true), Promotion::Automatic).unwrap()
    else {
        panic!("an adapter no better than retrieval was promoted")
    };
    assert_eq!(reasons, ["retrieval alone answered as many (95% by retrieval, 95% with it)"]);
    let failed = adapter(&mut e, dir.path(), &report(0.3, 0.1, false));
    let Looked::Kept { reasons, .. } =
        schedule::decide(&mut e, &failed, &report(0.3, 0.1, false), Promotion::Ask).unwrap()
    else {
        panic!("a failed adapter waits for a yes")
    };
    assert!(reasons[0].contains("below 50%"), "{reasons:?}");

    // Automatic: better than everything → in use at once, instead of the first.
    let better = adapter(&mut e, dir.path(), &report(0.95, 0.6, true));
    let looked = schedule::decide(&mut e, &better, &report(0.95, 0.6, true), Promotion::Automatic).unwrap();
    assert_eq!(looked, Looked::Promoted { adapter: better.clone() });
    assert_eq!(e.adapters_in_use().unwrap().iter().map(|a| a.id.clone()).collect::<Vec<_>>(), vec![better.clone()]);
    assert_eq!(kinds(&e), ["awaiting_approval", "approved", "kept", "kept", "kept", "promoted"]);
    let said: Vec<String> =
        e.schedule_log(50).unwrap().into_iter().map(|x| strata_train::views::entry_view(x).said).collect();
    assert_eq!(said[0], format!("Put {better} in use: it did better than what was in use and than looking facts up."));
    assert!(
        said.contains(&format!(
            "Did not use {level}: retrieval alone answered as many (95% by retrieval, 95% with it)."
        )),
        "{said:?}"
    );
}

#[test]
fn the_daily_check_rolls_back_an_adapter_whose_facts_changed_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
    let mut e = Engine::open_with_clock(&db, EngineOptions::default(), clock.clone()).unwrap();
    let dog = strata_core::Content::Semantic(strata_core::Concept {
        key: "maya_chen".into(),
        facts: [("dog's name".to_string(), strata_core::FactValue::Text("Biscuit".into()))].into_iter().collect(),
    });
    let id = e.add(AddRequest::new(dog)).unwrap().id;
    let memory = e.memory(&strata_api::Target::new(id.as_str())).unwrap();
    let chat = Arc::new(strata_models::LocalChat::load(&crate::model()).unwrap());
    let config = strata_train::TrainConfig { epochs: 1, replay: 0, ..Default::default() };
    let set = strata_train::dataset(&chat, &[memory], &config).unwrap();
    let plan = strata_train::pipeline::Plan { set: &set, config: &config, gate: None };
    let made = strata_train::pipeline::run(&mut e, &db, &chat, plan, &mut |_| {}, &Default::default()).unwrap().adapter;
    // Its gate asked for 50%; it is put in use as if it had passed.
    e.record_evaluation(&made.id, &serde_json::to_value(report(0.9, 0.6, true)).unwrap(), true).unwrap();
    e.activate_adapter(&made.id, false).unwrap();

    // The dog's name changes; a day later the check asks again: every answer is now wrong.
    let rename = vec![("dog's name".to_string(), strata_core::FactValue::Text("Pretzel".into()))];
    e.update(
        &strata_api::Target::new(id.as_str()),
        strata_api::UpdateRequest { set_facts: rename, ..Default::default() },
    )
    .unwrap();
    clock.advance(chrono::TimeDelta::hours(25));
    let checked = strata_train::views::check_if_due(&mut e, |_| Ok(chat.clone())).unwrap();
    assert_eq!(checked.len(), 1);
    assert!(checked[0].rolled_back && checked[0].recall < 0.5, "{checked:?}");
    assert!(e.adapters_in_use().unwrap().is_empty(), "rolled back");
    let last = e.adapter_history(&made.id).unwrap().pop().unwrap();
    assert_eq!(last.kind, "rolled_back");
    assert!(last.detail["why"].as_str().unwrap().contains("below its gate's 50%"), "{last:?}");
    assert_eq!(kinds(&e), ["rolled_back"]);
    assert!(
        checked[0].said().starts_with(&format!("Adapter {} was taken out of use", made.id)),
        "{}",
        checked[0].said()
    );
    // Nothing more is due the same day.
    assert!(strata_train::views::check_if_due(&mut e, |_| Ok(chat.clone())).unwrap().is_empty());
}

#[test]
fn a_look_yields_while_the_app_is_busy_and_the_next_one_resumes_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut e = Engine::open(&db, EngineOptions::default()).unwrap();
    let dog = strata_core::Content::Semantic(strata_core::Concept {
        key: "maya_chen".into(),
        facts: [("dog's name".to_string(), strata_core::FactValue::Text("Biscuit".into()))].into_iter().collect(),
    });
    let id = e.add(AddRequest::new(dog)).unwrap().id;
    // Approved by a curator, as the Training screen does (criteria that take it at once).
    let criteria = strata_api::curation::CandidateCriteria {
        min_importance: 0.0,
        min_recalls: 0,
        stable_days: 0,
        long_term_only: false,
        ..Default::default()
    };
    e.flag_candidates(&criteria, &mut |_, _| Ok(()), &Default::default()).unwrap();
    e.decide_candidates(&[id], strata_api::curation::Verdict::Approve, None).unwrap();
    let chat = strata_models::LocalChat::load(&crate::model()).unwrap();
    let settings = strata_api::schedule::ScheduleSettings { min_new_facts: 1, ..Default::default() };
    let config = strata_train::TrainConfig { epochs: 3, replay: 0, checkpoint_every: 1, ..Default::default() };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let look = |busy: &'static (dyn Fn() -> bool + Sync)| schedule::Look {
        settings: &settings,
        criteria: &criteria,
        db: &db,
        chat: &chat,
        config: &config,
        gate: strata_train::Gate { margin: 5.0, min_recall: 0.0 },
        busy,
        cancel: &cancel,
    };
    assert_eq!(schedule::look(&mut e, &look(&|| true)).unwrap(), Looked::Paused);
    let runs = e.training_runs(5).unwrap();
    assert_eq!(runs[0].status, strata_core::runs::RunStatus::Cancelled, "stopped, to resume");
    let looked = schedule::look(&mut e, &look(&|| false)).unwrap();
    assert!(matches!(looked, Looked::AwaitingApproval { .. } | Looked::Kept { .. }), "{looked:?}");
    let runs = e.training_runs(5).unwrap();
    assert_eq!(runs.len(), 1, "the same run went on: {runs:?}");
    assert_eq!(runs[0].status, strata_core::runs::RunStatus::Finished);
    assert_eq!(kinds(&e)[..4], ["looked", "paused", "looked", "trained"]);

    // Three uses within a minute make the app busy.
    let activity = schedule::Activity::default();
    activity.used();
    activity.used();
    assert!(!activity.busy());
    activity.used();
    assert!(activity.busy() && activity.idle_for() < std::time::Duration::from_secs(1));
}
