//! Agents that remember (issue 43): a person's agents, kept in their store
//! ([`strata_api::agents`]), run by [`run::run`] over their memory and their tools, handing a
//! task to one another, every step recorded.
//!
//! - [`model`]: what a model reads and answers ([`ToolModel`]); each model's own tool-call
//!   format lives with the model.
//! - [`tools`]: memory within the agent's scope, and handoffs.
//! - [`datasets`]: the person's datasets, searched and queried.
//! - [`external`]: tools from outside Strata (the person's MCP servers), under their policies.
//! - [`run`]: the loop, its step limit and Cancel.
#![deny(missing_docs)]

pub mod datasets;
pub mod external;
pub mod model;
pub mod run;
pub mod tools;

pub use external::{ExternalTools, McpTools, NoTools};
pub use model::{ChatTools, Reply, ToolCall, ToolModel, ToolSpec, Turn};
pub use run::{AgentModels, DEFAULT_MAX_STEPS, Means, Models, RunReport, run, run_with};
