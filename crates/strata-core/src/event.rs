//! The stored event format (version 1): what each event type carries, and its metadata.
//!
//! This is a boundary format: payloads are written to the log and to backups and must keep
//! decoding forever. A change here needs a new `schema_version` and an upcaster in
//! [`Change::decode`]; `tests/it/format.rs` pins the v1 encoding with a golden file.

use std::collections::BTreeSet;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::model::{Content, Importance, MemoryId, MemoryKind, Scope, Source, Tier};
use crate::names::named_enum;

/// The payload schema version this build writes.
pub const SCHEMA_VERSION: i64 = 1;

named_enum! {
    /// Who caused an event.
    #[derive(Default)]
    pub enum Actor ("actor") {
        /// A person, through the app or CLI.
        #[default]
        User = "user",
        /// An AI agent (e.g. through MCP).
        Agent = "agent",
        /// The Strata application acting on its own (e.g. recording a chat turn).
        App = "app",
        /// Background maintenance (tiering, access batching).
        System = "system",
    }
}

/// A new event or correlation id: a ULID from the clock's time and random bits.
pub fn new_event_id(clock: &dyn crate::clock::Clock) -> String {
    ulid::Ulid::from_parts(crate::clock::to_ms(clock.now()) as u64, rand::random()).to_string()
}

/// Who and what caused an event; stored beside the payload.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EventMeta {
    /// The kind of actor.
    pub actor: Actor,
    /// The client that wrote it (an MCP client name, `cli`, `desktop`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The session it happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Groups the events of one user action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The event that caused this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causation_id: Option<String>,
}

impl EventMeta {
    /// Metadata for an actor and nothing else.
    pub fn actor(actor: Actor) -> Self {
        EventMeta { actor, ..Default::default() }
    }
}

/// The payload of a creation event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Created {
    /// What the memory says.
    pub content: Content,
    /// Whose it is.
    pub scope: Scope,
    /// Initial tags.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tags: BTreeSet<String>,
    /// Initial importance.
    pub importance: Importance,
    /// Initial tier.
    pub tier: Tier,
    /// Where it came from.
    pub source: Source,
}

/// What happened to a memory: one event's type and payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A memory was created (`semantic_created`, `episodic_created`, `procedural_created`).
    Created(Box<Created>),
    /// Its content was replaced.
    ContentUpdated {
        /// The new content (same type as before).
        content: Content,
    },
    /// A tag was added.
    Tagged {
        /// The tag.
        tag: String,
    },
    /// A tag was removed.
    Untagged {
        /// The tag.
        tag: String,
    },
    /// Its importance changed.
    ImportanceChanged {
        /// The new importance.
        importance: Importance,
    },
    /// It was retrieved `count` times since the last recorded access (accesses are batched).
    Accessed {
        /// How many retrievals this event stands for.
        count: u32,
    },
    /// It moved between tiers.
    TierChanged {
        /// Previous tier.
        from: Tier,
        /// New tier.
        to: Tier,
        /// Why (a rule name or a person's reason).
        reason: String,
    },
    /// A provenance link to another memory.
    Linked {
        /// The other memory.
        target: MemoryId,
        /// How they relate.
        relation: String,
    },
    /// A link removed.
    Unlinked {
        /// The other memory.
        target: MemoryId,
        /// How they related.
        relation: String,
    },
    /// Pinned by a person: never moved down by maintenance (and revived if it had expired).
    Pinned,
    /// No longer pinned.
    Unpinned,
    /// Maintenance expired it: hidden from recall, kept in the store.
    Expired {
        /// Why (the rule and the value that decided it).
        reason: String,
    },
    /// The memory was forgotten; every earlier payload of its stream was redacted.
    Forgotten {
        /// How many earlier events were redacted.
        redacted_events: u64,
    },
    /// A payload erased by a later `Forgotten`; only its type survives.
    Redacted {
        /// The original event type.
        event_type: String,
    },
}

#[derive(Serialize, Deserialize)]
struct TagPayload {
    tag: String,
}
#[derive(Serialize, Deserialize)]
struct ContentPayload {
    content: Content,
}
#[derive(Serialize, Deserialize)]
struct ImportancePayload {
    importance: Importance,
}
#[derive(Serialize, Deserialize)]
struct AccessPayload {
    count: u32,
}
#[derive(Serialize, Deserialize)]
struct TierPayload {
    from: Tier,
    to: Tier,
    reason: String,
}
#[derive(Serialize, Deserialize)]
struct LinkPayload {
    target: MemoryId,
    relation: String,
}
#[derive(Serialize, Deserialize)]
struct ReasonPayload {
    reason: String,
}
#[derive(Serialize, Deserialize)]
struct ForgetPayload {
    redacted_events: u64,
}

/// The payload stored in place of a redacted one.
pub const REDACTED_PAYLOAD: &str = "{}";

impl Change {
    /// The `event_type` column's value.
    pub fn event_type(&self) -> &str {
        match self {
            Change::Created(c) => match c.content.kind() {
                MemoryKind::Semantic => "semantic_created",
                MemoryKind::Episodic => "episodic_created",
                MemoryKind::Procedural => "procedural_created",
            },
            Change::ContentUpdated { .. } => "content_updated",
            Change::Tagged { .. } => "tagged",
            Change::Untagged { .. } => "untagged",
            Change::ImportanceChanged { .. } => "importance_changed",
            Change::Accessed { .. } => "accessed",
            Change::TierChanged { .. } => "tier_changed",
            Change::Linked { .. } => "linked",
            Change::Unlinked { .. } => "unlinked",
            Change::Pinned => "pinned",
            Change::Unpinned => "unpinned",
            Change::Expired { .. } => "expired",
            Change::Forgotten { .. } => "forgotten",
            Change::Redacted { event_type } => event_type,
        }
    }

    /// The JSON payload as stored.
    pub fn encode(&self) -> String {
        let v = match self {
            Change::Created(c) => serde_json::to_string(c),
            Change::ContentUpdated { content } => serde_json::to_string(&ContentPayload { content: content.clone() }),
            Change::Tagged { tag } | Change::Untagged { tag } => {
                serde_json::to_string(&TagPayload { tag: tag.clone() })
            }
            Change::ImportanceChanged { importance } => {
                serde_json::to_string(&ImportancePayload { importance: *importance })
            }
            Change::Accessed { count } => serde_json::to_string(&AccessPayload { count: *count }),
            Change::TierChanged { from, to, reason } => {
                serde_json::to_string(&TierPayload { from: *from, to: *to, reason: reason.clone() })
            }
            Change::Linked { target, relation } | Change::Unlinked { target, relation } => {
                serde_json::to_string(&LinkPayload { target: *target, relation: relation.clone() })
            }
            Change::Forgotten { redacted_events } => {
                serde_json::to_string(&ForgetPayload { redacted_events: *redacted_events })
            }
            Change::Pinned | Change::Unpinned => return "{}".to_string(),
            Change::Expired { reason } => serde_json::to_string(&ReasonPayload { reason: reason.clone() }),
            Change::Redacted { .. } => return REDACTED_PAYLOAD.to_string(),
        };
        // Serializing these plain structs cannot fail (no maps with non-string keys).
        v.unwrap_or_else(|_| REDACTED_PAYLOAD.to_string())
    }

    /// Decodes a stored payload of the given type and schema version.
    pub fn decode(event_type: &str, schema_version: i64, payload: &str, redacted: bool) -> Result<Change, String> {
        if redacted {
            return Ok(Change::Redacted { event_type: event_type.to_string() });
        }
        if schema_version != SCHEMA_VERSION {
            return Err(format!(
                "payload schema version {schema_version} is not supported (this build reads {SCHEMA_VERSION})"
            ));
        }
        fn de<T: for<'a> Deserialize<'a>>(payload: &str) -> Result<T, String> {
            let de = &mut serde_json::Deserializer::from_str(payload);
            serde_path_to_error::deserialize(de).map_err(|e| {
                let path = e.path().to_string();
                if path == "." { e.inner().to_string() } else { format!("{path}: {}", e.inner()) }
            })
        }
        Ok(match event_type {
            "semantic_created" | "episodic_created" | "procedural_created" => {
                let c: Created = de(payload)?;
                if c.content.kind().as_str() != event_type.trim_end_matches("_created") {
                    return Err(format!("{event_type} carries {} content", c.content.kind()));
                }
                Change::Created(Box::new(c))
            }
            "content_updated" => Change::ContentUpdated { content: de::<ContentPayload>(payload)?.content },
            "tagged" => Change::Tagged { tag: de::<TagPayload>(payload)?.tag },
            "untagged" => Change::Untagged { tag: de::<TagPayload>(payload)?.tag },
            "importance_changed" => {
                Change::ImportanceChanged { importance: de::<ImportancePayload>(payload)?.importance }
            }
            "accessed" => Change::Accessed { count: de::<AccessPayload>(payload)?.count },
            "tier_changed" => {
                let p: TierPayload = de(payload)?;
                Change::TierChanged { from: p.from, to: p.to, reason: p.reason }
            }
            "linked" => {
                let p: LinkPayload = de(payload)?;
                Change::Linked { target: p.target, relation: p.relation }
            }
            "unlinked" => {
                let p: LinkPayload = de(payload)?;
                Change::Unlinked { target: p.target, relation: p.relation }
            }
            "pinned" => Change::Pinned,
            "unpinned" => Change::Unpinned,
            "expired" => Change::Expired { reason: de::<ReasonPayload>(payload)?.reason },
            "forgotten" => Change::Forgotten { redacted_events: de::<ForgetPayload>(payload)?.redacted_events },
            other => return Err(format!("unknown event type '{other}'")),
        })
    }
}

/// An event as read back from the log.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    /// Global sequence number (1-based, gap-free per database).
    pub seq: i64,
    /// The event's own id.
    pub event_id: String,
    /// The memory it belongs to.
    pub stream_id: MemoryId,
    /// Its position in that memory's stream (1 = creation).
    pub stream_version: u64,
    /// What happened.
    pub change: Change,
    /// Who caused it.
    pub meta: EventMeta,
    /// When it was recorded (from the store's clock).
    pub recorded_at: DateTime<Utc>,
    /// When its payload was erased, if it was.
    pub redacted_at: Option<DateTime<Utc>>,
}

/// The version a writer expects a stream to be at; a mismatch is a [`Error::Conflict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// Any version: the writer does not care (e.g. recording accesses).
    Any,
    /// The stream must not exist yet.
    NoStream,
    /// The stream must be exactly at this version.
    Exact(u64),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Any => f.write_str("any"),
            Expected::NoStream => f.write_str("0 (new)"),
            Expected::Exact(v) => write!(f, "{v}"),
        }
    }
}
