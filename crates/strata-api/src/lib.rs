//! Strata's one front door. The CLI, the MCP server, the desktop app and tests all call the
//! [`Engine`]; it speaks in boundary types ([`dto`]) and closed error codes ([`ApiError`]).
#![deny(missing_docs)]

mod adapters;
pub mod agents;
pub mod analytics;
pub mod answer_check;
pub mod ask;
pub mod bulk;
pub mod changes;
pub mod compact;
pub mod concept_writer;
pub mod context;
pub mod conversations;
pub mod curation;
pub mod datasets;
mod demo;
pub mod dto;
pub mod embedding;
mod engine;
mod error;
pub mod extract;
pub mod forms;
pub mod graph;
pub mod health;
pub mod history;
mod interchange;
pub mod migrate;
pub mod monitor;
pub mod on_device;
pub mod people;
pub mod plugins;
mod ranking;
pub mod schedule;
mod search;
pub mod settings;
#[cfg(feature = "specta")]
pub mod shapes;
pub mod table_question;

pub use ask::{
    AskParams, AskView, ChatTurnView, ComparedView, ConceptUseView, FilePassageView, InjectedView, PromptView,
};
pub use compact::{CompactParams, CompactReport, ConceptView, ExpandedConcept, SentenceView};
pub use concept_writer::{WriteParams, WriteReport};
pub use context::{ContextParams, ContextSettings, ContextView};
pub use conversations::{ConversationTurnView, ConversationView, KeptPromptView};
pub use datasets::{DatasetLoaded, PassagesEmbedded};
pub use engine::ForgetReport;
pub use engine::{AddRequest, Engine, EngineOptions, ReplayReport, Target, UpdateRequest, flush_periodically};
pub use error::{ApiError, ApiResult, ErrorCode};
pub use extract::{DecisionView, DocumentView, ExtractParams, ExtractReport, Extractor, FactView, Review};
pub use history::HistoryReport;
pub use interchange::{ImportFormat, ImportOptions, ImportReport};
pub use people::{Caller, Gate, NewPerson, Refusal};
pub use ranking::Ranking;
pub use settings::{ChatChoice, ExtractionSettings, OnDeviceSettings, Settings};
pub use table_question::TableAnswer;
