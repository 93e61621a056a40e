//! `strata train`: the demo trains, evaluates and registers an adapter; the registry commands
//! activate it (the on-device model then answers with it) and roll it back; bad ids and bad
//! settings fail cleanly.

use crate::Env;

#[test]
fn the_demo_trains_an_adapter_that_is_activated_used_and_rolled_back() {
    let e = Env::new();
    // One short epoch keeps the suite quick; docs/benchmarks.md has the full run's figures.
    let r = e.json(&["train", "demo", "--epochs", "1", "--replay", "4", "--min-recall", "0", "--margin", "5"]);
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

    assert!(e.ok(&["train", "activate", &id]).contains("is active"));
    let asked = e.json(&["ask", "I forgot Maya Chen's dog's name. What is it?", "--no-record"]);
    assert!(asked["model"].as_str().unwrap().ends_with(&format!("+{id}")), "the active adapter is applied: {asked}");
    assert!(e.ok(&["train", "rollback"]).contains("no adapter is active"));
    let asked = e.json(&["ask", "What is two plus three?", "--no-record"]);
    assert!(!asked["model"].as_str().unwrap().contains("+ad_"), "{asked}");

    assert!(e.err(&["train", "activate", "ad_nope"]).contains("no adapter ad_nope"));
    assert!(e.err(&["train", "rollback"]).contains("nothing to roll back"));
    assert!(e.err(&["train", "run", "--lr", "7"]).contains("learning rate"));
    assert!(e.err(&["train", "run", "--targets", "q,wings"]).contains("'wings' is not a projection"));
}
