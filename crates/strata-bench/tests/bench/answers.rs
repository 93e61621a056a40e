//! The answer benchmark's judge and its shipped data: every question names a memory the seed
//! holds, whose text carries one of its accepted answers, in the numbers the issue asks for.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use strata_bench::answerbench::{self, Category, Question};
use strata_core::vectors::HashEmbedder;
use strata_core::{Filter, Memory};

fn question(category: Category, accept: &[&str]) -> Question {
    Question {
        id: "q".into(),
        category,
        question: "?".into(),
        accept: accept.iter().map(|s| s.to_string()).collect(),
        memory: None,
        misleading: None,
        answer: None,
    }
}

#[test]
fn the_judge_finds_an_accepted_string_whatever_the_case_and_spacing() {
    let check = |category: Category, accept: &[&str], answer: &str, expect: bool| {
        assert_eq!(answerbench::judge(&question(category, accept), answer), expect, "{answer:?}");
    };
    let birthday = ["14 March", "March 14"];
    check(Category::SingleFact, &birthday, "Elsa was born on 14 march 2016.", true);
    check(Category::SingleFact, &birthday, "Her birthday is March\n  14th.", true);
    check(Category::SingleFact, &birthday, "Elsa's birthday is on 14 May 2015.", false);
    check(Category::SingleFact, &birthday, "", false);
    check(Category::Procedure, &["paperclip"], "Press the reset hole with a PaperClip.", true);
    check(Category::NotInMemory, &[], "I don\u{2019}t know your National Insurance number.", true);
    check(Category::NotInMemory, &[], "The memories do not mention it.", false);
    check(Category::NotInMemory, &[], "It is not mentioned in my memories.", true);
    check(Category::NotInMemory, &[], "Your shoe size is 43.", false);
    // A question not in memory is not made right by an accepted string.
    check(Category::NotInMemory, &["43"], "Your shoe size is 43.", false);
}

/// The shipped memories in a fresh store, by their labels.
fn shipped() -> (Vec<Question>, HashMap<String, Memory>) {
    set_in(&answerbench::data_dir())
}

/// The questions and memories (in a fresh store, by their labels) of the set in `dir`.
fn set_in(dir: &std::path::Path) -> (Vec<Question>, HashMap<String, Memory>) {
    let questions = answerbench::load_questions(&dir.join("questions.json")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let embedder = Arc::new(HashEmbedder { id: "hash", dim: 64 });
    let engine = answerbench::fill(&work.path().join("a.db"), &dir.join("memories.json"), None, embedder).unwrap();
    let memories = engine.all_memories(Filter::default()).unwrap();
    let n = memories.len();
    let by_label: HashMap<String, Memory> =
        memories.into_iter().filter_map(|m| answerbench::label(&m.content).map(|l| (l, m))).collect();
    assert_eq!(by_label.len(), n, "every memory has a label of its own");
    (questions, by_label)
}

#[test]
fn the_shipped_questions_name_memories_of_the_seed_that_hold_their_answers() {
    let (questions, memories) = shipped();
    let ids: HashSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids.len(), questions.len(), "question ids are unique");
    assert!(questions.len() >= 70, "{} questions", questions.len());
    for c in Category::ALL {
        let n = questions.iter().filter(|q| q.category == c).count();
        assert!(n >= c.minimum(), "{} {} questions, at least {} wanted", n, c.name(), c.minimum());
    }
    for q in &questions {
        if q.category == Category::NotInMemory {
            assert!(q.memory.is_none() && q.accept.is_empty(), "{}: nothing to find", q.id);
            continue;
        }
        let key = q.memory.as_deref().unwrap_or_else(|| panic!("{}: names no memory", q.id));
        let m = memories.get(key).unwrap_or_else(|| panic!("{}: no memory '{key}' in the seed", q.id));
        let text = answerbench::quote(m);
        assert!(answerbench::holds_any(&text, &q.accept), "{}: no accepted answer in '{text}'", q.id);
        if let Some(w) = &q.misleading {
            let wrong = memories.get(&w.memory).unwrap_or_else(|| panic!("{}: no memory '{}'", q.id, w.memory));
            assert!(answerbench::holds_any(&answerbench::quote(wrong), &w.reject), "{}: reject not in it", q.id);
            assert!(!answerbench::holds_any(&text, &w.reject), "{}: the right memory holds a rejected string", q.id);
        }
    }
}

#[test]
fn the_training_households_answer_from_their_own_memories_and_share_no_name_with_the_evaluation() {
    let root = strata_bench::answertrain::data_dir();
    let mut households: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    households.sort();
    assert!(households.len() >= 8, "{} households", households.len());
    let (_, evaluation) = shipped();
    let evaluated: Vec<String> = evaluation.values().map(answerbench::quote).collect();
    let (mut total, mut dont_know) = (0, 0);
    for dir in &households {
        let (questions, memories) = set_in(dir);
        for q in &questions {
            let answer = q.answer.as_deref().unwrap_or_else(|| panic!("{}: no answer to learn", q.id));
            // The answer to learn is one the judge accepts.
            assert!(answerbench::judge(q, answer), "{}: the judge rejects its own answer '{answer}'", q.id);
            total += 1;
            if q.category == Category::NotInMemory {
                dont_know += 1;
                continue;
            }
            let key = q.memory.as_deref().unwrap_or_else(|| panic!("{}: names no memory", q.id));
            let m = memories.get(key).unwrap_or_else(|| panic!("{}: no memory '{key}'", q.id));
            assert!(answerbench::holds_any(&answerbench::quote(m), &q.accept), "{}: the memory lacks it", q.id);
        }
        // No one in a household is named anywhere in the evaluation's memories.
        let seed: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("memories.json")).unwrap()).unwrap();
        for (key, concept) in seed["semantic"].as_object().unwrap() {
            let Some(name) = concept["name"].as_str() else { continue };
            let first = name.split_whitespace().next().unwrap().to_string();
            let named = evaluated.iter().find(|t| answerbench::holds_any(t, std::slice::from_ref(&first)));
            assert!(named.is_none(), "{}: {key}'s '{first}' is in the evaluation: {named:?}", dir.display());
        }
    }
    assert!(total >= 200 && dont_know * 5 >= total, "{total} examples, {dont_know} of them \"I don't know\"");
}
