//! The on-device model calling tools in Qwen2.5's own format, as its chat template writes it:
//! the tools as JSON lines in a `<tools>` block of the system turn, each call as
//! `<tool_call>{"name": …, "arguments": …}</tool_call>` (special tokens of its vocabulary), the
//! results as `<tool_response>` blocks of one user turn, in the order of the calls.
//!
//! A reply is held by a grammar (llguidance) to either plain text or one call of a tool
//! offered, its arguments to that tool's JSON Schema: a call always parses and names a tool
//! that exists. Measured here: Qwen2.5-Coder 0.5B and 1.5B, offered tools, describe the call in
//! prose or a JSON block rather than making it; held to a call (`must_call`) they make one whose
//! arguments fit, and the 1.5B picks the tool a task asks for. So the caller asks for a call
//! where one is due (an agent's first step on a task). Left free, the 1.5B added calls after
//! the first: one call a reply. Text in a turn is encoded as text: it cannot forge a call marker
//! (the markers go in as token ids, never from what a person or a tool wrote).

use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use strata_core::{Error, Result};

use strata_core::{ChatError, ChatErrorKind, ChatRequest, ChatResponse, Message, Role, ToolCall, Usage};

use super::{DEFAULT_SYSTEM, Finish, LocalChat, Sampling};

/// A tool offered to the model.
#[derive(Debug, Clone, Copy)]
pub struct ToolDef<'a> {
    /// Its name.
    pub name: &'a str,
    /// What it does.
    pub description: &'a str,
    /// Its arguments' JSON Schema (an object).
    pub parameters: &'a Value,
}

/// A turn of a conversation with tools.
#[derive(Debug, Clone)]
pub enum ToolTurn<'a> {
    /// The person's message.
    User(&'a str),
    /// The model's earlier reply: its text and the calls it made (name, arguments).
    Assistant {
        /// What it said.
        text: &'a str,
        /// The calls.
        calls: Vec<(&'a str, &'a Value)>,
    },
    /// The results of the calls before, in their order.
    Results(Vec<&'a str>),
}

/// The model's reply: text, or the calls it makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// What it said (empty when it called tools).
    pub text: String,
    /// The calls, in order: each tool's name and its arguments.
    pub calls: Vec<(String, Value)>,
    /// Tokens read.
    pub prompt_tokens: usize,
    /// Tokens written.
    pub completion_tokens: usize,
    /// Why it stopped.
    pub finish: Finish,
}

/// What the system turn says after the instructions, as Qwen2.5's template words it.
const TOOLS_INTRO: &str = "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
     You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const TOOLS_OUTRO: &str = "\n</tools>\n\nFor each function call, return a json object with function name and \
     arguments within <tool_call></tool_call> XML tags:\n";

impl LocalChat {
    /// The ids of `<tool_call>` and `</tool_call>` where this model's vocabulary has them
    /// (Qwen2.5's; SmolLM2 has none, and calls no tools).
    fn call_markers(&self) -> Option<(u32, u32)> {
        let id = |t: &str| self.text.token_to_id(t);
        Some((id("<tool_call>")?, id("</tool_call>")?))
    }

    /// Whether this model calls tools.
    pub fn calls_tools(&self) -> bool {
        self.call_markers().is_some()
    }

    /// `text` as ids, the markers Qwen's template writes (`<tool_call>`, `<tool_response>` and
    /// their ends) as their special tokens where the vocabulary has them. Only for the
    /// template's own words: a message's text goes through [`LocalChat::encode`].
    fn template(&self, text: &str) -> Result<Vec<u32>> {
        const MARKERS: [&str; 4] = ["</tool_response>", "<tool_response>", "</tool_call>", "<tool_call>"];
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let next = MARKERS.iter().filter_map(|m| rest.find(m).map(|at| (at, *m))).min();
            let Some((at, marker)) = next else { break };
            ids.extend(self.encode(&rest[..at])?);
            match self.text.token_to_id(marker) {
                Some(id) => ids.push(id),
                None => ids.extend(self.encode(marker)?),
            }
            rest = &rest[at + marker.len()..];
        }
        ids.extend(self.encode(rest)?);
        Ok(ids)
    }

    /// The prompt's ids: the system turn with the tools, then each turn as the template writes
    /// it, then the assistant's turn to come.
    pub fn tool_prompt_ids(&self, system: &str, turns: &[ToolTurn], tools: &[ToolDef]) -> Result<Vec<u32>> {
        let mut ids = vec![self.im_start];
        ids.extend(self.encode(&format!("system\n{system}"))?);
        if !tools.is_empty() {
            let mut block = TOOLS_INTRO.to_string();
            for t in tools {
                let f = json!({"type": "function", "function":
                    {"name": t.name, "description": t.description, "parameters": t.parameters}});
                block.push('\n');
                block.push_str(&f.to_string());
            }
            ids.extend(self.encode(&block)?);
            ids.extend(self.template(TOOLS_OUTRO)?);
            ids.extend(self.template(
                "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
            )?);
        }
        ids.push(self.im_end);
        ids.extend(self.encode("\n")?);
        for turn in turns {
            ids.push(self.im_start);
            match turn {
                ToolTurn::User(text) => ids.extend(self.encode(&format!("user\n{text}"))?),
                ToolTurn::Assistant { text, calls } => {
                    ids.extend(self.encode("assistant")?);
                    if !text.is_empty() {
                        ids.extend(self.encode(&format!("\n{text}"))?);
                    }
                    for (name, arguments) in calls {
                        ids.extend(self.encode("\n")?);
                        ids.extend(self.template("<tool_call>")?);
                        ids.extend(self.encode(&format!("\n{}\n", json!({"name": name, "arguments": arguments})))?);
                        ids.extend(self.template("</tool_call>")?);
                    }
                }
                ToolTurn::Results(results) => {
                    ids.extend(self.encode("user")?);
                    for r in results {
                        ids.extend(self.encode("\n")?);
                        ids.extend(self.template("<tool_response>")?);
                        ids.extend(self.encode(&format!("\n{r}\n"))?);
                        ids.extend(self.template("</tool_response>")?);
                    }
                }
            }
            ids.push(self.im_end);
            ids.extend(self.encode("\n")?);
        }
        ids.push(self.im_start);
        ids.extend(self.encode("assistant\n")?);
        Ok(ids)
    }

    /// The grammar of a reply: text, or calls of `tools`, each held to its arguments' schema
    /// (`must_call`: calls only).
    fn reply_grammar(&self, tools: &[ToolDef], must_call: bool) -> Result<String> {
        let (open, close) = self.call_markers().ok_or_else(|| {
            Error::invalid(format!("{} cannot call tools: choose a Qwen2.5 model for agents", self.name))
        })?;
        let calls: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"type": "object", "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                    "required": ["name", "arguments"], "additionalProperties": false})
            })
            .collect();
        let schema = json!({"anyOf": calls});
        let start = if must_call { "calls" } else { "TEXT | calls" };
        Ok(format!(
            "start: {start}\ncalls: call\ncall: <[{open}]> \"\\n\" %json {schema} \"\\n\" <[{close}]>\n\
             TEXT: /(.|\\n)+/\n"
        ))
    }

    /// The model's reply to `turns` under `system`, with `tools` offered: text, or calls that
    /// parse and name tools offered (`must_call`: calls only). Without tools it answers in text.
    pub fn generate_with_tools(
        &self,
        system: &str,
        turns: &[ToolTurn],
        tools: &[ToolDef],
        must_call: bool,
        sampling: Sampling,
        cancel: &AtomicBool,
    ) -> Result<ToolReply> {
        let prompt = self.tool_prompt_ids(system, turns, tools)?;
        let constrained = match tools.is_empty() {
            true => None,
            false => Some(self.grammars()?.for_lark(&self.reply_grammar(tools, must_call)?)?),
        };
        let g = self.generate_under(prompt, sampling, constrained, &mut |_| {}, cancel)?;
        let calls = match self.call_markers() {
            Some((open, close)) => self.calls_in(&g.tokens, open, close)?,
            None => Vec::new(),
        };
        if calls.is_empty() && g.finish == Finish::Length && must_call {
            return Err(Error::Model(format!(
                "{} wrote a call longer than {} tokens; it was cut short",
                self.name, sampling.max_tokens
            )));
        }
        let text = if calls.is_empty() { g.text.trim().to_string() } else { String::new() };
        Ok(ToolReply {
            text,
            calls,
            prompt_tokens: g.prompt_tokens,
            completion_tokens: g.completion_tokens,
            finish: g.finish,
        })
    }

    /// The whole calls among `tokens` (a call cut short by the token limit is left out).
    fn calls_in(&self, tokens: &[u32], open: u32, close: u32) -> Result<Vec<(String, Value)>> {
        let mut calls = Vec::new();
        let mut rest = tokens;
        while let Some(start) = rest.iter().position(|&t| t == open) {
            let Some(len) = rest[start + 1..].iter().position(|&t| t == close) else { break };
            let body = &rest[start + 1..start + 1 + len];
            let text = self.text.decode(body, true).map_err(|e| Error::Model(format!("{}: {e}", self.name)))?;
            let call: Value = serde_json::from_str(text.trim())
                .map_err(|e| Error::Model(format!("{} wrote a tool call that does not parse: {e}", self.name)))?;
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
            calls.push((name, call.get("arguments").cloned().unwrap_or_else(|| json!({}))));
            rest = &rest[start + 2 + len..];
        }
        Ok(calls)
    }
}

/// [`strata_core::ChatModel::chat`] of a request with tools: its messages as the template's
/// turns (a later system message goes into the next user turn; tool messages in a row are one
/// turn of results), the reply's calls as the response's.
pub(super) fn chat_with_tools(
    chat: &LocalChat,
    request: &ChatRequest,
    sampling: Sampling,
    cancel: &AtomicBool,
) -> std::result::Result<ChatResponse, ChatError> {
    let messages = &request.messages;
    let (system, rest) = match messages.split_first() {
        Some((m, rest)) if m.role == Role::System => (m.content.as_str(), rest),
        _ => (DEFAULT_SYSTEM, &messages[..]),
    };
    let arguments: Vec<Vec<Value>> = rest
        .iter()
        .map(|m| {
            m.tool_calls.iter().map(|c| serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}))).collect()
        })
        .collect();
    let folded: Vec<String> = fold_system(rest);
    let mut turns: Vec<ToolTurn> = Vec::new();
    for (i, m) in rest.iter().enumerate() {
        match m.role {
            // Carried into the user turn that follows it.
            Role::System if rest.get(i + 1).is_some_and(|n| n.role == Role::User) => {}
            Role::User | Role::System => turns.push(ToolTurn::User(&folded[i])),
            Role::Assistant => turns.push(ToolTurn::Assistant {
                text: &m.content,
                calls: m.tool_calls.iter().zip(&arguments[i]).map(|(c, a)| (c.name.as_str(), a)).collect(),
            }),
            Role::Tool => match turns.last_mut() {
                Some(ToolTurn::Results(r)) => r.push(&m.content),
                _ => turns.push(ToolTurn::Results(vec![&m.content])),
            },
        }
    }
    let defs: Vec<ToolDef> = request
        .tools
        .iter()
        .map(|t| ToolDef { name: &t.name, description: &t.description, parameters: &t.parameters })
        .collect();
    let reply =
        chat.generate_with_tools(system, &turns, &defs, request.tool_required, sampling, cancel).map_err(|e| {
            let kind =
                if matches!(e, Error::Invalid(_)) { ChatErrorKind::ContextTooLong } else { ChatErrorKind::Server };
            ChatError::new(kind, e.to_string())
        })?;
    let tool_calls = reply
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall { id: format!("call_{i}"), name, arguments: args.to_string() })
        .collect();
    Ok(ChatResponse {
        content: reply.text,
        tool_calls,
        usage: Usage { prompt_tokens: reply.prompt_tokens as u32, completion_tokens: reply.completion_tokens as u32 },
        finish: match reply.finish {
            Finish::Stop => "stop",
            Finish::Length => "length",
            Finish::Cancelled => "cancelled",
        }
        .to_string(),
        logprobs: Vec::new(),
        adapter: None,
    })
}

/// Each message's text as its turn reads it: a system message after the first is carried into
/// the user turn that follows it (the small model follows its user turn far better).
fn fold_system(messages: &[Message]) -> Vec<String> {
    let mut carried: Option<&str> = None;
    messages
        .iter()
        .map(|m| match m.role {
            Role::System => {
                carried = Some(&m.content);
                m.content.clone()
            }
            Role::User => match carried.take() {
                Some(c) => format!("{c}\n\n{}", m.content),
                None => m.content.clone(),
            },
            _ => m.content.clone(),
        })
        .collect()
}
