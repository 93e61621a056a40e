//! Compaction: memories grouped into concepts with names and extractive summaries; concepts
//! keep their ids across passes; forgetting a member takes its words out of the summary and
//! out of the file; replay rebuilds concepts exactly.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use strata_api::{AddRequest, CompactParams, ConceptView, Engine, ErrorCode, Target};
use strata_compact::features::Weights;
use strata_core::extraction::FACT_SOURCE;
use strata_core::interchange::no_tick;
use strata_core::vectors::HashEmbedder;
use strata_core::{Content, Episode, EpisodeBody, FactValue};

use crate::Db;

const E: HashEmbedder = HashEmbedder { id: "hash-64", dim: 64 };

const KITTEN: [&str; 4] = [
    "Pixel the kitten sleeps on the piano.",
    "Pixel the kitten chased a moth.",
    "Our kitten Pixel ate tuna again.",
    "Pixel the kitten hates baths.",
];
const MARATHON: [&str; 4] = [
    "Training for the Porto marathon.",
    "The Porto marathon route is flat.",
    "Ran twenty miles for the Porto marathon.",
    "New shoes for the Porto marathon.",
];

fn said(e: &mut Engine, day: u32, text: &str) -> String {
    let at = strata_core::time::parse_time(&format!("2026-01-{day:02}T09:00Z")).unwrap();
    let episode = Episode {
        occurred_at: at,
        body: EpisodeBody::Utterance { speaker: "Ana".into(), text: text.into() },
        concepts: vec![],
        extra: Default::default(),
    };
    e.add(AddRequest::new(Content::Episodic(episode))).unwrap().id
}

fn compact(e: &mut Engine, full: bool) -> strata_api::CompactReport {
    let params = CompactParams { full, ..CompactParams::default() };
    e.compact(&params, &mut no_tick, &AtomicBool::new(false)).unwrap()
}

fn concept_with<'a>(concepts: &'a [ConceptView], word: &str) -> &'a ConceptView {
    concepts.iter().find(|c| c.terms.iter().any(|t| t == word)).unwrap_or_else(|| panic!("no concept of {word}"))
}

fn store(db: &Db) -> (Engine, Vec<String>) {
    let mut e = db.engine("ana", None);
    e.use_embedder(Arc::new(E), false).unwrap();
    let mut ids = Vec::new();
    for (i, (k, m)) in KITTEN.iter().zip(MARATHON).enumerate() {
        ids.push(said(&mut e, 2 * i as u32 + 1, k));
        ids.push(said(&mut e, 2 * i as u32 + 2, m));
    }
    e.embed_all(&AtomicBool::new(false), &mut |_| {}).unwrap();
    (e, ids)
}

#[test]
fn related_memories_become_named_concepts_whose_summaries_quote_their_members() {
    let db = Db::new();
    let (mut e, ids) = store(&db);
    let r = compact(&mut e, true);
    assert_eq!((r.memories, r.formed, r.concepts), (8, 2, 2), "{r:?}");
    assert!(r.grouped >= 7 && r.ratio >= 2.0, "{r:?}");
    let concepts = e.concepts().unwrap();
    let kitten = concept_with(&concepts, "kitten");
    assert!(kitten.name.contains("Pixel") && kitten.name.contains("kitten"), "{}", kitten.name);
    let said: Vec<String> = ids.iter().step_by(2).cloned().collect();
    assert!(kitten.members.len() >= 3 && kitten.members.iter().all(|m| said.contains(m)), "{kitten:?}");
    assert!(kitten.key.starts_with("concept/"));
    assert!(kitten.first.as_str() >= "2026-01-01T09:00:00Z" && kitten.last.as_str() <= "2026-01-07T09:00:00Z");
    assert!(kitten.first < kitten.last);
    // Every sentence is one its member said, named with who said it.
    assert!(!kitten.summary.is_empty());
    for s in &kitten.summary {
        let member = e.memory(&Target::new(s.from.clone())).unwrap();
        let Content::Episodic(ep) = &member.content else { panic!() };
        let EpisodeBody::Utterance { text, .. } = &ep.body else { panic!() };
        assert!(s.text.starts_with("Ana: ") && text.contains(&s.text["Ana: ".len()..]), "{s:?}");
    }
    assert_eq!(e.concept(&Target::new(kitten.key.clone())).unwrap().id, kitten.id);
    // A dry run writes nothing; a second pass changes nothing.
    let again =
        e.compact(&CompactParams { dry_run: true, ..Default::default() }, &mut no_tick, &AtomicBool::new(false));
    assert_eq!(again.unwrap().unchanged, 2);
    let r = compact(&mut e, true);
    assert_eq!((r.formed, r.updated, r.unchanged), (0, 0, 2), "{r:?}");
}

#[test]
fn a_concept_keeps_its_id_as_members_join() {
    let db = Db::new();
    let (mut e, _) = store(&db);
    compact(&mut e, true);
    let before = concept_with(&e.concepts().unwrap(), "marathon").clone();
    let new = said(&mut e, 20, "Booked a hotel for the Porto marathon.");
    let far = said(&mut e, 21, "Quarterly taxes are due in April.");
    e.embed_all(&AtomicBool::new(false), &mut |_| {}).unwrap();
    let r = compact(&mut e, false);
    assert_eq!((r.joined, r.updated, r.formed), (1, 1, 0), "{r:?}");
    let after = concept_with(&e.concepts().unwrap(), "marathon").clone();
    assert_eq!(after.id, before.id);
    assert!(after.members.contains(&new) && !after.members.contains(&far));
    // The next incremental pass looks only at what was written since: nothing to do.
    let again = compact(&mut e, false);
    assert_eq!((again.joined, again.updated, again.unchanged), (0, 0, 2), "{again:?}");
    // A full pass over the same memories keeps both ids.
    compact(&mut e, true);
    let concepts = e.concepts().unwrap();
    assert_eq!(concept_with(&concepts, "marathon").id, before.id);
    assert_eq!(concepts.len(), 2);
}

#[test]
fn forgetting_a_member_takes_its_words_out_of_the_summary_and_the_file() {
    let db = Db::new();
    let (mut e, _) = store(&db);
    compact(&mut e, true);
    let kitten = concept_with(&e.concepts().unwrap(), "kitten").clone();
    let quoted = kitten.summary[0].clone();
    e.forget(&Target::new(quoted.from.clone())).unwrap();
    let now = concept_with(&e.concepts().unwrap(), "kitten").clone();
    assert_eq!(now.key, kitten.key, "re-formed under the same key");
    assert!(!now.members.contains(&quoted.from));
    assert!(now.summary.iter().all(|s| s.from != quoted.from && s.text != quoted.text));
    // Replay rebuilds the concepts as they are.
    let before = format!("{:?}", e.concepts().unwrap());
    e.replay().unwrap();
    assert_eq!(format!("{:?}", e.concepts().unwrap()), before);
    let path = db.dir.path().join("s.db");
    drop(e);
    let bytes = std::fs::read(&path).unwrap();
    let words = &quoted.text["Ana: ".len()..];
    assert!(!bytes.windows(words.len()).any(|w| w == words.as_bytes()), "'{words}' is in no byte of the file");
}

/// A model writes the summaries: a sentence stands only on the memories it draws on, a concept
/// with none left keeps what its members said, a second pass leaves written ones alone, and
/// forgetting a cited memory takes the written sentence out of the concept and the file.
#[test]
fn a_written_summary_keeps_only_what_its_cited_memories_hold() {
    use crate::extract::{Scripted, text};
    let db = Db::new();
    let (mut e, _) = store(&db);
    compact(&mut e, true);
    let reply = "Pixel is a much loved kitten. Pixel the kitten lives in Lisbon. Everyone loves cats.";
    let model = Scripted::new(vec![text(reply), text(reply), text(reply)]);
    let params = strata_api::WriteParams::default();
    let r = e.write_summaries(&model, &params, &mut no_tick, &AtomicBool::new(false)).unwrap();
    assert_eq!((r.written, r.kept_extractive, r.sentences_kept, r.sentences_dropped), (1, 1, 1, 5), "{r:?}");
    let concepts = e.concepts().unwrap();
    let kitten = concept_with(&concepts, "kitten").clone();
    assert_eq!(kitten.written_by.as_deref(), Some("extractor"));
    let texts: Vec<&str> = kitten.summary.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts, ["Pixel is a much loved kitten."], "Lisbon is in no memory; the last draws on none");
    assert!(kitten.members.contains(&kitten.summary[0].from));
    let marathon = concept_with(&concepts, "marathon");
    assert_eq!(marathon.written_by, None, "no sentence about Pixel holds up against the marathon");
    assert!(marathon.summary.iter().all(|s| s.text.starts_with("Ana: ")));
    // Again: the written one is left alone, the other is tried once more.
    let r = e.write_summaries(&model, &params, &mut no_tick, &AtomicBool::new(false)).unwrap();
    assert_eq!((r.written, r.already, r.kept_extractive), (0, 1, 1), "{r:?}");
    assert_eq!(model.left(), 0);
    e.forget(&Target::new(kitten.summary[0].from.clone())).unwrap();
    let now = concept_with(&e.concepts().unwrap(), "kitten").clone();
    assert!(now.summary.iter().all(|s| !s.text.contains("much loved")), "{now:?}");
    let path = db.dir.path().join("s.db");
    drop(e);
    let bytes = std::fs::read(&path).unwrap();
    assert!(!bytes.windows(10).any(|w| w == b"much loved"), "the written sentence is in no byte of the file");
}

#[test]
fn compaction_without_the_embedding_model_says_so() {
    let db = Db::new();
    let mut e = db.engine("ana", None);
    let err = e.compact(&CompactParams::default(), &mut no_tick, &AtomicBool::new(false)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Model);
    assert!(err.message.contains("embedding model"), "{}", err.message);
    let cancel = AtomicBool::new(true);
    let (mut e, _) = store(&Db::new());
    let err = e.compact(&CompactParams::default(), &mut no_tick, &cancel).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(e.concepts().unwrap().is_empty(), "a cancelled pass writes nothing");
}

#[test]
fn a_concept_whose_members_no_longer_form_a_group_is_dissolved_with_the_reason() {
    let db = Db::new();
    let (mut e, ids) = store(&db);
    compact(&mut e, true);
    let before = e.concepts().unwrap();
    assert_eq!(before.len(), 2);
    // Groups of a hundred: none of these eight memories form one any more.
    let mut params = CompactParams::default();
    params.clustering.min_cluster_size = 100;
    let r = e.compact(&params, &mut no_tick, &AtomicBool::new(false)).unwrap();
    assert_eq!((r.dissolved, r.merged, r.concepts), (2, 0, 0), "{r:?}");
    assert!(e.concepts().unwrap().is_empty());
    let gone = e.memory(&Target::new(before[0].id.clone())).unwrap();
    assert!(gone.expired_at.is_some(), "dissolved, not deleted: its history stays");
    let last = e.history(&Target::new(before[0].id.clone())).unwrap().pop().unwrap();
    assert_eq!(last.event_type, "expired");
    assert!(last.summary.contains("no longer form a group"), "{}", last.summary);
    for id in &ids {
        assert!(e.memory(&Target::new(id.clone())).unwrap().expired_at.is_none(), "members are never changed");
    }
}

/// Six turns alike in meaning, said on the same days: three in one session (about Ana), three
/// in another (about Bo), among turns about something else. On meaning alone the six make one
/// concept; with what else they share counted (strongly here), the session (or the subject of
/// the facts drawn from them) keeps them apart.
#[test]
fn what_memories_share_besides_meaning_keeps_sessions_and_subjects_apart() {
    let turns = [
        "Porto marathon training plan: a long run.",
        "Porto marathon training plan: a tempo run.",
        "Porto marathon training plan: an easy run.",
    ];
    let sessions_of = |shared: Weights, link_subjects: bool| -> Vec<Vec<String>> {
        let db = Db::new();
        let mut e = db.engine("ana", None);
        e.use_embedder(Arc::new(E), false).unwrap();
        let mut by_session = Vec::new();
        for (session, subject) in [("s1", "ana"), ("s2", "bo")] {
            let mut ids = Vec::new();
            for (day, text) in turns.iter().enumerate() {
                let at = strata_core::time::parse_time(&format!("2026-01-{:02}T09:00Z", day + 1)).unwrap();
                let episode = Episode {
                    occurred_at: at,
                    body: EpisodeBody::Utterance { speaker: "Ana".into(), text: (*text).into() },
                    concepts: vec![],
                    extra: Default::default(),
                };
                let session_id = (!link_subjects).then(|| session.to_string());
                ids.push(e.add(AddRequest { session_id, ..AddRequest::new(Content::Episodic(episode)) }).unwrap().id);
            }
            if link_subjects {
                let fact = strata_core::Concept {
                    key: format!("{subject}/sport"),
                    facts: [("fact".to_string(), FactValue::Text(format!("{subject} is a runner")))]
                        .into_iter()
                        .collect(),
                };
                let f = e.add(AddRequest::new(Content::Semantic(fact))).unwrap().id;
                for id in &ids {
                    e.link(&Target::new(f.clone()), &Target::new(id.clone()), FACT_SOURCE).unwrap();
                }
            }
            by_session.push(ids);
        }
        // Something else said meanwhile, so that the turns above are a group among others.
        for (day, text) in KITTEN.iter().enumerate() {
            said(&mut e, day as u32 + 1, text);
        }
        e.embed_all(&AtomicBool::new(false), &mut |_| {}).unwrap();
        let params = CompactParams { shared, ..CompactParams::default() };
        e.compact(&params, &mut no_tick, &AtomicBool::new(false)).unwrap();
        // For each concept, the sessions its turns come from.
        e.concepts()
            .unwrap()
            .iter()
            .map(|c| {
                let mut from: Vec<String> = (0..2)
                    .filter(|&k| c.members.iter().any(|m| by_session[k].contains(m)))
                    .map(|k| format!("s{}", k + 1))
                    .collect();
                from.dedup();
                from
            })
            .collect()
    };
    let mixed = |concepts: &[Vec<String>]| concepts.iter().any(|from| from.len() > 1);
    for link_subjects in [false, true] {
        let alone = sessions_of(Weights::NONE, link_subjects);
        assert!(mixed(&alone), "on meaning alone the two sessions share a concept: {alone:?}");
        let shared = sessions_of(Weights { session: 1.0, subject: 1.0, time: 0.3 }, link_subjects);
        assert!(!shared.is_empty() && !mixed(&shared), "subjects {link_subjects}: {shared:?}");
    }
}

/// A pass says what it does as each step begins, and what it leaves for later: memories not
/// yet searchable by meaning.
#[test]
fn a_pass_says_each_step_and_what_waits_to_be_embedded() {
    let db = Db::new();
    let (mut e, _) = store(&db);
    said(&mut db.engine("ana", None), 20, "Pixel the kitten found the garden.");
    let mut stages = Vec::new();
    let params = CompactParams { full: true, ..CompactParams::default() };
    e.compact_seeing(&params, &mut |s| stages.push(s.to_string()), &mut no_tick, &AtomicBool::new(false)).unwrap();
    assert_eq!(
        stages,
        [
            "Reading what the memories mean",
            "Finding groups among 8 memories; 1 memory not searchable by meaning yet is grouped once it is",
            "Naming and summarizing the groups"
        ]
    );
}
