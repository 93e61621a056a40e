//! An episode in a session is indexed with the words of the episode before it, so a short
//! answer is found by its question; the context follows inserts out of order, edits, forget,
//! replay and the migration that introduced it.

use chrono::Duration;
use strata_core::*;

use crate::support::*;

fn in_session(f: &mut Fixture, session: &str, agent: Option<&str>, speaker: &str, text: &str, secs: i64) -> Memory {
    let scope = Scope { user_id: "local".into(), agent_id: agent.map(Into::into), session_id: Some(session.into()) };
    f.store
        .create(
            utterance(speaker, text, t0() + Duration::seconds(secs)),
            NewMemory { scope, ..Default::default() },
            &user(),
        )
        .unwrap()
}

fn found(f: &Fixture, query: &str) -> Vec<MemoryId> {
    f.store.search_ranked(query, &Filter::default(), 10).unwrap().into_iter().map(|h| h.memory.id).collect()
}

fn context_of(f: &Fixture, id: MemoryId) -> String {
    let snap = f.store.snapshot().unwrap();
    snap.fts.into_iter().find(|row| row.0 == id.to_string()).map(|row| row.3).unwrap()
}

#[test]
fn an_answer_is_found_by_the_words_of_its_question() {
    let mut f = Fixture::new();
    let q = in_session(&mut f, "s1", None, "Ana", "Did you ever adopt the greyhound?", 0);
    let a = in_session(&mut f, "s1", None, "Ben", "Yes, last weekend! She sleeps all day.", 1);
    // Another session's first turn has no context.
    let other = in_session(&mut f, "s2", None, "Ben", "Good morning", 2);
    assert_eq!(context_of(&f, q.id), "");
    assert_eq!(context_of(&f, a.id), "Did you ever adopt the greyhound?");
    assert_eq!(context_of(&f, other.id), "");
    // The question's own words rank it first; its answer comes next, by context alone.
    assert_eq!(found(&f, "greyhound adopted"), vec![q.id, a.id]);
    // The snippet never shows another memory's words.
    let hits = f.store.search("greyhound", &Filter::default(), 10, ("[", "]")).unwrap();
    assert!(!hits[1].snippet.contains("greyhound"), "{}", hits[1].snippet);
}

#[test]
fn context_follows_time_order_edits_and_forget() {
    let mut f = Fixture::new();
    let third = in_session(&mut f, "s1", None, "Ana", "third", 30);
    let first = in_session(&mut f, "s1", None, "Ana", "first", 10);
    assert_eq!(context_of(&f, third.id), "first");
    let second = in_session(&mut f, "s1", None, "Ben", "second", 20);
    assert_eq!(
        (context_of(&f, first.id), context_of(&f, second.id), context_of(&f, third.id)),
        ("".into(), "first".into(), "second".into())
    );

    // Moving `first` after `third` in time re-links all three.
    let moved = utterance("Ana", "first, told late", t0() + Duration::seconds(40));
    f.store.transact(|tx| tx.update_content(first.id, moved, Expected::Any, &user())).unwrap();
    assert_eq!(context_of(&f, second.id), "");
    assert_eq!(context_of(&f, third.id), "second");
    assert_eq!(context_of(&f, first.id), "third");

    // Forgetting a turn removes its words from its successor's row; replay agrees.
    f.store.forget(third.id, &user()).unwrap();
    assert_eq!(context_of(&f, first.id), "second");
    assert!(found(&f, "third").is_empty());
    let live = f.store.snapshot().unwrap();
    f.store.replay().unwrap();
    assert_eq!(f.store.snapshot().unwrap(), live);
}

#[test]
fn another_agents_private_turn_is_never_context() {
    let mut f = Fixture::new();
    in_session(&mut f, "s1", Some("scout"), "scout", "the vault code is 4471", 0);
    let shared = in_session(&mut f, "s1", None, "Ana", "noted", 1);
    let own = in_session(&mut f, "s1", Some("scout"), "scout", "done", 2);
    assert_eq!(context_of(&f, shared.id), "");
    assert_eq!(context_of(&f, own.id), "the vault code is 4471");
}

#[test]
fn a_version_1_database_gets_its_context_on_open() {
    let mut f = Fixture::new();
    let q = in_session(&mut f, "s1", None, "Ana", "Did you ever adopt the greyhound?", 0);
    let a = in_session(&mut f, "s1", None, "Ben", "Yes, last weekend!", 1);
    let fresh = f.store.snapshot().unwrap();
    let path = f.path();
    drop(f.store);
    {
        // Put the file back into its version-1 shape: the two-column index, no session index.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "DROP TABLE memory_fts; DROP INDEX memories_session; DROP TABLE adapter_events; DROP TABLE adapters;
             DROP TABLE extraction_reads; DROP TABLE extraction_decisions; DROP TABLE recall_hits; DROP TABLE recalls;
             DROP TABLE feedback; DROP INDEX events_moves; DROP TRIGGER memory_counts_insert;
             DROP TRIGGER memory_counts_delete; DROP TRIGGER memory_counts_update;
             DROP TABLE memory_counts; DROP TABLE memory_days; DROP TABLE vector_counts;
             DROP TRIGGER vector_counts_insert; DROP TRIGGER vector_counts_delete;
             DROP TRIGGER vector_counts_memory_insert; DROP TRIGGER vector_counts_memory_delete;
             DROP TABLE compaction_passes; DROP TABLE training_candidates; DROP TABLE training_candidate_events; DROP TABLE training_runs; DROP TABLE training_edits; DROP TABLE adapter_checks; DROP TABLE people;
             DROP TABLE dataset_vectors; DROP TABLE dataset_chunks; DROP TABLE dataset_fts; DROP TABLE datasets;
             DROP TABLE agent_steps; DROP TABLE agent_runs; DROP TABLE agent_versions; DROP TABLE agents;
             DROP TABLE adapter_answers; DROP TABLE schedule_log;
             CREATE VIRTUAL TABLE memory_fts USING fts5 (title, body, tokenize = 'porter unicode61 remove_diacritics 2');
             INSERT INTO memory_fts (rowid, title, body) SELECT rid, '', '' FROM memories;
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let store = Store::open_with_clock(&path, f.clock.clone()).unwrap();
    let f = Fixture { dir: f.dir, url: None, clock: f.clock, store };
    assert_eq!(f.store.snapshot().unwrap(), fresh);
    assert_eq!(found(&f, "greyhound"), vec![q.id, a.id]);
}
