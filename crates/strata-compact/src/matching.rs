//! Which known concept a new group continues. Pairs are taken greedily by the share of members
//! they have in common (Jaccard, best first); a group continues a concept when they share at
//! least [`SAME_CONCEPT`] of their members, so a concept keeps its id while most of its members
//! stay, whatever joins or leaves it.

use std::collections::HashMap;
use std::hash::Hash;

/// The least Jaccard overlap of a group and a concept it continues.
pub const SAME_CONCEPT: f64 = 0.3;

/// For each group, the known concept it continues (an index into `known`), if any; each known
/// concept is continued by at most one group.
pub fn match_groups<T: Eq + Hash + Copy>(known: &[Vec<T>], groups: &[Vec<T>]) -> Vec<Option<usize>> {
    let mut owner: HashMap<T, usize> = HashMap::new();
    for (k, members) in known.iter().enumerate() {
        for m in members {
            owner.insert(*m, k);
        }
    }
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (g, members) in groups.iter().enumerate() {
        let mut shared: HashMap<usize, usize> = HashMap::new();
        for m in members {
            if let Some(&k) = owner.get(m) {
                *shared.entry(k).or_default() += 1;
            }
        }
        for (k, n) in shared {
            let jaccard = n as f64 / (members.len() + known[k].len() - n) as f64;
            if jaccard >= SAME_CONCEPT {
                pairs.push((jaccard, g, k));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut out = vec![None; groups.len()];
    let mut taken = vec![false; known.len()];
    for (_, g, k) in pairs {
        if out[g].is_none() && !taken[k] {
            out[g] = Some(k);
            taken[k] = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_concept_keeps_its_id_when_a_member_joins_and_a_split_keeps_it_for_the_larger_part() {
        let known = vec![vec![1, 2, 3, 4], vec![10, 11, 12]];
        // One joined the first; the second split in two.
        let groups = vec![vec![1, 2, 3, 4, 5], vec![10, 11], vec![12, 20, 21, 22]];
        assert_eq!(match_groups(&known, &groups), vec![Some(0), Some(1), None]);
        assert_eq!(match_groups::<u32>(&[], &[vec![1, 2]]), vec![None]);
    }
}
