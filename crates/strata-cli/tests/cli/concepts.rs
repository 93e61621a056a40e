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

/// A streamed OpenAI reply of `text`, as the API sends one.
fn streamed(text: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        let c = serde_json::json!({"id": "chatcmpl-w", "object": "chat.completion.chunk", "created": 1_733_000_000,
            "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let mut out = chunk(serde_json::json!({"role": "assistant", "content": ""}), Value::Null);
    out += &chunk(serde_json::json!({"content": text}), Value::Null);
    out += &chunk(serde_json::json!({}), "stop".into());
    out + "data: [DONE]\n\n"
}

/// What the loopback OpenAI writes for a concept: two sentences its kitten notes hold and one
/// they do not; for any other concept, only one they do not.
fn writer(_: &str, body: &str) -> (u16, &'static str, String) {
    let reply = if body.contains("Summarize these notes") && body.contains("cat flap") {
        "Pixel the kitten sleeps on the piano every afternoon. Pixel the kitten learned to use the cat flap. \
         Pixel is a grey tabby."
    } else {
        "Pixel is a grey tabby."
    };
    (200, "text/event-stream", streamed(reply))
}

#[test]
fn a_model_writes_summaries_that_keep_only_sentences_the_memories_hold() {
    let e = Env::new();
    say_all(&e);
    e.json(&["concepts", "rebuild"]);
    let (url, seen) = crate::providers::loopback(writer);
    let write = |json: bool| {
        let mut cmd = crate::strata();
        cmd.args(["concepts", "write", "--provider", "openai", "--model", "gpt-4o-mini"]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.env("STRATA_DB", e.db()).env("OPENAI_API_KEY", "sk-test").env("OPENAI_BASE_URL", &url).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let concepts = e.json(&["concepts"]);
    let count = concepts.as_array().unwrap().len();
    let text = write(false);
    assert!(text.starts_with("gpt-4o-mini wrote 1 summary in "), "{text}");
    assert!(text.contains("(2 sentences kept, "), "{text}");
    let rest = count - 1;
    let keeps =
        if rest == 1 { "1 concept keeps what its memories said" } else { "concepts keep what their memories said" };
    assert!(text.contains(keeps), "{text}");
    assert_eq!(seen.lock().unwrap().len(), count, "one request a concept");
    // The kitten's concept shows what was written, each sentence with the memories it draws on.
    let kitten = concepts.as_array().unwrap().iter().find(|c| {
        let key = c["key"].as_str().unwrap();
        e.ok(&["concepts", "show", key]).contains("cat flap")
    });
    let key = kitten.unwrap()["key"].as_str().unwrap();
    let shown = e.ok(&["concepts", "show", key]);
    assert!(shown.contains("Summary (written by gpt-4o-mini; every sentence checked"), "{shown}");
    assert!(shown.contains("  Pixel the kitten learned to use the cat flap.  ["), "{shown}");
    assert!(!shown.contains("grey tabby"), "a sentence no memory holds is dropped: {shown}");
    // Asked again, it leaves what it wrote and tries the others again.
    let again: Value = serde_json::from_str(&write(true)).unwrap();
    assert_eq!((again["already"].as_u64(), again["written"].as_u64()), (Some(1), Some(0)), "{again}");
}
