//! Embedding off the write path: the background worker, recall with breakdowns, and the
//! resumable, cancellable embedding job.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use strata_api::{AddRequest, Engine, ErrorCode};
use strata_core::vectors::HashEmbedder;
use strata_core::{Content, Embedder, Episode, EpisodeBody, Filter};

use crate::Db;

const E: HashEmbedder = HashEmbedder { id: "hash-64", dim: 64 };

fn said(text: &str) -> AddRequest {
    AddRequest {
        content: Content::Episodic(Episode {
            occurred_at: strata_core::time::parse_time("2026-01-30T09:00Z").unwrap(),
            body: EpisodeBody::Utterance { speaker: "Ana".into(), text: text.into() },
            concepts: vec![],
            extra: Default::default(),
        }),
        tags: vec![],
        importance: None,
        tier: None,
        session_id: None,
        private: false,
    }
}

#[test]
fn the_background_worker_embeds_what_is_written() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    engine.use_embedder(Arc::new(E), true).unwrap();
    for i in 0..150 {
        engine.add(said(&format!("note number {i} about gardening"))).unwrap();
    }
    // Keyword-searchable at once, whatever the worker has done.
    assert!(!engine.recall("gardening", Filter::default(), 5).unwrap().is_empty());
    assert!(engine.wait_embedded(Duration::from_secs(30)).unwrap());
    assert_eq!(engine.pending_embeddings().unwrap(), 0);
    // Each later write wakes the worker again.
    let m = engine.add(said("zebra crossing near the school")).unwrap();
    assert!(engine.wait_embedded(Duration::from_secs(30)).unwrap());
    let got = engine.recall("zebra school crossing", Filter::default(), 3).unwrap();
    assert_eq!(got[0].memory.id, m.id);
    assert_eq!((got[0].why.keyword_rank, got[0].why.vector_rank), (Some(1), Some(1)));
    assert!(got[0].why.similarity.unwrap() > 0.5);
    assert!(got[0].why.score >= got[0].why.matched);
    // Recall counts as use.
    engine.flush().unwrap();
    let view = engine.get(&strata_api::Target::new(m.id.clone()), None).unwrap();
    assert_eq!(view.access_count, 1);
}

#[test]
fn another_users_memories_are_never_recalled() {
    let db = Db::new();
    let mut bo = db.engine("bo", None);
    bo.add(said("the vault code is 4471")).unwrap();
    let mut ana = db.engine("ana", None);
    ana.use_embedder(Arc::new(E), false).unwrap();
    let cancel = AtomicBool::new(false);
    ana.embed_all(&cancel, &mut |_| {}).unwrap();
    assert!(ana.recall("vault code", Filter::default(), 5).unwrap().is_empty());
}

/// Counts calls, and sets the cancel flag after the first batch.
struct Interrupting {
    inner: HashEmbedder,
    cancel: Arc<AtomicBool>,
}

impl Embedder for Interrupting {
    fn model_id(&self) -> &str {
        self.inner.id
    }
    fn dim(&self) -> usize {
        self.inner.dim
    }
    fn embed(&self, texts: &[&str]) -> strata_core::Result<Vec<Vec<f32>>> {
        self.cancel.store(true, Ordering::SeqCst);
        self.inner.embed(texts)
    }
}

#[test]
fn the_embedding_job_reports_progress_stops_when_cancelled_and_resumes() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    for i in 0..200 {
        engine.add(said(&format!("line {i}"))).unwrap();
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let model = Interrupting { inner: HashEmbedder { id: "x", dim: 32 }, cancel: cancel.clone() };
    engine.use_embedder(Arc::new(model), false).unwrap();
    let mut seen = Vec::new();
    let err = engine.embed_all(&cancel, &mut |p| seen.push(p)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(err.message.contains("64 of 200"), "{}", err.message);
    assert_eq!(seen.iter().map(|p| (p.done, p.total)).collect::<Vec<_>>(), vec![(0, 200), (64, 200)]);
    // Resuming finishes the rest only.
    let (unused, again) = (Arc::new(AtomicBool::new(false)), AtomicBool::new(false));
    let model = Interrupting { inner: HashEmbedder { id: "x", dim: 32 }, cancel: unused };
    engine.use_embedder(Arc::new(model), false).unwrap();
    let rest = engine.embed_all(&again, &mut |_| {}).unwrap();
    assert_eq!(rest.total, 136);
}

#[test]
fn without_a_model_recall_ranks_by_keywords_and_the_job_says_what_is_missing() {
    let db = Db::new();
    let mut engine: Engine = db.engine("ana", None);
    engine.add(said("tomatoes need sun")).unwrap();
    let got = engine.recall("tomatoes", Filter::default(), 5).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].why.similarity, None);
    let err = engine.embed_all(&AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert_eq!(err.code, ErrorCode::Model);
}

#[test]
fn switching_embedders_keeps_search_on_the_old_one_until_the_new_one_is_whole_and_back_costs_nothing() {
    let db = Db::new();
    let mut engine = db.engine("ana", None);
    for i in 0..100 {
        engine.add(said(&format!("line {i} about the harbour"))).unwrap();
    }
    engine.add(said("the violin lesson moved to thursday")).unwrap();
    engine.load_dataset(&crate::files::lease()).unwrap();
    engine.use_embedder(Arc::new(E), false).unwrap();
    engine.embed_all(&AtomicBool::new(false), &mut |_| {}).unwrap();

    // Stopped after the first batch: search stays on the model in use, what was done stays.
    let cancel = Arc::new(AtomicBool::new(false));
    let second = Interrupting { inner: HashEmbedder { id: "hash-64-b", dim: 32 }, cancel: cancel.clone() };
    let err = engine.switch_embedder(Arc::new(second), &cancel, &mut |_| {}).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert_eq!(engine.embedder().unwrap().model_id(), "hash-64");
    let models = engine.vector_models().unwrap();
    let counts: Vec<(&str, u64, bool)> = models.iter().map(|m| (m.model.as_str(), m.vectors, m.searched)).collect();
    assert_eq!(counts, [("hash-64", 101, true), ("hash-64-b", 64, false)]);
    let got = engine.recall("violin lesson", Filter::default(), 1).unwrap();
    assert!(got[0].why.similarity.is_some(), "recall still searches by meaning meanwhile");

    // Resumed: the rest only, then search moves over.
    let mut seen = Vec::new();
    let done = engine
        .switch_embedder(Arc::new(HashEmbedder { id: "hash-64-b", dim: 32 }), &AtomicBool::new(false), &mut |p| {
            seen.push(p.total)
        })
        .unwrap();
    assert_eq!((seen[0], done.done), (37, 37));
    assert_eq!(seen.last(), Some(&40), "the lease's 3 passages too");
    assert_eq!(engine.embedder().unwrap().model_id(), "hash-64-b");
    assert_eq!(engine.datasets().unwrap()[0].embedded, 3, "its passages searchable with the new model");
    assert!(engine.vector_models().unwrap().iter().any(|m| m.model == "hash-64-b" && m.searched && m.vectors == 101));
    let got = engine.recall("violin lesson thursday", Filter::default(), 1).unwrap();
    assert!(strata_core::search_text(&got[0].memory.content).1.contains("violin"));

    // Back to the first: its vectors were kept.
    let back = engine.switch_embedder(Arc::new(E), &AtomicBool::new(false), &mut |_| {}).unwrap();
    assert_eq!((back.done, back.total), (0, 0));
    assert!(engine.vector_models().unwrap().iter().any(|m| m.model == "hash-64" && m.searched));
}
