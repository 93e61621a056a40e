//! The log is the truth: replay rebuilds projections equal to the live ones, for any history.

use std::sync::Arc;

use chrono::Duration;
use proptest::prelude::*;
use strata_core::*;

#[derive(Debug, Clone)]
enum Op {
    Create(u8, u8, Vec<u8>),
    Update(usize, u8),
    Tag(usize, u8),
    Untag(usize, u8),
    Importance(usize, u8),
    Tier(usize, u8),
    Access(Vec<usize>),
    Link(usize, usize),
    Forget(usize),
    Tick(u16),
    /// Rebuild the projections midway; later operations must work on the rebuilt ones.
    Replay,
    Pin(usize, bool),
    /// A tier maintenance run (moves and expiries).
    Maintain,
    /// A concept grouping these memories (forgetting one of them re-forms it).
    Concept(Vec<usize>),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..3, any::<u8>(), proptest::collection::vec(0u8..4, 0..3)).prop_map(|(k, s, t)| Op::Create(k, s, t)),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(i, s)| Op::Update(i, s)),
        2 => (any::<usize>(), 0u8..4).prop_map(|(i, t)| Op::Tag(i, t)),
        1 => (any::<usize>(), 0u8..4).prop_map(|(i, t)| Op::Untag(i, t)),
        1 => (any::<usize>(), 0u8..=10).prop_map(|(i, v)| Op::Importance(i, v)),
        1 => (any::<usize>(), 0u8..3).prop_map(|(i, v)| Op::Tier(i, v)),
        1 => proptest::collection::vec(any::<usize>(), 1..4).prop_map(Op::Access),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Link(a, b)),
        1 => any::<usize>().prop_map(Op::Forget),
        1 => (1u16..5000).prop_map(Op::Tick),
        1 => Just(Op::Replay),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, on)| Op::Pin(i, on)),
        1 => Just(Op::Maintain),
        1 => proptest::collection::vec(any::<usize>(), 2..5).prop_map(Op::Concept),
    ]
}

const WORDS: [&str; 8] = ["tea", "garden", "mountain", "piano", "Caroline", "café", "sunrise", "budget"];

fn content(kind: u8, seed: u8) -> Content {
    let w = |i: u8| WORDS[(seed.wrapping_add(i) % 8) as usize];
    match kind {
        0 => Content::Semantic(Concept {
            key: format!("{}_{}", w(0), seed % 5),
            facts: [("note".to_string(), FactValue::Text(format!("{} {}", w(1), w(2))))].into_iter().collect(),
        }),
        1 => Content::Episodic(Episode {
            occurred_at: chrono::DateTime::from_timestamp(1_600_000_000 + i64::from(seed) * 3600, 0).unwrap(),
            body: EpisodeBody::Utterance { speaker: w(3).into(), text: format!("{} and {}", w(4), w(5)) },
            concepts: vec![],
            extra: Default::default(),
        }),
        _ => Content::Procedural(Procedure {
            name: format!("{}_{}", w(6), seed % 5),
            steps: vec![w(1).into(), w(7).into()],
            context: seed.is_multiple_of(2).then(|| w(2).to_string()),
        }),
    }
}

fn start() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap()))
}

fn run(ops: &[Op]) -> Store {
    let clock = start();
    run_on(Store::in_memory(clock.clone()).unwrap(), &clock, ops)
}

/// Plays `ops` on `store`, whose clock is `clock`.
fn run_on(mut store: Store, clock: &ManualClock, ops: &[Op]) -> Store {
    let meta = EventMeta::actor(Actor::User);
    let mut ids: Vec<MemoryId> = Vec::new();
    let tag = |t: u8| format!("t{t}");
    for op in ops {
        let pick = |i: &usize| (!ids.is_empty()).then(|| ids[i % ids.len()]);
        // Errors (duplicate keys, forgotten memories …) are part of the game: they must
        // leave no trace, which the comparison below also checks. Every engine serves every
        // operation: none may answer that it is not available.
        let result = match op {
            Op::Create(k, s, tags) => {
                let tags = tags.iter().map(|t| tag(*t)).collect();
                store.create(content(*k, *s), NewMemory { tags, ..Default::default() }, &meta).map(|m| ids.push(m.id))
            }
            Op::Update(i, s) => match pick(i) {
                Some(id) => store.transact(|tx| {
                    let kind = tx.current(id)?.kind();
                    let k = MemoryKind::ALL.iter().position(|x| *x == kind).unwrap() as u8;
                    tx.update_content(id, content(k, *s), Expected::Any, &meta).map(|_| ())
                }),
                None => Ok(()),
            },
            Op::Tag(i, t) => pick(i).map_or(Ok(()), |id| store.transact(|tx| tx.tag(id, &tag(*t), &meta)).map(|_| ())),
            Op::Untag(i, t) => {
                pick(i).map_or(Ok(()), |id| store.transact(|tx| tx.untag(id, &tag(*t), &meta)).map(|_| ()))
            }
            Op::Importance(i, v) => pick(i).map_or(Ok(()), |id| {
                store.transact(|tx| tx.set_importance(id, Importance::new(f64::from(*v) / 10.0)?, &meta)).map(|_| ())
            }),
            Op::Tier(i, v) => pick(i).map_or(Ok(()), |id| {
                store.transact(|tx| tx.set_tier(id, Tier::ALL[*v as usize], "test", &meta)).map(|_| ())
            }),
            Op::Access(is) => {
                let picked: Vec<_> = is.iter().filter_map(pick).collect();
                store.note_access(picked).and_then(|_| store.flush_accesses()).map(|_| ())
            }
            Op::Link(a, b) => match (pick(a), pick(b)) {
                (Some(a), Some(b)) => store.transact(|tx| tx.link(a, b, "mentions", &meta)).map(|_| ()),
                _ => Ok(()),
            },
            Op::Forget(i) => pick(i).map_or(Ok(()), |id| store.forget(id, &meta).map(|_| ())),
            Op::Replay => store.replay().map(|_| ()),
            Op::Pin(i, on) => pick(i).map_or(Ok(()), |id| {
                store.transact(|tx| if *on { tx.pin(id, &meta) } else { tx.unpin(id, &meta) }).map(|_| ())
            }),
            Op::Maintain => {
                // Small windows so random histories exercise every rule.
                let policy = TierPolicy {
                    working_memory_items: 2,
                    short_ttl_hours: 0.001,
                    promote_min_accesses: 1,
                    ..Default::default()
                };
                store.maintain(&policy, true).map(|_| ())
            }
            Op::Tick(s) => {
                clock.advance(Duration::milliseconds(i64::from(*s)));
                Ok(())
            }
            Op::Concept(is) => {
                let mut members: Vec<MemoryId> = is.iter().filter_map(pick).collect();
                members.dedup();
                let formed = store.transact(|tx| {
                    let mut said = Vec::new();
                    for m in &members {
                        let text = format!("{:?}", tx.current(*m)?.content);
                        said.push(concepts::Sentence::quoted(*m, text));
                    }
                    let name = format!("{}_{}", WORDS[members.len() % 8], ids.len());
                    crate::support::form_concept(tx, &name, &members, said, NewMemory::default(), &meta)
                });
                formed.map(|id| ids.push(id))
            }
        };
        if let Err(Error::Unsupported(m)) = result {
            panic!("{op:?} is not served by {}: {m}", store.location());
        }
    }
    store
}

/// Replays `store` and checks that the projections come back exactly.
fn replay_matches(mut store: Store) -> Result<(), TestCaseError> {
    let live = store.snapshot().unwrap();
    let (events, memories) = store.replay().unwrap();
    prop_assert_eq!(events, store.event_count().unwrap());
    prop_assert_eq!(memories as usize, live.memories.len());
    prop_assert_eq!(store.snapshot().unwrap(), live.clone());
    // As-of "now" for every memory equals its live state.
    for m in &live.memories {
        prop_assert_eq!(&store.get_as_of(m.id, AsOf::Seq(i64::MAX)).unwrap(), m);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn replay_rebuilds_exactly_the_live_projections(ops in proptest::collection::vec(op(), 1..60)) {
        replay_matches(run(&ops))?;
    }

    /// A restored backup is held to the commands' rules: whatever they wrote passes them.
    #[test]
    fn a_backup_of_any_history_restores_it(ops in proptest::collection::vec(op(), 1..60)) {
        let store = run(&ops);
        let mut backup = Vec::new();
        store.export_backup(&mut backup).unwrap();
        let mut restored = Store::in_memory(store.clock().clone()).unwrap();
        let restored_events = restored.import_backup("backup.jsonl", &mut &backup[..]);
        prop_assert!(restored_events.is_ok(), "{:?}", restored_events);
        prop_assert_eq!(restored.snapshot().unwrap(), store.snapshot().unwrap());
    }
}

#[cfg(feature = "postgres")]
proptest! {
    // Each case on a fresh PostgreSQL database (about 0.1 s to create): fewer cases.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn replay_rebuilds_exactly_the_live_projections_on_postgres(ops in proptest::collection::vec(op(), 1..60)) {
        let clock = start();
        let store = Store::open_postgres(&crate::server::fresh_database(), clock.clone()).unwrap();
        replay_matches(run_on(store, &clock, &ops))?;
    }
}

#[cfg(feature = "postgres")]
proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// A backup moves a store between engines, both ways: SQLite's restored on PostgreSQL, and
    /// that one's backup restored on SQLite again, give the same memories.
    #[test]
    fn a_backup_moves_any_history_between_engines(ops in proptest::collection::vec(op(), 1..60)) {
        let store = run(&ops);
        let mut backup = Vec::new();
        store.export_backup(&mut backup).unwrap();
        let mut pg = Store::open_postgres(&crate::server::fresh_database(), store.clock().clone()).unwrap();
        let restored = pg.import_backup("backup.jsonl", &mut &backup[..]);
        prop_assert!(restored.is_ok(), "{:?}", restored);
        prop_assert_eq!(pg.snapshot().unwrap().memories, store.snapshot().unwrap().memories);
        // New writes on the restored store follow the restored log.
        let after = crate::support::concept("after_restore", &[("x", "1")]);
        let added = pg.create(after, NewMemory::default(), &crate::support::user());
        prop_assert!(added.is_ok(), "{:?}", added);
        let mut again = Vec::new();
        pg.export_backup(&mut again).unwrap();
        let mut back = Store::in_memory(store.clock().clone()).unwrap();
        prop_assert!(back.import_backup("again.jsonl", &mut &again[..]).is_ok());
        prop_assert_eq!(back.snapshot().unwrap().memories, pg.snapshot().unwrap().memories);
    }
}
