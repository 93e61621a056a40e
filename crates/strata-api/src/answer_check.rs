//! Whether an answer is borne out by the memories its prompt quoted: what it asserts that a
//! reader could look up — its numbers, dates and names — must all stand in one of those
//! memories (what the question itself says needs no support). A small on-device model invents
//! a shoe size, a tax number or a date with the same confidence as it quotes a memory; an
//! answer that fails this check is not presented as an answer (issue 38, "answer-checking
//! levers"; figures in docs/benchmarks.md).

use std::collections::HashSet;

use serde::Serialize;

/// Phrasings that say "I don't know" (normalised: lower case, straight apostrophes).
pub const DONT_KNOW: &[&str] = &[
    "don't know",
    "do not know",
    "not sure",
    "no information",
    "don't have",
    "do not have",
    "doesn't say",
    "does not say",
    "not mentioned",
    "no mention",
    "not specified",
    "cannot find",
    "can't find",
    "couldn't find",
    "could not find",
    "no record",
    "not in my memor",
    "i'm unable",
    "i am unable",
    "don't remember",
    "do not remember",
    "not provided",
];

/// What is presented instead of an answer no memory bears out.
pub const WITHHELD: &str = "I don't know: none of your memories says that.";

/// Lower case, curly apostrophes straightened, runs of white space made one space.
pub fn normalise(s: &str) -> String {
    s.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `answer` says it does not know.
pub fn says_dont_know(answer: &str) -> bool {
    let a = normalise(answer);
    DONT_KNOW.iter().any(|p| a.contains(p))
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Capitalized words that name nothing a memory would hold.
const NOT_NAMES: &[&str] =
    &["i", "i'm", "i've", "i'll", "i'd", "ok", "yes", "no", "mr", "mrs", "ms", "dr", "you", "your"];

/// A text's words, lower case, with a number's ordinal suffix dropped (`22nd` → `22`).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).map(|w| {
        let w = w.trim_matches('\'').to_lowercase();
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        if !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit())
            && ["st", "nd", "rd", "th"].contains(&&w[digits.len()..])
        {
            digits.to_string()
        } else {
            w
        }
    })
}

/// What `answer` asserts that a memory could bear out: numbers (and words holding digits),
/// month names, and capitalized words that do not start a sentence — less what `question`
/// says.
pub fn claims(answer: &str, question: &str) -> Vec<String> {
    let asked: HashSet<String> = words(question).collect();
    let mut out: Vec<String> = Vec::new();
    let mut sentence_start = true;
    for raw in answer.split_whitespace() {
        let starts = sentence_start;
        sentence_start = raw.ends_with(['.', '!', '?', ':']);
        let capital = raw.trim_start_matches(|c: char| !c.is_alphanumeric()).starts_with(char::is_uppercase);
        for w in words(raw) {
            let w = w.strip_suffix("'s").unwrap_or(&w).to_string();
            let checkable = w.chars().any(|c| c.is_ascii_digit())
                || MONTHS.contains(&w.as_str())
                || (capital && !starts && !NOT_NAMES.contains(&w.as_str()));
            if checkable && !asked.contains(&w) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// An answer checked against the memories its prompt quoted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AnswerCheck {
    /// Whether it is presented as the answer: it says it does not know, asserts nothing a
    /// memory could hold, or one memory holds all it asserts.
    pub borne_out: bool,
    /// What it asserts that no one memory of the prompt holds together with the rest.
    pub unsupported: Vec<String>,
    /// The memory that bears it out, if one does.
    pub memory: Option<String>,
}

/// Checks `answer` to `question` against `memories` (id, the text the prompt showed).
pub fn check(answer: &str, question: &str, memories: &[(String, String)]) -> AnswerCheck {
    let claims = claims(answer, question);
    if claims.is_empty() || says_dont_know(answer) {
        return AnswerCheck { borne_out: true, unsupported: Vec::new(), memory: None };
    }
    let best = memories
        .iter()
        .map(|(id, text)| {
            let held: HashSet<String> = words(text).map(|w| w.strip_suffix("'s").unwrap_or(&w).to_string()).collect();
            (claims.iter().filter(|c| !held.contains(*c)).cloned().collect::<Vec<_>>(), id)
        })
        .min_by_key(|(missing, _)| missing.len());
    match best {
        Some((missing, id)) if missing.is_empty() => {
            AnswerCheck { borne_out: true, unsupported: missing, memory: Some(id.clone()) }
        }
        Some((missing, _)) => AnswerCheck { borne_out: false, unsupported: missing, memory: None },
        None => AnswerCheck { borne_out: false, unsupported: claims, memory: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memories() -> Vec<(String, String)> {
        vec![
            ("m1".into(), "About me: I live at 14 Wren Street, Leeds. My husband Oskar was born on 22 January.".into()),
            ("m2".into(), "Oskar works at Kirkstall Academy as a chemistry teacher.".into()),
            ("m3".into(), "(12 March 2025) Elsa: we went to the coast with Nuno Saraiva.".into()),
        ]
    }

    #[test]
    fn what_an_answer_asserts_less_what_was_asked() {
        assert_eq!(
            claims("Your home address is 14 Wren Street.", "What is my home address?"),
            ["14", "wren", "street"]
        );
        assert_eq!(claims("Oskar's birthday is on January 22nd.", "When is Oskar's birthday?"), ["january", "22"]);
        assert_eq!(claims("Yes. I think she likes tea.", "Does she like tea?"), Vec::<String>::new());
    }

    #[test]
    fn an_answer_is_borne_out_only_by_one_memory_holding_all_it_asserts() {
        let m = memories();
        let c = check("Oskar works at Kirkstall Academy.", "Where does Oskar work?", &m);
        assert_eq!((c.borne_out, c.memory.as_deref()), (true, Some("m2")));
        assert!(check("His birthday is January 22nd.", "When is Oskar's birthday?", &m).borne_out);
        // An invented number or name, or true parts from two memories put together, are not.
        let c = check("Oskar's shoe size is 44.", "What is Oskar's shoe size?", &m);
        assert_eq!((c.borne_out, c.unsupported), (false, vec!["44".to_string()]));
        let c = check("Oskar teaches at Kirkstall Academy since 12 March 2025.", "Where does Oskar work?", &m);
        assert!(!c.borne_out, "{c:?}");
        assert!(
            !check("Your National Insurance number is AB123456C.", "What is my National Insurance number?", &m)
                .borne_out
        );
        // Saying it does not know, or asserting nothing checkable, is presented as it is.
        assert!(check("I don't know Oskar's shoe size.", "What is Oskar's shoe size?", &m).borne_out);
        assert!(check("Yes, he does.", "Does Oskar like his job?", &m).borne_out);
    }
}
