//! Appends, commands and their typed errors.

use crate::support::*;
use strata_core::*;

on_both_engines! {
    fn create_then_get_returns_every_field(f: &mut Fixture) {
        let content = concept("napoleon_bonaparte", &[("birth", "1769, Corsica")]);
        let new = NewMemory {
            scope: Scope { user_id: "ana".into(), agent_id: Some("tutor".into()), session_id: Some("s1".into()) },
            tags: vec![" history ".into(), "france".into()],
            importance: Some(Importance::new(0.9).unwrap()),
            tier: None,
            source: Source { app: "cli".into(), provider: None, model: None },
        };
        let m = f.store.create(content.clone(), new, &user()).unwrap();
        let got = f.store.get(m.id).unwrap();
        assert_eq!(got, m);
        assert_eq!(got.content, content);
        assert_eq!(got.tags.iter().collect::<Vec<_>>(), ["france", "history"]);
        assert_eq!(got.tier, Tier::Medium, "semantic memories start medium");
        assert_eq!(got.version, 1);
        assert_eq!(got.created_at, t0());
        assert_eq!(got.scope.agent_id.as_deref(), Some("tutor"));
    }
}

on_both_engines! {
    fn episodes_start_short_term_and_keep_their_own_time(f: &mut Fixture) {
        let when = strata_core::time::parse_time("2023-05-08T13:56:00Z").unwrap();
        let m = f.add(utterance("Caroline", "I went to a LGBTQ support group yesterday", when));
        assert_eq!(m.tier, Tier::Short);
        assert_eq!(m.occurred_at(), when);
        assert_eq!(m.created_at, t0());
    }
}

on_both_engines! {
    fn each_command_appends_one_event_and_moves_the_version(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        let a = f.add(concept("coffee", &[("likes", "no")]));
        f.tick(1);
        f.store
            .transact(|tx| {
                assert!(tx.tag(m.id, "drinks", &user())?);
                assert!(!tx.tag(m.id, "drinks", &user())?, "tagging twice is a no-op");
                tx.set_importance(m.id, Importance::new(0.8)?, &user())?;
                tx.set_tier(m.id, Tier::Long, "pinned by user", &user())?;
                tx.link(m.id, a.id, "contrasts_with", &user())?;
                tx.update_content(m.id, concept("tea", &[("likes", "oolong")]), Expected::Exact(5), &user())?;
                assert!(tx.untag(m.id, "drinks", &user())?);
                Ok(())
            })
            .unwrap();
        let got = f.store.get(m.id).unwrap();
        assert_eq!(got.version, 7);
        assert_eq!(got.tier, Tier::Long);
        assert_eq!(got.importance.get(), 0.8);
        assert!(got.tags.is_empty());
        assert_eq!(got.links.len(), 1);
        assert_eq!(got.updated_at, t0() + chrono::Duration::seconds(1));
        let types: Vec<String> = f.store.history(m.id).unwrap().iter().map(|e| e.change.event_type().to_string()).collect();
        assert_eq!(
            types,
            ["semantic_created", "tagged", "importance_changed", "tier_changed", "linked", "content_updated", "untagged"]
        );
    }
}

on_both_engines! {
    fn a_stale_expected_version_is_a_conflict_and_writes_nothing(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        f.store.transact(|tx| tx.tag(m.id, "x", &user())).unwrap();
        let err = f
            .store
            .transact(|tx| tx.update_content(m.id, concept("tea", &[("likes", "black")]), Expected::Exact(1), &user()))
            .unwrap_err();
        assert!(matches!(err, Error::Conflict { actual: 2, .. }), "{err}");
        assert_eq!(f.store.get(m.id).unwrap().content, concept("tea", &[("likes", "green")]));
        assert_eq!(f.store.event_count().unwrap(), 2);
    }
}

on_both_engines! {
    fn recorded_reads_since_the_expected_version_are_no_conflict(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        // Found by searches meanwhile: the reads are written (version 2), nothing else changed.
        f.store.note_access([m.id]).unwrap();
        f.store.flush_accesses().unwrap();
        f.store
            .transact(|tx| tx.update_content(m.id, concept("tea", &[("likes", "black")]), Expected::Exact(1), &user()))
            .unwrap();
        assert_eq!(f.store.get(m.id).unwrap().content, concept("tea", &[("likes", "black")]));
        // A change a writer did not see still is one.
        let err = f
            .store
            .transact(|tx| tx.update_content(m.id, concept("tea", &[("likes", "oolong")]), Expected::Exact(2), &user()))
            .unwrap_err();
        assert!(matches!(err, Error::Conflict { actual: 3, .. }), "{err}");
    }
}

on_both_engines! {
    fn creating_a_stream_that_exists_is_a_conflict(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        let created = match f.store.history(m.id).unwrap().remove(0).change {
            Change::Created(c) => c,
            other => panic!("{other:?}"),
        };
        let err =
            f.store.transact(|tx| tx.append(m.id, Expected::NoStream, Change::Created(created), &user())).unwrap_err();
        assert!(matches!(err, Error::Conflict { actual: 1, .. }), "{err}");
    }
}

on_both_engines! {
    fn a_refused_append_inside_a_continuing_transaction_leaves_nothing(f: &mut Fixture) {
        f.store
            .transact(|tx| {
                tx.create(concept("a", &[("x", "1")]), NewMemory::default(), &user())?;
                let dup = tx.create(concept("a", &[("x", "2")]), NewMemory::default(), &user());
                assert!(matches!(dup, Err(Error::DuplicateKey { .. })));
                Ok(())
            })
            .unwrap();
        assert_eq!(f.store.event_count().unwrap(), 1);
        let mut s = f.store.snapshot().unwrap();
        f.store.replay().unwrap();
        assert_eq!(f.store.snapshot().unwrap(), std::mem::replace(&mut s, f.store.snapshot().unwrap()));
    }
}

on_both_engines! {
    fn a_failed_transaction_leaves_no_half_write(f: &mut Fixture) {
        let err = f
            .store
            .transact(|tx| {
                tx.create(concept("a", &[("x", "1")]), NewMemory::default(), &user())?;
                tx.create(concept("b", &[("x", "2")]), NewMemory::default(), &user())?;
                tx.create(concept("a", &[("x", "3")]), NewMemory::default(), &user())
            })
            .unwrap_err();
        assert!(matches!(err, Error::DuplicateKey { .. }), "{err}");
        assert_eq!(f.store.event_count().unwrap(), 0);
        assert_eq!(f.store.stats().unwrap().memories, 0);
    }
}

on_both_engines! {
    fn keys_are_unique_per_user_and_agent_but_not_across_them(f: &mut Fixture) {
        let c = concept("tea", &[("likes", "green")]);
        f.store.create(c.clone(), NewMemory::default(), &user()).unwrap();
        let other_user = NewMemory { scope: Scope::user("bob"), ..Default::default() };
        f.store.create(c.clone(), other_user, &user()).unwrap();
        let agent = NewMemory { scope: Scope { agent_id: Some("a1".into()), ..Scope::default() }, ..Default::default() };
        f.store.create(c.clone(), agent, &user()).unwrap();
        let err = f.store.create(c, NewMemory::default(), &user()).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        // a procedure may share a concept's name
        f.store.create(procedure("tea", &["boil water"]), NewMemory::default(), &user()).unwrap();
        assert_eq!(f.store.find_by_key("default", None, None, "tea").unwrap().len(), 2);
    }
}

on_both_engines! {
    fn bad_input_is_refused_with_a_clear_message(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        let check = |err: Error, want: &str| assert!(err.to_string().contains(want), "{err} does not say {want}");
        check(f.store.create(concept(" ", &[("a", "b")]), NewMemory::default(), &user()).unwrap_err(), "must not be empty");
        check(f.store.create(concept("k", &[]), NewMemory::default(), &user()).unwrap_err(), "has no facts");
        check(f.store.create(procedure("p", &[]), NewMemory::default(), &user()).unwrap_err(), "non-empty steps");
        check(f.store.transact(|tx| tx.tag(m.id, "  ", &user())).unwrap_err(), "must not be empty");
        check(Importance::new(1.5).unwrap_err(), "between 0 and 1");
        check("nope".parse::<MemoryId>().unwrap_err(), "not a memory id");
        let ghost = MemoryId::from_parts(1, 1);
        check(f.store.get(ghost).unwrap_err(), "no memory");
        check(f.store.transact(|tx| tx.tag(ghost, "x", &user())).unwrap_err(), "no memory");
        check(
            f.store.transact(|tx| tx.update_content(m.id, procedure("p", &["s"]), Expected::Any, &user())).unwrap_err(),
            "cannot become procedural",
        );
    }
}

on_both_engines! {
    /// Regression: a memory of hundreds of megabytes was accepted. Every limit holds on every
    /// write path: creation, update, tags, links, tier changes, and `append` itself.
    fn a_memory_over_the_limits_is_refused_with_the_limit(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        let other = f.add(concept("coffee", &[("likes", "black")]));
        let check = |err: Error, want: &str| assert!(err.to_string().contains(want), "{err} does not say {want}");

        // Exactly 1 MiB as stored is a memory; one byte more is not.
        let base = concept("big", &[("text", "")]).stored_bytes();
        let fits = concept("big", &[("text", &"x".repeat(model::MAX_CONTENT_BYTES - base))]);
        assert_eq!(fits.stored_bytes(), model::MAX_CONTENT_BYTES);
        let big = f.add(fits);
        let over = concept("big", &[("text", &"x".repeat(model::MAX_CONTENT_BYTES - base + 1))]);
        let limit = "a memory holds at most 1024 KiB";
        check(f.store.create(over.clone(), NewMemory::default(), &user()).unwrap_err(), limit);
        check(f.store.transact(|tx| tx.update_content(big.id, over.clone(), Expected::Any, &user())).unwrap_err(), limit);
        let huge_steps = procedure("p", &[&"s".repeat(600 << 10), &"s".repeat(600 << 10)]);
        check(f.store.create(huge_steps, NewMemory::default(), &user()).unwrap_err(), limit);

        let key = "k".repeat(257);
        check(f.store.create(concept(&key, &[("a", "b")]), NewMemory::default(), &user()).unwrap_err(), "longer than 256");
        check(f.store.create(concept("k", &[(&key, "b")]), NewMemory::default(), &user()).unwrap_err(), "longer than 256");
        let session =
            NewMemory { scope: Scope { session_id: Some(key.clone()), ..Scope::default() }, ..Default::default() };
        check(f.store.create(concept("k", &[("a", "b")]), session, &user()).unwrap_err(), "a session id");
        check(f.store.transact(|tx| tx.tag(m.id, &"t".repeat(65), &user())).unwrap_err(), "longer than 64 bytes");
        check(f.store.transact(|tx| tx.link(m.id, other.id, &"r".repeat(65), &user())).unwrap_err(), "longer than 64");
        check(
            f.store.transact(|tx| tx.set_tier(m.id, Tier::Long, &"why ".repeat(200), &user())).unwrap_err(),
            "longer than 512 bytes",
        );
        // `append` takes the same rules as the commands.
        let mut raw = |change: Change| f.store.transact(|tx| tx.append(m.id, Expected::Any, change, &user())).unwrap_err();
        check(raw(Change::Tagged { tag: " spaced ".into() }), "must not start or end with white space");
        check(raw(Change::Linked { target: m.id, relation: "r".into() }), "cannot link to itself");
        check(raw(Change::TierChanged { from: Tier::Long, to: Tier::Short, reason: "r".into() }), "in the medium tier");
        let ghost = MemoryId::from_parts(1, 1);
        check(raw(Change::Linked { target: ghost, relation: "r".into() }), "no memory");
        assert_eq!(f.store.get(m.id).unwrap().version, 1, "nothing was written");
    }
}

on_both_engines! {
    fn accesses_are_batched_into_one_transaction(f: &mut Fixture) {
        let a = f.add(concept("a", &[("x", "1")]));
        let b = f.add(concept("b", &[("x", "1")]));
        f.tick(5);
        f.store.note_access([a.id, b.id, a.id]).unwrap();
        assert_eq!(f.store.event_count().unwrap(), 2, "reads are not written one by one");
        assert_eq!(f.store.flush_accesses().unwrap(), 2);
        let a = f.store.get(a.id).unwrap();
        assert_eq!(a.access_count, 2);
        assert_eq!(a.last_accessed_at, Some(t0() + chrono::Duration::seconds(5)));
        assert_eq!(a.updated_at, t0(), "an access is not an update");
        assert_eq!(f.store.event_count().unwrap(), 4);
    }
}

on_both_engines! {
    fn accesses_reach_the_file_within_seconds_of_the_first(f: &mut Fixture) {
        let a = f.add(concept("a", &[("x", "1")]));
        let b = f.add(concept("b", &[("x", "1")]));
        f.store.note_access([a.id]).unwrap();
        f.tick(1);
        f.store.note_access([b.id]).unwrap();
        assert_eq!(f.store.flush_due_accesses().unwrap(), 0, "a second after the first: still batched");
        assert_eq!(f.store.get(a.id).unwrap().access_count, 0);
        // Two seconds after the first, the next read writes both…
        f.tick(1);
        f.store.note_access([a.id]).unwrap();
        assert_eq!((f.store.get(a.id).unwrap().access_count, f.store.get(b.id).unwrap().access_count), (2, 1));
        // … and with no read after it, a program's periodic call does.
        f.store.note_access([b.id]).unwrap();
        f.tick(2);
        assert_eq!(f.store.flush_due_accesses().unwrap(), 1);
        assert_eq!(f.store.get(b.id).unwrap().access_count, 2);
        assert_eq!(f.store.flush_due_accesses().unwrap(), 0, "nothing pending");
    }
}

on_both_engines! {
    fn only_forget_writes_forgotten_events(f: &mut Fixture) {
        let m = f.add(concept("tea", &[("likes", "green")]));
        for change in [Change::Forgotten { redacted_events: 0 }, Change::Redacted { event_type: "tagged".into() }] {
            let err = f.store.transact(|tx| tx.append(m.id, Expected::Any, change.clone(), &user())).unwrap_err();
            assert!(err.to_string().contains("goes through forget()"), "{err}");
        }
        assert_eq!(f.store.get(m.id).unwrap().content, concept("tea", &[("likes", "green")]));
    }
}

/// A failure in the middle of a projection write (injected: a trigger aborts the tag insert
/// after the memory row was written) must not be committable, even by a caller that goes on.
#[test]
fn a_write_that_fails_midway_cannot_be_committed() {
    let mut f = Fixture::new();
    f.add(concept("before", &[("x", "1")]));
    rusqlite::Connection::open(f.path())
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER fault BEFORE INSERT ON memory_tags WHEN NEW.tag = 'boom' \
             BEGIN SELECT RAISE(ABORT, 'injected fault'); END;",
        )
        .unwrap();
    let err = f
        .store
        .transact(|tx| {
            let tagged = NewMemory { tags: vec!["boom".into()], ..Default::default() };
            let failed = tx.create(concept("during", &[("x", "2")]), tagged, &user());
            assert!(failed.is_err());
            // A careless caller carries on; the transaction refuses to commit.
            tx.create(concept("later", &[("x", "3")]), NewMemory::default(), &user())
        })
        .unwrap_err();
    assert!(err.to_string().contains("abandoned after a failed write"), "{err}");
    // One that swallows the error and asks to commit is refused too.
    let err = f
        .store
        .transact(|tx| {
            let tagged = NewMemory { tags: vec!["boom".into()], ..Default::default() };
            let _ = tx.create(concept("during", &[("x", "2")]), tagged, &user());
            Ok(())
        })
        .unwrap_err();
    assert!(err.to_string().contains("nothing was saved"), "{err}");
    assert_eq!(f.store.stats().unwrap().memories, 1);
    assert_eq!(f.store.event_count().unwrap(), 1);
}

on_both_engines! {
    /// Whether another writer holds the lock is asked without waiting, on both engines, and
    /// asking takes nothing: the writer commits and the next write goes through.
    fn another_writer_is_seen_without_waiting(f: &mut Fixture) {
        let mut other = f.store.open_another().unwrap();
        assert!(!f.store.writer_busy().unwrap(), "no one writes");
        let writing = other.write().unwrap();
        let started = std::time::Instant::now();
        assert!(f.store.writer_busy().unwrap(), "the other store holds the lock");
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "asked without waiting");
        writing.commit().unwrap();
        assert!(!f.store.writer_busy().unwrap());
        f.store.create(concept("tea", &[("likes", "green")]), NewMemory::default(), &user()).unwrap();
    }
}
