//! What an agent's model reads and answers: the conversation so far as [`Turn`]s, the tools it
//! may call as [`ToolSpec`]s, and a [`Reply`] that is text, tool calls, or both. Each model (the
//! on-device one in its own tool-call format, a provider through its tool-call API) is a
//! [`ToolModel`]; the loop in [`crate::run`] does not know which.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

pub use strata_core::ToolSpec;

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

/// Any of Strata's chat models as an agent's model: the on-device one (in its own tool-call
/// format) and the providers (through their tool-call APIs). Tool results go to it fenced, as
/// memories are. On the on-device model a call is required where one is due (the task just
/// given, or just handed over): offered tools, the small models describe a call rather than
/// make it (strata-models' `local_chat/tools.rs`); after a result it answers with no tools
/// offered (offered them again, it wrote further calls as text: docs/benchmarks.md, "Agents");
/// and a handoff's call and result are left out of its prompt.
pub struct ChatTools(pub Arc<dyn strata_core::ChatModel>);

impl ToolModel for ChatTools {
    fn name(&self) -> String {
        format!("{}:{}", self.0.provider(), self.0.model())
    }

    fn reply(
        &self,
        system: &str,
        transcript: &[Turn],
        tools: &[ToolSpec],
        cancel: &AtomicBool,
    ) -> Result<Reply, String> {
        use strata_core::{ChatRequest, Message, Role};
        let due = match transcript.last() {
            Some(Turn::User(_)) => true,
            Some(Turn::ToolResult { content, .. }) => content.starts_with("{\"assistant\":"),
            _ => false,
        };
        let on_device = self.0.provider() == "on-device";
        let mut messages = vec![Message::system(system)];
        // On-device, a handoff's call and its result are left out: the small models read the
        // task after another agent's chatter worse than the task alone (docs/benchmarks.md).
        let shown = transcript.iter().filter(|t| !(on_device && is_handoff(t)));
        for turn in shown {
            messages.push(match turn {
                Turn::User(text) => Message::user(text.clone()),
                Turn::Assistant { text, calls, .. } => Message {
                    role: Role::Assistant,
                    content: text.clone(),
                    tool_calls: calls
                        .iter()
                        .map(|c| strata_core::ToolCall {
                            id: c.id.clone(),
                            name: c.name.clone(),
                            arguments: c.arguments.to_string(),
                        })
                        .collect(),
                    tool_call_id: None,
                },
                Turn::ToolResult { call_id, content, .. } => Message {
                    role: Role::Tool,
                    content: strata_core::fence::fence(content),
                    tool_calls: vec![],
                    tool_call_id: Some(call_id.clone()),
                },
            });
        }
        // On-device, after a tool's result the model answers in words (offered tools again,
        // the small models write further calls as text instead of answering).
        let offered = if on_device && !due { Vec::new() } else { tools.to_vec() };
        let request = ChatRequest {
            messages,
            tools: offered,
            tool_required: due && !tools.is_empty() && on_device,
            max_tokens: Some(REPLY_TOKENS),
            temperature: Some(0.0),
            ..ChatRequest::default()
        };
        let r = self.0.chat(&request, &mut |_| {}, cancel).map_err(|e| e.to_string())?;
        let calls = r
            .tool_calls
            .into_iter()
            .map(|c| ToolCall {
                id: c.id,
                name: c.name,
                arguments: serde_json::from_str(&c.arguments).unwrap_or(serde_json::Value::Null),
            })
            .collect();
        Ok(Reply {
            text: r.content,
            calls,
            prompt_tokens: r.usage.prompt_tokens.into(),
            completion_tokens: r.usage.completion_tokens.into(),
        })
    }
}

/// Whether `turn` is a handoff: a reply whose calls all hand the task on, or a handoff's result.
fn is_handoff(turn: &Turn) -> bool {
    match turn {
        Turn::Assistant { calls, text, .. } => {
            !calls.is_empty() && text.trim().is_empty() && calls.iter().all(|c| c.name.starts_with("transfer_to_"))
        }
        Turn::ToolResult { content, .. } => content.starts_with("{\"assistant\":"),
        Turn::User(_) => false,
    }
}

/// The most tokens an agent's reply may take.
const REPLY_TOKENS: u32 = 400;
