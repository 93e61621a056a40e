//! Training sets from memories: templates, held-out phrasings, provenance, validation, JSONL.

use std::collections::HashSet;

use chrono::Utc;
use strata_core::{Concept, Content, FactValue, Memory, Procedure, Scope, Source};
use strata_train::data::{Dataset, HELDOUT_TEMPLATES, Problem, Split, TRAIN_TEMPLATES};
use strata_train::{Example, Kind};

fn memory(content: Content) -> Memory {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let id = strata_core::MemoryId::from_parts(1_700_000_000_000 + n, u128::from(n));
    Memory::new(id, Scope::default(), content, Source::app("test"), Utc::now())
}

fn fact(key: &str, facts: &[(&str, &str)]) -> Memory {
    memory(Content::Semantic(Concept {
        key: key.into(),
        facts: facts.iter().map(|(k, v)| (k.to_string(), FactValue::Text(v.to_string()))).collect(),
    }))
}

fn words(e: &Example) -> strata_core::Result<usize> {
    Ok(e.question.split_whitespace().count() + e.answer.split_whitespace().count())
}

#[test]
fn facts_and_procedures_become_questions_with_held_out_phrasings_and_their_sources() {
    let maya = fact("maya_chen", &[("dog's name", "Biscuit"), ("favourite_food", "ramen")]);
    let steps = memory(Content::Procedural(Procedure {
        name: "water_the_ferns".into(),
        steps: vec!["1. Fill the can".into(), "- Water at the base".into()],
        context: None,
    }));
    let set = Dataset::from_memories(&[maya.clone(), steps.clone()], &words, 128).unwrap();
    assert!(set.problems.is_empty(), "{:?}", set.problems);
    let facts: Vec<_> = set.examples.iter().filter(|e| e.kind == Kind::Fact).collect();
    assert_eq!(facts.len(), 2 * (TRAIN_TEMPLATES.len() + HELDOUT_TEMPLATES.len()));
    let q = facts.iter().find(|e| e.question == "What is Maya Chen's dog's name?").expect("the first template");
    assert_eq!(q.answer, "Maya Chen's dog's name is Biscuit.");
    assert_eq!(q.sources, vec![maya.id.to_string()]);
    assert!(set.examples.iter().any(|e| e.question == "What's the favourite food of Maya Chen?"));
    let procedure = set.examples.iter().find(|e| e.kind == Kind::Procedure).unwrap();
    assert_eq!(procedure.answer, "To water the ferns: 1. Fill the can 2. Water at the base");
    assert_eq!(procedure.sources, vec![steps.id.to_string()]);
    // A procedure names no value to check an answer by: each of its phrasings is learned.
    assert!(set.examples.iter().filter(|e| e.kind == Kind::Procedure).all(|e| e.split == Split::Train));
    // No held-out question is ever trained on.
    let trained: HashSet<&str> = set.train().map(|e| e.question.as_str()).collect();
    assert!(set.heldout().count() >= 6);
    assert!(set.heldout().all(|e| !trained.contains(e.question.as_str()) && e.split == Split::Heldout));
    assert_eq!(set.facts().len(), 2);
    let mut sources = vec![maya.id.to_string(), steps.id.to_string()];
    sources.sort();
    assert_eq!(set.sources(), sources);
}

#[test]
fn validation_reports_contradictions_duplicates_long_and_unusable_memories() {
    let a = fact("rex", &[("owner", "Maya")]);
    let b = fact("rex", &[("owner", "Tom")]);
    let same = fact("rex", &[("owner", "Maya")]);
    let long = fact("essay", &[("text", &"word ".repeat(200))]);
    let episode = memory(Content::Episodic(strata_core::Episode {
        occurred_at: Utc::now(),
        body: strata_core::EpisodeBody::Utterance { speaker: "Maya".into(), text: "hello".into() },
        concepts: vec![],
        extra: Default::default(),
    }));
    let set = Dataset::from_memories(&[a.clone(), b.clone(), same, long, episode.clone()], &words, 64).unwrap();
    let contradiction = set.blocking();
    assert_eq!(contradiction.len(), 1, "{:?}", set.problems);
    match contradiction[0] {
        Problem::Contradiction { subject, attribute, values } => {
            assert_eq!((subject.as_str(), attribute.as_str()), ("Rex", "owner"));
            let vs: Vec<&str> = values.iter().map(|(v, _)| v.as_str()).collect();
            assert_eq!(vs, ["Maya", "Tom"]);
        }
        p => panic!("{p:?}"),
    }
    let dups = set.problems.iter().filter(|p| matches!(p, Problem::Duplicate { .. })).count();
    // The repeated fact's questions, and the contradicting one's (the same questions).
    assert_eq!(dups, 2 * (TRAIN_TEMPLATES.len() + HELDOUT_TEMPLATES.len()));
    assert!(set.problems.iter().any(|p| matches!(p, Problem::TooLong { limit: 64, .. })));
    assert!(
        set.problems.iter().any(|p| matches!(p, Problem::Unused { source, .. } if *source == episode.id.to_string()))
    );
    assert!(set.examples.iter().all(|e| !e.answer.contains("word word")), "the long one is left out");
    assert!(contradiction[0].describe().contains("'Maya'"), "{}", contradiction[0].describe());
}

#[test]
fn a_set_round_trips_through_json_lines_and_a_bad_line_is_named() {
    let set = Dataset::from_memories(&[fact("tom", &[("cat's name", "Pixel")])], &words, 128).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("set.jsonl");
    set.write(&file).unwrap();
    let back = Dataset::read(&file).unwrap();
    assert_eq!(back.examples, set.examples);
    assert_eq!(back.hash(), set.hash());
    assert_eq!(set.hash().len(), 64);
    std::fs::write(&file, format!("{}\n{{\"question\": 3}}\n", set.to_jsonl().lines().next().unwrap())).unwrap();
    let err = Dataset::read(&file).unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
}
