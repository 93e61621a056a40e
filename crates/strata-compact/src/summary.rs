//! Extractive summaries: a group's own sentences, chosen greedily for the salient words they
//! add (weighted by the group's c-TF-IDF, [`crate::terms`]) per token, favouring members near
//! the group's centre and skipping a sentence that mostly repeats one already chosen, until
//! the token limit. Shown in the members' order, each naming its member, so every word of a
//! summary is a word some member said.

use std::collections::{HashMap, HashSet};

use unicode_segmentation::UnicodeSegmentation;

use crate::terms::words;

/// A sentence shares at most this share of its words with a chosen one (Jaccard).
const MAX_OVERLAP: f64 = 0.5;
/// Fewer words than this is not a sentence worth a summary's room ("Wow!", "Thanks").
const MIN_WORDS: usize = 3;

/// Whether a sentence is a question: it says nothing a summary can state ("When was Napoleon
/// born?").
fn asks(sentence: &str) -> bool {
    sentence.trim_end().ends_with('?')
}

/// A member as the summarizer reads it.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// Its text.
    pub text: &'a str,
    /// How close it is to the group's centre (cosine).
    pub closeness: f32,
}

/// Every sentence of substance the members said (at least [`MIN_WORDS`] words, one of them
/// not a function word): (index of the member, the sentence), in the members' order, at most
/// `limit` tokens in all (the first ones).
pub fn sentences(members: &[Member<'_>], limit: usize, count: &dyn Fn(&str) -> usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut used = 0;
    for (member, m) in members.iter().enumerate() {
        for sentence in m.text.split_sentence_bounds() {
            let text = sentence.trim();
            if text.split_whitespace().count() < MIN_WORDS || words(text).next().is_none() || asks(text) {
                continue;
            }
            used += count(text);
            if used > limit {
                return out;
            }
            out.push((member, text.to_string()));
        }
    }
    out
}

/// The chosen sentences: (index of the member, the sentence), in the members' order.
pub fn summarize(
    members: &[Member<'_>],
    salient: &[(String, f64)],
    limit: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<(usize, String)> {
    let weight: HashMap<String, f64> = salient.iter().map(|(w, x)| (w.to_lowercase(), *x)).collect();
    let top = salient.first().map_or(1.0, |(_, x)| x.max(1e-9));
    struct Candidate {
        member: usize,
        position: usize,
        text: String,
        words: HashSet<String>,
        tokens: usize,
        closeness: f64,
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    for (member, m) in members.iter().enumerate() {
        for (position, sentence) in m.text.split_sentence_bounds().enumerate() {
            let text = sentence.trim();
            let ws: HashSet<String> = words(text).map(|(w, _)| w).collect();
            if text.split_whitespace().count() < MIN_WORDS || ws.is_empty() || asks(text) {
                continue;
            }
            let tokens = count(text).max(1);
            candidates.push(Candidate {
                member,
                position,
                text: text.to_string(),
                words: ws,
                tokens,
                closeness: f64::from(m.closeness.max(0.0)),
            });
        }
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut covered: HashSet<String> = HashSet::new();
    let mut used = 0;
    loop {
        let best = candidates
            .iter()
            .enumerate()
            .filter(|(i, c)| !chosen.contains(i) && used + c.tokens <= limit)
            .filter(|(_, c)| chosen.iter().all(|&j| jaccard(&c.words, &candidates[j].words) <= MAX_OVERLAP))
            .map(|(i, c)| {
                let gain: f64 = c.words.difference(&covered).map(|w| weight.get(w).copied().unwrap_or(0.0) / top).sum();
                (i, c.closeness * (0.1 + gain) / (c.tokens as f64).sqrt())
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        let Some((i, _)) = best else { break };
        used += candidates[i].tokens;
        covered.extend(candidates[i].words.iter().cloned());
        chosen.push(i);
    }
    chosen.sort_by_key(|&i| (candidates[i].member, candidates[i].position));
    chosen.into_iter().map(|i| (candidates[i].member, candidates[i].text.clone())).collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 { 0.0 } else { a.intersection(b).count() as f64 / union as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &str) -> usize {
        s.split_whitespace().count()
    }

    #[test]
    fn a_summary_keeps_to_its_limit_says_nothing_twice_and_only_quotes_members() {
        let members = [
            Member { text: "My kitten is called Pixel. Wow!", closeness: 0.9 },
            Member { text: "Pixel my kitten is called, yes.", closeness: 0.8 },
            Member { text: "Pixel sleeps on the piano all afternoon.", closeness: 0.7 },
        ];
        let salient = vec![("Pixel".to_string(), 3.0), ("kitten".into(), 2.0), ("piano".into(), 1.0)];
        let s = summarize(&members, &salient, 12, &count);
        assert_eq!(
            s,
            vec![(0, "My kitten is called Pixel.".to_string()), (2, "Pixel sleeps on the piano all afternoon.".into())]
        );
        assert!(s.iter().map(|(_, t)| count(t)).sum::<usize>() <= 12);
        for (m, t) in &s {
            assert!(members[*m].text.contains(t.as_str()));
        }
        assert!(summarize(&members, &salient, 3, &count).is_empty(), "no sentence fits 3 tokens");
    }

    #[test]
    fn a_question_is_never_a_summary_sentence() {
        let members = [
            Member { text: "When was my kitten Pixel born?", closeness: 0.9 },
            Member { text: "Pixel sleeps on the piano.", closeness: 0.5 },
        ];
        let salient = vec![("Pixel".to_string(), 3.0), ("kitten".into(), 2.0), ("born".into(), 2.0)];
        assert_eq!(summarize(&members, &salient, 40, &count), vec![(1, "Pixel sleeps on the piano.".to_string())]);
        assert_eq!(sentences(&members, 40, &count), vec![(1, "Pixel sleeps on the piano.".to_string())]);
    }
}
