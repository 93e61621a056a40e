//! The on-device embedder against the real model files (fetched by `scripts/setup`).

mod chat;
mod choose;
mod numpy;
mod qwen;

use strata_core::Embedder;
use strata_models::MiniLm;

fn model() -> MiniLm {
    MiniLm::load_default().unwrap_or_else(|e| panic!("{e}"))
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

#[test]
fn vectors_are_normalized_384_dimensional_and_batching_changes_nothing() {
    let m = model();
    assert_eq!(m.dim(), 384);
    let texts =
        ["A man is eating food.", "The quick brown fox jumps over the lazy dog, again and again and again.", "hi"];
    let batch = m.embed(&texts).unwrap();
    for (t, v) in texts.iter().zip(&batch) {
        assert_eq!(v.len(), 384);
        assert!((cosine(v, v) - 1.0).abs() < 1e-4, "not normalized: {t}");
        let single = m.embed(&[t]).unwrap().remove(0);
        assert!(v.iter().zip(&single).all(|(a, b)| (a - b).abs() < 1e-4), "padding changed '{t}'");
    }
    assert!(m.embed(&[]).unwrap().is_empty());
}

/// A batch is sorted by length and split over the workers: every vector still comes back in
/// the caller's order, equal to the text embedded alone.
#[test]
fn large_batches_keep_their_order() {
    let m = model();
    let texts: Vec<String> = (0..40).map(|i| format!("note {i}: {}", "more words ".repeat((i * 7) % 23))).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = m.embed(&refs).unwrap();
    assert_eq!(batch.len(), texts.len());
    for i in [0, 1, 13, 22, 39] {
        let single = m.embed(&[refs[i]]).unwrap().remove(0);
        assert!(batch[i].iter().zip(&single).all(|(a, b)| (a - b).abs() < 1e-4), "text {i} moved or changed");
    }
}

/// A query (one text, its products split over the cores) gets the vector the same text gets in
/// a batch.
#[test]
fn query_vectors_agree_with_exact_ones() {
    let m = model();
    for q in [
        "When did Caroline go to the LGBTQ support group?",
        "What is the name of Ana's cat?",
        "hi",
        "Which marathon is Bo training for, and where does his sister live these days?",
    ] {
        let exact = m.embed(&[q, "another text in the same batch, longer than the query"]).unwrap().remove(0);
        let fast = m.embed_query(q).unwrap();
        assert_eq!(fast.len(), 384);
        let worst = exact.iter().zip(&fast).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst < 1e-5 && fast.iter().all(|v| v.is_finite()), "{q}: vectors differ by {worst}");
    }
}

/// Cosine similarities from the reference implementation (sentence-transformers on CPU torch,
/// the same model files), written by `scripts/reference_embeddings.py`; its version is in the
/// generated file's first line.
const REFERENCE: &[(&str, &str, f64)] = &REFERENCE_PAIRS;

include!("reference.rs");

#[test]
fn similarities_match_the_reference_implementation() {
    let m = model();
    for (a, b, want) in REFERENCE {
        let v = m.embed(&[a, b]).unwrap();
        let got = cosine(&v[0], &v[1]);
        assert!((got - want).abs() < 1e-3, "cos('{a}', '{b}') = {got:.5}, reference {want:.5}");
    }
}

#[test]
fn a_missing_model_says_how_to_fetch_it() {
    let dir = std::env::temp_dir().join("strata-no-model-here");
    let err = MiniLm::load(&dir).unwrap_err().to_string();
    assert!(
        err.contains("scripts/setup") && err.contains("STRATA_MODELS") && err.contains("Keyword search works"),
        "{err}"
    );
}

/// The embedder's folder with its weights and tokenizer, and its config.json changed by `change`.
fn embedder_with_config(change: impl FnOnce(&mut serde_json::Value)) -> tempfile::TempDir {
    let real = strata_models::models_dir().join(strata_models::EMBEDDER_DIR);
    let dir = tempfile::tempdir().unwrap();
    for name in ["tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(real.join(name), dir.path().join(name)).unwrap();
    }
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(real.join("config.json")).unwrap()).unwrap();
    change(&mut config);
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    dir
}

/// A tokenizer that can produce ids the model has no embedding for is refused at load, with
/// what is wrong, instead of failing on some later text.
#[test]
fn a_tokenizer_from_another_model_is_refused() {
    let dir = embedder_with_config(|c| c["vocab_size"] = 1000.into());
    let err = MiniLm::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("tokenizer.json has 30522 tokens but the model has 1000"), "{err}");
}

/// A BERT config asking for an activation the encoders do not compute is refused at load,
/// naming it, instead of embedding every text a little wrong.
#[test]
fn a_config_with_another_activation_is_refused() {
    let dir = embedder_with_config(|c| c["hidden_act"] = "gelu_new".into());
    let err = MiniLm::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("\"gelu_new\" activation") && err.contains("GELU only"), "{err}");
}

/// Runs `steps` greedy tokens after `ids` both ways — the one-token step and the tensor path,
/// each from the same cache (the prompt filled once; each path continues at the same position,
/// the step's entry kept for the next) — and checks they agree: the same next token
/// (or a near tie), logits pointing the same way. Not bit-equal: sums in another order flip the odd rounding of
/// an activation to int8, and the layers carry that on (0.999 here; a wrong rotation, bias or
/// cache is far lower). Returns `ids` with the tokens picked.
fn step_agrees_with_tensors(model: &mut strata_models::Llama, mut ids: Vec<u32>, steps: usize) -> Vec<u32> {
    let logits = |t: candle_core::Result<candle_core::Tensor>| -> Vec<f32> {
        t.and_then(|t| t.to_vec1()).unwrap_or_else(|e| panic!("{e}"))
    };
    let argmax = |v: &[f32]| v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i as u32);
    model.forward(&ids[..ids.len() - 1], 0).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..steps {
        let (last, pos) = (&ids[ids.len() - 1..], ids.len() - 1);
        // Each continues at `pos`: the cache is rewound there, so both read the same entries.
        let tensor = logits(model.forward_tensors(last, pos));
        let step = logits(model.forward(last, pos));
        assert_eq!(step.len(), tensor.len());
        let dot: f64 = step.iter().zip(&tensor).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
        let norm = |v: &[f32]| v.iter().map(|a| f64::from(*a) * f64::from(*a)).sum::<f64>().sqrt();
        let cosine = dot / (norm(&step) * norm(&tensor));
        assert!(cosine > 0.995, "cosine {cosine} at position {pos}");
        // The same pick, or a near tie either way: two tokens within 0.15 of each other in both
        // paths, about 1% of a top logit (13–15 here). The paths round activations to int8 in
        // another order, and on aarch64 (the portable kernels) that moved a pick by 0.09.
        let (a, b) = (argmax(&step) as usize, argmax(&tensor) as usize);
        assert!(
            a == b || ((step[a] - step[b]).abs() < 0.15 && (tensor[a] - tensor[b]).abs() < 0.15),
            "at position {pos}: the step picks {a} ({} vs {} for {b}), the tensors {b} ({} vs {} for {a})",
            step[a],
            step[b],
            tensor[b],
            tensor[a]
        );
        ids.push(argmax(&step));
    }
    ids
}
