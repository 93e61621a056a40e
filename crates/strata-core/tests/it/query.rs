//! Lists with filters and cursors; keyword search with bm25 and snippets.

use std::collections::HashSet;

use crate::support::*;
use chrono::Duration;
use strata_core::*;

/// Adds 25 memories of every type, two users, two sessions, some tagged.
fn fill_mix(f: &mut Fixture) {
    for i in 0..25 {
        let scope = Scope {
            user_id: if i % 5 == 0 { "bob".into() } else { "default".into() },
            agent_id: None,
            session_id: Some(format!("s{}", i % 2)),
        };
        let content = match i % 3 {
            0 => concept(&format!("concept_{i}"), &[("note", "about gardening and tomatoes")]),
            1 => utterance("Mel", &format!("day {i}: went hiking in the mountains"), t0() - Duration::days(30 - i)),
            _ => procedure(&format!("proc_{i}"), &["water the tomatoes", "check the soil"]),
        };
        let tags = if i % 4 == 0 { vec!["garden".to_string()] } else { vec![] };
        f.store.create(content, NewMemory { scope, tags, ..Default::default() }, &user()).unwrap();
        f.tick(1);
    }
}

on_both_engines! {
    fn cursor_pages_cover_everything_once_in_a_stable_order(f: &mut Fixture) {
        fill_mix(f);
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let page = f.store.list(&Filter::default(), 7, cursor.as_deref()).unwrap();
            // A write between pages does not shift what the next page returns.
            f.add(concept(&format!("late_{}", seen.len()), &[("x", "y")]));
            seen.extend(page.items.iter().map(|m| m.id));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen.len(), 25);
        assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 25);
        assert!(seen.windows(2).all(|w| w[0] > w[1]), "newest first");
        let err = f.store.list(&Filter::default(), 5, Some("garbage")).unwrap_err().to_string();
        assert!(err.contains("not a cursor"), "{err}");
    }
}

on_both_engines! {
    /// Every order pages through everything once, latest first; a cursor from one order is
    /// refused by another; episodes from before 1970 page too.
    fn lists_sort_by_when_added_happened_or_last_recalled(f: &mut Fixture) {
        fill_mix(f);
        let old = f.add(utterance("Mel", "the storming of the Bastille", t0() - Duration::days(365 * 240)));
        let recalled = f.store.list(&Filter::default(), 3, None).unwrap().items;
        f.store.note_access(recalled.iter().map(|m| m.id)).unwrap();
        f.store.flush_accesses().unwrap();
        for order in [Order::Added, Order::Occurred, Order::Recalled] {
            let (mut all, mut cursor) = (Vec::new(), None);
            loop {
                let page = f.store.list_by(&Filter::default(), order, 4, cursor.as_deref()).unwrap();
                all.extend(page.items);
                match page.next_cursor {
                    Some(c) => cursor = Some(c),
                    None => break,
                }
            }
            assert_eq!(all.len(), 26, "{order:?}");
            assert_eq!(all.iter().map(|m| m.id).collect::<HashSet<_>>().len(), 26, "{order:?}");
            let key = |m: &Memory| match order {
                Order::Added => m.created_at.timestamp_millis(),
                Order::Occurred => m.occurred_at().timestamp_millis(),
                Order::Recalled => m.last_accessed_at.map_or(0, |t| t.timestamp_millis()),
            };
            assert!(all.windows(2).all(|w| key(&w[0]) >= key(&w[1])), "{order:?} latest first");
            if order == Order::Occurred {
                assert_eq!(all.last().unwrap().id, old.id, "1786 comes last");
            }
            if order == Order::Recalled {
                let first: HashSet<_> = all[..3].iter().map(|m| m.id).collect();
                assert_eq!(first, recalled.iter().map(|m| m.id).collect());
            }
        }
        let cursor = f.store.list_by(&Filter::default(), Order::Occurred, 2, None).unwrap().next_cursor.unwrap();
        let err = f.store.list_by(&Filter::default(), Order::Added, 2, Some(&cursor)).unwrap_err().to_string();
        assert!(err.contains("not a cursor"), "{err}");
    }
}

on_both_engines! {
    /// Where memories came from: a person, an import, a conversation with a model, an AI tool.
    fn filters_narrow_by_origin(f: &mut Fixture) {
        let with = |app: &str, provider: Option<&str>| NewMemory {
            source: Source { app: app.into(), provider: provider.map(String::from), model: provider.map(|_| "m".into()) },
            ..Default::default()
        };
        let mut add =
            |key: &str, source: NewMemory| f.store.create(concept(key, &[("x", "y")]), source, &user()).unwrap().id;
        let person = [add("typed", with("desktop", None)), add("cli", with("cli", None))];
        let imported = [add("file", with("import", None)), add("example", with("examples", None))];
        let chat = [add("chat", with("desktop", Some("openai")))];
        let tool = [add("tool", with("mcp:claude", None))];
        for (origin, want) in [
            (Origin::Person, &person[..]),
            (Origin::Imported, &imported[..]),
            (Origin::Conversation, &chat[..]),
            (Origin::Tool, &tool[..]),
        ] {
            let filter = Filter { origin: Some(origin), ..Default::default() };
            let got: HashSet<_> = f.store.list(&filter, 100, None).unwrap().items.into_iter().map(|m| m.id).collect();
            assert_eq!(got, want.iter().copied().collect(), "{origin:?}");
            assert_eq!(f.store.count(&filter).unwrap(), want.len() as u64);
        }
        assert!("robot".parse::<Origin>().is_err());
    }
}

on_both_engines! {
    fn filters_narrow_by_type_scope_tag_tier_and_time(f: &mut Fixture) {
        fill_mix(f);
        let count = |filter: Filter| f.store.list(&filter, 1000, None).unwrap().items.len();
        let cases: Vec<(&str, Filter, usize)> = vec![
            ("all", Filter::default(), 25),
            ("episodic", Filter { kinds: vec![MemoryKind::Episodic], ..Default::default() }, 8),
            ("two kinds", Filter { kinds: vec![MemoryKind::Semantic, MemoryKind::Procedural], ..Default::default() }, 17),
            ("user", Filter { user_id: Some("bob".into()), ..Default::default() }, 5),
            ("session", Filter { session_id: Some("s0".into()), ..Default::default() }, 13),
            ("tag", Filter { tags: vec!["garden".into()], ..Default::default() }, 7),
            ("tier", Filter { tiers: vec![Tier::Short], ..Default::default() }, 8),
            (
                "episodes in the last 21 days",
                Filter { kinds: vec![MemoryKind::Episodic], since: Some(t0() - Duration::days(21)), ..Default::default() },
                5,
            ),
            ("until", Filter { until: Some(t0()), ..Default::default() }, 8),
            ("nothing", Filter { user_id: Some("nobody".into()), ..Default::default() }, 0),
        ];
        for (name, filter, want) in cases {
            assert_eq!(count(filter), want, "{name}");
        }
    }
}

on_both_engines! {
    fn search_ranks_by_bm25_and_highlights_matches(f: &mut Fixture) {
        f.add(concept("tomato_growing", &[("tip", "tomatoes need sun; water tomatoes daily")]));
        f.add(concept("basil", &[("tip", "basil likes warmth, pairs with tomatoes")]));
        f.add(concept("cactus", &[("tip", "little water")]));
        let hits = f.store.search("Tomatoes?", &Filter::default(), 10, ("[", "]")).unwrap();
        let keys: Vec<_> = hits.iter().map(|h| h.memory.content.key().unwrap().to_string()).collect();
        assert_eq!(keys, ["tomato_growing", "basil"]);
        assert!(hits[0].score > hits[1].score && hits[1].score > 0.0);
        assert!(hits[0].snippet.contains("[tomatoes]"), "{}", hits[0].snippet);
        // Punctuation and FTS operators in user text are harmless; stemming matches word forms.
        for q in ["\"water", "AND OR NOT", "water*", "tip: (x", "watering"] {
            f.store.search(q, &Filter::default(), 10, ("[", "]")).unwrap();
        }
        assert_eq!(f.store.search("watering", &Filter::default(), 10, ("", "")).unwrap().len(), 2);
        assert!(f.store.search("  ...  ", &Filter::default(), 10, ("", "")).unwrap().is_empty());
        // Filters apply to search.
        let cactus = f_id(f, "cactus");
        f.store.transact(|tx| tx.tag(cactus, "succulent", &user())).unwrap();
        let only_tagged = Filter { tags: vec!["succulent".into()], ..Default::default() };
        assert_eq!(f.store.search("water", &only_tagged, 10, ("", "")).unwrap().len(), 1);
    }
}

fn f_id(f: &Fixture, key: &str) -> MemoryId {
    f.store.find_by_key("default", None, Some(MemoryKind::Semantic), key).unwrap()[0].id
}

on_both_engines! {
    /// Regression: a query with a very common word scored most of the store and took ~10 ms at
    /// 100k memories. Common words are now dropped when rarer ones are present, and at most
    /// SEARCH_WINDOW candidates are ranked.
    fn common_words_do_not_drown_rare_ones(f: &mut Fixture) {
        let n = strata_core::query::SEARCH_WINDOW as usize + 50;
        f.store
            .transact(|tx| {
                tx.create(concept("old_note", &[("text", "the platypus sat on the mat")]), NewMemory::default(), &user())?;
                for i in 0..n {
                    tx.create(
                        concept(&format!("filler_{i}"), &[("text", "the cat sat on the mat")]),
                        NewMemory::default(),
                        &user(),
                    )?;
                }
                Ok(())
            })
            .unwrap();
        let hits = f.store.search("the platypus", &Filter::default(), 5, ("", "")).unwrap();
        assert_eq!(hits.len(), 1, "'the' is in every memory: only 'platypus' selects");
        assert_eq!(hits[0].memory.content.key(), Some("old_note"));
        // A query of only common words still answers, from the newest candidates.
        let hits = f.store.search("the mat", &Filter::default(), 5, ("", "")).unwrap();
        assert_eq!(hits.len(), 5);
    }
}

on_both_engines! {
    fn a_search_box_counts_its_matches_up_to_a_bound_and_leaves_concepts_out_of_lists(f: &mut Fixture) {
        fill_mix(f);
        let mine = Filter { user_id: Some("default".into()), ..Default::default() };
        // "tomat" as typed: every concept and procedure of the user's (the last word a prefix).
        let all = f.store.count_typed_matches("tomat", &mine, 1000).unwrap();
        let listed = f.store.search_typed("tomat", &mine, 1000).unwrap().len() as u64;
        assert_eq!(all, listed);
        assert!(all > 5, "{all}");
        assert_eq!(f.store.count_typed_matches("tomat", &mine, 5).unwrap(), 6, "counted to the bound and one more");
        assert_eq!(f.store.count_typed_matches("  ", &mine, 5).unwrap(), 0);
        // A concept Strata formed is left out of a list that asks so.
        let formed = concept("concept/tomatoes", &[("name", "tomatoes")]);
        f.store.create(formed, NewMemory::default(), &user()).unwrap();
        let count = |without_concepts| f.store.count(&Filter { without_concepts, ..mine.clone() }).unwrap();
        assert_eq!(count(false), count(true) + 1);
    }
}
