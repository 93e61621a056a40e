//! Analytics' usage records on both engines: a recall and its results, what the answer drew
//! on, what people said, compaction passes; pruned, cleared, and erased by forget.

use strata_core::analytics::*;
use strata_core::*;

use crate::support::{Fixture, on_both_engines, t0, user, utterance};

fn hit(memory: MemoryId, score: f64, in_prompt: bool) -> RecallHit {
    let parts = ScoreParts {
        matched: score - 0.1,
        similarity: Some(0.75),
        time: 0.0,
        recency: 0.05,
        frequency: 0.0,
        importance: 0.05,
        tier: 0.0,
    };
    RecallHit { memory, score, parts: Some(parts), in_prompt, used: None }
}

fn prompt() -> PromptRecord {
    PromptRecord { model: "on-device".into(), budget: 2048, used: 300, ..Default::default() }
}

/// Records a prompt recall of `hits` for "where does Ana live".
fn record(f: &mut Fixture, hits: Vec<RecallHit>) -> i64 {
    let r = RecallRecord {
        user_id: "default",
        agent_id: None,
        client: Some("test"),
        purpose: Purpose::Prompt,
        query: "where does Ana live",
        latency_ms: 12.5,
        hits,
        prompt: Some(prompt()),
    };
    f.store.record_recall(&r, None).unwrap()
}

fn count(f: &Fixture, table: &str) -> i64 {
    f.count_rows(&format!("SELECT count(*) FROM {table}"))
}

on_both_engines! {
    fn a_recall_its_answer_and_what_people_said_are_kept(f: &mut Fixture) {
        let lisbon = f.add(utterance("Ana", "I live in Lisbon now.", t0())).id;
        let tea = f.add(utterance("Ana", "I drink green tea.", t0())).id;
        let answer = f.add(utterance("assistant", "Ana lives in Lisbon.", t0())).id;
        let first = record(f, vec![hit(lisbon, 0.9, true), hit(tea, 0.4, true)]);
        let second = record(f, vec![hit(tea, 0.3, false)]);
        assert!(second > first, "ids grow: {first} then {second}");
        assert_eq!((count(f, "recalls"), count(f, "recall_hits")), (2, 3));

        f.store.record_answer(first, &[lisbon], Some(answer)).unwrap();
        let (kept, included) = f.store.prompt_of_answer(answer).unwrap().expect("the answer's prompt");
        assert_eq!(kept, prompt());
        assert_eq!(included, vec![(lisbon, 0.9), (tea, 0.4)]);
        assert_eq!(f.count_rows("SELECT count(*) FROM recall_hits WHERE used = 1"), 1);
        assert_eq!(f.count_rows("SELECT count(*) FROM recall_hits WHERE used = 0"), 1);
        assert_eq!(f.store.prompt_of_answer(tea).unwrap(), None, "no answer recorded as it");

        f.store.record_feedback("default", answer, About::Answer, true).unwrap();
        let pass = CompactionPass { full: true, formed: 2, concepts: 2, ..Default::default() };
        f.store.record_compaction("default", &pass).unwrap();
        let passes = f.store.compaction_passes("default", &Range::default(), 10).unwrap();
        assert_eq!((passes.len(), passes[0].formed, passes[0].at.as_str()), (1, 2, "2026-01-31T12:00:00+00:00"));

        // A recall that found a memory forgotten meanwhile is not kept: forgetting wins.
        f.store.forget(tea, &user()).unwrap();
        assert_eq!((count(f, "recalls"), count(f, "recall_hits")), (0, 0), "every recall that found it went");
        let late = RecallRecord {
            user_id: "default",
            agent_id: None,
            client: None,
            purpose: Purpose::Search,
            query: "tea",
            latency_ms: 1.0,
            hits: vec![hit(tea, 0.5, false)],
            prompt: None,
        };
        assert!(matches!(f.store.record_recall(&late, None), Err(Error::Forgotten { .. })));
        f.store.forget(answer, &user()).unwrap();
        assert_eq!(count(f, "feedback"), 0, "what was said of a forgotten answer went with it");
    }

    fn usage_records_are_pruned_by_age_and_cleared_per_person(f: &mut Fixture) {
        let m = f.add(utterance("Ana", "I live in Lisbon now.", t0())).id;
        record(f, vec![hit(m, 0.9, true)]);
        f.store.record_feedback("default", m, About::Memory, false).unwrap();
        f.store.record_compaction("default", &CompactionPass::default()).unwrap();
        f.tick(3600);
        record(f, vec![hit(m, 0.8, false)]);
        assert_eq!(f.store.prune_recalls(t0() + chrono::Duration::seconds(60)).unwrap(), 1);
        assert_eq!((count(f, "recalls"), count(f, "recall_hits"), count(f, "feedback")), (1, 1, 0));
        assert_eq!(count(f, "compaction_passes"), 0);
        f.store.record_feedback("default", m, About::Memory, true).unwrap();
        assert_eq!(f.store.clear_recalls("someone-else").unwrap(), 0);
        assert_eq!(f.store.clear_recalls("default").unwrap(), 1);
        assert_eq!((count(f, "recalls"), count(f, "recall_hits"), count(f, "feedback")), (0, 0, 0));
    }
}

on_both_engines! {
    fn stale_and_unembedded_memories_are_counted_and_listed_oldest_first(f: &mut Fixture) {
        let a = f.add(utterance("Ana", "I live in Lisbon now.", t0())).id;
        f.tick(60);
        let b = f.add(utterance("Ana", "I drink green tea.", t0())).id;
        assert_eq!(f.store.unembedded("default", "hash", 10).unwrap(), (2, vec![a, b]));
        assert_eq!(f.store.unembedded("default", "hash", 1).unwrap(), (2, vec![a]), "the count is of all");
        assert_eq!(f.store.unembedded("someone-else", "hash", 10).unwrap(), (0, vec![]));
        let later = t0() + chrono::Duration::hours(1);
        assert_eq!(f.store.stale("default", later, 10).unwrap(), (2, vec![a, b]));
        f.store.transact(|tx| tx.pin(a, &user())).unwrap();
        record(f, vec![hit(b, 0.5, false)]);
        assert_eq!(f.store.stale("default", later, 10).unwrap(), (0, vec![]), "pinned, or recalled");
    }
}
