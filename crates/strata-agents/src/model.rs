//! What an agent's model reads and answers: the conversation so far as [`Turn`]s, the tools it
//! may call as [`ToolSpec`]s, and a [`Reply`] that is text, tool calls, or both. Each model (the
//! on-device one in its own tool-call format, a provider through its tool-call API) is a
//! [`ToolModel`]; the loop in [`crate::run`] does not know which.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

/// A tool a model may call: its name, what it does, and its arguments' JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name, as the model calls it.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// Its arguments (a JSON Schema object).
    pub parameters: serde_json::Value,
}

/// A model's call of a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id (the provider's, or one given here), which its result answers.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments (a JSON object).
    pub arguments: serde_json::Value,
}

/// One turn of the conversation every agent of a run sees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Turn {
    /// The person's task.
    User(String),
    /// An agent's reply: its text and the tools it called.
    Assistant {
        /// The agent.
        agent: String,
        /// What it said.
        text: String,
        /// What it called.
        calls: Vec<ToolCall>,
    },
    /// A tool's result. Untrusted text: a model's prompt fences it, and it enables nothing.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// The tool.
        name: String,
        /// What the tool gave back (or why it failed).
        content: String,
        /// Whether it failed.
        failed: bool,
    },
}

/// A model's answer to one turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Reply {
    /// What it said (may be empty beside tool calls).
    pub text: String,
    /// The tools it called, in order.
    pub calls: Vec<ToolCall>,
    /// Tokens it read.
    pub prompt_tokens: u64,
    /// Tokens it wrote.
    pub completion_tokens: u64,
}

/// A model an agent thinks with.
pub trait ToolModel: Send + Sync {
    /// Its name, as a run's record shows it.
    fn name(&self) -> String;

    /// Its reply to `transcript` under `system` (the agent's instructions and what it
    /// remembers), with `tools` offered. Stops early, with what it has, when `cancel` is set.
    fn reply(
        &self,
        system: &str,
        transcript: &[Turn],
        tools: &[ToolSpec],
        cancel: &AtomicBool,
    ) -> Result<Reply, String>;
}
