//! What a model extracted is kept only where the conversation bears it out: the subject is
//! named in it (or is the user), and the fact shares a word of substance with it. A small model
//! copies names and facts from its instructions or invents them; this drops those, however the
//! model is held to its format.

use std::collections::HashSet;

use super::facts::{USER, subject_key};
use super::reply::{Pool, Turn};

/// Words too common to show that a fact comes from a conversation.
const COMMON: &[&str] = &[
    "about", "after", "also", "always", "been", "being", "came", "come", "does", "doing", "done", "from", "going",
    "good", "great", "have", "having", "into", "just", "know", "like", "likes", "lives", "made", "make", "many",
    "more", "most", "much", "really", "said", "says", "some", "that", "their", "them", "then", "there", "they",
    "thing", "things", "this", "time", "very", "want", "wants", "well", "were", "what", "when", "which", "while",
    "will", "with", "would", "your", "user", "user's", "all", "and", "are", "but", "can", "did", "for", "get", "got",
    "had", "has", "her", "him", "his", "its", "let", "new", "not", "now", "one", "our", "out", "own", "see", "she",
    "the", "too", "two", "use", "was", "way", "who", "why", "yes", "you",
];

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

/// The words said in `turns` (speakers included).
pub fn said(turns: &[Turn]) -> HashSet<String> {
    turns.iter().flat_map(|t| words(&t.speaker).chain(words(&t.text)).collect::<Vec<_>>()).collect()
}

/// `pool` with only what `said` bears out (see the module's description); `None` when its
/// subject is not named at all.
pub fn grounded(mut pool: Pool, said: &HashSet<String>) -> Option<Pool> {
    let key = subject_key(&pool.name);
    let name: HashSet<String> = words(&pool.name).collect();
    if key != USER && !name.iter().any(|w| said.contains(w)) {
        return None;
    }
    pool.facts.retain(|f| {
        words(&f.fact)
            .any(|w| w.chars().count() >= 3 && !COMMON.contains(&w.as_str()) && !name.contains(&w) && said.contains(&w))
    });
    Some(pool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::reply::Extracted;

    fn pool(name: &str, facts: &[&str]) -> Pool {
        Pool {
            name: name.into(),
            description: String::new(),
            facts: facts.iter().map(|f| Extracted { fact: f.to_string(), topic: "t".into(), turns: vec![] }).collect(),
        }
    }

    #[test]
    fn a_subject_or_a_fact_the_conversation_does_not_bear_out_is_dropped() {
        let turns =
            [Turn { speaker: "Caroline".into(), text: "I went to a support group yesterday, so inspiring!".into() }];
        let said = said(&turns);
        assert!(grounded(pool("Ana", &["Ana lives in Lisbon"]), &said).is_none(), "never named");
        let kept = grounded(
            pool(
                "Caroline",
                &["Caroline attended a support group", "Caroline lives in Lisbon", "Caroline is Caroline"],
            ),
            &said,
        )
        .unwrap();
        assert_eq!(kept.facts.len(), 1);
        assert_eq!(kept.facts[0].fact, "Caroline attended a support group");
        assert_eq!(grounded(pool("the user", &["The user found the group inspiring"]), &said).unwrap().facts.len(), 1);
    }
}
