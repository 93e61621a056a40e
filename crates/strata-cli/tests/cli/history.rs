//! `strata import` of a person's history from other tools: ChatGPT's and Claude's
//! conversations as sessions of dated exchanges (the branch ChatGPT showed, edits and hidden
//! messages left out), mem0's memories as facts; the same export again adds nothing; a damaged
//! one names the conversation and imports nothing.

use serde_json::Value;

use crate::Env;

fn export(name: &str) -> String {
    crate::in_crate(&format!("tests/fixtures/history/{name}"))
}

/// The bodies of a listed session, oldest first (`list --order occurred` lists the latest first).
fn bodies(list: &Value) -> Vec<Value> {
    list["items"].as_array().unwrap().iter().rev().map(|m| m["body"].clone()).collect()
}

#[test]
fn chatgpt_conversations_become_sessions_of_the_branch_that_was_shown() {
    let e = Env::new();
    let said = e.ok(&["import", &export("chatgpt-conversations.json")]);
    assert!(said.contains("Imported 3 turns of 2 ChatGPT conversations from"), "{said}");
    assert!(said.contains("into 2 sessions (0 already here)"), "{said}");
    let trip = e.json(&["list", "--session", "chatgpt-6790a1b2-trip", "--order", "occurred"]);
    let b = bodies(&trip);
    assert_eq!(b.len(), 2, "{trip}");
    assert_eq!(b[0]["query"], "I'm flying to Lisbon on 14 March with my sister Marta.");
    assert_eq!(b[1]["query"], "We want a flat in Alfama, my sister is vegetarian.", "the edited question");
    assert_eq!(b[1]["response"], "Alfama has many flats; for vegetarian food try Ao 26.", "the tool's output left out");
    let first = &trip["items"][1];
    assert_eq!(first["occurred_at"], "2025-01-01T10:00:10Z");
    assert_eq!(first["source"]["app"], "import");
    let all = e.ok(&["search", "Rossio"]);
    assert!(!all.contains("Rossio Garden"), "the branch before the edit is not imported: {all}");
    assert!(!e.ok(&["search", "ChatGPT"]).contains("You are ChatGPT"), "the hidden system message is not imported");

    let again = e.ok(&["import", &export("chatgpt-conversations.json")]);
    assert!(
        again.contains("Imported 0 turns of 2 ChatGPT conversations") && again.contains("(3 already here)"),
        "{again}"
    );
    assert_eq!(e.json(&["stats"])["memories"], 3);
}

#[test]
fn claude_conversations_and_mem0_memories_come_in_with_their_dates() {
    let e = Env::new();
    let said = e.ok(&["import", &export("claude-conversations.json")]);
    assert!(said.contains("Imported 2 turns of 2 Claude conversations") && said.contains("into 1 sessions"), "{said}");
    let garden = e.json(&["list", "--session", "claude-5f1c-garden", "--order", "occurred"]);
    let b = bodies(&garden);
    assert_eq!(b[0]["response"], "After the last frost, usually mid-April.", "an answer kept only in its parts");
    assert_eq!(
        (b[1]["speaker"].as_str(), b[1]["text"].as_str()),
        (Some("user"), Some("Thanks, I'll plant Coração de Boi this year."))
    );

    let said = e.ok(&["import", &export("mem0-memories.json")]);
    assert!(said.contains("Imported 2 of mem0's memories") && said.contains("(0 already here)"), "{said}");
    let pixel = e.json(&["get", "mem0/3f8a2c1e-2"]);
    assert_eq!(pixel["facts"]["memory"], "Has a cat named Pixel who is allergic to chicken");
    assert_eq!(pixel["facts"]["noted_on"], "2024-08-02");
    assert_eq!(e.json(&["get", "mem0/3f8a2c1e-1"])["facts"]["noted_on"], "2024-07-20", "its own time zone's day");
    assert!(e.ok(&["import", &export("mem0-memories.json")]).contains("Imported 0 of mem0's memories"));
}

#[test]
fn a_damaged_export_names_the_conversation_and_imports_nothing() {
    let e = Env::new();
    let text = std::fs::read_to_string(export("chatgpt-conversations.json")).unwrap();
    let broken = text.replacen("\"current_node\": \"c2\"", "\"current_node\": \"gone\"", 1);
    let file = e.dir.path().join("conversations.json");
    std::fs::write(&file, &broken).unwrap();
    let r = e.run(&["import", file.to_str().unwrap()]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("conversation 2 (“Cat food”): message gone is missing"), "{}", r.stderr);
    std::fs::write(&file, &text[..text.len() / 2]).unwrap();
    let r = e.run(&["import", file.to_str().unwrap()]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("conversations.json"), "{}", r.stderr);
    assert_eq!(e.json(&["stats"])["memories"], 0, "nothing of either was imported");
    // mem0's memories: two with one id are refused, naming both.
    let mem0 = std::fs::read_to_string(export("mem0-memories.json")).unwrap();
    let file = e.dir.path().join("mem0.json");
    std::fs::write(&file, mem0.replace("3f8a2c1e-2", "3f8a2c1e-1")).unwrap();
    let r = e.run(&["import", file.to_str().unwrap()]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("memories 1 and 2 have the same id (3f8a2c1e-1)"), "{}", r.stderr);
    assert_eq!(e.json(&["stats"])["memories"], 0);
}
