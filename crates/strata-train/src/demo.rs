//! The shared example set: twenty invented facts about people, pets, places, dates and
//! preferences (nothing a model could know beforehand), and general questions for replay.

use strata_core::{Concept, Content, FactValue, Facts};

/// The example facts: five concepts of four facts each.
pub const FACTS: &[(&str, &[(&str, &str)])] = &[
    (
        "maya_chen",
        &[("dog's name", "Biscuit"), ("home town", "Porto"), ("birthday", "March 14"), ("favourite food", "ramen")],
    ),
    (
        "tom_okafor",
        &[
            ("cat's name", "Pixel"),
            ("employer", "Larkspur Labs"),
            ("favourite colour", "teal"),
            ("wedding anniversary", "June 2"),
        ],
    ),
    (
        "aunt_rosa",
        &[
            ("home town", "Valparaiso"),
            ("parrot's name", "Mango"),
            ("favourite flower", "dahlias"),
            ("birthday", "November 30"),
        ],
    ),
    (
        "jamie_park",
        &[
            ("preferred editor", "Helix"),
            ("coffee order", "flat white"),
            ("sister's name", "Ines"),
            ("gym day", "Thursday"),
        ],
    ),
    (
        "team_offsite",
        &[("venue", "Lake Bled"), ("date", "October 9"), ("organiser", "Priya"), ("budget", "4000 euros")],
    ),
];

/// The example facts as semantic memories' content.
pub fn contents() -> Vec<Content> {
    contents_of(FACTS)
}

/// Concepts and their facts (`(key, [(fact, value)])`) as semantic memories' content.
pub fn contents_of(concepts: &[(&str, &[(&str, &str)])]) -> Vec<Content> {
    concepts
        .iter()
        .map(|(key, facts)| {
            let facts: Facts = facts.iter().map(|(k, v)| (k.to_string(), FactValue::Text(v.to_string()))).collect();
            Content::Semantic(Concept { key: key.to_string(), facts })
        })
        .collect()
}

/// General questions whose answers by the base model are mixed into training (replay), so the
/// adapter keeps how the model answers everything else.
pub const REPLAY_QUESTIONS: &[&str] = &[
    "What is the capital of France?",
    "How many days are there in a week?",
    "What colour is the sky on a clear day?",
    "What do bees make?",
    "Which planet do we live on?",
    "What is the boiling point of water in Celsius?",
    "Name a fruit that is yellow.",
    "What is the opposite of hot?",
    "How many legs does a spider have?",
    "What language is spoken in Spain?",
    "What do plants need to grow?",
    "What is two plus three?",
    "Which animal is known as man's best friend?",
    "What season comes after winter?",
    "What is ice made of?",
    "Who wrote Romeo and Juliet?",
];
