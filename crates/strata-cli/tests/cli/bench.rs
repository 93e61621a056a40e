//! `strata bench …`: each benchmark runs on a small input and reports its shape.

use super::*;

/// `strata bench locomo` runs on any file in the LoCoMo layout and reports the promised shape.
#[test]
fn locomo_bench_on_a_small_file_in_the_layout() {
    let e = Env::new();
    let data = &in_crate("tests/fixtures/locomo-tiny.json");
    let r = e.json(&["bench", "locomo", "--data", data]);
    assert_eq!(r["questions"], 3);
    assert_eq!(r["skipped"], 1, "the adversarial question names no turn");
    assert_eq!(r["evidence_repaired"], 2, "D1:02 and the ';'-joined pair");
    assert_eq!(r["default"], "hybrid_rerank");
    for config in ["bm25", "vector", "hybrid_rrf", "hybrid", "hybrid_rerank", "hybrid_time_filter", "hybrid_no_time"] {
        assert!(r["configs"][config]["recall_at"]["10"].is_number(), "{config} missing");
    }
    let bm25 = &r["configs"]["bm25"];
    for k in ["1", "5", "10", "20"] {
        assert!(bm25["recall_at"][k].is_number() && bm25["recall_at_excl_adversarial"][k].is_number());
    }
    // Every answer is findable in five turns by its words.
    assert_eq!(bm25["recall_at"]["5"], 1.0);
    assert_eq!(bm25["by_category"]["4"]["5"], 1.0);
    assert_eq!(bm25["by_category"]["1"]["20"], 1.0, "both turns of the multi-hop question");
    assert!(bm25["p95_ms"].as_f64().unwrap() >= bm25["p50_ms"].as_f64().unwrap());
    // The product's configuration finds every answer in five as well.
    assert_eq!(r["configs"]["hybrid_rerank"]["recall_at"]["5"], 1.0);
    // Within a token budget: a tiny conversation fits whole in 500 tokens.
    for b in ["500", "1000", "2000"] {
        assert_eq!(r["budget_recall"][b], 1.0, "{}", r["budget_recall"]);
        assert_eq!(r["budget_recall_by_order"]["value_per_token"][b], 1.0);
        assert!(r["budget_tokens_used"][b].as_f64().unwrap() <= b.parse::<f64>().unwrap());
    }
    let only = e.json(&["bench", "locomo", "--data", data, "--configs", "bm25"]);
    let names: Vec<&String> = only["configs"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["bm25", "hybrid_rerank"], "the default always runs");
    assert!(e.err(&["bench", "locomo", "--data", data, "--configs", "nope"]).contains("unknown configuration 'nope'"));
    assert!(!e.db().exists(), "benchmarks never touch the user's database");
    // Token counting speed on the same file: both encodings, counts that add up.
    let t = e.json(&["bench", "tokens", "--data", data]);
    for enc in ["o200k_base", "cl100k_base"] {
        let f = &t["runs"][0]["encodings"][enc];
        assert!(f["short_tokens"].as_u64().unwrap() > 20 && f["short_tokens_per_s"].as_f64().unwrap() > 0.0, "{t}");
        assert!(f["long_tokens"].as_u64().unwrap() >= f["short_tokens"].as_u64().unwrap() - 1);
    }
    let msg = e.err(&["bench", "locomo", "--data", "/nonexistent.json"]);
    assert!(msg.contains("cannot read /nonexistent.json"), "{msg}");
}

/// `strata bench recall` and `strata bench embed` run on any LoCoMo-layout file.
#[test]
fn recall_and_embedding_benchmarks_report_their_shape() {
    let e = Env::new();
    let data = &in_crate("tests/fixtures/locomo-tiny.json");
    let r = e.json(&["bench", "recall", "--data", data, "--sizes", "5,40"]);
    assert_eq!(r["questions"], 4);
    let sizes = r["sizes"].as_array().unwrap();
    assert_eq!(sizes.iter().map(|s| s["memories"].as_u64().unwrap()).collect::<Vec<_>>(), vec![5, 40]);
    for s in sizes {
        for config in ["bm25", "vector", "hybrid_rerank"] {
            let l = &s["latency"][config];
            assert!(l["p95_ms"].as_f64().unwrap() >= l["p50_ms"].as_f64().unwrap(), "{config}: {l}");
        }
    }
    let r = e.json(&["bench", "embed", "--data", data, "--sentences", "5"]);
    assert_eq!((r["sentences"].as_u64(), r["queries"].as_u64()), (Some(5), Some(4)));
    let ours = &r["runs"][0];
    assert!(ours["implementation"].as_str().unwrap().starts_with("Strata MiniLm ("), "{ours}");
    for b in ["1", "16", "64"] {
        assert!(ours["per_second"][b].as_f64().unwrap() > 0.0);
    }
    assert!(!e.db().exists(), "benchmarks never touch the user's database");
}

/// `strata bench chat` loads the on-device chat model and reports its speed.
#[test]
fn the_chat_benchmark_reports_its_shape() {
    let e = Env::new();
    let r = e.json(&["bench", "chat", "--tokens", "4"]);
    assert!(r["load_ms"].as_f64().unwrap() > 0.0 && r["peak_mib"].as_f64().unwrap() > 0.0, "{r}");
    for run in r["runs"].as_array().unwrap() {
        assert!(run["prompt_tokens"].as_u64().unwrap() > 10, "{r}");
        assert!(run["generated_tokens"].as_u64().unwrap() <= 4);
        assert!(run["prompt_tokens_per_s"].as_f64().unwrap() > 0.0);
    }
}

/// `strata bench answers` asks the shipped questions through `ask` with the on-device model,
/// one run per budget, every answer judged and written with `--out`; the user's database is
/// not touched.
#[test]
fn the_answer_benchmark_reports_its_shape() {
    let e = Env::new();
    let out = e.dir.path().join("answers.json");
    let o = out.to_str().unwrap();
    let r = e.json(&["bench", "answers", "--budget", "300,default", "--limit", "2", "--max-tokens", "4", "--out", o]);
    assert_eq!(r["questions"], 2, "{r}");
    let runs = r["runs"].as_array().unwrap();
    assert_eq!((runs[0]["budget"].as_u64(), runs[1]["budget"].as_u64()), (Some(300), None));
    for run in runs {
        assert_eq!(run["answers"].as_array().unwrap().len(), 2);
        let overall = run["scores"].as_array().unwrap().last().unwrap();
        assert_eq!((overall["category"].as_str(), overall["questions"].as_u64()), (Some("overall"), Some(2)));
        assert!(run["first_token"]["mean_ms"].as_f64().unwrap() > 0.0, "{run}");
    }
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, r);
    assert!(e.err(&["bench", "answers", "--budget", "lots"]).contains("not a budget"));
    assert!(!e.db().exists(), "benchmarks never touch the user's database");
}
