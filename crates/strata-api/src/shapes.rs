//! The TypeScript shapes of the core types the boundary types carry (with the `specta`
//! feature): the desktop app's bindings are generated from these. They describe the JSON
//! those types serialize to — the domain types themselves stay free of UI derives — and are
//! never constructed, only read back in tests: each shape must read what its core type writes
//! and write it back unchanged (`tests::every_shape_reads_and_writes_what_its_core_type_writes`).
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use specta::Type;

/// A memory's content: `type` and that type's fields.
#[derive(Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "lowercase")]
#[serde(deny_unknown_fields)]
pub enum ContentShape {
    /// Facts about one thing.
    Semantic {
        /// What the facts are about.
        key: String,
        /// Named values: text, numbers, yes/no, lists and groups.
        facts: BTreeMap<String, JsonShape>,
    },
    /// Something that happened or was said.
    Episodic {
        /// When (RFC 3339).
        occurred_at: String,
        /// What was said.
        body: EpisodeBodyShape,
        /// Concept keys it refers to.
        #[serde(default)]
        #[specta(optional)]
        concepts: Option<Vec<String>>,
        /// Metadata kept as it came.
        #[serde(default)]
        #[specta(optional)]
        extra: Option<BTreeMap<String, JsonShape>>,
    },
    /// How to do something.
    Procedural {
        /// Its name.
        name: String,
        /// The steps, in order.
        steps: Vec<String>,
        /// When it applies.
        #[serde(default)]
        #[specta(optional)]
        context: Option<String>,
    },
}

/// Any JSON value (numbers as JavaScript numbers).
#[derive(Serialize, Deserialize, Type)]
#[serde(untagged)]
pub enum JsonShape {
    /// null.
    Null(()),
    /// true or false.
    Bool(bool),
    /// A number.
    Number(f64),
    /// Text.
    Text(String),
    /// A list.
    List(Vec<JsonShape>),
    /// An object.
    Object(BTreeMap<String, JsonShape>),
}

/// What was said in an episode.
#[derive(Serialize, Deserialize, Type)]
#[serde(tag = "form", rename_all = "snake_case")]
#[serde(deny_unknown_fields)]
pub enum EpisodeBodyShape {
    /// A query and its response.
    Exchange {
        /// What was asked.
        query: String,
        /// What was answered.
        response: String,
    },
    /// One speaker's words.
    Utterance {
        /// Who spoke.
        speaker: String,
        /// What they said.
        text: String,
    },
}

/// A memory tier.
#[derive(Serialize, Deserialize, Type)]
#[serde(rename_all = "lowercase")]
pub enum TierShape {
    /// Working memory.
    Short,
    /// Recent.
    Medium,
    /// Persistent.
    Long,
}

/// Whose memory it is.
#[derive(Serialize, Deserialize, Type)]
#[serde(deny_unknown_fields)]
pub struct ScopeShape {
    /// The user.
    user_id: String,
    /// The agent, for a private memory.
    #[specta(optional)]
    agent_id: Option<String>,
    /// The session it was made in.
    #[specta(optional)]
    session_id: Option<String>,
}

/// Where a memory came from.
#[derive(Serialize, Deserialize, Type)]
#[serde(deny_unknown_fields)]
pub struct SourceShape {
    /// The application or client.
    app: String,
    /// The model provider, when a model made it.
    #[specta(optional)]
    provider: Option<String>,
    /// The model.
    #[specta(optional)]
    model: Option<String>,
}

/// Why a memory was recalled: the score and its parts.
#[derive(Serialize, Deserialize, Type)]
#[serde(deny_unknown_fields)]
pub struct BreakdownShape {
    keyword_rank: Option<u32>,
    keyword_score: Option<f64>,
    vector_rank: Option<u32>,
    similarity: Option<f64>,
    matched: f64,
    said_by_assistant: bool,
    time_phrase: Option<String>,
    time: f64,
    recency: f64,
    frequency: f64,
    importance: f64,
    tier: f64,
    score: f64,
}

/// The tier rule's weights and thresholds (`strata_core::TierPolicy`).
#[derive(Serialize, Deserialize, Type)]
#[serde(deny_unknown_fields)]
pub struct TierPolicyShape {
    /// Weight of importance in a memory's value.
    importance_weight: f64,
    /// Weight of access frequency.
    frequency_weight: f64,
    /// Weight of recency.
    recency_weight: f64,
    /// Retrievals at which the frequency part is full.
    frequent_accesses: u32,
    /// Days for the recency part to halve.
    half_life_days: f64,
    /// Working memory holds at most this many memories per session.
    working_memory_items: u32,
    /// … and at most this many tokens per session.
    working_memory_tokens: u32,
    /// … touched at most this many hours ago.
    short_ttl_hours: f64,
    /// Leaving working memory below this value expires a memory.
    expire_below: f64,
    /// Medium-term at or above this value becomes long-term …
    promote_to_long: f64,
    /// … once retrieved this many times.
    promote_min_accesses: u32,
    /// Long-term below this value goes back to medium-term …
    demote_below: f64,
    /// … after this many days untouched.
    long_idle_days: f64,
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;

    /// JSON as TypeScript reads it: numbers as numbers (3 and 3.0 alike), an absent field and a
    /// null one alike.
    fn as_read(v: Value) -> Value {
        match v {
            Value::Number(n) => json!(n.as_f64()),
            Value::Array(a) => Value::Array(a.into_iter().map(as_read).collect()),
            Value::Object(o) => o.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, as_read(v))).collect(),
            other => other,
        }
    }

    /// `core` serialized is read by `S` without loss, and `S` writes the same JSON back.
    fn check<S: Serialize + DeserializeOwned>(core: &impl Serialize) {
        let written = serde_json::to_value(core).unwrap();
        let shape: S = serde_json::from_value(written.clone())
            .unwrap_or_else(|e| panic!("{} cannot read {written}: {e}", std::any::type_name::<S>()));
        assert_eq!(as_read(serde_json::to_value(&shape).unwrap()), as_read(written));
    }

    #[test]
    fn every_shape_reads_and_writes_what_its_core_type_writes() {
        let contents = [
            json!({"type": "semantic", "key": "ana", "facts": {"city": "Porto", "age": 31, "pets": ["cat"], "ok": true, "nested": {"x": 1.5}}}),
            json!({"type": "episodic", "occurred_at": "2026-01-31T12:00:00Z", "body": {"form": "exchange", "query": "q", "response": "r"}, "concepts": ["ana"], "extra": {"session": "s1"}}),
            json!({"type": "episodic", "occurred_at": "2026-01-31T12:00:00Z", "body": {"form": "utterance", "speaker": "Ana", "text": "hi"}}),
            json!({"type": "procedural", "name": "brew", "steps": ["boil", "pour"], "context": "mornings"}),
        ];
        for c in contents {
            let content: strata_core::Content = serde_json::from_value(c).unwrap();
            check::<ContentShape>(&content);
        }
        let scope: strata_core::Scope =
            serde_json::from_value(json!({"user_id": "u", "agent_id": "a", "session_id": "s"})).unwrap();
        check::<ScopeShape>(&scope);
        let source: strata_core::Source =
            serde_json::from_value(json!({"app": "cli", "provider": "openai", "model": "gpt"})).unwrap();
        check::<SourceShape>(&source);
        for tier in [strata_core::Tier::Short, strata_core::Tier::Medium, strata_core::Tier::Long] {
            check::<TierShape>(&tier);
        }
        let breakdown = strata_core::Breakdown {
            keyword_rank: Some(1),
            keyword_score: Some(2.5),
            vector_rank: Some(3),
            similarity: Some(0.7),
            time_phrase: Some("last week".into()),
            ..Default::default()
        };
        check::<BreakdownShape>(&breakdown);
        check::<TierPolicyShape>(&strata_core::TierPolicy::default());
    }
}
