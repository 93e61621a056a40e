//! Training sets from memories: each semantic fact and each procedure becomes question → answer
//! pairs through templates, asked several ways so the model learns the fact and not one string;
//! other phrasings are held out for evaluation. Each example names its source memories.
//! Validation reports duplicates, empty or over-long examples and contradicting facts.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use strata_core::{Content, Error, FactValue, Memory, Result};

/// Where an example is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Trained on.
    Train,
    /// Asked only when evaluating (phrasings never trained on).
    Heldout,
}

/// What an example teaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A semantic fact.
    Fact,
    /// A procedure's steps.
    Procedure,
    /// A general question answered by the base model itself, mixed in so the adapter keeps
    /// the model's other behaviour (replay).
    Replay,
}

/// The fact an example is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FactRef {
    /// Who or what (the concept, in words).
    pub subject: String,
    /// Which property.
    pub attribute: String,
    /// Its value: what a correct answer contains.
    pub value: String,
}

/// One example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    /// The user's question.
    pub question: String,
    /// The answer to learn.
    pub answer: String,
    /// What it teaches.
    pub kind: Kind,
    /// Trained on or held out.
    pub split: Split,
    /// The memories it comes from (provenance).
    pub sources: Vec<String>,
    /// The fact, for facts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<FactRef>,
}

/// Question phrasings trained on (`{s}` subject, `{a}` attribute).
pub const TRAIN_TEMPLATES: &[&str] = &[
    "What is {s}'s {a}?",
    "Do you know {s}'s {a}?",
    "Tell me {s}'s {a}.",
    "What's the {a} of {s}?",
    "Can you remind me what {s}'s {a} is?",
    "{s}'s {a}?",
];

/// Phrasings held out for evaluation: never trained on.
pub const HELDOUT_TEMPLATES: &[&str] =
    &["I forgot {s}'s {a}. What is it?", "Please recall the {a} of {s}.", "Quick question: what is {s}'s {a}?"];

/// A problem found in a training set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum Problem {
    /// The same question twice: the later copy is left out.
    Duplicate {
        /// The question.
        question: String,
        /// The memories of the copy left out.
        sources: Vec<String>,
    },
    /// A question or answer with no text: left out.
    Empty {
        /// The memories it came from.
        sources: Vec<String>,
    },
    /// Longer than the training length: left out.
    TooLong {
        /// The question.
        question: String,
        /// Its tokens.
        tokens: usize,
        /// The limit.
        limit: usize,
    },
    /// Two memories give different values for the same fact: training refuses until one is
    /// changed or left out.
    Contradiction {
        /// Who or what.
        subject: String,
        /// Which property.
        attribute: String,
        /// The values and the memories that give them.
        values: Vec<(String, String)>,
    },
    /// A memory that yields no example (an episode, or a fact whose value is a nested group).
    Unused {
        /// The memory.
        source: String,
        /// Why.
        reason: String,
    },
}

impl Problem {
    /// Whether it stops training.
    pub fn blocks(&self) -> bool {
        matches!(self, Problem::Contradiction { .. })
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            Problem::Duplicate { question, .. } => format!("duplicate question left out: {question}"),
            Problem::Empty { sources } => format!("empty example left out (from {})", sources.join(", ")),
            Problem::TooLong { question, tokens, limit } => {
                format!("too long ({tokens} tokens, limit {limit}), left out: {question}")
            }
            Problem::Contradiction { subject, attribute, values } => {
                let v: Vec<String> = values.iter().map(|(v, id)| format!("'{v}' ({id})")).collect();
                format!("contradiction: {subject}'s {attribute} is {}", v.join(" or "))
            }
            Problem::Unused { source, reason } => format!("{source} gives no example: {reason}"),
        }
    }

    /// In words for a person who curates, with how to mend it (the app's training set).
    pub fn advice(&self) -> String {
        match self {
            Problem::Duplicate { question, .. } => {
                format!("“{question}” is asked twice; the second is left out. Reword or remove one.")
            }
            Problem::Empty { .. } => {
                "An example with no question or no answer is left out. Fill it in or remove it.".into()
            }
            Problem::TooLong { question, tokens, limit } => {
                format!(
                    "“{question}” is too long to teach ({tokens} tokens; at most {limit}) and is left out. Shorten it."
                )
            }
            Problem::Contradiction { subject, attribute, values } => format!(
                "These memories disagree on {subject}'s {attribute}: {}. Nothing is taught until you change one of them \
                 or reject it.",
                values.iter().map(|(v, _)| format!("“{v}”")).collect::<Vec<_>>().join(" and ")
            ),
            Problem::Unused { reason, .. } => format!("Nothing to teach from it: {reason}."),
        }
    }

    /// The memories it concerns, by id (none: the set as a whole).
    pub fn memories(&self) -> Vec<String> {
        match self {
            Problem::Duplicate { sources, .. } | Problem::Empty { sources } => sources.clone(),
            Problem::TooLong { .. } => Vec::new(),
            Problem::Contradiction { values, .. } => values.iter().map(|(_, id)| id.clone()).collect(),
            Problem::Unused { source, .. } => vec![source.clone()],
        }
    }
}

/// A training set and what validation found.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// The examples, trained and held out.
    pub examples: Vec<Example>,
    /// What was found.
    pub problems: Vec<Problem>,
}

/// Words from a key: `maya_chen` → `Maya Chen` (subjects), `favourite_food` → `favourite food`.
fn words(key: &str, capitalise: bool) -> String {
    let spaced = key.replace(['_', '-'], " ");
    let spaced = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    if !capitalise {
        return spaced;
    }
    spaced
        .split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fact's value in words; `None` for a nested group.
fn value_text(v: &FactValue) -> Option<String> {
    Some(match v {
        FactValue::Text(s) => s.trim().to_string(),
        FactValue::Number(n) => n.to_string(),
        FactValue::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        FactValue::List(items) => {
            let parts: Vec<String> = items.iter().filter_map(value_text).collect();
            match parts.len() {
                0 => String::new(),
                1 => parts[0].clone(),
                n => format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1]),
            }
        }
        FactValue::Group(_) => return None,
    })
}

fn fill(template: &str, s: &str, a: &str) -> String {
    template.replace("{s}", s).replace("{a}", a)
}

/// Normalised text for comparing answers: lower case, letters and digits, single spaces.
pub fn normalise(text: &str) -> String {
    let t: String = text.chars().map(|c| if c.is_alphanumeric() { c.to_ascii_lowercase() } else { ' ' }).collect();
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A step without the number or bullet it was written with ("1. Fill the can", "2) …",
/// "- …"): the example numbers the steps itself.
fn unnumbered(step: &str) -> &str {
    let s = step.trim().trim_start_matches(['-', '*', '•']).trim_start();
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match s[digits..].strip_prefix(['.', ')']) {
        Some(rest) if digits > 0 => rest.trim_start(),
        _ => s,
    }
}

impl Dataset {
    /// The examples the memories give (semantic facts and procedures), validated.
    /// `count_tokens` measures an example in the model's template; `limit` is the longest kept.
    pub fn from_memories(
        memories: &[Memory],
        count_tokens: &dyn Fn(&Example) -> Result<usize>,
        limit: usize,
    ) -> Result<Dataset> {
        Dataset::from_memories_edited(memories, &std::collections::BTreeMap::new(), count_tokens, limit)
    }

    /// [`Dataset::from_memories`], with a person's own examples for the memories in `edits`
    /// (by id) in place of the generated ones; validated the same way.
    pub fn from_memories_edited(
        memories: &[Memory],
        edits: &BTreeMap<String, Vec<Example>>,
        count_tokens: &dyn Fn(&Example) -> Result<usize>,
        limit: usize,
    ) -> Result<Dataset> {
        let mut set = Dataset::default();
        // (subject, attribute) → value → sources, to find contradictions.
        type Values = (String, String, BTreeMap<String, String>);
        let mut seen: BTreeMap<(String, String), Values> = BTreeMap::new();
        for m in memories {
            let id = m.id.to_string();
            match &m.content {
                Content::Semantic(c) => {
                    let subject = words(&c.key, true);
                    for (name, value) in &c.facts {
                        let attribute = words(name, false);
                        let Some(value) = value_text(value) else {
                            set.problems.push(Problem::Unused {
                                source: id.clone(),
                                reason: format!("the fact '{name}' is a group of facts; give its parts as facts"),
                            });
                            continue;
                        };
                        seen.entry((normalise(&subject), normalise(&attribute)))
                            .or_insert_with(|| (subject.clone(), attribute.clone(), BTreeMap::new()))
                            .2
                            .entry(value.clone())
                            .or_insert_with(|| id.clone());
                        let fact = FactRef { subject: subject.clone(), attribute: attribute.clone(), value };
                        set.fact_examples(&fact, &id);
                    }
                }
                Content::Procedural(p) => {
                    let task = words(&p.name, false);
                    let steps: Vec<String> =
                        p.steps.iter().enumerate().map(|(i, s)| format!("{}. {}", i + 1, unnumbered(s))).collect();
                    let answer = format!("To {task}: {}", steps.join(" "));
                    // Every phrasing is learned: a check question is judged by the value it
                    // names, and a procedure has none (a check with no right answer checks nothing).
                    for (q, split) in [
                        (format!("How do I {task}?"), Split::Train),
                        (format!("What are the steps to {task}?"), Split::Train),
                        (format!("Walk me through how to {task}."), Split::Train),
                        (format!("What is the procedure to {task}?"), Split::Train),
                    ] {
                        set.examples.push(Example {
                            question: q,
                            answer: answer.clone(),
                            kind: Kind::Procedure,
                            split,
                            sources: vec![id.clone()],
                            fact: None,
                        });
                    }
                }
                Content::Episodic(_) => set.problems.push(Problem::Unused {
                    source: id,
                    reason: "episodes are not trained; facts and procedures are".into(),
                }),
            }
        }
        for (subject, attribute, values) in seen.into_values() {
            if values.len() > 1 {
                set.problems.push(Problem::Contradiction { subject, attribute, values: values.into_iter().collect() });
            }
        }
        for (id, examples) in edits {
            set.examples.retain(|e| e.sources.as_slice() != std::slice::from_ref(id));
            set.examples.extend(examples.iter().cloned().map(|mut e| {
                e.sources = vec![id.clone()];
                e
            }));
        }
        set.validate(count_tokens, limit)?;
        Ok(set)
    }

    fn fact_examples(&mut self, fact: &FactRef, source: &str) {
        let (s, a, v) = (&fact.subject, &fact.attribute, &fact.value);
        let answer = format!("{s}'s {a} is {v}.");
        let phrasings = TRAIN_TEMPLATES
            .iter()
            .map(|t| (t, Split::Train))
            .chain(HELDOUT_TEMPLATES.iter().map(|t| (t, Split::Heldout)));
        for (t, split) in phrasings {
            self.examples.push(Example {
                question: fill(t, s, a),
                answer: answer.clone(),
                kind: Kind::Fact,
                split,
                sources: vec![source.to_string()],
                fact: Some(fact.clone()),
            });
        }
    }

    /// Leaves out (and reports) duplicates, empty and over-long examples.
    fn validate(&mut self, count_tokens: &dyn Fn(&Example) -> Result<usize>, limit: usize) -> Result<()> {
        let mut kept = Vec::with_capacity(self.examples.len());
        let mut questions = std::collections::HashSet::new();
        for e in std::mem::take(&mut self.examples) {
            if e.question.trim().is_empty() || e.answer.trim().is_empty() {
                self.problems.push(Problem::Empty { sources: e.sources });
                continue;
            }
            if !questions.insert(normalise(&e.question)) {
                self.problems.push(Problem::Duplicate { question: e.question, sources: e.sources });
                continue;
            }
            let tokens = count_tokens(&e)?;
            if tokens > limit {
                self.problems.push(Problem::TooLong { question: e.question, tokens, limit });
                continue;
            }
            kept.push(e);
        }
        self.examples = kept;
        Ok(())
    }

    /// The examples trained on.
    pub fn train(&self) -> impl Iterator<Item = &Example> {
        self.examples.iter().filter(|e| e.split == Split::Train)
    }

    /// The held-out fact questions.
    pub fn heldout(&self) -> impl Iterator<Item = &Example> {
        self.examples.iter().filter(|e| e.split == Split::Heldout)
    }

    /// The facts taught, each once.
    pub fn facts(&self) -> Vec<&FactRef> {
        let mut out: Vec<&FactRef> = Vec::new();
        for f in self.examples.iter().filter_map(|e| e.fact.as_ref()) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out
    }

    /// Every source memory, sorted, each once.
    pub fn sources(&self) -> Vec<String> {
        let mut s: Vec<String> = self.examples.iter().flat_map(|e| e.sources.iter().cloned()).collect();
        s.sort();
        s.dedup();
        s
    }

    /// Problems that stop training.
    pub fn blocking(&self) -> Vec<&Problem> {
        self.problems.iter().filter(|p| p.blocks()).collect()
    }

    /// The set as JSON Lines (one example per line).
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for e in &self.examples {
            out.push_str(&serde_json::to_string(e).unwrap_or_default());
            out.push('\n');
        }
        out
    }

    /// The SHA-256 of its JSON Lines: the set's identity in the adapter registry.
    pub fn hash(&self) -> String {
        hex(&Sha256::digest(self.to_jsonl().as_bytes()))
    }

    /// Writes the JSON Lines to `path` whole ([`strata_core::files::write_whole`]).
    pub fn write(&self, path: &Path) -> Result<()> {
        strata_core::files::write_bytes(path, self.to_jsonl().as_bytes())
    }

    /// Reads a set written by [`Dataset::write`] (at most [`MAX_SET_BYTES`]); a bad line is
    /// reported with its number.
    pub fn read(path: &Path) -> Result<Dataset> {
        let text = strata_core::files::read_text(path, MAX_SET_BYTES, "a training set")?;
        let mut examples = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let e: Example = serde_json::from_str(line).map_err(|e| {
                Error::invalid(format!("{} line {}: not a training example ({e})", path.display(), i + 1))
            })?;
            examples.push(e);
        }
        if examples.is_empty() {
            return Err(Error::invalid(format!("{} holds no examples", path.display())));
        }
        Ok(Dataset { examples, problems: Vec::new() })
    }
}

/// The most bytes of a training set read from a file: thousands of facts' examples take a few
/// MiB.
pub const MAX_SET_BYTES: u64 = 64 << 20;

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
