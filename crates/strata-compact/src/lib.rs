//! Compaction (issue 21): related memories grouped into concepts. Pure functions over texts and
//! vectors — the engine (strata-api `compact.rs`) reads the store, calls them, and writes the
//! concepts as events:
//! - [`features::joined`]: a memory's vector with what it shares besides meaning (session,
//!   subject, time), weighted;
//! - [`cluster::groups`]: HDBSCAN (petal-clustering) over the memories' unit vectors, in blocks
//!   whose groups are clustered again by their centroids when a store is large;
//! - [`terms::salient`]: each group's salient words against the rest (c-TF-IDF), its name;
//! - [`summary::summarize`]: the group's own sentences chosen for what they cover within a
//!   token limit, each naming its member;
//! - [`matching::match_groups`]: which known concept each new group continues, so a concept
//!   keeps its id while its members stay.
#![deny(missing_docs)]

pub mod cluster;
pub mod features;
pub mod matching;
pub mod summary;
pub mod terms;

/// The cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The unit-length mean of the vectors `of` names.
pub fn centroid(vectors: &[&[f32]], of: &[usize]) -> Vec<f32> {
    let dim = of.first().map_or(0, |&i| vectors[i].len());
    let mut c = vec![0f32; dim];
    for &i in of {
        for (s, x) in c.iter_mut().zip(vectors[i]) {
            *s += x;
        }
    }
    let norm = c.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    c.iter_mut().for_each(|x| *x /= norm);
    c
}
