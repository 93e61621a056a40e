//! `strata train`: the demo trains, evaluates and registers an adapter; the registry commands
//! activate it (the on-device model then answers with it) and roll it back; bad ids and bad
//! settings fail cleanly.

use crate::Env;

#[test]
fn the_demo_trains_an_adapter_that_is_activated_used_and_rolled_back() {
    let e = Env::new();
    // One short epoch of SmolLM2 keeps the suite quick; docs/benchmarks.md has the full runs'
    // figures, the model that answers (Qwen2.5-Coder-0.5B) among them.
    let r = e.json(&[
        "train",
        "demo",
        "--model",
        "smollm2-135m",
        "--epochs",
        "1",
        "--replay",
        "4",
        "--min-recall",
        "0",
        "--margin",
        "5",
    ]);
    assert_eq!(r["facts"], 20);
    for k in ["recall_with_adapter", "recall_without", "recall_with_retrieval", "perplexity_base", "perplexity_adapter"]
    {
        assert!(r[k].as_f64().is_some_and(|x| x.is_finite() && x >= 0.0), "{k}: {r}");
    }
    assert!(r["train_seconds"].as_f64().unwrap() > 0.0);
    let bytes = r["adapter_bytes"].as_u64().unwrap();
    assert!((100_000..10_000_000).contains(&bytes), "{bytes} bytes");
    let id = r["adapter"].as_str().unwrap().to_string();

    let list = e.json(&["train", "list"]);
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["status"], "candidate");
    assert_eq!(list[0]["sources"].as_array().unwrap().len(), 5, "the five concepts it was trained from");
    let show = e.json(&["train", "show", &id]);
    let kinds: Vec<&str> = show["history"].as_array().unwrap().iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["trained", "evaluated"]);
    assert_eq!(show["adapter"]["metrics"]["questions"], 60);
    assert_eq!(show["adapter"]["base_model"], "SmolLM2-135M-Instruct.Q4_1", "the model it was trained for");

    assert!(e.ok(&["train", "activate", &id]).contains("is active"));
    let asked = e.json(&["ask", "I forgot Maya Chen's dog's name. What is it?", "--no-record"]);
    assert!(asked["model"].as_str().unwrap().ends_with(&format!("+{id}")), "the active adapter is applied: {asked}");
    let shown = e.ok(&["train", "show", &id]);
    assert!(shown.contains("Alone in use, 60 of its 60 check questions would reach it"), "{shown}");
    let beside = e.ok(&["train", "activate", &id, "--alongside"]);
    assert!(beside.contains("is in use beside the others (1 in all)"), "{beside}");
    assert!(e.err(&["train", "rollback", "ad_nope"]).contains("adapter ad_nope is not in use"));
    assert!(e.ok(&["train", "rollback"]).contains("no adapter is active"));
    let asked = e.json(&["ask", "What is two plus three?", "--no-record"]);
    assert!(!asked["model"].as_str().unwrap().contains("+ad_"), "{asked}");

    // The run that made it, as the Training screen lists it; a finished run is not resumed.
    let runs = e.json(&["train", "runs"]);
    assert_eq!(runs[0]["status"], "finished", "{runs}");
    assert_eq!(runs[0]["adapter_id"], id.as_str());
    assert_eq!(runs[0]["interrupted"], false);
    let run = runs[0]["id"].as_str().unwrap().to_string();
    let listed = e.ok(&["train", "runs"]);
    assert!(listed.starts_with(&run) && listed.contains("finished") && listed.contains(&format!("→ {id}")), "{listed}");
    assert!(e.err(&["train", "resume", &run]).contains("has finished; start a new one"));
    assert!(e.err(&["train", "resume", "run_nope"]).contains("no training run run_nope"));
    // The report and history in words, as the window says them.
    let shown = e.ok(&["train", "show", &id]);
    assert!(shown.contains("Passed: it answers") || shown.contains("Not good enough to use:"), "{shown}");
    assert!(
        shown.contains("evaluated  passed the evaluation") || shown.contains("did not pass the evaluation"),
        "{shown}"
    );
    assert!(shown.contains("trained  ") && shown.contains(" steps in "), "{shown}");

    assert!(e.err(&["train", "activate", "ad_nope"]).contains("no adapter ad_nope"));
    assert!(e.err(&["train", "rollback"]).contains("nothing to roll back"));
    assert!(e.err(&["train", "run", "--lr", "7"]).contains("learning rate"));
    assert!(e.err(&["train", "run", "--targets", "q,wings"]).contains("'wings' is not a projection"));
}

/// Curation on the command line: flag, list with reasons, approve and reject with a note, see
/// why, build the approved memories' training set; a changed memory leaves the queue.
#[test]
fn candidates_are_flagged_decided_and_their_training_set_built() {
    let e = Env::new();
    let add = |key: &str, fact: &str, importance: &str| {
        e.json(&["add", "semantic", key, "--fact", fact, "--importance", importance, "--tier", "long"])["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let dog = add("maya_chen", "dog=Biscuit", "0.9");
    let tea = add("tea", "likes=oolong", "0.7");
    add("bike", "colour=blue", "0.2");
    for _ in 0..3 {
        e.ok(&["recall", "Maya Chen dog"]);
        e.ok(&["recall", "tea oolong"]);
        e.ok(&["recall", "bike colour"]);
    }
    let later = "2026-03-01T12:00:00Z";
    let at = |args: &[&str]| {
        let r = e.run_at(args, &e.db(), None, later);
        assert_eq!(r.code, 0, "strata {args:?}: {}", r.stderr);
        r.stdout
    };
    let flagged = at(&["train", "flag"]);
    assert!(flagged.starts_with("Looked at 3 facts and procedures: 2 meet the criteria — 2 new"), "{flagged}");
    let listed = at(&["train", "candidates"]);
    assert!(listed.starts_with("2 waiting, 0 approved, 0 rejected."), "{listed}");
    assert!(listed.contains("Importance 0.90 (at least 0.60)") && listed.contains("maya chen"), "{listed}");
    assert!(!listed.contains("bike"), "{listed}");

    at(&["train", "approve", &dog, "--note", "her dog, for sure"]);
    let rejected = at(&["train", "reject", &tea]);
    assert!(rejected.starts_with("Rejected: tea"), "{rejected}");
    let json: serde_json::Value =
        serde_json::from_str(&at(&["train", "candidates", "--status", "approved", "--json"])).unwrap();
    assert_eq!(json["candidates"][0]["memory"]["id"], dog.as_str());
    assert_eq!(json["candidates"][0]["decided_by"], "cli");
    assert_eq!(json["candidates"][0]["note"], "her dog, for sure");
    let why = at(&["train", "why", &dog]);
    assert!(why.contains("flagged: score") && why.contains("approved by cli: “her dog, for sure”"), "{why}");

    let set: serde_json::Value =
        serde_json::from_str(&at(&["train", "dataset", "--approved", "--replay", "0", "--json"])).unwrap();
    assert_eq!(set["facts"], 1, "only the approved memory: {set}");
    // One concept's approved memories, for an adapter of that topic: none of them in this one.
    let r = e.run_at(&["train", "dataset", "--approved", "--concept", "Holidays"], &e.db(), None, later);
    assert!(r.stderr.contains("no approved candidate belongs to the concept Holidays"), "{}", r.stderr);

    // Its examples, read and edited as on the Training set tab.
    let shown = at(&["train", "examples"]);
    assert!(shown.contains(&format!("({dog})")) && shown.contains("Q: ") && shown.contains("[check]"), "{shown}");
    let examples: serde_json::Value = serde_json::from_str(&at(&["train", "examples", "--json"])).unwrap();
    assert_eq!(examples["memories"][0]["edited"], false);
    let mut mine = examples["memories"][0]["examples"].clone();
    mine.as_array_mut().unwrap().truncate(2);
    mine[0]["question"] = "What do we call Maya Chen's dog?".into();
    let file = e.db().with_file_name("examples.json");
    std::fs::write(&file, mine.to_string()).unwrap();
    let kept = at(&["train", "examples", &dog, "--set", file.to_str().unwrap()]);
    assert!(kept.starts_with("Kept your 2 examples for"), "{kept}");
    let examples: serde_json::Value = serde_json::from_str(&at(&["train", "examples", "--json"])).unwrap();
    assert_eq!(examples["memories"][0]["edited"], true);
    assert_eq!(examples["memories"][0]["examples"][0]["question"], "What do we call Maya Chen's dog?");
    std::fs::write(&file, "[{\"question\": 3}]").unwrap();
    let r = e.run_at(&["train", "examples", &dog, "--set", file.to_str().unwrap()], &e.db(), None, later);
    assert!(r.stderr.contains("is not a list of examples"), "{}", r.stderr);
    assert!(at(&["train", "examples", &dog, "--reset"]).contains("taught with the examples made from it again"));
    let examples: serde_json::Value = serde_json::from_str(&at(&["train", "examples", "--json"])).unwrap();
    assert_eq!(examples["memories"][0]["edited"], false);

    // An edit takes the memory out of the queue until flagging looks at it again.
    at(&["update", &dog, "--importance", "0.95"]);
    let listed = at(&["train", "candidates"]);
    assert!(listed.contains("1 memory changed since flagged"), "{listed}");
    let r = e.run_at(&["train", "approve", &dog], &e.db(), None, later);
    assert!(r.stderr.contains("changed after it was flagged"), "{}", r.stderr);
    assert!(e.err(&["train", "approve", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]).contains("no memory"));

    // Maintenance flags after it moves memories: a fact that qualifies meanwhile is listed.
    add("desk", "wood=oak", "0.8");
    for _ in 0..3 {
        e.ok(&["recall", "desk oak"]);
    }
    let r = e.run_at(&["maintain"], &e.db(), None, later);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("Training candidates: 1 new"), "{}", r.stderr);
}
