//! Words: the English function words that say nothing about which memory is meant. Search,
//! concepts' terms and the answer check read them here, so none of them reaches into another
//! for a word list.

/// English function words, sorted (binary search).
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been",
    "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "during", "each", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "just", "me", "more", "most", "my", "no", "nor", "not", "of", "on", "once", "only", "or",
    "other", "our", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your",
];

/// Whether `word` is an English function word ("the", "your").
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word.to_lowercase().as_str()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stopword_list_is_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("The") && is_stopword("your") && !is_stopword("kitten"));
    }
}
