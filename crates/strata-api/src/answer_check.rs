//! Whether an answer is borne out by the memories its prompt quoted: what it asserts that a
//! reader could look up — its numbers, dates and names — must all stand in one of those
//! memories (what the question itself says needs no support), a memory that also names what
//! the question names; it must hold what the question asks for (a date for "when", a number
//! for "how much", a name for "who"); and it must not be the prompt's own words about an
//! earlier exchange. A small on-device model invents
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
/// [`WITHHELD`] when the answer could also draw on the person's files.
pub const WITHHELD_WITH_FILES: &str = "I don't know: none of your memories or files says that.";

/// Lower case, curly apostrophes straightened, runs of white space made one space.
pub fn normalise(s: &str) -> String {
    s.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `answer` says it does not know.
pub fn says_dont_know(answer: &str) -> bool {
    let a = normalise(answer);
    DONT_KNOW.iter().any(|p| a.contains(p))
}

use strata_core::temporal::MONTHS;

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
    asserted(answer, false).into_iter().filter(|w| !asked.contains(w)).collect()
}

/// What a sentence asserts that a note could bear out, its first word included: numbers,
/// months, and every capitalized word that is not a function word ("She", "The").
pub fn claims_anywhere(sentence: &str) -> Vec<String> {
    asserted(sentence, true)
}

/// [`claims`]' reading of `text`: numbers, months and names, once each; a sentence's first
/// word counts as a name only with `first_words` (and then not a function word).
fn asserted(text: &str, first_words: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let starts = sentence_start && !first_words;
        sentence_start = raw.ends_with(['.', '!', '?', ':']);
        let capital = raw.trim_start_matches(|c: char| !c.is_alphanumeric()).starts_with(char::is_uppercase);
        for w in words(raw) {
            let w = w.strip_suffix("'s").unwrap_or(&w).to_string();
            let function_word = NOT_NAMES.contains(&w.as_str()) || (first_words && strata_core::words::is_stopword(&w));
            let name = capital && !starts && !function_word;
            let checkable = w.chars().any(|c| c.is_ascii_digit()) || MONTHS.contains(&w.as_str()) || name;
            if checkable && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The words `text` holds, as [`claims`] writes them (lower case, no possessive `'s`): a
/// claim stands in `text` when this holds it.
pub fn held(text: &str) -> HashSet<String> {
    words(text).map(|w| w.strip_suffix("'s").unwrap_or(&w).to_string()).collect()
}

/// What kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wants {
    Date,
    Number,
    Name,
    Anything,
}

fn wants(question: &str) -> Wants {
    let q = normalise(question);
    let starts = |p: &[&str]| p.iter().any(|w| q.starts_with(w));
    let holds = |p: &[&str]| p.iter().any(|w| q.contains(w));
    if starts(&["when "]) || holds(&["what date", "which date", "what year", "which year", "what day"]) {
        Wants::Date
    } else if starts(&["how much", "how many", "how old", "how long", "how far", "what time"]) || holds(&["number"]) {
        Wants::Number
    } else if starts(&["who ", "whose "]) {
        Wants::Name
    } else {
        Wants::Anything
    }
}

/// What the answer lacks of what the question asks for, in words (none: it has it).
fn lacks(answer: &str, question: &str, claims: &[String]) -> Option<&'static str> {
    let digits = claims.iter().any(|c| c.chars().any(|ch| ch.is_ascii_digit()));
    // A month, a year, or a day and month in figures ("12/03"): not "10k" or "54 minutes".
    let year = |c: &String| c.len() == 4 && (c.starts_with("19") || c.starts_with("20")) && c.parse::<u32>().is_ok();
    let dated = claims.iter().any(|c| MONTHS.contains(&c.as_str()) || year(c))
        || answer
            .split_whitespace()
            .any(|w| w.split('/').filter(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())).count() >= 2);
    match wants(question) {
        Wants::Date if !dated => Some("a date"),
        Wants::Number if !digits => Some("a number"),
        Wants::Name if !claims.iter().any(|c| !c.chars().any(|ch| ch.is_ascii_digit())) && !answer.is_empty() => {
            Some("a name")
        }
        _ => None,
    }
}

/// The names a question gives (capitalized words that do not start it), lower case.
fn named(question: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, raw) in question.split_whitespace().enumerate() {
        let capital = raw.trim_start_matches(|c: char| !c.is_alphanumeric()).starts_with(char::is_uppercase);
        for w in words(raw) {
            let w = w.strip_suffix("'s").unwrap_or(&w).to_string();
            if i > 0 && capital && !NOT_NAMES.contains(&w.as_str()) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The prompt's words for an earlier exchange: an answer that repeats them answers nothing.
const PROMPT_WORDS: [&str; 3] = ["the assistant answered", "the user asked", "the assistant said"];

/// An answer checked against the memories its prompt quoted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AnswerCheck {
    /// Whether it is presented as the answer: it says it does not know, asserts nothing a
    /// memory could hold, or one memory holds all it asserts.
    pub borne_out: bool,
    /// What it asserts that no one memory of the prompt holds together with the rest.
    pub unsupported: Vec<String>,
    /// What it lacks of what the question asks for (`a date`, `a number`, `a name`), or that
    /// it repeats the prompt's words about an earlier exchange.
    pub lacks: Option<String>,
    /// The memory that bears it out, if one does.
    pub memory: Option<String>,
}

/// Checks `answer` to `question` against `memories` (id, the text the prompt showed).
pub fn check(answer: &str, question: &str, memories: &[(String, String)]) -> AnswerCheck {
    let claims = claims(answer, question);
    let refused = |unsupported: Vec<String>, lacks: Option<&str>| AnswerCheck {
        borne_out: false,
        unsupported,
        lacks: lacks.map(String::from),
        memory: None,
    };
    if says_dont_know(answer) {
        return AnswerCheck { borne_out: true, unsupported: Vec::new(), lacks: None, memory: None };
    }
    let said = normalise(answer);
    if PROMPT_WORDS.iter().any(|p| said.contains(p)) {
        return refused(Vec::new(), Some("it repeats the prompt's words about an earlier exchange"));
    }
    if let Some(l) = lacks(answer, question, &claims) {
        return refused(Vec::new(), Some(l));
    }
    if claims.is_empty() {
        return AnswerCheck { borne_out: true, unsupported: Vec::new(), lacks: None, memory: None };
    }
    let names = named(question);
    let best = memories
        .iter()
        .map(|(id, text)| {
            let held = held(text);
            let mut missing: Vec<String> = claims.iter().filter(|c| !held.contains(*c)).cloned().collect();
            // It must be about what the question names, not someone else's number.
            if !names.is_empty() && !names.iter().any(|n| held.contains(n)) {
                missing.extend(names.iter().cloned());
            }
            (missing, id)
        })
        .min_by_key(|(missing, _)| missing.len());
    match best {
        Some((missing, id)) if missing.is_empty() => {
            AnswerCheck { borne_out: true, unsupported: missing, lacks: None, memory: Some(id.clone()) }
        }
        Some((missing, _)) => refused(missing, None),
        None => refused(claims, None),
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
        // What the question asks for must be there: a date for "when", a number for "what time".
        let c = check("Biscuit had his booster at Greenbank Vets.", "When did Biscuit have his booster?", &m);
        assert_eq!((c.borne_out, c.lacks.as_deref()), (false, Some("a date")));
        let c = check("Hanna ran the Leeds 10k in 54 minutes.", "When did I run the Leeds 10k?", &m);
        assert_eq!(c.lacks.as_deref(), Some("a date"), "a figure is not a date");
        assert!(!check("The pool closes on Sundays.", "What time does the pool close?", &m).borne_out);
        // Someone else's number is not the answer: the memory must name whom the question names.
        let c = check(
            "It is 0113 496 0321.",
            "What is Elsa's phone number?",
            &[("n".into(), "Nuno: 0113 496 0321".into())],
        );
        assert!(!c.borne_out, "{c:?}");
        // Nor the prompt's own words about an earlier exchange.
        let c = check("The user asked: when? The assistant answered (it may be wrong): June.", "When was it?", &m);
        assert!(!c.borne_out && c.lacks.as_deref().is_some_and(|l| l.contains("repeats")), "{c:?}");
    }
}
