//! Near-duplicates: two texts whose sets of words overlap almost entirely (Jaccard similarity of
//! lowercased word sets). Signatures are sorted word hashes, so a comparison is one merge.

use std::hash::{DefaultHasher, Hash, Hasher};

/// A text's words, hashed, sorted and unique.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature(Vec<u64>);

impl Signature {
    /// The signature of `text`.
    pub fn of(text: &str) -> Signature {
        let mut words: Vec<u64> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut h = DefaultHasher::new();
                for c in w.chars().flat_map(char::to_lowercase) {
                    c.hash(&mut h);
                }
                h.finish()
            })
            .collect();
        words.sort_unstable();
        words.dedup();
        Signature(words)
    }

    /// Shared words over all words, 0 to 1 (1 for two texts without words).
    pub fn similarity(&self, other: &Signature) -> f64 {
        let (a, b) = (&self.0, &other.0);
        if a.is_empty() && b.is_empty() {
            return 1.0;
        }
        let (mut i, mut j, mut shared) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        shared as f64 / (a.len() + b.len() - shared) as f64
    }

    /// How many distinct words the text has.
    pub fn words(&self) -> usize {
        self.0.len()
    }
}

/// Groups of near-duplicates among `signatures`: texts linked by a chain of pairs whose
/// similarity is at least `threshold` (above 0), each group's indexes ascending, groups in the
/// order of their first index. Every such pair is found (no sampling): words are ordered
/// rarest first, and two texts can only reach `threshold` if they share one of the first
/// words of each (prefix filtering, Bayardo et al., "Scaling up all pairs similarity search",
/// 2007), so only texts sharing a rare word are compared.
pub fn near_duplicate_groups(signatures: &[Signature], threshold: f64) -> Vec<Vec<usize>> {
    use std::collections::HashMap;
    let threshold = threshold.clamp(f64::EPSILON, 1.0);
    let mut frequency: HashMap<u64, u32> = HashMap::new();
    for s in signatures {
        for w in &s.0 {
            *frequency.entry(*w).or_default() += 1;
        }
    }
    let ordered: Vec<Vec<u64>> = signatures
        .iter()
        .map(|s| {
            let mut words = s.0.clone();
            words.sort_unstable_by_key(|w| (frequency[w], *w));
            words
        })
        .collect();
    // Shorter texts first, so a text only meets those no longer than itself.
    let mut order: Vec<usize> = (0..signatures.len()).filter(|&i| !ordered[i].is_empty()).collect();
    order.sort_by_key(|&i| (ordered[i].len(), i));
    let mut parent: Vec<usize> = (0..signatures.len()).collect();
    let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut seen: Vec<usize> = vec![usize::MAX; signatures.len()];
    for &i in &order {
        let n = ordered[i].len();
        let prefix = n - (threshold * n as f64).ceil() as usize + 1;
        for w in &ordered[i][..prefix.min(n)] {
            for &j in index.get(w).into_iter().flatten() {
                if seen[j] == i {
                    continue;
                }
                seen[j] = i;
                // Only a text at least `threshold` as long can reach it.
                if (ordered[j].len() as f64) >= threshold * n as f64
                    && signatures[i].similarity(&signatures[j]) >= threshold
                {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a.max(b)] = a.min(b);
                }
            }
            index.entry(*w).or_default().push(i);
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..signatures.len() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort_by_key(|g| g[0]);
    out
}

/// The representative of `i`'s set, halving the path on the way.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_duplicates_group_and_others_do_not() {
        let texts = [
            "Caroline went to the LGBTQ support group on Tuesday evening",
            "Melanie painted a sunrise over the lake last summer",
            "caroline went to the LGBTQ support group on tuesday evening!",
            "Caroline went to the LGBTQ support group on Tuesday evening with friends",
            "Melanie painted a sunset",
            "",
        ];
        let sigs: Vec<Signature> = texts.iter().map(|t| Signature::of(t)).collect();
        assert_eq!(near_duplicate_groups(&sigs, 0.8), vec![vec![0, 2, 3]]);
        assert_eq!(near_duplicate_groups(&sigs, 1.0), vec![vec![0, 2]]);
        // Every pair the brute force finds, prefix filtering finds.
        let words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"];
        let many: Vec<Signature> = (0..300u32)
            .map(|i| {
                let text: Vec<&str> =
                    words.iter().enumerate().filter(|(b, _)| (i * 7919 + 13) >> b & 1 == 1).map(|(_, w)| *w).collect();
                Signature::of(&text.join(" "))
            })
            .collect();
        for t in [0.5, 0.75, 0.9] {
            let mut brute: Vec<usize> = (0..300).collect();
            for i in 0..300 {
                for j in 0..i {
                    if many[i].words() > 0 && many[j].words() > 0 && many[i].similarity(&many[j]) >= t {
                        let (a, b) = (root(&mut brute, i), root(&mut brute, j));
                        brute[a.max(b)] = a.min(b);
                    }
                }
            }
            let grouped: usize = near_duplicate_groups(&many, t).iter().map(Vec::len).sum();
            let roots: Vec<usize> = (0..300).map(|i| root(&mut brute, i)).collect();
            let expected = (0..300).filter(|&i| (0..300).any(|j| j != i && roots[i] == roots[j])).count();
            assert_eq!(grouped, expected, "threshold {t}");
        }
    }

    #[test]
    fn case_punctuation_and_order_do_not_matter() {
        let a = Signature::of("Caroline went to the LGBTQ support group.");
        let b = Signature::of("caroline WENT to the support group, LGBTQ");
        assert_eq!(a.similarity(&b), 1.0);
        let c = Signature::of("Melanie painted a sunrise over the lake.");
        assert!(a.similarity(&c) < 0.2);
        assert_eq!(Signature::of("").similarity(&Signature::of("!!")), 1.0);
    }
}
