//! The stored v1 event format is pinned: old logs and backups must keep decoding.

use strata_core::*;

/// (event_type, payload) pairs as v1 writes them. Never edit these; add new ones.
const V1: &[(&str, &str)] = &[
    (
        "semantic_created",
        r#"{"content":{"type":"semantic","key":"napoleon_bonaparte","facts":{"birth":"1769, Corsica","born_year":1769,"exiled":true,"achievements":["Napoleonic Code"],"family":{"wife":"Josephine"}}},"scope":{"user_id":"default"},"tags":["history"],"importance":0.5,"tier":"medium","source":{"app":"cli"}}"#,
    ),
    (
        "episodic_created",
        r#"{"content":{"type":"episodic","occurred_at":"2023-07-15T14:32:45Z","body":{"form":"exchange","query":"q","response":"r"},"concepts":["napoleon_bonaparte"],"extra":{"mood":"curious"}},"scope":{"user_id":"default","session_id":"abc123"},"importance":0.5,"tier":"short","source":{"app":"import"}}"#,
    ),
    (
        "procedural_created",
        r#"{"content":{"type":"procedural","name":"brew","steps":["boil","steep"],"context":"mornings"},"scope":{"user_id":"u","agent_id":"a"},"importance":1.0,"tier":"long","source":{"app":"mcp","provider":"openai","model":"gpt-4o"}}"#,
    ),
    ("content_updated", r#"{"content":{"type":"procedural","name":"brew","steps":["boil"]}}"#),
    ("tagged", r#"{"tag":"drinks"}"#),
    ("untagged", r#"{"tag":"drinks"}"#),
    ("importance_changed", r#"{"importance":0.75}"#),
    ("accessed", r#"{"count":3}"#),
    ("tier_changed", r#"{"from":"short","to":"medium","reason":"accessed often"}"#),
    ("linked", r#"{"target":"01KAR0000000000000000000AB","relation":"derived_from"}"#),
    ("unlinked", r#"{"target":"01KAR0000000000000000000AB","relation":"derived_from"}"#),
    ("forgotten", r#"{"redacted_events":4}"#),
    ("pinned", "{}"),
    ("unpinned", "{}"),
    ("expired", r#"{"reason":"left working memory with value 0.12"}"#),
];

#[test]
fn v1_payloads_decode_and_encode_back_byte_for_byte() {
    for (ty, payload) in V1 {
        let change = Change::decode(ty, 1, payload, false).unwrap_or_else(|e| panic!("{ty}: {e}"));
        assert_eq!(change.event_type(), *ty);
        assert_eq!(&change.encode(), payload, "{ty} re-encodes differently");
    }
}

#[test]
fn undecodable_payloads_name_the_field() {
    let cases = [
        ("tagged", 1, r#"{"tog":"x"}"#, "missing field `tag`"),
        ("importance_changed", 1, r#"{"importance":7}"#, "between 0 and 1"),
        ("tier_changed", 1, r#"{"from":"short","to":"eternal","reason":"r"}"#, "to: unknown variant"),
        ("semantic_created", 1, V1[2].1, "carries procedural content"),
        ("teleported", 1, "{}", "unknown event type"),
        ("tagged", 2, r#"{"tag":"x"}"#, "schema version 2 is not supported"),
    ];
    for (ty, v, payload, want) in cases {
        let err = Change::decode(ty, v, payload, false).unwrap_err();
        assert!(err.contains(want), "{ty}: '{err}' does not contain '{want}'");
    }
}
