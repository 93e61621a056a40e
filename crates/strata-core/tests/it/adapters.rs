//! The adapter registry: provenance and status kept in the store, an event per change, at most
//! one active, rollback to the one before, retiring by a person, and forgetting a source memory
//! retires an adapter and deletes its files (and the sets and checkpoints beside the database).

use crate::support::*;
use strata_core::*;

fn new_adapter(f: &Fixture, sources: &[&Memory], dir: &std::path::Path) -> NewAdapter {
    let id = f.store.new_adapter_id();
    let path = dir.join(&id);
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("adapter_model.safetensors"), b"weights").unwrap();
    NewAdapter {
        id,
        base_model: "SmolLM2-135M-Instruct.Q4_1".into(),
        base_hash: "ab".repeat(32),
        dataset_hash: "cd".repeat(32),
        sources: sources.iter().map(|m| m.id.to_string()).collect(),
        hyperparameters: serde_json::json!({ "rank": 8, "alpha": 16.0 }),
        path,
        bytes: 7,
        trained: serde_json::json!({ "steps": 40 }),
    }
}

#[test]
fn adapters_are_registered_evaluated_activated_and_rolled_back_with_their_history() {
    let mut f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let rex = f.add(concept("rex", &[("owner", "Maya")]));
    let a = f.store.register_adapter(new_adapter(&f, &[&rex], dir.path())).unwrap();
    assert_eq!((a.status, a.passed, a.sources.clone()), (AdapterStatus::Candidate, None, vec![rex.id.to_string()]));
    assert_eq!(a.hyperparameters["rank"], 8);

    // Not evaluated: refused unless forced. Failed: refused unless forced.
    let err = f.store.activate_adapter(&a.id, false).unwrap_err().to_string();
    assert!(err.contains("not been evaluated"), "{err}");
    f.store.record_evaluation(&a.id, &serde_json::json!({ "recall_with_adapter": 0.9 }), true).unwrap();
    f.tick(1);
    let b = f.store.register_adapter(new_adapter(&f, &[&rex], dir.path())).unwrap();
    f.store.record_evaluation(&b.id, &serde_json::json!({ "recall_with_adapter": 0.1 }), false).unwrap();
    let err = f.store.activate_adapter(&b.id, false).unwrap_err().to_string();
    assert!(err.contains("--force"), "{err}");
    assert!(f.store.adapter("ad_nope").unwrap_err().to_string().contains("no adapter ad_nope"));

    // A, then B (forced): A steps back to candidate; one active at a time.
    assert_eq!(f.store.activate_adapter(&a.id, false).unwrap().status, AdapterStatus::Active);
    f.store.activate_adapter(&b.id, true).unwrap();
    assert_eq!(ids(&f.store.adapters_in_use().unwrap()), vec![b.id.clone()]);
    assert_eq!(f.store.adapter(&a.id).unwrap().status, AdapterStatus::Candidate);
    let listed: Vec<String> = f.store.adapters().unwrap().into_iter().map(|x| x.id).collect();
    assert_eq!(listed, vec![b.id.clone(), a.id.clone()], "newest first");

    // Rollback retires B and restores A; again retires A and leaves none.
    assert_eq!(ids(&f.store.rollback_adapter(None, "a test").unwrap()), vec![a.id.clone()]);
    assert_eq!(f.store.adapter(&b.id).unwrap().status, AdapterStatus::Retired);
    assert!(f.store.rollback_adapter(None, "a test").unwrap().is_empty());
    assert!(f.store.adapters_in_use().unwrap().is_empty());
    assert!(f.store.rollback_adapter(None, "a test").unwrap_err().to_string().contains("nothing to roll back"));
    assert!(f.store.activate_adapter(&b.id, true).unwrap_err().to_string().contains("retired"));

    let kinds: Vec<String> = f.store.adapter_history(&a.id).unwrap().into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds, ["trained", "evaluated", "activated", "deactivated", "activated", "rolled_back"]);
    let kinds: Vec<String> = f.store.adapter_history(&b.id).unwrap().into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds, ["trained", "evaluated", "activated", "rolled_back"]);

    // A person retires one not in use, for good; the one in use is refused; files stay, even
    // after a later forget (only adapters retired by a forget lose theirs).
    f.tick(1);
    let c = f.store.register_adapter(new_adapter(&f, &[&rex], dir.path())).unwrap();
    f.store.record_evaluation(&c.id, &serde_json::json!({ "recall_with_adapter": 0.9 }), true).unwrap();
    f.store.activate_adapter(&c.id, false).unwrap();
    assert!(f.store.retire_adapter(&c.id).unwrap_err().to_string().contains("roll it back first"));
    f.store.rollback_adapter(None, "a test").unwrap();
    f.tick(1);
    let d = f.store.register_adapter(new_adapter(&f, &[&rex], dir.path())).unwrap();
    assert_eq!(f.store.retire_adapter(&d.id).unwrap().status, AdapterStatus::Retired);
    assert!(f.store.activate_adapter(&d.id, true).unwrap_err().to_string().contains("retired"));
    let last = f.store.adapter_history(&d.id).unwrap().pop().unwrap();
    assert_eq!((last.kind.as_str(), last.detail["reason"].as_str()), ("retired", Some("retired by a person")));
    let other = f.add(concept("other", &[("x", "y")]));
    f.store.forget(other.id, &user()).unwrap();
    assert!(d.path.exists(), "a forget elsewhere leaves a person-retired adapter's files");
}

fn ids(adapters: &[AdapterRecord]) -> Vec<String> {
    adapters.iter().map(|a| a.id.clone()).collect()
}

fn passed(f: &mut Fixture, sources: &[&Memory], dir: &std::path::Path, base: &str) -> AdapterRecord {
    f.tick(1);
    let a = f.store.register_adapter(NewAdapter { base_model: base.into(), ..new_adapter(f, sources, dir) }).unwrap();
    f.store.record_evaluation(&a.id, &serde_json::json!({ "recall_with_adapter": 0.9 }), true).unwrap()
}

#[test]
fn several_adapters_are_in_use_at_once_on_one_model_and_each_rolls_back_alone() {
    let mut f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let rex = f.add(concept("rex", &[("owner", "Maya")]));
    let qwen = "qwen2.5-coder-0.5b";
    let (a, b, c) = (
        passed(&mut f, &[&rex], dir.path(), qwen),
        passed(&mut f, &[&rex], dir.path(), qwen),
        passed(&mut f, &[&rex], dir.path(), qwen),
    );
    f.store.activate_adapter(&a.id, false).unwrap();
    f.store.use_alongside(&b.id, false).unwrap();
    assert_eq!(ids(&f.store.adapters_in_use().unwrap()), [a.id.clone(), b.id.clone()], "in the order put in use");
    // Another model's adapter cannot join them: one model answers.
    let smol = passed(&mut f, &[&rex], dir.path(), "smollm2-135m");
    let err = f.store.use_alongside(&smol.id, false).unwrap_err().to_string();
    assert!(err.contains("trained on smollm2-135m") && err.contains(qwen), "{err}");
    // Unnamed, a rollback among several is refused; named, it takes out that one only.
    let err = f.store.rollback_adapter(None, "a test").unwrap_err().to_string();
    assert!(err.contains("2 adapters are in use") && err.contains(&a.id), "{err}");
    assert!(f.store.rollback_adapter(Some(&c.id), "a test").unwrap_err().to_string().contains("not in use"));
    assert!(f.store.rollback_adapter(Some(&a.id), "its check fell").unwrap().is_empty());
    assert_eq!(ids(&f.store.adapters_in_use().unwrap()), vec![b.id.clone()]);
    let last = f.store.adapter_history(&a.id).unwrap().pop().unwrap();
    assert_eq!((last.kind.as_str(), last.detail["why"].as_str()), ("rolled_back", Some("its check fell")));
    // Used instead (not alongside): every adapter in use steps back, and comes back on rollback.
    f.store.use_alongside(&c.id, false).unwrap();
    f.store.activate_adapter(&smol.id, false).unwrap();
    assert_eq!(ids(&f.store.adapters_in_use().unwrap()), vec![smol.id.clone()]);
    let back = f.store.rollback_adapter(None, "a test").unwrap();
    assert_eq!(ids(&back), [b.id.clone(), c.id.clone()]);
    assert_eq!(ids(&f.store.adapters_in_use().unwrap()), vec![b.id.clone(), c.id.clone()]);
}

#[test]
fn an_adapters_answers_are_counted_by_day_with_what_people_said_and_forgetting_takes_them() {
    let mut f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let rex = f.add(concept("rex", &[("owner", "Maya")]));
    let a = passed(&mut f, &[&rex], dir.path(), "qwen2.5-coder-0.5b");
    let (good, bad) = (f.add(concept("answer1", &[("x", "y")])), f.add(concept("answer2", &[("x", "z")])));
    f.store.record_adapter_answer(&a.id, 0.8, Some(&good.id.to_string())).unwrap();
    f.store.record_adapter_answer(&a.id, 0.7, Some(&bad.id.to_string())).unwrap();
    f.store.record_adapter_answer(&a.id, 0.9, None).unwrap();
    f.store.record_feedback("default", good.id, strata_core::analytics::About::Answer, true).unwrap();
    f.store.record_feedback("default", bad.id, strata_core::analytics::About::Answer, true).unwrap();
    f.store.record_feedback("default", bad.id, strata_core::analytics::About::Answer, false).unwrap();
    f.tick(86_400);
    f.store.record_adapter_answer(&a.id, 0.75, None).unwrap();
    let days = f.store.adapter_days(&a.id).unwrap();
    assert_eq!(days.len(), 2, "{days:?}");
    assert_eq!((days[0].chosen, days[0].helpful, days[0].wrong), (3, 1, 1), "an answer's latest mark counts");
    assert_eq!((days[1].chosen, days[1].helpful, days[1].wrong), (1, 0, 0));
    assert!(f.store.record_adapter_answer("ad_nope", 0.9, None).unwrap_err().to_string().contains("no adapter"));
    // Forgetting an answer takes its row.
    f.store.forget(bad.id, &user()).unwrap();
    let days = f.store.adapter_days(&a.id).unwrap();
    assert_eq!((days[0].chosen, days[0].wrong), (2, 0));

    let first = f.store.log_schedule("looked", None, &serde_json::json!({ "new_facts": 3 })).unwrap();
    f.store.log_schedule("trained", Some(&a.id), &serde_json::json!({ "facts": 20 })).unwrap();
    let log = f.store.schedule_log(10).unwrap();
    assert_eq!(log.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(), ["trained", "looked"], "newest first");
    assert_eq!((log[1].seq, log[1].detail["new_facts"].as_i64()), (first, Some(3)));
    assert_eq!(log[0].adapter_id.as_deref(), Some(a.id.as_str()));
}

#[test]
fn forgetting_a_source_memory_retires_the_adapter_and_deletes_its_files() {
    let mut f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let rex = f.add(concept("rex", &[("owner", "Quillbrandt")]));
    let tea = f.add(concept("tea", &[("likes", "green")]));
    let from_rex = f.store.register_adapter(new_adapter(&f, &[&rex, &tea], dir.path())).unwrap();
    let from_tea = f.store.register_adapter(new_adapter(&f, &[&tea], dir.path())).unwrap();
    // Its report quotes the fact, question by question.
    let report = serde_json::json!({"recall_with_adapter": 1.0, "rows": [
        {"question": "Who owns Rex?", "expected": "Quillbrandt", "with_adapter": "Quillbrandt owns Rex."}]});
    f.store.record_evaluation(&from_rex.id, &report, true).unwrap();
    f.store.activate_adapter(&from_rex.id, false).unwrap();

    let outcome = f.store.forget(rex.id, &user()).unwrap();
    assert_eq!(outcome.retired_adapters, vec![from_rex.id.clone()], "the forget says what it retired");
    let gone = f.store.adapter(&from_rex.id).unwrap();
    assert_eq!(gone.status, AdapterStatus::Retired);
    assert!(!gone.path.exists(), "the adapter's files hold what it learned: they must go");
    assert!(f.store.adapters_in_use().unwrap().is_empty());
    let last = f.store.adapter_history(&from_rex.id).unwrap().pop().unwrap();
    assert_eq!((last.kind.as_str(), last.detail["memory"].as_str()), ("retired", Some(rex.id.to_string().as_str())));
    // Its report keeps its numbers, not the questions and answers that quote the fact: the
    // forgotten word is in no byte of the file.
    let metrics = gone.metrics.expect("still evaluated");
    assert_eq!((metrics["recall_with_adapter"].as_f64(), metrics.get("rows")), (Some(1.0), None), "{metrics}");
    let bytes = std::fs::read(f.path()).unwrap();
    assert!(!bytes.windows(11).any(|w| w == b"Quillbrandt"), "the forgotten fact is in no byte of the file");
    // A training set written beside the database that names it goes too; one that does not stays.
    let sets = f.path().with_extension("adapters").join("datasets");
    std::fs::create_dir_all(&sets).unwrap();
    let line = |id: &str| format!("{{\"question\": \"Who?\", \"answer\": \"them\", \"sources\": [\"{id}\"]}}\n");
    let bike = f.add(concept("bike", &[("colour", "red")]));
    std::fs::write(sets.join("bike.jsonl"), line(&bike.id.to_string())).unwrap();
    std::fs::write(sets.join("tea.jsonl"), line(&tea.id.to_string())).unwrap();
    // A run's checkpoints are named as its set.
    let checkpoints = f.path().with_extension("adapters").join("checkpoints");
    for name in ["bike", "tea"] {
        std::fs::create_dir_all(checkpoints.join(name)).unwrap();
        std::fs::write(checkpoints.join(name).join("lora.safetensors"), b"learned").unwrap();
    }
    f.store.forget(bike.id, &user()).unwrap();
    assert!(!sets.join("bike.jsonl").exists(), "a training set quoting a forgotten memory is deleted");
    assert!(!checkpoints.join("bike").exists(), "and the checkpoints of a run on it");
    assert!(sets.join("tea.jsonl").exists());
    assert!(checkpoints.join("tea").exists());
    // An adapter not trained on it is untouched.
    let kept = f.store.adapter(&from_tea.id).unwrap();
    assert_eq!(kept.status, AdapterStatus::Candidate);
    assert!(kept.path.exists());
}

#[test]
fn a_resumed_run_redoes_the_steps_after_its_checkpoint_without_counting_them_twice() {
    use strata_core::runs::{NewRun, RunStatus, Step};
    let mut f = Fixture::new();
    let run = f
        .store
        .start_run(NewRun {
            user_id: "u".into(),
            settings: serde_json::json!({ "rank": 8 }),
            gate: None,
            dataset: "set.jsonl".into(),
            dataset_hash: "ab".repeat(32),
            sources: vec!["m1".into()],
        })
        .unwrap();
    let step = |n: u64, loss: f64| Step { step: n, steps: 5, loss, tokens_per_s: 40.0, eta_s: 1.0 };
    for n in 1..=4 {
        f.store.run_step(&run.id, step(n, n as f64)).unwrap();
    }
    // Killed after step 4; the checkpoint was at step 2: steps 3 to 5 again.
    f.store.resume_run(&run.id).unwrap();
    for n in 3..=5 {
        f.store.run_step(&run.id, step(n, n as f64 + 0.5)).unwrap();
    }
    let r = f.store.run(&run.id).unwrap();
    assert_eq!((r.status, r.step, r.steps), (RunStatus::Running, 5, 5));
    assert_eq!(r.losses, vec![1.0, 2.0, 3.5, 4.5, 5.5]);
    assert!(f.store.find_run("u", "run_none").unwrap().is_none());
    assert!(f.store.find_run("someone else", &run.id).unwrap().is_none(), "another person's run");
    assert_eq!(f.store.find_run("u", &run.id).unwrap().unwrap().id, run.id);
}
