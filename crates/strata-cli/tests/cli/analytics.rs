//! `strata analytics`: what the store holds and what changed, in words and as JSON.

use crate::Env;

#[test]
fn analytics_says_what_the_store_holds_and_what_changed() {
    let e = Env::new();
    e.json(&["add", "semantic", "tea", "--fact", "likes=oolong", "--tag", "drinks"]);
    e.json(&["add", "episodic", "--speaker", "Ana", "--text", "We adopted Pixel", "--at", "2026-01-02T09:00Z"]);
    let m = e.json(&["analytics"]);
    assert_eq!(m["memories"], 2, "{m}");
    assert_eq!(m["by_type"], serde_json::json!({"episodic": 1, "semantic": 1}));
    assert_eq!(m["by_app"], serde_json::json!({"cli": 2}));
    assert_eq!(m["tags"], serde_json::json!([["drinks", 1]]));
    assert_eq!(m["created"].as_array().unwrap().len(), 1, "both written today: {m}");
    assert_eq!(m["created"][0]["total"], 2);
    assert_eq!(m["moves"], serde_json::json!([]));

    let text = e.ok(&["analytics", "summary", "--by", "week"]);
    assert!(text.starts_with("2 memories (0 expired): episodes 1, facts 1\n"), "{text}");
    assert!(text.contains("Written by: cli 2") && text.contains("Tags: drinks 1"), "{text}");
    assert!(text.contains("Embedded: none yet"), "{text}");
    assert!(text.contains("Created:") && text.contains("WEEK FROM"), "{text}");
    assert!(text.contains("No tier moves in this range."), "{text}");
    let later = e.ok(&["analytics", "--since", "2100-01-01"]);
    assert!(later.contains("No memory created in this range.") && later.starts_with("2 memories"), "{later}");
    assert!(e.err(&["analytics", "--since", "the day after never"]).contains("the day after never"));

    // Recalls: none yet, then a search that finds the tea and one that finds nothing.
    assert_eq!(e.ok(&["analytics", "recalls"]).trim(), "No recall recorded in this range.");
    e.ok(&["recall", "oolong"]);
    e.ok(&["recall", "zeppelin"]);
    let r = e.json(&["analytics", "recalls"]);
    assert_eq!((r["recalls"].as_u64(), r["found"].as_u64()), (Some(2), Some(1)), "{r}");
    assert_eq!(r["no_result"], serde_json::json!([["zeppelin", 1]]));
    let text = e.ok(&["analytics", "recalls"]);
    assert!(text.starts_with("2 recalls (2 searches, 0 for prompts); 1 found something (50%)"), "{text}");
    assert!(text.contains("Most recalled:\n") && text.contains("     1  tea: likes: oolong\n"), "{text}");
    assert!(text.contains("Searches that found nothing:\n     1  zeppelin"), "{text}");
    // A prompt built: its use of the budget.
    assert_eq!(e.ok(&["analytics", "utilization"]).trim(), "No prompt recorded in this range.");
    e.ok(&["context", "--model", "gpt-4o", "--query", "What tea do I like?", "--budget", "400"]);
    let text = e.ok(&["analytics", "utilization"]);
    assert!(
        text.starts_with("1 prompt used ") && text.contains("% of its budget on average") && text.contains("gpt-4o"),
        "{text}"
    );
    assert!(text.contains("Tokens per prompt, by section: ") && text.contains("message "), "{text}");
    assert_eq!(e.ok(&["analytics", "clear"]).trim(), "Deleted the records of 3 recalls.");
    assert_eq!(e.json(&["analytics", "recalls"])["recalls"], 0);
}
