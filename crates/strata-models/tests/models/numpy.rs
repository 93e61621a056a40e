//! Both chat models' forward against an independent one: a float64 NumPy forward over the same
//! GGUF file, its weights dequantized by llama.cpp's own `gguf` reader
//! (`scripts/gguf_reference.py`, which wrote `gguf_reference.rs`). Run on every target CI
//! builds (`scripts/aarch64` runs it under qemu with the portable kernels).
//!
//! Tolerance: Strata re-quantizes each weight to int8 blocks and rounds activations to int8, so
//! log-probabilities are not bit-equal. A token the reference gives at least e^−10 has a
//! log-probability within `each` of the reference's (their mean difference within `mean`); one
//! deeper in the tail, where a little rounding moves a log-probability most and changes no
//! output, stays under e^−8. Strata ranks first the token the reference ranks first, unless
//! the reference's first two are within `tie` of each other and Strata picks the second.
//! Measured figures and why SmolLM2 moves more: docs/benchmarks.md, "Correct against an
//! independent forward".

#[path = "gguf_reference.rs"]
mod reference;

use strata_core::Message;
use strata_models::{Llama, LocalChat};

/// Below this log-probability a token is in the tail (e^−10, about 1 in 22,000).
const TAIL: f64 = -10.0;
/// A tail token stays below this (e^−8, about 1 in 3,000).
const STILL_TAIL: f64 = -8.0;

struct Tolerance {
    each: f64,
    mean: f64,
    tie: f64,
}

/// A whole exchange as the chat template writes it (with the next assistant turn opened).
fn exchange(chat: &LocalChat, question: &str, answer: &str) -> Vec<u32> {
    let turns = [Message::system("You are a helpful assistant."), Message::user(question), Message::assistant(answer)];
    chat.prompt_ids(&turns).unwrap_or_else(|e| panic!("{e}"))
}

#[allow(clippy::print_stderr)] // the figures docs/benchmarks.md quotes, shown with --nocapture
fn agrees(file: &std::path::Path, ids: &[u32], want: &[u32], rows: &[(f64, u32, f64, u32, f64)], t: &Tolerance) {
    assert_eq!(
        ids, want,
        "the template's ids changed; regenerate the reference (scripts/gguf_reference.py) for {ids:?}"
    );
    let mut model = Llama::load(file).unwrap_or_else(|e| panic!("{e}"));
    let logits = model.forward_all(ids).unwrap_or_else(|e| panic!("{e}"));
    let lp = candle_nn::ops::log_softmax(&logits, 1).and_then(|t| t.to_vec2::<f32>()).unwrap_or_else(|e| panic!("{e}"));
    let (mut total, mut likely, mut worst, mut changed) = (0.0, 0usize, 0.0f64, 0);
    for (pos, (row, &(next, first, first_lp, second, second_lp))) in lp.iter().zip(rows).enumerate() {
        let ours = f64::from(row[ids[pos + 1] as usize]);
        if next >= TAIL {
            total += (ours - next).abs();
            likely += 1;
            worst = worst.max((ours - next).abs());
            assert!(
                (ours - next).abs() < t.each,
                "at position {pos}: log-probability {ours:.4}, the reference's {next:.4}"
            );
        } else {
            assert!(
                ours < STILL_TAIL,
                "at position {pos}: log-probability {ours:.4}, the reference's {next:.4} (tail)"
            );
        }
        let pick = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i as u32);
        changed += usize::from(pick != first);
        assert!(
            pick == first || (pick == second && first_lp - second_lp < t.tie),
            "at position {pos}: Strata ranks {pick} first, the reference {first} ({first_lp:.4}) then {second} ({second_lp:.4})"
        );
    }
    let mean = total / likely.max(1) as f64;
    eprintln!("{}: mean {mean:.4}, worst {worst:.4}, ranks changed {changed}", file.display());
    assert!(mean < t.mean, "mean log-probability difference {mean:.4} over {likely} tokens");
}

#[test]
fn smollm2_agrees_with_a_numpy_forward_over_its_gguf() {
    let chat = LocalChat::load_trained().unwrap_or_else(|e| panic!("{e}"));
    let ids = exchange(&chat, "What is the capital of France?", "The capital of France is Paris.");
    agrees(
        &LocalChat::trained_file(),
        &ids,
        &reference::SMOLLM2_IDS,
        &reference::SMOLLM2,
        &Tolerance { each: 0.7, mean: 0.1, tie: 0.5 },
    );
}

#[test]
fn qwen2_agrees_with_a_numpy_forward_over_its_gguf() {
    let chat = crate::qwen::chat();
    let ids = exchange(chat, "What is the capital of France? Answer in one word.", "Paris");
    agrees(
        &crate::qwen::file(),
        &ids,
        &reference::QWEN2_IDS,
        &reference::QWEN2,
        &Tolerance { each: 0.3, mean: 0.06, tie: 0.15 },
    );
}
