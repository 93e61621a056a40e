//! `strata bench compaction`'s parts that need no model: the raw/compacted comparison on a
//! small conversation, and the timing of a larger store's full and incremental passes.

use std::sync::Arc;

use strata_bench::compactbench;
use strata_core::vectors::HashEmbedder;

/// A conversation in the LoCoMo layout: two things talked about, five turns each.
fn conversation() -> serde_json::Value {
    let kitten = [
        "Pixel the kitten sleeps on the piano",
        "the kitten Pixel chased a moth",
        "Pixel the kitten ate tuna",
        "our kitten Pixel saw the vet",
        "Pixel the kitten learned the cat flap",
    ];
    let running = [
        "the marathon training went well",
        "a long marathon run by the river",
        "new shoes for the marathon",
        "marathon pace is five minutes",
        "a half marathon in Lisbon",
    ];
    let turns: Vec<serde_json::Value> = kitten
        .iter()
        .zip(running)
        .flat_map(|(a, b)| [("Ana", *a), ("Bo", b)])
        .enumerate()
        .map(|(i, (who, text))| serde_json::json!({"speaker": who, "dia_id": format!("D1:{}", i + 1), "text": text}))
        .collect();
    serde_json::json!([{
        "sample_id": "conv-c",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns
        },
        "qa": [
            {"question": "Where does the kitten sleep?", "answer": "on the piano", "evidence": ["D1:1"], "category": 4},
            {"question": "Where is the half marathon?", "answer": "Lisbon", "evidence": ["D1:10"], "category": 4},
            {"question": "What did they not say?", "evidence": [], "category": 5}
        ]
    }])
}

#[test]
fn every_answered_question_is_asked_raw_and_compacted_at_each_budget_and_larger_stores_are_timed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("conv.json");
    std::fs::write(&data, conversation().to_string()).unwrap();
    let embedder = Arc::new(HashEmbedder { id: "hash-test", dim: 64 });
    let mut said = Vec::new();
    let r =
        compactbench::run(&data, dir.path(), embedder.clone(), Default::default(), &mut |s| said.push(s.to_string()))
            .unwrap();
    assert_eq!((r.conversations, r.memories, r.questions), (1, 10, 2), "{r:?}");
    let budgets: Vec<usize> = r.raw.keys().copied().collect();
    assert_eq!(budgets, compactbench::BUDGETS.to_vec());
    assert_eq!(r.compacted.keys().copied().collect::<Vec<_>>(), budgets);
    // Ten short turns fit any of these budgets whole: both answers are in every raw prompt.
    assert!(r.raw.values().all(|share| *share == 1.0), "{r:?}");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("conv-c: 10 turns"), "{said:?}");

    // A store of 600 (the ten turns repeated), then 1,000 more for an incremental pass.
    let s = compactbench::scale(&data, dir.path(), embedder, 600).unwrap();
    assert_eq!((s.memories, s.added), (600, 1000), "{s:?}");
    assert!(s.concepts > 0 && s.grouped <= 600, "repeated texts, jittered, still group: {s:?}");
    assert!(s.joined <= 1000 && s.incremental_ms_per_memory > 0.0, "{s:?}");
}
