//! Embeddings: stored per model, indexed with sqlite-vec, kept in step with content, forget
//! and replay.

use strata_core::*;

use crate::support::*;

const E: HashEmbedder = HashEmbedder { id: "hash-64", dim: 64 };

fn index_rows(f: &Fixture) -> i64 {
    f.count_rows("SELECT count(*) FROM memory_vectors")
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

on_both_engines! {
    fn embedding_is_resumable_and_search_finds_by_meaning_within_the_user(f: &mut Fixture) {
        f.add(concept("garden", &[("plants", "tomatoes basil and peppers grow in the garden")]));
        f.add(concept("music", &[("plays", "piano lessons every tuesday evening")]));
        f.add(concept("travel", &[("next", "train to Porto in October")]));
        let bob = NewMemory { scope: Scope::user("bob"), ..Default::default() };
        f.store.create(concept("bobs_garden", &[("plants", "tomatoes basil garden")]), bob, &user()).unwrap();

        assert_eq!(f.store.pending_embeddings(&E).unwrap(), 4);
        assert!(nearest(f, "tomatoes").is_empty(), "no index before the first embedding pass");
        assert_eq!(f.store.embed_pending(&E, 2).unwrap(), 2, "a batch at a time");
        assert_eq!(f.store.pending_embeddings(&E).unwrap(), 2);
        assert_eq!(embed_all(f), 2);
        let hits = f.store.vector_search(&E, "which tomatoes grow in the garden", &user_filter(), 3).unwrap();
        assert_eq!(hits[0].memory.content.key(), Some("garden"), "bob's garden is another user's");
        assert!(hits[0].similarity > 0.5 && hits.windows(2).all(|w| w[0].similarity >= w[1].similarity));
        assert!(hits.iter().all(|h| h.memory.scope.user_id == "default"));
        let semantic_only = Filter { kinds: vec![MemoryKind::Episodic], ..user_filter() };
        assert!(f.store.vector_search(&E, "garden", &semantic_only, 3).unwrap().is_empty(), "filters apply");
        assert!(f.store.vector_search(&E, "garden", &Filter::default(), 3).is_err(), "a user scope is required");
    }
}

on_both_engines! {
    fn changed_content_is_embedded_again_and_forgotten_vectors_are_erased(f: &mut Fixture) {
        let m = f.add(concept("hobby", &[("is", "piano lessons")]));
        f.add(concept("other", &[("is", "garden work")]));
        embed_all(f);
        assert_eq!(nearest(f, "piano")[0], "hobby");
        f.store
            .transact(|tx| tx.update_content(m.id, concept("hobby", &[("is", "rock climbing")]), Expected::Any, &user()))
            .unwrap();
        assert_eq!(f.store.pending_embeddings(&E).unwrap(), 1, "the old vector described the old content");
        embed_all(f);
        assert_eq!(nearest(f, "climbing")[0], "hobby");
        assert_eq!(index_rows(f), 2);
        f.store.forget(m.id, &user()).unwrap();
        assert_eq!(index_rows(f), 1);
        assert_eq!(nearest(f, "climbing"), ["other"]);
    }
}

on_both_engines! {
    fn replay_keeps_vectors_and_a_new_model_re_embeds_everything(f: &mut Fixture) {
        for (k, v) in [
            ("a", "sunrise painting by the lake"),
            ("b", "marathon training in Lisbon"),
            ("c", "adoption agency interview"),
        ] {
            f.add(concept(k, &[("note", v)]));
        }
        embed_all(f);
        f.store.replay().unwrap();
        assert_eq!(f.store.pending_embeddings(&E).unwrap(), 0, "replay does not lose vectors");
        assert_eq!(nearest(f, "marathon in Lisbon")[0], "b", "the index follows renumbered rows");

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
}

on_both_engines! {
    fn a_second_model_is_filled_ahead_then_searched_and_switching_back_embeds_nothing(f: &mut Fixture) {
        for (k, v) in [("a", "sunrise painting by the lake"), ("b", "marathon training in Lisbon")] {
            f.add(concept(k, &[("note", v)]));
        }
        embed_all(f);
        let other = HashEmbedder { id: "hash-32", dim: 32 };
        assert_eq!(f.store.embed_ahead(&other, 1).unwrap(), 1, "a batch at a time");
        assert_eq!(f.store.searched_model().unwrap().as_deref(), Some("hash-64"), "search stays on the old model");
        assert_eq!(nearest(f, "marathon in Lisbon")[0], "b");
        assert_eq!(f.store.embed_ahead(&other, 10).unwrap(), 1);
        assert_eq!(f.store.embed_ahead(&other, 10).unwrap(), 0, "nothing left");
        assert_eq!(f.store.vectors_by_model().unwrap(), [("hash-32".to_string(), 2), ("hash-64".to_string(), 2)]);

        f.store.search_with(&other).unwrap();
        assert_eq!(f.store.searched_model().unwrap().as_deref(), Some("hash-32"));
        let hits = f.store.vector_search(&other, "marathon Lisbon", &user_filter(), 1).unwrap();
        assert_eq!(hits[0].memory.content.key(), Some("b"));
        assert!(f.store.vector_search(&E, "marathon", &user_filter(), 1).unwrap().is_empty());

        // Back to the first model: its vectors were kept, so nothing is embedded again.
        assert_eq!(f.store.pending_embeddings(&E).unwrap(), 0);
        f.store.search_with(&E).unwrap();
        assert_eq!(f.store.searched_model().unwrap().as_deref(), Some("hash-64"));
        assert_eq!(nearest(f, "sunrise painting")[0], "a");
        assert_eq!(f.store.embed_pending(&E, 10).unwrap(), 0);

        // The other model's vectors dropped; the searched model's are refused.
        assert!(f.store.drop_vectors("hash-64").unwrap_err().to_string().contains("choose another embedder first"));
        assert_eq!(f.store.drop_vectors("hash-32").unwrap(), 2);
        assert_eq!(f.store.vectors_by_model().unwrap(), [("hash-64".to_string(), 2)]);
        assert_eq!(f.store.pending_embeddings(&other).unwrap(), 2);
    }
}

on_both_engines! {
    fn hybrid_search_fuses_both_lists_and_says_why(f: &mut Fixture) {
        f.add(concept("exact", &[("note", "zebra crossing near the school")]));
        f.add(concept("similar", &[("note", "pedestrians crossing near school gates")]));
        f.add(concept("unrelated", &[("note", "quarterly revenue report")]));
        embed_all(f);
        let got =
            f.store.hybrid_search(Some(&E), "zebra crossing school", &user_filter(), 3, HybridOptions::hybrid()).unwrap();
        assert_eq!(got[0].memory.content.key(), Some("exact"), "first in both lists");
        let b = &got[0].breakdown;
        assert_eq!((b.keyword_rank, b.vector_rank), (Some(1), Some(1)));
        // Best in both lists: the full match score, and nothing else added.
        assert!((b.matched - 1.0).abs() < 1e-9, "{b:?}");
        assert_eq!(b.score, b.matched);
        assert!(b.keyword_score.unwrap() > 0.0 && b.similarity.unwrap() > 0.5);
        assert!(got.windows(2).all(|w| w[0].breakdown.score >= w[1].breakdown.score));
        // A keyword-only candidate still gets its similarity, read from its stored vector.
        assert!(got.iter().all(|r| r.breakdown.similarity.is_some()));

        // Reciprocal rank fusion, for comparison: 1/61 from each list.
        let rrf =
            f.store.hybrid_search(Some(&E), "zebra crossing school", &user_filter(), 3, HybridOptions::rrf()).unwrap();
        assert!((rrf[0].breakdown.matched - 2.0 / 61.0).abs() < 1e-9);

        // Without an embedder it is the keyword search, with breakdowns.
        let kw = f.store.hybrid_search(None, "zebra", &user_filter(), 3, HybridOptions::default()).unwrap();
        assert_eq!(kw.len(), 1);
        assert_eq!((kw[0].breakdown.vector_rank, kw[0].breakdown.similarity), (None, None));
        assert!((kw[0].breakdown.matched - 1.0).abs() < 1e-9);
    }
}

on_both_engines! {
    /// The case: a model invented a year for a birthday the store knows. Asked later, the
    /// fact ranks first even though the invented answer is newer and repeats the question's words;
    /// the answer still comes back (at half its match), and says why.
    fn what_an_assistant_said_never_outranks_a_fact_that_matches_as_well(f: &mut Fixture) {
        let fact = f.add(concept("grandma_rosa", &[("birthday", "14 March")]));
        f.tick(86_400 * 30);
        let invented = f.add(Content::Episodic(Episode {
            occurred_at: t0() + chrono::Duration::days(30),
            body: EpisodeBody::Exchange {
                query: "When is Grandma Rosa's birthday?".into(),
                response: "Grandma Rosa's birthday is 3 May 1941.".into(),
            },
            concepts: vec![],
            extra: Default::default(),
        }));
        embed_all(f);
        for options in [HybridOptions::hybrid(), HybridOptions::hybrid_rerank()] {
            let got = f.store.hybrid_search(Some(&E), "grandma rosa birthday", &user_filter(), 5, options).unwrap();
            let order: Vec<_> = got.iter().map(|r| r.memory.id).collect();
            assert_eq!(order, vec![fact.id, invented.id], "{:#?}", got.iter().map(|r| &r.breakdown).collect::<Vec<_>>());
            assert!(got[1].breakdown.said_by_assistant && !got[0].breakdown.said_by_assistant);
            assert!(got[1].breakdown.matched <= ASSISTANT_WEIGHT + 1e-9);
        }
        // What the user said alone (no answer) is not discounted.
        let said = Content::Episodic(Episode {
            occurred_at: t0(),
            body: EpisodeBody::Exchange { query: "my locker code is 4312".into(), response: " ".into() },
            concepts: vec![],
            extra: Default::default(),
        });
        let said = f.add(said);
        assert!(!said_by_assistant(&said));
    }
}

on_both_engines! {
    /// A search box: the last word typed finds the words it begins; a finished word (followed by a
    /// space) and recall's own searches match whole words only.
    fn text_as_typed_finds_what_its_last_word_begins(f: &mut Fixture) {
        let napoleon = f.add(concept("napoleon_bonaparte", &[("birth", "1769, Corsica")]));
        f.add(concept("nap_schedule", &[("note", "a short nap after lunch")]));
        embed_all(f);
        let typed = |q: &str| -> Vec<MemoryId> {
            let hits = f.store.hybrid_search(Some(&E), q, &user_filter(), 5, HybridOptions::as_typed()).unwrap();
            hits.into_iter().filter(|r| r.breakdown.keyword_rank.is_some()).map(|r| r.memory.id).collect()
        };
        assert_eq!(typed("napo"), vec![napoleon.id]);
        assert_eq!(typed("born in Corsica, napole"), vec![napoleon.id]);
        assert_eq!(typed("nap").len(), 2, "nap and napoleon");
        assert!(typed("napo ").is_empty(), "a finished word is a whole word");
        let whole = f.store.hybrid_search(Some(&E), "napo", &user_filter(), 5, HybridOptions::default()).unwrap();
        assert!(whole.iter().all(|r| r.breakdown.keyword_rank.is_none()), "recall matches whole words");
        assert_eq!(f.store.count(&user_filter()).unwrap(), 2);
    }
}

on_both_engines! {
    fn time_words_boost_or_filter_by_when_it_happened(f: &mut Fixture) {
        let may = f.add(utterance("Ana", "we went camping with the kids", t0() - chrono::Duration::days(270)));
        let june = f.add(utterance("Ana", "we went camping with the kids", t0() - chrono::Duration::days(240)));
        embed_all(f);
        // T0 is 2026-01-31: "in May" is May 2025.
        let q = "where did we go camping in May?";
        let boosted = f.store.hybrid_search(Some(&E), q, &user_filter(), 5, HybridOptions::hybrid()).unwrap();
        assert_eq!(boosted[0].memory.id, may.id, "{:#?}", boosted.iter().map(|r| &r.breakdown).collect::<Vec<_>>());
        assert_eq!(boosted[0].breakdown.time_phrase.as_deref(), Some("in May"));
        assert!(boosted[0].breakdown.time > 0.0 && boosted[1].breakdown.time == 0.0);
        let filtered = HybridOptions { time: TimeUse::Filter, ..HybridOptions::hybrid() };
        let only = f.store.hybrid_search(Some(&E), q, &user_filter(), 5, filtered).unwrap();
        assert_eq!(only.iter().map(|r| r.memory.id).collect::<Vec<_>>(), vec![may.id]);
        let ignored = HybridOptions { time: TimeUse::Ignore, ..HybridOptions::hybrid() };
        let plain = f.store.hybrid_search(Some(&E), q, &user_filter(), 5, ignored).unwrap();
        assert!(plain.iter().all(|r| r.breakdown.time == 0.0 && r.breakdown.time_phrase.is_none()));
        assert!(plain.iter().any(|r| r.memory.id == june.id));
    }
}

on_both_engines! {
    fn relevance_adds_recency_frequency_importance_and_tier(f: &mut Fixture) {
        let old = f.add(concept("old", &[("note", "the spare key is under the blue pot")]));
        f.tick(86_400 * 60);
        let new = f.add(concept("new", &[("note", "the spare key is under the blue pot")]));
        embed_all(f);
        let opts = HybridOptions::hybrid_rerank();
        let got = f.store.hybrid_search(Some(&E), "spare key", &user_filter(), 2, opts).unwrap();
        // Same text, same match: the newer one is ahead by recency alone.
        assert_eq!(got[0].memory.id, new.id);
        let (a, b) = (&got[0].breakdown, &got[1].breakdown);
        assert_eq!(a.matched, b.matched);
        let r = opts.relevance.unwrap();
        assert!((a.recency - r.recency).abs() < 1e-9, "just created: full recency");
        assert!((b.recency - r.recency / 4.0).abs() < 1e-9, "two half-lives old: a quarter");
        assert!((a.importance - r.importance * 0.5).abs() < 1e-9);
        assert!((a.tier - r.tier * 0.5).abs() < 1e-9, "concepts start medium-term");
        let sum = a.matched + a.time + a.recency + a.frequency + a.importance + a.tier;
        assert!((a.score - sum).abs() < 1e-12);

        // Raised importance, a pin to long-term and use bring the old one back to the top.
        f.store
            .transact(|tx| {
                tx.set_importance(old.id, Importance::new(1.0)?, &user())?;
                tx.set_tier(old.id, Tier::Long, "test", &user())
            })
            .unwrap();
        f.store.note_access(std::iter::repeat_n(old.id, 20)).unwrap();
        f.store.flush_accesses().unwrap();
        let got = f.store.hybrid_search(Some(&E), "spare key", &user_filter(), 2, opts).unwrap();
        assert_eq!(got[0].memory.id, old.id);
        assert!(got[0].breakdown.frequency > 0.0 && got[1].breakdown.frequency == 0.0);
    }
}

on_both_engines! {
    /// The index is asked for a few neighbours more than wanted; when a filter leaves too few, it
    /// is asked again for many more, so a selective filter still finds what it should.
    fn a_selective_filter_still_finds_its_nearest(f: &mut Fixture) {
        for i in 0..60 {
            f.add(concept(&format!("tomato_{i}"), &[("note", "tomatoes in the garden")]));
        }
        let p = f.add(procedure("water_plants", &["fill the can", "water the garden beds"]));
        embed_all(f);
        let only_procedures = Filter { kinds: vec![MemoryKind::Procedural], ..user_filter() };
        // Twice: through sqlite-vec, then through the in-memory scan.
        for _ in 0..2 {
            let hits = f.store.vector_search(&E, "tomatoes in the garden", &only_procedures, 1).unwrap();
            assert_eq!(hits.iter().map(|h| h.memory.id).collect::<Vec<_>>(), vec![p.id]);
        }
        // And with no filter, the nearest are the concepts.
        let hits = f.store.vector_search(&E, "tomatoes in the garden", &user_filter(), 5).unwrap();
        assert!(hits.iter().all(|h| h.memory.kind() == MemoryKind::Semantic));
    }
}

/// From a store's second vector search on, an in-memory int8 copy of the user's vectors is
/// scanned: it returns what sqlite-vec returns, follows filters, and follows other
/// connections' embeddings and forgets.
#[test]
fn the_in_memory_scan_agrees_with_the_index_and_stays_current() {
    let mut f = Fixture::new();
    let words = ["garden", "tomato", "river", "violin", "market", "winter", "ladder", "candle", "harbor", "pepper"];
    for i in 0..300 {
        let text = format!("{} {} {}", words[i % 10], words[(i / 10) % 10], words[(i * 7) % 10]);
        f.add(concept(&format!("note_{i}"), &[("text", text.as_str())]));
    }
    embed_all(&mut f);
    let queries = ["garden tomato", "violin winter candle", "harbor pepper river", "market ladder"];
    let path = f.path();
    // The first search of a fresh store uses sqlite-vec; the same queries again use the scan.
    let by_index: Vec<Vec<(MemoryId, f64)>> = queries
        .iter()
        .map(|q| {
            let fresh = Store::open(&path).unwrap();
            let hits = fresh.vector_search(&E, q, &user_filter(), 5).unwrap();
            hits.into_iter().map(|h| (h.memory.id, h.similarity)).collect()
        })
        .collect();
    f.store.vector_search(&E, "warm up", &user_filter(), 1).unwrap();
    for (q, want) in queries.iter().zip(&by_index) {
        let got: Vec<(MemoryId, f64)> = f
            .store
            .vector_search(&E, q, &user_filter(), 5)
            .unwrap()
            .into_iter()
            .map(|h| (h.memory.id, h.similarity))
            .collect();
        assert_eq!(got.len(), want.len(), "{q}");
        // Same similarities in the same order (equal texts tie, so ids may swap within a tie).
        for ((_, gs), (_, ws)) in got.iter().zip(want) {
            assert!((gs - ws).abs() < 1e-5, "{q}: similarities {gs} vs {ws}");
        }
    }

    // Another connection embeds a new memory: the copy is refreshed.
    let mut other = Store::open(&path).unwrap();
    let new = other.create(concept("zebra", &[("text", "zebra crossing")]), NewMemory::default(), &user()).unwrap();
    while other.embed_pending(&E, 64).unwrap() > 0 {}
    let hits = f.store.vector_search(&E, "zebra crossing", &user_filter(), 1).unwrap();
    assert_eq!(hits[0].memory.id, new.id);
    // A filter applies to the scan's candidates.
    let procedures = Filter { kinds: vec![MemoryKind::Procedural], ..user_filter() };
    assert!(f.store.vector_search(&E, "zebra crossing", &procedures, 3).unwrap().is_empty());
    // Forgotten here or elsewhere: gone from the results at once.
    other.forget(new.id, &user()).unwrap();
    let hits = f.store.vector_search(&E, "zebra crossing", &user_filter(), 1).unwrap();
    assert_ne!(hits[0].memory.id, new.id);
}

/// An index in an older layout (or of another model) is not searched; the next embedding
/// pass rebuilds it from the stored vectors without embedding anything again. A pass with
/// nothing to do writes nothing.
#[test]
fn an_index_of_an_older_layout_is_rebuilt_from_stored_vectors() {
    let mut f = Fixture::new();
    f.add(concept("garden", &[("note", "tomatoes in the garden")]));
    embed_all(&mut f);
    {
        // Another process holds the write lock: a pass with nothing to do does not need it.
        let other = rusqlite::Connection::open(f.path()).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        assert_eq!(f.store.embed_pending(&E, 64).unwrap(), 0);
        other.execute_batch("ROLLBACK").unwrap();
    }
    {
        // What a database indexed before the layout was recorded looks like.
        let c = rusqlite::Connection::open(f.path()).unwrap();
        c.execute("UPDATE settings SET value = ?1 WHERE key = 'vector_model'", [E.id]).unwrap();
    }
    let fresh = Store::open(f.path()).unwrap();
    assert!(fresh.vector_search(&E, "garden", &user_filter(), 1).unwrap().is_empty(), "not searched as it is");
    let mut fresh = fresh;
    assert_eq!(fresh.embed_pending(&E, 64).unwrap(), 0, "nothing is embedded again");
    assert_eq!(fresh.vector_search(&E, "garden", &user_filter(), 1).unwrap().len(), 1);
}
