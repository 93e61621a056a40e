//! Health and optimization: near-duplicates, contradictions and stale memories are found;
//! each optimization previews what it would change and changes nothing, then applies it as
//! events with their reasons and shows the health after; a merged duplicate is revived.

use std::sync::atomic::AtomicBool;

use strata_api::health::{HealthParams, Optimization};
use strata_api::{AddRequest, Target};
use strata_core::{Content, EpisodeBody, Filter};

use crate::{Db, fact};

fn said(text: &str) -> AddRequest {
    AddRequest::new(Content::Episodic(strata_core::Episode {
        occurred_at: strata_core::time::parse_time("2026-01-30T10:00Z").unwrap(),
        body: EpisodeBody::Utterance { speaker: "user".into(), text: text.into() },
        concepts: vec![],
        extra: Default::default(),
    }))
}

#[test]
fn health_finds_what_does_no_good_and_optimizations_preview_apply_and_revive() {
    let db = Db::new();
    let mut e = db.engine("ana", Some("helper"));
    let first = e.add(said("I moved to Lisbon in March and started working at the harbour office")).unwrap().id;
    e.add(said("I moved to Lisbon in March and started working at the harbour office.")).unwrap();
    e.add(said("i moved to lisbon in march, and started working at the harbour office")).unwrap();
    e.add(said("My sister Ines plays the cello in the city orchestra")).unwrap();
    e.add(said("Thanks!")).unwrap();
    e.add(said("thanks")).unwrap();
    // The same key, shared and the helper's own, disagreeing.
    db.engine("ana", None).add(fact("home", "Paris")).unwrap();
    db.clock.advance(chrono::Duration::seconds(1));
    e.add(fact("home", "Lyon")).unwrap();
    let pinned = e.add(fact("allergy", "peanuts")).unwrap().id;
    e.pin(&Target::new(pinned.clone()), true).unwrap();
    let params = HealthParams::default();

    let h = e.health(&params).unwrap();
    assert_eq!((h.counts.memories, h.counts.duplicate_groups, h.counts.duplicates), (9, 1, 2), "{:?}", h.counts);
    assert_eq!(h.duplicates[0].keep.id, first, "the earliest of equals is kept");
    assert_eq!(h.counts.contradictions, 1);
    let c = &h.contradictions[0];
    let values: Vec<&str> = c.claims.iter().map(|c| c.value.as_str()).collect();
    assert_eq!((c.key.as_str(), c.fact.as_str(), values), ("home", "v", vec!["Paris", "Lyon"]));
    assert_eq!(h.counts.stale, 0, "nothing is old yet");
    assert_eq!(h.counts.unembedded, None, "no model loaded");
    assert!(h.tables.iter().any(|(t, b)| t == "memories" && *b > 0), "{:?}", h.tables);

    // A preview changes nothing.
    let stop = AtomicBool::new(false);
    let preview = e.optimize(Optimization::MergeDuplicates, &params, false, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!((preview.applied, preview.total, preview.after.is_none()), (false, 2, true));
    assert!(preview.summary.contains("2 memories would be expired"), "{}", preview.summary);
    let kept = "user: I moved to Lisbon in March and started working at the harbour office";
    assert!(
        preview.changes.iter().all(|c| c.what == format!("expired as a near-duplicate of “{kept}”")),
        "{:?}",
        preview.changes
    );
    assert_eq!(e.health(&params).unwrap().counts.duplicates, 2);
    // Applied: the others are expired and linked, with the reason in their history.
    let done = e.optimize(Optimization::MergeDuplicates, &params, true, &mut |_, _| Ok(()), &stop).unwrap();
    let after = done.after.unwrap();
    assert_eq!((after.duplicates, after.memories), (0, 7), "{after:?}");
    let merged = preview.changes[0].memory.clone().unwrap().id;
    let history = e.history(&Target::new(merged.clone())).unwrap();
    let types: Vec<&str> = history.iter().map(|h| h.event_type.as_str()).collect();
    assert_eq!(&types[types.len() - 2..], ["linked", "expired"], "{types:?}");
    assert!(history.last().unwrap().summary.contains("near-duplicate of"), "{:?}", history.last());
    // Revived: seen again, no longer a duplicate of anything.
    let back = e.revive(&Target::new(merged.clone())).unwrap();
    assert!(back.expired_at.is_none() && back.links.is_empty(), "{back:?}");
    assert_eq!(e.health(&params).unwrap().counts.duplicates, 1);

    // Three months on, what was never used is stale — not what was recalled, nor the pinned.
    db.clock.advance(chrono::Duration::days(91));
    e.recall("cello orchestra", Filter::default(), 1).unwrap();
    let h = e.health(&params).unwrap();
    let stale: Vec<&str> = h.stale.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(h.counts.stale, 6, "the 8 live but the recalled and the pinned: {stale:?}");
    assert!(!stale.contains(&pinned.as_str()));
    let done = e.optimize(Optimization::ExpireStale, &params, true, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!((done.total, done.after.as_ref().unwrap().stale), (6, 0));
    assert_eq!(e.count(Filter::default()).unwrap(), 2, "the recalled and the pinned stay");

    // Embedding needs a model; vacuum gives the free space back.
    let err = e.optimize(Optimization::EmbedMissing, &params, false, &mut |_, _| Ok(()), &stop).unwrap_err();
    assert_eq!(err.code, strata_api::ErrorCode::Model);
    let v = e.optimize(Optimization::Vacuum, &params, true, &mut |_, _| Ok(()), &stop).unwrap();
    let after = v.after.unwrap();
    assert_eq!(after.free_bytes, 0);
    assert!(after.file_bytes <= v.before.file_bytes);
}
