//! Prompts: ready-made requests a user can pick in their MCP client.

use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use strata_core::Filter;

use crate::StrataMcp;

/// Recall what is relevant, then answer with it.
pub const RECALL_THEN_ANSWER: &str = "recall_then_answer";
/// Save what is worth keeping from the conversation.
pub const REMEMBER_CONVERSATION: &str = "remember_conversation";
/// Memories put into a [`RECALL_THEN_ANSWER`] prompt.
const RECALLED: usize = 8;

/// The prompts.
pub fn list() -> ListPromptsResult {
    ListPromptsResult::with_all_items(vec![
        Prompt::new(
            RECALL_THEN_ANSWER,
            Some(
                "Answer a question using what Strata remembers: the relevant memories are recalled and put before the question.",
            ),
            Some(vec![PromptArgument::new("question").with_description("What to answer.").with_required(true)]),
        ),
        Prompt::new(
            REMEMBER_CONVERSATION,
            Some("Ask the assistant to save what is worth keeping from this conversation as memories."),
            Some(vec![
                PromptArgument::new("focus")
                    .with_description("Optional: what to pay attention to (e.g. 'preferences', 'project decisions').")
                    .with_required(false),
            ]),
        ),
    ])
}

/// Builds a prompt.
pub async fn get(
    server: &StrataMcp,
    request: GetPromptRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Result<GetPromptResult, McpError> {
    let arg = |name: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(name))
            .and_then(|v| v.as_str())
            .map(str::trim)
            .unwrap_or("")
            .to_string()
    };
    match request.name.as_str() {
        RECALL_THEN_ANSWER => {
            let question = arg("question");
            if question.is_empty() {
                return Err(crate::invalid_params("recall_then_answer needs a non-empty 'question'"));
            }
            let q = question.clone();
            let recalled = server
                .run(ctx, move |e| e.recall(&q, Filter::default(), RECALLED))
                .await
                .map_err(|e| crate::internal(e.message))?;
            let mut text = String::new();
            if recalled.is_empty() {
                text.push_str("Strata has no memories that look relevant to this question.\n\n");
            } else {
                text.push_str("Here is what Strata remembers that may be relevant (best match first):\n");
                for r in &recalled {
                    // Stored text, quoted on its one line: it cannot start a line of its own.
                    let line = strata_core::fence::fence_line(&strata_api::dto::content_title(&r.memory.content), 200);
                    text.push_str(&format!("- [{}] {}\n", r.memory.id, line));
                }
                text.push('\n');
            }
            text.push_str(&format!(
                "Answer using these memories where they help, and say so when they do not cover it.\n\nQuestion: {question}"
            ));
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(format!("{} memories recalled for the question", recalled.len())))
        }
        REMEMBER_CONVERSATION => {
            let focus = arg("focus");
            let mut text = String::from(
                "Hand this conversation to Strata with the `remember_conversation` tool: its turns in order \
                 (role and content; leave out anything the user asked you not to keep). Strata keeps them and \
                 extracts the facts worth keeping long term by itself, updating what it knew. Ways of doing \
                 things the user taught you are best saved as procedural memories (ordered steps) with \
                 `remember`.",
            );
            if !focus.is_empty() {
                text.push_str(&format!("\n\nFocus on: {focus}"));
            }
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]))
        }
        other => Err(crate::invalid_params(format!(
            "no prompt named '{other}' (there are {RECALL_THEN_ANSWER} and {REMEMBER_CONVERSATION})"
        ))),
    }
}
