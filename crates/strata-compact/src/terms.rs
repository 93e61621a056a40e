//! A group's salient words against the rest of the store (c-TF-IDF, as BERTopic weighs them):
//! a word weighs its frequency in the group times `ln(1 + A / f)`, where `f` is its frequency
//! in the whole store and `A` the mean number of words per class (each group a class, the
//! memories in none one more). Function words ([`strata_core::words::is_stopword`]),
//! contractions, words that name nothing ("something", "wow"), numbers and words under three
//! letters never count. Each word is shown as the group spells it most often.

use std::collections::HashMap;

/// Words that are not function words yet name nothing a group is about: a concept named
/// "something, ever, many" or "Wow, awesome" tells a person nothing.
const NAME_NOTHING: &[&str] = &[
    "along",
    "also",
    "amazing",
    "anyone",
    "anything",
    "around",
    "awesome",
    "aww",
    "cool",
    "definitely",
    "ever",
    "everyone",
    "everything",
    "glad",
    "gonna",
    "gotta",
    "great",
    "haha",
    "hey",
    "just",
    "lol",
    "lot",
    "lots",
    "many",
    "maybe",
    "much",
    "nothing",
    "okay",
    "omg",
    "others",
    "really",
    "someone",
    "something",
    "still",
    "sure",
    "thank",
    "thankfully",
    "thanks",
    "thing",
    "things",
    "totally",
    "wanna",
    "way",
    "wow",
    "yeah",
    "yep",
    "yes",
];

/// Whether `word` (lower-cased) is a contraction ("I'm", "they're", "don't"): function words.
fn contracted(word: &str) -> bool {
    ["'m", "'re", "'ve", "'ll", "'d", "n't"].iter().any(|end| word.ends_with(end))
}

/// The words of `text` that can be salient: (lower-cased, as written).
pub fn words(text: &str) -> impl Iterator<Item = (String, &str)> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_matches('\''))
        .map(|w| w.strip_suffix("'s").unwrap_or(w))
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_numeric()))
        .filter(|w| !strata_core::words::is_stopword(w))
        .map(|w| (w.to_lowercase(), w))
        .filter(|(lower, _)| !contracted(lower) && NAME_NOTHING.binary_search(&lower.as_str()).is_err())
}

/// Each group's salient words, best first, with their weights (at most `k` per group).
/// `texts`: every memory's text; `groups`: indexes into it.
pub fn salient(texts: &[&str], groups: &[Vec<usize>], k: usize) -> Vec<Vec<(String, f64)>> {
    let mut store: HashMap<String, usize> = HashMap::new();
    let mut total = 0usize;
    for t in texts {
        for (w, _) in words(t) {
            *store.entry(w).or_default() += 1;
            total += 1;
        }
    }
    let average = total as f64 / (groups.len() + 1) as f64;
    groups
        .iter()
        .map(|g| {
            let mut tf: HashMap<String, usize> = HashMap::new();
            let mut spelled: HashMap<String, HashMap<&str, usize>> = HashMap::new();
            for &i in g {
                for (w, surface) in words(texts[i]) {
                    *spelled.entry(w.clone()).or_default().entry(surface).or_default() += 1;
                    *tf.entry(w).or_default() += 1;
                }
            }
            let mut weighted: Vec<(String, f64)> = tf
                .into_iter()
                .map(|(w, n)| {
                    let weight = n as f64 * (1.0 + average / store[&w] as f64).ln();
                    let surface = spelled[&w].iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(s, _)| *s);
                    (surface.unwrap_or(&w).to_string(), weight)
                })
                .collect();
            weighted.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.to_lowercase().cmp(&b.0.to_lowercase())));
            weighted.truncate(k);
            weighted
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_named_by_what_sets_it_apart_not_by_what_everyone_says() {
        let texts = [
            "I really love my kitten Pixel",
            "Pixel the kitten sleeps on the piano",
            "I really love running",
            "Marathon running in Porto, really",
            "I really need coffee",
        ];
        let groups = vec![vec![0, 1], vec![2, 3]];
        let terms = salient(&texts, &groups, 3);
        let first: Vec<&str> = terms[0].iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(&first[..2], ["kitten", "Pixel"]);
        assert_eq!(terms[1][0].0, "running");
        assert!(terms.iter().flatten().all(|(w, _)| w != "really" && w != "the"));
    }

    #[test]
    fn contractions_and_words_that_name_nothing_never_name_a_group() {
        let texts = ["I'm taking the kids to pottery, something I'm glad about", "They're making a pottery bowl, wow"];
        let terms = salient(&texts, &[vec![0, 1]], 8);
        let named: Vec<&str> = terms[0].iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(named[0], "pottery");
        for nothing in ["I'm", "They're", "something", "glad", "wow"] {
            assert!(!named.contains(&nothing), "{named:?}");
        }
        assert!(NAME_NOTHING.windows(2).all(|w| w[0] < w[1]), "sorted, for binary search");
    }
}
