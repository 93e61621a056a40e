//! Boundary types: what the CLI's `--json`, the MCP server and the desktop app receive.
//! Every memory is an object with `id`, `type`, `tier`, `tags`, `created_at` and its content
//! fields at the top level.

use serde::Serialize;
use strata_core::time::format_time;
use strata_core::{Change, Content, Memory, RecordedEvent, Scope, SearchHit, Source};

/// A memory as the outside world sees it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryView {
    /// Stable id (ULID).
    pub id: String,
    /// `type` (semantic, episodic, procedural) and the type's own fields.
    #[serde(flatten)]
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::ContentShape))]
    pub content: Content,
    /// short, medium or long.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::TierShape))]
    pub tier: strata_core::Tier,
    /// Sorted tags.
    pub tags: Vec<String>,
    /// 0 to 1.
    pub importance: f64,
    /// Whose memory it is.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::ScopeShape))]
    pub scope: Scope,
    /// Where it came from.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::SourceShape))]
    pub source: Source,
    /// Outgoing provenance links.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkView>,
    /// When it was recorded (RFC 3339).
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// Its event stream's version.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub version: u64,
    /// Times retrieved.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub access_count: u64,
    /// When last retrieved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_accessed_at: Option<String>,
    /// Pinned: maintenance never moves it down.
    pub pinned: bool,
    /// When maintenance expired it (hidden from recall until revived).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expired_at: Option<String>,
}

/// A provenance link.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkView {
    /// The memory linked to.
    pub target: String,
    /// How they relate.
    pub relation: String,
}

impl From<Memory> for MemoryView {
    fn from(m: Memory) -> Self {
        MemoryView {
            id: m.id.to_string(),
            content: m.content,
            tier: m.tier,
            tags: m.tags.into_iter().collect(),
            importance: m.importance.get(),
            scope: m.scope,
            source: m.source,
            links: m
                .links
                .into_iter()
                .map(|l| LinkView { target: l.target.to_string(), relation: l.relation })
                .collect(),
            created_at: format_time(m.created_at),
            updated_at: format_time(m.updated_at),
            version: m.version,
            access_count: m.access_count,
            last_accessed_at: m.last_accessed_at.map(format_time),
            pinned: m.pinned,
            expired_at: m.expired_at.map(format_time),
        }
    }
}

/// A page of a list.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct PageView {
    /// The memories.
    pub items: Vec<MemoryView>,
    /// Cursor for the next page, absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A keyword search hit.
#[derive(Debug, Clone, Serialize)]
pub struct HitView {
    /// bm25 relevance, higher is better.
    pub score: f64,
    /// The best passage with matches marked.
    pub snippet: String,
    /// The memory.
    pub memory: MemoryView,
}

impl From<SearchHit> for HitView {
    fn from(h: SearchHit) -> Self {
        HitView { score: h.score, snippet: h.snippet, memory: h.memory.into() }
    }
}

/// A recalled memory and why it was recalled.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct RecallView {
    /// The score and its parts.
    #[cfg_attr(feature = "specta", specta(type = crate::shapes::BreakdownShape))]
    pub why: strata_core::Breakdown,
    /// The memory.
    pub memory: MemoryView,
}

impl From<strata_core::Recalled> for RecallView {
    fn from(r: strata_core::Recalled) -> Self {
        RecallView { why: r.breakdown, memory: r.memory.into() }
    }
}

/// One event of a memory's history.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Serialize)]
pub struct EventView {
    /// Global sequence number.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub seq: i64,
    /// Position in the memory's stream.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub version: u64,
    /// Event type (`semantic_created`, `tagged`, …).
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it was recorded.
    pub at: String,
    /// Who caused it (user, agent, app, system).
    pub actor: String,
    /// The client that wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The session the event happened in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Groups the events written by one operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// A one-line description of the change.
    pub summary: String,
    /// Whether its payload was erased by forget.
    pub redacted: bool,
}

impl From<RecordedEvent> for EventView {
    fn from(e: RecordedEvent) -> Self {
        EventView {
            seq: e.seq,
            version: e.stream_version,
            event_type: e.change.event_type().to_string(),
            at: format_time(e.recorded_at),
            actor: e.meta.actor.to_string(),
            client: e.meta.client,
            session_id: e.meta.session_id,
            correlation_id: e.meta.correlation_id,
            summary: summarize(&e.change),
            redacted: e.redacted_at.is_some(),
        }
    }
}

/// A short human description of a change.
pub fn summarize(c: &Change) -> String {
    match c {
        Change::Created(c) => format!("created: {}", content_title(&c.content)),
        Change::ContentUpdated { content } => format!("content set to: {}", content_title(content)),
        Change::Tagged { tag } => format!("tagged '{tag}'"),
        Change::Untagged { tag } => format!("untagged '{tag}'"),
        Change::ImportanceChanged { importance } => format!("importance set to {}", importance.get()),
        Change::Accessed { count } => format!("retrieved {count}×"),
        Change::TierChanged { from, to, reason } => format!("moved {from} → {to}: {reason}"),
        Change::Linked { relation, .. } => format!("linked to another memory ({})", relation.replace('_', " ")),
        Change::Unlinked { relation, .. } => {
            format!("no longer linked to another memory ({})", relation.replace('_', " "))
        }
        Change::Pinned => "pinned".to_string(),
        Change::Unpinned => "unpinned".to_string(),
        Change::Expired { reason } => format!("expired: {reason}"),
        Change::Forgotten { redacted_events } => format!("forgotten ({redacted_events} earlier events erased)"),
        Change::Redacted { .. } => "(erased)".to_string(),
    }
}

/// A one-line title for a memory's content, at most ~80 characters.
pub fn content_title(c: &Content) -> String {
    let (title, body) = strata_core::search_text(c);
    let text = match c {
        Content::Semantic(_) => format!("{title}: {}", body.replace('\n', "; ")),
        Content::Procedural(p) => format!("{title} ({} steps)", p.steps.len()),
        Content::Episodic(_) => format!("{title}: {body}"),
    };
    truncate(&text, 80)
}

/// Cuts text to `max` characters on a char boundary, adding an ellipsis.
pub fn truncate(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let mut t: String = one_line.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// What an import did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportView {
    /// The format it was read as.
    pub format: crate::ImportFormat,
    /// Memories imported (seed, backup), or entities and relations created or extended (graph).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub imported: u64,
    /// A memories document's outcome in words: "3 added, 2 merged, 1 already there".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// Summary statistics.
pub type StatsView = strata_core::Stats;
