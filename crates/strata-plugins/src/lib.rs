//! One registry of everything pluggable in Strata (seed 000's `PluginManager`): storage
//! engines, token counters, embedders, chat models, dataset loaders and tools — Strata's own
//! registered the same way as the person's ([`list`]), each said ready, missing or broken with
//! why ([`check`]). The code that opens the embedder and a chat model reads the registry
//! ([`open`]): one place. Plugins from outside run out of process: endpoints are called over
//! HTTP, MCP servers are other programs, tokenizer files are data; no code is loaded.
#![deny(missing_docs)]

pub mod check;
pub mod mcp_datasets;
pub mod open;
mod registry;
pub mod switch;

use serde::{Deserialize, Serialize};
pub use strata_api::plugins::{PersonPlugin, PluginKind};

pub use check::check;
pub use registry::{Sources, list};

/// One entry of the registry, as the CLI and Settings → Plugins show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PluginView {
    /// What it is for.
    pub kind: PluginKind,
    /// Its name (unique within its kind; what the pickers take).
    pub name: String,
    /// Where it comes from: "built in", "Ollama at …", "MCP server (npx …)", "file …".
    pub source: String,
    /// A line about it (a model's size, the formats a loader reads…).
    pub detail: String,
    /// One of the person's (they may remove it); Strata's own otherwise.
    pub added: bool,
    /// It is the one in use (the embedder recall uses).
    pub in_use: bool,
    /// `ready`, `missing` (a model not fetched, a key not given), `broken`, or `unchecked` (an
    /// endpoint or a server: `check` calls it).
    pub state: String,
    /// Why it is missing or broken, and what to do; empty when ready.
    pub why: String,
}

impl PluginView {
    fn new(kind: PluginKind, name: &str, source: &str, detail: impl Into<String>) -> PluginView {
        PluginView {
            kind,
            name: name.to_string(),
            source: source.to_string(),
            detail: detail.into(),
            added: false,
            in_use: false,
            state: READY.into(),
            why: String::new(),
        }
    }

    fn with_state(mut self, state: &str, why: impl Into<String>) -> PluginView {
        self.state = state.into();
        self.why = why.into();
        self
    }
}

/// Works now.
pub const READY: &str = "ready";
/// Absent: a model not fetched, a key not given.
pub const MISSING: &str = "missing";
/// Tried, and failed; `why` says how.
pub const BROKEN: &str = "broken";
/// Not tried by a listing (it would call a server or start a program).
pub const UNCHECKED: &str = "unchecked";
