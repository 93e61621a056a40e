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
}

#[cfg(test)]
mod tests {
    use super::*;

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
