//! `strata concepts` and `strata context --compare`: related memories grouped into named
//! concepts with the on-device embedder, shown, and used in a prompt beside the raw one.

use serde_json::Value;

use crate::Env;

/// Twelve things Ana said, one a line: six about her kitten, six about her marathon (the app's
/// end-to-end test says them too).
const SAID: &str = include_str!("../fixtures/concept-said.txt");

/// [`SAID`], a sentence each.
pub(crate) fn said() -> Vec<&'static str> {
    SAID.lines().collect()
}

/// Writes [`SAID`], a day apart from 1 January 2026.
pub(crate) fn say_all(e: &Env) {
    for (i, text) in said().into_iter().enumerate() {
        let at = format!("2026-01-{:02}T09:00Z", i + 1);
        e.json(&["add", "episodic", "--speaker", "Ana", "--text", text, "--at", &at]);
    }
}

#[test]
fn concepts_are_built_listed_shown_and_compared_in_a_prompt() {
    let e = Env::new();
    assert!(e.ok(&["concepts"]).contains("No concepts yet: `strata concepts rebuild`"));
    say_all(&e);
    let dry = e.json(&["concepts", "rebuild", "--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(e.json(&["concepts"]).as_array().unwrap().len(), 0, "a dry run writes nothing");
    let r = e.json(&["concepts", "rebuild"]);
    assert_eq!(r["memories"], 12, "{r}");
    assert!(r["formed"].as_u64().unwrap() >= 2, "{r}");
    // Analytics keeps what the pass changed (the dry run is not a pass).
    assert!(e.ok(&["analytics", "compaction"]).contains("1 compaction pass;"));
    let passes = e.json(&["analytics", "compaction"]);
    let pass = &passes.as_array().unwrap()[..];
    assert_eq!((pass.len(), &pass[0]["full"], &pass[0]["formed"]), (1, &Value::Bool(true), &r["formed"]), "{passes}");
    assert_eq!(pass[0]["grouped"], r["grouped"]);
    let csv = e.ok(&["analytics", "compaction", "--csv"]);
    assert!(csv.starts_with("at,pass,formed,updated,merged,dissolved,joined,concepts,grouped,ratio\n"), "{csv}");
    let list = e.json(&["concepts"]);
    let concepts = list.as_array().unwrap();
    let names: Vec<&str> = concepts.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.iter().any(|n| n.contains("Pixel") || n.contains("kitten")), "{names:?}");
    assert!(names.iter().any(|n| n.contains("marathon")), "{names:?}");
    // One shown: its summary quotes its members, each sentence naming the memory it came from.
    let key = concepts[0]["key"].as_str().unwrap();
    let shown: Value = e.json(&["concepts", "show", key]);
    for s in shown["summary"].as_array().unwrap() {
        let text = s["text"].as_str().unwrap();
        assert!(said().iter().any(|said| text.contains(said)), "{text}");
        assert!(shown["members"].as_array().unwrap().contains(&s["from"]));
    }
    let text = e.ok(&["concepts", "show", key]);
    assert!(text.contains("Summary (what the memories said):") && text.contains("Members:"), "{text}");
    // The same prompt raw and compacted.
    let both = e.json(&[
        "context",
        "--model",
        "gpt-4o",
        "--query",
        "How is Pixel the kitten?",
        "--budget",
        "200",
        "--compare",
    ]);
    assert!(both["raw"]["report"]["used"].as_u64().unwrap() <= 200);
    assert!(both["compacted"]["report"]["used"].as_u64().unwrap() <= 200);
    let raw: String = both["raw"]["messages"].to_string();
    assert!(!raw.contains(concepts[0]["name"].as_str().unwrap()), "the raw prompt holds no concept");
    let text =
        e.ok(&["context", "--model", "gpt-4o", "--query", "How is Pixel the kitten?", "--budget", "200", "--compare"]);
    assert!(text.contains("Raw: the memories as they are") && text.contains("Compacted: concepts stand for"), "{text}");
    let uses = both["compacted"]["report"]["concepts"].as_array().unwrap();
    assert!(!uses.is_empty(), "a concept is in the compacted prompt: {both}");
    let saved: i64 = uses.iter().map(|u| u["saved"].as_i64().unwrap()).sum();
    let summary = if saved >= 0 { format!("({saved} tokens saved).") } else { format!("({} tokens more).", -saved) };
    assert!(text.trim_end().ends_with(&summary), "{text}");
    assert!(e.err(&["concepts", "show", "concept/nothing_here"]).contains("concept/nothing_here"));
}
