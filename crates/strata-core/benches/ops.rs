//! `cargo bench -p strata-core --bench ops`: per-operation timings with divan (median, mean,
//! spread over many samples) for the store's hot paths. The at-scale scenarios (100k memories,
//! 1M-event replay, search percentiles) are in `benches/store.rs`.

use std::sync::Arc;

use divan::Bencher;
use strata_core::*;

fn main() {
    divan::main();
}

fn meta() -> EventMeta {
    EventMeta::actor(Actor::User)
}

const WORDS: [&str; 16] = [
    "garden", "tomato", "piano", "lesson", "marathon", "Lisbon", "oolong", "tea", "sister", "birthday", "hiking",
    "mountain", "adoption", "agency", "painting", "sunrise",
];

fn content(i: usize) -> Content {
    let text: Vec<&str> = (0..14).map(|k| WORDS[(i * 7 + k * 3) % WORDS.len()]).collect();
    Content::Episodic(Episode {
        occurred_at: chrono::DateTime::from_timestamp(1_700_000_000 + i as i64, 0).unwrap(),
        body: EpisodeBody::Utterance { speaker: "Mel".into(), text: text.join(" ") },
        concepts: vec![],
        extra: Default::default(),
    })
}

/// A store on disk with `n` memories.
fn store_with(dir: &tempfile::TempDir, n: usize) -> Store {
    let mut store = Store::open(dir.path().join("ops.db")).unwrap();
    store
        .transact(|tx| {
            for i in 0..n {
                tx.create(content(i), NewMemory::default(), &meta())?;
            }
            Ok(())
        })
        .unwrap();
    store
}

/// One memory created in its own transaction (a commit each).
#[divan::bench(sample_count = 200)]
fn create_committed(b: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with(&dir, 1000);
    let mut i = 1000;
    b.bench_local(|| {
        i += 1;
        store.create(content(i), NewMemory::default(), &meta()).unwrap()
    });
}

/// 1,000 memories created in one transaction.
#[divan::bench(sample_count = 20)]
fn create_batch_of_1000(b: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with(&dir, 1000);
    let mut next = 1000;
    b.bench_local(|| {
        store
            .transact(|tx| {
                for _ in 0..1000 {
                    next += 1;
                    tx.create(content(next), NewMemory::default(), &meta())?;
                }
                Ok(())
            })
            .unwrap()
    });
}

/// 1,000 tag events on existing memories in one transaction.
#[divan::bench(sample_count = 20)]
fn tag_batch_of_1000(b: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with(&dir, 1000);
    let ids: Vec<MemoryId> = store.snapshot().unwrap().memories.iter().map(|m| m.id).collect();
    let mut round = 0;
    b.bench_local(|| {
        round += 1;
        let tag = format!("t{round}");
        store
            .transact(|tx| {
                for id in &ids {
                    tx.tag(*id, &tag, &meta())?;
                }
                Ok(())
            })
            .unwrap()
    });
}

/// A keyword search over 10,000 memories (top 10 with snippets).
#[divan::bench(args = ["piano lesson", "tea", "adoption agency birthday"])]
fn search_10k(b: Bencher, query: &str) {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(&dir, 10_000);
    b.bench_local(|| store.search(query, &Filter::default(), 10, ("[", "]")).unwrap());
}

/// Get by id on a store of 10,000.
#[divan::bench]
fn get_by_id_10k(b: Bencher) {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(&dir, 10_000);
    let ids: Vec<MemoryId> = store.snapshot().unwrap().memories.iter().map(|m| m.id).collect();
    let mut i = 0;
    b.bench_local(|| {
        i = (i + 7919) % ids.len();
        store.get(ids[i]).unwrap()
    });
}

/// Replay of 10,000 events (an in-memory database, so this is the fold and projection work).
#[divan::bench(sample_count = 10)]
fn replay_10k_events(b: Bencher) {
    let mut store = Store::in_memory(Arc::new(SystemClock)).unwrap();
    store
        .transact(|tx| {
            for i in 0..2000 {
                let id = tx.create(content(i), NewMemory::default(), &meta())?.id;
                for t in ["a", "b", "c", "d"] {
                    tx.tag(id, t, &meta())?;
                }
            }
            Ok(())
        })
        .unwrap();
    b.bench_local(|| store.replay().unwrap());
}
