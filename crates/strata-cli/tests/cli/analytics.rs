//! `strata analytics`: what the store holds and what changed, in words and as JSON.

use crate::Env;

#[test]
fn analytics_says_what_the_store_holds_and_what_changed() {
    says_what_the_store_holds_and_what_changed(&Env::new());
}

#[test]
fn analytics_says_what_the_store_holds_and_what_changed_on_postgres() {
    says_what_the_store_holds_and_what_changed(&Env::postgres());
}

fn says_what_the_store_holds_and_what_changed(e: &Env) {
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
    assert!(text.contains("BEST'S CLOSENESS IN MEANING (QUARTILES)") && text.contains("BEST'S SCORE"), "{text}");
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

#[test]
fn analytics_narrows_exports_csv_and_finds_and_fixes_what_does_the_store_no_good() {
    narrows_exports_csv_and_finds_and_fixes_what_does_the_store_no_good(&Env::new());
}

#[test]
fn analytics_narrows_exports_csv_and_finds_and_fixes_what_does_the_store_no_good_on_postgres() {
    narrows_exports_csv_and_finds_and_fixes_what_does_the_store_no_good(&Env::postgres());
}

fn narrows_exports_csv_and_finds_and_fixes_what_does_the_store_no_good(e: &Env) {
    e.json(&["add", "semantic", "tea", "--fact", "likes=oolong"]);
    for text in ["We adopted Pixel the grey kitten today", "we adopted pixel, the grey kitten, today!"] {
        e.json(&["add", "episodic", "--speaker", "Ana", "--text", text, "--at", "2026-01-02T09:00Z"]);
    }
    // Narrowed to a type; a series as CSV with its header.
    assert_eq!(e.json(&["analytics", "--client", "cli"])["memories"], 3);
    assert_eq!(e.json(&["analytics", "--client", "desktop"])["memories"], 0, "written by another app");
    e.ok(&["tag", "tea", "drinks"]);
    let tagged = e.json(&["analytics", "--tag", "drinks"]);
    assert_eq!(
        (tagged["memories"].as_u64(), &tagged["tags"]),
        (Some(1), &serde_json::json!([["drinks", 1]])),
        "{tagged}"
    );
    let m = e.json(&["analytics", "--type", "episodic"]);
    assert_eq!((m["memories"].as_u64(), &m["by_type"]), (Some(2), &serde_json::json!({"episodic": 2})), "{m}");
    let csv = e.ok(&["analytics", "--csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "day,facts,episodes,procedures,created,promoted,demoted,expired");
    assert!(lines[1].ends_with(",1,2,0,3,0,0,0") && lines.len() == 2, "{csv}");
    e.ok(&["recall", "zeppelin"]);
    let csv = e.ok(&["analytics", "recalls", "--csv", "--by", "week"]);
    let header =
        "week,recalls,found,best_similarity_p25,best_similarity_median,best_similarity_p75,best_score,best_boost\n";
    assert!(csv.starts_with(header) && csv.trim_end().ends_with(",1,0,,,,,"), "nothing found, no score: {csv}");
    e.ok(&["recall", "oolong"]);
    let csv = e.ok(&["analytics", "recalls", "--csv"]);
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let score = |i: usize| row[i].parse::<f64>().unwrap_or_else(|_| panic!("column {i}: {csv}"));
    assert_eq!((row[1], row[2]), ("2", "1"), "{csv}");
    assert!(score(3) > 0.0 && score(3) == score(4) && score(4) == score(5), "one best result: {csv}");
    assert!(score(6) >= 1.0, "the best match counts 1, and boosts are added: {csv}");

    // Health: the two near-duplicate episodes; the fix previewed, then applied.
    let h = e.json(&["analytics", "health"]);
    assert_eq!(
        (h["counts"]["duplicate_groups"].as_u64(), h["counts"]["duplicates"].as_u64()),
        (Some(1), Some(1)),
        "{h}"
    );
    let text = e.ok(&["analytics", "health"]);
    assert!(text.contains("Near-duplicates: 1 group; merging would expire 1 memory"), "{text}");
    let csv = e.ok(&["analytics", "health", "--csv"]);
    assert!(csv.starts_with("measure,value\nmemories,3\nduplicate_groups,1\nduplicates,1\n"), "{csv}");
    let preview = e.ok(&["analytics", "health", "--fix", "merge-duplicates"]);
    assert!(
        preview.starts_with("1 group of near-duplicates: one memory of each is kept; 1 memory would be expired"),
        "{preview}"
    );
    assert!(preview.contains("Nothing changed yet: add --apply to do it."), "{preview}");
    assert_eq!(e.json(&["analytics", "health"])["counts"]["duplicates"], 1, "a preview changes nothing");
    let done = e.json(&["analytics", "health", "--fix", "merge-duplicates", "--apply"]);
    assert_eq!((done["applied"].as_bool(), done["after"]["duplicates"].as_u64()), (Some(true), Some(0)), "{done}");
    assert_eq!(done["after"]["memories"], 2);
    assert!(e.err(&["analytics", "recalls", "--fix", "vacuum"]).contains("--fix goes with `strata analytics health`"));
}
