//! Grouping memories by meaning: HDBSCAN (petal-clustering, Prim's tree so the result does not
//! depend on thread timing) over unit vectors, where Euclidean distance orders pairs as cosine
//! does. Memories in no dense group stay alone (HDBSCAN's noise). A store larger than one block
//! is clustered block by block (in the order given: oldest first), and the blocks' groups are
//! clustered again by their centroids, so a topic spread over months still becomes one group
//! while the cost stays near-linear in the store's size.

use ndarray::Array2;
use petal_clustering::{Fit, HDbscan};
use petal_neighbors::distance::Euclidean;

use crate::centroid;

/// How groups are found.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// The fewest memories a group has.
    pub min_cluster_size: usize,
    /// Neighbours that make a region dense (HDBSCAN's `min_samples`).
    pub min_samples: usize,
    /// Memories clustered at once; beyond it, blocks and a second pass over their groups.
    pub block: usize,
    /// A group larger than this is clustered again on its own, and replaced by the groups found
    /// inside it (HDBSCAN prefers a few large groups; a concept should say one thing).
    pub max_group: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params { min_cluster_size: 3, min_samples: 2, block: 2000, max_group: 30 }
    }
}

/// The groups among `vectors` (each a list of indexes, ascending; groups ordered by their first
/// member). Indexes in no group are left out.
pub fn groups(vectors: &[&[f32]], params: &Params) -> Vec<Vec<usize>> {
    let all: Vec<usize> = (0..vectors.len()).collect();
    if vectors.len() <= params.block {
        let found = hdbscan(vectors, &all, params.min_cluster_size, params.min_samples);
        let mut out: Vec<Vec<usize>> = found.into_iter().flat_map(|g| split_large(vectors, g, params)).collect();
        out.sort_by_key(|g| g[0]);
        return out;
    }
    let mut local = Vec::new();
    for block in all.chunks(params.block) {
        let found = hdbscan(vectors, block, params.min_cluster_size, params.min_samples);
        local.extend(found.into_iter().flat_map(|g| split_large(vectors, g, params)));
    }
    let centroids: Vec<Vec<f32>> = local.iter().map(|g| centroid(vectors, g)).collect();
    let refs: Vec<&[f32]> = centroids.iter().map(Vec::as_slice).collect();
    // Two groups of blocks are one topic when their centroids form a dense pair; the topic is
    // then clustered again like any large group. One that would outgrow a block stays in the
    // groups it was made of (clustering it at once would cost what blocks avoid).
    let merged = groups(&refs, &Params { min_cluster_size: 2, min_samples: 1, ..*params });
    let mut used = vec![false; local.len()];
    let mut out = Vec::new();
    for m in merged {
        let size: usize = m.iter().map(|&i| local[i].len()).sum();
        if size > params.block {
            continue;
        }
        let mut g: Vec<usize> = m.iter().flat_map(|&i| local[i].iter().copied()).collect();
        m.iter().for_each(|&i| used[i] = true);
        g.sort_unstable();
        out.extend(split_large(vectors, g, params));
    }
    out.extend(local.into_iter().zip(used).filter(|(_, u)| !u).map(|(g, _)| g));
    out.sort_by_key(|g| g[0]);
    out
}

/// `group`, or the groups HDBSCAN finds inside it when it is larger than `max_group` (those
/// split again in turn); its members in none of them are left out.
fn split_large(vectors: &[&[f32]], group: Vec<usize>, params: &Params) -> Vec<Vec<usize>> {
    if group.len() <= params.max_group {
        return vec![group];
    }
    let inside = hdbscan(vectors, &group, params.min_cluster_size, params.min_samples);
    if inside.is_empty() {
        return vec![group];
    }
    let mut out: Vec<Vec<usize>> = inside.into_iter().flat_map(|g| split_large(vectors, g, params)).collect();
    out.sort_by_key(|g| g[0]);
    out
}

/// HDBSCAN over the vectors `of` names.
fn hdbscan(vectors: &[&[f32]], of: &[usize], min_cluster_size: usize, min_samples: usize) -> Vec<Vec<usize>> {
    if of.len() < min_cluster_size.max(2) {
        return Vec::new();
    }
    let dim = vectors[of[0]].len();
    let flat: Vec<f32> = of.iter().flat_map(|&i| vectors[i].iter().copied()).collect();
    let Ok(x) = Array2::from_shape_vec((of.len(), dim), flat) else { return Vec::new() };
    let mut h = HDbscan {
        alpha: 1.0f32,
        min_samples: min_samples.min(of.len() - 1).max(1),
        min_cluster_size,
        metric: Euclidean::default(),
        boruvka: false,
    };
    let (clusters, _noise, _outliers) = h.fit(&x, None);
    let mut out: Vec<Vec<usize>> = clusters
        .into_values()
        .map(|members| {
            let mut g: Vec<usize> = members.into_iter().map(|i| of[i]).collect();
            g.sort_unstable();
            g
        })
        .filter(|g| g.len() >= min_cluster_size)
        .collect();
    out.sort_by_key(|g| g[0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit vectors near `axis`, one per `offsets`.
    fn near(axis: usize, offsets: &[f32], dim: usize) -> Vec<Vec<f32>> {
        offsets
            .iter()
            .map(|o| {
                let mut v = vec![0f32; dim];
                v[axis] = 1.0;
                v[(axis + 1) % dim] = *o;
                let n = (1.0 + o * o).sqrt();
                v.iter().map(|x| x / n).collect()
            })
            .collect()
    }

    #[test]
    fn fixed_vectors_fall_into_the_same_groups_every_time() {
        let mut vectors = near(0, &[0.0, 0.01, 0.02, 0.03], 8);
        vectors.extend(near(4, &[0.0, 0.01, 0.02], 8));
        vectors.push(near(2, &[0.5], 8).remove(0)); // alone
        let refs: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
        let want = vec![vec![0, 1, 2, 3], vec![4, 5, 6]];
        for _ in 0..3 {
            assert_eq!(groups(&refs, &Params::default()), want);
        }
        // In blocks of four, each holding both topics, the halves of each topic are joined
        // again by their centroids.
        let a = near(0, &[0.0, 0.01, 0.02, 0.03], 8);
        let b = near(4, &[0.0, 0.01, 0.02, 0.03], 8);
        let mixed = [&a[0], &a[1], &b[0], &b[1], &a[2], &a[3], &b[2], &b[3]];
        let refs: Vec<&[f32]> = mixed.iter().map(|v| v.as_slice()).collect();
        let blocks = groups(&refs, &Params { block: 4, min_cluster_size: 2, min_samples: 1, max_group: 30 });
        assert_eq!(blocks, vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7]]);
        // A topic that would outgrow a block once joined stays in its blocks' groups.
        let a = near(0, &[0.0, 0.01, 0.02, 0.03, 0.04, 0.05], 8);
        let b = near(4, &[0.0, 0.01, 0.02, 0.03, 0.04, 0.05], 8);
        let mixed = [&a[0], &a[1], &b[0], &b[1], &a[2], &a[3], &b[2], &b[3], &a[4], &a[5], &b[4], &b[5]];
        let refs: Vec<&[f32]> = mixed.iter().map(|v| v.as_slice()).collect();
        let blocks = groups(&refs, &Params { block: 4, min_cluster_size: 2, min_samples: 1, max_group: 30 });
        assert!(blocks.iter().all(|g| g.len() <= 4), "{blocks:?}");
        let topic = |i: &usize| [0, 1, 4, 5, 8, 9].contains(i);
        assert!(blocks.iter().all(|g| g.iter().all(topic) || !g.iter().any(topic)), "{blocks:?}");
        assert_eq!(blocks.iter().map(Vec::len).sum::<usize>(), 12, "{blocks:?}");
    }
}
