//! The memory model: the three memory types, scope, tiers and the `Memory` record.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use ulid::Ulid;

use crate::error::{Error, Result, excerpt};
use crate::names::named_enum;

/// The most bytes a memory's content takes as stored (its JSON: text, facts, steps, metadata).
/// A memory is something recalled into a prompt: 1 MiB is about 250,000 tokens, more than any
/// context window the assembler fills, and far more than the 256 tokens the embedder reads.
/// Every update writes the whole content into the log again (and the text index), so a
/// larger "memory" — a whole document — costs its size on every change while no recall can
/// use it whole. It is also the most an MCP client can send in one request.
pub const MAX_CONTENT_BYTES: usize = 1 << 20;
/// The most bytes of a key: a concept key, a procedure name, a fact name, a speaker, a concept
/// an episode refers to. Keys are names, shown in lists and matched exactly.
pub const MAX_KEY_BYTES: usize = 256;
/// The most bytes of a tag.
pub const MAX_TAG_BYTES: usize = 64;
/// The most bytes of a link's relation (`derived_from`, `works_at`).
pub const MAX_RELATION_BYTES: usize = 64;
/// The most bytes of the reason a tier change or an expiry records (one sentence).
pub const MAX_REASON_BYTES: usize = 512;
/// The most bytes of a name in a scope or source: user, agent, session, app, provider, model.
pub const MAX_NAME_BYTES: usize = 256;

/// A memory's stable identifier (a ULID: sortable by creation time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemoryId(Ulid);

impl MemoryId {
    /// Makes an id from a millisecond timestamp and random bits.
    pub fn from_parts(unix_ms: u64, random: u128) -> Self {
        MemoryId(Ulid::from_parts(unix_ms, random))
    }

    /// Wraps a ULID.
    pub fn from_ulid(u: Ulid) -> Self {
        MemoryId(u)
    }
}

impl fmt::Display for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for MemoryId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ulid::from_string(s.trim())
            .map(MemoryId)
            .map_err(|_| Error::invalid(format!("'{}' is not a memory id (expected a 26-character ULID)", excerpt(s))))
    }
}

named_enum! {
    /// The three memory types.
    pub enum MemoryKind ("memory type") {
        /// Facts about a concept.
        Semantic = "semantic",
        /// A timestamped interaction.
        Episodic = "episodic",
        /// A named procedure.
        Procedural = "procedural",
    }
}

named_enum! {
    /// The memory hierarchy's tiers.
    pub enum Tier ("tier") {
        /// Working memory: the current session's recent items.
        Short = "short",
        /// Recent, not yet consolidated.
        Medium = "medium",
        /// Persistent, consolidated.
        Long = "long",
    }
}

impl Tier {
    /// The tier a new memory of this kind starts in unless told otherwise.
    pub fn default_for(kind: MemoryKind) -> Tier {
        match kind {
            MemoryKind::Episodic => Tier::Short,
            MemoryKind::Semantic | MemoryKind::Procedural => Tier::Medium,
        }
    }
}

/// Whose memory this is: a user, optionally narrowed to an agent and a session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scope {
    /// The user the memory belongs to.
    pub user_id: String,
    /// The agent, when the memory is private to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The session the memory was made in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl Scope {
    /// The user id used when none is given.
    pub const DEFAULT_USER: &'static str = "default";

    /// A scope for a user with no agent or session.
    pub fn user(user_id: impl Into<String>) -> Self {
        Scope { user_id: user_id.into(), agent_id: None, session_id: None }
    }
}

impl Scope {
    /// Checks each name is at most [`MAX_NAME_BYTES`].
    pub fn validate(&self) -> Result<()> {
        longest("a user id", &self.user_id, MAX_NAME_BYTES)?;
        longest("an agent id", self.agent_id.as_deref().unwrap_or_default(), MAX_NAME_BYTES)?;
        longest("a session id", self.session_id.as_deref().unwrap_or_default(), MAX_NAME_BYTES)
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope::user(Scope::DEFAULT_USER)
    }
}

/// Where a memory came from: the app, and the provider and model when a model made it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Source {
    /// The application or client that wrote it (`cli`, `import`, `desktop`, an MCP client name).
    pub app: String,
    /// The model provider, when one was involved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model, when one was involved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Source {
    /// Checks each name is at most [`MAX_NAME_BYTES`].
    pub fn validate(&self) -> Result<()> {
        longest("a source's app", &self.app, MAX_NAME_BYTES)?;
        longest("a source's provider", self.provider.as_deref().unwrap_or_default(), MAX_NAME_BYTES)?;
        longest("a source's model", self.model.as_deref().unwrap_or_default(), MAX_NAME_BYTES)
    }

    /// A source that is just an application name.
    pub fn app(app: impl Into<String>) -> Self {
        Source { app: app.into(), provider: None, model: None }
    }
}

/// A fact's value: a string, a number, a boolean, a list or a nested group of facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "serde_json::Value")]
pub enum FactValue {
    /// Text.
    Text(String),
    /// A number, kept exactly as written (integers stay integers).
    Number(serde_json::Number),
    /// A yes/no value.
    Bool(bool),
    /// An ordered list.
    List(Vec<FactValue>),
    /// A nested group of named values.
    Group(Facts),
}

impl TryFrom<serde_json::Value> for FactValue {
    type Error = String;
    fn try_from(v: serde_json::Value) -> std::result::Result<Self, String> {
        use serde_json::Value;
        Ok(match v {
            Value::String(s) => FactValue::Text(s),
            Value::Number(n) => FactValue::Number(n),
            Value::Bool(b) => FactValue::Bool(b),
            Value::Array(items) => {
                FactValue::List(items.into_iter().map(FactValue::try_from).collect::<std::result::Result<_, _>>()?)
            }
            Value::Object(map) => FactValue::Group(
                map.into_iter()
                    .map(|(k, v)| FactValue::try_from(v).map(|v| (k, v)))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            Value::Null => {
                return Err("null is not a fact value (leave the field out instead)".into());
            }
        })
    }
}

/// The largest integer a JSON number read without its digits (a double) holds exactly: 2^53.
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Refuses a number a double could only round (a 30-digit integer reads as `1.2345…e29`): it
/// would be kept silently changed. Text keeps any digits.
fn exact(name: &str, value: &FactValue) -> Result<()> {
    match value {
        FactValue::Number(n) => {
            if !is_exact(n) {
                return Err(Error::invalid(format!(
                    "fact '{}': the number {n} is too large to keep exactly (a number is kept exactly up to \
                     9007199254740992); write it in quotes to keep its digits as text",
                    excerpt(name)
                )));
            }
            Ok(())
        }
        FactValue::List(items) => items.iter().try_for_each(|v| exact(name, v)),
        FactValue::Group(group) => group.iter().try_for_each(|(k, v)| exact(k, v)),
        _ => Ok(()),
    }
}

/// Whether `n` is kept as it was written: an integer a double could only round (at or past
/// 2^53, read as a double because it did not fit 64 bits) is not.
pub fn is_exact(n: &serde_json::Number) -> bool {
    if !n.is_f64() {
        return true;
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    x.is_finite() && !(x.fract() == 0.0 && x.abs() >= EXACT_INTEGER)
}

/// `text` as a number when it is one that reads back exactly as written (`42`, `-3.5`), else
/// `None`: a person's digits are kept as text rather than rounded
/// (`0.12345678901234567890123`) or rewritten (`3.50`, `1e3`).
pub fn number_as_written(text: &str) -> Option<serde_json::Number> {
    let n: serde_json::Number = serde_json::from_str(text.trim()).ok()?;
    (n.to_string() == text.trim() && is_exact(&n)).then_some(n)
}

/// A concept's facts: named values in the order they were given.
pub type Facts = IndexMap<String, FactValue>;

/// A semantic memory: a concept key and its facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concept {
    /// The concept key, e.g. `napoleon_bonaparte`.
    pub key: String,
    /// What is known about it.
    pub facts: Facts,
}

/// What was said in an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "snake_case")]
pub enum EpisodeBody {
    /// A query and the response to it.
    Exchange {
        /// What was asked.
        query: String,
        /// What was answered.
        response: String,
    },
    /// One utterance by one speaker.
    Utterance {
        /// Who spoke.
        speaker: String,
        /// What they said.
        text: String,
    },
}

/// An episodic memory: an interaction at a point in time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// When the interaction happened (not when it was recorded).
    pub occurred_at: DateTime<Utc>,
    /// What was said.
    pub body: EpisodeBody,
    /// Concept keys the episode refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concepts: Vec<String>,
    /// Other metadata that came with the episode (kept verbatim for lossless round trips).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub extra: IndexMap<String, serde_json::Value>,
}

/// A procedural memory: named, ordered steps and when to use them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Procedure {
    /// The procedure's name, e.g. `analyze_historical_figure`.
    pub name: String,
    /// The steps, in order.
    pub steps: Vec<String>,
    /// When or how to apply it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// A memory's content, one of the three types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Facts about a concept.
    Semantic(Concept),
    /// An interaction.
    Episodic(Episode),
    /// A procedure.
    Procedural(Procedure),
}

impl Content {
    /// This content's memory type.
    pub fn kind(&self) -> MemoryKind {
        match self {
            Content::Semantic(_) => MemoryKind::Semantic,
            Content::Episodic(_) => MemoryKind::Episodic,
            Content::Procedural(_) => MemoryKind::Procedural,
        }
    }

    /// The unique key within a scope: a concept key or a procedure name; episodes have none.
    pub fn key(&self) -> Option<&str> {
        match self {
            Content::Semantic(c) => Some(&c.key),
            Content::Procedural(p) => Some(&p.name),
            Content::Episodic(_) => None,
        }
    }

    /// Checks the content is well formed and within the [limits](MAX_CONTENT_BYTES).
    pub fn validate(&self) -> Result<()> {
        match self {
            Content::Semantic(c) => {
                key_ok("a concept key", &c.key)?;
                if c.facts.is_empty() {
                    return Err(Error::invalid(format!("concept '{}' has no facts", excerpt(&c.key))));
                }
                for (name, value) in &c.facts {
                    key_ok("a fact name", name)?;
                    exact(name, value)?;
                }
            }
            Content::Episodic(e) => {
                match &e.body {
                    EpisodeBody::Exchange { query, response } => {
                        if query.trim().is_empty() && response.trim().is_empty() {
                            return Err(Error::invalid("an episode needs a query or a response"));
                        }
                    }
                    EpisodeBody::Utterance { speaker, text } => {
                        key_ok("an utterance's speaker", speaker)?;
                        if text.trim().is_empty() {
                            return Err(Error::invalid("an utterance needs text"));
                        }
                    }
                }
                for concept in &e.concepts {
                    key_ok("a concept an episode refers to", concept)?;
                }
            }
            Content::Procedural(p) => {
                key_ok("a procedure name", &p.name)?;
                if p.steps.is_empty() || p.steps.iter().any(|s| s.trim().is_empty()) {
                    return Err(Error::invalid(format!("procedure '{}' needs non-empty steps", excerpt(&p.name))));
                }
            }
        }
        let bytes = self.stored_bytes();
        if bytes > MAX_CONTENT_BYTES {
            return Err(Error::invalid(format!(
                "this memory's content is {} KiB; a memory holds at most {} KiB (split it into several memories)",
                bytes.div_ceil(1024),
                MAX_CONTENT_BYTES / 1024
            )));
        }
        Ok(())
    }

    /// The bytes this content takes as stored (its JSON encoding).
    pub fn stored_bytes(&self) -> usize {
        struct Count(usize);
        impl std::io::Write for Count {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0 += buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut count = Count(0);
        // Writing plain structs with string keys to a counter cannot fail.
        let _ = serde_json::to_writer(&mut count, self);
        count.0
    }

    /// When the content happened: an episode's time; `None` for timeless content.
    pub fn occurred_at(&self) -> Option<DateTime<Utc>> {
        match self {
            Content::Episodic(e) => Some(e.occurred_at),
            _ => None,
        }
    }
}

/// A memory's importance, between 0 and 1.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Importance(f64);

impl Importance {
    /// The importance of a memory when none is given.
    pub const DEFAULT: Importance = Importance(0.5);

    /// Validates a value in `0.0..=1.0`.
    pub fn new(v: f64) -> Result<Self> {
        if v.is_finite() && (0.0..=1.0).contains(&v) {
            Ok(Importance(v))
        } else {
            Err(Error::invalid(format!("importance must be between 0 and 1, got {v}")))
        }
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl TryFrom<f64> for Importance {
    type Error = Error;
    fn try_from(v: f64) -> Result<Self> {
        Importance::new(v)
    }
}

impl From<Importance> for f64 {
    fn from(i: Importance) -> f64 {
        i.0
    }
}

fn key_ok(what: &str, k: &str) -> Result<()> {
    if k.trim().is_empty() {
        return Err(Error::invalid(format!("{what} must not be empty")));
    }
    longest(what, k, MAX_KEY_BYTES)
}

/// Refuses `value` when it is longer than `max` bytes, naming it by an excerpt.
fn longest(what: &str, value: &str, max: usize) -> Result<()> {
    if value.len() > max {
        return Err(Error::invalid(format!("{what} '{}' is longer than {max} bytes", excerpt(value))));
    }
    Ok(())
}

/// Trims `value` and checks it is not empty and at most `max` bytes.
fn trimmed(what: &str, value: &str, max: usize) -> Result<String> {
    let t = value.trim();
    if t.is_empty() {
        return Err(Error::invalid(format!("{what} must not be empty")));
    }
    longest(what, t, max)?;
    Ok(t.to_string())
}

/// Normalizes and checks a tag: trimmed, non-empty, at most [`MAX_TAG_BYTES`], no control
/// characters.
pub fn normalize_tag(tag: &str) -> Result<String> {
    let t = trimmed("a tag", tag, MAX_TAG_BYTES)?;
    if t.chars().any(char::is_control) {
        return Err(Error::invalid("a tag must not contain control characters"));
    }
    Ok(t)
}

/// Normalizes and checks a link's relation: trimmed, 1 to [`MAX_RELATION_BYTES`].
pub fn normalize_relation(relation: &str) -> Result<String> {
    trimmed("a link's relation", relation, MAX_RELATION_BYTES)
}

/// Normalizes and checks the reason a tier change or expiry records: trimmed, 1 to
/// [`MAX_REASON_BYTES`].
pub fn normalize_reason(reason: &str) -> Result<String> {
    trimmed("a tier change's reason", reason, MAX_REASON_BYTES)
}

/// A provenance link from one memory to another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Link {
    /// The memory linked to.
    pub target: MemoryId,
    /// How they relate, e.g. `derived_from`, `mentions`.
    pub relation: String,
}

/// A memory as the projections hold it: content plus its bookkeeping.
#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    /// Stable id.
    pub id: MemoryId,
    /// Whose memory it is.
    pub scope: Scope,
    /// What it says.
    pub content: Content,
    /// Tags, sorted.
    pub tags: BTreeSet<String>,
    /// How much it matters.
    pub importance: Importance,
    /// Where in the hierarchy it sits.
    pub tier: Tier,
    /// Who or what made it.
    pub source: Source,
    /// Outgoing provenance links, sorted.
    pub links: BTreeSet<Link>,
    /// When it was recorded.
    pub created_at: DateTime<Utc>,
    /// When its content, tags, importance or tier last changed.
    pub updated_at: DateTime<Utc>,
    /// The version of its event stream (number of events applied).
    pub version: u64,
    /// How often it has been retrieved.
    pub access_count: u64,
    /// When it was last retrieved.
    pub last_accessed_at: Option<DateTime<Utc>>,
    /// Pinned by a person: tier maintenance never moves it down.
    pub pinned: bool,
    /// When maintenance expired it (hidden from recall, not deleted); cleared when revived.
    pub expired_at: Option<DateTime<Utc>>,
}

impl Memory {
    /// A memory as it is when first created at `at`: importance and tier by default, no tags
    /// or links, never accessed, at version 1.
    pub fn new(id: MemoryId, scope: Scope, content: Content, source: Source, at: DateTime<Utc>) -> Memory {
        Memory {
            id,
            scope,
            tier: Tier::default_for(content.kind()),
            content,
            tags: BTreeSet::new(),
            importance: Importance::DEFAULT,
            source,
            links: BTreeSet::new(),
            created_at: at,
            updated_at: at,
            version: 1,
            access_count: 0,
            last_accessed_at: None,
            pinned: false,
            expired_at: None,
        }
    }

    /// This memory's type.
    pub fn kind(&self) -> MemoryKind {
        self.content.kind()
    }

    /// The time the memory is about: an episode's time, otherwise its creation.
    pub fn occurred_at(&self) -> DateTime<Utc> {
        self.content.occurred_at().unwrap_or(self.created_at)
    }
}

/// The text the full-text index holds for a memory: a title and a body.
pub fn search_text(content: &Content) -> (String, String) {
    match content {
        Content::Semantic(c) => (c.key.replace('_', " "), facts_text(&c.facts)),
        Content::Episodic(e) => match &e.body {
            EpisodeBody::Exchange { query, response } => (query.clone(), response.clone()),
            EpisodeBody::Utterance { speaker, text } => (speaker.clone(), text.clone()),
        },
        Content::Procedural(p) => {
            let mut body = p.steps.join("\n");
            if let Some(c) = &p.context {
                body.push('\n');
                body.push_str(c);
            }
            (p.name.replace('_', " "), body)
        }
    }
}

fn facts_text(facts: &Facts) -> String {
    let mut out = String::new();
    for (name, value) in facts {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&name.replace('_', " "));
        out.push_str(": ");
        value_text(value, &mut out);
    }
    out
}

fn value_text(v: &FactValue, out: &mut String) {
    match v {
        FactValue::Text(s) => out.push_str(s),
        FactValue::Number(n) => out.push_str(&n.to_string()),
        FactValue::Bool(b) => out.push_str(if *b { "yes" } else { "no" }),
        FactValue::List(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                value_text(item, out);
            }
        }
        FactValue::Group(g) => {
            out.push('(');
            out.push_str(&facts_text(g).replace('\n', "; "));
            out.push(')');
        }
    }
}
