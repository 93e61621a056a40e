//! Curation: flagging puts the facts and procedures that meet the criteria in the queue with
//! their reasons; a person's approvals and rejections are recorded with who and when; a memory
//! that changes leaves the queue (and cannot be decided on as it was), comes back once it is
//! stable again; forgetting a memory deletes its records.

use std::sync::atomic::AtomicBool;

use strata_api::curation::{CandidateCriteria, CandidateQuery, Verdict};
use strata_api::{AddRequest, ErrorCode, Target, UpdateRequest};
use strata_core::{Content, Filter, Procedure, Tier};

use crate::{Db, fact};

fn kept(mut req: AddRequest, importance: f64, tier: Tier, tags: &[&str]) -> AddRequest {
    req.importance = Some(importance);
    req.tier = Some(tier);
    req.tags = tags.iter().map(|t| t.to_string()).collect();
    req
}

fn query(status: Option<&str>) -> CandidateQuery {
    CandidateQuery { status: status.map(Into::into), ..Default::default() }
}

#[test]
fn flagging_approval_change_and_forget() {
    let db = Db::new();
    let mut e = db.engine("ana", None);
    let tea = e.add(kept(fact("favourite_tea", "jasmine"), 0.8, Tier::Long, &["home"])).unwrap().id;
    let steps = Content::Procedural(Procedure {
        name: "water the orchids".into(),
        steps: vec!["Soak the pot for ten minutes".into(), "Let it drain".into()],
        context: None,
    });
    let orchids = e.add(kept(AddRequest::new(steps), 0.9, Tier::Long, &["garden"])).unwrap().id;
    e.add(kept(fact("bike", "blue"), 0.3, Tier::Long, &[])).unwrap(); // not important enough
    e.add(kept(fact("desk", "oak"), 0.9, Tier::Medium, &[])).unwrap(); // not long-term
    e.add(kept(fact("home", "Paris"), 0.9, Tier::Long, &[])).unwrap(); // contradicted …
    e.add(kept(fact("Home", "Lyon"), 0.9, Tier::Long, &[])).unwrap(); // … by this one
    for _ in 0..3 {
        for q in ["favourite tea", "water the orchids", "bike", "desk", "home"] {
            e.recall(q, Filter::default(), 10).unwrap();
        }
    }
    let criteria = CandidateCriteria::default();
    let stop = AtomicBool::new(false);
    let early = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!((early.considered, early.qualifying), (6, 0), "nothing has been unchanged for 14 days yet");

    db.clock.advance(chrono::Duration::days(15));
    let r = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!((r.qualifying, r.flagged, r.kept, r.withdrawn), (2, 2, 0, 0), "{r:?}");
    let q = e.training_candidates(&query(None)).unwrap();
    assert_eq!((q.flagged, q.approved, q.rejected, q.changed), (2, 0, 0, 0));
    let ids: Vec<&str> = q.candidates.iter().map(|c| c.memory.id.as_str()).collect();
    assert_eq!(ids, [orchids.as_str(), tea.as_str()], "the more important first");
    let reasons = &q.candidates[1].reasons;
    for want in ["Long-term memory", "Importance 0.80 (at least 0.60)", "Unchanged for 15 days (at least 14)"] {
        assert!(reasons.contains(&want.to_string()), "{want} in {reasons:?}");
    }
    assert!(reasons.iter().any(|r| r.starts_with("Recalled ") && r.ends_with("(at least 3)")), "{reasons:?}");
    assert_eq!(q.tags, ["garden", "home"]);
    let tagged = e.training_candidates(&CandidateQuery { tag: Some("home".into()), ..Default::default() }).unwrap();
    assert_eq!(tagged.candidates.len(), 1);
    let lowest = e.training_candidates(&CandidateQuery { sort: Some("lowest".into()), ..Default::default() }).unwrap();
    assert_eq!(lowest.candidates[0].memory.id, tea);
    let procedures =
        e.training_candidates(&CandidateQuery { kind: Some("procedural".into()), ..Default::default() }).unwrap();
    assert_eq!(procedures.candidates.len(), 1);

    // Decisions, with who and what they said.
    let approved = e.decide_candidates(std::slice::from_ref(&tea), Verdict::Approve, Some("a true favourite")).unwrap();
    assert_eq!((approved[0].status.as_str(), approved[0].decided_by.as_deref()), ("approved", Some("test")));
    e.decide_candidates(std::slice::from_ref(&orchids), Verdict::Reject, None).unwrap();
    let q = e.training_candidates(&query(Some("approved"))).unwrap();
    assert_eq!((q.candidates.len(), q.flagged, q.approved, q.rejected), (1, 0, 1, 1));
    assert_eq!(q.candidates[0].note.as_deref(), Some("a true favourite"));
    // A rejected memory stays rejected across passes; an approved one stays approved.
    let again = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!((again.flagged, again.kept, again.withdrawn), (0, 2, 0));
    let q = e.training_candidates(&query(None)).unwrap();
    assert_eq!((q.flagged, q.approved, q.rejected), (0, 1, 1));

    // Unknown ids and memories that are not candidates are refused, and nothing is decided.
    let bike = e.memory(&Target::new("bike")).unwrap().id.to_string();
    let err = e.decide_candidates(&[tea.clone(), bike], Verdict::Reject, None).unwrap_err();
    assert!(err.message.contains("is not a training candidate"), "{}", err.message);
    assert_eq!(e.training_candidates(&query(Some("approved"))).unwrap().candidates.len(), 1, "all or none");
    assert_eq!(e.decide_candidates(&["nope".into()], Verdict::Approve, None).unwrap_err().code, ErrorCode::NotFound);

    // An edit takes it out of the queue at once; deciding on it is refused; flagging withdraws
    // it with the reason, and flags it again once it has been stable for long enough.
    let edit = UpdateRequest { importance: Some(0.95), ..Default::default() };
    e.update(&Target::new(tea.clone()), edit).unwrap();
    let q = e.training_candidates(&query(None)).unwrap();
    assert_eq!((q.approved, q.changed), (0, 1));
    let err = e.decide_candidates(std::slice::from_ref(&tea), Verdict::Approve, None).unwrap_err();
    assert!(err.message.contains("changed after it was flagged"), "{}", err.message);
    let r = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!((r.withdrawn, r.kept), (1, 1), "{r:?}");
    db.clock.advance(chrono::Duration::days(15));
    let r = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!(r.flagged, 1, "{r:?}");
    let history = e.candidate_history(&tea).unwrap();
    let kinds: Vec<&str> = history.iter().map(|h| h.kind.as_str()).collect();
    assert_eq!(kinds, ["flagged", "approved", "withdrawn", "flagged"]);
    assert_eq!(history[1].by, "test");
    assert_eq!(history[1].detail, "“a true favourite”");
    assert_eq!(history[2].detail, "it changed today (needs 14 days unchanged)");

    // Taking a decision back puts it in the queue again.
    e.decide_candidates(std::slice::from_ref(&orchids), Verdict::Reopen, None).unwrap();
    assert_eq!(e.training_candidates(&query(None)).unwrap().flagged, 2);

    // Forget deletes the memory's candidate row and its history.
    e.forget(&Target::new(orchids.clone())).unwrap();
    let q = e.training_candidates(&query(None)).unwrap();
    assert_eq!((q.flagged, q.changed), (1, 0), "forget leaves no record behind");
    let store = strata_core::Store::open(db.dir.path().join("s.db")).unwrap();
    let gone = store.candidate_history("ana", orchids.parse().unwrap()).unwrap();
    assert!(gone.is_empty(), "{gone:?}");
    assert_eq!(e.candidate_history(&orchids).unwrap_err().code, ErrorCode::Forgotten);

    // Criteria that make no sense are refused.
    let bad = CandidateCriteria { min_importance: 1.5, ..Default::default() };
    let err = e.flag_candidates(&bad, &mut |_, _| Ok(()), &stop).unwrap_err();
    assert!(err.message.contains("between 0 and 1"), "{}", err.message);
    // A cancelled pass writes nothing.
    let q_before = e.training_candidates(&query(None)).unwrap().flagged;
    let err = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &AtomicBool::new(true)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert_eq!(e.training_candidates(&query(None)).unwrap().flagged, q_before);
}

/// A contradicting fact keeps a memory out, and is said as the reason it left the queue.
#[test]
fn a_contradiction_withdraws_a_candidate() {
    let db = Db::new();
    let mut e = db.engine("ana", None);
    let home = e.add(kept(fact("home", "Paris"), 0.9, Tier::Long, &[])).unwrap().id;
    for _ in 0..3 {
        e.recall("home", Filter::default(), 10).unwrap();
    }
    db.clock.advance(chrono::Duration::days(20));
    let stop = AtomicBool::new(false);
    let criteria = CandidateCriteria::default();
    assert_eq!(e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap().flagged, 1);
    e.add(kept(fact("HOME", "Lyon"), 0.5, Tier::Short, &[])).unwrap();
    let r = e.flag_candidates(&criteria, &mut |_, _| Ok(()), &stop).unwrap();
    assert_eq!(r.withdrawn, 1);
    let last = e.candidate_history(&home).unwrap().pop().unwrap();
    assert_eq!(
        (last.kind.as_str(), last.detail.as_str()),
        ("withdrawn", "another memory says something different about the same fact")
    );
}

/// A person's edit of a candidate's examples is kept for the memory as it is: a change to the
/// memory leaves it out, forgetting deletes it, and only candidates can have one.
#[test]
fn edited_examples_are_kept_for_the_memory_as_it_was() {
    let db = Db::new();
    let mut e = db.engine("ana", None);
    let tea = e.add(kept(fact("tea", "jasmine"), 0.9, Tier::Long, &[])).unwrap().id;
    let bike = e.add(kept(fact("bike", "blue"), 0.1, Tier::Long, &[])).unwrap().id;
    for _ in 0..3 {
        e.recall("tea", Filter::default(), 5).unwrap();
    }
    db.clock.advance(chrono::Duration::days(20));
    let stop = AtomicBool::new(false);
    e.flag_candidates(&CandidateCriteria::default(), &mut |_, _| Ok(()), &stop).unwrap();
    let mine = serde_json::json!([{ "question": "Which tea?", "answer": "Jasmine.", "kind": "fact", "split": "train", "sources": [] }]);
    let err = e.save_example_edit(&bike, Some(&mine)).unwrap_err();
    assert!(err.message.contains("is not a training candidate"), "{}", err.message);
    assert!(e.save_example_edit(&tea, Some(&serde_json::json!({}))).unwrap_err().message.contains("a list"));
    e.save_example_edit(&tea, Some(&mine)).unwrap();
    assert_eq!(e.example_edits().unwrap().get(&tea), Some(&mine));
    e.save_example_edit(&tea, None).unwrap();
    assert!(e.example_edits().unwrap().is_empty(), "back to the generated examples");
    e.save_example_edit(&tea, Some(&mine)).unwrap();
    db.clock.advance(chrono::Duration::seconds(1));
    e.update(&Target::new(tea.clone()), UpdateRequest { importance: Some(0.8), ..Default::default() }).unwrap();
    assert!(e.example_edits().unwrap().is_empty(), "an edit of the memory as it was is left out");
    e.forget(&Target::new(tea.clone())).unwrap();
    let store = strata_core::Store::open(db.dir.path().join("s.db")).unwrap();
    assert!(store.example_edits("ana").unwrap().is_empty(), "forget deletes the edit");
}
