//! Embeddings: stored per model, indexed with sqlite-vec, kept in step with content, forget
//! and replay.

use strata_core::*;

use crate::support::*;

const E: HashEmbedder = HashEmbedder { id: "hash-64", dim: 64 };

fn index_rows(f: &Fixture) -> i64 {
    let c = rusqlite::Connection::open(f.path()).unwrap();
    c.query_row("SELECT count(*) FROM memory_vectors", [], |r| r.get(0)).unwrap()
}

fn user_filter() -> Filter {
    Filter { user_id: Some("default".into()), ..Default::default() }
}

fn nearest(f: &Fixture, q: &str) -> Vec<String> {
    f.store
        .vector_search(&E, q, &user_filter(), 3)
        .unwrap()
        .into_iter()
        .map(|h| h.memory.content.key().unwrap_or("episode").to_string())
        .collect()
}

fn embed_all(f: &mut Fixture) -> usize {
    let mut n = 0;
    loop {
        let done = f.store.embed_pending(&E, 2).unwrap();
        if done == 0 {
            return n;
        }
        n += done;
    }
}

#[test]
fn embedding_is_resumable_and_search_finds_by_meaning_within_the_user() {
    let mut f = Fixture::new();
    f.add(concept("garden", &[("plants", "tomatoes basil and peppers grow in the garden")]));
    f.add(concept("music", &[("plays", "piano lessons every tuesday evening")]));
    f.add(concept("travel", &[("next", "train to Porto in October")]));
    let bob = NewMemory { scope: Scope::user("bob"), ..Default::default() };
    f.store.create(concept("bobs_garden", &[("plants", "tomatoes basil garden")]), bob, &user()).unwrap();

    assert_eq!(f.store.pending_embeddings(&E).unwrap(), 4);
    assert!(nearest(&f, "tomatoes").is_empty(), "no index before the first embedding pass");
    assert_eq!(f.store.embed_pending(&E, 2).unwrap(), 2, "a batch at a time");
    assert_eq!(f.store.pending_embeddings(&E).unwrap(), 2);
    assert_eq!(embed_all(&mut f), 2);
    let hits = f.store.vector_search(&E, "which tomatoes grow in the garden", &user_filter(), 3).unwrap();
    assert_eq!(hits[0].memory.content.key(), Some("garden"), "bob's garden is another user's");
    assert!(hits[0].similarity > 0.5 && hits.windows(2).all(|w| w[0].similarity >= w[1].similarity));
    assert!(hits.iter().all(|h| h.memory.scope.user_id == "default"));
    let semantic_only = Filter { kinds: vec![MemoryKind::Episodic], ..user_filter() };
    assert!(f.store.vector_search(&E, "garden", &semantic_only, 3).unwrap().is_empty(), "filters apply");
    assert!(f.store.vector_search(&E, "garden", &Filter::default(), 3).is_err(), "a user scope is required");
}

#[test]
fn changed_content_is_embedded_again_and_forgotten_vectors_are_erased() {
    let mut f = Fixture::new();
    let m = f.add(concept("hobby", &[("is", "piano lessons")]));
    f.add(concept("other", &[("is", "garden work")]));
    embed_all(&mut f);
    assert_eq!(nearest(&f, "piano")[0], "hobby");
    f.store
        .transact(|tx| tx.update_content(m.id, concept("hobby", &[("is", "rock climbing")]), Expected::Any, &user()))
        .unwrap();
    assert_eq!(f.store.pending_embeddings(&E).unwrap(), 1, "the old vector described the old content");
    embed_all(&mut f);
    assert_eq!(nearest(&f, "climbing")[0], "hobby");
    assert_eq!(index_rows(&f), 2);
    f.store.forget(m.id, &user()).unwrap();
    assert_eq!(index_rows(&f), 1);
    assert_eq!(nearest(&f, "climbing"), ["other"]);
}

#[test]
fn replay_keeps_vectors_and_a_new_model_re_embeds_everything() {
    let mut f = Fixture::new();
    for (k, v) in [
        ("a", "sunrise painting by the lake"),
        ("b", "marathon training in Lisbon"),
        ("c", "adoption agency interview"),
    ] {
        f.add(concept(k, &[("note", v)]));
    }
    embed_all(&mut f);
    f.store.replay().unwrap();
    assert_eq!(f.store.pending_embeddings(&E).unwrap(), 0, "replay does not lose vectors");
    assert_eq!(nearest(&f, "marathon in Lisbon")[0], "b", "the index follows renumbered rows");

    let other = HashEmbedder { id: "hash-32", dim: 32 };
    assert_eq!(f.store.pending_embeddings(&other).unwrap(), 3);
    assert_eq!(f.store.embed_pending(&other, 10).unwrap(), 3);
    let hits = f.store.vector_search(&other, "adoption interview", &user_filter(), 1).unwrap();
    assert_eq!(hits[0].memory.content.key(), Some("c"));
    assert!(
        f.store.vector_search(&E, "adoption", &user_filter(), 1).unwrap().is_empty(),
        "the index is the new model's"
    );
}

#[test]
fn hybrid_search_fuses_both_lists_and_says_why() {
    let mut f = Fixture::new();
    f.add(concept("exact", &[("note", "zebra crossing near the school")]));
    f.add(concept("similar", &[("note", "pedestrians crossing near school gates")]));
    f.add(concept("unrelated", &[("note", "quarterly revenue report")]));
    embed_all(&mut f);
    let got =
        f.store.hybrid_search(Some(&E), "zebra crossing school", &user_filter(), 3, HybridOptions::default()).unwrap();
    assert_eq!(got[0].memory.content.key(), Some("exact"), "first in both lists");
    let b = got[0].breakdown;
    assert_eq!((b.keyword_rank, b.vector_rank), (Some(1), Some(1)));
    assert!((b.fused - 2.0 / 61.0).abs() < 1e-9);
    assert!(b.keyword_score.unwrap() > 0.0 && b.similarity.unwrap() > 0.5);
    assert!(got.windows(2).all(|w| w[0].breakdown.fused >= w[1].breakdown.fused));
    // Without an embedder it is the keyword search, with breakdowns.
    let kw = f.store.hybrid_search(None, "zebra", &user_filter(), 3, HybridOptions::default()).unwrap();
    assert_eq!(kw.len(), 1);
    assert_eq!(kw[0].breakdown.vector_rank, None);
}
