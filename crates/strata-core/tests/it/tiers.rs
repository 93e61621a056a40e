//! Tier maintenance on a fixed clock: what climbs, what decays, what expires, what never moves.

use chrono::Duration;
use strata_core::*;

use crate::support::*;

fn maintain(f: &mut Fixture) -> Vec<Move> {
    f.store.maintain(&TierPolicy::default(), true).unwrap()
}

fn tier_of(f: &Fixture, id: MemoryId) -> Tier {
    f.store.get(id).unwrap().tier
}

#[test]
fn a_memory_retrieved_often_climbs_to_long_term() {
    let mut f = Fixture::new();
    let often = f.add(concept("often", &[("x", "1")]));
    let rarely = f.add(concept("rarely", &[("x", "1")]));
    for _ in 0..5 {
        f.tick(3600);
        f.store.note_access([often.id]).unwrap();
        f.store.flush_accesses().unwrap();
    }
    f.store.note_access([rarely.id]).unwrap();
    f.store.flush_accesses().unwrap();
    let moves = maintain(&mut f);
    assert_eq!(tier_of(&f, often.id), Tier::Long);
    assert_eq!(tier_of(&f, rarely.id), Tier::Medium);
    let Move::Tier { reason, .. } = &moves[0] else { panic!("{moves:?}") };
    assert!(reason.starts_with("retrieved 5 times; value 0.8"), "{reason}");
    let last = f.store.history(often.id).unwrap().pop().unwrap();
    assert!(
        matches!(&last.change, Change::TierChanged { from: Tier::Medium, to: Tier::Long, reason } if reason.contains("retrieved 5 times"))
    );
    assert_eq!(last.meta.actor, Actor::System);
}

#[test]
fn an_untouched_long_term_memory_decays_but_a_pinned_one_never_moves_down() {
    let mut f = Fixture::new();
    let faded = f.add(concept("faded", &[("x", "1")]));
    let pinned = f.add(concept("pinned", &[("x", "1")]));
    f.store
        .transact(|tx| {
            for id in [faded.id, pinned.id] {
                tx.set_tier(id, Tier::Long, "test", &user())?;
                tx.set_importance(id, Importance::new(0.1)?, &user())?;
            }
            tx.pin(pinned.id, &user()).map(|_| ())
        })
        .unwrap();
    f.tick(89 * 86_400);
    assert!(maintain(&mut f).is_empty(), "not idle long enough yet");
    f.tick(2 * 86_400);
    maintain(&mut f);
    assert_eq!(tier_of(&f, faded.id), Tier::Medium);
    assert_eq!(tier_of(&f, pinned.id), Tier::Long);
    f.tick(365 * 86_400);
    assert!(maintain(&mut f).is_empty());
    assert_eq!(tier_of(&f, pinned.id), Tier::Long);
}

#[test]
fn pinning_lifts_to_long_term() {
    let mut f = Fixture::new();
    let m = f.add(utterance("Mel", "remember my sister's birthday is in June", t0()));
    f.store.transact(|tx| tx.pin(m.id, &user())).unwrap();
    assert!(!f.store.transact(|tx| tx.pin(m.id, &user())).unwrap(), "pinning twice changes nothing");
    maintain(&mut f);
    assert_eq!(tier_of(&f, m.id), Tier::Long);
}

#[test]
fn working_memory_keeps_the_newest_of_a_session_and_the_rest_leave_or_expire() {
    let mut f = Fixture::new();
    let policy = TierPolicy::default();
    let mut ids = Vec::new();
    for i in 0..25 {
        let new = NewMemory {
            scope: Scope { session_id: Some("s1".into()), ..Scope::default() },
            // The five oldest matter; the rest are small talk.
            importance: Some(Importance::new(if i < 3 { 0.6 } else { 0.1 }).unwrap()),
            ..Default::default()
        };
        let m =
            f.store.create(utterance("Mel", &format!("turn {i}"), t0() + Duration::minutes(i)), new, &user()).unwrap();
        ids.push(m.id);
    }
    let moves = maintain(&mut f);
    assert_eq!(moves.len(), 5, "{moves:?}");
    for (i, id) in ids.iter().enumerate() {
        let m = f.store.get(*id).unwrap();
        match i {
            0..3 => assert_eq!((m.tier, m.expired_at), (Tier::Medium, None), "turn {i}: important, kept in medium"),
            3..5 => assert!(m.expired_at.is_some() && m.tier == Tier::Short, "turn {i}: low value, expired"),
            _ => assert_eq!(m.tier, Tier::Short, "turn {i}: still in working memory"),
        }
    }
    // Expired memories are hidden from recall, not deleted; a tier change revives one.
    let all = Filter { include_expired: true, ..Default::default() };
    assert_eq!(f.store.list(&Filter::default(), 100, None).unwrap().items.len(), 23);
    assert_eq!(f.store.list(&all, 100, None).unwrap().items.len(), 25);
    assert!(f.store.search("turn 3", &Filter::default(), 30, ("", "")).unwrap().iter().all(|h| h.memory.id != ids[3]));
    f.store.transact(|tx| tx.set_tier(ids[3], Tier::Medium, "wanted after all", &user())).unwrap();
    assert_eq!(f.store.get(ids[3]).unwrap().expired_at, None);

    // A day later the rest leave working memory too: untouched for more than 24 h.
    f.tick(25 * 3600);
    let later = f.store.maintain(&policy, false).unwrap();
    assert_eq!(later.len(), 20, "{later:?}");
    assert!(later.iter().all(|m| matches!(m, Move::Expire { reason, .. } if reason.contains("untouched for 25 h"))));
}

#[test]
fn maintenance_is_deterministic_idempotent_and_replayable() {
    let mut f = Fixture::new();
    for i in 0..30 {
        let new = NewMemory {
            scope: Scope { session_id: Some(format!("s{}", i % 3)), ..Scope::default() },
            importance: Some(Importance::new(f64::from(i % 10) / 10.0).unwrap()),
            ..Default::default()
        };
        f.store.create(utterance("Mel", &format!("words {i}"), t0()), new, &user()).unwrap();
    }
    f.tick(3 * 86_400);
    let preview = f.store.maintain(&TierPolicy::default(), false).unwrap();
    assert!(!preview.is_empty());
    let applied = maintain(&mut f);
    assert_eq!(preview, applied, "a preview is exactly what is applied");
    assert!(maintain(&mut f).is_empty(), "a second run at the same time changes nothing");
    let live = f.store.snapshot().unwrap();
    f.store.replay().unwrap();
    assert_eq!(f.store.snapshot().unwrap(), live);
}

/// A long-term concept (importance 0.1) grouping `members`.
fn group(f: &mut Fixture, key: &str, members: &[MemoryId]) -> MemoryId {
    let said: Vec<concepts::Sentence> =
        members.iter().map(|m| concepts::Sentence::quoted(*m, format!("{key} {m}"))).collect();
    let new =
        NewMemory { tier: Some(Tier::Long), importance: Some(Importance::new(0.1).unwrap()), ..Default::default() };
    f.store.transact(|tx| form_concept(tx, key, members, said, new, &user())).unwrap()
}

#[test]
fn concepts_consolidate_their_members_and_are_worth_what_their_members_are_used_for() {
    let mut f = Fixture::new();
    let medium = NewMemory { tier: Some(Tier::Medium), ..Default::default() };
    let said = |f: &mut Fixture, text: &str, new: NewMemory| {
        f.store.create(utterance("Mel", text, t0()), new, &user()).unwrap().id
    };
    let [e1, e2, alone, q1, q2] =
        ["kitten one", "kitten two", "the marathon", "quiet one", "quiet two"].map(|t| said(&mut f, t, medium.clone()));
    let small_talk = NewMemory {
        scope: Scope { session_id: Some("s1".into()), ..Scope::default() },
        importance: Some(Importance::new(0.1).unwrap()),
        ..Default::default()
    };
    let short = said(&mut f, "kitten three, by the way", small_talk);
    let used = group(&mut f, "kitten", &[e1, e2, short]);
    let idle = group(&mut f, "quiet", &[q1, q2]);
    for _ in 0..5 {
        f.tick(3600);
        f.store.note_access([e1, e2, alone]).unwrap();
        f.store.flush_accesses().unwrap();
    }
    f.tick(25 * 3600);
    let moves = maintain(&mut f);
    // Recalled as often, the lone memory climbs; the concept's members stay, consolidated by it.
    assert_eq!(tier_of(&f, alone), Tier::Long);
    assert_eq!((tier_of(&f, e1), tier_of(&f, e2)), (Tier::Medium, Tier::Medium));
    // Small talk leaving working memory would expire; quoted by a concept, it stays in medium.
    let m = f.store.get(short).unwrap();
    assert_eq!((m.tier, m.expired_at), (Tier::Medium, None));
    let why = moves.iter().find_map(|m| match m {
        Move::Tier { id, reason, .. } if *id == short => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(why.unwrap(), format!("left working memory (untouched for 30 h); quoted by concept {used}"));
    assert_eq!(moves.len(), 2, "{moves:?}");

    // Three months on, nobody touched anything: the concept whose members were recalled is still
    // worth keeping; the one whose members never were goes back to medium-term.
    f.tick(91 * 86_400);
    let moves = maintain(&mut f);
    assert_eq!(tier_of(&f, used), Tier::Long);
    assert_eq!(tier_of(&f, idle), Tier::Medium);
    assert!(
        matches!(&moves[..], [Move::Tier { id, reason, .. }] if *id == idle && reason.starts_with("untouched for 92 days")),
        "{moves:?}"
    );
}
