//! A person's history from other tools, read into conversations of dated turns: ChatGPT's
//! export (`conversations.json`: each conversation a tree of messages, of which the branch
//! that was shown runs from `current_node` back to the root), Claude's export
//! (`conversations.json`, each conversation's messages in order), and mem0's memories (the
//! list its `get_all` returns). Reading is all or nothing: a damaged file is refused naming
//! the file, the conversation and the problem, before anything is written.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, TimeZone, Utc};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::interchange::json::parse_in;
use crate::model::EpisodeBody;

/// Where a conversation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatSource {
    /// ChatGPT's data export.
    ChatGpt,
    /// Claude's data export.
    Claude,
}

impl ChatSource {
    /// Its name in sessions and episodes ("chatgpt", "claude").
    pub fn as_str(self) -> &'static str {
        match self {
            ChatSource::ChatGpt => "chatgpt",
            ChatSource::Claude => "claude",
        }
    }
}

/// One turn as Strata keeps it: a question with its answer (an exchange), or what one side
/// said alone.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTurn {
    /// When it was said.
    pub at: DateTime<Utc>,
    /// What was said.
    pub body: EpisodeBody,
    /// The export's id of its first message (re-importing skips turns already kept).
    pub message_id: String,
}

/// A conversation of another tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedConversation {
    /// The tool.
    pub source: ChatSource,
    /// Its id there.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its turns, in order.
    pub turns: Vec<ImportedTurn>,
}

impl ImportedConversation {
    /// The session its turns are kept in.
    pub fn session(&self) -> String {
        format!("{}-{}", self.source.as_str(), self.id)
    }
}

/// A message before pairing: who, what, when, its id.
struct Said {
    user: bool,
    text: String,
    at: DateTime<Utc>,
    id: String,
}

/// Pairs each question with the answer that follows it; what has no partner stands alone.
fn pair(said: Vec<Said>) -> Vec<ImportedTurn> {
    let mut turns = Vec::new();
    let mut it = said.into_iter().peekable();
    while let Some(s) = it.next() {
        if s.user
            && let Some(answer) = it.next_if(|n| !n.user)
        {
            turns.push(ImportedTurn {
                at: s.at,
                body: EpisodeBody::Exchange { query: s.text, response: answer.text },
                message_id: s.id,
            });
            continue;
        }
        let speaker = if s.user { "user" } else { "assistant" }.to_string();
        turns.push(ImportedTurn { at: s.at, body: EpisodeBody::Utterance { speaker, text: s.text }, message_id: s.id });
    }
    turns
}

fn damaged(file: &str, n: usize, title: &str, problem: impl std::fmt::Display) -> Error {
    Error::bad_import(file, 1, format!("conversation {n} (“{}”): {problem}", crate::error::excerpt(title)))
}

fn from_seconds(secs: f64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt((secs * 1000.0).round() as i64).single()
}

#[derive(Deserialize)]
struct GptConversation {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
    mapping: HashMap<String, GptNode>,
    current_node: Option<String>,
}

#[derive(Deserialize)]
struct GptNode {
    #[serde(default)]
    message: Option<GptMessage>,
    #[serde(default)]
    parent: Option<String>,
}

#[derive(Deserialize)]
struct GptMessage {
    id: String,
    author: GptAuthor,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    content: Option<GptContent>,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct GptAuthor {
    role: String,
}

#[derive(Deserialize)]
struct GptContent {
    #[serde(default)]
    content_type: Option<String>,
    #[serde(default)]
    parts: Vec<serde_json::Value>,
}

/// ChatGPT's `conversations.json`: the branch shown, from `current_node` back to the root;
/// the person's and the assistant's text messages (system, tool and hidden ones left out).
pub fn read_chatgpt(file: &str, text: &str) -> Result<Vec<ImportedConversation>> {
    let all: Vec<GptConversation> = parse_in(file, 1, text)?;
    let mut out = Vec::new();
    for (i, c) in all.into_iter().enumerate() {
        let n = i + 1;
        let title = c.title.clone().unwrap_or_else(|| "untitled".into());
        let id = c.conversation_id.clone().or(c.id.clone()).ok_or_else(|| damaged(file, n, &title, "it has no id"))?;
        let start = c.create_time.and_then(from_seconds).ok_or_else(|| damaged(file, n, &title, "it has no time"))?;
        let Some(mut at) = c.current_node.clone() else {
            return Err(damaged(file, n, &title, "it has no current node (the branch that was shown)"));
        };
        let mut branch = Vec::new();
        let mut seen = HashSet::new();
        loop {
            if !seen.insert(at.clone()) {
                return Err(damaged(file, n, &title, format!("its messages loop back at {at}")));
            }
            let node =
                c.mapping.get(&at).ok_or_else(|| damaged(file, n, &title, format!("message {at} is missing")))?;
            if let Some(m) = &node.message {
                branch.push(m);
            }
            match &node.parent {
                Some(parent) => at = parent.clone(),
                None => break,
            }
        }
        branch.reverse();
        let mut said = Vec::new();
        for m in branch {
            let hidden = m.metadata.as_ref().and_then(|v| v.get("is_visually_hidden_from_conversation"))
                == Some(&serde_json::Value::Bool(true));
            let user = match m.author.role.as_str() {
                "user" => true,
                "assistant" => false,
                _ => continue,
            };
            let Some(content) = &m.content else { continue };
            if hidden || !matches!(content.content_type.as_deref(), Some("text" | "multimodal_text") | None) {
                continue;
            }
            let text: Vec<&str> = content.parts.iter().filter_map(|p| p.as_str()).collect();
            let text = text.join("\n").trim().to_string();
            if text.is_empty() {
                continue;
            }
            let at = m.create_time.and_then(from_seconds).unwrap_or(start);
            said.push(Said { user, text, at, id: m.id.clone() });
        }
        out.push(ImportedConversation { source: ChatSource::ChatGpt, id, title, turns: pair(said) });
    }
    Ok(out)
}

#[derive(Deserialize)]
struct ClaudeConversation {
    uuid: String,
    #[serde(default)]
    name: Option<String>,
    created_at: String,
    #[serde(default)]
    chat_messages: Vec<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    uuid: String,
    sender: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    content: Vec<serde_json::Value>,
    created_at: String,
}

fn parse_at(file: &str, n: usize, title: &str, at: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(at)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| damaged(file, n, title, format!("its time {at:?} is not a date ({e})")))
}

/// Claude's `conversations.json`: each conversation's messages in order, the person's
/// ("human") and Claude's.
pub fn read_claude(file: &str, text: &str) -> Result<Vec<ImportedConversation>> {
    let all: Vec<ClaudeConversation> = parse_in(file, 1, text)?;
    let mut out = Vec::new();
    for (i, c) in all.into_iter().enumerate() {
        let n = i + 1;
        let title = c.name.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| "untitled".into());
        parse_at(file, n, &title, &c.created_at)?;
        let mut said = Vec::new();
        for m in &c.chat_messages {
            let user = match m.sender.as_str() {
                "human" => true,
                "assistant" => false,
                other => {
                    return Err(damaged(
                        file,
                        n,
                        &title,
                        format!("a message from {other:?}, neither human nor assistant"),
                    ));
                }
            };
            let from_parts: Vec<&str> = m
                .content
                .iter()
                .filter(|p| p.get("type").and_then(|t| t.as_str()) == Some("text"))
                .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                .collect();
            let text = match &m.text {
                Some(t) if !t.trim().is_empty() => t.trim().to_string(),
                _ => from_parts.join("\n").trim().to_string(),
            };
            if text.is_empty() {
                continue;
            }
            said.push(Said { user, text, at: parse_at(file, n, &title, &m.created_at)?, id: m.uuid.clone() });
        }
        out.push(ImportedConversation { source: ChatSource::Claude, id: c.uuid, title, turns: pair(said) });
    }
    Ok(out)
}

/// One of mem0's memories.
#[derive(Debug, Clone, PartialEq)]
pub struct Mem0Memory {
    /// Its id in mem0.
    pub id: String,
    /// What it says.
    pub text: String,
    /// When mem0 made it.
    pub created_at: Option<DateTime<Utc>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Mem0Export {
    Wrapped { results: Vec<Mem0Item> },
    List(Vec<Mem0Item>),
}

#[derive(Deserialize)]
struct Mem0Item {
    id: String,
    memory: String,
    #[serde(default)]
    created_at: Option<String>,
}

/// mem0's `get_all` (`{"results": [...]}`, or the list alone).
pub fn read_mem0(file: &str, text: &str) -> Result<Vec<Mem0Memory>> {
    let export: Mem0Export = parse_in(file, 1, text)?;
    let items = match export {
        Mem0Export::Wrapped { results } | Mem0Export::List(results) => results,
    };
    let mut seen = std::collections::HashMap::new();
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            if m.memory.trim().is_empty() {
                return Err(Error::bad_import(file, 1, format!("memory {} ({}) is empty", i + 1, m.id)));
            }
            // One id is one memory: two with the same id would be kept once, and which one is a
            // guess.
            if let Some(first) = seen.insert(m.id.clone(), i + 1) {
                return Err(Error::bad_import(
                    file,
                    1,
                    format!("memories {first} and {} have the same id ({}): one id is one memory", i + 1, m.id),
                ));
            }
            let created_at = match &m.created_at {
                Some(t) => Some(DateTime::parse_from_rfc3339(t).map(|t| t.with_timezone(&Utc)).map_err(|e| {
                    Error::bad_import(
                        file,
                        1,
                        format!("memory {} ({}): its time {t:?} is not a date ({e})", i + 1, m.id),
                    )
                })?),
                None => None,
            };
            Ok(Mem0Memory { id: m.id, text: m.memory.trim().to_string(), created_at })
        })
        .collect()
}

/// Which of these readers a JSON document is for, by its shape (None: none of them).
pub fn shape(v: &serde_json::Value) -> Option<&'static str> {
    let first = match v {
        serde_json::Value::Array(items) => items.first()?,
        serde_json::Value::Object(o) if o.contains_key("results") => {
            return o["results"]
                .as_array()
                .and_then(|r| r.first())
                .filter(|m| m.get("memory").is_some())
                .map(|_| "mem0");
        }
        _ => return None,
    };
    if first.get("mapping").is_some() && first.get("current_node").is_some() {
        Some("chatgpt")
    } else if first.get("chat_messages").is_some() {
        Some("claude")
    } else if first.get("memory").is_some() && first.get("id").is_some() {
        Some("mem0")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_pair_with_their_answers() {
        let at = Utc::now();
        let said = |user: bool, text: &str| Said { user, text: text.into(), at, id: text.into() };
        let turns = pair(vec![
            said(true, "q1"),
            said(false, "a1"),
            said(true, "q2"),
            said(true, "q3"),
            said(false, "a3"),
            said(false, "extra"),
        ]);
        let bodies: Vec<_> = turns.iter().map(|t| t.body.clone()).collect();
        assert_eq!(bodies[0], EpisodeBody::Exchange { query: "q1".into(), response: "a1".into() });
        assert_eq!(bodies[1], EpisodeBody::Utterance { speaker: "user".into(), text: "q2".into() });
        assert_eq!(bodies[2], EpisodeBody::Exchange { query: "q3".into(), response: "a3".into() });
        assert_eq!(bodies[3], EpisodeBody::Utterance { speaker: "assistant".into(), text: "extra".into() });
    }
}
