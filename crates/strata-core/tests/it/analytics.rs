//! Memory metrics on a fixed clock: what the store holds, what was created when, and the tier
//! moves with their rules, by day and by week; a forgotten memory counts nowhere.

use strata_core::analytics::{Bucket, Range};
use strata_core::vectors::HashEmbedder;
use strata_core::*;

use crate::support::*;

const USER: &str = "default";

on_both_engines! {
    fn metrics_count_what_is_held_and_what_changed_by_day_and_week(f: &mut Fixture) {
        // Day 1 (Saturday 31 January 2026): two facts, one tagged; a procedure.
        let tea = f.add(concept("tea", &[("likes", "oolong")]));
        f.add(concept("pixel", &[("species", "cat")]));
        f.add(procedure("brew tea", &["boil", "steep"]));
        f.store.transact(|tx| tx.tag(tea.id, "drinks", &user()).map(drop)).unwrap();
        // Day 3 (Monday): three episodes in a session; the first recalled often.
        f.tick(2 * 86_400);
        let in_session =
            NewMemory { scope: Scope { session_id: Some("s1".into()), ..Scope::default() }, ..Default::default() };
        for t in ["we adopted Pixel", "Pixel likes tuna", "hello"] {
            f.store.create(utterance("Ana", t, t0()), in_session.clone(), &user()).unwrap();
        }
        for _ in 0..5 {
            f.tick(600);
            f.store.note_access([tea.id]).unwrap();
            f.store.flush_accesses().unwrap();
        }
        // A day later maintenance moves them: episodes leave working memory, tea climbs.
        f.tick(25 * 3600);
        let moves = f.store.maintain(&TierPolicy::default(), true).unwrap();
        assert!(!moves.is_empty());
        f.store.embed_pending(&HashEmbedder { id: "hash-16", dim: 16 }, 2).unwrap();

        let m = f.store.memory_metrics(USER, &Range::default(), None).unwrap();
        assert_eq!(m.memories, 6);
        assert_eq!(m.by_type.get("semantic"), Some(&2));
        assert_eq!(m.by_type.get("episodic"), Some(&3));
        assert_eq!(m.by_type.get("procedural"), Some(&1));
        assert_eq!(m.tags, vec![("drinks".to_string(), 1)]);
        assert_eq!(m.by_agent.get("shared"), Some(&6));
        assert_eq!((m.embedding_model.as_deref(), m.embedded), (Some("hash-16"), 2), "two embedded in one batch");
        assert_eq!(m.by_tier.values().sum::<u64>() + m.expired, 6);
        // Created: day 1 three memories, day 3 three episodes.
        let days: Vec<(&str, u64)> = m.created.iter().map(|c| (c.start.as_str(), c.total)).collect();
        assert_eq!(days, vec![("2026-01-31", 3), ("2026-02-02", 3)]);
        assert_eq!(m.created[1].by_type.get("episodic"), Some(&3));
        // Moves: all on day 4; tea promoted, the episodes left working memory.
        assert_eq!(m.moves.len(), 1);
        assert_eq!(m.moves[0].start, "2026-02-03");
        let promoted =
            moves.iter().filter(|mv| matches!(mv, Move::Tier { from: Tier::Medium, to: Tier::Long, .. })).count();
        assert_eq!(
            m.moves[0].promoted as usize,
            promoted
                + moves.iter().filter(|mv| matches!(mv, Move::Tier { from: Tier::Short, to: Tier::Medium, .. })).count()
        );
        assert_eq!(m.moves[0].expired as usize, moves.iter().filter(|mv| matches!(mv, Move::Expire { .. })).count());
        assert!(m.reasons.iter().any(|(r, n)| r == "retrieved N times" && *n == 1), "{:?}", m.reasons);
        assert!(m.reasons.iter().any(|(r, _)| r == "left working memory"), "{:?}", m.reasons);

        // By week: Saturday's memories in the week from Monday 26 January, the rest the next week.
        let weekly = f.store.memory_metrics(USER, &Range { bucket: Bucket::Week, ..Range::default() }, None).unwrap();
        let weeks: Vec<(&str, u64)> = weekly.created.iter().map(|c| (c.start.as_str(), c.total)).collect();
        assert_eq!(weeks, vec![("2026-01-26", 3), ("2026-02-02", 3)]);
        // A range: from day 2 on.
        let since = Range { since: Some(t0() + chrono::Duration::days(1)), ..Range::default() };
        let later = f.store.memory_metrics(USER, &since, None).unwrap();
        assert_eq!(later.created.iter().map(|c| c.total).sum::<u64>(), 3);
        assert_eq!(later.memories, 6, "what is held is counted whatever the range");
        // Narrowed to a tag (which the rollups do not keep): the tea alone, its creation and its
        // promotion.
        let drinks = Range { tag: Some("drinks".into()), ..Range::default() };
        let d = f.store.memory_metrics(USER, &drinks, None).unwrap();
        assert_eq!((d.memories, d.by_type.get("semantic"), d.tags.clone()), (1, Some(&1), vec![("drinks".to_string(), 1)]));
        assert_eq!(d.created.iter().map(|c| (c.start.as_str(), c.total)).collect::<Vec<_>>(), vec![("2026-01-31", 1)]);
        assert_eq!((d.moves.len(), d.moves[0].promoted, d.moves[0].expired), (1, 1, 0), "{:?}", d.moves);
        assert!(d.embedded <= 1 && d.by_tier.values().sum::<u64>() == 1, "{d:?}");
        assert_eq!(f.store.created_in(USER, &drinks, 10).unwrap(), vec![tea.id]);
        assert_eq!(f.store.moved_in(USER, &drinks, None, 10).unwrap().len(), 1);
        let untagged = Range { tag: Some("nothing-has-this".into()), ..Range::default() };
        assert_eq!(f.store.memory_metrics(USER, &untagged, None).unwrap().memories, 0);
        // Someone else's store is theirs.
        assert_eq!(f.store.memory_metrics("nobody", &Range::default(), None).unwrap().memories, 0);

        // Forgotten: counted nowhere, its moves gone too.
        f.store.forget(tea.id, &user()).unwrap();
        let after = f.store.memory_metrics(USER, &Range::default(), None).unwrap();
        assert_eq!((after.memories, after.tags.len()), (5, 0));
        assert!(after.reasons.iter().all(|(r, _)| r != "retrieved N times"), "{:?}", after.reasons);

        // The counts come from rollups the projection's triggers keep: they agree with the store's
        // own count, and with themselves rebuilt from scratch by a replay.
        assert_eq!(after.memories, f.store.stats().unwrap().memories);
        assert_eq!((after.by_type.get("semantic"), after.by_tier.values().sum::<u64>() + after.expired), (Some(&1), 5));
        f.store.replay().unwrap();
        assert_eq!(f.store.memory_metrics(USER, &Range::default(), None).unwrap(), after);
        // Narrowed to a type.
        let episodes = Range { kind: Some(MemoryKind::Episodic), ..Range::default() };
        let e = f.store.memory_metrics(USER, &episodes, None).unwrap();
        assert_eq!((e.memories, e.created.len(), e.created[0].total), (3, 1, 3));
    }
}

#[test]
fn embedding_coverage_is_kept_true_through_embedding_changes_forget_and_replay() {
    let mut f = Fixture::new();
    let pixel = f.add(concept("pixel", &[("species", "cat")]));
    let tea = f.add(concept("tea", &[("likes", "oolong")]));
    f.add(procedure("brew tea", &["boil", "steep"]));
    let hash = HashEmbedder { id: "hash-16", dim: 16 };
    // The rollup against the vectors themselves, after each change.
    let path = f.path();
    let check = |f: &Fixture, want: u64| {
        let direct: i64 = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM memory_vectors v JOIN memories m ON m.id = v.memory_id \
                 WHERE m.user_id = ?1 AND v.model = 'hash-16'",
                [USER],
                |r| r.get(0),
            )
            .unwrap();
        let m = f.store.memory_metrics(USER, &Range::default(), Some("hash-16")).unwrap();
        assert_eq!((m.embedded, direct as u64), (want, want));
    };
    check(&f, 0);
    while f.store.embed_pending(&hash, 2).unwrap() > 0 {}
    check(&f, 3);
    assert_eq!(
        f.store.memory_metrics(USER, &Range::default(), None).unwrap().embedding_model.as_deref(),
        Some("hash-16")
    );
    // A second model's vectors count for it alone.
    while f.store.embed_pending(&HashEmbedder { id: "hash-8", dim: 8 }, 8).unwrap() > 0 {}
    check(&f, 3);
    // New content drops the vector until it is embedded again.
    f.store
        .transact(|tx| {
            tx.update_content(pixel.id, concept("pixel", &[("species", "tabby cat")]), Expected::Any, &user())
        })
        .unwrap();
    check(&f, 2);
    while f.store.embed_pending(&hash, 2).unwrap() > 0 {}
    check(&f, 3);
    f.store.forget(tea.id, &user()).unwrap();
    check(&f, 2);
    f.store.replay().unwrap();
    check(&f, 2);
    let episodes = Range { kind: Some(MemoryKind::Episodic), ..Range::default() };
    assert_eq!(f.store.memory_metrics(USER, &episodes, Some("hash-16")).unwrap().embedded, 0);
}
