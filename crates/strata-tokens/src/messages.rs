//! What a list of chat messages costs. Each message pays for its role and text plus a fixed
//! framing, and the reply is primed by a few more tokens: OpenAI's published accounting for its
//! chat format (3 tokens a message, 3 for the reply). Other providers frame messages a little
//! differently; the same accounting is used for all, and budgets leave the difference in the
//! reserved answer tokens.

use strata_core::{Message, Result};

use crate::TokenManager;

/// Tokens framing each message.
pub const PER_MESSAGE: usize = 3;
/// Tokens priming the model's reply.
pub const REPLY_PRIMING: usize = 3;
/// Tokens framing each tool call of an assistant message.
pub const PER_TOOL_CALL: usize = 3;

/// What one message costs, framing included.
pub fn count_message(tokens: &dyn TokenManager, message: &Message) -> Result<usize> {
    let mut n = PER_MESSAGE + tokens.count(message.role.as_str())? + tokens.count(&message.content)?;
    for call in &message.tool_calls {
        n += PER_TOOL_CALL + tokens.count(&call.id)? + tokens.count(&call.name)? + tokens.count(&call.arguments)?;
    }
    if let Some(id) = &message.tool_call_id {
        n += tokens.count(id)?;
    }
    Ok(n)
}

/// What sending `messages` costs: every message and the reply's priming.
pub fn count_messages(tokens: &dyn TokenManager, messages: &[Message]) -> Result<usize> {
    let mut n = REPLY_PRIMING;
    for m in messages {
        n += count_message(tokens, m)?;
    }
    Ok(n)
}
