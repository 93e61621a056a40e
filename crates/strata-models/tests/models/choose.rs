//! Choosing the adapter a question is about, on the real embedder: a held-out phrasing picks
//! its own adapter among several, a question about nothing trained picks none, and the
//! threshold decides between; a search's embedding is reused, not made again.

use std::sync::Arc;

use strata_core::{Embedder, RecentQueries};
use strata_models::{AdapterInUse, CHOOSE_AT, Chooser};

fn adapter(id: &str, keys: &[&str]) -> AdapterInUse {
    AdapterInUse {
        dir: Default::default(),
        id: id.into(),
        base_model: "qwen2.5-coder-0.5b".into(),
        keys: keys.iter().map(|k| k.to_string()).collect(),
    }
}

fn adapters() -> Vec<AdapterInUse> {
    vec![
        adapter(
            "ad_people",
            &[
                "What is maya chen's dog's name?",
                "Do you know maya chen's home town?",
                "Tell me tom okafor's employer.",
            ],
        ),
        adapter(
            "ad_travel",
            &["What is lisbon trip's hotel?", "Do you know kyoto stay's ryokan?", "Tell me passport's expiry."],
        ),
    ]
}

#[test]
fn a_question_chooses_the_adapter_it_is_about_or_none() {
    let embedder: Arc<dyn Embedder> = Arc::new(crate::model());
    let chooser = Chooser::new(embedder, &adapters(), CHOOSE_AT).unwrap();
    let chosen = |q: &str| chooser.choose(q).unwrap().map(|c| c.index);
    assert_eq!(chosen("I forgot maya chen's dog's name. What is it?"), Some(0));
    assert_eq!(chosen("Please recall the hotel of lisbon trip."), Some(1));
    assert_eq!(chosen("What is the capital of Canada?"), None, "about nothing trained");
    assert_eq!(chosen("How do I boil an egg?"), None);

    // The threshold decides: the same scores, chosen above it and not below.
    let q = "Quick question: what is kyoto stay's ryokan?";
    let scores = chooser.scores(q).unwrap();
    assert!(scores[1] > scores[0] && scores[1] >= CHOOSE_AT, "{scores:?}");
    assert_eq!(strata_models::choose::best(&scores, scores[1] + 0.01), None);
    assert_eq!(strata_models::choose::best(&scores, scores[1]).map(|c| c.index), Some(1));
}

#[test]
fn choosing_reuses_the_embedding_search_made_of_the_same_question() {
    let counted = Arc::new(Counting { inner: crate::model(), queries: Default::default() });
    let shared: Arc<dyn Embedder> = Arc::new(RecentQueries::new(counted.clone()));
    let chooser = Chooser::new(shared.clone(), &adapters(), CHOOSE_AT).unwrap();
    let q = "What is maya chen's dog's name?";
    shared.embed_query(q).unwrap(); // search
    chooser.choose(q).unwrap(); // the adapter's choice
    assert_eq!(counted.queries.load(std::sync::atomic::Ordering::Relaxed), 1, "embedded once");
}

/// An embedder that counts its queries.
struct Counting {
    inner: strata_models::MiniLm,
    queries: std::sync::atomic::AtomicUsize,
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> strata_core::Result<Vec<Vec<f32>>> {
        self.inner.embed(texts)
    }
    fn embed_query(&self, text: &str) -> strata_core::Result<Vec<f32>> {
        self.queries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.embed_query(text)
    }
}
