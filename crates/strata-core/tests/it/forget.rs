//! Forget really forgets: the content leaves the log, the projections, the index and the file.

use crate::support::*;
use strata_core::*;

fn file_contains(path: &std::path::Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let p = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
        if let Ok(bytes) = std::fs::read(&p) {
            let hay = String::from_utf8_lossy(&bytes).to_lowercase();
            if hay.contains(&needle.to_lowercase()) {
                found.push(p.display().to_string());
            }
        }
    }
    found
}

#[test]
fn forgotten_text_is_absent_from_every_byte_of_the_database() {
    let mut f = Fixture::new();
    let secret = "zanzibarquokka";
    let later = "marmalade wombatfeather";
    // A neighbour that stays, so pages are shared with live data.
    let keep = f.add(concept("tea", &[("likes", "green tea in the morning")]));
    let m = f.add(concept("diary", &[("entry", &format!("my password hint is {secret}"))]));
    f.store.transact(|tx| tx.tag(m.id, "privatetagxyzzy", &user())).unwrap();
    f.store
        .transact(|tx| {
            tx.update_content(
                m.id,
                concept("diary", &[("entry", &format!("{later} {}", "x".repeat(6000)))]),
                Expected::Any,
                &user(),
            )
        })
        .unwrap();
    f.store.note_access([m.id]).unwrap();
    f.store.flush_accesses().unwrap();
    f.store.checkpoint().unwrap();
    assert!(!file_contains(&f.path(), secret).is_empty(), "the test must see the secret before forgetting");

    let outcome = f.store.forget(m.id, &user()).unwrap();
    assert_eq!(
        outcome,
        ForgetOutcome { redacted_events: 4, retired_adapters: vec![], derived: vec![], scrubbed: true }
    );
    // The raw words, and the stems the index keeps ("wombatfeath", "marmalad").
    for needle in [secret, "wombatfeath", "marmalad", "privatetagxyzzy", "password hint"] {
        assert_eq!(file_contains(&f.path(), needle), Vec::<String>::new(), "'{needle}' survived forget");
    }
    for stem in ["zanzibarquokka", "wombatfeath", "marmalad"] {
        assert_eq!(index_terms_like(&f, stem), Vec::<String>::new(), "index term '{stem}' survived forget");
    }
    // Gone from reads, search and history payloads; the neighbour is intact.
    assert!(matches!(f.store.get(m.id), Err(Error::Forgotten { .. })));
    assert!(f.store.search(secret, &Filter::default(), 10, ("[", "]")).unwrap().is_empty());
    assert!(f.store.search("wombatfeather", &Filter::default(), 10, ("[", "]")).unwrap().is_empty());
    let hist = f.store.history(m.id).unwrap();
    assert_eq!(hist.len(), 5);
    assert!(hist[..4].iter().all(|e| matches!(e.change, Change::Redacted { .. }) && e.redacted_at.is_some()));
    assert!(matches!(hist[4].change, Change::Forgotten { redacted_events: 4 }));
    assert!(matches!(f.store.get_as_of(m.id, AsOf::Seq(2)), Err(Error::Forgotten { .. })));
    assert_eq!(f.store.get(keep.id).unwrap().content, concept("tea", &[("likes", "green tea in the morning")]));
    assert_eq!(f.store.search("green", &Filter::default(), 10, ("[", "]")).unwrap().len(), 1);

    // Writes to a forgotten memory are refused; forgetting twice says so.
    assert!(matches!(f.store.transact(|tx| tx.tag(m.id, "again", &user())), Err(Error::Forgotten { .. })));
    assert!(matches!(f.store.forget(m.id, &user()), Err(Error::Forgotten { .. })));
    // Replay agrees, and the key is free again.
    let before = f.store.snapshot().unwrap();
    f.store.replay().unwrap();
    assert_eq!(f.store.snapshot().unwrap(), before);
    f.add(concept("diary", &[("entry", "a fresh start")]));
}

/// The index terms of `text` (porter stems) that the full-text index still holds.
fn index_terms_like(f: &Fixture, stem: &str) -> Vec<String> {
    let c = rusqlite::Connection::open(f.path()).unwrap();
    c.execute_batch("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, memory_fts, instance)")
        .unwrap();
    let mut stmt = c.prepare("SELECT DISTINCT term FROM temp.vocab WHERE term LIKE ?1").unwrap();
    stmt.query_map([format!("%{stem}%")], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// Regression: replay rebuilt the index without secure-delete, so older index segments kept
/// a memory's terms after it was later forgotten.
#[test]
fn forget_after_replay_leaves_no_index_terms_or_bytes() {
    let mut f = Fixture::new();
    for i in 0..50 {
        f.add(concept(&format!("filler_{i}"), &[("text", "ordinary words about gardens")]));
    }
    // Words the porter stemmer leaves as they are, so the index holds them verbatim.
    let m = f.add(concept("diary", &[("entry", "qzxvortexa blimfrotzy")]));
    f.store.replay().unwrap();
    f.add(concept("after", &[("text", "more ordinary words")]));
    f.store.replay().unwrap();
    assert!(!index_terms_like(&f, "qzxvortexa").is_empty(), "the test must see the term first");
    f.store.forget(m.id, &user()).unwrap();
    assert_eq!(index_terms_like(&f, "qzxvortexa"), Vec::<String>::new());
    assert_eq!(index_terms_like(&f, "blimfrotzy"), Vec::<String>::new());
    for needle in ["qzxvortexa", "blimfrotzy"] {
        assert_eq!(file_contains(&f.path(), needle), Vec::<String>::new(), "'{needle}' survived forget");
    }
}

/// While another process holds a read open, the WAL cannot be truncated: forget says the file
/// is not scrubbed yet, and the next checkpoint after the reader finishes scrubs it.
#[test]
fn forget_says_when_a_reader_delays_scrubbing_the_file() {
    let mut f = Fixture::new();
    let m = f.add(concept("diary", &[("entry", "qzxplumbata")]));
    let reader = rusqlite::Connection::open(f.path()).unwrap();
    reader.execute_batch("BEGIN; SELECT count(*) FROM events;").unwrap();
    let outcome = f.store.forget(m.id, &user()).unwrap();
    assert!(!outcome.scrubbed, "a reader holding old frames blocks the truncation");
    assert!(matches!(f.store.get(m.id), Err(Error::Forgotten { .. })), "the content is gone from every query");
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    // Once the read ends the scrub completes: here, or in the background thread `forget`
    // started (whose checkpoint may be running at this moment — under emulation it often is —
    // and then this one reports itself blocked and tries again).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !f.store.checkpoint().unwrap() {
        assert!(std::time::Instant::now() < deadline, "the WAL was never truncated after the read ended");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(file_contains(&f.path(), "qzxplumbata"), Vec::<String>::new());
}

/// Embeddings can be inverted back to text: a forgotten memory's vectors must leave the file.
#[test]
fn forget_erases_the_memorys_vectors_from_the_file() {
    struct Marker;
    impl Embedder for Marker {
        fn model_id(&self) -> &str {
            "marker"
        }
        fn dim(&self) -> usize {
            8
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            // Every component's bytes spell "Zq7!", so the vector is findable in the file.
            Ok(texts.iter().map(|_| vec![f32::from_le_bytes(*b"Zq7!"); 8]).collect())
        }
    }
    let mut f = Fixture::new();
    let m = f.add(concept("diary", &[("entry", "private")]));
    f.store.embed_pending(&Marker, 10).unwrap();
    f.store.checkpoint().unwrap();
    assert!(!file_contains(&f.path(), "Zq7!Zq7!Zq7!").is_empty(), "the test must see the vector first");
    f.store.forget(m.id, &user()).unwrap();
    assert_eq!(file_contains(&f.path(), "Zq7!Zq7!Zq7!"), Vec::<String>::new());
}
