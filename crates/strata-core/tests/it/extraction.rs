//! Extraction's records (which episodes it read, each decision it made) and the concepts'
//! pass counter, on both engines: written in the write transaction, read back, settled once,
//! and erased when a memory they name is forgotten.

use strata_core::*;

use crate::support::{concept, on_both_engines, t0, user, utterance};

fn decision(id: &str, episode: MemoryId, status: DecisionStatus) -> Decision {
    Decision {
        id: id.into(),
        run_id: "run-1".into(),
        scope: Scope { user_id: "default".into(), agent_id: None, session_id: Some("s1".into()) },
        made_at: t0(),
        model: "on-device/qwen".into(),
        action: DecisionAction::Add,
        subject: "person/ana".into(),
        target: None,
        detail: DecisionDetail {
            fact: "Ana lives in Lisbon.".into(),
            topic: "home".into(),
            subject_name: "Ana".into(),
            reason: "she said so".into(),
            ..Default::default()
        },
        sources: vec![episode],
        status,
        decided_at: None,
        decided_by: None,
    }
}

on_both_engines! {
    fn decisions_are_recorded_listed_and_settled_once(f: &mut Fixture) {
        let episode = f.add(utterance("Ana", "I moved to Lisbon last spring.", t0())).id;
        let fact = f.add(concept("person/ana", &[("home", "Lisbon")])).id;
        f.store
            .transact(|tx| {
                tx.record_decision(&decision("01DEC0000000000000000000A1", episode, DecisionStatus::Proposed))?;
                tx.record_decision(&decision("01DEC0000000000000000000A2", episode, DecisionStatus::Applied))
            })
            .unwrap();

        let proposed = f.store.decisions("default", Some(DecisionStatus::Proposed), 10).unwrap();
        assert_eq!(proposed.len(), 1);
        assert_eq!(proposed[0], decision("01DEC0000000000000000000A1", episode, DecisionStatus::Proposed));
        assert_eq!(f.store.decisions("default", None, 10).unwrap().len(), 2);
        assert_eq!(f.store.decisions("default", None, 1).unwrap().len(), 1, "the limit holds");
        assert!(f.store.decisions("someone-else", None, 10).unwrap().is_empty());

        let edited = DecisionDetail { fact: "Ana lives in Porto.".into(), ..proposed[0].detail.clone() };
        f.store
            .transact(|tx| tx.settle_decision("01DEC0000000000000000000A1", DecisionStatus::Applied, Some(fact), &edited, "window"))
            .unwrap();
        let settled = f.store.decision("01DEC0000000000000000000A1").unwrap();
        assert_eq!((settled.status, settled.target, settled.detail.fact.as_str()), (DecisionStatus::Applied, Some(fact), "Ana lives in Porto."));
        assert_eq!((settled.decided_at, settled.decided_by.as_deref()), (Some(t0()), Some("window")));

        let again = f.store.transact(|tx| {
            tx.settle_decision("01DEC0000000000000000000A1", DecisionStatus::Rejected, None, &edited, "window")
        });
        assert_eq!(again.unwrap_err().to_string(), "decision 01DEC0000000000000000000A1 was already applied");
        assert!(matches!(f.store.decision("01DEC00000000000000000NONE"), Err(Error::NotFound(_))));
    }

    fn reads_are_marked_once_with_their_reasons(f: &mut Fixture) {
        let a = f.add(utterance("Ana", "first", t0())).id;
        let b = f.add(utterance("Ana", "second", t0())).id;
        let c = f.add(utterance("Ana", "third", t0())).id;
        assert_eq!(f.store.unread_episodes(&[a, b, c]).unwrap(), vec![a, b, c]);
        f.store
            .transact(|tx| {
                tx.mark_read_with(&[a, b], "run-1", &[(b, "too long for the model".into())])?;
                assert_eq!(tx.unread_episodes(&[a, b, c])?, vec![c], "read inside the transaction");
                // Marking again changes nothing (the first reading stands).
                tx.mark_read(&[a, b], "run-2")
            })
            .unwrap();
        assert_eq!(f.store.unread_episodes(&[c, b, a]).unwrap(), vec![c]);
        assert_eq!(f.store.skipped_reason(a).unwrap(), None);
        assert_eq!(f.store.skipped_reason(b).unwrap().as_deref(), Some("too long for the model"));
        assert_eq!(f.store.skipped_reason(c).unwrap(), None);
        assert_eq!(f.count_rows("SELECT count(*) FROM extraction_reads WHERE run_id = 'run-2'"), 0);
    }

    fn forgetting_an_episode_erases_its_extraction_records(f: &mut Fixture) {
        let episode = f.add(utterance("Ana", "My phone number is 555-0199.", t0())).id;
        let other = f.add(utterance("Ana", "I like tea.", t0())).id;
        f.store
            .transact(|tx| {
                tx.record_decision(&decision("01DEC0000000000000000000B1", episode, DecisionStatus::Proposed))?;
                tx.record_decision(&decision("01DEC0000000000000000000B2", other, DecisionStatus::Proposed))?;
                tx.mark_read(&[episode, other], "run-1")
            })
            .unwrap();
        f.store.forget(episode, &user()).unwrap();
        assert!(matches!(f.store.decision("01DEC0000000000000000000B1"), Err(Error::NotFound(_))));
        assert_eq!(f.store.decision("01DEC0000000000000000000B2").unwrap().sources, vec![other], "others stay");
        assert_eq!(f.count_rows(&format!("SELECT count(*) FROM extraction_reads WHERE episode_id = '{episode}'")), 0);
        assert_eq!(f.count_rows(&format!("SELECT count(*) FROM extraction_reads WHERE episode_id = '{other}'")), 1);
        assert_eq!(f.count_rows("SELECT count(*) FROM extraction_decisions WHERE detail LIKE '%Lisbon%'"), 1);
    }

    fn a_grouping_pass_writes_only_if_no_other_wrote_since(f: &mut Fixture) {
        assert_eq!(f.store.concept_passes().unwrap(), 0);
        assert!(f.store.transact(|tx| tx.bump_concept_passes(0)).unwrap());
        assert_eq!(f.store.concept_passes().unwrap(), 1);
        assert!(!f.store.transact(|tx| tx.bump_concept_passes(0)).unwrap(), "a pass that read 0 is late");
        assert!(f.store.transact(|tx| tx.bump_concept_passes(1)).unwrap());
        assert_eq!(f.store.concept_passes().unwrap(), 2);
    }
}
