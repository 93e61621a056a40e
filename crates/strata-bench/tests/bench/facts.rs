//! Retrieval with facts beside the turns: a fact in the prompt counts for the turns it was
//! drawn from, so a short fact carries evidence a long turn cannot fit into a small budget.

use std::sync::Arc;

use strata_bench::extractbench;
use strata_core::vectors::HashEmbedder;

/// A conversation in the LoCoMo layout: a long turn holds the answer, an observation says it
/// in a line.
fn conversation() -> serde_json::Value {
    let ramble = "and then we walked along the river for hours talking about nothing much ".repeat(30);
    serde_json::json!([{
        "sample_id": "conv-t",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": format!("So my kitten is called Pixel, {ramble}")},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "I am training for the Porto marathon."}
            ],
            "session_2_date_time": "10:04 am on 19 May, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "Pixel sleeps on the piano now."}
            ]
        },
        "observation": {
            "session_1_observation": {
                "Ana": [["Ana's kitten is called Pixel.", "D1:1"]],
                "Bo": [["Bo is training for the Porto marathon.", "D1:02"]]
            }
        },
        "qa": [
            {"question": "What is Ana's kitten called?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
            {"question": "Where does the kitten sleep?", "answer": "piano", "evidence": ["D2:1"], "category": 4}
        ]
    }])
}

#[test]
fn a_fact_in_the_prompt_counts_for_the_turns_it_was_drawn_from() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("conv.json");
    std::fs::write(&data, conversation().to_string()).unwrap();
    let embedder = Arc::new(HashEmbedder { id: "hash-test", dim: 64 });
    let mut said = Vec::new();
    let r =
        extractbench::run_reference(&data, 1, dir.path(), embedder.clone(), &mut |s| said.push(s.to_string())).unwrap();
    // Only the question about session 1 is asked when one session is read.
    assert_eq!((r.questions, r.facts), (1, 2), "{r:?}");
    // The long turn does not fit into 250 tokens; the fact drawn from it does.
    assert_eq!(r.turns_only[&250], 0.0, "{r:?}");
    assert_eq!(r.with_facts[&250], 1.0, "{r:?}");
    assert!(r.fact_token_share[&250] > 0.0, "{r:?}");
    assert_eq!(said, vec!["conv-t: 1 sessions, 2 observations as facts"]);
    // With both sessions read, both questions are asked.
    let r = extractbench::run_reference(&data, 2, dir.path(), embedder, &mut |_| {}).unwrap();
    assert_eq!(r.questions, 2, "{r:?}");
}
