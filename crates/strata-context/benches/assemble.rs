//! `cargo bench -p strata-context`: assembling a prompt from 10,000 candidate memories (the
//! target is under 20 ms), at a small and a large budget, in both candidate orders, counted
//! with cl100k_base.

use divan::Bencher;
use strata_context::{Candidate, ContextOptions, ContextRequest, Order, assemble};
use strata_core::{Content, Episode, EpisodeBody, Memory, MemoryId, Message, Scope, Source};
use strata_tokens::{Encoding, OpenAiTokens};

fn main() {
    divan::main();
}

const SYLLABLES: [&str; 16] =
    ["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "bo", "di", "an", "el", "or", "us"];
const COMMON: [&str; 8] = ["the", "and", "we", "went", "to", "my", "a", "photo"];

/// A word: a common one a third of the time, else one of 4,096 made-up ones.
fn word(n: usize) -> String {
    let h = n.wrapping_mul(2_654_435_761) >> 7;
    if h.is_multiple_of(3) {
        COMMON[h % 8].to_string()
    } else {
        (0..3).map(|k| SYLLABLES[(h >> (4 * k)) % 16]).collect()
    }
}

/// 10,000 episodes of 8 to 60 words, scores falling with rank.
fn candidates() -> Vec<Candidate> {
    (0..10_000u64)
        .map(|i| {
            let n = 8 + (i * 37 % 53) as usize;
            let text: Vec<String> = (0..n).map(|k| word(i as usize * 64 + k)).collect();
            let at = chrono::DateTime::from_timestamp(1_700_000_000 + i as i64 * 60, 0).unwrap();
            let content = Content::Episodic(Episode {
                occurred_at: at,
                body: EpisodeBody::Utterance {
                    speaker: if i % 2 == 0 { "Mel" } else { "Caroline" }.into(),
                    text: text.join(" "),
                },
                concepts: vec![],
                extra: Default::default(),
            });
            let memory = Memory::new(
                MemoryId::from_parts(1_700_000_000_000 + i, i as u128),
                Scope::default(),
                content,
                Source::app("bench"),
                at,
            );
            Candidate { memory, score: 1.0 / (1.0 + i as f64 / 100.0), why: None }
        })
        .collect()
}

fn run(bencher: Bencher, budget: usize, order: Order) {
    let tokens = OpenAiTokens::new(Encoding::Cl100kBase);
    let candidates = candidates();
    let history: Vec<Message> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question {i} about the garden"))
            } else {
                Message::assistant("an answer about tomatoes and tea")
            }
        })
        .collect();
    let options = ContextOptions { order, ..Default::default() };
    bencher
        .with_inputs(|| ContextRequest {
            system: Some("You are a helpful assistant.".into()),
            history: history.clone(),
            message: "What did Mel do in the garden?".into(),
            candidates: candidates.clone(),
            budget,
            ..Default::default()
        })
        .bench_local_values(|req| assemble(&tokens, req, &options).unwrap());
}

/// 10,000 candidates, best score first.
#[divan::bench(args = [2_000, 32_000])]
fn ten_thousand_by_score(bencher: Bencher, budget: usize) {
    run(bencher, budget, Order::Score);
}

/// 10,000 candidates, best value per token first.
#[divan::bench(args = [2_000, 32_000])]
fn ten_thousand_by_value_per_token(bencher: Bencher, budget: usize) {
    run(bencher, budget, Order::ValuePerToken);
}
